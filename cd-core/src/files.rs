//! Monitored files: `add_file_to_cd` and `delete_file_from_cd`. The `lseek` that reads a
//! descriptor's offset is `node::file_offset`, below both this module and `advance`.

use crate::active;
use crate::advance::settle;
use crate::callback;
use crate::error::{CdError, Result};
use crate::ids::CdRef;
use crate::node::file_offset;
use tracing::debug_span;

/// Records the current position of an open file (`add_file_to_cd`); a restore seeks back to
/// it. The file's data is not saved. A descriptor already in the CD keeps its older position.
pub fn add_file_to_cd(cd: impl Into<CdRef>, fd: i32) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("add_file_to_cd", ?cd, fd).entered();
    callback::check()?;
    let offset = file_offset(fd)?;
    let node = active::resolve(cd)?;
    settle(&node, true)?;
    node.lock_live()?.files.entry(fd).or_insert(offset);
    Ok(())
}

/// Stops monitoring a file (`delete_file_from_cd`).
pub fn delete_file_from_cd(cd: impl Into<CdRef>, fd: i32) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("delete_file_from_cd", ?cd, fd).entered();
    callback::check()?;
    let node = active::resolve(cd)?;
    settle(&node, true)?;
    let mut state = node.lock_live()?;
    state
        .files
        .remove(&fd)
        .map(drop)
        .ok_or(CdError::FileNotFound(fd))
}
