#!/usr/bin/env bash
# The library's examples are real apps: each runs in lab host B and `p2p` talks to it from host A.
#  - TicTacToeBot (GameSession): `p2p game --to bot` with piped moves plays a round to its end; both
#    sides report the same result, the bot plays only legal moves, and when the piped player leaves
#    the bot says so with the final score.
#  - EchoPeer (Session.onMessage): `p2p chat --to echo` gets its line back.
#  - ChatRoomLog (RunningChat): `p2p chat --room R` and the log meet in room R by
#    themselves (whichever side dials), and the log prints alice's line with her name.
#  - FileDrop (FileTransfers + ReceiveLedger + ConnectionPolicy): run with --everyone, it takes erin's
#    file from `p2p send --to drop` and pins her key; run again (pinned keys only), it takes her tree and
#    refuses frank's new key. The files in the drop folder have the sent files' SHA-256, the drop prints
#    one summary line per batch, erin's sends exit 0 saying "all verified", frank's exits 6 "declined".
#    With --localsend-pin it is a LocalSend peer too: localsendd (an independent LocalSend 2.2 daemon) in
#    host A lists the drop by its name, sends a file with the PIN (equal bytes, one summary line naming the
#    LocalSend sender), and a send with a wrong PIN leaves nothing.
# Needs root (lab.sh up). The examples are built next to p2p (swift build builds every product).
. "$(dirname "$0")/lib.sh"
need ip python3 localsendd localsendctl
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2ex$$}
BIN_DIR=$(dirname "$P2P")
for example in TicTacToeBot EchoPeer ChatRoomLog FileDrop; do
  [ -x "$BIN_DIR/$example" ] || { fail "$BIN_DIR/$example is not built (swift build builds it)"; finish; }
done

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up ($P2P_LAB_PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# ---------------------------------------------------------------- TicTacToeBot
BOT=bot-$$
start_proc bot env P2P_HOME="$(home bot)" "$LAB" exec B "$BIN_DIR/TicTacToeBot" "$BOT"
if wait_for "$(out_of bot)" "waiting in the game session as $BOT" 30; then pass "the bot advertises"; else fail "the bot did not start" bot; finish; fi

start_proc alice env P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" game --json --yes --name "alice-$$" --to "$BOT"
expect_json 40 alice "alice finds the bot by DNS-SD and connects" event=connected peer="$BOT"
# Every square in turn: a taken one is refused by p2p and the next line is tried, so the round ends.
for square in 5 1 3 7 9 2 4 6 8; do send_line alice "$square"; done
close_stdin alice
if over=$(wait_json 40 alice event=game-over round=1); then
  pass "round 1 ends at alice: $over"
  alice_result=$(get_json alice result event=game-over round=1)
  bot_line="round 1: $(case $alice_result in win) echo lose ;; lose) echo win ;; *) echo "$alice_result" ;; esac);"
  if wait_for "$(out_of bot)" "$bot_line" 20; then pass "the bot reports the same round ($bot_line)"; else fail "the bot did not report '$bot_line'" bot; fi
  check "the bot made no illegal move (alice refused nothing)" [ "$(count_json alice event=violation)" = 0 ]
else
  fail "round 1 did not end at alice" alice bot
fi
if wait_exit alice 30; then check "alice leaves once her moves ran out (exit 0; got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "alice did not leave" alice; fi
if wait_for "$(out_of bot)" "alice-$$ left; final score" 20; then pass "the bot says alice left, with the final score"; else fail "the bot did not see alice leave" bot; fi
stop_proc bot

# ---------------------------------------------------------------- EchoPeer
ECHO=echo-$$
start_proc echo env P2P_HOME="$(home echo)" "$LAB" exec B "$BIN_DIR/EchoPeer" "$ECHO"
if wait_for "$(out_of echo)" "advertised as $ECHO" 30; then pass "EchoPeer advertises"; else fail "EchoPeer did not start" echo; finish; fi
start_proc carol env P2P_HOME="$(home carol)" "$LAB" exec A "$P2P" chat --json --yes --name "carol-$$" --to "$ECHO"
expect_json 40 carol "carol connects to EchoPeer" event=connected peer="$ECHO"
send_line carol "hello from carol"
expect_json 20 carol "the line comes back" event=message text="echo: hello from carol"
if wait_for "$(out_of echo)" "carol-$$> hello from carol" 10; then pass "EchoPeer printed carol's line"; else fail "EchoPeer did not print the line" echo; fi
close_stdin carol
wait_exit carol 20
stop_proc echo

# ---------------------------------------------------------------- ChatRoomLog
ROOM=room-$$
ROOMLOG=log-$$
start_proc roomlog env P2P_HOME="$(home roomlog)" "$LAB" exec B "$BIN_DIR/ChatRoomLog" "$ROOM" "$ROOMLOG"
if wait_for "$(out_of roomlog)" "ChatRoomLog in room \"$ROOM\" as $ROOMLOG" 30; then pass "ChatRoomLog joins room $ROOM"; else fail "ChatRoomLog did not start" roomlog; finish; fi
start_proc dave env P2P_HOME="$(home dave)" "$LAB" exec A "$P2P" chat --json --yes --name "dave-$$" --room "$ROOM"
expect_json 40 dave "dave and the log meet in the room" event=connected peer="$ROOMLOG"
if wait_for "$(out_of roomlog)" "dave-$$ joined" 10; then pass "the log sees dave join"; else fail "the log did not see dave join" roomlog; fi
send_line dave "hello room"
if wait_for "$(out_of roomlog)" "dave-$$> hello room" 20; then pass "the log printed dave's line with his name"; else fail "the log did not print dave's line" roomlog dave; fi
# A line on the log's standard input goes to the room: dave gets it from the log.
send_line roomlog "hello from the log"
expect_json 20 dave "dave gets the line typed into the log" event=message from="$ROOMLOG" text="hello from the log"
close_stdin dave
wait_exit dave 20
stop_proc roomlog

# ---------------------------------------------------------------- FileDrop
DROP=drop-$$
DROPPED=$E2E_TMP/dropped
SRC=$E2E_TMP/src
mkdir -p "$SRC/album/sub"
head -c 300000 /dev/urandom >"$SRC/photo.bin"
printf 'first\n' >"$SRC/album/a.txt"
head -c 70000 /dev/urandom >"$SRC/album/sub/b.bin"
# same_file SENT RECEIVED: both exist and have the same SHA-256.
same_file() { [ -f "$2" ] && [ "$(sha256sum <"$1")" = "$(sha256sum <"$2")" ]; }
album_arrived() { same_file "$SRC/album/a.txt" "$DROPPED/album/a.txt" && same_file "$SRC/album/sub/b.bin" "$DROPPED/album/sub/b.bin"; }
# sends WHO PROC PATH...: `p2p send --to the drop PATH...` from lab host A as WHO-$$ (identity home-WHO).
sends() {
  local who=$1 proc=$2; shift 2
  start_proc "$proc" env P2P_HOME="$(home "$who")" "$LAB" exec A "$P2P" send --name "$who-$$" --timeout 40 --to "$DROP" "$@"
}

start_proc drop env P2P_HOME="$(home drop)" "$LAB" exec B "$BIN_DIR/FileDrop" "$DROPPED" "$DROP" --everyone
if wait_for "$(out_of drop)" "^advertised as $DROP$" 30; then pass "FileDrop --everyone advertises"; else fail "FileDrop did not advertise as $DROP" drop; finish; fi
check "it says where files go and whom it lets in" grep -q "^FileDrop $DROP listening on port [0-9]*: files go into $DROPPED; letting in every key$" "$(out_of drop)"
sends erin erin1 "$SRC/photo.bin"
if wait_exit erin1 60; then check "erin's send of a file exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "erin's send did not end" erin1 drop; fi
if grep -qE "^Delivered 1 file \(.*\) to $DROP in .*, all verified\.$" "$(out_of erin1)"; then pass "erin's send says delivered, all verified"; else fail "erin's send did not say delivered" erin1; fi
check "the dropped file has the sent file's SHA-256" same_file "$SRC/photo.bin" "$DROPPED/photo.bin"
if wait_for "$(out_of drop)" "^erin-$$: 1 file \(293\.0 KiB\) into $DROPPED, verified by SHA-256$" 20; then pass "the drop prints erin's batch"; else fail "the drop did not print erin's batch" drop; fi
stop_proc drop

# The same drop (identity, trust store) without --everyone: erin's key was pinned on first use.
start_proc drop2 env P2P_HOME="$(home drop)" "$LAB" exec B "$BIN_DIR/FileDrop" "$DROPPED" "$DROP"
if wait_for "$(out_of drop2)" "^advertised as $DROP$" 30; then pass "FileDrop (pinned keys only) advertises again"; else fail "FileDrop did not advertise again as $DROP" drop2; finish; fi
check "it lets in pinned keys only" grep -q "^FileDrop $DROP listening on port [0-9]*: files go into $DROPPED; letting in pinned keys only$" "$(out_of drop2)"
sends erin erin2 "$SRC/album"
if wait_exit erin2 60; then check "erin's send of a tree exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "erin's tree send did not end" erin2 drop2; fi
if grep -qE "^Delivered 2 files \(.*\) to $DROP in .*, all verified\.$" "$(out_of erin2)"; then pass "erin's tree send says delivered, all verified"; else fail "erin's tree send did not say delivered" erin2; fi
check "the tree's files have the sent files' SHA-256" album_arrived
if wait_for "$(out_of drop2)" "^erin-$$: 2 files \(68\.4 KiB\) into $DROPPED, verified by SHA-256$" 20; then pass "the drop prints erin's tree batch"; else fail "the drop did not print erin's tree batch" drop2; fi
sends frank frank "$SRC/photo.bin"
if wait_exit frank 60; then check "frank's send (a new key) exits 6, denied (got $EXIT_RC)" [ "$EXIT_RC" = 6 ]; else fail "frank's send did not end" frank drop2; fi
if grep -q "$DROP declined the connection" "$E2E_TMP/frank.err"; then pass "frank hears that the drop declined the connection"; else fail "frank's send did not say declined" frank; fi
if wait_for "$(out_of drop2)" "^refused frank-$$ \(.*\): its key is not pinned" 10; then pass "the drop says it refused frank's new key"; else fail "the drop did not report refusing frank" drop2; fi
check "the drop printed no batch for frank" [ "$(grep -c "^frank-$$:" "$(out_of drop2)")" = 0 ]
stop_proc drop2

# FileDrop as a LocalSend peer too: localsendd in A drops a file with the PIN; a wrong PIN is refused.
ip -n "${P2P_LAB_PREFIX}A" route add 224.0.0.0/4 dev "${P2P_LAB_PREFIX}vA"
ip -n "${P2P_LAB_PREFIX}B" route add 224.0.0.0/4 dev "${P2P_LAB_PREFIX}vB"
HA=$E2E_TMP/anna; mkdir -p "$HA/dl"
ENV_A=(env HOME="$HA" XDG_RUNTIME_DIR="$HA" XDG_CONFIG_HOME="$HA/config" XDG_STATE_HOME="$HA/state")
lsctl() { run "$LAB" exec A "${ENV_A[@]}" localsendctl "$@"; }
start_proc lsd "$LAB" exec A "${ENV_A[@]}" localsendd --alias anna --unattended --download-dir "$HA/dl" --log-level info
start_proc drop3 env P2P_HOME="$(home drop)" "$LAB" exec B "$BIN_DIR/FileDrop" "$DROPPED" "$DROP" --localsend-pin 4321
if wait_for "$(out_of drop3)" "^LocalSend: $DROP on HTTPS port 53317, fingerprint [0-9A-F]{16}…; senders give the PIN$" 30; then
  pass "FileDrop --localsend-pin serves LocalSend on port 53317"
else fail "FileDrop did not start LocalSend" drop3; finish; fi
listed() { lsctl devices --json 2>/dev/null | grep -q "\"alias\": *\"$DROP\""; }
if wait_until 30 listed; then pass "localsendd lists the drop as $DROP"; else fail "localsendd does not list $DROP" lsd drop3; fi
head -c 200000 /dev/urandom >"$SRC/from-anna.bin"
lsctl send "$SRC/from-anna.bin" --to "$DROP" --pin 0000 --wait >"$E2E_TMP/wrongpin.log" 2>&1
check "a LocalSend send with a wrong PIN writes nothing" [ ! -e "$DROPPED/from-anna.bin" ]
if lsctl send "$SRC/from-anna.bin" --to "$DROP" --pin 4321 --wait >"$E2E_TMP/anna.log" 2>&1 && wait_until 20 same_file "$SRC/from-anna.bin" "$DROPPED/from-anna.bin"; then
  pass "localsendd's file with the PIN arrives with the same SHA-256"
else fail "localsendd's send with the PIN" "$E2E_TMP/anna.log" drop3; fi
if wait_for "$(out_of drop3)" "^anna: 1 file \(195\.3 KiB\) into $DROPPED, \(LocalSend\) checked by size, and by SHA-256 when the sender gave one$" 20; then
  pass "the drop prints anna's LocalSend batch, without calling it verified"
else fail "the drop did not print anna's LocalSend batch" drop3; fi
stop_proc drop3
stop_proc lsd

finish
