# Shared helpers for the end-to-end tests. Sourced by each Tests/e2e/*.sh script, never run.
#
# Processes: start_proc NAME CMD... runs CMD in the background with stdout/stderr in
# $E2E_TMP/NAME.out / NAME.err and stdin fed from a FIFO that this shell keeps open, so the test
# decides when EOF happens (close_stdin NAME). Every PID is recorded; on exit the trap stops them
# all by PID (only if they are still our children), runs the cleanup hooks (e.g. lab down) and
# removes the temp dir if the test passed; a failed test's stays for reading, without its payloads
# (kept_folders.sh says what stays and for how long).
#
# Env: P2P_BIN (default .build/debug/p2p, relative to the repo root), E2E_KEEP=1 keeps temp files whole.

set -uo pipefail
# A write to the stdin FIFO of a process that died must fail, not kill the test.
trap '' PIPE

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$E2E_DIR/kept_folders.sh"
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
P2P=${P2P_BIN:-.build/debug/p2p}
[[ "$P2P" = /* ]] || P2P=$REPO_ROOT/$P2P
LAB=$REPO_ROOT/scripts/lab.sh
MDNS=$REPO_ROOT/scripts/mdns-loopback.sh
export AVAHI_COMPAT_NOWARN=1 PYTHONUTF8=1
# The interpreter itself, not a version-manager shim that costs a few hundred ms per call.
PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)

TEST_NAME=$(basename "$0" .sh)
E2E_TMP=$(mktemp -d "/tmp/p2p-e2e-$TEST_NAME.XXXXXX")
declare -A PROC_PID=() PROC_FD=()
PROC_ORDER=()
CLEANUP_HOOKS=()
PASSED=0
FAILED=0
T0=$SECONDS

# ---------------------------------------------------------------- reporting

log() { echo "[$TEST_NAME +$((SECONDS - T0))s] $*"; }
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
# fail DESC [NAME...]: report a failure and show the output of the named processes.
fail() {
  FAILED=$((FAILED + 1)); echo "FAIL - $1"; shift
  local n; for n in "$@"; do show "$n"; done
}
# check DESC CMD...: pass if CMD succeeds.
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
# show NAME: the last lines of a process's stdout and stderr (or of any file).
show() {
  local f
  for f in "$E2E_TMP/$1.out" "$E2E_TMP/$1.err" "$1"; do
    [ -f "$f" ] && [ -s "$f" ] && { echo "    ----- $(basename "$f") (last 25 lines)"; tail -n 25 "$f" | sed 's/^/    | /'; }
  done
  return 0
}
# finish: print the summary and exit (non-zero when anything failed or nothing was checked).
finish() {
  log "done"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ] && exit 0
  exit 1
}
# need CMD...: give up (as one failure) when a required program is missing.
need() {
  local c; for c; do command -v "$c" >/dev/null || { fail "required program '$c' not found"; finish; }; done
}

# ---------------------------------------------------------------- processes

# Close, in a child about to exec, the write ends of every stdin FIFO: otherwise the child keeps
# another process's stdin open and that process never sees EOF.
_close_fifos() { local fd; for fd in "${PROC_FD[@]}"; do exec {fd}>&-; done; }

# start_proc NAME CMD...: CMD in the background, stdin from a FIFO we hold open. $! is CMD's PID
# (the subshell execs), so `lab.sh exec X prog` (which execs too) is tracked as prog itself.
start_proc() {
  local name=$1 fifo fd; shift
  fifo=$E2E_TMP/$name.in
  mkfifo "$fifo"
  ( _close_fifos; exec "$@" ) <"$fifo" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err" &
  PROC_PID[$name]=$!
  PROC_ORDER+=("$name")
  exec {fd}>"$fifo"     # unblocks the child's open of the FIFO
  PROC_FD[$name]=$fd
}

# start_bg NAME CMD...: CMD in the background with stdin from /dev/null.
start_bg() {
  local name=$1; shift
  ( _close_fifos; exec "$@" ) </dev/null >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err" &
  PROC_PID[$name]=$!
  PROC_ORDER+=("$name")
}

# run CMD...: a foreground command that must not inherit the FIFO write ends.
run() { ( _close_fifos; exec "$@" ); }

# send_line NAME TEXT: one line to NAME's stdin.
send_line() { printf '%s\n' "$2" >&"${PROC_FD[$1]}"; }

# close_stdin NAME: EOF for NAME.
close_stdin() {
  local fd=${PROC_FD[$1]:-}
  [ -n "$fd" ] || return 0
  exec {fd}>&-
  unset "PROC_FD[$1]"
}

pid_of() { echo "${PROC_PID[$1]}"; }
out_of() { echo "$E2E_TMP/$1.out"; }

# Our own child, still running (not a zombie)? Guards against PID reuse: only a process whose
# parent is this shell counts.
_ours_running() {
  local pid=$1 stat rest
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  rest=${stat##*) }             # after "pid (comm) "
  set -- $rest                  # state ppid ...
  [ "$1" != Z ] && [ "$1" != X ] && [ "$2" = "$$" ]
}
is_running() { _ours_running "${PROC_PID[$1]}"; }

# wait_exit NAME TIMEOUT: wait for NAME to exit; its status is in EXIT_RC. Returns 1 on timeout.
EXIT_RC=
wait_exit() {
  local pid=${PROC_PID[$1]} end=$((SECONDS + $2))
  while _ours_running "$pid"; do
    [ "$SECONDS" -lt "$end" ] || { EXIT_RC=; return 1; }
    sleep 0.1
  done
  wait "$pid" 2>/dev/null; EXIT_RC=$?
  return 0
}

# stop_proc NAME: SIGTERM by PID, SIGKILL after 5 s, reap.
stop_proc() {
  local name=$1 pid=${PROC_PID[$1]:-} i
  [ -n "$pid" ] || return 0
  close_stdin "$name"
  if _ours_running "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 50); do _ours_running "$pid" || break; sleep 0.1; done
    if _ours_running "$pid"; then log "$name (PID $pid) ignored SIGTERM; SIGKILL"; kill -KILL "$pid" 2>/dev/null; fi
  fi
  wait "$pid" 2>/dev/null
  unset "PROC_PID[$name]"
  return 0
}

# on_exit CMD: run CMD (eval'd) during cleanup, after every process is stopped; last added runs first.
on_exit() { CLEANUP_HOOKS=("$1" "${CLEANUP_HOOKS[@]}"); }

_cleanup() {
  local rc=$? i name hook
  trap - EXIT INT TERM
  for name in "${!PROC_FD[@]}"; do close_stdin "$name"; done
  for ((i = ${#PROC_ORDER[@]} - 1; i >= 0; i--)); do stop_proc "${PROC_ORDER[$i]}"; done
  for hook in "${CLEANUP_HOOKS[@]}"; do eval "$hook" || true; done
  if [ "${E2E_KEEP:-0}" = 1 ]; then echo "kept $E2E_TMP"
  elif [ "$rc" != 0 ]; then
    e2e_trim_payloads "$E2E_TMP"
    echo "kept $E2E_TMP for reading (the test failed; files over 1 MiB other than logs removed)"
  else rm -rf "$E2E_TMP"; fi
  exit "$rc"
}
trap _cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

# ---------------------------------------------------------------- waiting and JSON

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds; 1 on timeout.
wait_until() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.1; done
}

# wait_for FILE PATTERN SECONDS: poll until FILE has a line matching the extended regex PATTERN.
wait_for() { wait_until "$3" grep -qE -- "$2" "$1"; }

# wait_json SECONDS NAME COND...: wait for a JSON line of NAME's stdout matching every COND
# (key=value, key!=value, key~value, key?; see jsonl.py) and print it.
wait_json() { local t=$1 n=$2; shift 2; "$PYTHON" "$E2E_DIR/jsonl.py" wait "$t" "$E2E_TMP/$n.out" "$@"; }
# count_json NAME COND...: how many JSON lines of NAME's stdout match.
count_json() { local n=$1; shift; "$PYTHON" "$E2E_DIR/jsonl.py" count "$E2E_TMP/$n.out" "$@"; }
# get_json NAME FIELD COND...: FIELD of NAME's first line matching (status 1 if none).
get_json() { local n=$1 f=$2; shift 2; "$PYTHON" "$E2E_DIR/jsonl.py" get "$E2E_TMP/$n.out" "$f" "$@"; }
# expect_json SECONDS NAME DESC COND...: pass/fail on wait_json, showing NAME's output on failure.
expect_json() {
  local t=$1 n=$2 d=$3; shift 3
  if wait_json "$t" "$n" "$@" >/dev/null; then pass "$d"; else fail "$d (no event $* within $t s)" "$n"; fi
}
# expect_no_json NAME DESC COND...: pass when no line of NAME's stdout matches.
expect_no_json() {
  local n=$1 d=$2 c; shift 2
  c=$(count_json "$n" "$@")
  if [ "$c" = 0 ]; then pass "$d"; else fail "$d ($c events $*)" "$n"; fi
}

# home NAME: a fresh identity directory (P2P_HOME) for one process.
home() { mkdir -p "$E2E_TMP/home-$1" && echo "$E2E_TMP/home-$1"; }

# name_dials A B: succeeds when, in a room, the peer announced as A dials the one announced as B (the name
# rule of PROTOCOL.md §2.2, written here apart from the Swift code: SHA-256 of the two names, ASCII folded).
name_dials() {
  "$PYTHON" - "$1" "$2" <<'PY'
import hashlib, sys
fold = lambda n: bytes(c | 0x20 if 0x41 <= c <= 0x5A else c for c in n.encode())
a, b = fold(sys.argv[1]), fold(sys.argv[2])
lower, higher = sorted((a, b))
lower_dials = hashlib.sha256(lower + b"\0" + higher).digest()[0] & 1 == 0
sys.exit(0 if a == b or lower_dials == (a == lower) else 1)
PY
}

# free_port [HOST]: a TCP and UDP port that is free right now here, or in lab host HOST, where the port
# will be bound: a port free here may be taken there (a connection's local port in that namespace).
free_port() {
  local where=()
  [ $# -gt 0 ] && where=("$LAB" exec "$1")
  "${where[@]}" "$PYTHON" - <<'EOF'
import socket
while True:
    t = socket.socket(); t.bind(("0.0.0.0", 0)); port = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("0.0.0.0", port))
    except OSError:
        continue
    finally:
        u.close(); t.close()
    print(port); break
EOF
}

# ensure_loopback_mdns: make sure an avahi-daemon answers on the default system bus, starting the
# repo's loopback-only one if none does (and stopping it on exit only if we started it).
ensure_loopback_mdns() {
  unset DBUS_SYSTEM_BUS_ADDRESS
  if run "$MDNS" status >/dev/null 2>&1; then log "an avahi-daemon is already running; using it"; return 0; fi
  log "starting the loopback avahi-daemon"
  run "$MDNS" start || return 1
  on_exit '"$MDNS" stop >/dev/null'
}

[ -x "$P2P" ] || { echo "FAIL - p2p binary not found at $P2P (run swift build, or set P2P_BIN)"; echo "0 passed, 1 failed"; exit 1; }
