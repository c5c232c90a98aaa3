#!/usr/bin/env python3
"""Writes Protocol/vectors/stream.json: STREAM (0x51) frames, hex, with their decoded fields."""
import json, struct, pathlib

def frame(payload, type_=0x51, version=1):
    return b"P2" + struct.pack(">BBHI", version, type_, 0, len(payload)) + payload

def str16(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">H", len(b)) + b

def msg(kind, sid, rest=b""):
    return struct.pack(">BQ", kind, sid) + rest

H = bytes(range(32))
vectors = [
    ("open", msg(1, 0x0102030405060708, str16("dump.sql") + str16("application/sql")),
     {"kind": "open", "id": "72623859790382856", "name": "dump.sql", "mediaType": "application/sql"}),
    ("open, octet stream, non-ASCII name", msg(1, 2, str16("Blöcke ✓.bin") + str16("application/octet-stream")),
     {"kind": "open", "id": "2", "name": "Blöcke ✓.bin", "mediaType": "application/octet-stream"}),
    ("open with the longest name (4096 bytes)", msg(1, 3, str16("n" * 4096) + str16("")),
     {"kind": "open", "id": "3", "name": "n" * 4096, "mediaType": ""}),
    ("accept", msg(2, 1), {"kind": "accept", "id": "1"}),
    ("deny", msg(3, 1, str16("declined by the receiver")), {"kind": "deny", "id": "1", "reason": "declined by the receiver"}),
    ("data", msg(4, 1, b"hello, stream"), {"kind": "data", "id": "1", "bytes": b"hello, stream".hex()}),
    ("data, one byte", msg(4, 1, b"\x00"), {"kind": "data", "id": "1", "bytes": "00"}),
    ("ack", msg(5, 1, struct.pack(">Q", 1 << 20)), {"kind": "ack", "id": "1", "consumed": str(1 << 20)}),
    ("end", msg(6, 1, struct.pack(">Q", 52428800) + H), {"kind": "end", "id": "1", "length": "52428800", "hash": H.hex()}),
    ("end of an empty stream", msg(6, 1, struct.pack(">Q", 0) + bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")),
     {"kind": "end", "id": "1", "length": "0", "hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}),
    ("result verified", msg(7, 1, b"\x01" + H), {"kind": "result", "id": "1", "verified": True, "hash": H.hex()}),
    ("result mismatch", msg(7, 1, b"\x00" + H), {"kind": "result", "id": "1", "verified": False, "hash": H.hex()}),
    ("cancel", msg(8, 1, str16("the sender cancelled")), {"kind": "cancel", "id": "1", "reason": "the sender cancelled"}),
    ("unknown kind 0", msg(0, 1), {"error": "malformedPayload"}),
    ("unknown kind 9", msg(9, 1), {"error": "malformedPayload"}),
    ("no stream ID", struct.pack(">B", 2) + bytes(7), {"error": "malformedPayload"}),
    ("empty data", msg(4, 1), {"error": "malformedPayload"}),
    ("accept with trailing bytes", msg(2, 1, b"\x00"), {"error": "malformedPayload"}),
    ("ack with a short count", msg(5, 1, bytes(7)), {"error": "malformedPayload"}),
    ("end with a short hash", msg(6, 1, struct.pack(">Q", 5) + H[:31]), {"error": "malformedPayload"}),
    ("end with trailing bytes", msg(6, 1, struct.pack(">Q", 5) + H + b"\x00"), {"error": "malformedPayload"}),
    ("result with verified = 2", msg(7, 1, b"\x02" + H), {"error": "malformedPayload"}),
    ("open with a name over 4096 bytes", msg(1, 1, str16("n" * 4097) + str16("text/plain")), {"error": "malformedPayload"}),
    ("open with a media type over 127 bytes", msg(1, 1, str16("x") + str16("t" * 128)), {"error": "malformedPayload"}),
    ("open with a name that is not UTF-8", msg(1, 1, str16(b"\xff\xfe") + str16("text/plain")), {"error": "malformedPayload"}),
    ("open without a media type", msg(1, 1, str16("x")), {"error": "malformedPayload"}),
    ("deny with a reason over 1024 bytes", msg(3, 1, str16("r" * 1025)), {"error": "malformedPayload"}),
    ("cancel with a truncated reason", msg(8, 1, struct.pack(">H", 10) + b"short"), {"error": "malformedPayload"}),
]
out = [{"name": n, "hex": frame(p).hex(), "expect": e} for n, p, e in vectors]
path = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "stream.json"
path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"wrote {len(out)} vectors to {path}")
