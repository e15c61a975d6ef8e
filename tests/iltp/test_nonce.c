/* Lace-060 session nonces: the derivation against an independent BLAKE3 (the b3sum tool, run on a
 * file holding the 39-byte input built here by hand), skip rules, exhaustion, seed checks, and the
 * B64A text form.
 *
 * The all-zero-candidate skip in wk_iltp_nonce_gen_next is not exercised: finding a seed and sequence
 * whose keyed BLAKE3 is 32 zero bytes is a 2^256 search, and the test does not fake one. The branch
 * is the same `continue` as the peer-nonce skip, which is tested below. */
#include "wk_test.h"
#include <wirekit/iltp.h>
#include <stdint.h>
#include <unistd.h>

/* ---- independent reference: b3sum --keyed ------------------------------------------------- */

static int have_b3sum = -1; /* -1 unknown, 0 no, 1 yes */

/* Builds the derivation input byte by byte, without the library's helpers. */
static void build_input(uint64_t seq, unsigned char in[39])
{
    const char *ctx = "lace-iltp/1.0/session-nonce/v1";
    for (int i = 0; i < 30; i++) in[i] = (unsigned char)ctx[i];
    in[30] = 0;
    for (int i = 0; i < 8; i++) in[31 + i] = (unsigned char)(seq >> (56 - 8 * i));
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool write_temp(char *path_template, const void *data, size_t n)
{
    int fd = mkstemp(path_template);
    if (fd < 0) return false;
    bool ok = write(fd, data, n) == (ssize_t)n;
    return close(fd) == 0 && ok;
}

/* Runs `b3sum --keyed --no-names INPUT < KEY`; false if b3sum is missing or fails. */
static bool b3sum_nonce(const uint8_t seed[32], uint64_t seq, uint8_t out[32])
{
    if (have_b3sum == 0) return false;
    if (have_b3sum < 0) {
        have_b3sum = system("command -v b3sum >/dev/null 2>&1") == 0;
        if (!have_b3sum) {
            printf("note: b3sum not found; only the pinned vectors check the derivation\n");
            return false;
        }
    }
    unsigned char input[39];
    build_input(seq, input);
    char in_path[] = "/tmp/wk_nonce_in_XXXXXX", key_path[] = "/tmp/wk_nonce_key_XXXXXX";
    bool ok = write_temp(in_path, input, sizeof input);
    ok = write_temp(key_path, seed, 32) && ok;
    char cmd[160], line[128] = "";
    if (ok) {
        snprintf(cmd, sizeof cmd, "b3sum --keyed --no-names %s < %s", in_path, key_path);
        FILE *p = popen(cmd, "r");
        ok = p && fgets(line, sizeof line, p) != NULL;
        if (p && pclose(p) != 0) ok = false;
    }
    unlink(in_path);
    unlink(key_path);
    if (!ok || strlen(line) < 64) return false;
    for (int i = 0; i < 32; i++) {
        int hi = unhex(line[2 * i]), lo = unhex(line[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static void hex_to(const char *hex, uint8_t out[32])
{
    for (int i = 0; i < 32; i++) out[i] = (uint8_t)(unhex(hex[2 * i]) << 4 | unhex(hex[2 * i + 1]));
}

/* ---- seeds -------------------------------------------------------------------------------- */

static uint8_t seed_count[32]; /* 00 01 .. 1f */
static uint8_t seed_ff[32];    /* ff * 32 */
static uint8_t seed_one[32];   /* 00 * 31, 01: the smallest nonzero seed */

static void init_seeds(void)
{
    for (int i = 0; i < 32; i++) {
        seed_count[i] = (uint8_t)i;
        seed_ff[i] = 0xff;
        seed_one[i] = 0;
    }
    seed_one[31] = 1;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_against_b3sum(void)
{
    static const uint64_t seqs[] = {0, 1, 2, 255, 256, UINT64_C(1) << 32, UINT64_MAX - 1, UINT64_MAX};
    const uint8_t *seeds[] = {seed_count, seed_ff, seed_one};
    int compared = 0;
    for (size_t s = 0; s < 3; s++) {
        for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
            uint8_t want[32], got[32];
            wk_iltp_nonce_candidate_derive(seeds[s], seqs[i], got);
            if (!b3sum_nonce(seeds[s], seqs[i], want)) {
                if (have_b3sum == 1) CHECKF(0, "b3sum failed for seed %zu sequence %llu", s,
                                            (unsigned long long)seqs[i]);
                continue;
            }
            compared++;
            CHECKF(memcmp(want, got, 32) == 0, "seed %zu sequence %llu differs from b3sum", s,
                   (unsigned long long)seqs[i]);
        }
    }
    if (have_b3sum == 1) CHECK(compared == 24);
}

/* Values computed with b3sum 1.2.0 (so the derivation stays pinned where b3sum is missing). */
static void test_pinned(void)
{
    static const struct {
        const uint8_t *seed;
        uint64_t seq;
        const char *hex;
    } v[] = {
        {seed_count, 0, "a88efb5ec17d1fe5f644cb9bd56e3a8a19e6d7dcd44a3e8c4f481202c8992b62"},
        {seed_count, 1, "9f4aab3142a672e3766222a7db0493bc84a739b7b503bb0ae7730dbe399c3d11"},
        {seed_count, UINT64_MAX, "c6cf48018c94d9a1f38ceda5663f1007e83566d479eb8f24ed1e32bdc7aad91a"},
        {seed_ff, UINT64_C(1) << 32, "7cf5f9252550625aa7fd1e27dfc87489ad21c028eaca1948af0eb4d457c2e105"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t want[32], got[32];
        hex_to(v[i].hex, want);
        wk_iltp_nonce_candidate_derive(v[i].seed, v[i].seq, got);
        CHECKF(memcmp(want, got, 32) == 0, "pinned vector %zu", i);
    }
}

static void test_sequence(void)
{
    wk_iltp_nonce_gen g;
    wk_error err;
    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, 0, &err) == WK_OK);
    CHECK(g.next == 0 && !g.exhausted);
    uint8_t n[3][32], c[32];
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t used = 99;
        CHECK(wk_iltp_nonce_gen_next(&g, NULL, n[i], &used, &err) == WK_OK);
        CHECK(used == i);
        wk_iltp_nonce_candidate_derive(seed_count, i, c);
        CHECK_MEM(n[i], c, 32);
    }
    CHECK(g.next == 3);
    CHECK(memcmp(n[0], n[1], 32) != 0 && memcmp(n[1], n[2], 32) != 0 && memcmp(n[0], n[2], 32) != 0);
    /* used_sequence may be NULL */
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, n[0], NULL, &err) == WK_OK);
    wk_iltp_nonce_candidate_derive(seed_count, 3, c);
    CHECK_MEM(n[0], c, 32);

    /* a different seed gives different nonces; the seed is copied */
    uint8_t seed[32];
    memcpy(seed, seed_ff, 32);
    CHECK(wk_iltp_nonce_gen_init(&g, seed, 0, &err) == WK_OK);
    memset(seed, 0, 32);
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, n[1], NULL, &err) == WK_OK);
    wk_iltp_nonce_candidate_derive(seed_ff, 0, c);
    CHECK_MEM(n[1], c, 32);
    wk_iltp_nonce_candidate_derive(seed_count, 0, c);
    CHECK(memcmp(n[1], c, 32) != 0);

    /* a start other than 0 */
    CHECK(wk_iltp_nonce_gen_init(&g, seed_one, 1000, &err) == WK_OK);
    uint64_t used = 0;
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, n[0], &used, &err) == WK_OK && used == 1000);
    wk_iltp_nonce_candidate_derive(seed_one, 1000, c);
    CHECK_MEM(n[0], c, 32);
}

static void test_peer_skip(void)
{
    wk_iltp_nonce_gen g;
    wk_error err;
    uint8_t peer[32], out[32], c1[32];
    wk_iltp_nonce_candidate_derive(seed_count, 0, peer);
    wk_iltp_nonce_candidate_derive(seed_count, 1, c1);

    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, 0, &err) == WK_OK);
    uint64_t used = 99;
    CHECK(wk_iltp_nonce_gen_next(&g, peer, out, &used, &err) == WK_OK);
    CHECK(used == 1);
    CHECK_MEM(out, c1, 32);
    CHECK(g.next == 2); /* sequence 0 was consumed by the skip */

    /* a peer nonce that matches nothing changes nothing */
    uint8_t other[32];
    memset(other, 0x5a, 32);
    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, 0, &err) == WK_OK);
    CHECK(wk_iltp_nonce_gen_next(&g, other, out, &used, &err) == WK_OK && used == 0);
    CHECK_MEM(out, peer, 32);

    /* the skip in the middle of the sequence */
    uint8_t p5[32], c6[32];
    wk_iltp_nonce_candidate_derive(seed_ff, 5, p5);
    wk_iltp_nonce_candidate_derive(seed_ff, 6, c6);
    CHECK(wk_iltp_nonce_gen_init(&g, seed_ff, 5, &err) == WK_OK);
    CHECK(wk_iltp_nonce_gen_next(&g, p5, out, &used, &err) == WK_OK && used == 6);
    CHECK_MEM(out, c6, 32);
}

static void check_exhausted(wk_code rc, const wk_error *err, const uint8_t out[32])
{
    CHECK(rc == WK_ERR_ILTP_NONCE_EXHAUSTED);
    CHECK(err->code == WK_ERR_ILTP_NONCE_EXHAUSTED);
    CHECK(err->category == WK_CAT_INTEGRATION);
    CHECK(strcmp(wk_category_name(err->category), "Integration") == 0);
    CHECK(strcmp(wk_error_name(err->code), "ILTP_ERR_NONCE_EXHAUSTED") == 0);
    CHECK(!err->has_offset);
    static const uint8_t zero[32];
    CHECK_MEM(out, zero, 32); /* never a usable nonce after a failure */
}

static void test_exhaustion(void)
{
    wk_iltp_nonce_gen g;
    wk_error err;
    uint8_t out[32], cmax[32];
    uint64_t used = 0;
    wk_iltp_nonce_candidate_derive(seed_count, UINT64_MAX, cmax);

    /* UINT64_MAX is usable exactly once */
    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, UINT64_MAX, &err) == WK_OK);
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, out, &used, &err) == WK_OK);
    CHECK(used == UINT64_MAX);
    CHECK_MEM(out, cmax, 32);
    CHECK(g.exhausted);
    used = 7;
    check_exhausted(wk_iltp_nonce_gen_next(&g, NULL, out, &used, &err), &err, out);
    CHECK(used == 7); /* untouched on failure */
    check_exhausted(wk_iltp_nonce_gen_next(&g, NULL, out, &used, &err), &err, out); /* stays exhausted */

    /* the last value equals the peer nonce: exhausted at once */
    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, UINT64_MAX, &err) == WK_OK);
    check_exhausted(wk_iltp_nonce_gen_next(&g, cmax, out, &used, &err), &err, out);

    /* UINT64_MAX - 1 skipped for the peer, UINT64_MAX used, then nothing */
    uint8_t cmax1[32];
    wk_iltp_nonce_candidate_derive(seed_count, UINT64_MAX - 1, cmax1);
    CHECK(wk_iltp_nonce_gen_init(&g, seed_count, UINT64_MAX - 1, &err) == WK_OK);
    CHECK(wk_iltp_nonce_gen_next(&g, cmax1, out, &used, &err) == WK_OK && used == UINT64_MAX);
    CHECK_MEM(out, cmax, 32);
    check_exhausted(wk_iltp_nonce_gen_next(&g, cmax1, out, &used, &err), &err, out);

    /* err may be NULL */
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, out, NULL, NULL) == WK_ERR_ILTP_NONCE_EXHAUSTED);
}

static void test_args(void)
{
    wk_iltp_nonce_gen g;
    wk_error err;
    uint8_t zero[32] = {0}, out[32];
    CHECK(wk_iltp_nonce_gen_init(&g, zero, 0, &err) == WK_ERR_ARG);
    CHECK(err.code == WK_ERR_ARG && err.category == WK_CAT_INTEGRATION);
    CHECK(wk_iltp_nonce_gen_init(&g, zero, 0, NULL) == WK_ERR_ARG);
    CHECK(wk_iltp_nonce_gen_init(NULL, seed_one, 0, &err) == WK_ERR_ARG);
    CHECK(wk_iltp_nonce_gen_init(&g, NULL, 0, &err) == WK_ERR_ARG);
    CHECK(wk_iltp_nonce_gen_next(NULL, NULL, out, NULL, &err) == WK_ERR_ARG);
    CHECK(wk_iltp_nonce_gen_init(&g, seed_one, 0, &err) == WK_OK);
    CHECK(wk_iltp_nonce_gen_next(&g, NULL, NULL, NULL, &err) == WK_ERR_ARG);
    CHECK(g.next == 0); /* a rejected call consumes nothing */
}

static void test_b64a(void)
{
    CHECK(wk_b64a_encoded_len(32) == WK_ILTP_NONCE_TEXT_LEN);
    wk_iltp_nonce_gen g;
    wk_error err;
    CHECK(wk_iltp_nonce_gen_init(&g, seed_ff, 0, &err) == WK_OK);
    for (int i = 0; i < 16; i++) {
        uint8_t nonce[32], back[32];
        char text[WK_ILTP_NONCE_TEXT_LEN + 1];
        CHECK(wk_iltp_nonce_gen_next(&g, NULL, nonce, NULL, &err) == WK_OK);
        size_t n = wk_b64a_encode(nonce, 32, text);
        text[n] = 0;
        CHECK(n == 43);
        size_t got = 0;
        CHECK(wk_b64a_decode(text, n, back, sizeof back, &got, &err) == WK_OK && got == 32);
        CHECK_MEM(back, nonce, 32);
        /* and it makes a valid 59-byte 1.0 preface */
        uint8_t pre[WK_ILTP_PREFACE_MAX];
        wk_out po = {pre, sizeof pre, 0};
        CHECK(wk_iltp_preface_encode(WK_ILTP_FORM_1_0, nonce, NULL, NULL, &po, &err) == WK_DONE);
        size_t plen = po.pos;
        CHECK(plen == 59);
        wk_iltp_preface p;
        wk_in in = {pre, plen, 0};
        CHECK(wk_iltp_preface_parse(&in, WK_ILTP_FORM_1_0, &p, &err) == WK_DONE && in.pos == plen);
        CHECK_MEM(p.nonce, nonce, 32);
        CHECK(memcmp(pre + 6 + 9, text, 43) == 0); /* lead, "iltp/1.0 ", nonce */
    }
}

int main(void)
{
    init_seeds();
    test_against_b3sum();
    test_pinned();
    test_sequence();
    test_peer_skip();
    test_exhaustion();
    test_args();
    test_b64a();
    return wk_test_summary("iltp_nonce");
}
