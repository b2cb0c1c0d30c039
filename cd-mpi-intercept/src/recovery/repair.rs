//! The survivors' repair of the world, and the steps every rank of the repaired world takes
//! together (the module docs of [`super`] tell the whole sequence).
//!
//! Every step runs as the runtime's own traffic (inside the guard: nothing is counted or
//! logged), under the watchdog of [`crate::loss`]. Where a step fails the job ends clearly
//! ([`crate::loss::end`]), as it would have without recovery.

use super::resync::check;
use super::{catchup, journal};
use crate::abi::{self, Comm, Request, Status};
use crate::boundary::Guard;
use crate::loss::{self, Watchdog};
use crate::pmpi::{real, safe, ulfm, world};
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The environment variable a replacement is spawned with (through the spawn's info).
pub(crate) const REPLACEMENT_ENV: &str = "CD_ULFM_REPLACEMENT";

/// Repairs completed in this process; one repair at a time.
static GENERATION: AtomicU64 = AtomicU64::new(0);
static REPAIRING: Mutex<()> = Mutex::new(());

/// Runs `f` (a covered call's MPI call) so that a process failure returns its code, noting
/// which world it ran on (see [`repair`]).
#[inline]
pub(crate) fn covered<R>(f: impl FnOnce() -> R) -> R {
    crate::errors::covered_at(GENERATION.load(Ordering::Acquire), f)
}

/// Whether `rc` reports a process failure or a revoked communicator.
pub(crate) fn is_failure(rc: c_int) -> bool {
    rc != abi::SUCCESS && crate::errors::is_process_failure(safe::error_class(rc))
}

/// The resends a repair started (request, the data it sends), completed by [`finalize`].
pub(super) static RESENDS: Mutex<Vec<(Request, Vec<u8>)>> = Mutex::new(Vec::new());

/// Repairs made, and their time in nanoseconds; messages resent; collective results served.
static REPAIRS: AtomicU64 = AtomicU64::new(0);
static REPAIR_NS: AtomicU64 = AtomicU64::new(0);
pub(super) static RESENT: AtomicU64 = AtomicU64::new(0);
pub(super) static SERVED: AtomicU64 = AtomicU64::new(0);

/// Repairs the world after a failure this survivor saw in its last covered call (see
/// [`super`]); returns once the world is repaired and this rank resent what its peers lacked.
/// Ends the job when the loss cannot be contained.
///
/// With several threads in MPI (`MPI_THREAD_MULTIPLE`), every thread whose call fails comes
/// here; one repairs, the others wait for it and then find the world repaired since their call
/// went into MPI, and complete their calls on it.
pub(crate) fn repair() {
    let _one = REPAIRING.lock().unwrap_or_else(|e| e.into_inner());
    if GENERATION.load(Ordering::Acquire) != crate::errors::seen_generation() {
        return;
    }
    // the repair's own calls see their failures as codes
    crate::errors::covered(|| repair_now(world::current()));
    GENERATION.fetch_add(1, Ordering::Release);
}

fn repair_now(comm: Comm) {
    let _guard = Guard::enter();
    let started = Instant::now();
    let watchdog = Watchdog::start(loss::line(
        &[],
        "the survivors did not complete the repair in time",
    ));
    // a survivor waiting on a derived communicator for one that is repairing (and not for
    // the lost rank) sees it revoked and joins the repair
    for derived in crate::derived::live() {
        ulfm::revoke(derived);
    }
    let shrunk = loss::revoke_and_shrink(comm);
    let Some(survivors) = shrunk.survivors else {
        loss::end(
            &shrunk,
            "the survivors could not shrink the world",
            watchdog,
        )
    };
    watchdog.reword(loss::line(
        &shrunk.lost,
        "the survivors did not complete the repair in time (a process lost during it: another \
         survivor, or a replacement before it joined)",
    ));
    let again = lost_again(&shrunk.lost);
    let unreceived = super::matched::unreceived();
    let mine = c_int::from(!shrunk.lost.is_empty() && super::on() && !again && !unreceived);
    if ulfm::agree(survivors, mine) != Some(1) {
        let why = if mine == 1 {
            "another survivor cannot contain the loss (its line says why)"
        } else if again {
            "a replacement was lost again before a new version completed (one that cannot get \
             past its restart would be replaced forever)"
        } else if unreceived {
            super::matched::UNRECEIVED
        } else {
            crate::errors::why_not_contained()
        };
        loss::end(&shrunk, why, watchdog);
    }
    tracing::warn!(lost = ?shrunk.lost, "process lost in a ULFM job: repairing the world");
    let repaired = spawn_and_merge(survivors, &shrunk.lost)
        .and_then(|w| super::resync::sync(w, false, &shrunk.lost));
    if let Err(e) = repaired {
        loss::end(&shrunk, &format!("the repair failed: {e}"), watchdog);
    }
    watchdog.done();
    REPAIRS.fetch_add(1, Ordering::Relaxed);
    REPAIR_NS.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    tracing::warn!(
        lost = ?shrunk.lost,
        ms = started.elapsed().as_secs_f64() * 1e3,
        "world repaired: the replacements re-execute from the last version"
    );
}

/// The lost ranks replaced so far, with the number of persists completed when they were.
static REPLACED_AT: Mutex<Vec<(c_int, u64)>> = Mutex::new(Vec::new());

/// Whether one of `lost` was replaced already with no version completed since (every survivor
/// answers alike: they share that history); notes this loss.
fn lost_again(lost: &[c_int]) -> bool {
    let completed = super::completed();
    let mut replaced = REPLACED_AT.lock().unwrap_or_else(|e| e.into_inner());
    let again = lost
        .iter()
        .any(|r| replaced.iter().any(|&(q, at)| q == *r && at == completed));
    replaced.extend(lost.iter().map(|&r| (r, completed)));
    again
}

/// This program's path and arguments (after the program name), for the spawn.
fn command_line() -> Result<(CString, Vec<CString>), String> {
    let exe = std::fs::read_link("/proc/self/exe").map_err(|e| format!("/proc/self/exe: {e}"))?;
    let exe = CString::new(exe.into_os_string().into_encoded_bytes())
        .map_err(|e| format!("the executable's path: {e}"))?;
    let cmdline =
        std::fs::read("/proc/self/cmdline").map_err(|e| format!("/proc/self/cmdline: {e}"))?;
    let args = cmdline
        .split(|&b| b == 0)
        .skip(1)
        .filter(|a| !a.is_empty())
        .map(|a| CString::new(a).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok((exe, args))
}

/// Spawns one replacement per lost rank, tells them which ranks they are, merges and
/// reorders: the repaired world (collective over the survivors).
fn spawn_and_merge(survivors: Comm, lost: &[c_int]) -> Result<Comm, String> {
    let (exe, args) = command_line()?;
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let predefined = abi::predefined();
    let mut info = predefined.info_null;
    let key = c"PMIX_ENVAR";
    let value = CString::new(format!("{REPLACEMENT_ENV}=1")).map_err(|e| e.to_string())?;
    let mut inter = predefined.comm_null;
    // SAFETY: the strings and the argument vector (null-terminated) outlive the calls; MPI
    // writes one handle, and the error codes are ignored (MPI_ERRCODES_IGNORE).
    let rc = unsafe {
        real::Info_create(&mut info);
        real::Info_set(info, key.as_ptr(), value.as_ptr());
        let errcodes = std::ptr::null_mut::<c_int>().with_addr(abi::ERRCODES_IGNORE);
        let rc = real::Comm_spawn(
            exe.as_ptr(),
            argv.as_mut_ptr(),
            lost.len() as c_int,
            info,
            0,
            survivors,
            &mut inter,
            errcodes,
        );
        real::Info_free(&mut info);
        rc
    };
    check(rc, "MPI_Comm_spawn of the replacements")?;
    let old_size = safe::world_size();
    let root = if safe::comm_rank(survivors) == 0 {
        abi::ROOT
    } else {
        abi::PROC_NULL
    };
    let mut header = [lost.len() as c_int, old_size];
    let mut ranks = lost.to_vec();
    // SAFETY: the buffers are ours, sized as the counts say.
    unsafe {
        check(
            real::Bcast(header.as_mut_ptr().cast(), 2, predefined.int, root, inter),
            "telling the replacements who they are",
        )?;
        check(
            real::Bcast(
                ranks.as_mut_ptr().cast(),
                ranks.len() as c_int,
                predefined.int,
                root,
                inter,
            ),
            "telling the replacements who they are",
        )?;
    }
    let me = safe::world_rank();
    merge(inter, false, |_| Ok(me))
}

/// The communicators of other jobs' processes a repair made (the spawn's intercommunicators,
/// the repaired worlds): freed before a replacement's `MPI_Finalize` (see [`finalize`]).
static DYNAMIC: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn dynamic(comm: Comm) {
    DYNAMIC
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(comm.bits());
}

/// Merges the spawn's intercommunicator (survivors low, replacements high) and reorders by
/// the identity `identity` gives from the rank in the merge: the repaired world, with the
/// runtime's error handler, from now on `MPI_COMM_WORLD`.
pub(crate) fn merge(
    inter: Comm,
    high: bool,
    identity: impl FnOnce(c_int) -> Result<c_int, String>,
) -> Result<Comm, String> {
    let predefined = abi::predefined();
    let (mut merged, mut repaired) = (predefined.comm_null, predefined.comm_null);
    // SAFETY: MPI writes one handle.
    check(
        unsafe { real::Intercomm_merge(inter, c_int::from(high), &mut merged) },
        "merging the replacements in",
    )?;
    let identity = identity(safe::comm_rank(merged))?;
    // SAFETY: MPI writes one handle.
    check(
        unsafe { real::Comm_split(merged, 0, identity, &mut repaired) },
        "ordering the repaired world",
    )?;
    // SAFETY: our own communicator, no longer needed.
    unsafe { real::Comm_free(&mut merged) };
    crate::errors::install(repaired);
    dynamic(inter);
    dynamic(repaired);
    crate::pmpi::world::replace(repaired);
    cd_core::set_rank(identity.max(0) as u32);
    Ok(repaired)
}

/// At `MPI_Finalize` after a repair: completes the resends and agrees with every rank of the
/// repaired world that all are done, so that no rank leaves while another still needs it.
/// Returns whether this process must not call the library's `MPI_Finalize`: a survivor,
/// whose finalize would hang in Open MPI 5.0.11 (in the fence of the namespace that lost a
/// process, tests/ulfm/README.md).
pub(crate) fn finalize() -> bool {
    if !world::replaced() {
        return false;
    }
    let _guard = Guard::enter();
    let resends = std::mem::take(&mut *RESENDS.lock().unwrap_or_else(|e| e.into_inner()));
    for (mut request, data) in resends {
        let mut status = Status::zeroed();
        // SAFETY: our request; `data` (its buffer) lives until it completes.
        unsafe { real::Wait(&mut request, &mut status) };
        drop(data);
    }
    ulfm::agree(world::current(), 1);
    if crate::pmpi::world::is_replacement() {
        // Its finalize disconnects from every process of the dynamic communicators it still
        // holds (`ompi_dpm_dyn_finalize`, when it holds more than one), which waits forever
        // for survivors that have left: the parent, the repaired worlds and the spawns'
        // intercommunicators are freed first.
        crate::derived::free_rebuilt();
        let made = std::mem::take(&mut *DYNAMIC.lock().unwrap_or_else(|e| e.into_inner()));
        for bits in made {
            let mut comm = Comm::from_bits(bits);
            // SAFETY: the runtime's own communicators (the parent among them); nothing uses
            // them after the finalize.
            unsafe { real::Comm_free(&mut comm) };
        }
        return false;
    }
    // The library's exit handlers would wait on the namespace that lost a process too: the
    // process ends when the application exits, with its status, before they run.
    // SAFETY: registers a function that takes the status and an unused argument.
    unsafe { on_exit(end_process, std::ptr::null_mut()) };
    true
}

extern "C" {
    /// glibc's `on_exit`: like `atexit`, with the exit status.
    fn on_exit(function: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// Registered last, so run first at exit: flushes the C streams and ends the process with the
/// application's status, skipping the handlers registered before (the MPI library's).
extern "C" fn end_process(status: c_int, _: *mut c_void) {
    // SAFETY: flushes every C stream (null: all); then ends the process.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// `key value` lines for `CD_MPI_STATS`.
pub(crate) fn statistics() -> Vec<(String, u64)> {
    let (bytes, peak, spilled) = journal::bytes();
    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    [
        ("repairs", load(&REPAIRS)),
        ("repair_ns", load(&REPAIR_NS)),
        ("resent", load(&RESENT)),
        ("served_collectives", load(&SERVED)),
        ("sends_dropped", load(&catchup::DROPPED)),
        ("collectives_taken", load(&catchup::TAKEN)),
        ("journal_bytes", bytes),
        ("journal_peak_bytes", peak),
        ("journal_spilled_bytes", spilled),
        ("start_bytes", super::prologue::bytes()),
        ("choices", load(&super::choices::RECORDED)),
        ("choices_repeated", load(&super::choices::REPEATED)),
    ]
    .into_iter()
    .map(|(key, value)| (format!("recovery.{key}"), value))
    .collect()
}
