/* MoQT draft-20 vectors through the library API: every case of the given files (the shipped
 * moqtap vectors and ours under tests/moqt/vectors/, same JSON shape) decodes to the expected
 * structure (every field of `decoded`, compared as JSON) or fails with the expected category (and,
 * in our files, the expected error name and offset); every canonical case re-encodes to its exact
 * bytes through the writers; every stream case goes through the contract harness
 * (tests/contract/, with the moqt adapter's checks on every event): whole, byte by byte, split at
 * every point and in chunks of every size, each push in its own heap buffer freed right after (so
 * a slice kept past its push is a use-after-free under ASan), all reaching the same outcome.
 *
 * Usage: test_moqt_vectors [--expect-count N] file.json...
 *
 * Per-case extensions in our files (the CLI maps them to flags): "options": {"group_order":
 * "ascending"|"descending", "end_of_range": "delta"|"absolute", "strict_padding": true}, and
 * "error_name" / "error_offset" beside "error". */
#include "wk_test.h"
#include "wk_contract_moqt.h"
#include <wirekit/moqt.h>
#include <json-c/json.h>
#include <errno.h>
#include <inttypes.h>

typedef enum carrier { C_VARINT, C_SUBGROUP, C_DATAGRAM, C_FETCH } carrier;

/* ---------------------------------------------------------------------------------------------
 * JSON helpers
 * ------------------------------------------------------------------------------------------- */
static json_object *jdec(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return json_object_new_string(b);
}
static json_object *jhex64(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "0x%02" PRIx64, v);
    return json_object_new_string(b);
}
static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v)) return NULL;
    return json_object_get_string(v);
}
static bool jbool(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}
/* Decimal or 0x-hex string -> u64; false when absent or malformed. */
static bool ju64(json_object *o, const char *key, uint64_t *out)
{
    const char *s = jstr(o, key);
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    unsigned long long v = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? strtoull(s + 2, &end, 16)
                                                                        : strtoull(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}
static uint64_t ju64d(json_object *o, const char *key, uint64_t dflt)
{
    uint64_t v;
    return ju64(o, key, &v) ? v : dflt;
}
/* Hex -> malloc'd bytes (1 byte allocated at least). */
static uint8_t *unhex(const char *h, size_t *n)
{
    size_t len = h ? strlen(h) : 0;
    uint8_t *p = malloc(len / 2 + 1);
    long k = wk_hex_decode(h ? h : "", len, p, len / 2 + 1);
    if (k < 0) {
        free(p);
        return NULL;
    }
    *n = (size_t)k;
    return p;
}

/* A growable hex string for a payload collected piece by piece. */
typedef struct hexbuf {
    char *s;
    size_t n, cap;
} hexbuf;
static void hex_append(hexbuf *h, const uint8_t *p, size_t n)
{
    if (h->n + 2 * n + 1 > h->cap) {
        h->cap = (h->n + 2 * n + 1) * 2;
        h->s = realloc(h->s, h->cap);
    }
    wk_hex_encode(p, n, h->s + h->n);
    h->n += 2 * n;
    h->s[h->n] = 0;
}

/* The `object_properties` map of a pairs block (prior_group_id_gap, prior_object_id_gap; other
 * types as "0x<type>" with a decimal or hex value). NULL for an empty block. */
static json_object *props_json(const uint8_t *p, size_t n)
{
    if (n == 0) return NULL;
    json_object *m = json_object_new_object();
    wk_moqt_properties_iter it;
    wk_moqt_properties_iter_init(&it, &(wk_in){p, n, 0}, 0);
    for (;;) {
        wk_moqt_property pr;
        bool got;
        if (wk_moqt_properties_iter_next(&it, &pr, &got, NULL) != WK_OK || !got) break;
        char key[32];
        if (pr.type == WK_MOQT_PROP_PRIOR_GROUP_ID_GAP) snprintf(key, sizeof key, "prior_group_id_gap");
        else if (pr.type == WK_MOQT_PROP_PRIOR_OBJECT_ID_GAP)
            snprintf(key, sizeof key, "prior_object_id_gap");
        else snprintf(key, sizeof key, "0x%" PRIx64, pr.type);
        if (pr.type & 1) {
            char *hx = malloc(2 * pr.len + 1);
            wk_hex_encode(pr.bytes, pr.len, hx);
            json_object_object_add(m, key, json_object_new_string(hx));
            free(hx);
        } else {
            json_object_object_add(m, key, jdec(pr.value));
        }
    }
    return m;
}

/* The pairs for a JSON properties map, written by our properties encoder (types ascending). */
static size_t props_from_json(json_object *m, uint8_t *out, size_t cap)
{
    if (!m) return 0;
    wk_moqt_property props[16];
    size_t n = 0;
    json_object_object_foreach(m, key, val)
    {
        if (n == 16) break;
        wk_moqt_property *p = &props[n++];
        memset(p, 0, sizeof *p);
        if (!strcmp(key, "prior_group_id_gap")) p->type = WK_MOQT_PROP_PRIOR_GROUP_ID_GAP;
        else if (!strcmp(key, "prior_object_id_gap")) p->type = WK_MOQT_PROP_PRIOR_OBJECT_ID_GAP;
        else p->type = strtoull(key + 2, NULL, 16);
        const char *s = json_object_get_string(val);
        if (p->type & 1) {
            static uint8_t pool[16][256];
            long k = wk_hex_decode(s, strlen(s), pool[n - 1], sizeof pool[0]);
            p->bytes = pool[n - 1];
            p->len = k < 0 ? 0 : (size_t)k;
        } else {
            p->value = strtoull(s, NULL, 10);
        }
    }
    for (size_t i = 1; i < n; i++) /* insertion sort by type */
        for (size_t j = i; j > 0 && props[j - 1].type > props[j].type; j--) {
            wk_moqt_property t = props[j];
            props[j] = props[j - 1];
            props[j - 1] = t;
        }
    wk_out o = {out, cap, 0};
    if (wk_moqt_properties_encode(props, n, &o, NULL) != WK_DONE) return (size_t)-1;
    return o.pos;
}

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */
static wk_moqt_read_options options_of(json_object *v)
{
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    json_object *opt;
    if (!json_object_object_get_ex(v, "options", &opt)) return o;
    const char *go = jstr(opt, "group_order");
    if (go && !strcmp(go, "descending")) o.group_order = WK_MOQT_GROUP_ORDER_DESCENDING;
    const char *eor = jstr(opt, "end_of_range");
    if (eor && !strcmp(eor, "absolute")) o.end_of_range = WK_MOQT_END_OF_RANGE_ABSOLUTE;
    o.strict_padding = jbool(opt, "strict_padding");
    return o;
}

/* ---------------------------------------------------------------------------------------------
 * Stream decode (subgroup, fetch, padding) through the contract harness
 * ------------------------------------------------------------------------------------------- */
typedef struct outcome {
    json_object *decoded; /* NULL on error */
    wk_code code;
    uint64_t offset;
    bool has_offset;
} outcome;

static void outcome_free(outcome *o)
{
    if (o->decoded) json_object_put(o->decoded);
    o->decoded = NULL;
}

/* The document under construction, in the adapter's user pointer. */
typedef struct doc {
    json_object *root, *objects, *cur;
    hexbuf hb;
} doc;

/* Adds the payload hex and closes the object. */
static void finish_object(json_object *obj, hexbuf *hb)
{
    json_object_object_add(obj, "payload_hex", json_object_new_string(hb->s ? hb->s : ""));
    hb->n = 0;
    if (hb->s) hb->s[0] = 0;
}

/* The adapter's event hook (after its checks): each event into the document. */
static bool doc_event(wk_contract *c, wk_contract_moqt *m)
{
    (void)c;
    doc *d = m->user;
    const wk_moqt_stream_reader *r = &m->r;
    json_object *root = d->root;
    switch (r->event) {
    case WK_MOQT_EVENT_PADDING:
        json_object_object_add(root, "stream_type", json_object_new_string("padding"));
        return true;
    case WK_MOQT_EVENT_SUBGROUP_HEADER: {
        const wk_moqt_subgroup_header *h = &r->subgroup;
        json_object_object_add(root, "stream_type", json_object_new_string("subgroup"));
        json_object_object_add(root, "header_type", jhex64(h->type));
        json_object_object_add(root, "track_alias", jdec(h->track_alias));
        json_object_object_add(root, "group_id", jdec(h->group_id));
        if (h->has_priority)
            json_object_object_add(root, "publisher_priority", jdec(h->publisher_priority));
        if (h->type & WK_MOQT_SUBGROUP_END_OF_GROUP)
            json_object_object_add(root, "end_of_group", json_object_new_boolean(1));
        if (h->type & WK_MOQT_SUBGROUP_FIRST_OBJECT)
            json_object_object_add(root, "first_object", json_object_new_boolean(1));
        d->objects = json_object_new_array();
        json_object_object_add(root, "objects", d->objects);
        return true;
    }
    case WK_MOQT_EVENT_FETCH_HEADER:
        json_object_object_add(root, "stream_type", json_object_new_string("fetch"));
        json_object_object_add(root, "request_id", jdec(r->fetch.request_id));
        d->objects = json_object_new_array();
        json_object_object_add(root, "objects", d->objects);
        return true;
    case WK_MOQT_EVENT_OBJECT: {
        const wk_moqt_subgroup_object *o = &r->object;
        d->cur = json_object_new_object();
        json_object_array_add(d->objects, d->cur);
        json_object_object_add(d->cur, "object_id_delta", jdec(o->object_id_delta));
        json_object_object_add(d->cur, "object_id", jdec(o->object_id));
        json_object *pm = props_json(o->properties, o->properties_len);
        if (pm) json_object_object_add(d->cur, "object_properties", pm);
        json_object_object_add(d->cur, "payload_length", jdec(o->payload_length));
        if (o->has_status) json_object_object_add(d->cur, "status", jdec(o->status));
        break;
    }
    case WK_MOQT_EVENT_FETCH_OBJECT: {
        const wk_moqt_fetch_object *o = &r->fetch_object;
        d->cur = json_object_new_object();
        json_object_array_add(d->objects, d->cur);
        json_object_object_add(d->cur, "serialization_flags", jhex64(o->flags));
        bool show_deltas = !(o->end_of_range && o->first_record);
        if (o->has_group_id_delta && show_deltas)
            json_object_object_add(d->cur, "group_id_delta", jdec(o->group_id_delta));
        json_object_object_add(d->cur, "group_id", jdec(o->group_id));
        if (o->has_subgroup_id) json_object_object_add(d->cur, "subgroup_id", jdec(o->subgroup_id));
        if (o->has_object_id_delta && show_deltas)
            json_object_object_add(d->cur, "object_id_delta", jdec(o->object_id_delta));
        json_object_object_add(d->cur, "object_id", jdec(o->object_id));
        if (o->has_priority)
            json_object_object_add(d->cur, "publisher_priority", jdec(o->publisher_priority));
        json_object *pm = props_json(o->properties, o->properties_len);
        if (pm) json_object_object_add(d->cur, "object_properties", pm);
        if (o->has_payload_length)
            json_object_object_add(d->cur, "payload_length", jdec(o->payload_length));
        break;
    }
    default: /* WK_MOQT_EVENT_PAYLOAD */
        break;
    }
    /* the payload piece of an object event or a PAYLOAD event (the adapter checked it) */
    hex_append(&d->hb, r->piece.data, r->piece.len);
    if (r->piece.last) {
        bool marker = r->event == WK_MOQT_EVENT_FETCH_OBJECT && r->fetch_object.end_of_range;
        if (!marker) finish_object(d->cur, &d->hb);
        else d->hb.n = 0;
    }
    return true;
}

/* Decodes bytes[0..n) whole (a fresh heap copy) into the document, or the error. */
static outcome decode_stream(carrier c, const wk_moqt_read_options *opt, const uint8_t *bytes,
                             size_t n, const char *file, const char *id)
{
    outcome res = {0};
    doc d = {json_object_new_object(), NULL, NULL, {0}};
    wk_contract_moqt m;
    wk_contract_moqt_setup(&m, c == C_FETCH ? WK_MOQT_CARRIER_FETCH : WK_MOQT_CARRIER_SUBGROUP,
                           opt);
    m.on_event = doc_event;
    m.user = &d;
    wk_contract_plan whole = {0, NULL, 0, 0, false, true};
    wk_contract_outcome oc;
    char why[320];
    bool kept = wk_contract_drive(&wk_contract_moqt_ops, &m, NULL, bytes, n, &whole, &oc, why,
                                  sizeof why);
    CHECKF(kept, "%s %s: streaming contract broken: %s", file, id, why);
    free(d.hb.s);
    if (!kept || oc.verdict != WK_DONE) {
        json_object_put(d.root);
        res.code = kept ? oc.error.code : WK_ERR_STATE;
        res.offset = oc.error.offset;
        res.has_offset = oc.error.has_offset;
        return res;
    }
    const wk_moqt_stream_reader *r = &m.r;
    if (r->kind == WK_MOQT_KIND_PADDING)
        json_object_object_add(d.root, "padding_length", jdec(r->padding_bytes));
    if (r->kind == WK_MOQT_KIND_SUBGROUP && r->subgroup.subgroup_id_known)
        json_object_object_add(d.root, "subgroup_id", jdec(r->subgroup.subgroup_id));
    res.decoded = d.root;
    return res;
}

static outcome decode_datagram(const wk_moqt_read_options *opt, const uint8_t *bytes, size_t n)
{
    outcome res = {0};
    /* An exact-size heap copy, so a read past the end is caught under ASan. */
    uint8_t *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, bytes, n);
    wk_moqt_datagram d;
    wk_error err;
    wk_error_clear(&err);
    wk_in in = {copy, n, 0};
    if (wk_moqt_datagram_decode(&d, &in, opt, &err) != WK_DONE) {
        res.code = err.code;
        res.offset = err.offset;
        res.has_offset = err.has_offset;
        free(copy);
        return res;
    }
    json_object *root = json_object_new_object();
    if (d.padding) {
        json_object_object_add(root, "stream_type", json_object_new_string("padding"));
        json_object_object_add(root, "padding_length", jdec(d.payload_len));
    } else {
        json_object_object_add(root, "stream_type", json_object_new_string("datagram"));
        json_object_object_add(root, "datagram_type", jhex64(d.type));
        json_object_object_add(root, "track_alias", jdec(d.track_alias));
        json_object_object_add(root, "group_id", jdec(d.group_id));
        json_object_object_add(root, "object_id", jdec(d.object_id));
        if (d.has_priority)
            json_object_object_add(root, "publisher_priority", jdec(d.publisher_priority));
        if (d.type & WK_MOQT_DATAGRAM_END_OF_GROUP)
            json_object_object_add(root, "end_of_group", json_object_new_boolean(1));
        json_object *pm = props_json(d.properties, d.properties_len);
        if (pm) json_object_object_add(root, "object_properties", pm);
        if (d.has_status) {
            json_object_object_add(root, "object_status", jdec(d.status));
        } else {
            char *hx = malloc(2 * d.payload_len + 1);
            wk_hex_encode(d.payload, d.payload_len, hx);
            json_object_object_add(root, "payload_hex", json_object_new_string(hx));
            free(hx);
        }
    }
    free(copy);
    res.decoded = root;
    return res;
}

/* ---------------------------------------------------------------------------------------------
 * Encode from `decoded` through the writers
 * ------------------------------------------------------------------------------------------- */

/* An object's properties (as pairs, into pairs[512]) and payload (malloc'd, the caller frees) from
 * its JSON; false when the properties cannot be encoded. */
static bool object_bytes(json_object *o, uint8_t pairs[512], size_t *pl, uint8_t **payload,
                         size_t *payload_n)
{
    json_object *pm = NULL;
    json_object_object_get_ex(o, "object_properties", &pm);
    *pl = props_from_json(pm, pairs, 512);
    if (*pl == (size_t)-1) return false;
    *payload_n = 0;
    *payload = unhex(jstr(o, "payload_hex"), payload_n);
    return true;
}

static bool encode_subgroup(json_object *d, wk_out *out)
{
    wk_moqt_subgroup_header h;
    memset(&h, 0, sizeof h);
    h.type = ju64d(d, "header_type", 0);
    h.track_alias = ju64d(d, "track_alias", 0);
    h.group_id = ju64d(d, "group_id", 0);
    h.subgroup_id_known = ju64(d, "subgroup_id", &h.subgroup_id);
    h.publisher_priority = (uint8_t)ju64d(d, "publisher_priority", 0);
    wk_moqt_subgroup_writer w;
    wk_error err;
    if (wk_moqt_subgroup_writer_begin(&w, &h, out, &err) != WK_DONE) return false;
    json_object *objs;
    if (!json_object_object_get_ex(d, "objects", &objs)) return false;
    for (size_t i = 0; i < json_object_array_length(objs); i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        uint8_t pairs[512], *payload;
        size_t pl, payload_n;
        if (!object_bytes(o, pairs, &pl, &payload, &payload_n)) return false;
        wk_moqt_object_out ob = {ju64d(o, "object_id", 0), pairs, pl, ju64d(o, "status", 0),
                                 payload, payload_n};
        wk_result rr = wk_moqt_subgroup_writer_write(&w, &ob, out, &err);
        free(payload);
        if (rr != WK_DONE) {
            fprintf(stderr, "  subgroup writer: %s\n", err.msg);
            return false;
        }
    }
    return true;
}

static bool encode_fetch(json_object *d, const wk_moqt_read_options *opt, wk_out *out)
{
    wk_moqt_fetch_writer w;
    wk_error err;
    if (wk_moqt_fetch_writer_begin(&w, ju64d(d, "request_id", 0), opt->group_order,
                                   opt->end_of_range, out, &err) != WK_DONE)
        return false;
    json_object *objs;
    if (!json_object_object_get_ex(d, "objects", &objs)) return false;
    for (size_t i = 0; i < json_object_array_length(objs); i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        uint64_t fl = ju64d(o, "serialization_flags", 0);
        wk_result rr;
        if (wk_moqt_fetch_flags_is_end_of_range(fl)) {
            rr = wk_moqt_fetch_writer_write_end_of_range(&w, fl, ju64d(o, "group_id", 0),
                                                         ju64d(o, "object_id", 0), out, &err);
        } else {
            uint8_t pairs[512], *payload;
            size_t pl, payload_n;
            if (!object_bytes(o, pairs, &pl, &payload, &payload_n)) return false;
            wk_moqt_fetch_object_out ob = {fl,
                                           ju64d(o, "group_id", 0),
                                           ju64d(o, "object_id", 0),
                                           ju64d(o, "subgroup_id", 0),
                                           (uint8_t)ju64d(o, "publisher_priority", 0),
                                           pairs,
                                           pl,
                                           payload,
                                           payload_n};
            rr = wk_moqt_fetch_writer_write(&w, &ob, out, &err);
            free(payload);
        }
        if (rr != WK_DONE) {
            fprintf(stderr, "  fetch writer: %s\n", err.msg);
            return false;
        }
    }
    return true;
}

static bool encode_datagram(json_object *d, wk_out *out)
{
    wk_moqt_datagram g;
    memset(&g, 0, sizeof g);
    g.type = ju64d(d, "datagram_type", 0);
    g.track_alias = ju64d(d, "track_alias", 0);
    g.group_id = ju64d(d, "group_id", 0);
    g.object_id = ju64d(d, "object_id", 0);
    g.publisher_priority = (uint8_t)ju64d(d, "publisher_priority", 0);
    uint8_t pairs[512], *payload;
    size_t pl, payload_n;
    if (!object_bytes(d, pairs, &pl, &payload, &payload_n)) return false;
    g.properties = pairs;
    g.properties_len = pl;
    g.has_status = ju64(d, "object_status", &g.status);
    if (!g.has_status) g.status = 0;
    g.payload = payload;
    g.payload_len = payload_n;
    wk_error err;
    wk_result rr = wk_moqt_datagram_encode_checked(&g, out, &err);
    free(payload);
    if (rr != WK_DONE) fprintf(stderr, "  datagram encoder: %s\n", err.msg);
    return rr == WK_DONE;
}

static bool encode_padding(json_object *d, bool datagram, wk_out *out)
{
    return wk_moqt_padding_encode(datagram, ju64d(d, "padding_length", 0), out, NULL) == WK_DONE;
}

/* ---------------------------------------------------------------------------------------------
 * One case
 * ------------------------------------------------------------------------------------------- */
static int cases_run;

static bool same_outcome(const outcome *a, const outcome *b)
{
    if ((a->decoded == NULL) != (b->decoded == NULL)) return false;
    if (a->decoded) return json_object_equal(a->decoded, b->decoded);
    return a->code == b->code && a->offset == b->offset;
}

static void check_outcome(const char *file, const char *id, json_object *v, const outcome *o)
{
    json_object *want;
    const char *want_err = jstr(v, "error");
    if (json_object_object_get_ex(v, "decoded", &want)) {
        CHECKF(o->decoded != NULL, "%s %s: decode failed: %s (%s)", file, id, wk_error_name(o->code),
               wk_moqt_error_category(o->code));
        if (o->decoded)
            CHECKF(json_object_equal(o->decoded, want), "%s %s:\n  got  %s\n  want %s", file, id,
                   json_object_to_json_string_ext(o->decoded, JSON_C_TO_STRING_PLAIN),
                   json_object_to_json_string_ext(want, JSON_C_TO_STRING_PLAIN));
    } else if (want_err) {
        CHECKF(o->decoded == NULL, "%s %s: decoded but %s expected: %s", file, id, want_err,
               o->decoded ? json_object_to_json_string_ext(o->decoded, JSON_C_TO_STRING_PLAIN) : "");
        if (o->decoded) return;
        CHECKF(!strcmp(wk_moqt_error_category(o->code), want_err), "%s %s: category %s (%s), want %s",
               file, id, wk_moqt_error_category(o->code), wk_error_name(o->code), want_err);
        CHECKF(o->has_offset, "%s %s: error without an offset", file, id);
        const char *name = jstr(v, "error_name");
        if (name)
            CHECKF(!strcmp(name, wk_error_name(o->code)), "%s %s: error %s, want %s", file, id,
                   wk_error_name(o->code), name);
        uint64_t off;
        if (ju64(v, "error_offset", &off))
            CHECKF(o->offset == off, "%s %s: error offset %" PRIu64 ", want %" PRIu64, file, id,
                   o->offset, off);
    } else {
        CHECKF(0, "%s %s: neither decoded nor error", file, id);
    }
}

static void run_varint(const char *file, json_object *v)
{
    const char *id = jstr(v, "id");
    size_t n;
    uint8_t *b = unhex(jstr(v, "hex"), &n);
    REQUIRE(b);
    wk_cursor c = wk_cursor_make(b, n);
    uint64_t val = 0;
    unsigned need;
    bool ok = wk_cursor_moqt_int_n(&c, &val, &need);
    json_object *dec;
    if (json_object_object_get_ex(v, "decoded", &dec)) {
        uint64_t want = ju64d(dec, "value", 0);
        CHECKF(ok && val == want && wk_cursor_left(&c) == 0, "%s %s: got %" PRIu64, file, id, val);
        CHECKF(wk_moqt_int_size(b[0]) == n, "%s %s: size from first byte", file, id);
        CHECK(wk_moqt_int_get(b) == want);
        uint8_t e[WK_MOQT_INT_MAX_LEN];
        unsigned el = wk_moqt_int_put(e, want);
        CHECK(el == wk_moqt_int_len(want));
        json_object *canon;
        bool canonical = !json_object_object_get_ex(v, "canonical", &canon) ||
                         json_object_get_boolean(canon);
        if (canonical) CHECKF(el == n && memcmp(e, b, n) == 0, "%s %s: re-encode", file, id);
        else CHECKF(el < n, "%s %s: the minimal form is shorter", file, id);
    } else {
        CHECKF(!ok && wk_cursor_offset(&c) == 0, "%s %s: truncated read must fail", file, id);
        CHECKF(need > n, "%s %s: needed length %u", file, id, need);
        CHECK(!strcmp(jstr(v, "error"), "incomplete"));
    }
    free(b);
    cases_run++;
}

static void run_case(const char *file, carrier c, json_object *v)
{
    const char *id = jstr(v, "id");
    size_t n;
    uint8_t *b = unhex(jstr(v, "hex"), &n);
    REQUIRE(b);
    wk_moqt_read_options opt = options_of(v);
    outcome whole;
    if (c == C_DATAGRAM) whole = decode_datagram(&opt, b, n);
    else whole = decode_stream(c, &opt, b, n, file, id);
    check_outcome(file, id, v, &whole);

    if (c != C_DATAGRAM) {
        /* the harness's battery: byte by byte, split at every point, every chunk size, each push
         * a fresh heap copy freed after it; every run keeps the contract and gives the whole
         * run's outcome (verdict, error and offset, event record) */
        wk_contract_moqt m;
        wk_contract_moqt_setup(&m, c == C_FETCH ? WK_MOQT_CARRIER_FETCH
                                                : WK_MOQT_CARRIER_SUBGROUP, &opt);
        char why[320];
        wk_contract_outcome oc;
        CHECKF(wk_contract_check(&wk_contract_moqt_ops, &m, NULL, b, n, WK_CONTRACT_ALL, &oc, why,
                                 sizeof why),
               "%s %s: %s", file, id, why);
        CHECKF((oc.verdict == WK_DONE) == (whole.decoded != NULL), "%s %s: verdicts differ", file,
               id);
    }

    /* canonical cases re-encode to their bytes */
    json_object *dec, *canon;
    bool canonical = !json_object_object_get_ex(v, "canonical", &canon) || json_object_get_boolean(canon);
    if (json_object_object_get_ex(v, "decoded", &dec)) {
        size_t cap = n + 64;
        uint8_t *outb = malloc(cap);
        wk_out out = {outb, cap, 0};
        const char *st = jstr(dec, "stream_type");
        bool ok;
        if (st && !strcmp(st, "padding")) ok = encode_padding(dec, c == C_DATAGRAM, &out);
        else if (c == C_SUBGROUP) ok = encode_subgroup(dec, &out);
        else if (c == C_FETCH) ok = encode_fetch(dec, &opt, &out);
        else ok = encode_datagram(dec, &out);
        CHECKF(ok, "%s %s: encoder refused the decoded structure", file, id);
        if (ok && canonical) {
            char *hx = malloc(2 * out.pos + 1);
            wk_hex_encode(outb, out.pos, hx);
            CHECKF(out.pos == n && memcmp(outb, b, n) == 0, "%s %s: re-encoded %s, want %s", file,
                   id, hx, jstr(v, "hex"));
            free(hx);
        } else if (ok) {
            /* a non-canonical case: the canonical re-encoding decodes to the same structure */
            CHECKF(out.pos != n || memcmp(outb, b, n) != 0, "%s %s: marked non-canonical but "
                   "re-encodes to its own bytes", file, id);
            outcome again = c == C_DATAGRAM ? decode_datagram(&opt, outb, out.pos)
                                            : decode_stream(c, &opt, outb, out.pos, file, id);
            CHECKF(same_outcome(&again, &whole), "%s %s: minimal form decodes differently", file, id);
            outcome_free(&again);
        }
        free(outb);
    }
    outcome_free(&whole);
    free(b);
    cases_run++;
}

static void run_file(const char *path)
{
    json_object *root = json_object_from_file(path);
    CHECKF(root != NULL, "cannot read %s", path);
    if (!root) return;
    const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *mt = jstr(root, "message_type");
    const char *mid = jstr(root, "message_type_id");
    carrier c;
    if (mt && !strcmp(mt, "varint")) c = C_VARINT;
    else if (mid && !strcmp(mid, "0x10")) c = C_SUBGROUP;
    else if (mid && !strcmp(mid, "0x00")) c = C_DATAGRAM;
    else if (mid && !strcmp(mid, "0x05")) c = C_FETCH;
    else {
        CHECKF(0, "%s: unknown carrier", path);
        json_object_put(root);
        return;
    }
    json_object *vecs;
    REQUIRE(json_object_object_get_ex(root, "vectors", &vecs));
    int before = cases_run, fails = wk_t_fail;
    for (size_t i = 0; i < json_object_array_length(vecs); i++) {
        json_object *v = json_object_array_get_idx(vecs, i);
        if (c == C_VARINT) run_varint(file, v);
        else run_case(file, c, v);
    }
    printf("%s: %d cases, %d failed checks\n", file, cases_run - before, wk_t_fail - fails);
    json_object_put(root);
}

int main(int argc, char **argv)
{
    long expect = -1;
    int i = 1;
    if (argc > 2 && !strcmp(argv[1], "--expect-count")) {
        expect = strtol(argv[2], NULL, 10);
        i = 3;
    }
    for (; i < argc; i++) run_file(argv[i]);
    if (expect >= 0) CHECKF(cases_run == expect, "ran %d cases, expected %ld", cases_run, expect);
    return wk_test_summary("moqt_vectors");
}
