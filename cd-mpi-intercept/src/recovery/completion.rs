//! The completion calls while a loss is contained ([`super::requests`]): `MPI_Wait`,
//! `MPI_Waitall`, `MPI_Test` and `MPI_Testall` complete the application's nonblocking sends
//! and receives on the world through repairs (a handle a repair replaced is exchanged for its
//! new request first; a persistent request's handle, for its activation's: `super::persistent`). `MPI_Waitany`, `MPI_Waitsome`, `MPI_Testany` and `MPI_Testsome` are
//! built on them, one request at a time, so that a repair finds them the same way; what they
//! choose (which request, which set), a test's flag, and the source an `MPI_Irecv` from
//! `MPI_ANY_SOURCE` matched are recorded at the partner before the application sees them, and a
//! replacement repeats them ([`super::choices`]). A send given to `MPI_Request_free` goes on
//! unseen (the journal has its data). In the program's start, or given to `MPI_Cancel`,
//! `MPI_Request_get_status` (whose flag is not recorded) or, but for a send,
//! `MPI_Request_free`, a tracked request stops the containment of later losses
//! ([`crate::errors::stop_containing`]) and goes to the ordinary handlers.

use super::calls::logged;
use super::choices::{self, Kind};
use super::kept;
use super::repair;
use super::requests;
use crate::abi::{self, Request, Status};
use crate::pmpi::{real, world, Call};
use crate::{stats, traffic};
use std::ffi::c_int;

/// Whether a completion call's choice is recorded (or repeated) now (decided before the call
/// enters an ordinary handler, whose guard is the runtime's: [`logged`]).
fn chooses() -> bool {
    choices::recording() && !crate::boundary::inside()
}

/// Whether a completion call on these requests is recovery's (as [`chooses`]): it tracks one,
/// or one is a kept persistent request's, active (inside a CD that logs, its activation is lent
/// only within the ordinary handler: [`lent`]), or, inside a CD that logs, one is a replay's
/// stand-in, which the ordinary handler binds to the live request (a receive the restore
/// cancelled, posted again by recovery: `calls::receive_again`) and hands recovery.
fn covers(handles: &[Request]) -> bool {
    let tracks =
        || requests::any_tracked(handles) || (logged() && crate::engine::any_virtual(handles));
    !crate::boundary::inside()
        && ((super::keeping() && requests::tracked() && tracks()) || kept::any_active(handles))
}

/// `f` on `handles` with the kept persistent requests' activations in place of their handles
/// (`super::kept`): the live step of a covered completion within the ordinary handler, which
/// tracks the application's handles ([`logged`]).
fn lent<R>(handles: &mut [Request], f: impl FnOnce(&mut [Request]) -> R) -> R {
    let lent = kept::lend(handles);
    let r = f(handles);
    kept::give_back(handles, &lent);
    r
}

/// A covered completion call made as `call`: `direct` outside CDs that log (counted in the
/// statistics here), else `within`, given `direct`, runs it within the ordinary handler,
/// which counts it ([`logged`]).
fn completing<D: FnOnce() -> c_int>(
    call: Call,
    direct: D,
    within: impl FnOnce(D) -> c_int,
) -> c_int {
    if !logged() {
        stats::count(call);
        return direct();
    }
    within(direct)
}

/// The caller's `n` handles (none when `n` is 0).
///
/// # Safety
/// `handles` points to `n` requests when `n > 0`.
pub(super) unsafe fn slice<'a>(handles: *mut Request, n: c_int) -> &'a mut [Request] {
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
    // SAFETY: one handle and one status (or MPI_STATUS_IGNORE), the caller's.
    let direct = || unsafe { complete(request, 1, status, None) };
    completing(Call::Wait, direct, |direct| {
        // SAFETY: forwarded.
        unsafe { crate::wait::single_via(Call::Wait, request, None, status, direct, live, false) }
    })
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
    // SAFETY: `count` handles and statuses (or MPI_STATUSES_IGNORE), the caller's.
    let direct = || unsafe { complete(requests, count.max(0) as usize, statuses, None) };
    completing(Call::Waitall, direct, |direct| {
        // SAFETY: forwarded.
        unsafe {
            let call = Call::Waitall;
            crate::wait::all_via(call, count, requests, None, statuses, direct, live, false)
        }
    })
}

/// A wait (or a test, with `flag`) of all of the requests `handles`, with a status each, as
/// the ordinary handler a covered call runs within gives them ([`logged`]).
fn live(handles: &mut [Request], statuses: &mut [Status], flag: Option<&mut c_int>) -> c_int {
    let flag = flag.map(|f| f as *mut c_int);
    // SAFETY: the caller's handles (or their stand-ins), a status for each, its flag.
    lent(handles, |h| unsafe {
        complete(h.as_mut_ptr(), h.len(), statuses.as_mut_ptr(), flag)
    })
}

/// [`live`] for a test whose flag may be a choice ([`tested`]).
fn live_test(choosing: bool, tracked: bool) -> impl crate::wait::Live {
    move |handles: &mut [Request], statuses: &mut [Status], flag: Option<&mut c_int>| {
        let mut own = 0;
        let flag = flag.unwrap_or(&mut own);
        let (n, statuses) = (handles.len(), statuses.as_mut_ptr());
        // SAFETY: the caller's handles (or their stand-ins), a status for each, its flag.
        lent(handles, |h| unsafe {
            tested(h.as_mut_ptr(), n, statuses, flag, choosing, tracked)
        })
    }
}

/// `MPI_Test`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn test(request: *mut Request, flag: *mut c_int, status: *mut Status) -> c_int {
    let choosing = chooses();
    // SAFETY: one handle, the caller's.
    let tracked = covers(unsafe { slice(request, 1) });
    if flag.is_null() || !(choosing || tracked) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::test(request, flag, status) };
    }
    // SAFETY: one handle, one status (or MPI_STATUS_IGNORE) and the flag, the caller's.
    let direct = || unsafe { tested(request, 1, status, flag, choosing, tracked) };
    let live = live_test(choosing, tracked);
    completing(Call::Test, direct, |direct| {
        let flag = Some(flag);
        // SAFETY: forwarded.
        unsafe {
            crate::wait::single_via(Call::Test, request, flag, status, direct, live, !tracked)
        }
    })
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
    let choosing = chooses();
    // SAFETY: `count` handles, the caller's.
    let tracked = covers(unsafe { slice(requests, count) });
    if flag.is_null() || !(choosing || tracked) {
        // SAFETY: forwarded.
        return unsafe { crate::wait::testall(count, requests, flag, statuses) };
    }
    let n = count.max(0) as usize;
    // SAFETY: `count` handles and statuses (or MPI_STATUSES_IGNORE) and the flag, the caller's.
    let direct = || unsafe { tested(requests, n, statuses, flag, choosing, tracked) };
    let live = live_test(choosing, tracked);
    completing(Call::Testall, direct, |direct| {
        let (call, flag) = (Call::Testall, Some(flag));
        // SAFETY: forwarded.
        unsafe {
            crate::wait::all_via(
                call, count, requests, flag, statuses, direct, live, !tracked,
            )
        }
    })
}

/// A test of all of `n` requests: with `choosing`, its flag is a choice, repeated (a
/// replacement's) or tested, and recorded either way. Requests none of which recovery tracks
/// (`!tracked`: on `MPI_COMM_SELF`, say) go to the ordinary handlers.
///
/// # Safety
/// As [`complete`]'s; `flag` is writable.
unsafe fn tested(
    handles: *mut Request,
    n: usize,
    statuses: *mut Status,
    flag: *mut c_int,
    choosing: bool,
    tracked: bool,
) -> c_int {
    if let Some(r) = choosing.then(|| choices::repeat(Kind::Test)).flatten() {
        // SAFETY: the caller's handles and statuses.
        let rc = match (r.flag(), tracked) {
            (false, _) => abi::SUCCESS,
            (true, true) => unsafe { complete(handles, n, statuses, None) },
            (true, false) => unsafe { crate::wait::waitall(n as c_int, handles, statuses) },
        };
        let found = r.flag() && rc == abi::SUCCESS;
        // SAFETY: the caller's flag.
        unsafe { flag.write(c_int::from(found)) };
        choices::chose_test(found);
        return rc;
    }
    // SAFETY: the caller's handles, statuses and flag.
    let rc = unsafe {
        match tracked {
            true => complete(handles, n, statuses, Some(flag)),
            false => crate::wait::testall(n as c_int, handles, flag, statuses),
        }
    };
    if choosing && rc == abi::SUCCESS {
        // SAFETY: written above.
        choices::chose_test(unsafe { flag.read() } != 0);
    }
    rc
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
    let mut out = vec![Status::empty(); n];
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
        for &i in &done {
            if let Some(place) = requests::wildcard(before[i]) {
                choices::matched(place, st[i].source(), st[i].tag());
            }
        }
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
        // a receive from MPI_ANY_SOURCE whose possible sender failed stays active, its status
        // saying so (MPI_ERR_PROC_FAILED_PENDING): the repair posts it again
        let pending = (0..n)
            .any(|i| before[i] != null && handles[i] != null && repair::is_failure(st[i].error()));
        let failure = repair::is_failure(rc)
            || pending
            || failed.iter().any(|&i| repair::is_failure(st[i].error()));
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
    if !abi::is_statuses_ignore(statuses) && !abi::is_status_ignore(statuses) {
        // SAFETY: the caller's `n` statuses.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), statuses, n) };
    }
    abi::SUCCESS
}

/// `MPI_Cancel`: not covered (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn cancel(request: *mut Request) -> c_int {
    if super::keeping() && requests::tracked() {
        // SAFETY: the caller's handle.
        requests::untrack(unsafe { slice(request, 1) });
    }
    // SAFETY: forwarded.
    unsafe { crate::wait::cancel(request) }
}

/// `MPI_Request_free`: of a send, covered (`requests::free_send`); of another tracked request,
/// not (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_free(request: *mut Request) -> c_int {
    if super::keeping() && requests::tracked() && !request.is_null() {
        // SAFETY: the caller's handle.
        let handle = unsafe { *request };
        if !requests::free_send(handle) {
            requests::untrack(&[handle]);
        }
    }
    // SAFETY: forwarded.
    unsafe { crate::wait::request_free(request) }
}

/// `MPI_Request_get_status`: its flag is a choice that is not recorded (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_get_status(
    request: Request,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    if super::keeping() && requests::any_tracked(&[request]) {
        requests::untrack(&[request]);
    }
    // SAFETY: forwarded.
    unsafe { crate::wait::request_get_status(request, flag, status) }
}

/// Before the ordinary handler of a call that chooses runs instead (see the module docs): a
/// tracked request among the caller's `n` stops containment.
///
/// # Safety
/// `handles` points to `n` requests when `n > 0`.
unsafe fn unchosen(handles: *mut Request, n: c_int) {
    if super::keeping() && requests::tracked() {
        // SAFETY: the caller's handles.
        requests::untrack(unsafe { slice(handles, n) });
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
    if index.is_null() || !chooses() {
        // SAFETY: the caller's handles.
        unsafe { unchosen(requests, count) };
        // SAFETY: forwarded.
        return unsafe { crate::wait::waitany(count, requests, index, status) };
    }
    // SAFETY: forwarded.
    unsafe { any_within(Call::Waitany, count, requests, index, None, status) }
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
    if index.is_null() || flag.is_null() || !chooses() {
        // SAFETY: the caller's handles.
        unsafe { unchosen(requests, count) };
        // SAFETY: forwarded.
        return unsafe { crate::wait::testany(count, requests, index, flag, status) };
    }
    // SAFETY: forwarded.
    unsafe { any_within(Call::Testany, count, requests, index, Some(flag), status) }
}

/// [`any`] on the caller's `count` handles, within the ordinary handler while a CD logs
/// ([`logged`]); that handler counts the completed receives when recovery tracks none of the
/// requests (then [`any`] completes them through the library's call; else through
/// [`complete`], which counts them), as for the tests.
///
/// # Safety
/// The MPI function's contract (`MPI_Waitany`'s, or with `flag` `MPI_Testany`'s).
unsafe fn any_within(
    call: Call,
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut Status,
) -> c_int {
    // SAFETY: the caller's `count` handles.
    let tracked = covers(unsafe { slice(requests, count) });
    // SAFETY: the caller's `count` handles, index, flag and status.
    let direct = || unsafe { any(slice(requests, count), index, status, flag, tracked) };
    let live = |h: &mut [Request], i: &mut c_int, f: Option<&mut c_int>, got: &mut Status| {
        let f = f.map(|f| f as *mut c_int);
        // SAFETY: the caller's handles (or their stand-ins), an index, a status and its flag.
        lent(h, |h| unsafe { any(h, i, got, f, tracked) })
    };
    completing(call, direct, |direct| {
        // SAFETY: forwarded.
        unsafe {
            crate::wait::any_via(
                call, count, requests, index, flag, status, direct, live, !tracked,
            )
        }
    })
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
    if outcount.is_null() || indices.is_null() || !chooses() {
        // SAFETY: the caller's handles.
        unsafe { unchosen(requests, incount) };
        // SAFETY: forwarded.
        return unsafe { crate::wait::waitsome(incount, requests, outcount, indices, statuses) };
    }
    // SAFETY: forwarded.
    unsafe {
        some_within(
            Call::Waitsome,
            incount,
            requests,
            outcount,
            indices,
            statuses,
        )
    }
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
    if outcount.is_null() || indices.is_null() || !chooses() {
        // SAFETY: the caller's handles.
        unsafe { unchosen(requests, incount) };
        // SAFETY: forwarded.
        return unsafe { crate::wait::testsome(incount, requests, outcount, indices, statuses) };
    }
    // SAFETY: forwarded.
    unsafe {
        some_within(
            Call::Testsome,
            incount,
            requests,
            outcount,
            indices,
            statuses,
        )
    }
}

/// [`some`] on the caller's `incount` handles, within the ordinary handler while a CD logs
/// ([`logged`]).
///
/// # Safety
/// The MPI function's contract (`MPI_Waitsome`'s, or `MPI_Testsome`'s).
unsafe fn some_within(
    call: Call,
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
) -> c_int {
    let wait = call == Call::Waitsome;
    // SAFETY: the caller's `incount` handles.
    let tracked = covers(unsafe { slice(requests, incount) });
    // SAFETY: the caller's `incount` handles, indices and statuses, and its count.
    let direct = || unsafe {
        some(
            slice(requests, incount),
            outcount,
            indices,
            statuses,
            wait,
            tracked,
        )
    };
    let live = |h: &mut [Request], out: &mut c_int, idx: *mut c_int, got: *mut Status| {
        // SAFETY: the caller's handles (or their stand-ins), an index and a status each.
        lent(h, |h| unsafe { some(h, out, idx, got, wait, tracked) })
    };
    completing(call, direct, |direct| {
        let (out, all) = (outcount, statuses);
        // SAFETY: forwarded.
        unsafe {
            crate::wait::some_via(
                call, incount, requests, out, indices, all, direct, live, !tracked,
            )
        }
    })
}

/// Tests each active request in turn (a wait: until one completes), through repairs; the
/// choice is repeated or made, and recorded (see the module docs). With `flag` a test.
/// Requests none of which recovery tracks (`!tracked`, found before the call entered an
/// ordinary handler) go to the ordinary handlers.
///
/// # Safety
/// `index` and `flag` are writable, `status` is one status or `MPI_STATUS_IGNORE`.
unsafe fn any(
    handles: &mut [Request],
    index: *mut c_int,
    status: *mut Status,
    flag: Option<*mut c_int>,
    tracked: bool,
) -> c_int {
    let give = |chosen: bool, i: c_int| {
        // SAFETY: the caller's index and flag.
        unsafe {
            index.write(i);
            if let Some(f) = flag {
                f.write(c_int::from(chosen));
            }
        }
        choices::chose_any(chosen, i);
    };
    if let Some(r) = choices::repeat(Kind::Any) {
        let slot = usize::try_from(r.index())
            .ok()
            .filter(|&i| i < handles.len());
        let rc = match (r.flag(), slot) {
            (false, _) => abi::SUCCESS,
            // SAFETY: one of the caller's handles, and its status.
            (true, Some(i)) if tracked => unsafe { complete(&mut handles[i], 1, status, None) },
            // SAFETY: as above.
            (true, Some(i)) => unsafe { crate::wait::wait(&mut handles[i], status) },
            (true, None) => {
                // SAFETY: the caller's status.
                unsafe { Status::empty().store(status) };
                abi::SUCCESS
            }
        };
        give(r.flag(), slot.map_or(abi::UNDEFINED, |i| i as c_int));
        return rc;
    }
    if !tracked {
        let (n, requests) = (handles.len() as c_int, handles.as_mut_ptr());
        // SAFETY: forwarded: the caller's handles, index, flag and status.
        let rc = unsafe {
            match flag {
                None => crate::wait::waitany(n, requests, index, status),
                Some(f) => crate::wait::testany(n, requests, index, f, status),
            }
        };
        if rc == abi::SUCCESS {
            // SAFETY: written by the call.
            let (chosen, i) = unsafe { (flag.is_none_or(|f| f.read() != 0), index.read()) };
            give(chosen, i);
        }
        return rc;
    }
    let null = abi::predefined().request_null;
    loop {
        let mut active = false;
        for (i, handle) in handles.iter_mut().enumerate() {
            if *handle == null {
                continue;
            }
            active = true;
            let mut done: c_int = 0;
            // SAFETY: one of the caller's handles, and its status.
            let rc = unsafe { complete(handle, 1, status, Some(&mut done)) };
            if rc != abi::SUCCESS {
                // SAFETY: the caller's index.
                unsafe { index.write(i as c_int) };
                return rc;
            }
            if done != 0 {
                give(true, i as c_int);
                return rc;
            }
        }
        if !active {
            // SAFETY: the caller's status.
            unsafe { Status::empty().store(status) };
            give(true, abi::UNDEFINED);
            return abi::SUCCESS;
        }
        if flag.is_some() {
            give(false, abi::UNDEFINED);
            return abi::SUCCESS;
        }
    }
}

/// Tests every active request (`wait`: until at least one completes), through repairs; the
/// set is repeated or made, and recorded (see the module docs). Requests none of which
/// recovery tracks go to the ordinary handlers (`tracked` as for [`any`]).
///
/// # Safety
/// `outcount` is writable, `indices` holds `handles.len()` ints, `statuses` as many statuses
/// or is `MPI_STATUSES_IGNORE`.
unsafe fn some(
    handles: &mut [Request],
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
    wait: bool,
    tracked: bool,
) -> c_int {
    let give = |done: &[(c_int, Status)]| {
        for (k, (i, st)) in done.iter().enumerate() {
            // SAFETY: the caller's arrays hold `handles.len()` entries, more than `done`.
            unsafe {
                indices.add(k).write(*i);
                if !abi::is_statuses_ignore(statuses) {
                    statuses.add(k).write(*st);
                }
            }
        }
        // SAFETY: the caller's count.
        unsafe { outcount.write(done.len() as c_int) };
        let chosen: Vec<c_int> = done.iter().map(|(i, _)| *i).collect();
        choices::chose_some(Some(&chosen));
    };
    let undefined = || {
        // SAFETY: the caller's count.
        unsafe { outcount.write(abi::UNDEFINED) };
        choices::chose_some(None);
        abi::SUCCESS
    };
    if let Some(head) = choices::repeat(Kind::Some) {
        let Some(list) = choices::repeat_some(head) else {
            return undefined();
        };
        let mut done = Vec::with_capacity(list.len());
        for i in list {
            let Some(slot) = usize::try_from(i).ok().filter(|&s| s < handles.len()) else {
                continue;
            };
            let mut st = Status::zeroed();
            // SAFETY: one of the caller's handles, and our status.
            let rc = unsafe {
                match tracked {
                    true => complete(&mut handles[slot], 1, &mut st, None),
                    false => crate::wait::wait(&mut handles[slot], &mut st),
                }
            };
            if rc != abi::SUCCESS {
                give(&done);
                return rc;
            }
            done.push((i, st));
        }
        give(&done);
        return abi::SUCCESS;
    }
    if !tracked {
        let (n, requests) = (handles.len() as c_int, handles.as_mut_ptr());
        // SAFETY: forwarded: the caller's handles, count, indices and statuses.
        let rc = unsafe {
            match wait {
                true => crate::wait::waitsome(n, requests, outcount, indices, statuses),
                false => crate::wait::testsome(n, requests, outcount, indices, statuses),
            }
        };
        if rc == abi::SUCCESS {
            // SAFETY: written by the call; `indices` holds `outcount` of them.
            let out = unsafe { outcount.read() };
            match usize::try_from(out) {
                Ok(k) => {
                    // SAFETY: as above.
                    let chosen = unsafe { std::slice::from_raw_parts(indices, k) };
                    choices::chose_some(Some(chosen));
                }
                Err(_) => choices::chose_some(None),
            }
        }
        return rc;
    }
    let null = abi::predefined().request_null;
    loop {
        let mut active = false;
        let mut done = Vec::new();
        for (i, handle) in handles.iter_mut().enumerate() {
            if *handle == null {
                continue;
            }
            active = true;
            let (mut flag, mut st) = (0, Status::zeroed());
            // SAFETY: one of the caller's handles, and our status.
            let rc = unsafe { complete(handle, 1, &mut st, Some(&mut flag)) };
            if rc != abi::SUCCESS {
                // the ones that completed before it are the caller's still
                give(&done);
                return rc;
            }
            if flag != 0 {
                done.push((i as c_int, st));
            }
        }
        if !active {
            return undefined();
        }
        if !done.is_empty() || !wait {
            give(&done);
            return abi::SUCCESS;
        }
    }
}
