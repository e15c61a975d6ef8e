/* zstd20c (Lace-065): one magicless RFC 8878 frame through libzstd, window 2^20, raw-content
 * dictionary, a block flush per batch, the empty last raw block 01 00 00 as end mark.
 *
 * The decoder drives libzstd's block API (ZSTD_decompressContinue) itself, over buffers it owns:
 * one call per frame-header part, block header and block, the same calls ZSTD_decompressStream
 * makes inside, so a whole push is decoded in one wirekit call with no per-block overhead of the
 * streaming wrapper. ZSTD_decompressStream reports an error without saying how far it got (the
 * input and output positions stay where the call began), so it could not name the failing block;
 * here the failing call is the failing block. */
#include "stream_internal.h"
#include <zstd_errors.h>
#include <stdio.h>
#include <string.h>

#define FRAME_HEADER_LEN 2       /* descriptor 00 + window descriptor */
#define BLOCK_MAX ((size_t)128 << 10)
#define DELIVER_MIN ((size_t)8 << 10) /* decoded bytes gathered in the ring before a copy out */

/* A failed ZSTD_decompressContinue without a call into the shared library per check (the
 * per-block path checks two results per block): a success returns the bytes a unit decoded, at
 * most a block (128 KiB); an error is a larger value, which zstd_fail confirms with
 * ZSTD_isError. */
static inline bool zfailed(size_t r) { return r > BLOCK_MAX; }

static ZSTD_customMem zstd_mem(const wk_allocator *a)
{
    ZSTD_customMem m = {a->alloc, a->free, a->opaque};
    return m;
}

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
wk_code wk_iltp_zstd_encoder_init(wk_iltp_encoder *e, wk_error *err)
{
    e->zc = ZSTD_createCCtx_advanced(zstd_mem(&e->alloc));
    if (!e->zc) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "ZSTD_createCCtx failed");
    e->zout_cap = ZSTD_CStreamOutSize();
    e->zout = e->alloc.alloc(e->alloc.opaque, e->zout_cap);
    if (!e->zout) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "zstd encoder output buffer");
    int failed = 0;
    size_t r = wk_iltp_zstd_cctx_setup(e->zc, e->level, &failed);
    if (ZSTD_isError(r))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd parameter %d: %s", failed,
                            ZSTD_getErrorName(r));
    return WK_OK;
}

void wk_iltp_zstd_encoder_destroy(wk_iltp_encoder *e)
{
    if (e->zc) ZSTD_freeCCtx(e->zc);
    if (e->zout) e->alloc.free(e->alloc.opaque, e->zout);
    e->zc = NULL;
    e->zout = NULL;
}

wk_code wk_iltp_zstd_encoder_reset(wk_iltp_encoder *e, wk_error *err)
{
    e->zflush_done = false;
    if (ZSTD_isError(ZSTD_CCtx_reset(e->zc, ZSTD_reset_session_only)))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd reset failed");
    if (ZSTD_isError(ZSTD_CCtx_refPrefix_advanced(e->zc, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN,
                                                  ZSTD_dct_rawContent)))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "ZSTD_CCtx_refPrefix failed");
    /* Start the frame now with an unknown source size: an end mark as the very first call
     * would otherwise declare a tiny window instead of 2^20 (header 00 50). */
    ZSTD_outBuffer o = {&wk_iltp_dummy_byte, 0, 0};
    ZSTD_inBuffer i = {&wk_iltp_dummy_byte, 0, 0};
    size_t r = ZSTD_compressStream2(e->zc, &o, &i, ZSTD_e_continue);
    if (ZSTD_isError(r))
        return wk_error_set(err, ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? WK_ERR_NOMEM : WK_ERR_BACKEND,
                            WK_NO_OFFSET, "zstd: %s", ZSTD_getErrorName(r));
    return WK_OK;
}

/* libzstd compresses into e->zout, which is drained into out before the next call: in its direct
 * mode (room for a whole compressed block) libzstd tries the block compressed, and when a raw
 * block is smaller it writes that over the attempt, leaving the attempt's tail past the bytes it
 * reports. The contract lets no call write past out->pos, so those bytes land in zout. Input goes
 * to libzstd at most a block (128 KiB) per call, as ZSTD_e_continue, and the flush or end mark
 * only with the last piece: then each call compresses at most one block, always straight into the
 * empty zout (a second block in the same call would go through libzstd's own buffer and be
 * copied twice). libzstd cuts blocks where its buffer fills whatever the pieces, so the bytes are
 * those of one call with the whole batch. The cost is one memcpy of the compressed bytes
 * (docs/benchmarks.md, session 26). */
wk_result wk_iltp_zstd_encode_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op,
                                   wk_error *err)
{
    ZSTD_inBuffer i = {in->src ? in->src : &wk_iltp_dummy_byte, in->size, in->pos};
    wk_result res;
    /* new bytes or another op: a completed flush no longer answers this call */
    if (i.pos < i.size || op != WK_ILTP_FLUSH) e->zflush_done = false;
    for (;;) {
        if (!wk_iltp_stage_drain(e, e->zout, out)) { res = WK_NEED_OUTPUT; break; }
        if (e->phase == P_ENDED) { res = WK_DONE; break; }
        if (e->zflush_done) {
            e->zflush_done = false;
            res = WK_DONE;
            break;
        }
        size_t lim = i.size - i.pos > BLOCK_MAX ? i.pos + BLOCK_MAX : i.size;
        ZSTD_EndDirective dir;
        if (op == WK_ILTP_CONTINUE || lim < i.size) dir = ZSTD_e_continue;
        else if (e->phase == P_MARK) dir = ZSTD_e_end;
        else dir = ZSTD_e_flush;
        if (i.pos < i.size) e->batch_open = true;
        ZSTD_outBuffer o = {e->zout, e->zout_cap, 0};
        ZSTD_inBuffer piece = {i.src, lim, i.pos};
        size_t r = ZSTD_compressStream2(e->zc, &o, &piece, dir);
        i.pos = piece.pos;
        if (ZSTD_isError(r)) {
            in->pos = i.pos;
            e->phase = P_FAILED;
            wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "zstd: %s", ZSTD_getErrorName(r));
            return WK_ERROR;
        }
        e->stage_pos = 0;
        e->stage_len = o.pos;
        if (dir == ZSTD_e_continue) {
            /* CONTINUE: all input taken and nothing left in zout, the push is done */
            if (op == WK_ILTP_CONTINUE && i.pos == i.size && o.pos == 0) { res = WK_NEED_INPUT; break; }
            continue;
        }
        if (r == 0 && i.pos == i.size) {
            if (dir == ZSTD_e_end) { e->phase = P_ENDED; continue; }
            e->batch_open = false;
            if (op == WK_ILTP_FLUSH) { e->zflush_done = true; continue; }
            e->phase = P_MARK; /* END: the batch is flushed, now the end mark */
            continue;
        }
    }
    in->pos = i.pos;
    return res;
}

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
wk_code wk_iltp_zstd_decoder_init(wk_iltp_decoder *d, wk_error *err)
{
    d->zd = ZSTD_createDCtx_advanced(zstd_mem(&d->alloc));
    if (!d->zd) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "ZSTD_createDCtx failed");
    if (wk_iltp_zstd_dctx_setup(d->zd) != 0)
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd decoder setup failed");
    /* what ZSTD_decompressStream would allocate for a 2^20 window: the window, a block and
     * libzstd's copy margin, so any window up to 2^20 decodes in place */
    d->ring_size = ZSTD_decodingBufferSize_min((unsigned long long)1 << WK_ILTP_ZSTD_WINDOW_LOG,
                                               ZSTD_CONTENTSIZE_UNKNOWN);
    if (ZSTD_isError(d->ring_size))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "ZSTD_decodingBufferSize_min failed");
    /* 64-byte aligned, whatever the allocator returns: memcpy in and out of the ring is
     * measurably sensitive to alignment on this machine */
    d->ring_alloc = d->alloc.alloc(d->alloc.opaque, d->ring_size + 63);
    d->ring = d->ring_alloc ? (uint8_t *)(((uintptr_t)d->ring_alloc + 63) & ~(uintptr_t)63) : NULL;
    d->zin = d->ring ? d->alloc.alloc(d->alloc.opaque, BLOCK_MAX) : NULL;
    if (!d->zin) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "zstd decoder buffers");
    return WK_OK;
}

void wk_iltp_zstd_decoder_destroy(wk_iltp_decoder *d)
{
    if (d->zd) ZSTD_freeDCtx(d->zd);
    if (d->ring_alloc) d->alloc.free(d->alloc.opaque, d->ring_alloc);
    if (d->zin) d->alloc.free(d->alloc.opaque, d->zin);
    d->zd = NULL;
    d->ring = d->ring_alloc = d->zin = NULL;
}

wk_code wk_iltp_zstd_decoder_reset(wk_iltp_decoder *d, wk_error *err)
{
    d->r_start = d->r_end = 0;
    d->zin_have = 0;
    d->frame_done = false;
    d->blk_start = FRAME_HEADER_LEN;
    d->zunit = Z_FRAME_HEADER;
    /* the dictionary does not begin with the dictionary magic, so libzstd takes it as raw
     * content: history before the first byte, default entropy tables (as refPrefix does) */
    if (ZSTD_isError(ZSTD_decompressBegin_usingDict(d->zd, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN)))
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "zstd decoder reset failed");
    return WK_OK;
}

/* Checks the two frame-header bytes (descriptor 00, window <= 2^20) before libzstd sees them. */
static wk_result zstd_header_check(wk_iltp_decoder *d, const wk_in *in, wk_error *err)
{
    for (uint64_t off = d->consumed; off < FRAME_HEADER_LEN && off - d->consumed < in->size - in->pos; off++) {
        uint8_t b = in->src[in->pos + (size_t)(off - d->consumed)];
        if (off == 0 && b != 0x00) {
            char what[80];
            snprintf(what, sizeof what, "frame header descriptor is 0x%02x, must be 00", b);
            return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_HEADER, 0, what);
        }
        if (off == 1) {
            unsigned exponent = b >> 3, mantissa = b & 7;
            uint64_t base = (uint64_t)1 << (10 + exponent);
            uint64_t window = base + (base / 8) * mantissa;
            if (window > ((uint64_t)1 << WK_ILTP_ZSTD_WINDOW_LOG)) {
                char what[80];
                snprintf(what, sizeof what, "window descriptor 0x%02x declares %llu bytes", b,
                         (unsigned long long)window);
                return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_WINDOW, 1, what);
            }
        }
    }
    return WK_DONE;
}

/* Reserved block types and oversized blocks are refused before libzstd, at the block's offset.
 * Notes the block's type, body size (1 for RLE) and last flag. */
static wk_result block_header_check(wk_iltp_decoder *d, const uint8_t h3[3], wk_error *err)
{
    uint32_t h = (uint32_t)h3[0] | (uint32_t)h3[1] << 8 | (uint32_t)h3[2] << 16;
    unsigned type = (h >> 1) & 3;
    uint32_t size = h >> 3;
    if (type == 3)
        return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, d->blk_start, "reserved block type");
    if (size > BLOCK_MAX)
        return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, d->blk_start, "block size over 128 KiB");
    d->blk_raw = type == 0;
    d->blk_last = h & 1;
    d->blk_body = type == 1 ? 1 : size;
    return WK_DONE;
}

static wk_result zstd_fail(wk_iltp_decoder *d, wk_error *err, size_t r, bool in_header)
{
    if (!ZSTD_isError(r))
        return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET, "internal: a zstd unit decoded to over 128 KiB");
    ZSTD_ErrorCode c = ZSTD_getErrorCode(r);
    if (c == ZSTD_error_memory_allocation)
        return wk_iltp_dec_fail(d, err, WK_ERR_NOMEM, WK_NO_OFFSET, "zstd decoder out of memory");
    if (c == ZSTD_error_frameParameter_windowTooLarge)
        return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_WINDOW, 1, "declared window above 2^20");
    char what[100];
    snprintf(what, sizeof what, "zstd %s: %s", in_header ? "frame header" : "block", ZSTD_getErrorName(r));
    return wk_iltp_dec_fail(d, err, WK_ERR_ILTP_ZSTD_MALFORMED, in_header ? 0 : d->blk_start, what);
}

/* Copies decoded bytes waiting in the ring into *out; true once none waits. */
static bool ring_deliver(wk_iltp_decoder *d, wk_out *out)
{
    size_t n = d->r_end - d->r_start, room = out->size - out->pos;
    if (n > room) n = room;
    if (n) {
        memcpy(out->dst + out->pos, d->ring + d->r_start, n);
        out->pos += n;
        d->r_start += n;
        d->produced += n;
    }
    return d->r_start == d->r_end;
}

/* The input is consumed: deliver what waits in the ring before asking for more. */
static wk_result zstd_need_input(wk_iltp_decoder *d, wk_out *out)
{
    return ring_deliver(d, out) ? WK_NEED_INPUT : WK_NEED_OUTPUT;
}

wk_result wk_iltp_zstd_decode_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    if (d->consumed < FRAME_HEADER_LEN && zstd_header_check(d, in, err) == WK_ERROR) return WK_ERROR;
    for (;;) {
        /* deliver pending output: in pieces of at least DELIVER_MIN (small blocks gather in the
         * ring), and all of it before the ring wraps and before any return */
        size_t pending = d->r_end - d->r_start;
        bool wrap = d->zunit == Z_BLOCK_HEADER && d->r_end + BLOCK_MAX > d->ring_size;
        if (pending && (pending >= DELIVER_MIN || wrap || d->frame_done) && !ring_deliver(d, out))
            return WK_NEED_OUTPUT; /* the view is full */
        if (d->frame_done) {
            d->state = D_ENDED;
            return WK_DONE;
        }
        size_t avail0 = in->size - in->pos;
        if (d->zunit == Z_BLOCK_HEADER && d->zin_have == 0 && avail0 >= 3 && !wrap) {
            /* the common case: a whole block in the push, header and body in one pass */
            const uint8_t *h = in->src + in->pos;
            d->blk_start = d->consumed;
            if (block_header_check(d, h, err) == WK_ERROR) return WK_ERROR;
            if (avail0 - 3 >= d->blk_body) {
                size_t r = ZSTD_decompressContinue(d->zd, d->ring + d->r_end, 0, h, 3); /* writes nothing */
                if (zfailed(r)) return zstd_fail(d, err, r, false);
                in->pos += 3;
                d->consumed += 3;
                if (d->blk_body) {
                    r = ZSTD_decompressContinue(d->zd, d->ring + d->r_end, d->ring_size - d->r_end, h + 3, d->blk_body);
                    if (zfailed(r)) return zstd_fail(d, err, r, false);
                    in->pos += d->blk_body;
                    d->consumed += d->blk_body;
                    d->r_end += r;
                }
                d->frame_done = d->blk_last;
                continue;
            }
        }
        /* the size of the next unit, as libzstd expects it: the frame header's two bytes, a
         * block header, a block's body (a raw one in any pieces); no checksum follows the last
         * block (descriptor 00) */
        size_t need = d->zunit == Z_FRAME_HEADER ? 1 : d->zunit == Z_BLOCK_HEADER ? 3 : d->blk_body;
        size_t avail = in->size - in->pos;
        const uint8_t *src;
        if (d->zunit == Z_BODY && d->blk_raw && d->zin_have == 0) {
            /* a raw block goes to libzstd in the pieces the pushes bring (as its stream does) */
            if (!avail) return zstd_need_input(d, out);
            if (need > avail) need = avail;
            src = in->src + in->pos;
        } else if (d->zin_have == 0 && avail >= need) {
            src = in->src + in->pos;
        } else {
            /* a header or compressed block that spans pushes: collect it */
            if (need > BLOCK_MAX)
                return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET, "internal: zstd unit over 128 KiB");
            size_t take = need - d->zin_have;
            if (take > avail) take = avail;
            if (take) memcpy(d->zin + d->zin_have, in->src + in->pos, take);
            d->zin_have += take;
            in->pos += take;
            d->consumed += take;
            if (d->zin_have < need) return zstd_need_input(d, out);
            src = d->zin;
        }
        uint64_t unit_start = d->consumed - (src == d->zin ? need : 0);
        enum wk_iltp_zunit unit = d->zunit;
        if (unit == Z_BLOCK_HEADER) {
            /* everything delivered: wrap when a whole block no longer fits (what libzstd's stream
             * does; the block after the jump reads the end of the ring as external history) */
            if (d->r_end + BLOCK_MAX > d->ring_size) d->r_start = d->r_end = 0; /* r_start == r_end here */
            d->blk_start = unit_start;
            if (block_header_check(d, src, err) == WK_ERROR) return WK_ERROR;
        }
        size_t r = ZSTD_decompressContinue(d->zd, d->ring + d->r_end, d->ring_size - d->r_end, src, need);
        if (zfailed(r)) return zstd_fail(d, err, r, unit == Z_FRAME_HEADER);
        if (src != d->zin) {
            in->pos += need;
            d->consumed += need;
        }
        d->zin_have = 0;
        d->r_end += r;
        if (unit == Z_FRAME_HEADER) {
            if (d->consumed >= FRAME_HEADER_LEN) d->zunit = Z_BLOCK_HEADER;
        } else if (unit == Z_BLOCK_HEADER && d->blk_body) {
            d->zunit = Z_BODY;
        } else if (unit == Z_BLOCK_HEADER || !d->blk_raw || (d->blk_body -= (uint32_t)need) == 0) {
            /* the block is complete (an empty block has no body) */
            d->zunit = Z_BLOCK_HEADER;
            d->frame_done = d->blk_last;
        }
    }
}
