#!/usr/bin/env bash
# The cost of persisting a CD (cd-persist/benches/persist_cost.c) at -np 2, one rank per core,
# two simulated nodes: per scheme and size, an advance (copy into the store + persist) against
# writing the same bytes (write + fsync) and against the stages the scheme cannot avoid,
# interleaved round by round; and the restart with one node's cache lost against reading the
# bytes back.
#
#   scripts/bench-persist.sh [BASE directory, default /tmp/cd-bench-persist] [ROUNDS, default 9]
#   scripts/bench-persist.sh --flush-stall [BASE] [ROUNDS]
#
# --flush-stall runs cd-persist/benches/flush_stall.c instead: the stall a background flush
# adds to a compute phase, against copying the flushed bytes alone, at -np 1 (the flush thread
# has a core of its own) and -np 2 (it shares one with a rank).
#
# BASE should be node-local storage; /dev/shm measures the software without the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
stall=
if [ "${1:-}" = --flush-stall ]; then stall=1; shift; fi
base="${1:-/tmp/cd-bench-persist}" rounds="${2:-9}"
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-600}" CD_REDSET_FAILURE_GROUP='node{rank}'
cargo build --release --quiet -p cd-ffi
lib="$PWD/${CARGO_TARGET_DIR:-target}/release"
out="${CARGO_TARGET_DIR:-target}/bench-persist"
mkdir -p "$out"
for program in persist_cost flush_stall; do
    mpicc -O2 -Wall -Wextra -Werror -std=gnu11 "cd-persist/benches/$program.c" -Icd-ffi/include \
        -L"$lib" -lcd -Wl,-rpath,"$lib" -o "$out/$program"
done
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, base $base ($(df -T "$(dirname "$base")" | awk 'NR==2 {print $2}'))"
if [ -n "$stall" ]; then
    for np in 1 2; do
        for mib in 64 256; do
            rm -rf "$base"
            echo "\$ mpirun -np $np $out/flush_stall $base $mib $rounds"
            mpirun -np "$np" "$out/flush_stall" "$base" "$mib" "$rounds"
        done
    done
    rm -rf "$base"
    exit 0
fi
for mib in 64 256; do
    for scheme in single partner xor rs; do
        rm -rf "$base"
        mkdir -p "$base"
        echo "\$ mpirun -np 2 $out/persist_cost $base $mib $scheme $rounds"
        mpirun -np 2 "$out/persist_cost" "$base" "$mib" "$scheme" "$rounds"
    done
done
rm -rf "$base"
