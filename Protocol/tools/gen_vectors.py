#!/usr/bin/env python3
"""Regenerates Protocol/vectors/*.json. The Swift tests (ProtocolVectorTests) verify every vector."""
import json, os, struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
TYPES = {"hello": 1, "welcome": 2, "error": 3, "ping": 4, "pong": 5, "bye": 6, "data": 0x10, "text": 0x11}

def frame(t, payload=b"", version=1, flags=0, length=None):
    t = TYPES.get(t, t)
    n = len(payload) if length is None else length
    return b"P2" + struct.pack(">BBHI", version, t, flags, n) + payload

def sstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">H", len(b)) + b

def hello(pid, caps, port, token, name, sid):
    return bytes.fromhex(pid) + struct.pack(">IHQ", caps, port, token) + sstr(name) + sstr(sid)

def text(i, ms, t):
    return struct.pack(">Qq", i, ms) + (t.encode() if isinstance(t, str) else t)

PID_A = "00112233445566778899aabbccddeeff"
PID_B = "9f86d081884c7d659a2feaa0c55ad015"
vectors = []

def valid(name, data, expect, **kw):
    vectors.append({"name": name, "hex": data.hex(), **kw, "expect": expect})

def invalid(name, data, error, **kw):
    vectors.append({"name": name, "hex": data.hex(), **kw, "expect": {"error": error}})

def h(pid, caps, port, token, name, sid):
    return {"type": "hello", "version": 1, "flags": 0, "peerID": pid, "capabilities": caps, "datagramPort": port,
            "datagramToken": str(token), "displayName": name, "sessionID": sid}

# --- valid frames
valid("hello", frame("hello", hello(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat")),
      h(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat"))
valid("hello utf-8 display name, empty session ID, no datagrams",
      frame("hello", hello(PID_B, 3, 0, 0, "Zoë ☕ 日本 🚀", "")), h(PID_B, 3, 0, 0, "Zoë ☕ 日本 🚀", ""))
valid("hello unknown capability bits are kept", frame("hello", hello(PID_A, 0x80000007, 1, 2**64 - 1, "a", "s")),
      h(PID_A, 0x80000007, 1, 2**64 - 1, "a", "s"))
valid("hello display name and session ID at 63 bytes", frame("hello", hello(PID_B, 1, 65535, 42, "n" * 63, "é" * 31 + "s")),
      h(PID_B, 1, 65535, 42, "n" * 63, "é" * 31 + "s"))
valid("welcome", frame("welcome"), {"type": "welcome", "version": 1, "flags": 0})
valid("error connectionDenied", frame("error", struct.pack(">H", 8) + sstr("bob declined the connection")),
      {"type": "error", "version": 1, "flags": 0, "code": 8, "reason": "bob declined the connection"})
valid("error with version 2 is accepted", frame("error", struct.pack(">H", 3) + sstr("peer speaks protocol version 2"), version=2),
      {"type": "error", "version": 2, "flags": 0, "code": 3, "reason": "peer speaks protocol version 2"})
valid("error unknown code, empty reason", frame("error", struct.pack(">H", 0x1234) + sstr("")),
      {"type": "error", "version": 1, "flags": 0, "code": 0x1234, "reason": ""})
valid("error utf-8 reason", frame("error", struct.pack(">H", 7) + sstr("session «jeu» ≠ «chat»")),
      {"type": "error", "version": 1, "flags": 0, "code": 7, "reason": "session «jeu» ≠ «chat»"})
valid("ping", frame("ping", struct.pack(">Q", 1)), {"type": "ping", "version": 1, "flags": 0, "nonce": "1"})
valid("pong", frame("pong", struct.pack(">Q", 0xfedcba9876543210)),
      {"type": "pong", "version": 1, "flags": 0, "nonce": str(0xfedcba9876543210)})
valid("bye", frame("bye"), {"type": "bye", "version": 1, "flags": 0})
valid("data", frame("data", bytes([0, 1, 2, 0xfe, 0xff])), {"type": "data", "version": 1, "flags": 0, "payload": "000102feff"})
valid("data empty", frame("data"), {"type": "data", "version": 1, "flags": 0, "payload": ""})
valid("data reserved flag bits are kept", frame("data", b"\x2a", flags=0x8000),
      {"type": "data", "version": 1, "flags": 0x8000, "payload": "2a"})
valid("text", frame("text", text(0x1122334455667788, 1700000000000, "hello")),
      {"type": "text", "version": 1, "flags": 0, "id": str(0x1122334455667788), "sentAtMilliseconds": "1700000000000", "text": "hello"})
valid("text utf-8", frame("text", text(7, 1712345678901, "grüße, 世界 👋")),
      {"type": "text", "version": 1, "flags": 0, "id": "7", "sentAtMilliseconds": "1712345678901", "text": "grüße, 世界 👋"})
valid("text empty, negative time", frame("text", text(0, -1, "")),
      {"type": "text", "version": 1, "flags": 0, "id": "0", "sentAtMilliseconds": "-1", "text": ""})

# --- invalid frames (header checks run in order magic, version, type, length)
invalid("bad magic", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"))[:1] + b"3" + frame("hello", hello(PID_A, 7, 1, 1, "a", "s"))[2:], "badMagic")
invalid("bad magic on the first byte alone", b"G", "badMagic")
invalid("HTTP request is not a frame", b"GET / HTTP/1.1\r\n", "badMagic")
invalid("hello version 2", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"), version=2), "unsupportedVersion")
invalid("hello version 0", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"), version=0), "unsupportedVersion")
invalid("version is checked before type", frame(0x7f, version=2), "unsupportedVersion")
invalid("unknown type 0x7f", frame(0x7f, b"\x00"), "unknownMessageType")
invalid("unknown type 0x00", frame(0x00), "unknownMessageType")
invalid("type is checked before length", frame(0x7f, length=0xffffffff), "unknownMessageType")
invalid("4 GiB length prefix, header only", frame("data", length=0xffffffff), "frameTooLarge")
invalid("64 KiB + 1 length prefix, header only", frame("data", length=65537), "frameTooLarge")
invalid("truncated header", frame("ping", struct.pack(">Q", 1))[:7], "needMoreData")
invalid("truncated payload", frame("hello", hello(PID_A, 7, 1, 1, "alice", "chat"))[:-1], "needMoreData")
invalid("magic only", b"P2", "needMoreData")
invalid("hello with trailing bytes", frame("hello", hello(PID_A, 7, 1, 1, "alice", "chat") + b"\x00"), "malformedPayload")
invalid("hello payload cut short", frame("hello", hello(PID_A, 7, 1, 1, "alice", "chat")[:30]), "malformedPayload")
invalid("hello empty display name", frame("hello", hello(PID_A, 7, 1, 1, "", "chat")), "malformedPayload")
invalid("hello display name of 64 bytes", frame("hello", hello(PID_A, 7, 1, 1, "n" * 64, "chat")), "malformedPayload")
invalid("hello session ID of 64 bytes", frame("hello", hello(PID_A, 7, 1, 1, "a", "s" * 64)), "malformedPayload")
invalid("hello display name not utf-8", frame("hello", hello(PID_A, 7, 1, 1, b"\xff\xfe", "chat")), "malformedPayload")
invalid("welcome with a payload", frame("welcome", b"\x00"), "malformedPayload")
invalid("bye with a payload", frame("bye", b"\x00"), "malformedPayload")
invalid("ping with a 7-byte nonce", frame("ping", b"\x00" * 7), "malformedPayload")
invalid("pong with a 9-byte nonce", frame("pong", b"\x00" * 9), "malformedPayload")
invalid("error reason of 1025 bytes", frame("error", struct.pack(">H", 1) + sstr("r" * 1025)), "malformedPayload")
invalid("error without reason", frame("error", struct.pack(">H", 1)), "malformedPayload")
invalid("text with invalid utf-8", frame("text", text(1, 2, b"\xc3\x28")), "malformedPayload")
invalid("text shorter than id and time", frame("text", b"\x00" * 15), "malformedPayload")

# --- datagrams: frame header with the unreliable flag, 8-byte token, message payload
def dgram(t, token, payload, flags=1, extra=b""):
    return frame(t, struct.pack(">Q", token) + payload, flags=flags) + extra

valid("datagram text", dgram("text", 0x0badc0ffee15900d, text(9, 1700000000123, "ping?")),
      {"type": "text", "version": 1, "flags": 1, "token": str(0x0badc0ffee15900d),
       "id": "9", "sentAtMilliseconds": "1700000000123", "text": "ping?"}, datagram=True)
valid("datagram data, 1200-byte payload", dgram("data", 1, bytes(range(256)) * 4 + bytes(176)),
      {"type": "data", "version": 1, "flags": 1, "token": "1", "payload": (bytes(range(256)) * 4 + bytes(176)).hex()}, datagram=True)
invalid("datagram data, 1201-byte payload", dgram("data", 1, bytes(1201)), "dropped", datagram=True)
invalid("datagram without the unreliable flag", dgram("data", 1, b"x", flags=0), "dropped", datagram=True)
invalid("datagram of type hello", dgram("hello", 1, hello(PID_A, 7, 1, 1, "a", "s")), "dropped", datagram=True)
invalid("datagram without a whole token", frame("data", b"\x00" * 7, flags=1), "dropped", datagram=True)
invalid("datagram with bytes after the frame", dgram("data", 1, b"x", extra=b"\x00"), "dropped", datagram=True)
invalid("datagram cut short", dgram("data", 1, b"xyz")[:-1], "dropped", datagram=True)
invalid("datagram with bad magic", b"Q" + dgram("data", 1, b"x")[1:], "dropped", datagram=True)
invalid("datagram version 2", dgram("data", 1, b"x")[:2] + b"\x02" + dgram("data", 1, b"x")[3:], "dropped", datagram=True)

# --- TXT records (RFC 6763 §6)
def txt(*strings):
    out = b""
    for s in strings:
        b = s.encode() if isinstance(s, str) else s
        out += bytes([len(b)]) + b
    return out

txts = [
    {"name": "announcement", "hex": txt("txtvers=1", "pv=1", "id=" + PID_A, "sid=chat").hex(), "canonical": True,
     "entries": [["txtvers", "1"], ["pv", "1"], ["id", PID_A], ["sid", "chat"]],
     "lookup": {"txtvers": "1", "pv": "1", "id": PID_A, "sid": "chat", "missing": None}},
    {"name": "announcement, empty and utf-8 session ID", "hex": txt("txtvers=1", "pv=1", "id=" + PID_B, "sid=").hex(),
     "canonical": True, "entries": [["txtvers", "1"], ["pv", "1"], ["id", PID_B], ["sid", ""]], "lookup": {"sid": ""}},
    {"name": "utf-8 value", "hex": txt("txtvers=1", "sid=café ☕").hex(), "canonical": True,
     "entries": [["txtvers", "1"], ["sid", "café ☕"]], "lookup": {"sid": "café ☕"}},
    {"name": "empty record (a single zero byte, as dns_sd sends it)", "hex": "00", "entries": [], "lookup": {"txtvers": None}},
    {"name": "no bytes at all", "hex": "", "canonical": True, "entries": [], "lookup": {"id": None}},
    {"name": "empty strings are skipped", "hex": txt("", "txtvers=1", "", "sid=x", "").hex(),
     "entries": [["txtvers", "1"], ["sid", "x"]], "lookup": {"sid": "x"}},
    {"name": "key without '=' is present with an empty value", "hex": txt("txtvers=1", "debug").hex(),
     "entries": [["txtvers", "1"], ["debug", ""]], "lookup": {"debug": "", "DEBUG": ""}},
    {"name": "string starting with '=' is skipped", "hex": txt("=oops", "sid=x").hex(),
     "entries": [["sid", "x"]], "lookup": {"sid": "x"}},
    {"name": "value may contain '='", "hex": txt("sid=a=b").hex(), "canonical": True,
     "entries": [["sid", "a=b"]], "lookup": {"sid": "a=b"}},
    {"name": "keys are case-insensitive, first occurrence wins", "hex": txt("SID=first", "sid=second", "Id=" + PID_A).hex(),
     "canonical": True, "entries": [["SID", "first"], ["sid", "second"], ["Id", PID_A]],
     "lookup": {"sid": "first", "Sid": "first", "id": PID_A, "ID": PID_A}},
    {"name": "255-byte string", "hex": txt("sid=" + "v" * 251).hex(), "canonical": True,
     "entries": [["sid", "v" * 251]], "lookup": {"sid": "v" * 251}},
]

os.makedirs(OUT, exist_ok=True)
for name, data in (("frames.json", vectors), ("txt.json", txts)):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
print(len(vectors), "frame vectors,", len(txts), "TXT vectors")
