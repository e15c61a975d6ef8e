#!/usr/bin/python3
"""host_hostile: bounded attackers on loopback against a `wirekit iltp sync` listener, one per
probe of issue 14, each with the issue's memory target checked on the listener's peak RSS
(VmHWM from /proc/PID/status) and its time target measured and printed (never asserted: the
machine is shared; outcomes are asserted, with generous deadlines).

    /usr/bin/python3 hostile_test.py WIREKIT [TEST-NAME-SUBSTRING...]

Every attacker ends only its own session: after each probe the listener is alive, an honest
connector still syncs cleanly, and the store holds only Blobs whose data hashes to their name (no
partial or unverified Blob, no temporary left). Each probe starts its own listener and kills
every process it started. Prints `hostile: measured ...` lines (the figures for
docs/benchmarks.md) and `host_hostile: N passed, M failed`.
"""
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synclib  # noqa: E402

if len(sys.argv) < 2:
    print("usage: hostile_test.py WIREKIT [TEST-NAME-SUBSTRING...]", file=sys.stderr)
    sys.exit(2)
synclib.setup(sys.argv[1], sys.argv[2:])
from synclib import *  # noqa: E402,F401,F403
from synclib import W, ONLY, TMP, T0  # noqa: E402

MEASURED = []
# The listener's peak RSS targets are the issue's, for the default build. Under AddressSanitizer
# (WK_SANITIZED=1, set by tests/host/sync.cmake) redzones, the free quarantine and shadow pages
# inflate RSS several times (the 10-proof case: 24 MiB in the default build, 130 MiB under ASan),
# so a sanitized build checks 3x the target: it still catches growth with the input, which is
# what the sanitized run is for.
RSS_SCALE = 3 if os.environ.get("WK_SANITIZED") else 1


def check_rss(rss, target_mib, what="listener peak RSS"):
    limit = target_mib * RSS_SCALE
    check(rss <= limit, "%s %.0f MiB > %d MiB%s" % (what, rss, limit,
                                                    " (3x the target: sanitized build)" if RSS_SCALE > 1 else ""))


def measured(what, value):
    MEASURED.append((what, value))
    print("hostile: measured %s: %s" % (what, value), flush=True)


def vmhwm_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    raise Fail("no VmHWM for %d" % pid)


def tdir(name):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    return d


def fake_hash():
    return b64a(os.urandom(32))


def honest_after(lst, name, timeout=60):
    """An honest connector with Blobs of its own syncs cleanly; returns its wall time."""
    st = tdir(name + "-honest")
    make_store(st, data_set(name + "-honest", 3))
    t = time.monotonic()
    sync_ok(lst.addr, st, timeout=timeout, who="honest connector (%s)" % name)
    return time.monotonic() - t


def store_clean(store):
    wait_no_temps(store, 30)
    check_store(store, gets=2)


def outcomes(lst):
    return [v["recv"]["outcome"] for k, v in sorted(summaries(lst.err()).items()) if "recv" in v]


def wait_outcomes(lst, n, timeout=60):
    end = time.monotonic() + timeout
    while True:
        o = outcomes(lst)
        if len(o) >= n:
            return o
        if time.monotonic() > end:
            raise Fail("%d of %d sessions ended within %d s; stderr tail: %s" % (len(o), n, timeout, lst.err()[-800:]))
        time.sleep(0.05)


def zstd_continue(p, data):
    """Compressed bytes of data without a flush (the stream goes on)."""
    return p.enc.co.compress(data)


def zstd_flush(p):
    import zstandard
    return p.enc.co.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


# ---------------------------------------------------------------------------------------------
@test
def blob_records_held_mid_transfer():
    """40 peers each advertise a Blob, get it requested, send its record declaring 32 MiB with
    32 MiB - 1 of its data (zstd20c: a few KiB on the wire), then hold. Target: listener peak RSS
    <= 256 MiB. Then they vanish: each session fails (truncated), no partial Blob is stored."""
    n, size = 40, 32 << 20
    srv = tdir("held")
    make_store(srv, data_set("held-srv", 2))
    lst = Listener(srv)
    peers = []
    try:
        zeros = bytes(1 << 20)
        for i in range(n):
            p = Peer(lst.addr, ZstdEnc, timeout=60)
            peers.append(p)
            p.establish()
            h = fake_hash()
            p.items(adv_block([h]))
            p.read_adv()
            p.items(req_block([]))
            check(p.read_req() == [h], "the listener did not request the advertised Blob")
            head = RECORD_GLYPH + b": B." + h.encode() + b".H3\nData-Length: %d\n\n" % size
            p.raw(zstd_continue(p, head))
            for k in range(size // len(zeros)):
                chunk = zeros if k < size // len(zeros) - 1 else zeros[:-1]
                c = zstd_continue(p, chunk)
                if c:
                    p.raw(c)
            p.raw(zstd_flush(p))
        for p in peers:
            p.flush(60)
        # every session holds its Blob's 32 MiB - 1 bytes: in its temporary, but for the last
        # receive window (below 128 KiB) that waits for more
        bdir = os.path.join(srv, "blobs")
        end = time.monotonic() + 180
        while True:
            temps = [e.stat().st_size for e in os.scandir(bdir) if e.name.startswith(".tmp-")]
            if len(temps) == n and all(t >= size - (128 << 10) for t in temps):
                break
            if time.monotonic() > end:
                raise Fail("the listener holds %d temporaries, sizes %s" % (len(temps), sorted(set(temps))[:5]))
            time.sleep(0.1)
        rss = vmhwm_mib(lst.p.pid)
        measured("40 peers holding 32 MiB Blob records mid-transfer, listener peak RSS", "%.0f MiB" % rss)
        check_rss(rss, 256)
        check(lst.alive(), "the listener died")
    finally:
        for p in peers:
            p.close()
    o = wait_outcomes(lst, n, 60)
    check(all(x == "failed: ILTP_ERR_TRUNCATED" for x in o), "outcomes %s" % sorted(set(o)))
    store_clean(srv)
    check(len(ls(srv)) == 2, "the store holds more than its own Blobs")
    honest_after(lst, "held")
    lst.stop()


@test
def compressed_64MiB_proofs():
    """10 peers send a 64 MiB - 64 B fact block as the establishment proof under zstd20c (about
    7 KiB on the wire each). Target: listener peak RSS <= 128 MiB; each dies at the 4 MiB
    establishment budget with ILTP_ERR_BUDGET."""
    import zstandard
    n = 10
    srv = tdir("proofs")
    make_store(srv, data_set("proofs-srv", 2))
    lst = Listener(srv)
    rows = b"A()\n" * (((64 << 20) - 64) // 4 - 1) + b"\n"
    peers = []
    try:
        for i in range(n):
            p = Peer(lst.addr, ZstdEnc, timeout=60)
            peers.append(p)
            p.raw(p.preface())
            wire = p.enc.batch(rows)
            if i == 0:
                measured("one 64 MiB proof under zstd20c, wire bytes", "%d" % len(wire))
            p.raw(wire)
        for p in peers:
            p.flush(60)
        o = wait_outcomes(lst, n, 120)
        rss = vmhwm_mib(lst.p.pid)
        measured("10 compressed 64 MiB proofs, listener peak RSS", "%.0f MiB" % rss)
        check(all(x == "failed: ILTP_ERR_BUDGET" for x in o), "outcomes %s" % sorted(set(o)))
        check_rss(rss, 128)
        err = lst.err()
        m = re.search(r"ILTP_ERR_BUDGET at offset (\d+)", err)
        check(m, "no budget error line")
    finally:
        for p in peers:
            p.close()
    store_clean(srv)
    honest_after(lst, "proofs")
    lst.stop()
    del rows, zstandard


@test
def requesters_that_never_read():
    """10 peers request the listener's 32 MiB Blob and never read. Each costs the listener its
    read windows and socket buffers, not the Blob; other sessions go on."""
    n = 10
    srv = tdir("noread")
    big = random.Random(3).randbytes(32 << 20)
    hs = make_store(srv, [big])
    lst = Listener(srv)
    peers = []
    try:
        for i in range(n):
            p = Peer(lst.addr, timeout=60)
            peers.append(p)
            p.establish()
            p.items(adv_block([]))
            check(p.read_adv() == sorted(hs), "advertisement")
            p.items(req_block(sorted(hs)))
            check(p.read_req() == [], "the listener asked for something")
            # and stop reading
        time.sleep(2)
        t = honest_after(lst, "noread")
        rss = vmhwm_mib(lst.p.pid)
        measured("10 peers requesting a 32 MiB Blob and never reading, listener peak RSS", "%.0f MiB" % rss)
        measured("honest sync beside 10 non-reading requesters", "%.2f s" % t)
        check_rss(rss, 128)
    finally:
        for p in peers:
            p.close()
    store_clean(srv)
    lst.stop()


@test
def round_storm():
    """A peer sends a few hundred wire bytes of zstd20c carrying back-to-back empty rounds and
    never reads, against a listener whose store holds 2000 Blobs (each advertisement about
    290 KB). Target: listener peak RSS <= 256 MiB, and an honest connector still syncs in under
    5 s (measured)."""
    srv = tdir("storm")
    blobs = [("storm %d " % i).encode() * 4 for i in range(2000)]
    seed_store(srv, {blob_hash(b): b for b in blobs})
    lst = Listener(srv)
    p = None
    try:
        p = Peer(lst.addr, ZstdEnc, timeout=60)
        p.establish()
        storm = b"\n\nRoundComplete()\n\n" * 200000
        wire = p.enc.batch(storm)
        measured("round storm: wire bytes for 200,000 empty rounds (zstd20c)", "%d" % len(wire))
        p.raw(wire)
        p.flush(30)
        time.sleep(1)
        t = honest_after(lst, "storm")
        measured("honest connector sync during the round storm", "%.2f s" % t)
        time.sleep(1)
        rss = vmhwm_mib(lst.p.pid)
        measured("round storm, listener peak RSS", "%.0f MiB" % rss)
        check_rss(rss, 256)
        check(lst.alive(), "the listener died")
    finally:
        if p:
            p.close()
    store_clean(srv)
    lst.stop()


@test
def silent_at_fixed_point():
    """20 peers reach fixed point and stay silent: --idle-timeout-ms 2000 closes each (its
    outcome `closed: WK_ERR_HOST_IDLE_TIMEOUT`); target: within 6 s (measured)."""
    n = 20
    srv = tdir("idle")
    make_store(srv, data_set("idle-srv", 2))
    lst = Listener(srv, extra=["--idle-timeout-ms", "2000"])
    peers = []
    times = []
    try:
        for i in range(n):
            p = Peer(lst.addr, timeout=60)
            peers.append(p)
            p.establish()
            p.rounds({})
        t0 = time.monotonic()
        lock = threading.Lock()

        def wait_eof(p):
            p.read_eof(timeout=60)
            with lock:
                times.append(time.monotonic() - t0)

        th = [threading.Thread(target=wait_eof, args=(p,)) for p in peers]
        for t in th:
            t.start()
        for t in th:
            t.join(90)
        check(len(times) == n, "%d of %d peers were closed" % (len(times), n))
        measured("20 silent peers at fixed point, --idle-timeout-ms 2000: last one closed after", "%.2f s" % max(times))
    finally:
        for p in peers:
            p.close()
    o = wait_outcomes(lst, n, 30)
    check(all(x == "closed: WK_ERR_HOST_IDLE_TIMEOUT" for x in o), "outcomes %s" % sorted(set(o)))
    check(lst.err().count("WK_ERR_HOST_IDLE_TIMEOUT: silent at fixed point") == n, "idle lines")
    honest_after(lst, "idle")
    lst.stop()


@test
def max_sessions():
    """--max-sessions 8: a 9th connection is refused at once (logged, typed); once the others
    close, the listener serves again."""
    srv = tdir("maxs")
    make_store(srv, data_set("maxs-srv", 2))
    lst = Listener(srv, extra=["--max-sessions", "8"])
    socks = []
    try:
        for i in range(8):
            socks.append(sock_connect(lst.addr))
        # the eight are accepted (their preface arrives); the ninth is closed at once
        for s in socks:
            s.settimeout(10)
            check(s.recv(1) != b"", "an accepted connection got no preface")
        t = time.monotonic()
        s9 = sock_connect(lst.addr)
        s9.settimeout(10)
        try:
            b = s9.recv(100)
        except ConnectionResetError:
            b = b""
        measured("--max-sessions 8: the 9th connection closed after", "%.3f s" % (time.monotonic() - t))
        check(b == b"", "the 9th connection got bytes %r" % b[:20])
        s9.close()
        end = time.monotonic() + 10
        while "WK_ERR_HOST_SESSIONS_LIMIT" not in lst.err():
            check(time.monotonic() < end, "no refusal line")
            time.sleep(0.05)
        check(re.search(r"^refused \S+: WK_ERR_HOST_SESSIONS_LIMIT: 8 sessions are open \(--max-sessions 8\)$",
                        lst.err(), re.M), "refusal line: %s" % lst.err()[-300:])
    finally:
        for s in socks:
            s.close()
    wait_outcomes(lst, 8, 30)
    honest_after(lst, "maxs")
    lst.stop()


@test
def memory_budget():
    """--max-memory 1M: a zstd20c session needs more (its coders) and fails with the typed
    WK_ERR_HOST_MEMORY_LIMIT; an identity session fits and syncs; the listener survives."""
    srv = tdir("mem")
    make_store(srv, data_set("mem-srv", 3))
    lst = Listener(srv, extra=["--max-memory", "1M"])
    st = tdir("mem-c")
    make_store(st, data_set("mem-c", 2))
    rc, err = connector(lst.addr, st, timeout=60)
    check(rc != 0, "the zstd20c connector succeeded under a 1 MiB budget")
    o = wait_outcomes(lst, 1, 30)
    check(o[0] == "failed: WK_ERR_HOST_MEMORY_LIMIT", "outcome %s" % o[0])
    check(re.search(r"^session 1: WK_ERR_HOST_MEMORY_LIMIT: ", lst.err(), re.M), "no typed line")
    sync_ok(lst.addr, st, ["--encode", "", "--decode", ""], who="identity connector under 1 MiB")
    store_clean(srv)
    lst.stop()


if __name__ == "__main__":
    sys.exit(run_tests(TESTS, "host_hostile"))
