//! Fault injection for the tests of the persist protocol: crash points and failing writes.
//!
//! Crash consistency is proven, not trusted: a test kills the job at every point of a persist
//! where the files on disk change, restarts it, and checks that the restart uses the newest
//! version that was complete and ends bitwise equal to a fault-free run. Root cannot be
//! stopped by file modes and CI cannot mount a small tmpfs, so a full disk and an unwritable
//! cache are injected too: the persist's own writes fail with the kernel's error codes.
//!
//! Both are read once from the environment; unset, each costs one load of a `OnceLock`.
//!
//! # `CD_PERSIST_CRASH_AT=<point>[@<version>][:<rank>]`
//!
//! Kills the process (`SIGKILL`, as a node loss would) when the persist of version
//! `<version>` (any version if not given) reaches `<point>` on rank `<rank>` (every rank if
//! not given). With every rank killed, mpirun sees the job die; with one, mpirun kills the
//! others, wherever they are. The points, in the order a persist passes them ([`POINTS`]):
//!
//! | point | the files on disk | a restart uses |
//! |-------|-------------------|----------------|
//! | `data-written` | this rank's data file written and fsynced under its temporary name | the previous version |
//! | `data-renamed` | the data file renamed into place, no redundancy yet | the previous version |
//! | `redset-applied` | cd-redset's descriptor and redundancy files in place on every rank, no commit marker | the previous version |
//! | `committed` | this rank's commit marker written (others' may be missing) | the new version |
//! | `cleaned` | old versions beyond `keep` removed on this rank | the new version |
//! | `flush-copied` | this rank's copy in the global directory (blocking, or on the background thread), the flush not marked yet | the new version (locally); the flush is not used |
//!
//! # `CD_PERSIST_FAIL_WRITE=<enospc|eacces>[@<n>][:<rank>]`
//!
//! Makes the writes of the `<n>`-th persist of this process (every persist if not given) fail
//! on rank `<rank>` (every rank if not given) with `ENOSPC` ("No space left on device") or
//! `EACCES` ("Permission denied"), as the kernel reports a full disk or an unwritable
//! directory: the data file's and the commit markers' writes (cd-redset's own writes are not
//! reached: the data file fails first). Without `@<n>` the check of the cache directory at
//! `create_cd` fails too (an unwritable cache).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The crash point variable.
pub const CRASH_ENV: &str = "CD_PERSIST_CRASH_AT";
/// The failing-write variable.
pub const FAIL_WRITE_ENV: &str = "CD_PERSIST_FAIL_WRITE";

/// The crash points, in the order a persist passes them (see the module docs).
pub const POINTS: &[&str] = &[
    "data-written",
    "data-renamed",
    "redset-applied",
    "committed",
    "cleaned",
    "flush-copied",
];

/// `<what>[@<number>][:<rank>]`, parsed.
#[derive(Debug, PartialEq, Eq)]
struct Spec {
    what: String,
    number: Option<u64>,
    rank: Option<u32>,
}

fn parse(var: &str, text: &str, allowed: &[&str]) -> Result<Spec, String> {
    let bad = || {
        format!(
            "{var}={text:?}: expected <{}>[@<number>][:<rank>]",
            allowed.join("|")
        )
    };
    let (rest, rank) = match text.split_once(':') {
        Some((r, k)) => (r, Some(k.parse().map_err(|_| bad())?)),
        None => (text, None),
    };
    let (what, number) = match rest.split_once('@') {
        Some((w, n)) => (w, Some(n.parse().map_err(|_| bad())?)),
        None => (rest, None),
    };
    if !allowed.contains(&what) {
        return Err(bad());
    }
    Ok(Spec {
        what: what.to_owned(),
        number,
        rank,
    })
}

type Parsed = Option<Result<Spec, String>>;

fn from_env(var: &str, allowed: &[&str], cell: &'static OnceLock<Parsed>) -> &'static Parsed {
    cell.get_or_init(|| {
        std::env::var(var)
            .ok()
            .filter(|t| !t.is_empty())
            .map(|t| parse(var, &t, allowed))
    })
}

const FAULTS: &[&str] = &["enospc", "eacces"];

fn crash_spec() -> &'static Parsed {
    static CELL: OnceLock<Parsed> = OnceLock::new();
    from_env(CRASH_ENV, POINTS, &CELL)
}

fn fail_spec() -> &'static Parsed {
    static CELL: OnceLock<Parsed> = OnceLock::new();
    from_env(FAIL_WRITE_ENV, FAULTS, &CELL)
}

/// An error naming the variable when either is set to something this module does not know
/// (checked when a persistent CD is created, so that a typo never silently tests nothing).
pub(crate) fn check() -> Result<(), String> {
    for spec in [crash_spec(), fail_spec()] {
        if let Some(Err(e)) = spec {
            return Err(e.clone());
        }
    }
    Ok(())
}

/// Kills this process if `CD_PERSIST_CRASH_AT` names `point` for `version` on this rank.
pub(crate) fn crash_point(point: &str, version: u64) {
    let Some(Ok(spec)) = crash_spec() else {
        return;
    };
    if spec.what == point
        && spec.number.is_none_or(|v| v == version)
        && spec.rank.is_none_or(|r| r == cd_core::rank())
    {
        eprintln!(
            "cd-persist rank {}: {CRASH_ENV}: killed at {point} of version {version}",
            cd_core::rank()
        );
        // SAFETY: kill(2) on our own process id; no memory is involved.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Persists started by this process, counted for `CD_PERSIST_FAIL_WRITE=...@<n>`.
static PERSISTS: AtomicU64 = AtomicU64::new(0);

/// Counts a persist starting (its writes may be made to fail).
pub(crate) fn persist_started() {
    PERSISTS.fetch_add(1, Ordering::Relaxed);
}

/// The error the current persist's writes fail with, if `CD_PERSIST_FAIL_WRITE` asks so.
pub(crate) fn write_fault() -> std::io::Result<()> {
    let Some(Ok(spec)) = fail_spec() else {
        return Ok(());
    };
    let n = PERSISTS.load(Ordering::Relaxed);
    if spec.number.is_none_or(|k| k == n) && spec.rank.is_none_or(|r| r == cd_core::rank()) {
        let code = if spec.what == "enospc" {
            libc::ENOSPC
        } else {
            libc::EACCES
        };
        return Err(std::io::Error::from_raw_os_error(code));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(
            parse("V", "committed@6:1", POINTS),
            Ok(Spec {
                what: "committed".into(),
                number: Some(6),
                rank: Some(1)
            })
        );
        assert_eq!(
            parse("V", "enospc", FAULTS),
            Ok(Spec {
                what: "enospc".into(),
                number: None,
                rank: None
            })
        );
        let err = parse("V", "halfway@x", POINTS).unwrap_err();
        assert!(
            err.contains("V=\"halfway@x\": expected <data-written|"),
            "{err}"
        );
        assert!(parse("V", "committed@x", POINTS).is_err());
        assert!(parse("V", "enospc:one", FAULTS).is_err());
    }
}
