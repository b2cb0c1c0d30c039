#!/usr/bin/env bash
# A short libFuzzer run of every target in fuzz/ (the parsers of untrusted input) from its
# committed corpus: no panic, no hang (5 s per input), no allocation over 256 MiB from a
# crafted length. Part of scripts/test.sh.
#
#   scripts/fuzz.sh [SECONDS per target, default 15] [TARGET ...]
#
# It builds the targets the way `cargo fuzz build -s none` does (the same compiler flags:
# SanitizerCoverage instrumentation, --cfg fuzzing, debug assertions), so that CI need not
# install cargo-fuzz; `cd fuzz && cargo fuzz run -s none <target>` works as well.
# New inputs found are kept in target/fuzz-corpus/, not in the committed corpus; a failing
# input is written to target/fuzz-artifacts/ and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
seconds="${1:-15}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(storage_info kvtree redset_name mpi_record)

export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
--cfg fuzzing -Cdebug-assertions -Ccodegen-units=1"
export CARGO_TARGET_DIR="$root/target/fuzz"
# An explicit --target keeps RUSTFLAGS off the build scripts (they run on the host, without
# libFuzzer's coverage callbacks), as cargo fuzz does.
host="$(rustc -vV | sed -n 's/^host: //p')"
echo "== building the fuzz targets (fuzz/Cargo.toml, for $host)"
cargo build --release --quiet --manifest-path fuzz/Cargo.toml --bins --target "$host"
mkdir -p target/fuzz-artifacts
for t in "${targets[@]}"; do
    work="target/fuzz-corpus/$t"
    mkdir -p "$work"
    echo "== fuzz $t: ${seconds} s from fuzz/corpus/$t ($(ls "fuzz/corpus/$t" | wc -l) seeds)"
    "$CARGO_TARGET_DIR/$host/release/$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" \
        -timeout=5 -malloc_limit_mb=256 -rss_limit_mb=1024 \
        -artifact_prefix="target/fuzz-artifacts/$t-" -print_final_stats=1 2>&1 |
        grep -E '^(Done|stat::number_of_executed_units|==|SUMMARY|panicked|thread)' || true
    if ls target/fuzz-artifacts/"$t"-* > /dev/null 2>&1; then
        echo "fuzz.sh: $t found a failing input: $(ls target/fuzz-artifacts/"$t"-*)" >&2
        exit 1
    fi
done
echo "== fuzz: no failure"
