//! The access label of entries, READ_ONLY or READ_WRITE: every rule that sets or changes it.
//!
//! The spec's promotion and demotion rules are spread over three operations (add, advance,
//! commit), and one fact ties them together: advance copies only READ_WRITE COPY entries, and
//! never updates a regen entry, so a regen entry may never be READ_WRITE. Keeping every
//! change of the label here keeps that fact true in one place:
//! - an add labels new ground as asked; a READ_WRITE regen range is refused
//!   ([`check_new`]);
//! - a re-add of covered ground relabels it without copying: READ_WRITE promotes, READ_ONLY
//!   demotes ([`relabel`]), except that a regen entry is never promoted ([`check_readd`]);
//! - an advance demotes every READ_WRITE entry to READ_ONLY once its data is saved
//!   ([`demote_all`]);
//! - a commit promotes the parent's READ_ONLY entries under a READ_WRITE child entry, never a
//!   regen one ([`promote_under`]).
//!
//! A re-add made while an asynchronous advance drains is after that advance's point in time:
//! it relabels the entries at once and is recorded in the pending advance, whose demotion,
//! when the point becomes current, is followed by the same relabels again ([`replay`]). So a
//! range promoted after the snapshot stays READ_WRITE and the next advance saves it; if the
//! pending point is dropped instead (a restore during the drain, a failed drain), the entries
//! already carry the relabels and nothing more is done.

use crate::error::{CdError, Result};
use crate::interval::IntervalMap;
use crate::node::{Entry, How};
use crate::types::{Access, AddrSpec};

/// Refuses a READ_WRITE range added via regen (checked before anything changes).
pub(crate) fn check_new(how: &How, specs: &[AddrSpec]) -> Result<()> {
    if matches!(how, How::Regen(_)) {
        if let Some(spec) = specs.iter().find(|s| s.access == Access::ReadWrite) {
            return Err(CdError::ReadWriteRegen {
                address: spec.address,
            });
        }
    }
    Ok(())
}

/// Refuses a re-add that would promote `old`, an existing entry from `address` on, to a
/// READ_WRITE regen entry (checked before anything changes).
pub(crate) fn check_readd(old: &Entry, access: Access, address: usize) -> Result<()> {
    if access == Access::ReadWrite && matches!(old.how, How::Regen(_)) {
        return Err(CdError::PromoteRegen { address });
    }
    Ok(())
}

/// Gives the entries of `start .. end` the label of a re-add: promotion or demotion, no copy.
/// Call after [`check_readd`] passed for every overlapping entry.
pub(crate) fn relabel(entries: &mut IntervalMap<Entry>, start: usize, end: usize, access: Access) {
    entries.update(start, end, |old| old.access = access);
}

/// Demotes every READ_WRITE entry to READ_ONLY: the advance, once the new point is saved.
pub(crate) fn demote_all(entries: &mut IntervalMap<Entry>) {
    let writable: Vec<(usize, usize)> = entries
        .iter()
        .filter(|(_, _, e)| e.access == Access::ReadWrite)
        .map(|(s, e, _)| (s, e))
        .collect();
    for (s, e) in writable {
        entries.update(s, e, |entry| entry.access = Access::ReadOnly);
    }
}

/// Promotes the parent's entries under a READ_WRITE child entry `start .. end` (commit),
/// except regen entries, which stay READ_ONLY.
pub(crate) fn promote_under(parent: &mut IntervalMap<Entry>, start: usize, end: usize) {
    parent.update(start, end, |p| {
        if !matches!(p.how, How::Regen(_)) {
            p.access = Access::ReadWrite;
        }
    });
}

/// Applies again, in order, the re-adds recorded while an asynchronous advance drained: called
/// after that advance's [`demote_all`], so that ranges promoted after its snapshot stay
/// READ_WRITE. Each was checked by [`check_readd`] when it was made.
pub(crate) fn replay(entries: &mut IntervalMap<Entry>, relabels: &[(usize, usize, Access)]) {
    for &(start, end, access) in relabels {
        relabel(entries, start, end, access);
    }
}
