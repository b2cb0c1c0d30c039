//! The panic boundary and the argument guards every exported function goes through.
//!
//! Every `extern "C"` function of the library is one call to [`ffi_int!`] or [`ffi_ptr!`]
//! around its body: the body runs inside `catch_unwind`, so a panic (a bug in libcd) becomes
//! `CD_ERR_PANIC` (or NULL plus `CD_ERR_PANIC` in the error out-parameter) instead of unwinding
//! into C, and the outcome is recorded as the thread's last error. Pointer arguments are checked
//! with [`try_mut!`] and [`try_slice!`] before they are dereferenced.

use crate::error::{record, Error};
use cd_core::panic_message;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f` behind the panic boundary and returns its C status (0 or an error code).
pub(crate) fn run_int(f: impl FnOnce() -> Result<(), Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => record(result),
        Err(payload) => record(Err(Error::Panic(panic_message(&*payload)))),
    }
}

/// Runs `f` behind the panic boundary for a function that returns a pointer: the pointer
/// (NULL on error) and the recorded code.
pub(crate) fn run_ptr<T>(f: impl FnOnce() -> Result<*mut T, Error>) -> (*mut T, c_int) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(ptr)) => (ptr, record(Ok(()))),
        Ok(Err(e)) => (std::ptr::null_mut(), record(Err(e))),
        Err(payload) => (
            std::ptr::null_mut(),
            record(Err(Error::Panic(panic_message(&*payload)))),
        ),
    }
}

/// Stores `code` in an optional `int *error` out-parameter.
///
/// # Safety
/// `error` must be NULL or valid for one write of a `c_int`.
pub(crate) unsafe fn store_code(error: *mut c_int, code: c_int) {
    if !error.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { *error = code };
    }
}

/// The body of an exported `int` function: `ffi_int!({ ...; Ok(()) })`.
macro_rules! ffi_int {
    ($body:block) => {
        $crate::boundary::run_int(|| -> Result<(), $crate::error::Error> { $body })
    };
}

/// The body of an exported pointer-returning function with an `int *error` out-parameter:
/// NULL on error, and the code (0 on success) stored in `*error` when `error` is not NULL.
macro_rules! ffi_ptr {
    ($error:expr, $body:block) => {{
        let (ptr, code) =
            $crate::boundary::run_ptr(|| -> Result<_, $crate::error::Error> { $body });
        // SAFETY: every exported function with an `error` out-parameter documents that it is
        // NULL or writable.
        unsafe { $crate::boundary::store_code($error, code) };
        ptr
    }};
}

/// A mutable reference from an out-parameter, or `Err(Error::NullPointer(name))`.
///
/// The exported function's `# Safety` contract must say that the pointer is NULL or valid
/// for writes (and properly aligned).
macro_rules! try_mut {
    ($ptr:expr, $name:literal) => {{
        let ptr = $ptr;
        if ptr.is_null() {
            return Err($crate::error::Error::NullPointer($name));
        }
        // SAFETY: non-NULL, and valid for writes by the exported function's contract.
        unsafe { &mut *ptr }
    }};
}

/// A slice from a pointer and an `int` count: NULL, negative and zero counts are errors.
macro_rules! try_slice {
    ($ptr:expr, $count:expr, $name:literal) => {{
        let (ptr, count) = ($ptr, $count);
        if ptr.is_null() {
            return Err($crate::error::Error::NullPointer($name));
        }
        let count: usize = match usize::try_from(count) {
            Ok(0) => return Err($crate::error::Error::EmptyList),
            Ok(n) => n,
            Err(_) => {
                return Err($crate::error::Error::NegativeCount(
                    "ascount",
                    i64::from(count),
                ))
            }
        };
        // SAFETY: non-NULL, and valid for `count` elements by the exported function's contract.
        unsafe { std::slice::from_raw_parts(ptr, count) }
    }};
}

pub(crate) use {ffi_int, ffi_ptr, try_mut, try_slice};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{cd_last_error, CD_ERR_NULL_POINTER, SUCCESS};

    use crate::error::CD_ERR_PANIC;

    #[test]
    fn a_panic_becomes_an_error_code() {
        let rc = ffi_int!({
            if cd_last_error() >= 0 {
                panic!("deliberate");
            }
            Ok(())
        });
        assert_eq!(rc, CD_ERR_PANIC);
        assert_eq!(cd_last_error(), CD_ERR_PANIC);
        let mut error = SUCCESS;
        let p: *mut u8 = ffi_ptr!(&mut error, {
            if error == SUCCESS {
                panic!("deliberate");
            }
            Ok(std::ptr::null_mut())
        });
        assert!(p.is_null());
        assert_eq!(error, CD_ERR_PANIC);
    }

    #[test]
    fn guards_refuse_null_and_bad_counts() {
        fn slice_len(p: *const u32, n: c_int) -> c_int {
            ffi_int!({
                let s = try_slice!(p, n, "list");
                assert!(!s.is_empty());
                Ok(())
            })
        }
        let data = [1u32, 2];
        assert_eq!(slice_len(std::ptr::null(), 1), CD_ERR_NULL_POINTER);
        assert_eq!(
            slice_len(data.as_ptr(), -1),
            crate::error::CD_ERR_NEGATIVE_COUNT
        );
        assert_eq!(slice_len(data.as_ptr(), 0), crate::error::CD_ERR_EMPTY_LIST);
        assert_eq!(slice_len(data.as_ptr(), 2), SUCCESS);
    }
}
