#!/usr/bin/env python3
"""Regenerates Protocol/vectors/records.json: snapshot encodings (RECORDS.md §3), the steps of a records
channel (CHANNEL payloads of purpose 4, §4) and an older p2p's RECORDS (0x40) payloads as far as they are read,
written from the spec by an implementation independent of the Swift one.
The Swift tests (RecordsVectorTests) decode every vector and re-encode the valid ones byte for byte."""
import hashlib, json, os, struct, uuid

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "records.json")
PEER_A = "00112233445566778899aabbccddeeff"
PEER_B = "9f86d081884c7d659a2feaa0c55ad015"

def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)

def zigzag(n):
    return (n << 1) ^ (n >> 63) if n >= 0 else ((n << 1) ^ -1) & 0xFFFFFFFFFFFFFFFF

def vstr(s):
    b = s.encode() if isinstance(s, str) else s
    return varint(len(b)) + b

def stored(attrs):
    return [a for a in attrs if not a.get("transient")]

def version_hash(entity):
    text = "entity %s\n" % entity["name"]
    for a in sorted(stored(entity["attributes"]), key=lambda a: a["name"]):
        text += "attribute %s %s %s\n" % (a["name"], a["type"], "optional" if a.get("optional", True) else "required")
    for r in sorted(entity.get("relationships", []), key=lambda r: r["name"]):
        text += "relationship %s %s %s %s\n" % (r["name"], r["destination"], "to-many" if r.get("toMany") else "to-one",
                                                "optional" if r.get("optional", True) else "required")
    return hashlib.sha256(text.encode()).hexdigest()

def canonical_schema(schema):
    """The schema as the reference implementation writes it: explicit optional, versionHash added."""
    out = {"version": schema.get("version", 1), "entities": []}
    if "name" in schema:
        out["name"] = schema["name"]
    for e in schema["entities"]:
        ce = {"name": e["name"], "attributes": [], "versionHash": version_hash(e)}
        for a in e["attributes"]:
            ca = {k: v for k, v in a.items() if k != "transient" or v}
            ca["optional"] = a.get("optional", True)
            ce["attributes"].append(ca)
        rels = []
        for r in e.get("relationships", []):
            rels.append({"name": r["name"], "destination": r["destination"], "toMany": r.get("toMany", False),
                         "deleteRule": r.get("deleteRule", "nullify"), "optional": r.get("optional", True),
                         **({"inverse": r["inverse"]} if "inverse" in r else {})})
        if rels:
            ce["relationships"] = rels
        if e.get("rules"):
            ce["rules"] = e["rules"]
        out["entities"].append(ce)
    return json.dumps(out, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

KINDS = {"string": 1, "integer": 2, "double": 3, "decimal": 4, "boolean": 5, "date": 6, "binary": 7, "uuid": 8}

def value(kind, v):
    tag = bytes([KINDS[kind]])
    if kind == "string": return tag + vstr(v)
    if kind == "integer": return tag + varint(zigzag(v))
    if kind == "double": return tag + struct.pack(">d", v)
    if kind == "decimal": return tag + vstr(v)
    if kind == "boolean": return tag + bytes([1 if v else 0])
    if kind == "date": return tag + varint(zigzag(v))
    if kind == "binary": return tag + vstr(bytes.fromhex(v))
    if kind == "uuid": return tag + uuid.UUID(v).bytes
    raise ValueError(kind)

def snapshot(schema, records, delta=False, created=1746090000000, origin=PEER_A):
    """records: (entity, id, modified, origin, {attr: (kind, v)}, {rel: [ids]}), grouped by entity in schema order."""
    sj = canonical_schema(schema)
    out = b"P2RS" + bytes([1, 1 if delta else 0]) + struct.pack(">q", created) + bytes.fromhex(origin)
    out += struct.pack(">I", len(sj)) + sj
    peers = []
    for r in records:
        if r[3] not in peers:
            peers.append(r[3])
    out += varint(len(peers)) + b"".join(bytes.fromhex(p) for p in peers)
    names = [e["name"] for e in schema["entities"]]
    blocks = [n for n in names if any(r[0] == n for r in records)]
    out += varint(len(blocks))
    for name in blocks:
        e = schema["entities"][names.index(name)]
        rs = [r for r in records if r[0] == name]
        out += varint(names.index(name)) + varint(len(rs))
        for (_, rid, modified, origin_hex, values, rels) in rs:
            out += vstr(rid) + varint(zigzag(modified)) + varint(peers.index(origin_hex))
            for a in stored(e["attributes"]):
                out += value(*values[a["name"]]) if a["name"] in values else b"\x00"
            for r in e.get("relationships", []):
                if r.get("toMany"):
                    continue
                targets = rels.get(r["name"], [])
                out += varint(len(targets)) + b"".join(vstr(t) for t in targets)
    return out

def expect_records(records):
    return [{"entity": r[0], "id": r[1], "modified": r[2], "origin": r[3],
             "values": {k: {"kind": v[0], "value": v[1]} for k, v in r[4].items()},
             "relationships": r[5]} for r in records]

TASKS = {
    "name": "Tasks", "version": 1,
    "entities": [
        {"name": "Task", "attributes": [
            {"name": "text", "type": "string", "optional": False, "default": "Text"},
            {"name": "priority", "type": "integer16", "optional": False, "default": 0, "min": 0, "max": 3},
            {"name": "dueDate", "type": "date"},
            {"name": "isOverdue", "type": "boolean", "transient": True}],
         "relationships": [{"name": "location", "destination": "Location", "inverse": "tasks"}],
         "rules": [{"name": "due-date-not-in-past", "attribute": "dueDate", "notBefore": "now"},
                   {"name": "priority-3-only-when-due-within-3-days", "when": {"attribute": "priority", "equals": 3},
                    "attribute": "dueDate", "notAfter": "now+3d", "required": True}]},
        {"name": "Location", "attributes": [{"name": "name", "type": "string", "optional": False}],
         "relationships": [{"name": "tasks", "destination": "Task", "toMany": True, "inverse": "location"}]}]}

ALL_TYPES = {
    "version": 3,
    "entities": [{"name": "Thing", "attributes": [
        {"name": "s", "type": "string"}, {"name": "i16", "type": "integer16"}, {"name": "i32", "type": "integer32"},
        {"name": "i64", "type": "integer64"}, {"name": "d", "type": "double"}, {"name": "dec", "type": "decimal"},
        {"name": "b", "type": "boolean"}, {"name": "t", "type": "date"}, {"name": "bin", "type": "binary"},
        {"name": "u", "type": "uuid"}]}]}

vectors = {"snapshots": [], "messages": []}

def snap_valid(name, schema, records, **kw):
    data = snapshot(schema, records, **kw)
    vectors["snapshots"].append({"name": name, "hex": data.hex(), "expect": {
        "delta": kw.get("delta", False), "created": kw.get("created", 1746090000000), "origin": kw.get("origin", PEER_A),
        "schemaName": schema.get("name"), "entities": [e["name"] for e in schema["entities"]],
        "versionHashes": [version_hash(e) for e in schema["entities"]],
        "records": expect_records(records)}})
    return data

def snap_invalid(name, data, error):
    vectors["snapshots"].append({"name": name, "hex": data.hex(), "expect": {"error": error}})

tasks_records = [
    ("Task", "milk", 1746090300000, PEER_A, {"text": ("string", "Buy milk"), "priority": ("integer", 1)}, {"location": ["home"]}),
    ("Task", "report", 1746090600000, PEER_B, {"text": ("string", "Write the report ✓"), "priority": ("integer", 2),
                                                 "dueDate": ("date", 2066979600000)}, {}),
    ("Location", "home", 1746090000000, PEER_A, {"name": ("string", "Home")}, {}),
]
tasks_bytes = snap_valid("tasks: two entities, absent values, a relationship, two origins", TASKS, tasks_records)
snap_valid("tasks delta with no records", TASKS, [], delta=True, created=1746100000000, origin=PEER_B)
snap_valid("every value kind", ALL_TYPES, [
    ("Thing", "all", -1, PEER_B, {
        "s": ("string", ""), "i16": ("integer", -32768), "i32": ("integer", 2147483647), "i64": ("integer", -9223372036854775808),
        "d": ("double", -0.5), "dec": ("decimal", "249.9"), "b": ("boolean", True), "t": ("date", -86400001),
        "bin": ("binary", "00ff10"), "u": ("uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")}, {}),
    ("Thing", "none", 0, PEER_B, {}, {}),
    ("Thing", "wrong kind travels", 5, PEER_A, {"i16": ("string", "high"), "b": ("integer", 1)}, {}),
], created=0)

snap_invalid("bad magic", b"P2RX" + tasks_bytes[4:], "magic")
snap_invalid("format version 2", tasks_bytes[:4] + b"\x02" + tasks_bytes[5:], "version")
snap_invalid("truncated in the last record", tasks_bytes[:-3], "truncated")
snap_invalid("trailing byte", tasks_bytes + b"\x00", "trailing")
schema_len = struct.unpack(">I", tasks_bytes[30:34])[0]
after_schema = 34 + schema_len
snap_invalid("schema JSON that is not JSON", tasks_bytes[:34] + b"{" * schema_len + tasks_bytes[after_schema:], "schema")
sj = canonical_schema(ALL_TYPES)
head = b"P2RS\x01\x00" + struct.pack(">q", 0) + bytes.fromhex(PEER_A) + struct.pack(">I", len(sj)) + sj
peer_table = varint(1) + bytes.fromhex(PEER_A)
record_head = varint(1) + varint(0) + varint(1) + vstr("x") + varint(0) + varint(0)
snap_invalid("unknown value tag 9", head + peer_table + record_head + b"\x09" + b"\x00" * 9, "tag")
snap_invalid("boolean byte 2", head + peer_table + record_head + b"\x00" * 6 + b"\x05\x02" + b"\x00" * 3, "boolean")
snap_invalid("decimal that is not canonical", head + peer_table + record_head + b"\x00" * 5 + b"\x04" + vstr("1.50") + b"\x00" * 4, "decimal")
snap_invalid("string that is not UTF-8", head + peer_table + record_head + b"\x01" + vstr(b"\xc3\x28") + b"\x00" * 9, "utf8")
snap_invalid("entity index out of range", head + peer_table + varint(1) + varint(1) + varint(1) + vstr("x") + varint(0) + varint(0) + b"\x00" * 10, "entity")
snap_invalid("origin index out of range", head + peer_table + varint(1) + varint(0) + varint(1) + vstr("x") + varint(0) + varint(1) + b"\x00" * 10, "origin")
snap_invalid("record count beyond the bytes left", head + peer_table + varint(1) + varint(0) + varint(1000000) + vstr("x"), "count")
snap_invalid("varint longer than 64 bits", head + b"\xff" * 10 + b"\x01", "varint")

# ---- Records channels: CHANNEL (0x52) payloads of purpose 4 (records), without the frame header
def msg_valid(name, payload, expect):
    vectors["messages"].append({"name": name, "hex": payload.hex(), "expect": expect})

def msg_invalid(name, payload):
    vectors["messages"].append({"name": name, "hex": payload.hex(), "expect": {"error": "malformedPayload"}})

RECORDS = 4
C = 0x0123456789ABCDEF
def step(kind, rest=b"", purpose=RECORDS, cid=C): return struct.pack(">BBQ", kind, purpose, cid) + rest
def str16(s): b = s.encode() if isinstance(s, str) else s; return struct.pack(">H", len(b)) + b
def e(kind, **fields): return {"kind": kind, "channel": str(C), **fields}

msg_valid("open", step(1, b"\x01" + struct.pack(">QI", len(tasks_bytes), 3) + str16("Task,Location")),
          e("open", delta=True, size=len(tasks_bytes), records=3, entities=["Task", "Location"]))
msg_valid("open, no entities", step(1, b"\x00" + struct.pack(">QI", 0, 0) + str16("")),
          e("open", delta=False, size=0, records=0, entities=[]))
# A records ACCEPT is a stream's: offset 0, no prefix hash (a snapshot never resumes).
msg_valid("accept", step(2, struct.pack(">Q", 0)), e("accept", offset=0))
msg_valid("deny", step(3, str16("declined")), e("deny", reason="declined"))
msg_valid("data", step(5, struct.pack(">Q", 61440) + b"P2RS"), e("data", offset=61440, bytes="50325253"))
msg_valid("ack", step(6, struct.pack(">Q", 122880)), e("ack", total=122880))
digest = hashlib.sha256(tasks_bytes).digest()
msg_valid("end", step(7, struct.pack(">Q", len(tasks_bytes)) + digest), e("end", length=len(tasks_bytes), sha256=digest.hex()))
msg_valid("result verified", step(8, b"\x01" + digest), e("result", verified=True, sha256=digest.hex()))
msg_valid("cancel", step(9, str16("the sender cancelled")), e("cancel", reason="the sender cancelled"))
msg_valid("outcome merged, no detail", step(32, b"\x00" + struct.pack(">IIII", 3, 0, 0, 0)),
          e("outcome", status="merged", inserted=3, updated=0, unchanged=0, conflicts=0))
detail = json.dumps({"conflicted": [{"entity": "Task", "id": "milk", "kept": "theirs"}], "migrations": ["added attribute Location.address"]},
                    sort_keys=True, separators=(",", ":")).encode()
msg_valid("outcome merged with a conflict and a migration", step(32, b"\x00" + struct.pack(">IIII", 0, 1, 2, 1) + detail),
          e("outcome", status="merged", inserted=0, updated=1, unchanged=2, conflicts=1,
            conflicted=[{"entity": "Task", "id": "milk", "kept": "theirs"}], migrations=["added attribute Location.address"]))
detail = json.dumps({"message": "1 invalid record value; nothing was merged", "errors": [
    {"entity": "Task", "record": "t9", "attribute": "priority", "rule": "max", "value": "7", "message": "7 is above the maximum 3"}]},
    sort_keys=True, separators=(",", ":")).encode()
msg_valid("outcome rejected with its report", step(32, b"\x01" + struct.pack(">IIII", 0, 0, 0, 0) + detail),
          e("outcome", status="rejected", inserted=0, updated=0, unchanged=0, conflicts=0,
            message="1 invalid record value; nothing was merged",
            errors=[{"entity": "Task", "record": "t9", "attribute": "priority", "rule": "max", "value": "7", "message": "7 is above the maximum 3"}]))
msg_invalid("outcome with unknown status 3", step(32, b"\x03" + struct.pack(">IIII", 0, 0, 0, 0)))
msg_invalid("outcome detail that is not a JSON object", step(32, b"\x00" + struct.pack(">IIII", 0, 0, 0, 0) + b"[1]"))
msg_invalid("outcome detail that is not JSON", step(32, b"\x00" + struct.pack(">IIII", 0, 0, 0, 0) + b"{oops"))
msg_invalid("outcome with truncated counts", step(32, b"\x00" + struct.pack(">III", 0, 0, 0)))
msg_invalid("outcome on a file's channel", step(32, b"\x00" + struct.pack(">IIII", 0, 0, 0, 0), purpose=1))
msg_invalid("a tree's step on a records channel", step(22))
msg_invalid("open with unknown flags 2", step(1, b"\x02" + struct.pack(">QI", 0, 0) + str16("")))
msg_invalid("open without the entity list", step(1, b"\x00" + struct.pack(">QI", 10, 1)))
msg_invalid("open with an entity list over 1024 bytes", step(1, b"\x00" + struct.pack(">QI", 10, 1) + str16("E" * 1025)))
msg_invalid("open with an entity list that is not UTF-8", step(1, b"\x00" + struct.pack(">QI", 10, 1) + str16(b"\xff")))
msg_invalid("accept with a prefix hash (a records ACCEPT has none)", step(2, struct.pack(">Q", 0) + digest))
msg_invalid("empty data", step(5, struct.pack(">Q", 0)))
msg_invalid("end with a short digest", step(7, struct.pack(">Q", 5) + digest[:31]))
msg_invalid("unknown kind 33", step(33))

# ---- An older p2p's RECORDS (0x40) frames: read as far as the refusal needs (kind, transfer ID; a DENY's reason)
REFUSAL = ("the receiver runs a newer p2p (wire version 1 with record channels, capability bit 9) and takes no RECORDS offers "
           "from an older p2p (wire version 1 with RECORDS frames, without record channels); update p2p on the sending side")
T = 0x0123456789ABCDEF
def old(kind, rest=b""): return bytes([kind]) + struct.pack(">Q", T) + rest
def legacy_valid(name, payload, expect):
    vectors["legacy"].append({"name": name, "hex": payload.hex(), "expect": expect})
def legacy_invalid(name, payload):
    vectors["legacy"].append({"name": name, "hex": payload.hex(), "expect": {"error": "malformedPayload"}})
vectors["legacy"] = []
legacy_valid("older OFFER", old(1, b"\x01" + struct.pack(">QI", len(tasks_bytes), 3) + str16("Task,Location")),
             {"kind": "1", "transfer": str(T)})
legacy_valid("older OFFER: nothing after the transfer ID is read", old(1, b"\xff"), {"kind": "1", "transfer": str(T)})
legacy_valid("older CHUNK: kind and transfer ID only", old(4, struct.pack(">Q", 0) + b"P2RS"), {"kind": "4", "transfer": str(T)})
legacy_valid("the DENY an older sender's OFFER gets (a RECORDS frame)", old(3, str16(REFUSAL)), {"kind": "3", "transfer": str(T), "reason": REFUSAL})
legacy_invalid("older RECORDS of unknown kind 0", old(0))
legacy_invalid("older RECORDS of unknown kind 8", old(8))
legacy_invalid("older RECORDS without a transfer ID", b"\x01\x00\x01")
legacy_invalid("older DENY with a reason over 1024 bytes", old(3, str16("r" * 1025)))

with open(OUT, "w", encoding="utf-8") as f:
    json.dump(vectors, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("wrote %d snapshot, %d message and %d legacy vectors to %s" % (len(vectors["snapshots"]), len(vectors["messages"]), len(vectors["legacy"]), OUT))
