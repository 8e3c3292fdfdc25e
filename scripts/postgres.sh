# Sourced by scripts/test.sh and .ci/run: PostgreSQL for the catalog's and the
# live prompts' tests, which run against a real server.

# Makes sure initdb and pg_ctl are installed: Debian's `postgresql` package,
# installed with apt-get when this runs as root or may use sudo without a
# password. Otherwise says in one line what to install and returns 1.
ensure_postgres_installed() {
  if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; then
    return 0
  fi
  local apt=()
  if [ "$(id -u)" -eq 0 ]; then
    apt=(apt-get)
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    apt=(sudo apt-get)
  fi
  if [ ${#apt[@]} -eq 0 ] || ! command -v apt-get >/dev/null; then
    echo "the catalog's tests need PostgreSQL's server programs (initdb, pg_ctl): install PostgreSQL 15 or later (Debian/Ubuntu: sudo apt-get install postgresql), then run this again" >&2
    return 1
  fi
  echo "installing PostgreSQL (Debian's postgresql package) for the catalog's tests" >&2
  # The package lists may be stale or missing; refresh them only if needed.
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y postgresql >/dev/null ||
    { "${apt[@]}" update >/dev/null && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y postgresql >/dev/null; }
}

# Starts one throwaway cluster on 127.0.0.1 in a temporary folder
# (`promptpack-pgtest start`) and exports PROMPTPACK_TEST_POSTGRES_URL for
# every test process; an EXIT trap stops it and removes the folder, however
# the caller ends. Bash exits with the script's status after an EXIT trap
# that does not `exit`.
start_throwaway_postgres() {
  pgdir=$(mktemp -d)
  # Set before the start, so that a half-started server is stopped too.
  trap 'cargo run --quiet -p promptpack-pgtest -- stop "$pgdir" || true; rm -rf "$pgdir"' EXIT
  # Not `export VAR=$(...)`, which would hide a failed start from `set -e`.
  PROMPTPACK_TEST_POSTGRES_URL=$(cargo run --quiet -p promptpack-pgtest -- start "$pgdir")
  export PROMPTPACK_TEST_POSTGRES_URL
  echo "PostgreSQL for the tests at $PROMPTPACK_TEST_POSTGRES_URL" >&2
}
