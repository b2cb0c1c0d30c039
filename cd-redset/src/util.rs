//! Small file helpers shared by the schemes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::prof::{timed, Phase};

/// Writes `bytes` to `path` through a temporary file and a rename, so that a reader never
/// sees a half-written file and a failed write leaves the old file untouched.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8], fsync: bool) -> Result<()> {
    let tmp = write_tmp(path, bytes, fsync)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("rename", path, e)
    })
}

/// Writes `bytes` under `path`'s temporary name ([`tmp_name`]) and returns that name, for the
/// caller to move into place; on error nothing is left behind.
pub(crate) fn write_tmp(path: &Path, bytes: &[u8], fsync: bool) -> Result<PathBuf> {
    let tmp = tmp_name(path);
    let written = File::create(&tmp)
        .map_err(|e| Error::io("create", &tmp, e))
        .and_then(|mut f| {
            f.write_all(bytes)
                .map_err(|e| Error::io("write", &tmp, e))?;
            if fsync {
                f.sync_all().map_err(|e| Error::io("fsync", &tmp, e))?;
            }
            Ok(())
        });
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The temporary name used while `path` is being written.
pub(crate) fn tmp_name(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// The temporary name of a data file while a rebuild writes it (a suffix no application is
/// likely to use, so that no user file is overwritten).
pub(crate) fn rebuild_tmp_name(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".cd-redset-rebuild");
    PathBuf::from(s)
}

/// Creates (truncating) a file for writing.
pub(crate) fn create_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| Error::io("create", path, e))
}

/// Opens a file read-only.
pub(crate) fn open_ro(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io("open", path, e))
}

/// Reads exactly `buf.len()` bytes at `off`; a short file is an error.
pub(crate) fn read_exact_at(f: &File, path: &Path, buf: &mut [u8], off: u64) -> Result<()> {
    f.read_exact_at(buf, off)
        .map_err(|e| Error::io("read", path, e))
}

/// Writes all of `buf` at `off`.
pub(crate) fn write_all_at(f: &File, path: &Path, buf: &[u8], off: u64) -> Result<()> {
    f.write_all_at(buf, off)
        .map_err(|e| Error::io("write", path, e))
}

/// Host name of this machine (the default failure group).
pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes; gethostname writes at most that
    // many bytes and we NUL-terminate defensively below.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if rc != 0 {
        return "localhost".to_owned();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Formats a CRC as the fixed-width hex string we store in headers (always 8 digits, so a
/// header's size does not depend on the CRC values it holds).
pub(crate) fn crc_hex(crc: u32) -> String {
    format!("{crc:08x}")
}

/// Parses a CRC written by [`crc_hex`].
pub(crate) fn parse_crc_hex(s: &str) -> Option<u32> {
    if s.len() != 8 {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// CRC32C of `data` appended to `crc` (timed).
pub(crate) fn crc(crc: u32, data: &[u8]) -> u32 {
    timed(Phase::Crc, || crc32c::crc32c_append(crc, data))
}

/// The CRC32C of the bytes of `crc` followed by `zeros` zero bytes, without reading them
/// (timed): the CRC32C of `zeros` zeros is built by doubling with `crc32c_combine`.
pub(crate) fn crc_zero_extend(crc: u32, zeros: u64) -> u32 {
    timed(Phase::Crc, || {
        let (mut acc, mut acc_len) = (0u32, 0u64);
        let (mut block, mut block_len) = (crc32c::crc32c(&[0]), 1u64);
        while acc_len < zeros {
            if zeros & block_len != 0 {
                acc = crc32c::crc32c_combine(acc, block, block_len as usize);
                acc_len += block_len;
            }
            block = crc32c::crc32c_combine(block, block, block_len as usize);
            block_len *= 2;
        }
        crc32c::crc32c_combine(crc, acc, zeros as usize)
    })
}

/// fsync (timed).
pub(crate) fn sync_file(f: &File, path: &Path) -> Result<()> {
    timed(Phase::Sync, || f.sync_all()).map_err(|e| Error::io("fsync", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_extension_equals_checksumming_the_zeros() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0usize, 1, 5, 999, 1000] {
            let c = crc32c::crc32c(&data[..len]);
            for zeros in [0usize, 1, 2, 3, 7, 8, 255, 4096, 100_001] {
                let mut padded = data[..len].to_vec();
                padded.resize(len + zeros, 0);
                assert_eq!(
                    crc_zero_extend(c, zeros as u64),
                    crc32c::crc32c(&padded),
                    "{len} bytes, {zeros} zeros"
                );
            }
        }
    }
}
