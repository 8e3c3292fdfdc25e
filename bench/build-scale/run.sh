#!/usr/bin/env bash
# Build time at scale: what a crate with many prompts pays for each template
# edit that goes through cargo. For each size (default 100, 1000 and 5000
# prompts) `workload.py` writes a typed crate (build.rs calling
# `promptpack_build::compile()`, `include_prompts!()`, a typed
# `build_prompt`); the run then measures, one after another so they share
# the machine's load and toolchain:
#
#   - the generated code (`OUT_DIR/promptpack_prompts.rs` and the file per
#     prompt it includes) in bytes, ÷ the template and snippet bytes on disk,
#     for the debug and the release build;
#   - the first debug build of the crate (its dependencies already built);
#   - the rebuild after one template edit (a line appended to the middle
#     prompt), debug (incremental, cargo's default) and release;
#   - the baseline: a cold debug build of an application with serde (derive),
#     serde_json and thiserror only (`../build-cost/apps/baseline`), with a
#     target directory of its own.
#
# CPU time is user + sys of cargo and everything it ran (rustc, the build
# script), from GNU time; peak is the largest resident set of one of those
# processes (rustc, for these builds).
#
# Usage: run.sh [--sizes "100 1000 5000"] [--tree DIR] [--keep]
#   --sizes LIST  the numbers of prompts
#   --tree DIR    the promptpack checkout to build against (default: the
#                 repository holding this script, as it is on disk)
#   --keep        keep the temporary directory
#
# Prints a Markdown table and writes it to last-run.md beside this script.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$(cd "$script_dir/../.." && pwd)
sizes="100 1000 5000"
keep=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --sizes) sizes=$2; shift 2 ;;
        --tree) tree=$(cd "$2" && pwd); shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/promptpack-build-scale.XXXXXX")
if [[ $keep -eq 0 ]]; then
    trap 'rm -rf "$tmp"' EXIT
else
    echo "keeping $tmp" >&2
fi
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER CARGO_INCREMENTAL

# Runs cargo with ARGS in DIR under GNU time; prints "cpu_seconds peak_mb".
timed_cargo() { # DIR LOG ARGS...
    local dir=$1 log=$2; shift 2
    local times=$log.time
    (cd "$dir" && /usr/bin/time -f '%U %S %M' -o "$times" cargo "$@" > "$log" 2>&1) \
        || { cat "$log" >&2; return 1; }
    awk '{ printf "%.2f %.0f\n", $1 + $2, $3 / 1024 }' "$times"
}

# The bytes of the code generated for PROFILE (debug or release).
generated_bytes() { # TARGET_DIR PROFILE CRATE
    local out
    out=$(ls -d "$1/$2/build/$3"-*/out | head -n 1)
    # The main file and the file per prompt it includes.
    find "$out" -name '*.rs' -exec cat {} + | wc -c
}

# The baseline: cold, in a target directory of its own, dependencies
# downloaded first so the network is not timed.
baseline=$tmp/baseline
mkdir -p "$baseline"
cp -r "$script_dir/../build-cost/apps/baseline/." "$baseline/"
mv "$baseline/Cargo.toml.in" "$baseline/Cargo.toml"
(cd "$baseline" && cargo fetch -q)
echo "baseline: cold debug build ..." >&2
read -r base_cpu base_peak < <(CARGO_TARGET_DIR=$baseline/target timed_cargo "$baseline" "$tmp/baseline.log" build)

# One target directory for every size: the dependencies (promptpack, the
# build crate) are built once, by a crate of one prompt, before anything
# is timed.
export CARGO_TARGET_DIR=$tmp/target
python3 "$script_dir/workload.py" 1 "$tmp/warm" "$tree" > /dev/null
(cd "$tmp/warm" && cargo build -q && cargo build -q --release)

results=$tmp/results
for n in $sizes; do
    crate=$tmp/scale-$n
    template_bytes=$(python3 "$script_dir/workload.py" "$n" "$crate" "$tree")
    edited=$crate/templates/prompt-$(printf '%05d' $((n / 2)))/system.md
    echo "$n prompts: debug build ..." >&2
    read -r first_cpu first_peak < <(timed_cargo "$crate" "$tmp/$n-debug.log" build)
    debug_bytes=$(generated_bytes "$CARGO_TARGET_DIR" debug "scale-$n")
    echo "One more line, for the edit rebuild." >> "$edited"
    echo "$n prompts: debug rebuild after one edit ..." >&2
    read -r edit_cpu edit_peak < <(timed_cargo "$crate" "$tmp/$n-debug-edit.log" build)
    "$CARGO_TARGET_DIR/debug/scale-$n" > /dev/null
    echo "$n prompts: release build ..." >&2
    timed_cargo "$crate" "$tmp/$n-release.log" build --release > /dev/null
    release_bytes=$(generated_bytes "$CARGO_TARGET_DIR" release "scale-$n")
    echo "And one more." >> "$edited"
    echo "$n prompts: release rebuild after one edit ..." >&2
    read -r rel_cpu rel_peak < <(timed_cargo "$crate" "$tmp/$n-release-edit.log" build --release)
    "$CARGO_TARGET_DIR/release/scale-$n" > /dev/null
    echo "$n|$template_bytes|$debug_bytes|$release_bytes|$first_cpu|$first_peak|$edit_cpu|$edit_peak|$rel_cpu|$rel_peak" >> "$results"
    [[ $keep -eq 1 ]] || rm -rf "$crate"
done

report=$script_dir/last-run.md
{
    echo "# Build time at scale"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; $(rustc --version);"
    echo "tree: $(git -C "$tree" rev-parse --short HEAD 2>/dev/null || echo "$tree")$(git -C "$tree" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)');"
    echo "baseline (serde derive + serde_json + thiserror, cold debug build): $base_cpu CPU-s, peak $base_peak MB."
    echo
    echo "| prompts | template MB | generated ÷ templates (debug / release) | first debug build CPU-s | one-edit debug rebuild CPU-s | ÷ baseline | peak MB | one-edit release rebuild CPU-s | ÷ baseline | peak MB |"
    echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    while IFS='|' read -r n tb db rb fc fp ec ep rc rp; do
        awk -v n="$n" -v tb="$tb" -v db="$db" -v rb="$rb" -v fc="$fc" -v ec="$ec" -v ep="$ep" \
            -v rc="$rc" -v rp="$rp" -v base="$base_cpu" 'BEGIN {
            printf "| %d | %.2f | %.2f / %.2f | %.1f | %.1f | %.2f | %d | %.1f | %.2f | %d |\n",
                n, tb / 1e6, db / tb, rb / tb, fc, ec, ec / base, ep, rc, rc / base, rp
        }'
    done < "$results"
} | tee "$report"
