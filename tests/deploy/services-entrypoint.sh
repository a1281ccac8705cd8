#!/bin/sh
# `postgres ...` or `redis-server ...` as the official images run them (the compose test's stand-ins, built from
# Debian's packages): PostgreSQL's first start runs initdb with POSTGRES_USER, POSTGRES_PASSWORD and
# POSTGRES_INITDB_ARGS and creates POSTGRES_DB, on the unix socket only, before the server listens on TCP.
set -eu
as() { user=$1; shift; exec setpriv --reuid="$user" --regid="$user" --init-groups "$@"; }
case "${1:-}" in
postgres)
  shift
  bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
  PGDATA=${PGDATA:-/var/lib/postgresql/data}
  user=${POSTGRES_USER:-postgres}
  mkdir -p "$PGDATA"; chown postgres:postgres "$PGDATA"; chmod 0700 "$PGDATA"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp); printf '%s' "${POSTGRES_PASSWORD:?}" > "$pwfile"; chown postgres "$pwfile"
    # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is several words
    (as postgres "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 ${POSTGRES_INITDB_ARGS:-})
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    (as postgres "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/tmp" -w start)
    if [ "${POSTGRES_DB:-$user}" != postgres ]; then
      (as postgres "$bin/createdb" -h /tmp -U "$user" "${POSTGRES_DB:-$user}")
    fi
    (as postgres "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop)
  fi
  as postgres "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp "$@"
  ;;
redis-server)
  as redis "$@" --protected-mode no   # as the official image is built: other containers connect without a password
  ;;
*)
  exec "$@"
  ;;
esac
