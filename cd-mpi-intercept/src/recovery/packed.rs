//! Contributions exchanged packed, for the all-forms of the collectives whose counts not every
//! rank knows ([`super::spread`]: `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Alltoallv`).
//!
//! MPI makes a rooted v-form's counts significant at its root alone, and an all-to-all's at
//! their sender and receiver: no rank could lay out every rank's contributions typed. Packed
//! (`MPI_Pack`'s bytes, or the elements' own for a predefined type: `super::journal::pack`),
//! each part is bytes: each rank packs its parts with its own datatypes, and a rank unpacks
//! the parts meant for it with its own, as MPI's type matching allows (signatures match, not
//! datatypes). The exchange is two collectives, each journaled and served like any covered
//! one: the parts' sizes (an `MPI_Allgather`, or an `MPI_Bcast` from a root, counted in the
//! statistics as such), then the bytes (an `MPI_Allgatherv`, or an `MPI_Bcast`, counted as the
//! application's call).

use super::allform::{all_form, packed_displs};
use super::calls::Chan;
use super::journal;
use crate::abi::{self, Comm, Datatype};
use crate::pmpi::{real, safe, Call};
use std::ffi::{c_int, c_void};

/// One rank's parts, packed one after another.
#[derive(Default)]
pub(super) struct Packer {
    bytes: Vec<u8>,
    sizes: Vec<c_int>,
}

impl Packer {
    /// Packs `count` of `datatype` at `buf` as the next part; `Err(MPI_ERR_COUNT)` past an
    /// `int` of bytes.
    ///
    /// # Safety
    /// `buf` holds `count` elements of `datatype`.
    pub(super) unsafe fn push(
        &mut self,
        buf: *const c_void,
        count: c_int,
        datatype: Datatype,
    ) -> Result<(), c_int> {
        // SAFETY: the caller's contract.
        let part = unsafe { journal::pack(buf, count, datatype) };
        let size = c_int::try_from(part.len()).map_err(|_| abi::ERR_COUNT)?;
        self.bytes.extend_from_slice(&part);
        self.sizes.push(size);
        Ok(())
    }
}

/// Every part of an exchange: the bytes, and where each part ends in them.
pub(super) struct Parts {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Parts {
    fn new(bytes: Vec<u8>, sizes: &[c_int]) -> Parts {
        let ends = sizes
            .iter()
            .scan(0usize, |end, &size| {
                *end += size.max(0) as usize;
                Some(*end)
            })
            .collect();
        Parts { bytes, ends }
    }

    /// Unpacks part `k` into `count` of `datatype` at `buf`.
    ///
    /// # Safety
    /// `buf` has room for `count` elements of `datatype`.
    pub(super) unsafe fn unpack(
        &self,
        k: usize,
        buf: *mut c_void,
        count: c_int,
        datatype: Datatype,
    ) -> c_int {
        let at = |k: Option<usize>| k.and_then(|k| self.ends.get(k)).copied();
        let start = at(k.checked_sub(1)).unwrap_or(0);
        let part = self
            .bytes
            .get(start..at(Some(k)).unwrap_or(start))
            .unwrap_or_default();
        // SAFETY: the caller's contract.
        if unsafe { journal::unpack(part, buf, count, datatype) } {
            abi::SUCCESS
        } else {
            abi::ERR_TRUNCATE
        }
    }
}

/// Every rank's parts on every rank (each rank has as many): rank `r`'s part `k` is part
/// `r * n + k` of the result, `n` the parts a rank has.
///
/// # Safety
/// `chan` and `comm` are the call's (as [`all_form`]).
pub(super) unsafe fn allgather(
    call: Call,
    chan: Option<Chan>,
    mine: Packer,
    comm: Comm,
) -> Result<Parts, c_int> {
    let int = abi::predefined().int;
    let packed = abi::predefined().packed;
    let per = mine.sizes.len() as c_int;
    let count = per.saturating_mul(safe::comm_size(comm));
    let mut sizes = vec![0 as c_int; count.max(0) as usize];
    let (own, all) = (
        mine.sizes.as_ptr().cast::<c_void>(),
        sizes.as_mut_ptr().cast(),
    );
    // SAFETY: `sizes` holds `per` ints for every rank.
    let rc = unsafe {
        all_form(
            Call::Allgather,
            chan,
            all,
            count,
            int,
            false,
            |c| real::Allgather(own, per, int, all, per, int, c),
            |live, counts| {
                crate::coll::via::allgather(own, per, int, all, per, int, comm, live, counts)
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return Err(rc);
    }
    // every rank sees the same sizes, so a total past an `int` fails on every rank
    let lens = sizes
        .chunks(per.max(1) as usize)
        .map(|s| s.iter().try_fold(0 as c_int, |t, &n| t.checked_add(n)))
        .collect::<Option<Vec<c_int>>>()
        .ok_or(abi::ERR_COUNT)?;
    let (displs, total) = packed_displs(&lens).ok_or(abi::ERR_COUNT)?;
    let mut bytes = vec![0u8; total as usize];
    let (own, len, all) = (
        mine.bytes.as_ptr().cast::<c_void>(),
        mine.bytes.len() as c_int,
        bytes.as_mut_ptr().cast(),
    );
    let (lens, displs) = (lens.as_ptr(), displs.as_ptr());
    // SAFETY: `bytes` holds every rank's parts at `displs`.
    let rc = unsafe {
        all_form(
            call,
            chan,
            all,
            total,
            packed,
            false,
            |c| real::Allgatherv(own, len, packed, all, lens, displs, packed, c),
            |live, counts| {
                crate::coll::via::allgatherv(
                    own, len, packed, all, lens, displs, packed, comm, live, counts,
                )
            },
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return Err(rc);
    }
    Ok(Parts::new(bytes, &sizes))
}

/// The root's `n` parts (`mine`, at the root) on every rank.
///
/// # Safety
/// `chan` and `comm` are the call's (as [`all_form`]).
pub(super) unsafe fn bcast(
    call: Call,
    chan: Option<Chan>,
    mine: Option<Packer>,
    n: c_int,
    root: c_int,
    comm: Comm,
) -> Result<Parts, c_int> {
    let int = abi::predefined().int;
    let packed = abi::predefined().packed;
    let at_root = mine.is_some();
    let Packer {
        mut bytes,
        mut sizes,
    } = mine.unwrap_or_default();
    sizes.resize(n.max(0) as usize, 0);
    let all = sizes.as_mut_ptr().cast();
    // SAFETY: `sizes` holds `n` ints; the root's are its input.
    let rc = unsafe {
        all_form(
            Call::Bcast,
            chan,
            all,
            n,
            int,
            at_root,
            |c| real::Bcast(all, n, int, root, c),
            |live, counts| crate::coll::via::bcast(all, n, int, root, comm, live, counts),
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return Err(rc);
    }
    let (_, total) = packed_displs(&sizes).ok_or(abi::ERR_COUNT)?;
    bytes.resize(total as usize, 0);
    let all = bytes.as_mut_ptr().cast();
    // SAFETY: `bytes` holds the root's parts; the root's are its input.
    let rc = unsafe {
        all_form(
            call,
            chan,
            all,
            total,
            packed,
            at_root,
            |c| real::Bcast(all, total, packed, root, c),
            |live, counts| crate::coll::via::bcast(all, total, packed, root, comm, live, counts),
            comm,
        )
    };
    if rc != abi::SUCCESS {
        return Err(rc);
    }
    Ok(Parts::new(bytes, &sizes))
}
