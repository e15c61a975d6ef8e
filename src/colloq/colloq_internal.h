/* colloq internals shared by the module's files (not installed). */
#ifndef WK_COLLOQ_INTERNAL_H
#define WK_COLLOQ_INTERNAL_H

#include <wirekit/colloq.h>
#include <json-c/json.h>
#include <string.h>

/* ---- memory: every allocation of the module goes through the caller's wk_allocator (json-c's
 * own documents and tokeners excepted: json-c has no per-object allocator) ---- */
static inline void *colloq_alloc(const wk_allocator *a, size_t n) { return a->alloc(a->opaque, n ? n : 1); }
static inline void *colloq_zalloc(const wk_allocator *a, size_t n)
{
    return wk_allocator_zalloc(a, n ? n : 1, NULL, NULL);
}
static inline void colloq_free(const wk_allocator *a, void *p)
{
    if (p) a->free(a->opaque, p);
}
/* Grows *p (old_n elements of size el) to new_n elements: copy, free the old block. false when
 * out of memory (*p unchanged). */
static inline bool colloq_grow(const wk_allocator *a, void **p, size_t el, size_t old_n, size_t new_n)
{
    if (new_n > SIZE_MAX / el) return false;
    void *q = colloq_alloc(a, new_n * el);
    if (!q) return false;
    if (old_n) memcpy(q, *p, old_n * el);
    colloq_free(a, *p);
    *p = q;
    return true;
}

/* ---- a bounded text writer (snprintf convention: counts what it could not write) ---- */
typedef struct jw {
    char *buf;
    size_t cap; /* bytes available in buf */
    size_t len; /* bytes needed so far */
} jw;

static inline void jw_init(jw *w, char *buf, size_t cap)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
}
static inline void jw_byte(jw *w, char c)
{
    if (w->len < w->cap) w->buf[w->len] = c;
    w->len++;
}
/* n bytes at p (p may be NULL when n is 0: an empty string or bytes value a caller left NULL). */
static inline void jw_mem(jw *w, const void *p, size_t n)
{
    if (n && w->len < w->cap) {
        size_t room = w->cap - w->len;
        memcpy(w->buf + w->len, p, n < room ? n : room);
    }
    w->len += n;
}
static inline void jw_str(jw *w, const char *s) { jw_mem(w, s, strlen(s)); }
/* NUL-terminates within cap (snprintf convention) and returns the needed length. */
static inline size_t jw_finish(jw *w)
{
    if (w->cap > 0) w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
    return w->len;
}
/* Whether out (the caller's view) has room for need bytes: WK_DONE (it has), WK_NEED_OUTPUT, or
 * WK_ERROR (WK_ERR_ARG: no view, or pos past size). */
static inline wk_result colloq_out_room(const wk_out *out, size_t need, wk_error *err)
{
    if (!out || out->pos > out->size || (!out->dst && out->size)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no valid output view");
        return WK_ERROR;
    }
    return out->size - out->pos < need ? WK_NEED_OUTPUT : WK_DONE;
}
/* The body of a text encoder: WRITE (statements writing through the jw `w`) runs once to count,
 * then, when out has room for all of it, once into out (never half an item; NEED_OUTPUT leaves
 * out untouched). Returns from the enclosing function. */
#define COLLOQ_TEXT_ENCODE(out, err, WRITE)                                                        \
    do {                                                                                           \
        jw w;                                                                                      \
        jw_init(&w, NULL, 0);                                                                      \
        WRITE;                                                                                     \
        const size_t need_ = w.len;                                                                \
        const wk_result room_ = colloq_out_room(out, need_, err);                                  \
        if (room_ != WK_DONE) return room_;                                                        \
        jw_init(&w, (char *)(out)->dst + (out)->pos, need_);                                       \
        WRITE;                                                                                     \
        (out)->pos += need_;                                                                       \
        return WK_DONE;                                                                            \
    } while (0)
/* The length WRITE (as above) takes. */
#define COLLOQ_TEXT_SIZE(WRITE)                                                                    \
    do {                                                                                           \
        jw w;                                                                                      \
        jw_init(&w, NULL, 0);                                                                      \
        WRITE;                                                                                     \
        *size = w.len;                                                                             \
    } while (0)

void jw_u64(jw *w, uint64_t v);
void jw_i64(jw *w, int64_t v);
/* A JSON string of n bytes with the canonical escaping (decision 11). */
void jw_json_string(jw *w, const char *s, size_t n);
/* Shortest decimal that reads back to v (as float when is_f32); "-0.0" for negative zero. */
void jw_float(jw *w, double v, bool is_f32);
void jw_hex(jw *w, const uint8_t *p, size_t n);

/* ---- JSON input (json-c) ---- */
/* Object members counted in JSON text: `total` is every "key: value" pair at any depth, `top`
 * those of the top-level object. json-c keeps only one of two equal keys in an object (the last
 * value wins), so a document holding fewer members than its text (colloq_json_count_members)
 * had a duplicate key somewhere. */
typedef struct colloq_json_members {
    size_t top, total;
} colloq_json_members;
/* Lexical pre-check json-c does not do: numbers without leading zeros and integers inside
 * [-2^63, 2^64-1], no bare words other than true/false/null (NaN, Infinity), no raw control
 * characters in strings. Returns true when fine (and *members, may be NULL, counted), else false
 * with *bad the offending offset. */
bool colloq_json_prescan(const char *s, size_t n, size_t *bad, colloq_json_members *members);
/* Parses n bytes as one JSON value (strict, UTF-8 validated, whole input) with a tokener to reuse
 * (reset first; NULL makes one). NULL on failure with *bad the byte offset. *members (may be NULL)
 * gets the text's member counts. The caller owns the result (json_object_put). Duplicate keys
 * are NOT refused here: compare members->total with colloq_json_count_members(result). */
json_object *colloq_json_parse_tok(json_tokener *reuse, const char *s, size_t n, size_t *bad,
                                   colloq_json_members *members);
/* Members of o and of every value inside it (what json-c kept). */
size_t colloq_json_count_members(json_object *o);
/* Parses like colloq_json_parse_tok and refuses a duplicate key at any depth: NULL with *dup
 * false for a syntax error (*bad its offset), or *dup true, *bad the offset of the repeated key
 * and path (capacity cap, may be NULL) its JSON path ("$.messages.Token"). */
json_object *colloq_json_parse_unique(const char *s, size_t n, size_t *bad, bool *dup, char *path,
                                      size_t cap);
/* Finds the first duplicate key of root (the document json-c made of s[0..n)): true with *off the
 * offset of the repeated key and path its JSON path. Slow; for the failure path. */
bool colloq_json_find_duplicate(const char *s, size_t n, json_object *root, size_t *off,
                                char *path, size_t cap);
/* Canonical serialization of any json-c value (sorted keys, no whitespace); key arrays come from
 * a. false when out of memory (the output is then short). */
bool colloq_json_canonical(jw *w, json_object *o, const wk_allocator *a);
/* Reads a JSON integer as u64 / i64 (false when not a JSON integer in range). */
bool colloq_json_u64(json_object *o, uint64_t *v);
bool colloq_json_i64(json_object *o, int64_t *v);

/* Decodes a payload object against message m into f's fields (f->field_count set), using
 * scratch (capacity cap) for bytes values. Sets f->payload_error / reason on a problem,
 * including payload-too-large against m->max_payload. Sets f->payload_len. */
void colloq_payload_from_json(const wk_colloq_plan *plan, const wk_colloq_message *m,
                              json_object *payload, wk_colloq_frame *f, uint8_t *scratch,
                              size_t cap);
/* Checks f's values against m (for encoders): NULL when fine, else a static reason. */
const char *colloq_values_check(const wk_colloq_message *m, const wk_colloq_frame *f);
/* Binary payload size of f's values under m (values already checked). */
size_t colloq_payload_size(const wk_colloq_message *m, const wk_colloq_frame *f);
/* Writes the payload object of f under m. */
void colloq_payload_json(jw *w, const wk_colloq_message *m, const wk_colloq_frame *f);
/* Checks f for an encoder: transition in the table and values fitting its schedule. WK_OK with
 * *m its message, else WK_ERR_ARG (err set). */
wk_code colloq_frame_check(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                           const wk_colloq_message **m, wk_error *err);
/* A text encoder of a frame: writes f (checked, under its message m). */
typedef void (*colloq_frame_writer)(jw *w, const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                    const wk_colloq_message *m);
/* Checks f (colloq_frame_check), then sizes / writes what fn writes (COLLOQ_TEXT_SIZE /
 * COLLOQ_TEXT_ENCODE): the size and encode calls of every frame-based text item. */
wk_code colloq_frame_text_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                               colloq_frame_writer fn, size_t *size, wk_error *err);
wk_result colloq_frame_text_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   colloq_frame_writer fn, wk_out *out, wk_error *err);
/* Binary frame size of a checked frame f under m. */
size_t colloq_binary_size(const wk_colloq_message *m, const wk_colloq_frame *f);

#endif
