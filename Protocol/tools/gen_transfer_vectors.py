#!/usr/bin/env python3
"""Writes Protocol/vectors/transfer.json: TRANSFER (0x50) frames, hex, with their decoded fields."""
import hashlib, json, struct, pathlib

def frame(payload, type_=0x50, version=1):
    return b"P2" + struct.pack(">BBHI", version, type_, 0, len(payload)) + payload

def str16(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b

def msg(kind, tid, rest=b""):
    return struct.pack(">BQ", kind, tid) + rest

def entry(kind, mode, size, path):
    return struct.pack(">BHQ", kind, mode, size) + str16(path)

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
    ("unknown kind", msg(20, 1), {"error": "malformedPayload"}),
    # Trees (kinds 10-19).
    ("tree offer", msg(10, 7, struct.pack(">IQ", 3, 8197)), {"kind": "treeOffer", "id": "7", "entries": "3", "total": "8197"}),
    ("entries", msg(11, 7, struct.pack(">I", 0) + entry(1, 0o755, 0, "many") + entry(0, 0o644, 5, "many/a.txt") + entry(0, 0o600, 8192, "many/sub/b.bin")),
     {"kind": "entries", "id": "7", "first": "0", "list": "directory 755 0 many;file 644 5 many/a.txt;file 600 8192 many/sub/b.bin"}),
    ("held", msg(12, 7, struct.pack(">IBQ", 1, 1, 5) + H + struct.pack(">IBQ", 2, 2, 4096) + H),
     {"kind": "held", "id": "7", "list": f"1 whole 5 {H.hex()};2 partial 4096 {H.hex()}"}),
    ("tree accept", msg(13, 7, struct.pack(">I", 2)), {"kind": "treeAccept", "id": "7", "held": "2"}),
    ("file", msg(14, 7, struct.pack(">IQ", 2, 4096)), {"kind": "file", "id": "7", "index": "2", "offset": "4096"}),
    ("file done", msg(15, 7, struct.pack(">I", 2) + H), {"kind": "fileDone", "id": "7", "index": "2", "hash": H.hex()}),
    ("skip", msg(16, 7, struct.pack(">I", 1)), {"kind": "skip", "id": "7", "index": "1"}),
    ("small, two files (one empty)", msg(17, 7, struct.pack(">I", 1) + hashlib.sha256(b"hello").digest() + struct.pack(">I", 5) + b"hello"
                                      + struct.pack(">I", 4) + hashlib.sha256(b"").digest() + struct.pack(">I", 0)),
     {"kind": "small", "id": "7", "list": f"1 {hashlib.sha256(b'hello').hexdigest()} 68656c6c6f;4 {hashlib.sha256(b'').hexdigest()} "}),
    ("tree end", msg(18, 7), {"kind": "treeEnd", "id": "7"}),
    ("tree result", msg(19, 7, struct.pack(">III", 2, 1, 1) + struct.pack(">I", 4) + str16("SHA-256 mismatch")),
     {"kind": "treeResult", "id": "7", "verified": "2", "alreadyThere": "1", "failed": "4 SHA-256 mismatch"}),
    ("tree offer of 0 entries", msg(10, 7, struct.pack(">IQ", 0, 0)), {"error": "malformedPayload"}),
    ("entries: a directory with a size", msg(11, 7, struct.pack(">I", 0) + entry(1, 0o755, 3, "d")), {"error": "malformedPayload"}),
    ("entries: mode beyond 777", msg(11, 7, struct.pack(">I", 0) + entry(0, 0o4755, 3, "f")), {"error": "malformedPayload"}),
    ("entries: none", msg(11, 7, struct.pack(">I", 0)), {"error": "malformedPayload"}),
    ("held: unknown state", msg(12, 7, struct.pack(">IBQ", 1, 3, 5) + H), {"error": "malformedPayload"}),
    ("small: length beyond the payload", msg(17, 7, struct.pack(">I", 1) + H + struct.pack(">I", 9) + b"hello"), {"error": "malformedPayload"}),
    ("tree end with trailing bytes", msg(18, 7, b"\x00"), {"error": "malformedPayload"}),
    ("tree result: fewer failures than counted", msg(19, 7, struct.pack(">III", 2, 1, 2) + struct.pack(">I", 4) + str16("x")), {"error": "malformedPayload"}),
    ("empty chunk", msg(5, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    ("result with verified = 2", msg(8, 1, b"\x02" + H), {"error": "malformedPayload"}),
    ("done with a short hash", msg(7, 1, H[:31]), {"error": "malformedPayload"}),
    ("start with trailing bytes", msg(4, 1, struct.pack(">Q", 0) + b"\x00"), {"error": "malformedPayload"}),
]
out = [{"name": n, "hex": frame(p).hex(), "expect": e} for n, p, e in vectors]
path = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "transfer.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {len(out)} vectors to {path}")
