/* The ILTP objects under a failing allocator (tests/contract/wk_contract_alloc.h, zlib's
 * test/infcover.c model): every allocation call of a scenario fails in turn, alone and sticky,
 * and each run must end WK_OK or WK_ERR_NOMEM with nothing left allocated. Scenarios: the stream
 * encoder and decoder of each token and deflate12c backend, the item decoder (Blobs whole and
 * streamed), the writer and the reader over two sessions. The session pair's sweep is in
 * test_session.c (it needs that test's store and pipes). */
#include "wk_test.h"
#include "contract/wk_contract_alloc.h"
#include <wirekit/iltp.h>

typedef struct coder { wk_iltp_encoding enc; wk_iltp_backend be; const char *name; } coder;
static const coder CODERS[4] = {{WK_ILTP_IDENTITY, WK_ILTP_BACKEND_DEFAULT, "identity"},
                                {WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ZLIB, "deflate12c/zlib"},
                                {WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ISAL, "deflate12c/isal"},
                                {WK_ILTP_ZSTD20C, WK_ILTP_BACKEND_DEFAULT, "zstd20c"}};

/* Plain items: a preface-free item stream (fact blocks and a Blob record), and its wires. */
static uint8_t items[4096];
static size_t items_n;
static uint8_t wire[4][8192];
static size_t wire_n[4];

/* A scenario's result: WK_OK, or the code of the first failure (its error in *err). */
static wk_code failed(wk_error *err, const wk_error *e)
{
    if (err) *err = *e;
    return e->code;
}

/* ---- the stream encoder: create, two batches, the end mark, destroy ------------------------ */
static wk_code sc_encoder(void *ctx, const wk_allocator *a, wk_error *err)
{
    const coder *c = ctx;
    wk_iltp_encoder_params p = {0, a, c->be};
    wk_error e;
    wk_iltp_encoder *en = wk_iltp_encoder_create(c->enc, &p, &e);
    if (!en) return failed(err, &e);
    uint8_t out[8192];
    wk_out o = {out, sizeof out, 0};
    wk_code rc = WK_OK;
    for (int b = 0; b < 2 && rc == WK_OK; b++) {
        wk_in in = {items, items_n, 0};
        if (wk_iltp_encoder_encode(en, &in, &o, b ? WK_ILTP_END : WK_ILTP_FLUSH, &e) != WK_DONE) rc = failed(err, &e);
    }
    if (rc == WK_OK && wk_iltp_encoder_reset(en, &e) != WK_OK) rc = failed(err, &e);
    wk_iltp_encoder_destroy(en);
    return rc;
}

/* ---- the stream decoder: create, the whole stream, finish, reset, destroy ------------------- */
static wk_code sc_decoder(void *ctx, const wk_allocator *a, wk_error *err)
{
    const coder *c = ctx;
    int ci = (int)(c - CODERS);
    wk_iltp_decoder_params p = {a, c->be};
    wk_error e;
    wk_iltp_decoder *d = wk_iltp_decoder_create(c->enc, &p, &e);
    if (!d) return failed(err, &e);
    static uint8_t out[16384];
    wk_in in = {wire[ci], wire_n[ci], 0};
    wk_code rc = WK_OK;
    wk_result r;
    do {
        wk_out o = {out, sizeof out, 0};
        r = wk_iltp_decoder_decode(d, &in, &o, &e);
    } while (r == WK_NEED_OUTPUT);
    if (r == WK_ERROR || wk_iltp_decoder_finish(d, &in, &e) != WK_DONE) rc = failed(err, &e);
    if (rc == WK_OK && wk_iltp_decoder_reset(d, &e) != WK_OK) rc = failed(err, &e);
    wk_iltp_decoder_destroy(d);
    return rc;
}

/* ---- the item decoder over the plain items, in pushes of 100 bytes ---------------------------- */
static wk_code sc_items(void *ctx, const wk_allocator *a, wk_error *err)
{
    bool streamed = ctx != NULL;
    wk_iltp_item_decoder_params p = {WK_ILTP_FORM_ANY, 0, a};
    wk_error e;
    wk_iltp_item_decoder *d = wk_iltp_item_decoder_create(&p, &e);
    if (!d) return failed(err, &e);
    wk_iltp_item_decoder_stream_blobs(d, streamed);
    wk_code rc = WK_OK;
    for (size_t pos = 0; pos < items_n && rc == WK_OK; pos += 100) {
        wk_in in = {items, pos + 100 < items_n ? pos + 100 : items_n, pos};
        wk_result r;
        while ((r = wk_iltp_item_decoder_decode(d, &in, NULL, &e)) == WK_EVENT) {}
        if (r == WK_ERROR) rc = failed(err, &e);
    }
    if (rc == WK_OK && wk_iltp_item_decoder_finish(d, NULL, &e) != WK_DONE) rc = failed(err, &e);
    wk_iltp_item_decoder_destroy(d);
    return rc;
}

/* ---- the writer: two sessions of the token's encoding, a batch each, the end mark ------------ */
static const uint8_t NONCE[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static wk_code write_wire(const coder *c, const wk_allocator *a, uint8_t *dst, size_t cap, size_t *len,
                          wk_error *err)
{
    wk_iltp_stack_params sp = {WK_ILTP_FORM_1_0, 0, 0, a};
    wk_error e;
    wk_iltp_writer *w = wk_iltp_writer_create(&sp, &e);
    if (!w) return failed(err, &e);
    wk_out o = {dst, cap, 0};
    wk_code rc = WK_OK;
    for (int s = 0; s < 2 && rc == WK_OK; s++) {
        wk_in in = {items, items_n, 0};
        if (wk_iltp_writer_begin_session(w, NONCE, NULL, NULL, &o, &e) != WK_DONE ||
            wk_iltp_writer_select(w, c->enc, &e) != WK_OK || wk_iltp_writer_write(w, &in, &o, &e) != WK_DONE)
            rc = failed(err, &e);
    }
    if (rc == WK_OK && wk_iltp_writer_end(w, &o, &e) != WK_DONE) rc = failed(err, &e);
    wk_iltp_writer_destroy(w);
    *len = o.pos;
    return rc;
}

static wk_code sc_writer(void *ctx, const wk_allocator *a, wk_error *err)
{
    static uint8_t dst[16384];
    size_t len;
    return write_wire(ctx, a, dst, sizeof dst, &len, err);
}

/* ---- the reader: the writer's two-session wire, begin at each preface, finish ----------------- */
static uint8_t stack_wire[4][16384];
static size_t stack_n[4];

static wk_code sc_reader(void *ctx, const wk_allocator *a, wk_error *err)
{
    const coder *c = ctx;
    int ci = (int)(c - CODERS);
    wk_iltp_stack_params sp = {WK_ILTP_FORM_1_0, 0, 0, a};
    wk_error e;
    wk_iltp_reader *r = wk_iltp_reader_create(&sp, &e);
    if (!r) return failed(err, &e);
    wk_iltp_reader_stream_blobs(r, ci == 3);
    wk_in in = {stack_wire[ci], stack_n[ci], 0};
    wk_code rc = WK_OK;
    wk_result res;
    while ((res = wk_iltp_reader_read(r, &in, NULL, &e)) == WK_EVENT) {
        const wk_iltp_item *it = wk_iltp_reader_item(r);
        if (it && it->kind == WK_ILTP_ITEM_PREFACE && wk_iltp_reader_begin(r, c->enc, &e) != WK_OK) {
            res = WK_ERROR;
            break;
        }
    }
    if (res == WK_ERROR || wk_iltp_reader_finish(r, &in, &e) != WK_DONE) rc = failed(err, &e);
    wk_iltp_reader_destroy(r);
    return rc;
}

static void setup(void)
{
    static const char facts[] = "Advertised('x')\nRoundComplete()\n\n\n";
    memcpy(items, facts, sizeof facts - 1);
    items_n = sizeof facts - 1;
    uint8_t data[1500];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)("lace knot thread "[i % 17]);
    wk_out o = {items + items_n, sizeof items - items_n, 0};
    wk_error e;
    REQUIRE(wk_iltp_blob_encode(data, sizeof data, &o, &e) == WK_DONE);
    items_n += o.pos;
    for (int ci = 0; ci < 4; ci++) {
        const coder *c = &CODERS[ci];
        wk_iltp_encoder_params p = {0, NULL, c->be};
        wk_iltp_encoder *en = wk_iltp_encoder_create(c->enc, &p, &e);
        REQUIRE(en);
        wk_in in = {items, items_n, 0};
        wk_out w = {wire[ci], sizeof wire[ci], 0};
        REQUIRE(wk_iltp_encoder_encode(en, &in, &w, c->enc == WK_ILTP_IDENTITY ? WK_ILTP_FLUSH : WK_ILTP_END, &e) ==
                WK_DONE);
        wire_n[ci] = w.pos;
        wk_iltp_encoder_destroy(en);
        REQUIRE(write_wire(c, NULL, stack_wire[ci], sizeof stack_wire[ci], &stack_n[ci], &e) == WK_OK);
    }
}

/* The allocation calls a scenario makes with no failure (each sweep fails each of them in turn):
 * every scenario allocates through the allocator it is given. */
static uint64_t calls_of(wk_contract_alloc_scenario fn, void *ctx)
{
    wk_contract_alloc a;
    wk_contract_alloc_init(&a, 0, false);
    wk_allocator al = wk_contract_alloc_allocator(&a);
    wk_error e;
    CHECK(fn(ctx, &al, &e) == WK_OK && a.live_blocks == 0);
    return a.calls;
}

#define SWEEP(name, fn, ctx)                                                                       \
    do {                                                                                           \
        uint64_t n_ = calls_of((fn), (ctx));                                                       \
        CHECKF(n_ > 0 && wk_contract_alloc_sweep((name), (fn), (ctx)) == 0, "%s (%llu calls)", (name), \
               (unsigned long long)n_);                                                            \
        printf("%s: %llu allocation calls, each refused alone and sticky\n", (name), (unsigned long long)n_); \
    } while (0)

int main(void)
{
    setup();
    for (int ci = 0; ci < 4; ci++) {
        char name[64];
        snprintf(name, sizeof name, "iltp encoder %s", CODERS[ci].name);
        SWEEP(name, sc_encoder, (void *)&CODERS[ci]);
        snprintf(name, sizeof name, "iltp decoder %s", CODERS[ci].name);
        SWEEP(name, sc_decoder, (void *)&CODERS[ci]);
        if (CODERS[ci].be == WK_ILTP_BACKEND_ZLIB) continue; /* the writer and reader use the default */
        snprintf(name, sizeof name, "iltp writer %s", CODERS[ci].name);
        SWEEP(name, sc_writer, (void *)&CODERS[ci]);
        snprintf(name, sizeof name, "iltp reader %s", CODERS[ci].name);
        SWEEP(name, sc_reader, (void *)&CODERS[ci]);
    }
    SWEEP("iltp item decoder", sc_items, NULL);
    SWEEP("iltp item decoder, Blobs streamed", sc_items, (void *)1);
    return wk_test_summary("iltp_alloc");
}
