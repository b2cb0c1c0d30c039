//! What a receive got, read from its status: elements, or the bytes of a message ending in a
//! partial element.

use crate::abi::{self, Datatype, Status};
use crate::pmpi::safe;
use crate::record::Piece;
use std::ffi::c_int;

/// What a receive got.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Received {
    /// Its elements (the whole posted count if MPI cannot say).
    pub count: c_int,
    /// The bytes received, when the message ends in a partial element of the datatype
    /// (`MPI_Get_count` is `MPI_UNDEFINED`): only they may be delivered again, and `count`
    /// (the posted count) only bounds them.
    pub partial: Option<u64>,
}

/// What a receive got.
///
/// Read from the status itself where the bytes received are plainly there (see
/// [`count_word`]) and the datatype's size is known (`kind`, what is known of `dest`'s
/// datatype): no call into MPI. Else `MPI_Get_count`.
#[inline]
pub(crate) fn received_count(
    status: &Status,
    dest: &Piece,
    kind: crate::types::DatatypeInfo,
) -> Received {
    if let Some(bytes) = status_bytes(status) {
        let size = kind.size;
        if size > 0 && bytes % size == 0 {
            return Received {
                count: c_int::try_from(bytes / size).map_or(dest.count, |n| n.min(dest.count)),
                partial: None,
            };
        }
    }
    get_count(status, dest)
}

/// The bytes a status says were received, when its count word holds them alone: the other
/// hidden words (the high part of a count of 2 GiB or more, the cancelled flag) are zero.
#[inline]
fn status_bytes(status: &Status) -> Option<u64> {
    let at = count_word()?;
    let bytes = status.as_bytes();
    let word = |i: usize| {
        c_int::from_ne_bytes([
            bytes[4 * i],
            bytes[4 * i + 1],
            bytes[4 * i + 2],
            bytes[4 * i + 3],
        ])
    };
    let clear = (0..abi::STATUS_INTS)
        .filter(|&i| i != at && !is_public(i))
        .all(|i| word(i) == 0);
    let count = word(at);
    (clear && count >= 0).then_some(count as u64)
}

/// Whether word `i` of a status is one of its public fields.
fn is_public(i: usize) -> bool {
    i == abi::STATUS_SOURCE || i == abi::STATUS_TAG || i == abi::STATUS_ERROR
}

/// The word of `MPI_Status` where this MPI keeps the bytes received (MPICH's `count_lo`,
/// Open MPI's low half of `_ucount`), learned once: `MPI_Status_set_elements` with
/// `MPI_BYTE` on zeroed statuses must put each of two counts in that one word alone. `None`
/// when it does not (another layout): receives then ask `MPI_Get_count`.
fn count_word() -> Option<usize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const UNKNOWN: usize = usize::MAX;
    const NONE: usize = usize::MAX - 1;
    static WORD: AtomicUsize = AtomicUsize::new(UNKNOWN);
    let at = match WORD.load(Ordering::Relaxed) {
        UNKNOWN => {
            let at = learn_count_word().unwrap_or(NONE);
            WORD.store(at, Ordering::Relaxed);
            at
        }
        at => at,
    };
    (at != NONE).then_some(at)
}

#[cold]
fn learn_count_word() -> Option<usize> {
    let f = crate::resolve::lookup(c"PMPI_Status_set_elements");
    if f.is_null() {
        return None;
    }
    // SAFETY: `f` is the MPI library's `PMPI_Status_set_elements`, whose C prototype is this.
    let set: unsafe extern "C" fn(*mut Status, Datatype, c_int) -> c_int =
        unsafe { std::mem::transmute(f) };
    let byte = abi::predefined().byte;
    let mut found = None;
    for count in [0x1234_5678, 77] {
        let mut st = Status::zeroed();
        // SAFETY: a valid status to write, a predefined datatype.
        if unsafe { set(&mut st, byte, count) } != abi::SUCCESS {
            return None;
        }
        let bytes = st.as_bytes();
        let words: Vec<c_int> = bytes
            .chunks_exact(4)
            .map(|w| c_int::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let hidden: Vec<usize> = (0..words.len()).filter(|&i| !is_public(i)).collect();
        let at = *hidden.iter().find(|&&i| words[i] == count)?;
        if hidden.iter().any(|&i| i != at && words[i] != 0) || found.is_some_and(|f| f != at) {
            return None;
        }
        found = Some(at);
    }
    found
}

/// `MPI_Get_count`, clamped to the posted count.
#[cold]
fn get_count(status: &Status, dest: &Piece) -> Received {
    if let Ok(n) = safe::get_count(status, dest.datatype) {
        if n != abi::UNDEFINED && n >= 0 {
            return Received {
                count: n.min(dest.count),
                partial: None,
            };
        }
    }
    // A partial element (or MPI cannot say): the bytes, counted as `MPI_BYTE`s.
    let bytes = safe::get_count(status, abi::predefined().byte);
    Received {
        count: dest.count,
        partial: bytes.ok().filter(|&b| b >= 0).map(|b| b as u64),
    }
}
