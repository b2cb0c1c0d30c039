//! Finding the MPI library's own `PMPI_X`, once per function.
//!
//! `RTLD_NEXT` searches the objects loaded after the one holding this code, so it skips our own
//! `PMPI_X` export and finds the MPI library's, whether libcd was linked before `-lmpi` or
//! preloaded. An MPI library loaded later with `dlopen` in local mode (Python's extension
//! modules: mpi4py) is not in that search: then the library is found among the loaded objects
//! as the one, other than libcd, that defines `PMPI_Init`, and its symbols are taken from it.
//!
//! If no MPI library is loaded at all, the one this build was made against
//! ([`crate::abi::LIBRARY`], by path, then by file name through the loader's search) is loaded
//! with `RTLD_GLOBAL`. That happens to a program linked `mpicc app.c -lcd` by a linker using
//! `--as-needed` (Ubuntu's default): every MPI function the program calls resolves to libcd,
//! so the linker drops the MPI library from the program's dependencies.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The address of the MPI library's `name` (a NUL-terminated `PMPI_X`), cached in `slot`.
///
/// A process that calls an MPI function without any MPI library loaded cannot continue: that
/// aborts with a message naming the function.
#[inline]
pub(crate) fn function(slot: &AtomicPtr<c_void>, name: &'static str) -> *mut c_void {
    let f = slot.load(Ordering::Relaxed);
    if !f.is_null() {
        return f;
    }
    let cname = CStr::from_bytes_with_nul(name.as_bytes()).expect("names end in NUL");
    let f = lookup(cname);
    if f.is_null() {
        missing(cname);
    }
    slot.store(f, Ordering::Relaxed);
    f
}

/// The address of the MPI library's symbol `name` (a function or a global), or null.
pub(crate) fn lookup(name: &CStr) -> *mut c_void {
    // SAFETY: `name` is a NUL-terminated string; dlsym has no other precondition.
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if !f.is_null() {
        return f;
    }
    match library() {
        // SAFETY: a handle dlopen returned, never closed; a NUL-terminated name.
        Some(handle) => unsafe { libc::dlsym(handle, name.as_ptr()) },
        None => std::ptr::null_mut(),
    }
}

/// The handle of the loaded MPI library found by its `PMPI_Init`, searched until found.
fn library() -> Option<*mut c_void> {
    static LIBRARY: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let found = LIBRARY.load(Ordering::Acquire);
    if !found.is_null() {
        return Some(found);
    }
    let mut names: Vec<Vec<u8>> = Vec::new();
    // SAFETY: the callback only reads the entries dl_iterate_phdr hands it, during the call.
    unsafe { libc::dl_iterate_phdr(Some(collect_name), (&mut names as *mut Vec<Vec<u8>>).cast()) };
    let ours = own_base();
    for mut name in names {
        name.push(0);
        // SAFETY: a NUL-terminated path of an object already loaded: RTLD_NOLOAD only returns
        // a new reference to it (never closed, which keeps it as loaded as it already is).
        let handle =
            unsafe { libc::dlopen(name.as_ptr().cast(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
        if handle.is_null() {
            continue;
        }
        // SAFETY: a live handle and a NUL-terminated name.
        let init = unsafe { libc::dlsym(handle, c"PMPI_Init".as_ptr()) };
        if !init.is_null() && base_of(init) != ours {
            LIBRARY.store(handle, Ordering::Release);
            return Some(handle);
        }
        // SAFETY: the reference this loop took.
        unsafe { libc::dlclose(handle) };
    }
    let handle = load_built_library()?;
    LIBRARY.store(handle, Ordering::Release);
    Some(handle)
}

/// Loads the MPI library this build was made against, by path, then by file name.
#[cold]
fn load_built_library() -> Option<*mut c_void> {
    let path = crate::abi::LIBRARY;
    let file_name = path.rsplit('/').next().unwrap_or(path);
    for name in [path, file_name] {
        let Ok(name) = std::ffi::CString::new(name) else {
            continue;
        };
        if name.as_bytes().is_empty() {
            continue;
        }
        // SAFETY: a NUL-terminated name; the library is kept loaded for the life of the
        // process (the handle is never closed). RTLD_GLOBAL: MPI libraries load plugins that
        // expect the library's symbols in the global scope.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !handle.is_null() {
            tracing::debug!(library = %name.to_string_lossy(), "no MPI library was loaded; loaded it");
            return Some(handle);
        }
    }
    None
}

unsafe extern "C" fn collect_name(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid entry and our `data`, the Vec of `library`.
    unsafe {
        let name: *const c_char = (*info).dlpi_name;
        if !name.is_null() && *name != 0 {
            let names = &mut *data.cast::<Vec<Vec<u8>>>();
            names.push(CStr::from_ptr(name).to_bytes().to_vec());
        }
    }
    0
}

/// The load address of the object holding `address`.
fn base_of(address: *const c_void) -> *mut c_void {
    let mut info: libc::Dl_info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and writes `info`.
    unsafe { libc::dladdr(address, &mut info) };
    info.dli_fbase
}

/// The load address of the object holding this code (libcd).
fn own_base() -> *mut c_void {
    base_of(own_base as *const c_void)
}

#[cold]
fn missing(name: &CStr) -> ! {
    let message = format!(
        "libcd: {} not found in any loaded library, nor in {}; link the MPI library (mpicc) or \
         do not call MPI\n",
        name.to_string_lossy(),
        crate::abi::LIBRARY
    );
    // SAFETY: writing a valid buffer to stderr.
    unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
    std::process::abort();
}
