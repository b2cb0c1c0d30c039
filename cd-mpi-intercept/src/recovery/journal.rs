//! The sender-side journal: what this rank sent and which collective results it got on the
//! world since the last complete persisted version, and its message counts at that version.
//!
//! A replacement re-executes from the version, and the messages it received since then died
//! with the lost process: its peers resend them from here, and a survivor serves it the
//! results of the collectives it re-executes (what each rank received is counted by module
//! `traffic`, through every completion call). The journal is pruned when the next version
//! completes (the persist is collective, so every rank prunes at the same cut, and the
//! persist's consistency check has proven that no message crosses it). Messages are packed
//! (`MPI_Pack`), so a resend is one `MPI_PACKED` message whatever the datatype; the receiver
//! unpacks it with its own, as MPI's type matching allows.

use crate::abi::{self, Datatype};
use crate::pmpi::{real, world};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// One message sent since the version.
pub(crate) struct Sent {
    pub(crate) tag: c_int,
    pub(crate) data: Vec<u8>,
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
    /// Messages received on the world from each world rank at the version.
    received_at: Vec<u64>,
    /// Packed results of the world's collectives since the version, in order.
    collectives: Vec<Vec<u8>>,
    at_version: AtVersion,
    /// Bytes held.
    bytes: u64,
    /// The most bytes held at once.
    peak: u64,
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

/// `count` elements of `datatype` at `buf`, packed.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (the MPI call's contract).
pub(crate) unsafe fn pack(buf: *const c_void, count: c_int, datatype: Datatype) -> Vec<u8> {
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

/// Keeps a copy of a message sent to world rank `dest`.
///
/// # Safety
/// As [`pack`].
pub(crate) unsafe fn sent(
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
    let data = unsafe { pack(buf, count, datatype) };
    with(|j| {
        j.bytes += data.len() as u64;
        j.peak = j.peak.max(j.bytes);
        slot(&mut j.sent, dest).push(Sent { tag, data });
    });
}

/// Keeps the packed result of a collective on the world.
pub(crate) fn collective(result: Vec<u8>) {
    with(|j| {
        j.bytes += result.len() as u64;
        j.peak = j.peak.max(j.bytes);
        j.collectives.push(result);
    });
}

/// A version completed: the journal starts again from it, with these counts (`received_at`:
/// the messages received on the world, by world rank).
pub(crate) fn version_complete(at: AtVersion, received_at: Vec<u64>) {
    with(|j| {
        *j = Journal {
            at_version: at,
            received_at,
            peak: j.peak,
            ..Journal::default()
        };
    });
}

/// Per world rank: messages sent to it since the version, and received from it since the
/// version given `received_now` (on the world, by world rank).
pub(crate) fn since(received_now: &[u64]) -> (Vec<u64>, Vec<u64>) {
    with(|j| {
        let n = received_now.len();
        let sent = (0..n)
            .map(|p| j.sent.get(p).map_or(0, |s| s.len() as u64))
            .collect();
        let received = (0..n)
            .map(|p| received_now[p].saturating_sub(j.received_at.get(p).copied().unwrap_or(0)))
            .collect();
        (sent, received)
    })
}

/// The counts at the version.
pub(crate) fn at_version() -> AtVersion {
    with(|j| j.at_version.clone())
}

/// How many collectives on the world completed since the version.
pub(crate) fn collectives() -> u64 {
    with(|j| j.collectives.len() as u64)
}

/// The packed results of the collectives numbered `from..` since the version.
pub(crate) fn collective_results(from: usize) -> Vec<Vec<u8>> {
    with(|j| {
        j.collectives
            .get(from..)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    })
}

/// Runs `f` on the messages sent to world rank `peer` since the version, from number `from`.
pub(crate) fn sent_to<R>(peer: usize, from: usize, f: impl FnOnce(&[Sent]) -> R) -> R {
    with(|j| f(j.sent.get(peer).and_then(|s| s.get(from..)).unwrap_or(&[])))
}

/// Bytes held now and at most, for the statistics.
pub(crate) fn bytes() -> (u64, u64) {
    with(|j| (j.bytes, j.peak))
}
