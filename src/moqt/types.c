/* MoQT draft-20: error categories, Object Status registry, Type Flags validity (computed from the
 * bits, spec 3.2 and 4.2), stream/datagram type dispatch (spec 2), the Properties block (spec 6)
 * and padding (spec 7). */
#include "moqt_internal.h"

const char *wk_moqt_error_category(wk_code code)
{
    switch (code) {
    case WK_OK: return "ok";
    case WK_ERR_MOQT_TRUNCATED: return "incomplete";
    case WK_ERR_MOQT_UNKNOWN_STREAM_TYPE:
    case WK_ERR_MOQT_WRONG_STREAM_TYPE:
    case WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED:
    case WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR:
    case WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE:
    case WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP:
    case WK_ERR_MOQT_DATAGRAM_RESERVED_BIT:
    case WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT: return "invalid_type";
    case WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED: return "payload_not_permitted";
    case WK_ERR_MOQT_EMPTY_PROPERTIES:
    case WK_ERR_MOQT_STATUS_PROPERTIES:
    case WK_ERR_MOQT_UNKNOWN_STATUS:
    case WK_ERR_MOQT_OBJECT_ID_OVERFLOW:
    case WK_ERR_MOQT_GROUP_ID_OVERFLOW:
    case WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW:
    case WK_ERR_MOQT_OBJECT_AFTER_END:
    case WK_ERR_MOQT_SERIALIZATION_FLAGS:
    case WK_ERR_MOQT_FIRST_RECORD:
    case WK_ERR_MOQT_NO_PRIOR_OBJECT:
    case WK_ERR_MOQT_PRIOR_NO_SUBGROUP:
    case WK_ERR_MOQT_END_OF_RANGE_LENGTH:
    case WK_ERR_MOQT_PROPERTY_LENGTH:
    case WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW:
    case WK_ERR_MOQT_PROPERTY_OVERRUN:
    case WK_ERR_MOQT_PROPERTIES_TOO_LARGE:
    case WK_ERR_MOQT_PADDING_NONZERO: return "invalid_value";
    default: return "error";
    }
}

bool wk_moqt_status_is_assigned(uint64_t status)
{
    return status == WK_MOQT_STATUS_NORMAL || status == WK_MOQT_STATUS_END_OF_GROUP ||
           status == WK_MOQT_STATUS_END_OF_TRACK;
}

bool wk_moqt_status_permits_payload(uint64_t status) { return status == WK_MOQT_STATUS_NORMAL; }

const char *wk_moqt_status_name(uint64_t status)
{
    switch (status) {
    case WK_MOQT_STATUS_NORMAL: return "normal";
    case WK_MOQT_STATUS_END_OF_GROUP: return "end_of_group";
    case WK_MOQT_STATUS_END_OF_TRACK: return "end_of_track";
    default: return NULL;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Type Flags
 * ------------------------------------------------------------------------------------------- */
uint64_t wk_moqt_subgroup_type_make(bool properties, wk_moqt_subgroup_id_mode mode,
                                    bool end_of_group, bool default_priority, bool first_object)
{
    uint64_t t = WK_MOQT_SUBGROUP_BASE;
    if (properties) t |= WK_MOQT_SUBGROUP_PROPERTIES;
    t |= ((uint64_t)mode << WK_MOQT_SUBGROUP_ID_MODE_SHIFT) & WK_MOQT_SUBGROUP_ID_MODE_MASK;
    if (end_of_group) t |= WK_MOQT_SUBGROUP_END_OF_GROUP;
    if (default_priority) t |= WK_MOQT_SUBGROUP_DEFAULT_PRIORITY;
    if (first_object) t |= WK_MOQT_SUBGROUP_FIRST_OBJECT;
    return t;
}

wk_code wk_moqt_subgroup_type_check(uint64_t type, uint64_t offset, wk_error *err)
{
    /* Section 11.4.2's three conditions, each computed from the bits. */
    if (type >= 128)
        return wk_error_set(err, WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE, offset,
                            "subgroup Type Flags 0x%llx are 128 or greater",
                            (unsigned long long)type);
    if (!(type & WK_MOQT_SUBGROUP_BASE))
        return wk_error_set(err, WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR, offset,
                            "subgroup Type Flags 0x%02llx have bit 4 (0x10) clear",
                            (unsigned long long)type);
    if (wk_moqt_subgroup_type_id_mode(type) == WK_MOQT_SUBGROUP_ID_RESERVED)
        return wk_error_set(err, WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED, offset,
                            "subgroup Type Flags 0x%02llx set SUBGROUP_ID_MODE to the reserved 0b11",
                            (unsigned long long)type);
    return WK_OK;
}

bool wk_moqt_subgroup_type_is_valid(uint64_t type)
{
    return wk_moqt_subgroup_type_check(type, WK_NO_OFFSET, NULL) == WK_OK;
}

uint64_t wk_moqt_datagram_type_make(bool properties, bool end_of_group, bool zero_object_id,
                                    bool default_priority, bool status)
{
    uint64_t t = 0;
    if (properties) t |= WK_MOQT_DATAGRAM_PROPERTIES;
    if (end_of_group) t |= WK_MOQT_DATAGRAM_END_OF_GROUP;
    if (zero_object_id) t |= WK_MOQT_DATAGRAM_ZERO_OBJECT_ID;
    if (default_priority) t |= WK_MOQT_DATAGRAM_DEFAULT_PRIORITY;
    if (status) t |= WK_MOQT_DATAGRAM_STATUS;
    return t;
}

wk_code wk_moqt_datagram_type_check(uint64_t type, uint64_t offset, wk_error *err)
{
    /* Section 11.3.1: unspecified bits (6 and up, so every value >= 64), the reserved bit 4, and
     * STATUS with END_OF_GROUP. */
    if (type & ~(uint64_t)(WK_MOQT_DATAGRAM_SPECIFIED | WK_MOQT_DATAGRAM_RESERVED))
        return wk_error_set(err, WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT, offset,
                            "datagram Type Flags 0x%llx set a bit with no specified meaning",
                            (unsigned long long)type);
    if (type & WK_MOQT_DATAGRAM_RESERVED)
        return wk_error_set(err, WK_ERR_MOQT_DATAGRAM_RESERVED_BIT, offset,
                            "datagram Type Flags 0x%02llx set the reserved bit 4 (0x10)",
                            (unsigned long long)type);
    if ((type & WK_MOQT_DATAGRAM_STATUS) && (type & WK_MOQT_DATAGRAM_END_OF_GROUP))
        return wk_error_set(err, WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP, offset,
                            "datagram Type Flags 0x%02llx set both STATUS and END_OF_GROUP",
                            (unsigned long long)type);
    return WK_OK;
}

bool wk_moqt_datagram_type_is_valid(uint64_t type)
{
    return wk_moqt_datagram_type_check(type, WK_NO_OFFSET, NULL) == WK_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------------------------- */
wk_code wk_moqt_stream_type_classify(uint64_t type, uint64_t offset, wk_moqt_stream_kind *kind,
                                     wk_error *err)
{
    wk_moqt_stream_kind k = WK_MOQT_KIND_NONE;
    if (type == WK_MOQT_STREAM_TYPE_FETCH) k = WK_MOQT_KIND_FETCH;
    else if (type == WK_MOQT_STREAM_TYPE_PADDING) k = WK_MOQT_KIND_PADDING;
    else if (type == WK_MOQT_STREAM_TYPE_SETUP) k = WK_MOQT_KIND_SETUP;
    else if (type < 128 && (type & WK_MOQT_SUBGROUP_BASE)) {
        /* The 0b0XX1XXXX pattern: a subgroup header, whose mode may still be the reserved one. */
        wk_code c = wk_moqt_subgroup_type_check(type, offset, err);
        if (c != WK_OK) return c;
        k = WK_MOQT_KIND_SUBGROUP;
    }
    if (kind) *kind = k;
    if (k == WK_MOQT_KIND_NONE)
        return wk_error_set(err, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, offset,
                            "unknown unidirectional stream type 0x%llx", (unsigned long long)type);
    return WK_OK;
}

wk_code wk_moqt_datagram_type_classify(uint64_t type, uint64_t offset, wk_moqt_stream_kind *kind,
                                       wk_error *err)
{
    /* The padding value first: as Type Flags it would set unspecified bits. */
    if (type == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        if (kind) *kind = WK_MOQT_KIND_PADDING;
        return WK_OK;
    }
    if (kind) *kind = WK_MOQT_KIND_NONE;
    wk_code c = wk_moqt_datagram_type_check(type, offset, err);
    if (c != WK_OK) return c;
    if (kind) *kind = WK_MOQT_KIND_DATAGRAM;
    return WK_OK;
}

wk_code wk_moqt_type_peek(const wk_in *in, bool datagram, wk_moqt_stream_kind *kind,
                          uint64_t *type, size_t *type_len, wk_error *err)
{
    size_t n = in->size - in->pos;
    wk_cursor c = wk_cursor_make(in->src + in->pos, n);
    uint64_t t;
    if (kind) *kind = WK_MOQT_KIND_NONE;
    if (!wk_cursor_moqt_int(&c, &t))
        return wk_error_set(err, WK_ERR_MOQT_TRUNCATED, n, "input ends inside the %s type",
                            datagram ? "datagram" : "stream");
    if (type) *type = t;
    if (type_len) *type_len = wk_cursor_offset(&c);
    return datagram ? wk_moqt_datagram_type_classify(t, 0, kind, err)
                    : wk_moqt_stream_type_classify(t, 0, kind, err);
}

/* ---------------------------------------------------------------------------------------------
 * Properties
 * ------------------------------------------------------------------------------------------- */
void wk_moqt_properties_iter_init(wk_moqt_properties_iter *it, const wk_in *pairs,
                                  uint64_t base_offset)
{
    it->c = wk_cursor_make(pairs->src + pairs->pos, pairs->size - pairs->pos);
    it->type = 0;
    it->base_offset = base_offset;
}

wk_code wk_moqt_properties_iter_next(wk_moqt_properties_iter *it, wk_moqt_property *prop,
                                     bool *got, wk_error *err)
{
    *got = false;
    if (wk_cursor_left(&it->c) == 0) return WK_OK;
    uint64_t at = it->base_offset + wk_cursor_offset(&it->c);
    wk_cursor c = it->c;
    uint64_t delta, type;
    if (!wk_cursor_moqt_int(&c, &delta))
        return wk_error_set(err, WK_ERR_MOQT_PROPERTY_OVERRUN, at,
                            "property type crosses the end of the Properties block");
    if (delta > UINT64_MAX - it->type)
        return wk_error_set(err, WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, at,
                            "property type %llu + delta %llu exceeds 2^64-1",
                            (unsigned long long)it->type, (unsigned long long)delta);
    type = it->type + delta;
    prop->type = type;
    prop->value = 0;
    prop->bytes = NULL;
    prop->len = 0;
    if ((type & 1) == 0) {
        if (!wk_cursor_moqt_int(&c, &prop->value))
            return wk_error_set(err, WK_ERR_MOQT_PROPERTY_OVERRUN, at,
                                "value of property 0x%llx crosses the end of the Properties block",
                                (unsigned long long)type);
    } else {
        uint64_t len;
        if (!wk_cursor_moqt_int(&c, &len))
            return wk_error_set(err, WK_ERR_MOQT_PROPERTY_OVERRUN, at,
                                "length of property 0x%llx crosses the end of the Properties block",
                                (unsigned long long)type);
        if (len > WK_MOQT_PROP_VALUE_MAX_LEN)
            return wk_error_set(err, WK_ERR_MOQT_PROPERTY_LENGTH, at,
                                "property 0x%llx value length %llu exceeds 65535",
                                (unsigned long long)type, (unsigned long long)len);
        if (!wk_cursor_take(&c, (size_t)len, &prop->bytes))
            return wk_error_set(err, WK_ERR_MOQT_PROPERTY_OVERRUN, at,
                                "value of property 0x%llx crosses the end of the Properties block",
                                (unsigned long long)type);
        prop->len = (size_t)len;
    }
    it->c = c;
    it->type = type;
    *got = true;
    return WK_OK;
}

wk_code wk_moqt_properties_validate(const wk_in *pairs, uint64_t base_offset, size_t *count,
                                    wk_error *err)
{
    wk_moqt_properties_iter it;
    wk_moqt_properties_iter_init(&it, pairs, base_offset);
    size_t k = 0;
    for (;;) {
        wk_moqt_property prop;
        bool got;
        wk_code c = wk_moqt_properties_iter_next(&it, &prop, &got, err);
        if (c != WK_OK) return c;
        if (!got) break;
        k++;
    }
    if (count) *count = k;
    return WK_OK;
}

wk_code moqt_check_properties(const uint8_t *pairs, size_t n, uint64_t base_offset,
                              bool length_only, wk_error *err)
{
    if (length_only || n == 0) return WK_OK;
    wk_in v = {pairs, n, 0};
    return wk_moqt_properties_validate(&v, base_offset, NULL, err);
}

wk_code wk_moqt_properties_size(const wk_moqt_property *props, size_t n, size_t *size,
                                wk_error *err)
{
    uint64_t prev = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        if (props[i].type < prev)
            return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                                "property %zu: types must be written in non-decreasing order", i);
        total += wk_moqt_int_len(props[i].type - prev);
        if (props[i].type & 1) {
            if (props[i].len > WK_MOQT_PROP_VALUE_MAX_LEN)
                return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                                    "property %zu: value length %zu exceeds 65535", i,
                                    props[i].len);
            total += wk_moqt_int_len(props[i].len) + props[i].len;
        } else {
            total += wk_moqt_int_len(props[i].value);
        }
        prev = props[i].type;
    }
    *size = (size_t)total;
    return WK_OK;
}

wk_result wk_moqt_properties_encode(const wk_moqt_property *props, size_t n, wk_out *out,
                                    wk_error *err)
{
    size_t size;
    if (wk_moqt_properties_size(props, n, &size, err) != WK_OK) return WK_ERROR;
    if (!moqt_room(out, size)) return WK_NEED_OUTPUT;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        moqt_put_int(out, props[i].type - prev);
        if (props[i].type & 1) {
            moqt_put_int(out, props[i].len);
            moqt_put_bytes(out, props[i].bytes, props[i].len);
        } else {
            moqt_put_int(out, props[i].value);
        }
        prev = props[i].type;
    }
    return WK_DONE;
}

/* ---------------------------------------------------------------------------------------------
 * Padding
 * ------------------------------------------------------------------------------------------- */
uint64_t wk_moqt_padding_size(bool datagram, uint64_t len)
{
    uint64_t type = datagram ? WK_MOQT_DATAGRAM_TYPE_PADDING : WK_MOQT_STREAM_TYPE_PADDING;
    unsigned tl = wk_moqt_int_len(type);
    return len > UINT64_MAX - tl ? UINT64_MAX : tl + len;
}

wk_result wk_moqt_padding_encode(bool datagram, uint64_t len, wk_out *out, wk_error *err)
{
    (void)err;
    uint64_t type = datagram ? WK_MOQT_DATAGRAM_TYPE_PADDING : WK_MOQT_STREAM_TYPE_PADDING;
    uint64_t size = wk_moqt_padding_size(datagram, len);
    if (size == UINT64_MAX || !moqt_room(out, size)) return WK_NEED_OUTPUT;
    moqt_put_int(out, type);
    memset(out->dst + out->pos, 0, (size_t)len);
    out->pos += (size_t)len;
    return WK_DONE;
}
