# Helpers the benchmark scripts share (transfer.sh, stream.sh, shape.sh): sourced, never run.
# They need bash, python3, ss (iproute2) and /proc; make_file uses $TAG (any string) when openssl is there.
# shellcheck shell=bash

say() { echo "bench: $*" >&2; }
now() { echo "$EPOCHREALTIME"; }
# elapsed T0 T1: seconds between two `now` readings, 3 decimals.
elapsed() { python3 -c 'import sys; print("%.3f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$2"; }
# free_port: a TCP port free on 127.0.0.1 a moment ago (someone may take it before us: callers check).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
listening() { ss -ltnH "sport = :$1" | grep -q .; }
# wait_until SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds (0) or SECONDS pass (1).
wait_until() { local end=$((SECONDS + $1)); shift; until "$@"; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done; }
# cpu_of FILE...: user + system seconds from /usr/bin/time -v reports, summed.
cpu_of() { awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ {t += $2} END {printf "%.2f", t}' "$@"; }
# child_of PID: the (first) child of PID, e.g. p2p under /usr/bin/time; waits up to 1 s for it to appear.
child_of() { local c=; for _ in $(seq 100); do read -r c _ <"/proc/$1/task/$1/children" 2>/dev/null; [ -n "$c" ] && break; sleep 0.01; done; echo "$c"; }
load() { cut -d' ' -f1 /proc/loadavg; }

# make_file PATH MIB: random bytes (openssl is much faster than /dev/urandom when present).
make_file() {
  if command -v openssl >/dev/null; then
    openssl enc -aes-128-ctr -pass pass:"${TAG:-$$}" -nosalt -pbkdf2 </dev/zero 2>/dev/null | head -c $(($2 << 20)) >"$1"
  else
    head -c $(($2 << 20)) /dev/urandom >"$1"
  fi
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# rate BYTES SECONDS: MiB/s.
rate() { python3 -c 'import sys; print("%.0f" % (float(sys.argv[1]) / float(sys.argv[2]) / 1048576))' "$1" "$2"; }
# ratio A B: A / B, 2 decimals, or "n/a" when B is 0 (a tiny smoke run can take 0.00 CPU-s).
ratio() { python3 -c 'import sys; b = float(sys.argv[2]); print("%.2f" % (float(sys.argv[1]) / b) if b else "n/a")' "$1" "$2"; }
