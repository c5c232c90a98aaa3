#!/usr/bin/env bash
# Idempotent machine setup for p2p: install the packages it needs (Debian/Ubuntu), then make
# sure an mDNS responder answers on the system bus (the running avahi, or a loopback-only one).
set -euo pipefail
ME=setup.sh
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/_common.sh"
PKGS=(avahi-daemon avahi-utils libavahi-compat-libdnssd-dev libavahi-client-dev libsqlite3-dev sqlite3 dbus iproute2 nftables socat netcat-openbsd tcpdump python3 tmux curl openssl
      libqrencode-dev chromium chromium-driver zbar-tools)
# Only for Benchmarks/run.sh (--bench): the baselines it compares with.
BENCH_PKGS=(iperf3 time python3-venv)
# Benchmarks run what is in it (as root, often): a private place, never /tmp, where another user could
# plant bin/wormhole first (issue 34).
WORMHOLE_VENV=${WORMHOLE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/p2p-bench/wormhole}
BENCH=0
# We check the machine's default system bus, whatever the caller's env says.
unset DBUS_SYSTEM_BUS_ADDRESS

case "${1:-}" in
  -h|--help|help)
    cat <<EOF
usage: $ME [--bench]
  Installs missing packages (${PKGS[*]}) with apt-get (via sudo if not root),
  then uses the running avahi-daemon, or starts a private loopback-only one via mdns-loopback.sh start.
  --bench  also what Benchmarks/run.sh compares with: ${BENCH_PKGS[*]} (apt-get), and magic-wormhole
           with its mailbox server and transit relay in a Python venv at \$WORMHOLE_VENV
           (default ~/.cache/p2p-bench/wormhole; pip, from PyPI). An existing venv is used only if it,
           its bin/ and its programs belong to this user (or root) and nobody else can write to them.
EOF
    exit 0 ;;
  --bench) BENCH=1 ;;
  "") ;;
  *) echo "$ME: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo

# A venv someone else made (or can change) is refused before anything is installed or run from it.
if [ "$BENCH" = 1 ] && { [ -e "$WORMHOLE_VENV" ] || [ -L "$WORMHOLE_VENV" ]; }; then
  for p in "$WORMHOLE_VENV" "$WORMHOLE_VENV/bin" "$WORMHOLE_VENV/bin/wormhole" "$WORMHOLE_VENV/bin/twist"; do
    [ -e "$p" ] || continue
    mode_private "$p" || die "refusing $WORMHOLE_VENV: $p belongs to another user or others can write to it; remove it, or set WORMHOLE_VENV to a directory of your own"
  done
fi

missing=()
[ "$BENCH" = 1 ] && PKGS+=("${BENCH_PKGS[@]}")
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "$ME: installing: ${missing[*]}"
  # Without systemd (containers, CI) a package's init script would start avahi-daemon with the stock
  # config, which multicasts on every interface. Forbid service starts during the install unless the
  # machine already has a policy (policy-rc.d exit 101 = "action not allowed").
  policy=/usr/sbin/policy-rc.d
  if [ ! -d /run/systemd/system ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null; $SUDO chmod +x "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  # Default apt behaviour also pulls in Recommends such as libnss-mdns (resolves *.local names).
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
else
  echo "$ME: all packages already installed"
fi

# The e2e tests' raw protocol peer makes its TLS certificate with Python's `cryptography`.
if ! python3 -c 'import cryptography' 2>/dev/null; then
  echo "$ME: installing Python's cryptography package (for the e2e raw peer)"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-cryptography >/dev/null 2>&1 || python3 -m pip install --quiet cryptography
fi

# Tests/e2e/browser.sh drives chromium (chromium-driver) with Selenium.
if ! python3 -c 'import selenium' 2>/dev/null; then
  echo "$ME: installing Python's selenium package (for the e2e browser test)"
  # From PyPI (Debian's python3-selenium lags behind chromium); a Debian python marks itself externally managed.
  python3 -m pip install --quiet selenium 2>/dev/null || python3 -m pip install --quiet --break-system-packages selenium
fi

# Tests/e2e/localsend.sh runs p2p against two independent LocalSend implementations from PyPI (only ever
# inside the lab's namespaces: both multicast on their default interface).
for tool in localsendd:localsendd localsend-cli:localsend-cli; do
  if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
    echo "$ME: installing ${tool#*:} (pip, for the LocalSend e2e test)"
    python3 -m pip install --quiet "${tool#*:}"
  fi
done

if [ "$BENCH" = 1 ] && { [ ! -x "$WORMHOLE_VENV/bin/wormhole" ] || [ ! -x "$WORMHOLE_VENV/bin/twist" ]; }; then
  echo "$ME: installing magic-wormhole, its mailbox server and transit relay into $WORMHOLE_VENV (pip)"
  python3 -m venv "$WORMHOLE_VENV"
  "$WORMHOLE_VENV/bin/pip" install -q magic-wormhole magic-wormhole-mailbox-server magic-wormhole-transit-relay
fi

if dbus-send --system --print-reply --reply-timeout=2000 --dest=org.freedesktop.Avahi \
     / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'; then
  echo "$ME: an avahi-daemon is running on the system bus; p2p will use it"
else
  $SUDO "$HERE/mdns-loopback.sh" start
  echo "$ME: Started a private avahi-daemon bound to loopback only; peers on other machines cannot see you until the system's avahi-daemon runs (e.g. sudo systemctl start avahi-daemon)."
fi
