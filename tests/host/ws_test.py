#!/usr/bin/python3
"""host_ws: `wirekit iltp sync` over the ws: and wss: carriers, on loopback.

    /usr/bin/python3 ws_test.py WIREKIT [TEST-NAME-SUBSTRING...]

- Blob sync between two wirekit processes over ws and wss, with and without stream encodings,
  many small Blobs, 16 MiB one way in each direction and 16 MiB each way in one session.
- An independent peer: Debian's python3-websockets carrying a minimal ILTP peer written from
  Lace-060 in tests/pylib/iltppeer.py (identity encoding, hashes from b3sum), as a client of a
  wirekit listener and as a server a wirekit connector syncs with, over ws and wss. It cuts its
  byte stream into messages at random points (items span messages, messages hold several items,
  some messages fragmented) and pings.
- Certificates made here with the openssl tool: another host name, an unknown CA, an expired one.
- Typed failures that end only their own session: a text message, bad upgrades (wrong key, no
  version, another version, another path), an unmasked client frame, an oversized message, a
  disconnect inside an item (with and without a close frame), TLS garbage; on the client side a
  server with a wrong Accept, a 404, masked frames, a text message.
Every server binds to 127.0.0.1; every wait is bounded; every process started is killed by PID.
Prints `host_ws: N passed, M failed`; exit 1 on any failure.
"""
import asyncio
import os
import random
import re
import select
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import iltppeer  # noqa: E402
import wktest  # noqa: E402

import websockets  # noqa: E402  (Debian's python3-websockets)
import websockets.exceptions  # noqa: E402

if len(sys.argv) < 2:
    print("usage: ws_test.py WIREKIT [NAME...]", file=sys.stderr)
    sys.exit(2)
W = os.path.abspath(sys.argv[1])
ONLY = sys.argv[2:]
TMP = tempfile.mkdtemp(prefix="wk-ws-")
PROCS = []
VERBOSE = os.environ.get("HOST_WS_VERBOSE") == "1"
NOPROOF = ["--disable-proof"]  # see test_assurance: the session makes no Seal proof yet


Fail = iltppeer.PeerError  # one failure type for the peer's checks and the test's own
check = iltppeer.need


def log(*a):
    if VERBOSE:
        print("   ", *a, flush=True)


# ---------------------------------------------------------------------------------------------
# processes
class Proc:
    n = 0

    def __init__(self, args):
        Proc.n += 1
        self.errpath = os.path.join(TMP, "p%d.err" % Proc.n)
        with open(self.errpath, "wb") as errf:
            self.p = subprocess.Popen([W] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errf)
        PROCS.append(self.p)
        log("started", self.p.pid, " ".join(args))

    def err(self):
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")

    def line(self, timeout=10):
        end = time.monotonic() + timeout
        buf = b""
        while not buf.endswith(b"\n"):
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise Fail("no output line within %d s; stderr: %s" % (timeout, self.err()[-400:]))
            c = os.read(self.p.stdout.fileno(), 1)
            if not c:
                raise Fail("stdout ended: %r; stderr: %s" % (buf, self.err()[-400:]))
            buf += c
        return buf.decode()

    def wait(self, timeout=60):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Fail("pid %d did not exit within %d s; stderr: %s" % (self.p.pid, timeout, self.err()[-600:]))

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.p.stdout.close()


def kill_all():
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    PROCS.clear()


class Listener(Proc):
    def __init__(self, addr, store, extra=(), once=False):
        super().__init__(["iltp", "sync", "--listen", addr, "--store", store] + (["--once"] if once else []) +
                         list(extra))
        m = re.match(r"listening on (\S+)\n", self.line())
        check(m, "no 'listening on' line")
        self.addr = m.group(1)
        self.port = int(re.search(r":(\d+)(/|$)", self.addr).group(1))

    def sessions(self, n, timeout=20):
        """Waits until n sessions ended (summary or failure lines); returns the stderr text."""
        end = time.monotonic() + timeout
        while True:
            t = self.err()
            done = len(re.findall(r"^session \d+ recv: .*$|^session \d+: (?:failed|clean)", t, re.M))
            if done >= n:
                return t
            if time.monotonic() > end or self.p.poll() is not None:
                raise Fail("listener: %d of %d sessions ended within %d s: %s" % (done, n, timeout, t[-800:]))
            time.sleep(0.02)


def connector(addr, store, extra=(), timeout=120):
    p = Proc(["iltp", "sync", "--connect", addr, "--store", store] + list(extra))
    rc = p.wait(timeout)
    p.p.stdout.close()
    return rc, p.err()


def store_of(name, blobs):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    hs = {}
    for data in blobs:
        r = subprocess.run([W, "iltp", "put", "--store", d], input=data, capture_output=True, timeout=60)
        check(r.returncode == 0, "put failed: %s" % r.stderr.decode()[-200:])
        hs[r.stdout.decode().strip()] = data
    return d, hs


def listing(store):
    r = subprocess.run([W, "iltp", "ls", "--store", store], capture_output=True, timeout=60)
    check(r.returncode == 0, "ls failed")
    return set(r.stdout.decode().split())


def clean(text, who):
    check(re.search(r"^session \d+ recv: .*; clean$", text, re.M), "%s: no clean session: %s" % (who, text[-800:]))


# ---------------------------------------------------------------------------------------------
# certificates (openssl, at test time)
CERTS = {}


def openssl(*args):
    r = subprocess.run(["openssl", *args], capture_output=True, timeout=60)
    check(r.returncode == 0, "openssl %s failed: %s" % (args[0], r.stderr.decode()[-300:]))


def make_certs():
    d = os.path.join(TMP, "certs")
    os.makedirs(d)
    p = lambda n: os.path.join(d, n)  # noqa: E731
    for ca in ("ca", "otherca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                p(ca + ".key"), "-out", p(ca + ".pem"), "-days", "30", "-subj", "/CN=wirekit test %s" % ca)
    with open(p("ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = wk\n[wk]\ndatabase = %s\nnew_certs_dir = %s\nserial = %s\ndefault_md = sha256\n"
                "policy = any\ncopy_extensions = copy\nunique_subject = no\n[any]\ncommonName = supplied\n"
                % (p("index.txt"), d, p("serial")))
    open(p("index.txt"), "w").close()
    with open(p("serial"), "w") as f:
        f.write("01\n")
    specs = {  # name: (CA, SAN, validity)
        "good": ("ca", "IP:127.0.0.1,DNS:localhost", None),
        "otherhost": ("ca", "DNS:other.example", None),
        "unknownca": ("otherca", "IP:127.0.0.1,DNS:localhost", None),
        "expired": ("ca", "IP:127.0.0.1,DNS:localhost", ("20200101000000Z", "20200201000000Z")),
    }
    for name, (ca, san, dates) in specs.items():
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", p(name + ".key"),
                "-out", p(name + ".csr"), "-subj", "/CN=%s" % name, "-addext", "subjectAltName=" + san)
        dates = dates or ("20240101000000Z", "20991231000000Z")
        openssl("ca", "-batch", "-config", p("ca.cnf"), "-cert", p(ca + ".pem"), "-keyfile", p(ca + ".key"),
                "-in", p(name + ".csr"), "-out", p(name + ".pem"), "-startdate", dates[0], "-enddate", dates[1])
        CERTS[name] = (p(name + ".pem"), p(name + ".key"))
    CERTS["ca"] = p("ca.pem")


def tls_args(name="good"):
    return ["--cert", CERTS[name][0], "--key", CERTS[name][1]]


def client_ssl():
    ctx = ssl.create_default_context(cafile=CERTS["ca"])
    return ctx


def server_ssl(name="good"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*CERTS[name])
    return ctx


# ---------------------------------------------------------------------------------------------
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def wk_pair(scheme, name, a_blobs, b_blobs, lextra=(), cextra=(), path=""):
    """A --once listener holding a_blobs and a connector holding b_blobs; both end with the union."""
    a, ha = store_of(name + "-a", a_blobs)
    b, hb = store_of(name + "-b", b_blobs)
    tls = scheme == "wss"
    lst = Listener("%s:127.0.0.1:0%s" % (scheme, path), a,
                   (tls_args() if tls else []) + list(lextra), once=True)
    try:
        want = "%s:127.0.0.1:%d%s" % (scheme, lst.port, path)
        check(lst.addr == want and lst.port != 0, "listener printed %s, expected %s" % (lst.addr, want))
        t0 = time.monotonic()
        rc, err = connector(lst.addr, b, (["--ca", CERTS["ca"]] if tls else []) + list(cextra))
        dt = time.monotonic() - t0
        check(rc == 0, "connector exited %d: %s" % (rc, err[-800:]))
        clean(err, "connector")
        check(lst.wait(30) == 0, "listener failed: %s" % lst.err()[-800:])
        clean(lst.err(), "listener")
    finally:
        lst.stop()
    union = set(ha) | set(hb)
    check(listing(a) == union and listing(b) == union, "stores differ from the union")
    log("%s %s: %.2f s" % (scheme, name, dt))
    return err, lst.err()


@test
def test_wk_ws_wss_encodings():
    rnd = random.Random(1)
    for scheme in ("ws", "wss"):
        extra = NOPROOF if scheme == "wss" else []
        for enc in ("zstd20c", "deflate12c", ""):
            a = [rnd.randbytes(rnd.randint(1, 300000)) for _ in range(4)]
            b = [rnd.randbytes(rnd.randint(1, 300000)) for _ in range(4)]
            opts = ["--encode", enc, "--decode", enc]
            cerr, lerr = wk_pair(scheme, "enc-%s-%s" % (scheme, enc or "identity"), a, b, opts + extra, opts + extra)
            check(("send: %s," % (enc or "identity")) in cerr, "%s: encoding %s not used: %s" % (scheme, enc, cerr))
            wktest.check("wirekit<->wirekit %s %s" % (scheme, enc or "identity"), True)


@test
def test_wk_path_and_hostname():
    wk_pair("ws", "path", [b"path one"], [b"path two"], path="/some/other-path")
    wktest.check("ws listener on another path prints it and serves it", True)
    # wss with a host name: the certificate's DNS name, SNI sent
    a, _ = store_of("host-a", [b"hostname a"])
    b, _ = store_of("host-b", [b"hostname b"])
    lst = Listener("wss:127.0.0.1:0", a, tls_args() + NOPROOF, once=True)
    try:
        rc, err = connector("wss:localhost:%d" % lst.port, b, ["--ca", CERTS["ca"]] + NOPROOF)
        check(rc == 0, "wss:localhost connector exited %d: %s" % (rc, err[-500:]))
    finally:
        lst.stop()
    wktest.check("wss connector verifies a DNS host name (localhost)", True)


@test
def test_wk_many_small():
    for scheme in ("ws", "wss"):
        extra = NOPROOF if scheme == "wss" else []
        a = iltppeer.data_set("small-a-" + scheme, 150, (1, 3000))
        b = iltppeer.data_set("small-b-" + scheme, 150, (1, 3000))
        wk_pair(scheme, "small-" + scheme, a, b, extra, extra)
        wktest.check("wirekit<->wirekit %s: 150 + 150 small Blobs" % scheme, True)


@test
def test_wk_bulk():
    rnd = random.Random(7)
    big1, big2 = rnd.randbytes(16 << 20), rnd.randbytes(16 << 20)
    for scheme in ("ws", "wss"):
        extra = NOPROOF if scheme == "wss" else []
        for enc in ("", "zstd20c"):
            opts = ["--encode", enc, "--decode", enc] + extra
            wk_pair(scheme, "bulk1-%s-%s" % (scheme, enc), [big1], [], opts, opts)
            wk_pair(scheme, "bulk2-%s-%s" % (scheme, enc), [], [big2], opts, opts)
            wktest.check("wirekit %s %s: 16 MiB listener->connector, then 16 MiB connector->listener"
                         % (scheme, enc or "identity"), True)
            wk_pair(scheme, "bulk3-%s-%s" % (scheme, enc), [big1], [big2], opts, opts)
            wktest.check("wirekit %s %s: 16 MiB each way in one session" % (scheme, enc or "identity"), True)


@test
def test_assurance():
    """ws resolves Disabled, wss (verified) and ws with --trust-confidential-channel resolve
    ConfidentialChannel, --disable-proof resolves Disabled. Under ConfidentialChannel each side
    sends a Seal over the empty Blob as its proof (src/iltp/proof.c) and requires the peer's to be
    exact: a peer that sends the zero-row block instead fails the session (WK_ERR_ILTP_PROOF)."""
    def run(scheme, lextra, cextra, tag):
        a, _ = store_of("as-a-" + tag, [b"assurance a " + tag.encode()])
        b, _ = store_of("as-b-" + tag, [b"assurance b " + tag.encode()])
        lst = Listener("%s:127.0.0.1:0" % scheme, a, (tls_args() if scheme == "wss" else []) + lextra + ["--verbose"],
                       once=True)
        try:
            rc, err = connector(lst.addr, b, (["--ca", CERTS["ca"]] if scheme == "wss" else []) + cextra +
                                ["--verbose"])
        finally:
            lst.stop()
        return rc, err

    def disabled(rc, err, what):
        check(rc == 0 and re.search(r"^session 1 -> facts 0 proof$", err, re.M), "%s: %d %s" % (what, rc, err[-600:]))

    def confidential(rc, err, what):
        sent = re.search(r"^session 1 -> record S ", err, re.M)
        got = re.search(r"^session 1 <- record S ", err, re.M)
        check(rc == 0 and sent and got and "assurance ConfidentialChannel" in err,
              "%s: not a ConfidentialChannel session with Seal proofs both ways: %d %s" % (what, rc, err[-600:]))

    disabled(*run("ws", [], [], "ws"), "ws default")
    confidential(*run("wss", [], [], "wss"), "wss default")
    confidential(*run("ws", ["--trust-confidential-channel"], ["--trust-confidential-channel"], "wstrust"),
                 "ws --trust-confidential-channel")
    disabled(*run("wss", NOPROOF, NOPROOF, "wssoff"), "wss --disable-proof")
    rc, err = run("wss", NOPROOF, [], "wssmixed")
    check(rc == 2 and "WK_ERR_ILTP_PROOF" in err,
          "a wss connector (ConfidentialChannel) given the zero-row proof: %d %s" % (rc, err[-600:]))
    wktest.check("proof assurance: ws Disabled, wss and ws+trust ConfidentialChannel with Seals both ways, "
                 "--disable-proof Disabled, a missing Seal refused (WK_ERR_ILTP_PROOF)", True)


@test
def test_certificates():
    b, _ = store_of("cert-b", [b"cert b"])
    for name, want in (("otherhost", "hostname|owner|does not match"), ("unknownca", "issuer is unknown|signer"),
                       ("expired", "expired")):
        a, _ = store_of("cert-a-" + name, [b"cert a"])
        lst = Listener("wss:127.0.0.1:0", a, tls_args(name) + NOPROOF)
        try:
            rc, err = connector("wss:127.0.0.1:%d" % lst.port, b, ["--ca", CERTS["ca"]] + NOPROOF, timeout=30)
            check(rc == 4 and "WK_ERR_HOST_TLS_VERIFY" in err and re.search(want, err, re.I),
                  "%s: expected WK_ERR_HOST_TLS_VERIFY (%s), got %d: %s" % (name, want, rc, err[-500:]))
            check(lst.p.poll() is None, "the listener died")
        finally:
            lst.stop()
        wktest.check("wss client refuses the %s certificate: WK_ERR_HOST_TLS_VERIFY" % name, True)
    # --ca absent: the system store does not know our CA
    a, _ = store_of("cert-a-sys", [b"cert a"])
    lst = Listener("wss:127.0.0.1:0", a, tls_args() + NOPROOF)
    try:
        rc, err = connector(lst.addr, b, NOPROOF, timeout=30)
        check(rc == 4 and "WK_ERR_HOST_TLS_VERIFY" in err, "system store: %d %s" % (rc, err[-400:]))
    finally:
        lst.stop()
    wktest.check("wss client without --ca uses the system store (which does not trust the test CA)", True)


# ---------------------------------------------------------------------------------------------
# the independent peer: python3-websockets + tests/pylib/iltppeer.py
def ws_io(ws, rnd):
    async def recv():
        try:
            return await ws.recv()
        except websockets.exceptions.ConnectionClosedOK:
            return None
    return iltppeer.ItemReader(recv), iltppeer.Writer(ws.send, rnd)


async def py_client(uri, blobs, rnd, ctx=None):
    async with websockets.connect(uri, ssl=ctx, max_size=None, max_queue=None, compression=None,
                                  ping_interval=None, open_timeout=20, close_timeout=20) as ws:
        rx, tx = ws_io(ws, rnd)
        have, n, proof = await iltppeer.sync(1, rx, tx, blobs)
        pong = await ws.ping(b"wk")
        await asyncio.wait_for(pong, 10)
        await ws.close()
        check(ws.close_code == 1000, "close code %s" % ws.close_code)
        return have, n, tx


@test
def test_py_client():
    rnd = random.Random(11)
    for scheme in ("ws", "wss"):
        a_blobs = [rnd.randbytes(rnd.randint(0, 200000)) for _ in range(5)] + [rnd.randbytes(3 << 20)]
        mine = [rnd.randbytes(rnd.randint(0, 200000)) for _ in range(5)] + [rnd.randbytes(2 << 20)]
        a, ha = store_of("pyc-a-" + scheme, a_blobs)
        hb = {iltppeer.blob_hash(d): d for d in mine}
        lst = Listener("%s:127.0.0.1:0" % scheme, a, (tls_args() + NOPROOF) if scheme == "wss" else [], once=True)
        try:
            uri = "%s://127.0.0.1:%d/interlace" % (scheme, lst.port)
            have, n, tx = asyncio.run(asyncio.wait_for(
                py_client(uri, hb, rnd, client_ssl() if scheme == "wss" else None), 120))
            check(set(have) == set(ha) | set(hb), "python client: not the union")
            check(lst.wait(30) == 0, "listener: %s" % lst.err()[-600:])
            clean(lst.err(), "listener")
        finally:
            lst.stop()
        check(listing(a) == set(ha) | set(hb), "listener store is not the union")
        wktest.check("python-websockets ILTP client vs wirekit listener over %s (%d messages, %d fragmented, %d rounds)"
                     % (scheme, tx.messages, tx.fragmented, n), True)


async def py_server(scheme, blobs, rnd, run_connector):
    result = {}

    async def handler(ws, path):
        try:
            check(path == "/interlace", "request for %s" % path)
            rx, tx = ws_io(ws, rnd)
            have, n, _ = await iltppeer.sync(0, rx, tx, blobs)
            check(await rx.at_end(), "bytes after the connector's last item")
            result["have"], result["tx"] = have, tx
        except Exception as e:  # reported by the test
            result["error"] = e

    async with websockets.serve(handler, "127.0.0.1", 0, ssl=server_ssl() if scheme == "wss" else None,
                                max_size=None, max_queue=None, compression=None, ping_interval=None) as srv:
        port = srv.sockets[0].getsockname()[1]
        rc, err = await asyncio.get_running_loop().run_in_executor(None, run_connector, port)
    return result, rc, err


@test
def test_py_server():
    rnd = random.Random(12)
    for scheme in ("ws", "wss"):
        mine = [rnd.randbytes(rnd.randint(0, 300000)) for _ in range(6)] + [rnd.randbytes(3 << 20)]
        b_blobs = [rnd.randbytes(rnd.randint(0, 300000)) for _ in range(6)]
        hs = {iltppeer.blob_hash(d): d for d in mine}
        b, hb = store_of("pys-b-" + scheme, b_blobs)
        extra = (["--ca", CERTS["ca"]] + NOPROOF) if scheme == "wss" else []
        result, rc, err = asyncio.run(asyncio.wait_for(py_server(
            scheme, hs, rnd, lambda port: connector("%s:127.0.0.1:%d" % (scheme, port), b, extra)), 120))
        check("error" not in result, "python server over %s: %r; connector exited %d: %s"
              % (scheme, result.get("error"), rc, err[-600:]))
        check(rc == 0, "connector exited %d: %s" % (rc, err[-600:]))
        clean(err, "connector")
        check(set(result["have"]) == set(hs) | set(hb), "python server: not the union")
        check(listing(b) == set(hs) | set(hb), "connector store is not the union")
        wktest.check("wirekit connector vs python-websockets ILTP server over %s (%d messages)"
                     % (scheme, result["tx"].messages), True)


# ---------------------------------------------------------------------------------------------
# hostile peers
def frame(op, payload, mask=True, fin=True, rsv=0, length=None):
    n = len(payload) if length is None else length
    h = bytes([(0x80 if fin else 0) | (rsv << 4) | op])
    mbit = 0x80 if mask else 0
    if n < 126:
        h += bytes([mbit | n])
    elif n < 65536:
        h += bytes([mbit | 126]) + struct.pack(">H", n)
    else:
        h += bytes([mbit | 127]) + struct.pack(">Q", n)
    if mask:
        k = os.urandom(4)
        return h + k + bytes(b ^ k[i % 4] for i, b in enumerate(payload))
    return h + payload


class Raw:
    """A raw client connection: bytes after the upgrade answer stay in buf for read_close."""

    def __init__(self, port, tls=False):
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.s = client_ssl().wrap_socket(s, server_hostname="127.0.0.1") if tls else s
        self.buf = b""

    def sendall(self, b):
        self.s.sendall(b)

    def recv(self, n):
        if self.buf:
            b, self.buf = self.buf[:n], self.buf[n:]
            return b
        return self.s.recv(n)

    def close(self):
        self.s.close()

    def upgrade(self, path="/interlace", key="dGhlIHNhbXBsZSBub25jZQ==", version="13"):
        req = "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" % path
        if key is not None:
            req += "Sec-WebSocket-Key: %s\r\n" % key
        if version is not None:
            req += "Sec-WebSocket-Version: %s\r\n" % version
        self.s.sendall((req + "\r\n").encode())
        head, self.buf = read_head(self.s)
        return head

    def read_close(self):
        """Reads frames until a close frame; returns its status code (None if the connection ended)."""
        buf, self.buf = self.buf, b""
        try:
            while True:
                while len(buf) >= 2:
                    n = buf[1] & 0x7F
                    off = 2
                    if n == 126:
                        if len(buf) < 4:
                            break
                        n, off = struct.unpack(">H", buf[2:4])[0], 4
                    elif n == 127:
                        if len(buf) < 10:
                            break
                        n, off = struct.unpack(">Q", buf[2:10])[0], 10
                    if len(buf) < off + n:
                        break
                    if buf[0] & 0x0F == 8:
                        return struct.unpack(">H", buf[off:off + 2])[0] if n >= 2 else 1005
                    buf = buf[off + n:]
                c = self.s.recv(65536)
                if not c:
                    return None
                buf += c
        except (ConnectionResetError, socket.timeout, ssl.SSLError):
            return None


def drain(s, quiet=0.3):
    """Reads what the peer sends until it has been quiet for a while."""
    s.s.settimeout(quiet)
    try:
        while s.s.recv(65536):
            pass
    except (socket.timeout, OSError):
        pass
    s.s.settimeout(15)


def read_head(s):
    """Reads an HTTP header block; returns (head, the bytes after it)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        c = s.recv(4096)
        if not c:
            return buf, b""
        buf += c
    i = buf.index(b"\r\n\r\n") + 4
    return buf[:i], buf[i:]


@test
def test_hostile_clients():
    """One ws listener and one wss listener; each attack ends only its session; an honest python
    session open across all the attacks and a wirekit connector afterwards both sync."""
    rnd = random.Random(13)
    a, ha = store_of("hostile-a", [rnd.randbytes(1000), rnd.randbytes(70000)])
    lws = Listener("ws:127.0.0.1:0", a, ["--ws-max-message", "65536", "--transport-timeout-ms", "3000"])
    lwss = Listener("wss:127.0.0.1:0", a, tls_args() + NOPROOF + ["--transport-timeout-ms", "3000"])
    expected = []  # (listener, error name) in order
    try:
        async def honest_and_attacks():
            async with websockets.connect("ws://127.0.0.1:%d/interlace" % lws.port, max_size=None, max_queue=None,
                                          compression=None, ping_interval=None) as ws:
                rx, tx = ws_io(ws, rnd)
                await iltppeer.establish(1, rx, tx)
                await asyncio.get_running_loop().run_in_executor(None, attacks)
                have = {}
                await iltppeer.rounds(rx, tx, have)
                await ws.close()
                return have

        def attacks():
            port = lws.port
            # a text message after a proper upgrade
            s = Raw(port)
            check(b" 101 " in s.upgrade(), "no 101")
            s.sendall(frame(0x1, b"hello"))
            check(s.read_close() == 1003, "text: expected close 1003")
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_TEXT"))
            # bad upgrades: wrong key, no version, another version, another path
            for kw, status, name in ((dict(key="abc"), b" 400 ", "WK_ERR_HOST_WS_UPGRADE"),
                                     (dict(version=None), b" 400 ", "WK_ERR_HOST_WS_UPGRADE"),
                                     (dict(version="8"), b" 426 ", "WK_ERR_HOST_WS_UPGRADE"),
                                     (dict(path="/elsewhere"), b" 404 ", "WK_ERR_HOST_WS_PATH"),
                                     (dict(path="/interlace?x=1"), b" 404 ", "WK_ERR_HOST_WS_PATH")):
                s = Raw(port)
                resp = s.upgrade(**kw)
                check(status in resp.split(b"\r\n")[0] and b"Sec-WebSocket-Accept" not in resp,
                      "%r: got %r" % (kw, resp[:80]))
                check(s.recv(100) == b"", "bytes after the refusal")
                s.close()
                expected.append((lws, name))
            # an unmasked client frame
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x2, b"\n", mask=False))
            check(s.read_close() == 1002, "unmasked: expected close 1002")
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_PROTOCOL"))
            # an oversized message (bound 65536): the header and 10 bytes are enough to fail
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x2, b"", length=100000) + b"0123456789")
            code = s.read_close()
            check(code == 1009, "oversized: expected close 1009, got %s" % code)
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_MESSAGE_TOO_BIG"))
            # oversized across fragments: 40000 + 40000 bytes
            s = Raw(port)
            s.upgrade()
            first = iltppeer.preface() + b"\n" + iltppeer.blob_record(b"z" * 70000)[:-70000]
            first += b"z" * (40000 - len(first))  # the session takes these: a preface, a proof, an operand's start
            s.sendall(frame(0x2, first, fin=False) + frame(0x0, b"z" * 40000))
            check(s.read_close() == 1009, "fragmented oversized: expected close 1009")
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_MESSAGE_TOO_BIG"))
            # disconnect inside an item, with a close frame: the session's truncation
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x2, iltppeer.preface()[:20]) + frame(0x8, struct.pack(">H", 1000)))
            s.read_close()
            s.close()
            expected.append((lws, "ILTP_ERR_TRUNCATED"))
            # disconnect inside an item without a close frame: the transport's failure
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x2, iltppeer.preface()[:20]))
            drain(s)
            s.close()  # a FIN, no close frame
            expected.append((lws, "WK_ERR_HOST_WS_CLOSED"))
            # a reset inside an item
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x2, iltppeer.preface()[:20]))
            drain(s)
            s.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()  # an RST
            expected.append((lws, "WK_ERR_HOST_READ"))
            # a masked close with an invalid status code
            s = Raw(port)
            s.upgrade()
            s.sendall(frame(0x8, struct.pack(">H", 1005)))
            check(s.read_close() == 1002, "invalid close code: expected close 1002")
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_PROTOCOL"))
            # an upgrade that never completes: the transport timeout (3 s)
            s = Raw(port)
            s.sendall(b"GET /interlace HTTP/1.1\r\n")
            s.s.settimeout(10)
            t0 = time.monotonic()
            check(s.recv(100) == b"" and time.monotonic() - t0 < 9, "no timeout")
            s.close()
            expected.append((lws, "WK_ERR_HOST_WS_TIMEOUT"))
            # wss: TLS garbage, then a text message over TLS
            s = socket.create_connection(("127.0.0.1", lwss.port), timeout=15)
            s.sendall(os.urandom(3000))
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass
            s.close()
            expected.append((lwss, "WK_ERR_HOST_TLS_HANDSHAKE"))
            # wss: a TLS 1.1 client (TLS 1.2 is the floor)
            r = subprocess.run(["openssl", "s_client", "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0", "-connect",
                                "127.0.0.1:%d" % lwss.port], input=b"", capture_output=True, timeout=20)
            check(r.returncode != 0 and b"alert protocol version" in r.stdout + r.stderr, "TLS 1.1 was not refused")
            expected.append((lwss, "WK_ERR_HOST_TLS_HANDSHAKE"))
            s = Raw(lwss.port, tls=True)
            check(b" 101 " in s.upgrade(), "wss: no 101")
            s.sendall(frame(0x1, b"text over tls"))
            check(s.read_close() == 1003, "wss text: expected close 1003")
            s.close()
            expected.append((lwss, "WK_ERR_HOST_WS_TEXT"))

        have = asyncio.run(asyncio.wait_for(honest_and_attacks(), 120))
        check(set(ha) <= set(have), "the honest session did not get the listener's Blobs")
        b, hb = store_of("hostile-b", [b"after the attacks"])
        for lst, extra in ((lws, []), (lwss, ["--ca", CERTS["ca"]] + NOPROOF)):
            rc, err = connector(lst.addr, b, extra)
            check(rc == 0, "honest connector after the attacks: %d %s" % (rc, err[-500:]))
        for lst in (lws, lwss):
            n = sum(1 for x in expected if x[0] is lst)
            text = lst.sessions(n + 1 + (1 if lst is lws else 0), 20)
            fails = sorted(re.findall(r"^session \d+: ([A-Z_0-9]+)(?: at offset \d+)?: .*$", text, re.M))
            want = sorted(name for l2, name in expected if l2 is lst)
            check(fails == want, "listener failures %s, expected %s" % (fails, want))
            check(lst.p.poll() is None, "listener died")
        check(len(re.findall(r"; clean$", lws.err(), re.M)) == 4, "ws listener: not 2 clean sessions")
    finally:
        lws.stop()
        lwss.stop()
    wktest.check("hostile clients: %d typed failures, each ending only its own session (%s)"
                 % (len(expected), ", ".join(sorted(set(n for _, n in expected)))), True)


class FakeServer:
    """A TCP server answering one WebSocket upgrade with `answer(key)` and then sending `after`."""

    def __init__(self, answer, after=b""):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.answer, self.after = answer, after

    def serve(self):
        self.sock.settimeout(20)
        c, _ = self.sock.accept()
        c.settimeout(20)
        req = read_head(c)[0].decode()
        m = re.search(r"Sec-WebSocket-Key: (\S+)\r\n", req)
        c.sendall(self.answer(m.group(1) if m else ""))
        c.sendall(self.after)
        try:
            while c.recv(65536):
                pass
        except OSError:
            pass
        c.close()
        self.sock.close()


def accept_for(key):
    import base64
    import hashlib
    return base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def ok_answer(key):
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: %s\r\n\r\n" % accept_for(key)).encode()


@test
def test_hostile_servers():
    import threading
    b, _ = store_of("hs-b", [b"hostile servers"])
    cases = [
        ("wrong Accept", lambda k: ok_answer("x" * 24), b"", 4, "WK_ERR_HOST_WS_UPGRADE"),
        ("404", lambda k: b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", b"", 4, "WK_ERR_HOST_WS_UPGRADE"),
        ("an extension", lambda k: ok_answer(k)[:-2] + b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", b"", 4,
         "WK_ERR_HOST_WS_UPGRADE"),
        ("masked frames", ok_answer, frame(0x2, b"\n"), 4, "WK_ERR_HOST_WS_PROTOCOL"),
        ("a text message", ok_answer, frame(0x1, b"hi", mask=False), 2, "WK_ERR_HOST_WS_TEXT"),
        ("close 1011", ok_answer, frame(0x8, struct.pack(">H", 1011) + b"oops", mask=False), 4, "WK_ERR_HOST_WS_CLOSED"),
    ]
    for what, answer, after, want_rc, name in cases:
        fs = FakeServer(answer, after)
        t = threading.Thread(target=fs.serve, daemon=True)
        t.start()
        rc, err = connector("ws:127.0.0.1:%d" % fs.port, b, ["--transport-timeout-ms", "5000"], timeout=30)
        t.join(25)
        check(rc == want_rc and name in err, "%s: expected %s (exit %d), got %d: %s" % (what, name, want_rc, rc, err[-400:]))
        wktest.check("ws connector vs a server sending %s: %s, exit %d" % (what, name, rc), True)


async def mute_server(blobs, rnd, run_connector):
    """A minimal WebSocket server (asyncio streams, frames parsed here) that runs side0 to fixed
    point and then never answers the connector's close frame."""
    result = {}

    async def conn(reader, writer):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            key = re.search(rb"Sec-WebSocket-Key: (\S+)\r\n", head).group(1).decode()
            writer.write(ok_answer(key))

            async def recv():
                while True:
                    h = await reader.readexactly(2)
                    n = h[1] & 0x7F
                    if n == 126:
                        n = struct.unpack(">H", await reader.readexactly(2))[0]
                    elif n == 127:
                        n = struct.unpack(">Q", await reader.readexactly(8))[0]
                    k = await reader.readexactly(4) if h[1] & 0x80 else b"\0\0\0\0"
                    d = bytes(b ^ k[i % 4] for i, b in enumerate(await reader.readexactly(n)))
                    if h[0] & 0x0F == 8:
                        result["close"] = struct.unpack(">H", d[:2])[0] if len(d) >= 2 else 1005
                        return None
                    if h[0] & 0x0F in (0, 2):
                        return d

            async def send(b):
                writer.write(frame(0x2, b if isinstance(b, bytes) else b"".join(b), mask=False))
                await writer.drain()

            rx, tx = iltppeer.ItemReader(recv), iltppeer.Writer(send, rnd)
            result["have"] = (await iltppeer.sync(0, rx, tx, blobs))[0]
            check(await rx.at_end(), "bytes after the connector's last item")
            await asyncio.sleep(15)  # hold the connection; never send a close frame
        except Exception as e:
            result["error"] = e
        finally:
            writer.close()

    srv = await asyncio.start_server(conn, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    rc, err = await asyncio.get_running_loop().run_in_executor(None, run_connector, port)
    srv.close()
    return result, rc, err


@test
def test_close_wait_bounded():
    rnd = random.Random(14)
    hs = {iltppeer.blob_hash(d): d for d in (b"mute one", b"mute two")}
    b, _ = store_of("mute-b", [b"mute connector"])
    t = {}

    def run(port):
        t0 = time.monotonic()
        r = connector("ws:127.0.0.1:%d" % port, b, ["--transport-timeout-ms", "2000"], timeout=30)
        t["dt"] = time.monotonic() - t0
        return r

    result, rc, err = asyncio.run(asyncio.wait_for(mute_server(hs, rnd, run), 60))
    check("error" not in result, "mute server: %r" % result.get("error"))
    check(result.get("close") == 1000, "the connector's close code: %s" % result.get("close"))
    check(rc == 4 and "WK_ERR_HOST_WS_TIMEOUT" in err and "no close frame" in err,
          "expected WK_ERR_HOST_WS_TIMEOUT, got %d: %s" % (rc, err[-400:]))
    check(t["dt"] < 10, "the connector took %.1f s" % t["dt"])
    check(set(hs) <= listing(b), "the Blobs did not arrive before the close")
    wktest.check("ws connector: close 1000 after its last byte, then at most --transport-timeout-ms for the "
                 "peer's close frame (WK_ERR_HOST_WS_TIMEOUT after %.1f s)" % t["dt"], True)


# ---------------------------------------------------------------------------------------------
def main():
    for tool in ("openssl", "b3sum"):
        check(shutil.which(tool), "%s is missing (scripts/bootstrap installs it)" % tool)
    make_certs()
    for fn in TESTS:
        name = fn.__name__[5:]
        if ONLY and not any(o in name for o in ONLY):
            continue
        t0 = time.monotonic()
        try:
            fn()
        except (Fail, AssertionError, OSError, asyncio.TimeoutError,
                websockets.exceptions.WebSocketException, subprocess.SubprocessError) as e:
            wktest.check(name, False, "%s: %s" % (type(e).__name__, e))
        finally:
            kill_all()
        log("%s: %.1f s" % (name, time.monotonic() - t0))
    if not VERBOSE:
        shutil.rmtree(TMP, ignore_errors=True)
    return wktest.summary("host_ws")


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        kill_all()
