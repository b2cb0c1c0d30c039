//! `storage_info`: the attributes of a CD's store, as `key=value` pairs separated by `;`.
//!
//! A root CD given no `storage_info` takes the `CD_STORAGE_INFO` environment variable, if set;
//! a child given none takes its parent's. Unknown keys are refused with a message naming them,
//! so that a typo never silently drops a setting, and so are bad values, with a message naming
//! the key.
//!
//! # Persistence keys
//!
//! A root CD whose `storage_info` sets `dir` is *persistent*: at every advance its store is
//! written to node-local storage and protected across ranks by a redundancy scheme, so that a
//! restarted job finds it again after a node loss (the MPI layer does this, see
//! `cd-persist`; cd-core only parses the keys and calls the layer's [`crate::PersistHooks`]).
//!
//! The keys, their values and defaults are described once, for every language, in the
//! README's "`storage_info` keys" section; [`KNOWN_KEYS`] names each with a line for error
//! messages.
//!
//! The persistence keys other than `dir` are refused without `dir`, and they are refused in a
//! child CD's `storage_info` (only root CDs persist); `flush_every` and `flush` are refused
//! without `global_dir`.

use crate::error::{CdError, Result};

/// The environment variable that gives root CDs their default `storage_info`.
pub const STORAGE_INFO_ENV: &str = "CD_STORAGE_INFO";

/// The keys understood today, with what each means (see the module docs for defaults).
pub const KNOWN_KEYS: &[(&str, &str)] = &[
    (
        "dir",
        "node-local cache directory of a persistent root CD ({rank}, {rank/N} expanded)",
    ),
    (
        "scheme",
        "redundancy scheme across ranks: single, partner, xor or rs",
    ),
    ("replicas", "PARTNER: number of copies (>= 1)"),
    ("checksums", "RS: number of checksum blocks (>= 1)"),
    (
        "set_size",
        "minimum number of ranks per redundancy set (>= 2)",
    ),
    (
        "failure_group",
        "this rank's failure group ({rank}, {rank/N} expanded)",
    ),
    ("keep", "number of complete persisted versions kept (>= 1)"),
    (
        "global_dir",
        "global directory that committed versions are flushed to (must exist)",
    ),
    ("flush_every", "flush every N-th version (>= 1)"),
    ("flush", "blocking or background flush"),
];

/// The redundancy scheme of a persistent CD (`scheme=`, with `replicas=` or `checksums=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersistScheme {
    /// No redundancy data: a lost rank's files cannot be rebuilt.
    Single,
    /// Full copies on `replicas` ranks of other failure groups.
    Partner {
        /// Number of copies.
        replicas: u32,
    },
    /// One XOR parity block per set: survives one lost rank per set.
    Xor,
    /// Reed-Solomon with `checksums` blocks: survives that many lost ranks per set.
    Rs {
        /// Number of checksum blocks.
        checksums: u32,
    },
}

/// The persistence settings of a root CD, validated (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistSettings {
    /// The cache directory, before `{rank}` expansion.
    pub dir: String,
    /// The redundancy scheme.
    pub scheme: PersistScheme,
    /// Minimum number of ranks per redundancy set.
    pub set_size: usize,
    /// The failure-group template, if given.
    pub failure_group: Option<String>,
    /// How many complete versions to keep (locally, and flushed ones in the global directory).
    pub keep: usize,
    /// Flushing to a global directory, if `global_dir` is set.
    pub flush: Option<FlushSettings>,
}

/// Where and when a persistent CD's versions are flushed (`global_dir`, `flush_every`, `flush`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushSettings {
    /// The global directory (no `{rank}` expansion: every rank reaches the same one).
    pub dir: String,
    /// Versions whose number this divides are flushed.
    pub every: u64,
    /// Whether a thread of the runtime copies while the application goes on.
    pub background: bool,
}

/// Keys that only make sense with `dir`.
const PERSIST_KEYS: &[&str] = &[
    "scheme",
    "replicas",
    "checksums",
    "set_size",
    "failure_group",
    "keep",
    "global_dir",
    "flush_every",
    "flush",
];

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
                let names: Vec<&str> = KNOWN_KEYS.iter().map(|(k, _)| *k).collect();
                let known = format!("known keys: {}", names.join(", "));
                return Err(CdError::StorageInfo(format!(
                    "unknown key {key:?} ({known})"
                )));
            }
            if pairs.iter().any(|(k, _)| k == key) {
                return Err(CdError::StorageInfo(format!("key {key:?} is given twice")));
            }
            pairs.push((key.to_owned(), value.to_owned()));
        }
        let info = StorageInfo { pairs };
        info.persist()?;
        Ok(info)
    }

    /// An integer value of `key` of at least `min`, or `default` when not set.
    fn number(&self, key: &str, min: u64, default: u64) -> Result<u64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n >= min && n <= u64::from(u32::MAX) => Ok(n),
                _ => Err(CdError::StorageInfo(format!(
                    "key {key:?}: {v:?} is not an integer in [{min}, {}]",
                    u32::MAX
                ))),
            },
        }
    }

    /// The persistence settings: `None` when `dir` is not set (the CD is not persistent).
    /// Errors name the key: a bad value, or a key that needs another one (`replicas` needs
    /// `scheme=partner`, `flush` needs `global_dir`).
    pub fn persist(&self) -> Result<Option<PersistSettings>> {
        let Some(dir) = self.get("dir") else {
            return match PERSIST_KEYS.iter().find(|k| self.get(k).is_some()) {
                Some(k) => Err(CdError::StorageInfo(format!(
                    "key {k:?} needs key \"dir\" (the cache directory of a persistent CD)"
                ))),
                None => Ok(None),
            };
        };
        if dir.is_empty() {
            return Err(CdError::StorageInfo(
                "key \"dir\": the cache directory is empty".to_owned(),
            ));
        }
        let flush = match self.get("global_dir") {
            None => {
                if let Some(k) = ["flush_every", "flush"]
                    .into_iter()
                    .find(|k| self.get(k).is_some())
                {
                    return Err(CdError::StorageInfo(format!(
                        "key {k:?} needs key \"global_dir\" (the directory versions are flushed to)"
                    )));
                }
                None
            }
            Some("") => {
                return Err(CdError::StorageInfo(
                    "key \"global_dir\": the global directory is empty".to_owned(),
                ))
            }
            Some(dir) => Some(FlushSettings {
                dir: dir.to_owned(),
                every: self.number("flush_every", 1, 1)?,
                background: match self.get("flush").unwrap_or("blocking") {
                    "blocking" => false,
                    "background" => true,
                    other => {
                        return Err(CdError::StorageInfo(format!(
                            "key \"flush\": {other:?} is not one of blocking, background"
                        )))
                    }
                },
            }),
        };
        let name = self.get("scheme").unwrap_or("xor");
        let replicas = self.number("replicas", 1, 1)? as u32;
        let checksums = self.number("checksums", 1, 2)? as u32;
        let scheme = match name {
            "single" => PersistScheme::Single,
            "partner" => PersistScheme::Partner { replicas },
            "xor" => PersistScheme::Xor,
            "rs" => PersistScheme::Rs { checksums },
            other => {
                return Err(CdError::StorageInfo(format!(
                    "key \"scheme\": {other:?} is not one of single, partner, xor, rs"
                )))
            }
        };
        if self.get("replicas").is_some() && name != "partner" {
            return Err(CdError::StorageInfo(format!(
                "key \"replicas\" is for scheme=partner, the scheme is {name}"
            )));
        }
        if self.get("checksums").is_some() && name != "rs" {
            return Err(CdError::StorageInfo(format!(
                "key \"checksums\" is for scheme=rs, the scheme is {name}"
            )));
        }
        let failure_group = match self.get("failure_group") {
            Some("") => {
                return Err(CdError::StorageInfo(
                    "key \"failure_group\": the value is empty".to_owned(),
                ))
            }
            other => other.map(str::to_owned),
        };
        Ok(Some(PersistSettings {
            dir: dir.to_owned(),
            scheme,
            set_size: self.number("set_size", 2, 8)? as usize,
            failure_group,
            keep: self.number("keep", 1, 2)? as usize,
            flush,
        }))
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
    fn persistence_keys() {
        let info = StorageInfo::parse("dir=/dev/shm/cd;scheme=rs;checksums=3;set_size=4").unwrap();
        let p = info.persist().unwrap().unwrap();
        assert_eq!(p.dir, "/dev/shm/cd");
        assert_eq!(p.scheme, PersistScheme::Rs { checksums: 3 });
        assert_eq!((p.set_size, p.keep, p.failure_group), (4, 2, None));
        let p = StorageInfo::parse("dir=d")
            .unwrap()
            .persist()
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.scheme, p.set_size, p.flush),
            (PersistScheme::Xor, 8, None)
        );
        let p = StorageInfo::parse("dir=d;global_dir=/g;flush_every=3;flush=background")
            .unwrap()
            .persist()
            .unwrap()
            .unwrap();
        assert_eq!(
            p.flush,
            Some(FlushSettings {
                dir: "/g".into(),
                every: 3,
                background: true
            })
        );
        let p = StorageInfo::parse("dir=d;global_dir=/g")
            .unwrap()
            .persist()
            .unwrap()
            .unwrap();
        assert_eq!(p.flush.map(|f| (f.every, f.background)), Some((1, false)));
        assert_eq!(StorageInfo::parse("").unwrap().persist().unwrap(), None);
    }

    #[test]
    fn bad_persistence_values_name_the_key() {
        for (text, key) in [
            ("dir=d;scheme=raid6", "\"scheme\""),
            ("dir=d;set_size=1", "\"set_size\""),
            ("dir=d;set_size=many", "\"set_size\""),
            ("dir=d;keep=0", "\"keep\""),
            ("dir=d;scheme=xor;replicas=2", "\"replicas\""),
            ("dir=d;scheme=partner;checksums=2", "\"checksums\""),
            ("dir=", "\"dir\""),
            ("scheme=xor", "\"scheme\""),
            ("dir=d;global_dir=", "\"global_dir\""),
            ("dir=d;flush_every=2", "\"flush_every\""),
            ("dir=d;flush=background", "\"flush\""),
            ("dir=d;global_dir=/g;flush=later", "\"flush\""),
            ("dir=d;global_dir=/g;flush_every=0", "\"flush_every\""),
            ("global_dir=/g", "\"global_dir\""),
            ("dir=d;failure_group=", "\"failure_group\""),
        ] {
            let err = StorageInfo::parse(text).unwrap_err();
            assert!(err.to_string().contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = StorageInfo::parse("dir=/dev/shm/cd;sceme=xor").unwrap_err();
        assert!(err.to_string().contains("\"sceme\""), "{err}");
        let err = StorageInfo::parse("caching").unwrap_err();
        assert!(err.to_string().contains("key=value"), "{err}");
        let err = StorageInfo::parse("=3").unwrap_err();
        assert!(err.to_string().contains("empty key"), "{err}");
    }
}
