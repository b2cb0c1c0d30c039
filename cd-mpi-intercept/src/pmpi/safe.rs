//! Safe forms of the MPI calls the runtime makes for itself: queries of communicators, groups,
//! datatypes and statuses, error classes, and freeing the objects it made.
//!
//! Why these are safe: each passes MPI only handles (plain values, never dereferenced by
//! Rust) and pointers to locals or slices it owns, sized as the call writes them. A handle
//! that is not a live MPI object makes the program erroneous in MPI's terms, which MPI reports
//! through the communicator's error handler; the runtime only asks about handles the
//! application passed to the call being wrapped, or that the runtime made. Calls that may
//! write into application memory (completing, cancelling or freeing a request, packing) stay
//! `unsafe` at their call sites, with the reason there.

use super::real;
use crate::abi::{self, Comm, Datatype, Group, Status};
use std::ffi::{c_int, CStr};

/// A failed MPI call's return code.
pub(crate) type Code = c_int;

/// Turns a return code and a value into a `Result`.
fn checked<T>(rc: c_int, value: T) -> Result<T, Code> {
    if rc == abi::SUCCESS {
        Ok(value)
    } else {
        Err(rc)
    }
}

/// This process's rank in `comm` (-1 if MPI refuses).
pub(crate) fn comm_rank(comm: Comm) -> c_int {
    let mut rank: c_int = -1;
    // SAFETY: writes one int (see the module docs).
    unsafe { real::Comm_rank(comm, &mut rank) };
    rank
}

/// The size of `comm`'s (local) group (0 if MPI refuses).
pub(crate) fn comm_size(comm: Comm) -> c_int {
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Comm_size(comm, &mut size) };
    size
}

/// The size of an intercommunicator's remote group (0 if MPI refuses).
pub(crate) fn comm_remote_size(comm: Comm) -> c_int {
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Comm_remote_size(comm, &mut size) };
    size
}

/// Whether `comm` is an intercommunicator.
pub(crate) fn comm_test_inter(comm: Comm) -> bool {
    let mut inter: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Comm_test_inter(comm, &mut inter) };
    inter != 0
}

/// This process's rank in the application's `MPI_COMM_WORLD` (the repaired one after a
/// repair: [`super::world`]).
pub(crate) fn world_rank() -> c_int {
    comm_rank(super::world::current())
}

/// The size of the application's `MPI_COMM_WORLD`.
pub(crate) fn world_size() -> c_int {
    comm_size(super::world::current())
}

/// `comm`'s topology (`MPI_CART`, `MPI_GRAPH`, `MPI_DIST_GRAPH` or `MPI_UNDEFINED`).
pub(crate) fn topo_test(comm: Comm) -> c_int {
    let mut topology: c_int = abi::UNDEFINED;
    // SAFETY: writes one int.
    unsafe { real::Topo_test(comm, &mut topology) };
    topology
}

/// The number of dimensions of a Cartesian communicator.
pub(crate) fn cartdim_get(comm: Comm) -> c_int {
    let mut ndims: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Cartdim_get(comm, &mut ndims) };
    ndims
}

/// The number of neighbours of `rank` in a graph communicator.
pub(crate) fn graph_neighbors_count(comm: Comm, rank: c_int) -> c_int {
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Graph_neighbors_count(comm, rank, &mut n) };
    n
}

/// The in-degree of this process in a distributed-graph communicator.
pub(crate) fn dist_graph_in_degree(comm: Comm) -> c_int {
    let (mut indegree, mut outdegree, mut weighted) = (0, 0, 0);
    // SAFETY: writes three ints.
    unsafe { real::Dist_graph_neighbors_count(comm, &mut indegree, &mut outdegree, &mut weighted) };
    indegree
}

/// A communicator's (local) group; the caller frees it with [`group_free`].
pub(crate) fn comm_group(comm: Comm) -> Group {
    let mut group = abi::predefined().group_null;
    // SAFETY: writes one handle.
    unsafe { real::Comm_group(comm, &mut group) };
    group
}

/// An intercommunicator's remote group; the caller frees it with [`group_free`].
pub(crate) fn comm_remote_group(comm: Comm) -> Group {
    let mut group = abi::predefined().group_null;
    // SAFETY: writes one handle.
    unsafe { real::Comm_remote_group(comm, &mut group) };
    group
}

/// The number of members of `group`.
pub(crate) fn group_size(group: Group) -> c_int {
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    unsafe { real::Group_size(group, &mut n) };
    n
}

/// The ranks in `to` of the members `ranks` of `from` (`MPI_UNDEFINED` for one not in `to`).
pub(crate) fn group_translate_ranks(from: Group, ranks: &[c_int], to: Group) -> Vec<c_int> {
    let mut out = vec![abi::UNDEFINED; ranks.len()];
    let n = c_int::try_from(ranks.len()).expect("a group's size is an int");
    // SAFETY: reads `n` ints from `ranks`, writes `n` into `out`.
    unsafe { real::Group_translate_ranks(from, n, ranks.as_ptr(), to, out.as_mut_ptr()) };
    out
}

/// Frees a group the runtime got from MPI.
pub(crate) fn group_free(mut group: Group) {
    // SAFETY: a group is no buffer; MPI sets the handle (a local) to MPI_GROUP_NULL.
    unsafe { real::Group_free(&mut group) };
}

/// A datatype's lower bound and extent in bytes.
pub(crate) fn type_get_extent(datatype: Datatype) -> Result<(i64, i64), Code> {
    let (mut lb, mut extent) = (0i64, 0i64);
    // SAFETY: writes two MPI_Aint.
    let rc = unsafe { real::Type_get_extent(datatype, &mut lb, &mut extent) };
    checked(rc, (lb, extent))
}

/// The true lower bound and true extent of `datatype` (the memory one element's data spans).
pub(crate) fn type_get_true_extent(datatype: Datatype) -> Result<(i64, i64), Code> {
    let (mut lb, mut extent) = (0i64, 0i64);
    // SAFETY: writes two MPI_Aint.
    let rc = unsafe { real::Type_get_true_extent(datatype, &mut lb, &mut extent) };
    checked(rc, (lb, extent))
}

/// The number of bytes of data in one element of `datatype`.
pub(crate) fn type_size(datatype: Datatype) -> Result<c_int, Code> {
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { real::Type_size(datatype, &mut size) };
    checked(rc, size)
}

/// The combiner of `datatype` (`MPI_COMBINER_NAMED` for a predefined one).
pub(crate) fn type_combiner(datatype: Datatype) -> Result<c_int, Code> {
    let (mut ints, mut addrs, mut types, mut combiner) = (0, 0, 0, 0);
    // SAFETY: writes four ints.
    let rc = unsafe {
        real::Type_get_envelope(datatype, &mut ints, &mut addrs, &mut types, &mut combiner)
    };
    checked(rc, combiner)
}

/// The number of elements of `datatype` a receive's status describes (`MPI_UNDEFINED` for a
/// partial element).
pub(crate) fn get_count(status: &Status, datatype: Datatype) -> Result<c_int, Code> {
    let mut n: c_int = 0;
    // SAFETY: reads the status, writes one int.
    let rc = unsafe { real::Get_count(status, datatype, &mut n) };
    checked(rc, n)
}

/// Whether the request a status describes was cancelled.
pub(crate) fn test_cancelled(status: &Status) -> bool {
    let mut cancelled: c_int = 0;
    // SAFETY: reads the status, writes one int.
    unsafe { real::Test_cancelled(status, &mut cancelled) };
    cancelled != 0
}

/// The number of bytes `MPI_Pack` needs for `count` elements of `datatype` on `comm`.
pub(crate) fn pack_size(count: c_int, datatype: Datatype, comm: Comm) -> Result<c_int, Code> {
    let mut size: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { real::Pack_size(count, datatype, comm, &mut size) };
    checked(rc, size)
}

/// A new error class.
pub(crate) fn add_error_class() -> Result<c_int, Code> {
    let mut class: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { real::Add_error_class(&mut class) };
    checked(rc, class)
}

/// A new error code in `class`.
pub(crate) fn add_error_code(class: c_int) -> Result<c_int, Code> {
    let mut code: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { real::Add_error_code(class, &mut code) };
    checked(rc, code)
}

/// Sets the text `MPI_Error_string` gives for `code` (MPI copies it).
pub(crate) fn add_error_string(code: c_int, text: &CStr) -> Result<(), Code> {
    // SAFETY: a NUL-terminated string, only read.
    let rc = unsafe { real::Add_error_string(code, text.as_ptr()) };
    checked(rc, ())
}

/// Raises `code` through `comm`'s error handler (which may abort the program).
pub(crate) fn comm_call_errhandler(comm: Comm, code: c_int) {
    // SAFETY: no pointer is passed.
    unsafe { real::Comm_call_errhandler(comm, code) };
}

/// A duplicate of `comm`, for the runtime's own traffic.
pub(crate) fn comm_dup(comm: Comm) -> Result<Comm, Code> {
    let mut new = abi::predefined().comm_null;
    // SAFETY: writes one handle.
    let rc = unsafe { real::Comm_dup(comm, &mut new) };
    checked(rc, new)
}

/// Frees a communicator (pending operations on it complete normally).
pub(crate) fn comm_free(mut comm: Comm) -> Result<(), Code> {
    // SAFETY: a communicator is no buffer; MPI sets the handle (a local) to MPI_COMM_NULL.
    let rc = unsafe { real::Comm_free(&mut comm) };
    checked(rc, ())
}

/// The error class of an error code (`code` itself if MPI cannot say).
pub(crate) fn error_class(code: c_int) -> c_int {
    let mut class = code;
    // SAFETY: writes one int.
    unsafe { real::Error_class(code, &mut class) };
    class
}

/// MPI's description of an error code.
pub(crate) fn error_string(code: c_int) -> String {
    let len = usize::try_from(abi::MAX_ERROR_STRING).unwrap_or(256);
    let mut text = vec![0u8; len + 1];
    let mut used: c_int = 0;
    // SAFETY: MPI writes at most MPI_MAX_ERROR_STRING bytes and the length.
    let rc = unsafe { real::Error_string(code, text.as_mut_ptr().cast(), &mut used) };
    if rc != abi::SUCCESS {
        return format!("MPI error {code}");
    }
    text.truncate(usize::try_from(used).unwrap_or(0).min(len));
    String::from_utf8_lossy(&text).into_owned()
}

/// Every rank of `comm`'s `mine`, of any length, by rank (collective over `comm`).
pub(crate) fn allgather_bytes(comm: Comm, mine: &[u8]) -> Result<Vec<Vec<u8>>, Code> {
    let n = comm_size(comm).max(0) as usize;
    let byte = abi::predefined().byte;
    let mut lengths = vec![0u64; n];
    let size = std::mem::size_of::<u64>() as c_int;
    // SAFETY: one u64 in, `n` out, as bytes.
    let rc = unsafe {
        real::Allgather(
            (&(mine.len() as u64) as *const u64).cast(),
            size,
            byte,
            lengths.as_mut_ptr().cast(),
            size,
            byte,
            comm,
        )
    };
    checked(rc, ())?;
    let me = comm_rank(comm).max(0) as usize;
    let mut out = Vec::with_capacity(n);
    for (root, &len) in lengths.iter().enumerate() {
        if len == 0 {
            out.push(Vec::new());
            continue;
        }
        let mut data = match root == me {
            true => mine.to_vec(),
            false => vec![0u8; len as usize],
        };
        // SAFETY: our buffer, of the length its root announced.
        let rc = unsafe {
            real::Bcast(
                data.as_mut_ptr().cast(),
                data.len() as c_int,
                byte,
                root as c_int,
                comm,
            )
        };
        checked(rc, ())?;
        out.push(data);
    }
    Ok(out)
}
