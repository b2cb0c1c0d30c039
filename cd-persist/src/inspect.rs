//! What the `cd-persist` command shows: the persisted versions of each CD with their health,
//! read from the files alone (no MPI, no running job), and a full CRC check of one version.
//!
//! A version is *complete* when some rank's commit marker is there (see the crate docs);
//! a rank is *lost* for it when its data file is missing or damaged or, once its redundancy
//! set is known, its redundancy file is missing; the version is *rebuildable* when every
//! redundancy set lost no more members than its scheme rebuilds (cd-redset's rule, with the
//! sets read from the descriptor files that survive: each rank's holds its own and copies of
//! its neighbours'); *flushed* when the global directory holds it with its marker.

use crate::format::StoreFile;
use cd_redset::kvtree::KvTree;
use cd_redset::SetInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a job's persisted CDs are: the `dir` template and the number of ranks.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The cache directory as given to `dir=` (`{rank}`, `{rank/N}` are expanded per rank).
    pub dir: String,
    /// The number of ranks of the job.
    pub ranks: usize,
    /// The global directory (`global_dir=`), if the CDs flush.
    pub global: Option<PathBuf>,
}

impl Layout {
    /// `<dir of rank r>/<name>`.
    fn base(&self, r: usize, name: &str) -> PathBuf {
        PathBuf::from(cd_redset::descriptor::failure_group_name(
            Some(&self.dir),
            r,
        ))
        .join(name)
    }

    /// The names of the persistent CDs found under any rank's cache directory.
    pub fn names(&self) -> Vec<String> {
        let mut names = BTreeSet::new();
        for r in 0..self.ranks {
            let dir = cd_redset::descriptor::failure_group_name(Some(&self.dir), r);
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.filter_map(|e| e.ok()) {
                if e.path().is_dir() {
                    if let Ok(n) = e.file_name().into_string() {
                        names.insert(n);
                    }
                }
            }
        }
        names.into_iter().collect()
    }
}

/// The health of one persisted version of a CD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// The version number.
    pub version: u64,
    /// Some rank's commit marker is there.
    pub complete: bool,
    /// The ranks whose files are missing or damaged, with why.
    pub lost: BTreeMap<usize, String>,
    /// `Ok` when every redundancy set can rebuild its lost members; else why not.
    pub rebuildable: Result<(), String>,
    /// The global directory holds this version with its marker.
    pub flushed: bool,
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "v{:08} {}",
            self.version,
            if self.complete {
                "complete"
            } else {
                "incomplete"
            }
        )?;
        match (&self.rebuildable, self.lost.is_empty()) {
            (Ok(()), true) => write!(f, ", intact")?,
            (Ok(()), false) => write!(f, ", rebuildable")?,
            (Err(why), _) => write!(f, ", not rebuildable ({why})")?,
        }
        if !self.lost.is_empty() {
            let ranks: Vec<String> = self.lost.keys().map(usize::to_string).collect();
            write!(f, ", lost ranks {}", ranks.join(","))?;
        }
        if self.flushed {
            write!(f, ", flushed")?;
        }
        Ok(())
    }
}

fn version_numbers(dir: &Path) -> Vec<u64> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix('v')?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The versions of CD `name`, oldest first, with their health; `verify` reads every data
/// byte to check its CRC32C (else only headers, trailers and sizes are checked).
pub fn versions(layout: &Layout, name: &str, verify: bool) -> Vec<Health> {
    let mut numbers = BTreeSet::new();
    for r in 0..layout.ranks {
        numbers.extend(version_numbers(&layout.base(r, name)));
    }
    let global = layout.global.as_ref().map(|g| g.join(name));
    let flushed: BTreeSet<u64> = global
        .as_deref()
        .map(|g| crate::flush::flushed_versions(g).into_iter().collect())
        .unwrap_or_default();
    numbers.extend(&flushed);
    numbers
        .into_iter()
        .map(|v| {
            let mut h = health(layout, name, v, verify);
            h.flushed = flushed.contains(&v);
            h
        })
        .collect()
}

/// Checks every CRC32C of the flushed copy of version `v` of CD `name` (every rank's file).
pub fn verify_flushed(layout: &Layout, name: &str, v: u64) -> Result<(), String> {
    let global = layout
        .global
        .as_ref()
        .ok_or_else(|| "no global directory given".to_owned())?;
    let gdir = crate::version_dir(&global.join(name), v);
    for r in 0..layout.ranks {
        let data = gdir.join(format!("data.{r}.cdp"));
        StoreFile::open(&data).and_then(|mut s| s.verify())?;
    }
    Ok(())
}

/// The health of version `v` of CD `name` (not counting the global directory).
fn health(layout: &Layout, name: &str, v: u64, verify: bool) -> Health {
    let vdirs: Vec<PathBuf> = (0..layout.ranks)
        .map(|r| crate::version_dir(&layout.base(r, name), v))
        .collect();
    let mut complete = false;
    let mut lost = BTreeMap::new();
    let mut sets: BTreeMap<usize, SetInfo> = BTreeMap::new();
    for (r, vdir) in vdirs.iter().enumerate() {
        complete |= vdir.join(format!("COMMIT.{r}")).is_file();
        let data = vdir.join(format!("data.{r}.cdp"));
        let checked = if data.exists() {
            StoreFile::open(&data).and_then(|mut s| if verify { s.verify() } else { Ok(()) })
        } else {
            Err(format!("{} is missing", data.display()))
        };
        if let Err(why) = checked {
            lost.insert(r, why);
        }
        // every descriptor this rank's file carries (its own and its neighbours')
        let prefix = crate::redset_prefix(vdir);
        if let Ok(tree) = KvTree::read_file(&cd_redset::header::descriptor_file(&prefix, r)) {
            for (key, entry) in tree.iter() {
                let (Ok(w), Some(desc)) = (key.parse::<usize>(), entry.get("DESC")) else {
                    continue;
                };
                if let Ok(mut info) = SetInfo::from_kvtree(desc) {
                    info.wrank = w;
                    sets.entry(w).or_insert(info);
                }
            }
        }
    }
    for (&w, info) in &sets {
        let path = cd_redset::header::redundancy_file(&crate::redset_prefix(&vdirs[w]), info);
        if w < layout.ranks && !path.is_file() && !lost.contains_key(&w) {
            lost.insert(w, format!("{} is missing", path.display()));
        }
    }
    let rebuildable = rebuildable(layout.ranks, &sets, &lost);
    Health {
        version: v,
        complete,
        lost,
        rebuildable,
        flushed: false,
    }
}

/// Whether every set can rebuild its lost members (cd-redset's rule).
fn rebuildable(
    ranks: usize,
    sets: &BTreeMap<usize, SetInfo>,
    lost: &BTreeMap<usize, String>,
) -> Result<(), String> {
    if lost.is_empty() {
        return Ok(());
    }
    if let Some(w) = (0..ranks).find(|w| !sets.contains_key(w)) {
        return Err(format!("the redundancy descriptor of rank {w} is lost"));
    }
    let mut groups: BTreeMap<usize, (SetInfo, Vec<bool>)> = BTreeMap::new();
    for (w, info) in sets.iter().filter(|(&w, _)| w < ranks) {
        let (_, flags) = groups
            .entry(info.group)
            .or_insert_with(|| (info.clone(), vec![false; info.ranks]));
        if let Some(flag) = flags.get_mut(info.rank) {
            *flag = lost.contains_key(w);
        }
    }
    for (g, (info, flags)) in &groups {
        info.scheme
            .can_rebuild(flags)
            .map_err(|why| format!("set {}: {why}", g + 1))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cd_core::{Restoration, SavedEntry};

    /// A version written by hand for `ranks` ranks: data files and commit markers, no
    /// redundancy (SINGLE-like: nothing to rebuild from).
    fn write_version(dir: &Path, name: &str, v: u64, ranks: usize) {
        let bytes = vec![7u8; 4096];
        for r in 0..ranks {
            let vdir = crate::version_dir(&dir.join(format!("node{r}")).join(name), v);
            std::fs::create_dir_all(&vdir).unwrap();
            let entries = [SavedEntry {
                restoration: Restoration::Copy,
                length: bytes.len(),
                pieces: vec![&bytes[..]],
            }];
            crate::format::write_store(&vdir.join(format!("data.{r}.cdp")), r as u32, v, &entries)
                .unwrap();
            std::fs::write(vdir.join(format!("COMMIT.{r}")), format!("{v}\n")).unwrap();
        }
    }

    #[test]
    fn lists_health_lost_ranks_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout {
            dir: format!("{}/node{{rank}}", dir.path().display()),
            ranks: 3,
            global: None,
        };
        write_version(dir.path(), "heat", 1, 3);
        write_version(dir.path(), "heat", 2, 3);
        assert_eq!(layout.names(), vec!["heat".to_owned()]);
        let all = versions(&layout, "heat", true);
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(|h| h.complete && h.lost.is_empty()));
        assert_eq!(all[1].to_string(), "v00000002 complete, intact");

        // rank 1 lost version 2, rank 2's copy of version 1 has a flipped data byte
        std::fs::remove_file(dir.path().join("node1/heat/v00000002/data.1.cdp")).unwrap();
        let damaged = dir.path().join("node2/heat/v00000001/data.2.cdp");
        let mut bytes = std::fs::read(&damaged).unwrap();
        bytes[70] ^= 1;
        std::fs::write(&damaged, &bytes).unwrap();
        let all = versions(&layout, "heat", false);
        assert!(
            all[0].lost.is_empty(),
            "without verify only headers are read"
        );
        assert_eq!(all[1].lost.keys().copied().collect::<Vec<_>>(), vec![1]);
        let all = versions(&layout, "heat", true);
        assert!(all[0].lost[&2].contains("CRC32C mismatch"), "{:?}", all[0]);
        assert!(
            all[1].to_string().starts_with(
                "v00000002 complete, not rebuildable (the redundancy descriptor of rank 0 is lost)"
            ),
            "{}",
            all[1]
        );
        assert!(all[1].to_string().ends_with(", lost ranks 1"), "{}", all[1]);
    }
}
