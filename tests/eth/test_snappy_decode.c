/* Our Snappy block decoder (src/eth/snappy_decode.c), every kernel forced in turn: the kernel
 * hooks; every copy kind at every offset 1..80 and length, placed in the fast loop and near both
 * ends, against a byte-by-byte reference; libsnappy's encodings of generated data (runs and
 * periodic patterns of every period 1..70, text, random, sizes 0..200000) and of the vectors
 * (the Rinkeby RLP block, the Bellatrix block, the ssz_snappy blocks) decoded to the same bytes;
 * mutated and grammar-built blocks with the validator's verdict, code and offset, and libsnappy's
 * bytes; all of it with the input ending at a PROT_NONE page and the output ending at one, then
 * starting right after one (picohttpparser's guard pages): a read or write outside the input or
 * the output by any fast path is a crash. Usage: test_eth_snappy_decode tests/vectors/eth */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_eth.h"
#include <snappy-c.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int wk_eth_snappy__set_kernel(int id);
const char *wk_eth_snappy__kernel_name(int id);
int wk_eth_snappy__kernel(void);
#define KERNELS 4


static const char *vec_dir;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static const char *code_name(wk_code c) { return c == WK_OK ? "OK" : wk_error_name(c); }

/* ---------------------------------------------------------------------------------------------
 * Guarded buffers: n usable bytes that end exactly at a PROT_NONE page (tail) or start right
 * after one (head).
 * ------------------------------------------------------------------------------------------- */
typedef struct guarded {
    uint8_t *map;
    size_t map_len;
    uint8_t *p;
} guarded;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static guarded guarded_alloc(size_t n, bool tail)
{
    size_t pg = page_size(), body = (n + pg - 1) / pg * pg;
    if (body == 0) body = pg;
    guarded g;
    g.map_len = body + 2 * pg;
    g.map = mmap(NULL, g.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.map == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    /* [guard][body][guard] */
    if (mprotect(g.map, pg, PROT_NONE) != 0 || mprotect(g.map + pg + body, pg, PROT_NONE) != 0) {
        perror("mprotect");
        exit(1);
    }
    g.p = tail ? g.map + pg + body - n : g.map + pg;
    return g;
}

static void guarded_free(guarded *g) { munmap(g->map, g->map_len); }

/* ---------------------------------------------------------------------------------------------
 * Reference: a byte-by-byte decoder written here from spec 1 (valid blocks only).
 * ------------------------------------------------------------------------------------------- */
static bool ref_decode(const uint8_t *s, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    uint64_t want = 0;
    size_t i = 0;
    for (int sh = 0;; sh += 7) {
        if (i == n || i == 5) return false;
        want |= (uint64_t)(s[i] & 0x7f) << sh;
        if (!(s[i++] & 0x80)) break;
    }
    if (want > cap) return false;
    size_t o = 0;
    while (i < n) {
        uint8_t t = s[i++];
        uint64_t len, off = 0;
        if ((t & 3) == 0) {
            len = (t >> 2) + 1u;
            if (len > 60) {
                size_t k = len - 60;
                if (n - i < k) return false;
                len = 0;
                for (size_t j = 0; j < k; j++) len |= (uint64_t)s[i + j] << (8 * j);
                len++;
                i += k;
            }
            if (len > n - i || len > want - o) return false;
            for (size_t j = 0; j < len; j++) out[o++] = s[i++];
            continue;
        }
        size_t k = (t & 3) == 1 ? 1 : (t & 3) == 2 ? 2 : 4;
        if (n - i < k) return false;
        if ((t & 3) == 1) {
            len = 4 + ((t >> 2) & 7);
            off = ((uint64_t)(t >> 5) << 8) | s[i];
        } else {
            len = 1 + (t >> 2);
            for (size_t j = 0; j < k; j++) off |= (uint64_t)s[i + j] << (8 * j);
        }
        i += k;
        if (off == 0 || off > o || len > want - o) return false;
        for (size_t j = 0; j < len; j++, o++) out[o] = out[o - off];
    }
    *out_len = o;
    return o == want;
}

/* ---------------------------------------------------------------------------------------------
 * One block through every kernel, guarded, against the validator (verdict, code, offset), the
 * reference decoder and libsnappy (bytes).
 * ------------------------------------------------------------------------------------------- */
static int kernel_ids[KERNELS], nkernels;
static long blocks_checked;

static void check_block(const uint8_t *blk, size_t n, const char *what)
{
    blocks_checked++;
    wk_error ev;
    uint64_t declared = 0;
    wk_code v = wk_eth_snappy_block_validate(LOOK(blk, n), UINT64_MAX, &declared, &ev);
    if (v == WK_OK || v == WK_ERR_SNAPPY_TRUNCATED || v == WK_ERR_SNAPPY_OVERRUN ||
        v == WK_ERR_SNAPPY_BAD_OFFSET || v == WK_ERR_SNAPPY_LENGTH_MISMATCH) {
        if (wk_eth_snappy_block_peek(LOOK(blk, n), UINT64_MAX, &declared, NULL, NULL) != WK_OK) return;
    } else {
        return; /* a preamble failure: no decoder runs */
    }
    if (declared > ((uint64_t)64 << 20)) return;
    size_t dn = (size_t)declared;
    uint8_t *ref = malloc(dn ? dn : 1);
    size_t ref_len = 0;
    bool ref_ok = ref_decode(blk, n, ref, dn, &ref_len);
    CHECKF(ref_ok == (v == WK_OK), "%s: reference %s, validator %s", what,
           ref_ok ? "accepts" : "rejects", code_name(v));
    if (ref_ok) {
        size_t lib_len = dn;
        uint8_t *lib = malloc(dn ? dn : 1);
        CHECKF(snappy_uncompress((const char *)blk, n, (char *)lib, &lib_len) == SNAPPY_OK &&
                   lib_len == dn && (dn == 0 || memcmp(lib, ref, dn) == 0),
               "%s: libsnappy differs from the reference", what);
        free(lib);
    }
    for (int place = 0; place < 2; place++) {
        guarded gi = guarded_alloc(n, place == 0), go = guarded_alloc(dn, place == 0);
        memcpy(gi.p, blk, n);
        for (int ki = 0; ki < nkernels; ki++) {
            wk_eth_snappy__set_kernel(kernel_ids[ki]);
            wk_error e;
            size_t ol = SIZE_MAX;
            memset(go.p, 0x5a, dn);
            wk_code c = enc_out(wk_eth_snappy_block_decode(IN(gi.p, n), UINT64_MAX, VIEW(go.p, dn), &e), &ol, &e);
            CHECKF(c == v, "%s [%s, %s guards]: decode %s, validator %s", what,
                   wk_eth_snappy__kernel_name(kernel_ids[ki]), place ? "head" : "tail", code_name(c),
                   code_name(v));
            if (c != WK_OK && c == v)
                CHECKF(e.offset == ev.offset && e.category == WK_CAT_PEER_PROTOCOL,
                       "%s [%s]: %s at %llu, validator at %llu", what,
                       wk_eth_snappy__kernel_name(kernel_ids[ki]), code_name(c),
                       (unsigned long long)e.offset, (unsigned long long)ev.offset);
            if (c == WK_OK && ref_ok)
                CHECKF(ol == dn && (dn == 0 || memcmp(go.p, ref, dn) == 0),
                       "%s [%s, %s guards]: bytes differ from the reference", what,
                       wk_eth_snappy__kernel_name(kernel_ids[ki]), place ? "head" : "tail");
        }
        guarded_free(&gi);
        guarded_free(&go);
    }
    free(ref);
}

/* ---------------------------------------------------------------------------------------------
 * Block building
 * ------------------------------------------------------------------------------------------- */
typedef struct bb {
    uint8_t *p;
    size_t n, cap;
    size_t produced;
} bb;

static void bb_byte(bb *b, uint8_t x)
{
    if (b->n == b->cap) {
        b->cap = b->cap * 2 + 256;
        b->p = realloc(b->p, b->cap);
    }
    b->p[b->n++] = x;
}

static void bb_literal(bb *b, const uint8_t *s, size_t len)
{
    if (len <= 60) {
        bb_byte(b, (uint8_t)((len - 1) << 2));
    } else {
        size_t v = len - 1, k = v < 256 ? 1 : v < 65536 ? 2 : v < (1u << 24) ? 3 : 4;
        bb_byte(b, (uint8_t)((59 + k) << 2));
        for (size_t j = 0; j < k; j++) bb_byte(b, (uint8_t)(v >> (8 * j)));
    }
    for (size_t j = 0; j < len; j++) bb_byte(b, s ? s[j] : (uint8_t)rng());
    b->produced += len;
}

/* kind 1, 2 or 4 (bytes of offset); the caller keeps len and offset within the kind's range. */
static void bb_copy(bb *b, unsigned kind, size_t off, size_t len)
{
    if (kind == 1) {
        bb_byte(b, (uint8_t)(1 | ((len - 4) << 2) | ((off >> 8) << 5)));
        bb_byte(b, (uint8_t)off);
    } else {
        bb_byte(b, (uint8_t)((kind == 2 ? 2 : 3) | ((len - 1) << 2)));
        for (unsigned j = 0; j < kind; j++) bb_byte(b, (uint8_t)(off >> (8 * j)));
    }
    b->produced += len;
}

/* The finished block: the preamble for `declared` (b->produced unless forced) and the elements. */
static uint8_t *bb_finish(const bb *b, uint64_t declared, size_t *n)
{
    uint8_t pre[5];
    size_t k = 0;
    uint64_t v = declared;
    do {
        pre[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) pre[k] |= 0x80;
        k++;
    } while (v && k < 5);
    uint8_t *out = malloc(k + b->n + 1);
    memcpy(out, pre, k);
    if (b->n) memcpy(out + k, b->p, b->n);
    *n = k + b->n;
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------------- */
static void test_hooks(void)
{
    int def = wk_eth_snappy__set_kernel(-1);
    CHECK(def >= 0 && def < KERNELS && def == wk_eth_snappy__kernel());
    CHECK(def != 3); /* avx512 only when forced (see snappy_decode.c) */
    CHECK(strcmp(wk_eth_snappy__kernel_name(0), "portable") == 0 &&
          strcmp(wk_eth_snappy__kernel_name(1), "bmi2") == 0 &&
          strcmp(wk_eth_snappy__kernel_name(2), "avx2") == 0 &&
          strcmp(wk_eth_snappy__kernel_name(3), "avx512") == 0 && wk_eth_snappy__kernel_name(4) == NULL &&
          wk_eth_snappy__kernel_name(-1) == NULL);
    CHECK(wk_eth_snappy__set_kernel(0) == 0);
    nkernels = 0;
    for (int k = 0; k < KERNELS; k++) {
        int got = wk_eth_snappy__set_kernel(k);
        CHECK(got <= k && got >= 0);
        if (got == k) kernel_ids[nkernels++] = k;
    }
    CHECK(wk_eth_snappy__set_kernel(99) == kernel_ids[nkernels - 1]);
    printf("kernels on this CPU:");
    for (int i = 0; i < nkernels; i++) printf(" %s", wk_eth_snappy__kernel_name(kernel_ids[i]));
    printf(" (default %s)\n", wk_eth_snappy__kernel_name(def));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2"))
        CHECK(def == 2 && nkernels >= 3);
#endif
    wk_eth_snappy__set_kernel(-1);
}

/* Every copy kind at offsets 1..80 and every length of the kind, after a literal of `lead`
 * bytes (so the copy's offset is valid) and followed by `tail` literal bytes; the lead and tail
 * sizes put the copy inside the fast loop or within 64 bytes of either end. Plus the same copy
 * with an offset one past the bytes produced (BAD_OFFSET at its tag), and one byte too long for
 * the declared length (OVERRUN). */
static void test_copies(void)
{
    static const size_t leads[] = {0, 1, 63, 64, 65, 100};
    static const size_t tails[] = {0, 1, 60, 70, 130};
    char what[96];
    for (size_t off = 1; off <= 80; off++)
        for (unsigned kind = 1; kind <= 4; kind = kind * 2) {
            size_t lmin = kind == 1 ? 4 : 1, lmax = kind == 1 ? 11 : 64;
            if (kind == 1 && off >= 2048) continue;
            for (size_t len = lmin; len <= lmax; len++)
                for (size_t li = 0; li < sizeof leads / sizeof leads[0]; li++) {
                    size_t ti = (off + len + li) % (sizeof tails / sizeof tails[0]);
                    size_t lead = off + leads[li], tail = tails[ti];
                    bb b = {0};
                    bb_literal(&b, NULL, lead);
                    bb_copy(&b, kind, off, len);
                    if (tail) bb_literal(&b, NULL, tail);
                    size_t n;
                    uint8_t *blk = bb_finish(&b, b.produced, &n);
                    snprintf(what, sizeof what, "copy-%u off %zu len %zu lead %zu tail %zu", kind,
                             off, len, lead, tail);
                    check_block(blk, n, what);
                    free(blk);
                    if (len == lmax && li == 0) {
                        /* the offset one past the bytes produced: BAD_OFFSET at its tag */
                        bb c = {0};
                        bb_literal(&c, NULL, off);
                        bb_copy(&c, kind, off + 1, len);
                        bb_literal(&c, NULL, 100);
                        blk = bb_finish(&c, c.produced, &n);
                        wk_error e;
                        uint8_t *o = malloc(c.produced);
                        CHECK(enc_out(wk_eth_snappy_block_decode(IN(blk, n), UINT64_MAX, VIEW(o, c.produced), &e), NULL, &e) == WK_ERR_SNAPPY_BAD_OFFSET);
                        check_block(blk, n, "bad offset");
                        free(o);
                        free(blk);
                        free(c.p);
                        /* one byte less declared: the last element overruns */
                        blk = bb_finish(&b, b.produced - 1, &n);
                        check_block(blk, n, "overrun");
                        free(blk);
                    }
                    free(b.p);
                }
        }
}

/* libsnappy's encodings of generated data. */
static void test_encodings(void)
{
    static const size_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4096,
                                   65535, 65536, 65537, 200000};
    char what[96];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int kind = 0; kind < 76; kind++) {
            size_t n = sizes[si];
            if (n > 70000 && kind % 8 != 0) continue;
            uint8_t *src = malloc(n + 1);
            if (kind < 70) { /* period kind + 1, sometimes with noise */
                size_t period = (size_t)kind + 1;
                for (size_t i = 0; i < n; i++) src[i] = (uint8_t)(i % period * 37 + 11);
                if (kind % 3 == 1)
                    for (size_t i = 0; i < n; i += 97 + rng() % 300) src[i] ^= (uint8_t)rng();
            } else if (kind == 70) {
                for (size_t i = 0; i < n; i++) src[i] = (uint8_t)rng();
            } else if (kind == 71) {
                memset(src, 0, n);
            } else { /* runs of random lengths and bytes, and text-like words */
                static const char *w[] = {"beacon ", "block ", "the ", "of ", "attestation ",
                                          "0x00000000", "slot ", "\n"};
                size_t i = 0;
                while (i < n) {
                    if (kind == 72 || rng() % 4 == 0) {
                        size_t r = 1 + rng() % (kind == 74 ? 300 : 40);
                        uint8_t x = (uint8_t)rng();
                        for (size_t j = 0; j < r && i < n; j++) src[i++] = x;
                    } else {
                        const char *s = w[rng() % 8];
                        for (size_t j = 0; s[j] && i < n; j++) src[i++] = (uint8_t)s[j];
                    }
                }
            }
            size_t cl = snappy_max_compressed_length(n);
            uint8_t *c = malloc(cl);
            CHECK(snappy_compress((const char *)src, n, (char *)c, &cl) == SNAPPY_OK);
            snprintf(what, sizeof what, "libsnappy encoding, kind %d, %zu bytes", kind, n);
            check_block(c, cl, what);
            free(c);
            free(src);
        }
}

static uint8_t *read_vec(const char *rel, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", vec_dir, rel);
    uint8_t *p = wk_test_read_file(path, n);
    if (!p) fprintf(stderr, "cannot read %s\n", path);
    return p;
}

/* The vectors' blocks, then bounded mutations of each (one to three edits). */
static void test_vectors_and_mutations(void)
{
    size_t n;
    uint8_t *blocks[8];
    size_t lens[8];
    int nb = 0;
    uint8_t *hex = read_vec("devp2p/ethereumj/block.py.snappy", &n);
    REQUIRE(hex);
    while (n && (hex[n - 1] == '\n' || hex[n - 1] == '\r')) n--;
    blocks[nb] = malloc(n / 2);
    long got = wk_hex_decode((const char *)hex, n, blocks[nb], n / 2);
    free(hex);
    REQUIRE(got > 0);
    lens[nb++] = (size_t)got;
    uint8_t *ssz = read_vec("reqresp-framed/lodestar/goerliShadowForkBlock.13249/serialized.ssz", &n);
    REQUIRE(ssz);
    size_t cl = snappy_max_compressed_length(n);
    blocks[nb] = malloc(cl);
    CHECK(snappy_compress((const char *)ssz, n, (char *)blocks[nb], &cl) == SNAPPY_OK);
    lens[nb++] = cl;
    free(ssz);
    static const char *files[] = {"ssz_snappy-block/ream/child_9552076.ssz_snappy",
                                  "ssz_snappy-block/ream/ancestor_9551968.ssz_snappy",
                                  "ssz_snappy-block/lambda_ethereum_consensus/beacon_state.ssz_snappy",
                                  "snappy-block/golang-snappy/Isaac.Newton-Opticks.txt.rawsnappy"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        blocks[nb] = read_vec(files[f], &lens[nb]);
        REQUIRE(blocks[nb]);
        nb++;
    }
    for (int b = 0; b < nb; b++) {
        check_block(blocks[b], lens[b], "vector block");
        uint8_t *m = malloc(lens[b] + 8);
        int rounds = lens[b] > 200000 ? 40 : 150;
        for (int r = 0; r < rounds; r++) {
            size_t ml = lens[b];
            memcpy(m, blocks[b], ml);
            int edits = 1 + (int)(rng() % 3);
            for (int k = 0; k < edits; k++) {
                size_t at = 1 + rng() % (ml - 1); /* keep the preamble: decoders must run */
                switch (rng() % 4) {
                case 0: m[at] ^= (uint8_t)(1u << (rng() % 8)); break;
                case 1: m[at] = (uint8_t)rng(); break;
                case 2: ml = at; break;
                default: m[at] = (uint8_t)((m[at] & 0xfc) | (rng() & 3)); break; /* tag kind */
                }
            }
            check_block(m, ml, "mutated vector block");
        }
        free(m);
        free(blocks[b]);
    }
}

/* Random blocks from a grammar: literals (every length form), copies of every kind with offsets
 * near the bytes produced, long ones crossing the fast loop's margins; invalid ones too. */
static void test_grammar(void)
{
    for (int it = 0; it < 3000; it++) {
        bb b = {0};
        int elems = 1 + (int)(rng() % 120);
        for (int k = 0; k < elems; k++) {
            unsigned r = (unsigned)(rng() % 16);
            if (r < 5 || b.produced == 0) {
                size_t len = r == 0 ? 61 + rng() % 300 : 1 + rng() % 60;
                bb_literal(&b, NULL, len);
            } else {
                unsigned kind = r < 9 ? 2 : r < 14 ? 1 : 4;
                size_t len = kind == 1 ? 4 + rng() % 8 : 1 + rng() % 64;
                size_t off;
                if (rng() % 3 == 0) off = 1 + rng() % 16;
                else off = 1 + rng() % b.produced;
                if (rng() % 40 == 0) off = b.produced + 1 + rng() % 3; /* bad */
                if (rng() % 80 == 0) off = 0;
                if (off > b.produced && rng() % 2) off = b.produced;
                if (kind == 1 && off >= 2048) kind = 2;
                if (kind == 2 && off >= 65536) kind = 4;
                bb_copy(&b, kind, off, len);
            }
        }
        uint64_t declared = b.produced;
        switch (rng() % 10) {
        case 0: declared -= declared ? 1 + rng() % (declared < 70 ? declared : 70) : 0; break;
        case 1: declared += 1 + rng() % 70; break;
        default: break;
        }
        size_t n;
        uint8_t *blk = bb_finish(&b, declared, &n);
        if (rng() % 8 == 0 && n > 2) n -= 1 + rng() % (n / 2); /* cut */
        check_block(blk, n, "grammar block");
        free(blk);
        free(b.p);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_eth_snappy_decode VECTORS_DIR/eth\n");
        return 2;
    }
    vec_dir = argv[1];
    test_hooks();
    test_copies();
    test_encodings();
    test_vectors_and_mutations();
    test_grammar();
    printf("%ld blocks, each through %d kernels with guard pages after and before\n",
           blocks_checked, nkernels);
    wk_eth_snappy__set_kernel(-1);
    return wk_test_summary("eth_snappy_decode");
}
