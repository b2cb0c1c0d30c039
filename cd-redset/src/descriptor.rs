//! The redundancy descriptor: which ranks form a redundancy set, and with which scheme.
//!
//! # Forming sets (as redset 0.4 `redset_create_base`)
//!
//! 1. Ranks with the same failure-group name (host name by default) form a failure group,
//!    ordered by parent rank.
//! 2. Ranks with the same position inside their failure group form an "across" group: it holds
//!    at most one rank per failure group, so no set built from it has two members that fail
//!    together.
//! 3. Each across group of `n` ranks is cut into `n / set_size` sets as evenly as possible
//!    (`redset_group_id`); the first `n % size` sets get one extra rank.
//! 4. Sets are numbered by their lowest parent rank; members are ordered by parent rank.
//!
//! redset does this with several `MPI_Comm_split` calls; we gather the (short) failure-group
//! names once and compute every rank's set locally, then split once with
//! `Comm_split(GROUP, RANK)`, the same call that re-creates the set on restart from the
//! persisted descriptor.
//!
//! # Persisted form
//!
//! ```text
//! ENABLED = 1        TYPE = XOR       GROUPS = 1    GROUP = 0
//! RANKS = 4          RANK = 0         WRANKS = 4    WRANK = 0
//! REPLICAS = 2       (PARTNER only)   CKSUM = 2     (RS only)
//! ```

use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

use crate::comm;
use crate::error::{Error, Result};
use crate::kvtree::KvTree;

/// Environment variable that overrides the failure-group name (default: the host name).
///
/// `{rank}` in the value is replaced by the parent rank and `{rank/N}` by the parent rank
/// divided by `N`, so that tests can simulate nodes on one machine: `node{rank/2}` puts ranks
/// 0 and 1 on "node0", 2 and 3 on "node1", and so on.
pub const FAILURE_GROUP_ENV: &str = "CD_REDSET_FAILURE_GROUP";

/// A redundancy scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Metadata only: no redundancy data, nothing can be rebuilt.
    Single,
    /// Full copies of each rank's files on `replicas` partners in other failure groups.
    Partner {
        /// Number of copies (1 <= replicas < set size).
        replicas: u32,
    },
    /// One XOR parity chunk per rank (RAID-5 across the set); survives one loss per set.
    Xor,
    /// Reed-Solomon over GF(2^8), `checksums` chunks per rank; survives that many losses.
    Rs {
        /// Number of checksum blocks k (1 <= k < set size, set size + k <= 256).
        checksums: u32,
    },
}

impl Scheme {
    /// redset's `TYPE` string.
    pub fn type_str(&self) -> &'static str {
        match self {
            Scheme::Single => "SINGLE",
            Scheme::Partner { .. } => "PARTNER",
            Scheme::Xor => "XOR",
            Scheme::Rs { .. } => "RS",
        }
    }

    /// The tag used in redundancy file names (`single`, `partner`, `xor`, `rs`).
    pub fn file_tag(&self) -> &'static str {
        match self {
            Scheme::Single => "single",
            Scheme::Partner { .. } => "partner",
            Scheme::Xor => "xor",
            Scheme::Rs { .. } => "rs",
        }
    }

    /// How many members of a set may be lost (for PARTNER: any `replicas` losses; some larger
    /// patterns are recoverable too: every lost member needs a surviving partner to its right).
    pub fn tolerance(&self) -> usize {
        match self {
            Scheme::Single => 0,
            Scheme::Partner { replicas } => *replicas as usize,
            Scheme::Xor => 1,
            Scheme::Rs { checksums } => *checksums as usize,
        }
    }

    /// Whether a set that lost the members flagged in `lost` can be rebuilt; if not, why.
    pub fn can_rebuild(&self, lost: &[bool]) -> std::result::Result<(), String> {
        let m = lost.iter().filter(|&&l| l).count();
        match *self {
            _ if m == 0 => Ok(()),
            Scheme::Single => Err("SINGLE keeps no redundancy data".into()),
            Scheme::Partner { replicas } => partner_feasible(replicas as usize, lost),
            Scheme::Xor | Scheme::Rs { .. } if m > self.tolerance() => Err(format!(
                "{m} members lost, the scheme rebuilds at most {}",
                self.tolerance()
            )),
            _ => Ok(()),
        }
    }

    fn check(&self, set_ranks: usize) -> std::result::Result<(), String> {
        match *self {
            Scheme::Single => Ok(()),
            Scheme::Xor if set_ranks < 2 => {
                Err(format!("XOR needs at least 2 ranks per set, a set has {set_ranks} (too few failure groups?)"))
            }
            Scheme::Xor => Ok(()),
            Scheme::Partner { replicas } if replicas < 1 || replicas as usize >= set_ranks => Err(format!(
                "PARTNER replicas must be in [1, {set_ranks}) for a set of {set_ranks} ranks, got {replicas}"
            )),
            Scheme::Partner { .. } => Ok(()),
            Scheme::Rs { checksums } if checksums < 1 || checksums as usize >= set_ranks => Err(format!(
                "RS checksum blocks must be in [1, {set_ranks}) for a set of {set_ranks} ranks, got {checksums}"
            )),
            Scheme::Rs { checksums } if set_ranks + checksums as usize > 256 => {
                Err(format!("RS over GF(2^8) needs set size + k <= 256, got {set_ranks} + {checksums}"))
            }
            Scheme::Rs { .. } => Ok(()),
        }
    }
}

/// Tunables of the data pipelines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Bytes moved per pipeline step (per message). Default 256 KiB: the pipelines keep a few
    /// pieces per rank in flight and a piece is read, checked, combined and sent while it is in
    /// the core's cache (see `docs/bench-mpi.md`).
    pub piece_size: usize,
    /// fsync redundancy files and rebuilt files before returning. Default on.
    pub fsync: bool,
    /// On recover, read all data and redundancy bytes to check their CRC32C. Default on.
    pub verify: bool,
    /// Bytes covered by each data CRC32C for SINGLE and PARTNER (XOR and RS use their chunk
    /// size). Default 16 MiB.
    pub crc_chunk: u64,
    /// Wait for MPI with `MPI_Test` and `sched_yield` instead of `MPI_Wait`. Default on: MPI
    /// libraries busy-poll in `MPI_Wait`, which starves the other ranks of a shared core; on a
    /// dedicated core both cost the same.
    pub yield_while_waiting: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            piece_size: 256 << 10,
            fsync: true,
            verify: true,
            crc_chunk: 16 << 20,
            yield_while_waiting: true,
        }
    }
}

/// The set-membership fields of a descriptor (everything but communicators).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetInfo {
    /// The scheme.
    pub scheme: Scheme,
    /// Whether the descriptor is enabled.
    pub enabled: bool,
    /// Number of sets in the parent communicator.
    pub groups: usize,
    /// This rank's set (0-based; file names use `group + 1`).
    pub group: usize,
    /// Number of ranks in this set.
    pub ranks: usize,
    /// This rank's position in its set (0-based; file names use `rank + 1`).
    pub rank: usize,
    /// Rank in the parent communicator.
    pub wrank: usize,
    /// Size of the parent communicator.
    pub wranks: usize,
}

impl SetInfo {
    /// The persisted descriptor kvtree (`redset_store_to_kvtree`).
    pub fn to_kvtree(&self) -> KvTree {
        let mut t = KvTree::new();
        t.set_kv("ENABLED", i32::from(self.enabled));
        t.set_kv("TYPE", self.scheme.type_str());
        match self.scheme {
            Scheme::Partner { replicas } => t.set_kv("REPLICAS", replicas),
            Scheme::Rs { checksums } => t.set_kv("CKSUM", checksums),
            _ => {}
        }
        t.set_kv("GROUPS", self.groups);
        t.set_kv("GROUP", self.group);
        t.set_kv("RANKS", self.ranks);
        t.set_kv("RANK", self.rank);
        t.set_kv("WRANK", self.wrank);
        t.set_kv("WRANKS", self.wranks);
        t
    }

    /// Parses a persisted descriptor, checking that the fields are consistent.
    pub fn from_kvtree(t: &KvTree) -> Result<SetInfo> {
        let ctx = "DESC/";
        let ty = t
            .get_val("TYPE")
            .ok_or_else(|| Error::header("DESC/TYPE", "missing"))?;
        let scheme = match ty.to_ascii_uppercase().as_str() {
            "SINGLE" => Scheme::Single,
            "XOR" => Scheme::Xor,
            "PARTNER" => Scheme::Partner {
                replicas: t.require_u64("REPLICAS", ctx)? as u32,
            },
            "RS" => Scheme::Rs {
                checksums: t.require_u64("CKSUM", ctx)? as u32,
            },
            other => {
                return Err(Error::header(
                    "DESC/TYPE",
                    format!("unknown scheme {other:?}"),
                ))
            }
        };
        let u = |k: &str| t.require_u64(k, ctx).map(|v| v as usize);
        let info = SetInfo {
            scheme,
            enabled: t.get_i64("ENABLED").unwrap_or(1) != 0,
            groups: u("GROUPS")?,
            group: u("GROUP")?,
            ranks: u("RANKS")?,
            rank: u("RANK")?,
            // WRANK/WRANKS were added in redset 0.2; older descriptors lack them
            wrank: t.get_u64("WRANK").map(|v| v as usize).unwrap_or(usize::MAX),
            wranks: t
                .get_u64("WRANKS")
                .map(|v| v as usize)
                .unwrap_or(usize::MAX),
        };
        if info.group >= info.groups || info.rank >= info.ranks || info.ranks == 0 {
            return Err(Error::header(
                "DESC",
                format!("inconsistent descriptor {info:?}"),
            ));
        }
        info.scheme
            .check(info.ranks)
            .map_err(|r| Error::header("DESC", r))?;
        Ok(info)
    }

    /// The same set seen from member `r` with parent rank `wrank`.
    pub fn for_member(&self, r: usize, wrank: usize) -> SetInfo {
        SetInfo {
            rank: r,
            wrank,
            ..self.clone()
        }
    }
}

/// A redundancy descriptor: the set this rank belongs to, its communicator and the scheme.
pub struct Redset {
    pub(crate) info: SetInfo,
    /// Duplicate of the parent communicator (our traffic never mixes with the caller's).
    pub(crate) parent: SimpleCommunicator,
    /// The set communicator.
    pub(crate) comm: SimpleCommunicator,
    /// Parent rank of each set member.
    pub(crate) group_map: Vec<usize>,
    pub(crate) opts: Options,
    /// Phase times of the last `apply` on this rank.
    pub(crate) last_times: std::sync::Mutex<crate::prof::PhaseTimes>,
}

/// Resolves the failure-group name: the argument, else [`FAILURE_GROUP_ENV`], else the host.
pub fn failure_group_name(explicit: Option<&str>, rank: usize) -> String {
    let raw = match explicit {
        Some(s) => s.to_owned(),
        None => std::env::var(FAILURE_GROUP_ENV).unwrap_or_else(|_| crate::util::hostname()),
    };
    expand_group_template(&raw, rank)
}

fn expand_group_template(raw: &str, rank: usize) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let Some(j) = after.find('}') else {
            out.push_str(after);
            return out;
        };
        let inner = &after[1..j];
        if inner == "rank" {
            out.push_str(&rank.to_string());
        } else if let Some(d) = inner
            .strip_prefix("rank/")
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&d| d > 0)
        {
            out.push_str(&(rank / d).to_string());
        } else {
            out.push_str(&after[..=j]);
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    out
}

/// redset's `redset_group_id`: split `ranks` into sets of at least `minsize`, as evenly as
/// possible, and return the set of position `rank`.
pub(crate) fn redset_group_id(rank: usize, ranks: usize, minsize: usize) -> usize {
    let groups = ranks / minsize;
    let remainder_ranks = ranks - groups * minsize;
    let size = remainder_ranks
        .checked_div(groups)
        .map_or(ranks, |add| minsize + add);
    let remainder = ranks % size;
    let cutoff = remainder * (size + 1);
    if rank < cutoff {
        rank / (size + 1)
    } else {
        (rank - cutoff) / size + remainder
    }
}

/// Computes, for every parent rank, `(set id, position in set)` and the number of sets, from
/// the failure-group names of all ranks. Pure function (unit-tested without MPI).
pub(crate) fn compute_sets(
    scheme: Scheme,
    names: &[String],
    set_size: usize,
) -> (Vec<(usize, usize)>, usize) {
    let n = names.len();
    if scheme == Scheme::Single {
        return ((0..n).map(|r| (r, 0)).collect(), n);
    }
    // position of each rank inside its failure group
    let mut fg_pos = vec![0usize; n];
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for (i, name) in names.iter().enumerate() {
        let c = seen.entry(name.as_str()).or_insert(0);
        fg_pos[i] = *c;
        *c += 1;
    }
    // across groups: ranks with equal fg_pos, ordered by parent rank
    let max_pos = fg_pos.iter().copied().max().unwrap_or(0);
    let mut key_of = vec![(0usize, 0usize); n]; // (across color, split id)
    for color in 0..=max_pos {
        let members: Vec<usize> = (0..n).filter(|&i| fg_pos[i] == color).collect();
        for (pos, &i) in members.iter().enumerate() {
            key_of[i] = (color, redset_group_id(pos, members.len(), set_size.max(1)));
        }
    }
    // number sets by their lowest parent rank; members by parent rank
    let mut leader_of: std::collections::HashMap<(usize, usize), usize> = Default::default();
    let mut size_of: std::collections::HashMap<(usize, usize), usize> = Default::default();
    let mut pos_in = vec![0usize; n];
    for i in 0..n {
        leader_of.entry(key_of[i]).or_insert(i);
        let s = size_of.entry(key_of[i]).or_insert(0);
        pos_in[i] = *s;
        *s += 1;
    }
    let mut leaders: Vec<usize> = leader_of.values().copied().collect();
    leaders.sort_unstable();
    let out = (0..n)
        .map(|i| {
            let leader = leader_of[&key_of[i]];
            (
                leaders.binary_search(&leader).expect("leader listed"),
                pos_in[i],
            )
        })
        .collect();
    (out, leaders.len())
}

impl Redset {
    /// Creates a descriptor (collective over `comm`).
    ///
    /// `set_size` is the minimum number of ranks per set (redset's default is 8);
    /// `failure_group` names this rank's failure group, default from [`FAILURE_GROUP_ENV`] or
    /// the host name.
    pub fn create<C: Communicator>(
        comm: &C,
        scheme: Scheme,
        set_size: usize,
        failure_group: Option<&str>,
        opts: Options,
    ) -> Result<Redset> {
        let span = tracing::debug_span!("redset_create", scheme = scheme.type_str(), set_size);
        let _g = span.enter();
        let _op = crate::prof::Op::begin(opts.yield_while_waiting);
        let parent = comm::after_barrier(comm, || comm.duplicate());
        let wrank = parent.rank() as usize;
        let wranks = parent.size() as usize;
        let name = failure_group_name(failure_group, wrank);
        let names: Vec<String> = comm::allgather_bytes(&parent, name.as_bytes())
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        let (sets, groups) = compute_sets(scheme, &names, set_size);
        // every rank sees every set: check them all so that all ranks agree without messages
        let mut sizes = vec![0usize; groups];
        for &(g, _) in &sets {
            sizes[g] += 1;
        }
        if opts.piece_size == 0 || opts.piece_size > i32::MAX as usize || opts.crc_chunk == 0 {
            return Err(Error::InvalidArgument(
                "piece size must be in [1, 2^31) and crc_chunk positive".into(),
            ));
        }
        for (g, &s) in sizes.iter().enumerate() {
            scheme
                .check(s)
                .map_err(|r| Error::InvalidArgument(format!("set {g}: {r}")))?;
        }
        let (group, rank) = sets[wrank];
        let info = SetInfo {
            scheme,
            enabled: true,
            groups,
            group,
            ranks: sizes[group],
            rank,
            wrank,
            wranks,
        };
        Self::from_info(parent, info, opts)
    }

    /// Builds the set communicator for `info` with `Comm_split(GROUP, RANK)` (collective).
    pub(crate) fn from_info(
        parent: SimpleCommunicator,
        info: SetInfo,
        opts: Options,
    ) -> Result<Redset> {
        let comm = comm::after_barrier(&parent, || {
            if info.scheme == Scheme::Single {
                // redset duplicates MPI_COMM_SELF; the split below gives the same one-rank group
                parent.split_by_color_with_key(Color::with_value(info.wrank as i32), 0)
            } else {
                parent
                    .split_by_color_with_key(Color::with_value(info.group as i32), info.rank as i32)
            }
        })
        .ok_or_else(|| {
            Error::InvalidArgument("communicator split returned no communicator".into())
        })?;
        let ok = comm.size() as usize == info.ranks && comm.rank() as usize == info.rank;
        let ok = comm::all_true(&parent, ok);
        if !ok {
            return Err(Error::InvalidArgument(format!(
                "set {} should have {} ranks with this rank at {}, got {} ranks at {}",
                info.group,
                info.ranks,
                info.rank,
                comm.size(),
                comm.rank()
            )));
        }
        let group_map: Vec<usize> = comm::allgather_u64(&comm, info.wrank as u64)
            .into_iter()
            .map(|v| v as usize)
            .collect();
        Ok(Redset {
            info,
            parent,
            comm,
            group_map,
            opts,
            last_times: Default::default(),
        })
    }

    /// The set-membership fields.
    pub fn info(&self) -> &SetInfo {
        &self.info
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.info.scheme
    }

    /// Parent ranks of the set members, in set order.
    pub fn group_map(&self) -> &[usize] {
        &self.group_map
    }

    /// The pipeline options.
    pub fn options(&self) -> Options {
        self.opts
    }

    /// Changes the pipeline options (local).
    pub fn set_options(&mut self, opts: Options) {
        self.opts = opts;
    }

    /// The persisted descriptor of this rank.
    pub fn to_kvtree(&self) -> KvTree {
        self.info.to_kvtree()
    }

    /// The persisted descriptor of set member `r`.
    pub(crate) fn member_desc(&self, r: usize) -> KvTree {
        self.info.for_member(r, self.group_map[r]).to_kvtree()
    }

    /// Set rank `d` steps to the left (wrapping).
    pub(crate) fn lhs(&self, d: usize) -> usize {
        let n = self.info.ranks;
        (self.info.rank + n - d % n) % n
    }

    /// Set rank `d` steps to the right (wrapping).
    pub(crate) fn rhs(&self, d: usize) -> usize {
        (self.info.rank + d) % self.info.ranks
    }
}

/// PARTNER's rule: every lost member keeps a surviving right partner within `R`.
fn partner_feasible(rep: usize, lost: &[bool]) -> std::result::Result<(), String> {
    let n = lost.len();
    for x in (0..n).filter(|&x| lost[x]) {
        if (1..=rep).all(|d| lost[(x + d) % n]) {
            return Err(format!(
                "group rank {x} and all of its {rep} partner(s) to the right ({}) are lost",
                (1..=rep)
                    .map(|d| ((x + d) % n).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partner_feasibility() {
        assert!(partner_feasible(1, &[true, false, false, false]).is_ok());
        assert!(partner_feasible(1, &[true, true, false, false]).is_err());
        assert!(partner_feasible(1, &[true, false, true, false]).is_ok());
        assert!(partner_feasible(2, &[true, true, false, false]).is_ok());
        assert!(partner_feasible(2, &[true, true, true, false]).is_err());
    }

    #[test]
    fn group_id_matches_redset() {
        // 10 ranks, min size 4: groups of 5 and 5
        let ids: Vec<usize> = (0..10).map(|r| redset_group_id(r, 10, 4)).collect();
        assert_eq!(ids, vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
        // 9 ranks, min size 4: 5 + 4
        let ids: Vec<usize> = (0..9).map(|r| redset_group_id(r, 9, 4)).collect();
        assert_eq!(ids, vec![0, 0, 0, 0, 0, 1, 1, 1, 1]);
        // fewer ranks than min size: one group
        assert!((0..3).all(|r| redset_group_id(r, 3, 8) == 0));
    }

    #[test]
    fn sets_never_share_a_failure_group() {
        let names: Vec<String> = (0..8).map(|r| format!("node{}", r / 2)).collect();
        let (sets, groups) = compute_sets(Scheme::Xor, &names, 8);
        assert_eq!(groups, 2);
        // ranks 0,2,4,6 (position 0 on each node) and 1,3,5,7
        assert_eq!(sets[0], (0, 0));
        assert_eq!(sets[2], (0, 1));
        assert_eq!(sets[1], (1, 0));
        assert_eq!(sets[7], (1, 3));
        for g in 0..groups {
            let nodes: Vec<&String> = (0..8)
                .filter(|&r| sets[r].0 == g)
                .map(|r| &names[r])
                .collect();
            let mut d = nodes.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), nodes.len());
        }
        let (s, g) = compute_sets(Scheme::Single, &names, 8);
        assert_eq!(g, 8);
        assert_eq!(s[5], (5, 0));
    }

    #[test]
    fn templates() {
        assert_eq!(expand_group_template("node{rank/2}", 5), "node2");
        assert_eq!(expand_group_template("r{rank}x", 5), "r5x");
        assert_eq!(expand_group_template("a{b}c{", 1), "a{b}c{");
    }

    #[test]
    fn desc_roundtrip_and_checks() {
        let info = SetInfo {
            scheme: Scheme::Rs { checksums: 2 },
            enabled: true,
            groups: 1,
            group: 0,
            ranks: 4,
            rank: 1,
            wrank: 1,
            wranks: 4,
        };
        let t = info.to_kvtree();
        assert_eq!(
            t.to_text(),
            "CKSUM = 2\nENABLED = 1\nGROUP = 0\nGROUPS = 1\nRANK = 1\nRANKS = 4\nTYPE = RS\nWRANK = 1\nWRANKS = 4\n"
        );
        assert_eq!(SetInfo::from_kvtree(&t).unwrap(), info);
        let mut bad = t.clone();
        bad.set_kv("CKSUM", 4);
        assert!(SetInfo::from_kvtree(&bad).is_err());
        bad.set_kv("TYPE", "BOGUS");
        assert!(SetInfo::from_kvtree(&bad).is_err());
    }
}
