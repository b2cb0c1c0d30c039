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
//! (`passthrough`): it goes to MPI as it is, is counted, and marks the active CD's log, so that
//! a restore whose replay would cross it refuses with an error naming it. (A collective on a
//! thread that does not log has no use for its outputs and skips the check: see `coll`.)

#[cfg(mpi4)]
use crate::exports::Call;
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
    #[cfg(any(mpi4, test))]
    pub(crate) fn fits(&self) -> bool {
        !self.beyond.get()
    }
}

/// Narrows the large counts named (each shadowed by its `int`), or returns `$real()` passed
/// through as unreplayable when one does not fit: the start of every large-count wrapper of a
/// point-to-point call.
#[cfg(mpi4)]
macro_rules! narrow_or_pass {
    ($call:ident, $real:expr, $($count:ident),+) => {
        let narrow = crate::large::Narrow::default();
        $(let $count = narrow.int($count);)+
        if !narrow.fits() {
            return crate::large::beyond(Call::$call, $real);
        }
    };
}

#[cfg(mpi4)]
pub(crate) use narrow_or_pass;

/// A large-count call with a count beyond `int`: passed to MPI as it is, counted as
/// unreplayable, and marking the active CD's log (see `passthrough`).
#[cfg(mpi4)]
#[cold]
pub(crate) fn beyond(call: Call, real: impl FnOnce() -> c_int) -> c_int {
    tracing::debug!(call = call.name(), "a count beyond INT_MAX: not logged");
    crate::passthrough::unreplayable(call, real)
}

/// The type of an argument of a `_c` form, from its int form's (`Count`, `Counts`, `Displs`
/// are `int`s there, `MPI_Count`s and `MPI_Aint`s here; every other type is the same).
#[cfg(mpi4)]
macro_rules! large_type {
    (Count) => { i64 };
    (Counts) => { *const i64 };
    (Displs) => { *const i64 };
    ($other:ident) => { $other };
}

#[cfg(mpi4)]
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
