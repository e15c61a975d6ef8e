#!/usr/bin/python3
"""The CLI's stream commands write their output as they decode, in memory that does not grow with
the input (issue 12, part 4; wirekit(1) "STREAMS AND MEMORY", "PARTIAL OUTPUT").

For each command, a long input is generated here in pieces and piped in while the output is read
back and hashed, never held: the output must equal the document generated here from the
commands' documented shapes (the MoQT vectors' `decoded` shape, the trace lines, the ILTP item
lines, the binary transcript written by an encoder of our own, ...). The command runs under an
address-space limit (RLIMIT_AS 256 MiB) and its peak RSS (wait4's ru_maxrss) must stay under
64 MiB; ru_maxrss also counts the pages the child shared with this script between fork and exec,
so it over-states the command's own peak (the check is on the safe side). An error after partial output keeps the exit status and the one stderr line; the records
decoded before it are on stdout and the document is left unterminated. A command must also write
what it has decoded before its input ends (stdin kept open).

Usage: stream_test.py WIREKIT SOURCE_DIR [--sanitized]
--sanitized (AddressSanitizer builds): the sanitizer reserves terabytes of address space and keeps
freed memory in quarantine, so the memory limits are not applied there (the outputs still are
checked, on shorter inputs except the 2,000,000-object acceptance stream).
"""
import hashlib
import json
import os
import random
import resource
import select
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
import wktest  # noqa: E402
from wktest import check, text, uvarint  # noqa: E402

WIREKIT = sys.argv[1]
SRC = sys.argv[2]
SANITIZED = "--sanitized" in sys.argv[3:]
AS_LIMIT = 256 << 20
RSS_LIMIT_KIB = 64 << 10
SCALE = 10 if SANITIZED else 1  # inputs other than the acceptance stream are cut by this
PIECE = 1 << 16


def chunked(gen, size=PIECE):
    """Regroups the byte strings of gen into pieces of about `size` bytes."""
    buf = []
    n = 0
    for b in gen:
        buf.append(b)
        n += len(b)
        if n >= size:
            yield b"".join(buf)
            buf, n = [], 0
    if buf:
        yield b"".join(buf)


class Digest:
    """Length, SHA-256, the first and the last 4 KiB of a byte stream."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.n = 0
        self.head = b""
        self.tail = b""

    def add(self, b):
        self.h.update(b)
        self.n += len(b)
        if len(self.head) < 4096:
            self.head += b[:4096 - len(self.head)]
        self.tail = (self.tail + b)[-4096:]

    def same(self, other):
        return self.n == other.n and self.h.digest() == other.h.digest()

    def where(self, other):
        return "got %d bytes, want %d; got tail %s; want tail %s" % (
            self.n, other.n, text(self.tail[-160:]), text(other.tail[-160:]))


def digest_of(gen):
    d = Digest()
    for b in gen:
        d.add(b)
    return d


class Run:
    pass


def limit_memory():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_stream(args, chunks):
    """Runs `wirekit args` with the pieces of `chunks` piped to stdin (from a thread) under the
    memory limit; stdout is hashed as it arrives, stderr lines are counted (the first 5 and the
    last kept). Returns a Run: rc, out (a Digest), err_count, err_first, err_last, maxrss_kib."""
    p = subprocess.Popen([WIREKIT] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=limit_memory)
    res = Run()
    res.err_count, res.err_first, res.err_last = 0, [], ""

    def feed():
        try:
            for c in chunks:
                p.stdin.write(c)
        except BrokenPipeError:
            pass
        finally:
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass

    def drain_err():
        for line in p.stderr:
            res.err_count += 1
            s = line.decode("utf-8", "replace").rstrip("\n")
            if len(res.err_first) < 5:
                res.err_first.append(s)
            res.err_last = s

    threads = [threading.Thread(target=feed), threading.Thread(target=drain_err)]
    for t in threads:
        t.start()
    res.out = Digest()
    while True:
        b = p.stdout.read(PIECE)
        if not b:
            break
        res.out.add(b)
    for t in threads:
        t.join()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = res.rc = os.waitstatus_to_exitcode(status)
    res.maxrss_kib = ru.ru_maxrss
    return res


def expect_run(label, r, want, rc=0, err_count=0, err_last_prefix=None):
    """The run's status, stderr lines, output (== want, a Digest) and peak RSS."""
    ok = r.rc == rc and r.err_count == err_count
    if ok and err_last_prefix is not None:
        ok = r.err_last.startswith(err_last_prefix)
    check("%s: exit %d, %d stderr line(s)%s" % (label, rc, err_count,
                                                 " " + err_last_prefix if err_last_prefix else ""),
          ok, "rc=%d, %d stderr lines: %s ... %s" % (r.rc, r.err_count, r.err_first, r.err_last))
    check("%s: output (%d bytes) as generated here" % (label, want.n), r.out.same(want),
          r.out.where(want))
    if not SANITIZED:
        check("%s: peak RSS %d KiB < 64 MiB (under RLIMIT_AS 256 MiB)" % (label, r.maxrss_kib),
              r.maxrss_kib < RSS_LIMIT_KIB)


def streams_before_eof(label, args, first, want):
    """Writes `first` and keeps stdin open: the output must contain `want` before the input
    ends (60 s is only a guard against a command that waits for EOF)."""
    p = subprocess.Popen([WIREKIT] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)

    def feed():  # from a thread: `first` may be larger than the pipe holds
        try:
            p.stdin.write(first)
            p.stdin.flush()
        except BrokenPipeError:
            pass
    writer = threading.Thread(target=feed)
    writer.start()
    got = b""
    deadline = time.monotonic() + 60
    fd = p.stdout.fileno()
    while want not in got:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        b = os.read(fd, PIECE)
        if not b:
            break
        got += b
    ok = want in got
    # the rest: stdout drained (or closed, when the command did not stream) while the writer ends
    drain = threading.Thread(target=p.stdout.read if ok else p.stdout.close)
    drain.start()
    writer.join()
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    drain.join()
    p.wait()
    check("%s: writes what it decoded before its input ends" % label, ok,
          "stdout so far: %s" % text(got))


# ---------------------------------------------------------------------------------------------
# moqt decode / inspect / int decode
# ---------------------------------------------------------------------------------------------
def jdump(o):
    """The vectors' `decoded` shape as the CLI prints it: keys in order, no spaces."""
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()


SUBGROUP_HEADER = bytes.fromhex("10010080")  # type 0x10, alias 1, group 0, priority 0x80
HEAD_DOC = {"stream_type": "subgroup", "header_type": "0x10", "track_alias": "1",
            "group_id": "0", "subgroup_id": "0", "publisher_priority": "128"}


def subgroup_input(n, tail=b""):
    yield SUBGROUP_HEADER
    for _ in range(n // 10000):
        yield bytes.fromhex("000000") * 10000  # delta 0, length 0, status 0 (Normal)
    yield bytes.fromhex("000000") * (n % 10000)
    yield tail


def subgroup_document(n, close=True):
    """The document of subgroup_input(n): generated from the vectors' shape."""
    head = jdump(HEAD_DOC)
    yield head[:-1] + b',"objects":['
    one = jdump({"object_id_delta": "0", "object_id": "987654321", "payload_length": "0",
                 "status": "0", "payload_hex": ""}).replace(b"987654321", b"%d")
    for i in range(n):
        yield (b"," if i else b"") + one % i
    if close:
        yield b"]}\n"


def moqt_tests():
    n = 2000000
    r = run_stream(["moqt", "decode", "--carrier", "subgroup"], chunked(subgroup_input(n)))
    expect_run("moqt decode, %d objects (6 MB)" % n, r, digest_of(chunked(subgroup_document(n))))

    # 300,000 objects, then one with an unassigned status: the objects, then exit 2
    k = 300000 // SCALE
    bad_at = len(SUBGROUP_HEADER) + 3 * k + 2
    r = run_stream(["moqt", "decode", "--carrier", "subgroup"],
                   chunked(subgroup_input(k, bytes.fromhex("000002"))))
    expect_run("moqt decode, %d objects then status 2" % k, r,
               digest_of(chunked(subgroup_document(k, close=False))), rc=2, err_count=1,
               err_last_prefix="invalid_value MOQT_ERR_UNKNOWN_STATUS at offset %d:" % bad_at)
    # ... and cut inside the next object: exit 3 at the cut
    r = run_stream(["moqt", "decode", "--carrier", "subgroup"],
                   chunked(subgroup_input(k, bytes.fromhex("00"))))
    expect_run("moqt decode, %d objects then a cut" % k, r,
               digest_of(chunked(subgroup_document(k, close=False))), rc=3, err_count=1,
               err_last_prefix="incomplete MOQT_ERR_TRUNCATED at offset %d:" % (bad_at - 1))

    # encode: the same document back to the stream's bytes
    r = run_stream(["moqt", "encode", "--carrier", "subgroup"], chunked(subgroup_document(n)))
    expect_run("moqt encode, %d objects (193 MB of JSON)" % n, r,
               digest_of(chunked(subgroup_input(n))))

    def then_bad():  # k objects, then one whose object_id goes back
        yield from subgroup_document(k, close=False)
        yield b',{"object_id":"0","payload_length":"0","status":"0","payload_hex":""}]}\n'
    r = run_stream(["moqt", "encode", "--carrier", "subgroup"], chunked(then_bad()))
    expect_run("moqt encode, %d objects then a repeated Object ID" % k, r,
               digest_of(chunked(subgroup_input(k))), rc=1, err_count=1,
               err_last_prefix="WK_ERR_ARG")

    # one large object: payload_hex is streamed (64 MiB of payload, 128 MiB of hex)
    size = (1024 // SCALE) * (1 << 16)  # whole 64 KiB blocks
    rnd = random.Random(12)
    block = rnd.randbytes(1 << 16)

    def big_input():
        yield SUBGROUP_HEADER + b"\x00" + moqt_int(size)  # object 0: delta 0, its length
        for i in range(size // len(block)):
            yield block

    def big_document():
        head = jdump(HEAD_DOC)
        yield head[:-1] + b',"objects":[' + jdump(
            {"object_id_delta": "0", "object_id": "0", "payload_length": str(size)})[:-1] + \
            b',"payload_hex":"'
        h = block.hex().encode()
        for i in range(size // len(block)):
            yield h
        yield b'"}]}\n'
    r = run_stream(["moqt", "decode", "--carrier", "subgroup"], big_input())
    expect_run("moqt decode, one object of %d MiB" % (size >> 20), r, digest_of(big_document()))

    # inspect: one line per header and object
    m = 500000 // SCALE
    r = run_stream(["moqt", "inspect"], chunked(subgroup_input(m)))
    check("moqt inspect, %d objects: exit 0, last line object %d" % (m, m - 1),
          r.rc == 0 and r.out.tail.rstrip(b"\n").split(b"\n")[-1].startswith(
              b"object id=%d " % (m - 1)), text(r.out.tail[-200:]))
    if not SANITIZED:
        check("moqt inspect: peak RSS %d KiB < 64 MiB" % r.maxrss_kib,
              r.maxrss_kib < RSS_LIMIT_KIB)

    # int decode: a long run of integers of every length
    values = [0, 63, 64, 16383, 16384, (1 << 21) - 1, 1 << 21, (1 << 56) - 1, 1 << 56,
              (1 << 64) - 1]
    enc = b"".join(moqt_int(v) for v in values)
    lines = b"".join(b'{"value":"%d"}\n' % v for v in values)
    reps = 200000 // SCALE
    r = run_stream(["moqt", "int", "decode"], chunked(enc for _ in range(reps)))
    expect_run("moqt int decode, %d integers" % (reps * len(values)), r,
               digest_of(chunked(lines for _ in range(reps))))
    r = run_stream(["moqt", "int", "decode"], chunked([enc] * reps + [b"\xc0"]))
    expect_run("moqt int decode, then a cut integer", r,
               digest_of(chunked(lines for _ in range(reps))), rc=3, err_count=1,
               err_last_prefix="incomplete MOQT_ERR_TRUNCATED at offset %d:" % (
                   len(enc) * reps + 1))

    streams_before_eof("moqt decode", ["moqt", "decode", "--carrier", "subgroup"],
                       SUBGROUP_HEADER + bytes.fromhex("000000"),
                       b'{"object_id_delta":"0","object_id":"0","payload_length":"0"')
    doc = b"".join(subgroup_document(2, close=False))
    streams_before_eof("moqt encode", ["moqt", "encode", "--carrier", "subgroup"], doc,
                       SUBGROUP_HEADER + bytes.fromhex("000000"))
    streams_before_eof("moqt inspect", ["moqt", "inspect"],
                       SUBGROUP_HEADER + bytes.fromhex("000000"), b"object id=0 ")
    streams_before_eof("moqt int decode", ["moqt", "int", "decode"], b"\x05", b'{"value":"5"}\n')


def moqt_int(v):
    """The MoQT integer (draft-20 section 1.4.1), minimal form: written here, not by the CLI."""
    for length, prefix_bits in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8)):
        bits = 8 * length - prefix_bits
        if v < (1 << bits):
            prefix = (0xFF << (8 - prefix_bits + 1)) & 0xFF
            return ((prefix << (8 * length - 8)) | v).to_bytes(length, "big")
    return b"\xff" + v.to_bytes(8, "big")


# ---------------------------------------------------------------------------------------------
# iltp items, iltp decode
# ---------------------------------------------------------------------------------------------
NONCE = "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO"
PREFACE = ("\U0001faa2: iltp/1.0 %s\n" % NONCE).encode()


def iltp_tests():
    n = 2000000 // SCALE
    r = run_stream(["iltp", "items", "--json"], chunked([PREFACE] + [b"\n" * 10000] * (n // 10000)))

    def want(close=True):
        yield ('{"item":"preface","offset":0,"form":"1.0","nonce":"%s","decode":"","encode":""}\n'
               % NONCE).encode()
        for i in range(n):
            yield b'{"item":"facts","offset":%d,"rows":0}\n' % (len(PREFACE) + i)
        if close:
            yield b'{"end":"clean","items":%d,"where":"at an identity item boundary"}\n' % (n + 1)
    expect_run("iltp items --json, %d empty fact blocks" % n, r, digest_of(chunked(want())))
    # a bad byte after them: the lines, then exit 2
    r = run_stream(["iltp", "items", "--json"],
                   chunked([PREFACE] + [b"\n" * 10000] * (n // 10000) + [b"\x00\n"]))
    check("iltp items --json, %d blocks then a bad byte: exit 2, one stderr line, the lines" % n,
          r.rc == 2 and r.err_count == 1 and r.out.same(digest_of(chunked(want(False)))),
          "rc=%d %s %s" % (r.rc, r.err_first, r.out.where(digest_of(chunked(want(False))))))

    # iltp decode: 64 MiB through zstd20c, encoded by the CLI beforehand
    rnd = random.Random(60)
    words = [rnd.randbytes(rnd.randint(1, 12)).hex().encode() for _ in range(4096)]
    data = b" ".join(rnd.choice(words) for _ in range(200000))  # about 2.6 MB
    reps = 24 // SCALE + 1
    enc = subprocess.run([WIREKIT, "iltp", "encode", "--encoding", "zstd20c"], input=data * reps,
                         stdout=subprocess.PIPE, check=True).stdout
    r = run_stream(["iltp", "decode", "--encoding", "zstd20c"], chunked([enc]))
    expect_run("iltp decode zstd20c, %d MB" % (len(data) * reps // 1000000), r,
               digest_of([data] * reps))

    streams_before_eof("iltp items", ["iltp", "items"], PREFACE + b"\n", b"facts 0\n")
    ident = subprocess.run([WIREKIT, "iltp", "encode", "--encoding", "identity", "--no-end-mark"],
                           input=b"hello\n\n", stdout=subprocess.PIPE, check=True).stdout
    streams_before_eof("iltp decode", ["iltp", "decode", "--encoding", "identity"], ident,
                       b"hello\n")


# ---------------------------------------------------------------------------------------------
# colloq run, colloq convert
# ---------------------------------------------------------------------------------------------
def colloq_tests():
    plan = os.path.join(SRC, "tests", "colloq", "fixtures", "token-stream.json")
    with open(os.path.join(SRC, "tests", "colloq", "fixtures", "plans",
                           "token-stream.identity")) as f:
        ident = f.read().strip()

    def preface(wire):
        return ('{"colloq":"wire/v0","plan":"%s","wire":"%s","role":"client"}\n'
                % (ident, wire)).encode()

    n = 1000000 // SCALE
    texts = ["tok", "", "w\u00f6rd", "\U0001f600"]
    SEQ, IDX = 123456789, 987654321  # placeholders: one jdump per text, then % per line

    def token_lines(shape):
        """The JSON line of shape(text) for each text, with %d where SEQ and IDX were."""
        return [jdump(shape(x)).replace(b"%d" % SEQ, b"%d").replace(b"%d" % IDX, b"%d") + b"\n"
                for x in texts]

    def compact(count, bad_seq=False):
        yield preface("compact")
        yield b'{"t":0,"seq":0,"payload":{"text":"go","max_tokens":%d}}\n' % count
        line = token_lines(lambda x: {"t": 2, "seq": SEQ, "payload": {"index": IDX, "text": x}})
        for i in range(count):
            yield line[i % 4] % (i + 1, i)
        if bad_seq:
            yield b'{"t":1,"seq":%d,"payload":{}}\n' % (count + 5)
        else:
            yield b'{"t":1,"seq":%d,"payload":{"reason":"stop"}}\n' % (count + 1)

    def trace(count, bad_seq=False):
        yield b'{"seq":0,"transition":0,"from":"Idle","to":"Streaming","message":"Prompt",' \
              b'"payload":{"text":"go","max_tokens":%d}}\n' % count
        line = token_lines(lambda x: {"seq": SEQ, "transition": 2, "from": "Streaming",
                                      "to": "Streaming", "message": "Token",
                                      "payload": {"index": IDX, "text": x}})
        for i in range(count):
            yield line[i % 4] % (i + 1, i)
        if bad_seq:
            yield b'{"failure":"bad-sequence","seq":%d}\n' % (count + 1)
        else:
            yield b'{"seq":%d,"transition":1,"from":"Streaming","to":"Done","message":"End",' \
                  b'"payload":{"reason":"stop"}}\n' % (count + 1)

    def binary(count):
        """The binary transcript, encoded here from the spec: varint transition, seq, payload
        length, then the payload (presence bitmap of the optional fields, fixed-width
        little-endian scalars, varint-prefixed strings)."""
        def frame(t, seq, payload):
            return uvarint(t) + uvarint(seq) + uvarint(len(payload)) + payload

        def s(x):
            b = x.encode()
            return uvarint(len(b)) + b
        yield preface("binary")
        yield frame(0, 0, s("go") + count.to_bytes(4, "little"))
        for i in range(count):
            yield frame(2, i + 1, b"\x00" + i.to_bytes(4, "little") + s(texts[i % 4]))
        yield frame(1, count + 1, b"\x01" + s("stop"))

    r = run_stream(["colloq", "run", "--plan", plan, "--wire", "compact"], chunked(compact(n)))
    expect_run("colloq run compact, %d frames" % (n + 2), r, digest_of(chunked(trace(n))))
    k = 300000 // SCALE
    r = run_stream(["colloq", "run", "--plan", plan, "--wire", "compact"],
                   chunked(compact(k, bad_seq=True)))
    expect_run("colloq run compact, %d frames then a bad sequence" % (k + 1), r,
               digest_of(chunked(trace(k, bad_seq=True))), rc=2, err_count=1,
               err_last_prefix="COLLOQ_ERR_BAD_SEQUENCE")
    r = run_stream(["colloq", "convert", "--plan", plan, "--from", "compact", "--to", "binary"],
                   chunked(compact(n)))
    expect_run("colloq convert compact -> binary, %d frames" % (n + 2), r,
               digest_of(chunked(binary(n))))
    r = run_stream(["colloq", "run", "--plan", plan, "--wire", "binary"], chunked(binary(n)))
    expect_run("colloq run binary, %d frames" % (n + 2), r, digest_of(chunked(trace(n))))

    streams_before_eof("colloq run", ["colloq", "run", "--plan", plan, "--wire", "compact"],
                       b"".join(list(compact(3))[:3]), b'"message":"Prompt"')
    streams_before_eof("colloq convert",
                       ["colloq", "convert", "--plan", plan, "--from", "compact", "--to",
                        "reference"], b"".join(list(compact(3))[:3]), b'"message":"Prompt"')


# ---------------------------------------------------------------------------------------------
# eth reqresp decode, eth snappy decompress --framed
# ---------------------------------------------------------------------------------------------
def eth_tests():
    rnd = random.Random(5)
    payload = rnd.randbytes(300)
    chunk = subprocess.run([WIREKIT, "eth", "reqresp", "encode", "--result", "0"], input=payload,
                           stdout=subprocess.PIPE, check=True).stdout
    n = 200000 // SCALE
    r = run_stream(["eth", "reqresp", "decode"], chunked([chunk] * n))
    expect_run("eth reqresp decode, %d chunks" % n, r, digest_of(chunked([payload] * n)),
               err_count=n, err_last_prefix="chunk %d result=0 length=300" % (n - 1))
    # a cut in the last chunk: the payloads before it, then exit 3
    r = run_stream(["eth", "reqresp", "decode"], chunked([chunk] * n + [chunk[:10]]))
    expect_run("eth reqresp decode, %d chunks then a cut" % n, r,
               digest_of(chunked([payload] * n)), rc=3, err_count=n + 1,
               err_last_prefix="SSZSNAPPY_ERR_EARLY_EOF")
    # a request of 10 MiB (MAX_PAYLOAD_SIZE) is written as it is decoded
    big = rnd.randbytes(10 << 20)
    req = subprocess.run([WIREKIT, "eth", "reqresp", "encode"], input=big, stdout=subprocess.PIPE,
                         check=True).stdout
    r = run_stream(["eth", "reqresp", "decode", "--request"], chunked([req]))
    expect_run("eth reqresp decode --request, 10 MiB", r, digest_of([big]), err_count=1,
               err_last_prefix="request length=%d" % len(big))

    # snappy framed: 256 MiB of output
    block = rnd.randbytes(1 << 20)
    reps = 256 // SCALE
    framed = subprocess.run([WIREKIT, "eth", "snappy", "compress", "--framed"], input=block,
                            stdout=subprocess.PIPE, check=True).stdout
    body = framed[10:]  # after the stream identifier: 1 MiB of chunks, repeated
    r = run_stream(["eth", "snappy", "decompress", "--framed"],
                   chunked([framed] + [body] * (reps - 1)))
    expect_run("eth snappy decompress --framed, %d MiB" % reps, r, digest_of([block] * reps))

    streams_before_eof("eth reqresp decode", ["eth", "reqresp", "decode"], chunk, payload)
    streams_before_eof("eth snappy decompress --framed", ["eth", "snappy", "decompress",
                                                          "--framed"], framed, block[:4096])


# ---------------------------------------------------------------------------------------------
# b64a decode
# ---------------------------------------------------------------------------------------------
B64A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"


def b64a(data):
    """B64A (ASCII-order alphabet, no padding), written here from the spec."""
    out = []
    for i in range(0, len(data) - len(data) % 3, 3):
        v = int.from_bytes(data[i:i + 3], "big")
        out.append(B64A[v >> 18] + B64A[(v >> 12) & 63] + B64A[(v >> 6) & 63] + B64A[v & 63])
    rest = data[len(data) - len(data) % 3:]
    if len(rest) == 1:
        v = rest[0] << 4
        out.append(B64A[v >> 6] + B64A[v & 63])
    elif len(rest) == 2:
        v = int.from_bytes(rest, "big") << 2
        out.append(B64A[v >> 12] + B64A[(v >> 6) & 63] + B64A[v & 63])
    return "".join(out).encode()


def b64a_tests():
    rnd = random.Random(64)
    block = rnd.randbytes(3 << 14)  # whole groups: the text of each block stands alone
    reps = 1024 // SCALE           # 48 MiB of data, 64 MiB of text
    t = b64a(block)
    tail = rnd.randbytes(5)
    r = run_stream(["b64a", "decode"], chunked([t] * reps + [b64a(tail) + b"\n"]))
    expect_run("b64a decode, %d MiB of text" % (len(t) * reps >> 20), r,
               digest_of([block] * reps + [tail]))
    r = run_stream(["b64a", "decode"], chunked([t] * reps + [b"AB!C"]))
    expect_run("b64a decode, then a character outside the alphabet", r,
               digest_of([block] * reps), rc=2, err_count=1,
               err_last_prefix="B64A_ERR_ALPHABET at offset %d:" % (len(t) * reps + 2))
    # 8 characters: the first group is written, the second waits (its last character could be
    # the text's one trailing newline)
    streams_before_eof("b64a decode", ["b64a", "decode"], t[:8], block[:3])


if __name__ == "__main__":
    for part in (moqt_tests, iltp_tests, colloq_tests, eth_tests, b64a_tests):
        t0 = time.monotonic()
        part()
        print("# %s: %.1f s" % (part.__name__, time.monotonic() - t0))
    sys.exit(wktest.summary("cli_streaming"))
