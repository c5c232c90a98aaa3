#!/usr/bin/env bash
# Hostile peers, end to end on loopback (raw_peer.py plays the peer over TLS with the real protocol):
#  - escape sequences in a peer's name (its HELLO), an ERROR reason (to `p2p chat`), an offered file name
#    and a CANCEL reason (to `p2p receive`) reach neither stdout nor stderr, --verbose logs included: no
#    ESC, BEL, C1 CSI or bidi override byte is printed, while the words around them are;
#  - a peer that sends 200,000 PINGs and reads nothing: the receiver's peak memory stays within 64 MiB
#    of what it used before (it was +417 MiB), it keeps serving another peer meanwhile, and it lives on;
#  - a peer that sends 100,000 chat lines and reads nothing: the chat's peak memory stays within 64 MiB
#    of idle (it was +67 MiB in a release build), and it lives on.
# The session ID is unique per run; the servers wait --to a peer that does not exist, so they dial nobody.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$-$RANDOM
SID=e2e-hostile-$TAG
RAW="$E2E_DIR/raw_peer.py"
# A window title (OSC 0), a cleared screen, a clipboard write (OSC 52), a C1 CSI (U+009B), a bidi override.
ESCAPES=$'bye \e]0;owned\a\e[2J\e]52;c;ZXZpbA==\a\xc2\x9b31m\xe2\x80\xaetxt.exe'
# The same in a display name (at most 63 bytes) and in an offered file name.
NAME=$'mal\e]0;t\a\e[2J\xc2\x9blory\xe2\x80\xae'
FILE_NAME=$'inv\e]52;c;ZXZpbA==\aoice\xc2\x9b.txt'

field() { "$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2" 2>/dev/null || echo "?"; }
# no_controls FILE...: none of the files holds a byte a terminal would obey from peer text.
no_controls() {
  "$PYTHON" - "$@" <<'EOF'
import sys
bad = [b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae"]
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    found = [b for b in bad if b in data]
    if found:
        print("%s holds %r" % (path, found)); sys.exit(1)
EOF
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$(pid_of "$1")/status"; }
peak_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$(pid_of "$1")/status"; }

# ---------------------------------------------------------------- an ERROR reason to p2p chat
P=$(free_port)
start_proc chat env P2P_HOME="$(home chat)" "$P2P" chat --yes --verbose --name "chat-$TAG" --port "$P" --session-id "$SID" \
  --to "nobody-$TAG" --timeout 600
if wait_for "$(out_of chat)" "Listening|listening|Waiting|waiting" 20 || wait_for "$E2E_TMP/chat.err" "listening" 1; then
  pass "chat is up on port $P"
fi
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" error-reason --session "$SID" --reason "$ESCAPES" --peer-name "$NAME" 2>&1)
log "error-reason: $out"
if wait_for "$(out_of chat)" "reported error 1" 10 || wait_for "$E2E_TMP/chat.err" "reported error 1" 1; then
  pass "chat reports the peer's ERROR 1"
else
  fail "chat never reported the ERROR" chat
fi
check "chat prints the words of the reason (\"owned\", \"txt.exe\")" bash -c 'cat "$1" "$2" | grep -q "owned" && cat "$1" "$2" | grep -q "txt.exe"' _ "$(out_of chat)" "$E2E_TMP/chat.err"
check "chat prints the words of the peer's name (\"lory\")" bash -c 'cat "$1" "$2" | grep -q "lory"' _ "$(out_of chat)" "$E2E_TMP/chat.err"
check "chat prints none of the escape sequences of the reason or the name (stdout and stderr, --verbose log included)" no_controls "$(out_of chat)" "$E2E_TMP/chat.err"
check "chat still runs" is_running chat

# ---------------------------------------------------------------- 100,000 chat lines, nothing read
# Lines arrive faster than SQLite stores them: they wait in a bounded batch, not one queued write each
# (which took +67 MiB).
echo 5 >"/proc/$(pid_of chat)/clear_refs"   # VmHWM counts from here
idle=$(rss_kib chat)
hold=$E2E_TMP/text.hold
start_bg text "$PYTHON" "$RAW" 127.0.0.1 "$P" textflood --session "$SID" --count 100000 --hold 120 --hold-file "$hold" --timeout 180
if wait_until 120 test -e "$hold.sent"; then pass "the flooder sent 100,000 chat lines"; else fail "the text flood did not go out" text; fi
touch "$hold"
if wait_exit text 60; then pass "the text flooder left"; else fail "the text flooder did not leave" text; fi
check "chat still runs after the text flood" is_running chat
peak=$(peak_kib chat)
check "chat's peak memory under 100,000 lines stays within 64 MiB of idle ($((idle / 1024)) -> $((peak / 1024)) MiB)" [ $((peak - idle)) -lt $((64 * 1024)) ]

# ---------------------------------------------------------------- a CANCEL reason to p2p receive
R=$(free_port)
mkdir -p "$E2E_TMP/inbox"
start_proc recv env P2P_HOME="$(home recv)" "$P2P" receive --yes --verbose --name "recv-$TAG" --port "$R" --session-id "$SID" \
  --dir "$E2E_TMP/inbox"
wait_for "$(out_of recv)" "Waiting|waiting" 20 || wait_for "$E2E_TMP/recv.err" "listening" 1
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$R" cancel-reason --session "$SID" --name note.txt --reason "$ESCAPES" --peer-name "$NAME" 2>&1)
log "cancel-reason: $out"
check "receive accepted the offer (reply $(field "$out" transfers))" bash -c '[[ "$1" == *ACCEPT* ]]' _ "$(field "$out" transfers)"
if wait_for "$(out_of recv)" "owned" 10 || wait_for "$E2E_TMP/recv.err" "owned" 1; then
  pass "receive reports the CANCEL with its reason"
else
  fail "receive never reported the CANCEL reason" recv
fi
names=$("$PYTHON" -c 'import json,sys; print(json.dumps([sys.argv[1]]))' "$FILE_NAME")
# Another raw peer is another key: under the name the first one pinned it would be refused as an impostor.
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$R" offers --session "$SID" --names "$names" --peer-name "${NAME/mal/mal2}" 2>&1)
log "offers: $out"
check "receive refuses the file name with controls (reply $(field "$out" transfers))" bash -c '[[ "$1" == *DENY* ]]' _ "$(field "$out" transfers)"
if wait_for "$(out_of recv)" "oice" 10 || wait_for "$E2E_TMP/recv.err" "oice" 1; then
  pass "receive names the refused file"
else
  fail "receive never named the refused file" recv
fi
check "receive prints none of the escape sequences of the reason, the name or the file name" no_controls "$(out_of recv)" "$E2E_TMP/recv.err"
check "nothing was written under the refused name" bash -c '! ls -A "$1" | grep -q oice' _ "$E2E_TMP/inbox"

# ---------------------------------------------------------------- 200,000 PINGs, nothing read
idle=$(rss_kib recv)
hold=$E2E_TMP/flood.hold
start_bg flood "$PYTHON" "$RAW" 127.0.0.1 "$R" pingflood --session "$SID" --count 200000 --hold 120 --hold-file "$hold" --timeout 180
if wait_until 120 test -e "$hold.sent"; then pass "the flooder sent 200,000 PINGs"; else fail "the flood did not go out" flood; fi
# While the flooder is still connected, reading nothing: another peer is served.
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$R" hello --session "$SID" 2>&1)
check "during the flood another peer completes its handshake (got $(field "$out" received))" [ "$(field "$out" received)" = "['HELLO', 'WELCOME']" ]
peak=$(peak_kib recv) now=$(rss_kib recv)
log "receive RSS: idle $((idle / 1024)) MiB, peak $((peak / 1024)) MiB, now $((now / 1024)) MiB"
check "receive's peak memory stays within 64 MiB of idle ($((idle / 1024)) -> $((peak / 1024)) MiB)" [ $((peak - idle)) -lt $((64 * 1024)) ]
touch "$hold"
if wait_exit flood 60; then pass "the flooder left"; else fail "the flooder did not leave" flood; fi
check "receive still runs after the flood" is_running recv
after=$(rss_kib recv)
check "receive's memory after the flooder left is within 64 MiB of idle ($((after / 1024)) MiB)" [ $((after - idle)) -lt $((64 * 1024)) ]

stop_proc chat
stop_proc recv
finish
