#!/usr/bin/python3
"""synclib: what the host's process tests share (tests/host/sync_test.py, tests/host/hostile_test.py):
a pure-Python BLAKE3 and B64A, Blob records and fact blocks, the two compressed encodings with the
wirekit dictionary, a scripted fake side1 peer, the listener and connector processes, store
checks. setup(WIREKIT) must be called first: it fixes the tool under test and a private
temporary directory (removed by cleanup()). Every process started is tracked and killed by
kill_all(); every wait is bounded.
"""
import base64
import os
import queue
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

try:
    import zstandard
except ImportError:  # the zstd fault cases are then skipped (reported)
    zstandard = None

W = None
ONLY = []
T0 = time.monotonic()
TMP = None
PROCS = []  # every process we started: killed in finally blocks
VERBOSE = os.environ.get("HOST_SYNC_VERBOSE") == "1"


def setup(wirekit, only=()):
    """The tool under test and a fresh private temporary directory."""
    global W, ONLY, TMP
    W = os.path.abspath(wirekit)
    ONLY = list(only)
    TMP = tempfile.mkdtemp(prefix="wk-sync-")


def cleanup():
    kill_all()
    if os.environ.get("HOST_SYNC_KEEP") != "1":
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print("kept", TMP)

PREFACE_GLYPH = "\U0001FAA2".encode()  # F0 9F AA A2
RECORD_GLYPH = "\U0001F5A7".encode()   # F0 9F 96 A7
FENCE = b"RoundComplete()\n\n"
BLOB_CAP = 32 << 20


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def log(*a):
    if VERBOSE:
        print("   ", *a, flush=True)


# ---------------------------------------------------------------------------------------------
# BLAKE3 (pure Python; checked against `wirekit blake3` at start) and B64A
_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
_PERM = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)
_M32 = 0xFFFFFFFF
_SCHED = [list(range(16))]
for _ in range(6):
    _SCHED.append([_SCHED[-1][p] for p in _PERM])
_G = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
      (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def _compress(cv, block, counter, blen, flags):
    m = struct.unpack("<16I", block)
    v = list(cv) + list(_IV[:4]) + [counter & _M32, (counter >> 32) & _M32, blen, flags]
    for s in _SCHED:
        for i, (a, b, c, d) in enumerate(_G):
            va = (v[a] + v[b] + m[s[2 * i]]) & _M32
            vd = v[d] ^ va
            vd = ((vd >> 16) | (vd << 16)) & _M32
            vc = (v[c] + vd) & _M32
            vb = v[b] ^ vc
            vb = ((vb >> 12) | (vb << 20)) & _M32
            va = (va + vb + m[s[2 * i + 1]]) & _M32
            vd = vd ^ va
            vd = ((vd >> 8) | (vd << 24)) & _M32
            vc = (vc + vd) & _M32
            vb = vb ^ vc
            vb = ((vb >> 7) | (vb << 25)) & _M32
            v[a], v[b], v[c], v[d] = va, vb, vc, vd
    return [v[i] ^ v[i + 8] for i in range(8)]


def _chunk_cv(data, counter, root):
    cv = _IV
    blocks = [data[i:i + 64] for i in range(0, len(data), 64)] or [b""]
    for i, blk in enumerate(blocks):
        last = i == len(blocks) - 1
        fl = (1 if i == 0 else 0) | (2 if last else 0) | (8 if root and last else 0)
        cv = _compress(cv, blk.ljust(64, b"\0"), counter, len(blk), fl)
    return cv


def blake3(data):
    if len(data) > 64 * 1024:  # pure Python is slow for big inputs: ask the tool under test's sibling
        r = subprocess.run([W, "blake3"], input=data, capture_output=True, timeout=60)
        check(r.returncode == 0, "wirekit blake3 failed")
        return bytes.fromhex(r.stdout.decode().strip())
    if len(data) <= 1024:
        return struct.pack("<8I", *_chunk_cv(data, 0, True))
    cvs = [_chunk_cv(data[i:i + 1024], i // 1024, False) for i in range(0, len(data), 1024)]

    def tree(lo, hi, root):
        n = hi - lo
        if n == 1:
            return cvs[lo]
        left = 1 << ((n - 1).bit_length() - 1)
        l, r = tree(lo, lo + left, False), tree(lo + left, hi, False)
        return _compress(_IV, struct.pack("<16I", *(l + r)), 0, 64, 4 | (8 if root else 0))

    return struct.pack("<8I", *tree(0, len(cvs), True))


_B64A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
_STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_TO_B64A = str.maketrans(_STD, _B64A)
HASH_RE = re.compile(r"^[0-9A-Z_a-z~]{43}$")


def b64a(b):
    return base64.b64encode(b).decode().rstrip("=").translate(_TO_B64A)


def blob_hash(data):
    """The Blob's B64A hash: BLAKE3 of `Data-Length: N\\n\\n` + data."""
    return b64a(blake3(b"Data-Length: %d\n\n" % len(data) + data))


def blob_record(data, hash_text=None):
    h = hash_text or blob_hash(data)
    return RECORD_GLYPH + b": B." + h.encode() + b".H3\n" + b"Data-Length: %d\n\n" % len(data) + data


def ref(h):
    return "'B.%s.H3'" % h


def adv_block(hashes):
    rows = []
    for h in hashes:
        rows.append("Advertised(%s)\n" % ref(h))
        rows.append("AdvertisedField(%s,'Type','0','B')\n" % ref(h))
    return ("".join(rows) + "\n").encode()


def req_block(hashes):
    return ("".join("MayRequest(%s)\n" % ref(h) for h in hashes) + "\n").encode()


def select(encode, decode):
    """Selection for one direction: the first token of the sender's Encode its peer decodes."""
    dec = [t for t in decode.split(",") if t]
    for t in (t for t in encode.split(",") if t):
        if t in dec:
            return t
    return "identity"


# ---------------------------------------------------------------------------------------------
# processes
def track(p):
    PROCS.append(p)
    return p


def kill_all():
    for p in PROCS:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
        try:
            p.wait(timeout=5)
        except Exception:
            pass
    PROCS.clear()


def wk(*args, input=None, timeout=60):
    return subprocess.run([W, *args], input=input, capture_output=True, timeout=timeout)


def put(store, data):
    r = wk("iltp", "put", "--store", store, input=data)
    check(r.returncode == 0, "put failed: %s" % r.stderr.decode().strip())
    h = r.stdout.decode().strip()
    check(h == blob_hash(data), "put printed %s, expected %s" % (h, blob_hash(data)))
    return h


def ls(store):
    r = wk("iltp", "ls", "--store", store)
    check(r.returncode == 0, "ls failed: %s" % r.stderr.decode().strip())
    return r.stdout.decode().split()


def get(store, h):
    r = wk("iltp", "get", "--store", store, h)
    check(r.returncode == 0, "get %s failed: %s" % (h, r.stderr.decode().strip()))
    return r.stdout


def make_store(path, blobs):
    """A store holding the given Blobs (data list), through the CLI; returns {hash: data}."""
    os.makedirs(path, exist_ok=True)
    return {put(path, d): d for d in blobs}


def wait_no_temps(store, timeout=10):
    """Waits until the store holds no temporary (every write in flight committed or removed)."""
    bdir = os.path.join(store, "blobs")
    end = time.monotonic() + timeout
    while any(n.startswith(".tmp-") for n in os.listdir(bdir)):
        if time.monotonic() > end:
            raise Fail("temporaries still in %s after %d s" % (store, timeout))
        time.sleep(0.02)


def copy_store(src, dst):
    shutil.copytree(src, dst)
    return dst


def check_store(store, expect=None, gets=4, full_hash=True):
    """Every file in DIR/blobs is a canonical name whose data hashes to it (or an ignored
    temporary); `ls` lists exactly those; a few `get`s (which verify) succeed. Returns the set."""
    bdir = os.path.join(store, "blobs")
    names = sorted(os.listdir(bdir)) if os.path.isdir(bdir) else []
    canon = [n for n in names if HASH_RE.match(n)]
    others = [n for n in names if not HASH_RE.match(n)]
    bad = [n for n in others if not n.startswith(".tmp-")]
    check(not bad, "store %s holds unexpected files %s" % (store, bad[:5]))
    if others:  # temporaries are ignored by the store; a quiescent store should not keep any
        print("    note: %d leftover temporaries in %s: %s" % (len(others), store, others[:3]), flush=True)
    listed = ls(store)
    check(listed == sorted(canon), "ls of %s (%d) differs from its files (%d)" % (store, len(listed), len(canon)))
    if full_hash:
        for n in canon:
            with open(os.path.join(bdir, n), "rb") as f:
                d = f.read()
            check(blob_hash(d) == n, "store %s: file %s does not hash to its name" % (store, n))
    for n in random.sample(canon, min(gets, len(canon))):
        get(store, n)
    if expect is not None:
        exp = sorted(expect)
        missing = sorted(set(exp) - set(canon))
        extra = sorted(set(canon) - set(exp))
        check(not missing and not extra,
              "store %s: %d missing %s, %d unexpected %s" % (store, len(missing), missing[:3], len(extra), extra[:3]))
    return set(canon)


SUMMARY_RE = re.compile(r"^session (\d+) (send|recv): (\S+), (\d+) items, (\d+) raw bytes, (\d+) wire bytes, "
                        r"(\d+) Blobs(?:, (\d+) rounds)?; (.*)$")


def summaries(text):
    """{session id: {'send': {...}, 'recv': {...}}} from summary lines."""
    out = {}
    for line in text.splitlines():
        m = SUMMARY_RE.match(line)
        if m:
            d = {"enc": m.group(3), "items": int(m.group(4)), "raw": int(m.group(5)), "wire": int(m.group(6)),
                 "blobs": int(m.group(7)), "rounds": int(m.group(8)) if m.group(8) else None,
                 "outcome": m.group(9)}
            out.setdefault(int(m.group(1)), {})[m.group(2)] = d
    return out


def one_summary(text, who):
    s = summaries(text)
    check(len(s) == 1 and "send" in s[min(s)] and "recv" in s[min(s)],
          "%s: expected one session's summary lines, got: %s" % (who, text.strip()[-600:]))
    return s[min(s)]


def read_line(pipe, timeout):
    """One line from a process's stdout pipe, bounded in time."""
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(pipe, selectors.EVENT_READ)
    buf = b""
    end = time.monotonic() + timeout
    try:
        while not buf.endswith(b"\n"):
            left = end - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise Fail("no line from the listener within %.1f s" % timeout)
            c = os.read(pipe.fileno(), 1)
            if not c:
                raise Fail("the listener's stdout ended before 'listening on': %r" % buf)
            buf += c
    finally:
        sel.close()
    return buf.decode()


class Listener:
    n = 0

    def __init__(self, store, addr="tcp:127.0.0.1:0", extra=(), once=False):
        Listener.n += 1
        self.errpath = os.path.join(TMP, "listener%d.err" % Listener.n)
        self.errf = open(self.errpath, "wb")
        cmd = [W, "iltp", "sync", "--listen", addr, "--store", store] + (["--once"] if once else []) + list(extra)
        self.p = track(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.errf))
        self.errf.close()
        line = read_line(self.p.stdout, 10)
        m = re.match(r"listening on (\S+)\n", line)
        check(m, "unexpected first line %r" % line)
        self.addr = m.group(1)
        if addr.startswith("tcp:"):
            check(re.match(r"tcp:127\.0\.0\.1:\d+$", self.addr) and not self.addr.endswith(":0"),
                  "listener reported %s" % self.addr)
        log("listener", self.addr, " ".join(cmd[3:]))

    def err(self):
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout=30):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Fail("listener did not exit within %d s; stderr: %s" % (timeout, self.err()[-500:]))

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)
        self.p.stdout.close()

    def wait_sessions(self, n, timeout=15):
        """Waits until n sessions have their recv summary; returns the summaries."""
        end = time.monotonic() + timeout
        while True:
            s = summaries(self.err())
            done = [k for k, v in s.items() if "recv" in v]
            if len(done) >= n:
                return s
            if time.monotonic() > end:
                raise Fail("listener: %d of %d sessions finished within %d s; stderr tail: %s"
                           % (len(done), n, timeout, self.err()[-800:]))
            time.sleep(0.02)


def connector(addr, store, extra=(), timeout=60):
    cmd = [W, "iltp", "sync", "--connect", addr, "--store", store] + list(extra)
    p = track(subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate(timeout=5)
        raise Fail("connector %s did not finish within %d s: %s" % (" ".join(cmd[3:]), timeout, err.decode()[-500:]))
    return p.returncode, err.decode(errors="replace")


def sync_ok(addr, store, extra=(), timeout=60, who="connector"):
    rc, err = connector(addr, store, extra, timeout)
    check(rc == 0, "%s exited %d: %s" % (who, rc, err.strip()[-600:]))
    s = one_summary(err, who)
    check(s["send"]["outcome"] == "clean" and s["recv"]["outcome"] == "clean", "%s: not clean: %s" % (who, err))
    return s


def data_set(tag, n, size=(10, 200), seed=None):
    rnd = random.Random(seed if seed is not None else tag)
    return [("%s-%d:" % (tag, i)).encode() + rnd.randbytes(rnd.randint(*size)) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# the fake peer (side1): identity toward it (it offers no Decode), optional encoding from it
_DICT = None


def dictionary():
    global _DICT
    if _DICT is None:
        r = wk("iltp", "dictionary")
        check(r.returncode == 0 and len(r.stdout) == 830, "wirekit iltp dictionary failed")
        _DICT = r.stdout
    return _DICT


class ZstdEnc:
    token = "zstd20c"

    def __init__(self):
        check(zstandard is not None, "python zstandard is missing")
        d = zstandard.ZstdCompressionDict(dictionary(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        p = zstandard.ZstdCompressionParameters(window_log=20, format=zstandard.FORMAT_ZSTD1_MAGICLESS,
                                                write_checksum=0, write_content_size=0, write_dict_id=0,
                                                compression_level=3)
        self.co = zstandard.ZstdCompressor(dict_data=d, compression_params=p).compressobj()

    def batch(self, data):
        return self.co.compress(data) + self.co.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)

    def end(self):
        return b"\x01\x00\x00"  # the empty last raw block

    garbage = b"\x06\x00\x00"  # a block header of the reserved block type


class DeflateEnc:
    token = "deflate12c"

    def __init__(self):
        self.co = zlib.compressobj(6, zlib.DEFLATED, -12, 8, zlib.Z_DEFAULT_STRATEGY, dictionary())

    def batch(self, data):
        return self.co.compress(data) + self.co.flush(zlib.Z_SYNC_FLUSH)

    def end(self):
        return self.co.flush(zlib.Z_FINISH)

    garbage = b"\x06\x00\x00"  # BFINAL 0, BTYPE 11 (reserved)


def sock_connect(addr, timeout=10):
    if addr.startswith("tcp:"):
        host, port = addr[4:].rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=timeout)
    elif addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(addr[5:])
    else:
        raise Fail("fake peer cannot connect to %s" % addr)
    s.settimeout(timeout)
    return s


class Peer:
    """A scripted side1 endpoint. Writes go through a thread (so a big send never deadlocks with
    the listener's own output); reads parse the listener's identity stream into items."""

    def __init__(self, addr, enc=None, timeout=10, sock=None):
        self.sock = sock if sock is not None else sock_connect(addr, timeout)
        self.sock.settimeout(timeout)
        self.enc = enc() if enc else None
        self.rbuf = bytearray()
        self.q = queue.Queue()
        self.werr = None
        self.t = threading.Thread(target=self._writer, daemon=True)
        self.t.start()

    def _writer(self):
        while True:
            b = self.q.get()
            try:
                if b is None:
                    self.sock.shutdown(socket.SHUT_WR)
                elif self.werr is None:
                    self.sock.sendall(b)
            except OSError as e:
                self.werr = e
            finally:
                self.q.task_done()

    def raw(self, b):
        self.q.put(bytes(b))

    def items(self, *its):
        data = b"".join(its)
        self.raw(self.enc.batch(data) if self.enc else data)

    def preface(self, encode=True):
        nonce = b64a(os.urandom(31) + b"\x01")
        p = PREFACE_GLYPH + b": iltp/0.13\nNonce: " + nonce.encode() + b"\n"
        if self.enc and encode:
            p += b"Encode: " + self.enc.token.encode() + b"\n"
        return p + b"\n"

    def flush(self, timeout=30):
        end = time.monotonic() + timeout
        while self.q.unfinished_tasks:
            if time.monotonic() > end:
                raise Fail("fake peer could not send within %d s" % timeout)
            time.sleep(0.005)

    def half_close(self):
        self.q.put(None)
        self.flush()

    def close(self):
        try:
            self.flush(5)
        except Fail:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    # -- reading
    def _fill(self):
        try:
            b = self.sock.recv(1 << 16)
        except socket.timeout:
            raise Fail("fake peer: nothing from the listener within the timeout")
        except ConnectionResetError:
            b = b""
        if not b:
            raise EOFError
        self.rbuf += b

    def _need(self, n):
        while len(self.rbuf) < n:
            self._fill()

    def _find(self, pat, start=0):
        while True:
            i = self.rbuf.find(pat, start)
            if i >= 0:
                return i
            start = max(0, len(self.rbuf) - len(pat) + 1)
            self._fill()

    def _take(self, n):
        b = bytes(self.rbuf[:n])
        del self.rbuf[:n]
        return b

    def item(self):
        """('preface', bytes) | ('facts', [rows]) | ('record', (hash, data)); EOFError at EOF."""
        self._need(1)
        c = self.rbuf[0]
        if c == 0x0A:
            self._take(1)
            return ("facts", [])
        if self.rbuf[:1] == PREFACE_GLYPH[:1]:
            self._need(6)
            if bytes(self.rbuf[:4]) == PREFACE_GLYPH:
                self._need(16)
                if bytes(self.rbuf[6:15]) == b"iltp/1.0 ":
                    return ("preface", self._take(self._find(b"\n") + 1))
                return ("preface", self._take(self._find(b"\n\n") + 2))
            check(bytes(self.rbuf[:4]) == RECORD_GLYPH, "fake peer: unexpected lead %r" % bytes(self.rbuf[:8]))
            gl = self._find(b"\n")
            glyph = bytes(self.rbuf[:gl]).decode()
            m = re.match(r"^\U0001F5A7: B\.([0-9A-Za-z_~]{43})\.H3$", glyph)
            check(m, "fake peer: unexpected record %r" % glyph)
            hl = self._find(b"\n\n", gl + 1)
            m2 = re.match(rb"^Data-Length: (\d+)$", bytes(self.rbuf[gl + 1:hl]))
            check(m2, "fake peer: unexpected record head %r" % bytes(self.rbuf[:hl]))
            n = int(m2.group(1))
            self._need(hl + 2 + n)
            rec = self._take(hl + 2 + n)
            data = rec[hl + 2:]
            check(blob_hash(data) == m.group(1), "fake peer: the listener sent a Blob with a wrong hash")
            return ("record", (m.group(1), data))
        check(chr(c).isalpha(), "fake peer: unexpected item lead %r" % bytes(self.rbuf[:8]))
        end = self._find(b"\n\n")
        block = self._take(end + 2).decode()
        return ("facts", block[:-2].split("\n"))

    def expect(self, kind):
        k, v = self.item()
        check(k == kind, "fake peer: expected %s from the listener, got %s %r" % (kind, k, v if k != "record" else v[0]))
        return v

    def read_eof(self, timeout=10):
        """Reads to EOF; returns the bytes that were left."""
        self.sock.settimeout(timeout)
        while True:
            try:
                self._fill()
            except EOFError:
                return bytes(self.rbuf)

    # -- the grammar
    def establish(self):
        self.raw(self.preface())
        self.items(b"\n")  # our proof: the zero-row block
        self.expect("preface")
        rows = self.expect("facts")
        check(rows == [], "fake peer: the listener's proof is not the zero-row block: %r" % rows)
        self.expect("record")  # the listener's operand
        self.items(blob_record(b"fake peer operand\n"))

    def read_adv(self):
        rows = self.expect("facts")
        hs = []
        for i in range(0, len(rows), 2):
            m = re.match(r"^Advertised\('B\.([0-9A-Za-z_~]{43})\.H3'\)$", rows[i])
            check(m and rows[i + 1] == "AdvertisedField('B.%s.H3','Type','0','B')" % m.group(1),
                  "fake peer: advertisement outside the schema: %r" % rows[i:i + 2])
            hs.append(m.group(1))
        check(hs == sorted(hs), "fake peer: the listener's advertisement is not sorted")
        return hs

    def read_req(self):
        rows = self.expect("facts")
        hs = []
        for r in rows:
            m = re.match(r"^MayRequest\('B\.([0-9A-Za-z_~]{43})\.H3'\)$", r)
            check(m, "fake peer: unexpected request row %r" % r)
            hs.append(m.group(1))
        return hs

    def rounds(self, have, max_rounds=10):
        """Rounds to fixed point (after establishment, or at fixed point to answer a round the
        listener opened): updates `have` with what arrives; returns the number of rounds."""
        mine = set(have)
        for rnd in range(1, max_rounds + 1):
            self.items(adv_block(sorted(have)))
            theirs = self.read_adv()
            want = [h for h in theirs if h not in have]
            self.items(req_block(want))
            asked = self.read_req()
            for h in asked:
                check(h in have, "fake peer: asked for a Blob it did not advertise")
            # responses in batches of about 1 MiB
            batch, size = [], 0
            for h in asked:
                batch.append(blob_record(have[h], h))
                size += len(batch[-1])
                if size > (1 << 20):
                    self.items(*batch)
                    batch, size = [], 0
            if batch:
                self.items(*batch)
            for _ in want:
                h, d = self.expect("record")
                check(h in want and h not in mine, "fake peer: got an unrequested Blob")
                have[h] = d
            self.items(FENCE)
            rows = self.expect("facts")
            check(rows == ["RoundComplete()"], "fake peer: expected the fence, got %r" % rows[:3])
            if not want and not asked:
                return rnd
        raise Fail("fake peer: no fixed point after %d rounds" % max_rounds)

    def finish(self):
        """At fixed point: our end mark, half-close, then the listener's end mark and close."""
        if self.enc:
            self.raw(self.enc.end())
        self.half_close()
        rest = self.read_eof()
        check(rest == b"", "fake peer: %d bytes after the listener's last item" % len(rest))

    def sync(self, blobs, max_rounds=10):
        """A whole well-behaved session after establish(). Returns the Blobs held at the end
        and the number of rounds."""
        have = dict(blobs)
        rnd = self.rounds(have, max_rounds)
        self.finish()
        return have, rnd


def seed_store(store, blobs, addr=None, timeout=120):
    """Fills a fresh store through a --once listener fed by the fake peer (fast for many Blobs,
    and the only way to store a Blob the CLI cannot take)."""
    addr = addr or "unix:" + os.path.join(TMP, "seed-%d.sock" % random.randrange(1 << 30))
    # the phase deadline bounds a whole round; 10,000 fsynced puts can take longer than the
    # default 30 s on a busy disk, so the seeding listener gets a long one
    lst = Listener(store, addr, ["--timeout-ms", "%d" % (timeout * 1000)], once=True)
    try:
        p = Peer(lst.addr, timeout=timeout)
        try:
            p.establish()
            have, rounds = p.sync(blobs)
        finally:
            p.close()
        rc = lst.wait(timeout)
        check(rc == 0, "seeding listener exited %d: %s" % (rc, lst.err()[-500:]))
        s = one_summary(lst.err(), "seeding listener")
        check(s["recv"]["blobs"] == len(blobs), "seeding listener stored %d of %d Blobs" % (s["recv"]["blobs"], len(blobs)))
    finally:
        lst.stop()


# ---------------------------------------------------------------------------------------------


def run_tests(tests, label):
    """Runs each test function (all, or those whose name holds one of ONLY), killing every process
    after each; prints one line per test and `label: N passed, M failed`. Returns the exit
    status."""
    results = []
    try:
        for fn in tests:
            name = fn.__name__
            names = getattr(fn, "names", [name])  # a group of cases answers to each case's name
            if ONLY and not any(o in n for o in ONLY for n in names):
                continue
            t = time.monotonic()
            try:
                fn()
                results.append((name, True, "", time.monotonic() - t))
            except Exception as e:  # noqa: BLE001 - report every failure
                results.append((name, False, "%s: %s" % (type(e).__name__, e), time.monotonic() - t))
            finally:
                kill_all()
            ok = results[-1][1]
            print("%s %s (%.2f s)%s" % ("ok  " if ok else "FAIL", name, results[-1][3],
                                        "" if ok else "\n     " + results[-1][2]), flush=True)
    finally:
        cleanup()
    passed = sum(1 for r in results if r[1])
    failed = len(results) - passed
    print("%s: %d passed, %d failed (%.1f s)" % (label, passed, failed, time.monotonic() - T0))
    return 1 if failed or not results else 0
