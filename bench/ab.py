#!/usr/bin/python3
"""Side-by-side benchmark runs of two builds (A: the previous commit, B: this one) in one session.

    bench/ab.py --a BUILD_A/bench --b BUILD_B/bench [--rounds N] [--tolerance 0.03] [--all]
                BENCH [BENCH_ARGS...]

Runs BENCH from both folders alternately (A first in odd rounds, B first in even ones, so a drift
of the machine's load falls on both), parses every Markdown table the benchmark prints, and gives,
for each row and each ratio column (a header with "/", "ratio" or "speed-up": the benchmarks print
wirekit beside its baseline as such ratios), the median over the rounds for A and for B and B/A.
With --all the throughput columns are compared too. Rows where B/A is off by more than the
tolerance are marked; the exit status is 0 either way (timing on a shared machine is evidence,
not a verdict). Needs nothing beyond Python's standard library.
"""
import argparse
import os
import statistics
import subprocess
import sys


def num(cell):
    c = cell.strip().rstrip("x%").replace(",", "")
    try:
        return float(c)
    except ValueError:
        return None


def tables(text):
    """{(section, header, row label): {column: value}} for every Markdown table row."""
    rows, section, header, seen = {}, "", None, {}
    for line in text.splitlines():
        if line.startswith("#"):
            section, header = line.strip("# ").strip(), None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-:") for c in cells):
            continue
        label = " / ".join(c for c, h in zip(cells, header) if num(c) is None)
        key = (section, " | ".join(header), label)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = (section, key[1], "%s #%d" % (label, seen[key]))
        cols, named = {}, {}
        for c, h in zip(cells, header):
            named[h] = named.get(h, 0) + 1
            if num(c) is not None:  # a repeated header (encode, then decode) gets " #2"
                cols[h if named[h] == 1 else "%s #%d" % (h, named[h])] = num(c)
        rows[key] = cols
    return rows


def is_ratio(col):
    """A ratio column ("wirekit/direct", "time / hand-written", "ratio", "speed-up"), not a unit
    ("MB/s", "ns/frame", "allocs/frame")."""
    c = col.lower()
    if "ratio" in c or "speed-up" in c:
        return True
    return "/" in c and not c.endswith("/s") and "/frame" not in c and "/object" not in c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="folder holding the previous build's benchmarks")
    ap.add_argument("--b", required=True, help="folder holding this build's benchmarks")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--all", action="store_true", help="compare throughput columns too")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("bench")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    runs = {"A": [], "B": []}
    for r in range(o.rounds):
        for side in ("A", "B") if r % 2 == 0 else ("B", "A"):
            exe = os.path.join(o.a if side == "A" else o.b, o.bench)
            cmd = (["nice", "-n", str(o.nice)] if o.nice else []) + [exe] + o.args
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if p.returncode != 0:
                sys.exit("ab.py: %s exited %d" % (" ".join(cmd), p.returncode))
            runs[side].append(tables(p.stdout))
    print("%s %s: %d rounds each, alternating; medians; B/A of the ratio columns%s" %
          (o.bench, " ".join(o.args), o.rounds, " and throughputs" if o.all else ""))
    print()
    print("| section | row | column | A | B | B/A | |")
    print("|---|---|---|---:|---:|---:|---|")
    off = total = 0
    for key in runs["A"][0]:
        for col in runs["A"][0][key]:
            if not (o.all or is_ratio(col)):
                continue
            va = [t[key][col] for t in runs["A"] if key in t and col in t[key]]
            vb = [t[key][col] for t in runs["B"] if key in t and col in t[key]]
            if not va or not vb:
                continue
            ma, mb = statistics.median(va), statistics.median(vb)
            q = mb / ma if ma else float("nan")
            total += 1
            mark = ""
            if ma and abs(q - 1) > o.tolerance:
                mark, off = "off", off + 1
            print("| %s | %s | %s | %.4g | %.4g | %.3f | %s |" % (key[0][:40], key[2], col, ma, mb, q, mark))
    print()
    print("%d of %d compared values differ by more than %.0f %%" % (off, total, 100 * o.tolerance))


if __name__ == "__main__":
    main()
