//! `CD_TIMELINE`: what the runtime did, as a Chrome trace-event JSON file per rank.
//!
//! `CD_TIMELINE=<path prefix>` makes libcd, when it is loaded, add a layer to the `tracing`
//! subscriber of `CD_TRACE` (`trace.rs`; both may be set, each with its own filter) that
//! writes the spans of the runtime's crates (`cd_core`, `cd_mpi_intercept`, `cd_persist`,
//! `cd_redset`, `cd_cuda`, `cd`, `containment`, every level) and their events as Chrome
//! trace events, one file per rank: `<prefix>.<rank>.json`. The Perfetto UI
//! (<https://ui.perfetto.dev>) and `chrome://tracing` open it; `cd-timeline-merge` (this
//! crate's binary) merges the ranks' files into one, a process per rank. What is in it:
//!
//! - the CD API's spans (`create_cd` with the root's name, `add_to_cd_via_*` with the
//!   ranges, `advance_cd_point_in_time`, `restore_cd`, `commit_cd`, ...) as slices with their
//!   arguments (the span's fields) and their duration;
//! - every MPI call the program makes, named by the call (`MPI_Isend`), with `route`: `live`
//!   (straight to MPI, nothing logged), `logged` (to MPI, then into the CD's log),
//!   `replayed` (served from the log after `restore_cd`), `dropped send` (a send the log
//!   says was made before the fault: not sent again) or `runtime` (the runtime's own traffic);
//!   the `replay` span inside a replayed call;
//! - a `recovery` slice around a restored rank's replay: opened at the first call the log
//!   serves, closed after the call that goes live (`calls`: how many it holds); the
//!   `restore_cd` slice is just before it (a `tracing` span cannot begin inside one call and
//!   end in a later one that runs in another span without breaking the slices' nesting), and
//!   `cd-timeline-merge` moves the recovery's begin to the restore's, so that in the merged
//!   trace the restore and its replay are one slice;
//! - cd-persist's phases (`persist`, `recover`, `fetch`, `flush`, `flush_wait`,
//!   `flush_copy`) and cd-redset's (`redset_apply`, `encode`, `rebuild`, `redset_recover`),
//!   and events (warnings, a replay going live) as instants;
//! - one track per thread: work on a thread of the runtime's own (the background flush's
//!   `flush_copy`) is on that thread's track. The built-in CUDA space's synchronous copies
//!   are `gpu_copy` slices (`to`, `bytes`) inside the CD call that made them; the
//!   asynchronous advance's drain, which the device runs between calls, is a `drain` slice
//!   (`cd`, `space`, `bytes`, `end`: `completed`, `discarded` by a restore, or `failed: ...`)
//!   on the track of a thread of cd-core's, `cd drain`, which watches it from the
//!   `cd_advance_async` call to its completion (to within a quarter of a millisecond; see
//!   cd-core's `drain_track.rs`).
//!
//! # Which layer crate, and why
//! `tracing-chrome` (0.7, MIT, Thoren Paulson): a `tracing-subscriber` `Layer`, so it sits
//! beside `CD_TRACE`'s `fmt` layer on one registry with a per-layer filter, and the spans
//! the runtime already has are the timeline with no second instrumentation. It writes from a
//! thread of its own through a channel (the traced thread formats nothing), builds its JSON
//! with `serde_json` and records a span's fields, including those recorded after it opened
//! (the MPI call's `route`), as the slice's arguments. The alternatives: `tracing-flame`
//! writes folded stacks (a flame graph, no time axis), `tracing-timing` histograms, and
//! `tracing-tracy`/`tracing-perfetto`-style layers need a running viewer or write a binary
//! protocol that `chrome://tracing` does not read. Its limits, and what we do about them:
//! every event has `"pid": 1` (the merge sets the rank), and the file is only complete once
//! its guard is dropped (at exit, below).
//!
//! # Naming the file by rank
//! The rank is known only after `MPI_Init`, and libcd installs the layer when it is loaded.
//! So the layer writes to `<prefix>.<pid>.json` from the start; a small layer beside it
//! notes the rank in `MPI_COMM_WORLD` when the span of `MPI_Init` or `MPI_Init_thread`
//! closes (MPI is initialised then; `PMPI_Comm_rank`, straight to the library), and at exit
//! (an `atexit` handler registered at load, after `MPI_Finalize` and its span closed) the
//! file is completed and renamed to `<prefix>.<rank>.json`. Where the wrappers did not see
//! `MPI_Init` (a Fortran `MPI_INIT` that MPICH sends to `PMPI_Init`), the rank the launcher
//! gave (`PMI_RANK` of MPICH's Hydra and Slurm's PMI, `OMPI_COMM_WORLD_RANK`, `PMIX_RANK`)
//! names it. A process with neither (no MPI, no launcher) keeps the pid's name; one that dies
//! without `exit` (killed, `_exit`, `MPI_Abort`) leaves the pid's file without its closing
//! `]`, which the trace-event format allows and both viewers accept.
//!
//! # Cost
//! Unset, nothing is installed: every span costs what it costs with `CD_TRACE` off, one
//! relaxed load of `tracing`'s maximum level (and a wrapped MPI call on its fast path loads
//! nothing more: the `mpi` span is opened only on the traced path). Set, every MPI call takes
//! its handler and opens its span (as `CD_TRACE=cd_mpi_intercept=trace` does).
//!
//! Measured unset (2026-11-27, release builds of `743c8c2` and of this layer, MPICH 4.0.2,
//! instructions counted by callgrind, which the load of a shared 2-core machine does not
//! move): per iteration of a loop of one `MPI_Allreduce` passed straight through, one logged
//! and one `add_to_cd_via_copy` and `advance_cd_point_in_time`, the two `MPI_Allreduce`
//! took 1569 instructions in both builds, the add 2587 and 2589, the advance 4587 and 4584;
//! `objdump` shows the exported `MPI_Send`, `MPI_Isend`, `MPI_Irecv`, `MPI_Waitall` and
//! `MPI_Allreduce` identical but for addresses. Timing it (`mpi_overhead --bench pingpong`)
//! here gave ratios of 0.6 to 1.4 between runs of one build at a load of 5 to 7: no figure.

use std::ffi::{c_int, OsString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;
use tracing::level_filters::LevelFilter;
use tracing::span;
use tracing_chrome::{ChromeLayerBuilder, EventOrSpan, FlushGuard};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// The variable holding the files' path prefix.
pub(crate) const TIMELINE_ENV: &str = "CD_TIMELINE";

/// The crates whose spans and events make the timeline (all of them, every level).
const TARGETS: [&str; 7] = [
    "cd_core",
    "cd_mpi_intercept",
    "cd_persist",
    "cd_redset",
    "cd_cuda",
    "cd",
    "containment",
];

/// What the `atexit` handler completes: the writer's guard and the file's names.
struct Open {
    guard: FlushGuard,
    /// `<prefix>.<pid>.json`, written to.
    path: PathBuf,
    /// `<prefix>`.
    prefix: OsString,
    /// The process that opened it: a child forked from it has no writer thread to join.
    pid: u32,
}

/// The open timeline, taken by [`finish`].
static OPEN: Mutex<Option<Open>> = Mutex::new(None);

/// The rank in `MPI_COMM_WORLD`, once `MPI_Init` returned (-1 before).
static RANK: AtomicI32 = AtomicI32::new(-1);

/// The layer `CD_TIMELINE=<prefix>` asks for, writing to `<prefix>.<pid>.json` (see the
/// module docs), and the `atexit` handler that completes and renames the file registered.
pub(crate) fn layer(
    prefix: OsString,
) -> Result<Box<dyn Layer<Registry> + Send + Sync + 'static>, String> {
    let mut path = prefix.clone();
    path.push(format!(".{}.json", std::process::id()));
    let path = PathBuf::from(path);
    let file = std::fs::File::create(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let (chrome, guard) = ChromeLayerBuilder::<Registry>::new()
        .writer(file)
        .include_args(true)
        .include_locations(false)
        .name_fn(Box::new(slice_name))
        .build();
    *OPEN.lock().unwrap_or_else(|e| e.into_inner()) = Some(Open {
        guard,
        path,
        prefix,
        pid: std::process::id(),
    });
    // SAFETY: `finish` is an `extern "C" fn()` that catches its panics.
    if unsafe { libc::atexit(finish) } != 0 {
        return Err("cannot register the handler that completes the file at exit".to_owned());
    }
    let mut targets = Targets::new();
    for target in TARGETS {
        targets = targets.with_target(target, LevelFilter::TRACE);
    }
    Ok(Box::new(Calls.and_then(chrome).with_filter(targets)))
}

/// Marks the start of the file's clock with the wall-clock time, once the subscriber is
/// installed: an instant event `timeline start` whose `unix_us` (microseconds since the
/// epoch, when the event was written) lets `cd-timeline-merge` put the ranks on one clock.
pub(crate) fn started() {
    let unix_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    tracing::info!(target: "cd::timeline", unix_us = %unix_us, pid = std::process::id(), "timeline start");
}

/// A slice's name: the MPI call's for the wrappers' `mpi` span (`MPI_Isend`), else the
/// span's or event's own.
fn slice_name(item: &EventOrSpan<'_, '_, Registry>) -> String {
    match item {
        EventOrSpan::Span(span) => match span.extensions().get::<CallName>() {
            Some(call) => call.0.to_owned(),
            None => span.name().to_owned(),
        },
        EventOrSpan::Event(event) => event.metadata().name().to_owned(),
    }
}

/// The MPI call an `mpi` span is of.
struct CallName(String);

/// Marks the span of `MPI_Init`/`MPI_Init_thread`: its close is when the rank is known.
struct Init;

/// The layer beside `tracing-chrome`'s: names the `mpi` spans by their call, and notes the
/// rank when `MPI_Init` returns.
struct Calls;

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Calls {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "mpi" {
            return;
        }
        let mut call = CallVisitor(None);
        attrs.record(&mut call);
        let (Some(call), Some(span)) = (call.0, ctx.span(id)) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if call == "MPI_Init" || call == "MPI_Init_thread" {
            extensions.insert(Init);
        }
        extensions.insert(CallName(call));
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        if span.extensions().get::<Init>().is_some() && RANK.load(Ordering::Relaxed) < 0 {
            RANK.store(cd_mpi_intercept::world_rank(), Ordering::Relaxed);
        }
    }
}

/// Reads the `call` field of an `mpi` span.
struct CallVisitor(Option<String>);

impl tracing::field::Visit for CallVisitor {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "call" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "call" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

/// The rank the launcher set in the environment, if any (see the module docs).
fn launcher_rank() -> Option<c_int> {
    ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .into_iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}

/// At exit: completes the file (the guard's drop writes the closing `]` and joins the writer
/// thread) and renames it by rank when the rank is known.
extern "C" fn finish() {
    let _ = std::panic::catch_unwind(|| {
        let Some(open) = OPEN.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        if open.pid != std::process::id() {
            // A forked child exiting: the writer thread is its parent's (joining it here
            // would wait forever), and so is the file.
            std::mem::forget(open);
            return;
        }
        drop(open.guard);
        let rank = match RANK.load(Ordering::Relaxed) {
            rank if rank >= 0 => rank,
            _ => match launcher_rank() {
                Some(rank) => rank,
                None => return,
            },
        };
        let mut renamed = open.prefix;
        renamed.push(format!(".{rank}.json"));
        if let Err(e) = std::fs::rename(&open.path, &renamed) {
            // Asked for a timeline, so standard error is the user's: one line.
            let line = format!(
                "libcd: {TIMELINE_ENV}: cannot rename {} to {}: {e}\n",
                open.path.display(),
                renamed.to_string_lossy()
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        }
    });
}
