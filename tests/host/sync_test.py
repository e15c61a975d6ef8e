#!/usr/bin/python3
"""host_sync: `wirekit iltp sync` between real processes over TCP (127.0.0.1), Unix sockets and
stdio (a socketpair), plus fault injection by a fake peer written here.

    /usr/bin/python3 sync_test.py WIREKIT [TEST-NAME-SUBSTRING...]

Run it with Debian's /usr/bin/python3 (zlib and zstandard). Every server binds to loopback or a
socket in a private temporary directory; every wait is bounded; leftover processes are killed.
Prints `host_sync: N passed, M failed` and exits 1 on any failure.

Environment: HOST_SYNC_VERBOSE=1 (timings, commands), HOST_SYNC_KEEP=1 (keep the temporary
directory), HOST_SYNC_MANY_ON_DISK=1 (the 10,000-Blob case on the disk instead of /dev/shm).
The fake peer is side1 and offers no Decode, so the listener writes identity to it; what it
sends may be zstd20c (python zstandard) or deflate12c (zlib) with the wirekit dictionary.
"""
import json
import os
import random
import re
import select as select_mod
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synclib  # noqa: E402

if len(sys.argv) < 2:
    print("usage: sync_test.py WIREKIT [TEST-NAME-SUBSTRING...]", file=sys.stderr)
    sys.exit(2)
synclib.setup(sys.argv[1], sys.argv[2:])
from synclib import *  # noqa: E402,F401,F403
from synclib import W, ONLY, TMP, T0  # noqa: E402


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def tdir(name, base=None):
    d = os.path.join(base or TMP, name)
    os.makedirs(d, exist_ok=True)
    return d


def pair_sync(name, a_blobs, b_blobs, addr_kind="tcp", lextra=(), cextra=(), timeout=60, base=None):
    """Listener --once on store A, connector on store B; both end with the union. Returns
    (listener summary, connector summary, union hashes)."""
    d = tdir(name, base)
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    ha = make_store(a, a_blobs) if not isinstance(a_blobs, str) else {h: None for h in ls(copy_store(a_blobs, a))}
    hb = make_store(b, b_blobs) if not isinstance(b_blobs, str) else {h: None for h in ls(copy_store(b_blobs, b))}
    union = set(ha) | set(hb)
    addr = "tcp:127.0.0.1:0" if addr_kind == "tcp" else "unix:" + os.path.join(d, "s.sock")
    t = time.monotonic()
    lst = Listener(a, addr, lextra, once=True)
    try:
        cs = sync_ok(lst.addr, b, cextra, timeout)
        rc = lst.wait(timeout)
        check(rc == 0, "listener --once exited %d: %s" % (rc, lst.err()[-600:]))
        ls_ = one_summary(lst.err(), "listener")
    finally:
        lst.stop()
    log("%s: %.3f s" % (name, time.monotonic() - t))
    check(ls_["recv"]["blobs"] == len(union - set(ha)), "listener received %d Blobs, expected %d"
          % (ls_["recv"]["blobs"], len(union - set(ha))))
    check(cs["recv"]["blobs"] == len(union - set(hb)), "connector received %d Blobs, expected %d"
          % (cs["recv"]["blobs"], len(union - set(hb))))
    check(ls_["send"]["blobs"] == cs["recv"]["blobs"] and cs["send"]["blobs"] == ls_["recv"]["blobs"],
          "send/recv Blob counts disagree")
    check(ls_["send"]["wire"] == cs["recv"]["wire"] and cs["send"]["wire"] == ls_["recv"]["wire"],
          "wire byte counts disagree: listener %s/%s connector %s/%s" % (ls_["send"]["wire"], ls_["recv"]["wire"],
                                                                         cs["send"]["wire"], cs["recv"]["wire"]))
    big = len(union) > 1000
    check_store(a, union, full_hash=not big)
    check_store(b, union, full_hash=not big)
    return ls_, cs, union, a, b


@test
def empty_stores():
    ls_, cs, union, a, b = pair_sync("empty", [], [])
    check(not union and ls_["recv"]["rounds"] == 1 and cs["recv"]["rounds"] == 1,
          "empty stores: expected one round, got %s/%s" % (ls_["recv"]["rounds"], cs["recv"]["rounds"]))


@test
def disjoint_tcp():
    ls_, cs, union, a, b = pair_sync("disjoint", data_set("da", 5), data_set("db", 7))
    check(len(union) == 12 and cs["recv"]["rounds"] == 2, "disjoint: %d Blobs, %s rounds" % (len(union), cs["recv"]["rounds"]))
    for h in list(union)[:3]:
        check(get(a, h) == get(b, h), "get differs between the stores")


@test
def overlapping_unix():
    shared = data_set("shared", 6)
    ls_, cs, union, a, b = pair_sync("overlap", shared + data_set("oa", 3), shared + data_set("ob", 4), "unix")
    check(len(union) == 13 and ls_["recv"]["blobs"] == 4 and cs["recv"]["blobs"] == 3, "overlap counts")


@test
def identical_stores():
    same = data_set("same", 8)
    ls_, cs, union, a, b = pair_sync("identical", same, same)
    check(ls_["send"]["blobs"] == 0 and cs["send"]["blobs"] == 0 and cs["recv"]["rounds"] == 1,
          "identical stores moved Blobs or took more than one round")


@test
def empty_blob_and_one_sided():
    # the empty Blob (its hash is the seed's svyLz... value) and a Blob only on the connector side
    ls_, cs, union, a, b = pair_sync("emptyblob", [], [b"", b"x"])
    check("svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO" in union, "the empty Blob's hash")
    check(get(a, "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO") == b"", "empty Blob data")


@test
def stdio_socketpair():
    d = tdir("stdio")
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    shared = data_set("sshared", 3)
    ha = make_store(a, shared + data_set("sa", 4))
    hb = make_store(b, shared + data_set("sb", 2))
    union = set(ha) | set(hb)
    s0, s1 = socket.socketpair()
    ef0, ef1 = open(os.path.join(d, "l.err"), "w+b"), open(os.path.join(d, "c.err"), "w+b")
    try:
        pl = track(subprocess.Popen([W, "iltp", "sync", "--listen", "stdio", "--store", a],
                                    stdin=s0.fileno(), stdout=s0.fileno(), stderr=ef0))
        pc = track(subprocess.Popen([W, "iltp", "sync", "--connect", "stdio", "--store", b],
                                    stdin=s1.fileno(), stdout=s1.fileno(), stderr=ef1))
        s0.close()
        s1.close()
        rl, rc = pl.wait(timeout=30), pc.wait(timeout=30)
        ef0.seek(0)
        ef1.seek(0)
        el, ec = ef0.read().decode(), ef1.read().decode()
        check(rl == 0 and rc == 0, "stdio: listener %d, connector %d: %s | %s" % (rl, rc, el, ec))
        sl, sc = one_summary(el, "stdio listener"), one_summary(ec, "stdio connector")
        check(sl["recv"]["outcome"] == "clean" and sc["recv"]["outcome"] == "clean", "stdio not clean")
        check(sl["recv"]["blobs"] == 2 and sc["recv"]["blobs"] == 4, "stdio Blob counts")
        check(sl["send"]["enc"] == "zstd20c" and sl["recv"]["enc"] == "zstd20c", "stdio default encodings")
    finally:
        ef0.close()
        ef1.close()
    check_store(a, union)
    check_store(b, union)


@test
def put_exactly_32MiB():
    # Lace-060: Blob data is at most 32 MiB, so exactly 32 MiB is a valid Blob
    d = tdir("put32")
    data = b"\xa5" * BLOB_CAP
    r = wk("iltp", "put", "--store", os.path.join(d, "s"), input=data)
    check(r.returncode == 0, "put of exactly 32 MiB of data exited %d: %s" % (r.returncode, r.stderr.decode().strip()))
    r = wk("iltp", "put", "--store", os.path.join(d, "s"), input=data + b"\xa5")
    check(r.returncode != 0 and b"ILTP_ERR_BLOB_TOO_LARGE" in r.stderr, "put of 32 MiB + 1 was not refused")


@test
def one_32MiB_blob():
    d = tdir("big")
    src = os.path.join(d, "src")
    data = random.Random(32).randbytes(BLOB_CAP)  # incompressible, exactly at the cap
    h = blob_hash(data)
    r = wk("iltp", "put", "--store", src, input=data)
    if r.returncode != 0:  # see put_exactly_32MiB: fill the store over the wire instead
        seed_store(src, {h: data})
    check(ls(src) == [h], "the 32 MiB Blob is not in the source store")
    small = data_set("bs", 2)
    t = time.monotonic()
    ls_, cs, union, a, b = pair_sync("big", src, small, timeout=120)
    dt = time.monotonic() - t
    log("32 MiB sync %.2f s" % dt)
    check(cs["recv"]["blobs"] == 1 and cs["recv"]["raw"] > BLOB_CAP, "connector did not receive the big Blob")
    check(get(b, h) == data, "the 32 MiB Blob differs after sync")
    # and the other way: the connector pushes it to an empty listener, identity both ways
    ls2, cs2, union2, a2, b2 = pair_sync("big-push", [], src, cextra=("--encode", ""), lextra=("--encode", ""),
                                         timeout=120)
    check(ls2["recv"]["enc"] == "identity" and ls2["recv"]["blobs"] == 1, "pushed big Blob")
    check(get(a2, h) == data, "the pushed 32 MiB Blob differs")


@test
def ten_thousand_small_blobs():
    # The store writes, fsyncs and renames every Blob and fsyncs its directory: about 20,000
    # fsyncs here, 30 s to several minutes on a shared disk. Unless HOST_SYNC_MANY_ON_DISK=1,
    # these stores live on tmpfs (/dev/shm), where fsync is cheap: this case is about the
    # protocol and the host at 10,000 Blobs; the other cases use the disk.
    base = None
    if os.environ.get("HOST_SYNC_MANY_ON_DISK") != "1" and os.access("/dev/shm", os.W_OK):
        base = tempfile.mkdtemp(prefix="wk-sync-many-", dir="/dev/shm")
    try:
        many(base)
    finally:
        if base:
            shutil.rmtree(base, ignore_errors=True)


def many(base):
    d = tdir("many", base)
    src = os.path.join(d, "src")
    blobs = data_set("m", 10000, size=(8, 120), seed=10000)
    t = time.monotonic()
    bh = {blob_hash(x): x for x in blobs}
    seed_store(src, bh, timeout=120)
    log("seeded 10,000 Blobs through the fake peer in %.2f s" % (time.monotonic() - t))
    check(check_store(src, bh, full_hash=False, gets=3) == set(bh), "seeded store")
    # sync them to a connector that holds 100 of them and 50 of its own
    own = data_set("mown", 50)
    seedb = os.path.join(d, "b0")
    make_store(seedb, blobs[:100] + own)
    t = time.monotonic()
    long = ("--timeout-ms", "120000")  # a round moves 9,950 fsynced Blobs: see seed_store
    ls_, cs, union, a, b = pair_sync("many-sync", src, seedb, lextra=long, cextra=long, timeout=120, base=base)
    dt = time.monotonic() - t
    log("10,000-Blob sync %.2f s" % dt)
    check(len(union) == 10050 and cs["recv"]["blobs"] == 9900 and ls_["recv"]["blobs"] == 50,
          "10,000: union %d, connector got %d, listener got %d" % (len(union), cs["recv"]["blobs"], ls_["recv"]["blobs"]))
    for h in random.sample(sorted(bh), 5):
        check(get(b, h) == bh[h], "a synced small Blob differs")


ENC_LISTS = ["", "deflate12c", "zstd20c", "deflate12c,zstd20c", "zstd20c,deflate12c"]


@test
def every_offer_pairing():
    """Every (sender Encode, receiver Decode) pair occurs in each direction: 25 sessions, the
    listener->connector pair i with the connector->listener pair (7i+3) mod 25."""
    d = tdir("offers")
    tmpl_a, tmpl_b = os.path.join(d, "ta"), os.path.join(d, "tb")
    shared = data_set("oshared", 2)
    ha = make_store(tmpl_a, shared + data_set("ota", 2))
    hb = make_store(tmpl_b, shared + data_set("otb", 3))
    union = set(ha) | set(hb)
    pairs = [(e, dd) for e in ENC_LISTS for dd in ENC_LISTS]
    seen = {}
    for i in range(25):
        l_enc, c_dec = pairs[i]
        c_enc, l_dec = pairs[(7 * i + 3) % 25]
        a, b = copy_store(tmpl_a, os.path.join(d, "a%d" % i)), copy_store(tmpl_b, os.path.join(d, "b%d" % i))
        addr = "tcp:127.0.0.1:0" if i % 2 else "unix:" + os.path.join(d, "s%d.sock" % i)
        lst = Listener(a, addr, ["--encode", l_enc, "--decode", l_dec], once=True)
        try:
            cs = sync_ok(lst.addr, b, ["--encode", c_enc, "--decode", c_dec], who="connector %d" % i)
            check(lst.wait(30) == 0, "listener %d failed: %s" % (i, lst.err()))
            lsum = one_summary(lst.err(), "listener %d" % i)
        finally:
            lst.stop()
        down, up = select(l_enc, c_dec), select(c_enc, l_dec)
        got = (lsum["send"]["enc"], cs["recv"]["enc"], cs["send"]["enc"], lsum["recv"]["enc"])
        check(got == (down, down, up, up),
              "session %d (listener --encode '%s' --decode '%s', connector --encode '%s' --decode '%s'): "
              "selected listener send/connector recv %s/%s, connector send/listener recv %s/%s; expected %s, %s"
              % (i, l_enc, l_dec, c_enc, c_dec, got[0], got[1], got[2], got[3], down, up))
        seen[down] = seen.get(down, 0) + 1
        check_store(a, union, gets=1)
        check_store(b, union, gets=1)
    check(set(seen) == {"identity", "deflate12c", "zstd20c"}, "not every encoding was selected: %s" % seen)


@test
def form_1_0():
    # the 1.0 preface carries no offers: identity both ways, whatever the lists say
    for i, addr_kind in enumerate(("tcp", "unix")):
        ls_, cs, union, a, b = pair_sync("form10-%d" % i, data_set("fa%d" % i, 3), data_set("fb%d" % i, 2), addr_kind,
                                         lextra=("--form", "1.0"), cextra=("--form", "1.0", "--encode", "zstd20c"))
        check((ls_["send"]["enc"], ls_["recv"]["enc"], cs["send"]["enc"], cs["recv"]["enc"]) == ("identity",) * 4,
              "form 1.0 selected an encoding")
        check(ls_["send"]["wire"] == ls_["send"]["raw"] + 59, "form 1.0: wire bytes = raw bytes + the 59-byte preface")


@test
def form_0_13_against_1_0():
    for lf, cf in (("1.0", "0.13"), ("0.13", "1.0")):
        d = tdir("formmix-" + lf)
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        make_store(a, data_set("xa" + lf, 1))
        make_store(b, data_set("xb" + lf, 1))
        lst = Listener(a, "tcp:127.0.0.1:0", ["--form", lf], once=True)
        try:
            rc, err = connector(lst.addr, b, ["--form", cf], timeout=20)
            lrc = lst.wait(20)
            lerr = lst.err()
        finally:
            lst.stop()
        check(rc == 2 and lrc == 2, "mixed forms: connector %d, listener %d (expected 2, 2)" % (rc, lrc))
        check("failed: ILTP_ERR_VERSION" in err and "failed: ILTP_ERR_VERSION" in lerr,
              "mixed forms: expected ILTP_ERR_VERSION: %s | %s" % (err.strip(), lerr.strip()))
        check(len(ls(a)) == 1 and len(ls(b)) == 1, "a failed session changed a store")


@test
def listener_sequential_and_concurrent():
    d = tdir("multi")
    srv = os.path.join(d, "srv")
    base = set(make_store(srv, data_set("srvbase", 5)))
    lst = Listener(srv, "tcp:127.0.0.1:0")
    try:
        expect = set(base)
        # sequential
        for i in range(4):
            st = os.path.join(d, "seq%d" % i)
            own = set(make_store(st, data_set("seq%d" % i, 3)))
            before = set(expect)
            sync_ok(lst.addr, st, who="sequential connector %d" % i)
            expect |= own
            check_store(st, before | own)
        check(lst.alive(), "listener exited after sequential sessions")
        lst.wait_sessions(4)
        check(check_store(srv, expect) == expect, "listener store after sequential sessions")
        # concurrent: 12 connectors at once, half over a second listener address kind? (same listener)
        procs = []
        stores = []
        for i in range(12):
            st = os.path.join(d, "con%d" % i)
            own = set(make_store(st, data_set("con%d" % i, 4) + data_set("conshared", 2)))
            stores.append((st, own))
        before = set(expect)
        for st, own in stores:
            procs.append(track(subprocess.Popen([W, "iltp", "sync", "--connect", lst.addr, "--store", st],
                                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.PIPE)))
        errs = []
        for i, p in enumerate(procs):
            try:
                _, e = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                raise Fail("concurrent connector %d hung" % i)
            errs.append((p.returncode, e.decode()))
        for i, (rc, e) in enumerate(errs):
            check(rc == 0, "concurrent connector %d exited %d: %s" % (i, rc, e.strip()[-400:]))
        for st, own in stores:
            expect |= own
        summ = lst.wait_sessions(16)
        for sid, v in summ.items():
            check(v["recv"]["outcome"] == "clean", "listener session %d: %s" % (sid, v["recv"]["outcome"]))
        for st, own in stores:
            got = check_store(st, gets=1)
            check(got >= before | own, "a concurrent connector lacks Blobs it should hold")
        check(check_store(srv, expect) == expect, "listener store after concurrent sessions")
        # a final connector gets everything
        last = os.path.join(d, "last")
        os.makedirs(last)
        sync_ok(lst.addr, last, who="final connector")
        check_store(last, expect, gets=2)
        check(lst.alive(), "listener exited")
    finally:
        lst.stop()


# ---------------------------------------------------------------------------------------------
# faults: one listener (no --once, --timeout-ms 1000) serves every fake peer and, after each,
# a normal connector. The listener numbers sessions in accept order; we connect one at a time,
# so the n-th connection is session n.
class FaultBed:
    def __init__(self):
        d = tdir("faults")
        self.d = d
        self.srv = os.path.join(d, "srv")
        self.expect = set(make_store(self.srv, data_set("fbase", 3)))
        self.lst = Listener(self.srv, "tcp:127.0.0.1:0", ["--timeout-ms", "1000"])
        self.conns = 0
        self.k = 0

    def _id(self):
        self.conns += 1
        return self.conns

    def peer(self, enc=None):
        p = Peer(self.lst.addr, enc)
        p.sid = self._id()
        return p

    def sock(self):
        s = sock_connect(self.lst.addr)
        return s, self._id()

    def session(self, sid, timeout=10):
        end = time.monotonic() + timeout
        while True:
            s = summaries(self.lst.err()).get(sid, {})
            if "recv" in s:
                return s
            if time.monotonic() > end:
                raise Fail("listener session %d did not finish within %d s; stderr tail: %s"
                           % (sid, timeout, self.lst.err()[-600:]))
            time.sleep(0.02)

    def fault_done(self, sid, name, timeout=10):
        """Listener session sid failed with the typed error `name`."""
        s = self.session(sid, timeout)
        out = s["recv"]["outcome"]
        err = self.lst.err()
        check(out == "failed: " + name, "listener session %d: expected failed: %s, got %r; its lines: %s"
              % (sid, name, out, "\n".join(l for l in err.splitlines() if l.startswith("session %d" % sid))))
        check(re.search(r"^session %d: %s\b" % (sid, name), err, re.M),
              "listener printed no '%s' error line for session %d" % (name, sid))
        return s

    def clean(self, sid):
        s = self.session(sid)
        check(s["recv"]["outcome"] == "clean", "listener session %d: %s" % (sid, s["recv"]["outcome"]))
        return s

    def good_after(self):
        """A normal connector still syncs cleanly; the store holds exactly the verified union."""
        self.k += 1
        st = os.path.join(self.d, "after%d" % self.k)
        own = set(make_store(st, data_set("after%d" % self.k, 2)))
        check(self.lst.alive(), "the listener died")
        sid = self._id()
        sync_ok(self.lst.addr, st, who="connector after the fault")
        self.clean(sid)
        self.expect |= own
        check_store(st, self.expect, gets=1)
        check_store(self.srv, self.expect)

    def fresh(self, tag, n=1):
        blobs = data_set("fault-" + tag, n)
        return {blob_hash(x): x for x in blobs}

    def resync(self):
        """After a failed case: count the connections the listener has seen."""
        time.sleep(0.3)
        s = summaries(self.lst.err())
        self.conns = max(self.conns, max(s) if s else 0)


FAULTS = []


def fault(fn):
    FAULTS.append(fn)
    return fn


@fault
def good_fake_peer_identity(bed):
    """(control) the fake peer's well-formed session is clean, so the faults below are its only errors"""
    bl = bed.fresh("good-id", 3)
    p = bed.peer()
    try:
        p.establish()
        have, rounds = p.sync(bl)
    finally:
        p.close()
    out = bed.clean(p.sid)["recv"]
    check(out["blobs"] == 3 and rounds == 2, "fake peer identity session: %s, %d rounds" % (out, rounds))
    bed.expect |= set(bl)
    check(set(have) == bed.expect, "fake peer did not receive the listener's store")


@fault
def good_fake_peer_zstd(bed):
    """(control) the same over zstd20c from python-zstandard, with the end mark"""
    check(zstandard is not None, "python zstandard is not available")
    bl = bed.fresh("good-zstd", 2)
    p = bed.peer(ZstdEnc)
    try:
        p.establish()
        p.sync(bl)
    finally:
        p.close()
    out = bed.clean(p.sid)["recv"]
    check(out["enc"] == "zstd20c" and out["blobs"] == 2, "fake peer zstd session: %s" % out)
    bed.expect |= set(bl)


@fault
def good_fake_peer_deflate(bed):
    """(control) the same over deflate12c from zlib, with the end mark"""
    bl = bed.fresh("good-deflate", 2)
    p = bed.peer(DeflateEnc)
    try:
        p.establish()
        p.sync(bl)
    finally:
        p.close()
    out = bed.clean(p.sid)["recv"]
    check(out["enc"] == "deflate12c" and out["blobs"] == 2, "fake peer deflate session: %s" % out)
    bed.expect |= set(bl)


@fault
def listener_opens_round_at_fixed_point(bed):
    """a fake peer idles at fixed point; a connector brings a new Blob; the listener opens a round
    with the fake peer (its advertisement is the round start), which then completes cleanly"""
    p = bed.peer()
    try:
        p.establish()
        have = {}
        p.rounds(have)
        check(set(have) == bed.expect, "fake peer did not receive the listener's store")
        # A connector stores new Blobs at the listener, which opens a round with the fake peer as
        # soon as the first is stored, under the fault bed's 1000 ms phase deadline: the peer
        # answers every round the listener opens while the connector is still running (under
        # ASan on a loaded machine the connector takes longer than that deadline).
        errs = []

        def after():
            try:
                bed.good_after()  # stores new Blobs at the listener
            except BaseException as e:  # noqa: B036 (reported below)
                errs.append(e)

        t = threading.Thread(target=after)
        t.start()
        end = time.monotonic() + 120
        while time.monotonic() < end and (t.is_alive() or set(have) != bed.expect):
            if not p.rbuf and not select_mod.select([p.sock], [], [], 0.05)[0]:
                continue  # no round opened yet
            p.rounds(have)  # the listener's advertisement is on its way
        t.join()
        if errs:
            raise errs[0]
        check(set(have) == bed.expect, "fake peer did not receive the new Blobs in new rounds")
        p.finish()
    finally:
        p.close()
    s = bed.clean(p.sid)
    check(s["recv"]["rounds"] >= 3, "listener session: %s rounds" % s["recv"]["rounds"])


@fault
def connect_then_close(bed):
    s, sid = bed.sock()
    s.shutdown(socket.SHUT_WR)
    try:
        s.settimeout(10)
        while s.recv(65536):
            pass
    finally:
        s.close()
    bed.fault_done(sid, "ILTP_ERR_PREMATURE_EOF")


@fault
def connect_then_idle(bed):
    s, sid = bed.sock()
    t = time.monotonic()
    try:
        s.settimeout(10)
        while s.recv(65536):  # the listener's preface, then its close at the deadline
            pass
        dt = time.monotonic() - t
    finally:
        s.close()
    check(0.9 <= dt <= 3.0, "the prefacing deadline of 1000 ms closed the connection after %.2f s" % dt)
    bed.fault_done(sid, "ILTP_ERR_DEADLINE")


@fault
def idle_mid_round(bed):
    """established, advertised, then silent: the round's deadline"""
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block([]))
        p.read_adv()
        t = time.monotonic()
        p.read_eof(10)
        dt = time.monotonic() - t
    finally:
        p.close()
    check(dt <= 3.0, "round deadline after %.2f s" % dt)
    bed.fault_done(p.sid, "ILTP_ERR_DEADLINE")


@fault
def eof_at_boundary_mid_round(bed):
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block(sorted(bed.fresh("boundary"))))
        p.read_adv()
        p.half_close()
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_PREMATURE_EOF")


@fault
def eof_mid_record(bed):
    bl = bed.fresh("midrec", 2)
    hs = sorted(bl)
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block(hs))
        p.read_adv()
        p.items(req_block([]))
        asked = p.read_req()
        check(asked == hs, "listener asked %s" % asked)
        rec = blob_record(bl[hs[1]])
        p.items(blob_record(bl[hs[0]]), rec[:len(rec) // 2 + 3])  # one whole, one half
        p.half_close()
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_TRUNCATED")
    # the complete Blob was verified and may be stored (its commit runs on a worker; the listener
    # writes the session's summary, which fault_done waited for, only once its commits have ended,
    # so the store is final here); the half one must not be
    wait_no_temps(bed.srv)
    held = ls(bed.srv)
    check(hs[1] not in held, "a half-received Blob is in the store")
    if hs[0] in held:
        bed.expect.add(hs[0])


def corrupt_stream(bed, enc, name):
    bl = bed.fresh("corrupt-" + enc.token, 1)
    (h, data), = bl.items()
    p = bed.peer(enc)
    try:
        p.establish()
        p.items(adv_block([h]))
        p.read_adv()
        p.items(req_block([]))
        check(p.read_req() == [h], "listener did not ask for the Blob")
        rec = blob_record(data)
        p.items(rec[:len(rec) // 2])  # a valid flushed batch: half the record
        p.raw(enc.garbage + os.urandom(64))  # then a malformed block
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, name)
    check(h not in ls(bed.srv), "the Blob of a corrupted stream is in the store")


@fault
def corrupted_zstd_stream(bed):
    check(zstandard is not None, "python zstandard is not available")
    corrupt_stream(bed, ZstdEnc, "ILTP_ERR_ZSTD_MALFORMED")


@fault
def corrupted_deflate_stream(bed):
    corrupt_stream(bed, DeflateEnc, "ILTP_ERR_DEFLATE_MALFORMED")


@fault
def compressed_without_end_mark(bed):
    """fixed point reached, then EOF without the zstd end mark: truncation, not a clean close"""
    check(zstandard is not None, "python zstandard is not available")
    p = bed.peer(ZstdEnc)
    try:
        p.establish()
        p.items(adv_block([]))
        p.read_adv()
        p.items(req_block([]))
        p.read_req()
        p.items(FENCE)
        p.expect("facts")
        p.half_close()
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_TRUNCATED")


@fault
def unrequested_response(bed):
    bl = bed.fresh("unrequested", 1)
    (h, data), = bl.items()
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block([]))
        p.read_adv()
        p.items(req_block([]))
        check(p.read_req() == [], "listener asked for something")
        p.items(blob_record(data))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_SESSION_ORDER")
    check(h not in ls(bed.srv), "an unrequested Blob is in the store")


@fault
def duplicate_advertisement(bed):
    bl = bed.fresh("dupadv", 2)
    hs = sorted(bl)
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block([hs[0], hs[1], hs[1]]))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_SESSION_ORDER")
    check(not set(hs) & set(ls(bed.srv)), "a Blob of a failed session is in the store")


@fault
def blob_with_wrong_hash(bed):
    bl = bed.fresh("wronghash", 1)
    (h, data), = bl.items()
    p = bed.peer()
    try:
        p.establish()
        p.items(adv_block([h]))
        p.read_adv()
        p.items(req_block([]))
        check(p.read_req() == [h], "listener did not ask for the Blob")
        bad = bytes([data[0] ^ 1]) + data[1:]  # same length, other content, the advertised name
        p.items(blob_record(bad, h))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_RECORD_HASH")
    check(h not in ls(bed.srv) and blob_hash(bad) not in ls(bed.srv), "a Blob with a wrong hash is in the store")


@fault
def preface_inside_zstd_stream(bed):
    """where the proof is due, a preface compressed into the stream"""
    check(zstandard is not None, "python zstandard is not available")
    p = bed.peer(ZstdEnc)
    try:
        p.raw(p.preface())
        p.items(p.preface(encode=False))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_PREFACE_ENCODED")


@fault
def preface_inside_deflate_stream_mid_round(bed):
    p = bed.peer(DeflateEnc)
    try:
        p.establish()
        p.items(adv_block([]))
        p.read_adv()
        p.items(p.preface(encode=False))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_PREFACE_ENCODED")


@fault
def preface_inside_zstd_stream_at_operand(bed):
    """where the operand Blob is due: still a preface decoded out of a compressed stream"""
    check(zstandard is not None, "python zstandard is not available")
    p = bed.peer(ZstdEnc)
    try:
        p.raw(p.preface())
        p.items(b"\n")
        p.expect("preface")
        p.expect("facts")
        p.expect("record")
        p.items(p.preface(encode=False))
        p.read_eof()
    finally:
        p.close()
    bed.fault_done(p.sid, "ILTP_ERR_PREFACE_ENCODED")


def repreface(bed, where):
    """A fresh raw preface (identity) replaces the logical session (Lace-060 "Re-prefacing and
    hard replacement"); the fresh session then syncs to fixed point."""
    bl = bed.fresh("repreface-" + where, 1)
    p = bed.peer()
    try:
        p.raw(p.preface())
        p.items(b"\n")
        p.expect("preface")
        p.expect("facts")
        p.expect("record")
        if where == "round":
            p.items(blob_record(b"fake peer operand\n"))
            p.read_adv()
        p.raw(p.preface())
        for _ in range(10):  # the listener's old items, then its fresh preface
            k, v = p.item()
            if k == "preface":
                break
        else:
            raise Fail("no fresh preface from the listener")
        p.items(b"\n")  # the fresh session's proof
        check(p.expect("facts") == [], "fresh proof")
        p.expect("record")
        p.items(blob_record(b"fake peer operand\n"))
        have, rounds = p.sync(bl)
    except (EOFError, Fail) as e:
        p.close()
        s = bed.session(p.sid)
        raise Fail("re-preface %s: %s; listener: %s" % (where, e or "EOF", s["recv"]["outcome"]))
    finally:
        p.close()
    bed.clean(p.sid)
    bed.expect |= set(bl)
    check(set(have) == bed.expect, "fresh session did not sync")


@fault
def repreface_mid_round(bed):
    repreface(bed, "round")


@fault
def repreface_where_operand_is_due(bed):
    repreface(bed, "operand")


@test
def faults():
    """Every fault case above against one listener (run_faults prints a line per case); fails if
    any case failed."""
    results = []
    run_faults(results)
    bad = [r[0] for r in results if not r[1]]
    check(not bad, "fault cases failed: %s" % ", ".join(bad))


@test
def fixed_point_crossing():
    """A fake listener (side0) reaches fixed point with a real connector, then (its store having
    advanced) opens a new round with an advertisement that crosses the connector's end mark:
    legal per Lace-060 ("At fixed point, a local store advance starts local Advertising"). The
    connector may not report a local failure (exit 1) for it."""
    d = tdir("crossing")
    st = os.path.join(d, "c")
    mine = make_store(st, data_set("cross", 2))
    srv_blobs = {blob_hash(x): x for x in data_set("crosssrv", 2)}
    ls_ = socket.socket()
    ls_.bind(("127.0.0.1", 0))
    ls_.listen(1)
    ls_.settimeout(10)
    port = ls_.getsockname()[1]
    p = track(subprocess.Popen([W, "iltp", "sync", "--connect", "tcp:127.0.0.1:%d" % port, "--store", st],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    conn = None
    try:
        conn, _ = ls_.accept()
        f = Peer(None, sock=conn)
        f.raw(f.preface())
        f.items(b"\n")  # side0 proof
        f.expect("preface")
        check(f.expect("facts") == [], "side1 proof")
        f.items(blob_record(b"fake listener operand\n"))
        f.expect("record")
        have = dict(srv_blobs)
        f.rounds(have)
        check(set(have) == set(mine) | set(srv_blobs), "fake listener: no union")
        time.sleep(0.3)  # the connector is at fixed point: end mark, half-close
        newb = b"advanced at fixed point"
        have[blob_hash(newb)] = newb
        f.items(adv_block(sorted(have)))
        try:
            f.read_eof(10)  # whatever the connector does with it, it ends its side
        except Fail:
            pass
        f.half_close()
        try:
            _, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Fail("the connector hung after the crossing")
        err = err.decode()
        check(p.returncode != 1 and "WK_ERR_STATE" not in err,
              "crossing: the connector exited %d with a local failure: %s" % (p.returncode, err.strip()))
    finally:
        if conn:
            conn.close()
        ls_.close()


@test
def listener_survives_vanishing_peer():
    """A peer that asks for a large Blob, half-closes, and then resets the connection (SO_LINGER 0)
    while the listener is still writing the response (what a connector that hits its deadline
    does): that session fails as a transport failure, and the listener (started with SIGPIPE at
    its default disposition, as from a shell) keeps serving."""
    d = tdir("vanish")
    srv = os.path.join(d, "srv")
    big = random.Random(16).randbytes(16 << 20)
    hb = make_store(srv, [big])
    lst = Listener(srv, "tcp:127.0.0.1:0")
    try:
        p = Peer(lst.addr)
        try:
            p.establish()
            p.items(adv_block([]))
            check(p.read_adv() == sorted(hb), "listener advertisement")
            p.items(req_block(sorted(hb)))
            check(p.read_req() == [], "listener asked for something")
            p.half_close()  # our FIN: the listener's socket goes to CLOSE_WAIT (it is not reading)
            time.sleep(0.3)  # the listener is writing the 16 MiB response into a full socket
            p.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        finally:
            p.close()  # unread data + linger 0: RST, so the listener's next write fails with EPIPE
        end = time.monotonic() + 5
        while time.monotonic() < end and lst.alive() and 1 not in summaries(lst.err()):
            time.sleep(0.05)
        if not lst.alive():
            rc = lst.p.returncode
            raise Fail("the listener died (exit %s%s) when a peer reset its connection mid-response; "
                       "stderr: %s" % (rc, " = SIGPIPE" if rc == -13 else "", lst.err().strip()[-300:]))
        s1 = lst.wait_sessions(1)[1]
        check(s1["recv"]["outcome"].startswith("failed:"), "the reset session: %s" % s1["recv"]["outcome"])
        st = os.path.join(d, "c")
        os.makedirs(st)
        sync_ok(lst.addr, st, who="connector after the reset")
        check(get(st, sorted(hb)[0]) == big, "the big Blob after the reset")
        check(lst.alive(), "the listener exited")
    finally:
        lst.stop()


# ---- issue 14: full duplex, store watch, signals, crash leftovers, --json, --progress --------
@test
def bulk_both_ways_zstd():
    """16+9 MiB against 16+5 MiB of random Blobs under zstd20c both ways: both directions full at
    once (this deadlocked when a session stopped reading while it wrote)."""
    r = random.Random(141)
    ls_, cs, union, a, b = pair_sync("bulk-zstd", [r.randbytes(16 << 20), r.randbytes(9 << 20)],
                                     [r.randbytes(16 << 20), r.randbytes(5 << 20)], timeout=120)
    check(cs["send"]["enc"] == "zstd20c" and cs["recv"]["enc"] == "zstd20c", "encodings %s/%s"
          % (cs["send"]["enc"], cs["recv"]["enc"]))
    check(ls_["recv"]["blobs"] == 2 and cs["recv"]["blobs"] == 2, "Blob counts")


@test
def bulk_both_ways_identity():
    r = random.Random(142)
    none = ["--encode", "", "--decode", ""]
    ls_, cs, union, a, b = pair_sync("bulk-identity", [r.randbytes(24 << 20)], [r.randbytes(24 << 20)],
                                     lextra=none, cextra=none, timeout=120)
    check(cs["send"]["enc"] == "identity" and cs["recv"]["enc"] == "identity", "encodings")


@test
def bulk_both_ways_deflate_unix():
    r = random.Random(143)
    d = ["--encode", "deflate12c", "--decode", "deflate12c"]
    ls_, cs, union, a, b = pair_sync("bulk-deflate", [r.randbytes(8 << 20)], [r.randbytes(8 << 20)], "unix",
                                     lextra=d, cextra=d, timeout=120)
    check(cs["send"]["enc"] == "deflate12c" and cs["recv"]["enc"] == "deflate12c", "encodings")


def wait_file(store, h, timeout, what):
    path = os.path.join(store, "blobs", h)
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise Fail("%s: %s did not arrive within %d s" % (what, h, timeout))
        time.sleep(0.01)


def watcher(addr, store, extra=()):
    cmd = [W, "iltp", "sync", "--connect", addr, "--store", store, "--watch"] + list(extra)
    errp = os.path.join(TMP, "watcher-%d.err" % random.randrange(1 << 30))
    with open(errp, "wb") as ef:
        p = track(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=ef))
    return p, errp


@test
def watch_listener_side():
    """A `wirekit iltp put` into the listener's store reaches a watching connector (target:
    within a second; measured); SIGINT ends the connector with a clean close and exit 0."""
    d = tdir("watch-l")
    srv, cst = os.path.join(d, "s"), os.path.join(d, "c")
    hs = make_store(srv, data_set("wl-s", 2))
    hc = make_store(cst, data_set("wl-c", 1))
    lst = Listener(srv)
    try:
        p, errp = watcher(lst.addr, cst)
        for h in hs:
            wait_file(cst, h, 30, "the first sync")
        time.sleep(0.3)  # both at fixed point
        t = time.monotonic()
        h = put(srv, b"put into the listener's store while a connector watches")
        wait_file(cst, h, 30, "the watched put")
        print("    measured: a put into the listener's store reached the watching connector in %.3f s"
              % (time.monotonic() - t), flush=True)
        h2 = put(srv, b"and another one")
        wait_file(cst, h2, 30, "the second watched put")
        p.send_signal(signal.SIGINT)
        rc = p.wait(30)
        with open(errp) as f:
            err = f.read()
        check(rc == 0, "the interrupted connector exited %d: %s" % (rc, err[-500:]))
        s = one_summary(err, "watching connector")
        check(s["recv"]["outcome"] == "clean" and s["recv"]["blobs"] == 4, "connector: %s" % s["recv"])
        check("interrupted (SIGINT)" in err, "no interrupt line")
        sl = lst.wait_sessions(1)[1]
        check(sl["recv"]["outcome"] == "clean", "listener session: %s" % sl["recv"]["outcome"])
        check_store(cst, set(hs) | set(hc) | {h, h2})
    finally:
        lst.stop()


@test
def watch_connector_side():
    """A put into a watching connector's store reaches the listener; SIGTERM then ends the
    listener (exit 0): it closes the session cleanly at fixed point and the connector, seeing the
    listener's end at fixed point, answers and exits 0 too."""
    d = tdir("watch-c")
    srv, cst = os.path.join(d, "s"), os.path.join(d, "c")
    hs = make_store(srv, data_set("wc-s", 1))
    hc = make_store(cst, data_set("wc-c", 2))
    lst = Listener(srv)
    p, errp = watcher(lst.addr, cst, ["--json"])
    try:
        for h in hc:
            wait_file(srv, h, 30, "the first sync")
        time.sleep(0.3)
        t = time.monotonic()
        h = put(cst, b"put into the watching connector's store")
        wait_file(srv, h, 30, "the watched put")
        print("    measured: a put into the watching connector's store reached the listener in %.3f s"
              % (time.monotonic() - t), flush=True)
        lst.p.send_signal(signal.SIGTERM)
        rc = lst.wait(30)
        check(rc == 0, "the interrupted listener exited %d: %s" % (rc, lst.err()[-500:]))
        check("interrupted (SIGTERM)" in lst.err(), "no interrupt line")
        sl = summaries(lst.err())[1]
        check(sl["recv"]["outcome"] == "clean", "listener session: %s" % sl["recv"]["outcome"])
        rc = p.wait(30)
        with open(errp) as f:
            err = f.read()
        check(rc == 0, "the connector exited %d: %s" % (rc, err[-500:]))
        out = p.stdout.read().decode()
        objs = [json.loads(x) for x in out.splitlines() if x.strip()]
        check(len(objs) == 1 and objs[0]["outcome"] == "clean" and objs[0]["blobs_out"] == 3 and
              objs[0]["blobs_in"] == 1 and objs[0]["side"] == "side1", "--json: %r" % out)
        for k in ("encoding_out", "encoding_in", "wire_bytes_out", "wire_bytes_in", "blob_bytes_out",
                  "blob_bytes_in", "rounds", "duration_ms", "error", "peer", "session"):
            check(k in objs[0], "--json lacks %s" % k)
        check_store(srv, set(hs) | set(hc) | {h})
    finally:
        p.stdout.close()
        lst.stop()


def proc_start_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


@test
def crash_leftovers_removed_at_open():
    """Opening a store removes the temporaries of writers that are gone (the process id and
    start time named in them), however recent, and keeps a live process's; a listener killed
    while it receives leaves a temporary that the next open removes."""
    d = tdir("leftovers")
    st = os.path.join(d, "s")
    make_store(st, data_set("lo", 1))
    bdir = os.path.join(st, "blobs")
    dead = subprocess.Popen(["true"])
    dead.wait()
    me, start = os.getpid(), proc_start_ticks(os.getpid())
    names = {
        "dead": ".tmp-%d-%d-AAAAAAAAAAAA" % (dead.pid, 1),
        "reused": ".tmp-%d-%d-BBBBBBBBBBBB" % (me, start + 1),   # our pid, another start time
        "live": ".tmp-%d-%d-CCCCCCCCCCCC" % (me, start),
        "old-fresh": ".tmp-oldformat12",
        "old-stale": ".tmp-oldformat34",
    }
    for n in names.values():
        with open(os.path.join(bdir, n), "wb") as f:
            f.write(b"partial")
    old = time.time() - 7200
    os.utime(os.path.join(bdir, names["old-stale"]), (old, old))
    ls(st)  # opens the store
    left = {k for k, n in names.items() if os.path.exists(os.path.join(bdir, n))}
    check(left == {"live", "old-fresh"}, "left after open: %s" % sorted(left))
    for n in names.values():
        if os.path.exists(os.path.join(bdir, n)):
            os.unlink(os.path.join(bdir, n))
    # a real crash: a listener receiving a large Blob is killed
    lst = Listener(st)
    p = Peer(lst.addr, timeout=30)
    try:
        p.establish()
        h = b64a(os.urandom(32))
        p.items(adv_block([h]))
        p.read_adv()
        p.items(req_block([]))
        p.read_req()
        p.raw(RECORD_GLYPH + b": B." + h.encode() + b".H3\nData-Length: 20000000\n\n" + bytes(1 << 20))
        p.flush()
        end = time.monotonic() + 30
        while not any(n.startswith(".tmp-") for n in os.listdir(bdir)):
            check(time.monotonic() < end, "no temporary while receiving")
            time.sleep(0.02)
        lst.p.kill()
        lst.p.wait(10)
    finally:
        p.close()
        lst.stop()
    check(any(n.startswith(".tmp-") for n in os.listdir(bdir)), "the crash left no temporary")
    ls(st)
    check(not any(n.startswith(".tmp-") for n in os.listdir(bdir)), "a crashed listener's temporary survived open")
    check_store(st)


@test
def progress_on_a_terminal():
    """--progress draws a progress line on a terminal (bytes and Blobs each way, the rate) while a
    transfer runs; without a terminal, or without --progress, nothing is drawn."""
    import pty
    d = tdir("progress")
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    make_store(a, [random.Random(5).randbytes(24 << 20)])
    os.makedirs(b)
    enc = ["--encode", "deflate12c", "--decode", "deflate12c"]  # slow enough to be seen
    lst = Listener(a, "tcp:127.0.0.1:0", enc, once=True)
    try:
        master, slave = pty.openpty()
        p = track(subprocess.Popen([W, "iltp", "sync", "--connect", lst.addr, "--store", b, "--progress"] + enc,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave))
        os.close(slave)
        out = b""
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                c = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not c:
                break
            out += c
        rc = p.wait(30)
        os.close(master)
        text = out.decode(errors="replace")
        check(rc == 0, "connector exited %d: %s" % (rc, text[-300:]))
        check(re.search(r"\r\x1b\[K1 session: sent [0-9.]+ \w+ in \d+ Blobs, received [0-9.]+ MiB in \d+ Blobs, [0-9.]+ MB/s",
                        text), "no progress line: %r" % text[:400])
        check(re.search(r"session 1 recv: .*; clean", text), "no summary after the progress line")
        lst.wait(30)
    finally:
        lst.stop()
    # not a terminal: no progress drawing
    c2 = os.path.join(d, "c2")
    os.makedirs(c2)
    lst = Listener(a, "tcp:127.0.0.1:0", enc, once=True)
    try:
        rc, err = connector(lst.addr, c2, enc + ["--progress"], timeout=120)
        check(rc == 0 and one_summary(err, "connector")["recv"]["blobs"] == 1, "second connector: %s" % err[-300:])
        check("MB/s" not in err, "progress drawn on a pipe")
        lst.wait(30)
    finally:
        lst.stop()


def run_faults(results):
    bed = None
    try:
        bed = FaultBed()
        for fn in FAULTS:
            name = "fault:" + fn.__name__
            if ONLY and not any(o in name for o in ONLY):
                continue
            t = time.monotonic()
            try:
                check(bed.lst.alive(), "the listener is not running")
                fn(bed)
                bed.good_after()
                results.append((name, True, "", time.monotonic() - t))
            except Exception as e:  # noqa: BLE001 - report every failure
                results.append((name, False, "%s: %s" % (type(e).__name__, e), time.monotonic() - t))
                try:
                    bed.resync()
                    bed.good_after()  # still serving others after a failed case?
                except Exception as e2:  # noqa: BLE001
                    results.append((name + "+after", False, "%s: %s" % (type(e2).__name__, e2), 0))
            for r in results[-2:] if results[-1][0].endswith("+after") else results[-1:]:
                print("%s %s (%.2f s)%s" % ("ok  " if r[1] else "FAIL", r[0], r[3], "" if r[1] else "\n     " + r[2]),
                      flush=True)
        check(bed.lst.alive(), "the listener exited during the faults")
    except Exception as e:  # noqa: BLE001
        results.append(("fault-bed", False, "%s: %s" % (type(e).__name__, e), 0))
        print("FAIL fault-bed\n     %s" % results[-1][2], flush=True)
    finally:
        if bed:
            bed.lst.stop()
        kill_all()


def self_check():
    """The pure-Python BLAKE3 and B64A agree with the tool."""
    for n in (0, 1, 64, 65, 1024, 1025, 5000):
        d = bytes(i % 251 for i in range(n))
        r = wk("blake3", input=d)
        check(blake3(d).hex() == r.stdout.decode().strip(), "python BLAKE3 disagrees at %d bytes" % n)
    check(blob_hash(b"") == "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO", "empty Blob hash")
    r = wk("iltp", "blob", input=b"hello")
    check(r.stdout == blob_record(b"hello"), "python Blob record differs from wirekit iltp blob")


if __name__ == "__main__":
    faults.names = ["fault:" + f.__name__ for f in FAULTS]
    self_check()
    sys.exit(run_tests(TESTS, "host_sync"))
