#!/usr/bin/env bash
# p2p as a LocalSend receiver, against two independent LocalSend implementations from PyPI, in the lab
# (namespaces A 10.213.7.1 (+ .3) and B 10.213.7.2, a multicast route 224.0.0.0/4 on each veth; LocalSend
# never runs in the root namespace):
#  - `localsendd` (v2.2) in A lists `p2p receive --localsend` (B) with the fingerprint of the certificate p2p
#    serves (read with openssl) and that `p2p id` shows; p2p's JSON names localsendd as a LocalSend device;
#  - files: `localsendctl send` (v2.2) and `localsend-cli send` (v2.0) → bytes equal on p2p's side;
#  - a text (one file whose preview holds it, as the apps send one) → 204 and p2p's {"event":"text"};
#  - bad input from a raw client (curl): malformed JSON 400, oversized JSON 413, `..` and absolute names 400
#    (nothing written outside --dir), another session meanwhile 409, a wrong token 403, the right token from
#    another IP 403, more or fewer bytes than announced 400 and nothing kept under the name (no .part either),
#    a wrong sha256 400 and nothing kept, an upload after cancel 403; hidden paths as for p2p offers (a single one
#    403; in a folder: no token, reported skipped, not written); a cancel mid-upload keeps nothing; a flood of
#    3,000 fake announcements and 300 register calls leaves memory flat;
#  - p2p → localsendd: `p2p peers --localsend` lists it (alias, model, fingerprint, address:port, protocol,
#    version); `p2p send --localsend` a file and a folder (bytes equal), a text; its PIN: exit 6 without, sent with;
#  - a PIN: 401 without, 401 wrong (three times), then 429 from that address even with the right PIN; the right
#    PIN from another address: accepted, bytes equal;
#  - the question on a terminal (tmux): it names `Linux "anna" (LocalSend, not verified by key)`; n → localsendd
#    reports declined and nothing is written; y → the file arrives and the summary names the device too; a file
#    whose sender gave no sha256 (curl) is summed up as `size checked; the sender gave no SHA-256`, never verified;
#  - what was checked: the JSON `file-received` says `check: sha256` for localsendctl's and localsend-cli's files
#    (both send a sha256) and `check: size` for a raw client's upload without one;
#  - idle and slow connections (a raw TLS client sending half a request head, one sending half a body, a TCP
#    connection that never starts TLS) are closed by p2p after its documented 30 s, and p2p goes on;
#  - p2p → localsendd: `--to` 4 characters of its fingerprint → exit 4, nothing sent (a prefix under 80 bits
#    authorizes nothing), 20 characters → sent; a person declining there (localsendctl reject) → exit 6 and
#    `anna declined`; Ctrl-C on p2p mid-upload → exit 7, localsendd told (its session ends, nothing kept);
#    localsendd cancelling mid-upload (localsendctl cancel, the link slowed by tc) → p2p stops
#    with exit 8 saying so, and localsendd keeps nothing.
# Needs root (lab), localsendd, localsend-cli, curl, openssl, tmux (scripts/setup.sh installs them).
. "$(dirname "$0")/lib.sh"
need ip tmux curl openssl tc localsendd localsendctl localsend-cli
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2pls$$}
PREFIX=$P2P_LAB_PREFIX
. "$E2E_DIR/tmux_lab.sh"
ADDR_A=10.213.7.1 ADDR_A2=10.213.7.3 ADDR_B=10.213.7.2
ip -n "${PREFIX}A" route add 224.0.0.0/4 dev "${PREFIX}vA"
ip -n "${PREFIX}B" route add 224.0.0.0/4 dev "${PREFIX}vB"
# A second address on A: "another IP" for the token check and the per-address PIN limit.
ip -n "${PREFIX}A" addr add "$ADDR_A2/24" dev "${PREFIX}vA"

HA=$E2E_TMP/anna; mkdir -p "$HA/dl" "$HA/files"
ENV_A=(env HOME="$HA" XDG_RUNTIME_DIR="$HA" XDG_CONFIG_HOME="$HA/config" XDG_STATE_HOME="$HA/state")
inA() { run "$LAB" exec A "${ENV_A[@]}" "$@"; }
lsctl() { inA localsendctl "$@"; }
BOB=$(home bob)
DL=$E2E_TMP/dl; mkdir -p "$DL"
API=https://$ADDR_B:53317/api/localsend/v2

# hcurl SOURCE OUT METHOD PATH [CURL-ARGS...]: a request from A's address SOURCE; prints the status, body in OUT.
hcurl() {
  local source=$1 out=$2 method=$3 path=$4; shift 4
  inA curl -sk --max-time 60 --interface "$source" -o "$out" -w '%{http_code}' -X "$method" "$API/$path" "$@"
}
status_is() { # DESC WANT GOT [BODY-FILE]
  if [ "$2" = "$3" ]; then pass "$1 ($3)"; else fail "$1: HTTP $3, expected $2" "${4:-/dev/null}"; fi
}
# prepare_json FILE ALIAS [ID NAME SIZE [SHA256]]...: a prepare-upload body.
prepare_json() {
  "$PYTHON" - "$@" <<'EOF'
import json, sys
out, alias, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
files = {}
while rest:
    fid, name, size = rest[0], rest[1], int(rest[2]); rest = rest[3:]
    entry = {"id": fid, "fileName": name, "size": size, "fileType": "application/octet-stream"}
    if rest and len(rest[0]) == 64: entry["sha256"] = rest.pop(0)
    files[fid] = entry
info = {"alias": alias, "version": "2.1", "deviceModel": "curl", "deviceType": "headless", "fingerprint": "curl-" + alias,
        "port": 53317, "protocol": "https", "download": False}
json.dump({"info": info, "files": files}, open(out, "w"))
EOF
}
tokens() { "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["sessionId"], *[d["files"].get(k, "-") for k in sys.argv[2:]])' "$@"; }

log "localsendd in A, p2p receive --localsend --yes --json in B"
start_proc lsd "$LAB" exec A "${ENV_A[@]}" localsendd --alias anna --unattended --download-dir "$HA/dl" --log-level info
start_proc recv "$LAB" exec B env P2P_HOME="$BOB" "$P2P" receive --localsend --yes --json --dir "$DL" --name bob
expect_json 20 recv "p2p listens for LocalSend (version 2.2, port 53317)" event=localsend-listening port=53317 version=2.2
# Idle and slow clients, in the background while the rest runs: each waits for p2p to close its connection.
inA "$PYTHON" "$E2E_DIR/slow_http.py" "$ADDR_B" 53317 90 >"$E2E_TMP/slow.out" 2>&1 &
SLOW=$!

# ---------------------------------------------------------------- discovery and the fingerprint
OURS=$(run env P2P_HOME="$BOB" "$P2P" id --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["localsendFingerprint"])')
SERVED=$(inA sh -c "openssl s_client -connect $ADDR_B:53317 </dev/null 2>/dev/null | openssl x509 -outform DER | sha256sum" | cut -c1-64 | tr a-f A-F)
if [ -n "$OURS" ] && [ "$OURS" = "$SERVED" ]; then pass "p2p id's LocalSend fingerprint is the SHA-256 of the certificate p2p serves"
else fail "fingerprint: p2p id says '$OURS', the served certificate hashes to '$SERVED'"; fi
listed() { lsctl devices --json 2>/dev/null | "$PYTHON" -c 'import json,sys; print(" ".join(d["alias"]+"="+d["fingerprint"] for d in json.load(sys.stdin)))' 2>/dev/null | grep -q "bob=$OURS"; }
if wait_until 20 listed; then pass "localsendctl devices lists bob with p2p's fingerprint"
else fail "localsendctl devices does not list bob=$OURS: $(lsctl devices --json | tr -d '\n')" lsd; fi
expect_json 20 recv "p2p heard localsendd (alias, model, address)" event=localsend-device alias=anna address=$ADDR_A deviceModel=Linux

# ---------------------------------------------------------------- files from both implementations
head -c 3000001 /dev/urandom >"$HA/files/photo one.jpg"
if lsctl send "$HA/files/photo one.jpg" --to bob --wait >"$E2E_TMP/send1.log" 2>&1 && wait_json 20 recv event=file-received "name=photo one.jpg" >/dev/null \
   && cmp -s "$HA/files/photo one.jpg" "$DL/photo one.jpg"; then pass "localsendctl send (v2.2) → p2p: bytes equal"
else fail "localsendctl send → p2p" recv "$E2E_TMP/send1.log"; fi
expect_json 5 recv "the JSON events name the LocalSend sender and its kind" event=transfer-started "name=photo one.jpg" peer=anna kind=localsend
expect_json 5 recv "localsendctl gave a sha256: p2p says it checked it (check sha256)" event=file-received "name=photo one.jpg" check=sha256

head -c 70000 /dev/urandom >"$HA/files/a.bin"; printf 'second file\n' >"$HA/files/b.txt"
if inA env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE localsend-cli send "$ADDR_B" "$HA/files/a.bin" "$HA/files/b.txt" --json >"$E2E_TMP/cli.log" 2>&1 \
   && wait_json 20 recv event=file-received name=b.txt >/dev/null && wait_json 5 recv event=file-received name=a.bin >/dev/null \
   && cmp -s "$HA/files/a.bin" "$DL/a.bin" && cmp -s "$HA/files/b.txt" "$DL/b.txt"; then pass "localsend-cli send (v2.0), two files → p2p: bytes equal"
else fail "localsend-cli send → p2p" recv "$E2E_TMP/cli.log"; fi
expect_json 5 recv "localsend-cli gave a sha256: checked (check sha256)" event=file-received name=a.bin check=sha256

# ---------------------------------------------------------------- a text
"$PYTHON" - "$E2E_TMP/text.json" <<'EOF'
import json, sys
text = "Hello from a phone\nsecond line"
json.dump({"info": {"alias": "carol", "version": "2.1", "deviceModel": "Pixel 7", "deviceType": "mobile", "fingerprint": "f-carol"},
           "files": {"t": {"id": "t", "fileName": "message.txt", "size": len(text.encode()), "fileType": "text/plain", "preview": text}}},
          open(sys.argv[1], "w"))
EOF
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload -H 'content-type: application/json' --data-binary @"$E2E_TMP/text.json")
status_is "a text message is answered 204" 204 "$code" "$E2E_TMP/r.txt"
expect_json 10 recv "the text is shown as a p2p text is (event text, from carol)" event=text peer=carol "text=Hello from a phone
second line"
[ ! -e "$DL/message.txt" ] && pass "the text was not written into --dir" || fail "a text landed in --dir"

# ---------------------------------------------------------------- bad input
printf '{"info": {"alias": ' >"$E2E_TMP/bad.json"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/bad.json"); status_is "malformed JSON → 400" 400 "$code" "$E2E_TMP/r.txt"
"$PYTHON" -c 'import json; print(json.dumps({"info": {"alias": "x" * (2 << 20)}}))' >"$E2E_TMP/big.json"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/big.json"); status_is "a 2 MiB JSON body → 413 (limit 1 MiB)" 413 "$code" "$E2E_TMP/r.txt"
prepare_json "$E2E_TMP/dots.json" mallory f1 ../escape.txt 5
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/dots.json"); status_is "fileName ../escape.txt → 400" 400 "$code" "$E2E_TMP/r.txt"
prepare_json "$E2E_TMP/abs.json" mallory f1 /tmp/p2p-ls-absolute.txt 5
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/abs.json"); status_is "an absolute fileName → 400" 400 "$code" "$E2E_TMP/r.txt"
[ ! -e "$E2E_TMP/escape.txt" ] && [ ! -e /tmp/p2p-ls-absolute.txt ] && pass "nothing written outside --dir" || fail "a file escaped --dir"

prepare_json "$E2E_TMP/hidden1.json" mallory f1 .bashrc 5
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/hidden1.json"); status_is "a single hidden file accepted by --yes (no --allow-hidden) → 403" 403 "$code" "$E2E_TMP/r.txt"
prepare_json "$E2E_TMP/hidden2.json" mallory f1 dot/.profile 5 f2 dot/ok.txt 3
code=$(hcurl $ADDR_A "$E2E_TMP/s0.json" POST prepare-upload --data-binary @"$E2E_TMP/hidden2.json"); status_is "a folder with a hidden file → 200" 200 "$code" "$E2E_TMP/s0.json"
read -r SID T1 T2 < <(tokens "$E2E_TMP/s0.json" f1 f2)
[ "$T1" = - ] && [ "$T2" != - ] && pass "the hidden file gets no token, the other one does" || fail "tokens: hidden=$T1 other=$T2"
printf 'abc' >"$E2E_TMP/three"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f2&token=$T2" --data-binary @"$E2E_TMP/three"); status_is "the folder's other file → 200" 200 "$code" "$E2E_TMP/r.txt"
expect_json 10 recv "the hidden file is reported skipped" event=file-skipped name=dot/.profile
[ -f "$DL/dot/ok.txt" ] && [ ! -e "$DL/dot/.profile" ] && pass "dot/ok.txt written, dot/.profile not" || fail "hidden file handling: $(ls -A "$DL/dot" 2>&1 | tr '\n' ' ')"
prepare_json "$E2E_TMP/two.json" mallory f1 over.bin 10 f2 short.bin 100
code=$(hcurl $ADDR_A "$E2E_TMP/s1.json" POST prepare-upload --data-binary @"$E2E_TMP/two.json"); status_is "a valid prepare-upload → 200" 200 "$code" "$E2E_TMP/s1.json"
read -r SID T1 T2 < <(tokens "$E2E_TMP/s1.json" f1 f2)
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/two.json"); status_is "another session meanwhile → 409" 409 "$code" "$E2E_TMP/r.txt"
head -c 10 /dev/urandom >"$E2E_TMP/ten"; head -c 20 /dev/urandom >"$E2E_TMP/twenty"; head -c 50 /dev/urandom >"$E2E_TMP/fifty"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=wrong" --data-binary @"$E2E_TMP/ten"); status_is "a wrong token → 403" 403 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "the right token from another IP → 403" 403 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/twenty"); status_is "20 bytes for a file offered as 10 → 400" 400 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f2&token=$T2" --data-binary @"$E2E_TMP/fifty"); status_is "50 bytes for a file offered as 100 → 400" 400 "$code" "$E2E_TMP/r.txt"
expect_json 5 recv "p2p reports the short file as failed (size mismatch)" name=short.bin "reason~size mismatch"
ls "$DL" >"$E2E_TMP/dl.txt"
if ! grep -qE '^(over|short)\.bin' "$E2E_TMP/dl.txt"; then pass "nothing kept under either name (no .part either)"; else fail "kept: $(tr '\n' ' ' <"$E2E_TMP/dl.txt")"; fi
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "an upload once the session is over → 403" 403 "$code" "$E2E_TMP/r.txt"

prepare_json "$E2E_TMP/sha.json" mallory f1 hashed.bin 10 "$(printf '0%.0s' $(seq 64))"
prepare_json "$E2E_TMP/bare.json" carol f1 bare.bin 10
code=$(hcurl $ADDR_A "$E2E_TMP/s5.json" POST prepare-upload --data-binary @"$E2E_TMP/bare.json"); status_is "prepare-upload without a sha256 → 200" 200 "$code" "$E2E_TMP/s5.json"
read -r SID T1 < <(tokens "$E2E_TMP/s5.json" f1)
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "its upload → 200" 200 "$code" "$E2E_TMP/r.txt"
expect_json 10 recv "no sha256 given: p2p says only the size was checked (check size)" event=file-received name=bare.bin check=size
cmp -s "$E2E_TMP/ten" "$DL/bare.bin" && pass "bare.bin: bytes equal" || fail "bare.bin differs"
code=$(hcurl $ADDR_A "$E2E_TMP/s2.json" POST prepare-upload --data-binary @"$E2E_TMP/sha.json"); status_is "prepare-upload with a sha256 → 200" 200 "$code" "$E2E_TMP/s2.json"
read -r SID T1 < <(tokens "$E2E_TMP/s2.json" f1)
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "bytes that do not hash to the sender's sha256 → 400" 400 "$code" "$E2E_TMP/r.txt"
[ ! -e "$DL/hashed.bin" ] && [ ! -e "$DL/hashed.bin.part" ] && pass "nothing kept after the SHA-256 mismatch" || fail "hashed.bin kept"

prepare_json "$E2E_TMP/cancel.json" mallory f1 cancelled.bin 10
code=$(hcurl $ADDR_A "$E2E_TMP/s3.json" POST prepare-upload --data-binary @"$E2E_TMP/cancel.json"); status_is "prepare-upload → 200" 200 "$code" "$E2E_TMP/s3.json"
read -r SID T1 < <(tokens "$E2E_TMP/s3.json" f1)
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "cancel?sessionId=$SID"); status_is "cancel → 200" 200 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "an upload after cancel → 403" 403 "$code" "$E2E_TMP/r.txt"
[ ! -e "$DL/cancelled.bin" ] && pass "nothing written for the cancelled session" || fail "cancelled.bin written"
# A cancel in the middle of an upload (curl held to 200 KB/s): the upload ends, nothing is kept.
head -c 5000000 /dev/urandom >"$E2E_TMP/five-mb"
prepare_json "$E2E_TMP/mid.json" mallory f1 midway.bin 5000000
code=$(hcurl $ADDR_A "$E2E_TMP/s4.json" POST prepare-upload --data-binary @"$E2E_TMP/mid.json"); status_is "prepare-upload of 5 MB → 200" 200 "$code" "$E2E_TMP/s4.json"
read -r SID T1 < <(tokens "$E2E_TMP/s4.json" f1)
inA curl -sk --limit-rate 200K -o "$E2E_TMP/mid.txt" -w '%{http_code}' -X POST "$API/upload?sessionId=$SID&fileId=f1&token=$T1" -T "$E2E_TMP/five-mb" >"$E2E_TMP/mid.code" 2>&1 &
MID=$!
if wait_until 15 test -s "$DL/midway.bin.part"; then pass "the upload is under way (midway.bin.part grows)"; else fail "no midway.bin.part"; fi
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "cancel?sessionId=$SID"); status_is "cancel mid-upload → 200" 200 "$code" "$E2E_TMP/r.txt"
wait "$MID"
expect_json 10 recv "p2p reports the transfer cancelled by the sender" event=transfer-failed name=midway.bin "reason~cancelled by the peer"
if wait_until 10 bash -c '! ls "$1"/midway.bin* >/dev/null 2>&1' _ "$DL"; then pass "nothing kept of the cancelled upload (neither midway.bin nor its .part)"
else fail "kept after cancel: $(ls "$DL" | grep midway)"; fi
# A flood of fake devices: 3,000 multicast announcements and 300 register calls, each with its own fingerprint.
RECV_PID=$(pid_of recv)
rss() { awk '/VmRSS/ {print $2}' "/proc/$RECV_PID/status"; }
BEFORE=$(rss)
inA "$PYTHON" - "$ADDR_B" <<'PY' >"$E2E_TMP/flood.log" 2>&1
import json, socket, ssl, sys, http.client
target = sys.argv[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
for i in range(3000):
    info = {"alias": "fake-%d-" % i + "x" * 200, "version": "2.1", "deviceModel": "m" * 300, "deviceType": "mobile",
            "fingerprint": "FAKE%06d" % i, "port": 9, "protocol": "https", "announce": False}
    udp.sendto(json.dumps(info).encode(), ("224.0.0.167", 53317))
context = ssl._create_unverified_context()
ok = 0
for i in range(300):
    conn = http.client.HTTPSConnection(target, 53317, context=context, timeout=5)
    body = json.dumps({"alias": "reg-%d" % i, "version": "2.1", "fingerprint": "REG%06d" % i, "port": 9, "protocol": "https"})
    conn.request("POST", "/api/localsend/v2/register", body=body, headers={"content-type": "application/json"})
    ok += conn.getresponse().status == 200
    conn.close()
print("register-ok", ok)
PY
AFTER=$(rss)
HEARD=$(count_json recv event=localsend-device "alias~fake-")
if [ "$HEARD" -gt 100 ]; then pass "the fake announcements were heard ($HEARD devices reported)"; else fail "only $HEARD fake devices heard" recv; fi
if grep -q "register-ok 300" "$E2E_TMP/flood.log"; then pass "300 register calls from fake devices answered"; else fail "register flood" "$E2E_TMP/flood.log"; fi
if [ -n "$BEFORE" ] && [ -n "$AFTER" ] && [ $((AFTER - BEFORE)) -lt 16384 ]; then pass "memory bounded under the flood (RSS $BEFORE → $AFTER KiB)"
else fail "RSS grew from $BEFORE to $AFTER KiB under the flood"; fi
wait "$SLOW"
for case in half-header half-body silent-tcp; do
  seconds=$(awk -v c="$case" '$1 == "closed" && $2 == c {print $3}' "$E2E_TMP/slow.out")
  if [ -n "$seconds" ] && awk -v s="$seconds" 'BEGIN {exit !(s >= 25 && s <= 45)}'; then pass "a $case connection is closed by p2p after ${seconds} s (documented: 30 s)"
  else fail "a $case connection: ${seconds:-not closed} (expected closed after about 30 s)" "$E2E_TMP/slow.out"; fi
done
if is_running recv; then pass "p2p receive is still up after the bad input"; else fail "p2p receive died" recv; fi
stop_proc recv

# ---------------------------------------------------------------- p2p → localsendd
log "p2p peers --localsend and p2p send --localsend in B, to localsendd in A"
THEIRS=$(lsctl status --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["self"]["fingerprint"])')
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" peers --localsend --json --timeout 4 >"$E2E_TMP/peers.out" 2>"$E2E_TMP/peers.err"
if "$PYTHON" "$E2E_DIR/jsonl.py" wait 1 "$E2E_TMP/peers.out" event=peer-found kind=localsend name=anna model=Linux "fingerprint=$THEIRS" "address=$ADDR_A:53317" protocol=https version=2.2 >/dev/null
then pass "p2p peers --localsend lists localsendd: alias, model, fingerprint, address:port, protocol, version"
else fail "p2p peers --localsend" "$E2E_TMP/peers.out" "$E2E_TMP/peers.err"; fi
mkdir -p "$E2E_TMP/out/album"; head -c 2500000 /dev/urandom >"$E2E_TMP/out/big.bin"; head -c 777 /dev/urandom >"$E2E_TMP/out/album/pic.jpg"
if run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/big.bin" "$E2E_TMP/out/album" --to anna --json >"$E2E_TMP/sendls.out" 2>"$E2E_TMP/sendls.err" \
   && wait_until 10 cmp -s "$E2E_TMP/out/big.bin" "$HA/dl/big.bin" && wait_until 10 cmp -s "$E2E_TMP/out/album/pic.jpg" "$HA/dl/pic.jpg"
then pass "p2p send --localsend a file and a folder → localsendd: bytes equal"
else fail "p2p send --localsend → localsendd" "$E2E_TMP/sendls.out" "$E2E_TMP/sendls.err" lsd; fi
if run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend --text "hello anna" --to anna >"$E2E_TMP/sendtext.out" 2>&1 \
   && grep -q 'Delivered a text (10 characters) to Linux "anna" (LocalSend, not verified by key)' "$E2E_TMP/sendtext.out"
then pass "p2p send --localsend --text → localsendd: delivered"
else fail "p2p send --localsend --text" "$E2E_TMP/sendtext.out"; fi
# A fingerprint prefix shorter than 80 bits authorizes nothing (anyone grinds a certificate that starts so);
# 20 characters do.
ls "$HA/dl" >"$E2E_TMP/dl-before.txt"
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/album/pic.jpg" --to "${THEIRS:0:4}" >"$E2E_TMP/short.out" 2>&1; rc=$?
if [ "$rc" = 4 ] && grep -q "fits Linux \"anna\" (LocalSend, not verified by key) only by the start of its fingerprint" "$E2E_TMP/short.out" \
   && grep -q -- "--to anna" "$E2E_TMP/short.out" && grep -q -- "--to $THEIRS" "$E2E_TMP/short.out"
then pass "--to 4 characters of localsendd's fingerprint: exit 4, saying to give its alias or full fingerprint"
else fail "--to ${THEIRS:0:4}: exit $rc" "$E2E_TMP/short.out"; fi
ls "$HA/dl" | cmp -s - "$E2E_TMP/dl-before.txt" && pass "nothing was sent on a short prefix" || fail "a file arrived on a short prefix: $(ls "$HA/dl")"
if run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/album/pic.jpg" --to "${THEIRS:0:20}" >"$E2E_TMP/long.out" 2>&1 \
   && grep -q 'Sent 1 file' "$E2E_TMP/long.out"; then pass "--to 20 characters (80 bits) of its fingerprint: sent"
else fail "--to ${THEIRS:0:20}" "$E2E_TMP/long.out"; fi

# A person at localsendd declines: a control client attached (localsendctl watch), the offer waits for its
# answer, localsendctl reject → 403; p2p says the device declined, exit 6.
start_proc lswatch "$LAB" exec A "${ENV_A[@]}" env PYTHONUNBUFFERED=1 localsendctl watch --json
wait_until 10 test -s "$E2E_TMP/lswatch.out" || fail "localsendctl watch did not attach" lswatch
incoming() { lsctl status --json | "$PYTHON" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("incoming") else 1)'; }
ls "$HA/dl" >"$E2E_TMP/dl-before.txt"
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/album/pic.jpg" --to anna >"$E2E_TMP/declined.out" 2>&1 &
DECLINED=$!
if wait_until 20 incoming; then pass "localsendd, with a person attached, asks about the offer"; lsctl reject >/dev/null
else fail "localsendd never showed the offer" lswatch; fi
wait "$DECLINED"; rc=$?
if [ "$rc" = 6 ] && grep -q 'p2p: anna declined' "$E2E_TMP/declined.out"; then pass "declined at localsendd: p2p says anna declined, exit 6"
else fail "declined send: exit $rc" "$E2E_TMP/declined.out"; fi
ls "$HA/dl" | cmp -s - "$E2E_TMP/dl-before.txt" && pass "nothing written at localsendd after the decline" || fail "written after a decline: $(ls "$HA/dl")"
stop_proc lswatch

# localsendd cancels mid-upload (localsendctl cancel; B's link held to 16 Mbit/s so that the upload lasts).
head -c 30000000 /dev/urandom >"$E2E_TMP/out/slow.bin"
run "$LAB" exec B tc qdisc add dev "${PREFIX}vB" root tbf rate 16mbit burst 64kb latency 500ms
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/slow.bin" --to anna >"$E2E_TMP/cancelled.out" 2>&1 &
CANCELLED=$!
transferring() { lsctl status --json | "$PYTHON" -c 'import json,sys; a=json.load(sys.stdin).get("active") or {}; sys.exit(0 if a.get("phase") == "transferring" and (a.get("bytesDone") or 0) > 0 else 1)'; }
if wait_until 30 transferring; then pass "the upload to localsendd is under way"; lsctl cancel >/dev/null; else fail "the upload never started" lsd; fi
wait "$CANCELLED"; rc=$?
run "$LAB" exec B tc qdisc del dev "${PREFIX}vB" root
if [ "$rc" = 8 ] && grep -q 'p2p: anna: the upload of slow.bin broke off .*cancelled or failed on the device' "$E2E_TMP/cancelled.out"; then pass "cancelled at localsendd mid-upload: p2p stops, exit 8: $(tail -n 1 "$E2E_TMP/cancelled.out")"
else fail "send cancelled at localsendd: exit $rc" "$E2E_TMP/cancelled.out"; fi
if wait_until 10 bash -c '! ls "$1"/slow* >/dev/null 2>&1' _ "$HA/dl"; then pass "localsendd kept nothing of the cancelled upload"
else fail "kept at localsendd: $(ls "$HA/dl")"; fi

# Ctrl-C on p2p mid-upload: the upload stops, localsendd is told (LocalSend's cancel: its session ends at
# once instead of holding the device busy), p2p says what happened and exits 7.
run "$LAB" exec B tc qdisc add dev "${PREFIX}vB" root tbf rate 16mbit burst 64kb latency 500ms
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/slow.bin" --to anna >"$E2E_TMP/interrupted.out" 2>&1 &
INTERRUPTED=$!
if wait_until 30 transferring; then pass "the upload to localsendd is under way again"; pkill -INT -f -- "send --localsend $E2E_TMP/out/slow.bin"
else fail "the second upload never started" lsd; fi
wait "$INTERRUPTED"; rc=$?
run "$LAB" exec B tc qdisc del dev "${PREFIX}vB" root
if [ "$rc" = 7 ] && grep -q 'p2p: cancelled before any file went whole; anna was told, and keeps no part of the file under way' "$E2E_TMP/interrupted.out"
then pass "Ctrl-C on p2p mid-upload: exit 7: $(tail -n 1 "$E2E_TMP/interrupted.out")"
else fail "Ctrl-C on send --localsend: exit $rc" "$E2E_TMP/interrupted.out"; fi
idle() { lsctl status --json | "$PYTHON" -c 'import json,sys; sys.exit(1 if json.load(sys.stdin).get("active") else 0)'; }
if wait_until 10 idle; then pass "localsendd ended the session on p2p's cancel (not busy)"; else fail "localsendd still holds the cancelled session" lsd; fi
if wait_until 10 bash -c '! ls "$1"/slow* >/dev/null 2>&1' _ "$HA/dl"; then pass "localsendd kept nothing of the interrupted upload"
else fail "kept at localsendd after Ctrl-C: $(ls "$HA/dl")"; fi

lsctl pin 9999 >/dev/null
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/big.bin" --to anna >"$E2E_TMP/nopin.out" 2>&1; rc=$?
if [ "$rc" = 6 ] && grep -q 'wants a PIN (401): add --pin PIN' "$E2E_TMP/nopin.out"; then pass "a device that wants a PIN: exit 6 and what to add"
else fail "send without the PIN localsendd wants: exit $rc" "$E2E_TMP/nopin.out"; fi
rm -f "$HA/dl/big (1).bin"
if run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/album/pic.jpg" --pin 9999 --to anna >"$E2E_TMP/pin-ok.out" 2>&1 \
   && grep -q 'Sent 1 file' "$E2E_TMP/pin-ok.out"; then pass "with --pin: sent"
else fail "send --pin 9999" "$E2E_TMP/pin-ok.out"; fi
lsctl pin --clear >/dev/null
# A p2p peer also called anna (a p2p receive in A): --to anna fits both kinds → exit 3 with both listed.
mkdir -p "$E2E_TMP/anna2p"
start_proc anna2p "$LAB" exec A env P2P_HOME="$(home anna2p)" "$P2P" receive --json --name anna --dir "$E2E_TMP/anna2p"
expect_json 15 anna2p "a p2p peer named anna listens in A" event=listening
# A person's p2p anna has been up a while: B's mDNS shows her before the send (a peer that appears later than
# the send's second of looking is not part of its decision, as for any p2p send).
anna_seen() { run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" peers --timeout 1 --json 2>/dev/null | grep -q '"name" *: *"anna"'; }
if wait_until 20 anna_seen; then pass "B's p2p peers lists the p2p peer anna"; else fail "B never saw the p2p peer anna" anna2p; fi
run "$LAB" exec B env P2P_HOME="$BOB" "$P2P" send --localsend "$E2E_TMP/out/big.bin" --to anna >"$E2E_TMP/ambiguous.out" 2>&1; rc=$?
if [ "$rc" = 3 ] && grep -q 'fits a p2p peer and a LocalSend device' "$E2E_TMP/ambiguous.out" && grep -q '(p2p)' "$E2E_TMP/ambiguous.out" \
   && grep -q 'LocalSend, not verified by key' "$E2E_TMP/ambiguous.out"; then pass "--to a name of a p2p peer and of a LocalSend device: exit 3, both listed"
else fail "ambiguous --to: exit $rc" "$E2E_TMP/ambiguous.out"; fi
stop_proc anna2p

# ---------------------------------------------------------------- a PIN
log "p2p receive --localsend --pin 4321"
start_proc pin "$LAB" exec B env P2P_HOME="$BOB" "$P2P" receive --localsend --pin 4321 --yes --json --dir "$DL" --name bob
expect_json 20 pin "p2p listens with a PIN (on 53317: the port is free again)" event=localsend-listening pin=true port=53317
prepare_json "$E2E_TMP/pin.json" guesser f1 guessed.bin 10
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST prepare-upload --data-binary @"$E2E_TMP/pin.json"); status_is "no PIN → 401" 401 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST "prepare-upload?pin=0000" --data-binary @"$E2E_TMP/pin.json"); status_is "a wrong PIN → 401" 401 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST "prepare-upload?pin=1111" --data-binary @"$E2E_TMP/pin.json"); status_is "a wrong PIN again → 401" 401 "$code" "$E2E_TMP/r.txt"
code=$(hcurl $ADDR_A2 "$E2E_TMP/r.txt" POST "prepare-upload?pin=4321" --data-binary @"$E2E_TMP/pin.json"); status_is "after three wrong tries, even the right PIN → 429" 429 "$code" "$E2E_TMP/r.txt"
head -c 12345 /dev/urandom >"$HA/files/pinned.bin"
if lsctl send "$HA/files/pinned.bin" --to bob --pin 4321 --wait >"$E2E_TMP/send-pin.log" 2>&1 && wait_json 20 pin event=file-received name=pinned.bin >/dev/null \
   && cmp -s "$HA/files/pinned.bin" "$DL/pinned.bin"; then pass "the right PIN from another address (localsendctl --pin) → accepted, bytes equal"
else fail "localsendctl send --pin" pin "$E2E_TMP/send-pin.log"; fi
stop_proc pin

# ---------------------------------------------------------------- the question, on a terminal
log "p2p receive --localsend on a terminal in B"
DL3=$E2E_TMP/dl3; mkdir -p "$DL3"
open_terminal rx bob B 200 40 "$P2P" receive --localsend --dir "$DL3" --name bob
see 20 rx 'LocalSend: receiving as bob on HTTPS port 53317' "the terminal says p2p receives over LocalSend"
head -c 4096 /dev/urandom >"$HA/files/maybe.bin"
inA localsendctl send "$HA/files/maybe.bin" --to bob --wait >"$E2E_TMP/decline.log" 2>&1 &
DECLINE=$!
see 20 rx 'Linux "anna" \(LocalSend, not verified by key\) offers maybe\.bin' "the question names the device, the transport and that no key vouches for it"
tm send-keys -t rx n
if wait "$DECLINE"; then fail "localsendctl send succeeded although the offer was declined" "$E2E_TMP/decline.log"
elif grep -q declined "$E2E_TMP/decline.log"; then pass "n → localsendd reports declined"; else fail "localsendd did not report a decline" "$E2E_TMP/decline.log"; fi
[ ! -e "$DL3/maybe.bin" ] && pass "nothing written after the decline" || fail "maybe.bin written after a decline"
inA localsendctl send "$HA/files/maybe.bin" --to bob --wait >"$E2E_TMP/accept.log" 2>&1 &
ACCEPT=$!
see_now 20 rx 'offers maybe\.bin .*\[y/n/a\]' "asked again"
tm send-keys -t rx y
if wait "$ACCEPT" && cmp -s "$HA/files/maybe.bin" "$DL3/maybe.bin"; then pass "y → the file arrives, bytes equal"; else fail "accepted send" "$E2E_TMP/accept.log"; fi
see 10 rx 'Received maybe\.bin .* from Linux "anna" \(LocalSend, not verified by key\)' "the summary names the LocalSend device"
# A sender that gives no sha256 (curl): the summary says what was checked, not "verified".
prepare_json "$E2E_TMP/bare2.json" carol f1 bare2.bin 10
hcurl $ADDR_A "$E2E_TMP/s6.json" POST prepare-upload --data-binary @"$E2E_TMP/bare2.json" >"$E2E_TMP/s6.code" &
BARE=$!
see_now 20 rx 'offers bare2\.bin .*\[y/n/a\]' "asked about a file offered without a sha256"
tm send-keys -t rx y
wait "$BARE"
read -r SID T1 < <(tokens "$E2E_TMP/s6.json" f1)
code=$(hcurl $ADDR_A "$E2E_TMP/r.txt" POST "upload?sessionId=$SID&fileId=f1&token=$T1" --data-binary @"$E2E_TMP/ten"); status_is "its upload → 200" 200 "$code" "$E2E_TMP/r.txt"
see 10 rx 'Received bare2\.bin .* from curl "carol" \(LocalSend, not verified by key\) .*; size checked; the sender gave no SHA-256' \
  "a file whose sender gave no SHA-256: the summary says its size was checked and no hash given"
unseen rx 'bare2\.bin.*verified$' "… and never calls it verified"
finish
