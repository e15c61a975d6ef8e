/* wirekit eth: Snappy framing format (spec 2), ours: a streaming decoder and encoder on the
 * wk_in/wk_out step shape, with memory fixed at create. Both have a fast path that works straight
 * between the caller's buffers when a whole chunk (or piece) and room for its result are there;
 * otherwise bytes go through the object's own body/output (or piece/chunk) buffers. */
#include "eth_internal.h"
#include <snappy-c.h> /* the encoder compresses with libsnappy */
#include <string.h>

#define T_COMPRESSED 0x00
#define T_UNCOMPRESSED 0x01
#define T_PADDING 0xfe
#define T_STREAM_ID 0xff
#define MAX_SKIPPABLE_LIMIT 0xFFFFFFu
#define BLOCK_MAX_COMPRESSED 76490u /* wk_eth_snappy_block_max_size(65536) */
#define MIN_COMPRESS_LEN 17         /* Go and Rust emit a bare literal below this */

static const uint8_t stream_id_body[6] = {0x73, 0x4e, 0x61, 0x50, 0x70, 0x59}; /* "sNaPpY" */

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
enum dec_phase {
    D_HEADER, /* reading a chunk header (hdr_len bytes of it so far) */
    D_BODY,   /* buffering the body of an identifier or data chunk */
    D_SKIP,   /* skipping the body of a padding / reserved skippable chunk as it arrives */
    D_EMIT,   /* a verified chunk's bytes pend[pend_pos..pend_len) wait for output room */
    D_FAILED  /* sticky error in `error` */
};

struct wk_eth_snappy_frame_decoder {
    wk_allocator alloc;
    uint64_t limit;         /* output bound (UINT64_MAX = none) */
    uint32_t max_skippable; /* largest padding / skippable body */
    enum dec_phase phase;
    bool seen_id;
    uint64_t consumed;    /* bytes taken from all pushes */
    uint64_t produced;    /* bytes written to out */
    uint64_t committed;   /* decoded size of every verified chunk (produced + pending) */
    uint64_t chunk_start; /* stream offset of the current chunk's header */
    uint8_t hdr[4];
    unsigned hdr_len;
    uint8_t type;
    uint32_t body_len, body_have; /* D_BODY */
    uint32_t body_crc;            /* D_BODY of a 0x01 chunk: CRC-32C of the data buffered so far */
    uint32_t skip_left;           /* D_SKIP */
    const uint8_t *pend;          /* D_EMIT: into obuf or body */
    uint32_t pend_len, pend_pos;
    wk_error error;
    uint8_t body[WK_ETH_SNAPPY_FRAME_MAX_COMPRESSED_BODY];
    uint8_t obuf[WK_ETH_SNAPPY_FRAME_MAX_DATA];
};

static void dec_clear(wk_eth_snappy_frame_decoder *d)
{
    d->phase = D_HEADER;
    d->seen_id = false;
    d->consumed = d->produced = d->committed = d->chunk_start = 0;
    d->hdr_len = 0;
    d->type = 0;
    d->body_len = d->body_have = d->skip_left = 0;
    d->body_crc = 0;
    d->pend = NULL;
    d->pend_len = d->pend_pos = 0;
    wk_error_clear(&d->error);
}

wk_eth_snappy_frame_decoder *
wk_eth_snappy_frame_decoder_create(const wk_eth_snappy_frame_params *params, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_eth_snappy_frame_decoder *d =
        wk_allocator_alloc(&a, sizeof *d, "framing decoder allocation failed", err);
    if (!d) return NULL;
    d->alloc = a;
    d->limit = UINT64_MAX;
    d->max_skippable = WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE;
    dec_clear(d);
    return d;
}

void wk_eth_snappy_frame_decoder_destroy(wk_eth_snappy_frame_decoder *d)
{
    if (!d) return;
    wk_allocator a = d->alloc;
    a.free(a.opaque, d);
}

void wk_eth_snappy_frame_decoder_reset(wk_eth_snappy_frame_decoder *d) { dec_clear(d); }

void wk_eth_snappy_frame_decoder_set_max_skippable(wk_eth_snappy_frame_decoder *d, uint32_t max_body)
{
    d->max_skippable = max_body > MAX_SKIPPABLE_LIMIT ? MAX_SKIPPABLE_LIMIT : max_body;
}

void wk_eth_snappy_frame_decoder_set_output_limit(wk_eth_snappy_frame_decoder *d, uint64_t limit)
{
    d->limit = limit; /* judged at the next chunk boundary (WK_DONE) or data chunk (excess) */
}

uint64_t wk_eth_snappy_frame_decoder_consumed(const wk_eth_snappy_frame_decoder *d) { return d->consumed; }
uint64_t wk_eth_snappy_frame_decoder_produced(const wk_eth_snappy_frame_decoder *d) { return d->produced; }

/* Makes the error in d->error sticky and reports it. */
static wk_code latch(wk_eth_snappy_frame_decoder *d, wk_error *err)
{
    d->phase = D_FAILED;
    if (err) *err = d->error;
    return d->error.code;
}
#define DFAIL(d, err, ...) (wk_error_set(&(d)->error, __VA_ARGS__), latch((d), (err)))

/* Checks that can be made on the type byte alone (as soon as it arrives). */
static wk_code check_type(wk_eth_snappy_frame_decoder *d, uint8_t type, wk_error *err)
{
    if (!d->seen_id && type != T_STREAM_ID)
        return DFAIL(d, err, WK_ERR_FRAME_NO_STREAM_ID, d->chunk_start,
                     "first chunk has type 0x%02x, not the stream identifier", type);
    if (type >= 0x02 && type <= 0x7f)
        return DFAIL(d, err, WK_ERR_FRAME_RESERVED_CHUNK, d->chunk_start,
                     "reserved unskippable chunk type 0x%02x", type);
    return WK_OK;
}

/* Checks of a complete header (the type already passed check_type). */
static wk_code check_header(wk_eth_snappy_frame_decoder *d, uint8_t type, uint32_t len, wk_error *err)
{
    switch (type) {
    case T_STREAM_ID:
        if (len != 6)
            return DFAIL(d, err, WK_ERR_FRAME_BAD_STREAM_ID, d->chunk_start,
                         "stream identifier chunk of length %u", (unsigned)len);
        return WK_OK;
    case T_COMPRESSED:
    case T_UNCOMPRESSED:
        if (len < 4)
            return DFAIL(d, err, WK_ERR_FRAME_CHUNK_TOO_SHORT, d->chunk_start,
                         "data chunk body of %u bytes has no room for the checksum", (unsigned)len);
        if (type == T_COMPRESSED && len > WK_ETH_SNAPPY_FRAME_MAX_COMPRESSED_BODY)
            return DFAIL(d, err, WK_ERR_FRAME_CHUNK_TOO_LARGE, d->chunk_start,
                         "compressed chunk body of %u bytes (limit %u)", (unsigned)len,
                         (unsigned)WK_ETH_SNAPPY_FRAME_MAX_COMPRESSED_BODY);
        if (type == T_UNCOMPRESSED) {
            if (len > WK_ETH_SNAPPY_FRAME_MAX_UNCOMPRESSED_BODY)
                return DFAIL(d, err, WK_ERR_FRAME_CHUNK_TOO_LARGE, d->chunk_start,
                             "uncompressed chunk body of %u bytes (limit %u)", (unsigned)len,
                             (unsigned)WK_ETH_SNAPPY_FRAME_MAX_UNCOMPRESSED_BODY);
            if (len - 4 > d->limit - d->committed)
                return DFAIL(d, err, WK_ERR_SSZSNAPPY_EXCESS_DATA, d->chunk_start,
                             "chunk of %u bytes after %llu takes the output above its limit %llu",
                             (unsigned)(len - 4), (unsigned long long)d->committed,
                             (unsigned long long)d->limit);
        }
        return WK_OK;
    default: /* padding and reserved skippable */
        if (len > d->max_skippable)
            return DFAIL(d, err, WK_ERR_FRAME_CHUNK_TOO_LARGE, d->chunk_start,
                         "skippable chunk 0x%02x body of %u bytes (limit %u)", type, (unsigned)len,
                         (unsigned)d->max_skippable);
        return WK_OK;
    }
}

/* After a checked header: where the body goes. */
static void begin_body(wk_eth_snappy_frame_decoder *d, uint8_t type, uint32_t len)
{
    d->type = type;
    if (type == T_STREAM_ID || type == T_COMPRESSED || type == T_UNCOMPRESSED) {
        d->body_len = len;
        d->body_have = 0;
        d->body_crc = 0;
        d->phase = D_BODY;
    } else if (len > 0) {
        d->skip_left = len;
        d->phase = D_SKIP;
    } else {
        d->phase = D_HEADER;
    }
}

/* Handles the complete body[0..len) of an identifier or data chunk; body_off is its stream
 * offset. A data chunk is decoded (0x00) or copied with its checksum computed on the way (0x01)
 * straight into out when it has room for all of it (bytes past out->pos may be overwritten even
 * if the chunk then fails), else into obuf; its bytes count only once the checksum has been
 * verified. For a 0x01 chunk buffered in d->body, `crc_known` says that d->body_crc already holds
 * its CRC-32C (computed while buffering). Leaves the phase at D_HEADER or D_EMIT. */
static wk_code handle_body(wk_eth_snappy_frame_decoder *d, const uint8_t *body, uint32_t len,
                           uint64_t body_off, bool crc_known, wk_out *out, wk_error *err)
{
    d->phase = D_HEADER;
    if (d->type == T_STREAM_ID) {
        if (memcmp(body, stream_id_body, 6) != 0)
            return DFAIL(d, err, WK_ERR_FRAME_BAD_STREAM_ID, d->chunk_start,
                         "stream identifier body is not sNaPpY");
        d->seen_id = true;
        return WK_OK;
    }
    uint32_t stored = wk_load_le32(body);
    const uint8_t *data = body + 4;
    size_t room = out->dst ? out->size - out->pos : 0;
    size_t n;
    uint32_t crc;
    bool in_out = false; /* the chunk's bytes are already at out->dst + out->pos */
    if (d->type == T_UNCOMPRESSED) {
        n = len - 4;
        if (n > 0 && room >= n) {
            if (crc_known) {
                memcpy(out->dst + out->pos, data, n);
                crc = d->body_crc;
            } else {
                crc = wk_eth_crc32c_copy(out->dst + out->pos, data, n, 0);
            }
            in_out = true;
        } else if (n > 0 && data != d->body + 4) { /* in the caller's input, no room: keep it */
            crc = wk_eth_crc32c_copy(d->obuf, data, n, 0);
            data = d->obuf;
        } else {
            crc = crc_known ? d->body_crc : wk_eth_crc32c(data, n);
        }
    } else {
        uint64_t declared;
        size_t blen = len - 4, plen;
        wk_error e;
        wk_in block = {data, blen, 0};
        if (wk_eth_snappy_block_peek(&block, WK_ETH_SNAPPY_FRAME_MAX_DATA, &declared, &plen, &e) !=
            WK_OK) {
            if (e.code == WK_ERR_SNAPPY_TOO_LARGE)
                return DFAIL(d, err, WK_ERR_FRAME_CHUNK_TOO_LARGE, d->chunk_start,
                             "compressed chunk declares more than 65536 bytes");
            d->error = e;
            d->error.offset += body_off + 4;
            return latch(d, err);
        }
        n = (size_t)declared;
        if (n > d->limit - d->committed)
            return DFAIL(d, err, WK_ERR_SSZSNAPPY_EXCESS_DATA, d->chunk_start,
                         "chunk of %zu bytes after %llu takes the output above its limit %llu", n,
                         (unsigned long long)d->committed, (unsigned long long)d->limit);
        uint8_t *dst = n > 0 && room >= n ? out->dst + out->pos : d->obuf;
        if (wk_eth_snappy_decode_body(data, blen, plen, dst, n, &d->error) != WK_OK) {
            d->error.offset += body_off + 4;
            return latch(d, err);
        }
        crc = wk_eth_crc32c(dst, n);
        in_out = dst != d->obuf;
        data = dst;
    }
    crc = wk_eth_snappy_mask_crc(crc);
    if (crc != stored)
        return DFAIL(d, err, WK_ERR_FRAME_CRC, d->chunk_start,
                     "masked CRC-32C %08x, chunk says %08x", (unsigned)crc, (unsigned)stored);
    d->committed += n;
    if (room >= n) {
        if (n && !in_out) memcpy(out->dst + out->pos, data, n);
        out->pos += n;
        d->produced += n;
        return WK_OK;
    }
    d->pend = data;
    d->pend_len = (uint32_t)n;
    d->pend_pos = 0;
    d->phase = D_EMIT;
    return WK_OK;
}

wk_result wk_eth_snappy_frame_decode(wk_eth_snappy_frame_decoder *d, wk_in *in, wk_out *out,
                                     wk_error *err)
{
    for (;;) {
        switch (d->phase) {
        case D_FAILED:
            if (err) *err = d->error;
            return WK_ERROR;
        case D_EMIT: {
            size_t room = out->size - out->pos, left = d->pend_len - d->pend_pos;
            size_t k = room < left ? room : left;
            if (k) {
                memcpy(out->dst + out->pos, d->pend + d->pend_pos, k);
                out->pos += k;
                d->pend_pos += (uint32_t)k;
                d->produced += k;
            }
            if (d->pend_pos < d->pend_len) return WK_NEED_OUTPUT;
            d->phase = D_HEADER;
            continue;
        }
        case D_SKIP: {
            size_t avail = in->size - in->pos;
            size_t k = avail < d->skip_left ? avail : d->skip_left;
            in->pos += k;
            d->consumed += k;
            d->skip_left -= (uint32_t)k;
            if (d->skip_left) return WK_NEED_INPUT;
            d->phase = D_HEADER;
            continue;
        }
        case D_BODY: {
            size_t avail = in->size - in->pos, need = d->body_len - d->body_have;
            size_t k = avail < need ? avail : need;
            if (d->type == T_UNCOMPRESSED && k) {
                /* the checksum bytes as they are, the data with its CRC-32C on the way */
                size_t head = d->body_have < 4 ? 4 - d->body_have : 0;
                if (head > k) head = k;
                memcpy(d->body + d->body_have, in->src + in->pos, head);
                d->body_crc = wk_eth_crc32c_copy(d->body + d->body_have + head,
                                             in->src + in->pos + head, k - head, d->body_crc);
            } else if (k) {
                memcpy(d->body + d->body_have, in->src + in->pos, k);
            }
            in->pos += k;
            d->consumed += k;
            d->body_have += (uint32_t)k;
            if (d->body_have < d->body_len) return WK_NEED_INPUT;
            if (handle_body(d, d->body, d->body_len, d->chunk_start + 4, true, out, err) != WK_OK)
                return WK_ERROR;
            continue;
        }
        case D_HEADER:
            break;
        }
        /* D_HEADER: at a chunk boundary with the output limit reached, the stream is complete */
        if (d->hdr_len == 0 && d->committed >= d->limit) return WK_DONE;
        size_t avail = in->size - in->pos;
        if (avail == 0) return WK_NEED_INPUT;
        if (d->hdr_len == 0 && avail >= 4) {
            /* Fast path: the header, and maybe the whole chunk, straight from the input. */
            const uint8_t *h = in->src + in->pos;
            uint8_t type = h[0];
            uint32_t len = wk_load_le24(h + 1);
            d->chunk_start = d->consumed;
            if (check_type(d, type, err) != WK_OK || check_header(d, type, len, err) != WK_OK)
                return WK_ERROR;
            in->pos += 4;
            d->consumed += 4;
            begin_body(d, type, len);
            if (d->phase == D_BODY && avail - 4 >= len) {
                in->pos += len;
                d->consumed += len;
                if (handle_body(d, h + 4, len, d->chunk_start + 4, false, out, err) != WK_OK)
                    return WK_ERROR;
            }
            continue;
        }
        uint8_t b = in->src[in->pos++];
        d->consumed++;
        if (d->hdr_len == 0) {
            d->chunk_start = d->consumed - 1;
            if (check_type(d, b, err) != WK_OK) return WK_ERROR;
        }
        d->hdr[d->hdr_len++] = b;
        if (d->hdr_len == 4) {
            d->hdr_len = 0;
            uint32_t len = wk_load_le24(d->hdr + 1);
            if (check_header(d, d->hdr[0], len, err) != WK_OK) return WK_ERROR;
            begin_body(d, d->hdr[0], len);
        }
    }
}

wk_result wk_eth_snappy_frame_decoder_finish(wk_eth_snappy_frame_decoder *d, const wk_in *rest,
                                             wk_error *err)
{
    switch (d->phase) {
    case D_FAILED:
        if (err) *err = d->error;
        return WK_ERROR;
    case D_EMIT:
        /* The stream itself may be complete: this is the caller's unread output, not a peer's
         * truncation, and it is not sticky. */
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "%u decoded bytes not yet read",
                     (unsigned)(d->pend_len - d->pend_pos));
        return WK_ERROR;
    case D_HEADER:
        if (d->hdr_len != 0) break;
        if (rest && rest->pos < rest->size && d->committed < d->limit) {
            /* unread bytes of the stream: the caller's to push first (not sticky) */
            wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET,
                         "%zu bytes not yet pushed: decode until WK_NEED_INPUT first",
                         rest->size - rest->pos);
            return WK_ERROR;
        }
        return WK_DONE;
    default:
        break;
    }
    DFAIL(d, err, WK_ERR_FRAME_TRUNCATED, d->consumed, "stream ends inside the chunk at %llu",
          (unsigned long long)d->chunk_start);
    return WK_ERROR;
}

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
#define CHUNK_CAP (WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN + 8 + BLOCK_MAX_COMPRESSED)

struct wk_eth_snappy_frame_encoder {
    wk_allocator alloc;
    bool id_written;
    bool failed;
    wk_error error;
    uint32_t piece_len;          /* bytes collected in piece */
    uint32_t pend_len, pend_pos; /* chunk bytes waiting for output room */
    uint8_t piece[WK_ETH_SNAPPY_FRAME_MAX_DATA];
    uint8_t chunk[CHUNK_CAP];
};

/* Writes [identifier] + one chunk for src[0..n) (n <= 65536) at dst, which has room for the
 * largest such chunk (id + 8 + n). The block is compressed into cbuf (BLOCK_MAX_COMPRESSED bytes,
 * libsnappy's worst case) and copied when it is kept; never into the caller's room, where an
 * incompressible piece's attempt (longer than the piece) would leave bytes past the chunk, past
 * out->pos (issue 13's contract: encoders write nothing there). cbuf NULL: compressed where it
 * stays, in dst, which must then be the encoder's own chunk buffer (room for the worst case).
 * *written = bytes written. */
static wk_code put_chunk(const uint8_t *src, size_t n, uint8_t *dst, bool with_id, uint8_t *cbuf,
                         size_t *written, wk_error *err)
{
    uint8_t *p = dst;
    if (with_id) {
        memcpy(p, WK_ETH_SNAPPY_FRAME_STREAM_ID, WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN);
        p += WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN;
    }
    uint8_t type = T_UNCOMPRESSED;
    size_t body = n;
    if (n >= MIN_COMPRESS_LEN) {
        uint8_t *c = cbuf ? cbuf : p + 8;
        size_t clen = (size_t)wk_eth_snappy_block_max_size(n);
        if (snappy_compress((const char *)src, n, (char *)c, &clen) != SNAPPY_OK) {
            return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "snappy_compress failed");
        }
        if (clen < n - n / 8) {
            type = T_COMPRESSED;
            body = clen;
            if (cbuf) memcpy(p + 8, cbuf, clen);
        }
    }
    /* a stored piece is checksummed while it is copied (one pass, as the decoder does) */
    uint32_t crc = type == T_UNCOMPRESSED ? wk_eth_crc32c_copy(p + 8, src, n, 0) : wk_eth_crc32c(src, n);
    p[0] = type;
    wk_store_le24(p + 1, (uint32_t)(body + 4));
    wk_store_le32(p + 4, wk_eth_snappy_mask_crc(crc));
    *written = (size_t)(p - dst) + 8 + body;
    return WK_OK;
}

wk_eth_snappy_frame_encoder *
wk_eth_snappy_frame_encoder_create(const wk_eth_snappy_frame_params *params, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_eth_snappy_frame_encoder *e =
        wk_allocator_alloc(&a, sizeof *e, "framing encoder allocation failed", err);
    if (!e) return NULL;
    e->alloc = a;
    wk_eth_snappy_frame_encoder_reset(e);
    return e;
}

void wk_eth_snappy_frame_encoder_destroy(wk_eth_snappy_frame_encoder *e)
{
    if (!e) return;
    wk_allocator a = e->alloc;
    a.free(a.opaque, e);
}

void wk_eth_snappy_frame_encoder_reset(wk_eth_snappy_frame_encoder *e)
{
    e->id_written = false;
    e->failed = false;
    wk_error_clear(&e->error);
    e->piece_len = e->pend_len = e->pend_pos = 0;
}

static wk_result enc_fail(wk_eth_snappy_frame_encoder *e, wk_error *err)
{
    e->failed = true;
    if (err) *err = e->error;
    return WK_ERROR;
}

static wk_result enc_step(wk_eth_snappy_frame_encoder *e, wk_in *in, wk_out *out, bool flush,
                          wk_error *err)
{
    if (e->failed) {
        if (err) *err = e->error;
        return WK_ERROR;
    }
    for (;;) {
        if (e->pend_pos < e->pend_len) {
            size_t room = out->size - out->pos, left = e->pend_len - e->pend_pos;
            size_t k = room < left ? room : left;
            if (k) memcpy(out->dst + out->pos, e->chunk + e->pend_pos, k);
            out->pos += k;
            e->pend_pos += (uint32_t)k;
            if (e->pend_pos < e->pend_len) return WK_NEED_OUTPUT;
        }
        e->pend_pos = e->pend_len = 0;
        size_t avail = in ? in->size - in->pos : 0;
        if (e->piece_len == 0 && avail > 0 && (avail >= WK_ETH_SNAPPY_FRAME_MAX_DATA || flush) &&
            out->dst) {
            /* Fast path: a whole piece from the input into the output, compressed through the
             * (empty) chunk buffer; room for the largest chunk of it is enough. */
            size_t n = avail < WK_ETH_SNAPPY_FRAME_MAX_DATA ? avail : WK_ETH_SNAPPY_FRAME_MAX_DATA;
            size_t need = (e->id_written ? 0 : WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN) + 8 + n;
            if (out->size - out->pos >= need) {
                size_t w = 0;
                if (put_chunk(in->src + in->pos, n, out->dst + out->pos, !e->id_written, e->chunk,
                              &w, &e->error) != WK_OK)
                    return enc_fail(e, err);
                e->id_written = true;
                in->pos += n;
                out->pos += w;
                continue;
            }
        }
        if (avail > 0) {
            size_t k = WK_ETH_SNAPPY_FRAME_MAX_DATA - e->piece_len;
            if (k > avail) k = avail;
            memcpy(e->piece + e->piece_len, in->src + in->pos, k);
            in->pos += k;
            e->piece_len += (uint32_t)k;
            avail -= k;
        }
        if (e->piece_len == WK_ETH_SNAPPY_FRAME_MAX_DATA || (flush && avail == 0 && e->piece_len > 0)) {
            size_t w = 0;
            if (put_chunk(e->piece, e->piece_len, e->chunk, !e->id_written, NULL, &w, &e->error) !=
                WK_OK)
                return enc_fail(e, err);
            e->id_written = true;
            e->piece_len = 0;
            e->pend_len = (uint32_t)w;
            continue;
        }
        return flush ? WK_DONE : WK_NEED_INPUT;
    }
}

wk_result wk_eth_snappy_frame_encode(wk_eth_snappy_frame_encoder *e, wk_in *in, wk_out *out,
                                     wk_error *err)
{
    return enc_step(e, in, out, false, err);
}

wk_result wk_eth_snappy_frame_encoder_flush(wk_eth_snappy_frame_encoder *e, wk_in *in, wk_out *out,
                                            wk_error *err)
{
    return enc_step(e, in, out, true, err);
}

wk_result wk_eth_snappy_frame_encoder_finish(wk_eth_snappy_frame_encoder *e, const wk_in *rest,
                                             wk_error *err)
{
    if (e->failed) {
        if (err) *err = e->error;
        return WK_ERROR;
    }
    size_t unread = rest ? rest->size - rest->pos : 0;
    if (unread || e->piece_len || e->pend_pos < e->pend_len) {
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET,
                     "%zu input bytes unread, %u buffered, %u encoded bytes not yet written: "
                     "flush until WK_DONE first",
                     unread, (unsigned)e->piece_len, (unsigned)(e->pend_len - e->pend_pos));
        return WK_ERROR;
    }
    return WK_DONE;
}

uint64_t wk_eth_snappy_frame_max_size(uint64_t n)
{
    if (n == 0) return 0;
    uint64_t pieces = n / WK_ETH_SNAPPY_FRAME_MAX_DATA + (n % WK_ETH_SNAPPY_FRAME_MAX_DATA != 0);
    return WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN + n + 8 * pieces;
}

/* put_chunk through a stack scratch for libsnappy's worst case (encode_all has no object; the
 * caller's room is not scratch). Out of line: one 75 KiB frame per piece, not in the caller. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static wk_code
put_chunk_scratch(const uint8_t *src, size_t n, uint8_t *dst, bool with_id, size_t *written,
                  wk_error *err)
{
    uint8_t scratch[BLOCK_MAX_COMPRESSED];
    return put_chunk(src, n, dst, with_id, scratch, written, err);
}

wk_result wk_eth_snappy_frame_encode_all(const uint8_t *src, size_t n, wk_out *out, wk_error *err)
{
    if (!out || out->pos > out->size || (n && !src)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, n && !src ? "NULL input" : "no output view");
        return WK_ERROR;
    }
    size_t dst_cap = out->size - out->pos;
    if (dst_cap < wk_eth_snappy_frame_max_size(n)) return WK_NEED_OUTPUT;
    uint8_t *dst = out->dst ? out->dst + out->pos : NULL;
    size_t used = 0;
    for (size_t off = 0; off < n;) {
        size_t m = n - off < WK_ETH_SNAPPY_FRAME_MAX_DATA ? n - off : WK_ETH_SNAPPY_FRAME_MAX_DATA;
        size_t w = 0;
        if (put_chunk_scratch(src + off, m, dst + used, off == 0, &w, err) != WK_OK)
            return WK_ERROR;
        used += w;
        off += m;
    }
    out->pos += used;
    return WK_DONE;
}
