#!/usr/bin/env python3
"""A minimal p2p protocol client for misbehaving on purpose (Tests/e2e/bad_input.sh).

usage: raw_peer.py HOST PORT SCENARIO [--session S] [--timeout SECONDS]

Prints one JSON object: {"scenario", "received": [frame types], "error_code": int|null,
"error_reason": str|null, "closed_by_server": bool, "elapsed": seconds, "note": str}.
"closed_by_server" is true when the server closed the connection (EOF or reset) after what we sent.

Scenarios:
  hello        valid handshake only, then leave with BYE (sanity check)
  huge         valid handshake, then a frame header announcing 0xffffffff payload bytes  -> ERROR 4
  garbage      random bytes (first byte is never the magic 0x50) instead of a HELLO       -> ERROR 2
  truncated    valid handshake, half a TEXT frame, then close our side (no assertion on the answer)
  version2     a HELLO frame with protocol version 2                                      -> ERROR 3
  unknown      valid handshake, then a frame of type 0x7f                                 -> ERROR 5
  badutf8      valid handshake, then a TEXT whose text is not UTF-8                       -> ERROR 6
  silent       connect and send nothing                                                   -> ERROR 10
"""
import json
import os
import random
import socket
import struct
import sys
import time

MAGIC = b"P2"
HELLO, WELCOME, ERROR, PING, PONG, BYE, DATA, TEXT = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11
NAMES = {HELLO: "HELLO", WELCOME: "WELCOME", ERROR: "ERROR", PING: "PING", PONG: "PONG", BYE: "BYE", DATA: "DATA", TEXT: "TEXT"}


def frame(ftype, payload=b"", version=1, flags=0, length=None):
    return MAGIC + struct.pack(">BBHI", version, ftype, flags, len(payload) if length is None else length) + payload


def short_string(s):
    b = s.encode("utf-8")
    return struct.pack(">H", len(b)) + b


def hello_payload(name, session):
    return (os.urandom(16) + struct.pack(">IHQ", 1, 0, random.getrandbits(64))
            + short_string(name) + short_string(session))


class Conn:
    def __init__(self, host, port, timeout):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buf = b""
        self.timeout = timeout
        self.received = []
        self.error = None
        self.closed = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        """Reads more bytes; False on EOF/reset/timeout (closed is set on EOF/reset)."""
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.closed = True
            return False
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        return True

    def read_frame(self, deadline):
        while True:
            if len(self.buf) >= 10:
                if self.buf[:2] != MAGIC:
                    raise ValueError("server sent bad magic: %r" % self.buf[:10])
                version, ftype, flags, length = struct.unpack(">BBHI", self.buf[2:10])
                if len(self.buf) >= 10 + length:
                    payload = self.buf[10:10 + length]
                    self.buf = self.buf[10 + length:]
                    self.received.append(NAMES.get(ftype, hex(ftype)))
                    if ftype == ERROR and len(payload) >= 4:
                        code, n = struct.unpack(">HH", payload[:4])
                        self.error = (code, payload[4:4 + n].decode("utf-8", "replace"))
                    return ftype, payload
            if not self._fill(deadline):
                return None, None

    def wait_for(self, wanted, deadline):
        """Reads frames until one of type `wanted` (answering PINGs); None if the connection ended first."""
        while True:
            ftype, payload = self.read_frame(deadline)
            if ftype is None or ftype == wanted:
                return ftype
            if ftype == PING:
                self.send(frame(PONG, payload))
            if ftype == ERROR:
                return ftype

    def drain(self, deadline):
        """Reads until the server closes (or the deadline passes)."""
        while not self.closed:
            ftype, _ = self.read_frame(deadline)
            if ftype is None:
                break


def main():
    args = sys.argv[1:]
    session, timeout = "chat", 15.0
    if "--session" in args:
        i = args.index("--session"); session = args[i + 1]; del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout"); timeout = float(args[i + 1]); del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    host, port, scenario = args[0], int(args[1]), args[2]
    start = time.monotonic()
    deadline = start + timeout
    c = Conn(host, port, timeout)
    note = ""

    def handshake():
        c.send(frame(HELLO, hello_payload("raw-" + scenario, session)))
        got = c.wait_for(WELCOME, deadline)
        if got != WELCOME:
            raise SystemExit(report(c, scenario, start, "handshake failed: got %s" % (c.received,)))

    if scenario == "hello":
        handshake()
        c.send(frame(BYE))
    elif scenario == "huge":
        handshake()
        c.send(frame(TEXT, b"", length=0xFFFFFFFF))
    elif scenario == "garbage":
        junk = bytearray(os.urandom(64))
        junk[0] = random.choice([b for b in range(256) if b != 0x50])
        c.send(bytes(junk))
    elif scenario == "truncated":
        handshake()
        whole = frame(TEXT, struct.pack(">Qq", 1, int(time.time() * 1000)) + b"never finished")
        c.send(whole[:len(whole) - 5])
        c.sock.shutdown(socket.SHUT_WR)
    elif scenario == "version2":
        c.send(frame(HELLO, hello_payload("raw-" + scenario, session), version=2))
    elif scenario == "unknown":
        handshake()
        c.send(frame(0x7F, b"what is this"))
    elif scenario == "badutf8":
        handshake()
        c.send(frame(TEXT, struct.pack(">Qq", 2, int(time.time() * 1000)) + b"ok \xff\xfe\xc3("))
    elif scenario == "silent":
        pass
    else:
        sys.exit("unknown scenario " + scenario)
    c.drain(deadline)
    return report(c, scenario, start, note)


def report(c, scenario, start, note):
    print(json.dumps({
        "scenario": scenario, "received": c.received,
        "error_code": c.error[0] if c.error else None, "error_reason": c.error[1] if c.error else None,
        "closed_by_server": c.closed, "elapsed": round(time.monotonic() - start, 2), "note": note,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
