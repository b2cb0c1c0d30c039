#!/usr/bin/env bash
# The main demo: a GPU-style kernel loop protected by a CD, with simulated device faults.
# CD_FAULT_RATE (default 0.05) is the chance that a kernel launch fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo run --release --quiet --example gpu_kernel_loop
