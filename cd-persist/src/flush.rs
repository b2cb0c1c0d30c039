//! Flushing committed versions to a global directory, and fetching them back.
//!
//! A node-local version survives what its scheme rebuilds; a *flushed* copy in a directory
//! every rank reaches (a parallel file system, `global_dir`) survives the rest. Only the data
//! files are copied: the global directory is trusted to keep them, so no redundancy goes
//! there.
//!
//! ```text
//! <global_dir>/<name>/v00000004/data.<rank>.cdp  each rank's copy (temporary name, fsync,
//!                                                 rename)
//! <global_dir>/<name>/v00000004/FLUSHED          written last, by rank 0, once every copy
//!                                                 is in place
//! ```
//! A flushed version counts only with its `FLUSHED` marker, so a flush cut short by a crash
//! (copies half written, or all written and not marked) never hides the previous flushed
//! version, which is removed only after a newer one is marked (keeping the newest `keep`).
//!
//! # Background flush
//! With `flush=background` the copy runs on a thread of the runtime while the application
//! computes; the thread only copies this rank's file (no MPI call: MPI need not be
//! thread-safe here). The next persist waits for it and completes the flush collectively
//! (every rank's copy in place, then the marker), before it writes anything itself, so the
//! local version being copied cannot be removed under the thread. The flush of the last
//! persist, which no persist follows, is completed in `MPI_Finalize` ([`crate::finalize`]);
//! one cut short by the program dying first is never marked, and so never used.

use crate::inject;
use std::path::{Path, PathBuf};

/// The marker that makes a flushed version count.
const MARKER: &str = "FLUSHED";

/// `<global>/v<version>`.
pub(crate) fn version_dir(global: &Path, version: u64) -> PathBuf {
    crate::version_dir(global, version)
}

/// The flushed versions under `global` (those with their marker), oldest first.
pub(crate) fn flushed_versions(global: &Path) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(global) else {
        return Vec::new();
    };
    let mut out: Vec<u64> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let v = name.strip_prefix('v')?.parse::<u64>().ok()?;
            e.path().join(MARKER).is_file().then_some(v)
        })
        .collect();
    out.sort_unstable();
    out
}

/// Copies `from` to `to` under a temporary name, fsyncs, renames and fsyncs the directory;
/// returns the bytes copied.
pub(crate) fn copy_durable(from: &Path, to: &Path) -> Result<u64, String> {
    let tmp = to.with_extension("cdp.tmp");
    let copied = std::fs::copy(from, &tmp)
        .and_then(|n| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&tmp)?
                .sync_all()
                .map(|_| n)
        })
        .and_then(|n| std::fs::rename(&tmp, to).map(|_| n))
        .and_then(|n| crate::sync_dir(to.parent().unwrap_or(Path::new("."))).map(|_| n));
    copied.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot copy {} to {}: {e}", from.display(), to.display())
    })
}

/// This rank's part of flushing `version`: its data file copied into the global directory
/// (run on the background thread, or by the advance itself). Returns the bytes copied.
pub(crate) fn copy_rank(local_vdir: &Path, global: &Path, version: u64) -> Result<u64, String> {
    let _span = tracing::debug_span!("flush_copy", version).entered();
    let gdir = version_dir(global, version);
    std::fs::create_dir_all(&gdir).map_err(|e| format!("cannot create {}: {e}", gdir.display()))?;
    let from = crate::data_file(local_vdir);
    let to = crate::data_file(&gdir);
    let n = copy_durable(&from, &to)?;
    inject::crash_point("flush-copied", version);
    Ok(n)
}

/// Rank 0's part once every rank's copy is in place: the marker, then the removal of flushed
/// versions older than the newest `keep`.
pub(crate) fn mark(global: &Path, version: u64, ranks: usize, keep: usize) -> Result<(), String> {
    let gdir = version_dir(global, version);
    crate::write_durable(
        &gdir.join(MARKER),
        format!("{version} {ranks}\n").as_bytes(),
    )?;
    let flushed = flushed_versions(global);
    let kept = &flushed[flushed.len().saturating_sub(keep)..];
    let Ok(dir) = std::fs::read_dir(global) else {
        return Ok(());
    };
    for e in dir.filter_map(|e| e.ok()) {
        let old = e
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix('v'))
            .and_then(|n| n.parse::<u64>().ok());
        if old.is_some_and(|u| u < version && !kept.contains(&u)) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    Ok(())
}
