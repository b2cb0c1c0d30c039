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
//!
//! A header (what a replay checks the re-executed call against) describes only arguments MPI
//! reads on this rank: the send side of a Gather(v) off its root, the receive side at it, the
//! receive side of an in-place Gatherv or Allgatherv and the send side of an in-place
//! Scatter(v). MPI ignores the others (`MPI_DATATYPE_NULL` is common there), and asking MPI the
//! size of such a datatype aborts the program.

use crate::abi::{self, Comm, Datatype, Op, Request};
use crate::engine::{self, Delivery, Route};
use crate::large::Narrow;
use crate::pmpi::{real, safe, Call};
use crate::record::{Corrupt, Header, Piece, Pieces, Writer};
use smallvec::smallvec;
use std::ffi::{c_int, c_void};

/// The number of ranks data comes from in `comm` (the remote group for an intercommunicator).
fn peers(comm: Comm) -> c_int {
    if safe::comm_test_inter(comm) {
        safe::comm_remote_size(comm)
    } else {
        safe::comm_size(comm)
    }
}

/// Whether this rank receives as a root: the root of an intracommunicator, `MPI_ROOT` on an
/// intercommunicator.
fn is_root(root: c_int, comm: Comm) -> bool {
    root == abi::ROOT
        || (root >= 0 && !safe::comm_test_inter(comm) && root == safe::comm_rank(comm))
}

/// Whether this rank is a non-receiving party of a rooted intercommunicator collective.
fn sits_out(root: c_int) -> bool {
    root == abi::PROC_NULL
}

/// The number of ranks a neighborhood collective receives from on `comm`: its in-degree
/// (`2 * ndims` on a Cartesian topology, the neighbor count on a graph, the in-degree on a
/// distributed graph); 0 without a topology, where MPI refuses the call anyway.
fn in_neighbors(comm: Comm) -> c_int {
    let topology = safe::topo_test(comm);
    let n = if topology == abi::CART {
        safe::cartdim_get(comm).saturating_mul(2)
    } else if topology == abi::GRAPH {
        safe::graph_neighbors_count(comm, safe::comm_rank(comm))
    } else if topology == abi::DIST_GRAPH {
        safe::dist_graph_in_degree(comm)
    } else {
        0
    };
    n.max(0)
}

fn extent(datatype: Datatype) -> i64 {
    safe::type_get_extent(datatype).map_or(0, |(_, extent)| extent)
}

/// `k` blocks of `counts[i]` elements at `displs[i]` extents from `buf` (`int`s for an int
/// form, `MPI_Count`s and `MPI_Aint`s for a large-count form: the counts narrowed by `n`).
///
/// # Safety
/// `counts` and `displs` must hold `k` entries.
#[allow(clippy::too_many_arguments)]
unsafe fn blocks<C: Copy + Into<i64>, D: Copy + Into<i64>>(
    n: &Narrow,
    buf: *mut c_void,
    counts: *const C,
    displs: *const D,
    k: c_int,
    datatype: Datatype,
    comm: Comm,
) -> Pieces {
    let ext = extent(datatype) as isize;
    (0..k.max(0) as usize)
        .map(|i| {
            // SAFETY: the caller's contract.
            let (count, displ) = unsafe { (*counts.add(i), (*displs.add(i)).into()) };
            Piece {
                buf: buf
                    .cast::<u8>()
                    .wrapping_offset((displ as isize).wrapping_mul(ext))
                    .cast(),
                count: n.int(count),
                datatype,
                comm,
            }
        })
        .collect()
}

/// Runs a blocking collective: `outputs` names this rank's output buffers, `run` calls MPI;
/// counted unless `counts` is false.
///
/// # Safety
/// The output buffers must be valid for the call (the MPI function's contract).
unsafe fn collective(
    header: Header,
    comm: Comm,
    outputs: impl FnOnce() -> Pieces,
    run: impl FnOnce() -> c_int,
    counts: bool,
) -> c_int {
    let call = header.call;
    let route = engine::route(call);
    if counts && engine::counted(&route) {
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

/// `k` blocks of `counts[i]` elements of `types[i]` at `displs[i]` bytes from `buf`
/// (displacements as `int`, Alltoallw's, or `MPI_Aint`, Neighbor_alltoallw's and the large-count
/// forms'; the counts narrowed by `n`).
///
/// # Safety
/// The three arrays must hold `k` entries.
unsafe fn typed_blocks<C: Copy + Into<i64>, D: Copy + Into<i64>>(
    n: &Narrow,
    buf: *mut c_void,
    counts: *const C,
    displs: *const D,
    types: *const Datatype,
    k: c_int,
    comm: Comm,
) -> Pieces {
    (0..k.max(0) as usize)
        .map(|i| {
            // SAFETY: the caller's contract.
            let (count, displ, datatype) =
                unsafe { (*counts.add(i), (*displs.add(i)).into(), *types.add(i)) };
            Piece {
                buf: buf.cast::<u8>().wrapping_offset(displ as isize).cast(),
                count: n.int(count),
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

/// The types of the int forms' counts and displacements (`large_type!` gives the `_c`
/// forms'), and of the other arguments, as single names the macros can map.
type Count = c_int;
type Counts = *const c_int;
type Displs = *const c_int;
type Aints = *const i64;
type Buf = *const c_void;
type BufMut = *mut c_void;
type Types = *const Datatype;

/// Defines, for each collective, its blocking wrapper and its nonblocking and persistent ones
/// (the same arguments and a request), and with MPI-4 the three large-count forms named after
/// `large` (`large ()` for none: Barrier has none).
/// `header` and `outputs` are expressions over the arguments: the header's call is the one
/// being made, and the outputs narrow their counts with `n` (see `large`).
macro_rules! collectives {
    ($(
        $blocking:ident / $nonblocking:ident / $persistent:ident
            => $Call:ident / $ICall:ident / $PCall:ident
            large $large:tt
            ($($a:ident : $t:ident),*)
            header($call:ident) $header:block
            outputs($n:ident) $outputs:block
    )*) => {$(
        #[doc = concat!("The wrapper of `MPI_", stringify!($Call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $blocking($($a: $t),*) -> c_int {
            // SAFETY: forwarded.
            unsafe { via::$blocking($($a,)* || real::$Call($($a),*), true) }
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($ICall), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nonblocking($($a: $t,)* request: *mut Request) -> c_int {
            // SAFETY: forwarded.
            unsafe { via::$nonblocking($($a,)* request, |r| real::$ICall($($a,)* r), true) }
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
            let delivery = || Delivery::Outputs({ let $n = &Narrow::default(); $outputs });
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

        #[cfg(mpi4_full)]
        large_collectives! {
            $large ($($a : $t),*) header($call) $header outputs($n) $outputs
        }
    )*
        /// The blocking and nonblocking collectives with the call that reaches MPI given
        /// (`run`): logged or replayed as their wrappers are, and counted unless `counts` is
        /// false (then `run` counts: in-job recovery's covered collectives,
        /// `crate::recovery`).
        pub(crate) mod via {
            use super::*;
            $(
                #[doc = concat!("`MPI_", stringify!($Call), "` (see the module docs).")]
                ///
                /// # Safety
                /// The MPI function's contract; `run` is the MPI call.
                #[allow(clippy::too_many_arguments, unused_variables)] // some only `run` reads
                pub(crate) unsafe fn $blocking($($a: $t,)* run: impl FnOnce() -> c_int, counts: bool) -> c_int {
                    let header = { let $call = Call::$Call; $header };
                    let comm = Comm::from_bits(header.comm);
                    let outputs = || { let $n = &Narrow::default(); $outputs };
                    // SAFETY: forwarded; the outputs are the call's own buffers.
                    unsafe { collective(header, comm, outputs, run, counts) }
                }

                #[doc = concat!("`MPI_", stringify!($ICall), "` (see the module docs).")]
                ///
                /// # Safety
                /// The MPI function's contract; `run` is the MPI call.
                #[allow(clippy::too_many_arguments, unused_variables)] // some only `run` reads
                pub(crate) unsafe fn $nonblocking(
                    $($a: $t,)*
                    request: *mut Request,
                    run: impl FnOnce(*mut Request) -> c_int,
                    counts: bool,
                ) -> c_int {
                    let header = { let $call = Call::$ICall; $header };
                    let comm = Comm::from_bits(header.comm);
                    let delivery = || Delivery::Outputs({ let $n = &Narrow::default(); $outputs });
                    let counted = move || match counts {
                        true => crate::traffic::Counts::Collective(comm),
                        false => crate::traffic::Counts::Nothing,
                    };
                    // SAFETY: forwarded; the outputs are the call's own buffers.
                    unsafe { crate::p2p::post(header, comm, delivery, run, request, counted) }
                }
            )*
        }
    };
}

/// The large-count forms of one collective (see [`collectives`]): each narrows its header's
/// count and its outputs' counts; when they fit it runs as its int form does, with the
/// library's `PMPI_X_c` and the application's arguments as the real call, else it passes
/// through as unreplayable, counted as its int form is (`large`). The outputs are found before the
/// call (see [`narrowed`]), so that the choice is made before MPI is reached.
#[cfg(mpi4_full)]
macro_rules! large_collectives {
    (() $($none:tt)*) => {};
    (
        ($blocking:ident / $nonblocking:ident / $persistent:ident
            => $Call:ident / $ICall:ident / $PCall:ident)
        ($($a:ident : $t:ident),*)
        header($call:ident) $header:block
        outputs($n:ident) $outputs:block
    ) => {
        #[doc = concat!("The wrapper of `MPI_", stringify!($Call), "`: as its int form's when its counts fit.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        // the header's `count.into()` widens an int form's count, a no-op here
        #[allow(clippy::too_many_arguments, clippy::useless_conversion)]
        pub(crate) unsafe fn $blocking($($a: crate::large::large_type!($t)),*) -> c_int {
            // SAFETY: the application's arguments, forwarded unchanged.
            let run = || unsafe { real::$Call($($a),*) };
            let header = { let $call = Call::$Call; $header };
            let comm = Comm::from_bits(header.comm);
            let Some((header, outputs)) = narrowed(header, false, |$n| $outputs) else {
                return crate::large::collective(Call::$Call, run, comm);
            };
            // SAFETY: forwarded; the outputs are the call's own buffers.
            unsafe { collective(header, comm, || outputs, run, true) }
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($ICall), "`: as its int form's when its counts fit.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        // the header's `count.into()` widens an int form's count, a no-op here
        #[allow(clippy::too_many_arguments, clippy::useless_conversion)]
        pub(crate) unsafe fn $nonblocking($($a: crate::large::large_type!($t),)* request: *mut Request) -> c_int {
            let header = { let $call = Call::$ICall; $header };
            let comm = Comm::from_bits(header.comm);
            let Some((header, outputs)) = narrowed(header, false, |$n| $outputs) else {
                // SAFETY: the application's arguments, forwarded unchanged.
                return unsafe {
                    crate::large::posted(
                        Call::$ICall,
                        |r| real::$ICall($($a,)* r),
                        request,
                        || crate::traffic::Counts::Collective(comm),
                    )
                };
            };
            // SAFETY: forwarded; the outputs are the call's own buffers.
            unsafe {
                crate::p2p::post(
                    header,
                    comm,
                    || Delivery::Outputs(outputs),
                    |r| real::$ICall($($a,)* r),
                    request,
                    || crate::traffic::Counts::Collective(comm),
                )
            }
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($PCall), "`: as its int form's when its counts fit.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        // the header's `count.into()` widens an int form's count, a no-op here
        #[allow(clippy::too_many_arguments, clippy::useless_conversion)]
        pub(crate) unsafe fn $persistent(
            $($a: crate::large::large_type!($t),)*
            info: crate::abi::Info,
            request: *mut Request,
        ) -> c_int {
            let header = { let $call = Call::$PCall; $header };
            let comm = Comm::from_bits(header.comm);
            let Some((header, outputs)) = narrowed(header, true, |$n| $outputs) else {
                // SAFETY: the application's arguments, forwarded unchanged.
                return unsafe {
                    crate::large::persistent(
                        Call::$PCall,
                        crate::large::start_refusal!($PCall),
                        |r| real::$PCall($($a,)* info, r),
                        request,
                        || crate::traffic::Counts::Collective(comm),
                    )
                };
            };
            // SAFETY: forwarded; the outputs are the call's own buffers, which MPI-4 requires
            // to stay valid until the request is freed.
            unsafe {
                crate::p2p::make_persistent(
                    header,
                    comm,
                    || Delivery::Outputs(outputs),
                    |r| real::$PCall($($a,)* info, r),
                    request,
                    || crate::traffic::Counts::Collective(comm),
                )
            }
        }
    };
}

/// A large-count collective's header and outputs, `None` when a count they hold does not fit
/// in an `int`. The outputs are found only where they can be used: with the thread logging,
/// or `always` (a persistent request remembers them for its starts); on a thread that does not
/// log the call goes straight to MPI, so nothing is read or asked of MPI for them.
#[cfg(mpi4_full)]
fn narrowed(
    header: Header,
    always: bool,
    outputs: impl FnOnce(&Narrow) -> Pieces,
) -> Option<(Header, Pieces)> {
    if !always && cd_core::log_mode() == cd_core::LogMode::Off {
        return Some((header, Pieces::new()));
    }
    let n = Narrow::default();
    n.int(header.count);
    let outputs = outputs(&n);
    n.fits().then_some((header, outputs))
}

collectives! {
    barrier / ibarrier / barrier_init => Barrier / Ibarrier / Barrier_init large ()
        (comm: Comm)
        header(call) { Header::plain(call, comm) }
        outputs(_n) { Pieces::new() }

    bcast / ibcast / bcast_init => Bcast / Ibcast / Bcast_init
        large (bcast_c / ibcast_c / bcast_init_c => Bcast_c / Ibcast_c / Bcast_init_c)
        (buffer: BufMut, count: Count, datatype: Datatype, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs(n) {
            if is_root(root, comm) || sits_out(root) {
                smallvec![]
            } else {
                one(buffer, n.int(count), datatype, comm)
            }
        }

    reduce / ireduce / reduce_init => Reduce / Ireduce / Reduce_init
        large (reduce_c / ireduce_c / reduce_init_c => Reduce_c / Ireduce_c / Reduce_init_c)
        (sendbuf: Buf, recvbuf: BufMut, count: Count, datatype: Datatype, op: Op, root: c_int, comm: Comm)
        header(call) { Header::data(call, root, 0, count.into(), datatype, comm) }
        outputs(n) { at_root(root, comm, || one(recvbuf, n.int(count), datatype, comm)) }

    allreduce / iallreduce / allreduce_init => Allreduce / Iallreduce / Allreduce_init
        large (allreduce_c / iallreduce_c / allreduce_init_c => Allreduce_c / Iallreduce_c / Allreduce_init_c)
        (sendbuf: Buf, recvbuf: BufMut, count: Count, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs(n) { one(recvbuf, n.int(count), datatype, comm) }

    scan / iscan / scan_init => Scan / Iscan / Scan_init
        large (scan_c / iscan_c / scan_init_c => Scan_c / Iscan_c / Scan_init_c)
        (sendbuf: Buf, recvbuf: BufMut, count: Count, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs(n) { one(recvbuf, n.int(count), datatype, comm) }

    exscan / iexscan / exscan_init => Exscan / Iexscan / Exscan_init
        large (exscan_c / iexscan_c / exscan_init_c => Exscan_c / Iexscan_c / Exscan_init_c)
        (sendbuf: Buf, recvbuf: BufMut, count: Count, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, count.into(), datatype, comm) }
        outputs(n) { one(recvbuf, n.int(count), datatype, comm) }

    reduce_scatter_block / ireduce_scatter_block / reduce_scatter_block_init
        => Reduce_scatter_block / Ireduce_scatter_block / Reduce_scatter_block_init
        large (reduce_scatter_block_c / ireduce_scatter_block_c / reduce_scatter_block_init_c
            => Reduce_scatter_block_c / Ireduce_scatter_block_c / Reduce_scatter_block_init_c)
        (sendbuf: Buf, recvbuf: BufMut, recvcount: Count, datatype: Datatype, op: Op, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), datatype, comm) }
        outputs(n) { one(recvbuf, n.int(recvcount), datatype, comm) }

    reduce_scatter / ireduce_scatter / reduce_scatter_init
        => Reduce_scatter / Ireduce_scatter / Reduce_scatter_init
        large (reduce_scatter_c / ireduce_scatter_c / reduce_scatter_init_c
            => Reduce_scatter_c / Ireduce_scatter_c / Reduce_scatter_init_c)
        (sendbuf: Buf, recvbuf: BufMut, recvcounts: Counts, datatype: Datatype, op: Op, comm: Comm)
        // SAFETY: `recvcounts` has an entry per rank.
        header(call) { Header::data(call, 0, 0, unsafe { *recvcounts.add(safe::comm_rank(comm).max(0) as usize) }.into(), datatype, comm) }
        // SAFETY: as above.
        outputs(n) { one(recvbuf, n.int(unsafe { *recvcounts.add(safe::comm_rank(comm).max(0) as usize) }), datatype, comm) }

    gather / igather / gather_init => Gather / Igather / Gather_init
        large (gather_c / igather_c / gather_init_c => Gather_c / Igather_c / Gather_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) {
            if sits_out(root) {
                Header::plain(call, comm)
            } else if is_root(root, comm) {
                Header::data(call, root, 0, recvcount.into(), recvtype, comm)
            } else {
                Header::data(call, root, 0, sendcount.into(), sendtype, comm)
            }
        }
        outputs(n) { at_root(root, comm, || one(recvbuf, n.times(recvcount, peers(comm)), recvtype, comm)) }

    gatherv / igatherv / gatherv_init => Gatherv / Igatherv / Gatherv_init
        large (gatherv_c / igatherv_c / gatherv_init_c => Gatherv_c / Igatherv_c / Gatherv_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcounts: Counts, displs: Displs, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) {
            if abi::is_in_place(sendbuf) {
                // SAFETY: MPI_IN_PLACE is only allowed at an intracommunicator's root, where
                // the counts have an entry per rank.
                let own = unsafe { *recvcounts.add(safe::comm_rank(comm).max(0) as usize) };
                Header::data(call, root, 0, own.into(), recvtype, comm)
            } else if sits_out(root) {
                Header::plain(call, comm)
            } else if root == abi::ROOT {
                Header::data(call, root, 0, 0, recvtype, comm)
            } else {
                Header::data(call, root, 0, sendcount.into(), sendtype, comm)
            }
        }
        // SAFETY: at the root, the count and displacement arrays have an entry per rank.
        outputs(n) { at_root(root, comm, || unsafe { blocks(n, recvbuf, recvcounts, displs, peers(comm), recvtype, comm) }) }

    scatter / iscatter / scatter_init => Scatter / Iscatter / Scatter_init
        large (scatter_c / iscatter_c / scatter_init_c => Scatter_c / Iscatter_c / Scatter_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) {
            if sits_out(root) {
                Header::plain(call, comm)
            } else if root == abi::ROOT || abi::is_in_place(recvbuf) {
                Header::data(call, root, 0, sendcount.into(), sendtype, comm)
            } else {
                Header::data(call, root, 0, recvcount.into(), recvtype, comm)
            }
        }
        outputs(n) { scattered(root, recvbuf, || one(recvbuf, n.int(recvcount), recvtype, comm)) }

    scatterv / iscatterv / scatterv_init => Scatterv / Iscatterv / Scatterv_init
        large (scatterv_c / iscatterv_c / scatterv_init_c => Scatterv_c / Iscatterv_c / Scatterv_init_c)
        (sendbuf: Buf, sendcounts: Counts, displs: Displs, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, root: c_int, comm: Comm)
        header(call) {
            if sits_out(root) {
                Header::plain(call, comm)
            } else if root == abi::ROOT || abi::is_in_place(recvbuf) {
                Header::data(call, root, 0, 0, sendtype, comm)
            } else {
                Header::data(call, root, 0, recvcount.into(), recvtype, comm)
            }
        }
        outputs(n) { scattered(root, recvbuf, || one(recvbuf, n.int(recvcount), recvtype, comm)) }

    allgather / iallgather / allgather_init => Allgather / Iallgather / Allgather_init
        large (allgather_c / iallgather_c / allgather_init_c => Allgather_c / Iallgather_c / Allgather_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs(n) { one(recvbuf, n.times(recvcount, peers(comm)), recvtype, comm) }

    allgatherv / iallgatherv / allgatherv_init => Allgatherv / Iallgatherv / Allgatherv_init
        large (allgatherv_c / iallgatherv_c / allgatherv_init_c => Allgatherv_c / Iallgatherv_c / Allgatherv_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcounts: Counts, displs: Displs, recvtype: Datatype, comm: Comm)
        header(call) {
            if abi::is_in_place(sendbuf) {
                // SAFETY: MPI_IN_PLACE is only allowed on an intracommunicator, where the
                // counts have an entry per rank.
                let own = unsafe { *recvcounts.add(safe::comm_rank(comm).max(0) as usize) };
                Header::data(call, 0, 0, own.into(), recvtype, comm)
            } else {
                Header::data(call, 0, 0, sendcount.into(), sendtype, comm)
            }
        }
        // SAFETY: the arrays have an entry per rank.
        outputs(n) { unsafe { blocks(n, recvbuf, recvcounts, displs, peers(comm), recvtype, comm) } }

    alltoall / ialltoall / alltoall_init => Alltoall / Ialltoall / Alltoall_init
        large (alltoall_c / ialltoall_c / alltoall_init_c => Alltoall_c / Ialltoall_c / Alltoall_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs(n) { one(recvbuf, n.times(recvcount, peers(comm)), recvtype, comm) }

    alltoallv / ialltoallv / alltoallv_init => Alltoallv / Ialltoallv / Alltoallv_init
        large (alltoallv_c / ialltoallv_c / alltoallv_init_c => Alltoallv_c / Ialltoallv_c / Alltoallv_init_c)
        (sendbuf: Buf, sendcounts: Counts, sdispls: Displs, sendtype: Datatype, recvbuf: BufMut, recvcounts: Counts, rdispls: Displs, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs(n) { unsafe { blocks(n, recvbuf, recvcounts, rdispls, peers(comm), recvtype, comm) } }

    alltoallw / ialltoallw / alltoallw_init => Alltoallw / Ialltoallw / Alltoallw_init
        large (alltoallw_c / ialltoallw_c / alltoallw_init_c => Alltoallw_c / Ialltoallw_c / Alltoallw_init_c)
        (sendbuf: Buf, sendcounts: Counts, sdispls: Displs, sendtypes: Types, recvbuf: BufMut, recvcounts: Counts, rdispls: Displs, recvtypes: Types, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per rank.
        outputs(n) { unsafe { typed_blocks(n, recvbuf, recvcounts, rdispls, recvtypes, peers(comm), comm) } }

    neighbor_allgather / ineighbor_allgather / neighbor_allgather_init
        => Neighbor_allgather / Ineighbor_allgather / Neighbor_allgather_init
        large (neighbor_allgather_c / ineighbor_allgather_c / neighbor_allgather_init_c
            => Neighbor_allgather_c / Ineighbor_allgather_c / Neighbor_allgather_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs(n) { one(recvbuf, n.times(recvcount, in_neighbors(comm)), recvtype, comm) }

    neighbor_allgatherv / ineighbor_allgatherv / neighbor_allgatherv_init
        => Neighbor_allgatherv / Ineighbor_allgatherv / Neighbor_allgatherv_init
        large (neighbor_allgatherv_c / ineighbor_allgatherv_c / neighbor_allgatherv_init_c
            => Neighbor_allgatherv_c / Ineighbor_allgatherv_c / Neighbor_allgatherv_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcounts: Counts, displs: Displs, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, sendcount.into(), sendtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs(n) { unsafe { blocks(n, recvbuf, recvcounts, displs, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoall / ineighbor_alltoall / neighbor_alltoall_init
        => Neighbor_alltoall / Ineighbor_alltoall / Neighbor_alltoall_init
        large (neighbor_alltoall_c / ineighbor_alltoall_c / neighbor_alltoall_init_c
            => Neighbor_alltoall_c / Ineighbor_alltoall_c / Neighbor_alltoall_init_c)
        (sendbuf: Buf, sendcount: Count, sendtype: Datatype, recvbuf: BufMut, recvcount: Count, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, recvcount.into(), recvtype, comm) }
        outputs(n) { one(recvbuf, n.times(recvcount, in_neighbors(comm)), recvtype, comm) }

    neighbor_alltoallv / ineighbor_alltoallv / neighbor_alltoallv_init
        => Neighbor_alltoallv / Ineighbor_alltoallv / Neighbor_alltoallv_init
        large (neighbor_alltoallv_c / ineighbor_alltoallv_c / neighbor_alltoallv_init_c
            => Neighbor_alltoallv_c / Ineighbor_alltoallv_c / Neighbor_alltoallv_init_c)
        (sendbuf: Buf, sendcounts: Counts, sdispls: Displs, sendtype: Datatype, recvbuf: BufMut, recvcounts: Counts, rdispls: Displs, recvtype: Datatype, comm: Comm)
        header(call) { Header::data(call, 0, 0, 0, recvtype, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs(n) { unsafe { blocks(n, recvbuf, recvcounts, rdispls, in_neighbors(comm), recvtype, comm) } }

    neighbor_alltoallw / ineighbor_alltoallw / neighbor_alltoallw_init
        => Neighbor_alltoallw / Ineighbor_alltoallw / Neighbor_alltoallw_init
        large (neighbor_alltoallw_c / ineighbor_alltoallw_c / neighbor_alltoallw_init_c
            => Neighbor_alltoallw_c / Ineighbor_alltoallw_c / Neighbor_alltoallw_init_c)
        (sendbuf: Buf, sendcounts: Counts, sdispls: Aints, sendtypes: Types, recvbuf: BufMut, recvcounts: Counts, rdispls: Aints, recvtypes: Types, comm: Comm)
        header(call) { Header::plain(call, comm) }
        // SAFETY: the arrays have an entry per in-neighbor.
        outputs(n) { unsafe { typed_blocks(n, recvbuf, recvcounts, rdispls, recvtypes, in_neighbors(comm), comm) } }
}
