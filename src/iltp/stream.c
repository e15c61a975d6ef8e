/* Lace-065 stream encoding: identity, deflate12c (zlib raw deflate), zstd20c (libzstd magicless
 * frame). Decisions are listed in include/wirekit/iltp.h. No I/O; memory goes through the
 * caller's allocator and is fixed per object (nothing grows with batch size or expansion). */
#define ZSTD_STATIC_LINKING_ONLY /* magicless format, refPrefix_advanced, customMem */
#include <wirekit/iltp.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Allocation through the caller's allocator
 * ------------------------------------------------------------------------------------------- */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    const wk_allocator *a = opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return a->alloc(a->opaque, (size_t)items * size);
}
static void z_free(voidpf opaque, voidpf ptr)
{
    const wk_allocator *a = opaque;
    a->free(a->opaque, ptr);
}

static ZSTD_customMem zstd_mem(const wk_allocator *a)
{
    ZSTD_customMem m = {a->alloc, a->free, a->opaque};
    return m;
}

static uint8_t dummy_byte; /* a valid pointer for empty output views */

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
enum enc_phase {
    P_WRITE, /* taking batch bytes */
    P_FLUSH, /* completing the batch's flush */
    P_MARK,  /* writing the end mark */
    P_ENDED, /* end mark written; only reset */
    P_FAILED
};

#define STAGE_SIZE 4096 /* deflate output staging: see deflate_step */

struct wk_iltp_encoder {
    wk_iltp_encoding enc;
    int level;
    wk_allocator alloc;
    enum enc_phase phase;
    bool batch_open; /* bytes taken since the last flush */
    bool z_ready;
    z_stream z;
    ZSTD_CCtx *zc;
    size_t stage_pos, stage_len;
    uint8_t stage[STAGE_SIZE];
};

wk_iltp_encoding wk_iltp_encoder_encoding(const wk_iltp_encoder *e) { return e->enc; }

static wk_code zstd_prime_encoder(wk_iltp_encoder *e, wk_error *err)
{
    const uint8_t *dict = wk_iltp_dictionary();
    if (ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(e->zc, dict, WK_ILTP_DICTIONARY_LEN,
                                                  ZSTD_dct_rawContent)))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "ZSTD_CCtx_refPrefix failed");
    /* Start the frame now with an unknown source size: an end mark as the very first call
     * would otherwise declare a tiny window instead of 2^20 (header 00 50). */
    ZSTD_outBuffer o = {&dummy_byte, 0, 0};
    ZSTD_inBuffer i = {&dummy_byte, 0, 0};
    size_t r = ZSTD_compressStream2(e->zc, &o, &i, ZSTD_e_continue);
    if (ZSTD_isError(r))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd: %s", ZSTD_getErrorName(r));
    return WK_OK;
}

static wk_code zstd_configure(wk_iltp_encoder *e, wk_error *err)
{
    /* The level's parameters for a large input of unknown size, window fixed at 2^20, tables
     * capped to what a 2^20 window can use. Set explicitly (see iltp.h). */
    ZSTD_compressionParameters cp = ZSTD_getCParams(e->level, 0, 0);
    cp.windowLog = 20;
    if (cp.hashLog > 21) cp.hashLog = 21;
    unsigned cycle = cp.chainLog - (cp.strategy >= ZSTD_btlazy2 ? 1u : 0u);
    if (cycle > 20) cp.chainLog -= cycle - 20;
    struct { ZSTD_cParameter p; int v; } set[] = {
        {ZSTD_c_format, ZSTD_f_zstd1_magicless},
        {ZSTD_c_compressionLevel, e->level},
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
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++) {
        size_t r = ZSTD_CCtx_setParameter(e->zc, set[k].p, set[k].v);
        if (ZSTD_isError(r))
            return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd parameter %d: %s",
                                (int)set[k].p, ZSTD_getErrorName(r));
    }
    return WK_OK;
}

wk_iltp_encoder *wk_iltp_encoder_create(wk_iltp_encoding enc, const wk_iltp_encoder_params *params,
                                        wk_error *err)
{
    int level = params ? params->level : 0;
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown encoding");
        return NULL;
    }
    if (enc == WK_ILTP_DEFLATE12C && (level < 0 || level > 9)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "deflate12c level must be 0..9");
        return NULL;
    }
    if (enc == WK_ILTP_ZSTD20C && (level < 0 || level > 19)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "zstd20c level must be 1..19");
        return NULL;
    }
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_encoder *e = a.alloc(a.opaque, sizeof *e);
    if (!e) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "encoder allocation failed");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->enc = enc;
    e->alloc = a;
    e->phase = P_WRITE;
    if (enc == WK_ILTP_DEFLATE12C) {
        e->level = level ? level : 6;
        e->z.zalloc = z_alloc;
        e->z.zfree = z_free;
        e->z.opaque = &e->alloc;
        int zr = deflateInit2(&e->z, e->level, Z_DEFLATED, -12, 8, Z_DEFAULT_STRATEGY);
        if (zr != Z_OK) {
            wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET,
                         "deflateInit2 failed (%d)", zr);
            a.free(a.opaque, e);
            return NULL;
        }
        e->z_ready = true;
    } else if (enc == WK_ILTP_ZSTD20C) {
        e->level = level ? level : 3;
        e->zc = ZSTD_createCCtx_advanced(zstd_mem(&e->alloc));
        if (!e->zc) {
            wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "ZSTD_createCCtx failed");
            a.free(a.opaque, e);
            return NULL;
        }
        if (zstd_configure(e, err) != WK_OK) { wk_iltp_encoder_free(e); return NULL; }
    }
    if (wk_iltp_encoder_reset(e, err) != WK_OK) {
        wk_iltp_encoder_free(e);
        return NULL;
    }
    return e;
}

void wk_iltp_encoder_free(wk_iltp_encoder *e)
{
    if (!e) return;
    if (e->z_ready) deflateEnd(&e->z);
    if (e->zc) ZSTD_freeCCtx(e->zc);
    wk_allocator a = e->alloc;
    a.free(a.opaque, e);
}

wk_code wk_iltp_encoder_reset(wk_iltp_encoder *e, wk_error *err)
{
    e->phase = P_WRITE;
    e->batch_open = false;
    e->stage_pos = e->stage_len = 0;
    if (e->enc == WK_ILTP_DEFLATE12C) {
        if (deflateReset(&e->z) != Z_OK ||
            deflateSetDictionary(&e->z, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN) != Z_OK) {
            e->phase = P_FAILED;
            return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "deflate reset failed");
        }
    } else if (e->enc == WK_ILTP_ZSTD20C) {
        size_t r = ZSTD_CCtx_reset(e->zc, ZSTD_reset_session_only);
        if (ZSTD_isError(r) || zstd_prime_encoder(e, err) != WK_OK) {
            e->phase = P_FAILED;
            if (ZSTD_isError(r))
                return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd reset failed");
            return err ? err->code : WK_ERR_BACKEND;
        }
    }
    return WK_OK;
}

static wk_result enc_fail(wk_iltp_encoder *e, wk_error *err, wk_code code, const char *what)
{
    e->phase = P_FAILED;
    wk_error_set(err, code, WK_NO_OFFSET, "%s", what);
    return WK_ERROR;
}

static wk_result identity_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op)
{
    if (e->phase == P_ENDED) return WK_DONE;
    size_t n = in->size - in->pos, room = out->size - out->pos;
    if (n > room) n = room;
    if (n) memcpy(out->dst + out->pos, in->src + in->pos, n);
    in->pos += n;
    out->pos += n;
    if (in->pos < in->size) return WK_NEED_OUTPUT;
    if (op == WK_ILTP_CONTINUE) return WK_NEED_INPUT;
    if (op == WK_ILTP_END) e->phase = P_ENDED;
    return WK_DONE;
}

/* deflate12c writes through a small staging buffer. zlib cannot say whether a sync flush that
 * filled the output exactly is complete; calling again then adds a second empty stored block, and
 * with a tiny caller buffer would do so forever. Staging guarantees progress: at worst one extra
 * 5-byte empty stored block, which every inflater accepts. */
static wk_result deflate_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op,
                              wk_error *err)
{
    for (;;) {
        /* drain staged output */
        size_t n = e->stage_len - e->stage_pos, room = out->size - out->pos;
        if (n > room) n = room;
        if (n) {
            memcpy(out->dst + out->pos, e->stage + e->stage_pos, n);
            out->pos += n;
            e->stage_pos += n;
        }
        if (e->stage_pos < e->stage_len) return WK_NEED_OUTPUT;
        e->stage_pos = e->stage_len = 0;

        e->z.next_out = e->stage;
        e->z.avail_out = STAGE_SIZE;
        int zr;
        switch (e->phase) {
        case P_WRITE:
            if (in->pos < in->size) {
                size_t avail = in->size - in->pos;
                if (avail > UINT32_MAX) avail = UINT32_MAX;
                e->z.next_in = (Bytef *)(uintptr_t)(in->src + in->pos);
                e->z.avail_in = (uInt)avail;
                zr = deflate(&e->z, Z_NO_FLUSH);
                if (zr != Z_OK && zr != Z_BUF_ERROR)
                    return enc_fail(e, err, WK_ERR_ILTP_ENCODE, "deflate failed");
                in->pos += avail - e->z.avail_in;
                e->batch_open = true;
                e->stage_len = STAGE_SIZE - e->z.avail_out;
                continue;
            }
            if (op == WK_ILTP_CONTINUE) return WK_NEED_INPUT;
            if (e->batch_open) { e->phase = P_FLUSH; continue; }
            if (op == WK_ILTP_FLUSH) return WK_DONE;
            e->phase = P_MARK;
            continue;
        case P_FLUSH:
            e->z.next_in = &dummy_byte;
            e->z.avail_in = 0;
            zr = deflate(&e->z, Z_SYNC_FLUSH);
            if (zr != Z_OK && zr != Z_BUF_ERROR)
                return enc_fail(e, err, WK_ERR_ILTP_ENCODE, "deflate sync flush failed");
            e->stage_len = STAGE_SIZE - e->z.avail_out;
            if (e->z.avail_out != 0) { /* flush complete */
                e->batch_open = false;
                e->phase = P_WRITE;
            }
            continue;
        case P_MARK:
            e->z.next_in = &dummy_byte;
            e->z.avail_in = 0;
            zr = deflate(&e->z, Z_FINISH);
            if (zr != Z_STREAM_END && zr != Z_OK)
                return enc_fail(e, err, WK_ERR_ILTP_ENCODE, "deflate finish failed");
            e->stage_len = STAGE_SIZE - e->z.avail_out;
            if (zr == Z_STREAM_END) e->phase = P_ENDED;
            continue;
        case P_ENDED:
            return WK_DONE;
        default:
            return enc_fail(e, err, WK_ERR_STATE, "encoder failed earlier");
        }
    }
}

static wk_result zstd_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op, wk_error *err)
{
    ZSTD_outBuffer o = {out->dst ? out->dst : &dummy_byte, out->size, out->pos};
    ZSTD_inBuffer i = {in->src ? in->src : &dummy_byte, in->size, in->pos};
    wk_result res;
    for (;;) {
        ZSTD_EndDirective dir;
        if (e->phase == P_ENDED) { res = WK_DONE; break; }
        if (op == WK_ILTP_CONTINUE) dir = ZSTD_e_continue;
        else if (e->phase == P_MARK) dir = ZSTD_e_end;
        else dir = ZSTD_e_flush;
        if (i.pos < i.size) e->batch_open = true;
        size_t r = ZSTD_compressStream2(e->zc, &o, &i, dir);
        if (ZSTD_isError(r)) {
            out->pos = o.pos;
            in->pos = i.pos;
            e->phase = P_FAILED;
            wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "zstd: %s", ZSTD_getErrorName(r));
            return WK_ERROR;
        }
        if (dir == ZSTD_e_continue) {
            res = i.pos == i.size ? WK_NEED_INPUT : WK_NEED_OUTPUT;
            if (res == WK_NEED_OUTPUT && o.pos < o.size) continue;
            break;
        }
        if (r == 0 && i.pos == i.size) {
            if (dir == ZSTD_e_end) { e->phase = P_ENDED; res = WK_DONE; break; }
            e->batch_open = false;
            if (op == WK_ILTP_FLUSH) { res = WK_DONE; break; }
            e->phase = P_MARK; /* END: the batch is flushed, now the end mark */
            continue;
        }
        if (o.pos == o.size) { res = WK_NEED_OUTPUT; break; }
    }
    out->pos = o.pos;
    in->pos = i.pos;
    return res;
}

wk_result wk_iltp_encode(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op, wk_error *err)
{
    static const uint8_t none[1];
    wk_in empty = {none, 0, 0};
    if (!in) in = &empty;
    if (e->phase == P_FAILED) {
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "encoder failed earlier; reset it");
        return WK_ERROR;
    }
    if (e->phase == P_ENDED && (in->pos != in->size || op != WK_ILTP_END)) {
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "end mark already written; reset first");
        return WK_ERROR;
    }
    if (op < WK_ILTP_CONTINUE || op > WK_ILTP_END || out->pos > out->size || in->pos > in->size) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "invalid op or buffer view");
        return WK_ERROR;
    }
    switch (e->enc) {
    case WK_ILTP_DEFLATE12C: return deflate_step(e, out, in, op, err);
    case WK_ILTP_ZSTD20C: return zstd_step(e, out, in, op, err);
    default: return identity_step(e, out, in, op);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
enum dec_state { D_ACTIVE, D_ENDED, D_FAILED };

struct wk_iltp_decoder {
    wk_iltp_encoding enc;
    wk_allocator alloc;
    enum dec_state state;
    uint64_t consumed, produced;
    bool z_ready;
    z_stream z;
    ZSTD_DCtx *zd;
    uint64_t blk_start, blk_end; /* zstd20c: the current block's header offset and end */
    uint8_t bh[3];
    uint8_t bh_have;             /* header bytes of the current block seen so far */
    wk_error failure; /* sticky error */
};

bool wk_iltp_decoder_ended(const wk_iltp_decoder *d) { return d->state == D_ENDED; }
uint64_t wk_iltp_decoder_consumed(const wk_iltp_decoder *d) { return d->consumed; }
uint64_t wk_iltp_decoder_produced(const wk_iltp_decoder *d) { return d->produced; }

wk_iltp_decoder *wk_iltp_decoder_create(wk_iltp_encoding enc, const wk_allocator *allocator,
                                        wk_error *err)
{
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown encoding");
        return NULL;
    }
    wk_allocator a = wk_allocator_or_default(allocator);
    wk_iltp_decoder *d = a.alloc(a.opaque, sizeof *d);
    if (!d) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "decoder allocation failed");
        return NULL;
    }
    memset(d, 0, sizeof *d);
    d->enc = enc;
    d->alloc = a;
    if (enc == WK_ILTP_DEFLATE12C) {
        d->z.zalloc = z_alloc;
        d->z.zfree = z_free;
        d->z.opaque = &d->alloc;
        int zr = inflateInit2(&d->z, -12);
        if (zr != Z_OK) {
            wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET,
                         "inflateInit2 failed (%d)", zr);
            a.free(a.opaque, d);
            return NULL;
        }
        d->z_ready = true;
    } else if (enc == WK_ILTP_ZSTD20C) {
        d->zd = ZSTD_createDCtx_advanced(zstd_mem(&d->alloc));
        if (!d->zd ||
            ZSTD_isError(ZSTD_DCtx_setParameter(d->zd, ZSTD_d_format, ZSTD_f_zstd1_magicless)) ||
            ZSTD_isError(ZSTD_DCtx_setParameter(d->zd, ZSTD_d_windowLogMax, 20))) {
            wk_error_set(err, d->zd ? WK_ERR_BACKEND : WK_ERR_NOMEM, WK_NO_OFFSET,
                         "zstd decoder setup failed");
            wk_iltp_decoder_free(d);
            return NULL;
        }
    }
    if (wk_iltp_decoder_reset(d, err) != WK_OK) {
        wk_iltp_decoder_free(d);
        return NULL;
    }
    return d;
}

void wk_iltp_decoder_free(wk_iltp_decoder *d)
{
    if (!d) return;
    if (d->z_ready) inflateEnd(&d->z);
    if (d->zd) ZSTD_freeDCtx(d->zd);
    wk_allocator a = d->alloc;
    a.free(a.opaque, d);
}

wk_code wk_iltp_decoder_reset(wk_iltp_decoder *d, wk_error *err)
{
    d->state = D_ACTIVE;
    d->consumed = d->produced = 0;
    d->blk_start = 2; /* after the frame header (descriptor 00 + window byte) */
    d->blk_end = 0;
    d->bh_have = 0;
    wk_error_clear(&d->failure);
    if (d->enc == WK_ILTP_DEFLATE12C) {
        int zr = inflateReset(&d->z);
        if (zr == Z_OK) zr = inflateSetDictionary(&d->z, wk_iltp_dictionary(), WK_ILTP_DICTIONARY_LEN);
        if (zr != Z_OK) {
            d->state = D_FAILED;
            return wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND,
                                WK_NO_OFFSET, "inflate reset failed (%d)", zr);
        }
    } else if (d->enc == WK_ILTP_ZSTD20C) {
        if (ZSTD_isError(ZSTD_DCtx_reset(d->zd, ZSTD_reset_session_only)) ||
            ZSTD_isError(ZSTD_DCtx_refPrefix_advanced(d->zd, wk_iltp_dictionary(),
                                                      WK_ILTP_DICTIONARY_LEN, ZSTD_dct_rawContent))) {
            d->state = D_FAILED;
            return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd decoder reset failed");
        }
    }
    return WK_OK;
}

static wk_result dec_fail(wk_iltp_decoder *d, wk_error *err, wk_code code, uint64_t off,
                          const char *what)
{
    d->state = D_FAILED;
    wk_error_set(&d->failure, code, off, "%s", what);
    if (err) *err = d->failure;
    return WK_ERROR;
}

/* After the end mark: inspect (never consume) the unread bytes against the preface lead.
 * Returns the number of matching bytes, or -1 with *bad set to the first mismatch index. */
static long lead_match(const uint8_t *p, size_t n, size_t *bad)
{
    size_t m = n < WK_ILTP_PREFACE_LEAD_LEN ? n : WK_ILTP_PREFACE_LEAD_LEN;
    for (size_t i = 0; i < m; i++)
        if (p[i] != (uint8_t)WK_ILTP_PREFACE_LEAD[i]) { *bad = i; return -1; }
    return (long)m;
}

static wk_result after_end(wk_iltp_decoder *d, const wk_in *in, wk_error *err)
{
    size_t bad = 0;
    long m = lead_match(in->src + in->pos, in->size - in->pos, &bad);
    if (m < 0)
        return dec_fail(d, err, WK_ERR_ILTP_AFTER_END_MARK, d->consumed + bad,
                        "byte after the end mark does not begin a raw preface");
    if (m == 0 || m == WK_ILTP_PREFACE_LEAD_LEN) return WK_DONE;
    return WK_NEED_INPUT;
}

static wk_result inflate_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    size_t in_avail = in->size - in->pos, out_room = out->size - out->pos;
    if (in_avail > UINT32_MAX) in_avail = UINT32_MAX;
    if (out_room > UINT32_MAX) out_room = UINT32_MAX;
    d->z.next_in = in_avail ? (Bytef *)(uintptr_t)(in->src + in->pos) : &dummy_byte;
    d->z.avail_in = (uInt)in_avail;
    d->z.next_out = out_room ? out->dst + out->pos : &dummy_byte;
    d->z.avail_out = (uInt)out_room;
    int zr = inflate(&d->z, Z_NO_FLUSH);
    size_t used = in_avail - d->z.avail_in, made = out_room - d->z.avail_out;
    in->pos += used;
    out->pos += made;
    d->consumed += used;
    d->produced += made;
    switch (zr) {
    case Z_STREAM_END:
        d->state = D_ENDED;
        return WK_DONE;
    case Z_OK:
    case Z_BUF_ERROR:
        if (d->z.avail_out == 0) return WK_NEED_OUTPUT;
        return WK_NEED_INPUT;
    case Z_MEM_ERROR:
        return dec_fail(d, err, WK_ERR_NOMEM, WK_NO_OFFSET, "inflate out of memory");
    default: {
        /* zlib's message for a reference before the start of the history */
        const char *msg = d->z.msg ? d->z.msg : "invalid deflate data";
        bool far = strcmp(msg, "invalid distance too far back") == 0;
        char what[100];
        snprintf(what, sizeof what, "%s", msg);
        /* the offset of the last byte inflate took: the one holding the failing bits */
        return dec_fail(d, err, far ? WK_ERR_ILTP_DEFLATE_REFERENCE : WK_ERR_ILTP_DEFLATE_MALFORMED,
                        d->consumed ? d->consumed - 1 : 0, what);
    }
    }
}

/* Checks the two frame-header bytes (descriptor 00, window <= 2^20) before libzstd sees them. */
static wk_result zstd_header_check(wk_iltp_decoder *d, const wk_in *in, wk_error *err)
{
    for (uint64_t off = d->consumed; off < 2 && off - d->consumed < in->size - in->pos; off++) {
        uint8_t b = in->src[in->pos + (size_t)(off - d->consumed)];
        if (off == 0 && b != 0x00) {
            char what[80];
            snprintf(what, sizeof what, "frame header descriptor is 0x%02x, must be 00", b);
            return dec_fail(d, err, WK_ERR_ILTP_ZSTD_HEADER, 0, what);
        }
        if (off == 1) {
            unsigned exponent = b >> 3, mantissa = b & 7;
            uint64_t base = (uint64_t)1 << (10 + exponent);
            uint64_t window = base + (base / 8) * mantissa;
            if (window > ((uint64_t)1 << 20)) {
                char what[80];
                snprintf(what, sizeof what, "window descriptor 0x%02x declares %llu bytes", b,
                         (unsigned long long)window);
                return dec_fail(d, err, WK_ERR_ILTP_ZSTD_WINDOW, 1, what);
            }
        }
    }
    return WK_DONE;
}

/* libzstd reports corruption without saying where. The decoder therefore walks the block headers
 * itself and hands libzstd at most one block at a time, so an error names the offset of the
 * block that failed; reserved block types and oversized blocks are refused before libzstd. */
static wk_result zstd_block_header(wk_iltp_decoder *d, wk_error *err)
{
    uint32_t h = (uint32_t)d->bh[0] | (uint32_t)d->bh[1] << 8 | (uint32_t)d->bh[2] << 16;
    unsigned type = (h >> 1) & 3;
    uint32_t size = h >> 3;
    if (type == 3) return dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, d->blk_start, "reserved block type");
    if (size > (128u << 10))
        return dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, d->blk_start, "block size over 128 KiB");
    d->blk_end = d->blk_start + 3 + (type == 1 ? 1 : size);
    return WK_DONE;
}

static wk_result zstd_dstep(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    if (d->consumed < 2 && zstd_header_check(d, in, err) == WK_ERROR) return WK_ERROR;
    for (;;) {
        /* learn the current block's header bytes as they pass */
        while (d->bh_have < 3 && d->consumed <= d->blk_start + d->bh_have &&
               d->blk_start + d->bh_have - d->consumed < in->size - in->pos) {
            d->bh[d->bh_have] = in->src[in->pos + (size_t)(d->blk_start + d->bh_have - d->consumed)];
            d->bh_have++;
            if (d->bh_have == 3 && zstd_block_header(d, err) == WK_ERROR) return WK_ERROR;
        }
        uint64_t end = d->bh_have == 3 ? d->blk_end : d->blk_start + d->bh_have;
        size_t avail = in->size - in->pos;
        if (end - d->consumed < avail) avail = (size_t)(end - d->consumed);
        ZSTD_inBuffer i = {in->src ? in->src : &dummy_byte, in->pos + avail, in->pos};
        ZSTD_outBuffer o = {out->dst ? out->dst : &dummy_byte, out->size, out->pos};
        size_t r = ZSTD_decompressStream(d->zd, &o, &i);
        bool progressed = i.pos != in->pos || o.pos != out->pos;
        if (ZSTD_isError(r)) {
            ZSTD_ErrorCode c = ZSTD_getErrorCode(r);
            /* libzstd's guard against callers looping without progress: being polled with an
             * empty push or a full output view is not the peer's fault. The context is intact;
             * the next call with bytes or room goes on. */
            if (c == ZSTD_error_noForwardProgress_inputEmpty) return WK_NEED_INPUT;
            if (c == ZSTD_error_noForwardProgress_destFull) return WK_NEED_OUTPUT;
            if (c == ZSTD_error_memory_allocation)
                return dec_fail(d, err, WK_ERR_NOMEM, WK_NO_OFFSET, "zstd decoder out of memory");
            if (c == ZSTD_error_frameParameter_windowTooLarge)
                return dec_fail(d, err, WK_ERR_ILTP_ZSTD_WINDOW, 1, "declared window above 2^20");
            char what[100];
            snprintf(what, sizeof what, "zstd block: %s", ZSTD_getErrorName(r));
            return dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, d->consumed < 2 ? 0 : d->blk_start, what);
        }
        d->consumed += i.pos - in->pos;
        d->produced += o.pos - out->pos;
        in->pos = i.pos;
        out->pos = o.pos;
        if (r == 0) {
            d->state = D_ENDED;
            return WK_DONE;
        }
        if (d->bh_have == 3 && d->consumed == d->blk_end) { /* on to the next block */
            d->blk_start = d->blk_end;
            d->bh_have = 0;
        }
        if (o.pos == o.size) return WK_NEED_OUTPUT;
        if (in->pos == in->size) return WK_NEED_INPUT;
        if (!progressed) return WK_NEED_OUTPUT; /* libzstd holds bytes it has not flushed */
    }
}

wk_result wk_iltp_decode(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    if (d->state == D_FAILED) {
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    if (d->state == D_ENDED) return after_end(d, in, err);
    switch (d->enc) {
    case WK_ILTP_DEFLATE12C: return inflate_step(d, out, in, err);
    case WK_ILTP_ZSTD20C: return zstd_dstep(d, out, in, err);
    default: {
        size_t n = in->size - in->pos, room = out->size - out->pos;
        if (n > room) n = room;
        if (n) memcpy(out->dst + out->pos, in->src + in->pos, n);
        in->pos += n;
        out->pos += n;
        d->consumed += n;
        d->produced += n;
        return in->pos < in->size ? WK_NEED_OUTPUT : WK_NEED_INPUT;
    }
    }
}

wk_code wk_iltp_decoder_finish(wk_iltp_decoder *d, const wk_in *rest, wk_error *err)
{
    if (d->state == D_FAILED) {
        if (err) *err = d->failure;
        return d->failure.code;
    }
    if (d->enc == WK_ILTP_IDENTITY) return WK_OK;
    if (d->state != D_ENDED) {
        dec_fail(d, err, WK_ERR_ILTP_TRUNCATED, d->consumed,
                 "input ended before the end mark of a compressed direction");
        return WK_ERR_ILTP_TRUNCATED;
    }
    size_t n = rest ? rest->size - rest->pos : 0, bad = 0;
    if (n == 0) return WK_OK;
    long m = lead_match(rest->src + rest->pos, n, &bad);
    if (m < 0) {
        dec_fail(d, err, WK_ERR_ILTP_AFTER_END_MARK, d->consumed + bad,
                 "byte after the end mark does not begin a raw preface");
        return WK_ERR_ILTP_AFTER_END_MARK;
    }
    if (m < WK_ILTP_PREFACE_LEAD_LEN) {
        dec_fail(d, err, WK_ERR_ILTP_TRUNCATED, d->consumed + n,
                 "input ended inside the raw preface after the end mark");
        return WK_ERR_ILTP_TRUNCATED;
    }
    return WK_OK;
}
