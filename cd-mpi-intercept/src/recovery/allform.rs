//! What the collectives run as all-forms share ([`super::rooted`], [`super::reduced`],
//! [`super::spread`]): whether they are ([`transformed`]), scratch memory for a whole result
//! a rank does not keep ([`Scratch`]), typed copies between a result and the caller's buffer,
//! and the run through [`super::calls::collective`] when recovery takes the call.
//!
//! A collective whose result is not the same on every rank (at a root alone, or a piece per
//! rank) could not be served to a replacement: the survivors' contributions are gone from MPI
//! once it completed. Run as a collective whose whole result every rank holds, any survivor
//! serves it like any collective of [`super::calls`], and each rank takes its part from it.

use super::calls::{self, Chan};
use crate::abi::{self, Comm, Datatype};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// Whether collectives on `comm` run as their all-forms. Every rank must call the same
/// collective, so this depends only on what every rank shares (a ULFM job with recovery on,
/// an intracommunicator), not on a rank's own state: a rank whose call recovery does not take
/// (containment stopped, say) still runs the all-form, through the ordinary wrappers.
/// An intercommunicator's collectives are not transformed: their results differ between its
/// two groups, so in-job recovery does not cover them at all.
pub(super) fn transformed(comm: Comm) -> bool {
    crate::errors::repair_wanted() && !crate::boundary::inside() && !safe::comm_test_inter(comm)
}

/// Memory for `count` elements of `datatype`: its bytes, and where element 0 starts in them
/// (it spans the datatype's true extent, so any datatype fits).
pub(super) struct Scratch {
    bytes: Vec<u8>,
    /// `-true_lb`: the offset of the buffer address MPI is given.
    origin: isize,
}

impl Scratch {
    pub(super) fn new(count: c_int, datatype: Datatype) -> Scratch {
        let (lb, extent) = safe::type_get_true_extent(datatype).unwrap_or((0, 0));
        let (_, stride) = safe::type_get_extent(datatype).unwrap_or((0, 0));
        let len = match usize::try_from(count) {
            Ok(0) | Err(_) => 0,
            Ok(n) => (n as i64 - 1)
                .saturating_mul(stride)
                .saturating_add(extent)
                .max(0) as usize,
        };
        Scratch {
            bytes: vec![0u8; len],
            origin: -(lb as isize),
        }
    }

    /// The buffer address MPI is given.
    pub(super) fn buf(&mut self) -> *mut c_void {
        self.bytes.as_mut_ptr().wrapping_offset(self.origin).cast()
    }

    /// A copy of the memory `count` elements of `datatype` at `buf` span.
    ///
    /// # Safety
    /// `buf` holds `count` elements of `datatype`.
    pub(super) unsafe fn copy_of(buf: *const c_void, count: c_int, datatype: Datatype) -> Scratch {
        let mut scratch = Scratch::new(count, datatype);
        let from = buf.cast::<u8>().wrapping_offset(-scratch.origin);
        // SAFETY: the elements at `buf` span these bytes (the caller's contract); `bytes` has
        // room for them.
        unsafe {
            std::ptr::copy_nonoverlapping(from, scratch.bytes.as_mut_ptr(), scratch.bytes.len())
        };
        scratch
    }
}

/// A block of a collective's send or receive buffer: where it starts, its count and its
/// datatype.
pub(super) type Block = (*mut c_void, c_int, Datatype);

/// The address `offset` bytes from `buf` (`MPI_Alltoallw`'s displacements are in bytes).
pub(super) fn byte_at(buf: *const c_void, offset: i64) -> *mut c_void {
    buf.cast::<u8>()
        .wrapping_offset(offset as isize)
        .cast_mut()
        .cast()
}

/// Where element `index` of elements of `datatype` starts in `buf` (extents from it).
pub(super) fn element_at(buf: *const c_void, datatype: Datatype, index: i64) -> *mut c_void {
    let (_, stride) = safe::type_get_extent(datatype).unwrap_or((0, 0));
    byte_at(buf, stride.saturating_mul(index))
}

/// Where block `index` of blocks of `count` elements of `datatype` starts in `buf`.
pub(super) fn block_at(
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    index: c_int,
) -> *mut c_void {
    element_at(
        buf,
        datatype,
        i64::from(count).saturating_mul(i64::from(index)),
    )
}

/// The `n` counts, displacements or datatypes at `array` (none when it is null).
///
/// # Safety
/// `array` holds `n` of them (the MPI call's contract for an argument significant here).
pub(super) unsafe fn entries<'a, T>(array: *const T, n: c_int) -> &'a [T] {
    match usize::try_from(n) {
        Ok(n) if n > 0 && !array.is_null() => {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(array, n) }
        }
        _ => &[],
    }
}

/// The blocks of `counts` elements of `datatype` at `displs` elements from `buf`, `n` of each
/// (the v-forms' layout).
///
/// # Safety
/// The two arrays hold `n` entries (the MPI call's contract for an argument significant here).
pub(super) unsafe fn blocks(
    buf: *const c_void,
    counts: *const c_int,
    displs: *const c_int,
    datatype: Datatype,
    n: c_int,
) -> Vec<Block> {
    // SAFETY: the caller's contract.
    let (counts, displs) = unsafe { (entries(counts, n), entries(displs, n)) };
    let at = |(&count, &displ): (&c_int, &c_int)| {
        (element_at(buf, datatype, i64::from(displ)), count, datatype)
    };
    counts.iter().zip(displs).map(at).collect()
}

/// The blocks of `counts` elements of `types` at `displs` bytes from `buf`, `n` of each
/// (`MPI_Alltoallw`'s displacements are `int`, `MPI_Neighbor_alltoallw`'s `MPI_Aint`).
///
/// # Safety
/// The three arrays hold `n` entries (the MPI call's contract for an argument significant here).
pub(super) unsafe fn typed_blocks<D: Copy + Into<i64>>(
    buf: *const c_void,
    counts: *const c_int,
    displs: *const D,
    types: *const Datatype,
    n: c_int,
) -> Vec<Block> {
    // SAFETY: the caller's contract.
    let (counts, displs, types) =
        unsafe { (entries(counts, n), entries(displs, n), entries(types, n)) };
    counts
        .iter()
        .zip(displs)
        .zip(types)
        .map(|((&count, &displ), &datatype)| (byte_at(buf, displ.into()), count, datatype))
        .collect()
}

/// The displacements of blocks of `counts` elements laid one after another, and their total;
/// `None` when it does not fit an `int` (then every rank, which has the same counts, says so).
pub(super) fn packed_displs(counts: &[c_int]) -> Option<(Vec<c_int>, c_int)> {
    let mut displs = Vec::with_capacity(counts.len());
    let mut total: c_int = 0;
    for &count in counts {
        displs.push(total);
        total = total.checked_add(count.max(0))?;
    }
    Some((displs, total))
}

/// Copies `count` of `sendtype` at `from` to `count2` of `recvtype` at `to` (matching
/// signatures) on `MPI_COMM_SELF`.
///
/// # Safety
/// The buffers hold their elements.
pub(super) unsafe fn copy_typed(
    from: *const c_void,
    count: c_int,
    sendtype: Datatype,
    to: *mut c_void,
    count2: c_int,
    recvtype: Datatype,
) -> c_int {
    let own = abi::predefined().comm_self;
    let mut status = abi::Status::zeroed();
    // SAFETY: the caller's buffers; a message to and from this process alone.
    unsafe {
        real::Sendrecv(
            from,
            count,
            sendtype,
            0,
            0,
            to,
            count2,
            recvtype,
            0,
            0,
            own,
            &mut status,
        )
    }
}

/// Runs the all-form, its result in `count` of `datatype` at `result`: `real` is its MPI call
/// on a communicator, `ordinary` its ordinary handler on the application's, given the call that
/// reaches MPI and whether that handler counts its traffic (`crate::coll::via`). Journaled,
/// served and repaired through `chan` when recovery takes the call (within the ordinary
/// handler while a CD logs, [`calls::logged`]), else as it is; counted as `call` in the
/// statistics, besides the ordinary handler's count of the all-form, which a CD that logs
/// records.
///
/// # Safety
/// As `calls::collective`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn all_form(
    call: Call,
    chan: Option<Chan>,
    result: *mut c_void,
    count: c_int,
    datatype: Datatype,
    input: bool,
    real: impl Fn(Comm) -> c_int,
    ordinary: impl FnOnce(&mut dyn FnMut() -> c_int, bool) -> c_int,
    comm: Comm,
) -> c_int {
    match chan {
        // SAFETY: the caller's contract.
        Some(chan) if !calls::logged() => unsafe {
            calls::collective(call, chan, result, count, datatype, input, real)
        },
        Some(chan) => {
            crate::stats::count(call);
            // SAFETY: the caller's contract.
            let mut live =
                || unsafe { calls::collective(call, chan, result, count, datatype, input, &real) };
            ordinary(&mut live, false)
        }
        None => {
            crate::stats::count(call);
            ordinary(&mut || real(comm), true)
        }
    }
}
