/* Snappy block and framing formats (spec 1, 2): every handmade row of layers snappy-block and
 * snappy-framed (block rows through decode, decode_alloc and validate; framed rows at every push
 * size and output views 1, 7 and 64 KiB), every manifest row of the block and framed formats
 * (SHA-256 of the output, the expected output file), libsnappy's verdict against our validator,
 * the encoder's exact bytes and policy, round trips at any split, the output limit, skippable
 * limits and measured memory. Usage: test_eth_snappy tests/vectors/eth */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_eth.h"
#include <snappy-c.h>
#include <openssl/evp.h>


static const char *vec_dir;


/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */
#include "wk_bytes.h"

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Equal byte strings (either pointer may be NULL when its length is 0). */
static bool same(const void *a, size_t an, const void *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rng() >> 24);
}

/* Text-like bytes: words from a small vocabulary (compresses well). */
static void fill_text(uint8_t *p, size_t n)
{
    static const char *words[] = {"the ",   "snappy ", "frame ", "chunk ",  "of ",  "beacon ",
                                  "block ", "ssz ",    "peer ",  "gossip ", "and ", "data\n"};
    size_t i = 0;
    while (i < n) {
        const char *w = words[rng() % 12];
        for (size_t k = 0; w[k] && i < n; k++)
            p[i++] = (uint8_t)w[k];
    }
}

static void sha256_hex(const uint8_t *p, size_t n, char out[65])
{
    unsigned char md[32];
    unsigned int len = 0;
    EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
    wk_hex_encode(md, 32, out);
}

static char *path_join(const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", vec_dir, rel);
    return p;
}

static const char *code_name(wk_code c) { return c == WK_OK ? "OK" : wk_error_name(c); }

/* Walks a block with the rules of spec 1.5 (independent of the library's validator) and reports
 * the first failing element: its tag offset, the bytes produced before it and, for a copy, its
 * offset. Returns 0 when valid, 1 at the first bad copy offset, 2 for any other failure. */
static int ref_walk(const uint8_t *s, size_t n, size_t *tag_at, uint64_t *produced,
                    uint64_t *copy_off)
{
    uint64_t want = 0;
    size_t i = 0;
    for (int shift = 0;; shift += 7) {
        if (i == n || i == 5) return 2;
        want |= (uint64_t)(s[i] & 0x7f) << shift;
        if (!(s[i++] & 0x80)) break;
    }
    uint64_t out = 0;
    while (i < n) {
        *tag_at = i;
        *produced = out;
        uint8_t t = s[i++];
        uint64_t len, off = 0;
        if ((t & 3) == 0) {
            len = (t >> 2) + 1u;
            if (len > 60) {
                size_t k = len - 60;
                if (n - i < k) return 2;
                len = 0;
                for (size_t j = 0; j < k; j++)
                    len |= (uint64_t)s[i + j] << (8 * j);
                len += 1;
                i += k;
            }
            if (n - i < len || len > want - out) return 2;
            i += len;
            out += len;
            continue;
        }
        size_t k = (t & 3) == 1 ? 1 : (t & 3) == 2 ? 2 : 4;
        if (n - i < k) return 2;
        if ((t & 3) == 1) {
            len = 4 + ((t >> 2) & 7);
            off = ((uint64_t)(t >> 5) << 8) | s[i];
        } else {
            len = 1 + (t >> 2);
            for (size_t j = 0; j < k; j++)
                off |= (uint64_t)s[i + j] << (8 * j);
        }
        i += k;
        *copy_off = off;
        if (off == 0 || off > out) return 1;
        if (len > want - out) return 2;
        out += len;
    }
    return out == want ? 0 : 2;
}

/* libsnappy's verdict on a block: valid to it (validator pass and, when small, a decode). */
static bool libsnappy_accepts(const uint8_t *p, size_t n)
{
    bool v = snappy_validate_compressed_buffer((const char *)p, n) == SNAPPY_OK;
    size_t len;
    if (snappy_uncompressed_length((const char *)p, n, &len) == SNAPPY_OK && len <= (1u << 24)) {
        char *o = malloc(len ? len : 1);
        size_t got = len;
        bool u = snappy_uncompress((const char *)p, n, o, &got) == SNAPPY_OK && got == len;
        free(o);
        CHECKF(u == v, "libsnappy's validate and uncompress disagree (n=%zu)", n);
    }
    return v;
}

static int disagreements; /* libsnappy vs our validator, over every block this test saw */
static int wrap_cases;    /* blocks only libsnappy's 32-bit literal length wrap accepts */

/* libsnappy 1.1.9 reads a literal with the 4-byte length field FF FF FF FF (2^32 bytes) as an
 * empty one (32-bit wrap) and may accept the block; spec 1.3 (and Go) reject it. True when our
 * error points at exactly such a literal. */
static bool is_wrap_literal(const uint8_t *p, size_t n, const wk_error *e)
{
    return (e->code == WK_ERR_SNAPPY_TRUNCATED || e->code == WK_ERR_SNAPPY_OVERRUN) &&
           e->offset + 5 <= n && p[e->offset] == 0xfc && p[e->offset + 1] == 0xff &&
           p[e->offset + 2] == 0xff && p[e->offset + 3] == 0xff && p[e->offset + 4] == 0xff;
}

/* Our validator (no output limit) against libsnappy on one block, and our decoder against our
 * validator (same code and offset) when the declared length is small. */
static void agree(const uint8_t *p, size_t n, const char *what)
{
    wk_error e;
    wk_code cv = wk_eth_snappy_block_validate(LOOK(p, n), UINT64_MAX, NULL, &e);
    bool ours = cv == WK_OK;
    bool theirs = libsnappy_accepts(p, n);
    uint64_t declared;
    if (wk_eth_snappy_block_peek(LOOK(p, n), UINT64_MAX, &declared, NULL, NULL) == WK_OK &&
        declared <= (1u << 24)) {
        uint8_t *o = NULL;
        size_t ol;
        wk_error ed;
        wk_code cd = block_decode_alloc_code(p, n, UINT64_MAX, NULL, &o, &ol, &ed);
        CHECKF(cd == cv && (cd == WK_OK || ed.offset == e.offset),
               "%s: decode %s at %llu, validate %s at %llu", what, code_name(cd),
               (unsigned long long)ed.offset, code_name(cv), (unsigned long long)e.offset);
        free(o);
    }
    if (ours != theirs && !ours && is_wrap_literal(p, n, &e)) {
        wrap_cases++;
        return;
    }
    if (ours != theirs) {
        disagreements++;
        fprintf(stderr, "disagreement on %s: validator %s, libsnappy %s\n", what,
                ours ? "accepts" : code_name(e.code), theirs ? "accepts" : "rejects");
    }
}

/* ---------------------------------------------------------------------------------------------
 * handmade/cases.tsv
 * ------------------------------------------------------------------------------------------- */
typedef struct row {
    char id[64];
    char layer[32];
    uint8_t in[512];
    size_t in_len;
    bool ok;
    uint8_t out[512];
    size_t out_len;
    char err[64];
} row;

static int parse_rows(row *rows, int max)
{
    size_t len;
    char *text = (char *)wk_test_read_file(path_join("handmade/cases.tsv"), &len);
    if (!text) return -1;
    text = realloc(text, len + 1);
    text[len] = 0;
    int count = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0]) continue;
        char *f[5] = {0};
        int nf = 0;
        char *p = line;
        while (nf < 5) {
            f[nf++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nf < 4 || count >= max) continue;
        row *r = &rows[count];
        memset(r, 0, sizeof *r);
        snprintf(r->id, sizeof r->id, "%s", f[0]);
        snprintf(r->layer, sizeof r->layer, "%s", f[1]);
        long n = wk_hex_decode(f[2], strlen(f[2]), r->in, sizeof r->in);
        if (n < 0) continue;
        r->in_len = (size_t)n;
        if (strncmp(f[3], "ok:", 3) == 0) {
            r->ok = true;
            n = wk_hex_decode(f[3] + 3, strlen(f[3] + 3), r->out, sizeof r->out);
            if (n < 0) continue; /* ok:result=... rows are other layers' */
            r->out_len = (size_t)n;
        } else if (strncmp(f[3], "err:", 4) == 0) {
            snprintf(r->err, sizeof r->err, "%s", f[3] + 4);
        } else {
            continue;
        }
        count++;
    }
    free(text);
    return count;
}

/* Offsets we expect for the error rows (the rows give names only): the failing element's tag for
 * block errors; the chunk header for frame errors; the first byte of the failing element mapped
 * into the stream for block errors inside a chunk; the bytes pushed for truncation at finish. */
static const struct {
    const char *id;
    uint64_t offset;
} expected_offsets[] = {
    {"blk-err-empty-input", 0},        {"blk-err-offset-zero", 3},
    {"blk-err-offset-too-far", 3},     {"blk-err-overrun", 1},
    {"blk-err-short-output", 3},       {"blk-err-preamble-gt-u32", 0},
    {"blk-err-preamble-6-bytes", 0},   {"blk-err-literal-truncated", 1},
    {"blk-err-copy1-truncated", 3},    {"blk-err-u32max-no-data", 0},
    {"frm-err-no-stream-id", 0},       {"frm-err-padding-first", 0},
    {"frm-err-bad-id-bytes", 0},       {"frm-err-bad-id-len", 0},
    {"frm-err-reserved-02", 10},       {"frm-err-reserved-7f", 10},
    {"frm-err-bad-crc", 10},           {"frm-err-uncompressed-short", 10},
    {"frm-err-compressed-short", 10},  {"frm-err-compressed-no-block", 18},
    {"frm-err-compressed-gt-64k", 10}, {"frm-err-truncated-header", 12},
    {"frm-err-truncated-body", 18},
};

static bool expected_offset(const char *id, uint64_t *off)
{
    for (size_t i = 0; i < sizeof expected_offsets / sizeof expected_offsets[0]; i++)
        if (strcmp(expected_offsets[i].id, id) == 0) {
            *off = expected_offsets[i].offset;
            return true;
        }
    return false;
}

static void check_err(const char *what, const char *id, wk_code got, const wk_error *e,
                      const char *want_name)
{
    CHECKF(got != WK_OK && strcmp(code_name(got), want_name) == 0, "%s %s: got %s, want %s", what,
           id, code_name(got), want_name);
    CHECKF(e->code == got, "%s %s: err.code %s", what, id, code_name(e->code));
    uint64_t off;
    if (expected_offset(id, &off)) {
        CHECKF(e->has_offset && e->offset == off, "%s %s: offset %llu (has %d), want %llu", what,
               id, (unsigned long long)e->offset, e->has_offset, (unsigned long long)off);
    } else {
        CHECKF(false, "%s %s: no expected offset listed in this test", what, id);
    }
}

#define BLOCK_LIMIT ((uint64_t)1 << 20) /* a caller limit below 2^32-1, as in every Ethereum use   \
                                         */

static void block_row(const row *r)
{
    wk_error e;
    uint8_t out[600];
    size_t out_len = 12345;
    wk_code c =
        enc_out(wk_eth_snappy_block_decode(IN(r->in, r->in_len), BLOCK_LIMIT, VIEW(out, sizeof out), &e), &out_len, &e);
    uint8_t *alloc_out = NULL;
    size_t alloc_len = 0;
    wk_error e2;
    wk_code c2 = block_decode_alloc_code(r->in, r->in_len, BLOCK_LIMIT, NULL, &alloc_out,
                                              &alloc_len, &e2);
    wk_error e3;
    uint64_t declared = 0;
    wk_code c3 = wk_eth_snappy_block_validate(LOOK(r->in, r->in_len), BLOCK_LIMIT, &declared, &e3);
    if (r->ok) {
        CHECKF(c == WK_OK && out_len == r->out_len && memcmp(out, r->out, out_len) == 0,
               "decode %s: %s", r->id, code_name(c));
        CHECKF(c2 == WK_OK && alloc_len == r->out_len && alloc_out &&
                   memcmp(alloc_out, r->out, alloc_len) == 0,
               "decode_alloc %s: %s", r->id, code_name(c2));
        CHECKF(c3 == WK_OK && declared == r->out_len, "validate %s: %s", r->id, code_name(c3));
        /* exact room is enough; one byte less is NEED_OUTPUT, input and view untouched */
        CHECK(enc_out(wk_eth_snappy_block_decode(IN(r->in, r->in_len), BLOCK_LIMIT, VIEW(out, r->out_len), &e), &out_len, &e) == WK_OK &&
              LAST_IN.pos == r->in_len);
        if (r->out_len > 0) {
            CHECK(enc_out(wk_eth_snappy_block_decode(IN(r->in, r->in_len), BLOCK_LIMIT, VIEW(out, r->out_len - 1), &e), &out_len, &e) == ENC_NO_ROOM);
            CHECK(LAST_IN.pos == 0);
            /* a limit one below the declared length is TOO_LARGE at offset 0 */
            CHECK(wk_eth_snappy_block_validate(LOOK(r->in, r->in_len), r->out_len - 1, NULL, &e) ==
                      WK_ERR_SNAPPY_TOO_LARGE &&
                  e.offset == 0);
        }
    } else {
        check_err("decode", r->id, c, &e, r->err);
        check_err("decode_alloc", r->id, c2, &e2, r->err);
        check_err("validate", r->id, c3, &e3, r->err);
        CHECK(alloc_out == NULL);
        CHECK(e.category == WK_CAT_PEER_PROTOCOL);
    }
    if (alloc_out) free(alloc_out);
    agree(r->in, r->in_len, r->id);
}

/* Drives a framing decoder (created and configured by the caller; `limit` is the output limit set
 * on it) over wire[0..n) through the contract harness (wk_contract_drive: every call checked),
 * with pushes of `push` bytes ((size_t)-1: one push) and output views of `view` bytes, then
 * _finish. Returns the final code (WK_OK, or the error), the output in *got, *done when a step
 * returned WK_DONE. */
static wk_code frame_decode_lim(wk_eth_snappy_frame_decoder *d, uint64_t limit, const uint8_t *wire,
                                size_t n, size_t push, size_t view, buf *got, wk_error *e,
                                bool *done)
{
    wk_contract_eth_frame f;
    wk_contract_eth_frame_setup(&f, NULL);
    wk_contract_eth_sink sink = {0};
    f.d = d;
    f.keep_settings = true;
    f.output_limit = limit;
    f.sink = &sink;
    wk_contract_plan plan = {push == (size_t)-1 ? 0 : push, NULL, 0, view, false, false};
    wk_contract_outcome oc;
    char why[320];
    bool ok = wk_contract_drive(&wk_contract_eth_frame_ops, &f, NULL, wire, n, &plan, &oc, why,
                                sizeof why);
    CHECKF(ok, "framing decoder, pushes of %zu, views of %zu: %s", push, view, why);
    put(got, sink.p, sink.n);
    free(sink.p);
    *done = oc.done_by_step;
    if (!ok) {
        e->code = WK_ERR_STATE;
        return WK_ERR_STATE;
    }
    if (oc.verdict == WK_DONE) return WK_OK;
    *e = oc.error;
    return e->code;
}

static wk_code frame_decode(wk_eth_snappy_frame_decoder *d, const uint8_t *wire, size_t n,
                            size_t push, size_t view, buf *got, wk_error *e, bool *done)
{
    return frame_decode_lim(d, UINT64_MAX, wire, n, push, view, got, e, done);
}

static void framed_row(const row *r)
{
    static const size_t views[3] = {1, 7, 65536};
    wk_error e;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &e);
    int bad = 0;
    size_t max_push = r->in_len ? r->in_len : 1;
    for (size_t push = 1; push <= max_push; push++)
        for (int v = 0; v < 3; v++) {
            wk_eth_snappy_frame_decoder_reset(d);
            buf got = {0};
            bool done;
            wk_code c = frame_decode(d, r->in, r->in_len, push, views[v], &got, &e, &done);
            bool good;
            if (r->ok) {
                good = c == WK_OK && got.n == r->out_len &&
                       (got.n == 0 || memcmp(got.p, r->out, got.n) == 0);
                good = good && wk_eth_snappy_frame_decoder_produced(d) == r->out_len &&
                       wk_eth_snappy_frame_decoder_consumed(d) == r->in_len;
            } else {
                uint64_t off = 0;
                bool have_off = expected_offset(r->id, &off);
                good = c != WK_OK && strcmp(code_name(c), r->err) == 0 && have_off &&
                       e.has_offset && e.offset == off && got.n == 0;
                /* sticky: another call reports the same error */
                wk_in in = {r->in, r->in_len, r->in_len};
                uint8_t t[4];
                wk_out out = {t, 4, 0};
                wk_error e2;
                good = good && wk_eth_snappy_frame_decode(d, &in, &out, &e2) == WK_ERROR &&
                       e2.code == c && e2.offset == e.offset &&
                       frame_finish(d, &e2) == c;
            }
            if (!good) {
                if (bad < 3)
                    fprintf(stderr, "framed %s push %zu view %zu: %s at %llu, %zu bytes out\n",
                            r->id, push, views[v], code_name(c), (unsigned long long)e.offset,
                            got.n);
                bad++;
            }
            free(got.p);
        }
    CHECKF(bad == 0, "framed row %s: %d of %zu runs wrong", r->id, bad, max_push * 3);
    wk_eth_snappy_frame_decoder_destroy(d);
    /* the contract harness (tests/contract): every cut and view keeps the contract and reaches
     * the row's verdict, error and offset, and its bytes (a bad checksum included: nothing is
     * written past out->pos) */
    wk_contract_eth_frame f;
    wk_contract_eth_frame_setup(&f, NULL);
    char why[320];
    wk_contract_outcome oc;
    CHECKF(wk_contract_check(&wk_contract_eth_frame_ops, &f, NULL, r->in, r->in_len,
                             WK_CONTRACT_ALL, &oc, why, sizeof why),
           "framed row %s: contract harness: %s", r->id, why);
    if (r->ok) {
        wk_contract_hash h;
        wk_contract_hash_init(&h);
        wk_contract_hash_add(&h, r->out, r->out_len);
        CHECKF(oc.verdict == WK_DONE && oc.produced == r->out_len && oc.output.h == h.h,
               "framed row %s: the harness's outcome", r->id);
    } else {
        uint64_t off = 0;
        CHECKF(oc.verdict == WK_ERROR && strcmp(code_name(oc.error.code), r->err) == 0 &&
                   expected_offset(r->id, &off) && oc.error.offset == off,
               "framed row %s: the harness's error %s at %llu", r->id, code_name(oc.error.code),
               (unsigned long long)oc.error.offset);
    }
    wk_contract_eth_frame_cleanup(&f);
}

static void test_handmade(void)
{
    static row rows[200];
    int n = parse_rows(rows, 200);
    REQUIRE(n > 0);
    int blocks = 0, framed = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].layer, "snappy-block") == 0) {
            block_row(&rows[i]);
            blocks++;
        } else if (strcmp(rows[i].layer, "snappy-framed") == 0) {
            framed_row(&rows[i]);
            framed++;
        }
    }
    CHECKF(blocks >= 20 && framed >= 21, "rows read: %d block, %d framed", blocks, framed);
    printf("handmade: %d block rows, %d framed rows\n", blocks, framed);
}

/* ---------------------------------------------------------------------------------------------
 * manifest.tsv
 * ------------------------------------------------------------------------------------------- */
static const uint8_t *hexfile_decode(uint8_t *text, size_t *n)
{
    size_t len = *n;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    long r = wk_hex_decode((const char *)text, len, text, len / 2);
    *n = r < 0 ? 0 : (size_t)r;
    return r < 0 ? NULL : text;
}

static void check_output(const char *path, const uint8_t *p, size_t n, size_t want_len,
                         const char *want_sha, const char *want_file)
{
    char hex[65];
    sha256_hex(p, n, hex);
    CHECKF(n == want_len && strcmp(hex, want_sha) == 0, "%s: %zu bytes sha %s", path, n, hex);
    if (strcmp(want_file, "-") != 0) {
        size_t fl;
        uint8_t *f = wk_test_read_file(path_join(want_file), &fl);
        CHECKF(f && fl == n && memcmp(f, p, n) == 0, "%s: differs from %s", path, want_file);
        free(f);
    }
}

/* Expected first failure of google-snappy's baddata files (vectors README): output position and
 * copy offset of the first bad copy. */
static const struct {
    const char *name;
    uint64_t produced, offset;
} baddata[] = {
    {"baddata1.snappy", 19791, 1952542066ull},
    {"baddata2.snappy", 82393, 127665},
    {"baddata3.snappy", 35399, 2170465622ull},
};

static void manifest_block(const char *path, const uint8_t *p, size_t n, bool ok, size_t want_len,
                           const char *sha, const char *file)
{
    wk_error e;
    uint8_t *out = NULL;
    size_t out_len = 0;
    wk_code c = block_decode_alloc_code(p, n, (uint64_t)1 << 30, NULL, &out, &out_len, &e);
    wk_error ev;
    wk_code cv = wk_eth_snappy_block_validate(LOOK(p, n), (uint64_t)1 << 30, NULL, &ev);
    bool lib = libsnappy_accepts(p, n);
    agree(p, n, path);
    if (ok) {
        CHECKF(c == WK_OK && cv == WK_OK && lib, "%s: %s / %s", path, code_name(c), code_name(cv));
        if (c == WK_OK) check_output(path, out, out_len, want_len, sha, file);
        /* the caller-buffer form too */
        uint8_t *dst = malloc(want_len ? want_len : 1);
        size_t got = 0;
        CHECK(enc_out(wk_eth_snappy_block_decode(IN(p, n), want_len, VIEW(dst, want_len), &e), &got, &e) == WK_OK &&
              got == want_len);
        if (out) CHECK(memcmp(dst, out, want_len) == 0);
        free(dst);
        free(out);
        return;
    }
    CHECKF(c != WK_OK && cv != WK_OK && !lib, "%s must fail: %s / %s / libsnappy %d", path,
           code_name(c), code_name(cv), lib);
    CHECK(c == cv && e.offset == ev.offset);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof baddata / sizeof baddata[0]; i++) {
        if (strcmp(base, baddata[i].name) != 0) continue;
        size_t tag = 0;
        uint64_t produced = 0, off = 0;
        int w = ref_walk(p, n, &tag, &produced, &off);
        CHECKF(w == 1 && produced == baddata[i].produced && off == baddata[i].offset,
               "%s: reference walk %d at %zu: produced %llu, offset %llu", base, w, tag,
               (unsigned long long)produced, (unsigned long long)off);
        CHECKF(c == WK_ERR_SNAPPY_BAD_OFFSET && e.has_offset && e.offset == tag,
               "%s: %s at %llu, want SNAPPY_ERR_BAD_OFFSET at %zu", base, code_name(c),
               (unsigned long long)e.offset, tag);
    }
}

static void manifest_framed(const char *path, const uint8_t *p, size_t n, size_t want_len,
                            const char *sha, const char *file)
{
    static const size_t pushes[] = {1, 7, 4096, 65536, 100000, (size_t)-1};
    static const size_t views[] = {1, 7, 65536, 1 << 20};
    wk_alloc_counter cnt = {0};
    wk_allocator a = wk_counting_allocator(&cnt);
    wk_error e;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(&(wk_eth_snappy_frame_params){&a}, &e);
    REQUIRE(d);
    size_t created = cnt.peak;
    for (size_t i = 0; i < sizeof pushes / sizeof pushes[0]; i++)
        for (size_t v = 0; v < sizeof views / sizeof views[0]; v++) {
            wk_eth_snappy_frame_decoder_reset(d);
            buf got = {0};
            bool done;
            wk_code c = frame_decode(d, p, n, pushes[i], views[v], &got, &e, &done);
            CHECKF(c == WK_OK, "%s push %zu view %zu: %s at %llu", path, pushes[i], views[v],
                   code_name(c), (unsigned long long)e.offset);
            if (c == WK_OK) check_output(path, got.p, got.n, want_len, sha, file);
            free(got.p);
        }
    CHECKF(cnt.peak == created && cnt.count == 1, "%s: peak %zu after create %zu, %llu allocations",
           path, cnt.peak, created, (unsigned long long)cnt.count);
    wk_eth_snappy_frame_decoder_destroy(d);
    CHECK(cnt.current == 0);
}

static void test_manifest(void)
{
    size_t len;
    char *text = (char *)wk_test_read_file(path_join("manifest.tsv"), &len);
    REQUIRE(text);
    text = realloc(text, len + 1);
    text[len] = 0;
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char *f[6] = {0};
        int nf = 0;
        for (char *p = line; nf < 6;) {
            f[nf++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nf < 6) continue;
        const char *fmt = f[1];
        bool ok = strcmp(f[2], "ok") == 0;
        size_t want_len = ok ? (size_t)strtoull(f[3], NULL, 10) : 0;
        size_t n;
        uint8_t *data = wk_test_read_file(path_join(f[0]), &n);
        CHECKF(data != NULL, "cannot read %s", f[0]);
        if (!data) continue;
        if (strcmp(fmt, "snappy-block") == 0) {
            manifest_block(f[0], data, n, ok, want_len, f[4], f[5]);
            rows++;
        } else if (strcmp(fmt, "snappy-block-hex") == 0) {
            const uint8_t *p = hexfile_decode(data, &n);
            CHECKF(p != NULL, "%s: bad hex", f[0]);
            if (p) manifest_block(f[0], p, n, ok, want_len, f[4], f[5]);
            rows++;
        } else if (strcmp(fmt, "snappy-framed") == 0) {
            CHECK(ok);
            manifest_framed(f[0], data, n, want_len, f[4], f[5]);
            rows++;
        }
        free(data);
    }
    free(text);
    CHECKF(rows >= 17, "manifest rows: %d", rows);
    printf("manifest: %d rows\n", rows);
}

/* ---------------------------------------------------------------------------------------------
 * Block format: preamble, limits, encoder, validator against libsnappy
 * ------------------------------------------------------------------------------------------- */
static void test_block_peek(void)
{
    struct {
        const char *hex;
        wk_code code;
        uint64_t value;
        size_t len;
    } t[] = {
        {"40", WK_OK, 64, 1},
        {"feff7f", WK_OK, 2097150, 3},
        {"808004", WK_OK, 65536, 3},
        {"80808008", WK_OK, 16777216, 4},
        {"ffffffff0f", WK_OK, 0xFFFFFFFFu, 5},
        {"8100", WK_OK, 1, 2},
        {"8080808000", WK_OK, 0, 5},
        {"", WK_ERR_SNAPPY_TRUNCATED, 0, 0},
        {"80", WK_ERR_SNAPPY_TRUNCATED, 0, 0},
        {"ffffffff", WK_ERR_SNAPPY_TRUNCATED, 0, 0},
        {"ffffffff10", WK_ERR_SNAPPY_PREAMBLE, 0, 0},
        {"ffffffff80", WK_ERR_SNAPPY_PREAMBLE, 0, 0}, /* 5th byte continues: over 5 bytes */
        {"8080808080", WK_ERR_SNAPPY_PREAMBLE, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t in[8];
        size_t n = (size_t)wk_hex_decode(t[i].hex, strlen(t[i].hex), in, sizeof in);
        uint64_t v = 99;
        size_t pl = 99;
        wk_error e;
        wk_code c = wk_eth_snappy_block_peek(LOOK(in, n), UINT64_MAX, &v, &pl, &e);
        CHECKF(c == t[i].code, "peek %s: %s", t[i].hex, code_name(c));
        if (c == WK_OK)
            CHECKF(v == t[i].value && pl == t[i].len, "peek %s: %llu/%zu", t[i].hex,
                   (unsigned long long)v, pl);
        else
            CHECK(e.has_offset && e.offset == 0);
        if (c == WK_OK) {
            /* the limit: equal passes, one below is TOO_LARGE, checked at offset 0 */
            CHECK(wk_eth_snappy_block_peek(LOOK(in, n), t[i].value, NULL, NULL, &e) == WK_OK);
            if (t[i].value > 0)
                CHECK(wk_eth_snappy_block_peek(LOOK(in, n), t[i].value - 1, NULL, NULL, &e) ==
                          WK_ERR_SNAPPY_TOO_LARGE &&
                      e.offset == 0);
        }
    }
    /* TOO_LARGE is decided before any allocation: a counting allocator sees nothing */
    wk_alloc_counter cnt = {0};
    wk_allocator a = wk_counting_allocator(&cnt);
    uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    uint8_t *o = NULL;
    size_t ol;
    wk_error e;
    CHECK(block_decode_alloc_code(big, sizeof big, 1 << 20, &a, &o, &ol, &e) ==
          WK_ERR_SNAPPY_TOO_LARGE);
    CHECK(cnt.count == 0 && o == NULL);
    /* an empty result is a 1-byte allocation through the allocator */
    uint8_t empty[] = {0x00};
    CHECK(block_decode_alloc_code(empty, 1, 0, &a, &o, &ol, &e) == WK_OK && o && ol == 0);
    CHECK(cnt.count == 1 && cnt.current == 1);
    a.free(a.opaque, o);
    /* a failing allocation is NOMEM */
    cnt.limit = 10;
    uint8_t lit[] = {0x0c, 0x2c, 'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'};
    CHECK(block_decode_alloc_code(lit, sizeof lit, 100, &a, &o, &ol, &e) == WK_ERR_NOMEM);
    cnt.limit = 0;
    CHECK(block_decode_alloc_code(lit, sizeof lit, 100, &a, &o, &ol, &e) == WK_OK &&
          ol == 12 && memcmp(o, "hello world!", 12) == 0);
    a.free(a.opaque, o);
    CHECK(cnt.current == 0);
}

/* The look calls take the block as a view's unread bytes and leave the view alone; offsets count
 * from in->pos; decode_alloc moves pos to the end on WK_DONE only; no view is WK_ERR_ARG. */
static void test_block_views(void)
{
    /* 3 bytes of something else, then "hello world!" as a block, then nothing */
    static const uint8_t vb[] = {0xee, 0xee, 0xee, 0x0c, 0x2c, 'h', 'e', 'l', 'l', 'o', ' ',
                                  'w', 'o', 'r', 'l', 'd', '!'};
    wk_in in = {vb, sizeof vb, 3};
    uint64_t d = 0;
    size_t pl = 0;
    wk_error e;
    CHECK(wk_eth_snappy_block_peek(&in, 100, &d, &pl, &e) == WK_OK && d == 12 && pl == 1 &&
          in.pos == 3);
    CHECK(wk_eth_snappy_block_validate(&in, 100, &d, &e) == WK_OK && d == 12 && in.pos == 3);
    CHECK(wk_eth_snappy_block_peek(&in, 11, NULL, NULL, &e) == WK_ERR_SNAPPY_TOO_LARGE &&
          e.offset == 0 && in.pos == 3);
    /* a view ending one byte early: the length mismatch is at the view's end, from in->pos */
    wk_in shortv = {vb, sizeof vb - 1, 3};
    CHECK(wk_eth_snappy_block_validate(&shortv, 100, NULL, &e) == WK_ERR_SNAPPY_TRUNCATED &&
          e.offset == 1 && shortv.pos == 3);
    uint8_t *o = NULL;
    size_t ol = 0;
    CHECK(wk_eth_snappy_block_decode_alloc(&shortv, 100, NULL, &o, &ol, &e) == WK_ERROR &&
          e.code == WK_ERR_SNAPPY_TRUNCATED && e.offset == 1 && shortv.pos == 3 && o == NULL);
    CHECK(wk_eth_snappy_block_decode_alloc(&in, 100, NULL, &o, &ol, &e) == WK_DONE &&
          in.pos == sizeof vb && ol == 12 && o && memcmp(o, "hello world!", 12) == 0);
    free(o);
    /* an empty view (pos at its end) is an empty block */
    CHECK(wk_eth_snappy_block_peek(&in, 100, NULL, NULL, &e) == WK_ERR_SNAPPY_TRUNCATED &&
          e.offset == 0);
    /* no view, or pos past size: WK_ERR_ARG without an offset */
    wk_in bad = {vb, 2, 3};
    CHECK(wk_eth_snappy_block_peek(NULL, 100, NULL, NULL, &e) == WK_ERR_ARG && !e.has_offset);
    CHECK(wk_eth_snappy_block_validate(&bad, 100, NULL, &e) == WK_ERR_ARG && !e.has_offset);
    o = NULL;
    CHECK(wk_eth_snappy_block_decode_alloc(&bad, 100, NULL, &o, &ol, &e) == WK_ERROR &&
          e.code == WK_ERR_ARG && bad.pos == 3 && o == NULL);
    CHECK(wk_eth_snappy_block_decode_alloc(NULL, 100, NULL, &o, &ol, &e) == WK_ERROR &&
          e.code == WK_ERR_ARG);
    CHECK(wk_eth_snappy_block_decode_alloc(&in, 100, NULL, NULL, &ol, &e) == WK_ERROR &&
          e.code == WK_ERR_ARG);
}

/* Elements written by hand, each decoded and validated, with the error offset of the failing tag.
 */
static void test_block_elements(void)
{
    struct {
        const char *hex;
        wk_code code;
        uint64_t off;
        const char *out;
    } t[] = {
        /* literals, overlapping copies of each kind, copy-4, limits of each element */
        {"0308616263", WK_OK, 0, "abc"},
        {"0a0461621102", WK_OK, 0, "ababababab"},     /* copy-1 len 8 offset 2 */
        {"0c00611d01", WK_OK, 0, "aaaaaaaaaaaa"},     /* copy-1 len 11 offset 1 */
        {"0a00610e01000501", WK_OK, 0, "aaaaaaaaaa"}, /* copy-2 len 4, then copy-1 len 5 */
        {"080878616201020e0200", WK_ERR_SNAPPY_OVERRUN, 7, NULL},
        {"0600610b010000000f03000000", WK_ERR_SNAPPY_OVERRUN, 8, NULL},
        {"0800610b010000000b05000000", WK_ERR_SNAPPY_BAD_OFFSET, 8, NULL},
        {"0500610b01000000", WK_ERR_SNAPPY_LENGTH_MISMATCH, 8, NULL},
        {"0500610b010000", WK_ERR_SNAPPY_TRUNCATED, 3, NULL},
        {"0500610e00", WK_ERR_SNAPPY_TRUNCATED, 3, NULL},
        {"01fcffffffff61", WK_ERR_SNAPPY_TRUNCATED, 1, NULL}, /* literal length 2^32 (64-bit) */
        {"01f8ffffff61", WK_ERR_SNAPPY_TRUNCATED, 1, NULL},
        {"01fcffffff", WK_ERR_SNAPPY_TRUNCATED, 1, NULL}, /* length field cut */
        {"01f0", WK_ERR_SNAPPY_TRUNCATED, 1, NULL},
        {"0100610061", WK_ERR_SNAPPY_OVERRUN, 3, NULL},    /* an element past the output */
        {"02006101", WK_ERR_SNAPPY_TRUNCATED, 3, NULL},    /* copy-1 missing its offset */
        {"0200610501", WK_ERR_SNAPPY_OVERRUN, 3, NULL},    /* copy-1 len 5 past 2 */
        {"0a0061e501", WK_ERR_SNAPPY_BAD_OFFSET, 3, NULL}, /* copy-1 offset 7<<8|1 */
        {"00", WK_OK, 0, ""},
        {"0000", WK_ERR_SNAPPY_TRUNCATED, 1, NULL}, /* truncation before overrun */
        {"000061", WK_ERR_SNAPPY_OVERRUN, 1, NULL},
        {"000100", WK_ERR_SNAPPY_BAD_OFFSET, 1, NULL},
        {"8000", WK_OK, 0, ""},
        {"8080808000", WK_OK, 0, ""}, /* 5-byte preamble of 0 */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t in[64], out[64];
        size_t n = (size_t)wk_hex_decode(t[i].hex, strlen(t[i].hex), in, sizeof in);
        wk_error e, e2;
        size_t ol = 0;
        wk_code c = wk_eth_snappy_block_validate(LOOK(in, n), 1 << 20, NULL, &e);
        wk_code c2 = enc_out(wk_eth_snappy_block_decode(IN(in, n), 1 << 20, VIEW(out, sizeof out), &e2), &ol, &e2);
        CHECKF(c == t[i].code && c2 == c, "element %s: %s / %s, want %s", t[i].hex, code_name(c),
               code_name(c2), code_name(t[i].code));
        if (c != WK_OK && c == t[i].code)
            CHECKF(e.offset == t[i].off && e2.offset == t[i].off,
                   "element %s: offset %llu/%llu want %llu", t[i].hex, (unsigned long long)e.offset,
                   (unsigned long long)e2.offset, (unsigned long long)t[i].off);
        if (c2 == WK_OK && t[i].out)
            CHECKF(ol == strlen(t[i].out) && memcmp(out, t[i].out, ol) == 0, "element %s output",
                   t[i].hex);
        agree(in, n, t[i].hex);
    }
}

/* libsnappy's literal length wrap: our decoder must still reject (spec 1.3), in a block and in a
 * framed chunk; libsnappy's own verdict is only reported. */
static void test_libsnappy_wrap(void)
{
    static const uint8_t blk[] = {0x01, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x00, 0x61};
    uint8_t out[8], *o = NULL;
    size_t ol;
    wk_error e;
    CHECK(wk_eth_snappy_block_validate(LOOK(blk, sizeof blk), 100, NULL, &e) == WK_ERR_SNAPPY_TRUNCATED &&
          e.offset == 1);
    CHECK(enc_out(wk_eth_snappy_block_decode(IN(blk, sizeof blk), 100, VIEW(out, sizeof out), &e), &ol, &e) ==
              WK_ERR_SNAPPY_TRUNCATED &&
          e.offset == 1);
    CHECK(block_decode_alloc_code(blk, sizeof blk, 100, NULL, &o, &ol, &e) ==
              WK_ERR_SNAPPY_TRUNCATED &&
          o == NULL);
    /* the same bytes inside literal data are harmless */
    static const uint8_t lit[] = {0x05, 0x10, 0xfc, 0xff, 0xff, 0xff, 0xff};
    CHECK(enc_out(wk_eth_snappy_block_decode(IN(lit, sizeof lit), 100, VIEW(out, sizeof out), &e), &ol, &e) == WK_OK &&
          ol == 5 && memcmp(out, lit + 2, 5) == 0);
    size_t got = 1;
    printf("libsnappy %s the wrapped literal 01fcffffffff0061\n",
           snappy_uncompress((const char *)blk, sizeof blk, (char *)out, &got) == SNAPPY_OK
               ? "accepts"
               : "rejects");
    /* framed: chunk at 10, block at 18, the literal's tag at 19 */
    uint8_t fr[10 + 8 + sizeof blk];
    memcpy(fr, "\xff\x06\x00\x00sNaPpY", 10);
    uint32_t crc = wk_eth_snappy_mask_crc(wk_eth_crc32c("a", 1));
    uint8_t h[8] = {0x00, 4 + sizeof blk, 0, 0, (uint8_t)crc, (uint8_t)(crc >> 8),
                    (uint8_t)(crc >> 16), (uint8_t)(crc >> 24)};
    memcpy(fr + 10, h, 8);
    memcpy(fr + 18, blk, sizeof blk);
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &e);
    for (size_t push = 1; push <= sizeof fr; push++) {
        wk_eth_snappy_frame_decoder_reset(d);
        buf b = {0};
        bool done;
        wk_code c = frame_decode(d, fr, sizeof fr, push, 64, &b, &e, &done);
        CHECKF(c == WK_ERR_SNAPPY_TRUNCATED && e.offset == 19 && b.n == 0, "framed wrap push %zu: %s",
               push, code_name(c));
        free(b.p);
    }
    wk_eth_snappy_frame_decoder_destroy(d);
}

/* Blocks built element by element from a small grammar (every tag kind and length form, edge
 * values, non-minimal preambles, cuts): libsnappy and our validator must agree on each. */
static void test_grammar_agreement(void)
{
    int before = disagreements, valid = 0;
    uint8_t b[256];
    for (int it = 0; it < 200000; it++) {
        size_t n = 0;
        uint32_t decl = (uint32_t)(rng() % 64);
        if (rng() % 50 == 0) decl = (uint32_t)rng();
        uint32_t v = decl;
        do {
            uint8_t c = v & 0x7f;
            v >>= 7;
            b[n++] = (uint8_t)(c | (v ? 0x80 : 0));
        } while (v);
        if (rng() % 20 == 0 && n < 5) { /* non-minimal */
            b[n - 1] |= 0x80;
            b[n++] = 0;
        }
        int elems = (int)(rng() % 6);
        for (int k = 0; k < elems && n < 200; k++) {
            unsigned kind = (unsigned)(rng() % 4);
            if (kind == 0 && rng() % 3) {
                size_t len = 1 + rng() % 8;
                b[n++] = (uint8_t)((len - 1) << 2);
                for (size_t i = 0; i < len; i++) b[n++] = (uint8_t)rng();
            } else if (kind == 0) {
                unsigned ex = 1 + (unsigned)(rng() % 4);
                b[n++] = (uint8_t)((59 + ex) << 2);
                uint32_t L = (uint32_t)(rng() % 8);
                if (rng() % 4 == 0) L = 0xFFFFFFFFu >> (8 * (4 - ex)); /* largest field value */
                for (unsigned i = 0; i < ex; i++) b[n++] = (uint8_t)(L >> (8 * i));
                size_t lit = L < 8 ? L + 1 : (size_t)(rng() % 9);
                for (size_t i = 0; i < lit; i++) b[n++] = (uint8_t)rng();
            } else {
                b[n++] = (uint8_t)((rng() & 0xfc) | kind);
                unsigned ob = kind == 1 ? 1 : kind == 2 ? 2 : 4;
                for (unsigned i = 0; i < ob; i++)
                    b[n++] = (uint8_t)(rng() % 3 == 0 ? rng() : (i == 0 ? rng() % 8 : 0));
            }
        }
        if (rng() % 10 == 0 && n) n -= (size_t)(rng() % n);
        wk_error e;
        if (wk_eth_snappy_block_validate(LOOK(b, n), UINT64_MAX, NULL, &e) == WK_OK) valid++;
        agree(b, n, "grammar block");
    }
    CHECKF(disagreements == before && valid > 100, "%d disagreements, %d valid blocks",
           disagreements - before, valid);
}

static void test_block_encode(void)
{
    CHECK(wk_eth_snappy_block_max_size(0) == 32);
    CHECK(wk_eth_snappy_block_max_size(65536) == 76490);
    CHECK(wk_eth_snappy_block_max_size(10485760) == 12233418);
    CHECK(wk_eth_snappy_block_max_size(UINT64_MAX) == UINT64_MAX);
    size_t sizes[] = {0, 1, 16, 17, 100, 65535, 65536, 65537, 300000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int kind = 0; kind < 2; kind++) {
            size_t n = sizes[s];
            uint8_t *src = malloc(n + 1);
            if (kind)
                fill_text(src, n);
            else
                fill_random(src, n);
            size_t cap = (size_t)wk_eth_snappy_block_max_size(n);
            uint8_t *c = malloc(cap), *back = malloc(n + 1);
            size_t cl = 0, bl = 0;
            wk_error e;
            CHECK(enc_out(wk_eth_snappy_block_encode(src, n, VIEW(c, cap), &e), &cl, &e) == WK_OK);
            CHECK(cl <= cap);
            CHECK(enc_out(wk_eth_snappy_block_decode(IN(c, cl), n, VIEW(back, n), &e), &bl, &e) == WK_OK && bl == n &&
                  memcmp(back, src, n) == 0);
            CHECK(wk_eth_snappy_block_validate(LOOK(c, cl), n, NULL, &e) == WK_OK);
            CHECK(enc_out(wk_eth_snappy_block_encode(src, n, VIEW(c, cap - 1), &e), &cl, &e) == ENC_NO_ROOM);
            agree(c, cl, "encoder output");
            free(src);
            free(c);
            free(back);
        }
}

/* Bounded mutation run: libsnappy and our validator must agree on every mutated block. */
static void test_validator_agreement(void)
{
    int before = disagreements, runs = 0;
    uint8_t src[3000], c[4000], m[4000];
    for (int round = 0; round < 40; round++) {
        size_t n = (size_t)(rng() % sizeof src);
        if (round & 1)
            fill_text(src, n);
        else
            fill_random(src, n);
        if (round % 4 == 2) memset(src + n / 3, 'z', n / 3); /* long runs: copies of 64 */
        size_t cl = sizeof c;
        REQUIRE(snappy_compress((const char *)src, n, (char *)c, &cl) == SNAPPY_OK);
        for (int k = 0; k < 500; k++) {
            size_t ml = cl;
            memcpy(m, c, cl);
            int edits = 1 + (int)(rng() % 3);
            for (int j = 0; j < edits; j++) {
                switch (rng() % 4) {
                case 0:
                    m[rng() % ml] ^= (uint8_t)(1u << (rng() % 8));
                    break;
                case 1:
                    m[rng() % ml] = (uint8_t)rng();
                    break;
                case 2:
                    ml = (size_t)(rng() % (ml + 1));
                    break; /* truncate */
                default:   /* append a random element */
                    if (ml + 5 < sizeof m) {
                        for (int q = 0; q < 5; q++)
                            m[ml + (size_t)q] = (uint8_t)rng();
                        ml += 1 + rng() % 5;
                    }
                }
                if (ml == 0) break;
            }
            agree(m, ml, "mutated block");
            runs++;
        }
    }
    CHECKF(disagreements == before, "%d disagreements in %d mutated blocks", disagreements - before,
           runs);
}

/* ---------------------------------------------------------------------------------------------
 * Framing: encoder bytes and policy, round trips, limits, skippables, memory
 * ------------------------------------------------------------------------------------------- */
/* Encodes src with the streaming encoder through the contract harness (wk_contract_drive_flush
 * and the eth adapter; every call checked, the last piece written by the flush at the end): one
 * push and a fixed output view, or random pushes (explicit cuts) and a random view size behind
 * 0-byte probes (and, with flushes, a flush after some pushes: those cut pieces short). The
 * adapter decodes the stream back: src, with exactly src up to each flush point once that flush's
 * bytes are in. */
static buf frame_encode_stream(const uint8_t *src, size_t n, bool random_splits, size_t fixed_view,
                               bool flushes)
{
    wk_error e;
    wk_contract_eth_sink sink = {0};
    wk_contract_eth_frame_enc f;
    wk_contract_eth_frame_enc_setup(&f, NULL);
    f.sink = &sink;
    f.check = wk_eth_snappy_frame_decoder_create(NULL, &e);
    CHECK(f.check != NULL);
    if (!f.check) return (buf){NULL, (size_t)-1, 0};
    buf cuts = {0}; /* size_t cut offsets */
    uint64_t flush_at[WK_CONTRACT_ETH_MAX_FLUSH];
    wk_contract_plan plan = {0, NULL, 0, fixed_view, false, false};
    if (random_splits) {
        for (size_t pos = 1 + (size_t)(rng() % 150000); pos < n; pos += 1 + (size_t)(rng() % 150000)) {
            put(&cuts, &pos, sizeof pos);
            if (flushes && rng() % 5 == 0 && f.nflush < WK_CONTRACT_ETH_MAX_FLUSH)
                flush_at[f.nflush++] = pos;
        }
        plan.cuts = (const size_t *)cuts.p;
        plan.ncuts = cuts.n / sizeof(size_t);
        plan.out_view = 1 + (size_t)(rng() % 90000);
        plan.zero_probe = true;
    }
    f.flush_at = flush_at;
    wk_contract_outcome oc;
    char why[320];
    bool ok = wk_contract_drive_flush(&wk_contract_eth_frame_enc_ops, wk_contract_eth_frame_enc_flush,
                                      &f, NULL, src, n, &plan, &oc, why, sizeof why);
    CHECKF(ok, "framing encoder, %zu bytes, %zu pushes, views of %zu, %zu flushes: %s", n,
           plan.ncuts + 1, plan.out_view, f.nflush, why);
    wk_contract_eth_frame_enc_cleanup(&f);
    wk_eth_snappy_frame_decoder_destroy(f.check);
    free(cuts.p);
    buf b = {sink.p, sink.n, sink.cap};
    if (!ok) b.n = (size_t)-1;
    return b;
}

/* The encoder through the harness's whole battery (wk_contract_check_flush: whole, byte by byte,
 * every split, every chunk size, views of 0, 1 and N), with and without flush points: every run
 * writes the same stream, which decodes back; equal to encode_all without flush points. */
static void encoder_battery(const uint8_t *src, size_t n, const uint64_t *flush_at, size_t nflush,
                            const char *what)
{
    wk_error e;
    wk_contract_eth_sink sink = {0};
    wk_contract_eth_frame_enc f;
    wk_contract_eth_frame_enc_setup(&f, NULL);
    f.sink = &sink;
    f.check = wk_eth_snappy_frame_decoder_create(NULL, &e);
    f.flush_at = flush_at;
    f.nflush = nflush;
    REQUIRE(f.check != NULL);
    wk_contract_outcome whole;
    char why[400];
    CHECKF(wk_contract_check_flush(&wk_contract_eth_frame_enc_ops, wk_contract_eth_frame_enc_flush,
                                   &f, NULL, src, n, WK_CONTRACT_ALL, &whole, why, sizeof why),
           "%s: %s", what, why);
    CHECKF(whole.verdict == WK_DONE && whole.consumed == n, "%s: %s", what,
           wk_error_name(whole.error.code));
    if (nflush == 0) {
        uint64_t bound = wk_eth_snappy_frame_max_size(n);
        uint8_t *all = malloc(bound ? bound : 1);
        size_t all_n = 0;
        wk_contract_hash h;
        wk_contract_hash_init(&h);
        CHECK(enc_out(wk_eth_snappy_frame_encode_all(src, n, VIEW(all, bound), &e), &all_n, &e) == WK_OK);
        wk_contract_hash_add(&h, all, all_n);
        CHECKF(whole.produced == all_n && whole.output.h == h.h, "%s: %llu bytes, encode_all %zu",
               what, (unsigned long long)whole.produced, all_n);
        free(all);
    }
    wk_contract_eth_frame_enc_cleanup(&f);
    wk_eth_snappy_frame_decoder_destroy(f.check);
    free(sink.p);
}

static void test_encoder_harness(void)
{
    size_t n = 70000;
    uint8_t *src = malloc(n);
    fill_text(src, n);
    encoder_battery(src, 0, NULL, 0, "empty");
    encoder_battery(src, 8, NULL, 0, "8 bytes");
    encoder_battery(src, 300, NULL, 0, "300 bytes");
    static const uint64_t points[] = {0, 1, 1, 17, 100, 299, 300, 5000};
    encoder_battery(src, 300, points, 7, "300 bytes, flushes");
    encoder_battery(src, n, NULL, 0, "70000 bytes");
    static const uint64_t big_points[] = {3, 65536, 65537, 69999, 70000};
    encoder_battery(src, n, big_points, 5, "70000 bytes, flushes");
    fill_random(src, n);
    encoder_battery(src, n, NULL, 0, "70000 random bytes");
    free(src);
}

static void test_worked_example(void)
{
    const uint8_t data[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    static const char *want = "ff060000734e61507059010c00000175de410100000000000000";
    uint8_t exp[26], dst[64];
    wk_hex_decode(want, strlen(want), exp, sizeof exp);
    size_t n = 0;
    wk_error e;
    CHECK(wk_eth_snappy_frame_max_size(8) == 26);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(data, 8, VIEW(dst, 26), &e), &n, &e) == WK_OK && n == 26 &&
          memcmp(dst, exp, 26) == 0);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(data, 8, VIEW(dst, 25), &e), &n, &e) == ENC_NO_ROOM);
    buf b = frame_encode_stream(data, 8, false, 64, false);
    CHECK(b.n == 26 && memcmp(b.p, exp, 26) == 0);
    free(b.p);
    b = frame_encode_stream(data, 8, false, 1, false); /* one byte of output at a time */
    CHECK(b.n == 26 && memcmp(b.p, exp, 26) == 0);
    free(b.p);
    /* empty input: zero bytes, from both */
    CHECK(wk_eth_snappy_frame_max_size(0) == 0);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(NULL, 0, VIEW(NULL, 0), &e), &n, &e) == WK_OK && n == 0);
    b = frame_encode_stream(data, 0, false, 64, false);
    CHECK(b.n == 0);
    free(b.p);
    CHECK(wk_eth_snappy_frame_max_size(65536) == 10 + 65536 + 8);
    CHECK(wk_eth_snappy_frame_max_size(65537) == 10 + 65537 + 16);
}

/* Chunk types in a framed stream, in order (the identifier excluded). */
static int chunk_types(const uint8_t *p, size_t n, uint8_t *types, int max)
{
    int k = 0;
    for (size_t i = 0; i + 4 <= n && k < max;) {
        size_t len = p[i + 1] | (size_t)p[i + 2] << 8 | (size_t)p[i + 3] << 16;
        if (p[i] != 0xff) types[k++] = p[i];
        i += 4 + len;
    }
    return k;
}

static void test_encoder_policy(void)
{
    uint8_t *src = malloc(65536);
    uint8_t *dst = malloc(70000);
    size_t n = 0;
    wk_error e;
    uint8_t types[4];
    fill_random(src, 65536);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(src, 65536, VIEW(dst, 70000), &e), &n, &e) == WK_OK);
    CHECK(chunk_types(dst, n, types, 4) == 1 && types[0] == 0x01 && n == 10 + 8 + 65536);
    fill_text(src, 65536);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(src, 65536, VIEW(dst, 70000), &e), &n, &e) == WK_OK);
    CHECK(chunk_types(dst, n, types, 4) == 1 && types[0] == 0x00 && n < 65536 - 8192);
    for (size_t len = 1; len < 17; len++) { /* below 17 bytes: always 0x01, even all zeros */
        memset(src, 0, len);
        CHECK(enc_out(wk_eth_snappy_frame_encode_all(src, len, VIEW(dst, 70000), &e), &n, &e) == WK_OK);
        CHECK(chunk_types(dst, n, types, 4) == 1 && types[0] == 0x01 && n == 18 + len);
    }
    memset(src, 0, 17);
    CHECK(enc_out(wk_eth_snappy_frame_encode_all(src, 17, VIEW(dst, 70000), &e), &n, &e) == WK_OK);
    CHECK(chunk_types(dst, n, types, 4) == 1 && types[0] == 0x00);
    free(src);
    free(dst);
}

static void roundtrip(const uint8_t *src, size_t n, const char *what)
{
    wk_error e;
    uint64_t bound = wk_eth_snappy_frame_max_size(n);
    uint8_t *all = malloc(bound ? bound : 1);
    size_t all_n = 0;
    /* exactly the bound: the last pieces go through the scratch path */
    CHECKF(enc_out(wk_eth_snappy_frame_encode_all(src, n, VIEW(all, bound), &e), &all_n, &e) == WK_OK && all_n <= bound,
           "%s: encode_all", what);
    buf s1 = frame_encode_stream(src, n, false, 1 << 20, false);
    CHECKF(same(s1.p, s1.n, all, all_n), "%s: streaming (fast) != encode_all", what);
    buf s2 = frame_encode_stream(src, n, true, 0, false);
    CHECKF(same(s2.p, s2.n, all, all_n), "%s: streaming (splits) %zu != encode_all %zu", what, s2.n,
           all_n);
    /* every chunk body within the limits, the identifier once at the start */
    size_t chunks = 0, ids = 0;
    for (size_t i = 0; i + 4 <= all_n;) {
        size_t len = all[i + 1] | (size_t)all[i + 2] << 8 | (size_t)all[i + 3] << 16;
        if (all[i] == 0xff)
            ids++;
        else
            chunks++;
        CHECK(len <= 65540);
        i += 4 + len;
    }
    CHECK(ids == (n ? 1u : 0u) && chunks == (n + 65535) / 65536);
    /* with flushes in between: other chunk boundaries, the same bytes decoded */
    buf s3 = frame_encode_stream(src, n, true, 0, true);
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &e);
    for (int t = 0; t < 8; t++) {
        wk_eth_snappy_frame_decoder_reset(d);
        const buf *w = t < 6 ? &(buf){all, all_n, 0} : &s3;
        size_t push = t == 0 ? w->n + 1 : 1 + (size_t)(rng() % 100000);
        size_t view = t == 0 ? n + 1 : 1 + (size_t)(rng() % 100000);
        buf got = {0};
        bool done;
        wk_code c = frame_decode(d, w->p, w->n, push, view, &got, &e, &done);
        CHECKF(c == WK_OK && same(got.p, got.n, src, n), "%s: decode push %zu view %zu: %s", what,
               push, view, code_name(c));
        free(got.p);
    }
    wk_eth_snappy_frame_decoder_destroy(d);
    free(all);
    free(s1.p);
    free(s2.p);
    free(s3.p);
}

static void test_roundtrips(void)
{
    size_t sizes[] = {0, 1, 16, 17, 65535, 65536, 65537, 131072, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            size_t n = sizes[i];
            uint8_t *src = malloc(n + 1);
            if (kind == 0)
                fill_random(src, n);
            else if (kind == 1)
                fill_text(src, n);
            else { /* mixed: compressible and incompressible pieces */
                fill_text(src, n);
                for (size_t k = 0; k + 65536 <= n; k += 131072)
                    fill_random(src + k, 65536);
            }
            char what[64];
            snprintf(what, sizeof what, "round trip %zu bytes kind %d", n, kind);
            roundtrip(src, n, what);
            free(src);
        }
}

static const uint8_t SID[10] = {0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59};

/* Appends a data chunk of type `type` for data[0..n). */
static void add_chunk(buf *b, uint8_t type, const uint8_t *data, size_t n)
{
    uint32_t crc = wk_eth_snappy_mask_crc(wk_eth_crc32c(data, n));
    uint8_t body[80000];
    size_t bl = n;
    if (type == 0x00) {
        bl = sizeof body;
        snappy_compress((const char *)data, n, (char *)body, &bl);
    } else if (n) {
        memcpy(body, data, n);
    }
    uint8_t h[8] = {
        type,         (uint8_t)(bl + 4),   (uint8_t)((bl + 4) >> 8), (uint8_t)((bl + 4) >> 16),
        (uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),     (uint8_t)(crc >> 24)};
    put(b, h, 8);
    put(b, body, bl);
}

static void add_skippable(buf *b, uint8_t type, size_t len)
{
    uint8_t h[4] = {type, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16)};
    put(b, h, 4);
    uint8_t *z = calloc(len + 1, 1);
    put(b, z, len);
    free(z);
}

/* Runs d over wire at several splits; every run must give the same code, offset and output. */
static wk_code run_splits(wk_eth_snappy_frame_decoder *d, uint64_t limit, const uint8_t *wire,
                          size_t n, buf *first,
                          wk_error *e1, bool *done1, uint64_t *consumed1)
{
    static const size_t pushes[] = {(size_t)-1, 1, 3, 5000};
    static const size_t views[] = {1 << 20, 1, 10};
    wk_code c1 = WK_OK;
    for (size_t i = 0; i < 4; i++)
        for (size_t v = 0; v < 3; v++) {
            wk_eth_snappy_frame_decoder_reset(d);
            buf got = {0};
            wk_error e;
            bool done;
            wk_code c = frame_decode_lim(d, limit, wire, n, pushes[i], views[v], &got, &e, &done);
            if (i == 0 && v == 0) {
                c1 = c;
                *e1 = e;
                *done1 = done;
                *consumed1 = wk_eth_snappy_frame_decoder_consumed(d);
                *first = got;
                continue;
            }
            CHECKF(c == c1 && done == *done1 && got.n == first->n &&
                       (got.n == 0 || memcmp(got.p, first->p, got.n) == 0) &&
                       (c == WK_OK || e.offset == e1->offset) &&
                       (c != WK_OK || wk_eth_snappy_frame_decoder_consumed(d) == *consumed1),
                   "split %zu/%zu: %s at %llu vs %s at %llu", pushes[i], views[v], code_name(c),
                   (unsigned long long)e.offset, code_name(c1), (unsigned long long)e1->offset);
            free(got.p);
        }
    return c1;
}

static void expect_stream(const char *what, const buf *wire, uint64_t limit, uint32_t max_skip,
                          wk_code want, uint64_t want_off, size_t want_out, bool want_done,
                          uint64_t want_consumed)
{
    wk_error e;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &e);
    wk_eth_snappy_frame_decoder_set_output_limit(d, limit);
    if (max_skip) wk_eth_snappy_frame_decoder_set_max_skippable(d, max_skip);
    buf got = {0};
    bool done = false;
    uint64_t consumed = 0;
    wk_code c = run_splits(d, limit, wire->p, wire->n, &got, &e, &done, &consumed);
    CHECKF(c == want && (c == WK_OK || (e.has_offset && e.offset == want_off)),
           "%s: %s at %llu, want %s at %llu", what, code_name(c), (unsigned long long)e.offset,
           code_name(want), (unsigned long long)want_off);
    if (c == WK_OK)
        CHECKF(got.n == want_out && done == want_done && consumed == want_consumed,
               "%s: %zu bytes out, done %d, consumed %llu", what, got.n, done,
               (unsigned long long)consumed);
    free(got.p);
    wk_eth_snappy_frame_decoder_destroy(d);
}

static void test_frame_limits(void)
{
    uint8_t data[65537];
    fill_text(data, sizeof data);
    buf w = {0};
    /* chunk size limits of spec 2.4 */
    put(&w, SID, 10);
    add_chunk(&w, 0x01, data, 65536);
    expect_stream("0x01 body 65540", &w, UINT64_MAX, 0, WK_OK, 0, 65536, false, w.n);
    w.n = 0;
    put(&w, SID, 10);
    add_chunk(&w, 0x01, data, 65537);
    expect_stream("0x01 body 65541", &w, UINT64_MAX, 0, WK_ERR_FRAME_CHUNK_TOO_LARGE, 10, 0, false,
                  0);
    w.n = 0;
    put(&w, SID, 10);
    uint8_t h[4] = {0x00, 0xce, 0x2a, 0x01}; /* 0x00 body 76494: accepted by the header check */
    put(&w, h, 4);
    expect_stream("0x00 body 76494 cut", &w, UINT64_MAX, 0, WK_ERR_FRAME_TRUNCATED, 14, 0, false,
                  0);
    w.n = 0;
    put(&w, SID, 10);
    h[1] = 0xcf; /* 76495 */
    put(&w, h, 4);
    expect_stream("0x00 body 76495", &w, UINT64_MAX, 0, WK_ERR_FRAME_CHUNK_TOO_LARGE, 10, 0, false,
                  0);
    /* a block declaring 65536 is fine, 65537 is CHUNK_TOO_LARGE (handmade row) */
    w.n = 0;
    put(&w, SID, 10);
    memset(data, 'q', 65536);
    add_chunk(&w, 0x00, data, 65536);
    expect_stream("0x00 decodes to 65536", &w, UINT64_MAX, 0, WK_OK, 0, 65536, false, w.n);

    /* skippable bodies: 76494 by default, configurable; skipped without being buffered */
    w.n = 0;
    put(&w, SID, 10);
    add_skippable(&w, 0xfe, 76494);
    add_skippable(&w, 0x80, 0);
    add_chunk(&w, 0x01, (const uint8_t *)"x", 1);
    expect_stream("padding 76494", &w, UINT64_MAX, 0, WK_OK, 0, 1, false, w.n);
    w.n = 0;
    put(&w, SID, 10);
    add_skippable(&w, 0xfd, 76495);
    expect_stream("skippable 76495", &w, UINT64_MAX, 0, WK_ERR_FRAME_CHUNK_TOO_LARGE, 10, 0, false,
                  0);
    expect_stream("skippable 76495 allowed", &w, UINT64_MAX, 1 << 20, WK_OK, 0, 0, false, w.n);
    w.n = 0;
    put(&w, SID, 10);
    add_skippable(&w, 0xfe, 101);
    expect_stream("padding 101 over 100", &w, UINT64_MAX, 100, WK_ERR_FRAME_CHUNK_TOO_LARGE, 10, 0,
                  false, 0);
    expect_stream("padding 101 at 101", &w, UINT64_MAX, 101, WK_OK, 0, 0, false, w.n);
    add_skippable(&w, 0x02, 0);
    expect_stream("reserved after padding", &w, UINT64_MAX, 101, WK_ERR_FRAME_RESERVED_CHUNK,
                  10 + 105, 0, false, 0);

    /* header-level errors later in a stream point at their chunk; block errors at the element */
    w.n = 0;
    put(&w, SID, 10);
    add_chunk(&w, 0x01, (const uint8_t *)"abc", 3); /* 10..21 */
    uint8_t bad[] = {0x00, 0x0a, 0x00, 0x00, 0, 0, 0, 0, 0x05, 0x00, 0x61, 0x0e, 0x02, 0x00};
    put(&w, bad, sizeof bad); /* at 21: block at 29, copy at 32 */
    expect_stream("bad offset in chunk 2", &w, UINT64_MAX, 0, WK_ERR_SNAPPY_BAD_OFFSET, 32, 3,
                  false, 0);
    w.n = 0;
    put(&w, SID, 10);
    add_chunk(&w, 0x01, (const uint8_t *)"abc", 3);
    put(&w, SID, 10);
    uint8_t badid[] = {0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'y'};
    put(&w, badid, sizeof badid);
    expect_stream("bad repeated identifier", &w, UINT64_MAX, 0, WK_ERR_FRAME_BAD_STREAM_ID, 31, 0,
                  false, 0);
    /* a bad checksum in a compressed chunk: the chunk's offset, no byte of it emitted */
    w.n = 0;
    put(&w, SID, 10);
    add_chunk(&w, 0x01, (const uint8_t *)"abc", 3);
    size_t at = w.n;
    fill_text(data, 5000);
    add_chunk(&w, 0x00, data, 5000);
    w.p[at + 5] ^= 1;
    expect_stream("crc in chunk 2", &w, UINT64_MAX, 0, WK_ERR_FRAME_CRC, at, 0, false, 0);
    /* an incompressible random block where libsnappy fails late: a literal cut inside */
    w.n = 0;
    put(&w, SID, 10);
    uint8_t lit[] = {0x00, 0x08, 0x00, 0x00, 0, 0, 0, 0, 0x04, 0x0c, 'a', 'b'};
    put(&w, lit, sizeof lit);
    expect_stream("literal cut in chunk", &w, UINT64_MAX, 0, WK_ERR_SNAPPY_TRUNCATED, 19, 0, false,
                  0);
    free(w.p);
}

static void test_output_limit(void)
{
    uint8_t data[20000];
    fill_text(data, sizeof data);
    buf w = {0};
    put(&w, SID, 10);
    add_chunk(&w, 0x01, data, 8);         /* 10..26 */
    add_chunk(&w, 0x00, data + 8, 10000); /* 26.. */
    size_t second = 26;
    size_t after_two = w.n;
    add_chunk(&w, 0x01, data + 10008, 100);
    size_t full = w.n;
    put(&w, "\x07\x07\x07", 3); /* bytes of whatever comes next (a result byte...) */

    /* limit 0: done before reading anything */
    expect_stream("limit 0", &w, 0, 0, WK_OK, 0, 0, true, 0);
    /* limit at the first boundary: done, the next chunk untouched */
    expect_stream("limit 8", &w, 8, 0, WK_OK, 0, 8, true, second);
    expect_stream("limit 10008", &w, 10008, 0, WK_OK, 0, 10008, true, after_two);
    expect_stream("limit 10108", &w, 10108, 0, WK_OK, 0, 10108, true, full);
    /* a limit inside a chunk: EXCESS_DATA at that chunk, judged by its decoded size */
    expect_stream("limit 7 (0x01)", &w, 7, 0, WK_ERR_SSZSNAPPY_EXCESS_DATA, 10, 0, false, 0);
    expect_stream("limit 9 (0x00)", &w, 9, 0, WK_ERR_SSZSNAPPY_EXCESS_DATA, second, 0, false, 0);
    expect_stream("limit 10107 (0x01)", &w, 10107, 0, WK_ERR_SSZSNAPPY_EXCESS_DATA, after_two, 0,
                  false, 0);
    /* no limit: the 3 trailing bytes are a reserved chunk type 0x07 */
    expect_stream("no limit", &w, UINT64_MAX, 0, WK_ERR_FRAME_RESERVED_CHUNK, full, 0, false, 0);
    /* empty chunks do not change the total: with limit 8 the boundary after the first chunk ends */
    buf z = {0};
    put(&z, SID, 10);
    add_chunk(&z, 0x01, data, 0);
    expect_stream("empty chunk, limit 0", &z, 0, 0, WK_OK, 0, 0, true, 0);
    /* a stream that ends before the limit is reached is just complete for the framing layer */
    expect_stream("empty chunk, limit 5", &z, 5, 0, WK_OK, 0, 0, false, z.n);

    /* DONE is repeated and consumes nothing; finish after it is OK */
    wk_error e;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(NULL, &e);
    wk_eth_snappy_frame_decoder_set_output_limit(d, 8);
    uint8_t out[64];
    wk_in in = {w.p, w.n, 0};
    wk_out o = {out, sizeof out, 0};
    CHECK(wk_eth_snappy_frame_decode(d, &in, &o, &e) == WK_DONE && in.pos == second && o.pos == 8);
    CHECK(wk_eth_snappy_frame_decode(d, &in, &o, &e) == WK_DONE && in.pos == second);
    CHECK(frame_finish(d, &e) == WK_OK);
    /* output pending at finish is the caller's state error, not a truncation, and not sticky */
    wk_eth_snappy_frame_decoder_reset(d); /* the limit is kept */
    wk_eth_snappy_frame_decoder_set_output_limit(d, UINT64_MAX);
    in.pos = 0;
    wk_out small = {out, 3, 0};
    CHECK(wk_eth_snappy_frame_decode(d, &in, &small, &e) == WK_NEED_OUTPUT && small.pos == 3);
    CHECK(frame_finish(d, &e) == WK_ERR_STATE);
    free(w.p);
    free(z.p);
    wk_eth_snappy_frame_decoder_destroy(d);
}

/* Peak memory stays at what create allocated, through every path and an allocation failure. */
static void test_memory(void)
{
    wk_alloc_counter cnt = {0};
    wk_allocator a = wk_counting_allocator(&cnt);
    wk_error e;
    wk_eth_snappy_frame_decoder *d = wk_eth_snappy_frame_decoder_create(&(wk_eth_snappy_frame_params){&a}, &e);
    wk_eth_snappy_frame_encoder *enc = wk_eth_snappy_frame_encoder_create(&(wk_eth_snappy_frame_params){&a}, &e);
    REQUIRE(d && enc);
    size_t created = cnt.peak;
    CHECKF(created < 300 * 1024, "decoder + encoder: %zu bytes", created);
    size_t n = 300000;
    uint8_t *src = malloc(n), *wire = malloc(400000), *back = malloc(n);
    fill_text(src, n);
    for (int t = 0; t < 8; t++) {
        /* encoded through the harness (the encoder reset before the run): random push and view
         * sizes per round, the last piece written by the flush */
        wk_contract_eth_sink sink = {0};
        wk_contract_eth_frame_enc f;
        wk_contract_eth_frame_enc_setup(&f, NULL);
        f.e = enc;
        f.keep_encoder = true;
        f.sink = &sink;
        wk_contract_plan plan = {1 + (size_t)(rng() % 70000), NULL, 0, 1 + (size_t)(rng() % 80000),
                                 t % 2 == 1, false};
        char why[320];
        CHECKF(wk_contract_drive_flush(&wk_contract_eth_frame_enc_ops,
                                       wk_contract_eth_frame_enc_flush, &f, NULL, src, n, &plan,
                                       NULL, why, sizeof why),
               "memory round %d: %s", t, why);
        wk_contract_eth_frame_enc_cleanup(&f);
        REQUIRE(sink.n <= 400000);
        memcpy(wire, sink.p, sink.n);
        size_t wn = sink.n;
        free(sink.p);
        /* decoded through the harness: random push and view sizes per round */
        buf got = {0};
        bool done;
        size_t push = 1 + (size_t)(rng() % 90000), view = 1 + (size_t)(rng() % 70000);
        wk_code c = frame_decode(d, wire, wn, push, view, &got, &e, &done);
        CHECKF(c == WK_OK && same(got.p, got.n, src, n), "memory round %d: push %zu view %zu: %s",
               t, push, view, code_name(c));
        free(got.p);
    }
    CHECKF(cnt.peak == created && cnt.count == 2, "peak %zu, created %zu, %llu allocations",
           cnt.peak, created, (unsigned long long)cnt.count);
    wk_eth_snappy_frame_decoder_destroy(d);
    wk_eth_snappy_frame_encoder_destroy(enc);
    CHECK(cnt.current == 0);
    /* a failing allocation: NULL and NOMEM */
    cnt.limit = 1000;
    CHECK(wk_eth_snappy_frame_decoder_create(&(wk_eth_snappy_frame_params){&a}, &e) == NULL && e.code == WK_ERR_NOMEM);
    CHECK(wk_eth_snappy_frame_encoder_create(&(wk_eth_snappy_frame_params){&a}, &e) == NULL && e.code == WK_ERR_NOMEM);
    free(src);
    free(wire);
    free(back);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s tests/vectors/eth\n", argv[0]);
        return 2;
    }
    vec_dir = argv[1];
    test_handmade();
    test_manifest();
    test_block_peek();
    test_block_views();
    test_block_elements();
    test_libsnappy_wrap();
    test_grammar_agreement();
    test_block_encode();
    test_validator_agreement();
    test_worked_example();
    test_encoder_harness();
    test_encoder_policy();
    test_roundtrips();
    test_frame_limits();
    test_output_limit();
    test_memory();
    CHECKF(disagreements == 0, "libsnappy and the validator disagreed on %d blocks", disagreements);
    printf("libsnappy vs validator: %d disagreements, %d blocks only libsnappy's literal length wrap "
           "accepts\n",
           disagreements, wrap_cases);
    return wk_test_summary("eth_snappy");
}
