#!/usr/bin/python3
"""One ILTP session moving 1 GiB of Blobs over ws, wss and tcp on loopback, side by side.

    /usr/bin/python3 bench/ws_bench.py WIREKIT [--mib 1024] [--repeat 3] [--encode ''] [--dir DIR]
                                               [--carrier-bench build/bench/carrier_bench] [--quick]

Setup (not timed): a listener store holding --mib MiB of random Blobs of 32 MiB (the Blob cap),
made with `wirekit iltp put` in DIR (default /dev/shm, so the store's fsyncs cost little and the
carrier is what is measured), and a test certificate made with openssl.

One run: a `--once` listener on 127.0.0.1 port 0 and one connector with an empty store; the time
runs from the connector's start to its exit (the whole session: connect, TLS and WebSocket
handshakes, establishment, the rounds that move every Blob from the listener to the connector,
the clean close). The carriers alternate (tcp, ws, wss, tcp, ...) so that load from other work
on the machine falls on all three alike. Encodings: identity by default (random data; --encode
TOKEN to change). wss uses --disable-proof (the session makes no Seal proof yet, see
docs/iltp.md) and GnuTLS's default for TLS 1.3 on this machine (printed).

Reported per carrier: median MB/s (10^6 bytes of Blob data per second) over the runs, and the
CPU seconds of listener + connector together (from wait4 rusage) per GiB; then the ratios against
tcp. Targets (issue 15): ws within 10 % of tcp; wss at least 1 GB/s.

With --carrier-bench, bench/carrier_bench.c then runs with the same certificate: the carriers
alone (no session), the same amount of data, the same number of runs.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wirekit")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encode", default="")
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    ap.add_argument("--carrier-bench", help="path of bench/carrier_bench, run after the session runs")
    ap.add_argument("--quick", action="store_true", help="64 MiB, one run each (CI)")
    a = ap.parse_args()
    if a.quick:
        a.mib, a.repeat = 64, 1
    w = os.path.abspath(a.wirekit)
    tmp = tempfile.mkdtemp(prefix="wk-wsbench-", dir=a.dir)
    procs = []
    try:
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        blob = 32 << 20
        left = a.mib << 20
        i = 0
        while left > 0:
            n = min(blob, left)
            data = os.urandom(n - 8) + i.to_bytes(8, "big")
            r = subprocess.run([w, "iltp", "put", "--store", src], input=data, capture_output=True)
            if r.returncode != 0:
                sys.exit("put failed: %s" % r.stderr.decode())
            left -= n
            i += 1
        total = a.mib << 20
        key, cert = os.path.join(tmp, "k.pem"), os.path.join(tmp, "c.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        enc = ["--encode", a.encode, "--decode", a.encode]
        carriers = {
            "tcp": ([], []),
            "ws": ([], []),
            "wss": (["--cert", cert, "--key", key, "--disable-proof"], ["--ca", cert, "--disable-proof"]),
        }
        results = {c: [] for c in carriers}

        for rep in range(a.repeat):
            for c, (lx, cx) in carriers.items():
                dst = os.path.join(tmp, "dst")
                shutil.rmtree(dst, ignore_errors=True)
                os.makedirs(dst)
                lst = subprocess.Popen([w, "iltp", "sync", "--listen", "%s:127.0.0.1:0" % c, "--store", src, "--once"]
                                       + enc + lx, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append(lst)
                line = lst.stdout.readline().decode()
                m = re.match(r"listening on (\S+)", line)
                if not m:
                    sys.exit("listener: %r %s" % (line, lst.stderr.read().decode()))
                t0 = time.monotonic()
                con = subprocess.Popen([w, "iltp", "sync", "--connect", m.group(1), "--store", dst] + enc + cx,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                procs.append(con)
                _, st, ru = os.wait4(con.pid, 0)
                dt = time.monotonic() - t0
                con.returncode = os.waitstatus_to_exitcode(st)
                _, lst_st, lru = os.wait4(lst.pid, 0)
                lst.returncode = os.waitstatus_to_exitcode(lst_st)
                cerr = con.stderr.read().decode()
                if con.returncode != 0 or lst.returncode != 0:
                    sys.exit("%s run failed: connector %d: %s / listener %d: %s" % (
                        c, con.returncode, cerr[-400:], lst.returncode, lst.stderr.read().decode()[-400:]))
                got = sum(os.path.getsize(os.path.join(dst, "blobs", f)) for f in os.listdir(os.path.join(dst, "blobs")))
                if got != total:
                    sys.exit("%s: moved %d of %d bytes" % (c, got, total))
                cpu = ru.ru_utime + ru.ru_stime + lru.ru_utime + lru.ru_stime
                results[c].append((total / dt / 1e6, cpu / (total / (1 << 30))))
                print("  run %d %-3s %8.1f MB/s  %5.2f CPU s/GiB" % (rep + 1, c, total / dt / 1e6,
                                                                    cpu / (total / (1 << 30))), flush=True)
        print("ILTP sync, one session, %d MiB of Blobs listener -> connector, encoding %s, stores in %s"
              % (a.mib, a.encode or "identity", a.dir or tempfile.gettempdir()))
        med = {}
        for c, rs in results.items():
            med[c] = statistics.median(r[0] for r in rs)
            cpu = statistics.median(r[1] for r in rs)
            print("  %-3s  median %8.1f MB/s  %5.2f CPU s/GiB  (%d runs)" % (c, med[c], cpu, len(rs)))
        print("  ws / tcp  = %.3f   (target >= 0.90: %s)" % (med["ws"] / med["tcp"],
                                                            "met" if med["ws"] >= 0.9 * med["tcp"] else "MISSED"))
        print("  wss / tcp = %.3f   wss %.0f MB/s (target >= 1000 MB/s: %s)" % (
            med["wss"] / med["tcp"], med["wss"], "met" if med["wss"] >= 1000 else "MISSED"))
        if a.carrier_bench:
            sys.stdout.flush()
            r = subprocess.run([a.carrier_bench, "--mib", str(a.mib), "--repeat", str(a.repeat), "--cert", cert,
                                "--key", key])
            if r.returncode != 0:
                sys.exit("carrier_bench failed")

    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
