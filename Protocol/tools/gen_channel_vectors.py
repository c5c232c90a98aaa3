#!/usr/bin/env python3
"""Writes Protocol/vectors/channel.json: CHANNEL (0x52) frames, hex, with their decoded fields, and the
older TRANSFER (0x50) / STREAM (0x51) frames a receiver refuses ("legacy": kind and ID only)."""
import hashlib, json, struct, pathlib

FILE, TREE, STREAM = 1, 2, 3

def frame(payload, type_=0x52, version=1):
    return b"P2" + struct.pack(">BBHI", version, type_, 0, len(payload)) + payload

def str16(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">H", len(b)) + b

def msg(kind, purpose, cid, rest=b""):
    return struct.pack(">BBQ", kind, purpose, cid) + rest

def entry(kind, mode, size, path):
    return struct.pack(">BHQ", kind, mode, size) + str16(path)

def legacy(kind, lid, rest=b""):
    return struct.pack(">BQ", kind, lid) + rest

H = bytes(range(32))
EMPTY = hashlib.sha256(b"").digest()
P = {FILE: "file", TREE: "tree", STREAM: "stream"}
def e(kind, purpose, cid, **fields):
    return {"kind": kind, "purpose": P[purpose], "id": str(cid), **fields}

vectors = [
    # The steps every purpose shares (kinds 1-9).
    ("open a file", msg(1, FILE, 0x0102030405060708, struct.pack(">Q", 1048576) + str16("photos/cat.png") + str16("image/png")),
     e("open", FILE, 0x0102030405060708, size="1048576", path="photos/cat.png", mediaType="image/png")),
    ("open a file with a hostile path (decodes; the receiver refuses it)", msg(1, FILE, 1, struct.pack(">Q", 10) + str16("../../x") + str16("text/plain")),
     e("open", FILE, 1, size="10", path="../../x", mediaType="text/plain")),
    ("open a tree", msg(1, TREE, 7, struct.pack(">IQ", 3, 8197)), e("open", TREE, 7, entries="3", total="8197")),
    ("open a stream", msg(1, STREAM, 2, str16("dump.sql") + str16("application/sql")), e("open", STREAM, 2, name="dump.sql", mediaType="application/sql")),
    ("open a stream, non-ASCII name", msg(1, STREAM, 2, str16("Blöcke ✓.bin") + str16("application/octet-stream")),
     e("open", STREAM, 2, name="Blöcke ✓.bin", mediaType="application/octet-stream")),
    ("open a stream with the longest name (4096 bytes)", msg(1, STREAM, 3, str16("n" * 4096) + str16("")), e("open", STREAM, 3, name="n" * 4096, mediaType="")),
    ("accept a file, fresh", msg(2, FILE, 1, struct.pack(">Q", 0) + bytes(32)), e("accept", FILE, 1, offset="0", hash=bytes(32).hex())),
    ("accept a file, resume", msg(2, FILE, 1, struct.pack(">Q", 1500000) + H), e("accept", FILE, 1, offset="1500000", hash=H.hex())),
    # A tree's ACCEPT counts the entries reported held (each at most once), not the HELD frames that carried them.
    ("accept a tree, 2 held entries reported before it", msg(2, TREE, 7, struct.pack(">Q", 2)), e("accept", TREE, 7, offset="2", hash="")),
    ("accept a stream", msg(2, STREAM, 1, struct.pack(">Q", 0)), e("accept", STREAM, 1, offset="0", hash="")),
    ("deny", msg(3, FILE, 1, str16("declined by the receiver")), e("deny", FILE, 1, reason="declined by the receiver")),
    ("start", msg(4, FILE, 1, struct.pack(">Q", 1500000)), e("start", FILE, 1, offset="1500000")),
    ("data of a file", msg(5, FILE, 1, struct.pack(">Q", 4096) + b"hello"), e("data", FILE, 1, offset="4096", bytes=b"hello".hex())),
    ("data of a stream, one byte", msg(5, STREAM, 1, struct.pack(">Q", 0) + b"\x00"), e("data", STREAM, 1, offset="0", bytes="00")),
    ("ack", msg(6, STREAM, 1, struct.pack(">Q", 1 << 20)), e("ack", STREAM, 1, total=str(1 << 20))),
    ("end", msg(7, FILE, 1, struct.pack(">Q", 52428800) + H), e("end", FILE, 1, length="52428800", hash=H.hex())),
    ("end of an empty stream", msg(7, STREAM, 1, struct.pack(">Q", 0) + EMPTY), e("end", STREAM, 1, length="0", hash=EMPTY.hex())),
    ("result verified", msg(8, FILE, 1, b"\x01" + H), e("result", FILE, 1, verified=True, hash=H.hex())),
    ("result mismatch", msg(8, STREAM, 1, b"\x00" + H), e("result", STREAM, 1, verified=False, hash=H.hex())),
    ("cancel", msg(9, TREE, 1, str16("the sender cancelled")), e("cancel", TREE, 1, reason="the sender cancelled")),
    # A tree's own steps (kinds 16-23), on a tree's channel only.
    ("entries", msg(16, TREE, 7, struct.pack(">I", 0) + entry(1, 0o755, 0, "many") + entry(0, 0o644, 5, "many/a.txt") + entry(0, 0o600, 8192, "many/sub/b.bin")),
     e("entries", TREE, 7, first="0", list="directory 755 0 many;file 644 5 many/a.txt;file 600 8192 many/sub/b.bin")),
    # A whole file's SHA-256 stays with the receiver: HELD whole carries 32 zero bytes (COMPARE, COMPARED).
    ("held", msg(17, TREE, 7, struct.pack(">IBQ", 1, 1, 5) + bytes(32) + struct.pack(">IBQ", 2, 2, 4096) + H),
     e("held", TREE, 7, list=f"1 whole 5 {bytes(32).hex()};2 partial 4096 {H.hex()}")),
    ("file", msg(18, TREE, 7, struct.pack(">IQ", 2, 4096)), e("file", TREE, 7, index="2", offset="4096")),
    ("file done", msg(19, TREE, 7, struct.pack(">I", 2) + H), e("fileDone", TREE, 7, index="2", hash=H.hex())),
    ("skip", msg(20, TREE, 7, struct.pack(">I", 1)), e("skip", TREE, 7, index="1")),
    ("small, two files (one empty)", msg(21, TREE, 7, struct.pack(">I", 1) + hashlib.sha256(b"hello").digest() + struct.pack(">I", 5) + b"hello"
                                         + struct.pack(">I", 4) + EMPTY + struct.pack(">I", 0)),
     e("small", TREE, 7, list=f"1 {hashlib.sha256(b'hello').hexdigest()} 68656c6c6f;4 {EMPTY.hex()} ")),
    ("tree end", msg(22, TREE, 7), e("treeEnd", TREE, 7)),
    ("tree result", msg(23, TREE, 7, struct.pack(">III", 2, 1, 1) + struct.pack(">I", 4) + str16("SHA-256 mismatch")),
     e("treeResult", TREE, 7, verified="2", alreadyThere="1", failed="4 SHA-256 mismatch")),
    ("compare, two files", msg(24, TREE, 7, struct.pack(">I", 1) + H + struct.pack(">I", 3) + EMPTY),
     e("compare", TREE, 7, list=f"1 {H.hex()};3 {EMPTY.hex()}")),
    ("compared, one the same, one not", msg(25, TREE, 7, struct.pack(">IB", 1, 1) + struct.pack(">IB", 3, 0)),
     e("compared", TREE, 7, list="1 same;3 differs")),
    # Refused.
    ("unknown kind 0", msg(0, FILE, 1), {"error": "malformedPayload"}),
    ("unknown kind 10", msg(10, TREE, 1), {"error": "malformedPayload"}),
    ("unknown kind 26", msg(26, TREE, 1), {"error": "malformedPayload"}),
    ("records kind 32 (OUTCOME) on a tree's channel", msg(32, TREE, 1, b"\x00" + bytes(16)), {"error": "malformedPayload"}),
    ("compare on a file's channel", msg(24, FILE, 7, struct.pack(">I", 1) + H), {"error": "malformedPayload"}),
    ("compare of none", msg(24, TREE, 7), {"error": "malformedPayload"}),
    ("compare with a short hash", msg(24, TREE, 7, struct.pack(">I", 1) + H[:31]), {"error": "malformedPayload"}),
    ("compared with same = 2", msg(25, TREE, 7, struct.pack(">IB", 1, 2)), {"error": "malformedPayload"}),
    ("compared with a truncated verdict", msg(25, TREE, 7, struct.pack(">I", 1)), {"error": "malformedPayload"}),
    ("unknown purpose 0", msg(6, 0, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    # Purpose 4 (records) is RECORDS.md's: its steps are in records.json.
    ("unknown purpose 5", msg(6, 5, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    ("a tree's step on a file's channel", msg(22, FILE, 7), {"error": "malformedPayload"}),
    ("a tree's step on a stream's channel", msg(18, STREAM, 7, struct.pack(">IQ", 2, 0)), {"error": "malformedPayload"}),
    ("no channel ID", struct.pack(">BB", 6, FILE) + bytes(7), {"error": "malformedPayload"}),
    ("empty data", msg(5, STREAM, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    ("accept a file without the prefix hash", msg(2, FILE, 1, struct.pack(">Q", 0)), {"error": "malformedPayload"}),
    ("accept a tree with a prefix hash (a tree's ACCEPT has none)", msg(2, TREE, 7, struct.pack(">Q", 2) + H), {"error": "malformedPayload"}),
    ("accept a stream with trailing bytes", msg(2, STREAM, 1, struct.pack(">Q", 0) + b"\x00"), {"error": "malformedPayload"}),
    ("ack with a short count", msg(6, STREAM, 1, bytes(7)), {"error": "malformedPayload"}),
    ("end with a short hash", msg(7, STREAM, 1, struct.pack(">Q", 5) + H[:31]), {"error": "malformedPayload"}),
    ("end with trailing bytes", msg(7, STREAM, 1, struct.pack(">Q", 5) + H + b"\x00"), {"error": "malformedPayload"}),
    ("result with verified = 2", msg(8, FILE, 1, b"\x02" + H), {"error": "malformedPayload"}),
    ("start with trailing bytes", msg(4, FILE, 1, struct.pack(">Q", 0) + b"\x00"), {"error": "malformedPayload"}),
    ("open a stream with a name over 4096 bytes", msg(1, STREAM, 1, str16("n" * 4097) + str16("text/plain")), {"error": "malformedPayload"}),
    ("open a stream with a media type over 127 bytes", msg(1, STREAM, 1, str16("x") + str16("t" * 128)), {"error": "malformedPayload"}),
    ("open a stream with a name that is not UTF-8", msg(1, STREAM, 1, str16(b"\xff\xfe") + str16("text/plain")), {"error": "malformedPayload"}),
    ("open a stream without a media type", msg(1, STREAM, 1, str16("x")), {"error": "malformedPayload"}),
    ("open a tree of 0 entries", msg(1, TREE, 7, struct.pack(">IQ", 0, 0)), {"error": "malformedPayload"}),
    ("deny with a reason over 1024 bytes", msg(3, FILE, 1, str16("r" * 1025)), {"error": "malformedPayload"}),
    ("cancel with a truncated reason", msg(9, STREAM, 1, struct.pack(">H", 10) + b"short"), {"error": "malformedPayload"}),
    ("entries: a directory with a size", msg(16, TREE, 7, struct.pack(">I", 0) + entry(1, 0o755, 3, "d")), {"error": "malformedPayload"}),
    ("entries: mode beyond 777", msg(16, TREE, 7, struct.pack(">I", 0) + entry(0, 0o4755, 3, "f")), {"error": "malformedPayload"}),
    ("entries: none", msg(16, TREE, 7, struct.pack(">I", 0)), {"error": "malformedPayload"}),
    ("held: unknown state", msg(17, TREE, 7, struct.pack(">IBQ", 1, 3, 5) + H), {"error": "malformedPayload"}),
    ("small: length beyond the payload", msg(21, TREE, 7, struct.pack(">I", 1) + H + struct.pack(">I", 9) + b"hello"), {"error": "malformedPayload"}),
    ("tree end with trailing bytes", msg(22, TREE, 7, b"\x00"), {"error": "malformedPayload"}),
    ("tree result: fewer failures than counted", msg(23, TREE, 7, struct.pack(">III", 2, 1, 2) + struct.pack(">I", 4) + str16("x")), {"error": "malformedPayload"}),
]
out = [{"name": n, "hex": frame(p).hex(), "expect": x} for n, p, x in vectors]

# An older p2p's frames (TRANSFER.md, "Older peers"): read as far as the refusal needs.
# What is read: kind and ID; a TRANSFER OFFER's size and path; a DENY's reason (either type). Nothing else.
REFUSAL = ("the receiver runs a newer p2p (wire version 1 with channel transfers, capability bit 7) and takes no TRANSFER or STREAM "
           "offers from an older p2p (wire version 1 without channel transfers); update p2p on the sending side")
old = [
    ("older TRANSFER offer", 0x50, legacy(1, 5, struct.pack(">Q", 10) + str16("notes.txt") + str16("text/plain")),
     {"type": "TRANSFER", "kind": "1", "id": "5", "size": "10", "path": "notes.txt"}),
    ("older TRANSFER offer: what follows the path is not read", 0x50, legacy(1, 5, struct.pack(">Q", 10) + str16("notes.txt") + b"\xff\xff\xff"),
     {"type": "TRANSFER", "kind": "1", "id": "5", "size": "10", "path": "notes.txt"}),
    ("older TRANSFER tree offer", 0x50, legacy(10, 6, struct.pack(">IQ", 3, 8197)), {"type": "TRANSFER", "kind": "10", "id": "6"}),
    ("older TRANSFER tree offer: nothing after the ID is read", 0x50, legacy(10, 6), {"type": "TRANSFER", "kind": "10", "id": "6"}),
    ("older STREAM open", 0x51, legacy(1, 7, str16("dump.sql") + str16("application/sql")), {"type": "STREAM", "kind": "1", "id": "7"}),
    ("older STREAM open: nothing after the ID is read", 0x51, legacy(1, 7, b"\xff"), {"type": "STREAM", "kind": "1", "id": "7"}),
    # The refusals p2p sends, byte for byte: a DENY (kind 3) in the frame type of the offer it answers.
    ("the DENY an older sender's TRANSFER offer gets (a TRANSFER frame)", 0x50, legacy(3, 5, str16(REFUSAL)),
     {"type": "TRANSFER", "kind": "3", "id": "5", "reason": REFUSAL}),
    ("the DENY an older sender's STREAM open gets (a STREAM frame)", 0x51, legacy(3, 7, str16(REFUSAL)),
     {"type": "STREAM", "kind": "3", "id": "7", "reason": REFUSAL}),
    ("older TRANSFER other step (CANCEL): kind and ID only", 0x50, legacy(9, 5, str16("the sender cancelled")), {"type": "TRANSFER", "kind": "9", "id": "5"}),
    ("older TRANSFER of unknown kind 0", 0x50, legacy(0, 5), {"error": "malformedPayload"}),
    ("older TRANSFER of unknown kind 20", 0x50, legacy(20, 5), {"error": "malformedPayload"}),
    ("older STREAM of unknown kind 9", 0x51, legacy(9, 5), {"error": "malformedPayload"}),
    ("older STREAM of kind 10 (STREAM had no tree offer)", 0x51, legacy(10, 5), {"error": "malformedPayload"}),
    ("older TRANSFER without an ID", 0x50, struct.pack(">B", 1) + bytes(7), {"error": "malformedPayload"}),
    ("older TRANSFER offer cut short in its path", 0x50, legacy(1, 5, struct.pack(">Q", 10) + struct.pack(">H", 9) + b"note"), {"error": "malformedPayload"}),
    ("older TRANSFER offer without a size", 0x50, legacy(1, 5, bytes(4)), {"error": "malformedPayload"}),
    ("older TRANSFER offer with a path that is not UTF-8", 0x50, legacy(1, 5, struct.pack(">Q", 10) + str16(b"\xff\xfe")), {"error": "malformedPayload"}),
    ("older TRANSFER offer with a path over 4096 bytes", 0x50, legacy(1, 5, struct.pack(">Q", 10) + str16("p" * 4097)), {"error": "malformedPayload"}),
    ("older STREAM DENY with a reason over 1024 bytes", 0x51, legacy(3, 7, str16("r" * 1025)), {"error": "malformedPayload"}),
]
out += [{"name": n, "hex": frame(p, t).hex(), "legacy": True, "expect": x} for n, t, p, x in old]
path = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "channel.json"
path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"wrote {len(out)} vectors to {path}")
