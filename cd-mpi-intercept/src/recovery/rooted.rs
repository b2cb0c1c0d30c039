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
    // the root's input in place becomes an explicit one: every rank passes one to the all-form
    // SAFETY: at the root in place, `recvbuf` holds the input.
    let mut input = (at_root && sendbuf.addr() == abi::IN_PLACE)
        .then(|| unsafe { Scratch::copy_of(recvbuf, count, datatype) });
    let send = input.as_mut().map_or(sendbuf, |s| s.buf().cast_const());
    let mut scratch = (!at_root).then(|| Scratch::new(count, datatype));
    let result = scratch.as_mut().map_or(recvbuf, Scratch::buf);
    // SAFETY: `result` holds `count` of `datatype` (the caller's at the root, else scratch).
    unsafe {
        all_form(
            Call::Reduce,
            chan,
            result,
            count,
            datatype,
            false,
            |c| match chan {
                Some(_) => real::Allreduce(send, result, count, datatype, op, c),
                None => crate::coll::allreduce(send, result, count, datatype, op, c),
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
    // at the root: its own block is its input in place; off it only the send side counts
    let (_input, send, scount, stype) = if at_root && sendbuf.addr() == abi::IN_PLACE {
        let own = block_at(recvbuf, recvcount, recvtype, root);
        // SAFETY: the root's block of its receive buffer.
        let mut copy = unsafe { Scratch::copy_of(own, recvcount, recvtype) };
        let buf = copy.buf().cast_const();
        (Some(copy), buf, recvcount, recvtype)
    } else {
        (None, sendbuf, sendcount, sendtype)
    };
    let (block, datatype) = if at_root {
        (recvcount, recvtype)
    } else {
        (sendcount, sendtype)
    };
    let count = block.saturating_mul(size);
    let mut scratch = (!at_root).then(|| Scratch::new(count, datatype));
    let result = scratch.as_mut().map_or(recvbuf, Scratch::buf);
    // SAFETY: `result` holds `size` blocks of `block` of `datatype`.
    unsafe {
        all_form(
            Call::Gather,
            chan,
            result,
            count,
            datatype,
            false,
            |c| match chan {
                Some(_) => real::Allgather(send, scount, stype, result, block, datatype, c),
                None => crate::coll::allgather(send, scount, stype, result, block, datatype, c),
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
    // the whole buffer: the root's copy of its send buffer, else room for every block
    let (block, datatype) = if at_root {
        (sendcount, sendtype)
    } else {
        (recvcount, recvtype)
    };
    let count = block.saturating_mul(size);
    let mut whole = if at_root {
        // SAFETY: the root's send buffer holds `size` blocks.
        unsafe { Scratch::copy_of(sendbuf, count, datatype) }
    } else {
        Scratch::new(count, datatype)
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
            |c| match chan {
                Some(_) => real::Bcast(buf, count, datatype, root, c),
                None => crate::coll::bcast(buf, count, datatype, root, c),
            },
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
