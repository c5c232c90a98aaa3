# Helpers shared by mdns-loopback.sh, lab.sh and setup.sh. Sourced, not run; the caller sets ME.
# They run as root: nothing here follows a path another user could have planted (a symlink at a fixed
# name in /tmp), trusts a pid file without checking its process, or runs a program from a place others
# can write to (issue 34).

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

# mode_private PATH: PATH (a symlink's target) is owned by this user or root and writable by nobody else.
mode_private() {
  local owner mode
  owner=$(stat -L -c %u "$1" 2>/dev/null) && mode=$(stat -L -c %a "$1" 2>/dev/null) || return 1
  { [ "$owner" = "$(id -u)" ] || [ "$owner" = 0 ]; } && [ $((8#$mode & 8#022)) = 0 ]
}

# private_dir DIR: DIR as a directory only this user can enter: created with mode 0700 if it is
# missing (by mkdir, which never follows a planted name), else checked: a real directory, not a
# symbolic link, owned by this user, no access for group or others. Anything else is refused with
# the reason, before a file in it is read or written.
private_dir() {
  local d=$1 mode
  [ -n "$d" ] || die "no state directory given"
  [ -L "$d" ] && die "refusing $d: it is a symbolic link (planted by someone?); remove it or set another directory"
  if [ ! -e "$d" ]; then mkdir -m 0700 "$d" 2>/dev/null || [ -d "$d" ] || die "cannot create $d"; fi
  [ -L "$d" ] && die "refusing $d: it is a symbolic link (planted by someone?); remove it or set another directory"
  [ -d "$d" ] || die "refusing $d: not a directory"
  [ "$(stat -c %u "$d")" = "$(id -u)" ] || die "refusing $d: owned by uid $(stat -c %u "$d"), not by uid $(id -u) (planted by someone?)"
  mode=$(stat -c %a "$d")
  [ $((8#$mode & 8#077)) = 0 ] || die "refusing $d: mode $mode lets other users in (want 0700)"
}

# existing_private_dir DIR: like private_dir for a directory that must already be there (stop, down,
# status read pid files from it); false when it does not exist (nothing was started).
existing_private_dir() {
  [ -e "$1" ] || [ -L "$1" ] || return 1
  private_dir "$1"
}

# proc_start PID: when the process started (field 22 of /proc/PID/stat, clock ticks since boot): with
# the PID, it names one process for good, since PIDs are reused.
proc_start() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

# start_bg PIDFILE NAME LOG CMD... : run CMD in the background, detached from our stdio (so a
# caller piping our output never hangs on a daemon), and record "PID NAME START EXE": NAME is the
# program the PID must be running when we stop it (CMD may exec through ip/unshare/sh to get there),
# EXE its executable, START the process's start time.
start_bg() {
  local pidf=$1 name=$2 log=$3 exe pid; shift 3
  exe=$(readlink -f "$(command -v "$name")") || die "$name is not installed"
  "$@" </dev/null >>"$log" 2>&1 &
  pid=$!
  echo "$pid $name $(proc_start "$pid") $exe" >"$pidf"
}

# recorded_pid PIDFILE: the PID in PIDFILE if that process is still the one recorded: the same start
# time, running the recorded executable, with the recorded name. Otherwise says why (on stderr) and
# fails: a PID reused by another process, or a pid file that names some other process, is never killed.
recorded_pid() {
  local f=$1 pid name start exe now actual
  read -r pid name start exe <"$f" || true
  if ! [[ "$pid" =~ ^[0-9]+$ && "$start" =~ ^[0-9]+$ ]] || [ -z "$name" ] || [ -z "$exe" ]; then
    say "warning: $f does not say which process it is (PID, name, start time, executable): not killing anything" >&2
    return 1
  fi
  now=$(proc_start "$pid")
  [ -n "$now" ] || return 1   # gone
  if [ "$now" != "$start" ]; then
    say "warning: PID $pid started at $now, not at $start: another process now; not killing it" >&2
    return 1
  fi
  actual=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  if [ "$actual" != "$exe" ]; then
    say "warning: PID $pid runs '${actual:-?}', not '$exe'; not killing it" >&2
    return 1
  fi
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || { say "warning: PID $pid is not '$name'; not killing it" >&2; return 1; }
  echo "$pid"
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
  local f=$1 pid name i
  [ -f "$f" ] || return 0
  [ -L "$f" ] && { say "warning: $f is a symbolic link: not reading it"; rm -f "$f"; return 0; }
  read -r _ name _ <"$f" || true
  if pid=$(recorded_pid "$f"); then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 25); do alive "$pid" || break; sleep 0.2; done
    if alive "$pid"; then say "PID $pid ($name) ignored SIGTERM; sending SIGKILL"; kill -9 "$pid" 2>/dev/null || true; fi
    say "stopped $name (PID $pid)"
  fi
  rm -f "$f"
}
