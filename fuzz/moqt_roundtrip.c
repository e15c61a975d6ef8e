/* libFuzzer target: MoQT draft-20 decode -> encode -> decode for subgroup streams, fetch
 * streams, padding streams and datagrams (moqt.h readers and writers).
 *
 * Input: one header byte, then a stream (the end of the input is FIN) or one datagram.
 *   byte 0  bits 0-1 carrier (0 subgroup, 1 fetch, 2 datagram, 3 any stream), bit 2 group order
 *           Descending, bit 3 End of Range reading B (absolute), bit 4 subgroup objects written
 *           as framing (_object_header) plus the caller's copy of the payload instead of
 *           _object, bit 5 fetch: also re-encode with wk_moqt_fetch_writer_flags_for's flags
 *
 * Whatever decodes cleanly (default strict options, one push, finish OK) is re-encoded with the
 * writers: wk_moqt_subgroup_writer_begin/_object(_header), wk_moqt_fetch_writer_begin/_object/
 * _end_of_range (the decoded Serialization Flags and resolved IDs, the same group order and End
 * of Range reading), wk_moqt_padding_encode, wk_moqt_datagram_encode_checked. Checked:
 *   - every writer call succeeds; with one byte less of room than the item needs (header,
 *     object framing plus payload) it answers WK_NEED_OUTPUT and writes nothing;
 *     _object_header_size + the payload is exactly what _object writes; both subgroup paths give
 *     the same bytes;
 *   - the encoding decodes cleanly to the same structure (header fields, every object's or
 *     record's resolved fields, wire deltas, flags, properties and payload bytes; offsets aside);
 *   - it is never longer than the input, and when it is as long, it is the input: canonical input
 *     re-encodes to itself (padding: when its bytes are zero);
 *   - re-encoding the decoded encoding gives the same bytes again (a fixed point);
 *   - fetch, bit 5: the records re-encoded with the flags wk_moqt_fetch_writer_flags_for picks
 *     decode to the same resolved Group / Subgroup / Object IDs, priorities, properties and
 *     payloads (and End of Range markers). */
#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"

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

/* Decodes w[0..n) in one push; true when finish is OK. */
static bool collect(wk_moqt_carrier expect, const wk_moqt_read_options *o, const uint8_t *w,
                    size_t n, rt_stream *s)
{
    static wk_moqt_stream_reader r;
    wk_moqt_stream_reader_init(&r, expect, o);
    s->nobj = 0;
    wk_in in = {w, n, 0};
    wk_error e;
    for (;;) {
        wk_moqt_event ev = wk_moqt_stream_read(&r, &in, &e);
        if (ev == WK_MOQT_EV_ERROR) return false;
        if (ev == WK_MOQT_EV_NEED_INPUT) break;
        if (ev == WK_MOQT_EV_OBJECT || ev == WK_MOQT_EV_FETCH_OBJECT) {
            CHECK(s->nobj < s->cap);
            rt_obj *ob = &s->obj[s->nobj++];
            ob->sub = r.object;
            ob->fetch = r.fetch_object;
            ob->payload = in.src + in.pos - r.piece.len;
            uint64_t pl = ev == WK_MOQT_EV_OBJECT ? r.object.payload_length
                                                  : r.fetch_object.payload_length;
            /* one push: the payload lies in the input (checked once finish accepts) */
            CHECK(ob->payload >= w && (uint64_t)(w + n - ob->payload) >= (r.piece.last ? pl : 0));
        }
    }
    if (wk_moqt_stream_reader_finish(&r, &e) != WK_OK) return false;
    s->kind = r.kind;
    s->stream_type = r.stream_type;
    s->sub = r.subgroup;
    s->request_id = r.fetch.request_id;
    s->padding_bytes = r.padding_bytes;
    s->padding_zero = true;
    if (r.kind == WK_MOQT_KIND_PADDING)
        for (size_t i = n - (size_t)r.padding_bytes; i < n; i++) s->padding_zero &= w[i] == 0;
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

/* Runs a writer call first with one byte less of room than `need` (NEED_OUTPUT, untouched), then
 * with room; returns the bytes written. */
#define WRITE_TWICE(call_with_out, need)                                                          \
    do {                                                                                          \
        size_t need_ = (need);                                                                    \
        CHECK(pos + need_ <= cap);                                                                \
        if (need_ > 0) {                                                                          \
            memset(buf + pos, 0xA5, need_);                                                       \
            wk_out out = {buf + pos, need_ - 1, 0};                                               \
            CHECK((call_with_out) == WK_NEED_OUTPUT && out.pos == 0);                             \
            for (size_t k_ = 0; k_ < need_; k_++) CHECK(buf[pos + k_] == 0xA5);                   \
        }                                                                                         \
        wk_out out = {buf + pos, need_, 0};                                                       \
        wk_result r_ = (call_with_out);                                                           \
        if (r_ != WK_DONE) {                                                                      \
            fprintf(stderr, "writer: %s: %s\n", wk_error_name(e.code), e.msg);                    \
            CHECK(0);                                                                             \
        }                                                                                         \
        CHECK(out.pos == need_);                                                                  \
        pos += out.pos;                                                                           \
    } while (0)

/* Encodes *s into buf (capacity cap); returns the length. */
static size_t encode(const rt_stream *s, wk_moqt_group_order order, wk_moqt_end_of_range eor,
                     bool split_payload, bool flags_for, uint8_t *buf, size_t cap)
{
    size_t pos = 0;
    wk_error e;
    if (s->kind == WK_MOQT_KIND_PADDING) {
        WRITE_TWICE(wk_moqt_padding_encode(false, s->padding_bytes, &out, &e),
                    wk_moqt_int_len(WK_MOQT_STREAM_TYPE_PADDING) + (size_t)s->padding_bytes);
        return pos;
    }
    if (s->kind == WK_MOQT_KIND_SUBGROUP) {
        wk_moqt_subgroup_writer w;
        memset(&w, 0, sizeof w);
        wk_moqt_subgroup_header h = s->sub;
        WRITE_TWICE(wk_moqt_subgroup_writer_begin(&w, &h, &out, &e),
                    wk_moqt_subgroup_header_size(&h));
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
            size_t fh = wk_moqt_subgroup_writer_object_header_size(&w, &o);
            if (split_payload) {
                WRITE_TWICE(wk_moqt_subgroup_writer_object_header(&w, &o, &out, &e), fh);
                CHECK(pos + o.payload_len <= cap);
                if (o.payload_len) memcpy(buf + pos, o.payload, (size_t)o.payload_len);
                pos += (size_t)o.payload_len;
            } else {
                WRITE_TWICE(wk_moqt_subgroup_writer_object(&w, &o, &out, &e),
                            fh + (size_t)o.payload_len);
            }
        }
        return pos;
    }
    CHECK(s->kind == WK_MOQT_KIND_FETCH);
    wk_moqt_fetch_writer w;
    memset(&w, 0, sizeof w);
    wk_moqt_fetch_header fh = {s->request_id};
    WRITE_TWICE(wk_moqt_fetch_writer_begin(&w, s->request_id, order, eor, &out, &e),
                wk_moqt_fetch_header_size(&fh));
    for (size_t i = 0; i < s->nobj; i++) {
        const wk_moqt_fetch_object *so = &s->obj[i].fetch;
        if (so->end_of_range) {
            /* no size function for markers: room first, then the NEED_OUTPUT probe */
            size_t room = cap - pos;
            wk_out out = {buf + pos, room, 0};
            wk_result rr =
                wk_moqt_fetch_writer_end_of_range(&w, so->flags, so->group_id, so->object_id, &out, &e);
            if (rr != WK_DONE) {
                fprintf(stderr, "end_of_range: %s: %s\n", wk_error_name(e.code), e.msg);
                CHECK(0);
            }
            pos += out.pos;
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
        if (flags_for) o.flags = wk_moqt_fetch_writer_flags_for(&w, &o, !so->has_subgroup_id);
        size_t hs = wk_moqt_fetch_writer_object_header_size(&w, &o, &e);
        if (hs == 0) {
            fprintf(stderr, "fetch object_header_size: %s: %s\n", wk_error_name(e.code), e.msg);
            CHECK(0);
        }
        WRITE_TWICE(wk_moqt_fetch_writer_object(&w, &o, &out, &e), hs + (size_t)o.payload_len);
    }
    return pos;
}

static void datagram_roundtrip(const wk_moqt_read_options *o, const uint8_t *p, size_t n)
{
    wk_moqt_datagram d, d2, d3;
    wk_error e;
    if (wk_moqt_datagram_decode(p, n, o, &d, &e) != WK_OK) return;
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
    CHECK(wk_moqt_datagram_decode(b1, sz, o, &d2, &e) == WK_OK);
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
    CHECK(wk_moqt_datagram_decode(b2, sz, o, &d3, &e) == WK_OK);
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
    bool split_payload = data[0] & 0x10, also_flags_for = data[0] & 0x20;
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
    if (also_flags_for && a.kind == WK_MOQT_KIND_FETCH) {
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
