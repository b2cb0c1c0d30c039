//! The stand-in CUDA driver (`cd-cuda/standin/cuda_standin.c`) for tests: compiled with `cc`,
//! then opened to reach its entry points as an application would. Shared by cd-cuda's tests,
//! the facade's (`tests/cuda.rs`) and the tests of the CUDA examples, which include this file
//! by path.

use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

/// Compiles `source` (the stand-in) into `dir/<name>`; returns its path. (Integration tests
/// pass `CARGO_TARGET_TMPDIR`; an example's tests, which cargo gives no such directory, their
/// executable's.)
pub fn build(dir: &Path, source: &Path, name: &str) -> PathBuf {
    let lib = dir.join(name);
    let out = std::process::Command::new(std::env::var("CC").unwrap_or("cc".into()))
        .args([
            "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC", "-o",
        ])
        .arg(&lib)
        .arg(source)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// The stand-in library, opened (the handle the CUDA space loaded: dlopen returns the same).
pub struct Library(*mut c_void);

impl Library {
    /// Opens the library at `path`.
    pub fn open(path: &Path) -> Self {
        let name = CString::new(path.to_str().expect("UTF-8 path")).expect("no NUL");
        // SAFETY: a NUL-terminated name; the stand-in has no constructors.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
        assert!(!handle.is_null(), "dlopen {}", path.display());
        Library(handle)
    }

    /// The entry point `name`, as the function pointer type `F`.
    ///
    /// # Safety
    /// `F` must be a function pointer type with the signature the stand-in declares for
    /// `name`.
    pub unsafe fn symbol<F: Copy>(&self, name: &str) -> F {
        assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
        let n = CString::new(name).expect("no NUL");
        // SAFETY: a live handle and a NUL-terminated name.
        let f = unsafe { libc::dlsym(self.0, n.as_ptr()) };
        assert!(!f.is_null(), "the stand-in has no {name}");
        // SAFETY: `F` is a function pointer of `name`'s signature (the caller's contract), of
        // the size of a data pointer (checked above).
        unsafe { std::mem::transmute_copy(&f) }
    }
}
