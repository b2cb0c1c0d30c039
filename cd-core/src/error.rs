//! The one error type of the runtime.
//!
//! Every misuse the spec names, and every failure of the machinery (allocation, device copies,
//! `lseek`, regen functions), has its own variant with a message that says what to fix. The C
//! layer maps each variant to a stable number with [`CdError::code`].

use crate::ids::CdHandle;
use std::ffi::CStr;

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
    /// The MPI log a restore would replay holds a call that cannot be replayed (`call` names
    /// it, with the reason when it is not the call's nature: a handle freed past
    /// `CD_MPI_HELD_MAX`).
    #[error("cannot restore: the MPI log holds {call}, which cannot be replayed in isolation (one-sided, file I/O and spawn calls involve other processes, and a handle freed early is gone); advance the CD after such calls")]
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

/// One C error code of the runtime: its number, the name of its C constant and a one-line
/// description (both NUL-terminated, so the C layer hands them out without copying).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    /// The number `CdError::code` gives (1..99; never reused).
    pub code: u32,
    /// The C constant's name, `CD_ERR_...`.
    pub name: &'static CStr,
    /// What went wrong, in one line (the detailed message is the error's `Display`).
    pub description: &'static CStr,
}

impl ErrorCode {
    /// The C constant's name as a `&str`.
    pub fn name_str(&self) -> &'static str {
        // The names are ASCII identifiers written by `error_codes!` below.
        self.name.to_str().unwrap_or("CD_ERR_UNKNOWN")
    }
}

/// The text of a panic payload (a `&str` or `String` message), for the layers that catch
/// panics at a boundary (the C API, the MPI wrappers) and report them.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// The C string of `with_nul` (a literal ending in its one NUL byte), checked at compile
/// time where it is used in a constant: the tables of C names and descriptions ([`ErrorCode`],
/// and cd-ffi's own codes) are built with it.
pub const fn c_str(with_nul: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(with_nul.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("a C string literal must end in its only NUL byte"),
    }
}

/// The one table of error codes: each line is the C constant, its number, the variant(s) it
/// stands for and its description. It writes both [`CdError::code`] (an exhaustive match, so a
/// new variant without a line does not compile) and [`CdError::CODES`], from which cd-ffi
/// answers `cd_error_name` / `cd_error_string` and its header test writes the `#define`s of
/// `cd.h` and the `parameter`s of the Fortran module.
macro_rules! error_codes {
    ($( $name:ident = $code:literal : $pattern:pat, $description:literal; )*) => {
        impl CdError {
            /// A stable number for this kind of error, used by the C API (`cd_error_string`).
            ///
            /// Numbers are never reused; a new variant takes the next free one of its group.
            pub fn code(&self) -> u32 {
                match self {
                    $( $pattern => $code, )*
                }
            }

            /// Every code of [`CdError::code`] with its C name and description, in number
            /// order. This table is the one source of the numbers, names and descriptions.
            pub const CODES: &'static [ErrorCode] = &[
                $( ErrorCode {
                    code: $code,
                    name: c_str(concat!(stringify!($name), "\0")),
                    description: c_str(concat!($description, "\0")),
                }, )*
            ];
        }
    };
}

// Numbers are grouped by kind (handles 1.., names and modes 10.., ranges 20.., files 40..,
// concurrency 50.., machinery 60.., logs and persistence 70..). A retired code stays here as
// a "reserved" comment. Last added: CD_ERR_MEMORY_LIMIT and CD_ERR_PERSIST_IN_FLIGHT.
error_codes! {
    CD_ERR_INVALID_HANDLE = 1: CdError::InvalidHandle(..),
        "invalid CD handle: it was never returned by create_cd";
    CD_ERR_STALE_HANDLE = 2: CdError::StaleHandle { .. },
        "the CD handle is no longer valid: the CD was committed or discarded by a restore";
    CD_ERR_NO_ACTIVE_CD = 3: CdError::NoActiveCd,
        "CURRENT_CD was used but this thread has no active CD";
    CD_ERR_REENTRANT = 4: CdError::Reentrant,
        "the CD API was called from inside a regen or device-copy callback";
    CD_ERR_ROOT_INHERITS_LOGGING = 10: CdError::RootInheritsLogging,
        "a root CD must choose COMM_LOGGING_ENABLED or COMM_LOGGING_DISABLED";
    CD_ERR_LOGGING_MISMATCH = 11: CdError::LoggingMismatch { .. },
        "the child's logging mode contradicts its parent's; use COMM_LOGGING_INHERIT";
    CD_ERR_CHILD_NAMED = 12: CdError::ChildNamed,
        "only root CDs take a name; pass NULL for child CDs";
    CD_ERR_DUPLICATE_NAME = 13: CdError::DuplicateName(..),
        "a live root CD already has this name";
    CD_ERR_BAD_NAME = 14: CdError::BadName(..),
        "a root CD name must be non-empty and hold no NUL byte";
    CD_ERR_STORAGE_INFO = 15: CdError::StorageInfo(..),
        "storage_info is malformed or names an unknown key";
    CD_ERR_ZERO_LENGTH = 20: CdError::ZeroLength { .. },
        "an address range has zero length";
    CD_ERR_NULL_ADDRESS = 21: CdError::NullAddress { .. },
        "an address range starts at the null address";
    CD_ERR_ADDRESS_OVERFLOW = 22: CdError::AddressOverflow { .. },
        "address + length overflows the address space";
    CD_ERR_OVERLAPPING_LIST = 23: CdError::OverlappingList { .. },
        "two ranges of the address list overlap each other";
    CD_ERR_READ_WRITE_REGEN = 24: CdError::ReadWriteRegen { .. },
        "READ_WRITE ranges cannot be added via regen";
    CD_ERR_PROMOTE_REGEN = 25: CdError::PromoteRegen { .. },
        "a READ_WRITE re-add would promote a regen entry";
    CD_ERR_SCOPE_CHANGE = 26: CdError::ScopeChange { .. },
        "the range is already in the CD with another scope; delete it and add it again";
    CD_ERR_NOT_IN_ANCESTOR = 27: CdError::NotInAncestor { .. },
        "add_to_cd_via_parent: the range is not in any ancestor CD";
    CD_ERR_REGEN_ANCESTOR = 28: CdError::RegenAncestor { .. },
        "add_to_cd_via_parent: an ancestor restores the range with a regen function";
    CD_ERR_NO_PARENT = 29: CdError::NoParent,
        "add_to_cd_via_parent needs a parent CD, and this CD is a root";
    CD_ERR_RANGE_NOT_FOUND = 30: CdError::RangeNotFound { .. },
        "the range is not (entirely) in this CD";
    CD_ERR_STRADDLES_MEMORY_SPACE = 31: CdError::StraddlesMemorySpace { .. },
        "the range straddles the boundary of a device memory region";
    CD_ERR_REGION_OVERLAP = 32: CdError::RegionOverlap { .. },
        "the device region overlaps one already mapped";
    CD_ERR_UNKNOWN_MEMORY_SPACE = 33: CdError::UnknownMemorySpace(..),
        "the memory space was never registered";
    CD_ERR_REGION_NOT_FOUND = 34: CdError::RegionNotFound(..),
        "no device region starts at this address";
    CD_ERR_REGION_IN_USE = 35: CdError::RegionInUse { .. },
        "a live CD still holds ranges in this device region; delete them or commit the CD first";
    CD_ERR_REMAP_REFUSED = 36: CdError::RemapRefused { .. },
        "the device ranges cannot be moved to the new address as asked";
    CD_ERR_FILE_NOT_SEEKABLE = 40: CdError::FileNotSeekable { .. },
        "the file descriptor is closed or does not support lseek";
    CD_ERR_FILE_NOT_FOUND = 41: CdError::FileNotFound(..),
        "the file descriptor is not in this CD";
    CD_ERR_HAS_CHILDREN = 50: CdError::HasChildren { .. },
        "the CD has uncommitted children; commit them first";
    CD_ERR_CONCURRENT_OPERATION = 51: CdError::ConcurrentOperation { .. },
        "another thread runs commit, restore or advance on the same CD";
    CD_ERR_OUT_OF_MEMORY = 60: CdError::OutOfMemory { .. },
        "out of memory for the CD store";
    CD_ERR_DEVICE_COPY = 61: CdError::DeviceCopy { .. },
        "a device copy function failed";
    CD_ERR_REGEN_FAILED = 62: CdError::RegenFailed { .. },
        "a regen function returned nonzero";
    CD_ERR_PARENT_DATA_MISSING = 63: CdError::ParentDataMissing { .. },
        "a range added via parent is no longer held by any ancestor";
    CD_ERR_INJECTED_FAULT = 64: CdError::InjectedFault(..),
        "a fault injected by the test hook";
    CD_ERR_MEMORY_LIMIT = 65: CdError::MemoryLimit { .. },
        "the CD store would pass CD_MEMORY_LIMIT; nothing was changed";
    CD_ERR_LOGGING_DISABLED = 70: CdError::LoggingDisabled,
        "the CD was created with COMM_LOGGING_DISABLED and keeps no MPI log";
    CD_ERR_LOG_REPLAYING = 71: CdError::LogReplaying,
        "the MPI log is being replayed: consume it with get_MPI_log_from_cd before adding to it";
    CD_ERR_EMPTY_LOG_ENTRY = 72: CdError::EmptyLogEntry,
        "an MPI log entry must hold at least one byte";
    CD_ERR_RESTORE_REFUSED = 73: CdError::RestoreRefused(..),
        "restore_cd was refused by the MPI layer";
    CD_ERR_UNREPLAYABLE = 74: CdError::Unreplayable { .. },
        "cannot restore: the MPI log holds a call that cannot be replayed in isolation";
    CD_ERR_PERSIST = 75: CdError::Persist(..),
        "persisting a CD, or recovering a persisted version, failed";
    CD_ERR_PERSIST_MISMATCH = 76: CdError::PersistMismatch(..),
        "the restarted CD's ranges do not match its persisted version (order, kind, length)";
    CD_ERR_PERSIST_IN_FLIGHT = 78: CdError::PersistInFlight(..),
        "persist refused: an application message was in flight at the advance";
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_ascending_and_in_the_core_range() {
        let codes: Vec<u32> = CdError::CODES.iter().map(|c| c.code).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        assert!(codes.iter().all(|c| (1..100).contains(c)), "{codes:?}");
    }

    #[test]
    fn names_are_c_constants_and_descriptions_one_line() {
        for c in CdError::CODES {
            let name = c.name_str();
            assert!(name.starts_with("CD_ERR_"), "{name}");
            assert!(name[7..]
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_'));
            let text = c.description.to_str().unwrap();
            assert!(!text.is_empty() && !text.contains('\n'), "{name}: {text:?}");
        }
    }

    /// `CamelCase` to `CD_ERR_CAMEL_CASE`.
    fn c_name(variant: &str) -> String {
        let mut name = String::from("CD_ERR");
        for ch in variant.chars() {
            if ch.is_ascii_uppercase() {
                name.push('_');
            }
            name.push(ch.to_ascii_uppercase());
        }
        name
    }

    #[test]
    fn every_variant_has_the_line_named_after_it() {
        let h = CdHandle::from_bits(5);
        let cases = [
            CdError::InvalidHandle(h),
            CdError::StaleHandle {
                handle: h,
                fate: Fate::Committed,
            },
            CdError::NoActiveCd,
            CdError::Reentrant,
            CdError::RootInheritsLogging,
            CdError::LoggingMismatch {
                parent: "a",
                child: "b",
            },
            CdError::ChildNamed,
            CdError::DuplicateName("x".into()),
            CdError::BadName(String::new()),
            CdError::StorageInfo("x".into()),
            CdError::ZeroLength { address: 1 },
            CdError::NullAddress { length: 1 },
            CdError::AddressOverflow {
                address: 1,
                length: 1,
            },
            CdError::OverlappingList {
                first: 0,
                second: 1,
            },
            CdError::ReadWriteRegen { address: 1 },
            CdError::PromoteRegen { address: 1 },
            CdError::ScopeChange {
                address: 1,
                existing: "GLOBAL",
            },
            CdError::NotInAncestor { address: 1, end: 2 },
            CdError::RegenAncestor { address: 1, end: 2 },
            CdError::NoParent,
            CdError::RangeNotFound { address: 1, end: 2 },
            CdError::StraddlesMemorySpace {
                address: 1,
                length: 2,
            },
            CdError::RegionOverlap {
                address: 1,
                length: 2,
            },
            CdError::UnknownMemorySpace(3),
            CdError::RegionNotFound(1),
            CdError::RegionInUse {
                address: 1,
                cd: CdHandle::from_bits(1),
            },
            CdError::RemapRefused {
                from: 1,
                to: 2,
                reason: String::new(),
            },
            CdError::FileNotSeekable {
                fd: 1,
                message: String::new(),
            },
            CdError::FileNotFound(1),
            CdError::HasChildren {
                operation: "commit_cd",
                children: 1,
            },
            CdError::ConcurrentOperation {
                operation: "a",
                running: "b",
            },
            CdError::OutOfMemory { bytes: 1 },
            CdError::DeviceCopy {
                space: String::new(),
                message: String::new(),
            },
            CdError::RegenFailed {
                status: 1,
                ranges: 1,
                not_restored: Vec::new(),
            },
            CdError::ParentDataMissing { address: 1, end: 2 },
            CdError::InjectedFault("x"),
            CdError::MemoryLimit {
                limit: 1,
                asked: 2,
                held: 0,
            },
            CdError::LoggingDisabled,
            CdError::LogReplaying,
            CdError::EmptyLogEntry,
            CdError::RestoreRefused("x".into()),
            CdError::Unreplayable { call: "MPI_Put" },
            CdError::Persist("x".into()),
            CdError::PersistMismatch("x".into()),
            CdError::PersistInFlight("x".into()),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for error in cases {
            let debug = format!("{error:?}");
            let variant = debug.split(['(', ' ']).next().unwrap();
            let line = CdError::CODES.iter().find(|c| c.code == error.code());
            assert_eq!(
                line.map(ErrorCode::name_str),
                Some(c_name(variant).as_str())
            );
            seen.insert(error.code());
        }
        assert_eq!(
            seen.len(),
            CdError::CODES.len(),
            "a table line matches no variant"
        );
    }
}
