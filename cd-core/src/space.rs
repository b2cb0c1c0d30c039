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

/// Forgets the device region that starts at `address` (call it before freeing the memory).
///
/// Refused with [`CdError::RegionInUse`] while a live CD holds a range in the region: a range
/// added later at that address would be taken for host memory, and restoring the CD would
/// then write device memory from the CPU. The check sees every CD as it stands when the call
/// runs; unmapping a region while another thread adds or commits ranges in it is a race the
/// application must avoid, as it must avoid freeing the memory then.
pub fn unmap_device_region(address: usize) -> Result<()> {
    crate::callback::check()?;
    let region = |spaces: &Spaces| match spaces.regions.containing(address) {
        Some((s, e, &Region(space))) if s == address => Ok((e, space)),
        _ => Err(CdError::RegionNotFound(address)),
    };
    let (end, space) = region(&read())?;
    // No CD lock is taken while the space table is locked (restore holds CD locks and then
    // reads the table), so the CDs are checked first, one at a time.
    for node in crate::handle::live_nodes() {
        let state = node.lock();
        let held = state
            .entries
            .overlapping(address, end)
            .any(|(_, _, entry)| entry.space == space && entry.region == address);
        if held && node.is_live() {
            return Err(CdError::RegionInUse {
                address,
                cd: node.handle,
            });
        }
    }
    let mut spaces = write();
    let (end, _) = region(&spaces)?;
    spaces.regions.remove(address, end);
    let any = !spaces.regions.is_empty() || !spaces.recognising.is_empty();
    ANY_REGION.store(any, Ordering::Release);
    Ok(())
}

/// Tells the runtime that the application reset the device (`cudaDeviceReset`, a `cd_`
/// extension). Every advance in flight is dropped (its drain cannot complete: the CD stays at
/// its previous complete point), and every space forgets the streams, events, staging buffers
/// and host registrations the reset destroyed ([`DeviceMemory::device_reset`]).
///
/// Call it after the reset and after re-creating the application's allocations, before
/// [`remap_device_region`] or [`restore_cd`](crate::restore_cd). Two recipes:
/// - allocations made with the virtual-memory API (`cuMemAddressReserve`, `cuMemCreate`,
///   `cuMemMap`) whose reservation survives the reset: map new physical memory at the same
///   addresses, call this, then restore the CDs;
/// - other allocations (`cudaMalloc`, pools) come back at other addresses: call this, then
///   [`remap_device_region`] for each array (old address, new address, length), then restore.
///
/// A sticky error (an illegal address, a kernel trap) leaves the process's CUDA context
/// unusable, reset or not: the CDs in memory cannot be restored onto the GPU by this
/// process. Recovery then needs CDs persisted to storage (`storage_info` with `dir`), which a
/// new process restores after a restart.
pub fn device_reset() {
    for node in crate::handle::live_nodes() {
        let mut state = node.lock();
        state.pending = None;
        node.draining.store(false, Ordering::Release);
    }
    let devices: Vec<Arc<dyn DeviceMemory>> = read().devices.clone();
    for device in devices {
        device.device_reset();
    }
}

/// Moves every CD's device ranges in `from .. from + length` to the same offsets from `to`
/// (`cd_remap_device_region`): for arrays re-allocated at other addresses after a device
/// reset (see [`device_reset`] for the recipes). The saved bytes move with the ranges, so a
/// restore then writes the new arrays. Mapped regions (registered-callback spaces) starting
/// in the old range move too.
///
/// Refused, changing nothing ([`CdError::RemapRefused`]), when the two ranges overlap, a
/// range or mapped region crosses the old range's bounds, a CD already holds ranges at the
/// destination, or the destination is not device memory of the same space. Advances in
/// flight on the CDs concerned are dropped first (as by a restore). Like
/// [`unmap_device_region`], it sees the CDs as they stand when it runs: no other thread may
/// add to them meanwhile.
pub fn remap_device_region(from: usize, to: usize, length: usize) -> Result<()> {
    crate::callback::check()?;
    let refuse = |reason: &str| CdError::RemapRefused {
        from,
        to,
        reason: reason.to_owned(),
    };
    if length == 0 {
        return Err(CdError::ZeroLength { address: from });
    }
    let (Some(end), Some(to_end)) = (from.checked_add(length), to.checked_add(length)) else {
        return Err(CdError::AddressOverflow {
            address: from.max(to),
            length,
        });
    };
    if from < to_end && to < end {
        return Err(refuse("the old and new ranges overlap"));
    }
    if from == to {
        return Ok(());
    }
    let shift = |x: usize| x - from + to;
    let nodes = crate::handle::live_nodes();
    for node in &nodes {
        crate::advance::settle_or_drop(node);
    }
    let spaces = read();
    // Mapped regions in the old range move whole, into free space.
    let moved_regions: Vec<(usize, usize, SpaceId)> = spaces
        .regions
        .overlapping(from, end)
        .map(|(s, e, Region(space))| (s, e, space))
        .collect();
    if moved_regions.iter().any(|&(s, e, _)| s < from || e > end) {
        return Err(refuse(
            "a mapped device region crosses the old range's bounds",
        ));
    }
    if spaces.regions.overlapping(to, to_end).next().is_some() {
        return Err(refuse(
            "a device region is already mapped at the destination",
        ));
    }
    // A restore reads the table with CD locks held: no CD is locked here while the table is
    // locked for writing.
    drop(spaces);
    let location = |spaces: &Spaces, s: usize, e: usize, space: SpaceId, region: usize| {
        if moved_regions.iter().any(|&(rs, _, _)| rs == region) {
            return Ok(Location {
                space,
                region: shift(region),
            });
        }
        match recognised(spaces, shift(s), shift(e)) {
            Ok(at) if at.space == space => Ok(at),
            _ => Err(refuse(
                "the destination is not device memory of the same space, of the same length",
            )),
        }
    };
    // Check every CD first, so that a refusal changes nothing.
    for node in &nodes {
        let state = node.lock();
        for (s, e, entry) in state.entries.overlapping(from, end) {
            if entry.space == HOST {
                continue;
            }
            if s < from || e > end {
                return Err(refuse("a CD range crosses the old range's bounds"));
            }
            location(&read(), s, e, entry.space, entry.region)?;
        }
        if state.entries.overlapping(to, to_end).next().is_some() {
            return Err(refuse("a CD already holds ranges at the destination"));
        }
    }
    {
        let mut spaces = write();
        for &(s, e, space) in &moved_regions {
            spaces.regions.remove(s, e);
            spaces
                .regions
                .insert_uncovered(shift(s), shift(e), Region(space));
        }
    }
    for node in &nodes {
        let mut state = node.lock();
        let held: Vec<(usize, usize)> = state
            .entries
            .overlapping(from, end)
            .filter(|(_, _, entry)| entry.space != HOST)
            .map(|(s, e, _)| (s, e))
            .collect();
        for (s, e) in held {
            for (ps, pe, mut entry) in state.entries.remove(s, e) {
                let at = location(&read(), ps, pe, entry.space, entry.region)?;
                entry.region = at.region;
                state.entries.insert_uncovered(shift(ps), shift(pe), entry);
            }
            for (ds, de, segment) in state.data.remove(s, e) {
                state.data.insert_uncovered(shift(ds), shift(de), segment);
            }
            for add in state.adds.iter_mut() {
                if s <= add.start && add.end <= e {
                    (add.start, add.end) = (shift(add.start), shift(add.end));
                }
            }
        }
    }
    Ok(())
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
