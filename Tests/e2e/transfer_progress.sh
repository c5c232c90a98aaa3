#!/usr/bin/env bash
# Both ends of a transfer as a person sees them (issue 35, items 6 and 7): real terminals (tmux panes) in two
# lab hosts, alice sending in A (10.213.7.1), bob receiving in B (10.213.7.2), A's link slowed to 8 Mbit/s so
# that the transfer is seen mid-way.
#  - while bob is asked (the key, then the folder), alice's screen says "waiting for bob to accept…"; once bob
#    said yes and bytes flow, that line is gone (the bar took its place), not left stale above the bar;
#  - mid-way both screens show the same progress line: files n/N, bytes of the whole, percentage, rate, time
#    left (`↑ many/ to bob: …` and `↓ many/ from alice: …`);
#  - alice's bar moves in small steps (it used to jump by a quarter every 2 s): it shows at least 6 different
#    percentages, none more than 25 points above the one before;
#  - both summaries give the time and the rate (`Delivered 400 files (7.8 MiB) to bob in N s (R/s), all
#    verified.`, `Received 400 files (7.8 MiB) from alice in N s (R/s) into …`);
#  - bob cancels (Ctrl-C on his receive) in the middle of a large file: bob's summary says how much of big.bin
#    he kept and that the same send resumes it, and exits 7; alice's screen says bob cancelled, what bob kept
#    and the command that resumes it (exit 7); that command, run again, sends only the rest.
# Needs root (lab.sh up), tc and tmux.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/transfer_helpers.sh"
need ip tc tmux python3
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2ppg$$}
PREFIX=$P2P_LAB_PREFIX
NS_A=${PREFIX}A A_LINK=${PREFIX}vA
ADDR_B=10.213.7.2
TAG=$$

. "$(dirname "$0")/tmux_lab.sh"

# The folder: 400 files of 20 KiB (7.8 MiB, about 8 s at 8 Mbit/s); the large file: 96 MiB.
mkdir -p "$E2E_TMP/src/many" "$E2E_TMP/inbox"
"$PYTHON" - "$E2E_TMP/src/many" <<'PY'
import os, sys
for n in range(400):
    with open(os.path.join(sys.argv[1], "f%03d.bin" % n), "wb") as f: f.write(os.urandom(20480))
PY
head -c $((96 << 20)) /dev/urandom >"$E2E_TMP/src/big.bin"

PORT=$(free_port)
receiver() { open_terminal bob bob B 120 40 "$P2P" receive --name bob --port "$PORT" --dir "$E2E_TMP/inbox" "$@"; }
receiver
see 20 bob 'Waiting for files as bob' "bob's receive waits"

# send_in TERMINAL ITEM: alice's `p2p send ITEM` in a terminal of its own; "[exited N]" when it ends.
send_in() {
  tm kill-session -t "$1" 2>/dev/null
  tm new-session -d -s "$1" -x 120 -y 30 "cd $(printf %q "$E2E_TMP/src") && $(printf '%q ' "$LAB" exec A env P2P_HOME="$(home alice)" TERM=xterm-256color "$P2P" send --name alice --connect "$ADDR_B:$PORT" "$2"); echo \"[exited \$?]\"; exec sleep 3600"
}
# percent TERMINAL ARROW-LINE-START: the percentage on the visible progress line starting so (empty if none).
percent() { visible "$1" | grep -E -- "^$2" | tail -n 1 | sed -nE 's/.*, ([0-9]+)%.*/\1/p'; }
# at_least TERMINAL LINE-START N: the progress line shows N % or more.
at_least() { local p; p=$(percent "$1" "$2"); [ -n "$p" ] && [ "$p" -ge "$3" ]; }

ip netns exec "$NS_A" tc qdisc replace dev "$A_LINK" root tbf rate 8mbit burst 32kbit latency 400ms

# ---------------------------------------------------------------- a folder, both ends
send_in a1 many
see 20 bob 'alice wants to send you files' "bob is asked about alice's key"
see_now 5 a1 'waiting for bob to accept…' "while bob is asked, alice's screen says it waits for bob"
tm send-keys -t bob y
see 15 bob 'alice offers 400 files, 7\.8 MiB in many/ — accept\?' "bob is asked about the folder"
see_now 5 a1 'waiting for bob to accept…' "alice's screen still says it waits while bob decides"
tm send-keys -t bob y
BAR='↑ many/ to bob: [0-9,]+/400 files, .* of 7\.8 MiB, [0-9]+%, [0-9.]+ [KM]?i?B/s, [0-9]+ s left'
LINE='↓ many/ from alice: [0-9,]+/400 files, .* of 7\.8 MiB, [0-9]+%, [0-9.]+ [KM]?i?B/s, [0-9]+ s left'
see_now 20 a1 "$BAR" "alice's bar shows files n/N, bytes of the whole, percentage, rate and time left"
see_now 10 bob "$LINE" "bob's line shows the same: files n/N, bytes, percentage, rate and time left"
unseen a1 'waiting for bob to accept' "once bytes flow, alice's waiting line is gone (not left above the bar)"
log "alice: $(visible a1 | grep -E '^↑' | tail -n 1)"
log "bob:   $(visible bob | grep -E '^↓' | tail -n 1)"
see_now 20 a1 '^↑ many/ to bob: [1-9][0-9,]*/400 files' "alice's bar counts the files bob has written"
# The bar's percentages as they go by, until the send ends.
seen=() last=
end=$((SECONDS + 60))
while [ "$SECONDS" -lt "$end" ] && ! shows a1 '\[exited'; do
  p=$(percent a1 '↑ many/')
  if [ -n "$p" ] && [ "$p" != "$last" ]; then seen+=("$p"); last=$p; fi
  sleep 0.1
done
log "alice's bar showed: ${seen[*]}"
check "alice's bar moved in small steps: ${#seen[@]} different percentages (at least 6)" [ "${#seen[@]}" -ge 6 ]
jump=$("$PYTHON" -c 'import sys; v = [int(x) for x in sys.argv[1:]]; print(max([b - a for a, b in zip(v, v[1:])] + [v[0] if v else 100]))' "${seen[@]}")
check "no step of alice's bar was more than 25 points (largest: $jump)" [ "${jump:-100}" -le 25 ]
see 30 a1 '\[exited 0\]' "the send ends (exit 0)"
see 1 a1 '^Delivered 400 files \(7\.8 MiB\) to bob in [0-9.]+ s \([0-9.]+ [KM]?i?B/s\), all verified\.$' "alice's summary gives the time and the rate"
see 15 bob '^Received 400 files \(7\.8 MiB\) from alice in [0-9.]+ s \([0-9.]+ [KM]?i?B/s\) into .*; each verified by SHA-256$' "bob's summary gives the time and the rate"
unseen a1 '^(↑|waiting for)' "nothing stale on alice's screen after the summary"
check "all 400 files arrived identical" diff -r "$E2E_TMP/src/many" "$E2E_TMP/inbox/many"
log "alice: $(screen a1 | grep -E '^Delivered')"
log "bob:   $(screen bob | grep -E '^Received')"

# ---------------------------------------------------------------- bob cancels a large file
send_in a2 big.bin
see 15 bob 'alice offers big\.bin \(96\.0 MiB\) — accept\?|alice offers .*big\.bin.* — accept\?' "bob is asked about big.bin"
tm send-keys -t bob y
if wait_until 60 at_least bob '↓ big\.bin from alice' 5; then
  see_now 5 a2 '↑ big\.bin to bob: .* of 96\.0 MiB, [0-9]+%, [0-9.]+ [KM]?i?B/s, [0-9]+ (s|min [0-9]+ s) left' "alice's bar for one file: bytes, percentage, rate, time left"
  see_now 5 bob '↓ big\.bin from alice: .* of 96\.0 MiB, [0-9]+%, [0-9.]+ [KM]?i?B/s, [0-9]+ (s|min [0-9]+ s) left' "bob's line the same"
  tm send-keys -t bob C-c
  see 15 bob '\[exited 7\]' "bob's receive, cancelled, exits 7"
  see 1 bob '^p2p: cancelled; what arrived stays, and the same send run again by its sender sends the rest$' "and says that what arrived stays"
  see 1 bob 'Received no file from alice; 1 file did not arrive \(cancelled here\); [0-9.]+ [KM]iB of big\.bin kept: the same send run again by alice resumes it' \
    "bob's screen says how much of big.bin he kept and that the same send resumes it"
  see 15 a2 '\[exited 7\]' "alice's send ends cancelled (exit 7)"
  see 1 a2 "bob cancelled the transfer; at least [0-9.]+ [KM]iB of big\.bin \(96\.0 MiB\) kept at bob; once bob receives again, run the same command again to resume it: p2p send --name alice --connect $ADDR_B:$PORT big\.bin" \
    "alice's screen says bob cancelled, what bob kept, and the command that resumes it"
  unseen a2 '^↑' "no progress bar left on alice's screen"
  screen bob | grep -v '^$' | tail -n 6 | sed 's/^/    bob | /'
  screen a2 | grep -v '^$' | tail -n 4 | sed 's/^/    alice | /'
  # The command alice was given, run again, sends only the rest.
  ip netns exec "$NS_A" tc qdisc del dev "$A_LINK" root 2>/dev/null || true
  tm kill-session -t bob
  receiver --yes
  see 20 bob 'Waiting for files as bob' "bob receives again"
  send_in a3 big.bin
  see 60 a3 '\[exited 0\]' "the command run again completes (exit 0)"
  see 1 a3 'of big\.bin already there: only the rest travels' "only the rest travelled"
  check "big.bin arrived identical" cmp -s "$E2E_TMP/src/big.bin" "$E2E_TMP/inbox/big.bin"
else
  fail "bob's line never reached 5 % of big.bin"; dump bob; dump a2
fi
ip netns exec "$NS_A" tc qdisc del dev "$A_LINK" root 2>/dev/null || true
tm send-keys -t bob C-c

finish
