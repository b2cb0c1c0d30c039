//! Memory spaces: application memory that the CPU cannot read directly, such as GPU memory.
//!
//! A GPU code registers its device copy functions once ([`register_memory_space`]) and maps the
//! address ranges of its device allocations to that space ([`map_device_region`]). From then on
//! any CD entry inside such a region is saved with the space's `copy_to_host` and restored with
//! its `copy_to_device` (cudaMemcpy-style functions), while the C API's `struct cd_addrspec`
//! stays exactly as the spec has it: the address alone says where the memory lives. Device
//! virtual addresses do not overlap host addresses under unified addressing, so this lookup is
//! unambiguous.
//!
//! A space may also recognise its own pointers ([`register_recognising_space`]): the built-in
//! CUDA space (crate `cd-cuda`) asks the driver for each address's allocation, so a GPU code
//! maps nothing. Either way, the region (mapped, or the allocation) is part of each entry's
//! label, and no entry or copy crosses a region boundary.

use crate::error::{CdError, Result};
use crate::interval::{IntervalMap, Piece};
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Identifies a memory space; [`HOST`] is ordinary memory.
pub type SpaceId = u32;

/// The space of ordinary host memory.
pub const HOST: SpaceId = 0;

/// Copy functions for one kind of device memory.
///
/// Addresses passed to these functions always lie inside a region mapped to this space with
/// [`map_device_region`]. Errors are reported as messages and turned into
/// [`CdError::DeviceCopy`].
pub trait DeviceMemory: Send + Sync {
    /// A short name for messages ("cuda:0", "simulated").
    fn name(&self) -> &str;
    /// Copies `dst.len()` bytes from device address `src` into `dst`.
    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> std::result::Result<(), String>;
    /// Copies `src` to device address `dst`.
    fn copy_to_device(&self, dst: usize, src: &[u8]) -> std::result::Result<(), String>;
    /// For a space that recognises its own pointers (the built-in CUDA space, registered with
    /// [`register_recognising_space`]): the device allocation `(start, length)` that holds
    /// `address`, or `None` when the address is not this space's memory. The allocation is
    /// the region: entries and copies never cross its bounds.
    fn allocation_of(&self, _address: usize) -> Option<(usize, usize)> {
        None
    }
    /// The store mapped a large host buffer at `address .. address + length`: a space may
    /// note it and pin it (once, lazily) so that copies into it run at the link's speed.
    fn host_buffer_mapped(&self, _address: usize, _length: usize) {}
    /// The store is about to unmap a buffer announced by
    /// [`host_buffer_mapped`](Self::host_buffer_mapped): unpin it if it was pinned.
    fn host_buffer_unmapped(&self, _address: usize, _length: usize) {}
    /// The application reset the device (`cudaDeviceReset`): the streams, events, staging
    /// buffers and host registrations the space held are gone; it must forget them (not
    /// release them) and make new ones on next use. See [`crate::device_reset`].
    fn device_reset(&self) {}
    /// Starts an asynchronous copy of device ranges to the host, for
    /// [`advance_cd_point_in_time_async`](crate::advance_cd_point_in_time_async): each
    /// [`DrainCopy`] names a device source and a host destination. The space snapshots the
    /// sources now, ordered after the work already queued on `stream` (a stream of the
    /// device's API, 0 for its default stream), and copies the snapshot to the host in the
    /// background. `Ok(None)` means it cannot (no spare device memory, not supported): the
    /// caller then copies synchronously. The default is `Ok(None)`.
    ///
    /// # Safety
    /// Every destination must stay allocated and be neither read nor written by anyone until
    /// the returned [`Drain`] has reported completion or has been dropped.
    unsafe fn begin_drain(
        &self,
        _copies: &[DrainCopy],
        _stream: usize,
    ) -> std::result::Result<Option<Box<dyn Drain>>, String> {
        Ok(None)
    }
    /// For a differential advance (module `delta`): the space's checksums of the `len` bytes
    /// at device address `src` now, which cd-core keeps with the saved copy it makes of them
    /// and hands back to [`changes`](Self::changes) at the range's next advance. `Ok(None)`
    /// (the default): the space has no differential copy (or it is switched off), and the
    /// range is copied whole at every advance.
    fn block_sums(
        &self,
        _src: usize,
        _len: usize,
    ) -> std::result::Result<Option<SavedSums>, String> {
        Ok(None)
    }
    /// What changed in the `len` bytes at `src` since a saved copy of them whose checksums are
    /// `saved` (from [`block_sums`](Self::block_sums) or an earlier `changes` of this range):
    /// the changed blocks, brought to the host, or [`Changes::Whole`] to copy the range whole.
    /// Nothing of cd-core's is written: the advance applies the patch only once every range
    /// of the CD is ready. No one writes the range during the call. The default:
    /// `Whole(None)`.
    fn changes(
        &self,
        _src: usize,
        _len: usize,
        _saved: &(dyn Any + Send + Sync),
    ) -> std::result::Result<Changes, String> {
        Ok(Changes::Whole(None))
    }
}

/// A device space's checksums of the saved copy of one device range
/// ([`DeviceMemory::block_sums`]): opaque to cd-core, which keeps them with the saved bytes
/// and hands them back to [`DeviceMemory::changes`] at the range's next advance.
pub type SavedSums = Box<dyn Any + Send + Sync>;

/// What changed in a device range since its saved copy ([`DeviceMemory::changes`]).
pub enum Changes {
    /// Copy the range whole (too much changed, the checksums are not of this range, the
    /// differential copy is off), with the range's checksums now where the space has them.
    Whole(Option<SavedSums>),
    /// Only the blocks of the patch changed.
    Blocks(BlockPatch),
}

/// The changed blocks of a device range, brought to the host ([`Changes::Blocks`]). The
/// advance checks it against the range (a malformed patch is an error that changes nothing)
/// before it writes it into the saved copy.
pub struct BlockPatch {
    /// The block size in bytes: block `k` is bytes `k * block .. (k + 1) * block` of the
    /// range, the last one short when the range's length is not a multiple of it.
    pub block: usize,
    /// The indices of the changed blocks, ascending.
    pub changed: Vec<u64>,
    /// The changed blocks packed in that order (block `changed[j]` at `j * block`): any
    /// bytes, e.g. a `Vec<u8>`, or a [`StoreBytes`](crate::StoreBytes) (store memory, which a
    /// device space pins, so the transfer into it runs at the link's speed).
    pub data: Box<dyn AsRef<[u8]> + Send>,
    /// The range's checksums now.
    pub sums: SavedSums,
}

impl BlockPatch {
    /// The changed blocks' bytes, packed.
    pub fn bytes(&self) -> &[u8] {
        (*self.data).as_ref()
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Changes::Whole(sums) => write!(f, "Whole(sums: {})", sums.is_some()),
            Changes::Blocks(p) => write!(
                f,
                "Blocks({} of {} B, {} B)",
                p.changed.len(),
                p.block,
                p.bytes().len()
            ),
        }
    }
}

/// One range of an asynchronous device-to-host copy ([`DeviceMemory::begin_drain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrainCopy {
    /// The device address copied from.
    pub device: usize,
    /// The host address copied to.
    pub host: *mut u8,
    /// Bytes.
    pub length: usize,
}

/// An asynchronous device-to-host copy in flight ([`DeviceMemory::begin_drain`]).
///
/// Dropping it must not return before the copies have stopped writing their host
/// destinations (wait for them, or for the device to fail), and must release whatever device
/// memory the snapshot took.
pub trait Drain: Send {
    /// Whether every copy has completed, without waiting.
    fn is_complete(&mut self) -> std::result::Result<bool, String>;
    /// Waits until every copy has completed.
    fn wait(&mut self) -> std::result::Result<(), String>;
}

/// Where an address range lives: host memory, or one device region of a space.
///
/// CD entries carry it, and two entries merge only when their locations are equal, so an entry
/// never spans two device regions: adjacent allocations (`cudaMalloc` places equal-sized
/// arrays back to back), or one allocation mapped as two regions, stay separate entries, and
/// every range handed to a copy function lies inside one region.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Location {
    /// The memory space ([`HOST`] for host memory).
    pub space: SpaceId,
    /// The start of the device region that holds the range (0 for host memory).
    pub region: usize,
}

impl Location {
    /// Host memory.
    pub const HOST: Location = Location {
        space: HOST,
        region: 0,
    };
}

/// A mapped region's space; regions never merge, so each can be unmapped by its start.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Region(SpaceId);

impl Piece for Region {
    fn skip(&self, _: usize) -> Self {
        *self
    }
    fn continues(&self, _: usize, _: &Self) -> bool {
        false
    }
}

#[derive(Default)]
struct Spaces {
    /// Index `i` holds space `i + 1`.
    devices: Vec<Arc<dyn DeviceMemory>>,
    regions: IntervalMap<Region>,
    /// Spaces that recognise their own pointers ([`DeviceMemory::allocation_of`]).
    recognising: Vec<SpaceId>,
}

static SPACES: RwLock<Spaces> = RwLock::new(Spaces {
    devices: Vec::new(),
    regions: IntervalMap::EMPTY,
    recognising: Vec::new(),
});
/// Whether any region is mapped or any space recognises pointers: lets host-only programs
/// skip the lookup.
static ANY_REGION: AtomicBool = AtomicBool::new(false);

fn read() -> std::sync::RwLockReadGuard<'static, Spaces> {
    SPACES.read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> std::sync::RwLockWriteGuard<'static, Spaces> {
    SPACES.write().unwrap_or_else(|e| e.into_inner())
}

/// Registers a kind of device memory and returns its id.
pub fn register_memory_space(device: Arc<dyn DeviceMemory>) -> SpaceId {
    let mut spaces = write();
    spaces.devices.push(device);
    SpaceId::try_from(spaces.devices.len()).expect("fewer than 2^32 memory spaces")
}

/// Registers a kind of device memory that recognises its own pointers
/// ([`DeviceMemory::allocation_of`]): ranges in its allocations need no
/// [`map_device_region`]. Mapped regions are looked up first.
pub fn register_recognising_space(device: Arc<dyn DeviceMemory>) -> SpaceId {
    let mut spaces = write();
    spaces.devices.push(device);
    let id = SpaceId::try_from(spaces.devices.len()).expect("fewer than 2^32 memory spaces");
    spaces.recognising.push(id);
    ANY_REGION.store(true, Ordering::Release);
    id
}

/// Tells every space that the store mapped a large host buffer.
pub(crate) fn host_buffer_mapped(address: usize, length: usize) {
    for device in read().devices.iter() {
        device.host_buffer_mapped(address, length);
    }
}

/// Tells every space that the store is about to unmap a buffer.
pub(crate) fn host_buffer_unmapped(address: usize, length: usize) {
    for device in read().devices.iter() {
        device.host_buffer_unmapped(address, length);
    }
}

/// Declares that `address .. address + length` is device memory of `space`.
pub fn map_device_region(space: SpaceId, address: usize, length: usize) -> Result<()> {
    let end = crate::types::AddrSpec::new(
        address,
        length,
        crate::Access::ReadOnly,
        crate::Scope::Global,
    )
    .end()?;
    if length == 0 {
        return Err(CdError::ZeroLength { address });
    }
    let mut spaces = write();
    if space == HOST || space as usize > spaces.devices.len() {
        return Err(CdError::UnknownMemorySpace(space));
    }
    if !spaces.regions.gaps(address, end).eq(&[(address, end)]) {
        return Err(CdError::RegionOverlap { address, length });
    }
    spaces.regions.insert_uncovered(address, end, Region(space));
    ANY_REGION.store(true, Ordering::Release);
    Ok(())
}

/// The end and space of the mapped region that starts at `address`.
pub(crate) fn region_at(address: usize) -> Result<(usize, SpaceId)> {
    region_in(&read(), address)
}

fn region_in(spaces: &Spaces, address: usize) -> Result<(usize, SpaceId)> {
    match spaces.regions.containing(address) {
        Some((s, e, &Region(space))) if s == address => Ok((e, space)),
        _ => Err(CdError::RegionNotFound(address)),
    }
}

/// Removes the mapped region that starts at `address` (see
/// [`unmap_device_region`](crate::unmap_device_region)).
pub(crate) fn remove_region(address: usize) -> Result<()> {
    let mut spaces = write();
    let (end, _) = region_in(&spaces, address)?;
    spaces.regions.remove(address, end);
    let any = !spaces.regions.is_empty() || !spaces.recognising.is_empty();
    ANY_REGION.store(any, Ordering::Release);
    Ok(())
}

/// Tells every space that the application reset the device.
pub(crate) fn reset_devices() {
    let devices: Vec<Arc<dyn DeviceMemory>> = read().devices.clone();
    for device in devices {
        device.device_reset();
    }
}

/// The mapped regions in `from .. end` that a remap to `to .. to_end` moves, each whole; or
/// why the remap is refused. Both checks see one state of the table. The destination may
/// overlap the old range: only regions that do not move with the remap are in its way.
pub(crate) fn regions_to_move(
    from: usize,
    end: usize,
    to: usize,
    to_end: usize,
) -> std::result::Result<Vec<(usize, usize, SpaceId)>, &'static str> {
    let spaces = read();
    let moved: Vec<(usize, usize, SpaceId)> = spaces
        .regions
        .overlapping(from, end)
        .map(|(s, e, Region(space))| (s, e, space))
        .collect();
    if moved.iter().any(|&(s, e, _)| s < from || e > end) {
        return Err("a mapped device region crosses the old range's bounds");
    }
    let moves = |s: usize| moved.iter().any(|&(m, _, _)| m == s);
    if spaces
        .regions
        .overlapping_raw(to, to_end)
        .any(|(s, _, _)| !moves(s))
    {
        return Err("a device region is already mapped at the destination");
    }
    Ok(moved)
}

/// Moves mapped regions (from [`regions_to_move`]) by `shift`: all removed first, then all
/// inserted, since a region's new place may overlap its own or another's old place.
pub(crate) fn move_regions(moved: &[(usize, usize, SpaceId)], shift: impl Fn(usize) -> usize) {
    let mut spaces = write();
    for &(s, e, _) in moved {
        spaces.regions.remove(s, e);
    }
    for &(s, e, space) in moved {
        spaces
            .regions
            .insert_uncovered(shift(s), shift(e), Region(space));
    }
}

/// The space and region that hold all of `start .. end`, from the spaces that recognise their
/// own pointers and the mapped regions (not the host fallback of [`space_of`]).
pub(crate) fn recognised_at(start: usize, end: usize) -> Result<Location> {
    recognised(&read(), start, end)
}

/// The space and region that hold all of `start .. end`.
pub(crate) fn space_of(start: usize, end: usize) -> Result<Location> {
    if !ANY_REGION.load(Ordering::Acquire) {
        return Ok(Location::HOST);
    }
    let spaces = read();
    let first = spaces.regions.overlapping(start, end).next();
    match first {
        None => recognised(&spaces, start, end),
        // One region must hold the whole range: a device copy cannot span two allocations.
        Some((s, e, Region(space))) if s == start && e == end => Ok(Location {
            space,
            region: region_start(&spaces.regions, start),
        }),
        _ => Err(straddle(start, end)),
    }
}

/// The location of `start .. end`, outside every mapped region, as the recognising spaces
/// see it: host memory, or one allocation of one of them.
fn recognised(spaces: &Spaces, start: usize, end: usize) -> Result<Location> {
    for &space in &spaces.recognising {
        let device = &spaces.devices[space as usize - 1];
        if let Some((base, length)) = device.allocation_of(start) {
            if end - base > length {
                return Err(straddle(start, end));
            }
            return Ok(Location {
                space,
                region: base,
            });
        }
        // A range that starts in host memory must not end in device memory either.
        if device.allocation_of(end - 1).is_some() {
            return Err(straddle(start, end));
        }
    }
    Ok(Location::HOST)
}

/// The start of the mapped region that holds `address`.
fn region_start(regions: &IntervalMap<Region>, address: usize) -> usize {
    regions
        .containing(address)
        .map_or(address, |(start, _, _)| start)
}

fn straddle(start: usize, end: usize) -> CdError {
    CdError::StraddlesMemorySpace {
        address: start,
        length: end - start,
    }
}

/// The copy functions of a device space.
pub(crate) fn device(space: SpaceId) -> Result<Arc<dyn DeviceMemory>> {
    let index = space
        .checked_sub(1)
        .ok_or(CdError::UnknownMemorySpace(space))?;
    read()
        .devices
        .get(index as usize)
        .cloned()
        .ok_or(CdError::UnknownMemorySpace(space))
}
