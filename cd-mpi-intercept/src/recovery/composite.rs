//! The application's request for a call posted as several requests of its own (its *parts*: a
//! collective [`super::unrolled`], an `MPI_Isendrecv` [`super::sendrecv`]): a generalized
//! request, complete from the start, so MPI itself never waits on it, that stands for them. The
//! completion calls put a composite's parts in its place and go on with those
//! ([`super::persistent`] and below, where each part is an ordinary point-to-point request);
//! the composite completes when all its parts have (and runs what its maker asked for then),
//! with an empty status, or the status of the one part that reports (an `MPI_Isendrecv`'s
//! receive). `MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome` and `MPI_Testsome` report it once it
//! is complete, and go on while only parts completed. Freeing or cancelling the request of a
//! nonblocking collective is erroneous in MPI, and refused for a composite: `MPI_ERR_REQUEST`.
//!
//! One relaxed load per completion call while no composite exists.

use super::allform::Scratch;
use super::completion::slice;
use super::persistent;
use crate::abi::{self, Request, Status};
use crate::pmpi::real;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What runs when a composite completes (`super::idup`: the new communicator followed).
pub(super) type Then = Box<dyn FnOnce() + Send>;

/// The parts a composite stands for (`MPI_REQUEST_NULL` once complete), the runtime's memory
/// they use, what runs when they have all completed, and the part whose status it reports
/// (with that status once the part completed).
struct Composite {
    parts: Vec<Request>,
    _held: Vec<Scratch>,
    then: Option<Then>,
    reports: Option<usize>,
    status: Status,
}

/// The composites, by handle.
static TABLE: Mutex<Option<HashMap<u64, Composite>>> = Mutex::new(None);
/// Whether any composite exists.
static ANY: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut HashMap<u64, Composite>) -> R) -> R {
    let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let table = guard.get_or_insert_with(HashMap::new);
    let r = f(table);
    ANY.store(!table.is_empty(), Ordering::Relaxed);
    r
}

/// Writes to `request` a composite standing for `parts`, holding `held` until they complete,
/// then running `then`; its status is that of part `reports` (else empty).
///
/// # Safety
/// `request` is writable.
pub(super) unsafe fn stand_for(
    parts: Vec<Request>,
    held: Vec<Scratch>,
    then: Option<Then>,
    reports: Option<usize>,
    request: *mut Request,
) -> c_int {
    // SAFETY: the caller's out-parameter.
    let rc = unsafe { crate::engine::completed_request(request) };
    if rc == abi::SUCCESS {
        // SAFETY: written above.
        let handle = unsafe { *request };
        let composite = Composite {
            parts,
            _held: held,
            then,
            reports,
            status: Status::empty(),
        };
        with(|t| t.insert(handle.bits(), composite));
    }
    rc
}

/// A restore drained `request` (`crate::engine::drain_in_flight`): a composite it was a part of
/// is forgotten, its handle freed (the re-execution posts its collective again, under a new
/// one).
pub(crate) fn drained(request: Request) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let gone: Vec<u64> = with(|t| {
        let gone: Vec<u64> = t
            .iter()
            .filter(|(_, c)| c.parts.contains(&request))
            .map(|(&k, _)| k)
            .collect();
        gone.iter().for_each(|k| drop(t.remove(k)));
        gone
    });
    for bits in gone {
        let mut handle = Request::from_bits(bits);
        // SAFETY: our own generalized request, complete since it was made; the application's
        // handle to it is of the state the restore rewrote.
        unsafe { real::Request_free(&mut handle) };
    }
}

/// The caller's handles with each composite's parts in its place.
struct Flat {
    handles: Vec<Request>,
    statuses: Vec<Status>,
    /// The caller's index of each flat entry.
    owner: Vec<usize>,
    /// The caller's indices that are composites.
    composites: Vec<usize>,
}

impl Flat {
    /// `None` where no handle is a composite (the call goes on as it is).
    fn of(handles: &[Request]) -> Option<Flat> {
        if !ANY.load(Ordering::Relaxed) {
            return None;
        }
        with(|t| {
            if !handles.iter().any(|h| t.contains_key(&h.bits())) {
                return None;
            }
            let mut flat = Flat {
                handles: Vec::new(),
                statuses: Vec::new(),
                owner: Vec::new(),
                composites: Vec::new(),
            };
            for (i, h) in handles.iter().enumerate() {
                let parts = match t.get(&h.bits()) {
                    Some(c) => {
                        flat.composites.push(i);
                        &c.parts[..]
                    }
                    None => std::slice::from_ref(h),
                };
                flat.handles.extend_from_slice(parts);
                flat.owner.extend(std::iter::repeat_n(i, parts.len()));
            }
            flat.statuses = vec![Status::empty(); flat.handles.len()];
            Some(flat)
        })
    }

    fn len(&self) -> c_int {
        self.handles.len() as c_int
    }

    /// After a call on the flat handles: the caller's plain handles (and `statuses`, unless
    /// ignored) take theirs, each composite keeps its parts as they are now (and the status of
    /// its reporting part, completed by this call). Returns the caller's indices of the
    /// composites whose parts are all complete.
    ///
    /// # Safety
    /// `statuses` is the caller's array for `handles` (or `MPI_STATUSES_IGNORE`).
    unsafe fn fold(&self, handles: &mut [Request], statuses: *mut Status) -> Vec<usize> {
        let null = abi::predefined().request_null;
        for (k, &i) in self.owner.iter().enumerate() {
            if !self.composites.contains(&i) {
                handles[i] = self.handles[k];
                if !abi::is_statuses_ignore(statuses) {
                    // SAFETY: the caller's status of entry `i`.
                    unsafe { statuses.add(i).write(self.statuses[k]) };
                }
            }
        }
        let mut complete = Vec::new();
        with(|t| {
            for &i in &self.composites {
                let flat: Vec<usize> = (0..self.handles.len())
                    .filter(|&k| self.owner[k] == i)
                    .collect();
                let parts: Vec<Request> = flat.iter().map(|&k| self.handles[k]).collect();
                if parts.iter().all(|&p| p == null) {
                    complete.push(i);
                }
                if let Some(c) = t.get_mut(&handles[i].bits()) {
                    if let Some(r) = c.reports {
                        if c.parts.get(r).is_some_and(|&p| p != null) && parts[r] == null {
                            c.status = self.statuses[flat[r]];
                        }
                    }
                    c.parts = parts;
                }
            }
        });
        complete
    }

    /// Whether flat entry `k` is a part of a composite.
    fn is_part(&self, k: usize) -> bool {
        self.composites.contains(&self.owner[k])
    }
}

/// Completes the composite the caller holds at `handles[i]`: forgotten (what it runs then, run),
/// its handle freed and nulled, its status (see [`stand_for`]) written unless ignored, and
/// returned.
///
/// # Safety
/// `status` is the caller's status for it, or `MPI_STATUS_IGNORE`.
unsafe fn finish(handles: &mut [Request], i: usize, status: *mut Status) -> Status {
    let composite = with(|t| t.remove(&handles[i].bits()));
    let own = composite.as_ref().map_or(Status::empty(), |c| c.status);
    if let Some(then) = composite.and_then(|c| c.then) {
        then();
    }
    // SAFETY: our own generalized request, complete since it was made.
    unsafe { real::Request_free(&mut handles[i]) };
    handles[i] = abi::predefined().request_null;
    if !abi::is_status_ignore(status) {
        // SAFETY: the caller's status.
        unsafe { status.write(own) };
    }
    own
}

/// The caller's status `i` (`MPI_STATUSES_IGNORE` stays ignored).
fn status_at(statuses: *mut Status, i: usize) -> *mut Status {
    match abi::is_statuses_ignore(statuses) {
        true => statuses,
        false => statuses.wrapping_add(i),
    }
}

/// `MPI_Wait`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn wait(request: *mut Request, status: *mut Status) -> c_int {
    // SAFETY: one handle, the caller's.
    let handles = unsafe { slice(request, 1) };
    let Some(mut flat) = Flat::of(handles) else {
        // SAFETY: forwarded.
        return unsafe { persistent::wait(request, status) };
    };
    // SAFETY: our flat arrays.
    let rc = unsafe {
        persistent::waitall(
            flat.len(),
            flat.handles.as_mut_ptr(),
            flat.statuses.as_mut_ptr(),
        )
    };
    // SAFETY: no plain handle: nothing written to the status here.
    let complete = unsafe { flat.fold(handles, std::ptr::null_mut()) };
    if rc == abi::SUCCESS && !complete.is_empty() {
        // SAFETY: the caller's status.
        unsafe { finish(handles, 0, status) };
    }
    rc
}

/// `MPI_Test`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn test(request: *mut Request, flag: *mut c_int, status: *mut Status) -> c_int {
    // SAFETY: one handle, the caller's.
    let handles = unsafe { slice(request, 1) };
    let Some(mut flat) = Flat::of(handles) else {
        // SAFETY: forwarded.
        return unsafe { persistent::test(request, flag, status) };
    };
    let mut all = 0;
    // SAFETY: our flat arrays.
    let rc = unsafe {
        persistent::testall(
            flat.len(),
            flat.handles.as_mut_ptr(),
            &mut all,
            flat.statuses.as_mut_ptr(),
        )
    };
    // SAFETY: as in `wait`.
    let complete = unsafe { flat.fold(handles, std::ptr::null_mut()) };
    let done = rc == abi::SUCCESS && all != 0 && !complete.is_empty();
    if done {
        // SAFETY: the caller's status.
        unsafe { finish(handles, 0, status) };
    }
    if !flag.is_null() {
        // SAFETY: the caller's flag.
        unsafe { flag.write(c_int::from(done)) };
    }
    rc
}

/// `MPI_Waitall` (`flag` `None`) and `MPI_Testall`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn all(
    count: c_int,
    requests: *mut Request,
    flag: Option<*mut c_int>,
    statuses: *mut Status,
    mut flat: Flat,
) -> c_int {
    // SAFETY: the caller's handles.
    let handles = unsafe { slice(requests, count) };
    let mut all = 1;
    // SAFETY: our flat arrays.
    let rc = unsafe {
        let (n, h, st) = (
            flat.len(),
            flat.handles.as_mut_ptr(),
            flat.statuses.as_mut_ptr(),
        );
        match flag {
            None => persistent::waitall(n, h, st),
            Some(_) => persistent::testall(n, h, &mut all, st),
        }
    };
    // SAFETY: the caller's statuses.
    let complete = unsafe { flat.fold(handles, statuses) };
    if rc == abi::SUCCESS && all != 0 {
        for i in complete {
            // SAFETY: the caller's status `i`.
            unsafe { finish(handles, i, status_at(statuses, i)) };
        }
    }
    if let Some(flag) = flag.filter(|f| !f.is_null()) {
        // SAFETY: the caller's flag.
        unsafe { flag.write(c_int::from(rc == abi::SUCCESS && all != 0)) };
    }
    rc
}

/// `MPI_Waitall`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn waitall(count: c_int, requests: *mut Request, statuses: *mut Status) -> c_int {
    // SAFETY: the caller's handles.
    match Flat::of(unsafe { slice(requests, count) }) {
        // SAFETY: forwarded.
        Some(flat) => unsafe { all(count, requests, None, statuses, flat) },
        // SAFETY: forwarded.
        None => unsafe { persistent::waitall(count, requests, statuses) },
    }
}

/// `MPI_Testall`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn testall(
    count: c_int,
    requests: *mut Request,
    flag: *mut c_int,
    statuses: *mut Status,
) -> c_int {
    // SAFETY: the caller's handles.
    match Flat::of(unsafe { slice(requests, count) }) {
        // SAFETY: forwarded.
        Some(flat) => unsafe { all(count, requests, Some(flag), statuses, flat) },
        // SAFETY: forwarded.
        None => unsafe { persistent::testall(count, requests, flag, statuses) },
    }
}

/// `MPI_Waitany` (`flag` `None`) and `MPI_Testany`: one flat request at a time until a plain
/// one or a whole composite completes (or, testing, none did).
///
/// # Safety
/// The MPI function's contract.
unsafe fn any(
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut Status,
) -> c_int {
    // SAFETY: the caller's handles.
    let handles = unsafe { slice(requests, count) };
    loop {
        let Some(mut flat) = Flat::of(handles) else {
            // SAFETY: forwarded (no composite left among them).
            return unsafe {
                match flag {
                    None => persistent::waitany(count, requests, index, status),
                    Some(f) => persistent::testany(count, requests, index, f, status),
                }
            };
        };
        let (mut k, mut found) = (abi::UNDEFINED, 1);
        let mut st = Status::empty();
        // SAFETY: our flat arrays.
        let rc = unsafe {
            let (n, h) = (flat.len(), flat.handles.as_mut_ptr());
            match flag {
                None => persistent::waitany(n, h, &mut k, &mut st),
                Some(_) => persistent::testany(n, h, &mut k, &mut found, &mut st),
            }
        };
        if let Some(at) = usize::try_from(k).ok().filter(|&k| k < flat.statuses.len()) {
            // (a reporting part's status, for its composite)
            flat.statuses[at] = st;
        }
        // SAFETY: no status array: plain statuses are written below.
        let complete = unsafe { flat.fold(handles, std::ptr::null_mut()) };
        let chosen = match usize::try_from(k) {
            _ if rc != abi::SUCCESS => return rc,
            // a plain request
            Ok(k) if !flat.is_part(k) => {
                if !abi::is_status_ignore(status) {
                    // SAFETY: the caller's status.
                    unsafe { status.write(st) };
                }
                Some(flat.owner[k])
            }
            // a part: its composite, if complete now, else on
            Ok(k) => complete.contains(&flat.owner[k]).then_some(flat.owner[k]),
            // none active but complete composites, or (testing) none complete
            Err(_) if found != 0 => complete.first().copied().or(Some(usize::MAX)),
            Err(_) => None,
        };
        let out = match chosen {
            Some(usize::MAX) => abi::UNDEFINED,
            Some(i) => {
                if flat.composites.contains(&i) {
                    // SAFETY: the caller's status.
                    unsafe { finish(handles, i, status) };
                }
                i as c_int
            }
            None if flag.is_some() && found == 0 => abi::UNDEFINED,
            None => continue,
        };
        // SAFETY: the caller's index and flag.
        unsafe {
            index.write(out);
            if let Some(f) = flag.filter(|f| !f.is_null()) {
                f.write(c_int::from(chosen.is_some()));
            }
        }
        return abi::SUCCESS;
    }
}

/// `MPI_Waitany`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn waitany(
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    status: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { any(count, requests, index, None, status) }
}

/// `MPI_Testany`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn testany(
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { any(count, requests, index, Some(flag), status) }
}

/// `MPI_Waitsome` (`wait`) and `MPI_Testsome`: the plain requests completed and the
/// composites complete now (waiting goes on while only parts completed).
///
/// # Safety
/// The MPI function's contract.
unsafe fn some(
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
    wait: bool,
) -> c_int {
    // SAFETY: the caller's handles.
    let handles = unsafe { slice(requests, incount) };
    loop {
        let Some(mut flat) = Flat::of(handles) else {
            // SAFETY: forwarded (no composite left among them).
            return unsafe {
                match wait {
                    true => persistent::waitsome(incount, requests, outcount, indices, statuses),
                    false => persistent::testsome(incount, requests, outcount, indices, statuses),
                }
            };
        };
        let mut done: c_int = 0;
        let mut at = vec![0 as c_int; flat.handles.len()];
        // SAFETY: our flat arrays.
        let rc = unsafe {
            let (n, h, st) = (
                flat.len(),
                flat.handles.as_mut_ptr(),
                flat.statuses.as_mut_ptr(),
            );
            match wait {
                true => persistent::waitsome(n, h, &mut done, at.as_mut_ptr(), st),
                false => persistent::testsome(n, h, &mut done, at.as_mut_ptr(), st),
            }
        };
        if rc != abi::SUCCESS {
            // SAFETY: the caller's statuses (the plain ones as the call left them).
            unsafe { flat.fold(handles, std::ptr::null_mut()) };
            return rc;
        }
        // MPI wrote the statuses in completion order: each to its flat entry's place
        let completed = usize::try_from(done).unwrap_or(0);
        let mut by_entry = vec![Status::empty(); flat.statuses.len()];
        for (j, &k) in at[..completed].iter().enumerate() {
            if let Some(slot) = usize::try_from(k).ok().and_then(|k| by_entry.get_mut(k)) {
                *slot = flat.statuses[j];
            }
        }
        flat.statuses = by_entry;
        // SAFETY: no status array: plain statuses are written below, in completion order.
        let complete = unsafe { flat.fold(handles, std::ptr::null_mut()) };
        let mut out: Vec<(usize, Status)> = at[..completed]
            .iter()
            .map(|&k| k as usize)
            .filter(|&k| !flat.is_part(k))
            .map(|k| (flat.owner[k], flat.statuses[k]))
            .collect();
        for &i in &complete {
            // SAFETY: the composite's status is written below.
            let own = unsafe { finish(handles, i, std::ptr::null_mut()) };
            out.push((i, own));
        }
        if out.is_empty() && done != abi::UNDEFINED && wait {
            continue;
        }
        let n = match (out.is_empty(), done == abi::UNDEFINED) {
            (true, true) => abi::UNDEFINED,
            _ => out.len() as c_int,
        };
        // SAFETY: the caller's outcount, indices and statuses (an entry per completion).
        unsafe {
            outcount.write(n);
            for (j, (i, st)) in out.into_iter().enumerate() {
                indices.add(j).write(i as c_int);
                if !abi::is_statuses_ignore(statuses) {
                    statuses.add(j).write(st);
                }
            }
        }
        return abi::SUCCESS;
    }
}

/// `MPI_Waitsome`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn waitsome(
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { some(incount, requests, outcount, indices, statuses, true) }
}

/// `MPI_Testsome`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn testsome(
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { some(incount, requests, outcount, indices, statuses, false) }
}

/// Whether `request` is a composite.
fn is_composite(request: Request) -> bool {
    ANY.load(Ordering::Relaxed) && with(|t| t.contains_key(&request.bits()))
}

/// `MPI_Request_get_status`: of a composite, complete when all its parts are (asked of each,
/// none completed by the call).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_get_status(
    request: Request,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    if !is_composite(request) {
        // SAFETY: forwarded.
        return unsafe { persistent::request_get_status(request, flag, status) };
    }
    let (parts, reports, mut own) = with(|t| {
        t.get(&request.bits())
            .map(|c| (c.parts.clone(), c.reports, c.status))
            .unwrap_or((Vec::new(), None, Status::empty()))
    });
    let mut all = true;
    for (j, part) in parts.into_iter().enumerate() {
        let (mut done, mut st) = (0, Status::empty());
        // SAFETY: a part's handle, with our flag and status.
        let rc = unsafe { persistent::request_get_status(part, &mut done, &mut st) };
        if rc != abi::SUCCESS {
            return rc;
        }
        all &= done != 0;
        if done != 0 && reports == Some(j) && part != abi::predefined().request_null {
            own = st;
        }
    }
    // SAFETY: the caller's flag and status.
    unsafe {
        flag.write(c_int::from(all));
        if all && !abi::is_status_ignore(status) {
            status.write(own);
        }
    }
    abi::SUCCESS
}

/// `MPI_Request_free`: erroneous of a composite (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_free(request: *mut Request) -> c_int {
    // SAFETY: the caller's handle, if any.
    if !request.is_null() && is_composite(unsafe { *request }) {
        return abi::ERR_REQUEST;
    }
    // SAFETY: forwarded.
    unsafe { persistent::request_free(request) }
}

/// `MPI_Cancel`: erroneous of a composite (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn cancel(request: *mut Request) -> c_int {
    // SAFETY: the caller's handle, if any.
    if !request.is_null() && is_composite(unsafe { *request }) {
        return abi::ERR_REQUEST;
    }
    // SAFETY: forwarded.
    unsafe { persistent::cancel(request) }
}
