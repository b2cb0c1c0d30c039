//! `MPI_Allgatherv`, `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Alltoall`, `MPI_Alltoallv` and
//! `MPI_Alltoallw` in a ULFM job that contains losses: the collectives that spread blocks of
//! their own layout, run as a collective whose whole result every rank holds
//! ([`super::allform`]), each rank then taking its blocks from it.
//!
//! - `MPI_Allgatherv`'s result is the same on every rank already, laid out by its counts and
//!   displacements: it runs into a contiguous scratch buffer, which the journal keeps (and a
//!   replacement is served), each block then copied to its displacement.
//! - `MPI_Alltoall` runs as an `MPI_Allgather` of every rank's whole send buffer, each rank
//!   then taking the blocks sent to it: every rank receives `size` times what it would.
//! - `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Alltoallv` and `MPI_Alltoallw` have counts (and
//!   `MPI_Alltoallw` datatypes) that not every rank knows: their contributions are exchanged
//!   packed ([`super::packed`]: an `MPI_Allgatherv` of every rank's parts, or a broadcast of
//!   the root's), after an exchange of their sizes. A gather's contributions reach every rank
//!   instead of its root, a scatter's whole buffer every rank instead of its block, and an
//!   all-to-all's every block every rank; each is packed and unpacked once more than MPI
//!   would. The two all-to-alls differ only in how their blocks are found (`MPI_Alltoallw`'s
//!   displacements are in bytes, each block with its own datatype), and share the exchange.
//!
//! These costs are paid in ULFM jobs with recovery on only. With `MPI_IN_PLACE` the input is in
//! the receive buffer, which the all-form reads; the result is written there once it completed.

use super::allform::{all_form, block_at, blocks, copy_typed, element_at, entries};
use super::allform::{packed_displs, transformed, typed_blocks, Block, Scratch};
use super::calls;
use super::packed::{self, Packer};
use crate::abi::{self, Comm, Datatype};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// `MPI_Allgatherv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::allgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
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
        send,
        sendcount: scount,
        sendtype: stype,
        total,
        ..
    } = form;
    let mut whole = Scratch::new(total, recvtype);
    let buf = whole.buf();
    let (counts_p, places_p) = (form.counts.as_ptr(), form.places.as_ptr());
    // SAFETY: `buf` holds every block, one after another.
    let live = || unsafe {
        calls::collective(Call::Allgatherv, chan, buf, total, recvtype, false, |c| {
            real::Allgatherv(send, scount, stype, buf, counts_p, places_p, recvtype, c)
        })
    };
    let rc = match calls::logged() {
        false => live(),
        // SAFETY: as above.
        true => unsafe {
            crate::coll::via::allgatherv(
                send, scount, stype, buf, counts_p, places_p, recvtype, comm, live, false,
            )
        },
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: `buf` holds every block at `places`; the caller's buffer has room at `displs`.
    unsafe {
        unpack_blocks(
            buf,
            &form.places,
            recvbuf,
            &form.displs,
            &form.counts,
            recvtype,
        )
    }
}

/// `MPI_Allgatherv`'s layout at this rank: every rank's count and this rank's displacements
/// (copied), the blocks' places one after another in the journal's form and their total, and
/// the input (this rank's own block of `recvbuf` in place).
pub(super) struct AllgathervForm {
    pub(super) counts: Vec<c_int>,
    pub(super) displs: Vec<c_int>,
    pub(super) places: Vec<c_int>,
    pub(super) total: c_int,
    pub(super) send: *const c_void,
    pub(super) sendcount: c_int,
    pub(super) sendtype: Datatype,
}

/// [`AllgathervForm`] of the call's arguments; `Err` the MPI error of counts that do not fit
/// an `int`, or of arrays that lack this rank.
///
/// # Safety
/// `recvcounts` and `displs` have an entry per rank of `comm` (the MPI call's contract).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn allgatherv_form(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    comm: Comm,
) -> Result<AllgathervForm, c_int> {
    let size = safe::comm_size(comm);
    let rank = safe::comm_rank(comm) as usize;
    // SAFETY: the caller's contract.
    let (counts, displs) = unsafe { (entries(recvcounts, size), entries(displs, size)) };
    let (places, total) = packed_displs(counts).ok_or(abi::ERR_COUNT)?;
    if counts.len() <= rank || displs.len() <= rank {
        return Err(abi::ERR_ARG);
    }
    let (send, sendcount, sendtype) = if sendbuf.addr() == abi::IN_PLACE {
        let own = element_at(recvbuf, recvtype, i64::from(displs[rank]));
        (own.cast_const(), counts[rank], recvtype)
    } else {
        (sendbuf, sendcount, sendtype)
    };
    Ok(AllgathervForm {
        counts: counts.to_vec(),
        displs: displs.to_vec(),
        places,
        total,
        send,
        sendcount,
        sendtype,
    })
}

/// `MPI_Allgatherv`'s result from its blocks laid one after another (`counts[i]` of `recvtype`
/// at element `places[i]` of `all`): each block to element `displs[i]` of `recvbuf`.
///
/// # Safety
/// `all` and `recvbuf` hold those blocks (the MPI call's contract for `recvbuf`).
pub(super) unsafe fn unpack_blocks(
    all: *const c_void,
    places: &[c_int],
    recvbuf: *mut c_void,
    displs: &[c_int],
    counts: &[c_int],
    recvtype: Datatype,
) -> c_int {
    for ((&count, &place), &displ) in counts.iter().zip(places).zip(displs) {
        let from = element_at(all, recvtype, i64::from(place));
        let to = element_at(recvbuf, recvtype, i64::from(displ));
        // SAFETY: a block of `all`, to its place in the caller's receive buffer.
        let rc = unsafe { copy_typed(from, count, recvtype, to, count, recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Gatherv`, as an allgather of the packed contributions, which the root unpacks.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::gatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
            )
        };
    }
    let chan = calls::covers(comm);
    let size = safe::comm_size(comm);
    let at_root = safe::comm_rank(comm) == root;
    let (counts, displs) = if at_root {
        // SAFETY: at the root both arrays have an entry per rank (significant there alone).
        unsafe { (entries(recvcounts, size), entries(displs, size)) }
    } else {
        (&[][..], &[][..])
    };
    if at_root && (counts.len() <= root as usize || displs.len() <= root as usize) {
        return abi::ERR_ARG;
    }
    let block = |i: usize| element_at(recvbuf, recvtype, i64::from(displs[i]));
    let in_place = at_root && sendbuf.addr() == abi::IN_PLACE;
    let mut mine = Packer::default();
    // SAFETY: the input: the root's own block in place, else the send buffer.
    let pushed = unsafe {
        if in_place {
            mine.push(block(root as usize), counts[root as usize], recvtype)
        } else {
            mine.push(sendbuf, sendcount, sendtype)
        }
    };
    if let Err(rc) = pushed {
        return rc;
    }
    // SAFETY: the call's communicator.
    let parts = match unsafe { packed::allgather(Call::Gatherv, chan, mine, comm) } {
        Ok(parts) => parts,
        Err(rc) => return rc,
    };
    if !at_root {
        return abi::SUCCESS;
    }
    for (i, &count) in counts.iter().enumerate() {
        if in_place && i == root as usize {
            continue;
        }
        // SAFETY: block `i` of the root's receive buffer.
        let rc = unsafe { parts.unpack(i, block(i), count, recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Scatterv`, as a broadcast of the root's packed blocks, each rank unpacking its own.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
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
            crate::coll::scatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    let chan = calls::covers(comm);
    let size = safe::comm_size(comm);
    let rank = safe::comm_rank(comm);
    let mine = if rank == root {
        // SAFETY: at the root both arrays have an entry per rank (significant there alone).
        let (counts, displs) = unsafe { (entries(sendcounts, size), entries(displs, size)) };
        let mut mine = Packer::default();
        for (&count, &displ) in counts.iter().zip(displs) {
            let from = element_at(sendbuf, sendtype, i64::from(displ));
            // SAFETY: a block of the root's send buffer.
            if let Err(rc) = unsafe { mine.push(from, count, sendtype) } {
                return rc;
            }
        }
        Some(mine)
    } else {
        None
    };
    // SAFETY: the call's communicator.
    let parts = match unsafe { packed::bcast(Call::Scatterv, chan, mine, size, root, comm) } {
        Ok(parts) => parts,
        Err(rc) => return rc,
    };
    if rank == root && recvbuf.addr() == abi::IN_PLACE {
        return abi::SUCCESS;
    }
    // SAFETY: this rank's block, into the caller's receive buffer.
    unsafe { parts.unpack(rank as usize, recvbuf, recvcount, recvtype) }
}

/// `MPI_Alltoall`, as an allgather of every rank's whole send buffer.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::alltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    }
    let chan = calls::covers(comm);
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
    // SAFETY: `buf` holds every rank's send buffer.
    let rc = unsafe {
        all_form(
            Call::Alltoall,
            chan,
            buf,
            total,
            recvtype,
            false,
            |c| real::Allgather(send, scount, stype, buf, rcount, recvtype, c),
            |live, counts| {
                crate::coll::via::allgather(
                    send, scount, stype, buf, rcount, recvtype, comm, live, counts,
                )
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: `buf` holds every rank's send buffer; the caller's receive buffer a block each.
    unsafe { alltoall_blocks(buf, recvbuf, recvcount, recvtype, size, rank) }
}

/// `MPI_Alltoall`'s all-form at this rank: an all-gather of every rank's whole send buffer
/// (`sendcount` of `sendtype` at `send`, the receive buffer in place), `recvcount` of the
/// receive datatype from each, `total` in all.
pub(super) struct AlltoallForm {
    pub(super) send: *const c_void,
    pub(super) sendcount: c_int,
    pub(super) sendtype: Datatype,
    pub(super) recvcount: c_int,
    pub(super) total: c_int,
}

/// [`AlltoallForm`] of the call's arguments, for `size` ranks.
pub(super) fn alltoall_form(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    size: c_int,
) -> AlltoallForm {
    let (send, sendcount, sendtype) = if sendbuf.addr() == abi::IN_PLACE {
        (recvbuf.cast_const(), recvcount, recvtype)
    } else {
        (sendbuf, sendcount, sendtype)
    };
    let recvcount = recvcount.saturating_mul(size);
    AlltoallForm {
        send,
        sendcount: sendcount.saturating_mul(size),
        sendtype,
        recvcount,
        total: recvcount.saturating_mul(size),
    }
}

/// `MPI_Alltoall`'s result at `rank` from every rank's whole send buffer (`size` blocks of
/// `recvcount` of `recvtype` each, in rank order at `all`): block `rank` of each, in order.
///
/// # Safety
/// `all` holds `size * size` blocks; `recvbuf` holds `size`.
pub(super) unsafe fn alltoall_blocks(
    all: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    size: c_int,
    rank: c_int,
) -> c_int {
    for i in 0..size {
        let from = block_at(all, recvcount, recvtype, i.saturating_mul(size) + rank);
        let to = block_at(recvbuf, recvcount, recvtype, i);
        // SAFETY: rank `i`'s block for this rank, to block `i` of the caller's receive buffer.
        let rc = unsafe { copy_typed(from, recvcount, recvtype, to, recvcount, recvtype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv(
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
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::alltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm,
            )
        };
    }
    let size = safe::comm_size(comm);
    // SAFETY: both arrays have an entry per rank.
    let (recv, send) = unsafe {
        let recv = blocks(recvbuf, recvcounts, rdispls, recvtype, size);
        match sendbuf.addr() == abi::IN_PLACE {
            true => (recv.clone(), recv),
            false => (recv, blocks(sendbuf, sendcounts, sdispls, sendtype, size)),
        }
    };
    // SAFETY: the caller's blocks (its contract).
    unsafe { exchange(Call::Alltoallv, &send, &recv, comm) }
}

/// `MPI_Alltoallw`: `MPI_Alltoallv` with a datatype per block and displacements in bytes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const Datatype,
    comm: Comm,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::alltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm,
            )
        };
    }
    let size = safe::comm_size(comm);
    let blocks = |buf: *const c_void, counts, displs, types| {
        // SAFETY: the three arrays have an entry per rank.
        unsafe { typed_blocks(buf, counts, displs, types, size) }
    };
    let recv = blocks(recvbuf, recvcounts, rdispls, recvtypes);
    let send = match sendbuf.addr() == abi::IN_PLACE {
        true => recv.clone(),
        false => blocks(sendbuf, sendcounts, sdispls, sendtypes),
    };
    // SAFETY: the caller's blocks (its contract).
    unsafe { exchange(Call::Alltoallw, &send, &recv, comm) }
}

/// An all-to-all of `send`, a block to each rank, into `recv`, a block from each: an allgather
/// of every rank's packed blocks, each rank unpacking those sent to it. With `MPI_IN_PLACE`
/// both are the receive blocks (packed before any is written).
///
/// # Safety
/// The blocks are the caller's (the MPI call's contract), on `comm`.
unsafe fn exchange(call: Call, send: &[Block], recv: &[Block], comm: Comm) -> c_int {
    let chan = calls::covers(comm);
    let (size, rank) = (safe::comm_size(comm), safe::comm_rank(comm));
    let mut mine = Packer::default();
    for &(at, count, datatype) in send {
        // SAFETY: a block of the input.
        if let Err(rc) = unsafe { mine.push(at, count, datatype) } {
            return rc;
        }
    }
    // SAFETY: the call's communicator.
    let parts = match unsafe { packed::allgather(call, chan, mine, comm) } {
        Ok(parts) => parts,
        Err(rc) => return rc,
    };
    for (i, &(to, count, datatype)) in recv.iter().enumerate() {
        // SAFETY: rank `i`'s block for this rank, to its place in the caller's receive buffer.
        let rc = unsafe { parts.unpack(i * size as usize + rank as usize, to, count, datatype) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    abi::SUCCESS
}
