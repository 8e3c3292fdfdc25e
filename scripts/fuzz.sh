#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time, one after the
# other, seeded from the fixtures, and sums up executions and findings.
#
#   FUZZ_SECONDS=60 scripts/fuzz.sh                 # each target for 60 s
#   FUZZ_TARGETS="codegen" FUZZ_SECONDS=600 scripts/fuzz.sh
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 60)
#   FUZZ_TARGETS    targets to run (default: parse resolve_render codegen snippet_fanout answer)
#   FUZZ_SANITIZER  cargo fuzz --sanitizer (default none: the crate has no
#                   unsafe code, and the address sanitizer halves the speed)
#   FUZZ_MAX_LEN    -max_len for libFuzzer (default 4096)
#
# One more target, codegen_compiles, is not a libFuzzer target: compiling
# generated code takes rustc, so it runs tests/integration/codegen_compiles.rs in
# batches of 200 random trees with a new seed each, one `cargo check` per
# batch, until the time is up (FUZZ_TARGETS="codegen_compiles").
#
# Works on the stable toolchain through RUSTC_BOOTSTRAP=1 (cargo-fuzz needs
# nightly flags). Crashes are saved in fuzz/artifacts/<target>/; reproduce one
# with `RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none <target> <file>`,
# then keep it as a regression case under tests/ before fixing it. Exits 1
# when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-parse resolve_render codegen snippet_fanout answer}"
sanitizer="${FUZZ_SANITIZER:-none}"
max_len="${FUZZ_MAX_LEN:-4096}"

if [ "$targets" != codegen_compiles ] && ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2
  exit 2
fi
if ! rustc --version | grep -q nightly; then
  export RUSTC_BOOTSTRAP=1
fi

# Seed corpora: the fixture cases (already in the case format the
# resolve_render and codegen targets read), the sample prompts as raw files
# (one template each) and all of them as one case, and past findings.
seed() {
  local dir="fuzz/corpus/$1"
  mkdir -p "$dir"
  cp tests/inputs/*.txt "$dir/"
  # Past findings, replayed first (see fuzz/regressions/README.md).
  if [ -d "fuzz/regressions/$1" ]; then
    cp "fuzz/regressions/$1"/* "$dir/"
  fi
  local f name all="$dir/seed-samples.txt"
  : >"$all"
  for f in templates/*/*.md snippets/*.md; do
    name="${f//\//_}"
    cp "$f" "$dir/seed-raw-$name"
    printf -- '--- %s\n' "$f" >>"$all"
    cat "$f" >>"$all"
    printf '\n' >>"$all"
  done
}

findings() {
  if [ -d "fuzz/artifacts/$1" ]; then find "fuzz/artifacts/$1" -type f | wc -l; else echo 0; fi
}

mkdir -p fuzz/logs
failed=0
summary=""
# Batches of random trees whose generated code must compile; a failing
# batch prints its seed (PROMPTPACK_COMPILE_SEED repeats it).
compile_batches() {
  local log="fuzz/logs/codegen_compiles.log" end=$((SECONDS + seconds)) batches=0 seed
  : >"$log"
  while [ "$SECONDS" -lt "$end" ]; do
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    echo "--- seed $seed" >>"$log"
    if ! PROMPTPACK_COMPILE_SEED="$seed" PROMPTPACK_COMPILE_TREES=200 \
      cargo test --all-features --test integration codegen_compiles::random_trees >>"$log" 2>&1; then
      echo "codegen_compiles: a batch failed: PROMPTPACK_COMPILE_SEED=$seed (log: $log)"
      return 1
    fi
    batches=$((batches + 1))
  done
  echo "codegen_compiles: $batches batch(es) of 200 trees compiled"
}

for target in $targets; do
  if [ "$target" = codegen_compiles ]; then
    line=$(compile_batches) || failed=1
    echo "$line"
    summary+="$line"$'\n'
    continue
  fi
  seed "$target"
  log="fuzz/logs/$target.log"
  before=$(findings "$target")
  echo "=== $target: ${seconds}s (log: $log)"
  status=0
  cargo fuzz run --sanitizer "$sanitizer" "$target" -- \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
    -rss_limit_mb=2048 -dict=fuzz/promptpack.dict -print_final_stats=1 \
    >"$log" 2>&1 || status=$?
  after=$(findings "$target")
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  line="$target: ${execs:-?} execs, coverage ${cov:-?}, $((after - before)) new finding(s), exit $status"
  echo "$line"
  summary+="$line"$'\n'
  if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
    failed=1
    if [ "$after" -gt "$before" ]; then
      grep -aE -A3 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -30 || true
    else
      tail -n 15 "$log"
    fi
  fi
done
printf '\n=== summary\n%s' "$summary"
exit "$failed"
