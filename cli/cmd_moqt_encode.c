/* wirekit moqt encode: one JSON document in the shape of the MoQT vectors' `decoded` field (as
 * `wirekit moqt decode` prints it) on stdin, the canonical bytes on stdout, streamed (the
 * document is scanned as it arrives and each object encoded once its JSON is complete). The library's writers
 * do the encoding and its refusals (invalid Type Flags, a status that forbids the payload, fetch
 * flags that cannot express an object, ...); this file only reads the JSON and checks that it
 * agrees with itself (a boolean or a field the type says is absent, payload_length against
 * payload_hex). Resolved IDs are what is encoded: the *_delta keys are derived, not read. */
#include "cmd_moqt.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#define ENCODE_INPUT_MAX (512u << 20) /* the largest JSON document read */

/* ---------------------------------------------------------------------------------------------
 * Output buffer: one item's bytes (the header, one object), written out once it encodes.
 * ------------------------------------------------------------------------------------------- */

typedef struct obuf {
    uint8_t *p;
    size_t len, cap;
} obuf;

static bool ob_reserve(obuf *b, size_t n)
{
    if (b->cap - b->len >= n) return true;
    if (n > SIZE_MAX / 2 - b->len) return false;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) return false;
    b->p = np;
    b->cap = cap;
    return true;
}

/* Runs CALL (an expression using `&out_`) with at least NEED free bytes, growing the buffer while
 * the writer answers WK_NEED_OUTPUT (it leaves the buffer untouched then). R gets the result;
 * WK_ERROR with ERR set to WK_ERR_NOMEM when the buffer cannot grow. */
#define EMIT(B, NEED, R, ERR, CALL)                                                                \
    for (size_t need_ = (NEED);;) {                                                                \
        if (!ob_reserve((B), need_)) {                                                             \
            wk_error_set((ERR), WK_ERR_NOMEM, WK_NO_OFFSET, "cannot grow the output buffer");      \
            (R) = WK_ERROR;                                                                        \
            break;                                                                                 \
        }                                                                                          \
        wk_out out_ = {(B)->p + (B)->len, (B)->cap - (B)->len, 0};                                 \
        (R) = (CALL);                                                                              \
        if ((R) == WK_NEED_OUTPUT) {                                                               \
            need_ = 2 * ((B)->cap - (B)->len) + 64;                                                \
            continue;                                                                              \
        }                                                                                          \
        if ((R) != WK_ERROR) (B)->len += out_.pos;                                                 \
        break;                                                                                     \
    }

/* ---------------------------------------------------------------------------------------------
 * JSON reading. Each getter returns 0, or prints a usage error and returns its exit status.
 * `where` names the object for messages ("header", "objects[3]").
 * ------------------------------------------------------------------------------------------- */

static bool has(json_object *o, const char *key)
{
    return json_object_object_get_ex(o, key, NULL);
}

/* A decimal string (or a non-negative JSON integer) in [0, max]. *present says whether the key
 * exists; a missing key is an error only when required. */
static int get_u64(json_object *o, const char *where, const char *key, bool required,
                   uint64_t max, uint64_t *v, bool *present)
{
    json_object *j;
    if (present) *present = false;
    if (!json_object_object_get_ex(o, key, &j) || json_object_is_type(j, json_type_null)) {
        if (required) return moqt_fail_usage("%s: \"%s\" is missing", where, key);
        return 0;
    }
    if (json_object_is_type(j, json_type_int) && json_object_get_int64(j) >= 0 &&
        (uint64_t)json_object_get_int64(j) <= max) {
        *v = (uint64_t)json_object_get_int64(j);
    } else if (!json_object_is_type(j, json_type_string) ||
               !wk_cli_parse_u64(json_object_get_string(j), 0, max, v)) {
        return moqt_fail_usage("%s: \"%s\" must be a decimal string in 0..%" PRIu64, where, key,
                               max);
    }
    if (present) *present = true;
    return 0;
}

/* A type field: "0x.." (hex) or a decimal string. */
static int get_type(json_object *o, const char *where, const char *key, bool required,
                    uint64_t *v, bool *present)
{
    json_object *j;
    if (present) *present = false;
    if (!json_object_object_get_ex(o, key, &j)) {
        if (required) return moqt_fail_usage("%s: \"%s\" is missing", where, key);
        return 0;
    }
    const char *s = json_object_is_type(j, json_type_string) ? json_object_get_string(j) : NULL;
    uint64_t t;
    if (!s || !((s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && moqt_property_type(s, &t)) ||
                wk_cli_parse_u64(s, 0, UINT64_MAX, &t)))
        return moqt_fail_usage("%s: \"%s\" must be a string \"0x..\" (hex, 64 bits)", where, key);
    *v = t;
    if (present) *present = true;
    return 0;
}

/* A hex string into a malloc'd buffer (caller frees; non-NULL even when empty). */
static int get_hex(json_object *o, const char *where, const char *key, bool required,
                   uint8_t **p, size_t *n, bool *present)
{
    json_object *j;
    *p = NULL;
    *n = 0;
    if (present) *present = false;
    if (!json_object_object_get_ex(o, key, &j)) {
        if (required) return moqt_fail_usage("%s: \"%s\" is missing", where, key);
        return 0;
    }
    if (!json_object_is_type(j, json_type_string))
        return moqt_fail_usage("%s: \"%s\" must be a hex string", where, key);
    const char *s = json_object_get_string(j);
    size_t len = (size_t)json_object_get_string_len(j);
    if (len % 2) return moqt_fail_usage("%s: \"%s\" has an odd number of hex digits", where, key);
    uint8_t *b = malloc(len / 2 + 1);
    if (!b) return moqt_fail_usage("%s: cannot allocate %zu bytes", where, len / 2);
    if (len && wk_hex_decode(s, len, b, len / 2) != (long)(len / 2)) {
        free(b);
        return moqt_fail_usage("%s: \"%s\" is not hex", where, key);
    }
    *p = b;
    *n = len / 2;
    if (present) *present = true;
    return 0;
}

/* A boolean implied by a type bit: when present it must say what the bit says. */
static int check_flag(json_object *o, const char *where, const char *key, bool bit)
{
    json_object *j;
    if (!json_object_object_get_ex(o, key, &j)) return 0;
    if (!json_object_is_type(j, json_type_boolean) || (bool)json_object_get_boolean(j) != bit)
        return moqt_fail_usage("%s: \"%s\" disagrees with the type (the bit is %s)", where, key,
                               bit ? "set" : "clear");
    return 0;
}

/* payload_hex (required) and payload_length (optional, must agree). */
static int get_payload(json_object *o, const char *where, uint8_t **p, size_t *n)
{
    int rc = get_hex(o, where, "payload_hex", true, p, n, NULL);
    if (rc) return rc;
    uint64_t len;
    bool present;
    if ((rc = get_u64(o, where, "payload_length", false, UINT64_MAX, &len, &present))) return rc;
    if (present && len != *n)
        return moqt_fail_usage("%s: payload_length %" PRIu64 " but payload_hex holds %zu bytes",
                               where, len, *n);
    return 0;
}

/* Properties: "object_properties" (a map, see decode --help) encoded as pairs through
 * wk_moqt_properties_encode, or "object_properties_hex" (the pairs as they are). *pairs is
 * malloc'd (caller frees; NULL when neither key is there). */
typedef struct prop_in {
    wk_moqt_property prop;
    uint8_t *owned;
    size_t order;
} prop_in;

static int cmp_prop(const void *a, const void *b)
{
    const prop_in *x = a, *y = b;
    if (x->prop.type != y->prop.type) return x->prop.type < y->prop.type ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int get_properties(json_object *o, const char *where, uint8_t **pairs, size_t *n,
                          bool *present)
{
    *pairs = NULL;
    *n = 0;
    *present = false;
    json_object *map;
    if (has(o, "object_properties_hex")) {
        if (has(o, "object_properties"))
            return moqt_fail_usage("%s: object_properties and object_properties_hex both given",
                                   where);
        int rc = get_hex(o, where, "object_properties_hex", true, pairs, n, present);
        return rc;
    }
    if (!json_object_object_get_ex(o, "object_properties", &map)) return 0;
    if (!json_object_is_type(map, json_type_object))
        return moqt_fail_usage("%s: object_properties must be an object", where);
    size_t count = (size_t)json_object_object_length(map), k = 0;
    prop_in *in = calloc(count ? count : 1, sizeof *in);
    if (!in) return moqt_fail_usage("%s: cannot allocate the properties", where);
    int rc = 0;
    json_object_object_foreach(map, key, val)
    {
        if (rc) break;
        prop_in *pi = &in[k];
        pi->order = k++;
        if (!moqt_property_type(key, &pi->prop.type)) {
            rc = moqt_fail_usage("%s: object_properties key \"%s\" is neither a known name nor "
                                 "\"0x..\"", where, key);
            break;
        }
        json_object *holder = json_object_new_object();
        json_object_object_add(holder, key, json_object_get(val));
        if (pi->prop.type & 1) {
            size_t len;
            rc = get_hex(holder, where, key, true, &pi->owned, &len, NULL);
            pi->prop.bytes = pi->owned;
            pi->prop.len = len;
        } else {
            rc = get_u64(holder, where, key, true, UINT64_MAX, &pi->prop.value, NULL);
        }
        json_object_put(holder);
    }
    obuf b = {0};
    if (rc == 0) {
        qsort(in, k, sizeof *in, cmp_prop);
        wk_moqt_property *props = calloc(k ? k : 1, sizeof *props);
        if (!props) {
            rc = moqt_fail_usage("%s: cannot allocate the properties", where);
        } else {
            for (size_t i = 0; i < k; i++) props[i] = in[i].prop;
            wk_error err;
            wk_result r;
            EMIT(&b, 64, r, &err, wk_moqt_properties_encode(props, k, &out_, &err));
            if (r == WK_ERROR) rc = moqt_fail(&err);
            free(props);
        }
    }
    for (size_t i = 0; i < k; i++) free(in[i].owned);
    free(in);
    if (rc) {
        free(b.p);
        return rc;
    }
    *pairs = b.p ? b.p : malloc(1);
    *n = b.len;
    *present = true;
    return 0;
}

static int expect_stream_type(json_object *doc, const char *want, bool *padding)
{
    json_object *j;
    *padding = false;
    if (!json_object_object_get_ex(doc, "stream_type", &j)) return 0; /* the carrier decides */
    const char *s = json_object_is_type(j, json_type_string) ? json_object_get_string(j) : "";
    if (strcmp(s, "padding") == 0) {
        *padding = true;
        return 0;
    }
    if (strcmp(s, want) != 0)
        return moqt_fail_usage("stream_type \"%s\" does not match --carrier %s", s, want);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The carriers
 * ------------------------------------------------------------------------------------------- */

static int encode_padding(json_object *doc, bool datagram, obuf *b)
{
    uint64_t len;
    int rc = get_u64(doc, "padding", "padding_length", true, UINT64_MAX / 2 - 16, &len, NULL);
    if (rc) return rc;
    if (len > SIZE_MAX / 4) return moqt_fail_usage("padding_length too large");
    wk_error err;
    wk_result r;
    EMIT(b, (size_t)len + WK_MOQT_INT_MAX_LEN, r, &err,
         wk_moqt_padding_encode(datagram, len, &out_, &err));
    return r == WK_ERROR ? moqt_fail(&err) : 0;
}

static int encode_subgroup_object(wk_moqt_subgroup_writer *w, json_object *jo, size_t idx,
                                  obuf *b)
{
    char where[40];
    snprintf(where, sizeof where, "objects[%zu]", idx);
    if (!json_object_is_type(jo, json_type_object))
        return moqt_fail_usage("%s: not a JSON object", where);
    wk_moqt_object_out o;
    memset(&o, 0, sizeof o);
    uint8_t *pairs = NULL, *payload = NULL;
    size_t plen = 0;
    bool props_present, status_present;
    int rc = get_u64(jo, where, "object_id", true, UINT64_MAX, &o.object_id, NULL);
    if (!rc) rc = get_properties(jo, where, &pairs, &o.properties_len, &props_present);
    if (!rc) rc = get_payload(jo, where, &payload, &plen);
    if (!rc) rc = get_u64(jo, where, "status", false, UINT64_MAX, &o.status, &status_present);
    if (!rc && !status_present) o.status = WK_MOQT_STATUS_NORMAL;
    if (!rc) {
        o.properties = pairs;
        o.payload = payload;
        o.payload_len = plen;
        wk_error err;
        wk_result r;
        uint64_t need = 0; /* a refused object has no size: the write says why */
        (void)wk_moqt_subgroup_writer_size(w, &o, &need, NULL);
        EMIT(b, (size_t)need, r, &err, wk_moqt_subgroup_writer_write(w, &o, &out_, &err));
        if (r == WK_ERROR) rc = moqt_fail(&err);
    }
    free(pairs);
    free(payload);
    return rc;
}

/* The subgroup header from doc's fields, through w (the objects follow, one call each). */
static int encode_subgroup_begin(json_object *doc, wk_moqt_subgroup_writer *w, obuf *b)
{
    const char *where = "subgroup header";
    wk_moqt_subgroup_header h;
    memset(&h, 0, sizeof h);
    bool prio_present;
    uint64_t prio = 0;
    int rc = get_type(doc, where, "header_type", true, &h.type, NULL);
    if (!rc) rc = get_u64(doc, where, "track_alias", true, UINT64_MAX, &h.track_alias, NULL);
    if (!rc) rc = get_u64(doc, where, "group_id", true, UINT64_MAX, &h.group_id, NULL);
    if (!rc)
        rc = get_u64(doc, where, "subgroup_id", false, UINT64_MAX, &h.subgroup_id,
                     &h.subgroup_id_known);
    if (!rc) rc = get_u64(doc, where, "publisher_priority", false, 255, &prio, &prio_present);
    if (rc) return rc;
    h.has_priority = !(h.type & WK_MOQT_SUBGROUP_DEFAULT_PRIORITY);
    h.publisher_priority = (uint8_t)prio;
    if (h.has_priority != prio_present)
        return moqt_fail_usage("%s: publisher_priority %s, but header_type 0x%02" PRIx64
                               " %s a priority byte", where, prio_present ? "given" : "missing",
                               h.type, h.has_priority ? "has" : "has no");
    wk_moqt_subgroup_id_mode mode = wk_moqt_subgroup_type_id_mode(h.type);
    if (mode == WK_MOQT_SUBGROUP_ID_EXPLICIT && !h.subgroup_id_known)
        return moqt_fail_usage("%s: subgroup_id is missing (SUBGROUP_ID_MODE 0b10)", where);
    if (mode == WK_MOQT_SUBGROUP_ID_ZERO && h.subgroup_id != 0)
        return moqt_fail_usage("%s: subgroup_id must be 0 in SUBGROUP_ID_MODE 0b00", where);
    if ((rc = check_flag(doc, where, "end_of_group", h.type & WK_MOQT_SUBGROUP_END_OF_GROUP)) ||
        (rc = check_flag(doc, where, "first_object", h.type & WK_MOQT_SUBGROUP_FIRST_OBJECT)))
        return rc;
    memset(w, 0, sizeof *w);
    wk_error err;
    wk_result r;
    EMIT(b, wk_moqt_subgroup_header_size(&h), r, &err,
         wk_moqt_subgroup_writer_begin(w, &h, &out_, &err));
    return r == WK_ERROR ? moqt_fail(&err) : 0;
}

static int encode_fetch_record(wk_moqt_fetch_writer *w, json_object *jo, size_t idx, obuf *b)
{
    char where[40];
    snprintf(where, sizeof where, "objects[%zu]", idx);
    if (!json_object_is_type(jo, json_type_object))
        return moqt_fail_usage("%s: not a JSON object", where);
    wk_moqt_fetch_object_out o;
    memset(&o, 0, sizeof o);
    bool flags_present, sub_present, prio_present;
    uint64_t prio = 0;
    int rc = get_type(jo, where, "serialization_flags", false, &o.flags, &flags_present);
    if (!rc) rc = get_u64(jo, where, "group_id", true, UINT64_MAX, &o.group_id, NULL);
    if (!rc) rc = get_u64(jo, where, "object_id", true, UINT64_MAX, &o.object_id, NULL);
    if (rc) return rc;
    wk_error err;
    wk_result r;
    if (flags_present && wk_moqt_fetch_flags_is_end_of_range(o.flags)) {
        EMIT(b, 64, r, &err,
             wk_moqt_fetch_writer_write_end_of_range(w, o.flags, o.group_id, o.object_id, &out_,
                                                     &err));
        return r == WK_ERROR ? moqt_fail(&err) : 0;
    }
    uint8_t *pairs = NULL, *payload = NULL;
    size_t plen = 0;
    bool props_present;
    rc = get_u64(jo, where, "subgroup_id", false, UINT64_MAX, &o.subgroup_id, &sub_present);
    if (!rc) rc = get_u64(jo, where, "publisher_priority", false, 255, &prio, &prio_present);
    if (!rc) rc = get_properties(jo, where, &pairs, &o.properties_len, &props_present);
    if (!rc) rc = get_payload(jo, where, &payload, &plen);
    if (!rc && !prio_present)
        rc = moqt_fail_usage("%s: \"publisher_priority\" is missing", where);
    if (!rc && flags_present && !(o.flags & WK_MOQT_FETCH_DATAGRAM) && o.flags <= 0x7F &&
        !sub_present)
        rc = moqt_fail_usage("%s: \"subgroup_id\" is missing (no DATAGRAM flag)", where);
    if (!rc && flags_present && (o.flags & WK_MOQT_FETCH_DATAGRAM) && sub_present)
        rc = moqt_fail_usage("%s: \"subgroup_id\" given with the DATAGRAM flag", where);
    if (!rc) {
        o.publisher_priority = (uint8_t)prio;
        o.properties = pairs;
        o.payload = payload;
        o.payload_len = plen;
        /* No serialization_flags: the smallest flags for the object (DATAGRAM when it has no
         * subgroup_id), as the writer chooses them. */
        if (!flags_present) o.flags = wk_moqt_fetch_writer_pick_flags(w, &o, !sub_present);
        uint64_t need = 0; /* a refused record has no size: the write says why */
        (void)wk_moqt_fetch_writer_size(w, &o, &need, NULL);
        EMIT(b, (size_t)need + 64, r, &err, wk_moqt_fetch_writer_write(w, &o, &out_, &err));
        if (r == WK_ERROR) rc = moqt_fail(&err);
    }
    free(pairs);
    free(payload);
    return rc;
}

/* The fetch header from doc's fields, through w (the records follow, one call each). */
static int encode_fetch_begin(json_object *doc, const moqt_opts *opts, wk_moqt_fetch_writer *w,
                              obuf *b)
{
    uint64_t request_id;
    int rc = get_u64(doc, "fetch header", "request_id", true, UINT64_MAX, &request_id, NULL);
    if (rc) return rc;
    memset(w, 0, sizeof *w);
    wk_error err;
    wk_result r;
    EMIT(b, 2 * WK_MOQT_INT_MAX_LEN, r, &err,
         wk_moqt_fetch_writer_begin(w, request_id, opts->read.group_order,
                                    opts->read.end_of_range, &out_, &err));
    return r == WK_ERROR ? moqt_fail(&err) : 0;
}

static int encode_datagram(json_object *doc, obuf *b)
{
    const char *where = "datagram";
    wk_moqt_datagram d;
    memset(&d, 0, sizeof d);
    bool oid_present, prio_present, props_present, status_present, payload_present;
    uint64_t prio = 0;
    uint8_t *pairs = NULL, *payload = NULL;
    size_t plen = 0;
    int rc = get_type(doc, where, "datagram_type", true, &d.type, NULL);
    if (!rc) rc = get_u64(doc, where, "track_alias", true, UINT64_MAX, &d.track_alias, NULL);
    if (!rc) rc = get_u64(doc, where, "group_id", true, UINT64_MAX, &d.group_id, NULL);
    if (!rc) rc = get_u64(doc, where, "object_id", false, UINT64_MAX, &d.object_id, &oid_present);
    if (!rc) rc = get_u64(doc, where, "publisher_priority", false, 255, &prio, &prio_present);
    if (!rc) rc = check_flag(doc, where, "end_of_group", d.type & WK_MOQT_DATAGRAM_END_OF_GROUP);
    if (!rc) rc = get_properties(doc, where, &pairs, &d.properties_len, &props_present);
    if (!rc)
        rc = get_u64(doc, where, "object_status", false, UINT64_MAX, &d.status, &status_present);
    if (!rc) rc = get_hex(doc, where, "payload_hex", false, &payload, &plen, &payload_present);
    if (!rc) {
        bool want_prio = !(d.type & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY);
        bool want_status = d.type & WK_MOQT_DATAGRAM_STATUS;
        if (!oid_present && !(d.type & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID))
            rc = moqt_fail_usage("%s: \"object_id\" is missing", where);
        else if (want_prio != prio_present)
            rc = moqt_fail_usage("%s: publisher_priority %s, but datagram_type 0x%02" PRIx64
                                 " %s a priority byte", where,
                                 prio_present ? "given" : "missing", d.type,
                                 want_prio ? "has" : "has no");
        else if (want_status && !status_present)
            rc = moqt_fail_usage("%s: \"object_status\" is missing (STATUS bit set)", where);
        else if (!want_status && status_present)
            rc = moqt_fail_usage("%s: \"object_status\" given but the STATUS bit is clear", where);
        else if (!want_status && !payload_present)
            rc = moqt_fail_usage("%s: \"payload_hex\" is missing", where);
    }
    if (!rc) {
        d.has_priority = prio_present;
        d.publisher_priority = (uint8_t)prio;
        d.has_properties = props_present;
        d.properties = pairs;
        d.has_status = status_present;
        if (!status_present) d.status = WK_MOQT_STATUS_NORMAL;
        d.payload = payload;
        d.payload_len = plen; /* with STATUS: a payload given is refused by the library */
        wk_error err;
        wk_result r;
        EMIT(b, wk_moqt_datagram_size(&d) + plen, r, &err,
             wk_moqt_datagram_encode_checked(&d, &out_, &err));
        if (r == WK_ERROR) rc = moqt_fail(&err);
    }
    free(pairs);
    free(payload);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The document, streamed: a scanner finds the top-level members and the elements of "objects"
 * in the bytes as they arrive; the header members (every member before "objects") are parsed by
 * json-c as one object once "objects" begins (or at the end), each element of "objects" as it
 * completes, and its bytes are written then. Memory: the header text and one element, whatever
 * the number of objects. The scanner only finds where values end; json-c judges their syntax.
 * ------------------------------------------------------------------------------------------- */

#define ENCODE_ITEM_MAX ENCODE_INPUT_MAX /* the largest header or objects[] element */

typedef enum jstate {
    J_BEGIN,       /* before the root '{' */
    J_FIRST_KEY,   /* after '{': a key or '}' */
    J_KEY_START,   /* after ',': a key */
    J_KEY,         /* inside a key string */
    J_COLON,       /* after a key */
    J_VALUE_START, /* after ':' */
    J_VALUE,       /* inside a header member's value */
    J_AFTER_VALUE, /* after a member: ',' or '}' */
    J_ELEM_FIRST,  /* after "objects":[ : an element or ']' */
    J_ELEM_START,  /* after ',' in objects: an element */
    J_ELEM,        /* inside an element */
    J_ELEM_NEXT,   /* after an element: ',' or ']' */
    J_TAIL         /* after the root '}': whitespace only */
} jstate;

/* Finds the end of one JSON value, byte by byte. */
typedef struct vscan {
    unsigned depth;
    bool str, esc, scalar;
} vscan;

enum { V_MORE, V_DONE, V_ENDED_BEFORE };

static void vscan_start(vscan *v, uint8_t c)
{
    memset(v, 0, sizeof *v);
    if (c == '{' || c == '[') v->depth = 1;
    else if (c == '"') v->str = true;
    else v->scalar = true;
}

static bool is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* V_MORE (c is part of the value, more follows), V_DONE (c ends it), V_ENDED_BEFORE (a number
 * or literal ended before c, which belongs to what follows). */
static int vscan_feed(vscan *v, uint8_t c)
{
    if (v->scalar) return (c == ',' || c == '}' || c == ']' || is_ws(c)) ? V_ENDED_BEFORE : V_MORE;
    if (v->str) {
        if (v->esc) v->esc = false;
        else if (c == '\\') v->esc = true;
        else if (c == '"') {
            v->str = false;
            if (v->depth == 0) return V_DONE;
        }
        return V_MORE;
    }
    if (c == '"') v->str = true;
    else if (c == '{' || c == '[') v->depth++;
    else if ((c == '}' || c == ']') && --v->depth == 0) return V_DONE;
    return V_MORE;
}

typedef struct encoder {
    const moqt_opts *opts;
    jstate state;
    vscan v;
    obuf text;          /* the header members ("{" k:v,...) or the current element */
    obuf key;           /* the current member's key, quotes included */
    bool key_esc;
    size_t members;     /* header members in text */
    bool head_done;     /* the header is parsed (and written for a subgroup/fetch stream) */
    bool objects_seen;  /* "objects" has been read */
    uint64_t index;     /* objects[] elements read */
    uint64_t consumed;  /* bytes scanned */
    json_object *doc;   /* the header members */
    bool padding;
    wk_moqt_subgroup_writer sw;
    wk_moqt_fetch_writer fw;
    obuf out;           /* one item's bytes */
} encoder;

static bool ob_put(obuf *b, const void *p, size_t n)
{
    if (b->len + n > ENCODE_ITEM_MAX || !ob_reserve(b, n)) return false;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return true;
}

/* Writes the item in e->out and empties it. */
static int flush_item(encoder *e)
{
    int rc = moqt_out(e->out.p, e->out.len);
    e->out.len = 0;
    return rc;
}

static int not_json(const encoder *e, const char *why)
{
    return moqt_fail_usage("stdin is not one JSON object in the decoded shape (%s, byte %" PRIu64
                           ")", why, e->consumed);
}

/* Parses text[0..len) as one JSON value of json-c (NULL when it is not). */
static json_object *parse_text(const obuf *t)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) return NULL;
    json_object *o = t->len > (size_t)INT32_MAX ? NULL
                     : json_tokener_parse_ex(tok, (const char *)t->p, (int)t->len);
    if (o && (json_tokener_get_error(tok) != json_tokener_success ||
              (size_t)json_tokener_get_parse_end(tok) != t->len)) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

/* The header: parse the members read so far; for a subgroup or fetch stream, encode its header
 * bytes (written with the first object, so a refused first object writes nothing). */
static int encode_head(encoder *e)
{
    e->head_done = true;
    if (!ob_put(&e->text, "}", 1)) return moqt_fail_usage("the header is too long");
    e->doc = parse_text(&e->text);
    e->text.len = 0;
    if (!e->doc || !json_object_is_type(e->doc, json_type_object))
        return moqt_fail_usage("stdin is not one JSON object");
    int rc;
    switch (e->opts->carrier) {
    case MOQT_CARRIER_SUBGROUP:
        if ((rc = expect_stream_type(e->doc, "subgroup", &e->padding)) || e->padding) return rc;
        rc = encode_subgroup_begin(e->doc, &e->sw, &e->out);
        break;
    case MOQT_CARRIER_FETCH:
        if ((rc = expect_stream_type(e->doc, "fetch", &e->padding)) || e->padding) return rc;
        rc = encode_fetch_begin(e->doc, e->opts, &e->fw, &e->out);
        break;
    default: /* a datagram: written at the end */
        return expect_stream_type(e->doc, "datagram", &e->padding);
    }
    return rc; /* the header's bytes wait in e->out for the first object (or the end) */
}

/* One objects[] element, complete in e->text. */
static int encode_element(encoder *e)
{
    uint64_t idx = e->index++;
    if (e->padding || e->opts->carrier == MOQT_CARRIER_DATAGRAM) return 0; /* not read, as before */
    json_object *jo = parse_text(&e->text);
    e->text.len = 0;
    if (!jo) return moqt_fail_usage("objects[%" PRIu64 "]: not valid JSON", idx);
    int rc = e->opts->carrier == MOQT_CARRIER_SUBGROUP
                 ? encode_subgroup_object(&e->sw, jo, (size_t)idx, &e->out)
                 : encode_fetch_record(&e->fw, jo, (size_t)idx, &e->out);
    json_object_put(jo);
    return rc ? rc : flush_item(e);
}

/* The root object ended: a document without objects gets its header now; padding and datagrams
 * are written from the header's fields. */
static int encode_end(encoder *e)
{
    int rc = e->head_done ? 0 : encode_head(e);
    if (rc) return rc;
    if (e->padding)
        rc = encode_padding(e->doc, e->opts->carrier == MOQT_CARRIER_DATAGRAM, &e->out);
    else if (e->opts->carrier == MOQT_CARRIER_DATAGRAM)
        rc = encode_datagram(e->doc, &e->out);
    return rc ? rc : flush_item(e);
}

static bool key_is_objects(const encoder *e)
{
    return e->key.len == 9 && memcmp(e->key.p, "\"objects\"", 9) == 0;
}

/* Scans one byte. Returns 0 or an exit status (the error printed). */
static int scan(encoder *e, uint8_t c)
{
    int r;
    for (;;) { /* once more only when a number ended before c */
        switch (e->state) {
        case J_BEGIN:
            if (is_ws(c)) return 0;
            if (c != '{') return not_json(e, "no '{'");
            if (!ob_put(&e->text, "{", 1)) return moqt_fail_usage("out of memory");
            e->state = J_FIRST_KEY;
            return 0;
        case J_FIRST_KEY:
        case J_KEY_START:
            if (is_ws(c)) return 0;
            if (c == '}' && e->state == J_FIRST_KEY) {
                e->state = J_TAIL;
                return encode_end(e);
            }
            if (c != '"') return not_json(e, "a key expected");
            e->key.len = 0;
            e->key_esc = false;
            if (!ob_put(&e->key, "\"", 1)) return moqt_fail_usage("out of memory");
            e->state = J_KEY;
            return 0;
        case J_KEY:
            if (!ob_put(&e->key, &c, 1)) return moqt_fail_usage("a key is too long");
            if (e->key_esc) e->key_esc = false;
            else if (c == '\\') e->key_esc = true;
            else if (c == '"') e->state = J_COLON;
            return 0;
        case J_COLON:
            if (is_ws(c)) return 0;
            if (c != ':') return not_json(e, "':' expected");
            e->state = J_VALUE_START;
            return 0;
        case J_VALUE_START:
            if (is_ws(c)) return 0;
            if (e->objects_seen)
                return moqt_fail_usage("\"%.*s\" after \"objects\": the header's fields come "
                                       "first (as `wirekit moqt decode` prints them)",
                                       (int)(e->key.len > 2 ? e->key.len - 2 : 0),
                                       (const char *)e->key.p + 1);
            if (key_is_objects(e)) {
                if (c != '[') return moqt_fail_usage("\"objects\" must be an array");
                e->objects_seen = true;
                e->state = J_ELEM_FIRST;
                return e->head_done ? 0 : encode_head(e);
            }
            if (e->head_done) /* cannot happen: the header is parsed at "objects" or the end */
                return not_json(e, "a member after the header");
            if ((e->members++ && !ob_put(&e->text, ",", 1)) ||
                !ob_put(&e->text, e->key.p, e->key.len) || !ob_put(&e->text, ":", 1) ||
                !ob_put(&e->text, &c, 1))
                return moqt_fail_usage("the header is too long");
            vscan_start(&e->v, c);
            e->state = J_VALUE;
            return 0;
        case J_VALUE:
            r = vscan_feed(&e->v, c);
            if (r == V_ENDED_BEFORE) {
                e->state = J_AFTER_VALUE;
                continue;
            }
            if (!ob_put(&e->text, &c, 1)) return moqt_fail_usage("the header is too long");
            if (r == V_DONE) e->state = J_AFTER_VALUE;
            return 0;
        case J_AFTER_VALUE:
            if (is_ws(c)) return 0;
            if (c == ',') {
                e->state = J_KEY_START;
                return 0;
            }
            if (c != '}') return not_json(e, "',' or '}' expected");
            e->state = J_TAIL;
            return encode_end(e);
        case J_ELEM_FIRST:
        case J_ELEM_START:
            if (is_ws(c)) return 0;
            if (c == ']' && e->state == J_ELEM_FIRST) {
                e->state = J_AFTER_VALUE;
                return 0;
            }
            e->text.len = 0;
            if (!ob_put(&e->text, &c, 1))
                return moqt_fail_usage("objects[%" PRIu64 "] is too long", e->index);
            vscan_start(&e->v, c);
            e->state = J_ELEM;
            return 0;
        case J_ELEM:
            r = vscan_feed(&e->v, c);
            if (r == V_ENDED_BEFORE) {
                e->state = J_ELEM_NEXT;
                if ((r = encode_element(e)) != 0) return r;
                continue;
            }
            if (!ob_put(&e->text, &c, 1))
                return moqt_fail_usage("objects[%" PRIu64 "] is longer than %u bytes", e->index,
                                       ENCODE_ITEM_MAX);
            if (r == V_DONE) {
                e->state = J_ELEM_NEXT;
                return encode_element(e);
            }
            return 0;
        case J_ELEM_NEXT:
            if (is_ws(c)) return 0;
            if (c == ',') e->state = J_ELEM_START;
            else if (c == ']') e->state = J_AFTER_VALUE;
            else return not_json(e, "',' or ']' expected in \"objects\"");
            return 0;
        case J_TAIL:
            if (is_ws(c)) return 0;
            return not_json(e, "bytes after the object");
        }
        return 0;
    }
}

/* Scans p[0..n): the common case of a string's body goes in one copy up to its next '"' or '\'. */
static int scan_bytes(encoder *e, const uint8_t *p, size_t n)
{
    int rc;
    for (size_t i = 0; i < n;) {
        if ((e->state == J_ELEM || e->state == J_VALUE) && e->v.str && !e->v.esc) {
            size_t k = i;
            while (k < n && p[k] != '"' && p[k] != '\\') k++;
            if (k > i) {
                if (!ob_put(&e->text, p + i, k - i))
                    return moqt_fail_usage("objects[%" PRIu64 "] is longer than %u bytes",
                                           e->index, ENCODE_ITEM_MAX);
                e->consumed += k - i;
                i = k;
                continue;
            }
        }
        if ((rc = scan(e, p[i])) != 0) return rc;
        e->consumed++;
        i++;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The verb
 * ------------------------------------------------------------------------------------------- */

static const char ENCODE_HELP[] =
    "usage: wirekit moqt encode --carrier subgroup|datagram|fetch [--group-order ascending|descending]\n"
    "                           [--end-of-range delta|absolute]\n"
    "Reads one JSON object in the shape `wirekit moqt decode` prints (the vectors' `decoded`) and\n"
    "writes the canonical bytes: minimal integers, properties in ascending type order. The\n"
    "resolved IDs are encoded (the *_delta keys are derived, not read); booleans and fields the\n"
    "type implies must agree with it. Subgroup: header_type, track_alias, group_id, subgroup_id\n"
    "(mode 0b10; mode 0b01: optional, then it must equal the first object's ID),\n"
    "publisher_priority (unless DEFAULT_PRIORITY), objects[] of object_id, object_properties,\n"
    "status (when the payload is empty; default 0) and payload_hex. Datagram: datagram_type,\n"
    "track_alias, group_id, object_id, publisher_priority, object_properties, object_status or\n"
    "payload_hex. Fetch: request_id, objects[] of serialization_flags (when absent: the smallest\n"
    "that express the object), group_id, subgroup_id (absent: a datagram object), object_id,\n"
    "publisher_priority, object_properties, payload_hex; End of Range markers (0x8c, 0x10c,\n"
    "0x20c) take group_id and object_id. {\"stream_type\":\"padding\",\"padding_length\":\"N\"}\n"
    "writes a padding stream (subgroup/fetch carrier) or datagram of N zero bytes.\n"
    "Streamed: the header fields come before \"objects\" (as decode prints them; a header field\n"
    "after it is refused); each object's bytes are written once its JSON is read and encodes\n"
    "(the header's with the first), so memory holds one object (at most 512 MiB of JSON),\n"
    "whatever their number. On an error the bytes of the objects before it are on stdout.\n"
    "  --group-order O   fetch: how Group ID Deltas apply (default ascending)\n"
    "  --end-of-range R  fetch: End of Range records in reading delta (default) or absolute\n"
    "Exit 0 ok; 1 bad JSON or a missing or contradictory field (WK_ERR_USAGE) or a writer's\n"
    "refusal of an argument (WK_ERR_ARG); 2 a value the library refuses to put on the wire\n"
    "(invalid Type Flags, a status that forbids the payload, ...): one stderr line\n"
    "`CATEGORY NAME: message`.\n";

int wk_cli_moqt_encode(int argc, char **argv)
{
    moqt_opts o;
    int rc = moqt_parse_opts(argc, argv, "encode", ENCODE_HELP, true, &o);
    if (rc >= 0) return rc;
    static encoder e;
    memset(&e, 0, sizeof e);
    e.opts = &o;
    static uint8_t buf[MOQT_IO_CHUNK];
    for (;;) {
        size_t got;
        if ((rc = wk_cli_read_some(buf, sizeof buf, &got)) != 0) break;
        if (got == 0) {
            if (e.state != J_TAIL) rc = not_json(&e, "the input ends inside it");
            break;
        }
        if ((rc = scan_bytes(&e, buf, got)) != 0) break;
    }
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    free(e.text.p);
    free(e.key.p);
    free(e.out.p);
    json_object_put(e.doc);
    return rc;
}
