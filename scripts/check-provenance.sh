#!/usr/bin/env bash
# Strict provenance: `cargo +nightly check` of the workspace with rustc's provenance lints, which
# flag every integer-to-pointer cast (`fuzzy_provenance_casts`) and pointer-to-integer cast
# (`lossy_provenance_casts`) written with `as`. The code turns addresses into pointers on
# purpose, with `ptr::with_exposed_provenance(_mut)` (an address that came from outside Rust,
# e.g. a C caller's `void *` kept as an integer) or `addr()` / `map_addr` / `with_addr` /
# `without_provenance`, each saying why it is sound; these lints find the casts that do not.
#
#   scripts/check-provenance.sh          warnings only (the list of casts left)
#   scripts/check-provenance.sh --deny   a cast left fails the check
#
# The lints are unstable, hence nightly (`-Zcrate-attr` turns their feature on in every crate;
# dependencies' warnings are capped by cargo). Miri is not run here: the nightly installed has
# no Miri component. The build has its own target directory (RUSTFLAGS differ from stable's).
set -euo pipefail
cd "$(dirname "$0")/.."
level=-W
if [ "${1:-}" = --deny ]; then
    level=-D
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/nightly"
export RUSTFLAGS="${RUSTFLAGS:-} -Zcrate-attr=feature(strict_provenance_lints) \
${level}fuzzy_provenance_casts ${level}lossy_provenance_casts"
cargo +nightly check --workspace --all-targets
