#!/usr/bin/env bash
# Nothing lost in chat, across faults, between two lab hosts (namespaces A and B, own avahi each):
# kill -9 of a peer, a cut link, and a restart of the sender with lines still in its outbox. Lines
# written while the peer is away wait in the outbox (SQLite in P2P_HOME) and arrive exactly once, in
# order, when it is back; both sides' `p2p history` agree. Needs root (lab.sh up).
. "$(dirname "$0")/lib.sh"
need ip python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-pco$$}
PREFIX=$P2P_LAB_PREFIX
NS_B=${PREFIX}B VETH_B=${PREFIX}vB
SID=e2e-outbox-$$

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# chat_in PROC HOST NAME: a piped JSON group chat; PROC names the run, NAME (and so P2P_HOME) the person.
chat_in() {
  start_proc "$1" env P2P_HOME="$(home "$3")" "$LAB" exec "$2" "$P2P" chat --json --yes --name "$3" --session-id "$SID"
}
history_of() { # history_of HOST NAME ARGS...: `p2p history --json` of NAME into $E2E_TMP/hist-NAME.out
  local host=$1 name=$2; shift 2
  run env P2P_HOME="$(home "$name")" "$LAB" exec "$host" "$P2P" history --json "$@" >"$E2E_TMP/hist-$name.out" 2>"$E2E_TMP/hist-$name.err"
}
# at_least PROC N COND...: PROC printed at least N JSON events matching.
at_least() { local n=$1 min=$2; shift 2; [ "$(count_json "$n" "$@")" -ge "$min" ]; }
# once PROC TEXT: PROC showed the message TEXT exactly once.
once() {
  local n; n=$(count_json "$1" event=message "text=$2")
  check "$1 shows \"$2\" exactly once (got $n)" [ "$n" = 1 ]
}

chat_in alice A alice
chat_in bob B bob
expect_json 20 alice "alice listens" event=listening
expect_json 20 bob "bob listens" event=listening
BOB_ID=$(get_json bob id event=listening)
expect_json 40 alice "alice and bob connect by DNS-SD" event=connected peer=bob
expect_json 40 bob "bob is connected to alice" event=connected peer=alice

send_line alice "before the crash"
expect_json 15 bob "bob gets the first line" event=message from=alice "text=before the crash" message?
expect_json 15 alice "bob acknowledges it (delivered)" event=delivered to=bob id="$BOB_ID"

# ---- kill -9 of bob: alice notices, keeps running, queues, and delivers when bob is back
kill -9 "$(pid_of bob)"
t=$SECONDS
if wait_json 12 alice event=disconnected peer=bob >/dev/null; then
  pass "alice reports bob gone $((SECONDS - t)) s after kill -9"
else
  fail "alice did not report bob gone within 12 s of kill -9" alice
fi
check "alice keeps running" is_running alice
send_line alice "while bob was away 1"
send_line alice "while bob was away 2"
expect_json 10 alice "the first line written while bob is away waits in the outbox" event=queued to=bob
if wait_until 10 at_least alice 2 event=queued; then pass "both lines are queued"; else fail "not both lines queued" alice; fi
history_of A alice --pending
check "alice's history shows 2 lines waiting for bob" [ "$(count_json hist-alice state=waiting peer=bob)" = 2 ]

chat_in bob2 B bob
expect_json 40 bob2 "bob, restarted, reconnects to alice by himself" event=connected peer=alice
expect_json 20 bob2 "bob gets the queued lines" event=message from=alice "text=while bob was away 2"
once bob2 "while bob was away 1"
once bob2 "while bob was away 2"
check "the line bob already had is not shown again" [ "$(count_json bob2 event=message 'text=before the crash')" = 0 ]
order=$(grep -o 'while bob was away [12]' "$(out_of bob2)" | tr '\n' '|')
check "in the order written ($order)" [ "$order" = "while bob was away 1|while bob was away 2|" ]
if wait_until 10 at_least alice 3 event=delivered to=bob; then pass "alice hears both queued lines were delivered"; else fail "no delivery of queued lines at alice" alice; fi
history_of A alice --pending
check "alice's outbox is empty" [ ! -s "$E2E_TMP/hist-alice.out" ]

# ---- the link is cut: both see it within about 10 s, lines written meanwhile (one already in flight
# when the cable went) arrive once after the link is back
ip netns exec "$NS_B" ip link set "$VETH_B" down
t=$SECONDS
send_line alice "in flight when the link went"
if wait_json 16 alice event=disconnected peer=bob >/dev/null; then
  CUT_A=$((SECONDS - t)); pass "alice sees the cut link in $CUT_A s"
else
  fail "alice did not see the cut link within 16 s" alice
fi
if wait_json 16 bob2 event=disconnected peer=alice >/dev/null; then
  pass "bob sees the cut link in $((SECONDS - t)) s"
else
  fail "bob did not see the cut link within 16 s" bob2
fi
send_line alice "during the cut"
send_line bob2 "bob during the cut"
expect_json 10 bob2 "bob's line waits too" event=queued to=alice
ip netns exec "$NS_B" ip link set "$VETH_B" up
t=$SECONDS
if wait_until 60 at_least alice 3 event=connected peer=bob; then
  pass "alice and bob reconnect $((SECONDS - t)) s after the link is back"
else
  fail "no reconnect within 60 s of the link coming back" alice bob2
fi
expect_json 20 bob2 "bob gets the line written during the cut" event=message "text=during the cut"
expect_json 20 alice "alice gets bob's line written during the cut" event=message "text=bob during the cut"
once bob2 "in flight when the link went"
once bob2 "during the cut"
once alice "bob during the cut"

# ---- alice leaves with a line still in her outbox; her next run delivers it
kill -9 "$(pid_of bob2)"
expect_json 12 alice "alice sees bob gone again" event=disconnected peer=bob
send_line alice "kept for next time"
expect_json 10 alice "queued" event=queued to=bob "message?"
close_stdin alice
if wait_exit alice 15; then check "alice exits 0 on EOF with a line waiting (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "alice did not exit after EOF" alice; fi
check "alice said what waits in the outbox on the way out" [ "$(count_json alice event=outbox to=bob count=1)" = 1 ]
chat_in alice2 A alice
expect_json 20 alice2 "alice's next run starts with the line in her outbox" event=outbox to=bob count=1
chat_in bob3 B bob
expect_json 40 bob3 "bob gets the line from alice's earlier run" event=message from=alice "text=kept for next time"
once bob3 "kept for next time"
expect_json 10 alice2 "alice's next run hears it was delivered" event=delivered to=bob

# ---- both histories agree: every line once, nothing waiting
history_of A alice
history_of B bob
for text in "before the crash" "while bob was away 1" "while bob was away 2" "in flight when the link went" "during the cut" "kept for next time"; do
  check "alice's history: \"$text\" sent once and delivered" [ "$(count_json hist-alice direction=sent state=delivered "text=$text")" = 1 ]
  check "bob's history: \"$text\" received once" [ "$(count_json hist-bob direction=received "text=$text")" = 1 ]
done
check "bob's history: his line from the cut delivered" [ "$(count_json hist-bob direction=sent state=delivered 'text=bob during the cut')" = 1 ]
history_of A alice --pending
check "nothing waits in alice's outbox" [ ! -s "$E2E_TMP/hist-alice.out" ]

for p in alice alice2 bob3; do expect_no_json "$p" "$p printed no error events" event=error; done
for p in alice2 bob3; do stop_proc "$p"; done
finish
