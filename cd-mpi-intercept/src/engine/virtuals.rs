//! Virtual requests: generalized requests handed out by a replay, completed from the log, and
//! bound to live requests (or completed with drained data) when the replay ends.

use super::tables::{
    persistent_delivery, track, Bound, Delivery, Drained, GreqState, Tracked, Virtual,
    VirtualHandle, STATE,
};
use crate::abi::{self, Request, Status};
use crate::pmpi::{real, CancelFn, FreeFn, QueryFn};
use crate::stats;
use std::ffi::{c_int, c_void};

unsafe extern "C" fn greq_query(extra: *mut c_void, status: *mut Status) -> c_int {
    // SAFETY: `extra` is the GreqState this module allocated for the request, alive until
    // greq_free; `status` is MPI's own status slot.
    unsafe {
        let state = &*extra.cast::<GreqState>();
        if !status.is_null() {
            status.write(state.status);
        }
    }
    abi::SUCCESS
}

unsafe extern "C" fn greq_free(extra: *mut c_void) -> c_int {
    // SAFETY: MPI calls free exactly once, with the pointer Grequest_start was given, which came
    // from Box::into_raw.
    drop(unsafe { Box::from_raw(extra.cast::<GreqState>()) });
    abi::SUCCESS
}

unsafe extern "C" fn greq_cancel(_extra: *mut c_void, _complete: c_int) -> c_int {
    abi::SUCCESS
}

/// Starts a generalized request that completes with `status`.
pub(super) fn start_greq(status: Status) -> Result<(Request, *mut GreqState), c_int> {
    let state = Box::into_raw(Box::new(GreqState { status }));
    let mut handle = abi::predefined().request_null;
    // SAFETY: valid callbacks and an extra_state they own.
    let rc = unsafe {
        real::Grequest_start(
            greq_query as QueryFn,
            greq_free as FreeFn,
            greq_cancel as CancelFn,
            state.cast(),
            &mut handle,
        )
    };
    if rc != abi::SUCCESS {
        // SAFETY: MPI did not take the state.
        drop(unsafe { Box::from_raw(state) });
        return Err(rc);
    }
    Ok((handle, state))
}

/// Writes to `request` a request of its own, already complete with an empty status (a
/// generalized request): what in-job recovery gives for a send it dropped or a collective it
/// served. Each such handle is distinct, as a CD that logs needs (it tracks requests by handle),
/// where a send to `MPI_PROC_NULL` may get a handle shared by all (Open MPI's).
///
/// # Safety
/// `request` is writable.
pub(crate) unsafe fn completed_request(request: *mut Request) -> c_int {
    match start_greq(Status::empty()) {
        Ok((handle, _)) => {
            // SAFETY: our own generalized request, handed to the caller complete.
            let rc = unsafe { real::Grequest_complete(handle) };
            // SAFETY: the caller's out-parameter.
            unsafe { request.write(handle) };
            rc
        }
        Err(rc) => rc,
    }
}

/// Hands out a virtual request for a posting call re-executed during a replay.
///
/// # Safety
/// `request` must be writable.
pub(crate) unsafe fn virtual_request(seq: u64, delivery: Delivery, request: *mut Request) -> c_int {
    discard_rewound(seq);
    let (handle, state) = match start_greq(Status::zeroed()) {
        Ok(started) => started,
        Err(rc) => return rc,
    };
    STATE.with(|s| {
        s.borrow_mut().virtuals.insert(
            handle,
            Virtual {
                seq,
                delivery,
                bound: Bound::Open,
                kind: VirtualHandle::Greq(state),
                drained: None,
            },
        )
    });
    // SAFETY: the caller's contract.
    unsafe { request.write(handle) };
    abi::SUCCESS
}

/// A replayed `MPI_Start` of the persistent `request`: its completion comes from the log.
pub(crate) fn virtual_start(seq: u64, request: Request) {
    let delivery = persistent_delivery(request).unwrap_or(Delivery::Nothing);
    if matches!(delivery, Delivery::Nothing) {
        stats::dropped();
    }
    discard_rewound(seq);
    STATE.with(|s| {
        s.borrow_mut().virtuals.insert(
            request,
            Virtual {
                seq,
                delivery,
                bound: Bound::Open,
                kind: VirtualHandle::Persistent,
                drained: None,
            },
        )
    });
}

/// Discards the virtual requests of post `seq` that a replay is about to hand out again: a
/// post number is handed out once per execution, so one still here was handed out by a
/// re-execution that a later `restore_cd` rewound before the application completed it (a
/// second fault before the first re-execution's replay was consumed, or before it completed
/// the requests that were in flight at the first). Left alone, it would be bound when the
/// replay ends like a request in flight at the fault: a receive posted for real a second
/// time, which takes a later message. Its generalized request (or a persistent request's
/// stand-in) is completed and freed, and data drained at the first restore that completed it
/// goes back for the request handed out now.
fn discard_rewound(seq: u64) {
    let rewound: Vec<(Request, Virtual)> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let handles: Vec<Request> = s
            .virtuals
            .iter()
            .filter(|(_, v)| v.seq == seq)
            .map(|(h, _)| *h)
            .collect();
        handles
            .into_iter()
            .filter_map(|h| s.virtuals.remove(&h).map(|v| (h, v)))
            .collect()
    });
    for (handle, v) in rewound {
        tracing::debug!(seq, "a rewound re-execution's request is handed out again");
        let ours = match (v.kind, v.bound) {
            (VirtualHandle::Greq(_), Bound::Done) => Some((handle, false)),
            (VirtualHandle::Greq(_), _) => Some((handle, true)),
            // a drained persistent receive's completed stand-in
            (VirtualHandle::Persistent, Bound::Live(standin)) => Some((standin, false)),
            (VirtualHandle::Persistent, _) => None,
        };
        if let Some((h, complete)) = ours {
            // SAFETY: a generalized request this module started and the application can no
            // longer complete (its handle was in the rewound state).
            unsafe { release_greq(h, !complete) };
        }
        if let Some(drained) = v.drained {
            STATE.with(|s| s.borrow_mut().drained.insert(seq, drained));
        }
    }
}

/// Completes and frees a virtual request with `status` (its data already delivered); a
/// persistent one is only forgotten (MPI completed its stand-in, if any).
pub(super) fn finish_virtual(handle: Request, status: &Status) {
    let v = STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
    if let Some(Virtual {
        bound,
        kind: VirtualHandle::Greq(state),
        ..
    }) = v
    {
        // SAFETY: `state` lives until greq_free, which the release triggers; the request was
        // taken out of the table, so nothing else completes or frees it.
        unsafe {
            (*state).status = *status;
            release_greq(handle, matches!(bound, Bound::Done));
        }
    }
}

/// Completes (unless it is `completed` already) and frees a generalized request this module
/// started; MPI's Wait then calls `greq_free`, which drops its state.
///
/// # Safety
/// `handle` must be a generalized request of [`start_greq`] that nothing else completes or
/// frees.
pub(super) unsafe fn release_greq(mut handle: Request, completed: bool) {
    // SAFETY: the caller's contract; the status is ignored.
    unsafe {
        if !completed {
            real::Grequest_complete(handle);
        }
        real::Wait(
            &mut handle,
            std::ptr::without_provenance_mut::<Status>(abi::STATUS_IGNORE),
        );
    }
}

/// The replay ended: binds every still-open virtual request, in posting order, in the thread
/// whose context is `cx`.
pub(super) fn replay_ended(cx: Option<cd_core::ThreadCx<'_>>) {
    let mut open: Vec<(u64, Request)> = STATE.with(|s| {
        s.borrow()
            .virtuals
            .iter()
            .filter(|(_, v)| matches!(v.bound, Bound::Open))
            .map(|(h, v)| (v.seq, *h))
            .collect()
    });
    open.sort_unstable_by_key(|&(seq, _)| seq);
    tracing::debug!(open = open.len(), "replay ended: going live");
    for (seq, handle) in open {
        bind(seq, handle, cx);
    }
    STATE.with(|s| s.borrow_mut().drained.clear());
}

/// Binds one virtual request left open by the replay: it was in flight at the fault. Data
/// drained at restore is delivered now; a receive cancelled at restore is posted again; a send
/// (or a persistent request started again) is the original, still live request.
fn bind(seq: u64, handle: Request, cx: Option<cd_core::ThreadCx<'_>>) {
    let (delivery, kind) = STATE.with(|s| {
        let s = s.borrow();
        let v = &s.virtuals[&handle];
        (v.delivery.clone(), v.kind)
    });
    let drained = STATE.with(|s| s.borrow_mut().drained.remove(&seq));
    let mut kept = None;
    let bound = match (&delivery, drained) {
        (
            Delivery::Receive { .. } | Delivery::Outputs(_),
            Some(
                whole @ Drained {
                    status,
                    data: Some(_),
                },
            ),
        ) => {
            let data = whole.data.as_deref().unwrap_or_default();
            for (piece, bytes) in delivery.pieces(&status).iter().zip(data) {
                let mut position = 0;
                // SAFETY: the re-executed call's buffer; the data was packed with its datatype.
                unsafe {
                    real::Unpack(
                        bytes.as_ptr().cast(),
                        bytes.len() as c_int,
                        &mut position,
                        piece.buf.cast_mut(),
                        piece.count,
                        piece.datatype,
                        piece.comm,
                    )
                };
            }
            match kind {
                VirtualHandle::Greq(state) => {
                    // SAFETY: our own generalized request, alive until MPI frees it.
                    unsafe {
                        (*state).status = status;
                        real::Grequest_complete(handle);
                    }
                    kept = Some(whole);
                    Bound::Done
                }
                VirtualHandle::Persistent => match start_greq(status) {
                    Ok((greq, _)) => {
                        // SAFETY: our own generalized request.
                        unsafe { real::Grequest_complete(greq) };
                        kept = Some(whole);
                        Bound::Live(greq)
                    }
                    Err(rc) => {
                        tracing::error!(rc, "no stand-in request for a drained persistent receive");
                        Bound::Done
                    }
                },
            }
        }
        (Delivery::Receive { dest, source, tag }, _) => {
            let mut inner = abi::predefined().request_null;
            let mut restarted = false;
            let rc = match kind {
                // SAFETY: the re-executed receive's own arguments (through recovery, which
                // counts it, where it covers it).
                VirtualHandle::Greq(_) => unsafe {
                    let (buf, count, datatype) = (dest.buf.cast_mut(), dest.count, dest.datatype);
                    let again = super::activations::receive(
                        buf, count, datatype, *source, *tag, dest.comm, &mut inner,
                    );
                    restarted = again.is_some();
                    again.unwrap_or_else(|| {
                        real::Irecv(buf, count, datatype, *source, *tag, dest.comm, &mut inner)
                    })
                },
                VirtualHandle::Persistent => {
                    inner = handle;
                    // SAFETY: the application's inactive persistent receive: started again as
                    // recovery last started it (which counts it), or for real.
                    match unsafe { super::activations::start(handle) } {
                        Some(rc) => {
                            restarted = true;
                            rc
                        }
                        None => unsafe { real::Start(&mut inner) },
                    }
                }
            };
            if rc == abi::SUCCESS {
                if crate::traffic::on() && *source != abi::PROC_NULL && !restarted {
                    // a receive posted for real again: pending until it completes
                    crate::traffic::receive_posted(inner, dest.comm);
                }
                track(inner, Tracked::new(seq, delivery.clone(), cx));
                if matches!(kind, VirtualHandle::Persistent) {
                    // Live again under its own handle: nothing stands in for it.
                    STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
                    return;
                }
                Bound::Live(inner)
            } else {
                tracing::error!(rc, "re-posting a receive after the replay failed");
                Bound::Done
            }
        }
        (Delivery::Outputs(_), _) => {
            tracing::error!(seq, "a collective in flight at the fault left no data");
            Bound::Done
        }
        (Delivery::Nothing, _) => {
            // The send was posted before the fault (and settled at restore, or still in
            // flight): the live request of the same post, still tracked, stands for it.
            let original = STATE.with(|s| {
                let s = s.borrow();
                s.live.iter().find(|(_, t)| t.seq == seq).map(|(h, _)| *h)
            });
            match (original, kind) {
                (_, VirtualHandle::Persistent) => {
                    STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
                    return;
                }
                (Some(inner), VirtualHandle::Greq(_)) => Bound::Live(inner),
                (None, VirtualHandle::Greq(_)) => {
                    // SAFETY: completing our own generalized request.
                    unsafe { real::Grequest_complete(handle) };
                    Bound::Done
                }
            }
        }
    };
    if matches!((bound, kind), (Bound::Done, VirtualHandle::Persistent)) {
        STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
        return;
    }
    STATE.with(|s| {
        if let Some(v) = s.borrow_mut().virtuals.get_mut(&handle) {
            v.bound = bound;
            v.drained = kept;
        }
    });
}

/// The live request standing for `handle` (itself unless it is a virtual request bound to one).
pub(crate) fn live_of(handle: Request) -> Request {
    STATE.with(
        |s| match s.borrow().virtuals.get(&handle).map(|v| v.bound) {
            Some(Bound::Live(inner)) => inner,
            _ => handle,
        },
    )
}

/// Frees a virtual request the application freed during a replay (no-op for other handles).
pub(crate) fn free_virtual(handle: Request) {
    let known = STATE.with(|s| s.borrow().virtuals.contains_key(&handle));
    if known {
        finish_virtual(handle, &Status::zeroed());
    }
}
