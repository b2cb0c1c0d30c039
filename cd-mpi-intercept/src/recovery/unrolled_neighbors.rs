//! The nonblocking neighbourhood collectives (`MPI_Ineighbor_allgather`, `_allgatherv`,
//! `_alltoall`, `_alltoallv`, `_alltoallw`) in a ULFM job that contains losses, unrolled like
//! the nonblocking v-forms ([`super::unrolled`]): one message per edge, on the communicator's
//! twin, under one request. Each rank knows its own edges, so nothing is exchanged first; an
//! edge to `MPI_PROC_NULL` (a Cartesian border) moves nothing, as MPI says.
//!
//! The messages pair as MPI pairs the edges ([`super::neighbors`]' module docs), through the
//! order messages of one tag match in: each rank posts its receives in the order of its
//! in-edges, and its sends to each rank in the order of the slots they land in there. In a
//! Cartesian topology the block a rank sends one way along a dimension is the one its
//! neighbour receives from the other way (a neighbour that appears twice, in a periodic
//! dimension of two ranks, gets each block in its place); in a graph, the `k`th edge from one
//! rank to another pairs with the `k`th in-edge the other has from it.

use super::allform::{block_at, blocks, copy_typed, typed_blocks, Block};
use super::neighbors::Neighbours;
use super::unrolled::{unrolled_on, Unrolled};
use crate::abi::{self, Comm, Datatype, Request};
use crate::pmpi::{safe, Call};
use std::ffi::{c_int, c_void};

/// The twin and the neighbours of `comm` where these calls are unrolled on it.
fn unrolled_with(comm: Comm) -> Option<(Comm, Neighbours)> {
    let twin = unrolled_on(comm)?;
    Some((twin, Neighbours::of(comm)?))
}

/// `send`, a block per out-edge, to the out-neighbours, and `recv`, a block per in-edge, from
/// the in-neighbours, paired as the module docs say, on `comm`'s twin.
///
/// # Safety
/// The blocks are the caller's (the MPI call's contract); `request` is writable.
unsafe fn exchange(
    call: Call,
    near: &Neighbours,
    send: &[Block],
    recv: &[Block],
    (comm, twin): (Comm, Comm),
    request: *mut Request,
) -> c_int {
    let me = safe::comm_rank(comm);
    let mut unrolled = Unrolled::default();
    // the slot a block sent from `slot` lands in at its receiver
    let paired = |slot: usize| match near.cartesian {
        // the other direction of the same dimension
        true => slot ^ 1,
        // the in-edges from one rank in order (the k-th edge to it is its k-th from here)
        false => slot,
    };
    // edges to itself (a periodic dimension of one rank, a graph's loop): copied, paired alike
    let mut loops = (0..near.destinations.len()).filter(|&j| near.destinations[j] == me);
    for (i, (&source, &block)) in near.sources.iter().zip(recv).enumerate() {
        if source != me {
            unrolled.add(false, block, source);
            continue;
        }
        let from = match near.cartesian {
            true => Some(paired(i)),
            false => loops.next(),
        };
        let Some(&(at, count, datatype)) = from.and_then(|j| send.get(j)) else {
            continue;
        };
        let (to, count2, recvtype) = block;
        // SAFETY: the caller's blocks.
        let rc = unsafe { copy_typed(at, count, datatype, to, count2, recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    // to each rank in the order of the slots they land in there, which it receives in order
    let mut order: Vec<usize> = (0..near.destinations.len().min(send.len())).collect();
    order.sort_by_key(|&j| paired(j));
    for j in order {
        if near.destinations[j] != me {
            unrolled.add(true, send[j], near.destinations[j]);
        }
    }
    // SAFETY: the caller's blocks and request.
    unsafe { unrolled.post(call, twin, request) }
}

/// `count` elements of `datatype` per slot from `buf`, `n` slots one after another.
fn slots(buf: *const c_void, n: usize, count: c_int, datatype: Datatype) -> Vec<Block> {
    (0..n as c_int)
        .map(|i| (block_at(buf, count, datatype, i), count, datatype))
        .collect()
}

/// `MPI_Ineighbor_allgather`: the send buffer to every out-neighbour.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ineighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some((twin, near)) = unrolled_with(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ineighbor_allgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    };
    let mine = (sendbuf.cast_mut(), sendcount, sendtype);
    let send = vec![mine; near.destinations.len()];
    let recv = slots(recvbuf, near.sources.len(), recvcount, recvtype);
    // SAFETY: the caller's blocks and request.
    unsafe {
        exchange(
            Call::Ineighbor_allgather,
            &near,
            &send,
            &recv,
            (comm, twin),
            request,
        )
    }
}

/// `MPI_Ineighbor_allgatherv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ineighbor_allgatherv(
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
    let Some((twin, near)) = unrolled_with(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ineighbor_allgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            )
        };
    };
    let mine = (sendbuf.cast_mut(), sendcount, sendtype);
    let send = vec![mine; near.destinations.len()];
    let indegree = near.sources.len() as c_int;
    // SAFETY: an entry per in-neighbour.
    let recv = unsafe { blocks(recvbuf, recvcounts, displs, recvtype, indegree) };
    // SAFETY: the caller's blocks and request.
    unsafe {
        exchange(
            Call::Ineighbor_allgatherv,
            &near,
            &send,
            &recv,
            (comm, twin),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoall`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ineighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some((twin, near)) = unrolled_with(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ineighbor_alltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    };
    let send = slots(sendbuf, near.destinations.len(), sendcount, sendtype);
    let recv = slots(recvbuf, near.sources.len(), recvcount, recvtype);
    // SAFETY: the caller's blocks and request.
    unsafe {
        exchange(
            Call::Ineighbor_alltoall,
            &near,
            &send,
            &recv,
            (comm, twin),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoallv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ineighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some((twin, near)) = unrolled_with(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ineighbor_alltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request,
            )
        };
    };
    let (outdegree, indegree) = (near.destinations.len(), near.sources.len());
    // SAFETY: an entry per out-neighbour and per in-neighbour.
    let (send, recv) = unsafe {
        (
            blocks(sendbuf, sendcounts, sdispls, sendtype, outdegree as c_int),
            blocks(recvbuf, recvcounts, rdispls, recvtype, indegree as c_int),
        )
    };
    // SAFETY: the caller's blocks and request.
    unsafe {
        exchange(
            Call::Ineighbor_alltoallv,
            &near,
            &send,
            &recv,
            (comm, twin),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoallw`: a datatype per block, displacements in bytes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const i64,
    sendtypes: *const Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const i64,
    recvtypes: *const Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some((twin, near)) = unrolled_with(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ineighbor_alltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request,
            )
        };
    };
    let (outdegree, indegree) = (near.destinations.len(), near.sources.len());
    // SAFETY: an entry per out-neighbour and per in-neighbour.
    let (send, recv) = unsafe {
        (
            typed_blocks(sendbuf, sendcounts, sdispls, sendtypes, outdegree as c_int),
            typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, indegree as c_int),
        )
    };
    // SAFETY: the caller's blocks and request.
    unsafe {
        exchange(
            Call::Ineighbor_alltoallw,
            &near,
            &send,
            &recv,
            (comm, twin),
            request,
        )
    }
}
