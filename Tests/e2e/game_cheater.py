#!/usr/bin/env python3
"""A crafted tic-tac-toe peer that cheats on purpose (Tests/e2e/game.sh), speaking the p2p protocol in
plaintext to a `p2p game --insecure` (TLS needs an identity certificate this script does not have).

usage: game_cheater.py HOST PORT --session S [--timeout SECONDS]

Three rounds, each with one cheat the opponent must refuse (REFUSE with the code of Protocol/GAME.md):
  1. commits to roll 10, then reveals 999999                      -> REFUSE 8 (badReveal)
  2. rolls 0 honestly, so the opponent is X, and moves anyway        -> REFUSE 2 (outOfTurn)
  3. rolls 999999 honestly (X), plays 5, waits for the opponent's move, plays 5 again -> REFUSE 3 (occupied)
Prints one JSON object: {"refusals": [[round, code, reason]...], "received": [...], "closed": bool, "note": str}.
"""
import hashlib
import json
import os
import random
import socket
import struct
import sys
import time

HELLO, WELCOME, ERROR, PING, PONG, BYE, GAME = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x30
NEW_ROUND, COMMIT, REVEAL, MOVE, REFUSE, LEAVE = 1, 2, 3, 4, 5, 6
KIND_NAMES = {1: "NEW_ROUND", 2: "COMMIT", 3: "REVEAL", 4: "MOVE", 5: "REFUSE", 6: "LEAVE"}


def frame(ftype, payload=b""):
    return b"P2" + struct.pack(">BBHI", 1, ftype, 0, len(payload)) + payload


def sstr(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def game(kind, rnd, body=b""):
    return frame(GAME, struct.pack(">BI", kind, rnd) + body)


def commitment(roll, nonce):
    return hashlib.sha256(struct.pack(">I", roll) + nonce).digest()


def board_hash(cells):
    return hashlib.sha256(bytes(cells)).digest()[:8]


class Peer:
    def __init__(self, host, port, deadline):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.deadline = deadline
        self.buf = b""
        self.received = []
        self.refusals = []
        self.closed = False

    def send(self, data):
        self.sock.sendall(data)

    def frame(self):
        """The next frame (answering PINGs on the way); (None, None) on EOF or timeout."""
        while True:
            if len(self.buf) >= 10:
                _, ftype, _, length = struct.unpack(">BBHI", self.buf[2:10])
                if len(self.buf) >= 10 + length:
                    payload, self.buf = self.buf[10:10 + length], self.buf[10 + length:]
                    if ftype == PING:
                        self.send(frame(PONG, payload))
                        continue
                    return ftype, payload
            left = self.deadline - time.monotonic()
            if left <= 0:
                return None, None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except (socket.timeout, ConnectionResetError):
                chunk = b""
            if not chunk:
                self.closed = True
                return None, None
            self.buf += chunk

    def game_message(self, kind):
        """Reads until a GAME message of `kind`; returns (round, body) or None."""
        while True:
            ftype, payload = self.frame()
            if ftype is None:
                return None
            if ftype == ERROR:
                self.received.append("ERROR")
                return None
            if ftype != GAME:
                continue
            got, rnd = payload[0], struct.unpack(">I", payload[1:5])[0]
            self.received.append("%s(%d)" % (KIND_NAMES.get(got, got), rnd))
            if got == REFUSE:
                n = struct.unpack(">H", payload[6:8])[0]
                self.refusals.append([rnd, payload[5], payload[8:8 + n].decode("utf-8", "replace")])
            if got == kind:
                return rnd, payload[5:]


def open_round(p, number, committed, revealed):
    """NEW_ROUND and COMMIT to `committed`, wait for the opponent's REVEAL, then REVEAL `revealed`
    (a cheat when the two differ)."""
    nonce = os.urandom(32)
    p.send(game(NEW_ROUND, number) + game(COMMIT, number, commitment(committed, nonce)))
    if p.game_message(REVEAL) is None:
        raise RuntimeError(f"round {number}: no REVEAL")
    p.send(game(REVEAL, number, struct.pack(">I", revealed) + nonce))


def main():
    args = sys.argv[1:]
    session, timeout = "game", 30.0
    if "--session" in args:
        i = args.index("--session"); session = args[i + 1]; del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout"); timeout = float(args[i + 1]); del args[i:i + 2]
    host, port = args[0], int(args[1])
    p = Peer(host, port, time.monotonic() + timeout)
    note = ""
    try:
        hello = (os.urandom(16) + struct.pack(">IHQB", 7, 0, random.getrandbits(64), 0)
                 + sstr("cheater") + sstr(session))
        p.send(frame(HELLO, hello))
        ftype, _ = p.frame()
        if ftype == HELLO:  # the acceptor introduces itself, then says yes
            ftype, _ = p.frame()
        if ftype != WELCOME:
            raise RuntimeError("no WELCOME (got %s)" % ftype)

        # Round 1: commit to 10, see the opponent's roll, claim 999999.
        open_round(p, 1, committed=10, revealed=999999)
        p.game_message(REFUSE)

        # Round 2: an honest roll of 0 makes the opponent X; move anyway.
        open_round(p, 2, committed=0, revealed=0)
        p.send(game(MOVE, 2, bytes([1, 5]) + board_hash([0, 0, 0, 0, 2, 0, 0, 0, 0])))
        p.game_message(REFUSE)

        # Round 3: an honest 999999 makes us X; play 5, let the opponent move, play 5 again.
        open_round(p, 3, committed=999999, revealed=999999)
        p.send(game(MOVE, 3, bytes([1, 5]) + board_hash([0, 0, 0, 0, 1, 0, 0, 0, 0])))
        if p.game_message(MOVE) is None:
            raise RuntimeError("round 3: the opponent did not move")
        p.send(game(MOVE, 3, bytes([3, 5]) + board_hash([0, 0, 0, 0, 1, 0, 0, 0, 0])))
        p.game_message(REFUSE)

        # Round 4: X again; a legal first move on 5 whose board hash is wrong (refused: no move shown).
        open_round(p, 4, committed=999999, revealed=999999)
        p.send(game(MOVE, 4, bytes([1, 5]) + board_hash([0, 0, 0, 0, 2, 0, 0, 0, 0])))
        p.game_message(REFUSE)
        p.send(game(LEAVE, 4) + frame(BYE))
    except (RuntimeError, OSError) as error:
        note = str(error)
    print(json.dumps({"refusals": p.refusals, "received": p.received, "closed": p.closed, "note": note}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
