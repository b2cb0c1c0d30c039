//! The per-thread request tables: requests posted while recording (tracked until they
//! complete), virtual requests handed out during a replay, data drained at restore, and the
//! persistent requests the thread made.

use super::status::received_count;
use crate::abi::{Request, Status};
use crate::record::{Piece, Pieces};
use smallvec::smallvec;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_int;

/// What a tracked or virtual request delivers.
#[derive(Clone, Debug)]
pub(crate) enum Delivery {
    /// A send (or `MPI_Comm_idup`, `MPI_Ibarrier`): nothing.
    Nothing,
    /// A receive: its buffer and matching arguments.
    Receive {
        dest: Piece,
        source: c_int,
        tag: c_int,
    },
    /// A nonblocking collective: its output buffers, whole.
    Outputs(Pieces),
}

impl Delivery {
    /// The pieces of memory a completion with `status` filled.
    pub(super) fn pieces(&self, status: &Status) -> Pieces {
        self.filled(status).0
    }

    /// [`Delivery::pieces`], with a receive's bytes when its message ended in a partial
    /// element (see [`Received`]).
    pub(super) fn filled(&self, status: &Status) -> (Pieces, Option<u64>) {
        match self {
            Delivery::Nothing => (Pieces::new(), None),
            Delivery::Receive { dest, .. } => {
                let got = received_count(status, dest, crate::types::kind(dest.datatype));
                (
                    smallvec![Piece {
                        count: got.count,
                        ..*dest
                    }],
                    got.partial,
                )
            }
            Delivery::Outputs(pieces) => (pieces.clone(), None),
        }
    }
}

/// A request posted while recording, until it completes.
#[derive(Clone, Debug)]
pub(crate) struct Tracked {
    pub seq: u64,
    pub delivery: Delivery,
    /// The CD active on the thread when it was posted: a restore leaves the requests of a
    /// live ancestor of the restored CD to the ancestor.
    pub(super) cd: Option<cd_core::CdHandle>,
}

impl Tracked {
    /// A request posted now, as post `seq`, in the active CD of the thread whose context is
    /// `cx` (the call's guard holds it: no second thread-local access).
    pub(crate) fn new(seq: u64, delivery: Delivery, cx: Option<cd_core::ThreadCx<'_>>) -> Tracked {
        let cd = cx.and_then(|cx| cx.active_cd());
        Tracked { seq, delivery, cd }
    }
}

/// The state of a virtual request.
#[derive(Clone, Copy, Debug)]
pub(super) enum Bound {
    /// Its completion is still to come from the log.
    Open,
    /// Bound after the replay to a live request that stands in for it.
    Live(Request),
    /// Completed (generalized request marked complete) with data delivered after the replay.
    Done,
}

/// What the application's handle of a virtual request is.
#[derive(Clone, Copy, Debug)]
pub(super) enum VirtualHandle {
    /// A generalized request this module started, with its state.
    Greq(*mut GreqState),
    /// The application's own persistent request, started again by a replayed `MPI_Start`
    /// (in MPI it stays inactive: the log completes it).
    Persistent,
}

/// A request handed out during a replay.
pub(crate) struct Virtual {
    pub seq: u64,
    pub delivery: Delivery,
    pub(super) bound: Bound,
    pub(super) kind: VirtualHandle,
    /// The data drained at restore that completed it when the replay ended, kept until the
    /// application completes it: a restore before then rewinds the re-execution that got it,
    /// and the next one needs it again (see [`discard_rewound`]).
    pub(super) drained: Option<Drained>,
}

/// Data and status of a request drained at restore: the packed bytes of each piece of its
/// delivery, `None` when it was cancelled before any data arrived.
#[derive(Clone)]
pub(super) struct Drained {
    pub(super) status: Status,
    pub(super) data: Option<Vec<Vec<u8>>>,
}

#[derive(Default)]
pub(super) struct ThreadState {
    pub(super) next_seq: u64,
    pub(super) live: HashMap<Request, Tracked>,
    pub(super) virtuals: HashMap<Request, Virtual>,
    pub(super) drained: BTreeMap<u64, Drained>,
    /// Persistent requests made on this thread, with what each start delivers.
    pub(super) persistent: HashMap<Request, Delivery>,
}

thread_local! {
    pub(super) static STATE: RefCell<ThreadState> = RefCell::new(ThreadState::default());
}

/// The next post number of this thread.
pub(crate) fn next_seq() -> u64 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.next_seq += 1;
        s.next_seq
    })
}

/// Starts tracking a request posted while recording.
pub(crate) fn track(request: Request, tracked: Tracked) {
    STATE.with(|s| s.borrow_mut().live.insert(request, tracked));
}

/// Stops tracking a request (completed or freed), returning what was tracked.
pub(crate) fn untrack(request: Request) -> Option<Tracked> {
    STATE.with(|s| s.borrow_mut().live.remove(&request))
}

/// Whether any virtual request is alive on this thread (the common answer is no).
pub(crate) fn has_virtuals() -> bool {
    STATE.with(|s| !s.borrow().virtuals.is_empty())
}

/// Whether any of `handles` is a virtual request of this thread's (a replay's stand-in).
pub(crate) fn any_virtual(handles: &[Request]) -> bool {
    STATE.with(|s| {
        let s = s.borrow();
        !s.virtuals.is_empty() && handles.iter().any(|h| s.virtuals.contains_key(h))
    })
}

/// Remembers a persistent request made on this thread and what each of its starts delivers.
pub(crate) fn register_persistent(request: Request, delivery: Delivery) {
    STATE.with(|s| s.borrow_mut().persistent.insert(request, delivery));
}

/// Forgets a persistent request freed in MPI.
pub(crate) fn unregister_persistent(request: Request) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if !s.persistent.is_empty() {
            s.persistent.remove(&request);
        }
    });
}

/// What a start of `request` delivers, if it is a persistent request made on this thread.
pub(crate) fn persistent_delivery(request: Request) -> Option<Delivery> {
    STATE.with(|s| s.borrow().persistent.get(&request).cloned())
}

/// Whether `request` is a persistent request made on this thread.
pub(crate) fn is_persistent(request: Request) -> bool {
    STATE.with(|s| {
        let s = s.borrow();
        !s.persistent.is_empty() && s.persistent.contains_key(&request)
    })
}

pub(super) struct GreqState {
    pub(super) status: Status,
}
