/* BLAKE3 against the official test vectors (test_vectors.json, path in argv[1]): every case in
 * hash, keyed_hash and derive_key mode, the full 131-byte extended output, the default 32-byte
 * output, finalize_seek at several offsets, and the input fed whole, byte by byte and in pieces of
 * odd sizes; all of it on every kernel the CPU has (portable, SSE4.1, AVX2, AVX-512), and the
 * SIMD kernels against the portable one on larger inputs. */
#include <wirekit/common.h>
#include "wk_test.h"

/* Test hook in src/common/blake3.c: caps the kernel level, returns the level that will run. */
int wk_blake3__set_backend(int level);

#define MAX_CASES 64
#define XOF_LEN 131
#define EXPECTED_CASES 35
#define EXPECTED_KEY "whats the Elvish word for friend"
#define EXPECTED_CONTEXT "BLAKE3 2019-12-27 16:29:52 test vectors context"

enum mode { MODE_HASH, MODE_KEYED, MODE_DERIVE, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {"hash", "keyed_hash", "derive_key"};

typedef struct vector_case {
    size_t input_len;
    uint8_t out[MODE_COUNT][XOF_LEN];
} vector_case;

typedef struct vectors {
    char key[64];
    char context[128];
    size_t n;
    vector_case cases[MAX_CASES];
} vectors;

/* ---- a small scanner for the vector file's JSON ---- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* Finds the next member named `name` in [p, end) and returns a pointer just past its ':' (after
 * whitespace), or NULL. A quoted match not followed by ':' (e.g. inside a string) is skipped. */
static const char *find_member(const char *p, const char *end, const char *name)
{
    char quoted[64];
    int qn = snprintf(quoted, sizeof quoted, "\"%s\"", name);
    size_t ql = (size_t)qn;
    for (; p + ql <= end; p++) {
        if (memcmp(p, quoted, ql) != 0) continue;
        const char *q = skip_ws(p + ql, end);
        if (q < end && *q == ':') return skip_ws(q + 1, end);
    }
    return NULL;
}

/* Reads a JSON string without escapes at p into dst (NUL-terminated); returns the end, or NULL. */
static const char *read_string(const char *p, const char *end, char *dst, size_t cap)
{
    if (!p || p >= end || *p != '"') return NULL;
    p++;
    size_t n = 0;
    while (p < end && *p != '"') {
        if (*p == '\\' || n + 1 >= cap) return NULL;
        dst[n++] = *p++;
    }
    if (p >= end) return NULL;
    dst[n] = '\0';
    return p + 1;
}

static bool parse_vectors(const char *text, size_t len, vectors *v)
{
    const char *end = text + len;
    memset(v, 0, sizeof *v);
    if (!read_string(find_member(text, end, "key"), end, v->key, sizeof v->key)) return false;
    if (!read_string(find_member(text, end, "context_string"), end, v->context, sizeof v->context))
        return false;
    const char *p = find_member(text, end, "cases");
    if (!p) return false;
    for (;;) {
        p = find_member(p, end, "input_len");
        if (!p) break;
        if (v->n == MAX_CASES) return false;
        vector_case *c = &v->cases[v->n];
        char *num_end;
        unsigned long n = strtoul(p, &num_end, 10);
        if (num_end == p) return false;
        c->input_len = n;
        p = num_end;
        const char *obj_end = memchr(p, '}', (size_t)(end - p));
        if (!obj_end) return false;
        for (int m = 0; m < MODE_COUNT; m++) {
            char hex[2 * XOF_LEN + 8];
            if (!read_string(find_member(p, obj_end, mode_names[m]), obj_end, hex, sizeof hex))
                return false;
            if (wk_hex_decode(hex, strlen(hex), c->out[m], XOF_LEN) != XOF_LEN) return false;
        }
        v->n++;
        p = obj_end;
    }
    return true;
}

/* ---- hashing helpers ---- */

static uint8_t *make_input(size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) d[i] = (uint8_t)(i % 251);
    return d;
}

static void init_mode(wk_blake3_hasher *h, enum mode m, const vectors *v)
{
    if (m == MODE_HASH) wk_blake3_init(h);
    else if (m == MODE_KEYED) wk_blake3_init_keyed(h, (const uint8_t *)v->key);
    else wk_blake3_init_derive_key(h, v->context, strlen(v->context));
}

/* Feeds data in pieces of `piece` bytes (0 = all at once). A piece size with bit 30 set feeds a
 * 24-byte piece first, then pieces of the rest of the size (a Blob's content: its Data-Length
 * line, then data pieces: every chunk boundary falls inside a piece). */
#define HEAD_FIRST ((size_t)1 << 30)
static void feed(wk_blake3_hasher *h, const uint8_t *data, size_t n, size_t piece)
{
    if (piece == 0) {
        wk_blake3_update(h, data, n);
        return;
    }
    size_t off = 0;
    if (piece & HEAD_FIRST) {
        piece &= ~HEAD_FIRST;
        off = n < 24 ? n : 24;
        wk_blake3_update(h, data, off);
    }
    for (; off < n; off += piece)
        wk_blake3_update(h, data + off, n - off < piece ? n - off : piece);
}

static void check_case(const vector_case *c, const vectors *v, int level)
{
    uint8_t *in = make_input(c->input_len);
    static const size_t pieces[] = {0, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 65536,
                                    HEAD_FIRST | 65536, HEAD_FIRST | 5000};
    static const size_t seeks[] = {0, 1, 31, 32, 63, 64, 65, 127, 128, 130};
    for (int m = 0; m < MODE_COUNT; m++) {
        const uint8_t *want = c->out[m];
        const char *mn = mode_names[m];
        wk_blake3_hasher h;
        uint8_t out[XOF_LEN + 1];

        /* Whole input, every piece size: the full extended output and the default length. */
        for (size_t pi = 0; pi < sizeof pieces / sizeof pieces[0]; pi++) {
            init_mode(&h, (enum mode)m, v);
            feed(&h, in, c->input_len, pieces[pi]);
            memset(out, 0xAA, sizeof out);
            wk_blake3_finalize(&h, out, XOF_LEN);
            CHECKF(memcmp(out, want, XOF_LEN) == 0, "level %d len %zu %s piece %zu xof", level,
                   c->input_len, mn, pieces[pi]);
            CHECKF(out[XOF_LEN] == 0xAA, "wrote past the end");
            wk_blake3_finalize(&h, out, WK_BLAKE3_OUT_LEN);
            CHECKF(memcmp(out, want, WK_BLAKE3_OUT_LEN) == 0, "level %d len %zu %s piece %zu 32",
                   level, c->input_len, mn, pieces[pi]);
        }

        /* Byte by byte. */
        init_mode(&h, (enum mode)m, v);
        for (size_t i = 0; i < c->input_len; i++) wk_blake3_update(&h, in + i, 1);
        wk_blake3_finalize(&h, out, XOF_LEN);
        CHECKF(memcmp(out, want, XOF_LEN) == 0, "level %d len %zu %s byte by byte", level,
               c->input_len, mn);

        /* An irregular split: 1, 2, 3, ... bytes, and zero-length updates in between. */
        init_mode(&h, (enum mode)m, v);
        for (size_t off = 0, step = 1; off < c->input_len; off += step, step = step * 3 % 1031 + 1) {
            size_t k = c->input_len - off < step ? c->input_len - off : step;
            wk_blake3_update(&h, in + off, k);
            wk_blake3_update(&h, in + off, 0);
        }
        wk_blake3_finalize(&h, out, XOF_LEN);
        CHECKF(memcmp(out, want, XOF_LEN) == 0, "level %d len %zu %s irregular", level,
               c->input_len, mn);

        /* finalize_seek at several offsets and lengths, on the one-shot hasher. */
        init_mode(&h, (enum mode)m, v);
        wk_blake3_update(&h, in, c->input_len);
        for (size_t si = 0; si < sizeof seeks / sizeof seeks[0]; si++) {
            size_t s = seeks[si];
            size_t lens[] = {XOF_LEN - s, 1, (XOF_LEN - s) / 2 + 1};
            for (size_t li = 0; li < 3; li++) {
                memset(out, 0xAA, sizeof out);
                wk_blake3_finalize_seek(&h, s, out, lens[li]);
                CHECKF(memcmp(out, want + s, lens[li]) == 0, "level %d len %zu %s seek %zu n %zu",
                       level, c->input_len, mn, s, lens[li]);
                CHECK(out[lens[li]] == 0xAA);
            }
        }
        /* Zero-length output writes nothing. */
        memset(out, 0xAA, sizeof out);
        wk_blake3_finalize_seek(&h, 5, out, 0);
        CHECK(out[0] == 0xAA);

        /* Finalizing midway does not disturb the hasher. */
        init_mode(&h, (enum mode)m, v);
        size_t half = c->input_len / 2;
        wk_blake3_update(&h, in, half);
        wk_blake3_finalize(&h, out, XOF_LEN);
        wk_blake3_update(&h, in + half, c->input_len - half);
        wk_blake3_finalize(&h, out, XOF_LEN);
        CHECKF(memcmp(out, want, XOF_LEN) == 0, "level %d len %zu %s finalize midway", level,
               c->input_len, mn);

        /* The one-shot function. */
        if (m == MODE_HASH) {
            wk_blake3(in, c->input_len, out);
            CHECKF(memcmp(out, want, WK_BLAKE3_OUT_LEN) == 0, "level %d len %zu wk_blake3", level,
                   c->input_len);
        }
    }
    free(in);
}

/* A deterministic pseudo-random byte stream (xorshift64*). */
static void fill_random(uint8_t *d, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        d[i] = (uint8_t)((x * 0x2545F4914F6CDD1Du) >> 56);
    }
}

/* Every SIMD level against the portable kernel on larger inputs (deeper trees, whole 128-chunk
 * subtrees, stack merges above them), in every mode and with a few feeding patterns. */
static void check_levels_agree(const vectors *v, const int *levels, size_t nlevels)
{
    static const size_t sizes[] = {4 * 1024,       16 * 1024 + 1,    64 * 1024,
                                   128 * 1024,     128 * 1024 + 1024, 200 * 1024 + 7,
                                   256 * 1024,     1024 * 1024 + 17, 3 * 1024 * 1024 - 1};
    static const size_t pieces[] = {0, 1000, 65536, 1024 * 7, HEAD_FIRST | 65536, HEAD_FIRST | 131072};
    size_t maxn = 3 * 1024 * 1024;
    uint8_t *d = malloc(maxn);
    fill_random(d, maxn, 42);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int m = 0; m < MODE_COUNT; m++) {
            for (size_t pi = 0; pi < sizeof pieces / sizeof pieces[0]; pi++) {
                uint8_t ref[96], got[96];
                wk_blake3__set_backend(0);
                wk_blake3_hasher h;
                init_mode(&h, (enum mode)m, v);
                feed(&h, d, sizes[si], pieces[pi]);
                wk_blake3_finalize(&h, ref, sizeof ref);
                for (size_t li = 0; li < nlevels; li++) {
                    if (levels[li] == 0) continue;
                    wk_blake3__set_backend(levels[li]);
                    init_mode(&h, (enum mode)m, v);
                    feed(&h, d, sizes[si], pieces[pi]);
                    wk_blake3_finalize(&h, got, sizeof got);
                    CHECKF(memcmp(ref, got, sizeof ref) == 0, "level %d vs portable: size %zu %s "
                           "piece %zu", levels[li], sizes[si], mode_names[m], pieces[pi]);
                }
            }
        }
    }
    wk_blake3__set_backend(3);
    free(d);
}

/* Far seeks: a window of the stream equals the same bytes of a longer output. */
static void check_far_seek(void)
{
    wk_blake3_hasher h;
    wk_blake3_init(&h);
    wk_blake3_update(&h, "abc", 3);
    uint8_t whole[4096], part[4096 - 3333];
    wk_blake3_finalize(&h, whole, sizeof whole);
    wk_blake3_finalize_seek(&h, 3333, part, sizeof whole - 3333);
    CHECK_MEM(part, whole + 3333, sizeof whole - 3333);
    /* A seek beyond 2^32 blocks uses the high counter word: just check it is not the low one. */
    uint8_t hi[64], lo[64];
    wk_blake3_finalize_seek(&h, (uint64_t)1 << 38, hi, sizeof hi);
    wk_blake3_finalize_seek(&h, 0, lo, sizeof lo);
    CHECK(memcmp(hi, lo, sizeof hi) != 0);
}

static void check_hex(void)
{
    uint8_t b[4];
    char s[9];
    CHECK(wk_hex_decode("00fFa9", 6, b, sizeof b) == 3);
    CHECK(b[0] == 0x00 && b[1] == 0xFF && b[2] == 0xA9);
    wk_hex_encode(b, 3, s);
    CHECK(strcmp(s, "00ffa9") == 0);
    CHECK(wk_hex_decode("abc", 3, b, sizeof b) == -1);
    CHECK(wk_hex_decode("0g", 2, b, sizeof b) == -1);
    CHECK(wk_hex_decode("0011223344", 10, b, sizeof b) == -1);
    CHECK(wk_hex_decode("", 0, b, sizeof b) == 0);
    wk_hex_encode(b, 0, s);
    CHECK(s[0] == '\0');
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_blake3 PATH/test_vectors.json\n");
        return 1;
    }
    size_t len = 0;
    char *text = (char *)wk_test_read_file(argv[1], &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    static vectors v;
    bool parsed = parse_vectors(text, len, &v);
    free(text);
    CHECK(parsed);
    CHECKF(v.n == EXPECTED_CASES, "read %zu cases", v.n);
    CHECK(strcmp(v.key, EXPECTED_KEY) == 0 && strlen(v.key) == WK_BLAKE3_KEY_LEN);
    CHECK(strcmp(v.context, EXPECTED_CONTEXT) == 0);
    check_hex();

    /* Every kernel level the CPU has, each distinct one once. */
    int levels[4];
    size_t nlevels = 0;
    for (int l = 0; l <= 3; l++) {
        int eff = wk_blake3__set_backend(l);
        if (nlevels == 0 || levels[nlevels - 1] != eff) levels[nlevels++] = eff;
    }
    for (size_t li = 0; li < nlevels; li++) {
        wk_blake3__set_backend(levels[li]);
        printf("kernel level %d\n", levels[li]);
        for (size_t i = 0; i < v.n; i++) check_case(&v.cases[i], &v, levels[li]);
    }
    wk_blake3__set_backend(3);
    check_levels_agree(&v, levels, nlevels);
    check_far_seek();
    return wk_test_summary("blake3");
}
