//! Memory an all-form's nonblocking request holds until the application completes it.
//!
//! A nonblocking collective run as its all-form (`MPI_Ireduce` as an `MPI_Iallreduce`:
//! [`super::nonblocking`]) writes a whole result that a rank off the root does not keep, and
//! reads an explicit copy of a root's input given in place. Both are the runtime's, and MPI
//! uses them until the request completes. While recovery tracks the request
//! ([`super::requests`]) they live with its entry. Otherwise (the rank's call is not
//! recovery's, or tracking stopped) they are held here by the application's handle, and freed
//! when a completion call hands that handle back as `MPI_REQUEST_NULL` (MPI forbids freeing or
//! cancelling a nonblocking collective's request, so that is the only way one ends).

use super::allform::Scratch;
use crate::abi::{self, Request};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Buffers a request's call uses: shared, so a tracked request's entry can be copied.
pub(super) type Buffers = Arc<Vec<Scratch>>;

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

/// Holds `buffers` until the application completes `request` (nothing if it is complete
/// already: `MPI_REQUEST_NULL`).
pub(super) fn hold(request: Request, buffers: Buffers) {
    if request != abi::predefined().request_null && !buffers.is_empty() {
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

/// After the completion call: frees the buffers of the noted requests it completed.
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
    drop(done);
}
