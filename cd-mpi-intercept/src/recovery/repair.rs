//! The survivors' repair of the world, and the steps every rank of the repaired world takes
//! together (the module docs of [`super`] tell the whole sequence).
//!
//! Every step runs as the runtime's own traffic (inside the guard: nothing is counted or
//! logged), under the watchdog of [`crate::loss`]. Where a step fails the job ends clearly
//! ([`crate::loss::end`]), as it would have without recovery.

use super::{catchup, journal};
use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::boundary::Guard;
use crate::loss::{self, Watchdog};
use crate::pmpi::{real, safe, ulfm, world, Buf, BufMut};
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The environment variable a replacement is spawned with (through the spawn's info).
pub(crate) const REPLACEMENT_ENV: &str = "CD_ULFM_REPLACEMENT";

/// Tag of the runtime's own messages on its duplicate of the repaired world.
const TAG: c_int = 7001;

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
static RESENDS: Mutex<Vec<(Request, Vec<u8>)>> = Mutex::new(Vec::new());

/// Repairs made, and their time in nanoseconds; messages resent; collective results served.
static REPAIRS: AtomicU64 = AtomicU64::new(0);
static REPAIR_NS: AtomicU64 = AtomicU64::new(0);
static RESENT: AtomicU64 = AtomicU64::new(0);
static SERVED: AtomicU64 = AtomicU64::new(0);

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
    let shrunk = loss::revoke_and_shrink(comm);
    let Some(survivors) = shrunk.survivors else {
        loss::end(
            &shrunk,
            "the survivors could not shrink the world",
            watchdog,
        )
    };
    let mine = c_int::from(!shrunk.lost.is_empty() && super::on());
    if ulfm::agree(survivors, mine) != Some(1) {
        let why = if mine == 1 {
            "another survivor cannot contain the loss (its line says why)"
        } else {
            crate::errors::why_not_contained()
        };
        loss::end(&shrunk, why, watchdog);
    }
    tracing::warn!(lost = ?shrunk.lost, "process lost in a ULFM job: repairing the world");
    let repaired = spawn_and_merge(survivors, &shrunk.lost).and_then(|w| sync(w, false));
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
    super::new_world(repaired);
    cd_core::set_rank(identity.max(0) as u32);
    Ok(repaired)
}

fn check(rc: c_int, what: &str) -> Result<(), String> {
    if rc == abi::SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {}", safe::error_string(rc)))
    }
}

/// The signature `MPI_Allgather` and `MPI_Alltoall` share.
type Exchange = unsafe fn(Buf, c_int, Datatype, BufMut, c_int, Datatype, Comm) -> c_int;

/// `exchange` (`real::Allgather` or `real::Alltoall`) of `mine`, one `T` per block, as bytes.
fn exchange<T: bytemuck::Pod + Default>(
    exchange: Exchange,
    comm: Comm,
    mine: &[T],
    what: &str,
) -> Result<Vec<T>, String> {
    let n = safe::comm_size(comm) as usize;
    let mut theirs = vec![T::default(); n];
    let size = std::mem::size_of::<T>() as c_int;
    let byte = abi::predefined().byte;
    // SAFETY: `mine` holds one `T` (a gather) or `n` (an all-to-all), `theirs` `n`, as bytes.
    let rc = unsafe {
        exchange(
            mine.as_ptr().cast(),
            size,
            byte,
            theirs.as_mut_ptr().cast(),
            size,
            byte,
            comm,
        )
    };
    check(rc, what).map(|_| theirs)
}

/// Sends `data` to `dest` on the runtime's communicator.
fn send_bytes(comm: Comm, dest: c_int, data: &[u8]) -> Result<(), String> {
    let byte = abi::predefined().byte;
    // SAFETY: our buffer, sized as the count says.
    let rc = unsafe {
        real::Send(
            data.as_ptr().cast(),
            data.len() as c_int,
            byte,
            dest,
            TAG,
            comm,
        )
    };
    check(rc, "serving the replacement")
}

/// Receives what [`send_bytes`] sent, sized by a probe.
fn recv_bytes(comm: Comm, source: c_int) -> Result<Vec<u8>, String> {
    let byte = abi::predefined().byte;
    let mut status = Status::zeroed();
    // SAFETY: writes one status.
    check(
        unsafe { real::Probe(source, TAG, comm, &mut status) },
        "being served",
    )?;
    let len = safe::get_count(&status, byte)
        .map_err(|rc| format!("being served: {}", safe::error_string(rc)))?;
    let mut data = vec![0u8; len.max(0) as usize];
    // SAFETY: our buffer, sized by the probe.
    let rc = unsafe {
        real::Recv(
            data.as_mut_ptr().cast(),
            len,
            byte,
            source,
            TAG,
            comm,
            &mut status,
        )
    };
    check(rc, "being served").map(|_| data)
}

/// What each rank tells every other of itself: whether it is a replacement, the persists it
/// completed, the world collectives it completed since the last version.
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Role {
    replacement: u64,
    completed: u64,
    collectives: u64,
    /// The world collectives of the program's start.
    start_collectives: u64,
}

/// What a rank tells one peer: its counts with that peer, since the version and at it, and the
/// messages it received from that peer in the program's start ([`super::prologue`]).
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Row {
    sent_start: u64,
    received_start: u64,
    sent_since: u64,
    received_since: u64,
    sent_at: u64,
    received_at: u64,
    collectives_at: u64,
}

/// The steps every rank of the repaired world takes together (survivors from [`repair`], a
/// replacement from its `MPI_Init`): see [`super`].
pub(crate) fn sync(repaired: Comm, replacement: bool) -> Result<(), String> {
    let n = safe::comm_size(repaired) as usize;
    let me = safe::comm_rank(repaired) as usize;
    let ctl = safe::comm_dup(repaired)
        .map_err(|rc| format!("MPI_Comm_dup: {}", safe::error_string(rc)))?;
    let role = Role {
        replacement: u64::from(replacement),
        completed: super::completed(),
        collectives: journal::collectives(),
        start_collectives: super::prologue::collective_count(),
    };
    let roles = exchange(
        real::Allgather,
        ctl,
        &[role],
        "exchanging the repair's roles",
    )?;
    let survivors: Vec<usize> = (0..n).filter(|&p| roles[p].replacement == 0).collect();
    let first = *survivors.first().ok_or("no survivor")?;
    let completed = roles[first].completed;
    if survivors.iter().any(|&p| roles[p].completed != completed) {
        return Err(
            "the survivors completed different numbers of persists (the loss came during \
                    a persist)"
                .to_owned(),
        );
    }
    let most = survivors
        .iter()
        .map(|&p| roles[p].collectives)
        .max()
        .unwrap_or(0);
    let server = *survivors
        .iter()
        .find(|&&p| roles[p].collectives == most)
        .ok_or("no survivor")?;
    let lacks = |p: usize| roles[p].replacement == 1 || roles[p].collectives < most;

    // pending receives: those that completed count as received, the others go again
    let mut received_now = if replacement {
        vec![0; n]
    } else {
        crate::traffic::received_on(&super::worlds())
    };
    received_now.resize(n, 0);
    for (p, extra) in super::requests::repost(repaired).into_iter().enumerate() {
        if let Some(r) = received_now.get_mut(p) {
            *r += extra;
        }
    }
    // the counts, pair by pair
    let (sent, received) = journal::since(&received_now);
    let at = journal::at_version();
    let start = super::prologue::received();
    let get = |v: &[u64], p: usize| v.get(p).copied().unwrap_or(0);
    let rows: Vec<Row> = (0..n)
        .map(|p| {
            if replacement {
                Row::default()
            } else {
                Row {
                    sent_start: super::prologue::sent_to(p),
                    received_start: get(&start, p),
                    sent_since: sent[p],
                    received_since: received[p],
                    sent_at: get(&at.sent, p),
                    received_at: get(&at.received, p),
                    collectives_at: get(&at.collectives, p),
                }
            }
        })
        .collect();
    let theirs = exchange(real::Alltoall, ctl, &rows, "exchanging the message counts")?;

    // collective results, and the persistent CDs' description, from the server
    let hooks = crate::hooks::hooks().ok_or("libcd's persistence hooks are not installed")?;
    let mut description = None;
    if me == server {
        for p in (0..n).filter(|&p| p != me && lacks(p)) {
            // a replacement re-executes the program's start first, then from the version
            let results = if roles[p].replacement == 1 {
                let mut all = super::prologue::collective_results();
                all.extend(journal::collective_results(0));
                all
            } else {
                journal::collective_results(roles[p].collectives as usize)
            };
            send_bytes(ctl, p as c_int, &(results.len() as u64).to_le_bytes())?;
            for r in &results {
                send_bytes(ctl, p as c_int, r)?;
            }
            SERVED.fetch_add(results.len() as u64, Ordering::Relaxed);
            if roles[p].replacement == 1 {
                send_bytes(ctl, p as c_int, &(hooks.description)())?;
            }
        }
    } else if lacks(me) {
        let count = recv_bytes(ctl, server as c_int)?;
        let count = u64::from_le_bytes(count.try_into().map_err(|_| "a malformed count")?);
        let results = (0..count)
            .map(|_| recv_bytes(ctl, server as c_int))
            .collect::<Result<Vec<_>, _>>()?;
        catchup::add(&[], results);
        if replacement {
            description = Some(recv_bytes(ctl, server as c_int)?);
        }
    }

    // the replacement's files, rebuilt from the survivors' redundancy (collective)
    (hooks.rebuild)(description.as_deref())?;

    if replacement {
        let drop: Vec<u64> = theirs
            .iter()
            .map(|r| r.received_start + r.received_since)
            .collect();
        catchup::add(&drop, Vec::new());
        let column = |f: &dyn Fn(&Row) -> u64| theirs.iter().map(f).collect::<Vec<u64>>();
        let at = journal::AtVersion {
            sent: column(&|r| r.received_at),
            received: column(&|r| r.sent_at),
            collectives: column(&|r| r.collectives_at),
        };
        // the lost rank's counts at the version, less its start's, which this process counts
        // again as it re-executes the start
        let start_collectives = roles[first].start_collectives;
        crate::traffic::preset(
            &column(&|r| r.received_at.saturating_sub(r.received_start)),
            &column(&|r| r.sent_at.saturating_sub(r.sent_start)),
            &column(&|r| r.collectives_at.saturating_sub(start_collectives)),
        );
        super::set_completed(completed);
        journal::version_complete(at, vec![0; n]);
        crate::errors::start_containing();
    } else {
        resend(repaired, me, &theirs, &roles);
    }
    let mut ctl = ctl;
    // SAFETY: our own communicator.
    unsafe { real::Comm_free(&mut ctl) };
    Ok(())
}

/// Starts the resend, to every other rank, of the messages it had not received from this one
/// since the version (to a replacement: those of the program's start, then all since the
/// version).
fn resend(repaired: Comm, me: usize, theirs: &[Row], roles: &[Role]) {
    let packed = abi::predefined().packed;
    let mut resends = RESENDS.lock().unwrap_or_else(|e| e.into_inner());
    for (p, row) in theirs.iter().enumerate().filter(|&(p, _)| p != me) {
        let mut messages = if roles[p].replacement == 1 {
            super::prologue::messages_to(p)
        } else {
            Vec::new()
        };
        messages.extend(journal::messages_to(p, row.received_since as usize));
        for (tag, data) in messages {
            let mut request = abi::predefined().request_null;
            // SAFETY: the data moves into RESENDS with the request and stays until the request
            // completes ([`finalize`]); a Vec's heap buffer does not move.
            let rc = unsafe {
                real::Isend(
                    data.as_ptr().cast::<c_void>(),
                    data.len() as c_int,
                    packed,
                    p as c_int,
                    tag,
                    repaired,
                    &mut request,
                )
            };
            if rc == abi::SUCCESS {
                RESENT.fetch_add(1, Ordering::Relaxed);
                resends.push((request, data));
            } else {
                tracing::error!(peer = p, rc, "a resend failed");
            }
        }
    }
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
    if super::join::is_replacement() {
        // Its finalize disconnects from every process of the dynamic communicators it still
        // holds (`ompi_dpm_dyn_finalize`, when it holds more than one), which waits forever
        // for survivors that have left: the parent, the repaired worlds and the spawns'
        // intercommunicators are freed first.
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
    ]
    .into_iter()
    .map(|(key, value)| (format!("recovery.{key}"), value))
    .collect()
}
