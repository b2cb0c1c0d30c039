//! Error codes, their messages, and each thread's last error.
//!
//! Every `int` function of the C API returns [`SUCCESS`] (0) or a nonzero code. The codes from
//! 1 to 99 are cd-core's [`CdError::code`] numbers, unchanged; 100 and up are the C layer's own
//! (a NULL pointer, a negative count, a value outside an enum, a panic). Numbers are never
//! reused: a retired code stays as a "reserved" comment, and a new one takes the next free
//! number of its range.
//!
//! [`FAILURE`] (-1) is what `advance_cd_point_in_time` returns on any failure, so that the
//! spec's own `if (advance_cd_point_in_time(cd) == FAILURE)` works; the specific code is then
//! in [`cd_last_error`], which every function of the library sets (0 after a success).

use cd_core::CdError;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr};

/// The operation succeeded.
pub const SUCCESS: c_int = 0;
/// What `advance_cd_point_in_time` returns when it fails, whatever the reason; the reason is
/// `cd_last_error()`. No other function returns it.
pub const FAILURE: c_int = -1;

// cd-core's codes (1..99): see `CdError` in cd-core for the detailed variants.
/// The handle was never returned by `create_cd` (a made-up value).
pub const CD_ERR_INVALID_HANDLE: c_int = 1;
/// The handle named a CD that was committed, or discarded by an ancestor's restore.
pub const CD_ERR_STALE_HANDLE: c_int = 2;
/// `CURRENT_CD` was used on a thread that has no active CD.
pub const CD_ERR_NO_ACTIVE_CD: c_int = 3;
/// The CD API was called from inside a regen or device-copy callback.
pub const CD_ERR_REENTRANT: c_int = 4;
/// A root CD was created with `COMM_LOGGING_INHERIT`.
pub const CD_ERR_ROOT_INHERITS_LOGGING: c_int = 10;
/// A child's logging mode contradicts its parent's.
pub const CD_ERR_LOGGING_MISMATCH: c_int = 11;
/// A name was given for a child CD.
pub const CD_ERR_CHILD_NAMED: c_int = 12;
/// A live root CD already has this name.
pub const CD_ERR_DUPLICATE_NAME: c_int = 13;
/// A root CD name is empty.
pub const CD_ERR_BAD_NAME: c_int = 14;
/// `storage_info` is malformed or names an unknown key.
pub const CD_ERR_STORAGE_INFO: c_int = 15;
/// An address range has zero length.
pub const CD_ERR_ZERO_LENGTH: c_int = 20;
/// An address range starts at the null address.
pub const CD_ERR_NULL_ADDRESS: c_int = 21;
/// `address + length` overflows the address space.
pub const CD_ERR_ADDRESS_OVERFLOW: c_int = 22;
/// Two ranges of one address list overlap each other.
pub const CD_ERR_OVERLAPPING_LIST: c_int = 23;
/// A range was added via regen as READ_WRITE.
pub const CD_ERR_READ_WRITE_REGEN: c_int = 24;
/// A READ_WRITE re-add would promote a regen entry.
pub const CD_ERR_PROMOTE_REGEN: c_int = 25;
/// A re-add asked for another scope than the existing entry's.
pub const CD_ERR_SCOPE_CHANGE: c_int = 26;
/// `add_to_cd_via_parent` on a range that no ancestor holds.
pub const CD_ERR_NOT_IN_ANCESTOR: c_int = 27;
/// `add_to_cd_via_parent` on a range an ancestor regenerates.
pub const CD_ERR_REGEN_ANCESTOR: c_int = 28;
/// `add_to_cd_via_parent` on a root CD.
pub const CD_ERR_NO_PARENT: c_int = 29;
/// `delete_from_cd` (or `cd_read_saved`) on a range the CD does not hold.
pub const CD_ERR_RANGE_NOT_FOUND: c_int = 30;
/// A range straddles host memory and a device region.
pub const CD_ERR_STRADDLES_MEMORY_SPACE: c_int = 31;
/// A device region overlaps one already mapped.
pub const CD_ERR_REGION_OVERLAP: c_int = 32;
/// A memory space id that was never registered.
pub const CD_ERR_UNKNOWN_MEMORY_SPACE: c_int = 33;
/// No device region starts at this address.
pub const CD_ERR_REGION_NOT_FOUND: c_int = 34;
/// `cd_unmap_device_region` on a region that a live CD still holds ranges in.
pub const CD_ERR_REGION_IN_USE: c_int = 35;
/// `cd_remap_device_region` cannot move the ranges as asked (overlap, a range across the
/// bounds, a destination that is held or not device memory of the same space).
pub const CD_ERR_REMAP_REFUSED: c_int = 36;
/// The file descriptor is closed or does not support `lseek`.
pub const CD_ERR_FILE_NOT_SEEKABLE: c_int = 40;
/// `delete_file_from_cd` on a descriptor the CD does not monitor.
pub const CD_ERR_FILE_NOT_FOUND: c_int = 41;
/// The CD has uncommitted children (commit and advance need none).
pub const CD_ERR_HAS_CHILDREN: c_int = 50;
/// Another thread runs commit, restore or advance on the same CD.
pub const CD_ERR_CONCURRENT_OPERATION: c_int = 51;
/// The CD store could not allocate memory.
pub const CD_ERR_OUT_OF_MEMORY: c_int = 60;
/// A registered device copy function failed.
pub const CD_ERR_DEVICE_COPY: c_int = 61;
/// A regen function returned nonzero.
pub const CD_ERR_REGEN_FAILED: c_int = 62;
/// A PARENT entry found no data in any ancestor at restore time.
pub const CD_ERR_PARENT_DATA_MISSING: c_int = 63;
/// A fault injected by cd-core's test hook.
pub const CD_ERR_INJECTED_FAULT: c_int = 64;
/// A store buffer would take the bytes the runtime holds (stores, pool, logs) past
/// `CD_MEMORY_LIMIT`; the add or advance changed nothing.
pub const CD_ERR_MEMORY_LIMIT: c_int = 65;
/// A log operation on a CD created with `COMM_LOGGING_DISABLED`.
pub const CD_ERR_LOGGING_DISABLED: c_int = 70;
/// `add_MPI_log_to_cd` while the log is being replayed, or a commit or advance that would merge
/// a child's log entries into a log being replayed.
pub const CD_ERR_LOG_REPLAYING: c_int = 71;
/// An MPI log entry of zero bytes.
pub const CD_ERR_EMPTY_LOG_ENTRY: c_int = 72;
/// The MPI layer's restore hook refused the restore (e.g. requests it cannot quiesce).
pub const CD_ERR_RESTORE_REFUSED: c_int = 73;
/// The MPI log a restore would replay holds a call that cannot be replayed (one-sided, file
/// I/O, spawn).
pub const CD_ERR_UNREPLAYABLE: c_int = 74;
/// Persisting a persistent CD, or finding, rebuilding or loading a persisted version, failed
/// (`cd_last_error()` says why: a cache directory, a lost version, a damaged file).
pub const CD_ERR_PERSIST: c_int = 75;
/// The ranges added to a restarted persistent CD do not match its persisted version (their
/// order, kind or length).
pub const CD_ERR_PERSIST_MISMATCH: c_int = 76;
/// A persist was refused: the MPI interposer's message counts show an application message in
/// flight (or a receive or nonblocking collective not completed) at the advance; nothing was
/// written and the previous version stays the newest (`cd_last_error()` names the ranks).
pub const CD_ERR_PERSIST_IN_FLIGHT: c_int = 78;

// The C layer's own codes (100..199).
/// A NULL `cd_handle` where a CD is required (NULL means "no parent" only in `create_cd`).
pub const CD_ERR_NULL_HANDLE: c_int = 100;
/// A required pointer argument is NULL.
pub const CD_ERR_NULL_POINTER: c_int = 101;
/// A count or length argument is negative.
pub const CD_ERR_NEGATIVE_COUNT: c_int = 102;
/// An address list with no entries (`ascount == 0`).
pub const CD_ERR_EMPTY_LIST: c_int = 103;
/// A value outside its enum (addr_tp, addr_scope, logging mode, ...).
pub const CD_ERR_INVALID_ENUM: c_int = 104;
/// A string argument is not valid UTF-8.
pub const CD_ERR_INVALID_STRING: c_int = 105;
/// An output array is too small; the count needed was stored.
pub const CD_ERR_BUFFER_TOO_SMALL: c_int = 106;
/// The library panicked (a bug in libcd); the operation did not complete.
pub const CD_ERR_PANIC: c_int = 107;
// Last added: CD_ERR_MEMORY_LIMIT and CD_ERR_PERSIST_IN_FLIGHT (cd-core's range), CD_ERR_PANIC (this
// layer's).

/// Each known code: its name and a one-line description (both NUL-terminated).
const TABLE: &[(c_int, &CStr, &CStr)] = &[
    (SUCCESS, c"SUCCESS", c"success"),
    (
        FAILURE,
        c"FAILURE",
        c"advance_cd_point_in_time failed; cd_last_error() gives the reason",
    ),
    (
        CD_ERR_INVALID_HANDLE,
        c"CD_ERR_INVALID_HANDLE",
        c"invalid CD handle: it was never returned by create_cd",
    ),
    (
        CD_ERR_STALE_HANDLE,
        c"CD_ERR_STALE_HANDLE",
        c"the CD handle is no longer valid: the CD was committed or discarded by a restore",
    ),
    (
        CD_ERR_NO_ACTIVE_CD,
        c"CD_ERR_NO_ACTIVE_CD",
        c"CURRENT_CD was used but this thread has no active CD",
    ),
    (
        CD_ERR_REENTRANT,
        c"CD_ERR_REENTRANT",
        c"the CD API was called from inside a regen or device-copy callback",
    ),
    (
        CD_ERR_ROOT_INHERITS_LOGGING,
        c"CD_ERR_ROOT_INHERITS_LOGGING",
        c"a root CD must choose COMM_LOGGING_ENABLED or COMM_LOGGING_DISABLED",
    ),
    (
        CD_ERR_LOGGING_MISMATCH,
        c"CD_ERR_LOGGING_MISMATCH",
        c"the child's logging mode contradicts its parent's; use COMM_LOGGING_INHERIT",
    ),
    (
        CD_ERR_CHILD_NAMED,
        c"CD_ERR_CHILD_NAMED",
        c"only root CDs take a name; pass NULL for child CDs",
    ),
    (
        CD_ERR_DUPLICATE_NAME,
        c"CD_ERR_DUPLICATE_NAME",
        c"a live root CD already has this name",
    ),
    (
        CD_ERR_BAD_NAME,
        c"CD_ERR_BAD_NAME",
        c"a root CD name must be non-empty",
    ),
    (
        CD_ERR_STORAGE_INFO,
        c"CD_ERR_STORAGE_INFO",
        c"storage_info is malformed or names an unknown key",
    ),
    (
        CD_ERR_ZERO_LENGTH,
        c"CD_ERR_ZERO_LENGTH",
        c"an address range has zero length",
    ),
    (
        CD_ERR_NULL_ADDRESS,
        c"CD_ERR_NULL_ADDRESS",
        c"an address range starts at the null address",
    ),
    (
        CD_ERR_ADDRESS_OVERFLOW,
        c"CD_ERR_ADDRESS_OVERFLOW",
        c"address + length overflows the address space",
    ),
    (
        CD_ERR_OVERLAPPING_LIST,
        c"CD_ERR_OVERLAPPING_LIST",
        c"two ranges of the address list overlap each other",
    ),
    (
        CD_ERR_READ_WRITE_REGEN,
        c"CD_ERR_READ_WRITE_REGEN",
        c"READ_WRITE ranges cannot be added via regen",
    ),
    (
        CD_ERR_PROMOTE_REGEN,
        c"CD_ERR_PROMOTE_REGEN",
        c"a READ_WRITE re-add would promote a regen entry",
    ),
    (
        CD_ERR_SCOPE_CHANGE,
        c"CD_ERR_SCOPE_CHANGE",
        c"the range is already in the CD with another scope; delete it and add it again",
    ),
    (
        CD_ERR_NOT_IN_ANCESTOR,
        c"CD_ERR_NOT_IN_ANCESTOR",
        c"add_to_cd_via_parent: the range is not in any ancestor CD",
    ),
    (
        CD_ERR_REGEN_ANCESTOR,
        c"CD_ERR_REGEN_ANCESTOR",
        c"add_to_cd_via_parent: an ancestor restores the range with a regen function",
    ),
    (
        CD_ERR_NO_PARENT,
        c"CD_ERR_NO_PARENT",
        c"add_to_cd_via_parent needs a parent CD, and this CD is a root",
    ),
    (
        CD_ERR_RANGE_NOT_FOUND,
        c"CD_ERR_RANGE_NOT_FOUND",
        c"the range is not (entirely) in this CD",
    ),
    (
        CD_ERR_STRADDLES_MEMORY_SPACE,
        c"CD_ERR_STRADDLES_MEMORY_SPACE",
        c"the range straddles the boundary of a device memory region",
    ),
    (
        CD_ERR_REGION_OVERLAP,
        c"CD_ERR_REGION_OVERLAP",
        c"the device region overlaps one already mapped",
    ),
    (
        CD_ERR_UNKNOWN_MEMORY_SPACE,
        c"CD_ERR_UNKNOWN_MEMORY_SPACE",
        c"the memory space was never registered",
    ),
    (
        CD_ERR_REGION_NOT_FOUND,
        c"CD_ERR_REGION_NOT_FOUND",
        c"no device region starts at this address",
    ),
    (
        CD_ERR_REGION_IN_USE,
        c"CD_ERR_REGION_IN_USE",
        c"a live CD still holds ranges in this device region; delete them or commit the CD first",
    ),
    (
        CD_ERR_REMAP_REFUSED,
        c"CD_ERR_REMAP_REFUSED",
        c"the device ranges cannot be moved to the new address as asked",
    ),
    (
        CD_ERR_FILE_NOT_SEEKABLE,
        c"CD_ERR_FILE_NOT_SEEKABLE",
        c"the file descriptor is closed or does not support lseek",
    ),
    (
        CD_ERR_FILE_NOT_FOUND,
        c"CD_ERR_FILE_NOT_FOUND",
        c"the file descriptor is not in this CD",
    ),
    (
        CD_ERR_HAS_CHILDREN,
        c"CD_ERR_HAS_CHILDREN",
        c"the CD has uncommitted children; commit them first",
    ),
    (
        CD_ERR_CONCURRENT_OPERATION,
        c"CD_ERR_CONCURRENT_OPERATION",
        c"another thread runs commit, restore or advance on the same CD",
    ),
    (
        CD_ERR_OUT_OF_MEMORY,
        c"CD_ERR_OUT_OF_MEMORY",
        c"out of memory for the CD store",
    ),
    (
        CD_ERR_DEVICE_COPY,
        c"CD_ERR_DEVICE_COPY",
        c"a device copy function failed",
    ),
    (
        CD_ERR_REGEN_FAILED,
        c"CD_ERR_REGEN_FAILED",
        c"a regen function returned nonzero",
    ),
    (
        CD_ERR_PARENT_DATA_MISSING,
        c"CD_ERR_PARENT_DATA_MISSING",
        c"a range added via parent is no longer held by any ancestor",
    ),
    (
        CD_ERR_INJECTED_FAULT,
        c"CD_ERR_INJECTED_FAULT",
        c"a fault injected by the test hook",
    ),
    (
        CD_ERR_MEMORY_LIMIT,
        c"CD_ERR_MEMORY_LIMIT",
        c"the CD store would pass CD_MEMORY_LIMIT; nothing was changed",
    ),
    (
        CD_ERR_LOGGING_DISABLED,
        c"CD_ERR_LOGGING_DISABLED",
        c"the CD was created with COMM_LOGGING_DISABLED and keeps no MPI log",
    ),
    (
        CD_ERR_LOG_REPLAYING,
        c"CD_ERR_LOG_REPLAYING",
        c"the MPI log is being replayed: consume it with get_MPI_log_from_cd before adding to it",
    ),
    (
        CD_ERR_EMPTY_LOG_ENTRY,
        c"CD_ERR_EMPTY_LOG_ENTRY",
        c"an MPI log entry must hold at least one byte",
    ),
    (
        CD_ERR_RESTORE_REFUSED,
        c"CD_ERR_RESTORE_REFUSED",
        c"restore_cd was refused by the MPI layer",
    ),
    (
        CD_ERR_UNREPLAYABLE,
        c"CD_ERR_UNREPLAYABLE",
        c"cannot restore: the MPI log holds a call that cannot be replayed in isolation",
    ),
    (
        CD_ERR_PERSIST,
        c"CD_ERR_PERSIST",
        c"persisting a CD, or recovering a persisted version, failed",
    ),
    (
        CD_ERR_PERSIST_MISMATCH,
        c"CD_ERR_PERSIST_MISMATCH",
        c"the restarted CD's ranges do not match its persisted version (order, kind, length)",
    ),
    (
        CD_ERR_PERSIST_IN_FLIGHT,
        c"CD_ERR_PERSIST_IN_FLIGHT",
        c"persist refused: an application message was in flight at the advance",
    ),
    (
        CD_ERR_NULL_HANDLE,
        c"CD_ERR_NULL_HANDLE",
        c"NULL CD handle (NULL means 'no parent' only in create_cd)",
    ),
    (
        CD_ERR_NULL_POINTER,
        c"CD_ERR_NULL_POINTER",
        c"a required pointer argument is NULL",
    ),
    (
        CD_ERR_NEGATIVE_COUNT,
        c"CD_ERR_NEGATIVE_COUNT",
        c"a count or length argument is negative",
    ),
    (
        CD_ERR_EMPTY_LIST,
        c"CD_ERR_EMPTY_LIST",
        c"the address list has no entries (ascount is 0)",
    ),
    (
        CD_ERR_INVALID_ENUM,
        c"CD_ERR_INVALID_ENUM",
        c"a value is outside its enum (addr_tp, addr_scope, logging mode)",
    ),
    (
        CD_ERR_INVALID_STRING,
        c"CD_ERR_INVALID_STRING",
        c"a string argument is not valid UTF-8",
    ),
    (
        CD_ERR_BUFFER_TOO_SMALL,
        c"CD_ERR_BUFFER_TOO_SMALL",
        c"the output array is too small; the count needed was stored",
    ),
    (
        CD_ERR_PANIC,
        c"CD_ERR_PANIC",
        c"internal error: libcd panicked; the operation did not complete",
    ),
];

const UNKNOWN: &CStr = c"unknown CD error code";

fn lookup(code: c_int) -> Option<&'static (c_int, &'static CStr, &'static CStr)> {
    TABLE.iter().find(|(c, _, _)| *c == code)
}

/// The codes this library knows, in table order (for tests and the Fortran consistency check).
pub fn known_codes() -> impl Iterator<Item = (c_int, &'static str)> {
    TABLE
        .iter()
        .map(|(c, name, _)| (*c, name.to_str().expect("ASCII names")))
}

/// An error of the C layer: one of cd-core's, or one of the boundary's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Error {
    /// cd-core refused or failed.
    Core(CdError),
    /// A NULL handle where a CD is required.
    NullHandle,
    /// A NULL pointer argument, named.
    NullPointer(&'static str),
    /// A negative count, named, with its value.
    NegativeCount(&'static str, i64),
    /// `ascount == 0`.
    EmptyList,
    /// A value outside its enum.
    InvalidEnum(&'static str, c_int),
    /// A string that is not UTF-8, named.
    InvalidString(&'static str),
    /// An output array is too small.
    BufferTooSmall {
        /// Elements needed.
        needed: usize,
        /// Elements given.
        given: usize,
    },
    /// A panic, with its message.
    Panic(String),
}

impl From<CdError> for Error {
    fn from(e: CdError) -> Self {
        Error::Core(e)
    }
}

impl Error {
    /// The code returned to C.
    pub(crate) fn code(&self) -> c_int {
        match self {
            Error::Core(e) => c_int::try_from(e.code()).unwrap_or(CD_ERR_PANIC),
            Error::NullHandle => CD_ERR_NULL_HANDLE,
            Error::NullPointer(_) => CD_ERR_NULL_POINTER,
            Error::NegativeCount(..) => CD_ERR_NEGATIVE_COUNT,
            Error::EmptyList => CD_ERR_EMPTY_LIST,
            Error::InvalidEnum(..) => CD_ERR_INVALID_ENUM,
            Error::InvalidString(_) => CD_ERR_INVALID_STRING,
            Error::BufferTooSmall { .. } => CD_ERR_BUFFER_TOO_SMALL,
            Error::Panic(_) => CD_ERR_PANIC,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Core(e) => write!(f, "{e}"),
            Error::NullHandle => {
                f.write_str("NULL CD handle: pass a handle from create_cd or CURRENT_CD")
            }
            Error::NullPointer(arg) => write!(f, "argument {arg} is NULL"),
            Error::NegativeCount(arg, v) => write!(f, "argument {arg} is negative ({v})"),
            Error::EmptyList => f.write_str("the address list has no entries (ascount is 0)"),
            Error::InvalidEnum(what, v) => write!(f, "{v} is not a valid {what}"),
            Error::InvalidString(arg) => write!(f, "argument {arg} is not valid UTF-8"),
            Error::BufferTooSmall { needed, given } => write!(
                f,
                "the output array holds {given} elements and {needed} are needed"
            ),
            Error::Panic(msg) => write!(f, "internal error: libcd panicked: {msg}"),
        }
    }
}

thread_local! {
    static LAST_CODE: Cell<c_int> = const { Cell::new(SUCCESS) };
    static LAST_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records the outcome of the calling thread's latest call and returns its code.
pub(crate) fn record(result: Result<(), Error>) -> c_int {
    match result {
        Ok(()) => {
            LAST_CODE.with(|c| c.set(SUCCESS));
            SUCCESS
        }
        Err(e) => {
            let code = e.code();
            LAST_CODE.with(|c| c.set(code));
            LAST_MESSAGE.with(|m| {
                let mut m = m.borrow_mut();
                m.clear();
                use std::fmt::Write;
                let _ = write!(m, "{e}");
            });
            code
        }
    }
}

/// Copies `text` into `buf` (at most `len - 1` bytes and a NUL); stores the bytes copied.
///
/// # Safety
/// `buf` must be NULL or valid for `len` bytes; `out_n` NULL or valid for a write.
unsafe fn copy_out(text: &[u8], buf: *mut c_char, len: usize, out_n: *mut usize) -> c_int {
    if buf.is_null() || out_n.is_null() {
        return CD_ERR_NULL_POINTER;
    }
    let n = text.len().min(len.saturating_sub(1));
    if len > 0 {
        // SAFETY: `buf` is valid for `len` bytes (caller) and `n + 1 <= len`; `text` is a
        // distinct Rust allocation or static, so the ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    // SAFETY: `out_n` is valid for a write (caller), checked non-NULL above.
    unsafe { *out_n = n };
    SUCCESS
}

/// A static, NUL-terminated description of an error code ("unknown CD error code" for a
/// number this library never returns). Never NULL; the caller must not free it.
#[no_mangle]
pub extern "C" fn cd_error_string(code: c_int) -> *const c_char {
    lookup(code).map_or(UNKNOWN, |(_, _, d)| d).as_ptr()
}

/// The name of an error code's constant (`"CD_ERR_STALE_HANDLE"`, `"SUCCESS"`, ...), static
/// and NUL-terminated; `"CD_ERR_UNKNOWN"` for a number this library never returns.
#[no_mangle]
pub extern "C" fn cd_error_name(code: c_int) -> *const c_char {
    lookup(code)
        .map_or(c"CD_ERR_UNKNOWN", |(_, n, _)| n)
        .as_ptr()
}

/// Copies the description of `code` into `buf` without allocating: at most `len - 1` bytes
/// followed by a NUL (nothing when `len` is 0), and stores the bytes copied (without the NUL)
/// in `*out_n`. Returns 0, or `CD_ERR_NULL_POINTER` if `buf` or `out_n` is NULL.
///
/// # Safety
/// `buf` must be valid for `len` bytes and `out_n` for one write.
#[no_mangle]
pub unsafe extern "C" fn cd_error_message(
    code: c_int,
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> c_int {
    let text = lookup(code).map_or(UNKNOWN, |(_, _, d)| d).to_bytes();
    // SAFETY: forwarded from the caller.
    unsafe { copy_out(text, buf, len, out_n) }
}

/// The code of the calling thread's most recent CD call (0 if it succeeded). This is how to
/// learn why `advance_cd_point_in_time` returned `FAILURE`, and why `create_cd` or
/// `get_MPI_log_from_cd` returned NULL when no `error` pointer was given. Every function sets
/// it except the queries that never fail: `cd_last_error`, `cd_last_error_message`,
/// `cd_error_string`, `cd_error_name`, `cd_error_message` and `cd_version`.
#[no_mangle]
pub extern "C" fn cd_last_error() -> c_int {
    LAST_CODE.with(Cell::get)
}

/// Copies the detailed message of the calling thread's most recent failed call (with the
/// addresses, counts and names involved) into `buf`, as `cd_error_message` does. The message
/// stays until the next failure on this thread; it is empty if no call has failed yet.
///
/// # Safety
/// `buf` must be valid for `len` bytes and `out_n` for one write.
#[no_mangle]
pub unsafe extern "C" fn cd_last_error_message(
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> c_int {
    LAST_MESSAGE.with(|m| {
        let m = m.borrow();
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(m.as_bytes(), buf, len, out_n) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cd_core::{CdHandle, Fate};

    #[test]
    fn every_core_variant_has_its_constant() {
        let h = CdHandle::from_bits(5);
        let cases = [
            (CdError::InvalidHandle(h), CD_ERR_INVALID_HANDLE),
            (
                CdError::StaleHandle {
                    handle: h,
                    fate: Fate::Committed,
                },
                CD_ERR_STALE_HANDLE,
            ),
            (CdError::NoActiveCd, CD_ERR_NO_ACTIVE_CD),
            (CdError::Reentrant, CD_ERR_REENTRANT),
            (CdError::RootInheritsLogging, CD_ERR_ROOT_INHERITS_LOGGING),
            (
                CdError::LoggingMismatch {
                    parent: "a",
                    child: "b",
                },
                CD_ERR_LOGGING_MISMATCH,
            ),
            (CdError::ChildNamed, CD_ERR_CHILD_NAMED),
            (CdError::DuplicateName("x".into()), CD_ERR_DUPLICATE_NAME),
            (CdError::BadName(String::new()), CD_ERR_BAD_NAME),
            (CdError::StorageInfo("x".into()), CD_ERR_STORAGE_INFO),
            (CdError::ZeroLength { address: 1 }, CD_ERR_ZERO_LENGTH),
            (CdError::NullAddress { length: 1 }, CD_ERR_NULL_ADDRESS),
            (
                CdError::AddressOverflow {
                    address: 1,
                    length: 1,
                },
                CD_ERR_ADDRESS_OVERFLOW,
            ),
            (
                CdError::OverlappingList {
                    first: 0,
                    second: 1,
                },
                CD_ERR_OVERLAPPING_LIST,
            ),
            (
                CdError::ReadWriteRegen { address: 1 },
                CD_ERR_READ_WRITE_REGEN,
            ),
            (CdError::PromoteRegen { address: 1 }, CD_ERR_PROMOTE_REGEN),
            (
                CdError::ScopeChange {
                    address: 1,
                    existing: "GLOBAL",
                },
                CD_ERR_SCOPE_CHANGE,
            ),
            (
                CdError::NotInAncestor { address: 1, end: 2 },
                CD_ERR_NOT_IN_ANCESTOR,
            ),
            (
                CdError::RegenAncestor { address: 1, end: 2 },
                CD_ERR_REGEN_ANCESTOR,
            ),
            (CdError::NoParent, CD_ERR_NO_PARENT),
            (
                CdError::RangeNotFound { address: 1, end: 2 },
                CD_ERR_RANGE_NOT_FOUND,
            ),
            (
                CdError::StraddlesMemorySpace {
                    address: 1,
                    length: 2,
                },
                CD_ERR_STRADDLES_MEMORY_SPACE,
            ),
            (
                CdError::RegionOverlap {
                    address: 1,
                    length: 2,
                },
                CD_ERR_REGION_OVERLAP,
            ),
            (CdError::UnknownMemorySpace(3), CD_ERR_UNKNOWN_MEMORY_SPACE),
            (CdError::RegionNotFound(1), CD_ERR_REGION_NOT_FOUND),
            (
                CdError::RegionInUse {
                    address: 1,
                    cd: cd_core::CdHandle::from_bits(1),
                },
                CD_ERR_REGION_IN_USE,
            ),
            (
                CdError::RemapRefused {
                    from: 1,
                    to: 2,
                    reason: String::new(),
                },
                CD_ERR_REMAP_REFUSED,
            ),
            (
                CdError::FileNotSeekable {
                    fd: 1,
                    message: String::new(),
                },
                CD_ERR_FILE_NOT_SEEKABLE,
            ),
            (CdError::FileNotFound(1), CD_ERR_FILE_NOT_FOUND),
            (
                CdError::HasChildren {
                    operation: "commit_cd",
                    children: 1,
                },
                CD_ERR_HAS_CHILDREN,
            ),
            (
                CdError::ConcurrentOperation {
                    operation: "a",
                    running: "b",
                },
                CD_ERR_CONCURRENT_OPERATION,
            ),
            (CdError::OutOfMemory { bytes: 1 }, CD_ERR_OUT_OF_MEMORY),
            (
                CdError::DeviceCopy {
                    space: String::new(),
                    message: String::new(),
                },
                CD_ERR_DEVICE_COPY,
            ),
            (
                CdError::RegenFailed {
                    status: 1,
                    ranges: 1,
                    not_restored: Vec::new(),
                },
                CD_ERR_REGEN_FAILED,
            ),
            (
                CdError::ParentDataMissing { address: 1, end: 2 },
                CD_ERR_PARENT_DATA_MISSING,
            ),
            (CdError::InjectedFault("x"), CD_ERR_INJECTED_FAULT),
            (
                CdError::MemoryLimit {
                    limit: 1,
                    asked: 2,
                    held: 0,
                },
                CD_ERR_MEMORY_LIMIT,
            ),
            (CdError::LoggingDisabled, CD_ERR_LOGGING_DISABLED),
            (CdError::LogReplaying, CD_ERR_LOG_REPLAYING),
            (CdError::EmptyLogEntry, CD_ERR_EMPTY_LOG_ENTRY),
            (CdError::RestoreRefused("x".into()), CD_ERR_RESTORE_REFUSED),
            (
                CdError::Unreplayable { call: "MPI_Put" },
                CD_ERR_UNREPLAYABLE,
            ),
            (CdError::Persist("x".into()), CD_ERR_PERSIST),
            (
                CdError::PersistMismatch("x".into()),
                CD_ERR_PERSIST_MISMATCH,
            ),
            (
                CdError::PersistInFlight("x".into()),
                CD_ERR_PERSIST_IN_FLIGHT,
            ),
        ];
        for (error, constant) in cases {
            assert_eq!(Error::Core(error.clone()).code(), constant, "{error:?}");
            assert!(lookup(constant).is_some(), "{constant} has no description");
        }
    }

    #[test]
    fn codes_are_distinct_and_described() {
        let mut seen = std::collections::BTreeSet::new();
        for (code, name) in known_codes() {
            assert!(seen.insert(code), "{name} reuses {code}");
            assert!(!cd_error_string(code).is_null());
        }
        assert_eq!(seen.len(), TABLE.len());
    }

    #[test]
    fn message_copy_truncates_and_terminates() {
        let mut buf = [0x7f as c_char; 8];
        let mut n = 0usize;
        // SAFETY: `buf` has 8 bytes and `n` is a valid out-parameter.
        let rc = unsafe { cd_error_message(CD_ERR_PANIC, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!((rc, n), (SUCCESS, 7));
        assert_eq!(buf[7], 0);
        // SAFETY: a zero-length buffer is never written.
        let rc = unsafe { cd_error_message(1, buf.as_mut_ptr(), 0, &mut n) };
        assert_eq!((rc, n), (SUCCESS, 0));
        // SAFETY: NULL pointers are checked before any access.
        let rc = unsafe { cd_error_message(1, std::ptr::null_mut(), 4, &mut n) };
        assert_eq!(rc, CD_ERR_NULL_POINTER);
    }
}
