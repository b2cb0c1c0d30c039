//! The persistent requests in-job recovery keeps (see [`super::persistent`]): their
//! arguments, and their activation's request while active. A completion call lends the
//! activation's request in place of the application's handle while it reaches MPI ([`lend`]),
//! and an inactive one as `MPI_REQUEST_NULL`, which MPI treats alike; then it gives the handle
//! back ([`give_back`]). Outside CDs that log the completion wrappers lend before they run
//! (`super::persistent`); inside them, the ordinary handler a covered completion runs within
//! tracks the application's handles, so recovery's live step lends (`super::completion`).

use super::calls::Chan;
use crate::abi::{self, Comm, Datatype, Request};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Which call a start posts.
#[derive(Clone, Copy)]
pub(super) enum Mode {
    Standard,
    Synchronous,
    Buffered,
    Ready,
    Receive,
}

/// A persistent request made here: its arguments, and its activation's request while active.
#[derive(Clone, Copy)]
pub(super) struct Made {
    pub(super) mode: Mode,
    /// The buffer's address (exposed: the table is shared).
    pub(super) buf: usize,
    pub(super) count: c_int,
    pub(super) datatype: Datatype,
    /// The destination or the source.
    pub(super) peer: c_int,
    pub(super) tag: c_int,
    /// Its communicator (`crate::derived`), and the real one it was made on (which still
    /// serves after the application freed the communicator, as MPI allows).
    pub(super) channel: u64,
    pub(super) made_on: Comm,
    /// Its activation's request while active, and the channel recovery covered the last one
    /// on (`None`: started through the ordinary handlers).
    pub(super) active: Option<Request>,
    pub(super) on: Option<Chan>,
}

impl Made {
    /// Its communicator now.
    pub(super) fn comm(&self) -> Comm {
        match crate::derived::current(self.channel) {
            c if c == abi::predefined().comm_null => self.made_on,
            c => c,
        }
    }
}

static MADE: Mutex<Option<HashMap<u64, Made>>> = Mutex::new(None);
/// How many entries [`MADE`] holds (the completion calls look only when some are).
static COUNT: AtomicUsize = AtomicUsize::new(0);

pub(super) fn with<R>(f: impl FnOnce(&mut HashMap<u64, Made>) -> R) -> R {
    let mut guard = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    let r = f(map);
    COUNT.store(map.len(), Ordering::Relaxed);
    r
}

/// Whether any persistent request is kept here (one relaxed load).
#[inline]
pub(super) fn any() -> bool {
    COUNT.load(Ordering::Relaxed) > 0
}

pub(super) fn made(handle: Request) -> Option<Made> {
    with(|m| m.get(&handle.bits()).copied())
}

/// While a completion call runs on the application's `handles`: each handle of a kept request
/// is exchanged for its activation's request, or for `MPI_REQUEST_NULL` while it is inactive.
/// Returns what [`give_back`] puts back.
pub(super) fn lend(handles: &mut [Request]) -> Vec<(usize, Request)> {
    if !any() {
        return Vec::new();
    }
    let null = abi::predefined().request_null;
    with(|t| {
        let mut lent = Vec::new();
        for (i, h) in handles.iter_mut().enumerate() {
            if let Some(m) = t.get(&h.bits()) {
                lent.push((i, *h));
                *h = m.active.unwrap_or(null);
            }
        }
        lent
    })
}

/// After the completion call: the application's handles back. An activation whose request
/// the call completed (now `MPI_REQUEST_NULL`) is over; one that a repair replaced goes on
/// under the new request.
pub(super) fn give_back(handles: &mut [Request], lent: &[(usize, Request)]) {
    if lent.is_empty() {
        return;
    }
    let null = abi::predefined().request_null;
    with(|t| {
        for &(i, app) in lent {
            let now = std::mem::replace(&mut handles[i], app);
            if let Some(m) = t.get_mut(&app.bits()) {
                m.active = (now != null).then_some(now);
            }
        }
    });
}

/// Whether a kept request among `handles` is active: a completion call on them is recovery's,
/// which lends its activation.
pub(super) fn any_active(handles: &[Request]) -> bool {
    any()
        && with(|t| {
            handles
                .iter()
                .any(|h| t.get(&h.bits()).is_some_and(|m| m.active.is_some()))
        })
}

/// At a restore's drain (`crate::engine::Activations::standing`): the activation of the kept
/// request `handle`, if active; with `ends` it is over.
pub(super) fn standing(handle: Request, ends: bool) -> Option<Request> {
    if !any() {
        return None;
    }
    with(|t| {
        let m = t.get_mut(&handle.bits())?;
        match ends {
            true => m.active.take(),
            false => m.active,
        }
    })
}
