//! What a rank protects: its ordered file list with metadata, and CRC32C values of its data.
//!
//! In a header this is the "current hash" redset stores under `DESC/<group rank>`:
//!
//! ```text
//! DESC            the rank's redundancy descriptor
//! FILE
//!   0
//!     ./testfile_0.out
//!       SIZE = 4194304  (and MODE, UID, GID, times)
//! FILES = 1
//! CRC32C          ours, ignored by redset: CRC32C of each chunk of the logical file
//!   CHUNK = 1398102 chunk size the CRCs were computed over
//!   COUNT = 3
//!   0 = 1a2b3c4d    8 hex digits each, so a header's size never depends on CRC values
//! ```
//!
//! redset only notices a missing or truncated file; the chunk CRCs let us detect silent
//! corruption of data files too, and treat such a rank as lost.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::kvtree::KvTree;
use crate::logical_file::LogicalFile;
use crate::meta::FileMeta;
use crate::util::{crc_hex, parse_crc_hex};

/// One protected file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// The name as given to `apply` (relative names are relative to the working directory).
    pub name: String,
    /// Its metadata at `apply` time.
    pub meta: FileMeta,
}

/// CRC32C of each `chunk`-sized piece of a logical file (real bytes only, no padding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkCrcs {
    /// Chunk size the CRCs cover.
    pub chunk: u64,
    /// One CRC per chunk.
    pub crcs: Vec<u32>,
}

impl ChunkCrcs {
    /// Placeholder with the right shape (all zero) for sizing a header before the CRCs exist.
    pub fn placeholder(chunk: u64, count: usize) -> Self {
        ChunkCrcs {
            chunk,
            crcs: vec![0; count],
        }
    }

    /// Computes the CRCs of `lf` by reading it sequentially.
    pub fn compute(
        lf: &LogicalFile,
        chunk: u64,
        count: usize,
        buf: &mut [u8],
    ) -> Result<ChunkCrcs> {
        let mut crcs = Vec::with_capacity(count);
        for c in 0..count as u64 {
            crcs.push(crc_of_range(lf, c * chunk, chunk, buf)?);
        }
        Ok(ChunkCrcs { chunk, crcs })
    }

    fn encode(&self, t: &mut KvTree) {
        t.set_kv("CHUNK", self.chunk);
        t.set_kv("COUNT", self.crcs.len());
        for (i, c) in self.crcs.iter().enumerate() {
            t.set_kv(i.to_string(), crc_hex(*c));
        }
    }

    fn decode(t: &KvTree, ctx: &str) -> Result<ChunkCrcs> {
        let chunk = t.require_u64("CHUNK", ctx)?;
        let count = t.require_u64("COUNT", ctx)? as usize;
        if count > t.len() {
            return Err(Error::header(
                format!("{ctx}COUNT"),
                "more CRCs announced than present",
            ));
        }
        let mut crcs = Vec::with_capacity(count);
        for i in 0..count {
            let k = i.to_string();
            let v = t
                .get_val(&k)
                .and_then(parse_crc_hex)
                .ok_or_else(|| Error::header(format!("{ctx}{k}"), "missing or malformed CRC32C"))?;
            crcs.push(v);
        }
        Ok(ChunkCrcs { chunk, crcs })
    }
}

/// CRC32C of the real bytes of `lf` in `[off, off+len)`.
pub(crate) fn crc_of_range(lf: &LogicalFile, off: u64, len: u64, buf: &mut [u8]) -> Result<u32> {
    let mut crc = 0u32;
    let end = (off + len).min(lf.len());
    let mut pos = off;
    while pos < end {
        let n = ((end - pos) as usize).min(buf.len());
        crate::prof::timed(crate::prof::Phase::Read, || lf.read_at(pos, &mut buf[..n]))?;
        crc = crate::util::crc(crc, &buf[..n]);
        pos += n as u64;
    }
    Ok(crc)
}

/// A rank's protected files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankFiles {
    /// Files in `apply` order.
    pub files: Vec<FileEntry>,
    /// Chunk CRCs of the logical file, when known.
    pub crc: Option<ChunkCrcs>,
}

impl RankFiles {
    /// Stats each file.
    pub fn stat(paths: &[PathBuf]) -> Result<RankFiles> {
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            let name = p
                .to_str()
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("file name is not UTF-8: {}", p.display()))
                })?
                .to_owned();
            if name.is_empty() {
                return Err(Error::InvalidArgument("empty file name".into()));
            }
            let meta = FileMeta::stat(p)?;
            if meta.mode & libc::S_IFMT != libc::S_IFREG {
                return Err(Error::InvalidArgument(format!(
                    "{name} is not a regular file (only regular files can be protected)"
                )));
            }
            files.push(FileEntry { name, meta });
        }
        Ok(RankFiles { files, crc: None })
    }

    /// Total bytes of the logical file.
    pub fn total(&self) -> u64 {
        self.files.iter().map(|f| f.meta.size).sum()
    }

    /// Paths and sizes in order.
    pub fn paths(&self) -> Vec<(PathBuf, u64)> {
        self.files
            .iter()
            .map(|f| (PathBuf::from(&f.name), f.meta.size))
            .collect()
    }

    /// Opens the files for reading as one logical file.
    pub fn open_read(&self) -> Result<LogicalFile> {
        LogicalFile::open_read(&self.paths())
    }

    /// Creates the files (truncating) for a rebuild.
    pub fn create(&self) -> Result<LogicalFile> {
        LogicalFile::create(&self.paths())
    }

    /// Creates the files under their rebuild temporary names
    /// ([`crate::pipeline::Staged`] moves them into place).
    pub(crate) fn create_tmp(&self) -> Result<LogicalFile> {
        let tmp: Vec<(PathBuf, u64)> = self
            .paths()
            .into_iter()
            .map(|(p, s)| (crate::util::rebuild_tmp_name(&p), s))
            .collect();
        LogicalFile::create(&tmp)
    }

    /// Restores recorded metadata on every file.
    pub fn apply_meta(&self) -> Result<()> {
        for f in &self.files {
            f.meta.apply(std::path::Path::new(&f.name))?;
        }
        Ok(())
    }

    /// Checks that every file exists with its recorded size; on failure says why.
    pub fn check_present(&self) -> std::result::Result<(), String> {
        for f in &self.files {
            match std::fs::metadata(&f.name) {
                Ok(m) if m.len() == f.meta.size => {}
                Ok(m) => {
                    return Err(format!(
                        "{}: size {} != recorded {}",
                        f.name,
                        m.len(),
                        f.meta.size
                    ))
                }
                Err(e) => return Err(format!("{}: {e}", f.name)),
            }
        }
        Ok(())
    }

    /// Checks presence, sizes and (when recorded) the chunk CRCs; on failure says why.
    pub fn verify(&self, buf: &mut [u8]) -> std::result::Result<(), String> {
        self.check_present()?;
        let Some(crc) = &self.crc else { return Ok(()) };
        let lf = self.open_read().map_err(|e| e.to_string())?;
        for (i, want) in crc.crcs.iter().enumerate() {
            let got = crc_of_range(&lf, i as u64 * crc.chunk, crc.chunk, buf)
                .map_err(|e| e.to_string())?;
            if got != *want {
                return Err(format!(
                    "CRC32C mismatch in chunk {i} (bytes {}..) of the logical file: {got:08x} != {want:08x}",
                    i as u64 * crc.chunk
                ));
            }
        }
        Ok(())
    }

    /// The header form (redset's "current hash"), with the descriptor under `DESC` if given.
    pub fn to_kvtree(&self, desc: Option<&KvTree>) -> KvTree {
        let mut t = KvTree::new();
        t.set_kv("FILES", self.files.len());
        let ft = t.entry("FILE");
        for (i, f) in self.files.iter().enumerate() {
            let mut m = KvTree::new();
            f.meta.encode(&mut m);
            ft.entry(i.to_string()).set(f.name.clone(), m);
        }
        if let Some(d) = desc {
            t.set("DESC", d.clone());
        }
        if let Some(c) = &self.crc {
            c.encode(t.entry("CRC32C"));
        }
        t
    }

    /// Parses the header form; `ctx` names the location for error messages.
    pub fn from_kvtree(t: &KvTree, ctx: &str) -> Result<RankFiles> {
        let n = t.require_u64("FILES", ctx)? as usize;
        let ft = t.get("FILE");
        if n > 0 && !matches!(ft, Some(f) if f.len() >= n) {
            return Err(Error::header(
                format!("{ctx}FILE"),
                format!("fewer than FILES={n} entries"),
            ));
        }
        let mut files = Vec::with_capacity(n);
        for i in 0..n {
            let k = i.to_string();
            let idx = ft
                .and_then(|f| f.get(&k))
                .ok_or_else(|| Error::header(format!("{ctx}FILE/{k}"), "missing"))?;
            let (name, m) = match idx.iter().next() {
                Some(e) if idx.len() == 1 => e,
                _ => {
                    return Err(Error::header(
                        format!("{ctx}FILE/{k}"),
                        "expected exactly one file name",
                    ))
                }
            };
            let meta = FileMeta::decode(m, &format!("{ctx}FILE/{k}/{name}/"))?;
            files.push(FileEntry {
                name: name.to_owned(),
                meta,
            });
        }
        let crc = match t.get("CRC32C") {
            Some(c) => Some(ChunkCrcs::decode(c, &format!("{ctx}CRC32C/"))?),
            None => None,
        };
        Ok(RankFiles { files, crc })
    }
}
