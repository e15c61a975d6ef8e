#!/usr/bin/python3
"""host_quib_process: `wirekit iltp sync` over quib: between real processes on loopback UDP.

    /usr/bin/python3 quib_test.py WIREKIT QUIB_PEER [TEST-NAME-SUBSTRING...]

- Blob sync between two wirekit processes: many small Blobs, bulk Blobs, every encoding, several
  connectors served at once by one listener socket.
- The exporter: both sides print the same 32 bytes (--verbose), and an independent RFC 8446
  section 7.5 computation in Python from the connector's TLS key log (SSLKEYLOGFILE, the
  EXPORTER_SECRET line) gives the same value.
- Each typed outcome against the test peer (tests/host/quib_peer.c, built from test code on
  quib_conn.c): no ALPN, a wrong ALPN, premature close, stateless reset before and after
  settlement, nonzero application close, RESET_STREAM, STOP_SENDING, idle timeout; and the
  client's certificate checks (wrong hostname, unknown CA, expired), with certificates made here
  by the openssl tool.
- Raw datagrams: Version Negotiation for another QUIC version, a stateless reset for an unknown
  connection ID.
- An independent QUIC stack: quic-go 0.29 (Debian's golang-github-lucas-clemente-quic-go-dev,
  TLS 1.3 from qtls; tests/host/go/quib_go_peer.go, built offline here) as client against a
  wirekit listener and as server for a wirekit connector: ALPN QUIB/1, the exporter computed by
  Go's ExportKeyingMaterial equal to ours, and a whole Blob sync through it (the Go peer bridges
  its QUIC stream to a `wirekit iltp sync` on the stdio carrier), and a wrong ALPN refused.
Every server binds to 127.0.0.1; every wait is bounded; every process we start is killed.
"""
import hashlib
import hmac
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402

if len(sys.argv) < 3:
    print("usage: quib_test.py WIREKIT QUIB_PEER [TEST...]", file=sys.stderr)
    sys.exit(2)
W = os.path.abspath(sys.argv[1])
PEER = os.path.abspath(sys.argv[2])
ONLY = sys.argv[3:]
TMP = tempfile.mkdtemp(prefix="wk-quib-")
PROCS = []
LABEL = "lace-\U0001F5A7/quib/peer-proof-channel-binding-v1".encode()
assert len(LABEL) == 44


def sh(*argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (argv[0], r.stderr.decode()[:300]))
    return r


# ---- certificates (openssl) ------------------------------------------------------------------
def make_certs():
    d = os.path.join(TMP, "pki")
    os.makedirs(d)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def ca(name):
        sh("openssl", "req", "-x509", *ec, "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.pem", "-days", "3650",
           "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
           "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def leaf(name, san, issuer, dates=None):
        sh("openssl", "req", *ec, "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", "/CN=" + name)
        ext = f"{d}/{name}.ext"
        with open(ext, "w") as f:
            f.write(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                    "extendedKeyUsage=serverAuth\n")
        if dates is None:
            sh("openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/{issuer}.pem", "-CAkey",
               f"{d}/{issuer}.key", "-CAcreateserial", "-out", f"{d}/{name}.pem", "-days", "3650", "-extfile", ext)
            return
        # a certificate that expired long ago: `openssl ca` takes explicit dates
        cadir = f"{d}/ca-{name}"
        os.makedirs(cadir)
        open(f"{cadir}/index.txt", "w").close()
        with open(f"{cadir}/serial", "w") as f:
            f.write("1000\n")
        with open(f"{cadir}/ca.cnf", "w") as f:
            f.write(f"[ca]\ndefault_ca=c\n[c]\ndatabase={cadir}/index.txt\nserial={cadir}/serial\n"
                    f"new_certs_dir={cadir}\ndefault_md=sha256\npolicy=p\ncopy_extensions=none\n"
                    "[p]\ncommonName=supplied\n")
        sh("openssl", "ca", "-batch", "-config", f"{cadir}/ca.cnf", "-cert", f"{d}/{issuer}.pem", "-keyfile",
           f"{d}/{issuer}.key", "-in", f"{d}/{name}.csr", "-out", f"{d}/{name}.pem", "-startdate", dates[0],
           "-enddate", dates[1], "-extfile", ext, "-notext")

    ca("ca")
    ca("other-ca")
    leaf("good", "DNS:localhost,IP:127.0.0.1", "ca")
    leaf("wronghost", "DNS:other.example", "ca")
    leaf("stranger", "DNS:localhost,IP:127.0.0.1", "other-ca")
    leaf("expired", "DNS:localhost,IP:127.0.0.1", "ca", ("20200101000000Z", "20200201000000Z"))
    return d


PKI = None


# ---- processes -------------------------------------------------------------------------------
def start(argv, env=None):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    PROCS.append(p)
    return p


def kill_all():
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


def stop(p, timeout=30):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return -999, out, err
    return p.returncode, out, err


def stderr_until(p, needle, timeout=30):
    """Reads p's stderr until it holds `needle`, p exits or `timeout` seconds pass; returns what
    was read. The listener logs a refusal after it has sent the close, so the peer may be done
    before the line is written: a test waits for the line instead of killing the listener at once."""
    import select
    fd = p.stderr.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    while needle not in got:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        got += chunk
    return got


def store(name, blobs):
    d = os.path.join(TMP, name)
    for b in blobs:
        r = subprocess.run([W, "iltp", "put", "--store", d], input=b, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("put: " + r.stderr.decode())
    return d


def listing(d):
    p = os.path.join(d, "blobs")
    return sorted(n for n in os.listdir(p) if not n.startswith(".")) if os.path.isdir(p) else []


def listen(store_dir, cert="good", extra=(), once=True):
    argv = [W, "iltp", "sync", "--listen", "quib:127.0.0.1:0", "--cert", f"{PKI}/{cert}.pem", "--key",
            f"{PKI}/{cert}.key", "--store", store_dir, "--verbose", *extra]
    if once:
        argv.append("--once")
    p = start(argv)
    line = p.stdout.readline().decode()
    m = re.match(r"listening on (quib:\S+)", line)
    if not m:
        raise RuntimeError("no listening line: %r %s" % (line, p.stderr.read(500)))
    return p, m.group(1)


def connect(addr, store_dir, ca="ca", extra=(), env=None, timeout=120):
    argv = [W, "iltp", "sync", "--connect", addr, "--ca", f"{PKI}/{ca}.pem", "--store", store_dir, "--verbose",
            *extra]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def exporter_of(log):
    m = re.search(r"carrier quib peer \S+ assurance (\w+) exporter ([0-9a-f]{64})", log)
    return (m.group(1), bytes.fromhex(m.group(2))) if m else (None, None)


def port_of(addr):
    return int(addr.rsplit(":", 1)[1])


def blobs(tag, count, size):
    out = []
    for i in range(count):
        seed = hashlib.sha256(b"%s-%d" % (tag.encode(), i)).digest()
        b = bytearray()
        while len(b) < size:
            seed = hashlib.sha256(seed).digest()
            b += seed
        out.append(bytes(b[:size]))
    return out


# ---- RFC 8446 section 7.5 from the key log ---------------------------------------------------
def hkdf_expand_label(h, secret, label, context, length):
    full = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(full)]) + full + bytes([len(context)]) + context
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(secret, t + info + bytes([i]), h).digest()
        out += t
        i += 1
    return out[:length]


def tls_exporter(secret, label, context, length):
    h = {32: hashlib.sha256, 48: hashlib.sha384}[len(secret)]
    derived = hkdf_expand_label(h, secret, label, h(b"").digest(), h().digest_size)  # Derive-Secret(S, label, "")
    return hkdf_expand_label(h, derived, b"exporter", h(context).digest(), length)


# ---- the tests -------------------------------------------------------------------------------
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
def sync_small_blobs_and_exporter():
    a = store("small-a", blobs("a", 300, 700))
    b = store("small-b", blobs("b", 200, 1500))
    keylog = os.path.join(TMP, "keys.log")
    lp, addr = listen(a)
    env = dict(os.environ, SSLKEYLOGFILE=keylog)
    rc, clog = connect(addr, b, env=env)
    lrc, _, lerr = stop(lp)
    llog = lerr.decode("utf-8", "replace")
    wktest.check("small: connector clean", rc == 0 and "clean" in clog, wktest.text(clog[-400:]))
    wktest.check("small: listener clean", lrc == 0 and "clean" in llog, wktest.text(llog[-400:]))
    wktest.check("small: union", listing(a) == listing(b) and len(listing(a)) == 500,
                 "%d vs %d" % (len(listing(a)), len(listing(b))))
    ca, ce = exporter_of(clog)
    la, le = exporter_of(llog)
    wktest.check("exporter: both ChannelBound", ca == "ChannelBound" and la == "ChannelBound", "%s %s" % (ca, la))
    wktest.check("exporter: equal on both sides", ce is not None and ce == le)
    secrets = []
    if os.path.exists(keylog):
        for line in open(keylog):
            parts = line.split()
            if len(parts) == 3 and parts[0] == "EXPORTER_SECRET":
                secrets.append(bytes.fromhex(parts[2]))
    wktest.check("exporter: the key log has the EXPORTER_SECRET", len(secrets) == 1, "%d lines" % len(secrets))
    if secrets and ce:
        mine = tls_exporter(secrets[0], LABEL, b"iltp", 32)
        wktest.check("exporter: RFC 8446 7.5 from the key log equals ours", mine == ce,
                     "%s vs %s" % (mine.hex(), ce.hex()))


@test
def sync_every_encoding():
    for enc in ["", "deflate12c", "zstd20c"]:
        a = store("enc-a-" + (enc or "id"), blobs("ea" + enc, 20, 5000))
        b = store("enc-b-" + (enc or "id"), blobs("eb" + enc, 10, 9000))
        lp, addr = listen(a, extra=["--encode", enc])
        rc, clog = connect(addr, b, extra=["--encode", enc])
        lrc, _, lerr = stop(lp)
        wktest.check("encoding %s: both clean" % (enc or "identity"), rc == 0 and lrc == 0,
                     wktest.text(clog[-300:] + lerr.decode()[-300:]))
        wktest.check("encoding %s: union" % (enc or "identity"), listing(a) == listing(b) and len(listing(a)) == 30)


@test
def sync_bulk():
    # one 16 MiB Blob each way, and two more of 16 MiB from the listener
    a = store("bulk-a", blobs("ba", 2, 16 << 20))
    b = store("bulk-b", blobs("bb", 1, 16 << 20))
    lp, addr = listen(a)
    t = time.monotonic()
    rc, clog = connect(addr, b, timeout=300)
    lrc, _, lerr = stop(lp, timeout=60)
    wktest.check("bulk 32 MiB + 16 MiB: both clean", rc == 0 and lrc == 0,
                 wktest.text(clog[-300:] + lerr.decode()[-300:]))
    wktest.check("bulk: union", listing(a) == listing(b) and len(listing(a)) == 3)
    print("    bulk: %.1f s" % (time.monotonic() - t))


@test
def many_connectors_one_socket():
    a = store("many-a", blobs("ma", 5, 3000))
    initial = set(listing(a))
    lp, addr = listen(a, once=False)
    procs = []
    dirs = []
    for i in range(8):
        d = store("many-c%d" % i, blobs("mc%d" % i, 3, 2000))
        dirs.append((d, set(listing(d))))
        procs.append(start([W, "iltp", "sync", "--connect", addr, "--ca", f"{PKI}/ca.pem", "--store", d]))
    codes = [stop(p, timeout=120)[0] for p in procs]
    wktest.check("8 connectors at once on one listener socket: all clean", codes == [0] * 8, str(codes))
    for d, own in dirs:
        names = set(listing(d))
        wktest.check("connector %s holds its own and the listener's Blobs" % os.path.basename(d),
                     names >= initial | own, "%d Blobs" % len(names))
    wktest.check("the listener holds every connector's Blobs", len(listing(a)) == 5 + 8 * 3, str(len(listing(a))))
    lp.kill()
    stop(lp)


def peer_server(mode):
    p = start([PEER, "server", mode, f"{PKI}/good.pem", f"{PKI}/good.key"])
    line = p.stdout.readline().decode()
    m = re.match(r"port (\d+)", line)
    if not m:
        raise RuntimeError("peer: %r" % line)
    return p, int(m.group(1))


OUTCOMES = [
    # mode, expected exit status, expected error name in the connector's log, connector options
    ("normal", 0, None, []),
    ("no-alpn", 4, "WK_ERR_HOST_QUIB_PROFILE", []),
    ("close0", 2, "ILTP_ERR_PREMATURE_EOF", []),
    ("close7", 4, "WK_ERR_HOST_QUIB_APP_CLOSE", []),
    ("reset-stream", 4, "WK_ERR_HOST_QUIB_RESET_STREAM", []),
    ("stop-sending", 4, "WK_ERR_HOST_QUIB_STOP_SENDING", []),
    ("forget-early", 4, "WK_ERR_HOST_QUIB_STATELESS_RESET", []),
    ("forget-late", 0, None, []),
    ("silent", 4, "WK_ERR_HOST_QUIB_IDLE_TIMEOUT", []),
    ("bulk", 0, None, []),
]


@test
def typed_outcomes_against_a_peer_server():
    for mode, want_rc, want_name, extra in OUTCOMES:
        d = store("peer-c-" + mode, blobs("pc" + mode, 2, 1000))
        p, port = peer_server(mode)
        t = time.monotonic()
        rc, clog = connect("quib:127.0.0.1:%d" % port, d, extra=extra, timeout=60)
        took = time.monotonic() - t
        p.kill()
        _, pout, _ = stop(p)
        ok = rc == want_rc and (want_name is None or want_name in clog)
        wktest.check("peer server %s: connector exits %d%s" % (mode, want_rc, " with " + want_name if want_name else ""),
                     ok, "exit %d after %.1f s: %s" % (rc, took, wktest.text(clog[-400:])))
        if mode == "silent":
            wktest.check("idle timeout within 2..10 s", 1.5 < took < 10, "%.1f s" % took)
        if mode == "forget-late":
            wktest.check("forget-late: the peer forgot after the connector's end and reset it (PeerStatelessReset)",
                         b"forgot" in pout and b"stateless reset sent" in pout, wktest.text(pout))
        if mode == "forget-early":
            wktest.check("forget-early: the peer reset the connection", b"stateless reset sent" in pout)


@test
def listener_refuses_a_bad_client_and_keeps_serving():
    a = store("lr-a", blobs("lra", 3, 1000))
    lp, addr = listen(a, once=False)
    port = port_of(addr)
    for mode, want in [("wrong-alpn", "WK_ERR_HOST_QUIB_PROFILE"), ("no-alpn", "WK_ERR_HOST_QUIB_PROFILE"),
                       ("close0", "ILTP_ERR_PREMATURE_EOF")]:
        p = start([PEER, "client", mode, str(port), f"{PKI}/ca.pem"])
        rc, pout, _ = stop(p, timeout=60)
        wktest.check("peer client %s: the peer sees a typed refusal" % mode,
                     mode == "close0" or b"PROFILE" in pout, wktest.text(pout))
    b = store("lr-b", blobs("lrb", 2, 1000))
    rc, clog = connect(addr, b)
    wktest.check("after the bad clients an honest connector syncs", rc == 0 and len(listing(b)) == 5, clog[-300:])
    lp.kill()
    _, _, lerr = stop(lp)
    llog = lerr.decode("utf-8", "replace")
    wktest.check("the listener logged the ALPN refusals (typed)", llog.count("WK_ERR_HOST_QUIB_PROFILE") >= 2,
                 wktest.text(llog[-800:]))
    wktest.check("the listener logged the premature close (typed)", "ILTP_ERR_PREMATURE_EOF" in llog)


@test
def certificate_checks():
    a = store("cert-a", blobs("cea", 1, 100))
    for cert, ca, addr_host, want in [("wronghost", "ca", None, "WK_ERR_HOST_QUIB_CERTIFICATE"),
                                      ("stranger", "ca", None, "WK_ERR_HOST_QUIB_CERTIFICATE"),
                                      ("expired", "ca", None, "WK_ERR_HOST_QUIB_CERTIFICATE"),
                                      ("good", "other-ca", None, "WK_ERR_HOST_QUIB_CERTIFICATE"),
                                      ("good", "ca", "localhost", None)]:
        lp, addr = listen(a, cert=cert)
        if addr_host:
            addr = "quib:%s:%d" % (addr_host, port_of(addr))
        b = os.path.join(TMP, "cert-b-%s-%s" % (cert, ca))
        rc, clog = connect(addr, b, ca=ca, timeout=60)
        lp.kill()
        stop(lp)
        if want:
            wktest.check("certificate %s (trusting %s): refused with %s" % (cert, ca, want), rc == 4 and want in clog,
                         "exit %d: %s" % (rc, wktest.text(clog[-300:])))
        else:
            wktest.check("certificate for localhost, dialled by name: clean", rc == 0, wktest.text(clog[-300:]))


@test
def assurance_overrides():
    a = store("ov-a", blobs("ova", 3, 1000))
    cases = [
        ("default", [], [], 0, "ChannelBound"),
        ("trust keeps the binding", ["--trust-confidential-channel"], ["--trust-confidential-channel"], 0,
         "ChannelBound"),
        ("disabled on both sides", ["--disable-proof"], ["--disable-proof"], 0, "Disabled"),
        ("disabled on the connector only", [], ["--disable-proof"], 4, "Disabled"),
        ("disabled on the listener only", ["--disable-proof"], [], 2, "ChannelBound"),
    ]
    for label, lextra, cextra, want, cassur in cases:
        b = os.path.join(TMP, "ov-b-" + label.replace(" ", "-"))
        lp, addr = listen(a, extra=lextra)
        rc, clog = connect(addr, b, extra=cextra, timeout=60)
        lp.kill()
        _, _, lerr = stop(lp)
        got, _ = exporter_of(clog)
        ok = rc == want and got == cassur
        if want == 4:  # the ChannelBound listener refuses the zero-row proof and closes (code 1)
            ok = ok and "WK_ERR_ILTP_PROOF" in lerr.decode("utf-8", "replace") and "WK_ERR_HOST_QUIB_APP_CLOSE" in clog
        if want == 2:  # the ChannelBound connector refuses the listener's zero-row proof
            ok = ok and "WK_ERR_ILTP_PROOF" in clog
        wktest.check("assurance %s: connector %s, exit %d" % (label, cassur, want), ok,
                     "exit %d, assurance %s: %s" % (rc, got, wktest.text((clog + lerr.decode())[-400:])))


@test
def listener_limits():
    # --max-sessions: two watching connectors hold the listener; a third is refused at once
    a = store("lim-a", blobs("lima", 2, 1000))
    lp, addr = listen(a, once=False, extra=["--max-sessions", "2"])
    watchers = []
    for i in range(2):
        d = store("lim-w%d" % i, blobs("limw%d" % i, 1, 500))
        w = start([W, "iltp", "sync", "--connect", addr, "--ca", f"{PKI}/ca.pem", "--store", d, "--watch"])
        watchers.append(w)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(len(listing(os.path.join(TMP, "lim-w%d" % i))) >= 3 for i in range(2)):
        time.sleep(0.1)
    d = store("lim-third", blobs("limt", 1, 500))
    t = time.monotonic()
    rc, clog = connect(addr, d, timeout=60)
    took = time.monotonic() - t
    wktest.check("--max-sessions 2: the third connection is refused at once (CONNECTION_REFUSED)",
                 rc == 4 and "WK_ERR_HOST_QUIB_TRANSPORT_CLOSE" in clog and "CONNECTION_REFUSED" in clog and took < 5,
                 "exit %d after %.1f s: %s" % (rc, took, wktest.text(clog[-300:])))
    for w in watchers:
        w.send_signal(2)
    codes = [stop(w, timeout=30)[0] for w in watchers]
    wktest.check("watching connectors end cleanly on SIGINT", codes == [0, 0], str(codes))
    rc, clog = connect(addr, d, timeout=60)
    wktest.check("after they close, the listener serves again", rc == 0, wktest.text(clog[-300:]))
    lp.kill()
    _, _, lerr = stop(lp)
    wktest.check("the listener logged the refusal (WK_ERR_HOST_SESSIONS_LIMIT)",
                 "WK_ERR_HOST_SESSIONS_LIMIT" in lerr.decode("utf-8", "replace"))
    # --idle-timeout-ms: a watching connector silent at fixed point is closed by the listener
    lp, addr = listen(a, once=False, extra=["--idle-timeout-ms", "1500"])
    d = store("lim-idle", blobs("limi", 1, 500))
    t = time.monotonic()
    w = start([W, "iltp", "sync", "--connect", addr, "--ca", f"{PKI}/ca.pem", "--store", d, "--watch"])
    rc, _, werr = stop(w, timeout=30)
    took = time.monotonic() - t
    lp.kill()
    _, _, lerr = stop(lp)
    wktest.check("--idle-timeout-ms 1500: the listener closes a silent session at fixed point (1.5..8 s)",
                 "WK_ERR_HOST_IDLE_TIMEOUT" in lerr.decode("utf-8", "replace") and 1.4 < took < 8,
                 "connector exit %d after %.1f s" % (rc, took))
    # --max-memory: the sessions' budget, QUIB carriers' own memory included
    # (identity both ways: the codecs' memory is not what this checks)
    lp, addr = listen(a, once=False, extra=["--max-memory", "260k", "--encode", "", "--decode", ""])
    d = store("lim-mem", blobs("limm", 1, 4 << 20))
    rc, clog = connect(addr, d, timeout=60, extra=["--encode", "", "--decode", ""])
    lp.kill()
    _, _, lerr = stop(lp)
    wktest.check("--max-memory 260k: the session fails with a typed error, and the connector sees it",
                 "WK_ERR_HOST_MEMORY_LIMIT" in lerr.decode("utf-8", "replace") and rc != 0,
                 "exit %d: %s" % (rc, wktest.text(lerr.decode()[-300:])))


@test
def raw_datagrams():
    a = store("raw-a", [])
    lp, addr = listen(a, once=False)
    port = port_of(addr)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    # a long header of another version, padded to 1200 bytes: Version Negotiation listing v1
    dcid, scid = os.urandom(8), os.urandom(8)
    pkt = bytes([0xC0]) + (0x1A2A3A4A).to_bytes(4, "big") + bytes([8]) + dcid + bytes([8]) + scid
    s.sendto(pkt.ljust(1200, b"\0"), ("127.0.0.1", port))
    try:
        resp, _ = s.recvfrom(2048)
    except socket.timeout:
        resp = b""
    ok = len(resp) >= 7 and resp[0] & 0x80 and resp[1:5] == b"\0\0\0\0"
    versions = []
    if ok:
        dl = resp[5]
        sl = resp[6 + dl]
        body = resp[7 + dl + sl:]
        versions = [int.from_bytes(body[i:i + 4], "big") for i in range(0, len(body), 4)]
        ok = resp[6:6 + dl] == scid and resp[7 + dl:7 + dl + sl] == dcid
    wktest.check("another QUIC version gets Version Negotiation listing only v1", ok and versions == [1],
                 "%r %s" % (resp[:16], versions))
    # a short header for a connection the listener does not know: a stateless reset
    trig = bytes([0x40 | 0x1F]) + os.urandom(16) + os.urandom(60)
    s.sendto(trig, ("127.0.0.1", port))
    try:
        resp, _ = s.recvfrom(2048)
    except socket.timeout:
        resp = b""
    wktest.check("an unknown connection ID gets a stateless reset, smaller than the trigger",
                 21 <= len(resp) < len(trig) and resp[0] & 0xC0 == 0x40, "%d bytes" % len(resp))
    s.close()
    lp.kill()
    stop(lp)


GO_PEER = None


def go_peer():
    """Builds tests/host/go/quib_go_peer.go once (offline, GOPATH=/usr/share/gocode)."""
    global GO_PEER
    if GO_PEER:
        return GO_PEER
    exe = os.path.join(TMP, "quib_go_peer")
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOFLAGS="",
               GOCACHE=os.path.join(TMP, "gocache"), CGO_ENABLED="0")
    env.setdefault("HOME", TMP)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "go", "quib_go_peer.go")
    r = subprocess.run(["go", "build", "-o", exe, src], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600, cwd=TMP)
    if not wktest.check("build the quic-go peer (go build, offline)", r.returncode == 0, r.stderr.decode()[-600:]):
        raise RuntimeError("no Go peer")
    GO_PEER = exe
    return exe


def bridged(go_argv, wirekit_argv, timeout=120):
    """Runs the Go peer and a wirekit stdio session joined by a socket pair; returns both
    (exit status, stderr text)."""
    a, b = socket.socketpair()
    g = subprocess.Popen(go_argv, stdin=a.fileno(), stdout=a.fileno(), stderr=subprocess.PIPE)
    PROCS.append(g)
    w = subprocess.Popen(wirekit_argv, stdin=b.fileno(), stdout=b.fileno(), stderr=subprocess.PIPE)
    PROCS.append(w)
    a.close()
    b.close()
    wrc, _, werr = stop(w, timeout)
    grc, _, gerr = stop(g, 30)
    return (grc, gerr.decode("utf-8", "replace")), (wrc, werr.decode("utf-8", "replace"))


def go_exporter(log):
    m = re.search(r"alpn (\S*) exporter ([0-9a-f]{64})", log)
    return (m.group(1), bytes.fromhex(m.group(2))) if m else (None, None)


@test
def interop_quic_go_client():
    peer = go_peer()
    a = store("go-a", blobs("goa", 12, 40000))
    b = store("go-b", blobs("gob", 5, 9000))
    # the stdio side has no exporter: Disabled on both ends (the proof is what ChannelBound adds)
    lp, addr = listen(a, extra=["--disable-proof"])
    (grc, glog), (wrc, wlog) = bridged([peer, "client", addr[len("quib:"):], f"{PKI}/ca.pem"],
                                       [W, "iltp", "sync", "--connect", "stdio", "--store", b])
    lrc, _, lerr = stop(lp)
    llog = lerr.decode("utf-8", "replace")
    alpn, ge = go_exporter(glog)
    _, le = exporter_of(llog)
    wktest.check("quic-go client: ALPN QUIB/1 negotiated", alpn == "QUIB/1", wktest.text(glog[-300:]))
    wktest.check("quic-go client: Go's exporter equals the wirekit listener's", ge is not None and ge == le,
                 "%s vs %s" % (ge and ge.hex(), le and le.hex()))
    wktest.check("quic-go client: the session through it is clean on both sides", wrc == 0 and lrc == 0,
                 wktest.text(wlog[-300:] + llog[-300:]))
    wktest.check("quic-go client: union in both stores", listing(a) == listing(b) and len(listing(a)) == 17)
    wktest.check("quic-go client closed with code 0 and the listener ended cleanly",
                 "closed with code 0" in glog and "clean" in llog)
    # the ALPN is checked: a client offering another one is refused with no_application_protocol
    lp, addr = listen(a)
    r = subprocess.run([peer, "client", addr[len("quib:"):], f"{PKI}/ca.pem", "QUIB/2"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    early = stderr_until(lp, b"WK_ERR_HOST_QUIB_PROFILE", timeout=30)
    lp.kill()
    _, _, lerr = stop(lp)
    lerr = early + lerr
    gerr = r.stderr.decode("utf-8", "replace")
    wktest.check("quic-go client offering QUIB/2: refused (no_application_protocol), the listener says why",
                 r.returncode == 3 and ("0x178" in gerr or "application protocol" in gerr) and
                 "WK_ERR_HOST_QUIB_PROFILE" in lerr.decode("utf-8", "replace"), wktest.text(gerr[-300:]))


@test
def interop_quic_go_server():
    peer = go_peer()
    a = store("gos-a", blobs("gosa", 6, 30000))
    b = store("gos-b", blobs("gosb", 9, 20000))
    # the Go server bridged to a wirekit stdio listener (side0), our quib connector
    sock_a, sock_b = socket.socketpair()
    g = subprocess.Popen([peer, "server", f"{PKI}/good.pem", f"{PKI}/good.key"], stdin=sock_a.fileno(),
                         stdout=sock_a.fileno(), stderr=subprocess.PIPE)
    PROCS.append(g)
    s0 = subprocess.Popen([W, "iltp", "sync", "--listen", "stdio", "--store", a], stdin=sock_b.fileno(),
                          stdout=sock_b.fileno(), stderr=subprocess.PIPE)
    PROCS.append(s0)
    sock_a.close()
    sock_b.close()
    line = g.stderr.readline().decode()
    m = re.match(r"listening (\S+)", line)
    if not wktest.check("quic-go server: listening", m is not None, line):
        return
    rc, clog = connect("quib:" + m.group(1), b, extra=["--disable-proof"], timeout=120)
    s0rc, _, s0err = stop(s0, 60)
    grc, _, gerr = stop(g, 30)
    glog = gerr.decode("utf-8", "replace")
    alpn, ge = go_exporter(glog)
    _, ce = exporter_of(clog)
    wktest.check("quic-go server: ALPN QUIB/1 selected", alpn == "QUIB/1", wktest.text(glog[-300:]))
    wktest.check("quic-go server: Go's exporter equals the wirekit connector's", ge is not None and ge == ce)
    wktest.check("quic-go server: the session through it is clean on both sides", rc == 0 and s0rc == 0,
                 wktest.text(clog[-300:] + s0err.decode()[-300:]))
    wktest.check("quic-go server: union in both stores", listing(a) == listing(b) and len(listing(a)) == 15)
    # a quic-go server that speaks only QUIB/2: our connector's QUIB/1 is refused, typed
    g = subprocess.Popen([peer, "server", f"{PKI}/good.pem", f"{PKI}/good.key", "QUIB/2"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    PROCS.append(g)
    m = re.match(r"listening (\S+)", g.stderr.readline().decode())
    rc, clog = connect("quib:" + m.group(1), os.path.join(TMP, "gos-x"), timeout=60) if m else (-1, "")
    g.kill()
    stop(g)
    wktest.check("quic-go server with only QUIB/2: our connector fails with WK_ERR_HOST_QUIB_PROFILE",
                 rc == 4 and "WK_ERR_HOST_QUIB_PROFILE" in clog, wktest.text(clog[-300:]))


def main():
    global PKI
    try:
        PKI = make_certs()
        for t in TESTS:
            if ONLY and not any(o in t.__name__ for o in ONLY):
                continue
            print("== " + t.__name__, flush=True)
            try:
                t()
            except Exception as e:  # a broken test is a failure, not a crash
                wktest.check(t.__name__ + " ran", False, repr(e))
            finally:
                kill_all()
    finally:
        kill_all()
        if os.environ.get("HOST_QUIB_KEEP") != "1":
            shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(wktest.summary("host_quib_process"))


main()
