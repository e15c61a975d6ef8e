/* The contract harness's adapter for the ILTP streaming objects (wk_contract_iltp.h). */
#include "wk_contract_iltp.h"
#include <string.h>

#define REQ(c, cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) return wk_contract_fail((c), __VA_ARGS__);                                    \
    } while (0)

enum { REC_ITEM = 1, REC_BLOB = 2 };

void wk_contract_iltp_setup(wk_contract_iltp *m, wk_iltp_encoding enc, wk_iltp_backend backend,
                            bool stream_blobs)
{
    memset(m, 0, sizeof *m);
    m->enc = enc;
    m->backend = backend;
    m->form = WK_ILTP_FORM_ANY;
    m->stream_blobs = stream_blobs;
}

void wk_contract_iltp_release(wk_contract_iltp *m)
{
    wk_iltp_decoder_destroy(m->dec);
    wk_iltp_item_decoder_destroy(m->items);
    wk_iltp_reader_destroy(m->reader);
    m->dec = NULL;
    m->items = NULL;
    m->reader = NULL;
}

static void run_state_clear(wk_contract_iltp *m)
{
    m->next_item = m->items_seen = m->blob_events = 0;
    m->blob_open = false;
    m->blob_len = m->blob_done = m->blob_next = 0;
}

static void destroy(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_iltp_release(obj);
}

/* An error is the peer's (PeerProtocol, the code table's category) or a memory refusal. */
static bool error_is_typed(wk_contract *c, const wk_error *e)
{
    REQ(c, e->code != WK_OK, "an error without a code");
    REQ(c, e->category == wk_code_category(e->code), "%s with another category than the table's",
        wk_error_name(e->code));
    REQ(c, e->category == WK_CAT_PEER_PROTOCOL || e->code == WK_ERR_NOMEM, "%s is not PeerProtocol",
        wk_error_name(e->code));
    return true;
}

/* ---- the stream decoder -------------------------------------------------------------------- */
static bool dec_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_iltp *m = obj;
    run_state_clear(m);
    m->ended[1] = m->ended[0];
    m->ended[0] = false;
    uint8_t *k = m->keep[1]; /* the last run's bytes become the previous run's */
    m->keep[1] = m->keep[0];
    m->keep[0] = k;
    m->kept[1] = m->kept[0];
    m->kept[0] = 0;
    wk_error e;
    if (m->reuse && m->dec) return wk_iltp_decoder_reset(m->dec, &e) == WK_OK;
    wk_contract_iltp_release(m);
    wk_iltp_decoder_params p = {m->allocator, m->backend};
    m->dec = wk_iltp_decoder_create(m->enc, &p, &e);
    return m->dec != NULL;
}

static void dec_destroy(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_iltp *m = obj;
    if (!m->reuse) wk_contract_iltp_release(m);
}

/* iltp.h: the ISA-L deflate12c decoder lets igzip use the view's room past out->pos as scratch. */
static unsigned dec_scratch(void *obj)
{
    const wk_contract_iltp *m = obj;
    return m->dec && wk_iltp_decoder_backend(m->dec) == WK_ILTP_BACKEND_ISAL ? WK_CONTRACT_SCRATCH_ALWAYS
                                                                             : WK_CONTRACT_SCRATCH_NONE;
}

static wk_result dec_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_contract_iltp *m = obj;
    size_t pos0 = out->pos;
    wk_result r = wk_iltp_decoder_decode(m->dec, in, out, err);
    if (m->keep[0] && out->pos > pos0) {
        size_t k = out->pos - pos0, room = m->keep_cap - m->kept[0];
        if (k > room) k = room;
        memcpy(m->keep[0] + m->kept[0], out->dst + pos0, k);
        m->kept[0] += k;
    }
    return r;
}

static wk_result dec_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_iltp_decoder_finish(((wk_contract_iltp *)obj)->dec, rest, err);
}

static bool dec_end(wk_contract *c, void *obj)
{
    wk_contract_iltp *m = obj;
    m->ended[0] = wk_iltp_decoder_ended(m->dec);
    REQ(c, wk_iltp_decoder_produced(m->dec) == c->oc.produced, "produced() %llu, the harness saw %llu",
        (unsigned long long)wk_iltp_decoder_produced(m->dec), (unsigned long long)c->oc.produced);
    if (c->oc.verdict == WK_ERROR) {
        if (!error_is_typed(c, &c->oc.error)) return false;
        REQ(c, !c->oc.error.has_offset || c->oc.error.offset <= c->size, "error offset %llu past the input",
            (unsigned long long)c->oc.error.offset);
        return true;
    }
    REQ(c, wk_iltp_decoder_consumed(m->dec) == c->oc.consumed, "consumed() %llu, the harness saw %llu",
        (unsigned long long)wk_iltp_decoder_consumed(m->dec), (unsigned long long)c->oc.consumed);
    REQ(c, m->enc == WK_ILTP_IDENTITY || wk_iltp_decoder_ended(m->dec), "a clean end without the end mark");
    wk_contract_record_u64(c, wk_iltp_decoder_ended(m->dec));
    return true;
}

const wk_contract_ops wk_contract_iltp_decoder_ops = {"wk_iltp_decoder", dec_reset, dec_destroy, dec_step,
                                                      dec_finish, NULL, dec_end, true, 0, dec_scratch};

/* ---- events shared by the item decoder and the reader ---------------------------------------- */
static bool on_item(wk_contract *c, wk_contract_iltp *m, const wk_iltp_item *it, bool raw)
{
    REQ(c, it->len > 0 && it->bytes, "an empty item");
    REQ(c, !m->blob_open, "an item inside a streamed Blob");
    if (raw) {
        /* the item decoder over the input itself: the item is the input's bytes just consumed */
        uint64_t end = c->oc.consumed;
        REQ(c, it->offset == m->next_item, "item at %llu, expected at %llu", (unsigned long long)it->offset,
            (unsigned long long)m->next_item);
        REQ(c, it->offset + it->len == end, "item ends at %llu, the decoder stopped at %llu",
            (unsigned long long)(it->offset + it->len), (unsigned long long)end);
        REQ(c, end <= c->size && memcmp(it->bytes, c->data + it->offset, it->len) == 0,
            "item bytes differ from the input");
        m->next_item = end;
    }
    if (it->kind == WK_ILTP_ITEM_RECORD && it->record.type == 'B')
        REQ(c, wk_iltp_record_hash_check(&it->record), "a Blob record whose hash does not hold");
    m->items_seen++;
    uint64_t f[] = {REC_ITEM, (uint64_t)it->kind, raw ? it->offset : 0, it->len,
                    it->kind == WK_ILTP_ITEM_FACTS ? it->rows : (uint64_t)(uint8_t)it->record.type};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) wk_contract_record_u64(c, f[i]);
    wk_contract_record(c, it->bytes, it->len);
    return !m->on_item || m->on_item(c, m, it);
}

static bool on_blob(wk_contract *c, wk_contract_iltp *m, const wk_iltp_blob_event *ev, bool raw)
{
    REQ(c, ev != NULL, "WK_EVENT with neither an item nor a Blob event");
    m->blob_events++;
    switch (ev->kind) {
    case WK_ILTP_BLOB_BEGIN:
        REQ(c, !m->blob_open, "BLOB_BEGIN inside a Blob");
        REQ(c, ev->length <= WK_ILTP_BLOB_DATA_CAP, "Blob length over the cap");
        m->blob_open = true;
        m->blob_len = ev->length;
        m->blob_done = 0;
        break;
    case WK_ILTP_BLOB_DATA:
        REQ(c, m->blob_open && ev->len > 0 && ev->data, "BLOB_DATA outside a Blob, or empty");
        REQ(c, ev->done == m->blob_done + ev->len && ev->done <= m->blob_len, "BLOB_DATA done %llu out of order",
            (unsigned long long)ev->done);
        if (raw) {
            REQ(c, wk_contract_in_push(c, ev->data, ev->len), "a BLOB_DATA slice outside the push");
            REQ(c, m->blob_done == 0 || ev->offset == m->blob_next, "BLOB_DATA offsets not contiguous");
        }
        m->blob_done = ev->done;
        m->blob_next = ev->offset + ev->len;
        break;
    case WK_ILTP_BLOB_END:
        REQ(c, m->blob_open && m->blob_done == m->blob_len, "BLOB_END before the last data byte");
        m->blob_open = false;
        if (raw) m->next_item = ev->offset;
        break;
    default:
        return wk_contract_fail(c, "unknown Blob event kind %d", (int)ev->kind);
    }
    /* DATA: the bytes alone (how they are sliced depends on the pushes) */
    if (ev->kind == WK_ILTP_BLOB_DATA) {
        wk_contract_record(c, ev->data, ev->len);
        return true;
    }
    uint64_t f[] = {REC_BLOB, (uint64_t)ev->kind, ev->length, raw ? ev->offset : 0, ev->done};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) wk_contract_record_u64(c, f[i]);
    wk_contract_record(c, ev->hash, 32);
    return true;
}

static bool items_end(wk_contract *c, wk_contract_iltp *m)
{
    if (c->oc.verdict == WK_ERROR) return error_is_typed(c, &c->oc.error);
    REQ(c, !m->blob_open, "a clean end inside a streamed Blob");
    wk_contract_record_u64(c, m->items_seen);
    return true;
}

/* ---- the item decoder ---------------------------------------------------------------------- */
static bool items_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_iltp *m = obj;
    wk_contract_iltp_release(m);
    run_state_clear(m);
    wk_iltp_item_decoder_params p = {m->form, m->max_item, m->allocator};
    wk_error e;
    m->items = wk_iltp_item_decoder_create(&p, &e);
    if (m->items) wk_iltp_item_decoder_stream_blobs(m->items, m->stream_blobs);
    return m->items != NULL;
}

static wk_result items_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    return wk_iltp_item_decoder_decode(((wk_contract_iltp *)obj)->items, in, out, err);
}

static wk_result items_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_iltp_item_decoder_finish(((wk_contract_iltp *)obj)->items, rest, err);
}

static bool items_event(wk_contract *c, void *obj)
{
    wk_contract_iltp *m = obj;
    const wk_iltp_item *it = wk_iltp_item_decoder_item(m->items);
    const wk_iltp_blob_event *ev = wk_iltp_item_decoder_event(m->items);
    REQ(c, !it != !ev, "an event must be an item or a Blob event, not both or neither");
    return it ? on_item(c, m, it, true) : on_blob(c, m, ev, true);
}

static bool items_end_cb(wk_contract *c, void *obj) { return items_end(c, obj); }

const wk_contract_ops wk_contract_iltp_items_ops = {"wk_iltp_item_decoder", items_reset, destroy, items_step,
                                                    items_finish, items_event, items_end_cb, false, 1, NULL};

/* ---- the reader ---------------------------------------------------------------------------- */
static bool reader_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_iltp *m = obj;
    wk_contract_iltp_release(m);
    run_state_clear(m);
    wk_iltp_stack_params p = {m->form, 0, m->max_item, m->allocator};
    wk_error e;
    m->reader = wk_iltp_reader_create(&p, &e);
    if (m->reader) wk_iltp_reader_stream_blobs(m->reader, m->stream_blobs);
    return m->reader != NULL;
}

static wk_result reader_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    return wk_iltp_reader_read(((wk_contract_iltp *)obj)->reader, in, out, err);
}

static wk_result reader_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_iltp_reader_finish(((wk_contract_iltp *)obj)->reader, rest, err);
}

static bool reader_event(wk_contract *c, void *obj)
{
    wk_contract_iltp *m = obj;
    const wk_iltp_item *it = wk_iltp_reader_item(m->reader);
    const wk_iltp_blob_event *ev = wk_iltp_reader_event(m->reader);
    REQ(c, !it != !ev, "an event must be an item or a Blob event, not both or neither");
    if (!it) return on_blob(c, m, ev, false);
    if (!on_item(c, m, it, false)) return false;
    if (it->kind == WK_ILTP_ITEM_PREFACE) {
        /* as a session does: the preface names the session, begin selects its encoding */
        REQ(c, wk_iltp_reader_phase_get(m->reader) == WK_ILTP_READER_PAUSED, "no pause after a preface");
        wk_error e;
        REQ(c, wk_iltp_reader_begin(m->reader, m->enc, &e) == WK_OK, "begin failed: %s", e.msg);
    }
    return true;
}

static bool reader_end_cb(wk_contract *c, void *obj)
{
    wk_contract_iltp *m = obj;
    if (c->oc.verdict != WK_ERROR)
        REQ(c, wk_iltp_reader_consumed(m->reader) == c->oc.consumed, "reader consumed() %llu, the harness saw %llu",
            (unsigned long long)wk_iltp_reader_consumed(m->reader), (unsigned long long)c->oc.consumed);
    return items_end(c, m);
}

const wk_contract_ops wk_contract_iltp_reader_ops = {"wk_iltp_reader", reader_reset, destroy, reader_step,
                                                     reader_finish, reader_event, reader_end_cb, false,
                                                     ~0u >> 4, NULL};
