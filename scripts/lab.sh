#!/usr/bin/env bash
# Two-host mDNS test lab on one machine: network namespaces A and B joined by a veth pair,
# each with its own system dbus-daemon and avahi-daemon (bound to the veth only).
# Nothing in the lab can reach a real network: the subnet is blackholed in the root namespace.
# P2P_LAB_FAMILY picks the addresses on the veth: ipv4 (default: 10.213.7.1 and .2, avahi IPv4 only),
# ipv6ll (no IPv4 at all: the link-local fe80:: addresses the kernel gives the veths, avahi IPv6 only:
# two laptops joined by a cable, no DHCP), or dual (both, avahi both). IPv6 is only ever on the lab's
# veths inside its namespaces. P2P_LAB_LINKS=2 adds a second veth pair <prefix>wA <-> <prefix>wB on
# 10.213.8.1 and .2 (IPv4): two links between the same two hosts (Ethernet and Wi-Fi), avahi on both.
# P2P_LAB_ROUTER=1 (IPv4, one link) puts A and B on two subnets joined by a router, a third namespace R:
# A 10.213.7.1/24 <-> R 10.213.7.254 (<prefix>vA <-> <prefix>rA), R 10.213.8.254 <-> B 10.213.8.2/24
# (<prefix>rB <-> <prefix>vB). R forwards IPv4 and runs an avahi-daemon with its reflector on, bound to
# those two veths only; A and B each route the other's subnet via R.
# P2P_LAB_HOSTS=N (3 to 6; IPv4, one link, no router) puts N hosts A, B, C, … on one segment: a bridge
# in a switch namespace S, host X's veth <prefix>vX joined to its port <prefix>sX, X at 10.213.7.<n>
# (A .1, B .2, C .3, …), each host with its own dbus-daemon and avahi-daemon.
set -euo pipefail
ME=lab.sh
SELF=$(readlink -f "$0")
. "$(dirname "$SELF")/_common.sh"
PREFIX=${P2P_LAB_PREFIX:-p2p}
# Root keeps pid files, logs, configs and the hosts' bus sockets here: a directory of its own (0700),
# under /run/p2p-lab (0700), never a fixed name in /tmp another user could plant first (issue 34).
LAB_ROOT=/run/p2p-lab
STATE=${P2P_LAB_STATE:-$LAB_ROOT/$PREFIX}
NET=10.213.7.0/24 NET2=10.213.8.0/24
ADDR_A=10.213.7.1 ADDR_B=10.213.7.2 ADDR2_A=10.213.8.1 ADDR2_B=10.213.8.2
LINKS=${P2P_LAB_LINKS:-1}
case $LINKS in 1|2) ;; *) echo "$ME: error: P2P_LAB_LINKS is 1 or 2" >&2; exit 2 ;; esac
FAMILY=${P2P_LAB_FAMILY:-ipv4}
case $FAMILY in ipv4|ipv6ll|dual) ;; *) echo "$ME: error: P2P_LAB_FAMILY is ipv4, ipv6ll or dual" >&2; exit 2 ;; esac
ROUTER=${P2P_LAB_ROUTER:-0}
HOSTS=${P2P_LAB_HOSTS:-2}
case $HOSTS in 2|3|4|5|6) ;; *) echo "$ME: error: P2P_LAB_HOSTS is 2 to 6" >&2; exit 2 ;; esac
if [ "$HOSTS" -gt 2 ]; then
  [ "$FAMILY" = ipv4 ] && [ "$LINKS" = 1 ] && [ "$ROUTER" = 0 ] || { echo "$ME: error: P2P_LAB_HOSTS>2 is IPv4 with one link and no router only" >&2; exit 2; }
fi
case $ROUTER in 0|1) ;; *) echo "$ME: error: P2P_LAB_ROUTER is 0 or 1" >&2; exit 2 ;; esac
if [ "$ROUTER" = 1 ]; then
  [ "$FAMILY" = ipv4 ] && [ "$LINKS" = 1 ] || { echo "$ME: error: P2P_LAB_ROUTER=1 is IPv4 with one link only" >&2; exit 2; }
  ADDR_B=10.213.8.2 ROUTER_A=10.213.7.254 ROUTER_B=10.213.8.254
fi
# Interface names are limited to 15 characters; the veth is "<prefix>vB".
[[ "$PREFIX" =~ ^[a-zA-Z0-9_-]{1,13}$ ]] || { echo "$ME: error: P2P_LAB_PREFIX must be 1-13 of [a-zA-Z0-9_-]" >&2; exit 2; }

usage() {
  cat <<EOF
usage: $ME up|down|status|exec A|B|R CMD...|env A|B|R|restart-avahi A|B|R [--kill]
  up        (re)create the lab: namespaces ${PREFIX}A/${PREFIX}B, veth ${PREFIX}vA ($ADDR_A/24) <-> ${PREFIX}vB ($ADDR_B/24),
            a dbus-daemon + avahi-daemon (host ${PREFIX}-a / ${PREFIX}-b) per namespace; checks A and B see each other
  down      stop the lab's daemons by PID, delete namespaces, veth, $STATE and the blackhole route (kept while other labs are up) (safe if not up)
  status    show what is up
  exec X CMD  run CMD inside host X with DBUS_SYSTEM_BUS_ADDRESS and AVAHI_COMPAT_NOWARN=1 set. It execs,
            so after '$ME exec A prog &', \$! is prog's PID. CMD sees X's /run/dbus and /run/avahi-daemon
            (so getaddrinfo("${PREFIX}-b.local") via nss-mdns works too).
  env X     print host X's DBUS_SYSTEM_BUS_ADDRESS=... line
  restart-avahi X [--kill]
            stop host X's avahi-daemon by its recorded PID (SIGTERM: it sends goodbyes; --kill: SIGKILL, it
            vanishes without a word), start it again the way 'up' does and wait until it is running.
            Clients (p2p) keep running; it prints "stopped_at=<epoch s> running_at=<epoch s>".
  R is the router of a P2P_LAB_ROUTER=1 lab (A and B on 10.213.7.0/24 and 10.213.8.0/24).
env: P2P_LAB_PREFIX (default p2p), P2P_LAB_STATE (default /run/p2p-lab/<prefix>, 0700), P2P_LAB_FAMILY, P2P_LAB_LINKS, P2P_LAB_HOSTS (hosts A to F),
     P2P_LAB_ROUTER (see the top of this script)
EOF
}

ns() { echo "$PREFIX$1"; }          # A -> p2pA
veth() { echo "${PREFIX}v$1"; }     # A -> p2pvA
veth2() { echo "${PREFIX}w$1"; }    # A -> p2pwA: the second link (P2P_LAB_LINKS=2)
rveth() { echo "${PREFIX}r$1"; }    # A -> p2prA: the router's end of A's link (P2P_LAB_ROUTER=1)
lab_interfaces() {
  if [ "$1" = R ]; then echo "$(rveth A),$(rveth B)"
  elif [ "$LINKS" = 2 ]; then echo "$(veth "$1"),$(veth2 "$1")"
  else veth "$1"; fi
}
host_dir() { echo "$STATE/$1"; }
bus_addr() { echo "unix:path=$STATE/$1/run-dbus/system_bus_socket"; }
ns_exists() { [ -e "/run/netns/$(ns "$1")" ]; }
check_host() { [[ "${1:-}" =~ ^[A-FR]$ ]] || die "host must be A to F (P2P_LAB_HOSTS) or R, got '${1:-}'"; }

# Run CMD in host X. 'ip netns exec' gives a fresh mount namespace each time, so the bind mounts of
# the host's private /run/dbus and /run/avahi-daemon (pid files, sockets at compiled-in paths) are
# redone here for every command; unshare -m makes sure they can never reach the root namespace.
# Every step execs, so the PID of this process ends up being CMD's.
do_exec() {
  local x=$1 d; shift; check_host "$x"; [ $# -gt 0 ] || die "exec $x: no command given"
  d=$(host_dir "$x")
  ns_exists "$x" && existing_private_dir "$STATE" && [ -d "$d/run-dbus" ] || die "lab is not up (run: $ME up)"
  export DBUS_SYSTEM_BUS_ADDRESS; DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr "$x")
  export AVAHI_COMPAT_NOWARN=1
  exec ip netns exec "$(ns "$x")" unshare -m sh -c \
    'mount --bind "$1" /run/dbus && mount --bind "$2" /run/avahi-daemon && shift 2 && exec "$@"' \
    sh "$d/run-dbus" "$d/run-avahi" "$@"
}

dump_logs() { for f in "$STATE"/*/*.log "$STATE"/*.log; do [ -s "$f" ] && { echo "----- $f"; cat "$f"; }; done >&2 || true; }
fail_up() { dump_logs; die "$1 (lab left up for inspection; run: $ME down)"; }

start_host() { # X: dbus-daemon, then avahi-daemon (a bus client), in namespace X
  local x=$1 d reflect=no; d=$(host_dir "$x")
  [ "$x" = R ] && reflect=yes   # the router: mDNS reflected between its two veths, nowhere else
  mkdir -p "$d/run-dbus" "$d/run-avahi"
  start_bg "$d/dbus.pid" dbus-daemon "$d/dbus.log" "$SELF" exec "$x" dbus-daemon --system --nofork
  avahi_conf "$PREFIX-$(echo "$x" | tr A-Z a-z)" "$(lab_interfaces "$x")" "$FAMILY" "$reflect" >"$d/avahi-daemon.conf"
  DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr "$x") wait_daemon "$d/dbus.pid" 10 bus_up || fail_up "dbus-daemon in $(ns "$x") did not come up"
  start_bg "$d/avahi.pid" avahi-daemon "$d/avahi.log" \
    "$SELF" exec "$x" avahi-daemon -f "$d/avahi-daemon.conf" --no-drop-root --no-chroot
}

# Prove mDNS works across the veth: publish in A, resolve from B (remote) and from A (local
# registrations must be visible to other processes on the same host, too).
check_lab() {
  local pub="$STATE/check-publish.pid" x want=$ADDR_A
  [ "$FAMILY" = ipv6ll ] && want=$(link_local A)
  start_bg "$pub" avahi-publish "$STATE/check-publish.log" \
    "$SELF" exec A avahi-publish -s lab-check _p2plabcheck._tcp 9 check=1
  for x in B A; do
    wait_for 10 sh -c '"$1" exec "$2" timeout 5 avahi-browse -rpt _p2plabcheck._tcp 2>/dev/null | grep -q "^=;.*;lab-check;.*;$3;9;"' \
      sh "$SELF" "$x" "$want" || { stop_pidfile "$pub"; fail_up "host $x did not resolve A's test service to $want"; }
  done
  stop_pidfile "$pub" >/dev/null
  say "check ok: a service published in A resolves to $want from B and from A"
}

hosts() {
  if [ "$ROUTER" = 1 ]; then echo A B R
  else echo A B C D E F | cut -d' ' -f1-"$HOSTS"; fi
}

# The segment of P2P_LAB_HOSTS>2: a bridge in namespace S, one port per host, each host's veth on it.
up_switch() {
  local x n=0
  ip netns add "$(ns S)"
  ip -n "$(ns S)" link add "${PREFIX}br" type bridge
  # Every port gets every multicast packet (no IGMP snooping to wait for).
  ip -n "$(ns S)" link set "${PREFIX}br" type bridge mcast_snooping 0
  ip -n "$(ns S)" link set "${PREFIX}br" up
  for x in $(hosts); do
    n=$((n + 1))
    [ "$x" = A ] || [ "$x" = B ] || ip netns add "$(ns "$x")"
    ip link add "$(veth "$x")" netns "$(ns "$x")" type veth peer name "${PREFIX}s$x" netns "$(ns S)"
    ip -n "$(ns S)" link set "${PREFIX}s$x" master "${PREFIX}br"
    ip -n "$(ns S)" link set "${PREFIX}s$x" up
    if [ "$x" != A ] && [ "$x" != B ]; then
      ip -n "$(ns "$x")" addr add "10.213.7.$n/24" dev "$(veth "$x")"
      ip netns exec "$(ns "$x")" sysctl -qw "net.ipv6.conf.$(veth "$x").disable_ipv6=1"
      ip -n "$(ns "$x")" link set lo up
      ip -n "$(ns "$x")" link set "$(veth "$x")" up
    fi
  done
}

# The router topology's links (P2P_LAB_ROUTER=1): A <-> R and R <-> B, R forwarding IPv4 between them.
# up() then gives A and B their addresses and sets their veths up as usual.
up_router() {
  local x
  ip netns add "$(ns R)"
  ip link add "$(veth A)" netns "$(ns A)" type veth peer name "$(rveth A)" netns "$(ns R)"
  ip link add "$(veth B)" netns "$(ns B)" type veth peer name "$(rveth B)" netns "$(ns R)"
  ip -n "$(ns R)" addr add "$ROUTER_A/24" dev "$(rveth A)"
  ip -n "$(ns R)" addr add "$ROUTER_B/24" dev "$(rveth B)"
  for x in A B; do
    ip netns exec "$(ns R)" sysctl -qw "net.ipv6.conf.$(rveth $x).disable_ipv6=1"
    ip -n "$(ns R)" link set "$(rveth $x)" up
  done
  ip -n "$(ns R)" link set lo up
  # Forwarding is per namespace: only R's is switched on, the root namespace's is untouched.
  ip netns exec "$(ns R)" sysctl -qw net.ipv4.ip_forward=1
}
# Once A's and B's veths are up with their addresses: each reaches the other's subnet via R.
route_router() {
  ip -n "$(ns A)" route add "$NET2" via "$ROUTER_A" dev "$(veth A)"
  ip -n "$(ns B)" route add "$NET" via "$ROUTER_B" dev "$(veth B)"
}

has_link_local() { [ -n "$(link_local "$1")" ]; }
# link_local X: host X's fe80:: address on its veth (no scope).
link_local() {
  ip -n "$(ns "$1")" -6 -o addr show dev "$(veth "$1")" scope link | awk '{print $4}' | cut -d/ -f1 | head -n 1
}

up() {
  need_root up
  down >/dev/null   # leftovers of a previous run
  # Blackhole the lab subnet in the root namespace first, so lab traffic can never be routed out.
  ip route replace blackhole "$NET"
  ip route replace blackhole "$NET2"
  ip netns add "$(ns A)"; ip netns add "$(ns B)"
  if [ "$ROUTER" = 1 ]; then
    up_router
  elif [ "$HOSTS" -gt 2 ]; then
    up_switch
  else
    ip link add "$(veth A)" netns "$(ns A)" type veth peer name "$(veth B)" netns "$(ns B)"
  fi
  if [ "$FAMILY" != ipv6ll ]; then
    ip -n "$(ns A)" addr add "$ADDR_A/24" dev "$(veth A)"
    ip -n "$(ns B)" addr add "$ADDR_B/24" dev "$(veth B)"
  fi
  if [ "$LINKS" = 2 ]; then
    ip link add "$(veth2 A)" netns "$(ns A)" type veth peer name "$(veth2 B)" netns "$(ns B)"
    ip -n "$(ns A)" addr add "$ADDR2_A/24" dev "$(veth2 A)"
    ip -n "$(ns B)" addr add "$ADDR2_B/24" dev "$(veth2 B)"
    for x in A B; do
      [ "$FAMILY" = ipv4 ] && ip netns exec "$(ns $x)" sysctl -qw "net.ipv6.conf.$(veth2 $x).disable_ipv6=1"
      ip -n "$(ns $x)" link set "$(veth2 $x)" up
    done
  fi
  for x in A B; do
    if [ "$FAMILY" = ipv4 ]; then
      # An IPv4 network: no IPv6 at all on the lab links, as before p2p spoke IPv6.
      ip netns exec "$(ns $x)" sysctl -qw "net.ipv6.conf.$(veth $x).disable_ipv6=1"
    else
      # Link-local IPv6 usable at once: no duplicate-address wait on a cable of two.
      ip netns exec "$(ns $x)" sysctl -qw "net.ipv6.conf.$(veth $x).accept_dad=0"
    fi
    ip -n "$(ns $x)" link set lo up       # for 127.0.0.1 inside the host; avahi does not use it
    ip -n "$(ns $x)" link set "$(veth $x)" up
  done
  [ "$ROUTER" = 1 ] && route_router
  if [ "$FAMILY" != ipv4 ]; then
    for x in A B; do
      wait_for 10 has_link_local "$x" || fail_up "no link-local IPv6 address on $(veth $x)"
    done
  fi
  [ -n "${P2P_LAB_STATE:-}" ] || private_dir "$LAB_ROOT"
  private_dir "$STATE"
  mkdir -p /run/avahi-daemon   # the bind-mount target must exist
  for x in $(hosts); do start_host "$x"; done
  for x in $(hosts); do
    DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr $x) wait_daemon "$(host_dir $x)/avahi.pid" 20 avahi_running || fail_up "avahi-daemon in $(ns $x) did not reach state 2 (running)"
  done
  if [ "$ROUTER" = 1 ]; then
    say "up (router): $(ns A) ($ADDR_A, $(bus_addr A)) <-> $(ns R) ($ROUTER_A | $ROUTER_B, avahi reflector) <-> $(ns B) ($ADDR_B, $(bus_addr B))"
  elif [ "$HOSTS" -gt 2 ]; then
    say "up ($HOSTS hosts on one segment): $(for x in $(hosts); do printf '%s ' "$(ns "$x")"; done)(10.213.7.1 to .$HOSTS)"
  elif [ "$FAMILY" = ipv6ll ]; then
    say "up ($FAMILY): $(ns A) ($(link_local A)%$(veth A), $(bus_addr A)) <-> $(ns B) ($(link_local B)%$(veth B), $(bus_addr B))"
  else
    say "up ($FAMILY): $(ns A) ($ADDR_A, $(bus_addr A)) <-> $(ns B) ($ADDR_B, $(bus_addr B))"
  fi
  check_lab
}

down() {
  local f x n pids
  # Stop our daemons by recorded PID (checked: recorded_pid); avahi before the bus it is a client of.
  if existing_private_dir "$STATE"; then
    for f in "$STATE/check-publish.pid" "$STATE"/*/avahi.pid "$STATE"/*/dbus.pid; do stop_pidfile "$f"; done
  fi
  for x in A B C D E F R S; do   # R: the router (P2P_LAB_ROUTER=1); C to F and the switch S: P2P_LAB_HOSTS>2
    n=$(ns $x)
    ns_exists $x || continue
    pids=$(ip netns pids "$n" || true)
    # Not ours to kill (e.g. clients started via 'exec'), but they keep the namespace alive.
    [ -z "$pids" ] || say "warning: processes still running in $n (stop them yourself): $(echo $pids)"
    ip netns del "$n" && say "deleted namespace $n"
  done
  # The veth normally dies with its namespace; this catches one left in the root namespace.
  ip link del "$(veth A)" 2>/dev/null || true
  ip link del "$(veth2 A)" 2>/dev/null || true
  ip link del "$(veth B)" 2>/dev/null || true
  rm -rf "$STATE"
  # Labs with other prefixes share the subnet (each in its own namespaces); the blackhole stays
  # while any of them is up.
  if ls /run/netns 2>/dev/null | grep -Eq '^[a-zA-Z0-9_-]+[AB]$' && ip netns list | grep -q .; then
    say "blackhole route $NET kept: other namespaces exist"
  else
    ip route del blackhole "$NET" 2>/dev/null && say "removed blackhole route $NET" || true
    ip route del blackhole "$NET2" 2>/dev/null || true
  fi
}

status() {
  local x n f
  existing_private_dir "$STATE" || true
  for x in A B R; do
    n=$(ns $x)
    if ! ns_exists $x; then [ "$x" = R ] || say "$n: absent"; continue; fi
    if [ "$x" = R ]; then say "$n (router): $(ip -n "$n" -br -4 addr show | grep -v '^lo ' | tr -s ' \n' ' ')"
    else say "$n: $(ip -n "$n" -br -4 addr show dev "$(veth $x)" 2>/dev/null || echo 'no veth')"; fi
    for f in "$(host_dir $x)"/*.pid; do [ -f "$f" ] && say "  started: $(cat "$f")"; done
    if DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr $x) avahi_running; then say "  avahi running; $(do_env $x)"
    else say "  avahi NOT running"; fi
  done
  [[ "$(ip route show type blackhole)" == *"$NET"* ]] && say "blackhole route $NET present" || say "no blackhole route"
}

restart_avahi() { # X [--kill]
  local x=$1 how=${2:-} d pid name stopped
  check_host "$x"; ns_exists "$x" || die "lab is not up (run: $ME up)"
  d=$(host_dir "$x")
  existing_private_dir "$STATE" || die "lab is not up (run: $ME up)"
  [ -f "$d/avahi.pid" ] || die "no avahi-daemon recorded for host $x"
  pid=$(recorded_pid "$d/avahi.pid") || die "the avahi-daemon recorded for host $x is not running (or its pid file names another process)"
  if [ "$how" = --kill ]; then
    kill -KILL "$pid"
    rm -f "$d/avahi.pid"
  else
    stop_pidfile "$d/avahi.pid" >/dev/null
  fi
  # Until the old daemon is reaped, the new one sees its PID in avahi's own pid file, alive to
  # kill(pid, 0) as a zombie, and refuses to start ("already running"): wait for it to vanish.
  while [ -e "/proc/$pid" ]; do sleep 0.05; done
  stopped=$(date +%s.%N)
  # A daemon killed with -9 leaves its pid file and socket behind; avahi removes stale ones itself.
  start_bg "$d/avahi.pid" avahi-daemon "$d/avahi.log" \
    "$SELF" exec "$x" avahi-daemon -f "$d/avahi-daemon.conf" --no-drop-root --no-chroot
  DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr "$x") wait_daemon "$d/avahi.pid" 20 avahi_running || { dump_logs; die "avahi-daemon in $(ns "$x") did not come back"; }
  echo "stopped_at=$stopped running_at=$(date +%s.%N)"
}

do_env() { check_host "${1:-}"; echo "DBUS_SYSTEM_BUS_ADDRESS=$(bus_addr "$1")"; }

case "${1:-}" in
  up) up ;;
  down) need_root down; down ;;
  status) status ;;
  exec) shift; do_exec "$@" ;;
  env) do_env "${2:-}" ;;
  restart-avahi) need_root restart-avahi; restart_avahi "${2:-}" "${3:-}" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
