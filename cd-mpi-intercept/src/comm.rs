//! Calls that make communicators: their results are logged, so that a re-execution gets the
//! same communicators without the collective call the other ranks would have to join.
//!
//! # Frees deferred while a log may replay
//! A communicator freed while a logging CD is active is not freed in MPI at once, only
//! logged: a restore may re-execute the call that made it, which then hands out the same
//! handle again, and the calls between (collectives on it, whose replay asks MPI for its size
//! and packs with it) need it valid. The same holds for a persistent request freed while
//! logging (`MPI_Request_free` in `wait`). Each such handle is *held* here and really freed
//! as soon as no log that could replay a call naming it exists any more; MPICH has about
//! 2048 context ids, so a program that dups and frees a communicator in every iteration of a
//! logged loop would otherwise run out of them.
//!
//! How that is decided, from cd-core's `cd_info` alone: at the free, the *chain*
//! of logging CDs is noted, from the thread's active CD `C0` up through its logging
//! ancestors `C1..Ck` (a CD that does not log ends the chain: logs do not merge through it),
//! each with its count of advances. Every record that names the handle was logged on this
//! thread between its making and its free, so it now lies in the log of one of `C0..Cm`,
//! where `Cm` is the deepest CD of the chain that was also on the chain when the handle was
//! made (`Ck` when it was made outside a logging CD; a CD committed since made its records
//! its parent's). When a CD ends, and also when it advances (the implicit commit of an
//! advance), its log goes up into its parent's (or is dropped, by the sibling rule); a CD
//! with no logging parent drops it. So the records that `Ci` held at the free are now in the
//! log of the nearest CD at or above `Ci` that has neither advanced nor ended since, and
//! nowhere if there is none; the handle is released once that holds for every `Ci` with
//! `i <= m`, that is, once every CD of the chain has advanced or ended. (Taking a CD's advance for
//! the discard of its log released a handle freed in a child advanced every iteration while the
//! parent's log, which the child's records had gone into, could still replay them.) The check runs
//! at every call of this module that reaches its handler (makers and frees, and
//! `MPI_Request_free`), and costs one `cd_info` per distinct CD of the held handles' chains. What
//! is still held at `MPI_Finalize` is freed by MPI itself there.
//!
//! # At most `CD_MPI_HELD_MAX` held
//! Inside a CD that never advances, nothing is ever released: MPICH 4.0 refused the 2047th
//! `MPI_Comm_dup` of a dup/free loop at `-np 2` ("Too many communicators (0/2048 free)", a
//! fatal error by default; `tests/mpi/held_cap.c`). So at most `CD_MPI_HELD_MAX` (default
//! 256, well under MPICH's 2048 context ids) communicators are held, and as many persistent
//! requests (they cost MPI memory, and every held handle costs the check above). The free
//! past that limit really frees the *oldest* held handle of its kind in MPI, after marking
//! unreplayable (`cd_core::mark_log_unreplayable`) every log that now holds records naming
//! it (the logs found as above). Each such log gets its own mark, so that a mark dropped
//! with a discarded child log leaves the ancestor's refusal in place, and a mark merges up
//! with its log (cd-core's rules for the mark). A
//! `restore_cd` whose replay would cross the freed handle is then refused with
//! `CD_ERR_UNREPLAYABLE` naming the reason, instead of replaying with a dead (or reused)
//! handle: the live run goes on, only replayability degrades. A handle whose logs cannot be
//! marked now (a CD call made from a CD callback) stays held, past the limit, until a later
//! free can. `0` holds nothing (every free while logging marks the logs at once).
//!
//! # Known limit: attribute delete callbacks run late
//! `MPI_Comm_free` runs the delete callbacks of the communicator's attributes. While it is
//! held, MPI has not freed it, so they run when it is released (an advance, the limit
//! above, or `MPI_Finalize`), later than the application expects: the likely reason (not
//! reproduced here) why mpi4py's `testAttrCopyDelete` failed inside a logging CD that never
//! advanced.
//! MPI offers no way to list a communicator's attributes, so running them at the free would
//! mean tracking every keyval the application creates; not done.

use crate::abi::{self, Comm, Group, Info, Request};
use crate::engine::{self, Delivery, Route, Tracked};
use crate::pmpi::{real, safe, Call};
use crate::record::{Header, Writer};
use cd_core::CdHandle;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A handle whose free is deferred (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Held {
    /// A communicator.
    Comm(Comm),
    /// A persistent request.
    Request(Request),
}

impl Held {
    /// Whether both are of one kind (the limit counts each kind).
    fn same_kind(self, other: Held) -> bool {
        matches!(
            (self, other),
            (Held::Comm(_), Held::Comm(_)) | (Held::Request(_), Held::Request(_))
        )
    }

    /// What a log is marked with when a handle of this kind is freed past the limit: the
    /// reason a restore crossing it is refused, and what to do about it.
    fn unreplayable(self) -> &'static str {
        static COMM: OnceLock<&'static str> = OnceLock::new();
        static REQUEST: OnceLock<&'static str> = OnceLock::new();
        let (cell, what, call) = match self {
            Held::Comm(_) => (&COMM, "communicators", "MPI_Comm_free"),
            Held::Request(_) => (&REQUEST, "persistent requests", "MPI_Request_free"),
        };
        cell.get_or_init(|| {
            // One string per kind and process, kept for the error it names.
            String::leak(format!(
                "{call} (more than {} {what} freed while logging were held for replay, so \
                 the oldest was freed in MPI; advance the CD more often or raise {HELD_MAX_ENV})",
                held_max()
            ))
        })
    }
}

/// The variable that sets the limit on held handles (module docs).
pub(crate) const HELD_MAX_ENV: &str = "CD_MPI_HELD_MAX";

/// The limit when [`HELD_MAX_ENV`] is not set: well under MPICH's 2048 context ids.
const HELD_MAX_DEFAULT: usize = 256;

/// The most handles of one kind held at once: [`HELD_MAX_ENV`], read once; a value that is
/// not a count is reported (through `tracing`) and the default used.
fn held_max() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| match std::env::var(HELD_MAX_ENV) {
        Err(_) => HELD_MAX_DEFAULT,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            tracing::warn!(
                value = %v,
                default = HELD_MAX_DEFAULT,
                "{HELD_MAX_ENV} is not a count of handles: the default is used"
            );
            HELD_MAX_DEFAULT
        }),
    })
}

/// A held handle and the chain of logging CDs at its free.
struct Pending {
    what: Held,
    /// `C0..Ck`, each with its advances then.
    chain: Vec<(CdHandle, u64)>,
    /// `m`: the records naming the handle lie in the logs of `chain[..=reach]`.
    reach: usize,
}

/// Handles held, and the chain of each communicator made while logging, by handle bits.
#[derive(Default)]
struct Holding {
    pending: Vec<Pending>,
    makers: HashMap<u64, Vec<CdHandle>>,
}

static HOLDING: Mutex<Option<Holding>> = Mutex::new(None);

fn holding() -> MutexGuard<'static, Option<Holding>> {
    HOLDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The chain of logging CDs of the calling thread, innermost first, with their advances;
/// empty when a CD of it cannot be described (then nothing is ever released early).
fn chain() -> Vec<(CdHandle, u64)> {
    let mut chain = Vec::new();
    let mut next = cd_core::current_cd();
    while let Some(cd) = next {
        match cd_core::cd_info(cd) {
            Ok(info) if info.logging => {
                chain.push((cd, info.stats.advances));
                next = info.parent;
            }
            Ok(_) => break,
            Err(_) => return Vec::new(),
        }
    }
    chain
}

/// Remembers the chain at the making of a communicator while recording.
fn made(comm: Comm) {
    let makers = chain().into_iter().map(|(cd, _)| cd).collect();
    holding()
        .get_or_insert_with(Holding::default)
        .makers
        .insert(comm.bits(), makers);
}

/// Holds a handle freed while recording, until no log can replay a call naming it.
pub(crate) fn hold(what: Held) {
    let chain = chain();
    let mut guard = holding();
    let holding = guard.get_or_insert_with(Holding::default);
    let maker = match what {
        Held::Comm(comm) => holding.makers.remove(&comm.bits()),
        Held::Request(_) => None,
    };
    let reach = maker
        .and_then(|maker| chain.iter().position(|(cd, _)| maker.contains(cd)))
        .unwrap_or(chain.len().saturating_sub(1));
    holding.pending.push(Pending { what, chain, reach });
    crate::stats::held();
    drop(guard);
    limit(what);
}

/// Frees held handles of `what`'s kind in MPI, oldest first, while more than [`held_max`]
/// are held, once the logs that could replay a call naming each are marked (module docs).
fn limit(what: Held) {
    let max = held_max();
    let mut seen = Seen::default();
    loop {
        let (at, victim) = {
            let mut guard = holding();
            let Some(holding) = guard.as_mut() else {
                return;
            };
            let mut kind = holding
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| p.what.same_kind(what));
            if kind.clone().count() <= max {
                return;
            }
            // The oldest whose chain was read; one held with no chain stays until Finalize.
            let Some(at) = kind.find(|(_, p)| !p.chain.is_empty()).map(|(at, _)| at) else {
                return;
            };
            (at, holding.pending.remove(at))
        };
        let marked = victim
            .holders(&mut seen)
            .into_iter()
            .try_for_each(|cd| cd_core::mark_log_unreplayable(cd, victim.what.unreplayable()));
        if let Err(error) = marked {
            tracing::debug!(what = ?victim.what, %error, "a held handle stays held: its logs cannot be marked now");
            // back in its place, tried again at the next free (a log already marked only
            // refuses more)
            if let Some(holding) = holding().as_mut() {
                holding
                    .pending
                    .insert(at.min(holding.pending.len()), victim);
            }
            return;
        }
        tracing::debug!(what = ?victim.what, max, "held handle freed past the limit; its logs are unreplayable");
        crate::stats::freed_early();
        free(victim.what);
    }
}

/// What one check learned of each CD, so that many handles freed in one CD cost one
/// `cd_info` of it per check.
#[derive(Default)]
struct Seen(HashMap<CdHandle, State>);

/// What `cd_info` said of a CD.
#[derive(Clone, Copy)]
enum State {
    /// Live, with this many advances.
    Live(u64),
    /// Retired or unknown: ended.
    Ended,
    /// Any other answer (a CD call made from inside a CD callback).
    Unknown,
}

impl Seen {
    /// Whether `cd`, with `advances` at the free, is as it was then: neither advanced nor
    /// ended. A CD that cannot be described now counts as unchanged, which holds longer,
    /// never shorter.
    fn unchanged(&mut self, cd: CdHandle, advances: u64) -> bool {
        let state = *self
            .0
            .entry(cd)
            .or_insert_with(|| match cd_core::cd_info(cd) {
                Ok(info) => State::Live(info.stats.advances),
                Err(cd_core::CdError::StaleHandle { .. } | cd_core::CdError::InvalidHandle(_)) => {
                    State::Ended
                }
                Err(_) => State::Unknown,
            });
        match state {
            State::Live(now) => now == advances,
            State::Ended => false,
            State::Unknown => true,
        }
    }
}

impl Pending {
    /// Whether each CD of the chain is unchanged since the free.
    fn states(&self, seen: &mut Seen) -> Vec<bool> {
        self.chain
            .iter()
            .map(|&(cd, a)| seen.unchanged(cd, a))
            .collect()
    }

    /// The CDs whose logs may now hold records naming the handle: for each CD of
    /// `chain[..=reach]`, the nearest at or above it that is still as it was at the free (the
    /// records of a CD that ended or advanced since went up into its parent's log, or were
    /// dropped with it at the top of the chain).
    fn holders(&self, seen: &mut Seen) -> Vec<CdHandle> {
        let states = self.states(seen);
        let mut holders: Vec<CdHandle> = (0..=self.reach.min(states.len().saturating_sub(1)))
            .filter_map(|i| (i..states.len()).find(|&j| states[j]))
            .map(|at| self.chain[at].0)
            .collect();
        holders.dedup();
        holders
    }

    /// Whether no log can replay a call naming the handle any more (the module docs' rule):
    /// no log holds records naming it ([`Pending::holders`] is empty), that is, every CD of
    /// the chain advanced or ended since the free.
    fn released(&self, seen: &mut Seen) -> bool {
        // a chain that could not be read at the free: held until MPI_Finalize
        !self.chain.is_empty() && self.chain.iter().all(|&(cd, a)| !seen.unchanged(cd, a))
    }
}

/// Really frees every held handle that no log can replay any more.
pub(crate) fn release_ready() {
    let ready: Vec<Held> = {
        let mut guard = holding();
        let Some(holding) = guard.as_mut() else {
            return;
        };
        if holding.pending.is_empty() {
            return;
        }
        let mut seen = Seen::default();
        let (ready, kept) = std::mem::take(&mut holding.pending)
            .into_iter()
            .partition(|p: &Pending| p.released(&mut seen));
        holding.pending = kept;
        ready.into_iter().map(|p| p.what).collect()
    };
    ready.into_iter().for_each(free);
}

/// Really frees a handle that was held, in MPI.
fn free(what: Held) {
    let rc = match what {
        Held::Comm(comm) => {
            let rc = safe::comm_free(comm).err().unwrap_or(abi::SUCCESS);
            if rc == abi::SUCCESS {
                crate::derived::release_twin(comm);
                if crate::traffic::on() {
                    // MPI may give its address to the next communicator
                    crate::traffic::retire(comm);
                }
            }
            rc
        }
        Held::Request(mut request) => {
            engine::unregister_persistent(request);
            crate::traffic::freed_persistent(request);
            // SAFETY: a persistent request the application freed, held only by this module.
            unsafe { real::Request_free(&mut request) }
        }
    };
    if rc == abi::SUCCESS {
        crate::stats::released();
    } else {
        tracing::warn!(?what, rc, "MPI refused to free a held handle");
    }
}

/// A call that makes one communicator into `newcomm` (and, for `MPI_Comm_idup`, a request
/// that completes it: a post like a nonblocking send's). `group`: `MPI_Comm_create_group`'s
/// key (`crate::derived::group_key`), by which in-job recovery names it.
///
/// # Safety
/// `newcomm` (and `request`) must be writable; `run` is the MPI call with its contract.
unsafe fn making(
    header: Header,
    comm: Comm,
    newcomm: *mut Comm,
    request: Option<*mut Request>,
    group: Option<u64>,
    run: impl FnOnce() -> c_int,
) -> c_int {
    release_ready();
    let call = header.call;
    let mut follow = false;
    let kin = match (call, group) {
        (Call::Intercomm_create, _) => crate::derived::Kin::Inter,
        (_, Some(key)) => crate::derived::Kin::Group(key),
        (_, None) => crate::derived::Kin::Child,
    };
    // before routing: a recorded call's guard counts as inside the runtime
    let outside = !crate::boundary::inside();
    let route = engine::route(call);
    // a replay gives back the recorded communicator: it was followed (or not) when made
    let replaying = matches!(route, Route::Replay(..));
    if crate::errors::keeping() && outside && !replaying {
        use crate::derived;
        if !derived::follows(call, comm) {
            crate::errors::communicator_made(call, comm);
        } else if let Some(rebuilt) = crate::pmpi::world::is_replacement()
            .then(|| {
                // a split's colour or type (the header's peer) says whether it is a member
                let member = matches!(call, Call::Comm_split | Call::Comm_split_type)
                    && header.peer != abi::UNDEFINED;
                let alone = || {
                    let own = abi::predefined().comm_self;
                    member.then(|| safe::comm_dup(own).ok()).flatten()
                };
                derived::prebuilt(comm, kin, crate::errors::in_start(), alone)
            })
            .flatten()
        {
            // a replacement re-executing a constructor its peers made long ago (recorded like
            // a made one inside a CD that logs, for its own replays)
            let run = || {
                // SAFETY: the application's out-parameter.
                unsafe { newcomm.write(rebuilt) };
                abi::SUCCESS
            };
            // SAFETY: forwarded.
            return unsafe { making_routed(route, header, comm, newcomm, None, run) };
        } else {
            follow = true;
        }
    }
    // a distributed graph's members exchange their neighbours in any ULFM job that contains
    // losses, whether this rank follows it or not: every member must join that exchange
    let exchanges = crate::errors::repair_wanted()
        && outside
        && matches!(
            call,
            Call::Dist_graph_create | Call::Dist_graph_create_adjacent
        );
    let run = || {
        let rc = run();
        if rc == abi::SUCCESS && (follow || exchanges) {
            // SAFETY: MPI wrote the new communicator.
            let new = unsafe { *newcomm };
            let topology = (new != abi::predefined().comm_null)
                .then(|| crate::topology::Topology::of(new))
                .flatten();
            if follow {
                let in_start = crate::errors::in_start();
                crate::derived::derived_from(comm, new, topology, kin, in_start);
            }
        }
        rc
    };
    if engine::counted(&route) {
        if let Some(request) = request {
            // SAFETY: forwarded.
            let rc = unsafe { making_routed(route, header, comm, newcomm, Some(request), run) };
            if rc == abi::SUCCESS {
                // SAFETY: MPI wrote the request.
                crate::traffic::collective_posted(unsafe { *request }, comm);
            }
            return rc;
        }
    }
    // SAFETY: forwarded.
    unsafe { making_routed(route, header, comm, newcomm, request, run) }
}

/// [`making`] once routed.
///
/// # Safety
/// As [`making`].
unsafe fn making_routed(
    route: Route,
    header: Header,
    comm: Comm,
    newcomm: *mut Comm,
    request: Option<*mut Request>,
    run: impl FnOnce() -> c_int,
) -> c_int {
    let call = header.call;
    match route {
        Route::Direct => run(),
        Route::Record(guard) => {
            let rc = run();
            if rc == abi::SUCCESS {
                // SAFETY: MPI wrote the new communicator.
                let made_comm = unsafe { *newcomm };
                made(made_comm);
                let mut w = Writer::new(header);
                w.u64(made_comm.bits());
                if let Some(request) = request {
                    let seq = engine::next_seq();
                    let tracked = Tracked::new(seq, Delivery::Nothing, guard.cx());
                    // SAFETY: MPI wrote the request.
                    engine::track(unsafe { *request }, tracked);
                    w.u64(seq);
                }
                // SAFETY: no pieces.
                unsafe { engine::log(w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let Ok(bits) = reader.u64() else {
                return engine::corrupt(call, comm);
            };
            // SAFETY: the application's out-parameter.
            unsafe { newcomm.write(Comm::from_bits(bits)) };
            match request.map(|r| (r, reader.u64())) {
                None => abi::SUCCESS,
                // SAFETY: the application's out-parameter.
                Some((r, Ok(seq))) => unsafe { engine::virtual_request(seq, Delivery::Nothing, r) },
                Some((_, Err(_))) => engine::corrupt(call, comm),
            }
        }
    }
}

/// Defines the wrapper of each call that makes a communicator: the communicator it is made
/// from, where the new one goes, and the integer arguments a re-execution must repeat (as the
/// record header's peer, tag and count).
macro_rules! makers {
    ($(
        $fn:ident => $call:ident($($a:ident : $t:ty),*)
            from $comm:ident into $new:ident
            $(, peer $peer:expr)? $(, tag $tag:expr)? $(, count $count:expr)?;
    )*) => {$(
        #[doc = concat!("The wrapper of `MPI_", stringify!($call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $fn($($a: $t),*) -> c_int {
            #[allow(unused_mut)]
            let mut header = Header::plain(Call::$call, $comm);
            $(header.peer = $peer;)?
            $(header.tag = $tag;)?
            $(header.count = i64::from($count);)?
            // SAFETY: forwarded.
            unsafe { making(header, $comm, $new, None, None, || real::$call($($a),*)) }
        }
    )*};
}

makers! {
    comm_dup => Comm_dup(comm: Comm, newcomm: *mut Comm) from comm into newcomm;
    comm_dup_with_info => Comm_dup_with_info(comm: Comm, info: Info, newcomm: *mut Comm) from comm into newcomm;
    comm_split => Comm_split(comm: Comm, color: c_int, key: c_int, newcomm: *mut Comm)
        from comm into newcomm, peer color, tag key;
    comm_split_type => Comm_split_type(comm: Comm, split_type: c_int, key: c_int, info: Info, newcomm: *mut Comm)
        from comm into newcomm, peer split_type, tag key;
    comm_create => Comm_create(comm: Comm, group: Group, newcomm: *mut Comm) from comm into newcomm;
    cart_create => Cart_create(comm_old: Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, comm_cart: *mut Comm)
        from comm_old into comm_cart, peer reorder, count ndims;
    cart_sub => Cart_sub(comm: Comm, remain_dims: *const c_int, newcomm: *mut Comm) from comm into newcomm;
    graph_create => Graph_create(comm_old: Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int, comm_graph: *mut Comm)
        from comm_old into comm_graph, peer reorder, count nnodes;
    dist_graph_create_adjacent => Dist_graph_create_adjacent(comm_old: Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: Info, reorder: c_int, comm_dist_graph: *mut Comm)
        from comm_old into comm_dist_graph, peer indegree, tag outdegree, count reorder;
    dist_graph_create => Dist_graph_create(comm_old: Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights: *const c_int, info: Info, reorder: c_int, comm_dist_graph: *mut Comm)
        from comm_old into comm_dist_graph, peer reorder, count n;
    intercomm_create => Intercomm_create(local_comm: Comm, local_leader: c_int, peer_comm: Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut Comm)
        from local_comm into newintercomm, peer remote_leader, tag tag, count local_leader;
    intercomm_merge => Intercomm_merge(intercomm: Comm, high: c_int, newintracomm: *mut Comm)
        from intercomm into newintracomm, peer high;
}

/// `MPI_Comm_create_group`: made by the group's members alone, so in-job recovery names it
/// by its members and tag (`crate::derived::group_key`).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_create_group(
    comm: Comm,
    group: Group,
    tag: c_int,
    newcomm: *mut Comm,
) -> c_int {
    let mut header = Header::plain(Call::Comm_create_group, comm);
    header.tag = tag;
    let key = (crate::errors::keeping() && !crate::boundary::inside())
        .then(|| crate::derived::group_key(group, tag));
    // SAFETY: forwarded.
    unsafe {
        making(header, comm, newcomm, None, key, || {
            real::Comm_create_group(comm, group, tag, newcomm)
        })
    }
}

/// `MPI_Comm_idup`: the new handle is logged at once (MPI returns it at once, usable after
/// the request completes); the request is a post.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_idup(comm: Comm, newcomm: *mut Comm, request: *mut Request) -> c_int {
    let header = Header::plain(Call::Comm_idup, comm);
    // SAFETY: forwarded.
    unsafe {
        making(header, comm, newcomm, Some(request), None, || {
            real::Comm_idup(comm, newcomm, request)
        })
    }
}

/// `MPI_Comm_idup_with_info`: as `MPI_Comm_idup`.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4)]
pub(crate) unsafe fn comm_idup_with_info(
    comm: Comm,
    info: Info,
    newcomm: *mut Comm,
    request: *mut Request,
) -> c_int {
    let header = Header::plain(Call::Comm_idup_with_info, comm);
    // SAFETY: forwarded.
    unsafe {
        making(header, comm, newcomm, Some(request), None, || {
            real::Comm_idup_with_info(comm, info, newcomm, request)
        })
    }
}

/// A string tag (`MPI_Comm_create_from_group`'s) as a record's tag: its FNV-1a hash, so that
/// a re-execution with another tag is a mismatch. A null pointer hashes as the empty string
/// (MPI refuses it anyway).
///
/// # Safety
/// `tag` is null or a NUL-terminated string.
#[cfg(mpi4)]
unsafe fn string_tag(tag: *const std::ffi::c_char) -> c_int {
    let bytes = if tag.is_null() {
        &[][..]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::ffi::CStr::from_ptr(tag) }.to_bytes()
    };
    let hash = bytes.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    // the hash's bits, as the header's signed tag
    hash as c_int
}

/// `MPI_Comm_create_from_group` (MPI-4): no parent communicator, so the record names
/// `MPI_COMM_SELF` (whose error handler reports a mismatch); the string tag's hash is
/// matched on re-execution.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4)]
pub(crate) unsafe fn comm_create_from_group(
    group: Group,
    stringtag: *const std::ffi::c_char,
    info: Info,
    errhandler: abi::Errhandler,
    newcomm: *mut Comm,
) -> c_int {
    let own = abi::predefined().comm_self;
    let mut header = Header::plain(Call::Comm_create_from_group, own);
    // SAFETY: the application's string.
    header.tag = unsafe { string_tag(stringtag) };
    // SAFETY: forwarded.
    unsafe {
        making(header, own, newcomm, None, None, || {
            real::Comm_create_from_group(group, stringtag, info, errhandler, newcomm)
        })
    }
}

/// `MPI_Intercomm_create_from_groups` (MPI-4): as `MPI_Comm_create_from_group`, with both
/// leaders matched too.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4_full)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn intercomm_create_from_groups(
    local_group: Group,
    local_leader: c_int,
    remote_group: Group,
    remote_leader: c_int,
    stringtag: *const std::ffi::c_char,
    info: Info,
    errhandler: abi::Errhandler,
    newintercomm: *mut Comm,
) -> c_int {
    let own = abi::predefined().comm_self;
    let mut header = Header::plain(Call::Intercomm_create_from_groups, own);
    header.peer = remote_leader;
    header.count = i64::from(local_leader);
    // SAFETY: the application's string.
    header.tag = unsafe { string_tag(stringtag) };
    // SAFETY: forwarded.
    unsafe {
        making(header, own, newintercomm, None, None, || {
            real::Intercomm_create_from_groups(
                local_group,
                local_leader,
                remote_group,
                remote_leader,
                stringtag,
                info,
                errhandler,
                newintercomm,
            )
        })
    }
}

/// `MPI_Comm_free`: logged, and held while a CD logs until no log can replay a call naming
/// the communicator (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_free(comm: *mut Comm) -> c_int {
    // SAFETY: the application's handle, and where MPI writes MPI_COMM_NULL.
    let handle = unsafe {
        // a derived communicator a repair rebuilt: the rebuilt one is freed
        comm.write(crate::pmpi::world::mapped(*comm));
        *comm
    };
    if crate::errors::keeping() && !crate::boundary::inside() {
        crate::derived::freed(handle);
    }
    let header = Header::plain(Call::Comm_free, handle);
    crate::errors::forget(handle);
    release_ready();
    match engine::route(Call::Comm_free) {
        Route::Direct => {
            if let Some(holding) = holding().as_mut() {
                holding.makers.remove(&handle.bits());
            }
            // SAFETY: forwarded.
            let rc = unsafe { real::Comm_free(comm) };
            if rc == abi::SUCCESS {
                crate::derived::release_twin(handle);
                if crate::traffic::on() {
                    crate::traffic::retire(handle);
                }
            }
            rc
        }
        Route::Record(_guard) => {
            // SAFETY: no pieces; then the application's handle is nulled as MPI would.
            unsafe {
                engine::log(Writer::new(header));
                comm.write(abi::predefined().comm_null);
            }
            hold(Held::Comm(handle));
            abi::SUCCESS
        }
        Route::Replay(_guard, reader) => match engine::expect(&reader, &header, handle) {
            Ok(()) => {
                // SAFETY: the application's handle.
                unsafe { comm.write(abi::predefined().comm_null) };
                abi::SUCCESS
            }
            Err(code) => code,
        },
    }
}
