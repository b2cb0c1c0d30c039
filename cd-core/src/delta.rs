//! The differential advance (issue 26): a device range that the last advance saved is brought
//! up to date by copying only the blocks that changed since, written into its saved copy.
//!
//! # How
//! A space with a differential copy (the built-in CUDA space) checksums fixed blocks of a
//! device range on the device ([`DeviceMemory::block_sums`]). A synchronous advance that saves
//! such a range anew copies it whole into a buffer of its own and keeps the checksums in that
//! buffer (`Buffer::sums`: they go wherever the bytes go, and whatever replaces the bytes drops
//! them). At the range's next advance the space compares its checksums now with those
//! ([`DeviceMemory::changes`]) and brings over only the changed blocks, gathered on the device
//! ([`BlockPatch`]); the advance writes them into that same buffer. So a loop that changes 1%
//! of a large array between advances moves 1% of it, and keeps one buffer per range: no fresh
//! buffer, no copy of the unchanged bytes.
//!
//! # All or nothing
//! A saved copy is overwritten in place only when nothing can fail any more and nobody else
//! can see it:
//! - every fallible step comes first, holding only the CD's busy flag (as every advance
//!   stages, see `advance`): the space's checksums, gather and transfer, the check of each
//!   patch against its range, the fresh buffers of the ranges copied whole ([`stage`]). A
//!   failure there drops the patches unwritten: the previous point is intact and restores.
//! - the patches are written at the swap, with the parent and the CD locked, after the last
//!   fallible check of the swap ([`claim`]): copying checked bytes into a buffer cannot fail.
//! - a buffer is patched only when this CD's saved bytes of the range are exactly that buffer
//!   and nobody else holds it: not the parent (the implicit commit shares a child's segments
//!   with its parent where the parent has no entry for them, so then the range is copied
//!   whole into a fresh buffer the parent does not get), not a restore or a persistence layer
//!   reading it. Checked when the advance chooses, under the locks, and again at the swap,
//!   where the buffer's reference count is exact: with the CD locked, nobody can take a new
//!   reference to a buffer that only the CD and the advance hold. If the check fails at the
//!   swap, the advance stages again, as when its ranges changed meanwhile.
//!
//! # When a range is copied whole
//! Its first advance; an advance after its saved bytes came from anywhere else (an add, an
//! asynchronous advance, a buffer shared with the parent or packed with other ranges); a range
//! that moved or changed size (the space's checksums name the range); and whenever the space
//! answers [`Changes::Whole`] (most blocks changed, the switch `CD_CUDA_DIFF=0`). A space
//! without checksums (`block_sums` gives `None`: registered-callback spaces, the switch off)
//! has its ranges packed into one buffer with the host ranges, as before.
//!
//! The asynchronous advance copies whole: its drain fills a fresh buffer while the
//! application runs on, and its point becomes current later, when the saved copy to patch
//! may be in use by anyone; the next synchronous advance copies such a range whole, then
//! patches.

use crate::callback;
use crate::copy;
use crate::error::{CdError, Result};
use crate::fault;
use crate::node::State;
use crate::space::{self, BlockPatch, Changes, SpaceId, HOST};
use crate::stats::Stats;
use crate::store::{Buffer, Segment};
use crate::types::Scope;
use std::sync::Arc;

/// A range an advance saves: start, end, space.
pub(crate) type Target = (usize, usize, SpaceId);

/// Where the new bytes of one target are, once staged.
pub(crate) enum Save {
    /// In the packed buffer, at this offset.
    Packed(usize),
    /// In a buffer of its own, with the space's checksums.
    Own(Arc<Buffer>),
    /// In the saved copy `base`, once `patch` is written into it at the swap.
    Patch {
        base: Arc<Buffer>,
        patch: BlockPatch,
    },
}

/// An advance's new bytes: one [`Save`] per target, in order, and the buffer of the packed
/// ones.
pub(crate) struct Staged {
    saves: Vec<Save>,
    packed: Option<Arc<Buffer>>,
}

/// For each target, the saved copy the advance may patch, if any (see [`patchable`]); called
/// with the parent and the CD locked.
pub(crate) fn bases(
    parent: Option<&State>,
    state: &State,
    targets: &[Target],
) -> Vec<Option<Arc<Buffer>>> {
    targets
        .iter()
        .map(|&(s, e, space)| {
            (space != HOST)
                .then(|| patchable(parent, state, s, e, 0).map(Arc::clone))
                .flatten()
        })
        .collect()
}

/// The buffer holding exactly the CD's saved bytes of `s .. e`, with checksums, when the only
/// references to it are the CD's segments and `extra` more (the advance's own), and the
/// implicit commit into the parent will not share it (the parent has entries over all of
/// `s .. e`, or no GLOBAL entry of the CD lies there).
fn patchable<'a>(
    parent: Option<&State>,
    state: &'a State,
    s: usize,
    e: usize,
    extra: usize,
) -> Option<&'a Arc<Buffer>> {
    let mut pieces = state.data.overlapping_raw(s, e);
    let (start, mut end, first) = pieces.next()?;
    let (buffer, 0) = first.buffer() else {
        return None;
    };
    if start != s || buffer.as_slice().len() != e - s || buffer.sums.is_none() {
        return None;
    }
    let mut references = 1;
    for (ps, pe, segment) in pieces {
        let (b, offset) = segment.buffer();
        if ps != end || !Arc::ptr_eq(b, buffer) || offset != ps - s {
            return None;
        }
        references += 1;
        end = pe;
    }
    if end != e || Arc::strong_count(buffer) != references + extra {
        return None;
    }
    let shared_up = parent.is_some_and(|p| !p.entries.gaps(s, e).is_empty())
        && state
            .entries
            .overlapping_raw(s, e)
            .any(|(_, _, entry)| entry.scope == Scope::Global);
    (!shared_up).then_some(buffer)
}

/// Stages the new bytes of `targets` (step 2 of an advance: no lock held): the patches of the
/// ranges with a base (`bases`), device ranges whose space has checksums each whole into a
/// buffer of its own, the rest packed into one fresh buffer. Nothing of the CD is touched.
///
/// # Safety
/// Every host range must be readable and not written during the call.
pub(crate) unsafe fn stage(targets: &[Target], bases: Vec<Option<Arc<Buffer>>>) -> Result<Staged> {
    let mut saves = Vec::with_capacity(targets.len());
    let mut packed_len = 0;
    for (&(s, e, space), base) in targets.iter().zip(bases) {
        let save = if space == HOST {
            None
        } else {
            // SAFETY: device memory; the caller's promise covers the rest.
            unsafe { device_save(s, e, space, base)? }
        };
        saves.push(save.unwrap_or_else(|| {
            packed_len += e - s;
            Save::Packed(packed_len - (e - s))
        }));
    }
    let packed = if packed_len == 0 {
        None
    } else {
        let mut buffer = Buffer::new(packed_len)?;
        for (&(s, e, space), save) in targets.iter().zip(&saves) {
            if let &Save::Packed(at) = save {
                let dst = &mut buffer.as_mut_slice()[at..at + (e - s)];
                // SAFETY: forwarded from the caller.
                unsafe { copy::read_app(dst, s, space)? };
            }
        }
        Some(Arc::new(buffer))
    };
    Ok(Staged { saves, packed })
}

/// The save of device range `s .. e`: its patch against `base`, or the whole range in a buffer
/// of its own with the space's checksums; `None` when the space has none (pack it).
///
/// # Safety
/// `s .. e` is device memory of `space`.
unsafe fn device_save(
    s: usize,
    e: usize,
    space: SpaceId,
    base: Option<Arc<Buffer>>,
) -> Result<Option<Save>> {
    let device = space::device(space)?;
    let failed = |message: String| CdError::DeviceCopy {
        space: device.name().to_owned(),
        message,
    };
    let len = e - s;
    let sums = match base {
        Some(base) => {
            let Some(saved) = base.sums.as_deref() else {
                return Ok(None);
            };
            match callback::guard(|| device.changes(s, len, saved)).map_err(failed)? {
                Changes::Blocks(patch) => {
                    check(&patch, len).map_err(failed)?;
                    let bytes = patch.bytes().len();
                    if fault::copy_limit(bytes) < bytes {
                        return Err(CdError::InjectedFault("copy failed half-way"));
                    }
                    return Ok(Some(Save::Patch { base, patch }));
                }
                Changes::Whole(sums) => sums,
            }
        }
        None => callback::guard(|| device.block_sums(s, len)).map_err(failed)?,
    };
    let Some(sums) = sums else {
        return Ok(None);
    };
    let mut buffer = Buffer::new(len)?;
    // SAFETY: device memory (the caller's promise); `read_app` asks the space to copy it.
    unsafe { copy::read_app(buffer.as_mut_slice(), s, space)? };
    buffer.sums = Some(sums);
    Ok(Some(Save::Own(Arc::new(buffer))))
}

/// Checks a space's patch against a range of `len` bytes: blocks in range, ascending, and
/// exactly their bytes.
fn check(patch: &BlockPatch, len: usize) -> std::result::Result<(), String> {
    let block = patch.block;
    if block == 0 {
        return Err("a patch with blocks of 0 bytes".to_owned());
    }
    let blocks = len.div_ceil(block) as u64;
    if !patch.changed.windows(2).all(|w| w[0] < w[1])
        || patch.changed.last().is_some_and(|&k| k >= blocks)
    {
        return Err(format!(
            "a patch names blocks out of order or past the range's {blocks}"
        ));
    }
    let expected: usize = patch
        .changed
        .iter()
        .map(|&k| block.min(len - k as usize * block))
        .sum();
    if patch.bytes().len() != expected {
        return Err(format!(
            "a patch holds {} bytes for blocks of {expected}",
            patch.bytes().len()
        ));
    }
    Ok(())
}

impl Staged {
    /// What the differential part did, as counters.
    pub(crate) fn counts(&self, targets: &[Target]) -> Stats {
        let mut stats = Stats::default();
        for (&(s, e, _), save) in targets.iter().zip(&self.saves) {
            if let Save::Patch { patch, .. } = save {
                stats.bytes_diffed += (e - s) as u64;
                stats.diff_bytes_copied += patch.bytes().len() as u64;
                stats.diff_blocks_changed += patch.changed.len() as u64;
            }
        }
        stats
    }

    /// The segments of the new point, one per target (after a successful [`claim`]).
    pub(crate) fn into_segments(self) -> Vec<Segment> {
        let packed = self.packed;
        self.saves
            .into_iter()
            .map(|save| match save {
                Save::Packed(at) => Segment::new(
                    Arc::clone(packed.as_ref().expect("a packed save has the buffer")),
                    at,
                ),
                Save::Own(buffer) | Save::Patch { base: buffer, .. } => Segment::new(buffer, 0),
            })
            .collect()
    }
}

/// At the swap, with the parent and the CD locked and every fallible check of the swap made:
/// takes the saved copies the patches write out of the CD's data and writes the patches into
/// them. `false`, changing nothing, when one of them is no longer the CD's alone (the advance
/// stages again); after `true` the CD holds no bytes of the patched ranges until the new
/// point's segments are saved, which nothing can prevent.
pub(crate) fn claim(
    parent: Option<&State>,
    state: &mut State,
    targets: &[Target],
    staged: &mut Staged,
) -> bool {
    let patched = |save: &Save| matches!(save, Save::Patch { .. });
    for (&(s, e, _), save) in targets.iter().zip(&staged.saves) {
        if let Save::Patch { base, .. } = save {
            match patchable(parent, state, s, e, 1) {
                Some(current) if Arc::ptr_eq(current, base) => {}
                _ => return false,
            }
        }
    }
    // The CD's references go; the advance's are then the only ones.
    for (&(s, e, _), save) in targets.iter().zip(&staged.saves) {
        if patched(save) {
            state.data.remove(s, e);
        }
    }
    let patches = staged.saves.iter().filter(|s| patched(s)).count();
    let mut writable: Vec<(&mut Buffer, &mut BlockPatch)> = staged
        .saves
        .iter_mut()
        .filter_map(|save| match save {
            Save::Patch { base, patch } => Some((Arc::get_mut(base)?, patch)),
            _ => None,
        })
        .collect();
    if writable.len() < patches {
        // Unreachable while the count checked above is exact; should it not be, the saved
        // copies go back as they were rather than be written while shared.
        drop(writable);
        for (&(s, e, _), save) in targets.iter().zip(&staged.saves) {
            if let Save::Patch { base, .. } = save {
                state
                    .data
                    .insert_uncovered(s, e, Segment::new(Arc::clone(base), 0));
            }
        }
        return false;
    }
    for (buffer, patch) in &mut writable {
        write(buffer, patch);
    }
    true
}

/// Writes a checked patch into the saved copy, with its checksums: block by block, on several
/// threads when there is much to copy (one core does not saturate the memory bus, and this
/// runs with the parent and the CD locked).
fn write(buffer: &mut Buffer, patch: &mut BlockPatch) {
    let block = patch.block;
    let mut blocks: Vec<Option<&mut [u8]>> =
        buffer.as_mut_slice().chunks_mut(block).map(Some).collect();
    let mut work: Vec<(&mut [u8], &[u8])> = patch
        .changed
        .iter()
        .zip((*patch.data).as_ref().chunks(block))
        .filter_map(|(&k, from)| Some((blocks.get_mut(k as usize)?.take()?, from)))
        .collect();
    let total: usize = work.iter().map(|(_, from)| from.len()).sum();
    let threads = copy::copy_threads().min(total / copy::MIN_PART).max(1);
    if total < copy::PARALLEL_THRESHOLD || threads == 1 {
        for (to, from) in work {
            to.copy_from_slice(from);
        }
    } else {
        let per = work.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for part in work.chunks_mut(per) {
                scope.spawn(move || {
                    for (to, from) in part.iter_mut() {
                        to.copy_from_slice(from);
                    }
                });
            }
        });
    }
    buffer.sums = Some(std::mem::replace(&mut patch.sums, Box::new(())));
}
