//! Nonblocking point-to-point transfers on buffers a [`Flight`] owns: the building block of
//! pipelines that keep several pieces in flight.
//!
//! rsmpi ties each request to a borrow of its buffer inside a scope, which suits "post, work,
//! wait" rounds but not a rolling window, where a buffer is received into, read, and posted
//! again while other buffers' requests stay in flight. A `Flight` holds a fixed set of buffers
//! ("slots") and the raw MPI requests on them, and enforces the rule MPI needs: a slot's buffer
//! is never touched, moved or freed while a request on it is active. [`Flight::buf`] panics on
//! an active slot, and dropping a `Flight` completes every request first.
//!
//! Messages use one tag; MPI matches messages between two ranks in the order they were
//! posted, so both ends must post their transfers in the same order (every pipeline derives
//! its order from the same step list on all ranks). Waits yield the core unless the operation
//! runs with blocking waits ([`crate::prof`]), and count in the `mpi` phase.

use std::marker::PhantomData;
use std::os::raw::c_int;
use std::time::Instant;

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;

use crate::pipeline::TAG_DATA;
use crate::prof::{self, Phase};

/// Pieces in flight per rank in the pipelines: receives are posted this many pieces (or
/// steps) ahead, so a rank runs up to that many steps ahead of or behind its partners.
pub(crate) const WINDOW: usize = 4;

/// Buffers and the requests posted on them (see the module docs).
pub(crate) struct Flight<'c> {
    comm: ffi::MPI_Comm,
    bufs: Vec<Vec<u8>>,
    /// Active requests of each slot: one receive, or any number of sends of its buffer.
    reqs: Vec<Vec<ffi::MPI_Request>>,
    /// Whether a slot's active request is a receive.
    receiving: Vec<bool>,
    _comm: PhantomData<&'c SimpleCommunicator>,
}

impl<'c> Flight<'c> {
    /// `slots` buffers of `len` bytes for transfers on `comm` (ranks of `comm`).
    pub fn new(comm: &'c SimpleCommunicator, slots: usize, len: usize) -> Flight<'c> {
        assert!(
            i32::try_from(len).is_ok(),
            "piece of {len} bytes exceeds an MPI count"
        );
        Flight {
            comm: comm.as_raw(),
            bufs: (0..slots).map(|_| vec![0u8; len]).collect(),
            reqs: vec![Vec::new(); slots],
            receiving: vec![false; slots],
            _comm: PhantomData,
        }
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.bufs.len()
    }

    /// The buffer of an idle slot.
    ///
    /// # Panics
    /// If a request on the slot is still active (a pipeline bug).
    pub fn buf(&mut self, slot: usize) -> &mut [u8] {
        assert!(
            self.reqs[slot].is_empty(),
            "slot {slot} is in flight and must not be touched"
        );
        &mut self.bufs[slot]
    }

    /// Two distinct idle slots' buffers at once.
    ///
    /// # Panics
    /// If `a == b` or either slot is in flight.
    pub fn pair(&mut self, a: usize, b: usize) -> (&mut [u8], &[u8]) {
        assert!(a != b, "a slot paired with itself");
        assert!(
            self.reqs[a].is_empty() && self.reqs[b].is_empty(),
            "slots {a} and {b} must be idle"
        );
        if a < b {
            let (lo, hi) = self.bufs.split_at_mut(b);
            (&mut lo[a], &hi[0])
        } else {
            let (lo, hi) = self.bufs.split_at_mut(a);
            (&mut hi[0], &lo[b])
        }
    }

    /// Starts sending the first `len` bytes of `slot` to rank `to`. A slot may be sent to
    /// several ranks at once, but not while it is receiving.
    pub fn send(&mut self, slot: usize, len: usize, to: usize) {
        assert!(!self.receiving[slot] || self.reqs[slot].is_empty());
        self.receiving[slot] = false;
        let buf = &self.bufs[slot][..len];
        // SAFETY: null until MPI_Isend writes it; MPI_REQUEST_NULL is a constant of the MPI
        // library read through rsmpi's shim.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        let t = Instant::now();
        // SAFETY: `buf` stays allocated and unmodified until the request completes: the slot
        // has an active request from now on, so `buf()`/`pair()` refuse it, `recv()` asserts,
        // and `Drop` completes the request before the buffers are freed. `len` fits a c_int
        // (checked in `new`), the datatype and communicator are valid handles.
        unsafe {
            ffi::MPI_Isend(
                buf.as_ptr().cast(),
                len as c_int,
                ffi::RSMPI_UINT8_T,
                to as c_int,
                TAG_DATA,
                self.comm,
                &mut req,
            );
        }
        prof::add(Phase::Mpi, t.elapsed());
        self.reqs[slot].push(req);
    }

    /// Starts receiving `len` bytes from rank `from` into an idle `slot`.
    pub fn recv(&mut self, slot: usize, len: usize, from: usize) {
        assert!(self.reqs[slot].is_empty(), "slot {slot} is in flight");
        self.receiving[slot] = true;
        let buf = &mut self.bufs[slot][..len];
        // SAFETY: as in `send`.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        let t = Instant::now();
        // SAFETY: as in `send`; MPI writes at most `len` bytes into `buf`, which nothing else
        // reads or writes until the request completes.
        unsafe {
            ffi::MPI_Irecv(
                buf.as_mut_ptr().cast(),
                len as c_int,
                ffi::RSMPI_UINT8_T,
                from as c_int,
                TAG_DATA,
                self.comm,
                &mut req,
            );
        }
        prof::add(Phase::Mpi, t.elapsed());
        self.reqs[slot].push(req);
    }

    /// Whether every request of `slot` completed (testing progresses MPI).
    fn test(&mut self, slot: usize) -> bool {
        let reqs = &mut self.reqs[slot];
        reqs.retain_mut(|req| {
            let mut flag: c_int = 0;
            // SAFETY: `req` is an active request created by MPI_Isend/MPI_Irecv above; on
            // completion MPI sets it to MPI_REQUEST_NULL and we drop it from the list.
            unsafe {
                ffi::MPI_Test(req, &mut flag, ffi::RSMPI_STATUS_IGNORE);
            }
            flag == 0
        });
        reqs.is_empty()
    }

    /// Completes every request of `slot` (no-op if idle).
    pub fn wait(&mut self, slot: usize) {
        if self.reqs[slot].is_empty() {
            return;
        }
        let t = Instant::now();
        if prof::yielding() {
            while !self.test(slot) {
                std::thread::yield_now();
            }
        } else {
            for mut req in self.reqs[slot].drain(..) {
                // SAFETY: an active request of ours; MPI_Wait completes and frees it.
                unsafe {
                    ffi::MPI_Wait(&mut req, ffi::RSMPI_STATUS_IGNORE);
                }
            }
        }
        prof::add(Phase::Mpi, t.elapsed());
    }

    /// Completes every request of every slot.
    pub fn wait_all(&mut self) {
        for s in 0..self.slots() {
            self.wait(s);
        }
    }
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        // MPI may still read or write the buffers of active requests: complete them before the
        // buffers go. The pipelines post matching transfers on every rank, so this ends.
        for reqs in &mut self.reqs {
            for mut req in reqs.drain(..) {
                // SAFETY: an active request of ours.
                unsafe {
                    ffi::MPI_Wait(&mut req, ffi::RSMPI_STATUS_IGNORE);
                }
            }
        }
    }
}
