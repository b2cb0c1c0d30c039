//! Each thread's state: its stack of active CDs, the cached answer of what its MPI calls do,
//! its writer into the active CD's log, and the callback mark.
//!
//! Handles and the registry they index are `registry`'s. The active CD is per thread, managed
//! last in, first out: `create_cd` pushes, and a handle that is no longer live is popped when
//! `CURRENT_CD` next looks at the stack.
//!
//! Next to the stack, each thread caches what the MPI layer needs on every call: the active
//! CD, whether it logs, and which CD's replay feeds it ([`LogMode`]). Asking then costs no lock
//! and no allocation. The cache is dropped when the thread's stack changes, and is checked
//! against epochs that CDs bump whenever the answer may change on another thread's doing (a
//! commit or restore retires the CD, a replay starts or ends): one atomic load, two while a
//! replay feeds the thread.
//!
//! # Validating the cache
//! What a cached answer ([`Cached`]) is computed from: the active CD's retirement, and the
//! `replaying` flag of it and of each ancestor (the rest, `logging` and the parent, never
//! changes). Each CD publishes these flags with an epoch (`node::Published`), and the
//! protocol is a pair of orders, each checked by a loom model (`tests/loom.rs`):
//! - A writer changes a flag, then bumps an epoch (a release read-modify-write, under the CD's
//!   lock): the CD's own for its retirement and its replay starting or ending, and for a change in
//!   an ancestor, the epochs of the CDs whose cached answers it changes (a restore retires the
//!   restored CD's descendants and bumps the CD; a restore that rewinds an ancestor's replay bumps
//!   that ancestor and every live CD below it, on every branch (`registry::bump_below`); a replay
//!   ending bumps only the replaying CD, which the answers it fed keep as their feeder). The
//!   rewind's walk is over all branches because the replay feeds every CD below the ancestor, not
//!   only the restored CD's path: with another thread's active CD a sibling of the restored one,
//!   that thread's `Record` answer (taken after the ancestor's replay had ended) would otherwise
//!   pass every validation while a fresh look says `Replay`, until its stack changed (the unit test
//!   `a_rewind_reaches_every_thread_below_the_rewound_cd` is that case).
//! - A reader ([`Cached::compute`]) loads an epoch (acquire), then the flags it guards: the
//!   active CD's epoch, then its retirement, then for the CD and each ancestor its epoch, then
//!   its `replaying`. It keeps the active CD's epoch and the feeder's. [`Cached::is_current`]
//!   loads those epochs again and accepts the answer if both are unchanged.
//!
//! Why a validation never accepts an answer that misses a change that happens before it: take
//! the change's bump B of epoch E, and the reader's load L of E before it read the flag. If L
//! read B's value or a later one (all bumps are read-modify-writes, so later bumps continue
//! B's release sequence), L synchronizes with B: the change happens before the reader's load
//! of the flag, which sees it. Otherwise L read a value before B in E's modification order; a
//! validation that happens after B reads B's value or a later one (coherence), which differs
//! from what L saw (epochs only grow, and 64 bits do not wrap), so the answer is refused and
//! computed again. A change concurrent with the validation may be missed: the call then runs
//! as if it came first, which it may. The orderings that carry this are the epoch's: its
//! acquire loads and the bump's release (either made relaxed, the models fail); the flags'
//! own loads need none for it (their acquire serves other readers of `is_live`). The reader
//! writes nothing, so no store-buffering shape arises and no `SeqCst` is needed: the hot path
//! is one or two acquire loads (plain loads on x86-64), with no read-modify-write.
//!
//! The order of the reader's loads is the whole point: a flag read before the epoch that
//! guards it may be the old value while the epoch is already the new one, and that stale
//! answer then passes every validation. `Active::current` checks liveness before `compute`
//! loads the epoch; `compute` checks it again after (the loom model
//! `retirement_checked_before_the_epoch_is_missed` shows the other order failing).
//!
//! # The lock-free append
//! A thread appends to its active CD's log through its *writer*, a lane of that log taken
//! under the CD's lock by an append that validated the cache and found the CD recording
//! (`mpi::append_locked`). The hot path ([`Active::fast_append`]) does not validate the cache
//! again: a logged call's route validated it a moment before, in the same call, and between
//! the two only another thread, or a callback inside MPI, can change anything. Holding the
//! writer is enough, because each change that would make the append wrong either drops it
//! or seals its lane (see "Lock-free appends" in `log`):
//! - this thread's stack changes (a CD created, committed, popped) and every recomputation of
//!   the cache drop the writer (`Active::invalidate`, `Active::refresh`). They fail to only
//!   while an append holds it, during `fill`, where every CD call but [`mode`] and
//!   [`current_cd`] fails as reentrant; those two change the stack or the cache only on
//!   finding the CD retired or replaying, the next two cases;
//! - the CD retired, by any thread (a commit, an ancestor's restore): its log is closed
//!   (`Node::mark_retired`), which seals the lane;
//! - a replay starting on the CD's log or rewound, by any thread, this one included
//!   (`Log::start_replay`, `Log::rewind`): the lane is closed, sealed;
//! - the log merged into the parent's by another thread, or its lane replaced: sealed;
//! - an ancestor's replay rewound, which makes the CD's threads replay: nothing seals the CD's
//!   lane, whose log is not replayed, but the rewind bumps the CD (`registry::bump_below`), so the
//!   next call's route refuses the cached answer, and computing it again drops the writer. A record
//!   appended meanwhile (the rewind concurrent with the call) goes into the CD's own log, not the
//!   replayed one, which it could reach only by a merge, and a merge into a log being replayed is
//!   refused (`merge::check_merge`).
//!
//! A sealed lane refuses the record (`closed` seen before writing) or orphans it (the seal
//! handshake), and the record goes to the slow path, which validates the cache and fails or
//! appends under the lock. A change that happens before the append is seen so (coherence of
//! `closed`, or the handshake); one concurrent with it may be missed, and the call then runs as
//! if it came first, as with the cache. `logging` never changes, so the writer's CD records
//! for as long as it is live and not replaying. What remains on the hot path is the mark, the
//! writer's borrow and the lane's own checks. The loom models `writer_across_*`
//! (`tests/loom.rs`) check the first four cases on the real code, in every interleaving of
//! the append with the change: the record is in the log when the change handles it (merged,
//! replayed, discarded with it), or is refused or orphaned and the slow path fails or appends
//! it to a log that records.

use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::log::{Attempt, Lane};
use crate::node::Node;
use crate::registry::lookup;
use crate::types::LogMode;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// A thread's stack of active CDs, and what its MPI calls do now.
pub(crate) struct Active {
    stack: RefCell<Vec<CdHandle>>,
    cache: RefCell<Cache>,
    /// The callback mark (see `callback`), kept here so that the log append, which runs on
    /// every logged MPI call, checks and sets it in the thread-local access that reads the
    /// cache: libcd is a shared object, where each thread-local access is a call to
    /// `__tls_get_addr`.
    marked: Cell<bool>,
    /// The lane this thread appends to without a lock (see `log`): a lane of its active CD's
    /// log, dropped whenever the cache is (see "The lock-free append" in the module docs).
    writer: RefCell<Option<Writer>>,
    /// The MPI layer's re-entrancy flag ([`crate::ThreadCx::layer_flag`]), kept here so that
    /// a logged call's route, guard and append share this one thread-local access.
    layer: Cell<bool>,
}

/// A thread's lock-free way into its active CD's log: the lane it took under the CD's lock
/// (see "The lock-free append" in the module docs for why holding it is enough).
pub(crate) struct Writer {
    lane: Arc<Lane>,
}

impl Writer {
    /// The writer for `lane`, if it is `Some`.
    pub(crate) fn new(lane: Option<Arc<Lane>>) -> Option<Writer> {
        lane.map(|lane| Writer { lane })
    }
}

/// The cached answer of [`mode`]: the MPI wrappers ask on every call, so it must cost no lock.
enum Cache {
    /// The stack is empty: no CD is active, calls go straight to MPI.
    Empty,
    /// The stack changed: look again.
    Stale,
    /// Valid while the epochs it saw are unchanged.
    Valid(Cached),
}

/// A computed [`Cache`] entry.
#[derive(Clone)]
pub(crate) struct Cached {
    /// The active CD.
    pub(crate) node: Arc<Node>,
    /// Its epoch when this was computed.
    seen: u64,
    /// The CD whose replay feeds the thread, with its epoch then.
    feeder: Option<(Arc<Node>, u64)>,
    /// What MPI calls do.
    pub(crate) mode: LogMode,
}

impl Cached {
    /// Looks at the active CD: its epoch first, then what the epochs guard, so that a change
    /// made after the look moves an epoch past what was seen (see "Validating the cache" in
    /// the module docs). `None` if the CD was retired: also checked here, after the epoch,
    /// because a retirement between an earlier check and the epoch's load would otherwise be
    /// cached under its own bump and pass every validation.
    pub(crate) fn compute(node: Arc<Node>) -> Option<Cached> {
        let seen = node.epoch();
        if !node.is_live() {
            return None;
        }
        if !node.logging {
            return Some(Cached {
                node,
                seen,
                feeder: None,
                mode: LogMode::Off,
            });
        }
        let mut feeder = None;
        let mut next = Some(&node);
        while let Some(n) = next {
            let epoch = n.epoch();
            if n.is_replaying() {
                feeder = Some((Arc::clone(n), epoch));
            }
            next = n.parent.as_ref();
        }
        let mode = if feeder.is_some() {
            LogMode::Replay
        } else {
            LogMode::Record
        };
        Some(Cached {
            node,
            seen,
            feeder,
            mode,
        })
    }

    /// Whether nothing this was computed from has changed since.
    #[inline]
    pub(crate) fn is_current(&self) -> bool {
        self.node.epoch() == self.seen
            && self
                .feeder
                .as_ref()
                .is_none_or(|(f, epoch)| f.epoch() == *epoch)
    }

    /// The CD whose replay feeds the thread.
    pub(crate) fn feeder(&self) -> Option<&Arc<Node>> {
        self.feeder.as_ref().map(|(f, _)| f)
    }
}

thread_local! {
    static ACTIVE: Active = const {
        Active {
            stack: RefCell::new(Vec::new()),
            cache: RefCell::new(Cache::Empty),
            marked: Cell::new(false),
            writer: RefCell::new(None),
            layer: Cell::new(false),
        }
    };
}

/// The calling thread's [`Active`], with a lifetime the caller picks; `None` while the
/// thread's locals are being destroyed.
///
/// # Safety
/// The reference must not be used once the thread's locals are being destroyed (it cannot
/// leave the thread: `Active` is not `Sync`).
#[inline(always)]
pub(crate) unsafe fn active<'t>() -> Option<&'t Active> {
    let active = ACTIVE.try_with(std::ptr::from_ref).ok()?;
    // SAFETY: the calling thread's own thread-local, alive (`try_with` succeeded) until its
    // locals are destroyed, which the caller's contract excludes.
    Some(unsafe { &*active })
}

impl Active {
    /// Runs `f` with the valid cache, computing it again first if it is not.
    #[inline]
    fn with_cache<R>(&self, f: impl FnOnce(Option<&Cached>) -> Result<R>) -> Result<R> {
        if let Ok(cache) = self.cache.try_borrow() {
            match &*cache {
                Cache::Empty => return f(None),
                Cache::Valid(cached) if cached.is_current() => return f(Some(cached)),
                _ => {}
            }
        }
        let fresh = self.refresh();
        f(fresh.as_ref())
    }

    /// The handle of the active CD, from the cache (validated, or computed again).
    pub(crate) fn active_cd(&self) -> Option<CdHandle> {
        self.with_cache(|cached| Ok(cached.map(|c| c.node.handle)))
            .ok()
            .flatten()
    }

    fn invalidate(&self) {
        if let Ok(mut cache) = self.cache.try_borrow_mut() {
            *cache = Cache::Stale;
        }
        self.drop_writer();
    }

    /// Forgets the writer (taken again under the lock by the next append), unless an append
    /// is using it right now (it names its node, so it is never used for another).
    fn drop_writer(&self) {
        if let Ok(mut writer) = self.writer.try_borrow_mut() {
            *writer = None;
        }
    }

    /// The top of the stack that is still live, popping the others.
    fn current(&self) -> Result<Arc<Node>> {
        let mut stack = self.stack.borrow_mut();
        while let Some(&top) = stack.last() {
            match lookup(top) {
                Ok(node) if node.is_live() => return Ok(node),
                _ => {
                    stack.pop();
                    self.invalidate();
                }
            }
        }
        Err(CdError::NoActiveCd)
    }

    /// Computes the cache again and stores it.
    #[cold]
    fn refresh(&self) -> Option<Cached> {
        self.drop_writer();
        // A CD found retired after `current` looked is popped by its next round.
        let fresh = loop {
            match self.current() {
                Ok(node) => {
                    if let Some(cached) = Cached::compute(node) {
                        break Some(cached);
                    }
                }
                Err(_) => break None,
            }
        };
        if let Ok(mut cache) = self.cache.try_borrow_mut() {
            *cache = match &fresh {
                Some(cached) => Cache::Valid(cached.clone()),
                None => Cache::Empty,
            };
        }
        fresh
    }
}

/// Makes `handle` the calling thread's active CD.
pub(crate) fn push_active(handle: CdHandle) {
    ACTIVE.with(|a| {
        a.stack.borrow_mut().push(handle);
        a.invalidate();
    });
}

/// Removes `handle` from the calling thread's stack, so the CD below becomes active again.
pub(crate) fn pop_active(handle: CdHandle) {
    ACTIVE.with(|a| {
        a.stack.borrow_mut().retain(|&h| h != handle);
        a.invalidate();
    });
}

/// The node `cd` refers to.
pub(crate) fn resolve(cd: CdRef) -> Result<Arc<Node>> {
    match cd {
        CdRef::Handle(handle) => lookup(handle),
        CdRef::Current => ACTIVE.with(Active::current),
    }
}

/// The calling thread's active CD, if any.
pub fn current_cd() -> Option<CdHandle> {
    resolve(CdRef::Current).ok().map(|node| node.handle)
}

/// What the calling thread's MPI calls do now: one thread-local read with no CD active, and
/// the active CD's epoch (and the feeding CD's) compared otherwise. Off while the thread is
/// being torn down.
#[inline]
pub(crate) fn mode() -> LogMode {
    ACTIVE.try_with(Active::mode).unwrap_or(LogMode::Off)
}

/// Runs `f` with the calling thread's active CD and what its MPI calls do, from the cache
/// (`None` without an active CD), without cloning them when the cache is valid. `f` may call
/// [`mode`]. [`CdError::NoActiveCd`] while the thread's locals are being destroyed.
pub(crate) fn with_cached<R>(f: impl FnOnce(Option<&Cached>) -> Result<R>) -> Result<R> {
    ACTIVE
        .try_with(move |a| a.with_cache(f))
        .unwrap_or_else(|_| Err(CdError::NoActiveCd))
}

/// [`with_cached`] with the thread's callback mark checked and set while `f` runs, and the
/// thread's [`Writer`], in the same thread-local access: [`CdError::Reentrant`] if the mark was
/// set already. For the log append.
#[inline]
pub(crate) fn with_cached_marked<R>(
    f: impl FnOnce(Option<&Cached>, &RefCell<Option<Writer>>) -> Result<R>,
) -> Result<R> {
    ACTIVE
        .try_with(move |a| {
            if a.marked.replace(true) {
                return Err(CdError::Reentrant);
            }
            let _unmark = Unmark(&a.marked);
            a.with_cache(|cached| f(cached, &a.writer))
        })
        .unwrap_or_else(|_| Err(CdError::NoActiveCd))
}

/// What [`fast_append`] did.
pub(crate) enum Fast<F> {
    /// The record is in the lane.
    Done,
    /// Nothing was written: the append needs the lock (no lane, no room, no valid cache, a
    /// mode other than recording, or the mark set), or must fail.
    Slow(F),
    /// The record was written into a lane sealed before it: its bytes, to append again.
    Orphaned(Vec<u8>),
}

impl Active {
    /// What this thread's MPI calls do now (see [`mode`]).
    #[inline]
    pub(crate) fn mode(&self) -> LogMode {
        if let Ok(cache) = self.cache.try_borrow() {
            match &*cache {
                Cache::Empty => return LogMode::Off,
                Cache::Valid(cached) if cached.is_current() => return cached.mode,
                _ => {}
            }
        }
        self.refresh().map_or(LogMode::Off, |c| c.mode)
    }

    /// The MPI layer's re-entrancy flag.
    #[inline(always)]
    pub(crate) fn layer(&self) -> &Cell<bool> {
        &self.layer
    }

    /// The log append's hot path: into this thread's lane, with no lock, no atomic
    /// read-modify-write and no error value built, when the thread holds a writer. The cache
    /// is not validated again (the route of a logged call did a moment before): while the
    /// thread holds a writer, every change that makes the append wrong either dropped the
    /// writer or sealed its lane, and a sealed lane sends the record to the slow path, which
    /// validates (see "The lock-free append" in the module docs). The callback mark is set
    /// while `fill` runs, as on the slow path.
    #[inline(always)]
    pub(crate) fn fast_append<F: FnOnce(&mut [u8])>(&self, len: usize, fill: F) -> Fast<F> {
        if self.marked.get() {
            return Fast::Slow(fill);
        }
        let Ok(writer) = self.writer.try_borrow() else {
            return Fast::Slow(fill);
        };
        let Some(writer) = writer.as_ref() else {
            return Fast::Slow(fill);
        };
        self.marked.set(true);
        let _unmark = Unmark(&self.marked);
        match writer.lane.try_append(len, fill) {
            Attempt::Done => Fast::Done,
            Attempt::Refused(fill) => Fast::Slow(fill),
            Attempt::Orphaned(bytes) => Fast::Orphaned(bytes),
        }
    }
}

/// [`Active::fast_append`] on the calling thread's state.
#[inline(always)]
pub(crate) fn fast_append<F: FnOnce(&mut [u8])>(len: usize, fill: F) -> Fast<F> {
    // SAFETY: used only within this call.
    match unsafe { active() } {
        Some(active) => active.fast_append(len, fill),
        None => Fast::Slow(fill),
    }
}

/// Clears a callback mark when dropped (also when `f` panics).
struct Unmark<'a>(&'a Cell<bool>);

impl Drop for Unmark<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Runs `f` marked as a callback (see `callback`): the mark is set, and cleared after, also
/// when `f` panics (which unwinds on: the runtime's state is consistent at every call of
/// this). While the thread's locals are being destroyed there is no mark to set.
pub(crate) fn marked<R>(f: impl FnOnce() -> R) -> R {
    let mut f = Some(f);
    let mut run = || f.take().expect("runs once")();
    ACTIVE
        .try_with(|a| {
            a.marked.set(true);
            let _unmark = Unmark(&a.marked);
            run()
        })
        .unwrap_or_else(|_| run())
}

/// Runs `f` on the calling thread's callback mark (see `callback`); `None` while the thread's
/// locals are being destroyed.
pub(crate) fn with_mark<R>(f: impl FnOnce(&Cell<bool>) -> R) -> Option<R> {
    ACTIVE.try_with(|a| f(&a.marked)).ok()
}

#[cfg(test)]
mod tests {
    use crate::{
        commit_cd, create_cd, log_append, log_mode, log_next, restore_cd, CdError, LogMode,
        LoggingMode,
    };
    use std::sync::Barrier;

    /// A rewind reaches the cached answers of every thread below the rewound CD, not only
    /// the restoring thread's. P's log replays (P was restored); thread A's active CD is P's
    /// child C1, created during that replay, which A consumes to its end; thread B's is C2,
    /// C1's sibling, created after it, recording (B holds a writer on C2's lane). A restores
    /// C1, which rewinds P's replay: B's active CD now has a replaying ancestor, so B is fed
    /// by P's replay, and its answer from before (recording) is no longer current. Before
    /// the rewind bumped every CD below P, B kept recording until its stack changed.
    #[test]
    fn a_rewind_reaches_every_thread_below_the_rewound_cd() {
        let p = create_cd(None, None, LoggingMode::Enabled, Some("rewind-below")).unwrap();
        log_append(&[b"p1"]).unwrap();
        log_append(&[b"p2"]).unwrap();
        // SAFETY: the CDs hold no memory.
        unsafe { restore_cd(p) }.unwrap();
        let step = Barrier::new(2);
        let seen_by_b = std::thread::scope(|s| {
            s.spawn(|| {
                let c1 = create_cd(Some(p.into()), None, LoggingMode::Inherit, None).unwrap();
                assert_eq!(log_mode(), LogMode::Replay);
                let mut replayed = Vec::new();
                while let Some(entry) = log_next().unwrap() {
                    replayed.push(entry.bytes().to_vec());
                }
                assert_eq!(replayed, [b"p1", b"p2"]);
                assert_eq!(log_mode(), LogMode::Record, "P's replay ended");
                step.wait(); // 1: B creates C2 and records
                step.wait(); // 2
                             // SAFETY: as above.
                unsafe { restore_cd(c1) }.unwrap();
                assert_eq!(log_mode(), LogMode::Replay, "P's replay rewound");
                step.wait(); // 3: B looks
                step.wait(); // 4
                commit_cd(c1).unwrap();
            });
            let b = s.spawn(|| {
                step.wait(); // 1
                let c2 = create_cd(Some(p.into()), None, LoggingMode::Inherit, None).unwrap();
                let before = (log_mode(), log_append(&[b"b1"]));
                step.wait(); // 2: A restores C1
                step.wait(); // 3
                let after = (log_mode(), log_append(&[b"b2"]));
                step.wait(); // 4
                commit_cd(c2).unwrap();
                (before, after)
            });
            b.join().unwrap()
        });
        commit_cd(p).unwrap();
        let (before, after) = seen_by_b;
        assert_eq!(before, (LogMode::Record, Ok(())), "B recorded in C2");
        assert_eq!(
            after,
            (LogMode::Replay, Err(CdError::LogReplaying)),
            "B's answer from before the rewind was kept"
        );
    }
}
