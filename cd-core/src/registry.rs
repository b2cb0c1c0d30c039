//! The registry of live CDs: handles to nodes, and the root names in use.
//!
//! Apart from each thread's state (`active`): the registry needs only `node` (it holds
//! `Arc<Node>`; a node names itself by handle), while a thread's state also holds a log lane and
//! the callback mark, and looks CDs up here. So the registry stays below everything that runs
//! user callbacks.
//!
//! A handle is a slot index plus a generation. Retiring a CD (commit, or discard by an
//! ancestor's restore) bumps its slot's generation, so an old handle can never reach a new CD:
//! it is reported as stale, with what happened to it. Made-up handles fail the same lookup.
//! Generation 0 is never issued, so no handle's bit pattern is below 2^32: the C API's NULL
//! and `CURRENT_CD` (1) can never collide with one.

use crate::error::{CdError, Fate, Result};
use crate::ids::CdHandle;
use crate::node::Node;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

struct Slot {
    generation: u32,
    node: Option<Arc<Node>>,
    /// What happened to the previous generation.
    retired: Option<Fate>,
}

struct Registry {
    slots: Vec<Slot>,
    free: Vec<u32>,
    root_names: BTreeSet<Arc<str>>,
}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    slots: Vec::new(),
    free: Vec::new(),
    root_names: BTreeSet::new(),
});

fn registry_read() -> std::sync::RwLockReadGuard<'static, Registry> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

fn registry_write() -> std::sync::RwLockWriteGuard<'static, Registry> {
    REGISTRY.write().unwrap_or_else(|e| e.into_inner())
}

/// Registers a node built by `make` for its new handle.
pub(crate) fn register(make: impl FnOnce(CdHandle) -> Arc<Node>) -> CdHandle {
    let mut reg = registry_write();
    let index = match reg.free.pop() {
        Some(index) => index,
        None => {
            reg.slots.push(Slot {
                generation: 1,
                node: None,
                retired: None,
            });
            u32::try_from(reg.slots.len() - 1).expect("fewer than 2^32 CDs at once")
        }
    };
    let slot = &mut reg.slots[index as usize];
    let handle = CdHandle {
        index,
        generation: slot.generation,
    };
    slot.node = Some(make(handle));
    handle
}

/// The live node a handle names.
pub(crate) fn lookup(handle: CdHandle) -> Result<Arc<Node>> {
    let reg = registry_read();
    // Not `ok_or`: an error value built on every lookup is dropped on every lookup (a tiny
    // add's path).
    let Some(slot) = reg.slots.get(handle.index as usize) else {
        return Err(CdError::InvalidHandle(handle));
    };
    match &slot.node {
        Some(node) if slot.generation == handle.generation => Ok(Arc::clone(node)),
        // Generations only grow (wrapping after 2^32 reuses of one slot), so an older one was
        // issued and has been retired; the fate is recorded for the latest retirement only.
        _ if handle.generation != 0 && handle.generation < slot.generation => {
            let latest = next_generation(handle.generation) == slot.generation;
            Err(CdError::StaleHandle {
                handle,
                fate: match slot.retired {
                    Some(fate) if latest => fate,
                    _ => Fate::Gone,
                },
            })
        }
        _ => Err(CdError::InvalidHandle(handle)),
    }
}

fn next_generation(generation: u32) -> u32 {
    generation.checked_add(1).unwrap_or(1)
}

/// Every live CD, in no particular order.
pub(crate) fn live_nodes() -> Vec<Arc<Node>> {
    registry_read()
        .slots
        .iter()
        .filter_map(|slot| slot.node.clone())
        .collect()
}

/// Bumps the epoch of `ancestor` and of every live CD below it, on every branch: after a
/// restore rewound `ancestor`'s replay, which then feeds every one of them (see "Validating
/// the cache" in `active`'s module docs). Call it after publishing the replay. One walk of the
/// registry, paid by the rewind only.
pub(crate) fn bump_below(ancestor: &Arc<Node>) {
    ancestor.bump();
    for node in live_nodes() {
        let mut up = node.parent.as_ref();
        while let Some(n) = up {
            if Arc::ptr_eq(n, ancestor) {
                node.bump();
                break;
            }
            up = n.parent.as_ref();
        }
    }
}

/// Removes a CD from the registry; its handle becomes stale.
pub(crate) fn retire(handle: CdHandle, fate: Fate) {
    let mut reg = registry_write();
    let slot = &mut reg.slots[handle.index as usize];
    if slot.generation != handle.generation || slot.node.is_none() {
        return;
    }
    slot.node = None;
    slot.retired = Some(fate);
    slot.generation = next_generation(slot.generation);
    reg.free.push(handle.index);
}

/// Reserves a root name; fails if a live root CD already has it.
pub(crate) fn claim_root_name(name: &Arc<str>) -> Result<()> {
    if registry_write().root_names.insert(Arc::clone(name)) {
        Ok(())
    } else {
        Err(CdError::DuplicateName(name.to_string()))
    }
}

/// Frees a root name.
pub(crate) fn release_root_name(name: &str) {
    registry_write().root_names.remove(name);
}
