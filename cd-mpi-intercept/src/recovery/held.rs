//! Memory an all-form's nonblocking request holds until the application completes it, and
//! what to do with its result then.
//!
//! A nonblocking collective run as its all-form (`MPI_Ireduce` as an `MPI_Iallreduce`:
//! [`super::nonblocking_allform`]) writes a whole result that a rank may not keep, and reads an
//! explicit copy of an input given in place. Both are the runtime's, and MPI uses them until
//! the request completes; then a rank may still have to make its own result from the whole one
//! (its block of a scatter, its fold of a scan): the request's [`Held::finish`]. While recovery
//! tracks the request ([`super::requests`]) they live with its entry, and the completion
//! (or the repair that served its result) finishes it. Otherwise (the rank's call is not
//! recovery's, or tracking stopped) they are held here by the application's handle, and
//! finished and freed when a completion call hands that handle back as `MPI_REQUEST_NULL`
//! (MPI forbids freeing or cancelling a nonblocking collective's request, so that is the only
//! way one ends).

use super::allform::Scratch;
use crate::abi::{self, Request};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Makes this rank's result from the whole one, once the request completed (MPI's code).
pub(super) type Finish = Box<dyn FnOnce() -> c_int + Send>;

/// What a nonblocking all-form's request holds.
#[derive(Default)]
pub(super) struct Held {
    buffers: Vec<Scratch>,
    /// Counts and displacements the call reads (`MPI_Iallgatherv`'s).
    arrays: Vec<Vec<c_int>>,
    finish: Mutex<Option<Finish>>,
}

impl Held {
    pub(super) fn new(buffers: Vec<Scratch>, finish: Option<Finish>) -> Buffers {
        Held::with_arrays(buffers, Vec::new(), finish)
    }

    /// [`Held::new`], also holding `arrays`.
    pub(super) fn with_arrays(
        buffers: Vec<Scratch>,
        arrays: Vec<Vec<c_int>>,
        finish: Option<Finish>,
    ) -> Buffers {
        Arc::new(Held {
            buffers,
            arrays,
            finish: Mutex::new(finish),
        })
    }

    /// Runs the request's finish, once (its result is complete).
    pub(super) fn finish(&self) {
        let finish = self.finish.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(rc) = finish.map(|f| f()).filter(|&rc| rc != abi::SUCCESS) {
            tracing::error!(
                rc,
                "a nonblocking all-form's result could not be made this rank's"
            );
        }
    }

    fn is_empty(&self) -> bool {
        self.buffers.is_empty()
            && self.arrays.is_empty()
            && self
                .finish
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_none()
    }
}

/// What a request holds, shared, so a tracked request's entry can be copied.
pub(super) type Buffers = Arc<Held>;

static HELD: Mutex<Option<HashMap<u64, Buffers>>> = Mutex::new(None);
/// Whether [`HELD`] holds anything (completion calls look only then).
static ANY: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut HashMap<u64, Buffers>) -> R) -> R {
    let mut guard = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    let r = f(map);
    ANY.store(!map.is_empty(), Ordering::Relaxed);
    r
}

/// Holds `buffers` until the application completes `request` (finished at once if it is
/// complete already: `MPI_REQUEST_NULL`).
pub(super) fn hold(request: Request, buffers: Buffers) {
    if request == abi::predefined().request_null {
        buffers.finish();
    } else if !buffers.is_empty() {
        with(|h| h.insert(request.bits(), buffers));
    }
}

/// Before a completion call on `handles`: which of them hold buffers (by position).
pub(super) fn note(handles: &[Request]) -> Vec<(usize, u64)> {
    if !ANY.load(Ordering::Relaxed) {
        return Vec::new();
    }
    with(|h| {
        handles
            .iter()
            .enumerate()
            .filter(|(_, r)| h.contains_key(&r.bits()))
            .map(|(i, r)| (i, r.bits()))
            .collect()
    })
}

/// After the completion call: finishes the noted requests it completed and frees their memory.
pub(super) fn release(handles: &[Request], noted: &[(usize, u64)]) {
    if noted.is_empty() {
        return;
    }
    let null = abi::predefined().request_null;
    let done: Vec<Buffers> = with(|h| {
        noted
            .iter()
            .filter(|&&(i, _)| handles.get(i) == Some(&null))
            .filter_map(|(_, key)| h.remove(key))
            .collect()
    });
    for held in done {
        held.finish();
    }
}
