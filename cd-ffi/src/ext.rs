//! Extensions for what the spec leaves out and users need, all prefixed `cd_`: the version,
//! statistics, a CD's description and entries, its saved bytes, the active CD, and advice on
//! when to advance.

use crate::boundary::{ffi_int, try_mut};
use crate::error::Error;
use crate::types::{cd_addrspec, cd_handle, cd_ref, cd_restoration, scope_to_c, to_c};
use cd_core::{Access, MtbfSource, Restoration, Stats};
use std::ffi::{c_char, c_int, c_void};

/// The library's major version.
pub const CD_VERSION_MAJOR: c_int = 0;
/// The library's minor version.
pub const CD_VERSION_MINOR: c_int = 1;
/// The library's patch version.
pub const CD_VERSION_PATCH: c_int = 0;

/// The version of the library linked at run time, `"MAJOR.MINOR.PATCH"` (static, NUL-terminated);
/// compare with the header's `CD_VERSION`.
#[no_mangle]
pub extern "C" fn cd_version() -> *const c_char {
    const V: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => panic!("the version has no NUL"),
    };
    V.as_ptr()
}

/// Counters of what the runtime did, for one CD or for the whole process.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct cd_stats {
    /// CDs created.
    pub creates: u64,
    /// CDs committed.
    pub commits: u64,
    /// Successful restores.
    pub restores: u64,
    /// Successful advances.
    pub advances: u64,
    /// Successful add calls (copy, parent and regen).
    pub adds: u64,
    /// Bytes copied from application memory into the store by `add_to_cd_via_copy`.
    pub bytes_added: u64,
    /// Bytes of application memory saved by advances (the ranges' lengths; a synchronous
    /// advance of a device range saved by the last one copies only its changed blocks).
    pub bytes_advanced: u64,
    /// Bytes written into application memory by restores.
    pub bytes_restored: u64,
    /// Regen function calls made by restores.
    pub regen_calls: u64,
    /// MPI log entries added.
    pub log_entries: u64,
    /// Bytes the runtime holds in CD store buffers now (`cd_global_stats` only; 0 for one CD,
    /// whose saved bytes are `cd_info.stored_bytes`).
    pub store_bytes: u64,
    /// Bytes held in the pool of freed store buffers now (`cd_global_stats` only).
    pub pool_bytes: u64,
    /// Bytes held in MPI logs now (`cd_global_stats` only).
    pub log_bytes: u64,
    /// The most held in stores, pool and logs together (`cd_global_stats` only). The sum is
    /// capped by `CD_MEMORY_LIMIT` (`CD_ERR_MEMORY_LIMIT`).
    pub peak_bytes: u64,
}

impl From<Stats> for cd_stats {
    fn from(s: Stats) -> Self {
        cd_stats {
            creates: s.creates,
            commits: s.commits,
            restores: s.restores,
            advances: s.advances,
            adds: s.adds,
            bytes_added: s.bytes_added,
            bytes_advanced: s.bytes_advanced,
            bytes_restored: s.bytes_restored,
            regen_calls: s.regen_calls,
            log_entries: s.log_entries,
            store_bytes: s.store_bytes,
            pool_bytes: s.pool_bytes,
            log_bytes: s.log_bytes,
            peak_bytes: s.peak_bytes,
        }
    }
}

/// A description of one live CD.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cd_info {
    /// The parent's handle (NULL for a root).
    pub parent: cd_handle,
    /// The rank of the process (0 without MPI).
    pub rank: u32,
    /// 0 for a root, its parent's depth + 1 otherwise.
    pub depth: u32,
    /// The smallest index no live sibling had when the CD was created.
    pub sibling_index: u32,
    /// 1 if the CD logs MPI traffic.
    pub logging: c_int,
    /// 1 if the CD ever existed at the same time as a sibling (its log is then discarded).
    pub had_siblings: c_int,
    /// 1 while a replay of the MPI log is in progress.
    pub replaying: c_int,
    /// Uncommitted children.
    pub children: usize,
    /// Address ranges (entries with equal labels merged).
    pub ranges: usize,
    /// Bytes covered by entries.
    pub tracked_bytes: usize,
    /// Bytes saved in the store (COPY entries).
    pub stored_bytes: usize,
    /// Monitored files.
    pub files: usize,
    /// MPI log entries.
    pub log_entries: usize,
    /// Bytes of the MPI log entries.
    pub log_bytes: usize,
    /// What happened to this CD so far.
    pub stats: cd_stats,
    /// The advised interval of work between advances of the CD, in nanoseconds:
    /// `cd_get_advice`'s `CD_ADVICE_INTERVAL`, 0 while it is not known.
    pub advised_interval_ns: u64,
    /// 1 if `advised_interval_ns` is known, 0 before the CD's level has both an advance cost
    /// and a mean time between faults (see `cd_get_advice`).
    pub advised_interval_known: c_int,
}

/// One entry of a CD, as `cd_get_entries` lists it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cd_entry_info {
    /// The range and its labels (`addr_tp` is the current label: promotions and demotions show).
    pub spec: cd_addrspec,
    /// `CD_RESTORE_COPY`, `CD_RESTORE_PARENT` or `CD_RESTORE_REGEN`.
    pub restoration: c_int,
    /// The memory space (0 for host memory, else an id from `cd_register_memory_space`).
    pub space: u32,
}

/// Fills `*out` with the counters of one CD (`CURRENT_CD` works).
///
/// Returns 0 or an error code.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_get_stats(cd: cd_handle, out: *mut cd_stats) -> c_int {
    ffi_int!({
        let info = cd_core::cd_info(cd_ref(cd)?)?;
        *try_mut!(out, "out") = info.stats.into();
        Ok(())
    })
}

/// Fills `*out` with the process-wide counters (all CDs, live or not) and the memory the
/// runtime holds now (stores, pool, logs) with its peak.
///
/// Returns 0 or `CD_ERR_NULL_POINTER`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_global_stats(out: *mut cd_stats) -> c_int {
    ffi_int!({
        *try_mut!(out, "out") = cd_core::global_stats().into();
        Ok(())
    })
}

/// Fills `*out` with a description of a live CD.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_get_info(cd: cd_handle, out: *mut cd_info) -> c_int {
    ffi_int!({
        let i = cd_core::cd_info(cd_ref(cd)?)?;
        let out = try_mut!(out, "out");
        let info = cd_info {
            parent: i.parent.map_or(std::ptr::null_mut(), to_c),
            rank: i.rank,
            depth: i.depth,
            sibling_index: i.sibling_index,
            logging: c_int::from(i.logging),
            had_siblings: c_int::from(i.had_siblings),
            replaying: c_int::from(i.replaying),
            children: i.children,
            ranges: i.ranges,
            tracked_bytes: i.tracked_bytes,
            stored_bytes: i.stored_bytes,
            files: i.files,
            log_entries: i.log_entries,
            log_bytes: i.log_bytes,
            stats: i.stats.into(),
            advised_interval_ns: i.advice.interval_s.map_or(0, nanoseconds),
            advised_interval_known: c_int::from(i.advice.interval_s.is_some()),
        };
        *out = info;
        Ok(())
    })
}

/// Lists a CD's entries in address order (equal neighbours merged) into `out`, which holds
/// `capacity` elements, and stores their number in `*count`. If there are more than
/// `capacity`, nothing is written to `out`, `*count` is the number needed, and the result is
/// `CD_ERR_BUFFER_TOO_SMALL`; `out` may be NULL when `capacity` is 0.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `out` must be NULL or writable for `capacity` elements; `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_get_entries(
    cd: cd_handle,
    out: *mut cd_entry_info,
    capacity: usize,
    count: *mut usize,
) -> c_int {
    ffi_int!({
        let entries = cd_core::cd_entries(cd_ref(cd)?)?;
        *try_mut!(count, "count") = entries.len();
        if entries.len() > capacity {
            return Err(Error::BufferTooSmall {
                needed: entries.len(),
                given: capacity,
            });
        }
        if entries.is_empty() {
            return Ok(());
        }
        if out.is_null() {
            return Err(Error::NullPointer("out"));
        }
        for (i, e) in entries.iter().enumerate() {
            let info = cd_entry_info {
                spec: cd_addrspec {
                    // Provenance: the address came from the caller that added the range, and
                    // was exposed then (`cd_addrspec::to_core`); it goes back to C with it.
                    address: std::ptr::with_exposed_provenance_mut(e.address),
                    length: e.length,
                    addr_tp: c_int::from(e.access == Access::ReadWrite),
                    addr_scope: scope_to_c(e.scope),
                },
                restoration: match e.restoration {
                    Restoration::Copy => cd_restoration::CD_RESTORE_COPY,
                    Restoration::Parent => cd_restoration::CD_RESTORE_PARENT,
                    Restoration::Regen => cd_restoration::CD_RESTORE_REGEN,
                } as c_int,
                space: e.space,
            };
            // SAFETY: `i < entries.len() <= capacity`, and `out` is writable for `capacity`.
            unsafe { out.add(i).write(info) };
        }
        Ok(())
    })
}

/// Copies the bytes the CD saved for `address .. address + length` into `out`, without
/// restoring anything: the "CD contents" of the spec's tables. Every byte must be held by a
/// COPY entry of this CD (else `CD_ERR_RANGE_NOT_FOUND`).
///
/// Returns 0 or an error code.
///
/// # Safety
/// `out` must be NULL or writable for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn cd_read_saved(
    cd: cd_handle,
    address: *const c_void,
    length: usize,
    out: *mut c_void,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        if out.is_null() {
            return Err(Error::NullPointer("out"));
        }
        // The address only names the saved range (the copy is read from the CD's store).
        let bytes = cd_core::cd_saved_bytes(cd, address.addr(), length)?;
        // SAFETY: `out` is writable for `length` bytes (contract) and `bytes.len() == length`;
        // `bytes` is a fresh Vec, so the ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len());
        }
        Ok(())
    })
}

/// Whether a persistent root CD found a persisted point in time when it was created (after a
/// restart): stores its version number in `*version` (1 and up), or 0 if it started fresh (or
/// is not persistent). After a restart the application adds the same ranges in the same order
/// as before, then calls `restore_cd` to bring the recovered data into its memory.
///
/// Persistent CDs are root CDs whose `storage_info` sets `dir`; see cd.h's "storage_info"
/// section for the keys.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `version` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_recovered_version(cd: cd_handle, version: *mut u64) -> c_int {
    ffi_int!({
        let found = cd_core::recovered_version(cd_ref(cd)?)?;
        *try_mut!(version, "version") = found.unwrap_or(0);
        Ok(())
    })
}

/// The calling thread's active CD (what `CURRENT_CD` names now), or NULL if it has none.
#[no_mangle]
pub extern "C" fn cd_current() -> cd_handle {
    crate::boundary::ffi_ptr!(std::ptr::null_mut(), {
        Ok(cd_core::current_cd().map_or(std::ptr::null_mut(), to_c))
    })
}

/// Checks that `cd` names a live CD: 0 if it does, else the error code a call with it would
/// return (`CD_ERR_STALE_HANDLE`, `CD_ERR_INVALID_HANDLE`, `CD_ERR_NULL_HANDLE`, ...).
#[no_mangle]
pub extern "C" fn cd_validate_handle(cd: cd_handle) -> c_int {
    ffi_int!({
        cd_core::cd_info(cd_ref(cd)?)?;
        Ok(())
    })
}

// What `cd_get_advice` reports (its `what`). Times are in nanoseconds.
/// `cd_get_advice`: the interval of work between advances that minimises expected time
/// (Daly's higher-order estimate from the advance cost and the mean time between faults).
pub const CD_ADVICE_INTERVAL: c_int = 0;
/// `cd_get_advice`: Young's first-order interval, `sqrt(2 * advance cost * MTBF)`.
pub const CD_ADVICE_YOUNG_INTERVAL: c_int = 1;
/// `cd_get_advice`: the mean time of one synchronous advance (of the timed ones).
pub const CD_ADVICE_ADVANCE_COST: c_int = 2;
/// `cd_get_advice`: the mean time of one restore.
pub const CD_ADVICE_RESTORE_COST: c_int = 3;
/// `cd_get_advice`: the mean time between faults used (`CD_MTBF` in seconds when set, else
/// observed).
pub const CD_ADVICE_MTBF: c_int = 4;
/// `cd_get_advice`: where the MTBF came from, a `CD_MTBF_*` value (always known).
pub const CD_ADVICE_MTBF_SOURCE: c_int = 5;
/// `cd_get_advice`: synchronous advances timed (always known): all, but after one under
/// 20 us a thread times only one advance in 32.
pub const CD_ADVICE_ADVANCES: c_int = 6;
/// `cd_get_advice`: restores seen (always known).
pub const CD_ADVICE_RESTORES: c_int = 7;

/// `CD_ADVICE_MTBF_SOURCE`: neither `CD_MTBF` nor a restore yet (unknown, and so is the
/// interval).
pub const CD_MTBF_UNKNOWN: c_int = 0;
/// `CD_ADVICE_MTBF_SOURCE`: observed, the time the CD's level ran divided by its restores.
pub const CD_MTBF_OBSERVED: c_int = 1;
/// `CD_ADVICE_MTBF_SOURCE`: given by the `CD_MTBF` environment variable (seconds).
pub const CD_MTBF_GIVEN: c_int = 2;

/// One value of the advice on when to advance `cd` (`CURRENT_CD` works): `what` is a
/// `CD_ADVICE_*` value. Stores it in `*value` and 1 in `*known`, or, when it is not known yet,
/// 0 in both: the advance cost before the first synchronous advance, the restore cost before
/// the first restore, the MTBF with neither `CD_MTBF` nor a restore, and the intervals
/// without both the advance cost and the MTBF. An unknown value is never estimated.
///
/// The advice is per level: the CDs at the CD's depth under roots of its root's name share
/// their measurements (a child created every iteration gets its predecessors'). See the
/// README's "When to advance" section for the formula.
///
/// Returns 0 or an error code (`CD_ERR_INVALID_ENUM` for an unknown `what`,
/// `CD_ERR_NULL_POINTER`, or the handle's).
///
/// # Safety
/// `value` and `known` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_get_advice(
    cd: cd_handle,
    what: c_int,
    value: *mut u64,
    known: *mut c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        let value = try_mut!(value, "value");
        let known = try_mut!(known, "known");
        let a = cd_core::cd_advice(cd)?;
        let ns = |s: Option<f64>| s.map(nanoseconds);
        let v = match what {
            CD_ADVICE_INTERVAL => ns(a.interval_s),
            CD_ADVICE_YOUNG_INTERVAL => ns(a.young_interval_s),
            CD_ADVICE_ADVANCE_COST => ns(a.advance_cost_s),
            CD_ADVICE_RESTORE_COST => ns(a.restore_cost_s),
            CD_ADVICE_MTBF => ns(a.mtbf_s),
            CD_ADVICE_MTBF_SOURCE => Some(
                match a.mtbf_source {
                    MtbfSource::Unknown => CD_MTBF_UNKNOWN,
                    MtbfSource::Observed => CD_MTBF_OBSERVED,
                    MtbfSource::Given => CD_MTBF_GIVEN,
                }
                .unsigned_abs()
                .into(),
            ),
            CD_ADVICE_ADVANCES => Some(a.advances),
            CD_ADVICE_RESTORES => Some(a.restores),
            _ => return Err(Error::InvalidEnum("what", what)),
        };
        *value = v.unwrap_or(0);
        *known = c_int::from(v.is_some());
        Ok(())
    })
}

/// Seconds of the advice as the C API's nanoseconds.
fn nanoseconds(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// Sets the rank used in CD identities (the MPI layer does this at `MPI_Init`; a program
/// without MPI may set it by hand). Negative ranks are `CD_ERR_NEGATIVE_COUNT`.
#[no_mangle]
pub extern "C" fn cd_set_rank(rank: c_int) -> c_int {
    ffi_int!({
        let r = u32::try_from(rank).map_err(|_| Error::NegativeCount("rank", rank.into()))?;
        cd_core::set_rank(r);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_constants_match_cargo_toml() {
        let v = format!("{CD_VERSION_MAJOR}.{CD_VERSION_MINOR}.{CD_VERSION_PATCH}");
        assert_eq!(
            v,
            env!("CARGO_PKG_VERSION"),
            "update CD_VERSION_* in cd-ffi/src/ext.rs and CD_VERSION in cd-ffi/cbindgen.toml"
        );
        // SAFETY: cd_version returns a static NUL-terminated string.
        let linked = unsafe { std::ffi::CStr::from_ptr(cd_version()) };
        assert_eq!(linked.to_str().unwrap(), v);
        let toml = include_str!("../cbindgen.toml");
        assert!(
            toml.contains(&format!("#define CD_VERSION \"{v}\"")),
            "update CD_VERSION in cd-ffi/cbindgen.toml to {v}"
        );
    }
}
