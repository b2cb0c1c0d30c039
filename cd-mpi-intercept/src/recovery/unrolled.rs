//! `MPI_Igatherv`, `MPI_Iscatterv`, `MPI_Ialltoallv` and `MPI_Ialltoallw` in a ULFM job that
//! contains losses, unrolled into the point-to-point messages they stand for: each block
//! another rank receives is one `MPI_Isend`, each block from another rank one `MPI_Irecv`, on
//! the communicator's twin (`crate::derived::twin`), posted through recovery's own
//! point-to-point calls. So whatever covers point-to-point traffic covers them: the journal
//! keeps each block sent, a repair posts again a receive a survivor had not completed and
//! resends what a replacement lacks, a replacement's blocks its peers already have are
//! dropped, and a CD that logs records and replays them. The application's request stands
//! for them all ([`super::composite`]).
//!
//! Why not all-forms, like their blocking forms ([`super::spread`]): those need every rank to
//! know every block's size first, an exchange a nonblocking call cannot wait for. Here each
//! rank knows what it sends to and receives from each peer, and a block of no bytes is neither
//! sent nor received (MPI's matching rules make both sides agree). A rank's block to itself is
//! copied at the post; with `MPI_IN_PLACE` the blocks an all-to-all sends are copied first, as
//! its receives will overwrite them.
//!
//! The twin keeps these messages from the application's receives (one from `MPI_ANY_TAG` on
//! the communicator itself would match them). All have one tag: collectives on a communicator
//! are posted in one order on every rank, and each posts its messages to a rank in the order
//! that rank posts its receives, so the `k`th message between two ranks on the twin is the
//! `k`th receive there, which is also the order recovery's message counts assume.

use super::allform::{blocks, copy_typed, transformed, typed_blocks, Block, Scratch};
use super::{calls, composite};
use crate::abi::{self, Comm, Datatype, Request};
use crate::pmpi::{safe, Call};
use crate::stats;
use std::ffi::{c_int, c_void};

/// The tag of the messages on a twin.
const TAG: c_int = 0;

/// Where a collective's messages go, in the order they are posted: the blocks to send (to a
/// rank each) and to receive (from a rank each), this rank's own excluded, and the copies its
/// request holds.
#[derive(Default)]
pub(super) struct Unrolled {
    sends: Vec<(Block, c_int)>,
    receives: Vec<(Block, c_int)>,
    held: Vec<Scratch>,
}

impl Unrolled {
    /// Adds `block` sent to (`send`) or received from `peer`, unless it holds no bytes or the
    /// peer is `MPI_PROC_NULL`.
    pub(super) fn add(&mut self, send: bool, block: Block, peer: c_int) {
        let (_, count, datatype) = block;
        let bytes = i64::from(count) * i64::from(safe::type_size(datatype).unwrap_or(1));
        if bytes == 0 || peer == abi::PROC_NULL {
            return;
        }
        match send {
            true => self.sends.push((block, peer)),
            false => self.receives.push((block, peer)),
        }
    }

    /// A gather's blocks (`gathers`) or a scatter's: at the root, `at_root`'s (`counts`
    /// elements of a datatype at `displs` from a buffer), one received from or sent to each
    /// other rank, its own copied from or to `mine` (`None`: in place); elsewhere `mine`,
    /// sent to or received from the root.
    ///
    /// # Safety
    /// The caller's blocks; at the root the arrays have an entry per rank, elsewhere `mine`
    /// is `Some` (MPI's rules for these calls).
    unsafe fn rooted(
        &mut self,
        gathers: bool,
        at_root: (*mut c_void, *const c_int, *const c_int, Datatype),
        mine: Option<Block>,
        root: c_int,
        comm: Comm,
    ) -> c_int {
        let me = safe::comm_rank(comm);
        if me != root {
            if let Some(block) = mine {
                self.add(gathers, block, root);
            }
            return abi::SUCCESS;
        }
        let (buf, counts, displs, datatype) = at_root;
        // SAFETY: an entry per rank at the root.
        let all = unsafe { blocks(buf, counts, displs, datatype, safe::comm_size(comm)) };
        for (peer, block) in (0..).zip(all) {
            if peer != me {
                self.add(!gathers, block, peer);
                continue;
            }
            let (from, to) = match (mine, gathers) {
                (Some(own_block), true) => (own_block, block),
                (Some(own_block), false) => (block, own_block),
                (None, _) => continue,
            };
            // SAFETY: the caller's blocks.
            let rc = unsafe { own(Some(from), to) };
            if rc != abi::SUCCESS {
                return rc;
            }
        }
        abi::SUCCESS
    }

    /// Posts the receives, then the sends, on `twin`, and makes `request` stand for them.
    ///
    /// # Safety
    /// The blocks are the caller's (the MPI call's contract), alive until the request
    /// completes; `request` is writable.
    pub(super) unsafe fn post(self, call: Call, twin: Comm, request: *mut Request) -> c_int {
        stats::count(call);
        let mut parts = Vec::with_capacity(self.receives.len() + self.sends.len());
        for ((at, count, datatype), peer) in self.receives {
            let mut part = abi::predefined().request_null;
            // SAFETY: the caller's block, its until the request completes.
            let rc = unsafe { calls::irecv(at, count, datatype, peer, TAG, twin, &mut part) };
            if rc != abi::SUCCESS {
                return rc;
            }
            parts.push(part);
        }
        for ((at, count, datatype), peer) in self.sends {
            let mut part = abi::predefined().request_null;
            // SAFETY: as above.
            let rc = unsafe { calls::isend(at, count, datatype, peer, TAG, twin, &mut part) };
            if rc != abi::SUCCESS {
                return rc;
            }
            parts.push(part);
        }
        // SAFETY: the caller's out-parameter.
        unsafe { composite::stand_for(parts, self.held, None, None, request) }
    }
}

/// The twin of `comm` where these calls are unrolled on it (see [`transformed`]).
pub(super) fn unrolled_on(comm: Comm) -> Option<Comm> {
    transformed(comm)
        .then(|| crate::derived::twin(comm))
        .flatten()
}

/// Copies rank `me`'s block of `send` to its block of `recv` (`None`: in place, nothing to
/// copy).
///
/// # Safety
/// Both blocks are the caller's.
unsafe fn own(send: Option<Block>, recv: Block) -> c_int {
    let Some((from, count, sendtype)) = send else {
        return abi::SUCCESS;
    };
    let (to, count2, recvtype) = recv;
    // SAFETY: the caller's blocks.
    unsafe { copy_typed(from, count, sendtype, to, count2, recvtype) }
}

/// `MPI_Igatherv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(twin) = unrolled_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::igatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                request,
            )
        };
    };
    let mine = (!abi::is_in_place(sendbuf)).then_some((sendbuf.cast_mut(), sendcount, sendtype));
    let mut unrolled = Unrolled::default();
    let at_root = (recvbuf, recvcounts, displs, recvtype);
    // SAFETY: the caller's blocks (an entry per rank in the arrays at the root).
    let rc = unsafe { unrolled.rooted(true, at_root, mine, root, comm) };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: the caller's blocks and request.
    unsafe { unrolled.post(Call::Igatherv, twin, request) }
}

/// `MPI_Iscatterv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(twin) = unrolled_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::iscatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                request,
            )
        };
    };
    let mine = (!abi::is_in_place(recvbuf)).then_some((recvbuf, recvcount, recvtype));
    let mut unrolled = Unrolled::default();
    let at_root = (sendbuf.cast_mut(), sendcounts, displs, sendtype);
    // SAFETY: the caller's blocks (an entry per rank in the arrays at the root).
    let rc = unsafe { unrolled.rooted(false, at_root, mine, root, comm) };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: the caller's blocks and request.
    unsafe { unrolled.post(Call::Iscatterv, twin, request) }
}

/// `MPI_Ialltoallv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ialltoallv(
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
    let Some(twin) = unrolled_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ialltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request,
            )
        };
    };
    let size = safe::comm_size(comm);
    // SAFETY: the arrays have an entry per rank.
    let (recv, send) = unsafe {
        let recv = blocks(recvbuf, recvcounts, rdispls, recvtype, size);
        let send = (!abi::is_in_place(sendbuf))
            .then(|| blocks(sendbuf, sendcounts, sdispls, sendtype, size));
        (recv, send)
    };
    // SAFETY: the caller's blocks and request.
    unsafe { all_to_all(Call::Ialltoallv, send, recv, comm, twin, request) }
}

/// `MPI_Ialltoallw`: `MPI_Ialltoallv` with a datatype per block and displacements in bytes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(twin) = unrolled_on(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ialltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request,
            )
        };
    };
    let size = safe::comm_size(comm);
    // SAFETY: the arrays have an entry per rank.
    let (recv, send) = unsafe {
        let recv = typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, size);
        let send = (!abi::is_in_place(sendbuf))
            .then(|| typed_blocks(sendbuf, sendcounts, sdispls, sendtypes, size));
        (recv, send)
    };
    // SAFETY: the caller's blocks and request.
    unsafe { all_to_all(Call::Ialltoallw, send, recv, comm, twin, request) }
}

/// An all-to-all of `send`, a block to each rank (`None`: in place, the blocks of `recv`,
/// copied first), into `recv`, a block from each.
///
/// # Safety
/// The blocks are the caller's (the MPI call's contract); `request` is writable.
unsafe fn all_to_all(
    call: Call,
    send: Option<Vec<Block>>,
    recv: Vec<Block>,
    comm: Comm,
    twin: Comm,
    request: *mut Request,
) -> c_int {
    let me = safe::comm_rank(comm);
    let mut unrolled = Unrolled::default();
    for (peer, &block) in (0..).zip(&recv) {
        if peer == me {
            let own_block = send.as_ref().and_then(|s| s.get(me as usize).copied());
            // SAFETY: the caller's blocks.
            let rc = unsafe { own(own_block, block) };
            if rc != abi::SUCCESS {
                return rc;
            }
        } else {
            unrolled.add(false, block, peer);
        }
    }
    let sent = send.unwrap_or_else(|| {
        // in place: each block as it is now, before a receive overwrites it
        recv.iter()
            .map(|&(at, count, datatype)| {
                // SAFETY: the caller's block.
                let mut copy = unsafe { Scratch::copy_of(at, count, datatype) };
                let block = (copy.buf(), count, datatype);
                unrolled.held.push(copy);
                block
            })
            .collect()
    });
    for (peer, &block) in (0..).zip(&sent) {
        if peer != me {
            unrolled.add(true, block, peer);
        }
    }
    // SAFETY: the caller's blocks and request; the copies are held with it.
    unsafe { unrolled.post(call, twin, request) }
}
