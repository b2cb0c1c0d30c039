//! Finding the MPI library's own `PMPI_X`, once per function.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The address of the MPI library's `name` (a NUL-terminated `PMPI_X`), cached in `slot`.
///
/// `RTLD_NEXT` searches the objects loaded after the one holding this code, so it skips our own
/// `PMPI_X` export and finds the MPI library's, whether libcd was linked before `-lmpi` or
/// preloaded. A process that calls an MPI function without any MPI library loaded cannot
/// continue: that aborts with a message naming the function.
#[inline]
pub(crate) fn function(slot: &AtomicPtr<c_void>, name: &'static str) -> *mut c_void {
    let f = slot.load(Ordering::Relaxed);
    if !f.is_null() {
        return f;
    }
    let cname = CStr::from_bytes_with_nul(name.as_bytes()).expect("names end in NUL");
    // SAFETY: `cname` is a NUL-terminated string; dlsym has no other precondition.
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, cname.as_ptr()) };
    if f.is_null() {
        missing(cname);
    }
    slot.store(f, Ordering::Relaxed);
    f
}

#[cold]
fn missing(name: &CStr) -> ! {
    let message = format!(
        "libcd: {} not found in any library loaded after libcd; link the MPI library (mpicc) \
         or do not call MPI\n",
        name.to_string_lossy()
    );
    // SAFETY: writing a valid buffer to stderr.
    unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
    std::process::abort();
}
