//! The neighbourhood collectives in a ULFM job that contains losses: `MPI_Neighbor_allgather`,
//! `MPI_Neighbor_allgatherv`, `MPI_Neighbor_alltoall`, `MPI_Neighbor_alltoallv` and
//! `MPI_Neighbor_alltoallw` on a communicator with a topology (Cartesian, graph, distributed
//! graph: `crate::topology`), run as collectives whose whole result every rank holds
//! ([`super::allform`]). The all-to-all forms share one exchange of packed blocks.
//!
//! Each rank's result is made of its in-neighbours' blocks, which no survivor holds for a
//! replacement; run as an all-form, every rank receives every rank's contribution (its send
//! buffer, or its blocks and where they go), so any survivor serves it like any collective,
//! and each rank takes its in-neighbours' blocks from it. That costs an all-gather of every
//! rank's contribution instead of one message per edge, in such jobs only.
//!
//! Which block a rank takes is MPI's pairing of the edges: in a Cartesian topology, the block
//! a rank sent to its neighbour in one direction of a dimension is the one that neighbour
//! receives from the other direction (which matters when a neighbour appears twice, a
//! periodic dimension of one or two ranks); in a graph, the k-th edge from a rank to another
//! pairs with the k-th in-edge the other has from it.

use super::allform::{all_form, block_at, copy_typed, element_at, entries, transformed};
use super::allform::{typed_blocks, Block, Scratch};
use super::calls::{self, Chan};
use super::packed::{self, Packer, Parts};
use crate::abi::{self, Comm, Datatype};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// A rank's neighbours: in-neighbours (whose blocks it receives, in order), out-neighbours
/// (to which it sends its blocks, in order; `MPI_PROC_NULL` where there is none), and whether
/// the topology is Cartesian.
pub(super) struct Neighbours {
    pub(super) sources: Vec<c_int>,
    pub(super) destinations: Vec<c_int>,
    pub(super) cartesian: bool,
}

impl Neighbours {
    /// The neighbours of this rank of `comm`; `None` without a topology (MPI reports that).
    pub(super) fn of(comm: Comm) -> Option<Neighbours> {
        let kind = safe::topo_test(comm);
        if kind == abi::CART {
            let ndims = safe::cartdim_get(comm).max(0);
            let mut list = Vec::with_capacity(2 * ndims as usize);
            for d in 0..ndims {
                let (mut source, mut dest) = (abi::PROC_NULL, abi::PROC_NULL);
                // SAFETY: writes two ints.
                unsafe { real::Cart_shift(comm, d, 1, &mut source, &mut dest) };
                list.extend([source, dest]);
            }
            return Some(Neighbours {
                sources: list.clone(),
                destinations: list,
                cartesian: true,
            });
        }
        if kind == abi::GRAPH {
            let rank = safe::comm_rank(comm);
            let n = safe::graph_neighbors_count(comm, rank);
            let mut list = vec![0; n.max(0) as usize];
            // SAFETY: an array of `n` ints.
            unsafe { real::Graph_neighbors(comm, rank, n, list.as_mut_ptr()) };
            return Some(Neighbours {
                sources: list.clone(),
                destinations: list,
                cartesian: false,
            });
        }
        if kind == abi::DIST_GRAPH {
            let (own, _) = crate::topology::Adjacency::own(comm);
            return Some(Neighbours {
                sources: own.sources,
                destinations: own.destinations,
                cartesian: false,
            });
        }
        None
    }

    /// For in-slot `i` (from `sources[i]`), the out-slot of that source's whose block it gets,
    /// given the source's out-neighbours `theirs` and this rank `me` (see the module docs).
    fn paired(&self, i: usize, theirs: &[c_int], me: c_int) -> Option<usize> {
        if self.cartesian {
            return Some(i ^ 1);
        }
        let source = self.sources[i];
        let k = self.sources[..i].iter().filter(|&&s| s == source).count();
        theirs
            .iter()
            .enumerate()
            .filter(|(_, &d)| d == me)
            .nth(k)
            .map(|(j, _)| j)
    }
}

/// Whether recovery runs the call on `comm` as its all-form, with its neighbours.
fn transformed_on(comm: Comm) -> Option<(Option<Chan>, Neighbours)> {
    if !transformed(comm) {
        return None;
    }
    Some((calls::covers(comm), Neighbours::of(comm)?))
}

/// `MPI_Neighbor_allgather`: an all-gather of the send buffers, each rank taking its
/// in-neighbours'.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some((chan, near)) = transformed_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::neighbor_allgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    };
    let total = sendcount.saturating_mul(safe::comm_size(comm));
    let mut all = Scratch::new(total, sendtype);
    let buf = all.buf();
    // SAFETY: `buf` holds every rank's `sendcount` of `sendtype`.
    let rc = unsafe {
        all_form(
            Call::Neighbor_allgather,
            chan,
            buf,
            total,
            sendtype,
            false,
            |c| real::Allgather(sendbuf, sendcount, sendtype, buf, sendcount, sendtype, c),
            |live, counts| {
                crate::coll::via::allgather(
                    sendbuf, sendcount, sendtype, buf, sendcount, sendtype, comm, live, counts,
                )
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    for (i, &source) in near.sources.iter().enumerate() {
        if source < 0 {
            continue;
        }
        let from = block_at(buf, sendcount, sendtype, source);
        let to = block_at(recvbuf, recvcount, recvtype, i as c_int);
        // SAFETY: the source's block, to the caller's block `i`.
        let rc = unsafe { copy_typed(from, sendcount, sendtype, to, recvcount, recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Neighbor_allgatherv`: the send buffers exchanged packed (`super::packed`), each rank
/// taking its in-neighbours'.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some((chan, near)) = transformed_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::neighbor_allgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
            )
        };
    };
    let mut mine = Packer::default();
    // SAFETY: the caller's send buffer.
    if let Err(rc) = unsafe { mine.push(sendbuf, sendcount, sendtype) } {
        return rc;
    }
    // SAFETY: the call's communicator.
    let parts = match unsafe { packed::allgather(Call::Neighbor_allgatherv, chan, mine, comm) } {
        Ok(parts) => parts,
        Err(rc) => return rc,
    };
    let n = near.sources.len() as c_int;
    // SAFETY: an entry per in-neighbour.
    let (counts, displs) = unsafe { (entries(recvcounts, n), entries(displs, n)) };
    for (i, &source) in near.sources.iter().enumerate() {
        if source < 0 {
            continue;
        }
        let to = element_at(recvbuf, recvtype, i64::from(displs[i]));
        // SAFETY: the source's buffer, to the caller's block `i`.
        let rc = unsafe { parts.unpack(source as usize, to, counts[i], recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// Every rank's blocks for its out-neighbours, exchanged packed with where they go: each
/// rank's parts are its number of out-neighbours, the out-neighbours, then a part per
/// out-neighbour, as many as the most any rank has (an `MPI_Allreduce`, journaled like the
/// others, tells how many). Returns the parts and how many each rank has.
///
/// # Safety
/// `blocks` are the caller's send blocks, one per out-neighbour.
unsafe fn exchange(
    call: Call,
    chan: Option<Chan>,
    near: &Neighbours,
    blocks: &[Block],
    comm: Comm,
) -> Result<(Parts, usize), c_int> {
    let int = abi::predefined().int;
    let degree = near.destinations.len() as c_int;
    let mut most = degree;
    let at = (&mut most as *mut c_int).cast::<c_void>();
    let own = (&degree as *const c_int).cast::<c_void>();
    let max = abi::predefined().op_max;
    // SAFETY: one int in and out.
    let rc = unsafe {
        all_form(
            Call::Allreduce,
            chan,
            at,
            1,
            int,
            false,
            |c| real::Allreduce(own, at, 1, int, max, c),
            |live, counts| crate::coll::via::allreduce(own, at, 1, int, max, comm, live, counts),
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return Err(rc);
    }
    let mut mine = Packer::default();
    // SAFETY: the out-neighbours, then the caller's blocks (its contract), then empty parts.
    unsafe {
        mine.push(own, 1, int)?;
        mine.push(near.destinations.as_ptr().cast(), degree, int)?;
        for &(buf, count, datatype) in blocks {
            mine.push(buf, count, datatype)?;
        }
        for _ in blocks.len()..most.max(0) as usize {
            mine.push(std::ptr::null(), 0, int)?;
        }
    }
    // SAFETY: the call's communicator.
    let parts = unsafe { packed::allgather(call, chan, mine, comm)? };
    Ok((parts, 2 + most.max(0) as usize))
}

/// Takes each in-neighbour's block for this rank from what [`exchange`] gave into `to`, a
/// block per in-neighbour.
///
/// # Safety
/// `to` are the caller's receive blocks.
unsafe fn take(near: &Neighbours, parts: &Parts, per: usize, me: c_int, to: &[Block]) -> c_int {
    let int = abi::predefined().int;
    for (i, (&source, &(buf, count, datatype))) in near.sources.iter().zip(to).enumerate() {
        if source < 0 {
            continue;
        }
        let base = source as usize * per;
        let mut degree: c_int = 0;
        // SAFETY: one int, into ours.
        let rc = unsafe { parts.unpack(base, (&mut degree as *mut c_int).cast(), 1, int) };
        if rc != abi::SUCCESS {
            return rc;
        }
        let mut theirs = vec![0 as c_int; degree.clamp(0, per as c_int - 2) as usize];
        let n = theirs.len() as c_int;
        // SAFETY: the source's out-neighbours, into our buffer of their number.
        let rc = unsafe { parts.unpack(base + 1, theirs.as_mut_ptr().cast(), n, int) };
        if rc != abi::SUCCESS {
            return rc;
        }
        let Some(j) = near.paired(i, &theirs, me) else {
            return abi::ERR_TOPOLOGY;
        };
        // SAFETY: the source's block for this rank, to the caller's block `i`.
        let rc = unsafe { parts.unpack(base + 2 + j, buf, count, datatype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// A neighbourhood all-to-all of `send`, a block per out-neighbour, into `recv`, a block per
/// in-neighbour ([`exchange`], then [`take`]).
///
/// # Safety
/// The blocks are the caller's (the MPI call's contract), on `comm`.
unsafe fn all_to_neighbours(
    call: Call,
    chan: Option<Chan>,
    near: &Neighbours,
    send: &[Block],
    recv: &[Block],
    comm: Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    match unsafe { exchange(call, chan, near, send, comm) } {
        // SAFETY: as above.
        Ok((parts, per)) => unsafe { take(near, &parts, per, safe::comm_rank(comm), recv) },
        Err(rc) => rc,
    }
}

/// `MPI_Neighbor_alltoall`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some((chan, near)) = transformed_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::neighbor_alltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    };
    let blocks = |buf: *const c_void, n: usize, count, datatype| -> Vec<Block> {
        let at = |j| (block_at(buf, count, datatype, j as c_int), count, datatype);
        (0..n).map(at).collect()
    };
    let send = blocks(sendbuf, near.destinations.len(), sendcount, sendtype);
    let recv = blocks(recvbuf, near.sources.len(), recvcount, recvtype);
    // SAFETY: the caller's blocks.
    unsafe { all_to_neighbours(Call::Neighbor_alltoall, chan, &near, &send, &recv, comm) }
}

/// `MPI_Neighbor_alltoallv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some((chan, near)) = transformed_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::neighbor_alltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm,
            )
        };
    };
    let blocks = |buf: *const c_void, n: usize, counts, displs, datatype| -> Vec<Block> {
        // SAFETY: an entry per out-neighbour (sending) or in-neighbour (receiving).
        let (counts, displs) =
            unsafe { (entries(counts, n as c_int), entries(displs, n as c_int)) };
        let at = |(&count, &displ): (&c_int, &c_int)| {
            (element_at(buf, datatype, i64::from(displ)), count, datatype)
        };
        counts.iter().zip(displs).map(at).collect()
    };
    let send = blocks(
        sendbuf,
        near.destinations.len(),
        sendcounts,
        sdispls,
        sendtype,
    );
    let recv = blocks(recvbuf, near.sources.len(), recvcounts, rdispls, recvtype);
    // SAFETY: the caller's blocks.
    unsafe { all_to_neighbours(Call::Neighbor_alltoallv, chan, &near, &send, &recv, comm) }
}

/// `MPI_Neighbor_alltoallw`: `MPI_Neighbor_alltoallv` with a datatype per block and
/// displacements in bytes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const i64,
    sendtypes: *const Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const i64,
    recvtypes: *const Datatype,
    comm: Comm,
) -> c_int {
    let Some((chan, near)) = transformed_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::neighbor_alltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm,
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
    // SAFETY: the caller's blocks.
    unsafe { all_to_neighbours(Call::Neighbor_alltoallw, chan, &near, &send, &recv, comm) }
}
