#!/usr/bin/env bash
# A sender that ignores the window, end to end on loopback (raw_peer.py plays the sender over TLS with the
# real protocol; issue 34, row 4): a tree of 65,536 files of 4 KiB (256 MiB), accepted with --yes, sent as
# SMALL frames as fast as the link takes them, never waiting for an ACK. The receiver writes one file at a
# time (create, write, rename), far slower than the link, so the bytes it has not written pile up:
#  - once 8 MiB are beyond its last ACK it ends the tree with CANCEL "DATA beyond the window: …" and
#    closes the connection (the documented error, Protocol/TRANSFER.md "Channels");
#  - `p2p receive`'s peak memory stays within 64 MiB of idle (before the fix the queue held what was sent);
#  - it reports the tree failed with that reason, and keeps running.
# No network namespaces: the receiver listens on its own loopback port, in a session of its own.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$-$RANDOM
SID=e2e-hwindow-$TAG
RAW="$E2E_DIR/raw_peer.py"
field() { "$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1]); [v := v[int(k)] if isinstance(v, list) else v[k] for k in sys.argv[2:]]; print(v)' "$@" 2>/dev/null || echo "?"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$(pid_of "$1")/status"; }
peak_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$(pid_of "$1")/status"; }

IN=$E2E_TMP/inbox
mkdir -p "$IN"
P=$(free_port)
start_proc rx env P2P_HOME="$(home rx)" "$P2P" receive --json --yes --name "rx-$TAG" --port "$P" --session-id "$SID" --dir "$IN"
if wait_json 20 rx event=listening >/dev/null; then pass "receive listens on port $P"; else fail "receive did not start" rx; finish; fi

echo 5 >"/proc/$(pid_of rx)/clear_refs"   # VmHWM counts from here
idle=$(rss_kib rx)
log "window-overrun: 65536 files of 4 KiB as SMALL frames, no ACK awaited"
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" window-overrun --count 65536 --size 4096 --session "$SID" --timeout 120 \
  --peer-name "raw-$TAG" 2>>"$E2E_TMP/raw.err")
log "window-overrun: $(printf '%s' "$out" | cut -c1-600)"
peak=$(peak_kib rx) now=$(rss_kib rx)
sent=$(field "$out" sent)
log "receive RSS: idle $((idle / 1024)) MiB, peak $((peak / 1024)) MiB, now $((now / 1024)) MiB; the sender got $((${sent//[!0-9]/0} / 1048576)) MiB out"
check "the tree was accepted (reply $(field "$out" transfers 0 reply))" [ "$(field "$out" transfers 0 reply)" = TREE_ACCEPT ]
reason=$(field "$out" transfers 0 result reason)
check "the sender gets CANCEL with the documented error: \"$reason\"" \
  bash -c '[ "$1" = CANCEL ] && [[ "$2" == "DATA beyond the window: "*" bytes beyond the last ACK, over the window of 8388608" ]]' _ \
  "$(field "$out" transfers 0 result reply)" "$reason"
check "the receiver closed the connection" [ "$(field "$out" closed_by_server)" = True ]
check "receive's peak memory stays within 64 MiB of idle ($((idle / 1024)) -> $((peak / 1024)) MiB)" [ $((peak - idle)) -lt $((64 * 1024)) ]
if wait_json 20 rx event=transfer-failed "reason~DATA beyond the window" >/dev/null; then
  pass "the receiving user sees the tree failed with the reason"
else
  fail "no transfer-failed event naming the window" rx
fi
written=$(find "$IN" -type f ! -name '*.part' | wc -l)
check "fewer files were written than were sent ($written of 65536): the rest was refused, not queued" [ "$written" -lt 65536 ]
check "receive still runs" is_running rx

stop_proc rx
finish
