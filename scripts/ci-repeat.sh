#!/usr/bin/env bash
# Runs CI as CI does, N times in a row, and prints each run's result and the duration of each step.
# Clones this repository's main branch into a new temporary folder (with ../shared beside it, as CI
# has it) and runs `CI=true bash .ci/run` there N times: the first run is cold (a fresh clone builds
# everything), the later ones warm (the same clone). --fresh clones anew for every run (all cold).
# Logs stay in the temporary folder, which is named at the end.
#
# --reuse DIR runs in DIR/main, a clone an earlier run left (warm), after checking out REV there.
#
# usage: scripts/ci-repeat.sh [--fresh | --reuse DIR] [--rev REV] N
set -uo pipefail
ME=ci-repeat.sh
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
fresh=no rev=main runs= reuse=
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=yes ;;
    --rev) rev=$2; shift ;;
    --reuse) reuse=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) runs=$1 ;;
  esac
  shift
done
case $runs in ''|*[!0-9]*|0) echo "usage: $ME [--fresh | --reuse DIR] [--rev REV] N" >&2; exit 64 ;; esac

WORK=${reuse:-$(mktemp -d /tmp/p2p-ci-repeat.XXXXXX)}
# Some e2e checks run p2p as user nobody, who must be able to reach the build.
chmod 755 "$WORK"
[ -d "$REPO/../shared" ] && [ ! -e "$WORK/shared" ] && ln -s "$(cd "$REPO/../shared" && pwd)" "$WORK/shared"
commit=$(git -C "$REPO" rev-parse --short "$rev") || exit 64

clone() {
  if [ -n "$reuse" ]; then git -C "$WORK/main" fetch -q "$REPO" "$rev" && git -C "$WORK/main" checkout -q "$commit"; return; fi
  rm -rf "$WORK/main"
  git clone -q "$REPO" "$WORK/main" && git -C "$WORK/main" checkout -q "$commit"
}

echo "$ME: $runs run(s) of .ci/run at $commit in $WORK/main ($([ -n "$reuse" ] && echo 'all warm' || { [ $fresh = yes ] && echo 'each cold' || echo 'first cold, then warm'; }))"
clone || exit 1
green=0 rows=()
for i in $(seq 1 "$runs"); do
  [ "$i" -gt 1 ] && [ $fresh = yes ] && { clone || exit 1; }
  log=$WORK/run-$i.log
  start=$SECONDS
  (cd "$WORK/main" && CI=true bash .ci/run </dev/null >"$log" 2>&1)
  rc=$?
  took=$((SECONDS - start))
  [ $rc = 0 ] && green=$((green + 1))
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  rows+=("$(printf 'run %d: %s, exit %d, %dm%02ds, e2e: %s' "$i" "$([ $rc = 0 ] && echo green || echo RED)" \
    $rc $((took / 60)) $((took % 60)) "${summary:-no summary}")")
  echo "${rows[-1]}"
  # The step table test.sh prints at its end.
  sed -n '/^test.sh: steps$/,$p' "$log" | tail -n +2 | grep -E '^  ' || echo "  (no step table: see $log)"
  [ $rc = 0 ] || grep -E 'FAILED|failed|error:|ThreadSanitizer' "$log" | grep -v '^  ' | tail -n 8 | sed 's/^/  | /'
done
echo "$ME: $green of $runs green at $commit (logs: $WORK)"
printf '%s\n' "${rows[@]}"
[ "$green" = "$runs" ]
