//! Device memory through the safe layer: typed buffers allocated in a registered memory space.
//!
//! The raw layer protects device memory given by address ([`cd_core::register_memory_space`],
//! [`cd_core::map_device_region`], then `unsafe` adds). Here the domain allocates the buffer
//! itself through a [`DeviceAlloc`], maps it, fills it and adds it, and frees it only once no
//! CD can name it, exactly as it does for host buffers: the program holds a [`DeviceKey`] and
//! reaches the memory through the domain — [`upload`](crate::Domain::upload_device),
//! [`download`](crate::Domain::download_device), or [`device_mut`](crate::Domain::device_mut)
//! for the address a kernel works on.
//!
//! The runtime reads and writes device memory only through the space's copy functions, never
//! from the CPU, so none of this needs `unsafe`. What the borrow checker cannot see is a kernel
//! still running on the device: synchronise the device before a restore or an advance, as the
//! spec's GPU example does.

use crate::error::{Error, Result};
use crate::tree::{check_range, Data, Slot, SlotId};
use bytemuck::Pod;
use cd_core::{
    add_to_cd_via_copy, map_device_region, register_memory_space, unmap_device_region, Access,
    AddrSpec, CdHandle, DeviceMemory, Scope, SpaceId,
};
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

    fn spec(&self, range: &Range<usize>, access: Access) -> Option<AddrSpec> {
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

/// The device view of a slot.
pub(crate) fn data(slot: &Slot, id: SlotId) -> Result<&DeviceData> {
    match &slot.data {
        Data::Device(d) => Ok(d),
        Data::Host(_) => Err(Error::ForeignKey {
            key: id.to_string(),
        }),
    }
}

/// The elements of a device buffer, copied to the host.
pub(crate) fn download<T: Pod>(slot: &Slot, id: SlotId) -> Result<Vec<T>> {
    let d = data(slot, id)?;
    let mut out = vec![T::zeroed(); d.len];
    if d.bytes > 0 {
        d.device
            .memory
            .copy_to_host(bytemuck::cast_slice_mut(&mut out), d.address)
            .map_err(|e| d.device.error(e))?;
    }
    Ok(out)
}

/// Labels `range` READ_WRITE in `cd` (a promotion, or a copy now if `cd` does not hold it).
pub(crate) fn promote(
    slot: &mut Slot,
    id: SlotId,
    range: Range<usize>,
    cd: CdHandle,
) -> Result<()> {
    let d = data(slot, id)?;
    check_range(id, &range, d.len)?;
    if let Some(spec) = d.spec(&range, Access::ReadWrite) {
        // SAFETY: as in `Device::protect`: a mapped region the tree keeps allocated, reached
        // only through the space's copy functions.
        unsafe { add_to_cd_via_copy(cd, &[spec])? };
        crate::tree::Tree::mark_held(slot, cd);
    }
    Ok(())
}

/// Writes `values` at element `start` (after [`promote`]).
pub(crate) fn upload<T: Pod>(slot: &Slot, id: SlotId, start: usize, values: &[T]) -> Result<()> {
    let d = data(slot, id)?;
    if let Some(spec) = d.spec(&(start..start + values.len()), Access::ReadWrite) {
        d.device
            .memory
            .copy_to_device(spec.address, bytemuck::cast_slice(values))
            .map_err(|e| d.device.error(e))?;
    }
    Ok(())
}

/// The spec of a whole device buffer, to delete it from a CD.
pub(crate) fn whole(slot: &Slot, id: SlotId) -> Result<Option<AddrSpec>> {
    let d = data(slot, id)?;
    Ok(d.spec(&(0..d.len), Access::ReadOnly))
}

/// The device address and length of a device buffer that a kernel may write: it was labelled
/// READ_WRITE, and the domain stays borrowed (no restore, advance or commit) while this lives.
pub struct DevicePtrMut<'a, T> {
    address: usize,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> DevicePtrMut<'_, T> {
    pub(crate) fn new(slot: &Slot, id: SlotId) -> Result<Self> {
        let d = data(slot, id)?;
        Ok(DevicePtrMut {
            address: d.address,
            len: d.len,
            _borrow: PhantomData,
        })
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
