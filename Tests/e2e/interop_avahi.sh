#!/usr/bin/env bash
# p2p and avahi's own tools agree about _p2p._tcp: avahi-browse sees a p2p chat with the
# documented TXT keys (txtvers first on the wire), p2p peers sees a service published with
# avahi-publish, and a DNS-SD name conflict renames the second peer. Loopback avahi only.
# Chats here never dial strangers that share the loopback daemon: the sid=chat one only waits for
# a peer that does not exist (--to), the conflict pair has a session ID of its own.
. "$(dirname "$0")/lib.sh"
need python3 avahi-browse avahi-publish
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$
NAME=interop-$TAG

# browse_line NAME: avahi-browse's resolved line for instance NAME (IPv4), if any.
browse_line() { run timeout 5 avahi-browse -rpt _p2p._tcp 2>/dev/null | grep -F ";IPv4;$1;_p2p._tcp;local;" | grep '^=' | head -n 1; }
# has_browse_line NAME: avahi-browse resolves NAME with its own TXT record. While avahi probes the name, a
# peer holds the claim record `"txtvers=1"` alone (PROTOCOL.md, TXT record), replaced as soon as the name
# is registered: a browser that resolves it in that moment resolves again, as p2p's own browser does.
has_browse_line() { local line; line=$(browse_line "$1"); [ -n "$line" ] && [ "${line##*;}" != '"txtvers=1"' ]; }
# peers_has COND...: one `p2p peers --json` run lists a service matching every COND.
peers_has() {
  run env P2P_HOME="$(home peers)" "$P2P" peers --json --timeout 3 >"$E2E_TMP/peers.out" 2>"$E2E_TMP/peers.err"
  [ "$(count_json peers event=peer-found "$@")" -gt 0 ]
}

# ---- avahi-browse sees a running p2p chat with the documented TXT record
start_proc chat env P2P_HOME="$(home chat)" "$P2P" chat --json --name "$NAME" --to "nobody-$TAG" --timeout 600
expect_json 20 chat "chat listens" event=listening name="$NAME" session=chat
expect_json 20 chat "chat advertises under its name" event=advertising name="$NAME"
ID=$(get_json chat id event=listening)
PORT=$(get_json chat port event=listening)
if wait_until 20 has_browse_line "$NAME"; then
  line=$(browse_line "$NAME")
  log "avahi-browse: $line"
  pass "avahi-browse -rpt _p2p._tcp resolves $NAME"
  IFS=';' read -r _ _ _ _ _ _ bhost baddr bport btxt <<<"$line"
  check "avahi-browse: port $bport is the chat's port $PORT" [ "$bport" = "$PORT" ]
  check "avahi-browse: address is 127.0.0.1 (got $baddr)" [ "$baddr" = 127.0.0.1 ]
  for kv in txtvers=1 pv=1 "id=$ID" sid=chat dial=names; do
    if [[ "$btxt" == *"\"$kv\""* ]]; then pass "avahi-browse: TXT has $kv"; else fail "avahi-browse: TXT lacks $kv: $btxt"; fi
  done
  n=$(grep -o '"[^"]*"' <<<"$btxt" | wc -l)
  check "avahi-browse: TXT has exactly 5 strings (got $n)" [ "$n" = 5 ]
else
  fail "avahi-browse never resolved $NAME within 20 s" chat
  run timeout 5 avahi-browse -rpt _p2p._tcp | sed 's/^/    | /'
fi
if wire=$(run "$PYTHON" "$E2E_DIR/mdns_txt.py" "$NAME"); then
  log "TXT on the wire: $wire"
  first=$("$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])[0])' "$wire")
  check "TXT on the wire starts with txtvers=1 (got $first)" [ "$first" = txtvers=1 ]
else
  fail "no mDNS answer to a TXT query for $NAME"
fi

# ---- p2p peers sees a service published by avahi-publish
HAND=hand-made-$TAG
HAND_ID=00112233445566778899aabbccddeeff
start_bg handmade avahi-publish -s "$HAND" _p2p._tcp 45678 txtvers=1 pv=1 "id=$HAND_ID" sid=chat
if wait_for "$E2E_TMP/handmade.err" "Established under name" 15; then pass "avahi-publish registered $HAND"; else fail "avahi-publish did not register $HAND" handmade; fi
if wait_until 30 peers_has name="$HAND" id="$HAND_ID" port=45678 session=chat protocol=1 addresses~127.0.0.1; then
  pass "p2p peers lists $HAND with id $HAND_ID, port 45678, session chat, protocol 1, address 127.0.0.1"
else
  fail "p2p peers did not list $HAND as published" "$E2E_TMP/peers.out" "$E2E_TMP/peers.err"
fi
check "p2p peers lists the p2p chat too, with its id and port" peers_has name="$NAME" id="$ID" port="$PORT" session=chat
expect_no_json chat "the chat did not try to connect to the hand-made service" event=connecting
stop_proc handmade

# ---- a name conflict renames the second peer
SAME=same-$TAG
CSID=e2e-conflict-$TAG
start_proc same1 env P2P_HOME="$(home same1)" "$P2P" chat --json --yes --name "$SAME" --session-id "$CSID"
expect_json 20 same1 "first '$SAME' advertises under its name" event=advertising name="$SAME"
start_proc same2 env P2P_HOME="$(home same2)" "$P2P" chat --json --yes --name "$SAME" --session-id "$CSID"
if adv=$(wait_json 20 same2 event=advertising); then
  NAME2=$(get_json same2 name event=advertising)
  log "second peer advertises as: $NAME2"
  check "second '$SAME' is renamed (got \"$NAME2\")" [ "$NAME2" != "$SAME" ]
  check "the new name starts with the requested one" [ "${NAME2#"$SAME"}" != "$NAME2" ]
  ID1=$(get_json same1 id event=listening); ID2=$(get_json same2 id event=listening)
  if wait_until 30 peers_has name="$SAME" id="$ID1" session="$CSID"; then pass "p2p peers lists \"$SAME\" ($ID1)"; else fail "p2p peers does not list \"$SAME\"" "$E2E_TMP/peers.out"; fi
  if wait_until 30 peers_has name="$NAME2" id="$ID2" session="$CSID"; then pass "p2p peers lists \"$NAME2\" ($ID2)"; else fail "p2p peers does not list \"$NAME2\"" "$E2E_TMP/peers.out"; fi
  expect_json 30 same1 "the two peers of the conflict connect (first side)" event=connected id="$ID2"
  expect_json 30 same2 "the two peers of the conflict connect (second side)" event=connected id="$ID1"
  expect_no_json same1 "first peer's advertising name never changed" event=advertising name!="$SAME"
else
  fail "second '$SAME' never advertised" same2
fi

# (Other chats on the shared loopback daemon may dial it and be declined: only discovery errors count.)
expect_no_json chat "the sid=chat chat printed no discovery error" event=error code=discovery
for p in chat same1 same2; do
  close_stdin "$p"
  if wait_exit "$p" 15; then check "$p exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "$p did not exit after EOF" "$p"; fi
done

finish
