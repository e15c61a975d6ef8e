/* colloq: JSON text helpers over json-c: a lexical pre-check, strict parsing, the canonical
 * writer, exact integer reads, and the number/string writers every JSON output uses. */
#include "colloq_internal.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void jw_u64(jw *w, uint64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    jw_mem(w, tmp, (size_t)n);
}

void jw_i64(jw *w, int64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    jw_mem(w, tmp, (size_t)n);
}

void jw_json_string(jw *w, const char *s, size_t n)
{
    static const char hexd[] = "0123456789abcdef";
    jw_byte(w, '"');
    if (!n) { /* s may be NULL: no arithmetic on it */
        jw_byte(w, '"');
        return;
    }
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        jw_mem(w, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t el = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hexd[c >> 4];
            esc[5] = hexd[c & 15];
            el = 6;
        }
        jw_mem(w, esc, el);
    }
    jw_mem(w, s + run, n - run);
    jw_byte(w, '"');
}

void jw_float(jw *w, double v, bool is_f32)
{
    char tmp[40];
    if (v == 0.0 && signbit(v)) {
        jw_str(w, "-0.0");
        return;
    }
    int n = 0;
    for (int p = 1; p <= 17; p++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", p, v);
        double back = strtod(tmp, NULL);
        if (is_f32 ? (float)back == (float)v : back == v) break;
    }
    jw_mem(w, tmp, (size_t)n);
}

void jw_hex(jw *w, const uint8_t *p, size_t n)
{
    static const char hexd[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        char two[2] = {hexd[p[i] >> 4], hexd[p[i] & 15]};
        jw_mem(w, two, 2);
    }
}

/* Compares the digit string d (n digits, no leading zero) with the decimal limit. */
static bool digits_le(const char *d, size_t n, const char *limit)
{
    size_t ln = strlen(limit);
    if (n != ln) return n < ln;
    return memcmp(d, limit, n) <= 0;
}

bool colloq_json_prescan(const char *s, size_t n, size_t *bad, colloq_json_members *members)
{
    size_t i = 0, depth = 0, top = 0, total = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            i++;
            while (i < n && s[i] != '"') {
                if ((unsigned char)s[i] < 0x20) goto fail;
                if (s[i] == '\\') i++;
                i++;
            }
            i++;
            continue;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            size_t start = i;
            bool neg = c == '-';
            if (neg) i++;
            size_t d0 = i;
            while (i < n && s[i] >= '0' && s[i] <= '9') i++;
            size_t nd = i - d0;
            if (nd == 0) goto fail_at_start;
            if (nd > 1 && s[d0] == '0') { i = d0; goto fail; }
            bool frac = false;
            if (i < n && s[i] == '.') {
                frac = true;
                i++;
                size_t f0 = i;
                while (i < n && s[i] >= '0' && s[i] <= '9') i++;
                if (i == f0) goto fail;
            }
            if (i < n && (s[i] == 'e' || s[i] == 'E')) {
                frac = true;
                i++;
                if (i < n && (s[i] == '+' || s[i] == '-')) i++;
                size_t e0 = i;
                while (i < n && s[i] >= '0' && s[i] <= '9') i++;
                if (i == e0) goto fail;
            }
            if (!frac) {
                bool ok = neg ? digits_le(s + d0, nd, "9223372036854775808")
                              : digits_le(s + d0, nd, "18446744073709551615");
                if (!ok) {
                    i = start;
                    goto fail;
                }
            }
            continue;
        fail_at_start:
            i = start;
            goto fail;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t start = i;
            while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) i++;
            size_t wl = i - start;
            if (!((wl == 4 && (memcmp(s + start, "true", 4) == 0 ||
                               memcmp(s + start, "null", 4) == 0)) ||
                  (wl == 5 && memcmp(s + start, "false", 5) == 0))) {
                i = start;
                goto fail;
            }
            continue;
        }
        /* structure: a ':' outside strings is one object member (counted; see colloq_json_members) */
        switch (c) {
        case '{': case '[': depth++; break;
        case '}': case ']': if (depth) depth--; break;
        case ':':
            total++;
            if (depth == 1) top++;
            break;
        default: break;
        }
        i++;
    }
    if (members) {
        members->top = top;
        members->total = total;
    }
    return true;
fail:
    if (bad) *bad = i;
    return false;
}

size_t colloq_json_count_members(json_object *o)
{
    size_t n = 0;
    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, val)
        {
            (void)key;
            n += 1 + colloq_json_count_members(val);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        size_t len = json_object_array_length(o);
        for (size_t i = 0; i < len; i++) n += colloq_json_count_members(json_object_array_get_idx(o, i));
    }
    return n;
}

/* ---- locating a duplicate key (failure path only) ----
 * The text is known to be valid JSON (json-c parsed it), so a small walker can follow it beside
 * json-c's document. json-c keeps an object's keys in the order they first appear, so walking
 * the text's members beside the object's entries, the first text key that is not the next entry
 * repeats an earlier one. Keys are decoded by json-c itself (each key string parsed on its own),
 * so "equal" means what it means to json-c. */
static size_t jws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

static size_t jskip_string(const char *s, size_t n, size_t i) /* s[i] == '"' */
{
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
    return i + 1;
}

static size_t jskip_value(const char *s, size_t n, size_t i)
{
    i = jws(s, n, i);
    if (i >= n) return n;
    if (s[i] == '"') return jskip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = jskip_string(s, n, i);
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
           s[i] != '\n' && s[i] != '\r')
        i++;
    return i;
}

/* Appends ".key" (key non-NULL) or "[idx]" to the path of length len (cut at cap). */
static void path_add(char *path, size_t cap, size_t len, const char *key, size_t idx)
{
    if (len >= cap) return;
    int r = key ? snprintf(path + len, cap - len, ".%s", key)
                : snprintf(path + len, cap - len, "[%zu]", idx);
    if (r < 0 || (size_t)r >= cap - len) path[cap - 1] = '\0';
}

typedef struct dupctx {
    const char *s;
    size_t n;
    json_tokener *tok;
    char *path;
    size_t cap;
    size_t off;
} dupctx;

static bool find_dup(dupctx *c, size_t i, json_object *o, unsigned depth)
{
    const char *s = c->s;
    size_t n = c->n, plen = strlen(c->path);
    i = jws(s, n, i);
    if (i >= n || depth > 64) return false;
    if (s[i] == '{' && json_object_is_type(o, json_type_object)) {
        /* this object's own keys first */
        struct lh_entry *e = lh_table_head(json_object_get_object(o));
        size_t j = jws(s, n, i + 1);
        while (j < n && s[j] == '"') {
            size_t k = jskip_string(s, n, j);
            json_tokener_reset(c->tok);
            json_object *ks = json_tokener_parse_ex(c->tok, s + j, (int)(k - j));
            const char *key = ks ? json_object_get_string(ks) : "";
            bool next = e && strcmp((const char *)lh_entry_k(e), key) == 0;
            if (!next) {
                path_add(c->path, c->cap, plen, key, 0);
                if (ks) json_object_put(ks);
                c->off = j;
                return true;
            }
            if (ks) json_object_put(ks);
            e = lh_entry_next(e);
            j = jws(s, n, k);
            if (j < n && s[j] == ':') j++;
            j = jws(s, n, jskip_value(s, n, j));
            if (j < n && s[j] == ',') j = jws(s, n, j + 1);
            else break;
        }
        /* then inside each value */
        e = lh_table_head(json_object_get_object(o));
        j = jws(s, n, i + 1);
        while (j < n && s[j] == '"' && e) {
            size_t k = jws(s, n, jskip_string(s, n, j));
            if (k < n && s[k] == ':') k++;
            path_add(c->path, c->cap, plen, (const char *)lh_entry_k(e), 0);
            if (find_dup(c, k, (json_object *)lh_entry_v(e), depth + 1)) return true;
            c->path[plen] = '\0';
            e = lh_entry_next(e);
            j = jws(s, n, jskip_value(s, n, k));
            if (j < n && s[j] == ',') j = jws(s, n, j + 1);
            else break;
        }
    } else if (s[i] == '[' && json_object_is_type(o, json_type_array)) {
        size_t j = jws(s, n, i + 1), idx = 0, len = json_object_array_length(o);
        while (j < n && s[j] != ']' && idx < len) {
            path_add(c->path, c->cap, plen, NULL, idx);
            if (find_dup(c, j, json_object_array_get_idx(o, idx), depth + 1)) return true;
            c->path[plen] = '\0';
            idx++;
            j = jws(s, n, jskip_value(s, n, j));
            if (j < n && s[j] == ',') j = jws(s, n, j + 1);
            else break;
        }
    }
    return false;
}

bool colloq_json_find_duplicate(const char *s, size_t n, json_object *root, size_t *off,
                                char *path, size_t cap)
{
    if (cap < 2) return false;
    strcpy(path, "$");
    *off = 0;
    dupctx c = {s, n, json_tokener_new(), path, cap, 0};
    if (!c.tok) return false;
    json_tokener_set_flags(c.tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    bool found = find_dup(&c, 0, root, 0);
    json_tokener_free(c.tok);
    if (found) *off = c.off;
    else strcpy(path, "$");
    return found;
}

json_object *colloq_json_parse_unique(const char *s, size_t n, size_t *bad, bool *dup, char *path,
                                      size_t cap)
{
    colloq_json_members m;
    *dup = false;
    json_object *o = colloq_json_parse_tok(NULL, s, n, bad, &m);
    if (!o) return NULL;
    if (colloq_json_count_members(o) == m.total) return o;
    size_t off = 0;
    char local[8];
    if (!path || cap == 0) {
        path = local;
        cap = sizeof local;
    }
    colloq_json_find_duplicate(s, n, o, &off, path, cap);
    json_object_put(o);
    *dup = true;
    if (bad) *bad = off;
    return NULL;
}

json_object *colloq_json_parse_tok(json_tokener *reuse, const char *s, size_t n, size_t *bad,
                                   colloq_json_members *members)
{
    if (n > INT32_MAX) {
        if (bad) *bad = 0;
        return NULL;
    }
    if (!colloq_json_prescan(s, n, bad, members)) return NULL;
    json_tokener *tok = reuse ? reuse : json_tokener_new();
    if (!tok) {
        if (bad) *bad = 0;
        return NULL;
    }
    json_tokener_reset(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, s, (int)n);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (o == NULL && e == json_tokener_continue) end = n; /* input ended inside the value */
    if (!reuse) json_tokener_free(tok);
    if (!o || e != json_tokener_success) {
        if (o) json_object_put(o);
        if (bad) *bad = end < n ? end : n;
        return NULL;
    }
    /* only whitespace may follow */
    for (size_t i = end; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') {
            json_object_put(o);
            if (bad) *bad = i;
            return NULL;
        }
    }
    return o;
}

bool colloq_json_u64(json_object *o, uint64_t *v)
{
    if (!o || !json_object_is_type(o, json_type_int)) return false;
    if (json_object_get_int64(o) < 0) return false;
    *v = json_object_get_uint64(o);
    return true;
}

bool colloq_json_i64(json_object *o, int64_t *v)
{
    if (!o || !json_object_is_type(o, json_type_int)) return false;
    int64_t x = json_object_get_int64(o);
    if (x == INT64_MAX && json_object_get_uint64(o) > (uint64_t)INT64_MAX) return false;
    *v = x;
    return true;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool colloq_json_canonical(jw *w, json_object *o, const wk_allocator *a)
{
    bool ok = true;
    switch (json_object_get_type(o)) {
    case json_type_null: jw_str(w, "null"); break;
    case json_type_boolean: jw_str(w, json_object_get_boolean(o) ? "true" : "false"); break;
    case json_type_int: {
        int64_t i;
        uint64_t u;
        if (colloq_json_i64(o, &i)) jw_i64(w, i);
        else if (colloq_json_u64(o, &u)) jw_u64(w, u);
        break;
    }
    case json_type_double: jw_float(w, json_object_get_double(o), false); break;
    case json_type_string:
        jw_json_string(w, json_object_get_string(o), (size_t)json_object_get_string_len(o));
        break;
    case json_type_array: {
        jw_byte(w, '[');
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++) {
            if (i) jw_byte(w, ',');
            ok = colloq_json_canonical(w, json_object_array_get_idx(o, i), a) && ok;
        }
        jw_byte(w, ']');
        break;
    }
    case json_type_object: {
        size_t n = (size_t)json_object_object_length(o), k = 0;
        const char **keys = n ? colloq_alloc(a, n * sizeof *keys) : NULL;
        if (n && !keys) return false; /* out of memory: output stays short */
        json_object_object_foreach(o, key, val)
        {
            (void)val;
            keys[k++] = key;
        }
        if (k > 1) qsort(keys, k, sizeof *keys, cmp_keys); /* keys is NULL for {} */
        jw_byte(w, '{');
        for (size_t i = 0; i < k; i++) {
            if (i) jw_byte(w, ',');
            jw_json_string(w, keys[i], strlen(keys[i]));
            jw_byte(w, ':');
            ok = colloq_json_canonical(w, json_object_object_get(o, keys[i]), a) && ok;
        }
        jw_byte(w, '}');
        colloq_free(a, keys);
        break;
    }
    }
    return ok;
}
