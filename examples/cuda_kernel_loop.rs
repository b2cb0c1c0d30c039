//! The spec's "Simple API Use Example" on CUDA memory: a kernel loop protected by a root CD,
//! with the GPU state in device memory of the built-in CUDA space ([`Device::cuda`]): no copy
//! functions to write, no `unsafe`, no CUDA binding of the program's own.
//!
//! [`Device::cuda`] loads the CUDA driver at run time (`libcuda.so.1`, or the library
//! `CD_CUDA_LIBRARY` names), `protect_device` allocates the state with `cuMemAlloc` and saves
//! it, and every advance and restore copies it with the space's pinned copies. Each outer
//! iteration runs `N_CD` kernels, then advances the CD asynchronously: the device state is
//! snapshotted on the device and drained to the host while the program goes on (here with
//! the next iteration's host work; a CUDA code queues its next kernels, with
//! [`PendingAdvance::device_mut`](containment::PendingAdvance::device_mut)).
//!
//! The kernel is played by the host, so that the example needs no kernel compiler: it copies
//! the state out, updates it and copies it back (`download_device`, `upload_device`); a CUDA
//! code launches its kernel on `cd.device_mut(state)?.address()` instead (see
//! `examples/cuda/simple_gpu.cu`). A kernel fails with probability `CD_FAULT_RATE` (default
//! 0.05), leaving garbage in device memory; the program restores the CD and runs the
//! iteration again. At the end the result is compared with a fault-free run.
//!
//! Run on a GPU: `cargo run --release --example cuda_kernel_loop`. Without one, against the
//! stand-in driver the tests use (`cc -shared -fPIC -o /tmp/libcuda_standin.so
//! cd-cuda/standin/cuda_standin.c`): `CD_CUDA_LIBRARY=/tmp/libcuda_standin.so cargo run
//! --example cuda_kernel_loop`. `cargo test --example cuda_kernel_loop` does so. Other
//! devices, with copy functions of their own: `examples/gpu_kernel_loop.rs`.
//! Environment: `CD_FAULT_RATE` (0 to 1), `CD_SEED` (the fault pattern).

use containment::{Device, DeviceKey, Domain, Stream};

const OUTER: u32 = 100;
const N_CD: u32 = 10;
const STATE_WORDS: usize = 1 << 18; // 1 MiB of device state

/// Host-side variables of the spec's example, saved in the CD.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Host {
    i: u32,
    node_copy_of_result: u32,
}

/// One kernel on the state: updates every word and returns their XOR.
fn kernel_step(state: &mut [u32], i: u32, j: u32) -> u32 {
    let mut result = 0u32;
    for (k, word) in state.iter_mut().enumerate() {
        *word = word
            .wrapping_mul(1_664_525)
            .wrapping_add(i * 1000 + j + k as u32);
        result ^= *word;
    }
    result
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

/// What a run met and computed.
struct Summary {
    faults: u32,
    restores: u64,
    advances: u64,
    in_flight: u32,
    result: u32,
}

/// One kernel launch on the device state, played by the host (see the module docs); a failed
/// launch leaves garbage there and returns `None`.
fn launch(
    cd: &mut Domain,
    state: DeviceKey<u32>,
    i: u32,
    j: u32,
    fails: bool,
) -> containment::Result<Option<u32>> {
    let mut words = cd.download_device(state)?;
    if fails {
        words.fill(0xDEAD_BEEF);
        cd.upload_device(state, 0, &words)?;
        return Ok(None);
    }
    let result = kernel_step(&mut words, i, j);
    cd.upload_device(state, 0, &words)?; // makes the state READ_WRITE in the CD
    Ok(Some(result))
}

/// The protected loop on CUDA memory, `outer` iterations.
fn run(outer: u32, rate: f64, seed: u64) -> Result<Summary, Box<dyn std::error::Error>> {
    let gpu = Device::cuda()?;
    let mut faults = Faults {
        state: seed.max(1),
        rate,
    };
    let mut cd = Domain::builder().name("root").create()?;
    let state = cd.protect_device(&gpu, &vec![0u32; STATE_WORDS])?;
    let host = cd.protect(vec![Host {
        i: 1,
        node_copy_of_result: 0,
    }])?;
    let (mut met, mut in_flight) = (0, 0);
    while cd.get(host)?[0].i <= outer {
        let i = cd.get(host)?[0].i;
        let mut result = None;
        for j in 1..=N_CD {
            result = launch(&mut cd, state, i, j, faults.kernel_fails())?;
            if result.is_none() {
                break;
            }
        }
        let Some(result) = result else {
            met += 1;
            cd.restore()?; // device state and host variables back to the last advance
            continue;
        };
        let vars = &mut cd.get_mut(host)?[0];
        vars.node_copy_of_result = result;
        vars.i += 1;
        let pending = cd.advance_async(Stream::DEFAULT)?;
        in_flight += u32::from(pending.in_flight());
        // ... host work overlapping the drain; the next kernels need the domain back:
        pending.wait()?;
    }
    let result = cd.get(host)?[0].node_copy_of_result;
    let stats = cd.info()?.stats;
    cd.commit()?; // frees the device buffer
    Ok(Summary {
        faults: met,
        restores: stats.restores,
        advances: stats.advances,
        in_flight,
        result,
    })
}

/// The computation of `outer` iterations without faults or CDs, on the host: the reference
/// result.
fn fault_free(outer: u32) -> u32 {
    let mut state = vec![0u32; STATE_WORDS];
    let mut result = 0;
    for i in 1..=outer {
        for j in 1..=N_CD {
            result = kernel_step(&mut state, i, j);
        }
    }
    result
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> Result<T, String> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("{name}={v:?} is not a valid value")),
        Err(_) => Ok(default),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rate: f64 = env_or("CD_FAULT_RATE", 0.05)?;
    if !(0.0..1.0).contains(&rate) {
        return Err(format!("CD_FAULT_RATE must be in [0, 1), not {rate}").into());
    }
    let s = run(OUTER, rate, env_or("CD_SEED", 42u64)?)?;
    let expected = fault_free(OUTER);
    println!(
        "cuda_kernel_loop: {OUTER} iterations x {N_CD} kernels on {} KiB of CUDA memory, fault rate {rate}",
        STATE_WORDS * 4 / 1024
    );
    println!("  kernel faults met:        {}", s.faults);
    println!("  restores:                 {}", s.restores);
    println!(
        "  advances:                 {} ({} drained in the background)",
        s.advances, s.in_flight
    );
    println!(
        "  result {:#010x}, fault-free run {expected:#010x}",
        s.result
    );
    if s.result != expected || u64::from(s.faults) != s.restores {
        return Err("the protected run differs from the fault-free run".into());
    }
    println!("  identical: the CD hid every fault");
    Ok(())
}

#[cfg(test)]
#[path = "../cd-cuda/tests/support/mod.rs"]
#[allow(dead_code)] // the examples' tests only build the stand-in
mod standin_support;

#[cfg(test)]
mod tests {
    use super::*;

    /// The example against the stand-in driver (`cd-cuda/standin/cuda_standin.c`, compiled
    /// here): with faults it meets some and still ends with the fault-free result, each
    /// advance drained in the background; without faults it restores nothing.
    #[test]
    fn recovers_on_the_standin() {
        let exe = std::env::current_exe().expect("test executable");
        let lib = standin_support::build(
            exe.parent().expect("its directory"),
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("cd-cuda/standin/cuda_standin.c"),
            "libcuda_standin_cuda_kernel_loop.so",
        );
        // Before the first use of the space, which reads them once; one test in this process.
        std::env::set_var("CD_CUDA_LIBRARY", &lib);
        std::env::remove_var("CD_CUDA");

        let outer = 30;
        let expected = fault_free(outer);
        let s = run(outer, 0.1, 7).unwrap();
        assert!(s.faults > 0, "a fault rate of 0.1 meets faults");
        assert_eq!(u64::from(s.faults), s.restores);
        assert_eq!(s.advances, u64::from(outer));
        assert_eq!(
            s.in_flight, outer,
            "every advance drained in the background"
        );
        assert_eq!(s.result, expected);
        let s = run(outer, 0.0, 1).unwrap();
        assert_eq!((s.faults, s.restores, s.result), (0, 0, expected));
    }
}
