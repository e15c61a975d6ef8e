/* ILTP stream encoding (Lace-065) throughput, beside the direct zlib / ISA-L / libzstd calls.
 *
 * For each corpus (ILTP-like text, random bytes), coder (identity, deflate12c with zlib,
 * deflate12c with ISA-L, zstd20c) and batch size (256 B, 4 KiB, 64 KiB, 1 MiB) it times, in the
 * same run:
 *   encode  wirekit: wk_iltp_encoder_encode, one FLUSH per batch, END at the end
 *           direct:  deflate12c/zlib: deflateInit2(level, -12, memLevel 8) + deflateSetDictionary,
 *                    deflate(Z_SYNC_FLUSH) per batch, deflate(Z_FINISH);
 *                    deflate12c/ISA-L: isal_deflate with the igzip level, level buffer and
 *                    hist_bits src/iltp/stream_setup.h defines + isal_deflate_set_dict,
 *                    SYNC_FLUSH per batch, the end mark 03 00 appended;
 *                    zstd20c: ZSTD_compressStream2 with the parameters of stream_setup.h
 *                    (wk_iltp_zstd_cctx_setup, the library's own definition),
 *                    ZSTD_CCtx_refPrefix_advanced(raw content), ZSTD_e_flush per batch, ZSTD_e_end;
 *                    identity: memcpy
 *   decode  wirekit: wk_iltp_decoder_decode of the encoded stream
 *           direct:  inflateInit2(-12) + inflateSetDictionary + inflate; isal_inflate +
 *                    isal_inflate_set_dict; ZSTD_decompressStream with the same prefix; memcpy
 * Then, for deflate12c, ISA-L against zlib in the same run (the targets of issue 17): the wirekit
 * encoders against each other (speed, and encoded size), and the two wirekit decoders on the zlib
 * encoder's stream.
 * Every call uses 64 KiB output views; decoders take the encoded stream in 64 KiB pushes. Speeds
 * are in MB/s (10^6 bytes per second) of decoded bytes, the median of N repetitions; in each
 * repetition the two sides run back to back (alternating which goes first), each timing
 * repeating the whole-corpus operation until it lasts 40 ms, and a ratio column is the median of
 * the per-repetition speed ratios (robust to the machine's drift). Every run starts a fresh
 * logical session on a context created once (reset + dictionary), as a long-lived endpoint
 * would. Decoded output is checked against the corpus outside the timed region; the wirekit and
 * direct encodings are compared byte for byte.
 * Memory: decoder (and encoder) peak through wk_counting_allocator for wirekit; zlib through a
 * counting zalloc; ISA-L its structures' sizes (sizeof, plus the level buffer); libzstd through
 * ZSTD_sizeof_DCtx / ZSTD_sizeof_CCtx.
 *
 * usage: iltp_bench [--quick] [--reps N (default 11)] [--mib N (default 8)] [--deflate-level N]
 *                   [--zstd-level N] [--cpu] [--only TEXT]
 *   --quick  a tiny run for CI (256 KiB corpora, 3 repetitions)
 *   --cpu    time with the process CPU clock instead of the wall clock: on a machine shared with
 *            other jobs, being preempted then costs nothing (cache effects of the neighbours
 *            remain)
 *   --only   run the coders whose name contains TEXT (and the ISA-L/zlib pairs only when both
 *            deflate12c coders run) */
#include <wirekit/iltp.h>
#include "stream_setup.h" /* src/iltp is on this benchmark's include path (CMakeLists.txt) */
#include <zlib.h>
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

typedef bench_buf sbuf;
#define put bench_put
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
            char head[WK_ILTP_BLOB_CONTENT_HEAD_MAX];
            size_t hl = wk_iltp_blob_content_head_format(dlen, head);
            sbuf c = {content, 0, 16384};
            put(&c, head, hl);
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
typedef struct coder {
    wk_iltp_encoding enc;
    wk_iltp_backend be;
    const char *name;
} coder;

static const coder coders[4] = {{WK_ILTP_IDENTITY, WK_ILTP_BACKEND_DEFAULT, "identity"},
                                {WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ZLIB, "deflate12c (zlib)"},
                                {WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ISAL, "deflate12c (ISA-L)"},
                                {WK_ILTP_ZSTD20C, WK_ILTP_BACKEND_DEFAULT, "zstd20c"}};

typedef struct run {
    coder c;
    int level;
    const uint8_t *src;
    size_t n, batch;
    uint8_t *wire; /* encoded stream the decoders read */
    size_t wire_cap, wire_len;
    uint8_t *wire2; /* scratch for the timed encoders */
    size_t wire2_len;
    uint8_t *out; /* decoded */
    size_t out_cap;
    /* contexts */
    wk_iltp_encoder *we;
    wk_iltp_decoder *wd;
    wk_alloc_counter ce, cd, zc_ctr, zd_ctr;
    wk_allocator azc, azd;
    z_stream zc, zd;
    struct isal_zstream *ic;
    uint8_t *level_buf;
    uint32_t level_buf_size;
    struct inflate_state *id;
    ZSTD_CCtx *cc;
    ZSTD_DCtx *dc;
} run;

static void run_open(run *r, coder c, int dlevel, int zlevel)
{
    wk_error err;
    r->c = c;
    r->level = c.enc == WK_ILTP_DEFLATE12C ? dlevel : c.enc == WK_ILTP_ZSTD20C ? zlevel : 0;
    memset(&r->ce, 0, sizeof r->ce);
    memset(&r->cd, 0, sizeof r->cd);
    memset(&r->zc_ctr, 0, sizeof r->zc_ctr);
    memset(&r->zd_ctr, 0, sizeof r->zd_ctr);
    wk_allocator ae = wk_counting_allocator(&r->ce), ad = wk_counting_allocator(&r->cd);
    r->azc = wk_counting_allocator(&r->zc_ctr);
    r->azd = wk_counting_allocator(&r->zd_ctr);
    wk_iltp_encoder_params prm = {r->level, &ae, c.be};
    wk_iltp_decoder_params dprm = {&ad, c.be};
    r->we = wk_iltp_encoder_create(c.enc, &prm, &err);
    r->wd = wk_iltp_decoder_create(c.enc, &dprm, &err);
    if (!r->we || !r->wd) die("wirekit create");
    if (c.enc == WK_ILTP_DEFLATE12C && c.be == WK_ILTP_BACKEND_ZLIB) {
        memset(&r->zc, 0, sizeof r->zc);
        memset(&r->zd, 0, sizeof r->zd);
        r->zc.zalloc = r->zd.zalloc = zc_alloc;
        r->zc.zfree = r->zd.zfree = zc_free;
        r->zc.opaque = &r->azc;
        r->zd.opaque = &r->azd;
        if (deflateInit2(&r->zc, r->level, Z_DEFLATED, -WK_ILTP_DEFLATE_WBITS, WK_ILTP_ZLIB_MEMLEVEL,
                         Z_DEFAULT_STRATEGY) != Z_OK ||
            inflateInit2(&r->zd, -WK_ILTP_DEFLATE_WBITS) != Z_OK)
            die("zlib init");
    } else if (c.enc == WK_ILTP_DEFLATE12C) {
        r->ic = xmalloc(sizeof *r->ic);
        r->level_buf_size = wk_iltp_isal_level_buf_size(wk_iltp_isal_level(r->level));
        r->level_buf = xmalloc(r->level_buf_size);
        r->id = xmalloc(sizeof *r->id);
    } else if (c.enc == WK_ILTP_ZSTD20C) {
        r->cc = ZSTD_createCCtx();
        r->dc = ZSTD_createDCtx();
        if (!r->cc || !r->dc) die("zstd create");
        if (wk_iltp_zstd_cctx_setup(r->cc, r->level, NULL) != 0) die("zstd parameters");
        if (wk_iltp_zstd_dctx_setup(r->dc) != 0) die("zstd decoder parameters");
    }
}

static void run_close(run *r)
{
    wk_iltp_encoder_destroy(r->we);
    wk_iltp_decoder_destroy(r->wd);
    if (r->c.enc == WK_ILTP_DEFLATE12C && r->c.be == WK_ILTP_BACKEND_ZLIB) {
        deflateEnd(&r->zc);
        inflateEnd(&r->zd);
    }
    free(r->ic);
    free(r->level_buf);
    free(r->id);
    if (r->cc) ZSTD_freeCCtx(r->cc);
    if (r->dc) ZSTD_freeDCtx(r->dc);
    r->ic = NULL;
    r->level_buf = NULL;
    r->id = NULL;
    r->cc = NULL;
    r->dc = NULL;
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
            res = wk_iltp_encoder_encode(r->we, &in, &out, op, &err);
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
    if (r->c.enc == WK_ILTP_IDENTITY) {
        for (size_t off = 0; off < r->n; off += r->batch) {
            size_t len = min_sz(r->batch, r->n - off);
            memcpy(dst + pos, r->src + off, len);
            pos += len;
        }
        return pos;
    }
    if (r->c.enc == WK_ILTP_DEFLATE12C && r->c.be == WK_ILTP_BACKEND_ZLIB) {
        z_stream *z = &r->zc;
        if (deflateReset(z) != Z_OK ||
            deflateSetDictionary(z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) != Z_OK)
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
    if (r->c.enc == WK_ILTP_DEFLATE12C) {
        struct isal_zstream *s = r->ic;
        wk_iltp_isal_deflate_setup(s, wk_iltp_isal_level(r->level), r->level_buf, r->level_buf_size);
        if (isal_deflate_set_dict(s, (uint8_t *)(uintptr_t)wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) != COMP_OK)
            die("isal_deflate_set_dict");
        for (size_t off = 0; off < r->n; off += r->batch) {
            s->next_in = (uint8_t *)(uintptr_t)(r->src + off);
            s->avail_in = (uint32_t)min_sz(r->batch, r->n - off);
            s->flush = SYNC_FLUSH;
            do { /* until the batch and its flush are out */
                if (pos == r->wire_cap) die("encoded stream too large");
                size_t room = min_sz(VIEW, r->wire_cap - pos);
                s->next_out = dst + pos;
                s->avail_out = (uint32_t)room;
                if (isal_deflate(s) != COMP_OK) die("isal_deflate");
                pos += room - s->avail_out;
            } while (s->avail_in || (s->avail_out == 0 && s->internal_state.state != ZSTATE_NEW_HDR));
        }
        dst[pos++] = 0x03;
        dst[pos++] = 0x00;
        return pos;
    }
    ZSTD_CCtx *cc = r->cc;
    if (ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_only)) ||
        ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(cc, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN,
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
            res = wk_iltp_decoder_decode(r->wd, &in, &out, &err);
            opos += out.pos;
        } while (res == WK_NEED_OUTPUT);
        if (res == WK_ERROR) die(err.msg);
        ipos += in.pos;
        if (res == WK_DONE) break;
    }
    if (wk_iltp_decoder_finish(r->wd, NULL, &err) != WK_DONE) die(err.msg);
    return opos;
}

static size_t direct_decode(run *r)
{
    size_t ipos = 0, opos = 0;
    if (r->c.enc == WK_ILTP_IDENTITY) {
        for (; ipos < r->wire_len; ipos += VIEW) {
            size_t len = min_sz(VIEW, r->wire_len - ipos);
            memcpy(r->out + opos, r->wire + ipos, len);
            opos += len;
        }
        return opos;
    }
    if (r->c.enc == WK_ILTP_DEFLATE12C && r->c.be == WK_ILTP_BACKEND_ZLIB) {
        z_stream *z = &r->zd;
        if (inflateReset(z) != Z_OK ||
            inflateSetDictionary(z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) != Z_OK)
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
    if (r->c.enc == WK_ILTP_DEFLATE12C) {
        struct inflate_state *s = r->id;
        wk_iltp_isal_inflate_setup(s);
        if (isal_inflate_set_dict(s, (uint8_t *)(uintptr_t)wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) != COMP_OK)
            die("isal_inflate_set_dict");
        while (ipos < r->wire_len && s->block_state != ISAL_BLOCK_FINISH) {
            size_t len = min_sz(VIEW, r->wire_len - ipos);
            s->next_in = r->wire + ipos;
            s->avail_in = (uint32_t)len;
            do {
                size_t room = min_sz(VIEW, r->out_cap - opos);
                s->next_out = r->out + opos;
                s->avail_out = (uint32_t)room;
                if (isal_inflate(s) < 0) die("isal_inflate");
                opos += room - s->avail_out;
            } while (s->avail_out == 0 && s->block_state != ISAL_BLOCK_FINISH);
            ipos += len - s->avail_in;
        }
        if (s->block_state != ISAL_BLOCK_FINISH) die("isal_inflate: no end mark");
        return opos;
    }
    ZSTD_DCtx *dc = r->dc;
    if (ZSTD_isError(ZSTD_DCtx_reset(dc, ZSTD_reset_session_only)) ||
        ZSTD_isError(ZSTD_DCtx_refPrefix_advanced(dc, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN,
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
static bool cpu_clock;            /* --cpu */

static double clock_now(void)
{
    if (!cpu_clock) return now();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds per operation, over `iters` back-to-back runs. */
static double time_op(run *r, enum op op, int iters)
{
    double t0 = clock_now();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case WK_ENC: wk_encode(r, r->wire2); break;
        case DIRECT_ENC: direct_encode(r, r->wire2); break;
        case WK_DEC: wk_decode(r); break;
        case DIRECT_DEC: direct_decode(r); break;
        }
    }
    return (clock_now() - t0) / iters;
}

/* Times operation oa on run a against ob on run b: `reps` repetitions, alternating which goes
 * first; each timing repeats the operation so it lasts at least min_seconds. *ratio is the median
 * of the per-repetition speed ratios a/b. */
static void compare(run *a, enum op oa, run *b, enum op ob, int reps, double *mbs_a, double *mbs_b,
                    double *ratio)
{
    double w[MAX_REPS], d[MAX_REPS], q[MAX_REPS];
    double one = time_op(a, oa, 1), other = time_op(b, ob, 1); /* warm-up and calibration */
    double slow = one > other ? one : other;
    int iters = slow >= min_seconds ? 1 : (int)(min_seconds / (slow > 1e-9 ? slow : 1e-9)) + 1;
    for (int k = 0; k < reps; k++) {
        double ta, tb;
        if (k % 2 == 0) {
            ta = time_op(a, oa, iters);
            tb = time_op(b, ob, iters);
        } else {
            tb = time_op(b, ob, iters);
            ta = time_op(a, oa, iters);
        }
        w[k] = (double)a->n / ta / 1e6;
        d[k] = (double)b->n / tb / 1e6;
        q[k] = tb / ta; /* a's speed / b's speed */
    }
    *mbs_a = median(w, reps);
    *mbs_b = median(d, reps);
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
    compare(r, WK_ENC, r, DIRECT_ENC, reps, &c.enc_wk, &c.enc_direct, &c.enc_ratio);
    /* decoders read the wirekit stream; check the output once each */
    memset(r->out, 0, r->n);
    if (wk_decode(r) != r->n || memcmp(r->out, r->src, r->n) != 0) die("wirekit decode mismatch");
    memset(r->out, 0, r->n);
    if (direct_decode(r) != r->n || memcmp(r->out, r->src, r->n) != 0) die("direct decode mismatch");
    compare(r, WK_DEC, r, DIRECT_DEC, reps, &c.dec_wk, &c.dec_direct, &c.dec_ratio);
    return c;
}

static const char *human(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0) snprintf(buf, cap, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0) snprintf(buf, cap, "%zu KiB", n >> 10);
    else snprintf(buf, cap, "%zu B", n);
    return buf;
}

/* ISA-L against zlib (deflate12c) at one batch size, in one run */
typedef struct pair {
    double enc_zlib, enc_isal, enc_ratio, size_ratio, dec_zlib, dec_isal, dec_ratio;
} pair;

static pair isal_vs_zlib(run *z, run *i, int reps)
{
    pair p;
    compare(i, WK_ENC, z, WK_ENC, reps, &p.enc_isal, &p.enc_zlib, &p.enc_ratio);
    size_t zn = wk_encode(z, z->wire), in = wk_encode(i, i->wire);
    p.size_ratio = (double)in / (double)zn;
    /* both decoders read the zlib encoder's stream */
    memcpy(i->wire, z->wire, zn);
    z->wire_len = i->wire_len = zn;
    memset(i->out, 0, i->n);
    if (wk_decode(i) != i->n || memcmp(i->out, i->src, i->n) != 0) die("ISA-L decode of zlib's stream");
    compare(i, WK_DEC, z, WK_DEC, reps, &p.dec_isal, &p.dec_zlib, &p.dec_ratio);
    return p;
}

int main(int argc, char **argv)
{
    int dlevel = WK_ILTP_DEFLATE_LEVEL, zlevel = WK_ILTP_ZSTD_LEVEL;
    bench_size sz = {false, 11, 8};
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (bench_size_opt(&sz, argc, argv, &i)) continue;
        if (strcmp(argv[i], "--deflate-level") == 0 && i + 1 < argc) dlevel = atoi(argv[++i]);
        else if (strcmp(argv[i], "--zstd-level") == 0 && i + 1 < argc) zlevel = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cpu") == 0) cpu_clock = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else return bench_usage("[--quick] [--reps N] [--mib N] [--deflate-level N] "
                                "[--zstd-level N] [--cpu] [--only TEXT]");
    }
    size_t n = bench_size_apply(&sz, MAX_REPS, &min_seconds);
    int reps = sz.reps;
    if (dlevel < 1 || dlevel > 9 || zlevel < 1 || zlevel > 19) die("bad --deflate-level or --zstd-level");
    double t_start = now();

    uint8_t *text = xmalloc(n + 65536), *randb = xmalloc(n);
    iltp_corpus(text, n);
    random_corpus(randb, n);

    static const size_t batches[4] = {256, 4096, 65536, 1u << 20};
    struct {
        const char *name;
        const uint8_t *p;
    } corpora[2] = {{"ILTP-like text", text}, {"random bytes", randb}};

    run runs[4];
    memset(runs, 0, sizeof runs);
    for (int k = 0; k < 4; k++) {
        runs[k].n = n;
        runs[k].wire_cap = 2 * n + (1u << 20);
        runs[k].out_cap = n + VIEW;
        runs[k].wire = xmalloc(runs[k].wire_cap);
        runs[k].wire2 = xmalloc(runs[k].wire_cap);
        runs[k].out = xmalloc(runs[k].out_cap);
        run_open(&runs[k], coders[k], dlevel, zlevel);
    }

    printf("wirekit %s iltp_bench: zlib %s, ISA-L igzip (libisal 2.30), libzstd %s; deflate12c level %d "
           "(ISA-L: igzip level %d), zstd20c level %d\n",
           wk_version(), zlibVersion(), ZSTD_versionString(), dlevel, wk_iltp_isal_level(dlevel), zlevel);
    printf("corpora %zu bytes each; MB/s = 10^6 decoded bytes per second of %s time, median of %d "
           "repetitions (each >= %.0f ms); ratios = median of the per-repetition speed ratios; 64 KiB "
           "output views\n",
           n, cpu_clock ? "process CPU" : "wall-clock", reps, min_seconds * 1e3);
    bool on[4];
    for (int k = 0; k < 4; k++) on[k] = !only || strstr(coders[k].name, only) != NULL;
    bool pairs_on = on[1] && on[2];

    cell zstd_cells[2][4];
    pair pairs[2][4];
    memset(zstd_cells, 0, sizeof zstd_cells);
    memset(pairs, 0, sizeof pairs);
    for (int ci = 0; ci < 2; ci++) {
        printf("\n### %s\n\n", corpora[ci].name);
        printf("| coder | batch | encoded/decoded | encode wirekit | encode direct | wirekit/direct "
               "| decode wirekit | decode direct | wirekit/direct | same bytes |\n");
        printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
        fflush(stdout);
        for (int k = 0; k < 4; k++) {
            run *r = &runs[k];
            if (!on[k]) continue;
            r->src = corpora[ci].p;
            for (int bi = 0; bi < 4; bi++) {
                r->batch = batches[bi];
                cell c = measure(r, reps);
                if (r->c.enc == WK_ILTP_ZSTD20C) zstd_cells[ci][bi] = c;
                char hb[32];
                printf("| %s | %s | %.3f | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %s |\n", r->c.name,
                       human(r->batch, hb, sizeof hb), c.ratio, c.enc_wk, c.enc_direct, c.enc_ratio, c.dec_wk,
                       c.dec_direct, c.dec_ratio, c.same_bytes ? "yes" : "no");
                fflush(stdout);
            }
        }
        if (!pairs_on) continue;
        printf("\nISA-L against zlib, deflate12c, %s (wirekit encoders against each other; both wirekit "
               "decoders on the zlib encoder's stream):\n\n", corpora[ci].name);
        printf("| batch | encode zlib | encode ISA-L | ISA-L/zlib | size ISA-L/zlib | decode zlib | decode ISA-L "
               "| ISA-L/zlib |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int bi = 0; bi < 4; bi++) {
            runs[1].src = runs[2].src = corpora[ci].p;
            runs[1].batch = runs[2].batch = batches[bi];
            pair p = isal_vs_zlib(&runs[1], &runs[2], reps);
            pairs[ci][bi] = p;
            char hb[32];
            printf("| %s | %.1f | %.1f | %.2f | %.3f | %.1f | %.1f | %.2f |\n", human(batches[bi], hb, sizeof hb),
                   p.enc_zlib, p.enc_isal, p.enc_ratio, p.size_ratio, p.dec_zlib, p.dec_isal, p.dec_ratio);
            fflush(stdout);
        }
    }

    printf("\n### Targets (issue 17), ratios measured in this run\n\n");
    printf("| target | batch | measured | verdict |\n|---|---|---:|---|\n");
    for (int bi = 1; bi < 4 && pairs_on; bi++) {
        char hb[32];
        human(batches[bi], hb, sizeof hb);
        const pair *p = &pairs[0][bi];
        printf("| deflate12c encode ISA-L >= 5x zlib level 6 (text) | %s | %.2fx | %s |\n", hb, p->enc_ratio,
               p->enc_ratio >= 5.0 ? "met" : "MISSED");
        printf("| deflate12c encoded size ISA-L <= 1.08x zlib level 6 (text) | %s | %.3f | %s |\n", hb, p->size_ratio,
               p->size_ratio <= 1.08 ? "met" : "MISSED");
    }
    if (pairs_on) {
        printf("| deflate12c decode ISA-L >= 1.6x zlib (text) | 4 KiB | %.2fx | %s |\n", pairs[0][1].dec_ratio,
               pairs[0][1].dec_ratio >= 1.6 ? "met" : "MISSED");
        printf("| deflate12c decode ISA-L >= 2x zlib (text) | 64 KiB | %.2fx | %s |\n", pairs[0][2].dec_ratio,
               pairs[0][2].dec_ratio >= 2.0 ? "met" : "MISSED");
    }
    for (int ci = 0; ci < 2 && on[3]; ci++)
        for (int bi = 0; bi < 4; bi++) {
            char hb[32];
            double q = zstd_cells[ci][bi].dec_ratio;
            printf("| zstd20c decode wirekit >= 0.95 of direct libzstd (%s) | %s | %.3f | %s |\n",
                   ci ? "random" : "text", human(batches[bi], hb, sizeof hb), q, q >= 0.95 ? "met" : "MISSED");
        }

    printf("\n### Memory (bytes, after the runs)\n\n");
    printf("| coder | wirekit decoder peak | direct decoder | wirekit encoder peak | direct encoder |\n");
    printf("|---|---:|---:|---:|---:|\n");
    for (int k = 0; k < 4; k++) {
        run *r = &runs[k];
        if (!on[k]) continue;
        size_t dd = 0, de = 0;
        if (r->c.enc == WK_ILTP_DEFLATE12C && r->c.be == WK_ILTP_BACKEND_ZLIB) {
            dd = r->zd_ctr.peak;
            de = r->zc_ctr.peak;
        } else if (r->c.enc == WK_ILTP_DEFLATE12C) {
            dd = sizeof(struct inflate_state);
            de = sizeof(struct isal_zstream) + r->level_buf_size;
        } else if (r->c.enc == WK_ILTP_ZSTD20C) {
            dd = ZSTD_sizeof_DCtx(r->dc);
            de = ZSTD_sizeof_CCtx(r->cc);
        }
        printf("| %s | %zu | %zu | %zu | %zu |\n", r->c.name, r->cd.peak, dd, r->ce.peak, de);
    }
    printf("\ndirect memory: zlib = peak through a counting zalloc; ISA-L = sizeof(struct inflate_state), "
           "sizeof(struct isal_zstream) + the level buffer; libzstd = ZSTD_sizeof_DCtx / ZSTD_sizeof_CCtx "
           "after the runs\n");
    printf("total time %.1f s\n", now() - t_start);

    for (int k = 0; k < 4; k++) {
        run_close(&runs[k]);
        free(runs[k].wire);
        free(runs[k].wire2);
        free(runs[k].out);
    }
    free(text);
    free(randb);
    return 0;
}
