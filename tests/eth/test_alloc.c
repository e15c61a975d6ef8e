/* eth_alloc: every eth object and allocating call under the failing allocator of the contract
 * (tests/contract/wk_contract_alloc.h, zlib's infcover model): each scenario runs once to count its
 * allocation calls, then once per call with that call failing, alone and sticky; every run must
 * end WK_OK or WK_ERR_NOMEM with nothing left allocated. (libsnappy's compressor and OpenSSL's
 * digest context allocate outside any wk_allocator: the documented exceptions in eth.h; raw
 * allocation in src/eth itself is ruled out by eth_no_raw_alloc.) */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_alloc.h"
#include "contract/wk_contract_eth.h"

static uint8_t plain[200000];
static uint8_t framed[220000];
static size_t framed_len;
static uint8_t chunk[240000];
static size_t chunk_len;
static uint8_t block[240000];
static size_t block_len;

/* A framing decoder over a 3-chunk stream, then reset and again. */
static wk_code s_frame_decoder(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    wk_eth_snappy_frame_params p = {a};
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(&p, err);
    if (!d) return err->code;
    /* two runs through the harness (the decoder reset between them), one push, roomy views */
    wk_contract_eth_frame f;
    wk_contract_eth_frame_setup(&f, a);
    f.d = d;
    f.keep_settings = true;
    wk_code c = WK_OK;
    for (int k = 0; k < 2 && c == WK_OK; k++) {
        wk_contract_outcome oc;
        if (!wk_contract_drive(&wk_contract_eth_frame_ops, &f, NULL, framed, framed_len, NULL, &oc,
                               NULL, 0) ||
            oc.verdict != WK_DONE || oc.done_by_step || oc.produced != sizeof plain) {
            c = oc.verdict == WK_ERROR && oc.error.code ? oc.error.code : WK_ERR_STATE;
            if (c == oc.error.code) *err = oc.error;
        }
    }
    wk_eth_snappy_frame_decoder_destroy(d);
    return c;
}

/* A framing encoder: the plaintext in two pushes, a flush, finish. */
static wk_code s_frame_encoder(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    wk_eth_snappy_frame_params p = {a};
    wk_eth_snappy_frame_encoder *e = wk_eth_snappy_frame_encoder_create(&p, err);
    if (!e) return err->code;
    static uint8_t out[sizeof framed];
    wk_out o = {out, sizeof out, 0};
    wk_in in1 = {plain, 70000, 0}, in2 = {plain, sizeof plain, 70000};
    wk_code c = WK_OK;
    if (wk_eth_snappy_frame_encode(e, &in1, &o, err) != WK_NEED_INPUT ||
        wk_eth_snappy_frame_encoder_flush(e, &in2, &o, err) != WK_DONE ||
        wk_eth_snappy_frame_encoder_finish(e, NULL, err) != WK_DONE || o.pos != framed_len)
        c = err->code ? err->code : WK_ERR_STATE;
    wk_eth_snappy_frame_encoder_destroy(e);
    return c;
}

/* A req/resp reader over one request. */
static wk_code s_rr_reader(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    wk_eth_rr_reader_params p = {.request = true, .allocator = a};
    wk_eth_rr_reader *r = wk_eth_rr_reader_create(&p, err);
    if (!r) return err->code;
    /* one run through the harness, one push, roomy views */
    wk_contract_eth_rr m;
    wk_contract_eth_rr_setup(&m, &p);
    m.r = r;
    m.borrowed = true;
    wk_contract_outcome oc;
    wk_code c = WK_OK;
    if (!wk_contract_drive(&wk_contract_eth_rr_ops, &m, NULL, chunk, chunk_len, NULL, &oc, NULL,
                           0) ||
        oc.verdict != WK_DONE || oc.events != 2 || oc.produced != sizeof plain) {
        c = oc.verdict == WK_ERROR && oc.error.code ? oc.error.code : WK_ERR_STATE;
        if (c == oc.error.code) *err = oc.error;
    }
    wk_eth_rr_reader_destroy(r);
    return c;
}

/* The allocating whole-message calls: decode_alloc and the gossip message-id. */
static wk_code s_whole(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    uint8_t *dec = NULL;
    size_t dec_len = 0;
    wk_code c = block_decode_alloc_code(block, block_len, WK_ETH_SNAPPY_BLOCK_MAX, a, &dec,
                                                 &dec_len, err);
    if (c != WK_OK) return c;
    bool ok = dec_len == sizeof plain;
    a->free(a->opaque, dec);
    if (!ok) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "decode_alloc length");
    uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
    bool valid = false;
    c = wk_eth_gossip_message_id(LOOK(block, block_len), "t", 1, NULL, a, id, &valid, err);
    if (c != WK_OK) return c;
    return valid ? WK_OK : wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "message-id invalid");
}

static void test_all(void)
{
    for (size_t i = 0; i < sizeof plain; i++) plain[i] = (uint8_t)(i % 251 < 120 ? 'a' + i % 7 : i * 31);
    wk_error err;
    wk_out o = {framed, sizeof framed, 0};
    REQUIRE(wk_eth_snappy_frame_encode_all(plain, sizeof plain, &o, &err) == WK_DONE);
    framed_len = o.pos;
    o = (wk_out){chunk, sizeof chunk, 0};
    REQUIRE(wk_eth_rr_encode(-1, NULL, plain, sizeof plain, &o, &err) == WK_DONE);
    chunk_len = o.pos;
    o = (wk_out){block, sizeof block, 0};
    REQUIRE(wk_eth_snappy_block_encode(plain, sizeof plain, &o, &err) == WK_DONE);
    block_len = o.pos;

    CHECK(wk_contract_alloc_sweep("wk_eth_snappy_frame_decoder", s_frame_decoder, NULL) == 0);
    CHECK(wk_contract_alloc_sweep("wk_eth_snappy_frame_encoder", s_frame_encoder, NULL) == 0);
    CHECK(wk_contract_alloc_sweep("wk_eth_rr_reader", s_rr_reader, NULL) == 0);
    CHECK(wk_contract_alloc_sweep("decode_alloc, gossip message-id", s_whole, NULL) == 0);
}

int main(void)
{
    test_all();
    return wk_test_summary("eth_alloc");
}
