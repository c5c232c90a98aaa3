#!/usr/bin/env python3
"""Sends the malformed-input catalogue of Protocol/PROTOCOL.md §12.1 to a p2p peer (Tests/e2e/malformed.sh).

usage: malformed.py --list                                   the case names, in table order
       malformed.py HOST PORT CASE [--session S] [--source ADDR] [--timeout SECONDS]

The expectations live in one place, the table in PROTOCOL.md: this script reads each case's `after`
(start: right after TLS; welcome: after the HELLO/WELCOME handshake) and its answer (an ERROR code, or
"none": the connection just ends) from there, and knows only how to build each input. --list fails
when the table and the inputs here disagree (a row without an input, or an input without a row).

Speaks TLS 1.3 with a fresh key and certificate, like raw_peer.py (whose connection code it uses);
--source picks the local address (e.g. 127.0.0.N), so the server's per-address limit on connection
requests (20 a minute) does not refuse a long catalogue.

Prints one JSON object: {"case", "after", "expect" (code or null), "error_code", "received",
"closed_by_server", "ok", "note"}; ok means the expected ERROR arrived (or, for "none", no ERROR)
and the server closed the connection.
"""
import json
import os
import random
import re
import shutil
import ssl
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raw_peer  # noqa: E402
from raw_peer import BYE, DATA, ERROR, HELLO, PING, PONG, TEXT, TRANSFER, WELCOME, Conn, frame, short_string  # noqa: E402

PROTOCOL_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Protocol", "PROTOCOL.md")
TEXT_ACK, PAIR, GAME, RECORDS, STREAM, CHANNEL = 0x12, 0x20, 0x30, 0x40, 0x51, 0x52


def catalogue():
    """[(case, after, expected code or None)] from the table of PROTOCOL.md §12.1."""
    with open(PROTOCOL_MD, encoding="utf-8") as f:
        text = f.read()
    section = text.split("### 12.1 Malformed-input catalogue", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(r"^\| `([a-z0-9-]+)` \| (start|welcome) \| .* \| (\d+|none)\b", line)
        if m:
            rows.append((m.group(1), m.group(2), None if m.group(3) == "none" else int(m.group(3))))
    return rows


def text_payload(text_bytes, msg_id=1):
    return struct.pack(">Qq", msg_id, int(time.time() * 1000)) + text_bytes


def game(kind, body=b"", round_=1):
    return frame(GAME, struct.pack(">BI", kind, round_) + body)


def records(kind, body=b"", tid=7):
    return frame(RECORDS, struct.pack(">BQ", kind, tid) + body)


def transfer(kind, body=b"", tid=9):
    """A TRANSFER frame of p2p before channels: kind u8, transfer ID u64, then the kind's fields."""
    return frame(TRANSFER, struct.pack(">BQ", kind, tid) + body)


def stream(kind, body=b"", sid=9):
    """A STREAM frame of p2p before channels: kind u8, stream ID u64, then the kind's fields."""
    return frame(STREAM, struct.pack(">BQ", kind, sid) + body)


def channel(kind, purpose, body=b"", cid=9):
    """A CHANNEL frame: kind u8, purpose u8 (1 file, 2 tree, 3 stream, 4 records), channel ID u64, then the kind's fields."""
    return frame(CHANNEL, struct.pack(">BBQ", kind, purpose, cid) + body)


def garbage():
    junk = bytearray(os.urandom(64))
    junk[0] = random.choice([b for b in range(256) if b != 0x50])
    return bytes(junk)


# What each case sends; h is the valid HELLO *payload* this client would send.
INPUTS = {
    "bad-magic-first-byte": lambda h: b"\x16",
    "bad-magic-second-byte": lambda h: b"P3" + bytes(8),
    "garbage": lambda h: garbage(),
    "garbage-after-handshake": lambda h: garbage(),
    "version-2-hello": lambda h: frame(HELLO, h, version=2),
    "version-0-text": lambda h: frame(TEXT, text_payload(b"v0"), version=0),
    "unknown-type": lambda h: frame(0x7F, b"what is this"),
    "unknown-type-before-hello": lambda h: frame(0x00),
    "oversize-length": lambda h: frame(TEXT, b"", length=0xFFFFFFFF),
    "just-over-limit": lambda h: frame(DATA, b"", length=65537),
    "truncated-frame-close": lambda h: frame(TEXT, text_payload(b"never finished"))[:-5],
    "truncated-header-close": lambda h: frame(TEXT, text_payload(b"x"))[:6],
    "text-before-hello": lambda h: frame(TEXT, text_payload(b"too early")),
    "data-before-hello": lambda h: frame(DATA, b"too early"),
    "welcome-before-hello": lambda h: frame(WELCOME),
    "pair-before-hello": lambda h: frame(PAIR, b"\x01" + os.urandom(32)),
    "second-hello": lambda h: frame(HELLO, h),
    "welcome-to-acceptor": lambda h: frame(WELCOME),
    "hello-truncated": lambda h: frame(HELLO, h[:10]),
    "hello-key-length-16": lambda h: frame(HELLO, hello(key=os.urandom(16))),
    "hello-no-key": lambda h: frame(HELLO, hello(key=b"")),
    "hello-empty-name": lambda h: frame(HELLO, hello(name=b"")),
    "hello-long-name": lambda h: frame(HELLO, hello(name=b"n" * 64)),
    "hello-name-not-utf8": lambda h: frame(HELLO, hello(name=b"\xff\xfe")),
    "hello-trailing-byte": lambda h: frame(HELLO, h + b"\x00"),
    "hello-wrong-session": lambda h: frame(HELLO, hello(session=b"some-other-session")),
    "ping-7-bytes": lambda h: frame(PING, bytes(7)),
    "ping-9-bytes": lambda h: frame(PING, bytes(9)),
    "pong-7-bytes": lambda h: frame(PONG, bytes(7)),
    "pong-9-bytes": lambda h: frame(PONG, bytes(9)),
    "pong-7-bytes-before-hello": lambda h: frame(PONG, bytes(7)),
    "text-short-before-hello": lambda h: frame(TEXT, bytes(3)),
    "bye-with-payload": lambda h: frame(BYE, b"\x00"),
    "error-truncated-reason": lambda h: frame(ERROR, struct.pack(">HH", 1, 10) + b"abc"),
    "error-version-9": lambda h: frame(ERROR, struct.pack(">H", 1) + short_string("from the future"), version=9),
    "error-unknown-code": lambda h: frame(ERROR, struct.pack(">H", 999) + short_string("a refusal from a later version")),
    "error-long-reason": lambda h: frame(ERROR, struct.pack(">HH", 15, 1025) + b"r" * 1025),
    "error-refusal-before-hello": lambda h: frame(ERROR, struct.pack(">H", 17) + short_string("expected peer 00112233445566778899aabbccddeeff")),
    "text-short": lambda h: frame(TEXT, bytes(15)),
    "text-not-utf8": lambda h: frame(TEXT, text_payload(b"ok \xff\xfe\xc3(")),
    "text-surrogate": lambda h: frame(TEXT, text_payload(b"\xed\xa0\x80")),
    "text-overlong": lambda h: frame(TEXT, text_payload(b"\xc0\xaf")),
    "text-ack-7-bytes": lambda h: frame(TEXT_ACK, bytes(7)),
    "pair-32-bytes": lambda h: frame(PAIR, b"\x01" + bytes(31)),
    "pair-34-bytes": lambda h: frame(PAIR, b"\x01" + bytes(33)),
    "pair-kind-3": lambda h: frame(PAIR, b"\x03" + bytes(32)),
    "game-kind-7": lambda h: game(7),
    "game-commit-truncated": lambda h: game(2, bytes(31)),
    "game-move-trailing": lambda h: game(4, bytes([1, 5]) + bytes(8) + b"\x00"),
    "game-refuse-long-reason": lambda h: game(5, bytes([1]) + struct.pack(">H", 1025) + b"r" * 1025),
    "records-kind-8": lambda h: records(8),
    "records-no-transfer-id": lambda h: frame(RECORDS, b"\x01" + bytes(4)),
    "records-deny-long-reason": lambda h: records(3, short_string("r" * 1025)),
    "channel-records-outcome-status-3": lambda h: channel(32, 4, b"\x03" + bytes(16)),
    "channel-records-outcome-not-json": lambda h: channel(32, 4, b"\x00" + bytes(16) + b"{["),
    "channel-records-open-flags-2": lambda h: channel(1, 4, b"\x02" + struct.pack(">QI", 10, 1) + short_string("Task")),
    "channel-records-outcome-of-a-file": lambda h: channel(32, 1, b"\x00" + bytes(16)),
    "channel-kind-26": lambda h: channel(26, 2, struct.pack(">IQ", 1, 0)),
    "channel-purpose-5": lambda h: channel(6, 5, struct.pack(">Q", 0)),
    "channel-tree-step-of-a-file": lambda h: channel(22, 1),
    "channel-tree-open-no-entries": lambda h: channel(1, 2, struct.pack(">IQ", 0, 0)),
    "channel-accept-truncated": lambda h: channel(2, 1, struct.pack(">Q", 0) + bytes(31)),
    "channel-result-verified-2": lambda h: channel(8, 1, b"\x02" + bytes(32)),
    "channel-data-empty": lambda h: channel(5, 3, struct.pack(">Q", 0)),
    "channel-entries-empty": lambda h: channel(16, 2, struct.pack(">I", 0)),
    "channel-open-path-not-utf8": lambda h: channel(1, 1, struct.pack(">Q", 1) + struct.pack(">H", 1) + b"\xff"
                                                    + short_string("text/plain")),
    "transfer-kind-20": lambda h: transfer(20, struct.pack(">IQ", 1, 0)),
    "transfer-offer-path-not-utf8": lambda h: transfer(1, struct.pack(">Q", 1) + struct.pack(">H", 1) + b"\xff"
                                                       + short_string("text/plain")),
    "transfer-offer-no-size": lambda h: transfer(1, bytes(4)),
    "stream-kind-9": lambda h: stream(9, short_string("x")),
    "stream-deny-long-reason": lambda h: stream(3, short_string("r" * 1025)),
    "channel-file-data-nobody-accepted": lambda h: channel(5, 1, struct.pack(">Q", 0) + b"unasked"),
    "channel-tree-file-nobody-accepted": lambda h: channel(18, 2, struct.pack(">IQ", 0, 0)),
    "channel-stream-data-nobody-accepted": lambda h: channel(5, 3, struct.pack(">Q", 0) + b"unasked"),
    "channel-records-data-nobody-accepted": lambda h: channel(5, 4, struct.pack(">Q", 0) + b"unasked"),
}
# Cases that close our side after sending (the peer sees EOF inside a frame).
CLOSE_AFTER = {"truncated-frame-close", "truncated-header-close"}

_ctx = {}


def hello(peer_id=None, key=None, name=None, session=None):
    """A HELLO payload with the given fields replaced (bytes, so broken values can be given)."""
    peer_id = _ctx["id"] if peer_id is None else peer_id
    key = _ctx["key"] if key is None else key
    name = _ctx["name"].encode() if name is None else name
    session = _ctx["session"].encode() if session is None else session
    return (peer_id + struct.pack(">IHQ", 7, 0, random.getrandbits(63) + 1) + struct.pack(">B", len(key)) + key
            + struct.pack(">H", len(name)) + name + struct.pack(">H", len(session)) + session)


def main():
    args = sys.argv[1:]
    table = catalogue()
    if args == ["--list"]:
        names = [c for c, _, _ in table]
        missing, extra = [c for c in names if c not in INPUTS], [c for c in INPUTS if c not in names]
        if missing or extra or not names:
            sys.exit("PROTOCOL.md §12.1 and malformed.py disagree: no input for %s; not in the table: %s" % (missing, extra))
        print("\n".join(names))
        return 0
    opts = {"--session": "chat", "--source": None, "--timeout": "10"}
    for key in opts:
        if key in args:
            i = args.index(key); opts[key] = args[i + 1]; del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    host, port, case = args[0], int(args[1]), args[2]
    rows = {c: (after, code) for c, after, code in table}
    if case not in rows or case not in INPUTS:
        sys.exit("unknown case %s" % case)
    after, expect = rows[case]
    tmp = tempfile.mkdtemp(prefix="malformed.")
    try:
        cert, key, our_id = raw_peer.make_identity(tmp)
        _ctx.update(id=our_id, key=os.urandom(32), name="bad-" + case[:50], session=opts["--session"])
        start = time.monotonic()
        deadline = start + float(opts["--timeout"])
        c = Conn(host, port, float(opts["--timeout"]), True, (cert, key), source=opts["--source"])
        note = ""
        if c.tls_error:
            note = "TLS failed: %s" % c.tls_error
        else:
            valid_hello = hello()
            if after == "welcome":
                c.send(frame(HELLO, valid_hello))
                if c.wait_for(WELCOME, deadline) != WELCOME:
                    note = "handshake failed: %s" % (c.received,)
            if not note:
                c.received = []  # only what answers the malformed input counts
                c.error = None
                try:
                    c.send(INPUTS[case](valid_hello))
                    if case in CLOSE_AFTER:
                        c.sock = c.sock.unwrap()  # close_notify: our side is done
                except (ssl.SSLError, OSError) as e:
                    note = "sending: %s" % e
                c.drain(deadline)
        got = c.error[0] if c.error else None
        ok = not note.startswith("handshake") and c.closed and got == expect
        if case in CLOSE_AFTER:
            ok = not note.startswith("handshake")  # we closed: the server can only hang up too
        print(json.dumps({"case": case, "after": after, "expect": expect, "error_code": got,
                          "error_reason": c.error[1] if c.error else None, "received": c.received,
                          "closed_by_server": c.closed, "ok": ok, "elapsed": round(time.monotonic() - start, 2),
                          "note": note}))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
