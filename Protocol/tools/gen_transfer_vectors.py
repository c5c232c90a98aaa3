#!/usr/bin/env python3
"""Writes Protocol/vectors/transfer.json: TRANSFER (0x50) frames, hex, with their decoded fields."""
import json, struct, pathlib

def frame(payload, type_=0x50, version=1):
    return b"P2" + struct.pack(">BBHI", version, type_, 0, len(payload)) + payload

def str16(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b

def msg(kind, tid, rest=b""):
    return struct.pack(">BQ", kind, tid) + rest

H = bytes(range(32))
vectors = [
    ("offer", msg(1, 0x0102030405060708, struct.pack(">Q", 1048576) + str16("photos/cat.png") + str16("image/png")),
     {"kind": "offer", "id": "72623859790382856", "size": "1048576", "path": "photos/cat.png", "mediaType": "image/png"}),
    ("offer with a hostile path (decodes; the receiver refuses it)", msg(1, 1, struct.pack(">Q", 10) + str16("../../x") + str16("text/plain")),
     {"kind": "offer", "id": "1", "size": "10", "path": "../../x", "mediaType": "text/plain"}),
    ("accept, fresh", msg(2, 1, struct.pack(">Q", 0) + bytes(32)), {"kind": "accept", "id": "1", "offset": "0", "hash": bytes(32).hex()}),
    ("accept, resume", msg(2, 1, struct.pack(">Q", 1500000) + H), {"kind": "accept", "id": "1", "offset": "1500000", "hash": H.hex()}),
    ("deny", msg(3, 1, str16("declined by the receiver")), {"kind": "deny", "id": "1", "reason": "declined by the receiver"}),
    ("start", msg(4, 1, struct.pack(">Q", 1500000)), {"kind": "start", "id": "1", "offset": "1500000"}),
    ("chunk", msg(5, 1, struct.pack(">Q", 4096) + b"hello"), {"kind": "chunk", "id": "1", "offset": "4096", "bytes": b"hello".hex()}),
    ("ack", msg(6, 1, struct.pack(">Q", 1 << 20)), {"kind": "ack", "id": "1", "written": str(1 << 20)}),
    ("done", msg(7, 1, H), {"kind": "done", "id": "1", "hash": H.hex()}),
    ("result verified", msg(8, 1, b"\x01" + H), {"kind": "result", "id": "1", "verified": True, "hash": H.hex()}),
    ("result mismatch", msg(8, 1, b"\x00" + H), {"kind": "result", "id": "1", "verified": False, "hash": H.hex()}),
    ("cancel", msg(9, 1, str16("the sender cancelled")), {"kind": "cancel", "id": "1", "reason": "the sender cancelled"}),
    ("unknown kind", msg(10, 1), {"error": "malformedPayload"}),
    ("empty chunk", msg(5, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    ("result with verified = 2", msg(8, 1, b"\x02" + H), {"error": "malformedPayload"}),
    ("done with a short hash", msg(7, 1, H[:31]), {"error": "malformedPayload"}),
    ("start with trailing bytes", msg(4, 1, struct.pack(">Q", 0) + b"\x00"), {"error": "malformedPayload"}),
]
out = [{"name": n, "hex": frame(p).hex(), "expect": e} for n, p, e in vectors]
path = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "transfer.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {len(out)} vectors to {path}")
