//! The per-thread engine: routes each call (straight to MPI, recorded, or replayed), tracks the
//! requests it must log at completion, hands out the requests of a replay, and drains requests
//! still in flight when `restore_cd` rewinds the thread.
//!
//! # Requests
//! A request posted while recording is *tracked* (its post number and where its data goes), so
//! that the Wait/Test call that completes it logs the received bytes. During a replay a posting
//! call gets a *virtual* request: a generalized request (`MPI_Grequest_start`), a real MPI
//! object, so that it can be stored, converted to Fortran, and mixed with live requests in any
//! Wait/Test array. The logged completion (which requests, in which order, with which status and
//! data: the determinants) completes it. When the log runs out while virtual requests are still
//! open, they are the requests that were in flight at the fault: each is then bound to a live
//! request (a receive is posted again for real, in posting order) or completed with the data
//! drained at restore, and the thread goes on recording. A restore during a re-execution
//! (a second fault before its replay was consumed, or before it completed the requests bound
//! when the replay ended) leaves that re-execution's virtual requests behind: the next replay
//! hands the same posts out again, and each one left behind is discarded then, its drained
//! data kept for the new one (else it would be bound a second time: a receive posted again
//! for real takes a later message).
//!
//! # Requests in flight at `restore_cd`
//! A request posted before the fault but not completed would touch application memory later,
//! after the restore rewrote it: a receive would write into it, a send (or a collective's
//! contribution) may still read from it, since MPI reads a send buffer whenever it moves the
//! data. So the restore hook *drains* every tracked request the restore rolls back (posted by
//! the restored CD, a live descendant or a CD that ended: the CD active at the post is kept
//! with it) before any memory is written; one a live ancestor posted before the restored CD
//! began is not posted again by the re-execution, and stays in flight for the ancestor to
//! complete. Then:
//! - a receive is cancelled and the cancel waited for; one that had already matched completes
//!   instead, and its data and status are kept for the re-executed receive. Cancelling is
//!   preferred to waiting because the message may depend on this rank's own re-execution
//!   (waiting could deadlock); a cancelled receive is posted again when the re-execution
//!   reaches it live. (A receive that had already completed inside MPI before the fault gives
//!   the bytes its buffer holds at restore: if the fault itself corrupted them, they are what
//!   the re-execution gets. Receiving into log memory instead of the application's buffer
//!   would close this; it is not done yet.)
//! - a nonblocking collective cannot be cancelled (MPI 3.1, 5.12): it is completed (the other
//!   ranks are live and join it) and its outputs are kept;
//! - a send is given up to `CD_MPI_DRAIN_SENDS_MS` milliseconds (default 1000) to complete
//!   (`MPI_Request_get_status`, which leaves the request to whoever completes it later):
//!   an eager send completes at once, a rendezvous send as soon as its receiver posts. A send
//!   whose receiver first waits for something this rank has not sent yet cannot complete
//!   before the re-execution: it is left in flight (counted as `sends.unsettled`) and may then
//!   carry restored data. The re-executed send is dropped either way.

mod activations;
mod completion;
mod drain;
mod route;
mod status;
mod tables;
mod virtuals;

pub(crate) use activations::{register as register_activations, Activations};

pub(crate) use completion::{
    completed_substitute, record_completion, replay_completion, substitute, Unserved,
};
pub(crate) use drain::drain_in_flight;
pub(crate) use route::{
    corrupt, counted, expect, log, log_header, log_received, log_record, mismatch, route, Route,
};
pub(crate) use status::received_count;
pub(crate) use tables::{
    any_virtual, has_virtuals, is_persistent, next_seq, persistent_delivery, register_persistent,
    track, unregister_persistent, untrack, Delivery, Tracked,
};
pub(crate) use virtuals::{
    completed_request, free_virtual, live_of, virtual_request, virtual_start,
};
