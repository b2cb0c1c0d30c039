//! Bench of the built-in CUDA space's copies against raw pinned driver copies (issue 11).
//!
//! For each size it runs, interleaved A B A B: a raw pinned `cuMemcpyDtoH` of the bytes (A)
//! and a CD advance of the same device array (B); a raw pinned `cuMemcpyHtoD` (A) and a CD
//! restore (B); then the stall of an asynchronous advance (the call plus a synchronisation of
//! the default stream, the time the application's stream is held) against a synchronous
//! advance. It prints GB/s and the ratio to the raw copy.
//!
//! Run on a GPU: `cargo run --release -p cd-cuda --example gpu_copies -- 256 1024 4096 8192`
//! (sizes in MiB; `CD_BENCH_REPS`, default 3). Against the stand-in (no GPU), as a smoke test:
//! `CD_CUDA_LIBRARY=path/to/libcuda_standin.so cargo run -p cd-cuda --example gpu_copies -- 4`.
//! Stand-in figures measure host memcpy, not a GPU.

// Each transmute below is annotated by the type of the field it fills, as in the tests.
#![allow(clippy::missing_transmute_annotations)]

use cd_core::*;
use std::ffi::{c_int, c_void, CString};
use std::time::Instant;

type Res = c_int;

/// The raw driver functions the bench times (the space loads its own).
struct Raw {
    retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> Res,
    push: unsafe extern "C" fn(*mut c_void) -> Res,
    alloc: unsafe extern "C" fn(*mut u64, usize) -> Res,
    free: unsafe extern "C" fn(u64) -> Res,
    alloc_host: unsafe extern "C" fn(*mut *mut c_void, usize) -> Res,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> Res,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> Res,
    sync: unsafe extern "C" fn(*mut c_void) -> Res,
}

fn load() -> Raw {
    let lib = std::env::var(cd_cuda::CUDA_LIBRARY_ENV).unwrap_or("libcuda.so.1".into());
    let name = CString::new(lib.clone()).expect("library name");
    // SAFETY: dlopen of the driver library, never closed.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
    assert!(!handle.is_null(), "cannot load {lib}");
    let sym = |n: &str| {
        let n = CString::new(n).expect("symbol");
        // SAFETY: a live handle, a NUL-terminated name.
        let f = unsafe { libc::dlsym(handle, n.as_ptr()) };
        assert!(!f.is_null(), "{lib} lacks {n:?}");
        f
    };
    // SAFETY: each symbol has the driver API's signature (cuda.h).
    unsafe {
        Raw {
            retain: std::mem::transmute(sym("cuDevicePrimaryCtxRetain")),
            push: std::mem::transmute(sym("cuCtxPushCurrent_v2")),
            alloc: std::mem::transmute(sym("cuMemAlloc_v2")),
            free: std::mem::transmute(sym("cuMemFree_v2")),
            alloc_host: std::mem::transmute(sym("cuMemAllocHost_v2")),
            dtoh: std::mem::transmute(sym("cuMemcpyDtoH_v2")),
            htod: std::mem::transmute(sym("cuMemcpyHtoD_v2")),
            sync: std::mem::transmute(sym("cuStreamSynchronize")),
        }
    }
}

fn ok(rc: Res, what: &str) {
    assert_eq!(rc, 0, "{what} failed: CUDA error {rc}");
}

fn time(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

fn main() {
    let space = cd_cuda::enable().unwrap_or_else(|| panic!("{:?}", cd_cuda::status()));
    let raw = load();
    let mut ctx = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; device 0's primary context made current for this thread.
    unsafe {
        ok((raw.retain)(&mut ctx, 0), "cuDevicePrimaryCtxRetain");
        ok((raw.push)(ctx), "cuCtxPushCurrent");
    }
    let reps: usize = std::env::var("CD_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("size in MiB") << 20)
        .collect();
    let sizes = if sizes.is_empty() {
        vec![256 << 20, 1 << 30, 4 << 30, 8 << 30]
    } else {
        sizes
    };
    println!("space {space}; {reps} reps; GB/s (best of reps), ratio to raw pinned");
    for n in sizes {
        let (mut dev, mut host) = (0u64, std::ptr::null_mut());
        // SAFETY: out-pointers to locals.
        unsafe {
            ok((raw.alloc)(&mut dev, n), "cuMemAlloc");
            ok((raw.alloc_host)(&mut host, n), "cuMemAllocHost");
            ok((raw.htod)(dev, host, n), "cuMemcpyHtoD");
        }
        let spec = AddrSpec::new(dev as usize, n, Access::ReadWrite, Scope::Global);
        let cd = create_cd(None, None, LoggingMode::Disabled, Some("gpu-bench")).expect("create");
        // SAFETY: the device array stays allocated while in the CD; nothing writes it.
        unsafe { add_to_cd_via_copy(cd, &[spec]).expect("add") };
        let (mut best, gb) = ([f64::MAX; 6], n as f64 / 1e9);
        for _ in 0..reps {
            // SAFETY: pinned host and device buffers of n bytes; the CD's range
            // is the device array, quiet during the calls.
            best[0] = best[0].min(time(|| unsafe { ok((raw.dtoh)(host, dev, n), "DtoH") }));
            // SAFETY: as above.
            unsafe { add_to_cd_via_copy(cd, &[spec]).expect("promote") };
            // SAFETY: as above.
            best[1] = best[1].min(time(|| unsafe {
                advance_cd_point_in_time(cd).expect("advance");
            }));
            // SAFETY: as above.
            best[2] = best[2].min(time(|| unsafe { ok((raw.htod)(dev, host, n), "HtoD") }));
            // SAFETY: as above.
            best[3] = best[3].min(time(|| unsafe {
                restore_cd(cd).expect("restore");
            }));
            // SAFETY: as above.
            unsafe { add_to_cd_via_copy(cd, &[spec]).expect("promote") };
            let mut in_flight = false;
            // SAFETY: as above.
            best[4] = best[4].min(time(|| unsafe {
                in_flight = advance_cd_point_in_time_async(cd, 0)
                    .expect("async advance")
                    .in_flight;
                ok((raw.sync)(std::ptr::null_mut()), "cuStreamSynchronize");
            }));
            advance_wait(cd).expect("drain");
            if !in_flight {
                println!(
                    "  (no room on the device for a snapshot: the async advance ran synchronously)"
                );
            }
            // SAFETY: as above.
            unsafe { add_to_cd_via_copy(cd, &[spec]).expect("promote") };
            // SAFETY: as above.
            best[5] = best[5].min(time(|| unsafe {
                advance_cd_point_in_time(cd).expect("advance");
            }));
        }
        let mib = n >> 20;
        println!(
            "{mib:>6} MiB  D2H raw {:>7.1}  advance {:>7.1} ({:.2}x)",
            gb / best[0],
            gb / best[1],
            best[0] / best[1]
        );
        println!(
            "{mib:>6} MiB  H2D raw {:>7.1}  restore {:>7.1} ({:.2}x)",
            gb / best[2],
            gb / best[3],
            best[2] / best[3]
        );
        println!(
            "{mib:>6} MiB  stall: async advance {:.3} ms, sync advance {:.3} ms ({:.1}%)",
            best[4] * 1e3,
            best[5] * 1e3,
            100.0 * best[4] / best[5]
        );
        commit_cd(cd).expect("commit");
        // SAFETY: the array is no longer in any CD.
        unsafe { ok((raw.free)(dev), "cuMemFree") };
    }
}
