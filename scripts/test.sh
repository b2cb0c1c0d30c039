#!/usr/bin/env bash
# The whole test suite: installs what it needs, then formatting, lints and every test
# (unit, integration, property, multi-rank under mpirun, compiled C and Fortran programs).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# Every mpirun launched by a test gives up after this many seconds (MPICH hydra).
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-120}"

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace
echo "== all tests passed"
