//! The error type of the safe layer.
//!
//! The raw layer's [`CdError`] covers every misuse of the spec's functions; the safe layer adds
//! the misuses of its own vocabulary (a key used with the wrong domain tree, a buffer taken
//! back, a restore refused because of children it does not own), so that no call panics on
//! bad input.

use cd_core::{CdError, CdHandle};

/// Everything that can go wrong in a safe-layer call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The runtime refused the operation (see [`CdError`]).
    #[error(transparent)]
    Cd(#[from] CdError),
    /// A key was used with a domain of another tree than the one that made it.
    #[error("{key} belongs to another domain tree")]
    ForeignKey {
        /// The key, as `Key(tree, index)`.
        key: String,
    },
    /// A key's buffer was taken back out of its domain.
    #[error("{key} was taken back from its domain")]
    Taken {
        /// The key.
        key: String,
    },
    /// A key's buffer belongs to a child domain that was dropped but could not commit: its CD
    /// still holds the buffer, so it stays allocated, but no live domain of the tree owns it.
    #[error("{key} belongs to child CD {cd}, which was dropped without committing; the buffer stays allocated until the root domain ends")]
    Abandoned {
        /// The key.
        key: String,
        /// The child CD that still holds the buffer.
        cd: CdHandle,
    },
    /// An element range lies outside a buffer.
    #[error("elements {start}..{end} are out of bounds of {key}, which has {len}")]
    OutOfBounds {
        /// The key.
        key: String,
        /// First element asked for.
        start: usize,
        /// One past the last element asked for.
        end: usize,
        /// The buffer's length in elements.
        len: usize,
    },
    /// Two mutable borrows of one buffer were asked for at once.
    #[error("{key} was asked for twice in one call; a buffer can be borrowed mutably once")]
    SameBuffer {
        /// The key.
        key: String,
    },
    /// A buffer cannot be taken back at this level: a CD other than the current one holds it
    /// (an ancestor's buffer, or a child's buffer that an advance of the child already
    /// committed to its parent), and that CD would be left naming freed memory.
    #[error("{key} cannot be taken here: CD {held_by} holds it as well; take it from the domain that owns it, once no other CD holds it")]
    HeldElsewhere {
        /// The key.
        key: String,
        /// A CD that holds the buffer besides the current one.
        held_by: CdHandle,
    },
    /// A restore was refused because the CD has live children that no safe domain owns
    /// (created through the raw API, or a child domain dropped without committing): restoring
    /// would also restore and discard them, writing memory that another thread may be using.
    #[error("restore of CD {cd} refused: it has {children} live child CD(s) that no safe domain owns (created through the raw API, or dropped without committing); commit or restore them through the raw API first")]
    ForeignChildren {
        /// The CD that was to be restored.
        cd: CdHandle,
        /// How many live children it has.
        children: usize,
    },
    /// A sibling's restore was refused because its CD holds bytes outside its piece (added
    /// through the raw API): the restore would write memory that another sibling's thread may
    /// be using.
    #[error("restore of sibling CD {cd} refused: it holds bytes {address:#x}+{length} outside its piece (added through the raw API), which another sibling may be using")]
    OutsidePiece {
        /// The sibling's CD.
        cd: CdHandle,
        /// The first byte outside the piece.
        address: usize,
        /// The length of the entry that holds it.
        length: usize,
    },
    /// A device allocation, copy or free failed.
    #[error("device memory ({device}): {message}")]
    Device {
        /// The memory space's name.
        device: String,
        /// What failed.
        message: String,
    },
}

/// The result type of the safe layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed commit: the error, and the domain itself, unchanged and still usable (a retry, a
/// restore, or a drop that tries to commit once more).
///
/// `?` converts it into an [`Error`], dropping the domain.
pub struct CommitError<D> {
    /// Why the commit failed.
    pub error: Error,
    /// The domain that was to be committed.
    pub domain: D,
}

impl<D> std::fmt::Debug for CommitError<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<D> std::fmt::Display for CommitError<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "commit failed: {}", self.error)
    }
}

impl<D> std::error::Error for CommitError<D> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl<D> From<CommitError<D>> for Error {
    fn from(e: CommitError<D>) -> Error {
        e.error
    }
}
