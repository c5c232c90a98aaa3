#!/usr/bin/env bash
# The scripts that run as root (scripts/mdns-loopback.sh, scripts/lab.sh, scripts/setup.sh --bench)
# against what a local user can plant (issue 34, row 13):
#  - a state directory that is a symbolic link, belongs to another user, or is open to others is
#    refused before any pid file in it is read (nothing is killed, nothing under it is removed);
#  - a pid file is believed only for the process it recorded: a process calling itself avahi-daemon
#    (a copy of sleep) is not killed when the pid file names another executable or another start
#    time, nor by an old pid file that records neither; the same process recorded exactly is stopped
#    (so the checks can pass);
#  - setup.sh --bench refuses a magic-wormhole venv that another user owns, and runs nothing from it.
# Uses private temporary state directories only: the machine's running loopback avahi-daemon (whose
# state is elsewhere) is never touched. Needs root (chown).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { fail "must run as root (chown to another user)"; finish; }
MDNS=$REPO_ROOT/scripts/mdns-loopback.sh
LAB=$REPO_ROOT/scripts/lab.sh
SETUP=$REPO_ROOT/scripts/setup.sh
T=$E2E_TMP

# decoy NAME: a process whose name (comm) is avahi-daemon but is sleep, reparented away from this shell
# (so a stop that kills it sees it vanish); its PID in $T/NAME.pid.
cp "$(command -v sleep)" "$T/avahi-daemon"
decoy() { ( "$T/avahi-daemon" 600 </dev/null >/dev/null 2>&1 & echo $! >"$T/$1.pid" ); pid_alive_wait "$(cat "$T/$1.pid")"; }
pid_alive_wait() { wait_until 5 test -e "/proc/$1/stat"; }
start_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
alive() { [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }
DECOYS=()
on_exit 'for p in "${DECOYS[@]}"; do [ "$(cat /proc/$p/comm 2>/dev/null)" = avahi-daemon ] && [ "$(readlink /proc/$p/exe)" = "$T/avahi-daemon" ] && kill "$p"; done; true'

decoy d1; D1=$(cat "$T/d1.pid"); DECOYS+=("$D1")
check "the decoy runs and calls itself avahi-daemon" [ "$(cat "/proc/$D1/comm")" = avahi-daemon ]

# ---- a planted symbolic link as the state directory: refused, the pid file behind it never read
mkdir -m 0700 "$T/target"
echo "$D1 avahi-daemon $(start_of "$D1") $T/avahi-daemon" >"$T/target/avahi.pid"
ln -s "$T/target" "$T/link"
out=$(P2P_MDNS_STATE="$T/link" "$MDNS" stop 2>&1); rc=$?
check "mdns-loopback.sh stop refuses a state directory that is a symlink (exit $rc: $out)" bash -c '[ "$1" != 0 ] && grep -q "symbolic link" <<<"$2"' _ "$rc" "$out"
check "the process its pid file names was not killed" alive "$D1"
out=$(P2P_LAB_PREFIX=p2psafe$$ P2P_LAB_STATE="$T/link" "$LAB" down 2>&1); rc=$?
check "lab.sh down refuses it too (exit $rc: $out)" bash -c '[ "$1" != 0 ] && grep -q "symbolic link" <<<"$2"' _ "$rc" "$out"
check "and removed nothing behind it" [ -f "$T/target/avahi.pid" ]
check "the process is still alive" alive "$D1"

# ---- a state directory of another user, or open to others: refused
mkdir -m 0700 "$T/theirs"; cp "$T/target/avahi.pid" "$T/theirs/"; chown -R 65534:65534 "$T/theirs"
out=$(P2P_MDNS_STATE="$T/theirs" "$MDNS" stop 2>&1); rc=$?
check "a state directory owned by another user is refused (exit $rc: $out)" bash -c '[ "$1" != 0 ] && grep -q "owned by uid 65534" <<<"$2"' _ "$rc" "$out"
mkdir -m 0700 "$T/open"; cp "$T/target/avahi.pid" "$T/open/"; chmod 0777 "$T/open"
out=$(P2P_MDNS_STATE="$T/open" "$MDNS" stop 2>&1); rc=$?
check "a state directory others can write to is refused (exit $rc: $out)" bash -c '[ "$1" != 0 ] && grep -q "mode 777" <<<"$2"' _ "$rc" "$out"
check "the process is still alive" alive "$D1"

# ---- pid files in a private directory that name a process other than the one recorded
S=$(mktemp -d "$T/state.XXXXXX")
echo "$D1 avahi-daemon $(start_of "$D1") $(readlink -f "$(command -v avahi-daemon || echo /usr/sbin/avahi-daemon)")" >"$S/avahi.pid"
out=$(P2P_MDNS_STATE="$S" "$MDNS" stop 2>&1)
check "a pid file naming a process that runs another executable: not killed ($out)" bash -c 'alive() { [ -e "/proc/$1" ]; }; alive "$1" && grep -q "not killing it" <<<"$2"' _ "$D1" "$out"
echo "$D1 avahi-daemon $(( $(start_of "$D1") + 1 )) $T/avahi-daemon" >"$S/avahi.pid"
out=$(P2P_MDNS_STATE="$S" "$MDNS" stop 2>&1)
check "a pid file whose process started at another time (a reused PID): not killed ($out)" bash -c 'alive() { [ -e "/proc/$1" ]; }; alive "$1" && grep -q "not at" <<<"$2"' _ "$D1" "$out"
echo "$D1 avahi-daemon" >"$S/avahi.pid"
out=$(P2P_MDNS_STATE="$S" "$MDNS" stop 2>&1)
check "an old pid file that records no start time or executable: not killed ($out)" bash -c 'alive() { [ -e "/proc/$1" ]; }; alive "$1" && grep -q "does not say which process" <<<"$2"' _ "$D1" "$out"
# The control: the same process recorded exactly is stopped, so the refusals above are the checks'.
echo "$D1 avahi-daemon $(start_of "$D1") $T/avahi-daemon" >"$S/avahi.pid"
out=$(timeout 20 env P2P_MDNS_STATE="$S" "$MDNS" stop 2>&1); rc=$?
check "the process recorded exactly (PID, start time, executable) is stopped (exit $rc: $out)" bash -c '[ "$1" = 0 ] && grep -q "stopped avahi-daemon (PID $2)" <<<"$3"' _ "$rc" "$D1" "$out"
check "and is gone" bash -c '! [ -e "/proc/$1" ] || [ "$(sed "s/.*) //" "/proc/$1/stat" | cut -d" " -f1)" = Z ]' _ "$D1"

# ---- setup.sh --bench and a magic-wormhole venv planted by another user
V=$T/venv
mkdir -p "$V/bin"
printf '#!/bin/sh\ntouch %s/planted-ran\n' "$T" >"$V/bin/wormhole"
cp "$V/bin/wormhole" "$V/bin/twist"
chmod 0755 "$V/bin/wormhole" "$V/bin/twist"
chown -R 65534:65534 "$V"
out=$(WORMHOLE_VENV="$V" timeout 60 "$SETUP" --bench 2>&1); rc=$?
check "setup.sh --bench refuses a venv another user owns (exit $rc: $(tail -n 1 <<<"$out"))" bash -c '[ "$1" != 0 ] && grep -q "refusing $2" <<<"$3"' _ "$rc" "$V" "$out"
check "nothing planted in it ran" [ ! -e "$T/planted-ran" ]
finish
