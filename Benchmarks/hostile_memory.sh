#!/usr/bin/env bash
# Memory under a hostile peer (SECURITY.md P11, P12): `p2p receive` and `p2p chat` (release build, loopback,
# TLS, --yes: every offer is accepted and asks nothing) each face one peer at a time that floods and reads nothing back (Tests/e2e/raw_peer.py):
#   ping   200,000 PINGs            offer  100,000 OFFERs (16 wait, the rest are denied)
#   text   100,000 chat lines (~90 bytes each; `chat` only, `receive` takes no chat)
# For each: the process's RSS when idle (the baseline, measured in the same run just before), its peak
# while the flood is handled (VmHWM, reset before each attack), and its RSS once the peer has left.
# Prints peak - idle and after - idle in MiB and peak / idle. Target: peak - idle < 64 MiB, after - idle
# small. Every attack runs --rounds times (a new peer each time), and the RSS before the first
# and after the last attack are printed: a second round that adds nothing shows nothing was left behind. The load average is printed: figures count only on a quiet machine (load < 1).
#
# usage: Benchmarks/hostile_memory.sh [--count-scale F] [--rounds N] [--only ATTACK]
#   --count-scale F  multiplies the flood sizes (default 1)
#   --rounds N       runs every attack N times (default 2)
#   --only ATTACK    runs only that attack (pingflood, offerflood or textflood)
# needs: an mDNS daemon on the system bus (`p2p chat` does not start without one; as root,
#        scripts/mdns-loopback.sh start runs one bound to loopback)
# env:   P2P_BIN (default .build/release/p2p; build it with `swift build -c release`)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
RAW=$ROOT/Tests/e2e/raw_peer.py
SCALE=1 ROUNDS=2 ONLY=
while [ $# -gt 0 ]; do
  case $1 in
    --count-scale) SCALE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    -h|--help) sed -n "2,19p" "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$P2P" ] || { echo "bench: no $P2P (swift build -c release)" >&2; exit 1; }
export AVAHI_COMPAT_NOWARN=1
WORK=$(mktemp -d /tmp/p2p-bench-hostile.XXXXXX)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${P2P_BENCH_KEEP:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# settle PID: until the process has used no CPU for half a second (it has handled what arrived).
settle() {
  local before after
  while :; do
    before=$(cpu_ticks "$1"); sleep 0.5; after=$(cpu_ticks "$1")
    [ "$before" = "$after" ] && return
  done
}
mib() { python3 -c 'import sys; print(f"{int(sys.argv[1]) / 1024:.1f}")' "$1"; }

echo "p2p: $P2P"
load
printf '%-8s %-10s %9s %9s %9s %10s %11s %9s  %s\n' command attack idle_MiB peak_MiB after_MiB peak-idle after-idle peak/idle "flood sent"

# attack CMD PID PORT SESSION SCENARIO COUNT ROUND
attack() {
  local cmd=$1 pid=$2 port=$3 sid=$4 scenario=$5 count=$6 round=$7 hold=$WORK/$5-$1-$7.hold out=$WORK/$5-$1-$7.json idle peak after
  settle "$pid"
  idle=$(kib "$pid" VmRSS)
  echo 5 > "/proc/$pid/clear_refs"   # resets VmHWM to the current RSS
  # Each round is a new peer (a new key under a new name: a second key under a pinned name is refused).
  python3 "$RAW" 127.0.0.1 "$port" "$scenario" --session "$sid" --count "$count" --hold 600 --hold-file "$hold" \
    --peer-name "raw-$scenario-$round" --timeout 900 >"$out" 2>&1 &
  local raw=$!
  until [ -e "$hold.sent" ] || ! kill -0 "$raw" 2>/dev/null; do sleep 0.1; done
  settle "$pid"
  peak=$(kib "$pid" VmHWM)
  touch "$hold"
  wait "$raw"
  # p2p hands freed memory back to the system a second after a peer leaves (FreedMemory): after that.
  sleep 1.5
  settle "$pid"
  after=$(kib "$pid" VmRSS)
  printf '%-8s %-10s %9s %9s %9s %10s %11s %9s  %s\n' "$cmd" "$scenario/$round" "$(mib "$idle")" "$(mib "$peak")" "$(mib "$after")" \
    "$(mib $((peak - idle)))" "$(mib $((after - idle)))" "$(python3 -c 'import sys; print(f"{int(sys.argv[1]) / int(sys.argv[2]):.2f}")' "$peak" "$idle")" \
    "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["sent"], "(" + r["note"] + ")" if r["note"] else "")' "$out" 2>/dev/null || echo "none: $(tail -c 200 "$out")")"
}
n() { python3 -c 'import sys; print(int(float(sys.argv[1]) * float(sys.argv[2])))' "$1" "$SCALE"; }

SID=bench-hostile-$$
R=$(free_port)
mkdir -p "$WORK/inbox"
P2P_HOME=$WORK/home-recv "$P2P" receive --yes --name recv --port "$R" --session-id "$SID" --dir "$WORK/inbox" \
  </dev/null >"$WORK/recv.out" 2>&1 &
PIDS+=($!); RECV=$!
C=$(free_port)
sleep 1000000 | P2P_HOME=$WORK/home-chat "$P2P" chat --yes --name chat --port "$C" --session-id "$SID" --to nobody --timeout 3600 \
  >"$WORK/chat.out" 2>&1 &
PIDS+=($!); CHAT=$!  # a pipeline's $! is its last command: p2p itself
# wait_for PID TEXT FILE: until FILE says TEXT; an exit first ends the benchmark (chat needs an mDNS daemon).
wait_for() {
  until grep -q "$2" "$3" 2>/dev/null; do
    kill -0 "$1" 2>/dev/null || { echo "bench: p2p exited before it was ready:" >&2; cat "$3" >&2; exit 1; }
    sleep 0.1
  done
}
wait_for "$RECV" "Waiting" "$WORK/recv.out"
wait_for "$CHAT" "waiting for nobody" "$WORK/chat.out"

settle "$RECV"; settle "$CHAT"
RECV_START=$(kib "$RECV" VmRSS) CHAT_START=$(kib "$CHAT" VmRSS)
# Every attack in every round: memory a peer left behind that the next peer does not reuse shows as growth.
wanted() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
for round in $(seq "$ROUNDS"); do
  wanted pingflood && attack receive "$RECV" "$R" "$SID" pingflood "$(n 200000)" "$round"
  wanted offerflood && attack receive "$RECV" "$R" "$SID" offerflood "$(n 100000)" "$round"
done
for round in $(seq "$ROUNDS"); do
  wanted pingflood && attack chat "$CHAT" "$C" "$SID" pingflood "$(n 200000)" "$round"
  wanted offerflood && attack chat "$CHAT" "$C" "$SID" offerflood "$(n 100000)" "$round"
  wanted textflood && attack chat "$CHAT" "$C" "$SID" textflood "$(n 100000)" "$round"
done
settle "$RECV"; settle "$CHAT"
echo "receive: RSS $(mib "$RECV_START") MiB before the first attack, $(mib "$(kib "$RECV" VmRSS)") MiB after the last"
echo "chat:    RSS $(mib "$CHAT_START") MiB before the first attack, $(mib "$(kib "$CHAT" VmRSS)") MiB after the last"
load
