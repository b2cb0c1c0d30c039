//! File metadata as redset records it (`redset_meta_encode` / `redset_meta_apply`).
//!
//! Every protected file is described by the fields of a `stat` call, stored as decimal strings
//! under its name in the header: `SIZE`, `MODE`, `UID`, `GID` and the three time stamps in
//! seconds and nanoseconds. A rebuilt file gets its mode, owner and access/modification times
//! back (the change time cannot be set by a program) and its size is checked.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::kvtree::KvTree;

/// The `stat` fields redset keeps for a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileMeta {
    /// Size in bytes.
    pub size: u64,
    /// `st_mode` (type and permission bits).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Access time, seconds.
    pub atime_secs: i64,
    /// Access time, nanoseconds.
    pub atime_nsecs: i64,
    /// Modification time, seconds.
    pub mtime_secs: i64,
    /// Modification time, nanoseconds.
    pub mtime_nsecs: i64,
    /// Status change time, seconds.
    pub ctime_secs: i64,
    /// Status change time, nanoseconds.
    pub ctime_nsecs: i64,
}

impl FileMeta {
    /// Stats `path`.
    pub fn stat(path: &Path) -> Result<FileMeta> {
        let m = std::fs::metadata(path).map_err(|e| Error::io("stat", path, e))?;
        Ok(FileMeta {
            size: m.size(),
            mode: m.mode(),
            uid: m.uid(),
            gid: m.gid(),
            atime_secs: m.atime(),
            atime_nsecs: m.atime_nsec(),
            mtime_secs: m.mtime(),
            mtime_nsecs: m.mtime_nsec(),
            ctime_secs: m.ctime(),
            ctime_nsecs: m.ctime_nsec(),
        })
    }

    /// Writes the fields into `t` as redset does.
    pub fn encode(&self, t: &mut KvTree) {
        t.set_kv("MODE", self.mode);
        t.set_kv("UID", self.uid);
        t.set_kv("GID", self.gid);
        t.set_kv("SIZE", self.size);
        t.set_kv("ATIME_SECS", self.atime_secs);
        t.set_kv("ATIME_NSECS", self.atime_nsecs);
        t.set_kv("CTIME_SECS", self.ctime_secs);
        t.set_kv("CTIME_NSECS", self.ctime_nsecs);
        t.set_kv("MTIME_SECS", self.mtime_secs);
        t.set_kv("MTIME_NSECS", self.mtime_nsecs);
    }

    /// Reads the fields from `t`; `SIZE` is required, the others default to 0 as in redset.
    pub fn decode(t: &KvTree, ctx: &str) -> Result<FileMeta> {
        let g = |k: &str| t.get_i64(k).unwrap_or(0);
        Ok(FileMeta {
            size: t.require_u64("SIZE", ctx)?,
            mode: t.get_u64("MODE").unwrap_or(0o100600) as u32,
            uid: t.get_u64("UID").map(|v| v as u32).unwrap_or(u32::MAX),
            gid: t.get_u64("GID").map(|v| v as u32).unwrap_or(u32::MAX),
            atime_secs: g("ATIME_SECS"),
            atime_nsecs: g("ATIME_NSECS"),
            mtime_secs: g("MTIME_SECS"),
            mtime_nsecs: g("MTIME_NSECS"),
            ctime_secs: g("CTIME_SECS"),
            ctime_nsecs: g("CTIME_NSECS"),
        })
    }

    /// Gives a rebuilt file its recorded mode, owner and times back, and checks its size.
    pub fn apply(&self, path: &Path) -> Result<()> {
        let cpath = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
            Error::InvalidArgument(format!("file name with NUL: {}", path.display()))
        })?;
        let cur = FileMeta::stat(path)?;
        if cur.size != self.size {
            return Err(Error::Corrupt {
                path: path.to_owned(),
                reason: format!("size is {} after rebuild, expected {}", cur.size, self.size),
            });
        }
        if (self.uid != u32::MAX && cur.uid != self.uid)
            || (self.gid != u32::MAX && cur.gid != self.gid)
        {
            // SAFETY: `cpath` is a valid NUL-terminated string that outlives the call.
            let rc = unsafe { libc::chown(cpath.as_ptr(), self.uid, self.gid) };
            if rc != 0 {
                return Err(Error::io("chown", path, std::io::Error::last_os_error()));
            }
        }
        // SAFETY: as above; chmod takes the permission bits of the recorded mode.
        let rc = unsafe { libc::chmod(cpath.as_ptr(), (self.mode & 0o7777) as libc::mode_t) };
        if rc != 0 {
            return Err(Error::io("chmod", path, std::io::Error::last_os_error()));
        }
        let times = [
            libc::timespec {
                tv_sec: self.atime_secs as libc::time_t,
                tv_nsec: self.atime_nsecs as _,
            },
            libc::timespec {
                tv_sec: self.mtime_secs as libc::time_t,
                tv_nsec: self.mtime_nsecs as _,
            },
        ];
        // SAFETY: `cpath` is valid and NUL-terminated, `times` points to two initialised
        // timespec values as utimensat requires.
        let rc = unsafe {
            libc::utimensat(
                libc::AT_FDCWD,
                cpath.as_ptr(),
                times.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            return Err(Error::io(
                "utimensat",
                path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(())
    }
}
