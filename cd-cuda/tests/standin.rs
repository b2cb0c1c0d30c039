//! The built-in CUDA space against the stand-in driver (`standin/cuda_standin.c`), compiled
//! here with `cc`: device memory the CPU cannot touch, allocations back to back, copies across
//! two allocations refused, asynchronous copies that run only when synchronised. Every test
//! takes one lock: they share the process's one space and the stand-in's counters.

// Each transmute below is annotated by the type of the field it fills.
#![allow(clippy::missing_transmute_annotations)]

use cd_core::*;
use std::ffi::{c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

type Fn1 = unsafe extern "C" fn(*mut u64, usize) -> c_int;

/// The stand-in's entry points the tests call themselves.
struct Standin {
    alloc: Fn1,
    alloc_managed: unsafe extern "C" fn(*mut u64, usize, u32) -> c_int,
    retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    push: unsafe extern "C" fn(*mut c_void) -> c_int,
    pop: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> c_int,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int,
    counters: unsafe extern "C" fn(*mut u64),
    refuse_register: unsafe extern "C" fn(c_int),
}

fn standin() -> (&'static Standin, MutexGuard<'static, ()>) {
    static LOCK: Mutex<()> = Mutex::new(());
    static STANDIN: OnceLock<Standin> = OnceLock::new();
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let s = STANDIN.get_or_init(|| {
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("standin/cuda_standin.c");
        let lib = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("libcuda_standin.so");
        let out = std::process::Command::new(std::env::var("CC").unwrap_or("cc".into()))
            .args([
                "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC", "-o",
            ])
            .arg(&lib)
            .arg(&source)
            .output()
            .expect("run cc");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::env::set_var("CD_CUDA_LIBRARY", &lib);
        let space = cd_cuda::enable().unwrap_or_else(|| panic!("{:?}", cd_cuda::status()));
        assert!(space > HOST);
        let name = CString::new(lib.to_str().unwrap()).unwrap();
        // SAFETY: the library the space loaded; dlopen returns the same handle.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
        assert!(!handle.is_null());
        let sym = |n: &str| {
            let n = CString::new(n).unwrap();
            // SAFETY: a live handle and a NUL-terminated name.
            let f = unsafe { libc::dlsym(handle, n.as_ptr()) };
            assert!(!f.is_null());
            f
        };
        // SAFETY: each symbol has the signature the stand-in declares.
        unsafe {
            Standin {
                alloc: std::mem::transmute(sym("cuMemAlloc_v2")),
                alloc_managed: std::mem::transmute(sym("cuMemAllocManaged")),
                retain: std::mem::transmute(sym("cuDevicePrimaryCtxRetain")),
                push: std::mem::transmute(sym("cuCtxPushCurrent_v2")),
                pop: std::mem::transmute(sym("cuCtxPopCurrent_v2")),
                htod: std::mem::transmute(sym("cuMemcpyHtoD_v2")),
                dtoh: std::mem::transmute(sym("cuMemcpyDtoH_v2")),
                counters: std::mem::transmute(sym("cuStandinCounters")),
                refuse_register: std::mem::transmute(sym("cuStandinRefuseRegister")),
            }
        }
    });
    (s, guard)
}

impl Standin {
    fn malloc(&self, len: usize) -> usize {
        let mut p = 0;
        // SAFETY: out-pointer to a local.
        assert_eq!(unsafe { (self.alloc)(&mut p, len) }, 0);
        p as usize
    }
    /// Runs `f` with the primary context current, as a CUDA application would.
    fn in_context(&self, f: impl FnOnce() -> c_int) {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the stand-in's context calls with valid out-pointers.
        unsafe {
            assert_eq!((self.retain)(&mut ctx, 0), 0);
            assert_eq!((self.push)(ctx), 0);
            assert_eq!(f(), 0);
            assert_eq!((self.pop)(&mut ctx), 0);
        }
    }
    /// A "kernel" writing device memory.
    fn upload(&self, dev: usize, bytes: &[u8]) {
        // SAFETY: `bytes` is readable; the stand-in checks `dev`.
        self.in_context(|| unsafe { (self.htod)(dev as u64, bytes.as_ptr().cast(), bytes.len()) });
    }
    fn download(&self, dev: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        // SAFETY: `out` is writable; the stand-in checks `dev`.
        self.in_context(|| unsafe { (self.dtoh)(out.as_mut_ptr().cast(), dev as u64, len) });
        out
    }
    fn counters(&self) -> [u64; 8] {
        let mut c = [0; 8];
        // SAFETY: eight writable counters.
        unsafe { (self.counters)(c.as_mut_ptr()) };
        c
    }
}

fn rw(address: usize, len: usize) -> AddrSpec {
    AddrSpec::new(address, len, Access::ReadWrite, Scope::Global)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn root(name: &str) -> CdHandle {
    create_cd(None, None, LoggingMode::Disabled, Some(name)).unwrap()
}

/// The spec's simple example written naturally on a GPU: two equal arrays that cudaMalloc
/// put back to back, both protected, advanced and restored with no callback written.
#[test]
fn adjacent_allocations_advance_and_restore() {
    let (s, _guard) = standin();
    const N: usize = 3 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    assert_eq!(b, a + N, "the stand-in places allocations back to back");
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let refused = s.counters()[7];
    let cd = root("cuda-adjacent");
    // SAFETY: device ranges go through the driver; nothing else writes them meanwhile.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    let entries = cd_entries(cd).unwrap();
    assert_eq!(entries.len(), 2, "one entry per allocation");
    assert!(entries.iter().all(|e| Some(e.space) == cd_cuda::enable()));
    s.upload(a, &pattern(N, 3));
    s.upload(b, &pattern(N, 4));
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    s.upload(a, &pattern(N, 5));
    s.upload(b, &pattern(N, 6));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(a, N) == pattern(N, 3));
    assert!(s.download(b, N) == pattern(N, 4));
    assert_eq!(s.counters()[7], refused, "no copy spanned two allocations");
    assert!(s.counters()[5] > 0, "the store buffer was pinned");
    commit_cd(cd).unwrap();
}

/// A store that cannot be pinned: copies go through the two staging buffers, chunk by chunk,
/// with asynchronous copies that only run when synchronised.
#[test]
fn staged_copies_are_pipelined_and_correct() {
    let (s, _guard) = standin();
    let n = 2 * cd_cuda::CHUNK + 12345;
    let a = s.malloc(n);
    s.upload(a, &pattern(n, 7));
    // SAFETY: the stand-in's test hook.
    unsafe { (s.refuse_register)(1) };
    let before = s.counters();
    let cd = root("cuda-staged");
    // SAFETY: as in the test above.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, n)]).unwrap() };
    s.upload(a, &pattern(n, 8));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    // SAFETY: the stand-in's test hook.
    unsafe { (s.refuse_register)(0) };
    assert!(s.download(a, n) == pattern(n, 7));
    let after = s.counters();
    assert_eq!(
        after[2] - before[2],
        n as u64,
        "device-to-host went asynchronously"
    );
    assert_eq!(
        after[3] - before[3],
        n as u64,
        "host-to-device went asynchronously"
    );
    assert_eq!(
        after[4], before[4],
        "every asynchronous copy used pinned staging"
    );
    commit_cd(cd).unwrap();
}

/// Managed memory is device memory to the space (saved with the driver's copies), host
/// memory stays host memory, and ranges across allocations or into host memory are refused.
#[test]
fn managed_host_and_straddling_ranges() {
    let (s, _guard) = standin();
    let mut m = 0u64;
    // SAFETY: out-pointer to a local.
    assert_eq!(unsafe { (s.alloc_managed)(&mut m, 4096, 1) }, 0);
    let managed = m as usize;
    // SAFETY: the stand-in's managed memory is host-accessible, 4096 bytes.
    unsafe { std::ptr::write_bytes(managed as *mut u8, 9, 4096) };
    let host = [5u8; 64];
    let cd = root("cuda-managed");
    let dtoh = |c: [u64; 8]| c[0] + c[2];
    let dtoh_before = dtoh(s.counters());
    // SAFETY: the ranges are live and not written during the calls.
    unsafe {
        add_to_cd_via_copy(cd, &[rw(managed, 4096), rw(host.as_ptr() as usize, 64)]).unwrap()
    };
    let entries = cd_entries(cd).unwrap();
    let space = cd_cuda::enable().unwrap();
    assert_eq!(entries.iter().filter(|e| e.space == space).count(), 1);
    assert_eq!(entries.iter().filter(|e| e.space == HOST).count(), 1);
    assert_eq!(
        dtoh(s.counters()) - dtoh_before,
        4096,
        "managed saved by the driver"
    );
    // SAFETY: as above.
    unsafe {
        std::ptr::write_bytes(managed as *mut u8, 1, 4096);
        restore_cd(cd).unwrap();
        assert_eq!(*(managed as *const u8).add(4095), 9);
    }
    let (x, y) = (s.malloc(1024), s.malloc(1024));
    assert_eq!(y, x + 1024);
    for bad in [rw(x + 512, 1024), rw(x - 16, 32)] {
        // SAFETY: refused before any memory is read.
        let err = unsafe { add_to_cd_via_copy(cd, &[bad]) }.unwrap_err();
        assert!(matches!(err, CdError::StraddlesMemorySpace { .. }), "{err}");
    }
    commit_cd(cd).unwrap();
}
