/* colloq: frame values against a payload schedule: checks, sizes, the JSON payload object (both
 * directions). Shared by the envelopes, the binary encoder and traces. */
#include "colloq_internal.h"
#include <math.h>

void wk_colloq_frame_init(wk_colloq_frame *f, const wk_colloq_plan *plan, uint32_t t, uint64_t seq)
{
    f->transition = t;
    f->seq = seq;
    uint32_t n = t < plan->transition_count ? wk_colloq_plan_transition_message_get(plan, t)->field_count : 0;
    f->field_count = n;
    f->payload_error = WK_OK;
    f->payload_error_offset = 0;
    f->payload_error_reason = NULL;
    f->payload_len = 0;
    f->sender_mismatch = false;
    /* field by field (a few stores each) rather than a memset call sized at run time */
    for (uint32_t i = 0; i < n; i++) {
        f->fields[i].as.s.ptr = NULL;
        f->fields[i].as.s.len = 0;
        f->fields[i].present = false;
    }
}

int32_t wk_colloq_message_field_find(const wk_colloq_message *m, const char *name, size_t len)
{
    for (uint32_t i = 0; i < m->field_count; i++)
        if (strlen(m->fields[i].name) == len && memcmp(m->fields[i].name, name, len) == 0)
            return (int32_t)i;
    return -1;
}

static bool uint_fits(wk_colloq_type t, uint64_t v)
{
    switch (t) {
    case WK_COLLOQ_U8: return v <= UINT8_MAX;
    case WK_COLLOQ_U16: return v <= UINT16_MAX;
    case WK_COLLOQ_U32: return v <= UINT32_MAX;
    default: return true;
    }
}

static bool int_fits(wk_colloq_type t, int64_t v)
{
    switch (t) {
    case WK_COLLOQ_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case WK_COLLOQ_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case WK_COLLOQ_I32: return v >= INT32_MIN && v <= INT32_MAX;
    default: return true;
    }
}

const char *colloq_values_check(const wk_colloq_message *m, const wk_colloq_frame *f)
{
    if (f->field_count != m->field_count) return "field count differs from the schedule";
    for (uint32_t i = 0; i < m->field_count; i++) {
        const wk_colloq_field *fd = &m->fields[i];
        const wk_colloq_value *v = &f->fields[i];
        if (!v->present) {
            if (!fd->optional) return "required field absent";
            continue;
        }
        switch (fd->type) {
        case WK_COLLOQ_BOOL: break;
        case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
            if (!uint_fits(fd->type, v->as.u)) return "integer out of its type's range";
            break;
        case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64:
            if (!int_fits(fd->type, v->as.i)) return "integer out of its type's range";
            break;
        case WK_COLLOQ_F32:
            if (!isfinite(v->as.f)) return "NaN or infinity";
            if ((double)(float)v->as.f != v->as.f) return "value not exact as f32";
            break;
        case WK_COLLOQ_F64:
            if (!isfinite(v->as.f)) return "NaN or infinity";
            break;
        case WK_COLLOQ_STRING:
            if (v->as.s.len && !v->as.s.ptr) return "NULL string";
            if (!wk_colloq_utf8_valid(v->as.s.ptr, v->as.s.len, NULL)) return "string is not UTF-8";
            break;
        case WK_COLLOQ_BYTES:
            if (v->as.s.len && !v->as.s.ptr) return "NULL bytes";
            break;
        }
    }
    return NULL;
}

size_t colloq_payload_size(const wk_colloq_message *m, const wk_colloq_frame *f)
{
    size_t n = m->bitmap_bytes;
    for (uint32_t i = 0; i < m->field_count; i++) {
        const wk_colloq_field *fd = &m->fields[i];
        if (!f->fields[i].present) continue;
        if (fd->width) n += fd->width;
        else n += wk_leb128_len(f->fields[i].as.s.len) + f->fields[i].as.s.len;
    }
    return n;
}

size_t wk_colloq_payload_size(const wk_colloq_plan *plan, uint32_t t, const wk_colloq_frame *f)
{
    if (t >= plan->transition_count) return 0;
    return colloq_payload_size(wk_colloq_plan_transition_message_get(plan, t), f);
}

void colloq_payload_json(jw *w, const wk_colloq_message *m, const wk_colloq_frame *f)
{
    jw_byte(w, '{');
    bool first = true;
    for (uint32_t i = 0; i < m->field_count && i < f->field_count; i++) {
        const wk_colloq_field *fd = &m->fields[i];
        const wk_colloq_value *v = &f->fields[i];
        if (!v->present) continue;
        if (!first) jw_byte(w, ',');
        first = false;
        jw_json_string(w, fd->name, strlen(fd->name));
        jw_byte(w, ':');
        switch (fd->type) {
        case WK_COLLOQ_BOOL: jw_str(w, v->as.b ? "true" : "false"); break;
        case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
            jw_u64(w, v->as.u);
            break;
        case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64:
            jw_i64(w, v->as.i);
            break;
        case WK_COLLOQ_F32: jw_float(w, v->as.f, true); break;
        case WK_COLLOQ_F64: jw_float(w, v->as.f, false); break;
        case WK_COLLOQ_STRING: jw_json_string(w, (const char *)v->as.s.ptr, v->as.s.len); break;
        case WK_COLLOQ_BYTES:
            jw_byte(w, '"');
            jw_hex(w, v->as.s.ptr, v->as.s.len);
            jw_byte(w, '"');
            break;
        }
    }
    jw_byte(w, '}');
}

static void write_payload(jw *w, const wk_colloq_plan *plan, const wk_colloq_frame *f,
                          const wk_colloq_message *m)
{
    (void)plan;
    colloq_payload_json(w, m, f);
}

wk_code wk_colloq_payload_json_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                    size_t *size, wk_error *err)
{
    return colloq_frame_text_size(plan, f, write_payload, size, err);
}

wk_result wk_colloq_payload_json_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                        wk_out *out, wk_error *err)
{
    return colloq_frame_text_encode(plan, f, write_payload, out, err);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void bad_payload(wk_colloq_frame *f, wk_code code, const char *reason)
{
    if (f->payload_error == WK_OK) {
        f->payload_error = code;
        f->payload_error_reason = reason;
        f->payload_error_offset = 0;
    }
}

void colloq_payload_from_json(const wk_colloq_plan *plan, const wk_colloq_message *m,
                              json_object *payload, wk_colloq_frame *f, uint8_t *scratch,
                              size_t cap)
{
    (void)plan;
    f->field_count = m->field_count;
    f->payload_len = 0;
    for (uint32_t i = 0; i < m->field_count; i++) f->fields[i].present = false;
    if (!payload || !json_object_is_type(payload, json_type_object)) {
        bad_payload(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "payload is not a JSON object");
        return;
    }
    size_t used = 0;
    json_object_object_foreach(payload, key, val)
    {
        int32_t idx = wk_colloq_message_field_find(m, key, strlen(key));
        if (idx < 0) {
            bad_payload(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "unknown payload key");
            return;
        }
        const wk_colloq_field *fd = &m->fields[idx];
        wk_colloq_value *v = &f->fields[idx];
        bool ok = true;
        switch (fd->type) {
        case WK_COLLOQ_BOOL:
            ok = json_object_is_type(val, json_type_boolean);
            if (ok) v->as.b = json_object_get_boolean(val);
            break;
        case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
            ok = colloq_json_u64(val, &v->as.u) && uint_fits(fd->type, v->as.u);
            break;
        case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64:
            ok = colloq_json_i64(val, &v->as.i) && int_fits(fd->type, v->as.i);
            break;
        case WK_COLLOQ_F32:
        case WK_COLLOQ_F64: {
            double d;
            int64_t i64;
            uint64_t u64;
            if (json_object_is_type(val, json_type_double)) d = json_object_get_double(val);
            else if (colloq_json_i64(val, &i64)) d = (double)i64;
            else if (colloq_json_u64(val, &u64)) d = (double)u64;
            else {
                ok = false;
                break;
            }
            if (fd->type == WK_COLLOQ_F32) d = (double)(float)d;
            ok = isfinite(d);
            v->as.f = d;
            break;
        }
        case WK_COLLOQ_STRING:
            ok = json_object_is_type(val, json_type_string);
            if (ok) {
                v->as.s.ptr = (const uint8_t *)json_object_get_string(val);
                v->as.s.len = (size_t)json_object_get_string_len(val);
                ok = wk_utf8_valid(v->as.s.ptr, v->as.s.len, NULL);
            }
            break;
        case WK_COLLOQ_BYTES: {
            ok = json_object_is_type(val, json_type_string);
            if (!ok) break;
            const char *h = json_object_get_string(val);
            size_t hl = (size_t)json_object_get_string_len(val);
            if (hl % 2) {
                ok = false;
                break;
            }
            if (hl / 2 > cap - used) {
                bad_payload(f, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, "bytes above the payload ceiling");
                return;
            }
            uint8_t *dst = scratch + used;
            for (size_t k = 0; k < hl / 2; k++) {
                int hi = hexval(h[2 * k]), lo = hexval(h[2 * k + 1]);
                if (hi < 0 || lo < 0) {
                    ok = false;
                    break;
                }
                dst[k] = (uint8_t)(hi << 4 | lo);
            }
            v->as.s.ptr = dst;
            v->as.s.len = hl / 2;
            used += hl / 2;
            break;
        }
        }
        if (!ok) {
            bad_payload(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD,
                        json_object_is_type(val, json_type_null) ? "null payload value"
                                                                 : "payload value does not fit its type");
            return;
        }
        v->present = true;
    }
    for (uint32_t i = 0; i < m->field_count; i++)
        if (!f->fields[i].present && !m->fields[i].optional) {
            bad_payload(f, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "required payload field missing");
            return;
        }
    f->payload_len = colloq_payload_size(m, f);
    if (f->payload_len > m->max_payload)
        bad_payload(f, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, "payload above the message's ceiling");
}
