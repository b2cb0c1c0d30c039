//! `MPI_Reduce`, `MPI_Gather` and `MPI_Scatter` in a ULFM job that contains losses: run so
//! that every rank holds the whole result (`MPI_Allreduce`, `MPI_Allgather`, and a broadcast of
//! the scattered buffer; see [`super::allform`]).
//!
//! A rooted collective's result lives at its root alone (a scatter's, in pieces). If the root
//! is lost, its replacement re-executes the call, and no survivor could serve it the result.
//! Run as the all-form, a rank that does not need the result keeps it in a scratch buffer,
//! which the journal keeps. That costs an all-form's traffic instead of a rooted one's, in
//! such jobs only. `MPI_IN_PLACE` at the root is turned into an explicit buffer.

use super::allform::{all_form, block_at, copy_typed, transformed, Scratch};
use super::calls;
use crate::abi::{self, Comm, Datatype, Op};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// What a rank runs a rooted collective's all-form with: its input, where the whole result
/// goes (the caller's buffer at the root, else scratch), and the runtime's memory behind them
/// (scratch, and an explicit copy of the root's input given in place), which the call uses
/// until it completes (the nonblocking forms hold it: `super::held`).
pub(super) struct Form {
    pub(super) send: *const c_void,
    pub(super) result: *mut c_void,
    pub(super) buffers: Vec<Scratch>,
}

/// `MPI_Reduce`'s form at this rank (the root or not): `count` of `datatype` in and out.
///
/// # Safety
/// At the root in place, `recvbuf` holds the input (the MPI function's contract).
pub(super) unsafe fn reduce_form(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    at_root: bool,
) -> Form {
    // the root's input in place becomes an explicit one: every rank passes one to the all-form
    // SAFETY: the caller's contract.
    let mut input = (at_root && sendbuf.addr() == abi::IN_PLACE)
        .then(|| unsafe { Scratch::copy_of(recvbuf, count, datatype) });
    let send = input.as_mut().map_or(sendbuf, |s| s.buf().cast_const());
    let mut scratch = (!at_root).then(|| Scratch::new(count, datatype));
    let result = scratch.as_mut().map_or(recvbuf, Scratch::buf);
    Form {
        send,
        result,
        buffers: input.into_iter().chain(scratch).collect(),
    }
}

/// `MPI_Gather`'s form at this rank, with the send side's count and datatype and the result's
/// block (per rank) and datatype: the root's own block in place is its input.
pub(super) struct GatherForm {
    pub(super) form: Form,
    pub(super) sendcount: c_int,
    pub(super) sendtype: Datatype,
    pub(super) block: c_int,
    pub(super) datatype: Datatype,
}

/// [`GatherForm`] for `size` ranks.
///
/// # Safety
/// At the root in place, its block of `recvbuf` holds the input (the MPI function's contract).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gather_form(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    size: c_int,
    at_root: bool,
) -> GatherForm {
    let mut input = (at_root && sendbuf.addr() == abi::IN_PLACE).then(|| {
        let own = block_at(recvbuf, recvcount, recvtype, root);
        // SAFETY: the root's block of its receive buffer (the caller's contract).
        unsafe { Scratch::copy_of(own, recvcount, recvtype) }
    });
    let (send, sendcount, sendtype) = match input.as_mut() {
        Some(copy) => (copy.buf().cast_const(), recvcount, recvtype),
        None => (sendbuf, sendcount, sendtype),
    };
    // off the root only the send side counts
    let (block, datatype) = if at_root {
        (recvcount, recvtype)
    } else {
        (sendcount, sendtype)
    };
    let mut scratch = (!at_root).then(|| Scratch::new(block.saturating_mul(size), datatype));
    let result = scratch.as_mut().map_or(recvbuf, Scratch::buf);
    GatherForm {
        form: Form {
            send,
            result,
            buffers: input.into_iter().chain(scratch).collect(),
        },
        sendcount,
        sendtype,
        block,
        datatype,
    }
}

/// `MPI_Scatter`'s whole buffer at this rank (the root's copy of its send buffer, else room for
/// every block): `count` of `datatype` in blocks of `block`.
pub(super) struct ScatterForm {
    pub(super) whole: Scratch,
    pub(super) block: c_int,
    pub(super) datatype: Datatype,
    pub(super) count: c_int,
}

/// [`ScatterForm`] for `size` ranks.
///
/// # Safety
/// At the root, `sendbuf` holds `size` blocks (the MPI function's contract).
pub(super) unsafe fn scatter_form(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvcount: c_int,
    recvtype: Datatype,
    size: c_int,
    at_root: bool,
) -> ScatterForm {
    let (block, datatype) = if at_root {
        (sendcount, sendtype)
    } else {
        (recvcount, recvtype)
    };
    let count = block.saturating_mul(size);
    let whole = if at_root {
        // SAFETY: the caller's contract.
        unsafe { Scratch::copy_of(sendbuf, count, datatype) }
    } else {
        Scratch::new(count, datatype)
    };
    ScatterForm {
        whole,
        block,
        datatype,
        count,
    }
}

/// `MPI_Reduce`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    root: c_int,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe { crate::coll::reduce(sendbuf, recvbuf, count, datatype, op, root, comm) };
    }
    let chan = calls::covers(comm);
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract. (`form` owns the memory until the call returns.)
    let form = unsafe { reduce_form(sendbuf, recvbuf, count, datatype, at_root) };
    let (send, result) = (form.send, form.result);
    // SAFETY: `result` holds `count` of `datatype` (the caller's at the root, else scratch).
    unsafe {
        all_form(
            Call::Reduce,
            chan,
            result,
            count,
            datatype,
            false,
            |c| real::Allreduce(send, result, count, datatype, op, c),
            |live, counts| {
                crate::coll::via::allreduce(send, result, count, datatype, op, comm, live, counts)
            },
            comm,
        )
    }
}

/// `MPI_Gather`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::gather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    let chan = calls::covers(comm);
    let size = safe::comm_size(comm);
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract. (`g` owns the memory until the call returns.)
    let g = unsafe {
        gather_form(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, size, at_root,
        )
    };
    let (send, result) = (g.form.send, g.form.result);
    let (scount, stype, block, datatype) = (g.sendcount, g.sendtype, g.block, g.datatype);
    // SAFETY: `result` holds `size` blocks of `block` of `datatype`.
    unsafe {
        all_form(
            Call::Gather,
            chan,
            result,
            block.saturating_mul(size),
            datatype,
            false,
            |c| real::Allgather(send, scount, stype, result, block, datatype, c),
            |live, counts| {
                crate::coll::via::allgather(
                    send, scount, stype, result, block, datatype, comm, live, counts,
                )
            },
            comm,
        )
    }
}

/// `MPI_Scatter`, as a broadcast of the root's whole buffer, each rank then taking its block.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::scatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    let chan = calls::covers(comm);
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
    // SAFETY: `buf` holds `count` of `datatype`; at the root it is the input.
    let rc = unsafe {
        all_form(
            Call::Scatter,
            chan,
            buf,
            count,
            datatype,
            at_root,
            |c| real::Bcast(buf, count, datatype, root, c),
            |live, counts| crate::coll::via::bcast(buf, count, datatype, root, comm, live, counts),
            comm,
        )
    };
    if rc != abi::SUCCESS || recvbuf.addr() == abi::IN_PLACE {
        return rc;
    }
    let mine = block_at(buf, block, datatype, rank);
    // SAFETY: this rank's block of the whole buffer, into the caller's receive buffer.
    unsafe { copy_typed(mine, block, datatype, recvbuf, recvcount, recvtype) }
}
