//! Completions: a logged completion served during a replay, a completion written into a
//! record, and Wait/Test arrays holding virtual requests bound to live ones.

use super::tables::{is_persistent, untrack, Bound, Delivery, VirtualHandle, STATE};
use super::virtuals::finish_virtual;
use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::record::{Corrupt, Header, Piece, Reader, Writer};
use std::borrow::Borrow;
use std::ffi::{c_int, c_void};

/// Why a logged completion was not served.
pub(crate) enum Unserved {
    /// The record is unreadable.
    Corrupt,
    /// The application's slot holds another request than the one the log completes there:
    /// what differs, for the mismatch report.
    Other(String),
}

impl From<Corrupt> for Unserved {
    fn from(_: Corrupt) -> Self {
        Unserved::Corrupt
    }
}

/// Resolves one logged completion during a replay: delivers its data and, if the application's
/// handle is the virtual request of the same post, completes it. Returns the handle the
/// application's slot gets (`MPI_REQUEST_NULL`, or the unchanged handle of a persistent
/// request) and the status.
///
/// The data goes where the re-executed post said (its buffers may have moved since); a
/// completion of a request posted before the replayed span goes where the log says. A slot
/// (`index` in the application's array) holding the virtual request of another post, or a
/// request that is not virtual while the logged post was re-executed as one, is a mismatch
/// ([`Unserved::Other`]), found before anything is written for this completion.
///
/// # Safety
/// The destinations named by the virtual request or the record must be writable.
pub(crate) unsafe fn replay_completion(
    reader: &mut Reader,
    handle: Request,
    index: usize,
) -> Result<(Request, Status), Unserved> {
    let seq = reader.u64()?;
    let status = reader.status()?;
    let pieces = reader.int()?;
    // `posted`: where the data goes; `own`: the slot's virtual request completes
    let (posted, own, held) = STATE.with(|s| {
        let s = s.borrow();
        match s.virtuals.get(&handle) {
            Some(v) if v.seq == seq => (Some(v.delivery.pieces(&status)), true, None),
            // the log's post completed at once too: its pieces (if any) hold no data
            Some(v) if at_once(&v.delivery) => (None, true, None),
            Some(v) => (None, false, Some(format!("the request of post {}", v.seq))),
            None if seq != 0 && s.virtuals.values().any(|v| v.seq == seq) => (
                None,
                false,
                Some("a request not posted by the re-execution".to_owned()),
            ),
            None => (None, false, None),
        }
    });
    if let Some(held) = held {
        return Err(Unserved::Other(format!(
            "slot {index} holds {held}, the log completes post {seq} there"
        )));
    }
    if posted.as_ref().is_some_and(|p| p.len() != pieces as usize) {
        return Err(Unserved::Corrupt);
    }
    for k in 0..pieces.max(0) as usize {
        let logged = Piece {
            // The application's buffer, exposed when the completion was logged
            // (`record_completion`).
            buf: std::ptr::with_exposed_provenance::<c_void>(reader.u64()? as usize),
            count: reader.int()?,
            datatype: Datatype::from_bits(reader.u64()?),
            comm: Comm::from_bits(reader.u64()?),
        };
        let dest = posted.as_ref().map_or(logged, |p| Piece {
            count: logged.count,
            ..p[k]
        });
        // SAFETY: the re-executed program posted the same receive or collective.
        unsafe { reader.unpack_into(dest.buf.cast_mut(), dest.count, dest.datatype, dest.comm)? };
    }
    if own {
        finish_virtual(handle, &status);
    }
    let slot = if is_persistent(handle) {
        handle
    } else {
        abi::predefined().request_null
    };
    Ok((slot, status))
}

/// Whether a request that delivers so may have completed at once in MPI, under a handle MPI
/// hands out for every such request (MPICH's builtin completed requests: a send to
/// `MPI_PROC_NULL`, an eager send, a receive from `MPI_PROC_NULL`; Open MPI's
/// `ompi_request_empty` for both kinds to and from `MPI_PROC_NULL`): recorded, two of them in
/// one array were tracked under one handle, so the log may name the other one's post in its
/// slot. Either completes the slot the same way: no data.
fn at_once(delivery: &Delivery) -> bool {
    match delivery {
        Delivery::Nothing => true,
        Delivery::Receive { source, .. } => *source == abi::PROC_NULL,
        Delivery::Outputs(_) => false,
    }
}

/// Writes one completion into a record being built (see [`replay_completion`]).
pub(crate) fn record_completion(
    writer: &mut Writer<impl Borrow<Header>>,
    seq: u64,
    status: &Status,
    delivery: &Delivery,
) {
    let (pieces, partial) = delivery.filled(status);
    writer.u64(seq).status(status).int(pieces.len() as c_int);
    for piece in pieces {
        writer
            .u64(piece.buf.expose_provenance() as u64)
            .int(piece.count)
            .u64(piece.datatype.bits())
            .u64(piece.comm.bits())
            .piece_received(piece, partial);
    }
}

/// A slot of a Wait/Test array that holds a virtual request.
#[derive(Clone, Debug)]
pub(crate) struct Standin {
    /// The application's handle.
    pub handle: Request,
    pub seq: u64,
    pub delivery: Delivery,
    /// Whether MPI got a live request in its place (else the handle itself).
    pub live: bool,
    /// Whether the application's handle is a persistent request (it stays in the slot).
    pub persistent: bool,
}

/// What a live Wait/Test array becomes while virtual requests bound after a replay are in it.
pub(crate) struct Substituted {
    /// The handles MPI gets.
    pub handles: Vec<Request>,
    /// For each slot, the virtual request it stands for.
    pub standins: Vec<Option<Standin>>,
}

/// Replaces bound virtual requests by their live request (a Done one stays itself: it is a
/// completed generalized request MPI completes at once).
pub(crate) fn substitute(handles: &[Request]) -> Substituted {
    STATE.with(|s| {
        let s = s.borrow();
        let mut out = Substituted {
            handles: handles.to_vec(),
            standins: vec![None; handles.len()],
        };
        for (i, h) in handles.iter().enumerate() {
            if let Some(v) = s.virtuals.get(h) {
                let live = match v.bound {
                    Bound::Live(inner) => {
                        out.handles[i] = inner;
                        true
                    }
                    Bound::Done | Bound::Open => false,
                };
                out.standins[i] = Some(Standin {
                    handle: *h,
                    seq: v.seq,
                    delivery: v.delivery.clone(),
                    live,
                    persistent: matches!(v.kind, VirtualHandle::Persistent),
                });
            }
        }
        out
    })
}

/// After MPI completed slot `i` of a substituted array (through `inner`): frees the virtual
/// request it stood for and returns its post number and delivery.
pub(crate) fn completed_substitute(
    entry: &Standin,
    inner: Request,
    status: &Status,
) -> (u64, Delivery) {
    if entry.live {
        untrack(inner);
        finish_virtual(entry.handle, status);
    } else {
        STATE.with(|s| s.borrow_mut().virtuals.remove(&entry.handle));
    }
    (entry.seq, entry.delivery.clone())
}
