#!/usr/bin/env bash
# Real-network benchmark between two lab hosts (namespaces, each with its own avahi-daemon; scripts/lab.sh),
# every figure with its baseline measured in the same run, medians of RUNS, the load average printed:
#   1. discovery to delivered: `p2p send --to bob` of a 1 KiB file in A to a `p2p receive` in B, from the
#      sender's start to its exit (browse, resolve, connect, TLS, HELLO, one file) on an IPv6-link-local-only
#      cable vs an IPv4 one; ratio v6 / v4;
#   2. a pinned peer by name with multicast dropped by B's firewall (and A's daemon restarted, so it knows
#      nothing): the same send, dialled at the peer's last address, vs the same send with multicast working;
#   3. failover: two links between A and B, a chat on one; the link in use is set down in A and a line
#      typed at once; the time until it shows in B's chat;
#   4. throughput on a 1 Gbit/s link (tc tbf on A's veth): a SIZE MiB file with p2p send vs socat over the
#      same link; ratio socat time / p2p time (>= 1 means as fast).
# Build first: swift build -c release. Needs root, nft, tc, socat.
#
# usage: Benchmarks/network.sh [--runs N] [--size-mib N]
# env:   P2P_BIN (default .build/release/p2p)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
LAB=$ROOT/scripts/lab.sh
RUNS=5 SIZE_MIB=256
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces)" >&2; exit 1; }
for tool in nft tc socat python3; do command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }; done
[ -x "$P2P" ] || { echo "bench: no $P2P (swift build -c release)" >&2; exit 1; }
export AVAHI_COMPAT_NOWARN=1
export P2P_LAB_PREFIX=p2pbn
WORK=$(mktemp -d /tmp/p2p-bench-net.XXXXXX)
PIDS=()
# stop PID: a background `in_host` is a subshell whose child is p2p: both are stopped (p2p first).
stop() { pkill -TERM -P "$1" 2>/dev/null; kill "$1" 2>/dev/null; }
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do stop "$pid"; done
  wait 2>/dev/null
  "$LAB" down >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")' "$1" "$2"; }
load() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
lab_up() { "$LAB" down >/dev/null 2>&1; env "$@" "$LAB" up >"$WORK/lab.log" 2>&1 || { cat "$WORK/lab.log"; exit 1; }; }
in_host() { local host=$1 home=$2; shift 2; env P2P_HOME="$WORK/home-$home" "$LAB" exec "$host" "$P2P" "$@"; }
# receiver NAME DIR: a `p2p receive` in B, in the background; waits until it listens.
receiver() {
  mkdir -p "$2"
  in_host B "$1" receive --json --yes --name "$1" --dir "$2" >"$WORK/$1.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q '"listening"' "$WORK/$1.out" 2>/dev/null && return 0; sleep 0.1; done
  echo "bench: $1 did not start" >&2; exit 1
}
stop_receivers() { local pid; for pid in "${PIDS[@]}"; do stop "$pid"; done; wait 2>/dev/null; PIDS=(); }
# timed_send TO FILE: ms from starting `p2p send --to TO` in A to its exit; fails the bench if it fails.
timed_send() {
  local start; start=$(now_ms)
  in_host A alice send --name alice --to "$1" --timeout 30 "$2" >"$WORK/send.out" 2>&1 || { cat "$WORK/send.out" >&2; exit 1; }
  echo $(( $(now_ms) - start ))
}

head -c 1024 /dev/urandom >"$WORK/small.bin"
echo "p2p network benchmark: $RUNS runs per figure; $(load)"

# ---------------------------------------------------------------- 1. discovery to delivered, v6 vs v4
declare -A DISC
for family in ipv4 ipv6ll; do
  lab_up P2P_LAB_FAMILY=$family
  receiver "bob-$family" "$WORK/in-$family"
  times=()
  for i in $(seq "$RUNS"); do times+=("$(timed_send "bob-$family" "$WORK/small.bin")"); done
  DISC[$family]=$(median "${times[@]}")
  echo "discovery to delivered, $family: median ${DISC[$family]} ms (runs: ${times[*]})"
  stop_receivers
done
echo "  ratio IPv6 link-local / IPv4: $(ratio "${DISC[ipv6ll]}" "${DISC[ipv4]}")  ($(load))"

# ---------------------------------------------------------------- 2. pinned peer, multicast dropped
lab_up P2P_LAB_FAMILY=ipv4
receiver carol "$WORK/in-carol"
timed_send carol "$WORK/small.bin" >/dev/null   # first contact: both sides pin, A remembers where carol is
with=()
for i in $(seq "$RUNS"); do with+=("$(timed_send carol "$WORK/small.bin")"); done
"$LAB" exec B nft -f - <<'EOF'
table inet nomdns {
  chain input { type filter hook input priority 0; policy accept; udp dport 5353 drop; }
  chain output { type filter hook output priority 0; policy accept; udp dport 5353 drop; }
}
EOF
"$LAB" restart-avahi A >/dev/null
without=()
for i in $(seq "$RUNS"); do without+=("$(timed_send carol "$WORK/small.bin")"); done
m_with=$(median "${with[@]}") m_without=$(median "${without[@]}")
echo "pinned peer by name: multicast working $m_with ms, multicast dropped $m_without ms (runs: ${without[*]})"
echo "  ratio dropped / working: $(ratio "$m_without" "$m_with")  ($(load))"
stop_receivers

# ---------------------------------------------------------------- 3. failover after a link cut
failovers=()
for i in $(seq "$RUNS"); do
  lab_up P2P_LAB_LINKS=2
  rm -f "$WORK/a.in" "$WORK/b.in"; mkfifo "$WORK/a.in" "$WORK/b.in"
  in_host A alice2 chat --json --yes --name alice <"$WORK/a.in" >"$WORK/a.out" 2>&1 & PIDS+=($!)
  in_host B bob2 chat --json --yes --name bob <"$WORK/b.in" >"$WORK/b.out" 2>&1 & PIDS+=($!)
  exec 7>"$WORK/a.in" 8>"$WORK/b.in"
  for _ in $(seq 300); do grep -q '"connected"' "$WORK/b.out" 2>/dev/null && break; sleep 0.1; done
  local_ip=$(ip netns exec p2pbnA ss -tnH state established | awk '{print $3}' | grep -oE '10\.213\.[78]\.1' | head -n 1)
  case $local_ip in 10.213.7.1) cut=p2pbnvA ;; 10.213.8.1) cut=p2pbnwA ;; *) echo "bench: no chat connection over 10.213.7.1 or 10.213.8.1; B's chat said:" >&2; tail -5 "$WORK/b.out" >&2
     ip netns exec p2pbnA ss -tnH state established >&2; exit 1 ;; esac
  start=$(now_ms)
  ip -n p2pbnA link set "$cut" down
  echo "after the cut $i" >&7
  for _ in $(seq 1000); do grep -q "after the cut $i" "$WORK/b.out" && break; sleep 0.005; done
  failovers+=($(( $(now_ms) - start )))
  exec 7>&- 8>&-
  stop_receivers
done
echo "failover after the link in use goes down: median $(median "${failovers[@]}") ms (runs: ${failovers[*]}); before: heartbeat, about 6000-6900 ms  ($(load))"

# ---------------------------------------------------------------- 4. throughput on a 1 Gbit/s link
lab_up P2P_LAB_FAMILY=ipv4
ip netns exec p2pbnA tc qdisc replace dev p2pbnvA root tbf rate 1gbit burst 256kb latency 50ms
head -c $((SIZE_MIB << 20)) /dev/urandom >"$WORK/big.bin"
receiver dave "$WORK/in-dave"
p2p_t=() socat_t=()
for i in $(seq "$RUNS"); do
  rm -f "$WORK/in-dave/big.bin"
  start=$(now_ms)
  in_host A alice send --name alice --connect 10.213.7.2:24242 "$WORK/big.bin" >"$WORK/send.out" 2>&1 || { cat "$WORK/send.out"; exit 1; }
  p2p_t+=($(( $(now_ms) - start )))
  "$LAB" exec B socat -u -b 262144 TCP-LISTEN:5001,reuseaddr "OPEN:$WORK/socat.bin,creat,trunc" & spid=$!
  sleep 0.3
  start=$(now_ms)
  "$LAB" exec A socat -u -b 262144 "OPEN:$WORK/big.bin" TCP:10.213.7.2:5001
  wait "$spid"
  socat_t+=($(( $(now_ms) - start )))
done
m_p2p=$(median "${p2p_t[@]}") m_socat=$(median "${socat_t[@]}")
mbit() { python3 -c 'import sys; print(f"{int(sys.argv[1]) * 8 * 1.048576 / (float(sys.argv[2]) / 1000):.0f}")' "$SIZE_MIB" "$1"; }
echo "1 Gbit/s link, $SIZE_MIB MiB: p2p $m_p2p ms ($(mbit "$m_p2p") Mbit/s), socat $m_socat ms ($(mbit "$m_socat") Mbit/s)"
echo "  ratio socat / p2p: $(ratio "$m_socat" "$m_p2p")  ($(load))"
