//! Collective calls: recording logs what this rank received (its output buffers, packed with
//! the application's datatypes); re-executed, the outputs are written from the log and MPI is
//! not called, so the other ranks never see the re-execution.
//!
//! Output buffers per call (for intercommunicators the counts follow the remote group, and a
//! root passing `MPI_ROOT` or `MPI_PROC_NULL` receives nothing where MPI says so):
//! Bcast: the buffer, except at the root; Reduce: `recvbuf` at the root; Allreduce, Scan,
//! Exscan, Reduce_scatter(_block): `recvbuf`; Gather(v): `recvbuf` at the root;
//! Scatter(v): `recvbuf` (not at a root passing `MPI_IN_PLACE`); Allgather(v), Alltoall(v):
//! `recvbuf`; Barrier: nothing.

use crate::abi::{self, Comm, Datatype, Op};
use crate::engine::{self, Route};
use crate::exports::{real, Call};
use crate::record::{Corrupt, Header, Piece, Writer};
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
) -> Vec<Piece> {
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

/// Runs a collective: `outputs` names this rank's output buffers, `run` calls MPI.
///
/// # Safety
/// The output buffers must be valid for the call (the MPI function's contract).
unsafe fn collective(
    call: Call,
    header: Header,
    comm: Comm,
    outputs: impl FnOnce() -> Vec<Piece>,
    run: impl FnOnce() -> c_int,
) -> c_int {
    match engine::route(call) {
        Route::Direct => run(),
        Route::Record(_guard) => {
            let rc = run();
            if rc == abi::SUCCESS {
                let outputs = outputs();
                let mut w = Writer::new(header);
                w.int(outputs.len() as c_int);
                for piece in outputs {
                    w.piece(piece);
                }
                // SAFETY: the collective completed into its outputs.
                unsafe { engine::log(w) };
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

fn one(buf: *mut c_void, count: c_int, datatype: Datatype, comm: Comm) -> Vec<Piece> {
    vec![Piece {
        buf,
        count,
        datatype,
        comm,
    }]
}

/// `MPI_Barrier`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn barrier(comm: Comm) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        collective(
            Call::Barrier,
            Header::plain(Call::Barrier, comm),
            comm,
            Vec::new,
            || real::Barrier(comm),
        )
    }
}

/// `MPI_Bcast`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Datatype,
    root: c_int,
    comm: Comm,
) -> c_int {
    let header = Header::data(Call::Bcast, root, 0, count.into(), datatype, comm);
    let outputs = || {
        if is_root(root, comm) || sits_out(root) {
            vec![]
        } else {
            one(buffer, count, datatype, comm)
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Bcast, header, comm, outputs, || {
            real::Bcast(buffer, count, datatype, root, comm)
        })
    }
}

/// `MPI_Reduce`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    root: c_int,
    comm: Comm,
) -> c_int {
    let header = Header::data(Call::Reduce, root, 0, count.into(), datatype, comm);
    let outputs = || {
        if is_root(root, comm) {
            one(recvbuf, count, datatype, comm)
        } else {
            vec![]
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Reduce, header, comm, outputs, || {
            real::Reduce(sendbuf, recvbuf, count, datatype, op, root, comm)
        })
    }
}

macro_rules! reductions {
    ($($fn:ident => $call:ident;)*) => {$(
        /// The wrapper of the MPI reduction of this name: `recvbuf` is the output.
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Datatype, op: Op, comm: Comm) -> c_int {
            let header = Header::data(Call::$call, 0, 0, count.into(), datatype, comm);
            // SAFETY: forwarded.
            unsafe { collective(Call::$call, header, comm, || one(recvbuf, count, datatype, comm), || real::$call(sendbuf, recvbuf, count, datatype, op, comm)) }
        }
    )*};
}

reductions! {
    allreduce => Allreduce;
    scan => Scan;
    exscan => Exscan;
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
    let header = Header::data(
        Call::Reduce_scatter_block,
        0,
        0,
        recvcount.into(),
        datatype,
        comm,
    );
    // SAFETY: forwarded.
    unsafe {
        collective(
            Call::Reduce_scatter_block,
            header,
            comm,
            || one(recvbuf, recvcount, datatype, comm),
            || real::Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm),
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
    let me = rank(comm).max(0) as usize;
    // SAFETY: `recvcounts` has an entry per rank.
    let mine = unsafe { *recvcounts.add(me) };
    let header = Header::data(Call::Reduce_scatter, 0, 0, mine.into(), datatype, comm);
    // SAFETY: forwarded.
    unsafe {
        collective(
            Call::Reduce_scatter,
            header,
            comm,
            || one(recvbuf, mine, datatype, comm),
            || real::Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm),
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
    let header = Header::data(Call::Gather, root, 0, recvcount.into(), recvtype, comm);
    let outputs = || {
        if is_root(root, comm) {
            one(
                recvbuf,
                recvcount.saturating_mul(peers(comm)),
                recvtype,
                comm,
            )
        } else {
            vec![]
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Gather, header, comm, outputs, || {
            real::Gather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        })
    }
}

/// `MPI_Gatherv`.
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
    let header = Header::data(Call::Gatherv, root, 0, sendcount.into(), sendtype, comm);
    // SAFETY: at the root, the count and displacement arrays have an entry per rank.
    let outputs = || {
        if is_root(root, comm) {
            unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) }
        } else {
            vec![]
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Gatherv, header, comm, outputs, || {
            real::Gatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
            )
        })
    }
}

/// `MPI_Scatter`.
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
    let header = Header::data(Call::Scatter, root, 0, recvcount.into(), recvtype, comm);
    let outputs = || {
        if sits_out(root) || root == abi::ROOT || abi::is_in_place(recvbuf) {
            vec![]
        } else {
            one(recvbuf, recvcount, recvtype, comm)
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Scatter, header, comm, outputs, || {
            real::Scatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        })
    }
}

/// `MPI_Scatterv`.
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
    let header = Header::data(Call::Scatterv, root, 0, recvcount.into(), recvtype, comm);
    let outputs = || {
        if sits_out(root) || root == abi::ROOT || abi::is_in_place(recvbuf) {
            vec![]
        } else {
            one(recvbuf, recvcount, recvtype, comm)
        }
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Scatterv, header, comm, outputs, || {
            real::Scatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        })
    }
}

/// `MPI_Allgather`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let header = Header::data(Call::Allgather, 0, 0, recvcount.into(), recvtype, comm);
    let outputs = || {
        one(
            recvbuf,
            recvcount.saturating_mul(peers(comm)),
            recvtype,
            comm,
        )
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Allgather, header, comm, outputs, || {
            real::Allgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        })
    }
}

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
    let header = Header::data(Call::Allgatherv, 0, 0, sendcount.into(), sendtype, comm);
    // SAFETY: the arrays have an entry per rank.
    let outputs = || unsafe { blocks(recvbuf, recvcounts, displs, peers(comm), recvtype, comm) };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Allgatherv, header, comm, outputs, || {
            real::Allgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
            )
        })
    }
}

/// `MPI_Alltoall`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let header = Header::data(Call::Alltoall, 0, 0, recvcount.into(), recvtype, comm);
    let outputs = || {
        one(
            recvbuf,
            recvcount.saturating_mul(peers(comm)),
            recvtype,
            comm,
        )
    };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Alltoall, header, comm, outputs, || {
            real::Alltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        })
    }
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
    let header = Header::data(Call::Alltoallv, 0, 0, 0, recvtype, comm);
    // SAFETY: the arrays have an entry per rank.
    let outputs = || unsafe { blocks(recvbuf, recvcounts, rdispls, peers(comm), recvtype, comm) };
    // SAFETY: forwarded.
    unsafe {
        collective(Call::Alltoallv, header, comm, outputs, || {
            real::Alltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm,
            )
        })
    }
}
