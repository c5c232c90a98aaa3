#!/usr/bin/env bash
# A p2p chat server survives misbehaving TLS clients (each gets the documented ERROR code and is
# disconnected), keeps serving real peers afterwards, and `p2p chat --connect` works without an
# mDNS daemon. raw_peer.py speaks TLS 1.3 with its own certificate unless told --plaintext; the
# TLS-specific refusals (impostor HELLO, plaintext HELLO, TLS 1.2, no client certificate, a TCP client
# that never starts TLS) are checked here too. Loopback only. The session ID is unique per run, so chats of other tests sharing the
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

SERVER_ID=$(get_json server id event=listening)

# The silent clients take ~10 s: let them run while the others misbehave. One completes TLS and then
# says nothing (ERROR 10 inside TLS); the other opens TCP and never starts TLS (no channel for an
# ERROR frame: the server just hangs up).
start_bg silent "$PYTHON" "$RAW" 127.0.0.1 "$P" silent --session "$SID" --timeout 30
start_bg tcpsilent "$PYTHON" "$RAW" 127.0.0.1 "$P" silent --plaintext --session "$SID" --timeout 30

# field JSON KEY: KEY of raw_peer.py's report (Python's str() of it; "?" when it is not JSON).
field() { "$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2" 2>/dev/null || echo "?"; }

# raw SCENARIO CODE DESC [ARGS...]: the client gets ERROR CODE and the server closes the connection.
raw() {
  local scenario=$1 code=$2 desc=$3 out got closed; shift 3
  out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" "$scenario" --session "$SID" "$@" 2>&1)
  got=$(field "$out" error_code)
  closed=$(field "$out" closed_by_server)
  if [ "$got" = "$code" ]; then pass "$desc: ERROR $code"; else fail "$desc: expected ERROR $code, got $got: $out"; fi
  if [ "$closed" = True ]; then pass "$desc: server closed the connection"; else fail "$desc: connection not closed by the server: $out"; fi
  check "$desc: server still running" is_running server
}

# A well-behaved raw TLS client: TLS 1.3, and the server's HELLO names the key its certificate proves.
out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" hello --session "$SID" 2>&1)
log "raw hello: $out"
check "raw TLS client: handshake completes (got $(field "$out" received))" [ "$(field "$out" received)" = "['HELLO', 'WELCOME']" ]
check "raw TLS client: TLS version is TLSv1.3" [ "$(field "$out" tls_version)" = TLSv1.3 ]
check "raw TLS client: server certificate proves the server's ID $SERVER_ID" [ "$(field "$out" server_cert_id)" = "$SERVER_ID" ]
check "raw TLS client: server HELLO claims that same ID with a 32-byte datagram key" \
  "$PYTHON" -c 'import json,sys; h=json.loads(sys.argv[1])["server_hello"]; sys.exit(not (h["id"] == sys.argv[2] and h["datagram_key_len"] == 32))' "$out" "$SERVER_ID"
expect_json 10 server "server reports the raw TLS client connected under the ID its key proves" event=connected peer=raw-hello id="$(field "$out" our_id)" trust=new

# Framing and payload errors (bad magic, versions, sizes, unknown types, every malformed payload, frames
# out of state) are the catalogue of PROTOCOL.md §12.1, checked by malformed.sh; here only TLS and identity.
raw impostor 13 "HELLO claiming another peer's ID (the server's own) over TLS" --claim "$SERVER_ID"
raw impostor 13 "HELLO claiming a random peer's ID over TLS"
raw plaintext-hello 14 "plaintext HELLO to a TLS server (answered in plaintext)"
expect_no_json server "no impostor was ever reported connected" event=connected peer=raw-impostor

# tlsrefused SCENARIO DESC: the TLS handshake is refused (no HELLO, no frames), the server lives on.
tlsrefused() {
  local out; out=$(run "$PYTHON" "$RAW" 127.0.0.1 "$P" "$1" --session "$SID" 2>&1)
  log "$1: $out"
  if [ "$(field "$out" tls_error)" != None ] && [ "$(field "$out" received)" = "[]" ] && [ "$(field "$out" closed_by_server)" = True ]; then
    pass "$2: refused by TLS ($(field "$out" tls_error | cut -c1-60))"
  else
    fail "$2: expected a TLS refusal: $out"
  fi
  check "$2: server still running" is_running server
}
tlsrefused tls12 "client offering at most TLS 1.2"
tlsrefused nocert "TLS 1.3 client without a certificate"

# A TLS client that never sends HELLO: ERROR 10 (inside TLS) after the 10 s handshake timeout.
if wait_exit silent 40; then
  out=$(cat "$(out_of silent)")
  log "silent TLS client: $out"
  code=$(field "$out" error_code) closed=$(field "$out" closed_by_server) elapsed=$(field "$out" elapsed)
  check "silent TLS client: TLS 1.3 was up" [ "$(field "$out" tls_version)" = TLSv1.3 ]
  if [ "$code" = 10 ]; then pass "silent TLS client: ERROR 10 (handshake timeout)"; else fail "silent TLS client: expected ERROR 10, got $code after $elapsed s: $out"; fi
  if [ "$closed" = True ] && "$PYTHON" -c 'import sys; sys.exit(not 8 <= float(sys.argv[1]) <= 20)' "$elapsed"; then
    pass "silent TLS client: disconnected after $elapsed s (handshake timeout 10 s)"
  else
    fail "silent TLS client: expected a close after ~10 s, got closed=$closed after $elapsed s"
  fi
else
  fail "silent TLS client: still connected after 40 s" silent
fi
# A TCP client that never starts TLS: closed after the handshake timeout, without any frame.
if wait_exit tcpsilent 40; then
  out=$(cat "$(out_of tcpsilent)")
  log "silent TCP client: $out"
  closed=$(field "$out" closed_by_server) elapsed=$(field "$out" elapsed)
  check "silent TCP client (never starts TLS): not one byte from the server" [ "$(field "$out" bytes_received)" = 0 ]
  if [ "$closed" = True ] && "$PYTHON" -c 'import sys; sys.exit(not 8 <= float(sys.argv[1]) <= 20)' "$elapsed"; then
    pass "silent TCP client: server closed the connection after $elapsed s (handshake timeout 10 s)"
  else
    fail "silent TCP client: expected a close after ~10 s, got closed=$closed after $elapsed s: $out"
  fi
else
  fail "silent TCP client: still connected after 40 s" tcpsilent
fi
check "server still running after the silent clients" is_running server

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

# Without a daemon but on a fixed port, chat and receive keep listening: a one-line warning naming the
# port, not an exit, and a peer reaches them with --connect.
LP=$(free_port)
start_proc listener env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home listener)" "$P2P" chat --json --yes --name listener --port "$LP" --session-id "$SID"
expect_json 20 listener "no daemon, fixed port: chat warns instead of exiting" event=warning code=no-discovery
expect_json 1 listener "the warning says where to --connect" event=warning code=no-discovery "message~:$LP"
check "no daemon, fixed port: chat keeps running" is_running listener
start_proc caller env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home caller)" "$P2P" chat --json --yes --name caller --connect "127.0.0.1:$LP" --session-id "$SID"
expect_json 20 listener "the daemon-less listener is reached with --connect" event=connected peer=caller
send_line caller "hello listener"
expect_json 10 listener "the listener receives the caller's line" event=message from=caller text="hello listener"
close_stdin caller
if wait_exit caller 15; then check "caller exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "caller did not exit after EOF" caller; fi
close_stdin listener
if wait_exit listener 15; then check "listener exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "listener did not exit after EOF" listener; fi

GP=$(free_port)
start_proc gamer env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home gamer)" "$P2P" game --json --yes --name gamer --port "$GP"
expect_json 20 gamer "no daemon, fixed port: game warns instead of exiting" event=warning code=no-discovery "message~:$GP"
check "no daemon, fixed port: game keeps running" is_running gamer
stop_proc gamer

RP=$(free_port)
mkdir -p "$E2E_TMP/inbox"
head -c 100000 /dev/urandom > "$E2E_TMP/nodaemon.bin"
start_proc receiver env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home receiver)" "$P2P" receive --json --yes --port "$RP" --dir "$E2E_TMP/inbox"
expect_json 20 receiver "no daemon, fixed port: receive warns instead of exiting" event=warning code=no-discovery
start_proc sender env DBUS_SYSTEM_BUS_ADDRESS="$NOBUS" P2P_HOME="$(home sender)" "$P2P" send --json --connect "127.0.0.1:$RP" "$E2E_TMP/nodaemon.bin"
expect_json 30 receiver "the daemon-less receiver gets the file" event=file-received name=nodaemon.bin
check "the received file is the one sent" cmp -s "$E2E_TMP/nodaemon.bin" "$E2E_TMP/inbox/nodaemon.bin"
if wait_exit sender 15; then check "sender exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "sender did not exit" sender; fi
stop_proc receiver

# avahi's compatibility layer prints a three-line banner on a process's first dns_sd call unless
# AVAHI_COMPAT_NOWARN is set; p2p sets it itself, so a user who never heard of it sees no banner.
banner=$(env -u AVAHI_COMPAT_NOWARN P2P_HOME="$(home banner)" "$P2P" peers --timeout 0.5 2>&1)
check "no avahi compatibility banner without AVAHI_COMPAT_NOWARN" [ "$(printf '%s' "$banner" | grep -c 'Bonjour compatibility layer')" = 0 ]

# Friend leaves politely; the server notices and keeps running.
close_stdin friend
if wait_exit friend 15; then check "friend exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "friend did not exit after EOF" friend; fi
expect_json 10 server "server reports friend disconnected" event=disconnected peer=friend
check "server is still alive after everything" is_running server
# The impostors are reported loudly (code "refused"); nothing else is an error.
check "server reported the two impostors as refused" [ "$(count_json server event=error code=refused)" = 2 ]
check "server printed no other error events" [ "$(count_json server event=error)" = 2 ]
close_stdin server
if wait_exit server 15; then check "server exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "server did not exit after EOF" server; fi

finish
