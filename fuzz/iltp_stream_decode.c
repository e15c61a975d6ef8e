/* libFuzzer target: Lace-065 stream decoder (wk_iltp_decoder_decode) on arbitrary encoded bytes.
 *
 * Input: byte 0 selects the run, the rest is the encoded stream (as given to a fresh decoder,
 * i.e. the bytes after the raw preface).
 *   bits 0-1  token: 0 identity, 1 deflate12c (ISA-L, the default backend), 2 zstd20c,
 *             3 deflate12c (zlib backend)
 *   bits 2-4  output view capacity (1 .. 4096 bytes)
 *   bits 5-7  push-chunk size (1 .. 65536 bytes)
 *
 * The decoder runs on the contract harness (fuzz_drive.h, adapter wk_contract_iltp_decoder_ops):
 * in pushes of the chosen size through views of the chosen size on a fresh decoder, then whole on
 * the same decoder after wk_iltp_decoder_reset. Every call is checked against the contract (views
 * and pushes only move forward inside their bounds, nothing written past out->pos, NEED_OUTPUT
 * only with a full view, NEED_INPUT only with the push consumed, progress, sticky PeerProtocol
 * errors with an offset inside the input, finish twice the same) and by the adapter
 * (wk_iltp_decoder_produced / _consumed equal what moved, a clean end only with the end mark).
 * The two runs must agree (a reset decoder behaves as a fresh one, and splitting the input or the
 * output does not change the outcome), except where a distance beyond the window is involved,
 * which the seed lets a decoder resolve or refuse depending on the view (comparable()). After the
 * end mark the bytes left are judged against the raw preface lead exactly as the header documents.
 * Decoder memory (counting allocator) is all allocated at creation and never grows: deflate12c
 * < 64 KiB with zlib, < 144 KiB with ISA-L, zstd20c < 1.5 MiB; every byte is freed. A zstd20c
 * decoder under a 512 KiB cap fails at creation with WK_ERR_NOMEM.
 * Decompression bombs: only the prefix of the input that decodes to about 8192 views (at most
 * 1 MiB) is driven, and views grow so that a run makes at most about 8192 calls
 * (iltp_stream_ref.h). */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"
#include "iltp_stream_ref.h"
#include "wk_contract_iltp.h"

#define DEFLATE_MEM_MAX ((size_t)64 * 1024)
#define ISAL_MEM_MAX ((size_t)144 * 1024)
#define ZSTD_MEM_MAX ((size_t)3 * 512 * 1024) /* 1.5 MiB */
#define TIGHT_LIMIT ((size_t)512 * 1024)
#define LOOSE_LIMIT ((size_t)4 * 1024 * 1024)
#define VIEWS_MAX 8192
#define BOUND ((uint64_t)1 << 20)

static const size_t caps[8] = {1, 2, 3, 7, 16, 61, 512, 4096};
static const size_t chunks[8] = {1, 2, 3, 5, 17, 64, 509, 65536};

static bool comparable(const wk_contract_outcome *x, const wk_contract_outcome *y)
{
    /* Known, reported: zlib accepts a back-reference beyond the 4 KiB window when its target lies
     * in the output written by the same inflate() call, so whether a distance above 4096 is
     * ILTP_ERR_DEFLATE_REFERENCE depends on the output view size (docs/fuzzing.md). */
    if (x->verdict == WK_ERROR && x->error.code == WK_ERR_ILTP_DEFLATE_REFERENCE) return false;
    if (y->verdict == WK_ERROR && y->error.code == WK_ERR_ILTP_DEFLATE_REFERENCE) return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t sel = data[0];
    unsigned t = sel & 3;
    wk_iltp_encoding enc = t == 0 ? WK_ILTP_IDENTITY : t == 2 ? WK_ILTP_ZSTD20C : WK_ILTP_DEFLATE12C;
    wk_iltp_backend be = t == 3 ? WK_ILTP_BACKEND_ZLIB : WK_ILTP_BACKEND_DEFAULT;
    size_t cap = caps[(sel >> 2) & 7], chunk = chunks[(sel >> 5) & 7];
    const uint8_t *wire = data + 1;
    size_t n = size - 1;
    wk_error err;

    if (enc == WK_ILTP_ZSTD20C) { /* under a tight cap creation fails cleanly */
        wk_alloc_counter tc;
        memset(&tc, 0, sizeof tc);
        tc.limit = TIGHT_LIMIT;
        wk_allocator ta = wk_counting_allocator(&tc);
        wk_iltp_decoder_params tp = {&ta, be};
        CHECK(wk_iltp_decoder_create(enc, &tp, &err) == NULL && err.code == WK_ERR_NOMEM);
        CHECK(tc.current == 0);
    }
    uint8_t *buf = malloc(65536);
    CHECK(buf != NULL);
    uint64_t bound = (uint64_t)cap * VIEWS_MAX, out_max;
    if (bound > BOUND) bound = BOUND;
    size_t m = iltp_prefix_within(enc, be, wire, n, bound, buf, &out_max);
    if (out_max / VIEWS_MAX > cap) cap = (size_t)(out_max / VIEWS_MAX) + 1;
    free(buf);

    wk_alloc_counter ctr;
    memset(&ctr, 0, sizeof ctr);
    ctr.limit = LOOSE_LIMIT;
    wk_allocator a = wk_counting_allocator(&ctr);
    wk_contract_iltp mc;
    wk_contract_iltp_setup(&mc, enc, be, false);
    mc.allocator = &a;
    mc.reuse = true; /* the second run on the first run's decoder, reset */
    wk_contract_outcome cut, whole;
    fuzz_drive_runs(&wk_contract_iltp_decoder_ops, &mc, NULL, wire, m, chunk, cap, &cut, &whole);
    size_t created = ctr.peak;
    wk_contract_iltp_release(&mc);
    CHECK(ctr.current == 0);
    if (comparable(&cut, &whole)) {
        char why[320];
        if (!wk_contract_same(&whole, &cut, why, sizeof why)) {
            fprintf(stderr, "pushes of %zu, views of %zu / whole after reset: %s\n", chunk, cap, why);
            CHECK(0);
        }
    }

    /* after the end mark: the rest must begin a raw preface (all of the lead, or a cut one) */
    if (whole.done_by_step) {
        CHECK(enc != WK_ILTP_IDENTITY);
        const uint8_t *rest = wire + whole.consumed;
        size_t rn = m - whole.consumed;
        if (!iltp_lead_prefix(rest, rn))
            CHECK(whole.verdict == WK_ERROR && whole.error.code == WK_ERR_ILTP_AFTER_END_MARK);
        else if (rn > 0 && rn < WK_ILTP_PREFACE_LEAD_LEN)
            CHECK(whole.verdict == WK_ERROR && whole.error.code == WK_ERR_ILTP_TRUNCATED);
        else
            CHECK(whole.verdict == WK_DONE);
    } else if (whole.verdict == WK_DONE) {
        CHECK(enc == WK_ILTP_IDENTITY); /* a clean end without the end mark */
    }

    /* memory: all of it allocated at creation (the runs did not grow it), within the bound */
    wk_iltp_decoder_params dp = {&a, be};
    ctr.peak = 0;
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, &dp, &err);
    CHECK(d != NULL && ctr.peak == created);
    if (enc == WK_ILTP_DEFLATE12C) CHECK(created < (t == 3 ? DEFLATE_MEM_MAX : ISAL_MEM_MAX));
    if (enc == WK_ILTP_ZSTD20C) CHECK(created < ZSTD_MEM_MAX);
    wk_iltp_decoder_destroy(d);
    CHECK(ctr.current == 0);
    return 0;
}
