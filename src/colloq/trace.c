/* colloq: traces (spec "Trace", CLI details): lines written, parsed back, verified. */
#include "colloq_internal.h"
#include <inttypes.h>
#include <stdio.h>

static void write_frame_line(jw *w, const wk_colloq_plan *plan, const wk_colloq_frame *f,
                             const wk_colloq_message *m)
{
    const wk_colloq_transition *t = &plan->transitions[f->transition];
    jw_str(w, "{\"seq\":");
    jw_u64(w, f->seq);
    jw_str(w, ",\"transition\":");
    jw_u64(w, f->transition);
    jw_str(w, ",\"from\":");
    jw_json_string(w, plan->states[t->from], strlen(plan->states[t->from]));
    jw_str(w, ",\"to\":");
    jw_json_string(w, plan->states[t->to], strlen(plan->states[t->to]));
    jw_str(w, ",\"message\":");
    jw_json_string(w, m->name, strlen(m->name));
    jw_str(w, ",\"payload\":");
    colloq_payload_json(w, m, f);
    jw_str(w, "}\n");
}

wk_code wk_colloq_trace_frame_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   size_t *size, wk_error *err)
{
    return colloq_frame_text_size(plan, f, write_frame_line, size, err);
}

wk_result wk_colloq_trace_frame_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                       wk_out *out, wk_error *err)
{
    return colloq_frame_text_encode(plan, f, write_frame_line, out, err);
}

static void write_failure_line(jw *w, const char *name, uint64_t seq)
{
    jw_str(w, "{\"failure\":\"");
    jw_str(w, name);
    jw_str(w, "\",\"seq\":");
    jw_u64(w, seq);
    jw_str(w, "}\n");
}

static wk_code failure_check(wk_code code, const char **name, wk_error *err)
{
    *name = wk_colloq_failure_name(code);
    if (!*name)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "%s is not a failure kind",
                            wk_error_name(code));
    return WK_OK;
}

wk_code wk_colloq_trace_failure_size(wk_code code, uint64_t seq, size_t *size, wk_error *err)
{
    const char *name;
    *size = 0;
    wk_code rc = failure_check(code, &name, err);
    if (!rc) COLLOQ_TEXT_SIZE(write_failure_line(&w, name, seq));
    return rc;
}

wk_result wk_colloq_trace_failure_encode(wk_code code, uint64_t seq, wk_out *out, wk_error *err)
{
    const char *name;
    if (failure_check(code, &name, err)) return WK_ERROR;
    COLLOQ_TEXT_ENCODE(out, err, write_failure_line(&w, name, seq));
}

void wk_colloq_trace_init(wk_colloq_trace *t, const wk_colloq_trace_params *params)
{
    t->entries = NULL;
    t->count = t->cap = 0;
    t->allocator = wk_allocator_or_default(params ? params->allocator : NULL);
}

void wk_colloq_trace_destroy(wk_colloq_trace *t)
{
    for (size_t i = 0; i < t->count; i++) colloq_free(&t->allocator, t->entries[i].line);
    colloq_free(&t->allocator, t->entries);
    t->entries = NULL;
    t->count = t->cap = 0;
}

/* Appends an entry owning a copy of line[0..len) (no '\n'). */
static wk_colloq_trace_entry *push(wk_colloq_trace *t, const char *line, size_t len, wk_error *err)
{
    if (t->count == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 16;
        if (!colloq_grow(&t->allocator, (void **)&t->entries, sizeof *t->entries, t->count, ncap)) {
            wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory for the trace");
            return NULL;
        }
        t->cap = ncap;
    }
    char *copy = colloq_alloc(&t->allocator, len + 1);
    if (!copy) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory for the trace");
        return NULL;
    }
    memcpy(copy, line, len);
    copy[len] = '\0';
    wk_colloq_trace_entry *e = &t->entries[t->count++];
    memset(e, 0, sizeof *e);
    e->line = copy;
    e->line_len = len;
    return e;
}

wk_code wk_colloq_trace_append_frame(wk_colloq_trace *t, const wk_colloq_plan *plan,
                                     const wk_colloq_frame *f, wk_error *err)
{
    size_t n;
    wk_code rc = wk_colloq_trace_frame_size(plan, f, &n, err);
    if (rc) return rc;
    char *buf = colloq_alloc(&t->allocator, n);
    if (!buf) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory for the trace");
    wk_out out = {(uint8_t *)buf, n, 0};
    wk_colloq_trace_frame_encode(plan, f, &out, err); /* checked and sized above: WK_DONE */
    wk_colloq_trace_entry *e = push(t, buf, n - 1, err);
    colloq_free(&t->allocator, buf);
    if (!e) return WK_ERR_NOMEM;
    e->seq = f->seq;
    e->transition = f->transition;
    return WK_OK;
}

wk_code wk_colloq_trace_append_failure(wk_colloq_trace *t, wk_code code, uint64_t seq,
                                       wk_error *err)
{
    uint8_t buf[80];
    wk_out out = {buf, sizeof buf, 0};
    const char *name;
    wk_code rc = failure_check(code, &name, err);
    if (rc) return rc;
    wk_colloq_trace_failure_encode(code, seq, &out, err); /* a failure line fits in 80 bytes */
    wk_colloq_trace_entry *e = push(t, (const char *)buf, out.pos - 1, err);
    if (!e) return WK_ERR_NOMEM;
    e->is_failure = true;
    e->failure = code;
    e->seq = seq;
    return WK_OK;
}

size_t wk_colloq_trace_size(const wk_colloq_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) n += t->entries[i].line_len + 1;
    return n;
}

wk_result wk_colloq_trace_encode(const wk_colloq_trace *t, wk_out *out, wk_error *err)
{
    if (!out || out->pos > out->size) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "trace encode: no output view");
        return WK_ERROR;
    }
    if (out->size - out->pos < wk_colloq_trace_size(t)) return WK_NEED_OUTPUT;
    uint8_t *s = out->dst + out->pos;
    size_t k = 0;
    for (size_t i = 0; i < t->count; i++) {
        if (t->entries[i].line_len) memcpy(s + k, t->entries[i].line, t->entries[i].line_len);
        k += t->entries[i].line_len;
        s[k++] = '\n';
    }
    out->pos += k;
    return WK_DONE;
}

wk_code wk_colloq_trace_parse(const char *text, size_t len, wk_colloq_trace *t, wk_error *err)
{
    size_t pos = 0, lineno = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
        const char *line = text + pos;
        lineno++;
        size_t off = pos;
        pos += ll + (nl ? 1 : 0);
        if (ll == 0) continue;
        size_t bad = 0;
        bool dup = false;
        json_object *o = colloq_json_parse_unique(line, ll, &bad, &dup, NULL, 0);
        if (!o)
            return wk_error_set(err, WK_ERR_COLLOQ_TRACE, off + bad, "line %zu: %s", lineno,
                                dup ? "duplicate key" : "not valid JSON");
        wk_code rc = WK_OK;
        json_object *v;
        uint64_t seq = 0, tr = 0;
        wk_code kind = WK_OK;
        bool is_failure = false;
        if (!json_object_is_type(o, json_type_object)) {
            rc = wk_error_set(err, WK_ERR_COLLOQ_TRACE, off, "line %zu: not an object", lineno);
        } else if (json_object_object_get_ex(o, "failure", &v)) {
            is_failure = true;
            json_object *sv;
            if (json_object_object_length(o) != 2 || !json_object_is_type(v, json_type_string) ||
                !json_object_object_get_ex(o, "seq", &sv) || !colloq_json_u64(sv, &seq))
                rc = wk_error_set(err, WK_ERR_COLLOQ_TRACE, off,
                                  "line %zu: failure entry is not {\"failure\":kind,\"seq\":N}", lineno);
            else if (!(kind = wk_colloq_failure_parse(json_object_get_string(v),
                                                     (size_t)json_object_get_string_len(v))))
                rc = wk_error_set(err, WK_ERR_COLLOQ_TRACE, off, "line %zu: unknown failure kind",
                                  lineno);
        } else {
            static const char *const keys[] = {"seq", "transition", "from", "to", "message", "payload"};
            bool ok = json_object_object_length(o) == 6;
            for (int i = 0; ok && i < 6; i++) ok = json_object_object_get_ex(o, keys[i], &v);
            json_object *sv = NULL, *tv = NULL;
            if (ok) {
                json_object_object_get_ex(o, "seq", &sv);
                json_object_object_get_ex(o, "transition", &tv);
                ok = colloq_json_u64(sv, &seq) && colloq_json_u64(tv, &tr) && tr < UINT32_MAX;
            }
            if (!ok)
                rc = wk_error_set(err, WK_ERR_COLLOQ_TRACE, off,
                                  "line %zu: entry keys are not seq, transition, from, to, message, payload",
                                  lineno);
        }
        json_object_put(o);
        if (rc) return rc;
        wk_colloq_trace_entry *e = push(t, line, ll, err);
        if (!e) return WK_ERR_NOMEM;
        e->is_failure = is_failure;
        e->seq = seq;
        e->transition = (uint32_t)tr;
        e->failure = kind;
    }
    return WK_OK;
}

static wk_code vfail(wk_colloq_trace_verify_report *rep, size_t entry, wk_code reason, wk_error *err,
                     const char *why)
{
    if (rep) {
        rep->ok = false;
        rep->entry = entry;
        rep->reason = reason;
    }
    return wk_error_set(err, reason, WK_NO_OFFSET, "entry %zu: %s", entry, why);
}

static bool str_is(json_object *o, const char *key, const char *want)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) &&
           (size_t)json_object_get_string_len(v) == strlen(want) &&
           memcmp(json_object_get_string(v), want, strlen(want)) == 0;
}

wk_code wk_colloq_trace_verify(const wk_colloq_plan *plan, const wk_colloq_trace *t,
                               wk_colloq_trace_verify_report *rep, wk_error *err)
{
    if (rep) {
        rep->ok = true;
        rep->entry = 0;
        rep->reason = WK_OK;
    }
    wk_colloq_session s;
    wk_colloq_session_init(&s, plan);
    const wk_allocator *a = &t->allocator;
    uint8_t *scratch = colloq_alloc(a, plan->max_payload_max);
    wk_colloq_frame *f = colloq_alloc(a, sizeof *f);
    if (!scratch || !f) {
        colloq_free(a, scratch);
        colloq_free(a, f);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory verifying the trace");
    }
    wk_code rc = WK_OK;
    for (size_t i = 0; i < t->count && !rc; i++) {
        const wk_colloq_trace_entry *e = &t->entries[i];
        if (i > 0 && t->entries[i - 1].is_failure) {
            rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "entry after the failure");
            break;
        }
        if (e->is_failure) {
            if (!wk_colloq_code_is_failure(e->failure))
                rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "unknown failure kind");
            else if (e->seq != s.next_seq)
                rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "failure seq is not the next expected sequence number");
            else if (s.finished && e->failure != WK_ERR_COLLOQ_AFTER_FINAL)
                rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "session had finished: only after-final can follow");
            else if (!s.finished && e->failure == WK_ERR_COLLOQ_AFTER_FINAL)
                rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "after-final but the session had not finished");
            continue;
        }
        size_t bad;
        bool dup = false;
        json_object *o = colloq_json_parse_unique(e->line, e->line_len, &bad, &dup, NULL, 0);
        if (!o || !json_object_is_type(o, json_type_object)) {
            if (o) json_object_put(o);
            rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, dup ? "duplicate key" : "not a JSON object");
            break;
        }
        json_object *sv, *tv, *pv;
        uint64_t seq, tid;
        if (!json_object_object_get_ex(o, "seq", &sv) || !colloq_json_u64(sv, &seq) ||
            !json_object_object_get_ex(o, "transition", &tv) || !colloq_json_u64(tv, &tid) ||
            !json_object_object_get_ex(o, "payload", &pv)) {
            json_object_put(o);
            rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "seq, transition or payload missing");
            break;
        }
        if (tid >= plan->transition_count) {
            json_object_put(o);
            rc = vfail(rep, i, WK_ERR_COLLOQ_UNKNOWN_TRANSITION, err, "transition outside the table");
            break;
        }
        const wk_colloq_transition *tr = &plan->transitions[tid];
        if (!str_is(o, "from", plan->states[tr->from]) || !str_is(o, "to", plan->states[tr->to]) ||
            !str_is(o, "message", plan->messages[tr->message].name)) {
            json_object_put(o);
            rc = vfail(rep, i, WK_ERR_COLLOQ_TRACE, err, "from, to or message do not name the transition");
            break;
        }
        wk_colloq_frame_init(f, plan, (uint32_t)tid, seq);
        colloq_payload_from_json(plan, &plan->messages[tr->message], pv, f, scratch, plan->max_payload_max);
        wk_error cerr;
        wk_code c = wk_colloq_session_check(&s, f, WK_COLLOQ_SENDER_TRANSCRIPT, &cerr);
        json_object_put(o);
        if (c) {
            char why[160];
            snprintf(why, sizeof why, "replay fails: %s (%.80s)", wk_colloq_failure_name(c), cerr.msg);
            rc = vfail(rep, i, c, err, why);
        }
    }
    colloq_free(a, scratch);
    colloq_free(a, f);
    return rc;
}
