#!/usr/bin/env bash
# The Node follower end to end, as .ci/run runs it (and anyone can, by hand):
# a SQLite catalog made with the CLI, a console and a relay on it, the
# follower once (`--once`: the snapshot, one render), then following while
# the label moves to a new version.
#
# Usage: examples/node-follower/run-ci.sh
# With $PROMPTPACK set, that binary is used; otherwise the whole tool is
# built with cargo (`promptpack-cli --features full`, as `cargo install`
# would). Exits non-zero when a line the follower should print is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ -z "${PROMPTPACK:-}" ]; then
  (cd "$repo" && cargo build --quiet -p promptpack-cli --features full)
  target=$(cd "$repo" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  PROMPTPACK="$target/debug/promptpack"
fi

(cd "$here" && NPM_CONFIG_UPDATE_NOTIFIER=false npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)

work=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A catalog as a user makes one: the repository's prompts imported, a label.
cp -r "$repo/templates" "$repo/snippets" "$repo/promptpack.toml" "$work/"
pp() { "$PROMPTPACK" catalog --root "$work" "$@"; }
pp init
pp import -m "node follower CI" >/dev/null
pp label code-review production 1
db="sqlite:$work/.promptpack/catalog.db"
# A viewer is enough for the relay and for rendering.
token=$("$PROMPTPACK" console --db "$db" user add node-follower --role viewer 2>/dev/null)
export PROMPTPACK_TOKEN="$token"

# waits_for FILE PATTERN WHAT: until a line of FILE matches PATTERN. The
# bound only guards against a hang (60 s); nothing here measures time.
waits_for() {
  local file=$1 pattern=$2 what=$3 i
  for i in $(seq 600); do
    if grep -qE "$pattern" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "run-ci: no $what after 60 s; $file:" >&2
  cat "$file" >&2
  return 1
}

# Both on port 0: each prints the address it got.
"$PROMPTPACK" console --db "$db" --listen 127.0.0.1:0 --log warn 2>"$work/console.log" &
pids+=($!)
"$PROMPTPACK" relay --db "$db" --listen 127.0.0.1:0 >"$work/relay.log" 2>&1 &
pids+=($!)
waits_for "$work/console.log" '^promptpack console on http://' "console address"
waits_for "$work/relay.log" 'relay listening on http://' "relay address"
console_url=$(grep -oE 'http://[0-9.:]+' "$work/console.log" | head -n 1)
relay_url=$(grep -oE 'http://[0-9.:]+' "$work/relay.log" | head -n 1)
echo "console $console_url, relay $relay_url"

vars='{"repository": "promptpack", "language": "Rust", "strictMode": true}'
# An array, not a function: a function run with `&` is a subshell, and
# killing it would leave node running.
follow=(node "$here/dist/main.js" --relay "$relay_url" --console "$console_url"
  --label production --prompt code-review --vars "$vars")

echo "--- once"
"${follow[@]}" --once | tee "$work/once.log"
grep -q '^snapshot: label=production event=[^ ]* code-review v1$' "$work/once.log"
grep -q '^render: code-review v1 label=production sha256:' "$work/once.log"

echo "--- following while the label moves"
"${follow[@]}" >"$work/follow.log" 2>&1 &
pids+=($!)
waits_for "$work/follow.log" '^render: code-review v1 ' "first render"
# A second version of the prompt, published from the tree, and the label
# moved to it: one change event.
printf '\nName the file of each comment.\n' >>"$work/templates/code-review/system.md"
pp publish code-review -m "node follower CI: v2" >/dev/null
pp label code-review production 2
waits_for "$work/follow.log" '^render: code-review v2 label=production sha256:' "render of v2"
cat "$work/follow.log"
grep -q '^change: code-review v2 event=' "$work/follow.log"
echo "node follower: ok"
