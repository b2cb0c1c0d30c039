//! MPI-4's communication calls that MPICH 4 has and Open MPI 4.1 lacks: `MPI_Isendrecv(_replace)`
//! and the persistent collectives (`MPI_X_init`). Compiled only with `cfg(mpi4)`, which
//! build.rs sets when the headers say `MPI_VERSION >= 4`: a build against an older library
//! neither exports these symbols nor resolves their `PMPI_X`, so no wrapper can reach a
//! function the library lacks. (The communicator makers of MPI-4 are in `comm`, partitioned
//! communication with the other unreplayable calls in `exports`.)
//!
//! - `MPI_Isendrecv(_replace)` is a post whose send half is an event and whose receive buffer
//!   is logged whole by the completion call, like a nonblocking collective's output: MPICH
//!   4.0.2 completes it through a schedule and leaves its status unfilled (source, tag and
//!   count all 0 for a 2-element receive from rank 1, checked without libcd), so the status
//!   cannot say how much arrived. Memory past the message is logged as MPI left it, which a
//!   deterministic re-execution has there too. Replayed, the request is virtual and completes from the log
//!   (with the logged status), and the send is dropped.
//! - A persistent collective's `_init` is itself collective (MPI-4 §6.13), so it is made like
//!   the point-to-point `_init` calls: its handle is logged and handed out again on
//!   re-execution, without MPI (the request is kept allocated while a log may replay it).
//!   Its output buffers are those of the nonblocking form (see `coll`), fixed at `_init`, and
//!   each `MPI_Start(all)` of it is then a post whose completion logs them, exactly as for
//!   `MPI_IX`: replayed, the start completes from the log and the other ranks never see it.

use crate::abi::{Comm, Datatype, Info, Op, Request};
use crate::coll::{
    at_root, blocks, in_neighbors, is_root, one, peers, rank, scattered, sits_out, typed_blocks,
};
use crate::engine::Delivery;
use crate::exports::{real, Call};
use crate::p2p::{make_persistent, post};
use crate::record::{Header, Pieces};
use crate::traffic::{self, Counts};
use smallvec::smallvec;
use std::ffi::{c_int, c_void};

/// Defines, for each persistent collective, its `_init` wrapper: the nonblocking form's
/// arguments, then `info` and the request. `header` and `outputs` are expressions over the
/// arguments, as in `coll`.
macro_rules! persistent_collectives {
    ($(
        $fn:ident => $Call:ident ($($a:ident : $t:ty),*)
            header($call:ident) $header:block
            outputs $outputs:block
    )*) => {$(
        #[doc = concat!("The wrapper of `MPI_", stringify!($Call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $fn($($a: $t,)* info: Info, request: *mut Request) -> c_int {
            let header: Header = { let $call = Call::$Call; $header };
            let comm = Comm::from_bits(header.comm);
            let delivery = || Delivery::Outputs($outputs);
            // SAFETY: forwarded; the outputs are the call's own buffers, which MPI-4 requires
            // to stay valid until the request is freed.
            unsafe {
                make_persistent(
                    header,
                    comm,
                    delivery,
                    |r| real::$Call($($a,)* info, r),
                    request,
                    || Counts::Collective(comm),
                )
            }
        }
    )*};
}

persistent_collectives! {
    barrier_init => Barrier_init (comm: Comm)
        header(call) { Header::plain(call, comm) }
        outputs { Pieces::new() }

    bcast_init => Bcast_init
        (buffer: *mut c_void, count: c_int, datatype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs {
            if is_root(root, comm) || sits_out(root) {
                smallvec![]
            } else {
                one(buffer, count, datatype, comm)
            }
        }

    reduce_init => Reduce_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs { at_root(root, comm, || one(recvbuf, count, datatype, comm)) }

    allreduce_init => Allreduce_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    scan_init => Scan_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    exscan_init => Exscan_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    reduce_scatter_block_init => Reduce_scatter_block_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), datatype, comm) }
        outputs { one(recvbuf, recvcount, datatype, comm) }

    reduce_scatter_init => Reduce_scatter_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Datatype, op: Op, comm: Comm)
        // SAFETY: `recvcounts` has an entry per rank.
        header(call) { Header::data(call, 0, 0, unsafe { *recvcounts.add(rank(comm).max(0) as usize) }.into(), datatype, comm) }
        // SAFETY: as above.
        outputs { one(recvbuf, unsafe { *recvcounts.add(rank(comm).max(0) as usize) }, datatype, comm) }

    gather_init => Gather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { at_root(root, comm, || one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm)) }

    gatherv_init => Gatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: at the root, the count and displacement arrays have an entry per rank.
        outputs { at_root(root, comm, || unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) }) }

    scatter_init => Scatter_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { scattered(root, recvbuf, || one(recvbuf, recvcount, recvtype, comm)) }

    scatterv_init => Scatterv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { scattered(root, recvbuf, || one(recvbuf, recvcount, recvtype, comm)) }

    allgather_init => Allgather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm) }

    allgatherv_init => Allgatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) } }

    alltoall_init => Alltoall_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm) }

    alltoallv_init => Alltoallv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { blocks(recvbuf, recvcounts, rdispls, peers(comm), recvtype, comm) } }

    alltoallw_init => Alltoallw_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const Datatype, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, peers(comm), comm) } }

    neighbor_allgather_init => Neighbor_allgather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(in_neighbors(comm)), recvtype, comm) }

    neighbor_allgatherv_init => Neighbor_allgatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { blocks(recvbuf, recvcounts, displs, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoall_init => Neighbor_alltoall_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(in_neighbors(comm)), recvtype, comm) }

    neighbor_alltoallv_init => Neighbor_alltoallv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { blocks(recvbuf, recvcounts, rdispls, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoallw_init => Neighbor_alltoallw_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const i64, sendtypes: *const Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const i64, recvtypes: *const Datatype, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, in_neighbors(comm), comm) } }
}

/// What an `MPI_Isendrecv(_replace)` counts when messages are counted: its send at once,
/// its receive pending until complete.
fn send_and_receive(comm: Comm, dest: c_int) -> Counts {
    traffic::sent(comm, dest);
    Counts::Receive(comm)
}

/// `MPI_Isendrecv`: the send half an event, the receive half delivered at completion.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let header = Header::data(
        Call::Isendrecv,
        dest,
        sendtag,
        sendcount.into(),
        sendtype,
        comm,
    );
    let delivery = || Delivery::Outputs(one(recvbuf, recvcount, recvtype, comm));
    // SAFETY: forwarded.
    unsafe {
        post(
            header,
            comm,
            delivery,
            |r| {
                real::Isendrecv(
                    sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, r,
                )
            },
            request,
            || send_and_receive(comm, dest),
        )
    }
}

/// `MPI_Isendrecv_replace`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let header = Header::data(
        Call::Isendrecv_replace,
        dest,
        sendtag,
        count.into(),
        datatype,
        comm,
    );
    let delivery = || Delivery::Outputs(one(buf, count, datatype, comm));
    // SAFETY: forwarded.
    unsafe {
        post(
            header,
            comm,
            delivery,
            |r| {
                real::Isendrecv_replace(
                    buf, count, datatype, dest, sendtag, source, recvtag, comm, r,
                )
            },
            request,
            || send_and_receive(comm, dest),
        )
    }
}
