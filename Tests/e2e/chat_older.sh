#!/usr/bin/env bash
# `p2p chat` and an older p2p, and byte streams offered to a chat, end to end on loopback (raw_peer.py
# plays the peer over TLS with the real protocol; issue 36, item 6):
#  - `/file` in a room with a p2p before channels in it: nothing is offered to that peer (no TRANSFER,
#    STREAM or CHANNEL frame reaches it), and the person reads a line naming it, its address and its
#    version, and that it cannot take files in chat; an older p2p's own TRANSFER offer to the chat is
#    denied in its layout, naming the version, and the chat says so;
#  - a chat takes no byte streams, and says so as `p2p receive` does: an older p2p's STREAM OPEN gets a
#    DENY in a STREAM frame (0x51) naming the version, a stream OPEN gets DENY with the reason, and DATA
#    of the stream nobody accepted gets CANCEL and the connection is closed.
# No network namespaces: the chat and the receiver listen on their own loopback ports, in a session of their own.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$-$RANDOM
SID=e2e-older-$TAG
RAW="$E2E_DIR/raw_peer.py"
field() { "$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1]); [v := v[int(k)] if isinstance(v, list) else v[k] for k in sys.argv[2:]]; print(v)' "$@" 2>/dev/null || echo "?"; }
raw() { local port=$1; shift; run "$PYTHON" "$RAW" 127.0.0.1 "$port" "$@" --session "$SID" 2>>"$E2E_TMP/raw.err"; }

PC=$(free_port)
start_proc host env P2P_HOME="$(home host)" "$P2P" chat --json --yes --name "host-$TAG" --port "$PC" --session-id "$SID" --downloads "$E2E_TMP/host-in"
expect_json 20 host "the chat listens" event=listening
printf 'small file\n' >"$E2E_TMP/small.txt"

# ---------------------------------------------------------------- 1. /file to an older p2p
HOLD=$E2E_TMP/release-oldchat
start_bg oldchat "$PYTHON" "$RAW" 127.0.0.1 "$PC" older-chat --caps 61 --peer-name oldchat --hold-file "$HOLD" --session "$SID" --timeout 60
expect_json 20 host "the older p2p joins the chat" event=connected peer=oldchat
send_line host "/file $E2E_TMP/small.txt"
if line=$(wait_json 10 host event=error code=file "message~small.txt was not sent to oldchat (127.0.0.1:" \
            "message~runs an older p2p (wire version 1 without channel transfers), which cannot take files or images in chat; update p2p there"); then
  pass "the person reads that oldchat runs an older p2p, its address and version, and got nothing: $line"
else
  fail "no line naming the older peer and its version after /file" host
fi
# The chat goes on with it: a line still reaches it (TEXT), after anything the /file could have sent
# (one connection, in order); the older peer leaves at that line and reports what it got.
send_line host "still chatting"
wait_exit oldchat 20 >/dev/null || { touch "$HOLD"; wait_exit oldchat 10 >/dev/null; }
out=$(cat "$E2E_TMP/oldchat.out")
log "oldchat: $out"
check "the older peer got the chat line (received $(field "$out" received))" bash -c '[[ "$1" == *TEXT* ]]' _ "$(field "$out" received)"
check "and no offer of any kind: no TRANSFER, STREAM or CHANNEL frame" bash -c '[[ "$1" != *TRANSFER* && "$1" != *STREAM* && "$1" != *CHANNEL* ]]' _ "$(field "$out" received)"
check "the chat's offering line was not shown for it" bash -c '! grep -q "offering small.txt" "$1"' _ "$E2E_TMP/host.out"

# An older p2p's own offer to the chat: denied in its layout, and the chat says who and which version.
out=$(raw "$PC" older-offer --name old.txt --peer-name oldsender --timeout 30)
log "older-offer: $out"
check "the older sender's offer is denied in its own layout (reply $(field "$out" transfers 0 reply))" [ "$(field "$out" transfers 0 reply)" = DENY ]
check "the older sender hears the version: \"$(field "$out" transfers 0 reason)\"" \
  bash -c '[[ "$1" == *"wire version 1 with channel transfers"*"update p2p on the sending side" ]]' _ "$(field "$out" transfers 0 reason)"
if wait_json 10 host event=error code=transfer "message~oldsender (127.0.0.1:" "message~runs an older p2p (wire version 1 without channel transfers)" >/dev/null; then
  pass "the chat shows one line naming the older sender and its version"
else
  fail "no line in the chat naming the older sender and its version" host
fi

# ---------------------------------------------------------------- 2. streams offered to a chat, and to receive
probe() {  # probe NAME PORT REASON-PATTERN
  local who=$1 port=$2 reason=$3 out
  out=$(raw "$port" stream-probe --peer-name "probe-$who" --timeout 30)
  log "stream-probe $who: $out"
  check "$who: an older STREAM OPEN gets DENY ($(field "$out" transfers 0 reply)) in a STREAM frame ($(field "$out" transfers 0 type))" \
    [ "$(field "$out" transfers 0 reply)/$(field "$out" transfers 0 type)" = DENY/STREAM ]
  check "$who: that DENY names the version" bash -c '[[ "$1" == *"takes no TRANSFER or STREAM offers from an older p2p (wire version 1 without channel transfers)"* ]]' _ "$(field "$out" transfers 0 reason)"
  check "$who: a stream OPEN gets DENY ($(field "$out" transfers 1 reply), purpose $(field "$out" transfers 1 purpose))" \
    [ "$(field "$out" transfers 1 reply)/$(field "$out" transfers 1 purpose)" = DENY/3 ]
  check "$who: with the reason \"$(field "$out" transfers 1 reason)\"" bash -c '[[ "$1" =~ $2 ]]' _ "$(field "$out" transfers 1 reason)" "$reason"
  check "$who: DATA of the stream nobody accepted gets CANCEL ($(field "$out" transfers 2 reply): $(field "$out" transfers 2 reason))" \
    [ "$(field "$out" transfers 2 reply)" = CANCEL ]
  check "$who: and the connection is closed (closed_by_server $(field "$out" closed_by_server))" [ "$(field "$out" closed_by_server)" = True ]
}
probe chat "$PC" "in a chat \(p2p chat\), which takes no byte streams; a stream needs .p2p receive --stdout. there"
check "the chat still runs" is_running host

PR=$(free_port)
mkdir -p "$E2E_TMP/rx-in"
start_proc rx env P2P_HOME="$(home rx)" "$P2P" receive --json --yes --name "rx-$TAG" --port "$PR" --session-id "$SID" --dir "$E2E_TMP/rx-in"
expect_json 20 rx "the receiver listens" event=listening
probe receive "$PR" "takes files \(p2p receive\); a stream needs .p2p receive --stdout. there"
check "receive still runs" is_running rx

close_stdin host
wait_exit host 15 >/dev/null || stop_proc host
stop_proc rx
finish
