//! The asynchronous advance's drain as a span on a thread of its own, so that a timeline
//! (libcd's `CD_TIMELINE`, one track per thread) shows it on its own track.
//!
//! A drain runs on the device between the application's calls: no thread of the runtime is
//! inside it, so no span of the calling thread can show when it ran. When a subscriber wants
//! the `drain` span (`CD_TIMELINE`, `CD_TRACE=cd_core=debug`), [`watch`] hands the drain to a
//! thread of the runtime's own, named `cd drain`, which enters the span, looks at the drain
//! ([`Drain::is_complete`]) at growing pauses from 20 us up to [`POLL_MAX`] (woken at once
//! when the application's own look finds it over), and leaves the span: a slice on that
//! thread's track from the watcher taking the drain (just after the `cd_advance_async` call)
//! to its completion, with the CD, the space, the bytes and how it ended (`end`: `completed`,
//! `discarded` when a restore dropped it in flight, or `failed: <message>`). A slice on one
//! track must nest, so a watcher watches one drain at a time; drains in flight at once on
//! several CDs get a watcher each, and the watchers are kept for the next ones.
//!
//! The watcher only looks: the application's operations (`cd_advance_test`,
//! `cd_advance_wait`, the next advance, ...) still look at and wait for the drain themselves,
//! through the same lock, and whoever finds it over first keeps what it found (completed, or
//! failed with the message) for the other, so both see one outcome. Dropping the watched
//! drain drops the space's drain at once (waiting for its copies, as the [`Drain`] contract
//! says), whatever the watcher is doing. Without a subscriber that wants the span the drain
//! is not wrapped and no thread is started.

use crate::callback;
use crate::ids::CdHandle;
use crate::space::Drain;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tracing::Span;

/// The first pause between the watcher's looks at a drain; each next one is twice as long,
/// up to [`POLL_MAX`].
const POLL_FIRST: Duration = Duration::from_micros(20);

/// The longest pause between the watcher's looks: a slice ends at most this late.
pub(crate) const POLL_MAX: Duration = Duration::from_micros(250);

/// A watched drain, shared by the pending advance and its watcher.
struct Shared {
    state: Mutex<State>,
    /// Signalled when the drain is found over or dropped, and when the watcher is done.
    over: Condvar,
}

struct State {
    /// The space's drain, until the pending advance drops it.
    drain: Option<Box<dyn Drain>>,
    /// What the first look that found the drain over found: `Ok` completed.
    outcome: Option<Result<(), String>>,
    /// A watcher has the drain and has not left its span yet.
    watched: bool,
}

/// Where a drain stands.
enum Look {
    Running,
    Completed,
    Failed(String),
    /// Dropped before anyone found it over (a restore discarded the pending advance).
    Discarded,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Looks at the drain (`block`: waits for it); `watcher`: the watcher's look, which runs
    /// the space's code as a callback (the application's operations already do).
    fn look(&self, block: bool, watcher: bool) -> Look {
        let mut state = self.lock();
        if state.outcome.is_none() {
            let Some(drain) = state.drain.as_mut() else {
                return Look::Discarded;
            };
            let mut ask = || {
                if block {
                    drain.wait().map(|()| true)
                } else {
                    drain.is_complete()
                }
            };
            let done = if watcher { callback::guard(ask) } else { ask() };
            match done {
                Ok(false) => return Look::Running,
                Ok(true) => state.outcome = Some(Ok(())),
                Err(message) => state.outcome = Some(Err(message)),
            }
            self.over.notify_all();
        }
        match &state.outcome {
            Some(Err(message)) => Look::Failed(message.clone()),
            _ => Look::Completed,
        }
    }
}

/// The drain the pending advance holds when it is watched.
struct Watched(Arc<Shared>);

impl Watched {
    fn result(look: Look) -> Result<bool, String> {
        match look {
            Look::Running => Ok(false),
            Look::Completed | Look::Discarded => Ok(true),
            Look::Failed(message) => Err(message),
        }
    }
}

impl Drain for Watched {
    fn is_complete(&mut self) -> Result<bool, String> {
        Watched::result(self.0.look(false, false))
    }

    fn wait(&mut self) -> Result<(), String> {
        Watched::result(self.0.look(true, false)).map(drop)
    }
}

impl Drop for Watched {
    /// Drops the space's drain (which waits for its copies), then waits for the watcher to
    /// leave the span, so that the slice is closed before the operation that dropped the
    /// drain returns (a program that exits next still has it in its file).
    fn drop(&mut self) {
        let drain = self.0.lock().drain.take();
        drop(drain);
        self.0.over.notify_all();
        let mut state = self.0.lock();
        while state.watched {
            state = self.0.over.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A drain handed to a watcher, with its span.
struct Job {
    span: Span,
    shared: Arc<Shared>,
}

/// A watcher thread: where its jobs go, and whether it has none.
struct Watcher {
    jobs: Sender<Job>,
    idle: Arc<AtomicBool>,
    /// The process that started it (a forked child has the list, not the thread).
    pid: u32,
}

/// The watchers started so far.
static WATCHERS: Mutex<Vec<Watcher>> = Mutex::new(Vec::new());

/// `drain`, the drain of `bytes` of CD `cd`'s device ranges in space `space`, watched on a
/// track of its own when a subscriber wants its span (module docs); as it is otherwise.
pub(crate) fn watch(
    drain: Box<dyn Drain>,
    cd: CdHandle,
    space: &str,
    bytes: usize,
) -> Box<dyn Drain> {
    let span = tracing::debug_span!(
        parent: None,
        "drain",
        ?cd,
        space = %space,
        bytes,
        end = tracing::field::Empty
    );
    if span.is_disabled() {
        return drain;
    }
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            drain: Some(drain),
            outcome: None,
            watched: true,
        }),
        over: Condvar::new(),
    });
    let job = Job {
        span,
        shared: Arc::clone(&shared),
    };
    if !dispatch(job) {
        shared.lock().watched = false;
    }
    Box::new(Watched(shared))
}

/// Gives `job` to an idle watcher, or to a new one; `false` when no thread can be started
/// (the drain then goes unwatched, its span never entered, and works as before).
fn dispatch(mut job: Job) -> bool {
    let pid = std::process::id();
    let mut watchers = WATCHERS.lock().unwrap_or_else(|e| e.into_inner());
    for watcher in watchers.iter().filter(|w| w.pid == pid) {
        if watcher
            .idle
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            match watcher.jobs.send(job) {
                Ok(()) => return true,
                // Its thread is gone: try the next.
                Err(returned) => job = returned.0,
            }
        }
    }
    let (jobs, received) = channel::<Job>();
    let idle = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&idle);
    let started = std::thread::Builder::new()
        .name("cd drain".to_owned())
        .spawn(move || {
            for job in received {
                run(job, &flag);
            }
        });
    if started.is_err() || jobs.send(job).is_err() {
        return false;
    }
    watchers.push(Watcher { jobs, idle, pid });
    true
}

/// When dropped (after the span was left), marks the watcher idle, then tells the watched
/// drain that its watcher is done, even if the watcher unwinds: the next drain, started once
/// this one's drop returned, goes to the same watcher (one track).
struct Done<'a> {
    shared: &'a Shared,
    idle: &'a AtomicBool,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.idle.store(true, Ordering::Release);
        self.shared.lock().watched = false;
        self.shared.over.notify_all();
    }
}

/// Watches one drain inside its span, until it is over; `idle`: the watcher's flag.
fn run(job: Job, idle: &AtomicBool) {
    let Job { span, shared } = job;
    let _done = Done {
        shared: &shared,
        idle,
    };
    let _inside = span.enter();
    let mut pause = POLL_FIRST;
    loop {
        let end = match shared.look(false, true) {
            Look::Running => None,
            Look::Completed => Some("completed".to_owned()),
            Look::Discarded => Some("discarded".to_owned()),
            Look::Failed(message) => Some(format!("failed: {message}")),
        };
        if let Some(end) = end {
            span.record("end", tracing::field::display(&end));
            return;
        }
        let state = shared.lock();
        if state.outcome.is_none() && state.drain.is_some() {
            // Woken early when the application finds it over or drops it.
            let _ = shared.over.wait_timeout(state, pause);
        }
        pause = (pause * 2).min(POLL_MAX);
    }
}
