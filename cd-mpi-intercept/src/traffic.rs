//! Per-peer message counts, the evidence for persistence's consistency proof: a persist of a
//! persistent root CD is refused when they show an application message in flight (cd-persist's
//! `consistency` module exchanges and compares them inside the persist's collective step).
//!
//! # What is counted
//! Only the application's own traffic (never the runtime's, which runs under the guard, nor a
//! replay's, which MPI never sees: a replayed receive was counted when it was first received,
//! a dropped send when it was first sent). Per communicator and peer rank:
//! - a send when it is started: the Send family, the Isend family, `MPI_Start` of a
//!   persistent send, the send half of `Sendrecv(_replace)`;
//! - a receive when it completes, from the source in its status (substituted when the
//!   application passed `MPI_STATUS_IGNORE`), and in a ULFM job also by its tag
//!   (`crate::by_tag`): `Recv`, `Sendrecv(_replace)`, `Mrecv`, and an
//!   `Irecv`, `Imrecv` or started persistent receive completed by any Wait/Test call; a
//!   cancelled receive (`MPI_Test_cancelled`) is not counted; `MPI_PROC_NULL` never is;
//! - every collective call (blocking or not) once per communicator;
//! - pending: receive requests and nonblocking collectives (and `MPI_Comm_idup`) started and
//!   not completed. A pending request the application frees (`MPI_Request_free`) is kept in
//!   MPI by the interposer and tested at the next check, so that its completion is still
//!   counted.
//!
//! The large-count forms (`MPI_X_c`) count as their int forms, also with a count beyond
//! `INT_MAX`, when they pass through unlogged (`large`).
//!
//! Counters are atomics shared by all threads (`MPI_THREAD_MULTIPLE`), found through a
//! per-thread cache of the last communicator used; pending requests are in one table, and a
//! completion call takes its requests' entries out *before* calling MPI, since once MPI frees
//! a completed request another thread's new request may get the same handle.
//!
//! At the check, each communicator's peers are translated to world ranks (the group
//! translation is done once per communicator, when its first message is counted), and a
//! communicator's collective count is added to every other member's pair. Communicators freed
//! by `MPI_Comm_free` keep their counts (folded into per-world-rank totals).
//!
//! # From when the counts are exact
//! Counting costs a lookup and an atomic addition per message, so it is on only when
//! persistence is in use: from `MPI_Init` when `CD_STORAGE_INFO` sets `dir` (the job declared
//! persistence), else from the first persistent `create_cd` (a collective step: every rank
//! starts counting as it enters it). Started at `MPI_Init`, the counts see every message and
//! the check is a proof. Started at a create, a message sent before it is not seen: received
//! after it, it shows as one received more than sent and the persist is refused (the error
//! says the counts began at the create); still in flight at the persist, it is missed. Such
//! persists are counted as unproven (`persist.unproven`) and the first is reported through
//! `tracing`. When counting is off the wrappers' fast path is unchanged: the flag is folded
//! into the relaxed load that statistics already needed ([`crate::intercept`]).
//!
//! # Known limits
//! A cancelled send (deprecated in MPI 4.0) stays counted as sent, so persists after it are
//! refused (never silently inconsistent). Blocking communicator constructors are not counted
//! (they agree on a context among all members before returning). Traffic of other threads
//! while one thread persists is outside the cut: advance persistent CDs when no other thread
//! communicates.

use crate::abi::{self, Comm, Group, Message, Request, Status};
use crate::by_tag::{ByTag, TagCounter};
use crate::pmpi::{real, safe};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock};

/// Whether the application's traffic is counted.
static ON: AtomicBool = AtomicBool::new(false);
/// Whether counting began at `MPI_Init`.
static SINCE_INIT: AtomicBool = AtomicBool::new(false);
/// Whether received messages are counted by tag too ([`count_by_tag`]).
static BY_TAG: AtomicBool = AtomicBool::new(false);

/// Whether the application's traffic is counted (one relaxed load).
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// At `MPI_Init`: counting starts now if `CD_STORAGE_INFO` sets `dir`.
pub(crate) fn init() {
    let declared = std::env::var(cd_core::STORAGE_INFO_ENV)
        .ok()
        .and_then(|text| cd_core::StorageInfo::parse(&text).ok())
        .is_some_and(|info| info.get("dir").is_some());
    if declared {
        count_from_init();
    }
}

/// Counts every message from `MPI_Init` on (at `MPI_Init`: a job that declared persistence, or
/// a ULFM job, whose in-job recovery checks the program's start with these counts).
pub(crate) fn count_from_init() {
    SINCE_INIT.store(true, Ordering::Relaxed);
    count_messages();
}

/// Counts received messages by tag too, from `MPI_Init` in a job that may contain a loss
/// (`crate::by_tag`).
pub(crate) fn count_by_tag() {
    BY_TAG.store(true, Ordering::Relaxed);
}

/// Starts counting, if not yet: at `MPI_Init` when `CD_STORAGE_INFO` sets `dir`, else when
/// the linking library says a persistent `create_cd` began (`crate::persistent_create`, on
/// every rank).
pub(crate) fn count_messages() {
    if !ON.swap(true, Ordering::SeqCst) {
        crate::intercept();
        tracing::debug!(
            since_init = SINCE_INIT.load(Ordering::Relaxed),
            "counting application messages for persistence"
        );
    }
}

/// One communicator's counts, by peer rank.
struct Peers {
    /// Messages sent to each peer rank (the remote group's for an intercommunicator).
    sent: Box<[AtomicU64]>,
    /// Messages received from each peer rank.
    received: Box<[AtomicU64]>,
    /// The same by tag, when a loss may be contained (`crate::by_tag`).
    received_tags: Option<Box<[TagCounter]>>,
    /// Collective calls made on the communicator.
    collectives: AtomicU64,
    /// The world rank of each peer rank (`-1`: not in `MPI_COMM_WORLD`).
    peer_world: Box<[c_int]>,
    /// The world ranks of every other rank its collectives involve (both groups of an
    /// intercommunicator).
    members_world: Box<[c_int]>,
}

impl Peers {
    /// Counts for `comm`, its groups translated to world ranks.
    fn new(comm: Comm) -> Peers {
        let me = safe::world_rank();
        let local = safe::comm_group(comm);
        let remote = safe::comm_test_inter(comm).then(|| safe::comm_remote_group(comm));
        let local_world = to_world(local);
        let peer_world = match remote {
            Some(g) => to_world(g),
            None => local_world.clone(),
        };
        let members_world: Box<[c_int]> = local_world
            .iter()
            .chain(if remote.is_some() {
                &peer_world[..]
            } else {
                &[]
            })
            .copied()
            .filter(|&w| w >= 0 && w != me)
            .collect();
        for g in [Some(local), remote].into_iter().flatten() {
            safe::group_free(g);
        }
        let zeros = || (0..peer_world.len()).map(|_| AtomicU64::new(0)).collect();
        let received_tags = BY_TAG.load(Ordering::Relaxed).then(|| {
            (0..peer_world.len())
                .map(|_| TagCounter::default())
                .collect()
        });
        Peers {
            sent: zeros(),
            received: zeros(),
            received_tags,
            collectives: AtomicU64::new(0),
            peer_world,
            members_world,
        }
    }

    /// Counts a message of `tag` received from peer rank `source`.
    #[inline]
    fn receive(&self, source: c_int, tag: c_int) {
        bump(&self.received, source);
        if let Some(tags) = &self.received_tags {
            if let Some(t) = usize::try_from(source).ok().and_then(|r| tags.get(r)) {
                t.bump(tag);
            }
        }
    }

    /// Adds this communicator's counts to world-indexed totals.
    fn add_to(&self, totals: &mut Totals) {
        for (i, &w) in self.peer_world.iter().enumerate() {
            if let Some(w) = usize::try_from(w).ok().filter(|&w| w < totals.sent.len()) {
                totals.sent[w] += self.sent[i].load(Ordering::Relaxed);
                totals.received[w] += self.received[i].load(Ordering::Relaxed);
            }
        }
        let n = self.collectives.load(Ordering::Relaxed);
        for &w in self.members_world.iter() {
            if let Some(w) = usize::try_from(w)
                .ok()
                .filter(|&w| w < totals.collectives.len())
            {
                totals.collectives[w] += n;
            }
        }
    }
}

/// The world ranks of a group's members, in group order (`-1` for one not in the world).
fn to_world(group: Group) -> Box<[c_int]> {
    let ranks: Vec<c_int> = (0..safe::group_size(group).max(0)).collect();
    let world_group = safe::comm_group(crate::pmpi::world::current());
    let out = safe::group_translate_ranks(group, &ranks, world_group);
    safe::group_free(world_group);
    out.into_iter()
        .map(|w| if w == abi::UNDEFINED { -1 } else { w })
        .collect()
}

/// World-indexed sums.
#[derive(Default)]
struct Totals {
    sent: Vec<u64>,
    received: Vec<u64>,
    collectives: Vec<u64>,
}

impl Totals {
    fn sized(n: usize) -> Totals {
        Totals {
            sent: vec![0; n],
            received: vec![0; n],
            collectives: vec![0; n],
        }
    }
}

/// The communicators with counts, by handle.
static COMMS: LazyLock<RwLock<HashMap<u64, Arc<Peers>>>> = LazyLock::new(Default::default);
/// Freed communicators still referred to (by a pending receive or a thread's cache).
static RETIRED: Mutex<Vec<Arc<Peers>>> = Mutex::new(Vec::new());
/// The counts of freed communicators nothing refers to any more.
static FOLDED: Mutex<Option<Totals>> = Mutex::new(None);
/// Bumped when a communicator is freed: the threads' cached lookups are then stale.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The last communicator this thread counted on: (handle, epoch, counts).
    static CACHE: RefCell<Option<(u64, u64, Arc<Peers>)>> = const { RefCell::new(None) };
}

/// The counts of `comm`, made on first use.
fn lookup(comm: Comm) -> Arc<Peers> {
    let key = comm.bits();
    if let Some(p) = COMMS.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Arc::clone(p);
    }
    let mut map = COMMS.write().unwrap_or_else(|e| e.into_inner());
    Arc::clone(map.entry(key).or_insert_with(|| Arc::new(Peers::new(comm))))
}

/// Runs `f` on the counts of `comm` (a thread-local cache hit in the common case, inlined into
/// every counted call).
#[inline(always)]
fn with_peers<R>(comm: Comm, f: impl FnOnce(&Arc<Peers>) -> R) -> Option<R> {
    let epoch = EPOCH.load(Ordering::Acquire);
    CACHE
        .try_with(|cache| {
            let mut cache = cache.borrow_mut();
            let fresh = matches!(&*cache, Some((k, e, _)) if *k == comm.bits() && *e == epoch);
            if !fresh {
                refill(&mut cache, comm, epoch);
            }
            cache.as_ref().map(|(_, _, p)| f(p))
        })
        .ok()
        .flatten()
}

/// [`with_peers`]' cache, for `comm` at `epoch`.
#[cold]
fn refill(cache: &mut Option<(u64, u64, Arc<Peers>)>, comm: Comm, epoch: u64) {
    *cache = Some((comm.bits(), epoch, lookup(comm)));
}

#[inline]
fn bump(counters: &[AtomicU64], rank: c_int) {
    if let Some(c) = usize::try_from(rank).ok().and_then(|r| counters.get(r)) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts a message sent to `dest` on `comm` (`MPI_PROC_NULL` is not).
#[inline]
pub(crate) fn sent(comm: Comm, dest: c_int) {
    if dest >= 0 {
        with_peers(comm, |p| bump(&p.sent, dest));
    }
}

/// Counts a message of `tag` received from `source` on `comm` (`MPI_PROC_NULL` is not).
#[inline]
pub(crate) fn received(comm: Comm, source: c_int, tag: c_int) {
    if source >= 0 {
        with_peers(comm, |p| p.receive(source, tag));
    }
}

/// Counts a collective call on `comm`.
#[inline]
pub(crate) fn collective(comm: Comm) {
    with_peers(comm, |p| p.collectives.fetch_add(1, Ordering::Relaxed));
}

/// Forgets a communicator the application freed (its counts are kept).
pub(crate) fn retire(comm: Comm) {
    let removed = COMMS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&comm.bits());
    let Some(peers) = removed else {
        return;
    };
    EPOCH.fetch_add(1, Ordering::AcqRel);
    let _ = CACHE.try_with(|c| c.borrow_mut().take());
    let mut retired = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    retired.push(peers);
    fold(&mut retired);
}

/// Folds the retired communicators nothing refers to into the totals.
fn fold(retired: &mut Vec<Arc<Peers>>) {
    let mut folded = FOLDED.lock().unwrap_or_else(|e| e.into_inner());
    retired.retain(|p| {
        if Arc::strong_count(p) > 1 {
            return true;
        }
        let totals = folded.get_or_insert_with(|| Totals::sized(world_size()));
        p.add_to(totals);
        false
    });
}

/// Adds counts that this process did not make itself (per world rank): a replacement takes
/// over the lost rank's counts at the version it restores (`crate::recovery`), so that the
/// next persist's check compares it with its peers as if it had never been lost.
pub(crate) fn preset(sent: &[u64], received: &[u64], collectives: &[u64]) {
    let mut folded = FOLDED.lock().unwrap_or_else(|e| e.into_inner());
    let totals = folded.get_or_insert_with(|| Totals::sized(world_size()));
    for (sum, part) in [
        (&mut totals.sent, sent),
        (&mut totals.received, received),
        (&mut totals.collectives, collectives),
    ] {
        for (s, p) in sum.iter_mut().zip(part) {
            *s += p;
        }
    }
}

/// Messages received on the communicators `comms`, by world rank and tag (what the recovery
/// of a lost rank compares with its peers' journals), counted in a job that may contain a
/// loss.
pub(crate) fn received_on(comms: &[Comm]) -> Vec<ByTag> {
    let mut out = vec![ByTag::default(); world_size()];
    let map = COMMS.read().unwrap_or_else(|e| e.into_inner());
    for peers in comms.iter().filter_map(|c| map.get(&c.bits())) {
        let Some(tags) = &peers.received_tags else {
            continue;
        };
        for (t, &w) in tags.iter().zip(peers.peer_world.iter()) {
            if let Some(slot) = usize::try_from(w).ok().and_then(|w| out.get_mut(w)) {
                slot.add_all(&t.read());
            }
        }
    }
    out
}

fn world_size() -> usize {
    safe::world_size().max(0) as usize
}

/// What a pending request will complete.
#[derive(Clone)]
enum Pending {
    /// A receive on the communicator of these counts.
    Receive(Arc<Peers>),
    /// A nonblocking collective (or `MPI_Comm_idup`).
    Collective,
}

struct Entry {
    pending: Pending,
    /// Freed by the application while pending: kept in MPI, tested at the next check.
    orphan: bool,
    /// For an orphan persistent request: to be freed in MPI once it completes.
    free_after: bool,
}

/// Pending requests, by handle.
static REQUESTS: LazyLock<Mutex<HashMap<u64, Entry>>> = LazyLock::new(Default::default);
/// How many requests [`REQUESTS`] holds: completion calls skip the table when 0.
static TRACKED: AtomicUsize = AtomicUsize::new(0);

fn requests() -> std::sync::MutexGuard<'static, HashMap<u64, Entry>> {
    REQUESTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn track(request: Request, pending: Pending) {
    put_back(
        request,
        Entry {
            pending,
            orphan: false,
            free_after: false,
        },
    );
}

fn put_back(request: Request, entry: Entry) {
    if requests().insert(request.bits(), entry).is_none() {
        TRACKED.fetch_add(1, Ordering::Release);
    }
}

fn untrack(request: Request) -> Option<Entry> {
    let entry = requests().remove(&request.bits());
    if entry.is_some() {
        TRACKED.fetch_sub(1, Ordering::Release);
    }
    entry
}

/// Whether any request is pending (completion calls need the table only then).
#[inline]
pub(crate) fn tracking() -> bool {
    TRACKED.load(Ordering::Acquire) > 0
}

/// A receive request posted on `comm`: pending until it completes.
pub(crate) fn receive_posted(request: Request, comm: Comm) {
    if let Some(peers) = with_peers(comm, Arc::clone) {
        track(request, Pending::Receive(peers));
    }
}

/// A nonblocking collective started on `comm`: counted, and pending until it completes.
pub(crate) fn collective_posted(request: Request, comm: Comm) {
    collective(comm);
    collective_pending(request);
}

/// A nonblocking collective counted already is pending under `request` (posted again after a
/// repair, `crate::recovery`).
pub(crate) fn collective_pending(request: Request) {
    track(request, Pending::Collective);
}

/// The pending entries of the requests a completion call is given, taken out of the table
/// *before* the call: once MPI completes and frees a request, another thread may get the same
/// handle for a new one, and its entry must not meet this one's.
pub(crate) struct Taken(Vec<(Request, Entry)>);

/// Takes the entries of `handles` (those pending here) before a completion call on them.
pub(crate) fn take(handles: &[Request]) -> Taken {
    let mut table = requests();
    let taken: Vec<(Request, Entry)> = handles
        .iter()
        .filter_map(|&h| table.remove(&h.bits()).map(|e| (h, e)))
        .collect();
    drop(table);
    TRACKED.fetch_sub(taken.len(), Ordering::Release);
    Taken(taken)
}

/// After the completion call: the completed slots (`handles` as MPI got them) are counted,
/// the entries of the others go back.
pub(crate) fn settle(taken: Taken, handles: &[Request], slots: &[usize], statuses: &[Status]) {
    for (request, entry) in taken.0 {
        let done = slots
            .iter()
            .find(|&&i| handles.get(i) == Some(&request))
            .and_then(|&i| statuses.get(i));
        match done {
            Some(status) => finish(&entry, status),
            None => put_back(request, entry),
        }
    }
}

fn finish(entry: &Entry, status: &Status) {
    if let Pending::Receive(peers) = &entry.pending {
        if !safe::test_cancelled(status) {
            peers.receive(status.source(), status.tag());
        }
    }
}

/// The application frees `request`: if it is pending here, it is kept in MPI (the caller
/// must not free it) and tested at the next check; returns whether it was kept.
/// `persistent`: the request is persistent, to be freed in MPI once complete unless the
/// caller keeps it allocated anyway (`keep_allocated`).
pub(crate) fn orphan(request: Request, persistent: bool, keep_allocated: bool) -> bool {
    match requests().get_mut(&request.bits()) {
        Some(entry) => {
            entry.orphan = true;
            entry.free_after = persistent && !keep_allocated;
            true
        }
        None => false,
    }
}

/// Tests the orphaned requests: a completed one is counted and dropped.
fn settle_orphans() {
    let orphans: Vec<Request> = requests()
        .iter()
        .filter(|(_, e)| e.orphan)
        .map(|(&h, _)| Request::from_bits(h))
        .collect();
    for request in orphans {
        let Some(entry) = untrack(request) else {
            continue;
        };
        let mut handle = request;
        let (mut flag, mut status) = (0, Status::zeroed());
        // SAFETY: a request the interposer kept alive for this test.
        let rc = unsafe { real::Test(&mut handle, &mut flag, &mut status) };
        if rc != abi::SUCCESS || flag == 0 {
            put_back(request, entry);
            continue;
        }
        finish(&entry, &status);
        if entry.free_after {
            let mut h = request;
            // SAFETY: an inactive persistent request the application freed.
            unsafe { real::Request_free(&mut h) };
            freed_persistent(request);
        }
    }
}

/// What a posting call (or each start of a persistent request) counts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Counts {
    /// A send to `dest` on `comm`.
    Send(Comm, c_int),
    /// A receive on `comm`, pending until complete.
    Receive(Comm),
    /// A nonblocking collective on `comm`, pending until complete.
    Collective(Comm),
    /// Nothing (a receive of a message matched before counting began).
    Nothing,
}

/// Counts a successful post of `request`.
pub(crate) fn posted(counts: Counts, request: Request) {
    match counts {
        Counts::Send(comm, dest) => sent(comm, dest),
        Counts::Receive(comm) => receive_posted(request, comm),
        Counts::Collective(comm) => collective_posted(request, comm),
        Counts::Nothing => {}
    }
}

/// A persistent request this module knows.
#[derive(Clone, Copy)]
struct Persistent {
    /// What each start counts.
    counts: Counts,
    /// For one made by a large-count call beyond `INT_MAX` (`large`), what a logged start
    /// of it marks the log with; `None` for the others.
    refusal: Option<&'static str>,
}

/// Persistent requests, by handle: registered whether counting or not (they may be made
/// before counting starts), at their `_init` call, forgotten when freed. A handle MPI hands
/// out again is registered again, replacing the entry of the request it named before.
static PERSISTENT: LazyLock<Mutex<HashMap<u64, Persistent>>> = LazyLock::new(Default::default);

fn persistent() -> std::sync::MutexGuard<'static, HashMap<u64, Persistent>> {
    PERSISTENT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remembers a persistent request and what each of its starts counts.
pub(crate) fn made_persistent(request: Request, what: Counts) {
    persistent().insert(
        request.bits(),
        Persistent {
            counts: what,
            refusal: None,
        },
    );
}

/// Remembers a persistent request made by a large-count call beyond `INT_MAX`: what each
/// start counts, and `refusal`, what a logged start marks the log with ([`start_refusal`]).
#[cfg(mpi4_full)]
pub(crate) fn made_beyond(request: Request, what: Counts, refusal: &'static str) {
    persistent().insert(
        request.bits(),
        Persistent {
            counts: what,
            refusal: Some(refusal),
        },
    );
}

/// Why a logged start of `request` cannot be replayed, when it was made by a large-count call
/// beyond `INT_MAX` (the completion call's check, on the cold path of a start whose request
/// the thread's engine does not know).
pub(crate) fn start_refusal(request: Request) -> Option<&'static str> {
    persistent().get(&request.bits()).and_then(|p| p.refusal)
}

/// Forgets a persistent request freed in MPI.
pub(crate) fn freed_persistent(request: Request) {
    let mut map = persistent();
    if !map.is_empty() {
        map.remove(&request.bits());
    }
}

/// Whether `request` is a persistent request this module knows.
pub(crate) fn is_persistent(request: Request) -> bool {
    let map = persistent();
    !map.is_empty() && map.contains_key(&request.bits())
}

/// `MPI_Start` of `request`: a send is counted, a receive is pending.
pub(crate) fn started(request: Request) {
    let what = persistent().get(&request.bits()).map(|p| p.counts);
    if let Some(what) = what {
        posted(what, request);
    }
}

/// Matched messages (`MPI_Mprobe`, `MPI_Improbe`) not yet received, with their communicator.
static MESSAGES: LazyLock<Mutex<HashMap<u64, Comm>>> = LazyLock::new(Default::default);

/// A message matched by a probe on `comm`.
pub(crate) fn probed(message: Message, comm: Comm) {
    let p = abi::predefined();
    if message != p.message_null && message != p.message_no_proc {
        MESSAGES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(message.bits(), comm);
    }
}

/// The communicator of a matched message about to be received (forgotten here).
pub(crate) fn message_comm(message: Message) -> Option<Comm> {
    MESSAGES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&message.bits())
}

/// This rank's message counts, by world rank: the evidence a persist checks for messages in
/// flight (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageCounts {
    /// Messages sent to each rank (counted when started).
    pub sent: Vec<u64>,
    /// Messages received from each rank (counted when complete; cancelled ones not).
    pub received: Vec<u64>,
    /// Collective calls made on communicators shared with each rank (self excluded).
    pub collectives: Vec<u64>,
    /// Receive requests posted and not completed.
    pub pending_receives: u64,
    /// Nonblocking collectives (and `MPI_Comm_idup`) started and not completed.
    pub pending_collectives: u64,
    /// Whether counting began at `MPI_Init` (the counts are exact), not at the first
    /// persistent `create_cd` (a message sent before then is not seen).
    pub since_init: bool,
}

/// This rank's counts in world ranks (orphaned requests tested first).
pub fn message_counts() -> MessageCounts {
    settle_orphans();
    let n = world_size();
    let mut totals = Totals::sized(n);
    for peers in COMMS.read().unwrap_or_else(|e| e.into_inner()).values() {
        peers.add_to(&mut totals);
    }
    {
        let mut retired = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        fold(&mut retired);
        for peers in retired.iter() {
            peers.add_to(&mut totals);
        }
    }
    if let Some(folded) = FOLDED.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        for (sum, part) in [
            (&mut totals.sent, &folded.sent),
            (&mut totals.received, &folded.received),
            (&mut totals.collectives, &folded.collectives),
        ] {
            for (s, p) in sum.iter_mut().zip(part) {
                *s += p;
            }
        }
    }
    let (mut receives, mut collectives) = (0u64, 0u64);
    for entry in requests().values() {
        match entry.pending {
            Pending::Receive(_) => receives += 1,
            Pending::Collective => collectives += 1,
        }
    }
    MessageCounts {
        sent: totals.sent,
        received: totals.received,
        collectives: totals.collectives,
        pending_receives: receives,
        pending_collectives: collectives,
        since_init: SINCE_INIT.load(Ordering::Relaxed),
    }
}
