#!/usr/bin/env bash
# Security of p2p connections, end to end on loopback:
#  - a chat over TLS shows nothing of its text, names or session on the wire (tcpdump), while the same
#    chat with --insecure on both sides does (so the check can fail);
#  - a plaintext (--insecure) client is refused by a TLS peer, and a TLS client by an --insecure one;
#  - `p2p pair` pins both keys with the right code, nothing with a wrong one, and never takes the code
#    as an argument; Ctrl-C while the code is shown or while the peer is looked for exits 130, pins nothing;
#  - trust on first use pins a peer's key; another installation with the same name is refused with a
#    warning, until `p2p trust remove NAME`.
#  - a name is never taken at face value for a key pinned under another name (issue 21, identity): a
#    pinned key using another pinned name is refused and named by its pinned name; under a new name it
#    is shown as `NEW (pinned as "OLD")`; `--from` and `--to` go by the pinned name; an `--insecure` peer
#    is "unauthenticated" on every line and never pinned; a piped room without --yes dials no new key,
#    and one with --yes shows the NEW key fingerprint; forged room announcements are dialled at most 6
#    at a time, one at a time once 8 dials failed, reported once (issue 34: bounds on cost, not scale).
# Each P2P_HOME is fresh, the session ID is unique per run (chats of other tests on the shared loopback
# avahi are never dialled), servers wait --to a peer that does not exist so they dial nobody, and
# clients use --connect 127.0.0.1:PORT. Needs root for tcpdump.
. "$(dirname "$0")/lib.sh"
need python3 tcpdump
[ "$(id -u)" = 0 ] || { fail "must run as root (tcpdump)"; finish; }
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$-$RANDOM
SID=e2e-sec-$TAG
MARK="tell-no-one-$TAG"
SCAN="$E2E_DIR/pcap_scan.py"

# server NAME HOME PORT [ARGS...]: a JSON chat that accepts everyone and dials no one.
server() {
  local name=$1 h=$2 port=$3; shift 3
  start_proc "$name" env P2P_HOME="$h" "$P2P" chat --json --yes --name "$name-$TAG" --port "$port" --session-id "$SID" \
    --to "nobody-$TAG" --timeout 600 "$@"
}
# client NAME HOME PORT [ARGS...]: a JSON chat that connects to 127.0.0.1:PORT.
client() {
  local name=$1 h=$2 port=$3; shift 3
  start_proc "$name" env P2P_HOME="$h" "$P2P" chat --json --yes --name "$name-$TAG" --connect "127.0.0.1:$port" --session-id "$SID" "$@"
}
# leave NAME: EOF on NAME's stdin; it must exit 0.
leave() {
  close_stdin "$1"
  if wait_exit "$1" 15; then check "$1 exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "$1 did not exit after EOF" "$1"; fi
}
# scan NAME PORT NEEDLE...: pcap_scan.py's report of NAME's capture; `field REPORT KEY...` reads it.
scan() { local f=$E2E_TMP/$1.pcap port=$2; shift 2; run "$PYTHON" "$SCAN" "$f" "$port" "$@"; }
field() { "$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1]); [v := v[k] for k in sys.argv[2:]]; print(v)' "$@" 2>/dev/null || echo "?"; }

# capture NAME PORT: tcpdump on lo for TCP port PORT into $E2E_TMP/NAME.pcap, once it is listening.
capture() {
  start_bg "$1" tcpdump -i lo --immediate-mode -U -Z root -w "$E2E_TMP/$1.pcap" "tcp port $2"
  if wait_for "$E2E_TMP/$1.err" "listening on" 10; then pass "tcpdump ($1) listens on lo for tcp port $2"; else fail "tcpdump ($1) did not start" "$1"; fi
}
# stop_capture NAME PORT: once the capture shows every connection closed (tcpdump may not have written
# the last packets yet), SIGINT by PID, so tcpdump flushes and exits.
captured_closed() { [ "$(field "$(scan "$1" "$2")" closed)" = True ]; }
stop_capture() {
  wait_until 10 captured_closed "$1" "$2" || log "capture $1 does not show the connection closed within 10 s"
  sleep 0.3
  kill -INT "$(pid_of "$1")" 2>/dev/null
  if wait_exit "$1" 10; then pass "tcpdump ($1) stopped on SIGINT"; else fail "tcpdump ($1) ignored SIGINT" "$1"; stop_proc "$1"; fi
}

# chat_both_ways SERVER CLIENT: each sends a line with the marker, the other receives it.
chat_both_ways() {
  local s=$1 c=$2
  expect_json 20 "$c" "$c connects to $s" event=connected peer="$s-$TAG"
  expect_json 20 "$s" "$s reports $c connected" event=connected peer="$c-$TAG"
  send_line "$c" "$MARK from $c"
  expect_json 10 "$s" "$s receives $c's marker line" event=message from="$c-$TAG" text="$MARK from $c"
  send_line "$s" "$MARK from $s"
  expect_json 10 "$c" "$c receives $s's marker line" event=message from="$s-$TAG" text="$MARK from $s"
}

# ================================================================ 1. nothing readable on the wire
log "capture: TLS chat"
P=$(free_port)
capture tlscap "$P"
server alice "$(home alice)" "$P"
expect_json 20 alice "alice listens on $P" event=listening port="$P"
client bob "$(home bob)" "$P"
chat_both_ways alice bob
expect_json 1 alice "TLS chat: alice sees bob's key fingerprint (trust new)" event=connected peer="bob-$TAG" trust=new fingerprint?
leave bob
expect_json 10 alice "alice reports bob left" event=disconnected peer="bob-$TAG"
stop_capture tlscap "$P"
out=$(scan tlscap "$P" "$MARK" "alice-$TAG" "bob-$TAG" "$SID"); log "TLS capture: $out"
n=$(field "$out" packets)
if [ "$n" != "?" ] && [ "$n" -gt 10 ] && [ "$(field "$out" payload_bytes)" -gt 1000 ]; then
  pass "TLS capture is not empty ($n packets, $(field "$out" payload_bytes) payload bytes)"
else
  fail "TLS capture is (nearly) empty: $out"
fi
check "TLS capture holds the whole connection (FIN both ways)" [ "$(field "$out" closed)" = True ]
check "TLS capture: one connection, both ways TLS records only (starts $(field "$out" to_server))" \
  [ "$(field "$out" connections)" = 1 -a "$(field "$out" tls_records)" = True ]
check "TLS capture: the marker \"$MARK\" does NOT appear" [ "$(field "$out" found "$MARK")" = False ]
check "TLS capture: the display names do NOT appear" \
  [ "$(field "$out" found "alice-$TAG")" = False -a "$(field "$out" found "bob-$TAG")" = False ]
check "TLS capture: the session ID does NOT appear" [ "$(field "$out" found "$SID")" = False ]
check "TLS capture file: grep -a finds no marker" bash -c '! grep -aqF -- "$1" "$2"' _ "$MARK" "$E2E_TMP/tlscap.pcap"

# ---- a plaintext client is refused by the TLS chat (still running), which stays up
client mallory "$(home mallory)" "$P" --insecure
if wait_exit mallory 20; then
  check "--insecure client to a TLS chat exits 4 (got $EXIT_RC)" [ "$EXIT_RC" = 4 ]
else
  fail "--insecure client to a TLS chat still running after 20 s" mallory
fi
expect_json 1 mallory "--insecure client: error event says TLS is required" event=error message~TLS
check "--insecure client was warned on stderr that it is insecure" grep -q "WARNING: --insecure" "$E2E_TMP/mallory.err"
expect_no_json mallory "--insecure client never connected" event=connected
check "TLS chat is still running after the plaintext client" is_running alice
expect_no_json alice "TLS chat never reported the plaintext client connected" event=connected peer="mallory-$TAG"
# ... and still serves a real peer afterwards
client carol "$(home carol)" "$P"
expect_json 20 carol "a TLS peer still connects after the refusal" event=connected peer="alice-$TAG"
leave carol
leave alice

# ---- control: the same chat with --insecure on both sides is readable on the wire
log "capture: --insecure chat (control)"
P=$(free_port)
capture plaincap "$P"
server ialice "$(home ialice)" "$P" --insecure
expect_json 20 ialice "ialice listens on $P" event=listening port="$P"
client ibob "$(home ibob)" "$P" --insecure
chat_both_ways ialice ibob
leave ibob
stop_capture plaincap "$P"
out=$(scan plaincap "$P" "$MARK" "ialice-$TAG" "ibob-$TAG" "$SID"); log "--insecure capture: $out"
check "--insecure capture is not empty ($(field "$out" packets) packets)" [ "$(field "$out" packets)" -gt 5 ]
check "--insecure capture: the marker \"$MARK\" DOES appear (the check can fail)" [ "$(field "$out" found "$MARK")" = True ]
check "--insecure capture: the display names and the session ID DO appear" [ "$(field "$out" found "ialice-$TAG")" = True -a "$(field "$out" found "ibob-$TAG")" = True -a "$(field "$out" found "$SID")" = True ]
check "--insecure capture file: grep -a finds ibob's line" grep -aqF -- "$MARK from ibob" "$E2E_TMP/plaincap.pcap"
check "--insecure capture file: grep -a finds ialice's line" grep -aqF -- "$MARK from ialice" "$E2E_TMP/plaincap.pcap"
check "--insecure capture: not TLS records" [ "$(field "$out" tls_records)" = False ]

# ---- no silent downgrade: a TLS client refuses (is refused by) an --insecure chat
client trent "$(home trent)" "$P"
if wait_exit trent 20; then
  check "TLS client to an --insecure chat exits 4 (got $EXIT_RC)" [ "$EXIT_RC" = 4 ]
else
  fail "TLS client to an --insecure chat still running after 20 s" trent
fi
expect_json 1 trent "TLS client to an --insecure chat: error event" event=error
expect_no_json trent "TLS client never connected to the --insecure chat" event=connected
expect_no_json ialice "--insecure chat never reported the TLS client connected" event=connected peer="trent-$TAG"
check "--insecure chat still running" is_running ialice
leave ialice

# ================================================================ 2. pairing
log "pairing"
PA=$(home pa) PB=$(home pb)
A_ID=$(run env P2P_HOME="$PA" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
B_ID=$(run env P2P_HOME="$PB" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "p2p id --json gives 32-hex-digit IDs ($A_ID, $B_ID)" bash -c '[[ $1 =~ ^[0-9a-f]{32}$ && $2 =~ ^[0-9a-f]{32}$ && $1 != $2 ]]' _ "$A_ID" "$B_ID"
check "p2p pair --help says the code comes from P2P_PAIR_CODE" bash -c '"$1" pair --help | grep -q P2P_PAIR_CODE' _ "$P2P"
run "$P2P" pair --code 1234-5678 --connect 127.0.0.1:9 >/dev/null 2>&1; rc=$?
check "p2p pair has no option taking the code in argv (--code is a usage error, exit $rc)" [ "$rc" = 64 ]

# trusts HOME: the `p2p trust list --json` lines of HOME (into $E2E_TMP/trust.out).
trusts() { run env P2P_HOME="$1" "$P2P" trust list --json >"$E2E_TMP/trust.out" 2>"$E2E_TMP/trust.err"; }
# pair_typing CODE HOME NAME PORT: the typing side, the code in its environment only; status in PAIR_RC.
pair_typing() {
  ( _close_fifos; export P2P_PAIR_CODE=$1 P2P_HOME=$2; exec "$P2P" pair --name "$3" --connect "127.0.0.1:$4" --session-id "$SID" --timeout 20 ) \
    >"$E2E_TMP/typing.out" 2>"$E2E_TMP/typing.err"
  PAIR_RC=$?
}

P=$(free_port)
start_proc shower env P2P_HOME="$PA" "$P2P" pair --name "pa-$TAG" --port "$P" --session-id "$SID" --timeout 60
if wait_for "$(out_of shower)" 'Pairing code: .*[0-9]{4}-[0-9]{4}' 20; then
  CODE=$(grep -oE '[0-9]{4}-[0-9]{4}' "$(out_of shower)" | head -n 1)
  pass "p2p pair shows a code ($CODE)"
else
  fail "p2p pair showed no code" shower; finish
fi
WRONG=$( "$PYTHON" -c 'import sys; c=sys.argv[1]; print(str((int(c[0]) + 1) % 10) + c[1:])' "$CODE")

# ---- a wrong code first: B fails (5), A says so and keeps waiting, nobody pins anything
pair_typing "$WRONG" "$PB" "pb-$TAG" "$P"
check "wrong code: the typing side exits 5 (got $PAIR_RC)" [ "$PAIR_RC" = 5 ]
check "wrong code: the typing side says pairing failed" grep -qi "pairing failed" "$E2E_TMP/typing.err"
if wait_for "$E2E_TMP/shower.err" "pb-$TAG.*pairing failed|pairing failed.*pb-$TAG" 10; then
  pass "wrong code: the showing side reports the failed attempt by pb-$TAG"
else
  fail "wrong code: the showing side did not report the failure" shower
fi
check "wrong code: the showing side keeps waiting (3 attempts)" is_running shower
trusts "$PA"; check "wrong code: A's trust list is still empty" [ ! -s "$E2E_TMP/trust.out" ]
trusts "$PB"; check "wrong code: B's trust list is still empty" [ ! -s "$E2E_TMP/trust.out" ]

# ---- then the right code on the same A
pair_typing "$CODE" "$PB" "pb-$TAG" "$P"
if [ "$PAIR_RC" = 0 ]; then pass "right code: the typing side exits 0"; else fail "right code: the typing side exits $PAIR_RC" "$E2E_TMP/typing.err"; fi
check "right code: the typing side says it paired with pa-$TAG" grep -q "Paired with pa-$TAG" "$E2E_TMP/typing.out"
if wait_exit shower 15; then check "right code: the showing side exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "right code: the showing side did not exit" shower; fi
check "right code: the showing side says it paired with pb-$TAG" grep -q "Paired with pb-$TAG" "$(out_of shower)"
trusts "$PA"
check "A's trust list: exactly one peer" [ "$(count_json trust event!=x)" = 1 ]
check "A's trust list: pb-$TAG with B's ID $B_ID, method paired" [ "$(count_json trust name="pb-$TAG" id="$B_ID" method=paired)" = 1 ]
trusts "$PB"
check "B's trust list: exactly one peer" [ "$(count_json trust event!=x)" = 1 ]
check "B's trust list: pa-$TAG with A's ID $A_ID, method paired" [ "$(count_json trust name="pa-$TAG" id="$A_ID" method=paired)" = 1 ]

# ---- a chat between the paired installations says so
P=$(free_port)
start_proc pa env P2P_HOME="$PA" "$P2P" chat --json --yes --name "pa-$TAG" --port "$P" --session-id "$SID" --to "nobody-$TAG" --timeout 600
expect_json 20 pa "paired A listens" event=listening port="$P"
start_proc pb env P2P_HOME="$PB" "$P2P" chat --json --yes --name "pb-$TAG" --connect "127.0.0.1:$P" --session-id "$SID"
expect_json 20 pb "chat after pairing: B sees A as paired" event=connected peer="pa-$TAG" id="$A_ID" trust=paired
expect_json 20 pa "chat after pairing: A sees B as paired" event=connected peer="pb-$TAG" id="$B_ID" trust=paired
leave pb
leave pa

# ---- pairing by DNS-SD name (`--to`), not only by address
PC=$(home pair-c) PD=$(home pair-d)
start_proc showerc env P2P_HOME="$PC" "$P2P" pair --name "pc-$TAG" --session-id "$SID" --timeout 60
if wait_for "$(out_of showerc)" 'Pairing code: .*[0-9]{4}-[0-9]{4}' 20; then
  CODE_C=$(grep -oE '[0-9]{4}-[0-9]{4}' "$(out_of showerc)" | head -n 1)
  ( _close_fifos; export P2P_PAIR_CODE=$CODE_C P2P_HOME=$PD; exec "$P2P" pair --name "pd-$TAG" --to "pc-$TAG" --session-id "$SID" --timeout 20 ) \
    >"$E2E_TMP/typing-to.out" 2>"$E2E_TMP/typing-to.err"
  rc=$?
  check "pairing by name (--to): the typing side exits 0 (got $rc)" [ "$rc" = 0 ]
  check "pairing by name: the typing side paired with pc-$TAG" grep -q "Paired with pc-$TAG" "$E2E_TMP/typing-to.out"
  if wait_exit showerc 10; then check "pairing by name: the showing side exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "showing side still running" showerc; stop_proc showerc; fi
else
  fail "p2p pair (for --to) showed no code" showerc
fi

# ---- Ctrl-C at any step: exit 130, one line saying nothing was paired, nothing pinned
PE=$(home pair-e)
start_proc showere env P2P_HOME="$PE" "$P2P" pair --name "pe-$TAG" --session-id "$SID" --timeout 60
if wait_for "$(out_of showere)" 'Pairing code: ' 20; then
  kill -INT "$(pid_of showere)"
  if wait_exit showere 10; then check "Ctrl-C while the code is shown: exit 130 (got $EXIT_RC)" [ "$EXIT_RC" = 130 ]
  else fail "the showing side ignored Ctrl-C" showere; stop_proc showere; fi
  check "Ctrl-C while the code is shown: it says nothing was paired" grep -q "p2p: interrupted; nothing was paired" "$E2E_TMP/showere.err"
else
  fail "p2p pair (to interrupt) showed no code" showere; stop_proc showere
fi
# The typing side, while it waits for a peer nobody runs (the search runs on the command's loop).
start_proc typinge env P2P_PAIR_CODE=1234-5678 P2P_HOME="$PE" "$P2P" pair --name "pe-$TAG" --to "nobody-$TAG" --session-id "$SID" --timeout 60
if wait_for "$E2E_TMP/typinge.err" "waiting for a peer named nobody-$TAG" 20; then
  kill -INT "$(pid_of typinge)"
  if wait_exit typinge 10; then check "Ctrl-C while looking for the peer: exit 130 (got $EXIT_RC)" [ "$EXIT_RC" = 130 ]
  else fail "the typing side ignored Ctrl-C" typinge; stop_proc typinge; fi
  check "Ctrl-C while looking for the peer: it says nothing was paired" grep -q "p2p: interrupted; nothing was paired" "$E2E_TMP/typinge.err"
else
  fail "p2p pair --to nobody did not say it waits for the peer" typinge; stop_proc typinge
fi
trusts "$PE"; check "after Ctrl-C: the trust list is empty" [ ! -s "$E2E_TMP/trust.out" ]

# ================================================================ 3. pinning (trust on first use)
log "pinning"
HA=$(home tofu-a) HB=$(home tofu-b) HC=$(home tofu-c) HD=$(home tofu-d)
NAME=twin-$TAG
P=$(free_port)
start_proc a env P2P_HOME="$HA" "$P2P" chat --json --yes --name "a-$TAG" --port "$P" --session-id "$SID" --to "nobody-$TAG" --timeout 600
expect_json 20 a "A listens" event=listening port="$P"
# visit NAME HOME PROC: one chat to A under --name NAME that says hello and leaves (status in EXIT_RC).
visit() {
  start_proc "$3" env P2P_HOME="$2" "$P2P" chat --json --yes --name "$1" --connect "127.0.0.1:$P" --session-id "$SID"
  send_line "$3" "hello from $3"
  close_stdin "$3"
  wait_exit "$3" 20 || { fail "$3 still running after 20 s" "$3"; stop_proc "$3"; }
}
visit "$NAME" "$HB" b1
B_ID=$(get_json b1 id event=listening)
check "B's first visit exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]
expect_json 10 a "first contact: A's connected event for B has trust new" event=connected peer="$NAME" id="$B_ID" trust=new
expect_json 10 a "A receives B's line" event=message from="$NAME" text="hello from b1"
visit "$NAME" "$HB" b2
check "B's second visit exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]
expect_json 10 a "second contact: A's connected event for B has trust pinned" event=connected peer="$NAME" id="$B_ID" trust=pinned
trusts "$HA"
check "A pinned B's key under $NAME (first-use)" [ "$(count_json trust name="$NAME" id="$B_ID" method=first-use)" = 1 ]

# ---- another installation under the same name is refused, loudly
visit "$NAME" "$HC" c1
C_ID=$(get_json c1 id event=listening)
check "newcomer with B's name but another key: exits 4 (got $EXIT_RC)" [ "$EXIT_RC" = 4 ]
expect_json 1 c1 "newcomer: error event says it was refused" event=error message~refused
expect_json 1 c1 "newcomer: ... because the name is pinned to another key" event=error "message~pinned to another key"
expect_no_json c1 "newcomer never connected" event=connected
check "A is still running" is_running a
expect_no_json a "A never reported the newcomer connected" event=connected id="$C_ID"
expect_no_json a "A never delivered the newcomer's line" event=message text="hello from c1"
expect_json 5 a "A shows a loud warning: an error event naming $NAME" event=error message~"$NAME"
trusts "$HA"
check "A's pin for $NAME is still B's key" [ "$(count_json trust name="$NAME" id="$B_ID")" = 1 -a "$(count_json trust id="$C_ID")" = 0 ]

# ---- after `p2p trust remove NAME` on A (A keeps running), the newcomer gets in
out=$(run env P2P_HOME="$HA" "$P2P" trust remove "$NAME" 2>&1); rc=$?
check "p2p trust remove $NAME exits 0 (got $rc: $out)" [ "$rc" = 0 ]
trusts "$HA"
check "A's trust list no longer has $NAME" [ "$(count_json trust name="$NAME")" = 0 ]
visit "$NAME" "$HC" c2
if [ "$EXIT_RC" = 0 ]; then pass "newcomer after trust remove: exits 0"; else fail "newcomer after trust remove: exits $EXIT_RC" c2; fi
expect_json 10 a "newcomer after trust remove: A's connected event has trust new" event=connected peer="$NAME" id="$C_ID" trust=new
# A pins someone else afterwards; that must not bring the removed pin back
visit "d-$TAG" "$HD" d1
expect_json 10 a "another peer connects to A (A pins it)" event=connected peer="d-$TAG" trust=new
trusts "$HA"
check "A's trust list has the new peer" [ "$(count_json trust name="d-$TAG")" = 1 ]
if [ "$(count_json trust id="$B_ID")" = 0 ]; then pass "A's trust list does not have B's removed key again"; else fail "A's trust list has B's removed key again" "$E2E_TMP/trust.out"; fi
leave a

# ---- the same after a restart of A: trust remove, then the newcomer is new to the restarted A
out=$(run env P2P_HOME="$HA" "$P2P" trust remove "$NAME" 2>&1); log "A stopped; trust remove $NAME: $out"
start_proc a2 env P2P_HOME="$HA" "$P2P" chat --json --yes --name "a-$TAG" --port "$P" --session-id "$SID" --to "nobody-$TAG" --timeout 600
expect_json 20 a2 "A restarted" event=listening port="$P"
visit "$NAME" "$HC" c3
if [ "$EXIT_RC" = 0 ]; then pass "restarted A, pin removed: the newcomer connects and exits 0"; else fail "restarted A, pin removed: newcomer exits $EXIT_RC" c3; fi
expect_json 10 a2 "restarted A, pin removed: A's connected event for the newcomer has trust new" event=connected peer="$NAME" id="$C_ID" trust=new
trusts "$HA"
check "A now pins $NAME to the newcomer's key" [ "$(count_json trust name="$NAME" id="$C_ID")" = 1 -a "$(count_json trust id="$B_ID")" = 0 ]
leave a2


# ================================================================ 4. names and keys (a name is not an identity)
log "names and keys"
HN=$(home names-n) HK1=$(home names-k1) HK2=$(home names-k2) HX=$(home names-x)
ALICE=alice-$TAG BOB=bob-$TAG CAROL=carol-$TAG
P=$(free_port)
# N: a chat for a person (not JSON: what a person reads), accepting everyone, dialling no one.
start_proc n env P2P_HOME="$HN" "$P2P" chat --yes --name "n-$TAG" --port "$P" --session-id "$SID" --to "nobody-$TAG" --timeout 600
if wait_for "$E2E_TMP/n.out" "You are n-$TAG" 20; then pass "N listens"; else fail "N did not start" n; fi
visit "$ALICE" "$HK1" k1a
K1_ID=$(get_json k1a id event=listening)
visit "$BOB" "$HK2" k2b
K2_ID=$(get_json k2b id event=listening)
trusts "$HN"
check "N pinned key 1 as $ALICE and key 2 as $BOB" [ "$(count_json trust name="$ALICE" id="$K1_ID")" = 1 -a "$(count_json trust name="$BOB" id="$K2_ID")" = 1 ]

# ---- key 1 (pinned as alice) calls itself bob (pinned to key 2): refused, and named by its pinned name
visit "$BOB" "$HK1" k1b
check "key 1 calling itself $BOB is refused: exits 4 (got $EXIT_RC)" [ "$EXIT_RC" = 4 ]
expect_json 1 k1b "key 1 as $BOB hears its name is pinned to another key" event=error "message~pinned to another key"
if wait_for "$E2E_TMP/n.err" "REFUSED $ALICE \(calls itself \"$BOB\", pinned to another key\)" 5; then
  pass "N says: REFUSED $ALICE (calls itself \"$BOB\", pinned to another key)"
else fail "N did not name the refused key by its pinned name" n; fi
if grep -q "hello from k1b" "$E2E_TMP/n.out"; then fail "N showed the line of key 1 posing as $BOB" n; else pass "N never showed a line from key 1 posing as $BOB"; fi
check "N shows no '$BOB connected' for key 1 (only key 2's first visit)" [ "$(grep -c "$BOB connected" "$E2E_TMP/n.out")" = 1 ]

# ---- key 1 under a new, unpinned name: accepted as the pinned key, never shown under the bare new name
visit "$CAROL" "$HK1" k1c
check "key 1 as $CAROL connects and exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]
if wait_for "$E2E_TMP/n.out" "$CAROL \(pinned as \"$ALICE\"\) connected — key [a-z0-9-]+, pinned at first contact as \"$ALICE\"" 5; then
  pass "N: $CAROL (pinned as \"$ALICE\") connected — key …, pinned at first contact as \"$ALICE\""
else fail "N did not show key 1's new name with its pinned name" n; fi
if wait_for "$E2E_TMP/n.out" "\] $CAROL \(pinned as \"$ALICE\"\)> hello from k1c" 5; then pass "N shows its line as '$CAROL (pinned as \"$ALICE\")> …'"; else fail "N's line from key 1 as $CAROL" n; fi
if grep -qE "\] $CAROL> |^\* $CAROL connected" "$E2E_TMP/n.out"; then fail "N showed $CAROL at face value" n; else pass "N never showed '$CAROL' at face value"; fi
trusts "$HN"
check "the pin is unchanged: $ALICE is key 1, nothing is pinned as $CAROL" [ "$(count_json trust name="$ALICE" id="$K1_ID")" = 1 -a "$(count_json trust name="$CAROL")" = 0 ]
leave n

# ---- --from goes by the pinned name: key 1 as carol is not "carol" to `p2p receive --from carol`
echo "from key 1" >"$E2E_TMP/from.txt"
mkdir -p "$E2E_TMP/inbox-from"
PR=$(free_port)
start_proc rcv env P2P_HOME="$HN" "$P2P" receive --from "$CAROL" --once --dir "$E2E_TMP/inbox-from" --name "n-$TAG" --port "$PR" --session-id "$SID"
wait_until 20 bash -c "ss -ltn | grep -q ':$PR '" || fail "receive --from $CAROL did not listen" rcv
out=$(run env P2P_HOME="$HK1" "$P2P" send "$E2E_TMP/from.txt" --name "$CAROL" --connect "127.0.0.1:$PR" --session-id "$SID" 2>&1); rc=$?
check "receive --from $CAROL declines key 1 calling itself $CAROL: send exits 6 (got $rc: $out)" [ "$rc" = 6 ]
if wait_for "$E2E_TMP/rcv.out" "^\* $CAROL \(pinned as \"$ALICE\"\) \([a-z0-9-]+\) connected" 5; then
  pass "receive: '$CAROL (pinned as \"$ALICE\") (…) connected'"
else fail "receive's connected line" rcv; fi
if wait_for "$E2E_TMP/rcv.err" "declined from.txt from $CAROL \(pinned as \"$ALICE\"\); use --yes, or --from $ALICE" 5; then
  pass "receive says whom it declined and that --from $ALICE would take it"
else fail "receive's decline line" rcv; fi
check "nothing arrived" [ ! -e "$E2E_TMP/inbox-from/from.txt" ]
stop_proc rcv
start_proc rcv2 env P2P_HOME="$HN" "$P2P" receive --from "$ALICE" --once --dir "$E2E_TMP/inbox-from" --name "n-$TAG" --port "$PR" --session-id "$SID"
wait_until 20 bash -c "ss -ltn | grep -q ':$PR '" || fail "receive --from $ALICE did not listen" rcv2
out=$(run env P2P_HOME="$HK1" "$P2P" send "$E2E_TMP/from.txt" --name "$CAROL" --connect "127.0.0.1:$PR" --session-id "$SID" 2>&1); rc=$?
check "receive --from $ALICE takes key 1 whatever it calls itself: send exits 0 (got $rc: $out)" [ "$rc" = 0 ]
check "the file arrived" cmp -s "$E2E_TMP/from.txt" "$E2E_TMP/inbox-from/from.txt"
if wait_exit rcv2 15; then check "receive --once exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "receive --once still running" rcv2; stop_proc rcv2; fi

# ---- a prefix authorizes nothing (issue 34): a stranger whose fingerprint starts with what was typed
HS=$(home stranger)
SFP=$(run env P2P_HOME="$HS" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
SHORT=${SFP:0:4}
mkdir -p "$E2E_TMP/inbox-prefix"
echo "from a stranger" >"$E2E_TMP/prefix.txt"
start_proc rcvp env P2P_HOME="$HN" "$P2P" receive --from "$SHORT" --once --dir "$E2E_TMP/inbox-prefix" --name "n-$TAG" --port "$PR" --session-id "$SID"
wait_until 20 bash -c "ss -ltn | grep -q ':$PR '" || fail "receive --from $SHORT did not listen" rcvp
out=$(run env P2P_HOME="$HS" "$P2P" send "$E2E_TMP/prefix.txt" --name "s-$TAG" --connect "127.0.0.1:$PR" --session-id "$SID" 2>&1); rc=$?
check "receive --from $SHORT (the first 4 characters of the stranger's fingerprint) declines it: send exits 6 (got $rc: $out)" [ "$rc" = 6 ]
check "nothing arrived from the stranger" [ ! -e "$E2E_TMP/inbox-prefix/prefix.txt" ]
trusts "$HN"
check "the stranger was not pinned" [ "$(count_json trust name="s-$TAG")" = 0 ]
stop_proc rcvp
start_proc rcvf env P2P_HOME="$HN" "$P2P" receive --from "$SFP" --once --dir "$E2E_TMP/inbox-prefix" --name "n-$TAG" --port "$PR" --session-id "$SID"
wait_until 20 bash -c "ss -ltn | grep -q ':$PR '" || fail "receive --from FINGERPRINT did not listen" rcvf
out=$(run env P2P_HOME="$HS" "$P2P" send "$E2E_TMP/prefix.txt" --name "s-$TAG" --connect "127.0.0.1:$PR" --session-id "$SID" 2>&1); rc=$?
check "receive --from the full fingerprint takes it: send exits 0 (got $rc: $out)" [ "$rc" = 0 ]
if wait_exit rcvf 15; then check "receive --once exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "receive --once still running" rcvf; stop_proc rcvf; fi
# `--to` by a short prefix never picks (and pins) a key that is not pinned: refused, exit 4, with what to do.
HS2=$(home stranger2)
S2FP=$(run env P2P_HOME="$HS2" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
mkdir -p "$E2E_TMP/inbox-prefix2"
start_proc rcvs env P2P_HOME="$HS2" "$P2P" receive --yes --once --dir "$E2E_TMP/inbox-prefix2" --name "s2-$TAG" --session-id "$SID"
wait_for "$E2E_TMP/rcvs.out" "s2-$TAG" 20 || true
out=$(run env P2P_HOME="$HN" "$P2P" send "$E2E_TMP/prefix.txt" --to "${S2FP:0:4}" --timeout 10 --name "n-$TAG" --session-id "$SID" 2>&1); rc=$?
check "send --to ${S2FP:0:4} (a stranger's key) exits 4 (got $rc: $out)" [ "$rc" = 4 ]
check "and says to give the full fingerprint or pin it first" grep -q "give its full fingerprint (--to $S2FP)" <<<"$out"
check "nothing was sent to the stranger" [ ! -e "$E2E_TMP/inbox-prefix2/prefix.txt" ]
trusts "$HN"
check "the stranger behind --to was not pinned" [ "$(count_json trust name="s2-$TAG")" = 0 ]
stop_proc rcvs

# ---- --to goes by the pinned name too (found by mDNS): key 1 announced as carol is "alice" to N
mkdir -p "$E2E_TMP/inbox-to"
start_proc k1r env P2P_HOME="$HK1" "$P2P" receive --yes --once --dir "$E2E_TMP/inbox-to" --name "$CAROL" --session-id "$SID"
out=$(run env P2P_HOME="$HN" "$P2P" send "$E2E_TMP/from.txt" --to "$CAROL" --timeout 4 --name "n-$TAG" --session-id "$SID" 2>&1); rc=$?
check "send --to $CAROL does not reach key 1 (pinned as $ALICE) announced as $CAROL: exits 3 (got $rc: $out)" [ "$rc" = 3 ]
check "... and lists it as seen under both names" grep -q "seen: .*$CAROL (pinned as \"$ALICE\")" <<<"$out"
out=$(run env P2P_HOME="$HN" "$P2P" send "$E2E_TMP/from.txt" --to "$ALICE" --timeout 20 --name "n-$TAG" --session-id "$SID" 2>&1); rc=$?
check "send --to $ALICE reaches key 1 announced as $CAROL: exits 0 (got $rc: $out)" [ "$rc" = 0 ]
check "and the file arrived" cmp -s "$E2E_TMP/from.txt" "$E2E_TMP/inbox-to/from.txt"
if wait_exit k1r 15; then pass "key 1's receive --once exits"; else stop_proc k1r; fi

# ---- --insecure: unauthenticated on every line, never "now pinned", nothing pinned
PI=$(free_port)
start_proc ins env P2P_HOME="$HX" "$P2P" chat --insecure --yes --name "x-$TAG" --port "$PI" --session-id "$SID" --to "nobody-$TAG" --timeout 600
if wait_for "$E2E_TMP/ins.out" "You are x-$TAG" 20; then pass "an --insecure chat listens"; else fail "--insecure chat did not start" ins; fi
start_proc ivis env P2P_HOME="$HK2" "$P2P" chat --json --insecure --yes --name "$BOB" --connect "127.0.0.1:$PI" --session-id "$SID"
send_line ivis "hello in plaintext"
close_stdin ivis
if wait_exit ivis 20; then check "the --insecure visitor exits 0 (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "--insecure visitor still running" ivis; stop_proc ivis; fi
expect_json 1 ivis "the visitor's connected event says trust unauthenticated" event=connected peer="x-$TAG" trust=unauthenticated
if wait_for "$E2E_TMP/ins.out" "^\* $BOB \(unauthenticated: --insecure\) connected — unauthenticated: --insecure" 5; then
  pass "the --insecure chat: '$BOB (unauthenticated: --insecure) connected — unauthenticated: --insecure …'"
else fail "the --insecure chat's connected line" ins; fi
if wait_for "$E2E_TMP/ins.out" "\] $BOB \(unauthenticated: --insecure\)> hello in plaintext" 5; then pass "its line is marked unauthenticated too"; else fail "the --insecure chat's message line" ins; fi
if wait_for "$E2E_TMP/ins.out" "^\* $BOB \(unauthenticated: --insecure\) left" 5; then pass "and so is its leaving"; else fail "the --insecure chat's left line" ins; fi
if grep -q "now pinned" "$E2E_TMP/ins.out"; then fail "the --insecure chat said 'now pinned'" ins; else pass "the --insecure chat never says 'now pinned'"; fi
trusts "$HX"
check "the --insecure chat pinned nothing" [ "$(count_json trust)" = 0 ]
leave ins

# ---- rooms: a piped chat without --yes dials no new key; with --yes it shows the NEW key fingerprint
ROOM=room-$TAG
RL=$(home room-1) RH=$(home room-2)
# Of each pair the names decide who dials (PROTOCOL.md §2.2): the other's name is picked so that RL's
# room is the one that would dial.
HIGH=""
for n in $(seq 1 64); do if name_dials "low-$TAG" "high$n-$TAG"; then HIGH="high$n-$TAG"; break; fi; done
check "a name that low-$TAG's room dials ($HIGH)" [ -n "$HIGH" ]
start_proc rhigh env P2P_HOME="$RH" "$P2P" chat --json --yes --name "$HIGH" --room "$ROOM"
expect_json 20 rhigh "the other room chat listens" event=listening
start_proc rlow env P2P_HOME="$RL" "$P2P" chat --json --name "low-$TAG" --room "$ROOM"
expect_json 20 rlow "a piped room chat without --yes sees a new key and says it does not dial it" event=warning code=new-key "message~$HIGH"
sleep 3  # nothing to wait for: this is the absence of a dial; give a dial the time it would take
expect_no_json rlow "... and it never connected the new key" event=connected
expect_no_json rhigh "... nor did the other side see it connect" event=connected
trusts "$RL"
check "the piped room pinned nothing" [ "$(count_json trust)" = 0 ]
close_stdin rlow; wait_exit rlow 15 || stop_proc rlow
# The same room with --yes, for a person: it dials, and the NEW key fingerprint is on screen.
FP2=$(run env P2P_HOME="$RH" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
start_proc rlow2 env P2P_HOME="$RL" "$P2P" chat --yes --name "low-$TAG" --room "$ROOM"
if wait_for "$E2E_TMP/rlow2.out" "^\* $HIGH connected — NEW key $FP2, now pinned" 20; then
  pass "the room's dial shows '$HIGH connected — NEW key $FP2, now pinned'"
else fail "the room's dial did not show the NEW key fingerprint" rlow2; fi
close_stdin rlow2; wait_exit rlow2 15 || stop_proc rlow2
close_stdin rhigh; wait_exit rhigh 15 || stop_proc rhigh

# ---- forged room announcements: at most 6 dials at a time, one at a time once 8 failed, reported once
FLOOD=flood-$TAG
FP=$(free_port)
# A listener that takes every TCP connection and says nothing: each dial waits out its handshake
# timeout, so the number open at once is the number of dials under way.
start_bg sink "$PYTHON" -u -c '
import selectors, socket, sys, time
port = int(sys.argv[1]); sel = selectors.DefaultSelector(); socks = []
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port)); s.listen(512); sel.register(s, selectors.EVENT_READ, "listen")
print("listening", flush=True); open_now = 0; peak = 0; total = 0
while True:
    for key, _ in sel.select():
        if key.data == "listen":
            c, _ = key.fileobj.accept(); sel.register(c, selectors.EVENT_READ, "conn")
            open_now += 1; total += 1; peak = max(peak, open_now)
        else:
            if not key.fileobj.recv(65536):
                sel.unregister(key.fileobj); key.fileobj.close(); open_now -= 1
        print("open=%d peak=%d total=%d closed=%d" % (open_now, peak, total, total - open_now), flush=True)
' "$FP"
wait_for "$E2E_TMP/sink.out" "listening" 10 || fail "the sink did not listen" sink
for i in $(seq 1 30); do
  start_bg "forged$i" avahi-publish -s "forged-$TAG-$i" _p2p._tcp "$FP" txtvers=1 pv=1 "id=ff$(head -c 15 /dev/urandom | od -An -tx1 | tr -d ' \n')" "sid=$FLOOD"
done
HF=$(home flood)
FID=$(run env P2P_HOME="$HF" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
case $FID in ff*) log "the flooded chat's ID starts with ff: a forged ID may be lower and not dialled (fewer dials)";; esac
start_proc flooded env P2P_HOME="$HF" "$P2P" chat --json --yes --name "flooded-$TAG" --room "$FLOOD"
expect_json 30 flooded "30 forged announcements: the room reports the dial limit" event=warning code=dial-limit
# Let dials come and go for three handshake timeouts (10 s each): two waves of 6 fail, then the room
# dials new keys one at a time (8 failures in a row), so a 14th dial comes after the 13th ended.
wait_until 45 bash -c "grep -q 'total=14 ' '$E2E_TMP/sink.out'" || log "fewer than 14 dials within 45 s: $(tail -n 1 "$E2E_TMP/sink.out")"
PEAK=$(tail -n 1 "$E2E_TMP/sink.out" | sed -E 's/.*peak=([0-9]+).*/\1/')
TOTAL=$(tail -n 1 "$E2E_TMP/sink.out" | sed -E 's/.*total=([0-9]+).*/\1/')
# Once 12 dials had failed, at most one forged connection was open at any moment.
SLOWED=$("$PYTHON" -c '
import re, sys
peak = 0
for line in open(sys.argv[1]):
    m = re.search(r"open=(\d+) .*closed=(\d+)", line)
    if m and int(m.group(2)) >= 12: peak = max(peak, int(m.group(1)))
print(peak)' "$E2E_TMP/sink.out")
check "forged peers were dialled at most 6 at a time (peak $PEAK open, $TOTAL dials)" [ "${PEAK:-99}" -ge 1 -a "${PEAK:-99}" -le 6 ]
check "after 12 failed dials, one forged dial at a time (peak $SLOWED open)" [ "${SLOWED:-99}" -le 1 ]
check "at most 16 forged dials in 45 s (got $TOTAL)" [ "${TOTAL:-99}" -le 16 ]
check "the dial limit was reported once (got $(count_json flooded event=warning code=dial-limit))" [ "$(count_json flooded event=warning code=dial-limit)" = 1 ]
check "the flooded chat is still running" is_running flooded
close_stdin flooded
if wait_exit flooded 20; then check "the flooded chat exits 0 on EOF (got $EXIT_RC)" [ "$EXIT_RC" = 0 ]; else fail "flooded chat did not exit" flooded; stop_proc flooded; fi
for i in $(seq 1 30); do stop_proc "forged$i"; done
stop_proc sink

finish
