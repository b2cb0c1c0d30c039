//! Collective calls: recording logs what this rank received (its output buffers, packed with
//! the application's datatypes); re-executed, the outputs are written from the log and MPI is
//! not called, so the other ranks never see the re-execution. Each collective is defined once,
//! with its output buffers, and gives both its blocking form and its nonblocking one (`MPI_IX`
//! is a post whose completion call logs the same outputs).
//!
//! Output buffers per call (for intercommunicators the counts follow the remote group, and a
//! root passing `MPI_ROOT` or `MPI_PROC_NULL` receives nothing where MPI says so):
//! Bcast: the buffer, except at the root; Reduce: `recvbuf` at the root; Allreduce, Scan,
//! Exscan, Reduce_scatter(_block): `recvbuf`; Gather(v): `recvbuf` at the root;
//! Scatter(v): `recvbuf` (not at a root passing `MPI_IN_PLACE`); Allgather(v), Alltoall(v):
//! `recvbuf`; Alltoallw: `recvbuf`, a block per rank with its own datatype; Barrier: nothing.
//! The neighborhood collectives (Neighbor_allgather(v), Neighbor_alltoall(v/w)) receive a
//! block per in-neighbor of the communicator's topology (Cartesian: `2 * ndims`, a `-1`
//! neighbor's block included, which MPI leaves untouched and the log records as it is).

use crate::abi::{self, Comm, Datatype, Op, Request};
use crate::engine::{self, Delivery, Route};
use crate::exports::{real, Call};
use crate::record::{Corrupt, Header, Piece, Pieces, Writer};
use smallvec::smallvec;
use std::ffi::{c_int, c_void};

/// The rank of this process in `comm`.
fn rank(comm: Comm) -> c_int {
    let mut r: c_int = -1;
    // SAFETY: writes one int.
    unsafe { real::Comm_rank(comm, &mut r) };
    r
}

/// Whether `comm` is an intercommunicator.
fn is_inter(comm: Comm) -> bool {
    let mut inter: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Comm_test_inter(comm, &mut inter) };
    inter != 0
}

/// The number of ranks data comes from in `comm` (the remote group for an intercommunicator).
fn peers(comm: Comm) -> c_int {
    let mut n: c_int = 0;
    // SAFETY: each writes one int.
    unsafe {
        if is_inter(comm) {
            real::Comm_remote_size(comm, &mut n);
        } else {
            real::Comm_size(comm, &mut n);
        }
    }
    n
}

/// Whether this rank receives as a root: the root of an intracommunicator, `MPI_ROOT` on an
/// intercommunicator.
fn is_root(root: c_int, comm: Comm) -> bool {
    root == abi::ROOT || (root >= 0 && !is_inter(comm) && root == rank(comm))
}

/// Whether this rank is a non-receiving party of a rooted intercommunicator collective.
fn sits_out(root: c_int) -> bool {
    root == abi::PROC_NULL
}

/// The number of ranks a neighborhood collective receives from on `comm`: its in-degree
/// (`2 * ndims` on a Cartesian topology, the neighbor count on a graph, the in-degree on a
/// distributed graph); 0 without a topology, where MPI refuses the call anyway.
fn in_neighbors(comm: Comm) -> c_int {
    let (mut topology, mut n) = (0, 0);
    // SAFETY: each call writes the ints it is given.
    unsafe {
        real::Topo_test(comm, &mut topology);
        if topology == abi::CART {
            real::Cartdim_get(comm, &mut n);
            n = n.saturating_mul(2);
        } else if topology == abi::GRAPH {
            real::Graph_neighbors_count(comm, rank(comm), &mut n);
        } else if topology == abi::DIST_GRAPH {
            let (mut outdegree, mut weighted) = (0, 0);
            real::Dist_graph_neighbors_count(comm, &mut n, &mut outdegree, &mut weighted);
        } else {
            n = 0;
        }
    }
    n.max(0)
}

fn extent(datatype: Datatype) -> i64 {
    let (mut lb, mut ext) = (0i64, 0i64);
    // SAFETY: writes two MPI_Aint.
    unsafe { real::Type_get_extent(datatype, &mut lb, &mut ext) };
    ext
}

/// `n` blocks of `counts[i]` elements at `displs[i]` extents from `buf`.
///
/// # Safety
/// `counts` and `displs` must hold `n` ints.
unsafe fn blocks(
    buf: *mut c_void,
    counts: *const c_int,
    displs: *const c_int,
    n: c_int,
    datatype: Datatype,
    comm: Comm,
) -> Pieces {
    let ext = extent(datatype) as isize;
    (0..n.max(0) as usize)
        .map(|i| {
            // SAFETY: the caller's contract.
            let (count, displ) = unsafe { (*counts.add(i), *displs.add(i)) };
            Piece {
                buf: buf
                    .cast::<u8>()
                    .wrapping_offset(displ as isize * ext)
                    .cast(),
                count,
                datatype,
                comm,
            }
        })
        .collect()
}

/// Runs a blocking collective: `outputs` names this rank's output buffers, `run` calls MPI.
///
/// # Safety
/// The output buffers must be valid for the call (the MPI function's contract).
unsafe fn collective(
    header: Header,
    comm: Comm,
    outputs: impl FnOnce() -> Pieces,
    run: impl FnOnce() -> c_int,
) -> c_int {
    let call = header.call;
    let route = engine::route(call);
    if engine::counted(&route) {
        crate::traffic::collective(comm);
    }
    match route {
        Route::Direct => run(),
        Route::Record(guard) => {
            let rc = run();
            if rc == abi::SUCCESS {
                let outputs = outputs();
                let mut w = Writer::new(&header);
                w.int(outputs.len() as c_int);
                for piece in outputs {
                    w.piece(piece);
                }
                // SAFETY: the collective completed into its outputs.
                unsafe { engine::log_record(&guard, &w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let outputs = outputs();
            let served = (|| {
                if usize::try_from(reader.int()?).ok() != Some(outputs.len()) {
                    return Err(Corrupt);
                }
                for piece in &outputs {
                    // SAFETY: the re-executed call's output buffers.
                    unsafe {
                        reader.unpack_into(
                            piece.buf.cast_mut(),
                            piece.count,
                            piece.datatype,
                            comm,
                        )?
                    };
                }
                Ok(())
            })();
            match served {
                Ok(()) => abi::SUCCESS,
                Err(Corrupt) => engine::mismatch(
                    &format!("CD replay mismatch: the re-executed {} has other output buffers than the logged one", call.name()),
                    comm,
                ),
            }
        }
    }
}

pub(crate) fn one(buf: *mut c_void, count: c_int, datatype: Datatype, comm: Comm) -> Pieces {
    smallvec![Piece {
        buf,
        count,
        datatype,
        comm,
    }]
}

/// `n` blocks of `counts[i]` elements of `types[i]` at `displs[i]` bytes from `buf`
/// (displacements as `int`, Alltoallw's, or `MPI_Aint`, Neighbor_alltoallw's).
///
/// # Safety
/// The three arrays must hold `n` entries.
unsafe fn typed_blocks<D: Copy + Into<i64>>(
    buf: *mut c_void,
    counts: *const c_int,
    displs: *const D,
    types: *const Datatype,
    n: c_int,
    comm: Comm,
) -> Pieces {
    (0..n.max(0) as usize)
        .map(|i| {
            // SAFETY: the caller's contract.
            let (count, displ, datatype) =
                unsafe { (*counts.add(i), (*displs.add(i)).into(), *types.add(i)) };
            Piece {
                buf: buf.cast::<u8>().wrapping_offset(displ as isize).cast(),
                count,
                datatype,
                comm,
            }
        })
        .collect()
}

/// The outputs of a rooted collective that only the root receives (Reduce, Gather(v)).
fn at_root(root: c_int, comm: Comm, outputs: impl FnOnce() -> Pieces) -> Pieces {
    if is_root(root, comm) {
        outputs()
    } else {
        smallvec![]
    }
}

/// The outputs of a Scatter(v): none at the root, none for a rank sitting out, none in place.
fn scattered(root: c_int, recvbuf: *mut c_void, outputs: impl FnOnce() -> Pieces) -> Pieces {
    if sits_out(root) || root == abi::ROOT || abi::is_in_place(recvbuf) {
        smallvec![]
    } else {
        outputs()
    }
}

/// Defines, for each collective, its blocking wrapper and its nonblocking one (the same
/// arguments and a request). `header` and `outputs` are expressions over the arguments; the
/// header's call is the one being made.
macro_rules! collectives {
    ($(
        $blocking:ident / $nonblocking:ident / $persistent:ident
            => $Call:ident / $ICall:ident / $PCall:ident
            ($($a:ident : $t:ty),*)
            header($call:ident) $header:block
            outputs $outputs:block
    )*) => {$(
        #[doc = concat!("The wrapper of `MPI_", stringify!($Call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $blocking($($a: $t),*) -> c_int {
            let header = { let $call = Call::$Call; $header };
            let comm = Comm::from_bits(header.comm);
            let outputs = || $outputs;
            // SAFETY: forwarded; the outputs are the call's own buffers.
            unsafe { collective(header, comm, outputs, || real::$Call($($a),*)) }
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($ICall), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nonblocking($($a: $t,)* request: *mut Request) -> c_int {
            let header = { let $call = Call::$ICall; $header };
            let comm = Comm::from_bits(header.comm);
            let delivery = || Delivery::Outputs($outputs);
            // SAFETY: forwarded; the outputs are the call's own buffers.
            unsafe {
                crate::p2p::post(
                    header,
                    comm,
                    delivery,
                    |r| real::$ICall($($a,)* r),
                    request,
                    || crate::traffic::Counts::Collective(comm),
                )
            }
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($PCall), "` (MPI-4): made like the")]
        #[doc = concat!("point-to-point `_init` calls, each start logged like `MPI_", stringify!($ICall), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[cfg(mpi4)]
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $persistent(
            $($a: $t,)*
            info: crate::abi::Info,
            request: *mut Request,
        ) -> c_int {
            let header = { let $call = Call::$PCall; $header };
            let comm = Comm::from_bits(header.comm);
            let delivery = || Delivery::Outputs($outputs);
            // SAFETY: forwarded; the outputs are the call's own buffers, which MPI-4 requires
            // to stay valid until the request is freed.
            unsafe {
                crate::p2p::make_persistent(
                    header,
                    comm,
                    delivery,
                    |r| real::$PCall($($a,)* info, r),
                    request,
                    || crate::traffic::Counts::Collective(comm),
                )
            }
        }
    )*};
}

collectives! {
    barrier / ibarrier / barrier_init => Barrier / Ibarrier / Barrier_init (comm: Comm)
        header(call) { Header::plain(call, comm) }
        outputs { Pieces::new() }

    bcast / ibcast / bcast_init => Bcast / Ibcast / Bcast_init
        (buffer: *mut c_void, count: c_int, datatype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs {
            if is_root(root, comm) || sits_out(root) {
                smallvec![]
            } else {
                one(buffer, count, datatype, comm)
            }
        }

    reduce / ireduce / reduce_init => Reduce / Ireduce / Reduce_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs { at_root(root, comm, || one(recvbuf, count, datatype, comm)) }

    allreduce / iallreduce / allreduce_init => Allreduce / Iallreduce / Allreduce_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    scan / iscan / scan_init => Scan / Iscan / Scan_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    exscan / iexscan / exscan_init => Exscan / Iexscan / Exscan_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs { one(recvbuf, count, datatype, comm) }

    reduce_scatter_block / ireduce_scatter_block / reduce_scatter_block_init
        => Reduce_scatter_block / Ireduce_scatter_block / Reduce_scatter_block_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), datatype, comm) }
        outputs { one(recvbuf, recvcount, datatype, comm) }

    reduce_scatter / ireduce_scatter / reduce_scatter_init
        => Reduce_scatter / Ireduce_scatter / Reduce_scatter_init
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Datatype, op: Op, comm: Comm)
        // SAFETY: `recvcounts` has an entry per rank.
        header(call) { Header::data(call, 0, 0, unsafe { *recvcounts.add(rank(comm).max(0) as usize) }.into(), datatype, comm) }
        // SAFETY: as above.
        outputs { one(recvbuf, unsafe { *recvcounts.add(rank(comm).max(0) as usize) }, datatype, comm) }

    gather / igather / gather_init => Gather / Igather / Gather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { at_root(root, comm, || one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm)) }

    gatherv / igatherv / gatherv_init => Gatherv / Igatherv / Gatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: at the root, the count and displacement arrays have an entry per rank.
        outputs { at_root(root, comm, || unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) }) }

    scatter / iscatter / scatter_init => Scatter / Iscatter / Scatter_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { scattered(root, recvbuf, || one(recvbuf, recvcount, recvtype, comm)) }

    scatterv / iscatterv / scatterv_init => Scatterv / Iscatterv / Scatterv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, recvcount.into(), recvtype, comm) }
        outputs { scattered(root, recvbuf, || one(recvbuf, recvcount, recvtype, comm)) }

    allgather / iallgather / allgather_init => Allgather / Iallgather / Allgather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm) }

    allgatherv / iallgatherv / allgatherv_init => Allgatherv / Iallgatherv / Allgatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) } }

    alltoall / ialltoall / alltoall_init => Alltoall / Ialltoall / Alltoall_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(peers(comm)), recvtype, comm) }

    alltoallv / ialltoallv / alltoallv_init => Alltoallv / Ialltoallv / Alltoallv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { blocks(recvbuf, recvcounts, rdispls, peers(comm), recvtype, comm) } }

    alltoallw / ialltoallw / alltoallw_init => Alltoallw / Ialltoallw / Alltoallw_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const Datatype, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs { unsafe { typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, peers(comm), comm) } }

    neighbor_allgather / ineighbor_allgather / neighbor_allgather_init
        => Neighbor_allgather / Ineighbor_allgather / Neighbor_allgather_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(in_neighbors(comm)), recvtype, comm) }

    neighbor_allgatherv / ineighbor_allgatherv / neighbor_allgatherv_init
        => Neighbor_allgatherv / Ineighbor_allgatherv / Neighbor_allgatherv_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { blocks(recvbuf, recvcounts, displs, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoall / ineighbor_alltoall / neighbor_alltoall_init
        => Neighbor_alltoall / Ineighbor_alltoall / Neighbor_alltoall_init
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs { one(recvbuf, recvcount.saturating_mul(in_neighbors(comm)), recvtype, comm) }

    neighbor_alltoallv / ineighbor_alltoallv / neighbor_alltoallv_init
        => Neighbor_alltoallv / Ineighbor_alltoallv / Neighbor_alltoallv_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { blocks(recvbuf, recvcounts, rdispls, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoallw / ineighbor_alltoallw / neighbor_alltoallw_init
        => Neighbor_alltoallw / Ineighbor_alltoallw / Neighbor_alltoallw_init
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const i64, sendtypes: *const Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const i64, recvtypes: *const Datatype, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs { unsafe { typed_blocks(recvbuf, recvcounts, rdispls, recvtypes, in_neighbors(comm), comm) } }
}
