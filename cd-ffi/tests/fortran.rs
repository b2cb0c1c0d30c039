//! The Fortran programs of `tests/fortran/`, compiled with gfortran (`-Wall -Werror
//! -std=f2008`) against the installed `Containment_Domains` module and `libcd.so`, and run;
//! plus a check that the module's constants equal the header's.

use crate::util::{compile_fortran, run, workspace};
use std::collections::BTreeMap;

fn fortran_program(name: &str) {
    let source = workspace().join(format!("tests/fortran/{name}.f90"));
    let exe = compile_fortran(&source, &format!("f-{name}"));
    let out = run(&exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{name}: ok")),
        "{name} did not report success:\n{stdout}"
    );
}

#[test]
fn loop_with_add_advance_restore() {
    fortran_program("loop");
}

#[test]
fn regen_callback_in_fortran() {
    fortran_program("regen");
}

#[test]
fn error_paths() {
    fortran_program("errors");
}

/// `NAME = value` pairs: `#define NAME int` and `NAME = int,` enum constants of cd.h.
fn header_constants() -> BTreeMap<String, i64> {
    let header = std::fs::read_to_string(workspace().join("cd-ffi/include/cd.h")).unwrap();
    let mut map = BTreeMap::new();
    for line in header.lines() {
        let line = line.trim();
        let pair = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split_once(' ')
        } else {
            line.strip_suffix(',').and_then(|l| l.split_once(" = "))
        };
        if let Some((name, value)) = pair {
            let value = value.trim().trim_start_matches('(').trim_end_matches(')');
            if let Ok(v) = value.parse::<i64>() {
                map.insert(name.trim().to_owned(), v);
            }
        }
    }
    map
}

#[test]
fn module_constants_equal_the_header() {
    let module =
        std::fs::read_to_string(workspace().join("fortran/containment_domains.f90")).unwrap();
    let header = header_constants();
    let mut fortran = BTreeMap::new();
    for line in module.lines() {
        if let Some((_, rest)) = line.split_once("parameter ::") {
            let (name, value) = rest.split_once('=').expect("NAME = value");
            let value: i64 = value.trim().parse().expect("integer parameter");
            fortran.insert(name.trim().to_owned(), value);
        }
    }
    for (name, value) in &fortran {
        assert_eq!(
            header.get(name),
            Some(value),
            "Fortran parameter {name} = {value} differs from cd.h"
        );
    }
    for (name, value) in &header {
        if name.starts_with("CD_ERR_")
            || name.starts_with("COMM_LOGGING_")
            || name.starts_with("MPI_LOGGING_")
            || [
                "SUCCESS",
                "FAILURE",
                "READ_ONLY",
                "READ_WRITE",
                "GLOBAL",
                "CONSTRAINED",
            ]
            .contains(&name.as_str())
        {
            assert_eq!(
                fortran.get(name),
                Some(value),
                "cd.h's {name} = {value} is missing from the Fortran module"
            );
        }
    }
    assert!(fortran.len() > 50);
}
