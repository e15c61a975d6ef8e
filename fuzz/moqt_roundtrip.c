/* libFuzzer target: MoQT draft-20 decode -> encode -> decode for subgroup streams, fetch
 * streams, padding streams and datagrams (moqt.h readers and writers).
 *
 * Input: one header byte, then a stream (the end of the input is FIN) or one datagram.
 *   byte 0  bits 0-1 carrier (0 subgroup, 1 fetch, 2 datagram, 3 any stream), bit 2 group order
 *           Descending, bit 3 End of Range reading B (absolute), bit 4 subgroup objects written
 *           as framing (_write_framing) plus the caller's copy of the payload instead of
 *           _write, bit 5 fetch: also re-encode with wk_moqt_fetch_writer_pick_flags's flags
 *
 * Whatever decodes cleanly (default strict options, one push through the contract harness with
 * the moqt adapter's checks, finish OK) is re-encoded with the writers:
 * wk_moqt_subgroup_writer_begin/_write(_framing), wk_moqt_fetch_writer_begin/_write/
 * _write_end_of_range (the decoded Serialization Flags and resolved IDs, the same group order and
 * End of Range reading), wk_moqt_padding_encode, wk_moqt_datagram_encode_checked. Checked:
 *   - every writer call, through wk_contract_encoder_check: it writes exactly what its _size
 *     function says (wk_moqt_padding_size, wk_moqt_subgroup_header_size,
 *     wk_moqt_subgroup_writer_size, wk_moqt_fetch_header_size, wk_moqt_fetch_writer_size,
 *     wk_moqt_fetch_writer_end_of_range_size; the framing is that minus the payload), and in every
 *     shorter view answers WK_NEED_OUTPUT with the view and the writer untouched; both subgroup
 *     paths give the same bytes;
 *   - the encoding decodes cleanly to the same structure (header fields, every object's or
 *     record's resolved fields, wire deltas, flags, properties and payload bytes; offsets aside);
 *   - it is never longer than the input, and when it is as long, it is the input: canonical input
 *     re-encodes to itself (padding: when its bytes are zero);
 *   - re-encoding the decoded encoding gives the same bytes again (a fixed point);
 *   - fetch, bit 5: the records re-encoded with the flags wk_moqt_fetch_writer_pick_flags picks
 *     decode to the same resolved Group / Subgroup / Object IDs, priorities, properties and
 *     payloads (and End of Range markers). */
#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"
#include "wk_contract_moqt.h"

static uint32_t crc(uint32_t h, const void *p, size_t n)
{
    return (uint32_t)crc32((uLong)h, n ? p : (const void *)"", (uInt)n);
}

/* One decoded object or record, payload and properties borrowed from the decoded buffer. */
typedef struct rt_obj {
    wk_moqt_subgroup_object sub;
    wk_moqt_fetch_object fetch;
    const uint8_t *payload;
} rt_obj;

typedef struct rt_stream {
    wk_moqt_stream_kind kind;
    uint64_t stream_type;
    wk_moqt_subgroup_header sub;
    uint64_t request_id;
    uint64_t padding_bytes;
    bool padding_zero;
    rt_obj *obj;
    size_t nobj, cap;
} rt_stream;

/* The adapter's event hook: keeps every object and record (payload borrowed from the input). */
static bool keep_object(wk_contract *c, wk_contract_moqt *m)
{
    const wk_moqt_stream_reader *r = &m->r;
    if (r->event != WK_MOQT_EVENT_OBJECT && r->event != WK_MOQT_EVENT_FETCH_OBJECT) return true;
    rt_stream *s = m->user;
    CHECK(s->nobj < s->cap);
    rt_obj *ob = &s->obj[s->nobj++];
    ob->sub = r->object;
    ob->fetch = r->fetch_object;
    ob->payload = c->push->src + c->push->pos - r->piece.len;
    return true;
}

/* Decodes w[0..n) in one push (no copy: the objects' slices stay valid); true when the stream
 * ended cleanly. */
static bool collect(wk_moqt_carrier expect, const wk_moqt_read_options *o, const uint8_t *w,
                    size_t n, rt_stream *s)
{
    static wk_contract_moqt m;
    wk_contract_moqt_setup(&m, expect, o);
    m.on_event = keep_object;
    m.user = s;
    s->nobj = 0;
    wk_contract_plan whole = {0, NULL, 0, 0, false, false};
    wk_contract_outcome oc;
    char why[320];
    if (!wk_contract_drive(&wk_contract_moqt_ops, &m, NULL, w, n, &whole, &oc, why, sizeof why)) {
        fprintf(stderr, "moqt reader: %s\n", why);
        CHECK(0);
    }
    if (oc.verdict != WK_DONE) return false;
    const wk_moqt_stream_reader *r = &m.r;
    s->kind = r->kind;
    s->stream_type = r->stream_type;
    s->sub = r->subgroup;
    s->request_id = r->fetch.request_id;
    s->padding_bytes = r->padding_bytes;
    s->padding_zero = true;
    if (r->kind == WK_MOQT_KIND_PADDING)
        for (size_t i = n - (size_t)r->padding_bytes; i < n; i++) s->padding_zero &= w[i] == 0;
    for (size_t i = 0; i < s->nobj; i++) {
        uint64_t pl = s->kind == WK_MOQT_KIND_SUBGROUP ? s->obj[i].sub.payload_length
                                                       : s->obj[i].fetch.payload_length;
        CHECK(s->obj[i].payload >= w && (uint64_t)(w + n - s->obj[i].payload) >= pl);
    }
    return true;
}

/* The structure, offsets aside. */
static uint32_t structure(const rt_stream *s)
{
    uint64_t h[9] = {s->kind, s->stream_type, 0, 0, 0, 0, 0, 0, 0};
    if (s->kind == WK_MOQT_KIND_SUBGROUP) {
        h[2] = s->sub.type;
        h[3] = s->sub.track_alias;
        h[4] = s->sub.group_id;
        h[5] = s->sub.subgroup_id_known;
        h[6] = s->sub.subgroup_id_known ? s->sub.subgroup_id : 0;
        h[7] = s->sub.has_priority;
        h[8] = s->sub.has_priority ? s->sub.publisher_priority : 0;
    } else if (s->kind == WK_MOQT_KIND_FETCH) {
        h[2] = s->request_id;
    } else {
        h[2] = s->padding_bytes;
    }
    uint32_t c = crc(0, h, sizeof h);
    for (size_t i = 0; i < s->nobj; i++) {
        const rt_obj *ob = &s->obj[i];
        if (s->kind == WK_MOQT_KIND_SUBGROUP) {
            const wk_moqt_subgroup_object *o = &ob->sub;
            uint64_t f[] = {o->object_id_delta, o->object_id, o->has_properties, o->properties_len,
                            o->payload_length, o->has_status, o->status,
                            crc(0, o->properties, o->properties_len),
                            crc(0, ob->payload, (size_t)o->payload_length)};
            c = crc(c, f, sizeof f);
        } else {
            const wk_moqt_fetch_object *o = &ob->fetch;
            uint64_t f[] = {o->flags, o->end_of_range, o->first_record, o->has_group_id_delta,
                            o->has_group_id_delta ? o->group_id_delta : 0, o->has_object_id_delta,
                            o->has_object_id_delta ? o->object_id_delta : 0, o->group_id,
                            o->object_id, o->has_subgroup_id,
                            o->has_subgroup_id ? o->subgroup_id : 0, o->has_priority,
                            o->has_priority ? o->publisher_priority : 0, o->has_properties,
                            o->properties_len, o->has_payload_length, o->payload_length,
                            crc(0, o->properties, o->properties_len),
                            crc(0, ob->payload, (size_t)o->payload_length)};
            c = crc(c, f, sizeof f);
        }
    }
    return c;
}

/* Resolved values only (for records written with other flags). */
static uint32_t resolved(const rt_stream *s)
{
    uint32_t c = crc(0, &s->request_id, sizeof s->request_id);
    for (size_t i = 0; i < s->nobj; i++) {
        const wk_moqt_fetch_object *o = &s->obj[i].fetch;
        uint64_t f[] = {o->end_of_range, o->end_of_range ? o->flags : 0, o->group_id, o->object_id,
                        o->has_subgroup_id, o->has_subgroup_id ? o->subgroup_id : 0,
                        o->has_priority ? o->publisher_priority : 0, o->properties_len,
                        crc(0, o->properties, o->properties_len), o->payload_length,
                        crc(0, s->obj[i].payload, (size_t)o->payload_length)};
        c = crc(c, f, sizeof f);
    }
    return c;
}

/* Checks the writer call (size bytes exactly, through wk_contract_encoder_check, the writer
 * untouched by every attempt but the last) and appends what it wrote to buf at *pos. */
static void emit(wk_contract_moqt_call *k, size_t size, uint8_t *buf, size_t *pos, size_t cap)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    char why[320];
    if (!wk_contract_moqt_call_check(k, WK_OK, size, NULL, &bytes, &len, why, sizeof why)) {
        fprintf(stderr, "writer call %d: %s\n", (int)k->op, why);
        CHECK(0);
    }
    CHECK(*pos + len <= cap);
    if (len) memcpy(buf + *pos, bytes, len);
    *pos += len;
    free(bytes);
}

static void size_ok(wk_code c, const wk_error *e)
{
    if (c != WK_OK) {
        fprintf(stderr, "size: %s: %s\n", wk_error_name(e->code), e->msg);
        CHECK(0);
    }
}

/* Encodes *s into buf (capacity cap); returns the length. */
static size_t encode(const rt_stream *s, wk_moqt_group_order order, wk_moqt_end_of_range eor,
                     bool split_payload, bool pick_flags, uint8_t *buf, size_t cap)
{
    size_t pos = 0;
    wk_error e;
    if (s->kind == WK_MOQT_KIND_PADDING) {
        wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_PADDING, .a = s->padding_bytes};
        emit(&k, (size_t)wk_moqt_padding_size(false, s->padding_bytes), buf, &pos, cap);
        return pos;
    }
    if (s->kind == WK_MOQT_KIND_SUBGROUP) {
        wk_moqt_subgroup_writer w;
        memset(&w, 0, sizeof w);
        wk_moqt_subgroup_header h = s->sub;
        wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_SUBGROUP_BEGIN, .sw = &w, .sh = &h};
        emit(&k, wk_moqt_subgroup_header_size(&h), buf, &pos, cap);
        for (size_t i = 0; i < s->nobj; i++) {
            const wk_moqt_subgroup_object *so = &s->obj[i].sub;
            wk_moqt_object_out o;
            memset(&o, 0, sizeof o);
            o.object_id = so->object_id;
            o.properties = so->properties;
            o.properties_len = so->properties_len;
            o.status = so->status;
            o.payload = s->obj[i].payload;
            o.payload_len = so->payload_length;
            uint64_t total = 0;
            size_ok(wk_moqt_subgroup_writer_size(&w, &o, &total, &e), &e);
            k.op = split_payload ? WK_CONTRACT_MOQT_SUBGROUP_FRAMING
                                 : WK_CONTRACT_MOQT_SUBGROUP_WRITE;
            k.obj = &o;
            if (split_payload) {
                emit(&k, (size_t)(total - o.payload_len), buf, &pos, cap);
                CHECK(pos + o.payload_len <= cap);
                if (o.payload_len) memcpy(buf + pos, o.payload, (size_t)o.payload_len);
                pos += (size_t)o.payload_len;
            } else {
                emit(&k, (size_t)total, buf, &pos, cap);
            }
        }
        return pos;
    }
    CHECK(s->kind == WK_MOQT_KIND_FETCH);
    wk_moqt_fetch_writer w;
    memset(&w, 0, sizeof w);
    wk_moqt_fetch_header fh = {s->request_id};
    wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_FETCH_BEGIN, .fw = &w, .a = s->request_id,
                               .order = order, .eor = eor};
    emit(&k, wk_moqt_fetch_header_size(&fh), buf, &pos, cap);
    for (size_t i = 0; i < s->nobj; i++) {
        const wk_moqt_fetch_object *so = &s->obj[i].fetch;
        if (so->end_of_range) {
            size_t sz = 0;
            wk_code c = wk_moqt_fetch_writer_end_of_range_size(&w, so->flags, so->group_id,
                                                               so->object_id, &sz, &e);
            k.op = WK_CONTRACT_MOQT_FETCH_END_OF_RANGE;
            k.a = so->flags;
            k.b = so->group_id;
            k.c = so->object_id;
            size_ok(c, &e);
            emit(&k, sz, buf, &pos, cap);
            continue;
        }
        wk_moqt_fetch_object_out o;
        memset(&o, 0, sizeof o);
        o.flags = so->flags;
        o.group_id = so->group_id;
        o.object_id = so->object_id;
        o.subgroup_id = so->has_subgroup_id ? so->subgroup_id : 0;
        o.publisher_priority = so->publisher_priority;
        o.properties = so->properties;
        o.properties_len = so->properties_len;
        o.payload = s->obj[i].payload;
        o.payload_len = so->payload_length;
        if (pick_flags) o.flags = wk_moqt_fetch_writer_pick_flags(&w, &o, !so->has_subgroup_id);
        uint64_t total = 0;
        size_ok(wk_moqt_fetch_writer_size(&w, &o, &total, &e), &e);
        k.op = WK_CONTRACT_MOQT_FETCH_WRITE;
        k.fobj = &o;
        emit(&k, (size_t)total, buf, &pos, cap);
    }
    return pos;
}

static void datagram_roundtrip(const wk_moqt_read_options *o, const uint8_t *p, size_t n)
{
    wk_moqt_datagram d, d2, d3;
    wk_error e;
    if (wk_moqt_datagram_decode(&d, &(wk_in){p, n, 0}, o, &e) != WK_DONE) return;
    size_t sz = wk_moqt_datagram_size(&d);
    CHECK(sz <= n);
    uint8_t *b1 = malloc(sz + 1), *b2 = malloc(sz + 1);
    CHECK(b1 && b2);
    bool nonzero_pad = false;
    if (d.padding)
        for (size_t i = 0; i < d.payload_len; i++) nonzero_pad |= d.payload[i] != 0;
    wk_out out = {b1, sz, 0};
    if (d.padding) CHECK(wk_moqt_datagram_encode(&d, &out, &e) == WK_DONE);
    else CHECK(wk_moqt_datagram_encode_checked(&d, &out, &e) == WK_DONE);
    CHECK(out.pos == sz);
    if (sz == n) CHECK(memcmp(b1, p, n) == 0);
    CHECK(wk_moqt_datagram_decode(&d2, &(wk_in){b1, sz, 0}, o, &e) == WK_DONE);
    CHECK(d2.type == d.type && d2.padding == d.padding && d2.payload_len == d.payload_len);
    if (!d.padding) {
        CHECK(d2.track_alias == d.track_alias && d2.group_id == d.group_id &&
              d2.object_id == d.object_id && d2.has_priority == d.has_priority &&
              d2.publisher_priority == d.publisher_priority && d2.status == d.status &&
              d2.has_status == d.has_status && d2.properties_len == d.properties_len);
        if (d.properties_len) CHECK(memcmp(d2.properties, d.properties, d.properties_len) == 0);
    }
    if (d.payload_len) CHECK(memcmp(d2.payload, d.payload, d.payload_len) == 0);
    wk_out out2 = {b2, sz, 0};
    CHECK(wk_moqt_datagram_encode(&d2, &out2, &e) == WK_DONE && out2.pos == sz);
    CHECK(memcmp(b1, b2, sz) == 0);
    CHECK(wk_moqt_datagram_decode(&d3, &(wk_in){b2, sz, 0}, o, &e) == WK_DONE);
    (void)nonzero_pad;
    free(b1);
    free(b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned carrier = data[0] & 3;
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    o.group_order = (data[0] & 4) ? WK_MOQT_GROUP_ORDER_DESCENDING : WK_MOQT_GROUP_ORDER_ASCENDING;
    o.end_of_range = (data[0] & 8) ? WK_MOQT_END_OF_RANGE_ABSOLUTE : WK_MOQT_END_OF_RANGE_DELTA;
    bool split_payload = data[0] & 0x10, also_pick_flags = data[0] & 0x20;
    const uint8_t *w = data + 1;
    size_t n = size - 1;
    if (carrier == 2) {
        datagram_roundtrip(&o, w, n);
        return 0;
    }
    wk_moqt_carrier expect = carrier == 0   ? WK_MOQT_CARRIER_SUBGROUP
                             : carrier == 1 ? WK_MOQT_CARRIER_FETCH
                                            : WK_MOQT_CARRIER_ANY;
    rt_stream a, b, c;
    memset(&a, 0, sizeof a);
    a.cap = n + 1;
    a.obj = malloc(a.cap * sizeof *a.obj);
    CHECK(a.obj != NULL);
    if (!collect(expect, &o, w, n, &a)) {
        free(a.obj);
        return 0;
    }
    size_t cap = n + 64;
    uint8_t *e1 = malloc(cap), *e2 = malloc(cap);
    CHECK(e1 && e2);
    size_t l1 = encode(&a, o.group_order, o.end_of_range, split_payload, false, e1, cap);
    CHECK(l1 <= n);
    if (l1 == n && (a.kind != WK_MOQT_KIND_PADDING || a.padding_zero)) CHECK(memcmp(e1, w, n) == 0);
    b = a;
    b.obj = malloc(b.cap * sizeof *b.obj);
    CHECK(b.obj != NULL);
    CHECK(collect(expect, &o, e1, l1, &b));
    CHECK(b.nobj == a.nobj);
    /* padding bytes re-encode as zeros: compare counts only */
    CHECK(structure(&a) == structure(&b));
    size_t l2 = encode(&b, o.group_order, o.end_of_range, !split_payload, false, e2, cap);
    CHECK(l2 == l1 && memcmp(e1, e2, l1) == 0);
    if (also_pick_flags && a.kind == WK_MOQT_KIND_FETCH) {
        size_t cap3 = 2 * n + 64;
        uint8_t *e3 = malloc(cap3);
        CHECK(e3 != NULL);
        size_t l3 = encode(&a, o.group_order, o.end_of_range, false, true, e3, cap3);
        c = a;
        c.obj = malloc(c.cap * sizeof *c.obj);
        CHECK(c.obj != NULL);
        CHECK(collect(expect, &o, e3, l3, &c));
        CHECK(c.nobj == a.nobj && resolved(&c) == resolved(&a));
        free(c.obj);
        free(e3);
    }
    free(a.obj);
    free(b.obj);
    free(e1);
    free(e2);
    return 0;
}
