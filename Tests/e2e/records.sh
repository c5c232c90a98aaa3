#!/usr/bin/env bash
# Record snapshots between two hosts (lab namespaces A and B): each example (Tasks, Heroes, Catalog)
# travels from a store in A to a receiver in B and arrives equal (`p2p records export` byte for byte);
# invalid snapshots are rejected with the exact report while the receiver's database file keeps its
# checksum; each merge policy settles the same conflicts as documented; a delta after a change sends
# only the changed record; schema version 2 (Location.address) migrates B's existing store (columns from
# the peer; rules and version only from B's person's import: a peer's snapshot installs none).
# Needs root (lab.sh up).
. "$(dirname "$0")/lib.sh"
need ip python3 sha256sum sqlite3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

EXAMPLES=$REPO_ROOT/examples/records
DATA=$E2E_DIR/records
ADDR_B=10.213.7.2
A_HOME=$(home alice)
STORES=$E2E_TMP/stores
mkdir -p "$STORES"

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# in_A ARGS...: p2p in host A with alice's identity (a stable peer ID, so deltas are remembered per peer).
in_A() { run env P2P_HOME="$A_HOME" "$LAB" exec A "$P2P" "$@"; }
# in_B NAME ARGS...: a command of B's person, with receiver NAME's home.
in_B() { local name=$1; shift; run env P2P_HOME="$(home "$name")" "$LAB" exec B "$P2P" "$@"; }
# receiver NAME PORT STORE ARGS...: `p2p records receive` in host B.
receiver() {
  local name=$1 port=$2 store=$3; shift 3
  start_proc "$name" env P2P_HOME="$(home "$name")" "$LAB" exec B "$P2P" records receive --json --yes --name "$name" --port "$port" --store "$store" "$@"
  expect_json 20 "$name" "$name listens on $port" event=listening port="$port"
}
# send NAME ARGS...: `p2p records send --json` from A; output in NAME.out, status in SEND_RC.
SEND_RC=
send() {
  local name=$1; shift
  in_A records send --json "$@" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err"; SEND_RC=$?
}
# nth_json NAME N COND...: the Nth (1-based) JSON line of NAME's stdout matching every COND.
nth_json() {
  local name=$1 n=$2; shift 2
  "$PYTHON" - "$E2E_DIR" "$E2E_TMP/$name.out" "$n" "$@" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import jsonl
hits = [o for _, o in jsonl.objects(sys.argv[2]) if all(jsonl.matches(o, c) for c in sys.argv[4:])]
n = int(sys.argv[3])
if len(hits) < n:
    sys.exit(1)
print(json.dumps(hits[n - 1], ensure_ascii=False))
EOF
}
# field JSON KEY: one field of a JSON object, as JSON.
field() { "$PYTHON" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]).get(sys.argv[2]), ensure_ascii=False, sort_keys=True))' "$1" "$2"; }
# json_has JSON COND...: the object matches every COND (as in jsonl.py).
json_has() {
  "$PYTHON" - "$E2E_DIR" "$@" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import jsonl
o = json.loads(sys.argv[2])
sys.exit(not all(jsonl.matches(o, c) for c in sys.argv[3:]))
EOF
}
same_json() { "$PYTHON" -c 'import json,sys; sys.exit(json.loads(sys.argv[1]) != json.loads(sys.argv[2]))' "$1" "$2"; }
export_of() { run "$P2P" records export --store "$1"; }
checksum() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------- each example arrives equal
declare -A PORT=([tasks]=$(free_port B) [heroes]=$(free_port B) [catalog]=$(free_port B))
for ex in tasks heroes catalog; do
  # A peer's snapshot installs no rules (RECORDS.md §8): B's person imports the schema, rules included.
  if in_B "bob-$ex" records import "$EXAMPLES/$ex.schema.json" --store "$STORES/B-$ex.sqlite" --json >"$E2E_TMP/import-B-$ex.out" 2>&1; then
    pass "$ex: B's person imported the schema (its rules) into B's store"
  else
    fail "$ex: importing the schema into B's store failed" "$E2E_TMP/import-B-$ex.out"
  fi
  receiver "bob-$ex" "${PORT[$ex]}" "$STORES/B-$ex.sqlite"
  if in_A records import "$EXAMPLES/$ex.json" --store "$STORES/A-$ex.sqlite" --json >"$E2E_TMP/import-$ex.out" 2>&1; then
    pass "$ex: imported into A's store"
  else
    fail "$ex: import into A's store failed" "$E2E_TMP/import-$ex.out"
  fi
done
BOB_TASKS_ID=$(get_json bob-tasks id event=listening)

# Tasks goes by name (DNS-SD), the others to an address.
send sent-tasks --store "$STORES/A-tasks.sqlite" --to bob-tasks --timeout 30
check "tasks: sent to bob-tasks found by DNS-SD, exit 0 (got $SEND_RC)" [ "$SEND_RC" = 0 ]
for ex in heroes catalog; do
  send "sent-$ex" --store "$STORES/A-$ex.sqlite" --connect "$ADDR_B:${PORT[$ex]}"
  check "$ex: sent to $ADDR_B:${PORT[$ex]}, exit 0 (got $SEND_RC)" [ "$SEND_RC" = 0 ]
done
declare -A COUNT=([tasks]=5 [heroes]=5 [catalog]=6)
for ex in tasks heroes catalog; do
  expect_json 15 "bob-$ex" "$ex: B merged ${COUNT[$ex]} records" event=records-merged inserted="${COUNT[$ex]}" updated=0 unchanged=0 conflicts=0 records="${COUNT[$ex]}"
  expect_json 1 "sent-$ex" "$ex: A heard merged with the counts" event=records-sent status=merged inserted="${COUNT[$ex]}" records="${COUNT[$ex]}" delta=false
  export_of "$STORES/A-$ex.sqlite" >"$E2E_TMP/A-$ex.export" 2>&1
  export_of "$STORES/B-$ex.sqlite" >"$E2E_TMP/B-$ex.export" 2>&1
  if cmp -s "$E2E_TMP/A-$ex.export" "$E2E_TMP/B-$ex.export" && [ -s "$E2E_TMP/A-$ex.export" ]; then
    pass "$ex: B's store exports exactly what A's does ($(wc -c <"$E2E_TMP/A-$ex.export") bytes)"
  else
    fail "$ex: exports differ" ; diff "$E2E_TMP/A-$ex.export" "$E2E_TMP/B-$ex.export" | head -20
  fi
done
no_transient() { "$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1]))["records"]; sys.exit(any(k in x.get("values", {}) for x in r for k in sys.argv[2:]))' "$@"; }
check "the transient isOverdue (tasks.json has it) never reached B" no_transient "$E2E_TMP/B-tasks.export" isOverdue
check "the transient age (heroes.json has it) never reached B" no_transient "$E2E_TMP/B-heroes.export" age

# ---------------------------------------------------------------- invalid snapshots
# reject RECEIVER FILE DESC EXPECTED-ERRORS: A sends FILE as is; B refuses it with exactly these errors
# and its database file keeps its checksum.
reject() {
  local rx=$1 file=$2 desc=$3 expected=$4 store before after n event
  store=$STORES/B-${rx#bob-}.sqlite
  before=$(checksum "$store")
  n=$(( $(count_json "$rx" event=records-rejected) + 1 ))
  send rejected --file "$DATA/$file" --connect "$ADDR_B:${PORT[${rx#bob-}]}"
  check "$desc: sender exits 9 (got $SEND_RC)" [ "$SEND_RC" = 9 ]
  if wait_until 10 nth_json "$rx" "$n" event=records-rejected >/dev/null; then
    event=$(nth_json "$rx" "$n" event=records-rejected)
    if same_json "$(field "$event" errors)" "$expected"; then pass "$desc: B's report is exactly $expected"
    else fail "$desc: B reported $(field "$event" errors), expected $expected"; fi
  else
    fail "$desc: B printed no records-rejected" "$rx"
  fi
  event=$(get_json rejected errors event=records-sent status=rejected)
  if same_json "$event" "$expected"; then pass "$desc: A got the same report back"; else fail "$desc: A got $event" rejected; fi
  after=$(checksum "$store")
  check "$desc: B's database file is byte-for-byte unchanged (sha256 ${before:0:12}…)" [ "$before" = "$after" ]
  check "$desc: no journal left behind" [ ! -e "$store-journal" ]
}
reject bob-tasks bad-priority.json "priority 7" \
  '[{"entity":"Task","record":"t-urgent","attribute":"priority","rule":"max","value":"7","message":"7 is above the maximum 3"}]'
reject bob-tasks bad-dangling.json "dangling relationship" \
  '[{"entity":"Task","record":"t-lost","attribute":"location","rule":"relationship-target","value":"\"atlantis\"","message":"Location atlantis is neither in the snapshot nor in the store"}]'
reject bob-tasks bad-type.json "wrong type" \
  '[{"entity":"Task","record":"t-typed","attribute":"priority","rule":"type","value":"\"high\"","message":"expected integer16, got string"}]'
reject bob-heroes bad-hero-name.json "empty hero name" \
  '[{"entity":"Hero","record":"h-empty","attribute":"name","rule":"minLength","value":"\"\"","message":"is 0 characters long, shorter than 1"}]'
reject bob-heroes bad-birthdate.json "future birthdate" \
  '[{"entity":"Hero","record":"h-future","attribute":"birthdate","rule":"birthdate-not-in-future","value":"2999-01-01T00:00:00.000Z","message":"birthdate must not be after now"}]'
export_of "$STORES/B-tasks.sqlite" >"$E2E_TMP/B-tasks.after-rejections" 2>&1
check "after the rejections B's tasks still export exactly A's" cmp -s "$E2E_TMP/A-tasks.export" "$E2E_TMP/B-tasks.after-rejections"

# ---------------------------------------------------------------- merge policies
# conflicts.json: milk and report as a third writer (origin c0ffee…) changed them apart from A, whose
# versions B holds: milk newer than B's (theirs wins under LWW), report older (mine wins), bread new.
# (The same records from A itself would be A's own later or older versions: updates, not conflicts.)
policy() {
  local pol=$1 rc_expect=$2 name=pol-$1 store=$STORES/B-policy-$1.sqlite port
  cp "$STORES/B-tasks.sqlite" "$store"
  port=$(free_port B)
  receiver "$name" "$port" "$store" --policy "$pol" --once
  send "sent-$name" --file "$DATA/conflicts.json" --connect "$ADDR_B:$port"
  check "$pol: sender exits $rc_expect (got $SEND_RC)" [ "$SEND_RC" = "$rc_expect" ]
  if wait_exit "$name" 15; then check "$pol: receiver --once exits $rc_expect (got $EXIT_RC)" [ "$EXIT_RC" = "$rc_expect" ]
  else fail "$pol: receiver did not exit after one snapshot" "$name"; fi
}
policy last-writer-wins 0
expect_json 1 pol-last-writer-wins "last-writer-wins: 1 inserted, 1 updated, 1 unchanged, 2 conflicts" event=records-merged inserted=1 updated=1 unchanged=1 conflicts=2
ev=$(get_json pol-last-writer-wins conflicted event=records-merged)
check "last-writer-wins: milk (newer) theirs, report (older) mine: $ev" same_json "$ev" '[{"entity":"Task","id":"milk","kept":"theirs"},{"entity":"Task","id":"report","kept":"mine"}]'
policy keep-mine 0
expect_json 1 pol-keep-mine "keep-mine: 1 inserted, 0 updated, 2 unchanged, 2 conflicts" event=records-merged inserted=1 updated=0 unchanged=2 conflicts=2
policy take-theirs 0
expect_json 1 pol-take-theirs "take-theirs: 1 inserted, 2 updated, 0 unchanged, 2 conflicts" event=records-merged inserted=1 updated=2 unchanged=0 conflicts=2
run "$P2P" records show --store "$STORES/B-policy-take-theirs.sqlite" --entity Task --json >"$E2E_TMP/show.out" 2>&1
check "take-theirs: B's report task now holds A's older text" grep -q '"text":"An older report"' "$E2E_TMP/show.out"
before=$(checksum "$STORES/B-tasks.sqlite")
policy fail-on-conflict 9
ev=$(get_json pol-fail-on-conflict errors event=records-rejected)
check "fail-on-conflict: rejected naming milk and report ($ev)" "$PYTHON" -c 'import json,sys; e=json.loads(sys.argv[1]); sys.exit([(x["record"], x["rule"]) for x in e] != [("milk","conflict"),("report","conflict")])' "$ev"
check "fail-on-conflict: the store copy is unchanged" [ "$(checksum "$STORES/B-policy-fail-on-conflict.sqlite")" = "$before" ]

# ---------------------------------------------------------------- a snapshot that failed (not rejected)
# A raw peer sends a records channel (CHANNEL purpose 4) whose END digest does not match: RESULT
# verified 0 and no OUTCOME; `--once` exits with the failure code 8, not 9 (rejected: something the
# sender could fix).
port=$(free_port B)
cp "$STORES/B-tasks.sqlite" "$STORES/B-corrupt.sqlite"
receiver corrupt "$port" "$STORES/B-corrupt.sqlite" --once
report=$(run "$LAB" exec A "$PYTHON" "$E2E_DIR/raw_peer.py" "$ADDR_B" "$port" records-corrupt --session records)
echo "$report" >"$E2E_TMP/raw-records.json"
check "a corrupt snapshot is answered with RESULT not verified, and no OUTCOME ($(field "$report" records))" \
  "$PYTHON" -c 'import json,sys; r=json.loads(sys.argv[1])["records"]; sys.exit(not (r and r[0]["reply"] == "ACCEPT" and r[0]["verified"] is False and r[0]["outcome"] is None))' "$report"
if wait_exit corrupt 15; then check "receiver --once exits 8 (failed) for a corrupt snapshot, not 9 (got $EXIT_RC)" [ "$EXIT_RC" = 8 ]
else fail "the receiver did not exit after the corrupt snapshot" corrupt; fi
check "B's person reads why: the SHA-256 did not match" grep -q "SHA-256 of the received bytes does not match" "$E2E_TMP/corrupt.out" "$E2E_TMP/corrupt.err"

# ---------------------------------------------------------------- an older p2p (RECORDS frames, before record channels)
# Its OFFER (RECORDS 0x40) is denied in its own layout, naming both versions; the receiver goes on.
port=$(free_port B)
cp "$STORES/B-tasks.sqlite" "$STORES/B-older.sqlite"
receiver older "$port" "$STORES/B-older.sqlite"
report=$(run "$LAB" exec A "$PYTHON" "$E2E_DIR/raw_peer.py" "$ADDR_B" "$port" older-records --session records --peer-name oldalice)
echo "$report" >"$E2E_TMP/raw-older.json"
check "an older p2p's RECORDS OFFER gets a DENY in a RECORDS frame ($(field "$report" records))" \
  "$PYTHON" -c 'import json,sys; r=json.loads(sys.argv[1])["records"]; sys.exit(not (r and r[0]["type"] == "RECORDS" and r[0]["reply"] == "DENY"))' "$report"
check "the DENY names both versions and which side to update" \
  "$PYTHON" -c 'import json,sys; m=json.loads(sys.argv[1])["records"][0]["reason"] or ""; sys.exit(not ("wire version 1 with record channels, capability bit 9" in m and "wire version 1 with RECORDS frames" in m and "update p2p on the sending side" in m))' "$report"
check "the receiver still runs" is_running older
stop_proc older 2>/dev/null || true

# And the other way: `p2p records send` to an older p2p (its HELLO lacks capability bit 9) sends nothing
# and says why, naming the peer, its address and its version.
port=$(free_port B)
start_bg oldbob "$LAB" exec B "$PYTHON" "$E2E_DIR/raw_peer.py" "$ADDR_B" "$port" older-records-listen --caps 181 --peer-name oldbob --session records --timeout 30
if wait_for "$E2E_TMP/oldbob.err" "listening on" 15; then
  send to-older --file "$DATA/conflicts.json" --connect "$ADDR_B:$port"
  check "records send to an older p2p exits 1 (got $SEND_RC)" [ "$SEND_RC" = 1 ]
  if line=$(nth_json to-older 1 event=error code=send "message~oldbob ($ADDR_B:$port) runs an older p2p (wire version 1 with RECORDS frames, without record channels, capability bit 9); update p2p there"); then
    pass "the sender reads who, where and which version: $line"
  else
    fail "no error naming the older peer, its address and version" to-older
  fi
  wait_exit oldbob 20 >/dev/null || true
  out=$(cat "$E2E_TMP/oldbob.out")
  log "oldbob: $out"
  check "the older p2p got no CHANNEL or RECORDS frame, only the goodbye ($(field "$out" received))" \
    "$PYTHON" -c 'import json,sys; r=json.loads(sys.argv[1])["received"]; sys.exit(not ("HELLO" in r and "CHANNEL" not in r and "RECORDS" not in r))' "$out"
else
  fail "the older p2p (raw_peer.py) did not listen" oldbob
fi

# ---------------------------------------------------------------- delta
# The README's own example of a change.
in_A records import "$EXAMPLES/tasks-change.json" --store "$STORES/A-tasks.sqlite" --json >"$E2E_TMP/change.out" 2>&1
expect_json 1 change "A changed one of its own tasks (plants): an update, not a conflict" event=records-merged updated=1 conflicts=0
n=$(( $(count_json bob-tasks event=records-merged) + 1 ))
send delta --store "$STORES/A-tasks.sqlite" --since-last --connect "$ADDR_B:${PORT[tasks]}"
check "delta: exit 0 (got $SEND_RC)" [ "$SEND_RC" = 0 ]
expect_json 1 delta "delta: A sent 1 record (of 5), marked as a delta" event=records-sent status=merged records=1 delta=true updated=1
if wait_until 10 nth_json bob-tasks "$n" event=records-merged >/dev/null; then
  ev=$(nth_json bob-tasks "$n" event=records-merged)
  check "delta: B merged exactly 1 record, updated ($ev)" json_has "$ev" records=1 updated=1 inserted=0 delta=true
else
  fail "delta: B did not merge" bob-tasks
fi
send delta2 --store "$STORES/A-tasks.sqlite" --since-last --connect "$ADDR_B:${PORT[tasks]}"
expect_json 1 delta2 "delta again without a change: 0 records" event=records-sent status=merged records=0 delta=true
export_of "$STORES/A-tasks.sqlite" >"$E2E_TMP/A-tasks.delta" 2>&1
export_of "$STORES/B-tasks.sqlite" >"$E2E_TMP/B-tasks.delta" 2>&1
check "delta: B exports exactly A's again" cmp -s "$E2E_TMP/A-tasks.delta" "$E2E_TMP/B-tasks.delta"

# ---------------------------------------------------------------- schema version 2 migrates B's store
in_A records import "$EXAMPLES/tasks-v2.json" --store "$STORES/A-tasks.sqlite" --json >"$E2E_TMP/v2.out" 2>&1
expect_json 1 v2 "A's store migrates to v2 (Location.address)" event=records-merged 'migrations~added attribute Location.address'
n=$(( $(count_json bob-tasks event=records-merged) + 1 ))
send v2send --store "$STORES/A-tasks.sqlite" --since-last --connect "$ADDR_B:${PORT[tasks]}"
check "v2: exit 0 (got $SEND_RC)" [ "$SEND_RC" = 0 ]
if wait_until 10 nth_json bob-tasks "$n" event=records-merged >/dev/null; then
  ev=$(nth_json bob-tasks "$n" event=records-merged)
  check "v2: B migrated its existing store ($ev)" json_has "$ev" "migrations~added attribute Location.address" updated=1
else
  fail "v2: B did not merge" bob-tasks
fi
# The peer's schema added the column, not its wording: B's schema stays version 1 until B's person
# imports version 2 (RECORDS.md §8).
export_of "$STORES/B-tasks.sqlite" >"$E2E_TMP/B-tasks.v2-peer" 2>&1
check "v2: B has the address, its schema still version 1 (a peer's version is not adopted)" \
  bash -c 'grep -q "1 Infinite Loop" "$1" && grep -q "\"version\" : 1" "$1"' _ "$E2E_TMP/B-tasks.v2-peer"
in_B bob-tasks records import "$EXAMPLES/tasks-v2.schema.json" --store "$STORES/B-tasks.sqlite" --json >"$E2E_TMP/import-B-v2.out" 2>&1 \
  || fail "v2: B's person could not import tasks-v2.schema.json" "$E2E_TMP/import-B-v2.out"
export_of "$STORES/A-tasks.sqlite" >"$E2E_TMP/A-tasks.v2" 2>&1
export_of "$STORES/B-tasks.sqlite" >"$E2E_TMP/B-tasks.v2" 2>&1
check "v2: B exports exactly A's, address included" bash -c 'cmp -s "$1" "$2" && grep -q "1 Infinite Loop" "$2" && grep -q "\"version\" : 2" "$2"' _ "$E2E_TMP/A-tasks.v2" "$E2E_TMP/B-tasks.v2"
check "v2: B's table has the new column" bash -c 'sqlite3 "$1" "PRAGMA table_info(Location)" | grep -q "|address|TEXT|"' _ "$STORES/B-tasks.sqlite"

# ---------------------------------------------------------------- clean end
for ex in tasks heroes catalog; do
  expect_no_json "bob-$ex" "bob-$ex printed no error events" event=error
  stop_proc "bob-$ex"
done
run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1
check "lab down leaves no namespace" bash -c '! ip netns list | grep -qE "^${P2P_LAB_PREFIX:-p2p}(A|B)( |$)"'
finish
