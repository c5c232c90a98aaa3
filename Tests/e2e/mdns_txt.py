#!/usr/bin/env python3
"""Prints the TXT strings of a DNS-SD service instance in wire order, as a JSON list.

usage: mdns_txt.py INSTANCE-NAME [SERVICE-TYPE] [--iface-addr 127.0.0.1] [--timeout 3]

Sends a legacy-unicast mDNS query (from an ephemeral port, so the responder answers us directly)
to 224.0.0.251:5353 out of the interface with the given address (default loopback). avahi-browse
cannot answer "which key comes first": it prints TXT strings in reverse wire order.
"""
import json
import random
import socket
import struct
import sys
import time


def qname(name):
    out = b""
    for label in name.rstrip(".").split("."):
        b = label.encode("utf-8")
        out += bytes([len(b)]) + b
    return out + b"\0"


def skip_name(data, i):
    while True:
        n = data[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n


def read_name(data, i):
    labels, jumps = [], 0
    while True:
        n = data[i]
        if n == 0:
            return ".".join(labels)
        if n & 0xC0 == 0xC0:
            i = ((n & 0x3F) << 8) | data[i + 1]
            jumps += 1
            if jumps > 20:
                raise ValueError("name loop")
            continue
        labels.append(data[i + 1:i + 1 + n].decode("utf-8", "replace"))
        i += 1 + n


def main():
    args = sys.argv[1:]
    addr, timeout = "127.0.0.1", 3.0
    if "--iface-addr" in args:
        i = args.index("--iface-addr"); addr = args[i + 1]; del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout"); timeout = float(args[i + 1]); del args[i:i + 2]
    if not args:
        sys.exit(__doc__)
    service = args[1] if len(args) > 1 else "_p2p._tcp"
    fqdn = "%s.%s.local" % (args[0], service)
    tid = random.randrange(65536)
    query = struct.pack(">HHHHHH", tid, 0, 1, 0, 0, 0) + qname(fqdn) + struct.pack(">HH", 16, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(addr))
    s.bind((addr, 0))
    end = time.monotonic() + timeout
    s.sendto(query, ("224.0.0.251", 5353))
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            data, _ = s.recvfrom(9000)
        except socket.timeout:
            break
        tid_r, flags, qd, an = struct.unpack(">HHHH", data[:8])
        i = 12
        for _ in range(qd):
            i = skip_name(data, i) + 4
        for _ in range(an):
            name = read_name(data, i)
            i = skip_name(data, i)
            rtype, _cls, _ttl, rdlen = struct.unpack(">HHIH", data[i:i + 10])
            i += 10
            rdata = data[i:i + rdlen]
            i += rdlen
            if rtype == 16 and name.lower() == fqdn.lower():
                strings, j = [], 0
                while j < len(rdata):
                    n = rdata[j]
                    strings.append(rdata[j + 1:j + 1 + n].decode("utf-8", "replace"))
                    j += 1 + n
                print(json.dumps(strings))
                return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
