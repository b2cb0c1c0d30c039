//! The vocabulary of the spec: address specs, their labels, restoration types, logging modes.

use crate::error::{CdError, Result};

/// A list that stays on the stack for the usual handful of address specs.
pub(crate) type Small<T> = smallvec::SmallVec<[T; 4]>;

/// Whether the application modifies a range (the spec's `addr_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Used but not modified; advance leaves it alone.
    ReadOnly,
    /// Modified; the next advance updates it (for COPY entries) and demotes it.
    ReadWrite,
}

/// Whether a range is valid in ancestor CDs (the spec's `addr_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Valid for ancestors: commit moves it up.
    Global,
    /// Not valid for ancestors (a stack variable, say): commit never moves it up.
    Constrained,
}

impl Scope {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Global => "GLOBAL",
            Scope::Constrained => "CONSTRAINED",
        }
    }
}

/// Where an entry's data comes from at restore time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Restoration {
    /// From the CD store (`add_to_cd_via_copy`).
    Copy,
    /// From the nearest ancestor holding the range (`add_to_cd_via_parent`).
    Parent,
    /// From a regen function (`add_to_cd_via_regen`).
    Regen,
}

impl Restoration {
    /// `COPY`, `PARENT` or `REGEN`.
    pub fn name(self) -> &'static str {
        match self {
            Restoration::Copy => "COPY",
            Restoration::Parent => "PARENT",
            Restoration::Regen => "REGEN",
        }
    }
}

/// Whether a CD logs MPI traffic (the spec's `log_communication_traffic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoggingMode {
    /// MPI traffic is not logged.
    Disabled,
    /// MPI traffic is logged.
    Enabled,
    /// The same as the parent CD (children only).
    Inherit,
}

impl LoggingMode {
    pub(crate) fn describe(enabled: bool) -> &'static str {
        if enabled {
            "ENABLED"
        } else {
            "DISABLED"
        }
    }
}

/// One address range of application memory with its labels (`struct cd_addrspec`).
///
/// The address is a plain number so that specs can be built, stored and sent between threads
/// freely; only the operations that read or write memory are `unsafe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddrSpec {
    /// First byte of the range.
    pub address: usize,
    /// Length in bytes.
    pub length: usize,
    /// READ_ONLY or READ_WRITE.
    pub access: Access,
    /// GLOBAL or CONSTRAINED.
    pub scope: Scope,
}

impl AddrSpec {
    /// A spec for the range `address .. address + length`.
    pub fn new(address: usize, length: usize, access: Access, scope: Scope) -> Self {
        AddrSpec {
            address,
            length,
            access,
            scope,
        }
    }

    /// A GLOBAL spec covering the bytes of `value`.
    pub fn of<T: ?Sized>(value: &T, access: Access) -> Self {
        AddrSpec::new(
            // Exposed: the runtime turns the address back into a pointer with
            // `with_exposed_provenance` when it copies these bytes.
            (value as *const T).cast::<u8>().expose_provenance(),
            std::mem::size_of_val(value),
            access,
            Scope::Global,
        )
    }

    /// The same spec with another scope.
    pub fn with_scope(self, scope: Scope) -> Self {
        AddrSpec { scope, ..self }
    }

    /// The `(start, end)` of the range, checked as [`validate_specs`] checks each spec:
    /// non-empty, no null address, no overflow.
    pub(crate) fn bounds(&self) -> Result<(usize, usize)> {
        if self.length == 0 {
            return Err(CdError::ZeroLength {
                address: self.address,
            });
        }
        if self.address == 0 {
            return Err(CdError::NullAddress {
                length: self.length,
            });
        }
        Ok((self.address, self.end()?))
    }

    /// One past the last byte, checked.
    pub(crate) fn end(&self) -> Result<usize> {
        self.address
            .checked_add(self.length)
            .ok_or(CdError::AddressOverflow {
                address: self.address,
                length: self.length,
            })
    }
}

/// Checks a list of specs: non-empty ranges, no null address, no overflow, no two overlapping.
///
/// Returns the `(start, end)` of each spec, in list order.
pub(crate) fn validate_specs(specs: &[AddrSpec]) -> Result<Small<(usize, usize)>> {
    let mut bounds = Small::with_capacity(specs.len());
    for spec in specs {
        bounds.push(spec.bounds()?);
    }
    if bounds.len() < 2 {
        return Ok(bounds);
    }
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_unstable_by_key(|&i| bounds[i].0);
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if bounds[b].0 < bounds[a].1 {
            return Err(CdError::OverlappingList {
                first: a.min(b),
                second: a.max(b),
            });
        }
    }
    Ok(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(address: usize, length: usize) -> AddrSpec {
        AddrSpec::new(address, length, Access::ReadWrite, Scope::Global)
    }

    #[test]
    fn validate_rejects_bad_ranges() {
        assert_eq!(
            validate_specs(&[rw(16, 0)]).unwrap_err(),
            CdError::ZeroLength { address: 16 }
        );
        assert_eq!(
            validate_specs(&[rw(0, 4)]).unwrap_err(),
            CdError::NullAddress { length: 4 }
        );
        assert!(matches!(
            validate_specs(&[rw(usize::MAX - 1, 4)]),
            Err(CdError::AddressOverflow { .. })
        ));
        assert_eq!(
            validate_specs(&[rw(100, 10), rw(50, 10), rw(105, 1)]).unwrap_err(),
            CdError::OverlappingList {
                first: 0,
                second: 2
            }
        );
    }

    #[test]
    fn validate_accepts_adjacent_ranges() {
        assert_eq!(
            validate_specs(&[rw(110, 10), rw(100, 10)])
                .unwrap()
                .as_slice(),
            [(110, 120), (100, 110)]
        );
    }
}

/// What the calling thread's MPI calls do now.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum LogMode {
    /// No active CD, or the active CD does not log: calls go straight to MPI.
    Off = 0,
    /// The active CD logs: calls go to MPI and are appended to its log.
    Record = 1,
    /// A replay feeds this thread (the active CD's log, or an ancestor's): calls are served
    /// from it.
    Replay = 2,
}
