//! The restore hook: requests still in flight when `restore_cd` rewinds the thread are
//! drained before memory is rewritten (see the engine's module docs).

use super::tables::{Bound, Delivery, Drained, Tracked, Virtual, VirtualHandle, STATE};
use super::virtuals::release_greq;
use crate::abi::{self, Request, Status};
use crate::boundary::Guard;
use crate::pmpi::{real, safe};
use crate::record::Piece;
use crate::stats;
use std::ffi::c_int;

/// The restore hook: drains this thread's tracked requests that the restore rolls back,
/// before memory is rewritten (see the module docs): those of the restored CDs (`cds`: the
/// restored CD and its live descendants) and of CDs that ended (its committed children). A
/// request a live ancestor posted before the restored CD began stays in flight for the
/// ancestor to complete: the re-execution does not post it again. (One that a committed child
/// of an ancestor posted before the restored CD began is drained too; its CD is gone and
/// nothing tells it from the restored CD's own committed children's.) `ended` is told of each
/// receive or collective whose request ends here (completed or cancelled): the request that
/// reached MPI (a kept persistent request's activation: [`super::activations`]).
pub(crate) fn drain_in_flight(
    cds: &[cd_core::CdHandle],
    ended: impl Fn(Request),
) -> cd_core::Result<()> {
    let _guard = Guard::enter();
    let rolled_back = |t: &Tracked| {
        t.cd.is_none_or(|cd| cds.contains(&cd) || !cd_core::cd_is_live(cd))
    };
    let mut pending: Vec<(Request, Tracked)> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let drained: Vec<Request> = s
            .live
            .iter()
            .filter(|(_, t)| rolled_back(t))
            .map(|(r, _)| *r)
            .collect();
        drained
            .into_iter()
            .filter_map(|r| s.live.remove(&r).map(|t| (r, t)))
            .collect()
    });
    pending.sort_unstable_by_key(|(_, t)| t.seq);
    let deadline = std::time::Instant::now() + send_drain_limit();
    for (posted, tracked) in pending {
        let ends = !matches!(tracked.delivery, Delivery::Nothing);
        // a kept persistent request's activation stands in MPI for its handle (`activations`)
        let mut request = super::activations::standing(posted, ends).unwrap_or(posted);
        let reached = request;
        let mut status = Status::zeroed();
        // counted once complete (a send's or Comm_idup's entry, if any, goes back untouched)
        let taken = crate::traffic::take(&[reached]);
        if ends {
            ended(reached);
        }
        let data = match tracked.delivery {
            Delivery::Nothing => {
                // The send stays tracked (and allocated): the application or the re-executed
                // post completes it later.
                let done = settle_send(request, deadline);
                crate::traffic::settle(taken, &[reached], &[], &[]);
                stats::settled(done);
                if !done {
                    tracing::warn!(
                        seq = tracked.seq,
                        "a send in flight at restore_cd did not complete: it may carry restored data"
                    );
                }
                STATE.with(|s| s.borrow_mut().live.insert(posted, tracked));
                continue;
            }
            Delivery::Receive { .. } => {
                // a sender lost meanwhile (a ULFM job) returns its code (the next call that
                // meets the loss repairs)
                // SAFETY: a live receive this thread posted (a copy of the handle: a
                // persistent request stays allocated, a nonpersistent one is freed by the
                // Wait), into memory the restore has not rewritten yet.
                let rc = crate::errors::covered(|| unsafe {
                    real::Cancel(&mut request);
                    real::Wait(&mut request, &mut status)
                });
                // one whose sender was lost ends without its message, like a cancelled one:
                // the re-execution posts it again
                let cancelled = rc != abi::SUCCESS || safe::test_cancelled(&status);
                stats::drained(!cancelled);
                // a receive that got its message is counted; a cancelled one is not
                if cancelled {
                    drop(taken);
                } else {
                    crate::traffic::settle(taken, &[reached], &[0], &[status]);
                }
                (!cancelled).then(|| tracked.delivery.pieces(&status).iter().map(pack).collect())
            }
            Delivery::Outputs(ref pieces) => {
                // SAFETY: a live collective this thread posted.
                unsafe { real::Wait(&mut request, &mut status) };
                crate::traffic::settle(taken, &[reached], &[0], &[status]);
                Some(pieces.iter().map(pack).collect())
            }
        };
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            // A virtual request bound to this one is gone with the restored state.
            let stale: Vec<Request> = s
                .virtuals
                .iter()
                .filter(|(_, v)| v.seq == tracked.seq && !matches!(v.bound, Bound::Open))
                .map(|(h, _)| *h)
                .collect();
            for h in stale {
                if let Some(Virtual {
                    kind: VirtualHandle::Greq(_),
                    bound,
                    ..
                }) = s.virtuals.remove(&h)
                {
                    // SAFETY: our own generalized request, taken out of the table: nothing
                    // else completes or frees it.
                    unsafe { release_greq(h, matches!(bound, Bound::Done)) };
                }
            }
            s.drained.insert(tracked.seq, Drained { status, data })
        });
    }
    Ok(())
}

/// The environment variable that sets how long a restore waits for sends in flight, in
/// milliseconds (default 1000).
pub(crate) const DRAIN_SENDS_ENV: &str = "CD_MPI_DRAIN_SENDS_MS";

/// How long a restore waits for sends in flight ([`DRAIN_SENDS_ENV`]).
fn send_drain_limit() -> std::time::Duration {
    static LIMIT: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let ms = std::env::var(DRAIN_SENDS_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(1000);
        std::time::Duration::from_millis(ms)
    })
}

/// Drives a send until it completes or `deadline` passes, without freeing it; whether it
/// completed.
fn settle_send(request: Request, deadline: std::time::Instant) -> bool {
    loop {
        let mut done: c_int = 0;
        let mut status = Status::zeroed();
        // SAFETY: a live send request this thread posted; writes the flag and status. (Its
        // receiver lost meanwhile, in a ULFM job, returns the code: the send is over.)
        let rc = crate::errors::covered(|| unsafe {
            real::Request_get_status(request, &mut done, &mut status)
        });
        if rc != abi::SUCCESS || done != 0 {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::yield_now();
    }
}

/// The packed bytes of a piece of memory.
fn pack(piece: &Piece) -> Vec<u8> {
    let size = safe::pack_size(piece.count, piece.datatype, piece.comm).unwrap_or(0);
    let mut out = vec![0u8; size.max(0) as usize];
    let mut used: c_int = 0;
    // SAFETY: the request completed into `piece`, which is readable; `out` has `size` bytes.
    unsafe {
        real::Pack(
            piece.buf,
            piece.count,
            piece.datatype,
            out.as_mut_ptr().cast(),
            size,
            &mut used,
            piece.comm,
        )
    };
    out.truncate(used.max(0) as usize);
    out
}
