//! Fault injection for tests: fail an allocation or a copy half-way.
//!
//! The spec promises that advance and add are atomic: either every entry is updated or none is.
//! To test that promise, a test arms a fault on its own thread, runs the operation, and checks
//! that the previous point in time still restores exactly. The hook exists only with the
//! `fault-injection` feature; without it the checks compile to nothing.

#[cfg(feature = "fault-injection")]
mod armed {
    use crate::error::{CdError, Result};
    use std::cell::Cell;

    /// A fault to inject into the calling thread's next CD operations.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fault {
        /// Let `successes` store allocations succeed, then fail the next one.
        Allocation {
            /// Allocations that still succeed.
            successes: usize,
        },
        /// Let `bytes` bytes be copied out of application memory, then fail.
        Copy {
            /// Bytes that are still copied.
            bytes: usize,
        },
    }

    thread_local! {
        static ARMED: Cell<Option<Fault>> = const { Cell::new(None) };
    }

    /// Arms `fault` for the calling thread (replacing any armed one).
    pub fn inject(fault: Fault) {
        ARMED.with(|a| a.set(Some(fault)));
    }

    /// Disarms the calling thread's fault; returns it if it never fired.
    pub fn disarm() -> Option<Fault> {
        ARMED.with(|a| a.take())
    }

    /// Called before every store allocation.
    pub(crate) fn on_alloc() -> Result<()> {
        ARMED.with(|a| match a.get() {
            Some(Fault::Allocation { successes: 0 }) => {
                a.set(None);
                Err(CdError::InjectedFault("allocation failed"))
            }
            Some(Fault::Allocation { successes }) => {
                a.set(Some(Fault::Allocation {
                    successes: successes - 1,
                }));
                Ok(())
            }
            _ => Ok(()),
        })
    }

    /// How many of the next `len` copied bytes may be copied before the injected failure.
    pub(crate) fn copy_limit(len: usize) -> usize {
        ARMED.with(|a| match a.get() {
            Some(Fault::Copy { bytes }) if bytes < len => {
                a.set(None);
                bytes
            }
            Some(Fault::Copy { bytes }) => {
                a.set(Some(Fault::Copy { bytes: bytes - len }));
                len
            }
            _ => len,
        })
    }
}

#[cfg(feature = "fault-injection")]
pub(crate) use armed::{copy_limit, on_alloc};
#[cfg(feature = "fault-injection")]
pub use armed::{disarm, inject, Fault};

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn on_alloc() -> crate::error::Result<()> {
    Ok(())
}

#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn copy_limit(len: usize) -> usize {
    len
}
