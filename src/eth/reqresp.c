/* Consensus req/resp ssz_snappy (spec 6): the length-prefix varint, a streaming reader for one
 * request or one response stream (result byte, context bytes, varint prefix, framed payload read
 * through one Snappy framing decoder under the max_compressed_len(n) budget) and the one-shot
 * chunk encoder. No I/O; the reader's memory is its framing decoder plus a few bytes of state,
 * allocated at create and independent of the declared lengths.
 *
 * Events (wk_eth_rr_reader_read returns WK_EVENT at each one, before consuming anything further;
 * wk_eth_rr_reader_event says which):
 *   request:  CHUNK_BEGIN (at the start, before the prefix), END (payload complete). With
 *             options.empty_request: END at the start, no chunk.
 *   response: per chunk CHUNK_BEGIN (after result and context bytes), CHUNK_END (payload
 *             complete). EOF is declared with wk_eth_rr_reader_finish.
 * Each event is reported once; afterwards a call without input reports NEED_INPUT. */
#include <wirekit/eth.h>
#include <string.h>

/* max_compressed_len(n) = 32 + n + n / 6 (spec 6.4): bytes allowed after the prefix. */
static uint64_t rr_budget(uint64_t n) { return 32 + n + n / 6; }

/* ---------------------------------------------------------------------------------------------
 * Reader
 * ------------------------------------------------------------------------------------------- */
enum rr_state {
    RS_EMPTY_START, /* empty request: END not yet reported */
    RS_RESULT,      /* response: waiting for a result byte (a chunk boundary) */
    RS_CONTEXT,     /* response: reading the context bytes of a success chunk */
    RS_BEGIN,       /* CHUNK_BEGIN to report */
    RS_VARINT,      /* reading the length prefix */
    RS_PAYLOAD,     /* feeding the framed payload to the decoder */
    RS_CHUNK_DONE,  /* payload complete: CHUNK_END (response) or END (request) to report */
    RS_CLOSED,      /* nothing may follow: any byte is SSZSNAPPY_ERR_TRAILING */
    RS_FAILED       /* sticky error in r->error */
};

struct wk_eth_rr_reader {
    wk_allocator alloc;
    wk_eth_rr_reader_params opt;
    wk_eth_snappy_frame_decoder *dec;
    enum rr_state state;
    uint64_t consumed;      /* stream bytes consumed */
    uint64_t chunks_done;   /* completed chunks */
    wk_eth_rr_chunk chunk;      /* current (or last) chunk */
    bool error_chunk;       /* current chunk is read as an ErrorMessage */
    wk_eth_ssz_bounds bounds;   /* bounds of the current chunk */
    uint8_t ctx_have;       /* context bytes read */
    uint8_t vi_len;         /* varint bytes read */
    uint8_t vi_buf[WK_ETH_UVARINT_MAX_LEN]; /* and the bytes themselves */
    uint64_t vi_value;
    uint64_t prefix_start;  /* stream offset of the varint's first byte */
    uint64_t payload_start; /* stream offset of the first framed byte */
    uint64_t budget;        /* max_compressed_len(n) */
    uint64_t used;          /* framed bytes given to the decoder */
    wk_eth_rr_event event;  /* of the last WK_EVENT (NONE after any other answer) */
    wk_error error;
};

/* Records a sticky error in r and *err; returns WK_ERROR. */
static wk_result rr_fail(wk_eth_rr_reader *r, wk_error *err, wk_code code, uint64_t offset,
                           const char *msg)
{
    wk_error_set(&r->error, code, offset, "%s", msg);
    r->state = RS_FAILED;
    if (err) *err = r->error;
    return WK_ERROR;
}

/* rr_fail for the helpers that return success as a bool: always false. */
static bool rr_failed(wk_eth_rr_reader *r, wk_error *err, wk_code code, uint64_t offset, const char *msg)
{
    rr_fail(r, err, code, offset, msg);
    return false;
}

/* Starts a chunk whose first byte is at the current offset. */
static void rr_chunk_start(wk_eth_rr_reader *r)
{
    memset(&r->chunk, 0, sizeof r->chunk);
    r->chunk.index = r->chunks_done;
    r->chunk.start_offset = r->consumed;
    r->error_chunk = false;
    r->bounds = r->opt.bounds;
    r->ctx_have = 0;
    r->vi_len = 0;
    r->vi_value = 0;
}

wk_eth_rr_reader *wk_eth_rr_reader_create(const wk_eth_rr_reader_params *params, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_eth_rr_reader *r =
        wk_allocator_zalloc(&a, sizeof *r, "req/resp reader allocation failed", err);
    if (!r) return NULL;
    r->alloc = a;
    if (params) r->opt = *params;
    r->opt.allocator = NULL; /* the caller's pointer is not kept: r->alloc is the copy */
    wk_eth_snappy_frame_params dp = {&r->alloc};
    r->dec = wk_eth_snappy_frame_decoder_create(&dp, err);
    if (!r->dec) {
        a.free(a.opaque, r);
        return NULL;
    }
    rr_chunk_start(r);
    if (r->opt.request)
        r->state = r->opt.empty_request ? RS_EMPTY_START : RS_BEGIN;
    else
        r->state = RS_RESULT;
    return r;
}

void wk_eth_rr_reader_destroy(wk_eth_rr_reader *r)
{
    if (!r) return;
    wk_eth_snappy_frame_decoder_destroy(r->dec);
    wk_allocator a = r->alloc;
    a.free(a.opaque, r);
}

void wk_eth_rr_reader_set_bounds(wk_eth_rr_reader *r, const wk_eth_ssz_bounds *bounds)
{
    /* Only between CHUNK_BEGIN and the first prefix byte, and never for error chunks. */
    if (r->state != RS_VARINT || r->vi_len != 0 || r->error_chunk) return;
    if (bounds)
        r->bounds = *bounds;
    else
        r->bounds = r->opt.bounds;
}

const wk_eth_rr_chunk *wk_eth_rr_reader_chunk(const wk_eth_rr_reader *r) { return &r->chunk; }

uint64_t wk_eth_rr_reader_consumed(const wk_eth_rr_reader *r) { return r->consumed; }

/* The prefix is complete: checks the bounds, then prepares the payload. False on failure. */
static bool rr_prefix_done(wk_eth_rr_reader *r, wk_error *err)
{
    uint64_t n = r->vi_value;
    r->chunk.length_known = true;
    r->chunk.length = n;
    if (r->error_chunk) {
        if (n > WK_ETH_SSZ_ERRMSG_MAX)
            return rr_failed(r, err, WK_ERR_RESP_ERRMSG_TOO_LONG, r->prefix_start,
                             "error message length above 256");
    } else {
        uint64_t max = r->bounds.max_len;
        if (max == 0 || max > WK_ETH_SSZ_MAX_PAYLOAD_SIZE) max = WK_ETH_SSZ_MAX_PAYLOAD_SIZE;
        if (n < r->bounds.min_len || n > max) {
            wk_error_set(&r->error, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, r->prefix_start,
                         "declared length %llu outside [%llu, %llu]", (unsigned long long)n,
                         (unsigned long long)r->bounds.min_len, (unsigned long long)max);
            r->state = RS_FAILED;
            if (err) *err = r->error;
            return false;
        }
    }
    r->payload_start = r->consumed;
    if (n == 0) {
        r->state = RS_CHUNK_DONE; /* complete right after the prefix: no frames */
        return true;
    }
    r->budget = rr_budget(n);
    r->used = 0;
    wk_eth_snappy_frame_decoder_reset(r->dec);
    wk_eth_snappy_frame_decoder_set_output_limit(r->dec, n);
    r->state = RS_PAYLOAD;
    return true;
}

/* Reads one prefix byte: the bytes so far collect in vi_buf (at most 10) and are read through
 * the common cursor's LEB128 (minimal form unless options.allow_nonminimal; spec 6.3). False on
 * failure. */
static bool rr_varint_byte(wk_eth_rr_reader *r, uint8_t b, wk_error *err)
{
    uint64_t at = r->consumed; /* offset of b */
    if (r->vi_len == 0) r->prefix_start = at;
    r->vi_buf[r->vi_len++] = b;
    r->consumed++;
    wk_cursor c = wk_cursor_make(r->vi_buf, r->vi_len);
    wk_varint_form form = r->opt.allow_nonminimal ? WK_VARINT_ANY_FORM : WK_VARINT_MINIMAL;
    switch (wk_cursor_leb128(&c, WK_ETH_UVARINT_MAX_LEN, form, &r->vi_value, NULL)) {
    case WK_CURSOR_OK:
        return rr_prefix_done(r, err);
    case WK_CURSOR_TRUNCATED:
        return true; /* more prefix bytes to come (never more than 10: judged at the 10th) */
    case WK_CURSOR_OVERFLOW:
        return rr_failed(r, err, WK_ERR_SSZSNAPPY_VARINT_OVERFLOW, at, "length prefix above 2^64-1");
    case WK_CURSOR_TOO_LONG:
        return rr_failed(r, err, WK_ERR_SSZSNAPPY_VARINT_TOO_LONG, at,
                         "length prefix longer than 10 bytes");
    case WK_CURSOR_NONMINIMAL:
    default:
        return rr_failed(r, err, WK_ERR_SSZSNAPPY_VARINT_NONMINIMAL, at,
                         "length prefix not minimally encoded");
    }
}

/* Maps a framing decoder error (offsets relative to the payload) to the stream. */
static wk_result rr_fail_decoder(wk_eth_rr_reader *r, wk_error *err, const wk_error *de)
{
    r->error = *de;
    if (r->error.has_offset) r->error.offset += r->payload_start;
    if (r->error.code == WK_ERR_FRAME_TRUNCATED) {
        /* the framing's truncation is the stream's early EOF: a new code, set afresh (the
         * category from the table), the decoder's message and offset kept */
        wk_error e = r->error;
        wk_error_set(&r->error, WK_ERR_SSZSNAPPY_EARLY_EOF, e.has_offset ? e.offset : WK_NO_OFFSET,
                     "%s", e.msg);
    }
    r->state = RS_FAILED;
    if (err) *err = r->error;
    return WK_ERROR;
}

/* Feeds framed bytes within the budget. Returns NEED_INPUT / NEED_OUTPUT to report, ERROR, or
 * DONE (internal: payload complete, state set to RS_CHUNK_DONE). */
static wk_result rr_payload(wk_eth_rr_reader *r, wk_in *in, wk_out *out, wk_error *err)
{
    size_t avail = in->size - in->pos;
    uint64_t left = r->budget - r->used;
    size_t give = avail < left ? avail : (size_t)left;
    wk_in sub = {in->src + in->pos, give, 0};
    wk_error de;
    wk_error_clear(&de);
    wk_result res = wk_eth_snappy_frame_decode(r->dec, &sub, out, &de);
    in->pos += sub.pos;
    r->consumed += sub.pos;
    r->used += sub.pos;
    r->chunk.produced = wk_eth_snappy_frame_decoder_produced(r->dec);
    switch (res) {
    case WK_DONE:
        r->state = RS_CHUNK_DONE;
        return WK_DONE;
    case WK_NEED_OUTPUT:
        return WK_NEED_OUTPUT;
    case WK_NEED_INPUT:
        if (r->used == r->budget && in->pos < in->size)
            return rr_fail(r, err, WK_ERR_SSZSNAPPY_BUDGET, r->payload_start + r->budget,
                           "payload not complete within max_compressed_len(n) bytes");
        return WK_NEED_INPUT;
    case WK_ERROR:
    default:
        return rr_fail_decoder(r, err, &de);
    }
}

wk_eth_rr_event wk_eth_rr_reader_event(const wk_eth_rr_reader *r) { return r->event; }

/* Reports an event: r->event says which until the next call. */
static wk_result rr_event(wk_eth_rr_reader *r, wk_eth_rr_event ev)
{
    r->event = ev;
    return WK_EVENT;
}

wk_result wk_eth_rr_reader_read(wk_eth_rr_reader *r, wk_in *in, wk_out *out, wk_error *err)
{
    const uint8_t none_in[1] = {0};
    uint8_t none_out[1];
    wk_in no_in = {none_in, 0, 0};
    wk_out no_out = {none_out, 0, 0};
    if (!in) in = &no_in; /* no input / no output room: treated as empty views */
    if (!out) out = &no_out;
    r->event = WK_ETH_RR_EVENT_NONE;
    for (;;) {
        switch (r->state) {
        case RS_FAILED:
            if (err) *err = r->error;
            return WK_ERROR;

        case RS_EMPTY_START:
            r->state = RS_CLOSED;
            return rr_event(r, WK_ETH_RR_END);

        case RS_CLOSED:
            if (in->pos < in->size)
                return rr_fail(r, err, WK_ERR_SSZSNAPPY_TRAILING, r->consumed,
                               r->opt.request ? "bytes after the request"
                                              : "bytes after the last allowed chunk");
            return WK_NEED_INPUT;

        case RS_RESULT: {
            if (in->pos == in->size) return WK_NEED_INPUT;
            rr_chunk_start(r);
            uint8_t b = in->src[in->pos++];
            r->consumed++;
            r->chunk.result = b;
            r->error_chunk = b != WK_ETH_RR_SUCCESS;
            r->chunk.reserved_result = b >= 4 && b <= 127;
            if (!r->error_chunk && r->opt.context_bytes) {
                r->chunk.has_context = true;
                r->state = RS_CONTEXT;
            } else {
                r->state = RS_BEGIN;
            }
            break;
        }

        case RS_CONTEXT:
            while (r->ctx_have < WK_ETH_RR_CONTEXT_LEN && in->pos < in->size) {
                r->chunk.context[r->ctx_have++] = in->src[in->pos++];
                r->consumed++;
            }
            if (r->ctx_have < WK_ETH_RR_CONTEXT_LEN) return WK_NEED_INPUT;
            r->state = RS_BEGIN;
            break;

        case RS_BEGIN:
            r->state = RS_VARINT;
            return rr_event(r, WK_ETH_RR_CHUNK_BEGIN);

        case RS_VARINT:
            if (in->pos == in->size) return WK_NEED_INPUT;
            if (!rr_varint_byte(r, in->src[in->pos++], err)) return WK_ERROR;
            break;

        case RS_PAYLOAD: {
            wk_result res = rr_payload(r, in, out, err);
            if (res != WK_DONE) return res;
            break;
        }

        case RS_CHUNK_DONE:
            r->chunks_done++;
            if (r->opt.request) {
                r->state = RS_CLOSED;
                return rr_event(r, WK_ETH_RR_END);
            }
            /* An error chunk is the last (the responder closes after it); so is the last
             * allowed chunk. */
            if (r->error_chunk || (r->opt.max_chunks && r->chunks_done >= r->opt.max_chunks))
                r->state = RS_CLOSED;
            else
                r->state = RS_RESULT;
            return rr_event(r, WK_ETH_RR_CHUNK_END);
        }
    }
}

wk_result wk_eth_rr_reader_finish(wk_eth_rr_reader *r, const wk_in *rest, wk_error *err)
{
    size_t unread = rest ? rest->size - rest->pos : 0;
    switch (r->state) {
    case RS_FAILED:
        if (err) *err = r->error;
        return WK_ERROR;
    case RS_CLOSED:
        if (unread) /* what the step would say of these bytes */
            return rr_fail(r, err, WK_ERR_SSZSNAPPY_TRAILING, r->consumed,
                           r->opt.request ? "bytes after the request"
                                          : "bytes after the last allowed chunk");
        return WK_DONE;
    case RS_EMPTY_START:
    case RS_RESULT:
    case RS_CHUNK_DONE: /* payload complete, its event not yet collected */
        if (unread) {
            wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET,
                         "%zu bytes not yet read: read until WK_NEED_INPUT first", unread);
            return WK_ERROR;
        }
        return WK_DONE;
    case RS_PAYLOAD: {
        /* Decoded bytes the caller has not read yet are its business, not the peer's: reported
         * (not sticky) so that it can drain them and finish again. */
        wk_error de;
        wk_error_clear(&de);
        if (unread || (wk_eth_snappy_frame_decoder_finish(r->dec, NULL, &de) == WK_ERROR &&
                       de.code == WK_ERR_STATE)) {
            wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET,
                         "payload bytes not yet read: read until NEED_INPUT first");
            return WK_ERROR;
        }
        return rr_fail(r, err, WK_ERR_SSZSNAPPY_EARLY_EOF, r->consumed,
                       "stream ended before the declared length was decoded");
    }
    case RS_CONTEXT:
    case RS_BEGIN:
    case RS_VARINT:
    default:
        if (unread) {
            wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET,
                         "%zu bytes not yet read: read until WK_NEED_INPUT first", unread);
            return WK_ERROR;
        }
        return rr_fail(r, err, WK_ERR_SSZSNAPPY_EARLY_EOF, r->consumed,
                       "stream ended inside a chunk");
    }
}

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
uint64_t wk_eth_rr_chunk_max_size(uint64_t n)
{
    return 1 + WK_ETH_RR_CONTEXT_LEN + WK_ETH_UVARINT_MAX_LEN + wk_eth_snappy_frame_max_size(n);
}

/* A refusal of the encoder (the code's own category, from the table). */
static wk_result rr_enc_fail(wk_error *err, wk_code code, const char *msg)
{
    wk_error_set(err, code, WK_NO_OFFSET, "%s", msg);
    return WK_ERROR;
}

wk_result wk_eth_rr_encode(int result, const uint8_t *context, const uint8_t *ssz, size_t n,
                           wk_out *out, wk_error *err)
{
    if (result > 255) return rr_enc_fail(err, WK_ERR_ARG, "result code above 255");
    if (n && !ssz) return rr_enc_fail(err, WK_ERR_ARG, "NULL payload");
    if (!out || out->pos > out->size) return rr_enc_fail(err, WK_ERR_ARG, "no output view");
    if (result > 0 && n > WK_ETH_SSZ_ERRMSG_MAX)
        return rr_enc_fail(err, WK_ERR_RESP_ERRMSG_TOO_LONG, "error message longer than 256 bytes");
    if (result <= 0 && n > WK_ETH_SSZ_MAX_PAYLOAD_SIZE)
        return rr_enc_fail(err, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS,
                           "payload longer than MAX_PAYLOAD_SIZE");
    size_t dst_cap = out->size - out->pos;
    if (dst_cap < wk_eth_rr_chunk_max_size(n)) return WK_NEED_OUTPUT;
    uint8_t *dst = out->dst + out->pos;
    size_t pos = 0;
    if (result >= 0) {
        dst[pos++] = (uint8_t)result;
        if (result == WK_ETH_RR_SUCCESS && context) {
            memcpy(dst + pos, context, WK_ETH_RR_CONTEXT_LEN);
            pos += WK_ETH_RR_CONTEXT_LEN;
        }
    }
    pos += wk_leb128_put(dst + pos, n);
    if (n) {
        wk_out fo = {dst + pos, dst_cap - pos, 0};
        if (wk_eth_snappy_frame_encode_all(ssz, n, &fo, err) != WK_DONE) return WK_ERROR;
        pos += fo.pos;
    }
    out->pos += pos;
    return WK_DONE;
}
