//! One rank's persisted store: a file that holds a CD's entries in add order, written straight
//! from the store's buffers, with a CRC32C of every chunk.
//!
//! ```text
//! header   "CDPERS01" | u32 format (1) | u32 rank | u64 version | u64 chunk | u64 data_len
//!          | u32 entries | entries x (u8 restoration, 7 zero bytes, u64 length) | u32 crc32c
//! data     the COPY entries' bytes, in add order (data_len bytes)
//! trailer  per COPY entry, a u32 crc32c per `chunk` bytes of it (the last may be short)
//!          | u32 crc32c of the trailer
//! ```
//! All numbers little-endian. Chunks restart at each entry, so an entry is read straight into
//! its destination and checked there, without reading the file twice. The file is written
//! under a temporary name, fsynced and renamed (see [`write_store`]).

use crate::inject;
use cd_core::{Restoration, SavedEntry};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"CDPERS01";
const FORMAT: u32 = 1;
/// Bytes covered by one CRC32C.
pub(crate) const CHUNK: u64 = 1 << 20;
const FIXED: usize = 8 + 4 + 4 + 8 + 8 + 8 + 4;
const ENTRY: usize = 16;

fn kind_code(r: Restoration) -> u8 {
    match r {
        Restoration::Copy => 0,
        Restoration::Parent => 1,
        Restoration::Regen => 2,
    }
}

fn kind_of(code: u8) -> Option<Restoration> {
    match code {
        0 => Some(Restoration::Copy),
        1 => Some(Restoration::Parent),
        2 => Some(Restoration::Regen),
        _ => None,
    }
}

/// Writes `entries` to `path` under `path.tmp`, fsyncs and renames it into place; returns
/// the file's size.
pub(crate) fn write_store(
    path: &Path,
    rank: u32,
    version: u64,
    entries: &[SavedEntry<'_>],
) -> Result<u64, String> {
    let io = |what: &str, e: std::io::Error| format!("{what} {}: {e}", path.display());
    let data_len: u64 = entries
        .iter()
        .filter(|e| e.restoration == Restoration::Copy)
        .map(|e| e.length as u64)
        .sum();
    let mut head = Vec::with_capacity(FIXED + ENTRY * entries.len() + 4);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&FORMAT.to_le_bytes());
    head.extend_from_slice(&rank.to_le_bytes());
    head.extend_from_slice(&version.to_le_bytes());
    head.extend_from_slice(&CHUNK.to_le_bytes());
    head.extend_from_slice(&data_len.to_le_bytes());
    head.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for e in entries {
        head.push(kind_code(e.restoration));
        head.extend_from_slice(&[0; 7]);
        head.extend_from_slice(&(e.length as u64).to_le_bytes());
    }
    let crc = crc32c::crc32c(&head);
    head.extend_from_slice(&crc.to_le_bytes());

    let tmp = path.with_extension("cdp.tmp");
    let mut f = File::create(&tmp).map_err(|e| io("create", e))?;
    let mut trailer = Vec::new();
    let written = (|| -> std::io::Result<()> {
        inject::write_fault()?;
        f.write_all(&head)?;
        for e in entries
            .iter()
            .filter(|e| e.restoration == Restoration::Copy)
        {
            // CRCs of `CHUNK`-byte chunks of the entry, across the store's pieces
            let (mut crc, mut in_chunk) = (0u32, 0u64);
            for piece in &e.pieces {
                f.write_all(piece)?;
                let mut rest: &[u8] = piece;
                while !rest.is_empty() {
                    let take = rest.len().min((CHUNK - in_chunk) as usize);
                    crc = crc32c::crc32c_append(crc, &rest[..take]);
                    in_chunk += take as u64;
                    rest = &rest[take..];
                    if in_chunk == CHUNK {
                        trailer.extend_from_slice(&crc.to_le_bytes());
                        (crc, in_chunk) = (0, 0);
                    }
                }
            }
            if in_chunk > 0 {
                trailer.extend_from_slice(&crc.to_le_bytes());
            }
        }
        let crc = crc32c::crc32c(&trailer);
        trailer.extend_from_slice(&crc.to_le_bytes());
        f.write_all(&trailer)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", e));
    }
    drop(f);
    inject::crash_point("data-written", version);
    std::fs::rename(&tmp, path).map_err(|e| io("rename into", e))?;
    Ok(head.len() as u64 + data_len + trailer.len() as u64)
}

/// A persisted store, opened and checked (header and trailer CRCs, size).
#[derive(Debug)]
pub(crate) struct StoreFile {
    file: File,
    path: std::path::PathBuf,
    /// The entries: restoration and length, in add order.
    pub(crate) entries: Vec<(Restoration, usize)>,
    /// Offset of each entry's data (COPY entries only, else 0).
    offsets: Vec<u64>,
    /// Each entry's chunk CRCs.
    crcs: Vec<Vec<u32>>,
    /// The file's size.
    size: u64,
}

impl StoreFile {
    /// Opens `path` and checks everything but the data's CRCs (checked as entries are read).
    pub(crate) fn open(path: &Path) -> Result<StoreFile, String> {
        let bad = |why: &str| format!("{} is damaged: {why}", path.display());
        let mut file =
            File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let mut bytes = Vec::new();
        let size = file
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let mut fixed = [0u8; FIXED];
        file.read_exact(&mut fixed)
            .map_err(|_| bad("shorter than a header"))?;
        if &fixed[..8] != MAGIC {
            return Err(bad("not a persisted CD store (bad magic)"));
        }
        let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        if u32_at(&fixed, 8) != FORMAT {
            return Err(bad("unknown format version"));
        }
        let chunk = u64_at(&fixed, 24);
        let data_len = u64_at(&fixed, 32);
        let n = u32_at(&fixed, 40) as usize;
        if chunk == 0 || (n as u64) * ENTRY as u64 > size {
            return Err(bad("header fields out of range"));
        }
        bytes.extend_from_slice(&fixed);
        let mut table = vec![0u8; n * ENTRY + 4];
        file.read_exact(&mut table)
            .map_err(|_| bad("entry table truncated"))?;
        bytes.extend_from_slice(&table[..n * ENTRY]);
        if crc32c::crc32c(&bytes) != u32_at(&table, n * ENTRY) {
            return Err(bad("header CRC32C mismatch"));
        }
        let mut entries = Vec::with_capacity(n);
        let mut offsets = Vec::with_capacity(n);
        let mut at = (FIXED + n * ENTRY + 4) as u64;
        let mut chunks = 0u64;
        for i in 0..n {
            let kind = kind_of(table[i * ENTRY]).ok_or_else(|| bad("unknown entry kind"))?;
            let len = u64_at(&table, i * ENTRY + 8);
            entries.push((kind, len as usize));
            offsets.push(if kind == Restoration::Copy { at } else { 0 });
            if kind == Restoration::Copy {
                at += len;
                chunks += len.div_ceil(chunk);
            }
        }
        let data_start = (FIXED + n * ENTRY + 4) as u64;
        if at != data_start + data_len || size != at + chunks * 4 + 4 {
            return Err(bad(&format!(
                "size {size} does not match its header (expected {})",
                at + chunks * 4 + 4
            )));
        }
        let mut trailer = vec![0u8; chunks as usize * 4 + 4];
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.read_exact(&mut trailer))
            .map_err(|e| bad(&format!("trailer unreadable: {e}")))?;
        let body = &trailer[..chunks as usize * 4];
        if crc32c::crc32c(body) != u32_at(&trailer, body.len()) {
            return Err(bad("trailer CRC32C mismatch"));
        }
        let mut crcs = Vec::with_capacity(n);
        let mut k = 0;
        for &(kind, len) in &entries {
            let m = if kind == Restoration::Copy {
                (len as u64).div_ceil(chunk) as usize
            } else {
                0
            };
            crcs.push((k..k + m).map(|j| u32_at(body, j * 4)).collect());
            k += m;
        }
        Ok(StoreFile {
            file,
            path: path.to_owned(),
            entries,
            offsets,
            crcs,
            size,
        })
    }

    /// The file's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Reads every COPY entry and checks its CRC32Cs (a chunk's worth of memory at a time).
    pub(crate) fn verify(&mut self) -> Result<(), String> {
        let mut buf = Vec::new();
        for i in 0..self.entries.len() {
            let (kind, len) = self.entries[i];
            if kind != Restoration::Copy {
                continue;
            }
            let mut at = 0usize;
            for (k, &crc) in self.crcs[i].iter().enumerate() {
                let n = (len - at).min(CHUNK as usize);
                buf.resize(n, 0);
                self.file
                    .seek(SeekFrom::Start(self.offsets[i] + at as u64))
                    .and_then(|_| self.file.read_exact(&mut buf))
                    .map_err(|e| format!("reading entry {i} of {}: {e}", self.path.display()))?;
                if crc32c::crc32c(&buf) != crc {
                    return Err(format!(
                        "{} is damaged: CRC32C mismatch in chunk {k} of entry {i}",
                        self.path.display()
                    ));
                }
                at += n;
            }
        }
        Ok(())
    }

    /// Reads COPY entry `i` into `dst` (its length) and checks its chunks' CRC32C.
    pub(crate) fn read_entry(&mut self, i: usize, dst: &mut [u8]) -> Result<(), String> {
        self.file
            .seek(SeekFrom::Start(self.offsets[i]))
            .and_then(|_| self.file.read_exact(dst))
            .map_err(|e| format!("reading entry {i} of {}: {e}", self.path.display()))?;
        for (k, (part, &crc)) in dst.chunks(CHUNK as usize).zip(&self.crcs[i]).enumerate() {
            if crc32c::crc32c(part) != crc {
                return Err(format!(
                    "{} is damaged: CRC32C mismatch in chunk {k} of entry {i}",
                    self.path.display()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_across_pieces_and_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.cdp");
        let a: Vec<u8> = (0..(CHUNK as usize + 100)).map(|i| (i * 7) as u8).collect();
        let b = [1u8, 2, 3];
        let entries = [
            SavedEntry {
                restoration: Restoration::Copy,
                length: a.len() + b.len(),
                pieces: vec![&a[..], &b[..]],
            },
            SavedEntry {
                restoration: Restoration::Regen,
                length: 64,
                pieces: vec![],
            },
            SavedEntry {
                restoration: Restoration::Copy,
                length: 3,
                pieces: vec![&b[..]],
            },
        ];
        let size = write_store(&path, 3, 7, &entries).unwrap();
        assert_eq!(size, std::fs::metadata(&path).unwrap().len());
        let mut f = StoreFile::open(&path).unwrap();
        assert_eq!(f.size(), size);
        f.verify().unwrap();
        assert_eq!(
            f.entries,
            vec![
                (Restoration::Copy, a.len() + 3),
                (Restoration::Regen, 64),
                (Restoration::Copy, 3)
            ]
        );
        let mut first = vec![0u8; a.len() + 3];
        f.read_entry(0, &mut first).unwrap();
        assert_eq!(&first[..a.len()], &a[..]);
        assert_eq!(&first[a.len()..], &b[..]);
        let mut last = [0u8; 3];
        f.read_entry(2, &mut last).unwrap();
        assert_eq!(last, b);

        // a flipped data byte is caught by its chunk's CRC
        let mut bytes = std::fs::read(&path).unwrap();
        let at = FIXED + 3 * ENTRY + 4 + 10;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let mut f = StoreFile::open(&path).unwrap();
        let err = f.verify().unwrap_err();
        assert!(
            err.contains("CRC32C mismatch in chunk 0 of entry 0"),
            "{err}"
        );
        let err = f.read_entry(0, &mut first).unwrap_err();
        assert!(
            err.contains("CRC32C mismatch in chunk 0 of entry 0"),
            "{err}"
        );
        // a truncated file is refused at open
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(StoreFile::open(&path).unwrap_err().contains("size"));
    }
}
