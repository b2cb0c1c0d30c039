//! Error codes, their messages, and each thread's last error.
//!
//! Every `int` function of the C API returns [`SUCCESS`] (0) or a nonzero code. The codes from
//! 1 to 99 are cd-core's [`CdError::code`] numbers, unchanged; 100 and up are the C layer's own
//! (a NULL pointer, a negative count, a value outside an enum, a panic). Numbers are never
//! reused, and a new one takes the next free number of its range.
//!
//! One source per code: cd-core's numbers, C names and descriptions are its table
//! `CdError::CODES` (written by the same macro as `CdError::code`, so they cannot disagree);
//! this layer's are the `own_codes!` block below. [`known_codes`] joins the two, and the test
//! `tests/header.rs` writes from it the `#define`s of `include/cd.h` and the `parameter`s of
//! `fortran/containment_domains.f90` (and fails when the checked-in ones are stale).
//!
//! [`FAILURE`] (-1) is what `advance_cd_point_in_time` returns on any failure, so that the
//! spec's own `if (advance_cd_point_in_time(cd) == FAILURE)` works; the specific code is then
//! in [`cd_last_error`], which every function of the library sets (0 after a success).

use cd_core::CdError;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr};

/// One line of the code table, as C sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The number a function returns.
    pub code: c_int,
    /// The name of its C constant (`SUCCESS`, `CD_ERR_...`).
    pub name: &'static CStr,
    /// What it means, in one line.
    pub description: &'static CStr,
}

/// This layer's own codes: each line writes the Rust constant and its table line, from which
/// the header test writes the `#define`s of `cd.h` and the Fortran `parameter`s.
macro_rules! own_codes {
    ($( $(#[doc = $doc:literal])* $name:ident = $code:literal, $description:literal; )*) => {
        $( $(#[doc = $doc])* pub const $name: c_int = $code; )*

        /// `SUCCESS`, `FAILURE` and the C layer's own codes (100..199).
        const OWN: &[CodeInfo] = &[
            $( CodeInfo {
                code: $name,
                name: cd_core::c_str(concat!(stringify!($name), "\0")),
                description: cd_core::c_str(concat!($description, "\0")),
            }, )*
        ];
    };
}

// cd-core's codes (1..99) are not repeated here: they are `CdError::CODES`, cd-core's table.
// A retired code stays here as a "reserved" comment. Last added: CD_ERR_PANIC.
own_codes! {
    /// The operation succeeded.
    SUCCESS = 0, "success";
    /// What `advance_cd_point_in_time` returns when it fails, whatever the reason; the reason is
    /// `cd_last_error()`. No other function returns it.
    FAILURE = -1, "advance_cd_point_in_time failed; cd_last_error() gives the reason";
    /// A NULL `cd_handle` where a CD is required (NULL means "no parent" only in `create_cd`).
    CD_ERR_NULL_HANDLE = 100, "NULL CD handle (NULL means 'no parent' only in create_cd)";
    /// A required pointer argument is NULL.
    CD_ERR_NULL_POINTER = 101, "a required pointer argument is NULL";
    /// A count or length argument is negative.
    CD_ERR_NEGATIVE_COUNT = 102, "a count or length argument is negative";
    /// An address list with no entries (`ascount == 0`).
    CD_ERR_EMPTY_LIST = 103, "the address list has no entries (ascount is 0)";
    /// A value outside its enum (addr_tp, addr_scope, logging mode, ...).
    CD_ERR_INVALID_ENUM = 104, "a value is outside its enum (addr_tp, addr_scope, logging mode)";
    /// A string argument is not valid UTF-8.
    CD_ERR_INVALID_STRING = 105, "a string argument is not valid UTF-8";
    /// An output array is too small; the count needed was stored.
    CD_ERR_BUFFER_TOO_SMALL = 106, "the output array is too small; the count needed was stored";
    /// The library panicked (a bug in libcd); the operation did not complete.
    CD_ERR_PANIC = 107, "internal error: libcd panicked; the operation did not complete";
}

const UNKNOWN: &CStr = c"unknown CD error code";

/// Every code this library returns: `SUCCESS` and `FAILURE`, cd-core's (from its table
/// `CdError::CODES`), then this layer's own. The C header's and the Fortran module's constant
/// blocks are generated from this list (`tests/header.rs`).
pub fn known_codes() -> impl Iterator<Item = CodeInfo> {
    let core = CdError::CODES.iter().map(|c| CodeInfo {
        // cd-core's codes are below 100 (its tests check), so they fit a c_int.
        code: c_int::try_from(c.code).unwrap_or(CD_ERR_PANIC),
        name: c.name,
        description: c.description,
    });
    let own = |results: bool| {
        OWN.iter()
            .copied()
            .filter(move |c| (c.code <= 0) == results)
    };
    own(true).chain(core).chain(own(false))
}

fn lookup(code: c_int) -> Option<CodeInfo> {
    known_codes().find(|c| c.code == code)
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
    lookup(code).map_or(UNKNOWN, |c| c.description).as_ptr()
}

/// The name of an error code's constant (`"CD_ERR_STALE_HANDLE"`, `"SUCCESS"`, ...), static
/// and NUL-terminated; `"CD_ERR_UNKNOWN"` for a number this library never returns.
#[no_mangle]
pub extern "C" fn cd_error_name(code: c_int) -> *const c_char {
    lookup(code).map_or(c"CD_ERR_UNKNOWN", |c| c.name).as_ptr()
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
    let text = lookup(code).map_or(UNKNOWN, |c| c.description).to_bytes();
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

    #[test]
    fn codes_are_distinct_and_described() {
        let mut seen = std::collections::BTreeSet::new();
        for c in known_codes() {
            assert!(seen.insert(c.code), "{:?} reuses {}", c.name, c.code);
            assert!(!c.description.is_empty());
            assert_eq!(cd_error_name(c.code), c.name.as_ptr());
            assert_eq!(cd_error_string(c.code), c.description.as_ptr());
        }
        assert_eq!(seen.len(), CdError::CODES.len() + OWN.len());
        assert!(seen.range(1..100).count() == CdError::CODES.len());
        // SAFETY: `cd_error_name` returns a static NUL-terminated string.
        let unknown = unsafe { CStr::from_ptr(cd_error_name(99)) };
        assert_eq!(unknown, c"CD_ERR_UNKNOWN");
    }

    #[test]
    fn a_core_error_returns_its_table_code() {
        let e = Error::Core(CdError::RegionNotFound(1));
        // SAFETY: `cd_error_name` returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(cd_error_name(e.code())) };
        assert_eq!(name, c"CD_ERR_REGION_NOT_FOUND");
        assert_eq!(Error::NullHandle.code(), CD_ERR_NULL_HANDLE);
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
