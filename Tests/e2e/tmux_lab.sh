# Terminals in the lab, for the tests of what a person sees. Sourced after lib.sh by a script that has set
# P2P_LAB_PREFIX (and any other P2P_LAB_* it needs): brings the lab up (and down on exit), and runs each
# program in a tmux pane whose screen the test reads as a person would.
#
# open_terminal NAME PERSON HOST COLS ROWS CMD...: a COLSxROWS terminal NAME running CMD in lab host HOST
#   as PERSON (their P2P_HOME); when CMD ends the pane shows "[exited N]" and stays, so its exit status
#   can be read off the screen.
# screen NAME: the whole pane, scrollback included, wrapped lines joined; visible NAME: what is on it now.
# see SECONDS NAME REGEX DESC / see_now ...: pass once the screen (or the visible part) shows REGEX.
# unseen NAME REGEX DESC: pass when the screen does not show REGEX. type_line NAME TEXT: TEXT and Enter.
# count_on NAME REGEX: how many lines show REGEX. bell NAME / rang NAME: the bell flag of NAME.
TMUX_SOCKET=$E2E_TMP/tmux.sock

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
# The tmux server (and with it every pane's process, by SIGHUP) is stopped, then made sure of by its PID.
stop_tmux() {
  [ -s "$E2E_TMP/tmux.pid" ] || return 0
  local pid; pid=$(cat "$E2E_TMP/tmux.pid")
  run tmux -S "$TMUX_SOCKET" kill-server 2>/dev/null
  wait_until 5 bash -c '! kill -0 "$1" 2>/dev/null' _ "$pid" || kill -KILL "$pid" 2>/dev/null
  true
}
on_exit stop_tmux
log "lab up ($P2P_LAB_PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

tm() { run tmux -S "$TMUX_SOCKET" "$@"; }

open_terminal() {
  local name=$1 person=$2 host=$3 cols=$4 rows=$5; shift 5
  local command
  command=$(printf '%q ' "$LAB" exec "$host" env P2P_HOME="$(home "$person")" TERM=xterm-256color "$@")
  tm new-session -d -s "$name" -x "$cols" -y "$rows" "$command; echo \"[exited \$?]\"; exec sleep 3600"
  if [ ! -s "$E2E_TMP/tmux.pid" ]; then
    tm set-option -g history-limit 5000 >/dev/null
    tm display-message -p '#{pid}' >"$E2E_TMP/tmux.pid"
  fi
}

screen() { tm capture-pane -p -J -S - -t "$1"; }
visible() { tm capture-pane -p -J -t "$1"; }
# grep reads the whole screen (no -q): under pipefail an early exit would fail capture-pane with SIGPIPE.
shows() { screen "$1" | grep -E -- "$2" >/dev/null; }
shows_now() { visible "$1" | grep -E -- "$2" >/dev/null; }
# dump NAME: the last non-empty lines of NAME's screen, indented, for a failure.
dump() { screen "$1" | grep -v '^$' | tail -n 25 | sed 's/^/    | /'; }
see() {
  if wait_until "$1" shows "$2" "$3"; then pass "$4"; else fail "$4 (no /$3/ on $2's screen within $1 s)"; dump "$2"; fi
}
see_now() {
  if wait_until "$1" shows_now "$2" "$3"; then pass "$4"; else fail "$4 (no /$3/ on $2's visible screen within $1 s)"; visible "$2" | tail -n 12 | sed 's/^/    | /'; fi
}
unseen() { if shows "$1" "$2"; then fail "$3 (/$2/ is on $1's screen)"; dump "$1"; else pass "$3"; fi; }
type_line() { tm send-keys -t "$1" -l -- "$2"; tm send-keys -t "$1" Enter; }
count_on() { screen "$1" | grep -cE -- "$2"; }
# bell NAME: tmux's bell flag of NAME's window (1 once the program in it rang the bell; the sessions are
# detached, so tmux keeps the flag).
bell() { tm display-message -p -t "$1" '#{window_bell_flag}'; }
rang() { [ "$(bell "$1")" = 1 ]; }
