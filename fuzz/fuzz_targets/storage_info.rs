//! `storage_info` strings (`key=value;...`), which applications and the `CD_STORAGE_INFO`
//! environment variable pass to `create_cd`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = cd_core::StorageInfo::parse(text);
    }
});
