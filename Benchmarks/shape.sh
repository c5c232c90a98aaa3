#!/usr/bin/env bash
# Issue 36's before/after in one sitting: two p2p binaries measured alternately on the same machine, over
# 127.0.0.1, files on tmpfs, three rows:
#   transfer  a SIZE (default 1 GiB) random file: `p2p receive --yes --once --dir D --port P` and
#             `p2p send --connect 127.0.0.1:P FILE`; wall time from starting the sender until both ends
#             exited; the copy checked with cmp
#   stream    the same bytes through a pipe: `cat FILE | p2p send - --as bench.bin --connect 127.0.0.1:P`
#             into `p2p receive --stdout --yes > OUT`; wall time likewise; OUT checked with sha256sum
#   chat      `p2p bench session --json --discovery-runs 0` (two TLS sessions in one process): one-way
#             messages/s (its median round) and round trip p50 / p99 in µs
# with the peak RSS of every p2p process (/usr/bin/time -f %M: sender and receiver; the bench's one
# process), the 1-minute load average before every run, the medians per binary, and the ratios:
#   wall time and round trip: before / after     messages/s: after / before     (>= 1: after is as fast)
#   peak RSS: after / before (about 1: flat)
# Runs alternate ABBA (run 1 before first, run 2 after first, ...) so a drift in load hits both alike.
# Take the figures on a quiet machine (load below 1: every run line shows it; --wait-quiet waits for it).
#
# Never hangs: each run has a deadline (--timeout); a run past it is stopped, reported FAILED with the
# tail of its logs, and the script goes on with the next. A sender that fails stops its receiver at once
# (a receiver waits for a sender by design: that is how the stream benchmark hung once, see BENCHMARKS.md).
# Every process started here is stopped by its PID (p2p under /usr/bin/time included) on any exit.
#
# usage: Benchmarks/shape.sh --before BIN --after BIN [--runs N] [--size-mib N] [--timeout S]
#                            [--rows transfer,stream,chat] [--messages N] [--round-trips N]
#                            [--wait-quiet S] [--keep]
#   --runs N         runs per row and binary (default 5)
#   --size-mib N     transfer and stream size (default 1024)
#   --timeout S      deadline of one run in seconds (default 180)
#   --rows LIST      which rows, comma-separated (default all three)
#   --messages N, --round-trips N   passed to `p2p bench session` (its defaults: 200000, 20000)
#   --wait-quiet S   first wait up to S seconds for the 1-minute load average to fall below 1
#   --keep           keep the work folder (logs, JSON) even when every run passed
# e.g.   swift build -c release --product p2p --scratch-path .build-release
#        Benchmarks/shape.sh --before /tmp/bench/p2p-66be94d-release --after .build-release/release/p2p --wait-quiet 600
# env:   BENCH_TMPFS (default /dev/shm): where the files and the work folder go
# needs: python3, /usr/bin/time (package time), cmp, sha256sum, ss
# Exit status 0 when every run passed (whatever the ratios); 1 if a run failed or timed out (the work
# folder is then kept, without its large files); 2 on a usage error.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/Benchmarks/lib.sh"
TMPFS=${BENCH_TMPFS:-/dev/shm}
BEFORE= AFTER= RUNS=5 SIZE_MIB=1024 TIMEOUT=180 ROWS=transfer,stream,chat KEEP=0 WAIT_QUIET=0 BENCH_ARGS=()
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; }
while [ $# -gt 0 ]; do
  case $1 in
    --before) BEFORE=$2; shift 2 ;;
    --after) AFTER=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --messages) BENCH_ARGS+=(--messages "$2"); shift 2 ;;
    --round-trips) BENCH_ARGS+=(--round-trips "$2"); shift 2 ;;
    --wait-quiet) WAIT_QUIET=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "shape.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$BEFORE" ] && [ -n "$AFTER" ] || { echo "shape.sh: --before BIN and --after BIN are both needed (see --help)" >&2; exit 2; }
for bin in "$BEFORE" "$AFTER"; do
  [ -x "$bin" ] || { echo "shape.sh: $bin is not an executable p2p binary" >&2; exit 2; }
done
for row in ${ROWS//,/ }; do
  case $row in transfer|stream|chat) ;; *) echo "shape.sh: unknown row $row (transfer, stream, chat)" >&2; exit 2 ;; esac
done
for tool in python3 /usr/bin/time cmp sha256sum ss; do
  command -v "$tool" >/dev/null || { echo "shape.sh: $tool is required" >&2; exit 1; }
done
export AVAHI_COMPAT_NOWARN=1 LANG=C.UTF-8 LC_ALL=C.UTF-8
BIN_before=$(readlink -f "$BEFORE") BIN_after=$(readlink -f "$AFTER")

W=$(mktemp -d "$TMPFS/p2p-shape.XXXXXX")
TAG=$$-$RANDOM
SID=shape-$TAG
declare -A LIVE=()   # every PID started here and not yet reaped (the /usr/bin/time wrappers, cat, the watchdog)
RUN_PIDS=()          # the current run's
WATCHDOG=

# started PID: one more process of ours, part of the current run.
started() { LIVE[$1]=1; RUN_PIDS+=("$1"); }
# reap PID: waits for our child PID; its exit status.
reap() { local rc; wait "$1"; rc=$?; unset "LIVE[$1]"; return "$rc"; }
# alive PID...: whether any PID still runs (a zombie does not count).
alive() {
  local pid state
  for pid in "$@"; do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || continue
    [ -n "$state" ] && [ "$state" != Z ] && return 0
  done
  return 1
}
# stop PID...: TERM to each of our PIDs (one already reaped is skipped: its number may be someone
# else's by now) and to its children (p2p under /usr/bin/time), KILL after 5 s, then reaped.
stop() {
  local pid ours=() kids=()
  for pid in "$@"; do [ -n "${LIVE[$pid]:-}" ] && ours+=("$pid"); done
  [ ${#ours[@]} -gt 0 ] || return 0
  for pid in "${ours[@]}"; do
    # shellcheck disable=SC2207
    kids+=($(cat /proc/"$pid"/task/*/children 2>/dev/null))
  done
  for pid in "${kids[@]}" "${ours[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 100); do alive "${kids[@]}" "${ours[@]}" || break; sleep 0.05; done
  for pid in "${kids[@]}" "${ours[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for pid in "${ours[@]}"; do reap "$pid" 2>/dev/null; done
  return 0
}
# The deadline of a run: a timer process signals this shell (USR1) after $TIMEOUT seconds; the handler
# stops every process of the run, so the run's own `wait`s return and a stuck process costs one run,
# never the sitting. Only this shell stops processes: it alone knows which PIDs are still its own.
on_deadline() { echo "$TIMEOUT" >"$W/timed-out"; stop "${RUN_PIDS[@]}"; }
trap on_deadline USR1
start_watchdog() {
  rm -f "$W/timed-out"
  (
    nap=
    trap '[ -z "$nap" ] || kill "$nap" 2>/dev/null; exit 0' TERM
    sleep "$TIMEOUT" & nap=$!
    wait "$nap" && kill -USR1 $$
  ) &
  WATCHDOG=$!; LIVE[$WATCHDOG]=1
}
stop_watchdog() { [ -z "$WATCHDOG" ] || { kill -TERM "$WATCHDOG" 2>/dev/null; reap "$WATCHDOG" 2>/dev/null; }; WATCHDOG=; }
cleanup() {
  stop_watchdog
  stop "${!LIVE[@]}"
  if [ "$KEEP" = 1 ] || [ -s "$W/failures" ]; then
    rm -rf "$W/src.bin" "$W/out.bin" "$W/in" "$W/pipe"
    echo "shape.sh: logs kept in $W" >&2
  else
    rm -rf "$W"
  fi
}
trap cleanup EXIT
trap 'echo "shape.sh: interrupted: stopping every process it started" >&2; exit 130' INT TERM

FAILED_RUN=0
bad() { say "FAILED: $*"; echo "$*" >>"$W/failures"; FAILED_RUN=1; }
# show FILE...: the last lines of each log, for a failed run.
show() { local f; for f in "$@"; do [ -s "$f" ] && { echo "----- $f (last 5 lines)"; tail -5 "$f"; }; done >&2; }
# rss_mib FILE: the peak RSS /usr/bin/time -f %M wrote (its last line, KiB), in MiB.
rss_mib() { local k; k=$(tail -1 "$1" 2>/dev/null); [[ "$k" =~ ^[0-9]+$ ]] && python3 -c "print('%.1f' % ($k / 1024))" || echo 0; }
timed_out() { [ -e "$W/timed-out" ] && { bad "$1: no result within --timeout $TIMEOUT s: every process of the run was stopped"; return 0; }; return 1; }

# start_receiver WHICH KIND: p2p receive (KIND file: into $W/in; stream: --stdout into $W/out.bin) of binary
# WHICH on a free port, under /usr/bin/time; returns once it printed its JSON "listening" event (a port
# someone took meanwhile: tried again on another). Sets RPID and PORT.
start_receiver() {
  local which=$1 kind=$2 bin try events
  bin=BIN_$which; bin=${!bin}
  for try in 1 2 3; do
    PORT=$(free_port)
    rm -rf "$W/in" "$W/recv.out" "$W/recv.err" "$W/recv.rss" "$W/out.bin"; mkdir "$W/in"
    if [ "$kind" = file ]; then
      events=$W/recv.out
      /usr/bin/time -f %M -o "$W/recv.rss" env P2P_HOME="$W/home-$which-r" "$bin" receive --yes --once --json --dir "$W/in" \
        --port "$PORT" --session-id "$SID" --name "shape-r-$TAG" </dev/null >"$W/recv.out" 2>"$W/recv.err" &
    else
      events=$W/recv.err   # stdout carries the stream
      /usr/bin/time -f %M -o "$W/recv.rss" env P2P_HOME="$W/home-$which-r" "$bin" receive --stdout --yes --json \
        --port "$PORT" --session-id "$SID" --name "shape-r-$TAG" </dev/null >"$W/out.bin" 2>"$W/recv.err" &
    fi
    RPID=$!; started "$RPID"
    wait_until 30 eval "grep -qs '\"event\":\"listening\"' '$events' || ! alive $RPID"
    grep -qs '"event":"listening"' "$events" && return 0
    if alive "$RPID"; then
      stop "$RPID"; bad "$kind $which: p2p receive did not listen within 30 s"; show "$W/recv.err"; return 1
    fi
    reap "$RPID" 2>/dev/null
    grep -qs "already in use" "$W/recv.err" || { bad "$kind $which: p2p receive exited before listening"; show "$W/recv.err"; return 1; }
    say "port $PORT was taken meanwhile: trying another"
  done
  bad "$kind $which: no free port in 3 tries"; return 1
}

# finish_pair KIND WHICH SPID [CATPID]: waits for the sender, then the receiver (stopped at once if the
# sender failed: it would wait for another sender forever), under the watchdog. Sets T (seconds).
finish_pair() {
  local kind=$1 which=$2 spid=$3 catpid=${4:-} src rc rrc t1
  start_watchdog
  reap "$spid"; rc=$?
  [ "$rc" = 0 ] || [ -e "$W/timed-out" ] || stop "$RPID"
  reap "$RPID"; rrc=$?
  t1=$(now)
  [ -z "$catpid" ] || { stop "$catpid"; }
  stop_watchdog
  T=$(elapsed "$T0" "$t1")
  timed_out "$kind $which" && { show "$W/send.err" "$W/recv.err"; return 1; }
  [ "$rc" = 0 ] || { bad "$kind $which: p2p send exited $rc (the receiver was stopped)"; show "$W/send.err"; return 1; }
  [ "$rrc" = 0 ] || { bad "$kind $which: p2p receive exited $rrc"; show "$W/recv.err"; return 1; }
  return 0
}

# run_transfer WHICH: one file transfer; sets T, RSS_S, RSS_R.
run_transfer() {
  local which=$1 bin spid
  bin=BIN_$which; bin=${!bin}
  start_receiver "$which" file || return 1
  T0=$(now)
  /usr/bin/time -f %M -o "$W/send.rss" env P2P_HOME="$W/home-$which-s" "$bin" send --json --connect "127.0.0.1:$PORT" \
    --session-id "$SID" --name "shape-s-$TAG" "$SRC" </dev/null >"$W/send.out" 2>"$W/send.err" &
  spid=$!; started "$spid"
  finish_pair transfer "$which" "$spid" || return 1
  cmp -s "$SRC" "$W/in/src.bin" || { bad "transfer $which: the received file differs from the source (cmp)"; return 1; }
  rm -rf "$W/in"
  RSS_S=$(rss_mib "$W/send.rss"); RSS_R=$(rss_mib "$W/recv.rss")
}

# run_stream WHICH: one byte stream from a pipe (cat into a FIFO: every process has a PID of its own).
run_stream() {
  local which=$1 bin spid catpid got
  bin=BIN_$which; bin=${!bin}
  start_receiver "$which" stream || return 1
  T0=$(now)
  /usr/bin/time -f %M -o "$W/send.rss" env P2P_HOME="$W/home-$which-s" "$bin" send - --as bench.bin --json \
    --connect "127.0.0.1:$PORT" --session-id "$SID" --name "shape-s-$TAG" <"$W/pipe" >"$W/send.out" 2>"$W/send.err" &
  spid=$!; started "$spid"
  cat "$SRC" >"$W/pipe" &
  catpid=$!; started "$catpid"
  finish_pair stream "$which" "$spid" "$catpid" || return 1
  got=$(sha256sum "$W/out.bin" | cut -d' ' -f1)
  [ "$got" = "$SRC_SHA" ] || { bad "stream $which: the output's SHA-256 $got is not the source's $SRC_SHA"; return 1; }
  rm -f "$W/out.bin"
  RSS_S=$(rss_mib "$W/send.rss"); RSS_R=$(rss_mib "$W/recv.rss")
}

# run_chat WHICH: one `p2p bench session`; sets MSGS, P50, P99, RSS_S (its one process), RSS_R (same).
run_chat() {
  local which=$1 bin pid rc figures
  bin=BIN_$which; bin=${!bin}
  rm -f "$W/chat.json" "$W/chat.err" "$W/chat.rss"
  T0=$(now)
  /usr/bin/time -f %M -o "$W/chat.rss" env P2P_HOME="$W/home-$which-r" "$bin" bench session --json --discovery-runs 0 \
    "${BENCH_ARGS[@]}" </dev/null >"$W/chat.json" 2>"$W/chat.err" &
  pid=$!; started "$pid"
  start_watchdog
  reap "$pid"; rc=$?
  stop_watchdog
  T=$(elapsed "$T0" "$(now)")
  timed_out "chat $which" && { show "$W/chat.err"; return 1; }
  [ "$rc" = 0 ] || { bad "chat $which: p2p bench session exited $rc"; show "$W/chat.err"; return 1; }
  figures=$(python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))
s, r = b["oneWay"]["session"], b["roundTrip"]["session"]
print("%.0f %.2f %.2f" % (s["msgsPerSec"], r["p50Us"], r["p99Us"]))' "$W/chat.json" 2>>"$W/chat.err") \
    || { bad "chat $which: no figures in its JSON"; show "$W/chat.err" "$W/chat.json"; return 1; }
  read -r MSGS P50 P99 <<<"$figures"
  RSS_S=$(rss_mib "$W/chat.rss"); RSS_R=$RSS_S
}

# ---------------------------------------------------------------- the sitting
describe() { # describe WHICH: path, size, date and a short SHA-256 of the binary
  local bin=BIN_$1; bin=${!bin}
  printf '%-6s %s (%s MiB, built %s, sha256 %s)\n' "$1:" "$bin" "$(( $(stat -c %s "$bin") >> 20 ))" \
    "$(date -u -d "@$(stat -c %Y "$bin")" '+%Y-%m-%d %H:%M UTC')" "$(sha256sum "$bin" | cut -c1-12)"
}
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
describe before; describe after
echo "rows: $ROWS   runs: $RUNS each, alternating ABBA   size: $SIZE_MIB MiB   tmpfs: $TMPFS   deadline per run: $TIMEOUT s"
if [ "$WAIT_QUIET" -gt 0 ]; then
  say "waiting up to $WAIT_QUIET s for the 1-minute load average to fall below 1 (now $(load))"
  wait_until "$WAIT_QUIET" python3 -c 'import os, sys; sys.exit(0 if os.getloadavg()[0] < 1 else 1)' \
    || say "still $(load) after $WAIT_QUIET s: going on (these figures are not quiet-machine figures)"
fi
echo "load average (1/5/15 min) at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

SRC=$W/src.bin
BYTES=$((SIZE_MIB << 20))
if [[ ",$ROWS," = *,transfer,* || ",$ROWS," = *,stream,* ]]; then
  say "making a $SIZE_MIB MiB random file on $TMPFS"
  make_file "$SRC" "$SIZE_MIB"
  SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
  mkfifo "$W/pipe"
fi
# Each binary and side gets its own home (one installation each); its identity is made here, untimed.
for which in before after; do
  for side in r s; do
    bin=BIN_$which
    P2P_HOME="$W/home-$which-$side" timeout 60 "${!bin}" id >/dev/null 2>&1 </dev/null || true
  done
done

declare -A VALUES=()   # "row which figure" -> the runs' values, space-separated
add() { VALUES["$1 $2 $3"]="${VALUES["$1 $2 $3"]:-} $4"; }
ANY_FAILED=0
for run in $(seq "$RUNS"); do
  if [ $((run % 2)) = 1 ]; then order=(before after); else order=(after before); fi
  for row in ${ROWS//,/ }; do
    for which in "${order[@]}"; do
      before_load=$(load)
      FAILED_RUN=0 RUN_PIDS=()
      "run_$row" "$which"
      if [ "$FAILED_RUN" = 1 ]; then
        ANY_FAILED=1
        printf 'run %d %-8s %-6s FAILED (load average before: %s)\n' "$run" "$row" "$which" "$before_load"
        continue
      fi
      if [ "$row" = chat ]; then
        add chat "$which" msgs "$MSGS"; add chat "$which" p50 "$P50"; add chat "$which" p99 "$P99"; add chat "$which" rss "$RSS_S"
        printf 'run %d %-8s %-6s %s msgs/s one way, round trip p50 %s µs p99 %s µs, peak RSS %s MiB (%ss; load average before: %s)\n' \
          "$run" "$row" "$which" "$MSGS" "$P50" "$P99" "$RSS_S" "$T" "$before_load"
      else
        add "$row" "$which" wall "$T"; add "$row" "$which" rss_s "$RSS_S"; add "$row" "$which" rss_r "$RSS_R"
        printf 'run %d %-8s %-6s %ss (%s MiB/s), peak RSS sender %s MiB, receiver %s MiB (load average before: %s)\n' \
          "$run" "$row" "$which" "$T" "$(rate "$BYTES" "$T")" "$RSS_S" "$RSS_R" "$before_load"
      fi
    done
  done
done

# ---------------------------------------------------------------- medians and ratios
# med ROW WHICH FIGURE: the median of the runs that passed ("-" when none did).
med() { local v=${VALUES["$1 $2 $3"]:-}; [ -n "$v" ] || { echo -; return; }; median $v; }
# line LABEL ROW FIGURE HOW: one table row; HOW is "b/a" (time: before / after) or "a/b" (rate, RSS).
line() {
  local b a r
  b=$(med "$2" before "$3"); a=$(med "$2" after "$3")
  if [ "$b" = - ] || [ "$a" = - ]; then r=-; elif [ "$4" = b/a ]; then r=$(ratio "$b" "$a"); else r=$(ratio "$a" "$b"); fi
  printf '%-44s %12s %12s %8s  (%s)\n' "$1" "$b" "$a" "$r" "$([ "$4" = b/a ] && echo "before / after" || echo "after / before")"
}
echo
echo "== medians of $RUNS runs per binary (transfer and stream: $SIZE_MIB MiB over 127.0.0.1, tmpfs)"
printf '%-44s %12s %12s %8s\n' figure before after ratio
for row in ${ROWS//,/ }; do
  case $row in
    transfer|stream)
      line "$row: wall s ($([ "$row" = transfer ] && echo "send --connect -> receive" || echo "send - -> receive --stdout"))" "$row" wall b/a
      line "$row: peak RSS sender, MiB" "$row" rss_s a/b
      line "$row: peak RSS receiver, MiB" "$row" rss_r a/b ;;
    chat)
      line "chat: one-way messages/s (p2p bench)" chat msgs a/b
      line "chat: round trip p50, µs" chat p50 b/a
      line "chat: round trip p99, µs" chat p99 b/a
      line "chat: peak RSS of the bench process, MiB" chat rss a/b ;;
  esac
done
echo "ratios >= 1 for time and messages/s: after is as fast or faster; RSS ratio about 1: flat"
echo "every run's values:"
for key in $(printf '%s\n' "${!VALUES[@]}" | tr ' ' ':' | sort); do echo "  ${key//:/ }:${VALUES["${key//:/ }"]}"; done
echo "load average (1/5/15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
if [ "$ANY_FAILED" = 1 ]; then echo "FAILED:"; sed 's/^/  /' "$W/failures"; exit 1; fi
exit 0
