#!/usr/bin/env bash
# Cold release build cost of three kinds of application, measured in one run
# so the numbers are comparable (same machine, same load, same toolchain):
#
#   baseline      serde + serde_json + thiserror, no promptpack: the floor
#   library-only  promptpack's dynamic API (Library::load), no build script
#   typed         build.rs + include_prompts! + build_prompt(PromptId::X, ..)
#
# library-only and typed are built against two promptpack checkouts, "before"
# and "after", through a path dependency.
#
# Usage: run.sh [--before DIR | --before-rev REV] [--after DIR | --after-rev REV]
#               [--rounds N] [--keep]
#   --before DIR      a promptpack checkout to use as "before"
#   --before-rev REV  export REV of this repository as "before" (default 92ef7fe,
#                     the last commit before the Cargo workspace)
#   --after DIR       a promptpack checkout to use as "after"
#                     (default: the repository holding this script, as it is on disk)
#   --after-rev REV   export REV of this repository as "after"
#   --rounds N        build everything N times (default 3), round after round,
#                     and report medians: one cold build's CPU time moves by
#                     10-20% on a shared machine, a median of rounds much less
#   --keep            keep the temporary directory (apps, target dirs, logs)
#
# Prints a Markdown table and writes it to last-run.md beside this script.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/../.." && pwd)

before_dir="" before_rev="92ef7fe"
after_dir="$repo" after_rev=""
keep=0 rounds=3
while [[ $# -gt 0 ]]; do
    case "$1" in
        --before) before_dir=$2; before_rev=""; shift 2 ;;
        --before-rev) before_rev=$2; before_dir=""; shift 2 ;;
        --after) after_dir=$2; after_rev=""; shift 2 ;;
        --after-rev) after_rev=$2; after_dir=""; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/promptpack-build-cost.XXXXXX")
if [[ $keep -eq 0 ]]; then
    trap 'rm -rf "$tmp"' EXIT
else
    echo "keeping $tmp" >&2
fi

# `git archive | tar` reads only the object store: unlike `git worktree` or
# `git checkout` it leaves the repository's index and work tree alone.
export_rev() { # REV DEST
    mkdir -p "$2"
    git -C "$repo" archive "$1" | tar -x -C "$2"
}
if [[ -n $before_rev ]]; then
    before_dir=$tmp/before-tree; export_rev "$before_rev" "$before_dir"
    before_label="before ($before_rev)"
else
    before_dir=$(cd "$before_dir" && pwd); before_label="before ($before_dir)"
fi
if [[ -n $after_rev ]]; then
    after_dir=$tmp/after-tree; export_rev "$after_rev" "$after_dir"
    after_label="after ($after_rev)"
else
    after_dir=$(cd "$after_dir" && pwd); after_label="after ($after_dir)"
fi

# A compiler cache would turn a cold build into a warm one.
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER
# Release builds are not incremental by default; say so anyway, so a user's
# config cannot change what is measured.
export CARGO_INCREMENTAL=0

# GNU time reports the CPU time of every process cargo waited for (rustc,
# build scripts). Without it, bash's `time` keyword reports the same sums.
if [[ -x /usr/bin/time ]]; then
    timer=gnu
else
    timer=bash
fi

# The crates worth naming in the table: what the typed path and hot reload
# bring in on top of the baseline.
notable_re='^(syn|quote|proc-macro2|prettyplease|heck|notify|notify-debouncer-full|promptpack.*)$'

# Copies app $1 into a fresh directory for tree $2 (a checkout, or "" for the
# baseline), fills in its templates, builds it cold and appends a result line
# "app|tree|round|crates|rustc runs|wall|cpu|notable" to $tmp/results.
measure() { # APP TREE_DIR TREE_LABEL ROUND
    local app=$1 tree=$2 label=$3 round=$4
    local work=$tmp/apps/$app-${label%% *}-$round
    mkdir -p "$work"
    cp -r "$script_dir/apps/$app/." "$work/"

    # Fill in the templates. A workspace tree has crates/promptpack-build for
    # build scripts; the single-package tree has promptpack::build.
    local build_crate=promptpack build_path=$tree compile=promptpack::build::compile
    if [[ -n $tree && -f $tree/crates/promptpack-build/Cargo.toml ]]; then
        build_crate=promptpack-build build_path=$tree/crates/promptpack-build
        compile=promptpack_build::compile
    fi
    # A tree where the dynamic API is a feature (`library`) gets it asked for.
    local library_features=""
    if [[ -n $tree ]] && grep -q '^library = ' "$tree/Cargo.toml"; then
        library_features=', features = ["library"]'
    fi
    local f
    for f in "$work"/*.in; do
        sed -e "s|@PROMPTPACK@|$tree|g" -e "s|@BUILD_CRATE@|$build_crate|g" \
            -e "s|@BUILD_PATH@|$build_path|g" -e "s|@COMPILE@|$compile|g" \
            -e "s|@LIBRARY_FEATURES@|$library_features|g" \
            "$f" > "${f%.in}"
        rm "$f"
    done
    rm -f "$work/Cargo.lock"   # resolve fresh, as a new user would

    # Nothing prebuilt: a target directory of its own.
    export CARGO_TARGET_DIR=$work/target
    # Resolve and download first, so the timed build measures compiling,
    # not the network.
    (cd "$work" && cargo fetch -q)

    echo "round $round: building $app against $label ..." >&2
    # -v makes cargo print each rustc command, so rustc runs can be counted:
    # cargo says "Compiling" once per package, but a package used both by a
    # build script or proc macro (host) and by the program is compiled twice.
    local log=$work/build.log times=$work/time.txt
    if [[ $timer == gnu ]]; then
        (cd "$work" && /usr/bin/time -f '%e %U %S' -o "$times" \
            cargo build --release -v 2> "$log") || { cat "$log" >&2; return 1; }
    else
        local TIMEFORMAT='%R %U %S'
        { time (cd "$work" && cargo build --release -v 2> "$log") ; } 2> "$times" \
            || { cat "$log" >&2; return 1; }
    fi
    # The binary must work: a row for an app that does not run means nothing.
    "$CARGO_TARGET_DIR/release/bench-$app" > "$work/run.out"

    local wall user sys cpu crates rustc_runs notable="" name version runs
    read -r wall user sys < <(tail -n 1 "$times")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    crates=$(grep -c '^ *Compiling ' "$log" || true)
    rustc_runs=$(grep -c -- '--crate-name ' "$log" || true)
    # Each notable package with its version, and "×N" when rustc compiled it
    # N > 1 times. A registry crate's source path names its version (two syn
    # majors share the crate name); a path dependency's does not.
    while read -r name version; do
        [[ $name =~ $notable_re ]] || continue
        runs=$(grep -c -- "--crate-name ${name//-/_} .*/$name-$version/" "$log" || true)
        [[ $runs -gt 0 ]] || runs=$(grep -c -- "--crate-name ${name//-/_} " "$log" || true)
        notable+="${notable:+, }$name $version"
        [[ $runs -le 1 ]] || notable+=" ×$runs"
    done < <(sed -n 's/^ *Compiling \([^ ]*\) v\([^ ]*\).*/\1 \2/p' "$log")
    echo "$app|$label|$round|$crates|$rustc_runs|$wall|$cpu|${notable:--}" >> "$tmp/results"

    # The target directories are large; only --keep needs them afterwards.
    [[ $keep -eq 1 ]] || rm -rf "$CARGO_TARGET_DIR"
}

[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "--rounds wants a positive number" >&2; exit 2; }
started=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# Each round builds every app once, the baseline first, so that each
# ratio compares builds made minutes apart under the same load.
for ((round = 1; round <= rounds; round++)); do
    measure baseline "" "-" "$round"
    measure library-only "$before_dir" "$before_label" "$round"
    measure library-only "$after_dir" "$after_label" "$round"
    measure typed "$before_dir" "$before_label" "$round"
    measure typed "$after_dir" "$after_label" "$round"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

median() { # numbers on stdin, one a line
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The tables. CPU time is user + sys of every compiler process: unlike wall
# time it does not depend much on how many cores were free. A row's ratio is
# the median over rounds of its CPU time over that round's baseline.
report=$script_dir/last-run.md
{
    echo "# Cold release build cost"
    echo
    echo "$started; $(nproc) cores; $(rustc --version); timer: $timer; $rounds round(s);"
    echo "load average $load_start at start, $load_end at end."
    echo
    echo "| app | tree | crates compiled | rustc runs | wall s (median) | CPU s (median) | CPU ÷ baseline (median) | range over rounds | notable crates (×N: compiled N times) |"
    echo "|---|---|--:|--:|--:|--:|--:|--:|---|"
    # Each round's baseline CPU time, for that round's ratios.
    declare -A base_cpu
    while IFS='|' read -r app _ round _ _ _ cpu _; do
        [[ $app == baseline ]] && base_cpu[$round]=$cpu
    done < "$tmp/results"
    # The rows in the order first measured.
    while IFS='|' read -r app label; do
        rows=$(awk -F'|' -v a="$app" -v l="$label" '$1 == a && $2 == l' "$tmp/results")
        IFS='|' read -r _ _ _ crates rustc_runs _ _ notable <<< "$(head -n 1 <<< "$rows")"
        wall=$(cut -d'|' -f6 <<< "$rows" | median)
        cpu=$(cut -d'|' -f7 <<< "$rows" | median)
        ratios=$(while IFS='|' read -r _ _ round _ _ _ c _; do
            awk -v c="$c" -v b="${base_cpu[$round]}" 'BEGIN { printf "%.2f\n", c / b }'
        done <<< "$rows")
        ratio=$(median <<< "$ratios")
        range="$(sort -g <<< "$ratios" | head -n 1)–$(sort -g <<< "$ratios" | tail -n 1)"
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
            "$app" "$label" "$crates" "$rustc_runs" "$wall" "$cpu" "$ratio" "$range" "$notable"
    done < <(cut -d'|' -f1,2 "$tmp/results" | awk '!seen[$0]++')
    echo
    echo "Each build (round, app, tree, CPU s):"
    echo
    while IFS='|' read -r app label round _ _ _ cpu _; do
        echo "- $round $app $label $cpu"
    done < "$tmp/results"
} | tee "$report"
