/* The contract harness's adapter for wk_moqt_stream_reader: see wk_contract_moqt.h. */
#include "wk_contract_moqt.h"

#include <string.h>

enum { REC_SUBGROUP = 1, REC_FETCH, REC_PADDING, REC_OBJECT, REC_FETCH_OBJECT, REC_PAYLOAD_END,
       REC_END };

static void rec(wk_contract_hash *h, const uint64_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) wk_contract_hash_u64(h, f[i]);
}

void wk_contract_moqt_rec_subgroup_header(wk_contract_hash *h, uint64_t stream_type,
                                          const wk_moqt_subgroup_header *s)
{
    uint64_t f[] = {REC_SUBGROUP, stream_type, s->type, s->track_alias, s->group_id,
                    s->subgroup_id_known, s->subgroup_id_known ? s->subgroup_id : 0,
                    s->has_priority, s->has_priority ? s->publisher_priority : 0};
    rec(h, f, sizeof f / sizeof f[0]);
}

void wk_contract_moqt_rec_fetch_header(wk_contract_hash *h, uint64_t request_id)
{
    uint64_t f[] = {REC_FETCH, request_id};
    rec(h, f, 2);
}

void wk_contract_moqt_rec_padding(wk_contract_hash *h, uint64_t stream_type)
{
    uint64_t f[] = {REC_PADDING, stream_type};
    rec(h, f, 2);
}

void wk_contract_moqt_rec_object(wk_contract_hash *h, const wk_moqt_subgroup_object *o)
{
    uint64_t f[] = {REC_OBJECT, o->object_id_delta, o->object_id, o->has_properties,
                    o->properties_len, o->payload_length, o->has_status, o->status, o->offset};
    rec(h, f, sizeof f / sizeof f[0]);
    wk_contract_hash_add(h, o->properties, o->properties_len);
}

void wk_contract_moqt_rec_fetch_object(wk_contract_hash *h, const wk_moqt_fetch_object *o)
{
    uint64_t f[] = {REC_FETCH_OBJECT, o->flags, o->end_of_range, o->first_record,
                    o->has_group_id_delta, o->has_group_id_delta ? o->group_id_delta : 0,
                    o->has_object_id_delta, o->has_object_id_delta ? o->object_id_delta : 0,
                    o->group_id, o->object_id, o->has_subgroup_id,
                    o->has_subgroup_id ? o->subgroup_id : 0, o->has_priority,
                    o->has_priority ? o->publisher_priority : 0, o->has_properties,
                    o->properties_len, o->has_payload_length, o->payload_length, o->offset};
    rec(h, f, sizeof f / sizeof f[0]);
    wk_contract_hash_add(h, o->properties, o->properties_len);
}

void wk_contract_moqt_rec_payload_end(wk_contract_hash *h, uint64_t length)
{
    uint64_t f[] = {REC_PAYLOAD_END, length};
    rec(h, f, 2);
}

void wk_contract_moqt_rec_end(wk_contract_hash *h, wk_moqt_stream_kind kind, uint64_t padding,
                              uint64_t objects, bool subgroup_id_known, uint64_t subgroup_id)
{
    uint64_t f[] = {REC_END, kind, padding, objects, subgroup_id_known,
                    subgroup_id_known ? subgroup_id : 0};
    rec(h, f, sizeof f / sizeof f[0]);
}

size_t wk_contract_moqt_scratch_cap(const wk_moqt_read_options *o)
{
    return o->properties_buf && o->properties_cap ? o->properties_cap : WK_MOQT_PROPERTIES_INLINE;
}

void wk_contract_moqt_setup(wk_contract_moqt *m, wk_moqt_carrier expect,
                            const wk_moqt_read_options *options)
{
    memset(m, 0, sizeof *m);
    m->expect = expect;
    if (options) m->options = *options;
}

/* ---------------------------------------------------------------------------------------------
 * The ops
 * ------------------------------------------------------------------------------------------- */
#define REQ(c, cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) return wk_contract_fail((c), __VA_ARGS__);                                    \
    } while (0)

static bool m_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_moqt *m = obj;
    wk_moqt_stream_reader_init(&m->r, m->expect, &m->options);
    m->header = m->open = m->have_prev = m->ended = false;
    m->prev_id = m->objects = m->boundary = m->pay_total = m->pay_done = 0;
    return m->r.kind == WK_MOQT_KIND_NONE && wk_moqt_stream_reader_consumed(&m->r) == 0 &&
           m->r.event == WK_MOQT_EVENT_NONE;
}

static wk_result m_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    return wk_moqt_stream_reader_read(&((wk_contract_moqt *)obj)->r, in, out, err);
}

static wk_result m_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_moqt_stream_reader_finish(&((wk_contract_moqt *)obj)->r, rest, err);
}

/* The one-shot header decoders agree with the reader's header, and on its length. */
static bool check_header_decoders(wk_contract *c, wk_contract_moqt *m)
{
    const wk_moqt_stream_reader *r = &m->r;
    wk_in whole = {c->data, c->size, 0};
    wk_error e;
    if (r->kind == WK_MOQT_KIND_SUBGROUP) {
        wk_moqt_subgroup_header h2;
        REQ(c, wk_moqt_subgroup_header_decode(&h2, &whole, &e) == WK_DONE,
            "the one-shot header decoder refuses a header the reader read: %s",
            wk_error_name(e.code));
        REQ(c, whole.pos == c->oc.consumed, "header length %zu vs %llu", whole.pos,
            (unsigned long long)c->oc.consumed);
        wk_contract_hash a, b;
        wk_contract_hash_init(&a);
        wk_contract_hash_init(&b);
        wk_contract_moqt_rec_subgroup_header(&a, r->stream_type, &h2);
        wk_contract_moqt_rec_subgroup_header(&b, r->stream_type, &r->subgroup);
        REQ(c, a.h == b.h, "the one-shot header decoder reads other fields");
    } else {
        wk_moqt_fetch_header f2;
        REQ(c, wk_moqt_fetch_header_decode(&f2, &whole, &e) == WK_DONE,
            "the one-shot fetch header decoder refuses: %s", wk_error_name(e.code));
        REQ(c, whole.pos == c->oc.consumed && f2.request_id == r->fetch.request_id,
            "the one-shot fetch header decoder disagrees");
    }
    return true;
}

/* A new object or record: its framing checks; the properties slice; the record. */
static bool check_object(wk_contract *c, wk_contract_moqt *m, bool sub)
{
    const wk_moqt_stream_reader *r = &m->r;
    const wk_moqt_read_options *o = &m->options;
    REQ(c, m->header && !m->open, "an object event before the header or inside a payload");
    REQ(c, r->kind == (sub ? WK_MOQT_KIND_SUBGROUP : WK_MOQT_KIND_FETCH),
        "an object event of the other carrier");
    const uint8_t *props;
    size_t plen;
    uint64_t total, off;
    if (sub) {
        const wk_moqt_subgroup_object *ob = &r->object;
        props = ob->properties;
        plen = ob->properties_len;
        total = ob->payload_length;
        off = ob->offset;
        REQ(c, ob->has_properties == !!(r->subgroup.type & WK_MOQT_SUBGROUP_PROPERTIES),
            "has_properties is not the header's PROPERTIES bit");
        REQ(c, ob->has_status == (ob->payload_length == 0), "a status without length 0");
        if (!ob->has_status)
            REQ(c, ob->status == WK_MOQT_STATUS_NORMAL, "status %llu without a status field",
                (unsigned long long)ob->status);
        else if (!o->allow_unknown_status)
            REQ(c, wk_moqt_status_is_assigned(ob->status), "unassigned status reported");
        REQ(c, !m->ended || o->allow_objects_after_end, "an object after End of Group / Track");
        if (ob->has_status && (ob->status == WK_MOQT_STATUS_END_OF_GROUP ||
                               ob->status == WK_MOQT_STATUS_END_OF_TRACK))
            m->ended = true;
        REQ(c, ob->object_id == (m->have_prev ? m->prev_id + ob->object_id_delta + 1
                                              : ob->object_id_delta),
            "Object ID %llu not resolved from delta %llu", (unsigned long long)ob->object_id,
            (unsigned long long)ob->object_id_delta);
        REQ(c, !m->have_prev || ob->object_id > m->prev_id, "Object IDs do not increase");
        m->have_prev = true;
        m->prev_id = ob->object_id;
        if (wk_moqt_subgroup_type_id_mode(r->subgroup.type) == WK_MOQT_SUBGROUP_ID_FIRST_OBJECT) {
            REQ(c, r->subgroup.subgroup_id_known, "mode 1: Subgroup ID unknown after an object");
            if (r->objects == 1)
                REQ(c, r->subgroup.subgroup_id == ob->object_id,
                    "mode 1: Subgroup ID is not the first Object ID");
        }
        wk_contract_moqt_rec_object(&c->oc.record, ob);
    } else {
        const wk_moqt_fetch_object *fo = &r->fetch_object;
        props = fo->properties;
        plen = fo->properties_len;
        total = fo->payload_length;
        off = fo->offset;
        REQ(c, fo->end_of_range == wk_moqt_fetch_flags_is_end_of_range(fo->flags),
            "end_of_range wrong for flags 0x%llx", (unsigned long long)fo->flags);
        REQ(c, fo->end_of_range || fo->flags <= WK_MOQT_FETCH_FLAGS_MAX,
            "flags 0x%llx reported", (unsigned long long)fo->flags);
        REQ(c, fo->first_record == (r->objects == 1), "first_record wrong");
        if (fo->end_of_range) {
            bool abs = o->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
            REQ(c, !fo->has_subgroup_id && !fo->has_priority && !fo->has_properties &&
                       fo->payload_length == 0,
                "an End of Range marker with object fields");
            REQ(c, fo->has_payload_length == !abs && fo->has_group_id_delta == !abs &&
                       fo->has_object_id_delta == !abs,
                "End of Range fields not those of reading %s", abs ? "B" : "A");
        } else {
            REQ(c, fo->has_payload_length && fo->has_priority, "a record without length/priority");
            REQ(c, fo->has_group_id_delta == !!(fo->flags & WK_MOQT_FETCH_GROUP_ID_DELTA) &&
                       fo->has_object_id_delta == !!(fo->flags & WK_MOQT_FETCH_OBJECT_ID_DELTA) &&
                       fo->has_subgroup_id == !(fo->flags & WK_MOQT_FETCH_DATAGRAM) &&
                       fo->has_properties == !!(fo->flags & WK_MOQT_FETCH_PROPERTIES),
                "a record's fields do not follow its flags 0x%02llx",
                (unsigned long long)fo->flags);
        }
        wk_contract_moqt_rec_fetch_object(&c->oc.record, fo);
    }
    REQ(c, r->objects == ++m->objects, "objects() %llu vs %llu events",
        (unsigned long long)r->objects, (unsigned long long)m->objects);
    REQ(c, off == m->boundary, "object at %llu, the previous one ended at %llu",
        (unsigned long long)off, (unsigned long long)m->boundary);
    REQ(c, props != NULL || plen == 0, "a properties length without a slice");
    size_t cap = wk_contract_moqt_scratch_cap(o);
    REQ(c, plen <= cap, "a properties block above the scratch size");
    if (plen) {
        wk_error e;
        if (!o->properties_length_only)
            REQ(c, wk_moqt_properties_validate(&(wk_in){props, plen, 0}, 0, NULL, &e) == WK_OK,
                "the reader let invalid pairs through");
        bool in_push = wk_contract_in_push(c, props, plen);
        const uint8_t *sb = o->properties_buf && o->properties_cap ? o->properties_buf
                                                                   : r->s.inline_props;
        bool in_scratch = props >= sb && props + plen <= sb + cap;
        REQ(c, in_push || in_scratch, "a properties slice neither in the push nor the scratch");
        if (c->push->size == c->size) REQ(c, in_push, "one push, yet the properties were copied");
    }
    m->pay_total = total;
    m->pay_done = 0;
    REQ(c, r->piece.offset == 0, "the first piece at offset %llu",
        (unsigned long long)r->piece.offset);
    m->open = true;
    return true;
}

static bool check_piece(wk_contract *c, wk_contract_moqt *m, bool payload_event)
{
    const wk_moqt_stream_reader *r = &m->r;
    const wk_moqt_payload_piece *pc = &r->piece;
    REQ(c, m->open, "a payload piece outside an object");
    if (payload_event) REQ(c, pc->len > 0, "an empty PAYLOAD event");
    REQ(c, pc->offset == m->pay_done && pc->len <= m->pay_total - m->pay_done,
        "piece at %llu+%zu, want %llu of %llu", (unsigned long long)pc->offset, pc->len,
        (unsigned long long)m->pay_done, (unsigned long long)m->pay_total);
    if (pc->len)
        REQ(c, pc->data >= c->push->src + c->call_pos &&
                   pc->data + pc->len == c->push->src + c->push->pos,
            "a piece not borrowed from this push, ending where the reader stopped");
    m->pay_done += pc->len;
    wk_contract_record(c, pc->data, pc->len);
    REQ(c, pc->last == (m->pay_done == m->pay_total), "`last` wrong");
    if (pc->last) {
        m->open = false;
        wk_contract_moqt_rec_payload_end(&c->oc.record, m->pay_total);
        m->boundary = c->oc.consumed;
    }
    REQ(c, wk_moqt_stream_reader_at_boundary(r) == !m->open, "at_boundary() wrong");
    return true;
}

static bool m_event(wk_contract *c, void *obj)
{
    wk_contract_moqt *m = obj;
    const wk_moqt_stream_reader *r = &m->r;
    REQ(c, wk_moqt_stream_reader_consumed(r) == c->oc.consumed, "consumed() %llu, seen %llu",
        (unsigned long long)wk_moqt_stream_reader_consumed(r), (unsigned long long)c->oc.consumed);
    switch (r->event) {
    case WK_MOQT_EVENT_SUBGROUP_HEADER: {
        const wk_moqt_subgroup_header *s = &r->subgroup;
        REQ(c, !m->header && m->expect != WK_MOQT_CARRIER_FETCH, "a second or unexpected header");
        m->header = true;
        REQ(c, r->kind == WK_MOQT_KIND_SUBGROUP && r->stream_type == s->type, "kind / type");
        REQ(c, wk_moqt_subgroup_type_is_valid(s->type), "invalid Type Flags reported");
        REQ(c, s->has_priority == !(s->type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY), "has_priority");
        wk_moqt_subgroup_id_mode md = wk_moqt_subgroup_type_id_mode(s->type);
        REQ(c, s->subgroup_id_known == (md != WK_MOQT_SUBGROUP_ID_FIRST_OBJECT), "id known");
        if (md == WK_MOQT_SUBGROUP_ID_ZERO) REQ(c, s->subgroup_id == 0, "mode 0 Subgroup ID");
        if (!check_header_decoders(c, m)) return false;
        wk_contract_moqt_rec_subgroup_header(&c->oc.record, r->stream_type, s);
        m->boundary = c->oc.consumed;
        break;
    }
    case WK_MOQT_EVENT_FETCH_HEADER:
        REQ(c, !m->header && m->expect != WK_MOQT_CARRIER_SUBGROUP, "a second or unexpected header");
        m->header = true;
        REQ(c, r->kind == WK_MOQT_KIND_FETCH && r->stream_type == WK_MOQT_STREAM_TYPE_FETCH,
            "kind / type");
        if (!check_header_decoders(c, m)) return false;
        wk_contract_moqt_rec_fetch_header(&c->oc.record, r->fetch.request_id);
        m->boundary = c->oc.consumed;
        break;
    case WK_MOQT_EVENT_PADDING:
        REQ(c, !m->header, "a padding event after a header");
        m->header = true;
        REQ(c, r->kind == WK_MOQT_KIND_PADDING && r->stream_type == WK_MOQT_STREAM_TYPE_PADDING,
            "kind / type");
        wk_contract_moqt_rec_padding(&c->oc.record, r->stream_type);
        m->boundary = c->oc.consumed;
        break;
    case WK_MOQT_EVENT_OBJECT:
    case WK_MOQT_EVENT_FETCH_OBJECT:
        if (!check_object(c, m, r->event == WK_MOQT_EVENT_OBJECT)) return false;
        if (!check_piece(c, m, false)) return false;
        break;
    case WK_MOQT_EVENT_PAYLOAD:
        if (!check_piece(c, m, true)) return false;
        break;
    default:
        return wk_contract_fail(c, "WK_EVENT with r->event %d", (int)r->event);
    }
    return m->on_event ? m->on_event(c, m) : true;
}

static bool m_end(wk_contract *c, void *obj)
{
    wk_contract_moqt *m = obj;
    const wk_moqt_stream_reader *r = &m->r;
    REQ(c, wk_moqt_stream_reader_consumed(r) == c->oc.consumed, "consumed() at the end");
    if (c->oc.verdict == WK_DONE) {
        REQ(c, c->oc.consumed == c->size, "a clean end with %llu of %zu bytes consumed",
            (unsigned long long)c->oc.consumed, c->size);
        REQ(c, m->header && !m->open, "a clean end without a header or inside a payload");
        REQ(c, m->boundary == c->size || r->kind == WK_MOQT_KIND_PADDING,
            "a clean end inside an object");
        REQ(c, wk_moqt_stream_reader_at_boundary(r), "at_boundary() false at a clean end");
        if (r->kind == WK_MOQT_KIND_PADDING)
            REQ(c, r->padding_bytes == c->size - m->boundary, "padding bytes %llu",
                (unsigned long long)r->padding_bytes);
        wk_contract_moqt_rec_end(&c->oc.record, r->kind, r->padding_bytes, r->objects,
                                 r->subgroup.subgroup_id_known, r->subgroup.subgroup_id);
    } else {
        const wk_error *e = &c->oc.error;
        REQ(c, e->code >= 500 && e->code < 700, "a non-moqt error %s", wk_error_name(e->code));
        REQ(c, e->category == WK_CAT_PEER_PROTOCOL, "%s is not PeerProtocol",
            wk_error_name(e->code));
        REQ(c, e->has_offset && e->offset <= c->size, "%s without an offset in the input",
            wk_error_name(e->code));
        const char *cat = wk_moqt_error_category(e->code);
        REQ(c, strcmp(cat, "ok") != 0 && strcmp(cat, "error") != 0, "no vectors' category");
        bool trunc = e->code == WK_ERR_MOQT_TRUNCATED;
        REQ(c, (strcmp(cat, "incomplete") == 0) == trunc && wk_code_is_truncation(e->code) == trunc,
            "incomplete / truncation wrong for %s", wk_error_name(e->code));
        if (trunc)
            REQ(c, e->offset == c->size && c->oc.consumed == c->size,
                "MOQT_ERR_TRUNCATED before the input's end (offset %llu)",
                (unsigned long long)e->offset);
        else
            REQ(c, e->offset < c->size, "%s at offset %llu, past the input",
                wk_error_name(e->code), (unsigned long long)e->offset);
        REQ(c, !wk_moqt_stream_reader_at_boundary(r), "at_boundary() after an error");
    }
    return m->on_end ? m->on_end(c, m) : true;
}

const wk_contract_ops wk_contract_moqt_ops = {"wk_moqt_stream_reader", m_reset, NULL, m_step,
                                              m_finish, m_event, m_end, false, 0, NULL};

/* ---------------------------------------------------------------------------------------------
 * Encoder calls
 * ------------------------------------------------------------------------------------------- */
static wk_result call_encode(void *ctx, wk_out *out, wk_error *err)
{
    wk_contract_moqt_call *k = ctx;
    switch (k->op) {
    case WK_CONTRACT_MOQT_PADDING: return wk_moqt_padding_encode(k->datagram, k->a, out, err);
    case WK_CONTRACT_MOQT_SUBGROUP_HEADER: return wk_moqt_subgroup_header_encode(k->sh, out, err);
    case WK_CONTRACT_MOQT_SUBGROUP_HEADER_CHECKED:
        return wk_moqt_subgroup_header_encode_checked(k->sh, out, err);
    case WK_CONTRACT_MOQT_SUBGROUP_BEGIN: return wk_moqt_subgroup_writer_begin(k->sw, k->sh, out, err);
    case WK_CONTRACT_MOQT_SUBGROUP_WRITE: return wk_moqt_subgroup_writer_write(k->sw, k->obj, out, err);
    case WK_CONTRACT_MOQT_SUBGROUP_FRAMING:
        return wk_moqt_subgroup_writer_write_framing(k->sw, k->obj, out, err);
    case WK_CONTRACT_MOQT_FETCH_HEADER: return wk_moqt_fetch_header_encode(k->fh, out, err);
    case WK_CONTRACT_MOQT_FETCH_BEGIN:
        return wk_moqt_fetch_writer_begin(k->fw, k->a, k->order, k->eor, out, err);
    case WK_CONTRACT_MOQT_FETCH_WRITE: return wk_moqt_fetch_writer_write(k->fw, k->fobj, out, err);
    case WK_CONTRACT_MOQT_FETCH_FRAMING:
        return wk_moqt_fetch_writer_write_framing(k->fw, k->fobj, out, err);
    case WK_CONTRACT_MOQT_FETCH_END_OF_RANGE:
        return wk_moqt_fetch_writer_write_end_of_range(k->fw, k->a, k->b, k->c, out, err);
    case WK_CONTRACT_MOQT_DATAGRAM: return wk_moqt_datagram_encode(k->dg, out, err);
    case WK_CONTRACT_MOQT_DATAGRAM_CHECKED: return wk_moqt_datagram_encode_checked(k->dg, out, err);
    default: return wk_moqt_properties_encode(k->props, k->nprops, out, err);
    }
}

static void call_restore(void *ctx)
{
    wk_contract_moqt_call *k = ctx;
    if (k->sw) *k->sw = k->sw0;
    if (k->fw) *k->fw = k->fw0;
}

/* The writer is as saved (writers are memset, then assigned field by field: padding bytes keep). */
static bool call_unchanged(void *ctx)
{
    wk_contract_moqt_call *k = ctx;
    return (!k->sw || memcmp(k->sw, &k->sw0, sizeof k->sw0) == 0) &&
           (!k->fw || memcmp(k->fw, &k->fw0, sizeof k->fw0) == 0);
}

bool wk_contract_moqt_call_check(wk_contract_moqt_call *k, wk_code refuse, size_t size,
                                 const uint8_t *expect, uint8_t **bytes, size_t *len, char *why,
                                 size_t why_cap)
{
    if (k->sw) k->sw0 = *k->sw;
    if (k->fw) k->fw0 = *k->fw;
    wk_contract_encoder e = {call_encode, call_restore, call_unchanged, k, refuse, size, expect};
    return wk_contract_encoder_check(&e, bytes, len, why, why_cap);
}
