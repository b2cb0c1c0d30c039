//! The memory the runtime holds (stores, pool, logs, peak) and the cap `CD_MEMORY_LIMIT` puts
//! on it: an add or advance past the cap fails with `CdError::MemoryLimit`, changes nothing,
//! and the CD stays usable.
//!
//! The counters and the cap are process-wide, so these tests run in a process of their own,
//! one at a time (`SERIAL`).

use cd_core::*;
use std::sync::Mutex;

#[path = "support/block.rs"]
mod block;
use block::Block;

static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the tests' turn, with no cap left over from a test that failed.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    let turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    set_memory_limit(None);
    turn
}

const MIB: usize = 1 << 20;

/// A cap that leaves `room` bytes beyond what stores and logs hold now (the pool gives way).
fn cap_with_room(room: usize) -> u64 {
    let held = memory_held();
    held.stores + held.logs + room as u64
}

#[test]
fn an_add_past_the_limit_fails_atomically_and_the_cd_stays_usable() {
    let _serial = serial();
    let small = Block::new(64 << 10, 1);
    let big = Block::new(6 * MIB, 2);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some("limit-add")).unwrap();
    // SAFETY: the blocks outlive the CD; nothing else touches them.
    unsafe { add_to_cd_via_copy(cd, &[small.rw()]).unwrap() };
    let before = (cd_entries(cd).unwrap(), cd_info(cd).unwrap().stored_bytes);
    let limit = cap_with_room(MIB);
    set_memory_limit(Some(limit));
    // SAFETY: as above.
    let err = unsafe { add_to_cd_via_copy(cd, &[big.rw()]) }.unwrap_err();
    match &err {
        CdError::MemoryLimit {
            limit: l, asked, ..
        } => {
            assert_eq!(*l, limit);
            assert!(*asked >= big.len() as u64, "asked {asked}");
        }
        other => panic!("expected MemoryLimit, got {other}"),
    }
    assert_eq!(err.code(), 65);
    let message = err.to_string();
    assert!(
        message.contains("CD_MEMORY_LIMIT") && message.contains(&limit.to_string()),
        "{message}"
    );
    // Nothing changed, and the CD still works under the cap.
    assert_eq!(
        (cd_entries(cd).unwrap(), cd_info(cd).unwrap().stored_bytes),
        before
    );
    small.fill(9);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(small.all(1));
    small.fill(3);
    // SAFETY: as above.
    assert_eq!(
        unsafe { advance_cd_point_in_time(cd) }
            .unwrap()
            .bytes_copied,
        small.len()
    );
    // Lifted, the same add goes through.
    set_memory_limit(None);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[big.rw()]).unwrap() };
    small.fill(0);
    big.fill(0);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(small.all(3) && big.all(2));
    commit_cd(cd).unwrap();
}

#[test]
fn an_advance_past_the_limit_fails_atomically() {
    let _serial = serial();
    let data = Block::new(12 * MIB + 4096, 3);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some("limit-advance")).unwrap();
    // SAFETY: the block outlives the CD; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd, &[data.rw()]).unwrap() };
    let entries = cd_entries(cd).unwrap();
    data.fill(4);
    set_memory_limit(Some(cap_with_room(MIB)));
    // SAFETY: as above.
    let err = unsafe { advance_cd_point_in_time(cd) }.unwrap_err();
    assert!(matches!(err, CdError::MemoryLimit { .. }), "{err}");
    assert_eq!(cd_entries(cd).unwrap(), entries, "still READ_WRITE");
    assert_eq!(cd_info(cd).unwrap().stats.advances, 0);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(data.all(3), "the old point in time restores");
    data.fill(4);
    set_memory_limit(None);
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    data.fill(0);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(data.all(4), "the retried advance took");
    commit_cd(cd).unwrap();
}

#[test]
fn stats_report_stores_pool_logs_and_peak() {
    let _serial = serial();
    let data = Block::new(3 * MIB, 5);
    let before = global_stats();
    let cd = create_cd(None, None, LoggingMode::Enabled, Some("memory-stats")).unwrap();
    // SAFETY: the block outlives the CD; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd, &[data.rw()]).unwrap() };
    add_mpi_log_to_cd(cd, vec![7u8; 1000].into()).unwrap();
    let during = global_stats();
    // A mapped buffer: 3 MiB rounded up to huge pages (fresh, or from the pool).
    assert_eq!(during.store_bytes - before.store_bytes, 4 * MIB as u64);
    assert_eq!(during.log_bytes - before.log_bytes, 1000);
    let held = memory_held();
    assert!(during.peak_bytes >= during.store_bytes + during.pool_bytes + during.log_bytes);
    assert!(held.peak >= during.peak_bytes);
    // Per CD the memory fields are zero; its own bytes are in `cd_info`.
    let info = cd_info(cd).unwrap();
    assert_eq!((info.stats.store_bytes, info.stored_bytes), (0, 3 * MIB));
    commit_cd(cd).unwrap();
    let after = global_stats();
    assert_eq!(after.store_bytes, before.store_bytes, "the store was freed");
    assert_eq!(after.log_bytes, before.log_bytes, "the log was freed");
    assert_eq!(
        after.pool_bytes - during.pool_bytes,
        4 * MIB as u64,
        "the mapping went to the pool (budget {} bytes)",
        pool_budget()
    );
    assert!(after.to_string().contains("memory held:"));
}
