/* Lace-065 stream encoding: the API, identity, and deflate12c with zlib (raw deflate,
 * windowBits -12). deflate12c with ISA-L is in stream_isal.c, zstd20c in stream_zstd.c.
 * Decisions are listed in include/wirekit/iltp.h and docs/iltp.md. No I/O; memory goes through
 * the caller's allocator and is fixed per object (nothing grows with batch size or expansion). */
#include "stream_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t wk_iltp_dummy_byte;

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

const char *wk_iltp_backend_name(wk_iltp_backend backend)
{
    switch (backend) {
    case WK_ILTP_BACKEND_DEFAULT: return "default";
    case WK_ILTP_BACKEND_ZLIB: return "zlib";
    case WK_ILTP_BACKEND_ISAL: return "isal";
    default: return NULL;
    }
}

/* The concrete deflate12c backend a params value asks for (DEFAULT for the other tokens). */
static bool resolve_backend(wk_iltp_encoding enc, wk_iltp_backend asked, wk_iltp_backend *out,
                            wk_error *err)
{
    if (asked != WK_ILTP_BACKEND_DEFAULT && asked != WK_ILTP_BACKEND_ZLIB &&
        asked != WK_ILTP_BACKEND_ISAL) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown backend %d", (int)asked);
        return false;
    }
    if (enc != WK_ILTP_DEFLATE12C) *out = WK_ILTP_BACKEND_DEFAULT;
    else *out = asked == WK_ILTP_BACKEND_DEFAULT ? WK_ILTP_BACKEND_ISAL : asked;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
wk_iltp_encoding wk_iltp_encoder_encoding(const wk_iltp_encoder *e) { return e->enc; }
wk_iltp_backend wk_iltp_encoder_backend(const wk_iltp_encoder *e) { return e->backend; }

wk_iltp_encoder *wk_iltp_encoder_create(wk_iltp_encoding enc, const wk_iltp_encoder_params *params,
                                        wk_error *err)
{
    int level = params ? params->level : 0;
    wk_iltp_backend backend;
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown encoding");
        return NULL;
    }
    if (!resolve_backend(enc, params ? params->backend : WK_ILTP_BACKEND_DEFAULT, &backend, err))
        return NULL;
    if (enc == WK_ILTP_DEFLATE12C && (level < 0 || level > 9)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "deflate12c level must be 0..9");
        return NULL;
    }
    if (enc == WK_ILTP_ZSTD20C && (level < 0 || level > 19)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "zstd20c level must be 1..19");
        return NULL;
    }
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_encoder *e = wk_allocator_zalloc(&a, sizeof *e, "encoder allocation failed", err);
    if (!e) return NULL;
    e->enc = enc;
    e->backend = backend;
    e->alloc = a;
    e->phase = P_WRITE;
    if (enc == WK_ILTP_DEFLATE12C) {
        e->level = level ? level : WK_ILTP_DEFLATE_LEVEL;
        if (backend == WK_ILTP_BACKEND_ISAL) {
            if (wk_iltp_isal_encoder_init(e, err) != WK_OK) {
                wk_iltp_encoder_destroy(e);
                return NULL;
            }
        } else {
            e->z.zalloc = z_alloc;
            e->z.zfree = z_free;
            e->z.opaque = &e->alloc;
            int zr = deflateInit2(&e->z, e->level, Z_DEFLATED, -WK_ILTP_DEFLATE_WBITS,
                                  WK_ILTP_ZLIB_MEMLEVEL, Z_DEFAULT_STRATEGY);
            if (zr != Z_OK) {
                wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET,
                             "deflateInit2 failed (%d)", zr);
                a.free(a.opaque, e);
                return NULL;
            }
            e->z_ready = true;
        }
    } else if (enc == WK_ILTP_ZSTD20C) {
        e->level = level ? level : WK_ILTP_ZSTD_LEVEL;
        if (wk_iltp_zstd_encoder_init(e, err) != WK_OK) {
            wk_iltp_encoder_destroy(e);
            return NULL;
        }
    }
    if (wk_iltp_encoder_reset(e, err) != WK_OK) {
        wk_iltp_encoder_destroy(e);
        return NULL;
    }
    return e;
}

void wk_iltp_encoder_destroy(wk_iltp_encoder *e)
{
    if (!e) return;
    if (e->z_ready) deflateEnd(&e->z);
    wk_iltp_zstd_encoder_destroy(e);
    wk_iltp_isal_encoder_destroy(e);
    wk_allocator a = e->alloc;
    a.free(a.opaque, e);
}

wk_code wk_iltp_encoder_reset(wk_iltp_encoder *e, wk_error *err)
{
    e->phase = P_WRITE;
    e->batch_open = false;
    e->stage_pos = e->stage_len = 0;
    wk_error_clear(&e->failure);
    wk_code c = WK_OK;
    if (e->enc == WK_ILTP_DEFLATE12C && e->backend == WK_ILTP_BACKEND_ISAL) {
        c = wk_iltp_isal_encoder_reset(e, &e->failure);
    } else if (e->enc == WK_ILTP_DEFLATE12C) {
        if (deflateReset(&e->z) != Z_OK ||
            deflateSetDictionary(&e->z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) != Z_OK)
            c = wk_error_set(&e->failure, WK_ERR_BACKEND, WK_NO_OFFSET, "deflate reset failed");
    } else if (e->enc == WK_ILTP_ZSTD20C) {
        c = wk_iltp_zstd_encoder_reset(e, &e->failure);
    }
    if (c != WK_OK) {
        e->phase = P_FAILED;
        if (err) *err = e->failure;
    }
    return c;
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
        if (!wk_iltp_stage_drain(e, e->stage, out)) return WK_NEED_OUTPUT;

        e->z.next_out = e->stage;
        e->z.avail_out = WK_ILTP_STAGE_SIZE;
        int zr;
        wk_result res;
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
                e->stage_len = WK_ILTP_STAGE_SIZE - e->z.avail_out;
                continue;
            }
            if (!wk_iltp_push_taken(e, op, &res)) return res;
            continue;
        case P_FLUSH:
            e->z.next_in = &wk_iltp_dummy_byte;
            e->z.avail_in = 0;
            zr = deflate(&e->z, Z_SYNC_FLUSH);
            if (zr != Z_OK && zr != Z_BUF_ERROR)
                return enc_fail(e, err, WK_ERR_ILTP_ENCODE, "deflate sync flush failed");
            e->stage_len = WK_ILTP_STAGE_SIZE - e->z.avail_out;
            if (e->z.avail_out != 0) { /* flush complete */
                e->batch_open = false;
                e->phase = P_WRITE;
            }
            continue;
        case P_MARK:
            e->z.next_in = &wk_iltp_dummy_byte;
            e->z.avail_in = 0;
            zr = deflate(&e->z, Z_FINISH);
            if (zr != Z_STREAM_END && zr != Z_OK)
                return enc_fail(e, err, WK_ERR_ILTP_ENCODE, "deflate finish failed");
            e->stage_len = WK_ILTP_STAGE_SIZE - e->z.avail_out;
            if (zr == Z_STREAM_END) e->phase = P_ENDED;
            continue;
        case P_ENDED:
            return WK_DONE;
        default:
            return enc_fail(e, err, WK_ERR_STATE, "encoder failed earlier");
        }
    }
}

wk_result wk_iltp_encoder_encode(wk_iltp_encoder *e, wk_in *in, wk_out *out, wk_iltp_op op, wk_error *err)
{
    static const uint8_t none[1];
    wk_in empty = {none, 0, 0};
    if (!in) in = &empty;
    if (e->phase == P_FAILED) { /* the first failure, unchanged, until reset */
        if (err) *err = e->failure;
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
    wk_result r;
    switch (e->enc) {
    case WK_ILTP_DEFLATE12C:
        if (e->backend == WK_ILTP_BACKEND_ISAL) r = wk_iltp_isal_encode_step(e, out, in, op, &e->failure);
        else r = deflate_step(e, out, in, op, &e->failure);
        break;
    case WK_ILTP_ZSTD20C: r = wk_iltp_zstd_encode_step(e, out, in, op, &e->failure); break;
    default: return identity_step(e, out, in, op);
    }
    /* a backend step's error always fails the encoder (P_FAILED): keep it for later calls */
    if (r == WK_ERROR && err) *err = e->failure;
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
bool wk_iltp_decoder_ended(const wk_iltp_decoder *d) { return d->state == D_ENDED; }
uint64_t wk_iltp_decoder_consumed(const wk_iltp_decoder *d) { return d->consumed; }
uint64_t wk_iltp_decoder_produced(const wk_iltp_decoder *d) { return d->produced; }
wk_iltp_backend wk_iltp_decoder_backend(const wk_iltp_decoder *d) { return d->backend; }

wk_iltp_decoder *wk_iltp_decoder_create(wk_iltp_encoding enc, const wk_iltp_decoder_params *params,
                                        wk_error *err)
{
    wk_iltp_backend backend;
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown encoding");
        return NULL;
    }
    if (!resolve_backend(enc, params ? params->backend : WK_ILTP_BACKEND_DEFAULT, &backend, err))
        return NULL;
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_decoder *d = wk_allocator_zalloc(&a, sizeof *d, "decoder allocation failed", err);
    if (!d) return NULL;
    d->enc = enc;
    d->backend = backend;
    d->alloc = a;
    if (enc == WK_ILTP_DEFLATE12C) {
        /* zlib: the zlib backend's decoder, and ISA-L's replay decoder */
        d->z.zalloc = z_alloc;
        d->z.zfree = z_free;
        d->z.opaque = &d->alloc;
        int zr = inflateInit2(&d->z, -WK_ILTP_DEFLATE_WBITS);
        if (zr != Z_OK) {
            wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET,
                         "inflateInit2 failed (%d)", zr);
            a.free(a.opaque, d);
            return NULL;
        }
        d->z_ready = true;
        if (backend == WK_ILTP_BACKEND_ISAL && wk_iltp_isal_decoder_init(d, err) != WK_OK) {
            wk_iltp_decoder_destroy(d);
            return NULL;
        }
    } else if (enc == WK_ILTP_ZSTD20C) {
        if (wk_iltp_zstd_decoder_init(d, err) != WK_OK) {
            wk_iltp_decoder_destroy(d);
            return NULL;
        }
    }
    if (wk_iltp_decoder_reset(d, err) != WK_OK) {
        wk_iltp_decoder_destroy(d);
        return NULL;
    }
    return d;
}

void wk_iltp_decoder_destroy(wk_iltp_decoder *d)
{
    if (!d) return;
    if (d->z_ready) inflateEnd(&d->z);
    wk_iltp_isal_decoder_destroy(d);
    wk_iltp_zstd_decoder_destroy(d);
    wk_allocator a = d->alloc;
    a.free(a.opaque, d);
}

wk_code wk_iltp_decoder_reset(wk_iltp_decoder *d, wk_error *err)
{
    d->state = D_ACTIVE;
    d->consumed = d->produced = 0;
    d->skip = 0;
    wk_error_clear(&d->failure);
    wk_code c = WK_OK;
    if (d->enc == WK_ILTP_DEFLATE12C) {
        /* zlib's window is allocated here (by the dictionary), never inside a decode step */
        int zr = inflateReset(&d->z);
        if (zr == Z_OK) zr = inflateSetDictionary(&d->z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN);
        if (zr != Z_OK)
            c = wk_error_set(err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET,
                             "inflate reset failed (%d)", zr);
        else if (d->backend == WK_ILTP_BACKEND_ISAL)
            c = wk_iltp_isal_decoder_reset(d, err);
    } else if (d->enc == WK_ILTP_ZSTD20C) {
        c = wk_iltp_zstd_decoder_reset(d, err);
    }
    if (c != WK_OK) d->state = D_FAILED;
    return c;
}

wk_result wk_iltp_dec_fail(wk_iltp_decoder *d, wk_error *err, wk_code code, uint64_t off,
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
        return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_AFTER_END_MARK, d->consumed + bad,
                                "byte after the end mark does not begin a raw preface");
    if (m == 0 || m == WK_ILTP_PREFACE_LEAD_LEN) return WK_DONE;
    return WK_NEED_INPUT;
}

wk_result wk_iltp_inflate_fail(wk_iltp_decoder *d, wk_error *err, int zr, uint64_t off)
{
    if (zr == Z_MEM_ERROR) return wk_iltp_dec_fail(d, err, WK_ERR_NOMEM, WK_NO_OFFSET, "inflate out of memory");
    /* zlib's message for a reference before the start of the history */
    const char *msg = d->z.msg ? d->z.msg : "invalid deflate data";
    bool far = strcmp(msg, "invalid distance too far back") == 0;
    char what[100];
    snprintf(what, sizeof what, "%s", msg);
    return wk_iltp_dec_fail(d, err, far ? WK_ERR_ILTP_DEFLATE_REFERENCE : WK_ERR_ILTP_DEFLATE_MALFORMED,
                            off, what);
}

/* Discards d->skip bytes of zlib output (after an ISA-L fallback they were delivered already),
 * reading from *in. Returns WK_DONE once nothing is left to skip, else what inflate needs. */
static wk_result inflate_skip(wk_iltp_decoder *d, wk_in *in, wk_error *err)
{
    while (d->skip) {
        size_t in_avail = in->size - in->pos;
        if (in_avail > UINT32_MAX) in_avail = UINT32_MAX;
        uInt room = d->skip < WK_ILTP_CK_WINDOW ? (uInt)d->skip : WK_ILTP_CK_WINDOW;
        d->z.next_in = in_avail ? (Bytef *)(uintptr_t)(in->src + in->pos) : &wk_iltp_dummy_byte;
        d->z.avail_in = (uInt)in_avail;
        d->z.next_out = d->is->ck_win; /* free after the fallback primed zlib */
        d->z.avail_out = room;
        int zr = inflate(&d->z, Z_NO_FLUSH);
        size_t used = in_avail - d->z.avail_in, made = room - d->z.avail_out;
        in->pos += used;
        d->consumed += used;
        d->skip -= made;
        if (zr == Z_STREAM_END) {
            if (d->skip)
                return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET,
                                        "internal: zlib ended before the bytes igzip delivered");
            d->state = D_ENDED;
            return WK_DONE;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return wk_iltp_inflate_fail(d, err, zr, d->consumed ? d->consumed - 1 : 0);
        if (!used && !made) return WK_NEED_INPUT; /* in is consumed */
    }
    return WK_DONE;
}

wk_result wk_iltp_inflate_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    if (d->skip) {
        wk_result r = inflate_skip(d, in, err);
        if (r != WK_DONE || d->state == D_ENDED) return r;
    }
    size_t in_avail = in->size - in->pos, out_room = out->size - out->pos;
    if (in_avail > UINT32_MAX) in_avail = UINT32_MAX;
    if (out_room > UINT32_MAX) out_room = UINT32_MAX;
    d->z.next_in = in_avail ? (Bytef *)(uintptr_t)(in->src + in->pos) : &wk_iltp_dummy_byte;
    d->z.avail_in = (uInt)in_avail;
    d->z.next_out = out_room ? out->dst + out->pos : &wk_iltp_dummy_byte;
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
    default:
        /* the offset of the last byte inflate took: the one holding the failing bits */
        return wk_iltp_inflate_fail(d, err, zr, d->consumed ? d->consumed - 1 : 0);
    }
}

wk_result wk_iltp_decoder_decode(wk_iltp_decoder *d, wk_in *in, wk_out *out, wk_error *err)
{
    if (d->state == D_FAILED) {
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    if (d->state == D_ENDED) return after_end(d, in, err);
    switch (d->enc) {
    case WK_ILTP_DEFLATE12C:
        if (d->backend == WK_ILTP_BACKEND_ISAL) return wk_iltp_isal_decode_step(d, out, in, err);
        return wk_iltp_inflate_step(d, out, in, err);
    case WK_ILTP_ZSTD20C: return wk_iltp_zstd_decode_step(d, out, in, err);
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

wk_result wk_iltp_decoder_finish(wk_iltp_decoder *d, const wk_in *rest, wk_error *err)
{
    if (d->state == D_FAILED) {
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    if (d->enc == WK_ILTP_IDENTITY) return WK_DONE;
    if (d->state != D_ENDED) {
        if (d->enc == WK_ILTP_DEFLATE12C && d->backend == WK_ILTP_BACKEND_ISAL &&
            wk_iltp_isal_finish_check(d, err) != WK_OK)
            return WK_ERROR;
        wk_iltp_dec_fail(d, err, WK_ERR_ILTP_TRUNCATED, d->consumed,
                         "input ended before the end mark of a compressed direction");
        return WK_ERROR;
    }
    size_t n = rest ? rest->size - rest->pos : 0, bad = 0;
    if (n == 0) return WK_DONE;
    long m = lead_match(rest->src + rest->pos, n, &bad);
    if (m < 0) {
        wk_iltp_dec_fail(d, err, WK_ERR_ILTP_AFTER_END_MARK, d->consumed + bad,
                         "byte after the end mark does not begin a raw preface");
        return WK_ERROR;
    }
    if (m < WK_ILTP_PREFACE_LEAD_LEN) {
        wk_iltp_dec_fail(d, err, WK_ERR_ILTP_TRUNCATED, d->consumed + n,
                         "input ended inside the raw preface after the end mark");
        return WK_ERROR;
    }
    return WK_DONE;
}
