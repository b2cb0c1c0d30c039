//! The checked-in header is exactly what the pinned cbindgen generates from the source, and the
//! result codes of the header and of the Fortran module are the ones the library returns.
//!
//! The codes have one source, the library's table (`cd::error::known_codes`: cd-core's
//! `CdError::CODES` and cd-ffi's own codes). cbindgen does not expand the macro that writes
//! it, so this test writes the codes' `#define` block into the header (after cbindgen's
//! `after_includes`) and the `parameter` block between the markers of
//! `fortran/containment_domains.f90`. `CD_UPDATE_HEADER=1` rewrites both files; otherwise a
//! stale file fails the test.

use crate::util::workspace;
use std::fmt::Write;
use std::path::Path;

/// The first and last line of the generated block in the Fortran module.
const FORTRAN_BEGIN: &str =
    "  ! BEGIN result codes: generated from the library's table by cd-ffi/tests/header.rs";
const FORTRAN_END: &str = "  ! END result codes";

/// `/** description */` and `#define NAME code` for every code, in table order.
fn c_code_block() -> String {
    let mut block = String::from(
        "/* Result codes: generated from the library's code table (cd-core's CdError::CODES and\n \
         * cd-ffi's own codes) by cd-ffi/tests/header.rs. */\n",
    );
    for c in cd::error::known_codes() {
        let description = c.description.to_str().expect("UTF-8 description");
        assert!(
            !description.contains("*/"),
            "{description:?} closes a C comment"
        );
        let name = c.name.to_str().expect("ASCII name");
        let value = if c.code < 0 {
            format!("({})", c.code)
        } else {
            c.code.to_string()
        };
        write!(block, "\n/** {description} */\n#define {name} {value}\n").unwrap();
    }
    block
}

/// The Fortran module with its code block regenerated between the markers.
fn fortran_with_codes(module: &str) -> String {
    let (head, rest) = module
        .split_once(&format!("{FORTRAN_BEGIN}\n"))
        .expect("the Fortran module has the BEGIN result codes marker");
    let (_, tail) = rest
        .split_once(&format!("{FORTRAN_END}\n"))
        .expect("the Fortran module has the END result codes marker");
    let mut block = format!("{FORTRAN_BEGIN}\n");
    for c in cd::error::known_codes() {
        let name = c.name.to_str().expect("ASCII name");
        writeln!(block, "  integer(c_int), parameter :: {name} = {}", c.code).unwrap();
    }
    format!("{head}{block}{FORTRAN_END}\n{tail}")
}

/// Compares `generated` with the checked-in `path`: rewrites it under `CD_UPDATE_HEADER`, else
/// fails (writing the expected text next to it as `.new`) when they differ.
fn check_or_update(path: &Path, generated: &[u8]) {
    if std::env::var_os("CD_UPDATE_HEADER").is_some() {
        std::fs::write(path, generated).expect("rewrite the checked-in file");
        return;
    }
    let checked_in = std::fs::read(path).unwrap_or_default();
    if checked_in != generated {
        let mut new = path.as_os_str().to_owned();
        new.push(".new");
        std::fs::write(&new, generated).expect("write the .new file");
        panic!(
            "{} differs from what the source generates (written to {}).\n\
             If the API change is intended, run\n    \
             CD_UPDATE_HEADER=1 cargo test -p cd-ffi --test tests header\n\
             and commit the result (and update fortran/containment_domains.f90's interfaces to \
             match).",
            path.display(),
            new.to_string_lossy()
        );
    }
}

#[test]
fn checked_in_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cd-ffi/cbindgen.toml parses");
    let after = config.after_includes.take().unwrap_or_default();
    config.after_includes = Some(format!("{after}\n\n{}", c_code_block()));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates cd.h");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    check_or_update(&crate_dir.join("include/cd.h"), &generated);
}

#[test]
fn fortran_result_codes_are_current() {
    let path = workspace().join("fortran/containment_domains.f90");
    let module = std::fs::read_to_string(&path).expect("read the Fortran module");
    check_or_update(&path, fortran_with_codes(&module).as_bytes());
}
