//! Device memory allocated through the loaded driver, for Rust programs that have no CUDA
//! binding of their own (or want the runtime's): [`CudaMemory`] is the built-in space as a
//! value, for one device, and [`DeviceBuffer`] a typed allocation freed on drop.
//!
//! Allocation goes through the same `dlopen`ed driver as the space's copies (`cuMemAlloc_v2`
//! and `cuMemFree_v2` with the device's primary context pushed), so the memory is ordinary
//! `cudaMalloc` memory: the space recognises it, kernels launched by the application (in the
//! primary context, as the CUDA runtime uses) work on it, and the safe layer of the facade
//! allocates its device buffers with it. Nothing here touches device memory from the CPU.

use crate::driver::DevPtr;
use crate::{status, CudaSpace, SPACE};
use bytemuck::Pod;
use cd_core::{DeviceMemory, SpaceId};
use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::Arc;

/// The built-in CUDA space for one device: allocates device memory there with the loaded
/// driver, and copies to and from device memory (any device's) with the space's copies.
///
/// Cheap to clone. [`CudaMemory::new`] enables the space if needed ([`crate::enable`]).
#[derive(Clone)]
pub struct CudaMemory {
    space: Arc<CudaSpace>,
    id: SpaceId,
    ordinal: c_int,
    name: String,
}

impl CudaMemory {
    /// The space for device `ordinal` (0 is the first GPU). `Err` says why not: the space is
    /// off (`CD_CUDA=0`), the driver library cannot be loaded or has no GPU, or no device has
    /// this ordinal.
    pub fn new(ordinal: usize) -> Result<CudaMemory, String> {
        let id = status().map_err(|why| format!("the CUDA space is not in use: {why}"))?;
        let space = SPACE
            .get()
            .cloned()
            .ok_or("the CUDA space is not registered")?;
        let ordinal = c_int::try_from(ordinal).map_err(|_| format!("no CUDA device {ordinal}"))?;
        // Sets up the device's context (and copy streams) now, so that a bad ordinal fails here.
        space
            .with_ordinal(ordinal, |_, _| Ok(()))
            .map_err(|e| format!("CUDA device {ordinal}: {e}"))?;
        Ok(CudaMemory {
            space,
            id,
            ordinal,
            name: format!("cuda:{ordinal}"),
        })
    }

    /// The id of the built-in space (the same for every device).
    pub fn space(&self) -> SpaceId {
        self.id
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal as usize
    }

    /// Allocates `bytes` bytes of device memory (`cuMemAlloc`) and returns their device
    /// address. `Err` for 0 bytes, or with the driver's message (out of memory, say).
    ///
    /// The memory is the caller's to give back with [`free`](Self::free);
    /// [`DeviceBuffer`] does it on drop.
    pub fn allocate(&self, bytes: usize) -> Result<usize, String> {
        if bytes == 0 {
            return Err("cannot allocate 0 bytes of device memory".to_owned());
        }
        self.space.with_ordinal(self.ordinal, |d, _| {
            let mut address: DevPtr = 0;
            // SAFETY: an out-pointer to a local; the device's primary context is current.
            d.check(
                unsafe { (d.mem_alloc)(&mut address, bytes) },
                &format!("cuMemAlloc of {bytes} bytes"),
            )?;
            Ok(address as usize)
        })
    }

    /// Gives back device memory (`cuMemFree`); `Err` with the driver's message for an address
    /// it did not allocate.
    ///
    /// # Safety
    /// `address` was returned by [`allocate`](Self::allocate) and not freed since, and nothing
    /// uses the memory any more: no CD names it (the runtime would copy to and from memory
    /// that a later allocation may reuse), and no kernel or copy still runs on it.
    pub unsafe fn free(&self, address: usize) -> Result<(), String> {
        self.space.with_device(address, |d, _| {
            // SAFETY: the caller's promise; the allocation's context is current.
            d.check(unsafe { (d.mem_free)(address as DevPtr) }, "cuMemFree")
        })
    }
}

/// The differential copy (module `diff`: the checksum, all-or-nothing, `CD_CUDA_DIFF`).
impl CudaMemory {
    /// The checksums of the `len` bytes at device address `src` now, block by block
    /// ([`DIFF_BLOCK`](crate::DIFF_BLOCK)), computed on the GPU; empty when the differential
    /// copy is off ([`DIFF_ENV`](crate::DIFF_ENV)) or `src` is not 8-byte aligned.
    pub fn block_sums(&self, src: usize, len: usize) -> Result<crate::BlockSums, String> {
        Ok(self.space.checksums(src, len)?.unwrap_or_default())
    }

    /// What changed in the `len` bytes at device address `src` since a saved copy whose
    /// checksums are `saved`: checksums on the GPU, compared on the host, the changed blocks
    /// gathered on the device and brought over in one transfer. A full copy when `saved`
    /// does not describe this range (empty: the first save), the switch is off, or most
    /// blocks changed. Nothing of the caller's is touched: [`Patch::apply`](crate::Patch::apply)
    /// writes the result, and cannot fail.
    ///
    /// No one may write the range during the call (as for any copy of the space).
    pub fn changes(
        &self,
        src: usize,
        len: usize,
        saved: &crate::BlockSums,
    ) -> Result<crate::Patch, String> {
        self.space.patch(src, len, saved)
    }

    /// Brings `saved`, a host copy of the `saved.len()` bytes at device address `src` with
    /// checksums `sums`, up to date: [`changes`](Self::changes) then
    /// [`Patch::apply`](crate::Patch::apply). On `Err` neither is touched.
    pub fn save_changed(
        &self,
        saved: &mut [u8],
        src: usize,
        sums: &mut crate::BlockSums,
    ) -> Result<crate::DiffReport, String> {
        self.changes(src, saved.len(), sums)?.apply(saved, sums)
    }
}

impl DeviceMemory for CudaMemory {
    fn name(&self) -> &str {
        &self.name
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        self.space.copy_to_host(dst, src)
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        self.space.copy_to_device(dst, src)
    }

    fn allocation_of(&self, address: usize) -> Option<(usize, usize)> {
        self.space.allocation_of(address)
    }

    fn block_sums(&self, src: usize, len: usize) -> Result<Option<cd_core::SavedSums>, String> {
        self.space.saved_sums(src, len)
    }

    fn changes(
        &self,
        src: usize,
        len: usize,
        saved: &(dyn std::any::Any + Send + Sync),
    ) -> Result<cd_core::Changes, String> {
        self.space.core_changes(src, len, saved)
    }
}

impl std::fmt::Debug for CudaMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaMemory")
            .field("space", &self.id)
            .field("ordinal", &self.ordinal)
            .finish()
    }
}

/// `len` elements of `T` in device memory, freed on drop: the typed, safe allocation of the
/// built-in space. Its contents are reached through copies ([`copy_from`](Self::copy_from),
/// [`to_vec`](Self::to_vec)) and kernels ([`address`](Self::address)).
///
/// ```no_run
/// let gpu = cd_cuda::CudaMemory::new(0)?;
/// let mut x = cd_cuda::DeviceBuffer::from_slice(&gpu, &[1.0f32, 2.0, 3.0])?;
/// // launch a kernel on x.address() ...
/// x.copy_from(&[4.0, 5.0, 6.0])?;
/// assert_eq!(x.to_vec()?, [4.0, 5.0, 6.0]);
/// # Ok::<(), String>(())
/// ```
pub struct DeviceBuffer<T> {
    memory: CudaMemory,
    /// 0 when nothing was allocated (no bytes).
    address: usize,
    len: usize,
    _elements: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    /// A device buffer holding a copy of `data`.
    pub fn from_slice(memory: &CudaMemory, data: &[T]) -> Result<Self, String> {
        let mut buffer = Self::uninit(memory, data.len())?;
        buffer.copy_from(data)?;
        Ok(buffer)
    }

    /// A device buffer of `len` zeroed elements.
    pub fn zeroed(memory: &CudaMemory, len: usize) -> Result<Self, String> {
        let buffer = Self::uninit(memory, len)?;
        if buffer.address != 0 {
            let zeros = vec![0u8; len * std::mem::size_of::<T>()];
            memory.copy_to_device(buffer.address, &zeros)?;
        }
        Ok(buffer)
    }

    /// Allocates room for `len` elements, not yet written.
    fn uninit(memory: &CudaMemory, len: usize) -> Result<Self, String> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| format!("{len} elements overflow the address space"))?;
        let address = if bytes == 0 {
            0
        } else {
            memory.allocate(bytes)?
        };
        Ok(DeviceBuffer {
            memory: memory.clone(),
            address,
            len,
            _elements: PhantomData,
        })
    }

    /// Overwrites the whole buffer with `data`, which must have [`len`](Self::len) elements.
    pub fn copy_from(&mut self, data: &[T]) -> Result<(), String> {
        if data.len() != self.len {
            return Err(format!(
                "{} elements copied into a device buffer of {}",
                data.len(),
                self.len
            ));
        }
        if self.address == 0 {
            return Ok(());
        }
        self.memory
            .copy_to_device(self.address, bytemuck::cast_slice(data))
    }

    /// The buffer's elements, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>, String> {
        let mut out = vec![T::zeroed(); self.len];
        if self.address != 0 {
            self.memory
                .copy_to_host(bytemuck::cast_slice_mut(&mut out), self.address)?;
        }
        Ok(out)
    }
}

impl<T> DeviceBuffer<T> {
    /// The device address of the first element, for a kernel (0 when the buffer has no
    /// bytes).
    pub fn address(&self) -> usize {
        self.address
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.address != 0 {
            // SAFETY: allocated by `uninit`, freed once, here; the buffer owns it, and adding
            // it to a CD takes the raw layer's `unsafe` promise to keep it allocated meanwhile.
            // An error (the device was reset) leaves nothing to free.
            let _ = unsafe { self.memory.free(self.address) };
        }
    }
}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer({}, {:#x}, {})",
            self.memory.name, self.address, self.len
        )
    }
}
