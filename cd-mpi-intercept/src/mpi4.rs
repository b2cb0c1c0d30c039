//! MPI-4's `MPI_Isendrecv(_replace)`, which MPICH 4 and Open MPI 5 have and Open MPI 4.1
//! lacks. Compiled only with `cfg(mpi4)`, which build.rs sets for a library whose headers
//! declare them: a build against an older library neither exports these symbols nor resolves
//! their `PMPI_X`, so no wrapper can reach a function the library lacks. (The other MPI-4
//! calls: the persistent collectives `MPI_X_init` are generated with their blocking and
//! nonblocking twins in `coll`, under the same `cfg`; the communicator makers are in `comm`;
//! partitioned communication is with the other unreplayable calls in `exports`.)
//!
//! `MPI_Isendrecv(_replace)` is a post whose send half is an event and whose receive buffer is
//! logged whole by the completion call, like a nonblocking collective's output: MPICH 4.0.2
//! completes it through a schedule and leaves its status unfilled (source, tag and count all
//! 0 for a 2-element receive from rank 1, checked without libcd), so the status cannot say
//! how much arrived. Memory past the message is logged as MPI left it, which a deterministic
//! re-execution has there too. The record's header holds the send side; the receive side
//! (source, tag, count, the datatype's size) is recorded after it and compared at replay, as
//! `MPI_Sendrecv`'s is. Replayed, the request is virtual and completes from the log (with the
//! logged status), and the send is dropped. Their large-count forms (`_c`) share the bodies
//! (see `large`), and with a count beyond `INT_MAX` count as the int forms do.

use crate::abi::{Comm, Datatype, Request};
use crate::coll::one;
use crate::engine::Delivery;
use crate::p2p::{post_checked, receives};
use crate::pmpi::{real, Call};
use crate::record::Header;
use crate::traffic::{self, Counts};
use std::ffi::{c_int, c_void};

/// What an `MPI_Isendrecv(_replace)` counts when messages are counted: its send at once,
/// its receive pending until complete.
fn send_and_receive(comm: Comm, dest: c_int) -> Counts {
    traffic::sent(comm, dest);
    Counts::Receive(comm)
}

/// The shared body of `MPI_Isendrecv(_replace)` and their large-count forms: `header` holds
/// the send side, `recv` (buffer, count, datatype) and `source`/`tag` the receive side, which
/// a re-execution must repeat (with the datatype's size) and whose buffer the completion logs.
///
/// # Safety
/// `run` is the MPI call with its contract; `request` must be writable.
unsafe fn exchange(
    header: Header,
    recv: (*mut c_void, c_int, Datatype),
    source: c_int,
    tag: c_int,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
) -> c_int {
    let (comm, dest) = (Comm::from_bits(header.comm), header.peer);
    let (buf, count, datatype) = recv;
    let size = c_int::try_from(crate::types::size(datatype)).unwrap_or(c_int::MAX);
    let delivery = || Delivery::Outputs(one(buf, count, datatype, comm));
    // SAFETY: forwarded.
    unsafe {
        post_checked(
            header,
            &[source, tag, count, size],
            comm,
            delivery,
            run,
            request,
            || send_and_receive(comm, dest),
        )
    }
}

receives! {
    /// `MPI_Isendrecv`: the send half an event, the receive half delivered at completion.
    isendrecv / isendrecv_c => Isendrecv / Isendrecv_c
        (sendbuf: *const c_void | *const c_void, sendcount: c_int | i64, sendtype: Datatype | Datatype, dest: c_int | c_int, sendtag: c_int | c_int,
         recvbuf: *mut c_void | *mut c_void, recvcount: c_int | i64, recvtype: Datatype | Datatype, source: c_int | c_int, recvtag: c_int | c_int, comm: Comm | Comm)
        narrow(sendcount, recvcount) out(request: *mut Request)
        // SAFETY: forwarded.
        beyond { unsafe { crate::large::posted(call, run, request, || send_and_receive(comm, dest)) } }
        |call, run| {
            let header = Header::data(call, dest, sendtag, sendcount.into(), sendtype, comm);
            // SAFETY: forwarded.
            unsafe { exchange(header, (recvbuf, recvcount, recvtype), source, recvtag, run, request) }
        }

    /// `MPI_Isendrecv_replace`.
    isendrecv_replace / isendrecv_replace_c => Isendrecv_replace / Isendrecv_replace_c
        (buf: *mut c_void | *mut c_void, count: c_int | i64, datatype: Datatype | Datatype, dest: c_int | c_int, sendtag: c_int | c_int,
         source: c_int | c_int, recvtag: c_int | c_int, comm: Comm | Comm)
        narrow(count) out(request: *mut Request)
        // SAFETY: forwarded.
        beyond { unsafe { crate::large::posted(call, run, request, || send_and_receive(comm, dest)) } }
        |call, run| {
            let header = Header::data(call, dest, sendtag, count.into(), datatype, comm);
            // SAFETY: forwarded.
            unsafe { exchange(header, (buf, count, datatype), source, recvtag, run, request) }
        }
}
