/* CRC-32C and the Snappy mask (spec 2.3): the check value, the mask examples, ISA-L against our
 * slicing-by-8 table and a bitwise reference written here, over lengths 0..300 at every alignment,
 * large buffers (including one above ISA-L's int length, fed in pieces) and chained updates; the
 * framing decoder's fused checksum-and-copy (wk_eth_crc32c_copy, internal) against both. */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "eth_internal.h" /* white-box: src/eth is on this test's include path (snappy.cmake) */

/* Bit-at-a-time reference: reflected polynomial 0x82F63B78, init and final XOR 0xFFFFFFFF. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static void test_check_value(void)
{
    const char *s = "123456789";
    CHECK(wk_eth_crc32c(s, 9) == 0xE3069283u);
    CHECK(wk_eth_crc32c_table(s, 9) == 0xE3069283u);
    CHECK(crc_bitwise((const uint8_t *)s, 9) == 0xE3069283u);
    CHECK(wk_eth_crc32c(NULL, 0) == 0);
    CHECK(wk_eth_crc32c_table(NULL, 0) == 0);
    CHECK(wk_eth_crc32c_update(0, s, 9) == 0xE3069283u);
    /* RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA, of 0xFF -> 0x62A8AB43 */
    uint8_t z[32], f[32];
    memset(z, 0, 32);
    memset(f, 0xff, 32);
    CHECK(wk_eth_crc32c(z, 32) == 0x8A9136AAu);
    CHECK(wk_eth_crc32c(f, 32) == 0x62A8AB43u);
    CHECK(wk_eth_crc32c_table(z, 32) == 0x8A9136AAu);
    CHECK(wk_eth_crc32c_table(f, 32) == 0x62A8AB43u);
}

static void le32(uint32_t v, uint8_t out[4])
{
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

static void test_mask_examples(void)
{
    struct {
        const char *data;
        size_t n;
        uint8_t masked[4];
    } ex[] = {
        {"", 0, {0xd8, 0xea, 0x82, 0xa2}},
        {"a", 1, {0x78, 0x6e, 0xe4, 0x28}},
        {"1234", 4, {0x4d, 0xd7, 0x60, 0x8c}},
        {"\x01\x00\x00\x00\x00\x00\x00\x00", 8, {0x01, 0x75, 0xde, 0x41}},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        uint8_t b[4];
        uint32_t crc = wk_eth_crc32c(ex[i].data, ex[i].n);
        le32(wk_eth_snappy_mask_crc(crc), b);
        CHECKF(memcmp(b, ex[i].masked, 4) == 0, "mask example %zu: %02x%02x%02x%02x", i, b[0], b[1],
               b[2], b[3]);
        uint32_t stored = (uint32_t)ex[i].masked[0] | (uint32_t)ex[i].masked[1] << 8 |
                          (uint32_t)ex[i].masked[2] << 16 | (uint32_t)ex[i].masked[3] << 24;
        CHECK(wk_eth_snappy_unmask_crc(stored) == crc);
    }
    CHECK(wk_eth_snappy_mask_crc(0) == 0xA282EAD8u);
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t x = (uint32_t)rng();
        if (wk_eth_snappy_unmask_crc(wk_eth_snappy_mask_crc(x)) != x) bad++;
        uint32_t rot = (x >> 15) | (x << 17);
        if (wk_eth_snappy_mask_crc(x) != (uint32_t)(rot + 0xA282EAD8u)) bad++;
    }
    CHECK(bad == 0);
}

static void test_lengths_and_alignment(void)
{
    uint8_t buf[300 + 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rng();
    int bad = 0;
    for (size_t align = 0; align < 8; align++)
        for (size_t n = 0; n <= 300; n++) {
            const uint8_t *p = buf + align;
            uint32_t ref = crc_bitwise(p, n);
            if (wk_eth_crc32c(p, n) != ref) bad++;
            if (wk_eth_crc32c_table(p, n) != ref) bad++;
        }
    CHECKF(bad == 0, "%d mismatches over lengths 0..300 x 8 alignments", bad);
}

static void test_chained(void)
{
    size_t n = 100000;
    uint8_t *p = malloc(n + 8);
    for (size_t i = 0; i < n + 8; i++)
        p[i] = (uint8_t)rng();
    uint32_t ref = crc_bitwise(p + 3, n);
    CHECK(wk_eth_crc32c(p + 3, n) == ref);
    CHECK(wk_eth_crc32c_table(p + 3, n) == ref);
    CHECK(wk_eth_crc32c_table(p + 5, n - 2) == crc_bitwise(p + 5, n - 2));
    int bad = 0;
    for (int t = 0; t < 200; t++) {
        uint32_t c = 0;
        size_t off = 0;
        while (off < n) {
            size_t k = (size_t)(rng() % 3000);
            if (k > n - off) k = n - off;
            c = wk_eth_crc32c_update(c, p + 3 + off, k);
            off += k;
        }
        if (c != ref) bad++;
    }
    CHECK(bad == 0);
    /* a zero-length update changes nothing, also from a nonzero state */
    CHECK(wk_eth_crc32c_update(ref, p, 0) == ref);
    CHECK(wk_eth_crc32c_update(wk_eth_crc32c(p, 10), p + 10, 20) == wk_eth_crc32c(p, 30));
    free(p);
}

/* Above INT_MAX bytes ISA-L must be fed in pieces. calloc gives zero pages that cost no memory
 * until written, and the CRC of zeros is computed piecewise below as a cross-check. */
static void test_large(void)
{
    size_t n = (size_t)1 << 20;
    uint8_t *p = malloc(n + 7);
    for (size_t i = 0; i < n + 7; i++)
        p[i] = (uint8_t)rng();
    CHECK(wk_eth_crc32c(p + 7, n) == crc_bitwise(p + 7, n));
    CHECK(wk_eth_crc32c_table(p + 7, n) == wk_eth_crc32c(p + 7, n));
    free(p);

    size_t big = ((size_t)1 << 31) + 12345; /* above INT_MAX */
    uint8_t *z = calloc(big, 1);
    if (!z) {
        fprintf(stderr, "note: skipping the 2 GiB CRC case (no memory)\n");
        return;
    }
    uint32_t whole = wk_eth_crc32c(z, big);
    uint32_t c = 0;
    size_t piece = 100000000; /* well below INT_MAX: one ISA-L call each */
    for (size_t off = 0; off < big; off += piece)
        c = wk_eth_crc32c_update(c, z + off, big - off < piece ? big - off : piece);
    CHECK(whole == c);
    /* the table version has no length limit to cross; one mid-size check of zeros is enough */
    CHECK(wk_eth_crc32c_table(z, 12345678) == wk_eth_crc32c(z, 12345678));
    free(z);
}

/* wk_eth_crc32c_copy: the same CRC as wk_eth_crc32c_update and the same bytes as memcpy, at lengths
 * around its 4 KiB steps, chained, at odd alignments; nothing written past the copy. */
static void test_crc_copy(void)
{
    static const size_t lens[] = {0, 1, 7, 4095, 4096, 4097, 8191, 8192, 12289, 65536, 65540};
    uint8_t *src = malloc(65540 + 16), *dst = malloc(65540 + 32);
    for (size_t i = 0; i < 65540 + 16; i++) src[i] = (uint8_t)rng();
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t a = 0; a < 3; a++) {
            size_t n = lens[li];
            memset(dst, 0xee, 65540 + 32);
            uint32_t prefix = wk_eth_crc32c(src, a * 5);
            uint32_t got = wk_eth_crc32c_copy(dst + a, src + a * 5, n, prefix);
            CHECKF(got == wk_eth_crc32c_update(prefix, src + a * 5, n) &&
                       (n == 0 || memcmp(dst + a, src + a * 5, n) == 0) && dst[a + n] == 0xee &&
                       (a == 0 || dst[a - 1] == 0xee),
                   "wk_eth_crc32c_copy length %zu, alignment %zu", n, a);
            if (a == 0 && n < 9000) CHECK(wk_eth_crc32c_copy(dst, src, n, 0) == crc_bitwise(src, n));
        }
    free(src);
    free(dst);
}

int main(void)
{
    test_check_value();
    test_mask_examples();
    test_lengths_and_alignment();
    test_chained();
    test_large();
    test_crc_copy();
    return wk_test_summary("eth_crc32c");
}
