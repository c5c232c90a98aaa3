#!/usr/bin/env bash
# `p2p share` and a real browser: headless Chromium (Debian's chromium + chromium-driver, driven by Selenium)
# in lab host A, `p2p share` in lab host B (namespaces A 10.213.7.1 and B 10.213.7.2).
#  - share --once --json of a file, a folder (nested, one name with a space and non-ASCII) and a 3 MiB random
#    file: the browser opens the printed URL (port 53317) on a phone-sized window, a wrong PIN shows the page's
#    error (and the sharer sees it), the right PIN lists every file with its size, each link downloads its file
#    (bytes equal: sha256), and the share exits 0 by itself once every file was fetched;
#  - the page as a person sees it: screenshots of the PIN form and the list (kept in E2E_SHOTS if set);
#  - share in a terminal (tmux pane in B): the URL with a QR code, read back from the screen by zbarimg as
#    a camera would; raw HTTP from A: 3 wrong PINs are 401, the 4th try is 429 even with the right PIN,
#    a made-up session is 403, an unknown file 404, a session from another address 403;
#  - a 1 GiB file (sparse) fetched with curl arrives whole while share's peak RSS grows by less than 16 MiB;
#  - receive --web --yes --json: the browser picks 3 files on the upload page, a wrong PIN shows the error, the
#    right one sends them: 2 arrive with equal bytes, the hidden one is skipped as for any offer accepted with
#    --yes (the page says so); receive --web in a terminal: URL and readable QR code, the browser's offer is
#    asked about ("… (LocalSend, not verified by key)"), y, and the file arrives; Ctrl-C ends share and
#    receive --web with exit 0 (nothing listens after).
# Needs root (lab.sh up), chromium, chromedriver, python3 with selenium, zbarimg, tmux, curl.
. "$(dirname "$0")/lib.sh"
need ip tmux python3 curl zbarimg chromium chromedriver
[ "$(id -u)" = 0 ] || { fail "must run as root (the lab needs network namespaces)"; finish; }
"$PYTHON" -c 'import selenium' 2>/dev/null || { fail "python's selenium is missing (scripts/setup.sh installs it)"; finish; }

export P2P_LAB_PREFIX=${P2P_LAB_PREFIX:-p2pbr$$}
ADDR_A=10.213.7.1 ADDR_B=10.213.7.2
. "$(dirname "$0")/tmux_lab.sh"

# ---- what B shares
SRC=$E2E_TMP/src
mkdir -p "$SRC/photos/2026 trip"
printf 'hello from B\n' >"$SRC/note.txt"
head -c 3145728 /dev/urandom >"$SRC/photos/big.bin"
printf 'Grüße aus dem Urlaub\n' >"$SRC/photos/2026 trip/Grüße.txt"
ln -s /etc/passwd "$SRC/photos/link"     # a link is not shared
PIN=482913

start_proc share "$LAB" exec B env P2P_HOME="$(home share)" "$P2P" share "$SRC/note.txt" "$SRC/photos" --pin "$PIN" --once --json --name "bob's laptop"
if ! line=$(wait_json 20 share event=sharing); then fail "p2p share does not start" share; finish; fi
URL=$("$PYTHON" -c 'import json,sys; u=[x for x in json.loads(sys.argv[1])["urls"] if "'"$ADDR_B"'" in x]; print(u[0] if u else "")' "$line")
check "share prints its URL for B's lab address on LocalSend's port ($URL)" test "$URL" = "http://$ADDR_B:53317/"
check "share lists the three files (the link left out)" "$PYTHON" -c 'import json,sys; f=json.loads(sys.argv[1])["files"]; sys.exit(sorted(x["name"] for x in f) != ["note.txt", "photos/2026 trip/Grüße.txt", "photos/big.bin"])' "$line"

# ---- the browser in A
DOWNLOADS=$E2E_TMP/downloads
SHOTS=${E2E_SHOTS:-$E2E_TMP/shots}
mkdir -p "$DOWNLOADS" "$SHOTS"
log "chromium in A opens $URL"
if run "$LAB" exec A env HOME="$E2E_TMP" "$PYTHON" "$E2E_DIR/browser_share.py" "$URL" "$PIN" "$DOWNLOADS" "$SHOTS/share" >"$E2E_TMP/browser.json" 2>"$E2E_TMP/browser.err"; then
  pass "the browser typed the PIN, saw the list and downloaded every file"
else
  fail "the browser did not get through" "$E2E_TMP/browser.json" "$E2E_TMP/browser.err"
fi
result=$(cat "$E2E_TMP/browser.json")
field() { "$PYTHON" -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]).get(sys.argv[2]), ensure_ascii=False))' "$result" "$1" 2>/dev/null; }
check "a wrong PIN shows the page's error ($(field wrong_pin_error))" grep -q 'Wrong PIN' <<<"$(field wrong_pin_error)"
check "a wrong PIN shows no list" test "$(field list_hidden_after_wrong_pin)" = true
check "the sharer is told of the wrong PIN from A" wait_json 5 share event=wrong-pin address="$ADDR_A"
check "the page is titled with the sharer's name ($(field title))" test "$(field title)" = "\"Files from bob's laptop\""
expected_list='[["note.txt", "13 B"], ["photos/2026 trip/Grüße.txt", "23 B"], ["photos/big.bin", "3.0 MiB"]]'
listed=$("$PYTHON" -c 'import json,sys; print(json.dumps(sorted(json.loads(sys.argv[1])), ensure_ascii=False))' "$(field listed)")
check "the page lists every file with its size ($listed)" test "$listed" = "$expected_list"
same() { [ -f "$2" ] && [ "$(sha256sum <"$1")" = "$(sha256sum <"$2")" ]; }
check "note.txt downloaded, bytes equal (sha256)" same "$SRC/note.txt" "$DOWNLOADS/note.txt"
check "photos/big.bin (3 MiB random) downloaded as photos_big.bin, bytes equal (sha256)" same "$SRC/photos/big.bin" "$DOWNLOADS/photos_big.bin"
check "the nested non-ASCII name downloaded as photos_2026 trip_Grüße.txt, bytes equal" same "$SRC/photos/2026 trip/Grüße.txt" "$DOWNLOADS/photos_2026 trip_Grüße.txt"
check "nothing else was downloaded ($(ls "$DOWNLOADS" | tr '\n' ',' ))" test "$(ls "$DOWNLOADS" | wc -l)" = 3

# ---- --once: the share ends by itself once every file went out whole
if wait_exit share 20; then
  check "share --once exits 0 after the downloads" test "$EXIT_RC" = 0
else
  fail "share --once still runs after every file was fetched" share
fi
check "share --once said each file was sent whole, then done" test "$(count_json share event=file-sent address="$ADDR_A")" = 3
check "share --once ended with a done event" wait_json 1 share event=done files=3
for shot in pin list; do
  check "screenshot of the $shot page taken ($SHOTS/share-$shot.png)" test -s "$SHOTS/share-$shot.png"
done

# ---- in a terminal: the QR code a phone's camera reads
open_terminal sharer bob B 100 45 "$P2P" share "$SRC/note.txt" --port 8080
see 20 sharer "PIN: [0-9]{6} \(random" "a share without --pin prints a random 6-digit PIN"
see 5 sharer "http://$ADDR_B:8080/" "the terminal shows the URL for B's address"
TERM_PIN=$(screen sharer | sed -nE 's/.*PIN: ([0-9]{6}).*/\1/p' | head -n 1)
if screen sharer | "$PYTHON" "$E2E_DIR/qr_png.py" "$E2E_TMP/qr.png" && decoded=$(zbarimg --raw -q "$E2E_TMP/qr.png"); then
  check "zbarimg reads the QR code on the screen as the URL ($decoded)" test "$decoded" = "http://$ADDR_B:8080/"
else
  fail "no readable QR code on the screen"; dump sharer
fi

# ---- raw HTTP from A: PIN guessing, sessions
api="http://$ADDR_B:8080/api/localsend/v2"
status() { run "$LAB" exec A curl -s -o /dev/null -w '%{http_code}' "$@"; }
wrong=$((10#$TERM_PIN + 1)); wrong=$(printf '%06d' $((wrong % 1000000)))
codes=""
for _ in 1 2 3; do codes+="$(status -X POST "$api/prepare-download?pin=$wrong") "; done
check "3 wrong PINs are each 401 ($codes)" test "$codes" = "401 401 401 "
check "the 4th try is 429, even with the right PIN" test "$(status -X POST "$api/prepare-download?pin=$TERM_PIN")" = 429
see 5 sharer "$ADDR_A gave too many wrong PINs" "the sharer's terminal says A is refused for a while"
check "a made-up session cannot download (403)" test "$(status "$api/download?sessionId=0123456789abcdef&fileId=f1")" = 403
# B itself (another address) gets a session; A cannot use it.
session=$(run "$LAB" exec B curl -s -X POST "http://127.0.0.1:8080/api/localsend/v2/prepare-download?pin=$TERM_PIN" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sessionId"])')
check "a session given to another address is 403 for A" test "$(status "$api/download?sessionId=$session&fileId=f1")" = 403
check "an unknown file in a good session is 404" test "$(run "$LAB" exec B curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:8080/api/localsend/v2/download?sessionId=$session&fileId=f9")" = 404
run "$LAB" exec A curl -sf -o "$E2E_TMP/page.html" "http://$ADDR_B:8080/"
check "the page itself needs no PIN and loads nothing from elsewhere" bash -c 'grep -q "id=\"pin\"" "$1" && ! grep -qiE "(src|href)=\"?(https?:)?//" "$1"' _ "$E2E_TMP/page.html"
tm send-keys -t sharer C-c
see 10 sharer '\[exited 0\]' "Ctrl-C ends the share normally (exit 0)"

# ---- a 1 GiB file is streamed from disk: memory stays flat
truncate -s 1G "$SRC/huge.img"
start_proc huge "$LAB" exec B env P2P_HOME="$(home share)" "$P2P" share "$SRC/huge.img" --pin "$PIN" --port 8081 --json
if wait_json 20 huge event=sharing >/dev/null; then
  hwm() { awk '/^VmHWM/ {print $2}' "/proc/$(pid_of huge)/status"; }
  idle=$(hwm)
  session=$(run "$LAB" exec A curl -s -X POST "http://$ADDR_B:8081/api/localsend/v2/prepare-download?pin=$PIN" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sessionId"])')
  got=$(run "$LAB" exec A curl -s "http://$ADDR_B:8081/api/localsend/v2/download?sessionId=$session&fileId=f1" | sha256sum | cut -d' ' -f1)
  want=$(sha256sum <"$SRC/huge.img" | cut -d' ' -f1)
  check "the 1 GiB file arrives whole (sha256)" test "$got" = "$want"
  peak=$(hwm)
  log "share's peak RSS: $((idle / 1024)) MiB idle, $((peak / 1024)) MiB after sending 1 GiB"
  check "streaming 1 GiB grows share's peak RSS by less than 16 MiB ($(((peak - idle) / 1024)) MiB: $((idle / 1024)) -> $((peak / 1024)) MiB)" test $((peak - idle)) -lt 16384
else
  fail "the 1 GiB share does not start" huge
fi

# ---- receive --web: a browser uploads through the page; the same rules and the same question as any offer
UP=$E2E_TMP/up IN=$E2E_TMP/in IN2=$E2E_TMP/in2
mkdir -p "$UP" "$IN" "$IN2"
head -c 1048576 /dev/urandom >"$UP/photo.jpg"
printf 'notes from A, é\n' >"$UP/notes é.txt"
printf 'secret\n' >"$UP/.hidden-notes"
WEB_PIN=271828
start_proc web "$LAB" exec B env P2P_HOME="$(home web)" "$P2P" receive --web --pin "$WEB_PIN" --yes --dir "$IN" --json --name bob
if line=$(wait_json 20 web event=web-listening); then
  WEB_URL=$("$PYTHON" -c 'import json,sys; u=[x for x in json.loads(sys.argv[1])["urls"] if "'"$ADDR_B"'" in x]; print(u[0] if u else "")' "$line")
  check "receive --web prints the page's URL for B's address ($WEB_URL)" test "$WEB_URL" = "http://$ADDR_B:53318/"
  if run "$LAB" exec A env HOME="$E2E_TMP" "$PYTHON" "$E2E_DIR/browser_upload.py" "$WEB_URL" "$WEB_PIN" "$SHOTS/receive" "$UP/photo.jpg" "$UP/notes é.txt" "$UP/.hidden-notes" >"$E2E_TMP/upload.json" 2>"$E2E_TMP/upload.err"; then
    pass "the browser picked 3 files, typed the PIN and sent them"
  else
    fail "the browser's upload did not get through" "$E2E_TMP/upload.json" "$E2E_TMP/upload.err" web
  fi
  upload=$(cat "$E2E_TMP/upload.json")
  ufield() { "$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$upload" "$1" 2>/dev/null; }
  check "a wrong PIN on the upload page shows its error ($(ufield wrong_pin_error))" grep -q 'Wrong PIN' <<<"$(ufield wrong_pin_error)"
  check "the page says 2 were sent and the hidden one not taken ($(ufield status))" grep -qE '^Sent 2 files .*did not take 1' <<<"$(ufield status)"
  check "photo.jpg (1 MiB random) arrived, bytes equal (sha256)" same "$UP/photo.jpg" "$IN/photo.jpg"
  check "'notes é.txt' arrived, bytes equal" same "$UP/notes é.txt" "$IN/notes é.txt"
  check "the hidden file was skipped as for any offer accepted with --yes (not written)" test ! -e "$IN/.hidden-notes"
  check "receive reported both files as file-received events" wait_json 5 web event=file-received name=photo.jpg
  check "receive reported the hidden file skipped, with the reason" wait_json 5 web event=file-skipped name=.hidden-notes reason~hidden
  # A browser gives no SHA-256 (WebCrypto needs a secure context, and the page is plain HTTP): the files are
  # checked by size, and nothing calls them verified.
  check "receive's summary event: 2 arrived checked by size (no SHA-256 from a browser), 1 skipped" \
    wait_json 5 web event=tree-finished verified=0 size-only=2 skipped=1 failed=0
  check "each browser file says it was checked by size" wait_json 5 web event=file-received name=photo.jpg check=size
else
  fail "receive --web does not start" web
fi
stop_proc web

open_terminal receiver bob B 100 40 "$P2P" receive --web --pin "$WEB_PIN" --dir "$IN2" --name bob
see 20 receiver "http://$ADDR_B:53318/" "receive --web in a terminal shows the page's URL"
check "receive --web's terminal shows a readable QR code" bash -c '"$@" >"$0.txt"; "'"$PYTHON"'" "'"$E2E_DIR"'/qr_png.py" "$0" <"$0.txt" && zbarimg --raw -q "$0" | grep -qx "http://'"$ADDR_B"':53318/"' "$E2E_TMP/qr2.png" tmux -S "$TMUX_SOCKET" capture-pane -p -J -S - -t receiver
start_bg uploader "$LAB" exec A env HOME="$E2E_TMP" "$PYTHON" "$E2E_DIR/browser_upload.py" "http://$ADDR_B:53318/" "$WEB_PIN" "$SHOTS/receive-asked" "$UP/photo.jpg"
see 40 receiver "LocalSend, not verified by key.*photo.jpg|photo.jpg.*LocalSend, not verified by key" "the terminal asks about the browser's file, naming it a LocalSend sender not verified by key"
tm send-keys -t receiver y
if wait_exit uploader 60; then check "after y the browser's page says it was sent" test "$EXIT_RC" = 0; else fail "the browser still waits after y" uploader; fi
check "the asked-about photo.jpg arrived, bytes equal" same "$UP/photo.jpg" "$IN2/photo.jpg"
tm send-keys -t receiver C-c
see 10 receiver '\[exited 0\]' "Ctrl-C ends receive --web normally (exit 0), the page's server with it"
if run "$LAB" exec A curl -s -o /dev/null --max-time 3 "http://$ADDR_B:53318/"; then fail "the page still answers after Ctrl-C"; else pass "nothing listens on the page's port any more"; fi
finish
