//! The one error type of the runtime.
//!
//! Every misuse the spec names, and every failure of the machinery (allocation, device copies,
//! `lseek`, regen functions), has its own variant with a message that says what to fix. The C
//! layer maps each variant to a stable number with [`CdError::code`].

use crate::ids::CdHandle;

/// Why a handle no longer names a live CD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The CD was committed with `commit_cd`.
    Committed,
    /// The CD was a descendant of a CD that was restored, and was discarded.
    DiscardedByRestore,
    /// The CD was committed or discarded, and its slot has been reused since (which of the two
    /// is no longer recorded).
    Gone,
}

impl std::fmt::Display for Fate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fate::Committed => "it was committed",
            Fate::DiscardedByRestore => "it was discarded when an ancestor was restored",
            Fate::Gone => "it was committed or discarded",
        })
    }
}

/// Everything that can go wrong in a CD operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CdError {
    /// The handle was never handed out by this runtime.
    #[error("invalid CD handle {0}: it was never returned by create_cd")]
    InvalidHandle(CdHandle),
    /// The handle named a CD that no longer exists.
    #[error("CD handle {handle} is no longer valid: {fate}")]
    StaleHandle {
        /// The handle used.
        handle: CdHandle,
        /// What happened to the CD.
        fate: Fate,
    },
    /// `CURRENT_CD` was used on a thread that has no active CD.
    #[error("CURRENT_CD was used but this thread has no active CD")]
    NoActiveCd,
    /// A CD API function was called from inside a regen or device-copy callback.
    #[error(
        "the CD API was called from inside a regen or device-copy callback, which is not allowed"
    )]
    Reentrant,

    /// A root CD was created with `COMM_LOGGING_INHERIT`.
    #[error("a root CD must choose COMM_LOGGING_ENABLED or COMM_LOGGING_DISABLED; INHERIT needs a parent")]
    RootInheritsLogging,
    /// A child's logging mode contradicts its parent's.
    #[error("logging mode mismatch: the parent logs communication {parent}, the child asked for {child}; use COMM_LOGGING_INHERIT")]
    LoggingMismatch {
        /// The parent's mode.
        parent: &'static str,
        /// The mode the child asked for.
        child: &'static str,
    },
    /// A name was given for a child CD.
    #[error("only root CDs take a name; pass no name (NULL) for child CDs")]
    ChildNamed,
    /// A root CD name is already used by a live root CD of this process.
    #[error("a live root CD is already named {0:?}; root names must be unique")]
    DuplicateName(String),
    /// A root CD name is empty or contains a NUL byte.
    #[error("invalid root CD name {0:?}: it must be non-empty and contain no NUL byte")]
    BadName(String),
    /// `storage_info` could not be parsed or names an unknown key.
    #[error("storage_info: {0}")]
    StorageInfo(String),

    /// An address range has zero length.
    #[error("address range at {address:#x} has zero length")]
    ZeroLength {
        /// The start of the range.
        address: usize,
    },
    /// An address range starts at address 0.
    #[error("address range of {length} bytes starts at the null address")]
    NullAddress {
        /// The length of the range.
        length: usize,
    },
    /// `address + length` overflows the address space.
    #[error("address range {address:#x} + {length} overflows the address space")]
    AddressOverflow {
        /// The start of the range.
        address: usize,
        /// The length of the range.
        length: usize,
    },
    /// Two ranges of one address list overlap each other.
    #[error("address list entries {first} and {second} overlap each other")]
    OverlappingList {
        /// Index of the first entry.
        first: usize,
        /// Index of the second entry.
        second: usize,
    },
    /// A range was added via regen with the READ_WRITE label.
    #[error("address range at {address:#x} is READ_WRITE with restoration type REGEN, which the spec forbids (advance never updates regen entries)")]
    ReadWriteRegen {
        /// The start of the range.
        address: usize,
    },
    /// A READ_WRITE re-add would promote a regen entry.
    #[error("address range at {address:#x} overlaps a REGEN entry and asks for READ_WRITE, which would make it a READ_WRITE regen entry")]
    PromoteRegen {
        /// The start of the overlapping part.
        address: usize,
    },
    /// A re-add asked for a different scope than the existing entry.
    #[error("address range at {address:#x} is already in the CD with scope {existing}; to change the scope, delete it and add it again")]
    ScopeChange {
        /// The start of the overlapping part.
        address: usize,
        /// The scope already recorded.
        existing: &'static str,
    },
    /// `add_to_cd_via_parent` on a range that no ancestor holds.
    #[error("add_to_cd_via_parent: bytes {address:#x}..{end:#x} are not in any ancestor CD")]
    NotInAncestor {
        /// Start of the missing part.
        address: usize,
        /// End of the missing part.
        end: usize,
    },
    /// `add_to_cd_via_parent` on a range that the nearest ancestor regenerates.
    #[error("add_to_cd_via_parent: bytes {address:#x}..{end:#x} are restored by a regen function in an ancestor; descendants may not refer to regen entries")]
    RegenAncestor {
        /// Start of the offending part.
        address: usize,
        /// End of the offending part.
        end: usize,
    },
    /// `add_to_cd_via_parent` on a root CD.
    #[error("add_to_cd_via_parent needs a parent CD, and this CD is a root")]
    NoParent,
    /// `delete_from_cd` on a range the CD does not hold.
    #[error("delete_from_cd: bytes {address:#x}..{end:#x} are not in this CD")]
    RangeNotFound {
        /// Start of the missing part.
        address: usize,
        /// End of the missing part.
        end: usize,
    },
    /// A range straddles host memory and a registered device region (or two regions).
    #[error("address range {address:#x} + {length} straddles the boundary of a registered device memory region")]
    StraddlesMemorySpace {
        /// The start of the range.
        address: usize,
        /// The length of the range.
        length: usize,
    },
    /// A device region overlaps one that is already registered.
    #[error("device memory region {address:#x} + {length} overlaps a region already registered")]
    RegionOverlap {
        /// The start of the region.
        address: usize,
        /// The length of the region.
        length: usize,
    },
    /// A memory space id that was never registered.
    #[error("memory space {0} was never registered")]
    UnknownMemorySpace(u32),
    /// A device region to unregister was not registered.
    #[error("no device memory region starts at {0:#x}")]
    RegionNotFound(usize),
    /// A device region to unmap still holds ranges of a live CD.
    #[error("device memory region at {address:#x} still holds ranges of CD {cd}; delete them from the CD (or commit it) before unmapping")]
    RegionInUse {
        /// The start of the region.
        address: usize,
        /// A live CD holding a range in it.
        cd: CdHandle,
    },
    /// `remap_device_region` cannot move the ranges as asked.
    #[error("cannot remap device memory from {from:#x} to {to:#x}: {reason}")]
    RemapRefused {
        /// The old start.
        from: usize,
        /// The new start.
        to: usize,
        /// Why.
        reason: String,
    },

    /// The file descriptor does not support `lseek` or is closed.
    #[error("file descriptor {fd}: lseek failed: {message}")]
    FileNotSeekable {
        /// The descriptor.
        fd: i32,
        /// The system's message.
        message: String,
    },
    /// `delete_file_from_cd` on a descriptor the CD does not hold.
    #[error("file descriptor {0} is not in this CD")]
    FileNotFound(i32),

    /// The CD still has live children.
    #[error("{operation} needs a CD without children, and this CD has {children} uncommitted child CD(s); commit them first")]
    HasChildren {
        /// The operation refused.
        operation: &'static str,
        /// How many live children.
        children: usize,
    },
    /// Two threads ran exclusive operations on one CD at the same time.
    #[error("{operation} was called while another thread runs {running} on the same CD; commit, restore and advance are not thread safe on one handle")]
    ConcurrentOperation {
        /// The operation refused.
        operation: &'static str,
        /// The operation in progress.
        running: &'static str,
    },

    /// A buffer for the CD store could not be allocated.
    #[error("out of memory: could not allocate {bytes} bytes for the CD store")]
    OutOfMemory {
        /// The size asked for.
        bytes: usize,
    },
    /// A store buffer would take the bytes the runtime holds past `CD_MEMORY_LIMIT`.
    #[error("CD_MEMORY_LIMIT is {limit} bytes: the CD store asked for {asked} more bytes while the runtime holds {held} (stores, pool and MPI logs); nothing was changed. Raise CD_MEMORY_LIMIT, or save less at once (fewer or smaller READ_WRITE ranges, commit or advance CDs sooner)")]
    MemoryLimit {
        /// The limit, in bytes.
        limit: u64,
        /// The bytes the buffer needed.
        asked: u64,
        /// The bytes held when it was asked for.
        held: u64,
    },
    /// A registered device copy function failed.
    #[error("device memory space {space:?}: {message}")]
    DeviceCopy {
        /// The memory space's name.
        space: String,
        /// Its message.
        message: String,
    },
    /// A regen function returned a nonzero status during a restore, which stopped there.
    #[error(
        "regen function returned {status} for {ranges} range(s); the restore stopped, these \
         ranges are not restored (the others are): {}",
        RangeList(not_restored)
    )]
    RegenFailed {
        /// What it returned.
        status: i32,
        /// How many ranges it was given.
        ranges: usize,
        /// Exactly the ranges `(start, end)` the restore did not restore, sorted and disjoint:
        /// the failing call's, the later regen calls' of its CD, and every range of the CDs
        /// that restore after it. Every other range of the restore holds its restored bytes.
        not_restored: Vec<(usize, usize)>,
    },
    /// A PARENT entry found no data in any ancestor at restore time.
    #[error("restore: bytes {address:#x}..{end:#x} were added via parent but no ancestor holds them any more")]
    ParentDataMissing {
        /// Start of the missing part.
        address: usize,
        /// End of the missing part.
        end: usize,
    },
    /// A copy failed because the fault-injection hook said so (tests only).
    #[error("injected fault: {0}")]
    InjectedFault(&'static str),

    /// A log operation on a CD that does not log communication.
    #[error("this CD was created with COMM_LOGGING_DISABLED, so it keeps no MPI log")]
    LoggingDisabled,
    /// An append to an MPI log that is being replayed (or on a thread a replay feeds), or a
    /// commit that would merge a child's records into one.
    #[error(
        "the MPI log is being replayed: it must be consumed (get_MPI_log_from_cd, log_next) before records are added to it"
    )]
    LogReplaying,
    /// A log entry with no bytes.
    #[error("an MPI log entry must hold at least one byte")]
    EmptyLogEntry,
    /// The MPI layer's restore hook refused the restore.
    #[error("restore_cd refused by the MPI layer: {0}")]
    RestoreRefused(String),
    /// The MPI log a restore would replay holds a call that cannot be replayed.
    #[error("cannot restore: the MPI log holds {call}, which cannot be replayed in isolation (one-sided, file I/O and spawn calls involve other processes); advance the CD after such calls")]
    Unreplayable {
        /// The MPI function logged.
        call: &'static str,
    },
    /// Persisting a CD, or finding, rebuilding or loading a persisted version, failed.
    #[error("persistence: {0}")]
    Persist(String),
    /// The ranges added to a restarted persistent CD do not match the persisted ones.
    #[error("the restarted CD does not match its persisted version: {0}; add the same ranges (kind and length) in the same order as the run that persisted it")]
    PersistMismatch(String),
    /// A persist was refused because the MPI layer's message counts show application traffic
    /// in flight (a message sent and not yet received, or a receive or nonblocking collective
    /// posted and not completed): the version would not be a consistent cut. Nothing was
    /// written; the previous version stays the newest.
    #[error("persist refused: {0}")]
    PersistInFlight(String),
}

impl CdError {
    /// A stable number for this kind of error, used by the C API (`cd_error_string`).
    ///
    /// Numbers are never reused; a new variant takes the next free one.
    pub fn code(&self) -> u32 {
        match self {
            CdError::InvalidHandle(_) => 1,
            CdError::StaleHandle { .. } => 2,
            CdError::NoActiveCd => 3,
            CdError::Reentrant => 4,
            CdError::RootInheritsLogging => 10,
            CdError::LoggingMismatch { .. } => 11,
            CdError::ChildNamed => 12,
            CdError::DuplicateName(_) => 13,
            CdError::BadName(_) => 14,
            CdError::StorageInfo(_) => 15,
            CdError::ZeroLength { .. } => 20,
            CdError::NullAddress { .. } => 21,
            CdError::AddressOverflow { .. } => 22,
            CdError::OverlappingList { .. } => 23,
            CdError::ReadWriteRegen { .. } => 24,
            CdError::PromoteRegen { .. } => 25,
            CdError::ScopeChange { .. } => 26,
            CdError::NotInAncestor { .. } => 27,
            CdError::RegenAncestor { .. } => 28,
            CdError::NoParent => 29,
            CdError::RangeNotFound { .. } => 30,
            CdError::StraddlesMemorySpace { .. } => 31,
            CdError::RegionOverlap { .. } => 32,
            CdError::UnknownMemorySpace(_) => 33,
            CdError::RegionNotFound(_) => 34,
            CdError::RegionInUse { .. } => 35,
            CdError::RemapRefused { .. } => 36,
            CdError::FileNotSeekable { .. } => 40,
            CdError::FileNotFound(_) => 41,
            CdError::HasChildren { .. } => 50,
            CdError::ConcurrentOperation { .. } => 51,
            CdError::OutOfMemory { .. } => 60,
            CdError::DeviceCopy { .. } => 61,
            CdError::RegenFailed { .. } => 62,
            CdError::ParentDataMissing { .. } => 63,
            CdError::InjectedFault(_) => 64,
            CdError::MemoryLimit { .. } => 65,
            CdError::LoggingDisabled => 70,
            CdError::LogReplaying => 71,
            CdError::EmptyLogEntry => 72,
            CdError::RestoreRefused(_) => 73,
            CdError::Unreplayable { .. } => 74,
            CdError::Persist(_) => 75,
            CdError::PersistMismatch(_) => 76,
            CdError::PersistInFlight(_) => 78,
        }
    }
}

/// The result type of every CD operation.
pub type Result<T, E = CdError> = std::result::Result<T, E>;

/// Shows ranges as `0xSTART..0xEND, ...` in a message.
struct RangeList<'a>(&'a [(usize, usize)]);

impl std::fmt::Display for RangeList<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (s, e)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s:#x}..{e:#x}")?;
        }
        Ok(())
    }
}
