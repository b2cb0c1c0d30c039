//! `create_cd`: a root (name, logging mode, persistence) or a child (its sibling index, the
//! logging mode and `storage_info` it inherits, where a replay feeding it stands).
//!
//! Creating a root CD of a persistent tree runs the persistence layer's `created` hook; if the
//! hook fails, the fresh root is discarded again (through `commit`), so the call changes
//! nothing.

use crate::active;
use crate::advance::settle;
use crate::callback;
use crate::commit::commit_cd;
use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::merge;
use crate::node::{feed_mark, Node};
use crate::registry;
use crate::stats::Stats;
use crate::storage_info::StorageInfo;
use crate::types::LoggingMode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tracing::debug_span;

/// Creates a CD and makes it the calling thread's active CD.
///
/// `parent` is `None` for a root CD. A root must choose a logging mode (not `Inherit`) and
/// may have a `name`, unique among the live roots of the process; a child takes no name, and
/// its logging mode must match its parent's (`Inherit` always does). A child given no
/// `storage_info` takes its parent's; a root takes `$CD_STORAGE_INFO` if set.
pub fn create_cd(
    parent: Option<CdRef>,
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    let _span = debug_span!("create_cd", ?parent, ?logging, name).entered();
    callback::check()?;
    let handle = match parent {
        None => create_root(storage_info, logging, name)?,
        Some(parent) => {
            let parent = active::resolve(parent)?;
            settle(&parent, true)?;
            create_child(parent, storage_info, logging, name)?
        }
    };
    active::push_active(handle);
    Stats {
        creates: 1,
        ..Stats::default()
    }
    .publish();
    Ok(handle)
}

fn create_root(
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    let logging = match logging {
        LoggingMode::Enabled => true,
        LoggingMode::Disabled => false,
        LoggingMode::Inherit => return Err(CdError::RootInheritsLogging),
    };
    let storage = StorageInfo::for_root(storage_info)?;
    let name: Option<Arc<str>> = match name {
        Some(n) if n.is_empty() || n.contains('\0') => return Err(CdError::BadName(n.to_owned())),
        Some(n) => Some(n.into()),
        None => None,
    };
    let hooks = match storage.persist()? {
        Some(_) => Some(crate::persist::hooks().ok_or_else(|| {
            CdError::Persist(
                "storage_info sets \"dir\" (a persistent CD) but no persistence layer is \
                 loaded: persistent CDs need MPI, initialized through libcd's MPI_Init"
                    .to_owned(),
            )
        })?),
        None => None,
    };
    if let Some(name) = &name {
        registry::claim_root_name(name)?;
    }
    let handle = registry::register(|handle| {
        Arc::new(Node::new(handle, None, name, 0, 0, logging, storage, false))
    });
    if let Some(hooks) = hooks {
        match (hooks.created)(handle) {
            Ok(recovered) => {
                registry::lookup(handle)?.lock().recovered = recovered;
            }
            Err(e) => {
                // discarding a fresh root cannot fail; the error to report is the hook's
                let _ = commit_cd(handle);
                return Err(e);
            }
        }
    }
    Ok(handle)
}

fn create_child(
    parent: Arc<Node>,
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    if name.is_some() {
        return Err(CdError::ChildNamed);
    }
    let storage = match storage_info {
        Some(text) => StorageInfo::parse(text)?,
        None => parent.storage.clone(),
    };
    if storage_info.is_some() && storage.persist()?.is_some() {
        return Err(CdError::StorageInfo(
            "key \"dir\": only root CDs persist; a child's storage_info cannot set it".to_owned(),
        ));
    }
    let logging = match logging {
        LoggingMode::Inherit => parent.logging,
        mode => {
            let wanted = mode == LoggingMode::Enabled;
            if wanted != parent.logging {
                return Err(CdError::LoggingMismatch {
                    parent: LoggingMode::describe(parent.logging),
                    child: LoggingMode::describe(wanted),
                });
            }
            wanted
        }
    };
    // Taken before the parent's lock: the feeding CD may be above it.
    let mark = feed_mark(&parent);
    let mut state = parent.lock_live()?;
    let sibling_index = (0..)
        .find(|i| !state.children.iter().any(|c| c.sibling_index == *i))
        .expect("a free index below 2^32");
    let had_siblings = !state.children.is_empty();
    for sibling in &state.children {
        sibling.had_siblings.store(true, Ordering::Relaxed);
    }
    let handle = registry::register(|handle| {
        Arc::new(Node::new(
            handle,
            Some(Arc::clone(&parent)),
            parent.root_name.clone(),
            parent.depth + 1,
            sibling_index,
            logging,
            storage,
            had_siblings,
        ))
    });
    let node = registry::lookup(handle).expect("just registered");
    if logging {
        let mut child = node.lock();
        if merge::log_goes_up(had_siblings) {
            state.log.hand_down(&mut child.log);
        }
        child.feed_mark = mark;
    }
    state.children.push(node);
    Ok(handle)
}
