//! A lost rank replaced in the job (the MPI interposer's in-job recovery, ULFM): the
//! replacement's files are rebuilt from the survivors' redundancy *before* its application
//! reaches `create_cd`, because the rebuild is collective and the survivors take part in it
//! from inside the MPI call in which they saw the loss, not from a `create_cd` of their own.
//!
//! The survivors describe their persistent CDs ([`description`]: name and `storage_info`, in
//! name order), the repair hands the description to the replacement, and every rank of the
//! repaired world runs [`rebuild`] together: the newest complete version of each CD is
//! recovered with cd-redset exactly as a relaunch would (the replacement's cache directory is
//! its own, `{rank}` expanded with the lost rank's number). The replacement remembers what it
//! recovered; its application's `create_cd` of the same name then takes that version without
//! any collective step (`take_prepared`) and its `restore_cd` loads it.

use super::{
    cache_dirs, expand, local_versions, max_u64, prepare_dir, recover_version, stats, version_dir,
    with_cds, world, Persisted,
};
use cd_core::{CdHandle, PersistSettings, StorageInfo};
use std::path::PathBuf;
use std::sync::Mutex;

/// Versions a replacement recovered before its application created the CD, by name.
static PREPARED: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());

/// One line per persistent CD of this process, `name<TAB>storage_info`, in name order: what a
/// replacement needs to find and rebuild its own files.
pub fn description() -> Vec<u8> {
    let mut lines: Vec<String> = with_cds(|cds| {
        cds.values()
            .filter_map(|p| Some(format!("{}\t{}", name_of(p)?, p.storage_info)))
            .collect()
    });
    lines.sort();
    lines.join("\n").into_bytes()
}

/// Rebuilds the newest complete version of every persistent CD on every rank of the (repaired)
/// world, collective: survivors pass `None` (their own CDs), the replacement the survivors'
/// [`description`]. Returns the version of each CD, in name order.
pub fn rebuild(description: Option<&[u8]>) -> Result<Vec<(String, u64)>, String> {
    let cds: Vec<(String, PersistSettings, Option<PathBuf>)> = match description {
        None => {
            let mut own: Vec<_> = with_cds(|cds| {
                cds.values()
                    .filter_map(|p| Some((name_of(p)?, p.settings.clone(), Some(p.base.clone()))))
                    .collect()
            });
            own.sort_by(|a, b| a.0.cmp(&b.0));
            own
        }
        Some(text) => parse(text)?,
    };
    let comm = world();
    let mut done = Vec::new();
    for (name, settings, base) in cds {
        let base = match base {
            Some(b) => b,
            None => {
                // a replacement's node may come with an empty disk
                let dir = expand(&settings.dir);
                std::fs::create_dir_all(&dir).map_err(|e| format!("key \"dir\": {dir}: {e}"))?;
                prepare_dir("dir", std::path::Path::new(&dir), &name)?
            }
        };
        let newest = local_versions(&base)
            .into_iter()
            .filter(|&(_, marked)| marked)
            .map(|(v, _)| v)
            .max()
            .unwrap_or(0);
        let v = max_u64(&comm, newest);
        if v == 0 {
            return Err(format!("CD \"{name}\" has no complete version to rebuild"));
        }
        stats::timed(stats::Op::Recover, || recover_version(&comm, &base, v))
            .map_err(|e| format!("CD \"{name}\" version {v}: {e}"))?;
        if description.is_some() {
            PREPARED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((name.clone(), v));
        }
        let dir = version_dir(&base, v);
        if description.is_some() {
            tracing::info!(name, version = v, dir = %dir.display(), "rebuilt from the survivors' redundancy");
        } else {
            tracing::info!(name, version = v, "a survivor's files served the rebuild");
        }
        done.push((name, v));
    }
    Ok(done)
}

/// The version [`rebuild`] prepared for the CD `name` on a replacement (taken once).
pub(crate) fn take_prepared(name: &str) -> Option<u64> {
    let mut prepared = PREPARED.lock().unwrap_or_else(|e| e.into_inner());
    let i = prepared.iter().position(|(n, _)| n == name)?;
    Some(prepared.remove(i).1)
}

/// cd-core's `created` hook on a replacement, for a CD [`rebuild`] prepared: local, no
/// collective step (the survivors are not creating anything).
pub(crate) fn created(
    cd: CdHandle,
    name: &str,
    settings: PersistSettings,
    storage_info: String,
    v: u64,
) -> cd_core::Result<Option<u64>> {
    let (base, global) = cache_dirs(&settings, name).map_err(super::err)?;
    with_cds(|cds| {
        cds.insert(
            cd,
            Persisted {
                base,
                global,
                settings,
                storage_info,
                pending: Some(v),
                flushing: None,
            },
        )
    });
    Ok(Some(v))
}

/// A CD's name: the last component of its base directory.
fn name_of(p: &Persisted) -> Option<String> {
    Some(p.base.file_name()?.to_string_lossy().into_owned())
}

/// The survivors' description, back as (name, settings, no base yet).
fn parse(text: &[u8]) -> Result<Vec<(String, PersistSettings, Option<PathBuf>)>, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("the CDs' description: {e}"))?;
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|line| {
            let (name, info) = line
                .split_once('\t')
                .ok_or_else(|| format!("the CDs' description: no tab in {line:?}"))?;
            let settings = StorageInfo::parse(info)
                .and_then(|i| i.persist())
                .map_err(|e| format!("CD \"{name}\": {e}"))?
                .ok_or_else(|| format!("CD \"{name}\": storage_info {info:?} is not persistent"))?;
            Ok((name.to_owned(), settings, None))
        })
        .collect()
}
