//! The logical file: a rank's files concatenated in order and zero-padded at the end.
//!
//! XOR and Reed-Solomon treat every rank as if it wrote one file of the same length, divisible
//! into chunks (redset's `redset_lofi`). Reads past the real data return zeros; writes past it
//! are dropped. Positions are byte offsets into the concatenation, so a read may span several
//! physical files, including empty ones.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::util;

struct Part {
    path: PathBuf,
    file: File,
    start: u64,
    size: u64,
}

/// An ordered set of physical files read and written as one.
pub struct LogicalFile {
    parts: Vec<Part>,
    total: u64,
}

impl LogicalFile {
    /// Opens existing files for reading; `sizes` are the recorded sizes (each file must be at
    /// least that long).
    pub fn open_read(files: &[(PathBuf, u64)]) -> Result<LogicalFile> {
        Self::build(files, util::open_ro)
    }

    /// Creates (truncates) the files for writing and gives each its final length, so that
    /// every byte not yet written reads as zero.
    pub fn create(files: &[(PathBuf, u64)]) -> Result<LogicalFile> {
        Self::build(files, |p| {
            if let Some(dir) = p.parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| Error::io("create directory", dir, e))?;
                }
            }
            util::create_rw(p)
        })
        .and_then(|lf| {
            for part in &lf.parts {
                part.file
                    .set_len(part.size)
                    .map_err(|e| Error::io("truncate", &part.path, e))?;
            }
            Ok(lf)
        })
    }

    fn build(
        files: &[(PathBuf, u64)],
        open: impl Fn(&Path) -> Result<File>,
    ) -> Result<LogicalFile> {
        let mut parts = Vec::with_capacity(files.len());
        let mut start = 0u64;
        for (path, size) in files {
            let file = open(path)?;
            parts.push(Part {
                path: path.clone(),
                file,
                start,
                size: *size,
            });
            start = start
                .checked_add(*size)
                .ok_or_else(|| Error::InvalidArgument("total file size overflows u64".into()))?;
        }
        Ok(LogicalFile {
            parts,
            total: start,
        })
    }

    /// Total bytes of real data.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True when there is no real data.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Index of the first part that holds offset `off` (or `parts.len()` past the end).
    fn part_at(&self, off: u64) -> usize {
        // first part whose end is beyond off (empty parts are skipped)
        self.parts.partition_point(|p| p.start + p.size <= off)
    }

    /// The pieces of the `len` logical bytes at `off` that hold real data, in order: each
    /// part, the offset in it, and the byte range of the request it covers. They are
    /// contiguous from the start of the request; what they leave at its end is padding.
    fn spans(
        &self,
        off: u64,
        len: usize,
    ) -> impl Iterator<Item = (&Part, u64, std::ops::Range<usize>)> + '_ {
        let mut done = 0usize;
        let mut i = self.part_at(off);
        std::iter::from_fn(move || {
            while done < len && i < self.parts.len() {
                let p = &self.parts[i];
                i += 1;
                let pos = off + done as u64;
                if pos >= p.start + p.size {
                    continue; // an empty part
                }
                let in_part = pos - p.start;
                let n = ((p.size - in_part) as usize).min(len - done);
                let range = done..done + n;
                done += n;
                return Some((p, in_part, range));
            }
            None
        })
    }

    /// Fills `buf` with the logical bytes at `off`, zeros past the end. Returns how many bytes
    /// of real data it read.
    pub fn read_at(&self, off: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0usize;
        for (p, at, range) in self.spans(off, buf.len()) {
            done = range.end;
            util::read_exact_at(&p.file, &p.path, &mut buf[range], at)?;
        }
        buf[done..].fill(0);
        Ok(done)
    }

    /// Writes `buf` at logical offset `off`; bytes past the real data are dropped.
    pub fn write_at(&self, off: u64, buf: &[u8]) -> Result<()> {
        for (p, at, range) in self.spans(off, buf.len()) {
            util::write_all_at(&p.file, &p.path, &buf[range], at)?;
        }
        Ok(())
    }

    /// Flushes every file to stable storage.
    pub fn sync(&self) -> Result<()> {
        for p in &self.parts {
            crate::util::sync_file(&p.file, &p.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_files_and_pads() {
        let dir = tempfile::tempdir().unwrap();
        let specs: Vec<(PathBuf, Vec<u8>)> = vec![
            (dir.path().join("a"), b"abc".to_vec()),
            (dir.path().join("b"), vec![]),
            (dir.path().join("c"), b"defgh".to_vec()),
        ];
        for (p, d) in &specs {
            std::fs::write(p, d).unwrap();
        }
        let list: Vec<_> = specs
            .iter()
            .map(|(p, d)| (p.clone(), d.len() as u64))
            .collect();
        let lf = LogicalFile::open_read(&list).unwrap();
        assert_eq!(lf.len(), 8);
        let mut buf = [9u8; 12];
        assert_eq!(lf.read_at(0, &mut buf).unwrap(), 8);
        assert_eq!(&buf, b"abcdefgh\0\0\0\0");
        let mut buf = [9u8; 4];
        assert_eq!(lf.read_at(2, &mut buf).unwrap(), 4);
        assert_eq!(&buf, b"cdef");
        assert_eq!(lf.read_at(7, &mut buf).unwrap(), 1);
        assert_eq!(&buf, b"h\0\0\0");
        assert_eq!(lf.read_at(100, &mut buf).unwrap(), 0);

        let out: Vec<_> = list
            .iter()
            .map(|(p, s)| (p.with_extension("o"), *s))
            .collect();
        let w = LogicalFile::create(&out).unwrap();
        w.write_at(2, b"cdefghXYZ").unwrap();
        w.write_at(0, b"ab").unwrap();
        assert_eq!(std::fs::read(&out[0].0).unwrap(), b"abc");
        assert_eq!(std::fs::read(&out[1].0).unwrap(), b"");
        assert_eq!(std::fs::read(&out[2].0).unwrap(), b"defgh");
    }
}
