#!/usr/bin/python3
"""CLI contract tests for `wirekit iltp` (Lace-065 stream layer, offers and prefaces).

    /usr/bin/python3 cli_test.py path/to/wirekit VECTORS_DIR

VECTORS_DIR is the folder holding iltp/ (CMake's WK_VECTORS_DIR, tests/vectors): the dictionary is
checked against iltp/dictionary.bin and against the seed's fragments in iltp/dictionary-fragments.txt.
Exit statuses: 0 ok, 1 usage or local failure, 2 invalid input, 3 input ended early. Errors are
one line on stderr starting with the error's name. Ends with `iltp_cli: N passed, M failed`.
"""
import os
import random
import re
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
from wktest import check, err_lines, text  # noqa: E402

if len(sys.argv) < 3:
    print("usage: cli_test.py WIREKIT_CLI VECTORS_DIR")
    sys.exit(1)
WIREKIT = sys.argv[1]
VECTORS = sys.argv[2]


def run(args, data=b""):
    return wktest.run([WIREKIT] + args, data, timeout=120)


def expect_error(label, r, rc, names, offset=None, stdout_empty=False):
    """Exit status rc and exactly one stderr line starting with one of names (and, if given,
    `NAME at offset N`)."""
    if isinstance(names, str):
        names = (names,)
    lines = err_lines(r)
    ok = r.returncode == rc and len(lines) == 1 and any(lines[0].startswith(n) for n in names)
    if ok and offset is not None:
        ok = any(lines[0].startswith("%s at offset %d" % (n, offset)) for n in names)
    if ok and stdout_empty:
        ok = r.stdout == b""
    want = "/".join(names) + ("" if offset is None else " at offset %d" % offset)
    return check("%s: exit %d, one stderr line %s" % (label, rc, want), ok,
                 "rc=%d stderr=%r" % (r.returncode, text(r.stderr)))


B64A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
PREFACE_GLYPH = "\U0001FAA2".encode()  # F0 9F AA A2
GLYPH = "\U0001F5A7".encode()          # F0 9F 96 A7


def b64a(data):
    bits = int.from_bytes(data, "big") << ((6 - len(data) * 8 % 6) % 6)
    n = (len(data) * 8 + 5) // 6
    return "".join(B64A[(bits >> (6 * (n - 1 - i))) & 63] for i in range(n))


def preface(nonce_text, decode=None, encode=None):
    s = PREFACE_GLYPH + (": iltp/0.13\nNonce: %s\n" % nonce_text).encode()
    if decode is not None:
        s += ("Decode: %s\n" % decode).encode()
    if encode is not None:
        s += ("Encode: %s\n" % encode).encode()
    return s + b"\n"


def corpus(rng, size):
    out = []
    n = 0
    while n < size:
        h = b64a(bytes(rng.getrandbits(8) for _ in range(32)))
        k = rng.random()
        if k < 0.5:
            c = ("Advertised('B.%s.H3')\n" % h).encode()
        elif k < 0.8:
            d = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 600)))
            c = GLYPH + (": B.%s.H3\nData-Length: %d\n\n" % (h, len(d))).encode() + d
        else:
            c = b"RoundComplete()\n\n"
        out.append(c)
        n += len(c)
    return b"".join(out)[:size]


def seed_dictionary(path):
    """Builds the dictionary from the Lace-065 seed's fragment list (copied verbatim)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("The dictionary is these 830 bytes"))
    out = []
    started = False
    for l in lines[start + 1:]:
        if l.startswith('"') and l.endswith('"'):
            started = True
            out.append(l[1:-1].replace("\\n", "\n").replace("\\t", "\t"))
        elif l.startswith("#") or (not started and not l.strip()) or not started:
            continue
        else:
            break
    return "".join(out).encode()


def main():
    t0 = time.time()
    rng = random.Random(0x065C11)
    tmp = tempfile.mkdtemp(prefix="wk_iltp_cli_")
    commands = ["encode", "decode", "select", "dictionary", "demo"]

    # ------------------------------------------------------------------ help and usage
    for args in (["--help"], ["iltp", "--help"]):
        r = run(args)
        out = r.stdout.decode("utf-8", "replace").splitlines()
        counts = {c: sum(1 for l in out if re.match(r"^\s*wirekit iltp %s(\s|$)" % c, l)) for c in commands}
        check("`wirekit %s` exits 0 and lists each iltp command on exactly one line" % " ".join(args),
              r.returncode == 0 and all(v == 1 for v in counts.values()),
              "rc=%d counts=%s" % (r.returncode, counts))
    for c in commands:
        r = run(["iltp", c, "--help"])
        check("`wirekit iltp %s --help` exits 0 with usage on stdout" % c,
              r.returncode == 0 and r.stdout.startswith(b"usage:") and not r.stderr,
              "rc=%d %r" % (r.returncode, text(r.stdout + r.stderr)))
    r = run(["iltp"])
    check("`wirekit iltp` without a command exits 1", r.returncode == 1, "rc=%d" % r.returncode)
    usage_cases = [
        (["iltp", "bogus"], "unknown command"),
        (["nosuchmodule"], "unknown module"),
        (["iltp", "encode"], "encode without --encoding"),
        (["iltp", "decode"], "decode without --encoding"),
        (["iltp", "encode", "--encoding"], "encode with --encoding lacking its value"),
        (["iltp", "encode", "--encoding", "gzip"], "encode --encoding gzip"),
        (["iltp", "decode", "--encoding", "zstd"], "decode --encoding zstd"),
        (["iltp", "encode", "--encoding", "zstd20c", "--level", "20"], "zstd20c --level 20"),
        (["iltp", "encode", "--encoding", "zstd20c", "--level", "abc"], "--level abc"),
        (["iltp", "encode", "--encoding", "zstd20c", "--level", "-1"], "--level -1"),
        (["iltp", "encode", "--encoding", "deflate12c", "--level", "10"], "deflate12c --level 10"),
        (["iltp", "encode", "--encoding", "deflate12c", "--batch-bytes", "0"], "--batch-bytes 0"),
        (["iltp", "encode", "--encoding", "deflate12c", "--bogus"], "encode --bogus"),
        (["iltp", "encode", "--encoding", "deflate12c", "--backend", "gzip"], "encode --backend gzip"),
        (["iltp", "decode", "--encoding", "deflate12c", "--backend", "ISAL"], "decode --backend ISAL"),
        (["iltp", "decode", "--encoding", "deflate12c", "--backend"], "decode --backend lacking its value"),
        (["iltp", "dictionary", "extra"], "dictionary with an argument"),
        (["iltp", "select", "onlyone"], "select with one file"),
        (["iltp", "select", os.path.join(tmp, "missing-a"), os.path.join(tmp, "missing-b")],
         "select with missing files"),
    ]
    for args, label in usage_cases:
        expect_error("usage: " + label, run(args, b"abc"), 1, "WK_ERR_USAGE", stdout_empty=True)

    # ------------------------------------------------------------------ dictionary
    r = run(["iltp", "dictionary"])
    D = r.stdout
    check("`wirekit iltp dictionary` exits 0 and writes 830 bytes", r.returncode == 0 and len(D) == 830,
          "rc=%d len=%d" % (r.returncode, len(D)))
    vec = os.path.join(VECTORS, "iltp", "dictionary.bin")
    try:
        want = open(vec, "rb").read()
        check("dictionary equals %s" % vec, D == want)
    except OSError as ex:
        check("dictionary vector readable", False, str(ex))
    frag = os.path.join(VECTORS, "iltp", "dictionary-fragments.txt")
    try:
        built = seed_dictionary(frag)
        check("dictionary equals the seed's fragments concatenated (%d bytes)" % len(built),
              D == built and len(built) == 830)
    except Exception as ex:
        check("dictionary from the seed's fragments", False, repr(ex))

    # ------------------------------------------------------------------ round trips
    data_big = corpus(rng, 200 * 1024)
    data_small = data_big[:8 * 1024]
    for tok in ("identity", "deflate12c", "zstd20c"):
        for batch in (1, 100, 65536):
            data = data_small if batch == 1 else data_big
            for end in (True, False):
                label = "%s batch %d%s" % (tok, batch, "" if end else " --no-end-mark")
                args = ["iltp", "encode", "--encoding", tok, "--batch-bytes", str(batch)]
                if not end:
                    args.append("--no-end-mark")
                r = run(args, data)
                if not check(label + ": encode exits 0", r.returncode == 0 and not r.stderr,
                             "rc=%d %s" % (r.returncode, text(r.stderr))):
                    continue
                s = r.stdout
                if tok == "identity":
                    check(label + ": identity writes the input unchanged", s == data)
                elif tok == "deflate12c":
                    check(label + ": stream ends with %s" % ("00 00 ff ff 03 00" if end else "00 00 ff ff"),
                          s.endswith(b"\x00\x00\xff\xff\x03\x00" if end else b"\x00\x00\xff\xff"), s[-6:].hex())
                else:
                    check(label + ": stream starts 00 50%s" % (", ends 01 00 00" if end else ""),
                          s[:2] == b"\x00\x50" and (s.endswith(b"\x01\x00\x00") or not end), s[-6:].hex())
                d = run(["iltp", "decode", "--encoding", tok], s)
                if end or tok == "identity":
                    check(label + ": decode exits 0 and restores the input",
                          d.returncode == 0 and d.stdout == data and not d.stderr,
                          "rc=%d out %d/%d %s" % (d.returncode, len(d.stdout), len(data), text(d.stderr)))
                else:
                    lines = err_lines(d)
                    ok = (d.returncode == 3 and len(lines) == 1 and lines[0].startswith("ILTP_ERR_TRUNCATED")
                          and "offset" in lines[0])
                    check(label + ": decode exits 3 with one line ILTP_ERR_TRUNCATED ... offset", ok,
                          "rc=%d %s" % (d.returncode, text(d.stderr)))
                    check(label + ": the truncation offset is the stream length %d" % len(s),
                          ("at offset %d" % len(s)) in (lines[0] if lines else ""), text(d.stderr))
                    check(label + ": every flushed batch was still decoded", d.stdout == data,
                          "out %d/%d" % (len(d.stdout), len(data)))
    # deflate12c backends: each decoder reads what either encoder writes; the streams differ
    streams = {}
    for eb in ("zlib", "isal"):
        r = run(["iltp", "encode", "--encoding", "deflate12c", "--backend", eb, "--batch-bytes", "4096"], data_big)
        streams[eb] = r.stdout
        check("deflate12c --backend %s: encode exits 0, ends 00 00 ff ff 03 00" % eb,
              r.returncode == 0 and r.stdout.endswith(b"\x00\x00\xff\xff\x03\x00"), text(r.stderr))
        for db in ("zlib", "isal"):
            d = run(["iltp", "decode", "--encoding", "deflate12c", "--backend", db], r.stdout)
            check("deflate12c encoded with %s, decoded with %s: exit 0, the input" % (eb, db),
                  d.returncode == 0 and d.stdout == data_big, "rc=%d %s" % (d.returncode, text(d.stderr)))
    r = run(["iltp", "encode", "--encoding", "deflate12c", "--batch-bytes", "4096"], data_big)
    check("deflate12c default backend is isal", r.returncode == 0 and r.stdout == streams["isal"])
    check("the two deflate12c encoders write different streams", streams["zlib"] != streams["isal"])
    r = run(["iltp", "encode", "--encoding", "zstd20c", "--backend", "zlib"], data_small)
    d = run(["iltp", "decode", "--encoding", "zstd20c", "--backend", "isal"], r.stdout)
    check("zstd20c accepts --backend and ignores it", r.returncode == 0 and d.returncode == 0 and d.stdout == data_small)
    for cmd in ("encode", "decode"):
        r = run(["iltp", cmd, "--help"])
        check("iltp %s --help names --backend zlib|isal" % cmd, r.returncode == 0 and b"--backend" in r.stdout
              and b"isal" in r.stdout and b"zlib" in r.stdout)
    # levels
    for tok, levels in (("deflate12c", (0, 1, 9)), ("zstd20c", (1, 19))):
        for lv in levels:
            r = run(["iltp", "encode", "--encoding", tok, "--level", str(lv)], data_big)
            d = run(["iltp", "decode", "--encoding", tok], r.stdout)
            check("%s --level %d: round trip" % (tok, lv),
                  r.returncode == 0 and d.returncode == 0 and d.stdout == data_big,
                  "rc=%d/%d %s" % (r.returncode, d.returncode, text(r.stderr + d.stderr)))
    # empty input
    for tok in ("deflate12c", "zstd20c"):
        r = run(["iltp", "encode", "--encoding", tok], b"")
        d = run(["iltp", "decode", "--encoding", tok], r.stdout)
        check("%s empty input: end mark only, decodes to nothing, exit 0" % tok,
              r.returncode == 0 and d.returncode == 0 and d.stdout == b"", text(d.stderr))
        d = run(["iltp", "decode", "--encoding", tok], b"")
        expect_error("%s decode of empty input" % tok, d, 3, "ILTP_ERR_TRUNCATED", 0)
    d = run(["iltp", "decode", "--encoding", "identity"], b"")
    check("identity decode of empty input exits 0", d.returncode == 0 and d.stdout == b"")

    # ------------------------------------------------------------------ invalid encoded input
    dec = lambda tok, s: run(["iltp", "decode", "--encoding", tok], s)
    expect_error("zstd20c 04 50 ...", dec("zstd20c", b"\x04\x50\x01\x00\x00"), 2, "ILTP_ERR_ZSTD_HEADER", 0)
    expect_error("zstd20c with magic 28 b5 2f fd", dec("zstd20c", b"\x28\xb5\x2f\xfd\x00\x50\x01\x00\x00"), 2,
                 "ILTP_ERR_ZSTD_HEADER", 0)
    expect_error("zstd20c 00 58 ... (2^21 window)", dec("zstd20c", b"\x00\x58\x01\x00\x00"), 2,
                 "ILTP_ERR_ZSTD_WINDOW", 1)
    expect_error("zstd20c 00 51 ... (2^20 + 2^17 window)", dec("zstd20c", b"\x00\x51\x01\x00\x00"), 2,
                 "ILTP_ERR_ZSTD_WINDOW", 1)
    r = dec("zstd20c", b"\x00\x48\x01\x00\x00")
    check("zstd20c 00 48 01 00 00 (2^19 window, empty): exit 0", r.returncode == 0 and r.stdout == b"",
          "rc=%d %s" % (r.returncode, text(r.stderr)))
    expect_error("zstd20c reserved block type", dec("zstd20c", b"\x00\x50\x07\x00\x00"), 2,
                 "ILTP_ERR_ZSTD_MALFORMED")
    expect_error("deflate12c 07 00 (reserved block type)", dec("deflate12c", b"\x07\x00"), 2,
                 "ILTP_ERR_DEFLATE_MALFORMED")
    expect_error("deflate12c stored block with bad LEN/NLEN", dec("deflate12c", b"\x00\x05\x00\x00\x00"), 2,
                 "ILTP_ERR_DEFLATE_MALFORMED")
    for tok in ("deflate12c", "zstd20c"):
        s = run(["iltp", "encode", "--encoding", tok], data_big).stdout
        expect_error("%s valid stream + X" % tok, dec(tok, s + b"X"), 2, "ILTP_ERR_AFTER_END_MARK", len(s))
        expect_error("%s valid stream + 8 bytes of garbage" % tok, dec(tok, s + b"XXXXXXXX"), 2,
                     "ILTP_ERR_AFTER_END_MARK", len(s))
        expect_error("%s valid stream + a second end mark" % tok,
                     dec(tok, s + (b"\x03\x00" if tok == "deflate12c" else b"\x01\x00\x00\x00\x00\x00")), 2,
                     "ILTP_ERR_AFTER_END_MARK", len(s))
        expect_error("%s valid stream + partial preface lead" % tok, dec(tok, s + PREFACE_GLYPH[:3]), 3,
                     "ILTP_ERR_TRUNCATED")
        expect_error("%s stream cut in the middle" % tok, dec(tok, s[:len(s) // 2]), 3, "ILTP_ERR_TRUNCATED",
                     len(s) // 2)
        nonce = b64a(bytes(rng.randint(1, 255) for _ in range(32)))
        p = preface(nonce, "deflate12c,zstd20c", "deflate12c")
        r = dec(tok, s + p)
        m = re.search(rb"offset (\d+)", r.stderr)
        check("%s valid stream + raw preface: exit 0, decoded, stderr gives preface offset %d" % (tok, len(s)),
              r.returncode == 0 and r.stdout == data_big and m is not None and int(m.group(1)) == len(s),
              "rc=%d %s" % (r.returncode, text(r.stderr)))
        r = dec(tok, s + PREFACE_GLYPH + b": ")
        m = re.search(rb"offset (\d+)", r.stderr)
        check("%s valid stream + bare preface lead F0 9F AA A2 3A 20: exit 0, offset %d" % (tok, len(s)),
              r.returncode == 0 and m is not None and int(m.group(1)) == len(s),
              "rc=%d %s" % (r.returncode, text(r.stderr)))
    # deflate reference before the dictionary: compressed against a longer, different dictionary
    other = bytes(rng.getrandbits(8) for _ in range(3000)) + D
    co = zlib.compressobj(6, zlib.DEFLATED, -12, 8, zlib.Z_DEFAULT_STRATEGY, other)
    s = co.compress(other[:300] + data_small) + co.flush(zlib.Z_SYNC_FLUSH) + co.flush(zlib.Z_FINISH)
    expect_error("deflate12c reference before the dictionary", dec("deflate12c", s), 2,
                 "ILTP_ERR_DEFLATE_REFERENCE")
    r = dec("deflate12c", s)
    check("deflate12c reference before the dictionary: offset reported",
          bool(re.match(rb"ILTP_ERR_DEFLATE_REFERENCE at offset \d+", r.stderr)), text(r.stderr))

    # ------------------------------------------------------------------ select
    def nonce_bytes():
        return bytes(rng.randint(1, 255) for _ in range(32))

    offers = {
        "S": ("deflate12c,zstd20c", "zstd20c,deflate12c"),
        "M": ("deflate12c", "deflate12c"),
        "B": ("deflate12c,zstd20c", "deflate12c"),
        "X": (None, None),  # a build offering no encodings
    }
    files = {}
    for name, (dl, el) in offers.items():
        p = preface(b64a(nonce_bytes()), dl, el)
        files[name] = os.path.join(tmp, name + ".preface")
        with open(files[name], "wb") as f:
            f.write(p)
        if name == "S":
            check("S preface is exactly 122 bytes", len(p) == 122, str(len(p)))
        if name == "B":
            check("B preface is exactly 114 bytes", len(p) == 114, str(len(p)))

    def sel(a_enc, b_dec):
        a = a_enc.split(",") if a_enc else []
        b = b_dec.split(",") if b_dec else []
        return next((t for t in a if t in b), "identity")

    # the seed's stated results
    seed_expect = {("S", "M"): ("deflate12c", "deflate12c"), ("S", "B"): ("zstd20c", "deflate12c")}
    for a in offers:
        for b in offers:
            if a == b:
                continue
            ab = sel(offers[a][1], offers[b][0])
            ba = sel(offers[b][1], offers[a][0])
            if (a, b) in seed_expect:
                assert seed_expect[(a, b)] == (ab, ba)
            if "X" in (a, b):
                assert ab == ba == "identity"
            r = run(["iltp", "select", files[a], files[b]])
            want = "A->B: %s\nB->A: %s\n" % (ab, ba)
            check("select %s %s prints %r" % (a, b, want),
                  r.returncode == 0 and r.stdout.decode() == want and not r.stderr,
                  "rc=%d out=%r err=%s" % (r.returncode, r.stdout, text(r.stderr)))
    r = run(["iltp", "select", "--json", files["S"], files["B"]])
    check("select --json S B", r.returncode == 0 and r.stdout == b'{"A->B":"zstd20c","B->A":"deflate12c"}\n',
          "rc=%d %r" % (r.returncode, r.stdout))

    def pfile(name, content):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(content)
        return path

    # unknown well-formed tokens take part in selection by text
    fa = pfile("u_a", preface(b64a(nonce_bytes()), "zstd20c", "brotli22,deflate12c"))
    fb = pfile("u_b", preface(b64a(nonce_bytes()), "brotli22,deflate12c", "zstd20c"))
    r = run(["iltp", "select", fa, fb])
    check("select compares token text (unknown token brotli22 selected)",
          r.returncode == 0 and r.stdout == b"A->B: brotli22\nB->A: zstd20c\n", "%r %s" % (r.stdout, text(r.stderr)))
    # only one field present
    fa = pfile("o_a", preface(b64a(nonce_bytes()), "deflate12c", None))
    fb = pfile("o_b", preface(b64a(nonce_bytes()), None, "zstd20c,deflate12c"))
    r = run(["iltp", "select", fa, fb])
    check("select with absent Encode / absent Decode fields",
          r.returncode == 0 and r.stdout == b"A->B: identity\nB->A: deflate12c\n", "%r %s" % (r.stdout, text(r.stderr)))
    # trailing bytes after a preface are ignored
    fa = pfile("t_a", open(files["S"], "rb").read() + b"\x00\x50\x01\x00\x00")
    r = run(["iltp", "select", fa, files["B"]])
    check("select ignores bytes after the preface", r.returncode == 0 and r.stdout == b"A->B: zstd20c\nB->A: deflate12c\n",
          "%r %s" % (r.stdout, text(r.stderr)))

    # equal nonces
    same = b64a(nonce_bytes())
    fa = pfile("eq_a", preface(same, "deflate12c", "deflate12c"))
    fb = pfile("eq_b", preface(same, "zstd20c", "zstd20c"))
    expect_error("select with equal nonces", run(["iltp", "select", fa, fb]), 2, "ILTP_ERR_SAME_NONCE", stdout_empty=True)

    good = b64a(nonce_bytes())
    tail_bad = good[:-1] + B64A[(B64A.index(good[-1]) & ~3) | 1]
    many = ",".join("t%03d" % i for i in range(220))
    malformed = [
        ("nonce with nonzero tail bits", preface(tail_bad, "deflate12c"), ("ILTP_ERR_NONCE",)),
        ("all-zero nonce", preface("0" * 43, "deflate12c"), ("ILTP_ERR_NONCE",)),
        ("nonce of 42 characters", preface(good[:42], "deflate12c"), ("ILTP_ERR_NONCE", "ILTP_ERR_PREFACE")),
        ("nonce with a '+'", preface("+" + good[1:], "deflate12c"), ("ILTP_ERR_NONCE", "ILTP_ERR_PREFACE")),
        ("duplicate token", preface(good, "deflate12c,deflate12c"), ("ILTP_ERR_OFFER",)),
        ("identity listed", preface(good, None, "identity"), ("ILTP_ERR_OFFER",)),
        ("empty list", preface(good, ""), ("ILTP_ERR_OFFER", "ILTP_ERR_TOKEN", "ILTP_ERR_PREFACE")),
        ("space after comma", preface(good, "deflate12c, zstd20c"), ("ILTP_ERR_TOKEN", "ILTP_ERR_OFFER", "ILTP_ERR_PREFACE")),
        ("upper-case token", preface(good, "Deflate12c"), ("ILTP_ERR_TOKEN", "ILTP_ERR_OFFER")),
        ("token of 33 characters", preface(good, "a" * 33), ("ILTP_ERR_TOKEN", "ILTP_ERR_OFFER")),
        ("Encode before Decode", PREFACE_GLYPH + (": iltp/0.13\nNonce: %s\nEncode: deflate12c\nDecode: deflate12c\n\n"
                                                  % good).encode(), ("ILTP_ERR_PREFACE",)),
        ("unknown field", PREFACE_GLYPH + (": iltp/0.13\nNonce: %s\nWindow: 12\n\n" % good).encode(),
         ("ILTP_ERR_PREFACE",)),
        ("CR LF line ends", preface(good, "deflate12c").replace(b"\n", b"\r\n"), ("ILTP_ERR_PREFACE",)),
        ("missing Nonce", PREFACE_GLYPH + b": iltp/0.13\nDecode: deflate12c\n\n", ("ILTP_ERR_PREFACE",)),
        ("bad glyph", b"\xF0\x9F\x96\xA7" + preface(good)[4:], ("ILTP_ERR_PREFACE",)),
        ("other version iltp/0.14", preface(good).replace(b"0.13", b"0.14"), ("ILTP_ERR_VERSION", "ILTP_ERR_PREFACE")),
        ("form 1.0 preface", PREFACE_GLYPH + (": iltp/1.0 %s\n" % good).encode(), ("ILTP_ERR_VERSION",)),
        ("preface over 1024 bytes", preface(good, many), ("ILTP_ERR_PREFACE_TOO_LONG",)),
    ]
    for label, content, names in malformed:
        fa = pfile("bad", content)
        expect_error("select, A malformed (%s)" % label, run(["iltp", "select", fa, files["B"]]), 2, names,
                     stdout_empty=True)
    fb = pfile("bad_b", preface(tail_bad, "deflate12c"))
    expect_error("select, B malformed (nonce tail bits)", run(["iltp", "select", files["S"], fb]), 2,
                 "ILTP_ERR_NONCE", stdout_empty=True)
    full = open(files["S"], "rb").read()
    for cut in (0, 10, 60, len(full) - 1):
        fa = pfile("trunc", full[:cut])
        expect_error("select, A truncated to %d bytes" % cut, run(["iltp", "select", fa, files["B"]]), 3,
                     "ILTP_ERR_TRUNCATED", stdout_empty=True)

    # ------------------------------------------------------------------ demo
    r = run(["iltp", "demo"])
    out = r.stdout.decode("utf-8", "replace")
    sb = [l for l in out.splitlines() if l.startswith("S->B: zstd20c")]
    bs = [l for l in out.splitlines() if l.startswith("B->S: deflate12c")]
    check("`wirekit iltp demo` exits 0 with S->B: zstd20c and B->S: deflate12c lines, round trip ok",
          r.returncode == 0 and len(sb) == 1 and len(bs) == 1 and "round trip ok" in sb[0]
          and "round trip ok" in bs[0], "rc=%d %r" % (r.returncode, out[:300]))

    print("iltp_cli: %.1f s" % (time.time() - t0))
    sys.exit(wktest.summary("iltp_cli"))


if __name__ == "__main__":
    main()
