#!/usr/bin/env bash
# `p2p chat` as a person sees it, beyond lines (Tests/e2e/terminal.sh has those): real terminals (tmux
# panes) in two lab hosts (namespaces A and B, each with its own avahi-daemon).
#  - text typed while a y/n question is shown is kept in the input line for after the answer;
#  - /file sends any file: the sender sees "offering …" at once, the receiver is asked, the file lands
#    in --downloads with the same bytes, both screens say so (size, SHA-256 verified); a declined file
#    is reported to the sender; a missing path is refused and nothing is sent;
#  - /image: the sender's "offering …" line comes before the receiver answers;
#  - /msg is marked [private] on both screens;
#  - Tab completes a peer's name after /msg and a path (a folder with a trailing /) after /file;
#  - the bell rings by default (tmux's bell flag; --bell still accepted) for a line that mentions you or
#    a /msg to you, not for other lines, and a chat with --no-bell never rings; the mention is
#    highlighted (bold yellow, seen with capture-pane -e);
#  - irssi-like: your own name on your own lines (not "me>"), /help one command per line, /who and
#    /names "2 here: alice, bob";
#  - p2p history shows /me as "* alice waves", /msg as [private], the file, and dates as 2026-11-25 05:17;
#  - a piped --json chat gets a /msg with "private": true;
#  - chat --to NAME replays only the conversation with NAME, and a NAME that never appears ends with a
#    hint naming `p2p chat`, exit 3.
# Needs root (lab.sh up) and tmux.
. "$(dirname "$0")/lib.sh"
need ip tmux python3 cmp
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2pch$$}
TAG=$$
ROOM="chatlab-$TAG"

. "$(dirname "$0")/tmux_lab.sh"
# terminal NAME HOST CMD...: a 100x30 terminal NAME for the person NAME (see tmux_lab.sh).
terminal() { local name=$1 host=$2; shift 2; open_terminal "$name" "$name" "$host" 100 30 "$@"; }

DL_ALICE=$E2E_TMP/dl-alice DL_BOB=$E2E_TMP/dl-bob
mkdir -p "$DL_ALICE" "$DL_BOB" "$E2E_TMP/files/subfolder-x"
head -c 204800 /dev/urandom >"$E2E_TMP/files/notes.bin"
head -c 3000 /dev/urandom >"$E2E_TMP/files/second.bin"
# A 37x23 PNG header and some bytes: enough for the signature check.
python3 - "$E2E_TMP/files/pic.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 37, 23, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\0" * (37 * 3 + 1) * 23)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY

# ---------------------------------------------------------------- two chats; typing at a question
terminal alice A "$P2P" chat --room "$ROOM" --name alice --downloads "$DL_ALICE"
terminal bob B "$P2P" chat --room "$ROOM" --name bob --downloads "$DL_BOB" --no-bell
# The side that dials answers first (issue 34: it asks before it dials a new key); then the other is asked.
dial_asked() { shows_now alice 'is in room .*Connect\? \[y/n\]' || shows_now bob 'is in room .*Connect\? \[y/n\]'; }
if wait_until 30 dial_asked; then
  if shows_now alice 'is in room'; then tm send-keys -t alice y; else tm send-keys -t bob y; fi
  pass "the side that dials was asked first"
else
  fail "neither chat asked before dialling within 30 s"
fi
asked() { shows_now alice 'wants to chat.*\[y/n\]' || shows_now bob 'wants to chat.*\[y/n\]'; }
if wait_until 30 asked; then
  if shows_now alice 'wants to chat'; then ASKED=alice; else ASKED=bob; fi
  pass "$ASKED is asked about the other's new key"
else
  fail "neither chat asked about the other within 30 s"; ASKED=alice
fi
tm send-keys -t "$ASKED" -l -- "hel"
see_now 5 "$ASKED" 'Accept\? \[y/n\] \(answer y or n; "hel" is kept for after\)' "text typed at the question is shown as kept, with what to answer"
tm send-keys -t "$ASKED" y
see_now 5 "$ASKED" '> hel$' "after the answer, the typed text is back in the input line"
tm send-keys -t "$ASKED" C-u
see 15 alice 'bob connected' "alice shows bob connected"
see 15 bob 'alice connected' "bob shows alice connected"

# ---------------------------------------------------------------- /file
type_line alice "/file $E2E_TMP/files/missing.bin"
see 5 alice "no such file: $E2E_TMP/files/missing.bin; nothing was sent" "/file of a missing path says so"
unseen bob 'missing.bin' "and bob is offered nothing"
type_line alice "/file $E2E_TMP/files/notes.bin"
see 10 bob 'alice sends the file notes.bin \(200\.0 KiB\)\. Accept\? \[y/n\]' "bob is asked about alice's file, with its size"
see 5 alice 'offering notes.bin \(200\.0 KiB\) to bob…' "alice sees at once that she offers it to bob"
unseen alice 'sent the file notes.bin' "(while bob has not answered yet)"
tm send-keys -t bob y
see 20 bob "alice sent a file: notes.bin \(200\.0 KiB, SHA-256 verified\) → $DL_BOB/notes.bin" "bob's screen: the file arrived, verified, and where it is"
see 20 alice 'sent the file notes.bin to bob \(200\.0 KiB, SHA-256 verified\)' "alice's screen: delivered and verified"
check "the file in bob's downloads has the same bytes" cmp "$E2E_TMP/files/notes.bin" "$DL_BOB/notes.bin"
type_line alice "/file $E2E_TMP/files/second.bin"
see 10 bob 'alice sends the file second.bin .*Accept\? \[y/n\]' "bob is asked about the second file"
tm send-keys -t bob n
see 10 alice 'second.bin was not delivered to bob' "a declined file is reported to the sender"
check "the declined file is not in bob's downloads" [ ! -e "$DL_BOB/second.bin" ]

# ---------------------------------------------------------------- /image: the sender hears at once
type_line alice "/image $E2E_TMP/files/pic.png"
see 10 bob 'alice sends the image pic.png .*Accept\? \[y/n\]' "bob is asked about alice's image"
see 5 alice 'offering pic.png \([0-9.]+ [KMG]?i?B\) to bob…' "alice's /image says at once that it is offered"
unseen alice 'sent the image pic.png' "(before bob answered)"
tm send-keys -t bob y
see 20 bob 'alice sent an image: pic.png \(image/png, 37×23\)' "bob's screen shows the image"
see 20 alice 'sent the image pic.png to bob' "alice's screen: the image was delivered"

# ---------------------------------------------------------------- /msg and the bell
check "no bell on alice's terminal yet ($(bell alice))" [ "$(bell alice)" = 0 ]
type_line bob "lunch anyone?"
see 10 alice 'bob> lunch anyone\?' "alice gets bob's line"
check "a line that does not mention alice does not ring her bell" [ "$(bell alice)" = 0 ]
type_line bob "Alice, look at this"
see 10 alice 'bob> Alice, look at this' "alice gets the line that mentions her"
if wait_until 5 rang alice; then pass "a line mentioning alice rings the bell of her chat (by default)"; else fail "alice's terminal got no bell"; fi
# capture-pane -e keeps the escapes: the mention's text is bold yellow (1;33), a plain line is not.
colored() { tm capture-pane -p -e -J -S - -t "$1"; }
highlighted() { colored "$1" | grep -F -- "$2" | grep -qE $'\e\\[[0-9;]*33[;m]'; }  # tmux may write 1;33 as \e[1m\e[33m
plain() { ! highlighted "$@"; }
check "the line mentioning alice is highlighted on her screen (bold yellow)" highlighted alice "Alice, look at this"
check "a line that does not mention her is not highlighted" plain alice "lunch anyone?"
see 5 bob 'bob> lunch anyone\?' "bob's own lines carry his name, as in irssi (not me>)"
unseen bob 'me> ' "no me> on bob's screen"
type_line alice "/msg bob the secret plan"
see 10 bob '\[private\] alice> the secret plan' "a /msg arrives marked [private]"
see 5 alice '\[private\] alice → bob> the secret plan' "and the sender's echo is marked [private] too, with her name"
check "bob's chat, with --no-bell, never rang (the /msg was private to him)" [ "$(bell bob)" = 0 ]

# ---------------------------------------------------------------- /help and /who
type_line bob "/help"
see 5 bob '^\* +/msg NAME text +a line to one person' "/help lists /msg on a line of its own, with what it does"
see 5 bob '^\* +/who, /names +who is here' "/help lists /who"
see 5 bob '^\* +/quit +leave the chat' "/help lists /quit"
type_line bob "/who"
see 5 bob '^\* 2 here: alice, bob$' "/who: a count and the names, bob included"
type_line alice "/names"
see 5 alice '^\* 2 here: alice, bob$' "/names says the same on alice's side"

# A program in the room (piped, --json): a /msg to it carries "private": true, a line to all false.
start_proc carol env P2P_HOME="$(home carol)" "$LAB" exec A "$P2P" chat --room "$ROOM" --name carol --yes --json
answer_questions() {
  local p
  for p in alice bob; do shows_now "$p" '(wants to chat|is in room .*Connect\?).*\[y/n\]' && tm send-keys -t "$p" y; done
  shows alice 'carol connected' && shows bob 'carol connected'
}
if wait_until 40 answer_questions; then pass "carol (piped, --json) joins alice and bob"; else fail "carol did not connect to both"; fi
type_line alice "/msg carol psst"
type_line alice "hello all"
expect_json 10 carol "carol's JSON: the /msg is a message with private true and its text" event=message from=alice private=true text=psst
expect_json 10 carol "carol's JSON: a line to everyone has private false" event=message from=alice private=false "text=hello all"
close_stdin carol
if wait_exit carol 20; then check "carol's piped chat ends with 0 at EOF" [ "$EXIT_RC" = 0 ]; else fail "carol's chat still running"; fi
see 10 alice 'carol left' "alice is told carol left"

# ---------------------------------------------------------------- Tab
tm send-keys -t bob -l -- "/msg al"
tm send-keys -t bob Tab
see_now 5 bob '^> /msg alice ?$' "Tab after /msg completes alice's name"
tm send-keys -t bob C-u
tm send-keys -t bob -l -- "/file $E2E_TMP/files/no"
tm send-keys -t bob Tab
see_now 5 bob "^> /file $E2E_TMP/files/notes.bin ?\$" "Tab after /file completes a path"
tm send-keys -t bob C-u
tm send-keys -t bob -l -- "/file $E2E_TMP/files/subf"
tm send-keys -t bob Tab
see_now 5 bob "^> /file $E2E_TMP/files/subfolder-x/\$" "a folder is completed with a trailing /"
tm send-keys -t bob C-u

type_line alice "/me waves"
see 10 bob '\* alice waves' "/me is shown as an action"
type_line alice "/quit"
type_line bob "/quit"
see 10 alice '\[exited 0\]' "alice's chat ends with 0"
see 10 bob '\[exited 0\]' "bob's chat ends with 0"

# ---------------------------------------------------------------- p2p history
run env P2P_HOME="$(home bob)" "$LAB" exec B "$P2P" history >"$E2E_TMP/history-bob.out" 2>&1
grep -q . "$E2E_TMP/history-bob.out" && sed 's/^/    | /' "$E2E_TMP/history-bob.out"
DATE='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}'
check "bob's history shows /me as an action" grep -qE "^$DATE ← alice  \* alice waves$" "$E2E_TMP/history-bob.out"
check "bob's history shows the /msg as private" grep -qE "^$DATE ← alice  \[private\] the secret plan$" "$E2E_TMP/history-bob.out"
check "bob's history names the file and where it is" grep -qE "^$DATE ← alice  \[file\] notes.bin $DL_BOB/notes.bin$" "$E2E_TMP/history-bob.out"
check "every line of bob's history starts with a date like 2026-11-25 05:17" bash -c '! grep -vE "^$1 " "$2"' _ "$DATE" "$E2E_TMP/history-bob.out"
check "no raw /me in the history" bash -c '! grep -q "/me" "$1"' _ "$E2E_TMP/history-bob.out"

# ---------------------------------------------------------------- chat --to: its own conversation, the right hint
tm kill-session -t alice
terminal alice A "$P2P" chat --room "$ROOM" --name alice --to dave --timeout 4
see 20 alice '\[exited 3\]' "chat --to dave, who never appears, ends with 3"
see 1 alice 'nobody runs `p2p chat --room '"$ROOM"'`' "and its hint names p2p chat (with the room)"
unseen alice 'receive' "no hint names p2p receive"
unseen alice 'lunch|secret plan|waves|notes.bin|psst' "nothing of the conversations with bob and carol is replayed for dave"
tm kill-session -t alice
terminal alice A "$P2P" chat --room "$ROOM" --name alice --to bob --timeout 4
see 20 alice "\[$DATE\] bob> Alice, look at this" "chat --to bob replays the conversation with bob, dated"
see 5 alice "\[$DATE\] alice → bob \[file\] notes.bin" "and the replay names the file sent"
unseen alice 'psst' "but not the /msg to carol"
see 20 alice '\[exited 3\]' "(bob is gone: it ends with 3)"

finish
