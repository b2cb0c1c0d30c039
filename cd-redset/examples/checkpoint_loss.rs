//! Protect a checkpoint across ranks, lose one node's files, rebuild them.
//!
//! ```text
//! cargo build -p cd-redset --example checkpoint_loss
//! CD_REDSET_FAILURE_GROUP='node{rank}' mpirun -np 4 \
//!     target/debug/examples/checkpoint_loss /dev/shm/ckpt [xor|rs2|partner1]
//! ```
//!
//! Every rank writes two checkpoint files of its own; `apply` adds redundancy across the ranks
//! (XOR by default: a set of all ranks, one parity chunk each). Then the last rank "loses its
//! node": its checkpoint files and its redundancy files are deleted. `recover`, as a restarted
//! job calls it, rebuilds them from the survivors, with their size, mode and times; every rank
//! checks its bytes, and `unapply` removes the redundancy data. The failure groups come from
//! `CD_REDSET_FAILURE_GROUP` (one simulated node per rank above); without it, ranks on one
//! host share a failure group and XOR cannot form a set.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cd_redset::{Options, Redset, Scheme};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// This rank's checkpoint: a binary state of a size unique to the rank, and a small text file.
fn checkpoint(dir: &Path, rank: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let state: Vec<u8> = (0..(1 << 20) + 4097 * rank)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13 ^ rank) as u8)
        .collect();
    let meta = format!("rank {rank}\nstep 1200\nstate bytes {}\n", state.len()).into_bytes();
    vec![
        (dir.join(format!("state.{rank}.bin")), state),
        (dir.join(format!("meta.{rank}.txt")), meta),
    ]
}

fn scheme(name: &str) -> Option<Scheme> {
    match name {
        "xor" => Some(Scheme::Xor),
        "rs2" => Some(Scheme::Rs { checksums: 2 }),
        "partner1" => Some(Scheme::Partner { replicas: 1 }),
        _ => None,
    }
}

/// Whether `ok` holds on every rank. Called before each collective step, so that a local
/// failure on one rank (a file it could not write) stops every rank there, instead of leaving
/// the others waiting in a collective the failed rank never enters.
fn on_every_rank(world: &SimpleCommunicator, ok: bool) -> bool {
    let mut all = 0i32;
    world.all_reduce_into(&i32::from(ok), &mut all, SystemOperation::min());
    all == 1
}

/// Turns a local outcome into one every rank agrees on.
fn agreed(world: &SimpleCommunicator, local: std::io::Result<()>) -> Result<(), String> {
    let ok = local.is_ok();
    match (on_every_rank(world, ok), local) {
        (true, _) => Ok(()),
        (false, Err(e)) => Err(e.to_string()),
        (false, Ok(())) => Err("another rank failed".into()),
    }
}

fn run(world: &SimpleCommunicator) -> Result<bool, Box<dyn std::error::Error>> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: checkpoint_loss DIR [xor|rs2|partner1]")?,
    );
    let name = args.next().unwrap_or_else(|| "xor".into());
    let scheme = scheme(&name).ok_or(format!("unknown scheme {name}"))?;
    let files = checkpoint(&dir, rank);
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        files
            .iter()
            .try_for_each(|(p, bytes)| std::fs::write(p, bytes))
    });
    agreed(world, written)?;
    let paths: Vec<&PathBuf> = files.iter().map(|(p, _)| p).collect();
    let prefix = format!("{}/ckpt.", dir.display());

    // protect: one collective call after the checkpoint is written (cd-redset's calls fail on
    // every rank together, so `?` on them keeps the ranks in step)
    let rs = Redset::create(world, scheme, size, None, Options::default())?;
    rs.apply(&paths, &prefix)?;

    // the last rank's node fails: its checkpoint and redundancy files are gone
    let lost = if rank == size - 1 {
        let redundancy = rs.redundancy_files(&prefix);
        paths
            .iter()
            .map(|p| p.as_path())
            .chain(redundancy.iter().map(PathBuf::as_path))
            .try_for_each(std::fs::remove_file)
    } else {
        Ok(())
    };
    drop(rs);
    agreed(world, lost)?;

    // restart: recover re-creates the descriptor and rebuilds what is missing
    let (rs, report) = Redset::recover(world, &prefix, Options::default())?;
    let intact = files
        .iter()
        .all(|(p, bytes)| std::fs::read(p).is_ok_and(|b| &b == bytes));
    let line = if report.rebuilt {
        format!(
            "rank {rank}: rebuilt {} file(s) ({})",
            report.files.len(),
            report.reason
        )
    } else {
        format!(
            "rank {rank}: files intact, helped rebuild {:?}",
            report.set_rebuilt
        )
    };
    println!(
        "{line}; checkpoint bytes {}",
        if intact { "identical" } else { "DIFFER" }
    );
    rs.unapply(&prefix)?;
    for p in &paths {
        std::fs::remove_file(p)?;
    }
    Ok(intact)
}

fn main() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        eprintln!("checkpoint_loss: MPI is already initialized");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let ok = match run(&world) {
        Ok(intact) => intact,
        Err(e) => {
            eprintln!("rank {}: {e}", world.rank());
            false
        }
    };
    if on_every_rank(&world, ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
