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

use std::ffi::OsString;
use std::io::Write;
use tracing_subscriber::filter::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// The variable holding the filter.
const TRACE_ENV: &str = "CD_TRACE";
/// The variable holding the output file's prefix.
const FILE_ENV: &str = "CD_TRACE_FILE";

/// Runs [`install`] when the library is loaded (before `main`, and at `dlopen`): a program
/// in another language has no earlier moment at which libcd could run.
// Why a constructor is sound here: `init` only reads the environment and installs a subscriber;
// it touches no state another constructor could need, and catches every panic.
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    let Some(filter) = std::env::var_os(TRACE_ENV) else {
        return;
    };
    let file = std::env::var_os(FILE_ENV);
    if let Err(problem) = std::panic::catch_unwind(|| install(&filter, file))
        .unwrap_or_else(|_| Err("a panic while installing the subscriber".to_owned()))
    {
        // Asked for tracing, so standard error is the user's: one line, then on without it,
        // in one write (the ranks' lines must not interleave where `mpirun` merges them).
        let line = format!("libcd: {TRACE_ENV} ignored: {problem}\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// Installs the subscriber `CD_TRACE` asks for (see the module docs).
fn install(filter: &OsString, file: Option<OsString>) -> Result<(), String> {
    let filter = filter
        .to_str()
        .ok_or_else(|| format!("{TRACE_ENV} is not UTF-8"))?;
    let filter = EnvFilter::builder()
        .parse(filter)
        .map_err(|e| format!("{TRACE_ENV}={filter:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(FmtSpan::CLOSE)
        .with_thread_ids(true)
        .with_ansi(false);
    let installed = match file {
        Some(prefix) => {
            let mut path = prefix;
            path.push(format!(".{}", std::process::id()));
            let out = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| format!("{FILE_ENV}: cannot open {}: {e}", path.to_string_lossy()))?;
            builder.with_writer(std::sync::Mutex::new(out)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    installed.map_err(|e| format!("cannot install the subscriber: {e}"))?;
    if tracing::enabled!(target: "cd_mpi_intercept::boundary", tracing::Level::TRACE) {
        cd_mpi_intercept::trace_every_call();
    }
    Ok(())
}
