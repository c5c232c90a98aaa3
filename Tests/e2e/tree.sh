#!/usr/bin/env bash
# Tree transfers between two lab hosts (namespaces A 10.213.7.1 and B 10.213.7.2, each with its own
# avahi-daemon); `p2p receive` runs in B, `p2p send` in A finds it by DNS-SD name (--to) or takes every
# receiver of the session (--all). Each path given to send is one transfer (one question, files back to
# back, each verified by SHA-256 and renamed into place):
#  1. a 10,000-file tree (100 folders of 4 KiB random files, an empty folder, a mode-600 file, a 755
#     script, a deeply nested file), sent by name to `receive --yes --once --allow-executable`: both exit
#     0, `diff -r` finds nothing, file modes are kept, send prints "Delivered 10,000 files ... all verified.", receive prints
#     "Received 10,000 files ... each verified by SHA-256"; the same with --json on both ends: tree-finished
#     says files=10000 verified=10000, and one file-received event per file;
#  2. resume: a tree of 200 small files and three 32 MiB files (A's veth shaped to 80 Mbit/s so it takes
#     seconds) is cut by kill -9 of the sender while the second big file is arriving; the receiver keeps
#     running, every file under its final name is whole (its SHA-256 is the source's), the cut one is a
#     .part; the same send again completes: `diff -r` identical, no .part left, tree-finished reports the
#     finished files as already there (they did not travel again), the cut file's file-received event says
#     resumed-from = the .part's size, and only the missing bytes cross A's veth;
#  3. already there: the 10,000-file tree again to a receiver that has it: "(all already there: nothing
#     travelled)", every file-received says already-there, nothing renamed to "NAME (1)", almost nothing
#     crosses the veth;
#  4. two receivers in B (own names, folders and identities): `send --to r1 --to r2` and then `send --all`
#     deliver identical trees to both, one "Delivered" line per receiver, exit 0;
#  5. 120,000 empty files, --json on both ends: every file-sent and file-received event (120,000 each, in
#     the same order, nothing "missed"), tree-finished on both with verified=120000.
# Hostile manifests (a tree offer naming ../x, /etc/x, ...) are for unit tests, not checked here.
# The lab prefix defaults to ptree<PID> (P2P_LAB_PREFIX), apart from the other lab tests' namespaces.
# Needs root (lab.sh up, tc).
. "$(dirname "$0")/lib.sh"
need ip tc python3 sha256sum diff
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-ptree$$}
PREFIX=$P2P_LAB_PREFIX
NS_A=${PREFIX}A A_LINK=${PREFIX}vA
TAG=$$-$RANDOM
MiB=$((1 << 20))
lab_absent() { ! ip netns list | grep -qE "^($PREFIX)(A|B)( |$)"; }

on_exit 'run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1'
log "lab up ($PREFIX)"
if run "$LAB" up >"$E2E_TMP/lab.log" 2>&1; then pass "lab up (A and B resolve each other's services)"; else fail "lab up failed" "$E2E_TMP/lab.log"; finish; fi

# ---------------------------------------------------------------- helpers

. "$E2E_DIR/transfer_helpers.sh"   # exits, sha, size_of, shape, tx_bytes, part_reaches
# receiver PROC WHO DIR [ARGS...]: `p2p receive --yes --once` in B, named WHO-TAG, identity home-WHO;
# with --json among ARGS it waits for the listening event, else for the "Waiting for files" line.
receiver() {
  local p=$1 who=$2 dir=$3; shift 3
  mkdir -p "$dir"
  start_proc "$p" env P2P_HOME="$(home "$who")" "$LAB" exec B "$P2P" receive --yes --once --name "$who-$TAG" --dir "$dir" "$@"
  if [[ " $* " == *" --json "* ]]; then
    expect_json 20 "$p" "$p listens (receive in B)" event=listening name="$who-$TAG"
  elif wait_for "$(out_of "$p")" "^Waiting for files as $who-$TAG " 20; then
    pass "$p listens (receive in B)"
  else
    fail "$p did not start listening" "$p"
  fi
}
# sender PROC WHO ARGS...: `p2p send ARGS...` in A, named WHO-TAG, identity home-WHO.
sender() {
  local p=$1 who=$2; shift 2
  start_proc "$p" env P2P_HOME="$(home "$who")" "$LAB" exec A "$P2P" send --name "$who-$TAG" --timeout 40 "$@"
}
# same_tree SRC DST DESC: `diff -r` finds no difference.
same_tree() {
  if diff -r "$1" "$2" >"$E2E_TMP/diff.out" 2>&1; then pass "$3"; else fail "$3: diff -r differs" "$E2E_TMP/diff.out"; fi
}
# modes DIR: "relative-path mode" of every file, sorted.
modes() { (cd "$1" && find . -type f -printf '%P %m\n' | LC_ALL=C sort); }
# line_in PROC REGEX DESC: PROC's stdout has a line matching REGEX.
line_in() {
  if grep -qE -- "$2" "$(out_of "$1")"; then pass "$3: $(grep -E -- "$2" "$(out_of "$1")" | head -n 1)"; else fail "$3 (no line matching: $2)" "$1"; fi
}
# whole_final_files SRC DST: every file under its final name in DST (not *.part) has the SHA-256 of
# SRC's file of the same path; prints how many files it checked and their bytes ("N BYTES").
whole_final_files() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import hashlib, os, sys
src, dst = sys.argv[1:]
n = total = 0; bad = []
for root, _, files in os.walk(dst):
    for f in files:
        if f.endswith(".part"): continue
        p = os.path.join(root, f); rel = os.path.relpath(p, dst)
        h = lambda q: hashlib.sha256(open(q, "rb").read()).hexdigest()
        if not os.path.exists(os.path.join(src, rel)) or h(p) != h(os.path.join(src, rel)): bad.append(rel)
        n += 1; total += os.path.getsize(p)
print(n, total)
if bad: print("incomplete or foreign files under their final name:", bad[:10], file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
bytes_of_tree() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }

# ---------------------------------------------------------------- the trees
# many: 99 folders x 100 + 1 x 97 files of 4 KiB random, plus secret.txt (600), run.sh (755) and a leaf
# seven folders deep = 10,000 files; and an empty folder.
SRC=$E2E_TMP/src
"$PYTHON" - "$SRC/many" <<'EOF'
import os, sys
base = sys.argv[1]
for d in range(100):
    os.makedirs(f"{base}/d{d:03}")
    for f in range(97 if d == 99 else 100):
        with open(f"{base}/d{d:03}/f{f:03}.bin", "wb") as out: out.write(os.urandom(4096))
os.makedirs(f"{base}/empty")
os.makedirs(f"{base}/deep/er/and/deeper/still/down/here")
with open(f"{base}/deep/er/and/deeper/still/down/here/leaf.txt", "w") as out: out.write("a leaf seven folders down\n")
with open(f"{base}/secret.txt", "w") as out: out.write("only for me\n")
os.chmod(f"{base}/secret.txt", 0o600)
with open(f"{base}/run.sh", "w") as out: out.write("#!/bin/sh\necho hello\n")
os.chmod(f"{base}/run.sh", 0o755)
EOF
NMANY=$(find "$SRC/many" -type f | wc -l)
check "the source tree has 10,000 files ($NMANY) and an empty folder" [ "$NMANY" = 10000 -a -d "$SRC/many/empty" ]
# cut: a/ (100 x 4 KiB), big1..3.bin (32 MiB each), z/ (100 x 4 KiB); sent in this order.
"$PYTHON" - "$SRC/cut" <<'EOF'
import os, sys
base = sys.argv[1]
for d in ("a", "z"):
    os.makedirs(f"{base}/{d}")
    for f in range(100):
        with open(f"{base}/{d}/s{f:03}.bin", "wb") as out: out.write(os.urandom(4096))
EOF
for i in 1 2 3; do head -c $((32 * MiB)) /dev/urandom >"$SRC/cut/big$i.bin"; done
CUT_BYTES=$(bytes_of_tree "$SRC/cut")
NCUT=$(find "$SRC/cut" -type f | wc -l)   # 203

# ================================================================ 1. 10,000 files by name
log "10,000 files, text output"
# --allow-executable: accepted unasked (--yes), run.sh would otherwise arrive without its execute bits.
receiver rx1 rx1 "$E2E_TMP/in1" --allow-executable
sender tx1 tx1 --to "rx1-$TAG" "$SRC/many"
exits tx1 120 0 "send of the 10,000-file tree succeeds"
log "send has exited"
exits rx1 30 0 "receive --once exits 0 after the tree"
same_tree "$SRC/many" "$E2E_TMP/in1/many" "diff -r: the 10,000-file tree arrived identical"
check "file modes kept (secret.txt 600, run.sh 755, the rest 644)" [ "$(modes "$SRC/many")" = "$(modes "$E2E_TMP/in1/many")" ]
check "secret.txt arrived with mode 600" [ "$(stat -c %a "$E2E_TMP/in1/many/secret.txt" 2>/dev/null)" = 600 ]
check "the empty folder arrived, empty" [ -d "$E2E_TMP/in1/many/empty" -a -z "$(ls -A "$E2E_TMP/in1/many/empty" 2>/dev/null)" ]
check "the file seven folders deep arrived" cmp -s "$SRC/many/deep/er/and/deeper/still/down/here/leaf.txt" "$E2E_TMP/in1/many/deep/er/and/deeper/still/down/here/leaf.txt"
line_in tx1 "^Delivered 10,000 files \(.*\) to rx1-$TAG in [0-9.]+ s \([0-9.]+ [KMG]?i?B/s\), all verified\.$" "send's summary, with its time and rate"
line_in rx1 "^Received 10,000 files \(.*\) from tx1-$TAG in [0-9.]+ s \(.*/s\) into $E2E_TMP/in1; each verified by SHA-256$" "receive's summary"
check "no .part left" [ -z "$(find "$E2E_TMP/in1" -name '*.part')" ]

log "10,000 files, --json on both ends"
receiver rx1j rx1j "$E2E_TMP/in1j" --json
sender tx1j tx1j --json --to "rx1j-$TAG" "$SRC/many"
exits tx1j 120 0 "send --json of the 10,000-file tree succeeds"
exits rx1j 30 0 "receive --json exits 0 after the tree"
same_tree "$SRC/many" "$E2E_TMP/in1j/many" "diff -r: identical again"
expect_json 1 rx1j "receiver's transfer-started announces the tree: files=10000" event=transfer-started name=many/ files=10000
expect_json 1 rx1j "receiver's tree-finished: files=10000 verified=10000 already-there=0 failed=0" \
  event=tree-finished files=10000 verified=10000 already-there=0 failed=0
expect_json 1 tx1j "sender's tree-finished: verified=10000 by rx1j" event=tree-finished direction=sending files=10000 verified=10000 failed=0 peer="rx1j-$TAG"
n=$(count_json rx1j event=file-received tree=many/ already-there=false)
check "one file-received event per file ($n)" [ "$n" = 10000 ]
n=$(count_json rx1j event=transfer-failed)
check "no transfer-failed event ($n)" [ "$n" = 0 ]
rm -rf "$E2E_TMP/in1j"

# ================================================================ 2. resume after kill -9 of the sender
log "resume: kill -9 of the sender mid-tree"
D2=$E2E_TMP/in2
shape on
receiver rx2 rx2 "$D2" --json
sender tx2 tx2 --json --to "rx2-$TAG" "$SRC/cut"
if wait_json 60 rx2 event=file-received name=cut/big1.bin >/dev/null && wait_until 60 part_reaches "$D2/cut/big2.bin.part" $((8 * MiB)); then
  kill -KILL "$(pid_of tx2)"
  wait_exit tx2 5
  expect_json 10 rx2 "receiver reports the vanished sender" event=transfer-failed name=cut/ reason~"disconnected"
  sleep 0.5
  check "receiver keeps running, waiting for the same send again" is_running rx2
  shape off
  part=$(size_of "$D2/cut/big2.bin.part")
  check "the cut file is only big2.bin.part ($part of $((32 * MiB)) bytes), no big2.bin" [ "$part" -gt 0 -a "$part" -lt $((32 * MiB)) -a ! -e "$D2/cut/big2.bin" ]
  if whole=$(whole_final_files "$SRC" "$D2" 2>"$E2E_TMP/whole.err"); then
    pass "while broken, every file under its final name is whole (SHA-256 of the source): $whole (files bytes)"
  else
    fail "while broken, a file under its final name is not the source's" "$E2E_TMP/whole.err"
  fi
  read -r done_files done_bytes <<<"${whole:-0 0}"
  check "files finished before the kill: $done_files (at least a/ and big1.bin)" [ "$done_files" -ge 101 ]
  before=$(tx_bytes)
  sender tx2b tx2 --json --to "rx2-$TAG" "$SRC/cut"
  exits tx2b 60 0 "the same send again completes"
  after=$(tx_bytes)
  exits rx2 30 0 "the receiver (the same process) exits 0 once the tree is complete"
  same_tree "$SRC/cut" "$D2/cut" "diff -r: the resumed tree is identical"
  check "no .part left after the resume" [ -z "$(find "$D2" -name '*.part')" ]
  there=$(get_json rx2 already-there event=tree-finished || echo none)
  check "receiver's tree-finished: already-there=$there = the $done_files files finished before the kill" [ "$there" = "$done_files" ]
  expect_json 1 rx2 "receiver's tree-finished: all $NCUT files, none failed" event=tree-finished files="$NCUT" failed=0 verified=$((NCUT - done_files))
  expect_json 1 tx2b "sender's tree-finished: already-there=$done_files, none failed" event=tree-finished already-there="$done_files" failed=0
  n=$(count_json rx2 event=file-received already-there=true)
  check "a file-received event with already-there for each finished file ($n)" [ "$n" = "$done_files" ]
  resumed=$(get_json rx2 resumed-from event=file-received name=cut/big2.bin || echo 0)
  check "big2.bin's file-received says resumed-from=$resumed = the .part it held ($part)" [ "$resumed" -gt 0 -a "$resumed" = "$part" ]
  expect_json 1 rx2 "big2.bin's file-received carries the source's SHA-256" event=file-received name=cut/big2.bin sha256="$(sha "$SRC/cut/big2.bin")"
  missing=$((CUT_BYTES - done_bytes - part))
  sent=$(get_json rx2 bytes-sent event=tree-finished || echo -1)
  check "tree-finished: bytes-sent=$sent, the $missing missing bytes" [ "$sent" -ge "$missing" -a "$sent" -le $((missing + MiB)) ]
  travelled=$((after - before))
  # TLS records, frame headers and TCP/IP/Ethernet headers add ~4-5 %; a full resend would be $CUT_BYTES.
  check "only the missing bytes crossed A's veth: $travelled for $missing missing (tree $CUT_BYTES)" \
    [ "$travelled" -ge "$missing" -a "$travelled" -le $((missing * 110 / 100 + MiB)) ]
else
  fail "the cut tree never had big1.bin and 8 MiB of big2.bin" rx2 tx2
fi
shape off
stop_proc tx2; stop_proc rx2

# ================================================================ 3. already there
log "already there: the 10,000 files again"
receiver rx3 rx1 "$E2E_TMP/in1" --json
before=$(tx_bytes)
sender tx3 tx1 --to "rx1-$TAG" "$SRC/many"
exits tx3 120 0 "send of a tree the receiver already has succeeds"
after=$(tx_bytes)
exits rx3 30 0 "receive exits 0"
line_in tx3 "^Delivered 10,000 files \(.*\) to rx1-$TAG in [0-9.]+ s, all verified \(all already there: nothing travelled\)\.$" "send says all were already there"
expect_json 1 rx3 "receiver's tree-finished: already-there=10000 verified=0 bytes-sent=0" event=tree-finished files=10000 already-there=10000 verified=0 failed=0 bytes-sent=0
n=$(count_json rx3 event=file-received already-there=true)
check "every file-received says already-there ($n)" [ "$n" = 10000 ]
check "nothing renamed to \"NAME (1)\"" [ -z "$(find "$E2E_TMP/in1" -name '*(1)*' | head -n 3)" ]
n=$(find "$E2E_TMP/in1" -type f | wc -l)
check "still exactly 10,000 files in the receiver's folder ($n)" [ "$n" = 10000 ]
same_tree "$SRC/many" "$E2E_TMP/in1/many" "diff -r: still identical"
travelled=$((after - before))
check "almost nothing crossed A's veth: $travelled bytes (the tree is $((NMANY * 4)) KiB)" [ "$travelled" -lt $((4 * MiB)) ]

# ================================================================ 4. two receivers
log "two receivers: --to r1 --to r2"
S4=two-$TAG
receiver r1 r1 "$E2E_TMP/in4a" --session-id "$S4"
receiver r2 r2 "$E2E_TMP/in4b" --session-id "$S4"
sender tx4 tx4 --session-id "$S4" --to "r1-$TAG" --to "r2-$TAG" "$SRC/many"
exits tx4 120 0 "send --to r1 --to r2 succeeds (both verified)"
log "send --to r1 --to r2 has exited"
exits r1 30 0 "r1 exits 0"
exits r2 30 0 "r2 exits 0"
same_tree "$SRC/many" "$E2E_TMP/in4a/many" "diff -r: r1 has the identical tree"
same_tree "$SRC/many" "$E2E_TMP/in4b/many" "diff -r: r2 has the identical tree"
line_in tx4 "^Delivered 10,000 files \(.*\) to r1-$TAG in .*, all verified\.$" "a Delivered line for r1"
line_in tx4 "^Delivered 10,000 files \(.*\) to r2-$TAG in .*, all verified\.$" "a Delivered line for r2"
n=$(grep -c '^Delivered' "$(out_of tx4)")
check "exactly two Delivered lines ($n)" [ "$n" = 2 ]
line_in r1 "^Received 10,000 files .* from tx4-$TAG .*each verified by SHA-256$" "r1's summary"
line_in r2 "^Received 10,000 files .* from tx4-$TAG .*each verified by SHA-256$" "r2's summary"
rm -rf "$E2E_TMP/in4a" "$E2E_TMP/in4b"

log "two receivers: --all"
S5=all-$TAG
receiver r1all r1 "$E2E_TMP/in5a" --session-id "$S5"
receiver r2all r2 "$E2E_TMP/in5b" --session-id "$S5"
sender tx5 tx4 --session-id "$S5" --all "$SRC/cut"
exits tx5 120 0 "send --all succeeds (both verified)"
log "send --all has exited"
exits r1all 30 0 "r1 exits 0"
exits r2all 30 0 "r2 exits 0"
same_tree "$SRC/cut" "$E2E_TMP/in5a/cut" "diff -r: r1 has the identical tree"
same_tree "$SRC/cut" "$E2E_TMP/in5b/cut" "diff -r: r2 has the identical tree"
line_in tx5 "^Delivered $NCUT files \(.*\) to r1-$TAG in .*, all verified\.$" "--all: a Delivered line for r1"
line_in tx5 "^Delivered $NCUT files \(.*\) to r2-$TAG in .*, all verified\.$" "--all: a Delivered line for r2"
n=$(grep -c '^Delivered' "$(out_of tx5)")
check "--all: exactly two Delivered lines ($n)" [ "$n" = 2 ]

# ================================================================ 5. 120,000 empty files, --json on both ends
# The per-file events of a huge tree reach both --json outputs, all of them and in the same order: the
# event stream waits for its reader instead of dropping (at 120,000 files the sender used to print
# 74,000 file-sent events and "missed N transfer events").
log "120,000 empty files, --json on both ends"
"$PYTHON" - "$SRC/wide" <<'EOF2'
import os, sys
base = sys.argv[1]
for d in range(120):
    os.makedirs(f"{base}/d{d:03}")
    for f in range(1000):
        open(f"{base}/d{d:03}/e{f:04}", "wb").close()
EOF2
receiver rx6 rx6 "$E2E_TMP/in6" --json
sender tx6 tx6 --json --to "rx6-$TAG" "$SRC/wide"
exits tx6 600 0 "send --json of 120,000 empty files succeeds"
exits rx6 60 0 "receive --json exits 0 after them"
expect_json 1 tx6 "sender's tree-finished: files=120000 verified=120000" event=tree-finished direction=sending files=120000 verified=120000 failed=0
expect_json 1 rx6 "receiver's tree-finished: files=120000 verified=120000" event=tree-finished files=120000 verified=120000 failed=0
# sequence PROC EVENT: the names of PROC's EVENT lines, in the order printed.
sequence() { "$PYTHON" -c 'import json,sys
for line in open(sys.argv[1]):
    try: o = json.loads(line)
    except ValueError: continue
    if o.get("event") == sys.argv[2]: print(o.get("name"))' "$(out_of "$1")" "$2"; }
sequence tx6 file-sent >"$E2E_TMP/sent.names"
sequence rx6 file-received >"$E2E_TMP/received.names"
n=$(wc -l <"$E2E_TMP/sent.names")
check "the sender printed a file-sent event per file ($n of 120000)" [ "$n" = 120000 ]
n=$(sort -u "$E2E_TMP/sent.names" | wc -l)
check "each file once ($n different names)" [ "$n" = 120000 ]
n=$(wc -l <"$E2E_TMP/received.names")
check "the receiver printed a file-received event per file ($n of 120000)" [ "$n" = 120000 ]
check "both ends printed the files in the same order" cmp -s "$E2E_TMP/sent.names" "$E2E_TMP/received.names"
check "neither end missed an event" bash -c '! grep -q "missed [0-9]* transfer events" "$1" "$2" "$3" "$4"' _ \
  "$(out_of tx6)" "$E2E_TMP/tx6.err" "$(out_of rx6)" "$E2E_TMP/rx6.err"
n=$(find "$E2E_TMP/in6/wide" -type f | wc -l)
check "120,000 files arrived ($n)" [ "$n" = 120000 ]
rm -rf "$E2E_TMP/in6" "$SRC/wide"

# ---- nothing left behind
for p in "${PROC_ORDER[@]}"; do stop_proc "$p"; done
run "$LAB" down >>"$E2E_TMP/lab.log" 2>&1
check "lab down leaves no namespace" lab_absent
check "lab down reported no leftover processes" bash -c '! grep -q "processes still running" "$1"' _ "$E2E_TMP/lab.log"

finish
