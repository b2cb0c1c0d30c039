//! The device operations that reach every CD: [`unmap_device_region`], [`device_reset`] and
//! [`remap_device_region`].
//!
//! The table of memory spaces and regions (`space`) sits below the store and the nodes, which
//! look addresses up in it; these three operations also walk the live CDs through the
//! registry, so they live here, above it, and `space` imports neither the registry nor any
//! operation. Lock order: CD locks and the space table are never held at the same time here
//! (a restore holds CD locks and then reads the table).

use crate::advance::settle_or_drop;
use crate::callback;
use crate::error::{CdError, Result};
use crate::registry;
use crate::space::{self, Location, SpaceId, HOST};
use std::sync::atomic::Ordering;

/// Forgets the device region that starts at `address` (call it before freeing the memory).
///
/// Refused with [`CdError::RegionInUse`] while a live CD holds a range in the region: a range
/// added later at that address would be taken for host memory, and restoring the CD would
/// then write device memory from the CPU. The check sees every CD as it stands when the call
/// runs; unmapping a region while another thread adds or commits ranges in it is a race the
/// application must avoid, as it must avoid freeing the memory then.
pub fn unmap_device_region(address: usize) -> Result<()> {
    callback::check()?;
    let (end, space) = space::region_at(address)?;
    // No CD lock is taken while the space table is locked (restore holds CD locks and then
    // reads the table), so the CDs are checked first, one at a time.
    for node in registry::live_nodes() {
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
    space::remove_region(address)
}

/// Tells the runtime that the application reset the device (`cudaDeviceReset`, a `cd_`
/// extension). Every advance in flight is dropped (its drain cannot complete: the CD stays at
/// its previous complete point), and every space forgets the streams, events, staging buffers
/// and host registrations the reset destroyed
/// ([`DeviceMemory::device_reset`](crate::DeviceMemory::device_reset)).
///
/// Call it after the reset and after re-creating the application's allocations, before
/// [`remap_device_region`] or [`restore_cd`](crate::restore_cd). Two recipes:
/// - allocations made with the virtual-memory API (`cuMemAddressReserve`, `cuMemCreate`,
///   `cuMemMap`) whose reservation survives the reset: map new physical memory at the same
///   addresses, call this, then restore the CDs;
/// - other allocations (`cudaMalloc`, pools) come back wherever the driver puts them (often
///   at the old address): call this, then [`remap_device_region`] for each array (old
///   address, new address, length; the same address is fine), then restore.
///
/// A sticky error (an illegal address, a kernel trap) leaves the process's CUDA context
/// unusable, reset or not: the CDs in memory cannot be restored onto the GPU by this
/// process. Recovery then needs CDs persisted to storage (`storage_info` with `dir`), which a
/// new process restores after a restart.
pub fn device_reset() {
    for node in registry::live_nodes() {
        let mut state = node.lock();
        state.pending = None;
        node.draining.store(false, Ordering::Release);
    }
    space::reset_devices();
}

/// Moves every CD's device ranges in `from .. from + length` to the same offsets from `to`
/// (`cd_remap_device_region`): for arrays re-allocated after a device reset (see
/// [`device_reset`] for the recipes). The saved bytes move with the ranges, so a restore then
/// writes the new arrays. Mapped regions (registered-callback spaces) starting in the old
/// range move too.
///
/// The driver may hand the old address back (a real one did, after
/// `cuDevicePrimaryCtxReset`), so the new range may be the old one or overlap it:
/// - `from == to`: nothing moves; the call checks that every CD range there is device memory
///   of its space again and takes its region from the allocation now there (which may be
///   larger than the old one and start before it), so the recipe works at any address. A
///   range that crosses the bounds is taken whole (one array remapped onto itself may have
///   joined its neighbour's range when both now lie in one new allocation);
/// - partly overlapping ranges: every range moves by the same `to - from` at once (one range
///   may land where another was), under the same rules as a move to a disjoint range.
///
/// Refused, changing nothing ([`CdError::RemapRefused`]), when a range or mapped region
/// crosses the old range's bounds, a CD holds ranges in the destination that do not move with
/// this call, a mapped region lies in the destination that does not move with it, or a range
/// would not land whole in device memory of the same space (one allocation). Advances in
/// flight on the CDs concerned are dropped first (as by a restore). Like
/// [`unmap_device_region`], it sees the CDs as they stand when it runs: no other thread may
/// add to them meanwhile.
pub fn remap_device_region(from: usize, to: usize, length: usize) -> Result<()> {
    callback::check()?;
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
    let nodes = registry::live_nodes();
    for node in &nodes {
        settle_or_drop(node);
    }
    if from == to {
        return relabel_in_place(&nodes, from, end).map_err(&refuse);
    }
    let shift = |x: usize| x - from + to;
    // Mapped regions in the old range move whole, into free space. A restore reads the table
    // with CD locks held: no CD is locked here while the table is locked.
    let moved_regions = space::regions_to_move(from, end, to, to_end).map_err(refuse)?;
    let location = |s: usize, e: usize, space: SpaceId, region: usize| {
        if moved_regions.iter().any(|&(rs, _, _)| rs == region) {
            return Ok(Location {
                space,
                region: shift(region),
            });
        }
        match space::recognised_at(shift(s), shift(e)) {
            Ok(at) if at.space == space => Ok(at),
            _ => Err(refuse(
                "the destination is not device memory of the same space, of the same length",
            )),
        }
    };
    // Check every CD first, so that a refusal changes nothing.
    for node in &nodes {
        let state = node.lock();
        // Unclipped: an entry that only begins or ends inside the old range crosses it.
        for (s, e, entry) in state.entries.overlapping_raw(from, end) {
            if entry.space == HOST {
                continue;
            }
            if s < from || e > end {
                return Err(refuse("a CD range crosses the old range's bounds"));
            }
            location(s, e, entry.space, entry.region)?;
        }
        // The ranges that move with this call may lie in the destination (an overlapping or
        // same-address move); any other range there would be overwritten.
        let stays = |s: usize, e: usize, space: SpaceId| space == HOST || s < from || e > end;
        if state
            .entries
            .overlapping_raw(to, to_end)
            .any(|(s, e, entry)| stays(s, e, entry.space))
        {
            return Err(refuse("a CD already holds ranges at the destination"));
        }
    }
    space::move_regions(&moved_regions, shift);
    for node in &nodes {
        let mut state = node.lock();
        let held: Vec<(usize, usize)> = state
            .entries
            .overlapping(from, end)
            .filter(|(_, _, entry)| entry.space != HOST)
            .map(|(s, e, _)| (s, e))
            .collect();
        // Everything is taken out first and put back shifted after: with overlapping ranges
        // one range's new place may be another's old one.
        let (mut entries, mut data) = (Vec::new(), Vec::new());
        for &(s, e) in &held {
            entries.extend(state.entries.remove(s, e));
            data.extend(state.data.remove(s, e));
        }
        for (ps, pe, mut entry) in entries {
            let at = location(ps, pe, entry.space, entry.region)?;
            entry.region = at.region;
            state.entries.insert_uncovered(shift(ps), shift(pe), entry);
        }
        for (ds, de, segment) in data {
            state.data.insert_uncovered(shift(ds), shift(de), segment);
        }
        for add in state.adds.iter_mut() {
            if held.iter().any(|&(s, e)| s <= add.start && add.end <= e) {
                (add.start, add.end) = (shift(add.start), shift(add.end));
            }
        }
    }
    Ok(())
}

/// `remap_device_region` onto the same range: every device range of a CD that meets
/// `from .. end` (whole) must lie in one region of its space as the table and the spaces see
/// it now; its region is updated to that one. Checked for every CD first, so that a refusal
/// changes nothing.
fn relabel_in_place(
    nodes: &[std::sync::Arc<crate::node::Node>],
    from: usize,
    end: usize,
) -> std::result::Result<(), &'static str> {
    let mut changes = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        let state = node.lock();
        for (s, e, entry) in state.entries.overlapping_raw(from, end) {
            if entry.space == HOST {
                continue;
            }
            match space::space_of(s, e) {
                Ok(at) if at.space == entry.space => {
                    if at.region != entry.region {
                        changes.push((n, s, e, at.region));
                    }
                }
                _ => return Err(
                    "the destination is not device memory of the same space, of the same length",
                ),
            }
        }
    }
    for (n, s, e, region) in changes {
        nodes[n]
            .lock()
            .entries
            .update(s, e, |entry| entry.region = region);
    }
    Ok(())
}
