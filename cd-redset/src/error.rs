//! The one error type of the crate.
//!
//! Every fallible operation returns [`Error`]; nothing in this crate calls `MPI_Abort` or panics
//! on bad input or on damaged files. Collective operations agree on success before they return,
//! so every rank of the parent communicator gets an error when one rank fails (the message says
//! which rank and why, where the failing rank shared it).

use std::path::PathBuf;

/// Errors returned by cd-redset.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation on a file failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What we were doing (e.g. "open", "read", "write").
        op: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A kvtree (binary header) could not be parsed.
    #[error("malformed kvtree{}: {reason}", .path.as_ref().map(|p| format!(" in {}", p.display())).unwrap_or_default())]
    KvTree {
        /// The file it came from, if any.
        path: Option<PathBuf>,
        /// What is wrong.
        reason: String,
    },
    /// A header or descriptor lacks a field or holds a value we cannot use.
    #[error("bad header field {field}: {reason}")]
    Header {
        /// Field path, e.g. `DESC/3/FILES`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The caller passed an invalid argument (scheme parameters, file names, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The redundancy scheme cannot rebuild this many losses; nothing was written.
    #[error("cannot rebuild: {0}")]
    Unrecoverable(String),
    /// Some other rank failed; the operation was abandoned collectively.
    #[error("collective operation failed on {failed} rank(s) (first: rank {first}): {message}")]
    Remote {
        /// Number of ranks that reported an error.
        failed: usize,
        /// The lowest failing rank of the parent communicator.
        first: i32,
        /// The error message of that rank.
        message: String,
    },
    /// Data were corrupted (CRC mismatch) and could not be rebuilt.
    #[error("corrupt data in {path}: {reason}")]
    Corrupt {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Io`].
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Builds an [`Error::Header`].
    pub(crate) fn header(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Header {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
