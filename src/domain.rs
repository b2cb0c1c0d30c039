//! Safe, typed CDs: a root [`Domain`] and the [`Child`] domains nested in it.
//!
//! The raw API is `unsafe` because a restore writes raw address ranges: nothing stops a
//! program from holding a reference into a range while it is overwritten, or from freeing it
//! first. The domains remove both hazards by owning the protected buffers (in the tree of
//! `tree`): a program reaches them only through the domain in use, so the borrow checker
//! proves that no borrow is alive when a restore (which takes `&mut self`) writes them, and
//! they are freed only once no CD can name them.
//!
//! Nesting is borrowing. [`Domain::child`] returns a [`Child`] that borrows its parent
//! mutably: it cannot outlive the parent, and while it lives the parent cannot be used at
//! all — in particular not restored, advanced or committed, which is the spec's rule that a
//! parent's restore discards its children (there is no live child to discard) and that a CD
//! advances or commits only without children. [`Child::commit`] merges the child into the
//! parent by the spec's rules and ends the borrow; dropping a child commits it too.
//!
//! Owning the buffers also lets a domain follow the spec's rule "add before you modify" by
//! itself: a buffer enters the CD READ_ONLY, and `get_mut` labels what it lends out READ_WRITE
//! in the current CD — a promotion when that CD holds the bytes, a copy of them when a child
//! borrows its ancestor's buffer for the first time. The next advance copies exactly those
//! bytes and demotes them.

use crate::advance_async::PendingAdvance;
use crate::device::{Device, DevicePtrMut, Stream};
use crate::error::{CommitError, Error, Result};
use crate::raw::create_cd;
use crate::tree::{self, Data, DeviceKey, Key, Tree};
use bytemuck::Pod;
use cd_core::{
    advance_cd_point_in_time, advance_cd_point_in_time_async, cd_entries, cd_info, commit_cd,
    delete_from_cd, get_mpi_log_from_cd, recovered_version, restore_cd, Access, AddrSpec,
    AdvanceReport, CdError, CdHandle, CdInfo, LogEntry, LoggingMode, RestoreReport,
};
use std::ops::Range;

/// A root CD that owns the buffers it and its children protect.
///
/// ```
/// use containment::Domain;
///
/// let mut cd = Domain::new()?;
/// let field = cd.protect(vec![0.0f64; 1024])?;
/// let step = cd.protect(vec![0u64])?;
/// let mut faults = 0;
/// while cd.get(step)?[0] < 10 {
///     let (f, s) = cd.get2_mut(field, step)?;
///     f.iter_mut().for_each(|x| *x += 1.0);
///     s[0] += 1;
///     if s[0] == 5 && faults == 0 {
///         faults += 1; // a transient fault hits step 5 once:
///         cd.restore()?; // back to the end of step 4, and run step 5 again
///         continue;
///     }
///     cd.advance()?; // saves the 8 KiB + 8 bytes borrowed mutably in this step
/// }
/// assert!(cd.get(field)?.iter().all(|&x| x == 10.0));
/// cd.commit()?;
/// # Ok::<(), containment::Error>(())
/// ```
pub struct Domain {
    tree: Tree,
    committed: bool,
}

/// A child CD nested in a [`Domain`] or another child, borrowing it mutably for `'p`.
///
/// It reaches its own buffers and its ancestors' (a `get_mut` of an ancestor's buffer saves
/// it in the child first). A child cannot outlive its parent:
///
/// ```compile_fail,E0597
/// let child;
/// {
///     let mut root = containment::Domain::new().unwrap();
///     child = root.child().unwrap();
/// }
/// drop(child);
/// ```
///
/// and while it lives the parent can be neither used nor restored, advanced or committed:
///
/// ```compile_fail,E0499
/// let mut root = containment::Domain::new().unwrap();
/// let child = root.child().unwrap();
/// root.restore().unwrap(); // the child borrows `root`
/// child.commit().unwrap();
/// ```
///
/// ```compile_fail,E0502
/// let mut root = containment::Domain::new().unwrap();
/// let x = root.protect(vec![1u8]).unwrap();
/// let mut child = root.child().unwrap();
/// let r = root.get(x).unwrap(); // not even read: the child may be writing it
/// child.get_mut(x).unwrap()[0] = 2;
/// assert_eq!(r[0], 1);
/// ```
pub struct Child<'p> {
    tree: &'p mut Tree,
    handle: CdHandle,
    ended: bool,
}

/// Options of a root domain: name, logging mode, `storage_info` ([`Domain::builder`]).
#[derive(Debug, Clone, Default)]
pub struct Builder {
    name: Option<String>,
    logging: Option<LoggingMode>,
    storage_info: Option<String>,
}

impl Builder {
    /// The root's name, unique among the live roots of the process (a persistent root needs
    /// one: a restart finds its versions by name).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Whether the CD logs MPI traffic: [`LoggingMode::Enabled`] for an MPI program whose
    /// ranks recover alone, [`LoggingMode::Disabled`] (the default) otherwise. A root cannot
    /// [`Inherit`](LoggingMode::Inherit).
    pub fn logging(mut self, logging: LoggingMode) -> Self {
        self.logging = Some(logging);
        self
    }

    /// The `storage_info` string (`key=value;...`, see [`cd_core::StorageInfo`]); without it
    /// the root takes `$CD_STORAGE_INFO` if set. `dir=...` makes the root persistent.
    pub fn storage_info(mut self, storage_info: &str) -> Self {
        self.storage_info = Some(storage_info.to_owned());
        self
    }

    /// Creates the root CD (enabling the built-in CUDA space first, as
    /// [`raw::create_cd`](crate::raw::create_cd) does).
    pub fn create(self) -> Result<Domain> {
        let handle = create_cd(
            None,
            self.storage_info.as_deref(),
            self.logging.unwrap_or(LoggingMode::Disabled),
            self.name.as_deref(),
        )?;
        Ok(Domain {
            tree: Tree::new(handle),
            committed: false,
        })
    }
}

/// Options of a child domain: logging mode and `storage_info` ([`Domain::child_builder`]).
#[derive(Debug)]
pub struct ChildBuilder<'p> {
    tree: &'p mut Tree,
    logging: LoggingMode,
    storage_info: Option<String>,
}

impl<'p> ChildBuilder<'p> {
    /// The logging mode: [`LoggingMode::Inherit`] (the default) or the parent's own.
    pub fn logging(mut self, logging: LoggingMode) -> Self {
        self.logging = logging;
        self
    }

    /// The child's `storage_info` (default: the parent's). A child cannot persist (`dir`).
    pub fn storage_info(mut self, storage_info: &str) -> Self {
        self.storage_info = Some(storage_info.to_owned());
        self
    }

    /// Creates the child CD.
    pub fn create(self) -> Result<Child<'p>> {
        let parent = self.tree.current();
        let handle = create_cd(
            Some(parent.into()),
            self.storage_info.as_deref(),
            self.logging,
            None,
        )?;
        self.tree.levels.push(handle);
        Ok(Child {
            tree: self.tree,
            handle,
            ended: false,
        })
    }
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree")
            .field("levels", &self.levels)
            .finish()
    }
}

impl Domain {
    /// A root CD with no name that does not log MPI traffic.
    pub fn new() -> Result<Domain> {
        Builder::default().create()
    }

    /// Options for a root CD: `Domain::builder().name("solver").logging(..).create()`.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The version a persistent root recovered when it was created (restore it with
    /// [`restore`](Self::restore)), or `None` (a fresh start, or not persistent).
    pub fn recovered_version(&self) -> Result<Option<u64>> {
        Ok(recovered_version(self.own())?)
    }

    /// Commits (discards) the root CD and frees every buffer of the tree.
    ///
    /// On error (the CD has children made through the raw API, say) nothing changed, and the
    /// domain comes back in the error.
    pub fn commit(mut self) -> Result<(), CommitError<Domain>> {
        match commit_cd(self.own()) {
            Ok(()) => {
                self.committed = true;
                Ok(())
            }
            Err(e) => Err(CommitError {
                error: e.into(),
                domain: self,
            }),
        }
    }

    fn tree(&self) -> &Tree {
        &self.tree
    }

    fn own(&self) -> CdHandle {
        self.tree.levels[0]
    }

    fn tree_mut(&mut self) -> &mut Tree {
        let cd = self.own();
        self.tree.enter(cd)
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        match commit_on_drop(self.own()) {
            // The CD is gone (committed now, or before through the raw API): nothing names
            // the buffers any more.
            Ok(()) | Err(CdError::StaleHandle { .. }) => {}
            // The CD outlives us (a child created through the raw API keeps it alive), and it
            // still names our buffers: leak them rather than let a later restore write freed
            // memory.
            Err(_) => self.tree.leak(),
        }
    }
}

impl std::fmt::Debug for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Domain")
            .field("handle", &self.own())
            .finish_non_exhaustive()
    }
}

impl<'p> Child<'p> {
    /// Commits the child into its parent and gives the parent back: entries the parent lacks
    /// move up with their saved data, a READ_WRITE entry here promotes the parent's
    /// READ_ONLY one, and the buffers the child protected belong to the parent from now on
    /// (their keys stay valid there).
    ///
    /// On error (a log merge refused, say) nothing changed, and the child comes back in the
    /// error.
    pub fn commit(mut self) -> Result<(), CommitError<Child<'p>>> {
        match commit_cd(self.handle) {
            Ok(()) => {
                self.tree_mut().child_committed();
                self.ended = true;
                Ok(())
            }
            Err(e) => Err(CommitError {
                error: e.into(),
                domain: self,
            }),
        }
    }

    fn tree(&self) -> &Tree {
        self.tree
    }

    fn own(&self) -> CdHandle {
        self.handle
    }

    fn tree_mut(&mut self) -> &mut Tree {
        self.tree.enter(self.handle)
    }
}

impl Drop for Child<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        match commit_on_drop(self.handle) {
            // Committed now, or the CD already ended through the raw API: either way its
            // buffers are the parent's.
            Ok(()) | Err(CdError::StaleHandle { .. }) => self.tree_mut().child_committed(),
            // The CD lives on as a raw child of the parent and keeps naming its buffers.
            Err(_) => self.tree_mut().child_abandoned(),
        }
    }
}

impl std::fmt::Debug for Child<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

/// The operations shared by [`Domain`] and [`Child`]: the current level of the tree.
macro_rules! level_methods {
    () => {
        /// The underlying CD, for the raw API (files, logs, queries).
        ///
        /// Adding memory to it with the raw `unsafe` functions is the caller's promise that
        /// the memory stays allocated while the CD holds it and that nothing accesses it while
        /// a restore of this domain runs; the safe layer cannot see it. The same promise comes
        /// with a parent entry added here ([`cd_core::add_to_cd_via_parent`]) that names
        /// memory an ancestor holds through the raw API: this domain's restore writes it.
        pub fn handle(&self) -> CdHandle {
            self.own()
        }

        /// Describes the CD ([`cd_core::cd_info`]).
        pub fn info(&self) -> Result<CdInfo> {
            Ok(cd_info(self.own())?)
        }

        /// When to advance: the interval of work between advances that minimises expected
        /// time for this CD's level (the CDs at its depth under roots of its root's name),
        /// from the measured advance cost and the observed or given (`CD_MTBF`) mean time
        /// between faults; unknown values are `None` ([`cd_core::cd_advice`]).
        pub fn advice(&self) -> Result<cd_core::Advice> {
            Ok(cd_core::cd_advice(self.own())?)
        }

        /// Moves `data` into the tree and saves it in this CD now, READ_ONLY.
        ///
        /// An empty vector, or one of a zero-sized type, is kept but not added (a CD holds no
        /// empty ranges).
        pub fn protect<T: Pod + Send + Sync>(&mut self, data: Vec<T>) -> Result<Key<T>> {
            let data: Box<[T]> = data.into_boxed_slice();
            let tree = self.tree_mut();
            let held = std::mem::size_of_val(&*data) > 0;
            if held {
                let spec = AddrSpec::of(&*data, Access::ReadOnly);
                // SAFETY: the buffer is the tree's from now on, stays at this address (a
                // boxed slice never moves its elements), and is freed only once no CD of
                // the tree can name it; nothing else can reach it yet.
                unsafe { cd_core::add_to_cd_via_copy(tree.current(), &[spec])? };
            }
            Ok(Key::new(tree.insert(Data::Host(Box::new(data)), held)))
        }

        /// The buffer, for reading.
        pub fn get<T: Pod + Send + Sync>(&self, key: Key<T>) -> Result<&[T]> {
            tree::host(self.tree().slot(key.id)?, key.id)
        }

        /// The buffer, for writing: it becomes READ_WRITE in this CD, so the next advance
        /// saves it (a child borrowing an ancestor's buffer saves it first).
        pub fn get_mut<T: Pod + Send + Sync>(&mut self, key: Key<T>) -> Result<&mut [T]> {
            let len = self.get(key)?.len();
            self.get_mut_range(key, 0..len)
        }

        /// Part of the buffer, for writing: only `range` (in elements) becomes READ_WRITE.
        pub fn get_mut_range<T: Pod + Send + Sync>(
            &mut self,
            key: Key<T>,
            range: Range<usize>,
        ) -> Result<&mut [T]> {
            let tree = self.tree_mut();
            let cd = tree.current();
            let slot = tree.slot_mut(key.id)?;
            tree::promote_host::<T>(slot, key.id, range.clone(), cd)?;
            Ok(&mut tree::host_mut::<T>(slot, key.id)?[range])
        }

        /// Two different buffers, for writing; both become READ_WRITE.
        pub fn get2_mut<A: Pod + Send + Sync, B: Pod + Send + Sync>(
            &mut self,
            a: Key<A>,
            b: Key<B>,
        ) -> Result<(&mut [A], &mut [B])> {
            let tree = self.tree_mut();
            let cd = tree.current();
            let [sa, sb] = tree.two_mut(a.id, b.id)?;
            let la = tree::host::<A>(sa, a.id)?.len();
            let lb = tree::host::<B>(sb, b.id)?.len();
            tree::promote_host::<A>(sa, a.id, 0..la, cd)?;
            tree::promote_host::<B>(sb, b.id, 0..lb, cd)?;
            Ok((tree::host_mut(sa, a.id)?, tree::host_mut(sb, b.id)?))
        }

        /// Takes a buffer this domain owns back out of the tree: it leaves this CD first.
        ///
        /// Refused while another CD holds it ([`Error::HeldElsewhere`]: an ancestor's
        /// buffer, or one this child's advance already committed to the parent) or while this
        /// CD has children made through the raw API.
        pub fn take<T: Pod + Send + Sync>(&mut self, key: Key<T>) -> Result<Vec<T>> {
            let tree = self.tree_mut();
            tree::host::<T>(tree.slot(key.id)?, key.id)?;
            tree.check_no_children()?;
            let slot = tree.remove(key.id, |slot, cd| {
                let data = tree::host::<T>(slot, key.id)?;
                release(cd, AddrSpec::of(data, Access::ReadOnly))
            })?;
            let Data::Host(data) = slot.data else {
                unreachable!("checked to be a host buffer of type T")
            };
            Ok(data
                .downcast::<Box<[T]>>()
                .map_err(|_| Error::ForeignKey {
                    key: key.id.to_string(),
                })?
                .into_vec())
        }

        /// Allocates a device buffer in `device`, fills it with `data`, and saves it in this
        /// CD now, READ_ONLY.
        pub fn protect_device<T: Pod>(
            &mut self,
            device: &Device,
            data: &[T],
        ) -> Result<DeviceKey<T>> {
            let tree = self.tree_mut();
            let buffer = device.protect(tree.current(), data)?;
            let held = std::mem::size_of_val(data) > 0;
            Ok(DeviceKey::new(tree.insert(Data::Device(buffer), held)))
        }

        /// A device buffer's elements, copied to the host.
        pub fn download_device<T: Pod>(&self, key: DeviceKey<T>) -> Result<Vec<T>> {
            tree::device(self.tree().slot(key.id)?, key.id)?.download()
        }

        /// Writes `values` into a device buffer from element `start` on; those elements become
        /// READ_WRITE in this CD.
        pub fn upload_device<T: Pod>(
            &mut self,
            key: DeviceKey<T>,
            start: usize,
            values: &[T],
        ) -> Result<()> {
            let tree = self.tree_mut();
            let cd = tree.current();
            let slot = tree.slot_mut(key.id)?;
            let end = start.checked_add(values.len()).unwrap_or(usize::MAX);
            tree::promote_device(slot, key.id, start..end, cd)?;
            tree::device(slot, key.id)?.upload(start, values)
        }

        /// A device buffer's address for a kernel that writes it: the whole buffer becomes
        /// READ_WRITE in this CD, and the domain stays borrowed while the pointer lives.
        /// Synchronise the device before the next restore or advance.
        pub fn device_mut<T: Pod>(&mut self, key: DeviceKey<T>) -> Result<DevicePtrMut<'_, T>> {
            let tree = self.tree_mut();
            let cd = tree.current();
            let slot = tree.slot_mut(key.id)?;
            let len = tree::device(slot, key.id)?.len();
            tree::promote_device(slot, key.id, 0..len, cd)?;
            Ok(DevicePtrMut::new(tree::device(slot, key.id)?))
        }

        /// Takes a device buffer this domain owns back out of the tree: its elements, copied
        /// to the host; the device memory is freed. Refused as [`take`](Self::take) is.
        pub fn take_device<T: Pod>(&mut self, key: DeviceKey<T>) -> Result<Vec<T>> {
            let values = self.download_device(key)?;
            let tree = self.tree_mut();
            tree.check_no_children()?;
            tree.remove(key.id, |slot, cd| {
                match tree::device(slot, key.id)?.whole() {
                    Some(spec) => release(cd, spec),
                    None => Ok(()),
                }
            })?;
            Ok(values)
        }

        /// Brings every buffer this CD holds back to its point in time (the CD's own, and
        /// ancestors' buffers it saved before writing them); its MPI log is then replayed.
        ///
        /// Refused ([`Error::ForeignChildren`]) while the CD has live children, which can only
        /// be children made through the raw API (or dropped without committing): the restore
        /// would write their memory and discard them. On any error nothing was discarded, and
        /// the restore may be tried again.
        pub fn restore(&mut self) -> Result<RestoreReport> {
            let tree = self.tree_mut();
            tree.check_no_children()?;
            // SAFETY: the tree keeps every buffer it added allocated, and `&mut self` proves
            // that no borrow of them is alive; the CD has no descendants (checked above; a
            // child created through the raw API by another thread since then is that thread's
            // `unsafe` contract, as are ranges added through the raw API).
            Ok(unsafe { restore_cd(tree.current())? })
        }

        /// Moves this CD's point in time to now: saves what was borrowed mutably since the
        /// last advance, and demotes it. A child first commits implicitly into its parent
        /// (the spec's rule), without ending.
        pub fn advance(&mut self) -> Result<AdvanceReport> {
            let tree = self.tree_mut();
            // SAFETY: as in `restore`: buffers the tree keeps allocated, none borrowed.
            let report = unsafe { advance_cd_point_in_time(tree.current())? };
            tree.child_advanced();
            Ok(report)
        }

        /// Moves this CD's point in time to now, as [`advance`](Self::advance) does, but
        /// drains device buffers to the host in the background: the device space snapshots
        /// them in spare device memory, ordered on `stream` after the kernels queued there,
        /// and the new point becomes current once the drain completes
        /// ([`cd_core::advance_cd_point_in_time_async`]). Host buffers are saved at once.
        ///
        /// The [`PendingAdvance`] borrows the domain until it is settled or dropped; its
        /// [`device_mut`](PendingAdvance::device_mut) hands out buffers for the next kernels
        /// meanwhile. Without device buffers to save, or without spare device memory, the
        /// advance runs synchronously ([`PendingAdvance::in_flight`] is `false`). A child's
        /// implicit commit into its parent happens when the drain completes.
        pub fn advance_async(&mut self, stream: Stream) -> Result<PendingAdvance<'_>> {
            let tree = self.tree_mut();
            let cd = tree.current();
            // SAFETY: as in `advance`: buffers the tree keeps allocated, none borrowed. The
            // tree frees a device buffer only after the commit or delete that let go of it,
            // and those wait for the drain first; `stream` is valid by `Stream`'s contract.
            let started = unsafe { advance_cd_point_in_time_async(cd, stream.as_raw())? };
            // The parent holds the child's bytes once the drain completes (or, if it fails,
            // not yet): recording it now only makes `take` more cautious.
            tree.child_advanced();
            Ok(PendingAdvance::new(tree, cd, started))
        }

        /// `count` child CDs of this one over disjoint pieces of `key`'s buffer (of nearly
        /// equal lengths; fewer if the buffer has fewer elements), each usable on its own
        /// thread: see [`Sibling`](crate::Sibling).
        pub fn siblings<T: Pod + Send + Sync>(
            &mut self,
            key: Key<T>,
            count: usize,
        ) -> Result<Vec<crate::Sibling<'_, T>>> {
            crate::siblings::split(self.tree_mut(), key, count)
        }

        /// A child CD of this one, inheriting its logging mode and `storage_info`.
        pub fn child(&mut self) -> Result<Child<'_>> {
            self.child_builder().create()
        }

        /// Options for a child CD: `cd.child_builder().storage_info(..).create()`.
        pub fn child_builder(&mut self) -> ChildBuilder<'_> {
            ChildBuilder {
                tree: self.tree_mut(),
                logging: LoggingMode::Inherit,
                storage_info: None,
            }
        }

        /// The next entry of the MPI log replay that a restore started
        /// ([`cd_core::get_mpi_log_from_cd`], the spec's `get_MPI_log_from_cd`); `None` when
        /// the log is exhausted (which ends the replay) or no replay runs.
        ///
        /// The entry's [`bytes`](LogEntry::bytes) are a shared, read-only slice of the log
        /// with its length; they stay valid as long as the entry, even after the log is
        /// discarded. The interposition layer replays the log by itself: call this only for a
        /// log filled with [`cd_core::add_mpi_log_to_cd`].
        pub fn mpi_log_next(&mut self) -> Result<Option<LogEntry>> {
            Ok(get_mpi_log_from_cd(self.own())?)
        }
    };
}

impl Domain {
    level_methods!();
}

impl Child<'_> {
    level_methods!();
}

/// `commit_cd` for a drop. A failed asynchronous drain ([`Domain::advance_async`]) is
/// returned by the first operation after it, which drops it and leaves the CD at its previous
/// point; a drop cannot return it, so the commit is tried once more rather than leaving the
/// CD alive.
fn commit_on_drop(cd: CdHandle) -> cd_core::Result<()> {
    match commit_cd(cd) {
        Err(CdError::DeviceCopy { .. }) => commit_cd(cd),
        done => done,
    }
}

/// Removes from `cd` the bytes of `whole` it holds (all of them, or the parts a child copied
/// before writing them).
fn release(cd: CdHandle, whole: AddrSpec) -> Result<()> {
    let end = whole.address + whole.length;
    let held: Vec<AddrSpec> = cd_entries(cd)?
        .into_iter()
        .filter(|e| e.address < end && whole.address < e.address + e.length)
        .map(|e| {
            let start = e.address.max(whole.address);
            let stop = (e.address + e.length).min(end);
            AddrSpec::new(start, stop - start, Access::ReadOnly, whole.scope)
        })
        .collect();
    if !held.is_empty() {
        delete_from_cd(cd, &held)?;
    }
    Ok(())
}
