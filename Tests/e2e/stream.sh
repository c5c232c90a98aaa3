#!/usr/bin/env bash
# Byte streams between two lab hosts (namespaces A 10.213.7.1 and B 10.213.7.2, each with its own
# avahi-daemon): `p2p receive --stdout` runs in B, `p2p send - --as NAME --to RECEIVER` in A finds it
# by DNS-SD and sends its standard input:
#  - 50 MiB of random bytes arrive byte-exact (cmp) on the receiver's stdout, the only thing there (its
#    JSON events go to stderr); both exit 0 and report the same SHA-256 as sha256sum;
#  - kill -9 of the sender mid-stream (its input a pipe that stays open): the receiver exits 8 and
#    says on stderr that the stream broke and that its output holds only part of it (no
#    stream-received event);
#  - kill -9 of the receiver mid-stream: the sender exits 8 saying the stream broke;
#  - Ctrl-C on the sender: both exit 7 (cancelled);
#  - a file sent to a --stdout receiver is declined with the reason (send exits 6), and a stream sent
#    to a receiver of files is declined with the reason, instead of either waiting for an answer.
# The lab prefix defaults to p2pst<PID> (P2P_LAB_PREFIX), apart from the other lab tests' namespaces.
# Needs root (lab.sh up, tc).
. "$(dirname "$0")/lib.sh"
need ip tc python3 sha256sum cmp
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2pst$$}
PREFIX=$P2P_LAB_PREFIX
NS_A=${PREFIX}A A_LINK=${PREFIX}vA
TAG=$$-$RANDOM
MiB=$((1 << 20))

on_exit 'shape off; run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up ($PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up (A and B resolve each other's services)"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi
. "$E2E_DIR/transfer_helpers.sh"

# ---------------------------------------------------------------- helpers

# start_in NAME INPUT CMD...: like start_bg, with stdin read from INPUT (a file, a FIFO, /dev/zero).
start_in() {
  local name=$1 input=$2; shift 2
  ( _close_fifos; exec "$@" ) <"$input" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err" &
  PROC_PID[$name]=$!
  PROC_ORDER+=("$name")
}
# stream_receiver PROC WHO [ARGS...]: `p2p receive --stdout --json` in B; the stream lands in PROC.out,
# the JSON events in PROC.err.
stream_receiver() {
  local p=$1 who=$2; shift 2
  start_bg "$p" env P2P_HOME="$(home "$who")" "$LAB" exec B "$P2P" receive --stdout --json --name "$who-$TAG" "$@"
  if "$PYTHON" "$E2E_DIR/jsonl.py" wait 20 "$E2E_TMP/$p.err" event=listening name="$who-$TAG" >/dev/null; then
    pass "$p listens (receive --stdout in B)"
  else
    fail "$p did not listen" "$p"
  fi
}
# stream_sender PROC WHO TO INPUT [ARGS...]: `p2p send - --as dump.bin --json --to TO-TAG` in A, stdin from INPUT.
stream_sender() {
  local p=$1 who=$2 to=$3 input=$4; shift 4
  start_in "$p" "$input" env P2P_HOME="$(home "$who")" "$LAB" exec A "$P2P" send - --as dump.bin --json --name "$who-$TAG" \
    --to "$to-$TAG" --timeout 40 "$@"
}
# err_json SECONDS PROC DESC COND...: a JSON event on PROC's stderr (where --stdout puts them).
err_json() {
  local t=$1 p=$2 d=$3; shift 3
  if "$PYTHON" "$E2E_DIR/jsonl.py" wait "$t" "$E2E_TMP/$p.err" "$@" >/dev/null; then pass "$d"; else fail "$d (no event $* within $t s)" "$p"; fi
}
err_count() { local p=$1; shift; "$PYTHON" "$E2E_DIR/jsonl.py" count "$E2E_TMP/$p.err" "$@"; }
# slow_feed PROC MIB: a writer that puts MIB MiB (kept in PROC.sent) into PROC's input FIFO and then
# keeps it open, so that the input never ends.
slow_feed() {
  local fifo=$E2E_TMP/$1.fifo
  mkfifo "$fifo"
  head -c $(($2 * MiB)) /dev/urandom >"$E2E_TMP/$1.sent"
  # The writer opens the FIFO (blocking until the sender opens it to read), writes, then becomes a sleep
  # that holds it open: FEEDER is that one process.
  ( exec 3>"$fifo"; cat "$E2E_TMP/$1.sent" >&3; exec sleep 300 ) &
  FEEDER=$!
}
# is_prefix FILE WHOLE: FILE holds the first bytes of WHOLE.
is_prefix() { cmp -s "$1" <(head -c "$(size_of "$1")" "$2"); }
stop_feed() { [ -n "${FEEDER:-}" ] && kill "$FEEDER" 2>/dev/null; wait "${FEEDER:-}" 2>/dev/null; FEEDER=; }
on_exit 'stop_feed'

head -c $((50 * MiB)) /dev/urandom >"$E2E_TMP/src.bin"
SRC_SHA=$(sha "$E2E_TMP/src.bin")

# ================================================================ 1. 50 MiB byte-exact
log "50 MiB through send - into receive --stdout"
stream_receiver rx1 rx1 --yes
stream_sender tx1 tx1 rx1 "$E2E_TMP/src.bin"
exits tx1 120 0 "send - of 50 MiB succeeds"
exits rx1 20 0 "receive --stdout exits 0 once the stream is verified"
if cmp -s "$E2E_TMP/src.bin" "$(out_of rx1)"; then
  pass "the receiver's stdout is byte-exact (cmp), and nothing else is on it"
else
  fail "stdout differs: $(size_of "$(out_of rx1)") bytes, sha256 $(sha "$(out_of rx1)")" rx1 tx1
fi
err_json 1 rx1 "stream-received event on stderr: name, bytes, sha256 (sha256sum's), peer" \
  event=stream-received name=dump.bin bytes=$((50 * MiB)) sha256="$SRC_SHA" peer="tx1-$TAG"
expect_json 1 tx1 "stream-sent event: bytes and sha256 (sha256sum's)" event=stream-sent name=dump.bin bytes=$((50 * MiB)) sha256="$SRC_SHA" peer="rx1-$TAG"

# ================================================================ 2. kill -9 of the sender mid-stream
log "kill -9 of the sender mid-stream"
stream_receiver rx2 rx2 --yes
slow_feed tx2 12
stream_sender tx2 tx2 rx2 "$E2E_TMP/tx2.fifo"
if wait_until 60 part_reaches "$(out_of rx2)" $((12 * MiB)); then
  kill -KILL "$(pid_of tx2)"
  wait_exit tx2 5
  exits rx2 20 8 "the receiver of a stream whose sender was killed exits 8 (failed)"
  check "its stderr says the stream broke and the output is partial" grep -q "broke after .*standard output holds only part of it" "$E2E_TMP/rx2.err"
  err_json 1 rx2 "stream-failed event on stderr" event=stream-failed name=dump.bin reason~"broke"
  check "no stream-received event: the partial output is not reported complete" [ "$(err_count rx2 event=stream-received)" = 0 ]
  check "what reached stdout is the start of what was sent ($(size_of "$(out_of rx2)") of $((12 * MiB)) bytes)" is_prefix "$(out_of rx2)" "$E2E_TMP/tx2.sent"
else
  fail "the stream to rx2 never reached 12 MiB" rx2 tx2
fi
stop_feed; stop_proc tx2; stop_proc rx2

# ================================================================ 3. kill -9 of the receiver mid-stream
log "kill -9 of the receiver mid-stream"
shape on
stream_receiver rx3 rx3 --yes
stream_sender tx3 tx3 rx3 /dev/zero
if wait_until 60 part_reaches "$(out_of rx3)" $((8 * MiB)); then
  kill -KILL "$(pid_of rx3)"
  wait_exit rx3 5
  exits tx3 20 8 "the sender of a stream whose receiver was killed exits 8 (failed)"
  check "it says the stream broke" grep -q "the stream to rx3-$TAG broke after" "$E2E_TMP/tx3.err"
  expect_json 1 tx3 "stream-failed event" event=stream-failed name=dump.bin reason~"broke"
  expect_no_json tx3 "no stream-sent event" event=stream-sent
else
  fail "the stream to rx3 never reached 8 MiB" rx3 tx3
fi
shape off
stop_proc tx3; stop_proc rx3

# ================================================================ 4. Ctrl-C on the sender
log "Ctrl-C on the sender mid-stream"
stream_receiver rx4 rx4 --yes
stream_sender tx4 tx4 rx4 /dev/zero
if wait_until 60 part_reaches "$(out_of rx4)" $((8 * MiB)); then
  kill -INT "$(pid_of tx4)"
  exits tx4 15 7 "the sender interrupted mid-stream exits 7 (cancelled)"
  exits rx4 15 7 "the receiver exits 7 after the sender cancelled"
  check "the receiver says the sender cancelled" grep -q "cancelled the stream dump.bin after" "$E2E_TMP/rx4.err"
else
  fail "the stream to rx4 never reached 8 MiB" rx4 tx4
fi
stop_proc tx4; stop_proc rx4

# ================================================================ 5. the wrong kind of receiver
log "files to a --stdout receiver, a stream to a receiver of files"
stream_receiver rx5 rx5 --yes
echo "a file, not a stream" >"$E2E_TMP/note.txt"
sender tx5 tx5 rx5 "$E2E_TMP/note.txt"
exits tx5 40 6 "a file sent to receive --stdout is declined (exit 6)"
check "the sender hears why" grep -q "not files" "$E2E_TMP/tx5.err"
check "nothing reached the receiver's stdout" [ ! -s "$(out_of rx5)" ]
stop_proc rx5
mkdir -p "$E2E_TMP/in6"
start_proc rx6 env P2P_HOME="$(home rx6)" "$LAB" exec B "$P2P" receive --json --yes --name "rx6-$TAG" --dir "$E2E_TMP/in6"
expect_json 20 rx6 "rx6 listens (receive of files in B)" event=listening name="rx6-$TAG"
stream_sender tx6 tx6 rx6 "$E2E_TMP/note.txt"
exits tx6 40 6 "a stream sent to a receiver of files is declined (exit 6)"
check "the sender hears why" grep -q "receive --stdout" "$E2E_TMP/tx6.err"
check "nothing written by the receiver of files" no_files "$E2E_TMP/in6"
stop_proc rx6

finish
