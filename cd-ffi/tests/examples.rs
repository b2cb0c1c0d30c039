//! `examples/c/simple_gpu.c` and `examples/fortran/simple_gpu.f90`, the spec's Simple API Use
//! Example with a simulated GPU: run with a high fault rate, they must meet faults and end
//! with the result of a fault-free run (each checks it and exits nonzero otherwise).

use crate::util::{compile_c, compile_fortran, run, workspace};

fn faults_met(stdout: &str) -> u64 {
    stdout
        .split_whitespace()
        .zip(stdout.split_whitespace().skip(1))
        .find(|(_, next)| *next == "faults")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no fault count in:\n{stdout}"))
}

#[test]
fn c_example_recovers_from_gpu_faults() {
    let exe = compile_c(
        &workspace().join("examples/c/simple_gpu.c"),
        "example-simple_gpu",
        false,
    );
    let out = run(&exe, &[("CD_FAULT_RATE", "0.1"), ("CD_SEED", "7")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(faults_met(&stdout) > 0, "{stdout}");
    assert!(stdout.contains(": equal"), "{stdout}");
    let out = run(&exe, &[("CD_FAULT_RATE", "0")]);
    assert_eq!(faults_met(&String::from_utf8_lossy(&out.stdout)), 0);
}

#[test]
fn fortran_example_recovers_from_gpu_faults() {
    let exe = compile_fortran(
        &workspace().join("examples/fortran/simple_gpu.f90"),
        "example-simple_gpu-f",
    );
    let out = run(&exe, &[("CD_FAULT_RATE", "0.1"), ("CD_SEED", "3")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(faults_met(&stdout) > 0, "{stdout}");
    assert!(stdout.contains("equals the fault-free run"), "{stdout}");
}
