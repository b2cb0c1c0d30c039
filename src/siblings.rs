//! Concurrent sibling CDs: one child per disjoint piece of a buffer, each usable on its own
//! thread.
//!
//! A [`Child`](crate::Child) borrows the whole tree, so only one can live at a time. The
//! common parallel pattern — split the data, one child CD per thread, each restoring its own
//! piece when it fails — needs children that own disjoint memory instead. A [`Sibling`]
//! borrows one piece of one buffer (`chunks_mut`), and the parent mutably for as long as any
//! sibling lives, so the borrow checker proves what the raw API leaves to the programmer: a
//! sibling's restore writes only its own piece, which no other thread can touch, and the
//! parent can be neither used nor restored meanwhile.

use crate::error::{CommitError, Result};
use crate::tree::{self, Key, Tree};
use bytemuck::Pod;
use cd_core::{
    add_to_cd_via_copy, advance_cd_point_in_time, cd_entries, cd_info, commit_cd, create_cd,
    restore_cd, Access, AddrSpec, AdvanceReport, CdHandle, CdInfo, LoggingMode, RestoreReport,
};

/// A child CD over one piece of a parent's buffer, made by
/// [`Domain::siblings`](crate::Domain::siblings): several can live at once, each on its own
/// thread.
///
/// It borrows its piece exclusively and the parent mutably, so a sibling's restore writes only
/// memory that no other thread can touch, and the parent can be neither used nor restored while
/// any sibling lives.
///
/// ```
/// use containment::Domain;
///
/// let mut root = Domain::new()?;
/// let field = root.protect(vec![0u64; 1000])?;
/// let siblings = root.siblings(field, 4)?; // four children, 250 elements each
/// std::thread::scope(|s| -> containment::Result<()> {
///     let threads: Vec<_> = siblings
///         .into_iter()
///         .enumerate()
///         .map(|(i, mut sibling)| {
///             s.spawn(move || -> containment::Result<()> {
///                 sibling.get_mut()?.fill(i as u64 + 1);
///                 if i == 2 {
///                     sibling.restore()?; // a fault in this thread's piece only
///                     sibling.get_mut()?.fill(i as u64 + 1);
///                 }
///                 sibling.commit()?; // into the root, concurrently with the others
///                 Ok(())
///             })
///         })
///         .collect();
///     for thread in threads {
///         thread.join().expect("the thread ran to its end")?;
///     }
///     Ok(())
/// })?;
/// assert_eq!(root.get(field)?[600], 3);
/// assert_eq!(root.advance()?.bytes_copied, 8000);
/// # Ok::<(), containment::Error>(())
/// ```
///
/// The parent waits until every sibling ended:
///
/// ```compile_fail,E0499
/// let mut root = containment::Domain::new().unwrap();
/// let field = root.protect(vec![0u8; 10]).unwrap();
/// let siblings = root.siblings(field, 2).unwrap();
/// root.restore().unwrap(); // the siblings borrow `root`
/// drop(siblings);
/// ```
///
/// A sibling that lived beside others drops its MPI log on commit (the spec's sibling rule: the
/// records of concurrent siblings have no replayable order).
pub struct Sibling<'p, T> {
    piece: &'p mut [T],
    handle: CdHandle,
    ended: bool,
}

/// Creates one child of the current CD of `tree` per piece of `key`'s buffer.
pub(crate) fn split<T: Pod + Send + Sync>(
    tree: &mut Tree,
    key: Key<T>,
    count: usize,
) -> Result<Vec<Sibling<'_, T>>> {
    let parent = tree.current();
    let slot = tree.slot_mut(key.id)?;
    // The siblings' commits merge their entries into the current CD.
    Tree::mark_held(slot, parent);
    let data = tree::host_mut::<T>(slot, key.id)?;
    if count == 0 || data.is_empty() {
        return Ok(Vec::new());
    }
    let mut siblings = Vec::with_capacity(count);
    for piece in data.chunks_mut(data.len().div_ceil(count)) {
        // On error the siblings made so far are dropped, which commits them.
        let handle = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)?;
        let sibling = Sibling {
            piece,
            handle,
            ended: false,
        };
        sibling.add(Access::ReadOnly)?;
        siblings.push(sibling);
    }
    Ok(siblings)
}

impl<'p, T: Pod + Send + Sync> Sibling<'p, T> {
    /// Adds the piece to the CD (saving it now where the CD lacks it) or relabels it.
    fn add(&self, access: Access) -> Result<()> {
        if std::mem::size_of_val(self.piece) > 0 {
            let spec = AddrSpec::of(&*self.piece, access);
            // SAFETY: the piece is part of a buffer of the tree, which keeps it allocated (at
            // this address) for as long as any CD of the tree can name it; this sibling
            // borrows it exclusively.
            unsafe { add_to_cd_via_copy(self.handle, &[spec])? };
        }
        Ok(())
    }

    /// The underlying CD, for the raw API.
    pub fn handle(&self) -> CdHandle {
        self.handle
    }

    /// Describes the CD ([`cd_core::cd_info`]).
    pub fn info(&self) -> Result<CdInfo> {
        Ok(cd_info(self.handle)?)
    }

    /// The piece, for reading.
    pub fn get(&self) -> &[T] {
        self.piece
    }

    /// The piece, for writing: it becomes READ_WRITE, so the next advance saves it.
    pub fn get_mut(&mut self) -> Result<&mut [T]> {
        self.add(Access::ReadWrite)?;
        Ok(self.piece)
    }

    /// Brings the piece back to this CD's point in time.
    ///
    /// Refused, as [`Domain::restore`](crate::Domain::restore) is, while the CD has children,
    /// and while it holds bytes outside the piece
    /// ([`Error::OutsidePiece`](crate::Error::OutsidePiece): ranges added to
    /// [`handle`](Self::handle) through the raw API, a parent entry say, would be written
    /// under another sibling).
    pub fn restore(&mut self) -> Result<RestoreReport> {
        let children = cd_info(self.handle)?.children;
        if children > 0 {
            return Err(crate::Error::ForeignChildren {
                cd: self.handle,
                children,
            });
        }
        // Compared with the entries' addresses only: the address, no provenance.
        let start = self.piece.as_ptr().addr();
        let end = start + std::mem::size_of_val(self.piece);
        if let Some(e) = cd_entries(self.handle)?
            .into_iter()
            .find(|e| e.address < start || e.address + e.length > end)
        {
            return Err(crate::Error::OutsidePiece {
                cd: self.handle,
                address: if e.address < start { e.address } else { end },
                length: e.length,
            });
        }
        // SAFETY: the CD holds only bytes of the piece (checked; a range added through the
        // raw API by another thread since then is that thread's contract), which `&mut self`
        // borrows exclusively, and it has no descendants (checked).
        Ok(unsafe { restore_cd(self.handle)? })
    }

    /// Moves the CD's point in time to now, committing it implicitly into the parent first.
    pub fn advance(&mut self) -> Result<AdvanceReport> {
        // SAFETY: as in `restore`: the piece is borrowed exclusively.
        Ok(unsafe { advance_cd_point_in_time(self.handle)? })
    }

    /// Commits the sibling into the parent (the parent's entry for the piece becomes
    /// READ_WRITE if the sibling wrote it). On error the sibling comes back.
    pub fn commit(mut self) -> Result<(), CommitError<Sibling<'p, T>>> {
        match commit_cd(self.handle) {
            Ok(()) => {
                self.ended = true;
                Ok(())
            }
            Err(e) => Err(CommitError {
                error: e.into(),
                domain: self,
            }),
        }
    }
}

impl<T> Drop for Sibling<'_, T> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // If the commit fails, the CD lives on as a raw child of the parent, naming the
        // piece: the tree keeps the buffer allocated (the root cannot commit while the CD
        // lives), and the parent's restore is refused until the CD is ended through the raw
        // API.
        let _ = commit_cd(self.handle);
    }
}

impl<T> std::fmt::Debug for Sibling<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sibling")
            .field("handle", &self.handle)
            .field("len", &self.piece.len())
            .finish()
    }
}
