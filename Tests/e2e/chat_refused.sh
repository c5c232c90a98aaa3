#!/usr/bin/env bash
# A chat whose key the other side refuses learns it, once (issue 35 item 5), as a person sees it: real
# terminals (tmux panes) in two lab hosts (namespaces A and B, each with its own avahi-daemon).
#  - alice and bob chat in a room with --yes: each pins the other's key;
#  - bob's machine gets a new installation that calls itself bob (another key) and types a line while
#    nobody is there; alice's machine now chats as alicia, whom its room dials (by the room's name rule,
#    PROTOCOL.md §2.2, "bob" dials "alicia");
#  - alicia's chat refuses it and says so once (REFUSED …); the newcomer's screen says once that alicia
#    refused this key, what to do (p2p trust remove bob there, or p2p pair), and that the line typed
#    while nobody was here will not reach alicia; /who shows it alone;
#  - the same key tries 3 times more: alice's chat shows no block per try but one count once the minute
#    since the first refusal is over (issue 35 item 5: a room groups repeated refusals);
#  - another new key for bob, and alice's chat as alice ("alice" dials "bob"): told once, over three runs of alice's
#    chat that each dial it and are refused (PROTOCOL.md §12.2: the ERROR on a connection alice opened);
#  - p2p send --to alice / --connect from a refused key: exit 10, naming alice, the address and what to do,
#    and the JSON event refused-by-peer.
# Needs root (lab.sh up) and tmux.
. "$(dirname "$0")/lib.sh"
need ip tmux python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2prf$$}
ROOM="refused-$$"

. "$(dirname "$0")/tmux_lab.sh"
terminal() { local name=$1 person=$2 host=$3; shift 3; open_terminal "$name" "$person" "$host" 150 40 "$@"; }
peer_id() { run env P2P_HOME="$(home "$1")" "$P2P" id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }

# ---------------------------------------------------------------- alice and bob pin each other
ALICE=alice
terminal alice "$ALICE" A "$P2P" chat --room "$ROOM" --name alice --yes
terminal bob bob B "$P2P" chat --room "$ROOM" --name bob --yes
see 30 alice 'bob connected' "alice and bob chat (keys pinned with --yes)"
see 10 bob 'alice connected' "bob shows alice connected"
type_line alice "/quit"; type_line bob "/quit"
see 10 alice '\[exited 0\]' "alice's first chat ends with 0"
see 10 bob '\[exited 0\]' "bob's first chat ends with 0"
tm kill-session -t alice; tm kill-session -t bob

# ---------------------------------------------------------------- a new installation calls itself bob
NEWBOB=newbob1
check "the newcomer's room dials alicia (the name rule: \"bob\" dials \"alicia\")" name_dials bob alicia
terminal newbob "$NEWBOB" B "$P2P" chat --room "$ROOM" --name bob --yes
see 20 newbob 'Room "'"$ROOM"'"' "the newcomer chats as bob on B"
type_line newbob "anyone?"
see 5 newbob 'nobody is here yet' "its line waits for whoever joins"
terminal alice "$ALICE" A "$P2P" chat --room "$ROOM" --name alicia --yes
see 30 alice 'REFUSED bob' "alicia's chat refuses the newcomer (bob's name is pinned to the old key)"
see 20 newbob 'alicia refused this key \(your name is pinned to another key there\)' "the newcomer is told that alicia refused its key"
see 1 newbob 'ask alicia to run `p2p trust remove bob` if you really have a new key, or pair again with `p2p pair`' "... and what to do"
see 1 newbob '1 line typed while nobody was here will not reach alicia' "... and that its waiting line will not reach alicia"
type_line newbob "/who"
see 5 newbob '^\* 1 here: bob$' "/who on the newcomer: nobody but itself"
type_line alice "/who"
see 5 alice '^\* 1 here: alicia$' "/who on alicia: nobody but herself"
check "the newcomer was told once ($(count_on newbob 'alicia refused this key'))" [ "$(count_on newbob 'alicia refused this key')" = 1 ]
check "alice's refusal is shown once ($(count_on alice 'REFUSED bob'))" [ "$(count_on alice 'REFUSED bob')" = 1 ]
unseen alice 'anyone\?' "the newcomer's line did not reach alicia"

# ---------------------------------------------------------------- the same key tries again and again
# Three more tries of the refused key (chats that dial alice's address directly, as a stranger's room
# would retry): alice's chat counts them instead of a REFUSED block each, and says the count once the
# minute since the first refusal is over ("(refused again: 4 tries from bob, key …)").
ALICE_PORT=$(screen alice | grep -oE 'You are alicia \([0-9a-f]+\), port [0-9]+' | grep -oE '[0-9]+$' | head -n 1)
check "alicia's header gives her port ($ALICE_PORT)" [ -n "$ALICE_PORT" ]
for try in 2 3 4; do
  run "$LAB" exec B env P2P_HOME="$(home "$NEWBOB")" timeout 30 "$P2P" chat --room "$ROOM" --name bob --yes --port 0 \
    --connect "10.213.7.1:$ALICE_PORT" </dev/null >>"$E2E_TMP/retries.out" 2>&1
  echo "[exit $?]" >>"$E2E_TMP/retries.out"
done
check "each retry was refused by alice ($(grep -c 'refused this' "$E2E_TMP/retries.out") of 3 say so)" [ "$(grep -c 'refused this' "$E2E_TMP/retries.out")" = 3 ]
# At least 4: the newcomer's own room may dial alice again too, and each try counts.
see 90 alice 'refused again: ([4-9]|[1-9][0-9]+) tries from bob.*, key [a-z0-9]{4}…' "alice's chat reports the later tries as one count (4 or more), once the minute is over"
check "alice showed the REFUSED block once for all the tries ($(count_on alice 'REFUSED bob'))" [ "$(count_on alice 'REFUSED bob')" = 1 ]
check "and the count once ($(count_on alice 'refused again'))" [ "$(count_on alice 'refused again')" = 1 ]
type_line newbob "/quit"
see 10 newbob '\[exited 0\]' "the newcomer's chat ends with 0"

# ---------------------------------------------------------------- alice's room dials the refused key
# Another new installation calling itself bob, and alice's chat as alice again: now alice's room dials it
# ("alice" dials "bob"), so her refusal comes as the end of a connection she opened, before it connected.
# The newcomer is told once, however often alice dials it: her chat run three times (each run dials it
# once and is refused). --verbose logs each ERROR the newcomer receives, the event the count waits for.
type_line alice "/quit"
see 10 alice '\[exited 0\]' "alicia's chat ends with 0"
tm kill-session -t alice
NEWBOBH=newbob2
check "alice's room dials bob (the name rule)" name_dials alice bob
terminal newbobh "$NEWBOBH" B "$P2P" chat --room "$ROOM" --name bob --yes --verbose
see 20 newbobh 'Room "'"$ROOM"'"' "the second newcomer chats as bob on B"
terminal alice "$ALICE" A "$P2P" chat --room "$ROOM" --name alice --yes
see 30 alice 'REFUSED bob' "alice's chat (run 1) dials the newcomer and refuses it"
see 30 newbobh 'alice refused this key \(your name is pinned to another key there\)' "the second newcomer is told that alice refused its key (alice dialled)"
see 1 newbobh 'ask alice to run `p2p trust remove bob` if you really have a new key, or pair again with `p2p pair`' "... and what to do"
see 1 newbobh 'not dialled again in this run' "... and that alice is not dialled again"
for run in 2 3; do
  type_line alice "/quit"
  see 10 alice '\[exited 0\]' "alice's chat (run $((run - 1))) ends with 0"
  tm kill-session -t alice
  terminal alice "$ALICE" A "$P2P" chat --room "$ROOM" --name alice --yes
  see 30 alice 'REFUSED bob' "alice's chat (run $run) dials the second newcomer and refuses it again"
done
errors_heard() { [ "$(count_on newbobh 'sent ERROR 15')" -ge 3 ]; }
if wait_until 30 errors_heard; then pass "the second newcomer received alice's refusal 3 times ($(count_on newbobh 'sent ERROR 15'))"
else fail "the second newcomer received $(count_on newbobh 'sent ERROR 15') refusals, not 3"; dump newbobh; fi
check "... and was told once ($(count_on newbobh 'alice refused this key'))" [ "$(count_on newbobh 'alice refused this key')" = 1 ]
type_line newbobh "/who"
see 5 newbobh '^\* 1 here: bob$' "/who on the second newcomer: nobody but itself"
type_line newbobh "/quit"; type_line alice "/quit"
see 10 newbobh '\[exited 0\]' "the second newcomer's chat ends with 0"
see 10 alice '\[exited 0\]' "alice's chat ends with 0"

# ---------------------------------------------------------------- p2p send with a refused key: exit 10
# alice receives files; the newcomer (as bob) sends her one: refused (her bob is another key), exit 10,
# the message names alice, the address dialled and what to do; --json gives the refused-by-peer event.
mkdir -p "$(home "$ALICE")/in"
echo "for alice" >"$E2E_TMP/note.txt"
terminal recv "$ALICE" A "$P2P" receive --name alice --dir "$(home "$ALICE")/in" --yes
see 20 recv 'Waiting for files as alice' "alice's receive waits for files"
RECV_PORT=$(screen recv | grep -oE 'Waiting for files as alice \([^)]*\), port [0-9]+' | grep -oE '[0-9]+$' | head -n 1)
out=$(run "$LAB" exec B env P2P_HOME="$(home "$NEWBOB")" timeout 60 "$P2P" send "$E2E_TMP/note.txt" --to alice --name bob --port 0 2>&1); rc=$?
check "send --to alice with a key alice refuses exits 10 (got $rc: $out)" [ "$rc" = 10 ]
check "... naming alice and the address dialled" grep -qE 'alice \([^)]*10\.213\.7\.1:'"$RECV_PORT"'[^)]*\) refused this machine.s key' <<<"$out"
check "... with what to do over there" grep -qF 'ask alice to run `p2p trust remove bob`' <<<"$out"
check "... and that nothing was sent" grep -qF 'nothing was sent' <<<"$out"
out=$(run "$LAB" exec B env P2P_HOME="$(home "$NEWBOB")" timeout 60 "$P2P" send "$E2E_TMP/note.txt" --connect "10.213.7.1:$RECV_PORT" --name bob --port 0 --json 2>/dev/null); rc=$?
check "send --connect --json with a refused key exits 10 too (got $rc)" [ "$rc" = 10 ]
check "... with the refused-by-peer event (reason key-changed, the address): $out" \
  grep -qE '"address":"10\.213\.7\.1:'"$RECV_PORT"'".*"event":"refused-by-peer".*"reason":"key-changed"' <<<"$out"
check "nothing reached alice's folder" [ -z "$(ls -A "$(home "$ALICE")/in")" ]
finish
