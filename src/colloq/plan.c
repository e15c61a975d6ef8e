/* colloq: the conversation loader and compiler (json-c), the canonical plan and its identity,
 * loading a compiled plan back, and plan lookups. */
#include "colloq_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define LIST_LIMIT 65536u

typedef struct plan_impl {
    wk_colloq_plan pub;
    wk_allocator a; /* every block of the plan, and the compiler's scratch */
    void **allocs;
    size_t nallocs, cap;
} plan_impl;

typedef struct cctx {
    plan_impl *pi;
    wk_error *err;
    bool is_plan;
    bool oom;
} cctx;

static void *palloc(cctx *c, size_t n)
{
    plan_impl *pi = c->pi;
    if (pi->nallocs == pi->cap) {
        size_t ncap = pi->cap ? pi->cap * 2 : 16;
        if (!colloq_grow(&pi->a, (void **)&pi->allocs, sizeof *pi->allocs, pi->nallocs, ncap))
            return NULL;
        pi->cap = ncap;
    }
    void *p = colloq_zalloc(&pi->a, n);
    if (!p) return NULL;
    pi->allocs[pi->nallocs++] = p;
    return p;
}

static char *pstrdup(cctx *c, const char *s)
{
    size_t n = strlen(s);
    char *d = palloc(c, n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

void wk_colloq_plan_destroy(wk_colloq_plan *plan)
{
    if (!plan) return;
    plan_impl *pi = (plan_impl *)plan;
    wk_allocator a = pi->a;
    for (size_t i = 0; i < pi->nallocs; i++) colloq_free(&a, pi->allocs[i]);
    colloq_free(&a, pi->allocs);
    colloq_free(&a, pi);
}

/* The compiler's scratch blocks (freed before it returns). */
static void *scratch_zalloc(cctx *c, size_t n, size_t el)
{
    if (el && n > SIZE_MAX / el) return NULL;
    return colloq_zalloc(&c->pi->a, n * el);
}
static void scratch_free(cctx *c, void *p) { colloq_free(&c->pi->a, p); }

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static wk_code cerr(cctx *c, wk_code code, const char *path, const char *fmt, ...)
{
    char tmp[100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return wk_error_set(c->err, code, WK_NO_OFFSET, "%s: %s", path, tmp);
}

static wk_code nomem(cctx *c)
{
    return wk_error_set(c->err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory compiling the plan");
}

static bool valid_ident(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* Writes "path.key" into p[0..cap); a path too long for it is cut (it only labels an error). The
 * return value is checked so that gcc does not flag the intended truncation. */
static void join_path(char *p, size_t cap, const char *path, const char *key)
{
    int r = snprintf(p, cap, "%s.%s", path, key);
    if (r < 0 || (size_t)r >= cap) p[cap - 1] = '\0';
}

/* Refuses any key of obj not in allowed (NULL-terminated). */
static wk_code check_keys(cctx *c, json_object *obj, const char *const *allowed, const char *path)
{
    json_object_object_foreach(obj, key, val)
    {
        (void)val;
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, key) == 0) ok = true;
        if (!ok) {
            char p[128];
            join_path(p, sizeof p, path, key);
            return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "unknown key");
        }
    }
    return WK_OK;
}

static const char *jtype_name(json_type t)
{
    switch (t) {
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_string: return "a string";
    case json_type_int: return "an integer";
    case json_type_boolean: return "a boolean";
    default: return "a value";
    }
}

/* obj[key] of JSON type t; *out NULL when absent and !required. */
static wk_code get(cctx *c, json_object *obj, const char *key, json_type t, bool required,
                   const char *path, json_object **out)
{
    char p[128];
    join_path(p, sizeof p, path, key);
    json_object *v = NULL;
    *out = NULL;
    if (!json_object_object_get_ex(obj, key, &v)) {
        if (required) return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "missing");
        return WK_OK;
    }
    if (!json_object_is_type(v, t)) return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be %s", jtype_name(t));
    *out = v;
    return WK_OK;
}

/* An array of unique identifiers -> (names, count). */
static wk_code ident_list(cctx *c, json_object *arr, const char *path, bool nonempty,
                          const char ***names, uint32_t *count)
{
    size_t n = json_object_array_length(arr);
    if (nonempty && n == 0) return cerr(c, WK_ERR_COLLOQ_STRUCTURE, path, "must not be empty");
    if (n > LIST_LIMIT) return cerr(c, WK_ERR_COLLOQ_LIMIT, path, "more than %u entries", LIST_LIMIT);
    const char **v = palloc(c, (n ? n : 1) * sizeof *v);
    if (!v) return nomem(c);
    for (size_t i = 0; i < n; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_string)) return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be a string");
        const char *s = json_object_get_string(e);
        if (strlen(s) != (size_t)json_object_get_string_len(e) || !valid_ident(s))
            return cerr(c, WK_ERR_COLLOQ_NAME, p, "\"%.40s\" is not [A-Za-z_][A-Za-z0-9_]*", s);
        for (size_t j = 0; j < i; j++)
            if (strcmp(v[j], s) == 0) return cerr(c, WK_ERR_COLLOQ_DUPLICATE, p, "duplicate \"%.40s\"", s);
        if (!(v[i] = pstrdup(c, s))) return nomem(c);
    }
    *names = v;
    *count = (uint32_t)n;
    return WK_OK;
}

static int32_t find_name(const char *const *names, uint32_t n, const char *s, size_t len)
{
    for (uint32_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) return (int32_t)i;
    return -1;
}

/* A string naming one of names -> index; code on failure. */
static wk_code ref(cctx *c, json_object *obj, const char *key, const char *path,
                   const char *const *names, uint32_t n, wk_code unknown, uint32_t *out)
{
    json_object *v;
    wk_code rc = get(c, obj, key, json_type_string, true, path, &v);
    if (rc) return rc;
    int32_t i = find_name(names, n, json_object_get_string(v), (size_t)json_object_get_string_len(v));
    if (i < 0) {
        char p[128];
        snprintf(p, sizeof p, "%s.%s", path, key);
        return cerr(c, unknown, p, "\"%.40s\" is not declared", json_object_get_string(v));
    }
    *out = (uint32_t)i;
    return WK_OK;
}

typedef struct msg_build {
    const char *name;
    json_object *def;
    size_t decl; /* declaration index (for paths) */
} msg_build;

static int cmp_msg(const void *a, const void *b)
{
    return strcmp(((const msg_build *)a)->name, ((const msg_build *)b)->name);
}

/* One message definition -> m. */
static wk_code compile_message(cctx *c, const char *name, json_object *def, wk_colloq_message *m)
{
    char path[128], p[160];
    snprintf(path, sizeof path, "$.messages.%s", name);
    json_object *fields = def;
    uint64_t max_payload = WK_COLLOQ_DEFAULT_MAX_PAYLOAD;
    char fpath[140];
    snprintf(fpath, sizeof fpath, "%s", path);
    if (json_object_is_type(def, json_type_object)) {
        static const char *const allowed[] = {"fields", "max_payload", NULL};
        wk_code rc = check_keys(c, def, allowed, path);
        if (rc) return rc;
        if ((rc = get(c, def, "fields", json_type_array, true, path, &fields))) return rc;
        json_object *mp;
        if (json_object_object_get_ex(def, "max_payload", &mp)) {
            snprintf(p, sizeof p, "%s.max_payload", path);
            if (!colloq_json_u64(mp, &max_payload))
                return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be a non-negative integer");
            if (max_payload < 1 || max_payload > WK_COLLOQ_MAX_PAYLOAD_LIMIT)
                return cerr(c, WK_ERR_COLLOQ_LIMIT, p, "must be 1..%u", WK_COLLOQ_MAX_PAYLOAD_LIMIT);
        }
        snprintf(fpath, sizeof fpath, "%s.fields", path);
    } else if (!json_object_is_type(def, json_type_array)) {
        return cerr(c, WK_ERR_COLLOQ_SCHEMA, path, "must be an array of fields or an object");
    }
    size_t n = json_object_array_length(fields);
    if (n > WK_COLLOQ_MAX_FIELDS)
        return cerr(c, WK_ERR_COLLOQ_LIMIT, fpath, "more than %d fields", WK_COLLOQ_MAX_FIELDS);
    wk_colloq_field *fs = palloc(c, (n ? n : 1) * sizeof *fs);
    if (!fs) return nomem(c);
    uint32_t opt = 0, fixed = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s[%zu]", fpath, i);
        json_object *fo = json_object_array_get_idx(fields, i), *v;
        if (!json_object_is_type(fo, json_type_object))
            return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be an object");
        static const char *const allowed[] = {"name", "type", "optional", NULL};
        wk_code rc = check_keys(c, fo, allowed, p);
        if (rc) return rc;
        if ((rc = get(c, fo, "name", json_type_string, true, p, &v))) return rc;
        const char *fname = json_object_get_string(v);
        char q[200];
        snprintf(q, sizeof q, "%s.name", p);
        if (strlen(fname) != (size_t)json_object_get_string_len(v) || !valid_ident(fname))
            return cerr(c, WK_ERR_COLLOQ_NAME, q, "\"%.40s\" is not [A-Za-z_][A-Za-z0-9_]*", fname);
        for (size_t j = 0; j < i; j++)
            if (strcmp(fs[j].name, fname) == 0) return cerr(c, WK_ERR_COLLOQ_DUPLICATE, q, "duplicate field \"%.40s\"", fname);
        if (!(fs[i].name = pstrdup(c, fname))) return nomem(c);
        if ((rc = get(c, fo, "type", json_type_string, true, p, &v))) return rc;
        snprintf(q, sizeof q, "%s.type", p);
        if (!wk_colloq_type_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), &fs[i].type))
            return cerr(c, WK_ERR_COLLOQ_UNKNOWN_TYPE, q, "\"%.40s\" is not a field type", json_object_get_string(v));
        if ((rc = get(c, fo, "optional", json_type_boolean, false, p, &v))) return rc;
        fs[i].optional = v && json_object_get_boolean(v);
        fs[i].width = (uint8_t)wk_colloq_type_width_get(fs[i].type);
        if (fs[i].optional) fs[i].presence_bit = (uint16_t)opt++;
        else fixed += fs[i].width;
    }
    m->name = name;
    m->field_count = (uint32_t)n;
    m->fields = fs;
    m->optional_count = opt;
    m->bitmap_bytes = (opt + 7) / 8;
    m->max_payload = (uint32_t)max_payload;
    m->fixed_bytes = fixed + m->bitmap_bytes;
    /* every required variable field takes at least its 1-byte length */
    uint32_t minimum = m->fixed_bytes;
    for (size_t i = 0; i < n; i++)
        if (!fs[i].optional && !fs[i].width) minimum++;
    if (minimum > m->max_payload)
        return cerr(c, WK_ERR_COLLOQ_LIMIT, path, "max_payload %u below the smallest payload (%u bytes)",
                    m->max_payload, minimum);
    return WK_OK;
}

typedef struct tr_build {
    wk_colloq_transition t;
    const char *key[3]; /* from, message, sender names: the sort key (no global for qsort) */
    size_t decl;
    int64_t id; /* plan files: the declared id */
} tr_build;

static int cmp_tr(const void *a, const void *b)
{
    const tr_build *x = a, *y = b;
    int r = 0;
    for (int i = 0; i < 3 && !r; i++) r = strcmp(x->key[i], y->key[i]);
    if (!r) r = x->decl < y->decl ? -1 : x->decl > y->decl;
    return r;
}

/* Writes the canonical plan (decision 11). */
static void write_canonical(jw *w, const wk_colloq_plan *pl)
{
    jw_str(w, "{\"colloq\":\"plan/v0\",\"final\":[");
    /* final states are listed in the order of the states list */
    bool first = true;
    for (uint32_t i = 0; i < pl->state_count; i++) {
        if (!pl->is_final[i]) continue;
        if (!first) jw_byte(w, ',');
        first = false;
        jw_json_string(w, pl->states[i], strlen(pl->states[i]));
    }
    jw_str(w, "],\"initial\":");
    jw_json_string(w, pl->states[pl->initial], strlen(pl->states[pl->initial]));
    jw_str(w, ",\"messages\":{");
    for (uint32_t i = 0; i < pl->message_count; i++) {
        const wk_colloq_message *m = &pl->messages[i];
        if (i) jw_byte(w, ',');
        jw_json_string(w, m->name, strlen(m->name));
        jw_str(w, ":{\"fields\":[");
        for (uint32_t k = 0; k < m->field_count; k++) {
            const wk_colloq_field *fd = &m->fields[k];
            if (k) jw_byte(w, ',');
            jw_str(w, "{\"name\":");
            jw_json_string(w, fd->name, strlen(fd->name));
            jw_str(w, fd->optional ? ",\"optional\":true,\"type\":\"" : ",\"optional\":false,\"type\":\"");
            jw_str(w, wk_colloq_type_name(fd->type));
            jw_str(w, "\"}");
        }
        jw_str(w, "],\"max_payload\":");
        jw_u64(w, m->max_payload);
        jw_byte(w, '}');
    }
    jw_str(w, "},\"name\":");
    jw_json_string(w, pl->name, strlen(pl->name));
    jw_str(w, ",\"roles\":[");
    for (uint32_t i = 0; i < pl->role_count; i++) {
        if (i) jw_byte(w, ',');
        jw_json_string(w, pl->roles[i], strlen(pl->roles[i]));
    }
    jw_str(w, "],\"states\":[");
    for (uint32_t i = 0; i < pl->state_count; i++) {
        if (i) jw_byte(w, ',');
        jw_json_string(w, pl->states[i], strlen(pl->states[i]));
    }
    jw_str(w, "],\"transitions\":[");
    for (uint32_t i = 0; i < pl->transition_count; i++) {
        const wk_colloq_transition *t = &pl->transitions[i];
        if (i) jw_byte(w, ',');
        jw_str(w, "{\"from\":");
        jw_json_string(w, pl->states[t->from], strlen(pl->states[t->from]));
        jw_str(w, ",\"id\":");
        jw_u64(w, i);
        jw_str(w, ",\"message\":");
        jw_json_string(w, pl->messages[t->message].name, strlen(pl->messages[t->message].name));
        jw_str(w, ",\"sender\":");
        jw_json_string(w, pl->roles[t->sender], strlen(pl->roles[t->sender]));
        jw_str(w, ",\"to\":");
        jw_json_string(w, pl->states[t->to], strlen(pl->states[t->to]));
        jw_byte(w, '}');
    }
    jw_str(w, "],\"wire\":{\"encodings\":[\"reference\",\"compact\"");
    if (!pl->has_schedules) {
        jw_str(w, "]}}");
        return;
    }
    jw_str(w, ",\"binary\"],\"payload_schedules\":{");
    for (uint32_t i = 0; i < pl->message_count; i++) {
        const wk_colloq_message *m = &pl->messages[i];
        if (i) jw_byte(w, ',');
        jw_json_string(w, m->name, strlen(m->name));
        jw_str(w, ":{\"bitmap_bytes\":");
        jw_u64(w, m->bitmap_bytes);
        jw_str(w, ",\"fields\":[");
        for (uint32_t k = 0; k < m->field_count; k++) {
            const wk_colloq_field *fd = &m->fields[k];
            if (k) jw_byte(w, ',');
            jw_str(w, "{\"name\":");
            jw_json_string(w, fd->name, strlen(fd->name));
            jw_str(w, ",\"presence_bit\":");
            if (fd->optional) jw_u64(w, fd->presence_bit);
            else jw_str(w, "null");
            jw_str(w, ",\"type\":\"");
            jw_str(w, wk_colloq_type_name(fd->type));
            jw_str(w, "\",\"width\":");
            if (fd->width) jw_u64(w, fd->width);
            else jw_str(w, "null");
            jw_byte(w, '}');
        }
        jw_str(w, "],\"max_payload\":");
        jw_u64(w, m->max_payload);
        jw_str(w, ",\"optional_count\":");
        jw_u64(w, m->optional_count);
        jw_byte(w, '}');
    }
    jw_str(w, "}}}");
}

static wk_code compile_doc(cctx *c, json_object *root)
{
    wk_colloq_plan *pl = &c->pi->pub;
    wk_code rc;
    json_object *v;
    if (!json_object_is_type(root, json_type_object))
        return cerr(c, WK_ERR_COLLOQ_SCHEMA, "$", "must be an object");
    if ((rc = get(c, root, "colloq", json_type_string, true, "$", &v))) return rc;
    const char *tag = json_object_get_string(v);
    if (strcmp(tag, "conversation/v0") == 0) c->is_plan = false;
    else if (strcmp(tag, "plan/v0") == 0 && c->is_plan) c->is_plan = true;
    else
        return cerr(c, WK_ERR_COLLOQ_SCHEMA, "$.colloq", "\"%.40s\" is not %s", tag,
                    c->is_plan ? "conversation/v0 or plan/v0" : "conversation/v0");
    static const char *const conv_keys[] = {"colloq", "name", "roles", "states", "initial", "final",
                                            "messages", "transitions", NULL};
    static const char *const plan_keys[] = {"colloq", "name", "roles", "states", "initial", "final",
                                            "messages", "transitions", "wire", NULL};
    if ((rc = check_keys(c, root, c->is_plan ? plan_keys : conv_keys, "$"))) return rc;

    if ((rc = get(c, root, "name", json_type_string, true, "$", &v))) return rc;
    if (json_object_get_string_len(v) == 0) return cerr(c, WK_ERR_COLLOQ_NAME, "$.name", "must not be empty");
    if (!(pl->name = pstrdup(c, json_object_get_string(v)))) return nomem(c);
    if (strlen(pl->name) != (size_t)json_object_get_string_len(v))
        return cerr(c, WK_ERR_COLLOQ_NAME, "$.name", "contains a NUL character");

    const char **roles, **states;
    if ((rc = get(c, root, "roles", json_type_array, true, "$", &v))) return rc;
    if ((rc = ident_list(c, v, "$.roles", true, &roles, &pl->role_count))) return rc;
    pl->roles = roles;
    if ((rc = get(c, root, "states", json_type_array, true, "$", &v))) return rc;
    if ((rc = ident_list(c, v, "$.states", true, &states, &pl->state_count))) return rc;
    pl->states = states;
    if ((rc = ref(c, root, "initial", "$", pl->states, pl->state_count, WK_ERR_COLLOQ_UNKNOWN_STATE,
                  &pl->initial)))
        return rc;
    bool *is_final = palloc(c, pl->state_count * sizeof *is_final);
    if (!is_final) return nomem(c);
    pl->is_final = is_final;
    if ((rc = get(c, root, "final", json_type_array, true, "$", &v))) return rc;
    size_t nf = json_object_array_length(v);
    for (size_t i = 0; i < nf; i++) {
        char p[64];
        snprintf(p, sizeof p, "$.final[%zu]", i);
        json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string)) return cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be a string");
        int32_t s = find_name(pl->states, pl->state_count, json_object_get_string(e),
                              (size_t)json_object_get_string_len(e));
        if (s < 0) return cerr(c, WK_ERR_COLLOQ_UNKNOWN_STATE, p, "\"%.40s\" is not declared", json_object_get_string(e));
        if (is_final[s]) return cerr(c, WK_ERR_COLLOQ_DUPLICATE, p, "duplicate \"%.40s\"", json_object_get_string(e));
        /* the canonical plan lists final states in states order; a conversation may list them
         * in any order, a plan file must use states order (checked by the canonical compare) */
        is_final[s] = true;
    }

    /* messages */
    json_object *msgs;
    if ((rc = get(c, root, "messages", json_type_object, true, "$", &msgs))) return rc;
    size_t nm = (size_t)json_object_object_length(msgs);
    if (nm > LIST_LIMIT) return cerr(c, WK_ERR_COLLOQ_LIMIT, "$.messages", "more than %u messages", LIST_LIMIT);
    msg_build *mb = scratch_zalloc(c, nm ? nm : 1, sizeof *mb);
    if (!mb) return nomem(c);
    size_t k = 0;
    json_object_object_foreach(msgs, mkey, mval)
    {
        mb[k].name = mkey;
        mb[k].def = mval;
        mb[k].decl = k;
        k++;
    }
    for (size_t i = 0; i < nm; i++) {
        if (!valid_ident(mb[i].name)) {
            char p[128];
            snprintf(p, sizeof p, "$.messages.%.60s", mb[i].name);
            scratch_free(c, mb);
            return cerr(c, WK_ERR_COLLOQ_NAME, p, "message name is not [A-Za-z_][A-Za-z0-9_]*");
        }
    }
    qsort(mb, nm, sizeof *mb, cmp_msg);
    wk_colloq_message *ms = palloc(c, (nm ? nm : 1) * sizeof *ms);
    if (!ms) {
        scratch_free(c, mb);
        return nomem(c);
    }
    for (size_t i = 0; i < nm; i++) {
        const char *nm_copy = pstrdup(c, mb[i].name);
        if (!nm_copy) {
            scratch_free(c, mb);
            return nomem(c);
        }
        if ((rc = compile_message(c, nm_copy, mb[i].def, &ms[i]))) {
            scratch_free(c, mb);
            return rc;
        }
        if (ms[i].max_payload > pl->max_payload_max) pl->max_payload_max = ms[i].max_payload;
    }
    scratch_free(c, mb);
    pl->messages = ms;
    pl->message_count = (uint32_t)nm;

    /* transitions */
    json_object *trs;
    if ((rc = get(c, root, "transitions", json_type_array, true, "$", &trs))) return rc;
    size_t nt = json_object_array_length(trs);
    if (nt == 0) return cerr(c, WK_ERR_COLLOQ_STRUCTURE, "$.transitions", "must not be empty");
    if (nt > LIST_LIMIT) return cerr(c, WK_ERR_COLLOQ_LIMIT, "$.transitions", "more than %u transitions", LIST_LIMIT);
    tr_build *tb = scratch_zalloc(c, nt, sizeof *tb);
    if (!tb) return nomem(c);
    static const char *const tr_keys[] = {"from", "message", "sender", "to", NULL};
    static const char *const tr_plan_keys[] = {"from", "id", "message", "sender", "to", NULL};
    for (size_t i = 0; i < nt && !rc; i++) {
        char p[64];
        snprintf(p, sizeof p, "$.transitions[%zu]", i);
        json_object *to = json_object_array_get_idx(trs, i);
        tb[i].decl = i;
        if (!json_object_is_type(to, json_type_object)) {
            rc = cerr(c, WK_ERR_COLLOQ_SCHEMA, p, "must be an object");
            break;
        }
        if ((rc = check_keys(c, to, c->is_plan ? tr_plan_keys : tr_keys, p))) break;
        if ((rc = ref(c, to, "from", p, pl->states, pl->state_count, WK_ERR_COLLOQ_UNKNOWN_STATE, &tb[i].t.from))) break;
        uint32_t mi = 0;
        json_object *mv;
        if ((rc = get(c, to, "message", json_type_string, true, p, &mv))) break;
        {
            const char *mn = json_object_get_string(mv);
            int32_t idx = wk_colloq_plan_message_find(pl, mn, (size_t)json_object_get_string_len(mv));
            if (idx < 0) {
                char q[96];
                snprintf(q, sizeof q, "%s.message", p);
                rc = cerr(c, WK_ERR_COLLOQ_UNKNOWN_MESSAGE, q, "\"%.40s\" is not declared", mn);
                break;
            }
            mi = (uint32_t)idx;
        }
        tb[i].t.message = mi;
        if ((rc = ref(c, to, "sender", p, pl->roles, pl->role_count, WK_ERR_COLLOQ_UNKNOWN_ROLE, &tb[i].t.sender))) break;
        if ((rc = ref(c, to, "to", p, pl->states, pl->state_count, WK_ERR_COLLOQ_UNKNOWN_STATE, &tb[i].t.to))) break;
        if (c->is_plan) {
            json_object *idv;
            uint64_t id;
            if ((rc = get(c, to, "id", json_type_int, true, p, &idv))) break;
            if (!colloq_json_u64(idv, &id) || id >= nt) {
                char q[96];
                snprintf(q, sizeof q, "%s.id", p);
                rc = cerr(c, WK_ERR_COLLOQ_PLAN, q, "id out of range");
                break;
            }
            tb[i].id = (int64_t)id;
        }
        if (pl->is_final[tb[i].t.from]) {
            char q[96];
            snprintf(q, sizeof q, "%s.from", p);
            rc = cerr(c, WK_ERR_COLLOQ_STRUCTURE, q, "\"%s\" is final: no transition may leave it",
                      pl->states[tb[i].t.from]);
            break;
        }
    }
    if (rc) {
        scratch_free(c, tb);
        return rc;
    }
    for (size_t i = 0; i < nt; i++) {
        tb[i].key[0] = pl->states[tb[i].t.from];
        tb[i].key[1] = pl->messages[tb[i].t.message].name;
        tb[i].key[2] = pl->roles[tb[i].t.sender];
    }
    qsort(tb, nt, sizeof *tb, cmp_tr);
    wk_colloq_transition *ts = palloc(c, nt * sizeof *ts);
    if (!ts) {
        scratch_free(c, tb);
        return nomem(c);
    }
    for (size_t i = 0; i < nt; i++) {
        if (i > 0 && tb[i].t.from == tb[i - 1].t.from && tb[i].t.message == tb[i - 1].t.message &&
            tb[i].t.sender == tb[i - 1].t.sender) {
            char p[64];
            size_t later = tb[i].decl > tb[i - 1].decl ? tb[i].decl : tb[i - 1].decl;
            snprintf(p, sizeof p, "$.transitions[%zu]", later);
            scratch_free(c, tb);
            return cerr(c, WK_ERR_COLLOQ_DUPLICATE, p,
                        "duplicate transition (from, message, sender)");
        }
        if (c->is_plan && tb[i].id != (int64_t)i) {
            char p[64];
            snprintf(p, sizeof p, "$.transitions[%zu].id", tb[i].decl);
            scratch_free(c, tb);
            return cerr(c, WK_ERR_COLLOQ_PLAN, p, "id is not the sorted position %zu", i);
        }
        ts[i] = tb[i].t;
    }
    scratch_free(c, tb);
    pl->transitions = ts;
    pl->transition_count = (uint32_t)nt;
    pl->has_schedules = true;

    if (c->is_plan) {
        json_object *wire, *e;
        if ((rc = get(c, root, "wire", json_type_object, true, "$", &wire))) return rc;
        static const char *const wire_keys[] = {"encodings", "payload_schedules", NULL};
        if ((rc = check_keys(c, wire, wire_keys, "$.wire"))) return rc;
        if ((rc = get(c, wire, "encodings", json_type_array, true, "$.wire", &e))) return rc;
        if ((rc = get(c, wire, "payload_schedules", json_type_object, false, "$.wire", &e))) return rc;
        pl->has_schedules = e != NULL;
    }

    /* canonical text and identity */
    jw w;
    jw_init(&w, NULL, 0);
    write_canonical(&w, pl);
    char *text = palloc(c, w.len + 1);
    if (!text) return nomem(c);
    size_t need = w.len;
    jw_init(&w, text, need + 1);
    write_canonical(&w, pl);
    jw_finish(&w);
    pl->canonical = text;
    pl->canonical_len = need;
    uint8_t h[WK_BLAKE3_OUT_LEN];
    wk_blake3(text, need, h);
    wk_hex_encode(h, sizeof h, pl->identity);

    if (c->is_plan) {
        jw_init(&w, NULL, 0);
        if (!colloq_json_canonical(&w, root, &c->pi->a)) return nomem(c);
        char *in = scratch_zalloc(c, w.len + 1, 1);
        if (!in) return nomem(c);
        size_t in_len = w.len;
        jw_init(&w, in, in_len + 1);
        if (!colloq_json_canonical(&w, root, &c->pi->a)) {
            scratch_free(c, in);
            return nomem(c);
        }
        bool same = in_len == need && memcmp(in, text, need) == 0;
        size_t diff = 0;
        while (diff < in_len && diff < need && in[diff] == text[diff]) diff++;
        scratch_free(c, in);
        if (!same)
            return cerr(c, WK_ERR_COLLOQ_PLAN, "$",
                        "plan differs from what its content compiles to (canonical byte %zu)", diff);
    }
    return WK_OK;
}

static wk_code compile_text(const char *json, size_t len, const wk_colloq_plan_params *params,
                            bool allow_plan, wk_colloq_plan **out, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    *out = NULL;
    size_t bad = 0;
    bool dup = false;
    char path[128];
    json_object *root = colloq_json_parse_unique(json, len, &bad, &dup, path, sizeof path);
    if (!root && dup) /* json-c would keep the last of two equal keys: refused, as in envelopes */
        return wk_error_set(err, WK_ERR_COLLOQ_DUPLICATE, bad, "%s: duplicate key", path);
    if (!root) return wk_error_set(err, WK_ERR_COLLOQ_JSON, bad, "$: not valid JSON");
    plan_impl *pi = colloq_zalloc(&a, sizeof *pi);
    if (!pi) {
        json_object_put(root);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory compiling the plan");
    }
    pi->a = a;
    cctx c = {pi, err, allow_plan, false};
    wk_code rc = compile_doc(&c, root);
    json_object_put(root);
    if (rc) {
        wk_colloq_plan_destroy(&pi->pub);
        return rc;
    }
    *out = &pi->pub;
    return WK_OK;
}

wk_code wk_colloq_plan_compile(const char *json, size_t len, const wk_colloq_plan_params *params,
                               wk_colloq_plan **out, wk_error *err)
{
    return compile_text(json, len, params, false, out, err);
}

wk_code wk_colloq_plan_load(const char *json, size_t len, const wk_colloq_plan_params *params,
                            wk_colloq_plan **out, wk_error *err)
{
    return compile_text(json, len, params, true, out, err);
}

int32_t wk_colloq_plan_role_find(const wk_colloq_plan *plan, const char *name, size_t len)
{
    return find_name(plan->roles, plan->role_count, name, len);
}

int32_t wk_colloq_plan_state_find(const wk_colloq_plan *plan, const char *name, size_t len)
{
    return find_name(plan->states, plan->state_count, name, len);
}

int32_t wk_colloq_plan_message_find(const wk_colloq_plan *plan, const char *name, size_t len)
{
    uint32_t lo = 0, hi = plan->message_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const char *mn = plan->messages[mid].name;
        size_t ml = strlen(mn);
        int r = memcmp(mn, name, ml < len ? ml : len);
        if (r == 0 && ml != len) r = ml < len ? -1 : 1;
        if (r == 0) return (int32_t)mid;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

uint32_t wk_colloq_plan_transition_find(const wk_colloq_plan *plan, uint32_t from,
                                        uint32_t message, uint32_t sender)
{
    for (uint32_t i = 0; i < plan->transition_count; i++) {
        const wk_colloq_transition *t = &plan->transitions[i];
        if (t->from == from && t->message == message &&
            (sender == WK_COLLOQ_SENDER_TRANSCRIPT || t->sender == sender))
            return i;
    }
    return WK_COLLOQ_NO_TRANSITION;
}
