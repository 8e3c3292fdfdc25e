#!/usr/bin/env bash
# What promptpack's `tracing` feature costs a typed render. Builds this crate
# twice (release): without features ("off") and with `traced` (promptpack's
# `tracing`), then runs the two builds round after round, alternating, so
# both see the same machine load, and reports the median of each row over
# the rounds with its ratio to "off".
#
# Usage: run.sh [--rounds N] [--renders N]
# Prints a Markdown table and writes it to last-run.md beside this script.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=5 renders=20000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --renders) renders=$2; shift 2 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
target=${CARGO_TARGET_DIR:-$here/target}
cargo build --locked --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$target/off"
cargo build --locked --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$target/on" --features traced
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((round = 1; round <= rounds; round++)); do
    "$target/off/release/promptpack-trace-cost" "$renders" >> "$results"
    "$target/on/release/promptpack-trace-cost" "$renders" >> "$results"
done
python3 - "$results" "$rounds" "$renders" "$here/last-run.md" <<'PY'
import statistics, sys
path, rounds, renders, out = sys.argv[1:]
rows = {}
for line in open(path):
    name, ns = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append(float(ns))
off = statistics.median(rows["off"])
lines = [
    f"Typed render of the bench's conversation prompt (`bench/conversation`), median ns per render "
    f"over {rounds} rounds of {renders} renders (each a median of 31 batches), both builds run "
    "alternately in one run:",
    "",
    "| build | ns per render | vs off |",
    "|---|---:|---:|",
]
for name in ["off", "on, no subscriber", "on, a subscriber that discards"]:
    ns = statistics.median(rows[name])
    lines.append(f"| {name} | {ns:.0f} | {ns / off:.2f}x |")
text = "\n".join(lines) + "\n"
print(text, end="")
open(out, "w").write(text)
PY
