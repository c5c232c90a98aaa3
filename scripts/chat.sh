#!/usr/bin/env bash
# The quick start: set up (packages, mDNS), build p2p (release mode) and start `p2p chat` with the given
# arguments. The build's output goes to a log (.build/chat-build.log), the terminal shows one progress
# line. A later run skips `swift build` (SwiftPM's own up-to-date check costs ~10 s) while nothing it
# depends on changed since the last good build: no file under Sources/, Package.swift or Package.resolved
# newer than the stamp that build left, the same git HEAD and the same Package.resolved.
# env: P2P_CHAT_CONFIGURATION=debug builds and runs a debug build instead (quicker to build, slower to run).
set -euo pipefail
ME=chat.sh
cd "$(dirname "$(readlink -f "$0")")/.."
CONFIG=${P2P_CHAT_CONFIGURATION:-release}
case $CONFIG in debug|release) ;; *) echo "$ME: P2P_CHAT_CONFIGURATION is '$CONFIG'; give debug or release" >&2; exit 2 ;; esac
BIN=.build/$CONFIG/p2p
STAMP=.build/chat-$CONFIG.stamp
LOG=.build/chat-build.log


# What the stamp records: the commit the sources came from ("none" outside git) and the dependencies'
# versions (Package.resolved, which the build itself may rewrite, so its content counts, not its time).
stamp_text() {
  echo "$(git rev-parse HEAD 2>/dev/null || echo none) $(sha256sum Package.resolved 2>/dev/null | cut -d' ' -f1)"
}
# The last good build is still good: its binary and stamp exist, HEAD is the same, and nothing it was
# built from changed afterwards (`find -newer` sees an edited, added or removed file: a removal changes
# its folder's time).
up_to_date() {
  [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(stamp_text)" ] &&
    [ -z "$(find Sources Package.swift -newer "$STAMP" -print -quit 2>/dev/null)" ]
}

# minutes SECONDS: "42 s", "4 min".
minutes() { if [ "$1" -lt 60 ]; then echo "$1 s"; else echo "$(($1 / 60)) min"; fi; }

# build: swift build with its output in $LOG and one progress line on the terminal, parsed from SwiftPM's
# "[n/N]" steps (updated in place on a terminal, at most every 30 s otherwise).
build() {
  local start=$SECONDS last=-30 line step="" rc
  # Its time is the build's start: a file changed during the build is newer than the stamp.
  local started; started=$(mktemp .build/chat-stamp.XXXXXX)
  : >"$LOG"
  set +e
  swift build -c "$CONFIG" --product p2p 2>&1 | while IFS= read -r line; do
    printf '%s\n' "$line" >>"$LOG"
    case $line in
      \[*/*\]*) [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] && step="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}" ;;
      "Another instance of SwiftPM"*) step="(waiting for another swift build in this folder)" ;;
      Fetching*|Cloning*|Computing*|Updating*|Working\ copy*) step="(fetching packages)" ;;
      *) [ -n "$step" ] || step="(planning)" ;;
    esac
    if [ -t 2 ]; then
      printf '\r\033[Kbuilding p2p… %s (%s)' "$step" "$(minutes $((SECONDS - start)))" >&2
    elif [ $((SECONDS - last)) -ge 30 ]; then
      last=$SECONDS
      echo "building p2p… $step ($(minutes $((SECONDS - start))))" >&2
    fi
  done
  rc=${PIPESTATUS[0]}
  set -e
  [ -t 2 ] && printf '\r\033[K' >&2
  if [ "$rc" != 0 ]; then
    rm -f "$started"
    echo "$ME: the build failed (swift build exit $rc after $(minutes $((SECONDS - start)))); its output is in $PWD/$LOG. The last lines:" >&2
    tail -n 20 "$LOG" | sed 's/^/  | /' >&2
    exit 1
  fi
  stamp_text >"$STAMP.new"
  touch -r "$started" "$STAMP.new"
  mv -f "$STAMP.new" "$STAMP"
  rm -f "$started"
  echo "$ME: built p2p in $((SECONDS - start)) s" >&2
}

mkdir -p .build
if up_to_date; then
  scripts/setup.sh >&2
else
  if [ -x "$BIN" ]; then
    echo "$ME: the sources changed since the last build: checking the packages, then rebuilding p2p ($CONFIG)," \
      "output in $LOG" >&2
  else
    # Measured: 295 s for a fresh release build on 2 quiet cores (BENCHMARKS.md: 713 s with other builds
    # beside it); it scales with the cores (about 10 core-minutes).
    cores=$(nproc 2>/dev/null || echo 2)
    echo "$ME: first run: installs what p2p needs (scripts/setup.sh, apt-get via sudo), builds p2p ($CONFIG;" \
      "on 2 idle cores a fresh build takes about 5 minutes, on this machine's $cores roughly $(((10 + cores - 1) / cores)) min," \
      "its output goes to $LOG), then starts p2p chat. Later runs start the chat in a few seconds." >&2
  fi
  scripts/setup.sh >&2
  build
fi
exec "$BIN" chat "$@"
