//! The checks of issue 26 that run on any driver, a real GPU's or the stand-in: the real-driver
//! form of the stand-in tests that need no test hook (`tests/remap.rs`, `tests/diff.rs`, the
//! snapshot pool of `tests/standin.rs`). Each check prints `ok` or `FAILED` with what it saw;
//! the last line is "N passed, M failed" and the exit status is M (scripts/test-gpu.sh counts
//! them).
//!
//! - **ptx**: the embedded PTX loads (`cuModuleLoadData`) and its kernels run: the block
//!   checksums of the same bytes agree twice, and differ after a one-bit change.
//! - **diff**: the differential copy brings exactly the changed blocks (a bit, two swapped
//!   bytes, the tail of a short last block) and the saved copy equals the device's bytes;
//!   nothing changed, nothing copied; most changed, a full copy.
//! - **diff-advance**: cd-core's synchronous advance of a CD's device array copies it whole
//!   first, then only the changed blocks into its saved copy (the CD's counters say how
//!   many), nothing when nothing changed; restore writes the bytes at the advance, bitwise.
//! - **async**: asynchronous advances run in the background, from the snapshot pool (the
//!   second needs no new memory), and save the bytes at the call.
//! - **reset** (first, so that its array is the process's first allocation): the reset
//!   recipe for `cudaMalloc` arrays (`cuDevicePrimaryCtxReset`, allocate again,
//!   `device_reset`, `remap_device_region`, `restore_cd`) restores the array, whether the
//!   driver handed the old address back (it prints which) or another.
//!
//! Run: `gpu_checks` (a GPU) or `CD_CUDA_LIBRARY=libcuda_standin.so gpu_checks`.

use cd_core::{
    add_to_cd_via_copy, advance_cd_point_in_time, advance_cd_point_in_time_async, advance_wait,
    cd_info, cd_saved_bytes, commit_cd, create_cd, device_reset, remap_device_region, restore_cd,
    Access, AddrSpec, CdHandle, DeviceMemory, LoggingMode, Scope, Stats,
};
use cd_cuda::{BlockSums, CudaMemory, DIFF_BLOCK};
use std::ffi::{c_int, CString};

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 29) as u8 ^ seed)
        .collect()
}

fn root(name: &str) -> Result<CdHandle, String> {
    create_cd(None, None, LoggingMode::Disabled, Some(name)).map_err(|e| e.to_string())
}

fn rw(address: usize, len: usize) -> AddrSpec {
    AddrSpec::new(address, len, Access::ReadWrite, Scope::Global)
}

fn expect(what: &str, ok: bool) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what.to_owned())
    }
}

fn ptx(gpu: &CudaMemory) -> Result<String, String> {
    let len = 4 * DIFF_BLOCK;
    let a = gpu.allocate(len)?;
    let mut data = pattern(len, 1);
    gpu.copy_to_device(a, &data)?;
    let (s1, s2) = (gpu.block_sums(a, len)?, gpu.block_sums(a, len)?);
    expect(
        "checksums of the same bytes agree",
        s1 == s2 && s1.blocks() == 4,
    )?;
    data[2 * DIFF_BLOCK + 5] ^= 4;
    gpu.copy_to_device(a, &data)?;
    let s3 = gpu.block_sums(a, len)?;
    expect("a one-bit change changes the checksums", s3 != s1)?;
    // SAFETY: allocated above; nothing uses it any more.
    unsafe { gpu.free(a) }?;
    Ok("module loaded, kernels ran".into())
}

fn diff(gpu: &CudaMemory) -> Result<String, String> {
    let len = 9 * DIFF_BLOCK + 13;
    let a = gpu.allocate(len)?;
    let mut data = pattern(len, 2);
    gpu.copy_to_device(a, &data)?;
    let (mut saved, mut sums) = (vec![0u8; len], BlockSums::default());
    let first = gpu.save_changed(&mut saved, a, &mut sums)?;
    expect("the first save is full", first.full && saved == data)?;
    let none = gpu.save_changed(&mut saved, a, &mut sums)?;
    expect(
        "nothing changed, nothing copied",
        none.changed == 0 && none.bytes_copied == 0,
    )?;
    data[3 * DIFF_BLOCK + 100] ^= 1;
    data.swap(5 * DIFF_BLOCK + 8, 5 * DIFF_BLOCK + 16);
    data[len - 1] ^= 0x80;
    gpu.copy_to_device(a, &data)?;
    let some = gpu.save_changed(&mut saved, a, &mut sums)?;
    expect(
        &format!("three blocks copied, got {some:?}"),
        some.changed == 3 && !some.full && some.bytes_copied == 2 * DIFF_BLOCK + 13,
    )?;
    expect("the saved copy is the device's bytes", saved == data)?;
    let data = pattern(len, 3);
    gpu.copy_to_device(a, &data)?;
    let all = gpu.save_changed(&mut saved, a, &mut sums)?;
    expect("most changed: full", all.full && saved == data)?;
    // SAFETY: allocated above; nothing uses it any more.
    unsafe { gpu.free(a) }?;
    Ok(format!("{some:?}"))
}

fn diff_advance(gpu: &CudaMemory) -> Result<String, String> {
    let len = 9 * DIFF_BLOCK + 13;
    let a = gpu.allocate(len)?;
    let mut data = pattern(len, 4);
    gpu.copy_to_device(a, &data)?;
    let cd = root("gpu-checks-diff-advance")?;
    let advance = || -> Result<Stats, String> {
        // SAFETY: the array stays allocated until the CD is committed; nothing writes it
        // during the calls.
        unsafe {
            add_to_cd_via_copy(cd, &[rw(a, len)]).map_err(|e| e.to_string())?;
            advance_cd_point_in_time(cd).map_err(|e| e.to_string())?;
        }
        Ok(cd_info(cd).map_err(|e| e.to_string())?.stats)
    };
    let first = advance()?;
    expect("the first advance copies whole", first.bytes_diffed == 0)?;
    data[DIFF_BLOCK + 1] ^= 1;
    data[6 * DIFF_BLOCK..7 * DIFF_BLOCK].fill(0xAB);
    data[len - 1] ^= 0x40;
    gpu.copy_to_device(a, &data)?;
    let some = advance()?;
    expect(
        &format!("three blocks copied, got {some:?}"),
        some.bytes_diffed == len as u64
            && some.diff_blocks_changed == 3
            && some.diff_bytes_copied == (2 * DIFF_BLOCK + 13) as u64,
    )?;
    let none = advance()?;
    expect(
        "nothing changed, nothing copied",
        none.diff_bytes_copied == some.diff_bytes_copied && none.bytes_diffed == 2 * len as u64,
    )?;
    gpu.copy_to_device(a, &pattern(len, 5))?;
    // SAFETY: as above.
    unsafe { restore_cd(cd) }.map_err(|e| e.to_string())?;
    let mut back = vec![0u8; len];
    gpu.copy_to_host(&mut back, a)?;
    expect("restored bitwise", back == data)?;
    commit_cd(cd).map_err(|e| e.to_string())?;
    // SAFETY: allocated above; no CD holds it.
    unsafe { gpu.free(a) }?;
    Ok(format!(
        "{} B in {} blocks of {len} B",
        some.diff_bytes_copied, some.diff_blocks_changed
    ))
}

fn asynchronous(gpu: &CudaMemory) -> Result<String, String> {
    let len = 8 << 20;
    let a = gpu.allocate(len)?;
    let cd = root("gpu-checks-async")?;
    let mut in_flight = 0;
    for round in 1..=3u8 {
        let data = pattern(len, round);
        gpu.copy_to_device(a, &data)?;
        // SAFETY: the array stays allocated until the CD is committed; nothing writes it
        // during the calls.
        unsafe { add_to_cd_via_copy(cd, &[rw(a, len)]) }.map_err(|e| e.to_string())?;
        // SAFETY: as above; the default stream.
        let started =
            unsafe { advance_cd_point_in_time_async(cd, 0) }.map_err(|e| e.to_string())?;
        in_flight += usize::from(started.in_flight);
        advance_wait(cd).map_err(|e| e.to_string())?;
        let saved = cd_saved_bytes(cd, a, len).map_err(|e| e.to_string())?;
        expect(
            &format!("round {round}: the bytes at the call"),
            saved == data,
        )?;
    }
    commit_cd(cd).map_err(|e| e.to_string())?;
    // SAFETY: allocated above; no CD holds it.
    unsafe { gpu.free(a) }?;
    expect(&format!("{in_flight} of 3 in flight"), in_flight == 3)?;
    Ok("3 of 3 in flight".into())
}

/// `cuDevicePrimaryCtxReset_v2` on device 0 (or the stand-in's `cuStandinReset`).
fn reset_gpu() -> Result<(), String> {
    let lib = std::env::var(cd_cuda::CUDA_LIBRARY_ENV).unwrap_or("libcuda.so.1".into());
    let name = CString::new(lib.clone()).map_err(|_| "bad library name")?;
    // SAFETY: dlopen of the library the space loaded (the same handle), never closed.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
    expect(&format!("cannot load {lib}"), !handle.is_null())?;
    // SAFETY: a live handle, NUL-terminated names; each symbol has the signature transmuted
    // to (cuda.h; the stand-in's hook takes nothing).
    unsafe {
        let f = libc::dlsym(handle, c"cuDevicePrimaryCtxReset_v2".as_ptr());
        expect("no cuDevicePrimaryCtxReset_v2", !f.is_null())?;
        let reset: unsafe extern "C" fn(c_int) -> c_int = std::mem::transmute(f);
        let (mut device, get) = (0, libc::dlsym(handle, c"cuDeviceGet".as_ptr()));
        expect("no cuDeviceGet", !get.is_null())?;
        let get: unsafe extern "C" fn(*mut c_int, c_int) -> c_int = std::mem::transmute(get);
        expect("cuDeviceGet", get(&mut device, 0) == 0)?;
        expect("cuDevicePrimaryCtxReset", reset(device) == 0)
    }
}

fn reset(gpu: &CudaMemory) -> Result<String, String> {
    let len = 32 << 20;
    let a = gpu.allocate(len)?;
    let data = pattern(len, 4);
    gpu.copy_to_device(a, &data)?;
    let cd = root("gpu-checks-reset")?;
    // SAFETY: the array stays allocated until the reset, and is allocated again after it;
    // nothing writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, len)]) }.map_err(|e| e.to_string())?;
    reset_gpu()?;
    device_reset();
    let b = gpu.allocate(len)?;
    gpu.copy_to_device(b, &pattern(len, 5))?;
    remap_device_region(a, b, len).map_err(|e| e.to_string())?;
    // SAFETY: the new array, allocated; nothing else writes it.
    unsafe { restore_cd(cd) }.map_err(|e| e.to_string())?;
    let mut back = vec![0u8; len];
    gpu.copy_to_host(&mut back, b)?;
    expect("the array restored after the reset", back == data)?;
    commit_cd(cd).map_err(|e| e.to_string())?;
    // SAFETY: allocated since the reset; no CD holds it.
    unsafe { gpu.free(b) }?;
    Ok(if a == b {
        format!("the driver handed the old address {a:#x} back: remapped onto itself")
    } else {
        format!("a new address ({a:#x} -> {b:#x})")
    })
}

/// Runs every check; returns (passed, failed).
fn run(out: &mut dyn std::io::Write) -> (usize, usize) {
    let gpu = match CudaMemory::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            let _ = writeln!(out, "FAILED setup: {e}\n0 passed, 1 failed");
            return (0, 1);
        }
    };
    type Check = fn(&CudaMemory) -> Result<String, String>;
    // The reset first, while the array is the process's first allocation: a driver that
    // hands freed addresses back then gives it the same address (the case of issue 26).
    let checks: [(&str, Check); 5] = [
        ("reset", reset),
        ("ptx", ptx),
        ("diff", diff),
        ("diff-advance", diff_advance),
        ("async", asynchronous),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, check) in checks {
        match check(&gpu) {
            Ok(detail) => {
                passed += 1;
                let _ = writeln!(out, "ok     {name}: {detail}");
            }
            Err(e) => {
                failed += 1;
                let _ = writeln!(out, "FAILED {name}: {e}");
            }
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    (passed, failed)
}

fn main() {
    let (_, failed) = run(&mut std::io::stdout());
    std::process::exit(failed.min(100) as i32);
}

#[cfg(test)]
#[path = "../tests/support/mod.rs"]
#[allow(dead_code)] // the examples' tests only build the stand-in
mod standin_support;

#[cfg(test)]
mod tests {
    /// The checks against the stand-in (once with freed addresses handed back, as the real
    /// driver does): all pass.
    #[test]
    fn against_the_standin() {
        let exe = std::env::current_exe().expect("test executable");
        let lib = super::standin_support::build(
            exe.parent().expect("its directory"),
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("standin/cuda_standin.c"),
            "libcuda_standin_gpu_checks.so",
        );
        std::env::set_var(cd_cuda::CUDA_LIBRARY_ENV, &lib);
        std::env::set_var("CD_CUDA_STANDIN_REUSE", "1");
        std::env::remove_var(cd_cuda::CUDA_ENV);
        let mut out = Vec::new();
        let (passed, failed) = super::run(&mut out);
        let text = String::from_utf8_lossy(&out);
        assert_eq!((passed, failed), (5, 0), "{text}");
        assert!(text.contains("handed the old address"), "{text}");
    }
}
