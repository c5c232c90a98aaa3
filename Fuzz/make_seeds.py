#!/usr/bin/env python3
"""Writes libFuzzer seed corpora for Fuzz/P2PFuzz from the protocol's test vectors.

usage: Fuzz/make_seeds.py OUTDIR

OUTDIR/<target>/ gets one file per seed, named by its SHA-1 (so re-running adds nothing twice):
  frame      every TCP frame of frames.json, game.json and channel.json, and pairs of them back to back
  stream     the same streams behind the 9-byte prefix fuzz_stream reads (limit selector, cut seed)
  connection a HELLO and then frames, behind the 9-byte prefix fuzz_connection reads (mode, cut seed),
             for every mode: the session's answers, the direction, a socket that takes nothing
  datagram   the datagram vectors of frames.json
  replay     the replayWindow counter sequences of security.json (base 0, 16-bit offsets)
  <type>     the payloads (header stripped) of that type's frames: hello welcome error bye context ping text text-ack
             pair game records channel transfer stream-message (records.json "messages" are payloads already)
  snapshot   the encoded snapshots of records.json
  channel-receiver  op programs for the stateful channel receiver (one per path: file, window overrun, tree,
             stream, manifest budget, a peer leaving)
  localsend  LocalSend v2 JSON (device, prepare-upload, its answer, prepare-download's answer) behind a kind byte
Vectors that expect an error are seeds too: the fuzzer starts from both sides of every check.
"""
import hashlib
import json
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Protocol", "vectors")
TYPES = {0x01: "hello", 0x02: "welcome", 0x03: "error", 0x04: "ping", 0x05: "ping", 0x06: "bye", 0x07: "context", 0x11: "text", 0x12: "text-ack",
         0x20: "pair", 0x30: "game", 0x40: "records", 0x50: "transfer", 0x51: "stream-message", 0x52: "channel"}


def load(name):
    with open(os.path.join(ROOT, name)) as f:
        return json.load(f)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    seeds = {}

    def add(target, data):
        seeds.setdefault(target, set()).add(bytes(data))

    frames = [bytes.fromhex(v["hex"]) for v in load("frames.json") if not v.get("datagram")]
    frames += [bytes.fromhex(v["hex"]) for v in load("game.json")["frames"]]
    frames += [bytes.fromhex(v["hex"]) for v in load("channel.json")]
    for v in load("frames.json"):
        if v.get("datagram"):
            add("datagram", bytes.fromhex(v["hex"]))
    for v in load("records.json")["messages"]:
        add("records", bytes.fromhex(v["hex"]))
    for v in load("records.json")["snapshots"]:
        add("snapshot", bytes.fromhex(v["hex"]))
    for v in load("security.json").get("replayWindow", []):
        counters = [int(c) for c in v["counters"]]
        if all(c < 32768 for c in counters):
            add("replay", bytes(8) + b"".join(struct.pack(">h", c) for c in counters))

    for f in frames:
        add("frame", f)
        add("stream", b"\x00" + bytes(8) + f)
        if len(f) >= 10 and f[:2] == b"P2" and f[3] in TYPES:
            add(TYPES[f[3]], f[10:])
    valid = [f for f in frames if len(f) >= 10 and f[:2] == b"P2" and len(f) == 10 + struct.unpack(">I", f[6:10])[0]]
    hellos = [f for f in valid if f[3] == 0x01]
    after = [f for f in valid if f[3] not in (0x01, 0x02)]
    for mode in range(32):
        for i, hello in enumerate(hellos[:2]):
            rest = b"".join(after[(mode + i + k) % len(after)] for k in range(4))
            welcome = [f for f in valid if f[3] == 0x02][:1]
            add("connection", bytes([mode]) + struct.pack(">Q", mode * 0x9E3779B97F4A7C15 % 2**64) + hello
                + (welcome[0] if welcome and mode & 8 else b"") + rest)
    for i, f in enumerate(valid):
        pair = f + valid[(i + 1) % len(valid)]
        add("frame", pair)
        # Different cut seeds and limits: the same bytes cut differently.
        add("stream", bytes([i % 4]) + struct.pack(">Q", i * 0x9E3779B97F4A7C15 % 2**64) + pair)

    # channel-receiver: op programs (ChannelReceiver.swift: op byte, argument byte), one per path through
    # the receivers: a file, a file whose sender overruns the window while the disk is held, a tree with
    # FILE, DATA and SMALL, a stream, a manifest over the budget, a peer leaving mid-file.
    file = [0x00, 0x02, 0x03, 0x00, 0x04, 0x02, 0x04, 0x02, 0x05, 0x00]
    overrun = [0x00, 0xFF, 0x03, 0x00, 0x0C, 0x01] + [0x04, 0x03] * 9 + [0x0C, 0x02]
    tree = [0x01, 0x03, 0x07, 0x01, 0x44, 0x00, 0x09, 0x01, 0x08, 0x02, 0x0A, 0x00]
    stream = [0x02, 0x00, 0x44, 0x82, 0x44, 0x83, 0x45, 0x80, 0x46, 0x80]
    budget = [0x01, 0x80, 0x11, 0x80, 0x21, 0x40, 0x31, 0x07]
    leave = [0x00, 0x10, 0x03, 0x00, 0x04, 0x02, 0x8C, 0x00, 0x0C, 0x00, 0x04, 0x02]
    for mode in (0, 1):
        for program in (file, overrun, tree, stream, budget, leave):
            add("channel-receiver", bytes([mode] + program))

    total = 0
    # localsend: the JSON of LocalSend v2 (the protocol README's examples and what the apps send), behind the
    # kind byte fuzzLocalSendJSON reads (0 device, 1 prepare-upload, 2 its answer, 3 prepare-download's answer).
    device = {"alias": "Nice Orange", "version": "2.2", "deviceModel": "Samsung", "deviceType": "mobile",
              "fingerprint": "3F2A9C0B17D4E5A6B7C8D9E0F1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4", "port": 53317,
              "protocol": "https", "download": True, "announce": True}
    minimal = {"alias": "x", "version": "2.0", "fingerprint": "abc"}
    files = {"f1": {"id": "f1", "fileName": "photos/a.jpg", "size": 324242, "fileType": "image/jpeg",
                    "sha256": "ab" * 32, "preview": None, "metadata": {"modified": "2021-01-01T12:34:56Z"}},
             "f2": {"id": "f2", "fileName": "b.txt", "size": 12, "fileType": "text/plain"}}
    text = {"t": {"id": "t", "fileName": "m.txt", "size": 5, "fileType": "text/plain", "preview": "hello"}}
    localsend = [
        (0, device), (0, minimal), (0, dict(device, port=None, deviceType="fridge", announce=False)),
        (1, {"info": device, "files": files}), (1, {"info": minimal, "files": text}),
        (1, {"info": minimal, "files": {"a": dict(files["f2"], fileName="../escape")}}),
        (2, {"sessionId": "mySessionId", "files": {"f1": "token1", "f2": "token 2&x=y"}}),
        (3, {"info": dict(device, protocol="http"), "sessionId": "s", "files": files}),
    ]
    for kind, message in localsend:
        add("localsend", bytes([kind]) + json.dumps(message).encode())

    for target, items in sorted(seeds.items()):
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for data in items:
            with open(os.path.join(out, target, hashlib.sha1(data).hexdigest()), "wb") as f:
                f.write(data)
        total += len(items)
        print("%-10s %4d seeds" % (target, len(items)))
    print("%d seeds in %s" % (total, out))


if __name__ == "__main__":
    main()
