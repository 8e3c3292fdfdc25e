#!/usr/bin/env bash
# The crates a user's build compiles, checked against lists committed under
# bench/build-cost/, so that a new crate in a user's build fails CI until the
# list is updated in the commit that explains it. Unlike a timed build, the
# lists do not depend on the machine's load.
#
# The apps are bench/build-cost's, pointed at this checkout through their path
# dependency as run.sh does, and resolved from this checkout's Cargo.lock
# (offline when the registry cache has every crate):
#
#   deps-library-only.txt  what a `Library`-only app compiles
#   deps-typed.txt         what a typed app's runtime compiles (its
#                          [dependencies])
#   deps-typed-build.txt   what a typed app's build script compiles (its
#                          [build-dependencies])
#   deps-cli.txt           what the command line compiles with its default
#                          features (`cargo run -p promptpack-cli -- render …`,
#                          the README's first command): no web server, no
#                          database driver, no tokenizer
#
# Each list holds crate names, sorted, one a line: every crate compiled for
# the dependencies of that kind, the dependencies of their build scripts and
# proc macros included. Its `duplicate` lines name the crates present in more
# than one semver-incompatible version, each with its versions (for
# deps-typed-build.txt: in the whole typed build, runtime and build script).
#
#   scripts/dependency-lists.sh [--check]   compare; print a diff and fail on
#                                           any difference
#   scripts/dependency-lists.sh --update    write the lists
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=$repo/bench/build-cost

mode=check
case "${1:---check}" in
    --check) ;;
    --update) mode=update ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/promptpack-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Copies app $1 to $tmp/$1 with its templates filled in for this checkout
# (the workspace layout of run.sh: promptpack-build is the build dependency).
setup() { # APP
    local work=$tmp/$1 f
    mkdir -p "$work"
    cp -r "$bench/apps/$1/." "$work/"
    for f in "$work"/*.in; do
        sed -e "s|@PROMPTPACK@|$repo|g" -e "s|@BUILD_CRATE@|promptpack-build|g" \
            -e "s|@BUILD_PATH@|$repo/crates/promptpack-build|g" \
            -e "s|@COMPILE@|promptpack_build::compile|g" \
            -e "s|@LIBRARY_FEATURES@|, features = [\"library\"]|g" "$f" > "${f%.in}"
        rm "$f"
    done
    # The workspace's lock: the versions CI builds and tests, and no network.
    cp "$repo/Cargo.lock" "$work/Cargo.lock"
}

# `cargo tree` in app $1's copy, offline first: CI's earlier steps have
# fetched every crate of the lock. Prints "name version" lines.
cargo_tree() { # APP ARGS...
    local app=$1
    shift
    local args=(tree --manifest-path "$tmp/$app/Cargo.toml" --prefix none --format '{p}' "$@")
    if ! cargo "${args[@]}" --offline 2> "$tmp/tree.err" > "$tmp/tree.out"; then
        (cd "$tmp/$app" && cargo fetch -q) &&
            cargo "${args[@]}" 2> "$tmp/tree.err" > "$tmp/tree.out" ||
            { cat "$tmp/tree.err" >&2; return 1; }
    fi
    awk '{ print $1, $2 }' "$tmp/tree.out"
}

# "name version" of every crate compiled for app $1's direct dependencies of
# kind $2 (normal, build), their build scripts' dependencies included.
compiled_for() { # APP KIND
    local app=$1 kind=$2 direct name
    # Depth 1: the app itself, then its direct dependencies of that kind.
    direct=$(cargo_tree "$app" -e "$kind" --depth 1)
    for name in $(sed 1d <<< "$direct" | awk '{ print $1 }'); do
        cargo_tree "$app" -e normal,build -p "$name"
    done | sort -u
}

# The list file for "name version" lines on stdin; duplicates counted in the
# "name version" lines of file $2 (the same lines when $2 is -).
list() { # TITLE DUPLICATES_OF
    local lines=$tmp/lines
    cat > "$lines"
    local dups=$2
    [[ $dups != - ]] || dups=$lines
    echo "$1"
    echo "# $(awk '{ print $1 }' "$lines" | sort -u | wc -l) crates. Written by scripts/dependency-lists.sh --update; CI checks it."
    echo "# One version of each crate is the goal: each \`duplicate\` line at the end is a crate in several."
    awk '{ print $1 }' "$lines" | sort -u
    # Semver-compatible versions are one: 1.2.3 → 1, 0.11.5 → 0.11, 0.0.3 → 0.0.3.
    awk '
        {
            version = $2; sub(/^v/, "", version)
            split(version, v, /[.+-]/)
            key = v[1] != "0" ? v[1] : v[2] != "0" ? v[1] "." v[2] : v[1] "." v[2] "." v[3]
            if (!((($1) SUBSEP key) in seen)) { seen[$1, key] = 1; versions[$1] = versions[$1] " " key; n[$1]++ }
        }
        END { for (name in n) if (n[name] > 1) print "duplicate " name versions[name] }
    ' "$dups" | sort
}

setup library-only
setup typed
compiled_for typed normal > "$tmp/typed-normal"
compiled_for typed build > "$tmp/typed-build"
sort -u "$tmp/typed-normal" "$tmp/typed-build" > "$tmp/typed-all"
mkdir -p "$tmp/lists"
compiled_for library-only normal |
    list "# Crates a Library-only app (bench/build-cost/apps/library-only) compiles." - \
    > "$tmp/lists/deps-library-only.txt"
list "# Crates a typed app's runtime (bench/build-cost/apps/typed, [dependencies]) compiles." - \
    < "$tmp/typed-normal" > "$tmp/lists/deps-typed.txt"
list "# Crates a typed app's build script (bench/build-cost/apps/typed, [build-dependencies]) compiles; duplicates over the whole typed build." "$tmp/typed-all" \
    < "$tmp/typed-build" > "$tmp/lists/deps-typed-build.txt"

# The CLI is a member of this workspace: its tree, default features, from
# the workspace's own lock.
cli_tree() {
    local args=(tree --manifest-path "$repo/Cargo.toml" -p promptpack-cli -e normal,build
        --prefix none --format '{p}' --locked)
    cargo "${args[@]}" --offline 2> "$tmp/tree.err" > "$tmp/tree.out" ||
        cargo "${args[@]}" 2> "$tmp/tree.err" > "$tmp/tree.out" ||
        { cat "$tmp/tree.err" >&2; return 1; }
    awk '{ print $1, $2 }' "$tmp/tree.out" | sort -u
}
cli_tree | list "# Crates the command line (crates/promptpack-cli, default features: cargo run -p promptpack-cli) compiles." - \
    > "$tmp/lists/deps-cli.txt"

status=0
for file in deps-library-only.txt deps-typed.txt deps-typed-build.txt deps-cli.txt; do
    if [[ $mode == update ]]; then
        cp "$tmp/lists/$file" "$bench/$file"
        echo "wrote bench/build-cost/$file"
    elif ! diff -u --label "bench/build-cost/$file (committed)" --label "$file (this tree)" \
        "$bench/$file" "$tmp/lists/$file"; then
        status=1
    fi
done
if [[ $status -ne 0 ]]; then
    echo "A user's dependency tree changed: if that is intended, run scripts/dependency-lists.sh --update and commit the lists with the change that explains them." >&2
fi
exit $status
