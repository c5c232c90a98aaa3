#!/usr/bin/env bash
# p2p game between two hosts (lab namespaces A and B): two piped `p2p game --json --yes` processes find
# each other by DNS-SD and play three scripted rounds to a win, a loss and a draw, with the same
# results on both sides; a crafted peer that reveals a roll it did not commit to, moves out of turn and
# plays a taken square is refused each time; the interactive view, driven through tmux in an 80x24
# pane with NO_COLOR, shows the moves, asks before a rematch (and waits for the answer), a killed
# opponent shows as "Opponent disconnected", and the final scores stay on the terminal after it quits.
# Needs root (lab.sh up) and tmux. The lab prefix, session IDs and names are unique per run, so other
# labs and games on this machine are left alone.
. "$(dirname "$0")/lib.sh"
need ip python3 tmux
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=pg$$
SID=e2e-game-$$
TMUX_SOCKET=p2p-game-$$
ADDR_A=10.213.7.1

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up ($P2P_LAB_PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up (A and B resolve each other's services)"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

game_in() { # game_in HOST NAME ARGS...: a piped JSON game in lab host HOST
  local host=$1 name=$2; shift 2
  start_proc "$name" env P2P_HOME="$(home "$name")" "$LAB" exec "$host" "$P2P" game --json --yes --name "$name-$$" --session-id "$SID" "$@"
}

# moves ROLE OUTCOME: the squares ROLE (X or O) plays for OUTCOME (x-wins, o-wins, draw).
moves() {
  case "$2" in
    x-wins) [ "$1" = X ] && echo "1 2 3" || echo "4 5" ;;
    o-wins) [ "$1" = X ] && echo "1 2 9" || echo "4 5 6" ;;
    draw)   [ "$1" = X ] && echo "1 3 4 8 9" || echo "2 5 6 7" ;;
  esac
}

# ---------------------------------------------------------------- 1: three scripted rounds
game_in A alice
game_in B bob
for p in alice bob; do expect_json 20 "$p" "$p listens" event=listening name="$p-$$"; done
expect_json 40 alice "alice connects to bob (found by DNS-SD)" event=connected peer="bob-$$"
expect_json 40 bob "bob connects to alice (found by DNS-SD)" event=connected peer="alice-$$"

# play ROUND ALICE_RESULT BOB_RESULT: feed both sides the moves that give alice ALICE_RESULT.
play() {
  local round=$1 want_a=$2 want_b=$3 you outcome m got_a got_b
  if ! wait_json 20 alice event=game-start round="$round" >/dev/null || ! wait_json 20 bob event=game-start round="$round" >/dev/null; then
    fail "round $round did not start on both sides" alice bob; return
  fi
  you=$(get_json alice you event=game-start round="$round")
  check "round $round: alice and bob hold different marks" [ "$you" != "$(get_json bob you event=game-start round="$round")" ]
  check "round $round: X goes first" [ "$(get_json alice first event=game-start round="$round")" = "$([ "$you" = X ] && echo true || echo false)" ]
  case "$want_a/$you" in win/X|lose/O) outcome=x-wins ;; win/O|lose/X) outcome=o-wins ;; *) outcome=draw ;; esac
  for m in $(moves "$you" $outcome); do send_line alice "$m"; done
  for m in $(moves "$([ "$you" = X ] && echo O || echo X)" $outcome); do send_line bob "$m"; done
  got_a=$(wait_json 20 alice event=game-over round="$round") || { fail "round $round: no game-over at alice" alice bob; return; }
  got_b=$(wait_json 20 bob event=game-over round="$round") || { fail "round $round: no game-over at bob" alice bob; return; }
  check "round $round: alice's result is $want_a ($got_a)" grep -q "\"result\":\"$want_a\"" <<<"$got_a"
  check "round $round: bob's result is $want_b ($got_b)" grep -q "\"result\":\"$want_b\"" <<<"$got_b"
  check "round $round: both saw every move of both players" [ "$(count_json alice event=move round="$round")" = "$(count_json bob event=move round="$round")" ]
  check "round $round: the winning line agrees" [ "$(get_json alice line event=game-over round="$round")" = "$(get_json bob line event=game-over round="$round")" ]
}
t=$SECONDS
play 1 win lose
play 2 lose win
play 3 draw draw
log "three rounds in $((SECONDS - t)) s"
check "alice's score: 1 win, 1 loss, 1 draw" grep -q '"score":{"draws":1,"losses":1,"wins":1}' <<<"$(wait_json 1 alice event=game-over round=3)"
check "bob's score mirrors it" grep -q '"score":{"draws":1,"losses":1,"wins":1}' <<<"$(wait_json 1 bob event=game-over round=3)"
check "every die roll was checked on both sides (roll events match)" [ "$(count_json alice event=roll)" = "$(count_json bob event=roll)" ]

for p in alice bob; do close_stdin "$p"; done
for p in alice bob; do
  if wait_exit "$p" 15; then check "$p exits 0 after EOF at the end of a round (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "$p did not exit within 15 s of EOF" "$p"; fi
done
for p in alice bob; do
  expect_no_json "$p" "$p printed no error events" event=error
  expect_no_json "$p" "$p saw no violation" event=violation
  expect_no_json "$p" "$p never saw a disconnect reported as lost" event=opponent-left reason=disconnected
done

# ---------------------------------------------------------------- 2: a crafted peer cheats
P=$(free_port)
game_in A judge --insecure --port "$P"
expect_json 20 judge "judge listens on $P (--insecure)" event=listening port="$P"
start_bg cheater "$LAB" exec B "$PYTHON" "$E2E_DIR/game_cheater.py" "$ADDR_A" "$P" --session "$SID" --timeout 40
if wait_json 30 judge event=game-start round=3 >/dev/null; then send_line judge 1; else fail "judge: round 3 never started" judge cheater; fi
if wait_exit cheater 40; then
  report=$(cat "$(out_of cheater)")
  log "cheater: $report"
  codes=$("$PYTHON" -c 'import json,sys; print(" ".join(str(r[1]) for r in json.loads(sys.argv[1])["refusals"]))' "$report" 2>/dev/null)
  check "the cheater got REFUSE 8, 2, 3, 7 (bad reveal, out of turn, occupied, board mismatch), got: $codes" [ "$codes" = "8 2 3 7" ]
else
  fail "the cheater did not finish" cheater judge
fi
expect_json 5 judge "judge refused the reveal that broke its commitment" event=violation by=peer code=bad-reveal
expect_json 5 judge "judge refused the move out of turn" event=violation by=peer code=out-of-turn
expect_json 5 judge "judge refused the move on a taken square" event=violation by=peer code=occupied
expect_json 5 judge "judge refused the move whose board hash is wrong" event=violation by=peer code=board-mismatch
expect_no_json judge "judge showed no move for the move it refused (round 4)" event=move by=peer round=4
check "each refused round ended aborted, nobody scored" [ "$(count_json judge event=game-over result=aborted)" = 4 ]
expect_no_json judge "no refused round counted as a win or loss" event=game-over result!=aborted
check "judge kept the connection through the refusals (left only by the cheater's LEAVE)" \
  [ "$(count_json judge event=opponent-left reason=left)" = 1 ]
if wait_exit judge 10; then check "judge exits 0 after the opponent left (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "judge still running after the cheater left" judge; fi

# ---------------------------------------------------------------- 3: the interactive view, through tmux
T="tmux -L $TMUX_SOCKET"
on_exit "$T kill-server 2>/dev/null"
screen() { $T capture-pane -p -t game; }
shows() { screen | grep -E -- "$1" >/dev/null; }  # no -q: see terminal.sh
no_color() { ! $T capture-pane -p -e -t game | grep -q $'\e\[3[0-9]m'; }
$T new-session -d -s game -x 80 -y 24 \
  "env NO_COLOR=1 P2P_HOME=$(home erin) $LAB exec A $P2P game --name erin-$$ --session-id $SID; sleep 30"
check "erin's picker waits for opponents" wait_until 20 shows "Opponents on the network"
game_in B frank --to "erin-$$"
if wait_until 40 shows "frank-$$ \(.*\) invites you to play. Accept\? \[y/n\]"; then pass "erin is asked about frank's invitation"; else fail "erin was never asked" frank; screen; fi
$T send-keys -t game y
if wait_until 20 shows "Playing frank-$$"; then pass "y accepts: erin's screen shows the game with frank"; else fail "erin's screen never showed the game" frank; screen; fi
if wait_json 20 frank event=game-start >/dev/null; then
  erin=$([ "$(get_json frank you event=game-start)" = X ] && echo O || echo X)
  log "erin plays $erin"
  if [ "$erin" = O ]; then send_line frank 1; wait_until 10 shows "^ +X +│"; fi
  wait_until 10 shows "Your turn \($erin\)" || fail "erin's status never said it was her turn" frank
  $T send-keys -t game 5
  if wait_json 10 frank event=move by=peer square=5 >/dev/null; then pass "key 5 played square 5"; else fail "key 5 did not reach frank" frank; screen; fi
  check "the board shows erin's $erin in the middle square" wait_until 5 shows "│  $erin  │"
  [ "$erin" = X ] && send_line frank 1 || send_line frank 9
  wait_until 10 shows "Your turn" || fail "erin never got a second turn" frank
  # The cursor starts on 5; Up moves it to 2, Enter plays there.
  $T send-keys -t game Up
  check "Up shows the cursor on square 2 as [2]" wait_until 5 shows "\[2\]"
  $T send-keys -t game Enter
  if wait_json 10 frank event=move by=peer square=2 >/dev/null; then pass "arrow and Enter played square 2"; else fail "Up, Enter did not play square 2" frank; screen; fi
  check "the board shows erin's $erin on squares 2 and 5" wait_until 5 bash -c '[ "$(tmux -L "$1" capture-pane -p -t game | grep -cE "│  $2  │")" = 2 ]' _ "$TMUX_SOCKET" "$erin"
  check "the status line names whose turn it is" wait_until 5 shows "frank-$$'s turn"
  check "the score line is shown" shows "Round 1 · score: you 0"
  check "the screen fits 80 columns" [ "$(screen | "$PYTHON" -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin))')" -le 80 ]
  check "NO_COLOR: no colour escapes on the screen" no_color
  screen >"$E2E_TMP/screen.txt"
  # Round 1 to its end: frank's moves wait for his turn (a taken square is only reported); erin's keys
  # follow, each on her turn: as X she wins on 3-5-7, as O the board fills to a draw.
  for m in 8 3 4 6 7 9; do send_line frank "$m"; done
  [ "$erin" = X ] && keys="3 7" || keys="7 6"
  for k in $keys; do
    wait_until 10 shows "Your turn" || { fail "erin's turn to play $k never came" frank; screen; break; }
    $T send-keys -t game "$k"
    wait_json 10 frank event=move by=peer square="$k" >/dev/null || fail "key $k did not reach frank" frank
  done
  if wait_json 10 frank event=game-over round=1 >/dev/null; then pass "round 1 is over"; else fail "round 1 never ended" frank; screen; fi
  check "erin is asked before another round" wait_until 5 shows "Another round\? \[y/n\]|wants another round: play again\? \[y/n\]"
  # frank (a pipe) wants another round after 3 s: erin is told, and nothing starts until she says yes.
  check "erin is told that frank wants another round" wait_until 15 shows "frank-$$ wants another round: play again\? \[y/n\]"
  check "round 2 waits for erin's answer (frank has no round 2)" [ "$(count_json frank event=game-start round=2)" = 0 ]
  check "the final board of round 1 is still shown while she decides" shows "Round 1 · score: you [01] "
  $T send-keys -t game y
  if wait_json 15 frank event=game-start round=2 >/dev/null; then pass "y starts round 2 on both sides"; else fail "y did not start round 2" frank; screen; fi
  check "erin's screen shows round 2" wait_until 10 shows "Round 2 · score: you [01] "
  stop_proc frank   # SIGTERM: frank leaves politely...
  if wait_until 15 shows "left the game"; then pass "erin is told frank left"; else fail "erin was not told frank left" "$E2E_TMP/screen.txt"; screen; fi
  check "erin is back at the picker" wait_until 5 shows "Opponents on the network"
  # ...a killed opponent says nothing: that is a lost connection.
  game_in B gina --to "erin-$$"
  wait_until 40 shows "gina-$$ .*invites you" && $T send-keys -t game y
  if wait_until 20 shows "Playing gina-$$"; then
    pid=$(pid_of gina)
    kill -KILL "$pid"; wait "$pid" 2>/dev/null   # reaped here, so bash does not print "Killed"
    if wait_until 15 shows "Opponent disconnected"; then pass "a killed opponent shows as \"Opponent disconnected\""; else fail "no \"Opponent disconnected\" on erin's screen"; screen; fi
    check "erin is back at the picker after the disconnect" wait_until 5 shows "Opponents on the network"
  else
    fail "gina never played erin" gina; screen
  fi
  stop_proc gina
else
  fail "frank's game never started" frank
  screen
fi
$T send-keys -t game q
pane=$($T display -p -t game '#{pane_pid}' 2>/dev/null)
check "q at the picker quits p2p game" wait_until 10 bash -c '! pgrep -P "$1" -f "p2p game" >/dev/null' _ "$pane"
# The game's screen is gone; what was played stays on the terminal.
check "after quitting, frank's final score stays on the terminal" wait_until 5 shows "^Final score: you [0-9] – frank-$$ [0-9]"
check "after quitting, gina's final score stays too" shows "^Final score: you 0 – gina-$$ 0"
$T kill-server 2>/dev/null

# ---------------------------------------------------------------- nothing left behind
for p in alice bob judge cheater frank gina; do stop_proc "$p"; done
run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1
check "lab down leaves no namespace" bash -c '! ip netns list | grep -qE "^$1(A|B)( |$)"' _ "$P2P_LAB_PREFIX"
finish
