#!/usr/bin/env bash
# A chat room of N hosts (default 32), each a network namespace with its own dbus-daemon and avahi-daemon
# (bound to its one veth, IPv4 only) and its own `p2p chat --yes --json` in the default room `chat`, all on
# one bridge (itself in a namespace: nothing of it is in the root namespace). Figure: the time from the
# last chat's start until every chat reports all N-1 others connected (496 TLS connections for 32).
# Issue 34: the old "20 new peers a minute" dial limit made this take 71.5 s; bounds on what forged
# announcements cost (concurrent dials, back-off, failures counted) must not cost a real room its mesh.
# Run it against two binaries in the same sitting for a before/after figure (P2P_BIN=... twice). Prints
# the load average before and after (a figure taken at load >= 1 is not a quiet-machine figure).
# Where the time goes: `phasesFromLastStart` gives, over the hosts, the median and latest time each
# listened, advertised (mDNS probing done), saw its first and its last peer, had its first connection and its full
# mesh; `cpuSeconds` the CPU the chats and the avahi-daemons used until then.
#
# The floor: `--floor` runs, in the same lab, only what DNS-SD itself costs: each host publishes one
# `_p2p._tcp` instance with a TXT record of p2p's size (`avahi-publish`) and resolves every other one
# (`avahi-browse --resolve`, libavahi-client over D-Bus, as p2p's resolver does); its figure is the time
# until every host has resolved all N-1 others. No TLS, no chat: what p2p cannot go below with one
# avahi-daemon per host on this machine. Run both in one sitting for the ratio.
#
# usage: Benchmarks/room_mesh.sh [--hosts N] [--timeout SECONDS] [--floor]      (root: network namespaces)
# env:   P2P_BIN (default .build/release/p2p); ROOM_MESH_EVENTS=DIR keeps each chat's JSON events there,
#        one file per host, each line prefixed with its time in seconds from the last start (and its stderr,
#        and its avahi-daemon's log; mdns.pcap: every mDNS packet on the bridge); ROOM_MESH_STACKS=SECONDS
#        (with ROOM_MESH_EVENTS) adds the gdb thread stacks of each chat not yet advertising by then
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ME=room_mesh.sh
. "$ROOT/scripts/_common.sh"
P2P=${P2P_BIN:-$ROOT/.build/release/p2p}
[[ "$P2P" = /* ]] || P2P=$ROOT/$P2P
HOSTS=32 TIMEOUT=180 FLOOR=0
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) HOSTS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --floor) FLOOR=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
need_root bench
[ -x "$P2P" ] || die "no p2p binary at $P2P"
[ "$HOSTS" -ge 2 ] && [ "$HOSTS" -le 200 ] || die "--hosts is 2 to 200"
PFX=p2prm$$
STATE=$(mktemp -d /run/p2p-room-mesh.XXXXXX)   # 0700, root's
hub() { echo "${PFX}H"; }
host_ns() { echo "${PFX}h$1"; }
cleanup() {
  local i f
  stop_pidfile "$STATE/tcpdump.pid" >/dev/null
  for f in "$STATE"/*/avahi.pid; do stop_pidfile "$f" >/dev/null; done
  # The daemons' own logs (probing, conflicts, renames) beside the chats' events.
  if [ -n "${ROOM_MESH_EVENTS:-}" ]; then
    for i in $(seq 1 "$HOSTS"); do cp "$STATE/$i/avahi.log" "$ROOM_MESH_EVENTS/avahi$(printf %02d "$i").log" 2>/dev/null; done
  fi
  for f in "$STATE"/*/dbus.pid; do stop_pidfile "$f" >/dev/null; done
  for i in $(seq 1 "$HOSTS"); do ip netns del "$(host_ns "$i")" 2>/dev/null; done
  ip netns del "$(hub)" 2>/dev/null
  rm -rf "$STATE"
}
trap cleanup EXIT

# in_host I CMD...: CMD in host I's namespace, with its own /run/dbus and /run/avahi-daemon.
in_host() {
  local i=$1 d=$STATE/$1; shift
  DBUS_SYSTEM_BUS_ADDRESS=unix:path=$d/run-dbus/system_bus_socket AVAHI_COMPAT_NOWARN=1 \
    exec ip netns exec "$(host_ns "$i")" unshare -m sh -c \
    'mount --bind "$1" /run/dbus && mount --bind "$2" /run/avahi-daemon && shift 2 && exec "$@"' sh "$d/run-dbus" "$d/run-avahi" "$@"
}
export -f in_host host_ns 2>/dev/null
export STATE PFX

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p /run/dbus /run/avahi-daemon
ip netns add "$(hub)"
ip -n "$(hub)" link add br0 type bridge mcast_snooping 0
ip -n "$(hub)" link set br0 up
for i in $(seq 1 "$HOSTS"); do
  ip netns add "$(host_ns "$i")"
  ip link add "rmv$i-$$" netns "$(host_ns "$i")" type veth peer name "rmh$i-$$" netns "$(hub)"
done
for i in $(seq 1 "$HOSTS"); do
  n=$(host_ns "$i")
  v=rmv$i-$$ h=rmh$i-$$
  ip -n "$(hub)" link set "$h" master br0 up
  ip -n "$n" link set lo up
  ip -n "$n" addr add "10.213.9.$i/24" dev "$v"
  ip -n "$n" link set "$v" up
  d=$STATE/$i
  mkdir -p "$d/run-dbus" "$d/run-avahi"
  avahi_conf "mesh$i" "$v" >"$d/avahi-daemon.conf"
  start_bg "$d/dbus.pid" dbus-daemon "$d/dbus.log" bash -c 'in_host "$@"' _ "$i" dbus-daemon --system --nofork
done
for i in $(seq 1 "$HOSTS"); do
  DBUS_SYSTEM_BUS_ADDRESS=unix:path=$STATE/$i/run-dbus/system_bus_socket wait_daemon "$STATE/$i/dbus.pid" 20 bus_up || die "dbus in host $i did not come up"
  start_bg "$STATE/$i/avahi.pid" avahi-daemon "$STATE/$i/avahi.log" \
    bash -c 'in_host "$@"' _ "$i" avahi-daemon -f "$STATE/$i/avahi-daemon.conf" --no-drop-root --no-chroot
done
for i in $(seq 1 "$HOSTS"); do
  DBUS_SYSTEM_BUS_ADDRESS=unix:path=$STATE/$i/run-dbus/system_bus_socket wait_daemon "$STATE/$i/avahi.pid" 30 avahi_running || die "avahi in host $i did not come up"
done
say "$HOSTS hosts up, each with its own avahi-daemon; load $(cut -d' ' -f1-3 /proc/loadavg)"
# Every mDNS packet on the bridge, for counting what the room asks the daemons (each packet is read by all).
if [ -n "${ROOM_MESH_EVENTS:-}" ]; then
  mkdir -p "$ROOM_MESH_EVENTS"
  start_bg "$STATE/tcpdump.pid" tcpdump "$STATE/tcpdump.log" \
    ip netns exec "$(hub)" tcpdump -Z root -i br0 -n -U -w "$ROOM_MESH_EVENTS/mdns.pcap" udp port 5353
fi

python3 - "$P2P" "$HOSTS" "$TIMEOUT" "$STATE" "${ROOM_MESH_EVENTS:-}" "$FLOOR" <<'PY'
import json, os, subprocess, sys, threading, time
p2p, hosts, timeout, state, events_dir = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
floor = sys.argv[6] == "1"
logs = [[] for _ in range(hosts)]
connected, lock, full_at, procs = [set() for _ in range(hosts)], threading.Lock(), [None] * hosts, []
# Where the time goes, per host: when it listened, advertised, saw its first and its last peer announced,
# (or was dialled by) its first and its last peer, and had its first connection (seconds from the last
# start; medians and maxima printed).
phases = {name: [None] * hosts for name in ("listening", "advertising", "firstSeen", "allSeen", "firstConnected")}
seen = [set() for _ in range(hosts)]
def mark(name, i):
    if phases[name][i] is None:
        phases[name][i] = time.monotonic()
def reader(i, stream):
    for line in stream:
        if events_dir:
            logs[i].append((time.monotonic(), line.rstrip("\n")))
        if floor:
            floor_line(i, line)
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        with lock:
            kind = event.get("event")
            if kind in ("listening", "advertising"):
                mark(kind, i)
            if kind in ("peer-available", "connecting", "connected"):
                # A peer that dials this host before its announcement is found here is seen all the same.
                mark("firstSeen", i)
                seen[i].add(event.get("id"))
                if len(seen[i]) == hosts - 1:
                    mark("allSeen", i)
            if kind == "connected":
                mark("firstConnected", i)
                connected[i].add(event.get("id"))
                if len(connected[i]) == hosts - 1 and full_at[i] is None:
                    full_at[i] = time.monotonic()
            elif event.get("event") == "disconnected":
                connected[i].discard(event.get("id"))
def floor_line(i, line):
    # avahi-browse --parsable: "=;IFACE;IPv4;NAME;TYPE;DOMAIN;HOST;ADDRESS;PORT;TXT" once resolved;
    # avahi-publish: "Established under name 'NAME'" once probing is done.
    fields = line.split(";")
    with lock:
        if line.startswith("Established under name"):
            mark("listening", i)
            mark("advertising", i)
        elif fields[0] == "=" and len(fields) > 3 and fields[3] != "host%02d" % (i + 1):
            mark("firstSeen", i)
            mark("firstConnected", i)
            seen[i].add(fields[3])
            connected[i].add(fields[3])
            if len(seen[i]) == hosts - 1:
                mark("allSeen", i)
                full_at[i] = time.monotonic()
def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
def daemon_pids(name):
    pids = []
    for i in range(hosts):
        try:
            with open(os.path.join(state, str(i + 1), name + ".pid")) as f:
                pids.append(int(f.read().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return pids
def in_host(i, *command):
    return ["bash", "-c", 'in_host "$@"', "_", str(i + 1)] + list(command)
# Identities first, so key generation is not part of the figure.
for i in range(hosts if not floor else 0):
    home = os.path.join(state, str(i + 1), "home")
    subprocess.run([p2p, "id", "--json"], env=dict(os.environ, P2P_HOME=home), stdout=subprocess.DEVNULL, check=True)
if events_dir:
    os.makedirs(events_dir, exist_ok=True)
avahi_before = sum(cpu_seconds(pid) for pid in daemon_pids("avahi"))
dbus_before = sum(cpu_seconds(pid) for pid in daemon_pids("dbus"))
start = time.monotonic()
def floor_commands(i):
    # p2p's own TXT keys and sizes: txtvers, pv, a 32-hex-digit id, the room, the dial rule.
    name, txt = "host%02d" % (i + 1), ["txtvers=1", "pv=9", "id=%032x" % (i + 1), "sid=chat", "dial=names"]
    return [["avahi-publish", "--service", name, "_p2p._tcp", "7000"] + txt,
            ["stdbuf", "-oL", "avahi-browse", "--resolve", "--parsable", "--no-db-lookup", "_p2p._tcp"]]
for i in range(hosts):
    home = os.path.join(state, str(i + 1), "home")
    commands = floor_commands(i) if floor else [["env", "P2P_HOME=" + home, p2p, "chat", "--yes", "--json", "--name", "host%02d" % (i + 1)]]
    for command in commands:
        proc = subprocess.Popen(in_host(i, *command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                stderr=(subprocess.STDOUT if floor else
                                        open(os.path.join(events_dir, "host%02d.err" % (i + 1)), "w") if events_dir else subprocess.DEVNULL))
        procs.append(proc)
        threading.Thread(target=reader, args=(i, proc.stdout), daemon=True).start()
launched = time.monotonic()
timeline, next_sample = [], launched + 1
# ROOM_MESH_STACKS=SECONDS (with ROOM_MESH_EVENTS): that long after the last start, the thread stacks of every
# chat that has not reported `advertising` yet (gdb), to see what a late host waits on.
stacks_at = launched + float(os.environ["ROOM_MESH_STACKS"]) if events_dir and os.environ.get("ROOM_MESH_STACKS") else None
def dump_stacks(i, pid):
    with open(os.path.join(events_dir, "host%02d.stacks" % (i + 1)), "w") as out:
        out.write("%.3f s after the last start\n" % (time.monotonic() - launched))
        out.flush()
        subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"], stdout=out, stderr=subprocess.DEVNULL)
while time.monotonic() < launched + timeout:
    with lock:
        if all(full_at):
            break
        if stacks_at is not None and time.monotonic() >= stacks_at:
            stacks_at = None
            for i, proc in enumerate(procs):
                if phases["advertising"][i] is None:
                    threading.Thread(target=dump_stacks, args=(i, proc.pid), daemon=True).start()
        if time.monotonic() >= next_sample:
            timeline.append(sum(len(c) for c in connected) // 2)
            next_sample += 1
    time.sleep(0.05)
with lock:
    done = all(full_at)
    links = sum(len(c) for c in connected) // 2
    last = max(t for t in full_at if t) if any(full_at) else None
    # CPU spent until now (the mesh formed, or the timeout): the chats' and the avahi-daemons' share.
    cpu = {("avahi-publish and -browse" if floor else "p2p"): round(sum(cpu_seconds(proc.pid) for proc in procs), 1),
           "avahi": round(sum(cpu_seconds(pid) for pid in daemon_pids("avahi")) - avahi_before, 1),
           "dbus": round(sum(cpu_seconds(pid) for pid in daemon_pids("dbus")) - dbus_before, 1)}
    def spread(times):
        got = sorted(round(t - launched, 2) for t in times if t is not None)
        return {"n": len(got), "median": got[len(got) // 2], "max": got[-1]} if got else {"n": 0}
    phase_figures = {name: spread(times) for name, times in phases.items()}
    phase_figures["fullMesh"] = spread(full_at)
if events_dir:
    os.makedirs(events_dir, exist_ok=True)
    for i, log in enumerate(logs):
        with open(os.path.join(events_dir, "host%02d.jsonl" % (i + 1)), "w") as f:
            f.writelines("%.3f %s\n" % (t - launched, line) for t, line in list(log))
for proc in procs:
    proc.stdin.close()
    if floor:
        proc.terminate()  # avahi-publish and avahi-browse run until told
for proc in procs:
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
print(json.dumps({"hosts": hosts, "floor": floor, "meshFormed": done, "connections": links, "launchSeconds": round(launched - start, 2),
                  "meshSecondsFromLastStart": round(last - launched, 2) if done else None,
                  "meshSecondsFromFirstStart": round(last - start, 2) if done else None,
                  "connectionsEachSecond": timeline, "phasesFromLastStart": phase_figures,
                  "cpuSeconds": cpu}))
sys.exit(0 if done else 1)
PY
rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
