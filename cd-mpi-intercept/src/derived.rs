//! The communicators a loss is contained on: the world (channel 0), and those the application
//! derives from it with `MPI_Comm_dup`, `MPI_Comm_idup` (`crate::recovery`), `MPI_Comm_split`,
//! `MPI_Comm_split_type`, `MPI_Comm_create`, `MPI_Comm_create_group`, `MPI_Cart_create`,
//! `MPI_Cart_sub`, `MPI_Graph_create`, `MPI_Dist_graph_create`,
//! `MPI_Dist_graph_create_adjacent`, `MPI_Intercomm_create` and `MPI_Intercomm_merge`, or
//! derives from those the same way.
//!
//! Each derived communicator gets an identity every member computes alike: its parent's
//! identity and how many communicators were derived from the parent before it (every member of
//! the parent calls the constructor, in the same order, MPI's rule for collectives). Only the
//! members of an `MPI_Comm_create_group` communicator make it, so its identity is its parent's,
//! its members and tag, and how many alike were made before it ([`group_key`]); an
//! intercommunicator's two groups come from parents of their own, so its identity is the two
//! groups and how many were made between them before ([`inter_id`]). A replacement
//! re-executes the program's start and then only what came after the last version, so the
//! survivors hand it these counts as they were at the version ([`counts_at_version`]), which it
//! takes when its start ends: the constructors between the two are counted for it. With it
//! the runtime keeps the communicator's members (their world ranks, in rank order) and its
//! virtual topology, if any (`crate::topology`).
//!
//! After a loss, every rank of the repaired world rebuilds each derived communicator that some
//! survivor has (alive, or freed since the last version or in the program's start, which a
//! replacement may derive again as it re-executes): in one order of identities, one
//! `MPI_Comm_split` of the repaired world per identity, each piece with the same members in the
//! same order, and its topology made again on that piece, without reordering
//! (`crate::recovery::resync`). The application's handles then mean the rebuilt communicators
//! (`crate::pmpi::world::map`); a replacement's constructor, re-executed, gets the rebuilt one
//! instead of calling MPI ([`prebuilt`]), since its peers made theirs long ago. A process that
//! is a member of no piece of a split gets `MPI_COMM_NULL`. A replacement alone in its piece
//! (no survivor describes it) gets a communicator of its own when its split's colour says it
//! is a member ([`prebuilt`]). An intercommunicator is rebuilt from the two groups' pieces
//! (one a survivor of the other group describes, if none of its own is left), joined by
//! `MPI_Intercomm_create`.
//!
//! The identities are kept in a short list searched linearly: programs derive a few
//! communicators, not thousands.

use crate::abi::{self, Comm, Group};
use crate::by_tag::ByTag;
use crate::pmpi::{real, safe, world, Call};
use crate::topology::Topology;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The world's identity.
pub(crate) const WORLD: u64 = 0;

/// What the runtime knows of a derived communicator.
#[derive(Clone)]
pub(crate) struct Derived {
    pub(crate) id: u64,
    /// The handle the application holds.
    app: u64,
    /// The real communicator it means now.
    current: u64,
    /// Every real communicator it has meant (its traffic is counted on each).
    handles: Vec<u64>,
    /// The members' world ranks, in rank order.
    pub(crate) members: Vec<c_int>,
    /// Its virtual topology, if any.
    pub(crate) topology: Option<Topology>,
    /// An intercommunicator's other side (`members` is then its local group).
    pub(crate) remote: Option<Remote>,
    /// How many communicators were derived from it.
    children: u32,
    /// Freed by the application (kept until the next version, or for the whole run when it
    /// was made in the program's start, which a replacement re-executes).
    freed: bool,
    /// Made in the program's start (`crate::recovery::prologue`).
    in_start: bool,
    /// The runtime's duplicate of another ([`twin`]).
    twin: bool,
    /// Messages received on it by world rank, when it was freed.
    received_at_free: Vec<ByTag>,
}

/// How a derived communicator is named, so that every member names it alike.
#[derive(Clone, Copy)]
pub(crate) enum Kin {
    /// Every member of its parent derives it: by its place among the parent's children.
    Child,
    /// `MPI_Comm_create_group`: only its members make it, by its members and tag
    /// ([`group_key`]).
    Group(u64),
    /// `MPI_Intercomm_create`: each of its two groups makes it from a parent of its own, by
    /// the two groups ([`inter_id`]).
    Inter,
}

/// An intercommunicator's other side.
#[derive(Clone, PartialEq)]
pub(crate) struct Remote {
    /// The remote group's world ranks, in rank order.
    pub(crate) members: Vec<c_int>,
    /// How many intercommunicators this rank's local group made before it (a replacement
    /// finds its own again by it: [`prebuilt`]); `None` where no survivor of that group said.
    pub(crate) seq: Option<u32>,
}

#[derive(Default)]
struct Registry {
    /// How many communicators were derived from the world.
    world_children: u32,
    derived: Vec<Derived>,
    /// How many `MPI_Comm_create_group` communicators were derived from a parent, by parent
    /// and [`group_key`].
    grouped: HashMap<(u64, u64), u32>,
    /// How many intercommunicators were made between two groups, by [`inter_id`]'s key.
    inter: HashMap<u64, u32>,
    /// How many intercommunicators a local group made, by [`list_key`] of its members.
    inter_seq: HashMap<u64, u32>,
    /// A replacement's rebuilt communicators, their topologies, and for an intercommunicator
    /// its `seq`, by identity (`MPI_COMM_NULL` where it is no member), until its constructor
    /// asks for them.
    prebuilt: HashMap<u64, Prebuilt>,
    /// The counts above at the last version ([`counts_at_version`]).
    at_version: Counts,
    /// A replacement's counts at the version, from the survivors, until its start ends
    /// ([`start_ended`]).
    preset: Option<Counts>,
}

/// A communicator a repair rebuilt for a replacement, until its constructor asks for it.
struct Prebuilt {
    comm: u64,
    topology: Option<Topology>,
    /// An intercommunicator's [`Remote::seq`].
    inter: Option<Option<u32>>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
/// Whether any communicator is derived (covered calls on other communicators look only then).
static ANY: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let registry = guard.get_or_insert_with(Registry::default);
    let r = f(registry);
    ANY.store(!registry.derived.is_empty(), Ordering::Relaxed);
    r
}

/// The identity of the `index`-th communicator derived from `parent`.
fn child_id(parent: u64, index: u32) -> u64 {
    // splitmix64 of the pair: distinct pairs collide with negligible probability; never 0
    let mut z = parent
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(u64::from(index) + 1);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

/// The channel of the real communicator `comm`: the world's, or a derived one's that is not
/// freed.
#[inline]
pub(crate) fn channel(comm: Comm) -> Option<u64> {
    channel_where(comm, |_| true)
}

/// [`channel`], unless `comm` is an intercommunicator.
#[inline]
pub(crate) fn intra_channel(comm: Comm) -> Option<u64> {
    channel_where(comm, |d| d.remote.is_none())
}

/// The channel of `comm` if it is the world or a derived communicator (not freed) that `fits`,
/// in one look at the registry.
#[inline]
fn channel_where(comm: Comm, fits: impl Fn(&Derived) -> bool) -> Option<u64> {
    if comm == world::current() {
        return Some(WORLD);
    }
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    derived_channel(comm, fits)
}

fn derived_channel(comm: Comm, fits: impl Fn(&Derived) -> bool) -> Option<u64> {
    with(|r| {
        r.derived
            .iter()
            .find(|d| d.current == comm.bits() && !d.freed)
            .filter(|d| fits(d))
            .map(|d| d.id)
    })
}

/// The real communicator channel `id` means now (inlined: the world's is on every covered
/// call's path).
#[inline]
pub(crate) fn current(id: u64) -> Comm {
    if id == WORLD {
        return world::current();
    }
    current_derived(id)
}

#[cold]
fn current_derived(id: u64) -> Comm {
    with(|r| r.derived.iter().find(|d| d.id == id).map(|d| d.current))
        .map_or(abi::predefined().comm_null, Comm::from_bits)
}

/// The world rank of rank `rank` of channel `id` (`-1`: none): of its remote group for an
/// intercommunicator, as point-to-point calls address them.
#[inline]
pub(crate) fn world_rank(id: u64, rank: c_int) -> c_int {
    if id == WORLD || rank < 0 {
        return rank;
    }
    world_rank_derived(id, rank)
}

#[cold]
fn world_rank_derived(id: u64, rank: c_int) -> c_int {
    with(|r| {
        r.derived
            .iter()
            .find(|d| d.id == id)
            .and_then(|d| d.peers().get(rank as usize).copied())
    })
    .unwrap_or(-1)
}

/// The rank of world rank `world_rank` in channel `id` (`-1`: not a member; of the remote
/// group for an intercommunicator).
pub(crate) fn rank_of(id: u64, world_rank: usize) -> c_int {
    if id == WORLD {
        return world_rank as c_int;
    }
    with(|r| {
        r.derived
            .iter()
            .find(|d| d.id == id)
            .and_then(|d| d.peers().iter().position(|&w| w as usize == world_rank))
    })
    .map_or(-1, |p| p as c_int)
}

/// Whether `comm` is a derived communicator a repair rebuilt (its failures are the repair's).
pub(crate) fn is_former(comm: Comm) -> bool {
    ANY.load(Ordering::Relaxed)
        && with(|r| {
            r.derived
                .iter()
                .any(|d| d.current != comm.bits() && d.handles.contains(&comm.bits()))
        })
}

/// The real communicators channel `id` has meant.
pub(crate) fn handles(id: u64) -> Vec<Comm> {
    if id == WORLD {
        return world::all();
    }
    with(|r| {
        r.derived
            .iter()
            .find(|d| d.id == id)
            .map(|d| d.handles.iter().map(|&h| Comm::from_bits(h)).collect())
    })
    .unwrap_or_default()
}

/// Every channel: the world's and each derived communicator's (freed ones too, until the next
/// version).
pub(crate) fn channels() -> Vec<u64> {
    let mut ids = vec![WORLD];
    with(|r| ids.extend(r.derived.iter().map(|d| d.id)));
    ids
}

/// The real communicators the derived ones not freed mean now (a repair revokes them).
pub(crate) fn live() -> Vec<Comm> {
    with(|r| {
        r.derived
            .iter()
            .filter(|d| !d.freed && d.current != abi::predefined().comm_null.bits())
            .map(|d| Comm::from_bits(d.current))
            .collect()
    })
}

/// The derived communicators (for a repair's rebuild).
pub(crate) fn derived() -> Vec<Derived> {
    with(|r| r.derived.clone())
}

/// Which constructors are followed: those every member of the parent calls. A communicator
/// of `MPI_Comm_split_type` is rebuilt with the same members, like a split's, though a
/// replacement on another node no longer shares memory with them.
fn followed(call: Call) -> bool {
    matches!(
        call,
        Call::Comm_dup
            | Call::Comm_dup_with_info
            | Call::Comm_split
            | Call::Comm_split_type
            | Call::Comm_create
            | Call::Comm_create_group
            | Call::Intercomm_create
            | Call::Intercomm_merge
            | Call::Cart_create
            | Call::Cart_sub
            | Call::Graph_create
            | Call::Dist_graph_create
            | Call::Dist_graph_create_adjacent
    )
}

/// Whether `call` on `parent` derives a communicator this module follows: the parent is the
/// world or a followed one.
pub(crate) fn follows(call: Call, parent: Comm) -> bool {
    followed(call) && channel(parent).is_some()
}

/// A replacement re-executing a constructor on `parent`, named by `kin`: the communicator the
/// repair rebuilt for it (`Some(MPI_COMM_NULL)` where it is no member), followed from now on
/// (`in_start`: in the program's start); `None` when that constructor was not rebuilt (it is
/// called as usual, then [`derived_from`]). Where no survivor is a member of its piece, the
/// repair could not know that this process is one: `alone` makes it the communicator of its
/// own if its arguments say it is a member (a split's colour).
pub(crate) fn prebuilt(
    parent: Comm,
    kin: Kin,
    in_start: bool,
    alone: impl FnOnce() -> Option<Comm>,
) -> Option<Comm> {
    let parent_id = channel(parent)?;
    let local = matches!(kin, Kin::Inter).then(|| members(parent));
    let (id, comm, topology, remote) = with(|r| {
        let (id, remote) = match &local {
            Some(local) => {
                let (id, remote) = prebuilt_inter(r, local)?;
                (id, Some(remote))
            }
            None => (next_child(r, parent_id, kin)?, None),
        };
        let built = r.prebuilt.remove(&id)?;
        match (&local, &remote) {
            (Some(local), Some(remote)) => {
                inter_id(r, local, &remote.members);
            }
            _ => count_child(r, parent_id, kin),
        }
        Some((id, Comm::from_bits(built.comm), built.topology, remote))
    })?;
    let null = abi::predefined().comm_null;
    let comm = match comm == null && remote.is_none() {
        true => alone().unwrap_or(null),
        false => comm,
    };
    if comm != null {
        let members = members(comm);
        let intra = remote.is_none();
        let twin = with(|r| {
            let mut d = Derived::new(id, comm, members.clone(), topology, in_start);
            d.remote = remote;
            r.derived.push(d);
            r.prebuilt.remove(&twin_id(id))
        });
        match twin {
            Some(built) => adopt_twin(id, Comm::from_bits(built.comm), members, in_start),
            // alone in its piece: no survivor rebuilt a twin, and none is needed to make one
            None if intra && members.len() == 1 => add_twin(id, comm, members, in_start),
            None => {}
        }
    }
    Some(comm)
}

/// The intercommunicator rebuilt for a replacement whose local group is `local`: the next one
/// that group made (by its count), or the one of that group whose count no survivor knew.
fn prebuilt_inter(r: &Registry, local: &[c_int]) -> Option<(u64, Remote)> {
    let seq = r.inter_seq.get(&list_key(local)).copied().unwrap_or(0);
    let ours: Vec<(u64, Option<u32>, Comm)> = r
        .prebuilt
        .iter()
        .filter_map(|(&id, b)| Some((id, b.inter?, Comm::from_bits(b.comm))))
        .filter(|&(_, _, comm)| members(comm) == local)
        .collect();
    let (id, known, comm) = ours
        .iter()
        .find(|(_, known, _)| *known == Some(seq))
        .or_else(|| ours.iter().find(|(_, known, _)| known.is_none()))
        .copied()?;
    let remote = Remote {
        members: remote_members(comm),
        seq: known.or(Some(seq)),
    };
    Some((id, remote))
}

/// The identity the next communicator derived from `parent_id` gets (see [`Kin`]; an
/// intercommunicator's is [`inter_id`]).
fn next_child(r: &Registry, parent_id: u64, kin: Kin) -> Option<u64> {
    if let Kin::Group(key) = kin {
        let n = r.grouped.get(&(parent_id, key)).copied().unwrap_or(0);
        return Some(child_id(child_id(parent_id, u32::MAX) ^ key, n));
    }
    let index = match parent_id {
        WORLD => r.world_children,
        _ => r.derived.iter().find(|d| d.id == parent_id)?.children,
    };
    Some(child_id(parent_id, index))
}

/// Counts the communicator [`next_child`] named.
fn count_child(r: &mut Registry, parent_id: u64, kin: Kin) {
    if let Kin::Group(key) = kin {
        *r.grouped.entry((parent_id, key)).or_insert(0) += 1;
    } else if parent_id == WORLD {
        r.world_children += 1;
    } else if let Some(d) = r.derived.iter_mut().find(|d| d.id == parent_id) {
        d.children += 1;
    }
}

/// Names an intercommunicator between the groups `local` and `remote` (world ranks) and
/// counts it: by the two groups, the one with the lowest world rank first, and how many were
/// made between them before (both sides name it alike). Returns it and the local group's
/// count of intercommunicators before it.
fn inter_id(r: &mut Registry, local: &[c_int], remote: &[c_int]) -> (u64, u32) {
    let low = |g: &[c_int]| g.iter().min().copied().unwrap_or(c_int::MAX);
    let (a, b) = match low(local) <= low(remote) {
        true => (local, remote),
        false => (remote, local),
    };
    let key = list_key(a) ^ list_key(b).rotate_left(32);
    let n = r.inter.entry(key).or_insert(0);
    let id = child_id(child_id(key, u32::MAX - 1), *n);
    *n += 1;
    let seq = r.inter_seq.entry(list_key(local)).or_insert(0);
    let before = *seq;
    *seq += 1;
    (id, before)
}

/// A key for a list of ints (members, a tag), alike on every rank that holds the same list.
fn list_key(list: &[c_int]) -> u64 {
    list.iter()
        .fold(0x243F_6A88_85A3_08D3, |h: u64, &v| child_id(h, v as u32))
}

/// What tells an `MPI_Comm_create_group` communicator apart: its members (world ranks, in
/// order) and its tag, which every member passes alike.
pub(crate) fn group_key(group: Group, tag: c_int) -> u64 {
    let mut list = world_ranks(group);
    list.push(tag);
    list_key(&list)
}

impl Derived {
    /// The world ranks point-to-point calls on it address: its members, or an
    /// intercommunicator's remote group.
    fn peers(&self) -> &[c_int] {
        self.remote.as_ref().map_or(&self.members, |r| &r.members)
    }

    fn new(
        id: u64,
        comm: Comm,
        members: Vec<c_int>,
        topology: Option<Topology>,
        in_start: bool,
    ) -> Derived {
        Derived {
            id,
            app: comm.bits(),
            current: comm.bits(),
            handles: vec![comm.bits()],
            members,
            topology,
            remote: None,
            children: 0,
            freed: false,
            in_start,
            twin: false,
            received_at_free: Vec::new(),
        }
    }
}

/// `new` (`MPI_COMM_NULL` where this process is no member), with `topology`, was derived from
/// `parent`, named by `kin`: followed from now on (`in_start`: in the program's start).
pub(crate) fn derived_from(
    parent: Comm,
    new: Comm,
    topology: Option<Topology>,
    kin: Kin,
    in_start: bool,
) {
    let Some(parent_id) = channel(parent) else {
        return;
    };
    let described = (new != abi::predefined().comm_null).then(|| (members(new), topology));
    let remote = match (kin, &described) {
        (Kin::Inter, Some(_)) => Some(remote_members(new)),
        _ => None,
    };
    let made = with(|r| {
        let (id, remote) = match (&described, remote) {
            (Some((local, _)), Some(remote)) => {
                let (id, seq) = inter_id(r, local, &remote);
                let remote = Remote {
                    members: remote,
                    seq: Some(seq),
                };
                (id, Some(remote))
            }
            _ => {
                let id = next_child(r, parent_id, kin)?;
                count_child(r, parent_id, kin);
                (id, None)
            }
        };
        let (members, topology) = described?;
        let intra = remote.is_none();
        let mut d = Derived::new(id, new, members.clone(), topology, in_start);
        d.remote = remote;
        r.derived.push(d);
        intra.then_some((id, members))
    });
    if let Some((id, members)) = made {
        add_twin(id, new, members, in_start);
    }
}

/// `MPI_Comm_idup` of `parent` posted: the identity of the communicator it makes, named like a
/// duplicate's when posted (collectives are posted in one order on every rank; they complete in
/// any), followed once it completes ([`idup_complete`]); `None` where `parent` is not followed.
pub(crate) fn idup_posted(parent: Comm) -> Option<u64> {
    let parent_id = channel(parent)?;
    with(|r| {
        let id = next_child(r, parent_id, Kin::Child)?;
        count_child(r, parent_id, Kin::Child);
        Some(id)
    })
}

/// The `MPI_Comm_idup` named `id` ([`idup_posted`]) completed: `new` and its twin `twin` (an
/// `MPI_Comm_idup` of the same parent, posted with it) are followed.
pub(crate) fn idup_complete(id: u64, new: Comm, twin: Comm, in_start: bool) {
    let members = members(new);
    let topology = Topology::of(new);
    let d = Derived::new(id, new, members.clone(), topology, in_start);
    with(|r| r.derived.push(d));
    adopt_twin(id, twin, members, in_start);
}

/// The identity of channel `id`'s twin ([`twin`]).
fn twin_id(id: u64) -> u64 {
    child_id(id, u32::MAX - 2)
}

/// The twin of `comm` (a real intracommunicator the world or a followed one means now): the
/// runtime's duplicate of it, on which `crate::recovery::unrolled` sends the messages it
/// turns a collective into, where no receive of the application's can match them. Each is
/// made with its communicator (the world's at `MPI_Init`), collectively as the constructor
/// was, followed like a derived communicator, and rebuilt with it; `None` where there is none.
/// A communicator the application freed still has its twin until the registry forgets it: a
/// CD that logs may re-execute the calls it made on it, which must unroll as they did.
pub(crate) fn twin(comm: Comm) -> Option<Comm> {
    let id = match comm == world::current() {
        true => WORLD,
        false if !ANY.load(Ordering::Relaxed) => return None,
        false => with(|r| {
            let intra = |d: &&Derived| d.current == comm.bits() && d.remote.is_none();
            // a live one first, else the freed one made last: MPI gives a freed handle to a
            // later communicator, so older entries may hold it too
            let live = r.derived.iter().filter(intra).find(|d| !d.freed);
            live.or_else(|| r.derived.iter().rev().find(intra))
                .map(|d| d.id)
        })?,
    };
    let null = abi::predefined().comm_null.bits();
    with(|r| {
        let d = r.derived.iter().find(|d| d.id == twin_id(id))?;
        (d.current != null).then(|| Comm::from_bits(d.current))
    })
}

/// The application's `comm` was freed in MPI (at its `MPI_Comm_free`, or once no log can
/// re-execute a call on it): its twin is freed too, while the registry keeps both entries for
/// a repair's rebuild (a program that makes and frees communicators in a loop would otherwise
/// hold a twin for each).
pub(crate) fn release_twin(comm: Comm) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let null = abi::predefined().comm_null.bits();
    let twin = with(|r| {
        // the one made last with this handle (see [`twin`])
        let id = r
            .derived
            .iter()
            .rev()
            .find(|d| d.freed && d.current == comm.bits() && !d.twin)?
            .id;
        let twin = r.derived.iter_mut().find(|d| d.id == twin_id(id))?;
        (twin.current != null).then(|| std::mem::replace(&mut twin.current, null))
    });
    if let Some(bits) = twin {
        let mut twin = Comm::from_bits(bits);
        // SAFETY: the runtime's own duplicate, which nothing uses once its communicator is
        // freed (the application's calls on it ended with it).
        unsafe { real::Comm_free(&mut twin) };
    }
}

/// Makes the twin of channel `id` (`comm`, with `members`), a duplicate of it.
fn add_twin(id: u64, comm: Comm, members: Vec<c_int>, in_start: bool) {
    match safe::comm_dup(comm) {
        Ok(dup) => adopt_twin(id, dup, members, in_start),
        Err(rc) => tracing::warn!(rc, "a followed communicator has no twin"),
    }
}

/// Follows `dup` as the twin of channel `id`.
fn adopt_twin(id: u64, dup: Comm, members: Vec<c_int>, in_start: bool) {
    let mut d = Derived::new(twin_id(id), dup, members, None, in_start);
    d.twin = true;
    with(|r| r.derived.push(d));
}

/// The world's twin (see [`twin`]), made at `MPI_Init` in a ULFM job that contains losses; a
/// replacement takes the one its repair rebuilt (`replacement`).
pub(crate) fn world_twin(replacement: bool) {
    let world = world::current();
    let members = members(world);
    match replacement {
        false => add_twin(WORLD, world, members, true),
        true => {
            let built = with(|r| r.prebuilt.remove(&twin_id(WORLD)));
            if let Some(built) = built {
                adopt_twin(WORLD, Comm::from_bits(built.comm), members, true);
            }
        }
    }
}

/// A communicator's members: their world ranks, in rank order.
fn members(comm: Comm) -> Vec<c_int> {
    let group = safe::comm_group(comm);
    let members = world_ranks(group);
    safe::group_free(group);
    members
}

/// An intercommunicator's remote group: its world ranks, in rank order.
fn remote_members(comm: Comm) -> Vec<c_int> {
    let group = safe::comm_remote_group(comm);
    let members = world_ranks(group);
    safe::group_free(group);
    members
}

/// The world ranks of `group`'s members, in its order.
fn world_ranks(group: Group) -> Vec<c_int> {
    let ranks: Vec<c_int> = (0..safe::group_size(group).max(0)).collect();
    let world_group = safe::comm_group(world::current());
    let members = safe::group_translate_ranks(group, &ranks, world_group);
    safe::group_free(world_group);
    members
}

/// The application frees `comm` (a real handle): a followed one is kept until the next
/// version, for a replacement that derives it again, with what was received on it (its twin
/// likewise).
pub(crate) fn freed(comm: Comm) {
    let Some(id) = channel(comm).filter(|&id| id != WORLD) else {
        return;
    };
    for id in [id, twin_id(id)] {
        let received = crate::traffic::received_on(&handles(id));
        with(|r| {
            if let Some(d) = r.derived.iter_mut().find(|d| d.id == id) {
                d.freed = true;
                d.received_at_free = received;
            }
        });
    }
}

/// Messages received on channel `id`, by world rank and tag.
pub(crate) fn received(id: u64) -> Vec<ByTag> {
    let freed = with(|r| {
        r.derived
            .iter()
            .find(|d| d.id == id && d.freed)
            .map(|d| d.received_at_free.clone())
    });
    freed.unwrap_or_else(|| crate::traffic::received_on(&handles(id)))
}

/// Whether channel `id` was freed by the application (since the last version).
pub(crate) fn is_freed(id: u64) -> bool {
    with(|r| r.derived.iter().any(|d| d.id == id && d.freed))
}

/// A version completed: communicators freed before it are forgotten, but those of the
/// program's start; the counts that name the next ones are kept ([`counts_at_version`]).
pub(crate) fn version_complete() {
    let twins = with(|r| {
        let (kept, dropped) = std::mem::take(&mut r.derived)
            .into_iter()
            .partition(|d| !d.freed || d.in_start);
        r.derived = kept;
        r.at_version = Counts::of(r);
        dropped
    });
    // the runtime's own (unless released with their communicator): the application freed the
    // others
    let null = abi::predefined().comm_null;
    for twin in twins.into_iter().filter(|d| d.twin) {
        let mut comm = Comm::from_bits(twin.current);
        if comm == null {
            continue;
        }
        // SAFETY: a twin nothing uses any more (its communicator was freed before the version,
        // and every message on it was received: the persist checked).
        unsafe { real::Comm_free(&mut comm) };
    }
}

/// The counts that name derived communicators ([`next_child`], [`inter_id`]) at the last
/// version, as the words a survivor hands a replacement: a replacement re-executes the
/// program's start and then only what came after the version, so the constructors between
/// the two, which it never calls again, must be counted for it ([`merge_counts`]).
pub(crate) fn counts_at_version() -> Vec<u64> {
    with(|r| r.at_version.words())
}

/// Merges the survivors' [`counts_at_version`] for a replacement, which takes them when its
/// start ends ([`start_ended`]). `Err` names a malformed list.
pub(crate) fn merge_counts(all: &[Vec<u64>]) -> Result<(), String> {
    let mut merged = Counts::default();
    for words in all {
        merged.merge(Counts::read(words)?);
    }
    with(|r| r.preset = Some(merged));
    Ok(())
}

/// A replacement's start ended: the counts that name derived communicators become the
/// survivors' at the version ([`merge_counts`]), as if it had called every constructor since.
pub(crate) fn start_ended() {
    with(|r| {
        let Some(preset) = r.preset.take() else {
            return;
        };
        // its counts at the version, should it serve another replacement before the next
        r.at_version = preset.clone();
        let [children, grouped, inter, inter_seq] = preset.lists;
        r.world_children = preset.world;
        for (key, n) in children {
            if let Some(d) = r.derived.iter_mut().find(|d| d.id == key[0]) {
                d.children = n;
            }
        }
        r.grouped
            .extend(grouped.into_iter().map(|(k, n)| ((k[0], k[1]), n)));
        r.inter.extend(inter.into_iter().map(|(k, n)| (k[0], n)));
        r.inter_seq
            .extend(inter_seq.into_iter().map(|(k, n)| (k[0], n)));
    });
}

/// The counts that name derived communicators, by their keys' words: the world's children,
/// then four lists: each derived communicator's children (by identity), the
/// `MPI_Comm_create_group` ones (by parent and key), the intercommunicators (by their groups'
/// key, and by the local group's).
#[derive(Clone, Default)]
struct Counts {
    world: u32,
    lists: [HashMap<Vec<u64>, u32>; 4],
}

/// How many words each list's keys have.
const KEY_WORDS: [usize; 4] = [1, 2, 1, 1];

impl Counts {
    fn of(r: &Registry) -> Counts {
        let children = r.derived.iter().map(|d| (vec![d.id], d.children));
        let grouped = r.grouped.iter().map(|(&(p, k), &n)| (vec![p, k], n));
        let inter = r.inter.iter().map(|(&k, &n)| (vec![k], n));
        let inter_seq = r.inter_seq.iter().map(|(&k, &n)| (vec![k], n));
        Counts {
            world: r.world_children,
            lists: [
                children.collect(),
                grouped.collect(),
                inter.collect(),
                inter_seq.collect(),
            ],
        }
    }

    /// The world's children, then each list: its length, then each entry's key and count.
    fn words(&self) -> Vec<u64> {
        let mut words = vec![u64::from(self.world)];
        for list in &self.lists {
            words.push(list.len() as u64);
            for (key, &n) in list {
                words.extend(key);
                words.push(u64::from(n));
            }
        }
        words
    }

    fn read(words: &[u64]) -> Result<Counts, String> {
        let mut it = words.iter().copied();
        let mut next = || {
            it.next()
                .ok_or_else(|| "a survivor's communicator counts are cut short".to_owned())
        };
        let mut counts = Counts {
            world: next()? as u32,
            ..Counts::default()
        };
        for (list, width) in counts.lists.iter_mut().zip(KEY_WORDS) {
            for _ in 0..next()? {
                let key = (0..width)
                    .map(|_| next())
                    .collect::<Result<Vec<u64>, _>>()?;
                list.insert(key, next()? as u32);
            }
        }
        Ok(counts)
    }

    /// Each key's greatest count (a communicator's members alone know its counts, and they
    /// agree).
    fn merge(&mut self, other: Counts) {
        self.world = self.world.max(other.world);
        for (mine, theirs) in self.lists.iter_mut().zip(other.lists) {
            for (key, n) in theirs {
                let at = mine.entry(key).or_insert(0);
                *at = (*at).max(n);
            }
        }
    }
}

/// After a repair's rebuild: channel `id` is `rebuilt` now (`MPI_COMM_NULL` where this process
/// is no member). A survivor's communicator freed since the version is kept too (the resends to
/// a replacement may go on it); a replacement keeps every one for its constructors
/// ([`prebuilt`]).
pub(crate) fn rebuilt(
    id: u64,
    rebuilt: Comm,
    topology: Option<Topology>,
    remote: Option<&Remote>,
    replacement: bool,
) {
    with(|r| {
        if replacement {
            let built = Prebuilt {
                comm: rebuilt.bits(),
                topology,
                inter: remote.map(|r| r.seq),
            };
            r.prebuilt.insert(id, built);
        } else if let Some(d) = r.derived.iter_mut().find(|d| d.id == id) {
            d.current = rebuilt.bits();
            d.handles.push(rebuilt.bits());
            if !d.freed {
                world::map(Comm::from_bits(d.app), rebuilt);
            }
        }
    });
}

/// Before a replacement's `MPI_Finalize`: frees every communicator a repair rebuilt that it
/// still holds (its finalize would otherwise wait to disconnect from survivors that have
/// left: `crate::recovery::repair::finalize`).
pub(crate) fn free_rebuilt() {
    let held: Vec<u64> = with(|r| {
        // the application's that it freed are freed; twins are this module's to free
        let live = r
            .derived
            .iter()
            .filter(|d| !d.freed || d.twin)
            .map(|d| d.current);
        let unclaimed = r.prebuilt.drain().map(|(_, b)| b.comm);
        let all = live.chain(unclaimed).collect();
        r.derived.clear();
        all
    });
    for bits in held {
        let mut comm = Comm::from_bits(bits);
        if comm != abi::predefined().comm_null {
            // SAFETY: a communicator this process holds; nothing uses it after the finalize.
            unsafe { real::Comm_free(&mut comm) };
        }
    }
}
