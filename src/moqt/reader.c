/* MoQT draft-20 stream reader: subgroup streams (spec 3), fetch streams (spec 5) and padding
 * streams (spec 7) pushed in pieces of any size.
 *
 * States (each says what it waits for; an integer split across pushes collects in s.ibuf, a
 * Properties block split across pushes in the properties scratch, a payload is never collected):
 *   ST_TYPE          the stream type
 *   ST_SG_ALIAS / ST_SG_GROUP / ST_SG_SUBGROUP / ST_SG_PRIORITY   SUBGROUP_HEADER fields
 *   ST_SG_DELTA      an object's Object ID Delta, or FIN (a boundary)
 *   ST_SG_PROPS_LEN / ST_SG_PROPS   the object's Properties block
 *   ST_SG_PLEN / ST_SG_STATUS       Object Payload Length, Object Status (length 0)
 *   ST_F_REQ         FETCH_HEADER Request ID
 *   ST_F_FLAGS       a record's Serialization Flags, or FIN (a boundary)
 *   ST_F_GDELTA / ST_F_SUBGROUP / ST_F_ODELTA / ST_F_PRIORITY / ST_F_PROPS_LEN / ST_F_PROPS /
 *   ST_F_PLEN        the record's fields in wire order (End of Range: GDELTA, ODELTA, PLEN in
 *                    reading A; ST_F_EOR_G, ST_F_EOR_O in reading B)
 *   ST_PAYLOAD       the rest of the current object's payload
 *   ST_PADDING       padding bytes to discard
 *   ST_FAILED        nothing: the sticky error is reported again (s.failed is set too)
 * A subgroup object or fetch record whose framing lies whole in the push is read by a fast path
 * (sg_fast, f_fast) with the same checks in the same order. */
#include "moqt_internal.h"

enum {
    ST_TYPE,
    ST_SG_ALIAS,
    ST_SG_GROUP,
    ST_SG_SUBGROUP,
    ST_SG_PRIORITY,
    ST_SG_DELTA,
    ST_SG_PROPS_LEN,
    ST_SG_PROPS,
    ST_SG_PLEN,
    ST_SG_STATUS,
    ST_F_REQ,
    ST_F_FLAGS,
    ST_F_GDELTA,
    ST_F_SUBGROUP,
    ST_F_ODELTA,
    ST_F_PRIORITY,
    ST_F_PROPS_LEN,
    ST_F_PROPS,
    ST_F_PLEN,
    ST_F_EOR_G,
    ST_F_EOR_O,
    ST_PAYLOAD,
    ST_PADDING,
    ST_FAILED
};

void wk_moqt_stream_reader_init(wk_moqt_stream_reader *r, wk_moqt_carrier expect,
                                const wk_moqt_read_options *options)
{
    memset(r, 0, sizeof *r);
    r->s.expect = expect;
    if (options) r->s.opt = *options;
    if (r->s.opt.properties_buf && r->s.opt.properties_cap) {
        r->s.props_buf = r->s.opt.properties_buf;
        r->s.props_cap = r->s.opt.properties_cap;
    } else {
        r->s.props_buf = r->s.inline_props;
        r->s.props_cap = sizeof r->s.inline_props;
    }
    r->s.state = ST_TYPE;
}

static wk_result fail(wk_moqt_stream_reader *r, wk_error *err)
{
    r->s.failed = true;
    r->s.state = ST_FAILED;
    r->event = WK_MOQT_EVENT_NONE;
    if (err) *err = r->s.error;
    return WK_ERROR;
}

/* Sets the sticky error (printf-style) and returns WK_ERROR. */
#define FAIL(r, err, code, offset, ...)                                                            \
    (wk_error_set(&(r)->s.error, (code), (offset), __VA_ARGS__), fail((r), (err)))

/* An event is ready: r->event says which. */
static inline wk_result event(wk_moqt_stream_reader *r, wk_moqt_stream_event e)
{
    r->event = e;
    return WK_EVENT;
}

/* The push is consumed: no event. */
static inline wk_result need_input(wk_moqt_stream_reader *r)
{
    r->event = WK_MOQT_EVENT_NONE;
    return WK_NEED_INPUT;
}

static inline size_t avail(const wk_in *in) { return in->size - in->pos; }
static inline const uint8_t *cur(const wk_in *in) { return in->src + in->pos; }
static inline void advance(wk_moqt_stream_reader *r, wk_in *in, size_t n)
{
    in->pos += n;
    r->s.consumed += n;
}

/* Collects one integer. true with *v when complete; false when the push ran out (the bytes so
 * far are kept). s.field_offset = the integer's first byte. */
static bool take_int(wk_moqt_stream_reader *r, wk_in *in, uint64_t *v)
{
    size_t a = avail(in);
    if (r->s.ilen == 0) {
        if (a == 0) return false;
        const uint8_t *p = cur(in);
        r->s.field_offset = r->s.consumed;
        if (p[0] < 0x80) {
            *v = p[0];
            advance(r, in, 1);
            return true;
        }
        unsigned need = wk_moqt_int_size(p[0]);
        if (a >= need) {
            *v = wk_moqt_int_get(p);
            advance(r, in, need);
            return true;
        }
        memcpy(r->s.ibuf, p, a);
        r->s.ilen = (uint8_t)a;
        r->s.ineed = (uint8_t)need;
        advance(r, in, a);
        return false;
    }
    size_t k = r->s.ineed - r->s.ilen;
    if (k > a) k = a;
    memcpy(r->s.ibuf + r->s.ilen, cur(in), k);
    r->s.ilen = (uint8_t)(r->s.ilen + k);
    advance(r, in, k);
    if (r->s.ilen < r->s.ineed) return false;
    *v = wk_moqt_int_get(r->s.ibuf);
    r->s.ilen = 0;
    return true;
}

/* Collects the Properties block (s.props_len bytes) into *slice: borrowed from the push when it
 * is all there, else gathered in the scratch. false when the push ran out. */
static bool take_props(wk_moqt_stream_reader *r, wk_in *in, const uint8_t **slice)
{
    size_t a = avail(in);
    size_t want = (size_t)r->s.props_len - r->s.props_have;
    if (r->s.props_have == 0 && a >= want) {
        *slice = cur(in);
        advance(r, in, want);
        return true;
    }
    size_t k = want < a ? want : a;
    memcpy(r->s.props_buf + r->s.props_have, cur(in), k);
    r->s.props_have += k;
    advance(r, in, k);
    if (r->s.props_have < r->s.props_len) return false;
    *slice = r->s.props_buf;
    return true;
}

/* A Properties Length v just read (at s.field_offset): false (the sticky error set) above the
 * scratch's capacity, else true with the block to collect next (state `next`). */
static bool props_begin(wk_moqt_stream_reader *r, uint64_t v, int next, wk_error *err)
{
    wk_moqt_reader_state_ *s = &r->s;
    if (v > s->props_cap) {
        FAIL(r, err, WK_ERR_MOQT_PROPERTIES_TOO_LARGE, s->field_offset,
             "Properties Length %llu exceeds the reader's bound %zu", (unsigned long long)v,
             s->props_cap);
        return false;
    }
    s->props_len = v;
    s->props_have = 0;
    s->props_offset = s->consumed;
    s->state = next;
    return true;
}

/* Before returning NEED_INPUT mid-record: a properties slice borrowed from this push must move
 * to the scratch, since the caller may reuse its buffer. */
static void keep_props(wk_moqt_stream_reader *r, const uint8_t **slice, size_t len)
{
    if (len && *slice != r->s.props_buf) {
        memcpy(r->s.props_buf, *slice, len);
        *slice = r->s.props_buf;
    }
}

/* Delivers the payload bytes of this push for the current object into r->piece. */
static void give_payload(wk_moqt_stream_reader *r, wk_in *in)
{
    size_t a = avail(in);
    size_t k = (uint64_t)a < r->s.payload_left ? a : (size_t)r->s.payload_left;
    r->piece.data = cur(in);
    r->piece.len = k;
    r->piece.offset = r->s.payload_done;
    advance(r, in, k);
    r->s.payload_done += k;
    r->s.payload_left -= k;
    r->piece.last = r->s.payload_left == 0;
    if (r->piece.last)
        r->s.state = r->s.record_state;
    else
        r->s.state = ST_PAYLOAD;
}

/* ---------------------------------------------------------------------------------------------
 * Stream type
 * ------------------------------------------------------------------------------------------- */
static wk_result on_type(wk_moqt_stream_reader *r, uint64_t t, wk_error *err)
{
    uint64_t at = r->s.field_offset;
    r->stream_type = t;
    if (t == WK_MOQT_STREAM_TYPE_PADDING) {
        r->kind = WK_MOQT_KIND_PADDING;
        r->s.state = ST_PADDING;
        return event(r, WK_MOQT_EVENT_PADDING);
    }
    wk_moqt_stream_kind k = WK_MOQT_KIND_NONE;
    switch (r->s.expect) {
    case WK_MOQT_CARRIER_SUBGROUP:
        if (t == WK_MOQT_STREAM_TYPE_FETCH || t == WK_MOQT_STREAM_TYPE_SETUP)
            return FAIL(r, err, WK_ERR_MOQT_WRONG_STREAM_TYPE, at,
                        "stream type 0x%llx where a SUBGROUP_HEADER was expected",
                        (unsigned long long)t);
        if (wk_moqt_subgroup_type_check(t, at, &r->s.error) != WK_OK) return fail(r, err);
        k = WK_MOQT_KIND_SUBGROUP;
        break;
    case WK_MOQT_CARRIER_FETCH:
        if (t != WK_MOQT_STREAM_TYPE_FETCH)
            return FAIL(r, err, WK_ERR_MOQT_WRONG_STREAM_TYPE, at,
                        "stream type 0x%llx where a FETCH_HEADER (0x05) was expected",
                        (unsigned long long)t);
        k = WK_MOQT_KIND_FETCH;
        break;
    default:
        if (wk_moqt_stream_type_classify(t, at, &k, &r->s.error) != WK_OK) return fail(r, err);
        if (k == WK_MOQT_KIND_SETUP)
            return FAIL(r, err, WK_ERR_MOQT_WRONG_STREAM_TYPE, at,
                        "the control stream (0x2F00) is not a data stream");
        break;
    }
    r->kind = k;
    r->s.record_state = k == WK_MOQT_KIND_FETCH ? ST_F_FLAGS : ST_SG_DELTA;
    if (k == WK_MOQT_KIND_FETCH) {
        r->s.state = ST_F_REQ;
    } else {
        r->subgroup.type = t;
        r->subgroup.has_priority = !(t & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY);
        r->subgroup.subgroup_id_known =
            wk_moqt_subgroup_type_id_mode(t) != WK_MOQT_SUBGROUP_ID_FIRST_OBJECT;
        r->s.state = ST_SG_ALIAS;
    }
    return WK_NEED_INPUT; /* no event: keep going */
}

/* ---------------------------------------------------------------------------------------------
 * Subgroup objects
 * ------------------------------------------------------------------------------------------- */

/* Checks an object's Object ID Delta (at offset `at`, the object's first byte) and resolves the
 * Object ID into r->object. */
static bool sg_resolve_id(wk_moqt_stream_reader *r, uint64_t delta, uint64_t at, wk_error *err)
{
    if (r->s.ended && !r->s.opt.allow_objects_after_end) {
        FAIL(r, err, WK_ERR_MOQT_OBJECT_AFTER_END, at,
             "object after an End of Group / End of Track status on this subgroup stream");
        return false;
    }
    uint64_t id = delta;
    if (r->s.have_prev) {
        uint64_t prev = r->s.prev_object_id;
        if (prev == UINT64_MAX || delta > UINT64_MAX - prev - 1) {
            FAIL(r, err, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, at,
                 "Object ID %llu + delta %llu + 1 exceeds 2^64-1", (unsigned long long)prev,
                 (unsigned long long)delta);
            return false;
        }
        id = prev + delta + 1;
    }
    r->object.object_id_delta = delta;
    r->object.object_id = id;
    r->object.offset = at;
    return true;
}

/* The framing is complete: status and properties checks, then the object event. */
static wk_result sg_emit(wk_moqt_stream_reader *r, wk_in *in, uint64_t props_at,
                             uint64_t status_at, wk_error *err)
{
    wk_moqt_subgroup_object *o = &r->object;
    if (o->has_status && !r->s.opt.allow_unknown_status && !wk_moqt_status_is_assigned(o->status))
        return FAIL(r, err, WK_ERR_MOQT_UNKNOWN_STATUS, status_at,
                    "Object Status 0x%llx is not assigned", (unsigned long long)o->status);
    if (o->properties_len &&
        moqt_check_properties(o->properties, o->properties_len, props_at,
                              r->s.opt.properties_length_only, &r->s.error) != WK_OK)
        return fail(r, err);
    if (o->has_status &&
        (o->status == WK_MOQT_STATUS_END_OF_GROUP || o->status == WK_MOQT_STATUS_END_OF_TRACK))
        r->s.ended = true;
    if (!r->s.have_prev && !r->subgroup.subgroup_id_known) {
        r->subgroup.subgroup_id = o->object_id; /* SUBGROUP_ID_MODE 0b01 */
        r->subgroup.subgroup_id_known = true;
    }
    r->s.have_prev = true;
    r->s.prev_object_id = o->object_id;
    r->s.payload_left = o->payload_length;
    r->s.payload_done = 0;
    r->objects++;
    give_payload(r, in);
    return event(r, WK_MOQT_EVENT_OBJECT);
}

/* Reads a whole object framing from the push when it is all there; WK_NEED_INPUT (nothing
 * consumed) when it is not. */
static wk_result sg_fast(wk_moqt_stream_reader *r, wk_in *in, wk_error *err)
{
    wk_cursor c = wk_cursor_make(cur(in), avail(in));
    wk_moqt_subgroup_object *o = &r->object;
    uint64_t base = r->s.consumed, delta, plen, props_at = 0, status_at = 0;
    if (!wk_cursor_moqt_int(&c, &delta)) return WK_NEED_INPUT;
    o->has_properties = (r->subgroup.type & WK_MOQT_SUBGROUP_PROPERTIES) != 0;
    o->properties = NULL;
    o->properties_len = 0;
    if (o->has_properties) {
        uint64_t len;
        uint64_t len_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_moqt_int(&c, &len)) return WK_NEED_INPUT;
        if (len > r->s.props_cap) {
            if (!sg_resolve_id(r, delta, base, err)) return WK_ERROR;
            return FAIL(r, err, WK_ERR_MOQT_PROPERTIES_TOO_LARGE, len_at,
                        "Properties Length %llu exceeds the reader's bound %zu",
                        (unsigned long long)len, r->s.props_cap);
        }
        props_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_take(&c, (size_t)len, &o->properties)) return WK_NEED_INPUT;
        o->properties_len = (size_t)len;
    }
    if (!wk_cursor_moqt_int(&c, &plen)) return WK_NEED_INPUT;
    o->payload_length = plen;
    o->has_status = plen == 0;
    o->status = WK_MOQT_STATUS_NORMAL;
    if (plen == 0) {
        status_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_moqt_int(&c, &o->status)) return WK_NEED_INPUT;
    }
    if (!sg_resolve_id(r, delta, base, err)) return WK_ERROR;
    advance(r, in, wk_cursor_offset(&c));
    return sg_emit(r, in, props_at, status_at, err);
}

/* ---------------------------------------------------------------------------------------------
 * Fetch records
 * ------------------------------------------------------------------------------------------- */

/* The Serialization Flags are read: checks them and sets up the record. */
static wk_result f_on_flags(wk_moqt_stream_reader *r, uint64_t fl, wk_error *err)
{
    wk_moqt_fetch_object *o = &r->fetch_object;
    uint64_t at = r->s.field_offset;
    memset(o, 0, sizeof *o);
    o->flags = fl;
    o->offset = at;
    o->first_record = !r->s.fetch_any_record;
    r->s.record_offset = at;
    if (fl > WK_MOQT_FETCH_FLAGS_MAX) {
        if (!wk_moqt_fetch_flags_is_end_of_range(fl))
            return FAIL(r, err, WK_ERR_MOQT_SERIALIZATION_FLAGS, at,
                        "Serialization Flags 0x%llx are neither flags (< 128) nor an End of "
                        "Range marker", (unsigned long long)fl);
        o->end_of_range = true;
        if (r->s.opt.end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE) {
            r->s.state = ST_F_EOR_G;
        } else {
            o->has_group_id_delta = o->has_object_id_delta = o->has_payload_length = true;
            r->s.state = ST_F_GDELTA;
        }
        return WK_NEED_INPUT;
    }
    bool dgram = (fl & WK_MOQT_FETCH_DATAGRAM) != 0;
    unsigned mode = (unsigned)(fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK);
    bool refers_subgroup = !dgram && (mode == WK_MOQT_FETCH_SUBGROUP_PRIOR ||
                                      mode == WK_MOQT_FETCH_SUBGROUP_NEXT);
    bool refers_priority = !(fl & WK_MOQT_FETCH_PRIORITY);
    if (o->first_record) {
        if (!(fl & WK_MOQT_FETCH_GROUP_ID_DELTA) || !(fl & WK_MOQT_FETCH_OBJECT_ID_DELTA))
            return FAIL(r, err, WK_ERR_MOQT_FIRST_RECORD, at,
                        "first fetch record (flags 0x%02llx) lacks %s", (unsigned long long)fl,
                        !(fl & WK_MOQT_FETCH_GROUP_ID_DELTA) ? "the Group ID Delta (0x08)"
                                                             : "the Object ID Delta (0x04)");
        if (refers_subgroup || refers_priority)
            return FAIL(r, err, WK_ERR_MOQT_FIRST_RECORD, at,
                        "first fetch record (flags 0x%02llx) refers to a prior object's %s",
                        (unsigned long long)fl, refers_subgroup ? "Subgroup ID" : "priority");
    }
    if ((refers_subgroup || refers_priority) && !r->s.fetch_any_object)
        return FAIL(r, err, WK_ERR_MOQT_NO_PRIOR_OBJECT, at,
                    "flags 0x%02llx refer to a prior object's %s but no object preceded",
                    (unsigned long long)fl, refers_subgroup ? "Subgroup ID" : "priority");
    if (refers_subgroup && !r->s.prior_has_subgroup)
        return FAIL(r, err, WK_ERR_MOQT_PRIOR_NO_SUBGROUP, at,
                    "flags 0x%02llx refer to the prior Subgroup ID, but the prior object is a "
                    "datagram object", (unsigned long long)fl);
    o->has_group_id_delta = (fl & WK_MOQT_FETCH_GROUP_ID_DELTA) != 0;
    o->has_object_id_delta = (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) != 0;
    o->has_subgroup_id = !dgram;
    o->has_priority = true;
    o->has_properties = (fl & WK_MOQT_FETCH_PROPERTIES) != 0;
    o->has_payload_length = true;
    r->s.state = ST_F_GDELTA;
    return WK_NEED_INPUT;
}

/* The next field state after `st` for the current record (skipping absent fields). */
static int f_next(const wk_moqt_stream_reader *r, int st)
{
    const wk_moqt_fetch_object *o = &r->fetch_object;
    uint64_t fl = o->flags;
    switch (st) {
    case ST_F_GDELTA:
        if (o->end_of_range) return ST_F_ODELTA;
        if (o->has_subgroup_id && (fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK) == 3) return ST_F_SUBGROUP;
        /* fall through */
    case ST_F_SUBGROUP:
        if (o->has_object_id_delta) return ST_F_ODELTA;
        /* fall through */
    case ST_F_ODELTA:
        if (o->end_of_range) return ST_F_PLEN;
        if (fl & WK_MOQT_FETCH_PRIORITY) return ST_F_PRIORITY;
        /* fall through */
    case ST_F_PRIORITY:
        if (o->has_properties) return ST_F_PROPS_LEN;
        /* fall through */
    default: return ST_F_PLEN;
    }
}

/* The record's fields are all read: resolves the IDs (delta rules of spec 5.5) and reports it. */
static wk_result f_emit(wk_moqt_stream_reader *r, wk_in *in, uint64_t gdelta_at,
                            uint64_t odelta_at, uint64_t props_at, wk_error *err)
{
    wk_moqt_fetch_object *o = &r->fetch_object;
    uint64_t fl = o->flags;
    bool absolute_marker = o->end_of_range && r->s.opt.end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
    /* Resolved in locals and stored once (re-reading just-stored fields stalls the pipeline). */
    uint64_t g, ob;
    if (absolute_marker) {
        g = o->group_id; /* read as they are */
        ob = o->object_id;
    } else if (o->first_record) {
        g = o->group_id_delta;
        ob = o->object_id_delta;
    } else {
        uint64_t pg = r->s.prior_group, po = r->s.prior_object;
        if (o->has_group_id_delta) {
            uint64_t d = o->group_id_delta;
            if (r->s.opt.group_order == WK_MOQT_GROUP_ORDER_DESCENDING) {
                if (d >= pg)
                    return FAIL(r, err, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gdelta_at,
                                "Group ID %llu - (delta %llu + 1) is below 0 (Descending order)",
                                (unsigned long long)pg, (unsigned long long)d);
                g = pg - d - 1;
            } else {
                if (pg == UINT64_MAX || d > UINT64_MAX - pg - 1)
                    return FAIL(r, err, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gdelta_at,
                                "Group ID %llu + delta %llu + 1 exceeds 2^64-1",
                                (unsigned long long)pg, (unsigned long long)d);
                g = pg + d + 1;
            }
        } else {
            g = pg;
        }
        if (o->has_object_id_delta && o->has_group_id_delta) {
            ob = o->object_id_delta;
        } else if (o->has_object_id_delta) {
            if (o->object_id_delta > UINT64_MAX - po)
                return FAIL(r, err, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, odelta_at,
                            "Object ID %llu + delta %llu exceeds 2^64-1", (unsigned long long)po,
                            (unsigned long long)o->object_id_delta);
            ob = po + o->object_id_delta;
        } else {
            if (po == UINT64_MAX)
                return FAIL(r, err, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, r->s.record_offset,
                            "Object ID %llu + 1 exceeds 2^64-1", (unsigned long long)po);
            ob = po + 1;
        }
    }
    o->group_id = g;
    o->object_id = ob;
    if (o->end_of_range) {
        r->s.prior_group = g;
        r->s.prior_object = ob;
        r->s.fetch_any_record = true;
        r->objects++;
        r->s.payload_left = 0;
        r->s.payload_done = 0;
        give_payload(r, in);
        return event(r, WK_MOQT_EVENT_FETCH_OBJECT);
    }
    if (o->has_subgroup_id) {
        switch (fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK) {
        case WK_MOQT_FETCH_SUBGROUP_ZERO: o->subgroup_id = 0; break;
        case WK_MOQT_FETCH_SUBGROUP_PRIOR: o->subgroup_id = r->s.prior_subgroup; break;
        case WK_MOQT_FETCH_SUBGROUP_NEXT:
            if (r->s.prior_subgroup == UINT64_MAX)
                return FAIL(r, err, WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW, r->s.record_offset,
                            "prior Subgroup ID + 1 exceeds 2^64-1");
            o->subgroup_id = r->s.prior_subgroup + 1;
            break;
        default: break; /* read from the wire */
        }
    }
    if (!(fl & WK_MOQT_FETCH_PRIORITY)) o->publisher_priority = r->s.prior_priority;
    if (o->properties_len &&
        moqt_check_properties(o->properties, o->properties_len, props_at,
                              r->s.opt.properties_length_only, &r->s.error) != WK_OK)
        return fail(r, err);
    r->s.prior_group = g;
    r->s.prior_object = ob;
    r->s.prior_has_subgroup = o->has_subgroup_id;
    r->s.prior_subgroup = o->has_subgroup_id ? o->subgroup_id : 0;
    r->s.prior_priority = o->publisher_priority;
    r->s.fetch_any_record = true;
    r->s.fetch_any_object = true;
    r->objects++;
    r->s.payload_left = o->payload_length;
    r->s.payload_done = 0;
    give_payload(r, in);
    return event(r, WK_MOQT_EVENT_FETCH_OBJECT);
}

/* Reads a whole ordinary record (flags < 128) from the push when it is all there. Returns
 * WK_NEED_INPUT with nothing consumed when it is not (or for a marker, or a Properties
 * Length above the bound): the field-by-field path then takes over and reports the same result. */
static wk_result f_fast(wk_moqt_stream_reader *r, wk_in *in, wk_error *err)
{
    wk_cursor c = wk_cursor_make(cur(in), avail(in));
    uint64_t base = r->s.consumed, fl, gd = 0, sub = 0, od = 0, plen, plen_props = 0;
    uint8_t prio = 0;
    const uint8_t *props = NULL;
    uint64_t gd_at = 0, od_at = 0, props_at = 0;
    if (!wk_cursor_moqt_int(&c, &fl) || fl > WK_MOQT_FETCH_FLAGS_MAX) return WK_NEED_INPUT;
    if (fl & WK_MOQT_FETCH_GROUP_ID_DELTA) {
        gd_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_moqt_int(&c, &gd)) return WK_NEED_INPUT;
    }
    if (!(fl & WK_MOQT_FETCH_DATAGRAM) &&
        (fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK) == WK_MOQT_FETCH_SUBGROUP_EXPLICIT &&
        !wk_cursor_moqt_int(&c, &sub))
        return WK_NEED_INPUT;
    if (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) {
        od_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_moqt_int(&c, &od)) return WK_NEED_INPUT;
    }
    if ((fl & WK_MOQT_FETCH_PRIORITY) && !wk_cursor_u8(&c, &prio)) return WK_NEED_INPUT;
    if (fl & WK_MOQT_FETCH_PROPERTIES) {
        if (!wk_cursor_moqt_int(&c, &plen_props) || plen_props > r->s.props_cap)
            return WK_NEED_INPUT;
        props_at = base + wk_cursor_offset(&c);
        if (!wk_cursor_take(&c, (size_t)plen_props, &props)) return WK_NEED_INPUT;
    }
    if (!wk_cursor_moqt_int(&c, &plen)) return WK_NEED_INPUT;
    /* complete: the same checks and resolution as the field-by-field path */
    r->s.field_offset = base;
    wk_result ev = f_on_flags(r, fl, err);
    if (ev != WK_NEED_INPUT) return ev;
    wk_moqt_fetch_object *o = &r->fetch_object;
    o->group_id_delta = gd;
    o->object_id_delta = od;
    o->subgroup_id = sub;
    o->publisher_priority = prio;
    o->properties = props;
    o->properties_len = (size_t)plen_props;
    o->payload_length = plen;
    advance(r, in, wk_cursor_offset(&c));
    return f_emit(r, in, gd_at, od_at, props_at, err);
}

/* ---------------------------------------------------------------------------------------------
 * The step
 * ------------------------------------------------------------------------------------------- */
wk_result wk_moqt_stream_reader_read(wk_moqt_stream_reader *r, wk_in *in, wk_out *out,
                                     wk_error *err)
{
    if (out) {
        r->event = WK_MOQT_EVENT_NONE;
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                     "the stream reader produces no bytes: pass out = NULL");
        return WK_ERROR;
    }
    wk_moqt_reader_state_ *s = &r->s;
    uint64_t v;
    wk_result ev;
    for (;;) {
        switch (s->state) {
        case ST_TYPE:
            if (!take_int(r, in, &v)) return need_input(r);
            ev = on_type(r, v, err);
            if (ev != WK_NEED_INPUT) return ev;
            break;

        /* ---- subgroup header ---- */
        case ST_SG_ALIAS:
            if (!take_int(r, in, &r->subgroup.track_alias)) return need_input(r);
            s->state = ST_SG_GROUP;
            break;
        case ST_SG_GROUP:
            if (!take_int(r, in, &r->subgroup.group_id)) return need_input(r);
            s->state = wk_moqt_subgroup_type_id_mode(r->subgroup.type) == WK_MOQT_SUBGROUP_ID_EXPLICIT
                           ? ST_SG_SUBGROUP
                           : ST_SG_PRIORITY;
            break;
        case ST_SG_SUBGROUP:
            if (!take_int(r, in, &r->subgroup.subgroup_id)) return need_input(r);
            s->state = ST_SG_PRIORITY;
            break;
        case ST_SG_PRIORITY:
            if (r->subgroup.has_priority) {
                if (!avail(in)) return need_input(r);
                r->subgroup.publisher_priority = *cur(in);
                advance(r, in, 1);
            }
            s->state = ST_SG_DELTA;
            return event(r, WK_MOQT_EVENT_SUBGROUP_HEADER);

        /* ---- subgroup objects ---- */
        case ST_SG_DELTA:
            if (s->ilen == 0) {
                if (!avail(in)) return need_input(r);
                ev = sg_fast(r, in, err);
                if (ev != WK_NEED_INPUT) return ev;
            }
            if (!take_int(r, in, &v)) return need_input(r);
            if (!sg_resolve_id(r, v, s->field_offset, err)) return WK_ERROR;
            s->record_offset = s->field_offset;
            r->object.has_properties = (r->subgroup.type & WK_MOQT_SUBGROUP_PROPERTIES) != 0;
            r->object.properties = NULL;
            r->object.properties_len = 0;
            s->state = r->object.has_properties ? ST_SG_PROPS_LEN : ST_SG_PLEN;
            break;
        case ST_SG_PROPS_LEN:
            if (!take_int(r, in, &v)) return need_input(r);
            if (!props_begin(r, v, ST_SG_PROPS, err)) return WK_ERROR;
            break;
        case ST_SG_PROPS:
            if (s->props_len) {
                if (!take_props(r, in, &r->object.properties)) return need_input(r);
                r->object.properties_len = (size_t)s->props_len;
            }
            s->state = ST_SG_PLEN;
            break;
        case ST_SG_PLEN:
            if (!take_int(r, in, &r->object.payload_length)) {
                keep_props(r, &r->object.properties, r->object.properties_len);
                return need_input(r);
            }
            r->object.has_status = r->object.payload_length == 0;
            r->object.status = WK_MOQT_STATUS_NORMAL;
            if (r->object.has_status) {
                s->state = ST_SG_STATUS;
                break;
            }
            return sg_emit(r, in, s->props_offset, 0, err);
        case ST_SG_STATUS:
            if (!take_int(r, in, &r->object.status)) {
                keep_props(r, &r->object.properties, r->object.properties_len);
                return need_input(r);
            }
            return sg_emit(r, in, s->props_offset, s->field_offset, err);

        /* ---- fetch ---- */
        case ST_F_REQ:
            if (!take_int(r, in, &r->fetch.request_id)) return need_input(r);
            s->state = ST_F_FLAGS;
            return event(r, WK_MOQT_EVENT_FETCH_HEADER);
        case ST_F_FLAGS:
            if (s->ilen == 0) {
                if (!avail(in)) return need_input(r);
                ev = f_fast(r, in, err);
                if (ev != WK_NEED_INPUT) return ev;
            }
            if (!take_int(r, in, &v)) return need_input(r);
            ev = f_on_flags(r, v, err);
            if (ev != WK_NEED_INPUT) return ev;
            if (s->state == ST_F_GDELTA && !r->fetch_object.has_group_id_delta)
                s->state = f_next(r, ST_F_GDELTA);
            break;
        case ST_F_GDELTA:
            if (!take_int(r, in, &r->fetch_object.group_id_delta)) return need_input(r);
            s->gdelta_offset = s->field_offset;
            s->state = f_next(r, ST_F_GDELTA);
            break;
        case ST_F_SUBGROUP:
            if (!take_int(r, in, &r->fetch_object.subgroup_id)) return need_input(r);
            s->state = f_next(r, ST_F_SUBGROUP);
            break;
        case ST_F_ODELTA:
            if (!take_int(r, in, &r->fetch_object.object_id_delta)) return need_input(r);
            s->odelta_offset = s->field_offset;
            s->state = f_next(r, ST_F_ODELTA);
            break;
        case ST_F_PRIORITY:
            if (!avail(in)) return need_input(r);
            r->fetch_object.publisher_priority = *cur(in);
            advance(r, in, 1);
            s->state = f_next(r, ST_F_PRIORITY);
            break;
        case ST_F_PROPS_LEN:
            if (!take_int(r, in, &v)) return need_input(r);
            if (!props_begin(r, v, ST_F_PROPS, err)) return WK_ERROR;
            break;
        case ST_F_PROPS:
            if (s->props_len) {
                if (!take_props(r, in, &r->fetch_object.properties)) return need_input(r);
                r->fetch_object.properties_len = (size_t)s->props_len;
            }
            s->state = ST_F_PLEN;
            break;
        case ST_F_PLEN:
            if (!take_int(r, in, &r->fetch_object.payload_length)) {
                keep_props(r, &r->fetch_object.properties, r->fetch_object.properties_len);
                return need_input(r);
            }
            if (r->fetch_object.end_of_range && r->fetch_object.payload_length != 0)
                return FAIL(r, err, WK_ERR_MOQT_END_OF_RANGE_LENGTH, s->field_offset,
                            "End of Range record with Object Payload Length %llu (must be 0)",
                            (unsigned long long)r->fetch_object.payload_length);
            return f_emit(r, in, s->gdelta_offset, s->odelta_offset, s->props_offset, err);
        case ST_F_EOR_G:
            if (!take_int(r, in, &r->fetch_object.group_id)) return need_input(r);
            s->state = ST_F_EOR_O;
            break;
        case ST_F_EOR_O:
            if (!take_int(r, in, &r->fetch_object.object_id)) return need_input(r);
            return f_emit(r, in, 0, 0, 0, err);

        /* ---- payload and padding ---- */
        case ST_PAYLOAD:
            if (!avail(in)) return need_input(r);
            give_payload(r, in);
            return event(r, WK_MOQT_EVENT_PAYLOAD);
        case ST_PADDING: {
            size_t a = avail(in);
            if (s->opt.strict_padding) {
                const uint8_t *p = cur(in);
                for (size_t i = 0; i < a; i++)
                    if (p[i]) {
                        advance(r, in, i);
                        r->padding_bytes += i;
                        return FAIL(r, err, WK_ERR_MOQT_PADDING_NONZERO, s->consumed,
                                    "padding byte 0x%02x is not zero", p[i]);
                    }
            }
            advance(r, in, a);
            r->padding_bytes += a;
            return need_input(r);
        }
        case ST_FAILED: /* sticky (the state keeps a failed check off the hot path) */
            r->event = WK_MOQT_EVENT_NONE;
            if (err) *err = s->error;
            return WK_ERROR;
        default:
            return FAIL(r, err, WK_ERR_STATE, WK_NO_OFFSET, "reader not initialized");
        }
    }
}

bool wk_moqt_stream_reader_at_boundary(const wk_moqt_stream_reader *r)
{
    if (r->s.failed || r->s.ilen != 0) return false;
    return r->s.state == ST_SG_DELTA || r->s.state == ST_F_FLAGS || r->s.state == ST_PADDING;
}

wk_result wk_moqt_stream_reader_finish(wk_moqt_stream_reader *r, const wk_in *rest,
                                       wk_error *err)
{
    r->event = WK_MOQT_EVENT_NONE;
    if (r->s.failed) {
        if (err) *err = r->s.error;
        return WK_ERROR;
    }
    if (rest && rest->pos < rest->size) {
        wk_error_set(&r->s.error, WK_ERR_STATE, r->s.consumed,
                     "FIN declared with %zu bytes unread: read until WK_NEED_INPUT first",
                     rest->size - rest->pos);
    } else if (wk_moqt_stream_reader_at_boundary(r)) {
        return WK_DONE;
    } else {
        const char *where;
        switch (r->s.state) {
        case ST_TYPE: where = "the stream type"; break;
        case ST_SG_ALIAS: where = "the Track Alias"; break;
        case ST_SG_GROUP: where = "the Group ID"; break;
        case ST_SG_SUBGROUP: where = "the Subgroup ID"; break;
        case ST_SG_PRIORITY: where = "the Publisher Priority"; break;
        case ST_F_REQ: where = "the Request ID"; break;
        case ST_PAYLOAD: where = "an object's payload"; break;
        case ST_SG_PROPS:
        case ST_F_PROPS: where = "a Properties block"; break;
        default: where = "an object's fields"; break;
        }
        wk_error_set(&r->s.error, WK_ERR_MOQT_TRUNCATED, r->s.consumed,
                     "stream ended (FIN) inside %s", where);
    }
    r->s.failed = true;
    r->s.state = ST_FAILED;
    if (err) *err = r->s.error;
    return WK_ERROR;
}
