//! A tree of string keys, and its binary file format, byte-compatible with ECP-VeloC KVTree.
//!
//! redset (and SCR, VeloC) store every header and descriptor as a *kvtree*: each node maps
//! string keys to child nodes, and a "value" is simply a key whose child is an empty node
//! (`SIZE -> {4194304 -> {}}`, printed `SIZE = 4194304`). We keep the same model so that our
//! files read in their tools and theirs in ours.
//!
//! # Binary format (KVTree `kvtree_write_fd`, file type 1, version 1)
//!
//! ```text
//! offset size  field
//!      0    4  magic 0x951fc3f5              (big-endian, like every integer below)
//!      4    2  file type 1 (hash)
//!      6    2  version 1
//!      8    8  file size: header + packed tree + crc
//!     16    4  flags, bit 0 = a CRC32 follows the tree
//!     20    …  packed tree: u32 count, then per element: key bytes, NUL, packed child tree
//!   last    4  zlib CRC32 of every byte before it (when flag bit 0 is set)
//! ```
//!
//! The C library keeps children in a linked list in insertion order and redset sorts the tree
//! (ascending `strcmp`) before writing so that a rebuilt header is byte-identical to the
//! original. Our tree is a `BTreeMap`, whose order on `String` is byte order, i.e. `strcmp`
//! order, so we always write sorted keys and reproduce redset's bytes for the same content.
//!
//! The parser never trusts the input: lengths are checked against the buffer, element counts
//! against the bytes left, nesting depth is bounded, and keys must be UTF-8 without NUL.
//! Duplicate keys (legal in the C list) are merged, as `kvtree_merge` does on read.
//!
//! # Checked against KVTree 1.5.0
//!
//! Headers and descriptor files written by the real redset 0.4.0 / KVTree 1.5.0 parse into the
//! same trees and [`KvTree::to_file_bytes`] reproduces them byte for byte (`docs/compat.md`,
//! `tests/formats.rs`). Known differences, none of which redset's own files exercise:
//!
//! * keys are UTF-8 here; KVTree takes any bytes, so a file name that is not UTF-8 makes a
//!   redset header unreadable to us;
//! * values are parsed as decimal; KVTree's `strtoul(.., 0)` also reads `0x..` (hex) and a
//!   leading `0` (octal), which redset never writes;
//! * an empty file is an error here; `kvtree_read_file` returns an empty tree for it;
//! * a multi-valued key (`RANK` after a redset 0.4 PARTNER rebuild holds the old and the new
//!   rank) has no [`KvTree::get_val`] here, like `kvtree_get_val`; redset's own
//!   `kvtree_util_get_int` would take the first value.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Magic number at the start of a persisted kvtree.
pub const MAGIC: u32 = 0x951f_c3f5;
/// File type of a hash.
pub const FILE_TYPE_HASH: u16 = 1;
/// Version of the hash file format.
pub const FILE_VERSION_HASH_1: u16 = 1;
/// Size of the fixed header before the packed tree.
pub const HEADER_SIZE: usize = 20;
/// Flag bit: a CRC32 of the preceding bytes ends the file.
pub const FLAG_CRC32: u32 = 0x1;
/// Deepest nesting the parser accepts (real headers are about 6 levels deep).
pub const MAX_DEPTH: usize = 64;

/// A node of a kvtree: an ordered map from keys to child nodes.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KvTree {
    map: BTreeMap<String, KvTree>,
}

impl std::fmt::Debug for KvTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl KvTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when the node has no children.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Children in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &KvTree)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The child under `key`.
    pub fn get(&self, key: &str) -> Option<&KvTree> {
        self.map.get(key)
    }

    /// Follows a path of keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&KvTree> {
        let mut t = self;
        for k in path {
            t = t.map.get(*k)?;
        }
        Some(t)
    }

    /// The child under `key`, created empty if absent.
    pub fn entry(&mut self, key: impl Into<String>) -> &mut KvTree {
        self.map.entry(key.into()).or_default()
    }

    /// Sets (replaces) the child under `key`.
    pub fn set(&mut self, key: impl Into<String>, child: KvTree) -> &mut KvTree {
        let key = key.into();
        self.map.insert(key.clone(), child);
        self.map.get_mut(&key).expect("just inserted")
    }

    /// Removes and returns the child under `key`.
    pub fn unset(&mut self, key: &str) -> Option<KvTree> {
        self.map.remove(key)
    }

    /// Sets `key = value`, i.e. `key -> {value -> {}}`, replacing what `key` held.
    pub fn set_kv(&mut self, key: impl Into<String>, value: impl std::fmt::Display) {
        let mut child = KvTree::new();
        child.map.insert(value.to_string(), KvTree::new());
        self.map.insert(key.into(), child);
    }

    /// The value of `key` when it holds exactly one key (as `kvtree_get_val`).
    pub fn get_val(&self, key: &str) -> Option<&str> {
        let child = self.map.get(key)?;
        if child.map.len() == 1 {
            child.map.keys().next().map(String::as_str)
        } else {
            None
        }
    }

    /// The value of `key` parsed as an unsigned integer.
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get_val(key)?.trim().parse().ok()
    }

    /// The value of `key` parsed as a signed integer.
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        self.get_val(key)?.trim().parse().ok()
    }

    /// Like [`KvTree::get_u64`] but an error naming the field when absent or malformed.
    pub fn require_u64(&self, key: &str, ctx: &str) -> Result<u64> {
        self.get_u64(key).ok_or_else(|| {
            Error::header(format!("{ctx}{key}"), "missing or not an unsigned integer")
        })
    }

    /// Like [`KvTree::get_i64`] but an error naming the field when absent or malformed.
    pub fn require_i64(&self, key: &str, ctx: &str) -> Result<i64> {
        self.get_i64(key)
            .ok_or_else(|| Error::header(format!("{ctx}{key}"), "missing or not an integer"))
    }

    /// Copies every element of `other` into `self`, merging children with equal keys
    /// (`kvtree_merge`).
    pub fn merge(&mut self, other: &KvTree) {
        for (k, v) in &other.map {
            self.entry(k.clone()).merge(v);
        }
    }

    fn merge_owned(&mut self, other: KvTree) {
        for (k, v) in other.map {
            match self.map.get_mut(&k) {
                Some(mine) => mine.merge_owned(v),
                None => {
                    self.map.insert(k, v);
                }
            }
        }
    }

    /// Number of bytes [`KvTree::pack`] appends.
    pub fn pack_size(&self) -> usize {
        4 + self
            .map
            .iter()
            .map(|(k, v)| k.len() + 1 + v.pack_size())
            .sum::<usize>()
    }

    /// Appends the packed form (count, then key + NUL + child per element) to `out`.
    pub fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.map.len() as u32).to_be_bytes());
        for (k, v) in &self.map {
            out.extend_from_slice(k.as_bytes());
            out.push(0);
            v.pack(out);
        }
    }

    /// Parses a packed tree from the start of `buf`; returns it and the bytes consumed.
    pub fn unpack(buf: &[u8]) -> Result<(KvTree, usize)> {
        let mut pos = 0;
        let t = Self::unpack_at(buf, &mut pos, 0)?;
        Ok((t, pos))
    }

    fn unpack_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<KvTree> {
        if depth > MAX_DEPTH {
            return Err(kv_err(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let count = read_u32(buf, pos)? as usize;
        // every element takes at least a NUL and a 4-byte count
        if count > buf.len().saturating_sub(*pos) / 5 {
            return Err(kv_err(format!(
                "element count {count} at offset {} exceeds the {} bytes left",
                *pos - 4,
                buf.len() - *pos
            )));
        }
        let mut t = KvTree::new();
        for _ in 0..count {
            let rest = &buf[*pos..];
            let nul = rest
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| kv_err(format!("unterminated key at offset {}", *pos)))?;
            let key = std::str::from_utf8(&rest[..nul])
                .map_err(|_| kv_err(format!("key at offset {} is not UTF-8", *pos)))?
                .to_owned();
            *pos += nul + 1;
            let child = Self::unpack_at(buf, pos, depth + 1)?;
            match t.map.get_mut(&key) {
                Some(mine) => mine.merge_owned(child),
                None => {
                    t.map.insert(key, child);
                }
            }
        }
        Ok(t)
    }

    /// The persisted file form: header, packed tree and CRC32 (`kvtree_write_persist`).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let total = HEADER_SIZE + self.pack_size() + 4;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&MAGIC.to_be_bytes());
        out.extend_from_slice(&FILE_TYPE_HASH.to_be_bytes());
        out.extend_from_slice(&FILE_VERSION_HASH_1.to_be_bytes());
        out.extend_from_slice(&(total as u64).to_be_bytes());
        out.extend_from_slice(&FLAG_CRC32.to_be_bytes());
        self.pack(&mut out);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        debug_assert_eq!(out.len(), total);
        out
    }

    /// Size of [`KvTree::to_file_bytes`] without building it.
    pub fn file_size(&self) -> usize {
        HEADER_SIZE + self.pack_size() + 4
    }

    /// Parses a persisted kvtree at the start of `buf` (which may hold more after it, as a
    /// redundancy file does); returns the tree and the persisted length.
    pub fn from_file_bytes(buf: &[u8]) -> Result<(KvTree, usize)> {
        if buf.len() < HEADER_SIZE {
            return Err(kv_err(format!(
                "{} bytes, shorter than the 20-byte header",
                buf.len()
            )));
        }
        let filesize = parse_fixed_header(&buf[..HEADER_SIZE])?;
        if filesize > buf.len() as u64 {
            return Err(kv_err(format!(
                "truncated: header says {filesize} bytes, have {}",
                buf.len()
            )));
        }
        let filesize = filesize as usize;
        let t = parse_body(&buf[..filesize])?;
        Ok((t, filesize))
    }

    /// Reads a persisted kvtree from the current position of `r`; returns it and its length.
    /// Reads exactly the kvtree's bytes, so `r` is left at the payload that follows.
    pub fn read_from<R: Read>(r: &mut R) -> Result<(KvTree, usize)> {
        let mut head = [0u8; HEADER_SIZE];
        read_full(r, &mut head)?;
        let filesize = parse_fixed_header(&head)?;
        let rest = filesize - HEADER_SIZE as u64;
        let mut buf = Vec::with_capacity(filesize.min(1 << 20) as usize);
        buf.extend_from_slice(&head);
        let got = r
            .take(rest)
            .read_to_end(&mut buf)
            .map_err(|e| kv_err(format!("read failed: {e}")))?;
        if (got as u64) < rest {
            return Err(kv_err(format!(
                "truncated: header says {filesize} bytes, file has {}",
                buf.len()
            )));
        }
        let t = parse_body(&buf)?;
        Ok((t, buf.len()))
    }

    /// Writes the tree to `path` (created or truncated), as `kvtree_write_file`.
    pub fn write_file(&self, path: &Path, fsync: bool) -> Result<()> {
        let bytes = self.to_file_bytes();
        crate::util::write_file_atomic(path, &bytes, fsync)
    }

    /// Reads a tree written by [`KvTree::write_file`] or by `kvtree_write_file`.
    pub fn read_file(path: &Path) -> Result<KvTree> {
        let f = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
        let mut r = std::io::BufReader::new(f);
        KvTree::read_from(&mut r)
            .map(|(t, _)| t)
            .map_err(|e| with_path(e, path))
    }

    /// Text form in the style of `kvtree_print_mode(.., KVTREE_PRINT_KEYVAL)` as the redset
    /// docs show it: two spaces per level, `KEY = value` for single-valued leaves.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.print_into(&mut s, 0);
        s
    }

    fn print_into(&self, s: &mut String, indent: usize) {
        for (k, v) in &self.map {
            if v.map.len() == 1 {
                let (k2, v2) = v.map.iter().next().expect("len 1");
                if v2.map.is_empty() {
                    let _ = writeln!(s, "{:indent$}{k} = {k2}", "");
                    continue;
                }
            }
            let _ = writeln!(s, "{:indent$}{k}", "");
            v.print_into(s, indent + 2);
        }
    }
}

fn kv_err(reason: String) -> Error {
    Error::KvTree { path: None, reason }
}

/// Attaches a path to a kvtree error that lacks one.
pub(crate) fn with_path(e: Error, path: &Path) -> Error {
    match e {
        Error::KvTree { path: None, reason } => Error::KvTree {
            path: Some(path.to_owned()),
            reason,
        },
        other => other,
    }
}

fn read_u32(buf: &[u8], pos: &mut usize) -> Result<u32> {
    let b = buf
        .get(*pos..*pos + 4)
        .ok_or_else(|| kv_err(format!("truncated count at offset {}", *pos)))?;
    *pos += 4;
    Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")))
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<()> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => {
                return Err(kv_err(format!(
                    "truncated: {n} bytes, shorter than the 20-byte header"
                )))
            }
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(kv_err(format!("read failed: {e}"))),
        }
    }
    Ok(())
}

/// Checks magic, type and version; returns the file size field.
fn parse_fixed_header(h: &[u8]) -> Result<u64> {
    let magic = u32::from_be_bytes(h[0..4].try_into().expect("4"));
    let ftype = u16::from_be_bytes(h[4..6].try_into().expect("2"));
    let version = u16::from_be_bytes(h[6..8].try_into().expect("2"));
    let filesize = u64::from_be_bytes(h[8..16].try_into().expect("8"));
    let flags = u32::from_be_bytes(h[16..20].try_into().expect("4"));
    if magic != MAGIC {
        return Err(kv_err(format!(
            "bad magic {magic:#010x}, expected {MAGIC:#010x}"
        )));
    }
    if ftype != FILE_TYPE_HASH || version != FILE_VERSION_HASH_1 {
        return Err(kv_err(format!(
            "unsupported file type {ftype} version {version}"
        )));
    }
    let min = HEADER_SIZE as u64 + 4 + if flags & FLAG_CRC32 != 0 { 4 } else { 0 };
    if filesize < min {
        return Err(kv_err(format!(
            "file size field {filesize} is smaller than {min}"
        )));
    }
    Ok(filesize)
}

/// Checks the CRC of a complete persisted kvtree and unpacks its tree.
fn parse_body(buf: &[u8]) -> Result<KvTree> {
    let flags = u32::from_be_bytes(buf[16..20].try_into().expect("4"));
    let end = if flags & FLAG_CRC32 != 0 {
        let n = buf.len() - 4;
        let stored = u32::from_be_bytes(buf[n..].try_into().expect("4"));
        let crc = crc32fast::hash(&buf[..n]);
        if crc != stored {
            return Err(kv_err(format!(
                "CRC32 mismatch: stored {stored:#010x}, computed {crc:#010x}"
            )));
        }
        n
    } else {
        buf.len()
    };
    let body = &buf[HEADER_SIZE..end];
    let (t, used) = KvTree::unpack(body)?;
    if used != body.len() {
        return Err(kv_err(format!(
            "{} trailing bytes after the tree",
            body.len() - used
        )));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KvTree {
        let mut t = KvTree::new();
        t.set_kv("RANK", 0);
        t.entry("GROUP").set_kv("RANKS", 2);
        t
    }

    #[test]
    fn roundtrip_and_text() {
        let t = sample();
        let bytes = t.to_file_bytes();
        let (u, n) = KvTree::from_file_bytes(&bytes).unwrap();
        assert_eq!(n, bytes.len());
        assert_eq!(t, u);
        assert_eq!(t.to_text(), "GROUP\n  RANKS = 2\nRANK = 0\n");
    }

    #[test]
    fn reference_bytes() {
        // {"A": {"1": {}}} persisted by kvtree_write_persist
        let mut t = KvTree::new();
        t.set_kv("A", 1);
        let b = t.to_file_bytes();
        let expect_prefix: &[u8] = &[
            0x95, 0x1f, 0xc3, 0xf5, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, 1, // header
            0, 0, 0, 1, b'A', 0, 0, 0, 0, 1, b'1', 0, 0, 0, 0, 0, // tree
        ];
        assert_eq!(&b[..36], expect_prefix);
        assert_eq!(b.len(), 40);
        // zlib crc32 of the first 36 bytes, computed independently with Python's zlib.crc32
        assert_eq!(&b[36..], &0x783b_7b9cu32.to_be_bytes());
    }

    #[test]
    fn corrupt_inputs_are_errors() {
        let bytes = sample().to_file_bytes();
        for cut in 0..bytes.len() {
            assert!(KvTree::from_file_bytes(&bytes[..cut]).is_err(), "cut {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(KvTree::from_file_bytes(&b).is_err(), "flip {i}");
        }
    }
}
