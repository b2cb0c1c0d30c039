//! The little-endian form of the descriptions ranks exchange during a repair (derived
//! communicators and their topologies: `crate::recovery::resync`, `crate::topology`): counts
//! as `u64`, lists of ints after their length. A malformed one is an error, never a panic.

use std::ffi::c_int;

/// Appends `v`.
pub(crate) fn put_u64(v: u64, out: &mut Vec<u8>) {
    out.extend(v.to_le_bytes());
}

/// Appends `list`, after its length.
pub(crate) fn put_ints(list: &[c_int], out: &mut Vec<u8>) {
    put_u64(list.len() as u64, out);
    for v in list {
        out.extend(v.to_le_bytes());
    }
}

/// The `u64` at `at` in `bytes`; moves `at` past it.
pub(crate) fn u64_at(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let v = bytes
        .get(*at..at.saturating_add(8))
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or("a malformed description")?;
    *at += 8;
    Ok(v)
}

/// The list [`put_ints`] wrote at `at` in `bytes`; moves `at` past it.
pub(crate) fn ints_at(bytes: &[u8], at: &mut usize) -> Result<Vec<c_int>, String> {
    let len = usize::try_from(u64_at(bytes, at)?).map_err(|_| "a malformed description")?;
    let size = std::mem::size_of::<c_int>();
    let end = len
        .checked_mul(size)
        .and_then(|n| at.checked_add(n))
        .ok_or("a malformed description")?;
    let out = bytes
        .get(*at..end)
        .ok_or("a malformed description")?
        .chunks_exact(size)
        .map(|b| c_int::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    *at = end;
    Ok(out)
}
