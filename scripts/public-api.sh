#!/usr/bin/env bash
# Lists the public items of the crates a user depends on, `promptpack` (with
# the features an application uses) and `promptpack-build`, from rustdoc's
# pages: each item of all.html with its declaration (fields, variants, a
# trait's methods, `#[non_exhaustive]`) and the signatures of its inherent
# methods. CI diffs it against scripts/public-api.golden (`--check`); the
# ARCHITECTURE.md table is checked against it. `unstable-machinery` is left
# out: it is not public API. Stable rustdoc's HTML; no nightly.
#
#   scripts/public-api.sh            the current tree
#   scripts/public-api.sh DOC_DIR    an already built doc folder (e.g. of an
#                                    older commit) holding promptpack/all.html
#   scripts/public-api.sh --check [DOC_DIR]
#                                    the current tree (or DOC_DIR) against the
#                                    golden: print a diff and fail on any
#                                    difference, or on a type of
#                                    promptpack-core/-load that the API shows
#                                    without exporting it
#   scripts/public-api.sh --update   write the golden
#
# The HTML is rustdoc's: a new toolchain may print a declaration another way,
# and then the golden is written again with --update in a commit of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

list() {
  python3 - "$1" <<'PY'
import html, os, re, sys

def text(fragment):
    """A fragment of rustdoc's HTML as the code it shows."""
    fragment = re.sub(r'<a class="(src|anchor)[^"]*"[^>]*>.*?</a>', "", fragment)
    fragment = re.sub(r"<summary[^>]*>.*?</summary>", "", fragment, flags=re.S)
    fragment = re.sub(r"<br\s*/?>", "\n", fragment)
    fragment = re.sub(r"<div class=\"code-attribute\">(.*?)</div>", r"\1\n", fragment)
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()

def unlinked(fragment, enum=False):
    """The type names in a fragment that rustdoc could not link: types of
    crates not documented here (no --no-deps docs), such as the compiler's.
    An enum's variant names, each at the start of its line, are not types
    (`Shape::Conversation` is no `Conversation`)."""
    fragment = re.sub(r"<a [^>]*>.*?</a>", "", fragment, flags=re.S)
    fragment = re.sub(r"<summary[^>]*>.*?</summary>", "", fragment, flags=re.S)
    code = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    if enum:
        code = re.sub(r"(?m)^\s*[A-Z][A-Za-z0-9_]*(?=\s*[,({]|\s*$)", "", code)
    # `Iterator<Item = T>`: an associated type's name, not a type.
    code = re.sub(r"\b[A-Z][A-Za-z0-9_]*\s*=", "", code)
    return set(re.findall(r"\b[A-Z][A-Za-z0-9_]*\b", code))

unlinked_out = open(os.environ["PUBLIC_API_UNLINKED"], "a") if os.environ.get("PUBLIC_API_UNLINKED") else None

# Inherent items only: what follows these headings is trait impls,
# auto traits, blanket impls and a trait's implementors.
END = re.compile(r'id="(trait-implementations|synthetic-implementations|'
                 r'blanket-implementations|implementors|foreign-impls|deref-methods)')
MEMBER = re.compile(r'id="(structfield|variant|method|tymethod|associatedconstant|'
                    r'associatedtype)\.[^"]+"[^>]*>(.*?)</(?:section|span)>', re.S)

index = sys.argv[1]
page_dir = os.path.dirname(index)
text_all = open(index, encoding="utf-8").read()
for href, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', text_all):
    kind = href.rsplit("/", 1)[-1].split(".", 1)[0]
    print(kind, name)
    page = open(os.path.join(page_dir, href), encoding="utf-8").read()
    decl = re.search(r'<pre class="rust item-decl"><code>(.*?)</code></pre>', page, re.S)
    if decl and kind != "macro":
        for line in text(decl.group(1)).splitlines():
            print("    " + line.rstrip())
        if unlinked_out:
            for word in unlinked(decl.group(1), kind == "enum"):
                print(name, word, file=unlinked_out)
    end = END.search(page)
    seen = set()
    for member_kind, body in MEMBER.findall(page[: end.start() if end else len(page)]):
        if member_kind in ("structfield", "variant") or not body.strip():
            continue  # the declaration shows them
        shown = " ".join(text(body).split())
        if unlinked_out:
            for word in unlinked(body):
                print(name, word, file=unlinked_out)
        if shown and shown not in seen:
            seen.add(shown)
            print("    impl: " + shown)
PY
}

mode=print doc=""
case "${1:-}" in
  --check) mode=check; doc="${2:-}" ;;
  --update) mode=update ;;
  "") ;;
  *) doc="$1" ;;
esac
if [ -z "$doc" ]; then
  target="${CARGO_TARGET_DIR:-$PWD/target}"
  cargo doc --quiet --no-deps -p promptpack -p promptpack-build --features promptpack/testing,promptpack/serde,promptpack/hot-reload,promptpack/live,promptpack/tracing,promptpack/async-openai-0_43,promptpack/genai-0_7,promptpack/rig-0_44
  doc="$target/doc"
fi
api() {
  for crate in promptpack promptpack_build; do
    if [ -f "$doc/$crate/all.html" ]; then
      echo "## $crate"
      list "$doc/$crate/all.html"
    fi
  done
}
golden=scripts/public-api.golden
case "$mode" in
  print) api ;;
  update) api > "$golden"; echo "wrote $golden" ;;
  check)
    # Type names rustdoc could not link are of crates not documented here;
    # those of promptpack-core and promptpack-load must be API items
    # themselves (re-exported on purpose), never the compiler's internals.
    export PUBLIC_API_UNLINKED="$doc/public-api-unlinked.txt"
    : > "$PUBLIC_API_UNLINKED"
    api > "$doc/public-api.txt"
    internal=$(grep -rhoE '^\s*pub (struct|enum|trait|type|union) [A-Z][A-Za-z0-9_]*' \
      crates/promptpack-core/src crates/promptpack-load/src | awk '{ print $3 }' | sort -u)
    exported=$(grep -E '^[a-z]+ ' "$doc/public-api.txt" | awk '{ n = $2; sub(/.*::/, "", n); print n }' | sort -u)
    leaked=$(sort -u "$PUBLIC_API_UNLINKED" |
      awk -v internal="$internal" -v exported="$exported" '
        BEGIN { split(internal, i, "\n"); for (k in i) in_core[i[k]] = 1
                split(exported, e, "\n"); for (k in e) in_api[e[k]] = 1 }
        ($2 in in_core) && !($2 in in_api) { print "  " $1 " shows " $2 }')
    if [ -n "$leaked" ]; then
      echo "The public API names types of promptpack-core or promptpack-load that it does not export (re-export them on purpose, or keep them out of the API):" >&2
      echo "$leaked" >&2
      exit 1
    fi
    if ! diff -u --label "$golden (committed)" --label "public API (this tree)" "$golden" "$doc/public-api.txt"; then
      echo "The public API changed: if that is intended, run scripts/public-api.sh --update, check ARCHITECTURE.md's table and commit both with the change." >&2
      exit 1
    fi ;;
esac
