# Helpers shared by mdns-loopback.sh and lab.sh. Sourced, not run; the caller sets ME.

say() { echo "$ME: $*"; }
die() { echo "$ME: error: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root (try: sudo $0 $*)"; }

# A minimal avahi config that can only ever talk on the interfaces given ($2), with no wide-area DNS
# and no reflector, so a test daemon cannot leak onto a real LAN. IPv4 only, unless $3 says
# ipv6ll (IPv6 only, for a lab veth inside a namespace that has link-local addresses alone) or dual.
# Never IPv6 on the machine's own interfaces: only lab.sh passes $3. $4=yes turns the reflector on,
# for lab.sh's router namespace only, whose allowed interfaces are its two lab veths.
avahi_conf() {
  local v4=yes v6=no
  case ${3:-ipv4} in ipv6ll) v4=no v6=yes ;; dual) v6=yes ;; esac
  cat <<EOF
[server]
host-name=$1
domain-name=local
use-ipv4=$v4
use-ipv6=$v6
allow-interfaces=$2
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000

[wide-area]
enable-wide-area=no

[publish]
publish-hinfo=no
publish-workstation=no
publish-aaaa-on-ipv4=no
publish-a-on-ipv6=no

[reflector]
enable-reflector=${4:-no}
EOF
}

# Both talk to whatever bus DBUS_SYSTEM_BUS_ADDRESS names (default /run/dbus/system_bus_socket).
bus_up() {
  dbus-send --system --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus \
    /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}
avahi_running() { # avahi server state 2 == AVAHI_SERVER_RUNNING
  dbus-send --system --print-reply --reply-timeout=2000 --dest=org.freedesktop.Avahi \
    / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
}

# wait_for SECONDS CMD... : poll CMD every 0.2 s until it succeeds or time runs out.
wait_for() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.2; done
}

# wait_daemon PIDFILE SECONDS CMD... : like wait_for, but give up at once if the daemon has died.
wait_daemon() {
  local pid end=$((SECONDS + $2)) f=$1; shift 2
  read -r pid _ <"$f"
  until "$@"; do
    [ -e "/proc/$pid" ] || { echo "$ME: process $pid exited" >&2; return 1; }
    [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.2
  done
}

# start_bg PIDFILE NAME LOG CMD... : run CMD in the background, detached from our stdio (so a
# caller piping our output never hangs on a daemon), and record "PID NAME". NAME is the program
# the PID must still be running when we stop it (CMD may exec through ip/unshare/sh to get there).
start_bg() {
  local pidf=$1 name=$2 log=$3; shift 3
  "$@" </dev/null >>"$log" 2>&1 &
  echo "$! $name" >"$pidf"
}

# stop_pidfile PIDFILE : SIGTERM the recorded PID if it is still the program we started (PIDs
# get reused), wait up to 5 s for it to exit, then SIGKILL. Removes the pid file.
# alive PID: the process exists and has not exited. An exited one that its parent has not reaped yet
# (state Z) holds no socket or bus name any more; where PID 1 reaps slowly (about 2 s in some
# containers), waiting for it to vanish made every stop that much slower.
alive() {
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != Z ]
}
stop_pidfile() {
  local f=$1 pid name comm i
  [ -f "$f" ] || return 0
  read -r pid name <"$f" || true
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  if [ -n "$comm" ] && [ "$comm" = "$name" ]; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 25); do alive "$pid" || break; sleep 0.2; done
    if alive "$pid"; then say "PID $pid ($name) ignored SIGTERM; sending SIGKILL"; kill -9 "$pid" 2>/dev/null || true; fi
    say "stopped $name (PID $pid)"
  elif [ -n "$comm" ]; then
    say "warning: PID $pid is now '$comm', not '$name'; not killing it"
  fi
  rm -f "$f"
}
