//! The spec's C vocabulary: `cd_handle`, `struct cd_addrspec` and its enums, and their
//! conversion to cd-core's types.
//!
//! Nothing read from C is trusted: enum fields arrive as `int` and are checked, handles are
//! integers that cd-core looks up (a made-up value is an error, never a dereference).

use crate::error::Error;
use cd_core::{Access, AddrSpec, CdHandle, CdRef, LoggingMode, Scope};
use std::ffi::{c_char, c_int, c_void, CStr};

/// A CD, as `create_cd` returns it: an opaque value, never dereferenced by anyone. `NULL` means
/// "no CD" (a root's parent) and `CURRENT_CD` the calling thread's active CD.
pub type cd_handle = *mut c_void;

/// The value of `CURRENT_CD`, `(cd_handle)1`.
pub(crate) const CURRENT_CD_BITS: usize = 1;

/// `CURRENT_CD` as a linkable global, for languages without C's preprocessor: the Fortran
/// module binds its `CURRENT_CD` to this symbol. C code uses the `CURRENT_CD` macro.
#[repr(transparent)]
pub struct cd_handle_constant(cd_handle);

// SAFETY: the wrapped value is an integer tag that is never dereferenced; sharing it between
// threads shares a number.
unsafe impl Sync for cd_handle_constant {}

/// `CURRENT_CD`, for Fortran (`bind(C, name="cd_current_cd")`).
#[no_mangle]
pub static cd_current_cd: cd_handle_constant =
    cd_handle_constant(std::ptr::without_provenance_mut(CURRENT_CD_BITS));

/// Whether a range is modified by the application (`addr_tp` of `struct cd_addrspec`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum addr_type {
    /// Memory is used, but not modified; advance leaves it alone.
    READ_ONLY = 0,
    /// Memory is modified, and its initial value is used; advance updates it (COPY entries).
    READ_WRITE = 1,
}

/// Whether a range is valid for ancestor CDs (`addr_scope` of `struct cd_addrspec`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum addr_scope {
    /// Valid for ancestor CDs: commit merges it into the parent.
    GLOBAL = 0,
    /// Not valid for ancestor CDs (a stack variable, say): commit never merges it up.
    CONSTRAINED = 1,
}

/// Whether a CD logs communication traffic (`log_comm` of `create_cd`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mpi_log {
    /// MPI traffic is not logged.
    COMM_LOGGING_DISABLED = 0,
    /// MPI traffic is logged.
    COMM_LOGGING_ENABLED = 1,
    /// The same as the parent CD (children only; always works for them).
    COMM_LOGGING_INHERIT = 2,
}

/// How an entry gets its data back at restore time (`restoration` of `struct cd_entry_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cd_restoration {
    /// From the CD store (`add_to_cd_via_copy`).
    CD_RESTORE_COPY = 0,
    /// From the nearest ancestor holding it (`add_to_cd_via_parent`).
    CD_RESTORE_PARENT = 1,
    /// From a regen function (`add_to_cd_via_regen`).
    CD_RESTORE_REGEN = 2,
}

/// The spec's alias of `COMM_LOGGING_DISABLED` (its use cases spell both).
pub const MPI_LOGGING_DISABLED: c_int = 0;
/// The spec's alias of `COMM_LOGGING_ENABLED`.
pub const MPI_LOGGING_ENABLED: c_int = 1;
/// The spec's alias of `COMM_LOGGING_INHERIT`.
pub const MPI_LOGGING_INHERIT: c_int = 2;

/// One address range of application memory with its labels.
///
/// Initialize it as the spec does: `{&x, sizeof(x), READ_WRITE, GLOBAL}`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cd_addrspec {
    /// First byte of the range.
    pub address: *mut c_void,
    /// Length in bytes (nonzero).
    pub length: usize,
    /// `READ_ONLY` or `READ_WRITE`.
    pub addr_tp: c_int,
    /// `GLOBAL` or `CONSTRAINED`.
    pub addr_scope: c_int,
}

impl cd_addrspec {
    /// The C spec for a cd-core spec.
    pub(crate) fn from_core(spec: &AddrSpec) -> cd_addrspec {
        cd_addrspec {
            // Provenance: the address came from outside (a C caller's `void *`, or a Rust
            // caller's pointer), and was exposed when it became an integer (`to_core`, the
            // facade); handing it back to C, it takes that exposed provenance again.
            address: std::ptr::with_exposed_provenance_mut(spec.address),
            length: spec.length,
            addr_tp: match spec.access {
                Access::ReadOnly => addr_type::READ_ONLY as c_int,
                Access::ReadWrite => addr_type::READ_WRITE as c_int,
            },
            addr_scope: scope_to_c(spec.scope),
        }
    }

    /// The cd-core spec, with its enum fields checked.
    pub(crate) fn to_core(self) -> Result<AddrSpec, Error> {
        let access = match self.addr_tp {
            0 => Access::ReadOnly,
            1 => Access::ReadWrite,
            v => return Err(Error::InvalidEnum("addr_tp (READ_ONLY or READ_WRITE)", v)),
        };
        let scope = match self.addr_scope {
            0 => Scope::Global,
            1 => Scope::Constrained,
            v => return Err(Error::InvalidEnum("addr_scope (GLOBAL or CONSTRAINED)", v)),
        };
        // Provenance: cd-core keeps addresses as integers and copies through them at advance
        // and restore, so the caller's pointer is exposed here, where it leaves C.
        Ok(AddrSpec::new(
            self.address.expose_provenance(),
            self.length,
            access,
            scope,
        ))
    }
}

/// `GLOBAL` or `CONSTRAINED` as an int.
pub(crate) fn scope_to_c(scope: Scope) -> c_int {
    match scope {
        Scope::Global => addr_scope::GLOBAL as c_int,
        Scope::Constrained => addr_scope::CONSTRAINED as c_int,
    }
}

/// Converts a C address list.
pub(crate) fn specs(list: &[cd_addrspec]) -> Result<Vec<AddrSpec>, Error> {
    list.iter().map(|s| s.to_core()).collect()
}

/// The CD a C handle names: `CURRENT_CD`, or a handle cd-core validates on use.
pub(crate) fn cd_ref(cd: cd_handle) -> Result<CdRef, Error> {
    // A handle is a number, never dereferenced: only its address is read.
    match cd.addr() {
        0 => Err(Error::NullHandle),
        CURRENT_CD_BITS => Ok(CdRef::Current),
        bits => Ok(CdRef::Handle(CdHandle::from_bits(bits as u64))),
    }
}

/// The C value of a handle (always at least 2^32, so never NULL nor `CURRENT_CD`).
pub(crate) fn to_c(handle: CdHandle) -> cd_handle {
    // A number dressed as a pointer, never dereferenced: it needs no provenance. Handles fit
    // (the crate refuses targets whose pointers are not 64-bit).
    std::ptr::without_provenance_mut(handle.to_bits() as usize)
}

/// A logging mode from C.
pub(crate) fn logging(value: c_int) -> Result<LoggingMode, Error> {
    match value {
        0 => Ok(LoggingMode::Disabled),
        1 => Ok(LoggingMode::Enabled),
        2 => Ok(LoggingMode::Inherit),
        v => Err(Error::InvalidEnum(
            "log_comm (COMM_LOGGING_DISABLED, _ENABLED or _INHERIT)",
            v,
        )),
    }
}

/// An optional C string: NULL is `None`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that lives through the call.
pub(crate) unsafe fn opt_str<'a>(
    ptr: *const c_char,
    name: &'static str,
) -> Result<Option<&'a str>, Error> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map(Some)
        .map_err(|_| Error::InvalidString(name))
}
