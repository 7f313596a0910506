#!/bin/sh
# Installs the servers storebench manages (and tests against) when they are missing.
# Debian/Ubuntu: apt-get as root or through sudo. Elsewhere: prints what to run.
set -eu

need=""
have() { command -v "$1" >/dev/null 2>&1 || [ -x "$2" ]; }
pg_found() { ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1; }

pg_found || need="$need postgresql postgresql-contrib"
have redis-server /usr/bin/redis-server || need="$need redis-server"
have memcached /usr/bin/memcached || need="$need memcached"
have mariadbd /usr/sbin/mariadbd || need="$need mariadb-server"
# add PKG: adds a package to install once.
add() { case " $need " in *" $1 "*) ;; *) need="$need $1" ;; esac; }
for extra in "$@"; do
  case "$extra" in
    chromium) have chromium /usr/bin/chromium || add chromium ;;
    # bench: the field's own load generators that `make bench` compares with.
    # pgbench ships with Debian's server package (postgresql-NN), memaslap as
    # memcaslap in libmemcached-tools, redis-benchmark in redis-tools.
    bench)
      have redis-benchmark /usr/bin/redis-benchmark || add redis-tools
      have memcaslap /usr/bin/memcaslap || have memaslap /usr/bin/memaslap || add libmemcached-tools
      ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || command -v pgbench >/dev/null 2>&1 || add postgresql
      ;;
  esac
done

if [ -z "$need" ]; then
  echo "install-deps: every server binary is installed"
  exit 0
fi

if [ "$(uname -s)" = Darwin ]; then
  echo "install-deps: missing:$need"
  echo "install-deps: on macOS run: brew install postgresql@16 redis memcached mariadb (bench: libmemcached for memaslap)"
  exit 1
fi

if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "install-deps: missing:$need"
      echo "install-deps: run as root: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y$need"
      exit 1
    fi
  fi
  echo "install-deps: installing$need"
  $sudo apt-get update -q
  # Debian's packages would start their own services; storebench starts its own servers.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends$need
  exit 0
fi

echo "install-deps: missing:$need; install them with your package manager"
exit 1
