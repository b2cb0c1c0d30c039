//! The typed `Domain` layer: borrowing mutably promotes exactly what is borrowed.

use crate::util::unique;
use cd_core::*;

#[test]
fn borrowing_mutably_promotes_and_advance_copies_only_that() {
    let mut cd = Domain::new(Some(&unique("typed"))).unwrap();
    let big = cd.protect(vec![0u32; 1 << 20]).unwrap();
    let small = cd.protect(vec![0u8; 9]).unwrap();
    assert_eq!(
        cd_info(cd.handle()).unwrap().stats.bytes_added,
        (4 << 20) + 9
    );
    // Nothing borrowed mutably: nothing to copy.
    assert_eq!(cd.advance().unwrap().bytes_copied, 0);
    cd.get_mut(small).unwrap().fill(7);
    assert_eq!(cd.advance().unwrap().bytes_copied, 9);
    cd.get_mut_range(big, 10..20).unwrap().fill(3);
    assert_eq!(cd.advance().unwrap().bytes_copied, 40);
    cd.get_mut(big).unwrap().fill(9);
    cd.get_mut(small).unwrap().fill(9);
    cd.restore().unwrap();
    assert_eq!(cd.get(small), [7; 9]);
    assert_eq!(
        &cd.get(big)[8..22],
        [[0; 2].as_slice(), &[3; 10], &[0; 2]].concat()
    );
    let taken = cd.take(small).unwrap();
    assert_eq!(taken, vec![7; 9]);
    assert_eq!(cd_info(cd.handle()).unwrap().ranges, 1);
    cd.commit().unwrap();
}

#[test]
fn structs_and_empty_buffers() {
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Debug)]
    #[repr(C)]
    struct Particle {
        pos: [f32; 3],
        id: u32,
    }
    let mut cd = Domain::new(None).unwrap();
    let p = cd
        .protect(vec![
            Particle {
                pos: [1.0; 3],
                id: 1
            };
            4
        ])
        .unwrap();
    let empty = cd.protect(Vec::<u64>::new()).unwrap();
    let (ps, e) = cd.get2_mut(p, empty).unwrap();
    ps[0].id = 99;
    assert!(e.is_empty());
    cd.restore().unwrap();
    assert_eq!(cd.get(p)[0].id, 1);
    drop(cd); // commits
}

#[test]
#[should_panic(expected = "belongs to another domain")]
fn a_key_of_another_domain_is_refused() {
    let mut a = Domain::new(None).unwrap();
    let b = Domain::new(None).unwrap();
    let k = a.protect(vec![1u8]).unwrap();
    let _ = b.get(k);
}
