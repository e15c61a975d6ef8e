/* MoQT draft-20 SUBGROUP_HEADER (spec 3.1-3.2) and the subgroup writer (spec 3.3). The reader is
 * in reader.c. */
#include "moqt_internal.h"

wk_result wk_moqt_subgroup_header_decode(wk_moqt_subgroup_header *h, wk_in *in, wk_error *err)
{
    size_t n = in->size - in->pos;
    wk_cursor c = wk_cursor_make(in->src + in->pos, n);
    uint64_t type;
    memset(h, 0, sizeof *h);
    if (!wk_cursor_moqt_int(&c, &type))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Type Flags");
    if (type == WK_MOQT_STREAM_TYPE_FETCH || type == WK_MOQT_STREAM_TYPE_SETUP ||
        type == WK_MOQT_STREAM_TYPE_PADDING) {
        wk_error_set(err, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0,
                     "stream type 0x%llx is not a SUBGROUP_HEADER", (unsigned long long)type);
        return WK_ERROR;
    }
    if (wk_moqt_subgroup_type_check(type, 0, err) != WK_OK) return WK_ERROR;
    h->type = type;
    if (!wk_cursor_moqt_int(&c, &h->track_alias))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Track Alias");
    if (!wk_cursor_moqt_int(&c, &h->group_id))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Group ID");
    wk_moqt_subgroup_id_mode mode = wk_moqt_subgroup_type_id_mode(type);
    h->subgroup_id_known = mode != WK_MOQT_SUBGROUP_ID_FIRST_OBJECT;
    if (mode == WK_MOQT_SUBGROUP_ID_EXPLICIT && !wk_cursor_moqt_int(&c, &h->subgroup_id))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Subgroup ID");
    h->has_priority = !(type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY);
    if (h->has_priority && !wk_cursor_u8(&c, &h->publisher_priority))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n,
                           "input ends before the Publisher Priority");
    in->pos += wk_cursor_offset(&c);
    return WK_DONE;
}

size_t wk_moqt_subgroup_header_size(const wk_moqt_subgroup_header *h)
{
    size_t n = wk_moqt_int_len(h->type) + wk_moqt_int_len(h->track_alias) +
               wk_moqt_int_len(h->group_id);
    if (wk_moqt_subgroup_type_id_mode(h->type) == WK_MOQT_SUBGROUP_ID_EXPLICIT)
        n += wk_moqt_int_len(h->subgroup_id);
    if (!(h->type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY)) n += 1;
    return n;
}

wk_result wk_moqt_subgroup_header_encode(const wk_moqt_subgroup_header *h, wk_out *out,
                                         wk_error *err)
{
    (void)err;
    if (!moqt_room(out, wk_moqt_subgroup_header_size(h))) return WK_NEED_OUTPUT;
    moqt_put_int(out, h->type);
    moqt_put_int(out, h->track_alias);
    moqt_put_int(out, h->group_id);
    if (wk_moqt_subgroup_type_id_mode(h->type) == WK_MOQT_SUBGROUP_ID_EXPLICIT)
        moqt_put_int(out, h->subgroup_id);
    if (!(h->type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY)) moqt_put_u8(out, h->publisher_priority);
    return WK_DONE;
}

wk_result wk_moqt_subgroup_header_encode_checked(const wk_moqt_subgroup_header *h, wk_out *out,
                                                 wk_error *err)
{
    if (wk_moqt_subgroup_type_check(h->type, 0, err) != WK_OK) return WK_ERROR;
    return wk_moqt_subgroup_header_encode(h, out, err);
}

/* ---------------------------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------------------------- */
wk_result wk_moqt_subgroup_writer_begin(wk_moqt_subgroup_writer *w,
                                        const wk_moqt_subgroup_header *h, wk_out *out,
                                        wk_error *err)
{
    wk_result r = wk_moqt_subgroup_header_encode_checked(h, out, err);
    if (r != WK_DONE) return r;
    memset(w, 0, sizeof *w);
    w->header = *h;
    w->header.has_priority = !(h->type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY);
    switch (wk_moqt_subgroup_type_id_mode(h->type)) {
    case WK_MOQT_SUBGROUP_ID_ZERO:
        w->header.subgroup_id = 0;
        w->header.subgroup_id_known = true;
        break;
    case WK_MOQT_SUBGROUP_ID_EXPLICIT: w->header.subgroup_id_known = true; break;
    default: break; /* mode 1: known only if the caller said so */
    }
    w->began = true;
    return WK_DONE;
}

/* The object's framing (delta, properties, length, status) before its payload; o checked. */
static inline size_t sg_framing_size(const wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o)
{
    uint64_t delta = w->have_prev ? o->object_id - w->prev_object_id - 1 : o->object_id;
    size_t n = wk_moqt_int_len(delta);
    if (w->header.type & WK_MOQT_SUBGROUP_PROPERTIES)
        n += wk_moqt_int_len(o->properties_len) + o->properties_len;
    n += wk_moqt_int_len(o->payload_len);
    if (o->payload_len == 0) n += wk_moqt_int_len(o->status);
    return n;
}

/* Refuses what the object cannot be (the code, err set); WK_OK when it may be written. */
static inline wk_code sg_check_object(const wk_moqt_subgroup_writer *w,
                                      const wk_moqt_object_out *o, wk_error *err)
{
    if (!w->began) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "writer not begun");
    if (!wk_moqt_status_is_assigned(o->status))
        return wk_error_set(err, WK_ERR_MOQT_UNKNOWN_STATUS, WK_NO_OFFSET,
                            "Object Status is not assigned by draft-20");
    if (o->payload_len > 0 && !wk_moqt_status_permits_payload(o->status))
        return wk_error_set(err, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, WK_NO_OFFSET,
                            "status %s forbids a payload (%llu bytes given)",
                            wk_moqt_status_name(o->status), (unsigned long long)o->payload_len);
    if (w->ended)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "no object may follow End of Group / End of Track on this stream");
    if (w->have_prev && o->object_id <= w->prev_object_id)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "Object IDs on a subgroup stream must increase");
    if (!w->have_prev && wk_moqt_subgroup_type_id_mode(w->header.type) ==
                             WK_MOQT_SUBGROUP_ID_FIRST_OBJECT &&
        w->header.subgroup_id_known && o->object_id != w->header.subgroup_id)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "SUBGROUP_ID_MODE 0b01: the first Object ID must equal the Subgroup ID");
    if (o->properties_len > 0 && !(w->header.type & WK_MOQT_SUBGROUP_PROPERTIES))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "properties given but the header's PROPERTIES bit is clear");
    return WK_OK;
}

wk_code wk_moqt_subgroup_writer_size(const wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o,
                                     uint64_t *size, wk_error *err)
{
    wk_code c = sg_check_object(w, o, err);
    if (c != WK_OK) return c;
    uint64_t n = sg_framing_size(w, o);
    if (o->payload_len > UINT64_MAX - n)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "object size above 2^64-1");
    *size = n + o->payload_len;
    return WK_OK;
}

static wk_result sg_write(wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o, bool payload,
                          wk_out *out, wk_error *err)
{
    if (sg_check_object(w, o, err) != WK_OK) return WK_ERROR;
    uint64_t need = sg_framing_size(w, o);
    if (payload && o->payload_len > UINT64_MAX - need) return WK_NEED_OUTPUT;
    if (!moqt_room(out, need + (payload ? o->payload_len : 0))) return WK_NEED_OUTPUT;
    moqt_put_int(out, w->have_prev ? o->object_id - w->prev_object_id - 1 : o->object_id);
    if (w->header.type & WK_MOQT_SUBGROUP_PROPERTIES) {
        moqt_put_int(out, o->properties_len);
        moqt_put_bytes(out, o->properties, o->properties_len);
    }
    moqt_put_int(out, o->payload_len);
    if (o->payload_len == 0) moqt_put_int(out, o->status);
    else if (payload) moqt_put_bytes(out, o->payload, o->payload_len);
    if (!w->have_prev && !w->header.subgroup_id_known) {
        w->header.subgroup_id = o->object_id;
        w->header.subgroup_id_known = true;
    }
    w->have_prev = true;
    w->prev_object_id = o->object_id;
    if (o->payload_len == 0 && (o->status == WK_MOQT_STATUS_END_OF_GROUP ||
                                o->status == WK_MOQT_STATUS_END_OF_TRACK))
        w->ended = true;
    return WK_DONE;
}

wk_result wk_moqt_subgroup_writer_write(wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o,
                                        wk_out *out, wk_error *err)
{
    return sg_write(w, o, true, out, err);
}

wk_result wk_moqt_subgroup_writer_write_framing(wk_moqt_subgroup_writer *w,
                                                const wk_moqt_object_out *o, wk_out *out,
                                                wk_error *err)
{
    return sg_write(w, o, false, out, err);
}
