//! A process lost in a ULFM job that the job cannot contain (see [`crate::errors`] and
//! [`crate::recovery`], which contains it where it can).
//!
//! Every surviving rank, in the first call where MPI reports the failure to it (or once the
//! survivors found that the loss cannot be contained):
//! 1. revokes `MPI_COMM_WORLD` and the communicator the failure was reported on, so that the
//!    other survivors' calls there fail at once instead of waiting on the dead rank;
//! 2. shrinks `MPI_COMM_WORLD` with the other survivors (`MPIX_Comm_shrink`; Open MPI 5.0
//!    has no `MPIX_Comm_ishrink`): the ranks missing from the result are the lost ones, the
//!    same set on every survivor; then takes part in the survivors' agreement on whether the
//!    loss can be contained (`MPIX_Comm_agree`), answering no;
//! 3. writes one line naming the lost ranks, why the job cannot go on, and what a relaunch
//!    restores (from the linking library's [`crate::Hooks::persisted`]), then waits in a
//!    barrier of the survivors so that every line is out before any rank exits (`mpirun` ends
//!    the job when the first one does);
//! 4. exits with [`LOST_EXIT_CODE`] (`exit`, which runs the C library's exit handlers, so the
//!    application's buffered output is written; not `MPI_Abort`, which would kill the other
//!    survivors before they have said anything).
//!
//! Steps 2 and 3 are bounded by a watchdog thread (it makes no MPI call): a survivor that
//! never enters MPI again (or is blocked on a communicator that neither holds the lost rank
//! nor was revoked) cannot hold the others past [`survivors_wait`]; the watchdog then writes
//! the line with the lost ranks this rank's own failure detector knew, and ends the process
//! at once (`_exit`). The repair of `crate::recovery` runs under the same watchdog (a process
//! lost during the repair, a replacement that dies before it joins, holds the survivors in
//! `MPI_Comm_spawn` until it fires).

use crate::abi::Comm;
use crate::pmpi::{real, safe, ulfm, world};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The exit status of a rank that ends the job after a process loss (`EX_TEMPFAIL`: try
/// again, that is, relaunch).
pub const LOST_EXIT_CODE: c_int = 75;

/// The environment variable that sets how long a survivor waits for the others to shrink with
/// it, to repair the world and to write their lines, in seconds (default 60).
const SURVIVORS_WAIT_ENV: &str = "CD_ULFM_WAIT_S";

/// How long a survivor waits ([`SURVIVORS_WAIT_ENV`]).
fn survivors_wait() -> Duration {
    static WAIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *WAIT.get_or_init(|| {
        let seconds = std::env::var(SURVIVORS_WAIT_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&s| s > 0)
            .unwrap_or(60);
        Duration::from_secs(seconds)
    })
}

/// Set once this process is ending after a loss: errors reported meanwhile (the runtime's own
/// calls on revoked communicators) are not losses of their own.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Whether this process is ending after a loss.
pub(crate) fn ending() -> bool {
    ENDING.load(Ordering::Relaxed)
}

/// The survivors of a loss, as the shrink found them.
pub(crate) struct Shrunk {
    /// The lost ranks of the world.
    pub(crate) lost: Vec<c_int>,
    /// The survivors' communicator (`None` when the shrink failed).
    pub(crate) survivors: Option<Comm>,
}

/// Steps 1 and 2 of the module docs: revokes the world (and `comm`), shrinks it.
pub(crate) fn revoke_and_shrink(comm: Comm) -> Shrunk {
    let world = world::current();
    ulfm::revoke(world);
    if comm != world {
        ulfm::revoke(comm);
    }
    let survivors = ulfm::shrink(world);
    let lost = match survivors {
        Some(shrunk) => missing(world, shrunk),
        None => known_failed(world, comm),
    };
    Shrunk { lost, survivors }
}

/// A watchdog over the survivors' steps: unless [`Watchdog::done`] is called first, it writes
/// its line and ends the process after [`survivors_wait`].
pub(crate) struct Watchdog {
    done: Arc<AtomicBool>,
    line: Arc<Mutex<String>>,
}

impl Watchdog {
    pub(crate) fn start(line: String) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let line = Arc::new(Mutex::new(line));
        let (flag, text) = (Arc::clone(&done), Arc::clone(&line));
        std::thread::spawn(move || {
            std::thread::sleep(survivors_wait());
            if !flag.swap(true, Ordering::SeqCst) {
                let line = text.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                // SAFETY: ends the process without running exit handlers (the main thread is
                // blocked inside MPI, which they could wait on).
                unsafe { libc::_exit(LOST_EXIT_CODE) }
            }
        });
        Watchdog { done, line }
    }

    /// The line it writes from now on (once the lost ranks are known).
    pub(crate) fn reword(&self, line: String) {
        *self.line.lock().unwrap_or_else(|e| e.into_inner()) = line;
    }

    /// The steps finished in time: the watchdog does nothing; `false` if it already fired.
    pub(crate) fn done(&self) -> bool {
        !self.done.swap(true, Ordering::SeqCst)
    }
}

/// The line a survivor writes when the job ends: the lost ranks, `why`, what a relaunch
/// restores.
pub(crate) fn line(lost: &[c_int], why: &str) -> String {
    let persisted = crate::hooks::hooks()
        .and_then(|h| (h.persisted)())
        .unwrap_or_else(|| "nothing: no persistent CD (storage_info dir=)".to_owned());
    format!(
        "libcd: rank {rank}: lost {lost} in a ULFM job; {why}, so the job ends (exit status \
         {LOST_EXIT_CODE}): relaunch it to restore {persisted}\n",
        rank = safe::world_rank(),
        lost = describe(lost),
    )
}

/// Ends this process after a process failure reported on `comm` that this rank cannot
/// contain (see the module docs): `why` says so in the line.
pub(crate) fn process_lost(comm: Comm, why: &str) -> ! {
    ENDING.store(true, Ordering::Relaxed);
    let watchdog = Watchdog::start(line(&known_failed(world::current(), comm), why));
    let shrunk = revoke_and_shrink(comm);
    if let Some(survivors) = shrunk.survivors {
        // the survivors that could contain the loss learn that this one cannot
        ulfm::agree(survivors, 0);
    }
    end(&shrunk, why, watchdog)
}

/// Steps 3 and 4 of the module docs, after the shrink.
pub(crate) fn end(shrunk: &Shrunk, why: &str, watchdog: Watchdog) -> ! {
    ENDING.store(true, Ordering::Relaxed);
    if watchdog.done() {
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), line(&shrunk.lost, why).as_bytes());
    }
    tracing::error!(lost = ?shrunk.lost, why, "process lost in a ULFM job: ending the job");
    if let Some(survivors) = shrunk.survivors {
        // every survivor's line is out before any exits; bounded by a second watchdog
        let _late = Watchdog::start(String::new());
        // SAFETY: no pointer is passed.
        unsafe { real::Barrier(survivors) };
    }
    // SAFETY: ends the process; the C library flushes the application's buffered streams.
    unsafe { libc::exit(LOST_EXIT_CODE) }
}

/// "rank 2", "ranks 1, 2", or that none is named.
fn describe(lost: &[c_int]) -> String {
    match lost {
        [] => "a rank that this rank's failure detector has not named".to_owned(),
        [one] => format!("rank {one}"),
        many => {
            let ranks: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("ranks {}", ranks.join(", "))
        }
    }
}

/// The ranks of `world` missing from `shrunk`: the lost ones, agreed by the shrink.
fn missing(world: Comm, shrunk: Comm) -> Vec<c_int> {
    let (all, alive) = (safe::comm_group(world), safe::comm_group(shrunk));
    let ranks: Vec<c_int> = (0..safe::group_size(alive).max(0)).collect();
    let alive_in_world = safe::group_translate_ranks(alive, &ranks, all);
    safe::group_free(alive);
    safe::group_free(all);
    (0..safe::world_size())
        .filter(|r| !alive_in_world.contains(r))
        .collect()
}

/// The world ranks this process's failure detector knows to have failed, in `world` or
/// `comm`.
fn known_failed(world: Comm, comm: Comm) -> Vec<c_int> {
    let mut lost = failed_in_world(world, world);
    if comm != world {
        lost.extend(failed_in_world(comm, world));
    }
    lost.sort_unstable();
    lost.dedup();
    lost
}

/// The failed processes `comm`'s failure detector knows, as ranks of `world`.
fn failed_in_world(comm: Comm, world: Comm) -> Vec<c_int> {
    let Some(failed) = ulfm::failed_group(comm) else {
        return Vec::new();
    };
    let ranks: Vec<c_int> = (0..safe::group_size(failed).max(0)).collect();
    let world_group = safe::comm_group(world);
    let lost = safe::group_translate_ranks(failed, &ranks, world_group);
    safe::group_free(world_group);
    safe::group_free(failed);
    lost.into_iter().filter(|&r| r >= 0).collect()
}
