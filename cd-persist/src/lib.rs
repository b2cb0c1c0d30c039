//! Persistent root CDs: every advance of a root CD whose `storage_info` sets `dir` writes a new
//! *version* of its store to node-local storage, protected across ranks by cd-redset; after the
//! job is killed and restarted (a node's cache possibly gone), `create_cd` with the same name
//! finds the newest complete version, rebuilds the lost ranks' files and `restore_cd` loads it.
//!
//! # Why a crate of its own
//! cd-core knows nothing of MPI or files, and cd-redset nothing of CDs (DESIGN.md). This crate
//! joins them: it reads a CD's saved entries through cd-core's accessors and protects the files
//! it writes with cd-redset. It is not part of cd-mpi-intercept because nothing here is PMPI
//! interposition: the interposer only registers [`created`], [`advanced`] and
//! [`before_restore`] as cd-core's [`cd_core::PersistHooks`] at `MPI_Init` and runs them as
//! its own untraced traffic. Kept apart, the format and the version rules are tested without
//! the interposer, and the interposer's crate stays about message logging.
//!
//! # The rule for applications
//! Creating and advancing a persistent root CD are collective over `MPI_COMM_WORLD`: every
//! rank creates and advances its persistent root CDs in the same order. A persistent CD needs a
//! name: a restart finds its versions by (name, rank; depth 0 and sibling index 0 for a root).
//!
//! # Layout (per rank, under its cache directory `dir`, `{rank}` expanded)
//! ```text
//! <dir>/<name>/v00000007/data.<rank>.cdp          this rank's entries (see `format`)
//! <dir>/<name>/v00000007/redset.<rank>.redset     cd-redset's descriptor and redundancy files
//! <dir>/<name>/v00000007/redset.<rank>.xor.grp_1_of_1.mem_2_of_4.redset
//! <dir>/<name>/v00000007/COMMIT.<rank>            the commit marker, written last
//! <global_dir>/<name>/v00000006/data.<rank>.cdp   a flushed copy (see `flush`)
//! <global_dir>/<name>/v00000006/FLUSHED           its marker, written last by rank 0
//! ```
//! A persist writes the data file (temporary name, fsync, rename), applies cd-redset to it,
//! and only when every rank succeeded writes the commit markers. Any rank's marker proves the
//! version complete (none is written before all ranks' data and redundancy are in place), so
//! a restart picks the newest version that has a marker anywhere, recovers it with cd-redset
//! (rebuilding what was lost), and falls back to older marked versions if that fails. Old
//! versions are deleted only after a newer one is committed, keeping the newest `keep`.
//! A restart's recover reads every byte of the version once (cd-redset's `verify`): a data
//! file whose CRC32C does not match counts as lost, like a missing one, and is rebuilt from
//! the redundancy data (and this crate's own per-chunk CRCs check it again as it is loaded).
//! That the version rules hold at every step is tested by killing the job there: the crash points
//! of [`inject`] (`CD_PERSIST_CRASH_AT`) name them, with the version a restart then uses.
//!
//! # Flush and fetch
//! With `global_dir` set, every `flush_every`-th committed version is also copied to that
//! global directory (module `flush`: blocking, or on a thread of the runtime in the background).
//! A restart tries the candidates newest first, local committed versions and flushed ones
//! alike: a local one is rebuilt with the scheme; when that cannot succeed (more losses than
//! the scheme rebuilds, or damage beyond it) and the version was flushed, it is fetched, its
//! CRCs checked, and protected again with the scheme so that it is a local version like any
//! other; else the next older candidate is tried. When none is left, `create_cd` fails on
//! every rank with an error that says what was tried; it never starts fresh on its own.
//!
//! # Consistency: proven, not trusted
//! A version is a consistent cut only if no application message is in flight across it (a
//! message sent before one rank's advance and received after another's). The first thing a
//! persist does, inside its collective step and before it writes anything, is the check of
//! module `consistency`: every rank's per-peer message counts, which the MPI interposer keeps
//! ([`Traffic`], handed to [`advanced`]), are exchanged and compared pair by pair, and pending
//! receives and nonblocking collectives are looked for. If anything is in flight, every rank's
//! advance returns [`CdError::PersistInFlight`] with the same message (a pair of ranks and
//! their counts), no version is written, and the previous one stays the newest complete
//! version; the next advance tries again. The counts are exact when counting began at
//! `MPI_Init` (`CD_STORAGE_INFO` sets `dir`: the job declared persistence); when it began at
//! the first persistent `create_cd`, a message sent before that is not seen, so such a check
//! is counted as unproven (`persist.unproven` in `CD_MPI_STATS`) and reported once through
//! `tracing`.
//!
//! # A replacement in the job
//! In a ULFM job the MPI interposer replaces a lost rank without a relaunch; the replacement's
//! files are rebuilt by module [`replacement`], collectively with the survivors, before its
//! application reaches `create_cd`, which then takes that version without a collective step.
//!
//! # Statistics
//! [`stats`] counts persists, recovers, fetches and flushes (time and bytes) for
//! `CD_MPI_STATS`.
//!
//! # Points in time
//! The first version is written by the first advance: at `create_cd` the CD holds no entries
//! yet (ranges are added after it), so create only checks the cache directory on every rank
//! and recovers what an earlier run persisted. The recovered version is loaded into the CD's
//! store by the next `restore_cd` (local, by the entries' order, kind and length); an advance
//! before that restore drops it.

mod consistency;
mod flush;
mod format;
pub mod inject;
pub mod inspect;
mod mpi_util;
pub mod replacement;
pub mod stats;

pub use consistency::Traffic;

use cd_core::{CdError, CdHandle, PersistScheme, PersistSettings};
use cd_redset::{Options, Redset, Scheme};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread::JoinHandle;

use mpi_util::{agree, max_u64};

/// A background flush under way: the version, and the thread copying this rank's file.
struct Flushing {
    version: u64,
    thread: JoinHandle<Result<u64, String>>,
}

/// What this process knows of one persistent CD.
struct Persisted {
    /// `<dir>/<name>` for this rank.
    base: PathBuf,
    /// `<global_dir>/<name>`, when the CD flushes.
    global: Option<PathBuf>,
    settings: PersistSettings,
    /// The `storage_info` the CD was created with (a replacement is told it: [`rebuild`]).
    storage_info: String,
    /// A recovered version not yet loaded by `restore_cd`.
    pending: Option<u64>,
    /// The background flush the next persist completes.
    flushing: Option<Flushing>,
}

static CDS: Mutex<Option<HashMap<CdHandle, Persisted>>> = Mutex::new(None);

fn with_cds<R>(f: impl FnOnce(&mut HashMap<CdHandle, Persisted>) -> R) -> R {
    let mut guard = CDS.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(HashMap::new))
}

fn err(msg: impl Into<String>) -> CdError {
    CdError::Persist(msg.into())
}

fn rank() -> u32 {
    cd_core::rank()
}

pub(crate) fn version_dir(base: &Path, version: u64) -> PathBuf {
    base.join(format!("v{version:08}"))
}

pub(crate) fn data_file(vdir: &Path) -> PathBuf {
    vdir.join(format!("data.{}.cdp", rank()))
}

pub(crate) fn redset_prefix(vdir: &Path) -> String {
    format!("{}/redset.", vdir.display())
}

/// cd-core's [`PersistScheme`] (what `storage_info` asked for) as cd-redset's [`Scheme`].
///
/// Two enums on purpose, with this one bridge between them: DESIGN.md keeps cd-core free of
/// MPI and cd-redset free of CDs, so neither crate can name the other's type, and cd-persist is
/// the one crate that sees both (a third crate below both would hold nothing but this enum,
/// while `Scheme`'s methods are cd-redset's file format). The bridge cannot drift: it is total
/// both ways by exhaustive matches ([`persist_scheme`] is its inverse), so a variant added to
/// either enum does not compile until it is mapped here, and the tests check that the round
/// trip is the identity and that `storage_info`'s scheme names are cd-redset's file tags.
pub fn redset_scheme(s: PersistScheme) -> Scheme {
    match s {
        PersistScheme::Single => Scheme::Single,
        PersistScheme::Partner { replicas } => Scheme::Partner { replicas },
        PersistScheme::Xor => Scheme::Xor,
        PersistScheme::Rs { checksums } => Scheme::Rs { checksums },
    }
}

/// cd-redset's [`Scheme`] as the [`PersistScheme`] of `storage_info` (the inverse of
/// [`redset_scheme`]), e.g. to say which `scheme=` a redundancy descriptor was written with.
pub fn persist_scheme(s: Scheme) -> PersistScheme {
    match s {
        Scheme::Single => PersistScheme::Single,
        Scheme::Partner { replicas } => PersistScheme::Partner { replicas },
        Scheme::Xor => PersistScheme::Xor,
        Scheme::Rs { checksums } => PersistScheme::Rs { checksums },
    }
}

/// `{rank}` and `{rank/N}` replaced by this rank (cd-redset's failure-group template rules).
fn expand(template: &str) -> String {
    cd_redset::descriptor::failure_group_name(Some(template), rank() as usize)
}

/// This rank's versions under `base`: (number, whether any commit marker is there).
fn local_versions(base: &Path) -> Vec<(u64, bool)> {
    let Ok(dir) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, bool)> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let v = name.strip_prefix('v')?.parse::<u64>().ok()?;
            let marked = std::fs::read_dir(e.path()).ok()?.any(|f| {
                f.ok()
                    .and_then(|f| f.file_name().into_string().ok())
                    .is_some_and(|n| n.starts_with("COMMIT."))
            });
            Some((v, marked))
        })
        .collect();
    out.sort_unstable();
    out
}

/// Writes `path` with `bytes` under a temporary name, fsyncs, renames and fsyncs the directory.
pub(crate) fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    // `<name>.tmp`, never with_extension: `.probe.3` and `COMMIT.3` would lose their rank
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let res = inject::write_fault()
        .and_then(|_| std::fs::File::create(&tmp))
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path))
        .and_then(|_| sync_dir(path.parent().unwrap_or(Path::new("."))));
    res.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world().duplicate()
}

/// Checks that `dir` (the value of `key`) is a writable directory and makes `<dir>/<name>`.
fn prepare_dir(key: &str, dir: &Path, name: &str) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err(format!(
            "key \"{key}\": the directory {} does not exist or is not a directory",
            dir.display()
        ));
    }
    let base = dir.join(name);
    std::fs::create_dir_all(&base).map_err(|e| {
        format!(
            "key \"{key}\": cannot create {} in the directory: {e}",
            base.display()
        )
    })?;
    let probe = base.join(format!(".probe.{}", rank()));
    write_durable(&probe, b"")
        .and_then(|_| std::fs::remove_file(&probe).map_err(|e| e.to_string()))
        .map_err(|e| format!("key \"{key}\": the directory is not writable: {e}"))?;
    Ok(base)
}

/// `<dir>/<name>` for this rank and `<global_dir>/<name>` when the CD flushes, checked and
/// made (local).
fn cache_dirs(
    settings: &PersistSettings,
    name: &str,
) -> Result<(PathBuf, Option<PathBuf>), String> {
    let base = prepare_dir("dir", Path::new(&expand(&settings.dir)), name)?;
    let global = match &settings.flush {
        Some(f) => Some(prepare_dir("global_dir", Path::new(&f.dir), name)?),
        None => None,
    };
    Ok((base, global))
}

/// cd-core's `created` hook: checks the cache directory (and the global one) on every rank,
/// then recovers the newest complete version, if any (collective).
///
/// Candidates are the versions committed locally on some rank and the flushed ones, newest
/// first: a local one is rebuilt with the scheme where needed; when that fails (too many
/// losses, or damage beyond the scheme) and the version was flushed, it is fetched from the
/// global directory; else the next older candidate is tried.
pub fn created(cd: CdHandle) -> cd_core::Result<Option<u64>> {
    let info = cd_core::cd_info(cd)?;
    let settings = info
        .storage_info
        .persist()?
        .ok_or_else(|| err("the CD is not persistent"))?;
    if let Some(name) = &info.name {
        if let Some(v) = replacement::take_prepared(name) {
            return replacement::created(cd, name, settings, info.storage_info.to_string(), v);
        }
    }
    let comm = world();
    let local = (|| {
        inject::check()?;
        let name = info.name.clone().ok_or_else(|| {
            "a persistent CD needs a name (create_cd's name): a restart finds it by name".to_owned()
        })?;
        cache_dirs(&settings, &name)
    })();
    let (base, global) = agree(&comm, local).map_err(err)?;
    let mut limit = u64::MAX;
    let mut last_error = String::new();
    let recovered = loop {
        let local_newest = local_versions(&base)
            .into_iter()
            .filter(|&(v, marked)| marked && v < limit)
            .map(|(v, _)| v)
            .max()
            .unwrap_or(0);
        let flushed_newest = global.as_deref().map_or(0, |g| {
            flush::flushed_versions(g)
                .into_iter()
                .filter(|&v| v < limit)
                .max()
                .unwrap_or(0)
        });
        let local_newest = max_u64(&comm, local_newest);
        let flushed_newest = max_u64(&comm, flushed_newest);
        let candidate = local_newest.max(flushed_newest);
        if candidate == 0 {
            if !last_error.is_empty() {
                let fallback = match &global {
                    Some(g) => format!("and {} holds no flushed version to fetch", g.display()),
                    None => "and no global directory (key \"global_dir\") holds a flushed copy"
                        .to_owned(),
                };
                return Err(err(format!(
                    "CD {:?}: persisted versions exist but none can be recovered {fallback}; \
                     remove {} on every node to start fresh (the last tried: {last_error})",
                    info.name.unwrap_or_default(),
                    base.display()
                )));
            }
            break None;
        }
        let mut outcome: Result<u64, String> = Err(String::new());
        if candidate == local_newest {
            outcome = stats::timed(stats::Op::Recover, || {
                recover_version(&comm, &base, candidate)
            });
        }
        if let (Err(e), Some(g)) = (&outcome, &global) {
            if candidate == flushed_newest {
                if !e.is_empty() {
                    tracing::warn!(version = candidate, error = %e, "fetching the flushed copy");
                }
                outcome = stats::timed(stats::Op::Fetch, || {
                    fetch_version(&comm, &base, g, candidate, &settings)
                });
            }
        }
        match outcome {
            Ok(_) => break Some(candidate),
            Err(e) => {
                tracing::warn!(version = candidate, error = %e, "persisted version not recoverable");
                last_error = format!("version {candidate}: {e}");
                limit = candidate;
            }
        }
    };
    with_cds(|cds| {
        cds.insert(
            cd,
            Persisted {
                base,
                global,
                settings,
                storage_info: info.storage_info.to_string(),
                pending: recovered,
                flushing: None,
            },
        )
    });
    Ok(recovered)
}

/// Rebuilds version `v` where needed and checks this rank's store (collective); returns the
/// bytes of this rank's data file.
fn recover_version(comm: &SimpleCommunicator, base: &Path, v: u64) -> Result<u64, String> {
    let vdir = version_dir(base, v);
    let made = std::fs::create_dir_all(&vdir).map_err(|e| format!("{}: {e}", vdir.display()));
    agree(comm, made)?;
    let recovered = Redset::recover(comm, &redset_prefix(&vdir), Options::default())
        .map(drop)
        .map_err(|e| e.to_string());
    agree(comm, recovered)?;
    let checked = format::StoreFile::open(&data_file(&vdir)).and_then(|store| {
        let marker = vdir.join(format!("COMMIT.{}", rank()));
        if marker.exists() {
            Ok(store.size())
        } else {
            write_durable(&marker, format!("{v}\n").as_bytes()).map(|_| store.size())
        }
    });
    agree(comm, checked)
}

/// Fetches flushed version `v` from `global` into the local cache, checks every CRC, and
/// protects it again with the scheme, so that it is a complete local version like any other
/// (collective). Returns the bytes of this rank's data file.
fn fetch_version(
    comm: &SimpleCommunicator,
    base: &Path,
    global: &Path,
    v: u64,
    settings: &PersistSettings,
) -> Result<u64, String> {
    let vdir = version_dir(base, v);
    let fetched = (|| {
        // what is left of the local version is not trusted: its rebuild failed
        if vdir.exists() {
            std::fs::remove_dir_all(&vdir)
                .map_err(|e| format!("cannot clear {}: {e}", vdir.display()))?;
        }
        std::fs::create_dir_all(&vdir).map_err(|e| format!("{}: {e}", vdir.display()))?;
        let from = data_file(&flush::version_dir(global, v));
        let n = flush::copy_durable(&from, &data_file(&vdir))?;
        format::StoreFile::open(&data_file(&vdir))?.verify()?;
        Ok(n)
    })();
    let n = agree(comm, fetched).map_err(|e| {
        format!(
            "fetching flushed version {v} from {}: {e}",
            global.display()
        )
    })?;
    protect_and_commit(comm, &vdir, v, settings)?;
    Ok(n)
}

/// Applies the scheme to the data file of version `v` in `vdir` (written on every rank) and
/// writes the commit markers (collective).
fn protect_and_commit(
    comm: &SimpleCommunicator,
    vdir: &Path,
    v: u64,
    settings: &PersistSettings,
) -> Result<(), String> {
    let rs = Redset::create(
        comm,
        redset_scheme(settings.scheme),
        settings.set_size,
        settings.failure_group.as_deref(),
        Options::default(),
    )
    .map_err(|e| format!("cd-redset: {e}"))?;
    rs.apply(&[data_file(vdir)], &redset_prefix(vdir))
        .map_err(|e| format!("cd-redset: {e}"))?;
    inject::crash_point("redset-applied", v);
    let marker = vdir.join(format!("COMMIT.{}", rank()));
    let marked = write_durable(&marker, format!("{v}\n").as_bytes());
    if marked.is_ok() {
        inject::crash_point("committed", v);
    }
    agree(comm, marked)
}

/// What a relaunch of the job restores, in words, for the line a rank writes when a process
/// loss ends the job: each persistent CD of this process with the newest complete version on
/// this rank's disk and its scheme; `None` when this process has no persistent CD.
pub fn describe() -> Option<String> {
    let parts: Vec<String> = with_cds(|cds| {
        cds.values()
            .map(|p| {
                let name = p.base.file_name().map_or_else(
                    || p.base.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                let scheme = match p.settings.scheme {
                    PersistScheme::Single => "single".to_owned(),
                    PersistScheme::Partner { replicas } => format!("partner, {replicas} copies"),
                    PersistScheme::Xor => "xor".to_owned(),
                    PersistScheme::Rs { checksums } => format!("rs, {checksums} checksums"),
                };
                let newest = local_versions(&p.base)
                    .into_iter()
                    .filter(|&(_, marked)| marked)
                    .map(|(v, _)| v)
                    .max();
                match newest {
                    Some(v) => format!("CD \"{name}\" from version {v} ({scheme})"),
                    None => format!("CD \"{name}\" from its start (no version complete yet)"),
                }
            })
            .collect()
    });
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Completes every background flush still under way (collective over the job): called in
/// `MPI_Finalize`, before the MPI library finalizes. Without it the version the last persist
/// started flushing would never be marked, and a restart could not fetch it. Every rank
/// flushes the same versions of the same CDs, so every rank has the same flushes under way and
/// completes them in the same order (by global directory). Failures are reported through
/// `tracing`: the program is ending, and the previous flushed version stays usable.
pub fn finalize() {
    let mut pending: Vec<(PathBuf, CdHandle)> = with_cds(|cds| {
        cds.iter()
            .filter(|(_, p)| p.flushing.is_some())
            .filter_map(|(cd, p)| Some((p.global.clone()?, *cd)))
            .collect()
    });
    if pending.is_empty() {
        return;
    }
    pending.sort_by(|a, b| a.0.cmp(&b.0));
    let comm = world();
    for (global, cd) in pending {
        if let Err(error) = stats::timed(stats::Op::FlushWait, || complete_flush(&comm, cd)) {
            tracing::warn!(global = %global.display(), %error, "the last background flush failed");
        }
    }
}

/// Completes the background flush under way, if any (collective): waits for this rank's
/// copy, then rank 0 marks the version once every rank's copy is in place.
fn complete_flush(comm: &SimpleCommunicator, cd: CdHandle) -> Result<(), String> {
    let Some((flushing, global, keep)) = with_cds(|cds| {
        cds.get_mut(&cd).and_then(|p| {
            let f = p.flushing.take()?;
            Some((f, p.global.clone()?, p.settings.keep))
        })
    }) else {
        // every rank flushes the same versions, so none has one under way either
        return Ok(());
    };
    let v = flushing.version;
    let copied = flushing
        .thread
        .join()
        .unwrap_or_else(|_| Err("the flush thread panicked".to_owned()));
    if let Ok(n) = copied {
        stats::add_bytes(stats::Op::Flush, n);
    }
    finish_flush(comm, &global, v, keep, copied.map(drop))
}

/// Agrees on every rank's copy of version `v`, then rank 0 marks it (collective).
fn finish_flush(
    comm: &SimpleCommunicator,
    global: &Path,
    v: u64,
    keep: usize,
    copied: Result<(), String>,
) -> Result<(), String> {
    agree(comm, copied)
        .and_then(|_| {
            let marked = if comm.rank() == 0 {
                flush::mark(global, v, comm.size() as usize, keep)
            } else {
                Ok(())
            };
            agree(comm, marked)
        })
        .map_err(|e| format!("flushing version {v} to {} failed: {e}", global.display()))
}

/// cd-core's `advanced` hook: persists the CD's point in time as a new version, and flushes
/// it when asked (collective). `traffic` gives this rank's message counts (the interposer's):
/// if they show an application message in flight, the persist is refused on every rank with
/// [`CdError::PersistInFlight`] and nothing is written (see the crate docs).
pub fn advanced(cd: CdHandle, traffic: fn() -> Traffic) -> cd_core::Result<()> {
    let _span = tracing::debug_span!("persist", ?cd).entered();
    let (base, global, settings) = with_cds(|cds| {
        cds.get_mut(&cd).map(|p| {
            p.pending = None;
            (p.base.clone(), p.global.clone(), p.settings.clone())
        })
    })
    .ok_or_else(|| err("the CD was not prepared for persistence at create"))?;
    let comm = world();
    let checked = std::time::Instant::now();
    let counts = traffic();
    let verdict = consistency::check(&comm, &counts);
    stats::record(stats::Op::Check, checked.elapsed(), 0);
    if let Err(words) = verdict {
        stats::refused();
        tracing::warn!(%words, "persist refused: application traffic in flight");
        return Err(CdError::PersistInFlight(format!(
            "{words}; no version was written and the previous one stays the newest: advance \
             again once every message sent has been received and every request completed"
        )));
    }
    if !counts.since_init {
        stats::unproven();
    }
    // the previous background flush first: its local version may be removed below
    let flushed = stats::timed(stats::Op::FlushWait, || complete_flush(&comm, cd));
    inject::persist_started();
    let started = std::time::Instant::now();
    let newest = local_versions(&base).last().map_or(0, |&(v, _)| v);
    let v = max_u64(&comm, newest) + 1;
    let vdir = version_dir(&base, v);
    let written = std::fs::create_dir_all(&vdir)
        .map_err(|e| format!("cannot create {}: {e}", vdir.display()))
        .and_then(|_| {
            cd_core::with_saved_entries(cd, |entries| {
                format::write_store(&data_file(&vdir), rank(), v, entries)
            })
            .map_err(|e| e.to_string())
            .and_then(|r| r)
        })
        .and_then(|n| {
            sync_dir(&vdir)
                .map(|_| n)
                .map_err(|e| format!("{}: {e}", vdir.display()))
        });
    inject::crash_point("data-renamed", v);
    let result = agree(&comm, written)
        .and_then(|n| protect_and_commit(&comm, &vdir, v, &settings).map(|_| n));
    let bytes = match result {
        Ok(n) => n,
        Err(e) => {
            // an incomplete version is never used; the previous complete one stays
            let _ = std::fs::remove_dir_all(&vdir);
            let also = flushed.err().map(|f| format!("; {f}")).unwrap_or_default();
            return Err(err(format!("persisting version {v} failed: {e}{also}")));
        }
    };
    stats::record(stats::Op::Persist, started.elapsed(), bytes);
    // Version v is complete on every rank: older versions beyond the newest `keep` go.
    let complete: Vec<u64> = local_versions(&base)
        .into_iter()
        .filter(|&(u, marked)| marked && u <= v)
        .map(|(u, _)| u)
        .collect();
    let kept = &complete[complete.len().saturating_sub(settings.keep)..];
    for (u, _) in local_versions(&base) {
        if u < v && !kept.contains(&u) {
            let _ = std::fs::remove_dir_all(version_dir(&base, u));
        }
    }
    inject::crash_point("cleaned", v);
    if let (Some(f), Some(global)) = (&settings.flush, global) {
        if v.is_multiple_of(f.every) {
            if f.background {
                let thread = std::thread::Builder::new()
                    .name("cd-persist-flush".to_owned())
                    .spawn(move || flush::copy_rank(&vdir, &global, v))
                    .map_err(|e| err(format!("cannot start the flush thread: {e}")))?;
                with_cds(|cds| {
                    if let Some(p) = cds.get_mut(&cd) {
                        p.flushing = Some(Flushing { version: v, thread });
                    }
                });
            } else {
                stats::timed(stats::Op::Flush, || {
                    let copied = flush::copy_rank(&vdir, &global, v);
                    let n = *copied.as_ref().unwrap_or(&0);
                    finish_flush(&comm, &global, v, settings.keep, copied.map(drop)).map(|_| n)
                })
                .map_err(err)?;
            }
        }
    }
    flushed.map_err(|e| err(format!("version {v} persisted, but {e}")))
}

/// cd-core's `before_restore` hook: loads a recovered version into the CD's store (local).
pub fn before_restore(cd: CdHandle) -> cd_core::Result<()> {
    let Some((base, v)) = with_cds(|cds| {
        cds.get(&cd)
            .and_then(|p| p.pending.map(|v| (p.base.clone(), v)))
    }) else {
        return Ok(());
    };
    let mut store = format::StoreFile::open(&data_file(&version_dir(&base, v))).map_err(err)?;
    let persisted = store.entries.clone();
    cd_core::load_saved_entries(cd, &persisted, |i, dst| store.read_entry(i, dst))?;
    with_cds(|cds| {
        if let Some(p) = cds.get_mut(&cd) {
            p.pending = None;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cd_core::StorageInfo;

    /// Every scheme `storage_info` can name, with its key, and the one cd-redset builds from it.
    #[test]
    fn storage_info_schemes_are_redset_schemes_and_back() {
        let cases = [
            ("single", "", Scheme::Single),
            ("partner", ";replicas=3", Scheme::Partner { replicas: 3 }),
            ("xor", "", Scheme::Xor),
            ("rs", ";checksums=2", Scheme::Rs { checksums: 2 }),
        ];
        for (name, extra, expected) in cases {
            let text = format!("dir=/d;scheme={name}{extra}");
            let settings = StorageInfo::parse(&text)
                .and_then(|info| info.persist())
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .expect("dir makes it persistent");
            let scheme = redset_scheme(settings.scheme);
            assert_eq!(scheme, expected, "{text}");
            assert_eq!(
                scheme.file_tag(),
                name,
                "storage_info's name is the file tag"
            );
            assert_eq!(
                persist_scheme(scheme),
                settings.scheme,
                "round trip of {name}"
            );
        }
    }
}
