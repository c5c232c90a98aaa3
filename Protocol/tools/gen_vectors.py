#!/usr/bin/env python3
"""Regenerates Protocol/vectors/*.json. The Swift tests (ProtocolVectorTests) verify every vector.

Needs the `cryptography` package (ChaCha20-Poly1305, X25519, P-256). Every output is deterministic:
keys, scalars and nonces are fixed, so running this twice writes the same files.
"""
import base64, hashlib, hmac, json, os, struct

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
TYPES = {"hello": 1, "welcome": 2, "error": 3, "ping": 4, "pong": 5, "bye": 6, "context": 7, "data": 0x10, "text": 0x11, "text_ack": 0x12, "pair": 0x20}
UNRELIABLE, SEALED = 0x0001, 0x0002

def frame(t, payload=b"", version=1, flags=0, length=None):
    t = TYPES.get(t, t)
    n = len(payload) if length is None else length
    return b"P2" + struct.pack(">BBHI", version, t, flags, n) + payload

def sstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">H", len(b)) + b

def hello(pid, caps, port, token, name, sid, key=b"", key_length=None):
    n = len(key) if key_length is None else key_length
    return bytes.fromhex(pid) + struct.pack(">IHQB", caps, port, token, n) + key + sstr(name) + sstr(sid)

def text(i, ms, t):
    return struct.pack(">Qq", i, ms) + (t.encode() if isinstance(t, str) else t)

def pair(kind, value):
    return bytes([kind]) + value

def error(code, reason):
    return struct.pack(">H", code) + sstr(reason)

PID_A = "00112233445566778899aabbccddeeff"
PID_B = "9f86d081884c7d659a2feaa0c55ad015"
HELLO_KEY = bytes(range(0xa0, 0xc0))  # a datagram key as it travels in HELLO (inside TLS)
vectors = []

def valid(name, data, expect, **kw):
    vectors.append({"name": name, "hex": data.hex(), **kw, "expect": expect})

def invalid(name, data, error, **kw):
    vectors.append({"name": name, "hex": data.hex(), **kw, "expect": {"error": error}})

def h(pid, caps, port, token, name, sid, key=b""):
    return {"type": "hello", "version": 1, "flags": 0, "peerID": pid, "capabilities": caps, "datagramPort": port,
            "datagramToken": str(token), "datagramKey": key.hex(), "displayName": name, "sessionID": sid}

def e(code, reason, version=1):
    return {"type": "error", "version": version, "flags": 0, "code": code, "reason": reason}

# --- valid frames
valid("hello", frame("hello", hello(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat")),
      h(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat"))
valid("hello with a 32-byte datagram key (TLS)",
      frame("hello", hello(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat", HELLO_KEY)),
      h(PID_A, 7, 51234, 0x0123456789abcdef, "alice", "chat", HELLO_KEY))
valid("hello utf-8 display name, empty session ID, no datagrams",
      frame("hello", hello(PID_B, 3, 0, 0, "Zoë ☕ 日本 🚀", "")), h(PID_B, 3, 0, 0, "Zoë ☕ 日本 🚀", ""))
valid("hello unknown capability bits are kept", frame("hello", hello(PID_A, 0x80000007, 1, 2**64 - 1, "a", "s")),
      h(PID_A, 0x80000007, 1, 2**64 - 1, "a", "s"))
valid("hello display name and session ID at 63 bytes", frame("hello", hello(PID_B, 1, 65535, 42, "n" * 63, "é" * 31 + "s")),
      h(PID_B, 1, 65535, 42, "n" * 63, "é" * 31 + "s"))
valid("hello at its largest: 32-byte key, 63-byte name and session ID",
      frame("hello", hello(PID_B, 7, 65535, 42, "n" * 63, "s" * 63, bytes(32))),
      h(PID_B, 7, 65535, 42, "n" * 63, "s" * 63, bytes(32)))
valid("welcome", frame("welcome"), {"type": "welcome", "version": 1, "flags": 0})
valid("error connectionDenied", frame("error", error(8, "bob declined the connection")), e(8, "bob declined the connection"))
valid("error with version 2 is accepted", frame("error", error(3, "peer speaks protocol version 2"), version=2),
      e(3, "peer speaks protocol version 2", version=2))
valid("error unknown code, empty reason", frame("error", error(0x1234, "")), e(0x1234, ""))
valid("error utf-8 reason", frame("error", error(7, "session «jeu» ≠ «chat»")), e(7, "session «jeu» ≠ «chat»"))
IMPERSONATION = f"HELLO claims peer {PID_B} but the TLS certificate belongs to {PID_A}"
valid("error identityMismatch", frame("error", error(13, IMPERSONATION)), e(13, IMPERSONATION))
PLAINTEXT_REFUSED = "this peer only speaks TLS; plaintext (--insecure) is refused"
valid("error tlsRequired (sent in plaintext to a plaintext client)", frame("error", error(14, PLAINTEXT_REFUSED)),
      e(14, PLAINTEXT_REFUSED))
UNTRUSTED = 'the name "bob" is pinned to another key on this peer; pair again (p2p pair)'
valid("error untrustedIdentity", frame("error", error(15, UNTRUSTED)), e(15, UNTRUSTED))
NOT_ASKED = f"expected peer {PID_B}, not {PID_A}"
valid("error unexpectedPeer (a refusal: not the peer the initiator dialled)", frame("error", error(17, NOT_ASKED)), e(17, NOT_ASKED))
valid("error unknown code 999 (a refusal of a later revision): accepted and kept",
      frame("error", error(999, "refused for a reason this version does not know")), e(999, "refused for a reason this version does not know"))
valid("error reason at its longest, 1024 bytes", frame("error", error(15, "é" * 512)), e(15, "é" * 512))
valid("error connectionDenied by the request rate limit",
      frame("error", error(8, "too many connection requests from your address; try again in a minute")),
      e(8, "too many connection requests from your address; try again in a minute"))
valid("ping", frame("ping", struct.pack(">Q", 1)), {"type": "ping", "version": 1, "flags": 0, "nonce": "1"})
valid("pong", frame("pong", struct.pack(">Q", 0xfedcba9876543210)),
      {"type": "pong", "version": 1, "flags": 0, "nonce": str(0xfedcba9876543210)})
valid("bye", frame("bye"), {"type": "bye", "version": 1, "flags": 0})
valid("hello announcing connection contexts (capability bit 3)", frame("hello", hello(PID_A, 15, 51234, 0x0123456789abcdef, "alice", "chat")),
      h(PID_A, 15, 51234, 0x0123456789abcdef, "alice", "chat"))
valid("context", frame("context", "table 4, please".encode()), {"type": "context", "version": 1, "flags": 0, "payload": "table 4, please".encode().hex()})
valid("context empty (no context)", frame("context"), {"type": "context", "version": 1, "flags": 0, "payload": ""})
valid("context at its largest, 1024 bytes", frame("context", b"\xc3" * 1024), {"type": "context", "version": 1, "flags": 0, "payload": "c3" * 1024})
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
valid("text ack", frame("text_ack", struct.pack(">Q", 0x1122334455667788)),
      {"type": "text_ack", "version": 1, "flags": 0, "id": str(0x1122334455667788)})
SHARE = bytes.fromhex("0900000000000000000000000000000000000000000000000000000000000000")
TAG = hashlib.sha256(b"p2p confirm tag example").digest()
valid("pair share", frame("pair", pair(1, SHARE)), {"type": "pair", "version": 1, "flags": 0, "kind": 1, "value": SHARE.hex()})
valid("pair confirm", frame("pair", pair(2, TAG)), {"type": "pair", "version": 1, "flags": 0, "kind": 2, "value": TAG.hex()})

# --- invalid frames (header checks run in order magic, version, type, length)
invalid("bad magic", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"))[:1] + b"3" + frame("hello", hello(PID_A, 7, 1, 1, "a", "s"))[2:], "badMagic")
invalid("bad magic on the first byte alone", b"G", "badMagic")
invalid("HTTP request is not a frame", b"GET / HTTP/1.1\r\n", "badMagic")
invalid("TLS ClientHello is not a frame", bytes.fromhex("160301020001"), "badMagic")
invalid("hello version 2", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"), version=2), "unsupportedVersion")
invalid("hello version 0", frame("hello", hello(PID_A, 7, 1, 1, "a", "s"), version=0), "unsupportedVersion")
invalid("version is checked before type", frame(0x7f, version=2), "unsupportedVersion")
invalid("unknown type 0x7f", frame(0x7f, b"\x00"), "unknownMessageType")
invalid("unknown type 0x00", frame(0x00), "unknownMessageType")
invalid("unknown type 0x21", frame(0x21, pair(1, SHARE)), "unknownMessageType")
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
invalid("hello with a 16-byte datagram key", frame("hello", hello(PID_A, 7, 1, 1, "alice", "chat", bytes(16))), "malformedPayload")
invalid("hello with a 33-byte datagram key", frame("hello", hello(PID_A, 7, 1, 1, "alice", "chat", bytes(33))), "malformedPayload")
invalid("hello datagram key cut short", frame("hello", hello(PID_A, 7, 1, 1, "", "", bytes(2), key_length=32)[:-4]), "malformedPayload")
invalid("welcome with a payload", frame("welcome", b"\x00"), "malformedPayload")
invalid("bye with a payload", frame("bye", b"\x00"), "malformedPayload")
invalid("context of 1025 bytes", frame("context", b"\x00" * 1025), "malformedPayload")
invalid("ping with a 7-byte nonce", frame("ping", b"\x00" * 7), "malformedPayload")
invalid("pong with a 9-byte nonce", frame("pong", b"\x00" * 9), "malformedPayload")
invalid("error reason of 1025 bytes", frame("error", error(1, "r" * 1025)), "malformedPayload")
invalid("error refusal (untrustedIdentity) whose reason is 1025 bytes", frame("error", error(15, "é" * 512 + "r")), "malformedPayload")
invalid("error without reason", frame("error", struct.pack(">H", 1)), "malformedPayload")
invalid("text with invalid utf-8", frame("text", text(1, 2, b"\xc3\x28")), "malformedPayload")
invalid("text shorter than id and time", frame("text", b"\x00" * 15), "malformedPayload")
invalid("text ack of 7 bytes", frame("text_ack", b"\x00" * 7), "malformedPayload")
invalid("text ack of 9 bytes", frame("text_ack", b"\x00" * 9), "malformedPayload")
invalid("pair unknown kind 3", frame("pair", pair(3, SHARE)), "malformedPayload")
invalid("pair kind 0", frame("pair", pair(0, SHARE)), "malformedPayload")
invalid("pair value of 31 bytes", frame("pair", pair(1, SHARE[:31])), "malformedPayload")
invalid("pair value of 33 bytes", frame("pair", pair(2, TAG + b"\x00")), "malformedPayload")
invalid("pair empty", frame("pair"), "malformedPayload")

# --- datagrams: header with the unreliable (and, sealed, the sealed) flag, token, counter, body.
# Sealed: body = ChaCha20-Poly1305(key, nonce = 4 zero bytes + counter BE, AAD = header + token + counter).
KEY = bytes(range(32))           # "000102…1f": the receiving link's datagram key in these vectors
OTHER_KEY = bytes(range(32, 64))  # "202122…3f"

def dgram(t, token, counter, payload, key=None, flags=None, extra=b"", length=None):
    if flags is None:
        flags = UNRELIABLE | (SEALED if key else 0)
    body_len = len(payload) + (16 if key else 0)
    header = b"P2" + struct.pack(">BBHI", 1, TYPES.get(t, t), flags, 16 + body_len if length is None else length)
    prefix = header + struct.pack(">QQ", token, counter)
    body = ChaCha20Poly1305(key).encrypt(b"\x00" * 4 + struct.pack(">Q", counter), payload, prefix) if key else payload
    return prefix + body + extra

def flip(data, index, mask=0x01):
    out = bytearray(data)
    out[index] ^= mask
    return bytes(out)

def dv(name, data, expect, key=None):
    kw = {"datagram": True}
    if key is not None:
        kw["key"] = key.hex()
    valid(name, data, {"version": 1, **expect}, **kw)

def dx(name, data, key=None):
    kw = {"datagram": True}
    if key is not None:
        kw["key"] = key.hex()
    invalid(name, data, "dropped", **kw)

BIG = bytes(range(256)) * 4 + bytes(176)  # 1200 bytes
TOKEN = 0x0badc0ffee15900d
dv("datagram text", dgram("text", TOKEN, 1, text(9, 1700000000123, "ping?")),
   {"type": "text", "flags": 1, "token": str(TOKEN), "counter": "1", "id": "9", "sentAtMilliseconds": "1700000000123", "text": "ping?"})
dv("datagram data, 1200-byte payload", dgram("data", 1, 2**64 - 1, BIG),
   {"type": "data", "flags": 1, "token": "1", "counter": str(2**64 - 1), "payload": BIG.hex()})
dv("sealed datagram text", dgram("text", TOKEN, 1, text(9, 1700000000123, "ping?"), KEY),
   {"type": "text", "flags": 3, "token": str(TOKEN), "counter": "1", "id": "9", "sentAtMilliseconds": "1700000000123", "text": "ping?"}, KEY)
dv("sealed datagram data, empty", dgram("data", TOKEN, 2, b"", KEY),
   {"type": "data", "flags": 3, "token": str(TOKEN), "counter": "2", "payload": ""}, KEY)
dv("sealed datagram data, 1200-byte payload, large counter", dgram("data", 2**64 - 1, 0x0102030405060708, BIG, KEY),
   {"type": "data", "flags": 3, "token": str(2**64 - 1), "counter": str(0x0102030405060708), "payload": BIG.hex()}, KEY)
dv("sealed datagram under the other key", dgram("text", 7, 3, text(1, 2, "hé"), OTHER_KEY),
   {"type": "text", "flags": 3, "token": "7", "counter": "3", "id": "1", "sentAtMilliseconds": "2", "text": "hé"}, OTHER_KEY)

SEALED_TEXT = dgram("text", TOKEN, 1, text(9, 1700000000123, "ping?"), KEY)
dx("datagram data, length over 1232", dgram("data", 1, 1, bytes(1217)))
dx("sealed datagram data, 1201-byte payload", dgram("data", 1, 1, bytes(1201), KEY), KEY)
dx("datagram without the unreliable flag", dgram("data", 1, 1, b"x", flags=0))
dx("sealed datagram without the unreliable flag", dgram("data", 1, 1, b"x", KEY, flags=SEALED), KEY)
dx("datagram of type hello", dgram("hello", 1, 1, hello(PID_A, 7, 1, 1, "a", "s")))
dx("datagram of type pair", dgram("pair", 1, 1, pair(1, SHARE), KEY), KEY)
dx("datagram without a whole token", frame("data", b"\x00" * 7, flags=UNRELIABLE))
dx("datagram without a whole counter", frame("data", b"\x00" * 15, flags=UNRELIABLE))
dx("datagram with bytes after the frame", dgram("data", 1, 1, b"x", extra=b"\x00"))
dx("datagram cut short", dgram("data", 1, 1, b"xyz")[:-1])
dx("datagram with bad magic", b"Q" + dgram("data", 1, 1, b"x")[1:])
dx("datagram version 2", flip(dgram("data", 1, 1, b"x"), 2, 0x03))
dx("sealed datagram with a flipped tag byte", flip(SEALED_TEXT, len(SEALED_TEXT) - 1), KEY)
dx("sealed datagram with a flipped ciphertext byte", flip(SEALED_TEXT, 26), KEY)
dx("sealed datagram with another token in the header", flip(SEALED_TEXT, 17), KEY)
dx("sealed datagram with another counter", flip(SEALED_TEXT, 25), KEY)
dx("sealed datagram with a reserved flag bit added", flip(SEALED_TEXT, 4, 0x80), KEY)
dx("sealed datagram text retyped as data", flip(SEALED_TEXT, 3), KEY)
dx("sealed datagram opened with the wrong key", SEALED_TEXT, OTHER_KEY)
dx("sealed datagram shorter than its tag", dgram("data", 1, 1, bytes(15), flags=UNRELIABLE | SEALED), KEY)
dx("sealed datagram on an insecure link (no key)", SEALED_TEXT)
dx("unsealed datagram on a TLS link (key expected)", dgram("text", TOKEN, 1, text(9, 1700000000123, "ping?")), KEY)

# --- TXT records (RFC 6763 §6)
def txt(*strings):
    out = b""
    for s in strings:
        b = s.encode() if isinstance(s, str) else s
        out += bytes([len(b)]) + b
    return out

txts = [
    {"name": "announcement", "hex": txt("txtvers=1", "pv=1", "id=" + PID_A, "sid=chat", "dial=names").hex(), "canonical": True,
     "entries": [["txtvers", "1"], ["pv", "1"], ["id", PID_A], ["sid", "chat"], ["dial", "names"]],
     "lookup": {"txtvers": "1", "pv": "1", "id": PID_A, "sid": "chat", "dial": "names", "missing": None},
     "discoveryInfo": {}},
    {"name": "announcement of an older p2p (no dial key: it dials by the lower ID)",
     "hex": txt("txtvers=1", "pv=1", "id=" + PID_A, "sid=chat").hex(), "canonical": True,
     "entries": [["txtvers", "1"], ["pv", "1"], ["id", PID_A], ["sid", "chat"]],
     "lookup": {"txtvers": "1", "pv": "1", "id": PID_A, "sid": "chat", "dial": None}},
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
    {"name": "announcement with discovery info: the app's keys after p2p's, sorted by key",
     "hex": txt("txtvers=1", "pv=1", "id=" + PID_A, "sid=chat", "dial=names", "color=blue", "mode=duel").hex(), "canonical": True,
     "entries": [["txtvers", "1"], ["pv", "1"], ["id", PID_A], ["sid", "chat"], ["dial", "names"], ["color", "blue"], ["mode", "duel"]],
     "lookup": {"color": "blue", "MODE": "duel"},
     "discoveryInfo": {"color": "blue", "mode": "duel"}},
    {"name": "255-byte string", "hex": txt("sid=" + "v" * 251).hex(), "canonical": True,
     "entries": [["sid", "v" * 251]], "lookup": {"sid": "v" * 251}},
]

# --- dial.json: who dials in a room (PROTOCOL.md §2.2): a hash of the two instance names, ASCII folded
def fold(name):
    return bytes(c | 0x20 if 0x41 <= c <= 0x5A else c for c in name.encode())

def name_dialer(a, b):
    fa, fb = fold(a), fold(b)
    if fa == fb:
        return "both"
    lower, higher = sorted((fa, fb))
    lower_dials = hashlib.sha256(lower + b"\0" + higher).digest()[0] & 1 == 0
    return "a" if lower_dials == (fa == lower) else "b"

DIAL_PAIRS = [("alice", "bob"), ("bob", "alice"), ("alice", "carol"), ("bob", "carol"), ("host01", "host02"),
              ("host01", "host32"), ("host17", "host09"), ("Alice", "bob"), ("alice", "ALICE"), ("bob", "bob #2"),
              ("bob", "bob (2)"), ("café", "cafe"), ("Zoë", "zoë"), ("ÉMILE", "émile"), ("", "a"), ("a", "a\u0000")]
dials = [{"a": a, "b": b, "dialer": name_dialer(a, b)} for a, b in DIAL_PAIRS]
assert {d["dialer"] for d in dials} == {"a", "b", "both"}

# --- security.json: peer IDs and fingerprints, Elligator 2, CPace runs, the replay window
def peer_id(spki):
    return hashlib.sha256(spki).digest()[:16]

def fingerprint(pid):
    b32 = base64.b32encode(pid).decode().lower()[:24]
    return "-".join(b32[i:i + 4] for i in range(0, 24, 4))

def p256_spki(secret):
    key = ec.derive_private_key(secret, ec.SECP256R1())
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)

identities = []
for label, secret in (("alice", 0xa11ce), ("bob", 0xb0b), ("carol", 2**200 + 12345)):
    spki = p256_spki(secret)
    identities.append({"name": label, "spki": spki.hex(), "id": peer_id(spki).hex(), "fingerprint": fingerprint(peer_id(spki))})
for raw in (bytes(16), b"\xff" * 16, bytes.fromhex(PID_A)):
    identities.append({"name": "id " + raw.hex(), "id": raw.hex(), "fingerprint": fingerprint(raw)})

P = 2**255 - 19
A = 486662
DSI = b"p2p-CPace255-v1"

def lv(b):
    return struct.pack(">H", len(b)) + b

def is_square(x):
    return pow(x, (P - 1) // 2, P) in (0, 1)

def elligator2(r):
    """RFC 9380 §6.7.1 with Z = 2, u-coordinate only; returns (u, branch)."""
    d = (1 + 2 * r * r) % P
    x1 = (-A * pow(d, P - 2, P)) % P if d else (-A) % P
    if x1 == 0:
        x1 = (-A) % P
    if is_square((x1 ** 3 + A * x1 * x1 + x1) % P):
        return x1, "x1"
    return (-x1 - A) % P, "x2"

def le32(n):
    return n.to_bytes(32, "little")

elligator = []
for label, r in (("r = 0", 0), ("r = 1", 1), ("r = 2", 2), ("r = p - 1", P - 1), ("r = (p - 1) / 2", (P - 1) // 2),
                 ("r = 2^254", 2**254)):
    u, branch = elligator2(r)
    elligator.append({"name": label, "r": r.to_bytes(32, "big").hex(), "u": le32(u).hex(), "branch": branch})
seed = 0
while {x["branch"] for x in elligator[6:]} != {"x1", "x2"} or len(elligator) < 10:
    r = int.from_bytes(hashlib.sha512(b"elligator %d" % seed).digest(), "big") % P
    u, branch = elligator2(r)
    elligator.append({"name": f"hash-derived r #{seed}", "r": r.to_bytes(32, "big").hex(), "u": le32(u).hex(), "branch": branch})
    seed += 1

def generator(code, binding):
    digest = hashlib.sha512(DSI + lv(code.encode()) + lv(binding)).digest()
    u, _ = elligator2(int.from_bytes(digest, "big") % P)
    return digest, le32(u)

def x25519(scalar, u):
    return X25519PrivateKey.from_private_bytes(scalar).exchange(X25519PublicKey.from_public_bytes(u))

def public(scalar, u):
    return x25519(scalar, u)

cpace = []
for label, code, (ia, ib) in (("alice and bob, code 1234-5678", "12345678", (0, 1)),
                              ("bob and carol, code 0000-0000", "00000000", (1, 2))):
    ids = sorted([bytes.fromhex(identities[ia]["id"]), bytes.fromhex(identities[ib]["id"])])
    binding = ids[0] + ids[1]
    digest, g = generator(code, binding)
    scalar_low = hashlib.sha256(b"scalar low " + code.encode()).digest()
    scalar_high = hashlib.sha256(b"scalar high " + code.encode()).digest()
    share_low, share_high = public(scalar_low, g), public(scalar_high, g)
    secret = x25519(scalar_low, share_high)
    assert secret == x25519(scalar_high, share_low)
    isk = hashlib.sha512(DSI + b"-isk" + lv(binding) + lv(secret) + lv(share_low) + lv(share_high)).digest()
    confirm = lambda sid, share: hmac.new(isk, b"p2p-pair-confirm" + sid + share, hashlib.sha256).digest()
    cpace.append({"name": label, "code": code, "idLow": ids[0].hex(), "idHigh": ids[1].hex(), "channelBinding": binding.hex(),
                  "hash": digest.hex(), "generator": g.hex(), "scalarLow": scalar_low.hex(), "scalarHigh": scalar_high.hex(),
                  "shareLow": share_low.hex(), "shareHigh": share_high.hex(), "secret": secret.hex(), "isk": isk.hex(),
                  "confirmLow": confirm(ids[0], share_low).hex(), "confirmHigh": confirm(ids[1], share_high).hex()})

def replay(counters):
    highest, seen, started, out = 0, 0, False, []
    for c in counters:
        if not started:
            started, highest, seen = True, c, 1
            out.append(True)
        elif c > highest:
            shift = c - highest
            seen = 1 if shift >= 64 else ((seen << shift) | 1) & (2**64 - 1)
            highest = c
            out.append(True)
        else:
            age = highest - c
            ok = age < 64 and not (seen >> age) & 1
            if ok:
                seen |= 1 << age
            out.append(ok)
    return out

replays = []
for label, counters in (("replays and reordering", [7, 7, 9, 8, 8, 200, 100]),
                        ("the window is 64 counters wide", [100, 37, 36, 37, 100, 101, 38]),
                        ("a jump of 64 or more starts a fresh window", [1, 2, 66, 3, 130, 67, 66]),
                        ("the first counter may be anything", [2**64 - 1, 0, 2**64 - 2, 2**64 - 1]),
                        ("counter 0 and a dense run", [0, 1, 2, 3, 2, 1, 0, 4])):
    replays.append({"name": label, "counters": [str(c) for c in counters], "accepted": replay(counters)})

security = {"identities": identities, "elligator2": elligator, "cpace": cpace, "replayWindow": replays}

os.makedirs(OUT, exist_ok=True)
for name, data in (("frames.json", vectors), ("txt.json", txts), ("dial.json", dials), ("security.json", security)):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
print(len(vectors), "frame vectors,", len(txts), "TXT vectors,",
      sum(len(v) for v in security.values()), "security vectors")
