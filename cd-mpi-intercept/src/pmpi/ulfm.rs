//! ULFM's calls (`MPIX_Comm_revoke`, `MPIX_Comm_get_failed`, `MPIX_Comm_shrink`,
//! `MPIX_Comm_agree`), found at run time: only a library built with fault tolerance has them,
//! and libcd neither exports nor wraps them, so they are looked up by their `MPIX_` names (no
//! recursion is possible).

use crate::abi::{self, Comm, Group};
use crate::resolve;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The address of `name` in the MPI library, looked up once (null when it has none).
fn lookup(slot: &AtomicPtr<c_void>, name: &CStr) -> *mut c_void {
    // A sentinel marks "looked up, absent", so that an absent function is asked for once.
    const ABSENT: *mut c_void = std::ptr::dangling_mut();
    match slot.load(Ordering::Relaxed) {
        p if p.is_null() => {
            let f = resolve::lookup(name);
            slot.store(if f.is_null() { ABSENT } else { f }, Ordering::Relaxed);
            f
        }
        p if p == ABSENT => std::ptr::null_mut(),
        p => p,
    }
}

/// Revokes `comm` at every process of its groups (`MPIX_Comm_revoke`); `false` when the
/// library has no ULFM or refuses.
pub(crate) fn revoke(comm: Comm) -> bool {
    static F: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let f = lookup(&F, c"MPIX_Comm_revoke");
    if f.is_null() {
        return false;
    }
    // SAFETY: the library's `MPIX_Comm_revoke`, `int (MPI_Comm)`.
    let f: unsafe extern "C" fn(Comm) -> c_int = unsafe { std::mem::transmute(f) };
    // SAFETY: no pointer is passed.
    unsafe { f(comm) == abi::SUCCESS }
}

/// The processes of `comm` this process knows to have failed (`MPIX_Comm_get_failed`), as a
/// group the caller frees; `None` when the library has no ULFM or refuses.
pub(crate) fn failed_group(comm: Comm) -> Option<Group> {
    static F: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let f = lookup(&F, c"MPIX_Comm_get_failed");
    if f.is_null() {
        return None;
    }
    // SAFETY: the library's `MPIX_Comm_get_failed`, `int (MPI_Comm, MPI_Group *)`.
    let f: unsafe extern "C" fn(Comm, *mut Group) -> c_int = unsafe { std::mem::transmute(f) };
    let mut group = abi::predefined().group_null;
    // SAFETY: writes one handle.
    (unsafe { f(comm, &mut group) } == abi::SUCCESS).then_some(group)
}

/// The survivors of `comm` (`MPIX_Comm_shrink`, collective over them); `None` when the library
/// has no ULFM or refuses.
pub(crate) fn shrink(comm: Comm) -> Option<Comm> {
    static F: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let f = lookup(&F, c"MPIX_Comm_shrink");
    if f.is_null() {
        return None;
    }
    // SAFETY: the library's `MPIX_Comm_shrink`, `int (MPI_Comm, MPI_Comm *)`.
    let f: unsafe extern "C" fn(Comm, *mut Comm) -> c_int = unsafe { std::mem::transmute(f) };
    let mut shrunk = abi::predefined().comm_null;
    // SAFETY: writes one handle.
    (unsafe { f(comm, &mut shrunk) } == abi::SUCCESS).then_some(shrunk)
}

/// The bitwise AND of `flag` over the live processes of `comm` (`MPIX_Comm_agree`, collective,
/// fault tolerant); `None` when the library has no ULFM or the agreement failed (a process
/// failed during it).
pub(crate) fn agree(comm: Comm, flag: c_int) -> Option<c_int> {
    static F: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let f = lookup(&F, c"MPIX_Comm_agree");
    if f.is_null() {
        return None;
    }
    // SAFETY: the library's `MPIX_Comm_agree`, `int (MPI_Comm, int *)`.
    let f: unsafe extern "C" fn(Comm, *mut c_int) -> c_int = unsafe { std::mem::transmute(f) };
    let mut value = flag;
    // SAFETY: reads and writes one int.
    (unsafe { f(comm, &mut value) } == abi::SUCCESS).then_some(value)
}
