/* Lace-065 tokens, offers and selection; both preface forms. */
#include "wk_test.h"
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* table-driven preface cases */
#include <wirekit/iltp.h>

static wk_iltp_offer offer(const char *s)
{
    wk_iltp_offer o = {NULL, 0, 0};
    if (s) {
        wk_error e;
        if (wk_iltp_offer_parse(s, strlen(s), &o, &e) != WK_OK) {
            fprintf(stderr, "offer '%s' rejected: %s\n", s, e.msg);
            abort();
        }
    }
    return o;
}

static const char *sel(const char *a_encode, const char *b_decode)
{
    static char buf[64];
    wk_iltp_offer a = offer(a_encode), b = offer(b_decode);
    const char *t;
    size_t n;
    wk_iltp_offer_select(&a, &b, &t, &n);
    snprintf(buf, sizeof buf, "%.*s", (int)n, t);
    return buf;
}

static void test_tokens(void)
{
    CHECK(wk_iltp_encoding_lookup("identity", 8) == WK_ILTP_IDENTITY);
    CHECK(wk_iltp_encoding_lookup("deflate12c", 10) == WK_ILTP_DEFLATE12C);
    CHECK(wk_iltp_encoding_lookup("zstd20c", 7) == WK_ILTP_ZSTD20C);
    CHECK(wk_iltp_encoding_lookup("zstd20", 6) == WK_ILTP_UNKNOWN);
    CHECK(wk_iltp_encoding_lookup("ZSTD20C", 7) == WK_ILTP_UNKNOWN);
    CHECK(strcmp(wk_iltp_encoding_name(WK_ILTP_ZSTD20C), "zstd20c") == 0);
    CHECK(wk_iltp_encoding_name(WK_ILTP_UNKNOWN) == NULL);
}

static void test_offer_parse(void)
{
    wk_iltp_offer o;
    wk_error e;
    CHECK(wk_iltp_offer_parse("deflate12c,zstd20c", 18, &o, &e) == WK_OK && o.count == 2);
    CHECK(wk_iltp_offer_parse("lz4x,brotli9", 12, &o, &e) == WK_OK && o.count == 2);
    char max[33];
    memset(max, 'a', 32);
    max[32] = 0;
    CHECK(wk_iltp_offer_parse(max, 32, &o, &e) == WK_OK);
    struct { const char *s; wk_code c; size_t off; } bad[] = {
        {"", WK_ERR_ILTP_OFFER, 0},
        {",zstd20c", WK_ERR_ILTP_TOKEN, 0},
        {"zstd20c,", WK_ERR_ILTP_TOKEN, 8},
        {"zstd20c,,deflate12c", WK_ERR_ILTP_TOKEN, 8},
        {"zstd20c, deflate12c", WK_ERR_ILTP_TOKEN, 8},
        {"Zstd20c", WK_ERR_ILTP_TOKEN, 0},
        {"1zstd", WK_ERR_ILTP_TOKEN, 0},
        {"zstd-20c", WK_ERR_ILTP_TOKEN, 4},
        {"zstd20c,zstd20c", WK_ERR_ILTP_OFFER, 8},
        {"identity", WK_ERR_ILTP_OFFER, 0},
        {"zstd20c,identity", WK_ERR_ILTP_OFFER, 8},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", WK_ERR_ILTP_TOKEN, 0}, /* 33 characters */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_code c = wk_iltp_offer_parse(bad[i].s, strlen(bad[i].s), &o, &e);
        CHECKF(c == bad[i].c && e.offset == bad[i].off, "'%s' gave %s at %llu", bad[i].s,
               wk_error_name(c), (unsigned long long)e.offset);
    }
    wk_iltp_encoding encs[] = {WK_ILTP_ZSTD20C, WK_ILTP_IDENTITY, WK_ILTP_DEFLATE12C, WK_ILTP_ZSTD20C};
    uint8_t buf[64];
    size_t size = 0;
    CHECK(wk_iltp_offer_size(encs, 4, &size, &e) == WK_OK && size == 18);
    wk_out ob = {buf, sizeof buf, 0};
    CHECK(wk_iltp_offer_encode(encs, 4, &ob, &e) == WK_DONE && ob.pos == 18 && memcmp(buf, "zstd20c,deflate12c", 18) == 0);
    /* a short view: NEED_OUTPUT, untouched */
    memset(buf, 0xAA, sizeof buf);
    wk_out small = {buf, 17, 3};
    CHECK(wk_iltp_offer_encode(encs, 4, &small, &e) == WK_NEED_OUTPUT && small.pos == 3 && buf[3] == 0xAA);
    /* nothing listed: an empty list, not an error */
    wk_iltp_encoding only_id[] = {WK_ILTP_IDENTITY};
    CHECK(wk_iltp_offer_size(only_id, 1, &size, &e) == WK_OK && size == 0);
    /* an encoding this build does not implement is refused whatever the room */
    wk_iltp_encoding unk[] = {WK_ILTP_ZSTD20C, WK_ILTP_UNKNOWN};
    wk_out big = {buf, sizeof buf, 0}, none = {buf, 0, 0};
    CHECK(wk_iltp_offer_size(unk, 2, &size, &e) == WK_ERR_ARG);
    CHECK(wk_iltp_offer_encode(unk, 2, &big, &e) == WK_ERROR && e.code == WK_ERR_ARG && big.pos == 0);
    CHECK(wk_iltp_offer_encode(unk, 2, &none, &e) == WK_ERROR && e.code == WK_ERR_ARG);
}

static void test_selection(void)
{
    /* Lace-065's example: S, M, B */
    const char *S_dec = "deflate12c,zstd20c", *S_enc = "zstd20c,deflate12c";
    const char *M_dec = "deflate12c", *M_enc = "deflate12c";
    const char *B_dec = "deflate12c,zstd20c", *B_enc = "deflate12c";
    CHECK(strcmp(sel(S_enc, M_dec), "deflate12c") == 0);
    CHECK(strcmp(sel(M_enc, S_dec), "deflate12c") == 0);
    CHECK(strcmp(sel(S_enc, B_dec), "zstd20c") == 0);
    CHECK(strcmp(sel(B_enc, S_dec), "deflate12c") == 0);
    /* a build offering no encodings: identity both ways */
    CHECK(strcmp(sel(S_enc, NULL), "identity") == 0);
    CHECK(strcmp(sel(NULL, S_dec), "identity") == 0);
    /* the sender's order breaks ties, not the receiver's */
    CHECK(strcmp(sel("deflate12c,zstd20c", "zstd20c,deflate12c"), "deflate12c") == 0);
    /* text comparison: an unknown token both list is selected (neither side needs to know it) */
    wk_iltp_offer a = offer("brotli9,zstd20c"), b = offer("zstd20c,brotli9");
    const char *t;
    size_t n;
    CHECK(wk_iltp_offer_select(&a, &b, &t, &n) == WK_ILTP_UNKNOWN && n == 7 && memcmp(t, "brotli9", 7) == 0);
    /* an unknown token only one side lists is skipped */
    CHECK(strcmp(sel("brotli9,zstd20c", "zstd20c"), "zstd20c") == 0);
}

static const char *NONCE = "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO";

/* The first k bytes of s through wk_iltp_preface_parse: DONE moves the view past the preface,
 * anything else leaves it untouched. */
static wk_result parse_n(const char *s, size_t k, wk_iltp_form form, wk_iltp_preface *p, wk_error *e)
{
    wk_in in = {(const uint8_t *)s, k, 0};
    wk_result r = wk_iltp_preface_parse(&in, form, p, e);
    CHECK(in.src == (const uint8_t *)s && in.size == k && in.pos == (r == WK_DONE ? p->len : 0));
    return r;
}

static wk_result parse(const char *s, wk_iltp_form form, wk_iltp_preface *p, wk_error *e)
{
    return parse_n(s, strlen(s), form, p, e);
}

static void test_preface_0_13(void)
{
    char s[2048];
    wk_iltp_preface p;
    wk_error e;
    /* the seed's example prefaces are 122 and 114 bytes */
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: deflate12c,zstd20c\nEncode: zstd20c,deflate12c\n\nXYZ", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_DONE);
    CHECK(p.len == 122 && p.form == WK_ILTP_FORM_0_13 && p.decode.count == 2 && p.encode.count == 2);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: deflate12c,zstd20c\nEncode: deflate12c\n\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_ANY, &p, &e) == WK_DONE && p.len == 114);
    /* every proper prefix needs more input */
    size_t full = strlen(s);
    for (size_t k = 0; k < full; k++)
        CHECK(parse_n(s, k, WK_ILTP_FORM_0_13, &p, &e) == WK_NEED_INPUT);
    /* format reproduces it byte for byte */
    uint8_t nonce[32], out[1024];
    size_t nl;
    CHECK(wk_b64a_decode(NONCE, 43, nonce, 32, &nl, &e) == WK_OK);
    size_t psize = 0;
    CHECK(wk_iltp_preface_size(WK_ILTP_FORM_0_13, nonce, "deflate12c,zstd20c", "deflate12c", &psize, &e) == WK_OK &&
          psize == 114);
    wk_out po = {out, sizeof out, 0};
    CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_0_13, nonce, "deflate12c,zstd20c", "deflate12c", &po, &e) == WK_DONE &&
          po.pos == 114);
    CHECK(memcmp(out, s, 114) == 0);
    /* one byte short: NEED_OUTPUT with the view untouched */
    memset(out, 0xAA, sizeof out);
    wk_out shortv = {out, 113, 0};
    CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_0_13, nonce, "deflate12c,zstd20c", "deflate12c", &shortv, &e) ==
              WK_NEED_OUTPUT && shortv.pos == 0 && out[0] == 0xAA);
    /* an invalid list is refused whatever the room */
    wk_out tiny = {out, 0, 0};
    CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_0_13, nonce, "Bad", NULL, &tiny, &e) == WK_ERROR && e.code == WK_ERR_ILTP_TOKEN);
    CHECK(wk_iltp_preface_size(WK_ILTP_FORM_0_13, nonce, "Bad", NULL, &psize, &e) == WK_ERR_ILTP_TOKEN);
    /* absent fields */
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\n\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_DONE && p.decode.len == 0 && p.encode.len == 0);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nEncode: zstd20c\n\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_DONE && p.decode.len == 0 && p.encode.count == 1);

    struct { const char *fmt; wk_code code; } bad[] = {
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nDecode: zstd20c\nNonce: %s\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nEncode: zstd20c\nDecode: zstd20c\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: zstd20c\nDecode: zstd20c\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nNonce: %s\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nColor: blue\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\r\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: \n\n", WK_ERR_ILTP_OFFER},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: zstd20c,zstd20c\n\n", WK_ERR_ILTP_OFFER},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nEncode: identity\n\n", WK_ERR_ILTP_OFFER},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nEncode: Zstd\n\n", WK_ERR_ILTP_TOKEN},
        {"\xF0\x9F\xAA\xA2: iltp/0.13\n\n%s", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA2: iltp/0.14\nNonce: %s\n\n", WK_ERR_ILTP_VERSION},
        {"\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", WK_ERR_ILTP_VERSION}, /* other form */
        {"\xF0\x9F\xAA\xA2: ILTP/0.13\nNonce: %s\n\n", WK_ERR_ILTP_PREFACE},
        {"\xF0\x9F\xAA\xA3: iltp/0.13\nNonce: %s\n\n", WK_ERR_ILTP_PREFACE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(s, sizeof s, bad[i].fmt, NONCE, NONCE);
        wk_result r = parse(s, WK_ILTP_FORM_0_13, &p, &e);
        CHECKF(r == WK_ERROR && e.code == bad[i].code, "case %zu: %d %s", i, r, wk_error_name(e.code));
    }
    /* nonces: zero, short, bad alphabet, non-canonical tail */
    const char *nonces[] = {"0000000000000000000000000000000000000000000",
                            "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlp",
                            "svyLzSM7ffc91i+XDbkMnuOsdjsw_6GrXpTSckqHlpO",
                            "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpP"};
    for (int i = 0; i < 4; i++) {
        snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\n\n", nonces[i]);
        CHECKF(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_NONCE, "nonce %d", i);
    }
    /* longer than 1024 bytes: many unknown tokens */
    int n = snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: ", NONCE);
    for (int k = 0; n < 1100; k++) n += snprintf(s + n, sizeof s - (size_t)n, "%stok%d", k ? "," : "", k);
    snprintf(s + n, sizeof s - (size_t)n, "\n\n");
    CHECK(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_PREFACE_TOO_LONG);
    /* and an unterminated one is refused at the cap, not buffered forever */
    CHECK(parse_n(s, 1030, WK_ILTP_FORM_0_13, &p, &e) == WK_ERROR &&
          e.code == WK_ERR_ILTP_PREFACE_TOO_LONG);
}

static void test_preface_1_0(void)
{
    char s[256];
    wk_iltp_preface p;
    wk_error e;
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", NONCE);
    CHECK(strlen(s) == 59);
    CHECK(parse(s, WK_ILTP_FORM_1_0, &p, &e) == WK_DONE && p.len == 59 && p.form == WK_ILTP_FORM_1_0);
    CHECK(p.decode.len == 0 && p.encode.len == 0);
    for (size_t k = 0; k < 59; k++)
        CHECK(parse_n(s, k, WK_ILTP_FORM_1_0, &p, &e) == WK_NEED_INPUT);
    CHECK(parse(s, WK_ILTP_FORM_0_13, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_VERSION);
    uint8_t nonce[32], out[100];
    size_t nl;
    wk_b64a_decode(NONCE, 43, nonce, 32, &nl, &e);
    wk_out po = {out, sizeof out, 0};
    CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_1_0, nonce, NULL, NULL, &po, &e) == WK_DONE && po.pos == 59 &&
          memcmp(out, s, 59) == 0);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0 %sX\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_1_0, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_PREFACE && e.offset == 58);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0 %.42s\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_1_0, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_NONCE && e.offset == 57);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0 %sXYZ", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_1_0, &p, &e) == WK_ERROR && e.code == WK_ERR_ILTP_PREFACE);
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0  %s\n", NONCE);
    CHECK(parse(s, WK_ILTP_FORM_1_0, &p, &e) == WK_ERROR);
    uint8_t zero[32] = {0};
    wk_out zo = {out, sizeof out, 0};
    CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_1_0, zero, NULL, NULL, &zo, &e) == WK_ERROR && e.code == WK_ERR_ARG && zo.pos == 0);
    size_t zs;
    CHECK(wk_iltp_preface_size(WK_ILTP_FORM_1_0, zero, NULL, NULL, &zs, &e) == WK_ERR_ARG);
}

static void test_pair(void)
{
    uint8_t a[32], b[32];
    wk_error e;
    memset(a, 1, 32);
    memcpy(b, a, 32);
    CHECK(wk_iltp_nonce_pair_check(a, b, &e) == WK_ERR_ILTP_SAME_NONCE && e.category == WK_CAT_PEER_PROTOCOL);
    b[31] = 2;
    CHECK(wk_iltp_nonce_pair_check(a, b, &e) == WK_OK);
}

/* The whole-message shape: the preface is read at in->pos among other bytes; DONE moves past it
 * and leaves what follows, NEED_INPUT and ERROR leave the view, offsets count from its first byte. */
static void test_preface_view(void)
{
    char s[256];
    int lead = snprintf(s, sizeof s, "junk");
    int n = lead + snprintf(s + lead, sizeof s - (size_t)lead, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\nNEXT", NONCE);
    wk_iltp_preface p;
    wk_error e;
    wk_in in = {(const uint8_t *)s, (size_t)n, (size_t)lead};
    CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &p, &e) == WK_DONE && p.len == 59 &&
          in.pos == (size_t)lead + 59 && memcmp(s + in.pos, "NEXT", 4) == 0);
    in = (wk_in){(const uint8_t *)s, (size_t)lead + 30, (size_t)lead};
    CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &p, &e) == WK_NEED_INPUT && in.pos == (size_t)lead);
    s[lead + 20] = '!'; /* inside the nonce: offset 20 of the preface, not of the buffer */
    in = (wk_in){(const uint8_t *)s, (size_t)n, (size_t)lead};
    CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &p, &e) == WK_ERROR && in.pos == (size_t)lead &&
          e.code == WK_ERR_ILTP_NONCE && e.has_offset && e.offset == 20);
    in = (wk_in){NULL, 0, 0};
    CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &p, &e) == WK_NEED_INPUT && in.pos == 0);
    in = (wk_in){(const uint8_t *)s, 3, 4};
    CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &p, &e) == WK_ERROR && e.code == WK_ERR_ARG);
}

int main(void)
{
    test_pair();
    test_tokens();
    test_offer_parse();
    test_selection();
    test_preface_0_13();
    test_preface_1_0();
    test_preface_view();
    return wk_test_summary("iltp_offer");
}
