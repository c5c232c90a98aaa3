#!/usr/bin/env bash
# A stranger in the default room (issue 34, row 3): a device advertises room `chat` with a key nobody
# here pinned (`p2p chat --yes --json` in lab host B). The person's chat (a real terminal in lab host A)
# is the side that dials (by the room's name rule, PROTOCOL.md §2.2, "victim" dials "trudy"): on main it
# dialled and pinned the stranger without a word, and every line typed went to it. Now it asks first
# ("trudy is in room "chat" — NEW key …
# Connect? [y/n]"); after a no, the stranger is not dialled, nothing is pinned, and a line typed in the
# room reaches nobody (held for whoever joins). A second chat that answers yes connects, as a room should.
# Needs root (lab.sh up) and tmux.
. "$(dirname "$0")/lib.sh"
need ip tmux python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2prs$$}
. "$(dirname "$0")/tmux_lab.sh"

# Two identities: whichever has the lower ID, the names decide that the victim's room dials.
for who in p1 p2; do run env P2P_HOME="$(home "$who")" "$P2P" id --json >"$E2E_TMP/id-$who.json" 2>&1; done
idof() { "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$E2E_TMP/id-$1.json"; }
ID1=$(idof p1) ID2=$(idof p2)
VICTIM=p1 STRANGER=p2
check "by the name rule the victim dials the stranger" name_dials victim trudy

start_proc trudy env P2P_HOME="$(home "$STRANGER")" "$LAB" exec B "$P2P" chat --yes --json --name trudy
expect_json 20 trudy "the stranger advertises the default room" event=listening

open_terminal victim "$VICTIM" A 110 30 "$P2P" chat --name victim
see 30 victim 'trudy is in room "chat" — NEW key [a-z0-9]{4}(-[a-z0-9]{4}){5}, pinned if you connect .*Connect\? \[y/n\]' \
  "the side that dials asks about the stranger's new key before dialling it"
unseen victim 'trudy connected' "nothing was connected before the answer"
tm send-keys -t victim n
see 5 victim 'Connect\? no' "the victim says no"
type_line victim "my secret line"
see 5 victim 'nobody is here yet' "the line is held for whoever joins: nobody is in the room"
# Give a dial the time it would take (the stranger announced itself long ago; nothing else to wait for).
sleep 3
expect_no_json trudy "the stranger never received the victim's line" event=message
expect_no_json trudy "the stranger was never connected" event=connected
check "the stranger's output holds no trace of the line" bash -c '! grep -q "my secret line" "$1"' _ "$E2E_TMP/trudy.out"
if run env P2P_HOME="$(home "$VICTIM")" "$P2P" trust list --json >"$E2E_TMP/trust.out" 2>&1 && ! grep -q "$( [ "$STRANGER" = p1 ] && echo "$ID1" || echo "$ID2")" "$E2E_TMP/trust.out"; then
  pass "the stranger's key was not pinned"
else
  fail "the stranger's key was pinned (or trust list failed)" "$E2E_TMP/trust.out"
fi
check "the victim was asked once (got $(count_on victim 'trudy is in room'))" [ "$(count_on victim 'trudy is in room')" = 1 ]
type_line victim "/quit"
see 10 victim '\[exited 0\]' "the victim's chat ends with 0"

# The same question answered yes: the room dials, shows the NEW key, and the held line goes out.
tm kill-session -t victim
open_terminal victim2 "$VICTIM" A 110 30 "$P2P" chat --name victim
see 30 victim2 'trudy is in room "chat" — NEW key .* Connect\? \[y/n\]' "a new run asks again"
tm send-keys -t victim2 y
see 20 victim2 'trudy connected — NEW key [a-z0-9]{4}(-[a-z0-9]{4}){5}, now pinned' "after a yes the room dials and pins the key it showed"
expect_json 20 trudy "and then the stranger gets the held line, because the person said yes" event=message text="my secret line"
type_line victim2 "/quit"
see 10 victim2 '\[exited 0\]' "the second chat ends with 0"
close_stdin trudy
wait_exit trudy 15 || stop_proc trudy
finish
