#!/usr/bin/env bash
# The cost of persisting a CD (cd-persist/benches/persist_cost.c) at -np 2, one rank per core,
# two simulated nodes: per scheme and size, an advance (copy into the store + persist) against
# writing the same bytes (write + fsync) and against the stages the scheme cannot avoid,
# interleaved round by round; and the restart with one node's cache lost against reading the
# bytes back.
#
#   scripts/bench-persist.sh [BASE directory, default /tmp/cd-bench-persist] [ROUNDS, default 9]
#
# BASE should be node-local storage; /dev/shm measures the software without the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
base="${1:-/tmp/cd-bench-persist}" rounds="${2:-9}"
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-600}" CD_REDSET_FAILURE_GROUP='node{rank}'
cargo build --release --quiet -p cd-ffi
lib="$PWD/${CARGO_TARGET_DIR:-target}/release"
out="${CARGO_TARGET_DIR:-target}/bench-persist"
mkdir -p "$out"
mpicc -O2 -Wall -Wextra -Werror -std=gnu11 cd-persist/benches/persist_cost.c -Icd-ffi/include \
    -L"$lib" -lcd -Wl,-rpath,"$lib" -o "$out/persist_cost"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, base $base ($(df -T "$(dirname "$base")" | awk 'NR==2 {print $2}'))"
for mib in 64 256; do
    for scheme in single partner xor rs; do
        rm -rf "$base"
        mkdir -p "$base"
        echo "\$ mpirun -np 2 $out/persist_cost $base $mib $scheme $rounds"
        mpirun -np 2 "$out/persist_cost" "$base" "$mib" "$scheme" "$rounds"
    done
done
rm -rf "$base"
