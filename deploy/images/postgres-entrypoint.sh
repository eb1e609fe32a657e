#!/bin/sh
# Entry of localhost/redline-postgres:dev (Debian's PostgreSQL 15), configured from the
# environment like the common postgres image: on first start, an empty data directory is
# initialized with superuser POSTGRES_USER (default postgres) and password POSTGRES_PASSWORD
# (required), and database POSTGRES_DB (default POSTGRES_USER) is created. Password logins
# (scram-sha-256) from any address; the socket is in /tmp, so the root filesystem can be
# read-only. PGDATA is a directory inside the volume at /var/lib/postgresql/data: a fresh volume
# root may hold lost+found or belong to root, and postgres wants a directory of its own.
set -eu

: "${PGDATA:=/var/lib/postgresql/data/pgdata}"
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "redline-postgres: POSTGRES_PASSWORD is not set (needed to initialize $PGDATA)" >&2
    exit 1
  fi
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    quoted="$(printf '%s' "$POSTGRES_DB" | sed 's/"/""/g')"
    echo "CREATE DATABASE \"$quoted\"" | postgres --single -D "$PGDATA" -c unix_socket_directories=/tmp postgres >/dev/null
  fi
  echo "redline-postgres: initialized $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp "$@"
