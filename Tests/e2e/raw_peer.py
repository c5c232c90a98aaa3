#!/usr/bin/env python3
"""A minimal p2p protocol client for misbehaving on purpose (Tests/e2e/bad_input.sh, security.sh).

usage: raw_peer.py HOST PORT SCENARIO [--session S] [--timeout SECONDS] [--plaintext] [--claim HEX]
                  [--names JSON-LIST] [--name NAME] [--type MEDIA-TYPE] [--data-file PATH] [--extra N]
                  [--reason TEXT] [--count N] [--hold SECONDS] [--hold-file PATH] [--identity DIR] [--cut N]
                  [--peer-name NAME]
                  [--total N] [--size N] [--entries JSON-LIST]

By default it speaks TLS 1.3 like a real peer: a fresh P-256 key and self-signed certificate per run,
presented as the client certificate (--peer-name NAME: the HELLO's display name, default raw-SCENARIO;
--identity DIR: the key and certificate kept in DIR, made there on
first use, so that several runs are one peer); the server's (self-signed) certificate is not verified, only
recorded. Our peer ID is the first 16 bytes of SHA-256 over our SubjectPublicKeyInfo DER, and our HELLO
claims it and carries a random 32-byte datagram key. --plaintext speaks the old plaintext protocol
(what `p2p --insecure` speaks): no TLS, HELLO without a datagram key.

Prints one JSON object: {"scenario", "tls", "tls_version", "our_id", "server_cert_id", "server_hello",
"received": [frame types], "bytes_received": int (after TLS decryption), "error_code": int|null,
"error_reason": str|null, "closed_by_server": bool, "tls_error": str|null, "elapsed": seconds, "note": str}.
"closed_by_server" is true when the server closed the connection (EOF, reset or TLS alert) after what
we sent. "server_cert_id" is the peer ID the server's certificate proves; "server_hello" is what the
server's HELLO claims ({"id", "name", "session", "datagram_key_len"}), when one arrived.

Scenarios:
  hello           valid handshake only, then leave with BYE (sanity check)
  huge            valid handshake, then a frame header announcing 0xffffffff payload bytes  -> ERROR 4
  garbage         random bytes (first byte is never the magic 0x50) instead of a HELLO       -> ERROR 2
  truncated       valid handshake, half a TEXT frame, then close our side (no assertion on the answer)
  version2        a HELLO frame with protocol version 2                                      -> ERROR 3
  unknown         valid handshake, then a frame of type 0x7f                                 -> ERROR 5
  badutf8         valid handshake, then a TEXT whose text is not UTF-8                       -> ERROR 6
  silent          connect (and with TLS: complete the TLS handshake) and send nothing
                  TLS: -> ERROR 10; --plaintext against a TLS server: closed after ~10 s, no ERROR
  impostor        TLS, then a HELLO claiming another peer's ID (--claim HEX, default random)  -> ERROR 13
  nokey           TLS, then a HELLO without a datagram key (length 0)                         -> ERROR 6
  plaintext-hello a plaintext HELLO (implies --plaintext) against a TLS server          -> plaintext ERROR 14
  tls12           offer at most TLS 1.2                                     -> TLS handshake fails
  nocert          TLS 1.3 without a client certificate                      -> refused by a TLS alert

Hostile scenarios (Tests/e2e/hostile.sh):
  pingflood       valid handshake, then --count PINGs (default 200000) while reading nothing; then holds the
                  connection, still reading nothing, for --hold seconds or until --hold-file exists
                  ("sent" in the report: how many went out)
  offerflood      valid handshake, then --count OFFERs of 16-byte files (never sent), reading nothing; holds as pingflood
  textflood       valid handshake, then --count chat lines (TEXT, ~90 bytes), reading nothing; holds as pingflood
  error-reason    valid handshake, then ERROR 1 whose reason is --reason (escape sequences and all)
  cancel-reason   valid handshake, then an OFFER of --name (16 bytes); on ACCEPT a CANCEL whose reason is --reason

File transfer scenarios (CHANNEL frames, type 0x52, of purpose file or tree; see Protocol/TRANSFER.md,
"Channels"; the step names below are the file's: OFFER is OPEN, CHUNK is DATA, DONE is END). They add "transfers":
[{"name", "id", "reply" (ACCEPT, DENY, CANCEL or null), "reason", "offset", "result"}] to the report.
  offers          valid handshake, then one OFFER per name of --names (a JSON list, so control characters
                  can be given as \u001b), 16 bytes each, waiting for each answer; an ACCEPT is cancelled
                  at once. For hostile names                                        -> DENY each
  send            valid handshake, then a whole transfer of --data-file (default: 1 KiB of text) offered
                  as --name (default file.bin) of type --type (default application/octet-stream): OFFER,
                  on ACCEPT: START(0), CHUNKs, DONE(SHA-256), then waits for RESULT. With --extra N it
                  sends N bytes more than it offered before DONE              -> CANCEL, connection closed
                  With --cut N it leaves (closes the connection) after N bytes instead, as a killed sender
                  would, leaving NAME.part behind for a resume.
  older-offer     valid handshake, then an OFFER of --name (16 bytes) as p2p before channels sent it: a TRANSFER
                  frame (type 0x50: kind 1, ID, size, path, media type)       -> DENY in that layout, naming the version
  older-chat      valid handshake as p2p before channels (give --caps 61: text, transferTrees, byteStreams), then
                  stays, answering PINGs, until the first chat line (TEXT) arrives, --hold-file exists or the
                  timeout passes; "received" lists every frame type that arrived (a TRANSFER, STREAM or CHANNEL
                  among them: something was offered to it; frames arrive in order, so all before the TEXT)
  stream-probe    valid handshake, then (1) an older p2p's STREAM OPEN (type 0x51, kind 1)       -> DENY, type 0x51
                  (2) a CHANNEL OPEN of purpose stream                                           -> DENY and reason
                  (3) DATA on that stream, which nobody accepted               -> CANCEL, connection closed
                  "transfers": [{"name": "older-open"|"open"|"data", "id", "type", "reply", "reason"}]
  push            valid handshake, then a CHUNK for a transfer nobody offered or accepted
                                                                              -> CANCEL, connection closed
  tree-lie        valid handshake, then a TREE_OFFER whose total is --total (default 1024) with one file entry
                  --name of --size bytes (default 64 MiB): the lie of issue 21. If the receiver accepts, all
                  --size bytes are sent (FILE, CHUNKs, FILE_DONE, TREE_END) and TREE_RESULT is waited for
                                                                              -> DENY, nothing written
  tree            valid handshake, then an honest tree of --entries (a JSON list of [path, mode, size]; size
                  null for a directory; @FILE: read from FILE) with random bytes: every file as FILE,
                  CHUNKs, FILE_DONE (no COMPARE: a file held whole is sent again; --small yes: files of at
                  most 15,360 bytes packed into SMALL frames instead), then TREE_END;
                  "tree_result" in the report: {"verified", "already", "failures": [[index, reason]]},
                  the transfer's "held_files": [[index, state (1 whole, 2 partial), length, sha256 hex]]
  window-overrun  valid handshake, then a tree of --count files of --size bytes (hostile_window.sh: 65536 of 4096),
                  sent as SMALL frames as fast as the link takes them, never waiting for an ACK (the receiver's
                  disk, one file at a time, is far slower); then reads until CANCEL, TREE_RESULT or the close.
                  "sent" in the report: the data bytes that went out   -> CANCEL "DATA beyond the window: …", close
  text-cancel     valid handshake, then --count texts (OPEN of a 10-byte text/vnd.p2p.text) each followed
                  by CANCEL; --partial yes: each waits for its answer and, accepted, gets START and 5 bytes
                  before the CANCEL; --partial hold: the same without the CANCEL, then holds as pingflood. Our HELLO announces --caps (hex, default 181: text, channels,
                  comparesHeldFiles)

Records scenarios (Protocol/RECORDS.md §4). They add "records": [{...}] to the report.
  records-corrupt valid handshake, then a records channel (CHANNEL purpose 4):
                  OPEN, on ACCEPT one DATA and an END whose SHA-256 is not the data's
                  -> RESULT verified 0, and no OUTCOME: [{"reply" (ACCEPT, DENY, CANCEL), "verified", "reason", "outcome"}]
  older-records   valid handshake, then a snapshot OFFER as p2p before record channels sent it: a RECORDS frame
                  (type 0x40: kind 1, transfer ID, flags, size, records, entities)
                  -> DENY in that layout, naming the version: [{"type" (RECORDS), "reply" (DENY), "reason"}]
  older-records-listen  the acceptor's side (HOST PORT: where to listen) of p2p before record channels (give
                  --caps 181: channels and comparesHeldFiles, without recordChannels): takes one connection,
                  HELLO, WELCOME, then records every frame until BYE, ERROR or the close ("received": a
                  CHANNEL or RECORDS there means something was sent to it). Once it listens, it says
                  "listening on HOST:PORT" on stderr
"""
import hashlib
import json
import os
import random
import shutil
import socket
import ssl
import struct
import sys
import tempfile
import time

MAGIC = b"P2"
HELLO, WELCOME, ERROR, PING, PONG, BYE, DATA, TEXT, TRANSFER, STREAM, CHANNEL = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x50, 0x51, 0x52
NAMES = {HELLO: "HELLO", WELCOME: "WELCOME", ERROR: "ERROR", PING: "PING", PONG: "PONG", BYE: "BYE", DATA: "DATA", TEXT: "TEXT",
         TRANSFER: "TRANSFER", STREAM: "STREAM", CHANNEL: "CHANNEL"}
# CHANNEL purposes and kinds (a file's OPEN is its OFFER, DATA its CHUNK, END its DONE; a tree's OPEN and
# ACCEPT are TREE_OFFER and TREE_ACCEPT here)
P_FILE, P_TREE, P_STREAM, P_RECORDS = 1, 2, 3, 4
OFFER, ACCEPT, DENY, START, CHUNK, ACK, DONE, RESULT, CANCEL = range(1, 10)
TREE_OFFER, TREE_ACCEPT = OFFER, ACCEPT
ENTRIES, HELD, T_FILE, FILE_DONE, T_SKIP, SMALL, TREE_END, TREE_RESULT = range(16, 24)
TEXT_TYPE = "text/vnd.p2p.text; charset=utf-8"
# What our HELLO announces: text (bit 0), channels (bit 7) and comparesHeldFiles (bit 8), without which a
# p2p receiver denies trees; --caps HEX changes it.
CAPABILITIES = 0x181
KINDS = {OFFER: "OFFER", ACCEPT: "ACCEPT", DENY: "DENY", START: "START", CHUNK: "CHUNK", ACK: "ACK", DONE: "DONE",
         RESULT: "RESULT", CANCEL: "CANCEL", HELD: "HELD", TREE_RESULT: "TREE_RESULT", 25: "COMPARED"}
MAX_CHUNK = 60 * 1024
RECORDS = 0x40
# RECORDS kinds
R_OFFER, R_ACCEPT, R_DENY, R_CHUNK, R_ACK, R_END, R_RESULT = range(1, 8)
# A records channel's own step (purpose 4, Protocol/RECORDS.md §4)
R_OUTCOME = 32
NAMES[RECORDS] = "RECORDS"


def frame(ftype, payload=b"", version=1, flags=0, length=None):
    return MAGIC + struct.pack(">BBHI", version, ftype, flags, len(payload) if length is None else length) + payload


def short_string(s):
    b = s.encode("utf-8")
    return struct.pack(">H", len(b)) + b


def hello_payload(peer_id, name, session, datagram_key):
    """HELLO: peerID(16) capabilities(u32) datagramPort(u16) datagramToken(u64) keyLength(u8) key name session."""
    return (peer_id + struct.pack(">IHQ", CAPABILITIES, 0, random.getrandbits(64))
            + struct.pack(">B", len(datagram_key)) + datagram_key
            + short_string(name) + short_string(session))


def transfer(kind, tid, body=b"", purpose=P_FILE):
    """A CHANNEL frame: kind u8, purpose u8, channel ID u64, then the kind's fields."""
    return frame(CHANNEL, struct.pack(">BBQ", kind, purpose, tid) + body)


def tree(kind, tid, body=b""):
    """A CHANNEL frame of a tree."""
    return transfer(kind, tid, body, P_TREE)


def offer(tid, path, size, media_type):
    return transfer(OFFER, tid, struct.pack(">Q", size) + short_string(path) + short_string(media_type))


def parse_transfer(payload):
    """(kind name, channel ID, fields) of a CHANNEL payload."""
    kind, purpose, tid = struct.unpack(">BBQ", payload[:10])
    rest = payload[10:]
    fields = {}
    if kind == ACCEPT and purpose == P_TREE:
        return "TREE_ACCEPT", tid, {"held": struct.unpack(">Q", rest[:8])[0]}
    if kind == ACCEPT:
        fields = {"offset": struct.unpack(">Q", rest[:8])[0], "prefix": rest[8:40].hex()}
    elif kind in (DENY, CANCEL):
        n = struct.unpack(">H", rest[:2])[0]
        fields = {"reason": rest[2:2 + n].decode("utf-8", "replace")}
    elif kind == ACK:
        fields = {"written": struct.unpack(">Q", rest[:8])[0]}
    elif kind == HELD:
        fields = {"held": [[i, state, length, rest[off + 13:off + 45].hex()]
                           for off in range(0, len(rest), 45) for i, state, length in [struct.unpack(">IBQ", rest[off:off + 13])]]}
    elif kind == RESULT:
        fields = {"verified": rest[0] == 1, "sha256": rest[1:33].hex()}
    elif kind == TREE_RESULT:
        verified, already, count = struct.unpack(">III", rest[:12])
        off, failures = 12, []
        for _ in range(count):
            index, n = struct.unpack(">IH", rest[off:off + 6])
            failures.append([index, rest[off + 6:off + 6 + n].decode("utf-8", "replace")])
            off += 6 + n
        fields = {"verified": verified, "already": already, "failures": failures}
    return KINDS.get(kind, str(kind)), tid, fields


def tree_entries(first, entries):
    """ENTRIES: first index u32, then per entry kind u8 (0 file, 1 directory), mode u16, size u64, path str16."""
    body = struct.pack(">I", first)
    for path, mode, size in entries:
        body += struct.pack(">BHQ", 1 if size is None else 0, mode, size or 0) + short_string(path)
    return body


def send_tree_file(c, tid, index, data):
    """FILE(index, 0), CHUNKs, FILE_DONE(index, SHA-256)."""
    c.send(tree(T_FILE, tid, struct.pack(">IQ", index, 0)))
    for off in range(0, len(data), MAX_CHUNK):
        c.send(tree(CHUNK, tid, struct.pack(">Q", off) + data[off:off + MAX_CHUNK]))
    c.send(tree(FILE_DONE, tid, struct.pack(">I", index) + hashlib.sha256(data).digest()))


def parse_hello(payload):
    try:
        peer_id = payload[:16].hex()
        off = 16 + 4 + 2 + 8
        klen = payload[off]
        off += 1 + klen
        n = struct.unpack(">H", payload[off:off + 2])[0]
        name = payload[off + 2:off + 2 + n].decode("utf-8", "replace")
        off += 2 + n
        n = struct.unpack(">H", payload[off:off + 2])[0]
        session = payload[off + 2:off + 2 + n].decode("utf-8", "replace")
        return {"id": peer_id, "name": name, "session": session, "datagram_key_len": klen}
    except (IndexError, struct.error):
        return {"malformed": payload.hex()}


def spki_peer_id(cert_der):
    """The peer ID a certificate proves: SHA-256 over its SubjectPublicKeyInfo DER, first 16 bytes."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    cert = x509.load_der_x509_certificate(cert_der)
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).digest()[:16]


def make_identity(directory):
    """A fresh P-256 key and a self-signed certificate for it, as PEM files; returns (cert, key, peer ID)."""
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    peer_id = hashlib.sha256(spki).digest()[:16]
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2p " + peer_id.hex())])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path, peer_id


class Conn:
    def __init__(self, host, port, timeout, tls, client_cert=None, tls_max=None, source=None):
        # source: a local address to connect from (e.g. 127.0.0.N), so per-address limits apply per client.
        raw = socket.create_connection((host, port), timeout=10, source_address=(source, 0) if source else None)
        self.buf = b""
        self.timeout = timeout
        self.received = []
        self.bytes_received = 0
        self.error = None
        self.closed = False
        self.tls = tls
        self.tls_version = None
        self.tls_error = None
        self.server_cert_id = None
        self.server_hello = None
        self.sock = raw
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE  # self-signed: who it is gets checked by the peer ID
            if tls_max is not None:
                ctx.maximum_version = tls_max
            else:
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
            if client_cert:
                ctx.load_cert_chain(client_cert[0], client_cert[1])
            try:
                self.sock = ctx.wrap_socket(raw, server_hostname=None)
            except (ssl.SSLError, OSError) as e:
                self.tls_error = "handshake: %s" % e
                self.closed = True
                raw.close()
                return
            self.tls_version = self.sock.version()
            der = self.sock.getpeercert(binary_form=True)
            if der:
                self.server_cert_id = spki_peer_id(der).hex()

    @classmethod
    def accepting(cls, host, port, timeout, cert, key):
        """The acceptor's side: listens on HOST:PORT, takes one connection and speaks TLS 1.3 as its server
        with our certificate (the client's is not asked for: who it is, is its HELLO's business)."""
        listener = socket.create_server((host, port))
        listener.settimeout(timeout)
        print("listening on %s:%d" % (host, port), file=sys.stderr, flush=True)  # what a script waits for
        try:
            raw, _ = listener.accept()
        finally:
            listener.close()
        c = cls.__new__(cls)
        c.buf, c.timeout, c.received, c.bytes_received, c.error, c.closed = b"", timeout, [], 0, None, False
        c.tls, c.tls_error, c.server_cert_id, c.server_hello = True, None, None, None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.load_cert_chain(cert, key)
        try:
            c.sock = ctx.wrap_socket(raw, server_side=True)
            c.tls_version = c.sock.version()
        except (ssl.SSLError, OSError) as e:
            c.sock, c.tls_version, c.tls_error, c.closed = raw, None, "handshake: %s" % e, True
        return c

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        """Reads more bytes; False on EOF/reset/timeout (closed is set on EOF/reset/TLS alert)."""
        if self.closed:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ssl.SSLZeroReturnError:  # close_notify
            self.closed = True
            return False
        except ssl.SSLError as e:  # an alert, or EOF without close_notify
            self.tls_error = self.tls_error or str(e)
            self.closed = True
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.closed = True
            return False
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        self.bytes_received += len(chunk)
        return True

    def read_frame(self, deadline):
        while True:
            if len(self.buf) >= 10:
                if self.buf[:2] != MAGIC:
                    raise ValueError("server sent bad magic: %r" % self.buf[:10])
                version, ftype, flags, length = struct.unpack(">BBHI", self.buf[2:10])
                if len(self.buf) >= 10 + length:
                    payload = self.buf[10:10 + length]
                    self.buf = self.buf[10 + length:]
                    self.received.append(NAMES.get(ftype, hex(ftype)))
                    if ftype == ERROR and len(payload) >= 4:
                        code, n = struct.unpack(">HH", payload[:4])
                        self.error = (code, payload[4:4 + n].decode("utf-8", "replace"))
                    if ftype == HELLO and self.server_hello is None:
                        self.server_hello = parse_hello(payload)
                    return ftype, payload
            if not self._fill(deadline):
                return None, None

    def wait_for(self, wanted, deadline):
        """Reads frames until one of type `wanted` (answering PINGs); None if the connection ended first."""
        while True:
            ftype, payload = self.read_frame(deadline)
            if ftype is None or ftype == wanted:
                return ftype
            if ftype == PING:
                self.send(frame(PONG, payload))
            if ftype == ERROR:
                return ftype

    def wait_transfer(self, tid, deadline, skip=("ACK",)):
        """The next CHANNEL message about channel `tid` (kinds in `skip` are passed over), answering PINGs;
        (None, {}) if the connection ended or an ERROR came first."""
        while True:
            ftype, payload = self.read_frame(deadline)
            if ftype is None or ftype == ERROR:
                return None, {}
            if ftype == PING:
                self.send(frame(PONG, payload))
            if ftype == CHANNEL:
                kind, got, fields = parse_transfer(payload)
                if got == tid and kind not in skip:
                    return kind, fields

    def drain(self, deadline):
        """Reads until the server closes (or the deadline passes)."""
        while not self.closed:
            ftype, _ = self.read_frame(deadline)
            if ftype is None:
                break


def main():
    args = sys.argv[1:]
    session, timeout, plaintext, claim = "chat", 15.0, False, None
    opts = {"names": "[]", "name": "file.bin", "type": "application/octet-stream", "data-file": None, "extra": "0",
            "reason": "", "count": "200000", "hold": "0", "hold-file": None, "identity": None, "cut": None,
            "total": "1024", "size": str(64 << 20), "entries": "[]", "peer-name": None, "caps": None, "partial": None, "small": None}
    for key in list(opts):
        if "--" + key in args:
            i = args.index("--" + key); opts[key] = args[i + 1]; del args[i:i + 2]
    if "--session" in args:
        i = args.index("--session"); session = args[i + 1]; del args[i:i + 2]
    if "--timeout" in args:
        i = args.index("--timeout"); timeout = float(args[i + 1]); del args[i:i + 2]
    if "--claim" in args:
        i = args.index("--claim"); claim = bytes.fromhex(args[i + 1]); del args[i:i + 2]
    if "--plaintext" in args:
        args.remove("--plaintext"); plaintext = True
    if len(args) != 3:
        sys.exit(__doc__)
    if opts["caps"]:
        global CAPABILITIES
        CAPABILITIES = int(opts["caps"], 16)
    if opts["entries"].startswith("@"):
        with open(opts["entries"][1:]) as f:
            opts["entries"] = f.read()
    host, port, scenario = args[0], int(args[1]), args[2]
    if scenario == "plaintext-hello":
        plaintext = True
    tls = not plaintext
    tmp = tempfile.mkdtemp(prefix="raw_peer.")
    try:
        if tls and opts["identity"]:
            os.makedirs(opts["identity"], exist_ok=True)
            cert, key = os.path.join(opts["identity"], "cert.pem"), os.path.join(opts["identity"], "key.pem")
            if not os.path.exists(cert):
                make_identity(opts["identity"])
            from cryptography import x509
            with open(cert, "rb") as f:
                from cryptography.hazmat.primitives import serialization
                our_id = spki_peer_id(x509.load_pem_x509_certificate(f.read()).public_bytes(serialization.Encoding.DER))
        elif tls:
            cert, key, our_id = make_identity(tmp)
        else:
            cert, key, our_id = None, None, os.urandom(16)
        datagram_key = os.urandom(32) if tls else b""
        start = time.monotonic()
        deadline = start + timeout
        client_cert = None if scenario == "nocert" else (cert, key)
        tls_max = ssl.TLSVersion.TLSv1_2 if scenario == "tls12" else None
        if scenario == "older-records-listen":
            c = Conn.accepting(host, port, timeout, cert, key)
        else:
            c = Conn(host, port, timeout, tls, client_cert, tls_max)
        if c.tls_error:  # the TLS handshake failed: nothing more to do
            return report(c, scenario, start, our_id, "TLS handshake failed")
        return run(c, scenario, session, our_id, datagram_key, claim, start, deadline, opts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(c, scenario, session, our_id, datagram_key, claim, start, deadline, opts=None):
    note = ""
    c.transfers = []
    name = (opts or {}).get("peer-name") or "raw-" + scenario

    def hello(peer_id=our_id, key=datagram_key, version=1):
        return frame(HELLO, hello_payload(peer_id, name, session, key), version=version)

    def handshake():
        c.send(hello())
        got = c.wait_for(WELCOME, deadline)
        if got != WELCOME:
            raise SystemExit(report(c, scenario, start, our_id, "handshake failed: got %s" % (c.received,)))

    if scenario == "hello":
        handshake()
        c.send(frame(BYE))
    elif scenario == "huge":
        handshake()
        c.send(frame(TEXT, b"", length=0xFFFFFFFF))
    elif scenario == "garbage":
        junk = bytearray(os.urandom(64))
        junk[0] = random.choice([b for b in range(256) if b != 0x50])
        c.send(bytes(junk))
    elif scenario == "truncated":
        handshake()
        whole = frame(TEXT, struct.pack(">Qq", 1, int(time.time() * 1000)) + b"never finished")
        c.send(whole[:len(whole) - 5])
        if c.tls:
            # close_notify (the TLS way to close our side); unwrap waits for the server's.
            try:
                c.sock.settimeout(max(0.1, deadline - time.monotonic()))
                c.sock = c.sock.unwrap()
                c.closed = True
            except (ssl.SSLError, OSError) as e:
                note = "unwrap: %s" % e
            return report(c, scenario, start, our_id, note)
        c.sock.shutdown(socket.SHUT_WR)
    elif scenario == "version2":
        c.send(hello(version=2))
    elif scenario == "unknown":
        handshake()
        c.send(frame(0x7F, b"what is this"))
    elif scenario == "badutf8":
        handshake()
        c.send(frame(TEXT, struct.pack(">Qq", 2, int(time.time() * 1000)) + b"ok \xff\xfe\xc3("))
    elif scenario == "impostor":
        other = claim or os.urandom(16)
        note = "claimed %s" % other.hex()
        c.send(hello(peer_id=other))
    elif scenario == "nokey":
        c.send(hello(key=b""))
    elif scenario == "plaintext-hello":
        c.send(hello(key=b""))
    elif scenario == "offers":
        handshake()
        for name in json.loads(opts["names"]):
            tid = random.getrandbits(63) + 1
            c.send(offer(tid, name, 16, "application/octet-stream"))
            reply, fields = c.wait_transfer(tid, deadline)
            c.transfers.append(dict({"name": name, "id": tid, "reply": reply}, **fields))
            if reply == "ACCEPT":
                c.send(transfer(CANCEL, tid, short_string("raw peer: not really sending")))
            if reply is None:
                break
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "send":
        handshake()
        if opts["data-file"]:
            with open(opts["data-file"], "rb") as f:
                data = f.read()
        else:
            data = b"this is plain text, not an image\n" * 32
        extra = int(opts["extra"])
        tid = random.getrandbits(63) + 1
        c.send(offer(tid, opts["name"], len(data), opts["type"]))
        reply, fields = c.wait_transfer(tid, deadline)
        record = dict({"name": opts["name"], "id": tid, "reply": reply, "size": len(data)}, **fields)
        c.transfers.append(record)
        if reply == "ACCEPT" and opts["cut"] is not None:
            # A sender killed mid-way: some bytes, then the connection just ends.
            begin = record["offset"]
            c.send(transfer(START, tid, struct.pack(">Q", begin)))
            cut = int(opts["cut"])
            for off in range(begin, cut, MAX_CHUNK):
                c.send(transfer(CHUNK, tid, struct.pack(">Q", off) + data[off:min(cut, off + MAX_CHUNK)]))
            time.sleep(0.5)  # let the receiver write them before the connection goes
            c.sock.close()
            c.closed = True
            return report(c, scenario, start, our_id, "cut after %d bytes" % cut)
        if reply == "ACCEPT":
            c.send(transfer(START, tid, struct.pack(">Q", 0)))
            payload = data + os.urandom(extra)
            try:
                for off in range(0, len(payload), MAX_CHUNK):
                    c.send(transfer(CHUNK, tid, struct.pack(">Q", off) + payload[off:off + MAX_CHUNK]))
                c.send(transfer(DONE, tid, struct.pack(">Q", len(payload)) + hashlib.sha256(payload).digest()))
            except OSError as e:
                note = "sending: %s" % e
            reply, fields = c.wait_transfer(tid, deadline)
            record["result"] = dict({"reply": reply}, **fields)
            if reply == "RESULT" and not c.closed:
                c.send(frame(BYE))
    elif scenario == "records-corrupt":
        handshake()
        tid = random.getrandbits(63) + 1
        data = b"these bytes will not match the END digest"
        record = {"reply": None, "verified": None, "reason": None, "outcome": None}
        c.records = [record]
        c.send(transfer(OFFER, tid, b"\x00" + struct.pack(">QI", len(data), 1) + short_string("Task"), purpose=P_RECORDS))
        while True:
            ftype, payload = c.read_frame(deadline)
            if ftype is None or ftype == ERROR:
                break
            if ftype == PING:
                c.send(frame(PONG, payload))
            if ftype != CHANNEL or payload[1] != P_RECORDS or struct.unpack(">Q", payload[2:10])[0] != tid:
                continue
            kind, body = payload[0], payload[10:]
            if kind == ACCEPT:
                record["reply"] = "ACCEPT"
                c.send(transfer(CHUNK, tid, struct.pack(">Q", 0) + data, purpose=P_RECORDS))
                c.send(transfer(DONE, tid, struct.pack(">Q", len(data)) + hashlib.sha256(b"something else").digest(), purpose=P_RECORDS))
            elif kind in (DENY, CANCEL):
                record["reply"] = KINDS[kind]
                record["reason"] = body[2:2 + struct.unpack(">H", body[:2])[0]].decode("utf-8", "replace")
                break
            elif kind == RESULT:
                record["verified"] = body[0] == 1
                # An OUTCOME follows only a verified RESULT: wait briefly for one that must not come.
                ftype, payload = c.read_frame(min(deadline, time.monotonic() + 2))
                if ftype == CHANNEL and payload[0] == R_OUTCOME:
                    record["outcome"] = payload[10]
                break
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "older-records-listen":
        # The acceptor's handshake: HELLO, the initiator's HELLO, WELCOME; then every frame is recorded
        # until the initiator leaves (BYE, ERROR or the close).
        c.send(hello())
        if c.wait_for(HELLO, deadline) != HELLO:
            raise SystemExit(report(c, scenario, start, our_id, "handshake failed: got %s" % (c.received,)))
        c.send(frame(WELCOME))
        while True:
            ftype, payload = c.read_frame(deadline)
            if ftype in (None, BYE, ERROR):
                break
            if ftype == PING:
                c.send(frame(PONG, payload))
        if not c.closed:
            try:
                c.send(frame(BYE))
            except OSError:
                pass
    elif scenario == "older-records":
        handshake()
        tid = random.getrandbits(63) + 1
        record = {"type": None, "reply": None, "reason": None}
        c.records = [record]
        c.send(frame(RECORDS, struct.pack(">BQBQI", R_OFFER, tid, 0, 100, 1) + short_string("Task")))
        while True:
            ftype, payload = c.read_frame(deadline)
            if ftype is None or ftype == ERROR:
                break
            if ftype == PING:
                c.send(frame(PONG, payload))
            if ftype in (RECORDS, CHANNEL) and struct.unpack(">Q", payload[1:9])[0] == tid:
                record["type"] = "RECORDS" if ftype == RECORDS else "CHANNEL"
                record["reply"] = {R_ACCEPT: "ACCEPT", R_DENY: "DENY", R_RESULT: "RESULT"}.get(payload[0], str(payload[0]))
                if payload[0] == R_DENY:
                    record["reason"] = payload[11:11 + struct.unpack(">H", payload[9:11])[0]].decode("utf-8", "replace")
                break
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "tree-lie":
        handshake()
        tid = random.getrandbits(63) + 1
        size, total = int(opts["size"]), int(opts["total"])
        c.send(tree(TREE_OFFER, tid, struct.pack(">IQ", 1, total)))
        c.send(tree(ENTRIES, tid, tree_entries(0, [(opts["name"], 0o644, size)])))
        reply, fields = c.wait_transfer(tid, deadline, skip=("ACK", "HELD"))
        record = dict({"name": opts["name"], "id": tid, "reply": reply, "total": total, "size": size}, **fields)
        c.transfers.append(record)
        if reply == "TREE_ACCEPT":
            try:
                send_tree_file(c, tid, 0, os.urandom(size))
                c.send(tree(TREE_END, tid))
            except OSError as e:
                note = "sending: %s" % e
            reply, fields = c.wait_transfer(tid, deadline)
            record["result"] = dict({"reply": reply}, **fields)
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "tree":
        handshake()
        tid = random.getrandbits(63) + 1
        entries = [(path, mode, size) for path, mode, size in json.loads(opts["entries"])]
        total = sum(size or 0 for _, _, size in entries)
        c.send(tree(TREE_OFFER, tid, struct.pack(">IQ", len(entries), total)))
        batch, first, size = [], 0, 0
        for index, entry in enumerate(entries):  # ENTRIES frames of at most ~60 KiB
            batch.append(entry)
            size += 13 + len(entry[0].encode())
            if size > 60000 or index == len(entries) - 1:
                c.send(tree(ENTRIES, tid, tree_entries(first, batch)))
                first, batch, size = index + 1, [], 0
        held = []
        while True:
            reply, fields = c.wait_transfer(tid, deadline)
            if reply != "HELD":
                break
            held += fields["held"]
        record = dict({"name": None, "id": tid, "reply": reply, "held_files": held}, **fields)
        c.transfers.append(record)
        if reply == "TREE_ACCEPT":
            pack = b""
            for index, (path, mode, size) in enumerate(entries):
                if size is None:
                    continue
                data = os.urandom(size)
                if opts["small"] == "yes" and size <= MAX_CHUNK // 4:
                    # Packed whole, several to a SMALL frame, as p2p packs small files.
                    if len(pack) + 40 + size > MAX_CHUNK:
                        c.send(tree(SMALL, tid, pack))
                        pack = b""
                    pack += struct.pack(">I", index) + hashlib.sha256(data).digest() + struct.pack(">I", size) + data
                    continue
                if pack:
                    c.send(tree(SMALL, tid, pack))
                    pack = b""
                send_tree_file(c, tid, index, data)
            if pack:
                c.send(tree(SMALL, tid, pack))
            c.send(tree(TREE_END, tid))
            reply, fields = c.wait_transfer(tid, deadline)
            c.tree_result = dict({"reply": reply}, **fields)
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "window-overrun":
        handshake()
        tid = random.getrandbits(63) + 1
        count, size = int(opts["count"]), int(opts["size"])
        entries = [("w/f%06d" % i, 0o644, size) for i in range(count)]
        c.send(tree(TREE_OFFER, tid, struct.pack(">IQ", count, count * size)))
        first, batch, batch_bytes = 0, [], 0
        for i, entry in enumerate(entries):
            if batch and batch_bytes + 13 + len(entry[0]) > MAX_CHUNK:
                c.send(tree(ENTRIES, tid, tree_entries(first, batch)))
                first, batch, batch_bytes = i, [], 0
            batch.append(entry)
            batch_bytes += 13 + len(entry[0])
        c.send(tree(ENTRIES, tid, tree_entries(first, batch)))
        reply, fields = c.wait_transfer(tid, deadline, skip=("ACK", "HELD"))
        record = dict({"name": "w/", "id": tid, "reply": reply}, **fields)
        c.transfers.append(record)
        c.sent = 0
        if reply == "TREE_ACCEPT":
            block = os.urandom(size)
            try:
                pack, pack_bytes = b"", 0
                for index in range(count):
                    content = struct.pack(">I", index) + block[4:]
                    item = struct.pack(">I", index) + hashlib.sha256(content).digest() + struct.pack(">I", len(content)) + content
                    if pack and pack_bytes + len(item) > MAX_CHUNK:
                        c.send(tree(SMALL, tid, pack))
                        pack, pack_bytes = b"", 0
                    pack += item
                    pack_bytes += len(item)
                    c.sent += len(content)
                c.send(tree(SMALL, tid, pack))
                c.send(tree(TREE_END, tid))
            except OSError as e:
                note = "sending: %s" % e
            reply, fields = c.wait_transfer(tid, deadline)
            record["result"] = dict({"reply": reply}, **fields)
    elif scenario == "text-cancel":
        # --count texts: OPEN then CANCEL at once; with --partial yes, wait for the answer and on ACCEPT
        # send START and half the bytes first.
        handshake()
        partial = opts["partial"] in ("yes", "hold")
        for _ in range(int(opts["count"])):
            tid = random.getrandbits(63) + 1
            c.send(offer(tid, "text.txt", 10, TEXT_TYPE))
            if partial:
                reply, fields = c.wait_transfer(tid, deadline)
                c.transfers.append(dict({"name": "text.txt", "id": tid, "reply": reply}, **fields))
                if reply == "ACCEPT":
                    c.send(transfer(START, tid, struct.pack(">Q", 0)) + transfer(CHUNK, tid, struct.pack(">Q", 0) + b"hello"))
                if opts["partial"] == "hold":
                    continue
            c.send(transfer(CANCEL, tid, short_string("gone")))
        c.sent = int(opts["count"])
        c.send(frame(PING, struct.pack(">Q", 7)))  # the PONG says every CANCEL before it was read
        c.wait_for(PONG, deadline)
        if opts["partial"] == "hold":
            if opts["hold-file"]:
                open(opts["hold-file"] + ".sent", "w").close()
            hold(c, opts)
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "older-offer":
        handshake()
        tid = random.getrandbits(63) + 1
        c.send(frame(TRANSFER, struct.pack(">BQQ", OFFER, tid, 16) + short_string(opts["name"]) + short_string("text/plain")))
        record = {"name": opts["name"], "id": tid, "reply": None}
        c.transfers.append(record)
        while True:
            ftype, payload = c.read_frame(deadline)
            if ftype is None or ftype == ERROR:
                break
            if ftype == PING:
                c.send(frame(PONG, payload))
            if ftype == TRANSFER and struct.unpack(">Q", payload[1:9])[0] == tid:
                kind = payload[0]
                record["reply"] = KINDS.get(kind, str(kind))
                if kind in (DENY, CANCEL):
                    n = struct.unpack(">H", payload[9:11])[0]
                    record["reason"] = payload[11:11 + n].decode("utf-8", "replace")
                break
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "older-chat":
        handshake()
        while not c.closed and time.monotonic() < deadline and not (opts["hold-file"] and os.path.exists(opts["hold-file"])):
            ftype, payload = c.read_frame(min(deadline, time.monotonic() + 0.2))
            if ftype == PING:
                c.send(frame(PONG, payload))
            if ftype == TEXT:
                break
        if not c.closed:
            c.send(frame(BYE))
    elif scenario == "stream-probe":
        handshake()

        def reply_to(wanted_type, sid, label):
            record = {"name": label, "id": sid, "type": None, "reply": None, "reason": None}
            c.transfers.append(record)
            while True:
                ftype, payload = c.read_frame(deadline)
                if ftype is None or ftype == ERROR:
                    return record
                if ftype == PING:
                    c.send(frame(PONG, payload))
                    continue
                if ftype not in (STREAM, CHANNEL):
                    continue
                kind, got = payload[0], struct.unpack(">Q", payload[1:9] if ftype == STREAM else payload[2:10])[0]
                if got != sid:
                    continue
                record["type"], record["reply"] = NAMES[ftype], KINDS.get(kind, str(kind))
                if ftype == CHANNEL:
                    record["purpose"] = payload[1]
                if kind in (DENY, CANCEL):
                    body = payload[9:] if ftype == STREAM else payload[10:]
                    n = struct.unpack(">H", body[:2])[0]
                    record["reason"] = body[2:2 + n].decode("utf-8", "replace")
                return record

        old_id, sid = random.getrandbits(63) + 1, random.getrandbits(63) + 1
        c.send(frame(STREAM, struct.pack(">BQ", 1, old_id) + short_string("dump.sql") + short_string("application/sql")))
        reply_to(STREAM, old_id, "older-open")
        c.send(transfer(OFFER, sid, short_string("dump.sql") + short_string("application/sql"), P_STREAM))
        reply_to(CHANNEL, sid, "open")
        c.send(transfer(CHUNK, sid, struct.pack(">Q", 0) + b"nobody accepted this", P_STREAM))
        reply_to(CHANNEL, sid, "data")
        c.drain(deadline)
    elif scenario == "push":
        handshake()
        tid = random.getrandbits(63) + 1
        c.send(transfer(CHUNK, tid, struct.pack(">Q", 0) + b"nobody asked for this"))
        reply, fields = c.wait_transfer(tid, deadline)
        c.transfers.append(dict({"name": None, "id": tid, "reply": reply}, **fields))
    elif scenario == "pingflood":
        # Never reads: every PONG the server writes piles up on its side unless it holds back.
        handshake()
        count, batch = int(opts["count"]), frame(PING, struct.pack(">Q", 1)) * 1000
        try:
            for _ in range(count // 1000):
                c.send(batch)
            c.sent = count
            if opts["hold-file"]:
                open(opts["hold-file"] + ".sent", "w").close()  # tells the test the flood is out
        except OSError as e:
            note = "sending: %s" % e
        hold(c, opts)
        return report(c, scenario, start, our_id, note)  # leaves without reading what piled up
    elif scenario in ("offerflood", "textflood"):
        # --count OFFERs (16 bytes each, never sent) or chat lines, reading nothing back.
        handshake()
        count = int(opts["count"])
        try:
            for start_n in range(0, count, 1000):
                if scenario == "offerflood":
                    batch = b"".join(offer(random.getrandbits(63) + 1, "flood-%d.bin" % n, 16, "application/octet-stream")
                                     for n in range(start_n, min(count, start_n + 1000)))
                else:
                    batch = b"".join(frame(TEXT, struct.pack(">Qq", random.getrandbits(63) + 1, int(time.time() * 1000))
                                           + (b"line %d " % n) + b"x" * 80) for n in range(start_n, min(count, start_n + 1000)))
                c.send(batch)
            c.sent = count
            if opts["hold-file"]:
                open(opts["hold-file"] + ".sent", "w").close()
        except OSError as e:
            note = "sending: %s" % e
        hold(c, opts)
        return report(c, scenario, start, our_id, note)
    elif scenario == "error-reason":
        handshake()
        reason = opts["reason"].encode("utf-8")
        c.send(frame(ERROR, struct.pack(">HH", 1, len(reason)) + reason))
    elif scenario == "cancel-reason":
        # Offers a file, and once it is accepted cancels it with --reason.
        handshake()
        tid = random.getrandbits(63) + 1
        c.send(offer(tid, opts["name"], 16, "application/octet-stream"))
        reply, fields = c.wait_transfer(tid, deadline)
        c.transfers.append(dict({"name": opts["name"], "id": tid, "reply": reply}, **fields))
        if reply == "ACCEPT":
            c.send(transfer(CANCEL, tid, short_string(opts["reason"])))
        if not c.closed:
            c.send(frame(BYE))
    elif scenario in ("silent", "tls12", "nocert"):
        pass
    else:
        sys.exit("unknown scenario " + scenario)
    c.drain(deadline)
    return report(c, scenario, start, our_id, note)


def hold(c, opts):
    """Keeps the connection open, reading nothing, until --hold seconds pass or --hold-file appears, so a
    test can look at the server meanwhile."""
    end = time.monotonic() + float(opts["hold"])
    while time.monotonic() < end and not (opts["hold-file"] and os.path.exists(opts["hold-file"])):
        time.sleep(0.05)


def report(c, scenario, start, our_id, note):
    print(json.dumps({
        "scenario": scenario, "tls": c.tls, "tls_version": c.tls_version, "our_id": our_id.hex(),
        "server_cert_id": c.server_cert_id, "server_hello": c.server_hello, "received": c.received,
        "bytes_received": c.bytes_received,
        "error_code": c.error[0] if c.error else None, "error_reason": c.error[1] if c.error else None,
        "closed_by_server": c.closed, "tls_error": c.tls_error, "elapsed": round(time.monotonic() - start, 2),
        "note": note, "transfers": getattr(c, "transfers", []), "records": getattr(c, "records", []),
        "sent": getattr(c, "sent", None), "tree_result": getattr(c, "tree_result", None),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
