//! Completion calls: Wait, Test and their all/any/some forms, and the other request calls.
//!
//! Recording, a completion call logs which requests completed and in which order, with each
//! one's status and (for receives) the data it delivered: these are the determinants a replay
//! must force. Replaying, the same call is answered from that record alone: data is unpacked
//! into the buffer the receive named, virtual requests of the same post are completed and
//! freed, and the application's handles and statuses are set as MPI would have set them.

use crate::abi::{self, Request, Status};
use crate::engine::{self, Delivery, Route, Unserved};
use crate::pmpi::{real, Call};
use crate::record::{Header, Reader, Writer};
use crate::traffic;
use std::ffi::c_int;

/// What a completion call reported.
struct Outcome {
    /// `flag` of the Test forms, `outcount` of the some forms (MPI_UNDEFINED kept), else 0.
    result: c_int,
    /// `index` of the any forms (MPI_UNDEFINED when none), else 0.
    index: c_int,
    /// The completed slots, in the order MPI reported them.
    completed: Vec<usize>,
}

/// Runs a completion call: straight through, recorded, or replayed. `run` calls the real
/// function on the given handles and per-slot statuses and reports the outcome. When messages
/// are counted (and `counts`: else `run` counts them) and requests are pending, the completed
/// ones are counted (a direct call then runs on its own statuses too, so that a receive's
/// source is known).
///
/// # Safety
/// `requests` must point to `n` handles (the application's array).
unsafe fn complete(
    call: Call,
    requests: *mut Request,
    n: usize,
    direct: impl FnOnce() -> c_int,
    run: impl FnOnce(&mut [Request], &mut [Status]) -> (c_int, Outcome),
    counts: bool,
) -> Result<(Outcome, Vec<Status>), c_int> {
    let world = abi::predefined().comm_world;
    let header = Header {
        count: n as i64,
        ..Header::plain(call, world)
    };
    let route = engine::route(call);
    let counted = counts && engine::counted(&route) && traffic::tracking();
    if let (Route::Direct, false) = (&route, counted) {
        return Err(direct());
    }
    // SAFETY: the caller's contract: `n` handles.
    let handles: &mut [Request] = if n == 0 {
        &mut []
    } else {
        unsafe { std::slice::from_raw_parts_mut(requests, n) }
    };
    match route {
        Route::Direct => {
            let before = handles.to_vec();
            let taken = traffic::take(&before);
            let mut statuses = vec![Status::empty(); n];
            let (rc, outcome) = run(handles, &mut statuses);
            let done: &[usize] = if rc == abi::SUCCESS {
                &outcome.completed
            } else {
                &[]
            };
            traffic::settle(taken, &before, done, &statuses);
            if rc != abi::SUCCESS {
                return Err(rc);
            }
            Ok((outcome, statuses))
        }
        Route::Record(guard) => {
            let before = handles.to_vec();
            let substituted = engine::has_virtuals().then(|| engine::substitute(handles));
            let mut statuses = vec![Status::empty(); n];
            let mut inner = substituted.as_ref().map(|s| s.handles.clone());
            // what MPI is given (a bound virtual request's live stand-in)
            let given = match (&inner, counted) {
                (Some(inner), true) => inner.clone(),
                (None, true) => before.clone(),
                (_, false) => Vec::new(),
            };
            let taken = counted.then(|| traffic::take(&given));
            let (rc, outcome) = match inner.as_mut() {
                Some(inner) => run(inner, &mut statuses),
                None => run(handles, &mut statuses),
            };
            if let (Some(s), Some(inner)) = (&substituted, &inner) {
                for i in 0..n {
                    handles[i] = match &s.standins[i] {
                        Some(e) if e.live && e.persistent => before[i],
                        Some(e) if e.live && outcome.completed.contains(&i) => {
                            abi::predefined().request_null
                        }
                        Some(e) if e.live => before[i],
                        _ => inner[i],
                    };
                }
            }
            if let Some(taken) = taken {
                let done: &[usize] = if rc == abi::SUCCESS {
                    &outcome.completed
                } else {
                    &[]
                };
                traffic::settle(taken, &given, done, &statuses);
            }
            if rc != abi::SUCCESS {
                return Err(rc);
            }
            let mut w = Writer::new(&header);
            w.int(outcome.result)
                .int(outcome.index)
                .int(outcome.completed.len() as c_int);
            for &i in &outcome.completed {
                let standin = substituted.as_ref().and_then(|s| s.standins[i].as_ref());
                let (seq, delivery) = match (standin, &substituted) {
                    (Some(entry), Some(s)) => {
                        engine::completed_substitute(entry, s.handles[i], &statuses[i])
                    }
                    _ => match engine::untrack(before[i]) {
                        Some(t) => (t.seq, t.delivery),
                        None => (0, Delivery::Nothing),
                    },
                };
                w.int(i as c_int);
                engine::record_completion(&mut w, seq, &statuses[i], &delivery);
            }
            // SAFETY: the completed receives' buffers hold their data now.
            unsafe { engine::log_record(&guard, &w) };
            Ok((outcome, statuses))
        }
        Route::Replay(_guard, mut reader) => {
            engine::expect(&reader, &header, world)?;
            // SAFETY: forwarded: the buffers of the logged receives are the application's.
            match unsafe { replay(&mut reader, handles) } {
                Ok(done) => Ok(done),
                Err(Unserved::Corrupt) => Err(engine::corrupt(call, world)),
                Err(Unserved::Other(what)) => Err(engine::mismatch(
                    &format!(
                        "CD replay mismatch: re-executed {}, where {what}; a re-execution must \
                         complete the logged posts' requests in the same slots",
                        call.name()
                    ),
                    world,
                )),
            }
        }
    }
}

/// Serves a completion call from its record. A slot that holds another request than the log
/// completes there stops it (nothing is delivered for that slot or after it; the slots before
/// it completed as logged).
///
/// # Safety
/// The logged receives' buffers must be writable.
unsafe fn replay(
    reader: &mut Reader,
    handles: &mut [Request],
) -> Result<(Outcome, Vec<Status>), Unserved> {
    let result = reader.int()?;
    let index = reader.int()?;
    let count = reader.int()?;
    let mut statuses = vec![Status::empty(); handles.len()];
    let mut completed = Vec::with_capacity(count.max(0) as usize);
    for _ in 0..count {
        let i = usize::try_from(reader.int()?).map_err(|_| Unserved::Corrupt)?;
        let slot = handles.get_mut(i).ok_or(Unserved::Corrupt)?;
        // SAFETY: forwarded.
        let (handle, status) = unsafe { engine::replay_completion(reader, *slot, i)? };
        *slot = handle;
        statuses[i] = status;
        completed.push(i);
    }
    Ok((
        Outcome {
            result,
            index,
            completed,
        },
        statuses,
    ))
}

/// Copies per-slot statuses to an application status array (unless `MPI_STATUSES_IGNORE`).
///
/// # Safety
/// `out` must be `MPI_STATUSES_IGNORE` or hold `slots.len()` statuses.
unsafe fn store_all(out: *mut Status, slots: impl IntoIterator<Item = Status>) {
    if abi::is_statuses_ignore(out) {
        return;
    }
    for (k, status) in slots.into_iter().enumerate() {
        // SAFETY: within the application's array.
        unsafe { out.add(k).write(status) };
    }
}

fn active(handle: Request) -> bool {
    handle != abi::predefined().request_null
}

/// How a wait or test of all of some requests reaches MPI, given the handles, a status per
/// handle and, for a test, its flag.
pub(crate) trait Live:
    FnOnce(&mut [Request], &mut [Status], Option<&mut c_int>) -> c_int
{
}
impl<F: FnOnce(&mut [Request], &mut [Status], Option<&mut c_int>) -> c_int> Live for F {}

/// Waits for (or with `test`, tests) all of the `n` requests at `requests` through `live` (see
/// [`single_via`]): the outcome and a status per request.
///
/// # Safety
/// `requests` points to `n` handles; `live` and `direct` complete them.
unsafe fn all_of(
    call: Call,
    requests: *mut Request,
    n: usize,
    test: bool,
    direct: impl FnOnce() -> c_int,
    live: impl Live,
    counts: bool,
) -> Result<(Outcome, Vec<Status>), c_int> {
    let run = |h: &mut [Request], st: &mut [Status]| {
        let was_active: Vec<usize> = (0..h.len()).filter(|&i| active(h[i])).collect();
        let mut f: c_int = 1;
        let rc = live(h, st, test.then_some(&mut f));
        let completed = if f != 0 { was_active } else { vec![] };
        let outcome = Outcome {
            result: f,
            index: 0,
            completed,
        };
        (rc, outcome)
    };
    // SAFETY: forwarded.
    unsafe { complete(call, requests, n, direct, run, counts) }
}

/// The shared body of `MPI_Wait` (`flag` is `None`) and `MPI_Test`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn single(
    call: Call,
    request: *mut Request,
    flag: Option<*mut c_int>,
    status: *mut Status,
    direct: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the application's request (or its stand-in) and a status for it.
    let live = |h: &mut [Request], st: &mut [Status], f: Option<&mut c_int>| unsafe {
        match f {
            None => real::Wait(&mut h[0], &mut st[0]),
            Some(f) => real::Test(&mut h[0], f, &mut st[0]),
        }
    };
    // SAFETY: forwarded.
    unsafe { single_via(call, request, flag, status, direct, live, true) }
}

/// [`single`] reaching MPI through `live` (and `direct`, with the application's arguments);
/// counted unless `counts` is false (then `live` counts: in-job recovery's covered completion,
/// `crate::recovery`).
///
/// # Safety
/// The MPI function's contract; `live` and `direct` complete the one request.
pub(crate) unsafe fn single_via(
    call: Call,
    request: *mut Request,
    flag: Option<*mut c_int>,
    status: *mut Status,
    direct: impl FnOnce() -> c_int,
    live: impl Live,
    counts: bool,
) -> c_int {
    // SAFETY: forwarded; one handle.
    let done = unsafe { all_of(call, request, 1, flag.is_some(), direct, live, counts) };
    match done {
        Ok((outcome, st)) => {
            // SAFETY: the application's out-parameters.
            unsafe {
                if let Some(flag) = flag {
                    *flag = outcome.result;
                }
                if outcome.result != 0 {
                    st[0].store(status);
                }
            }
            abi::SUCCESS
        }
        Err(rc) => rc,
    }
}

/// The shared body of `MPI_Waitall` (`flag` is `None`) and `MPI_Testall`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn all(
    call: Call,
    count: c_int,
    requests: *mut Request,
    flag: Option<*mut c_int>,
    statuses: *mut Status,
    direct: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the application's requests (or their stand-ins) and a status for each.
    let live = |h: &mut [Request], st: &mut [Status], f: Option<&mut c_int>| unsafe {
        let (len, ptr) = (h.len() as c_int, h.as_mut_ptr());
        match f {
            None => real::Waitall(len, ptr, st.as_mut_ptr()),
            Some(f) => real::Testall(len, ptr, f, st.as_mut_ptr()),
        }
    };
    // SAFETY: forwarded.
    unsafe { all_via(call, count, requests, flag, statuses, direct, live, true) }
}

/// [`all`] reaching MPI as [`single_via`] says.
///
/// # Safety
/// The MPI function's contract; `live` and `direct` complete the `count` requests.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_via(
    call: Call,
    count: c_int,
    requests: *mut Request,
    flag: Option<*mut c_int>,
    statuses: *mut Status,
    direct: impl FnOnce() -> c_int,
    live: impl Live,
    counts: bool,
) -> c_int {
    let n = count.max(0) as usize;
    // SAFETY: forwarded; `count` handles.
    let done = unsafe { all_of(call, requests, n, flag.is_some(), direct, live, counts) };
    match done {
        Ok((outcome, st)) => {
            // SAFETY: the application's out-parameters: a flag, `count` statuses or ignore.
            unsafe {
                if let Some(flag) = flag {
                    *flag = outcome.result;
                }
                if outcome.result != 0 {
                    store_all(statuses, st);
                }
            }
            abi::SUCCESS
        }
        Err(rc) => rc,
    }
}

/// The shared body of `MPI_Waitany` (`flag` is `None`) and `MPI_Testany`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn any(
    call: Call,
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut Status,
    direct: impl FnOnce() -> c_int,
) -> c_int {
    let live = |h: &mut [Request], i: &mut c_int, f: Option<&mut c_int>, got: &mut Status| {
        let (len, ptr) = (h.len() as c_int, h.as_mut_ptr());
        // SAFETY: the application's requests (or their stand-ins).
        unsafe {
            match f {
                None => real::Waitany(len, ptr, i, got),
                Some(f) => real::Testany(len, ptr, i, f, got),
            }
        }
    };
    // SAFETY: forwarded.
    unsafe {
        any_via(
            call, count, requests, index, flag, status, direct, live, true,
        )
    }
}

/// [`any`] reaching MPI through `live` (`MPI_Waitany`'s or `MPI_Testany`'s arguments but the
/// count), as [`single_via`] says.
///
/// # Safety
/// The MPI function's contract; `live` and `direct` complete one of the `count` requests.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn any_via(
    call: Call,
    count: c_int,
    requests: *mut Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut Status,
    direct: impl FnOnce() -> c_int,
    live: impl FnOnce(&mut [Request], &mut c_int, Option<&mut c_int>, &mut Status) -> c_int,
    counts: bool,
) -> c_int {
    let n = count.max(0) as usize;
    // SAFETY: forwarded; `count` handles.
    let done = unsafe {
        complete(
            call,
            requests,
            n,
            direct,
            |h, st| {
                let mut i: c_int = abi::UNDEFINED;
                let mut f: c_int = 1;
                let mut got = Status::zeroed();
                let rc = live(h, &mut i, flag.map(|_| &mut f), &mut got);
                let completed = usize::try_from(i)
                    .ok()
                    .filter(|&i| f != 0 && i < st.len())
                    .map(|i| {
                        st[i] = got;
                        vec![i]
                    });
                (
                    rc,
                    Outcome {
                        result: f,
                        index: i,
                        completed: completed.unwrap_or_default(),
                    },
                )
            },
            counts,
        )
    };
    match done {
        Ok((outcome, st)) => {
            // SAFETY: the application's out-parameters.
            unsafe {
                *index = outcome.index;
                if let Some(flag) = flag {
                    *flag = outcome.result;
                }
                match outcome.completed.first() {
                    Some(&i) => st[i].store(status),
                    None if outcome.result != 0 => Status::empty().store(status),
                    None => {}
                }
            }
            abi::SUCCESS
        }
        Err(rc) => rc,
    }
}

/// The shared body of `MPI_Waitsome` and `MPI_Testsome`.
#[allow(clippy::too_many_arguments)]
unsafe fn some(
    call: Call,
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
    wait: bool,
    direct: impl FnOnce() -> c_int,
) -> c_int {
    let live = |h: &mut [Request], out: &mut c_int, idx: *mut c_int, got: *mut Status| {
        let f = if wait { real::Waitsome } else { real::Testsome };
        // SAFETY: the application's requests (or their stand-ins), an index and a status each.
        unsafe { f(h.len() as c_int, h.as_mut_ptr(), out, idx, got) }
    };
    // SAFETY: forwarded.
    unsafe {
        some_via(
            call, incount, requests, outcount, indices, statuses, direct, live, true,
        )
    }
}

/// [`some`] reaching MPI through `live` (`MPI_Waitsome`'s or `MPI_Testsome`'s arguments but the
/// count), as [`single_via`] says.
///
/// # Safety
/// The MPI function's contract; `live` and `direct` complete some of the `incount` requests.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn some_via(
    call: Call,
    incount: c_int,
    requests: *mut Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut Status,
    direct: impl FnOnce() -> c_int,
    live: impl FnOnce(&mut [Request], &mut c_int, *mut c_int, *mut Status) -> c_int,
    counts: bool,
) -> c_int {
    let n = incount.max(0) as usize;
    // SAFETY: forwarded; `incount` handles.
    let done = unsafe {
        complete(
            call,
            requests,
            n,
            direct,
            |h, st| {
                let mut out: c_int = 0;
                let mut idx = vec![0 as c_int; h.len()];
                let mut got = vec![Status::zeroed(); h.len()];
                let rc = live(h, &mut out, idx.as_mut_ptr(), got.as_mut_ptr());
                let k = if out == abi::UNDEFINED {
                    0
                } else {
                    out.max(0) as usize
                };
                let mut completed = Vec::with_capacity(k);
                for j in 0..k {
                    if let Some(i) = usize::try_from(idx[j]).ok().filter(|&i| i < st.len()) {
                        st[i] = got[j];
                        completed.push(i);
                    }
                }
                (
                    rc,
                    Outcome {
                        result: out,
                        index: 0,
                        completed,
                    },
                )
            },
            counts,
        )
    };
    match done {
        Ok((outcome, st)) => {
            // SAFETY: the application's out-parameters: `incount` indices and statuses.
            unsafe {
                *outcount = outcome.result;
                for (j, &i) in outcome.completed.iter().enumerate() {
                    *indices.add(j) = i as c_int;
                }
                store_all(statuses, outcome.completed.iter().map(|&i| st[i]));
            }
            abi::SUCCESS
        }
        Err(rc) => rc,
    }
}

macro_rules! completions {
    ($($fn:ident => $call:ident($($a:ident : $t:ty),*) via $body:ident($($arg:expr),*);)*) => {$(
        /// The wrapper of the MPI completion call of this name.
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn($($a: $t),*) -> c_int {
            // SAFETY: forwarded.
            unsafe { $body(Call::$call, $($arg,)* || real::$call($($a),*)) }
        }
    )*};
}

completions! {
    wait => Wait(request: *mut Request, status: *mut Status) via single(request, None, status);
    test => Test(request: *mut Request, flag: *mut c_int, status: *mut Status) via single(request, Some(flag), status);
    waitall => Waitall(count: c_int, requests: *mut Request, statuses: *mut Status) via all(count, requests, None, statuses);
    testall => Testall(count: c_int, requests: *mut Request, flag: *mut c_int, statuses: *mut Status) via all(count, requests, Some(flag), statuses);
    waitany => Waitany(count: c_int, requests: *mut Request, index: *mut c_int, status: *mut Status) via any(count, requests, index, None, status);
    testany => Testany(count: c_int, requests: *mut Request, index: *mut c_int, flag: *mut c_int, status: *mut Status) via any(count, requests, index, Some(flag), status);
    waitsome => Waitsome(incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status) via some(incount, requests, outcount, indices, statuses, true);
    testsome => Testsome(incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status) via some(incount, requests, outcount, indices, statuses, false);
}

/// `MPI_Request_free`: the request completes unseen, so a freed receive or collective cannot
/// be replayed (the log is marked); a freed send is an event. A persistent request freed while
/// a CD logs stays allocated in MPI (only the application's handle is nulled): a replay of the
/// call that made it hands out the same handle again, which must still be valid. Such requests
/// are held by `comm` until no log can replay a call naming them (see its module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_free(request: *mut Request) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header::plain(Call::Request_free, world);
    let null = abi::predefined().request_null;
    crate::comm::release_ready();
    let route = engine::route(Call::Request_free);
    let counted = engine::counted(&route) && traffic::tracking();
    match route {
        Route::Direct => {
            // SAFETY: the application's handle.
            let handle = unsafe { *request };
            engine::unregister_persistent(handle);
            if counted && traffic::orphan(handle, traffic::is_persistent(handle), false) {
                // pending: kept in MPI until the next check has seen it complete
                // SAFETY: the application's handle, nulled as MPI would.
                unsafe { request.write(null) };
                return abi::SUCCESS;
            }
            traffic::freed_persistent(handle);
            // SAFETY: forwarded.
            unsafe { real::Request_free(request) }
        }
        Route::Record(guard) => {
            // SAFETY: the application's handle.
            let handle = unsafe { *request };
            let tracked = engine::untrack(handle);
            if tracked
                .as_ref()
                .is_some_and(|t| !matches!(t.delivery, Delivery::Nothing))
            {
                let _ = cd_core::log_mark_unreplayable("MPI_Request_free of a receive request");
            }
            let persistent = engine::is_persistent(handle);
            let rc = if persistent || (counted && traffic::orphan(handle, false, false)) {
                if persistent && counted {
                    traffic::orphan(handle, true, true);
                } else if persistent {
                    crate::comm::hold(crate::comm::Held::Request(handle));
                }
                // SAFETY: the application's handle, nulled as MPI would.
                unsafe { request.write(null) };
                abi::SUCCESS
            } else {
                // SAFETY: forwarded.
                unsafe { real::Request_free(request) }
            };
            if rc == abi::SUCCESS {
                let mut w = Writer::new(&header);
                w.u64(tracked.map_or(0, |t| t.seq));
                // SAFETY: no pieces.
                unsafe { engine::log_record(&guard, &w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, world) {
                return code;
            }
            if reader.u64().is_err() {
                return engine::corrupt(Call::Request_free, world);
            }
            // SAFETY: the application's handle: a virtual request is completed and freed.
            unsafe {
                engine::free_virtual(*request);
                request.write(null);
            }
            abi::SUCCESS
        }
    }
}

/// `MPI_Start`: recorded, the start gets a post number and is tracked like a nonblocking
/// call; replayed, the persistent request's completion comes from the log.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn start(request: *mut Request) -> c_int {
    // SAFETY: forwarded; one handle.
    unsafe { start_via(Call::Start, 1, request, || real::Start(request), true) }
}

/// `MPI_Startall`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn startall(count: c_int, requests: *mut Request) -> c_int {
    // SAFETY: forwarded; `count` handles.
    unsafe {
        start_via(
            Call::Startall,
            count,
            requests,
            || real::Startall(count, requests),
            true,
        )
    }
}

/// The shared body of `MPI_Start` and `MPI_Startall` (made as `call`), with `run` starting the
/// `count` requests at `requests`; their messages are counted here unless `counts` is false
/// (then `run` counts them: in-job recovery's activations, `crate::recovery`).
///
/// # Safety
/// `requests` must hold `count` handles.
pub(crate) unsafe fn start_via(
    call: Call,
    count: c_int,
    requests: *mut Request,
    run: impl FnOnce() -> c_int,
    counts: bool,
) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header {
        count: count.into(),
        ..Header::plain(call, world)
    };
    let route = engine::route(call);
    let counted = counts && engine::counted(&route);
    if let (Route::Direct, false) = (&route, counted) {
        return run();
    }
    let n = count.max(0) as usize;
    // SAFETY: the caller's contract.
    let handles: Vec<Request> = (0..n).map(|i| unsafe { *requests.add(i) }).collect();
    if counted {
        // a persistent request keeps its handle: counted once MPI started them all
        let rc = start_routed(route, header, &handles, run);
        if rc == abi::SUCCESS {
            for &handle in &handles {
                traffic::started(handle);
            }
        }
        return rc;
    }
    start_routed(route, header, &handles, run)
}

/// [`start_via`] once routed.
fn start_routed(
    route: Route,
    header: Header,
    handles: &[Request],
    run: impl FnOnce() -> c_int,
) -> c_int {
    let (call, world) = (header.call, abi::predefined().comm_world);
    match route {
        Route::Direct => run(),
        Route::Record(guard) => {
            let rc = run();
            if rc == abi::SUCCESS {
                let mut w = Writer::new(&header);
                for &handle in handles {
                    let seq = engine::next_seq();
                    let delivery = engine::persistent_delivery(handle).unwrap_or_else(|| {
                        // made beyond INT_MAX (see `large`), or on another thread
                        let why = traffic::start_refusal(handle)
                            .unwrap_or("MPI_Start of a persistent request made on another thread");
                        let _ = cd_core::log_mark_unreplayable(why);
                        Delivery::Nothing
                    });
                    engine::track(handle, engine::Tracked::new(seq, delivery, guard.cx()));
                    w.u64(seq);
                }
                // SAFETY: no pieces.
                unsafe { engine::log_record(&guard, &w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, world) {
                return code;
            }
            for &handle in handles {
                match reader.u64() {
                    Ok(seq) => engine::virtual_start(seq, handle),
                    Err(_) => return engine::corrupt(call, world),
                }
            }
            abi::SUCCESS
        }
    }
}

/// `MPI_Request_get_status`: flag and status are logged and replayed.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_get_status(
    request: Request,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header::plain(Call::Request_get_status, world);
    // SAFETY: forwarded (a virtual request bound after a replay asks its live stand-in).
    unsafe {
        crate::p2p::probing(
            header,
            world,
            Some(flag),
            None,
            status,
            |f, _, st| real::Request_get_status(engine::live_of(request), f, st),
            || real::Request_get_status(request, flag, status),
        )
    }
}

/// `MPI_Cancel`: an event; re-executed, it has no effect (the logged completion decides).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn cancel(request: *mut Request) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header::plain(Call::Cancel, world);
    match engine::route(Call::Cancel) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Cancel(request) },
        Route::Record(guard) => {
            // SAFETY: the application's handle.
            let mut inner = engine::live_of(unsafe { *request });
            // SAFETY: forwarded.
            let rc = unsafe { real::Cancel(&mut inner) };
            if rc == abi::SUCCESS {
                // SAFETY: no pieces.
                unsafe { engine::log_record(&guard, &Writer::new(&header)) };
            }
            rc
        }
        Route::Replay(_guard, reader) => match engine::expect(&reader, &header, world) {
            Ok(()) => abi::SUCCESS,
            Err(code) => code,
        },
    }
}
