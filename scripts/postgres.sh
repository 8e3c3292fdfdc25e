# Sourced by scripts/test.sh and .ci/run: PostgreSQL for the catalog's and the
# live prompts' tests, which run against a real server.
source "$(dirname "${BASH_SOURCE[0]}")/debian.sh"

# Makes sure initdb and pg_ctl are installed: Debian's `postgresql` package,
# installed with apt-get when this runs as root or may use sudo without a
# password. Otherwise says in one line what to install and returns 1.
ensure_postgres_installed() {
  if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; then
    return 0
  fi
  install_debian_packages "the catalog's tests need PostgreSQL's server programs (initdb, pg_ctl), version 15 or later" postgresql
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
