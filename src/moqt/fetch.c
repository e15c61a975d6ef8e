/* MoQT draft-20 FETCH_HEADER (spec 5.1) and the fetch writer (spec 5.2-5.6). The reader is in
 * reader.c; the delta rules here are their inverse. */
#include "moqt_internal.h"

bool wk_moqt_fetch_flags_is_end_of_range(uint64_t flags)
{
    return flags == WK_MOQT_FETCH_END_OF_NON_EXISTENT_RANGE ||
           flags == WK_MOQT_FETCH_END_OF_UNKNOWN_RANGE ||
           flags == WK_MOQT_FETCH_END_OF_TIMED_OUT_RANGE;
}

wk_result wk_moqt_fetch_header_decode(wk_moqt_fetch_header *h, wk_in *in, wk_error *err)
{
    size_t n = in->size - in->pos;
    wk_cursor c = wk_cursor_make(in->src + in->pos, n);
    uint64_t type;
    memset(h, 0, sizeof *h);
    if (!wk_cursor_moqt_int(&c, &type))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the stream type");
    if (type != WK_MOQT_STREAM_TYPE_FETCH) {
        wk_error_set(err, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0,
                     "stream type 0x%llx is not FETCH_HEADER (0x05)", (unsigned long long)type);
        return WK_ERROR;
    }
    if (!wk_cursor_moqt_int(&c, &h->request_id))
        return moqt_refuse(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Request ID");
    in->pos += wk_cursor_offset(&c);
    return WK_DONE;
}

size_t wk_moqt_fetch_header_size(const wk_moqt_fetch_header *h)
{
    return 1 + wk_moqt_int_len(h->request_id);
}

wk_result wk_moqt_fetch_header_encode(const wk_moqt_fetch_header *h, wk_out *out, wk_error *err)
{
    (void)err;
    if (!moqt_room(out, wk_moqt_fetch_header_size(h))) return WK_NEED_OUTPUT;
    moqt_put_int(out, WK_MOQT_STREAM_TYPE_FETCH);
    moqt_put_int(out, h->request_id);
    return WK_DONE;
}

/* ---------------------------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------------------------- */
wk_result wk_moqt_fetch_writer_begin(wk_moqt_fetch_writer *w, uint64_t request_id,
                                     wk_moqt_group_order group_order,
                                     wk_moqt_end_of_range end_of_range, wk_out *out,
                                     wk_error *err)
{
    wk_moqt_fetch_header h = {request_id};
    wk_result r = wk_moqt_fetch_header_encode(&h, out, err);
    if (r != WK_DONE) return r;
    memset(w, 0, sizeof *w);
    w->group_order = group_order;
    w->end_of_range = end_of_range;
    w->began = true;
    return WK_DONE;
}

/* The Group ID Delta that takes the prior group to `group` (present delta), or false. */
static bool group_delta(const wk_moqt_fetch_writer *w, uint64_t group, uint64_t *delta)
{
    if (w->group_order == WK_MOQT_GROUP_ORDER_DESCENDING) {
        if (group >= w->prior_group) return false;
        *delta = w->prior_group - group - 1;
    } else {
        if (group <= w->prior_group) return false;
        *delta = group - w->prior_group - 1;
    }
    return true;
}

/* The wire fields of o with o->flags, after the checks; the code (err set) when the flags cannot
 * express o. */
typedef struct fetch_fields {
    uint64_t gdelta, odelta;
    size_t header_size;
} fetch_fields;

static inline wk_code fetch_plan(const wk_moqt_fetch_writer *w,
                                 const wk_moqt_fetch_object_out *o, fetch_fields *f,
                                 wk_error *err)
{
    uint64_t fl = o->flags;
    const char *why = NULL;
    bool first = !w->any_record;
    bool dgram = (fl & WK_MOQT_FETCH_DATAGRAM) != 0;
    unsigned mode = (unsigned)(fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK);
    f->gdelta = f->odelta = 0;
    f->header_size = 0;
    if (!w->began) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "writer not begun");
    if (fl > WK_MOQT_FETCH_FLAGS_MAX)
        why = "Serialization Flags above 127 (End of Range markers use _write_end_of_range)";
    else if (first && (!(fl & WK_MOQT_FETCH_GROUP_ID_DELTA) || !(fl & WK_MOQT_FETCH_OBJECT_ID_DELTA)))
        why = "the first record must carry both Group ID Delta and Object ID Delta";
    else if (!(fl & WK_MOQT_FETCH_PRIORITY) && !w->any_object)
        why = "no prior object to take the priority from";
    else if (!(fl & WK_MOQT_FETCH_PRIORITY) && o->publisher_priority != w->prior_priority)
        why = "priority differs from the prior object's: set 0x10";
    else if (!dgram && (mode == 1 || mode == 2) && !w->any_object)
        why = "no prior object to take the Subgroup ID from";
    else if (!dgram && (mode == 1 || mode == 2) && !w->prior_has_subgroup)
        why = "the prior object has no Subgroup ID (datagram)";
    else if (!dgram && mode == 0 && o->subgroup_id != 0)
        why = "subgroup mode 0 gives Subgroup ID 0";
    else if (!dgram && mode == 1 && o->subgroup_id != w->prior_subgroup)
        why = "subgroup mode 1 gives the prior Subgroup ID";
    else if (!dgram && mode == 2 &&
             (w->prior_subgroup == UINT64_MAX || o->subgroup_id != w->prior_subgroup + 1))
        why = "subgroup mode 2 gives the prior Subgroup ID + 1";
    else if (!(fl & WK_MOQT_FETCH_PROPERTIES) && o->properties_len > 0)
        why = "properties given but flag 0x20 is clear";
    if (!why && first) {
        f->gdelta = o->group_id;
        f->odelta = o->object_id;
    } else if (!why) {
        bool new_group = (fl & WK_MOQT_FETCH_GROUP_ID_DELTA) != 0;
        if (new_group && !group_delta(w, o->group_id, &f->gdelta))
            why = w->group_order == WK_MOQT_GROUP_ORDER_DESCENDING
                      ? "a Group ID Delta must move to a lower group in Descending order"
                      : "a Group ID Delta must move to a higher group in Ascending order";
        else if (!new_group && o->group_id != w->prior_group)
            why = "the group changed: set 0x08";
        else if (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) {
            if (new_group) f->odelta = o->object_id;
            else if (o->object_id < w->prior_object)
                why = "in the same group an Object ID Delta cannot go below the prior Object ID";
            else f->odelta = o->object_id - w->prior_object;
        } else if (w->prior_object == UINT64_MAX || o->object_id != w->prior_object + 1) {
            why = "without 0x04 the Object ID is the prior + 1";
        }
    }
    if (why) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "fetch flags 0x%02llx: %s",
                     (unsigned long long)fl, why);
        return WK_ERR_ARG;
    }
    size_t n = wk_moqt_int_len(fl);
    if (fl & WK_MOQT_FETCH_GROUP_ID_DELTA) n += wk_moqt_int_len(f->gdelta);
    if (!dgram && mode == WK_MOQT_FETCH_SUBGROUP_EXPLICIT) n += wk_moqt_int_len(o->subgroup_id);
    if (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) n += wk_moqt_int_len(f->odelta);
    if (fl & WK_MOQT_FETCH_PRIORITY) n += 1;
    if (fl & WK_MOQT_FETCH_PROPERTIES)
        n += wk_moqt_int_len(o->properties_len) + o->properties_len;
    n += wk_moqt_int_len(o->payload_len);
    f->header_size = n;
    return WK_OK;
}

uint64_t wk_moqt_fetch_writer_pick_flags(const wk_moqt_fetch_writer *w,
                                         const wk_moqt_fetch_object_out *o, bool datagram)
{
    uint64_t fl = 0;
    bool first = !w->any_record;
    if (first || o->group_id != w->prior_group) {
        fl |= WK_MOQT_FETCH_GROUP_ID_DELTA | WK_MOQT_FETCH_OBJECT_ID_DELTA;
        /* Keep the Object ID implicit when it continues across the group change. */
        if (!first && w->prior_object != UINT64_MAX && o->object_id == w->prior_object + 1)
            fl &= ~(uint64_t)WK_MOQT_FETCH_OBJECT_ID_DELTA;
    } else if (w->prior_object == UINT64_MAX || o->object_id != w->prior_object + 1) {
        fl |= WK_MOQT_FETCH_OBJECT_ID_DELTA;
    }
    if (!w->any_object || o->publisher_priority != w->prior_priority) fl |= WK_MOQT_FETCH_PRIORITY;
    if (o->properties_len > 0) fl |= WK_MOQT_FETCH_PROPERTIES;
    if (datagram) {
        fl |= WK_MOQT_FETCH_DATAGRAM;
    } else if (o->subgroup_id == 0) {
        fl |= WK_MOQT_FETCH_SUBGROUP_ZERO;
    } else if (w->any_object && w->prior_has_subgroup && o->subgroup_id == w->prior_subgroup) {
        fl |= WK_MOQT_FETCH_SUBGROUP_PRIOR;
    } else if (w->any_object && w->prior_has_subgroup && w->prior_subgroup != UINT64_MAX &&
               o->subgroup_id == w->prior_subgroup + 1) {
        fl |= WK_MOQT_FETCH_SUBGROUP_NEXT;
    } else {
        fl |= WK_MOQT_FETCH_SUBGROUP_EXPLICIT;
    }
    return fl;
}

wk_code wk_moqt_fetch_writer_size(const wk_moqt_fetch_writer *w, const wk_moqt_fetch_object_out *o,
                                  uint64_t *size, wk_error *err)
{
    fetch_fields f;
    wk_code c = fetch_plan(w, o, &f, err);
    if (c != WK_OK) return c;
    if (o->payload_len > UINT64_MAX - f.header_size)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "record size above 2^64-1");
    *size = f.header_size + o->payload_len;
    return WK_OK;
}

static wk_result fetch_write(wk_moqt_fetch_writer *w, const wk_moqt_fetch_object_out *o,
                             bool payload, wk_out *out, wk_error *err)
{
    fetch_fields f;
    if (fetch_plan(w, o, &f, err) != WK_OK) return WK_ERROR;
    uint64_t fl = o->flags;
    bool dgram = (fl & WK_MOQT_FETCH_DATAGRAM) != 0;
    if (payload && o->payload_len > UINT64_MAX - f.header_size) return WK_NEED_OUTPUT;
    if (!moqt_room(out, f.header_size + (payload ? o->payload_len : 0))) return WK_NEED_OUTPUT;
    moqt_put_int(out, fl);
    if (fl & WK_MOQT_FETCH_GROUP_ID_DELTA) moqt_put_int(out, f.gdelta);
    if (!dgram && (fl & WK_MOQT_FETCH_SUBGROUP_MODE_MASK) == WK_MOQT_FETCH_SUBGROUP_EXPLICIT)
        moqt_put_int(out, o->subgroup_id);
    if (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) moqt_put_int(out, f.odelta);
    if (fl & WK_MOQT_FETCH_PRIORITY) moqt_put_u8(out, o->publisher_priority);
    if (fl & WK_MOQT_FETCH_PROPERTIES) {
        moqt_put_int(out, o->properties_len);
        moqt_put_bytes(out, o->properties, o->properties_len);
    }
    moqt_put_int(out, o->payload_len);
    if (payload) moqt_put_bytes(out, o->payload, o->payload_len);
    w->any_record = true;
    w->any_object = true;
    w->prior_group = o->group_id;
    w->prior_object = o->object_id;
    w->prior_has_subgroup = !dgram;
    w->prior_subgroup = dgram ? 0 : o->subgroup_id;
    w->prior_priority = o->publisher_priority;
    return WK_DONE;
}

wk_result wk_moqt_fetch_writer_write(wk_moqt_fetch_writer *w, const wk_moqt_fetch_object_out *o,
                                     wk_out *out, wk_error *err)
{
    return fetch_write(w, o, true, out, err);
}

wk_result wk_moqt_fetch_writer_write_framing(wk_moqt_fetch_writer *w,
                                             const wk_moqt_fetch_object_out *o, wk_out *out,
                                             wk_error *err)
{
    return fetch_write(w, o, false, out, err);
}

/* The marker's group field (*g: the delta in reading A after the first record, else the ID) and
 * its size; the code it is refused with otherwise. */
static wk_code eor_plan(const wk_moqt_fetch_writer *w, uint64_t marker, uint64_t group_id,
                        uint64_t object_id, uint64_t *g, size_t *size, wk_error *err)
{
    if (!w->began) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "writer not begun");
    if (!wk_moqt_fetch_flags_is_end_of_range(marker))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "End of Range marker must be 0x8C, 0x10C or 0x20C");
    bool absolute = w->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
    *g = group_id;
    if (!absolute && w->any_record && !group_delta(w, group_id, g))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "End of Range (delta reading): the marker's group must be reachable "
                            "with a Group ID Delta from the prior record's group");
    *size = wk_moqt_int_len(marker) + wk_moqt_int_len(*g) + wk_moqt_int_len(object_id) +
            (absolute ? 0 : 1);
    return WK_OK;
}

wk_code wk_moqt_fetch_writer_end_of_range_size(const wk_moqt_fetch_writer *w, uint64_t marker,
                                               uint64_t group_id, uint64_t object_id,
                                               size_t *size, wk_error *err)
{
    uint64_t g = 0;
    return eor_plan(w, marker, group_id, object_id, &g, size, err);
}

wk_result wk_moqt_fetch_writer_write_end_of_range(wk_moqt_fetch_writer *w, uint64_t marker,
                                                  uint64_t group_id, uint64_t object_id,
                                                  wk_out *out, wk_error *err)
{
    uint64_t g = 0, o = object_id;
    size_t need = 0;
    bool absolute = w->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
    if (eor_plan(w, marker, group_id, object_id, &g, &need, err) != WK_OK) return WK_ERROR;
    if (!moqt_room(out, need)) return WK_NEED_OUTPUT;
    moqt_put_int(out, marker);
    moqt_put_int(out, g);
    moqt_put_int(out, o);
    if (!absolute) moqt_put_int(out, 0); /* Object Payload Length */
    w->any_record = true;
    w->prior_group = group_id;
    w->prior_object = object_id;
    return WK_DONE;
}
