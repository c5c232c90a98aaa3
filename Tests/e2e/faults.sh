#!/usr/bin/env bash
# Faults between two lab hosts (namespaces A 10.213.7.1 and B 10.213.7.2, each with its own avahi-daemon),
# each checked the way a user would notice it, with the time it took:
#  1. kill -9 of the sender mid-transfer: `p2p receive` reports the disconnect within 10 s, keeps running,
#     and the same send run again resumes there (only the rest crosses the veth) and verifies;
#  2. kill -9 of the receiver: the sender reports it and exits 8 within 10 s; a new receive + send resumes;
#  3. the veth cut (`ip link set … down` in B) mid-transfer: both ends see the disconnect within 10 s
#     (heartbeat); the sender keeps trying, and once the link is back up it resumes by itself and
#     verifies (only the rest crosses the veth), the receiver never restarted;
#  4. kill -9 of a player mid-round: the other reports the opponent gone within 10 s, keeps running, and
#     when the player returns a new game is played with the running score kept;
#  5. avahi-daemon restarted (SIGTERM, and kill -9) under a running `p2p receive` and `p2p chat`: they
#     re-register and re-browse by themselves; the other host finds the receiver again and a send by
#     name works, and the chat finds (and connects to) a peer that appeared after its daemon restarted;
#  6. a taken --port, an unwritable config directory (read-only mount, a file in its place, a 0500
#     directory for a non-root user), a full disk (8 MiB tmpfs and a 20 MiB file; a disk that fills up
#     mid-transfer): a clear message and exit code, nothing under the final name, the sender told why.
# Mid-transfer faults use a token-bucket qdisc on A's veth (tc tbf), so a transfer takes seconds.
# The lab prefix defaults to flt<PID> (P2P_LAB_PREFIX), apart from other labs on this machine.
# Needs root (lab.sh up, tc, mount).
. "$(dirname "$0")/lib.sh"
need ip tc python3 sha256sum setpriv
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-flt$$}
PREFIX=$P2P_LAB_PREFIX
NS_A=${PREFIX}A NS_B=${PREFIX}B A_LINK=${PREFIX}vA B_LINK=${PREFIX}vB
TAG=$$-$RANDOM
MiB=$((1 << 20))
FIGURES=()
lab_absent() { ! ip netns list | grep -qE "^($PREFIX)(A|B)( |$)"; }

on_exit 'ip -n "$NS_B" link set "$B_LINK" up 2>/dev/null; run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
on_exit 'for m in "$E2E_TMP"/mnt-*; do mountpoint -q "$m" && umount "$m"; done 2>/dev/null'
log "lab up ($PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up (A and B resolve each other's services)"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# ---------------------------------------------------------------- helpers

# receiver PROC WHO DIR [ARGS...]: `p2p receive --json --yes` in B, named WHO-TAG, identity home-WHO.
receiver() {
  local p=$1 who=$2 dir=$3; shift 3
  mkdir -p "$dir"
  start_proc "$p" env P2P_HOME="$(home "$who")" "$LAB" exec B "$P2P" receive --json --yes --once --name "$who-$TAG" --dir "$dir" "$@"
  expect_json 20 "$p" "$p listens (receive in B)" event=listening name="$who-$TAG"
}
. "$E2E_DIR/transfer_helpers.sh"
now() { date +%s.%N; }
# since T0: seconds from T0 to now, one decimal.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
at_most() { awk -v t="$1" -v l="$2" 'BEGIN { exit !(t <= l) }'; }
figure() { FIGURES+=("$1"); log "FIGURE: $1"; }
# timed_json LIMIT T0 NAME DESC COND...: NAME prints a matching line within LIMIT s of T0; the time is a figure.
timed_json() {
  local limit=$1 t0=$2 n=$3 d=$4 took; shift 4
  if wait_json "$limit" "$n" "$@" >/dev/null; then
    took=$(since "$t0")
    if at_most "$took" "$limit"; then pass "$d in $took s"; else fail "$d took $took s (limit $limit s)" "$n"; fi
    figure "$d: $took s"
  else
    fail "$d: nothing within $limit s (no $*)" "$n"
  fi
}
# still_running NAME DESC: NAME has not exited (checked after a short pause, so an exit in progress counts).
still_running() { sleep 1; if is_running "$1"; then pass "$2"; else wait_exit "$1" 1; fail "$2 (it exited: ${EXIT_RC:-?})" "$1"; fi; }
# last_json NAME FIELD COND...: FIELD of NAME's last matching line.
last_json() { local n=$1 f=$2; shift 2; "$PYTHON" "$E2E_DIR/jsonl.py" get <(tac "$E2E_TMP/$n.out") "$f" "$@"; }
# resumes RX TX OFFSET_MIN FILE SHA DIR DESC: the resumed send TX exits 0, RX's last file-received
# shows a resume offset (resumed-from), only the rest crossed the veth, the file verifies and no .part is left.
check_resume() {
  local rx=$1 tx=$2 part=$3 file=$4 want=$5 dir=$6 before=$7 after offset size rest travelled name
  name=$(basename "$file"); size=$(size_of "$file")
  exits "$tx" 60 0 "the send (resumed) succeeds"
  after=$(tx_bytes)
  offset=$(last_json "$rx" resumed-from event=file-received name="$name" || echo 0)
  check "it resumed at the $offset bytes the receiver held (.part was $part)" [ "$offset" -gt 0 -a "$offset" = "$part" ]
  expect_json 1 "$tx" "file-sent says resumed-from $offset" event=file-sent name="$name" resumed-from="$offset" sha256="$want"
  check "the resumed file has the right SHA-256" [ "$(sha "$dir/$name" 2>/dev/null)" = "$want" ]
  check "no .part left after the resume" [ ! -e "$dir/$name.part" ]
  travelled=$((after - before)); rest=$((size - offset))
  if [ "$travelled" -ge "$rest" ] && [ "$travelled" -le $((rest * 110 / 100 + MiB)) ]; then
    pass "only the rest travelled: $travelled bytes on A's veth for $rest missing"
  else
    fail "bytes on A's veth during the resume: $travelled, expected about $rest"
  fi
}

head -c $((48 * MiB)) /dev/urandom >"$E2E_TMP/mid.bin"
MID_SHA=$(sha "$E2E_TMP/mid.bin")
MID=$((48 * MiB))

# ================================================================ 1. kill -9 of the sender
log "1. kill -9 of the sender mid-transfer"
shape on
receiver rx1 rx1 "$E2E_TMP/in1"
sender tx1 tx1 rx1 "$E2E_TMP/mid.bin"
if wait_until 60 part_reaches "$E2E_TMP/in1/mid.bin.part" $((8 * MiB)); then
  t0=$(now); kill -KILL "$(pid_of tx1)"; wait_exit tx1 5
  timed_json 10 "$t0" rx1 "receiver reports the killed sender" event=transfer-failed name=mid.bin reason~"disconnected"
  still_running rx1 "the receiver keeps running, waiting for the sender to resume"
  part=$(size_of "$E2E_TMP/in1/mid.bin.part")
  check "a partial mid.bin.part ($part bytes) and no final file" [ "$part" -gt 0 -a "$part" -lt "$MID" -a ! -e "$E2E_TMP/in1/mid.bin" ]
  shape off
  before=$(tx_bytes)
  sender tx1b tx1 rx1 "$E2E_TMP/mid.bin"
  check_resume rx1 tx1b "$part" "$E2E_TMP/mid.bin" "$MID_SHA" "$E2E_TMP/in1" "$before"
  check "the receiver that waited is the one that got it (one listening event, PID unchanged)" [ "$(count_json rx1 event=listening)" = 1 ]
  exits rx1 20 0 "the receiver exits 0 once the resumed file verified and the sender left"
else
  fail "transfer 1 never reached 8 MiB" rx1 tx1
fi
shape off; stop_proc tx1; stop_proc rx1

# ================================================================ 2. kill -9 of the receiver
log "2. kill -9 of the receiver mid-transfer"
shape on
receiver rx2 rx2 "$E2E_TMP/in2"
sender tx2 tx2 rx2 "$E2E_TMP/mid.bin"
if wait_until 60 part_reaches "$E2E_TMP/in2/mid.bin.part" $((8 * MiB)); then
  t0=$(now); kill -KILL "$(pid_of rx2)"; wait_exit rx2 5
  if wait_exit tx2 10; then
    took=$(since "$t0")
    check "the sender exits 8 (transfer failed) within 10 s of the receiver's death ($took s, exit $EXIT_RC)" [ "$EXIT_RC" = 8 ]
    figure "sender exits after the receiver's kill -9: $took s"
  else
    fail "the sender was still running 10 s after the receiver died" tx2; stop_proc tx2
  fi
  expect_json 1 tx2 "the sender says the receiver disconnected" event=transfer-failed name=mid.bin reason~"disconnected"
  check "the sender's message says how to resume" grep -q "run the same send again to resume" "$E2E_TMP/tx2.err"
  shape off
  part=$(size_of "$E2E_TMP/in2/mid.bin.part")
  receiver rx2b rx2 "$E2E_TMP/in2"
  before=$(tx_bytes)
  sender tx2b tx2 rx2 "$E2E_TMP/mid.bin"
  check_resume rx2b tx2b "$part" "$E2E_TMP/mid.bin" "$MID_SHA" "$E2E_TMP/in2" "$before"
  exits rx2b 20 0 "the new receiver exits 0"
else
  fail "transfer 2 never reached 8 MiB" rx2 tx2
fi
shape off; stop_proc tx2; stop_proc rx2b

# ================================================================ 3. the link cut mid-transfer
log "3. link cut (ip link set $B_LINK down in B) mid-transfer"
shape on
receiver rx3 rx3 "$E2E_TMP/in3"
sender tx3 tx3 rx3 "$E2E_TMP/mid.bin"
if wait_until 60 part_reaches "$E2E_TMP/in3/mid.bin.part" $((8 * MiB)); then
  t0=$(now); ip -n "$NS_B" link set "$B_LINK" down
  timed_json 10 "$t0" rx3 "receiver sees the cut link (heartbeat)" event=transfer-failed name=mid.bin reason~"disconnected"
  timed_json 10 "$t0" tx3 "sender sees the cut link (heartbeat)" event=transfer-failed name=mid.bin reason~"disconnected"
  still_running tx3 "the sender waits for a way back to the receiver (no route is no reason to give up)"
  still_running rx3 "the receiver keeps running through the cut"
  part=$(size_of "$E2E_TMP/in3/mid.bin.part")
  before=$(tx_bytes)
  ip -n "$NS_B" link set "$B_LINK" up
  shape off
  # The same send resumes by itself once the link is back (within its 30 s), nobody runs it again.
  check_resume rx3 tx3 "$part" "$E2E_TMP/mid.bin" "$MID_SHA" "$E2E_TMP/in3" "$before"
  expect_json 1 tx3 "the sender said it resumed over a new connection" event=resuming attempt=1
  exits rx3 20 0 "the receiver that lived through the cut exits 0 after the resumed file"
else
  fail "transfer 3 never reached 8 MiB" rx3 tx3
fi
ip -n "$NS_B" link set "$B_LINK" up 2>/dev/null
shape off; stop_proc tx3; stop_proc rx3

# ================================================================ 4. kill -9 of a player
log "4. kill -9 of a player mid-round"
SID=e2e-faults-game-$TAG
game_in() { # game_in PROC HOST NAME: a piped JSON game in lab host HOST, identity home-NAME
  start_proc "$1" env P2P_HOME="$(home "$3")" "$LAB" exec "$2" "$P2P" game --json --yes --name "$3-$TAG" --session-id "$SID"
}
moves() { # moves ROLE OUTCOME: the squares ROLE (X or O) plays for OUTCOME
  case "$2" in
    x-wins) [ "$1" = X ] && echo "1 2 3" || echo "4 5" ;;
    o-wins) [ "$1" = X ] && echo "1 2 9" || echo "4 5 6" ;;
  esac
}
# play_round P Q WANT_P N: feed P and Q the moves that give P the result WANT_P in the Nth game-start of P.
play_round() {
  local p=$1 q=$2 want=$3 n=$4 you outcome m
  wait_until 30 bash -c '[ "$("$1" "$2" count "$3" event=game-start)" -ge "$4" ]' _ "$PYTHON" "$E2E_DIR/jsonl.py" "$(out_of "$p")" "$n" \
    || { fail "game start $n never came at $p" "$p" "$q"; return 1; }
  you=$(last_json "$p" you event=game-start)
  case "$want/$you" in win/X|lose/O) outcome=x-wins ;; *) outcome=o-wins ;; esac
  for m in $(moves "$you" $outcome); do send_line "$p" "$m"; done
  for m in $(moves "$([ "$you" = X ] && echo O || echo X)" $outcome); do send_line "$q" "$m"; done
}
game_in alice A alice
game_in bob B bob
expect_json 40 alice "alice and bob connect (DNS-SD)" event=connected peer="bob-$TAG"
play_round alice bob win 1
expect_json 20 alice "round 1: alice wins" event=game-over round=1 result=win
expect_json 20 bob "round 2 starts" event=game-start round=2
t0=$(now); kill -KILL "$(pid_of bob)"; wait_exit bob 5
timed_json 10 "$t0" alice "alice reports the killed opponent gone" event=opponent-left peer="bob-$TAG" reason=disconnected
still_running alice "alice keeps running, waiting for bob to come back"
game_in bob2 B bob
expect_json 40 bob2 "bob, restarted, connects to alice again" event=connected peer="alice-$TAG"
check "alice connected to the returning bob without a restart" wait_until 10 bash -c '[ "$("$1" "$2" count "$3" event=connected)" -ge 2 ]' _ "$PYTHON" "$E2E_DIR/jsonl.py" "$(out_of alice)"
if play_round alice bob2 lose 3; then
  if wait_until 20 bash -c '[ "$("$1" "$2" count "$3" event=game-over result=lose)" -ge 1 ]' _ "$PYTHON" "$E2E_DIR/jsonl.py" "$(out_of alice)"; then
    pass "a new game is played with the returned bob (alice loses it)"
    score=$(last_json alice score event=game-over result=lose)
    check "alice's running score is kept across the crash: 1 win, 1 loss ($score)" [ "$score" = '{"draws": 0, "losses": 1, "wins": 1}' -o "$score" = '{"draws":0,"losses":1,"wins":1}' ]
  else
    fail "no game-over of the new game at alice" alice bob2
  fi
fi
expect_no_json alice "alice printed no error" event=error
for p in alice bob2; do close_stdin "$p"; done
exits alice 15 0 "alice exits 0 after EOF"
exits bob2 15 0 "bob exits 0 after EOF"

# ================================================================ 5. avahi-daemon restarted
log "5. avahi-daemon restarted under running p2p"
receiver rx5 rx5 "$E2E_TMP/in5"
expect_json 20 rx5 "rx5 is advertised" event=advertising name="rx5-$TAG"
RX5_PID=$(pid_of rx5)
restart=$(run "$LAB" restart-avahi B 2>>"$E2E_TMP/lab.log")   # SIGTERM: it says goodbye, so A forgets rx5
back=${restart##*running_at=}
expect_json 10 rx5 "receive says discovery was lost" event=discovery-lost
if wait_until 30 bash -c '[ "$("$1" "$2" count "$3" event=advertising)" -ge 2 ]' _ "$PYTHON" "$E2E_DIR/jsonl.py" "$(out_of rx5)"; then
  took=$(since "$back")
  pass "receive registered again by itself ($took s after B's avahi was back)"
  figure "re-registered after avahi-daemon restart (SIGTERM): $took s after the daemon was running"
else
  fail "receive did not register again after the restart" rx5
fi
check "the new daemon in B holds rx5's registration" bash -c '"$1" exec B timeout 5 avahi-browse -pt _p2p._tcp 2>/dev/null | grep -q "rx5-$2"' _ "$LAB" "$TAG"
check "A resolves rx5 again" wait_until 10 bash -c '"$1" exec A timeout 5 avahi-browse -rpt _p2p._tcp 2>/dev/null | grep -q "^=;.*;rx5-$2;"' _ "$LAB" "$TAG"
echo "after the restart" >"$E2E_TMP/after.txt"
sender tx5 tx5 rx5 "$E2E_TMP/after.txt"
exits tx5 40 0 "send --to rx5 by name works after B's avahi restart"
check "the file arrived at the same receive process (PID $RX5_PID)" cmp -s "$E2E_TMP/after.txt" "$E2E_TMP/in5/after.txt"
check "rx5 listened once: never restarted" [ "$(count_json rx5 event=listening)" = 1 ]
exits rx5 20 0 "that receive exits 0 after the send"

# browsing side: a chat in A waits for a peer; A's avahi is killed (-9) and restarted; the peer appears after.
start_proc watch env P2P_HOME="$(home watch)" "$LAB" exec A "$P2P" chat --json --yes --session-id files --name "watch-$TAG" --to "rx6-$TAG" --timeout 120
expect_json 20 watch "chat in A is advertised" event=advertising name="watch-$TAG"
restart=$(run "$LAB" restart-avahi A --kill 2>>"$E2E_TMP/lab.log")
back=${restart##*running_at=}
expect_json 10 watch "chat reports the daemon gone" event=discovery-lost message~"went away"
if wait_until 30 bash -c '[ "$("$1" "$2" count "$3" event=advertising)" -ge 2 ]' _ "$PYTHON" "$E2E_DIR/jsonl.py" "$(out_of watch)"; then
  took=$(since "$back")
  pass "chat registered again by itself ($took s after A's avahi was back)"
  figure "re-registered after avahi-daemon kill -9 + restart: $took s after the daemon was running"
else
  fail "chat did not register again after the restart" watch
fi
receiver rx6 rx6 "$E2E_TMP/in6"
t0=$(now)
timed_json 20 "$t0" watch "chat in A discovers a peer that appeared after its daemon restarted (re-browse)" event=peer-available peer="rx6-$TAG"
expect_json 20 watch "and connects to it by name" event=connected peer="rx6-$TAG"
close_stdin watch
exits watch 15 0 "the chat exits 0"
stop_proc rx6

# ================================================================ 6. port in use, config directory, disk full
log "6. port in use, unwritable config directory, full disk"
PORT=$((46000 + RANDOM % 2000))
start_bg holder "$LAB" exec B "$PYTHON" -c 'import socket,sys,time; s=socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$PORT"
sleep 0.5
mkdir -p "$E2E_TMP/inp"
start_proc rxp env P2P_HOME="$(home rxp)" "$LAB" exec B "$P2P" receive --json --yes --once --name "rxp-$TAG" --port "$PORT" --dir "$E2E_TMP/inp"
exits rxp 10 1 "receive --port $PORT (taken) fails"
check "it says the address is in use and to try another --port" grep -q "cannot listen on \[::\]:$PORT: Address already in use (try another --port)" "$E2E_TMP/rxp.err"
stop_proc holder

# config_case NAME HOME DESC PATTERN [RUNNER...]: receive with P2P_HOME=HOME exits 1 and says PATTERN.
config_case() {
  local p=$1 h=$2 d=$3 pattern=$4; shift 4
  start_proc "$p" "$LAB" exec B "$@" env P2P_HOME="$h" "$P2P" receive --json --yes --name "$p-$TAG" --dir /tmp
  exits "$p" 10 1 "$d: receive fails"
  check "$d: it names the problem and P2P_HOME ($(head -n 1 "$E2E_TMP/$p.err"))" grep -q "$pattern.*set P2P_HOME to a writable directory" "$E2E_TMP/$p.err"
  check "$d: nothing listened (no listening event)" [ "$(count_json "$p" event=listening)" = 0 ]
}
RO=$E2E_TMP/mnt-ro; mkdir -p "$RO"; mount --bind "$RO" "$RO" && mount -o remount,bind,ro "$RO"
config_case cfg1 "$RO" "read-only config directory" "Read-only file system"
check "read-only config directory: nothing was created in it" [ -z "$(ls -A "$RO")" ]
umount "$RO"
KEYED=$E2E_TMP/mnt-keyed; mkdir -p "$KEYED"; run env P2P_HOME="$KEYED" "$P2P" id >/dev/null
KEY_SHA=$(sha "$KEYED/identity.pem")
mount --bind "$KEYED" "$KEYED" && mount -o remount,bind,ro "$KEYED"
config_case cfg2 "$KEYED" "read-only config directory holding an identity" "Read-only file system"
check "the identity key is unchanged" [ "$(sha "$KEYED/identity.pem")" = "$KEY_SHA" ]
umount "$KEYED"
echo "not a directory" >"$E2E_TMP/home-file"
config_case cfg3 "$E2E_TMP/home-file" "a file where the config directory should be" "is not a directory"
check "that file is unchanged" [ "$(cat "$E2E_TMP/home-file")" = "not a directory" ]
LOCKED=$E2E_TMP/locked; mkdir -p "$LOCKED"; chmod 0500 "$LOCKED"; chmod 0755 "$E2E_TMP"
config_case cfg4 "$LOCKED/p2p" "a 0500 root-owned directory, for user nobody" "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups
check "nothing was created in the 0500 directory" [ -z "$(ls -A "$LOCKED")" ]

# Disk full (a): a 20 MiB file for an 8 MiB tmpfs is refused up front: nothing written, the sender told why.
SMALL=$E2E_TMP/mnt-small; mkdir -p "$SMALL"; mount -t tmpfs -o size=8m tmpfs "$SMALL"
head -c $((20 * MiB)) /dev/urandom >"$E2E_TMP/twenty.bin"
receiver rxf rxf "$SMALL"
sender txf txf rxf "$E2E_TMP/twenty.bin"
exits txf 40 8 "send of 20 MiB to a receiver with 8 MiB free fails"
check "the sender says there is not enough space ($(tail -n 1 "$E2E_TMP/txf.err"))" grep -q "not enough space" "$E2E_TMP/txf.err"
expect_json 5 rxf "the receiver reports it" event=transfer-failed name=twenty.bin reason~"not enough space"
check "nothing written on the full disk (no file, no .part)" no_files "$SMALL"
exits rxf 20 8 "the receiver exits 8"
umount "$SMALL"

# Disk full (b): the disk fills up while the file arrives: the write error stops it, the sender is told.
HALF=$E2E_TMP/mnt-half; mkdir -p "$HALF"; mount -t tmpfs -o size=24m tmpfs "$HALF"
shape on
receiver rxh rxh "$HALF"
sender txh txh rxh "$E2E_TMP/twenty.bin"
if wait_until 60 part_reaches "$HALF/twenty.bin.part" $((4 * MiB)); then
  head -c $((24 * MiB)) /dev/zero >"$HALF/filler" 2>/dev/null   # fills what is left
  exits txh 20 8 "a send whose receiver's disk filled up mid-way exits 8"
  check "the sender says why: no space left ($(tail -n 1 "$E2E_TMP/txh.err"))" grep -q "No space left on device" "$E2E_TMP/txh.err"
  expect_json 5 rxh "the receiver reports the write error" event=transfer-failed name=twenty.bin reason~"No space left on device"
  check "no file under the final name, the .part is kept (for a resume)" [ ! -e "$HALF/twenty.bin" -a -e "$HALF/twenty.bin.part" ]
  exits rxh 20 8 "the receiver exits 8"
  rm -f "$HALF/filler"
  shape off
  part=$(size_of "$HALF/twenty.bin.part")
  receiver rxh2 rxh "$HALF"
  before=$(tx_bytes)
  sender txh2 txh rxh "$E2E_TMP/twenty.bin"
  check_resume rxh2 txh2 "$part" "$E2E_TMP/twenty.bin" "$(sha "$E2E_TMP/twenty.bin")" "$HALF" "$before"
  exits rxh2 20 0 "once space is freed the resumed receive exits 0"
else
  fail "transfer to the 24 MiB tmpfs never reached 4 MiB" rxh txh
fi
shape off
for p in txh rxh txh2 rxh2; do stop_proc "$p"; done
umount "$HALF"

# ---------------------------------------------------------------- figures, and nothing left behind
log "figures:"; for f in "${FIGURES[@]}"; do echo "    $f"; done
for p in "${PROC_ORDER[@]}"; do stop_proc "$p"; done
run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1
check "lab down leaves no namespace" lab_absent
check "lab down reported no leftover processes" bash -c '! grep -q "processes still running" "$1"' _ "$E2E_TMP/lab.log"

finish
