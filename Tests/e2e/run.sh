#!/usr/bin/env bash
# Runs the end-to-end tests in order and prints the total: "N passed, N failed".
# usage: Tests/e2e/run.sh [TEST...]   (names without .sh; default: all of them)
# Needs root (lab namespaces, tcpdump), the packages scripts/setup.sh installs, and a built binary (.build/debug/p2p, or P2P_BIN).
# Each test starts (and stops) what it needs: the lab, or the loopback avahi-daemon if none runs.
# Folders: each test works in /tmp/p2p-e2e-NAME.XXXXXX, removed when it passes; a failed test's stays
# for reading (its logs, *.out *.err *.log, the last 256 KiB of each; files over 1 MiB otherwise
# removed; E2E_KEEP=1 keeps every folder whole). Before the tests this script bounds what stays: folders
# not changed for E2E_KEEP_HOURS (default 24) hours go, and of those older than an hour only the newest
# E2E_KEEP_LAST (default 10) stay (Tests/e2e/kept_folders.sh).
set -uo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/kept_folders.sh"
e2e_prune_kept
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(two_namespaces_chat network lanes terminal chat_terminal chat_refused room_stranger room_older names name_collision transfer_terminal transfer_cancel transfer_progress chat_outbox interop_avahi scripts_safety quick_start bad_input malformed hostile hostile_files chat_older hostile_window security game small_truths records transfer tree stream faults mesh localsend browser examples)

OUT=$(mktemp /tmp/p2p-e2e-run.XXXXXX)
trap 'rm -f "$OUT"' EXIT
passed=0 failed=0 results=()
for t in "${TESTS[@]}"; do
  echo "===== $t"
  start=$SECONDS
  bash "$DIR/$t.sh" 2>&1 | tee "$OUT"
  rc=${PIPESTATUS[0]}
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$OUT" | tail -n 1)
  if [ -n "$summary" ]; then
    read -r p _ f _ <<<"$summary"
  else
    p=0 f=0
  fi
  # A script that died before its summary, or failed without saying so, counts as one failure.
  if [ -z "$summary" ] || { [ "$rc" != 0 ] && [ "$f" = 0 ]; }; then f=$((f + 1)); fi
  passed=$((passed + p)) failed=$((failed + f))
  results+=("$(printf '%-22s %3d passed, %d failed, exit %d, %ds' "$t" "$p" "$f" "$rc" $((SECONDS - start)))")
done
echo "===== summary"
printf '%s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
