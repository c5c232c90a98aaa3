#!/usr/bin/env bash
# What a person sees, tested as a person sees it: `p2p chat` and `p2p receive` run in real terminals
# (tmux panes) in two lab hosts (namespaces A 10.213.7.1 and B 10.213.7.2, each with its own
# avahi-daemon); keys are typed with send-keys and the screens read with capture-pane.
#  - a room: two chats find each other with nobody picked; both sides are asked about the new key (the
#    side that dials before it dials, the other when the request comes; nothing reaches a key before
#    its yes), and the side that dialled shows the NEW key fingerprint (nothing is pinned unseen);
#    a line typed while nobody was there is shown queued and reaches the peer who joins;
#  - chat input: unknown /commands are refused and not sent, a number and //text are lines,
#    /image without a path or with a missing file says so, /me, Up recalls, Ctrl-L clears;
#  - a line wider than the terminal is in the scrollback once (not once per keystroke);
#  - rejoining: the pinned peer connects without a question; the last lines are shown on joining;
#  - a third joins: a group of three with nobody picked; /msg reaches only the one it names;
#  - receive: a request left unanswered until its sender gave up leaves the screen, and the next
#    sender's question gets the next "y"; a folder is one question; one summary line; it stays up
#    for the next sender and Ctrl-C ends it with 0;
#  - game: the opponent is picked with a number key, the invitation is answered with y, both screens
#    show the board, q leaves.
# Needs root (lab.sh up) and tmux.
. "$(dirname "$0")/lib.sh"
need ip tmux python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2ptm$$}
ADDR_B=10.213.7.2
TAG=$$
ROOM="lab-$TAG"

. "$(dirname "$0")/tmux_lab.sh"
# terminal NAME HOST CMD...: a 100x30 terminal NAME for the person NAME (see tmux_lab.sh).
terminal() { local name=$1 host=$2; shift 2; open_terminal "$name" "$name" "$host" 100 30 "$@"; }

# ---------------------------------------------------------------- a room of two
terminal alice A "$P2P" chat --room "$ROOM" --name alice
see 20 alice 'Room "'"$ROOM"'"' "alice's chat starts in its room"
type_line alice "early bird"
see 5 alice 'alice> early bird \(queued\)' "a line typed with nobody here is shown queued"
see 5 alice 'nobody is here yet' "and the chat says it goes to whoever joins"
# Leaving before anyone came loses nothing: the line is kept for the next chat in the room.
type_line alice "/quit"
see 10 alice 'typed while nobody was here is kept' "leaving first says the line is kept"
see 10 alice '\[exited 0\]' "alice's first chat ends with 0"
run env P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" history --pending >"$E2E_TMP/pending.out" 2>&1
check "p2p history --pending shows it waiting for whoever joins the room" grep -q "whoever joins room $ROOM: early bird (waiting)" "$E2E_TMP/pending.out"
tm kill-session -t alice
terminal alice A "$P2P" chat --room "$ROOM" --name alice
see 20 alice '1 line typed while nobody was here waits for whoever joins' "the next chat in the room has it waiting"

terminal bob B "$P2P" chat --room "$ROOM" --name bob
# The side that dials (by the two names, PROTOCOL.md §2.2) is asked first, before it dials: no line goes to a key nobody here
# accepted (issue 34). Then the other side is asked about the request.
if wait_until 30 bash -c 'tmux -S "$1" capture-pane -p -J -S - -t alice | grep -q "is in room .*Connect?" || tmux -S "$1" capture-pane -p -J -S - -t bob | grep -q "is in room .*Connect?"' _ "$TMUX_SOCKET"; then
  if shows alice "is in room .*Connect\\?"; then OTHER=alice ASKED=bob; else OTHER=bob ASKED=alice; fi
  pass "$OTHER, whose room dials, is asked about $ASKED's new key before dialling; nobody picked anyone"
  unseen bob 'alice> early bird' "nothing reached bob before the question was answered"
  tm send-keys -t "$OTHER" y
else
  fail "neither chat asked about the other within 30 s"; ASKED=alice OTHER=bob
fi
see 15 "$ASKED" "$OTHER wants to chat.*\\[y/n\\]" "$ASKED is asked about $OTHER's request"
tm send-keys -t "$ASKED" y
see 15 alice 'bob connected' "alice shows bob connected"
see 15 bob 'alice connected' "bob shows alice connected"
unseen "$OTHER" "wants to chat" "$OTHER, who dialled, got no request to answer"
# The side that dialled was not asked, but nothing is pinned unseen: it shows the NEW key's fingerprint.
see 5 "$OTHER" "$ASKED connected — NEW key [a-z0-9]{4}(-[a-z0-9]{4}){5}, now pinned" "$OTHER, whose room dialled $ASKED, shows $ASKED's NEW key fingerprint"
see 10 bob 'alice> early bird' "the queued line reached bob when he joined"

type_line alice "/foo bar"
see 5 alice 'unknown command /foo' "an unknown /command is refused with a message"
type_line alice "42"
type_line alice "//etc/hosts is a path"
type_line alice "/me waves"
see 10 bob 'alice> 42' "a line that is just a number is sent"
see 10 bob 'alice> /etc/hosts is a path' "//text sends a line starting with /"
see 10 bob '\* alice waves' "/me is shown as an action"
unseen bob 'foo bar' "the unknown command never reached bob"
type_line alice "/image"
see 5 alice '/image wants a path' "/image without a path says what it wants"
type_line alice "/image nothere.png"
see 5 alice 'no such file: nothere.png' "/image of a missing file says it is missing"

# A line wider than the terminal (100 columns): typed key by key, it must be in the scrollback once.
LONG="LONGSTART-$(printf 'abcdefghij%.0s' $(seq 1 30))-LONGEND"
tm send-keys -t alice -l -- "$LONG"
sleep 0.5  # let the keys be drawn one by one
tm send-keys -t alice Enter
see 10 bob "alice> $LONG" "bob receives the 320-character line whole"
see 5 alice "alice> $LONG" "alice's echo of it"
check "the long line is in alice's scrollback once, not once per keystroke (got $(count_on alice LONGSTART))" [ "$(count_on alice LONGSTART)" = 1 ]

type_line alice "recall me"
tm send-keys -t alice Up
see 5 alice '^> recall me$' "Up brings back the last line"
tm send-keys -t alice C-u
tm send-keys -t alice C-l
if wait_until 5 bash -c '! tmux -S "$1" capture-pane -p -t alice | grep -q "waves"' _ "$TMUX_SOCKET"; then pass "Ctrl-L clears the screen"; else fail "Ctrl-L left the screen as it was"; fi
type_line alice "/peers"
see 5 alice 'connected +bob \([a-z0-9-]+\)' "/peers lists bob with his fingerprint"

type_line bob "/quit"
see 10 bob '\[exited 0\]' "/quit ends bob's chat with 0"
see 10 alice 'bob left' "alice is told bob left"

# ---------------------------------------------------------------- rejoining: pinned, no question
QUESTIONS=$(count_on alice 'wants to chat|is in room .*Connect')
tm kill-session -t bob
terminal bob B "$P2P" chat --room "$ROOM" --name bob
see 20 bob 'alice> early bird' "on joining, bob sees the last lines of the conversation"
see 20 bob 'alice connected' "bob is connected again"
see 20 alice 'bob connected.*as pinned' "alice has bob again, as pinned"
check "nobody was asked a second time" [ "$(count_on alice 'wants to chat|is in room .*Connect')" = "$QUESTIONS" ] && [ "$(count_on bob 'wants to chat|is in room .*Connect')" = 0 ]
# ---------------------------------------------------------------- a third joins: a group, nobody picked
terminal carol A "$P2P" chat --room "$ROOM" --name carol
# Whoever is asked about carol's new key (or carol about theirs) answers y; nobody picks anyone.
answer_questions() {
  local p
  for p in alice bob carol; do
    visible "$p" | grep -E '(Accept|Connect)\? \[y/n\]' >/dev/null && tm send-keys -t "$p" y
  done
  shows carol 'alice connected' && shows carol 'bob connected' && shows alice 'carol connected' && shows bob 'carol connected'
}
if wait_until 40 answer_questions; then pass "carol joins the room and is connected to alice and bob"; else fail "the three chats did not all connect"; for p in carol alice bob; do echo "    | --- $p"; screen "$p" | grep -v "^ *$" | tail -n 12 | sed 's/^/    | /'; done; fi
type_line alice "hello both"
see 10 bob 'alice> hello both' "a line from alice reaches bob"
see 10 carol 'alice> hello both' "and carol: a group chat of three"
type_line carol "/msg bob just you"
see 10 bob 'carol> just you' "/msg reaches the one it names"
check "and nobody else" bash -c '! tmux -S "$1" capture-pane -p -J -S - -t alice | grep -q "just you"' _ "$TMUX_SOCKET"
type_line carol "/quit"
see 10 alice 'carol left' "alice is told carol left"

type_line alice "/quit"
type_line bob "/quit"
see 10 alice '\[exited 0\]' "alice's chat ends with 0"

# ---------------------------------------------------------------- receive: stale questions, folders
PORT=$(free_port)
mkdir -p "$E2E_TMP/inbox" "$E2E_TMP/tree/many"
for i in $(seq 1 30); do head -c $((1000 + i)) /dev/urandom >"$E2E_TMP/tree/many/f$i.bin"; done
terminal dave B "$P2P" receive --name dave --port "$PORT" --dir "$E2E_TMP/inbox"
see 20 dave 'Waiting for files as dave' "receive waits for files"

# carol's request is left unanswered until she gives up (--answer-timeout 5).
start_bg carol env P2P_HOME="$(home carol)" "$LAB" exec A "$P2P" send --name carol --answer-timeout 5 --connect "$ADDR_B:$PORT" "$E2E_TMP/tree/many/f1.bin"
see 15 dave 'carol wants to send you files' "dave is asked about carol"
see 20 dave 'carol gave up waiting' "when carol gives up, her question leaves dave's screen"
if wait_exit carol 20; then check "carol's send ends as not answered (exit $EXIT_RC)" [ "$EXIT_RC" = 6 ]; else fail "carol's send still running"; fi
check "carol is told who did not answer ($(tail -n 1 "$E2E_TMP/carol.err"))" grep -q "$ADDR_B:$PORT did not accept the connection within 5 s; nothing was sent" "$E2E_TMP/carol.err"

start_bg erin bash -c 'cd "$1" && exec "${@:2}"' _ "$E2E_TMP/tree" env P2P_HOME="$(home erin)" "$LAB" exec A "$P2P" send --name erin --connect "$ADDR_B:$PORT" many
see 15 dave 'erin wants to send you files' "the next sender's question is shown"
tm send-keys -t dave y
see 15 dave 'erin offers 30 files, [0-9.]+ KiB in many/ — accept\? \[y/n\]' "a folder of 30 files is one question, with its count and size"
tm send-keys -t dave y
see 30 dave 'Received 30 files .* from erin' "one summary line for the 30 files"
check "the 30 files arrived identical" diff -r "$E2E_TMP/tree/many" "$E2E_TMP/inbox/many"
check "no per-file lines without --verbose" [ "$(count_on dave 'Received f[0-9]+')" = 0 ]
check "one question for the folder, none per file" [ "$(count_on dave 'offers')" = 1 ]
if wait_exit erin 20; then check "erin's send exits 0" [ "$EXIT_RC" = 0 ]; else fail "erin's send still running"; fi
see 10 dave 'waiting for the next sender' "receive stays up after the sender left"
unseen dave '\[exited' "and is still running"
tm send-keys -t dave C-c
see 10 dave '\[exited 0\]' "Ctrl-C ends an idle receive with 0"

# ---------------------------------------------------------------- game
terminal gina A "$P2P" game --name gina --session-id "game-$TAG"
terminal hank B "$P2P" game --name hank --session-id "game-$TAG"
see 30 gina '1  hank' "gina's game lists hank as opponent number 1"
tm send-keys -t gina 1
see 15 hank 'gina .* invites you to play\. Accept\? \[y/n\]' "hank is asked about gina's invitation"
tm send-keys -t hank y
see 15 gina 'Playing hank' "gina's screen shows the game with hank"
see 15 hank 'Playing gina' "hank's screen shows the game with gina"
see 5 gina '─────┼─────┼─────' "the board is drawn"
tm send-keys -t gina q
tm send-keys -t gina q
see 15 gina '\[exited 0\]' "q twice leaves gina's game with 0"

finish
