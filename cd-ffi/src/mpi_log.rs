//! The spec's three functions for the MPI interposition layer: a FIFO of `malloc`'d log
//! entries per CD, replayed after `restore_cd`.
//!
//! `add_MPI_log_to_cd` takes ownership of the caller's buffer only when it succeeds (the spec:
//! "the CD infrastructure controls the lifetime ... after this call completes without error");
//! the CD then `free()`s it when the log is discarded. `get_MPI_log_from_cd` hands out that
//! same pointer, valid until the log is discarded (advance, delete, commit of a root, or a
//! commit or restore that drops a sibling's log).
//!
//! The buffer is kept as it is rather than copied into the log's arena, because the spec has
//! `get_MPI_log_from_cd` return the "MPI log entry originally provided by add_MPI_log_to_cd".
//! The MPI layer itself writes records straight into the arena (`cd_core::log_append_with`);
//! both kinds share one FIFO, and `get_MPI_log_from_cd` returns a pointer into the arena for
//! the latter.

use crate::boundary::{ffi_int, ffi_ptr, try_mut};
use crate::error::Error;
use crate::types::{cd_handle, cd_ref};
use cd_core::{LogEntry, LogPayload};
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A `malloc`'d log entry, freed on drop while `owned` is set.
struct MallocEntry {
    ptr: NonNull<u8>,
    len: usize,
    /// Cleared when the add failed, so that the caller keeps its buffer.
    owned: Arc<AtomicBool>,
}

// SAFETY: the entry exclusively owns its buffer (the caller handed it over) and only reads it;
// `free` may be called from any thread.
unsafe impl Send for MallocEntry {}
// SAFETY: as above: shared access only reads the bytes.
unsafe impl Sync for MallocEntry {}

impl LogPayload for MallocEntry {
    fn bytes(&self) -> &[u8] {
        // SAFETY: the caller of add_MPI_log_to_cd vouched for `len` readable bytes at `ptr`,
        // which nobody writes while the log owns them.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MallocEntry {
    fn drop(&mut self) {
        if self.owned.load(Ordering::Acquire) {
            // SAFETY: the buffer came from malloc (the spec's contract) and was handed over to
            // the log, whose last reference this is.
            unsafe { libc::free(self.ptr.as_ptr().cast()) };
        }
    }
}

/// Appends a log entry to the CD's FIFO. `logent` must come from `malloc` and hold `loglen`
/// bytes without pointers; on success the CD owns it and frees it when the log is discarded,
/// on error the caller keeps it. Refused for a CD created with `COMM_LOGGING_DISABLED` and
/// during a replay (after `restore_cd`, until `get_MPI_log_from_cd` returned NULL).
///
/// Returns 0 or an error code.
///
/// # Safety
/// `logent` must be NULL or a `malloc`'d buffer of at least `loglen` bytes that the caller
/// no longer uses after a successful call.
#[no_mangle]
pub unsafe extern "C" fn add_MPI_log_to_cd(
    cd: cd_handle,
    logent: *mut c_void,
    loglen: c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let ptr = NonNull::new(logent.cast::<u8>()).ok_or(Error::NullPointer("logent"))?;
        let len =
            usize::try_from(loglen).map_err(|_| Error::NegativeCount("loglen", loglen.into()))?;
        let owned = Arc::new(AtomicBool::new(true));
        let entry = LogEntry::new(MallocEntry {
            ptr,
            len,
            owned: Arc::clone(&owned),
        });
        let result = cd_core::add_mpi_log_to_cd(cd, entry.clone());
        if result.is_err() {
            // The log did not keep its clone: ours is the last, and must not free.
            owned.store(false, Ordering::Release);
        }
        drop(entry);
        Ok(result?)
    })
}

/// The next entry of the replay that `restore_cd` started, in FIFO order: the pointer given
/// to `add_MPI_log_to_cd`, valid until the log is discarded. NULL when the log is exhausted
/// (which ends the replay; `*error` is then 0), when no replay is in progress, or on error
/// (`*error` is the code). `error` may be NULL.
///
/// The entry is read-only, although the spec's signature returns `void *`: the log keeps it
/// and replays the same bytes again after a later restore, and records written by the MPI
/// layer share their memory with other records, so writing through the pointer is undefined
/// behaviour. Its length is the `loglen` given to `add_MPI_log_to_cd`; the spec's signature
/// has no room for it: `cd_get_MPI_log_entry` returns it with the entry. (Rust callers get
/// the bytes as a slice with their length: `cd_core::get_mpi_log_from_cd`.)
///
/// # Safety
/// `error` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn get_MPI_log_from_cd(cd: cd_handle, error: *mut c_int) -> *mut c_void {
    ffi_ptr!(error, {
        let entry = cd_core::get_mpi_log_from_cd(cd_ref(cd)?)?;
        // The log keeps its own reference, so the bytes outlive this clone.
        Ok(entry.map_or(std::ptr::null_mut(), |e| {
            e.bytes().as_ptr().cast_mut().cast()
        }))
    })
}

/// The next entry of the replay, like `get_MPI_log_from_cd`, with its length and as read-only
/// bytes (an extension: the spec's signature has neither). Stores the entry in `*entry` and its
/// length in `*length`; `*entry` is NULL and `*length` 0 when the log is exhausted (which ends
/// the replay) or no replay is in progress.
///
/// Returns 0 or an error code (`*entry` and `*length` are then unchanged).
///
/// # Safety
/// `entry` and `length` must be NULL or writable (NULL is the error `CD_ERR_NULL_POINTER`).
#[no_mangle]
pub unsafe extern "C" fn cd_get_MPI_log_entry(
    cd: cd_handle,
    entry: *mut *const c_void,
    length: *mut usize,
) -> c_int {
    ffi_int!({
        let entry = try_mut!(entry, "entry");
        let length = try_mut!(length, "length");
        let next = cd_core::get_mpi_log_from_cd(cd_ref(cd)?)?;
        // The log keeps its own reference, so the bytes outlive this clone.
        let (ptr, len) = next.map_or((std::ptr::null(), 0), |e| {
            (e.bytes().as_ptr().cast::<c_void>(), e.bytes().len())
        });
        *entry = ptr;
        *length = len;
        Ok(())
    })
}

/// Discards the CD's MPI log (its entries are freed; pointers handed out become invalid).
///
/// Returns 0 or an error code.
#[no_mangle]
pub extern "C" fn delete_MPI_log_from_cd(cd: cd_handle) -> c_int {
    ffi_int!({ Ok(cd_core::delete_mpi_log_from_cd(cd_ref(cd)?)?) })
}
