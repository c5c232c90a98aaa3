# What stays of the end-to-end tests' folders under /tmp (p2p-e2e-NAME.XXXXXX), and for how long.
# Sourced by lib.sh (a test's own folder at its exit) and run.sh (the kept folders, before the tests), never run.
#  - A test that passed removes its folder; one that failed (or was interrupted) keeps it for reading,
#    with its payloads removed: files over 1 MiB go, except the logs (*.out, *.err, *.log), of which the
#    last 256 KiB stay. E2E_KEEP=1 keeps every folder whole.
#  - run.sh, before the tests, bounds what was kept (also the folders of runs killed before their cleanup):
#    a folder not changed for E2E_KEEP_HOURS (default 24) hours goes; of those older than an hour, only the
#    newest E2E_KEEP_LAST (default 10) stay, their payloads removed as above. A folder changed within the
#    hour is never touched: it may be a test running now. Only folders of this user are looked at.
# shellcheck shell=bash

# e2e_trim_payloads DIR: removes DIR's payloads (files over 1 MiB), keeps its logs (their last 256 KiB).
e2e_trim_payloads() {
  local f size
  find "$1" -xdev -type f -size +1M ! -name '*.out' ! -name '*.err' ! -name '*.log' -delete 2>/dev/null
  while IFS= read -r -d '' f; do
    size=$(stat -c %s "$f")
    { echo "[e2e: trimmed to the last 256 KiB of $size bytes]"; tail -c 262144 "$f"; } >"$f.trimmed" && mv "$f.trimmed" "$f"
  done < <(find "$1" -xdev -type f -size +1M \( -name '*.out' -o -name '*.err' -o -name '*.log' \) -print0 2>/dev/null)
  return 0
}

# e2e_prune_kept: bounds the kept folders in /tmp (see above); prints what it removed or trimmed.
e2e_prune_kept() {
  local hours=${E2E_KEEP_HOURS:-24} last=${E2E_KEEP_LAST:-10} dir mtime n=0 removed=0 trimmed=0
  case $hours$last in *[!0-9]*) echo "e2e: E2E_KEEP_HOURS and E2E_KEEP_LAST take a number" >&2; return 1 ;; esac
  # Old enough to be no test running now (60 min), newest first; directories only (not symbolic links).
  while read -r mtime dir; do
    n=$((n + 1))
    if [ "$n" -gt "$last" ] || [ -n "$(find "$dir" -maxdepth 0 -mmin +$((hours * 60)))" ]; then
      rm -rf "$dir" && removed=$((removed + 1))
    elif [ -n "$(find "$dir" -xdev -type f -size +1M -print -quit 2>/dev/null)" ]; then
      # Trimming changes the folder's time: it is set back, so that its age still counts from the run.
      e2e_trim_payloads "$dir"; touch -d "@$mtime" "$dir"; trimmed=$((trimmed + 1))
    fi
  done < <(find "${E2E_KEPT_ROOT:-/tmp}" -maxdepth 1 -type d -name 'p2p-e2e-*.??????' -user "$(id -u)" -mmin +60 -printf '%T@ %p\n' 2>/dev/null | sort -rn)
  [ "$removed$trimmed" = 00 ] || echo "e2e: kept folders in ${E2E_KEPT_ROOT:-/tmp}: $removed removed (over $hours h old, or beyond the newest $last), $trimmed trimmed of their payloads"
}
