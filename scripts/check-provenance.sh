#!/usr/bin/env bash
# Strict provenance: `cargo +nightly check` of the workspace (every target) with rustc's
# provenance lints, which flag every integer-to-pointer cast (`fuzzy_provenance_casts`) and
# pointer-to-integer cast (`lossy_provenance_casts`) written with `as`. The code turns addresses
# into pointers on purpose instead: `ptr::with_exposed_provenance(_mut)` for an address that
# came from outside as an integer (a C caller's `void *` that cd-core keeps as a `usize`), after
# `expose_provenance()` where it became one; `addr()` / `without_provenance` for addresses that
# are only numbers (keys, handles, identities); each says why it is sound.
#
#   scripts/check-provenance.sh          fails on a cast in a file that is not in PENDING
#   scripts/check-provenance.sh --deny   fails on any cast
#
# PENDING lists the files that still hold such casts (their owners convert them); a cast
# anywhere else fails the check, so a converted file stays converted. The lints are unstable,
# hence nightly (`-Zcrate-attr` turns their feature on in every crate; cargo caps dependencies'
# lints). The build has its own target directory, as its RUSTFLAGS differ from stable's. Miri
# is not run: the nightly toolchain installed here has no Miri component.
set -euo pipefail
cd "$(dirname "$0")/.."

PENDING=()
deny_all=false
if [ "${1:-}" = --deny ]; then
    deny_all=true
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/nightly"
export RUSTFLAGS="${RUSTFLAGS:-} -Zcrate-attr=feature(strict_provenance_lints) \
-Wfuzzy_provenance_casts -Wlossy_provenance_casts"
out="$(cargo +nightly check --workspace --all-targets --message-format=short 2>&1)" || {
    printf '%s\n' "$out"
    exit 1
}
casts="$(grep -E '^[^ :]+:[0-9]+:[0-9]+: warning: .*provenance' <<<"$out" | sort -t: -k1,1 -k2,2n -k3,3n -u || true)"
if [ -z "$casts" ]; then
    echo "no provenance cast left in the workspace"
    exit 0
fi
printf '%s\n' "$casts"
echo "$(wc -l <<<"$casts") provenance casts left, in:"
cut -d: -f1 <<<"$casts" | sort | uniq -c
status=0
for file in $(cut -d: -f1 <<<"$casts" | sort -u); do
    if $deny_all || ! grep -qxF "$file" <<<"$(printf '%s\n' "${PENDING[@]}")"; then
        echo "error: $file casts between integers and pointers with \`as\` (see the top of $0)"
        status=1
    fi
done
for file in "${PENDING[@]}"; do
    if ! grep -q "^$file:" <<<"$casts"; then
        echo "note: $file holds no cast any more: remove it from PENDING in $0"
    fi
done
exit $status
