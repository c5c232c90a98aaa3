#!/usr/bin/env bash
# The malformed-input catalogue (Protocol/PROTOCOL.md §12.1): malformed.py sends each row's input to a
# running `p2p chat --json --yes` over TLS on loopback and checks the answer the table gives (an ERROR
# code and a close, or just a close). Throughout, a well-behaved peer (a second `p2p chat`) stays
# connected to the same server: after every case both exchange a line, so a broken input that hurt
# the session, the event loop or the process would show at once. The expectations are read from
# PROTOCOL.md only. Each case connects from its own loopback address (127.0.0.10 and up) so the
# per-address limit on connection requests (20 a minute) never refuses the catalogue itself.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

SID=e2e-malformed-$$
P=$(free_port)
CAT="$E2E_DIR/malformed.py"

mapfile -t CASES < <(run "$PYTHON" "$CAT" --list)
check "PROTOCOL.md §12.1 and malformed.py list the same ${#CASES[@]} cases" [ "${#CASES[@]}" -gt 40 ]
[ "${#CASES[@]}" -gt 0 ] || finish

start_proc server env P2P_HOME="$(home server)" "$P2P" chat --json --yes --name server --port "$P" --session-id "$SID"
expect_json 20 server "server listens on --port $P" event=listening port="$P" session="$SID"
start_proc friend env P2P_HOME="$(home friend)" "$P2P" chat --json --yes --name friend --connect "127.0.0.1:$P" --session-id "$SID"
expect_json 20 friend "the well-behaved peer connects" event=connected peer=server
expect_json 20 server "server reports the well-behaved peer connected" event=connected peer=friend

# field JSON KEY: KEY of malformed.py's report ("?" when it is not JSON).
field() { "$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2" 2>/dev/null || echo "?"; }

i=0 exchanged=0 welcomed=0 reported=0
for c in "${CASES[@]}"; do
  i=$((i + 1))
  out=$(run "$PYTHON" "$CAT" 127.0.0.1 "$P" "$c" --session "$SID" --source "127.0.0.$((9 + i))" 2>&1)
  expect=$(field "$out" expect)
  if [ "$(field "$out" ok)" = True ]; then
    if [ "$expect" = None ]; then pass "$c: connection closed, no ERROR"; else pass "$c: ERROR $expect, connection closed"; fi
  else
    fail "$c: expected ERROR $expect and a close: $out"
  fi
  # A client that got through the handshake is reported gone, whatever broke it.
  if [ "$(field "$out" after)" = welcome ]; then
    welcomed=$((welcomed + 1))
    if wait_json 10 server event=disconnected peer="bad-${c:0:50}" >/dev/null; then
      reported=$((reported + 1))
    else
      fail "$c: the server did not report the client disconnected"
    fi
  fi
  # The well-behaved session is unharmed: a line each way, right after the hostile one.
  send_line friend "friend line $i after $c"
  send_line server "server line $i after $c"
  if wait_json 10 server event=message from=friend text="friend line $i after $c" >/dev/null &&
     wait_json 10 friend event=message from=server text="server line $i after $c" >/dev/null; then
    exchanged=$((exchanged + 1))
  else
    fail "after $c: the well-behaved peer and the server no longer exchange lines" server friend
  fi
done
check "the well-behaved peer exchanged a line each way after all ${#CASES[@]} cases ($exchanged)" [ "$exchanged" = "${#CASES[@]}" ]
check "the server reported all $welcomed clients that had completed the handshake disconnected ($reported)" [ "$reported" = "$welcomed" ]
expect_no_json friend "the well-behaved peer was never disconnected" event=disconnected
expect_no_json server "the server never reported the well-behaved peer disconnected" event=disconnected peer=friend
check "server still running after the catalogue" is_running server
check "friend still running after the catalogue" is_running friend

close_stdin friend
if wait_exit friend 15; then check "friend exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "friend did not exit after EOF" friend; fi
close_stdin server
if wait_exit server 15; then check "server exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "server did not exit after EOF" server; fi
finish
