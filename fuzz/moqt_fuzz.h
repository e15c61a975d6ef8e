/* Shared code of the MoQT stream fuzz targets (moqt_subgroup_stream.c, moqt_fetch_stream.c):
 * the driver of wk_moqt_stream_reader with its per-event checks, and a reference reader written
 * here from spec 2, 3, 5, 6 and 7 (whole-buffer, independent of src/moqt) that computes the same
 * event record. Included by exactly those two files; everything is static.
 *
 * Event record: every event contributes a fixed list of its fields (header fields, each object's
 * or record's resolved fields, a CRC of its properties bytes, a CRC of its payload bytes once the
 * payload is complete) to a running CRC, so two runs agree on the record exactly when they
 * reported the same events with the same fields and bytes, however the input was split. */
#ifndef WK_FUZZ_MOQT_FUZZ_H
#define WK_FUZZ_MOQT_FUZZ_H

#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"

static const size_t mf_pushes[8] = {1, 2, 3, 5, 8, 64, 1000, (size_t)-1};
/* properties scratch capacities: index 0 = NULL (the reader's built-in 256 bytes) */
static const size_t mf_caps[8] = {0, 0, 1, 4, 16, 300, 4096, 70000};
#define MF_SCRATCH_MAX 70000

static uint32_t mf_crc(uint32_t h, const void *p, size_t n)
{
    return (uint32_t)crc32((uLong)h, n ? p : (const void *)"", (uInt)n);
}

static uint32_t mf_rec(uint32_t h, const uint64_t *f, size_t n)
{
    return mf_crc(h, f, n * sizeof *f);
}

enum { MF_HDR_SUB = 1, MF_HDR_FETCH, MF_HDR_PAD, MF_OBJ, MF_FOBJ, MF_PAYLOAD_DONE, MF_TAIL };

static uint32_t mf_rec_subgroup_header(uint32_t h, uint64_t stream_type,
                                       const wk_moqt_subgroup_header *s)
{
    uint64_t f[] = {MF_HDR_SUB, stream_type, s->type, s->track_alias, s->group_id,
                    s->subgroup_id_known, s->subgroup_id_known ? s->subgroup_id : 0,
                    s->has_priority, s->has_priority ? s->publisher_priority : 0};
    return mf_rec(h, f, sizeof f / sizeof f[0]);
}

static uint32_t mf_rec_object(uint32_t h, const wk_moqt_subgroup_object *o)
{
    uint64_t f[] = {MF_OBJ, o->object_id_delta, o->object_id, o->has_properties,
                    o->properties_len, o->payload_length, o->has_status, o->status, o->offset,
                    mf_crc(0, o->properties, o->properties_len)};
    return mf_rec(h, f, sizeof f / sizeof f[0]);
}

static uint32_t mf_rec_fetch_object(uint32_t h, const wk_moqt_fetch_object *o)
{
    uint64_t f[] = {MF_FOBJ, o->flags, o->end_of_range, o->first_record,
                    o->has_group_id_delta, o->has_group_id_delta ? o->group_id_delta : 0,
                    o->has_object_id_delta, o->has_object_id_delta ? o->object_id_delta : 0,
                    o->group_id, o->object_id, o->has_subgroup_id,
                    o->has_subgroup_id ? o->subgroup_id : 0, o->has_priority,
                    o->has_priority ? o->publisher_priority : 0, o->has_properties,
                    o->properties_len, o->has_payload_length, o->payload_length, o->offset,
                    mf_crc(0, o->properties, o->properties_len)};
    return mf_rec(h, f, sizeof f / sizeof f[0]);
}

typedef struct mf_outcome {
    wk_code code;      /* WK_OK, the read error, or finish's verdict */
    uint64_t offset;
    uint32_t record;   /* event record (see above) */
    uint64_t objects;
    uint64_t consumed;
} mf_outcome;

static bool mf_moqt_code(wk_code c) { return c >= 500 && c < 700; }

static void mf_check_error(const wk_error *e, size_t n)
{
    CHECK(e->code != WK_OK && mf_moqt_code(e->code));
    CHECK(e->category == WK_CAT_PEER_PROTOCOL);
    CHECK(wk_code_category(e->code) == WK_CAT_PEER_PROTOCOL);
    CHECK(e->has_offset && e->offset <= n);
    const char *cat = wk_moqt_error_category(e->code);
    CHECK(strcmp(cat, "ok") != 0 && strcmp(cat, "error") != 0);
    CHECK((strcmp(cat, "incomplete") == 0) == (e->code == WK_ERR_MOQT_TRUNCATED));
    CHECK(wk_code_is_truncation(e->code) == (e->code == WK_ERR_MOQT_TRUNCATED));
}

/* ---------------------------------------------------------------------------------------------
 * The reader under test
 * ------------------------------------------------------------------------------------------- */
static uint8_t mf_scratch[MF_SCRATCH_MAX];

/* A caller scratch counts only with a non-zero capacity (reader.c; moqt.h says "NULL = built-in") */
static size_t mf_effective_cap(const wk_moqt_read_options *o)
{
    return o->properties_buf && o->properties_cap ? o->properties_cap : WK_MOQT_PROPERTIES_INLINE;
}

/* Reads w[0..n) in pushes of `push` bytes with reader *r (initialized here). */
static mf_outcome mf_run(wk_moqt_stream_reader *r, wk_moqt_carrier expect,
                         const wk_moqt_read_options *o, const uint8_t *w, size_t n, size_t push)
{
    mf_outcome oc = {WK_OK, 0, 0, 0, 0};
    wk_moqt_stream_reader_init(r, expect, o);
    CHECK(r->kind == WK_MOQT_KIND_NONE && wk_moqt_stream_reader_consumed(r) == 0);
    bool header = false, open = false; /* header seen; an object's payload in progress */
    uint64_t pay_total = 0, pay_done = 0, boundary = 0, events = 0, prev_id = 0;
    bool have_prev = false, ended = false;
    uint32_t pay_crc = 0;
    size_t cap = mf_effective_cap(o);
    size_t pos = 0;
    wk_error e;
    while (pos < n) {
        size_t take = n - pos < push ? n - pos : push;
        wk_in in = {w + pos, take, 0};
        for (;;) {
            size_t in0 = in.pos;
            wk_error_clear(&e);
            wk_moqt_event ev = wk_moqt_stream_read(r, &in, &e);
            CHECK(in.pos >= in0 && in.pos <= in.size);
            oc.consumed += in.pos - in0;
            if (ev == WK_MOQT_EV_ERROR) {
                mf_check_error(&e, n);
                CHECK(e.code != WK_ERR_MOQT_TRUNCATED); /* truncation only at finish */
                CHECK(e.offset < pos + in.size); /* inside the bytes pushed so far */
                /* sticky: nothing consumed, same error, finish repeats it */
                static const uint8_t one[1] = {0};
                wk_in again = {one, 1, 0};
                wk_error e2;
                CHECK(wk_moqt_stream_read(r, &again, &e2) == WK_MOQT_EV_ERROR);
                CHECK(again.pos == 0 && e2.code == e.code && e2.offset == e.offset);
                CHECK(wk_moqt_stream_reader_finish(r, &e2) == e.code && e2.offset == e.offset);
                CHECK(!wk_moqt_stream_reader_at_boundary(r));
                oc.code = e.code;
                oc.offset = e.offset;
                oc.objects = r->objects;
                return oc;
            }
            CHECK(wk_moqt_stream_reader_consumed(r) == oc.consumed);
            if (ev == WK_MOQT_EV_NEED_INPUT) {
                CHECK(in.pos == in.size);
                break;
            }
            CHECK(in.pos > in0); /* every event covers bytes of this push */
            CHECK(++events <= n);
            const wk_moqt_payload_piece *pc = &r->piece;
            switch (ev) {
            case WK_MOQT_EV_SUBGROUP_HEADER: {
                CHECK(!header && expect != WK_MOQT_CARRIER_FETCH);
                header = true;
                CHECK(r->kind == WK_MOQT_KIND_SUBGROUP && r->stream_type == r->subgroup.type);
                const wk_moqt_subgroup_header *s = &r->subgroup;
                CHECK(wk_moqt_subgroup_type_is_valid(s->type));
                CHECK(s->has_priority == !(s->type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY));
                wk_moqt_subgroup_id_mode m = wk_moqt_subgroup_type_id_mode(s->type);
                CHECK(s->subgroup_id_known == (m != WK_MOQT_SUBGROUP_ID_FIRST_OBJECT));
                if (m == WK_MOQT_SUBGROUP_ID_ZERO) CHECK(s->subgroup_id == 0);
                /* the one-shot header parser agrees on the bytes seen so far */
                wk_moqt_subgroup_header h2;
                size_t used = 0;
                wk_error e3;
                CHECK(wk_moqt_subgroup_header_decode(w, n, &h2, &used, &e3) == WK_OK);
                CHECK(used == oc.consumed);
                CHECK(mf_rec_subgroup_header(0, r->stream_type, &h2) ==
                      mf_rec_subgroup_header(0, r->stream_type, s));
                oc.record = mf_rec_subgroup_header(oc.record, r->stream_type, s);
                boundary = oc.consumed;
                break;
            }
            case WK_MOQT_EV_FETCH_HEADER: {
                CHECK(!header && expect != WK_MOQT_CARRIER_SUBGROUP);
                header = true;
                CHECK(r->kind == WK_MOQT_KIND_FETCH && r->stream_type == WK_MOQT_STREAM_TYPE_FETCH);
                wk_moqt_fetch_header f2;
                size_t used = 0;
                wk_error e3;
                CHECK(wk_moqt_fetch_header_decode(w, n, &f2, &used, &e3) == WK_OK);
                CHECK(used == oc.consumed && f2.request_id == r->fetch.request_id);
                uint64_t f[] = {MF_HDR_FETCH, r->fetch.request_id};
                oc.record = mf_rec(oc.record, f, 2);
                boundary = oc.consumed;
                break;
            }
            case WK_MOQT_EV_PADDING: {
                CHECK(!header);
                header = true;
                CHECK(r->kind == WK_MOQT_KIND_PADDING &&
                      r->stream_type == WK_MOQT_STREAM_TYPE_PADDING);
                uint64_t f[] = {MF_HDR_PAD, r->stream_type};
                oc.record = mf_rec(oc.record, f, 2);
                boundary = oc.consumed;
                break;
            }
            case WK_MOQT_EV_OBJECT:
            case WK_MOQT_EV_FETCH_OBJECT: {
                CHECK(header && !open);
                bool sub = ev == WK_MOQT_EV_OBJECT;
                CHECK(r->kind == (sub ? WK_MOQT_KIND_SUBGROUP : WK_MOQT_KIND_FETCH));
                const uint8_t *props;
                size_t plen;
                uint64_t total, off;
                if (sub) {
                    const wk_moqt_subgroup_object *ob = &r->object;
                    props = ob->properties;
                    plen = ob->properties_len;
                    total = ob->payload_length;
                    off = ob->offset;
                    CHECK(ob->has_properties == !!(r->subgroup.type & WK_MOQT_SUBGROUP_PROPERTIES));
                    CHECK(ob->has_status == (ob->payload_length == 0));
                    if (!ob->has_status) CHECK(ob->status == WK_MOQT_STATUS_NORMAL);
                    else if (!o->allow_unknown_status)
                        CHECK(wk_moqt_status_is_assigned(ob->status));
                    CHECK(!ended || o->allow_objects_after_end);
                    if (ob->has_status && (ob->status == WK_MOQT_STATUS_END_OF_GROUP ||
                                           ob->status == WK_MOQT_STATUS_END_OF_TRACK))
                        ended = true;
                    CHECK(ob->object_id == (have_prev ? prev_id + ob->object_id_delta + 1
                                                      : ob->object_id_delta));
                    CHECK(!have_prev || ob->object_id > prev_id);
                    have_prev = true;
                    prev_id = ob->object_id;
                    if (wk_moqt_subgroup_type_id_mode(r->subgroup.type) ==
                        WK_MOQT_SUBGROUP_ID_FIRST_OBJECT) {
                        CHECK(r->subgroup.subgroup_id_known);
                        if (r->objects == 1) CHECK(r->subgroup.subgroup_id == ob->object_id);
                    }
                    oc.record = mf_rec_object(oc.record, ob);
                } else {
                    const wk_moqt_fetch_object *fo = &r->fetch_object;
                    props = fo->properties;
                    plen = fo->properties_len;
                    total = fo->payload_length;
                    off = fo->offset;
                    CHECK(fo->end_of_range == wk_moqt_fetch_flags_is_end_of_range(fo->flags));
                    CHECK(fo->end_of_range || fo->flags <= WK_MOQT_FETCH_FLAGS_MAX);
                    CHECK(fo->first_record == (r->objects == 1));
                    if (fo->end_of_range) {
                        CHECK(!fo->has_subgroup_id && !fo->has_priority && !fo->has_properties);
                        CHECK(fo->payload_length == 0);
                        bool abs = o->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
                        CHECK(fo->has_payload_length == !abs);
                        CHECK(fo->has_group_id_delta == !abs && fo->has_object_id_delta == !abs);
                    } else {
                        CHECK(fo->has_payload_length && fo->has_priority);
                        CHECK(fo->has_group_id_delta == !!(fo->flags & WK_MOQT_FETCH_GROUP_ID_DELTA));
                        CHECK(fo->has_object_id_delta ==
                              !!(fo->flags & WK_MOQT_FETCH_OBJECT_ID_DELTA));
                        CHECK(fo->has_subgroup_id == !(fo->flags & WK_MOQT_FETCH_DATAGRAM));
                        CHECK(fo->has_properties == !!(fo->flags & WK_MOQT_FETCH_PROPERTIES));
                    }
                    oc.record = mf_rec_fetch_object(oc.record, fo);
                }
                CHECK(r->objects == ++oc.objects);
                CHECK(off == boundary);
                CHECK(props != NULL || plen == 0);
                CHECK(plen <= cap);
                if (plen && !o->properties_length_only)
                    CHECK(wk_moqt_properties_validate(props, plen, 0, NULL, &e) == WK_OK);
                /* the properties slice: the caller's input (this push) or the scratch */
                if (plen) {
                    bool in_push = props >= in.src && props + plen <= in.src + in.pos;
                    const uint8_t *sb = o->properties_buf && o->properties_cap ? o->properties_buf
                                                                               : r->s.inline_props;
                    bool in_scratch = props >= sb && props + plen <= sb + cap;
                    CHECK(in_push || in_scratch);
                    if (push >= n) CHECK(in_push); /* one push: always borrowed */
                }
                pay_total = total;
                pay_done = 0;
                pay_crc = 0;
                CHECK(pc->offset == 0);
                open = true;
            }
                /* fall through */ /* to the first payload piece */
            case WK_MOQT_EV_PAYLOAD:
                CHECK(open);
                if (ev == WK_MOQT_EV_PAYLOAD) CHECK(pc->len > 0);
                CHECK(pc->offset == pay_done && pc->len <= pay_total - pay_done);
                if (pc->len) {
                    /* borrowed from this push, ending where the reader stopped */
                    CHECK(pc->data >= in.src + in0 && pc->data + pc->len == in.src + in.pos);
                }
                pay_done += pc->len;
                pay_crc = mf_crc(pay_crc, pc->data, pc->len);
                CHECK(pc->last == (pay_done == pay_total));
                if (pc->last) {
                    open = false;
                    uint64_t f[] = {MF_PAYLOAD_DONE, pay_total, pay_crc};
                    oc.record = mf_rec(oc.record, f, 3);
                    boundary = oc.consumed;
                }
                CHECK(wk_moqt_stream_reader_at_boundary(r) == !open);
                break;
            default:
                CHECK(0);
            }
        }
        pos += in.pos;
    }
    CHECK(oc.consumed == n);
    if (r->kind == WK_MOQT_KIND_PADDING) {
        uint64_t f[] = {MF_TAIL, r->padding_bytes};
        oc.record = mf_rec(oc.record, f, 2);
        CHECK(r->padding_bytes == n - boundary);
    } else if (open) {
        uint64_t f[] = {MF_TAIL, pay_done, pay_crc};
        oc.record = mf_rec(oc.record, f, 3);
    }
    bool at = wk_moqt_stream_reader_at_boundary(r);
    wk_code c = wk_moqt_stream_reader_finish(r, &e);
    CHECK(at == (c == WK_OK));
    if (c != WK_OK) {
        CHECK(c == WK_ERR_MOQT_TRUNCATED && e.code == c);
        mf_check_error(&e, n);
        CHECK(e.offset == n);
        wk_error e2;
        CHECK(wk_moqt_stream_reader_finish(r, &e2) == c && e2.offset == n); /* sticky */
        oc.offset = e.offset;
    } else {
        CHECK(header && !open);
        CHECK(boundary == n || r->kind == WK_MOQT_KIND_PADDING);
    }
    oc.code = c;
    return oc;
}

/* ---------------------------------------------------------------------------------------------
 * Reference reader (spec 2, 3, 5, 6, 7), whole buffer, written from the spec and moqt.h's
 * decisions
 * ------------------------------------------------------------------------------------------- */
typedef struct mf_ref {
    const uint8_t *w;
    size_t n, pos;
    wk_code code;
    uint64_t offset;
} mf_ref;

static bool ref_fail(mf_ref *x, wk_code c, uint64_t off)
{
    x->code = c;
    x->offset = off;
    return false;
}

/* the MoQT integer: leading ones give the length; any length form accepted */
static bool ref_int(mf_ref *x, uint64_t *v)
{
    if (x->pos >= x->n) return ref_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint8_t b = x->w[x->pos];
    unsigned ones = 0;
    while (ones < 8 && (b & (0x80u >> ones))) ones++;
    size_t len = ones + 1;
    if (x->n - x->pos < len) return ref_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint64_t val = ones == 8 ? 0 : (uint64_t)(b & (0xFFu >> (ones + 1)));
    for (size_t i = 1; i < len; i++) val = val << 8 | x->w[x->pos + i];
    x->pos += len;
    *v = val;
    return true;
}

static bool ref_byte(mf_ref *x, uint8_t *v)
{
    if (x->pos >= x->n) return ref_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    *v = x->w[x->pos++];
    return true;
}

/* Pairs p[0..len) at stream offset base: even type one integer, odd type length <= 65535 and
 * bytes; types accumulate; everything inside the block. */
static bool ref_pairs(mf_ref *x, const uint8_t *p, size_t len, uint64_t base)
{
    mf_ref b = {p, len, 0, WK_OK, 0};
    uint64_t type = 0;
    while (b.pos < len) {
        uint64_t start = b.pos, d, v;
        if (!ref_int(&b, &d)) return ref_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (d > UINT64_MAX - type) return ref_fail(x, WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, base + start);
        type += d;
        if (!ref_int(&b, &v)) return ref_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (type & 1) {
            if (v > WK_MOQT_PROP_VALUE_MAX_LEN)
                return ref_fail(x, WK_ERR_MOQT_PROPERTY_LENGTH, base + start);
            if (len - b.pos < v) return ref_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
            b.pos += (size_t)v;
        }
    }
    return true;
}

/* Properties Length and block; *p and *plen give the pairs. */
static bool ref_props(mf_ref *x, const wk_moqt_read_options *o, const uint8_t **p, size_t *plen)
{
    uint64_t at = x->pos, len;
    if (!ref_int(x, &len)) return false;
    if (len > mf_effective_cap(o)) return ref_fail(x, WK_ERR_MOQT_PROPERTIES_TOO_LARGE, at);
    if (x->n - x->pos < len) return ref_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    *p = x->w + x->pos;
    *plen = (size_t)len;
    x->pos += (size_t)len;
    return true;
}

typedef struct ref_outcome {
    wk_code code;
    uint64_t offset;
    uint32_t record;
} ref_outcome;

static ref_outcome ref_read(wk_moqt_carrier expect, const wk_moqt_read_options *o,
                            const uint8_t *w, size_t n)
{
    mf_ref x = {w, n, 0, WK_OK, 0};
    ref_outcome r = {WK_OK, 0, 0};
    uint64_t type;
    bool ok = true;
    if (!ref_int(&x, &type)) goto out;
    /* spec 2 and moqt.h: padding accepted whatever is expected; 0x05 fetch; 0x2F00 setup */
    if (type == WK_MOQT_STREAM_TYPE_PADDING) {
        uint64_t f[] = {MF_HDR_PAD, type};
        r.record = mf_rec(r.record, f, 2);
        size_t start = x.pos;
        if (o->strict_padding)
            for (size_t i = x.pos; i < n; i++)
                if (w[i]) {
                    ref_fail(&x, WK_ERR_MOQT_PADDING_NONZERO, i);
                    goto out;
                }
        uint64_t g[] = {MF_TAIL, n - start};
        r.record = mf_rec(r.record, g, 2);
        goto out;
    }
    bool fetch;
    if (expect == WK_MOQT_CARRIER_FETCH) {
        if (type != WK_MOQT_STREAM_TYPE_FETCH) {
            ref_fail(&x, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0);
            goto out;
        }
        fetch = true;
    } else if (type == WK_MOQT_STREAM_TYPE_FETCH || type == WK_MOQT_STREAM_TYPE_SETUP) {
        if (expect == WK_MOQT_CARRIER_SUBGROUP || type == WK_MOQT_STREAM_TYPE_SETUP) {
            ref_fail(&x, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0);
            goto out;
        }
        fetch = true;
    } else if (expect == WK_MOQT_CARRIER_ANY && (type >= 128 || !(type & 0x10))) {
        ref_fail(&x, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, 0);
        goto out;
    } else {
        /* the three subgroup conditions, in the draft's order */
        wk_code c = type >= 128 ? WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE
                    : !(type & 0x10) ? WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR
                    : ((type >> 1) & 3) == 3 ? WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED
                                             : WK_OK;
        if (c != WK_OK) {
            ref_fail(&x, c, 0);
            goto out;
        }
        fetch = false;
    }

    if (!fetch) {
        wk_moqt_subgroup_header h;
        memset(&h, 0, sizeof h);
        h.type = type;
        unsigned mode = (unsigned)(type >> 1) & 3;
        if (!ref_int(&x, &h.track_alias) || !ref_int(&x, &h.group_id)) goto out;
        h.subgroup_id_known = mode != 1;
        if (mode == 2 && !ref_int(&x, &h.subgroup_id)) goto out;
        h.has_priority = !(type & 0x20);
        if (h.has_priority && !ref_byte(&x, &h.publisher_priority)) goto out;
        r.record = mf_rec_subgroup_header(r.record, type, &h);
        bool have_prev = false, ended = false;
        uint64_t prev = 0;
        while (x.pos < n) {
            wk_moqt_subgroup_object ob;
            memset(&ob, 0, sizeof ob);
            ob.offset = x.pos;
            if (!ref_int(&x, &ob.object_id_delta)) goto out;
            if (ended && !o->allow_objects_after_end) {
                ref_fail(&x, WK_ERR_MOQT_OBJECT_AFTER_END, ob.offset);
                goto out;
            }
            if (have_prev) {
                if (prev == UINT64_MAX || ob.object_id_delta > UINT64_MAX - prev - 1) {
                    ref_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, ob.offset);
                    goto out;
                }
                ob.object_id = prev + 1 + ob.object_id_delta;
            } else {
                ob.object_id = ob.object_id_delta;
            }
            ob.has_properties = type & 1;
            uint64_t props_at = 0;
            if (ob.has_properties) {
                if (!ref_props(&x, o, &ob.properties, &ob.properties_len)) goto out;
                props_at = x.pos - ob.properties_len;
            }
            if (!ref_int(&x, &ob.payload_length)) goto out;
            if (ob.payload_length == 0) {
                uint64_t at = x.pos;
                ob.has_status = true;
                if (!ref_int(&x, &ob.status)) goto out;
                if (!o->allow_unknown_status && !wk_moqt_status_is_assigned(ob.status)) {
                    ref_fail(&x, WK_ERR_MOQT_UNKNOWN_STATUS, at);
                    goto out;
                }
                if (ob.status == 3 || ob.status == 4) ended = true;
            }
            /* the pairs are validated once the framing is complete (reader.c's order) */
            if (ob.properties_len && !o->properties_length_only &&
                !ref_pairs(&x, ob.properties, ob.properties_len, props_at))
                goto out;
            have_prev = true;
            prev = ob.object_id;
            r.record = mf_rec_object(r.record, &ob);
            uint64_t avail = n - x.pos;
            uint64_t got = avail < ob.payload_length ? avail : ob.payload_length;
            uint32_t pc = mf_crc(0, w + x.pos, (size_t)got);
            x.pos += (size_t)got;
            if (got < ob.payload_length) {
                uint64_t f[] = {MF_TAIL, got, pc};
                r.record = mf_rec(r.record, f, 3);
                ref_fail(&x, WK_ERR_MOQT_TRUNCATED, n);
                goto out;
            }
            uint64_t f[] = {MF_PAYLOAD_DONE, ob.payload_length, pc};
            r.record = mf_rec(r.record, f, 3);
        }
        goto out;
    }

    /* fetch stream: the flags are judged at once, the IDs once the record's framing is read
     * (reader.c's order: fields, End of Range length, Group ID, Object ID, Subgroup ID, pairs) */
    uint64_t req;
    if (!ref_int(&x, &req)) goto out;
    {
        uint64_t f[] = {MF_HDR_FETCH, req};
        r.record = mf_rec(r.record, f, 2);
    }
    bool desc = o->group_order == WK_MOQT_GROUP_ORDER_DESCENDING;
    bool abs = o->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
    bool any_record = false, any_object = false, prior_has_sub = false;
    uint64_t pg = 0, po = 0, psub = 0;
    uint8_t pprio = 0;
    while (x.pos < n) {
        wk_moqt_fetch_object fo;
        memset(&fo, 0, sizeof fo);
        fo.offset = x.pos;
        fo.first_record = !any_record;
        if (!ref_int(&x, &fo.flags)) goto out;
        uint64_t fl = fo.flags;
        bool dg = false;
        unsigned mode = 0;
        if (fl > WK_MOQT_FETCH_FLAGS_MAX) {
            if (!wk_moqt_fetch_flags_is_end_of_range(fl)) {
                ref_fail(&x, WK_ERR_MOQT_SERIALIZATION_FLAGS, fo.offset);
                goto out;
            }
            fo.end_of_range = true;
        } else {
            dg = fl & WK_MOQT_FETCH_DATAGRAM;
            mode = (unsigned)(fl & 3);
            bool refers_sub = !dg && (mode == 1 || mode == 2);
            bool refers_prio = !(fl & WK_MOQT_FETCH_PRIORITY);
            if (fo.first_record && (!(fl & WK_MOQT_FETCH_GROUP_ID_DELTA) ||
                                    !(fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) || refers_sub ||
                                    refers_prio)) {
                ref_fail(&x, WK_ERR_MOQT_FIRST_RECORD, fo.offset);
                goto out;
            }
            if (!any_object && (refers_sub || refers_prio)) {
                ref_fail(&x, WK_ERR_MOQT_NO_PRIOR_OBJECT, fo.offset);
                goto out;
            }
            if (refers_sub && !prior_has_sub) {
                ref_fail(&x, WK_ERR_MOQT_PRIOR_NO_SUBGROUP, fo.offset);
                goto out;
            }
        }
        /* the fields */
        uint64_t gat = 0, oat = 0, props_at = 0;
        if (fo.end_of_range && abs) {
            if (!ref_int(&x, &fo.group_id) || !ref_int(&x, &fo.object_id)) goto out;
        } else {
            fo.has_group_id_delta = fo.end_of_range || (fl & WK_MOQT_FETCH_GROUP_ID_DELTA);
            fo.has_object_id_delta = fo.end_of_range || (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA);
            fo.has_subgroup_id = !fo.end_of_range && !dg;
            fo.has_priority = !fo.end_of_range;
            fo.has_properties = !fo.end_of_range && (fl & WK_MOQT_FETCH_PROPERTIES);
            fo.has_payload_length = true;
            gat = x.pos;
            if (fo.has_group_id_delta && !ref_int(&x, &fo.group_id_delta)) goto out;
            if (fo.has_subgroup_id && mode == 3 && !ref_int(&x, &fo.subgroup_id)) goto out;
            oat = x.pos;
            if (fo.has_object_id_delta && !ref_int(&x, &fo.object_id_delta)) goto out;
            fo.publisher_priority = pprio;
            if (fo.has_priority && (fl & WK_MOQT_FETCH_PRIORITY) &&
                !ref_byte(&x, &fo.publisher_priority))
                goto out;
            if (fo.has_properties) {
                if (!ref_props(&x, o, &fo.properties, &fo.properties_len)) goto out;
                props_at = x.pos - fo.properties_len;
            }
            uint64_t lat = x.pos;
            if (!ref_int(&x, &fo.payload_length)) goto out;
            if (fo.end_of_range && fo.payload_length != 0) {
                ref_fail(&x, WK_ERR_MOQT_END_OF_RANGE_LENGTH, lat);
                goto out;
            }
            /* Group ID */
            uint64_t d = fo.group_id_delta;
            if (fo.first_record) {
                fo.group_id = d;
            } else if (!fo.has_group_id_delta) {
                fo.group_id = pg;
            } else if (!desc) {
                if (pg == UINT64_MAX || d > UINT64_MAX - pg - 1) {
                    ref_fail(&x, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gat);
                    goto out;
                }
                fo.group_id = pg + d + 1;
            } else {
                if (d >= pg) {
                    ref_fail(&x, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gat);
                    goto out;
                }
                fo.group_id = pg - d - 1;
            }
            /* Object ID */
            if (fo.has_object_id_delta &&
                (fo.first_record || fo.has_group_id_delta)) {
                fo.object_id = fo.object_id_delta;
            } else if (fo.has_object_id_delta) {
                if (fo.object_id_delta > UINT64_MAX - po) {
                    ref_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, oat);
                    goto out;
                }
                fo.object_id = po + fo.object_id_delta;
            } else {
                if (po == UINT64_MAX) {
                    ref_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, fo.offset);
                    goto out;
                }
                fo.object_id = po + 1;
            }
            /* Subgroup ID */
            if (fo.has_subgroup_id) {
                if (mode == 0) fo.subgroup_id = 0;
                else if (mode == 1) fo.subgroup_id = psub;
                else if (mode == 2) {
                    if (psub == UINT64_MAX) {
                        ref_fail(&x, WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW, fo.offset);
                        goto out;
                    }
                    fo.subgroup_id = psub + 1;
                }
            }
            if (fo.properties_len && !o->properties_length_only &&
                !ref_pairs(&x, fo.properties, fo.properties_len, props_at))
                goto out;
        }
        any_record = true;
        pg = fo.group_id;
        po = fo.object_id;
        if (!fo.end_of_range) {
            any_object = true;
            prior_has_sub = !dg;
            psub = dg ? 0 : fo.subgroup_id;
            pprio = fo.publisher_priority;
        }
        r.record = mf_rec_fetch_object(r.record, &fo);
        uint64_t avail = n - x.pos;
        uint64_t got = avail < fo.payload_length ? avail : fo.payload_length;
        uint32_t pc = mf_crc(0, w + x.pos, (size_t)got);
        x.pos += (size_t)got;
        if (got < fo.payload_length) {
            uint64_t f[] = {MF_TAIL, got, pc};
            r.record = mf_rec(r.record, f, 3);
            ref_fail(&x, WK_ERR_MOQT_TRUNCATED, n);
            goto out;
        }
        uint64_t f[] = {MF_PAYLOAD_DONE, fo.payload_length, pc};
        r.record = mf_rec(r.record, f, 3);
    }
out:
    (void)ok;
    r.code = x.code;
    r.offset = x.offset;
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * The target body shared by both stream targets
 *
 * Header bytes:
 *   byte 0  bits 0-2 push size (1, 2, 3, 5, 8, 64, 1000, all), bit 3 carrier ANY (else the
 *           target's own), bit 4 strict_padding, bit 5 properties_length_only, bit 6
 *           allow_unknown_status, bit 7 allow_objects_after_end
 *   byte 1  bits 0-2 properties scratch (NULL = built-in 256 bytes, or a caller buffer of 0, 1, 4,
 *           16, 300, 4096, 70000 bytes), bit 3 End of Range reading B (absolute), bit 4 group order
 *           Descending, bit 5 group order given explicitly as Ascending (same as the default)
 * ------------------------------------------------------------------------------------------- */
static int mf_target(const uint8_t *data, size_t size, wk_moqt_carrier own)
{
    if (size < 2) return 0;
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    wk_moqt_carrier expect = (data[0] & 0x08) ? WK_MOQT_CARRIER_ANY : own;
    size_t push = mf_pushes[data[0] & 7];
    o.strict_padding = data[0] & 0x10;
    o.properties_length_only = data[0] & 0x20;
    o.allow_unknown_status = data[0] & 0x40;
    o.allow_objects_after_end = data[0] & 0x80;
    unsigned ci = data[1] & 7;
    if (ci) {
        o.properties_buf = mf_scratch;
        o.properties_cap = mf_caps[ci];
    }
    o.end_of_range = (data[1] & 0x08) ? WK_MOQT_END_OF_RANGE_ABSOLUTE : WK_MOQT_END_OF_RANGE_DELTA;
    o.group_order = (data[1] & 0x10)   ? WK_MOQT_GROUP_ORDER_DESCENDING
                    : (data[1] & 0x20) ? WK_MOQT_GROUP_ORDER_ASCENDING
                                       : WK_MOQT_GROUP_ORDER_DEFAULT;
    const uint8_t *w = data + 2;
    size_t n = size - 2;
    if (n == 0) {
        wk_moqt_stream_reader r;
        wk_moqt_stream_reader_init(&r, expect, &o);
        wk_error e;
        CHECK(!wk_moqt_stream_reader_at_boundary(&r));
        CHECK(wk_moqt_stream_reader_finish(&r, &e) == WK_ERR_MOQT_TRUNCATED && e.offset == 0);
        return 0;
    }
    static wk_moqt_stream_reader r; /* reused: pass 2 re-initializes it */
    mf_outcome a = mf_run(&r, expect, &o, w, n, push);
    mf_outcome b = mf_run(&r, expect, &o, w, n, (size_t)-1);
    /* split pushes and one push: the same events, fields, bytes and verdict */
    CHECK(a.code == b.code && a.offset == b.offset);
    CHECK(a.record == b.record && a.objects == b.objects);
    if (a.code == WK_OK || a.code == WK_ERR_MOQT_TRUNCATED) CHECK(a.consumed == b.consumed);
    /* the reference reader: the same verdict and events */
    ref_outcome ref = ref_read(expect, &o, w, n);
    if (ref.code != b.code || ref.offset != b.offset || ref.record != b.record) {
        fprintf(stderr, "reference: %s at %llu; reader: %s at %llu; records %s\n",
                wk_error_name(ref.code), (unsigned long long)ref.offset, wk_error_name(b.code),
                (unsigned long long)b.offset, ref.record == b.record ? "agree" : "differ");
        CHECK(0);
    }
    return 0;
}

#endif
