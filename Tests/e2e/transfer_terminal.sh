#!/usr/bin/env bash
# `p2p send` / `p2p receive` and `p2p game` as a person sees them: real terminals (tmux panes) in two lab
# hosts (namespaces A 10.213.7.1 and B 10.213.7.2), keys typed with send-keys, screens read with capture-pane.
#  - send --text: on a receive terminal the text is asked about, then shown framed ("alice sent a text:" …
#    "── end of text ──"), lines, tab and non-ASCII kept, an ANSI escape from the sender shown as U+FFFD,
#    nothing written to --dir; the sender says "Delivered a text (N characters) to bob.";
#  - receive --text on a pipe: standard output is exactly the text (bytes compared), everything else on stderr,
#    exit 0 after the first text; --json --text: one {"event":"text"} with the text as sent (this one from
#    --clipboard, through a stand-in wl-paste); --clipboard without a tool and a text over 64 KiB are usage errors;
#  - an offer of several items names them; declined, the send says "declined" once and exits 6;
#  - Ctrl-C halfway (link slowed to 8 Mbit/s with tc tbf; the receiver's progress line shows files n/N, rate
#    and time left meanwhile): the sender exits 7 and says so; the receiver's
#    summary counts the files that arrived verified (as many as are in --dir) and the ones that did not;
#    the same send again sends only the rest, and the receiver's rate counts only the bytes that moved;
#    Ctrl-C once every byte of a send is on its way but not written cancels it (exit 7), and it resumes;
#  - receive --stdout and records receive on a terminal ask with one key, on stderr for --stdout; a stream whose
#    sender gave up has its question taken away (withdrawn), and the next one is asked afresh;
#  - game: the draw for who starts reads as a draw (no number), a key pressed out of turn is answered from
#    the presser's side ("it is not your turn (gina plays X)"), and leaving shows the final score on both screens.
# Needs root (lab.sh up), tc and tmux.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/transfer_helpers.sh"
need ip tc tmux python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2psd$$}
PREFIX=$P2P_LAB_PREFIX
NS_A=${PREFIX}A A_LINK=${PREFIX}vA
ADDR_B=10.213.7.2
TAG=$$

. "$(dirname "$0")/tmux_lab.sh"
# terminal NAME HOST CMD...: a 100x30 terminal NAME for the person NAME (see tmux_lab.sh).
terminal() { local name=$1 host=$2; shift 2; open_terminal "$name" "$name" "$host" 100 30 "$@"; }

# A text with a tab, a non-ASCII line and an ANSI colour escape (which must arrive harmless).
TEXT=$'first\tsecond\nünïcødé ✓ 日本\nred \e[31mRED\e[0m end'
EXPECTED=$'first\tsecond\nünïcødé ✓ 日本\nred \uFFFD[31mRED\uFFFD[0m end'
CHARS=$("$PYTHON" -c 'import sys; print(len(sys.argv[1]))' "$TEXT")

# ---------------------------------------------------------------- a text on a receive terminal
PORT=$(free_port)
mkdir -p "$E2E_TMP/inbox"
# bob's temporary directory of his own: what is left there is his (a crashed process elsewhere leaves its own).
mkdir -p "$E2E_TMP/bobtmp"
terminal bob B env TMPDIR="$E2E_TMP/bobtmp" "$P2P" receive --name bob --port "$PORT" --dir "$E2E_TMP/inbox"
see 20 bob 'Waiting for files as bob' "bob's receive waits"
start_bg alice env P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" send --name alice --connect "$ADDR_B:$PORT" --text "$TEXT"
see 15 bob 'alice wants to send you files' "bob is asked about alice's key"
tm send-keys -t bob y
see 15 bob 'alice wants to send you a text \([0-9]+ B\) — accept\? \[y/n\]' "a text is asked about like a file, as a text"
tm send-keys -t bob y
see 15 bob '^alice sent a text:$' "bob's screen frames it: alice sent a text:"
see 5 bob '^first +second$' "its first line, the tab kept as a tab"
see 5 bob '^ünïcødé ✓ 日本$' "the non-ASCII line as sent"
see 5 bob '^red �\[31mRED�\[0m end$' "the sender's ANSI escape is shown as U+FFFD, not obeyed"
see 5 bob '^── end of text ──$' "and the frame closes"
if wait_exit alice 20; then check "alice's send exits 0 (exit $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "alice's send still running" alice; fi
check "alice is told: Delivered a text ($CHARS characters) to bob." grep -qx "Delivered a text ($CHARS characters) to bob." "$E2E_TMP/alice.out"
check "the text was not written into bob's --dir" no_files "$E2E_TMP/inbox"
check "nor left under the temporary directory" bash -c '! ls -d "$1"/p2p-text-* 2>/dev/null | grep -q .' _ "$E2E_TMP/bobtmp"

# ---------------------------------------------------------------- a declined send says so once
mkdir -p "$E2E_TMP/two/notes"
echo "not for you" >"$E2E_TMP/two/note.txt"
for i in 1 2; do echo "note $i" >"$E2E_TMP/two/notes/n$i.txt"; done
start_bg alice2 env P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" send --name alice --connect "$ADDR_B:$PORT" "$E2E_TMP/two/note.txt" "$E2E_TMP/two/notes"
see 15 bob 'alice offers 3 files, [0-9]+ B: (note\.txt, notes/|notes/, note\.txt) — accept\?' "an offer of 2 items names them (not \"in 2 items\")"
tm send-keys -t bob n
if wait_exit alice2 20; then check "a declined send exits 6 (exit $EXIT_RC)" [ "$EXIT_RC" = 6 ]; else fail "the declined send still running" alice2; fi
check "the sender says declined, once ($(grep -c declined "$E2E_TMP/alice2.err") lines)" [ "$(grep -c declined "$E2E_TMP/alice2.err")" = 1 ]
check "nothing written" no_files "$E2E_TMP/inbox"
tm send-keys -t bob C-c
see 10 bob '\[exited' "bob's receive ends on Ctrl-C"

# ---------------------------------------------------------------- receive --stdout asks on its terminal
# Standard output goes to a file; the questions (one key each, as everywhere) and notes are on the terminal.
SPORT=$(free_port)
printf 'stream bytes\nsecond line\n' >"$E2E_TMP/stream.in"
terminal sbob B bash -c '"$0" receive --stdout --name sbob --port "$1" >"$2"' "$P2P" "$SPORT" "$E2E_TMP/stream.got"
see 20 sbob 'Waiting for a stream as sbob' "receive --stdout waits; its words are on the terminal"
# stream_from PROC INPUT: `p2p send - --as notes.txt` from alice in A, stdin from INPUT.
stream_from() {
  start_bg "$1" env P2P_HOME="$(home alice)" "$LAB" exec A bash -c 'exec "$0" send - --as notes.txt --name alice --connect "$1" <"$2"' \
    "$P2P" "$ADDR_B:$SPORT" "$2"
}
# A sender that gives up while its stream is asked about takes its question away.
mkfifo "$E2E_TMP/stream.never"
exec {never}<>"$E2E_TMP/stream.never"
stream_from salice1 "$E2E_TMP/stream.never"
see 15 sbob 'alice wants to connect to stream to you — .*Accept\? \[y/n\]' "sbob is asked about alice's key, with one key to answer"
tm send-keys -t sbob y
see 10 sbob 'alice wants to connect to stream to you — .*Accept\? yes' "the answer stays on the screen"
unseen sbob 'Accept\? \[y/n\]' "the question's line gave way to its answer"
see 15 sbob 'alice \(.*\) offers the stream notes\.txt \(.*\) — write it to standard output\? \[y/n\]' "the stream is asked about"
stop_proc salice1
exec {never}>&-
see 15 sbob '\* withdrawn \(the peer gave up\): alice .*offers the stream notes\.txt' "a sender that left takes its question away"
unseen sbob 'write it to standard output\? \[y/n\]' "no question is left waiting for a key"
see 10 sbob '^\* alice left\.' "the sender's leaving is shown"
# The next sender's stream is asked about afresh (alice's key is pinned now: no question about it).
stream_from salice2 "$E2E_TMP/stream.in"
see 15 sbob 'alice \(.*\) offers the stream notes\.txt \(.*\) — write it to standard output\? \[y/n\]' "the next stream is asked about"
tm send-keys -t sbob y
see 15 sbob 'Received notes\.txt from alice: .*SHA-256 verified' "sbob says the stream arrived verified"
if wait_exit salice2 20; then check "the sender exits 0 (exit $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "the stream's sender still running" salice2; fi
see 10 sbob '\[exited 0\]' "receive --stdout exits 0"
check "standard output holds the stream's bytes and nothing else" cmp -s "$E2E_TMP/stream.in" "$E2E_TMP/stream.got"

# ---------------------------------------------------------------- records receive asks the same way
RPORT=$(free_port)
terminal rbob B "$P2P" records receive --name rbob --port "$RPORT" --store "$E2E_TMP/rbob.sqlite" --once
see 20 rbob "You are rbob .*port $RPORT" "records receive waits"
start_bg ralice env P2P_HOME="$(home ralice)" "$LAB" exec A "$P2P" records send --name ralice --connect "$ADDR_B:$RPORT" \
  --file "$REPO_ROOT/examples/records/tasks.json"
see 15 rbob 'ralice wants to send records — .*Accept\? \[y/n\]' "rbob is asked about ralice's connection, with one key to answer"
tm send-keys -t rbob x y
see 10 rbob 'ralice wants to send records — .*Accept\? yes' "another key is no answer; y is, and it stays on the screen"
see 15 rbob '^Merged [0-9]+ records from ralice' "the snapshot is merged once accepted"
see 10 rbob '\[exited 0\]' "records receive --once exits 0"
if wait_exit ralice 20; then check "records send exits 0 (exit $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "records send still running" ralice; fi

# ---------------------------------------------------------------- receive --text through a pipe
PORT2=$(free_port)
start_bg carol env P2P_HOME="$(home carol)" "$LAB" exec B "$P2P" receive --text --from alice --name carol --port "$PORT2" --dir "$E2E_TMP/inbox"
check "carol's receive --text waits (on stderr)" wait_for "$E2E_TMP/carol.err" "Waiting for a text as carol" 20
run env P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" send --name alice --connect "$ADDR_B:$PORT2" --text "$TEXT" >"$E2E_TMP/alice3.out" 2>&1
check "alice's second text is delivered" grep -q "Delivered a text" "$E2E_TMP/alice3.out"
if wait_exit carol 15; then check "receive --text exits 0 after the first text (exit $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "receive --text still running" carol; fi
printf '%s' "$EXPECTED" >"$E2E_TMP/expected.txt"
if cmp -s "$E2E_TMP/expected.txt" "$E2E_TMP/carol.out"; then pass "stdout through a pipe is exactly the text (tab, lines, UTF-8; the escape as U+FFFD), nothing else"
else fail "stdout differs from the text"; diff <(od -c "$E2E_TMP/expected.txt") <(od -c "$E2E_TMP/carol.out") | head -n 20; fi

PORT3=$(free_port)
start_bg dora env P2P_HOME="$(home dora)" "$LAB" exec B "$P2P" receive --json --text --from alice --name dora --port "$PORT3" --dir "$E2E_TMP/inbox"
check "dora's receive --json --text listens" wait_json 20 dora event=listening >/dev/null
# This time from the clipboard: a stand-in wl-paste prints the text (no clipboard tool is installed here).
mkdir -p "$E2E_TMP/clipboard"
printf '#!/bin/sh\nprintf "%%s" "$CLIPBOARD_TEXT"\n' >"$E2E_TMP/clipboard/wl-paste"; chmod +x "$E2E_TMP/clipboard/wl-paste"
run env CLIPBOARD_TEXT="$TEXT" PATH="$E2E_TMP/clipboard:$PATH" P2P_HOME="$(home alice)" "$LAB" exec A "$P2P" send --json --name alice --connect "$ADDR_B:$PORT3" --clipboard >"$E2E_TMP/alice4.out" 2>&1
if wait_exit dora 15; then check "receive --json --text exits 0 (exit $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "receive --json --text still running" dora; fi
check "the text event carries the text as sent" "$PYTHON" -c '
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
texts = [e for e in events if e.get("event") == "text"]
sys.exit(0 if len(texts) == 1 and texts[0]["text"] == sys.argv[2] and texts[0]["peer"] == "alice" else 1)' "$E2E_TMP/dora.out" "$TEXT"
check "the sender's JSON says text-sent with the characters" grep -q "\"characters\":$CHARS,.*\"event\":\"text-sent\"" "$E2E_TMP/alice4.out"

# ---------------------------------------------------------------- texts refused before any network work
run env PATH=/nonexistent "$P2P" send --clipboard --connect "$ADDR_B:9" >"$E2E_TMP/noclip.out" 2>&1; rc=$?
check "--clipboard without a clipboard tool is a usage error (exit $rc) that names the tools" \
  bash -c '[ "$1" = 64 ] && grep -q "no clipboard tool found (wl-paste, xclip, xsel or pbpaste)" "$2"' _ "$rc" "$E2E_TMP/noclip.out"
run "$P2P" send --text "$(head -c 70000 /dev/zero | tr '\0' a)" --connect "$ADDR_B:9" >"$E2E_TMP/bigtext.out" 2>&1; rc=$?
check "a text over 64 KiB is a usage error (exit $rc) that says to send a file" \
  bash -c '[ "$1" = 64 ] && grep -q "save it to a file and send the file" "$2"' _ "$rc" "$E2E_TMP/bigtext.out"

# ---------------------------------------------------------------- Ctrl-C halfway, on a slow link
mkdir -p "$E2E_TMP/big/many" "$E2E_TMP/inbox2"
for i in $(seq 1 40); do head -c 262144 /dev/urandom >"$E2E_TMP/big/many/f$(printf %02d "$i").bin"; done
PORT4=$(free_port)
ip netns exec "$NS_A" tc qdisc replace dev "$A_LINK" root tbf rate 8mbit burst 32kbit latency 400ms
terminal erin B "$P2P" receive --yes --name erin --port "$PORT4" --dir "$E2E_TMP/inbox2"
see 20 erin 'Waiting for files as erin' "erin's receive waits"
tm new-session -d -s frank -x 100 -y 30 "cd $(printf %q "$E2E_TMP/big") && $(printf '%q ' "$LAB" exec A env P2P_HOME="$(home frank)" TERM=xterm-256color "$P2P" send --name frank --connect "$ADDR_B:$PORT4" many); echo \"[exited \$?]\"; exec sleep 3600"
# Ctrl-C once some files arrived (10 MiB take about 10 s at 8 Mbit/s).
if wait_until 30 bash -c '[ "$(find "$1" -name "f*.bin" ! -name "*.part" 2>/dev/null | wc -l)" -ge 5 ]' _ "$E2E_TMP/inbox2/many"; then
  see 5 erin '↓ many/ from frank: [0-9]+/40 files, .* of 10\.0 MiB, [0-9]+%, [0-9.]+ [KM]?i?B/s, [0-9]+ s left' "erin's progress line shows files n/N, bytes, percentage, rate and time left"
  tm send-keys -t frank C-c
  see 15 frank '\[exited 7\]' "the sender interrupted halfway exits 7"
  see 5 frank 'interrupted; at least [0-9,]+ of 40 files \(.* of 10\.0 MiB\) kept at erin; run the same command again to send the rest: p2p send --name frank --connect .* many' "and says what erin kept and the command that sends the rest"
  see 15 erin 'Received [0-9]+ files .* from frank .*each verified by SHA-256; [0-9]+ files did not arrive \(cancelled by frank\)' \
    "erin's summary counts what arrived verified and what did not"
  see 5 erin '^\* frank left; waiting for the next sender' "the line saying frank left starts a line of its own (the progress line is taken off first)"
  arrived=$(find "$E2E_TMP/inbox2/many" -name 'f*.bin' ! -name '*.part' | wc -l)
  line=$(screen erin | grep -E '^Received [0-9]+ files' | tail -n 1)
  said=$(sed -nE 's/^Received ([0-9]+) files.*/\1/p' <<<"$line"); missing=$(sed -nE 's/.*; ([0-9]+) files did not arrive.*/\1/p' <<<"$line")
  check "the summary's count (${said:-none}) is the files in --dir ($arrived), and with the rest (${missing:-none}) makes 40" \
    [ -n "$said" -a -n "$missing" -a "$said" = "$arrived" -a "$((${said:-0} + ${missing:-0}))" = 40 ]
  log "erin: $line"
  unseen erin 'Received [0-9]+ files \(0 B\)' "no \"0 B\" for files that arrived"
  see 5 erin 'p2p: many/ from frank: cancelled by the peer' "the cancel names the folder and the sender"
  # The same send again: only the rest travels, and the rate counts only that (8 Mbit/s is 0.95 MiB/s).
  tm kill-session -t frank
  tm new-session -d -s frank -x 100 -y 30 "cd $(printf %q "$E2E_TMP/big") && $(printf '%q ' "$LAB" exec A env P2P_HOME="$(home frank)" TERM=xterm-256color "$P2P" send --name frank --connect "$ADDR_B:$PORT4" many); echo \"[exited \$?]\"; exec sleep 3600"
  see 40 frank '\[exited 0\]' "the same send again completes (exit 0)"
  see 5 frank "Delivered 40 files \(10.0 MiB\) to erin in [0-9.]+ s \(.*/s\), all verified \(${arrived} already there\)" "the sender counts what was already there"
  see 15 erin "Received $((40 - arrived)) files .* from frank .*each verified by SHA-256; $arrived already there" "erin's second summary counts the rest and what was there"
  rate=$(screen erin | grep -E '^Received [0-9]+ files' | tail -n 1 | sed -nE 's/.*\(([0-9.]+ [KMG]?i?B)\/s\).*/\1/p')
  check "its rate (${rate:-none}/s) counts only the bytes that moved: below the link's 0.95 MiB/s plus slack" \
    "$PYTHON" -c 'import sys; v, u = sys.argv[1].split(); sys.exit(0 if float(v) * {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}[u] < 1.1 * (1 << 20) else 1)' "${rate:-0 GiB}"
  check "all 40 files arrived identical" diff -r "$E2E_TMP/big/many" "$E2E_TMP/inbox2/many"
  # Ctrl-C once every byte is sent but not yet written (the sender keeps at most 4 MiB unacknowledged, and
  # the receiver acknowledges every MiB: with 3.5 of 6 MiB here, the rest is on its way): "sent" is not
  # "arrived", so the send is cancelled at once (issue 35: it used to wait for the verdict); the same send
  # again resumes it.
  mkdir -p "$E2E_TMP/whole"; head -c $((6 << 20)) /dev/urandom >"$E2E_TMP/whole/last.bin"
  tm kill-session -t frank
  tm new-session -d -s frank -x 100 -y 30 "$(printf '%q ' "$LAB" exec A env P2P_HOME="$(home frank)" TERM=xterm-256color "$P2P" send --name frank --connect "$ADDR_B:$PORT4" "$E2E_TMP/whole/last.bin"); echo \"[exited \$?]\"; exec sleep 3600"
  if wait_until 30 part_reaches "$E2E_TMP/inbox2/last.bin.part" $((7 << 19)); then
    tm send-keys -t frank C-c
    see 20 frank '\[exited 7\]' "Ctrl-C after every byte was sent but not written: the sender cancels and exits 7"
    see 5 frank 'kept at erin; run the same command again to resume it: p2p send .*last\.bin' "and says what erin kept and the command that resumes it"
    tm kill-session -t frank
    tm new-session -d -s frank -x 100 -y 30 "$(printf '%q ' "$LAB" exec A env P2P_HOME="$(home frank)" TERM=xterm-256color "$P2P" send --name frank --connect "$ADDR_B:$PORT4" "$E2E_TMP/whole/last.bin"); echo \"[exited \$?]\"; exec sleep 3600"
    see 40 frank '\[exited 0\]' "the same send again completes"
    check "the file arrived whole" cmp -s "$E2E_TMP/whole/last.bin" "$E2E_TMP/inbox2/last.bin"
  else
    fail "last.bin.part never reached 3.5 MiB"
  fi
else
  fail "five files never arrived on the slow link"; screen erin | tail -n 10
fi
ip netns exec "$NS_A" tc qdisc del dev "$A_LINK" root 2>/dev/null || true
tm send-keys -t erin C-c

# ---------------------------------------------------------------- game: the draw, the turn, the final score
terminal gina A "$P2P" game --name gina --session-id "game-$TAG"
terminal hank B "$P2P" game --name hank --session-id "game-$TAG"
see 30 gina '1  hank' "gina's game lists hank"
tm send-keys -t gina 1
see 15 hank 'gina .* invites you to play\. Accept\? \[y/n\]' "hank is asked"
tm send-keys -t hank y
see 15 gina 'won the draw for who starts' "gina's screen tells who won the draw for who starts"
see 15 hank 'won the draw for who starts' "so does hank's"
unseen gina 'rolled [0-9]' "no raw roll number on gina's screen"
if wait_until 15 shows gina 'you are X'; then X=gina O=hank; else X=hank O=gina; fi
see 5 "$O" 'you are O' "$O plays O"
tm send-keys -t "$O" 3
see 5 "$O" "cannot play 3: it is not your turn \($X plays X\)" "a key out of turn is answered from $O's side"
# X wins the top row: 1, 2, 3 against 4, 5.
for move in "$X 1" "$O 4" "$X 2" "$O 5" "$X 3"; do
  set -- $move
  wait_until 10 shows "$1" "Your turn" || fail "$1 never got its turn"
  tm send-keys -t "$1" "$2"
done
see 10 "$X" 'You won' "$X wins the round"
tm send-keys -t "$X" q
see 15 "$X" "Final score: you 1 – $O 0" "leaving shows the final score on $X's screen"
see 15 "$O" "Final score: you 0 – $X 1" "and on $O's"
tm send-keys -t "$X" q
see 15 "$X" '\[exited 0\]' "q at the picker quits"
tm send-keys -t "$O" q
see 15 "$O" '\[exited 0\]' "$O quits too"

finish
