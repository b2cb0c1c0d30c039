//! `cd-persist`: lists the persisted versions of a job's persistent CDs with their health, and
//! verifies one version's CRC32Cs, from the files alone (run it while no job writes them).
//!
//! ```text
//! cd-persist list   --dir TEMPLATE --ranks N [--global DIR] [--name NAME] [--verify]
//! cd-persist verify --dir TEMPLATE --ranks N [--global DIR] --name NAME --version V
//! ```
//! `TEMPLATE` is the CDs' `dir=` value (`{rank}`, `{rank/N}` expanded for each rank), `DIR`
//! their `global_dir=`. `list` prints one line per version (`v00000005 complete, rebuildable,
//! lost ranks 2, flushed`), reading headers only unless `--verify`. `verify` reads every byte
//! of the version (and of its flushed copy) and exits with 0 when it can be restored: complete
//! and intact or rebuildable, or flushed intact; 1 otherwise; 2 on a usage error.

use cd_persist::inspect::{self, Layout};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage:
  cd-persist list   --dir TEMPLATE --ranks N [--global DIR] [--name NAME] [--verify]
  cd-persist verify --dir TEMPLATE --ranks N [--global DIR] --name NAME --version V
  cd-persist --help";

/// What `cd-persist --help` prints (to standard output) after [`USAGE`].
const HELP: &str = "\
Lists the persisted versions of a job's persistent CDs with their health, and verifies one
version's CRC32Cs, from the files alone (run it while no job writes them).

TEMPLATE is the CDs' dir= value ({rank}, {rank/N} expanded for each rank), DIR their
global_dir=. list prints one line per version (v00000005 complete, rebuildable, lost ranks 2,
flushed), reading headers only unless --verify. verify reads every byte of the version (and of
its flushed copy) and exits with 0 when it can be restored: complete and intact or rebuildable,
or flushed intact; 1 otherwise; 2 on a usage error.
";

struct Args {
    command: String,
    layout: Layout,
    name: Option<String>,
    version: Option<u64>,
    verify: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let command = args.next().ok_or("no command given")?;
    if command != "list" && command != "verify" {
        return Err(format!("unknown command {command:?}"));
    }
    let (mut dir, mut ranks, mut global, mut name, mut version, mut verify) =
        (None, None, None, None, None, command == "verify");
    while let Some(flag) = args.next() {
        if flag == "--verify" {
            verify = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |what: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("{what}: {value:?} is not a number"))
        };
        match flag.as_str() {
            "--dir" => dir = Some(value.clone()),
            "--ranks" => ranks = Some(number("--ranks")? as usize),
            "--global" => global = Some(PathBuf::from(&value)),
            "--name" => name = Some(value.clone()),
            "--version" => version = Some(number("--version")?),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let layout = Layout {
        dir: dir.ok_or("--dir is required")?,
        ranks: ranks
            .filter(|&n| n > 0)
            .ok_or("--ranks N (N > 0) is required")?,
        global,
    };
    if command == "verify" && (name.is_none() || version.is_none()) {
        return Err("verify needs --name and --version".to_owned());
    }
    Ok(Args {
        command,
        layout,
        name,
        version,
        verify,
    })
}

fn main() -> ExitCode {
    let words: Vec<String> = std::env::args().skip(1).collect();
    if words.iter().any(|a| a == "-h" || a == "--help")
        || words.first().is_some_and(|a| a == "help")
    {
        print!("cd-persist: persisted versions of persistent CDs\n\n{USAGE}\n\n{HELP}");
        return ExitCode::SUCCESS;
    }
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("cd-persist: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let layout = &args.layout;
    if args.command == "list" {
        let names = args.name.map_or_else(|| layout.names(), |n| vec![n]);
        if names.is_empty() {
            println!("no persisted CDs under {}", layout.dir);
        }
        for name in names {
            println!("{name}:");
            for h in inspect::versions(layout, &name, args.verify) {
                println!("  {h}");
                for (rank, why) in &h.lost {
                    println!("    rank {rank}: {why}");
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    let (name, v) = (args.name.unwrap_or_default(), args.version.unwrap_or(0));
    let Some(h) = inspect::versions(layout, &name, true)
        .into_iter()
        .find(|h| h.version == v)
    else {
        println!("{name}: no version {v}");
        return ExitCode::FAILURE;
    };
    println!("{name}: {h}");
    for (rank, why) in &h.lost {
        println!("  rank {rank}: {why}");
    }
    let local = h.complete && h.rebuildable.is_ok();
    let flushed = h.flushed && {
        let checked = inspect::verify_flushed(layout, &name, v);
        match &checked {
            Ok(()) => println!("  flushed copy: intact"),
            Err(e) => println!("  flushed copy: {e}"),
        }
        checked.is_ok()
    };
    if local || flushed {
        println!("{name}: version {v} can be restored");
        ExitCode::SUCCESS
    } else {
        println!("{name}: version {v} cannot be restored");
        ExitCode::FAILURE
    }
}
