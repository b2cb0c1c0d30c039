//! The asynchronous advance: device ranges drained to the host while the application's
//! kernels run, the new point in time made current only when the drain completes.
//!
//! A synchronous advance of device memory stalls the application for the whole copy over the
//! link (about 20 ms per GiB on PCIe gen5), while the GPU could copy the same bytes inside
//! device memory in under a millisecond. So [`advance_cd_point_in_time_async`] asks the
//! device space ([`DeviceMemory::begin_drain`](crate::DeviceMemory::begin_drain)) to
//! snapshot the CD's device ranges into spare device memory, ordered on the application's
//! stream, and to copy the snapshot to a host store buffer on a copy stream of its own. Host
//! ranges are copied at once, as usual. The call returns; the CD stays at its previous
//! complete point in time until the drain completes.
//!
//! # When the new point becomes current
//! The advance is *pending* until its drain completes; then, at the first operation on the
//! CD that looks ([`advance_test`], [`advance_wait`], the queries, or any operation below), it
//! becomes current all at once, exactly as a synchronous advance would have made it at the
//! call (the implicit commit into the parent, demotion of READ_WRITE entries, files, log).
//! Meanwhile:
//! - **restore** does not wait: if the drain has completed, the new point is made current
//!   and restored; if not, the pending point is dropped and the previous complete point is
//!   restored. GPU errors are reported asynchronously, so a fault noticed while the drain
//!   runs may predate the snapshot: only a point whose drain completed is trusted. Dropping
//!   the pending point waits for its copies to stop writing the host buffer it owns.
//! - **re-adding ranges the CD already holds** (the spec's loop promotes its ranges
//!   READ_WRITE right after every advance: "add before you modify") does **not** wait: no new
//!   data is needed, only labels change. The relabel applies at once and is recorded in the
//!   pending advance; when the point becomes current, its demotion to READ_ONLY is followed by
//!   the recorded relabels, so ranges promoted after the snapshot stay READ_WRITE and the next
//!   advance saves the bytes written after it (`access::replay`). A restore during the drain
//!   restores the previous point and keeps the labels the re-adds set.
//! - **advance** (synchronous or not), **commit**, adds that cover new ground (they copy new
//!   data), deleting ranges, adding or deleting files, and creating a child **wait** for the
//!   drain and make its point current first: points in time are ordered, and each operation
//!   sees the CD as the earlier advance left it.
//! - A drain that fails leaves the CD at its previous point; the operation that found the
//!   failure returns it ([`CdError::DeviceCopy`]).
//!
//! The drain copies each device range whole, into a fresh buffer: the differential advance
//! (`delta`) is the synchronous advance's, since it writes into the saved copy, which the
//! application may need (a restore) until the drain's point is current; the next synchronous
//! advance of such a range copies it whole again, then only its changed blocks.
//!
//! A CD whose COPY READ_WRITE ranges are all host memory, a space that cannot snapshot (not
//! enough spare device memory, ranges of several devices, a registered-callback space), or
//! an advance with nothing to copy, advances synchronously: [`AsyncAdvance::in_flight`] says
//! which happened. The spec's `advance_cd_point_in_time` is unchanged.
//!
//! # In a timeline
//! The drain runs on the device between the application's calls. When a subscriber wants its
//! `drain` span (libcd's `CD_TIMELINE`), a thread of the runtime's own, `cd drain`, watches
//! each drain inside that span until it is over (`drain_track`): a slice on that thread's
//! track, beside the calls of the thread that started it.

use crate::active;
use crate::advance::{
    advance_targets, check_advance, lock_pair, settle, targets_unchanged, AdvanceReport,
};
use crate::callback;
use crate::copy;
use crate::drain_track;
use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::node::{feed_mark, file_offsets, Exclusive, Node, Pending};
use crate::space::{self, DrainCopy, SpaceId, HOST};
use crate::store::Buffer;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tracing::debug_span;

/// What [`advance_cd_point_in_time_async`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncAdvance {
    /// The bytes and ranges the advance copies (or copied).
    pub report: AdvanceReport,
    /// `true`: the device ranges are draining and the new point becomes current when they
    /// are done; `false`: the advance ran synchronously and is already current.
    pub in_flight: bool,
}

/// Moves the CD's point in time to now, draining device ranges in the background (a `cd_`
/// extension; see the module documentation for when the new point becomes current).
///
/// `stream` is the device API's stream the snapshot is ordered on (a `CUstream` for the
/// built-in CUDA space; 0 is the default stream): work queued on it before the call is in the
/// snapshot, work queued after it is not. Checks and failures are those of
/// [`advance_cd_point_in_time`](crate::advance_cd_point_in_time), which runs instead when the
/// advance cannot be asynchronous. An advance already in flight on the CD completes first.
///
/// # Safety
/// As [`advance_cd_point_in_time`](crate::advance_cd_point_in_time); in addition the CD's
/// device ranges must stay allocated until the drain completes (or the CD is restored,
/// committed or discarded), and `stream` must be a valid stream of the device (or 0).
pub unsafe fn advance_cd_point_in_time_async(
    cd: impl Into<CdRef>,
    stream: usize,
) -> Result<AsyncAdvance> {
    let cd = cd.into();
    let _span = debug_span!("cd_advance_async", ?cd).entered();
    callback::check()?;
    let node = active::resolve(cd)?;
    settle(&node, true)?;
    // SAFETY: forwarded from the caller.
    let started = unsafe { begin(&node, stream)? };
    if let Some(report) = started {
        return Ok(AsyncAdvance {
            report,
            in_flight: true,
        });
    }
    // SAFETY: forwarded from the caller.
    let report = unsafe { crate::advance_cd_point_in_time(CdRef::Handle(node.handle))? };
    Ok(AsyncAdvance {
        report,
        in_flight: false,
    })
}

/// Starts the drains and leaves the pending advance in the CD; `Ok(None)` when it cannot be
/// asynchronous.
///
/// # Safety
/// As [`advance_cd_point_in_time_async`].
unsafe fn begin(node: &Arc<Node>, stream: usize) -> Result<Option<AdvanceReport>> {
    let _busy = node.begin(Exclusive::Advance)?;
    let mark = node.parent.as_ref().and_then(feed_mark);
    loop {
        // As the synchronous advance: checks and ranges under the locks, host copies and the
        // drains' start with the busy flag only, then the pending point is stored under the
        // locks if the ranges are still those (see `advance`'s module docs).
        let targets = {
            let (parent_state, state) = lock_pair(node)?;
            check_advance(node, parent_state.as_deref(), &state, "cd_advance_async")?;
            advance_targets(&state)
        };
        if targets.iter().all(|&(_, _, space)| space == HOST) {
            return Ok(None);
        }
        // SAFETY: forwarded from the caller.
        let Some((buffer, drains)) = (unsafe { start(node.handle, &targets, stream)? }) else {
            return Ok(None);
        };
        let (parent_state, mut state) = lock_pair(node)?;
        if !targets_unchanged(&state, &targets) {
            continue; // dropping the drains waits for them before the buffer goes
        }
        check_advance(node, parent_state.as_deref(), &state, "cd_advance_async")?;
        let offsets = file_offsets(&state)?;
        let report = AdvanceReport {
            bytes_copied: targets.iter().map(|(s, e, _)| e - s).sum(),
            ranges_copied: targets.len(),
        };
        state.pending = Some(Pending {
            drains,
            buffer,
            targets,
            offsets,
            mark,
            relabels: Vec::new(),
        });
        node.draining.store(true, Ordering::Release);
        return Ok(Some(report));
    }
}

/// The drains of one asynchronous advance, named by their space.
type Drains = Vec<(String, Box<dyn crate::space::Drain>)>;

/// Copies the host ranges of `targets` into a fresh buffer and starts the drains of the device
/// ranges into it, each watched on a track of its own when a timeline wants it
/// (`drain_track`); `Ok(None)` when a space cannot drain.
///
/// # Safety
/// As [`advance_cd_point_in_time_async`].
unsafe fn start(
    cd: CdHandle,
    targets: &[(usize, usize, SpaceId)],
    stream: usize,
) -> Result<Option<(Buffer, Drains)>> {
    let total: usize = targets.iter().map(|(s, e, _)| e - s).sum();
    let mut buffer = Buffer::new(total)?;
    // Host ranges now, each into its place; device ranges are only given addresses in it.
    let mut offset = 0;
    let mut copies: Vec<(SpaceId, DrainCopy)> = Vec::new();
    for &(s, e, space) in targets {
        if space == HOST {
            let dst = &mut buffer.as_mut_slice()[offset..offset + (e - s)];
            // SAFETY: a range of the CD, which the caller vouched for.
            unsafe { copy::read_app(dst, s, HOST)? };
        } else {
            copies.push((
                space,
                DrainCopy {
                    device: s,
                    host: std::ptr::null_mut(),
                    length: e - s,
                },
            ));
        }
        offset += e - s;
    }
    // From here on the buffer is only reached through this pointer, until every drain ended.
    let base = buffer.as_mut_slice().as_mut_ptr();
    let mut offset = 0;
    let mut next = copies.iter_mut();
    for &(s, e, space) in targets {
        if space != HOST {
            if let Some((_, copy)) = next.next() {
                // SAFETY: `offset + (e - s) <= total`, the buffer's length.
                copy.host = unsafe { base.add(offset) };
            }
        }
        offset += e - s;
    }
    let mut spaces: Vec<SpaceId> = copies.iter().map(|&(space, _)| space).collect();
    spaces.sort_unstable();
    spaces.dedup();
    let mut drains: Drains = Vec::with_capacity(spaces.len());
    for space in spaces {
        let device = space::device(space)?;
        let list: Vec<DrainCopy> = copies
            .iter()
            .filter(|(s, _)| *s == space)
            .map(|&(_, c)| c)
            .collect();
        // SAFETY: every destination lies in `buffer`, which the pending advance owns and
        // nobody touches until its drains completed or were dropped (they drop first).
        let started = callback::guard(|| unsafe { device.begin_drain(&list, stream) });
        match started {
            Ok(Some(drain)) => {
                let bytes = list.iter().map(|c| c.length).sum();
                let drain = drain_track::watch(drain, cd, device.name(), bytes);
                drains.push((device.name().to_owned(), drain));
            }
            // Dropping the drains started so far waits for them before the buffer goes.
            Ok(None) => return Ok(None),
            Err(message) => {
                return Err(CdError::DeviceCopy {
                    space: device.name().to_owned(),
                    message,
                })
            }
        }
    }
    Ok(Some((buffer, drains)))
}

/// Whether the CD has no advance in flight any more (`cd_advance_test`): makes a completed
/// drain's point current and returns `true`; `false` while the drain runs. A failed drain is
/// returned as its error, and the CD stays at its previous point.
pub fn advance_test(cd: impl Into<CdRef>) -> Result<bool> {
    callback::check()?;
    settle(&active::resolve(cd.into())?, false)
}

/// Waits for the CD's advance in flight, if any, and makes its point current
/// (`cd_advance_wait`). A failed drain is returned as its error, and the CD stays at its
/// previous point.
pub fn advance_wait(cd: impl Into<CdRef>) -> Result<()> {
    callback::check()?;
    settle(&active::resolve(cd.into())?, true).map(drop)
}
