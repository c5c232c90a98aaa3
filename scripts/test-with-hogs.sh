#!/usr/bin/env bash
# Runs a test command with CPU hogs beside it (issue 36: "the test command is green 3 times of 3 with two
# CPU hogs (`yes > /dev/null` twice) running beside it"), and prints how long each run and each of its
# steps took. The hogs are started before each run and stopped by their PIDs after it, and on any exit
# (Ctrl-C, a failure of this script) too.
#
# usage: scripts/test-with-hogs.sh [--hogs N] [--runs N] [--log DIR] [--] COMMAND [ARG...]
#   --hogs N   how many `yes > /dev/null` (default 2)
#   --runs N   how many runs of COMMAND in a row (default 1); every run is made, green or red
#   --log DIR  each run's output goes to DIR/run-K.log (default: a new /tmp/p2p-hogs.XXXXXX), and to
#              the terminal
# e.g.  scripts/test-with-hogs.sh --runs 3 scripts/test.sh
#       scripts/test-with-hogs.sh --runs 3 swift test
# Steps: when COMMAND prints a step table as scripts/test.sh does ("test.sh: steps", then one line
# per step with its seconds), that table is repeated per run in the summary; for another command the
# run's total is its only step.
# Exit status: 0 if every run exited 0, else 1 (the summary says which).
set -uo pipefail
ME=test-with-hogs.sh
HOGS=2 RUNS=1 LOG=
while [ $# -gt 0 ]; do
  case $1 in
    --hogs) HOGS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --log) LOG=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$ME: unknown option $1 (see --help)" >&2; exit 64 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $ME [--hogs N] [--runs N] [--log DIR] [--] COMMAND [ARG...]" >&2; exit 64; }
case $HOGS$RUNS in *[!0-9]*) echo "$ME: --hogs and --runs take a number" >&2; exit 64 ;; esac
[ -n "$LOG" ] || LOG=$(mktemp -d /tmp/p2p-hogs.XXXXXX)
mkdir -p "$LOG"

HOG_PIDS=()
start_hogs() {
  local i
  for i in $(seq "$HOGS"); do
    yes >/dev/null &
    HOG_PIDS+=($!)
  done
  echo "$ME: $HOGS hogs running (PIDs ${HOG_PIDS[*]:-none})"
}
stop_hogs() {
  local pid
  [ ${#HOG_PIDS[@]} -gt 0 ] || return 0
  for pid in "${HOG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${HOG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  HOG_PIDS=()
}
SUMMARY=()
report() {
  [ ${#SUMMARY[@]} -gt 0 ] || return 0
  echo
  echo "$ME: $HOGS hogs beside \`$*\`; logs in $LOG"
  printf '%s\n' "${SUMMARY[@]}"
}
CMD_PID= TEE_PID=
# On Ctrl-C or TERM: the hogs stop at once; the command gets TERM (a Ctrl-C at a terminal reaches it too).
interrupted() {
  echo "$ME: interrupted: stopping the hogs and the command" >&2
  stop_hogs
  [ -z "$CMD_PID" ] || { kill -TERM "$CMD_PID" 2>/dev/null; wait "$CMD_PID" 2>/dev/null; }
  [ -z "$TEE_PID" ] || wait "$TEE_PID" 2>/dev/null
  exit 130
}
trap 'stop_hogs; rm -f "$LOG/.output"' EXIT
trap interrupted INT TERM

echo "$ME: $RUNS run(s) of \`$*\` with $HOGS CPU hogs on $(nproc) CPUs; load average (1/5/15 min) now: $(cut -d' ' -f1-3 /proc/loadavg)"
FAILED=0
for run in $(seq "$RUNS"); do
  log=$LOG/run-$run.log
  start_hogs
  echo "$ME: run $run of $RUNS, load average before: $(cut -d' ' -f1 /proc/loadavg)"
  start=$SECONDS
  # In the background, so that this shell's `wait` (unlike a foreground pipeline) lets a signal in at once.
  rm -f "$LOG/.output"; mkfifo "$LOG/.output"
  tee "$log" <"$LOG/.output" &
  TEE_PID=$!
  "$@" >"$LOG/.output" 2>&1 </dev/null &
  CMD_PID=$!
  wait "$CMD_PID"; rc=$?
  wait "$TEE_PID"
  CMD_PID= TEE_PID=
  took=$((SECONDS - start))
  stop_hogs
  [ "$rc" = 0 ] || FAILED=1
  SUMMARY+=("run $run: $([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)"), ${took}s wall")
  # The command's own step table (scripts/test.sh prints one at its end), repeated here.
  steps=$(awk '/^[A-Za-z0-9._-]+: steps$/ {on = 1; next} on && /^  / {print} on && !/^  / {on = 0}' "$log")
  if [ -n "$steps" ]; then
    while IFS= read -r row; do SUMMARY+=("  $row"); done <<<"$steps"
  fi
done
report "$@"
exit "$FAILED"
