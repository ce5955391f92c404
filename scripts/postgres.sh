#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests (issue 16: the store tests and the multi-host tests run
# against SQLite and PostgreSQL): Debian's server binaries, a data directory of its own, a free
# port on 127.0.0.1, trust authentication on loopback only. Nothing of the host's PostgreSQL
# (clusters, services) is touched.
#
#   scripts/postgres.sh start DIR   installs Debian's postgresql if missing, starts a server
#                                   in DIR, prints its URL (postgres://postgres@127.0.0.1:PORT/postgres)
#   scripts/postgres.sh stop DIR    stops it (fast shutdown) and removes DIR
#   scripts/postgres.sh restart DIR [SECONDS]
#                                   stops it, waits SECONDS (default 0), starts it again on
#                                   the same port (the failure drill: connections are cut)
set -euo pipefail
cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|restart DIR" >&2; exit 2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] && [ "$cmd" = start ]; then
  echo "postgres: installing Debian's postgresql" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

# initdb and postgres refuse to run as root: they run as the package's postgres user.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    # The server's user must reach DIR: a private temporary parent (mktemp -d) gets the
    # search bit only (no listing).
    parent=$(dirname "$(realpath "$dir")")
    runuser -u postgres -- test -x "$parent" || chmod o+x "$parent"
  fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # fsync off: a test database is thrown away, and durability is not what the tests measure.
  # 300 connections: a console holds five (BENCHMARKS.md "Fifty hosts on one PostgreSQL").
  echo "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >"$dir/options"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/options")" >&2 \
    || { cat "$dir/server.log" >&2; exit 1; }
  echo "postgres://postgres@127.0.0.1:$port/postgres"
  ;;
restart)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
  sleep "${3:-0}"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/options")" >&2 \
    || { cat "$dir/server.log" >&2; exit 1; }
  ;;
stop)
  if [ -d "$dir/data" ] && [ -n "$bin" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start|stop|restart DIR" >&2; exit 2 ;;
esac
