#!/usr/bin/env python3
"""Idle and slow clients of p2p's LocalSend HTTPS port: each waits for the server to close its connection
(the event), and prints how long that took.

usage: slow_http.py HOST PORT [LIMIT_SECONDS]
  half-header  TLS made, then half a request head ("POST ... HTTP/1.1\\r\\nHost: x\\r\\nContent-Le"), then silence
  half-body    TLS made, a whole head announcing 100 bytes of JSON, 10 of them, then silence
  silent-tcp   a TCP connection that never starts TLS
Prints one line per case: `closed NAME SECONDS` or `open NAME` (still open after LIMIT_SECONDS, default 90).
"""
import socket
import ssl
import sys
import threading
import time

host, port = sys.argv[1], int(sys.argv[2])
limit = float(sys.argv[3]) if len(sys.argv) > 3 else 90.0
results = {}


def wait_for_close(name, sock, started):
    sock.settimeout(limit)
    try:
        while sock.recv(4096):
            pass  # an error response before the close is fine: the close is what counts
        results[name] = time.monotonic() - started
    except (socket.timeout, TimeoutError):
        results[name] = None
    except (ConnectionResetError, ssl.SSLError, OSError):
        results[name] = time.monotonic() - started


def tls(name, first):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((host, port), timeout=10)
    sock = context.wrap_socket(raw, server_hostname=host)
    sock.sendall(first)
    wait_for_close(name, sock, time.monotonic())  # from the last byte sent


def silent():
    sock = socket.create_connection((host, port), timeout=10)
    wait_for_close("silent-tcp", sock, time.monotonic())


cases = [
    threading.Thread(target=tls, args=("half-header", b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\nContent-Le")),
    threading.Thread(target=tls, args=("half-body", b"POST /api/localsend/v2/prepare-upload HTTP/1.1\r\nHost: x\r\n"
                                                    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"info\": {")),
    threading.Thread(target=silent),
]
for case in cases:
    case.start()
for case in cases:
    case.join()
for name in ("half-header", "half-body", "silent-tcp"):
    seconds = results.get(name)
    print(f"closed {name} {seconds:.1f}" if seconds is not None else f"open {name}", flush=True)
