/* MoQT draft-20 OBJECT_DATAGRAM (spec 4) and padding datagrams (spec 7). */
#include "moqt_internal.h"

/* The datagram p[0..n): WK_OK or the error's code. */
static wk_code dg_decode(const uint8_t *p, size_t n, const wk_moqt_read_options *options,
                         wk_moqt_datagram *d, wk_error *err)
{
    static const wk_moqt_read_options defaults;
    const wk_moqt_read_options *opt = options ? options : &defaults;
    wk_cursor c = wk_cursor_make(p, n);
    uint64_t type;
    memset(d, 0, sizeof *d);
    if (!wk_cursor_moqt_int(&c, &type))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the datagram type");
    d->type = type;
    if (type == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        d->padding = true;
        d->payload = c.p;
        d->payload_len = wk_cursor_left(&c);
        if (opt->strict_padding)
            for (size_t i = 0; i < d->payload_len; i++)
                if (d->payload[i] != 0)
                    return wk_error_set(err, WK_ERR_MOQT_PADDING_NONZERO,
                                        wk_cursor_offset(&c) + i, "padding byte 0x%02x is not zero",
                                        d->payload[i]);
        return WK_OK;
    }
    /* A valid Type Flags value (no bit outside 0x2F, not STATUS with END_OF_GROUP) needs no call;
     * anything else gets its error from the full check. */
    const uint64_t both = WK_MOQT_DATAGRAM_STATUS | WK_MOQT_DATAGRAM_END_OF_GROUP;
    if ((type & ~(uint64_t)WK_MOQT_DATAGRAM_SPECIFIED) || (type & both) == both) {
        wk_code code = wk_moqt_datagram_type_check(type, 0, err);
        if (code != WK_OK) return code;
    }
    if (!wk_cursor_moqt_int(&c, &d->track_alias))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Track Alias");
    if (!wk_cursor_moqt_int(&c, &d->group_id))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Group ID");
    if (!(type & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) && !wk_cursor_moqt_int(&c, &d->object_id))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Object ID");
    d->has_priority = !(type & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY);
    if (d->has_priority && !wk_cursor_u8(&c, &d->publisher_priority))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n,
                            "input ends before the Publisher Priority");
    uint64_t props_at = 0;
    if (type & WK_MOQT_DATAGRAM_PROPERTIES) {
        uint64_t len;
        size_t len_at = wk_cursor_offset(&c);
        d->has_properties = true;
        if (!wk_cursor_moqt_int(&c, &len))
            return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n,
                                "input ends inside the Properties Length");
        if (len == 0)
            return wk_error_set(err, WK_ERR_MOQT_EMPTY_PROPERTIES, len_at,
                                "PROPERTIES bit set with a Properties Length of 0");
        props_at = wk_cursor_offset(&c);
        if (len > wk_cursor_left(&c))
            return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n,
                                "input ends inside the Properties block (%llu bytes declared)",
                                (unsigned long long)len);
        wk_cursor_take(&c, (size_t)len, &d->properties);
        d->properties_len = (size_t)len;
    }
    if (type & WK_MOQT_DATAGRAM_STATUS) {
        size_t at = wk_cursor_offset(&c);
        d->has_status = true;
        if (!wk_cursor_moqt_int(&c, &d->status))
            return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the Object Status");
        if (!opt->allow_unknown_status && !wk_moqt_status_is_assigned(d->status))
            return wk_error_set(err, WK_ERR_MOQT_UNKNOWN_STATUS, at,
                                "Object Status 0x%llx is not assigned", (unsigned long long)d->status);
        if (d->has_properties && d->status != WK_MOQT_STATUS_NORMAL)
            return wk_error_set(err, WK_ERR_MOQT_STATUS_PROPERTIES, at,
                                "only a Normal object may carry properties (status 0x%llx)",
                                (unsigned long long)d->status);
        if (wk_cursor_left(&c) > 0)
            return wk_error_set(err, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, wk_cursor_offset(&c),
                                "%zu bytes after the Object Status of a STATUS datagram",
                                wk_cursor_left(&c));
        d->payload = c.p;
    } else {
        d->payload = c.p;
        d->payload_len = wk_cursor_left(&c);
    }
    if (d->has_properties)
        return moqt_check_properties(d->properties, d->properties_len, props_at,
                                     opt->properties_length_only, err);
    return WK_OK;
}

wk_result wk_moqt_datagram_decode(wk_moqt_datagram *d, wk_in *in,
                                  const wk_moqt_read_options *options, wk_error *err)
{
    if (dg_decode(in->src + in->pos, in->size - in->pos, options, d, err) != WK_OK) return WK_ERROR;
    in->pos = in->size;
    return WK_DONE;
}

size_t wk_moqt_datagram_size(const wk_moqt_datagram *d)
{
    uint64_t t = d->type;
    size_t n = wk_moqt_int_len(t);
    if (d->padding || t == WK_MOQT_DATAGRAM_TYPE_PADDING) return n + d->payload_len;
    n += wk_moqt_int_len(d->track_alias) + wk_moqt_int_len(d->group_id);
    if (!(t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID)) n += wk_moqt_int_len(d->object_id);
    if (!(t & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY)) n += 1;
    if (t & WK_MOQT_DATAGRAM_PROPERTIES)
        n += wk_moqt_int_len(d->properties_len) + d->properties_len;
    if (t & WK_MOQT_DATAGRAM_STATUS) n += wk_moqt_int_len(d->status);
    else n += d->payload_len;
    return n;
}

wk_result wk_moqt_datagram_encode(const wk_moqt_datagram *d, wk_out *out, wk_error *err)
{
    (void)err;
    uint64_t t = d->type;
    if (!moqt_room(out, wk_moqt_datagram_size(d))) return WK_NEED_OUTPUT;
    moqt_put_int(out, t);
    if (d->padding || t == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        moqt_put_bytes(out, d->payload, d->payload_len);
        return WK_DONE;
    }
    moqt_put_int(out, d->track_alias);
    moqt_put_int(out, d->group_id);
    if (!(t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID)) moqt_put_int(out, d->object_id);
    if (!(t & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY)) moqt_put_u8(out, d->publisher_priority);
    if (t & WK_MOQT_DATAGRAM_PROPERTIES) {
        moqt_put_int(out, d->properties_len);
        moqt_put_bytes(out, d->properties, d->properties_len);
    }
    if (t & WK_MOQT_DATAGRAM_STATUS) moqt_put_int(out, d->status);
    else moqt_put_bytes(out, d->payload, d->payload_len);
    return WK_DONE;
}

wk_result wk_moqt_datagram_encode_checked(const wk_moqt_datagram *d, wk_out *out, wk_error *err)
{
    uint64_t t = d->type;
    if (d->padding || t == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        if (t != WK_MOQT_DATAGRAM_TYPE_PADDING)
            return moqt_refuse(err, WK_ERR_ARG, WK_NO_OFFSET,
                               "a padding datagram has type 0x132B3E29");
        for (size_t i = 0; i < d->payload_len; i++)
            if (d->payload[i] != 0)
                return moqt_refuse(err, WK_ERR_ARG, WK_NO_OFFSET, "padding bytes must be zero");
        return wk_moqt_datagram_encode(d, out, err);
    }
    if (wk_moqt_datagram_type_check(t, 0, err) != WK_OK) return WK_ERROR;
    if ((t & WK_MOQT_DATAGRAM_PROPERTIES) && d->properties_len == 0)
        return moqt_refuse(err, WK_ERR_MOQT_EMPTY_PROPERTIES, WK_NO_OFFSET,
                           "PROPERTIES bit set with no properties: clear the bit instead");
    if (!(t & WK_MOQT_DATAGRAM_PROPERTIES) && d->properties_len > 0)
        return moqt_refuse(err, WK_ERR_ARG, WK_NO_OFFSET,
                           "properties given but the PROPERTIES bit is clear");
    if ((t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) && d->object_id != 0)
        return moqt_refuse(err, WK_ERR_ARG, WK_NO_OFFSET,
                           "ZERO_OBJECT_ID set but the Object ID is not 0");
    if (t & WK_MOQT_DATAGRAM_STATUS) {
        if (!wk_moqt_status_is_assigned(d->status))
            return moqt_refuse(err, WK_ERR_MOQT_UNKNOWN_STATUS, WK_NO_OFFSET,
                               "Object Status is not assigned by draft-20");
        if (d->properties_len > 0 && d->status != WK_MOQT_STATUS_NORMAL)
            return moqt_refuse(err, WK_ERR_MOQT_STATUS_PROPERTIES, WK_NO_OFFSET,
                               "only a Normal object may carry properties");
        if (d->payload_len > 0)
            return moqt_refuse(err, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, WK_NO_OFFSET,
                               "a STATUS datagram carries no payload");
    } else if (d->has_status && d->status != WK_MOQT_STATUS_NORMAL) {
        /* The caller holds a status and a payload; the type cannot carry the status. */
        if (d->payload_len > 0 && !wk_moqt_status_permits_payload(d->status))
            return moqt_refuse(err, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, WK_NO_OFFSET,
                               "the status forbids a payload");
        return moqt_refuse(err, WK_ERR_ARG, WK_NO_OFFSET,
                           "a non-Normal status needs the STATUS bit");
    }
    return wk_moqt_datagram_encode(d, out, err);
}
