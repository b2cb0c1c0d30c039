//! Error handlers in a ULFM job: the runtime's own on `MPI_COMM_WORLD`, the application's
//! kept aside.
//!
//! A job launched with ULFM (`mpirun --with-ft ulfm`, which sets `OMPI_MCA_mpi_ft_enable=1`
//! in every rank's environment) against a family whose headers declare ULFM's error classes
//! ([`abi::ULFM`]) is in *ULFM mode*: at `MPI_Init` the runtime sets an error handler of its
//! own on `MPI_COMM_WORLD`, which every communicator made from it inherits. A process failure
//! reported through it (`MPIX_ERR_PROC_FAILED`, `MPIX_ERR_PROC_FAILED_PENDING`,
//! `MPIX_ERR_REVOKED`) is the runtime's to handle ([`crate::loss`]); any other error goes to
//! the handler the application chose, as MPI would have: `MPI_ERRORS_RETURN` returns the
//! code, `MPI_ERRORS_ARE_FATAL` (the default) prints MPI's description and aborts the job, a
//! handler of the application's is called. The application's `MPI_Comm_set_errhandler` and
//! `MPI_Comm_get_errhandler` see its own choice: the one it set on that communicator, else
//! the one it set on `MPI_COMM_WORLD`, else `MPI_ERRORS_ARE_FATAL`. (MPI itself would have a
//! new communicator inherit its parent's; the runtime does not follow communicator
//! construction for this, so a handler set on a derived communicator is not inherited by the
//! communicators made from it.)
//!
//! A process failure seen inside a call that survives a loss ([`covered`]) returns its code to
//! that call, which repairs the world (`crate::recovery`); seen anywhere else it ends the job
//! (`crate::loss`), with the reason [`why_not_contained`] gives.
//!
//! Whether a loss can be contained is decided here too: from the first complete version on
//! ([`start_containing`]) until the application does something a replacement could not
//! re-execute the same way ([`stop_containing`]: a choice not recorded, such as a probe or a
//! wildcard receive, or a derived communicator), and whether the covered calls keep what a
//! replacement needs ([`keeping`], also in the program's start).
//!
//! Outside ULFM mode the wrappers pass straight through and nothing is installed.

use crate::abi::{self, Comm, Errhandler};
use crate::pmpi::{real, safe, Call, ErrhandlerFn};
use crate::stats;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// The environment variable Open MPI's `mpirun --with-ft ulfm` sets in every rank.
pub(crate) const FT_ENABLE_ENV: &str = "OMPI_MCA_mpi_ft_enable";

/// Whether this process runs in ULFM mode (set once at `MPI_Init`).
static ULFM_MODE: AtomicBool = AtomicBool::new(false);

/// The runtime's handler, once made.
static OURS: AtomicU64 = AtomicU64::new(0);

/// The handlers the application set, by communicator.
static CHOSEN: Mutex<Option<HashMap<u64, Errhandler>>> = Mutex::new(None);

/// The functions of the error handlers the application created, by handler.
static FUNCTIONS: Mutex<Option<HashMap<u64, ErrhandlerFn>>> = Mutex::new(None);

/// Whether this process runs in ULFM mode.
pub(crate) fn ulfm_mode() -> bool {
    ULFM_MODE.load(Ordering::Relaxed)
}

/// The environment variable that turns in-job recovery off (`0`).
pub(crate) const REPAIR_ENV: &str = "CD_ULFM_REPAIR";

/// Whether a loss is contained (`crate::recovery`): in ULFM mode, from the first complete
/// version of a persistent CD on, unless `CD_ULFM_REPAIR=0`.
static CONTAINING: AtomicBool = AtomicBool::new(false);

/// A thread's covered calls (see [`covered`]).
struct Covered {
    /// Set while a call that survives a loss is in MPI: the handler then returns the code.
    inside: Cell<bool>,
    /// The repair generation (`crate::recovery`) its last covered call saw.
    seen: Cell<u64>,
}

thread_local! {
    static COVERED: Covered = const {
        Covered {
            inside: Cell::new(false),
            seen: Cell::new(0),
        }
    };
}

/// Whether a loss is contained now (one relaxed load).
#[inline(always)]
pub(crate) fn containing() -> bool {
    CONTAINING.load(Ordering::Relaxed)
}

/// Whether `CD_ULFM_REPAIR=0` turned in-job recovery off (read once: the collectives run as
/// all-forms ask on every call).
fn repair_off() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OFF.get_or_init(|| std::env::var(REPAIR_ENV).is_ok_and(|v| v == "0"))
}

/// Whether this is a ULFM job whose losses are to be contained (`CD_ULFM_REPAIR` is not `0`).
pub(crate) fn repair_wanted() -> bool {
    ulfm_mode() && !repair_off()
}

/// From now on a loss is contained, if ULFM mode is on and recovery not turned off; returns
/// whether it is.
pub(crate) fn start_containing() -> bool {
    if !repair_wanted() {
        return false;
    }
    if STOPPED_BY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some()
    {
        return false;
    }
    if !CONTAINING.swap(true, Ordering::Relaxed) {
        tracing::debug!("a loss in this ULFM job is contained from now on");
    }
    true
}

/// Why containment stopped (see [`stop_containing`]).
static STOPPED_BY: Mutex<Option<&'static str>> = Mutex::new(None);

/// What runs when this rank stops containing (in-job recovery tells the survivors: a loss of
/// this rank is then not contained either).
static ON_STOP: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what runs when this rank stops containing (once).
pub(crate) fn on_stop(f: fn()) {
    let _ = ON_STOP.set(f);
}

/// From now on a loss ends the job, for the reason `why` (the end of a rank's line): the
/// application did something a replacement could not re-execute.
pub(crate) fn stop_containing(why: &'static str) {
    let mut stopped = STOPPED_BY.lock().unwrap_or_else(|e| e.into_inner());
    if stopped.is_none() {
        *stopped = Some(why);
        CONTAINING.store(false, Ordering::Relaxed);
        drop(stopped);
        tracing::warn!(why, "a later loss in this ULFM job ends it");
        if let Some(f) = ON_STOP.get() {
            f();
        }
    }
}

/// Whether this rank stopped containing ([`stop_containing`]).
pub(crate) fn stopped() -> bool {
    STOPPED_BY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some()
}

/// Whether this process is in the program's start (`crate::recovery::prologue`).
static IN_START: AtomicBool = AtomicBool::new(false);

/// The program's start begins (`true`, at `MPI_Init`) or ends (`false`); returns whether it was
/// in it.
pub(crate) fn set_in_start(now: bool) -> bool {
    IN_START.swap(now, Ordering::Relaxed)
}

/// Whether this process is in the program's start.
#[inline(always)]
pub(crate) fn in_start() -> bool {
    IN_START.load(Ordering::Relaxed)
}

/// Whether the calls that survive a loss keep what a replacement needs: while a loss is
/// contained, and in the program's start, which a replacement re-executes (two relaxed loads).
#[inline(always)]
pub(crate) fn keeping() -> bool {
    containing() || in_start()
}

/// Whether `call` makes a communicator from groups (MPI-4), with no parent communicator.
fn from_groups(call: Call) -> bool {
    #[cfg(mpi4_full)]
    if call == Call::Intercomm_create_from_groups {
        return true;
    }
    #[cfg(mpi4)]
    if call == Call::Comm_create_from_group {
        return true;
    }
    let _ = call;
    false
}

/// The application makes a communicator from `comm` with `call`, a constructor in-job recovery
/// does not follow (`crate::derived`). A replacement would
/// make it again, and its peers would not join that constructor: from now on a loss ends the
/// job clearly, unless no other process takes part (`comm` holds this process alone).
pub(crate) fn communicator_made(call: Call, comm: Comm) {
    let others = from_groups(call)
        || call == Call::Intercomm_create
        || safe::comm_test_inter(comm)
        || safe::comm_size(comm) > 1;
    if others {
        stop_containing(
            "the application made a communicator that in-job recovery does not rebuild \
             (from groups, or MPI_Comm_idup inside a CD that logs)",
        );
    }
}

/// The application probes for a message from `source` (`with_flag`: `MPI_Iprobe` or
/// `MPI_Improbe`) where in-job recovery does not record the outcome (a communicator it does not
/// follow, an intercommunicator; `crate::recovery` records the others). Whether a message was
/// there (the flag) and which one matched a wildcard source are choices a replacement would
/// have to repeat: from now on a loss ends the job clearly. A blocking probe of one source is
/// no choice.
pub(crate) fn probed(source: c_int, with_flag: bool) {
    if with_flag || source == abi::ANY_SOURCE {
        stop_containing(
            "the application probed where in-job recovery does not record the outcome (a \
             communicator it does not follow, an intercommunicator), which a replacement \
             could not repeat",
        );
    }
}

/// Runs `f` (an MPI call of a call that survives a loss) so that a process failure returns
/// its code instead of ending the job; `generation` is noted as the one it saw (one
/// thread-local access for both).
pub(crate) fn covered_at<R>(generation: u64, f: impl FnOnce() -> R) -> R {
    COVERED.with(|c| {
        c.seen.set(generation);
        let was = c.inside.replace(true);
        let r = f();
        c.inside.set(was);
        r
    })
}

/// [`covered_at`] for the runtime's own calls during a repair (the generation unchanged).
pub(crate) fn covered<R>(f: impl FnOnce() -> R) -> R {
    COVERED.with(|c| {
        let was = c.inside.replace(true);
        let r = f();
        c.inside.set(was);
        r
    })
}

/// The generation this thread's last covered call saw.
pub(crate) fn seen_generation() -> u64 {
    COVERED.with(|c| c.seen.get())
}

/// Whether a covered call is in MPI on this thread.
fn in_covered_call() -> bool {
    COVERED.with(|c| c.inside.get())
}

/// Why this rank cannot contain a loss it saw outside a covered call, for its line.
pub(crate) fn why_not_contained() -> &'static str {
    if repair_off() {
        "in-job recovery is off (CD_ULFM_REPAIR=0)"
    } else if let Some(why) = *STOPPED_BY.lock().unwrap_or_else(|e| e.into_inner()) {
        why
    } else if !containing() {
        "no version of a persistent CD is complete yet to restore the lost rank from"
    } else if crate::boundary::inside() {
        "it came during the runtime's own communication (a persist or a restore under way), \
         which in-job recovery does not cover"
    } else {
        "it reached this rank in a call that in-job recovery does not cover (another \
         collective, a call on a communicator it does not follow)"
    }
}

/// At `MPI_Init`: enters ULFM mode if the job and the library have it, and installs the
/// runtime's handler on `MPI_COMM_WORLD`.
pub(crate) fn init() {
    let launched_with_ft = std::env::var(FT_ENABLE_ENV).is_ok_and(|v| v == "1" || v == "true");
    if abi::ULFM.is_none() || !launched_with_ft {
        return;
    }
    let function: unsafe extern "C" fn(*mut Comm, *mut c_int) = on_error;
    // SAFETY: MPI calls the handler with the communicator and the code and nothing more on
    // x86-64 and aarch64, where a variadic caller and a fixed-argument callee agree on the
    // first two arguments; the handler reads only those.
    let function: ErrhandlerFn = unsafe { std::mem::transmute(function) };
    let mut ours = abi::predefined().errors_are_fatal;
    // SAFETY: writes one handle.
    let rc = unsafe { real::Comm_create_errhandler(function, &mut ours) };
    OURS.store(ours.bits(), Ordering::Relaxed);
    if rc != abi::SUCCESS || !install(abi::predefined().comm_world) {
        tracing::warn!(rc, "ULFM job: cannot install the runtime's error handler");
        return;
    }
    ULFM_MODE.store(true, Ordering::Relaxed);
    ignore_sigpipe();
    tracing::debug!("ULFM job: process failures are the runtime's to handle");
}

/// A survivor that writes to a lost process's socket gets `SIGPIPE`, whose default action
/// ends it: Open MPI 5 reaches a spawned replacement over TCP, and when that replacement is
/// lost in turn, a survivor was seen ending that way (PRRTE: "terminated with signal Broken
/// pipe"), a second loss that nothing caused. So in a ULFM job the runtime ignores `SIGPIPE`
/// unless the application handles it: the write then fails with `EPIPE`, and MPI reports
/// the failure like any other.
fn ignore_sigpipe() {
    // SAFETY: `sigaction` with no new action only reads the current one into `old`.
    let default = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_DFL
    };
    if default {
        // SAFETY: sets the disposition of one signal to a constant; no handler runs.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        tracing::debug!("ULFM job: SIGPIPE ignored (a write to a lost peer fails with EPIPE)");
    }
}

/// Puts the runtime's handler on `comm` (the world, a repaired world, a replacement's parent);
/// `false` if MPI refuses.
pub(crate) fn install(comm: Comm) -> bool {
    let ours = Errhandler::from_bits(OURS.load(Ordering::Relaxed));
    // SAFETY: no pointer is passed.
    unsafe { real::Comm_set_errhandler(comm, ours) == abi::SUCCESS }
}

/// The handler the application has chosen for `comm` (see the module docs).
fn chosen(comm: Comm) -> Errhandler {
    let chosen = CHOSEN.lock().unwrap_or_else(|e| e.into_inner());
    let world = abi::predefined().comm_world;
    chosen
        .as_ref()
        .and_then(|c| c.get(&comm.bits()).or_else(|| c.get(&world.bits())))
        .copied()
        .unwrap_or(abi::predefined().errors_are_fatal)
}

/// Forgets the application's choice for a communicator it frees (its handle may come back).
pub(crate) fn forget(comm: Comm) {
    if ulfm_mode() {
        if let Some(chosen) = CHOSEN.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            chosen.remove(&comm.bits());
        }
    }
}

/// `MPI_Comm_create_errhandler`: the function is remembered, so that the runtime's handler
/// can call it.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_create_errhandler(
    function: ErrhandlerFn,
    errhandler: *mut Errhandler,
) -> c_int {
    stats::count(Call::Comm_create_errhandler);
    // SAFETY: forwarded.
    let rc = unsafe { real::Comm_create_errhandler(function, errhandler) };
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote the handle.
        let handle = unsafe { *errhandler };
        FUNCTIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(handle.bits(), function);
    }
    rc
}

/// `MPI_Comm_set_errhandler`: in ULFM mode the choice is kept aside (the runtime's handler
/// stays on the communicator and calls it for errors that are not process failures).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_set_errhandler(comm: Comm, errhandler: Errhandler) -> c_int {
    stats::count(Call::Comm_set_errhandler);
    if !ulfm_mode() {
        // SAFETY: forwarded.
        return unsafe { real::Comm_set_errhandler(comm, errhandler) };
    }
    CHOSEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(comm.bits(), errhandler);
    abi::SUCCESS
}

/// `MPI_Comm_get_errhandler`: in ULFM mode, the application's own choice.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_get_errhandler(comm: Comm, errhandler: *mut Errhandler) -> c_int {
    stats::count(Call::Comm_get_errhandler);
    if !ulfm_mode() {
        // SAFETY: forwarded.
        return unsafe { real::Comm_get_errhandler(comm, errhandler) };
    }
    if errhandler.is_null() {
        return abi::ERR_ARG;
    }
    // SAFETY: a non-null out-parameter, writable by the caller's contract.
    unsafe { errhandler.write(chosen(comm)) };
    abi::SUCCESS
}

/// Whether `class` is one of ULFM's process-failure classes.
pub(crate) fn is_process_failure(class: c_int) -> bool {
    abi::ULFM.is_some_and(|u| {
        class == u.proc_failed || class == u.proc_failed_pending || class == u.revoked
    })
}

/// The runtime's error handler (see the module docs). No panic leaves it.
extern "C" fn on_error(comm: *mut Comm, code: *mut c_int) {
    let _ = std::panic::catch_unwind(|| {
        if comm.is_null() || code.is_null() {
            return;
        }
        if crate::loss::ending() {
            // the runtime's own calls on revoked communicators, while it ends the job
            return;
        }
        // SAFETY: MPI passes its own communicator and code, valid for the call.
        let (mut handle, mut error) = unsafe { (*comm, *code) };
        if is_process_failure(safe::error_class(error)) {
            if crate::pmpi::world::is_former(handle) || crate::derived::is_former(handle) {
                // a request of a communicator a repair replaced (one it freed still pending)
                // fails late: the repair has dealt with it
                return;
            }
            if in_covered_call() {
                // the covered call sees the code and repairs the world
                return;
            }
            crate::loss::process_lost(handle, why_not_contained());
        }
        let chosen = chosen(handle);
        let predefined = abi::predefined();
        if chosen == predefined.errors_return {
            return;
        }
        let function = FUNCTIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|f| f.get(&chosen.bits()).copied());
        match function {
            // SAFETY: the application's handler, called as MPI would call it.
            Some(f) => unsafe { f(&mut handle, &mut error) },
            None => {
                let line = format!(
                    "libcd: rank {}: MPI error on a communicator whose handler is \
                     MPI_ERRORS_ARE_FATAL: {}\n",
                    safe::world_rank(),
                    safe::error_string(error)
                );
                let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                // SAFETY: no pointer is passed; the job ends.
                unsafe { real::Abort(handle, error) };
            }
        }
    });
}
