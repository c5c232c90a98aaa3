#!/usr/bin/env python3
"""What a tcpdump capture (pcap, Ethernet or Linux cooked link type) shows of one TCP port (security.sh).

usage: pcap_scan.py FILE PORT [NEEDLE...]

Prints one JSON object:
  packets        TCP packets to or from PORT
  connections    TCP connections to PORT (told apart by the client's port)
  payload_bytes  TCP payload bytes in them
  to_server, from_server   the first 8 payload bytes each way of the first connection, hex
                 (a TLS stream starts with 16 03)
  tls_records    whether every connection, both ways, is a sequence of TLS records (content type
                 20-23, version 03 xx)
  closed         whether every connection ended in the capture (FIN both ways, or a RST)
  found          {NEEDLE: true if it occurs in the raw file or in any direction's payload stream}
A stream is its payloads concatenated in capture order (loopback: no loss, no reordering), so a needle
split across two segments is still found.
"""
import json
import struct
import sys


def packets(data):
    if len(data) < 24:
        return None, []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise SystemExit("not a pcap file (pcapng is not supported)")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return linktype, out


def tcp_segment(linktype, pkt):
    """(src port, dst port, flags, payload) of an IPv4/IPv6 TCP packet, else None."""
    if linktype == 1:        # Ethernet
        ethertype, ip = struct.unpack(">H", pkt[12:14])[0], pkt[14:]
    elif linktype == 113:    # Linux cooked (SLL)
        ethertype, ip = struct.unpack(">H", pkt[14:16])[0], pkt[16:]
    elif linktype == 276:    # Linux cooked v2
        ethertype, ip = struct.unpack(">H", pkt[0:2])[0], pkt[20:]
    else:
        raise SystemExit("unsupported link type %d" % linktype)
    if ethertype == 0x0800 and len(ip) >= 20:
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] != 6:
            return None
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
    elif ethertype == 0x86DD and len(ip) >= 40:
        if ip[6] != 6:
            return None
        tcp = ip[40:40 + struct.unpack(">H", ip[4:6])[0]]
    else:
        return None
    if len(tcp) < 20:
        return None
    sport, dport = struct.unpack(">HH", tcp[:4])
    return sport, dport, tcp[13], tcp[(tcp[12] >> 4) * 4:]


def tls_records(stream):
    """True when the stream is a whole number of TLS records (the last may be cut by the capture's end)."""
    off = 0
    if not stream:
        return False
    while off + 5 <= len(stream):
        ctype, major = stream[off], stream[off + 1]
        if ctype not in (20, 21, 22, 23) or major != 3:
            return False
        off += 5 + struct.unpack(">H", stream[off + 3:off + 5])[0]
    return True


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    path, port, needles = argv[1], int(argv[2]), argv[3:]
    data = open(path, "rb").read()
    linktype, pkts = packets(data)
    count, streams, ends = 0, {}, {}  # client port -> [to server, from server], -> {"c", "s", "rst"}
    for pkt in pkts:
        seg = tcp_segment(linktype, pkt)
        if seg is None:
            continue
        sport, dport, flags, payload = seg
        if port not in (sport, dport):
            continue
        count += 1
        client, side = (sport, 0) if dport == port else (dport, 1)
        streams.setdefault(client, [b"", b""])[side] += payload
        if flags & 0x01:
            ends.setdefault(client, set()).add("cs"[side])
        if flags & 0x04:
            ends.setdefault(client, set()).add("rst")
    flat = [s for pair in streams.values() for s in pair]
    found = {n: (n.encode() in data or any(n.encode() in s for s in flat)) for n in needles}
    first = next(iter(streams.values()), [b"", b""])
    print(json.dumps({
        "packets": count, "connections": len(streams), "payload_bytes": sum(len(s) for s in flat),
        "to_server": first[0][:8].hex(), "from_server": first[1][:8].hex(),
        "tls_records": bool(streams) and all(tls_records(a) and tls_records(b) for a, b in streams.values()),
        "closed": bool(streams) and all("rst" in ends.get(c, ()) or {"c", "s"} <= ends.get(c, set()) for c in streams),
        "found": found,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
