//! The buffers of one tree of safe domains, and who holds them.
//!
//! A root [`Domain`](crate::Domain) owns a [`Tree`]; each [`Child`](crate::Child) borrows it
//! mutably, so exactly one level of the tree — the innermost live one — can be used at a
//! time, and the current CD is always the last of [`Tree::levels`]. Buffers live in the tree,
//! not in the level that protected them, because a child's commit (and the implicit commit of
//! a child's advance) moves its entries into the parent's CD: memory a child protected must
//! outlive the child. The tree frees a buffer only when no live CD can name it: when the root
//! CD was committed, or on [`take`](crate::Domain::take) after the one CD that held it let go.
//!
//! Each slot records its owner (the level that protected it; a child's commit hands it to the
//! parent) and the CDs that hold some of its bytes, so that `take` can refuse when another
//! CD would be left naming freed memory.

use crate::device::DeviceData;
use crate::error::{Error, Result};
use bytemuck::Pod;
use cd_core::{add_to_cd_via_copy, cd_info, Access, AddrSpec, CdHandle};
use std::any::Any;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The id of the next tree, so that keys of one tree are refused by another.
static NEXT_TREE: AtomicU64 = AtomicU64::new(1);

/// Names a host buffer protected by a domain: a `Vec<T>` moved into the tree.
///
/// Keys are `Copy`; one made in a child stays valid in the parent after the child commits (the
/// parent owns the buffer from then on).
pub struct Key<T> {
    pub(crate) id: SlotId,
    _type: PhantomData<fn() -> T>,
}

/// Names a device buffer protected by a domain (see [`Device`](crate::Device)).
pub struct DeviceKey<T> {
    pub(crate) id: SlotId,
    _type: PhantomData<fn() -> T>,
}

/// A slot of a tree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct SlotId {
    tree: u64,
    index: usize,
}

impl std::fmt::Display for SlotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key(tree {}, #{})", self.tree, self.index)
    }
}

macro_rules! key_impls {
    ($key:ident) => {
        impl<T> $key<T> {
            pub(crate) fn new(id: SlotId) -> Self {
                $key {
                    id,
                    _type: PhantomData,
                }
            }
        }

        impl<T> Clone for $key<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $key<T> {}

        impl<T> PartialEq for $key<T> {
            fn eq(&self, other: &Self) -> bool {
                self.id == other.id
            }
        }

        impl<T> Eq for $key<T> {}

        impl<T> std::fmt::Debug for $key<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.id, f)
            }
        }
    };
}

key_impls!(Key);
key_impls!(DeviceKey);

/// A buffer's memory.
pub(crate) enum Data {
    /// A `Box<[T]>`, for the `T` of its key.
    Host(Box<dyn Any + Send + Sync>),
    /// A device allocation.
    Device(DeviceData),
}

/// One protected buffer.
pub(crate) struct Slot {
    pub(crate) data: Data,
    /// The level that owns it: the one that protected it, or the parent it was committed to.
    pub(crate) owner: CdHandle,
    /// The CDs that hold some of its bytes (the owner's first while it holds them).
    pub(crate) held: Vec<CdHandle>,
}

/// The buffers of a tree of domains and the chain of its live levels.
pub(crate) struct Tree {
    id: u64,
    slots: Vec<Option<Slot>>,
    /// The CDs of the live levels, root first; the last is the current one.
    pub(crate) levels: Vec<CdHandle>,
}

impl Tree {
    pub(crate) fn new(root: CdHandle) -> Tree {
        Tree {
            id: NEXT_TREE.fetch_add(1, Ordering::Relaxed),
            slots: Vec::new(),
            levels: vec![root],
        }
    }

    /// The CD of the level in use.
    pub(crate) fn current(&self) -> CdHandle {
        *self
            .levels
            .last()
            .expect("a tree always has its root level")
    }

    /// Makes `cd`'s level the current one: levels above it belong to children that were
    /// leaked (`std::mem::forget`) instead of ending, and are abandoned (their CDs live on as
    /// raw children, keeping their buffers allocated).
    pub(crate) fn enter(&mut self, cd: CdHandle) -> &mut Tree {
        while self.levels.len() > 1 && self.current() != cd {
            self.levels.pop();
        }
        self
    }

    /// The CD of the level below the current one, for a child.
    pub(crate) fn parent(&self) -> Option<CdHandle> {
        self.levels.len().checked_sub(2).map(|i| self.levels[i])
    }

    /// Stores a new buffer owned by the current level; `held` says whether its CD holds it.
    pub(crate) fn insert(&mut self, data: Data, held: bool) -> SlotId {
        let cd = self.current();
        self.slots.push(Some(Slot {
            data,
            owner: cd,
            held: if held { vec![cd] } else { Vec::new() },
        }));
        SlotId {
            tree: self.id,
            index: self.slots.len() - 1,
        }
    }

    /// The slot `id` names, if the current level may use it: it belongs to this tree, is still
    /// there, and its owner is a live level (the current one or an ancestor).
    pub(crate) fn slot(&self, id: SlotId) -> Result<&Slot> {
        let index = self.check(id)?;
        Ok(self.slots[index].as_ref().expect("checked"))
    }

    pub(crate) fn slot_mut(&mut self, id: SlotId) -> Result<&mut Slot> {
        let index = self.check(id)?;
        Ok(self.slots[index].as_mut().expect("checked"))
    }

    fn check(&self, id: SlotId) -> Result<usize> {
        let key = || id.to_string();
        if id.tree != self.id || id.index >= self.slots.len() {
            return Err(Error::ForeignKey { key: key() });
        }
        let slot = self.slots[id.index]
            .as_ref()
            .ok_or_else(|| Error::Taken { key: key() })?;
        if !self.levels.contains(&slot.owner) {
            return Err(Error::Abandoned {
                key: key(),
                cd: slot.owner,
            });
        }
        Ok(id.index)
    }

    /// Two different slots, mutably.
    pub(crate) fn two_mut(&mut self, a: SlotId, b: SlotId) -> Result<[&mut Slot; 2]> {
        let (ia, ib) = (self.check(a)?, self.check(b)?);
        if ia == ib {
            return Err(Error::SameBuffer { key: a.to_string() });
        }
        let [sa, sb] = self
            .slots
            .get_disjoint_mut([ia, ib])
            .expect("checked in bounds and distinct");
        Ok([sa.as_mut().expect("checked"), sb.as_mut().expect("checked")])
    }

    /// Removes the slot `id` from the tree, if only the current CD (or none) holds it; the
    /// caller has made the current CD let go of it first when `release` succeeds.
    pub(crate) fn remove(
        &mut self,
        id: SlotId,
        release: impl FnOnce(&Slot, CdHandle) -> Result<()>,
    ) -> Result<Slot> {
        let index = self.check(id)?;
        let cd = self.current();
        let slot = self.slots[index].as_ref().expect("checked");
        if slot.owner != cd {
            return Err(Error::HeldElsewhere {
                key: id.to_string(),
                held_by: slot.owner,
            });
        }
        if let Some(&other) = slot.held.iter().find(|&&h| h != cd) {
            return Err(Error::HeldElsewhere {
                key: id.to_string(),
                held_by: other,
            });
        }
        if slot.held.contains(&cd) {
            release(slot, cd)?;
        }
        Ok(self.slots[index].take().expect("checked"))
    }

    /// Records that the current CD now holds some bytes of `id`.
    pub(crate) fn mark_held(slot: &mut Slot, cd: CdHandle) {
        if !slot.held.contains(&cd) {
            slot.held.push(cd);
        }
    }

    /// After the current child advanced: its implicit commit gave the parent every entry the
    /// parent lacked, so whatever the child holds, the parent holds too.
    pub(crate) fn child_advanced(&mut self) {
        let (Some(parent), child) = (self.parent(), self.current()) else {
            return;
        };
        for slot in self.slots.iter_mut().flatten() {
            if slot.held.contains(&child) {
                Self::mark_held(slot, parent);
            }
        }
    }

    /// After the current child committed: its buffers belong to the parent, which holds what
    /// the child held; the child's level ends.
    pub(crate) fn child_committed(&mut self) {
        let child = self.levels.pop().expect("a child level");
        let parent = self.current();
        for slot in self.slots.iter_mut().flatten() {
            if slot.owner == child {
                slot.owner = parent;
            }
            if let Some(i) = slot.held.iter().position(|&h| h == child) {
                slot.held.remove(i);
                Self::mark_held(slot, parent);
            }
        }
    }

    /// After the current child was dropped without committing: its level ends, its CD lives
    /// on (a raw child of the parent) and keeps its buffers, which stay allocated.
    pub(crate) fn child_abandoned(&mut self) {
        self.levels.pop();
    }

    /// Refuses to restore the current CD while it has live children: no safe child can be
    /// alive here (each borrows its parent), so they were made through the raw API or
    /// abandoned, and a restore would write their memory and discard them.
    pub(crate) fn check_no_children(&self) -> Result<()> {
        let cd = self.current();
        let children = cd_info(cd)?.children;
        if children > 0 {
            return Err(Error::ForeignChildren { cd, children });
        }
        Ok(())
    }

    /// Leaks every buffer: a CD that could not be committed may still name them.
    pub(crate) fn leak(&mut self) {
        std::mem::forget(std::mem::take(&mut self.slots));
    }
}

/// The typed view of a host slot.
pub(crate) fn host<T: Pod + Send + Sync>(slot: &Slot, id: SlotId) -> Result<&[T]> {
    match &slot.data {
        Data::Host(b) => b.downcast_ref::<Box<[T]>>().map(|b| &**b),
        Data::Device(_) => None,
    }
    .ok_or_else(|| Error::ForeignKey {
        key: id.to_string(),
    })
}

/// The typed view of a host slot, mutably.
pub(crate) fn host_mut<T: Pod + Send + Sync>(slot: &mut Slot, id: SlotId) -> Result<&mut [T]> {
    match &mut slot.data {
        Data::Host(b) => b.downcast_mut::<Box<[T]>>().map(|b| &mut **b),
        Data::Device(_) => None,
    }
    .ok_or_else(|| Error::ForeignKey {
        key: id.to_string(),
    })
}

/// The device view of a slot.
pub(crate) fn device(slot: &Slot, id: SlotId) -> Result<&DeviceData> {
    match &slot.data {
        Data::Device(d) => Ok(d),
        Data::Host(_) => Err(Error::ForeignKey {
            key: id.to_string(),
        }),
    }
}

/// Checks an element range against a length.
pub(crate) fn check_range(id: SlotId, range: &Range<usize>, len: usize) -> Result<()> {
    if range.start > range.end || range.end > len {
        return Err(Error::OutOfBounds {
            key: id.to_string(),
            start: range.start,
            end: range.end,
            len,
        });
    }
    Ok(())
}

/// Labels `range` of a host slot READ_WRITE in the current CD `cd`: a promotion if the CD
/// holds those bytes, a copy of them now otherwise (a child borrowing an ancestor's buffer
/// saves it before it is modified, as the spec's "add before you modify" asks).
pub(crate) fn promote_host<T: Pod + Send + Sync>(
    slot: &mut Slot,
    id: SlotId,
    range: Range<usize>,
    cd: CdHandle,
) -> Result<()> {
    let data = host::<T>(slot, id)?;
    check_range(id, &range, data.len())?;
    let part = &data[range];
    if std::mem::size_of_val(part) == 0 {
        return Ok(());
    }
    let spec = AddrSpec::of(part, Access::ReadWrite);
    // SAFETY: the bytes belong to a buffer of the tree, which keeps it allocated, at this
    // address (a boxed slice never moves its elements), for as long as any CD of the tree can
    // name it (see the module docs); the caller holds the tree mutably, so nothing reads or
    // writes it during the call.
    unsafe { add_to_cd_via_copy(cd, &[spec])? };
    Tree::mark_held(slot, cd);
    Ok(())
}

/// Labels `range` of a device slot READ_WRITE in the current CD `cd`, as [`promote_host`] does
/// for a host slot.
pub(crate) fn promote_device(
    slot: &mut Slot,
    id: SlotId,
    range: Range<usize>,
    cd: CdHandle,
) -> Result<()> {
    let data = device(slot, id)?;
    check_range(id, &range, data.len())?;
    if let Some(spec) = data.spec(&range, Access::ReadWrite) {
        // SAFETY: a mapped region of a device space, which the runtime reaches only through
        // the space's copy functions; the tree keeps it allocated for as long as any CD of
        // the tree can name it.
        unsafe { add_to_cd_via_copy(cd, &[spec])? };
        Tree::mark_held(slot, cd);
    }
    Ok(())
}
