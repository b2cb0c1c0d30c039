//! The nonblocking collectives whose result differs by rank, in a ULFM job that contains
//! losses: run as nonblocking all-forms, like their blocking forms ([`super::rooted`],
//! [`super::reduced`], [`super::spread`]), so that any survivor can serve a replacement the
//! whole result.
//!
//! - `MPI_Ireduce` and `MPI_Igather`: an `MPI_Iallreduce` and an `MPI_Iallgather` (the root's
//!   result lands in its buffer).
//! - `MPI_Iscatter`: an `MPI_Ibcast` of the root's whole buffer, each rank then taking its
//!   block.
//! - `MPI_Ialltoall`: an `MPI_Iallgather` of the send buffers, each rank then taking its
//!   blocks.
//! - `MPI_Iscan` and `MPI_Iexscan`: an `MPI_Iallgather` of the contributions, each rank then
//!   folding them in rank order.
//! - `MPI_Ireduce_scatter_block` and `MPI_Ireduce_scatter`: an `MPI_Iallreduce` of the whole
//!   vector, each rank then taking its block.
//! - `MPI_Iallgatherv` (its result is the same everywhere, laid out each rank's way): the
//!   blocks one after another, each rank then putting them in place.
//!
//! The whole result goes to scratch where the rank does not keep it, and an input given in
//! place that the all-form cannot read there is copied; "then taking" is the request's finish,
//! run when it completes. The request holds both ([`super::held`]) until then. Each is posted
//! like the nonblocking collectives of [`super::nonblocking`] when recovery takes the call (a
//! repair serves or reposts it), else through the ordinary handler.

use super::allform::{block_at, copy_typed, element_at, transformed, Scratch};
use super::calls;
use super::held::{self, Buffers, Finish, Held};
use super::nonblocking::post;
use super::reduced::{fold, input, own_block, scanned};
use super::requests::Kind;
use super::rooted::{gather_form, reduce_form, scatter_form, ScatterForm};
use super::spread::{allgatherv_form, alltoall_blocks, alltoall_form, unpack_blocks};
use super::spread::{AllgathervForm, AlltoallForm};
use crate::abi::{self, Comm, Datatype, Op, Request};
use crate::pmpi::{safe, Call};
use crate::stats;
use std::ffi::{c_int, c_void};

/// `MPI_Ireduce`: in a ULFM job, an `MPI_Iallreduce` (see [`super::rooted`]'s `MPI_Reduce`),
/// its memory held until the request completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)
        };
    }
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract.
    let form = unsafe { reduce_form(sendbuf, recvbuf, count, datatype, at_root) };
    let (send, result) = (form.send, form.result);
    let kind = Kind::Allreduce {
        sendbuf: send.expose_provenance(),
        op,
    };
    // SAFETY: `send` and `result` hold `count` of `datatype` (the caller's, or `form`'s).
    unsafe {
        post_all_form(
            Call::Ireduce,
            comm,
            kind,
            (result, count, datatype),
            false,
            request,
            Held::new(form.buffers, None),
            |r| crate::coll::iallreduce(send, result, count, datatype, op, comm, r),
            |live| {
                let (s, r) = (sendbuf, recvbuf);
                crate::coll::via::ireduce(
                    s, r, count, datatype, op, root, comm, request, live, false,
                )
            },
        )
    }
}

/// `MPI_Igather`: in a ULFM job, an `MPI_Iallgather` (see [`super::rooted`]'s `MPI_Gather`),
/// its memory held until the request completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::igather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
    }
    let size = safe::comm_size(comm);
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract.
    let g = unsafe {
        gather_form(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, size, at_root,
        )
    };
    let (send, result) = (g.form.send, g.form.result);
    let (scount, stype, block, datatype) = (g.sendcount, g.sendtype, g.block, g.datatype);
    let kind = Kind::Allgather {
        sendbuf: send.expose_provenance(),
        sendcount: scount,
        sendtype: stype,
        recvcount: block,
    };
    // SAFETY: `result` holds `size` blocks of `block` of `datatype` (the caller's, or `g`'s).
    unsafe {
        post_all_form(
            Call::Igather,
            comm,
            kind,
            (result, block.saturating_mul(size), datatype),
            false,
            request,
            Held::new(g.form.buffers, None),
            |r| crate::coll::iallgather(send, scount, stype, result, block, datatype, comm, r),
            |live| {
                crate::coll::via::igather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    request, live, false,
                )
            },
        )
    }
}

/// `MPI_Iscatter`: in a ULFM job, an `MPI_Ibcast` of the root's whole buffer (a copy of it),
/// each rank then taking its block (see [`super::rooted`]'s `MPI_Scatter`).
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::iscatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
    }
    let size = safe::comm_size(comm);
    let rank = safe::comm_rank(comm);
    let at_root = rank == root;
    // SAFETY: the MPI function's contract.
    let ScatterForm {
        mut whole,
        block,
        datatype,
        count,
    } = unsafe {
        scatter_form(
            sendbuf, sendcount, sendtype, recvcount, recvtype, size, at_root,
        )
    };
    let buf = whole.buf();
    let mine = block_at(buf, block, datatype, rank);
    let finish = (recvbuf.addr() != abi::IN_PLACE).then(|| {
        // SAFETY: this rank's block of the whole buffer, into the caller's receive buffer.
        finish_with(mine, recvbuf, move |mine, to| unsafe {
            copy_typed(mine, block, datatype, to, recvcount, recvtype)
        })
    });
    // SAFETY: `buf` holds `count` of `datatype`; at the root it is the input.
    unsafe {
        post_all_form(
            Call::Iscatter,
            comm,
            Kind::Bcast { root },
            (buf, count, datatype),
            at_root,
            request,
            Held::new(vec![whole], finish),
            |r| crate::coll::ibcast(buf, count, datatype, root, comm, r),
            |live| {
                crate::coll::via::iscatter(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    request, live, false,
                )
            },
        )
    }
}

/// `MPI_Ialltoall`: in a ULFM job, an `MPI_Iallgather` of the send buffers, each rank then
/// taking its blocks (see [`super::spread`]'s `MPI_Alltoall`).
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ialltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    }
    let size = safe::comm_size(comm);
    let rank = safe::comm_rank(comm);
    let AlltoallForm {
        send,
        sendcount: scount,
        sendtype: stype,
        recvcount: rcount,
        total,
    } = alltoall_form(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, size,
    );
    let mut whole = Scratch::new(total, recvtype);
    let buf = whole.buf();
    // SAFETY: every rank's send buffer, into the caller's receive buffer of `size` blocks.
    let finish = finish_with(buf, recvbuf, move |all, to| unsafe {
        alltoall_blocks(all, to, recvcount, recvtype, size, rank)
    });
    let kind = Kind::Allgather {
        sendbuf: send.expose_provenance(),
        sendcount: scount,
        sendtype: stype,
        recvcount: rcount,
    };
    // SAFETY: `buf` holds every rank's send buffer.
    unsafe {
        post_all_form(
            Call::Ialltoall,
            comm,
            kind,
            (buf, total, recvtype),
            false,
            request,
            Held::new(vec![whole], Some(finish)),
            |r| crate::coll::iallgather(send, scount, stype, buf, rcount, recvtype, comm, r),
            |live| {
                crate::coll::via::ialltoall(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    live, false,
                )
            },
        )
    }
}

/// `MPI_Iscan` (`exclusive`: `MPI_Iexscan`), as an `MPI_Iallgather` of the contributions,
/// folded when it completes (see [`super::reduced`]).
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn iscan_form(
    call: Call,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
    request: *mut Request,
    logged: impl FnOnce(Posting<'_>) -> c_int,
) -> c_int {
    let total = count.saturating_mul(safe::comm_size(comm));
    let last = scanned(exclusive, safe::comm_rank(comm));
    let send = input(sendbuf, recvbuf);
    let mut all = Scratch::new(total, datatype);
    let buf = all.buf();
    // SAFETY: every rank's contribution, folded into the caller's receive buffer.
    let finish = finish_with(buf, recvbuf, move |all, to| unsafe {
        fold(all, count, datatype, op, last, to)
    });
    let kind = Kind::Allgather {
        sendbuf: send.expose_provenance(),
        sendcount: count,
        sendtype: datatype,
        recvcount: count,
    };
    // SAFETY: `buf` holds every rank's `count` of `datatype`.
    unsafe {
        post_all_form(
            call,
            comm,
            kind,
            (buf, total, datatype),
            false,
            request,
            Held::new(vec![all], Some(finish)),
            |r| crate::coll::iallgather(send, count, datatype, buf, count, datatype, comm, r),
            logged,
        )
    }
}

macro_rules! iscans {
    ($($fn:ident => $call:ident, $exclusive:expr;)*) => {$(
        #[doc = concat!("`MPI_", stringify!($call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(
            sendbuf: *const c_void,
            recvbuf: *mut c_void,
            count: c_int,
            datatype: Datatype,
            op: Op,
            comm: Comm,
            request: *mut Request,
        ) -> c_int {
            if !transformed(comm) {
                // SAFETY: forwarded.
                return unsafe {
                    crate::coll::$fn(sendbuf, recvbuf, count, datatype, op, comm, request)
                };
            }
            // SAFETY: forwarded.
            let logged = |live: Posting<'_>| unsafe {
                crate::coll::via::$fn(sendbuf, recvbuf, count, datatype, op, comm, request, live, false)
            };
            // SAFETY: forwarded.
            unsafe {
                iscan_form(
                    Call::$call, $exclusive, sendbuf, recvbuf, count, datatype, op, comm, request,
                    logged,
                )
            }
        }
    )*};
}

iscans! {
    iscan => Iscan, false;
    iexscan => Iexscan, true;
}

/// A nonblocking reduce-scatter as an `MPI_Iallreduce` of the whole vector (`total` of
/// `datatype` at the input), this rank taking its `count` from element `at` when it completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn ireduce_scatter_form(
    call: Call,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    total: c_int,
    at: c_int,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
    request: *mut Request,
    logged: impl FnOnce(Posting<'_>) -> c_int,
) -> c_int {
    let send = input(sendbuf, recvbuf);
    let mut whole = Scratch::new(total, datatype);
    let buf = whole.buf();
    let mine = element_at(buf, datatype, i64::from(at));
    // SAFETY: this rank's block of the whole vector, into the caller's receive buffer.
    let finish = finish_with(mine, recvbuf, move |mine, to| unsafe {
        copy_typed(mine, count, datatype, to, count, datatype)
    });
    let kind = Kind::Allreduce {
        sendbuf: send.expose_provenance(),
        op,
    };
    // SAFETY: `buf` holds `total` of `datatype`.
    unsafe {
        post_all_form(
            call,
            comm,
            kind,
            (buf, total, datatype),
            false,
            request,
            Held::new(vec![whole], Some(finish)),
            |r| crate::coll::iallreduce(send, buf, total, datatype, op, comm, r),
            logged,
        )
    }
}

/// `MPI_Ireduce_scatter_block`: in a ULFM job, an `MPI_Iallreduce` of the whole vector, each
/// rank then taking its block (see [`super::reduced`]).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ireduce_scatter_block(
                sendbuf, recvbuf, recvcount, datatype, op, comm, request,
            )
        };
    }
    let total = recvcount.saturating_mul(safe::comm_size(comm));
    let at = recvcount.saturating_mul(safe::comm_rank(comm));
    // SAFETY: forwarded.
    let logged = |live: Posting<'_>| unsafe {
        let (s, r) = (sendbuf, recvbuf);
        crate::coll::via::ireduce_scatter_block(
            s, r, recvcount, datatype, op, comm, request, live, false,
        )
    };
    // SAFETY: forwarded; the input holds a block per rank.
    unsafe {
        ireduce_scatter_form(
            Call::Ireduce_scatter_block,
            sendbuf,
            recvbuf,
            total,
            at,
            recvcount,
            datatype,
            op,
            comm,
            request,
            logged,
        )
    }
}

/// `MPI_Ireduce_scatter`: as `MPI_Ireduce_scatter_block`, with each rank's count.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request)
        };
    }
    // SAFETY: `recvcounts` has an entry per rank, the same on every rank.
    let Some((at, count, total)) = (unsafe { own_block(recvcounts, comm) }) else {
        return abi::ERR_COUNT;
    };
    // SAFETY: forwarded.
    let logged = |live: Posting<'_>| unsafe {
        let (s, r) = (sendbuf, recvbuf);
        crate::coll::via::ireduce_scatter(
            s, r, recvcounts, datatype, op, comm, request, live, false,
        )
    };
    // SAFETY: forwarded; the input holds every rank's block.
    unsafe {
        ireduce_scatter_form(
            Call::Ireduce_scatter,
            sendbuf,
            recvbuf,
            total,
            at,
            count,
            datatype,
            op,
            comm,
            request,
            logged,
        )
    }
}

/// `MPI_Iallgatherv`: its result is the same on every rank, but each lays the blocks out its
/// own way; as its blocking form ([`super::spread`]), the blocks are received one after another
/// into scratch (the journal's form), each rank putting them in place when it completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::iallgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            )
        };
    };
    // SAFETY: the MPI function's contract.
    let form = match unsafe {
        allgatherv_form(
            sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
        )
    } {
        Ok(form) => form,
        Err(rc) => return rc,
    };
    let AllgathervForm {
        counts,
        displs: own_displs,
        places,
        total,
        send,
        sendcount: scount,
        sendtype: stype,
    } = form;
    let mut whole = Scratch::new(total, recvtype);
    let buf = whole.buf();
    let kind = Kind::Allgatherv {
        sendbuf: send.expose_provenance(),
        sendcount: scount,
        sendtype: stype,
        counts: counts.as_ptr().expose_provenance(),
        places: places.as_ptr().expose_provenance(),
    };
    let (finish_places, finish_counts) = (places.clone(), counts.clone());
    // SAFETY: every block, to its place in the caller's receive buffer.
    let finish = finish_with(buf, recvbuf, move |all, to| unsafe {
        unpack_blocks(
            all,
            &finish_places,
            to,
            &own_displs,
            &finish_counts,
            recvtype,
        )
    });
    // SAFETY: `buf` holds every block one after another; the arrays `kind` names are held with
    // the request.
    let live = move |request| unsafe {
        post(
            Call::Iallgatherv,
            chan,
            kind,
            buf,
            total,
            recvtype,
            false,
            request,
            Held::with_arrays(vec![whole], vec![counts, places], Some(finish)),
        )
    };
    if !calls::logged() {
        return live(request);
    }
    // SAFETY: forwarded (see `post_all_form` on what the ordinary handler logs).
    unsafe {
        crate::coll::via::iallgatherv(
            sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            live, false,
        )
    }
}

/// The finish that makes this rank's result with `make(from, recvbuf)` once the request
/// completed: `from` is in the memory the request holds, `recvbuf` is the caller's until then
/// (the addresses travel exposed, as the request table is shared between threads).
fn finish_with(
    from: *const c_void,
    recvbuf: *mut c_void,
    make: impl FnOnce(*const c_void, *mut c_void) -> c_int + Send + 'static,
) -> Finish {
    let (from, to) = (from.expose_provenance(), recvbuf.expose_provenance());
    Box::new(move || {
        make(
            std::ptr::with_exposed_provenance(from),
            std::ptr::with_exposed_provenance_mut(to),
        )
    })
}

/// A nonblocking all-form's post, given the request to post into.
type Posting<'a> = Box<dyn FnOnce(*mut Request) -> c_int + 'a>;

/// Posts a nonblocking all-form `kind` (`call`), its whole result in `result` (where, how
/// many, of what), `reads_result` if it reads that buffer as its input, and what the request
/// holds ([`Held`]): through [`post`] when recovery takes the call (within `logged`, the
/// ordinary handler of the application's call, while a CD logs: [`calls::logged`]; it logs
/// the application's outputs, which the finish has made when the request completes), else
/// through the ordinary handler of the all-form (`ordinary`), what it holds kept by the
/// request's handle ([`held`]); every rank runs the all-form either way.
///
/// # Safety
/// As [`post`]; `ordinary` posts the same all-form, `logged` the application's call.
#[allow(clippy::too_many_arguments)]
unsafe fn post_all_form(
    call: Call,
    comm: Comm,
    kind: Kind,
    result: (*mut c_void, c_int, Datatype),
    reads_result: bool,
    request: *mut Request,
    holds: Buffers,
    ordinary: impl FnOnce(*mut Request) -> c_int,
    logged: impl FnOnce(Posting<'_>) -> c_int,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        stats::count(call);
        let rc = ordinary(request);
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the handle.
            held::hold(unsafe { *request }, holds);
        }
        return rc;
    };
    let (buf, count, datatype) = result;
    // SAFETY: the caller's contract; what it holds lives with the request's entry.
    let live = move |request| unsafe {
        post(
            call,
            chan,
            kind,
            buf,
            count,
            datatype,
            reads_result,
            request,
            holds,
        )
    };
    match calls::logged() {
        false => live(request),
        true => logged(Box::new(live)),
    }
}
