#!/usr/bin/env bash
# The library's examples are real apps: each runs in lab host B and `p2p` talks to it from host A.
#  - TicTacToeBot (GameSession): `p2p game --to bot` with piped moves plays a round to its end; both
#    sides report the same result, the bot plays only legal moves, and when the piped player leaves
#    the bot says so with the final score.
#  - EchoPeer (Session.onMessage): `p2p chat --to echo` gets its line back.
#  - ChatRoomLog (ChatRoom + Conversation): `p2p chat --room R` and the log meet in room R by
#    themselves (whichever side dials), and the log prints alice's line with her name.
# Needs root (lab.sh up). The examples are built next to p2p (swift build builds every product).
. "$(dirname "$0")/lib.sh"
need ip python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2ex$$}
BIN_DIR=$(dirname "$P2P")
for example in TicTacToeBot EchoPeer ChatRoomLog; do
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
close_stdin dave
wait_exit dave 20
stop_proc roomlog

finish
