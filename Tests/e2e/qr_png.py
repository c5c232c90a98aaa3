#!/usr/bin/env python3
"""Turns the first QR code drawn with half blocks in a terminal screen (stdin, as tmux capture-pane gives it)
into a PNG a QR reader can open, the way a camera sees the screen: each glyph's ink (▀ top, ▄ bottom,
█ both) dark, everything else light, 8 pixels per module, white all around.

usage: qr_png.py OUT.png < screen.txt     (exit 1 when the screen shows no QR code)
"""
import struct
import sys
import zlib

INK = "▀▄█"


def first_drawing(lines):
    block, started = [], False
    for line in lines:
        if any(c in INK for c in line):
            block.append(line)
            started = True
        elif started:
            break
    return block


def modules(block):
    width = max(len(line) for line in block)
    rows = []
    for line in block:
        line = line.ljust(width)
        rows.append([c in "▀█" for c in line])
        rows.append([c in "▄█" for c in line])
    return rows


def png(rows, scale=8, border=8):
    height, width = len(rows), len(rows[0])
    pixels = []
    for y in range(-border, height + border):
        for _ in range(scale):
            line = bytearray([0])  # filter: none
            for x in range(-border, width + border):
                dark = 0 <= y < height and 0 <= x < width and rows[y][x]
                line += bytes([0 if dark else 255]) * scale
            pixels.append(bytes(line))
    w, h = (width + 2 * border) * scale, (height + 2 * border) * scale

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(pixels))) + chunk(b"IEND", b""))


def main(out):
    block = first_drawing(sys.stdin.read().splitlines())
    if not block:
        print("no QR code on the screen", file=sys.stderr)
        return 1
    with open(out, "wb") as file:
        file.write(png(modules(block)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
