//! File names and headers of redundancy files and descriptor files.
//!
//! Names follow redset 0.4 (1-based group and member numbers):
//!
//! ```text
//! <prefix><rank>.redset                                             descriptor file
//! <prefix><rank>.<scheme>.grp_<g+1>_of_<groups>.mem_<r+1>_of_<ranks>.redset   redundancy file
//! ```
//!
//! A redundancy file is a kvtree header followed by the scheme's payload: nothing (SINGLE), the
//! left partners' logical files one after another (PARTNER), one chunk (XOR) or `k` chunks (RS).
//! Header keys as redset writes them: `RANK` (group rank), `DESC/<group rank>` (file lists of the
//! rank and of the neighbours it protects), `GROUP/RANKS` and `GROUP/RANK/<i> = <parent rank>`
//! (XOR, RS), `CHUNK` (XOR, RS). We add `PAYLOAD_CRC32C` (`COUNT`, `RANK` = the group rank of
//! the file's owner, and one 8-hex-digit CRC32C per payload block), which redset ignores.
//!
//! redset 0.4 rebuilds a lost redundancy file's header from a neighbour's header (XOR: the right
//! neighbour's; RS and PARTNER: any survivor's), so a set that redset rebuilt carries the
//! neighbour's `PAYLOAD_CRC32C` verbatim. The CRCs are therefore only trusted when
//! `PAYLOAD_CRC32C/RANK` names the file's own group rank (from its file name); otherwise the
//! file is checked like one written by redset (lengths only). Per-rank data CRCs
//! (`DESC/<r>/CRC32C`) travel with rank `r`'s own file list and stay valid.
//!
//! Because every CRC is printed with 8 hex digits, the header's size is known before the
//! payload is computed: we write the payload after a header-sized gap and the header last, then
//! rename the file into place, so a crash never leaves a file that looks complete.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::dataset::RankFiles;
use crate::descriptor::SetInfo;
use crate::error::{Error, Result};
use crate::kvtree::KvTree;
use crate::util::{crc_hex, parse_crc_hex};

/// `<prefix><rank>.redset`: the descriptor file of parent rank `wrank`.
pub fn descriptor_file(prefix: &str, wrank: usize) -> PathBuf {
    PathBuf::from(format!("{prefix}{wrank}.redset"))
}

/// The redundancy file of the rank described by `info`.
pub fn redundancy_file(prefix: &str, info: &SetInfo) -> PathBuf {
    PathBuf::from(format!(
        "{prefix}{}.{}.grp_{}_of_{}.mem_{}_of_{}.redset",
        info.wrank,
        info.scheme.file_tag(),
        info.group + 1,
        info.groups,
        info.rank + 1,
        info.ranks
    ))
}

/// Parsed fields of a redundancy file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedName {
    /// Everything before the rank number.
    pub prefix: String,
    /// Parent rank.
    pub wrank: usize,
    /// Scheme tag (`single`, `partner`, `xor`, `rs`).
    pub tag: String,
    /// 0-based group.
    pub group: usize,
    /// Number of groups.
    pub groups: usize,
    /// 0-based rank in group.
    pub rank: usize,
    /// Ranks in group.
    pub ranks: usize,
}

/// Parses a redundancy file name (the file name part only).
pub fn parse_redundancy_name(name: &str) -> Option<ParsedName> {
    let stem = name.strip_suffix(".redset")?;
    let (head, mem) = stem.rsplit_once(".mem_")?;
    let (r, rs) = mem.split_once("_of_")?;
    let (head, grp) = head.rsplit_once(".grp_")?;
    let (g, gs) = grp.split_once("_of_")?;
    let (head, tag) = head.rsplit_once('.')?;
    if !matches!(tag, "single" | "partner" | "xor" | "rs") {
        return None;
    }
    let digits = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let (prefix, wrank) = head.split_at(head.len() - digits);
    let p = |s: &str| s.parse::<usize>().ok();
    let (group, rank) = (p(g)?.checked_sub(1)?, p(r)?.checked_sub(1)?);
    Some(ParsedName {
        prefix: prefix.to_owned(),
        wrank: p(wrank)?,
        tag: tag.to_owned(),
        group,
        groups: p(gs)?,
        rank,
        ranks: p(rs)?,
    })
}

/// Everything a redundancy file header holds.
#[derive(Clone, Debug, Default)]
pub(crate) struct HeaderSpec {
    /// Group rank of the file's owner.
    pub rank: usize,
    /// Current hashes (file list + `DESC`) by group rank.
    pub descs: Vec<(usize, KvTree)>,
    /// Parent rank of each group member (XOR, RS).
    pub group_map: Option<Vec<usize>>,
    /// Chunk size (XOR, RS).
    pub chunk: Option<u64>,
    /// CRC32C of each payload block.
    pub payload_crcs: Vec<u32>,
}

impl HeaderSpec {
    /// Builds the kvtree.
    pub fn to_kvtree(&self) -> KvTree {
        let mut h = KvTree::new();
        h.set_kv("RANK", self.rank);
        let d = h.entry("DESC");
        for (r, t) in &self.descs {
            d.set(r.to_string(), t.clone());
        }
        if let Some(map) = &self.group_map {
            let g = h.entry("GROUP");
            g.set_kv("RANKS", map.len());
            let gr = g.entry("RANK");
            for (i, w) in map.iter().enumerate() {
                gr.set_kv(i.to_string(), w);
            }
        }
        if let Some(c) = self.chunk {
            h.set_kv("CHUNK", c);
        }
        if !self.payload_crcs.is_empty() {
            let p = h.entry("PAYLOAD_CRC32C");
            p.set_kv("COUNT", self.payload_crcs.len());
            p.set_kv("RANK", self.rank);
            for (i, c) in self.payload_crcs.iter().enumerate() {
                p.set_kv(i.to_string(), crc_hex(*c));
            }
        }
        h
    }
}

/// The file list stored under `DESC/<r>` of a header, if present and well-formed.
pub(crate) fn header_rank_files(h: &KvTree, r: usize) -> Result<Option<RankFiles>> {
    match h.get_path(&["DESC", &r.to_string()]) {
        None => Ok(None),
        Some(t) => RankFiles::from_kvtree(t, &format!("DESC/{r}/")).map(Some),
    }
}

/// The payload CRCs of a header for the file of group rank `owner` (empty if it has none, e.g.
/// one written by redset, or if they belong to another member: see the module docs).
pub(crate) fn payload_crcs(h: &KvTree, owner: Option<usize>) -> Result<Vec<u32>> {
    let Some(p) = h.get("PAYLOAD_CRC32C") else {
        return Ok(Vec::new());
    };
    let tagged = p.get_u64("RANK").map(|r| r as usize);
    if owner.is_none() || tagged != owner {
        // a neighbour's header copied by a redset rebuild (or an untagged one): unverifiable
        return Ok(Vec::new());
    }
    let n = p.require_u64("COUNT", "PAYLOAD_CRC32C/")? as usize;
    if n > p.len() {
        return Err(Error::header(
            "PAYLOAD_CRC32C/COUNT",
            "more CRCs announced than present",
        ));
    }
    (0..n)
        .map(|i| {
            p.get_val(&i.to_string())
                .and_then(parse_crc_hex)
                .ok_or_else(|| Error::header(format!("PAYLOAD_CRC32C/{i}"), "missing or malformed"))
        })
        .collect()
}

/// An opened redundancy file with its parsed header.
pub(crate) struct RedFile {
    /// The path.
    pub path: PathBuf,
    /// Parsed header.
    pub header: KvTree,
    /// Bytes taken by the header; the payload starts here.
    pub header_len: u64,
    /// Total file length.
    pub file_len: u64,
    /// The open file.
    pub file: File,
}

impl RedFile {
    /// Opens `path` and parses its header.
    pub fn open(path: &Path) -> Result<RedFile> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let file_len = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        let mut r = BufReader::new(&file);
        let (header, n) =
            KvTree::read_from(&mut r).map_err(|e| crate::kvtree::with_path(e, path))?;
        Ok(RedFile {
            path: path.to_owned(),
            header,
            header_len: n as u64,
            file_len,
            file,
        })
    }

    /// The group rank of the file's owner: from its name, else from a single-valued `RANK`.
    fn owner_rank(&self) -> Option<usize> {
        self.path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_redundancy_name)
            .map(|p| p.rank)
            .or_else(|| self.header.get_u64("RANK").map(|r| r as usize))
    }

    /// Checks that the payload has the expected block lengths and, if `verify`, that each block
    /// matches its recorded CRC32C. Returns a reason on failure.
    pub fn check_payload(
        &self,
        blocks: &[u64],
        verify: bool,
        buf: &mut [u8],
    ) -> std::result::Result<(), String> {
        let total: u64 = blocks.iter().sum();
        if self.file_len != self.header_len + total {
            return Err(format!(
                "{}: payload is {} bytes, expected {total}",
                self.path.display(),
                self.file_len.saturating_sub(self.header_len)
            ));
        }
        if !verify {
            return Ok(());
        }
        let crcs = payload_crcs(&self.header, self.owner_rank())
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        if crcs.is_empty() {
            return Ok(()); // written (or rebuilt) by redset: nothing to check
        }
        if crcs.len() != blocks.len() {
            return Err(format!(
                "{}: {} payload CRCs for {} blocks",
                self.path.display(),
                crcs.len(),
                blocks.len()
            ));
        }
        let mut off = self.header_len;
        for (i, (&len, &want)) in blocks.iter().zip(&crcs).enumerate() {
            let mut crc = 0u32;
            let mut done = 0u64;
            while done < len {
                let n = ((len - done) as usize).min(buf.len());
                crate::util::read_exact_at(&self.file, &self.path, &mut buf[..n], off + done)
                    .map_err(|e| e.to_string())?;
                crc = crc32c::crc32c_append(crc, &buf[..n]);
                done += n as u64;
            }
            if crc != want {
                return Err(format!(
                    "{}: CRC32C mismatch in payload block {i}: {crc:08x} != {want:08x}",
                    self.path.display()
                ));
            }
            off += len;
        }
        Ok(())
    }
}

/// Builds a descriptor file's kvtree: `<parent rank> -> DESC -> descriptor` per entry.
pub(crate) fn descriptor_tree(entries: &[(usize, KvTree)]) -> KvTree {
    let mut t = KvTree::new();
    for (w, d) in entries {
        t.entry(w.to_string()).set("DESC", d.clone());
    }
    t
}

/// Checks a redundancy file's payload (lengths and CRC32C) given its block lengths; used by the
/// command-line tool.
pub fn check_payload_file(
    path: &Path,
    blocks: &[u64],
    buf: &mut [u8],
) -> std::result::Result<(), String> {
    let f = RedFile::open(path).map_err(|e| e.to_string())?;
    f.check_payload(blocks, true, buf)
}

/// The `DESC` entries of a header: each member's file list with its descriptor.
pub(crate) fn member_descs(
    rs: &crate::descriptor::Redset,
    files: &[Option<RankFiles>],
    members: impl IntoIterator<Item = usize>,
) -> Result<Vec<(usize, KvTree)>> {
    members
        .into_iter()
        .map(|m| {
            let f = files[m].as_ref().ok_or_else(|| {
                Error::Unrecoverable(format!("file list of group rank {m} is unknown"))
            })?;
            Ok((m, f.to_kvtree(Some(&rs.member_desc(m)))))
        })
        .collect()
}

/// Writes the final header at offset 0 of the file being written at `tmp` (and fsyncs it).
pub(crate) fn write_header(
    spec: &HeaderSpec,
    hlen: u64,
    out: Option<&std::fs::File>,
    tmp: &Path,
    fsync: bool,
    err: &mut crate::pipeline::ErrSlot,
) {
    let Some(out) = out else { return };
    if err.is_err() {
        return;
    }
    let bytes = spec.to_kvtree().to_file_bytes();
    if bytes.len() as u64 != hlen {
        err.set(Error::InvalidArgument(format!(
            "header size changed from {hlen} to {}",
            bytes.len()
        )));
        return;
    }
    if let Err(e) = crate::prof::timed(crate::prof::Phase::Write, || {
        crate::util::write_all_at(out, tmp, &bytes, 0)
    }) {
        err.set(e);
        return;
    }
    if fsync {
        err.keep(crate::util::sync_file(out, tmp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Scheme;

    /// redset 0.4 rebuilds a lost member's header from a neighbour's (XOR: the right one), so the
    /// rebuilt file carries the neighbour's payload CRCs: they must not be checked against it.
    #[test]
    fn payload_crcs_are_only_trusted_for_their_owner() {
        let crc = crc32c::crc32c(&[7]);
        let spec = HeaderSpec {
            rank: 2,
            descs: Vec::new(),
            group_map: Some(vec![0, 1, 2, 3]),
            chunk: Some(1),
            payload_crcs: vec![crc],
        };
        let h = spec.to_kvtree();
        assert_eq!(
            h.get("PAYLOAD_CRC32C").and_then(|p| p.get_u64("RANK")),
            Some(2)
        );
        assert_eq!(payload_crcs(&h, Some(2)).unwrap(), vec![crc]);
        assert!(payload_crcs(&h, Some(1)).unwrap().is_empty());
        assert!(payload_crcs(&h, None).unwrap().is_empty());
        let mut untagged = h.clone();
        untagged.entry("PAYLOAD_CRC32C").unset("RANK");
        assert!(payload_crcs(&untagged, Some(2)).unwrap().is_empty());

        // member 2's header as redset's XOR rebuild leaves it in member 1's file (RANK replaced),
        // in front of member 1's payload: lengths are checked, the foreign CRC is not
        let dir = tempfile::tempdir().unwrap();
        let mut copied = h.clone();
        copied.set_kv("RANK", 1);
        let write = |name: &str, t: &KvTree, payload: &[u8]| {
            let p = dir.path().join(name);
            let mut b = t.to_file_bytes();
            b.extend_from_slice(payload);
            std::fs::write(&p, b).unwrap();
            RedFile::open(&p).unwrap()
        };
        let mut buf = vec![0u8; 16];
        let rebuilt = write("ds.1.xor.grp_1_of_1.mem_2_of_4.redset", &copied, &[9]);
        assert_eq!(rebuilt.check_payload(&[1], true, &mut buf), Ok(()));
        assert!(rebuilt.check_payload(&[2], true, &mut buf).is_err());
        // the owner's own file is still checked
        let own = write("ds.2.xor.grp_1_of_1.mem_3_of_4.redset", &h, &[9]);
        assert!(own.check_payload(&[1], true, &mut buf).is_err());
        let own = write("ds.2.xor.grp_1_of_1.mem_3_of_4.redset", &h, &[7]);
        assert_eq!(own.check_payload(&[1], true, &mut buf), Ok(()));
    }

    #[test]
    fn names_roundtrip() {
        let info = SetInfo {
            scheme: Scheme::Xor,
            enabled: true,
            groups: 2,
            group: 1,
            ranks: 4,
            rank: 3,
            wrank: 7,
            wranks: 8,
        };
        let f = redundancy_file("/tmp/x/ckpt.", &info);
        assert_eq!(
            f,
            PathBuf::from("/tmp/x/ckpt.7.xor.grp_2_of_2.mem_4_of_4.redset")
        );
        assert_eq!(
            descriptor_file("/tmp/x/ckpt.", 7),
            PathBuf::from("/tmp/x/ckpt.7.redset")
        );
        let p = parse_redundancy_name("ckpt.7.xor.grp_2_of_2.mem_4_of_4.redset").unwrap();
        assert_eq!(
            p,
            ParsedName {
                prefix: "ckpt.".into(),
                wrank: 7,
                tag: "xor".into(),
                group: 1,
                groups: 2,
                rank: 3,
                ranks: 4
            }
        );
        assert!(parse_redundancy_name("ckpt.7.redset").is_none());
        assert!(parse_redundancy_name("ckpt.7.foo.grp_1_of_1.mem_1_of_1.redset").is_none());
    }
}
