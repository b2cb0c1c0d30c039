//! The survey that starts every rebuild: who in the set lost what, and what is still known.
//!
//! Each rank opens its redundancy file and parses the header; the `DESC` entries of all valid
//! headers are gathered in the set, so that the file list of a rank that lost everything is
//! found in its neighbours' headers. Then each rank checks its payload (length and CRC32C) and
//! its data files (presence, size, chunk CRC32C). A rank with any damaged or missing file counts
//! as lost; the schemes decide whether the set can be rebuilt before anything is written.

use crate::comm;
use crate::dataset::RankFiles;
use crate::descriptor::{Redset, Scheme};
use crate::header::{self, RedFile};
use crate::kvtree::KvTree;

/// The state of a set before a rebuild.
pub(crate) struct Survey {
    /// File list of each member, if any valid header holds it.
    pub files: Vec<Option<RankFiles>>,
    /// Chunk size (XOR, RS), if any valid header holds it.
    pub chunk: Option<u64>,
    /// Which members must be rebuilt.
    pub lost: Vec<bool>,
    /// Why each lost member is lost (empty for the others).
    pub reasons: Vec<String>,
    /// This rank's redundancy file, when valid.
    pub own: Option<RedFile>,
}

impl Survey {
    /// Set ranks of the lost members.
    pub fn lost_ranks(&self) -> Vec<usize> {
        self.lost
            .iter()
            .enumerate()
            .filter(|(_, &l)| l)
            .map(|(i, _)| i)
            .collect()
    }
}

/// Payload block lengths of member `r`'s redundancy file.
pub(crate) fn payload_blocks(
    rs: &Redset,
    r: usize,
    files: &[Option<RankFiles>],
    chunk: Option<u64>,
) -> Option<Vec<u64>> {
    let n = rs.info.ranks;
    match rs.info.scheme {
        Scheme::Single => Some(Vec::new()),
        Scheme::Xor => chunk.map(|c| vec![c]),
        Scheme::Rs { checksums } => chunk.map(|c| vec![c; checksums as usize]),
        Scheme::Partner { replicas } => (1..=replicas as usize)
            .map(|d| files[(r + n - d % n) % n].as_ref().map(|f| f.total()))
            .collect(),
    }
}

/// Runs the survey (collective over the set).
pub(crate) fn survey(rs: &Redset, prefix: &str) -> Survey {
    let n = rs.info.ranks;
    let r = rs.info.rank;
    let path = header::redundancy_file(prefix, &rs.info);
    let mut reason = String::new();
    let own = match RedFile::open(&path) {
        Ok(f) => match check_header(rs, &f.header) {
            Ok(()) => Some(f),
            Err(why) => {
                reason = format!("{}: {why}", path.display());
                None
            }
        },
        Err(e) => {
            reason = e.to_string();
            None
        }
    };
    // share what our header knows
    let mut contrib = KvTree::new();
    if let Some(f) = &own {
        if let Some(d) = f.header.get("DESC") {
            contrib.set("DESC", d.clone());
        }
        if let Some(c) = f.header.get("CHUNK") {
            contrib.set("CHUNK", c.clone());
        }
    }
    let mut packed = Vec::new();
    contrib.pack(&mut packed);
    let gathered: Vec<KvTree> = comm::allgather_bytes(&rs.comm, &packed)
        .iter()
        .map(|b| KvTree::unpack(b).map(|(t, _)| t).unwrap_or_default())
        .collect();
    let mut files: Vec<Option<RankFiles>> = vec![None; n];
    for (m, slot) in files.iter_mut().enumerate() {
        // prefer the member's own header, then the others in ring order
        for s in (0..n).map(|i| (m + i) % n) {
            if let Some(t) = gathered[s].get_path(&["DESC", &m.to_string()]) {
                if let Ok(f) = RankFiles::from_kvtree(t, "") {
                    *slot = Some(f);
                    break;
                }
            }
        }
    }
    let chunk = own
        .as_ref()
        .and_then(|f| f.header.get_u64("CHUNK"))
        .or_else(|| gathered.iter().find_map(|t| t.get_u64("CHUNK")));
    let mut buf = vec![0u8; rs.opts.piece_size.min(8 << 20)];
    let mut lost = false;
    if own.is_none() {
        lost = true;
    } else if let Some(f) = &own {
        match payload_blocks(rs, r, &files, chunk) {
            Some(blocks) => {
                if let Err(why) = f.check_payload(&blocks, rs.opts.verify, &mut buf) {
                    reason = why;
                    lost = true;
                }
            }
            None => {
                reason = format!("{}: payload layout unknown", path.display());
                lost = true;
            }
        }
    }
    match &files[r] {
        None => {
            if reason.is_empty() {
                reason = "file list lost".into();
            }
            lost = true;
        }
        Some(f) => {
            let check = if rs.opts.verify {
                f.verify(&mut buf)
            } else {
                f.check_present()
            };
            if let Err(why) = check {
                if !reason.is_empty() {
                    reason.push_str("; ");
                }
                reason.push_str(&why);
                lost = true;
            }
        }
    }
    if !lost {
        reason.clear();
    }
    let lost_all: Vec<bool> = comm::allgather_u64(&rs.comm, u64::from(lost))
        .into_iter()
        .map(|v| v != 0)
        .collect();
    let reasons: Vec<String> = comm::allgather_bytes(&rs.comm, reason.as_bytes())
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    Survey {
        files,
        chunk,
        lost: lost_all,
        reasons,
        own: if lost { None } else { own },
    }
}

fn check_header(rs: &Redset, h: &KvTree) -> std::result::Result<(), String> {
    let r = rs.info.rank;
    if h.get_u64("RANK") != Some(r as u64) {
        return Err(format!(
            "header RANK is {:?}, expected {r}",
            h.get_val("RANK")
        ));
    }
    let desc = h
        .get_path(&["DESC", &r.to_string(), "DESC"])
        .ok_or_else(|| "header lacks this rank's descriptor".to_string())?;
    let info = crate::descriptor::SetInfo::from_kvtree(desc).map_err(|e| e.to_string())?;
    if info.scheme != rs.info.scheme || info.group != rs.info.group || info.ranks != rs.info.ranks {
        return Err("header descriptor does not match this redundancy set".into());
    }
    if matches!(rs.info.scheme, Scheme::Xor | Scheme::Rs { .. }) {
        if h.get_u64("CHUNK").is_none() {
            return Err("header lacks CHUNK".into());
        }
        let map = h.get("GROUP").and_then(|g| g.get("RANK"));
        for (i, w) in rs.group_map.iter().enumerate() {
            if map.and_then(|m| m.get_u64(&i.to_string())) != Some(*w as u64) {
                return Err(format!(
                    "header GROUP/RANK/{i} does not match parent rank {w}"
                ));
            }
        }
    }
    Ok(())
}
