#!/usr/bin/env bash
# Load: 32 chat peers in one full mesh on loopback (`p2p bench mesh`: 32 sessions in one process,
# each advertising through the loopback avahi-daemon and dialing every peer it discovers; 496
# TLS connections). A burst of 10,000 chat messages from one peer and a round where all 32 send;
# every receiver counts each message by ID. Asserted from the JSON report: the mesh formed, every
# message reached each of the 31 other peers exactly once (nothing missing, nothing doubled, nothing
# foreign), and memory per connection was measured. A second, small run sends one message twice on
# purpose and must be caught (so the exactly-once check can fail).
# With a release binary (P2P_BIN=.build-release/release/p2p) the burst is the full 10,000. With the
# debug build it is 2,000 (and 50 per peer): debug code on two loaded cores is slow enough that a
# 10,000-message burst to 31 peers starved the event loops past the 9 s heartbeat timeout in some runs.
. "$(dirname "$0")/lib.sh"
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

PEERS=${MESH_PEERS:-32}
case $P2P in
  */release/*) BURST=${MESH_BURST:-10000} PER_PEER=${MESH_PER_PEER:-300} ;;
  *) BURST=${MESH_BURST:-2000} PER_PEER=${MESH_PER_PEER:-50} ;;
esac
OTHERS=$((PEERS - 1))

# jq-free field access on the single JSON object the bench prints.
field() { "$PYTHON" -c 'import json,sys; v=json.load(open(sys.argv[1])); [v:=v[k] for k in sys.argv[2].split(".")]; print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1" "$2"; }

log "mesh of $PEERS peers over DNS-SD, burst $BURST, $PER_PEER each"
start_bg mesh env P2P_HOME="$(home mesh)" "$P2P" bench mesh --json --peers "$PEERS" --burst "$BURST" --per-peer "$PER_PEER" \
  --formation-timeout 300 --delivery-timeout 240 --join-interval 250
if wait_exit mesh 700; then
  check "bench mesh exits 0 (exactly once everywhere; got $EXIT_RC)" [ "$EXIT_RC" = 0 ]
else
  fail "bench mesh did not finish within 700 s" mesh
fi
R=$E2E_TMP/mesh.out
if "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$R" 2>/dev/null; then
  pass "bench mesh printed one JSON report"
  check "the mesh has $((PEERS * OTHERS / 2)) connections" [ "$(field "$R" connections)" = $((PEERS * OTHERS / 2)) ]
  check "peers found each other over DNS-SD" [ "$(field "$R" discovery)" = mdns ]
  log "formation: $(field "$R" formation); memory per connection: RSS $(field "$R" memory.rssPerConnection) B, RssAnon $(field "$R" memory.anonPerConnection) B"
  for phase in burst everyone; do
    sent=$(field "$R" "$phase.messages")
    want=$((sent * OTHERS))
    [ "$phase" = burst ] && check "burst: $BURST messages sent" [ "$sent" = "$BURST" ]
    [ "$phase" = everyone ] && check "everyone: $((PEERS * PER_PEER)) messages sent" [ "$sent" = $((PEERS * PER_PEER)) ]
    check "$phase: $want deliveries (each message to all $OTHERS others; got $(field "$R" "$phase.deliveries"))" [ "$(field "$R" "$phase.deliveries")" = "$want" ]
    check "$phase: none missing" [ "$(field "$R" "$phase.missing")" = 0 ]
    check "$phase: no duplicates" [ "$(field "$R" "$phase.duplicates")" = 0 ]
    check "$phase: no foreign or misattributed messages" [ "$(field "$R" "$phase.strays")$(field "$R" "$phase.misattributed")" = 00 ]
    check "$phase: no send errors" [ "$(field "$R" "$phase.sendErrors")" = "[]" ]
    [ "$phase" = everyone ] && check "no link ended after the mesh formed" [ "$(field "$R" disconnectsAfterFormed)" = "{}" ]
    log "$phase: $(field "$R" "$phase.seconds") s, $(field "$R" "$phase.deliveriesPerSec") deliveries/s, peak RSS growth $(field "$R" "$phase.peakRSSGrowthBytes") B"
  done
  check "memory per connection measured (RssAnon > 0)" [ "$(field "$R" memory.anonPerConnection)" -gt 0 ]
else
  fail "bench mesh printed no JSON report" mesh
fi

# The check itself: a message sent twice must be reported as a duplicate and fail the run.
start_bg dup env P2P_HOME="$(home dup)" "$P2P" bench mesh --json --peers 4 --burst 50 --per-peer 5 --discovery direct --inject-duplicate
if wait_exit dup 120; then
  check "a doubled message fails the run (exit 1, got $EXIT_RC)" [ "$EXIT_RC" = 1 ]
  D=$E2E_TMP/dup.out
  check "the doubled message is counted once at each of the 3 receivers (duplicates = 3)" [ "$(field "$D" burst.duplicates 2>/dev/null)" = 3 ]
  check "and nothing is reported missing" [ "$(field "$D" burst.missing 2>/dev/null)" = 0 ]
else
  fail "the duplicate check did not finish within 120 s" dup
fi
finish
