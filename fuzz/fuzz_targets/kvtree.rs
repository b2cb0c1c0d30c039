//! cd-redset's kvtree, the format of every redundancy header and descriptor read back after a
//! restart: packed trees and whole header files from arbitrary bytes. A tree that unpacks
//! packs again to bytes that unpack to the same tree.
#![no_main]
use cd_redset::kvtree::KvTree;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((tree, used)) = KvTree::unpack(data) {
        assert!(used <= data.len());
        let mut again = Vec::new();
        tree.pack(&mut again);
        let (back, n) = KvTree::unpack(&again).expect("a packed tree unpacks");
        assert_eq!(n, again.len());
        assert!(back == tree, "pack/unpack round trip changed the tree");
    }
    let _ = KvTree::read_from(&mut &data[..]);
});
