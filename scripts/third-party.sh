#!/usr/bin/env bash
# Real third-party MPI programs, unmodified, under LD_PRELOAD=libcd.so, for each MPI family:
#   - mpi4py's own test suite (its PyPI source distribution, built against the family's mpicc)
#     at -np 2, with and without the preload: the per-rank pass/skip/fail counts must be equal
#     and free of failures;
#   - rsmpi's examples (the `mpi` crate's source from crates.io, at the version Cargo.lock
#     pins), with and without the preload: each asserts its own results, so each must exit 0;
#   - NetPIPE (Debian's netpipe-mpich2 / netpipe-openmpi) in its integrity-check mode (-i),
#     under the preload, in four communication modes.
# Every preloaded run writes CD_MPI_STATS, which must show each rank's calls went through the
# wrappers. With no CD active the wrappers only forward, so any difference is a wrapper bug.
#
#   scripts/third-party.sh [mpich] [openmpi]        (default: both families)
#
# What it downloads and builds lives in ${CARGO_TARGET_DIR:-target}/third-party (git-ignored)
# and is reused: a second run only runs the programs. Exits non-zero on any failure or
# difference, after running everything and printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
CD_SETUP_THIRD_PARTY=1 source scripts/setup.sh

# Every mpirun below gives up after this many seconds (hydra and Open MPI's mpirun read it).
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-300}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
tp="$target/third-party"
export PIP_CACHE_DIR="$tp/pip-cache"
# Debian's interpreter, not whatever python3 comes first on PATH: python3-dev and python3-venv
# (setup.sh) belong to it.
python=/usr/bin/python3
mpi4py_version=4.1.2
# The rsmpi the workspace itself builds with (cd-redset), so its sources are usually cached.
rsmpi_version=$(awk '$0 == "name = \"mpi\"" { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)

# mpi4py's test modules left out, with why. Both families: test_spawn spawns more processes
# than the two cores and hangs in Open MPI 4.1.4 without the preload
# (TestSpawnMultipleWorld.testCommSpawnDefaults2); mpi4py skips it for MPICH anyway.
mpi4py_exclude_common=(-e test_spawn)
# MPICH 4.0.2 (ch4:ucx): test_util_sync's TestCondition*World (RMA passive target) errors on
# rank 0 and leaves rank 1 waiting forever, without the preload.
mpi4py_exclude_mpich=(-e test_util_sync)
# rsmpi's examples left out, with why. MPICH: MPI_Comm_spawn fails in Debian's MPICH 4.0.2
# here ("Error in spawn call"), without the preload. The cartesian examples need 4 ranks.
rsmpi_exclude_mpich=(spawn spawn_multiple)
# This example checks a panic before MPI_Init, so it never calls MPI and writes no statistics.
rsmpi_no_mpi=(derive_preinit_panic)
# NetPIPE's communication modes: blocking Send/Recv, preposted Irecv+Wait (-a), Ssend (-S),
# both directions at once (-2 -a). Without the preload, NetPIPE 3.7.2's -z (MPI_ANY_SOURCE)
# hangs, -2 alone deadlocks on large messages and -B refuses -i, so those are not run.
netpipe_modes=("" "-a" "-S" "-2 -a")
# Up to 4 MiB: the eager and the rendezvous protocols of both families.
netpipe_upper=4194304

results=()   # "family|part|PASS or FAIL|seconds|detail"
failures=0

log() { echo "third-party: $*"; }

# Sets the globals describing family $1: compiler, launcher, NetPIPE binary, libcd, the MPI
# library name (for ldd checks) and the -L flags of its link line.
use_family() {
    fam=$1
    case $fam in
        mpich)
            mpicc=mpicc.mpich
            mpirun=(mpirun.mpich)
            netpipe=NPmpich2
            libcd="$target/debug/libcd.so"
            link_line=$($mpicc -show)
            ;;
        openmpi)
            mpicc=mpicc.openmpi
            mpirun=(mpirun.openmpi --oversubscribe --allow-run-as-root)
            netpipe=NPopenmpi
            libcd="$target/openmpi/debug/libcd.so"
            link_line=$($mpicc --showme:link)
            ;;
        *) echo "third-party: unknown MPI family '$fam' (mpich or openmpi)" >&2; exit 2 ;;
    esac
    mpi_lib=$(grep -o -- '-lmpi[a-z]*' <<<"$link_line" | head -n1 | cut -c3-)
    lib_dirs=$(grep -o -- '-L[^ ]*' <<<"$link_line" | tr '\n' ' ' || true)
    out="$tp/$fam"
    mkdir -p "$out"
}

# Records one part's outcome for the summary.
record() {
    local part=$1 ok=$2 secs=$3 detail=$4
    results+=("$fam|$part|$ok|$secs|$detail")
    [ "$ok" = PASS ] || failures=$((failures + 1))
    log "$fam $part: $ok ($secs s) $detail"
}

# Fails unless binary $1 is linked against this family's MPI library. ldd's output is taken
# whole first: piped into `grep -q`, which exits at the first match, ldd could die of SIGPIPE
# and `pipefail` would report the match as a failure.
check_linked() {
    local deps
    deps=$(ldd "$1") || return 1
    if ! grep -q "lib$mpi_lib\.so" <<<"$deps"; then
        echo "third-party: $1 is not linked against lib$mpi_lib ($fam):" >&2
        grep -i mpi <<<"$deps" >&2 || true
        return 1
    fi
}

# launch NP PRELOAD STATS_PREFIX CMD...: runs CMD on NP ranks; with PRELOAD=1 under
# LD_PRELOAD=libcd.so with CD_MPI_STATS=STATS_PREFIX. The outer timeout only catches a launcher
# that outlives its own MPIEXEC_TIMEOUT.
launch() {
    local np=$1 preload=$2 stats=$3 env=()
    shift 3
    if [ "$preload" = 1 ]; then
        case $fam in
            mpich) env=(-genv LD_PRELOAD "$libcd" -genv CD_MPI_STATS "$stats") ;;
            openmpi) env=(-x "LD_PRELOAD=$libcd" -x "CD_MPI_STATS=$stats") ;;
        esac
    fi
    timeout -k 30 $((MPIEXEC_TIMEOUT + 60)) "${mpirun[@]}" -np "$np" "${env[@]}" "$@"
}

# check_stats PREFIX NP: every rank wrote its statistics, initialized and finalized MPI once
# through the wrappers. Prints the total of calls seen.
check_stats() {
    local prefix=$1 np=$2 r f
    for ((r = 0; r < np; r++)); do
        f="$prefix$r"
        if [ ! -s "$f" ]; then echo "no CD_MPI_STATS file $f"; return 1; fi
        if ! grep -Eq '^calls\.MPI_Init(_thread)? 1$' "$f" || ! grep -q '^calls\.MPI_Finalize 1$' "$f"; then
            echo "$f shows no MPI_Init and MPI_Finalize"; return 1
        fi
    done
    awk '/^calls\.MPI_/ { s += $2 } END { print s + 0 }' "$prefix"*
}

# Shows the end of the logs of a failed run.
show_tail() {
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        echo "---- last lines of $f"
        tail -n 15 "$f"
    done
}

build_libcd() {
    log "$fam: building libcd.so"
    case $fam in
        # as scripts/test.sh builds them: MPICH into the default target directory with
        # MPICC unset (so nothing is rebuilt), Open MPI into its own
        mpich) (unset MPICC; CARGO_TARGET_DIR="$target" cargo build -q -p cd-ffi) ;;
        openmpi) CARGO_TARGET_DIR="$target/openmpi" MPICC=mpicc.openmpi cargo build -q -p cd-ffi ;;
    esac
    [ -f "$libcd" ] || { echo "third-party: $libcd was not built" >&2; exit 1; }
}

# ---- mpi4py ----------------------------------------------------------------------------

mpi4py_sdist="$tp/downloads/mpi4py-$mpi4py_version.tar.gz"
mpi4py_src="$tp/src/mpi4py-$mpi4py_version"

# A venv per family holding mpi4py built from the sdist with the family's mpicc. Called where
# `set -e` does not apply (its status is tested), hence the explicit `|| return 1`.
mpi4py_build() {
    local venv="$out/venv" want="mpi4py $mpi4py_version $mpicc"
    if [ -f "$venv/.built" ] && [ "$(cat "$venv/.built")" = "$want" ]; then return 0; fi
    rm -rf "$venv"
    "$python" -m venv "$venv" || return 1
    if [ ! -f "$mpi4py_sdist" ]; then
        "$venv/bin/pip" download -q --no-deps --no-binary mpi4py "mpi4py==$mpi4py_version" \
            -d "$tp/downloads" || return 1
    fi
    if [ ! -f "$mpi4py_src/test/main.py" ]; then
        mkdir -p "$tp/src"
        tar -xzf "$mpi4py_sdist" -C "$tp/src" || return 1
    fi
    # -O0: the generated MPI.c is large; at -O2 it takes minutes on two cores, at -O0 seconds.
    # LDFLAGS: Python's -L/usr/lib/x86_64-linux-gnu comes before mpicc's own -L on the link
    # line, and there libmpi.so is the alternative pinned to MPICH, so without the family's
    # directories first an Open MPI build would link MPICH.
    MPICC=$mpicc CFLAGS="-O0 -g0" LDFLAGS="$lib_dirs" \
        "$venv/bin/pip" install -q --no-binary mpi4py "$mpi4py_sdist" || return 1
    check_linked "$(ls "$venv"/lib/python3*/site-packages/mpi4py/MPI.*.so)" || return 1
    echo "$want" >"$venv/.built"
}

# mpi4py_counts LOG: "ran N: P passed, S skipped, F failed, E errors" from unittest's summary.
mpi4py_counts() {
    local f=$1 ran final
    ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$f" | tail -n1)
    final=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$f" | tail -n1 || true)
    if [ -z "$ran" ] || [ -z "$final" ]; then echo "no unittest summary"; return 0; fi
    awk -v ran="$ran" -v final="$final" 'BEGIN {
        n["failures"] = n["errors"] = n["skipped"] = n["expected failures"] = n["unexpected successes"] = 0
        s = final; sub(/^[A-Z]+ *\(?/, "", s); sub(/\)$/, "", s)
        k = split(s, parts, /, /)
        for (i = 1; i <= k; i++) { split(parts[i], kv, "="); n[kv[1]] = kv[2] }
        passed = ran - n["failures"] - n["errors"] - n["skipped"] - n["expected failures"] - n["unexpected successes"]
        printf "ran %d: %d passed, %d skipped, %d failed, %d errors", ran, passed, n["skipped"], n["failures"], n["errors"]
        if (n["expected failures"] + n["unexpected successes"] > 0)
            printf ", %d expected failures, %d unexpected successes", n["expected failures"], n["unexpected successes"]
    }'
}

# The per-test outcomes of a verbose unittest log, sorted, to show what differs.
mpi4py_outcomes() {
    sed -n 's/^[A-Za-z0-9_]* (\([A-Za-z0-9_.]*\)) \.\.\. \(ok\|skipped\|ERROR\|FAIL\|expected failure\|unexpected success\).*/\1 \2/p' "$1" | sort
}

# mpi4py_run MODE (plain or preload): the test suite at -np 2, each rank's output in its log.
mpi4py_run() {
    local mode=$1 dir="$out/mpi4py-$1" preload=0 excludes=("${mpi4py_exclude_common[@]}")
    [ "$mode" = preload ] && preload=1
    [ "$fam" = mpich ] && excludes+=("${mpi4py_exclude_mpich[@]}")
    rm -rf "$dir"
    mkdir -p "$dir"
    # each rank redirects its own output (hydra sets PMI_RANK, Open MPI OMPI_COMM_WORLD_RANK)
    # shellcheck disable=SC2016 # expanded by the rank's sh
    (cd "$mpi4py_src" && launch 2 "$preload" "$dir/stats." sh -c \
        'd=$1; shift; exec "$@" >"$d/rank${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-x}}.log" 2>&1' \
        sh "$dir" "$out/venv/bin/python" test/main.py -v "${excludes[@]}") >"$dir/mpirun.log" 2>&1
}

part_mpi4py() {
    local start=$SECONDS status=PASS detail="" r mode rc calls ok
    local -A counts=()   # [plain0], [plain1], [preload0], [preload1]
    log "$fam: mpi4py $mpi4py_version built with $mpicc (once, in $out/venv)"
    if ! mpi4py_build >"$out/mpi4py-build.log" 2>&1; then
        show_tail "$out/mpi4py-build.log"
        record mpi4py FAIL $((SECONDS - start)) "building mpi4py failed (see $out/mpi4py-build.log)"
        return 0
    fi
    for mode in plain preload; do
        log "$fam: mpi4py's tests at -np 2, $mode"
        rc=0
        mpi4py_run "$mode" || rc=$?
        for r in 0 1; do counts[$mode$r]=$(mpi4py_counts "$out/mpi4py-$mode/rank$r.log"); done
        # the counts of both ranks, once when they agree
        if [ "${counts[${mode}0]}" = "${counts[${mode}1]}" ]; then
            detail+="$mode: ${counts[${mode}0]} (each rank)"
        else
            detail+="$mode: rank 0 ${counts[${mode}0]}, rank 1 ${counts[${mode}1]}"
        fi
        if [ "$rc" = 0 ]; then detail+=". "; else detail+=", mpirun exit $rc. "; fi
        # a run passes when mpirun succeeded and each rank's suite ran without failure
        ok=1
        [ "$rc" = 0 ] || ok=0
        for r in 0 1; do
            case ${counts[$mode$r]} in ran*", 0 failed, 0 errors"*) ;; *) ok=0 ;; esac
        done
        if [ "$ok" = 0 ]; then
            status=FAIL
            show_tail "$out/mpi4py-$mode/mpirun.log" "$out/mpi4py-$mode"/rank*.log
        fi
    done
    # the comparison itself: the same counts on each rank with and without the preload
    for r in 0 1; do
        if [ "${counts[plain$r]}" != "${counts[preload$r]}" ]; then
            status=FAIL
            detail+="Rank $r differs. "
            if [[ ${counts[preload$r]} == ran* ]]; then
                echo "---- rank $r: tests whose outcome differs (< plain, > preload)"
                diff <(mpi4py_outcomes "$out/mpi4py-plain/rank$r.log") \
                    <(mpi4py_outcomes "$out/mpi4py-preload/rank$r.log") | grep '^[<>]' | head -n 20 || true
            fi
        fi
    done
    if calls=$(check_stats "$out/mpi4py-preload/stats." 2); then
        detail+="Intercepted calls: $calls."
    else
        status=FAIL
        detail+="Statistics: $calls."
    fi
    record mpi4py "$status" $((SECONDS - start)) "$detail"
}

# ---- rsmpi -----------------------------------------------------------------------------

rsmpi_project="$tp/rsmpi"

# A throwaway crate depending on `mpi` (with the features its examples use), so cargo fetches
# the registry source; its examples are copied in and built as this crate's examples. Called
# where `set -e` does not apply, hence the explicit `|| return 1`.
rsmpi_prepare() {
    local stamp="$rsmpi_project/.examples" src
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$rsmpi_version" ] && return 0
    rm -rf "$rsmpi_project"
    mkdir -p "$rsmpi_project/src" || return 1
    # [workspace]: its own root, not a member of the containment workspace above it.
    # check-cfg: the examples test cfg(msmpi), which only the mpi crate's build script declares.
    cat >"$rsmpi_project/Cargo.toml" <<EOF
[package]
name = "rsmpi-examples"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
mpi = { version = "=$rsmpi_version", features = ["derive", "complex"] }
num-complex = "0.4"

[features]
default = ["user-operations"]
user-operations = ["mpi/user-operations"]

[workspace]

[lints.rust]
unexpected_cfgs = { level = "warn", check-cfg = ["cfg(msmpi)"] }
EOF
    : >"$rsmpi_project/src/lib.rs"
    # the workspace's lock file as a start: the versions it pins are already downloaded
    cp Cargo.lock "$rsmpi_project/Cargo.lock" || return 1
    cargo fetch -q --manifest-path "$rsmpi_project/Cargo.toml" || return 1
    src=$(cargo metadata -q --format-version 1 --manifest-path "$rsmpi_project/Cargo.toml" |
        "$python" -c 'import json, sys
print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mpi"))') ||
        return 1
    cp -r "$(dirname "$src")/examples" "$rsmpi_project/examples" || return 1
    echo "$rsmpi_version" >"$stamp"
}

# rsmpi's examples built with this family's mpicc, in the family's own target directory.
rsmpi_build() {
    rsmpi_prepare || return 1
    CARGO_TARGET_DIR="$out/rsmpi-target" MPICC=$mpicc \
        cargo build -q --examples --manifest-path "$rsmpi_project/Cargo.toml" || return 1
    check_linked "$out/rsmpi-target/debug/examples/simple"
}

part_rsmpi() {
    local start=$SECONDS status=PASS examples=() e np rc mode preload calls total=0 n=0 bad=()
    local dir="$out/rsmpi" bin="$out/rsmpi-target/debug/examples"
    log "$fam: rsmpi's examples (mpi $rsmpi_version) built with $mpicc (once, in $out/rsmpi-target)"
    if ! rsmpi_build >"$out/rsmpi-build.log" 2>&1; then
        show_tail "$out/rsmpi-build.log"
        record rsmpi FAIL $((SECONDS - start)) "building rsmpi's examples failed (see $out/rsmpi-build.log)"
        return 0
    fi
    for e in "$rsmpi_project"/examples/*.rs; do
        e=$(basename "$e" .rs)
        if [ "$fam" = mpich ] && [[ " ${rsmpi_exclude_mpich[*]} " == *" $e "* ]]; then continue; fi
        examples+=("$e")
    done
    rm -rf "$dir"
    mkdir -p "$dir"
    log "$fam: ${#examples[@]} rsmpi examples, plain and preloaded"
    for e in "${examples[@]}"; do
        np=2
        case $e in cartesian*) np=4 ;; esac
        for mode in plain preload; do
            preload=0
            [ "$mode" = preload ] && preload=1
            rc=0
            launch "$np" "$preload" "$dir/$e.stats." "$bin/$e" >"$dir/$e.$mode.log" 2>&1 || rc=$?
            if [ "$rc" != 0 ]; then
                bad+=("$e ($mode: exit $rc)")
                show_tail "$dir/$e.$mode.log"
            fi
        done
        [[ " ${rsmpi_no_mpi[*]} " == *" $e "* ]] && continue
        if calls=$(check_stats "$dir/$e.stats." "$np"); then
            total=$((total + calls))
        else
            bad+=("$e (statistics: $calls)")
        fi
    done
    n=${#examples[@]}
    [ ${#bad[@]} = 0 ] || status=FAIL
    record rsmpi "$status" $((SECONDS - start)) \
        "$((n - ${#bad[@]})) of $n examples pass plain and preloaded. Intercepted calls: $total.${bad[*]:+ Failed: ${bad[*]}}"
}

# ---- NetPIPE ---------------------------------------------------------------------------

# occurrences REGEX FILE: how many times REGEX matches in FILE (0 is not an error).
occurrences() {
    { grep -Eo -- "$1" "$2" || true; } | wc -l
}

part_netpipe() {
    local start=$SECONDS status=PASS dir="$out/netpipe" mode i rc sizes passed failed calls detail=""
    rm -rf "$dir"
    mkdir -p "$dir"
    for i in "${!netpipe_modes[@]}"; do
        mode=${netpipe_modes[$i]}
        calls=""
        log "$fam: $netpipe -i -u $netpipe_upper $mode, preloaded"
        rc=0
        # shellcheck disable=SC2086 # the mode is a list of options
        launch 2 1 "$dir/$i.stats." "$netpipe" -i -u "$netpipe_upper" $mode -o "$dir/$i.out" \
            >"$dir/$i.log" 2>&1 || rc=$?
        # one verdict per message size; counted, not matched by line, as the launcher may
        # split a rank's stdout from its stderr mid-line
        sizes=$(occurrences '[0-9]+: +[0-9]+ bytes +[0-9]+ times -->' "$dir/$i.log")
        passed=$(occurrences 'Integrity check passed' "$dir/$i.log")
        failed=$(occurrences 'Integrity check failed' "$dir/$i.log")
        if [ "$rc" = 0 ] && [ "$sizes" -gt 0 ] && [ "$sizes" = "$passed" ] && [ "$failed" = 0 ] &&
            calls=$(check_stats "$dir/$i.stats." 2); then
            detail+="[${mode:-default}] $passed sizes intact, $calls calls. "
        else
            status=FAIL
            detail+="[${mode:-default}] exit $rc, $passed of $sizes sizes intact, $failed failed${calls:+, $calls}. "
            show_tail "$dir/$i.log"
        fi
    done
    record NetPIPE "$status" $((SECONDS - start)) "$detail"
}

# ---- main ------------------------------------------------------------------------------

families=("$@")
[ ${#families[@]} -gt 0 ] || families=(mpich openmpi)
mkdir -p "$tp/downloads"
for f in "${families[@]}"; do
    use_family "$f"
    build_libcd
    part_mpi4py
    part_rsmpi
    part_netpipe
done

echo
echo "== third-party MPI programs under LD_PRELOAD=libcd.so: summary"
for r in "${results[@]}"; do
    IFS='|' read -r f part ok secs detail <<<"$r"
    printf '%-8s %-8s %-4s %4ss  %s\n' "$f" "$part" "$ok" "$secs" "$detail"
done
if [ "$failures" -gt 0 ]; then
    echo "third-party: $failures of ${#results[@]} checks FAILED (logs under $tp)"
    exit 1
fi
echo "third-party: all ${#results[@]} checks passed"
