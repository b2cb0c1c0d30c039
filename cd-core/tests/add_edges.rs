//! The edges of the one-range add's fast path (a range on new ground takes a path of its own,
//! see `add`): it must merge, refuse and store exactly as the general path does.

use crate::util::{unique, Mem};
use cd_core::*;

fn root() -> CdHandle {
    create_cd(None, None, LoggingMode::Disabled, Some(&unique("edges"))).unwrap()
}

/// Adds via copy; every `Mem` outlives the CDs of its test and nothing else touches it.
fn copy(cd: CdHandle, specs: &[AddrSpec]) -> Result<()> {
    // SAFETY: see above.
    unsafe { add_to_cd_via_copy(cd, specs) }
}

fn restore(cd: CdHandle) {
    // SAFETY: as in `copy`.
    unsafe { restore_cd(cd) }.unwrap();
}

/// The CD's entries as `(offset into mem, length, access, restoration)`.
fn entries(cd: CdHandle, mem: &Mem) -> Vec<(usize, usize, Access, Restoration)> {
    cd_entries(cd)
        .unwrap()
        .into_iter()
        .map(|e| (e.address - mem.addr(0), e.length, e.access, e.restoration))
        .collect()
}

use Access::{ReadOnly as RO, ReadWrite as RW};
use Restoration::Copy as C;

#[test]
fn adjacent_ranges_merge_before_after_and_between() {
    let mem = Mem::new(64);
    (0..64).for_each(|i| mem.set(i, i as u8));
    let cd = root();
    copy(cd, &[mem.rw(8, 8)]).unwrap();
    // ends where the entry starts: merges with the next one
    copy(cd, &[mem.rw(0, 8)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 16, RW, C)]);
    // starts where the entry ends: merges with the previous one
    copy(cd, &[mem.rw(16, 4)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 20, RW, C)]);
    // fills the gap between two entries: all three become one
    copy(cd, &[mem.rw(24, 8)]).unwrap();
    copy(cd, &[mem.rw(20, 4)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 32, RW, C)]);
    // the same label is needed to merge: READ_ONLY next to READ_WRITE stays apart
    copy(cd, &[mem.ro(32, 8)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 32, RW, C), (32, 8, RO, C)]);
    // every byte was saved once, from the memory as it was at its add
    (0..40).for_each(|i| mem.set(i, 0xEE));
    restore(cd);
    assert_eq!(
        mem.bytes(0, 40),
        (0..40).map(|i| i as u8).collect::<Vec<_>>()
    );
    commit_cd(cd).unwrap();
}

#[test]
fn inline_and_buffered_segments_restore_across_a_merged_entry() {
    // 16 bytes are held inline, 17 in a buffer: one entry over both restores both.
    let mem = Mem::new(64);
    mem.fill(0, 64, 1);
    let cd = root();
    copy(cd, &[mem.rw(0, 16)]).unwrap();
    mem.fill(0, 64, 2);
    copy(cd, &[mem.rw(16, 17)]).unwrap();
    mem.fill(0, 64, 3);
    copy(cd, &[mem.rw(33, 1)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 34, RW, C)]);
    mem.fill(0, 64, 9);
    restore(cd);
    let mut expected = vec![1; 16];
    expected.extend([2; 17]);
    expected.push(3);
    expected.push(9);
    assert_eq!(mem.bytes(0, 35), expected);
    assert_eq!(
        cd_saved_bytes(cd, mem.addr(14), 4).unwrap(),
        vec![1, 1, 2, 2]
    );
    commit_cd(cd).unwrap();
}

#[test]
fn overlap_with_another_mode_keeps_the_old_data_and_promotes() {
    let mem = Mem::new(32);
    mem.fill(0, 32, 1);
    let cd = root();
    copy(cd, &[mem.ro(0, 16)]).unwrap();
    mem.fill(0, 32, 2);
    // one range half over the READ_ONLY entry: that half is promoted, not copied again
    copy(cd, &[mem.rw(8, 16)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 8, RO, C), (8, 16, RW, C)]);
    // and back: READ_ONLY over the whole demotes, the labels merge again
    copy(cd, &[mem.ro(0, 24)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 24, RO, C)]);
    mem.fill(0, 32, 7);
    restore(cd);
    let mut expected = vec![1; 16];
    expected.extend([2; 8]);
    assert_eq!(mem.bytes(0, 24), expected);
    // the scope of covered ground cannot change, even through the one-range path
    let err = copy(cd, &[mem.rw(4, 8).with_scope(Scope::Constrained)]).unwrap_err();
    assert!(matches!(err, CdError::ScopeChange { .. }), "{err:?}");
    assert_eq!(entries(cd, &mem), vec![(0, 24, RO, C)]);
    commit_cd(cd).unwrap();
}

#[test]
fn bad_ranges_are_refused_and_change_nothing() {
    let mem = Mem::new(16);
    let cd = root();
    copy(cd, &[mem.rw(0, 8)]).unwrap();
    let zero = copy(cd, &[mem.rw(8, 0)]).unwrap_err();
    assert!(matches!(zero, CdError::ZeroLength { .. }), "{zero:?}");
    let null = copy(cd, &[AddrSpec::new(0, 8, RW, Scope::Global)]).unwrap_err();
    assert!(
        matches!(null, CdError::NullAddress { length: 8 }),
        "{null:?}"
    );
    // the last byte of the address space: address + length wraps around
    let wrap = copy(cd, &[AddrSpec::new(usize::MAX - 3, 4, RW, Scope::Global)]).unwrap_err();
    assert!(
        matches!(wrap, CdError::AddressOverflow { length: 4, .. }),
        "{wrap:?}"
    );
    let wide = copy(
        cd,
        &[AddrSpec::new(mem.addr(8), usize::MAX, RO, Scope::Global)],
    );
    assert!(matches!(wide, Err(CdError::AddressOverflow { .. })));
    // the same checks on a list of two refuse the whole list
    let listed = copy(cd, &[mem.rw(8, 4), mem.rw(12, 0)]).unwrap_err();
    assert!(matches!(listed, CdError::ZeroLength { .. }), "{listed:?}");
    assert_eq!(entries(cd, &mem), vec![(0, 8, RW, C)]);
    commit_cd(cd).unwrap();
}

#[test]
fn one_range_parent_and_regen_adds_merge_by_their_own_labels() {
    let mem = Mem::new(32);
    mem.fill(0, 32, 5);
    let parent = root();
    copy(parent, &[mem.rw(0, 32)]).unwrap();
    let child = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
    add_to_cd_via_parent(child, &[mem.ro(0, 8)]).unwrap();
    add_to_cd_via_parent(child, &[mem.ro(8, 8)]).unwrap();
    let regen = Regen::new(|_| 0);
    add_to_cd_via_regen(child, &[mem.ro(16, 8)], regen.clone()).unwrap();
    add_to_cd_via_regen(child, &[mem.ro(24, 8)], regen).unwrap();
    let parent_entries = vec![(0, 16, RO, Restoration::Parent)];
    let regen_entries = vec![(16, 16, RO, Restoration::Regen)];
    assert_eq!(
        entries(child, &mem),
        [parent_entries, regen_entries].concat()
    );
    // a READ_WRITE regen range on new ground is refused before anything changes
    let other = Mem::new(8);
    let err = add_to_cd_via_regen(child, &[other.rw(0, 8)], Regen::new(|_| 0)).unwrap_err();
    assert!(matches!(err, CdError::ReadWriteRegen { .. }), "{err:?}");
    // a parent range no ancestor holds is refused
    let err = add_to_cd_via_parent(child, &[other.ro(0, 8)]).unwrap_err();
    assert!(matches!(err, CdError::NotInAncestor { .. }), "{err:?}");
    assert_eq!(cd_entries(child).unwrap().len(), 2);
    commit_cd(child).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn many_single_adds_agree_with_one_list_add() {
    // The one-range path, range by range in a scattered order, leaves the same entries as the
    // general path given all ranges at once.
    let mem = Mem::new(4096);
    (0..4096).for_each(|i| mem.set(i, (i * 7) as u8));
    let ranges: Vec<(usize, usize, Access)> = (0..200)
        .map(|k| {
            let at = (k * 37) % 200 * 20;
            let len = 1 + (k * 13) % 20;
            (at, len, if k % 3 == 0 { RO } else { RW })
        })
        .collect();
    let one_by_one = root();
    for &(at, len, access) in &ranges {
        copy(one_by_one, &[mem.spec(at, len, access)]).unwrap();
    }
    let at_once = root();
    let mut sorted = ranges.clone();
    sorted.sort_by_key(|&(at, _, _)| at);
    let specs: Vec<AddrSpec> = sorted
        .iter()
        .map(|&(at, len, access)| mem.spec(at, len, access))
        .collect();
    copy(at_once, &specs).unwrap();
    assert_eq!(entries(one_by_one, &mem), entries(at_once, &mem));
    mem.fill(0, 4096, 0);
    restore(one_by_one);
    let restored = mem.bytes(0, 4096);
    mem.fill(0, 4096, 0);
    restore(at_once);
    assert_eq!(restored, mem.bytes(0, 4096));
    assert!(sorted
        .iter()
        .all(|&(at, len, _)| (at..at + len).all(|i| restored[i] == (i * 7) as u8)));
    commit_cd(one_by_one).unwrap();
    commit_cd(at_once).unwrap();
}

#[test]
fn inline_entries_show_merged_and_keep_their_bytes_through_every_operation() {
    // Ranges of up to 16 bytes keep their bytes in the entry, which then merges with no
    // neighbour inside the CD; users still see merged entries, and every operation (partial
    // promotion, advance, delete, commit, restore) keeps the right bytes.
    let mem = Mem::new(64);
    (0..64).for_each(|i| mem.set(i, i as u8));
    let cd = root();
    for at in [8, 0, 16, 24] {
        copy(cd, &[mem.ro(at, 8)]).unwrap();
    }
    copy(cd, &[mem.ro(32, 20)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 52, RO, C)]);
    let info = cd_info(cd).unwrap();
    assert_eq!((info.ranges, info.stored_bytes), (1, 52));
    let saved = cd_saved_bytes(cd, mem.addr(4), 40).unwrap();
    assert_eq!(saved, (4..44).map(|i| i as u8).collect::<Vec<_>>());

    // promote the middle of one inline entry, then advance: only it is copied again
    copy(cd, &[mem.rw(10, 4)]).unwrap();
    assert_eq!(
        entries(cd, &mem),
        vec![(0, 10, RO, C), (10, 4, RW, C), (14, 38, RO, C)]
    );
    mem.fill(0, 64, 0xAA);
    // SAFETY: as in `copy`.
    let report = unsafe { advance_cd_point_in_time(cd) }.unwrap();
    assert_eq!(report.bytes_copied, 4);
    assert_eq!(entries(cd, &mem), vec![(0, 52, RO, C)]);
    let mut expected: Vec<u8> = (0..52).map(|i| i as u8).collect();
    expected[10..14].fill(0xAA);
    assert_eq!(cd_saved_bytes(cd, mem.addr(0), 52).unwrap(), expected);

    // delete part of an inline entry: the rest keeps its bytes
    delete_from_cd(cd, &[mem.ro(18, 4)]).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 18, RO, C), (22, 30, RO, C)]);
    assert_eq!(cd_info(cd).unwrap().stored_bytes, 48);
    mem.fill(0, 64, 0);
    restore(cd);
    let mut restored = expected.clone();
    restored[18..22].fill(0);
    assert_eq!(mem.bytes(0, 52), restored);

    // commit: the inline bytes move up with their entries into the gaps of the parent
    mem.fill(0, 64, 0x55);
    let child = create_cd(Some(cd.into()), None, LoggingMode::Inherit, None).unwrap();
    copy(child, &[mem.ro(18, 4)]).unwrap();
    copy(child, &[mem.ro(52, 4)]).unwrap();
    copy(child, &[mem.ro(4, 4)]).unwrap();
    commit_cd(child).unwrap();
    assert_eq!(entries(cd, &mem), vec![(0, 56, RO, C)]);
    mem.fill(0, 64, 0);
    restore(cd);
    restored[18..22].fill(0x55);
    restored.extend([0x55; 4]);
    assert_eq!(mem.bytes(0, 56), restored);
    commit_cd(cd).unwrap();
}
