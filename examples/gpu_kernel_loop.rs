//! The spec's "Simple API Use Example": a GPU kernel loop protected by a root CD.
//!
//! A simulated GPU holds `gpu_state` in device memory, reached only through its copy functions
//! (registered as a memory space, as a CUDA code registers cudaMemcpy), and the safe layer
//! allocates it there ([`Device`], no `unsafe`). Each outer iteration borrows the state for
//! its kernels (promoting it, no copy), runs N_CD kernels, and advances the CD; a kernel
//! launch fails with probability `CD_FAULT_RATE` (default 0.05), wiping device memory, and the
//! program reboots the GPU and restores the CD. At the end the result is compared with a
//! fault-free run of the same computation.
//!
//! This is the recipe for devices other than CUDA. CUDA memory needs no copy functions: see
//! `examples/cuda_kernel_loop.rs`, on the built-in CUDA space.
//!
//! Run: `cargo run --release --example gpu_kernel_loop` (or `scripts/demo.sh`).
//! Environment: `CD_FAULT_RATE` (0 to 1), `CD_SEED` (the fault pattern).

use containment::{Device, DeviceAlloc, DeviceMemory, Domain};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const OUTER: u32 = 100;
const N_CD: u32 = 10;
const STATE_WORDS: usize = 1 << 18; // 1 MiB of device state

/// Host-side variables of the spec's example, saved in the CD.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Host {
    i: u32,
    j: u32,
    node_copy_of_result: u32,
}

/// A GPU whose memory lives at made-up device addresses, backed by a host vector: room for
/// one allocation of `STATE_WORDS` words.
struct SimulatedGpu {
    base: usize,
    memory: Mutex<Vec<u32>>,
    allocated: AtomicBool,
}

impl SimulatedGpu {
    fn offset(&self, address: usize, len: usize) -> Result<usize, String> {
        let off = address
            .checked_sub(self.base)
            .ok_or("address below device memory")?;
        if !off.is_multiple_of(4) || !len.is_multiple_of(4) || off + len > STATE_WORDS * 4 {
            return Err(format!("bad device range {address:#x}+{len}"));
        }
        Ok(off / 4)
    }

    /// One kernel launch on the state at device address `state`: updates every word and
    /// returns the result word.
    fn run_kernel(&self, state: usize, i: u32, j: u32) -> u32 {
        assert_eq!(state, self.base, "the kernel runs on the one allocation");
        let mut state = self.memory.lock().unwrap();
        let mut result = 0u32;
        for (k, word) in state.iter_mut().enumerate() {
            *word = word
                .wrapping_mul(1_664_525)
                .wrapping_add(i * 1000 + j + k as u32);
            result ^= *word;
        }
        result
    }

    /// A failed launch leaves device memory garbage; a reboot clears it.
    fn crash(&self) {
        self.memory.lock().unwrap().fill(0xDEAD_BEEF);
    }

    fn reboot(&self) {
        self.memory.lock().unwrap().fill(0);
    }
}

impl DeviceMemory for SimulatedGpu {
    fn name(&self) -> &str {
        "simulated-gpu"
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        let off = self.offset(src, dst.len())?;
        let words = &self.memory.lock().unwrap()[off..off + dst.len() / 4];
        dst.copy_from_slice(bytemuck::cast_slice(words));
        Ok(())
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        let off = self.offset(dst, src.len())?;
        let words = &mut self.memory.lock().unwrap()[off..off + src.len() / 4];
        bytemuck::cast_slice_mut(words).copy_from_slice(src);
        Ok(())
    }
}

impl DeviceAlloc for SimulatedGpu {
    fn allocate(&self, bytes: usize) -> Result<usize, String> {
        if bytes > STATE_WORDS * 4 || self.allocated.swap(true, Ordering::AcqRel) {
            return Err(format!("out of device memory ({bytes} bytes asked)"));
        }
        Ok(self.base)
    }

    fn free(&self, _address: usize, _bytes: usize) {
        self.allocated.store(false, Ordering::Release);
    }
}

/// A small deterministic random source for the fault pattern.
struct Faults {
    state: u64,
    rate: f64,
}

impl Faults {
    fn kernel_fails(&mut self) -> bool {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        ((self.state >> 11) as f64 / (1u64 << 53) as f64) < self.rate
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> Result<T, String> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("{name}={v:?} is not a valid value")),
        Err(_) => Ok(default),
    }
}

/// The computation without faults or CDs: the reference result.
fn fault_free() -> u32 {
    let gpu = SimulatedGpu {
        base: 0,
        memory: Mutex::new(vec![0; STATE_WORDS]),
        allocated: AtomicBool::new(true),
    };
    let mut result = 0;
    for i in 1..=OUTER {
        for j in 1..=N_CD {
            result = gpu.run_kernel(0, i, j);
        }
    }
    result
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rate: f64 = env_or("CD_FAULT_RATE", 0.05)?;
    if !(0.0..1.0).contains(&rate) {
        return Err(format!("CD_FAULT_RATE must be in [0, 1), not {rate}").into());
    }
    let mut faults = Faults {
        state: env_or("CD_SEED", 42u64)?.max(1),
        rate,
    };

    let gpu = Arc::new(SimulatedGpu {
        base: 0xD000_0000_0000_0000,
        memory: Mutex::new(vec![0; STATE_WORDS]),
        allocated: AtomicBool::new(false),
    });
    let device = Device::register(gpu.clone());

    let mut cd = Domain::builder().name("root").create()?;
    let gpu_state = cd.protect_device(&device, &vec![0u32; STATE_WORDS])?;
    let host = cd.protect(vec![Host {
        i: 1,
        j: 1,
        node_copy_of_result: 0,
    }])?;
    let (mut met, mut advance_failures) = (0u32, 0u32);
    while cd.get(host)?[0].i <= OUTER {
        let mut error = false;
        let i = cd.get(host)?[0].i;
        for j in 1..=N_CD {
            if faults.kernel_fails() {
                gpu.crash();
                met += 1;
                gpu.reboot();
                cd.restore()?; // device state and i, j, result back to the last advance
                error = true;
                break;
            }
            // Before data is modified (and after each advance): promotes, copies nothing.
            let state = cd.device_mut(gpu_state)?;
            let result = gpu.run_kernel(state.address(), i, j);
            let vars = &mut cd.get_mut(host)?[0];
            vars.j = j;
            vars.node_copy_of_result = result;
            // (MPI_Send / MPI_Recv of the spec's example: see the MPI examples.)
        }
        if !error {
            cd.get_mut(host)?[0].i += 1;
            if let Err(e) = cd.advance() {
                eprintln!("advance failed ({e}); restoring");
                advance_failures += 1;
                gpu.reboot();
                cd.restore()?;
            }
        }
    }
    let result = cd.get(host)?[0].node_copy_of_result;
    let stats = cd.info()?.stats;
    cd.commit()?; // frees the device buffer

    let expected = fault_free();
    println!("gpu_kernel_loop: {OUTER} iterations x {N_CD} kernels on {} KiB of device state, fault rate {rate}", STATE_WORDS * 4 / 1024);
    println!("  kernel faults met:        {met}");
    println!("  restores:                 {}", stats.restores);
    println!(
        "  advances:                 {} ({advance_failures} failed)",
        stats.advances
    );
    println!("  bytes saved by advances:  {}", stats.bytes_advanced);
    println!("  bytes restored:           {}", stats.bytes_restored);
    println!("  result {result:#010x}, fault-free run {expected:#010x}");
    if result != expected || u64::from(met) != stats.restores {
        return Err("the protected run differs from the fault-free run".into());
    }
    println!("  identical: the CD hid every fault");
    Ok(())
}
