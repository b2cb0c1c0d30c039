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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_back_as_written() {
        let mut out = Vec::new();
        put_u64(7, &mut out);
        put_ints(&[3, -1, 40], &mut out);
        put_ints(&[], &mut out);
        let at = &mut 0;
        assert_eq!(u64_at(&out, at), Ok(7));
        assert_eq!(ints_at(&out, at), Ok(vec![3, -1, 40]));
        assert_eq!(ints_at(&out, at), Ok(vec![]));
        assert_eq!(*at, out.len());
    }

    #[test]
    fn a_malformed_description_is_an_error() {
        let mut out = Vec::new();
        put_ints(&[1, 2], &mut out);
        // cut short, and a length past the bytes (or past usize)
        assert!(ints_at(&out[..out.len() - 1], &mut 0).is_err());
        assert!(u64_at(&out[..7], &mut 0).is_err());
        let mut huge = Vec::new();
        put_u64(u64::MAX, &mut huge);
        assert!(ints_at(&huge, &mut 0).is_err());
        let mut past_the_end = usize::MAX;
        assert!(ints_at(&out, &mut past_the_end).is_err());
    }
}
