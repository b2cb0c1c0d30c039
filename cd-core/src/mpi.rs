//! What the MPI interposition layer calls: the calling thread's logging mode, appending and
//! replaying records of the active CD, marking calls that cannot be replayed, and the hook
//! that lets the layer take part in `restore_cd`.
//!
//! The spec's functions (`add_MPI_log_to_cd` and friends) name a CD explicitly. A PMPI wrapper
//! has no handle at hand and runs on every MPI call, so these work on the calling thread's
//! active CD, and the decision of what to do ([`log_mode`]) is read from a per-thread cache
//! (see `active`) without a lock.
//!
//! # Replay across CDs
//! After `restore_cd(P)` the rank re-executes P. A CD created during that re-execution must
//! not log afresh what P's log already holds, so it consumes P's replay: its mode is
//! [`LogMode::Replay`] and [`log_next`] reads P's log. When P's log is exhausted the replay ends
//! and the thread's mode becomes [`LogMode::Record`]: the child logs into its own log, which
//! merges into P's on commit as usual. Nothing is appended to a log while it is replayed.
//!
//! Such a child remembers where P's replay stood at its point in time (creation or advance).
//! Restoring it rewinds P's replay to there, so that the child's re-execution is served the
//! same records again, followed by the records of its own log, if it made any after P's
//! replay ended: the replay that feeds a thread is the outermost replaying CD among its active
//! CD and that CD's ancestors, whose records are the oldest.
//!
//! With several threads (`MPI_THREAD_MULTIPLE`), a replay is shared: it feeds every thread
//! whose active CD is below the replaying one, in the order they ask, from one cursor. So a
//! rewind by one thread's restore also feeds another thread whose active CD is below the
//! rewound CD (a sibling of the restored one, say), which replays from then on even though it
//! did not restore anything, and takes records from the same cursor. A thread that must
//! recover alone while the others go on live needs a CD tree of its own (a root CD per
//! thread, as `tests/mpi/threads.c` has).

use crate::active::{self, Cached, Fast, Writer};
use crate::callback;
use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::log::LogEntry;
use crate::node::outermost_replaying;
use crate::registry;
use crate::types::LogMode;
use std::cell::{Cell, RefCell};
use std::sync::RwLock;
use tracing::debug_span;

/// The calling thread's mode, from the thread-local cache: no lock, no allocation, no `Arc`
/// clone. While no CD in the process logs it is one relaxed load of a global counter; with no
/// CD active on the thread, one thread-local read more; otherwise one or two atomic loads
/// validate the cache. May be called anywhere, also from the restore hook and from a record's
/// `fill` closure; it is [`LogMode::Off`] while the thread's locals are being destroyed.
#[inline]
pub fn log_mode() -> LogMode {
    if crate::node::none_logging() {
        return LogMode::Off;
    }
    active::mode()
}

/// Whether some CD in the process logs communication: while none does, every thread's mode is
/// [`LogMode::Off`]. One relaxed load of a global counter, no thread-local access.
#[inline]
pub fn logging_anywhere() -> bool {
    !crate::node::none_logging()
}

/// The calling thread's state as the MPI layer uses it on every logged call: its mode, its
/// log append, and the layer's own re-entrancy flag, all behind the one thread-local access
/// [`thread_cx`] makes. libcd is a shared object, where each thread-local access is a call to
/// `__tls_get_addr`; a logged call used to make four (the mode, the guard's enter and exit,
/// the append). Not `Send`: it names one thread's state.
#[derive(Clone, Copy)]
pub struct ThreadCx<'t> {
    active: &'t active::Active,
}

/// The calling thread's [`ThreadCx`]; `None` while the thread's locals are being destroyed.
///
/// # Safety
/// The context must not be used once the calling thread's locals are being destroyed: keep it
/// within the current call (a wrapper's frame), not in another thread-local.
#[inline(always)]
pub unsafe fn thread_cx<'t>() -> Option<ThreadCx<'t>> {
    // SAFETY: the caller's contract is `active`'s.
    unsafe { active::active() }.map(|active| ThreadCx { active })
}

impl<'t> ThreadCx<'t> {
    /// The thread's mode, as [`log_mode`] gives it (which also reads [`logging_anywhere`]
    /// first).
    #[inline]
    pub fn mode(self) -> LogMode {
        self.active.mode()
    }

    /// The thread's active CD, from the thread's cache (no lock while it is valid): for the
    /// MPI layer to note the CD a request was posted in, which a restore tells apart from its
    /// ancestors' (see [`set_restore_hook`]).
    pub fn active_cd(self) -> Option<CdHandle> {
        self.active.active_cd()
    }

    /// A flag the MPI layer keeps per thread (its re-entrancy guard), stored with the rest of
    /// the thread's state; cd-core never reads it.
    #[inline(always)]
    pub fn layer_flag(self) -> &'t Cell<bool> {
        self.active.layer()
    }

    /// [`log_append_with`] on this thread's state, without a second thread-local access on
    /// its hot path.
    #[inline]
    pub fn log_append_with(self, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<()> {
        match self.active.fast_append(len, fill) {
            Fast::Done => Ok(()),
            Fast::Slow(fill) => log_append_slow(len, fill),
            Fast::Orphaned(bytes) => log_append_slow(len, |b| b.copy_from_slice(&bytes)),
        }
    }
}

/// Appends one record of `len` bytes (`len > 0`) to the log of the calling thread's active CD,
/// written in place by `fill`, which gets exactly `len` bytes of arena memory (8-byte
/// aligned; no intermediate buffer).
///
/// On the hot path this takes no lock and makes no atomic read-modify-write: the record goes
/// into the thread's lane of the CD's log, published with a release store, and is folded into
/// the log (and counted in the statistics) by the next operation that locks the CD (see `log`,
/// "Lock-free appends"). The lock is taken when the thread has no lane with room yet.
///
/// `fill` may call [`log_mode`] and MPI, while other CD calls fail with
/// [`CdError::Reentrant`]. If it panics, no record is added.
///
/// Errors: [`CdError::NoActiveCd`]; [`CdError::LoggingDisabled`] (the active CD does not log);
/// [`CdError::LogReplaying`] (a replay feeds this thread); [`CdError::EmptyLogEntry`];
/// [`CdError::OutOfMemory`]; [`CdError::Reentrant`]; a stale handle if the active CD was
/// retired by another thread.
#[inline]
pub fn log_append_with(len: usize, fill: impl FnOnce(&mut [u8])) -> Result<()> {
    match active::fast_append(len, fill) {
        Fast::Done => Ok(()),
        Fast::Slow(fill) => log_append_slow(len, fill),
        Fast::Orphaned(bytes) => log_append_slow(len, |b| b.copy_from_slice(&bytes)),
    }
}

/// [`log_append_with`] when the hot path could not append: checks the thread's mode (the
/// errors come from here) and appends under the CD's lock.
#[cold]
fn log_append_slow(len: usize, fill: impl FnOnce(&mut [u8])) -> Result<()> {
    // Marked for the whole append, checked and set in the thread-local access that reads the
    // cache and the writer.
    active::with_cached_marked(|cached, writer| append_checked(cached, writer, len, fill))
}

/// The slow append on the validated cache (`None` without an active CD): the errors of
/// [`log_append_with`], or the append under the CD's lock.
pub(crate) fn append_checked(
    cached: Option<&Cached>,
    writer: &RefCell<Option<Writer>>,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> Result<()> {
    let cached = cached.ok_or(CdError::NoActiveCd)?;
    match cached.mode {
        LogMode::Off => Err(CdError::LoggingDisabled),
        LogMode::Replay => Err(CdError::LogReplaying),
        LogMode::Record => append_locked(cached, writer, len, fill),
    }
}

/// The append under the CD's lock: when the thread has no lane with room, or its record
/// arrived after another thread sealed its lane. Takes the lane for the next appends.
fn append_locked(
    cached: &Cached,
    writer: &RefCell<Option<Writer>>,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> Result<()> {
    let mut state = cached.node.lock_live()?;
    state.log.append_with(len, fill)?;
    state.count_log();
    let lane = state.log.writer_lane();
    drop(state);
    if let Ok(mut writer) = writer.try_borrow_mut() {
        *writer = Writer::new(lane);
    }
    Ok(())
}

/// [`log_append_with`] with the record given as the concatenation of `parts`.
pub fn log_append(parts: &[&[u8]]) -> Result<()> {
    let len = parts
        .iter()
        .try_fold(0usize, |n, p| n.checked_add(p.len()))
        .ok_or(CdError::OutOfMemory { bytes: usize::MAX })?;
    log_append_with(len, |record| {
        let mut at = 0;
        for part in parts {
            record[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
    })
}

/// The next record of the replay feeding the calling thread, in FIFO order: the outermost
/// replaying CD among the active CD and its ancestors (the active CD's own log after a restore
/// of it, or an ancestor's log for a CD created during the ancestor's replay).
///
/// `Ok(None)` when nothing is left to replay: the replay ends there and the thread's mode
/// becomes [`LogMode::Record`] (also `Ok(None)` when the active CD logs but no replay feeds
/// it). Errors: [`CdError::NoActiveCd`], [`CdError::LoggingDisabled`] (the active CD does not
/// log), [`CdError::Reentrant`], a stale handle.
pub fn log_next() -> Result<Option<LogEntry>> {
    callback::check()?;
    let cached = active::with_cached(|c| c.cloned().ok_or(CdError::NoActiveCd))?;
    if cached.mode == LogMode::Off {
        return Err(CdError::LoggingDisabled);
    }
    cached.node.check_live()?;
    let mut feeder = cached.feeder().cloned();
    // Each round ends one replay, so there are at most as many as CDs on the path.
    for _ in 0..=cached.node.depth {
        let Some(f) = feeder else { break };
        let mut state = f.lock();
        if let Some(entry) = state.log.next() {
            return Ok(Some(entry));
        }
        f.sync_replay(&state);
        drop(state);
        feeder = outermost_replaying(&cached.node);
    }
    Ok(None)
}

/// Marks the active CD's log as holding a call that cannot be replayed (one-sided RMA, MPI-IO,
/// spawn): `call` names it.
///
/// The mark travels with the log's records: it merges into the parent on commit, implicit
/// commit and restore exactly when they do, and is dropped when the log is discarded (advance,
/// a sibling's discard, `delete_MPI_log_from_cd`). A `restore_cd` whose replay would include a
/// marked log (the restored CD's own, the descendants' logs merged by that restore, or the
/// ancestor's log it rewinds) fails with [`CdError::Unreplayable`] before changing anything.
/// `Ok(())` without doing anything when the mode is [`LogMode::Off`].
pub fn log_mark_unreplayable(call: &'static str) -> Result<()> {
    callback::check()?;
    active::with_cached(|cached| match cached {
        Some(cached) if cached.mode != LogMode::Off => {
            cached.node.lock_live()?.log.mark_unreplayable(call);
            Ok(())
        }
        _ => Ok(()),
    })
    .or_else(|e| match e {
        CdError::NoActiveCd => Ok(()),
        e => Err(e),
    })
}

/// Marks the log of `cd`, which need not be the active CD, as holding a call that cannot be
/// replayed, as [`log_mark_unreplayable`] does for the active CD's log; the mark then travels
/// with that log's records by the same rules. The MPI layer uses it when a handle that records
/// of several CDs' logs name had to be freed in MPI before those logs were discarded.
///
/// Errors: a stale or invalid handle, [`CdError::Reentrant`] (from a CD callback).
pub fn mark_log_unreplayable(cd: impl Into<CdRef>, call: &'static str) -> Result<()> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    node.lock_live()?.log.mark_unreplayable(call);
    Ok(())
}

/// The MPI layer's part in a restore: see [`set_restore_hook`].
pub type RestoreHook = fn(&[CdHandle]) -> Result<()>;

static RESTORE_HOOK: RwLock<Option<RestoreHook>> = RwLock::new(None);

/// Registers the function that `restore_cd` calls once it has validated the restore and before
/// it writes any application memory, with the handles of the CDs taking part (the restored CD
/// first, then its live descendants, parents before children). Returning `Err` refuses the
/// restore, which returns that error and changes nothing ([`CdError::RestoreRefused`] is there
/// for the hook's own reasons); a panic refuses it too. One hook per process: setting it again
/// replaces it.
///
/// The hook runs with the locks of those CDs (and of their ancestors, when the restore reads
/// them) held. It may call [`log_mode`] and MPI functions, whose wrappers see the modes from
/// before the restore; every other CD function fails there with [`CdError::Reentrant`] rather
/// than deadlock. The restore may still fail after the hook returned `Ok` (a regen function
/// failing, say), leaving the CDs as they were.
pub fn set_restore_hook(hook: RestoreHook) {
    *RESTORE_HOOK.write().unwrap_or_else(|e| e.into_inner()) = Some(hook);
}

/// Whether `cd` names a live CD (not yet committed, nor discarded by a restore). Takes no CD's
/// lock and makes no callback check, so the restore hook may call it: for the MPI layer to
/// tell the requests of a live ancestor of the restored CD (left in flight) from those of CDs
/// that ended.
pub fn cd_is_live(cd: CdHandle) -> bool {
    registry::lookup(cd).is_ok()
}

/// Calls the restore hook, if one is set.
pub(crate) fn run_restore_hook(cds: &[CdHandle]) -> Result<()> {
    let hook = *RESTORE_HOOK.read().unwrap_or_else(|e| e.into_inner());
    match hook {
        Some(hook) => callback::restore_hook(|| hook(cds)),
        None => Ok(()),
    }
}

/// Adds an MPI log entry to the CD's FIFO (`add_MPI_log_to_cd`); the CD owns it from now on.
///
/// The entry is kept as it is, not copied into the log's arena, so [`get_mpi_log_from_cd`]
/// hands out the very bytes given here (the spec: "MPI log entry originally provided by
/// add_MPI_log_to_cd"). Refused when the CD does not log communication, and while its own log
/// is being replayed. The MPI layer appends to the active CD with [`crate::log_append`]
/// instead.
pub fn add_mpi_log_to_cd(cd: impl Into<CdRef>, entry: LogEntry) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("add_MPI_log_to_cd", ?cd, len = entry.bytes().len()).entered();
    callback::check()?;
    let node = active::resolve(cd)?;
    if !node.logging {
        return Err(CdError::LoggingDisabled);
    }
    let mut state = node.lock_live()?;
    state.log.push(entry)?;
    state.count_log();
    Ok(())
}

/// The next entry of the replay of the CD's own log started by `restore_cd`
/// (`get_MPI_log_from_cd`); `None` when the log is exhausted (which ends the replay) or no
/// replay is in progress.
pub fn get_mpi_log_from_cd(cd: impl Into<CdRef>) -> Result<Option<LogEntry>> {
    let cd = cd.into();
    let _span = debug_span!("get_MPI_log_from_cd", ?cd).entered();
    callback::check()?;
    let node = active::resolve(cd)?;
    let mut state = node.lock_live()?;
    let entry = state.log.next();
    node.sync_replay(&state);
    Ok(entry)
}

/// Discards the CD's MPI log (`delete_MPI_log_from_cd`), with its unreplayable mark, and ends
/// a replay of it.
pub fn delete_mpi_log_from_cd(cd: impl Into<CdRef>) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("delete_MPI_log_from_cd", ?cd).entered();
    callback::check()?;
    let node = active::resolve(cd)?;
    let mut state = node.lock_live()?;
    state.log.clear();
    node.sync_replay(&state);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{commit_cd, create_cd, restore_cd, LoggingMode};

    /// A mark on a CD that is not the active one refuses its restore, stays when a child's
    /// log is dropped, and is refused for a retired handle.
    #[test]
    fn the_log_of_any_cd_can_be_marked() {
        let root = create_cd(None, None, LoggingMode::Enabled, Some("mark-any")).unwrap();
        let kid = create_cd(Some(root.into()), None, LoggingMode::Inherit, None).unwrap();
        log_append(&[b"r"]).unwrap();
        mark_log_unreplayable(root, "MPI_Comm_free (test)").unwrap();
        mark_log_unreplayable(kid, "MPI_Comm_free (kid)").unwrap();
        delete_mpi_log_from_cd(kid).unwrap();
        // SAFETY: the CDs hold no memory.
        let refused = unsafe { restore_cd(kid) };
        assert!(refused.is_ok(), "the kid's mark went with its log");
        commit_cd(kid).unwrap();
        // SAFETY: as above.
        let refused = unsafe { restore_cd(root) }.unwrap_err();
        assert_eq!(
            refused,
            CdError::Unreplayable {
                call: "MPI_Comm_free (test)"
            }
        );
        commit_cd(root).unwrap();
        assert!(matches!(
            mark_log_unreplayable(root, "MPI_Comm_free"),
            Err(CdError::StaleHandle { .. })
        ));
    }
}
