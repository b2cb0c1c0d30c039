//! MPI-4's large-count forms (`MPI_X_c`, counts as `MPI_Count`, displacements as `MPI_Aint`):
//! logged and replayed as their `int` forms are, when the counts their records describe fit in
//! an `int`.
//!
//! mpi4py 4 built against MPICH 4 calls only these forms (`MPI_Send_c`, `MPI_Allreduce_c`,
//! ...), and `mpi_f08` programs reach them through the large-count interfaces: without them
//! no Python program could be re-executed from a log. A `_c` wrapper narrows the counts its
//! record holds (the header's count, the count of each data piece) to `int` and runs the int
//! form's handler under its own name (`MPI_Send_c`: records, statistics and mismatch messages
//! name the call made, and a re-execution that calls `MPI_Send` where the log holds
//! `MPI_Send_c` is a mismatch like any other call), with the MPI library's own `PMPI_X_c`
//! and the application's arguments as the real call. So MPI's behaviour stays exactly the
//! application's, and nonblocking calls hand MPI the application's own count and
//! displacement arrays: nothing of ours needs to outlive the call.
//!
//! What is narrowed is what the int form's record and replay use: counts the wrapper never
//! reads (the send side of a v/w collective, which `MPI_IN_PLACE` leaves undefined) go to MPI
//! unread, and displacements only locate the pieces in the application's buffer (an
//! `MPI_Aint` as wide as a pointer, never logged), so none of them makes a call unreplayable.
//!
//! A call with a count beyond `INT_MAX` keeps the unreplayable calls' treatment
//! (`passthrough`): it goes to MPI as it is, is counted in the statistics, and marks the
//! active CD's log, so that a restore whose replay would cross it refuses with an error naming
//! it. (A collective on a thread that does not log has no use for its outputs and skips the
//! check: see `coll`.) Its messages are still the application's: when they are counted for
//! persistence (`traffic`), such a call counts what its int form would (a send when started, a
//! receive when complete, a post pending, a collective once), so that a persist's consistency
//! proof sees them. A persistent request made so is remembered with what each start counts and
//! with the refusal a logged `MPI_Start` of it leaves in the log (its starts cannot be logged:
//! their record would hold clamped counts). All of this is on the cold path of `_c` calls
//! beyond `INT_MAX`; the int forms never reach it.

#[cfg(mpi4_full)]
use crate::abi::{self, Comm, Request, Status};
#[cfg(mpi4_full)]
use crate::pmpi::Call;
#[cfg(mpi4_full)]
use crate::traffic::{self, Counts};
use std::cell::Cell;
use std::ffi::c_int;

/// Narrows counts to `int`, remembering whether one did not fit (then the value is clamped
/// and the call must not be logged). An int form's counts always fit: its wrappers use the
/// same code with nothing to remember.
#[derive(Default)]
pub(crate) struct Narrow {
    beyond: Cell<bool>,
}

impl Narrow {
    /// `count` as an `int` (`int` itself for an int form, an `MPI_Count` for a `_c` form).
    #[inline(always)]
    pub(crate) fn int(&self, count: impl Into<i64>) -> c_int {
        self.clamp(count.into())
    }

    /// `count` blocks of `n` elements, as one `int` count (the receive buffer of an
    /// Allgather, an Alltoall: a block per rank). Today's int forms saturate here, as before.
    #[inline(always)]
    pub(crate) fn times(&self, count: impl Into<i64>, n: c_int) -> c_int {
        self.clamp(count.into().saturating_mul(n.into()))
    }

    fn clamp(&self, value: i64) -> c_int {
        c_int::try_from(value).unwrap_or_else(|_| {
            self.beyond.set(true);
            if value < 0 {
                c_int::MIN
            } else {
                c_int::MAX
            }
        })
    }

    /// Whether every count narrowed so far fitted.
    #[cfg(any(mpi4_full, test))]
    pub(crate) fn fits(&self) -> bool {
        !self.beyond.get()
    }
}

/// Narrows the large counts named (each shadowed by its `int`), or returns `$beyond` when one
/// does not fit: the start of every large-count wrapper of a point-to-point call. `$beyond` is
/// one of this module's pass-throughs ([`sent`], [`received`], [`posted`], [`persistent`]),
/// evaluated only then.
#[cfg(mpi4_full)]
macro_rules! narrow_or_pass {
    ($beyond:expr, $($count:ident),+) => {
        let narrow = crate::large::Narrow::default();
        $(let $count = narrow.int($count);)+
        if !narrow.fits() {
            return $beyond;
        }
    };
}

#[cfg(mpi4_full)]
pub(crate) use narrow_or_pass;

/// A large-count call with a count beyond `int`: passed to MPI as it is, counted as
/// unreplayable, and marking the active CD's log (see `passthrough`).
#[cfg(mpi4_full)]
fn beyond(call: Call, real: impl FnOnce() -> c_int) -> c_int {
    tracing::debug!(call = call.name(), "a count beyond INT_MAX: not logged");
    crate::passthrough::unreplayable(call, real)
}

/// Whether the messages of a call passed through here are counted: counting is on and the call
/// is the application's (not the runtime's own, made inside the guard), as `engine::counted`
/// says of a direct call.
#[cfg(mpi4_full)]
fn counting() -> bool {
    traffic::on() && !crate::boundary::inside()
}

/// A blocking send beyond `int`: passed through, and counted as a message to `dest` on `comm`
/// when it succeeds.
#[cfg(mpi4_full)]
#[cold]
pub(crate) fn sent(call: Call, real: impl FnOnce() -> c_int, comm: Comm, dest: c_int) -> c_int {
    let counted = counting();
    let rc = beyond(call, real);
    if counted && rc == abi::SUCCESS {
        traffic::sent(comm, dest);
    }
    rc
}

/// A blocking collective beyond `int`: passed through, and counted once on `comm` (before the
/// call, as its int form is).
#[cfg(mpi4_full)]
#[cold]
pub(crate) fn collective(call: Call, real: impl FnOnce() -> c_int, comm: Comm) -> c_int {
    if counting() {
        traffic::collective(comm);
    }
    beyond(call, real)
}

/// A blocking call that receives (and perhaps sends) beyond `int`: passed through, on a status
/// of ours when counting (the application's may be `MPI_STATUS_IGNORE`), and counted as its
/// int form is: `counts` gives the communicator, whether a message is received (counted from
/// the status's source) and the destination of the send, if any (see `p2p::receive_into`).
///
/// # Safety
/// `run` is the MPI call with its contract, on the status it is given; `status` is the
/// application's.
#[cfg(mpi4_full)]
#[cold]
pub(crate) unsafe fn received(
    call: Call,
    run: impl FnOnce(*mut Status) -> c_int,
    status: *mut Status,
    counts: impl FnOnce() -> Option<(Comm, bool, Option<c_int>)>,
) -> c_int {
    let Some((comm, receives, send)) = counting().then(counts).flatten() else {
        return beyond(call, || run(status));
    };
    let mut st = Status::zeroed();
    let rc = beyond(call, || run(&mut st));
    if rc == abi::SUCCESS {
        if let Some(dest) = send {
            traffic::sent(comm, dest);
        }
        if receives {
            traffic::received(comm, st.source(), st.tag());
        }
    }
    // SAFETY: the application's status argument.
    unsafe { st.store(status) };
    rc
}

/// A nonblocking post (a send, a receive, a collective) beyond `int`: passed through, and
/// counted as `counts` says when it succeeds (`counts` runs before the call, as its int form's
/// does: an `MPI_Imrecv`'s reads the matched message, which MPI then nulls).
///
/// # Safety
/// `run` is the MPI call with its contract; `request` must be writable.
#[cfg(mpi4_full)]
#[cold]
pub(crate) unsafe fn posted(
    call: Call,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
    counts: impl FnOnce() -> Counts,
) -> c_int {
    let counts = counting().then(counts);
    let rc = beyond(call, || run(request));
    if let Some(counts) = counts.filter(|_| rc == abi::SUCCESS) {
        // SAFETY: MPI wrote the request.
        traffic::posted(counts, unsafe { *request });
    }
    rc
}

/// A persistent request made beyond `int`: passed through, and remembered in every mode (as
/// its int form's is: counting may begin later) with what each start counts and `refusal`,
/// what a logged start of it marks the log with (see `wait`).
///
/// # Safety
/// As [`posted`].
#[cfg(mpi4_full)]
#[cold]
pub(crate) unsafe fn persistent(
    call: Call,
    refusal: &'static str,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
    counts: impl FnOnce() -> Counts,
) -> c_int {
    let rc = beyond(call, || run(request));
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote the request.
        traffic::made_beyond(unsafe { *request }, counts(), refusal);
    }
    rc
}

/// The refusal a logged `MPI_Start` of a persistent request made by `MPI_$call` beyond `int`
/// leaves in the log (a `&'static str`, as log marks are).
#[cfg(mpi4_full)]
macro_rules! start_refusal {
    ($call:ident) => {
        concat!(
            "MPI_Start of a persistent request made by MPI_",
            stringify!($call),
            " with a count beyond INT_MAX"
        )
    };
}

#[cfg(mpi4_full)]
pub(crate) use start_refusal;

/// The type of an argument of a `_c` form, from its int form's (`Count`, `Counts`, `Displs`
/// are `int`s there, `MPI_Count`s and `MPI_Aint`s here; every other type is the same).
#[cfg(mpi4_full)]
macro_rules! large_type {
    (Count) => { i64 };
    (Counts) => { *const i64 };
    (Displs) => { *const i64 };
    ($other:ident) => { $other };
}

#[cfg(mpi4_full)]
pub(crate) use large_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_fit_pass_and_others_are_remembered() {
        let n = Narrow::default();
        assert_eq!(n.int(7i32), 7);
        assert_eq!(n.int(i64::from(c_int::MAX)), c_int::MAX);
        assert_eq!(n.times(1_000i64, 4), 4_000);
        assert!(n.fits());
        assert_eq!(n.int(3_000_000_000i64), c_int::MAX);
        assert!(!n.fits());
        let n = Narrow::default();
        assert_eq!(n.times(1i64 << 30, 4), c_int::MAX);
        assert!(!n.fits());
        let n = Narrow::default();
        assert_eq!(n.int(-3_000_000_000i64), c_int::MIN);
        assert!(!n.fits());
    }
}
