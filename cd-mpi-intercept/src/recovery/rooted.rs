//! `MPI_Reduce` and `MPI_Gather` while a loss is contained: run as their all-forms
//! (`MPI_Allreduce`, `MPI_Allgather`), so that every rank holds the result.
//!
//! A rooted collective's result lives at its root alone. If the root is lost, its replacement
//! re-executes the call, and no survivor could serve the result: the survivors' contributions
//! are gone from MPI. Computed as the all-form, every rank holds the result, so any survivor
//! serves it like any collective of [`super::calls`]; a rank other than the root writes it into
//! a scratch buffer, which the journal keeps. That costs an all-form's traffic instead of a
//! rooted one's, only while recovery keeps (a ULFM job, from `MPI_Init`).
//!
//! Covered when the buffers are predefined contiguous datatypes, outside `MPI_IN_PLACE` (every
//! rank would have to pass it to the all-form); other calls take the ordinary path, and a loss
//! after them ends the job clearly (the repair's completeness check).

use super::calls::{self, Chan};
use crate::abi::{self, Comm, Datatype, Op};
use crate::pmpi::{real, safe, Call};
use crate::types;
use std::ffi::{c_int, c_void};

/// The chan of a covered rooted call whose result, at a rank other than the root, takes
/// `count` elements of `datatype` (a predefined contiguous one), with a scratch buffer for
/// that rank; `None` when not covered.
fn covered(
    comm: Comm,
    sendbuf: *const c_void,
    count: c_int,
    datatype: Datatype,
) -> Option<(Chan, Vec<u8>)> {
    if sendbuf.addr() == abi::IN_PLACE {
        return None;
    }
    let chan = calls::covers(comm)?;
    let kind = types::kind(datatype);
    let bytes = types::raw_bytes(count, kind.size).filter(|_| kind.raw)?;
    Some((chan, vec![0u8; bytes]))
}

/// `MPI_Reduce`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    root: c_int,
    comm: Comm,
) -> c_int {
    let Some((chan, mut scratch)) = covered(comm, sendbuf, count, datatype) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::reduce(sendbuf, recvbuf, count, datatype, op, root, comm) };
    };
    let result = if safe::comm_rank(comm) == root {
        recvbuf
    } else {
        scratch.as_mut_ptr().cast()
    };
    // SAFETY: `result` holds `count` elements of `datatype` (the caller's at the root, else
    // the scratch buffer sized for them).
    unsafe {
        calls::collective(Call::Reduce, chan, result, count, datatype, false, |c| {
            real::Allreduce(sendbuf, result, count, datatype, op, c)
        })
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
    // off the root only the send side is significant: the result is `size` blocks of it
    let blocks = sendcount.saturating_mul(safe::comm_size(comm));
    let Some((chan, mut scratch)) = covered(comm, sendbuf, blocks, sendtype) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::gather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    };
    let (result, count, datatype) = if safe::comm_rank(comm) == root {
        (
            recvbuf,
            recvcount.saturating_mul(safe::comm_size(comm)),
            recvtype,
        )
    } else {
        (scratch.as_mut_ptr().cast(), blocks, sendtype)
    };
    let block = if result == recvbuf {
        recvcount
    } else {
        sendcount
    };
    // SAFETY: `result` holds `count` elements of `datatype` (the caller's at the root, else
    // the scratch buffer sized for them).
    unsafe {
        calls::collective(Call::Gather, chan, result, count, datatype, false, |c| {
            real::Allgather(sendbuf, sendcount, sendtype, result, block, datatype, c)
        })
    }
}
