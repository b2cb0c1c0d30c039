//! The application's choices since the version, which a replacement must repeat to re-execute
//! the same way and which die with the lost process: the source a receive from
//! `MPI_ANY_SOURCE` matched, the request `MPI_Waitany`/`MPI_Testany` completed, the set
//! `MPI_Waitsome`/`MPI_Testsome` completed, the flag of `MPI_Test`/`MPI_Testall`, what
//! `MPI_Iprobe`, `MPI_Improbe` or a probe from `MPI_ANY_SOURCE` found.
//!
//! # Pessimistic, without the partner's help
//! Each choice is written into its partner's memory (rank + 1, modulo the size) before the
//! application sees it: an `MPI_Put` into a window the runtime allocates on the world, then
//! `MPI_Win_flush`, which returns once the data is at the target. The partner takes no part
//! (passive target: RDMA on a network, a memory copy on one node), so no progress thread is
//! needed and a partner busy computing holds nobody up. The rank after the partner gets one
//! word per version saying that choices were made: if a rank and its partner are lost
//! together, the survivors can tell whether what died mattered (when it did, the job ends
//! clearly).
//!
//! Consecutive tests that found nothing are one record with a repeat count (a polling loop
//! rewrites one record in place), so the window ([`CHOICES_ENV`] bytes, the smallest any rank
//! asks for) fills with choices, not with polls. A rank whose choices overflow it stops
//! containing. A rank that stops containing, for this or any reason, marks its partner's first
//! slot ([`mark_stopped`]): a later loss of that rank ends the job clearly at the repair (it
//! could not be repeated), a loss of another ends it as any stopped containment does. A put
//! that fails (the partner is lost) keeps the record for the repair, which writes it at the
//! new partner; the word at the rank after the partner, written before the first record, still
//! tells that a choice was made.
//!
//! # Replay
//! At a repair the partner reads the lost rank's choices from its own memory and sends them to
//! the replacement (`super::resync`); then every rank allocates a window on the repaired world
//! (the old one is not freed: that is collective over a world with a dead member) and writes
//! its choices since the version there again. The replacement repeats each choice in order:
//! wildcard receives by their place among its wildcard receives since the version (an
//! `MPI_Irecv`'s match is known only when it completes), the others in call order. When they
//! run out it chooses live. It records every choice, repeated or live, like every rank.
//!
//! A choice in the program's start is not kept (the start is re-executed from `MPI_Init`, and
//! its record would have to live for the whole run): it stops containment. Open MPI 5 says
//! once per job that its one-sided components are not tested after a failure; the runtime
//! uses a window only while its members live, and reads the lost rank's choices from local
//! memory.

use crate::abi::{self, Comm, Win};
use crate::pmpi::{real, safe};
use std::collections::{BTreeMap, VecDeque};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Bytes of each rank's window for its predecessor's choices (default 1 MiB: 32,766
/// choices).
pub const CHOICES_ENV: &str = "CD_ULFM_CHOICES_BYTES";
const DEFAULT_BYTES: usize = 1 << 20;

/// Where things are in a window: the word of the rank two before, then the records of the
/// rank before, each sealed ([`Record::sealed`]): the first slot whose record is not sealed
/// for the current version ends them.
const FLAG_AT: usize = 0;
const RECORDS_AT: usize = 8;

/// One choice as the window holds it.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(crate) struct Record {
    kind: u32,
    a: c_int,
    b: c_int,
    c: c_int,
    /// A wildcard receive's place; for the others, how many times in a row (a test that found
    /// nothing).
    n: u64,
    /// In a window: a checksum of the rest and of the version ([`Record::sealed`]); 0 in this
    /// rank's own log.
    seal: u64,
}

const SIZE: usize = std::mem::size_of::<Record>();

/// What a record is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum Kind {
    /// A receive from `MPI_ANY_SOURCE`: `a` the source, `b` the tag, `n` its place.
    Wildcard = 1,
    /// `MPI_Waitany`/`MPI_Testany`: `a` the flag, `b` the index.
    Any = 2,
    /// `MPI_Waitsome`/`MPI_Testsome`: `a` how many completed (or `MPI_UNDEFINED`), then as many
    /// [`Kind::Index`] records.
    Some = 3,
    Index = 4,
    /// `MPI_Test`/`MPI_Testall`: `a` the flag.
    Test = 5,
    /// `MPI_Probe` from `MPI_ANY_SOURCE`: `b` the source found, `c` the tag.
    Probe = 6,
    /// `MPI_Iprobe`: `a` the flag, `b` the source found, `c` the tag.
    Iprobe = 7,
    /// In a window's first slot: the rank stopped containing (it did something a replacement
    /// could not repeat); its records do not count.
    Stopped = 8,
    /// `MPI_Mprobe` from `MPI_ANY_SOURCE`: as [`Kind::Probe`].
    Mprobe = 9,
    /// `MPI_Improbe`: as [`Kind::Iprobe`].
    Improbe = 10,
}

impl Record {
    fn new(kind: Kind, a: c_int, b: c_int, n: u64) -> Record {
        Record {
            kind: kind as u32,
            a,
            b,
            c: 0,
            n,
            seal: 0,
        }
    }

    /// This record as written into a window for version `tag`: sealed by a checksum of its
    /// fields and the version, never 0. A slot left from an older version, never written
    /// (zeroed), or torn by a writer that died in the middle of its put, is not sealed for the
    /// current version: the records end there (the choice of a torn one was not delivered).
    fn sealed(self, tag: u64) -> Record {
        let fields = [
            u64::from(self.kind) | u64::from(self.a as u32) << 32,
            u64::from(self.b as u32) | u64::from(self.c as u32) << 32,
            self.n,
        ];
        let mut h = tag ^ 0x9E37_79B9_7F4A_7C15;
        for w in fields {
            h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h ^= h >> 31;
        }
        Record {
            seal: h | 1,
            ..self
        }
    }

    /// A test that found nothing, which the next one like it repeats.
    fn repeats(&self) -> bool {
        self.kind != Kind::Wildcard as u32 && self.kind != Kind::Index as u32 && self.a == 0
    }
}

/// A window on the current world.
#[derive(Clone, Copy)]
struct Window {
    win: Win,
    /// Its memory (exposed address) and length.
    base: usize,
    bytes: usize,
    /// This rank's partner on that world, and the rank after it.
    partner: c_int,
    next: c_int,
}

struct State {
    win: Option<Window>,
    /// This rank's records since the version.
    log: Vec<Record>,
    /// Whether the rank after the partner was told of choices since the version.
    flagged: bool,
    /// Wildcard receives since the version.
    wildcards: u64,
    /// A replacement's choices to repeat: wildcard receives by place, the others in order.
    replay_wildcards: BTreeMap<u64, (c_int, c_int)>,
    replay: VecDeque<Record>,
}

static STATE: Mutex<State> = Mutex::new(State {
    win: None,
    log: Vec::new(),
    flagged: false,
    wildcards: 0,
    replay_wildcards: BTreeMap::new(),
    replay: VecDeque::new(),
});

/// Whether a replacement still has choices to repeat (one relaxed load for the others).
static REPLAYING: AtomicBool = AtomicBool::new(false);
/// Whether this rank has a window for its choices ([`State::win`], one relaxed load).
static OPEN: AtomicBool = AtomicBool::new(false);
/// Choices recorded, and repeated.
pub(super) static RECORDED: AtomicU64 = AtomicU64::new(0);
pub(super) static REPEATED: AtomicU64 = AtomicU64::new(0);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    fn set_win(&mut self, win: Option<Window>) {
        OPEN.store(win.is_some(), Ordering::Relaxed);
        self.win = win;
    }
}

/// Whether a choice made now is recorded: while a loss is contained, outside the start.
/// Otherwise, in the start, or with no window, the choice stops containment, for `what`.
pub(crate) fn admit(what: &'static str) -> bool {
    if crate::errors::containing() && !crate::errors::in_start() {
        if OPEN.load(Ordering::Relaxed) {
            return true;
        }
        crate::errors::stop_containing(
            "the application made a choice (a receive from MPI_ANY_SOURCE, MPI_Waitany and \
             the like) and its partner's window for choices could not be allocated",
        );
        return false;
    }
    if crate::errors::keeping() {
        crate::errors::stop_containing(what);
    }
    false
}

/// Whether choices are recorded now (no side effect; three relaxed loads).
#[inline]
pub(crate) fn recording() -> bool {
    crate::errors::containing() && !crate::errors::in_start() && OPEN.load(Ordering::Relaxed)
}

/// Allocates the window on `world` (collective): at `MPI_Init` of the job's own ranks, and
/// on each repaired world. A failure leaves none (a choice then stops containment).
pub(crate) fn open(world: Comm) {
    let wanted = std::env::var(CHOICES_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(DEFAULT_BYTES as u64)
        .clamp((RECORDS_AT + SIZE) as u64, i64::MAX as u64);
    // every window as long as the shortest asked for (a replacement has mpirun's environment,
    // not its lost rank's): a put never goes past its target's
    let mut bytes = wanted;
    // SAFETY: one u64 in, one out.
    let rc = unsafe {
        real::Allreduce(
            (&wanted as *const u64).cast(),
            (&mut bytes as *mut u64).cast(),
            1,
            abi::predefined().uint64,
            abi::predefined().op_min,
            world,
        )
    };
    let mut st = state();
    st.set_win(None);
    let Ok(len) = usize::try_from(bytes) else {
        return;
    };
    if rc != abi::SUCCESS {
        tracing::warn!(rc, "no window for the application's choices");
        return;
    }
    let mut base: *mut u8 = std::ptr::null_mut();
    let mut win = Win::from_bits(0);
    // SAFETY: MPI writes the base address and the handle; `bytes` fits an MPI_Aint (clamped).
    let rc = unsafe {
        real::Win_allocate(
            bytes as i64,
            1,
            abi::predefined().info_null,
            world,
            (&mut base as *mut *mut u8).cast(),
            &mut win,
        )
    };
    if rc != abi::SUCCESS || base.is_null() {
        tracing::warn!(rc, "no window for the application's choices");
        return;
    }
    // SAFETY: our window's own memory, `len` bytes, zeroed before anyone writes into it.
    unsafe { std::ptr::write_bytes(base, 0, len) };
    // SAFETY: no pointer is passed; a failed put then returns a code instead of aborting.
    let rc = unsafe {
        match real::Win_set_errhandler(win, abi::predefined().errors_return) {
            abi::SUCCESS => real::Win_lock_all(0, win),
            rc => rc,
        }
    };
    if rc != abi::SUCCESS {
        tracing::warn!(
            rc,
            "no access epoch on the window for the application's choices"
        );
        return;
    }
    let (me, n) = (safe::comm_rank(world), safe::comm_size(world).max(1));
    st.set_win(Some(Window {
        win,
        base: base.expose_provenance(),
        bytes: len,
        partner: (me + 1) % n,
        next: (me + 2) % n,
    }));
}

/// At `MPI_Finalize` (collective on the current world): the window is freed, before the
/// finalize, which would otherwise wait on it for the survivors of a repair to disconnect.
pub(crate) fn close() {
    let mut st = state();
    if let Some(Window { mut win, .. }) = st.win {
        st.set_win(None);
        // SAFETY: our window; nothing uses it after this.
        unsafe {
            real::Win_unlock_all(win);
            real::Win_free(&mut win);
        }
    }
}

/// A persist completed: the choices start again from this version (and a rank that stopped
/// containing says so again, for the new version).
pub(crate) fn version_complete() {
    let mut st = state();
    st.log.clear();
    st.flagged = false;
    st.wildcards = 0;
    drop(st);
    if crate::errors::stopped() {
        mark_stopped();
    }
}

/// This rank stopped containing (`crate::errors::stop_containing`, which calls this): its
/// partner's first slot says so, sealed for the current version, so that a loss of this rank
/// ends the job at the repair ([`truncated`]) instead of a replacement that cannot repeat it.
/// Written again at each version and each repair.
pub(crate) fn mark_stopped() {
    let st = state();
    let Some(w) = st.win else {
        return;
    };
    let mark = Record::new(Kind::Stopped, 0, 0, 0).sealed(tag());
    if !put(w.win, w.partner, RECORDS_AT, bytemuck::bytes_of(&mark)) {
        tracing::warn!("the partner could not be told that this rank stopped containing");
    }
}

/// The version tag records carry: persists completed, plus one (0 is "none").
fn tag() -> u64 {
    super::completed() + 1
}

/// Puts `bytes` at `at` in `target`'s window and waits until they are there.
fn put(win: Win, target: c_int, at: usize, bytes: &[u8]) -> bool {
    let byte = abi::predefined().byte;
    // SAFETY: our buffer, `bytes.len()` long; the target's window is as long as ours, and
    // every offset written stays inside it (checked by the callers against its size).
    unsafe {
        real::Put(
            bytes.as_ptr().cast(),
            bytes.len() as c_int,
            byte,
            target,
            at as i64,
            bytes.len() as c_int,
            byte,
            win,
        ) == abi::SUCCESS
            && real::Win_flush(target, win) == abi::SUCCESS
    }
}

/// Why records are not at the partner.
enum Unreplicated {
    /// They do not fit its window (this rank stops containing: [`mark_stopped`]).
    Overflow,
    /// A put failed (the partner is lost: a repair is coming, whose [`reopen`] writes them at
    /// the new partner).
    Failed,
}

/// Writes records `from..` of `st.log`, sealed, at the partner (one put); the flag at the rank
/// after it first, the first time since the version.
fn replicate(st: &mut State, from: usize) -> Result<(), Unreplicated> {
    let Some(w) = st.win else {
        return Err(Unreplicated::Failed);
    };
    let tag = tag();
    if !st.flagged && w.next != w.partner {
        if !put(w.win, w.next, FLAG_AT, &tag.to_le_bytes()) {
            return Err(Unreplicated::Failed);
        }
        st.flagged = true;
    }
    if st.log.len() > (w.bytes - RECORDS_AT) / SIZE {
        return Err(Unreplicated::Overflow);
    }
    let sealed: Vec<Record> = st.log[from..].iter().map(|r| r.sealed(tag)).collect();
    if !put(
        w.win,
        w.partner,
        RECORDS_AT + from * SIZE,
        bytemuck::cast_slice(&sealed),
    ) {
        return Err(Unreplicated::Failed);
    }
    Ok(())
}

/// After [`replicate`] failed: a full window stops containment (a later loss of this rank
/// ends the job: [`mark_stopped`]); a failed put waits for the repair.
fn unreplicated(why: Unreplicated) {
    match why {
        Unreplicated::Overflow => crate::errors::stop_containing(
            "the application's choices since the version do not fit its partner's window \
             (CD_ULFM_CHOICES_BYTES)",
        ),
        Unreplicated::Failed => {
            tracing::warn!("a choice could not be written at the partner; kept for the repair")
        }
    }
}

/// Records `records`, one choice, at the partner before the application sees it; a test that
/// found nothing again adds to the last record's count.
fn record(records: &[Record]) {
    if !recording() {
        return;
    }
    let mut st = state();
    RECORDED.fetch_add(1, Ordering::Relaxed);
    let again = matches!(
        (records, st.log.last()),
        ([one], Some(last)) if one.repeats() && Record { n: 1, ..*last } == *one
    );
    let from = if again {
        let last = st.log.len() - 1;
        st.log[last].n += 1;
        last
    } else {
        st.log.extend_from_slice(records);
        st.log.len() - records.len()
    };
    if let Err(why) = replicate(&mut st, from) {
        drop(st);
        unreplicated(why);
    }
}

/// A new receive from `MPI_ANY_SOURCE`: its place, and the source and tag to receive from
/// instead if a replacement repeats it (the source in the communicator of the receive).
pub(crate) fn wildcard() -> (u64, Option<(c_int, c_int)>) {
    let mut st = state();
    let place = st.wildcards;
    st.wildcards += 1;
    let repeat = st.replay_wildcards.remove(&place);
    if repeat.is_some() {
        REPEATED.fetch_add(1, Ordering::Relaxed);
        if st.replay_wildcards.is_empty() && st.replay.is_empty() {
            REPLAYING.store(false, Ordering::Relaxed);
        }
    }
    (place, repeat)
}

/// The receive from `MPI_ANY_SOURCE` at `place` matched `source` with `tag`.
pub(crate) fn matched(place: u64, source: c_int, tag: c_int) {
    record(&[Record::new(Kind::Wildcard, source, tag, place)]);
}

/// `MPI_Waitany`/`MPI_Testany` chose: `flag`, `index`.
pub(crate) fn chose_any(flag: bool, index: c_int) {
    record(&[Record::new(Kind::Any, c_int::from(flag), index, 1)]);
}

/// `MPI_Waitsome`/`MPI_Testsome` chose `indices` (`None`: `MPI_UNDEFINED`).
pub(crate) fn chose_some(indices: Option<&[c_int]>) {
    let head = match indices {
        Some(list) => Record::new(Kind::Some, list.len() as c_int, 0, 1),
        None => Record::new(Kind::Some, abi::UNDEFINED, 0, 1),
    };
    let mut records = vec![head];
    records.extend(
        indices
            .into_iter()
            .flatten()
            .map(|&i| Record::new(Kind::Index, i, 0, 1)),
    );
    record(&records);
}

/// `MPI_Test`/`MPI_Testall` chose `flag`.
pub(crate) fn chose_test(flag: bool) {
    record(&[Record::new(Kind::Test, c_int::from(flag), 0, 1)]);
}

/// A probe (`kind`: [`Kind::Probe`], [`Kind::Iprobe`], [`Kind::Mprobe`] or [`Kind::Improbe`])
/// chose: whether it `found` a message,
/// and from which `source` with which `tag`.
pub(crate) fn chose_probe(kind: Kind, found: bool, source: c_int, tag: c_int) {
    let mut r = Record::new(kind, c_int::from(found), source, 1);
    r.c = tag;
    record(&[r]);
}

/// The next choice a replacement repeats for a call that chooses `kind`: `None` when there is
/// none left (it chooses live). A record of another kind means the replacement does not
/// re-execute as the lost process did: the job ends.
pub(crate) fn repeat(kind: Kind) -> Option<Record> {
    if !REPLAYING.load(Ordering::Relaxed) {
        return None;
    }
    let mut st = state();
    let front = *st.replay.front()?;
    if front.kind != kind as u32 {
        drop(st);
        diverged(kind, front);
    }
    if front.n > 1 && front.repeats() {
        if let Some(f) = st.replay.front_mut() {
            f.n -= 1;
        }
    } else {
        st.replay.pop_front();
    }
    REPEATED.fetch_add(1, Ordering::Relaxed);
    if st.replay.is_empty() && st.replay_wildcards.is_empty() {
        REPLAYING.store(false, Ordering::Relaxed);
    }
    Some(front)
}

/// The indices of a repeated [`Kind::Some`] record (`None`: `MPI_UNDEFINED`).
pub(crate) fn repeat_some(head: Record) -> Option<Vec<c_int>> {
    if head.a == abi::UNDEFINED {
        return None;
    }
    let indices = (0..head.a.max(0))
        .map(|_| repeat(Kind::Index).map_or(abi::UNDEFINED, |r| r.a))
        .collect();
    Some(indices)
}

impl Record {
    /// The flag of an [`Kind::Any`] or [`Kind::Test`] record.
    pub(crate) fn flag(&self) -> bool {
        self.a != 0
    }

    /// The index of an [`Kind::Any`] record; the source a probe found.
    pub(crate) fn index(&self) -> c_int {
        self.b
    }
}

/// A replacement met a call that chooses otherwise than the lost process's next choice.
fn diverged(kind: Kind, recorded: Record) -> ! {
    let line = format!(
        "libcd: rank {} (a replacement) does not re-execute as the lost process did: it reached \
         a {kind:?} choice where the lost process's next was {recorded:?}; the job ends\n",
        safe::world_rank()
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    // SAFETY: ends the job.
    unsafe { real::Abort(crate::pmpi::world::current(), crate::loss::LOST_EXIT_CODE) };
    std::process::exit(crate::loss::LOST_EXIT_CODE)
}

/// At a repair, before the hand-over (`n` ranks on the repaired world, `lost` the replaced
/// ranks): a rank lost with its partner, whose choices since the version died with them as
/// this rank knows, as (rank, partner). Every rank that is the next but one of such a rank
/// knows whether it chose; when that rank is lost too, nobody does, and every rank says so.
pub(super) fn orphaned(me: usize, n: usize, lost: &[usize]) -> Option<(usize, usize)> {
    let gone = |p: usize| lost.contains(&p);
    lost.iter().copied().find_map(|r| {
        let (partner, next) = ((r + 1) % n, (r + 2) % n);
        let unknown = next == r || gone(next);
        let chose = unknown || (next == me && flagged_by_predecessor_but_one());
        (gone(partner) && chose).then_some((r, partner))
    })
}

/// At a repair: a lost rank that had stopped containing (this rank is its partner: its first
/// slot says so), so its replacement could not repeat it.
pub(super) fn truncated(me: usize, n: usize, lost: &[usize]) -> Option<usize> {
    let r = (me + n - 1) % n;
    (lost.contains(&r) && predecessor_log().is_none()).then_some(r)
}

/// After a repair (collective on the repaired world): a window on it, into which this rank's
/// choices since the version are written again.
pub(super) fn reopen(repaired: Comm) {
    open(repaired);
    if crate::errors::stopped() {
        mark_stopped();
        return;
    }
    let mut st = state();
    st.flagged = false;
    if st.log.is_empty() {
        return;
    }
    if let Err(why) = replicate(&mut st, 0) {
        drop(st);
        if matches!(why, Unreplicated::Failed) {
            crate::errors::stop_containing(
                "the application's choices since the version could not be written at its new \
                 partner after a repair",
            );
        }
        unreplicated(why);
    }
}

/// Whether the rank two before this one said it made choices since the version.
fn flagged_by_predecessor_but_one() -> bool {
    let st = state();
    let Some(Window { win, base, .. }) = st.win else {
        return false;
    };
    // SAFETY: no pointer is passed; makes the completed puts visible to local loads.
    unsafe { real::Win_sync(win) };
    let base = std::ptr::with_exposed_provenance::<u8>(base);
    // SAFETY: our window's memory, at least `RECORDS_AT` bytes; its writer is dead (the runtime
    // reads its own memory after the failure).
    let word = unsafe { std::ptr::read_volatile(base.add(FLAG_AT).cast::<u64>()) };
    word == tag()
}

/// The records the rank before this one wrote since the version, unsealed; `None` when it had
/// stopped containing.
fn predecessor_log() -> Option<Vec<Record>> {
    let st = state();
    let Some(Window {
        win, base, bytes, ..
    }) = st.win
    else {
        return Some(Vec::new());
    };
    // SAFETY: no pointer is passed; makes the completed puts visible to local loads.
    unsafe { real::Win_sync(win) };
    let base = std::ptr::with_exposed_provenance::<u8>(base);
    let tag = tag();
    let mut log = Vec::new();
    for slot in 0..(bytes - RECORDS_AT) / SIZE {
        // SAFETY: our window's memory, `bytes` long; the slot lies inside it. Its writer is
        // dead.
        let r: Record =
            unsafe { std::ptr::read_volatile(base.add(RECORDS_AT + slot * SIZE).cast()) };
        let unsealed = Record { seal: 0, ..r };
        if r.seal != unsealed.sealed(tag).seal {
            break;
        }
        if r.kind == Kind::Stopped as u32 {
            return None;
        }
        log.push(unsealed);
    }
    Some(log)
}

/// The records the rank before this one wrote since the version, as bytes (none when it had
/// stopped containing: [`truncated`] ended the repair).
pub(super) fn predecessor_records() -> Vec<u8> {
    bytemuck::cast_slice(&predecessor_log().unwrap_or_default()).to_vec()
}

/// A replacement's choices to repeat, from its partner.
pub(super) fn install(bytes: &[u8]) {
    let records: Vec<Record> = bytes
        .chunks_exact(SIZE)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    let mut st = state();
    st.replay_wildcards.clear();
    st.replay.clear();
    for r in records {
        if r.kind == Kind::Wildcard as u32 {
            st.replay_wildcards.insert(r.n, (r.a, r.b));
        } else {
            st.replay.push_back(r);
        }
    }
    let any = !st.replay.is_empty() || !st.replay_wildcards.is_empty();
    REPLAYING.store(any, Ordering::Relaxed);
    tracing::warn!(choices = bytes.len() / SIZE, "choices to repeat");
}
