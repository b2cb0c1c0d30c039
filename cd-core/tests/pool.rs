//! The pool of store mappings above a tiny budget: an advance loop over CDs of different sizes,
//! all larger than the budget, reuses its buffers (no fresh mapping after the first round);
//! the spares kept past the budget go when their CDs end; and `CD_MEMORY_LIMIT` evicts spares
//! first, then the mappings within the budget, oldest first.
//!
//! The budget is read once from `CD_POOL_BYTES`, so this is a process of its own; the pool,
//! the counters and the cap are process-wide, so the tests run one at a time (`serial`).

use cd_core::*;
use std::sync::{Mutex, MutexGuard, OnceLock};

#[path = "support/block.rs"]
mod block;
use block::Block;

const MIB: usize = 1 << 20;
/// The pool's budget in this process.
const BUDGET: usize = 6 * MIB;

/// Takes the tests' turn with the budget set and no cap left over from a test that failed.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    static BUDGET_SET: OnceLock<()> = OnceLock::new();
    let turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    BUDGET_SET.get_or_init(|| {
        // Before the first use of the pool, which reads it once; no other thread runs yet
        // (every test takes its turn first).
        std::env::set_var("CD_POOL_BYTES", BUDGET.to_string());
        assert_eq!(pool_budget(), BUDGET as u64);
    });
    set_memory_limit(None);
    turn
}

/// A root CD holding `block` by copy.
fn cd_holding(block: &Block, name: &str) -> CdHandle {
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(name)).unwrap();
    // SAFETY: every block outlives its CD (each test commits its CDs before its blocks go);
    // nothing else touches it.
    unsafe { add_to_cd_via_copy(cd, &[block.rw()]).unwrap() };
    cd
}

/// Advances `cd`, whose last advance demoted `block` to READ_ONLY: re-adding it READ_WRITE
/// promotes it (no copy), and the advance copies it whole into a new buffer.
fn advance(cd: CdHandle, block: &Block) {
    advance_range(cd, block.rw());
}

/// `advance` for the range `spec` of a block (which a thread may take: a plain number).
fn advance_range(cd: CdHandle, spec: AddrSpec) {
    // SAFETY: see `cd_holding`.
    unsafe {
        add_to_cd_via_copy(cd, &[spec]).unwrap();
        assert_eq!(
            advance_cd_point_in_time(cd).unwrap().bytes_copied,
            spec.length
        );
    }
}

/// Unmaps everything pooled: a cap with no room for a buffer that no pooled mapping fits
/// evicts the whole pool before it refuses the add.
fn empty_pool() {
    let held = memory_held();
    set_memory_limit(Some(held.stores + held.logs));
    let probe = Block::new(100 * MIB, 0);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some("empty-pool")).unwrap();
    // SAFETY: the block outlives the CD.
    let err = unsafe { add_to_cd_via_copy(cd, &[probe.rw()]) }.unwrap_err();
    assert!(matches!(err, CdError::MemoryLimit { .. }), "{err}");
    commit_cd(cd).unwrap();
    set_memory_limit(None);
    assert_eq!(memory_held().pool, 0);
}

#[test]
fn an_advance_loop_over_cds_of_different_sizes_reuses_its_buffers() {
    let _turn = serial();
    let before = memory_held();
    let sizes = [16 * MIB, 64 * MIB, 10 * MIB + 4096];
    let blocks: Vec<Block> = sizes.iter().map(|&len| Block::new(len, 1)).collect();
    let cds: Vec<CdHandle> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| cd_holding(b, &format!("loop-{i}")))
        .collect();
    let live: u64 = sizes
        .iter()
        .map(|&len| len.next_multiple_of(2 * MIB) as u64)
        .sum();
    let mut after_first_rounds = 0;
    for round in 0..24u8 {
        for (cd, block) in cds.iter().zip(&blocks) {
            block.fill(round);
            advance(*cd, block);
        }
        let held = memory_held();
        assert_eq!(
            held.stores - before.stores,
            live,
            "one buffer per CD between advances"
        );
        assert!(
            held.pool <= BUDGET as u64 + live,
            "the pool holds at most its budget and one spare per live buffer: {held:?}"
        );
        if round == 1 {
            after_first_rounds = held.mappings_made;
        }
    }
    assert_eq!(
        memory_held().mappings_made,
        after_first_rounds,
        "no fresh mapping after the first rounds (budget {BUDGET} bytes)"
    );
    for (cd, block) in cds.iter().zip(&blocks) {
        block.fill(99);
        // SAFETY: see `cd_holding`.
        unsafe { restore_cd(*cd).unwrap() };
        assert!(
            block.sampled(23),
            "a reused buffer holds the last advance's bytes"
        );
    }
    // The CDs end: their buffers go, and so do the spares kept for them.
    for cd in cds {
        commit_cd(cd).unwrap();
    }
    let after = memory_held();
    assert_eq!(after.stores, before.stores);
    assert!(
        after.pool <= BUDGET as u64,
        "no spare outlives the buffers it was kept for: {after:?}"
    );
}

#[test]
fn equal_cds_advancing_on_threads_each_get_a_spare() {
    let _turn = serial();
    let before = memory_held();
    let blocks = [Block::new(24 * MIB, 1), Block::new(24 * MIB, 2)];
    let cds = [
        cd_holding(&blocks[0], "thread-0"),
        cd_holding(&blocks[1], "thread-1"),
    ];
    let made = memory_held().mappings_made;
    std::thread::scope(|scope| {
        for (cd, block) in cds.iter().zip(&blocks) {
            let (cd, spec) = (*cd, block.rw());
            scope.spawn(move || {
                for _ in 0..40 {
                    advance_range(cd, spec);
                }
            });
        }
    });
    // A spare per live buffer of the class: once both CDs advanced at the same moment (or
    // never), no advance maps a fresh buffer again, so two at most over the whole loop.
    let fresh = memory_held().mappings_made - made;
    assert!(
        fresh <= 2,
        "{fresh} fresh mappings for 80 advances of two CDs"
    );
    assert!(memory_held().pool <= (BUDGET + 2 * 24 * MIB) as u64);
    for cd in cds {
        commit_cd(cd).unwrap();
    }
    let after = memory_held();
    assert_eq!(after.stores, before.stores);
    assert!(after.pool <= BUDGET as u64, "{after:?}");
}

#[test]
fn spares_go_with_their_cd_while_others_stay() {
    let _turn = serial();
    empty_pool();
    let (small, large) = (Block::new(16 * MIB, 1), Block::new(40 * MIB, 2));
    let (a, b) = (cd_holding(&small, "spare-a"), cd_holding(&large, "spare-b"));
    advance(a, &small);
    advance(b, &large);
    // Past the budget: one spare per CD, each the size of its buffer.
    assert_eq!(memory_held().pool, 56 * MIB as u64);
    commit_cd(b).unwrap();
    assert_eq!(
        memory_held().pool,
        16 * MIB as u64,
        "b's buffer and its spare are unmapped; a's spare stays"
    );
    let made = memory_held().mappings_made;
    advance(a, &small);
    assert_eq!(
        memory_held().mappings_made,
        made,
        "a's advance took its spare"
    );
    commit_cd(a).unwrap();
    assert_eq!(
        memory_held().pool,
        0,
        "buffers larger than the budget all went"
    );
}

#[test]
fn the_memory_limit_evicts_spares_first_then_the_oldest_pooled_mapping() {
    let _turn = serial();
    empty_pool();
    // Within the budget: a 4 MiB mapping, then a 2 MiB one (6 MiB, the whole budget).
    let (four, two) = (Block::new(4 * MIB, 4), Block::new(2 * MIB, 2));
    let (k4, k2) = (cd_holding(&four, "kept-4"), cd_holding(&two, "kept-2"));
    commit_cd(k4).unwrap();
    commit_cd(k2).unwrap();
    assert_eq!(memory_held().pool, 6 * MIB as u64);
    // Past the budget: a spare for s's next advance.
    let spare = Block::new(16 * MIB, 1);
    let s = cd_holding(&spare, "spare");
    advance(s, &spare);
    assert_eq!(memory_held().pool, 22 * MIB as u64);
    // The 2 MiB mapping is lent and given back: now the newest pooled mapping, after the spare.
    commit_cd(cd_holding(&two, "kept-2-again")).unwrap();
    assert_eq!(memory_held().pool, 22 * MIB as u64);

    // An 8 MiB buffer (no pooled mapping fits it) 2 MiB short of room: the spare goes, not
    // the newest (2 MiB) nor the oldest (4 MiB) mapping within the budget.
    let eight = Block::new(8 * MIB, 8);
    let held = memory_held();
    set_memory_limit(Some(held.stores + held.pool + held.logs + 6 * MIB as u64));
    let first = cd_holding(&eight, "evicts-spare");
    assert_eq!(
        memory_held().pool,
        6 * MIB as u64,
        "the spare was evicted first"
    );

    // Again 2 MiB short: the oldest mapping within the budget goes (4 MiB), not the newest.
    let held = memory_held();
    set_memory_limit(Some(held.stores + held.pool + held.logs + 6 * MIB as u64));
    let second = cd_holding(&eight, "evicts-oldest");
    assert_eq!(
        memory_held().pool,
        2 * MIB as u64,
        "the oldest was evicted next"
    );
    set_memory_limit(None);

    // The cap took nothing from the CDs: each restores its own bytes.
    spare.fill(0);
    eight.fill(0);
    // SAFETY: see `cd_holding`.
    unsafe { restore_cd(s).unwrap() };
    assert!(spare.sampled(1));
    // SAFETY: as above.
    unsafe { restore_cd(second).unwrap() };
    assert!(eight.sampled(8));
    for cd in [s, first, second] {
        commit_cd(cd).unwrap();
    }
    assert!(memory_held().pool <= BUDGET as u64);
}
