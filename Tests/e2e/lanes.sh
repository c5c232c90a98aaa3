#!/usr/bin/env bash
# Two real-shaped networks between lab hosts (namespaces, each with its own avahi-daemon bound to its lab
# veths only), from issue 20:
#  - two subnets joined by a router: A 10.213.7.1/24 and B 10.213.8.2/24, with a third namespace R between
#    them that forwards IPv4 and runs avahi's reflector on its two lab veths (scripts/lab.sh with
#    P2P_LAB_ROUTER=1). `p2p peers` in A lists B's receiver at 10.213.8.2; a file sent --to its name from A
#    arrives whole (SHA-256, exit 0) having crossed R; two chats find each other through the reflector and
#    a line typed in A shows in B (and one typed in B in A);
#  - 3 % packet loss each way on the link between A and B (nftables in both namespaces drops 3 % of what
#    arrives on the lab veth, at random; the veths carry one TCP segment per packet, gso_max_segs 1, so
#    a drop is one wire-sized packet): a receiver is found by name and a 32 MiB random file arrives
#    verified (SHA-256, exit 0, one file-received event), and 200 chat lines piped into A's chat arrive at
#    B exactly once each, in order; the rules did drop packets both ways.
# Every subnet is blackholed in the root namespace by lab.sh before use; both labs carry per-run prefixes
# and are taken down on exit. Needs root (lab.sh up, nft).
. "$(dirname "$0")/lib.sh"
need ip nft python3 sha256sum
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

TAG=$$-$RANDOM
ROUTED=p2r$$ LOSSY=p2l$$
lab() { local prefix=$1; shift; run env P2P_LAB_PREFIX="$prefix" "$LAB" "$@"; }
# in_lab PREFIX HOST PROC WHO ARGS...: p2p ARGS in lab PREFIX's HOST, identity home-WHO, as process PROC.
in_lab() { local prefix=$1 host=$2 p=$3 who=$4; shift 4
  start_proc "$p" env P2P_HOME="$(home "$who")" P2P_LAB_PREFIX="$prefix" "$LAB" exec "$host" "$P2P" "$@"
}
. "$E2E_DIR/transfer_helpers.sh"   # exits, sha
# chats PREFIX PROC-A PROC-B HOW: a chat in each host of lab PREFIX (named after their PROC and TAG);
# they connect by DNS-SD alone.
chats() {
  local prefix=$1 pa=$2 pb=$3 how=$4
  in_lab "$prefix" A "$pa" "$pa" chat --json --yes --name "$pa-$TAG"
  in_lab "$prefix" B "$pb" "$pb" chat --json --yes --name "$pb-$TAG"
  expect_json 40 "$pa" "$pa (in A) connects to $pb's chat $how" event=connected peer="$pb-$TAG" address?
  expect_json 40 "$pb" "$pb (in B) connects to $pa's chat" event=connected peer="$pa-$TAG"
}
# peers_show PREFIX PROC NAME PORT ADDRESS: `p2p peers` in A lists NAME on PORT at ADDRESS.
peers_show() {
  run env P2P_HOME="$(home "$2")" P2P_LAB_PREFIX="$1" "$LAB" exec A "$P2P" peers --json --timeout 3 >"$E2E_TMP/$2.out" 2>"$E2E_TMP/$2.err"
  [ "$(count_json "$2" event=peer-found name="$3" port="$4" addresses~"$5")" -gt 0 ]
}
rx_bytes() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/rx_bytes"; }

# ================================================================ two subnets joined by a router
on_exit 'lab '"$ROUTED"' down >>"$E2E_TMP/lab.log" 2>&1'
log "lab $ROUTED up (A and B on two subnets, R routes and reflects mDNS)"
if P2P_LAB_ROUTER=1 lab "$ROUTED" up >"$E2E_TMP/lab.log" 2>&1; then
  pass "lab up: A 10.213.7.1/24, B 10.213.8.2/24, router R with avahi's reflector (A's test service resolves in B)"
else
  fail "lab up (router) failed" "$E2E_TMP/lab.log"; finish
fi
check "A reaches B's subnet only via R (10.213.7.254)" grep -q 'via 10.213.7.254' <(ip -n "${ROUTED}A" route get 10.213.8.2)
check "B reaches A's subnet only via R (10.213.8.254)" grep -q 'via 10.213.8.254' <(ip -n "${ROUTED}B" route get 10.213.7.1)

head -c $((1 << 20)) /dev/urandom >"$E2E_TMP/routed.bin"
mkdir -p "$E2E_TMP/in-routed"
in_lab "$ROUTED" B recvr bobr receive --json --yes --name "bobr-$TAG" --dir "$E2E_TMP/in-routed"
expect_json 20 recvr "receive listens in B" event=listening name="bobr-$TAG"
PORTR=$(get_json recvr port event=listening)
if wait_until 30 peers_show "$ROUTED" peersr "bobr-$TAG" "$PORTR" 10.213.8.2; then
  pass "p2p peers in A lists bob's receiver at 10.213.8.2, port $PORTR (another subnet, seen through the reflector)"
else
  fail "p2p peers in A does not list bob's receiver at 10.213.8.2:$PORTR" peersr
fi
r0=$(rx_bytes "${ROUTED}R" "${ROUTED}rA")
in_lab "$ROUTED" A sendr alicer send --json --name "alicer-$TAG" --to "bobr-$TAG" --timeout 30 "$E2E_TMP/routed.bin"
exits sendr 40 0 "a file sent from A --to bob by name reaches B on the other subnet"
check "it arrived whole (SHA-256)" [ "$(sha "$E2E_TMP/in-routed/routed.bin" 2>/dev/null)" = "$(sha "$E2E_TMP/routed.bin")" ]
crossed=$(( $(rx_bytes "${ROUTED}R" "${ROUTED}rA") - r0 ))
check "it crossed R: R's veth from A took $crossed bytes (the file is $((1 << 20)))" [ "$crossed" -ge $((1 << 20)) ]
expect_json 10 recvr "B's receiver reports it verified, from alice" event=file-received name=routed.bin peer="alicer-$TAG"
stop_proc recvr

chats "$ROUTED" chatrA chatrB "on the other subnet (found through the reflector)"
check "A's chat is connected to B's address 10.213.8.2" [ "$(count_json chatrA event=connected address~10.213.8.2:)" -ge 1 ]
send_line chatrA "hello across the router"
expect_json 15 chatrB "a line typed in A shows in B" event=message from="chatrA-$TAG" text="hello across the router"
send_line chatrB "and back across it"
expect_json 15 chatrA "a line typed in B shows in A" event=message from="chatrB-$TAG" text="and back across it"
stop_proc chatrA; stop_proc chatrB
lab "$ROUTED" down >>"$E2E_TMP/lab.log" 2>&1

# ================================================================ 3 % packet loss each way
on_exit 'lab '"$LOSSY"' down >>"$E2E_TMP/lab.log" 2>&1'
log "lab $LOSSY up, then 3 % loss each way"
if lab "$LOSSY" up >>"$E2E_TMP/lab.log" 2>&1; then
  pass "lab up: A 10.213.7.1 and B 10.213.7.2 on one link"
else
  fail "lab up failed" "$E2E_TMP/lab.log"; finish
fi
# Both ends of the link drop 3 % of the packets that arrive on it. The veths are told to hand the kernel
# packets of one segment each (no TSO/GSO super-packets), so a drop is one wire-sized packet, as on a cable.
lossy() { # HOST: the loss rule in HOST's namespace
  local n=$LOSSY$1 v=${LOSSY}v$1
  ip -n "$n" link set dev "$v" gso_max_segs 1 &&
  ip netns exec "$n" nft add table inet p2ploss &&
  ip netns exec "$n" nft add chain inet p2ploss input '{ type filter hook input priority 0; policy accept; }' &&
  ip netns exec "$n" nft add rule inet p2ploss input iifname "$v" counter &&
  ip netns exec "$n" nft add rule inet p2ploss input iifname "$v" numgen random mod 100 '<' 3 counter drop
}
# counters HOST: "SEEN DROPPED" packets on HOST's lab veth since the rules went in.
counters() {
  ip netns exec "$LOSSY$1" nft list chain inet p2ploss input | grep -oE 'packets [0-9]+' | awk '{print $2}' | paste -sd' '
}
check "3 % random loss on what arrives in A (nftables numgen)" lossy A
check "3 % random loss on what arrives in B (nftables numgen)" lossy B

head -c $((32 << 20)) /dev/urandom >"$E2E_TMP/lossy.bin"
mkdir -p "$E2E_TMP/in-lossy"
in_lab "$LOSSY" B recvl bobl receive --json --yes --name "bobl-$TAG" --dir "$E2E_TMP/in-lossy"
expect_json 20 recvl "receive listens in B" event=listening name="bobl-$TAG"
t=$SECONDS
in_lab "$LOSSY" A sendl alicel send --json --name "alicel-$TAG" --to "bobl-$TAG" --timeout 30 "$E2E_TMP/lossy.bin"
exits sendl 90 0 "a 32 MiB file sent --to bob by name over the lossy link is delivered"
check "it arrived whole (SHA-256), $((SECONDS - t)) s after the send started" [ "$(sha "$E2E_TMP/in-lossy/lossy.bin" 2>/dev/null)" = "$(sha "$E2E_TMP/lossy.bin")" ]
expect_json 10 recvl "B's receiver reports it verified" event=file-received name=lossy.bin peer="alicel-$TAG"
check "exactly once: one file-received event, one file, no .part left" \
  [ "$(count_json recvl event=file-received name=lossy.bin)" = 1 -a "$(find "$E2E_TMP/in-lossy" -type f | wc -l)" = 1 ]
stop_proc recvl

LINES=200
chats "$LOSSY" chatlA chatlB "over the lossy link"
t=$SECONDS
for i in $(seq -w 1 "$LINES"); do send_line chatlA "lossy line $i of $LINES"; done
got_all() { [ "$(count_json chatlB event=message from="chatlA-$TAG")" -ge "$LINES" ]; }
if wait_until 60 got_all; then
  pass "$LINES lines piped into A's chat reached B ($((SECONDS - t)) s)"
else
  fail "B got $(count_json chatlB event=message from="chatlA-$TAG") of $LINES lines within 60 s" chatlA chatlB
fi
# Every line exactly once and in order: B's messages from A are exactly the sequence A was given.
in_order() {
  "$PYTHON" - "$E2E_TMP/chatlB.out" "chatlA-$TAG" "$LINES" <<'EOF'
import json, sys
path, sender, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = [f"lossy line {i:0{len(str(n))}d} of {n}" for i in range(1, n + 1)]
got = []
for line in open(path, encoding="utf-8", errors="replace"):
    try:
        obj = json.loads(line)
    except ValueError:
        continue
    if isinstance(obj, dict) and obj.get("event") == "message" and obj.get("from") == sender:
        got.append(obj.get("text"))
if got == want:
    sys.exit(0)
dupes = sorted({t for t in got if got.count(t) > 1})
missing = [t for t in want if t not in got]
first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
print(f"    got {len(got)} lines; {len(dupes)} repeated {dupes[:3]}, {len(missing)} missing {missing[:3]}; "
      f"first difference at #{first + 1}: {got[first] if first < len(got) else None!r}")
sys.exit(1)
EOF
}
check "each of the $LINES lines arrived exactly once, in the order typed" in_order
read -r seenA dropA <<<"$(counters A)"; read -r seenB dropB <<<"$(counters B)"
check "the loss rules dropped packets both ways (A: $dropA of $seenA, B: $dropB of $seenB)" \
  [ "${dropA:-0}" -gt 0 -a "${dropB:-0}" -gt 0 ]
stop_proc chatlA; stop_proc chatlB
lab "$LOSSY" down >>"$E2E_TMP/lab.log" 2>&1

finish
