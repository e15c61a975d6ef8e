/* colloq: the streaming reader (docs/architecture.md, "The contract"): frames of one wire decoded
 * and checked from pushes of any size. A frame whole in the push is decoded in place (its
 * string/bytes values borrow the push); the start of a frame the push ends inside is copied into
 * the reader's buffer (at most one frame: the ceilings bound it) and completed from the next
 * pushes. */
#include "colloq_internal.h"

struct wk_colloq_reader {
    wk_allocator a;
    const wk_colloq_plan *plan;
    uint32_t sender;
    wk_colloq_decoder *dec;
    wk_colloq_session s;
    wk_colloq_frame f;
    uint8_t *buf; /* the start of the frame the last push ended inside */
    size_t blen, cap;
    uint64_t taken; /* input bytes consumed (buf included) */
    bool failed;
    wk_error error; /* the failure, offsets from the first byte ever pushed */
};

wk_colloq_reader *wk_colloq_reader_create(const wk_colloq_reader_params *params, wk_error *err)
{
    if (!params || !params->plan) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "reader params without a plan");
        return NULL;
    }
    const wk_colloq_plan *plan = params->plan;
    wk_allocator a = wk_allocator_or_default(params->allocator);
    if (params->sender != WK_COLLOQ_SENDER_TRANSCRIPT && params->sender >= plan->role_count) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "sender %u is not a role of the plan",
                     (unsigned)params->sender);
        return NULL;
    }
    if (params->session && params->session->plan != plan) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "reader session of another plan");
        return NULL;
    }
    wk_colloq_decoder_params dp = {plan, params->wire, params->allocator};
    wk_colloq_decoder *dec = wk_colloq_decoder_create(&dp, err);
    if (!dec) return NULL;
    wk_colloq_reader *r = colloq_zalloc(&a, sizeof *r);
    /* the longest frame the decoder waits for: header varints and the largest payload (binary),
     * or the longest line and its '\n' (JSON) */
    size_t cap = params->wire == WK_COLLOQ_WIRE_BINARY
                     ? 3 * WK_COLLOQ_VARINT_MAX_LEN + (size_t)plan->max_payload_max
                     : WK_COLLOQ_JSON_LINE_MAX(plan) + 1;
    uint8_t *buf = r ? colloq_alloc(&a, cap) : NULL;
    if (!buf) {
        colloq_free(&a, r);
        wk_colloq_decoder_destroy(dec);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory for a reader");
        return NULL;
    }
    r->a = a;
    r->plan = plan;
    r->sender = params->sender;
    r->dec = dec;
    r->buf = buf;
    r->cap = cap;
    if (params->session) r->s = *params->session;
    else wk_colloq_session_init(&r->s, plan);
    return r;
}

void wk_colloq_reader_destroy(wk_colloq_reader *r)
{
    if (!r) return;
    wk_allocator a = r->a;
    wk_colloq_decoder_destroy(r->dec);
    colloq_free(&a, r->buf);
    colloq_free(&a, r);
}

const wk_colloq_frame *wk_colloq_reader_frame_get(const wk_colloq_reader *r) { return &r->f; }
const wk_colloq_session *wk_colloq_reader_session_get(const wk_colloq_reader *r) { return &r->s; }
uint64_t wk_colloq_reader_consumed_get(const wk_colloq_reader *r) { return r->taken - r->blen; }

wk_code wk_colloq_reader_sender_set(wk_colloq_reader *r, uint32_t sender, wk_error *err)
{
    if (sender != WK_COLLOQ_SENDER_TRANSCRIPT && sender >= r->plan->role_count) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "sender %u is not a role of the plan",
                     (unsigned)sender);
        return WK_ERR_ARG;
    }
    r->sender = sender;
    return WK_OK;
}

/* Records the failure err carries (offsets from the frame's first byte, or none) with offsets from
 * the stream's first byte; it is reported again, unchanged, from then on. */
static wk_result reader_fail(wk_colloq_reader *r, wk_error *err)
{
    r->failed = true;
    r->error = r->s.failure ? r->s.error : *err;
    if (r->error.has_offset) r->error.offset += r->taken - r->blen;
    if (err) *err = r->error;
    return WK_ERROR;
}

wk_result wk_colloq_reader_read(wk_colloq_reader *r, wk_in *in, wk_out *out, wk_error *err)
{
    wk_error local;
    if (!err) err = &local;
    if (out) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "a colloq reader produces no output");
        return WK_ERROR;
    }
    if (r->failed) {
        *err = r->error;
        return WK_ERROR;
    }
    size_t avail = in->size - in->pos;
    if (r->blen == 0) { /* a frame whole in the push is read in place */
        wk_in v = *in;
        wk_result res = wk_colloq_session_step(&r->s, r->dec, &v, r->sender, &r->f, err);
        if (res == WK_DONE) {
            r->taken += v.pos - in->pos;
            in->pos = v.pos;
            return WK_EVENT;
        }
        if (res == WK_ERROR) return reader_fail(r, err);
        /* the push ends inside a frame: keep its start */
        if (avail) memcpy(r->buf, in->src + in->pos, avail);
        r->blen = avail;
        r->taken += avail;
        in->pos = in->size;
        return WK_NEED_INPUT;
    }
    /* complete the kept start from this push: take what fits, give back what follows the frame */
    size_t add = avail < r->cap - r->blen ? avail : r->cap - r->blen, old = r->blen;
    if (add) memcpy(r->buf + old, in->src + in->pos, add);
    wk_in v = {r->buf, old + add, 0};
    wk_result res = wk_colloq_session_step(&r->s, r->dec, &v, r->sender, &r->f, err);
    if (res == WK_ERROR) return reader_fail(r, err);
    if (res == WK_DONE) { /* the frame ends inside this push (v.pos > old) */
        size_t used = v.pos - old;
        r->blen = 0;
        r->taken += used;
        in->pos += used;
        return WK_EVENT;
    }
    r->blen = old + add;
    r->taken += add;
    in->pos += add;
    return WK_NEED_INPUT;
}

wk_result wk_colloq_reader_finish(wk_colloq_reader *r, const wk_in *rest, wk_error *err)
{
    if (r->failed) {
        if (err) *err = r->error;
        return WK_ERROR;
    }
    size_t more = rest && rest->pos < rest->size ? rest->size - rest->pos : 0;
    wk_in held = {r->buf, r->blen, 0};
    wk_result res = wk_colloq_session_finish(&r->s, r->blen ? &held : rest, err);
    if (res == WK_DONE) return WK_DONE;
    r->failed = true;
    r->error = r->s.error;
    if (!r->error.has_offset) { /* truncated / after-final: where the input ends */
        r->error.has_offset = true;
        r->error.offset = r->taken + more;
    }
    if (err) *err = r->error;
    return WK_ERROR;
}
