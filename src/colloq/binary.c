/* colloq: the plan-derived binary frame (RFC-0005; spec "The three encodings").
 * [transition_id varint][sequence varint][payload_len varint][payload], LEB128 minimal, payload =
 * presence bitmap + present fields in schedule order. The decoder allocates nothing and borrows
 * string/bytes slices from the input; every length is checked against the remaining bytes and
 * the ceiling before a slice is taken. */
#include "colloq_internal.h"
#include <math.h>

/* Little-endian load of a fixed width (1, 2, 4 or 8): constant shifts compile to one load. */
static inline uint64_t get_le(const uint8_t *p, unsigned n)
{
    switch (n) {
    case 1: return p[0];
    case 2: return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    case 4:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
    default:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
               (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
               (uint64_t)p[7] << 56;
    }
}

static inline void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    switch (n) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); break;
    case 4:
        p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
        break;
    default:
        for (unsigned i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
        break;
    }
}

/* Copies n bytes of a string or bytes value: short ones inline (a libc call costs more than the
 * copy), in loads and stores of the widths wk_colloq_utf8_valid reads them with. */
static inline void copy_value(uint8_t *restrict d, const uint8_t *restrict s, size_t n)
{
    if (n > 16 && n <= 32) {
        uint8_t a[16], b[16];
        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(d, a, 16);
        memcpy(d + n - 16, b, 16);
    } else if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n >> 1] = s[n >> 1];
        d[n - 1] = s[n - 1];
    } else if (n) {
        memcpy(d, s, n);
    }
}

/* Writes a frame whose values are known to fit m (payload plen bytes) at p: header varints,
 * bitmap, fields. The caller has checked the room. The counts are read once into locals: the
 * byte stores through p may alias m and f, which would make the compiler reload them. */
static inline void write_frame(uint8_t *restrict p, const wk_colloq_message *restrict m,
                               const wk_colloq_frame *restrict f, size_t plen)
{
    const uint32_t count = m->field_count, bitmap_bytes = m->bitmap_bytes;
    const wk_colloq_field *restrict fd = m->fields;
    const wk_colloq_value *restrict v = f->fields;
    p += wk_leb128_put(p, f->transition);
    p += wk_leb128_put(p, f->seq);
    p += wk_leb128_put(p, plen);
    uint8_t *const base = p;
    uint64_t present = 0; /* the presence bitmap (at most 64 optional fields), written at the end */
    p += bitmap_bytes;
    for (uint32_t i = 0; i < count; i++, fd++, v++) {
        if (!v->present) continue;
        if (fd->optional) present |= (uint64_t)1 << fd->presence_bit;
        switch (fd->type) {
        case WK_COLLOQ_BOOL: *p++ = v->as.b ? 1 : 0; break;
        case WK_COLLOQ_U8: case WK_COLLOQ_I8: *p++ = (uint8_t)v->as.u; break;
        case WK_COLLOQ_U16: case WK_COLLOQ_I16: put_le(p, v->as.u, 2); p += 2; break;
        case WK_COLLOQ_U32: case WK_COLLOQ_I32: put_le(p, v->as.u, 4); p += 4; break;
        case WK_COLLOQ_U64: case WK_COLLOQ_I64: put_le(p, v->as.u, 8); p += 8; break;
        case WK_COLLOQ_F32: {
            float x = (float)v->as.f;
            uint32_t bits;
            memcpy(&bits, &x, 4);
            put_le(p, bits, 4);
            p += 4;
            break;
        }
        case WK_COLLOQ_F64: {
            uint64_t bits;
            memcpy(&bits, &v->as.f, 8);
            put_le(p, bits, 8);
            p += 8;
            break;
        }
        case WK_COLLOQ_STRING:
        case WK_COLLOQ_BYTES:
            p += wk_leb128_put(p, v->as.s.len);
            copy_value(p, v->as.s.ptr, v->as.s.len);
            p += v->as.s.len;
            break;
        }
    }
    if (bitmap_bytes == 1) {
        base[0] = (uint8_t)present;
    } else {
        for (uint32_t k = 0; k < bitmap_bytes; k++) base[k] = (uint8_t)(present >> (8 * k));
    }
}

/* The range of each integer type as lo and hi - lo (unsigned arithmetic); bool, u64 and i64
 * take every value (a bool is written as 0 or 1 whatever the union holds). */
static const uint64_t int_lo[WK_COLLOQ_I64 + 1] = {
    0, 0, 0, 0, 0, (uint64_t)INT8_MIN, (uint64_t)INT16_MIN, (uint64_t)INT32_MIN, 0};
static const uint64_t int_span[WK_COLLOQ_I64 + 1] = {
    UINT64_MAX, UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX, UINT8_MAX, UINT16_MAX, UINT32_MAX,
    UINT64_MAX};

/* One pass over f's values (field_count already checked): true with *plen the payload size when
 * every value fits m; false for anything unusual (a value out of range, a size that would
 * wrap), left to colloq_values_check to name. */
static inline bool payload_size_checked(const wk_colloq_message *m, const wk_colloq_frame *f,
                                        size_t *plen)
{
    size_t n = m->bitmap_bytes;
    const uint32_t count = m->field_count;
    const wk_colloq_field *fd = m->fields;
    const wk_colloq_value *v = f->fields;
    for (uint32_t i = 0; i < count; i++, fd++, v++) {
        if (!v->present) {
            if (!fd->optional) return false;
            continue;
        }
        switch (fd->type) {
        case WK_COLLOQ_BOOL: case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32:
        case WK_COLLOQ_U64: case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32:
        case WK_COLLOQ_I64: /* bool and integers: one range test, v - lo <= hi - lo */
            if (v->as.u - int_lo[fd->type] > int_span[fd->type]) return false;
            break;
        case WK_COLLOQ_F32:
            if (!isfinite(v->as.f) || (double)(float)v->as.f != v->as.f) return false;
            break;
        case WK_COLLOQ_F64:
            if (!isfinite(v->as.f)) return false;
            break;
        case WK_COLLOQ_STRING:
        case WK_COLLOQ_BYTES: {
            size_t len = v->as.s.len;
            if (len && !v->as.s.ptr) return false;
            if (fd->type == WK_COLLOQ_STRING && !wk_colloq_utf8_valid(v->as.s.ptr, len, NULL))
                return false;
            if (len > SIZE_MAX - WK_COLLOQ_VARINT_MAX_LEN - n) return false; /* would wrap */
            n += wk_leb128_len(len) + len;
            continue;
        }
        default: return false;
        }
        n += fd->width;
    }
    if (n > SIZE_MAX - 3 * WK_COLLOQ_VARINT_MAX_LEN) return false;
    *plen = n;
    return true;
}

size_t colloq_binary_size(const wk_colloq_message *m, const wk_colloq_frame *f)
{
    size_t plen = colloq_payload_size(m, f);
    return wk_leb128_len(f->transition) + wk_leb128_len(f->seq) +
           wk_leb128_len(plen) + plen;
}

/* Checks the values, sizes the frame, then writes it only once the whole frame is known to be
 * valid and to fit: WK_ERROR and WK_NEED_OUTPUT leave out (position and bytes) untouched. */
wk_result wk_colloq_binary_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                  wk_out *out, wk_error *err)
{
    if (f->transition >= plan->transition_count) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "transition %u outside the table",
                     (unsigned)f->transition);
        return WK_ERROR;
    }
    const wk_colloq_message *m = wk_colloq_plan_transition_message_get(plan, f->transition);
    size_t plen;
    if (f->field_count != m->field_count || !payload_size_checked(m, f, &plen)) {
        const char *why = colloq_values_check(m, f);
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "%s: %s", m->name,
                     why ? why : "payload size out of range");
        return WK_ERROR;
    }
    size_t total = wk_leb128_len(f->transition) + wk_leb128_len(f->seq) +
                   wk_leb128_len(plen) + plen;
    wk_result room = colloq_out_room(out, total, err);
    if (room != WK_DONE) return room;
    write_frame(out->dst + out->pos, m, f, plen);
    out->pos += total;
    return WK_DONE;
}

/* Records a payload problem at offset off (from the frame's first byte). */
static inline void payload_bad(wk_colloq_frame *f, wk_code code, size_t off, const char *reason)
{
    f->payload_error = code;
    f->payload_error_offset = off;
    f->payload_error_reason = reason;
}

/* Decodes the payload [p, pe) under m; frame_start for offsets. */
static void decode_payload(const wk_colloq_message *m, const uint8_t *p, const uint8_t *pe,
                           const uint8_t *frame_start, wk_colloq_frame *f)
{
    if ((size_t)(pe - p) < m->bitmap_bytes) {
        payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(pe - frame_start),
                    "payload ends inside the presence bitmap");
        return;
    }
    uint64_t present = 0; /* the presence bitmap as one word (at most 64 optional fields) */
    for (uint32_t k = 0; k < m->bitmap_bytes; k++) present |= (uint64_t)p[k] << (8 * k);
    p += m->bitmap_bytes;
    if ((m->optional_count & 7) && (present >> m->optional_count) != 0) {
        payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - 1 - frame_start),
                    "presence bit set beyond the optional fields");
        return;
    }
    const wk_colloq_field *fd = m->fields;
    wk_colloq_value *v = f->fields;
    for (uint32_t i = 0; i < m->field_count; i++, fd++, v++) {
        if (fd->optional && !((present >> fd->presence_bit) & 1)) {
            v->present = false;
            continue;
        }
        v->present = true;
        if ((size_t)(pe - p) < fd->width) {
            payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(pe - frame_start),
                        "payload ends inside a fixed-width field");
            return;
        }
        /* one dispatch per field: each case loads its own constant width */
        switch (fd->type) {
        case WK_COLLOQ_BOOL:
            if (p[0] > 1) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - frame_start),
                            "bool byte is not 0 or 1");
                return;
            }
            v->as.b = p[0] != 0;
            p += 1;
            break;
        case WK_COLLOQ_U8: v->as.u = p[0]; p += 1; break;
        case WK_COLLOQ_U16: v->as.u = get_le(p, 2); p += 2; break;
        case WK_COLLOQ_U32: v->as.u = get_le(p, 4); p += 4; break;
        case WK_COLLOQ_U64: v->as.u = get_le(p, 8); p += 8; break;
        case WK_COLLOQ_I8: v->as.i = (int8_t)p[0]; p += 1; break;
        case WK_COLLOQ_I16: v->as.i = (int16_t)(uint16_t)get_le(p, 2); p += 2; break;
        case WK_COLLOQ_I32: v->as.i = (int32_t)(uint32_t)get_le(p, 4); p += 4; break;
        case WK_COLLOQ_I64: v->as.i = (int64_t)get_le(p, 8); p += 8; break;
        case WK_COLLOQ_F32: {
            uint32_t bits = (uint32_t)get_le(p, 4);
            float fl;
            memcpy(&fl, &bits, 4);
            if (!isfinite(fl)) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - frame_start),
                            "float is NaN or infinite");
                return;
            }
            v->as.f = fl;
            p += 4;
            break;
        }
        case WK_COLLOQ_F64: {
            uint64_t bits = get_le(p, 8);
            double d;
            memcpy(&d, &bits, 8);
            if (!isfinite(d)) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - frame_start),
                            "float is NaN or infinite");
                return;
            }
            v->as.f = d;
            p += 8;
            break;
        }
        default: { /* string, bytes: varint length, bounded by the payload, then the slice */
            wk_cursor c = wk_cursor_make(p, (size_t)(pe - p));
            uint64_t len;
            size_t vl;
            wk_cursor_status st = wk_cursor_leb128(&c, WK_LEB128_MAX_LEN, WK_VARINT_MINIMAL, &len, &vl);
            if (st != WK_CURSOR_OK) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD,
                            (size_t)((st == WK_CURSOR_TRUNCATED ? pe : p + vl - 1) - frame_start),
                            st == WK_CURSOR_TRUNCATED ? "payload ends inside a field length"
                                                      : "field length varint not minimal or too long");
                return;
            }
            const uint8_t *q = c.p;
            if (len > (uint64_t)(pe - q)) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - frame_start),
                            "field length runs past the payload");
                return;
            }
            size_t bad;
            if (fd->type == WK_COLLOQ_STRING && !wk_colloq_utf8_valid(q, (size_t)len, &bad)) {
                payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(q + bad - frame_start),
                            "string is not valid UTF-8");
                return;
            }
            v->as.s.ptr = q;
            v->as.s.len = (size_t)len;
            p = q + len;
            break;
        }
        }
    }
    if (p != pe)
        payload_bad(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (size_t)(p - frame_start),
                    "trailing bytes after the last field");
}

wk_result wk_colloq_binary_decode(const wk_colloq_plan *plan, wk_in *in, wk_colloq_frame *f,
                                  wk_error *err)
{
    const uint8_t *start = in->src + in->pos, *end = in->src + in->size;
    wk_cursor c = wk_cursor_make(start, in->size - in->pos);
    uint64_t t, seq, len;
    size_t vl;
    wk_cursor_status st;
    if ((st = wk_cursor_leb128(&c, WK_LEB128_MAX_LEN, WK_VARINT_MINIMAL, &t, &vl)) != WK_CURSOR_OK ||
        (st = wk_cursor_leb128(&c, WK_LEB128_MAX_LEN, WK_VARINT_MINIMAL, &seq, &vl)) != WK_CURSOR_OK ||
        (st = wk_cursor_leb128(&c, WK_LEB128_MAX_LEN, WK_VARINT_MINIMAL, &len, &vl)) != WK_CURSOR_OK)
        goto header;
    const uint8_t *p = c.p;
    f->seq = seq;
    f->payload_error = WK_OK;
    f->payload_error_reason = NULL;
    f->payload_error_offset = 0;
    f->payload_len = len > SIZE_MAX ? SIZE_MAX : (size_t)len;
    f->sender_mismatch = false;
    if (t >= plan->transition_count) {
        f->transition = WK_COLLOQ_NO_TRANSITION;
        f->field_count = 0;
        in->pos += (size_t)(p - start);
        return WK_DONE;
    }
    f->transition = (uint32_t)t;
    const wk_colloq_message *m = &plan->messages[plan->transitions[t].message];
    f->field_count = m->field_count;
    if (len > m->max_payload) {
        payload_bad(f, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, (size_t)(p - start),
                    "payload_len above the message's ceiling");
        for (uint32_t i = 0; i < m->field_count; i++) f->fields[i].present = false;
        in->pos += (size_t)(p - start);
        return WK_DONE;
    }
    if ((uint64_t)(end - p) < len) return WK_NEED_INPUT;
    decode_payload(m, p, p + len, start, f);
    in->pos += (size_t)(p - start) + (size_t)len;
    return WK_DONE;
header: /* truncated: wait for more; else the byte at fault */
    if (st == WK_CURSOR_TRUNCATED) return WK_NEED_INPUT;
    wk_error_set(err, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, (uint64_t)(wk_cursor_offset(&c) + vl - 1),
                 "frame header varint not minimal, longer than 10 bytes or above 2^64-1");
    return WK_ERROR;
}
