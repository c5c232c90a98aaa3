#!/usr/bin/env bash
# Who dials in a room, with an older p2p (PROTOCOL.md §2.2). Lab host A runs `p2p chat --yes --json`; lab host B
# an older p2p (raw_peer.py, taking one connection) announced as an older one is: its TXT record without
# `dial=names`. The two rules disagree: by the names the older peer would dial (so the chat leaves its
# instance unresolved and waits), by the IDs the chat does (its ID is the lower), and the older peer never
# dials. The chat must still connect it, by itself, once its 20 s grace is over: resolved then, the older
# record says "IDs", and the lower ID dials. Needs root (lab.sh up), avahi-publish.
. "$(dirname "$0")/lib.sh"
need ip python3 avahi-publish
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

ADDR_B=10.213.7.2
export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2ro$$}
ROOM=older-room-$$
on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# The chat's ID, and an older peer's key whose ID sorts above it (each try is a coin toss).
CHAT_ID=$(run env P2P_HOME="$(home chat)" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
OLD_ID=""
for n in $(seq 1 40); do
  mkdir -p "$E2E_TMP/older$n"
  id=$("$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import raw_peer; print(raw_peer.make_identity(sys.argv[2])[2].hex())' \
    "$E2E_DIR" "$E2E_TMP/older$n")
  if [[ "$id" > "$CHAT_ID" ]]; then OLD_ID=$id OLD_HOME=$E2E_TMP/older$n; break; fi
done
check "an older peer's key whose ID sorts above the chat's ($OLD_ID > $CHAT_ID)" [ -n "$OLD_ID" ]
# A name the older peer would dial by the name rule, so the chat waits for it.
OLD_NAME=""
for n in $(seq 1 64); do if name_dials "oldie$n" "newbie"; then OLD_NAME="oldie$n"; break; fi; done
check "a name whose peer dials newbie by the names ($OLD_NAME)" [ -n "$OLD_NAME" ]

PORT=$(free_port B)
start_bg older "$LAB" exec B "$PYTHON" "$E2E_DIR/raw_peer.py" "$ADDR_B" "$PORT" older-records-listen --identity "$OLD_HOME" \
  --caps 61 --peer-name "$OLD_NAME" --session "$ROOM" --timeout 90
wait_for "$E2E_TMP/older.err" "listening on" 15 || fail "the older peer did not listen" older
start_bg announce "$LAB" exec B avahi-publish -s "$OLD_NAME" _p2p._tcp "$PORT" txtvers=1 pv=1 "id=$OLD_ID" "sid=$ROOM"

start_proc chat env P2P_HOME="$(home chat)" "$LAB" exec A "$P2P" chat --json --yes --name newbie --room "$ROOM"
expect_json 20 chat "the chat advertises in the room" event=advertising name=newbie
STARTED=$SECONDS
expect_json 60 chat "the chat connects the older peer by itself" event=connected peer="$OLD_NAME" id="$OLD_ID"
WAITED=$((SECONDS - STARTED))
# Before its grace was over the chat waited for the older peer's dial (the names had it dial): a
# connection at once would mean the instance was resolved and dialled as if both ran the ID rule.
check "it waited for the older peer's dial first (connected after ${WAITED} s, grace 20 s)" [ "$WAITED" -ge 15 ]
check "one connection, not one per try ($(count_json chat event=connected))" [ "$(count_json chat event=connected)" = 1 ]
close_stdin chat
if wait_exit chat 20; then check "the chat exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "the chat did not exit" chat; stop_proc chat; fi
stop_proc announce
stop_proc older 2>/dev/null || true
finish
