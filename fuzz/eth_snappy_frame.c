/* libFuzzer target: Snappy framing format (eth.h, spec 2): the streaming decoder on arbitrary
 * bytes, and the streaming encoder's round trip.
 *
 * Input: two header bytes, then the stream.
 *   byte 0  bits 0-2  push size (1 .. 65536 bytes)
 *           bits 3-5  output view capacity (1 .. 131072 bytes)
 *           bits 6-7  output limit: 1 or 2 = wk_eth_snappy_frame_decoder_set_output_limit(byte 1
 *                     bits 0-3 picks 0 .. 144060), 0 or 3 = none
 *   byte 1  bits 4-5  largest skippable body: default (76494), 0, 8, 16777215
 *           bits 6-7  round trip: the plaintext is the stream bytes repeated 1, 1, 3 or 40 times
 *                     (so that pieces of 65536 bytes and more occur)
 *
 * Decoder: driven by the contract harness through fuzz_drive() (fuzz/fuzz_drive.h) with the eth
 * adapter (tests/contract/wk_contract_eth.h), pass 1 in the chosen pushes and views, pass 2
 * whole; checked on every call of both passes:
 *   - out.pos never exceeds the view, views and inputs only move forward, no byte of the view
 *     past out->pos is written (a chunk with a bad checksum included);
 *   - NEED_OUTPUT only with a full view; NEED_INPUT only with the push consumed; DONE only with
 *     an output limit, exactly when the output equals it; after DONE nothing more is consumed or
 *     written and finish is WK_OK;
 *   - wk_eth_snappy_frame_decoder_produced / _consumed equal the bytes moved;
 *   - after WK_ERROR the error is PeerProtocol FRAME_ERR_* / SNAPPY_ERR_* (SSZSNAPPY_ERR_
 *     EXCESS_DATA only under a limit) with an offset inside the input, and stays set (decode
 *     and finish repeat it without moving anything);
 *   - finish: WK_OK, or FRAME_ERR_TRUNCATED with offset = bytes pushed;
 *   - memory (counting allocator): everything is allocated by create (no allocation in a decode
 *     step or a reset), peak below 160 KiB.
 * Pass 2 runs the same decoder after wk_eth_snappy_frame_decoder_reset (limits kept) in one push:
 * the same outcome (verdict, error code and offset, and when accepted the same bytes and
 * consumed count). Pass 2 is compared with a small reference decoder written here from spec 1 and 2 (its
 * own block validator, libsnappy to decode valid blocks, a bitwise CRC-32C): same accept/reject
 * verdict, and when accepted the same bytes, consumed count and DONE.
 * The decoders and the encoder are created once and reset for every input (what a previous input
 * set with the limit setters is set again), so every input also tests reset. The drivers below
 * (encode_plan, check_encoded, the reference) carry no coverage instrumentation: the library
 * calls they make carry the signal, and their per-byte loops were most of an execution's time.
 *
 * Encoder round trip (plaintext from the stream bytes, see byte 1), driven by the contract
 * harness with the eth adapter (wk_contract_drive_flush; the last piece goes out at the harness's
 * flush): a PRNG seeded by the input splits it into pushes (the run's cuts, empty ones included),
 * chooses flush or not per push (the adapter's flush points) and picks the run's output view size
 * (1 = behind 0-byte probes). Checked: the encoder never fails and takes every byte; every call
 * keeps the contract (NEED_OUTPUT only with a full view, NEED_INPUT only with the push consumed,
 * nothing written past out->pos, the flush done once and then writing nothing); after every flush
 * the bytes so far, pushed into a decoder, decode to exactly the plaintext so far; the whole stream
 * decodes to the plaintext with a clean finish; an empty plaintext gives zero bytes; the stream is the
 * identifier once, then 0x00 / 0x01 chunks of at most 65536 decoded bytes (0x00 only when it
 * saves at least 1/8); re-encoding the same plan after wk_eth_snappy_frame_encoder_reset with roomy
 * views gives identical bytes; with a single final flush the result equals
 * wk_eth_snappy_frame_encode_all and fits wk_eth_snappy_frame_max_size; encoder memory is all
 * allocated by create, peak below 160 KiB. */
#include <wirekit/eth.h>
#include "wk_contract_eth.h"
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"
#include "eth_ref.h"

#define MEM_MAX ((size_t)160 * 1024)
#define BIG_VIEW ((size_t)128 * 1024)
#define MAX_DATA 65536
#define MAX_BODY_COMPRESSED 76494
#define MAX_BODY_UNCOMPRESSED 65540
#define MAX_PLAN 64


static const size_t pushes[8] = {1, 2, 3, 7, 64, 509, 4096, 65536};
static const size_t views[8] = {1, 2, 5, 16, 100, 4096, 65536, BIG_VIEW};
static const uint64_t out_limits[16] = {0, 1, 2, 7, 8, 38, 60, 100, 1000, 4096, 10240, 65535,
                                        65536, 65537, 131072, 144060};
static const uint32_t skip_limits[4] = {0, 0, 8, 16777215}; /* [0] = leave the default */
static const size_t repeats[4] = {1, 1, 3, 40};

/* The output hash of the contract harness (its outcome's `output`), so the reference's bytes
 * compare with what the harness saw. */
static uint64_t hash(wk_contract_hash *h, const uint8_t *p, size_t n)
{
    wk_contract_hash_add(h, p, n);
    return h->h;
}

/* ---------------------------------------------------------------------------------------------
 * Reference decoder (spec 1, 2.2-2.5), independent of src/eth: the block validator and bitwise
 * CRC-32C of eth_ref.h (libsnappy decodes the blocks it accepts).
 * ------------------------------------------------------------------------------------------- */
typedef struct ref_outcome {
    bool ok;   /* accepted (EOF at a chunk boundary, or the limit reached) */
    bool done; /* the output limit was reached */
    uint64_t consumed, produced, hash;
} ref_outcome;

NO_COVERAGE
static ref_outcome ref_decode(const uint8_t *w, size_t n, bool limited, uint64_t limit,
                              uint32_t max_skip, uint8_t *tmp)
{
    ref_outcome o = {false, false, 0, 0, 0};
    wk_contract_hash h;
    wk_contract_hash_init(&h);
    o.hash = h.h;
    size_t pos = 0;
    bool seen_id = false;
    for (;;) {
        if (limited && o.produced == limit) {
            o.ok = o.done = true;
            break;
        }
        if (pos == n) {
            o.ok = true;
            break;
        }
        if (n - pos < 4) return o;
        uint8_t type = w[pos];
        uint32_t len = le(w + pos + 1, 3);
        if (!seen_id && type != 0xff) return o;
        if (n - pos - 4 < len) return o;
        const uint8_t *body = w + pos + 4;
        if (type == 0xff) {
            if (len != 6 || memcmp(body, "sNaPpY", 6) != 0) return o;
            seen_id = true;
        } else if (type == 0x00 || type == 0x01) {
            if (len < 4) return o;
            if (len > (type == 0 ? MAX_BODY_COMPRESSED : MAX_BODY_UNCOMPRESSED)) return o;
            const uint8_t *piece;
            size_t plen;
            if (type == 0) {
                uint64_t ulen;
                if (!ref_block_valid(body + 4, len - 4, MAX_DATA, &ulen)) return o;
                /* a block the spec accepts: libsnappy must decode it */
                size_t got = MAX_DATA;
                CHECK(snappy_uncompress((const char *)body + 4, len - 4, (char *)tmp, &got) ==
                          SNAPPY_OK &&
                      got == ulen);
                piece = tmp;
                plen = got;
            } else {
                piece = body + 4;
                plen = len - 4;
            }
            if (ref_mask(ref_crc32c(piece, plen)) != le(body, 4)) return o;
            if (limited && o.produced + plen > limit) return o;
            o.produced += plen;
            o.hash = hash(&h, piece, plen);
        } else if (type <= 0x7f) {
            return o;
        } else if (len > max_skip) {
            return o;
        }
        pos += 4 + (size_t)len;
    }
    o.consumed = pos;
    return o;
}

/* ---------------------------------------------------------------------------------------------
 * Our decoder
 * ------------------------------------------------------------------------------------------- */
static bool frame_error_code(wk_code c, bool limited)
{
    switch (c) {
    case WK_ERR_FRAME_NO_STREAM_ID:
    case WK_ERR_FRAME_BAD_STREAM_ID:
    case WK_ERR_FRAME_RESERVED_CHUNK:
    case WK_ERR_FRAME_CHUNK_TOO_SHORT:
    case WK_ERR_FRAME_CHUNK_TOO_LARGE:
    case WK_ERR_FRAME_CRC:
    case WK_ERR_FRAME_TRUNCATED:
    case WK_ERR_SNAPPY_TRUNCATED:
    case WK_ERR_SNAPPY_PREAMBLE:
    case WK_ERR_SNAPPY_BAD_OFFSET:
    case WK_ERR_SNAPPY_OVERRUN:
    case WK_ERR_SNAPPY_LENGTH_MISMATCH:
        return true;
    case WK_ERR_SSZSNAPPY_EXCESS_DATA:
        return limited;
    default:
        return false;
    }
}

static void check_error(const wk_error *err, bool limited, size_t n)
{
    CHECK(err->code != WK_OK);
    CHECK(frame_error_code(err->code, limited));
    CHECK(err->category == WK_CAT_PEER_PROTOCOL);
    CHECK(err->has_offset && err->offset <= n);
}

/* ---------------------------------------------------------------------------------------------
 * Encoder round trip
 * ------------------------------------------------------------------------------------------- */
typedef struct prng {
    uint64_t s;
} prng;

static uint64_t next(prng *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t pick_view(prng *g)
{
    static const size_t v[8] = {0, 1, 3, 17, 4096, 65547, 70000, BIG_VIEW};
    return v[next(g) % 8];
}

/* Walks an encoded stream: the identifier once, then data chunks of at most 65536 bytes. When
 * `whole` (one final flush) every piece but the last holds exactly 65536 bytes. */
NO_COVERAGE
static void check_encoded(const uint8_t *w, size_t n, uint64_t plain_len, bool whole, uint8_t *tmp)
{
    if (plain_len == 0) {
        CHECK(n == 0);
        return;
    }
    CHECK(n >= WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN &&
          memcmp(w, WK_ETH_SNAPPY_FRAME_STREAM_ID, WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN) == 0);
    size_t pos = WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN;
    uint64_t total = 0;
    while (pos < n) {
        CHECK(n - pos >= 8);
        uint8_t type = w[pos];
        uint32_t len = le(w + pos + 1, 3);
        CHECK(type == 0x00 || type == 0x01);
        CHECK(len >= 4 && len <= MAX_BODY_UNCOMPRESSED && n - pos - 4 >= len);
        size_t piece;
        if (type == 0x00) {
            CHECK(snappy_uncompressed_length((const char *)w + pos + 8, len - 4, &piece) ==
                  SNAPPY_OK);
            CHECK(piece <= MAX_DATA);
            /* compressed only when it saves at least 1/8 */
            CHECK(len - 4 <= piece - piece / 8);
            size_t got = MAX_DATA;
            CHECK(snappy_uncompress((const char *)w + pos + 8, len - 4, (char *)tmp, &got) ==
                  SNAPPY_OK);
        } else {
            piece = len - 4;
        }
        CHECK(piece > 0); /* the encoder writes no empty chunks */
        total += piece;
        pos += 4 + len;
        if (whole && pos < n) CHECK(piece == MAX_DATA);
    }
    CHECK(total == plain_len);
}

typedef struct plan_step {
    size_t len;
    bool flush;
} plan_step;

static uint8_t *plain_buf, *enc_c, *tmp_buf;
static size_t plain_cap, enc_cap;
static wk_contract_eth_sink sink_a, sink_b;

/* Encodes plain[0..n) per the plan (the last step flushes) through the contract harness
 * (wk_contract_drive_flush, the eth adapter): the plan's pushes as the run's cuts, its flushes
 * before the last as the adapter's flush points, output views of `view` bytes (1: behind 0-byte
 * probes), the last piece written by the harness's flush. Every call is checked (views, progress,
 * NEED_INPUT / NEED_OUTPUT only when due, nothing written past out->pos), the encoder refuses
 * nothing and takes every byte; with `check` the adapter decodes the stream: after each flush's
 * bytes exactly the plaintext so far, the whole to the plaintext with a clean finish. The stream
 * is left in *sink; returns its length. */
NO_COVERAGE
static size_t encode_plan(wk_eth_snappy_frame_encoder *e, const uint8_t *plain, size_t n,
                          const plan_step *plan, size_t steps, size_t view,
                          wk_contract_eth_sink *sink, wk_eth_snappy_frame_decoder *check)
{
    size_t cuts[MAX_PLAN];
    uint64_t flush_at[MAX_PLAN];
    size_t ncuts = 0, nflush = 0, off = 0;
    for (size_t s = 0; s + 1 < steps; s++) {
        off += plan[s].len;
        if (off < n) cuts[ncuts++] = off; /* empty pushes included */
        if (plan[s].flush) flush_at[nflush++] = off;
    }
    wk_contract_eth_frame_enc f;
    wk_contract_eth_frame_enc_setup(&f, NULL);
    f.e = e;
    f.keep_encoder = true;
    f.sink = sink;
    f.check = check;
    f.flush_at = flush_at;
    f.nflush = nflush;
    wk_contract_plan p = {0, cuts, ncuts, view, view == 1, true};
    char why[320];
    if (!wk_contract_drive_flush(&wk_contract_eth_frame_enc_ops, wk_contract_eth_frame_enc_flush,
                                 &f, NULL, plain, n, &p, NULL, why, sizeof why)) {
        fprintf(stderr, "encoder (%zu pushes, %zu flushes, views of %zu): %s\n", ncuts + 1, nflush,
                view, why);
        CHECK(0);
    }
    CHECK(sink->n < enc_cap); /* the stream never needs more than the bound */
    return sink->n;
}


static void ensure(size_t plain_len)
{
    if (!tmp_buf) {
        tmp_buf = malloc(MAX_DATA);
        CHECK(tmp_buf);
    }
    if (plain_len + 1 > plain_cap) {
        free(plain_buf);
        plain_cap = plain_len + 1;
        plain_buf = malloc(plain_cap);
        CHECK(plain_buf);
    }
    /* the largest stream a plan can give: every chunk is a full piece or ends at a flush, and
     * no chunk is larger than its plaintext plus its 8 header bytes */
    size_t need =
        WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN + plain_len + 8 * (plain_len / MAX_DATA + MAX_PLAN + 2);
    if (need > enc_cap) {
        free(enc_c);
        enc_cap = need;
        enc_c = malloc(enc_cap);
        CHECK(enc_c);
    }
}

/* The decoders and the encoder live across inputs: created once through counting allocators and
 * reset for every input (creating ~140 KiB objects per input made the kernel's page clearing the
 * largest cost of an execution). Their allocation counts must never move after create. */
static wk_alloc_counter dec_ctr, rt_ctr, enc_ctr;
static wk_allocator dec_alloc, rt_alloc, enc_alloc;
static wk_eth_snappy_frame_decoder *dec, *rt_dec;
static wk_eth_snappy_frame_encoder *rt_enc;
static uint64_t dec_count, rt_count, enc_count;

static void ensure_objects(void)
{
    if (dec) return;
    wk_error err;
    dec_alloc = wk_counting_allocator(&dec_ctr);
    rt_alloc = wk_counting_allocator(&rt_ctr);
    enc_alloc = wk_counting_allocator(&enc_ctr);
    dec = wk_eth_snappy_frame_decoder_create(&(wk_eth_snappy_frame_params){&dec_alloc}, &err);
    rt_dec = wk_eth_snappy_frame_decoder_create(&(wk_eth_snappy_frame_params){&rt_alloc}, &err);
    rt_enc = wk_eth_snappy_frame_encoder_create(&(wk_eth_snappy_frame_params){&enc_alloc}, &err);
    CHECK(dec && rt_dec && rt_enc);
    CHECK(wk_eth_snappy_frame_decoder_produced(dec) == 0 && wk_eth_snappy_frame_decoder_consumed(dec) == 0);
    dec_count = dec_ctr.count;
    rt_count = rt_ctr.count;
    enc_count = enc_ctr.count;
    CHECK(dec_ctr.peak < MEM_MAX && rt_ctr.peak < MEM_MAX && enc_ctr.peak < MEM_MAX);
}

static void round_trip(const uint8_t *wire, size_t n, size_t rep, uint64_t seed)
{
    size_t plen = n * rep;
    ensure(plen);
    for (size_t k = 0; k < rep; k++) memcpy(plain_buf + k * n, wire, n);
    prng g = {seed};

    /* the plan: pushes (some empty), flushes at random, a final flush */
    plan_step plan[MAX_PLAN];
    size_t steps = 0, left = plen;
    while (steps < MAX_PLAN - 1 && left > 0) {
        uint64_t r = next(&g);
        size_t len;
        switch (r % 4) {
        case 0: len = 0; break;
        case 1: len = (size_t)(r >> 8) % 17; break;
        case 2: len = (size_t)(r >> 8) % 70000; break;
        default: len = left; break;
        }
        if (len > left) len = left;
        plan[steps].len = len;
        plan[steps].flush = (r >> 40) % 3 == 0;
        steps++;
        left -= len;
    }
    plan[steps].len = left;
    plan[steps].flush = true;
    steps++;

    wk_error err;
    wk_eth_snappy_frame_encoder *e = rt_enc;
    wk_eth_snappy_frame_decoder *d = rt_dec;
    wk_eth_snappy_frame_encoder_reset(e);
    wk_eth_snappy_frame_decoder_reset(d);

    /* one view size per run; the small ones (1 behind 0-byte probes, 3, 17) on plaintexts of up
     * to 2 pieces only: a call per 1-3 output bytes over a 300 KiB stream cut the target's
     * throughput 4x, and more pieces add no chunk boundary the first two do not have */
    size_t view = pick_view(&g);
    if (view == 0) view = 1;
    if (view < 4096 && plen > 2 * MAX_DATA) view = 4096;
    size_t la = encode_plan(e, plain_buf, plen, plan, steps, view, &sink_a, d);
    bool single_flush = true;
    for (size_t s = 0; s + 1 < steps; s++)
        if (plan[s].flush) single_flush = false;
    check_encoded(sink_a.p, la, plen, single_flush, tmp_buf);

    /* the same plan, roomy views, after reset (the adapter resets it): the same bytes */
    size_t lb = encode_plan(e, plain_buf, plen, plan, steps, BIG_VIEW, &sink_b, NULL);
    CHECK(lb == la && (la == 0 || memcmp(sink_a.p, sink_b.p, la) == 0));

    /* one push, one flush: equals the one-shot form */
    plan_step one = {plen, true};
    size_t lc = encode_plan(e, plain_buf, plen, &one, 1, BIG_VIEW, &sink_b, NULL);
    uint64_t bound = wk_eth_snappy_frame_max_size(plen);
    CHECK(bound == (plen ? 10 + plen + 8 * ((plen + MAX_DATA - 1) / MAX_DATA) : 0));
    CHECK(lc <= bound);
    check_encoded(sink_b.p, lc, plen, true, tmp_buf);
    size_t ld = 0;
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(plain_buf, plen, VIEW(enc_c, (size_t)bound), &err), &ld, &err) == WK_OK);
    CHECK(ld == lc && (lc == 0 || memcmp(sink_b.p, enc_c, lc) == 0));
    if (bound > 0)
        CHECK(enc_out(wk_eth_snappy_frame_encode_all(plain_buf, plen, VIEW(enc_c, (size_t)bound - 1), &err), &ld, &err) ==
              ENC_NO_ROOM);

    CHECK(enc_ctr.count == enc_count && enc_ctr.peak < MEM_MAX);
    CHECK(rt_ctr.count == rt_count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eth_fuzz_kernel_for(data, size); /* WK_SNAPPY_KERNEL forces one */
    if (size < 2) return 0;
    size_t push = pushes[data[0] & 7], cap = views[(data[0] >> 3) & 7];
    unsigned lm = data[0] >> 6;
    bool limited = lm == 1 || lm == 2;
    uint64_t limit = limited ? out_limits[data[1] & 15] : UINT64_MAX;
    uint32_t max_skip = skip_limits[(data[1] >> 4) & 3];
    bool set_skip = ((data[1] >> 4) & 3) != 0;
    size_t rep = repeats[data[1] >> 6];
    const uint8_t *wire = data + 2;
    size_t n = size - 2;
    ensure(0);

    ensure_objects();
    wk_eth_snappy_frame_decoder *d = dec;
    wk_eth_snappy_frame_decoder_reset(d);
    /* both setters every time: what the previous input set survives reset */
    if (!set_skip) max_skip = WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE;
    wk_eth_snappy_frame_decoder_set_max_skippable(d, max_skip);
    wk_eth_snappy_frame_decoder_set_output_limit(d, limit);
    CHECK(wk_eth_snappy_frame_decoder_produced(d) == 0 && wk_eth_snappy_frame_decoder_consumed(d) == 0);

    /* through the contract harness (fuzz_drive.h): pushes and views as chosen, and whole; every
     * call checked (views, progress, sticky errors, nothing past out->pos), both runs the same */
    wk_contract_eth_frame fr;
    wk_contract_eth_frame_setup(&fr, NULL);
    fr.d = d;
    fr.keep_settings = true;
    fr.output_limit = limit;
    wk_contract_outcome w = fuzz_drive(&wk_contract_eth_frame_ops, &fr, NULL, wire, n, push, cap);
    CHECK(dec_ctr.count == dec_count && dec_ctr.peak < MEM_MAX);
    if (limited) CHECK(w.produced <= limit);
    if (w.verdict == WK_ERROR) {
        check_error(&w.error, limited, n);
        if (w.error.code == WK_ERR_FRAME_TRUNCATED) CHECK(w.error.offset == n); /* at _finish */
    }
    if (w.done_by_step) {
        /* complete: nothing more is taken, also not on a later call */
        static uint8_t b[16];
        wk_in in = {wire + w.consumed, n - w.consumed, 0};
        wk_out out = {b, sizeof b, 0};
        wk_error err;
        CHECK(wk_eth_snappy_frame_decode(d, &in, &out, &err) == WK_DONE);
        CHECK(in.pos == 0 && out.pos == 0 && wk_eth_snappy_frame_decoder_consumed(d) == w.consumed);
        CHECK(frame_finish(d, &err) == WK_OK);
    }
    /* and the reference agrees */
    ref_outcome ref = ref_decode(wire, n, limited, limit, max_skip, tmp_buf);
    CHECK(ref.ok == (w.verdict == WK_DONE));
    if (ref.ok) {
        CHECK(ref.done == w.done_by_step && ref.consumed == w.consumed);
        CHECK(ref.produced == w.produced && ref.hash == w.output.h);
    }

    round_trip(wire, n, rep, (uint64_t)data[0] << 8 ^ data[1] ^ (uint64_t)n << 16);
    return 0;
}
