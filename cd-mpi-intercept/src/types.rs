//! Basic datatypes recognised without calling MPI.
//!
//! Most traffic moves predefined types (`MPI_DOUBLE`, `MPI_INT`, `MPI_BYTE`, ...). For them the
//! packed form `MPI_Pack` writes is the elements' own bytes, so a log record can be written and
//! delivered with one memory copy instead of `MPI_Pack_size` + `MPI_Pack` and `MPI_Unpack`
//! (library calls that walk the datatype engine), and the element size is known without
//! `MPI_Type_size`. At 8 bytes a message, those calls were a third of a record's cost.
//!
//! A datatype is taken as *raw* only once MPI has confirmed all of it: it is predefined
//! (`MPI_COMBINER_NAMED`), its lower bound is 0 and its extent its size, and `MPI_Pack` of one
//! element gives its bytes unchanged (so a raw record is a packed record, and either path reads
//! it). Predefined handles are never freed, so what is learnt about one holds for the life of
//! the process and is kept in a table that readers consult with two atomic loads and no lock.
//! Derived datatypes never enter it: their handles are reused after `MPI_Type_free`, so they
//! are asked about every time and take the `MPI_Pack` path.

use crate::abi::{self, Datatype};
use crate::pmpi::{real, safe};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Slots of the table; far more than the predefined types a program uses.
const SLOTS: usize = 64;

/// Handle bits per slot (0: empty). Written once, after the slot's value.
static KEYS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Per slot: the element size, with [`RAW`] set when the type is raw.
static VALUES: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Serialises insertions, so that a slot's value and key come from the same writer.
static INSERT: Mutex<()> = Mutex::new(());

const RAW: u64 = 1 << 63;

/// What is known of a datatype.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct DatatypeInfo {
    /// Bytes of one element (`MPI_Type_size`; 0 for an invalid handle).
    pub size: u64,
    /// Whether `count` elements are `count * size` contiguous bytes that pack unchanged.
    pub raw: bool,
}

fn slot(bits: u64) -> usize {
    (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SLOTS
}

/// What is known of `datatype`, from the table when it is predefined.
#[inline]
pub(crate) fn kind(datatype: Datatype) -> DatatypeInfo {
    let bits = datatype.bits();
    let start = slot(bits);
    for i in 0..SLOTS {
        let at = (start + i) % SLOTS;
        match KEYS[at].load(Ordering::Acquire) {
            0 => break,
            k if k == bits => {
                let value = VALUES[at].load(Ordering::Relaxed);
                return DatatypeInfo {
                    size: value & !RAW,
                    raw: value & RAW != 0,
                };
            }
            _ => {}
        }
    }
    learn(datatype)
}

/// The bytes of one element of `datatype` (0 for a null or invalid one).
#[inline]
pub(crate) fn size(datatype: Datatype) -> u64 {
    kind(datatype).size
}

/// Asks MPI about a datatype not in the table, and enters it if it is predefined.
#[cold]
fn learn(datatype: Datatype) -> DatatypeInfo {
    let size = match safe::type_size(datatype) {
        Ok(size) if size >= 0 => size,
        _ => {
            return DatatypeInfo {
                size: 0,
                raw: false,
            }
        }
    };
    let kind = DatatypeInfo {
        size: size as u64,
        raw: false,
    };
    if safe::type_combiner(datatype) != Ok(abi::COMBINER_NAMED) || datatype.bits() == 0 {
        return kind;
    }
    let kind = DatatypeInfo {
        raw: packs_unchanged(datatype, size),
        ..kind
    };
    let _guard = INSERT.lock().unwrap_or_else(|e| e.into_inner());
    let bits = datatype.bits();
    let start = slot(bits);
    for i in 0..SLOTS {
        let at = (start + i) % SLOTS;
        match KEYS[at].load(Ordering::Relaxed) {
            0 => {
                VALUES[at].store(
                    kind.size | if kind.raw { RAW } else { 0 },
                    Ordering::Relaxed,
                );
                KEYS[at].store(bits, Ordering::Release);
                break;
            }
            k if k == bits => break,
            _ => {}
        }
    }
    kind
}

/// Whether one element of the predefined `datatype` (`size` bytes) is contiguous and packs
/// into its own bytes.
fn packs_unchanged(datatype: Datatype, size: c_int) -> bool {
    const PROBE: usize = 64;
    if safe::type_get_extent(datatype) != Ok((0, i64::from(size))) || size == 0 {
        return false;
    }
    let Ok(len) = usize::try_from(size) else {
        return false;
    };
    if len > PROBE {
        return false;
    }
    let input: [u8; PROBE] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11));
    let mut output = [0u8; PROBE];
    let mut position: c_int = 0;
    // SAFETY: one element of `size <= PROBE` bytes is read from `input`, at most `PROBE`
    // bytes are written to `output`.
    let rc = unsafe {
        real::Pack(
            input.as_ptr().cast(),
            1,
            datatype,
            output.as_mut_ptr().cast(),
            PROBE as c_int,
            &mut position,
            abi::predefined().comm_self,
        )
    };
    rc == abi::SUCCESS && position == size && output[..len] == input[..len]
}

/// The bytes `count` elements of a raw datatype of `size` bytes take (`None` on overflow or a
/// negative count).
#[inline]
pub(crate) fn raw_bytes(count: c_int, size: u64) -> Option<usize> {
    usize::try_from(count)
        .ok()?
        .checked_mul(usize::try_from(size).ok()?)
}
