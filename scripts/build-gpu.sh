#!/usr/bin/env bash
# Builds, on this (CPU) machine, everything scripts/test-gpu.sh runs on a GPU machine, into
# one folder git ignores (default .gpu, about 15 MiB): the GPU machine has no crates.io and
# no Rust toolchain to rely on. Then `run` with carry [".gpu"] and the command
#   scripts/test-gpu.sh
# (see DEVELOPERS.md, "When a session has a GPU"). Check the lot against the stand-in here
# first: `CD_CUDA_LIBRARY=$PWD/.gpu/libcuda_standin.so scripts/test-gpu.sh`.
#
# CD_GPU_PROFILE=dev builds the debug profile instead of release: what scripts/test.sh runs
# against the stand-in, reusing the suite's debug build (the figures of a debug build mean
# nothing; the GPU machine gets the release build).
#
# Usage: scripts/build-gpu.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.gpu}"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$dir/" "$exclude" 2>/dev/null || echo "/$dir/" >> "$exclude"

target="${CARGO_TARGET_DIR:-target}"
profile="${CD_GPU_PROFILE:-release}"
built="$target/$([ "$profile" = dev ] && echo debug || echo "$profile")"
cargo build --profile "$profile" -p cd-ffi                                   # libcd.so
cargo build --profile "$profile" -p cd-cuda --example gpu_copies --example gpu_checks
cargo build --profile "$profile" --example cuda_kernel_loop
mkdir -p "$dir"
cp "$built/libcd.so" "$built/examples/gpu_copies" \
   "$built/examples/gpu_checks" "$built/examples/cuda_kernel_loop" "$dir/"
cc -O2 -Icd-ffi/include examples/c/simple_cuda.c -L"$dir" -lcd -ldl -Wl,-rpath,'$ORIGIN' \
   -o "$dir/simple_cuda"
# the stand-in, for the check here (the GPU machine uses its real driver)
cc -O2 -shared -fPIC -o "$dir/libcuda_standin.so" cd-cuda/standin/cuda_standin.c
du -sh "$dir"
