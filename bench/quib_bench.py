#!/usr/bin/python3
"""QUIB against TCP: one `wirekit iltp sync` session moving a store of Blobs (1 GiB by default)
from the listener to an empty connector on loopback, over quib: and over tcp:, side by side in
one run, alternating, repeated.

    /usr/bin/python3 bench/quib_bench.py WIREKIT [--mib 1024] [--blob-mib 32] [--repeat 3]
        [--encode identity|zstd20c|deflate12c] [--dir DIR] [--timeout 900] [--quick]

Setup (not timed): the listener's store holds --mib MiB of random Blobs of --blob-mib MiB each
(random data: the stream encodings cannot shrink it; identity is the default so that the
carriers are what is compared). Stores live in --dir (default /dev/shm when it has room, so that
fsync is cheap and the disk is not what is measured). The credentials for quib: are made with
the openssl tool.

One run: the listener (`--listen quib:127.0.0.1:0 --once`, or tcp:) is started, the connector
syncs into an empty store; the wall time runs from the connector's spawn to its exit. Reported
per carrier: the median MB/s (MiB moved / wall time, MB = 10^6 bytes), and the CPU seconds per
GiB of both processes together (user + system, from wait4), medians over --repeat runs, and the
ratio quib/tcp. --quick moves 64 MiB once (for CI: the numbers are not checked).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def make_certs(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    sh("openssl", "req", "-x509", *ec, "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "30", "-subj",
       "/CN=bench CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    sh("openssl", "req", *ec, "-keyout", f"{d}/s.key", "-out", f"{d}/s.csr", "-subj", "/CN=localhost")
    with open(f"{d}/s.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    sh("openssl", "x509", "-req", "-in", f"{d}/s.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key",
       "-CAcreateserial", "-out", f"{d}/s.pem", "-days", "30", "-extfile", f"{d}/s.ext")


def fill(w, store, total, blob):
    left = total
    i = 0
    while left > 0:
        n = min(blob, left)
        data = os.urandom(n)
        r = subprocess.run([w, "iltp", "put", "--store", store], input=data, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0:
            sys.exit("put failed: " + r.stderr.decode())
        left -= n
        i += 1
    return i


def cpu_of(pid):
    _, status, ru = os.wait4(pid, 0)
    return status, ru.ru_utime + ru.ru_stime


def one_run(w, scheme, src, dst, certs, encode, timeout):
    shutil.rmtree(dst, ignore_errors=True)
    enc = [] if encode == "default" else ["--encode", "" if encode == "identity" else encode,
                                           "--decode", "" if encode == "identity" else encode]
    largs = [w, "iltp", "sync", "--listen", f"{scheme}:127.0.0.1:0", "--once", "--store", src, *enc]
    cargs = [w, "iltp", "sync", "--store", dst, *enc]
    if scheme == "quib":
        largs += ["--cert", f"{certs}/s.pem", "--key", f"{certs}/s.key"]
        cargs += ["--ca", f"{certs}/ca.pem"]
    lp = subprocess.Popen(largs, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = lp.stdout.readline().decode()
    addr = line.split()[-1]
    t = time.monotonic()
    cp = subprocess.Popen(cargs + ["--connect", addr], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        cstatus, ccpu = cpu_of(cp.pid)
    except Exception:
        cp.kill()
        raise
    wall = time.monotonic() - t
    deadline = time.monotonic() + timeout
    while lp.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if lp.poll() is None:
        lp.kill()
    # the listener was reaped by poll(); its CPU time comes from the children's rusage delta
    return wall, ccpu, cstatus


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wirekit")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--blob-mib", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encode", default="identity")
    ap.add_argument("--dir")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.mib, a.repeat = 64, 1
    w = os.path.abspath(a.wirekit)
    base = a.dir
    if not base:
        st = os.statvfs("/dev/shm") if os.path.isdir("/dev/shm") else None
        base = "/dev/shm" if st and st.f_bavail * st.f_frsize > a.mib * 3 << 20 else None
    tmp = tempfile.mkdtemp(prefix="wk-quib-bench-", dir=base)
    try:
        certs = os.path.join(tmp, "pki")
        os.makedirs(certs)
        make_certs(certs)
        src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
        blobs = fill(w, src, a.mib << 20, a.blob_mib << 20)
        print("quib_bench: %d MiB in %d Blobs of up to %d MiB, encoding %s, %d run(s) each, stores in %s" %
              (a.mib, blobs, a.blob_mib, a.encode, a.repeat, base or tempfile.gettempdir()))
        res = {"tcp": [], "quib": []}
        for r in range(a.repeat):
            for scheme in ("tcp", "quib"):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall, ccpu, status = one_run(w, scheme, src, dst, certs, a.encode, a.timeout)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                both = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
                ok = status == 0 and len(os.listdir(os.path.join(dst, "blobs"))) >= blobs
                res[scheme].append((wall, both, ok))
                print("  run %d %-4s %6.2f s  %7.1f MB/s  CPU %.2f s (connector %.2f s)%s" %
                      (r + 1, scheme, wall, (a.mib << 20) / wall / 1e6, both, ccpu, "" if ok else "  FAILED"),
                      flush=True)
        print("%-5s %12s %16s" % ("", "MB/s", "CPU s per GiB"))
        med = {}
        for scheme in ("tcp", "quib"):
            walls = [x[0] for x in res[scheme] if x[2]]
            cpus = [x[1] for x in res[scheme] if x[2]]
            if not walls:
                print("%-5s failed" % scheme)
                continue
            mbps = (a.mib << 20) / statistics.median(walls) / 1e6
            cpg = statistics.median(cpus) * 1024 / a.mib
            med[scheme] = (mbps, cpg)
            print("%-5s %12.1f %16.2f" % (scheme, mbps, cpg))
        if "tcp" in med and "quib" in med:
            print("quib/tcp: %.2fx the rate, %.2fx the CPU per GiB" %
                  (med["quib"][0] / med["tcp"][0], med["quib"][1] / med["tcp"][1]))
        return 0 if all(x[2] for s in res.values() for x in s) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


sys.exit(main())
