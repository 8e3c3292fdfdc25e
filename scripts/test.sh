#!/usr/bin/env bash
# The README's test command: every test of the workspace
# (`cargo test --all-features`), with the PostgreSQL server the catalog's and
# the live prompts' tests run against.
#
# With PROMPTPACK_TEST_POSTGRES_URL set, the tests use that server. Otherwise
# this installs PostgreSQL's server programs when they are missing and it can
# (scripts/postgres.sh: Debian's package, as root or with sudo; else it says
# in one line what to install and stops), starts one throwaway cluster on
# 127.0.0.1 in a temporary folder for all the test processes, and stops and
# removes it when the tests end, however they end; and in front of it a
# pgbouncer in transaction mode (scripts/pgbouncer.sh; Debian's package,
# installed alike) for the tests through a pooler, unless
# PROMPTPACK_TEST_PGBOUNCER_URL is set. It also installs Debian's
# chromium and chromium-driver for the console's browser suite when missing
# (scripts/chromium.sh).
#
# Usage: scripts/test.sh [ARGS...]   (ARGS go to `cargo test --all-features`)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PROMPTPACK_TEST_POSTGRES_URL:-}" ]; then
  source scripts/postgres.sh
  ensure_postgres_installed
  start_throwaway_postgres
  # pgbouncer in transaction mode in front of that server, for the tests of
  # the catalog and the relay through a pooler. Only in front of our own
  # cluster: it trusts the cluster's superuser, as the cluster does.
  if [ -z "${PROMPTPACK_TEST_PGBOUNCER_URL:-}" ]; then
    source scripts/pgbouncer.sh
    ensure_pgbouncer_installed
    start_throwaway_pgbouncer
  fi
fi

source scripts/chromium.sh
ensure_chromium_installed

cargo test --all-features "$@"
