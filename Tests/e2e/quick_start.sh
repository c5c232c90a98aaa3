#!/usr/bin/env bash
# The README's quick start, scripts/chat.sh, as a person runs it (issue 35 item 2), in a real terminal
# (tmux) on this machine (the loopback avahi-daemon; nothing leaves loopback):
#  - a run that has to build says what it does and keeps SwiftPM's output in .build/chat-build.log (the
#    terminal shows no "Compiling" lines and no "prohibited flag" warnings), then opens the chat;
#  - a second run with nothing changed opens the chat without running `swift build` at all (a `swift`
#    first on PATH writes down every call, then runs the real one); the time to its prompt is printed;
#  - with the mDNS daemon bound to loopback only, the chat's header says only this machine can see you;
#  - a build that fails (a `swift` that fails like a compile error) ends chat.sh with 1, the log's path and
#    its last lines on the terminal, and no stamp.
# Uses the debug configuration (P2P_CHAT_CONFIGURATION=debug): the test command has just built it, so
# the first run's `swift build` finds it up to date instead of spending ~5 minutes on a release build.
# Run from the checkout whose build this is (in a helper's worktree: through its /work/wt/sw wrapper).
# Needs root (setup.sh, which starts the loopback avahi-daemon when none runs) and tmux.
. "$(dirname "$0")/lib.sh"
need tmux swift git
[ "$(id -u)" = 0 ] || { fail "must run as root (scripts/setup.sh)"; finish; }
T=$E2E_TMP
TMUX_SOCKET=$T/tmux.sock
tm() { run tmux -S "$TMUX_SOCKET" "$@"; }
on_exit 'tm kill-server 2>/dev/null; true'
screen() { tm capture-pane -p -J -S - -t "$1"; }
shows() { screen "$1" | grep -E -- "$2" >/dev/null; }
see() { if wait_until "$1" shows "$2" "$3"; then pass "$4"; else fail "$4 (no /$3/ on $2's screen within $1 s)"; screen "$2" | grep -v '^$' | tail -n 25 | sed 's/^/    | /'; fi; }

# The spy: every `swift` call goes on record, then to the real swift.
mkdir -p "$T/bin"
REAL_SWIFT=$(command -v swift)
printf '#!/bin/sh\necho "$*" >>%q\nexec %q "$@"\n' "$T/swift-calls" "$REAL_SWIFT" >"$T/bin/swift"
chmod +x "$T/bin/swift"
: >"$T/swift-calls"

ROOM=quick-$$
STAMP=$REPO_ROOT/.build/chat-debug.stamp
rm -f "$STAMP"   # the first run must build (and leave a new stamp)

# chat NAME: scripts/chat.sh in a 120x30 terminal; the pane shows "[exited N]" when it ends.
chat() {
  local command
  command=$(printf '%q ' env PATH="$T/bin:$PATH" P2P_HOME="$T/home" P2P_CHAT_CONFIGURATION=debug TERM=xterm-256color \
    "$REPO_ROOT/scripts/chat.sh" --room "$ROOM" --name quick)
  tm new-session -d -s "$1" -x 120 -y 30 "$command; echo \"[exited \$?]\"; exec sleep 3600"
}

log "first run (builds: swift build finds the debug build up to date)"
chat first
see 600 first '> *$' "the first run reaches the chat's prompt"
see 1 first 'chat.sh: first run: installs what p2p needs|the sources changed since the last build' "it said what it does before building"
check "the first run ran swift build ($(tr '\n' ';' <"$T/swift-calls"))" grep -q '^build ' "$T/swift-calls"
check "it left a stamp" [ -s "$STAMP" ]
check "the build's output is in .build/chat-build.log" grep -qE 'Build of product .p2p. complete|Compiling|Planning' "$REPO_ROOT/.build/chat-build.log"
if shows first 'Compiling|prohibited flag|Fetching'; then fail "SwiftPM's lines reached the terminal"; else pass "no SwiftPM lines (Compiling, Fetching, prohibited flag warnings) on the terminal"; fi
see 10 first 'Room "'"$ROOM"'"' "the chat's header names the room"
LOOPBACK=no
if avahi_conf=$(grep -l '^allow-interfaces=lo$' /run/p2p-mdns/avahi-daemon.conf 2>/dev/null) && [ -n "$avahi_conf" ] && "$MDNS" status 2>/dev/null | grep -E "started by this script: [0-9]+ avahi-daemon" >/dev/null; then LOOPBACK=yes; fi
if [ "$LOOPBACK" = yes ]; then
  see 10 first 'bound to loopback only: only peers on this machine can see you' "the header says the mDNS daemon is bound to loopback only"
else
  log "the running avahi-daemon is not the loopback one of mdns-loopback.sh: the loopback notice is not expected"
  pass "(loopback notice not applicable: the system's avahi-daemon runs)"
fi
tm send-keys -t first -l "/quit"; tm send-keys -t first Enter
see 10 first '\[exited 0\]' "the first chat ends with 0"

log "second run (nothing changed)"
: >"$T/swift-calls"
start=$(date +%s.%N)
chat second
see 60 second '> *$' "the second run reaches the chat's prompt"
elapsed=$(python3 -c "print($(date +%s.%N) - $start)")
log "second run: the prompt after $(printf '%.2f' "$elapsed") s"
check "the second run ran no swift build ($(tr '\n' ';' <"$T/swift-calls"))" bash -c '! grep -q "^build" "$1"' _ "$T/swift-calls"
if shows second 'building p2p|first run'; then fail "the second run spoke of building"; else pass "the second run did not speak of building"; fi
if [ "$LOOPBACK" = yes ]; then
  see 10 second 'bound to loopback only: only peers on this machine can see you' "the second chat's header has the loopback notice too"
fi
tm send-keys -t second -l "/quit"; tm send-keys -t second Enter
see 10 second '\[exited 0\]' "the second chat ends with 0"

log "third run: the sources count as changed (no stamp) and the build fails"
# A swift whose build fails after a step, as a compile error would: chat.sh must say so, with the log.
mkdir -p "$T/failing"
printf '#!/bin/sh\necho "[1/2] Compiling P2P Session.swift"\necho "error: the compiler gave up here" >&2\nexit 1\n' >"$T/failing/swift"
chmod +x "$T/failing/swift"
rm -f "$STAMP"
command=$(printf '%q ' env PATH="$T/failing:$PATH" P2P_HOME="$T/home" P2P_CHAT_CONFIGURATION=debug TERM=xterm-256color \
  "$REPO_ROOT/scripts/chat.sh" --room "$ROOM" --name quick)
tm new-session -d -s third -x 200 -y 40 "$command; echo \"[exited \$?]\"; exec sleep 3600"
see 60 third '\[exited 1\]' "a failed build ends chat.sh with 1"
see 1 third 'the build failed \(swift build exit 1.*its output is in .*\.build/chat-build\.log' "it says the build failed and where its log is"
see 1 third '\| error: the compiler gave up here' "and shows the log's last lines"
check "no stamp was left by the failed build" [ ! -e "$STAMP" ]
finish
