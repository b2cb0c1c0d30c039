//! The public record type, [`LogEntry`]: a record in an arena chunk, or a payload handed over
//! whole (`add_MPI_log_to_cd`, which `get_MPI_log_from_cd` must return as is). A file of its
//! own because it is the one log type other crates hold: the C layer wraps its `malloc`'d
//! buffers in [`LogPayload`].

use super::chunk::Chunk;
use crate::memory;
use std::sync::Arc;

/// The bytes of one log entry, owned by the CD once added.
///
/// The C layer implements this for the `malloc`'d buffer it is handed (freed on drop); Rust
/// callers use `Vec<u8>`.
pub trait LogPayload: Send + Sync {
    /// The entry's bytes.
    fn bytes(&self) -> &[u8];
}

impl LogPayload for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl LogPayload for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// One MPI log record: cheap to clone, immutable. It keeps the memory it points into alive
/// (its arena chunk, or the payload it was made from), so its bytes outlive the log.
#[derive(Clone)]
pub struct LogEntry(Repr);

#[derive(Clone)]
enum Repr {
    /// A record in an arena chunk: `len` bytes at `start`.
    Arena {
        chunk: Arc<Chunk>,
        start: usize,
        len: usize,
    },
    /// An entry added as a payload of its own.
    Payload(Arc<dyn LogPayload>),
}

impl LogEntry {
    /// The record of `len` bytes at `start` of `chunk`.
    pub(super) fn arena(chunk: Arc<Chunk>, start: usize, len: usize) -> Self {
        LogEntry(Repr::Arena { chunk, start, len })
    }

    /// Wraps a payload: the log keeps it as is (no copy), and [`LogEntry::bytes`] of every clone
    /// points into it.
    pub fn new(payload: impl LogPayload + 'static) -> Self {
        let len = payload.bytes().len();
        memory::charge(memory::Use::Logs, len);
        LogEntry(Repr::Payload(Arc::new(Counted { payload, len })))
    }

    /// The entry's bytes (8-byte aligned for records written by `log_append*`).
    pub fn bytes(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: `start .. start + len` is a record the log wrote before handing it out and
            // never writes again (appends only go past a lane's published end), inside the
            // chunk, which this entry keeps alive.
            Repr::Arena { chunk, start, len } => unsafe { chunk.slice(*start, *len) },
            Repr::Payload(payload) => payload.bytes(),
        }
    }
}

/// A handed-over entry, counted in the bytes the runtime holds in logs while it lives.
struct Counted<P> {
    payload: P,
    len: usize,
}

impl<P: LogPayload> LogPayload for Counted<P> {
    fn bytes(&self) -> &[u8] {
        self.payload.bytes()
    }
}

impl<P> Drop for Counted<P> {
    fn drop(&mut self) {
        memory::release(memory::Use::Logs, self.len);
    }
}

impl From<Vec<u8>> for LogEntry {
    fn from(bytes: Vec<u8>) -> Self {
        LogEntry::new(bytes)
    }
}

impl std::fmt::Debug for LogEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LogEntry({} bytes)", self.bytes().len())
    }
}
