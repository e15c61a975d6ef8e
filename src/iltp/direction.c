/* The ILTP stack, one object per direction (Lace-060 over Lace-065):
 *   reader: raw preface -> the session's stream decoder -> item decoder
 *   writer: raw preface -> the session's stream encoder (flush per batch, end mark)
 * A preface is always raw. After an end mark only a raw preface or EOF may follow; a preface that
 * decodes out of a compressed stream is a PeerProtocol failure. Each fresh logical session gets
 * fresh encoder, decoder and dictionary state. */
#include "iltp_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DBUF 65536 /* decoded bytes waiting for the item decoder */


struct wk_iltp_reader {
    wk_allocator alloc;
    wk_iltp_stack_params params;
    wk_iltp_reader_phase phase;
    wk_iltp_encoding enc;
    wk_iltp_item_decoder *items;
    wk_iltp_decoder *stream;     /* for the current compressed session */
    wk_iltp_decoder *dec[3];     /* one per token, created on first use, reset per session */
    uint64_t consumed;           /* carrier bytes */
    uint64_t session_start;      /* carrier offset of the first byte after the preface */
    bool after_end;              /* the raw phase follows an end mark */
    wk_error failure;
    size_t dpos, dlen;
    uint8_t *dbuf;               /* DBUF bytes, made for the first compressed session */
    wk_iltp_item item;           /* the item of the last WK_EVENT that was an item */
    bool item_ready;
};

wk_iltp_reader *wk_iltp_reader_create(const wk_iltp_stack_params *params, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_reader *r = wk_allocator_zalloc(&a, sizeof *r, "reader allocation failed", err);
    if (!r) return NULL;
    r->alloc = a;
    if (params) r->params = *params;
    r->params.allocator = NULL; /* the copy in r->alloc is used */
    wk_iltp_item_decoder_params ip = {r->params.form, r->params.max_item, &r->alloc};
    r->items = wk_iltp_item_decoder_create(&ip, err);
    if (!r->items) {
        a.free(a.opaque, r);
        return NULL;
    }
    wk_iltp_item_decoder_expect_preface(r->items);
    return r;
}

void wk_iltp_reader_destroy(wk_iltp_reader *r)
{
    if (!r) return;
    wk_iltp_item_decoder_destroy(r->items);
    for (int i = 0; i < 3; i++) wk_iltp_decoder_destroy(r->dec[i]);
    if (r->dbuf) r->alloc.free(r->alloc.opaque, r->dbuf);
    r->alloc.free(r->alloc.opaque, r);
}

wk_iltp_reader_phase wk_iltp_reader_phase_get(const wk_iltp_reader *r) { return r->phase; }
wk_iltp_encoding wk_iltp_reader_encoding(const wk_iltp_reader *r) { return r->enc; }
uint64_t wk_iltp_reader_consumed(const wk_iltp_reader *r) { return r->consumed; }
void wk_iltp_reader_expect_operand(wk_iltp_reader *r) { wk_iltp_item_decoder_expect_operand(r->items); }
void wk_iltp_reader_stream_blobs(wk_iltp_reader *r, bool on) { wk_iltp_item_decoder_stream_blobs(r->items, on); }
const wk_iltp_blob_event *wk_iltp_reader_event(const wk_iltp_reader *r)
{
    return r->item_ready ? NULL : wk_iltp_item_decoder_event(r->items);
}
const wk_iltp_item *wk_iltp_reader_item(const wk_iltp_reader *r) { return r->item_ready ? &r->item : NULL; }
void wk_iltp_reader_limit(wk_iltp_reader *r, uint64_t limit) { wk_iltp_item_decoder_limit(r->items, limit); }

static wk_result rfail(wk_iltp_reader *r, wk_error *err, const wk_error *e)
{
    r->phase = WK_ILTP_READER_FAILED;
    r->failure = *e;
    if (err) *err = r->failure;
    return WK_ERROR;
}

static wk_result rfail_code(wk_iltp_reader *r, wk_error *err, wk_code code, uint64_t off, const char *what)
{
    wk_error e;
    wk_error_set(&e, code, off, "%s", what);
    return rfail(r, err, &e);
}

wk_code wk_iltp_reader_begin(wk_iltp_reader *r, wk_iltp_encoding enc, wk_error *err)
{
    if (r->phase != WK_ILTP_READER_PAUSED)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "begin is valid only right after a preface");
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the reader cannot decode this encoding");
    r->enc = enc;
    r->stream = NULL;
    if (enc != WK_ILTP_IDENTITY) {
        if (!r->dec[enc]) {
            wk_iltp_decoder_params dp = {&r->alloc, WK_ILTP_BACKEND_DEFAULT};
            r->dec[enc] = wk_iltp_decoder_create(enc, &dp, err);
            if (!r->dec[enc]) return err ? err->code : WK_ERR_NOMEM;
        } else if (wk_iltp_decoder_reset(r->dec[enc], err) != WK_OK) {
            return err ? err->code : WK_ERR_BACKEND;
        }
        r->stream = r->dec[enc];
        if (!r->dbuf) {
            r->dbuf = r->alloc.alloc(r->alloc.opaque, DBUF);
            if (!r->dbuf) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "decoded-bytes buffer");
        }
    }
    r->dpos = r->dlen = 0;
    wk_iltp_item_decoder_reset(r->items);
    wk_iltp_item_decoder_forbid_preface(r->items, enc != WK_ILTP_IDENTITY);
    r->session_start = r->consumed;
    r->after_end = false;
    r->phase = WK_ILTP_READER_SESSION;
    return WK_OK;
}

/* Items straight from carrier bytes: before a session, after an end mark, and under identity. */
static wk_result raw_items(wk_iltp_reader *r, wk_in *in, wk_iltp_item *item, wk_error *err)
{
    size_t before = in->pos;
    wk_error e;
    wk_result res = wk_iltp_item_decoder_step(r->items, in, item, &e);
    r->consumed += in->pos - before;
    if (res == WK_ERROR) {
        /* item offsets count from the session start (identity) or from the raw phase start */
        e.offset += r->session_start;
        if (r->phase != WK_ILTP_READER_SESSION && e.code == WK_ERR_ILTP_ITEM_LEAD) {
            wk_error_set(&e, r->after_end ? WK_ERR_ILTP_AFTER_END_MARK : WK_ERR_ILTP_PREFACE, e.offset, "%s",
                         r->after_end ? "bytes after the end mark do not begin a raw preface"
                                      : "the peer preface must come first");
        }
        return rfail(r, err, &e);
    }
    if (res == WK_DONE) {
        item->offset += r->session_start; /* carrier offset */
        if (item->kind == WK_ILTP_ITEM_PREFACE) r->phase = WK_ILTP_READER_PAUSED;
    }
    return res;
}

static wk_result compressed_items(wk_iltp_reader *r, wk_in *in, wk_iltp_item *item, wk_error *err)
{
    for (;;) {
        wk_in din = {r->dbuf, r->dlen, r->dpos};
        wk_error e;
        wk_result res = wk_iltp_item_decoder_step(r->items, &din, item, &e);
        r->dpos = din.pos;
        if (res == WK_ERROR) {
            if (e.code == WK_ERR_ILTP_PREFACE_ENCODED) return rfail(r, err, &e);
            char m[sizeof e.msg];
            snprintf(m, sizeof m, "%s", e.msg);
            snprintf(e.msg, sizeof e.msg, "%.80s (decoded %s stream offset)", m, wk_iltp_encoding_name(r->enc));
            return rfail(r, err, &e);
        }
        if (res == WK_DONE) {
            if (item->kind == WK_ILTP_ITEM_PREFACE)
                return rfail_code(r, err, WK_ERR_ILTP_PREFACE_ENCODED, item->offset,
                                  "a preface decoded out of a compressed stream (decoded offset)");
            return WK_DONE;
        }
        if (res == WK_EVENT) return WK_EVENT; /* a streamed Blob: slices borrow dbuf */
        /* the item decoder wants more decoded bytes */
        r->dpos = r->dlen = 0;
        wk_out out = {r->dbuf, DBUF, 0};
        size_t before = in->pos;
        res = wk_iltp_decoder_decode(r->stream, in, &out, &e);
        r->consumed += in->pos - before;
        r->dlen = out.pos;
        if (res == WK_ERROR) {
            e.offset += r->session_start;
            return rfail(r, err, &e);
        }
        if (out.pos == 0 && wk_iltp_decoder_ended(r->stream)) {
            /* end mark consumed and every decoded byte delivered: the raw phase decides */
            if (!wk_iltp_item_decoder_at_boundary(r->items))
                return rfail_code(r, err, WK_ERR_ILTP_TRUNCATED, r->consumed,
                                  "end mark inside an item: the stream is truncated");
            r->phase = WK_ILTP_READER_ENDED;
            r->after_end = true;
            r->session_start = r->consumed;
            wk_iltp_item_decoder_reset(r->items);
            wk_iltp_item_decoder_forbid_preface(r->items, false);
            wk_iltp_item_decoder_expect_preface(r->items);
            return raw_items(r, in, item, err);
        }
        if (out.pos == 0 && res == WK_NEED_INPUT) return WK_NEED_INPUT;
    }
}

static wk_result reader_step(wk_iltp_reader *r, wk_in *in, wk_error *err)
{
    switch (r->phase) {
    case WK_ILTP_READER_FAILED:
        if (err) *err = r->failure;
        return WK_ERROR;
    case WK_ILTP_READER_PAUSED:
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "call wk_iltp_reader_begin after a preface");
        return WK_ERROR;
    case WK_ILTP_READER_NO_SESSION:
    case WK_ILTP_READER_ENDED:
        return raw_items(r, in, &r->item, err);
    default:
        if (r->enc == WK_ILTP_IDENTITY) return raw_items(r, in, &r->item, err);
        return compressed_items(r, in, &r->item, err);
    }
}

wk_result wk_iltp_reader_read(wk_iltp_reader *r, wk_in *in, wk_out *out, wk_error *err)
{
    r->item_ready = false;
    if (out) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the reader produces no bytes: pass out = NULL");
        return WK_ERROR;
    }
    wk_result res = reader_step(r, in, err);
    if (res != WK_DONE) return res;
    r->item_ready = true;
    return WK_EVENT;
}

wk_result wk_iltp_reader_finish(wk_iltp_reader *r, const wk_in *rest, wk_error *err)
{
    wk_error e;
    if (r->phase == WK_ILTP_READER_FAILED) {
        if (err) *err = r->failure;
        return WK_ERROR;
    }
    if (r->phase == WK_ILTP_READER_SESSION && r->stream) {
        if (r->dpos < r->dlen || !wk_iltp_item_decoder_at_boundary(r->items)) {
            if (r->dpos < r->dlen || wk_iltp_item_decoder_finish(r->items, NULL, &e) == WK_DONE)
                wk_error_set(&e, WK_ERR_ILTP_TRUNCATED, r->consumed, "input ended inside an item");
            else
                e.offset = r->consumed;
            return rfail(r, err, &e);
        }
        if (wk_iltp_decoder_finish(r->stream, rest, &e) != WK_DONE) {
            e.offset = r->consumed;
            return rfail(r, err, &e);
        }
        return WK_DONE;
    }
    /* the raw phase: unread carrier bytes are judged by the caller's next read, not here */
    if (wk_iltp_item_decoder_finish(r->items, NULL, &e) != WK_DONE) {
        e.offset += r->session_start;
        return rfail(r, err, &e);
    }
    return WK_DONE;
}

/* --------------------------------------------------------------------------------------------- */

enum wphase { W_IDLE, W_CLOSING, W_PREFACE, W_AWAIT_SELECT, W_SESSION, W_ENDED, W_FAILED };

struct wk_iltp_writer {
    wk_allocator alloc;
    wk_iltp_stack_params params;
    enum wphase phase;
    wk_iltp_encoding enc;
    wk_iltp_encoder *stream;
    wk_iltp_encoder *encs[3];
    bool session_open;   /* a session exists whose end mark has not been written */
    size_t pre_len, pre_pos;
    wk_error failure;    /* W_FAILED: the first failure, reported again unchanged */
    uint8_t pre[WK_ILTP_PREFACE_MAX];
};

wk_iltp_writer *wk_iltp_writer_create(const wk_iltp_stack_params *params, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_writer *w = wk_allocator_zalloc(&a, sizeof *w, "writer allocation failed", err);
    if (!w) return NULL;
    w->alloc = a;
    if (params) w->params = *params;
    w->params.allocator = NULL;
    return w;
}

void wk_iltp_writer_destroy(wk_iltp_writer *w)
{
    if (!w) return;
    for (int i = 0; i < 3; i++) wk_iltp_encoder_destroy(w->encs[i]);
    w->alloc.free(w->alloc.opaque, w);
}

/* Misuse (a call out of order): refused, the writer unchanged. */
static wk_result wmisuse(wk_error *err, wk_code code, const char *what)
{
    wk_error_set(err, code, WK_NO_OFFSET, "%s", what);
    return WK_ERROR;
}

/* The writer's encoder failed (e): the writer keeps that error and reports it again unchanged. */
static wk_result wfailed(wk_iltp_writer *w, wk_error *err, const wk_error *e)
{
    w->phase = W_FAILED;
    w->failure = *e;
    if (err) *err = w->failure;
    return WK_ERROR;
}

/* An encoder step of the writer's session; a failure fails the writer. */
static wk_result wencode(wk_iltp_writer *w, wk_in *in, wk_out *out, wk_iltp_op op, wk_error *err)
{
    wk_error e;
    wk_result r = wk_iltp_encoder_encode(w->stream, in, out, op, &e);
    if (r == WK_ERROR) return wfailed(w, err, &e);
    return r;
}

/* True (with *err = the failure) when the writer has failed. */
static bool wis_failed(const wk_iltp_writer *w, wk_error *err)
{
    if (w->phase != W_FAILED) return false;
    if (err) *err = w->failure;
    return true;
}

wk_result wk_iltp_writer_begin_session(wk_iltp_writer *w, const uint8_t nonce[WK_ILTP_NONCE_LEN],
                                       const char *decode, const char *encode, wk_out *out,
                                       wk_error *err)
{
    if (wis_failed(w, err)) return WK_ERROR;
    if (w->phase != W_CLOSING && w->phase != W_PREFACE) {
        /* first call: take the arguments; invalid ones are the caller's (WK_ERR_ARG) */
        wk_error pe;
        wk_out po = {w->pre, sizeof w->pre, 0}; /* WK_ILTP_PREFACE_MAX: every preface fits */
        if (wk_iltp_preface_encode(w->params.form == WK_ILTP_FORM_ANY ? WK_ILTP_FORM_0_13 : w->params.form,
                                   nonce, decode, encode, &po, &pe) != WK_DONE) {
            wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "preface arguments: %s: %.150s", wk_error_name(pe.code), pe.msg);
            return WK_ERROR;
        }
        w->pre_len = po.pos;
        w->pre_pos = 0;
        w->phase = (w->session_open && w->stream) ? W_CLOSING : W_PREFACE;
    }
    if (w->phase == W_CLOSING) {
        wk_result r = wencode(w, NULL, out, WK_ILTP_END, err);
        if (r != WK_DONE) return r;
        w->session_open = false;
        w->phase = W_PREFACE;
    }
    size_t n = w->pre_len - w->pre_pos, room = out->size - out->pos;
    if (n > room) n = room;
    memcpy(out->dst + out->pos, w->pre + w->pre_pos, n);
    out->pos += n;
    w->pre_pos += n;
    if (w->pre_pos < w->pre_len) return WK_NEED_OUTPUT;
    w->phase = W_AWAIT_SELECT;
    w->session_open = false;
    w->stream = NULL;
    return WK_DONE;
}

wk_code wk_iltp_writer_select(wk_iltp_writer *w, wk_iltp_encoding enc, wk_error *err)
{
    if (wis_failed(w, err)) return w->failure.code;
    if (w->phase != W_AWAIT_SELECT)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "select follows begin_session");
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the writer cannot produce this encoding");
    if (!w->encs[enc]) {
        wk_iltp_encoder_params ep = {w->params.level, &w->alloc, WK_ILTP_BACKEND_DEFAULT};
        if (enc == WK_ILTP_DEFLATE12C && ep.level > 9) ep.level = 0;
        w->encs[enc] = wk_iltp_encoder_create(enc, &ep, err);
        if (!w->encs[enc]) return err ? err->code : WK_ERR_NOMEM;
    } else if (wk_iltp_encoder_reset(w->encs[enc], err) != WK_OK) {
        return err ? err->code : WK_ERR_BACKEND;
    }
    w->enc = enc;
    w->stream = w->encs[enc];
    w->session_open = true;
    w->phase = W_SESSION;
    return WK_OK;
}

wk_result wk_iltp_writer_write(wk_iltp_writer *w, wk_in *batch, wk_out *out, wk_error *err)
{
    if (wis_failed(w, err)) return WK_ERROR;
    if (w->phase != W_SESSION) return wmisuse(err, WK_ERR_STATE, "no session to write items in");
    return wencode(w, batch, out, WK_ILTP_FLUSH, err);
}

wk_result wk_iltp_writer_write_part(wk_iltp_writer *w, wk_in *in, wk_out *out, wk_error *err)
{
    if (wis_failed(w, err)) return WK_ERROR;
    if (w->phase != W_SESSION) return wmisuse(err, WK_ERR_STATE, "no session to write items in");
    return wencode(w, in, out, WK_ILTP_CONTINUE, err);
}

wk_result wk_iltp_writer_end(wk_iltp_writer *w, wk_out *out, wk_error *err)
{
    if (w->phase == W_ENDED) return WK_DONE;
    if (wis_failed(w, err)) return WK_ERROR;
    if (w->phase != W_SESSION) return wmisuse(err, WK_ERR_STATE, "no session to end");
    wk_result r = wencode(w, NULL, out, WK_ILTP_END, err);
    if (r == WK_DONE) {
        w->phase = W_ENDED;
        w->session_open = false;
    }
    return r;
}
