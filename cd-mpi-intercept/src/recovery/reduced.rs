//! `MPI_Scan`, `MPI_Exscan`, `MPI_Reduce_scatter_block` and `MPI_Reduce_scatter` in a ULFM job
//! that contains losses: reductions whose result differs between ranks, run as a collective
//! whose whole result every rank holds ([`super::allform`]), from which each rank then makes
//! its own.
//!
//! - `MPI_Reduce_scatter_block` and `MPI_Reduce_scatter` run as an `MPI_Allreduce` of the whole
//!   vector, each rank then copying its block: every rank receives the whole vector instead of
//!   its block.
//! - `MPI_Scan` and `MPI_Exscan` run as an `MPI_Allgather` of the contributions, each rank then
//!   folding those of the ranks up to its own (before it, for `MPI_Exscan`) with
//!   `MPI_Reduce_local`, in rank order: `x0 op (x1 op (... op xr))`, which is what MPI asks of
//!   an associative op, commutative or not. Every rank receives every contribution instead of
//!   a prefix, and applies up to `size - 1` ops itself. A floating-point sum may so differ in
//!   its last bits from the library's own scan (a job without recovery), never between the
//!   runs of a job with it, a replacement's included. `MPI_Exscan` leaves rank 0's receive
//!   buffer untouched.
//!
//! These costs are paid in ULFM jobs with recovery on only. With `MPI_IN_PLACE` the input is
//! the receive buffer, which the all-form reads; the result is written there once it completed.

use super::allform::{all_form, block_at, copy_typed, element_at, entries, packed_displs};
use super::allform::{transformed, Scratch};
use super::calls;
use crate::abi::{self, Comm, Datatype, Op};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// The input of a call whose `sendbuf` may be `MPI_IN_PLACE` (then it is `recvbuf`).
pub(super) fn input(sendbuf: *const c_void, recvbuf: *mut c_void) -> *const c_void {
    if sendbuf.addr() == abi::IN_PLACE {
        recvbuf.cast_const()
    } else {
        sendbuf
    }
}

/// `MPI_Scan` (`exclusive`: `MPI_Exscan`), as an allgather of the contributions folded here.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn scan_form(
    call: Call,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    let chan = calls::covers(comm);
    let rank = safe::comm_rank(comm);
    let total = count.saturating_mul(safe::comm_size(comm));
    let send = input(sendbuf, recvbuf);
    let mut all = Scratch::new(total, datatype);
    let buf = all.buf();
    // SAFETY: `buf` holds every rank's `count` of `datatype`.
    let rc = unsafe {
        all_form(
            call,
            chan,
            buf,
            total,
            datatype,
            false,
            |c| real::Allgather(send, count, datatype, buf, count, datatype, c),
            |live, counts| {
                crate::coll::via::allgather(
                    send, count, datatype, buf, count, datatype, comm, live, counts,
                )
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: `buf` holds every rank's contribution; the caller's receive buffer holds `count`.
    unsafe { fold(buf, count, datatype, op, scanned(exclusive, rank), recvbuf) }
}

/// The last rank whose contribution a scan at `rank` folds (`exclusive`: `MPI_Exscan`'s; -1:
/// none).
pub(super) fn scanned(exclusive: bool, rank: c_int) -> c_int {
    if exclusive {
        rank - 1
    } else {
        rank
    }
}

/// A scan's result from every rank's contribution (`count` of `datatype` each, in rank order
/// at `all`): the contributions of ranks 0 to `last` folded with `op` into `recvbuf`, as
/// `x0 op (x1 op (... op x_last))` (untouched when `last` is -1).
///
/// # Safety
/// `all` holds at least `last + 1` contributions; `recvbuf` holds `count` of `datatype`.
pub(super) unsafe fn fold(
    all: *const c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    last: c_int,
    recvbuf: *mut c_void,
) -> c_int {
    if last < 0 {
        return abi::SUCCESS;
    }
    let block = |k| block_at(all, count, datatype, k);
    // SAFETY: the last contribution into the caller's receive buffer, which holds `count`.
    let rc = unsafe { copy_typed(block(last), count, datatype, recvbuf, count, datatype) };
    if rc != abi::SUCCESS {
        return rc;
    }
    for k in (0..last).rev() {
        // SAFETY: `recvbuf = x_k op recvbuf`, both `count` of `datatype`.
        let rc = unsafe { real::Reduce_local(block(k), recvbuf, count, datatype, op) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Scan`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe { crate::coll::scan(sendbuf, recvbuf, count, datatype, op, comm) };
    }
    // SAFETY: forwarded.
    unsafe {
        scan_form(
            Call::Scan,
            false,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
        )
    }
}

/// `MPI_Exscan`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe { crate::coll::exscan(sendbuf, recvbuf, count, datatype, op, comm) };
    }
    // SAFETY: forwarded.
    unsafe {
        scan_form(
            Call::Exscan,
            true,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
        )
    }
}

/// A reduce-scatter as an allreduce of the whole vector (`total` of `datatype` at the input),
/// this rank then copying its `count` from element `at` into `recvbuf`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_form(
    call: Call,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    total: c_int,
    at: c_int,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    let chan = calls::covers(comm);
    let send = input(sendbuf, recvbuf);
    let mut whole = Scratch::new(total, datatype);
    let buf = whole.buf();
    // SAFETY: `buf` holds `total` of `datatype`.
    let rc = unsafe {
        all_form(
            call,
            chan,
            buf,
            total,
            datatype,
            false,
            |c| real::Allreduce(send, buf, total, datatype, op, c),
            |live, counts| {
                crate::coll::via::allreduce(send, buf, total, datatype, op, comm, live, counts)
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    let mine = element_at(buf, datatype, i64::from(at));
    // SAFETY: this rank's block of the whole vector, into the caller's receive buffer.
    unsafe { copy_typed(mine, count, datatype, recvbuf, count, datatype) }
}

/// `MPI_Reduce_scatter_block`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm)
        };
    }
    let total = recvcount.saturating_mul(safe::comm_size(comm));
    let at = recvcount.saturating_mul(safe::comm_rank(comm));
    // SAFETY: forwarded; the input holds a block per rank.
    unsafe {
        scatter_form(
            Call::Reduce_scatter_block,
            sendbuf,
            recvbuf,
            total,
            at,
            recvcount,
            datatype,
            op,
            comm,
        )
    }
}

/// `MPI_Reduce_scatter`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm)
        };
    }
    // SAFETY: `recvcounts` has an entry per rank, the same on every rank.
    let Some((at, count, total)) = (unsafe { own_block(recvcounts, comm) }) else {
        return abi::ERR_COUNT;
    };
    // SAFETY: forwarded; the input holds every rank's block.
    unsafe {
        scatter_form(
            Call::Reduce_scatter,
            sendbuf,
            recvbuf,
            total,
            at,
            count,
            datatype,
            op,
            comm,
        )
    }
}

/// A reduce-scatter's blocks laid one after another, `recvcounts` (one per rank of `comm`)
/// elements each: where this rank's starts, its count, and the total; `None` when they do not
/// fit an `int` or `recvcounts` lacks this rank's.
///
/// # Safety
/// `recvcounts` holds an entry per rank (the MPI call's contract).
pub(super) unsafe fn own_block(
    recvcounts: *const c_int,
    comm: Comm,
) -> Option<(c_int, c_int, c_int)> {
    // SAFETY: the caller's contract.
    let counts = unsafe { entries(recvcounts, safe::comm_size(comm)) };
    let (displs, total) = packed_displs(counts)?;
    let rank = safe::comm_rank(comm) as usize;
    Some((*displs.get(rank)?, *counts.get(rank)?, total))
}
