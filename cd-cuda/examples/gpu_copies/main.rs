//! The GPU bench of issue 11: the built-in CUDA space's copies against raw driver copies of
//! the same bytes, timed in one run.
//!
//! It prints the GPU, the driver and the PCIe link (`cuDeviceGetName`, `cuDriverGetVersion`,
//! `nvidia-smi` when present), then for each size, every figure as the median of `reps`
//! samples with its spread (lowest and highest), each pair timed interleaved (A B A B):
//! - **advance** (D2H) against a raw pinned `cuMemcpyDtoH` of the same bytes, and a raw
//!   pageable one (into touched `malloc` memory) for reference;
//! - **restore** (H2D) against a raw pinned `cuMemcpyHtoD`, and a raw pageable one;
//! - **first save** (a new CD's `add_to_cd_via_copy`: fresh store pages, pinned on first use)
//!   against a raw `cuMemcpyDtoH` into freshly `malloc`ed host memory, allocation included
//!   (above 32 MiB glibc's `malloc` maps fresh pages each time; below, it may reuse freed
//!   ones). The CDs of one size's first saves stay alive until the last one, so each gets
//!   fresh pages rather than the pool's (host memory needed: about `reps + 4` times the size);
//! - **async stall**: an asynchronous advance on the compute stream, then a synchronisation of
//!   that stream (the device-to-device snapshot is all it waits for), against a synchronous
//!   advance;
//! - **drain overlap**, twice: a memory-bound loop on the compute stream, alone (A) and
//!   queued right after an asynchronous advance (B), whose drain to the host then runs beside
//!   it; the stall is B's time to the end of the loop minus A's, and the asynchronous call's
//!   own time (how long it held the host before the loop could be queued) is printed too.
//!   First the loop of issue 11, device-to-device copies (`cuMemcpyDtoDAsync`) of a buffer of
//!   up to 256 MiB back and forth; then a loop of real kernels (issue 26), a three-point
//!   stencil over the same buffers (`cd_bench_stencil`), loaded from the PTX text the library
//!   embeds (`cd_cuda::KERNELS_PTX`) with `cuModuleLoadData` and launched with
//!   `cuLaunchKernel`: no nvcc at build time. Each loop is sized to about 1.5 synchronous
//!   advances.
//! - **differential advance** (module `diff`; `CD_BENCH_DIFF=0` skips it): the synchronous
//!   advance with the differential advance on (B) against the same advance copying the whole
//!   array (A, `CD_CUDA_DIFF=0`), interleaved, with 1% of the 64 KiB blocks changed and with
//!   every block changed, each CD keeping its own saved copy; and the checksums alone. Then
//!   the differential CD is restored and compared with the device's bytes. Every other
//!   advance of the bench copies whole (`CD_CUDA_DIFF=0`: the array does not change between
//!   them).
//!
//! It checks its own work: after the timings it overwrites the device array, restores the
//! CD, and compares every byte with what was saved.
//!
//! With `--reset` first it times instead the recovery from a GPU reset, for `cudaMalloc`
//! arrays (which come back at their old address or another; the real driver hands the old
//! one back, and the remap is then onto the same range): `cuDevicePrimaryCtxReset_v2` (what
//! `cudaDeviceReset` does; on the stand-in its `cuStandinReset`), `cuMemAlloc` of a new array,
//! `device_reset`, `remap_device_region` and `restore_cd` (B), against the same reset and
//! allocation followed by a raw pageable `cuMemcpyHtoD` of the application's own host copy
//! (A); the reset call alone is printed too, and the restored bytes are checked. Default
//! sizes 192 and 1024 MiB. The same-address recipe of virtual-memory (`cuMemMap`) arrays is
//! not timed: it needs the virtual-memory API, which neither this bench nor the stand-in has.
//!
//! Goals (issue 11): advance and restore at 0.8x or better of raw pinned; a first save no
//! slower than the fresh-memory copy; the stall under 10% of a synchronous advance. Issue 26:
//! the stall a 1 GiB asynchronous advance adds to the kernel loop under 10% of a synchronous
//! advance, the call itself well under a millisecond; at 8 GiB the differential advance with
//! 1% changed at least 10x faster than the full synchronous advance, with everything changed
//! at most 5% slower.
//!
//! Run on a GPU (sizes in MiB, default 256 1024 4096 8192; `CD_BENCH_REPS`, default 5):
//! `cargo run --release -p cd-cuda --example gpu_copies -- [--reset] 256 1024 4096 8192`, or
//! the binary `target/release/examples/gpu_copies` alone (see DEVELOPERS.md). Against the
//! stand-in (no GPU): `CD_CUDA_LIBRARY=path/to/libcuda_standin.so ... gpu_copies -- 4`; its
//! figures time host `memcpy`s, not a GPU. `cargo test -p cd-cuda --example gpu_copies` runs it
//! so against the stand-in, compiled from `cd-cuda/standin/cuda_standin.c`.

// Each transmute below is annotated by the type of the field it fills.
#![allow(clippy::missing_transmute_annotations)]

use cd_core::{
    add_to_cd_via_copy, advance_cd_point_in_time, advance_cd_point_in_time_async, advance_wait,
    commit_cd, create_cd, restore_cd, Access, AddrSpec, CdHandle, LoggingMode, Scope,
};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::io::Write;
use std::time::Instant;

mod diff;
mod kernels;

type Res = c_int;
type Handle = *mut c_void;

/// The raw driver functions the bench calls (the space loads its own).
struct Raw {
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> Res,
    retain: unsafe extern "C" fn(*mut Handle, c_int) -> Res,
    push: unsafe extern "C" fn(Handle) -> Res,
    alloc: unsafe extern "C" fn(*mut u64, usize) -> Res,
    free: unsafe extern "C" fn(u64) -> Res,
    alloc_host: unsafe extern "C" fn(*mut *mut c_void, usize) -> Res,
    free_host: unsafe extern "C" fn(*mut c_void) -> Res,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> Res,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> Res,
    dtod_async: unsafe extern "C" fn(u64, u64, usize, Handle) -> Res,
    stream_create: unsafe extern "C" fn(*mut Handle, c_uint) -> Res,
    stream_sync: unsafe extern "C" fn(Handle) -> Res,
    stream_destroy: unsafe extern "C" fn(Handle) -> Res,
    /// `cuDeviceGetName` (the stand-in has none).
    device_name: Option<unsafe extern "C" fn(*mut c_char, c_int, c_int) -> Res>,
    /// `cuDriverGetVersion` (the stand-in has none).
    driver_version: Option<unsafe extern "C" fn(*mut c_int) -> Res>,
    pop: unsafe extern "C" fn(*mut Handle) -> Res,
    module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> Res,
    module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> Res,
    #[allow(clippy::type_complexity)]
    launch_kernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> Res,
    /// How to reset the GPU, if the library can.
    reset: Option<ResetFn>,
}

/// A GPU reset: `cuDevicePrimaryCtxReset_v2` (what `cudaDeviceReset` does), or the stand-in's
/// `cuStandinReset`, which plays it.
enum ResetFn {
    Primary(unsafe extern "C" fn(c_int) -> Res),
    Standin(unsafe extern "C" fn()),
}

impl Raw {
    /// Opens the driver library the space opened (`CD_CUDA_LIBRARY`, else `libcuda.so.1`).
    fn load() -> Result<Raw, String> {
        let lib = std::env::var(cd_cuda::CUDA_LIBRARY_ENV).unwrap_or("libcuda.so.1".into());
        let name = CString::new(lib.clone()).map_err(|_| format!("bad library name {lib:?}"))?;
        // SAFETY: dlopen of the driver library, never closed.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
        if handle.is_null() {
            return Err(format!("cannot load {lib}"));
        }
        let find = |n: &str| {
            let n = CString::new(n).expect("symbol names have no NUL");
            // SAFETY: a live handle, a NUL-terminated name.
            let f = unsafe { libc::dlsym(handle, n.as_ptr()) };
            (!f.is_null()).then_some(f)
        };
        let sym = |n: &str| find(n).ok_or_else(|| format!("{lib} has no {n}"));
        // SAFETY: each symbol has the driver API's signature (cuda.h, CUDA 12 and 13), the
        // type of the field it fills; a non-null symbol is a function.
        unsafe {
            Ok(Raw {
                device_get: std::mem::transmute(sym("cuDeviceGet")?),
                retain: std::mem::transmute(sym("cuDevicePrimaryCtxRetain")?),
                push: std::mem::transmute(sym("cuCtxPushCurrent_v2")?),
                alloc: std::mem::transmute(sym("cuMemAlloc_v2")?),
                free: std::mem::transmute(sym("cuMemFree_v2")?),
                alloc_host: std::mem::transmute(sym("cuMemAllocHost_v2")?),
                free_host: std::mem::transmute(sym("cuMemFreeHost")?),
                dtoh: std::mem::transmute(sym("cuMemcpyDtoH_v2")?),
                htod: std::mem::transmute(sym("cuMemcpyHtoD_v2")?),
                dtod_async: std::mem::transmute(sym("cuMemcpyDtoDAsync_v2")?),
                stream_create: std::mem::transmute(sym("cuStreamCreate")?),
                stream_sync: std::mem::transmute(sym("cuStreamSynchronize")?),
                stream_destroy: std::mem::transmute(sym("cuStreamDestroy_v2")?),
                device_name: find("cuDeviceGetName").map(|f| std::mem::transmute(f)),
                driver_version: find("cuDriverGetVersion").map(|f| std::mem::transmute(f)),
                pop: std::mem::transmute(sym("cuCtxPopCurrent_v2")?),
                module_load_data: std::mem::transmute(sym("cuModuleLoadData")?),
                module_get_function: std::mem::transmute(sym("cuModuleGetFunction")?),
                launch_kernel: std::mem::transmute(sym("cuLaunchKernel")?),
                reset: find("cuDevicePrimaryCtxReset_v2")
                    .map(|f| ResetFn::Primary(std::mem::transmute(f)))
                    .or_else(|| {
                        find("cuStandinReset").map(|f| ResetFn::Standin(std::mem::transmute(f)))
                    }),
            })
        }
    }

    /// Makes device 0's primary context current for this thread (retained, not released: the
    /// bench holds it to the end).
    fn enter(&self) -> Result<(), String> {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; the context just retained.
        unsafe {
            cu((self.retain)(&mut ctx, 0), "cuDevicePrimaryCtxRetain")?;
            cu((self.push)(ctx), "cuCtxPushCurrent")
        }
    }

    /// Resets device 0, as `cudaDeviceReset` does (every allocation, stream, event and host
    /// registration is gone), then makes its primary context current again.
    fn reset_device(&self) -> Result<(), String> {
        let reset = self.reset.as_ref().ok_or(
            "the driver library has neither cuDevicePrimaryCtxReset_v2 nor cuStandinReset",
        )?;
        let (mut device, mut popped) = (0, std::ptr::null_mut());
        // SAFETY: out-pointers to locals; the context popped is the one `enter` pushed, and
        // nothing of the bench's uses the device's old allocations, streams or pinned memory
        // after the reset.
        unsafe {
            cu((self.pop)(&mut popped), "cuCtxPopCurrent")?;
            match reset {
                ResetFn::Primary(reset) => {
                    cu((self.device_get)(&mut device, 0), "cuDeviceGet")?;
                    cu(reset(device), "cuDevicePrimaryCtxReset")?;
                }
                ResetFn::Standin(reset) => reset(),
            }
        }
        self.enter()
    }

    /// "GPU name, driver version" as the driver reports them.
    fn describe(&self) -> String {
        let mut device = 0;
        // SAFETY: an out-pointer to a local.
        let name = if unsafe { (self.device_get)(&mut device, 0) } != 0 {
            "no device 0".to_owned()
        } else if let Some(get_name) = self.device_name {
            let mut buffer = [0 as c_char; 256];
            // SAFETY: a writable buffer of the length given.
            match unsafe { get_name(buffer.as_mut_ptr(), buffer.len() as c_int, device) } {
                // SAFETY: the driver wrote a NUL-terminated name into the buffer.
                0 => unsafe { CStr::from_ptr(buffer.as_ptr()) }
                    .to_string_lossy()
                    .into_owned(),
                rc => format!("cuDeviceGetName failed: CUDA error {rc}"),
            }
        } else {
            "unknown (the driver library has no cuDeviceGetName: the stand-in?)".to_owned()
        };
        let version = self.driver_version.map_or_else(
            || "unknown (no cuDriverGetVersion)".to_owned(),
            |get_version| {
                let mut v = 0;
                // SAFETY: an out-pointer to a local.
                match unsafe { get_version(&mut v) } {
                    0 => format!("CUDA driver API {}.{}", v / 1000, v % 1000 / 10),
                    rc => format!("cuDriverGetVersion failed: CUDA error {rc}"),
                }
            },
        );
        format!("GPU: {name}; driver: {version}")
    }
}

/// `Err` naming the call unless it succeeded.
fn cu(rc: Res, what: &str) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed: CUDA error {rc}"))
    }
}

/// Seconds `f` took.
fn time<R>(f: impl FnOnce() -> Result<R, String>) -> Result<(f64, R), String> {
    let start = Instant::now();
    let r = f()?;
    Ok((start.elapsed().as_secs_f64(), r))
}

/// Timed samples of one figure.
#[derive(Debug, Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The median sample.
    fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    /// `(lowest, highest)`.
    fn spread(&self) -> (f64, f64) {
        let v = self.sorted();
        (
            v.first().copied().unwrap_or(f64::NAN),
            v.last().copied().unwrap_or(f64::NAN),
        )
    }

    /// Throughput of `bytes` per sample, as samples.
    fn rate(&self, bytes: usize) -> Samples {
        Samples(self.0.iter().map(|t| bytes as f64 / 1e9 / t).collect())
    }

    /// `self[i] / other[i]` per rep (the interleaved pairs).
    fn ratio(&self, other: &Samples) -> Samples {
        Samples(self.0.iter().zip(&other.0).map(|(a, b)| a / b).collect())
    }

    /// `self[i] - other[i]` per rep.
    fn minus(&self, other: &Samples) -> Samples {
        Samples(self.0.iter().zip(&other.0).map(|(a, b)| a - b).collect())
    }

    fn show(&self, unit: &str, scale: f64) -> String {
        let (lo, hi) = self.spread();
        format!(
            "{:>8.2} {unit} [{:.2} .. {:.2}]",
            self.median() * scale,
            lo * scale,
            hi * scale
        )
    }
}

/// One size's samples, in seconds (the smoke test checks them).
#[derive(Debug, Default)]
struct SizeReport {
    /// Bytes copied.
    bytes: usize,
    raw_d2h_pinned: Samples,
    raw_d2h_pageable: Samples,
    advance: Samples,
    raw_h2d_pinned: Samples,
    raw_h2d_pageable: Samples,
    restore: Samples,
    raw_d2h_fresh: Samples,
    first_save: Samples,
    /// Asynchronous advance plus a synchronisation of the compute stream.
    async_stall: Samples,
    /// How many asynchronous advances ran in the background (the others found no room for a
    /// snapshot and ran synchronously).
    in_flight: usize,
    /// The drain beside a loop of device-to-device copies of `loop_bytes` each.
    copy_loop: kernels::Stall,
    /// The drain beside a loop of stencil kernels over `loop_bytes` (loaded from PTX).
    kernel_loop: kernels::Stall,
    loop_bytes: usize,
    /// The differential advance (`None` with `CD_BENCH_DIFF=0`).
    diff: Option<diff::Diff>,
}

/// Host memory from `cuMemAllocHost`, freed on drop.
struct Pinned<'a>(&'a Raw, *mut u8);

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAllocHost, freed once.
        unsafe { (self.0.free_host)(self.1.cast()) };
    }
}

/// Device memory from `cuMemAlloc`, freed on drop.
struct DeviceArray<'a>(&'a Raw, u64);

impl Drop for DeviceArray<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once; no CD holds it any more (the CDs that
        // held it were committed first) and no copy runs on it (streams synchronised).
        unsafe { (self.0.free)(self.1) };
    }
}

fn device_array(raw: &Raw, n: usize) -> Result<DeviceArray<'_>, String> {
    let mut p = 0;
    // SAFETY: an out-pointer to a local; the primary context is current.
    cu(unsafe { (raw.alloc)(&mut p, n) }, "cuMemAlloc")?;
    Ok(DeviceArray(raw, p))
}

/// The bytes the bench saves: position-dependent, so that a misplaced chunk is caught.
fn pattern(i: usize) -> u8 {
    (i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_right(29) as u8
}

fn root(name: &str) -> Result<CdHandle, String> {
    create_cd(None, None, LoggingMode::Disabled, Some(name)).map_err(|e| e.to_string())
}

/// Re-adds the range READ_WRITE (the promotion before the "kernels" that write it): the next
/// advance saves it.
fn promote(cd: CdHandle, spec: AddrSpec) -> Result<(), String> {
    // SAFETY: the device array stays allocated while the CD holds it.
    unsafe { add_to_cd_via_copy(cd, &[spec]) }.map_err(|e| format!("promote: {e}"))
}

fn advance(cd: CdHandle) -> Result<(), String> {
    // SAFETY: the CD's only range is the device array, allocated, quiet during the call.
    unsafe { advance_cd_point_in_time(cd) }
        .map(drop)
        .map_err(|e| format!("advance: {e}"))
}

/// The bench for `n` bytes, `reps` samples per figure.
fn bench_size(raw: &Raw, n: usize, reps: usize) -> Result<SizeReport, String> {
    let mut r = SizeReport {
        bytes: n,
        ..SizeReport::default()
    };
    // Every advance copies the whole array, as the figures against raw copies need (the
    // array does not change between them, so a differential advance would copy nothing);
    // the differential figures turn it on for theirs.
    diff::switch(false);
    let dev = device_array(raw, n)?;
    let mut host: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local.
    cu(unsafe { (raw.alloc_host)(&mut host, n) }, "cuMemAllocHost")?;
    let pinned = Pinned(raw, host.cast());
    // SAFETY: cuMemAllocHost returned `n` writable bytes, only reached through this slice.
    let pinned_bytes = unsafe { std::slice::from_raw_parts_mut(pinned.1, n) };
    pinned_bytes
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = pattern(i));
    let mut pageable = pinned_bytes.to_vec();
    // SAFETY: `n` readable pinned bytes into the device array of `n` bytes.
    let rc = unsafe { (raw.htod)(dev.1, pinned.1.cast(), n) };
    cu(rc, "cuMemcpyHtoD")?;
    let spec = AddrSpec::new(dev.1 as usize, n, Access::ReadWrite, Scope::Global);

    // First saves against copies into fresh host memory; their CDs stay alive until the last.
    let mut firsts = Vec::with_capacity(reps);
    for rep in 0..reps {
        let (t, fresh) = time(|| {
            // SAFETY: malloc of `n` bytes (checked), then a copy of `n` device bytes into them.
            unsafe {
                let fresh = libc::malloc(n);
                if fresh.is_null() {
                    return Err(format!("malloc({n}) failed"));
                }
                let rc = (raw.dtoh)(fresh, dev.1, n);
                if rc != 0 {
                    libc::free(fresh);
                }
                cu(rc, "cuMemcpyDtoH into fresh memory").map(|()| fresh)
            }
        })?;
        // SAFETY: the malloc above, freed once.
        unsafe { libc::free(fresh) };
        r.raw_d2h_fresh.0.push(t);
        let (t, cd) = time(|| {
            let cd = root(&format!("gpu-bench-first-save-{rep}"))?;
            promote(cd, spec).map(|()| cd)
        })?;
        r.first_save.0.push(t);
        firsts.push(cd);
    }
    for cd in firsts {
        commit_cd(cd).map_err(|e| e.to_string())?;
    }

    let cd = root("gpu-bench")?;
    promote(cd, spec)?;
    // One cycle to warm up (store buffers pinned), and the synchronous advance's time, which
    // sets the kernel loop's length.
    promote(cd, spec)?;
    let (sync_time, ()) = time(|| advance(cd))?;
    // SAFETY: the CD's range is allocated and quiet.
    unsafe { restore_cd(cd) }.map_err(|e| format!("restore: {e}"))?;

    let mut stream: Handle = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local; the compute stream, ordered with the default stream.
    let rc = unsafe { (raw.stream_create)(&mut stream, 0) };
    cu(rc, "cuStreamCreate")?;
    // Exposed: the space turns the handle back into a pointer for the driver.
    let stream_handle = stream.expose_provenance();
    let loop_bytes = n.min(256 << 20);
    let (a, b) = (
        device_array(raw, loop_bytes)?,
        device_array(raw, loop_bytes)?,
    );
    let copy_step = |i: usize| -> Result<(), String> {
        let (dst, src) = if i.is_multiple_of(2) {
            (b.1, a.1)
        } else {
            (a.1, b.1)
        };
        // SAFETY: two distinct device arrays of `loop_bytes`, on the compute stream.
        let rc = unsafe { (raw.dtod_async)(dst, src, loop_bytes, stream) };
        cu(rc, "cuMemcpyDtoDAsync")
    };
    let stencil = kernels::Stencil::load(raw)?;
    let kernel_step = |i: usize| -> Result<(), String> {
        let (dst, src) = if i.is_multiple_of(2) {
            (b.1, a.1)
        } else {
            (a.1, b.1)
        };
        stencil.launch(dst, src, loop_bytes / 4, stream)
    };
    // SAFETY: the compute stream, created above.
    let sync = || cu(unsafe { (raw.stream_sync)(stream) }, "cuStreamSynchronize");
    r.copy_loop.calibrate(raw, sync_time, stream, &copy_step)?;
    r.kernel_loop
        .calibrate(raw, sync_time, stream, &kernel_step)?;
    r.loop_bytes = loop_bytes;
    let again = || promote(cd, spec);

    for _ in 0..reps {
        // SAFETY: `n` pinned host bytes and the device array of `n` bytes, which nothing else
        // touches meanwhile (the same for the raw copies below, pinned or pageable).
        let (t, ()) = time(|| cu(unsafe { (raw.dtoh)(pinned.1.cast(), dev.1, n) }, "DtoH"))?;
        r.raw_d2h_pinned.0.push(t);
        promote(cd, spec)?;
        r.advance.0.push(time(|| advance(cd))?.0);
        let (t, ()) = time(|| {
            // SAFETY: as above.
            let rc = unsafe { (raw.dtoh)(pageable.as_mut_ptr().cast(), dev.1, n) };
            cu(rc, "DtoH")
        })?;
        r.raw_d2h_pageable.0.push(t);

        // SAFETY: as above.
        let (t, ()) = time(|| cu(unsafe { (raw.htod)(dev.1, pinned.1.cast(), n) }, "HtoD"))?;
        r.raw_h2d_pinned.0.push(t);
        let (t, _) = time(|| {
            // SAFETY: the CD's range is allocated and quiet.
            unsafe { restore_cd(cd) }.map_err(|e| format!("restore: {e}"))
        })?;
        r.restore.0.push(t);
        let (t, ()) = time(|| {
            // SAFETY: as above.
            let rc = unsafe { (raw.htod)(dev.1, pageable.as_ptr().cast(), n) };
            cu(rc, "HtoD")
        })?;
        r.raw_h2d_pageable.0.push(t);

        // The stall: the asynchronous advance, then the compute stream synchronised.
        promote(cd, spec)?;
        let (t, in_flight) = time(|| {
            // SAFETY: the CD's range stays allocated until the drain completes (waited for
            // below); `stream` is a live stream.
            let started = unsafe { advance_cd_point_in_time_async(cd, stream_handle) }
                .map_err(|e| format!("async advance: {e}"))?;
            sync().map(|()| started.in_flight)
        })?;
        r.async_stall.0.push(t);
        r.in_flight += usize::from(in_flight);
        advance_wait(cd).map_err(|e| format!("drain: {e}"))?;

        // The drain beside the loops: copies, and real kernels.
        r.copy_loop
            .rep(raw, cd, (stream, stream_handle), &again, &copy_step)?;
        r.kernel_loop
            .rep(raw, cd, (stream, stream_handle), &again, &kernel_step)?;
    }

    // The check: wipe the device array, restore, compare every byte with what was saved.
    pageable.fill(0);
    // SAFETY: as above.
    let rc = unsafe { (raw.htod)(dev.1, pageable.as_ptr().cast(), n) };
    cu(rc, "HtoD")?;
    // SAFETY: the CD's range is allocated and quiet.
    unsafe { restore_cd(cd) }.map_err(|e| format!("restore: {e}"))?;
    // SAFETY: as above.
    let rc = unsafe { (raw.dtoh)(pageable.as_mut_ptr().cast(), dev.1, n) };
    cu(rc, "DtoH")?;
    if let Some(i) = (0..n).find(|&i| pageable[i] != pattern(i)) {
        return Err(format!(
            "restored byte {i} of {n} is {} instead of {}",
            pageable[i],
            pattern(i)
        ));
    }
    commit_cd(cd).map_err(|e| e.to_string())?;
    // SAFETY: the compute stream, idle (synchronised above), destroyed once.
    unsafe { (raw.stream_destroy)(stream) };
    if std::env::var("CD_BENCH_DIFF").map_or(true, |v| v != "0") {
        r.diff = Some(diff::Diff::measure(raw, dev.1, n, reps, &mut pageable)?);
    }
    Ok(r)
}

/// Prints one size's figures.
fn print_size(r: &SizeReport, out: &mut dyn Write) -> std::io::Result<()> {
    let n = r.bytes;
    let gbs = |s: &Samples| s.rate(n).show("GB/s", 1.0);
    let in_flight = format!(
        "async stall ({} of {} in flight)",
        r.in_flight,
        r.advance.0.len()
    );
    let lines = [
        ("D2H raw pinned", gbs(&r.raw_d2h_pinned)),
        ("D2H raw pageable", gbs(&r.raw_d2h_pageable)),
        ("advance", gbs(&r.advance)),
        (
            "  raw pinned time / advance time",
            r.raw_d2h_pinned.ratio(&r.advance).show("x", 1.0),
        ),
        ("H2D raw pinned", gbs(&r.raw_h2d_pinned)),
        ("H2D raw pageable", gbs(&r.raw_h2d_pageable)),
        ("restore", gbs(&r.restore)),
        (
            "  raw pinned time / restore time",
            r.raw_h2d_pinned.ratio(&r.restore).show("x", 1.0),
        ),
        ("D2H into fresh malloc, alloc incl.", gbs(&r.raw_d2h_fresh)),
        ("first save (a new CD)", gbs(&r.first_save)),
        (
            "  fresh copy time / first save time",
            r.raw_d2h_fresh.ratio(&r.first_save).show("x", 1.0),
        ),
        ("sync advance", r.advance.show("ms", 1e3)),
        (&in_flight, r.async_stall.show("ms", 1e3)),
        (
            "  stall / sync advance",
            r.async_stall.ratio(&r.advance).show("%", 100.0),
        ),
    ];
    let mut lines: Vec<(String, String)> =
        lines.into_iter().map(|(l, f)| (l.to_owned(), f)).collect();
    lines.extend(r.copy_loop.lines(
        &format!(
            "D2D copy loop ({} x {} MiB)",
            r.copy_loop.steps,
            r.loop_bytes >> 20
        ),
        &r.advance,
    ));
    lines.extend(r.kernel_loop.lines(
        &format!(
            "stencil kernel loop ({} x {} MiB, PTX)",
            r.kernel_loop.steps,
            r.loop_bytes >> 20
        ),
        &r.advance,
    ));
    if let Some(diff) = &r.diff {
        lines.extend(diff.lines());
    }
    writeln!(
        out,
        "{} MiB: median [lowest .. highest] of {} interleaved reps; ratios per pair",
        n >> 20,
        r.advance.0.len()
    )?;
    for (label, figure) in &lines {
        writeln!(out, "  {label:<40}{figure}")?;
    }
    Ok(())
}

/// The link as `nvidia-smi` reports it, or why not.
fn link() -> String {
    let query = "name,driver_version,pcie.link.gen.current,pcie.link.gen.max,\
                 pcie.link.width.current,pcie.link.width.max";
    match std::process::Command::new("nvidia-smi")
        .arg(format!("--query-gpu={query}"))
        .arg("--format=csv")
        .output()
    {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        Ok(o) => format!(
            "nvidia-smi failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("nvidia-smi not run ({e}): no PCIe link figures"),
    }
}

/// One size's reset samples, in seconds.
#[derive(Debug, Default)]
struct ResetReport {
    /// Bytes restored.
    bytes: usize,
    /// Reset, `cuMemAlloc`, raw pageable `cuMemcpyHtoD` of the application's own host copy.
    raw: Samples,
    /// Reset, `cuMemAlloc`, `device_reset`, `remap_device_region`, `restore_cd`.
    cd: Samples,
    /// The reset call alone, within `cd`.
    reset_call: Samples,
    /// How many of the `cd` reps got the old address back from `cuMemAlloc` (the remap then
    /// is onto the same range).
    same_address: usize,
}

/// A GPU reset and the recovery of `n` bytes of device memory, the recipe for `cudaMalloc`
/// arrays (they come back at the same address or another; the remap works either way), against the same reset and allocation with a
/// raw upload of the bytes from the application's own host copy; `reps` interleaved pairs.
fn bench_reset(raw: &Raw, n: usize, reps: usize) -> Result<ResetReport, String> {
    let mut r = ResetReport {
        bytes: n,
        ..ResetReport::default()
    };
    let alloc = || -> Result<u64, String> {
        let mut p = 0;
        // SAFETY: an out-pointer to a local; the primary context is current.
        cu(unsafe { (raw.alloc)(&mut p, n) }, "cuMemAlloc")?;
        Ok(p)
    };
    let upload = |dev: u64, copy: &[u8]| {
        // SAFETY: the `n` host bytes of `copy` into a device array of `n` bytes.
        let rc = unsafe { (raw.htod)(dev, copy.as_ptr().cast(), n) };
        cu(rc, "cuMemcpyHtoD")
    };
    let copy: Vec<u8> = (0..n).map(pattern).collect();
    // Not freed with cuMemFree: each reset destroys the arrays made before it.
    let mut current = alloc()?;
    upload(current, &copy)?;
    let cd = root("gpu-bench-reset")?;
    promote(
        cd,
        AddrSpec::new(current as usize, n, Access::ReadWrite, Scope::Global),
    )?;
    for _ in 0..reps {
        let (t, _) = time(|| {
            raw.reset_device()?;
            let p = alloc()?;
            upload(p, &copy)
        })?;
        r.raw.0.push(t);
        let (t, (reset_call, next)) = time(|| {
            let (reset_call, ()) = time(|| raw.reset_device())?;
            let next = alloc()?;
            cd_core::device_reset();
            cd_core::remap_device_region(current as usize, next as usize, n)
                .map_err(|e| format!("remap: {e}"))?;
            // SAFETY: the CD's range is the array just allocated, quiet during the call.
            unsafe { restore_cd(cd) }.map_err(|e| format!("restore: {e}"))?;
            Ok((reset_call, next))
        })?;
        r.cd.0.push(t);
        r.reset_call.0.push(reset_call);
        r.same_address += usize::from(next == current);
        current = next;
    }
    let mut back = vec![0u8; n];
    // SAFETY: `n` writable host bytes, the restored array of `n` bytes.
    let rc = unsafe { (raw.dtoh)(back.as_mut_ptr().cast(), current, n) };
    cu(rc, "cuMemcpyDtoH")?;
    if let Some(i) = (0..n).find(|&i| back[i] != pattern(i)) {
        return Err(format!(
            "byte {i} of {n} restored after the reset is {} instead of {}",
            back[i],
            pattern(i)
        ));
    }
    commit_cd(cd).map_err(|e| e.to_string())?;
    // SAFETY: the last array, allocated since the last reset; no CD holds it any more.
    unsafe { (raw.free)(current) };
    Ok(r)
}

/// Prints one size's reset figures.
fn print_reset(r: &ResetReport, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} MiB: a GPU reset and the recovery of the array; median [lowest .. highest] of {} \
         interleaved reps",
        r.bytes >> 20,
        r.cd.0.len()
    )?;
    let lines = [
        (
            "reset, cuMemAlloc, raw pageable HtoD",
            r.raw.show("ms", 1e3),
        ),
        (
            "reset, cuMemAlloc, CD remap + restore",
            r.cd.show("ms", 1e3),
        ),
        ("  of which the reset call", r.reset_call.show("ms", 1e3)),
        (
            "  came back at the old address",
            format!("{} of {} reps", r.same_address, r.cd.0.len()),
        ),
        (
            "  CD recovery / raw recovery",
            r.cd.ratio(&r.raw).show("x", 1.0),
        ),
    ];
    for (label, figure) in &lines {
        writeln!(out, "  {label:<40}{figure}")?;
    }
    Ok(())
}

/// What a run measured.
#[derive(Debug, Default)]
struct Reports {
    copies: Vec<SizeReport>,
    resets: Vec<ResetReport>,
}

/// Runs the bench for `sizes_mib` with `reps` samples per figure: the copies, or with
/// `reset`, the GPU reset and recovery.
fn bench(
    sizes_mib: &[usize],
    reps: usize,
    reset: bool,
    out: &mut dyn Write,
) -> Result<Reports, String> {
    if reps == 0 {
        return Err("CD_BENCH_REPS must be at least 1".to_owned());
    }
    let space = cd_cuda::status().map_err(|why| format!("the CUDA space is not in use: {why}"))?;
    let raw = Raw::load()?;
    raw.enter()?;
    let io = |e: std::io::Error| e.to_string();
    writeln!(out, "{}", raw.describe()).map_err(io)?;
    writeln!(out, "{}", link()).map_err(io)?;
    let goals = if reset {
        "the reset recipe for cudaMalloc arrays (re-create, remap, restore)"
    } else {
        "goals: advance and restore >= 0.80x raw pinned, first save >= 1.00x the fresh copy, \
         stall < 10%"
    };
    writeln!(
        out,
        "CUDA space {space}; sizes {sizes_mib:?} MiB; {reps} reps, interleaved; {goals}"
    )
    .map_err(io)?;
    let mut reports = Reports::default();
    for &mib in sizes_mib {
        let n = mib
            .checked_mul(1 << 20)
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("size {mib} MiB: give a size from 1 MiB"))?;
        if reset {
            let report = bench_reset(&raw, n, reps)?;
            print_reset(&report, out).map_err(io)?;
            reports.resets.push(report);
        } else {
            let report = bench_size(&raw, n, reps)?;
            print_size(&report, out).map_err(io)?;
            reports.copies.push(report);
        }
    }
    Ok(reports)
}

/// `args`: `--reset` first for the reset bench, then sizes in MiB; `reps` from
/// `CD_BENCH_REPS`.
fn run(args: &[String], out: &mut dyn Write) -> Result<Reports, String> {
    let reps = match std::env::var("CD_BENCH_REPS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("CD_BENCH_REPS={v:?} is not a count"))?,
        Err(_) => 5,
    };
    let reset = args.first().is_some_and(|a| a == "--reset");
    let sizes = args[usize::from(reset)..]
        .iter()
        .map(|a| {
            a.parse::<usize>()
                .map_err(|_| format!("{a:?} is not a size in MiB"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sizes = match (sizes.is_empty(), reset) {
        (false, _) => sizes,
        (true, false) => vec![256, 1024, 4096, 8192],
        (true, true) => vec![192, 1024],
    };
    bench(&sizes, reps, reset, out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args, &mut std::io::stdout()) {
        eprintln!("gpu_copies: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
#[path = "../../tests/support/mod.rs"]
#[allow(dead_code)] // the examples' tests only build the stand-in
mod standin_support;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The bench against the stand-in driver, compiled here: every figure is measured, every
    /// asynchronous advance ran in the background, and the restored bytes were checked (the
    /// bench fails otherwise).
    #[test]
    fn smoke_against_the_standin() {
        let exe = std::env::current_exe().expect("test executable");
        let lib = standin_support::build(
            exe.parent().expect("its directory"),
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("standin/cuda_standin.c"),
            "libcuda_standin_gpu_copies.so",
        );
        // Before the first use of the space, which reads them once; one test in this process.
        std::env::set_var(cd_cuda::CUDA_LIBRARY_ENV, &lib);
        std::env::set_var("CD_BENCH_REPS", "3");
        std::env::remove_var(cd_cuda::CUDA_ENV);
        let mut out = Vec::new();
        let reports = run(&["1".into(), "3".into()], &mut out)
            .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out)))
            .copies;
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("GPU: unknown"), "{text}");
        assert_eq!(reports.len(), 2);
        for (r, mib) in reports.iter().zip([1, 3]) {
            assert_eq!(r.bytes, mib << 20);
            for s in [
                &r.raw_d2h_pinned,
                &r.raw_d2h_pageable,
                &r.advance,
                &r.raw_h2d_pinned,
                &r.raw_h2d_pageable,
                &r.restore,
                &r.raw_d2h_fresh,
                &r.first_save,
                &r.async_stall,
                &r.copy_loop.alone,
                &r.copy_loop.after_async,
                &r.copy_loop.drain_rest,
                &r.copy_loop.call,
                &r.kernel_loop.alone,
                &r.kernel_loop.after_async,
                &r.kernel_loop.drain_rest,
                &r.kernel_loop.call,
            ] {
                assert_eq!(s.0.len(), 3, "{r:?}");
                assert!(s.0.iter().all(|t| t.is_finite() && *t >= 0.0), "{r:?}");
            }
            assert_eq!(
                r.in_flight, 3,
                "every async advance had room for a snapshot"
            );
            assert!(r.copy_loop.steps >= 1 && r.kernel_loop.steps >= 1);
            let diff = r.diff.as_ref().expect("the differential figures");
            for s in [
                &diff.full_some,
                &diff.diff_some,
                &diff.full_all,
                &diff.diff_all,
                &diff.sums,
            ] {
                assert_eq!(s.0.len(), 3, "{diff:?}");
            }
            assert!(diff.changed >= 1 && diff.blocks == (mib << 20) / cd_cuda::DIFF_BLOCK);
            assert!(text.contains("stencil kernel loop"), "{text}");
            assert!(text.contains(&format!("{mib} MiB: median")), "{text}");
        }
        // The reset bench last: the stand-in's reset invalidates every stream and allocation.
        // Once with arrays coming back elsewhere, once at their old addresses (as the real
        // driver does: issue 26).
        let library = standin_support::Library::open(&lib);
        // SAFETY: the stand-in declares `void cuStandinReuseAddresses(int)`.
        let reuse: unsafe extern "C" fn(c_int) =
            unsafe { library.symbol("cuStandinReuseAddresses") };
        for same in [false, true] {
            // SAFETY: the stand-in's test hook.
            unsafe { reuse(c_int::from(same)) };
            let mut out = Vec::new();
            let resets = run(&["--reset".into(), "2".into()], &mut out)
                .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out)))
                .resets;
            assert_eq!(resets.len(), 1);
            let r = &resets[0];
            assert_eq!(r.bytes, 2 << 20);
            for s in [&r.raw, &r.cd, &r.reset_call] {
                assert_eq!(s.0.len(), 3, "{r:?}");
                assert!(s.0.iter().all(|t| t.is_finite() && *t >= 0.0), "{r:?}");
            }
            assert_eq!(r.same_address, if same { 3 } else { 0 }, "{r:?}");
            let text = String::from_utf8_lossy(&out);
            assert!(text.contains("2 MiB: a GPU reset"), "{text}");
        }
        let err = run(&["0".into()], &mut Vec::new()).unwrap_err();
        assert!(err.contains("from 1 MiB"), "{err}");
        let err = run(&["x".into()], &mut Vec::new()).unwrap_err();
        assert!(err.contains("not a size"), "{err}");
    }
}
