//! The MPI interposition layer of Containment Domains: PMPI wrappers that log each rank's MPI
//! traffic into its active CD and replay it after `restore_cd`, so that one rank re-executes in
//! isolation while the others never notice.
//!
//! This crate is linked into `libcd` (cd-ffi), which exports its wrappers: an application that
//! calls the CD API links `-lcd`, an unmodified MPI application gets the same wrappers with
//! `LD_PRELOAD=libcd.so`. The wrappers find the MPI library's own functions at run time
//! (`dlsym(RTLD_NEXT)`), and `libcd.so` (MPICH build) records no dependency on the MPI library,
//! so a program without MPI links and runs with it: the runtime's own MPI code (persistent CDs,
//! `cd-persist` through cd-redset and rsmpi) calls MPI through libcd's exports (see
//! [`exports`]). The Open MPI build depends on Open MPI's library (rsmpi references its
//! predefined handles, which are the library's globals), and `libcd.a` needs the MPI library
//! at a static link. The only project crate this one depends on is cd-core: libcd wires
//! persistence in through [`Hooks`] and [`message_counts`].
//!
//! # Layers, bottom to top
//! - [`abi`]: handle types, `MPI_Status` and constants read from the MPI headers at build
//!   time; `resolve`: finding the MPI library's `PMPI_X`.
//! - [`pmpi`]: the raw layer, generated from the table of every function (`pmpi::table`, the
//!   one list of what is wrapped, unreplayable, forwarded or only called): [`pmpi::Call`],
//!   `pmpi::real::X` (the library's own `PMPI_X`) and `pmpi::safe`, safe forms of the calls
//!   the runtime makes for itself.
//! - `boundary` (the panic boundary and the re-entrancy guard), `stats` (`CD_MPI_STATS`),
//!   `types` (the predefined datatypes whose data is copied as it is), `copy` (copies into the
//!   log), `record` (the log record format), `traffic` (per-peer message counts while
//!   persistence is in use: the evidence with which a persist proves that no application
//!   message is in flight; in a ULFM job also by tag, `by_tag`), `hooks` (what libcd adds at
//!   `MPI_Init` and `MPI_Finalize`).
//! - `engine`: routing (one thread-local read when no CD logs) and mismatch errors, the
//!   request tables, virtual requests, completions, status probing and the restore drain.
//! - The handlers, by family of calls: `p2p`, `wait`, `coll`, `comm` (also the communicators
//!   and persistent requests freed while logging, held until no log can replay them), `mpi4`
//!   (MPI-4's Isendrecv(_replace), compiled only against a library that declares them, MPICH 4
//!   or Open MPI 5: `cfg(mpi4)` set by build.rs), `large` (the large-count `MPI_X_c` forms,
//!   narrowed to their int forms' handlers, `cfg(mpi4_full)`: `MPI_VERSION >= 4`),
//!   `passthrough` (one-sided, I/O, spawn and partitioned calls, which cannot be replayed),
//!   `init` (set-up and tear-down).
//! - `errors` (ULFM mode: the runtime's error handler) and `loss` (a loss that ends the job)
//!   below; `recovery` above the handlers: in a ULFM job a lost process is contained in the
//!   job (the world repaired, a replacement rebuilt from the survivors' redundancy and fed
//!   from their journals), its calls taking the covered calls and falling back to the
//!   ordinary handlers.
//! - [`exports`]: the exported `MPI_X` and `PMPI_X` symbols, the table expanded over the
//!   handlers it names.
//!
//! # What is wrapped
//! The table in `pmpi/table.rs` lists every function with its C prototype and, for a wrapped
//! one, its handler: point-to-point, completion, collective (blocking, nonblocking,
//! neighbourhood, and with an MPI-4 library persistent) and communicator-constructor calls are
//! logged and replayed, as are their large-count forms when the counts a record holds fit in
//! an `int`; one-sided communication, MPI-IO, dynamic processes, partitioned communication and
//! large-count calls beyond `INT_MAX` are passed through, counted, and refused at restore
//! (`CD_ERR_UNREPLAYABLE`). Every other MPI function (Wtime, Type_*, Group_*, Info_*,
//! attributes, Session_*, ...) is not wrapped: it reaches MPI untouched; those the runtime's
//! own MPI code needs (Comm_rank, Comm_size, Comm_group, ...) are exported as they are, so that
//! after an in-job repair their `MPI_COMM_WORLD` means the repaired world like every exported
//! function's (one not exported gets the library's own world, on a replacement only itself).
//! Not covered: MPICH's `MPIX_` fault-tolerance calls (Comm_agree, Comm_shrink, Comm_revoke),
//! which pass through unseen (the runtime calls Open MPI 5's itself, in ULFM mode): Debian's
//! MPICH 4.0.2 (ch4) aborts in `MPIX_Comm_shrink` and `MPIX_Comm_agree` on a healthy
//! communicator (an assertion at `ch4_comm.c:76`, seen without libcd), so no wrapper of them
//! could be tested here.
//!
//! # The rules (the spec's, and DESIGN.md's)
//! - Only a thread whose active CD logs (`COMM_LOGGING_ENABLED`, or inherited) logs. Sends are
//!   events; receives, probes and collectives log their results; completion calls log which
//!   requests completed, in which order (the determinants).
//! - After `restore_cd`, calls are served from the log in FIFO order: receives and collectives
//!   get their logged data, sends already made are dropped. When the log is consumed the rank
//!   goes live again and logs again.
//! - A re-executed call that does not match its record gets an MPI error code whose string
//!   (`MPI_Error_string`) describes both calls, raised through the communicator's error handler;
//!   nothing is written into application memory.
//! - Nothing is ever printed: diagnostics go through `tracing`.
//! - The runtime's own MPI traffic runs under [`untraced`] and is never logged.

#![allow(non_snake_case)]

pub mod abi;
mod boundary;
mod by_tag;
mod coll;
mod comm;
mod copy;
mod derived;
mod engine;
mod errors;
pub mod exports;
mod hooks;
mod init;
mod large;
mod loss;
#[cfg(mpi4)]
mod mpi4;
mod p2p;
mod passthrough;
pub mod pmpi;
mod record;
mod recovery;
mod resolve;
mod stats;
mod topology;
mod traffic;
mod types;
mod wait;
mod wire;

pub use boundary::untraced;
pub use hooks::{set_hooks, Hooks};
pub use loss::LOST_EXIT_CODE;
#[cfg(fuzzing)]
pub use record::fuzz_read as fuzz_read_record;
pub use recovery::{persistent_create, version_complete};
pub use stats::STATS_ENV;
pub use traffic::{message_counts, MessageCounts};

/// This process's rank in the application's `MPI_COMM_WORLD` (after an in-job repair, in the
/// repaired world: a replacement has the lost rank's), or -1 outside `MPI_Init` ..
/// `MPI_Finalize`.
pub fn world_rank() -> std::ffi::c_int {
    let (mut initialized, mut finalized) = (0, 0);
    // SAFETY: both may be called at any time; each writes one int.
    unsafe {
        pmpi::real::Initialized(&mut initialized);
        pmpi::real::Finalized(&mut finalized);
    }
    if initialized == 0 || finalized != 0 {
        return -1;
    }
    pmpi::safe::world_rank()
}

/// Whether some wrapper work is needed even with no CD logging: statistics are kept
/// (`CD_MPI_STATS`), messages are counted (persistence in use), or every call is traced
/// ([`trace_every_call`]). One flag for all, so the fast path reads one.
static INTERCEPTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every wrapped call take its handler, also with no CD logging.
pub(crate) fn intercept() {
    INTERCEPTING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Makes every wrapped call enter its `tracing` span (`mpi`, with the call's name), also with
/// no CD logging anywhere, where it would otherwise go straight to MPI before any span: for a
/// subscriber that wants this crate's `TRACE` spans (libcd's `CD_TRACE`).
pub fn trace_every_call() {
    intercept();
}

/// Whether a wrapped call goes straight to MPI, before anything else: no CD logs anywhere in
/// the process, no statistics are kept and no messages counted. Two relaxed loads and no
/// thread-local access: while some CD logs, the handler's route makes the one thread-local
/// access a call needs (a thread whose own CD does not log is sent to MPI there), instead of
/// a second one here (libcd is a shared object: each is a call to `__tls_get_addr`).
#[inline(always)]
fn passes_through() -> bool {
    !cd_core::logging_anywhere() && !INTERCEPTING.load(std::sync::atomic::Ordering::Relaxed)
}
