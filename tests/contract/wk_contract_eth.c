/* The contract harness's adapter for eth's streaming objects: see wk_contract_eth.h. */
#include "wk_contract_eth.h"

#include <stdlib.h>
#include <string.h>

static bool sink_put(wk_contract_eth_sink *s, const uint8_t *p, size_t n)
{
    if (!s || !n) return true;
    if (s->n + n > s->cap) {
        size_t cap = (s->n + n) * 2 + 64;
        uint8_t *q = realloc(s->p, cap);
        if (!q) return false;
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->n, p, n);
    s->n += n;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Framing decoder
 * ------------------------------------------------------------------------------------------- */
void wk_contract_eth_frame_setup(wk_contract_eth_frame *f, const wk_allocator *allocator)
{
    memset(f, 0, sizeof *f);
    f->allocator = allocator;
    f->output_limit = UINT64_MAX;
}

void wk_contract_eth_frame_cleanup(wk_contract_eth_frame *f)
{
    wk_eth_snappy_frame_decoder_destroy(f->d);
    f->d = NULL;
}

static bool f_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_eth_frame *f = obj;
    if (f->sink) f->sink->n = 0;
    if (f->keep_settings) {
        wk_eth_snappy_frame_decoder_reset(f->d);
        return f->d && wk_eth_snappy_frame_decoder_consumed(f->d) == 0;
    }
    if (!f->d) {
        wk_eth_snappy_frame_params p = {f->allocator};
        f->d = wk_eth_snappy_frame_decoder_create(&p, NULL);
        if (!f->d) return false;
    }
    wk_eth_snappy_frame_decoder_reset(f->d);
    wk_eth_snappy_frame_decoder_set_output_limit(f->d, f->output_limit);
    wk_eth_snappy_frame_decoder_set_max_skippable(
        f->d, f->has_max_skippable ? f->max_skippable : WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE);
    return wk_eth_snappy_frame_decoder_consumed(f->d) == 0 &&
           wk_eth_snappy_frame_decoder_produced(f->d) == 0;
}

/* Copies what a step produced (out->dst[p0..out->pos)) into the sink, when there is one. */
static void sink_step(wk_contract_eth_sink *sink, const wk_out *out, size_t p0)
{
    if (sink && out && out->pos > p0 && !sink_put(sink, out->dst + p0, out->pos - p0)) abort();
}

static wk_result f_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_contract_eth_frame *f = obj;
    size_t p0 = out ? out->pos : 0;
    wk_result r = wk_eth_snappy_frame_decode(f->d, in, out, err);
    sink_step(f->sink, out, p0);
    return r;
}

/* eth.h: a chunk may be decoded in place before its CRC-32C is checked, so a call that returns
 * WK_ERROR may leave bytes past out->pos (the framing decoder, and the req/resp reader through
 * it). */
static unsigned f_scratch(void *obj)
{
    (void)obj;
    return WK_CONTRACT_SCRATCH_ON_ERROR;
}

static wk_result f_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_eth_snappy_frame_decoder_finish(((wk_contract_eth_frame *)obj)->d, rest, err);
}

static bool f_end(wk_contract *c, void *obj)
{
    wk_contract_eth_frame *f = obj;
    uint64_t consumed = wk_eth_snappy_frame_decoder_consumed(f->d);
    uint64_t produced = wk_eth_snappy_frame_decoder_produced(f->d);
    if (consumed != c->oc.consumed || produced != c->oc.produced)
        return wk_contract_fail(c, "consumed/produced %llu/%llu, the harness saw %llu/%llu",
                                (unsigned long long)consumed, (unsigned long long)produced,
                                (unsigned long long)c->oc.consumed,
                                (unsigned long long)c->oc.produced);
    if (c->oc.done_by_step && produced != f->output_limit)
        return wk_contract_fail(c, "WK_DONE at %llu output bytes, the limit is %llu",
                                (unsigned long long)produced, (unsigned long long)f->output_limit);
    if (c->oc.verdict == WK_ERROR) {
        wk_code k = c->oc.error.code;
        bool ok = (k >= WK_ERR_FRAME_NO_STREAM_ID && k <= WK_ERR_FRAME_TRUNCATED) ||
                  (k >= WK_ERR_SNAPPY_TRUNCATED && k <= WK_ERR_SNAPPY_LENGTH_MISMATCH) ||
                  (k == WK_ERR_SSZSNAPPY_EXCESS_DATA && f->output_limit != UINT64_MAX);
        if (!ok || !c->oc.error.has_offset || c->oc.error.offset > c->size)
            return wk_contract_fail(c, "error %s at %llu: not a framing error inside the input",
                                    wk_error_name(k), (unsigned long long)c->oc.error.offset);
    }
    return true;
}

const wk_contract_ops wk_contract_eth_frame_ops = {"wk_eth_snappy_frame_decoder", f_reset, NULL,
                                                  f_step, f_finish, NULL, f_end, true, 0,
                                                  f_scratch};

/* ---------------------------------------------------------------------------------------------
 * Framing encoder
 * ------------------------------------------------------------------------------------------- */
void wk_contract_eth_frame_enc_setup(wk_contract_eth_frame_enc *f, const wk_allocator *allocator)
{
    memset(f, 0, sizeof *f);
    f->allocator = allocator;
}

void wk_contract_eth_frame_enc_cleanup(wk_contract_eth_frame_enc *f)
{
    if (!f->keep_encoder) wk_eth_snappy_frame_encoder_destroy(f->e);
    f->e = NULL;
}

static bool fe_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_eth_frame_enc *f = obj;
    if (f->sink) f->sink->n = 0;
    f->consumed = f->produced = 0;
    f->encode_done = false;
    f->next_flush = f->flushed = 0;
    if (f->nflush > WK_CONTRACT_ETH_MAX_FLUSH || (f->check && !f->sink)) return false;
    if (!f->e && !f->keep_encoder) {
        wk_eth_snappy_frame_params p = {f->allocator};
        f->e = wk_eth_snappy_frame_encoder_create(&p, NULL);
    }
    if (!f->e) return false;
    wk_eth_snappy_frame_encoder_reset(f->e);
    return true;
}

/* The step: wk_eth_snappy_frame_encode, up to the next flush point, where it flushes instead (and
 * goes on with the rest of the push once the flush is done). */
static wk_result fe_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_contract_eth_frame_enc *f = obj;
    for (;;) {
        size_t left = in->size - in->pos, take = left;
        bool flush = false;
        if (f->next_flush < f->nflush && f->flush_at[f->next_flush] <= f->consumed + left) {
            uint64_t at = f->flush_at[f->next_flush];
            take = at > f->consumed ? (size_t)(at - f->consumed) : 0;
            flush = true;
        }
        wk_in sub = {in->src, in->pos + take, in->pos};
        size_t p0 = out ? out->pos : 0;
        wk_result r = flush ? wk_eth_snappy_frame_encoder_flush(f->e, &sub, out, err)
                            : wk_eth_snappy_frame_encode(f->e, &sub, out, err);
        sink_step(f->sink, out, p0);
        f->produced += out ? out->pos - p0 : 0;
        f->consumed += sub.pos - in->pos;
        in->pos = sub.pos;
        if (!flush && r == WK_DONE) f->encode_done = true; /* the step has no end of its own */
        if (!flush || r != WK_DONE) return r;
        f->flush_len[f->next_flush] = (size_t)f->produced;
        f->next_flush++;
        f->flushed++;
        if (in->pos == in->size) return WK_NEED_INPUT;
        /* flush points at the same offset: one flush covers them */
        while (f->next_flush < f->nflush && f->flush_at[f->next_flush] <= f->consumed) {
            f->flush_len[f->next_flush] = f->flush_len[f->next_flush - 1];
            f->next_flush++;
        }
    }
}

wk_result wk_contract_eth_frame_enc_flush(void *obj, wk_out *out, wk_error *err)
{
    wk_contract_eth_frame_enc *f = obj;
    size_t p0 = out ? out->pos : 0;
    wk_result r = wk_eth_snappy_frame_encoder_flush(f->e, NULL, out, err);
    sink_step(f->sink, out, p0);
    f->produced += out ? out->pos - p0 : 0;
    return r;
}

static wk_result fe_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_eth_snappy_frame_encoder_finish(((wk_contract_eth_frame_enc *)obj)->e, rest, err);
}

/* The stream in the sink decodes to the input: after each flush point's bytes, exactly the input
 * up to it. */
static bool fe_decode_check(wk_contract *c, wk_contract_eth_frame_enc *f)
{
    wk_eth_snappy_frame_decoder *d = f->check;
    wk_eth_snappy_frame_decoder_reset(d);
    wk_eth_snappy_frame_decoder_set_output_limit(d, UINT64_MAX);
    wk_eth_snappy_frame_decoder_set_max_skippable(d, WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE);
    static uint8_t buf[WK_ETH_SNAPPY_FRAME_MAX_DATA];
    uint64_t decoded = 0;
    size_t fed = 0;
    wk_error err;
    for (size_t k = 0; k <= f->next_flush; k++) {
        bool last = k == f->next_flush;
        size_t upto = last ? f->sink->n : f->flush_len[k];
        uint64_t want = last ? c->size : f->flush_at[k];
        wk_in in = {f->sink->p, upto, fed};
        wk_result r;
        do {
            wk_out o = {buf, sizeof buf, 0};
            r = wk_eth_snappy_frame_decode(d, &in, &o, &err);
            if (o.pos > c->size - decoded || memcmp(buf, c->data + decoded, o.pos) != 0)
                return wk_contract_fail(c, "the stream decodes to other bytes at %llu",
                                        (unsigned long long)decoded);
            decoded += o.pos;
        } while (r == WK_NEED_OUTPUT);
        if (r != WK_NEED_INPUT)
            return wk_contract_fail(c, "the stream does not decode: %s at %llu",
                                    wk_error_name(err.code), (unsigned long long)err.offset);
        if (decoded != want)
            return wk_contract_fail(c, "%llu bytes decoded at flush point %zu, want %llu",
                                    (unsigned long long)decoded, k, (unsigned long long)want);
        fed = upto;
    }
    if (wk_eth_snappy_frame_decoder_finish(d, NULL, &err) != WK_DONE)
        return wk_contract_fail(c, "the stream ends inside a chunk: %s", wk_error_name(err.code));
    return true;
}

static bool fe_end(wk_contract *c, void *obj)
{
    wk_contract_eth_frame_enc *f = obj;
    if (f->encode_done) return wk_contract_fail(c, "wk_eth_snappy_frame_encode returned WK_DONE");
    if (c->oc.verdict != WK_DONE)
        return wk_contract_fail(c, "the encoder refused its input: %s at %llu",
                                wk_error_name(c->oc.error.code),
                                (unsigned long long)c->oc.error.offset);
    if (c->oc.consumed != c->size || f->consumed != c->size)
        return wk_contract_fail(c, "%llu of %zu input bytes taken",
                                (unsigned long long)c->oc.consumed, c->size);
    if (f->flushed == 0 && c->oc.produced > wk_eth_snappy_frame_max_size(c->size))
        return wk_contract_fail(c, "%llu bytes written for %zu, above wk_eth_snappy_frame_max_size",
                                (unsigned long long)c->oc.produced, c->size);
    if (f->produced != c->oc.produced || (f->sink && f->sink->n != c->oc.produced))
        return wk_contract_fail(c, "the adapter saw %llu bytes written, the harness %llu",
                                (unsigned long long)f->produced,
                                (unsigned long long)c->oc.produced);
    for (size_t k = 0; k < f->next_flush; k++) wk_contract_record_u64(c, f->flush_len[k]);
    return f->check ? fe_decode_check(c, f) : true;
}

const wk_contract_ops wk_contract_eth_frame_enc_ops = {"wk_eth_snappy_frame_encoder", fe_reset,
                                                      NULL, fe_step, fe_finish, NULL, fe_end,
                                                      true, 0, NULL};

/* ---------------------------------------------------------------------------------------------
 * Req/resp reader
 * ------------------------------------------------------------------------------------------- */
enum { REC_BEGIN = 1, REC_CHUNK_END, REC_END };

void wk_contract_eth_rr_setup(wk_contract_eth_rr *m, const wk_eth_rr_reader_params *params)
{
    memset(m, 0, sizeof *m);
    if (params) m->params = *params;
}

void wk_contract_eth_rr_cleanup(wk_contract_eth_rr *m)
{
    if (!m->borrowed) wk_eth_rr_reader_destroy(m->r);
    m->r = NULL;
}

static bool r_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_eth_rr *m = obj;
    /* the reader has no reset: a fresh one per run (its memory is one framing decoder) */
    if (!m->borrowed) {
        wk_eth_rr_reader_destroy(m->r);
        m->r = wk_eth_rr_reader_create(&m->params, NULL);
    }
    m->in_chunk = false;
    m->chunks = m->next_start = m->produced0 = 0;
    if (m->sink) m->sink->n = 0;
    return m->r && wk_eth_rr_reader_consumed(m->r) == 0 &&
           wk_eth_rr_reader_event(m->r) == WK_ETH_RR_EVENT_NONE;
}

static wk_result r_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_contract_eth_rr *m = obj;
    size_t p0 = out ? out->pos : 0;
    wk_result r = wk_eth_rr_reader_read(m->r, in, out, err);
    sink_step(m->sink, out, p0);
    return r;
}

static wk_result r_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_eth_rr_reader_finish(((wk_contract_eth_rr *)obj)->r, rest, err);
}

static void rec_chunk(wk_contract *c, uint64_t kind, const wk_eth_rr_chunk *k)
{
    uint64_t f[] = {kind, k->index, k->result, k->reserved_result, k->has_context,
                    k->length_known, k->length_known ? k->length : 0, k->start_offset};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) wk_contract_record_u64(c, f[i]);
    if (k->has_context) wk_contract_record(c, k->context, WK_ETH_RR_CONTEXT_LEN);
}

static bool r_event(wk_contract *c, void *obj)
{
    wk_contract_eth_rr *m = obj;
    const wk_eth_rr_reader_params *o = &m->params;
    wk_eth_rr_event ev = wk_eth_rr_reader_event(m->r);
    const wk_eth_rr_chunk *k = wk_eth_rr_reader_chunk(m->r);
    if (wk_eth_rr_reader_consumed(m->r) != c->oc.consumed)
        return wk_contract_fail(c, "consumed() %llu, the harness saw %llu",
                                (unsigned long long)wk_eth_rr_reader_consumed(m->r),
                                (unsigned long long)c->oc.consumed);
    if (!m->in_chunk && c->oc.produced != m->produced0)
        return wk_contract_fail(c, "payload bytes outside a chunk");
    switch (ev) {
    case WK_ETH_RR_CHUNK_BEGIN:
        if (m->in_chunk) return wk_contract_fail(c, "CHUNK_BEGIN inside a chunk");
        if (k->index != m->chunks || k->start_offset != m->next_start || k->length_known)
            return wk_contract_fail(c, "chunk %llu begins as index %llu at %llu (want %llu)",
                                    (unsigned long long)m->chunks, (unsigned long long)k->index,
                                    (unsigned long long)k->start_offset,
                                    (unsigned long long)m->next_start);
        if (o->max_chunks && m->chunks >= o->max_chunks)
            return wk_contract_fail(c, "chunk %llu past max_chunks", (unsigned long long)m->chunks);
        if (k->reserved_result != (k->result >= 4 && k->result <= 127) ||
            k->has_context != (!o->request && o->context_bytes && k->result == 0))
            return wk_contract_fail(c, "chunk %llu: result %u flags", (unsigned long long)k->index,
                                    k->result);
        if (m->begin_bounds && (o->request || k->result == 0))
            wk_eth_rr_reader_set_bounds(m->r, m->begin_bounds);
        m->in_chunk = true;
        rec_chunk(c, REC_BEGIN, k);
        break;
    case WK_ETH_RR_CHUNK_END:
    case WK_ETH_RR_END:
        if (ev == WK_ETH_RR_END && !o->request)
            return wk_contract_fail(c, "END from a response reader");
        if (ev == WK_ETH_RR_CHUNK_END && o->request)
            return wk_contract_fail(c, "CHUNK_END from a request reader");
        if (ev == WK_ETH_RR_END && o->empty_request) {
            if (m->in_chunk || m->chunks) return wk_contract_fail(c, "END of an empty request late");
            rec_chunk(c, REC_END, k);
            break;
        }
        if (!m->in_chunk) return wk_contract_fail(c, "chunk end without a begin");
        if (!k->length_known || k->produced != k->length ||
            c->oc.produced - m->produced0 != k->length)
            return wk_contract_fail(c, "chunk %llu ends with %llu of %llu bytes (harness %llu)",
                                    (unsigned long long)k->index,
                                    (unsigned long long)k->produced,
                                    (unsigned long long)k->length,
                                    (unsigned long long)(c->oc.produced - m->produced0));
        bool err_chunk = !o->request && k->result != 0;
        uint64_t max = err_chunk ? WK_ETH_SSZ_ERRMSG_MAX : WK_ETH_SSZ_MAX_PAYLOAD_SIZE;
        if (k->length > max) return wk_contract_fail(c, "length %llu above %llu",
                                                     (unsigned long long)k->length,
                                                     (unsigned long long)max);
        m->in_chunk = false;
        m->chunks++;
        m->next_start = c->oc.consumed;
        m->produced0 = c->oc.produced;
        rec_chunk(c, ev == WK_ETH_RR_END ? REC_END : REC_CHUNK_END, k);
        break;
    default:
        return wk_contract_fail(c, "WK_EVENT with event %d", (int)ev);
    }
    return m->on_event ? m->on_event(c, m) : true;
}

static bool r_end(wk_contract *c, void *obj)
{
    wk_contract_eth_rr *m = obj;
    if (wk_eth_rr_reader_consumed(m->r) != c->oc.consumed)
        return wk_contract_fail(c, "consumed() %llu at the end, the harness saw %llu",
                                (unsigned long long)wk_eth_rr_reader_consumed(m->r),
                                (unsigned long long)c->oc.consumed);
    if (c->oc.verdict == WK_DONE) {
        if (m->in_chunk) return wk_contract_fail(c, "a clean end inside a chunk");
        wk_contract_record_u64(c, m->chunks);
    } else if (c->oc.verdict == WK_ERROR) {
        const wk_error *e = &c->oc.error;
        if (e->category != WK_CAT_PEER_PROTOCOL || !e->has_offset || e->offset > c->size)
            return wk_contract_fail(c, "error %s at %llu: not a peer error inside the input",
                                    wk_error_name(e->code), (unsigned long long)e->offset);
    }
    return m->on_end ? m->on_end(c, m) : true;
}

/* CHUNK_BEGIN of a request and the END of an empty request cover no input byte. */
const wk_contract_ops wk_contract_eth_rr_ops = {"wk_eth_rr_reader", r_reset, NULL, r_step,
                                               r_finish, r_event, r_end, true, 1, f_scratch};
