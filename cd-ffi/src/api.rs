//! The functions of the spec's "Containment Domain API for applications", with its names and
//! DESIGN.md's signatures.

use crate::boundary::{ffi_int, ffi_ptr, try_slice};
use crate::error::{Error, FAILURE, SUCCESS};
use crate::types::{cd_addrspec, cd_handle, cd_ref, logging, opt_str, specs, to_c};
use cd_core::{AddrSpec, Regen};
use std::ffi::{c_char, c_int};

/// A regen function: regenerates the data of the ranges it is given and returns 0 on success.
///
/// The ranges may differ from those added (split or merged as labels change); the function must
/// be idempotent and must not call the CD API (such a call returns `CD_ERR_REENTRANT`).
pub type cd_regen_fn =
    Option<unsafe extern "C" fn(addrlist: *mut cd_addrspec, ascount: c_int) -> c_int>;

/// Creates a CD and makes it the calling thread's active CD (`CURRENT_CD`).
///
/// `parent` is NULL for a root CD, or a handle (or `CURRENT_CD`) for a child. `storage_info`
/// (`key=value;...`, may be NULL) describes the store; a root given NULL takes
/// `$CD_STORAGE_INFO`, a child its parent's. `log_comm` is `COMM_LOGGING_DISABLED`, `_ENABLED`
/// or `_INHERIT` (children only; a child may not contradict its parent). `name` identifies a
/// root CD (unique among live roots; may be NULL) and must be NULL for a child.
///
/// A root CD whose `storage_info` sets `dir` is persistent (MPI programs): every advance
/// writes a version of its store to the node-local cache directory, protected across ranks,
/// and after a restart `create_cd` with the same name finds the newest complete version,
/// rebuilds lost ranks' files, and `cd_recovered_version` tells it was found; add the same
/// ranges in the same order, then `restore_cd` brings the data back. Creating and advancing
/// a persistent CD are collective over `MPI_COMM_WORLD` (every rank, same order). Keys:
/// `dir`, `scheme`, `replicas`, `checksums`, `set_size`, `failure_group`, `keep`,
/// `global_dir`, `flush_every`, `flush` (values and defaults: the README's "`storage_info`
/// keys"); unknown keys and bad values are errors naming the key (`CD_ERR_STORAGE_INFO`).
///
/// Persistence failures return `CD_ERR_PERSIST`; ranges that do not match the persisted
/// version at `restore_cd`, `CD_ERR_PERSIST_MISMATCH`. An advance while an application message
/// is in flight (sent and not yet received, or a receive or nonblocking collective not
/// completed, by the MPI interposer's counts) returns `CD_ERR_PERSIST_IN_FLIGHT` on every rank
/// and persists nothing; the next advance tries again. The counts are exact when
/// `CD_STORAGE_INFO` sets `dir` (counted from `MPI_Init`), else they begin at the first
/// persistent `create_cd`.
///
/// Returns the handle, or NULL on error. `*error` receives 0 or the error code; `error` may be
/// NULL (`cd_last_error()` then tells the code).
///
/// # Safety
/// `storage_info` and `name` must be NULL or NUL-terminated strings; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn create_cd(
    parent: cd_handle,
    storage_info: *const c_char,
    log_comm: c_int,
    name: *const c_char,
    error: *mut c_int,
) -> cd_handle {
    ffi_ptr!(error, {
        // The built-in CUDA space, when CUDA is present and CD_CUDA is not 0 (once).
        cd_cuda::enable();
        // A static link keeps the persistence constructor only if something refers to it.
        std::hint::black_box(&crate::persist::INSTALL);
        let parent = if parent.is_null() {
            None
        } else {
            Some(cd_ref(parent)?)
        };
        // SAFETY: the strings are NULL or NUL-terminated (this function's contract).
        let (storage_info, name) = unsafe {
            (
                opt_str(storage_info, "storage_info")?,
                opt_str(name, "name")?,
            )
        };
        let handle = cd_core::create_cd(parent, storage_info, logging(log_comm)?, name)?;
        Ok(to_c(handle))
    })
}

/// Commits a CD: a root is discarded with its store and logs; a child's entries that its
/// parent lacks move to the parent (the parent's win; READ_WRITE in the child promotes the
/// parent's READ_ONLY; CONSTRAINED entries never move), its MPI log merges into the parent's
/// unless it has or had siblings, and the child is discarded. A CD with uncommitted children
/// cannot be committed (`CD_ERR_HAS_CHILDREN`). The handle is invalid afterwards.
///
/// Returns 0 or an error code.
#[no_mangle]
pub extern "C" fn commit_cd(cd: cd_handle) -> c_int {
    ffi_int!({ Ok(cd_core::commit_cd(cd_ref(cd)?)?) })
}

/// Restores application memory to the CD's point in time: its descendants first, newest to
/// oldest (the oldest wins), and inside each CD the COPY entries, then PARENT, then REGEN ones;
/// file positions seek back. The descendants are then discarded (their handles become
/// invalid), the CD lives on, and its MPI log is ready for replay by `get_MPI_log_from_cd`.
///
/// Returns 0 or an error code; on error nothing was discarded and the restore may be retried.
///
/// # Safety
/// Every range in the CD and its descendants must still be allocated and writable, and no
/// other thread may use those ranges during the call.
#[no_mangle]
pub unsafe extern "C" fn restore_cd(cd: cd_handle) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        // SAFETY: the caller guarantees the ranges are allocated and not in use.
        unsafe { cd_core::restore_cd(cd)? };
        Ok(())
    })
}

/// Moves the CD's point in time to now, atomically: READ_WRITE COPY entries are copied from
/// application memory and demoted to READ_ONLY, monitored file positions are updated, and the
/// CD's MPI log is discarded. A child CD is first committed implicitly to its parent (without
/// being invalidated). Only a CD without children can advance.
///
/// Returns 0, or `FAILURE` on any failure: the CD is then exactly as before, and
/// `cd_last_error()` gives the reason (`CD_ERR_HAS_CHILDREN`, `CD_ERR_OUT_OF_MEMORY`, ...).
/// This is what makes the spec's `if (advance_cd_point_in_time(cd) == FAILURE)` work.
///
/// # Safety
/// Every COPY range of the CD must be allocated and not written during the call.
#[no_mangle]
pub unsafe extern "C" fn advance_cd_point_in_time(cd: cd_handle) -> c_int {
    let rc = ffi_int!({
        let cd = cd_ref(cd)?;
        // SAFETY: the caller guarantees the ranges are allocated and quiet.
        unsafe { cd_core::advance_cd_point_in_time(cd)? };
        Ok(())
    });
    if rc == SUCCESS {
        SUCCESS
    } else {
        FAILURE
    }
}

/// Adds address ranges whose data is copied into the CD store now.
///
/// Where a range overlaps one already in the CD, the earlier entry keeps its data; only the
/// uncovered parts are added. Re-adding READ_WRITE over READ_ONLY promotes (no copy). Atomic:
/// on error nothing was added. `ascount` must be positive; the ranges must not overlap each
/// other, start at NULL or have zero length.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `addrlist` must be NULL or hold `ascount` elements; every range must be readable now and
/// stay allocated while it is in this CD or an ancestor it is committed to.
#[no_mangle]
pub unsafe extern "C" fn add_to_cd_via_copy(
    cd: cd_handle,
    addrlist: *const cd_addrspec,
    ascount: c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let list = specs(try_slice!(addrlist, ascount, "addrlist"))?;
        // SAFETY: the caller guarantees the ranges are readable and stay allocated.
        unsafe { cd_core::add_to_cd_via_copy(cd, &list)? };
        Ok(())
    })
}

/// Adds address ranges (not their data) that a restore takes from the nearest ancestor
/// holding them. Every byte must be in an ancestor, and not restored there by a regen function.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `addrlist` must be NULL or hold `ascount` elements.
#[no_mangle]
pub unsafe extern "C" fn add_to_cd_via_parent(
    cd: cd_handle,
    addrlist: *const cd_addrspec,
    ascount: c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let list = specs(try_slice!(addrlist, ascount, "addrlist"))?;
        Ok(cd_core::add_to_cd_via_parent(cd, &list)?)
    })
}

/// Adds address ranges that a restore regenerates by calling `regen` with them, after the
/// CD's COPY and PARENT entries are restored. The ranges must be READ_ONLY (a READ_WRITE regen
/// entry is `CD_ERR_READ_WRITE_REGEN`); `regen` must not be NULL.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `addrlist` must be NULL or hold `ascount` elements; `regen` must be callable from any
/// thread that restores the CD for as long as the entries exist.
#[no_mangle]
pub unsafe extern "C" fn add_to_cd_via_regen(
    cd: cd_handle,
    addrlist: *const cd_addrspec,
    ascount: c_int,
    regen: cd_regen_fn,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let list = specs(try_slice!(addrlist, ascount, "addrlist"))?;
        let f = regen.ok_or(Error::NullPointer("regen"))?;
        let regen = Regen::with_id(f as usize, move |ranges: &[AddrSpec]| {
            let mut c: Vec<cd_addrspec> = ranges.iter().map(cd_addrspec::from_core).collect();
            let Ok(count) = c_int::try_from(c.len()) else {
                return -1;
            };
            // SAFETY: `c` holds `count` valid elements for the duration of the call; the
            // registrant vouched that `f` is callable.
            unsafe { f(c.as_mut_ptr(), count) }
        });
        Ok(cd_core::add_to_cd_via_regen(cd, &list, regen)?)
    })
}

/// Removes address ranges from the CD (only this CD is searched). Every byte must be in the
/// CD, else nothing is removed (`CD_ERR_RANGE_NOT_FOUND`). Call it before freeing memory the
/// CD holds. The labels of the list are not compared.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `addrlist` must be NULL or hold `ascount` elements.
#[no_mangle]
pub unsafe extern "C" fn delete_from_cd(
    cd: cd_handle,
    addrlist: *const cd_addrspec,
    ascount: c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let list = specs(try_slice!(addrlist, ascount, "addrlist"))?;
        Ok(cd_core::delete_from_cd(cd, &list)?)
    })
}

/// Records the current position of an open, seekable file; `restore_cd` seeks back to it and
/// `advance_cd_point_in_time` updates it. The file's data is not saved. A descriptor already
/// in the CD keeps its older position.
///
/// Returns 0 or an error code (`CD_ERR_FILE_NOT_SEEKABLE` for a closed descriptor or a pipe).
#[no_mangle]
pub extern "C" fn add_file_to_cd(cd: cd_handle, filedes: c_int) -> c_int {
    ffi_int!({ Ok(cd_core::add_file_to_cd(cd_ref(cd)?, filedes)?) })
}

/// Stops monitoring a file's position.
///
/// Returns 0 or an error code (`CD_ERR_FILE_NOT_FOUND` if the CD does not monitor it).
#[no_mangle]
pub extern "C" fn delete_file_from_cd(cd: cd_handle, filedes: c_int) -> c_int {
    ffi_int!({ Ok(cd_core::delete_file_from_cd(cd_ref(cd)?, filedes)?) })
}
