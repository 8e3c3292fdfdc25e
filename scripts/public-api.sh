#!/usr/bin/env bash
# Lists the public items of the crates a user depends on, `promptpack` (with
# the features an application uses) and `promptpack-build`, from rustdoc's
# all.html pages: the page list the README's public-API table is checked
# against. `unstable-machinery` is left out: it is not public API.
#
#   scripts/public-api.sh            the current tree
#   scripts/public-api.sh DOC_DIR    an already built doc folder (e.g. of an
#                                    older commit) holding promptpack/all.html
set -euo pipefail
cd "$(dirname "$0")/.."

list() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for href, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', text):
    kind = href.rsplit("/", 1)[-1].split(".", 1)[0]
    print(kind, name)
PY
}

if [ $# -ge 1 ]; then
  doc="$1"
else
  target="${CARGO_TARGET_DIR:-$PWD/target}"
  cargo doc --quiet --no-deps -p promptpack -p promptpack-build --features promptpack/testing,promptpack/serde,promptpack/hot-reload
  doc="$target/doc"
fi
for crate in promptpack promptpack_build; do
  if [ -f "$doc/$crate/all.html" ]; then
    echo "## $crate"
    list "$doc/$crate/all.html"
  fi
done
