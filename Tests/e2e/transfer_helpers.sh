# Helpers shared by the lab tests that move files (transfer.sh, faults.sh, tree.sh). Source after lib.sh; they
# read NS_A, A_LINK and TAG at call time.

# sender PROC WHO TO PATH...: `p2p send --json --to TO-TAG PATH...` in A, identity home-WHO.
sender() {
  local p=$1 who=$2 to=$3; shift 3
  start_proc "$p" env P2P_HOME="$(home "$who")" "$LAB" exec A "$P2P" send --json --name "$who-$TAG" --to "$to-$TAG" --timeout 40 "$@"
}
# exits PROC SECONDS CODE DESC: PROC exits with CODE within SECONDS.
exits() {
  if wait_exit "$1" "$2"; then
    if [ "$EXIT_RC" = "$3" ]; then pass "$4 (exit $EXIT_RC)"; else fail "$4: exit $EXIT_RC, expected $3" "$1"; fi
  else
    fail "$4: $1 still running after $2 s" "$1"; stop_proc "$1"
  fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
# shape on|off: limit A's egress to 80 Mbit/s (about 10 MB/s), so a transfer can be hit mid-way.
shape() {
  if [ "$1" = on ]; then
    ip netns exec "$NS_A" tc qdisc replace dev "$A_LINK" root tbf rate 80mbit burst 32kb latency 200ms
  else
    ip netns exec "$NS_A" tc qdisc del dev "$A_LINK" root 2>/dev/null || true
  fi
}
tx_bytes() { ip netns exec "$NS_A" cat "/sys/class/net/$A_LINK/statistics/tx_bytes"; }
# part_reaches FILE BYTES: FILE exists and holds at least BYTES.
part_reaches() { [ "$(size_of "$1")" -ge "$2" ]; }
# no_files DIR: DIR has no regular file (or does not exist).
no_files() { [ -z "$(find "$1" -type f 2>/dev/null)" ]; }
