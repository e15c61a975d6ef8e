#!/usr/bin/python3
"""ILTP sync load: many concurrent `wirekit iltp sync` sessions against one listener on loopback,
beside `rsync -a` (local to local) of the same stores for reference.

    /usr/bin/python3 bench/sync_load.py WIREKIT [--configs same,same-identity,unique,bulk]
        [--sessions 200] [--blobs 20] [--shared 50] [--repeat 3] [--timeout 600]
        [--timeout-ms N] [--ignore-sigpipe] [--no-rsync] [--dir DIR] [--append-doc docs/benchmarks.md]

Configurations (see CONFIGS): 'same' = 200 connectors that all hold the same 20 small Blobs,
'same-identity' = the same offering no encodings, 'same-level1' (not in the default list) = the
same at zstd20c level 1, 'unique' = 200 connectors with 20 Blobs of their
own each (the union grows with the square of the number of connectors: every connector also pulls
what the earlier ones pushed, hundreds of thousands of fsynced Blob writes), 'bulk' = one
connector, 1 GiB of Blobs each way (32 random Blobs of 32 MiB on each side).

Setup (not timed): a listener store with `--shared` Blobs (16 KiB, half text, half random) and
one store per connector with `--blobs` Blobs of 256 B-2 KiB, made with `wirekit iltp put` and
copied fresh for every run.

One wirekit run: the listener (`--listen tcp:127.0.0.1:0`, no --once) is started; all
connectors are spawned at once; the wall time runs from the first spawn to the last exit (each
run bounded by --timeout; stragglers are killed). Reported: sessions/s, Blob bytes moved (data
bytes that appeared in all stores, counted from the files) per second, wire bytes, connector exit
codes, the listener's per-session outcomes, its peak RSS (VmHWM from /proc/PID/status, read after
the last connector exits) and CPU time, and the CPU time of every process of the run (listener and
connectors; rsync's processes for rsync; getrusage RUSAGE_CHILDREN). With --dir, each run's logs
(listener.err, cNNN.err) stay in DIR/CONFIG/wkN; its stores are removed after the run.

One rsync run: for every connector store at once, `rsync -a C/blobs/ S/blobs/ && rsync -a
S/blobs/ C/blobs/` (local to local, no network, no ssh), and the same with --fsync (the wirekit
store fsyncs every Blob and its directory; plain rsync does not).
"""
import argparse
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

SUMMARY_RE = re.compile(r"^session (\d+) (send|recv): (\S+), (\d+) items, (\d+) raw bytes, (\d+) wire bytes, "
                        r"(\d+) Blobs(?:, (\d+) rounds)?; (.*)$", re.M)


def store_stats(store):
    bdir = os.path.join(store, "blobs")
    n = size = 0
    if os.path.isdir(bdir):
        for e in os.scandir(bdir):
            if not e.name.startswith("."):
                n += 1
                size += e.stat().st_size
    return n, size


def all_stats(stores):
    n = size = 0
    for s in stores:
        a, b = store_stats(s)
        n += a
        size += b
    return n, size


def put(wk, store, data):
    r = subprocess.run([wk, "iltp", "put", "--store", store], input=data, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("put failed: %s" % r.stderr.decode())


def make_templates(wk, root, sessions, blobs, shared, unique, bulk=False):
    rnd = random.Random(2024)
    srv = os.path.join(root, "tmpl-srv")
    jobs = []
    conns = [os.path.join(root, "tmpl-c%03d" % c) for c in range(sessions)]
    if bulk:  # 1 GiB of random Blobs on each side
        for i in range(32):
            jobs.append((srv, rnd.randbytes(32 << 20)))
            jobs.append((conns[0], rnd.randbytes(32 << 20)))
        with ThreadPoolExecutor(max_workers=2) as ex:
            list(ex.map(lambda jd: put(wk, *jd), jobs))
        return srv, conns
    for i in range(shared):
        d = ("shared blob %d\n" % i).encode() * 1200 if i % 2 else rnd.randbytes(16384)
        jobs.append((srv, d[:16384]))
    for c in range(sessions if unique else 1):
        for j in range(blobs):
            n = rnd.randint(256, 2048)
            d = (("connector %d blob %d " % (c, j)).encode() * 100)[:n] if j % 2 else rnd.randbytes(n)
            jobs.append((conns[c], d))
    with ThreadPoolExecutor(max_workers=4) as ex:
        list(ex.map(lambda jd: put(wk, *jd), jobs))
    if not unique:  # every connector holds the same Blobs: copies of the first store
        for c in conns[1:]:
            shutil.copytree(conns[0], c)
    return srv, conns


def fresh_copy(srv_t, conn_t, root, tag):
    d = os.path.join(root, tag)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    srv = shutil.copytree(srv_t, os.path.join(d, "srv"))
    conns = [shutil.copytree(t, os.path.join(d, os.path.basename(t)[5:])) for t in conn_t]
    os.sync()  # the copies' write-back is not charged to the timed run
    return d, srv, conns


def proc_status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    out["cpu_s"] = (int(fields[11]) + int(fields[12])) / tck
    return out


def run_wirekit(wk, srv_t, conn_t, root, tag, timeout, keep=False, extra=(), sigpipe_default=True):
    extra = list(extra)
    d, srv, conns = fresh_copy(srv_t, conn_t, root, tag)
    before = all_stats([srv] + conns)
    errp = os.path.join(d, "listener.err")
    with open(errp, "wb") as ef:
        # restore_signals (default) gives the listener SIGPIPE at its default disposition, as from a
        # shell; with --ignore-sigpipe it inherits Python's (ignored): a peer that vanishes while
        # the listener writes kills it otherwise (reported bug).
        lst = subprocess.Popen([wk, "iltp", "sync", "--listen", "tcp:127.0.0.1:0", "--store", srv] + extra,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=ef,
                               restore_signals=sigpipe_default)
    procs = []
    try:
        line = lst.stdout.readline().decode()
        m = re.match(r"listening on (tcp:127\.0\.0\.1:\d+)", line)
        if not m:
            raise SystemExit("listener said %r" % line)
        addr = m.group(1)
        errs = []
        cpu0 = children_cpu()
        t0 = time.monotonic()
        for c in conns:
            ef = open(os.path.join(d, os.path.basename(c) + ".err"), "wb")
            errs.append(ef)
            procs.append(subprocess.Popen([wk, "iltp", "sync", "--connect", addr, "--store", c] + extra,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ef))
        rcs = []
        deadline = t0 + timeout
        for p in procs:
            try:
                rcs.append(p.wait(timeout=max(0.1, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
                rcs.append("timeout")
        wall = time.monotonic() - t0
        for ef in errs:
            ef.close()
        # the listener finishes its side of the last sessions
        end = time.monotonic() + 10
        while time.monotonic() < end:
            with open(errp) as f:
                if len(re.findall(r"^session \d+ recv:", f.read(), re.M)) >= len(conns):
                    break
            time.sleep(0.05)
        lrc = lst.poll()
        st = proc_status(lst.pid) if lrc is None else {"VmHWM": "0 kB", "cpu_s": 0.0}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)
        if lst.poll() is None:
            lst.terminate()
            try:
                lst.wait(10)
            except subprocess.TimeoutExpired:
                lst.kill()
                lst.wait(5)
        lst.stdout.close()
    after = all_stats([srv] + conns)
    with open(errp) as f:
        ltext = f.read()
    outcomes = {}
    wire = 0
    for m in SUMMARY_RE.finditer(ltext):
        if m.group(2) == "recv":
            outcomes[m.group(9)] = outcomes.get(m.group(9), 0) + 1
        wire += int(m.group(6))
    crc = {}
    for r in rcs:
        crc[str(r)] = crc.get(str(r), 0) + 1
    conn_fail = {}
    for c in conns:
        with open(os.path.join(d, os.path.basename(c) + ".err")) as f:
            for m in SUMMARY_RE.finditer(f.read()):
                if m.group(2) == "recv" and m.group(9) != "clean":
                    conn_fail[m.group(9)] = conn_fail.get(m.group(9), 0) + 1
    cpu_all = children_cpu() - cpu0
    if keep:  # the logs stay for inspection; the stores (up to GBs with 'unique') go
        for s in [srv] + conns:
            shutil.rmtree(s, ignore_errors=True)
    else:
        shutil.rmtree(d)
    return {"wall": wall, "cpu_all": cpu_all, "blobs": after[0] - before[0], "bytes": after[1] - before[1], "wire": wire,
            "listener_exit": lrc,
            "rc": crc, "listener": outcomes, "connector_fail": conn_fail,
            "vmhwm_kb": int(st["VmHWM"].split()[0]), "cpu_s": st["cpu_s"]}


def run_rsync(srv_t, conn_t, root, tag, timeout, fsync):
    d, srv, conns = fresh_copy(srv_t, conn_t, root, tag)
    before = all_stats([srv] + conns)
    # --exclude: rsync's own temporaries (.name.XXXXXX) from the concurrent passes into S
    opt = "-a --exclude=.* --fsync" if fsync else "-a --exclude=.*"
    cpu0 = children_cpu()
    t0 = time.monotonic()
    procs = [subprocess.Popen(["/bin/sh", "-c", "rsync %s '%s/blobs/' '%s/blobs/' && rsync %s '%s/blobs/' '%s/blobs/'"
                               % (opt, c, srv, opt, srv, c)], stdin=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
             for c in conns]
    rcs = {}
    deadline = t0 + timeout
    for p in procs:
        try:
            r = p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
            r = "timeout"
        rcs[str(r)] = rcs.get(str(r), 0) + 1
    wall = time.monotonic() - t0
    cpu_all = children_cpu() - cpu0
    after = all_stats([srv] + conns)
    shutil.rmtree(d)
    return {"wall": wall, "cpu_all": cpu_all, "blobs": after[0] - before[0], "bytes": after[1] - before[1], "rc": rcs}


def children_cpu():
    """User + system CPU seconds of every waited-for child (and its waited-for descendants)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


CONFIGS = {
    # name: (sessions, unique, wirekit args for both sides, description)
    "same": (200, False, [], "{n} connectors, the same {b} Blobs in every connector store"),
    "same-identity": (200, False, ["--encode", "", "--decode", ""],
                      "the same, offering no encodings (`--encode '' --decode ''` on both sides: identity)"),
    "same-deflate12c": (200, False, ["--encode", "deflate12c", "--decode", "deflate12c"],
                        "the same, offering deflate12c only (`--encode deflate12c --decode deflate12c`)"),
    "same-level1": (200, False, ["--level", "1"],
                    "the same as `same` with `--level 1` on both sides (zstd20c level 1: small match tables)"),
    "unique": (200, True, [], "{n} connectors, {b} Blobs of its own in every connector store"),
    "bulk": (1, False, [], "one connector, 1 GiB of Blobs each way (32 x 32 MiB random per side)"),
}


def run_config(wk, root, a, name, log):
    sessions, unique, extra, desc = CONFIGS[name]
    if a.sessions and name != "bulk":
        sessions = a.sessions
    desc = desc.format(n=sessions, b=a.blobs)
    if a.timeout_ms:
        extra = extra + ["--timeout-ms", a.timeout_ms]
    t = time.monotonic()
    croot = os.path.join(root, name)
    os.makedirs(croot, exist_ok=True)
    srv_t, conn_t = make_templates(wk, croot, sessions, a.blobs, a.shared, unique, name == "bulk")
    log("[%s] setup: %d stores in %.1f s" % (name, sessions + 1, time.monotonic() - t))
    wkr, rsr, rsf = [], [], []
    for i in range(a.repeat):
        r = run_wirekit(wk, srv_t, conn_t, croot, "wk%d" % i, a.timeout, bool(a.dir), extra, not a.ignore_sigpipe)
        wkr.append(r)
        log("[%s] wirekit run %d: %.2f s, %d Blobs / %.1f MB moved, wire %.1f MB, connector exits %s, listener "
            "sessions %s, connector failures %s, listener VmHWM %d kB, CPU %.2f s (all processes %.2f s), listener "
            "still running: %s"
            % (name, i + 1, r["wall"], r["blobs"], r["bytes"] / 1e6, r["wire"] / 1e6, r["rc"], r["listener"],
               r["connector_fail"], r["vmhwm_kb"], r["cpu_s"], r["cpu_all"],
               "yes" if r["listener_exit"] is None else "NO, exit %s" % r["listener_exit"]))
        if not a.no_rsync and not extra:
            for fs_, acc in ((False, rsr), (True, rsf)):
                r = run_rsync(srv_t, conn_t, croot, "rs%d%d" % (i, fs_), a.timeout, fs_)
                acc.append(r)
                log("[%s] rsync -a%s run %d: %.2f s, %d Blobs / %.1f MB moved, exits %s, CPU (all processes) %.2f s"
                    % (name, " --fsync" if fs_ else "", i + 1, r["wall"], r["blobs"], r["bytes"] / 1e6, r["rc"],
                       r["cpu_all"]))
    if not a.dir:
        shutil.rmtree(croot, ignore_errors=True)
    return sessions, desc, extra, wkr, rsr, rsf


def med(rs, f):
    return statistics.median(f(r) for r in rs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("wirekit")
    ap.add_argument("--configs", default="same,same-identity,unique,bulk",
                    help="comma-separated, from: %s" % ", ".join(CONFIGS))
    ap.add_argument("--sessions", type=int, help="connectors for the 'same' configurations (default 200)")
    ap.add_argument("--blobs", type=int, default=20)
    ap.add_argument("--shared", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600, help="bound for one run's sessions, seconds")
    ap.add_argument("--timeout-ms", help="wirekit's phase deadline for both sides (default: wirekit's own)")
    ap.add_argument("--ignore-sigpipe", action="store_true",
                    help="start the listener with SIGPIPE ignored (default: its default disposition)")
    ap.add_argument("--no-rsync", action="store_true")
    ap.add_argument("--dir", help="work directory, kept with every wirekit run's logs (the stores are removed after "
                    "each run; default: a fresh one in /tmp, removed at the end)")
    ap.add_argument("--append-doc", help="append the markdown section to this file (one write)")
    a = ap.parse_args()
    wk = os.path.abspath(a.wirekit)
    root = a.dir or tempfile.mkdtemp(prefix="wk-syncload-")
    os.makedirs(root, exist_ok=True)
    cmd = "/usr/bin/python3 bench/sync_load.py %s" % " ".join(sys.argv[1:])
    fs = fs_of(root)
    load0 = os.getloadavg()
    started = time.gmtime()
    t0 = time.monotonic()

    def log(m):
        print(m, flush=True)

    results = []
    try:
        for name in a.configs.split(","):
            results.append((name,) + run_config(wk, root, a, name, log))
    finally:
        if not a.dir:
            shutil.rmtree(root, ignore_errors=True)

    L = []
    L.append("")
    L.append("## ILTP sync load")
    L.append("")
    load1 = os.getloadavg()
    L.append("- Date: %s UTC (start). Machine: `nproc` = %d (%s), %s; Linux %s; load average (1/5/15 min) %.2f %.2f %.2f at the "
             "start, %.2f %.2f %.2f at the end; stores under %s (%s). Run took %.0f s."
             % (time.strftime("%Y-%m-%d %H:%M", started), os.cpu_count(),
                "2 cores shared with other work running at the same time" if os.cpu_count() == 2 else "shared",
                cpu_model(), platform.release(), *load0, *load1, root, fs, time.monotonic() - t0))
    L.append("- Command (from the repository root): `%s` (wirekit %s, commit %s)." % (cmd, version(wk), commit()))
    L.append("- Load: one listener (`wirekit iltp sync --listen tcp:127.0.0.1:0 --store S`, no `--once`) on loopback, "
             "starting with %d shared 16 KiB Blobs (half text, half random); N connectors (`wirekit iltp sync "
             "--connect ADDR --store Ci`) spawned at once, each with its own store of %d Blobs of 256 B-2 KiB "
             "(half random). Each session runs to fixed point, so both sides end with the union: with Blobs "
             "of their own, later connectors also pull what earlier ones pushed, so the volume grows with N "
             "squared (200 such connectors: hundreds of thousands of fsynced Blob writes). `bulk`: one "
             "connector and the listener each hold 1 GiB of their own (32 random Blobs of 32 MiB). Default "
             "offers: zstd20c both ways. Every received Blob is written, fsynced and renamed (directory fsyncs "
             "shared by concurrent commits), on worker threads, by the wirekit store. The listener runs with "
             "SIGPIPE at its default disposition%s."
             % (a.shared, a.blobs, " (ignored: `--ignore-sigpipe`)" if a.ignore_sigpipe else ""))
    L.append("- Bytes moved = Blob data bytes that appeared in all stores (counted from the files); MB/s = that / "
             "wall time (first spawn to last exit); sessions/s = N / wall time. Medians of %d runs. Peak RSS = the "
             "listener's VmHWM from /proc/PID/status after the last connector exited." % a.repeat)
    L.append("- Reference: for every connector store at once, `rsync -a --exclude='.*' Ci/blobs/ S/blobs/ && rsync "
             "-a --exclude='.*' S/blobs/ Ci/blobs/`, local to local (no network, no ssh: rsync's own pipe between "
             "its processes), as is and with `--fsync` (rsync does not fsync by default; the wirekit store "
             "does). Same stores, same semantics (union), same concurrency.")
    L.append("")
    L.append("| configuration | run | wall s | sessions/s | Blobs moved | MB moved | MB/s | listener peak RSS |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, n, desc, extra, wkr, rsr, rsf in results:
        L.append("| %s | wirekit iltp sync | %.2f | %.1f | %d | %.1f | %.2f | %.0f MiB |"
                 % (desc, med(wkr, lambda r: r["wall"]), med(wkr, lambda r: n / r["wall"]), med(wkr, lambda r: r["blobs"]),
                    med(wkr, lambda r: r["bytes"] / 1e6), med(wkr, lambda r: r["bytes"] / 1e6 / r["wall"]),
                    med(wkr, lambda r: r["vmhwm_kb"]) / 1024))
        for label, rs in (("rsync -a", rsr), ("rsync -a --fsync", rsf)):
            if rs:
                L.append("| | %s | %.2f | %.1f | %d | %.1f | %.2f | |"
                         % (label, med(rs, lambda r: r["wall"]), med(rs, lambda r: n / r["wall"]),
                            med(rs, lambda r: r["blobs"]), med(rs, lambda r: r["bytes"] / 1e6),
                            med(rs, lambda r: r["bytes"] / 1e6 / r["wall"])))
    L.append("")
    for name, n, desc, extra, wkr, rsr, rsf in results:
        L.append("- `%s` (%s): wall per run %s s; listener VmHWM per run %s kB, CPU %s s (all wirekit processes %s s); wire bytes (listener, both "
                 "directions) median %.1f MB; connectors exiting 0 per run: %s of %d; listener session outcomes: %s; "
                 "connector failures: %s%s."
                 % (name, desc, ", ".join("%.2f" % r["wall"] for r in wkr), ", ".join(str(r["vmhwm_kb"]) for r in wkr),
                    ", ".join("%.2f" % r["cpu_s"] for r in wkr), ", ".join("%.2f" % r["cpu_all"] for r in wkr), med(wkr, lambda r: r["wire"]) / 1e6,
                    ", ".join(str(r["rc"].get("0", 0)) for r in wkr), n, "; ".join(str(r["listener"]) for r in wkr),
                    "; ".join(str(r["connector_fail"] or "none") for r in wkr),
                    "" if all(r["listener_exit"] is None for r in wkr) else
                    "; listener exits: %s" % ", ".join(str(r["listener_exit"]) for r in wkr)))
    L.append("")
    text = "\n".join(L) + "\n"
    print(text)
    if a.append_doc:
        fd = os.open(a.append_doc, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode())  # one write: the section lands whole at the end
        finally:
            os.close(fd)
    return 0


def fs_of(path):
    try:
        r = subprocess.run(["df", "-T", path], capture_output=True, text=True, timeout=10)
        return r.stdout.splitlines()[1].split()[1]
    except Exception:  # noqa: BLE001
        return "?"


def commit():
    try:
        r = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip() or "?"
    except Exception:  # noqa: BLE001
        return "?"


def version(wk):
    try:
        r = subprocess.run([wk, "--help"], capture_output=True, text=True, timeout=10)
        m = re.search(r"wirekit (\d+\.\d+\.\d+)", r.stdout + r.stderr)
        return m.group(1) if m else "?"
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main())
