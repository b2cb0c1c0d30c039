//! The completion calls while a loss is contained ([`super::requests`]): `MPI_Wait`,
//! `MPI_Waitall`, `MPI_Test` and `MPI_Testall` complete the application's nonblocking sends
//! and receives on the world through repairs (a handle a repair replaced is exchanged for its
//! new request first). `MPI_Waitany`, `MPI_Waitsome`, `MPI_Testany`, `MPI_Testsome`,
//! `MPI_Request_free` and `MPI_Cancel` are not covered (which request completes first is a
//! choice a replacement would have to repeat, and it is not recorded): given a tracked request,
//! they stop the containment of later losses ([`crate::errors::stop_containing`]) and go to
//! the ordinary handlers.

use super::repair;
use super::requests;
use crate::abi::{self, Request, Status};
use crate::pmpi::{real, world, Call};
use crate::{stats, traffic};
use std::ffi::c_int;

/// Whether a completion call on these requests is recovery's.
fn covers(handles: &[Request]) -> bool {
    super::keeping()
        && requests::tracked()
        && !crate::boundary::inside()
        && !cd_core::logging_anywhere()
        && requests::any_tracked(handles)
}

/// The caller's `n` handles (none when `n` is 0).
///
/// # Safety
/// `handles` points to `n` requests when `n > 0`.
unsafe fn slice<'a>(handles: *mut Request, n: c_int) -> &'a mut [Request] {
    match usize::try_from(n) {
        // SAFETY: the caller's array of `n` handles.
        Ok(n) if n > 0 && !handles.is_null() => unsafe {
            std::slice::from_raw_parts_mut(handles, n)
        },
        _ => &mut [],
    }
}

/// `MPI_Wait`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn wait(request: *mut Request, status: *mut Status) -> c_int {
    // SAFETY: one handle, the caller's.
    if !covers(unsafe { slice(request, 1) }) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::wait(request, status) };
    }
    stats::count(Call::Wait);
    // SAFETY: one handle and one status (or MPI_STATUS_IGNORE), the caller's.
    unsafe { complete(request, 1, status, None) }
}

/// `MPI_Waitall`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn waitall(count: c_int, requests: *mut Request, statuses: *mut Status) -> c_int {
    // SAFETY: `count` handles, the caller's.
    if !covers(unsafe { slice(requests, count) }) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::waitall(count, requests, statuses) };
    }
    stats::count(Call::Waitall);
    // SAFETY: `count` handles and statuses (or MPI_STATUSES_IGNORE), the caller's.
    unsafe { complete(requests, count.max(0) as usize, statuses, None) }
}

/// `MPI_Test`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn test(request: *mut Request, flag: *mut c_int, status: *mut Status) -> c_int {
    // SAFETY: one handle, the caller's.
    if flag.is_null() || !covers(unsafe { slice(request, 1) }) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::test(request, flag, status) };
    }
    stats::count(Call::Test);
    // SAFETY: one handle, one status (or MPI_STATUS_IGNORE) and the flag, the caller's.
    unsafe { complete(request, 1, status, Some(flag)) }
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
    // SAFETY: `count` handles, the caller's.
    if flag.is_null() || !covers(unsafe { slice(requests, count) }) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::testall(count, requests, flag, statuses) };
    }
    stats::count(Call::Testall);
    // SAFETY: `count` handles and statuses (or MPI_STATUSES_IGNORE) and the flag, the caller's.
    unsafe { complete(requests, count.max(0) as usize, statuses, Some(flag)) }
}

/// Waits for (or with `flag`, tests) all of `n` requests through repairs (see [`requests`]):
/// counts the completed receives, forgets the completed requests, writes the statuses unless
/// ignored. A test that finds them not all complete, or that a repair interrupted, sets the
/// flag to 0 (the application tests again, on the requests a repair substituted).
///
/// # Safety
/// `handles` points to `n` requests; `statuses` to `n` statuses or is null; `flag` is
/// writable.
unsafe fn complete(
    handles: *mut Request,
    n: usize,
    statuses: *mut Status,
    flag: Option<*mut c_int>,
) -> c_int {
    if n == 0 {
        if let Some(f) = flag {
            // SAFETY: the caller's flag.
            unsafe { f.write(1) };
        }
        return abi::SUCCESS;
    }
    // SAFETY: the caller's array of `n` handles.
    let handles = unsafe { std::slice::from_raw_parts_mut(handles, n) };
    let null = abi::predefined().request_null;
    let mut out = vec![Status::zeroed(); n];
    loop {
        requests::substitute(handles);
        let before = handles.to_vec();
        let taken = traffic::take(&before);
        let mut st = vec![Status::zeroed(); n];
        let mut all: c_int = 1;
        let rc = repair::covered(|| {
            // SAFETY: the application's requests (or their replacements) and our statuses.
            unsafe {
                match flag {
                    None => real::Waitall(n as c_int, handles.as_mut_ptr(), st.as_mut_ptr()),
                    Some(_) => {
                        real::Testall(n as c_int, handles.as_mut_ptr(), &mut all, st.as_mut_ptr())
                    }
                }
            }
        });
        if rc == abi::SUCCESS && all == 0 {
            // a test that found them not all complete: nothing completed
            traffic::settle(taken, &before, &[], &st);
            // SAFETY: the caller's flag.
            unsafe { flag.map(|f| f.write(0)) };
            return abi::SUCCESS;
        }
        let done: Vec<usize> = (0..n)
            .filter(|&i| before[i] != null && handles[i] == null)
            .filter(|&i| rc == abi::SUCCESS || st[i].error() == abi::SUCCESS)
            .collect();
        traffic::settle(taken, &before, &done, &st);
        let completed: Vec<Request> = done.iter().map(|&i| before[i]).collect();
        requests::forget(&completed);
        for &i in &done {
            out[i] = st[i];
        }
        if rc == abi::SUCCESS {
            break;
        }
        let failed: Vec<usize> = (0..n)
            .filter(|&i| before[i] != null && !done.contains(&i))
            .filter(|&i| handles[i] == null)
            .collect();
        let failure =
            repair::is_failure(rc) || failed.iter().any(|&i| repair::is_failure(st[i].error()));
        if !failure {
            return rc;
        }
        // the failed ones are freed: their old handles stay keys of the repair's work
        let freed: Vec<Request> = failed.iter().map(|&i| before[i]).collect();
        if !requests::all_tracked(&freed) {
            // another nonblocking collective, or a request on another communicator: nothing here
            // knows how to finish it on the repaired world
            crate::loss::process_lost(
                world::current(),
                "a request in-job recovery does not cover (another nonblocking collective, or on a \
                 communicator it does not follow) failed",
            );
        }
        requests::freed(&freed);
        for &i in &failed {
            handles[i] = before[i];
        }
        repair::repair();
        if let Some(f) = flag {
            // the application tests again, on what the repair substituted
            // SAFETY: the caller's flag.
            unsafe { f.write(0) };
            return abi::SUCCESS;
        }
    }
    if let Some(f) = flag {
        // SAFETY: the caller's flag.
        unsafe { f.write(1) };
    }
    if !statuses.is_null() {
        // SAFETY: the caller's `n` statuses.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), statuses, n) };
    }
    abi::SUCCESS
}

macro_rules! untracking {
    ($($fn:ident => $call:ident($handles:ident, $n:expr; $($a:ident : $t:ty),*);)*) => {$(
        #[doc = concat!("`MPI_", stringify!($call), "`: not covered (see the module docs).")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn($($a: $t),*) -> c_int {
            if super::keeping() && requests::tracked() {
                // SAFETY: the caller's handles.
                requests::untrack(unsafe { slice($handles, $n) });
            }
            // SAFETY: forwarded.
            unsafe { crate::wait::$fn($($a),*) }
        }
    )*};
}

untracking! {
    waitany => Waitany(requests, count; count: c_int, requests: *mut Request, index: *mut c_int, status: *mut Status);
    waitsome => Waitsome(requests, incount; incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status);
    testany => Testany(requests, count; count: c_int, requests: *mut Request, index: *mut c_int, flag: *mut c_int, status: *mut Status);
    testsome => Testsome(requests, incount; incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status);
    request_free => Request_free(request, 1; request: *mut Request);
    cancel => Cancel(request, 1; request: *mut Request);
}
