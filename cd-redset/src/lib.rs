//! Redundancy across MPI ranks: SINGLE, PARTNER, XOR and Reed-Solomon over GF(2^8), with
//! rebuild, on-disk compatible with ECP-VeloC redset 0.4.
//!
//! A group of ranks each writes some files (a checkpoint); `cd-redset` adds redundancy data so
//! that the files of lost ranks (a failed node, a wiped node-local disk) can be rebuilt from the
//! survivors after a restart. It knows nothing of Containment Domains: it protects lists of
//! files.
//!
//! # Brief overview
//!
//! * [`Redset`] — a redundancy descriptor: the scheme and the set of ranks (drawn from
//!   different failure groups) this rank shares redundancy with. [`Redset::create`] builds it,
//!   [`Redset::apply`] writes the redundancy data of a dataset, [`Redset::recover`] re-creates
//!   the descriptor after a restart and rebuilds whatever is missing or damaged,
//!   [`Redset::unapply`] deletes the redundancy data.
//! * [`Scheme`] — SINGLE (metadata only), PARTNER (full copies on `R` partners), XOR (one parity
//!   chunk per rank) and RS (Reed-Solomon with `k` checksum chunks per rank).
//! * [`kvtree::KvTree`] — the key/value tree and binary file format of ECP-VeloC KVTree in which
//!   every header and descriptor is stored.
//! * [`logical_file::LogicalFile`] — a rank's files read and written as one zero-padded file.
//! * [`rs::RsCode`], [`gf256`], [`kernels`] — the Reed-Solomon code (redset's matrix) and the
//!   SIMD GF(2^8) kernels it runs on, re-exported from the `cd-erasure` crate.
//!
//! # Files
//!
//! For prefix `P` and parent rank `w`, `apply` writes `P<w>.redset` (the descriptor, with copies
//! of the neighbours' descriptors) and
//! `P<w>.<scheme>.grp_<g>_of_<groups>.mem_<r>_of_<ranks>.redset` (header + redundancy data), byte
//! for byte in redset 0.4's formats, plus CRC32C fields that redset ignores.
//!
//! # Design decisions
//!
//! * **Compatibility first.** File names, kvtree bytes, chunk sizes, chunk placement and the RS
//!   matrix follow redset 0.4, so SCR/VeloC tools can read and rebuild our files and we theirs.
//! * **Beyond redset: integrity.** redset only notices missing or truncated files. We store a
//!   CRC32C of every data chunk and of every redundancy block; a damaged file counts as lost and
//!   is rebuilt. Headers have fixed-size CRC fields, so a file's header is written last, after
//!   its payload, and the file is renamed into place only when complete.
//! * **Errors, never aborts.** Every collective step ends with an agreement, so a failure on one
//!   rank is an error on all ranks rather than a hang or an `MPI_Abort`. A failed `apply`, and a
//!   recover that asks for more than the scheme can rebuild, fail on every rank and change no
//!   file: what they write goes under temporary names and is moved into place only when every
//!   rank succeeded (so a failed `apply` keeps the previous one under that prefix intact; only
//!   a failure of that last rename itself can leave a mix, and it is reported on every rank).
//!   Only regular files can be protected; a symbolic link is followed (the file it names is
//!   protected, and a rebuild writes a regular file at the link's path).
//! * **Speed.** The pipelines keep several 256 KiB pieces in flight per rank with nonblocking
//!   messages ([`Options::piece_size`]), so reading, CRC32C, the XOR / GF(2^8) SIMD kernels
//!   (chosen at run time) and writing work on bytes that are still in the core's cache while
//!   other pieces travel; each byte of data is read once and each redundancy byte written once.
//!   A rebuild checks the survivors' CRC32C on the bytes it streams anyway instead of reading
//!   everything twice. MPI waits yield the core ([`Options::yield_while_waiting`]): MPI
//!   libraries busy-poll, which with more ranks than cores starves the ranks that have work.
//!   [`PhaseTimes`] says where each rank's time went (`docs/bench-mpi.md` has measurements).
//!
//! # Example
//!
//! ```no_run
//! use cd_redset::{Options, Redset, Scheme};
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let rs = Redset::create(&world, Scheme::Rs { checksums: 2 }, 8, None, Options::default())?;
//! let files = vec![std::path::PathBuf::from("/dev/shm/ckpt/rank.dat")];
//! rs.apply(&files, "/dev/shm/ckpt/set.")?;
//! // ... after a restart, possibly with some ranks' files gone:
//! let (rs, report) = Redset::recover(&world, "/dev/shm/ckpt/set.", Options::default())?;
//! if report.rebuilt {
//!     println!("rebuilt {:?}", report.files);
//! }
//! # Ok::<(), cd_redset::Error>(())
//! ```
//!
//! The calls are collective over the communicator. `MPI` must be initialized by the caller.
//! Tracing spans (`tracing` crate, off unless a subscriber is installed) mark each public
//! operation; with `CD_REDSET_STATS=1` ([`STATS_ENV`]) every rank also prints one summary line
//! per `apply`, `recover` and `unapply` on stderr: the outcome and where its time went.

pub use cd_erasure::{gf256, kernels, rs};

pub mod comm;
pub mod dataset;
pub mod descriptor;
mod erasure;
pub mod error;
mod flight;
pub mod header;
pub mod kvtree;
pub mod logical_file;
pub mod meta;
mod parity;
pub use parity::serial_payloads;
mod partner;
mod pipeline;
pub mod prof;
mod recover;
mod single;
mod util;

use std::path::{Path, PathBuf};

use mpi::traits::*;

pub use dataset::{FileEntry, RankFiles};
pub use descriptor::{Options, Redset, Scheme, SetInfo, FAILURE_GROUP_ENV};
pub use error::{Error, Result};
pub use meta::FileMeta;
pub use prof::{PhaseTimes, STATS_ENV};

use header::RedFile;
use kvtree::KvTree;
use pipeline::Staged;

/// `ok`, or `failed: <error>`, for a [`STATS_ENV`] line.
fn outcome(res: &Result<()>) -> String {
    match res {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("failed: {e}"),
    }
}

/// What [`Redset::recover`] did on this rank.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoverReport {
    /// Whether this rank's files (data and/or redundancy) were rebuilt.
    pub rebuilt: bool,
    /// Why they had to be (missing file, size or CRC mismatch), empty otherwise.
    pub reason: String,
    /// The files written by the rebuild on this rank (data files and redundancy file).
    pub files: Vec<PathBuf>,
    /// Whether this rank's descriptor file had to be rewritten.
    pub descriptor_rebuilt: bool,
    /// Group ranks of this rank's set that were rebuilt.
    pub set_rebuilt: Vec<usize>,
    /// Where this rank's time went.
    pub times: PhaseTimes,
}

impl Redset {
    /// Writes the redundancy data protecting `files` (this rank's files, in order) under
    /// `prefix` (collective over the parent communicator).
    ///
    /// On error every rank returns an error and no file changed: the descriptor and redundancy
    /// files are written under temporary names and moved into place (replacing those of a
    /// previous `apply` with the same prefix) only once every rank wrote its own. Only a
    /// failure of that final rename on some rank can leave a mix, and is reported everywhere.
    pub fn apply<P: AsRef<Path>>(&self, files: &[P], prefix: &str) -> Result<()> {
        let span =
            tracing::info_span!("redset_apply", scheme = self.info.scheme.type_str(), prefix);
        let _g = span.enter();
        let op = prof::Op::begin(self.opts.yield_while_waiting);
        let res = self.apply_inner(files, prefix);
        let times = op.finish();
        *self
            .last_times
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = times;
        if prof::stats_wanted() {
            self.print_stats("apply", prefix, &outcome(&res), &times);
        }
        res
    }

    /// The [`STATS_ENV`] summary line of one operation on this rank.
    fn print_stats(&self, op: &str, prefix: &str, outcome: &str, times: &PhaseTimes) {
        let i = &self.info;
        prof::print_line(&format!(
            "cd-redset rank {}: {op} {prefix} ({} set {}/{} member {}/{}): {outcome}; {times}\n",
            i.wrank,
            i.scheme.type_str(),
            i.group + 1,
            i.groups,
            i.rank + 1,
            i.ranks
        ));
    }

    fn apply_inner<P: AsRef<Path>>(&self, files: &[P], prefix: &str) -> Result<()> {
        let paths: Vec<PathBuf> = files.iter().map(|p| p.as_ref().to_owned()).collect();
        let rf = comm::agree(&self.parent, RankFiles::stat(&paths))?;
        let descriptor = comm::agree(&self.parent, self.stage_descriptor_file(prefix))?;
        let redundancy = match self.info.scheme {
            Scheme::Single => single::apply(self, &rf, prefix),
            Scheme::Partner { .. } => partner::apply(self, &rf, prefix),
            Scheme::Xor | Scheme::Rs { .. } => parity::apply(self, &rf, prefix),
        };
        // dropped on error, the staged files are removed: a failed apply changes no file
        let redundancy = comm::agree(&self.parent, redundancy)?;
        let moved = descriptor.commit().and_then(|_| redundancy.commit());
        comm::agree(&self.parent, moved.map(|_| ()))
    }

    /// Where this rank's time went in the last [`Redset::apply`] (all zero before the first).
    pub fn last_times(&self) -> PhaseTimes {
        *self
            .last_times
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The descriptors this rank's descriptor file carries: its own and those of the left
    /// neighbours that hold its redundancy (redset's `redset_encode_reddesc_*`).
    fn descriptor_entries(&self) -> Vec<(usize, KvTree)> {
        let copies = match self.info.scheme {
            Scheme::Single => 0,
            Scheme::Xor => 1,
            Scheme::Partner { replicas } => replicas as usize,
            Scheme::Rs { checksums } => checksums as usize,
        };
        std::iter::once(self.info.rank)
            .chain((1..=copies).map(|d| self.lhs(d)))
            .map(|m| (self.group_map[m], self.member_desc(m)))
            .collect()
    }

    /// Writes this rank's descriptor file under its temporary name, staged.
    fn stage_descriptor_file(&self, prefix: &str) -> Result<Staged> {
        let bytes = header::descriptor_tree(&self.descriptor_entries()).to_file_bytes();
        let path = header::descriptor_file(prefix, self.info.wrank);
        let tmp = prof::timed(prof::Phase::Write, || {
            util::write_tmp(&path, &bytes, self.opts.fsync)
        })?;
        let mut staged = Staged::none();
        staged.file(tmp, path);
        Ok(staged)
    }

    /// Re-creates the descriptor stored under `prefix` and rebuilds every rank's missing or
    /// damaged files (collective over `comm`, which must have the size of the communicator used
    /// at `apply`).
    ///
    /// Returns an error on every rank, without changing any file, when some set lost more than
    /// its scheme can rebuild (including survivors whose CRC32C damage only shows while the
    /// rebuild reads them: the rebuild then starts again with them lost) or when a rank's
    /// descriptor is lost
    /// everywhere. With [`Options::verify`], a set that lost nobody is read once in full to
    /// find silent corruption; [`RecoverReport::times`] says where the time went.
    pub fn recover<C: Communicator>(
        comm: &C,
        prefix: &str,
        opts: Options,
    ) -> Result<(Redset, RecoverReport)> {
        let span = tracing::info_span!("redset_recover", prefix);
        let _g = span.enter();
        let op = prof::Op::begin(opts.yield_while_waiting);
        let res = Self::recover_inner(comm, prefix, opts);
        let times = op.finish();
        if prof::stats_wanted() {
            match &res {
                Ok((rs, rep)) => {
                    let what = if rep.rebuilt {
                        format!("rebuilt ({}): {} file(s)", rep.reason, rep.files.len())
                    } else if rep.set_rebuilt.is_empty() {
                        "nothing to rebuild".to_string()
                    } else {
                        format!("helped rebuild group rank(s) {:?}", rep.set_rebuilt)
                    };
                    rs.print_stats("recover", prefix, &what, &times);
                }
                Err(e) => prof::print_line(&format!(
                    "cd-redset rank {}: recover {prefix}: failed: {e}; {times}\n",
                    comm.rank()
                )),
            }
        }
        res.map(|(rs, mut report)| {
            report.times = times;
            (rs, report)
        })
    }

    fn recover_inner<C: Communicator>(
        comm: &C,
        prefix: &str,
        opts: Options,
    ) -> Result<(Redset, RecoverReport)> {
        let parent = comm::after_barrier(comm, || comm.duplicate());
        let w = parent.rank() as usize;
        let size = parent.size() as usize;
        let mut report = RecoverReport::default();

        // 1. find every rank's descriptor in the descriptor files that survive
        let own_path = header::descriptor_file(prefix, w);
        let own_tree = KvTree::read_file(&own_path).ok();
        let mut out = vec![Vec::new(); size];
        if let Some(t) = &own_tree {
            for (key, entry) in t.iter() {
                let (Ok(dest), Some(desc)) = (key.parse::<usize>(), entry.get("DESC")) else {
                    continue;
                };
                if dest < size {
                    desc.pack(&mut out[dest]);
                }
            }
        }
        let incoming = comm::alltoall_bytes(&parent, &out);
        let mut found: Option<SetInfo> = None;
        for b in &incoming {
            let mut rest = &b[..];
            while !rest.is_empty() {
                let Ok((t, used)) = KvTree::unpack(rest) else {
                    break;
                };
                rest = &rest[used..];
                if let Ok(info) = SetInfo::from_kvtree(&t) {
                    if (info.wrank == w || info.wrank == usize::MAX) && found.is_none() {
                        found = Some(info);
                    }
                }
            }
        }
        let own_ok = own_tree
            .as_ref()
            .and_then(|t| t.get_path(&[&w.to_string(), "DESC"]))
            .is_some_and(|d| SetInfo::from_kvtree(d).is_ok());
        report.descriptor_rebuilt = !own_ok;
        let local = found.ok_or_else(|| {
            Error::Unrecoverable(format!(
                "descriptor of rank {w} is lost ({} and its copies)",
                own_path.display()
            ))
        });
        let mut info = comm::agree(&parent, local)?;
        info.wrank = w;
        let consistent = if info.wranks != usize::MAX && info.wranks != size {
            Err(Error::InvalidArgument(format!(
                "dataset was written by {} ranks, recover runs on {size}",
                info.wranks
            )))
        } else {
            Ok(())
        };
        comm::agree(&parent, consistent)?;
        info.wranks = size;
        let rs = Redset::from_info(parent, info, opts)?;

        // 2. survey the set (headers, presence, sizes) and decide whether it can be rebuilt,
        //    before writing anything
        let mut sv = recover::survey(&rs, prefix);
        comm::agree(&rs.parent, rs.feasibility(&sv))?;

        // 3. rebuild into temporary files, in rounds while survivors turn out damaged (see
        //    `recover`); move everything into place only when every set succeeded
        let outcome = rs.rebuild_rounds(&mut sv, prefix);
        let staged = comm::agree(&rs.parent, outcome)?;
        let files = comm::agree(&rs.parent, staged.commit())?;
        report.set_rebuilt = sv.lost_ranks();
        report.rebuilt = sv.lost[rs.info.rank];
        report.reason = sv.reasons[rs.info.rank].clone();
        report.files = files;
        drop(sv);

        // 4. rewrite a lost descriptor file
        let res = if report.descriptor_rebuilt {
            rs.stage_descriptor_file(prefix)
                .and_then(Staged::commit)
                .map(|_| ())
        } else {
            Ok(())
        };
        comm::agree(&rs.parent, res)?;
        Ok((rs, report))
    }

    /// Rebuilds the set's lost members (collective over the set, every member returns the same
    /// outcome): verifies a set that lost nobody, rebuilds one that did, and starts again with
    /// more losses when survivors turn out damaged on the way.
    fn rebuild_rounds(&self, sv: &mut recover::Survey, prefix: &str) -> Result<Staged> {
        loop {
            if sv.lost_ranks().is_empty() {
                if !self.opts.verify || sv.verified {
                    return Ok(Staged::none());
                }
                recover::verify_all(self, sv);
                if sv.lost_ranks().is_empty() {
                    return Ok(Staged::none());
                }
            }
            self.feasibility(sv)?;
            let attempt = match self.info.scheme {
                Scheme::Single => return Ok(Staged::none()),
                Scheme::Partner { .. } => partner::rebuild(self, sv, prefix)?,
                Scheme::Xor | Scheme::Rs { .. } => parity::rebuild(self, sv, prefix)?,
            };
            if attempt.failures.is_empty() {
                return Ok(attempt.staged);
            }
            recover::mark_lost(sv, self, &attempt.failures);
        }
    }

    fn feasibility(&self, sv: &recover::Survey) -> Result<()> {
        let lost = sv.lost_ranks();
        if lost.is_empty() {
            return Ok(());
        }
        let describe = || {
            lost.iter()
                .map(|&x| {
                    format!(
                        "group rank {x} (parent rank {}): {}",
                        self.group_map[x], sv.reasons[x]
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let head = format!(
            "{} set {} of {} lost {} of {} members",
            self.info.scheme.type_str(),
            self.info.group + 1,
            self.info.groups,
            lost.len(),
            self.info.ranks
        );
        let verdict =
            self.info
                .scheme
                .can_rebuild(&sv.lost)
                .and_then(|()| match self.info.scheme {
                    Scheme::Xor | Scheme::Rs { .. } if sv.chunk.is_none() => {
                        Err("the chunk size was lost with every header".into())
                    }
                    _ => Ok(()),
                });
        let verdict = verdict.and_then(|()| match lost.iter().find(|&&x| sv.files[x].is_none()) {
            Some(x) => Err(format!(
                "the file list of group rank {x} survives in no header"
            )),
            None => Ok(()),
        });
        verdict.map_err(|why| Error::Unrecoverable(format!("{head}, {why}: {}", describe())))
    }

    /// Deletes the redundancy data written by [`Redset::apply`] under `prefix` (collective).
    pub fn unapply(&self, prefix: &str) -> Result<()> {
        let span = tracing::info_span!("redset_unapply", prefix);
        let _g = span.enter();
        let op = prof::Op::begin(self.opts.yield_while_waiting);
        let mut res = Ok(());
        for p in self.redundancy_files(prefix) {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => res = Err(Error::io("remove", &p, e)),
            }
        }
        let res = comm::agree(&self.parent, res);
        let times = op.finish();
        if prof::stats_wanted() {
            self.print_stats("unapply", prefix, &outcome(&res), &times);
        }
        res
    }

    /// The files [`Redset::apply`] writes on this rank: descriptor file and redundancy file
    /// (redset's `redset_filelist_enc_get`).
    pub fn redundancy_files(&self, prefix: &str) -> Vec<PathBuf> {
        vec![
            header::descriptor_file(prefix, self.info.wrank),
            header::redundancy_file(prefix, &self.info),
        ]
    }

    /// The files this rank protected in the dataset under `prefix`, from its redundancy file
    /// header (redset's `redset_filelist_orig_get`; local).
    pub fn dataset_files(&self, prefix: &str) -> Result<Vec<PathBuf>> {
        let f = RedFile::open(&header::redundancy_file(prefix, &self.info))?;
        let rf = header::header_rank_files(&f.header, self.info.rank)?
            .ok_or_else(|| Error::header(format!("DESC/{}", self.info.rank), "missing"))?;
        Ok(rf.files.iter().map(|e| PathBuf::from(&e.name)).collect())
    }
}

/// The data files listed in a set of redundancy files (redset's `redset_filelist_get_data`):
/// for each group rank found in any of their headers, its files in order.
pub fn dataset_files_of(redundancy_files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut by_rank: std::collections::BTreeMap<u64, RankFiles> = Default::default();
    for p in redundancy_files {
        let f = RedFile::open(p)?;
        if let Some(d) = f.header.get("DESC") {
            for (k, _) in d.iter() {
                let Ok(r) = k.parse::<u64>() else { continue };
                if let Some(rf) = header::header_rank_files(&f.header, r as usize)? {
                    by_rank.entry(r).or_insert(rf);
                }
            }
        }
    }
    Ok(by_rank
        .values()
        .flat_map(|rf| rf.files.iter().map(|e| PathBuf::from(&e.name)))
        .collect())
}
