#!/usr/bin/env python3
"""Writes Protocol/vectors/text.json: how a receiver that knows texts (TRANSFER.md, "Texts") shows one,
which offers are texts, and which sizes are refused before anyone is asked. Independent of the Swift code:
the rules below are the spec's, written again."""
import json, pathlib

MEDIA_TYPE = "text/vnd.p2p.text; charset=utf-8"
BYTE_LIMIT = 65536

def unsafe(cp):
    """What a receiver replaces when it prints peer text (PROTOCOL.md, PeerText): C0, DEL, C1, line and
    paragraph separators, bidirectional overrides and isolates."""
    return cp <= 0x1F or 0x7F <= cp <= 0x9F or cp in (0x2028, 0x2029) or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069

def shown(data: bytes) -> str:
    # Not UTF-8: one U+FFFD per maximal ill-formed subsequence (Python's "replace" does exactly that).
    text = data.decode("utf-8", "replace")
    out = []
    for i, ch in enumerate(text):
        if ch == "\r" and text[i + 1:i + 2] == "\n":
            continue  # CR LF is a line break: the LF stays
        out.append(ch if ch in "\n\t" or not unsafe(ord(ch)) else "\ufffd")
    return "".join(out)

cases = [
    ("plain lines and a tab", "one\ttwo\nüñï 日本\n".encode()),
    ("CR LF becomes LF", b"a\r\nb\r\n"),
    ("a lone CR is replaced", b"a\rb"),
    ("CR CR LF: one CR replaced, the line break kept", b"a\r\r\nb"),
    ("LF CR: the CR is replaced", b"a\n\rb"),
    ("terminal escapes: ESC, BEL, OSC 52", "red \x1b[31mX\x1b]52;c;aGk=\x07 end".encode()),
    ("NUL, DEL and a C1 control (U+009B CSI)", "a\x00b\x7fc\u009bd".encode()),
    ("line and paragraph separators", "a\u2028b\u2029c".encode()),
    ("bidi override and isolate", "a\u202eb\u2066c\u2069d".encode()),
    ("zero-width joiner and emoji stay", "👩\u200d💻 ok".encode()),
    ("vertical tab and form feed are replaced", b"a\x0bb\x0cc"),
    ("an invalid byte", bytes([0x61, 0xFF, 0x62])),
    ("a truncated 3-byte sequence: one U+FFFD", bytes([0x61, 0xE6, 0x97, 0x62])),
    ("an overlong encoding of '/': two U+FFFD", bytes([0xC0, 0xAF])),
    ("a UTF-16 surrogate encoded in UTF-8: three U+FFFD", bytes([0xED, 0xA0, 0x80])),
    ("a byte order mark stays (it is no control)", "\ufeffhi".encode()),
    ("empty", b""),
]
display = [{"name": n, "hex": b.hex(), "shown": shown(b)} for n, b in cases]

media = [
    (MEDIA_TYPE, True),
    ("text/vnd.p2p.text;charset=utf-8", False),
    ("text/vnd.p2p.text; charset=UTF-8", False),
    ("TEXT/VND.P2P.TEXT; charset=utf-8", False),
    ("text/vnd.p2p.text", False),
    (MEDIA_TYPE + " ", False),
    ("text/plain", False),
]
media_types = [{"mediaType": m, "isText": t} for m, t in media]
sizes = [{"size": s, "refused": s > BYTE_LIMIT} for s in (0, 1, BYTE_LIMIT - 1, BYTE_LIMIT, BYTE_LIMIT + 1, 1 << 20)]

path = pathlib.Path(__file__).resolve().parent.parent / "vectors" / "text.json"
path.write_text(json.dumps({"display": display, "mediaTypes": media_types, "sizes": sizes}, indent=1, ensure_ascii=False) + "\n")
print(f"wrote {len(display)} display, {len(media_types)} media type and {len(sizes)} size vectors to {path}")
