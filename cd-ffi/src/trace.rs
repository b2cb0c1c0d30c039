//! `CD_TRACE`: the runtime's `tracing` spans and events for programs in any language.
//!
//! Every CD API call and every MPI wrapper runs in a `tracing` span, and diagnostics (a replay
//! going live, a record the log refused, a mismatch) are `tracing` events. A Rust program
//! installs its own subscriber; a C, Fortran or Python program cannot, so libcd installs one
//! when the library is loaded, if and only if `CD_TRACE` is set:
//!
//! - `CD_TRACE=<filter>`: which spans and events, in `tracing-subscriber`'s `EnvFilter`
//!   syntax (`debug`; `cd_mpi_intercept=trace` for every MPI call; `cd_core=debug,warn`).
//!   Each span is written when it closes, with the time it took.
//! - `CD_TRACE_FILE=<prefix>`: write to `<prefix>.<pid>` (one file per process, so MPI ranks
//!   do not interleave), appended to; otherwise to standard error.
//!
//! Unset, nothing is installed and nothing is written: the spans then cost one relaxed load
//! each. A filter that enables the MPI wrappers' `TRACE` spans also sends every wrapped call
//! through its handler (which opens the span) instead of straight to MPI. A bad filter or an
//! unwritable file is reported once on standard error (tracing was asked for) and tracing
//! stays off; the program runs on either way.
//!
//! `CD_TIMELINE=<prefix>` (`timeline.rs`) adds a layer of its own to the same subscriber,
//! with its own filter: the two may be set together, and either alone installs it.

use crate::timeline::{self, TIMELINE_ENV};
use std::ffi::OsString;
use std::io::Write;
use tracing::field::{Field, Visit};
use tracing_subscriber::field::{RecordFields, VisitOutput};
use tracing_subscriber::filter::EnvFilter;
use tracing_subscriber::fmt::format::{DefaultVisitor, FmtSpan, Writer};
use tracing_subscriber::fmt::{FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

/// The variable holding the filter.
const TRACE_ENV: &str = "CD_TRACE";
/// The variable holding the output file's prefix.
const FILE_ENV: &str = "CD_TRACE_FILE";

/// A layer of the subscriber libcd installs.
type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync + 'static>;

/// Runs [`install`] when the library is loaded (before `main`, and at `dlopen`): a program
/// in another language has no earlier moment at which libcd could run.
// Why a constructor is sound here: `init` only reads the environment and installs a subscriber;
// it touches no state another constructor could need, and catches every panic.
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    let filter = std::env::var_os(TRACE_ENV);
    let timeline = std::env::var_os(TIMELINE_ENV);
    if filter.is_none() && timeline.is_none() {
        return;
    }
    let file = std::env::var_os(FILE_ENV);
    if let Err((variable, problem)) = std::panic::catch_unwind(|| install(filter, file, timeline))
        .unwrap_or_else(|_| {
            Err((
                TRACE_ENV,
                "a panic while installing the subscriber".to_owned(),
            ))
        })
    {
        ignored(variable, &problem);
    }
}

/// Says that `variable` is ignored, and why.
fn ignored(variable: &str, problem: &str) {
    // Asked for tracing, so standard error is the user's: one line, then on without it,
    // in one write (the ranks' lines must not interleave where `mpirun` merges them).
    let line = format!("libcd: {variable} ignored: {problem}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Installs the subscriber `CD_TRACE` and `CD_TIMELINE` ask for (see the module docs and
/// `timeline.rs`): one registry with a layer for each that is set and usable. A variable that
/// cannot be honoured is reported here (the other one still is) or returned.
fn install(
    filter: Option<OsString>,
    file: Option<OsString>,
    timeline: Option<OsString>,
) -> Result<(), (&'static str, String)> {
    let mut layers: Vec<BoxedLayer> = Vec::new();
    let mut timeline_on = false;
    if let Some(filter) = filter {
        match text_layer(&filter, file) {
            Ok(layer) => layers.push(layer),
            Err(problem) => ignored(TRACE_ENV, &problem),
        }
    }
    if let Some(prefix) = timeline {
        match timeline::layer(prefix) {
            Ok(layer) => {
                layers.push(layer);
                timeline_on = true;
            }
            Err(problem) => ignored(TIMELINE_ENV, &problem),
        }
    }
    if layers.is_empty() {
        return Ok(());
    }
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layers))
        .map_err(|e| (TRACE_ENV, format!("cannot install the subscriber: {e}")))?;
    if timeline_on {
        timeline::started();
    }
    if tracing::enabled!(target: "cd_mpi_intercept::boundary", tracing::Level::TRACE) {
        cd_mpi_intercept::trace_every_call();
    }
    Ok(())
}

/// The layer `CD_TRACE` asks for: spans as text, each when it closes (see the module docs).
fn text_layer(filter: &OsString, file: Option<OsString>) -> Result<BoxedLayer, String> {
    let filter = filter
        .to_str()
        .ok_or_else(|| format!("{TRACE_ENV} is not UTF-8"))?;
    let filter = EnvFilter::builder()
        .parse(filter)
        .map_err(|e| format!("{TRACE_ENV}={filter:?}: {e}"))?;
    let layer = tracing_subscriber::fmt::layer()
        .fmt_fields(TextFields)
        .with_span_events(FmtSpan::CLOSE)
        .with_thread_ids(true)
        .with_ansi(false);
    Ok(match file {
        Some(prefix) => {
            let mut path = prefix;
            path.push(format!(".{}", std::process::id()));
            let out = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| format!("{FILE_ENV}: cannot open {}: {e}", path.to_string_lossy()))?;
            layer
                .with_writer(std::sync::Mutex::new(out))
                .with_filter(filter)
                .boxed()
        }
        None => layer
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    })
}

/// `CD_TRACE`'s fields: `tracing-subscriber`'s default form, less the `route` of the MPI
/// wrappers' `mpi` span, which is the timeline's: the text stays as it was (`mpi{call="X"}`).
struct TextFields;

impl<'w> FormatFields<'w> for TextFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'w>, fields: R) -> std::fmt::Result {
        let mut visitor = NoRoute(DefaultVisitor::new(writer, true));
        fields.record(&mut visitor);
        visitor.0.finish()
    }

    fn add_fields(
        &self,
        current: &'w mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> std::fmt::Result {
        let empty = current.fields.is_empty();
        let mut visitor = NoRoute(DefaultVisitor::new(current.as_writer(), empty));
        fields.record(&mut visitor);
        visitor.0.finish()
    }
}

/// Passes every field but `route` on to the default visitor (which spaces them).
struct NoRoute<'w>(DefaultVisitor<'w>);

impl Visit for NoRoute<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() != "route" {
            self.0.record_str(field, value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if field.name() != "route" {
            self.0.record_error(field, value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() != "route" {
            self.0.record_debug(field, value);
        }
    }
}
