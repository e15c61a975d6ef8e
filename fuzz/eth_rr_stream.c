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
 * The contract harness drives the reader through fuzz_drive() (fuzz/fuzz_drive.h) with the eth
 * adapter (tests/contract/wk_contract_eth.h): pass 1 in pushes of the chosen size through views of
 * the chosen size, pass 2 in one push, each on a fresh reader. Checked on every call (by the
 * harness, the adapter and the event callback here):
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
 * The callbacks and the reference carry no coverage instrumentation: the library calls they
 * make carry the signal, and their per-byte loops were most of an execution's time.
 * The two passes agree on the event sequence (events with their chunk infos), the verdict (code and
 * offset), and when accepted the bytes consumed and the payload bytes. Pass 2 is compared with
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

#include "fuzz_drive.h"
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

/* Length of the varint at p[0..n) (the prefix already accepted by the reader). */
static size_t varint_len(const uint8_t *p, size_t n)
{
    size_t k = 0;
    while (k < n && k < 10 && (p[k] & 0x80)) k++;
    return k + 1;
}

/* What the event callback adds to the adapter's checks, per run of the harness. */
typedef struct run_state {
    const wk_eth_rr_reader_params *o;
    const wk_eth_ssz_bounds *alt;
    const uint8_t *w;
    size_t n;
    wk_contract_eth_sink sink; /* the current chunk's payload */
    uint64_t lo, hi, chunks;
    uint32_t record;
} run_state;

static void run_start(run_state *x)
{
    x->sink.n = 0;
    x->lo = x->hi = x->chunks = 0;
    x->record = 0;
}

NO_COVERAGE
static bool on_event(wk_contract *c, wk_contract_eth_rr *m)
{
    run_state *x = m->user;
    if (c->oc.events == 1) run_start(x); /* the first event of a run */
    const wk_eth_rr_reader_params *o = x->o;
    wk_eth_rr_event ev = wk_eth_rr_reader_event(m->r);
    const wk_eth_rr_chunk *k = wk_eth_rr_reader_chunk(m->r);
    if (ev == WK_ETH_RR_CHUNK_BEGIN) {
        bool error_chunk = !o->request && k->result != WK_ETH_RR_SUCCESS;
        if (o->request) CHECK(k->result == 0);
        CHECK(k->produced == 0 && x->sink.n == 0);
        effective(x->alt ? x->alt : &o->bounds, error_chunk, &x->lo, &x->hi);
        return true;
    }
    if (ev == WK_ETH_RR_END && o->empty_request && k->index == 0 && x->chunks == 0 &&
        c->oc.consumed == 0)
        return true; /* an empty request: nothing was read */
    CHECK(k->length >= x->lo && k->length <= x->hi && x->sink.n == k->length);
    /* the budget: framed bytes after the prefix */
    uint64_t consumed = c->oc.consumed;
    uint64_t head = k->start_offset + (o->request ? 0 : 1) + (k->has_context ? 4 : 0);
    CHECK(head < consumed);
    uint64_t payload_start = head + varint_len(x->w + head, x->n - (size_t)head);
    CHECK(payload_start <= consumed);
    CHECK(consumed - payload_start <= max_compressed_len(k->length));
    if (k->length == 0) CHECK(consumed == payload_start);
    x->chunks++;
    x->record = chunk_record(x->record, k->result, k->has_context, k->context, k->length,
                             hash(0, x->sink.p, x->sink.n));
    x->sink.n = 0;
    return true;
}

NO_COVERAGE
static bool on_end(wk_contract *c, wk_contract_eth_rr *m)
{
    run_state *x = m->user;
    if (c->oc.events == 0) run_start(x);
    if (c->oc.verdict == WK_ERROR) {
        check_error(&c->oc.error, x->n);
        if (c->oc.error.code == WK_ERR_SSZSNAPPY_EARLY_EOF) CHECK(c->oc.error.offset == x->n);
    } else {
        CHECK(c->oc.consumed == x->n);
    }
    return true;
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

    static uint8_t *tmp;
    static wk_alloc_counter ctr;
    if (!tmp) {
        tmp = malloc(MAX_DATA);
        CHECK(tmp);
    }
    /* memory (counting allocator): everything allocated by create, peak below 160 KiB, all freed */
    memset(&ctr, 0, sizeof ctr);
    wk_allocator a = wk_counting_allocator(&ctr);
    o.allocator = &a;
    wk_error e;
    wk_eth_rr_reader *probe = wk_eth_rr_reader_create(&o, &e);
    CHECK(probe != NULL);
    wk_eth_rr_reader_destroy(probe);
    uint64_t per_create = ctr.count;

    /* through the contract harness (fuzz_drive.h): pushes and views as chosen, and whole */
    run_state x;
    memset(&x, 0, sizeof x);
    x.o = &o;
    x.alt = alt;
    x.w = w;
    x.n = n;
    wk_contract_eth_rr m;
    wk_contract_eth_rr_setup(&m, &o);
    m.begin_bounds = alt;
    m.sink = &x.sink;
    m.on_event = on_event;
    m.on_end = on_end;
    m.user = &x;
    wk_contract_outcome whole = fuzz_drive(&wk_contract_eth_rr_ops, &m, NULL, w, n, push, cap);
    wk_contract_eth_rr_cleanup(&m);
    free(x.sink.p);
    CHECK(ctr.count == 3 * per_create && ctr.peak < MEM_MAX && ctr.current == 0);

    ref_outcome ref = ref_read(w, n, &o, alt, tmp);
    CHECK(ref.ok == (whole.verdict == WK_DONE));
    if (ref.ok) CHECK(ref.chunks == x.chunks && ref.record == x.record);
    return 0;
}
