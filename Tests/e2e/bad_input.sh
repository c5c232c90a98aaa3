#!/usr/bin/env bash
# A p2p chat server survives misbehaving clients (each gets the documented ERROR code and is
# disconnected), keeps serving real peers afterwards, and `p2p chat --connect` works without an
# mDNS daemon. Loopback only. The session ID is unique per run, so chats of other tests sharing the
# loopback avahi-daemon are never dialled.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

SID=e2e-bad-$$
P=$(free_port)
RAW="$E2E_DIR/raw_peer.py"

start_proc server env P2P_HOME="$(home server)" "$P2P" chat --json --yes --name server --port "$P" --session-id "$SID"
expect_json 20 server "server listens on --port $P" event=listening port="$P" session="$SID"
is_running server || { fail "server is not running" server; finish; }

# The silent client takes ~10 s: let it run while the others misbehave.
start_bg silent "$PYTHON" "$RAW" 127.0.0.1 "$P" silent --session "$SID" --timeout 30

# raw SCENARIO CODE DESC: the client gets ERROR CODE and the server closes the connection.
raw() {
  local scenario=$1 code=$2 desc=$3 out got closed
  out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" "$scenario" --session "$SID" 2>&1)
  got=$("$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["error_code"])' "$out" 2>/dev/null)
  closed=$("$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["closed_by_server"])' "$out" 2>/dev/null)
  if [ "$got" = "$code" ]; then pass "$desc: ERROR $code"; else fail "$desc: expected ERROR $code, got $got: $out"; fi
  if [ "$closed" = True ]; then pass "$desc: server closed the connection"; else fail "$desc: connection not closed by the server: $out"; fi
  check "$desc: server still running" is_running server
}

raw huge 4 "frame header announcing 0xffffffff bytes after HELLO"
raw garbage 2 "random bytes instead of a HELLO"
raw version2 3 "HELLO with protocol version 2"
raw unknown 5 "frame of unknown type 0x7f after the handshake"
raw badutf8 6 "TEXT with invalid UTF-8 after the handshake"

out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" truncated --session "$SID" 2>&1)
log "truncated frame: $out"
check "truncated frame then close: server still running" is_running server
expect_json 10 server "server reports the truncated-frame peer disconnected" event=disconnected peer=raw-truncated

# A client that never sends HELLO.
if wait_exit silent 40; then
  out=$(cat "$(out_of silent)")
  log "silent client: $out"
  read -r code closed elapsed < <("$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["error_code"], d["closed_by_server"], d["elapsed"])' "$out" 2>/dev/null || echo "? ? ?")
  if [ "$code" = 10 ]; then pass "silent client: ERROR 10 (handshake timeout)"; else fail "silent client: expected ERROR 10, got $code after $elapsed s: $out"; fi
  if [ "$closed" = True ] && "$PYTHON" -c 'import sys; sys.exit(not 8 <= float(sys.argv[1]) <= 20)' "$elapsed"; then
    pass "silent client: disconnected after $elapsed s (handshake timeout 10 s)"
  else
    fail "silent client: expected a close after ~10 s, got closed=$closed after $elapsed s"
  fi
else
  fail "silent client: still connected after 40 s" silent
fi
check "server still running after the silent client" is_running server

# A real peer still gets through, both ways.
start_proc friend env P2P_HOME="$(home friend)" "$P2P" chat --json --yes --name friend --connect "127.0.0.1:$P" --session-id "$SID"
expect_json 20 friend "friend connects to the server" event=connected peer=server
expect_json 20 server "server reports friend connected" event=connected peer=friend
send_line friend "from friend 1"
expect_json 10 server "server receives friend's line" event=message from=friend text="from friend 1"
send_line server "from server 1"
expect_json 10 friend "friend receives server's line" event=message from=server text="from server 1"

# Without an mDNS daemon: a discovery error that says how to start one, and --connect still works.
NOBUS=unix:path=$E2E_TMP/no-such-dir/system_bus_socket
start_proc lonely env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home lonely)" "$P2P" chat --json --yes --name lonely --connect "127.0.0.1:$P" --session-id "$SID"
expect_json 20 lonely "no daemon: error event with code discovery" event=error code=discovery
expect_json 1 lonely "no daemon: the message says how to start the daemon" event=error code=discovery message~avahi-daemon
expect_json 20 lonely "no daemon: --connect still connects" event=connected peer=server
send_line lonely "from lonely"
expect_json 10 server "server receives the daemon-less peer's line" event=message from=lonely text="from lonely"
send_line server "to everyone"
expect_json 10 lonely "daemon-less peer receives server's line" event=message from=server text="to everyone"
expect_json 10 friend "friend receives the same line (group chat)" event=message from=server text="to everyone"
close_stdin lonely
if wait_exit lonely 15; then check "daemon-less peer exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "daemon-less peer did not exit after EOF" lonely; fi

# Without a daemon and without --connect there is nothing to do: an error and a non-zero exit.
start_proc nodaemon env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home nodaemon)" "$P2P" chat --json --yes --name nodaemon --session-id "$SID"
if wait_exit nodaemon 20; then
  check "no daemon, no --connect: exits non-zero (got $EXIT_RC)" [ "$EXIT_RC" != 0 ]
  expect_json 1 nodaemon "no daemon, no --connect: discovery error event" event=error code=discovery
else
  fail "no daemon, no --connect: still running after 20 s" nodaemon
fi

# Friend leaves politely; the server notices and keeps running.
close_stdin friend
if wait_exit friend 15; then check "friend exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "friend did not exit after EOF" friend; fi
expect_json 10 server "server reports friend disconnected" event=disconnected peer=friend
check "server is still alive after everything" is_running server
expect_no_json server "server printed no error events" event=error
close_stdin server
if wait_exit server 15; then check "server exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "server did not exit after EOF" server; fi

finish
