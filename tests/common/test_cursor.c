/* The cursor's LEB128 read (common.h): every length 1..10 at its boundaries, 2^64-1, overflow in
 * the 10th byte, too long (at byte 10 and at a smaller max_len), every non-minimal form of a
 * sample of values with and without WK_VARINT_MINIMAL, and truncation at every prefix leaving the
 * cursor unchanged. Checked against a reference decoder written here with 128-bit arithmetic, over
 * every 1- and 2-byte input, every 3-byte input of a continuation pattern and random inputs, and
 * differentially against a textbook LEB128 encoder written here (ref_put). */
#include "wk_test.h"
#include <wirekit/common.h>
#include <inttypes.h>

/* The textbook unsigned LEB128 encoder: 7 bits at a time, low group first, the high bit set on
 * every byte but the last. Independent of common.h's wk_leb128_put. */
static size_t ref_put(uint64_t v, uint8_t out[10])
{
    size_t k = 0;
    do {
        uint8_t b = (uint8_t)(v & 0x7F);
        v >>= 7;
        if (v) b |= 0x80;
        out[k++] = b;
    } while (v);
    return k;
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) { return wk_test_xorshift(&rng); }

/* The reference: accumulates in 128 bits and judges the whole value afterwards. Same verdict
 * order as documented: per byte, overflow (the value no longer fits 64 bits), too long, then the
 * minimal-form rule on the last byte. */
static wk_cursor_status ref_leb128(const uint8_t *p, size_t n, unsigned max_len,
                                   wk_varint_form form, uint64_t *v, size_t *len)
{
    unsigned __int128 x = 0;
    if (max_len == 0 || max_len > 10) max_len = 10;
    for (size_t i = 0; i < n; i++) {
        x |= (unsigned __int128)(p[i] & 0x7F) << (7 * i);
        *len = i + 1;
        if (x >> 64) return WK_CURSOR_OVERFLOW;
        if (p[i] & 0x80) {
            if (i + 1 == max_len) return WK_CURSOR_TOO_LONG;
            continue;
        }
        if (form == WK_VARINT_MINIMAL && i > 0 && p[i] == 0) return WK_CURSOR_NONMINIMAL;
        *v = (uint64_t)x;
        return WK_CURSOR_OK;
    }
    *len = n;
    return WK_CURSOR_TRUNCATED;
}

/* Runs both on p[0..n) behind a 3-byte prefix already consumed; checks they agree and the cursor
 * contract (moved past the integer on OK, unchanged otherwise). Returns the status. */
static wk_cursor_status both(const uint8_t *p, size_t n, unsigned max_len, wk_varint_form form,
                             uint64_t *value)
{
    uint8_t buf[32];
    if (n > sizeof buf - 3) abort();
    memcpy(buf, "abc", 3);
    memcpy(buf + 3, p, n);
    wk_cursor c = wk_cursor_make(buf, n + 3);
    const uint8_t *skip;
    wk_cursor_take(&c, 3, &skip);
    uint64_t v = 0xDEAD, rv = 0xBEEF;
    size_t len = 99, rlen = 77;
    wk_cursor_status st = wk_cursor_leb128(&c, max_len, form, &v, &len);
    wk_cursor_status rst = ref_leb128(p, n, max_len, form, &rv, &rlen);
    CHECKF(st == rst && len == rlen, "n %zu max %u form %d: status %d/%d len %zu/%zu", n, max_len,
           (int)form, (int)st, (int)rst, len, rlen);
    if (st == WK_CURSOR_OK) {
        CHECKF(v == rv, "value %" PRIu64 " / %" PRIu64, v, rv);
        CHECK(wk_cursor_offset(&c) == 3 + len && len >= 1 && len <= 10);
    } else {
        CHECK(wk_cursor_offset(&c) == 3 && v == 0xDEAD);
        if (st != WK_CURSOR_TRUNCATED) CHECK(len >= 1 && len <= n);
    }
    if (value) *value = v;
    return st;
}

static void test_boundaries(void)
{
    /* every length: the largest value of k bytes and the smallest of k + 1 */
    for (unsigned k = 1; k <= 10; k++) {
        uint64_t hi = k == 10 ? UINT64_MAX : ((uint64_t)1 << (7 * k)) - 1;
        uint64_t vals[3] = {hi, k > 1 ? ((uint64_t)1 << (7 * (k - 1))) : 0, hi - 1};
        for (int j = 0; j < 3; j++) {
            uint64_t v = vals[j], got;
            uint8_t b[16];
            unsigned n = wk_leb128_put(b, v);
            CHECKF(n == wk_leb128_len(v), "len of %" PRIu64, v);
            uint8_t ref[10];
            size_t rn = ref_put(v, ref); /* the textbook encoder, differentially */
            CHECKF(rn == n && memcmp(ref, b, n) == 0, "wk_leb128_put differs for %" PRIu64, v);
            CHECK(both(b, n, 10, WK_VARINT_MINIMAL, &got) == WK_CURSOR_OK && got == v);
            CHECK(both(b, n, 10, WK_VARINT_ANY_FORM, &got) == WK_CURSOR_OK && got == v);
            /* max_len exactly the length still reads; one less is too long (k > 1) */
            CHECK(both(b, n, n, WK_VARINT_MINIMAL, &got) == WK_CURSOR_OK && got == v);
            if (n > 1) CHECK(both(b, n, n - 1, WK_VARINT_MINIMAL, NULL) == WK_CURSOR_TOO_LONG);
            /* every proper prefix is truncated, cursor unchanged, all bytes examined */
            for (unsigned p = 0; p < n; p++)
                CHECK(both(b, p, 10, WK_VARINT_MINIMAL, NULL) == WK_CURSOR_TRUNCATED);
        }
        CHECK(wk_leb128_len(hi) == k);
    }
    /* 2^64-1: ff x9 01 */
    static const uint8_t max[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    uint64_t v;
    CHECK(both(max, 10, 10, WK_VARINT_MINIMAL, &v) == WK_CURSOR_OK && v == UINT64_MAX);
    /* 2^63: 80 x9 01 */
    uint8_t b[12];
    memset(b, 0x80, 9);
    b[9] = 0x01;
    CHECK(both(b, 10, 10, WK_VARINT_MINIMAL, &v) == WK_CURSOR_OK && v == (uint64_t)1 << 63);
    /* overflow in byte 10: value bits 2..127, with or without a continuation bit, reported at
     * byte 10 (len 10) before the continuation bit is looked at */
    for (unsigned last = 0; last < 256; last++) {
        uint8_t o[11];
        memcpy(o, max, 9);
        o[9] = (uint8_t)last;
        o[10] = 0x00;
        wk_cursor_status want = (last & 0x7F) > 1 ? WK_CURSOR_OVERFLOW
                                : (last & 0x80)   ? WK_CURSOR_TOO_LONG
                                                  : WK_CURSOR_OK;
        size_t len = 0;
        wk_cursor c = wk_cursor_make(o, 11);
        CHECKF(wk_cursor_leb128(&c, 10, WK_VARINT_ANY_FORM, &v, &len) == want && len == 10,
               "10th byte %02x", last);
        CHECK(both(o, 11, 10, WK_VARINT_ANY_FORM, NULL) == want);
        /* and with only 10 bytes present: the verdict needs no 11th */
        CHECK(both(o, 10, 10, WK_VARINT_ANY_FORM, NULL) == want);
    }
    /* a 10th byte of 00 after continuation bits: value fits, but a redundant group */
    memcpy(b, max, 9);
    b[9] = 0x00;
    CHECK(both(b, 10, 10, WK_VARINT_ANY_FORM, &v) == WK_CURSOR_OK && v == UINT64_MAX >> 1);
    CHECK(both(b, 10, 10, WK_VARINT_MINIMAL, NULL) == WK_CURSOR_NONMINIMAL);
    /* max_len 5 (the Snappy preamble's bound) */
    static const uint8_t five[6] = {0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
    size_t len = 0;
    wk_cursor c5 = wk_cursor_make(five, 6);
    CHECK(wk_cursor_leb128(&c5, 5, WK_VARINT_ANY_FORM, &v, &len) == WK_CURSOR_TOO_LONG &&
          len == 5 && wk_cursor_offset(&c5) == 0);
    CHECK(both(five, 5, 5, WK_VARINT_ANY_FORM, NULL) == WK_CURSOR_TOO_LONG); /* judged at byte 5 */
    CHECK(both(five, 6, 6, WK_VARINT_ANY_FORM, &v) == WK_CURSOR_OK && v == (uint64_t)1 << 28);
    /* max_len 0 and 11 mean 10 */
    CHECK(both(max, 10, 0, WK_VARINT_MINIMAL, &v) == WK_CURSOR_OK && v == UINT64_MAX);
    CHECK(both(max, 10, 11, WK_VARINT_MINIMAL, &v) == WK_CURSOR_OK && v == UINT64_MAX);
    /* empty input */
    wk_cursor e = wk_cursor_make(b, 0);
    len = 5;
    CHECK(wk_cursor_leb128(&e, 10, WK_VARINT_ANY_FORM, &v, &len) == WK_CURSOR_TRUNCATED && len == 0);
    CHECK(wk_cursor_leb128(&e, 10, WK_VARINT_ANY_FORM, &v, NULL) == WK_CURSOR_TRUNCATED);
    /* spec examples (Snappy preamble, protobuf) */
    static const struct { uint8_t b[3]; size_t n; uint64_t v; } ex[] = {
        {{0x00}, 1, 0}, {{0x01}, 1, 1}, {{0x7f}, 1, 127}, {{0x80, 0x01}, 2, 128},
        {{0xac, 0x02}, 2, 300}, {{0xff, 0xff, 0x03}, 3, 65535}};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
        CHECK(both(ex[i].b, ex[i].n, 10, WK_VARINT_MINIMAL, &v) == WK_CURSOR_OK && v == ex[i].v);
}

/* Every longer form of a value: accepted with ANY_FORM (same value), refused with MINIMAL at its
 * last byte; the minimal form itself passes both. */
static void test_nonminimal(void)
{
    uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, (uint64_t)1 << 35, (uint64_t)1 << 56,
                       ((uint64_t)1 << 63) - 1};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint64_t v = vals[i];
        unsigned n = wk_leb128_len(v);
        for (unsigned w = n + 1; w <= 10; w++) {
            uint8_t b[10];
            uint64_t x = v;
            for (unsigned k = 0; k < w; k++) {
                b[k] = (uint8_t)((x & 0x7F) | (k + 1 < w ? 0x80 : 0));
                x >>= 7;
            }
            uint64_t got;
            size_t len = 0;
            CHECKF(both(b, w, 10, WK_VARINT_ANY_FORM, &got) == WK_CURSOR_OK && got == v,
                   "%" PRIu64 " in %u bytes", v, w);
            wk_cursor c = wk_cursor_make(b, w);
            CHECKF(wk_cursor_leb128(&c, 10, WK_VARINT_MINIMAL, &got, &len) == WK_CURSOR_NONMINIMAL &&
                       len == w && wk_cursor_offset(&c) == 0,
                   "%" PRIu64 " in %u bytes: minimal", v, w);
        }
    }
}

/* The reference over every 1- and 2-byte input, every 3-byte input whose first two bytes have
 * their continuation bit, and random longer inputs, in both forms and several max_len. */
static void test_against_reference(void)
{
    static const unsigned maxes[] = {1, 2, 3, 5, 9, 10};
    for (unsigned m = 0; m < sizeof maxes / sizeof maxes[0]; m++)
        for (int form = 0; form < 2; form++) {
            for (unsigned a = 0; a < 256; a++) {
                uint8_t b[2] = {(uint8_t)a, 0};
                both(b, 1, maxes[m], (wk_varint_form)form, NULL);
                for (unsigned x = 0; x < 256; x++) {
                    b[1] = (uint8_t)x;
                    both(b, 2, maxes[m], (wk_varint_form)form, NULL);
                }
            }
            for (unsigned a = 0x80; a < 256; a += 7)
                for (unsigned x = 0x80; x < 256; x += 5)
                    for (unsigned y = 0; y < 256; y++) {
                        uint8_t b[3] = {(uint8_t)a, (uint8_t)x, (uint8_t)y};
                        both(b, 3, maxes[m], (wk_varint_form)form, NULL);
                    }
        }
    for (int i = 0; i < 200000; i++) {
        uint8_t b[12];
        size_t n = rnd() % 13;
        for (size_t k = 0; k < n; k++) {
            uint64_t r = rnd();
            /* mostly continuation bytes, so long forms and byte 10 are reached */
            b[k] = (uint8_t)((r % 4 ? 0x80 : 0) | ((r >> 8) & 0x7F));
            if (r % 29 == 0) b[k] = 0;
            if (r % 31 == 0) b[k] = 0x80;
        }
        both(b, n, (unsigned)(rnd() % 12), (wk_varint_form)(rnd() & 1), NULL);
    }
    /* random values round trip through the encoder, in a stream of several */
    uint8_t s[10 * 64];
    uint64_t want[64];
    size_t at = 0;
    for (int i = 0; i < 64; i++) {
        want[i] = rnd() >> (rnd() % 64);
        at += wk_leb128_put(s + at, want[i]);
    }
    wk_cursor c = wk_cursor_make(s, at);
    for (int i = 0; i < 64; i++) {
        uint64_t v = 0;
        CHECK(wk_cursor_leb128(&c, 10, WK_VARINT_MINIMAL, &v, NULL) == WK_CURSOR_OK && v == want[i]);
    }
    CHECK(wk_cursor_left(&c) == 0);
}

int main(void)
{
    test_boundaries();
    test_nonminimal();
    test_against_reference();
    return wk_test_summary("cursor");
}
