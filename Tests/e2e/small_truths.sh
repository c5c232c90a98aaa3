#!/usr/bin/env bash
# Small things a person checks and that must be true (issue 35, item 9): `receive --dir` with a missing
# folder is a setup error (1, with what to do), not a failed transfer (8); `receive --text` says it waits
# for a text, not for files into a folder; `records receive` from a pipe lets a pinned sender in for every
# snapshot instead of refusing (or asking about) it each time. Loopback only; ports and session IDs are
# unique per run.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/transfer_helpers.sh"   # exits
need python3
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

SID=e2e-truths-$$

# ---------------------------------------------------------------- receive --dir: a missing folder
start_proc nodir env P2P_HOME="$(home nodir)" "$P2P" receive --yes --session-id "$SID" --dir "$E2E_TMP/missing"
exits nodir 15 1 "receive --dir with a missing folder is a setup error"
check "it says the folder does not exist and how to make it" \
  grep -qF "cannot write into $E2E_TMP/missing: it does not exist (create it with mkdir -p" "$E2E_TMP/nodir.err"
check "and it did not claim a transfer failed" bash -c '! grep -qi "transfer" "$1"' _ "$E2E_TMP/nodir.err"

# ---------------------------------------------------------------- receive --text: what it waits for
P=$(free_port)
start_proc text env P2P_HOME="$(home text)" "$P2P" receive --text --yes --session-id "$SID" --name "texts-$$" --port "$P"
if wait_until 15 grep -q "Waiting for a text as texts-$$ " "$E2E_TMP/text.err"; then
  pass "receive --text says it waits for a text (on stderr: stdout is for the text)"
else
  fail "receive --text did not say it waits for a text" text
fi
check "receive --text does not say it waits for files into a folder" \
  bash -c '! grep -q "Waiting for files" "$1" "$2"' _ "$E2E_TMP/text.out" "$E2E_TMP/text.err"
stop_proc text

# ---------------------------------------------------------------- records receive: a pinned sender
TASKS=$REPO_ROOT/examples/records/tasks.json
RP=$(free_port)
rreceive() { # rreceive NAME ARGS...: `records receive` from a pipe (no terminal), bob's identity and store
  local name=$1; shift
  start_proc "$name" env P2P_HOME="$(home bob)" "$P2P" records receive --json --name "bob-$$" --session-id "$SID-r" \
    --port "$RP" --store "$E2E_TMP/bob.db" "$@"
  expect_json 20 "$name" "$name listens on $RP" event=listening port="$RP"
}
rsend() { # rsend NAME: alice sends the example tasks to bob's port
  run env P2P_HOME="$(home alice)" "$P2P" records send --json --name "alice-$$" --session-id "$SID-r" \
    --file "$TASKS" --connect "127.0.0.1:$RP" >"$E2E_TMP/$1.out" 2>"$E2E_TMP/$1.err"
}
# A first contact, accepted with --yes: both sides pin each other's key.
rreceive first --yes
rsend send1
expect_json 10 first "a first snapshot is merged (--yes): alice's key is pinned at bob's" event=records-merged
stop_proc first
# From a pipe, without --yes: the pinned sender is let in, snapshot after snapshot.
rreceive pinned
rsend send2; rc2=$?
rsend send3; rc3=$?
check "two more snapshots from the pinned sender are sent (exit $rc2, $rc3)" [ "$rc2$rc3" = 00 ]
if wait_until 10 bash -c '[ "$(grep -c "\"records-merged\"" "$1")" = 2 ]' _ "$E2E_TMP/pinned.out"; then
  pass "records receive merged both without --yes: a pinned sender is not refused or asked again"
else
  fail "records receive did not merge both snapshots of the pinned sender" pinned
fi
expect_no_json pinned "no connection request of the pinned sender was declined" event=error code=denied
# A new key, from a pipe without --yes, is still refused.
run env P2P_HOME="$(home carol)" "$P2P" records send --json --name "carol-$$" --session-id "$SID-r" \
  --file "$TASKS" --connect "127.0.0.1:$RP" >"$E2E_TMP/send4.out" 2>"$E2E_TMP/send4.err"; rc4=$?
check "a new sender is still refused from a pipe (exit $rc4)" [ "$rc4" = 4 ]
stop_proc pinned
finish
