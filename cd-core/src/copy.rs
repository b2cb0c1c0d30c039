//! The one place where bytes move between application memory (host or device) and the store.
//!
//! It sits above the per-thread state, not in `store`: a device copy runs as a guarded user
//! callback (`callback`), which marks the calling thread, and the store is below everything that
//! knows about threads. Large host copies are split across threads (`CD_COPY_THREADS`, default:
//! the available cores, at most 8): one core does not saturate the memory bus. Raw copies are
//! allowed only in `copy_bytes` (`clippy.toml`).

use crate::callback;
use crate::error::{CdError, Result};
use crate::fault;
use crate::space::{self, SpaceId, HOST};
use std::sync::OnceLock;

/// The environment variable that caps the threads of a large copy (default: the available
/// cores, at most 8).
const COPY_THREADS_ENV: &str = "CD_COPY_THREADS";
/// Copies at least this large are split across threads.
pub(crate) const PARALLEL_THRESHOLD: usize = 8 << 20;
/// No thread gets less than this much of a parallel copy.
pub(crate) const MIN_PART: usize = 4 << 20;

/// How many threads a large copy may use.
pub(crate) fn copy_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var(COPY_THREADS_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
                    .min(8)
            })
    })
}

/// Copies `len` bytes from `src` to `dst`, split across threads when large.
///
/// # Safety
/// - `src .. src + len` is readable and `dst .. dst + len` writable for the whole call;
/// - the two ranges do not overlap, and nothing else writes either during the call.
#[allow(clippy::disallowed_methods)] // the one place raw copies are made
unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    let threads = copy_threads().min(len / MIN_PART).max(1);
    if len < PARALLEL_THRESHOLD || threads == 1 {
        // SAFETY: guaranteed by the caller.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let part = len.div_ceil(threads);
    // Addresses cross to the copy threads as integers (raw pointers are not `Send`), taken
    // back with the provenance exposed here.
    let (dst, src) = (dst.expose_provenance(), src.expose_provenance());
    std::thread::scope(|scope| {
        for i in 1..threads {
            let start = i * part;
            let n = part.min(len - start);
            scope.spawn(move || {
                // SAFETY: `start .. start + n` is a sub-range of the caller's ranges, disjoint
                // from every other thread's part; the scope outlives no borrow.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        std::ptr::with_exposed_provenance::<u8>(src + start),
                        std::ptr::with_exposed_provenance_mut::<u8>(dst + start),
                        n,
                    )
                };
            });
        }
        // SAFETY: the first part, disjoint from the spawned threads' parts.
        unsafe {
            std::ptr::copy_nonoverlapping(
                std::ptr::with_exposed_provenance::<u8>(src),
                std::ptr::with_exposed_provenance_mut::<u8>(dst),
                part,
            )
        };
    });
}

/// Copies application memory at `address` (in `space`) into `dst`.
///
/// # Safety
/// For host memory, `address .. address + dst.len()` must be readable and not written by
/// anyone during the call.
pub(crate) unsafe fn read_app(dst: &mut [u8], address: usize, space: SpaceId) -> Result<()> {
    let limit = fault::copy_limit(dst.len());
    let (dst, failed) = if limit < dst.len() {
        (&mut dst[..limit], true)
    } else {
        (dst, false)
    };
    if space == HOST {
        // SAFETY: the source is guaranteed by the caller; `dst` is a unique slice, and a
        // store buffer never overlaps application memory.
        // The address came from the application as an integer whose provenance it exposed
        // (`AddrSpec::of`, the C API's `void *`).
        unsafe {
            copy_bytes(
                dst.as_mut_ptr(),
                std::ptr::with_exposed_provenance::<u8>(address),
                dst.len(),
            )
        };
    } else {
        let device = space::device(space)?;
        callback::guard(|| device.copy_to_host(dst, address)).map_err(|message| {
            CdError::DeviceCopy {
                space: device.name().to_owned(),
                message,
            }
        })?;
    }
    if failed {
        return Err(CdError::InjectedFault("copy failed half-way"));
    }
    Ok(())
}

/// Copies `src` into application memory at `address` (in `space`).
///
/// # Safety
/// For host memory, `address .. address + src.len()` must be writable and not accessed by
/// anyone else during the call.
pub(crate) unsafe fn write_app(address: usize, src: &[u8], space: SpaceId) -> Result<()> {
    if space == HOST {
        // SAFETY: the destination is guaranteed by the caller; `src` is a store buffer, which
        // never overlaps application memory.
        // The address's provenance was exposed by the application (see `read_app`).
        unsafe {
            copy_bytes(
                std::ptr::with_exposed_provenance_mut::<u8>(address),
                src.as_ptr(),
                src.len(),
            )
        };
        return Ok(());
    }
    let device = space::device(space)?;
    callback::guard(|| device.copy_to_device(address, src)).map_err(|message| CdError::DeviceCopy {
        space: device.name().to_owned(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Buffer;

    #[test]
    fn parallel_copy_copies_every_byte() {
        let len = PARALLEL_THRESHOLD * 2 + 12345;
        let src: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        let mut dst = Buffer::new(len).unwrap();
        // SAFETY: `src` is a live vector of `len` bytes, nobody writes it.
        unsafe { read_app(dst.as_mut_slice(), src.as_ptr().expose_provenance(), HOST).unwrap() };
        assert!(dst.as_slice() == &src[..]);
    }
}
