//! `storage_info`: the attributes of a CD's store, as `key=value` pairs separated by `;`.
//!
//! A root CD given no `storage_info` takes the `CD_STORAGE_INFO` environment variable, if set;
//! a child given none takes its parent's. Unknown keys are refused with a message naming them,
//! so that a typo never silently drops a setting: each capability that defines keys (the
//! persistence work adds `dir`, `scheme`, ...) adds them to [`KNOWN_KEYS`].

use crate::error::{CdError, Result};

/// The environment variable that gives root CDs their default `storage_info`.
pub const STORAGE_INFO_ENV: &str = "CD_STORAGE_INFO";

/// The keys understood today, with what each means. The in-memory store takes no settings, so
/// none is defined yet.
pub const KNOWN_KEYS: &[(&str, &str)] = &[];

/// Parsed `storage_info`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageInfo {
    pairs: Vec<(String, String)>,
}

impl StorageInfo {
    /// Parses `key=value;key=value`; blanks around keys and values and empty items are ignored.
    pub fn parse(text: &str) -> Result<StorageInfo> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                CdError::StorageInfo(format!("{item:?} is not of the form key=value"))
            })?;
            let (key, value) = (key.trim(), value.trim());
            if key.is_empty() {
                return Err(CdError::StorageInfo(format!("{item:?} has an empty key")));
            }
            if !KNOWN_KEYS.iter().any(|(k, _)| *k == key) {
                let known = if KNOWN_KEYS.is_empty() {
                    "no key is defined yet".to_owned()
                } else {
                    let names: Vec<&str> = KNOWN_KEYS.iter().map(|(k, _)| *k).collect();
                    format!("known keys: {}", names.join(", "))
                };
                return Err(CdError::StorageInfo(format!(
                    "unknown key {key:?} ({known})"
                )));
            }
            if pairs.iter().any(|(k, _)| k == key) {
                return Err(CdError::StorageInfo(format!("key {key:?} is given twice")));
            }
            pairs.push((key.to_owned(), value.to_owned()));
        }
        Ok(StorageInfo { pairs })
    }

    /// The settings of a new root CD: `given`, else the environment default, else none.
    pub(crate) fn for_root(given: Option<&str>) -> Result<StorageInfo> {
        match given {
            Some(text) => Self::parse(text),
            None => match std::env::var(STORAGE_INFO_ENV) {
                Ok(text) => Self::parse(&text).map_err(|e| match e {
                    CdError::StorageInfo(m) => {
                        CdError::StorageInfo(format!("{m} (from ${STORAGE_INFO_ENV})"))
                    }
                    other => other,
                }),
                Err(_) => Ok(StorageInfo::default()),
            },
        }
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether no setting is given.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl std::fmt::Display for StorageInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (k, v)) in self.pairs.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_blank_are_default() {
        assert!(StorageInfo::parse("").unwrap().is_empty());
        assert!(StorageInfo::parse(" ; ;").unwrap().is_empty());
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = StorageInfo::parse("dir=/dev/shm/cd;scheme=xor").unwrap_err();
        assert!(err.to_string().contains("\"dir\""), "{err}");
        let err = StorageInfo::parse("caching").unwrap_err();
        assert!(err.to_string().contains("key=value"), "{err}");
        let err = StorageInfo::parse("=3").unwrap_err();
        assert!(err.to_string().contains("empty key"), "{err}");
    }
}
