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
//! That the version rules hold at every step is tested by killing the job there: the crash points of
//! [`inject`] (`CD_PERSIST_CRASH_AT`) name them, with the version a restart then uses.
//!
//! # Points in time
//! The first version is written by the first advance: at `create_cd` the CD holds no entries
//! yet (ranges are added after it), so create only checks the cache directory on every rank
//! and recovers what an earlier run persisted. The recovered version is loaded into the CD's
//! store by the next `restore_cd` (local, by the entries' order, kind and length); an advance
//! before that restore drops it.

mod format;
pub mod inject;
mod mpi_util;

use cd_core::{CdError, CdHandle, PersistScheme, PersistSettings};
use cd_redset::{Options, Redset, Scheme};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mpi_util::{agree, max_u64};

/// What this process knows of one persistent CD.
struct Persisted {
    /// `<dir>/<name>` for this rank.
    base: PathBuf,
    settings: PersistSettings,
    /// A recovered version not yet loaded by `restore_cd`.
    pending: Option<u64>,
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

fn version_dir(base: &Path, version: u64) -> PathBuf {
    base.join(format!("v{version:08}"))
}

fn data_file(vdir: &Path) -> PathBuf {
    vdir.join(format!("data.{}.cdp", rank()))
}

fn redset_prefix(vdir: &Path) -> String {
    format!("{}/redset.", vdir.display())
}

fn scheme_of(s: PersistScheme) -> Scheme {
    match s {
        PersistScheme::Single => Scheme::Single,
        PersistScheme::Partner { replicas } => Scheme::Partner { replicas },
        PersistScheme::Xor => Scheme::Xor,
        PersistScheme::Rs { checksums } => Scheme::Rs { checksums },
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
fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let res = inject::write_fault()
        .and_then(|_| std::fs::File::create(&tmp))
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path))
        .and_then(|_| sync_dir(path.parent().unwrap_or(Path::new("."))));
    res.map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world().duplicate()
}

/// cd-core's `created` hook: checks the cache directory on every rank, then recovers the
/// newest complete version, if any (collective).
pub fn created(cd: CdHandle) -> cd_core::Result<Option<u64>> {
    let info = cd_core::cd_info(cd)?;
    let settings = info
        .storage_info
        .persist()?
        .ok_or_else(|| err("the CD is not persistent"))?;
    let comm = world();
    let local = (|| {
        inject::check()?;
        let name = info.name.clone().ok_or_else(|| {
            "a persistent CD needs a name (create_cd's name): a restart finds it by name".to_owned()
        })?;
        let dir = PathBuf::from(expand(&settings.dir));
        if !dir.is_dir() {
            return Err(format!(
                "key \"dir\": the cache directory {} does not exist or is not a directory",
                dir.display()
            ));
        }
        let base = dir.join(&name);
        std::fs::create_dir_all(&base).map_err(|e| {
            format!(
                "key \"dir\": cannot create {} in the cache directory: {e}",
                base.display()
            )
        })?;
        let probe = base.join(format!(".probe.{}", rank()));
        write_durable(&probe, b"")
            .and_then(|_| std::fs::remove_file(&probe).map_err(|e| e.to_string()))
            .map_err(|e| format!("key \"dir\": the cache directory is not writable: {e}"))?;
        Ok(base)
    })();
    let base = agree(&comm, local).map_err(err)?;
    let mut limit = u64::MAX;
    let mut last_error = String::new();
    let recovered = loop {
        let mine = local_versions(&base)
            .into_iter()
            .filter(|&(v, marked)| marked && v < limit)
            .map(|(v, _)| v)
            .max()
            .unwrap_or(0);
        let candidate = max_u64(&comm, mine);
        if candidate == 0 {
            if !last_error.is_empty() {
                return Err(err(format!(
                    "CD {:?}: persisted versions exist but none can be recovered (last: \
                     {last_error}); remove {} on every node to start fresh",
                    info.name.unwrap_or_default(),
                    base.display()
                )));
            }
            break None;
        }
        match recover_version(&comm, &base, candidate) {
            Ok(()) => break Some(candidate),
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
                settings,
                pending: recovered,
            },
        )
    });
    Ok(recovered)
}

/// Rebuilds version `v` where needed and checks this rank's store (collective).
fn recover_version(comm: &SimpleCommunicator, base: &Path, v: u64) -> Result<(), String> {
    let vdir = version_dir(base, v);
    let made = std::fs::create_dir_all(&vdir).map_err(|e| format!("{}: {e}", vdir.display()));
    agree(comm, made)?;
    let recovered = Redset::recover(comm, &redset_prefix(&vdir), Options::default())
        .map(drop)
        .map_err(|e| e.to_string());
    agree(comm, recovered)?;
    let checked = format::StoreFile::open(&data_file(&vdir)).and_then(|_| {
        let marker = vdir.join(format!("COMMIT.{}", rank()));
        if marker.exists() {
            Ok(())
        } else {
            write_durable(&marker, format!("{v}\n").as_bytes())
        }
    });
    agree(comm, checked)
}

/// cd-core's `advanced` hook: persists the CD's point in time as a new version (collective).
pub fn advanced(cd: CdHandle) -> cd_core::Result<()> {
    let (base, settings) = with_cds(|cds| {
        cds.get_mut(&cd).map(|p| {
            p.pending = None;
            (p.base.clone(), p.settings.clone())
        })
    })
    .ok_or_else(|| err("the CD was not prepared for persistence at create"))?;
    let comm = world();
    inject::persist_started();
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
        .and_then(|_| sync_dir(&vdir).map_err(|e| format!("{}: {e}", vdir.display())));
    inject::crash_point("data-renamed", v);
    let result = agree(&comm, written)
        .and_then(|_| {
            let rs = Redset::create(
                &comm,
                scheme_of(settings.scheme),
                settings.set_size,
                settings.failure_group.as_deref(),
                Options::default(),
            )
            .map_err(|e| format!("cd-redset: {e}"))?;
            rs.apply(&[data_file(&vdir)], &redset_prefix(&vdir))
                .map_err(|e| format!("cd-redset: {e}"))
        })
        .and_then(|_| {
            inject::crash_point("redset-applied", v);
            let marker = vdir.join(format!("COMMIT.{}", rank()));
            let marked = write_durable(&marker, format!("{v}\n").as_bytes());
            if marked.is_ok() {
                inject::crash_point("committed", v);
            }
            agree(&comm, marked)
        });
    if let Err(e) = result {
        // an incomplete version is never used; the previous complete one stays
        let _ = std::fs::remove_dir_all(&vdir);
        return Err(err(format!("persisting version {v} failed: {e}")));
    }
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
    Ok(())
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
