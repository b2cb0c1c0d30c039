//! The MPI ABI of the family this build is for: handle types, `MPI_Status`, constants,
//! sentinels and predefined handles, all read from that family's `mpi.h` by build.rs.
//!
//! Handles are newtypes over the C representation (`int` in MPICH, a pointer in Open MPI,
//! carried as `usize`, which the C calling convention passes the same way), so that the
//! compiler keeps a communicator from being passed as a datatype.

#![allow(missing_docs)] // the generated items carry their C names as docs

use std::ffi::c_int;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/abi.rs"));

/// The error classes of ULFM (User-Level Failure Mitigation) in a family that declares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UlfmClasses {
    /// `MPIX_ERR_PROC_FAILED`: a process failure prevents the operation.
    pub proc_failed: c_int,
    /// `MPIX_ERR_PROC_FAILED_PENDING`: a wildcard receive's potential sender failed.
    pub proc_failed_pending: c_int,
    /// `MPIX_ERR_REVOKED`: the communicator was revoked.
    pub revoked: c_int,
}

macro_rules! handles {
    ($($name:ident($raw:ident): $doc:literal;)*) => {$(
        #[doc = $doc]
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub struct $name(pub $raw);

        impl $name {
            /// The handle as 64 bits, as log records store it.
            pub fn bits(self) -> u64 {
                self.0 as u64
            }

            /// The handle back from the 64 bits [`bits`](Self::bits) gave.
            pub fn from_bits(bits: u64) -> Self {
                Self(bits as $raw)
            }
        }
    )*};
}

handles! {
    Comm(RawComm): "An `MPI_Comm`.";
    Datatype(RawDatatype): "An `MPI_Datatype`.";
    Request(RawRequest): "An `MPI_Request`.";
    Op(RawOp): "An `MPI_Op`.";
    Group(RawGroup): "An `MPI_Group`.";
    Info(RawInfo): "An `MPI_Info`.";
    Message(RawMessage): "An `MPI_Message`.";
    Errhandler(RawErrhandler): "An `MPI_Errhandler`.";
    Win(RawWin): "An `MPI_Win`.";
    File(RawFile): "An `MPI_File`.";
}

/// Ints in an `MPI_Status`.
pub const STATUS_INTS: usize = STATUS_SIZE / std::mem::size_of::<c_int>();
const _: () = assert!(STATUS_INTS * std::mem::size_of::<c_int>() == STATUS_SIZE);

/// An `MPI_Status`: opaque but for the three public fields, copied as a whole.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Status {
    words: [c_int; STATUS_INTS],
    _align: [StatusAlign; 0],
}

const _: () = assert!(std::mem::size_of::<Status>() == STATUS_SIZE);
const _: () = assert!(std::mem::align_of::<Status>() == STATUS_ALIGN);

impl Status {
    /// A zeroed status.
    pub const fn zeroed() -> Status {
        Status {
            words: [0; STATUS_INTS],
            _align: [],
        }
    }

    /// An empty status, as MPI reports for a null or inactive request.
    pub fn empty() -> Status {
        let mut status = Status::zeroed();
        status.words[STATUS_SOURCE] = ANY_SOURCE;
        status.words[STATUS_TAG] = ANY_TAG;
        status
    }

    /// `MPI_SOURCE`.
    pub fn source(&self) -> c_int {
        self.words[STATUS_SOURCE]
    }

    /// `MPI_TAG`.
    pub fn tag(&self) -> c_int {
        self.words[STATUS_TAG]
    }

    /// `MPI_ERROR`.
    pub fn error(&self) -> c_int {
        self.words[STATUS_ERROR]
    }

    /// The status as bytes, as log records store it.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `words` is plain ints, `STATUS_SIZE` bytes, no padding.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), STATUS_SIZE) }
    }

    /// A status from the bytes [`as_bytes`](Self::as_bytes) gave; `None` if the length is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Option<Status> {
        if bytes.len() != STATUS_SIZE {
            return None;
        }
        let mut status = Status::zeroed();
        for (word, chunk) in status.words.iter_mut().zip(bytes.chunks_exact(4)) {
            *word = c_int::from_ne_bytes(chunk.try_into().expect("4 bytes"));
        }
        Some(status)
    }

    /// Stores this status through an application's `MPI_Status *`, unless it is
    /// `MPI_STATUS_IGNORE`.
    ///
    /// # Safety
    /// `out` must be `MPI_STATUS_IGNORE` or valid for one write.
    pub unsafe fn store(&self, out: *mut Status) {
        if !is_status_ignore(out) {
            // SAFETY: not the sentinel, so writable by the caller's contract.
            unsafe { out.write(*self) };
        }
    }
}

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Status")
            .field("source", &self.source())
            .field("tag", &self.tag())
            .field("error", &self.error())
            .finish()
    }
}

/// Whether an `MPI_Status *` is `MPI_STATUS_IGNORE` (or NULL, which no MPI accepts as a status).
pub fn is_status_ignore(status: *const Status) -> bool {
    status.addr() == STATUS_IGNORE || status.is_null()
}

/// Whether an `MPI_Status[]` is `MPI_STATUSES_IGNORE`.
pub fn is_statuses_ignore(statuses: *const Status) -> bool {
    statuses.addr() == STATUSES_IGNORE || statuses.is_null()
}

/// Whether a buffer argument is `MPI_IN_PLACE`.
pub fn is_in_place<T>(buf: *const T) -> bool {
    buf.addr() == IN_PLACE
}

static PREDEFINED: OnceLock<Predefined> = OnceLock::new();

/// The predefined handles. Only called from wrappers, so an MPI library is loaded.
pub fn predefined() -> &'static Predefined {
    // SAFETY: every caller is an MPI wrapper, so the application called MPI and an MPI library
    // is loaded.
    PREDEFINED.get_or_init(|| unsafe { Predefined::read() })
}
