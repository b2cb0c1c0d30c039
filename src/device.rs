//! Device memory through the safe layer: typed buffers allocated in a registered memory space.
//!
//! The raw layer protects device memory given by address ([`cd_core::register_memory_space`],
//! [`cd_core::map_device_region`], then `unsafe` adds). Here the domain allocates the buffer
//! itself through a [`DeviceAlloc`], maps it, fills it and adds it, and frees it only once no
//! CD can name it, exactly as it does for host buffers: the program holds a
//! [`DeviceKey`](crate::DeviceKey) and reaches the memory through the domain —
//! [`upload`](crate::Domain::upload_device), [`download`](crate::Domain::download_device), or
//! [`device_mut`](crate::Domain::device_mut) for the address a kernel works on.
//!
//! This module is the memory alone (the space, one allocation, the pointer a kernel gets);
//! `tree` holds the allocations in its slots and labels them in CDs, so it sits above.
//!
//! The runtime reads and writes device memory only through the space's copy functions, never
//! from the CPU, so none of this needs `unsafe`. What the borrow checker cannot see is a kernel
//! still running on the device: synchronise the device before a restore or an advance, as the
//! spec's GPU example does.

use crate::error::{Error, Result};
use bytemuck::Pod;
use cd_core::{
    add_to_cd_via_copy, map_device_region, register_memory_space, unmap_device_region, Access,
    AddrSpec, CdHandle, DeviceMemory, Scope, SpaceId,
};
use cd_cuda::CudaMemory;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

/// A kind of device memory the safe layer can allocate in, besides copying to and from it.
///
/// `allocate` returns the device address of `bytes` bytes that nothing else uses until they
/// are given back with `free`; the domain maps them as a region of the space and never touches
/// them except through the [`DeviceMemory`] copy functions.
pub trait DeviceAlloc: DeviceMemory {
    /// Allocates `bytes` (more than 0) bytes of device memory and returns their address
    /// (never 0).
    fn allocate(&self, bytes: usize) -> std::result::Result<usize, String>;
    /// Gives back an allocation made by [`allocate`](Self::allocate).
    fn free(&self, address: usize, bytes: usize);
}

/// A registered memory space that domains allocate device buffers in.
///
/// Cheap to clone; the space stays registered for the life of the process (the runtime has no
/// way to unregister one).
#[derive(Clone)]
pub struct Device {
    space: SpaceId,
    memory: Arc<dyn DeviceAlloc>,
}

impl Device {
    /// Registers `memory` as a memory space ([`cd_core::register_memory_space`]).
    pub fn register<A: DeviceAlloc + 'static>(memory: Arc<A>) -> Device {
        let space = register_memory_space(memory.clone());
        Device { space, memory }
    }

    /// The built-in CUDA space on the first GPU (device 0): buffers are allocated with
    /// `cuMemAlloc` through the driver the space loaded ([`cd_cuda::CudaMemory`]), and saved
    /// and restored with its copies. No copy functions, no `unsafe`.
    ///
    /// [`Error::Device`] when CUDA cannot be used, with the reason: the space is switched
    /// off (`CD_CUDA=0`), the driver library (`libcuda.so.1`, or `CD_CUDA_LIBRARY`) cannot be
    /// loaded, or it finds no GPU.
    pub fn cuda() -> Result<Device> {
        Device::cuda_device(0)
    }

    /// The built-in CUDA space on GPU `ordinal`; as [`cuda`](Self::cuda), and
    /// [`Error::Device`] if there is no such device.
    pub fn cuda_device(ordinal: usize) -> Result<Device> {
        let memory = CudaMemory::new(ordinal).map_err(|message| Error::Device {
            device: format!("cuda:{ordinal}"),
            message,
        })?;
        Ok(Device {
            space: memory.space(),
            memory: Arc::new(CudaAlloc(memory)),
        })
    }

    /// The memory space's id.
    pub fn space(&self) -> SpaceId {
        self.space
    }

    fn error(&self, message: String) -> Error {
        Error::Device {
            device: self.memory.name().to_owned(),
            message,
        }
    }

    /// Allocates a mapped region holding `bytes` and adds it to `cd` (READ_ONLY): the memory a
    /// [`DeviceKey`] names. Nothing is left behind on error.
    pub(crate) fn protect<T: Pod>(&self, cd: CdHandle, data: &[T]) -> Result<DeviceData> {
        let bytes = std::mem::size_of_val(data);
        let mut buffer = DeviceData {
            device: self.clone(),
            address: 0,
            len: data.len(),
            bytes,
        };
        if bytes == 0 {
            return Ok(buffer);
        }
        let address = self.memory.allocate(bytes).map_err(|e| self.error(e))?;
        if address == 0 {
            return Err(self.error("allocate returned the null address".to_owned()));
        }
        if let Err(e) = map_device_region(self.space, address, bytes) {
            self.memory.free(address, bytes);
            return Err(e.into());
        }
        // From here on, dropping `buffer` unmaps and frees the allocation.
        buffer.address = address;
        self.memory
            .copy_to_device(address, bytemuck::cast_slice(data))
            .map_err(|e| self.error(e))?;
        let spec = AddrSpec::new(address, bytes, Access::ReadOnly, Scope::Global);
        // SAFETY: the range is a mapped region of this space, which the runtime reads and
        // writes only through the space's copy functions; the tree keeps it allocated for as
        // long as any CD of the tree can name it.
        unsafe { add_to_cd_via_copy(cd, &[spec])? };
        Ok(buffer)
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("space", &self.space)
            .field("name", &self.memory.name())
            .finish()
    }
}

/// The CUDA space's allocations for the safe layer. Private, so that its safe
/// [`DeviceAlloc::free`] is only called by [`DeviceData`], after the unmap proved that no CD
/// names the memory.
struct CudaAlloc(CudaMemory);

impl DeviceMemory for CudaAlloc {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> std::result::Result<(), String> {
        self.0.copy_to_host(dst, src)
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> std::result::Result<(), String> {
        self.0.copy_to_device(dst, src)
    }
}

impl DeviceAlloc for CudaAlloc {
    fn allocate(&self, bytes: usize) -> std::result::Result<usize, String> {
        self.0.allocate(bytes)
    }

    fn free(&self, address: usize, _bytes: usize) {
        // SAFETY: only `DeviceData::drop` calls this, with its own allocation, once, after
        // `unmap_device_region` succeeded (no CD names it; a pending advance was settled by
        // the commit or delete that let go of it); `cuMemFree` waits for the device's work,
        // so a kernel or snapshot copy still queued on the memory finishes first. An error
        // (the device was reset) leaves nothing to free.
        let _ = unsafe { self.0.free(address) };
    }
}

/// A device allocation owned by a tree: unmapped and freed on drop.
pub(crate) struct DeviceData {
    device: Device,
    /// 0 when nothing was allocated (an empty buffer).
    address: usize,
    len: usize,
    bytes: usize,
}

impl DeviceData {
    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The spec of `range` (in elements), `None` when it holds no bytes.
    pub(crate) fn spec(&self, range: &Range<usize>, access: Access) -> Option<AddrSpec> {
        let size = self.bytes.checked_div(self.len).unwrap_or(0);
        let length = (range.end - range.start) * size;
        (length > 0).then(|| {
            AddrSpec::new(
                self.address + range.start * size,
                length,
                access,
                Scope::Global,
            )
        })
    }

    /// The spec of the whole buffer, to delete it from a CD.
    pub(crate) fn whole(&self) -> Option<AddrSpec> {
        self.spec(&(0..self.len), Access::ReadOnly)
    }

    /// The elements, copied to the host.
    pub(crate) fn download<T: Pod>(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        if self.bytes > 0 {
            self.device
                .memory
                .copy_to_host(bytemuck::cast_slice_mut(&mut out), self.address)
                .map_err(|e| self.device.error(e))?;
        }
        Ok(out)
    }

    /// Writes `values` at element `start` (the range was promoted first).
    pub(crate) fn upload<T: Pod>(&self, start: usize, values: &[T]) -> Result<()> {
        if let Some(spec) = self.spec(&(start..start + values.len()), Access::ReadWrite) {
            self.device
                .memory
                .copy_to_device(spec.address, bytemuck::cast_slice(values))
                .map_err(|e| self.device.error(e))?;
        }
        Ok(())
    }
}

impl Drop for DeviceData {
    fn drop(&mut self) {
        if self.address == 0 {
            return;
        }
        // The tree drops a buffer only once no CD names it, so the unmap succeeds; if it did
        // not, the region stays mapped and the memory allocated rather than reused under a CD.
        if unmap_device_region(self.address).is_ok() {
            self.device.memory.free(self.address, self.bytes);
        }
    }
}

/// The device address and length of a device buffer that a kernel may write: it was labelled
/// READ_WRITE, and the domain stays borrowed (no restore, advance or commit) while this lives.
pub struct DevicePtrMut<'a, T> {
    address: usize,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> DevicePtrMut<'_, T> {
    pub(crate) fn new(data: &DeviceData) -> Self {
        DevicePtrMut {
            address: data.address,
            len: data.len,
            _borrow: PhantomData,
        }
    }

    /// The device address of the first element (0 for an empty buffer).
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

impl<T> std::fmt::Debug for DevicePtrMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevicePtrMut({:#x}, {})", self.address, self.len)
    }
}

/// The device stream an asynchronous advance is ordered on ([`Domain::advance_async`]): its
/// snapshot sees the work queued on the stream before the call and none queued after.
///
/// For the built-in CUDA space this is a `CUstream` (a `cudaStream_t`). A stream is a raw
/// handle the runtime hands to the driver, so making one from a value is `unsafe`; the two
/// default streams are constants.
///
/// [`Domain::advance_async`]: crate::Domain::advance_async
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream(usize);

impl Stream {
    /// The legacy default stream (CUDA's `NULL` stream, 0): it waits for, and is waited for
    /// by, every blocking stream of the context.
    pub const DEFAULT: Stream = Stream(0);
    /// CUDA's per-thread default stream (`CU_STREAM_PER_THREAD`, `cudaStreamPerThread`).
    pub const PER_THREAD: Stream = Stream(2);

    /// A stream from its raw handle (a `CUstream` as an integer).
    ///
    /// # Safety
    /// `handle` is a live stream of the device that holds the CD's device buffers (or one of
    /// the default streams' handles) for the duration of the advance call that takes it.
    pub const unsafe fn from_raw(handle: usize) -> Stream {
        Stream(handle)
    }

    /// The raw handle.
    pub fn as_raw(self) -> usize {
        self.0
    }
}
