//! `cd-redset`: inspect redundancy files and check whether a dataset can be rebuilt.
//!
//! ```text
//! cd-redset inspect FILE   print the kvtree header of a redundancy or descriptor file
//! cd-redset verify DIR     check every redundancy file in DIR (header CRC32, payload and data
//!                          CRC32C, sizes) and say which ranks' data are recoverable
//! ```
//!
//! Works on files written by cd-redset and by ECP-VeloC redset 0.4 (whose files carry no
//! CRC32C: only presence and sizes are checked for them). Relative data file names are resolved
//! against the current directory, as redset does. Exit status: 0 when every rank's data are
//! intact or recoverable, 1 otherwise, 2 on usage errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cd_redset::header::{parse_redundancy_name, ParsedName};
use cd_redset::kvtree::KvTree;
use cd_redset::{RankFiles, Scheme, SetInfo};

/// What `cd-redset --help` prints (to standard output).
const HELP: &str = "\
cd-redset: inspect redundancy files and check whether a dataset can be rebuilt

usage:
  cd-redset inspect FILE   print the kvtree header of a redundancy or descriptor file
  cd-redset verify DIR     check every redundancy file in DIR (header CRC32, payload and data
                           CRC32C, sizes) and say which ranks' data are recoverable
  cd-redset --help         print this help

Works on files written by cd-redset and by ECP-VeloC redset 0.4 (whose files carry no CRC32C:
only presence and sizes are checked for them). Relative data file names are resolved against
the current directory, as redset does.

Exit status: 0 when every rank's data are intact or recoverable (inspect: the header was read),
1 otherwise, 2 on usage errors.
";

fn usage() -> ExitCode {
    eprintln!("usage: cd-redset inspect FILE | cd-redset verify DIR (cd-redset --help: more)");
    ExitCode::from(2)
}

fn inspect(path: &Path) -> ExitCode {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(1);
        }
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut r = std::io::BufReader::new(f);
    match KvTree::read_from(&mut r) {
        Ok((t, n)) => {
            print!("{}", t.to_text());
            println!(
                "# header {n} bytes, payload {} bytes",
                len.saturating_sub(n as u64)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}

/// A set's identity from its file names: (prefix, scheme tag, group, groups, ranks).
type SetKey = (String, String, usize, usize, usize);

struct Member {
    path: PathBuf,
    name: ParsedName,
    header: Option<KvTree>,
    problem: Option<String>,
}

fn verify(dir: &Path) -> ExitCode {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    // (prefix, tag, group, groups, ranks) -> members by group rank
    let mut sets: BTreeMap<SetKey, BTreeMap<usize, Member>> = BTreeMap::new();
    for e in entries.flatten() {
        let fname = e.file_name().to_string_lossy().into_owned();
        let Some(name) = parse_redundancy_name(&fname) else {
            continue;
        };
        let key = (
            name.prefix.clone(),
            name.tag.clone(),
            name.group,
            name.groups,
            name.ranks,
        );
        let path = e.path();
        let (header, problem) = match std::fs::File::open(&path).map(std::io::BufReader::new) {
            Ok(mut r) => match KvTree::read_from(&mut r) {
                Ok((t, _)) => (Some(t), None),
                Err(err) => (None, Some(err.to_string())),
            },
            Err(err) => (None, Some(err.to_string())),
        };
        sets.entry(key).or_default().insert(
            name.rank,
            Member {
                path,
                name,
                header,
                problem,
            },
        );
    }
    if sets.is_empty() {
        println!("no redundancy files in {}", dir.display());
        return ExitCode::from(1);
    }
    let mut all_ok = true;
    let mut buf = vec![0u8; 4 << 20];
    for ((prefix, tag, group, groups, ranks), mut members) in sets {
        println!(
            "{prefix}*.{tag} set {} of {groups}: {ranks} member(s)",
            group + 1
        );
        // scheme and file lists from any valid header
        let mut scheme: Option<Scheme> = None;
        let mut lists: Vec<Option<RankFiles>> = vec![None; ranks];
        for m in members.values() {
            let Some(h) = &m.header else { continue };
            if let Some(d) = h.get("DESC") {
                for (k, t) in d.iter() {
                    let Ok(r) = k.parse::<usize>() else { continue };
                    if r < ranks && lists[r].is_none() {
                        lists[r] = RankFiles::from_kvtree(t, "").ok();
                    }
                    if scheme.is_none() {
                        scheme = t
                            .get("DESC")
                            .and_then(|d| SetInfo::from_kvtree(d).ok())
                            .map(|i| i.scheme);
                    }
                }
            }
        }
        let Some(scheme) = scheme else {
            println!("  no readable header: cannot tell the scheme; nothing is recoverable");
            all_ok = false;
            continue;
        };
        let k = match scheme {
            Scheme::Rs { checksums } => checksums as usize,
            Scheme::Partner { replicas } => replicas as usize,
            _ => 1,
        };
        let mut lost = vec![false; ranks];
        let mut why: Vec<String> = vec![String::new(); ranks];
        for r in 0..ranks {
            let mut problems = Vec::new();
            match members.get_mut(&r) {
                None => problems.push("redundancy file missing".to_string()),
                Some(m) => {
                    if let Some(p) = &m.problem {
                        problems.push(p.clone());
                    } else if let Some(h) = &m.header {
                        if let Err(p) =
                            check_payload(&m.path, h, scheme, k, r, ranks, &lists, &mut buf)
                        {
                            problems.push(p);
                        }
                    }
                }
            }
            match &lists[r] {
                None => problems.push("file list lost".into()),
                Some(f) => {
                    if let Err(p) = f.verify(&mut buf) {
                        problems.push(p);
                    }
                }
            }
            if !problems.is_empty() {
                lost[r] = true;
                why[r] = problems.join("; ");
            }
        }
        let verdict = scheme.can_rebuild(&lost);
        for r in 0..ranks {
            let w = members
                .get(&r)
                .map(|m| m.name.wrank.to_string())
                .unwrap_or_else(|| "?".into());
            if lost[r] {
                let state = if verdict.is_ok() && lists[r].is_some() {
                    "recoverable"
                } else {
                    "NOT recoverable"
                };
                println!("  rank {w} (member {r}): DAMAGED, {state}: {}", why[r]);
            } else {
                println!("  rank {w} (member {r}): ok");
            }
        }
        match verdict {
            Ok(()) if lost.iter().any(|&l| l) => {
                println!("  => {} can rebuild this set", scheme.type_str())
            }
            Ok(()) => println!("  => intact"),
            Err(e) => {
                println!("  => cannot rebuild: {e}");
                all_ok = false;
            }
        }
        if lost
            .iter()
            .enumerate()
            .any(|(r, &l)| l && lists[r].is_none())
        {
            all_ok = false;
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[allow(clippy::too_many_arguments)]
fn check_payload(
    path: &Path,
    h: &KvTree,
    scheme: Scheme,
    k: usize,
    r: usize,
    ranks: usize,
    lists: &[Option<RankFiles>],
    buf: &mut [u8],
) -> Result<(), String> {
    let blocks: Vec<u64> = match scheme {
        Scheme::Single => Vec::new(),
        Scheme::Xor | Scheme::Rs { .. } => {
            let c = h.get_u64("CHUNK").ok_or("header lacks CHUNK")?;
            vec![c; k]
        }
        Scheme::Partner { .. } => (1..=k)
            .map(|d| {
                lists[(r + ranks - d % ranks) % ranks]
                    .as_ref()
                    .map(|f| f.total())
            })
            .collect::<Option<Vec<u64>>>()
            .ok_or("a partner's file list is lost")?,
    };
    cd_redset::header::check_payload_file(path, &blocks, buf)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let words = args.get(1..).unwrap_or_default();
    if words.iter().any(|a| a == "-h" || a == "--help") || words == ["help"] {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("inspect"), Some(f)) if args.len() == 3 => inspect(Path::new(f)),
        (Some("verify"), Some(d)) if args.len() == 3 => verify(Path::new(d)),
        _ => usage(),
    }
}
