//! Kernels the space runs on the GPU, loaded at run time from PTX text embedded in the
//! library (`cuModuleLoadData`), so nothing needs nvcc or a CUDA toolkit to build: the source
//! is LLVM IR (`cd-cuda/kernels/kernels.ll`), compiled to PTX by LLVM's NVPTX back end and
//! committed (`kernels.ptx`). The driver compiles the PTX for the GPU at hand on first load.
//! The stand-in driver plays the same kernels on the host by name.

use crate::driver::{Driver, Handle};
use std::ffi::{c_uint, c_void, CString};

/// The PTX text of the space's kernels (`cd_block_sums`, `cd_gather_blocks`) and of the
/// bench's memory-bound `cd_bench_stencil`: what `cuModuleLoadData` takes (NUL-terminate it).
pub const KERNELS_PTX: &str = include_str!("../kernels/kernels.ptx");

/// Threads per block of every launch (`cd_block_sums` is compiled for at most 256).
pub(crate) const THREADS: u32 = 256;
/// The most blocks of a launch; the kernels loop over the rest (grid-stride).
pub(crate) const MAX_GRID: u64 = 1 << 16;

/// The loaded module's functions, per device (in the primary context).
pub(crate) struct Kernels {
    pub(crate) block_sums: Handle,
    pub(crate) gather: Handle,
}

impl Kernels {
    /// Loads the embedded PTX with the device's context current.
    pub(crate) fn load(d: &Driver) -> Result<Kernels, String> {
        let text = CString::new(KERNELS_PTX).map_err(|_| "the PTX text holds a NUL")?;
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local and NUL-terminated PTX text, which the driver
        // reads during the call only; the module stays loaded for the life of the context.
        d.check(
            unsafe { (d.module_load_data)(&mut module, text.as_ptr().cast()) },
            "cuModuleLoadData",
        )?;
        let function = |name: &str| -> Result<Handle, String> {
            let name = CString::new(name).map_err(|_| "bad kernel name")?;
            let mut f: Handle = std::ptr::null_mut();
            // SAFETY: an out-pointer to a local, the module just loaded, a NUL-terminated
            // name.
            d.check(
                unsafe { (d.module_get_function)(&mut f, module, name.as_ptr()) },
                "cuModuleGetFunction",
            )?;
            Ok(f)
        };
        Ok(Kernels {
            block_sums: function("cd_block_sums")?,
            gather: function("cd_gather_blocks")?,
        })
    }
}

/// The grid for `work` items handled by [`THREADS`]-thread blocks, at most [`MAX_GRID`].
pub(crate) fn grid(work: u64) -> u32 {
    work.div_ceil(u64::from(THREADS)).clamp(1, MAX_GRID) as u32
}

/// Queues kernel `f` on `stream` with `grid` blocks of [`THREADS`] threads and 8-byte
/// arguments `args`.
///
/// # Safety
/// `f` is a function of a module loaded in the current context whose parameters are
/// `args.len()` 8-byte values, and the memory the arguments name is what the kernel may read
/// and write (kernels.ll says what each touches).
pub(crate) unsafe fn launch(
    d: &Driver,
    f: Handle,
    grid: u32,
    stream: Handle,
    args: &[u64],
) -> Result<(), String> {
    let mut values = args.to_vec();
    let mut params: Vec<*mut c_void> = values
        .iter_mut()
        .map(|v| (v as *mut u64).cast::<c_void>())
        .collect();
    // SAFETY: the caller's promise for `f` and the arguments; `params` points at `values`,
    // which the driver copies during the call.
    d.check(
        unsafe {
            (d.launch_kernel)(
                f,
                grid as c_uint,
                1,
                1,
                THREADS as c_uint,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}
