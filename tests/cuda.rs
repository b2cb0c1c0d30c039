//! The safe layer on CUDA memory ([`Device::cuda`]), against the stand-in driver
//! (`cd-cuda/standin/cuda_standin.c`, compiled here with `cc`): device memory the CPU cannot
//! touch, copies that need a context, asynchronous copies that run only when synchronised.
//!
//! This is its own test binary because the CUDA space reads its environment (`CD_CUDA`,
//! `CD_CUDA_LIBRARY`) once per process; the "off" and "no driver" cases run in child
//! processes. Every test takes one lock: they share the stand-in's counters.

#[path = "../cd-cuda/tests/support/mod.rs"]
mod standin_support;

use containment::{CudaMemory, Device, DeviceBuffer, DeviceKey, Domain, Error, Stream};
use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The stand-in's arena: small, so that "out of device memory" is quick to reach.
const ARENA: usize = 64 << 20;

/// The stand-in's entry points the tests call themselves, as the application would.
struct Standin {
    init: unsafe extern "C" fn(u32) -> c_int,
    alloc: unsafe extern "C" fn(*mut u64, usize) -> c_int,
    retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    push: unsafe extern "C" fn(*mut c_void) -> c_int,
    pop: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> c_int,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int,
    counters: unsafe extern "C" fn(*mut u64),
    run_streams: unsafe extern "C" fn(),
    reset: unsafe extern "C" fn(),
}

impl Standin {
    /// The entry points of the stand-in library at `lib`.
    fn open(lib: &std::path::Path) -> Standin {
        let lib = standin_support::Library::open(lib);
        // SAFETY: each symbol has the signature the stand-in declares.
        unsafe {
            Standin {
                init: lib.symbol("cuInit"),
                alloc: lib.symbol("cuMemAlloc_v2"),
                retain: lib.symbol("cuDevicePrimaryCtxRetain"),
                push: lib.symbol("cuCtxPushCurrent_v2"),
                pop: lib.symbol("cuCtxPopCurrent_v2"),
                htod: lib.symbol("cuMemcpyHtoD_v2"),
                dtoh: lib.symbol("cuMemcpyDtoH_v2"),
                counters: lib.symbol("cuStandinCounters"),
                run_streams: lib.symbol("cuStandinRunStreams"),
                reset: lib.symbol("cuStandinReset"),
            }
        }
    }
}

fn standin() -> (&'static Standin, MutexGuard<'static, ()>) {
    static LOCK: Mutex<()> = Mutex::new(());
    static STANDIN: OnceLock<Standin> = OnceLock::new();
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let s = STANDIN.get_or_init(|| {
        let lib = standin_support::build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cd-cuda/standin/cuda_standin.c"),
            "libcuda_standin_facade.so",
        );
        // Before the first use of the space, which reads them once.
        std::env::set_var("CD_CUDA_LIBRARY", &lib);
        std::env::set_var("CD_CUDA_STANDIN_BYTES", ARENA.to_string());
        std::env::remove_var("CD_CUDA");
        Device::cuda().expect("the stand-in driver loads");
        Standin::open(&lib)
    });
    (s, guard)
}

impl Standin {
    /// A "kernel" writing device memory: a synchronous copy in the primary context, ordered
    /// after the work queued on the default stream (an asynchronous advance's snapshot), as a
    /// kernel launched on that stream would be.
    fn kernel(&self, address: usize, values: &[u32]) {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the stand-in's context calls with valid out-pointers; `values` is readable
        // and the stand-in checks the device range.
        unsafe {
            assert_eq!((self.retain)(&mut ctx, 0), 0);
            assert_eq!((self.push)(ctx), 0);
            let rc = (self.htod)(address as u64, values.as_ptr().cast(), values.len() * 4);
            assert_eq!((self.pop)(&mut ctx), 0);
            assert_eq!(rc, 0, "kernel write");
        }
    }

    /// A device allocation of `bytes` bytes made by the application itself (`cuMemAlloc`).
    fn malloc(&self, bytes: usize) -> usize {
        let mut address = 0;
        // SAFETY: the stand-in's calls, with an out-pointer to a local.
        unsafe {
            assert_eq!((self.init)(0), 0);
            assert_eq!((self.alloc)(&mut address, bytes), 0, "cuMemAlloc");
        }
        address as usize
    }

    /// The `len` values at `address`, read by the application (`cuMemcpyDtoH`).
    fn read(&self, address: usize, len: usize) -> Vec<u32> {
        let mut out = vec![0u32; len];
        let mut ctx = std::ptr::null_mut();
        // SAFETY: as in `kernel`; `out` is writable for `len` values.
        unsafe {
            assert_eq!((self.retain)(&mut ctx, 0), 0);
            assert_eq!((self.push)(ctx), 0);
            let rc = (self.dtoh)(out.as_mut_ptr().cast(), address as u64, len * 4);
            assert_eq!((self.pop)(&mut ctx), 0);
            assert_eq!(rc, 0, "cuMemcpyDtoH");
        }
        out
    }

    fn counters(&self) -> [u64; 12] {
        let mut c = [0; 12];
        // SAFETY: twelve writable counters.
        unsafe { (self.counters)(c.as_mut_ptr()) };
        c
    }

    /// Live device allocations.
    fn live(&self) -> u64 {
        self.counters()[8]
    }

    /// Device-to-device bytes copied (the asynchronous advance's snapshots).
    fn dtod(&self) -> u64 {
        self.counters()[9]
    }

    /// The copy engines catch up: queued drains run.
    fn run_streams(&self) {
        // SAFETY: the stand-in's test hook.
        unsafe { (self.run_streams)() }
    }
}

fn pattern(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed))
        .collect()
}

/// Asserts equal contents, reporting the first difference rather than every element.
fn same(actual: &[u32], expected: &[u32]) {
    assert_eq!(actual.len(), expected.len(), "lengths");
    if let Some(i) = (0..actual.len()).find(|&i| actual[i] != expected[i]) {
        panic!("element {i}: {} instead of {}", actual[i], expected[i]);
    }
}

/// A kernel step on `key`: its address from `device_mut` (which makes it READ_WRITE), then the
/// kernel writes `values` there.
fn step(s: &Standin, cd: &mut Domain, key: DeviceKey<u32>, values: &[u32]) {
    let p = cd.device_mut(key).unwrap();
    assert_eq!(p.len(), values.len());
    s.kernel(p.address(), values);
}

const N: usize = 1 << 16; // 256 KiB of u32

/// The synchronous cycle on real (stand-in) CUDA memory: protect, a kernel writes through the
/// pointer `device_mut` gives, advance, a fault, restore, upload, take, commit; every byte
/// checked, every allocation freed.
#[test]
fn protect_kernel_advance_restore_commit() {
    let (s, _guard) = standin();
    let gpu = Device::cuda().unwrap();
    assert_eq!(Some(gpu.space()), containment::enable_cuda());
    let live = s.live();
    let mut cd = Domain::builder().name("cuda-safe-sync").create().unwrap();
    let u = cd.protect_device(&gpu, &pattern(N, 1)).unwrap();
    let v = cd.protect_device(&gpu, &pattern(N, 2)).unwrap();
    let empty = cd.protect_device::<u32>(&gpu, &[]).unwrap();
    assert_eq!(s.live(), live + 2, "one cuMemAlloc per non-empty buffer");
    same(&cd.download_device(u).unwrap(), &pattern(N, 1));

    step(s, &mut cd, u, &pattern(N, 3));
    let report = cd.advance().unwrap();
    assert_eq!(
        report.bytes_copied,
        N * 4,
        "only the buffer the kernel wrote"
    );
    step(s, &mut cd, u, &pattern(N, 4));
    step(s, &mut cd, v, &pattern(N, 5));
    cd.restore().unwrap(); // the kernels crashed halfway
    same(&cd.download_device(u).unwrap(), &pattern(N, 3));
    same(&cd.download_device(v).unwrap(), &pattern(N, 2));

    cd.upload_device(v, 10, &[7, 8, 9]).unwrap();
    cd.advance().unwrap();
    let mut expected = pattern(N, 2);
    expected[10..13].copy_from_slice(&[7, 8, 9]);
    cd.upload_device(v, 0, &pattern(N, 6)).unwrap();
    cd.restore().unwrap();
    same(&cd.download_device(v).unwrap(), &expected);
    assert!(
        cd.upload_device(v, N - 1, &[1, 2]).is_err(),
        "out of bounds"
    );

    same(&cd.take_device(u).unwrap(), &pattern(N, 3));
    assert_eq!(
        s.live(),
        live + 1,
        "taking a buffer frees its device memory"
    );
    assert_eq!(cd.take_device(empty).unwrap(), Vec::<u32>::new());
    cd.commit().unwrap();
    assert_eq!(s.live(), live, "the commit freed every device buffer");
}

/// The asynchronous advance through the safe layer: the snapshot is taken on the device, the
/// drain runs in the background while the next kernel writes the buffer, and the new point
/// becomes current only when the drain completed; the buffer the kernel was given during the
/// drain is READ_WRITE afterwards. A restore while a drain runs restores the previous point.
#[test]
fn advance_async_drains_while_the_next_kernel_runs() {
    let (s, _guard) = standin();
    let gpu = Device::cuda().unwrap();
    let live = s.live();
    let mut cd = Domain::builder().name("cuda-safe-async").create().unwrap();
    let u = cd.protect_device(&gpu, &pattern(N, 1)).unwrap();
    let count = cd.protect(vec![0u64]).unwrap();

    step(s, &mut cd, u, &pattern(N, 2));
    cd.get_mut(count).unwrap()[0] = 1;
    let dtod = s.dtod();
    let mut pending = cd.advance_async(Stream::DEFAULT).unwrap();
    assert!(pending.in_flight(), "{pending:?}");
    assert_eq!(pending.report().bytes_copied, N * 4 + 8);
    assert_eq!(s.dtod() - dtod, 0, "the snapshot is queued on the stream");
    {
        // The next kernel, queued after the snapshot: no wait for the drain.
        let p = pending.device_mut(u).unwrap();
        s.kernel(p.address(), &pattern(N, 3));
    }
    assert_eq!(
        s.dtod() - dtod,
        (N * 4) as u64,
        "snapshot taken before the kernel"
    );
    assert!(!pending.test().unwrap(), "the drain has not run");
    s.run_streams();
    assert!(pending.test().unwrap(), "the drain completed");
    same(&cd.download_device(u).unwrap(), &pattern(N, 3)); // the kernel's
    assert_eq!(cd.info().unwrap().stats.advances, 1);

    // The kernel during the drain made `u` READ_WRITE again: the next advance saves it.
    let report = cd.advance().unwrap();
    assert_eq!(
        report.bytes_copied,
        N * 4,
        "u again, not the demoted counter"
    );
    s.kernel(cd.device_mut(u).unwrap().address(), &pattern(N, 4));
    cd.restore().unwrap();
    same(&cd.download_device(u).unwrap(), &pattern(N, 3));
    assert_eq!(
        cd.get(count).unwrap(),
        [1],
        "host buffers saved at the call"
    );

    // A fault while the drain runs: the pending point is dropped, the previous one restored.
    step(s, &mut cd, u, &pattern(N, 5));
    let pending = cd.advance_async(Stream::DEFAULT).unwrap();
    assert!(pending.in_flight());
    cd.restore().unwrap();
    same(&cd.download_device(u).unwrap(), &pattern(N, 3)); // the previous point

    // Waited for: the new point is current at once.
    step(s, &mut cd, u, &pattern(N, 6));
    let pending = cd.advance_async(Stream::PER_THREAD).unwrap();
    assert!(pending.in_flight());
    pending.wait().unwrap();
    step(s, &mut cd, u, &pattern(N, 7));
    cd.restore().unwrap();
    same(&cd.download_device(u).unwrap(), &pattern(N, 6));

    // Nothing on the device to save: synchronous, and settled at once.
    cd.advance().unwrap();
    let mut pending = cd.advance_async(Stream::DEFAULT).unwrap();
    assert!(!pending.in_flight());
    assert!(pending.test().unwrap());
    cd.commit().unwrap();
    assert_eq!(s.live(), live, "buffers and snapshots freed");
}

/// A child's asynchronous advance commits into the parent once drained; a kernel handed the
/// parent's buffer during the drain waits for it (the child copies the buffer first).
#[test]
fn child_advance_async_and_the_parents_buffer() {
    let (s, _guard) = standin();
    let gpu = Device::cuda().unwrap();
    let live = s.live();
    let mut root = Domain::builder().name("cuda-safe-child").create().unwrap();
    let p = root.protect_device(&gpu, &pattern(N, 1)).unwrap();
    let c;
    {
        let mut child = root.child().unwrap();
        c = child.protect_device(&gpu, &pattern(N, 2)).unwrap();
        s.kernel(child.device_mut(c).unwrap().address(), &pattern(N, 3));
        let mut pending = child.advance_async(Stream::DEFAULT).unwrap();
        assert!(pending.in_flight());
        // The parent's buffer: the child must save it before the kernel writes it, which
        // waits for the drain first.
        let address = pending.device_mut(p).unwrap().address();
        assert!(pending.test().unwrap(), "the drain was waited for");
        s.kernel(address, &pattern(N, 4));
        assert_eq!(child.info().unwrap().stats.advances, 1);
        child.restore().unwrap();
        same(&child.download_device(p).unwrap(), &pattern(N, 1));
        same(&child.download_device(c).unwrap(), &pattern(N, 3));
        s.kernel(child.device_mut(c).unwrap().address(), &pattern(N, 5));
        child.commit().unwrap();
    }
    // The child's buffer is the root's now, saved as the implicit commit of the child's
    // advance gave it (the child's point before that advance); the child's commit made it
    // READ_WRITE, for the root's next advance.
    root.restore().unwrap();
    same(&root.download_device(p).unwrap(), &pattern(N, 1));
    same(&root.download_device(c).unwrap(), &pattern(N, 2));
    assert_eq!(root.advance().unwrap().bytes_copied, 2 * N * 4, "p and c");
    root.commit().unwrap();
    assert_eq!(s.live(), live);
}

/// A drain that fails (the device was reset under it: its event is gone) is a clear error
/// from `wait`; dropped unsettled, it is reported to the domain's drop, which still commits
/// the CD instead of leaking it.
#[test]
fn a_failed_drain_is_reported_and_the_domain_still_ends() {
    let (s, _guard) = standin();
    let gpu = Device::cuda().unwrap();
    for wait in [true, false] {
        let mut cd = Domain::builder().name("cuda-safe-fail").create().unwrap();
        let u = cd.protect_device(&gpu, &pattern(N, 1)).unwrap();
        step(s, &mut cd, u, &pattern(N, 2));
        let handle = cd.handle();
        let pending = cd.advance_async(Stream::DEFAULT).unwrap();
        assert!(pending.in_flight());
        // SAFETY: the stand-in's cudaDeviceReset; the space is told below.
        unsafe { (s.reset)() };
        if wait {
            let err = pending.wait().unwrap_err();
            assert!(
                matches!(&err, Error::Cd(containment::CdError::DeviceCopy { .. })),
                "{err}"
            );
            assert_eq!(cd.info().unwrap().stats.advances, 0, "the previous point");
            cd.commit().unwrap();
        } else {
            drop(cd);
        }
        assert!(containment::raw::cd_info(handle).is_err(), "the CD ended");
        containment::raw::device_reset();
    }
}

/// `DeviceBuffer`, and the clear errors of allocation: 0 bytes, out of device memory, no such
/// device.
#[test]
fn device_buffers_and_allocation_errors() {
    let (s, _guard) = standin();
    let live = s.live();
    let gpu = CudaMemory::new(0).unwrap();
    {
        let mut x = DeviceBuffer::from_slice(&gpu, &[1.5f64, 2.5, 3.5]).unwrap();
        assert_eq!((x.len(), x.is_empty()), (3, false));
        assert_eq!(x.to_vec().unwrap(), [1.5, 2.5, 3.5]);
        x.copy_from(&[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(x.to_vec().unwrap(), [4.0, 5.0, 6.0]);
        let err = x.copy_from(&[1.0]).unwrap_err();
        assert!(
            err.contains("1 elements copied into a device buffer of 3"),
            "{err}"
        );
        let z = DeviceBuffer::<u16>::zeroed(&gpu, 1000).unwrap();
        assert_eq!(z.to_vec().unwrap(), vec![0; 1000]);
        let e = DeviceBuffer::<u8>::from_slice(&gpu, &[]).unwrap();
        assert_eq!((e.address(), e.to_vec().unwrap()), (0, vec![]));
        assert_eq!(s.live(), live + 2);
    }
    assert_eq!(s.live(), live, "dropped buffers are freed");

    let err = gpu.allocate(0).unwrap_err();
    assert!(err.contains("0 bytes"), "{err}");
    let err = gpu.allocate(ARENA + 1).unwrap_err();
    assert!(
        err.contains("cuMemAlloc") && err.contains("out of memory"),
        "{err}"
    );
    let err = DeviceBuffer::<u64>::zeroed(&gpu, usize::MAX / 4).unwrap_err();
    assert!(err.contains("overflow"), "{err}");

    // Through the safe layer: an `Error::Device` that says what failed, nothing left behind.
    let device = Device::cuda().unwrap();
    let mut cd = Domain::builder().name("cuda-safe-oom").create().unwrap();
    let err = cd
        .protect_device(&device, &vec![0u8; ARENA + 1])
        .unwrap_err();
    assert!(
        matches!(&err, Error::Device { device, message } if device == "cuda:0" && message.contains("out of memory")),
        "{err}"
    );
    assert_eq!(cd.info().unwrap().ranges, 0);
    cd.commit().unwrap();
    assert_eq!(s.live(), live);

    let err = Device::cuda_device(1).unwrap_err();
    assert!(
        matches!(&err, Error::Device { device, message } if device == "cuda:1" && message.contains("cuDeviceGet")),
        "{err}"
    );
    // A freed address is refused by the driver, not crashed on.
    let a = gpu.allocate(4096).unwrap();
    // SAFETY: allocated above, used by nothing.
    unsafe { gpu.free(a).unwrap() };
    // SAFETY: a double free, which the driver refuses; no memory is reused in between.
    let err = unsafe { gpu.free(a) }.unwrap_err();
    assert!(err.contains("cuMemFree"), "{err}");
}

/// The CUDA space switched off, or its driver missing: `Device::cuda` is a clear error (in a
/// child process each, since the space reads its environment once per process).
#[test]
fn cuda_off_or_missing_driver_is_a_clear_error() {
    let (_s, _guard) = standin();
    let exe = std::env::current_exe().unwrap();
    for (var, value, expect) in [
        ("CD_CUDA", "0", "CD_CUDA=0"),
        (
            "CD_CUDA_LIBRARY",
            "/nonexistent/libcuda.so.1",
            "cannot load /nonexistent/libcuda.so.1",
        ),
    ] {
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                "cuda_unusable_in_child",
                "--ignored",
                "--nocapture",
            ])
            .env_remove("CD_CUDA")
            .env(var, value)
            .env("CD_TEST_EXPECT", expect)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "{text}");
    }
}

/// Run by `cuda_off_or_missing_driver_is_a_clear_error` in a child process, with the
/// environment that makes CUDA unusable and the reason expected in `CD_TEST_EXPECT`.
#[test]
#[ignore = "run in a child process by cuda_off_or_missing_driver_is_a_clear_error"]
fn cuda_unusable_in_child() {
    let expect = std::env::var("CD_TEST_EXPECT").expect("CD_TEST_EXPECT set by the parent");
    let err = Device::cuda().unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, Error::Device { device, .. } if device == "cuda:0"),
        "{err:?}"
    );
    assert!(
        text.contains("the CUDA space is not in use") && text.contains(&expect),
        "{text}"
    );
    assert_eq!(containment::enable_cuda(), None);
    let err = CudaMemory::new(0).unwrap_err();
    assert!(err.contains(&expect), "{err}");
    // Host-only domains work on.
    let mut cd = Domain::new().unwrap();
    let x = cd.protect(vec![1u8; 8]).unwrap();
    cd.get_mut(x).unwrap()[0] = 2;
    cd.restore().unwrap();
    assert_eq!(cd.get(x).unwrap()[0], 1);
    cd.commit().unwrap();
}

/// The built-in space is on by default: a program that never calls `enable_cuda` nor
/// `Device::cuda`, and adds device memory it allocated itself to a CD (created as a `Domain`
/// or with `raw::create_cd`), has it saved and restored through the driver (before, the
/// runtime took it for host memory and crashed); with `CD_CUDA=0`, or no driver to load, the
/// space stays off, creating CDs does not fail, and host-only CDs work on. In a child process
/// each, since the space is set up once per process.
#[test]
fn the_cuda_space_is_on_by_default() {
    let (_s, _guard) = standin();
    let exe = std::env::current_exe().unwrap();
    let on = std::env::var("CD_CUDA_LIBRARY").unwrap();
    let missing = "/nonexistent/libcuda.so.1";
    for (creation, cuda, library, off) in [
        ("domain", "1", on.as_str(), ""),
        ("raw", "1", &on, ""),
        ("domain", "0", &on, "CD_CUDA=0"),
        ("raw", "1", missing, "cannot load /nonexistent/libcuda.so.1"),
    ] {
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                "on_by_default_in_child",
                "--ignored",
                "--nocapture",
            ])
            .env("CD_CUDA", cuda)
            .env("CD_CUDA_LIBRARY", library)
            .env("CD_TEST_CREATION", creation)
            .env("CD_TEST_OFF", off)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{creation}, CD_CUDA={cuda}, {library}: {:?}\n{text}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "{text}");
    }
}

/// Run by `the_cuda_space_is_on_by_default` in a child process, with `CD_CUDA`,
/// `CD_CUDA_LIBRARY`, `CD_TEST_CREATION` and `CD_TEST_OFF` (why the space is off, or empty).
#[test]
#[ignore = "run in a child process by the_cuda_space_is_on_by_default"]
fn on_by_default_in_child() {
    use containment::raw::{self, Access, AddrSpec, LoggingMode, Scope};
    let creation = std::env::var("CD_TEST_CREATION").expect("set by the parent");
    let off = std::env::var("CD_TEST_OFF").expect("set by the parent");
    let (handle, domain) = match creation.as_str() {
        "domain" => {
            let cd = Domain::builder().name("cuda-default").create().unwrap();
            (cd.handle(), Some(cd))
        }
        _ => (
            raw::create_cd(None, None, LoggingMode::Disabled, Some("cuda-default")).unwrap(),
            None,
        ),
    };
    if !off.is_empty() {
        let why = containment::cuda_status().unwrap_err();
        assert!(why.contains(&off), "{why}");
        let mut x = [1u8; 8];
        // SAFETY: `x` outlives the CD, committed below; nothing else writes it meanwhile.
        unsafe {
            let spec = AddrSpec::new(
                x.as_ptr().expose_provenance(),
                8,
                Access::ReadWrite,
                Scope::Global,
            );
            raw::add_to_cd_via_copy(handle, &[spec]).unwrap();
            std::hint::black_box(&mut x)[0] = 2;
            raw::restore_cd(handle).unwrap();
        }
        assert_eq!(std::hint::black_box(&x)[0], 1);
        match domain {
            Some(cd) => cd.commit().unwrap(),
            None => raw::commit_cd(handle).unwrap(),
        }
        return;
    }
    let lib = std::env::var("CD_CUDA_LIBRARY").expect("the stand-in");
    let s = Standin::open(std::path::Path::new(&lib));
    // Nothing here may ask for the space (`cuda_status` would set it up) before the add.
    let a = s.malloc(N * 4);
    s.kernel(a, &pattern(N, 1));
    // SAFETY: `a` stays allocated until the end; nothing else writes it during the calls.
    unsafe {
        raw::add_to_cd_via_copy(
            handle,
            &[AddrSpec::new(a, N * 4, Access::ReadWrite, Scope::Global)],
        )
        .unwrap()
    };
    let space = containment::cuda_status().expect("enabled by the CD's creation");
    assert_eq!(raw::cd_entries(handle).unwrap()[0].space, space);
    s.kernel(a, &pattern(N, 2));
    // SAFETY: as above.
    unsafe { raw::restore_cd(handle).unwrap() };
    same(&s.read(a, N), &pattern(N, 1));
    match domain {
        Some(cd) => cd.commit().unwrap(),
        None => raw::commit_cd(handle).unwrap(),
    }
}
