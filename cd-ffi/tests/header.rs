//! The checked-in header is exactly what the pinned cbindgen generates from the source.

use std::path::Path;

#[test]
fn checked_in_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cd-ffi/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates cd.h");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = crate_dir.join("include/cd.h");
    if std::env::var_os("CD_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/cd.h");
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    if checked_in != generated {
        let new = crate_dir.join("include/cd.h.new");
        std::fs::write(&new, &generated).expect("write include/cd.h.new");
        panic!(
            "cd-ffi/include/cd.h differs from what the source generates (written to {}).\n\
             If the API change is intended, run\n    \
             CD_UPDATE_HEADER=1 cargo test -p cd-ffi --test tests header\n\
             and commit the header (and update fortran/containment_domains.f90 to match).",
            new.display()
        );
    }
}
