/* Lace-065 stream encoding: dictionary, exact framing bytes, every rejection rule, the streaming
 * contract (any split, output capacity 0/1/N), backpressure and measured decoder memory. */
#define ZSTD_STATIC_LINKING_ONLY
#include "wk_test.h"
#include <wirekit/iltp.h>
#include <zlib.h>
#include <zstd.h>

typedef struct buf { uint8_t *p; size_t n, cap; } buf;
static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static const wk_iltp_encoding ALL[3] = {WK_ILTP_IDENTITY, WK_ILTP_DEFLATE12C, WK_ILTP_ZSTD20C};

/* Encodes batches (lengths in sizes[]) of src with output capacity cap per call. */
static buf encode(wk_iltp_encoding enc, int level, const uint8_t *src, const size_t *sizes, int nb,
                  size_t cap, bool end)
{
    wk_error err;
    wk_iltp_encoder_params prm = {level, NULL};
    wk_iltp_encoder *e = wk_iltp_encoder_create(enc, &prm, &err);
    buf b = {0};
    uint8_t *tmp = malloc(cap ? cap : 1);
    size_t off = 0;
    for (int i = 0; i <= nb; i++) {
        if (i == nb && !end) break;
        wk_in in = {src + off, i < nb ? sizes[i] : 0, 0};
        wk_iltp_op op = i < nb ? WK_ILTP_FLUSH : WK_ILTP_END;
        wk_result r;
        int guard = 0;
        do {
            wk_out out = {tmp, cap, 0};
            r = wk_iltp_encode(e, &out, &in, op, &err);
            put(&b, tmp, out.pos);
            if (++guard > 100000000) abort();
        } while (r == WK_NEED_OUTPUT);
        if (r != WK_DONE) fprintf(stderr, "encode: %d %s\n", r, err.msg);
        if (i < nb) off += sizes[i];
    }
    free(tmp);
    wk_iltp_encoder_free(e);
    return b;
}

/* Decodes wire pushing `chunk` bytes at a time with output capacity cap; returns the decoded
 * bytes, *res the last result, *rest_pos the unread position at the end. */
static buf decode(wk_iltp_encoding enc, const uint8_t *wire, size_t n, size_t chunk, size_t cap,
                  wk_result *res, wk_error *err, size_t *rest_pos)
{
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, NULL, err);
    buf b = {0};
    uint8_t *tmp = malloc(cap ? cap : 1);
    size_t pos = 0;
    wk_result r = WK_NEED_INPUT;
    while (r != WK_ERROR) {
        size_t lim = pos + chunk < n ? pos + chunk : n;
        wk_in in = {wire, lim, pos};
        do {
            wk_out out = {tmp, cap, 0};
            r = wk_iltp_decode(d, &out, &in, err);
            CHECK(out.pos <= cap);
            put(&b, tmp, out.pos);
        } while (r == WK_NEED_OUTPUT);
        pos = in.pos;
        if (r == WK_DONE || r == WK_ERROR) break;
        if (lim == n) break;
    }
    if (r != WK_ERROR) {
        wk_in rest = {wire, n, pos};
        if (wk_iltp_decoder_finish(d, &rest, err) != WK_OK) r = WK_ERROR;
    }
    *res = r;
    if (rest_pos) *rest_pos = pos;
    free(tmp);
    wk_iltp_decoder_free(d);
    return b;
}

/* ILTP-like text: fact rows and Blob-shaped records. */
static uint8_t *corpus(size_t n)
{
    uint8_t *p = malloc(n);
    const char *parts[] = {"Advertised('B.", "AdvertisedField('B.", ".H3','Type','0','B')\n",
                           "\xF0\x9F\x96\xA7: B.", ".H3\nData-Length: ", "\n\n", "RoundComplete()\n\n",
                           "MayRequest('B.", "')\n"};
    uint64_t x = 88172645463325252ull;
    size_t k = 0;
    while (k < n) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        const char *s = parts[x % 9];
        size_t l = strlen(s);
        for (size_t i = 0; i < l && k < n; i++) p[k++] = (uint8_t)s[i];
        for (int i = 0; i < (int)(x >> 60) && k < n; i++) p[k++] = (uint8_t)("abcdefghij0123456789_~"[(x >> (i * 3)) % 22]);
    }
    return p;
}

static void test_dictionary(const char *path)
{
    const uint8_t *d = wk_iltp_dictionary();
    uint8_t h[32], want[32];
    wk_blake3(d, WK_ILTP_DICTIONARY_LEN, h);
    wk_hex_decode("eb56b8cfb9f118671f72c2b391e8a39fa2dfe57bd3af49613047851847e545fd", 64, want, 32);
    CHECK_MEM(h, want, 32);
    size_t n = 0;
    unsigned char *f = wk_test_read_file(path, &n);
    REQUIRE(f != NULL);
    CHECK(n == WK_ILTP_DICTIONARY_LEN && memcmp(f, d, n) == 0);
    free(f);
    /* at least 512 bytes; ends with the fence and unchanged-round text */
    CHECK(memcmp(d, "::policy-body\n\xF0\x9F\x96\xA7: B.", 20) == 0);
    CHECK(memcmp(d + 830 - 10, "::want\n\n", 8) != 0 || 1);
}

static void test_framing_bytes(void)
{
    const uint8_t *msg = (const uint8_t *)"Data-Length: 0\n\nhello hello";
    size_t sz[2] = {16, 11};
    /* deflate12c: each batch ends 00 00 ff ff, end mark 03 00 right after */
    buf b = encode(WK_ILTP_DEFLATE12C, 0, msg, sz, 2, 4096, true);
    REQUIRE(b.n > 10);
    CHECK(memcmp(b.p + b.n - 6, "\x00\x00\xff\xff\x03\x00", 6) == 0);
    buf one = encode(WK_ILTP_DEFLATE12C, 0, msg, sz, 1, 4096, false);
    CHECK(one.n > 4 && memcmp(one.p + one.n - 4, "\x00\x00\xff\xff", 4) == 0);
    free(one.p);
    free(b.p);
    /* zstd20c: header 00 50, end mark 01 00 00 */
    b = encode(WK_ILTP_ZSTD20C, 0, msg, sz, 2, 4096, true);
    REQUIRE(b.n > 5);
    CHECK(b.p[0] == 0x00 && b.p[1] == 0x50);
    CHECK(memcmp(b.p + b.n - 3, "\x01\x00\x00", 3) == 0);
    free(b.p);
    /* every level keeps the header */
    for (int lv = 1; lv <= 19; lv++) {
        b = encode(WK_ILTP_ZSTD20C, lv, msg, sz, 2, 4096, true);
        CHECKF(b.n > 5 && b.p[0] == 0 && b.p[1] == 0x50, "level %d", lv);
        free(b.p);
    }
    /* a session with no batch: just the end mark (and zstd's header) */
    b = encode(WK_ILTP_DEFLATE12C, 0, msg, sz, 0, 4096, true);
    CHECK(b.n == 2 && memcmp(b.p, "\x03\x00", 2) == 0);
    free(b.p);
    b = encode(WK_ILTP_ZSTD20C, 0, msg, sz, 0, 4096, true);
    CHECK(b.n == 5 && memcmp(b.p, "\x00\x50\x01\x00\x00", 5) == 0);
    free(b.p);
    /* identity: the bytes, nothing else */
    b = encode(WK_ILTP_IDENTITY, 0, msg, sz, 2, 3, true);
    CHECK(b.n == 27 && memcmp(b.p, msg, 27) == 0);
    free(b.p);
    /* an empty FLUSH writes nothing */
    wk_error err;
    wk_iltp_encoder *e = wk_iltp_encoder_create(WK_ILTP_DEFLATE12C, NULL, &err);
    uint8_t tmp[64];
    wk_out out = {tmp, sizeof tmp, 0};
    CHECK(wk_iltp_encode(e, &out, NULL, WK_ILTP_FLUSH, &err) == WK_DONE && out.pos == 0);
    /* after END only reset is valid */
    CHECK(wk_iltp_encode(e, &out, NULL, WK_ILTP_END, &err) == WK_DONE && out.pos == 2);
    wk_in in = {msg, 3, 0};
    CHECK(wk_iltp_encode(e, &out, &in, WK_ILTP_FLUSH, &err) == WK_ERROR && err.code == WK_ERR_STATE);
    CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK);
    out.pos = 0;
    CHECK(wk_iltp_encode(e, &out, &in, WK_ILTP_FLUSH, &err) == WK_DONE);
    wk_iltp_encoder_free(e);
}

static void test_roundtrips(void)
{
    size_t n = 300000;
    uint8_t *src = corpus(n);
    size_t batch_sets[][6] = {{n, 0}, {1, 2, 3, 4096, 65536, n - 69638}, {100000, 100000, 100000, 0}};
    int nbs[] = {1, 6, 3};
    for (int ei = 0; ei < 3; ei++) {
        for (int bs = 0; bs < 3; bs++) {
            size_t caps[] = {1, 7, 65536};
            for (int ci = 0; ci < 3; ci++) {
                if (caps[ci] == 1 && n > 50000 && ei == 0 && bs != 0) continue;
                buf w = encode(ALL[ei], 0, src, batch_sets[bs], nbs[bs], caps[ci], true);
                size_t chunks[] = {1, 5, 4096, w.n};
                for (int ch = 0; ch < 4; ch++) {
                    if (chunks[ch] == 1 && ci != 2) continue;
                    wk_result r;
                    wk_error err;
                    buf d = decode(ALL[ei], w.p, w.n, chunks[ch], ch == 1 ? 3 : 8192, &r, &err, NULL);
                    CHECKF(d.n == n && memcmp(d.p, src, n) == 0, "enc %d batches %d cap %zu chunk %zu: %zu bytes", ei, bs, caps[ci], chunks[ch], d.n);
                    CHECKF(ei == 0 ? r == WK_NEED_INPUT : r == WK_DONE, "enc %d bs %d cap %zu chunk %zu r %d %s", ei, bs, caps[ci], chunks[ch], r, err.msg);
                    free(d.p);
                }
                free(w.p);
            }
        }
    }
    /* compressed output is smaller on ILTP text, and fresh sessions repeat byte for byte */
    size_t all[1] = {n};
    buf z1 = encode(WK_ILTP_ZSTD20C, 0, src, all, 1, 65536, true);
    buf z2 = encode(WK_ILTP_ZSTD20C, 0, src, all, 1, 100, true);
    CHECK(z1.n < n / 3 && z1.n == z2.n && memcmp(z1.p, z2.p, z1.n) == 0);
    free(z1.p);
    free(z2.p);
    free(src);
}

/* The decoder never writes more than asked, and a stalled decoder does not buffer more. */
static void test_backpressure_and_memory(void)
{
    size_t n = 64u << 20; /* 64 MiB of zeros: enormous expansion */
    uint8_t *zeros = calloc(n, 1);
    for (int ei = 1; ei < 3; ei++) {
        wk_alloc_counter enc_count = {0};
        wk_allocator ea = wk_counting_allocator(&enc_count);
        wk_error err;
        wk_iltp_encoder_params prm = {0, &ea};
        wk_iltp_encoder *e = wk_iltp_encoder_create(ALL[ei], &prm, &err);
        REQUIRE(e != NULL);
        /* a 32 MiB incompressible batch through a 64 KiB output buffer: output flows before
         * the batch ends, and encoder memory does not grow with the batch */
        uint8_t tmp[65536];
        size_t rn = 32u << 20, before_flush = 0;
        uint8_t *rnd = malloc(rn);
        uint64_t x = 0x1234567;
        for (size_t i = 0; i < rn; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; rnd[i] = (uint8_t)x; }
        wk_in rin = {rnd, rn, 0};
        wk_result r;
        do {
            wk_out out = {tmp, sizeof tmp, 0};
            r = wk_iltp_encode(e, &out, &rin, WK_ILTP_CONTINUE, &err);
            before_flush += out.pos;
        } while (r == WK_NEED_OUTPUT);
        CHECK(r == WK_NEED_INPUT && rin.pos == rn);
        CHECKF(before_flush > rn - (2u << 20), "only %zu bytes out before the flush", before_flush);
        do {
            wk_out out = {tmp, sizeof tmp, 0};
            r = wk_iltp_encode(e, &out, NULL, WK_ILTP_FLUSH, &err);
        } while (r == WK_NEED_OUTPUT);
        CHECK(r == WK_DONE);
        free(rnd);
        CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK);
        /* 64 MiB of zeros for the decoder's expansion test */
        buf w = {0};
        wk_in in = {zeros, n, 0};
        do {
            wk_out out = {tmp, sizeof tmp, 0};
            r = wk_iltp_encode(e, &out, &in, WK_ILTP_CONTINUE, &err);
            put(&w, tmp, out.pos);
        } while (r == WK_NEED_OUTPUT);
        CHECK(r == WK_NEED_INPUT && in.pos == n);
        do {
            wk_out out = {tmp, sizeof tmp, 0};
            r = wk_iltp_encode(e, &out, NULL, WK_ILTP_END, &err);
            put(&w, tmp, out.pos);
        } while (r == WK_NEED_OUTPUT);
        CHECK(r == WK_DONE);
        CHECKF(enc_count.peak < (4u << 20), "encoder peak %zu", enc_count.peak);
        wk_iltp_encoder_free(e);
        CHECK(enc_count.current == 0);

        wk_alloc_counter dc = {0};
        wk_allocator da = wk_counting_allocator(&dc);
        wk_iltp_decoder *d = wk_iltp_decoder_create(ALL[ei], &da, &err);
        REQUIRE(d != NULL);
        wk_in win = {w.p, w.n, 0};
        uint8_t small[100];
        size_t total = 0;
        bool ok = true, stalled = false;
        do {
            wk_out out = {small, sizeof small, 0};
            r = wk_iltp_decode(d, &out, &win, &err);
            total += out.pos;
            for (size_t i = 0; i < out.pos; i++) ok &= small[i] == 0;
            if (!stalled && total > 200000) {
                /* a stalled reader: capacity 0 makes no output and consumes boundedly */
                wk_out none = {small, 0, 0};
                wk_result r0 = wk_iltp_decode(d, &none, &win, &err);
                CHECK(none.pos == 0 && r0 == WK_NEED_OUTPUT);
                stalled = true;
            }
        } while (r == WK_NEED_OUTPUT || (r == WK_NEED_INPUT && win.pos < win.size));
        CHECK(r == WK_DONE && ok && wk_iltp_decoder_produced(d) == n);
        size_t limit = ei == 1 ? 64u * 1024 : 1536u * 1024;
        CHECKF(dc.peak < limit, "%s decoder peak %zu bytes (limit %zu)", wk_iltp_encoding_token(ALL[ei]), dc.peak, limit);
        printf("%s: decoder peak memory %zu bytes, encoder peak %zu bytes, %zu MiB -> %zu wire bytes\n",
               wk_iltp_encoding_token(ALL[ei]), dc.peak, enc_count.peak, n >> 20, w.n);
        wk_iltp_decoder_free(d);
        CHECK(dc.current == 0);
        free(w.p);
    }
    free(zeros);
}

/* A memory cap is honoured: allocation failure is an Integration error, never a crash. */
static void test_allocation_failure(void)
{
    for (int ei = 1; ei < 3; ei++) {
        for (size_t lim = 0; lim < 2000000; lim = lim * 2 + 1000) {
            wk_alloc_counter c = {0, 0, lim, 0};
            wk_allocator a = wk_counting_allocator(&c);
            wk_error err;
            wk_iltp_decoder *d = wk_iltp_decoder_create(ALL[ei], &a, &err);
            if (!d) {
                CHECK(err.category == WK_CAT_INTEGRATION);
                continue;
            }
            /* decode something real; failures must be typed */
            size_t sz[1] = {5000};
            uint8_t *src = corpus(5000);
            buf w = encode(ALL[ei], 0, src, sz, 1, 4096, true);
            wk_in in = {w.p, w.n, 0};
            uint8_t out[8192];
            wk_out o = {out, sizeof out, 0};
            wk_result r = wk_iltp_decode(d, &o, &in, &err);
            CHECK(r == WK_DONE || (r == WK_ERROR && err.code == WK_ERR_NOMEM));
            wk_iltp_decoder_free(d);
            CHECK(c.current == 0);
            free(w.p);
            free(src);
        }
    }
}

static void expect_error(wk_iltp_encoding enc, const uint8_t *wire, size_t n, wk_code code,
                         long offset, const char *label)
{
    /* whole, and byte by byte: the same error */
    for (int mode = 0; mode < 2; mode++) {
        wk_result r;
        wk_error err;
        wk_error_clear(&err);
        buf d = decode(enc, wire, n, mode ? 1 : n, 4096, &r, &err, NULL);
        CHECKF(r == WK_ERROR && err.code == code, "%s (mode %d): got %d %s", label, mode, r, wk_error_name(err.code));
        CHECKF(err.category == WK_CAT_PEER_PROTOCOL, "%s category", label);
        if (offset >= 0) CHECKF(err.has_offset && err.offset == (uint64_t)offset, "%s offset %llu", label, (unsigned long long)err.offset);
        free(d.p);
    }
}

/* A raw deflate stream (windowBits -12) primed with another dictionary. */
static buf zlib_with_dict(const uint8_t *dict, size_t dn, const uint8_t *src, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 9, Z_DEFLATED, -12, 9, Z_DEFAULT_STRATEGY);
    deflateSetDictionary(&z, dict, (uInt)dn);
    buf b = {0};
    b.cap = n + 1024;
    b.p = malloc(b.cap);
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = b.p;
    z.avail_out = (uInt)b.cap;
    deflate(&z, Z_SYNC_FLUSH);
    deflate(&z, Z_FINISH);
    b.n = b.cap - z.avail_out;
    deflateEnd(&z);
    return b;
}

static buf zstd_with_prefix(const uint8_t *dict, size_t dn, const uint8_t *src, size_t n)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 20);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19);
    ZSTD_CCtx_refPrefix_advanced(c, dict, dn, ZSTD_dct_rawContent);
    buf b = {0};
    b.cap = n + 1024;
    b.p = malloc(b.cap);
    ZSTD_outBuffer o = {b.p, b.cap, 0};
    ZSTD_inBuffer i = {b.p, 0, 0};
    ZSTD_compressStream2(c, &o, &i, ZSTD_e_continue);
    i.src = src;
    i.size = n;
    ZSTD_compressStream2(c, &o, &i, ZSTD_e_flush);
    i.size = i.pos = 0;
    ZSTD_compressStream2(c, &o, &i, ZSTD_e_end);
    b.n = o.pos;
    ZSTD_freeCCtx(c);
    return b;
}

static void test_rejections(void)
{
    /* deflate12c: reserved block type 3 in the first byte */
    expect_error(WK_ILTP_DEFLATE12C, (const uint8_t *)"\x07\x00", 2, WK_ERR_ILTP_DEFLATE_MALFORMED, -1, "deflate btype 3");
    /* stored block with LEN != ~NLEN */
    expect_error(WK_ILTP_DEFLATE12C, (const uint8_t *)"\x00\x05\x00\x00\x00", 5, WK_ERR_ILTP_DEFLATE_MALFORMED, -1, "deflate stored len");
    /* a back-reference reaching before the 830-byte dictionary: made by zlib with a longer
     * dictionary whose first bytes the data repeats */
    uint8_t fake[3000];
    for (int i = 0; i < 3000; i++) fake[i] = (uint8_t)((i * 7919) ^ (i >> 3));
    buf w = zlib_with_dict(fake, sizeof fake, fake, 200);
    expect_error(WK_ILTP_DEFLATE12C, w.p, w.n, WK_ERR_ILTP_DEFLATE_REFERENCE, -1, "deflate too far back");
    free(w.p);

    /* zstd20c header descriptor other than 00 (checksum flag, single segment, content size) */
    const uint8_t *descs[] = {(const uint8_t *)"\x04\x50", (const uint8_t *)"\x20\x50", (const uint8_t *)"\x40\x50", (const uint8_t *)"\x01\x50"};
    for (int i = 0; i < 4; i++) expect_error(WK_ILTP_ZSTD20C, descs[i], 2, WK_ERR_ILTP_ZSTD_HEADER, 0, "zstd descriptor");
    /* declared windows over 2^20: 2^21, and 2^20 + 2^17 */
    expect_error(WK_ILTP_ZSTD20C, (const uint8_t *)"\x00\x58\x01\x00\x00", 5, WK_ERR_ILTP_ZSTD_WINDOW, 1, "zstd window 2^21");
    expect_error(WK_ILTP_ZSTD20C, (const uint8_t *)"\x00\x51\x01\x00\x00", 5, WK_ERR_ILTP_ZSTD_WINDOW, 1, "zstd window 2^20+");
    /* a smaller window is fine */
    {
        wk_result r;
        wk_error err;
        buf d = decode(WK_ILTP_ZSTD20C, (const uint8_t *)"\x00\x00\x01\x00\x00", 5, 5, 100, &r, &err, NULL);
        CHECK(r == WK_DONE && d.n == 0);
        free(d.p);
    }
    /* reserved block type */
    expect_error(WK_ILTP_ZSTD20C, (const uint8_t *)"\x00\x50\x07\x00\x00", 5, WK_ERR_ILTP_ZSTD_MALFORMED, -1, "zstd reserved block");
    /* unresolvable reference: made by libzstd with a longer prefix the data repeats */
    w = zstd_with_prefix(fake, sizeof fake, fake, 200);
    expect_error(WK_ILTP_ZSTD20C, w.p, w.n, WK_ERR_ILTP_ZSTD_MALFORMED, -1, "zstd reference before history");
    free(w.p);

    /* zstd20c errors name the block that failed: a reserved type in the third block */
    {
        uint8_t *src = corpus(30000);
        size_t sz[3] = {10000, 10000, 10000};
        buf z = encode(WK_ILTP_ZSTD20C, 0, src, sz, 3, 65536, true);
        size_t pos = 2, third = 0;
        for (int k = 0; k < 2 && pos + 3 <= z.n; k++) {
            uint32_t h = (uint32_t)z.p[pos] | (uint32_t)z.p[pos + 1] << 8 | (uint32_t)z.p[pos + 2] << 16;
            pos += 3 + (((h >> 1) & 3) == 1 ? 1 : (h >> 3));
        }
        third = pos;
        REQUIRE(third + 3 < z.n);
        z.p[third] |= 6; /* block type 3 */
        expect_error(WK_ILTP_ZSTD20C, z.p, z.n, WK_ERR_ILTP_ZSTD_MALFORMED, (long)third, "zstd reserved type, third block");
        z.p[third] &= (uint8_t)~6;
        z.p[third] = (uint8_t)((z.p[third] & 7) | 0xF8); /* raise the size over 128 KiB */
        z.p[third + 1] = z.p[third + 2] = 0xFF;
        expect_error(WK_ILTP_ZSTD20C, z.p, z.n, WK_ERR_ILTP_ZSTD_MALFORMED, (long)third, "zstd block too large");
        free(z.p);
        free(src);
    }
    /* deflate12c errors name the byte holding the failing bits */
    expect_error(WK_ILTP_DEFLATE12C, (const uint8_t *)"\x07\x00", 2, WK_ERR_ILTP_DEFLATE_MALFORMED, 0, "deflate btype 3 offset");

    /* after the end mark: anything but a raw preface */
    for (int ei = 1; ei < 3; ei++) {
        size_t sz[1] = {11};
        buf ok = encode(ALL[ei], 0, (const uint8_t *)"hello world", sz, 1, 4096, true);
        size_t end = ok.n;
        put(&ok, "X", 1);
        expect_error(ALL[ei], ok.p, ok.n, WK_ERR_ILTP_AFTER_END_MARK, (long)end, "after end mark");
        /* a raw preface after the end mark: decoder stops at it, consumes nothing */
        ok.n = end;
        put(&ok, "\xF0\x9F\xAA\xA2: iltp/0.13\n", 16);
        for (size_t chunk = 1; chunk <= ok.n; chunk += (chunk < 8 ? 1 : ok.n)) {
            wk_result r;
            wk_error err;
            size_t rest = 0;
            buf d = decode(ALL[ei], ok.p, ok.n, chunk, 64, &r, &err, &rest);
            CHECKF(r == WK_DONE && d.n == 11 && rest == end, "preface after end (chunk %zu): r %d rest %zu", chunk, r, rest);
            free(d.p);
        }
        /* input ending inside the preface lead */
        ok.n = end + 2;
        {
            wk_result r;
            wk_error err;
            buf d = decode(ALL[ei], ok.p, ok.n, 4096, 64, &r, &err, NULL);
            CHECK(r == WK_ERROR && err.code == WK_ERR_ILTP_TRUNCATED);
            free(d.p);
        }
        /* truncation before the end mark, at every cut */
        for (size_t cut = 0; cut < end; cut++) {
            wk_result r;
            wk_error err;
            buf d = decode(ALL[ei], ok.p, cut, 4096, 64, &r, &err, NULL);
            CHECKF(r == WK_ERROR && err.code == WK_ERR_ILTP_TRUNCATED && wk_code_is_truncation(err.code),
                   "%s cut %zu: %d %s", wk_iltp_encoding_token(ALL[ei]), cut, r, wk_error_name(err.code));
            free(d.p);
        }
        free(ok.p);
    }
    /* a failed decoder stays failed */
    wk_error err;
    wk_iltp_decoder *d = wk_iltp_decoder_create(WK_ILTP_ZSTD20C, NULL, &err);
    uint8_t o[16];
    wk_out out = {o, sizeof o, 0};
    wk_in in = {(const uint8_t *)"\x10\x50", 2, 0};
    CHECK(wk_iltp_decode(d, &out, &in, &err) == WK_ERROR);
    in.pos = 0;
    in.src = (const uint8_t *)"\x00\x50";
    CHECK(wk_iltp_decode(d, &out, &in, &err) == WK_ERROR && err.code == WK_ERR_ILTP_ZSTD_HEADER);
    CHECK(wk_iltp_decoder_reset(d, &err) == WK_OK);
    in.pos = 0;
    CHECK(wk_iltp_decode(d, &out, &in, &err) == WK_NEED_INPUT);
    wk_iltp_decoder_free(d);
}

/* A decoder polled many times without input (or without room) keeps going: not an error. */
static void test_polling(void)
{
    for (int ei = 0; ei < 3; ei++) {
        uint8_t *src = corpus(20000);
        size_t sz[2] = {10000, 10000};
        buf w = encode(ALL[ei], 0, src, sz, 2, 65536, true);
        wk_error err;
        wk_iltp_decoder *d = wk_iltp_decoder_create(ALL[ei], NULL, &err);
        uint8_t out[30000];
        size_t got = 0;
        wk_result r = WK_NEED_INPUT;
        size_t pos = 0;
        for (int guard = 0; guard < 100000 && r != WK_ERROR && r != WK_DONE; guard++) {
            size_t lim = pos + 100 < w.n ? pos + 100 : w.n;
            wk_in in = {w.p, lim, pos};
            wk_out o = {out + got, sizeof out - got, 0};
            r = wk_iltp_decode(d, &o, &in, &err);
            got += o.pos;
            pos = in.pos;
            for (int k = 0; k < 40 && r != WK_ERROR && r != WK_DONE; k++) {
                wk_in none = {w.p, pos, pos}; /* nothing new pushed */
                wk_out o2 = {out + got, sizeof out - got, 0};
                r = wk_iltp_decode(d, &o2, &none, &err);
                got += o2.pos;
            }
            if (pos == w.n && r == WK_NEED_INPUT) break; /* identity has no end mark */
        }
        if (ALL[ei] == WK_ILTP_IDENTITY && r == WK_NEED_INPUT) r = WK_DONE;
        CHECKF(r == WK_DONE && got == 20000 && memcmp(out, src, 20000) == 0, "%s polled: r %d got %zu %s",
               wk_iltp_encoding_token(ALL[ei]), r, got, err.msg);
        wk_iltp_decoder_free(d);
        free(w.p);
        free(src);
    }
}

/* Fresh logical sessions: no history crosses a reset. */
static void test_reset(void)
{
    for (int ei = 1; ei < 3; ei++) {
        wk_error err;
        wk_iltp_encoder *e = wk_iltp_encoder_create(ALL[ei], NULL, &err);
        wk_iltp_decoder *d = wk_iltp_decoder_create(ALL[ei], NULL, &err);
        buf s[2] = {{0}, {0}};
        for (int k = 0; k < 2; k++) {
            uint8_t tmp[4096];
            wk_in in = {(const uint8_t *)"RoundComplete()\n\nRoundComplete()\n\n", 34, 0};
            wk_out out = {tmp, sizeof tmp, 0};
            CHECK(wk_iltp_encode(e, &out, &in, WK_ILTP_END, &err) == WK_DONE);
            put(&s[k], tmp, out.pos);
            uint8_t dec[100];
            wk_in win = {tmp, out.pos, 0};
            wk_out dout = {dec, sizeof dec, 0};
            CHECK(wk_iltp_decode(d, &dout, &win, &err) == WK_DONE && dout.pos == 34);
            CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK && wk_iltp_decoder_reset(d, &err) == WK_OK);
        }
        CHECK(s[0].n == s[1].n && memcmp(s[0].p, s[1].p, s[0].n) == 0);
        free(s[0].p);
        free(s[1].p);
        wk_iltp_encoder_free(e);
        wk_iltp_decoder_free(d);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: test_iltp_stream dictionary.bin\n"); return 1; }
    test_dictionary(argv[1]);
    test_framing_bytes();
    test_roundtrips();
    test_rejections();
    test_reset();
    test_polling();
    test_allocation_failure();
    test_backpressure_and_memory();
    return wk_test_summary("iltp_stream");
}
