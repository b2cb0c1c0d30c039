//! cd-redset's parser of redundancy file names (`<prefix><rank>.<scheme>.grp_<g>_of_<n>.
//! mem_<r>_of_<s>.redset`), which a rebuild applies to whatever files it finds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = cd_redset::header::parse_redundancy_name(name);
    }
});
