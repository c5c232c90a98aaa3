#!/usr/bin/env bash
# Small things a person checks and that must be true (issue 35, item 9): `receive --dir` with a missing
# folder is a setup error (1, with what to do), not a failed transfer (8); `receive --text` says it waits
# for a text, not for files into a folder; `records receive` from a pipe lets a pinned sender in for every
# snapshot instead of refusing (or asking about) it each time; and what the `--help` texts of chat's
# neighbours say (issue 35 item 8): `history --pending` also lists lines typed in a room while nobody was
# there, `trust remove` of an unknown peer exits 3, `p2p id` makes the key on first use, and the records
# examples of `records --help` run as written. Loopback only; ports and session IDs are unique per run.
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

# ---------------------------------------------------------------- Ctrl-C while a sender looks for its receiver
# send FILE, send - and records send find the receiver on the command's loop: Ctrl-C before anything was
# offered exits 130 with one line saying nothing was sent (README, exit codes).
echo "hello" >"$E2E_TMP/hello.txt"
for kind in file stdin records; do
  case $kind in
    file) args=(send "$E2E_TMP/hello.txt") ;;
    stdin) args=(send - --as hello.txt) ;;
    records) args=(records send --file "$TASKS") ;;
  esac
  start_proc "ctrlc-$kind" env P2P_HOME="$(home "ctrlc-$kind")" "$P2P" "${args[@]}" --to "nobody-$$" --session-id "$SID-c"
  if wait_until 15 grep -q "nobody-$$" "$E2E_TMP/ctrlc-$kind.err"; then
    kill -INT "$(pid_of "ctrlc-$kind")"
    if wait_exit "ctrlc-$kind" 10; then
      check "Ctrl-C while ${args[*]:0:2} looks for its receiver: exit 130 (got $EXIT_RC)" [ "$EXIT_RC" = 130 ]
    else
      fail "${args[*]:0:2} ignored Ctrl-C while looking for its receiver" "ctrlc-$kind"; stop_proc "ctrlc-$kind"
    fi
    check "... and it says nothing was sent" grep -q "p2p: interrupted; nothing was sent" "$E2E_TMP/ctrlc-$kind.err"
  else
    fail "${args[*]:0:2} --to nobody did not say whom it waits for" "ctrlc-$kind"; stop_proc "ctrlc-$kind"
  fi
done

# ---------------------------------------------------------------- what the --help texts say
# history --pending: "in the outbox for a peer, and (without PEER) typed in a room while nobody was there".
start_proc lonely env P2P_HOME="$(home lonely)" "$P2P" chat --room "$SID-lonely" --name "lonely-$$"
send_line lonely "anyone there?"
if wait_until 15 bash -c 'env P2P_HOME="$1" "$2" history --pending 2>&1 | grep -q "whoever joins room $3: anyone there? (waiting)"' _ "$(home lonely)" "$P2P" "$SID-lonely"; then
  pass "history --pending lists a line typed while nobody was in the room, as its help says"
else
  fail "history --pending does not list the line typed while nobody was there" lonely
fi
stop_proc lonely
run env P2P_HOME="$(home lonely)" "$P2P" history --help >"$E2E_TMP/history-help.out" 2>&1
check "history --help says --pending lists those lines too" bash -c 'tr -s " \n" "  " <"$1" | grep -q "typed in a room while nobody was there"' _ "$E2E_TMP/history-help.out"
# trust remove: "Exit codes: 0 removed, 3 no pinned peer matches".
run env P2P_HOME="$(home lonely)" "$P2P" trust remove nobody-pinned-$$ >"$E2E_TMP/trust-rm.out" 2>&1; rc=$?
check "trust remove of a name nobody pinned exits 3 (exit $rc)" [ "$rc" = 3 ]
check "... and says so" grep -q "no pinned peer matches" "$E2E_TMP/trust-rm.out"
run env P2P_HOME="$(home bob)" "$P2P" trust remove "alice-$$" >"$E2E_TMP/trust-rm2.out" 2>&1; rc=$?
check "trust remove of a pinned peer exits 0 and names it (exit $rc)" bash -c '[ "$1" = 0 ] && grep -q "removed alice-$2" "$3"' _ "$rc" "$$" "$E2E_TMP/trust-rm2.out"
# p2p id: "The key is made on first use".
check "a fresh config folder has no key yet" [ ! -e "$(home fresh)/identity.pem" ]
run env P2P_HOME="$(home fresh)" "$P2P" id >"$E2E_TMP/id.out" 2>&1; rc=$?
check "p2p id makes the key on first use and shows where it is kept (exit $rc)" \
  bash -c '[ "$1" = 0 ] && [ -s "$2/identity.pem" ] && grep -q "stored in    $2" "$3"' _ "$rc" "$(home fresh)" "$E2E_TMP/id.out"
# records --help's examples, as written (import into a new store, then show).
(cd "$REPO_ROOT" && run env P2P_HOME="$(home rec)" "$P2P" records import examples/records/tasks.json --store "$E2E_TMP/tasks.db") >"$E2E_TMP/rec-import.out" 2>&1; rc=$?
check "records --help's import example runs (exit $rc)" [ "$rc" = 0 ]
run env P2P_HOME="$(home rec)" "$P2P" records show --store "$E2E_TMP/tasks.db" >"$E2E_TMP/rec-show.out" 2>&1; rc=$?
check "and its show example lists the records (exit $rc)" bash -c '[ "$1" = 0 ] && grep -qE "\([0-9]+ records?\)" "$2"' _ "$rc" "$E2E_TMP/rec-show.out"
finish
