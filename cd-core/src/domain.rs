//! A safe, typed root CD for Rust programs.
//!
//! The raw API is `unsafe` because the runtime writes raw address ranges on restore: nothing
//! stops a program from holding a reference into a range while it is overwritten, or from
//! freeing it first. [`Domain`] removes both hazards by owning the protected buffers. A program
//! reaches them only through the domain, so the borrow checker proves that no borrow is alive
//! when [`Domain::restore`] (which takes `&mut self`) writes them, and they live exactly as
//! long as the CD does.
//!
//! Owning the buffers also lets the domain follow the spec's rule "add before you modify" by
//! itself: a buffer enters the CD READ_ONLY, and [`Domain::get_mut`] promotes what it lends out
//! mutably to READ_WRITE (no copy). The next [`Domain::advance`] copies exactly those bytes and
//! demotes them again. The common loop is then: protect, then per step borrow, compute, and
//! restore or advance.
//!
//! ```
//! use cd_core::Domain;
//!
//! let mut cd = Domain::new(Some("typed-example")).unwrap();
//! let field = cd.protect(vec![0.0f64; 1024]).unwrap();
//! let step = cd.protect(vec![0u64]).unwrap();
//! let mut faults = 0;
//! while cd.get(step)[0] < 10 {
//!     let (f, s) = cd.get2_mut(field, step).unwrap();
//!     f.iter_mut().for_each(|x| *x += 1.0);
//!     s[0] += 1;
//!     if s[0] == 5 && faults == 0 {
//!         faults += 1; // a transient fault hits step 5 once:
//!         cd.restore().unwrap(); // back to the end of step 4, and run step 5 again
//!         continue;
//!     }
//!     cd.advance().unwrap(); // saves the 8 KiB + 8 bytes borrowed mutably in this step
//! }
//! assert!(cd.get(field).iter().all(|&x| x == 10.0));
//! cd.commit().unwrap();
//! ```

use crate::add::{add_to_cd_via_copy, delete_from_cd};
use crate::advance::{advance_cd_point_in_time, AdvanceReport};
use crate::commit::commit_cd;
use crate::create::create_cd;
use crate::error::Result;
use crate::ids::CdHandle;
use crate::restore::{self, RestoreReport};
use crate::types::{Access, AddrSpec, LoggingMode};
use bytemuck::Pod;
use std::any::Any;
use std::marker::PhantomData;
use std::ops::Range;

/// Names a buffer protected by a [`Domain`].
pub struct Key<T> {
    index: usize,
    domain: CdHandle,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({}, {})", self.domain, self.index)
    }
}

/// A root CD that owns the buffers it protects.
pub struct Domain {
    handle: CdHandle,
    /// `Box<[T]>` for the `T` of the key at the same index; `None` once taken back.
    buffers: Vec<Option<Box<dyn Any + Send>>>,
    committed: bool,
}

impl Domain {
    /// A root CD that does not log MPI traffic, with an optional unique name.
    pub fn new(name: Option<&str>) -> Result<Domain> {
        Self::with_logging(name, LoggingMode::Disabled)
    }

    /// A root CD with the given logging mode (`Enabled` when the program uses MPI).
    pub fn with_logging(name: Option<&str>, logging: LoggingMode) -> Result<Domain> {
        Ok(Domain {
            handle: create_cd(None, None, logging, name)?,
            buffers: Vec::new(),
            committed: false,
        })
    }

    /// The underlying CD, for the raw API (child CDs, files, logs).
    pub fn handle(&self) -> CdHandle {
        self.handle
    }

    /// Moves `data` into the domain and saves it now, READ_ONLY.
    ///
    /// An empty vector is kept but not added (the CD cannot hold empty ranges).
    pub fn protect<T: Pod + Send>(&mut self, data: Vec<T>) -> Result<Key<T>> {
        let data: Box<[T]> = data.into_boxed_slice();
        if !data.is_empty() {
            let spec = AddrSpec::of(&*data, Access::ReadOnly);
            // SAFETY: the buffer is owned by this domain from now on, stays at this address
            // (a boxed slice never moves its elements), and is freed only after it left the CD.
            unsafe { add_to_cd_via_copy(self.handle, &[spec])? };
        }
        self.buffers.push(Some(Box::new(data)));
        Ok(Key {
            index: self.buffers.len() - 1,
            domain: self.handle,
            _type: PhantomData,
        })
    }

    fn slot<T: Pod>(&self, key: Key<T>) -> &[T] {
        self.check(key);
        match self.buffers[key.index].as_ref() {
            Some(b) => b
                .downcast_ref::<Box<[T]>>()
                .expect("a key's type matches its buffer"),
            None => panic!("{key:?} was taken back from its domain"),
        }
    }

    fn slot_mut<T: Pod>(slot: &mut Option<Box<dyn Any + Send>>) -> &mut [T] {
        slot.as_mut()
            .expect("key was taken back from its domain")
            .downcast_mut::<Box<[T]>>()
            .expect("a key's type matches its buffer")
    }

    fn check<T>(&self, key: Key<T>) {
        assert!(
            key.domain == self.handle && key.index < self.buffers.len(),
            "{key:?} belongs to another domain than {}",
            self.handle
        );
    }

    /// Promotes `range` of buffer `key` to READ_WRITE (no data is copied).
    fn promote<T: Pod>(&self, key: Key<T>, range: Range<usize>) -> Result<()> {
        let data = self.slot(key);
        let part = &data[range];
        if part.is_empty() || std::mem::size_of::<T>() == 0 {
            return Ok(());
        }
        let spec = AddrSpec::of(part, Access::ReadWrite);
        // SAFETY: the range is already in the CD (added by `protect`), so this only relabels
        // it; the buffer is owned by the domain.
        unsafe { add_to_cd_via_copy(self.handle, &[spec]) }
    }

    /// The buffer, for reading.
    ///
    /// # Panics
    /// If `key` belongs to another domain or was taken back.
    pub fn get<T: Pod>(&self, key: Key<T>) -> &[T] {
        self.slot(key)
    }

    /// The buffer, for writing: it becomes READ_WRITE, so the next advance saves it.
    ///
    /// # Panics
    /// As [`get`](Self::get).
    pub fn get_mut<T: Pod>(&mut self, key: Key<T>) -> Result<&mut [T]> {
        let len = self.slot(key).len();
        self.get_mut_range(key, 0..len)
    }

    /// Part of the buffer, for writing: only `range` (in elements) becomes READ_WRITE.
    ///
    /// # Panics
    /// As [`get`](Self::get), and if `range` is out of bounds.
    pub fn get_mut_range<T: Pod>(&mut self, key: Key<T>, range: Range<usize>) -> Result<&mut [T]> {
        self.promote(key, range.clone())?;
        Ok(&mut Self::slot_mut::<T>(&mut self.buffers[key.index])[range])
    }

    /// Two different buffers, for writing; both become READ_WRITE.
    ///
    /// # Panics
    /// As [`get`](Self::get), and if `a` and `b` are the same buffer.
    pub fn get2_mut<A: Pod, B: Pod>(
        &mut self,
        a: Key<A>,
        b: Key<B>,
    ) -> Result<(&mut [A], &mut [B])> {
        assert_ne!(a.index, b.index, "get2_mut needs two different buffers");
        self.promote(a, 0..self.slot(a).len())?;
        self.promote(b, 0..self.slot(b).len())?;
        let [sa, sb] = self
            .buffers
            .get_disjoint_mut([a.index, b.index])
            .expect("indices checked distinct and in bounds");
        Ok((Self::slot_mut::<A>(sa), Self::slot_mut::<B>(sb)))
    }

    /// Takes a buffer back out of the domain (it leaves the CD first).
    ///
    /// # Panics
    /// As [`get`](Self::get).
    pub fn take<T: Pod>(&mut self, key: Key<T>) -> Result<Vec<T>> {
        let data = self.slot(key);
        if !data.is_empty() {
            delete_from_cd(self.handle, &[AddrSpec::of(data, Access::ReadOnly)])?;
        }
        let boxed = self.buffers[key.index]
            .take()
            .expect("slot checked")
            .downcast::<Box<[T]>>()
            .expect("a key's type matches its buffer");
        Ok(boxed.into_vec())
    }

    /// Brings every buffer back to the domain's point in time.
    pub fn restore(&mut self) -> Result<RestoreReport> {
        // SAFETY: the domain owns every buffer it added, and `&mut self` proves no borrow of
        // them is alive. Ranges added through the raw API are the caller's responsibility
        // under that API's own `unsafe` contract.
        unsafe { restore::restore_cd(self.handle) }
    }

    /// Moves the domain's point in time to now: saves what was borrowed mutably since the last
    /// advance, and demotes it.
    pub fn advance(&mut self) -> Result<AdvanceReport> {
        // SAFETY: as in `restore`: owned buffers, and no borrow is alive.
        unsafe { advance_cd_point_in_time(self.handle) }
    }

    /// Commits (discards) the CD and frees the buffers still in it.
    pub fn commit(mut self) -> Result<()> {
        commit_cd(self.handle)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        if self.committed || commit_cd(self.handle).is_ok() {
            return;
        }
        // The CD outlives us (a child created through the raw API keeps it alive), and it
        // still names our buffers: leak them rather than let a later restore write freed
        // memory.
        std::mem::forget(std::mem::take(&mut self.buffers));
    }
}

impl std::fmt::Debug for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Domain")
            .field("handle", &self.handle)
            .field("buffers", &self.buffers.len())
            .finish()
    }
}
