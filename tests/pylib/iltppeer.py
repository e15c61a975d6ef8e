"""A minimal ILTP Blob-sync peer written from Lace-060 alone, for interop tests (asyncio).

Independent of wirekit: H3 hashes come from the official BLAKE3 tool (`b3sum`, Debian's
Rust build), B64A and every item are formatted and parsed here, and the transport is whatever
the caller plugs in (tests/host/ws_test.py uses Debian's python3-websockets). It speaks the 0.13
preface form offering no encodings, so both directions are identity; it sends the zero-row proof
block and accepts the zero-row block or any Seal record (structure checked, Mark not verified);
rounds follow Lace-060's order: advertisement, request, responses, RoundComplete(), until two empty
request sets meet.

    rx = ItemReader(recv)        # recv(): awaitable returning the next bytes (None at the end)
    tx = Writer(send, rnd)       # send(bytes): awaitable; flush() splits at random points
    have, rounds = await sync(side, rx, tx, {hash: data})
"""
import base64
import os
import random
import re
import subprocess

PREFACE_GLYPH = "\U0001FAA2".encode()  # F0 9F AA A2
RECORD_GLYPH = "\U0001F5A7".encode()   # F0 9F 96 A7
FENCE = b"RoundComplete()\n\n"
OPERAND = b"python iltppeer operand\n"

_B64A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
_STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_TO_B64A = str.maketrans(_STD, _B64A)
HASH_RE = r"[0-9A-Z_a-z~]{43}"


class PeerError(Exception):
    pass


def need(cond, what):
    if not cond:
        raise PeerError(what)


def b64a(b):
    return base64.b64encode(b).decode().rstrip("=").translate(_TO_B64A)


def blake3(data):
    r = subprocess.run(["b3sum", "--raw"], input=data, capture_output=True, timeout=120)
    need(r.returncode == 0 and len(r.stdout) == 32, "b3sum failed: %r" % r.stderr[:200])
    return r.stdout


def blob_hash(data):
    """The Blob's H3 hash in B64A: BLAKE3 of `Data-Length: N\\n\\n` + data."""
    return b64a(blake3(b"Data-Length: %d\n\n" % len(data) + data))


def blob_record(data, h=None):
    h = h or blob_hash(data)
    return RECORD_GLYPH + b": B." + h.encode() + b".H3\nData-Length: %d\n\n" % len(data) + data


def adv_block(hashes):
    rows = "".join("Advertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\n" % (h, h) for h in hashes)
    return (rows + "\n").encode()


def req_block(hashes):
    return ("".join("MayRequest('B.%s.H3')\n" % h for h in hashes) + "\n").encode()


def preface():
    nonce = b64a(os.urandom(31) + b"\x01")
    return PREFACE_GLYPH + b": iltp/0.13\nNonce: " + nonce.encode() + b"\n\n"


class ItemReader:
    """Parses the identity item stream arriving in arbitrary pieces."""

    def __init__(self, recv):
        self.recv = recv
        self.buf = bytearray()
        self.ended = False

    async def _fill(self):
        b = await self.recv()
        if b is None:
            self.ended = True
            raise EOFError
        need(isinstance(b, (bytes, bytearray)), "a text message from the peer")
        self.buf += b

    async def _need(self, n):
        while len(self.buf) < n:
            await self._fill()

    async def _find(self, pat, start=0):
        while True:
            i = self.buf.find(pat, start)
            if i >= 0:
                return i
            start = max(0, len(self.buf) - len(pat) + 1)
            await self._fill()

    def _take(self, n):
        b = bytes(self.buf[:n])
        del self.buf[:n]
        return b

    async def _blob_tail(self, at):
        """Reads `Data-Length: N\\n\\n` + N bytes starting at buf[at]; returns the end offset."""
        hl = await self._find(b"\n\n", at)
        m = re.match(rb"^Data-Length: (0|[1-9][0-9]*)$", bytes(self.buf[at:hl]))
        need(m, "bad Blob head %r" % bytes(self.buf[at:hl])[:80])
        end = hl + 2 + int(m.group(1))
        await self._need(end)
        return end

    async def item(self):
        """('preface', bytes) | ('facts', [rows]) | ('blob', (hash, data)) | ('seal', bytes)."""
        await self._need(1)
        c = self.buf[0]
        if c == 0x0A:
            self._take(1)
            return ("facts", [])
        if c == 0xF0:
            await self._need(4)
            if bytes(self.buf[:4]) == PREFACE_GLYPH:
                return ("preface", self._take(await self._find(b"\n\n") + 2))
            need(bytes(self.buf[:4]) == RECORD_GLYPH, "unexpected lead %r" % bytes(self.buf[:8]))
            gl = await self._find(b"\n")
            glyph = bytes(self.buf[:gl]).decode()
            m = re.match(r"^\U0001F5A7: ([BPS])\.(%s)\.H3$" % HASH_RE, glyph)
            need(m, "unexpected record line %r" % glyph)
            if m.group(1) == "B":
                end = await self._blob_tail(gl + 1)
                rec = self._take(end)
                data = rec[rec.index(b"\n\n") + 2:]
                need(blob_hash(data) == m.group(2), "a Blob whose hash does not match its data")
                return ("blob", (m.group(2), data))
            need(m.group(1) == "S", "a %s record where a Blob or Seal was expected" % m.group(1))
            # Seal: By and Mark lines, then a Plex (glyph line, field lines), then its Blob
            at = gl + 1
            for field in (b"By: V.", b"Mark: "):
                e = await self._find(b"\n", at)
                need(bytes(self.buf[at:at + len(field)]) == field, "bad Seal line %r" % bytes(self.buf[at:e]))
                at = e + 1
            e = await self._find(b"\n", at)
            need(re.match(r"^\U0001F5A7: P\.%s\.H3$" % HASH_RE, bytes(self.buf[at:e]).decode()), "no Plex in the Seal")
            at = e + 1
            while True:
                await self._need(at + 1)
                if self.buf[at] == 0xF0:
                    break
                e = await self._find(b"\n", at)
                need(re.match(rb"^[A-Za-z][A-Za-z0-9-]*: ", bytes(self.buf[at:e])), "bad Plex field")
                at = e + 1
            e = await self._find(b"\n", at)
            need(re.match(r"^\U0001F5A7: B\.%s\.H3$" % HASH_RE, bytes(self.buf[at:e]).decode()), "no Blob in the Plex")
            return ("seal", self._take(await self._blob_tail(e + 1)))
        need(chr(c).isalpha(), "unexpected item lead %r" % bytes(self.buf[:8]))
        end = await self._find(b"\n\n")
        return ("facts", self._take(end + 2).decode()[:-2].split("\n"))

    async def expect(self, kind):
        k, v = await self.item()
        need(k == kind, "expected %s, got %s" % (kind, k))
        return v

    async def at_end(self):
        """True if the stream ends with no further byte."""
        try:
            await self._need(1)
        except EOFError:
            return True
        return False


class Writer:
    """Collects items and sends them as messages cut at random points: an item may span many
    messages and one message may hold several items; some messages go out fragmented."""

    def __init__(self, send, rnd, max_piece=200000):
        self.send = send
        self.rnd = rnd
        self.max_piece = max_piece
        self.pending = bytearray()
        self.messages = 0
        self.fragmented = 0

    def put(self, *items):
        for it in items:
            self.pending += it

    async def flush(self):
        data, self.pending = bytes(self.pending), bytearray()
        i = 0
        while i < len(data):
            kind = self.rnd.random()
            n = self.rnd.randint(1, 12) if kind < 0.3 else self.rnd.randint(13, 5000) if kind < 0.7 else \
                self.rnd.randint(5001, self.max_piece)
            piece = data[i:i + n]
            i += len(piece)
            if len(piece) > 2 and self.rnd.random() < 0.15:
                cuts = sorted(self.rnd.sample(range(1, len(piece)), min(3, len(piece) - 1)))
                await self.send([piece[a:b] for a, b in zip([0] + cuts, cuts + [len(piece)])])
                self.fragmented += 1
            else:
                await self.send(piece)
            self.messages += 1


async def read_adv(rx):
    rows = await rx.expect("facts")
    hs = []
    for i in range(0, len(rows), 2):
        m = re.match(r"^Advertised\('B\.(%s)\.H3'\)$" % HASH_RE, rows[i])
        need(m and i + 1 < len(rows) and rows[i + 1] == "AdvertisedField('B.%s.H3','Type','0','B')" % m.group(1),
             "advertisement outside the schema: %r" % rows[i:i + 2])
        hs.append(m.group(1))
    need(hs == sorted(hs), "advertisement not sorted")
    return hs


async def read_req(rx):
    hs = []
    for r in await rx.expect("facts"):
        m = re.match(r"^MayRequest\('B\.(%s)\.H3'\)$" % HASH_RE, r)
        need(m, "unexpected request row %r" % r)
        hs.append(m.group(1))
    return hs


async def establish(side, rx, tx):
    """Prefaces, proofs and operands in Lace-060's role order. Returns the peer's proof kind."""
    tx.put(preface())
    await tx.flush()
    await rx.expect("preface")
    if side == 0:
        tx.put(b"\n")  # our proof: the zero-row block
        await tx.flush()
    k, _ = await rx.item()
    need(k in ("facts", "seal"), "expected the peer's proof, got %s" % k)
    if side == 1:
        tx.put(b"\n")
        await tx.flush()
    else:
        tx.put(blob_record(OPERAND))
        await tx.flush()
    await rx.expect("blob")  # the peer's operand
    if side == 1:
        tx.put(blob_record(OPERAND))  # flushed together with our first advertisement
    return k


async def rounds(rx, tx, have, max_rounds=10):
    """Rounds to fixed point; updates `have`; returns the number of rounds."""
    for rnd in range(1, max_rounds + 1):
        mine = set(have)
        tx.put(adv_block(sorted(have)))
        await tx.flush()
        theirs = await read_adv(rx)
        want = [h for h in theirs if h not in have]
        tx.put(req_block(want))
        await tx.flush()
        asked = await read_req(rx)
        for h in asked:
            need(h in mine, "asked for a Blob we did not advertise")
        for h in asked:
            tx.put(blob_record(have[h], h))
            if len(tx.pending) > (4 << 20):
                await tx.flush()
        await tx.flush()
        for _ in want:
            h, d = await rx.expect("blob")
            need(h in want and h not in mine, "an unrequested Blob")
            have[h] = d
        tx.put(FENCE)
        await tx.flush()
        need(await rx.expect("facts") == ["RoundComplete()"], "expected the peer's fence")
        if not want and not asked:
            return rnd
    raise PeerError("no fixed point after %d rounds" % max_rounds)


async def sync(side, rx, tx, blobs, max_rounds=10):
    """A whole session to fixed point. Returns (the Blobs held, rounds, the peer's proof kind)."""
    have = dict(blobs)
    proof = await establish(side, rx, tx)
    n = await rounds(rx, tx, have, max_rounds)
    return have, n, proof


def data_set(tag, n, size=(10, 200), seed=None):
    rnd = random.Random(seed if seed is not None else tag)
    return [("%s-%d:" % (tag, i)).encode() + rnd.randbytes(rnd.randint(*size)) for i in range(n)]
