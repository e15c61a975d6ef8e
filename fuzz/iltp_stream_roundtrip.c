/* libFuzzer target: Lace-065 stream round trip (wk_iltp_encoder_encode, then wk_iltp_decoder_decode), for both
 * deflate12c encoders and decoders.
 *
 * Input: 3 header bytes, then the payload.
 *   byte 0    bits 0-1 token (0 identity, 1 deflate12c with zlib, 2 zstd20c, 3 deflate12c with
 *             ISA-L), bits 2-3 level (deflate12c 6/1/4/9, zstd20c 3/1/2/4: small levels, to stay
 *             fast), bits 4-7 seed
 *   byte 1    seed; bit 0 also picks the deflate12c decoder that follows the stream batch by
 *             batch (0: the same backend as the encoder, 1: the other one)
 *   byte 2    bits 0-3 largest batch (2^k bytes), bits 4-7 largest output view (2^k - 1 bytes;
 *             k = 0: roomy 64 KiB views)
 * A PRNG seeded from the header splits the payload into batches (some empty), each batch into
 * pushes (CONTINUE ... FLUSH), picks an output view capacity per call (0 included), and ends the
 * stream either with an empty END after the last FLUSH or with END on an open batch.
 *
 * Checks: the encoder never fails; NEED_OUTPUT only with a full view; DONE only with the input
 * consumed; framing: identity is the payload itself, deflate12c ends 03 00 and every non-empty
 * flush ends 00 00 ff ff, zstd20c starts 00 50 and ends 01 00 00. Then the decoders, on the
 * contract harness (fuzz_drive.h, adapter wk_contract_iltp_decoder_ops, every call checked):
 * the decoder of the plan's backend reads the stream in pushes that end at the flushes, and after
 * each flush has delivered exactly the payload so far (the flush makes the batch decodable); the
 * whole stream decodes to the payload, the end mark is seen at the very end and finish is clean.
 * deflate12c: the other backend's decoder reads it too (fuzz_drive: the whole stream and in
 * pushes of 1..4096 bytes) and must give the payload. Then the encoder is reset and the same plan
 * encoded again with roomy output views: the bytes must be identical (output view sizes do not
 * change the encoding; reset starts afresh).
 *
 * Encoders and decoders are created once per token, backend and level and reset for every input
 * (what wk_iltp_*_reset promises: a fresh logical session), which keeps executions cheap. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"
#include "wk_contract_iltp.h"

#define VIEW_MAX 65536
#define CALLS_MAX 50000000u /* a step loop that long is a livelock */

#include "wk_bytes.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One encoder call sequence for one push: repeats the op while the encoder needs output. */
static wk_result push(wk_iltp_encoder *e, buf *wire, wk_in *in, wk_iltp_op op, uint64_t *rng,
                      size_t view_max, uint8_t *view)
{
    wk_error err;
    unsigned calls = 0;
    for (;;) {
        size_t cap = view_max ? (size_t)(rng_next(rng) % (view_max + 1)) : VIEW_MAX;
        wk_out out = {view, cap, 0};
        size_t in0 = in->pos;
        wk_result r = wk_iltp_encoder_encode(e, in, &out, op, &err);
        CHECK(r != WK_ERROR);
        CHECK(out.pos <= cap && in->pos >= in0 && in->pos <= in->size);
        put(wire, view, out.pos);
        CHECK(++calls < CALLS_MAX);
        if (r == WK_NEED_OUTPUT) {
            CHECK(out.pos == cap);
            continue;
        }
        if (r == WK_NEED_INPUT) {
            CHECK(op == WK_ILTP_CONTINUE && in->pos == in->size);
            return r;
        }
        CHECK(r == WK_DONE && op != WK_ILTP_CONTINUE && in->pos == in->size);
        return r;
    }
}

/* The plan: a list of (push length, op). */
typedef struct step {
    size_t len;
    wk_iltp_op op;
} step;

static bool ends_with(const buf *b, const uint8_t *s, size_t n)
{
    return b->n >= n && memcmp(b->p + b->n - n, s, n) == 0;
}

/* Encodes the plan; flush_wire[k] / flush_payload[k] (nsteps entries each, may be NULL) get the
 * wire and payload offsets after every FLUSH (*nflush of them). */
static buf encode_plan(wk_iltp_encoder *e, const step *plan, size_t nsteps, const uint8_t *payload,
                       uint64_t *rng, size_t view_max, uint8_t *view, size_t *flush_wire,
                       size_t *flush_payload, size_t *nflush)
{
    buf wire = {0};
    size_t off = 0, nf = 0;
    bool batch_open = false;
    for (size_t k = 0; k < nsteps; k++) {
        wk_in in = {payload + off, plan[k].len, 0};
        size_t before = wire.n;
        push(e, &wire, &in, plan[k].op, rng, view_max, view);
        off += plan[k].len;
        if (plan[k].len) batch_open = true;
        if (plan[k].op == WK_ILTP_FLUSH) {
            if (wk_iltp_encoder_encoding(e) == WK_ILTP_DEFLATE12C && batch_open) {
                static const uint8_t sync[4] = {0x00, 0x00, 0xff, 0xff};
                CHECK(wire.n > before && ends_with(&wire, sync, 4));
            }
            if (flush_wire) {
                flush_wire[nf] = wire.n;
                flush_payload[nf] = off;
                nf++;
            }
        }
        if (plan[k].op != WK_ILTP_CONTINUE) batch_open = false;
    }
    if (nflush) *nflush = nf;
    return wire;
}

/* The decoder step under the harness, with one more check: whenever it has consumed the stream up
 * to the end of a flush (it then asks for input), it has delivered exactly the payload up to it. */
static const size_t *fl_wire, *fl_payload; /* ascending */
static size_t fl_n, fl_k;                   /* fl_k: the first flush not behind the decoder */

static wk_result flush_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_result r = wk_contract_iltp_decoder_ops.step(obj, in, out, err);
    const wk_iltp_decoder *d = ((wk_contract_iltp *)obj)->dec;
    if (r == WK_NEED_INPUT) {
        uint64_t c = wk_iltp_decoder_consumed(d);
        while (fl_k < fl_n && fl_wire[fl_k] < c) fl_k++;
        for (size_t k = fl_k; k < fl_n && fl_wire[k] == c; k++)
            CHECK(wk_iltp_decoder_produced(d) == fl_payload[k]);
    }
    return r;
}

/* Checks a decoder run's outcome: the payload, all of the stream, the end mark at its end. */
static void decoded_payload(const wk_contract_outcome *o, wk_iltp_encoding enc, const buf *w,
                            const uint8_t *payload, size_t n)
{
    wk_contract_hash h;
    wk_contract_hash_init(&h);
    wk_contract_hash_add(&h, payload, n);
    CHECK(o->verdict == WK_DONE && o->produced == n && o->output.h == h.h && o->output.n == n);
    CHECK(o->consumed == w->n && o->done_by_step == (enc != WK_ILTP_IDENTITY));
}

/* One encoder per token, backend and level, one decoder adapter per token and backend (reused:
 * reset for every run), kept for the whole run (freed at exit so that leak checking stays quiet). */
static wk_iltp_encoder *encoders[3][3][20];
static wk_contract_iltp adapters[3][3];

static void free_all(void)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            for (int k = 0; k < 20; k++) wk_iltp_encoder_destroy(encoders[i][j][k]);
            wk_contract_iltp_release(&adapters[i][j]);
        }
}

static void once(void)
{
    static bool done;
    if (!done) {
        atexit(free_all);
        done = true;
    }
}

static wk_iltp_encoder *encoder_for(wk_iltp_encoding enc, wk_iltp_backend be, int level)
{
    once();
    wk_iltp_encoder **slot = &encoders[enc][be][level];
    if (!*slot) {
        wk_error err;
        wk_iltp_encoder_params prm = {level, NULL, be};
        *slot = wk_iltp_encoder_create(enc, &prm, &err);
        CHECK(*slot != NULL);
    }
    return *slot;
}

static wk_contract_iltp *adapter_for(wk_iltp_encoding enc, wk_iltp_backend be)
{
    once();
    wk_contract_iltp *m = &adapters[enc][be];
    if (!m->dec && !m->reuse) {
        wk_contract_iltp_setup(m, enc, be, false);
        m->reuse = true;
    }
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    static const int dlevels[4] = {0, 1, 4, 9}, zlevels[4] = {0, 1, 2, 4};
    unsigned t = data[0] & 3, li = (data[0] >> 2) & 3;
    wk_iltp_encoding enc = t == 0 ? WK_ILTP_IDENTITY : t == 2 ? WK_ILTP_ZSTD20C : WK_ILTP_DEFLATE12C;
    int level = enc == WK_ILTP_ZSTD20C ? zlevels[li] : enc == WK_ILTP_DEFLATE12C ? dlevels[li] : 0;
    uint64_t rng = ((uint64_t)data[0] << 16) | ((uint64_t)data[1] << 8) | data[2];
    size_t batch_max = (size_t)1 << (data[2] & 15);
    size_t view_max = ((size_t)1 << (data[2] >> 4)) - 1;
    const uint8_t *payload = data + 3;
    size_t n = size - 3;

    /* plan */
    size_t nsteps = 0, cap_steps = 16;
    step *plan = malloc(cap_steps * sizeof *plan);
    CHECK(plan != NULL);
    size_t off = 0;
    bool end_open = rng_next(&rng) % 4 == 0; /* END on an open batch instead of FLUSH, END */
    while (off < n || nsteps == 0) {
        size_t blen = (size_t)(rng_next(&rng) % (batch_max + 1));
        if (blen > n - off) blen = n - off;
        size_t b_off = 0;
        do { /* pushes of one batch */
            size_t plen = blen - b_off;
            if (plen > 1 && rng_next(&rng) % 2) plen = 1 + (size_t)(rng_next(&rng) % plen);
            if (nsteps + 2 > cap_steps) {
                cap_steps *= 2;
                step *q = realloc(plan, cap_steps * sizeof *plan);
                CHECK(q != NULL);
                plan = q;
            }
            b_off += plen;
            bool last = b_off == blen;
            plan[nsteps].len = plen;
            plan[nsteps].op = last ? WK_ILTP_FLUSH : WK_ILTP_CONTINUE;
            nsteps++;
        } while (b_off < blen);
        off += blen;
    }
    if (end_open && plan[nsteps - 1].len > 0) {
        plan[nsteps - 1].op = WK_ILTP_END;
    } else {
        plan[nsteps].len = 0;
        plan[nsteps].op = WK_ILTP_END;
        nsteps++;
    }

    wk_error err;
    wk_iltp_backend ebe = t == 3 ? WK_ILTP_BACKEND_ISAL : t == 1 ? WK_ILTP_BACKEND_ZLIB : WK_ILTP_BACKEND_DEFAULT;
    wk_iltp_backend other = ebe == WK_ILTP_BACKEND_ISAL ? WK_ILTP_BACKEND_ZLIB : WK_ILTP_BACKEND_ISAL;
    wk_iltp_backend dbe = enc == WK_ILTP_DEFLATE12C && (data[1] & 1) ? other : ebe;
    wk_iltp_encoder *e = encoder_for(enc, ebe, level);
    CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK);
    uint8_t *view = malloc(VIEW_MAX);
    size_t *fw = malloc((nsteps + 1) * sizeof *fw), *fp = malloc((nsteps + 1) * sizeof *fp), nf = 0;
    CHECK(view && fw && fp);

    buf w1 = encode_plan(e, plan, nsteps, payload, &rng, view_max, view, fw, fp, &nf);

    /* the plan's decoder, in pushes that end at the flushes */
    {
        size_t *cuts = malloc((nf + 1) * sizeof *cuts), nc = 0;
        CHECK(cuts != NULL);
        for (size_t k = 0; k < nf; k++)
            if (fw[k] > 0 && fw[k] < w1.n && (nc == 0 || cuts[nc - 1] < fw[k])) cuts[nc++] = fw[k];
        wk_contract_ops ops = wk_contract_iltp_decoder_ops;
        ops.step = flush_step;
        fl_wire = fw;
        fl_payload = fp;
        fl_n = nf;
        fl_k = 0;
        wk_contract_plan p = {0, cuts, nc, 0, false, true};
        wk_contract_outcome o;
        char why[320];
        static const uint8_t none[1] = {0};
        if (!wk_contract_drive(&ops, adapter_for(enc, dbe), NULL, w1.p ? w1.p : none, w1.n, &p, &o, why,
                               sizeof why)) {
            fprintf(stderr, "the decoder in pushes ending at the flushes: %s\n", why);
            CHECK(0);
        }
        decoded_payload(&o, enc, &w1, payload, n);
        fl_n = 0;
        free(cuts);
    }

    /* deflate12c: the other decoder reads the stream */
    if (enc == WK_ILTP_DEFLATE12C) {
        wk_contract_iltp *m2 = adapter_for(enc, dbe == WK_ILTP_BACKEND_ISAL ? WK_ILTP_BACKEND_ZLIB : WK_ILTP_BACKEND_ISAL);
        static const uint8_t none[1] = {0};
        wk_contract_outcome o = fuzz_drive(&wk_contract_iltp_decoder_ops, m2, NULL, w1.p ? w1.p : none, w1.n,
                                           1 + (size_t)(rng_next(&rng) % 4096), 0);
        decoded_payload(&o, enc, &w1, payload, n);
    }

    /* framing */
    if (enc == WK_ILTP_IDENTITY) {
        CHECK(w1.n == n && (n == 0 || memcmp(w1.p, payload, n) == 0));
    } else if (enc == WK_ILTP_DEFLATE12C) {
        static const uint8_t mark[2] = {0x03, 0x00};
        CHECK(ends_with(&w1, mark, 2));
    } else {
        static const uint8_t head[2] = {0x00, 0x50}, mark[3] = {0x01, 0x00, 0x00};
        CHECK(w1.n >= 5 && memcmp(w1.p, head, 2) == 0 && ends_with(&w1, mark, 3));
    }

    /* after END: only an empty END is accepted, anything else is a state error */
    {
        uint8_t one[1] = {0};
        wk_in in = {one, 1, 0};
        wk_out out = {view, VIEW_MAX, 0};
        CHECK(wk_iltp_encoder_encode(e, NULL, &out, WK_ILTP_END, &err) == WK_DONE && out.pos == 0);
        CHECK(wk_iltp_encoder_encode(e, &in, &out, WK_ILTP_CONTINUE, &err) == WK_ERROR);
        CHECK(err.code == WK_ERR_STATE && in.pos == 0 && out.pos == 0);
    }

    /* same plan after reset, roomy views: identical bytes */
    CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK);
    buf w2 = encode_plan(e, plan, nsteps, payload, &rng, 0, view, NULL, NULL, NULL);
    CHECK(w1.n == w2.n && (w1.n == 0 || memcmp(w1.p, w2.p, w1.n) == 0));

    free(w1.p);
    free(w2.p);
    free(view);
    free(fw);
    free(fp);
    free(plan);
    return 0;
}
