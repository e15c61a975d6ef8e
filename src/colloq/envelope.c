/* colloq: the reference and compact JSON envelopes (spec "The three encodings"), and the
 * per-session decoder that carries json-c state for them (or dispatches to the binary decoder). */
#include "colloq_internal.h"

struct wk_colloq_decoder {
    wk_allocator a;
    const wk_colloq_plan *plan;
    wk_colloq_wire wire;
    json_tokener *tok;
    json_object *doc; /* the last line's document: JSON string values borrow from it */
    uint8_t *scratch; /* bytes values of the last line */
    size_t scratch_cap;
};

/* ---- encoders ---- */

static void write_reference(jw *w, const wk_colloq_plan *plan, const wk_colloq_frame *f,
                            const wk_colloq_message *m)
{
    const wk_colloq_transition *tr = &plan->transitions[f->transition];
    const char *st = plan->states[tr->from], *role = plan->roles[tr->sender];
    jw_str(w, "{\"seq\":");
    jw_u64(w, f->seq);
    jw_str(w, ",\"state\":");
    jw_json_string(w, st, strlen(st));
    jw_str(w, ",\"message\":");
    jw_json_string(w, m->name, strlen(m->name));
    jw_str(w, ",\"sender\":");
    jw_json_string(w, role, strlen(role));
    jw_str(w, ",\"payload\":");
    colloq_payload_json(w, m, f);
    jw_str(w, "}\n");
}

static void write_compact(jw *w, const wk_colloq_plan *plan, const wk_colloq_frame *f,
                          const wk_colloq_message *m)
{
    (void)plan;
    jw_str(w, "{\"t\":");
    jw_u64(w, f->transition);
    jw_str(w, ",\"seq\":");
    jw_u64(w, f->seq);
    jw_str(w, ",\"payload\":");
    colloq_payload_json(w, m, f);
    jw_str(w, "}\n");
}

wk_code colloq_frame_check(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                           const wk_colloq_message **m, wk_error *err)
{
    if (f->transition >= plan->transition_count)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "transition %u outside the table",
                            (unsigned)f->transition);
    *m = wk_colloq_plan_transition_message_get(plan, f->transition);
    const char *why = colloq_values_check(*m, f);
    if (why) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "%s: %s", (*m)->name, why);
    return WK_OK;
}

wk_code colloq_frame_text_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                               colloq_frame_writer fn, size_t *size, wk_error *err)
{
    const wk_colloq_message *m;
    *size = 0;
    wk_code rc = colloq_frame_check(plan, f, &m, err);
    if (!rc) COLLOQ_TEXT_SIZE(fn(&w, plan, f, m));
    return rc;
}

wk_result colloq_frame_text_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   colloq_frame_writer fn, wk_out *out, wk_error *err)
{
    const wk_colloq_message *m;
    if (colloq_frame_check(plan, f, &m, err)) return WK_ERROR;
    COLLOQ_TEXT_ENCODE(out, err, fn(&w, plan, f, m));
}

wk_result wk_colloq_reference_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                     wk_out *out, wk_error *err)
{
    return colloq_frame_text_encode(plan, f, write_reference, out, err);
}

wk_result wk_colloq_compact_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   wk_out *out, wk_error *err)
{
    return colloq_frame_text_encode(plan, f, write_compact, out, err);
}

wk_result wk_colloq_frame_encode(const wk_colloq_plan *plan, wk_colloq_wire wire,
                                 const wk_colloq_frame *f, wk_out *out, wk_error *err)
{
    switch (wire) {
    case WK_COLLOQ_WIRE_REFERENCE: return wk_colloq_reference_encode(plan, f, out, err);
    case WK_COLLOQ_WIRE_COMPACT: return wk_colloq_compact_encode(plan, f, out, err);
    case WK_COLLOQ_WIRE_BINARY: return wk_colloq_binary_encode(plan, f, out, err);
    }
    wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown wire %d", (int)wire);
    return WK_ERROR;
}

wk_code wk_colloq_frame_size(const wk_colloq_plan *plan, wk_colloq_wire wire,
                             const wk_colloq_frame *f, size_t *size, wk_error *err)
{
    const wk_colloq_message *m;
    *size = 0;
    switch (wire) {
    case WK_COLLOQ_WIRE_REFERENCE: return colloq_frame_text_size(plan, f, write_reference, size, err);
    case WK_COLLOQ_WIRE_COMPACT: return colloq_frame_text_size(plan, f, write_compact, size, err);
    case WK_COLLOQ_WIRE_BINARY: {
        wk_code rc = colloq_frame_check(plan, f, &m, err);
        if (!rc) *size = colloq_binary_size(m, f);
        return rc;
    }
    }
    return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown wire %d", (int)wire);
}

/* ---- decoder ---- */

wk_colloq_decoder *wk_colloq_decoder_create(const wk_colloq_decoder_params *params, wk_error *err)
{
    if (!params || !params->plan) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "decoder params without a plan");
        return NULL;
    }
    const wk_colloq_plan *plan = params->plan;
    wk_colloq_wire wire = params->wire;
    wk_allocator a = wk_allocator_or_default(params->allocator);
    if ((unsigned)wire > WK_COLLOQ_WIRE_BINARY) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown wire %d", (int)wire);
        return NULL;
    }
    if (wire == WK_COLLOQ_WIRE_BINARY && !plan->has_schedules) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "binary wire on a v0 plan without schedules");
        return NULL;
    }
    wk_colloq_decoder *d = colloq_zalloc(&a, sizeof *d);
    if (!d) goto nomem;
    d->a = a;
    d->plan = plan;
    d->wire = wire;
    if (wire != WK_COLLOQ_WIRE_BINARY) {
        d->tok = json_tokener_new();
        d->scratch_cap = plan->max_payload_max;
        d->scratch = colloq_alloc(&a, d->scratch_cap);
        if (!d->tok || !d->scratch) goto nomem;
    }
    return d;
nomem:
    wk_colloq_decoder_destroy(d);
    wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory for a decoder");
    return NULL;
}

void wk_colloq_decoder_destroy(wk_colloq_decoder *d)
{
    if (!d) return;
    wk_allocator a = d->a;
    if (d->doc) json_object_put(d->doc);
    if (d->tok) json_tokener_free(d->tok);
    colloq_free(&a, d->scratch);
    colloq_free(&a, d);
}

static wk_code envelope_bad(wk_error *err, uint64_t off, const char *why)
{
    return wk_error_set(err, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, off, "%s", why);
}

/* The string value of o[key] (false when absent or not a string). */
static bool get_string(json_object *o, const char *key, const char **s, size_t *len)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return false;
    *s = json_object_get_string(v);
    *len = (size_t)json_object_get_string_len(v);
    return true;
}

/* Resolves a reference frame's (state, message, sender) to a transition (decision 8). */
static uint32_t reference_transition(const wk_colloq_plan *plan, json_object *o, wk_colloq_frame *f)
{
    const char *st = "", *msg = "", *snd = "";
    size_t stl = 0, msgl = 0, sndl = 0;
    get_string(o, "state", &st, &stl);
    get_string(o, "message", &msg, &msgl);
    get_string(o, "sender", &snd, &sndl);
    int32_t si = wk_colloq_plan_state_find(plan, st, stl);
    int32_t mi = wk_colloq_plan_message_find(plan, msg, msgl);
    if (si < 0 || mi < 0) return WK_COLLOQ_NO_TRANSITION;
    int32_t ri = wk_colloq_plan_role_find(plan, snd, sndl);
    uint32_t t = ri >= 0 ? wk_colloq_plan_transition_find(plan, (uint32_t)si, (uint32_t)mi, (uint32_t)ri)
                         : WK_COLLOQ_NO_TRANSITION;
    if (t != WK_COLLOQ_NO_TRANSITION) return t;
    /* transitions leave this state on this message, none from this sender: wrong-sender, reported
     * by wk_colloq_session_check after the state check (the frame names the lowest of them) */
    t = wk_colloq_plan_transition_find(plan, (uint32_t)si, (uint32_t)mi, WK_COLLOQ_SENDER_TRANSCRIPT);
    if (t != WK_COLLOQ_NO_TRANSITION) f->sender_mismatch = true;
    return t;
}

wk_code wk_colloq_decoder_decode_line(wk_colloq_decoder *d, const char *line, size_t len,
                                      wk_colloq_frame *f, wk_error *err)
{
    const wk_colloq_plan *plan = d->plan;
    if (d->wire == WK_COLLOQ_WIRE_BINARY)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "decode_line on a binary decoder");
    if (d->doc) {
        json_object_put(d->doc);
        d->doc = NULL;
    }
    f->transition = WK_COLLOQ_NO_TRANSITION;
    f->seq = 0;
    f->field_count = 0;
    f->payload_error = WK_OK;
    f->payload_error_offset = 0;
    f->payload_error_reason = NULL;
    f->payload_len = 0;
    f->sender_mismatch = false;
    size_t bad = 0;
    colloq_json_members mem;
    json_object *o = colloq_json_parse_tok(d->tok, line, len, &bad, &mem);
    if (!o) return envelope_bad(err, bad, "frame line is not valid JSON");
    d->doc = o;
    if (!json_object_is_type(o, json_type_object)) return envelope_bad(err, 0, "frame is not a JSON object");
    if ((size_t)json_object_object_length(o) != mem.top) {
        /* json-c kept one of two equal envelope keys: refused (spec: duplicate keys) */
        char path[64];
        size_t off = 0;
        colloq_json_find_duplicate(line, len, o, &off, path, sizeof path);
        return envelope_bad(err, off, "duplicate key in the frame envelope");
    }
    json_object *seq, *payload;
    if (!json_object_object_get_ex(o, "seq", &seq) || !colloq_json_u64(seq, &f->seq))
        return envelope_bad(err, 0, "\"seq\" missing or not an integer 0..2^64-1");
    if (!json_object_object_get_ex(o, "payload", &payload))
        return envelope_bad(err, 0, "\"payload\" missing");
    uint32_t t = WK_COLLOQ_NO_TRANSITION;
    if (d->wire == WK_COLLOQ_WIRE_REFERENCE) {
        const char *s = NULL;
        size_t sl = 0;
        if (json_object_object_length(o) != 5 || !json_object_object_get_ex(o, "state", NULL) ||
            !json_object_object_get_ex(o, "message", NULL) ||
            !json_object_object_get_ex(o, "sender", NULL))
            return envelope_bad(err, 0, "reference frame keys are not exactly seq, state, message, sender, payload");
        if (!get_string(o, "state", &s, &sl) || !get_string(o, "message", &s, &sl) ||
            !get_string(o, "sender", &s, &sl))
            return envelope_bad(err, 0, "\"state\", \"message\" and \"sender\" must be strings");
        t = reference_transition(plan, o, f);
    } else {
        json_object *tv;
        uint64_t tid;
        if (json_object_object_length(o) != 3 || !json_object_object_get_ex(o, "t", &tv))
            return envelope_bad(err, 0, "compact frame keys are not exactly t, seq, payload");
        if (!colloq_json_u64(tv, &tid)) return envelope_bad(err, 0, "\"t\" is not an integer 0..2^64-1");
        if (tid < plan->transition_count) t = (uint32_t)tid;
    }
    f->transition = t;
    if (t != WK_COLLOQ_NO_TRANSITION) {
        /* the envelope's other values are scalars: a key json-c dropped was inside the payload */
        if (colloq_json_count_members(o) != mem.total) {
            f->payload_error = WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
            f->payload_error_reason = "duplicate key in the payload";
        }
        colloq_payload_from_json(plan, wk_colloq_plan_transition_message_get(plan, t), payload, f,
                                 d->scratch, d->scratch_cap);
    }
    return WK_OK;
}

wk_result wk_colloq_decoder_decode(wk_colloq_decoder *d, wk_in *in, wk_colloq_frame *f,
                                   wk_error *err)
{
    if (d->wire == WK_COLLOQ_WIRE_BINARY) return wk_colloq_binary_decode(d->plan, in, f, err);
    const char *start = (const char *)in->src + in->pos;
    size_t avail = in->size - in->pos;
    const char *nl = memchr(start, '\n', avail);
    if (!nl) {
        if (avail > WK_COLLOQ_JSON_LINE_MAX(d->plan)) {
            wk_error_set(err, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, WK_COLLOQ_JSON_LINE_MAX(d->plan),
                         "frame line longer than %zu bytes", WK_COLLOQ_JSON_LINE_MAX(d->plan));
            return WK_ERROR;
        }
        return WK_NEED_INPUT;
    }
    size_t len = (size_t)(nl - start);
    wk_code rc = wk_colloq_decoder_decode_line(d, start, len, f, err);
    in->pos += len + 1;
    return rc == WK_OK ? WK_DONE : WK_ERROR;
}
