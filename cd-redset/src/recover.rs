//! The survey that starts every rebuild: who in the set lost what, and what is still known;
//! and the verification of the survivors' bytes.
//!
//! Each rank opens its redundancy file and parses the header; the `DESC` entries of all valid
//! headers are gathered in the set, so that the file list of a rank that lost everything is
//! found in its neighbours' headers. Then each rank checks its payload length and its data
//! files (presence, size). A rank with any missing, truncated or unparsable file counts as lost.
//!
//! # CRC32C verification without a separate pass
//!
//! Silent corruption is found by CRC32C. Reading every byte just to check it would cost a full
//! pass over the data before the rebuild reads the same bytes again, so the checks ride on the
//! rebuild instead:
//!
//! * A set that lost nobody is checked with one read pass ([`verify_all`]): that is the only
//!   way to notice corruption there.
//! * A set that lost members rebuilds at once; each survivor feeds the bytes the rebuild reads
//!   anyway to a [`Verifier`], which checks whatever the rebuild did not read with a read of
//!   its own at the end. A survivor whose bytes do not match is a new loss: the members agree
//!   on it, the rebuild's output (written under temporary names, see
//!   [`crate::pipeline::Staged`]) is dropped, and the rebuild starts again with the larger loss
//!   set, or fails when that is beyond the scheme. Each round adds a loss, so this ends.

use crate::comm;
use crate::dataset::{crc_of_range, ChunkCrcs, RankFiles};
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
    /// Whether every survivor's bytes were checked already ([`verify_all`]).
    pub verified: bool,
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

/// Runs the survey: headers, presence and sizes, no CRC (collective over the set).
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
    let mut lost = false;
    if own.is_none() {
        lost = true;
    } else if let Some(f) = &own {
        match payload_blocks(rs, r, &files, chunk) {
            Some(blocks) => {
                if let Err(why) = f.check_payload(&blocks, false, &mut []) {
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
            if let Err(why) = f.check_present() {
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
        verified: false,
    }
}

/// Marks the members of `bad` (the same list on every member) lost, with their reasons.
pub(crate) fn mark_lost(sv: &mut Survey, rs: &Redset, bad: &[(usize, String)]) {
    for (m, why) in bad {
        sv.lost[*m] = true;
        if !sv.reasons[*m].is_empty() {
            sv.reasons[*m].push_str("; ");
        }
        sv.reasons[*m].push_str(why);
        if *m == rs.info.rank {
            sv.own = None;
        }
    }
}

/// Shares each member's verification outcome in the set: `(member, reason)` of every failure.
pub(crate) fn gather_failures(rs: &Redset, mine: Option<String>) -> Vec<(usize, String)> {
    let flags = comm::allgather_u64(&rs.comm, u64::from(mine.is_some()));
    if flags.iter().all(|&f| f == 0) {
        return Vec::new();
    }
    let why = mine.unwrap_or_default();
    comm::allgather_bytes(&rs.comm, why.as_bytes())
        .into_iter()
        .enumerate()
        .filter(|(m, _)| flags[*m] != 0)
        .map(|(m, b)| (m, String::from_utf8_lossy(&b).into_owned()))
        .collect()
}

/// Reads and checks every byte of every surviving member (collective over the set); members
/// whose bytes do not match their CRC32C become lost.
pub(crate) fn verify_all(rs: &Redset, sv: &mut Survey) {
    let r = rs.info.rank;
    let mine = if sv.lost[r] {
        None
    } else {
        let v = Verifier::new(rs, sv);
        v.finish(rs, sv).err()
    };
    let bad = gather_failures(rs, mine);
    mark_lost(sv, rs, &bad);
    sv.verified = true;
}

/// One unit a CRC32C covers: a data chunk of the logical file or a payload block.
#[derive(Clone, Debug)]
struct Unit {
    /// Expected CRC32C (`None`: nothing recorded, e.g. a file written by redset).
    want: Option<u32>,
    /// Where the unit starts (logical offset, or offset inside the payload).
    start: u64,
    /// Its length in real bytes.
    len: u64,
    /// CRC32C of the bytes fed so far.
    got: u32,
    /// Bytes fed so far, in order from `start`.
    fed: u64,
    /// Whether the bytes came out of order (then the unit is read again at the end).
    broken: bool,
}

impl Unit {
    fn feed(&mut self, off: u64, bytes: &[u8]) {
        if self.broken || self.want.is_none() || (self.complete() && !bytes.is_empty()) {
            // a unit streamed in full already (e.g. data sent to two lost partners)
            return;
        }
        if off != self.start + self.fed || self.fed + bytes.len() as u64 > self.len {
            self.broken = true;
            return;
        }
        self.got = crate::util::crc(self.got, bytes);
        self.fed += bytes.len() as u64;
    }

    fn complete(&self) -> bool {
        !self.broken && self.fed == self.len
    }
}

/// Checks a survivor's own data and payload against their recorded CRC32C while a rebuild
/// reads them (see the module docs).
pub(crate) struct Verifier {
    data: Vec<Unit>,
    data_chunk: u64,
    payload: Vec<Unit>,
    /// Why the payload CRCs cannot be used, if they are malformed.
    payload_problem: Option<String>,
}

impl Verifier {
    /// The units of this (surviving) member.
    pub fn new(rs: &Redset, sv: &Survey) -> Verifier {
        let r = rs.info.rank;
        let mut v = Verifier {
            data: Vec::new(),
            data_chunk: 1,
            payload: Vec::new(),
            payload_problem: None,
        };
        if let Some(ChunkCrcs { chunk, crcs }) = sv.files[r].as_ref().and_then(|f| f.crc.clone()) {
            let total = sv.files[r].as_ref().map_or(0, RankFiles::total);
            v.data_chunk = chunk.max(1);
            v.data = crcs
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let start = i as u64 * v.data_chunk;
                    Unit {
                        want: Some(c),
                        start,
                        len: total.saturating_sub(start).min(v.data_chunk),
                        got: 0,
                        fed: 0,
                        broken: false,
                    }
                })
                .collect();
        }
        if let Some(f) = &sv.own {
            let blocks = payload_blocks(rs, r, &sv.files, sv.chunk).unwrap_or_default();
            let wants = match header::payload_crcs(&f.header, Some(r)) {
                Ok(w) => w,
                Err(e) => {
                    v.payload_problem = Some(format!("{}: {e}", f.path.display()));
                    Vec::new()
                }
            };
            if !wants.is_empty() && wants.len() != blocks.len() {
                v.payload_problem = Some(format!(
                    "{}: {} payload CRCs for {} blocks",
                    f.path.display(),
                    wants.len(),
                    blocks.len()
                ));
            }
            let mut start = 0u64;
            for (i, &len) in blocks.iter().enumerate() {
                v.payload.push(Unit {
                    want: wants
                        .get(i)
                        .copied()
                        .filter(|_| wants.len() == blocks.len()),
                    start,
                    len,
                    got: 0,
                    fed: 0,
                    broken: false,
                });
                start += len;
            }
        }
        v
    }

    /// Feeds real data bytes read at logical offset `off` (no zero padding).
    pub fn data(&mut self, mut off: u64, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let idx = (off / self.data_chunk) as usize;
            let Some(u) = self.data.get_mut(idx) else {
                return;
            };
            let n = ((u.start + u.len).saturating_sub(off) as usize).min(bytes.len());
            if n == 0 {
                return;
            }
            u.feed(off, &bytes[..n]);
            off += n as u64;
            bytes = &bytes[n..];
        }
    }

    /// Feeds payload bytes of block `block` at offset `off` inside the block.
    pub fn payload(&mut self, block: usize, off: u64, bytes: &[u8]) {
        if let Some(u) = self.payload.get_mut(block) {
            let start = u.start;
            u.feed(start + off, bytes);
        }
    }

    /// Checks every unit, reading those the rebuild did not stream in full; returns why the
    /// member's bytes are damaged, if they are.
    pub fn finish(mut self, rs: &Redset, sv: &Survey) -> Result<(), String> {
        if let Some(why) = self.payload_problem.take() {
            return Err(why);
        }
        let r = rs.info.rank;
        let mut buf: Vec<u8> = Vec::new();
        let piece = rs.opts.piece_size.clamp(1, 1 << 20);
        if self.data.iter().any(|u| !u.complete() && u.want.is_some()) {
            let lf = sv.files[r]
                .as_ref()
                .map(RankFiles::open_read)
                .transpose()
                .map_err(|e| e.to_string())?;
            buf.resize(piece, 0);
            for u in self.data.iter_mut().filter(|u| !u.complete()) {
                if let Some(lf) = &lf {
                    u.got =
                        crc_of_range(lf, u.start, u.len, &mut buf).map_err(|e| e.to_string())?;
                }
            }
        }
        for (i, u) in self.data.iter().enumerate() {
            if let Some(want) = u.want.filter(|&w| w != u.got) {
                return Err(format!(
                    "CRC32C mismatch in chunk {i} (bytes {}..) of the logical file: {:08x} != {want:08x}",
                    u.start, u.got
                ));
            }
        }
        if let Some(f) = &sv.own {
            for u in self.payload.iter_mut() {
                if u.want.is_some() && !u.complete() {
                    buf.resize(piece, 0);
                    u.got = crc_of_file(f, u.start, u.len, &mut buf)?;
                }
            }
            for (i, u) in self.payload.iter().enumerate() {
                if let Some(want) = u.want.filter(|&w| w != u.got) {
                    return Err(format!(
                        "{}: CRC32C mismatch in payload block {i}: {:08x} != {want:08x}",
                        f.path.display(),
                        u.got
                    ));
                }
            }
        }
        Ok(())
    }
}

/// CRC32C of `len` payload bytes of `f` from payload offset `off`.
fn crc_of_file(f: &RedFile, off: u64, len: u64, buf: &mut [u8]) -> Result<u32, String> {
    let mut crc = 0u32;
    let mut done = 0u64;
    while done < len {
        let n = ((len - done) as usize).min(buf.len());
        crate::prof::timed(crate::prof::Phase::Read, || {
            crate::util::read_exact_at(&f.file, &f.path, &mut buf[..n], f.header_len + off + done)
        })
        .map_err(|e| e.to_string())?;
        crc = crate::util::crc(crc, &buf[..n]);
        done += n as u64;
    }
    Ok(crc)
}

/// Whether a header's `RANK` names `rank`. redset 0.4's own PARTNER rebuild adds the new
/// owner's rank next to the source's (`kvtree_set_kv_int`), so `RANK` may hold several values;
/// it must include this one.
fn header_names_rank(h: &KvTree, rank: usize) -> bool {
    h.get("RANK")
        .is_some_and(|values| values.get(&rank.to_string()).is_some())
}

fn check_header(rs: &Redset, h: &KvTree) -> std::result::Result<(), String> {
    let r = rs.info.rank;
    if !header_names_rank(h, r) {
        return Err(format!(
            "header RANK is {:?}, expected {r}",
            h.get("RANK")
                .map(|v| v.iter().map(|(k, _)| k).collect::<Vec<_>>())
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

/// One rebuild attempt: the files it staged on this rank and the survivors whose own bytes
/// failed their CRC32C check on the way (the same list on every member).
pub(crate) struct Attempt {
    /// This rank's rebuilt files, under temporary names.
    pub staged: crate::pipeline::Staged,
    /// `(member, reason)` of each survivor found damaged; the attempt is void if not empty.
    pub failures: Vec<(usize, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rank_may_hold_several_values_after_a_redset_partner_rebuild() {
        let mut h = KvTree::new();
        h.set_kv("RANK", 2);
        assert!(header_names_rank(&h, 2));
        assert!(!header_names_rank(&h, 1));
        // What redset 0.4 leaves after rebuilding member 1 from member 2's copy: its
        // `kvtree_set_kv_int` adds a second value under RANK.
        h.entry("RANK").entry("1");
        assert!(header_names_rank(&h, 1) && header_names_rank(&h, 2));
        assert!(!header_names_rank(&KvTree::new(), 0));
    }
}
