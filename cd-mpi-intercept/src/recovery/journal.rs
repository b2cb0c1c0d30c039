//! The sender-side journal: what this rank sent and which collective results it got on the
//! world since the last complete persisted version, and its message counts at that version.
//!
//! A replacement re-executes from the version, and the messages it received since then died
//! with the lost process: its peers resend them from here, and a survivor serves it the
//! results of the collectives it re-executes (what each rank received is counted by module
//! `traffic`, through every completion call). The journal is pruned when the next version
//! completes (the persist is collective, so every rank prunes at the same cut, and the
//! persist's consistency check has proven that no message crosses it). Messages are packed
//! (`MPI_Pack`, or one copy for a predefined contiguous datatype: module `types`), so a resend
//! is one `MPI_PACKED` message whatever the datatype; the receiver unpacks it with its own, as
//! MPI's type matching allows. Their bytes, and the collective results', go into the chunks of
//! an [`Arena`], reused from one version to the next, or past the MPI logs' spill threshold
//! into a file.

use super::arena::{Arena, Span};
use crate::abi::{self, Datatype};
use crate::by_tag::ByTag;
use crate::pmpi::{real, world};
use crate::types;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// Where a message's (or a collective result's) packed bytes are.
enum Payload {
    Memory(Span),
    /// In the journal's spill file.
    Spilled {
        offset: u64,
        len: usize,
    },
}

/// One message sent since the version.
struct Sent {
    /// The communicator it went on (`crate::derived`).
    channel: u64,
    tag: c_int,
    payload: Payload,
}

/// The counts of one rank at the last complete version (cumulative, by world rank), as
/// traffic counting (module `traffic`) had them.
#[derive(Clone, Default)]
pub(crate) struct AtVersion {
    pub(crate) sent: Vec<u64>,
    pub(crate) received: Vec<u64>,
    pub(crate) collectives: Vec<u64>,
}

#[derive(Default)]
struct Journal {
    /// Messages sent to each world rank since the version, in order.
    sent: Vec<Vec<Sent>>,
    /// Messages received on each communicator from each world rank at the version, by tag.
    received_at: HashMap<u64, Vec<ByTag>>,
    /// Packed results of the collectives since the version, in order, with their communicator.
    collectives: Vec<(u64, Payload)>,
    /// Collectives started since the version, by communicator (an interrupted one has no
    /// result yet).
    started: HashMap<u64, u64>,
    at_version: AtVersion,
    /// The bytes of the messages and results held in memory.
    arena: Arena,
    /// Bytes held in memory (messages and collective results).
    bytes: u64,
    /// The most bytes held in memory at once.
    peak: u64,
    /// Where messages go past the spill threshold, and its length.
    spill: Option<std::fs::File>,
    spilled: u64,
    /// Bytes ever written to spill files.
    spilled_total: u64,
}

static JOURNAL: Mutex<Option<Journal>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Journal) -> R) -> R {
    let mut guard = JOURNAL.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Journal::default))
}

fn slot<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// `count` elements of `datatype` at `buf`, packed: the elements' own bytes for a predefined
/// contiguous datatype (module `types`: what `MPI_Pack` would write), else `MPI_Pack`'s.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (the MPI call's contract).
pub(crate) unsafe fn pack(buf: *const c_void, count: c_int, datatype: Datatype) -> Vec<u8> {
    let kind = types::kind(datatype);
    if let (true, Some(len)) = (kind.raw, types::raw_bytes(count, kind.size)) {
        if len == 0 || buf.is_null() {
            return Vec::new();
        }
        // SAFETY: `len` bytes of `count` contiguous elements at `buf` (the caller's contract).
        let src = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
        let mut out = vec![0u8; len];
        crate::copy::into_log(&mut out, src);
        return out;
    }
    let comm = world::current();
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Pack_size(count, datatype, comm, &mut size) };
    let mut out = vec![0u8; size.max(0) as usize];
    let mut position: c_int = 0;
    // SAFETY: reads the caller's buffer (its contract) into `out`, sized by MPI_Pack_size.
    unsafe {
        real::Pack(
            buf,
            count,
            datatype,
            out.as_mut_ptr().cast(),
            size,
            &mut position,
            comm,
        )
    };
    out.truncate(position.max(0) as usize);
    out
}

/// Unpacks `data` into `count` elements of `datatype` at `buf`; `false` when it does not fit.
///
/// # Safety
/// `buf` has room for `count` elements of `datatype`.
pub(crate) unsafe fn unpack(
    data: &[u8],
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
) -> bool {
    let kind = types::kind(datatype);
    if let (true, Some(len)) = (kind.raw, types::raw_bytes(count, kind.size)) {
        if data.len() > len || (!data.is_empty() && buf.is_null()) {
            return false;
        }
        if data.is_empty() {
            // (a barrier's empty result: nothing to write, and `buf` may be null)
            return true;
        }
        // SAFETY: the caller's buffer has room for `count` elements, `len >= data.len()` bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), data.len()) };
        crate::copy::bytes(dst, data);
        return true;
    }
    let comm = world::current();
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Pack_size(count, datatype, comm, &mut size) };
    if usize::try_from(size).map_or(true, |s| s < data.len()) {
        return false;
    }
    let mut position: c_int = 0;
    // SAFETY: writes at most `count` elements into the caller's buffer (its contract).
    let rc = unsafe {
        real::Unpack(
            data.as_ptr().cast(),
            data.len() as c_int,
            &mut position,
            buf,
            count,
            datatype,
            comm,
        )
    };
    rc == abi::SUCCESS
}

/// Keeps a copy of a message sent on communicator `channel` to world rank `dest`: in memory up to the MPI logs' spill
/// threshold (`CD_MPI_LOG_SPILL`), beyond it in an unnamed file (`CD_MPI_LOG_DIR`); in the
/// program's start, with the start ([`super::prologue`]).
///
/// # Safety
/// As [`pack`].
pub(crate) unsafe fn sent(
    channel: u64,
    dest: c_int,
    tag: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
) {
    let Ok(dest) = usize::try_from(dest) else {
        return;
    };
    // SAFETY: the caller's contract.
    unsafe {
        with_packed(buf, count, datatype, |data| {
            if super::prologue::active() {
                return super::prologue::sent(channel, dest, tag, data);
            }
            with(|j| {
                let payload = j.keep(data);
                slot(&mut j.sent, dest).push(Sent {
                    channel,
                    tag,
                    payload,
                });
            })
        })
    }
}

/// Runs `f` on the packed form of `count` elements of `datatype` at `buf`: the elements' own
/// bytes for a predefined contiguous datatype (no copy), else [`pack`]'s.
///
/// # Safety
/// As [`pack`].
unsafe fn with_packed<R>(
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    f: impl FnOnce(&[u8]) -> R,
) -> R {
    let kind = types::kind(datatype);
    if let (true, Some(len)) = (kind.raw, types::raw_bytes(count, kind.size)) {
        if len == 0 || buf.is_null() {
            return f(&[]);
        }
        // SAFETY: `len` bytes of `count` contiguous elements at `buf` (the caller's contract).
        return f(unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) });
    }
    // SAFETY: the caller's contract.
    f(&unsafe { pack(buf, count, datatype) })
}

impl Journal {
    /// Holds `data` in memory or in the spill file.
    fn keep(&mut self, data: &[u8]) -> Payload {
        let over = cd_core::log_spill_bytes().is_some_and(|t| self.bytes + data.len() as u64 > t);
        if over {
            if self.spill.is_none() {
                self.spill = cd_core::log_spill_file()
                    .map_err(|e| tracing::warn!(%e, "the journal cannot spill: kept in memory"))
                    .ok();
            }
            if let Some(file) = &self.spill {
                let offset = self.spilled;
                if std::os::unix::fs::FileExt::write_all_at(file, data, offset).is_ok() {
                    self.spilled += data.len() as u64;
                    self.spilled_total += data.len() as u64;
                    return Payload::Spilled {
                        offset,
                        len: data.len(),
                    };
                }
            }
        }
        Payload::Memory(self.hold(data))
    }

    /// Copies `data` into the arena.
    fn hold(&mut self, data: &[u8]) -> Span {
        self.bytes += data.len() as u64;
        self.peak = self.peak.max(self.bytes);
        self.arena
            .append(data.len(), |dst| crate::copy::into_log(dst, data))
    }

    /// The bytes of a message or a collective result.
    fn read(&self, payload: &Payload) -> Vec<u8> {
        match payload {
            Payload::Memory(span) => self.arena.get(*span).to_vec(),
            Payload::Spilled { offset, len } => {
                let mut data = vec![0u8; *len];
                let read = self
                    .spill
                    .as_ref()
                    .map(|f| std::os::unix::fs::FileExt::read_exact_at(f, &mut data, *offset));
                if !matches!(read, Some(Ok(()))) {
                    tracing::error!(offset, len, "the journal's spill file cannot be read");
                }
                data
            }
        }
    }
}

/// Keeps the result of a collective on communicator `channel`: `count` elements of
/// `datatype` at `buf`.
///
/// # Safety
/// As [`pack`].
pub(crate) unsafe fn collective(
    channel: u64,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
) {
    // SAFETY: the caller's contract.
    unsafe {
        with_packed(buf, count, datatype, |data| {
            collective_packed(channel, data)
        })
    }
}

/// Keeps a collective result that is packed already (one served to this rank).
pub(crate) fn collective_packed(channel: u64, data: &[u8]) {
    if super::prologue::active() {
        return super::prologue::collective(channel, data);
    }
    with(|j| {
        let payload = j.keep(data);
        j.collectives.push((channel, payload));
    });
}

/// A version completed: the journal starts again from it, with these counts (`received_at`:
/// the messages received on each communicator, by world rank).
pub(crate) fn version_complete(at: AtVersion, received_at: HashMap<u64, Vec<ByTag>>) {
    with(|j| {
        j.arena.clear();
        *j = Journal {
            at_version: at,
            received_at,
            arena: std::mem::take(&mut j.arena),
            peak: j.peak,
            spilled_total: j.spilled_total,
            ..Journal::default()
        };
    });
}

/// Sets the messages received on each communicator at the version (by world rank and tag): a
/// replacement's, once it has re-executed the program's start.
pub(crate) fn set_received_at(received_at: HashMap<u64, Vec<ByTag>>) {
    with(|j| j.received_at = received_at);
}

/// Per world rank: messages received from it on communicator `channel` since the version, by
/// tag, given `received_now` (on it, by world rank and tag).
pub(crate) fn received_since(channel: u64, received_now: &[ByTag]) -> Vec<ByTag> {
    with(|j| {
        let at = j.received_at.get(&channel);
        received_now
            .iter()
            .enumerate()
            .map(|(p, now)| match at.and_then(|a| a.get(p)) {
                Some(then) => now.since(then),
                None => now.clone(),
            })
            .collect()
    })
}

/// The counts at the version.
pub(crate) fn at_version() -> AtVersion {
    with(|j| j.at_version.clone())
}

/// A covered collective on communicator `channel` starts (in the program's start, the start
/// keeps it: [`super::prologue`]).
pub(crate) fn collective_started(channel: u64) {
    if !super::prologue::active() {
        with(|j| *j.started.entry(channel).or_insert(0) += 1);
    }
}

/// Whether the journal holds all of this rank's traffic since the version, as message
/// counting saw it (`counts`, by world rank): every message sent, and every collective
/// started on the communicators shared with each rank (`shares(channel, rank)`). Traffic that
/// the covered calls did not keep (another collective, a send mode they do not take) means a
/// replacement could not re-execute the interval.
pub(crate) fn holds(
    counts: &crate::MessageCounts,
    me: usize,
    shares: impl Fn(u64, usize) -> bool,
) -> bool {
    with(|j| {
        let since = |now: &[u64], at: &[u64], p: usize| {
            let get = |v: &[u64]| v.get(p).copied().unwrap_or(0);
            get(now).saturating_sub(get(at))
        };
        (0..counts.sent.len()).filter(|&p| p != me).all(|p| {
            let sent = j.sent.get(p).map_or(0, |s| s.len() as u64);
            let started: u64 = j
                .started
                .iter()
                .filter(|&(&c, _)| shares(c, p))
                .map(|(_, &n)| n)
                .sum();
            since(&counts.sent, &j.at_version.sent, p) == sent
                && since(&counts.collectives, &j.at_version.collectives, p) == started
        })
    })
}

/// How many collectives on communicator `channel` completed since the version.
pub(crate) fn collectives(channel: u64) -> u64 {
    with(|j| j.collectives.iter().filter(|(c, _)| *c == channel).count() as u64)
}

/// The packed results of the collectives on communicator `channel` numbered `from..` since
/// the version.
pub(crate) fn collective_results(channel: u64, from: usize) -> Vec<Vec<u8>> {
    with(|j| {
        let on = j.collectives.iter().filter(|(c, _)| *c == channel);
        on.skip(from).map(|(_, p)| j.read(p)).collect()
    })
}

/// The messages (communicator, tag, packed bytes) sent to world rank `peer` since the version,
/// less the first `skip(communicator, tag)` of each tag on each communicator (those it
/// received: `crate::by_tag`).
pub(crate) fn messages_to(
    peer: usize,
    skip: impl Fn(u64, c_int) -> u64,
) -> Vec<(u64, c_int, Vec<u8>)> {
    with(|j| {
        let mut seen: HashMap<(u64, c_int), u64> = HashMap::new();
        let sent = j.sent.get(peer).map_or(&[][..], |s| &s[..]);
        sent.iter()
            .filter(|m| {
                let n = seen.entry((m.channel, m.tag)).or_insert(0);
                *n += 1;
                *n > skip(m.channel, m.tag)
            })
            .map(|m| (m.channel, m.tag, j.read(&m.payload)))
            .collect()
    })
}

/// Bytes held in memory now and at most, and ever written to spill files, for the statistics.
pub(crate) fn bytes() -> (u64, u64, u64) {
    with(|j| (j.bytes, j.peak, j.spilled_total))
}
