#!/usr/bin/env bash
# Two hosts (lab namespaces A 10.213.7.1 and B 10.213.7.2, each with its own avahi-daemon): chats
# started independently find each other by DNS-SD alone, connect, exchange lines both ways
# (including non-ASCII), and EOF on one side ends it cleanly for both. A chat with another
# session ID is visible in DNS-SD, with the key/value pairs it advertises (--info), but never
# connected. A connection request carries its note (--context) to the other side. Needs root (lab.sh up).
. "$(dirname "$0")/lib.sh"
need ip python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

ADDR_A=10.213.7.1
export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2n$$}
PREFIX=$P2P_LAB_PREFIX
lab_absent() { ! ip netns list | grep -qE "^($PREFIX)(A|B)( |$)"; }

# Runs after our p2p processes are stopped, so no client keeps a namespace alive.
on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up (A and B resolve each other's services)"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

chat_in() { # chat_in HOST NAME ARGS...: a piped JSON chat in lab host HOST
  local host=$1 name=$2; shift 2
  start_proc "$name" env P2P_HOME="$(home "$name")" "$LAB" exec "$host" "$P2P" chat --json --yes --name "$name" "$@"
}
chat_in A alice
chat_in B bob
chat_in A gamer --session-id game --info color=blue --info level=3

for p in alice bob gamer; do expect_json 20 "$p" "$p listens" event=listening name="$p"; done
ALICE_ID=$(get_json alice id event=listening); BOB_ID=$(get_json bob id event=listening)
ALICE_PORT=$(get_json alice port event=listening); GAMER_ID=$(get_json gamer id event=listening)
expect_json 20 gamer "gamer (session game) advertises" event=advertising name=gamer

# ---- discovery alone brings alice and bob together
expect_json 40 alice "alice connects to bob (found by DNS-SD)" event=connected peer=bob id="$BOB_ID"
expect_json 40 bob "bob connects to alice (found by DNS-SD)" event=connected peer=alice id="$ALICE_ID"

send_line alice "hello from alice"
expect_json 15 bob "bob receives alice's line with from=alice" event=message from=alice id="$ALICE_ID" text="hello from alice" time?
send_line bob "héllo wörld ✓"
expect_json 15 alice "alice receives bob's non-ASCII line intact" event=message from=bob id="$BOB_ID" "text=héllo wörld ✓" time?

# ---- B sees A at the lab address; the game session is visible but separate
peers_b() {
  run env P2P_HOME="$(home peers)" "$LAB" exec B "$P2P" peers --json --timeout 3 >"$E2E_TMP/peers.out" 2>"$E2E_TMP/peers.err"
  [ "$(count_json peers event=peer-found "$@")" -gt 0 ]
}
if wait_until 30 peers_b name=alice id="$ALICE_ID" session=chat port="$ALICE_PORT" addresses~"$ADDR_A"; then
  pass "p2p peers in B lists alice at $ADDR_A:$ALICE_PORT, session chat"
  addrs=$(get_json peers addresses event=peer-found name=alice)
  check "alice's addresses seen from B are only lab ones ($addrs)" "$PYTHON" -c 'import json,sys; a=json.loads(sys.argv[1]); sys.exit(not a or not all(x.startswith("10.213.7.") for x in a))' "$addrs"
else
  fail "p2p peers in B does not list alice at $ADDR_A" "$E2E_TMP/peers.out" "$E2E_TMP/peers.err"
fi
if wait_until 30 peers_b name=gamer id="$GAMER_ID" session=game addresses~"$ADDR_A" 'info={"color": "blue", "level": "3"}'; then
  pass "p2p peers in B lists gamer (session game) at $ADDR_A, with what it advertises (--info color=blue --info level=3)"
else
  fail "p2p peers in B does not list gamer" "$E2E_TMP/peers.out"
fi
GAMER_SEEN=$SECONDS

check "exactly one connected event at alice before EOF" [ "$(count_json alice event=connected)" = 1 ]
check "exactly one connected event at bob before EOF" [ "$(count_json bob event=connected)" = 1 ]
expect_no_json alice "no disconnect at alice before EOF" event=disconnected
expect_no_json bob "no disconnect at bob before EOF" event=disconnected

# ---- EOF on alice: she leaves (BYE), bob notices within a few seconds
close_stdin alice
t=$SECONDS
if wait_exit alice 15; then check "alice exits 0 after EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "alice did not exit within 15 s of EOF" alice; fi
if line=$(wait_json 5 bob event=disconnected peer=alice); then
  pass "bob reports alice disconnected $((SECONDS - t)) s after her EOF"
  check "bob's disconnect reason says she left ($line)" grep -q 'left' <<<"$line"
else
  fail "bob did not report alice disconnected within 5 s of her EOF" bob
fi
check "bob keeps running after alice left" is_running bob

# ---- the game session stayed apart the whole time (at least 8 s after B could see gamer)
while [ $((SECONDS - GAMER_SEEN)) -lt 8 ]; do sleep 0.5; done
expect_no_json gamer "gamer (session game) never connected to anyone" event=connected
expect_no_json bob "bob never connected to gamer" event=connected peer=gamer
expect_no_json bob "gamer was never offered to bob" peer=gamer
expect_no_json alice "alice never connected to gamer (same host, other session)" event=connected peer=gamer
expect_no_json gamer "gamer was never offered alice or bob" event=peer-available

# ---- a connection request's note (--context) reaches the side that accepts it
chat_in A dealer --session-id cards
expect_json 20 dealer "dealer listens" event=listening name=dealer
DEALER_PORT=$(get_json dealer port event=listening)
chat_in B player --session-id cards --context "seat 2, table 4 ✓" --connect "$ADDR_A:$DEALER_PORT"
expect_json 20 dealer "dealer sees the player's request with its note" event=connection-request peer=player "context=seat 2, table 4 ✓"
expect_json 20 player "player connects to dealer" event=connected peer=dealer
for p in player dealer; do
  close_stdin "$p"
  if wait_exit "$p" 15; then check "$p exits 0 after EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "$p did not exit within 15 s of EOF" "$p"; fi
done

for p in bob gamer; do
  close_stdin "$p"
  if wait_exit "$p" 15; then check "$p exits 0 after EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "$p did not exit within 15 s of EOF" "$p"; fi
done
for p in alice bob gamer; do expect_no_json "$p" "$p printed no error events" event=error; done

# ---- nothing left behind
for p in alice bob gamer; do stop_proc "$p"; done
run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1
check "lab down leaves no namespace" lab_absent
check "lab down reported no leftover processes" bash -c '! grep -q "processes still running" "$1"' _ "$E2E_TMP/lab.log"

finish
