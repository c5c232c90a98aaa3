#!/usr/bin/env python3
"""Regenerates Protocol/vectors/game.json (Protocol/GAME.md). GameVectorTests verifies every vector."""
import hashlib, json, os, struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "game.json")
GAME = 0x30
KINDS = {"new_round": 1, "commit": 2, "reveal": 3, "move": 4, "refuse": 5, "leave": 6}

def frame(payload):
    return b"P2" + struct.pack(">BBHI", 1, GAME, 0, len(payload)) + payload

def game(kind, rnd, body=b""):
    return struct.pack(">BI", KINDS.get(kind, kind), rnd) + body

def sstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">H", len(b)) + b

def commitment(roll, nonce):
    return hashlib.sha256(struct.pack(">I", roll) + nonce).digest()

def board_hash(cells):
    return hashlib.sha256(bytes(cells)).digest()[:8]

NONCE = bytes(range(32))
NONCE2 = bytes.fromhex("f1" * 32)
frames, commitments, boards = [], [], []

def valid(name, payload, expect):
    frames.append({"name": name, "hex": frame(payload).hex(), "expect": expect})

def invalid(name, payload):
    frames.append({"name": name, "hex": frame(payload).hex(), "expect": {"error": "malformedPayload"}})

# ---- valid messages
valid("new_round 1", game("new_round", 1), {"kind": "new_round", "round": 1})
c = commitment(123456, NONCE)
valid("commit", game("commit", 1, c), {"kind": "commit", "round": 1, "commitment": c.hex()})
valid("reveal", game("reveal", 1, struct.pack(">I", 123456) + NONCE), {"kind": "reveal", "round": 1, "roll": 123456, "nonce": NONCE.hex()})
valid("reveal roll off the die decodes (the game refuses it)", game("reveal", 2, struct.pack(">I", 0xffffffff) + NONCE2),
      {"kind": "reveal", "round": 2, "roll": 0xffffffff, "nonce": NONCE2.hex()})
h = board_hash([0, 0, 0, 0, 1, 0, 0, 0, 0])
valid("move 1: X on square 5", game("move", 1, bytes([1, 5]) + h), {"kind": "move", "round": 1, "number": 1, "square": 5, "boardHash": h.hex()})
valid("move square 10 decodes (the game refuses it)", game("move", 3, bytes([2, 10]) + h),
      {"kind": "move", "round": 3, "number": 2, "square": 10, "boardHash": h.hex()})
valid("refuse occupied", game("refuse", 1, bytes([3]) + sstr("move refused: square 5 is already taken by X")),
      {"kind": "refuse", "round": 1, "code": 3, "reason": "move refused: square 5 is already taken by X"})
valid("refuse unknown code, UTF-8 reason", game("refuse", 4, bytes([200]) + sstr("coup refusé ✗")),
      {"kind": "refuse", "round": 4, "code": 200, "reason": "coup refusé ✗"})
valid("leave, largest round", game("leave", 0xffffffff), {"kind": "leave", "round": 0xffffffff})

# ---- malformed payloads (fatal for the connection: ERROR 6)
invalid("empty payload", b"")
invalid("kind only", bytes([1]))
invalid("unknown kind 0", game(0, 1))
invalid("unknown kind 7", game(7, 1))
invalid("new_round with a trailing byte", game("new_round", 1, b"\x00"))
invalid("commit of 31 bytes", game("commit", 1, c[:31]))
invalid("commit of 33 bytes", game("commit", 1, c + b"\x00"))
invalid("reveal without the last nonce byte", game("reveal", 1, struct.pack(">I", 5) + NONCE[:31]))
invalid("move without the last hash byte", game("move", 1, bytes([1, 5]) + h[:7]))
invalid("refuse reason over 1024 bytes", game("refuse", 1, bytes([1]) + sstr("x" * 1025)))
invalid("refuse reason not UTF-8", game("refuse", 1, bytes([1]) + sstr(b"\xff\xfe")))
invalid("refuse without a reason", game("refuse", 1, bytes([1])))

# ---- commitments and board hashes
for roll, nonce in [(0, bytes(32)), (123456, NONCE), (999999, NONCE2)]:
    commitments.append({"roll": roll, "nonce": nonce.hex(), "commitment": commitment(roll, nonce).hex()})
for cells in ["000000000", "000010000", "120000000", "121212211", "211122112"]:
    boards.append({"cells": cells, "hash": board_hash([int(x) for x in cells]).hex()})

with open(OUT, "w", encoding="utf-8") as f:
    json.dump({"frames": frames, "commitments": commitments, "boards": boards}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(f"wrote {len(frames)} frames, {len(commitments)} commitments, {len(boards)} boards to {os.path.normpath(OUT)}")
