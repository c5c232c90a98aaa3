#!/usr/bin/env bash
# Hostile senders against `p2p receive`, end to end on loopback (raw_peer.py plays the sender over TLS with
# the real protocol; issue 21, items 3 and 4):
#  - an older p2p's OFFER (a TRANSFER frame of p2p before channels): denied in its own layout with a reason
#    naming the version, the receiving user sees one line naming the sender and the version, nothing written;
#  - a TREE_OFFER whose total says 1 KiB and whose one entry is 64 MiB: denied with the reason (the sender
#    hears it, the receiving user sees it), no byte written;
#  - `receive --overwrite` and an OFFER named like an existing folder: the folder and its files stay, the
#    file fails with the reason; a regular file of that name would have been replaced;
#  - a NAME.part planted as a symbolic link: never written through (the link's target is unchanged);
#  - a .part belongs to its sender: the same sender resumes it, another peer gets offset 0 and starts over;
#  - hidden paths (.ssh/authorized_keys) and execute bits: with --yes a hidden file is skipped (not written,
#    reported), a tree's files arrive without execute bits; with --allow-hidden --allow-executable they
#    arrive as offered; asked in a terminal (tmux), the question names them and lists several roots;
#  - issue 34: texts offered and cancelled leave nothing in the temporary directory; a held file's SHA-256
#    never leaves the receiver; a .part that is not the sender's is untouched; modes stay under the umask;
#    2,000 and 10,000 folders arrive under `ulimit -n 1024` with a bounded number of descriptors.
# No network namespaces: every receiver listens on its own loopback port, in a session of its own.
. "$(dirname "$0")/lib.sh"
need python3 sha256sum stat
ensure_loopback_mdns || { fail "loopback avahi-daemon could not be started"; finish; }

TAG=$$-$RANDOM
SID=e2e-hfiles-$TAG
RAW="$E2E_DIR/raw_peer.py"
MiB=$((1024 * 1024))
field() { "$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1]); [v := v[int(k)] if isinstance(v, list) else v[k] for k in sys.argv[2:]]; print(v)' "$@" 2>/dev/null || echo "?"; }
mode_of() { stat -c %a "$1" 2>/dev/null || echo "?"; }
# receiver NAME DIR ARGS...: `p2p receive --json` on a port of its own; waits for its listening event.
receiver() {
  local name=$1 dir=$2 port; shift 2
  port=$(free_port)
  mkdir -p "$dir"
  start_proc "$name" env P2P_HOME="$(home "$name")" "$P2P" receive --json --name "$name-$TAG" --port "$port" --session-id "$SID" --dir "$dir" "$@"
  if wait_json 20 "$name" event=listening >/dev/null; then pass "$name listens on port $port ($*)"; else fail "$name did not start" "$name"; fi
  eval "PORT_$name=$port"
}
# raw PORT ARGS...: one raw_peer.py run; each is a peer of its own name (a name is pinned to its first key),
# unless --peer-name is given (with --identity: the same peer again).
# (A counter in a file: `out=$(raw …)` runs in a subshell.)
raw() {
  local port=$1 runs; shift
  runs=$(($(cat "$E2E_TMP/runs" 2>/dev/null || echo 0) + 1)); echo "$runs" >"$E2E_TMP/runs"
  local args=("$@"); [[ " $* " == *" --peer-name "* ]] || args+=(--peer-name "raw-$runs-$TAG")
  run "$PYTHON" "$RAW" 127.0.0.1 "$port" "${args[@]}" --session "$SID" 2>>"$E2E_TMP/raw.err"
}

IN=$E2E_TMP/inbox
receiver rx "$IN" --yes --overwrite
P=$PORT_rx

# ---------------------------------------------------------------- 0. an older p2p's offer
log "older-offer: a TRANSFER OFFER as p2p before channels sends it"
out=$(raw "$P" older-offer --name old.txt --timeout 30)
log "older-offer: $out"
check "the older sender's offer is denied in its own layout (reply $(field "$out" transfers 0 reply))" [ "$(field "$out" transfers 0 reply)" = DENY ]
check "the older sender hears the version and what to do: \"$(field "$out" transfers 0 reason)\"" \
  bash -c '[[ "$1" == *"runs a newer p2p (wire version 1 with channel transfers"*"update p2p on the sending side" ]]' _ "$(field "$out" transfers 0 reason)"
if wait_json 10 rx event=transfer-failed name=old.txt "reason~raw-1-$TAG (127.0.0.1:" "reason~runs an older p2p (wire version 1 without channel transfers); update p2p there" >/dev/null; then
  pass "the receiving user sees one line naming the older sender, its address and the version"
else
  fail "no transfer-failed event naming the older sender and the version" rx
fi
check "nothing was written for it" [ ! -e "$IN/old.txt" -a ! -e "$IN/old.txt.part" ]
check "receive still runs" is_running rx

# ---------------------------------------------------------------- 1. a tree whose total lies
log "tree-lie: total 1 KiB, one entry of 64 MiB"
out=$(raw "$P" tree-lie --name big.bin --total 1024 --size $((64 * MiB)) --timeout 60)
log "tree-lie: $out"
check "the lying tree is denied (reply $(field "$out" transfers 0 reply))" [ "$(field "$out" transfers 0 reply)" = DENY ]
check "the sender hears why: \"$(field "$out" transfers 0 reason)\"" bash -c '[[ "$1" == *"total says 1.0 KiB"*"add up to 64.0 MiB"* ]]' _ "$(field "$out" transfers 0 reason)"
if wait_json 10 rx event=transfer-failed "reason~refused the offer from raw-2-$TAG: its total says 1.0 KiB (1024 bytes), but its files add up to 64.0 MiB" >/dev/null; then
  pass "the receiving user sees the refusal with both numbers"
else
  fail "no transfer-failed event naming the lie" rx
fi
check "nothing was written (no big.bin, no big.bin.part)" [ ! -e "$IN/big.bin" -a ! -e "$IN/big.bin.part" ]
check "no file in the inbox is above 1 KiB" [ -z "$(find "$IN" -type f -size +1k)" ]
check "receive still runs" is_running rx

# ---------------------------------------------------------------- 2. --overwrite and a folder's name
log "an OFFER named like an existing folder, to receive --overwrite"
mkdir -p "$IN/docs/sub"
echo "my thesis" >"$IN/docs/thesis.txt"
echo "deeper" >"$IN/docs/sub/deep.txt"
out=$(raw "$P" send --name docs)
log "send docs: $out"
check "the offer was accepted (reply $(field "$out" transfers 0 reply))" [ "$(field "$out" transfers 0 reply)" = ACCEPT ]
check "the sender hears RESULT(0), not verified" [ "$(field "$out" transfers 0 result verified)" = False ]
check "the folder docs/ is still a folder" [ -d "$IN/docs" ]
check "docs/thesis.txt and docs/sub/deep.txt are still there, unchanged" \
  bash -c '[ "$(cat "$1/docs/thesis.txt")" = "my thesis" ] && [ "$(cat "$1/docs/sub/deep.txt")" = deeper ]' _ "$IN"
if wait_json 10 rx event=transfer-failed name=docs "reason~a directory is there; only a regular file is ever replaced" >/dev/null; then
  pass "the user sees why docs was not placed"
else
  fail "no transfer-failed event for docs with the reason" rx
fi
# The control: a regular file of the offered name is what --overwrite replaces.
echo "old" >"$IN/note.txt"
out=$(raw "$P" send --name note.txt)
check "a regular file under the name is replaced (verified $(field "$out" transfers 0 result verified))" \
  bash -c '[ "$2" = True ] && grep -q "this is plain text" "$1/note.txt"' _ "$IN" "$(field "$out" transfers 0 result verified)"

# ---------------------------------------------------------------- 3. a .part that is a symbolic link
log "x.bin.part planted as a link to a file outside"
echo "ssh-ed25519 AAAA mine" >"$E2E_TMP/victim"
ln -s "$E2E_TMP/victim" "$IN/x.bin.part"
out=$(raw "$P" send --name x.bin)
log "send x.bin: $out"
check "the transfer is cancelled with the reason (reply $(field "$out" transfers 0 reply): $(field "$out" transfers 0 reason))" \
  bash -c '[ "$1" = CANCEL ] && [[ "$2" == *"a symbolic link is where the .part file goes"* ]]' _ "$(field "$out" transfers 0 reply)" "$(field "$out" transfers 0 reason)"
check "the link's target is unchanged" [ "$(cat "$E2E_TMP/victim")" = "ssh-ed25519 AAAA mine" ]
check "x.bin.part is still the link, and no x.bin" [ -L "$IN/x.bin.part" -a ! -e "$IN/x.bin" ]

# ---------------------------------------------------------------- 4. a .part belongs to its sender
log "own.bin: cut by one peer, resumed by it, then offered by another"
head -c 300000 /dev/urandom >"$E2E_TMP/own.bin"
out=$(raw "$P" send --identity "$E2E_TMP/id-a" --peer-name "raw-a-$TAG" --name own.bin --data-file "$E2E_TMP/own.bin" --cut 131072)
check "peer A's transfer was accepted from 0 and cut (offset $(field "$out" transfers 0 offset))" [ "$(field "$out" transfers 0 offset)" = 0 ]
wait_until 10 bash -c '[ "$(stat -c %s "$1" 2>/dev/null)" = 131072 ]' "$IN/own.bin.part"
check "own.bin.part holds the 131072 bytes A sent" [ "$(stat -c %s "$IN/own.bin.part" 2>/dev/null)" = 131072 ]
out=$(raw "$P" send --identity "$E2E_TMP/id-a" --peer-name "raw-a-$TAG" --name own.bin --data-file "$E2E_TMP/own.bin" --cut 200000)
check "the same peer A resumes at 131072 (offset $(field "$out" transfers 0 offset))" [ "$(field "$out" transfers 0 offset)" = 131072 ]
wait_until 10 bash -c '[ "$(stat -c %s "$1" 2>/dev/null)" = 200000 ]' "$IN/own.bin.part"
out=$(raw "$P" send --identity "$E2E_TMP/id-b" --name own.bin --data-file "$E2E_TMP/own.bin")
check "another peer B is offered offset 0 (got $(field "$out" transfers 0 offset)) and no prefix hash" \
  bash -c '[ "$1" = 0 ] && [ "$2" = "$(printf "0%.0s" $(seq 64))" ]' _ "$(field "$out" transfers 0 offset)" "$(field "$out" transfers 0 prefix)"
check "B's whole file arrives verified" bash -c '[ "$2" = True ] && [ "$(sha256sum <"$1/own.bin")" = "$(sha256sum <"$3")" ]' _ "$IN" \
  "$(field "$out" transfers 0 result verified)" "$E2E_TMP/own.bin"

# ---------------------------------------------------------------- 5. hidden paths and execute bits, --yes
log "hidden paths and execute bits to receive --yes"
out=$(raw "$P" send --name .ssh/authorized_keys)
check "one file under .ssh/ is denied (reply $(field "$out" transfers 0 reply): $(field "$out" transfers 0 reason))" \
  bash -c '[ "$1" = DENY ] && [[ "$2" == *"skipped .ssh/authorized_keys: a hidden path"* ]]' _ "$(field "$out" transfers 0 reply)" "$(field "$out" transfers 0 reason)"
check "no .ssh folder was made" [ ! -e "$IN/.ssh" ]
if wait_json 10 rx event=file-skipped name=.ssh/authorized_keys >/dev/null; then pass "the user sees it skipped (file-skipped)"; else fail "no file-skipped event" rx; fi
ENTRIES='[["home", 493, null], ["home/.ssh", 448, null], ["home/.ssh/authorized_keys", 384, 100], ["home/.config/autostart/x.desktop", 420, 70000],
          ["home/big.sh", 493, 200000], ["home/notes.txt", 420, 30], ["home/run.sh", 493, 50]]'
out=$(raw "$P" tree --entries "$ENTRIES" --timeout 30)
log "tree: $out"
check "the tree was accepted and answered (verified $(field "$out" tree_result verified))" [ "$(field "$out" tree_result verified)" = 3 ]
check "the sender hears both hidden files as not written, with the reason" \
  bash -c '[[ "$1" == *"[2, "*"a hidden path"*"[3, "*"a hidden path"* ]]' _ "$(field "$out" tree_result failures)"
check "no .ssh/authorized_keys, no .config was written" [ ! -e "$IN/home/.ssh" -a ! -e "$IN/home/.config" ]
check "run.sh and big.sh (packed and chunked) arrived without execute bits ($(mode_of "$IN/home/run.sh"), $(mode_of "$IN/home/big.sh"))" \
  [ "$(mode_of "$IN/home/run.sh")" = 644 -a "$(mode_of "$IN/home/big.sh")" = 644 ]
if wait_json 10 rx event=tree-finished skipped=2 verified=3 size=200080 >/dev/null; then
  pass "tree-finished says 3 verified, 2 skipped, 200080 bytes: what arrived"
else
  fail "tree-finished does not report what arrived" rx
fi

IN2=$E2E_TMP/inbox2
receiver rx2 "$IN2" --yes --allow-hidden --allow-executable
out=$(raw "$PORT_rx2" tree --entries "$ENTRIES" --timeout 30)
check "with --allow-hidden --allow-executable every file arrives (verified $(field "$out" tree_result verified))" [ "$(field "$out" tree_result verified)" = 5 ]
check "with them .ssh/authorized_keys is written (mode $(mode_of "$IN2/home/.ssh/authorized_keys"))" [ "$(mode_of "$IN2/home/.ssh/authorized_keys")" = 600 ]
check "with them run.sh keeps its execute bits ($(mode_of "$IN2/home/run.sh"))" [ "$(mode_of "$IN2/home/run.sh")" = 755 ]

# ---------------------------------------------------------------- 6. the question names them (a terminal)
if command -v tmux >/dev/null; then
  log "the question in a terminal"
  SOCK=$E2E_TMP/tmux.sock
  P3=$(free_port)
  mkdir -p "$E2E_TMP/inbox3"
  tmux -S "$SOCK" new-session -d -x 250 -y 20 "env P2P_HOME=$(home rx3) NO_COLOR=1 $P2P receive --name rx3-$TAG --port $P3 --session-id $SID --dir $E2E_TMP/inbox3; sleep 30"
  on_exit 'tmux -S "$SOCK" kill-server 2>/dev/null'
  screen() { tmux -S "$SOCK" capture-pane -p -J; }
  wait_until 20 bash -c 'tmux -S "$1" capture-pane -p | grep -q "Waiting for files"' _ "$SOCK"
  ROOTS='[["a.txt", 420, 10], ["b.txt", 420, 10], ["c", 493, null], ["c/run.sh", 493, 10], [".ssh", 448, null], [".ssh/authorized_keys", 384, 10],
          ["d.txt", 420, 10], ["e.txt", 420, 10], ["f.txt", 420, 10]]'
  start_bg asker "$PYTHON" "$RAW" 127.0.0.1 "$P3" tree --entries "$ROOTS" --session "$SID" --peer-name "raw-asker-$TAG" --timeout 40
  # The connection is asked about first, then the offer.
  if wait_until 20 bash -c 'tmux -S "$1" capture-pane -p | grep -q "wants to send you files"' _ "$SOCK"; then tmux -S "$SOCK" send-keys y; fi
  if wait_until 20 bash -c 'tmux -S "$1" capture-pane -p -J | grep -q "accept?"' _ "$SOCK"; then
    text=$(screen | tr -s ' ')
    log "question: $(grep "offers" <<<"$text")"
    check "the question lists the roots, then \"and N more\"" grep -q "7 files, 70 B: a.txt, b.txt, c/, .ssh/, d.txt and 2 more" <<<"$text"
    check "the question names the hidden path" grep -q "includes hidden paths: .ssh/authorized_keys" <<<"$text"
    check "the question names the executable" grep -q "executable: c/run.sh" <<<"$text"
    tmux -S "$SOCK" send-keys n
  else
    fail "no question appeared" "$(screen >"$E2E_TMP/screen.txt"; echo "$E2E_TMP/screen.txt")"
  fi
  wait_exit asker 20 >/dev/null
else
  log "tmux not found: the terminal question is not checked"
fi

# ---------------------------------------------------------------- 7. issue 34: what the receiver keeps to itself
# Texts: 100 OPEN+CANCEL and 100 texts cancelled half-way leave nothing in the receiver's temporary
# directory (each left a p2p-text-UUID folder, the half-way ones a .part too). A TMPDIR of its own, so
# that nothing else on the machine is counted.
RXTMP=$E2E_TMP/rx4-tmp
mkdir -p "$RXTMP"
TMPDIR=$RXTMP receiver rx4 "$E2E_TMP/inbox4" --yes
out=$(raw "$PORT_rx4" text-cancel --count 100 --timeout 60)
check "100 texts offered and cancelled at once (sent $(field "$out" sent))" [ "$(field "$out" sent)" = 100 ]
check "they left no entry in the temporary directory ($(ls -A "$RXTMP" | wc -l) there)" [ -z "$(ls -A "$RXTMP")" ]
out=$(raw "$PORT_rx4" text-cancel --count 100 --partial yes --timeout 60)
accepted=$("$PYTHON" -c 'import json,sys; print(sum(t["reply"] == "ACCEPT" for t in json.loads(sys.argv[1])["transfers"]))' "$out" 2>/dev/null)
check "100 texts accepted, then cancelled after 5 of their 10 bytes (accepted: $accepted)" [ "$accepted" = 100 ]
wait_until 10 bash -c '[ -z "$(ls -A "$1")" ]' _ "$RXTMP"
check "they left no entry either, no folder and no .part ($(ls -A "$RXTMP" | wc -l) there)" [ -z "$(ls -A "$RXTMP")" ]
check "receive still runs" is_running rx4

# HELD whole: a path that exists on the receiver (rx4: no --overwrite). It says it holds a file of that size,
# but not its SHA-256; the sender (which sends no COMPARE) has its file written beside it.
IN4=$E2E_TMP/inbox4
mkdir -p "$IN4/held"
printf 'the receiver'"'"'s own secret\n' >"$IN4/held/secret.txt"
SECRET_SHA=$(sha256sum <"$IN4/held/secret.txt" | cut -d' ' -f1)
out=$(raw "$PORT_rx4" tree --entries '[["held", 493, null], ["held/secret.txt", 420, '"$(stat -c %s "$IN4/held/secret.txt")"']]' --timeout 30)
log "held: $(field "$out" transfers 0 held_files)"
check "the receiver reports secret.txt as held whole (state $(field "$out" transfers 0 held_files 0 1))" [ "$(field "$out" transfers 0 held_files 0 1)" = 1 ]
check "with 32 zero bytes, not the file's SHA-256" [ "$(field "$out" transfers 0 held_files 0 3)" = "$(printf "0%.0s" $(seq 64))" ]
check "the file's SHA-256 is nowhere in the report" bash -c '[[ "$1" != *"$2"* ]]' _ "$out" "$SECRET_SHA"
check "secret.txt is unchanged, the sender's bytes arrived beside it (verified $(field "$out" tree_result verified))" \
  bash -c '[ "$(sha256sum <"$1/held/secret.txt" | cut -d" " -f1)" = "$2" ] && [ -s "$1/held/secret (1).txt" ]' _ "$IN4" "$SECRET_SHA"

# A text on its way is 0600 in a 0700 folder; when p2p receive is stopped (SIGTERM) mid-text, it goes too.
start_bg holder "$PYTHON" "$RAW" 127.0.0.1 "$PORT_rx4" text-cancel --count 1 --partial hold --hold 30 --hold-file "$E2E_TMP/release" \
  --session "$SID" --peer-name "raw-holder-$TAG" --timeout 40
on_exit 'touch "$E2E_TMP/release"'
wait_until 15 test -e "$E2E_TMP/release.sent"
folder=$(ls -A "$RXTMP" | head -1)
check "the arriving text's folder $folder is 0700 ($(mode_of "$RXTMP/$folder"))" bash -c '[ -n "$1" ] && [ "$(stat -c %a "$2")" = 700 ]' _ "$folder" "$RXTMP/$folder"
check "its text.txt.part is 0600 ($(mode_of "$RXTMP/$folder/text.txt.part"))" [ "$(mode_of "$RXTMP/$folder/text.txt.part")" = 600 ]
stop_proc rx4
check "p2p receive stopped (SIGTERM) mid-text: nothing left in the temporary directory ($(ls -A "$RXTMP" | wc -l) there)" [ -z "$(ls -A "$RXTMP")" ]
touch "$E2E_TMP/release"
wait_exit holder 15 >/dev/null

# The sending side: `p2p send --text` stages the text privately and leaves nothing behind either.
STMP=$E2E_TMP/sender-tmp
mkdir -p "$STMP"
run env TMPDIR="$STMP" P2P_HOME="$(home texter)" "$P2P" send --json --name "texter-$TAG" --session-id "$SID" --connect "127.0.0.1:$P" --text "a clipboard's secret" \
  >"$E2E_TMP/texter.out" 2>&1
rc=$?
check "p2p send --text delivered its text (exit $rc)" [ "$rc" = 0 ]
check "and left nothing in its temporary directory ($(ls -A "$STMP" | wc -l) there)" [ -z "$(ls -A "$STMP")" ]

# A .part that is not this sender's (a browser's download in progress), even under --overwrite: untouched.
printf 'half of a download' >"$IN/movie.mkv.part"
out=$(raw "$P" send --name movie.mkv)
check "movie.mkv arrives verified ($(field "$out" transfers 0 result verified))" [ "$(field "$out" transfers 0 result verified)" = True ]
check "movie.mkv.part is untouched" [ "$(cat "$IN/movie.mkv.part")" = "half of a download" ]
check "and no .part of ours is left" [ -z "$(find "$IN" -name 'movie.mkv.p2p-*')" ]

# Modes 0666 and 0777 from a peer (execute bits allowed) arrive minus the umask, never world-writable.
MASK=$(umask)
out=$(raw "$PORT_rx2" tree --entries '[["modes", 493, null], ["modes/rw.txt", 438, 30], ["modes/rwx.sh", 511, 70000]]' --timeout 30)
check "the tree of modes 666 and 777 arrived (verified $(field "$out" tree_result verified))" [ "$(field "$out" tree_result verified)" = 2 ]
check "666 arrives as $(printf %o $((0666 & ~MASK))) under umask $MASK (got $(mode_of "$IN2/modes/rw.txt"))" [ "$(mode_of "$IN2/modes/rw.txt")" = "$(printf %o $((0666 & ~MASK)))" ]
check "777 arrives as $(printf %o $((0777 & ~MASK))) (got $(mode_of "$IN2/modes/rwx.sh"))" [ "$(mode_of "$IN2/modes/rwx.sh")" = "$(printf %o $((0777 & ~MASK)))" ]

# Folders: 2,000 and 10,000 folders of one small file each, packed into SMALL frames as p2p sends them, to a
# receiver allowed 1,024 descriptors (one held per folder: 1,250 of 2,000 files arrived, then EMFILE). The
# descriptors it holds are sampled.
for folders in 2000 10000; do
  IN5=$E2E_TMP/inbox5-$folders
  mkdir -p "$IN5"
  "$PYTHON" -c 'import json,sys; n=int(sys.argv[1]); print(json.dumps([e for i in range(n) for e in (["wide/d%05d" % i, 493, None], ["wide/d%05d/f.txt" % i, 420, 10])]))' \
    "$folders" >"$E2E_TMP/entries-$folders.json"
  port=$(free_port)
  start_proc "rx5-$folders" bash -c 'ulimit -n 1024 && exec "$@"' _ env P2P_HOME="$(home "rx5-$folders")" "$P2P" receive --json --name "rx5-$folders-$TAG" \
    --port "$port" --session-id "$SID" --dir "$IN5" --yes
  wait_json 20 "rx5-$folders" event=listening >/dev/null || fail "rx5-$folders did not start" "rx5-$folders"
  pid=$(pid_of "rx5-$folders")
  ( peak=0; while kill -0 "$pid" 2>/dev/null; do n=$(ls /proc/"$pid"/fd 2>/dev/null | wc -l); [ "$n" -gt "$peak" ] && { peak=$n; echo "$peak" >"$E2E_TMP/fd-peak-$folders"; }; sleep 0.02; done ) &
  sampler=$!
  before=$(ls /proc/"$pid"/fd | wc -l)
  out=$(raw "$port" tree --entries "@$E2E_TMP/entries-$folders.json" --small yes --timeout 120)
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  peak=$(cat "$E2E_TMP/fd-peak-$folders" 2>/dev/null || echo "?")
  log "$folders folders: tree_result $(field "$out" tree_result verified) verified; descriptors $before before, at most $peak during"
  check "$folders folders under ulimit -n 1024: every file arrived (verified $(field "$out" tree_result verified))" [ "$(field "$out" tree_result verified)" = "$folders" ]
  check "the last folder's file is there" [ -s "$IN5/wide/d$(printf %05d $((folders - 1)))/f.txt" ]
  check "the receiver held at most $peak descriptors ($before before the tree): bounded, not one per folder" \
    bash -c '[ "$1" != "?" ] && [ "$1" -lt $(($2 + 64)) ]' _ "$peak" "$before"
  stop_proc "rx5-$folders"
done

stop_proc rx
stop_proc rx2
finish
