# Sourced by scripts/test.sh and .ci/run, after scripts/postgres.sh: a
# throwaway pgbouncer in front of the throwaway PostgreSQL, so that the
# catalog and the relay are tried through the pooler fleets put in front of
# PostgreSQL (transaction mode: a server connection per transaction, no
# session state such as LISTEN or protocol-level prepared statements).
source "$(dirname "${BASH_SOURCE[0]}")/debian.sh"

# Makes sure pgbouncer is installed: Debian's `pgbouncer` package, installed
# with apt-get when this runs as root or may use sudo without a password.
# Installing the package only enables its systemd unit, which we never start
# (and which a container without systemd cannot start either).
ensure_pgbouncer_installed() {
  if command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ]; then
    return 0
  fi
  install_debian_packages "the relay's tests through a pooler need pgbouncer" pgbouncer
}

# Starts pgbouncer on 127.0.0.1 on a free port in a temporary folder, in
# transaction mode, in front of PROMPTPACK_TEST_POSTGRES_URL (which
# start_throwaway_postgres exports), and exports PROMPTPACK_TEST_PGBOUNCER_URL:
# the same URL through pgbouncer. Every database name is passed through (the
# tests create databases of their own), logging in as the cluster's superuser.
#
# Authentication matches the cluster's: promptpack-pgtest's initdb uses trust
# for the `postgres` superuser, so pgbouncer trusts too (its auth_file still
# has to name the user). pgbouncer refuses to run as root, so as root it runs
# as the `postgres` system user (Debian's postgresql and pgbouncer packages
# create it; promptpack-pgtest runs initdb and pg_ctl as that user too).
#
# The EXIT trap already set (the cluster's) is kept: pgbouncer is stopped
# first, then the cluster, then whatever the trap did before.
start_throwaway_pgbouncer() {
  if [ -z "${PROMPTPACK_TEST_POSTGRES_URL:-}" ]; then
    echo "start_throwaway_pgbouncer: PROMPTPACK_TEST_POSTGRES_URL is not set (start_throwaway_postgres first)" >&2
    return 1
  fi
  local bin
  bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  # postgres://USER@HOST:PORT/DB: the cluster's host and port.
  local rest=${PROMPTPACK_TEST_POSTGRES_URL#*://}
  local user=${rest%%@*}
  local hostport=${rest#*@}
  hostport=${hostport%%/*}
  local pg_host=${hostport%%:*} pg_port=${hostport##*:}
  user=${user%%:*}

  pgbouncer_dir=$(mktemp -d)
  # Chain the EXIT trap: `trap -p` prints `trap -- 'COMMAND' EXIT`, quoted for
  # the shell, so eval gives back COMMAND as the third word.
  local previous=()
  eval "previous=($(trap -p EXIT))"
  pgbouncer_previous_trap=${previous[2]:-}
  trap 'stop_throwaway_pgbouncer; eval "$pgbouncer_previous_trap"' EXIT

  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    run=(runuser -u postgres --)
  fi

  local attempt port
  for attempt in 1 2 3; do
    # A port free a moment ago: another process may take it before pgbouncer
    # binds it, hence the attempts.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$pgbouncer_dir/pgbouncer.ini" <<EOF
; Written by scripts/pgbouncer.sh: a throwaway pooler for tests.
[databases]
* = host=$pg_host port=$pg_port user=$user

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $pgbouncer_dir/users.txt
pool_mode = transaction
; The live prompts' tests open many connections at once.
max_client_conn = 2000
default_pool_size = 20
logfile = $pgbouncer_dir/pgbouncer.log
pidfile = $pgbouncer_dir/pgbouncer.pid
admin_users = $user
EOF
    printf '"%s" ""\n' "$user" >"$pgbouncer_dir/users.txt"
    if [ ${#run[@]} -gt 0 ]; then
      chown -R postgres:postgres "$pgbouncer_dir"
    fi
    if "${run[@]}" "$bin" -d "$pgbouncer_dir/pgbouncer.ini" >>"$pgbouncer_dir/start.log" 2>&1 &&
      wait_for_pgbouncer "$port"; then
      PROMPTPACK_TEST_PGBOUNCER_URL="postgres://$user@127.0.0.1:$port/postgres"
      export PROMPTPACK_TEST_PGBOUNCER_URL
      echo "pgbouncer (transaction mode) for the tests at $PROMPTPACK_TEST_PGBOUNCER_URL" >&2
      return 0
    fi
    echo "pgbouncer did not start on port $port (attempt $attempt):" >&2
    tail -n 20 "$pgbouncer_dir/start.log" "$pgbouncer_dir/pgbouncer.log" >&2 2>/dev/null || true
    stop_throwaway_pgbouncer_process
  done
  return 1
}

# Waits up to 10 s for a query through pgbouncer on PORT to answer.
wait_for_pgbouncer() {
  local port=$1 i
  for i in $(seq 100); do
    if psql -X -q -h 127.0.0.1 -p "$port" -U "$user" -d postgres -c 'select 1' >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

stop_throwaway_pgbouncer_process() {
  local pid
  if [ -f "$pgbouncer_dir/pgbouncer.pid" ]; then
    pid=$(cat "$pgbouncer_dir/pgbouncer.pid")
    # SIGINT: pgbouncer's "safe shutdown" waits for clients; SIGTERM is
    # immediate, which is what a throwaway pooler wants.
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$pgbouncer_dir/pgbouncer.pid"
  fi
}

stop_throwaway_pgbouncer() {
  if [ -n "${pgbouncer_dir:-}" ]; then
    stop_throwaway_pgbouncer_process
    rm -rf "$pgbouncer_dir"
  fi
}
