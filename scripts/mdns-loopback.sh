#!/usr/bin/env bash
# A private mDNS responder for machines where no avahi-daemon runs (CI, containers):
# a system dbus-daemon (only if none answers) plus an avahi-daemon bound to loopback only,
# IPv4 only, with a generated config. Never uses /etc/avahi/avahi-daemon.conf, which would
# multicast on every real interface.
set -euo pipefail
ME=mdns-loopback.sh
. "$(dirname "$(readlink -f "$0")")/_common.sh"
# Root writes pid files, logs and the daemon's config here: a directory of its own (0700) under /run,
# never a fixed name in /tmp where another user could plant a symbolic link first (issue 34).
STATE=${P2P_MDNS_STATE:-/run/p2p-mdns}
# This script is about the machine's default system bus, whatever the caller's env says.
unset DBUS_SYSTEM_BUS_ADDRESS

usage() {
  cat <<EOF
usage: $ME start|stop|status
  start   start dbus-daemon (if no system bus answers) and a loopback-only avahi-daemon;
          returns once avahi reports it is running (GetState == 2). No-op if avahi answers.
  stop    stop only the daemons this script started (PIDs in \$P2P_MDNS_STATE)
  status  say whether an avahi-daemon answers on the system bus
env: P2P_MDNS_STATE  state/log dir (default /run/p2p-mdns; created 0700, a symlink or a directory
                     other users can write to is refused)
clients: use the default system bus; set AVAHI_COMPAT_NOWARN=1 to silence the dns_sd compat warning
EOF
}

fail_start() { # print the logs, undo what we started, fail
  for f in "$STATE"/*.log; do [ -s "$f" ] && { echo "----- $f"; cat "$f"; }; done >&2
  stop
  die "$1"
}

start() {
  need_root start
  if avahi_running; then say "an avahi-daemon already answers on the system bus; not starting another"; return 0; fi
  private_dir "$STATE"
  mkdir -p /run/dbus
  if ! bus_up; then
    # A stale pid file from a dead bus makes dbus-daemon refuse to start.
    rm -f /run/dbus/pid
    start_bg "$STATE/dbus.pid" dbus-daemon "$STATE/dbus.log" dbus-daemon --system --nofork
    wait_daemon "$STATE/dbus.pid" 10 bus_up || fail_start "system dbus-daemon did not come up"
    say "started system dbus-daemon (PID $(cut -d' ' -f1 "$STATE/dbus.pid"))"
  fi
  # Note: lo lacks the MULTICAST flag, but avahi accepts loopback interfaces anyway and mDNS
  # to 224.0.0.251 on lo works without it (checked with tcpdump), so lo is left untouched.
  avahi_conf p2p-loopback lo >"$STATE/avahi-daemon.conf"
  start_bg "$STATE/avahi.pid" avahi-daemon "$STATE/avahi.log" \
    avahi-daemon -f "$STATE/avahi-daemon.conf" --no-drop-root --no-chroot
  wait_daemon "$STATE/avahi.pid" 20 avahi_running || fail_start "avahi-daemon did not reach state 2 (running)"
  say "started avahi-daemon on lo only (PID $(cut -d' ' -f1 "$STATE/avahi.pid"), log $STATE/avahi.log)"
}

# avahi first: it is a client of the bus.
stop() {
  local pids="" p f
  existing_private_dir "$STATE" || return 0
  # Only processes that are still the ones started (start time, executable): see recorded_pid.
  for f in "$STATE/avahi.pid" "$STATE/dbus.pid"; do
    [ -f "$f" ] && p=$(recorded_pid "$f" 2>/dev/null) && pids="$pids $p"
  done
  stop_pidfile "$STATE/avahi.pid"
  if [ -f "$STATE/dbus.pid" ]; then
    stop_pidfile "$STATE/dbus.pid"
    # dbus-daemon leaves its socket behind; remove it so clients fail fast instead of "refused".
    bus_up || rm -f /run/dbus/pid /run/dbus/system_bus_socket
  fi
  # A daemon started next (the next test) would take an unreaped one, still listed in its pid file
  # and alive to kill(pid, 0), for one already running: wait until each is gone.
  for p in $pids; do while [ -e "/proc/$p" ]; do sleep 0.05; done; done
}

status() {
  local f
  existing_private_dir "$STATE" || true
  for f in "$STATE"/*.pid; do [ -f "$f" ] && say "started by this script: $(cat "$f")"; done
  if avahi_running; then say "avahi-daemon answers on the system bus (running)"
  elif bus_up; then say "system bus answers, but no running avahi-daemon"; return 1
  else say "no system bus, no avahi-daemon"; return 1; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
