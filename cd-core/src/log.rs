//! The per-CD FIFO of MPI log entries, and its replay cursor.
//!
//! The interposition layer adds an entry per MPI call while a CD is active. `restore_cd` moves
//! the cursor to the first entry; each `get_MPI_log_from_cd` hands out the next one until the log
//! is exhausted, which ends the replay. Entries stay in the log after they are handed out: a
//! second restore replays them again. Adding during a replay is an error (the spec's rule), since
//! the re-executing rank must consume its history before it makes new history.

use crate::error::{CdError, Result};
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

/// One MPI log entry: cheap to clone, immutable.
#[derive(Clone)]
pub struct LogEntry(Arc<dyn LogPayload>);

impl LogEntry {
    /// Wraps a payload.
    pub fn new(payload: impl LogPayload + 'static) -> Self {
        LogEntry(Arc::new(payload))
    }

    /// The entry's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.0.bytes()
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

/// A FIFO of entries with an optional replay cursor.
#[derive(Default)]
pub(crate) struct Log {
    entries: Vec<LogEntry>,
    /// `Some(i)` while replaying: `i` is the next entry to hand out.
    cursor: Option<usize>,
}

impl Log {
    /// Appends an entry; refused while replaying.
    pub(crate) fn push(&mut self, entry: LogEntry) -> Result<()> {
        if self.cursor.is_some() {
            return Err(CdError::LogReplaying);
        }
        if entry.bytes().is_empty() {
            return Err(CdError::EmptyLogEntry);
        }
        self.entries.push(entry);
        Ok(())
    }

    /// The next entry of the replay; `None` (and the replay ends) when exhausted or not replaying.
    pub(crate) fn next(&mut self) -> Option<LogEntry> {
        let i = self.cursor?;
        match self.entries.get(i) {
            Some(entry) => {
                self.cursor = Some(i + 1);
                Some(entry.clone())
            }
            None => {
                self.cursor = None;
                None
            }
        }
    }

    /// Starts a replay from the first entry (after `restore_cd`).
    pub(crate) fn start_replay(&mut self) {
        self.cursor = Some(0);
    }

    /// Whether a replay is in progress.
    pub(crate) fn is_replaying(&self) -> bool {
        self.cursor.is_some()
    }

    /// Drops every entry and ends any replay.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.cursor = None;
    }

    /// Appends a later log (a child's, merged on commit or restore) to this one.
    pub(crate) fn append(&mut self, later: Log) {
        self.entries.extend(later.entries);
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The total size of the entries in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_replay_and_refusal_during_replay() {
        let mut log = Log::default();
        log.push(vec![1].into()).unwrap();
        log.push(vec![2, 2].into()).unwrap();
        assert!(log.next().is_none(), "no replay before restore");
        log.start_replay();
        assert_eq!(log.push(vec![3].into()), Err(CdError::LogReplaying));
        assert_eq!(log.next().unwrap().bytes(), [1]);
        assert_eq!(log.next().unwrap().bytes(), [2, 2]);
        assert!(log.next().is_none());
        assert!(!log.is_replaying());
        log.push(vec![3].into()).unwrap();
        log.start_replay();
        let replayed: Vec<Vec<u8>> = std::iter::from_fn(|| log.next())
            .map(|e| e.bytes().to_vec())
            .collect();
        assert_eq!(replayed, vec![vec![1], vec![2, 2], vec![3]]);
        assert_eq!(log.push(Vec::new().into()), Err(CdError::EmptyLogEntry));
    }
}
