#!/usr/bin/env bash
# Real-shaped networks between two lab hosts (namespaces A and B, each with its own avahi-daemon):
#  - a cable with IPv6 link-local addresses only (no IPv4 at all, no DHCP; avahi IPv6 only): `p2p peers`
#    shows the peer at fe80::…%<interface>, a file sent --to a name arrives, a file sent to
#    --connect '[fe80::…%<interface>]:PORT' arrives, and two chats find each other and exchange a line;
#  - a dual-stack link (IPv4 and link-local IPv6): with IPv6 dropped by B's firewall the send still
#    arrives, over IPv4, after the IPv6 attempt was overtaken (--verbose names the address that won);
#  - B's receive port dropped silently by its firewall (both families): the sender stops within its
#    connect timeout, naming each address, "did not answer within 10 s" and the firewall (exit 4), with
#    one "connecting to" line, not a retry storm; a closed port: "refused the connection" (exit 4);
#  - multicast dropped by B's firewall after a first contact (and A's daemon restarted, so it forgets
#    what it cached): `p2p peers` lists the pinned peer as known with its last address, a send --to it by
#    name arrives within seconds at that address (the standard port), and a name never seen fails with
#    an error that says the daemon works and multicast does not get through (exit 3); an address added
#    by hand (`p2p peers add`) leads a sender that never reached carol to her by name, refusing (and
#    pinning nobody) when the name asked for is not the one that answers there;
#  - `p2p doctor`: every check passes on a working network (--to a peer: its address takes a connection);
#    with mDNS dropped by a firewall it lists the causes (a firewall among them), and --to a pinned peer
#    whose announcements are lost exits 1;
#    a firewalled port fails with the silence and the firewall named; with multicast dropped, its own
#    announcement still comes back and "other peers" points at multicast.
#  - two links between A and B, the one in use set down: a chat line typed at once arrives over the other
#    link exactly once; a 64 MiB send cut half-way resumes by itself over the other link (a "resuming"
#    event, resumed-from > 0) and arrives once, verified.
# nftables rules live in B's namespace only. Needs root (lab.sh up, nft, tc).
. "$(dirname "$0")/lib.sh"
need ip nft python3 sha256sum
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

TAG=$$-$RANDOM
V6=p2pn6 DUAL=p2pnd
lab() { local prefix=$1; shift; run env P2P_LAB_PREFIX="$prefix" "$LAB" "$@"; }
# in PREFIX HOST PROC WHO ARGS...: p2p ARGS in lab PREFIX's HOST, identity home-WHO, as process PROC.
in_lab() { local prefix=$1 host=$2 p=$3 who=$4; shift 4
  start_proc "$p" env P2P_HOME="$(home "$who")" P2P_LAB_PREFIX="$prefix" "$LAB" exec "$host" "$P2P" "$@"
}
. "$E2E_DIR/transfer_helpers.sh"   # exits, sha
# chats PREFIX PROC-A PROC-B NAME-A NAME-B LINE HOW: a chat in each host of lab PREFIX; they connect by
# DNS-SD, and LINE typed in A shows in B.
chats() {
  local prefix=$1 pa=$2 pb=$3 na=$4 nb=$5 line=$6 how=$7
  in_lab "$prefix" A "$pa" "$pa" chat --json --yes --name "$na"
  in_lab "$prefix" B "$pb" "$pb" chat --json --yes --name "$nb"
  expect_json 40 "$pa" "alice's chat connects to bob's $how" event=connected peer="$nb" address?
  expect_json 40 "$pb" "bob's chat connects to alice's" event=connected peer="$na"
  send_line "$pa" "$line"
  expect_json 15 "$pb" "bob receives alice's line \"$line\"" event=message from="$na" text="$line"
}
link_local() { # PREFIX HOST: the fe80:: address of HOST's lab veth
  ip -n "$1$2" -6 -o addr show dev "$1v$2" scope link | awk '{print $4}' | cut -d/ -f1 | head -n 1
}

printf 'over a cable with IPv6 link-local addresses only\n' >"$E2E_TMP/cable.txt"
head -c 300000 /dev/urandom >"$E2E_TMP/dual.bin"

# ================================================================ IPv6 link-local only
on_exit 'lab '"$V6"' down >>"$E2E_TMP/lab.log" 2>&1'
log "lab $V6 up (IPv6 link-local only)"
if P2P_LAB_FAMILY=ipv6ll lab "$V6" up >"$E2E_TMP/lab.log" 2>&1; then
  pass "lab up with IPv6 link-local addresses only (avahi IPv6 only; A and B resolve each other)"
else
  fail "lab up (ipv6ll) failed" "$E2E_TMP/lab.log"; finish
fi
check "no IPv4 address on either lab veth" [ -z "$(ip -n ${V6}A -4 -o addr show dev ${V6}vA; ip -n ${V6}B -4 -o addr show dev ${V6}vB)" ]
B_LL=$(link_local "$V6" B)

mkdir -p "$E2E_TMP/in6"
in_lab "$V6" B recv6 bob6 receive --json --yes --name "bob-$TAG" --dir "$E2E_TMP/in6"
expect_json 20 recv6 "receive listens in B" event=listening name="bob-$TAG"
PORT6=$(get_json recv6 port event=listening)

peers6() {
  run env P2P_HOME="$(home peers6)" P2P_LAB_PREFIX="$V6" "$LAB" exec A "$P2P" peers --json --timeout 3 >"$E2E_TMP/peers6.out" 2>"$E2E_TMP/peers6.err"
  [ "$(count_json peers6 event=peer-found name="bob-$TAG" port="$PORT6" addresses~"$B_LL%${V6}vA")" -gt 0 ]
}
if wait_until 30 peers6; then
  pass "p2p peers in A lists bob at $B_LL%${V6}vA (the scope is A's own interface)"
else
  fail "p2p peers in A does not list bob at $B_LL%${V6}vA" "$E2E_TMP/peers6.out" "$E2E_TMP/peers6.err"
fi

in_lab "$V6" A send6 alice6 send --json --name "alice-$TAG" --to "bob-$TAG" --timeout 30 "$E2E_TMP/cable.txt"
exits send6 40 0 "a file sent --to bob by name over the link-local-only cable is delivered"
check "it arrived whole (SHA-256)" [ "$(sha "$E2E_TMP/in6/cable.txt" 2>/dev/null)" = "$(sha "$E2E_TMP/cable.txt")" ]

cp "$E2E_TMP/cable.txt" "$E2E_TMP/direct.txt"
in_lab "$V6" A direct6 alice6 send --json --name "alice-$TAG" --connect "[$B_LL%${V6}vA]:$PORT6" "$E2E_TMP/direct.txt"
exits direct6 30 0 "a file sent to --connect '[$B_LL%${V6}vA]:$PORT6' is delivered"
check "it arrived whole (SHA-256)" [ "$(sha "$E2E_TMP/in6/direct.txt" 2>/dev/null)" = "$(sha "$E2E_TMP/direct.txt")" ]
stop_proc recv6

# Chats under names of their own: a name the receive above just left may still be cached with its
# old session's TXT record, which avahi does not report as a new instance.
chats "$V6" chatA chatB "alicec-$TAG" "bobc-$TAG" "hello over fe80" "over IPv6 link-local (found by DNS-SD)"
stop_proc chatA; stop_proc chatB
lab "$V6" down >>"$E2E_TMP/lab.log" 2>&1

# ================================================================ dual stack, firewalls
on_exit 'lab '"$DUAL"' down >>"$E2E_TMP/lab.log" 2>&1'
log "lab $DUAL up (IPv4 and link-local IPv6)"
if P2P_LAB_FAMILY=dual lab "$DUAL" up >>"$E2E_TMP/lab.log" 2>&1; then
  pass "lab up with IPv4 and IPv6 link-local addresses"
else
  fail "lab up (dual) failed" "$E2E_TMP/lab.log"; finish
fi
BD_LL=$(link_local "$DUAL" B)
firewall() { run env P2P_LAB_PREFIX="$DUAL" "$LAB" exec B nft "$@"; }

mkdir -p "$E2E_TMP/in-dual"
in_lab "$DUAL" B recvd bobd receive --json --yes --name "bobd-$TAG" --dir "$E2E_TMP/in-dual"
expect_json 20 recvd "receive listens in B (dual stack)" event=listening name="bobd-$TAG"
PORTD=$(get_json recvd port event=listening)

# p2p doctor on a working network: every check passes, and bob's addresses take a connection.
in_lab "$DUAL" A doctor1 aliced doctor --to "bobd-$TAG"
exits doctor1 20 0 "p2p doctor --to bob on a working network passes"
for line in "ok   mDNS daemon: answers" "ok   own announcement: this machine's test announcement came back" "ok   other peers: " "ok   peer bobd-$TAG: .*:$PORTD takes a connection"; do
  check "doctor says: $line" grep -q "$line" "$E2E_TMP/doctor1.out"
done

# IPv6 is tried first (RFC 8305); B drops it, so IPv4 has to take over after the stagger.
firewall add table ip6 p2ptest
firewall add chain ip6 p2ptest input '{ type filter hook input priority 0; policy accept; }'
firewall add rule ip6 p2ptest input tcp dport "$PORTD" drop
in_lab "$DUAL" A sendd aliced send --verbose --name "alice-$TAG" --to "bobd-$TAG" --timeout 30 "$E2E_TMP/dual.bin"
exits sendd 40 0 "with IPv6 dropped by B's firewall, a send --to bob still arrives"
check "it arrived whole (SHA-256)" [ "$(sha "$E2E_TMP/in-dual/dual.bin" 2>/dev/null)" = "$(sha "$E2E_TMP/dual.bin")" ]
if grep -q "found bobd-$TAG .*\[$BD_LL%${DUAL}vA\]:$PORTD" "$E2E_TMP/sendd.err" && grep -qF "reached bobd-$TAG at 10.213.7.2:$PORTD, attempt 2; [$BD_LL%${DUAL}vA]:$PORTD had not answered (of 2)" "$E2E_TMP/sendd.err"; then
  pass "--verbose: bob was found at both addresses, and reached at 10.213.7.2 after the IPv6 attempt"
else
  fail "--verbose does not show both addresses and the IPv4 winner" sendd
fi
firewall delete table ip6 p2ptest

# Both families dropped: a firewall that swallows the port.
firewall add table inet p2ptest
firewall add chain inet p2ptest input '{ type filter hook input priority 0; policy accept; }'
firewall add rule inet p2ptest input tcp dport "$PORTD" drop
t=$SECONDS
in_lab "$DUAL" A fw aliced send --name "alice-$TAG" --to "bobd-$TAG" --timeout 30 "$E2E_TMP/dual.bin"
exits fw 30 4 "with B's port dropped by its firewall, the send gives up"
took=$((SECONDS - t))
check "within the 10 s connect timeout and a little discovery (took $took s)" [ "$took" -le 16 ]
if grep -q "cannot reach bobd-$TAG: \[$BD_LL%${DUAL}vA\]:$PORTD did not answer within 10 s (the host is off, or a firewall drops that port); 10.213.7.2:$PORTD did not answer within 10 s" "$E2E_TMP/fw.err"; then
  pass "the error names bob, both addresses, the silence and the firewall"
else
  fail "the error does not say what happened at each address" fw
fi
check "one 'connecting to' line, not a retry storm ($(grep -c 'connecting to' "$E2E_TMP/fw.err"))" [ "$(grep -c 'connecting to' "$E2E_TMP/fw.err")" = 1 ]
in_lab "$DUAL" A doctor2 aliced doctor "10.213.7.2:$PORTD" --timeout 1
exits doctor2 20 1 "p2p doctor of the firewalled port fails"
check "doctor says the port did not answer and names the firewall" grep -q "FAIL peer 10.213.7.2:$PORTD: cannot reach 10.213.7.2:$PORTD: 10.213.7.2:$PORTD did not answer within 5 s (the host is off, or a firewall drops that port)" "$E2E_TMP/doctor2.out"
firewall delete table inet p2ptest
stop_proc recvd

# Multicast dropped after a first contact: a pinned peer is still reached by name, at its last address.
mkdir -p "$E2E_TMP/in-known"
in_lab "$DUAL" B recvk carol receive --json --yes --name "carol-$TAG" --dir "$E2E_TMP/in-known"
expect_json 20 recvk "carol's receive listens in B" event=listening name="carol-$TAG"
check "on the standard port ($(get_json recvk port event=listening))" [ "$(get_json recvk port event=listening)" = 24242 ]
printf 'first\n' >"$E2E_TMP/first.txt"; printf 'second\n' >"$E2E_TMP/second.txt"
in_lab "$DUAL" A first aliced send --name "alice-$TAG" --to "carol-$TAG" --timeout 30 "$E2E_TMP/first.txt"
exits first 40 0 "a first send to carol by name (both sides pin each other's key)"
stop_proc recvk
firewall add table inet nomdns
firewall add chain inet nomdns input '{ type filter hook input priority 0; policy accept; }'
firewall add chain inet nomdns output '{ type filter hook output priority 0; policy accept; }'
firewall add rule inet nomdns input udp dport 5353 drop
firewall add rule inet nomdns output udp dport 5353 drop
# A's daemon forgets what it cached about B: from now on it learns nothing of B.
lab "$DUAL" restart-avahi A >>"$E2E_TMP/lab.log" 2>&1
in_lab "$DUAL" B recvk2 carol receive --json --yes --name "carol-$TAG" --dir "$E2E_TMP/in-known"
expect_json 20 recvk2 "carol's receive starts again, announcing into a network that drops multicast" event=listening name="carol-$TAG"
if ! run env P2P_HOME="$(home peersk)" P2P_LAB_PREFIX="$DUAL" "$LAB" exec A "$P2P" peers --json --timeout 3 2>/dev/null | grep -q "carol-$TAG"; then
  pass "multicast DNS in A does not show carol any more"
else
  fail "A still sees carol through multicast DNS: the test proves nothing"
fi
run env P2P_HOME="$(home aliced)" P2P_LAB_PREFIX="$DUAL" "$LAB" exec A "$P2P" peers --json --timeout 2 >"$E2E_TMP/known.out" 2>/dev/null
if [ "$(count_json known event=peer-known name="carol-$TAG")" = 1 ] && grep "carol-$TAG" "$E2E_TMP/known.out" | grep -q '10.213.7.2:24242'; then
  pass "p2p peers in A lists carol as known, with where she was last reached (port 24242)"
else
  fail "p2p peers does not list carol as a known peer" "$E2E_TMP/known.out"
fi
t=$SECONDS
in_lab "$DUAL" A second aliced send --name "alice-$TAG" --to "carol-$TAG" --timeout 30 "$E2E_TMP/second.txt"
exits second 30 0 "with multicast dropped, a send --to carol (pinned) still arrives"
check "it took a few seconds, not the whole timeout ($((SECONDS - t)) s)" [ $((SECONDS - t)) -le 10 ]
check "the file is there" [ "$(cat "$E2E_TMP/in-known/second.txt" 2>/dev/null)" = second ]
check "the sender said it dialled carol where she was last reached" grep -q "carol-$TAG is not announced here; trying where it was last reached: .*:24242" "$E2E_TMP/second.err"
in_lab "$DUAL" A doctor3 aliced doctor --timeout 2
exits doctor3 20 0 "p2p doctor with multicast dropped has nothing failing on this host"
check "doctor says its own announcement came back" grep -q "ok   own announcement" "$E2E_TMP/doctor3.out"
check "doctor says no other peer answered and lists the causes, a firewall among them" grep -q "??   other peers: none answered within 2 s; likely causes, most likely first: nobody else runs p2p on this network; multicast does not get through between the machines .*; a firewall drops mDNS (UDP port 5353)" "$E2E_TMP/doctor3.out"
# carol is pinned and takes a connection where she was last reached, but her mDNS is dropped: doctor
# --to carol says so, rules out "nobody runs p2p", and fails (others cannot find her).
in_lab "$DUAL" A doctor4 aliced doctor --to "carol-$TAG" --timeout 2
exits doctor4 20 1 "p2p doctor --to carol (reachable, but her mDNS dropped by B's firewall) exits 1"
check "doctor says carol takes a connection but her announcements are lost: multicast or a firewall dropping mDNS" \
  grep -q "FAIL peer carol-$TAG: did not answer by mDNS, though .*:24242, where it was last reached, takes a connection: it runs and takes connections, so its announcements are lost on the way: multicast does not get through between the machines .*, or a firewall drops mDNS (UDP port 5353)" "$E2E_TMP/doctor4.out"
# On B itself, behind the firewall, doctor names the firewall too (whichever check it falls under).
in_lab "$DUAL" B doctor5 carol doctor --timeout 2
wait_exit doctor5 20 || fail "doctor in B did not finish" doctor5
check "doctor behind the firewall names a firewall dropping mDNS" grep -q "firewall .*drops mDNS (UDP port 5353)" "$E2E_TMP/doctor5.out"
in_lab "$DUAL" A stranger aliced send --name "alice-$TAG" --to "dave-$TAG" --timeout 4 "$E2E_TMP/second.txt"
exits stranger 20 3 "a send to a name never seen, with multicast dropped, gives up"
if grep -q "no receiver called dave-$TAG appeared within 4 s; no peers were seen at all (the mDNS daemon works: it shows this machine's own announcement); likely causes, most likely first: nobody runs \`p2p receive\` with this session ID on the network (start it on the other machine); multicast does not get through between the machines .*; a firewall drops mDNS (UDP port 5353) .*--connect HOST:PORT" "$E2E_TMP/stranger.err"; then
  pass "the error says the daemon works, lists the causes in order (nobody running p2p first) and what to use instead"
else
  fail "the stranger's error does not list the causes" stranger
fi

# An address added by hand for a peer never reached: with multicast dropped, only it leads to carol.
A_ADD() { run env P2P_HOME="$(home erind)" P2P_LAB_PREFIX="$DUAL" "$LAB" exec A "$P2P" "$@"; }
A_ADD peers add 10.213.7.2:24242 >"$E2E_TMP/add.out" 2>&1
check "p2p peers add keeps the address and says it takes a connection" grep -q "10.213.7.2:24242 takes a connection now" "$E2E_TMP/add.out"
A_ADD peers --json --timeout 1 >"$E2E_TMP/added.list.out" 2>/dev/null
check "p2p peers lists the added address" [ "$(count_json added.list event=address-added address=10.213.7.2:24242)" = 1 ]
in_lab "$DUAL" A wrongname erind send --name "erin-$TAG" --to "dave-$TAG" --timeout 4 "$E2E_TMP/second.txt"
exits wrongname 20 3 "a send to dave, with carol at the only added address, finds no dave"
check "it says who answers at the added address instead" grep -q "10.213.7.2:24242 is carol-$TAG, not dave-$TAG" "$E2E_TMP/wrongname.err"
check "and it pinned nobody" [ -z "$(A_ADD trust list --json 2>/dev/null)" ]
printf 'third\n' >"$E2E_TMP/third.txt"
in_lab "$DUAL" A added erind send --name "erin-$TAG" --to "carol-$TAG" --timeout 30 "$E2E_TMP/third.txt"
exits added 30 0 "with multicast dropped, a send --to carol (never reached; her address added by hand) arrives"
check "the file is there" [ "$(cat "$E2E_TMP/in-known/third.txt" 2>/dev/null)" = third ]
check "the sender said it tried the addresses added by hand" grep -q "carol-$TAG is not announced here; trying the addresses added by hand: 10.213.7.2:24242" "$E2E_TMP/added.err"
A_ADD peers --json --timeout 1 >"$E2E_TMP/added.list2.out" 2>/dev/null
if [ "$(count_json added.list2 event=peer-known name="carol-$TAG")" = 1 ] && grep "carol-$TAG" "$E2E_TMP/added.list2.out" | grep -q '10.213.7.2:24242' \
   && [ "$(count_json added.list2 event=address-added)" = 0 ]; then
  pass "carol is now pinned with that address, and it left the added ones"
else
  fail "after the first contact, p2p peers does not list carol as known at the added address" added.list2
fi
A_ADD peers add 10.213.7.9:24242 >/dev/null 2>&1
check "p2p peers remove forgets an added address (exit 0)" A_ADD peers remove 10.213.7.9:24242
A_ADD peers --json --timeout 1 >"$E2E_TMP/added.list3.out" 2>/dev/null
check "and p2p peers no longer lists it" [ "$(count_json added.list3 event=address-added address=10.213.7.9:24242)" = 0 ]
check "removing it again fails (exit 1)" bash -c '! "$@" >/dev/null 2>&1' _ env P2P_HOME="$(home erind)" P2P_LAB_PREFIX="$DUAL" "$LAB" exec A "$P2P" peers remove 10.213.7.9:24242
stop_proc recvk2

# Nothing listens: refused, at once.
CLOSED=$(free_port)
in_lab "$DUAL" A refused aliced send --name "alice-$TAG" --connect "10.213.7.2:$CLOSED" "$E2E_TMP/dual.bin"
exits refused 15 4 "a send to a port where nothing listens fails"
if grep -q "cannot reach 10.213.7.2:$CLOSED: 10.213.7.2:$CLOSED refused the connection (nothing listens on that port: is p2p running there?)" "$E2E_TMP/refused.err"; then
  pass "the error says the port refused and what to check"
else
  fail "the refusal is not explained" refused
fi

stop_proc recvd 2>/dev/null
lab "$DUAL" down >>"$E2E_TMP/lab.log" 2>&1

# ================================================================ two links, the one in use goes down
TWO=p2pn2
on_exit 'lab '"$TWO"' down >>"$E2E_TMP/lab.log" 2>&1'
log "lab $TWO up (two links: 10.213.7.0/24 and 10.213.8.0/24)"
if P2P_LAB_LINKS=2 lab "$TWO" up >>"$E2E_TMP/lab.log" 2>&1; then
  pass "lab up with two links between A and B (avahi on both)"
else
  fail "lab up (two links) failed" "$E2E_TMP/lab.log"; finish
fi
chats "$TWO" chat2A chat2B "alice-$TAG" "bob-$TAG" "before the cut" "over one of the two links"
# Which link carries the chat: the local address of A's one established connection to B.
in_use=$(ip netns exec "${TWO}A" ss -tnH state established | awk '{print $3}' | grep -oE '10\.213\.[78]\.1' | head -n 1)
case $in_use in
  10.213.7.1) cut=${TWO}vA other=10.213.8.1 ;;
  10.213.8.1) cut=${TWO}wA other=10.213.7.1 ;;
  *) cut= ;;
esac
if [ -z "$cut" ]; then
  fail "cannot tell which link the chat uses ($(ip netns exec "${TWO}A" ss -tnH state established))"
else
  pass "the chat runs over $in_use ($cut)"
  chat_cut=$cut
  start=$(date +%s%N)
  ip -n "${TWO}A" link set "$cut" down
  send_line chat2A "after the cut"
  if wait_json 20 chat2B event=message from="alice-$TAG" text="after the cut" >/dev/null; then
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    pass "a line typed right after the link in use went down arrives over the other link, $ms ms later"
    echo "FAILOVER_MS=$ms"
  else
    fail "the line typed after the cut did not arrive within 20 s" chat2A chat2B
  fi
  send_line chat2B "and back"
  expect_json 15 chat2A "a line from bob arrives at alice after the cut" event=message from="bob-$TAG" text="and back"
  check "the line typed after the cut arrived exactly once" [ "$(count_json chat2B event=message text="after the cut")" = 1 ]
  check "the line typed before the cut arrived exactly once" [ "$(count_json chat2B event=message text="before the cut")" = 1 ]
  new_local=$(ip netns exec "${TWO}A" ss -tnH state established | awk '{print $3}' | grep -oE '10\.213\.[78]\.1' | head -n 1)
  check "the chat now runs over the other link ($new_local)" [ "$new_local" = "$other" ]
  check "alice's chat says the new connection runs to bob's address on the other link (${other%.1}.2)" \
    [ "$(count_json chat2A event=connected address~"${other%.1}.2:")" -ge 1 ]
fi
stop_proc chat2A; stop_proc chat2B

# ---- the link in use goes down mid-transfer: the send resumes over the other link, nothing twice
log "two links: the one in use goes down mid-transfer"
# Both of A's links at 80 Mbit/s, so the 64 MiB take seconds and can be cut half-way.
for link in "${TWO}vA" "${TWO}wA"; do ip netns exec "${TWO}A" tc qdisc replace dev "$link" root tbf rate 80mbit burst 32kb latency 200ms; done
head -c $((64 << 20)) /dev/urandom >"$E2E_TMP/cut.bin"
mkdir -p "$E2E_TMP/in2"
# The link the chat lost comes back first: two ways again.
[ -n "${chat_cut:-}" ] && ip -n "${TWO}A" link set "$chat_cut" up
in_lab "$TWO" B recv2 recv2 receive --json --yes --name "recv2-$TAG" --dir "$E2E_TMP/in2"
expect_json 20 recv2 "the receiver listens in B" event=listening
# resolved_on_both: A's daemon resolves the receiver on both links.
resolved_on_both() {
  [ "$(lab "$TWO" exec A timeout 5 avahi-browse -rpt _p2p._tcp 2>/dev/null | grep '^=' | grep -c "recv2-$TAG")" -ge 2 ]
}
if wait_until 30 resolved_on_both; then pass "A's daemon sees the receiver on both links"; else fail "A's daemon does not see the receiver on both links"; fi
in_lab "$TWO" A send2 send2 send --json --name "send2-$TAG" --to "recv2-$TAG" --timeout 40 "$E2E_TMP/cut.bin"
if wait_until 60 part_reaches "$E2E_TMP/in2/cut.bin.part" $((8 << 20)); then
  in_use=$(ip netns exec "${TWO}A" ss -tnH state established | awk '{print $3}' | grep -oE '10\.213\.[78]\.1' | head -n 1)
  case $in_use in 10.213.7.1) cut=${TWO}vA ;; 10.213.8.1) cut=${TWO}wA ;; *) cut= ;; esac
  if [ -n "$cut" ]; then
    pass "the transfer runs over $in_use ($cut)"
    ip -n "${TWO}A" link set "$cut" down
    exits send2 90 0 "the send completes after the link in use went down (exit 0)"
    expect_json 1 send2 "it says it resumed over a new connection" event=resuming attempt=1
    rf=$(get_json send2 resumed-from event=file-sent name=cut.bin)
    check "only the rest travelled again: its file-sent event says it resumed from byte ${rf:-?}" [ "${rf:-0}" -gt 0 ]
    expect_json 20 recv2 "the receiver reports the file verified" event=file-received name=cut.bin
    check "the file arrived whole (SHA-256 equal)" [ "$(sha "$E2E_TMP/in2/cut.bin")" = "$(sha "$E2E_TMP/cut.bin")" ]
    check "exactly once: one file-received event, no copy, no .part left" \
      [ "$(count_json recv2 event=file-received name=cut.bin)" = 1 -a "$(find "$E2E_TMP/in2" -type f | wc -l)" = 1 ]
  else
    fail "cannot tell which link the transfer uses ($(ip netns exec "${TWO}A" ss -tnH state established))"
  fi
else
  fail "the transfer never reached 8 MiB" send2 recv2
fi
stop_proc send2; stop_proc recv2
lab "$TWO" down >>"$E2E_TMP/lab.log" 2>&1

finish
