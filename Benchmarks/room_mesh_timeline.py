#!/usr/bin/env python3
"""Where each host of a room_mesh.sh run lost its time before it was found: per host, when its chat
listened, when its avahi-daemon sent its first probe and its announcement (from mdns.pcap), when the chat
reported "advertising" (the registration callback, after which it replaces the shared claim TXT record
with its own: until then the others' resolves see only the claim record), and its first peer.

usage: Benchmarks/room_mesh_timeline.py DIR     (DIR: a ROOM_MESH_EVENTS directory; needs tcpdump)

The capture's clock (wall time) is put onto the events' clock (seconds from the last chat's start) by the
host whose "advertising" followed its announcement soonest, so "late by" is relative to the quickest
registration callback of the run: a lower bound for the others.
"""
import glob
import json
import os
import re
import subprocess
import sys

directory = sys.argv[1]
capture = subprocess.run(["tcpdump", "-r", os.path.join(directory, "mdns.pcap"), "-n", "-tt"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
first_probe, announced, queries, responses = {}, {}, 0, 0
for line in capture:
    match = re.match(r"([\d.]+) IP 10\.213\.9\.(\d+)\.5353", line)
    if not match:
        continue
    at, host = float(match.group(1)), int(match.group(2))
    is_response = "*-" in line
    responses += is_response
    queries += not is_response
    if "ANY (QM)?" in line:
        first_probe.setdefault(host, at)
    if is_response and "SRV mesh" in line:
        announced.setdefault(host, at)

hosts = []
for path in sorted(glob.glob(os.path.join(directory, "host*.jsonl"))):
    host = int(os.path.basename(path)[4:6])
    seen = {}
    for line in open(path):
        at, _, text = line.partition(" ")
        try:
            kind = json.loads(text).get("event")
        except ValueError:
            continue
        if kind in ("listening", "advertising"):
            seen.setdefault(kind, float(at))
        if kind in ("peer-available", "connecting", "connected"):
            seen.setdefault("firstPeer", float(at))
    if host in announced and "advertising" in seen:
        hosts.append((host, seen, first_probe.get(host), announced[host]))

offset = min(seen["advertising"] - announce for _, seen, _, announce in hosts)
print("mDNS packets on the bridge: %d queries, %d responses" % (queries, responses))
delays = []
for host, seen, probe, announce in sorted(hosts, key=lambda h: h[1]["advertising"]):
    late = seen["advertising"] - (announce + offset)
    delays.append(late)
    print("host%02d listening %6.2f  first probe %6.2f  announced %6.2f  advertising %6.2f (late by %5.2f)  first peer %6.2f" % (
        host, seen.get("listening", float("nan")), (probe + offset) if probe else float("nan"), announce + offset,
        seen["advertising"], late, seen.get("firstPeer", float("nan"))))
delays.sort()
print("'advertising' after the daemon's announcement: median %.2f s, latest %.2f s" % (delays[len(delays) // 2], delays[-1]))
