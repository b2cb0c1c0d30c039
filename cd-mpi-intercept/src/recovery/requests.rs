//! The application's nonblocking sends and receives on the world (and the communicators
//! derived from it, `crate::derived`) while a loss is contained: what each is, so that a
//! repair can finish it on the rebuilt communicators.
//!
//! A repair revokes the world, and MPI completes every request still pending on it with an
//! error. At the repair ([`repost`]), each receive that had completed (successfully, before
//! the revoke) is left for the application's completion call and counted as received, so its
//! sender does not resend it; every other receive is posted again on the repaired world, where
//! the resend (or the sender's live send) matches it; every send is complete (the resend of
//! what its receiver lacks delivers it). The application still holds the old handles: its next
//! `MPI_Wait`/`MPI_Waitall` finds them here ([`substitute`]) and waits on the new receive, or
//! on nothing for a send, and the old request is freed there. A repair's own handles never
//! reach the application otherwise. `MPI_Test`, `MPI_Testall` and the any/some forms
//! (`super::completion`) go through the same substitution.

use crate::abi::{self, Comm, Datatype, Op, Request, Status};
use crate::by_tag::ByTag;
use crate::pmpi::real;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// A receive, as posted (the buffer's address, exposed: the request table is shared).
#[derive(Clone, Copy)]
pub(crate) struct Receive {
    /// Its communicator (`crate::derived`).
    pub(crate) channel: u64,
    pub(crate) buf: usize,
    pub(crate) count: c_int,
    pub(crate) datatype: Datatype,
    pub(crate) source: c_int,
    pub(crate) tag: c_int,
    /// A receive from `MPI_ANY_SOURCE`: its place among them (`super::choices`).
    pub(crate) wildcard: Option<u64>,
}

/// A nonblocking collective, as posted: how to post it again, and where its result goes.
#[derive(Clone)]
pub(crate) struct Collective {
    /// Its communicator (`crate::derived`).
    pub(crate) channel: u64,
    pub(crate) kind: Kind,
    /// The result buffer (exposed address), and its elements.
    pub(crate) result: usize,
    pub(crate) count: c_int,
    pub(crate) datatype: Datatype,
    /// What the call reads from the result buffer (`MPI_IN_PLACE`, a broadcast's root), packed,
    /// to put back before it is posted again.
    pub(crate) input: Option<Vec<u8>>,
    /// Its place among this process's nonblocking collectives (posted again in that order).
    pub(crate) seq: u64,
    /// The runtime's memory the call uses and what makes this rank's result, an all-form's
    /// ([`super::held`]): finished when the request completes, freed with the entry.
    pub(super) buffers: super::held::Buffers,
}

impl Collective {
    /// Posts it on `comm`.
    ///
    /// # Safety
    /// The buffers it names are the application's, valid until the request completes (MPI's
    /// contract for the original call).
    pub(crate) unsafe fn post(&self, comm: Comm, request: *mut Request) -> c_int {
        let result = std::ptr::with_exposed_provenance_mut::<c_void>(self.result);
        let (count, datatype) = (self.count, self.datatype);
        // SAFETY: the caller's contract.
        unsafe {
            match self.kind {
                Kind::Barrier => real::Ibarrier(comm, request),
                Kind::Bcast { root } => real::Ibcast(result, count, datatype, root, comm, request),
                Kind::Allreduce { sendbuf, op } => {
                    let sendbuf = std::ptr::with_exposed_provenance::<c_void>(sendbuf);
                    real::Iallreduce(sendbuf, result, count, datatype, op, comm, request)
                }
                Kind::Allgather {
                    sendbuf,
                    sendcount,
                    sendtype,
                    recvcount,
                } => {
                    let sendbuf = std::ptr::with_exposed_provenance::<c_void>(sendbuf);
                    real::Iallgather(
                        sendbuf, sendcount, sendtype, result, recvcount, datatype, comm, request,
                    )
                }
                Kind::Allgatherv {
                    sendbuf,
                    sendcount,
                    sendtype,
                    counts,
                    places,
                } => {
                    let sendbuf = std::ptr::with_exposed_provenance::<c_void>(sendbuf);
                    let counts = std::ptr::with_exposed_provenance::<c_int>(counts);
                    let places = std::ptr::with_exposed_provenance::<c_int>(places);
                    real::Iallgatherv(
                        sendbuf, sendcount, sendtype, result, counts, places, datatype, comm,
                        request,
                    )
                }
            }
        }
    }
}

/// Which nonblocking collective, with the arguments a new post needs besides the result.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Barrier,
    Bcast {
        root: c_int,
    },
    Allreduce {
        sendbuf: usize,
        op: Op,
    },
    Allgather {
        sendbuf: usize,
        sendcount: c_int,
        sendtype: Datatype,
        recvcount: c_int,
    },
    /// Every rank's block laid one after another: the arrays' addresses (their memory is the
    /// request's: [`super::held`]).
    Allgatherv {
        sendbuf: usize,
        sendcount: c_int,
        sendtype: Datatype,
        counts: usize,
        places: usize,
    },
}

#[derive(Clone, Copy)]
enum State {
    /// Pending in MPI under its handle (or complete there, not yet given back).
    Posted,
    /// A receive posted again on the repaired world under this handle.
    Reposted(Request),
    /// A send the repair completed, or a collective whose result it served.
    Done,
    /// A nonblocking collective a repair interrupted, until [`resume_collectives`].
    Interrupted,
}

#[derive(Clone)]
struct Entry {
    receive: Option<Receive>,
    collective: Option<Collective>,
    /// A collective's result is in the journal already (a repair found it complete).
    journaled: bool,
    state: State,
    /// MPI freed the request (it failed in a completion call): the handle is only a key.
    freed: bool,
    /// Its place among the posts ([`repost`] posts receives again in this order, which MPI's
    /// matching of messages of one source and tag follows).
    order: u64,
}

/// Posts made (the next [`Entry::order`]).
static POSTS: AtomicU64 = AtomicU64::new(0);

impl Entry {
    fn posted(receive: Option<Receive>, collective: Option<Collective>) -> Entry {
        Entry {
            receive,
            collective,
            journaled: false,
            state: State::Posted,
            freed: false,
            order: POSTS.fetch_add(1, Ordering::Relaxed),
        }
    }
}

static TRACKED: Mutex<Option<HashMap<u64, Entry>>> = Mutex::new(None);
/// How many entries [`TRACKED`] holds (completion calls look only when some are).
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Placeholders holding the addresses of requests MPI freed while their handles are keys in
/// [`TRACKED`] (see [`freed`]): released once the key leaves it. [`HOLDING`]: whether any are
/// (one relaxed load in [`with`] otherwise).
static PLACEHOLDERS: Mutex<Vec<(u64, Request)>> = Mutex::new(Vec::new());
static HOLDING: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut HashMap<u64, Entry>) -> R) -> R {
    let mut guard = TRACKED.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    let r = f(map);
    COUNT.store(map.len(), Ordering::Relaxed);
    if HOLDING.load(Ordering::Relaxed) {
        let mut held = PLACEHOLDERS.lock().unwrap_or_else(|e| e.into_inner());
        held.retain_mut(|(key, placeholder)| {
            let keep = map.contains_key(key);
            if !keep {
                // SAFETY: our own inactive persistent request (see `occupy`).
                unsafe { real::Request_free(placeholder) };
            }
            keep
        });
        HOLDING.store(!held.is_empty(), Ordering::Relaxed);
    }
    r
}

/// Whether any request is tracked.
#[inline]
pub(crate) fn tracked() -> bool {
    COUNT.load(Ordering::Relaxed) > 0
}

/// A send posted on the world.
pub(crate) fn posted_send(request: Request) {
    with(|t| t.insert(request.bits(), Entry::posted(None, None)));
}

/// A nonblocking collective posted.
pub(crate) fn posted_collective(request: Request, collective: Collective) {
    with(|t| t.insert(request.bits(), Entry::posted(None, Some(collective))));
}

/// A receive posted on the world.
pub(crate) fn posted_receive(request: Request, receive: Receive) {
    with(|t| t.insert(request.bits(), Entry::posted(Some(receive), None)));
}

/// The requests MPI freed when a completion call failed on them (their handles are only keys
/// here now, [`occupy`]d).
pub(crate) fn freed(requests: &[Request]) {
    let keys: Vec<(u64, bool)> = with(|t| {
        requests
            .iter()
            .filter_map(|r| {
                let e = t.get_mut(&r.bits())?;
                e.freed = true;
                Some((r.bits(), e.receive.is_some()))
            })
            .collect()
    });
    occupy(&keys);
}

/// MPI may hand the address of a request it freed out again for the next request it makes,
/// while the application still holds the old handle and this table has it as a key until a
/// completion call exchanges it ([`substitute`]): a receive posted again by the repair (or the
/// application's next send) under that handle could not be told from the old one. So each
/// freed address (`keys`: with whether it was a receive) is taken by a placeholder of the
/// same kind, a persistent receive or send on `MPI_COMM_SELF` that is never started, until
/// the key leaves the table ([`with`]). MPI's free lists hand back the last freed first: a few
/// tries cover them; one not covered is reported.
fn occupy(keys: &[(u64, bool)]) {
    if keys.is_empty() {
        return;
    }
    let p = abi::predefined();
    let mut byte = 0u8;
    let mut taken: Vec<(u64, Request)> = Vec::new();
    let mut spare: Vec<Request> = Vec::new();
    for receive in [true, false] {
        let wanted: Vec<u64> = keys
            .iter()
            .filter(|(_, r)| *r == receive)
            .map(|(k, _)| *k)
            .collect();
        for _ in 0..4 * wanted.len() + 8 {
            if wanted.iter().all(|k| taken.iter().any(|(t, _)| t == k)) {
                break;
            }
            let mut placeholder = p.request_null;
            let buf = (&mut byte as *mut u8).cast::<c_void>();
            // SAFETY: a persistent request of no bytes to or from this process on
            // MPI_COMM_SELF; never started, freed in `with`. MPI writes the handle.
            let rc = unsafe {
                match receive {
                    true => real::Recv_init(buf, 0, p.byte, 0, 0, p.comm_self, &mut placeholder),
                    false => real::Send_init(buf, 0, p.byte, 0, 0, p.comm_self, &mut placeholder),
                }
            };
            if rc != abi::SUCCESS {
                break;
            }
            match wanted.contains(&placeholder.bits()) {
                true => taken.push((placeholder.bits(), placeholder)),
                false => spare.push(placeholder),
            }
        }
    }
    for mut placeholder in spare {
        // SAFETY: our own inactive persistent request, never started.
        unsafe { real::Request_free(&mut placeholder) };
    }
    if taken.len() < keys.len() {
        tracing::warn!(
            freed = keys.len(),
            held = taken.len(),
            "a request MPI freed at a failure keeps no placeholder: a new request may take its handle"
        );
    }
    if !taken.is_empty() {
        // under the table's lock, which releases them
        let _table = TRACKED.lock().unwrap_or_else(|e| e.into_inner());
        PLACEHOLDERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(taken);
        HOLDING.store(true, Ordering::Relaxed);
    }
}

/// Forgets requests that completed; a nonblocking collective's result goes into the journal
/// (unless a repair put it there already).
pub(crate) fn forget(requests: &[Request]) {
    let done: Vec<Entry> = with(|t| {
        requests
            .iter()
            .filter_map(|r| t.remove(&r.bits()))
            .collect()
    });
    for e in &done {
        if let Some(c) = &e.collective {
            if !e.journaled {
                journal_result(c);
            }
            c.buffers.finish();
        }
    }
}

/// Keeps a completed nonblocking collective's result.
fn journal_result(c: &Collective) {
    let buf = std::ptr::with_exposed_provenance::<c_void>(c.result);
    // SAFETY: the application's result buffer of a completed collective (`count` elements of
    // `datatype`, MPI's contract for the call).
    unsafe { super::journal::collective(c.channel, buf, c.count, c.datatype) };
}

/// At a repair, once the communicators are rebuilt (see the module docs): returns how many of
/// the pending receives had completed, by communicator, source (world rank) and tag.
pub(crate) fn repost() -> HashMap<u64, Vec<ByTag>> {
    let mut completed: HashMap<u64, Vec<ByTag>> = HashMap::new();
    with(|t| {
        let mut keys: Vec<(u64, u64)> = t.iter().map(|(&k, e)| (e.order, k)).collect();
        keys.sort_unstable();
        for (_, key) in keys {
            let Some(entry) = t.get_mut(&key) else {
                continue;
            };
            if !matches!(entry.state, State::Posted) {
                continue;
            }
            let old = Request::from_bits(key);
            let finished = if entry.freed { None } else { outcome(old) };
            if let Some(c) = &entry.collective {
                // MPI completes it now, once and for all: with its real outcome (a schedule
                // the failure aborted can look complete, with no error in its status, to
                // `MPI_Request_get_status`), and none left pending to report its failure later
                let done = !entry.freed && {
                    let (mut r, mut status) = (old, Status::zeroed());
                    // SAFETY: the application's request, completed here; its handle is only a
                    // key from now on.
                    let rc = crate::errors::covered(|| unsafe { real::Wait(&mut r, &mut status) });
                    rc == abi::SUCCESS
                };
                entry.freed = true;
                if done {
                    // complete: its result counts among this rank's collectives now, before
                    // the repair compares them
                    drop(crate::traffic::take(&[old]));
                    journal_result(c);
                    entry.journaled = true;
                    entry.state = State::Done;
                } else {
                    // it goes again once results are served ([`resume_collectives`])
                    entry.state = State::Interrupted;
                }
                continue;
            }
            match (entry.receive, finished) {
                (None, Some(Ok(_))) => {}
                (None, _) => entry.state = State::Done,
                (Some(r), Some(Ok((source, tag)))) => {
                    let world = crate::derived::world_rank(r.channel, source);
                    if let Ok(p) = usize::try_from(world) {
                        let counts = completed.entry(r.channel).or_default();
                        if counts.len() <= p {
                            counts.resize(p + 1, ByTag::default());
                        }
                        counts[p].add(tag, 1);
                    }
                }
                (Some(r), _) => {
                    let comm = crate::derived::current(r.channel);
                    let mut new = abi::predefined().request_null;
                    let buf = std::ptr::with_exposed_provenance_mut::<c_void>(r.buf);
                    // SAFETY: the application's receive again, into its buffer, which stays
                    // its own until it completes the request (MPI's contract for the original).
                    let rc = unsafe {
                        real::Irecv(buf, r.count, r.datatype, r.source, r.tag, comm, &mut new)
                    };
                    if rc == abi::SUCCESS {
                        // the traffic counts follow the receive to its new handle
                        drop(crate::traffic::take(&[old]));
                        crate::traffic::receive_posted(new, comm);
                        entry.state = State::Reposted(new);
                    } else {
                        tracing::error!(rc, "a pending receive could not be posted again");
                    }
                }
            }
        }
    });
    completed
}

/// After a repair served the collective results (`super::resync`): each nonblocking collective
/// it interrupted takes its served result (complete), or is posted again on its rebuilt
/// communicator, in the order they were posted.
pub(crate) fn resume_collectives() {
    with(|t| {
        let mut interrupted: Vec<(u64, u64)> = t
            .iter()
            .filter(|(_, e)| matches!(e.state, State::Interrupted))
            .filter_map(|(&k, e)| e.collective.as_ref().map(|c| (c.seq, k)))
            .collect();
        interrupted.sort_unstable();
        for (_, key) in interrupted {
            let Some(entry) = t.get_mut(&key) else {
                continue;
            };
            let Some(c) = entry.collective.clone() else {
                continue;
            };
            let result = std::ptr::with_exposed_provenance_mut::<c_void>(c.result);
            if let Some(data) = super::catchup::next_collective(c.channel) {
                // SAFETY: the application's result buffer (its contract for the call).
                unsafe { super::journal::unpack(&data, result, c.count, c.datatype) };
                super::journal::collective_packed(c.channel, &data);
                entry.journaled = true;
                entry.state = State::Done;
                continue;
            }
            if let Some(input) = &c.input {
                // SAFETY: as above; the input as it was when the call was posted.
                unsafe { super::journal::unpack(input, result, c.count, c.datatype) };
            }
            let comm = crate::derived::current(c.channel);
            let mut new = abi::predefined().request_null;
            // SAFETY: the application's buffers, still its own until it completes the request.
            let rc = unsafe { c.post(comm, &mut new) };
            if rc == abi::SUCCESS {
                drop(crate::traffic::take(&[Request::from_bits(key)]));
                crate::traffic::collective_pending(new);
                entry.state = State::Reposted(new);
            } else {
                tracing::error!(rc, "a nonblocking collective could not be posted again");
            }
        }
    });
}

/// `request` complete: `Ok((source, tag))` when it succeeded, `Err(())` when it failed; `None`
/// while pending (MPI keeps it allocated either way).
fn outcome(request: Request) -> Option<Result<(c_int, c_int), ()>> {
    let mut flag: c_int = 0;
    let mut status = Status::zeroed();
    // SAFETY: a live request of the application's (not freed: its state is `Posted`); the
    // call only reads it and writes the flag and the status.
    let rc = unsafe { real::Request_get_status(request, &mut flag, &mut status) };
    if rc != abi::SUCCESS {
        return Some(Err(()));
    }
    match (flag != 0, status.error()) {
        (false, _) => None,
        (true, e) if e == abi::SUCCESS => Some(Ok((status.source(), status.tag()))),
        (true, _) => Some(Err(())),
    }
}

/// Before a completion call on the application's `handles`: a handle a repair replaced is
/// exchanged for the new receive, or for `MPI_REQUEST_NULL` (a completed send), and the old
/// request is freed.
pub(crate) fn substitute(handles: &mut [Request]) {
    if !tracked() {
        return;
    }
    with(|t| {
        for h in handles.iter_mut() {
            let Some(entry) = t.get(&h.bits()).cloned() else {
                continue;
            };
            let next = match entry.state {
                State::Posted | State::Interrupted => continue,
                State::Reposted(new) => new,
                State::Done => {
                    // a collective whose result the repair served or found complete
                    if let Some(c) = &entry.collective {
                        c.buffers.finish();
                    }
                    abi::predefined().request_null
                }
            };
            t.remove(&h.bits());
            if !entry.freed {
                let mut old = *h;
                // SAFETY: the application's request that a repair replaced: complete (with the
                // revoke's error) or pending on a revoked world; freeing it is MPI's
                // `MPI_Request_free`, after which it is never used again.
                unsafe { real::Request_free(&mut old) };
            }
            if let State::Reposted(new) = entry.state {
                t.insert(
                    new.bits(),
                    Entry {
                        state: State::Posted,
                        freed: false,
                        ..entry
                    },
                );
            }
            *h = next;
        }
    });
}

/// The place of the receive from `MPI_ANY_SOURCE` under `request`, if it is one.
pub(crate) fn wildcard(request: Request) -> Option<u64> {
    with(|t| t.get(&request.bits()).and_then(|e| e.receive?.wildcard))
}

/// Whether every one of `handles` is tracked.
pub(crate) fn all_tracked(handles: &[Request]) -> bool {
    with(|t| handles.iter().all(|h| t.contains_key(&h.bits())))
}

/// Whether any of `handles` is tracked.
pub(crate) fn any_tracked(handles: &[Request]) -> bool {
    with(|t| handles.iter().any(|h| t.contains_key(&h.bits())))
}

/// `MPI_Request_free` of `handle`: a send's entry leaves the table, and whether it was one.
/// Its data is in the journal, which a repair resends from whatever MPI did with the request,
/// and it makes no choice: the send goes on unseen, as MPI's `MPI_Request_free` says. (A
/// handle MPI freed at a failure is not MPI's to free again: `false`.)
pub(crate) fn free_send(handle: Request) -> bool {
    with(|t| {
        let send = t
            .get(&handle.bits())
            .is_some_and(|e| e.receive.is_none() && e.collective.is_none() && !e.freed);
        if send {
            t.remove(&handle.bits());
        }
        send
    })
}

/// A completion call recovery does not cover is given `handles`: if any is tracked, nothing
/// is tracked from now on and later losses end the job (the requests' fate is no longer known
/// here).
pub(crate) fn untrack(handles: &[Request]) {
    let any = with(|t| {
        let any = handles.iter().any(|h| t.contains_key(&h.bits()));
        if any {
            // an all-form's memory is MPI's until its request completes: one complete is
            // finished now, the others' memory held by their handles
            for (&key, entry) in t.iter() {
                match (&entry.collective, entry.state) {
                    (Some(c), State::Done) => c.buffers.finish(),
                    (Some(c), _) => super::held::hold(Request::from_bits(key), c.buffers.clone()),
                    (None, _) => {}
                }
            }
            t.clear();
        }
        any
    });
    if any {
        crate::errors::stop_containing(
            "the application gave a nonblocking request to a call in-job recovery does not \
             cover (MPI_Request_free of a receive or a collective, MPI_Cancel, \
             MPI_Request_get_status, or MPI_Waitany and the like in the program's start)",
        );
    }
}
