/* libFuzzer target: consensus req/resp ssz_snappy reader (wk_eth_rr_reader, eth.h, spec 6) on
 * arbitrary stream bytes.
 *
 * Input: two header bytes, then the stream.
 *   byte 0  bit 0 request (else response), bit 1 context bytes, bit 2 allow_nonminimal,
 *           bit 3 empty_request, bits 4-5 max_chunks (0 = unlimited, 1, 2, 5),
 *           bits 6-7 per-chunk bounds set at CHUNK_BEGIN with wk_eth_rr_reader_set_bounds
 *           (0, 1: none; 2: [0, 16]; 3: [8, 100000])
 *   byte 1  bits 0-2 options.bounds ({0,0} = none, [0,8], [8,8], [1,100], [0,65536],
 *           [100,200000], [0,10485761], [139405,139405]), bits 3-5 push size (1 .. 65536),
 *           bits 6-7 output view (1, 7, 4096, 131072 bytes)
 *
 * Pass 1 reads the stream in pushes of the chosen size through views of the chosen size, pass 2
 * in one push with roomy views on a second reader. Checked on every step:
 *   - out.pos never exceeds the view; NEED_OUTPUT only with a full view; NEED_INPUT only with the
 *     push consumed; wk_eth_rr_reader_consumed equals the bytes taken;
 *   - payload bytes are written only between CHUNK_BEGIN and CHUNK_END (END for a request); the
 *     call that reports CHUNK_BEGIN writes nothing; chunk->produced equals the chunk's bytes so
 *     far and equals chunk->length at CHUNK_END;
 *   - chunk info: index counts chunks, start_offset is where the previous chunk ended (0 for the
 *     first), result and reserved_result (4..127) and has_context (response, context option,
 *     result 0) match the bytes; the length lies within the bounds that apply (error chunks
 *     [0, 256]); max_chunks is never exceeded;
 *   - budget: bytes consumed after the length prefix up to CHUNK_END <= max_compressed_len(n);
 *   - errors are PeerProtocol with a name of the req/resp, framing or snappy vocabulary and an
 *     offset inside the input, and are sticky (read and finish repeat them without moving);
 *   - finish: WK_OK or SSZSNAPPY_ERR_EARLY_EOF at offset = bytes pushed;
 *   - memory (counting allocator): all allocated by create, peak below 160 KiB, all freed.
 * The drivers (run and the reference) carry no coverage instrumentation: the library calls they
 * make carry the signal, and their per-byte loops were most of an execution's time.
 * The two passes agree on the event sequence (events with their chunk infos and each chunk's
 * payload bytes), the verdict (code and offset) and, when accepted, the bytes consumed (after an
 * error, how much of the failing element was taken depends on the pushes). Pass 2 is compared with
 * a reference reader written here from spec 6 (its own framing decoder and block validator,
 * libsnappy to decode valid blocks, a bitwise CRC-32C): same accept/reject verdict, and when
 * accepted the same chunks (result, context, length, payload bytes). */
#include <wirekit/eth.h>
#include "wk_contract_eth.h"
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"
#include "eth_ref.h"

#define MEM_MAX ((size_t)160 * 1024)
#define BIG_VIEW ((size_t)128 * 1024)
#define MAX_DATA 65536


static const wk_eth_ssz_bounds opt_bounds[8] = {{0, 0},       {0, 8},      {8, 8},
                                            {1, 100},     {0, 65536},  {100, 200000},
                                            {0, 10485761}, {139405, 139405}};
static const wk_eth_ssz_bounds alt_bounds[2] = {{0, 16}, {8, 100000}};
static const uint64_t chunk_limits[4] = {0, 1, 2, 5};
static const size_t pushes[8] = {1, 2, 3, 5, 64, 1000, 4096, 65536};
static const size_t views[4] = {1, 7, 4096, BIG_VIEW};

static uint32_t hash(uint32_t h, const void *p, size_t n)
{
    return (uint32_t)crc32((uLong)h, p, (uInt)n);
}

static uint64_t max_compressed_len(uint64_t n) { return 32 + n + n / 6; }

/* The bounds a chunk's length must lie in. */
static void effective(const wk_eth_ssz_bounds *b, bool error_chunk, uint64_t *lo, uint64_t *hi)
{
    if (error_chunk) {
        *lo = 0;
        *hi = WK_ETH_SSZ_ERRMSG_MAX;
        return;
    }
    *lo = b->min_len;
    *hi = b->max_len == 0 || b->max_len > WK_ETH_SSZ_MAX_PAYLOAD_SIZE ? WK_ETH_SSZ_MAX_PAYLOAD_SIZE
                                                                   : b->max_len;
}

/* What a chunk contributes to the event record both sides compute. */
static uint32_t chunk_record(uint32_t h, uint8_t result, bool has_context, const uint8_t *ctx,
                             uint64_t length, uint32_t payload_hash)
{
    uint8_t rec[1 + 1 + WK_ETH_RR_CONTEXT_LEN + 8 + 4];
    memset(rec, 0, sizeof rec);
    rec[0] = result;
    rec[1] = has_context;
    if (has_context) memcpy(rec + 2, ctx, WK_ETH_RR_CONTEXT_LEN);
    for (int i = 0; i < 8; i++) rec[6 + i] = (uint8_t)(length >> (8 * i));
    for (int i = 0; i < 4; i++) rec[14 + i] = (uint8_t)(payload_hash >> (8 * i));
    return hash(h, rec, sizeof rec);
}

/* ---------------------------------------------------------------------------------------------
 * Reference reader (spec 2 and 6), independent of src/eth (primitives in eth_ref.h)
 * ------------------------------------------------------------------------------------------- */
/* A framed payload of exactly `want` (> 0) bytes in w[0..n): true when it completes, with
 * *used = its framed length and *h = the hash of the decoded bytes. */
NO_COVERAGE
static bool ref_frames(const uint8_t *w, size_t n, uint64_t want, size_t *used, uint32_t *h,
                       uint8_t *tmp)
{
    size_t pos = 0;
    uint64_t produced = 0;
    bool seen_id = false;
    *h = 0;
    while (produced < want) {
        if (n - pos < 4) return false;
        uint8_t type = w[pos];
        uint32_t len = le(w + pos + 1, 3);
        if (!seen_id && type != 0xff) return false;
        if (n - pos - 4 < len) return false;
        const uint8_t *body = w + pos + 4;
        if (type == 0xff) {
            if (len != 6 || memcmp(body, "sNaPpY", 6) != 0) return false;
            seen_id = true;
        } else if (type == 0x00 || type == 0x01) {
            if (len < 4 || len > (type == 0 ? 76494u : 65540u)) return false;
            const uint8_t *piece;
            size_t plen;
            if (type == 0) {
                uint64_t ulen;
                size_t got = MAX_DATA;
                if (!ref_block_valid(body + 4, len - 4, MAX_DATA, &ulen)) return false;
                CHECK(snappy_uncompress((const char *)body + 4, len - 4, (char *)tmp, &got) ==
                          SNAPPY_OK &&
                      got == ulen);
                piece = tmp;
                plen = got;
            } else {
                piece = body + 4;
                plen = len - 4;
            }
            uint32_t crc = ref_crc32c(piece, plen);
            if (ref_mask(crc) != le(body, 4)) return false;
            if (produced + plen > want) return false;
            produced += plen;
            *h = hash(*h, piece, plen);
        } else if (type <= 0x7f || len > WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE) {
            return false;
        }
        pos += 4 + (size_t)len;
    }
    *used = pos;
    return true;
}

typedef struct ref_outcome {
    bool ok;
    uint64_t chunks;
    uint32_t record;
} ref_outcome;

/* One payload (prefix and frames) at w[*pos..n) with the given bounds. */
NO_COVERAGE
static bool ref_payload(const uint8_t *w, size_t n, size_t *pos, bool allow_nonminimal, uint64_t lo,
                        uint64_t hi, uint64_t *length, uint32_t *h, uint8_t *tmp)
{
    uint64_t v = 0;
    size_t k = 0;
    for (;;) {
        if (*pos + k == n || k == 10) return false;
        uint8_t b = w[*pos + k];
        if (k == 9 && b > 1) return false; /* value bits above 2^63, or an 11th byte */
        v |= (uint64_t)(b & 0x7f) << (7 * k);
        k++;
        if (!(b & 0x80)) {
            if (k > 1 && b == 0 && !allow_nonminimal) return false;
            break;
        }
    }
    *pos += k;
    if (v < lo || v > hi) return false;
    *length = v;
    *h = 0;
    if (v == 0) return true;
    size_t window = n - *pos;
    if (window > max_compressed_len(v)) window = (size_t)max_compressed_len(v);
    size_t used;
    if (!ref_frames(w + *pos, window, v, &used, h, tmp)) return false;
    *pos += used;
    return true;
}

NO_COVERAGE
static ref_outcome ref_read(const uint8_t *w, size_t n, const wk_eth_rr_reader_params *o,
                            const wk_eth_ssz_bounds *alt, uint8_t *tmp)
{
    ref_outcome r = {false, 0, 0};
    size_t pos = 0;
    uint64_t lo, hi, length;
    uint32_t h;
    if (o->request) {
        if (o->empty_request) {
            r.ok = n == 0;
            return r;
        }
        effective(alt ? alt : &o->bounds, false, &lo, &hi);
        if (!ref_payload(w, n, &pos, o->allow_nonminimal, lo, hi, &length, &h, tmp)) return r;
        if (pos != n) return r;
        r.chunks = 1;
        r.record = chunk_record(0, 0, false, NULL, length, h);
        r.ok = true;
        return r;
    }
    for (;;) {
        if (pos == n) {
            r.ok = true;
            return r;
        }
        if (o->max_chunks && r.chunks == o->max_chunks) return r;
        uint8_t result = w[pos++];
        bool error_chunk = result != WK_ETH_RR_SUCCESS;
        bool has_ctx = !error_chunk && o->context_bytes;
        const uint8_t *ctx = NULL;
        if (has_ctx) {
            if (n - pos < WK_ETH_RR_CONTEXT_LEN) return r;
            ctx = w + pos;
            pos += WK_ETH_RR_CONTEXT_LEN;
        }
        effective(alt ? alt : &o->bounds, error_chunk, &lo, &hi);
        if (!ref_payload(w, n, &pos, o->allow_nonminimal, lo, hi, &length, &h, tmp)) return r;
        r.chunks++;
        r.record = chunk_record(r.record, result, has_ctx, ctx, length, h);
        if (error_chunk) { /* the last chunk: the responder closes after it */
            r.ok = pos == n;
            return r;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Our reader
 * ------------------------------------------------------------------------------------------- */
typedef struct outcome {
    wk_code code;      /* WK_OK or the error (read error or finish's verdict) */
    uint64_t offset;
    bool bounded;      /* stopped at the output bound: not compared */
    uint64_t consumed;
    uint64_t chunks;   /* completed chunks */
    uint32_t events;   /* hash of the event sequence with chunk infos */
    uint32_t record;   /* chunk_record over the completed chunks */
} outcome;

static bool rr_error_code(wk_code c)
{
    switch (c) {
    case WK_ERR_SSZSNAPPY_VARINT_TOO_LONG:
    case WK_ERR_SSZSNAPPY_VARINT_OVERFLOW:
    case WK_ERR_SSZSNAPPY_VARINT_NONMINIMAL:
    case WK_ERR_SSZSNAPPY_LENGTH_BOUNDS:
    case WK_ERR_SSZSNAPPY_BUDGET:
    case WK_ERR_SSZSNAPPY_EXCESS_DATA:
    case WK_ERR_SSZSNAPPY_EARLY_EOF:
    case WK_ERR_SSZSNAPPY_TRAILING:
    case WK_ERR_RESP_ERRMSG_TOO_LONG:
    case WK_ERR_FRAME_NO_STREAM_ID:
    case WK_ERR_FRAME_BAD_STREAM_ID:
    case WK_ERR_FRAME_RESERVED_CHUNK:
    case WK_ERR_FRAME_CHUNK_TOO_SHORT:
    case WK_ERR_FRAME_CHUNK_TOO_LARGE:
    case WK_ERR_FRAME_CRC:
    case WK_ERR_SNAPPY_TRUNCATED:
    case WK_ERR_SNAPPY_PREAMBLE:
    case WK_ERR_SNAPPY_BAD_OFFSET:
    case WK_ERR_SNAPPY_OVERRUN:
    case WK_ERR_SNAPPY_LENGTH_MISMATCH:
        return true;
    default:
        return false;
    }
}

static void check_error(const wk_error *e, size_t n)
{
    CHECK(e->code != WK_OK && rr_error_code(e->code));
    CHECK(e->category == WK_CAT_PEER_PROTOCOL);
    CHECK(e->has_offset && e->offset <= n);
}

static void check_sticky(wk_eth_rr_reader *r, const wk_error *first)
{
    uint8_t b[4];
    wk_out out = {b, sizeof b, 0};
    static const uint8_t one[1] = {0};
    wk_in in = {one, 1, 0};
    wk_error e;
    uint64_t c0 = wk_eth_rr_reader_consumed(r);
    CHECK(rr_step(r, &in, &out, &e) == RR_ERROR);
    CHECK(e.code == first->code && e.offset == first->offset && in.pos == 0 && out.pos == 0);
    CHECK(rr_finish(r, &e) == first->code && e.code == first->code);
    CHECK(wk_eth_rr_reader_consumed(r) == c0);
}

/* Length of the varint at p[0..n) (the prefix already accepted by the reader). */
static size_t varint_len(const uint8_t *p, size_t n)
{
    size_t k = 0;
    while (k < n && k < 10 && (p[k] & 0x80)) k++;
    return k + 1;
}

NO_COVERAGE
static outcome run(const wk_eth_rr_reader_params *o, const wk_eth_ssz_bounds *alt, const uint8_t *w, size_t n,
                   size_t push, size_t cap, uint8_t *buf)
{
    outcome oc = {WK_OK, 0, false, 0, 0, 0, 0};
    wk_alloc_counter ctr;
    memset(&ctr, 0, sizeof ctr);
    wk_allocator a = wk_counting_allocator(&ctr);
    wk_error e;
    wk_eth_rr_reader_params ra = *o;
    ra.allocator = &a;
    wk_eth_rr_reader *r = wk_eth_rr_reader_create(&ra, &e);
    CHECK(r != NULL);
    uint64_t count = ctr.count;
    uint64_t bound = (uint64_t)cap * 8192;
    if (bound > (uint64_t)16 << 20) bound = (uint64_t)16 << 20;

    bool in_chunk = false;
    uint64_t chunk_bytes = 0, total_out = 0, events = 0, prev_end = 0, lo = 0, hi = 0;
    uint32_t payload_hash = 0;
    size_t pos = 0;
    int ev = RR_NEED_INPUT;
    bool stop = false;
    for (;;) {
        size_t take = n - pos < push ? n - pos : push;
        wk_in in = {w + pos, take, 0};
        for (;;) {
            wk_out out = {buf, cap, 0};
            size_t in0 = in.pos;
            wk_error_clear(&e);
            ev = rr_step(r, &in, &out, &e);
            CHECK(out.pos <= cap && in.pos >= in0 && in.pos <= in.size);
            oc.consumed += in.pos - in0;
            if (out.pos) CHECK(in_chunk && ev != WK_ETH_RR_CHUNK_BEGIN);
            chunk_bytes += out.pos;
            total_out += out.pos;
            payload_hash = hash(payload_hash, buf, out.pos);
            if (ev == RR_ERROR) {
                check_error(&e, n);
                check_sticky(r, &e);
                oc.code = e.code;
                oc.offset = e.offset;
                stop = true;
                break;
            }
            CHECK(wk_eth_rr_reader_consumed(r) == oc.consumed);
            const wk_eth_rr_chunk *c = wk_eth_rr_reader_chunk(r);
            if (in_chunk) CHECK(c->produced == chunk_bytes);
            if (ev == RR_NEED_OUTPUT) {
                CHECK(out.pos == cap);
                if (total_out > bound) {
                    oc.bounded = true;
                    stop = true;
                    break;
                }
                continue;
            }
            if (ev == RR_NEED_INPUT) {
                CHECK(in.pos == in.size);
                break;
            }
            CHECK(++events <= 2 * (uint64_t)n + 4); /* every chunk takes at least one byte */
            uint8_t rec[3] = {(uint8_t)ev, 0, 0};
            if (ev == WK_ETH_RR_CHUNK_BEGIN) {
                CHECK(!in_chunk);
                in_chunk = true;
                chunk_bytes = 0;
                payload_hash = 0;
                CHECK(c->index == oc.chunks && !c->length_known && c->produced == 0);
                CHECK(c->start_offset == prev_end);
                if (o->max_chunks) CHECK(c->index < o->max_chunks);
                bool error_chunk = !o->request && c->result != WK_ETH_RR_SUCCESS;
                if (o->request) CHECK(c->result == 0);
                CHECK(c->reserved_result == (c->result >= 4 && c->result <= 127));
                CHECK(c->has_context == (!o->request && o->context_bytes && !error_chunk));
                if (alt) wk_eth_rr_reader_set_bounds(r, alt);
                effective(alt ? alt : &o->bounds, error_chunk, &lo, &hi);
                rec[1] = c->result;
                rec[2] = c->has_context;
                oc.events = hash(oc.events, rec, sizeof rec);
                if (c->has_context) oc.events = hash(oc.events, c->context, WK_ETH_RR_CONTEXT_LEN);
                continue;
            }
            if (ev == WK_ETH_RR_END && !in_chunk) {
                /* an empty request: nothing was read */
                CHECK(o->request && o->empty_request && oc.consumed == 0 && oc.chunks == 0);
                oc.events = hash(oc.events, rec, sizeof rec);
                continue;
            }
            CHECK(ev == (o->request ? WK_ETH_RR_END : WK_ETH_RR_CHUNK_END));
            CHECK(in_chunk);
            in_chunk = false;
            CHECK(c->length_known && c->produced == c->length && chunk_bytes == c->length);
            CHECK(c->length >= lo && c->length <= hi);
            /* the budget: framed bytes after the prefix */
            uint64_t head = c->start_offset + (o->request ? 0 : 1) + (c->has_context ? 4 : 0);
            CHECK(head < oc.consumed);
            uint64_t payload_start = head + varint_len(w + head, n - (size_t)head);
            CHECK(payload_start <= oc.consumed);
            CHECK(oc.consumed - payload_start <= max_compressed_len(c->length));
            if (c->length == 0) CHECK(oc.consumed == payload_start);
            prev_end = oc.consumed;
            oc.chunks++;
            oc.record = chunk_record(oc.record, c->result, c->has_context, c->context, c->length,
                                     payload_hash);
            oc.events = hash(oc.events, rec, sizeof rec);
        }
        pos += in.pos;
        if (stop || pos == n) break;
    }
    if (!stop) {
        CHECK(pos == n && oc.consumed == n);
        wk_code f = rr_finish(r, &e);
        if (f != WK_OK) {
            CHECK(f == WK_ERR_SSZSNAPPY_EARLY_EOF && e.code == f);
            check_error(&e, n);
            CHECK(e.offset == n);
            oc.offset = e.offset;
            CHECK(rr_finish(r, &e) == f); /* sticky */
        } else {
            CHECK(!in_chunk);
        }
        oc.code = f;
    }
    CHECK(ctr.count == count && ctr.peak < MEM_MAX);
    wk_eth_rr_reader_destroy(r);
    CHECK(ctr.current == 0);
    return oc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eth_fuzz_kernel_for(data, size); /* WK_SNAPPY_KERNEL forces one */
    if (size < 2) return 0;
    wk_eth_rr_reader_params o;
    memset(&o, 0, sizeof o);
    o.request = data[0] & 1;
    o.context_bytes = (data[0] >> 1) & 1;
    o.allow_nonminimal = (data[0] >> 2) & 1;
    o.empty_request = (data[0] >> 3) & 1;
    o.max_chunks = chunk_limits[(data[0] >> 4) & 3];
    unsigned ab = data[0] >> 6;
    const wk_eth_ssz_bounds *alt = ab >= 2 ? &alt_bounds[ab - 2] : NULL;
    o.bounds = opt_bounds[data[1] & 7];
    size_t push = pushes[(data[1] >> 3) & 7], cap = views[data[1] >> 6];
    const uint8_t *w = data + 2;
    size_t n = size - 2;

    static uint8_t *buf, *tmp;
    if (!buf) {
        buf = malloc(BIG_VIEW);
        tmp = malloc(MAX_DATA);
        CHECK(buf && tmp);
    }
    outcome o1 = run(&o, alt, w, n, push, cap, buf);
    outcome o2 = run(&o, alt, w, n, n ? n : 1, BIG_VIEW, buf);
    CHECK(!o2.bounded);
    if (!o1.bounded) {
        /* after an error, how much of the failing chunk was taken depends on the pushes */
        CHECK(o1.code == o2.code && o1.offset == o2.offset);
        if (o1.code == WK_OK) CHECK(o1.consumed == o2.consumed);
        CHECK(o1.events == o2.events && o1.chunks == o2.chunks && o1.record == o2.record);
    }
    ref_outcome ref = ref_read(w, n, &o, alt, tmp);
    CHECK(ref.ok == (o2.code == WK_OK));
    if (ref.ok) CHECK(ref.chunks == o2.chunks && ref.record == o2.record);
    return 0;
}
