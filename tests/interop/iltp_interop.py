#!/usr/bin/python3
"""Interop tests for the ILTP stream layer (Lace-065) against independent implementations.

Run with Debian's /usr/bin/python3 (it has zlib and python3-zstandard):
    /usr/bin/python3 iltp_interop.py path/to/wirekit

Both directions, for deflate12c (with each wirekit backend: --backend zlib and --backend isal) and
zstd20c:
  a. Python (zlib, python-zstandard) decodes what `wirekit iltp encode` writes, byte for byte, and
     checks the framing: deflate12c batches end with 00 00 ff ff and the stream with 03 00; the
     zstd20c frame starts with 00 50, is made of complete blocks and ends with 01 00 00; every
     complete batch decodes once the bytes up to its flush are fed.
  b. `wirekit iltp decode` decodes what Python writes, for batch sizes from 1 byte to 1 MiB and
     several levels (and deflate strategies / memLevels), plus streams Python writes that the
     spec forbids (wrong header, window, dictionary), which wirekit must reject.
  c. A Python-written stream followed by a raw preface: wirekit exits 0 and reports the offset.
Prints one line per check and ends with `iltp_interop: N passed, M failed`.
"""
import os
import random
import re
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
from wktest import check  # noqa: E402

try:
    import zstandard as zstd
except ImportError:  # pragma: no cover
    print("iltp_interop: python3-zstandard is missing (run with /usr/bin/python3): skipped")
    sys.exit(77)

if len(sys.argv) < 2:
    print("usage: iltp_interop.py WIREKIT_CLI")
    sys.exit(1)
WIREKIT = sys.argv[1]


# The encoders under test: deflate12c with each backend, zstd20c.
CODERS = (("deflate12c", "zlib"), ("deflate12c", "isal"), ("zstd20c", None))


def backend_opt(backend):
    return ["--backend", backend] if backend else []


def coder_label(tok, backend):
    return "%s (%s)" % (tok, backend) if backend else tok


def run(args, data=b""):
    return wktest.run([WIREKIT] + args, data, timeout=120)


def short(b, n=160):
    s = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
    return s if len(s) <= n else s[:n] + "..."


# ------------------------------------------------------------------------------------------------
# Corpus
# ------------------------------------------------------------------------------------------------
B64A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
GLYPH = "\U0001F5A7".encode()          # F0 9F 96 A7
PREFACE_GLYPH = "\U0001FAA2".encode()  # F0 9F AA A2


def b64a(data):
    """RFC 4648 bit packing with the B64A alphabet, no padding, zero tail bits."""
    bits = int.from_bytes(data, "big") << ((6 - len(data) * 8 % 6) % 6)
    n = (len(data) * 8 + 5) // 6
    return "".join(B64A[(bits >> (6 * (n - 1 - i))) & 63] for i in range(n))


def make_corpus(rng, size):
    """ILTP-shaped bytes: fact blocks, Blob records, listings, fences."""
    hashes = [b64a(bytes(rng.getrandbits(8) for _ in range(32))) for _ in range(300)]
    words = ["lace", "knot", "thread", "weave", "plex", "seal", "blob", "round", "offer",
             "fence", "policy", "symbol", "Name", "Color", "Owner"]
    out = []
    total = 0
    rnd = 0
    while total < size:
        parts = []
        kind = rng.random()
        if kind < 0.35:
            for _ in range(rng.randint(1, 12)):
                parts.append("Advertised('B.%s.H3')\n" % rng.choice(hashes))
            for _ in range(rng.randint(0, 4)):
                parts.append("AdvertisedField('S.%s.H3','%s','%d','V.%s.H3')\n"
                             % (rng.choice(hashes), rng.choice(words), rng.randint(0, 1),
                                rng.choice(hashes)))
            parts.append("\n")
            chunk = "".join(parts).encode()
        elif kind < 0.7:
            n = rng.choice([0, rng.randint(1, 64), rng.randint(64, 3000), rng.randint(3000, 20000)])
            if rng.random() < 0.5:
                data = " ".join(rng.choice(words) for _ in range(n // 5 + 1)).encode()[:n]
            else:
                data = bytes(rng.getrandbits(8) for _ in range(n))
            chunk = (GLYPH + (": B.%s.H3\nData-Length: %d\n\n" % (rng.choice(hashes), len(data))).encode()
                     + data)
        elif kind < 0.85:
            parts.append("::offers\n")
            for _ in range(rng.randint(1, 6)):
                parts.append("S.%s.H3\n\tBy: V.%s.H3\n\t%s: %s\n" % (
                    rng.choice(hashes), rng.choice(hashes), rng.choice(words), rng.choice(words)))
            parts.append("\n::want\nS.%s.H3\n\n" % rng.choice(hashes))
            chunk = "".join(parts).encode()
        else:
            rnd += 1
            chunk = ("RoundComplete()\n\n::round-end\n::offers-changed\n\n::want\n\nRound('%d')\n\n"
                     % rnd).encode()
        out.append(chunk)
        total += len(chunk)
    return b"".join(out)[:size]


# ------------------------------------------------------------------------------------------------
# Independent codecs
# ------------------------------------------------------------------------------------------------
def zdict_raw(d):
    return zstd.ZstdCompressionDict(d, dict_type=zstd.DICT_TYPE_RAWCONTENT)


def py_deflate(data, batch, level, dictionary, mem_level=8, strategy=zlib.Z_DEFAULT_STRATEGY,
               wbits=-12, sync=True):
    co = zlib.compressobj(level, zlib.DEFLATED, wbits, mem_level, strategy, dictionary)
    parts = []
    for i in range(0, len(data), batch):
        parts.append(co.compress(data[i:i + batch]))
        if sync:
            parts.append(co.flush(zlib.Z_SYNC_FLUSH))
    parts.append(co.flush(zlib.Z_FINISH))
    return b"".join(parts)


def py_zstd(data, batch, level, dictionary, window_log=20, fmt=None, block_flush=True, **kw):
    params = zstd.ZstdCompressionParameters.from_level(
        level, window_log=window_log,
        format=zstd.FORMAT_ZSTD1_MAGICLESS if fmt is None else fmt,
        write_content_size=kw.get("content_size", 0), write_checksum=kw.get("checksum", 0),
        write_dict_id=0)
    cctx = zstd.ZstdCompressor(dict_data=zdict_raw(dictionary), compression_params=params)
    co = cctx.compressobj()
    parts = []
    for i in range(0, len(data), batch):
        parts.append(co.compress(data[i:i + batch]))
        if block_flush:
            parts.append(co.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK))
    parts.append(co.flush(zstd.COMPRESSOBJ_FLUSH_FINISH))
    return b"".join(parts)


def py_inflate(stream, dictionary):
    do = zlib.decompressobj(wbits=-12, zdict=dictionary)
    out = do.decompress(stream)
    return out, do.eof, do.unused_data + do.unconsumed_tail


def py_inflate_strict(stream, dictionary, step=32):
    """Inflates with output handed out `step` bytes at a time, so zlib keeps only its 4096-byte
    window (plus < step bytes of this call's output) as history: a distance beyond the window or
    before the dictionary fails with 'invalid distance too far back'."""
    do = zlib.decompressobj(wbits=-12, zdict=dictionary)
    out = []
    buf = stream
    while True:
        chunk = do.decompress(buf, step)
        buf = do.unconsumed_tail
        out.append(chunk)
        if do.eof or (not chunk and not buf):
            break
    return b"".join(out), do.eof, do.unused_data + buf


def py_unzstd(stream, dictionary):
    dctx = zstd.ZstdDecompressor(dict_data=zdict_raw(dictionary),
                                 format=zstd.FORMAT_ZSTD1_MAGICLESS, max_window_size=1 << 20)
    do = dctx.decompressobj()
    out = do.decompress(stream)
    return out, do.eof, do.unused_data


def zstd_blocks(stream):
    """Walks a magicless zstd20c frame. Returns (block end offsets, error or None)."""
    if stream[:2] != b"\x00\x50":
        return [], "frame header %s, want 00 50" % stream[:2].hex()
    pos = 2
    ends = []
    while True:
        if pos + 3 > len(stream):
            return ends, "block header cut at %d" % pos
        h = stream[pos] | stream[pos + 1] << 8 | stream[pos + 2] << 16
        last, btype, bsize = h & 1, (h >> 1) & 3, h >> 3
        if btype == 3:
            return ends, "reserved block type at %d" % pos
        if bsize > 128 * 1024:
            return ends, "block size %d > 128 KiB at %d" % (bsize, pos)
        hdr_at = pos
        pos += 3 + (1 if btype == 1 else bsize)
        if pos > len(stream):
            return ends, "block at %d runs past the end" % hdr_at
        ends.append(pos)
        if last:
            if stream[hdr_at:pos] != b"\x01\x00\x00":
                return ends, "last block %s is not the empty raw block 01 00 00" % stream[hdr_at:pos][:8].hex()
            if pos != len(stream):
                return ends, "%d bytes after the last block" % (len(stream) - pos)
            return ends, None


def sync_ends(stream):
    """Offsets just after each 00 00 ff ff in a deflate stream (a superset of the batch ends)."""
    ends = []
    i = stream.find(b"\x00\x00\xff\xff")
    while i >= 0:
        ends.append(i + 4)
        i = stream.find(b"\x00\x00\xff\xff", i + 1)
    return ends


def decoded_lengths_at(stream, ends, token, dictionary):
    """Feeds the stream piece by piece (cut at `ends`) and returns the decoded length at each."""
    if token == "deflate12c":
        do = zlib.decompressobj(wbits=-12, zdict=dictionary)
    else:
        do = zstd.ZstdDecompressor(dict_data=zdict_raw(dictionary),
                                   format=zstd.FORMAT_ZSTD1_MAGICLESS,
                                   max_window_size=1 << 20).decompressobj()
    total, prev, lens = 0, 0, set()
    for e in ends:
        total += len(do.decompress(stream[prev:e]))
        prev = e
        lens.add(total)
    return lens


# ------------------------------------------------------------------------------------------------
def main():
    t0 = time.time()
    rng = random.Random(0x11796065)

    r = run(["iltp", "dictionary"])
    D = r.stdout
    if not check("dictionary: wirekit iltp dictionary exits 0 with 830 bytes",
                 r.returncode == 0 and len(D) == 830, "rc=%d len=%d" % (r.returncode, len(D))):
        sys.exit(wktest.summary("iltp_interop") or 1)

    corpus = make_corpus(rng, 1100 * 1024)          # ~1.07 MiB: 1 MiB batches give two batches
    small = corpus[:20 * 1024]
    medium = corpus[:128 * 1024]
    randbytes = bytes(rng.getrandbits(8) for _ in range(300 * 1024))
    inputs = {"corpus": corpus, "random": randbytes, "small": small}

    py_decode = {"deflate12c": py_inflate, "zstd20c": py_unzstd}

    # ---------------------------------------------------------------- a. wirekit -> Python
    for tok, backend in CODERS:
        lv_hi = "9" if tok == "deflate12c" else "19"
        cases = [("corpus", [], None), ("corpus", ["--batch-bytes", "4096"], 4096),
                 ("corpus", ["--batch-bytes", "1000", "--level", "1"], 1000),
                 ("corpus", ["--batch-bytes", "262144", "--level", lv_hi], 262144),
                 ("random", ["--batch-bytes", "65536"], 65536),
                 ("small", ["--batch-bytes", "1"], 1),
                 ("small", ["--batch-bytes", "7", "--level", "1"], 7)]
        for name, opts, batch in cases:
            data = inputs[name]
            label = "a %s %s %s" % (coder_label(tok, backend), name, " ".join(opts) or "(defaults)")
            r = run(["iltp", "encode", "--encoding", tok] + backend_opt(backend) + opts, data)
            if not check(label + ": encode exits 0, empty stderr", r.returncode == 0 and not r.stderr,
                         "rc=%d %s" % (r.returncode, short(r.stderr))):
                continue
            s = r.stdout
            try:
                out, eof, rest = py_decode[tok](s, D)
                check(label + ": Python decodes the input byte for byte, sees the end mark, no bytes after",
                      out == data and eof and not rest,
                      "out %d/%d eof=%s rest=%d" % (len(out), len(data), eof, len(rest)))
            except Exception as ex:  # zlib.error, zstd.ZstdError
                check(label + ": Python decodes", False, repr(ex))
                continue
            if tok == "deflate12c":
                check(label + ": stream ends 00 00 ff ff 03 00", s.endswith(b"\x00\x00\xff\xff\x03\x00"),
                      s[-8:].hex())
                try:
                    o2, eof2, _ = py_inflate_strict(s, D)
                    check(label + ": decodes with only the 4096-byte window as history", o2 == data and eof2)
                except zlib.error as ex:
                    check(label + ": decodes with only the 4096-byte window as history", False, repr(ex))
                ends = sync_ends(s)
                # the end mark must not decode before the final 03 00
                o3, eof3, _ = py_inflate(s[:-2], D)
                check(label + ": no final block before the trailing 03 00", not eof3 and o3 == data)
            else:
                ends, err = zstd_blocks(s)
                check(label + ": frame 00 50, complete blocks, ends with the empty last raw block 01 00 00",
                      err is None, err or "")
            if batch:
                want = set(range(batch, len(data) + 1, batch))
                if len(data) % batch:
                    want.add(len(data))
                lens = decoded_lengths_at(s, ends, tok, D)
                missing = sorted(want - lens)
                check(label + ": every batch (%d) decodes completely at a %s" %
                      (len(want), "sync flush" if tok == "deflate12c" else "block end"),
                      not missing, "missing decoded lengths %s" % missing[:5])
                # The stream of the first 3 batches without end mark is a prefix of the full stream,
                # and Python decodes all of it (each batch is flushed).
                k = min(3, len(data) // batch)
                r2 = run(["iltp", "encode", "--encoding", tok, "--no-end-mark"] + backend_opt(backend) + opts,
                         data[:k * batch])
                p = r2.stdout
                ok = r2.returncode == 0 and s.startswith(p) and len(p) < len(s)
                if ok:
                    o4, eof4, _ = py_decode[tok](p, D)
                    ok = o4 == data[:k * batch] and not eof4
                    if tok == "deflate12c":
                        ok = ok and p.endswith(b"\x00\x00\xff\xff")
                check(label + ": first %d batches with --no-end-mark are a prefix that decodes fully" % k, ok)

        # empty input: just the end mark
        r = run(["iltp", "encode", "--encoding", tok] + backend_opt(backend), b"")
        want = b"\x03\x00" if tok == "deflate12c" else b"\x00\x50\x01\x00\x00"
        ok = r.returncode == 0 and r.stdout == want
        if ok:
            out, eof, rest = py_decode[tok](r.stdout, D)
            ok = out == b"" and eof and not rest
        check("a %s empty input: stream is %s and Python decodes it" % (coder_label(tok, backend), want.hex(" ")), ok,
              "rc=%d %s" % (r.returncode, r.stdout.hex()))

    # ---------------------------------------------------------------- b. Python -> wirekit
    batches = [1, 2, 3, 7, 64, 100, 1000, 4096, 65536, 262144, 1048576]

    def input_for(batch):
        return small if batch == 1 else (medium if batch < 64 else corpus)

    def wk_decode(tok, stream, backend=None):
        return run(["iltp", "decode", "--encoding", tok] + backend_opt(backend), stream)

    def decode_backends(tok):
        return ("zlib", "isal") if tok == "deflate12c" else (None,)

    for tok, levels in (("deflate12c", (1, 6, 9)), ("zstd20c", (1, 3, 19))):
        for level in levels:
            for batch in batches:
                data = input_for(batch)
                label = "b %s level %d batch %d (%d bytes)" % (tok, level, batch, len(data))
                if tok == "deflate12c":
                    s = py_deflate(data, batch, level, D, mem_level=8 if level != 9 else 9)
                    framing = s.endswith(b"\x00\x00\xff\xff\x03\x00")
                else:
                    s = py_zstd(data, batch, level, D)
                    framing = s[:2] == b"\x00\x50" and s.endswith(b"\x01\x00\x00")
                check(label + ": Python stream framing (%s)" %
                      ("ends 00 00 ff ff 03 00" if tok == "deflate12c" else "starts 00 50, ends 01 00 00"),
                      framing, "%s..%s" % (s[:4].hex(), s[-6:].hex()))
                for be in decode_backends(tok):
                    r = wk_decode(tok, s, be)
                    check(label + ": wirekit%s decodes it exactly, exit 0" % (" (%s)" % be if be else ""),
                          r.returncode == 0 and r.stdout == data and not r.stderr,
                          "rc=%d out %d/%d %s" % (r.returncode, len(r.stdout), len(data), short(r.stderr)))

    # deflate strategies and block types (every block type is valid)
    for sname, level, strat in (("stored (level 0)", 0, zlib.Z_DEFAULT_STRATEGY),
                                ("Z_FIXED", 6, zlib.Z_FIXED), ("Z_HUFFMAN_ONLY", 6, zlib.Z_HUFFMAN_ONLY),
                                ("Z_RLE", 6, zlib.Z_RLE), ("Z_FILTERED", 6, zlib.Z_FILTERED)):
        for batch in (100, 65536):
            data = medium
            s = py_deflate(data, batch, level, D, mem_level=9, strategy=strat)
            for be in ("zlib", "isal"):
                r = wk_decode("deflate12c", s, be)
                check("b deflate12c %s batch %d: wirekit (%s) decodes it exactly" % (sname, batch, be),
                      r.returncode == 0 and r.stdout == data,
                      "rc=%d %s" % (r.returncode, short(r.stderr)))
    # random (incompressible) bytes
    for tok in ("deflate12c", "zstd20c"):
        s = py_deflate(randbytes, 65536, 6, D) if tok == "deflate12c" else py_zstd(randbytes, 65536, 3, D)
        for be in decode_backends(tok):
            r = wk_decode(tok, s, be)
            check("b %s%s random bytes batch 65536: wirekit decodes it exactly" % (tok, " (%s)" % be if be else ""),
                  r.returncode == 0 and r.stdout == randbytes, "rc=%d %s" % (r.returncode, short(r.stderr)))
    # an end mark carrying data (final block without a preceding flush) is still an end mark
    s = py_deflate(medium, len(medium), 6, D, sync=False)
    for be in ("zlib", "isal"):
        r = wk_decode("deflate12c", s, be)
        check("b deflate12c (%s) data-carrying BFINAL block (no sync flush): decoded, exit 0" % be,
              r.returncode == 0 and r.stdout == medium, "rc=%d %s" % (r.returncode, short(r.stderr)))
    s = py_zstd(medium, len(medium), 3, D, block_flush=False)
    r = wk_decode("zstd20c", s)
    check("b zstd20c data-carrying last block (no block flush): decoded, exit 0",
          r.returncode == 0 and r.stdout == medium, "rc=%d %s" % (r.returncode, short(r.stderr)))
    # a smaller declared window is fine
    s = py_zstd(medium, 4096, 3, D, window_log=17)
    r = wk_decode("zstd20c", s)
    check("b zstd20c window_log 17 (header 00 %02x): decoded, exit 0" % s[1],
          s[0] == 0 and r.returncode == 0 and r.stdout == medium, "rc=%d %s" % (r.returncode, short(r.stderr)))

    # Streams Python writes that Lace-065 forbids: wirekit must reject them (exit 2).
    def expect_reject(label, tok, s, name, offset=None):
        """Every decoder of the token refuses it the same way: the name, and one offset (given or
        the first decoder's)."""
        first = None
        for be in decode_backends(tok):
            r = wk_decode(tok, s, be)
            lines = r.stderr.decode("utf-8", "replace").splitlines()
            ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith(name)
            m = re.match(r"\S+ at offset (\d+)", lines[0]) if lines else None
            got = int(m.group(1)) if m else None
            want = offset if offset is not None else first
            if ok and want is not None:
                ok = got == want
            first = got if first is None else first
            check(label + "%s: exit 2, %s%s" % (" (%s)" % be if be else "", name,
                                                  "" if want is None else " at offset %d" % want), ok,
                  "rc=%d stderr=%s" % (r.returncode, short(r.stderr)))

    s = py_zstd(medium, 65536, 3, D, window_log=21)
    expect_reject("b zstd20c window_log 21 (header %s)" % s[:2].hex(" "), "zstd20c", s,
                  "ILTP_ERR_ZSTD_WINDOW", 1)
    s = py_zstd(medium, 65536, 3, D, fmt=zstd.FORMAT_ZSTD1)
    expect_reject("b zstd20c with the magic number", "zstd20c", s, "ILTP_ERR_ZSTD_HEADER", 0)
    s = py_zstd(medium, 65536, 3, D, checksum=1)
    expect_reject("b zstd20c with a checksum (descriptor %02x)" % s[0], "zstd20c", s, "ILTP_ERR_ZSTD_HEADER", 0)
    # single-segment frame with a content size: one-shot compression
    params = zstd.ZstdCompressionParameters.from_level(3, window_log=20, format=zstd.FORMAT_ZSTD1_MAGICLESS,
                                                       write_content_size=1, write_checksum=0, write_dict_id=0)
    s = zstd.ZstdCompressor(dict_data=zdict_raw(D), compression_params=params).compress(small)
    expect_reject("b zstd20c single-segment frame with content size (descriptor %02x)" % s[0], "zstd20c", s,
                  "ILTP_ERR_ZSTD_HEADER", 0)
    # a reference before the start of the dictionary: compress with a longer other dictionary
    other = bytes(rng.getrandbits(8) for _ in range(3000)) + D
    data = other[:400] + small
    s = py_deflate(data, 65536, 6, other)
    expect_reject("b deflate12c reference before the dictionary", "deflate12c", s, "ILTP_ERR_DEFLATE_REFERENCE")
    s = py_zstd(data, 65536, 3, other)
    expect_reject("b zstd20c reference before the dictionary", "zstd20c", s, "ILTP_ERR_ZSTD_MALFORMED")

    # ---------------------------------------------------------------- c. stream + raw preface
    nonce = b64a(bytes(rng.randint(1, 255) for _ in range(32)))
    preface = (PREFACE_GLYPH + (": iltp/0.13\nNonce: %s\nDecode: deflate12c\n\n" % nonce).encode())
    for tok in ("deflate12c", "zstd20c"):
        for batch in (1000, 65536):
            data = medium
            s = py_deflate(data, batch, 6, D) if tok == "deflate12c" else py_zstd(data, batch, 3, D)
            for be in decode_backends(tok):
                r = wk_decode(tok, s + preface, be)
                m = re.search(rb"offset (\d+)", r.stderr)
                check("c %s%s batch %d + raw preface: exit 0, decoded exactly, preface offset %d on stderr"
                      % (tok, " (%s)" % be if be else "", batch, len(s)),
                      r.returncode == 0 and r.stdout == data and m is not None and int(m.group(1)) == len(s),
                      "rc=%d out %d/%d stderr=%s" % (r.returncode, len(r.stdout), len(data), short(r.stderr)))

    elapsed = time.time() - t0
    print("iltp_interop: %.1f s" % elapsed)
    sys.exit(wktest.summary("iltp_interop"))


if __name__ == "__main__":
    main()
