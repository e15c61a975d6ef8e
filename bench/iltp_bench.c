/* ILTP stream encoding (Lace-065) throughput, beside the direct zlib / libzstd calls.
 *
 * For each corpus (ILTP-like text, random bytes), token (identity, deflate12c, zstd20c) and batch
 * size (256 B, 4 KiB, 64 KiB, 1 MiB) it times, in the same run:
 *   encode  wirekit: wk_iltp_encode, one FLUSH per batch, END at the end
 *           direct:  deflate12c: deflateInit2(level, -12, memLevel 8) + deflateSetDictionary,
 *                    deflate(Z_SYNC_FLUSH) per batch, deflate(Z_FINISH);
 *                    zstd20c: ZSTD_compressStream2, magicless, the parameters src/iltp/stream.c
 *                    sets (zstd_configure), ZSTD_CCtx_refPrefix_advanced(raw content),
 *                    ZSTD_e_flush per batch, ZSTD_e_end;
 *                    identity: memcpy
 *   decode  wirekit: wk_iltp_decode of the encoded stream
 *           direct:  inflateInit2(-12) + inflateSetDictionary + inflate; ZSTD_decompressStream
 *                    with the same prefix; memcpy for identity
 * Every call uses 64 KiB output views; decoders take the encoded stream in 64 KiB pushes. Speeds
 * are in MB/s (10^6 bytes per second) of decoded bytes, the median of N repetitions; in each
 * repetition wirekit and direct run back to back (alternating which goes first), each timing
 * repeating the whole-corpus operation until it lasts 40 ms, and the wirekit/direct column is the
 * median of the per-repetition speed ratios (robust to the machine's drift). Every run starts a
 * fresh logical session on a context created once (reset + dictionary), as a long-lived endpoint
 * would. Decoded output is checked against
 * the corpus outside the timed region; the wirekit and direct encodings are compared byte for byte.
 * Memory: decoder (and encoder) peak through wk_counting_allocator for wirekit; zlib through a
 * counting zalloc; libzstd through ZSTD_sizeof_DCtx / ZSTD_sizeof_CCtx.
 *
 * usage: iltp_bench [--quick] [--reps N (default 11)] [--mib N (default 8)] [--deflate-level N]
 *                   [--zstd-level N]
 *   --quick  a tiny run for CI (256 KiB corpora, 3 repetitions) */
#define ZSTD_STATIC_LINKING_ONLY
#include <wirekit/iltp.h>
#include <zlib.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define WK_BENCH_NAME "iltp_bench"
#include "bench_util.h"

#define VIEW ((size_t)64 * 1024)
#define MAX_REPS 51

/* ---------------------------------------------------------------------------------------------
 * Corpora
 * ------------------------------------------------------------------------------------------- */
static uint64_t rng_state = 0x065065065ull;
static uint64_t rnd(void) { return splitmix64(&rng_state); }

typedef struct sbuf {
    uint8_t *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) die("corpus buffer overflow");
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static const char *const words[] = {
    "the", "record", "stream", "session", "listing", "of", "and", "field", "value", "to", "a",
    "in", "peer", "batch", "offer", "for", "round", "is", "request", "response", "with", "data",
    "block", "that", "an", "on", "fence", "policy", "each", "as", "proof", "by", "hash", "symbol",
    "change", "from", "local", "side", "known", "missing", "it", "was", "not", "order", "plan",
    "operand", "rule", "answer", "state", "text"};
#define NWORDS (sizeof words / sizeof words[0])

/* text-ish data: sentences of common words, some numbers, line breaks */
static void prose(sbuf *b, size_t len)
{
    size_t start = b->n;
    bool cap = true;
    while (b->n - start < len) {
        char w[32];
        const char *word = words[rnd() % NWORDS];
        if (rnd() % 23 == 0) {
            snprintf(w, sizeof w, "%u", (unsigned)(rnd() % 100000));
            word = w;
        }
        char t[40];
        snprintf(t, sizeof t, "%s", word);
        if (cap && t[0] >= 'a' && t[0] <= 'z') t[0] = (char)(t[0] - 32);
        cap = false;
        size_t room = len - (b->n - start);
        size_t tl = strlen(t);
        if (tl >= room) {
            put(b, "..........................................", min_sz(room, 40));
            break;
        }
        put(b, t, tl);
        uint64_t r = rnd() % 16;
        const char *sep = r == 0 ? ".\n" : r == 1 ? ". " : r == 2 ? ", " : " ";
        if (r <= 1) cap = true;
        if (strlen(sep) < len - (b->n - start)) puts_(b, sep);
    }
    while (b->n - start < len) put(b, "\n", 1);
}

static void hash_ref(char out[44], const uint8_t *content, size_t n)
{
    uint8_t h[WK_BLAKE3_OUT_LEN];
    wk_blake3(content, n, h);
    wk_b64a_encode(h, sizeof h, out);
    out[43] = 0;
}

/* An ILTP-like item stream: advertisement blocks, request blocks, Blob records, round ends. */
static void iltp_corpus(uint8_t *dst, size_t target)
{
    sbuf b = {dst, 0, target + 65536};
    enum { POOL = 4096 };
    static char ids[POOL][44];
    size_t nids = 0;
    static const char *const fields[] = {"Type", "Title", "Size", "Created", "Tag", "Owner"};
    uint8_t *content = malloc(16384);
    if (!content) die("out of memory");
    while (b.n < target) {
        char line[512];
        /* advertisement block */
        unsigned recs = 1 + (unsigned)(rnd() % 24);
        for (unsigned r = 0; r < recs; r++) {
            uint8_t raw[32];
            for (int i = 0; i < 32; i++) raw[i] = (uint8_t)rnd();
            char *id = ids[nids % POOL];
            wk_b64a_encode(raw, 32, id);
            id[43] = 0;
            nids++;
            snprintf(line, sizeof line, "Advertised('B.%s.H3')\n", id);
            puts_(&b, line);
            unsigned nf = 1 + (unsigned)(rnd() % 4);
            for (unsigned f = 0; f < nf; f++) {
                char val[64];
                snprintf(val, sizeof val, "%s %s %u", words[rnd() % NWORDS], words[rnd() % NWORDS],
                         (unsigned)(rnd() % 1000));
                snprintf(line, sizeof line, "AdvertisedField('B.%s.H3','%s','0','%s')\n", id,
                         fields[rnd() % 6], val);
                puts_(&b, line);
            }
        }
        puts_(&b, "\n");
        /* request block: previously advertised ids */
        unsigned reqs = (unsigned)(rnd() % 12);
        size_t have = nids < POOL ? nids : POOL;
        for (unsigned r = 0; r < reqs; r++) {
            snprintf(line, sizeof line, "MayRequest('B.%s.H3')\n", ids[rnd() % have]);
            puts_(&b, line);
        }
        puts_(&b, "\n");
        /* responses: Blob records with text-ish data */
        unsigned blobs = (unsigned)(rnd() % 6);
        for (unsigned k = 0; k < blobs; k++) {
            size_t dlen = 64 + (size_t)(rnd() % 6000);
            char head[40];
            int hl = snprintf(head, sizeof head, "Data-Length: %zu\n\n", dlen);
            sbuf c = {content, 0, 16384};
            put(&c, head, (size_t)hl);
            prose(&c, dlen);
            char h[44];
            hash_ref(h, c.p, c.n);
            snprintf(line, sizeof line, "\xF0\x9F\x96\xA7: B.%s.H3\n", h);
            puts_(&b, line);
            put(&b, c.p, c.n);
        }
        puts_(&b, "RoundComplete()\n\n");
    }
    free(content);
}

static void random_corpus(uint8_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rnd();
        memcpy(dst + i, &v, min_sz(8, n - i));
    }
}

/* ---------------------------------------------------------------------------------------------
 * Counting allocators for the direct calls
 * ------------------------------------------------------------------------------------------- */
static voidpf zc_alloc(voidpf opaque, uInt items, uInt size)
{
    wk_allocator *a = opaque;
    return a->alloc(a->opaque, (size_t)items * size);
}
static void zc_free(voidpf opaque, voidpf p)
{
    wk_allocator *a = opaque;
    a->free(a->opaque, p);
}

/* ---------------------------------------------------------------------------------------------
 * The contexts under test
 * ------------------------------------------------------------------------------------------- */
typedef struct run {
    wk_iltp_encoding enc;
    int level;
    const uint8_t *src;
    size_t n, batch;
    uint8_t *wire; /* encoded stream */
    size_t wire_cap, wire_len;
    uint8_t *wire2; /* direct encoder's stream */
    size_t wire2_len;
    uint8_t *out; /* decoded */
    size_t out_cap;
    /* contexts */
    wk_iltp_encoder *we;
    wk_iltp_decoder *wd;
    z_stream zc, zd;
    ZSTD_CCtx *cc;
    ZSTD_DCtx *dc;
} run;

static void zstd_params(ZSTD_CCtx *cc, int level)
{
    /* exactly what src/iltp/stream.c zstd_configure sets */
    ZSTD_compressionParameters cp = ZSTD_getCParams(level, 0, 0);
    cp.windowLog = 20;
    if (cp.hashLog > 21) cp.hashLog = 21;
    unsigned cycle = cp.chainLog - (cp.strategy >= ZSTD_btlazy2 ? 1u : 0u);
    if (cycle > 20) cp.chainLog -= cycle - 20;
    struct {
        ZSTD_cParameter p;
        int v;
    } set[] = {
        {ZSTD_c_format, ZSTD_f_zstd1_magicless},
        {ZSTD_c_compressionLevel, level},
        {ZSTD_c_windowLog, (int)cp.windowLog},
        {ZSTD_c_hashLog, (int)cp.hashLog},
        {ZSTD_c_chainLog, (int)cp.chainLog},
        {ZSTD_c_searchLog, (int)cp.searchLog},
        {ZSTD_c_minMatch, (int)cp.minMatch},
        {ZSTD_c_targetLength, (int)cp.targetLength},
        {ZSTD_c_strategy, (int)cp.strategy},
        {ZSTD_c_contentSizeFlag, 0},
        {ZSTD_c_checksumFlag, 0},
        {ZSTD_c_dictIDFlag, 0},
    };
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++)
        if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, set[k].p, set[k].v))) die("zstd parameter");
}

/* wirekit encode of the whole corpus; returns the encoded length */
static size_t wk_encode(run *r, uint8_t *dst)
{
    wk_error err;
    if (wk_iltp_encoder_reset(r->we, &err) != WK_OK) die("encoder reset");
    size_t pos = 0;
    for (size_t off = 0;; off += r->batch) {
        bool last = off >= r->n;
        wk_in in = {r->src + (last ? 0 : off), last ? 0 : min_sz(r->batch, r->n - off), 0};
        wk_iltp_op op = last ? WK_ILTP_END : WK_ILTP_FLUSH;
        wk_result res;
        do {
            if (pos == r->wire_cap) die("encoded stream too large");
            wk_out out = {dst + pos, min_sz(VIEW, r->wire_cap - pos), 0};
            res = wk_iltp_encode(r->we, &out, &in, op, &err);
            pos += out.pos;
        } while (res == WK_NEED_OUTPUT);
        if (res != WK_DONE) die(err.msg);
        if (last) break;
    }
    return pos;
}

static size_t direct_encode(run *r, uint8_t *dst)
{
    size_t pos = 0;
    if (r->enc == WK_ILTP_IDENTITY) {
        for (size_t off = 0; off < r->n; off += r->batch) {
            size_t len = min_sz(r->batch, r->n - off);
            memcpy(dst + pos, r->src + off, len);
            pos += len;
        }
        return pos;
    }
    if (r->enc == WK_ILTP_DEFLATE12C) {
        z_stream *z = &r->zc;
        if (deflateReset(z) != Z_OK ||
            deflateSetDictionary(z, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN) != Z_OK)
            die("deflate reset");
        for (size_t off = 0; off <= r->n; off += r->batch) {
            bool last = off == r->n || r->n - off <= r->batch;
            size_t len = min_sz(r->batch, r->n - off);
            z->next_in = (Bytef *)(uintptr_t)(r->src + off);
            z->avail_in = (uInt)len;
            do {
                if (pos == r->wire_cap) die("encoded stream too large");
                size_t room = min_sz(VIEW, r->wire_cap - pos);
                z->next_out = dst + pos;
                z->avail_out = (uInt)room;
                if (deflate(z, Z_SYNC_FLUSH) == Z_STREAM_ERROR) die("deflate");
                pos += room - z->avail_out;
            } while (z->avail_out == 0);
            if (last) break;
        }
        int zr;
        do {
            size_t room = min_sz(VIEW, r->wire_cap - pos);
            z->next_out = dst + pos;
            z->avail_out = (uInt)room;
            zr = deflate(z, Z_FINISH);
            if (zr == Z_STREAM_ERROR) die("deflate finish");
            pos += room - z->avail_out;
        } while (zr != Z_STREAM_END);
        return pos;
    }
    ZSTD_CCtx *cc = r->cc;
    if (ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_only)) ||
        ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(cc, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN,
                                                  ZSTD_dct_rawContent)))
        die("zstd reset");
    for (size_t off = 0; off < r->n; off += r->batch) {
        ZSTD_inBuffer in = {r->src + off, min_sz(r->batch, r->n - off), 0};
        size_t rem;
        do {
            if (pos == r->wire_cap) die("encoded stream too large");
            ZSTD_outBuffer out = {dst + pos, min_sz(VIEW, r->wire_cap - pos), 0};
            rem = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_flush);
            if (ZSTD_isError(rem)) die(ZSTD_getErrorName(rem));
            pos += out.pos;
        } while (rem != 0);
    }
    ZSTD_inBuffer none = {NULL, 0, 0};
    size_t rem;
    do {
        ZSTD_outBuffer out = {dst + pos, min_sz(VIEW, r->wire_cap - pos), 0};
        rem = ZSTD_compressStream2(cc, &out, &none, ZSTD_e_end);
        if (ZSTD_isError(rem)) die(ZSTD_getErrorName(rem));
        pos += out.pos;
    } while (rem != 0);
    return pos;
}

/* wirekit decode of r->wire into r->out; returns the decoded length */
static size_t wk_decode(run *r)
{
    wk_error err;
    if (wk_iltp_decoder_reset(r->wd, &err) != WK_OK) die("decoder reset");
    size_t ipos = 0, opos = 0;
    wk_result res = WK_NEED_INPUT;
    while (ipos < r->wire_len) {
        wk_in in = {r->wire + ipos, min_sz(VIEW, r->wire_len - ipos), 0};
        do {
            if (opos == r->out_cap) die("decoded output too large");
            wk_out out = {r->out + opos, min_sz(VIEW, r->out_cap - opos), 0};
            res = wk_iltp_decode(r->wd, &out, &in, &err);
            opos += out.pos;
        } while (res == WK_NEED_OUTPUT);
        if (res == WK_ERROR) die(err.msg);
        ipos += in.pos;
        if (res == WK_DONE) break;
    }
    if (wk_iltp_decoder_finish(r->wd, NULL, &err) != WK_OK) die(err.msg);
    return opos;
}

static size_t direct_decode(run *r)
{
    size_t ipos = 0, opos = 0;
    if (r->enc == WK_ILTP_IDENTITY) {
        for (; ipos < r->wire_len; ipos += VIEW) {
            size_t len = min_sz(VIEW, r->wire_len - ipos);
            memcpy(r->out + opos, r->wire + ipos, len);
            opos += len;
        }
        return opos;
    }
    if (r->enc == WK_ILTP_DEFLATE12C) {
        z_stream *z = &r->zd;
        if (inflateReset(z) != Z_OK ||
            inflateSetDictionary(z, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN) != Z_OK)
            die("inflate reset");
        int zr = Z_OK;
        while (ipos < r->wire_len && zr != Z_STREAM_END) {
            size_t len = min_sz(VIEW, r->wire_len - ipos);
            z->next_in = r->wire + ipos;
            z->avail_in = (uInt)len;
            do {
                size_t room = min_sz(VIEW, r->out_cap - opos);
                z->next_out = r->out + opos;
                z->avail_out = (uInt)room;
                zr = inflate(z, Z_NO_FLUSH);
                if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) die("inflate");
                opos += room - z->avail_out;
            } while (z->avail_out == 0 && zr != Z_STREAM_END);
            ipos += len - z->avail_in;
        }
        if (zr != Z_STREAM_END) die("inflate: no end mark");
        return opos;
    }
    ZSTD_DCtx *dc = r->dc;
    if (ZSTD_isError(ZSTD_DCtx_reset(dc, ZSTD_reset_session_only)) ||
        ZSTD_isError(ZSTD_DCtx_refPrefix_advanced(dc, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN,
                                                  ZSTD_dct_rawContent)))
        die("zstd decoder reset");
    size_t ret = 1;
    while (ipos < r->wire_len && ret != 0) {
        ZSTD_inBuffer in = {r->wire + ipos, min_sz(VIEW, r->wire_len - ipos), 0};
        do {
            ZSTD_outBuffer out = {r->out + opos, min_sz(VIEW, r->out_cap - opos), 0};
            ret = ZSTD_decompressStream(dc, &out, &in);
            if (ZSTD_isError(ret)) die(ZSTD_getErrorName(ret));
            opos += out.pos;
            if (ret == 0 || (in.pos == in.size && out.pos < out.size)) break;
        } while (1);
        ipos += in.pos;
    }
    if (ret != 0) die("zstd: no end mark");
    return opos;
}

/* ---------------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------------- */
typedef struct cell {
    double enc_wk, enc_direct, dec_wk, dec_direct; /* MB/s medians */
    double enc_ratio, dec_ratio;                  /* medians of the per-repetition ratios */
    double ratio;                                 /* encoded / decoded */
    bool same_bytes;
} cell;

enum op { WK_ENC, DIRECT_ENC, WK_DEC, DIRECT_DEC };

static double min_seconds = 0.04; /* each timing repeats the operation at least this long */

/* Seconds per operation, over `iters` back-to-back runs. */
static double time_op(run *r, enum op op, int iters)
{
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case WK_ENC: wk_encode(r, r->wire2); break;
        case DIRECT_ENC: direct_encode(r, r->wire2); break;
        case WK_DEC: wk_decode(r); break;
        case DIRECT_DEC: direct_decode(r); break;
        }
    }
    return (now() - t0) / iters;
}

/* Times wirekit against direct: `reps` repetitions, alternating which goes first; each timing
 * repeats the operation so it lasts at least min_seconds. */
static void compare(run *r, enum op wk, enum op direct, int reps, double *mbs_wk, double *mbs_direct,
                    double *ratio)
{
    double w[MAX_REPS], d[MAX_REPS], q[MAX_REPS];
    double one = time_op(r, wk, 1), other = time_op(r, direct, 1); /* warm-up and calibration */
    double slow = one > other ? one : other;
    int iters = slow >= min_seconds ? 1 : (int)(min_seconds / (slow > 1e-9 ? slow : 1e-9)) + 1;
    for (int k = 0; k < reps; k++) {
        double tw, td;
        if (k % 2 == 0) {
            tw = time_op(r, wk, iters);
            td = time_op(r, direct, iters);
        } else {
            td = time_op(r, direct, iters);
            tw = time_op(r, wk, iters);
        }
        w[k] = (double)r->n / tw / 1e6;
        d[k] = (double)r->n / td / 1e6;
        q[k] = td / tw; /* wirekit speed / direct speed */
    }
    *mbs_wk = median(w, reps);
    *mbs_direct = median(d, reps);
    *ratio = median(q, reps);
}

static cell measure(run *r, int reps)
{
    cell c;
    /* the streams the decoders read */
    r->wire_len = wk_encode(r, r->wire);
    r->wire2_len = direct_encode(r, r->wire2);
    c.same_bytes = r->wire_len == r->wire2_len && memcmp(r->wire, r->wire2, r->wire_len) == 0;
    c.ratio = (double)r->wire_len / (double)r->n;
    compare(r, WK_ENC, DIRECT_ENC, reps, &c.enc_wk, &c.enc_direct, &c.enc_ratio);
    /* decoders read the wirekit stream; check the output once each */
    memset(r->out, 0, r->n);
    if (wk_decode(r) != r->n || memcmp(r->out, r->src, r->n) != 0) die("wirekit decode mismatch");
    memset(r->out, 0, r->n);
    if (direct_decode(r) != r->n || memcmp(r->out, r->src, r->n) != 0) die("direct decode mismatch");
    compare(r, WK_DEC, DIRECT_DEC, reps, &c.dec_wk, &c.dec_direct, &c.dec_ratio);
    return c;
}

static const char *human(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0) snprintf(buf, cap, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0) snprintf(buf, cap, "%zu KiB", n >> 10);
    else snprintf(buf, cap, "%zu B", n);
    return buf;
}

int main(int argc, char **argv)
{
    int reps = 11, dlevel = 6, zlevel = 3;
    size_t mib = 8;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) mib = (size_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--deflate-level") == 0 && i + 1 < argc) dlevel = atoi(argv[++i]);
        else if (strcmp(argv[i], "--zstd-level") == 0 && i + 1 < argc) zlevel = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: iltp_bench [--quick] [--reps N] [--mib N] [--deflate-level N] "
                            "[--zstd-level N]\n");
            return 2;
        }
    }
    size_t n = mib << 20;
    if (quick) {
        n = 256u << 10;
        reps = 3;
        min_seconds = 0.002;
    }
    if (reps < 1 || reps > MAX_REPS || n == 0) die("bad --reps or --mib");
    double t_start = now();

    uint8_t *text = malloc(n + 65536), *randb = malloc(n);
    if (!text || !randb) die("out of memory");
    iltp_corpus(text, n);
    random_corpus(randb, n);

    static const size_t batches[4] = {256, 4096, 65536, 1u << 20};
    static const wk_iltp_encoding encs[3] = {WK_ILTP_IDENTITY, WK_ILTP_DEFLATE12C, WK_ILTP_ZSTD20C};
    struct {
        const char *name;
        const uint8_t *p;
    } corpora[2] = {{"ILTP-like text", text}, {"random bytes", randb}};

    run r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.wire_cap = 2 * n + (1u << 20);
    r.out_cap = n + VIEW;
    r.wire = malloc(r.wire_cap);
    r.wire2 = malloc(r.wire_cap);
    r.out = malloc(r.out_cap);
    if (!r.wire || !r.wire2 || !r.out) die("out of memory");

    printf("wirekit %s iltp_bench: zlib %s, libzstd %s; deflate12c level %d, zstd20c level %d\n",
           wk_version(), zlibVersion(), ZSTD_versionString(), dlevel, zlevel);
    printf("corpora %zu bytes each; MB/s = 10^6 decoded bytes per second, median of %d repetitions "
           "(each >= %.0f ms); wirekit/direct = median of the per-repetition speed ratios; 64 KiB "
           "output views\n",
           n, reps, min_seconds * 1e3);

    /* memory, per token, measured on the text corpus with 64 KiB batches */
    size_t wk_dec_peak[3] = {0}, wk_enc_peak[3] = {0}, direct_dec[3] = {0}, direct_enc[3] = {0};

    for (int ci = 0; ci < 2; ci++) {
        printf("\n### %s\n\n", corpora[ci].name);
        printf("| token | batch | encoded/decoded | encode wirekit | encode direct | wirekit/direct "
               "| decode wirekit | decode direct | wirekit/direct | same bytes |\n");
        printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
        fflush(stdout);
        r.src = corpora[ci].p;
        for (int ei = 0; ei < 3; ei++) {
            wk_alloc_counter ce, cd, zc_ctr, zd_ctr;
            memset(&ce, 0, sizeof ce);
            memset(&cd, 0, sizeof cd);
            memset(&zc_ctr, 0, sizeof zc_ctr);
            memset(&zd_ctr, 0, sizeof zd_ctr);
            wk_allocator ae = wk_counting_allocator(&ce), ad = wk_counting_allocator(&cd);
            wk_allocator azc = wk_counting_allocator(&zc_ctr), azd = wk_counting_allocator(&zd_ctr);
            wk_error err;
            r.enc = encs[ei];
            r.level = encs[ei] == WK_ILTP_DEFLATE12C ? dlevel : encs[ei] == WK_ILTP_ZSTD20C ? zlevel : 0;
            wk_iltp_encoder_params prm = {r.level, &ae, WK_ILTP_BACKEND_DEFAULT};
            r.we = wk_iltp_encoder_create(r.enc, &prm, &err);
            wk_iltp_decoder_params dprm = {&ad, WK_ILTP_BACKEND_DEFAULT};
            r.wd = wk_iltp_decoder_create(r.enc, &dprm, &err);
            if (!r.we || !r.wd) die("wirekit create");
            if (r.enc == WK_ILTP_DEFLATE12C) {
                memset(&r.zc, 0, sizeof r.zc);
                memset(&r.zd, 0, sizeof r.zd);
                r.zc.zalloc = r.zd.zalloc = zc_alloc;
                r.zc.zfree = r.zd.zfree = zc_free;
                r.zc.opaque = &azc;
                r.zd.opaque = &azd;
                if (deflateInit2(&r.zc, dlevel, Z_DEFLATED, -12, 8, Z_DEFAULT_STRATEGY) != Z_OK ||
                    inflateInit2(&r.zd, -12) != Z_OK)
                    die("zlib init");
            } else if (r.enc == WK_ILTP_ZSTD20C) {
                r.cc = ZSTD_createCCtx();
                r.dc = ZSTD_createDCtx();
                if (!r.cc || !r.dc) die("zstd create");
                zstd_params(r.cc, zlevel);
                if (ZSTD_isError(ZSTD_DCtx_setParameter(r.dc, ZSTD_d_format, ZSTD_f_zstd1_magicless)) ||
                    ZSTD_isError(ZSTD_DCtx_setParameter(r.dc, ZSTD_d_windowLogMax, 20)))
                    die("zstd decoder parameters");
            }
            for (int bi = 0; bi < 4; bi++) {
                r.batch = batches[bi];
                cell c = measure(&r, reps);
                char hb[32];
                printf("| %s | %s | %.3f | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %s |\n",
                       wk_iltp_encoding_token(r.enc), human(r.batch, hb, sizeof hb), c.ratio,
                       c.enc_wk, c.enc_direct, c.enc_ratio, c.dec_wk, c.dec_direct, c.dec_ratio,
                       c.same_bytes ? "yes" : "no");
                fflush(stdout);
            }
            if (ci == 0) {
                wk_dec_peak[ei] = cd.peak;
                wk_enc_peak[ei] = ce.peak;
                if (r.enc == WK_ILTP_DEFLATE12C) {
                    direct_dec[ei] = zd_ctr.peak;
                    direct_enc[ei] = zc_ctr.peak;
                } else if (r.enc == WK_ILTP_ZSTD20C) {
                    direct_dec[ei] = ZSTD_sizeof_DCtx(r.dc);
                    direct_enc[ei] = ZSTD_sizeof_CCtx(r.cc);
                }
            }
            wk_iltp_encoder_free(r.we);
            wk_iltp_decoder_free(r.wd);
            if (r.enc == WK_ILTP_DEFLATE12C) {
                deflateEnd(&r.zc);
                inflateEnd(&r.zd);
            } else if (r.enc == WK_ILTP_ZSTD20C) {
                ZSTD_freeCCtx(r.cc);
                ZSTD_freeDCtx(r.dc);
                r.cc = NULL;
                r.dc = NULL;
            }
        }
    }

    printf("\n### Memory (bytes, after the text runs)\n\n");
    printf("| token | wirekit decoder peak | direct decoder | wirekit encoder peak | direct encoder "
           "| decoder target |\n");
    printf("|---|---:|---:|---:|---:|---|\n");
    for (int ei = 0; ei < 3; ei++) {
        const char *target = encs[ei] == WK_ILTP_DEFLATE12C ? "< 65536 (64 KiB)"
                             : encs[ei] == WK_ILTP_ZSTD20C ? "< 1572864 (1.5 MiB)"
                                                           : "-";
        bool ok = encs[ei] == WK_ILTP_DEFLATE12C ? wk_dec_peak[ei] < 65536
                  : encs[ei] == WK_ILTP_ZSTD20C ? wk_dec_peak[ei] < 1572864
                                                : true;
        printf("| %s | %zu | %zu | %zu | %zu | %s%s |\n", wk_iltp_encoding_token(encs[ei]),
               wk_dec_peak[ei], direct_dec[ei], wk_enc_peak[ei], direct_enc[ei], target,
               encs[ei] == WK_ILTP_IDENTITY ? "" : ok ? " met" : " MISSED");
    }
    printf("\ndirect decoder memory: zlib = peak through a counting zalloc; libzstd = "
           "ZSTD_sizeof_DCtx after decoding (the encoder column likewise)\n");
    printf("total time %.1f s\n", now() - t_start);

    free(text);
    free(randb);
    free(r.wire);
    free(r.wire2);
    free(r.out);
    return 0;
}
