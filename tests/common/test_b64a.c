/* B64A: alphabet order, bit packing, strict decode (alphabet, length, canonical tail bits). */
#include "wk_test.h"
#include <wirekit/common.h>

static void test_empty_blob_hash(void)
{
    /* Evidence from shared/specs/iltp.md: the empty Blob's hash. */
    const char *text = "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO";
    uint8_t want[32], got[32];
    CHECK(wk_hex_decode("dfaf55f9c587aaa9c906dfe1366bd6cb9637a2edfb90643687475c9efd51c346", 64, want, 32) == 32);
    size_t n = 0;
    wk_error e;
    CHECK(wk_b64a_decode(text, 43, got, sizeof got, &n, &e) == WK_OK);
    CHECK(n == 32);
    CHECK_MEM(got, want, 32);
    char back[43];
    CHECK(wk_b64a_encode(want, 32, back) == 43);
    CHECK(memcmp(back, text, 43) == 0);
    /* and it is the BLAKE3 of "Data-Length: 0\n\n" */
    uint8_t h[32];
    wk_blake3("Data-Length: 0\n\n", 16, h);
    CHECK_MEM(h, want, 32);
}

static void test_alphabet_order(void)
{
    const char *alpha = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~";
    for (int v = 0; v < 64; v++) {
        /* one byte v<<2 encodes to alpha[v] followed by '0' */
        uint8_t b = (uint8_t)(v << 2);
        char t[2];
        CHECK(wk_b64a_encode(&b, 1, t) == 2);
        CHECK(t[0] == alpha[v] && t[1] == '0');
    }
    /* ASCII order: encodings sort like the bytes */
    for (int i = 0; i < 63; i++) CHECK(alpha[i] < alpha[i + 1]);
}

static void test_lengths_roundtrip(void)
{
    uint8_t src[100], dec[100];
    char text[200];
    for (int i = 0; i < 100; i++) src[i] = (uint8_t)(i * 37 + 11);
    for (size_t n = 0; n <= 100; n++) {
        size_t tl = wk_b64a_encode(src, n, text);
        CHECK(tl == wk_b64a_encoded_len(n));
        size_t got = 999;
        wk_error e;
        CHECK(wk_b64a_decode(text, tl, dec, sizeof dec, &got, &e) == WK_OK);
        CHECK(got == n && memcmp(dec, src, n) == 0);
    }
}

static void test_rejections(void)
{
    uint8_t out[64];
    size_t n;
    wk_error e;
    /* length 1 mod 4 encodes nothing */
    CHECK(wk_b64a_decode("A", 1, out, sizeof out, &n, &e) == WK_ERR_B64A_LENGTH);
    CHECK(wk_b64a_decode("ABCDE", 5, out, sizeof out, &n, &e) == WK_ERR_B64A_LENGTH);
    /* characters outside the alphabet: RFC 4648 '+', '/', '=', '-' */
    const char *bad[] = {"AB+D", "AB/D", "ABC=", "AB-D", "AB D", "AB\nD"};
    for (int i = 0; i < 6; i++) {
        CHECK(wk_b64a_decode(bad[i], 4, out, sizeof out, &n, &e) == WK_ERR_B64A_ALPHABET);
        CHECK(e.has_offset && e.offset == (i == 2 ? 3u : 2u));
        CHECK(e.category == WK_CAT_PEER_PROTOCOL);
    }
    /* non-canonical tail: 2 chars carry 4 unused bits, 3 chars carry 2 */
    CHECK(wk_b64a_decode("01", 2, out, sizeof out, &n, &e) == WK_ERR_B64A_TAIL);
    CHECK(e.offset == 1);
    CHECK(wk_b64a_decode("00", 2, out, sizeof out, &n, &e) == WK_OK && n == 1 && out[0] == 0);
    CHECK(wk_b64a_decode("003", 3, out, sizeof out, &n, &e) == WK_ERR_B64A_TAIL);
    CHECK(wk_b64a_decode("004", 3, out, sizeof out, &n, &e) == WK_OK && n == 2);
    /* the empty Blob hash with its last character bumped */
    CHECK(wk_b64a_decode("svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpP", 43, out, 32, &n, &e) == WK_ERR_B64A_TAIL);
    /* output too small is the caller's fault */
    CHECK(wk_b64a_decode("0000", 4, out, 2, &n, &e) == WK_ERR_ARG);
    CHECK(wk_b64a_decode("", 0, out, 0, &n, &e) == WK_OK && n == 0);
}

int main(void)
{
    test_empty_blob_hash();
    test_alphabet_order();
    test_lengths_roundtrip();
    test_rejections();
    return wk_test_summary("b64a");
}
