//! An asynchronous advance of a safe domain while it drains device memory
//! ([`Domain::advance_async`](crate::Domain::advance_async)).

use crate::device::DevicePtrMut;
use crate::error::Result;
use crate::tree::{self, DeviceKey, Tree};
use bytemuck::Pod;
use cd_core::{advance_test, advance_wait, AdvanceReport, AsyncAdvance, CdHandle};

/// An asynchronous advance that may still be draining device memory to the host: the domain
/// it came from stays borrowed until it is settled ([`wait`](Self::wait),
/// [`test`](Self::test)) or dropped.
///
/// While the drain runs, the CD stays at its previous point in time: a fault found now is
/// repaired by restoring that point (drop this, then [`restore`](crate::Domain::restore):
/// the pending point is discarded if its drain has not completed). Meanwhile the application
/// keeps its GPU busy: [`device_mut`](Self::device_mut) hands out the address of a buffer for
/// the next kernels, queued after the snapshot, without waiting for the drain.
///
/// Dropping it does not wait for the drain: the domain's next operation waits for it (or a
/// restore drops it). A drain that fails leaves the CD at its previous point;
/// [`wait`](Self::wait) and [`test`](Self::test) return the failure, a drop leaves it to the
/// domain's next operation.
///
/// The borrow keeps the tree's buffers allocated and unborrowed while the advance is in
/// flight: no `take_device`, no host `get_mut`, no child.
///
/// ```compile_fail,E0499
/// let mut cd = containment::Domain::new().unwrap();
/// let pending = cd.advance_async(containment::Stream::DEFAULT).unwrap();
/// cd.restore().unwrap(); // the pending advance borrows `cd`
/// pending.wait().unwrap();
/// ```
pub struct PendingAdvance<'a> {
    tree: &'a mut Tree,
    cd: CdHandle,
    started: AsyncAdvance,
    /// The drain completed, failed, or never ran (a synchronous advance).
    settled: bool,
}

impl<'a> PendingAdvance<'a> {
    pub(crate) fn new(tree: &'a mut Tree, cd: CdHandle, started: AsyncAdvance) -> Self {
        PendingAdvance {
            tree,
            cd,
            started,
            settled: !started.in_flight,
        }
    }

    /// The bytes and ranges the advance copies (or copied).
    pub fn report(&self) -> AdvanceReport {
        self.started.report
    }

    /// Whether the advance went asynchronously (`false`: it ran synchronously, and the new
    /// point was current when the call returned: host memory only, a space that cannot
    /// snapshot, or too little spare device memory for one).
    pub fn in_flight(&self) -> bool {
        self.started.in_flight
    }

    /// Whether the drain has completed, without waiting; on `true` the new point is current.
    /// A failed drain is returned as its error (the CD stays at its previous point).
    pub fn test(&mut self) -> Result<bool> {
        if self.settled {
            return Ok(true);
        }
        match advance_test(self.cd) {
            Ok(false) => Ok(false),
            done => self.settle(done.map(drop)).map(|()| true),
        }
    }

    /// Waits for the drain and makes the new point current. A failed drain is returned as its
    /// error (the CD stays at its previous point).
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        if self.settled {
            return Ok(());
        }
        let waited = advance_wait(self.cd);
        self.settle(waited)
    }

    /// Records the end of the drain.
    fn settle(&mut self, drained: cd_core::Result<()>) -> Result<()> {
        self.settled = true;
        Ok(drained?)
    }

    /// A device buffer's address for a kernel queued after the advance (on its stream, or
    /// ordered after it): the buffer becomes READ_WRITE in the CD, as
    /// [`Domain::device_mut`](crate::Domain::device_mut) makes it.
    ///
    /// A buffer this CD protected (or got from a child's commit) is promoted at once, without
    /// waiting for the drain: cd-core records a promotion made during the drain, so the buffer
    /// stays READ_WRITE when the pending point becomes current and the next advance saves the
    /// kernel's writes. Any other buffer (an ancestor's, which the CD must copy before the
    /// kernel writes it) waits for the drain first.
    pub fn device_mut<T: Pod>(&mut self, key: DeviceKey<T>) -> Result<DevicePtrMut<'_, T>> {
        let cd = self.cd;
        let slot = self.tree.slot(key.id)?;
        tree::device(slot, key.id)?;
        if !(slot.owner == cd && slot.held.contains(&cd)) {
            self.finish()?;
        }
        let slot = self.tree.slot_mut(key.id)?;
        tree::promote_device(slot, key.id, 0..tree::device(slot, key.id)?.len(), cd)?;
        Ok(DevicePtrMut::new(tree::device(slot, key.id)?))
    }
}

impl std::fmt::Debug for PendingAdvance<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingAdvance")
            .field("cd", &self.cd)
            .field("in_flight", &self.started.in_flight)
            .field("settled", &self.settled)
            .finish_non_exhaustive()
    }
}
