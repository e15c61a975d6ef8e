/* wirekit moqt: MoQT draft-20 data streams and datagrams (include/wirekit/moqt.h), stdin to
 * stdout. This file: the command table and dispatch, option parsing, shared helpers,
 * `moqt decode` (JSON in the shape of the vectors' `decoded` field), `moqt inspect` (one text
 * line per header and object) and `moqt int decode|encode`. `moqt encode` is in
 * cmd_moqt_encode.c. Streams go through the library's stream reader in 64 KiB reads; datagrams
 * are decoded whole. No codec logic here: only presentation. */
#include "cmd_moqt.h"
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

/* ---------------------------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------------------------- */

int moqt_fail(const wk_error *err)
{
    fflush(stdout); /* the output decoded before the error, then its line */
    char line[256];
    wk_error_format(err, line, sizeof line);
    if (err->code >= 500 && err->code < 700)
        fprintf(stderr, "%s %s\n", wk_moqt_error_category(err->code), line);
    else
        fprintf(stderr, "%s\n", line);
    if (wk_code_is_truncation(err->code)) return WK_EXIT_TRUNCATED;
    return err->category == WK_CAT_PEER_PROTOCOL ? WK_EXIT_INVALID : WK_EXIT_USAGE;
}

int moqt_fail_usage(const char *fmt, ...)
{
    wk_error err;
    char msg[sizeof err.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wk_error_set(&err, WK_ERR_USAGE, WK_NO_OFFSET, "%s", msg);
    return moqt_fail(&err);
}

int moqt_out(const void *p, size_t n)
{
    if (!wk_cli_write(p, n)) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return 0;
}

int moqt_put(const void *p, size_t n)
{
    if (!wk_cli_write(p, n) || fflush(stdout) != 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    return 0;
}

uint8_t *moqt_read_stdin(size_t limit, size_t *len, int *rc)
{
    bool too_long = false;
    uint8_t *buf = wk_cli_read_all(stdin, limit, len, &too_long);
    if (!buf) {
        if (too_long)
            *rc = moqt_fail_usage("input above %zu bytes", limit);
        else {
            fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
            *rc = WK_EXIT_USAGE;
        }
    }
    return buf;
}

/* The two names the vectors use; every other type is "0x<hex>". */
static const struct {
    uint64_t type;
    const char *name;
} property_names[] = {
    {WK_MOQT_PROP_PRIOR_GROUP_ID_GAP, "prior_group_id_gap"},
    {WK_MOQT_PROP_PRIOR_OBJECT_ID_GAP, "prior_object_id_gap"},
};

const char *moqt_property_name(uint64_t type, char *buf, size_t cap)
{
    for (size_t i = 0; i < sizeof property_names / sizeof property_names[0]; i++)
        if (property_names[i].type == type) return property_names[i].name;
    snprintf(buf, cap, "0x%" PRIx64, type);
    return buf;
}

bool moqt_property_type(const char *name, uint64_t *type)
{
    for (size_t i = 0; i < sizeof property_names / sizeof property_names[0]; i++)
        if (strcmp(property_names[i].name, name) == 0) {
            *type = property_names[i].type;
            return true;
        }
    if (name[0] != '0' || (name[1] != 'x' && name[1] != 'X') || !name[2] || strlen(name) > 18)
        return false;
    uint64_t v = 0;
    for (const char *p = name + 2; *p; p++) {
        int d = (*p >= '0' && *p <= '9')   ? *p - '0'
                : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10
                                           : -1;
        if (d < 0) return false;
        v = (v << 4) | (uint64_t)d;
    }
    *type = v;
    return true;
}

int moqt_parse_opts(int argc, char **argv, const char *what, const char *help, bool need_carrier,
                    moqt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_properties = MOQT_PROPS_DEFAULT;
    const char *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            fputs(help, stdout);
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--carrier", &v)) {
            if (v && strcmp(v, "subgroup") == 0)
                o->carrier = MOQT_CARRIER_SUBGROUP;
            else if (v && strcmp(v, "datagram") == 0)
                o->carrier = MOQT_CARRIER_DATAGRAM;
            else if (v && strcmp(v, "fetch") == 0)
                o->carrier = MOQT_CARRIER_FETCH;
            else
                return wk_cli_usage("wirekit moqt %s: --carrier takes subgroup, datagram or fetch",
                                    what);
        } else if (wk_cli_take(argc, argv, &i, "--group-order", &v)) {
            if (v && strcmp(v, "ascending") == 0)
                o->read.group_order = WK_MOQT_GROUP_ORDER_ASCENDING;
            else if (v && strcmp(v, "descending") == 0)
                o->read.group_order = WK_MOQT_GROUP_ORDER_DESCENDING;
            else
                return wk_cli_usage("wirekit moqt %s: --group-order takes ascending or descending",
                                    what);
        } else if (wk_cli_take(argc, argv, &i, "--end-of-range", &v)) {
            if (v && strcmp(v, "delta") == 0)
                o->read.end_of_range = WK_MOQT_END_OF_RANGE_DELTA;
            else if (v && strcmp(v, "absolute") == 0)
                o->read.end_of_range = WK_MOQT_END_OF_RANGE_ABSOLUTE;
            else
                return wk_cli_usage("wirekit moqt %s: --end-of-range takes delta or absolute", what);
        } else if (strcmp(a, "--strict-padding") == 0) {
            o->read.strict_padding = true;
        } else if (strcmp(a, "--allow-unknown-status") == 0) {
            o->read.allow_unknown_status = true;
        } else if (strcmp(a, "--allow-objects-after-end") == 0) {
            o->read.allow_objects_after_end = true;
        } else if (strcmp(a, "--properties-length-only") == 0) {
            o->read.properties_length_only = true;
        } else if (wk_cli_take(argc, argv, &i, "--max-properties", &v)) {
            if (!v || !wk_cli_parse_u64(v, 0, 1u << 28, &o->max_properties))
                return wk_cli_usage("wirekit moqt %s: --max-properties takes a decimal in "
                                    "0..268435456", what);
        } else {
            return wk_cli_usage("wirekit moqt %s: unknown or incomplete option '%s' (see "
                                "'wirekit moqt %s --help')", what, a, what);
        }
    }
    if (need_carrier && o->carrier == MOQT_CARRIER_NONE)
        return wk_cli_usage("wirekit moqt %s: --carrier subgroup|datagram|fetch is required", what);
    return -1;
}

/* ---------------------------------------------------------------------------------------------
 * The stream driver: stdin through wk_moqt_stream_reader_read in reads of at most 64 KiB (what
 * has arrived; stdout is flushed before each), each event handed to a handler; FIN at EOF.
 * ------------------------------------------------------------------------------------------- */

typedef struct stream_handler {
    /* Called for every event other than NEED_INPUT and ERROR; returns 0 to go on, else an exit
     * status (a message printed). */
    int (*on_event)(void *ctx, const wk_moqt_stream_reader *r, wk_moqt_stream_event ev);
    void *ctx;
} stream_handler;

/* Runs the stream on stdin. Returns 0 when the stream ended cleanly, else the exit status with
 * the error printed. *r is the caller's (so it can read results after the end). */
static int run_stream(const moqt_opts *o, wk_moqt_stream_reader *r, const stream_handler *h)
{
    wk_moqt_carrier expect = o->carrier == MOQT_CARRIER_SUBGROUP ? WK_MOQT_CARRIER_SUBGROUP
                             : o->carrier == MOQT_CARRIER_FETCH  ? WK_MOQT_CARRIER_FETCH
                                                                 : WK_MOQT_CARRIER_ANY;
    wk_moqt_read_options ro = o->read;
    uint8_t *props = NULL;
    if (o->max_properties > 0) {
        props = malloc((size_t)o->max_properties);
        if (!props) {
            fprintf(stderr, "WK_ERR_NOMEM: cannot allocate the properties scratch\n");
            return WK_EXIT_USAGE;
        }
    }
    ro.properties_buf = props;
    ro.properties_cap = (size_t)o->max_properties;
    if (!props) { /* --max-properties 0: only empty blocks fit; the buffer must still exist */
        static uint8_t none[1];
        ro.properties_buf = none;
    }
    wk_moqt_stream_reader_init(r, expect, &ro);
    static uint8_t buf[MOQT_IO_CHUNK];
    wk_error err;
    int rc = 0;
    for (;;) {
        size_t got;
        if ((rc = wk_cli_read_some(buf, sizeof buf, &got)) != 0 || got == 0) break;
        wk_in in = {buf, got, 0};
        for (;;) {
            wk_result res = wk_moqt_stream_reader_read(r, &in, NULL, &err);
            if (res == WK_ERROR) {
                fflush(stdout); /* the output so far, then the error line */
                rc = moqt_fail(&err);
                break;
            }
            if (res == WK_NEED_INPUT) break;
            if ((rc = h->on_event(h->ctx, r, r->event)) != 0) break;
        }
        if (rc) break;
    }
    if (rc == 0 && wk_moqt_stream_reader_finish(r, NULL, &err) != WK_DONE) {
        fflush(stdout);
        rc = moqt_fail(&err);
    }
    free(props);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * JSON building (json-c keeps keys in insertion order)
 * ------------------------------------------------------------------------------------------- */

static void j_u64(json_object *o, const char *key, uint64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "%" PRIu64, v);
    json_object_object_add(o, key, json_object_new_string(s));
}

static void j_type(json_object *o, const char *key, uint64_t v)
{
    char s[24];
    snprintf(s, sizeof s, "0x%02" PRIx64, v);
    json_object_object_add(o, key, json_object_new_string(s));
}

static void j_true(json_object *o, const char *key)
{
    json_object_object_add(o, key, json_object_new_boolean(1));
}

/* A growable text buffer for payload_hex. */
typedef struct hexbuf {
    char *p;
    size_t len, cap;
    bool oom;
} hexbuf;

static void hex_append(hexbuf *h, const uint8_t *p, size_t n)
{
    if (h->oom || n == 0) return;
    /* json-c takes string lengths as int: a payload of 1 GiB or more cannot be shown. */
    if (n > (size_t)(INT_MAX - 1) / 2 || h->len + 2 * n > (size_t)INT_MAX - 1) {
        h->oom = true;
        return;
    }
    size_t need = h->len + 2 * n + 1;
    if (need > h->cap) {
        size_t cap = h->cap ? h->cap : 256;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *np = realloc(h->p, cap);
        if (!np) {
            h->oom = true;
            return;
        }
        h->p = np;
        h->cap = cap;
    }
    wk_hex_encode(p, n, h->p + h->len);
    h->len += 2 * n;
}

/* NULL when the hex cannot be held (see hex_append). */
static json_object *hex_string(const uint8_t *p, size_t n)
{
    hexbuf h = {0};
    hex_append(&h, p, n);
    json_object *s = h.oom ? NULL : json_object_new_string_len(h.p ? h.p : "", (int)h.len);
    free(h.p);
    return s;
}

/* Adds the properties pairs[0..n) as "object_properties": a map from property name to a decimal
 * (even types) or hex bytes (odd types). A block that a map cannot show (a type repeated, or
 * pairs not validated that do not parse) becomes "object_properties_hex" instead. */
static void j_properties(json_object *o, const uint8_t *pairs, size_t n)
{
    json_object *map = json_object_new_object();
    wk_moqt_properties_iter it;
    wk_moqt_properties_iter_init(&it, &(wk_in){pairs, n, 0}, 0);
    bool ok = true, got;
    wk_moqt_property prop;
    wk_error err;
    while (ok) {
        if (wk_moqt_properties_iter_next(&it, &prop, &got, &err) != WK_OK) {
            ok = false;
            break;
        }
        if (!got) break;
        char nb[24];
        const char *name = moqt_property_name(prop.type, nb, sizeof nb);
        if (json_object_object_get_ex(map, name, NULL)) {
            ok = false;
            break;
        }
        if (prop.type & 1)
            json_object_object_add(map, name, hex_string(prop.bytes, prop.len));
        else
            j_u64(map, name, prop.value);
    }
    if (ok) {
        json_object_object_add(o, "object_properties", map);
    } else {
        json_object_put(map);
        json_object_object_add(o, "object_properties_hex", hex_string(pairs, n));
    }
}

static int print_json(json_object *root)
{
    const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot format the JSON output\n");
        return WK_EXIT_USAGE;
    }
    int rc = moqt_put(s, strlen(s));
    return rc ? rc : moqt_put("\n", 1);
}

/* ---------------------------------------------------------------------------------------------
 * wirekit moqt decode
 *
 * A stream's document is written as the stream is read, in exactly the bytes json-c prints for
 * the whole document (PLAIN: no spaces; keys in insertion order): the header fields, written at
 * the first object (mode 0b01's Subgroup ID is known from then) or at the end, then
 * `"objects":[`, each object as json-c prints it alone with its last key payload_hex streamed
 * as the payload arrives, then `]}` and a newline at a clean end. Memory is one object's fields
 * and its properties block, whatever the stream's length. On an error the document is left
 * unterminated where it stopped (docs/wirekit.1, "PARTIAL OUTPUT").
 * ------------------------------------------------------------------------------------------- */

typedef struct decode_ctx {
    bool header_out;  /* the header fields and `"objects":[` are written */
    uint64_t written; /* objects written */
    bool in_payload;  /* inside the current object's "payload_hex":" */
} decode_ctx;

static int put_str(const char *s) { return moqt_out(s, strlen(s)); }

/* Writes json-c's PLAIN text of o without its closing '}' (o is a non-empty object). */
static int put_open_object(json_object *o)
{
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s) {
        fprintf(stderr, "WK_ERR_NOMEM: cannot format the JSON output\n");
        return WK_EXIT_USAGE;
    }
    size_t n = strlen(s);
    return moqt_out(s, n && s[n - 1] == '}' ? n - 1 : n);
}

/* The document's fields before "objects" (subgroup, fetch), or the whole padding document: the
 * subgroup's as the reader has resolved them (mode 0b01's Subgroup ID once an object is read). */
static json_object *stream_head(const wk_moqt_stream_reader *r)
{
    json_object *root = json_object_new_object();
    if (r->kind == WK_MOQT_KIND_PADDING) {
        json_object_object_add(root, "stream_type", json_object_new_string("padding"));
        j_u64(root, "padding_length", r->padding_bytes);
    } else if (r->kind == WK_MOQT_KIND_FETCH) {
        json_object_object_add(root, "stream_type", json_object_new_string("fetch"));
        j_u64(root, "request_id", r->fetch.request_id);
    } else {
        const wk_moqt_subgroup_header *h = &r->subgroup;
        json_object_object_add(root, "stream_type", json_object_new_string("subgroup"));
        j_type(root, "header_type", h->type);
        j_u64(root, "track_alias", h->track_alias);
        j_u64(root, "group_id", h->group_id);
        if (h->subgroup_id_known) j_u64(root, "subgroup_id", h->subgroup_id);
        if (h->has_priority) j_u64(root, "publisher_priority", h->publisher_priority);
        if (h->type & WK_MOQT_SUBGROUP_FIRST_OBJECT) j_true(root, "first_object");
        if (h->type & WK_MOQT_SUBGROUP_END_OF_GROUP) j_true(root, "end_of_group");
    }
    return root;
}

/* Writes the header fields and `,"objects":[` once. */
static int decode_head(decode_ctx *c, const wk_moqt_stream_reader *r)
{
    if (c->header_out) return 0;
    c->header_out = true;
    json_object *root = stream_head(r);
    int rc = put_open_object(root);
    json_object_put(root);
    return rc ? rc : put_str(",\"objects\":[");
}

/* Payload bytes as hex inside "payload_hex":"...", closed after the last piece. */
static int decode_piece(decode_ctx *c, const wk_moqt_payload_piece *pc)
{
    if (!c->in_payload) return 0;
    char hex[2 * 4096 + 1]; /* wk_hex_encode writes a NUL after the digits */
    for (size_t at = 0; at < pc->len;) {
        size_t k = pc->len - at < 4096 ? pc->len - at : 4096;
        wk_hex_encode(pc->data + at, k, hex);
        int rc = moqt_out(hex, 2 * k);
        if (rc) return rc;
        at += k;
    }
    if (!pc->last) return 0;
    c->in_payload = false;
    return put_str("\"}");
}

/* Writes one record's fields (j, consumed) and opens its payload_hex when it has a payload. */
static int decode_record(decode_ctx *c, const wk_moqt_stream_reader *r, json_object *j,
                         bool payload)
{
    int rc = decode_head(c, r);
    if (!rc && c->written) rc = put_str(",");
    if (!rc) rc = put_open_object(j);
    json_object_put(j);
    if (rc) return rc;
    c->written++;
    c->in_payload = payload;
    return put_str(payload ? ",\"payload_hex\":\"" : "}");
}

static json_object *subgroup_object_json(const wk_moqt_subgroup_object *ob)
{
    json_object *j = json_object_new_object();
    j_u64(j, "object_id_delta", ob->object_id_delta);
    j_u64(j, "object_id", ob->object_id);
    if (ob->has_properties && ob->properties_len > 0)
        j_properties(j, ob->properties, ob->properties_len);
    j_u64(j, "payload_length", ob->payload_length);
    if (ob->has_status) j_u64(j, "status", ob->status);
    return j;
}

static json_object *fetch_object_json(const wk_moqt_fetch_object *f)
{
    json_object *j = json_object_new_object();
    j_type(j, "serialization_flags", f->flags);
    /* An End of Range marker shows its delta slots only when it is not the first record (the
     * first record's deltas are the absolute IDs): the vectors' convention. */
    bool deltas = !f->end_of_range || !f->first_record;
    if (f->has_group_id_delta && deltas) j_u64(j, "group_id_delta", f->group_id_delta);
    j_u64(j, "group_id", f->group_id);
    if (f->has_subgroup_id) j_u64(j, "subgroup_id", f->subgroup_id);
    if (f->has_object_id_delta && deltas) j_u64(j, "object_id_delta", f->object_id_delta);
    j_u64(j, "object_id", f->object_id);
    if (f->has_priority) j_u64(j, "publisher_priority", f->publisher_priority);
    if (f->has_properties && f->properties_len > 0)
        j_properties(j, f->properties, f->properties_len);
    if (f->has_payload_length) j_u64(j, "payload_length", f->payload_length);
    return j;
}

static int decode_event(void *ctx, const wk_moqt_stream_reader *r, wk_moqt_stream_event ev)
{
    decode_ctx *c = ctx;
    int rc;
    switch (ev) {
    case WK_MOQT_EVENT_OBJECT:
        rc = decode_record(c, r, subgroup_object_json(&r->object), true);
        return rc ? rc : decode_piece(c, &r->piece);
    case WK_MOQT_EVENT_FETCH_OBJECT:
        rc = decode_record(c, r, fetch_object_json(&r->fetch_object),
                           !r->fetch_object.end_of_range);
        return rc ? rc : decode_piece(c, &r->piece);
    case WK_MOQT_EVENT_PAYLOAD:
        return decode_piece(c, &r->piece);
    default:
        return 0; /* headers and padding: written with the first object or at the end */
    }
}

/* A clean end: the rest of the document and its newline. */
static int decode_end(decode_ctx *c, const wk_moqt_stream_reader *r)
{
    if (r->kind == WK_MOQT_KIND_PADDING) {
        json_object *root = stream_head(r);
        int rc = put_open_object(root);
        json_object_put(root);
        return rc ? rc : put_str("}\n");
    }
    int rc = decode_head(c, r);
    return rc ? rc : put_str("]}\n");
}

static json_object *datagram_document(const wk_moqt_datagram *d)
{
    json_object *root = json_object_new_object();
    if (d->padding) {
        json_object_object_add(root, "stream_type", json_object_new_string("padding"));
        j_u64(root, "padding_length", d->payload_len);
        return root;
    }
    json_object_object_add(root, "stream_type", json_object_new_string("datagram"));
    j_type(root, "datagram_type", d->type);
    j_u64(root, "track_alias", d->track_alias);
    j_u64(root, "group_id", d->group_id);
    j_u64(root, "object_id", d->object_id);
    if (d->has_priority) j_u64(root, "publisher_priority", d->publisher_priority);
    if (d->type & WK_MOQT_DATAGRAM_END_OF_GROUP) j_true(root, "end_of_group");
    if (d->has_properties) j_properties(root, d->properties, d->properties_len);
    if (d->has_status)
        j_u64(root, "object_status", d->status);
    else
        json_object_object_add(root, "payload_hex", hex_string(d->payload, d->payload_len));
    return root;
}

static int decode_datagram(const moqt_opts *o, bool inspect);

static const char DECODE_HELP[] =
    "usage: wirekit moqt decode --carrier subgroup|datagram|fetch [--group-order ascending|descending]\n"
    "                           [--end-of-range delta|absolute] [--strict-padding] [more options]\n"
    "Reads one stream (EOF = FIN) or one datagram from stdin and prints one JSON object in the\n"
    "shape of the MoQT test vectors' `decoded` field, a stream's written as it is decoded (memory\n"
    "does not grow with the stream; on an error the object is left unterminated): integers as\n"
    "decimal strings, type fields as \"0x..\", payloads as payload_hex, fields not on the wire\n"
    "absent. Object properties are a map from name (prior_group_id_gap, prior_object_id_gap,\n"
    "else \"0x<type in hex>\") to a decimal (even types) or hex bytes (odd types); a block a map\n"
    "cannot show (a repeated type) is object_properties_hex. A padding stream or datagram prints\n"
    "{\"stream_type\":\"padding\",\"padding_length\":\"N\"}.\n"
    "  --carrier C                subgroup or fetch stream (a padding stream is accepted too), or\n"
    "                             one datagram (OBJECT_DATAGRAM or padding)\n"
    "  --group-order O            fetch: the FETCH's Group Order (default ascending)\n"
    "  --end-of-range R           fetch: End of Range records as delta slots + length 0 (delta,\n"
    "                             the default) or two absolute IDs and no length (absolute)\n"
    "  --strict-padding           refuse non-zero padding bytes (default: discarded unchecked)\n"
    "  --allow-unknown-status     accept Object Status values draft-20 does not assign\n"
    "  --allow-objects-after-end  subgroup: accept objects after End of Group / End of Track\n"
    "  --properties-length-only   check Properties blocks' lengths only, not their pairs\n"
    "  --max-properties N         largest Properties block accepted (default 65536)\n"
    "Exit 0 ok; 2 invalid input and 3 input ended early, with one stderr line\n"
    "`CATEGORY NAME at offset N: message` (CATEGORY: invalid_type, invalid_value,\n"
    "payload_not_permitted, incomplete); 1 usage or local failure.\n";

static int cmd_decode(int argc, char **argv)
{
    moqt_opts o;
    int rc = moqt_parse_opts(argc, argv, "decode", DECODE_HELP, true, &o);
    if (rc >= 0) return rc;
    if (o.carrier == MOQT_CARRIER_DATAGRAM) return decode_datagram(&o, false);
    decode_ctx c = {false, 0, false};
    stream_handler h = {decode_event, &c};
    static wk_moqt_stream_reader r;
    rc = run_stream(&o, &r, &h);
    if (rc == 0) rc = decode_end(&c, &r);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit moqt inspect
 * ------------------------------------------------------------------------------------------- */

#define PREVIEW 16 /* payload bytes shown on an object's line */

typedef struct inspect_ctx {
    char line[512];        /* the current object's line, printed once its preview is known */
    bool pending;
    uint8_t preview[PREVIEW];
    size_t have, want;
    uint64_t length;
} inspect_ctx;

static void line_add(char *line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void line_add(char *line, const char *fmt, ...)
{
    size_t n = strlen(line);
    if (n + 1 >= 512) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, 512 - n, fmt, ap);
    va_end(ap);
}

/* Appends " properties=..." for a block: name=value pairs, or its size when it does not parse. */
static void line_properties(char *line, const uint8_t *pairs, size_t n)
{
    wk_moqt_properties_iter it;
    wk_moqt_properties_iter_init(&it, &(wk_in){pairs, n, 0}, 0);
    wk_moqt_property prop;
    wk_error err;
    bool got, first = true;
    char tmp[512];
    tmp[0] = '\0';
    for (;;) {
        if (wk_moqt_properties_iter_next(&it, &prop, &got, &err) != WK_OK) {
            line_add(line, " properties=%zu bytes (not parsed)", n);
            return;
        }
        if (!got) break;
        char nb[24];
        const char *name = moqt_property_name(prop.type, nb, sizeof nb);
        if (prop.type & 1) {
            char hx[2 * 16 + 1];
            size_t k = prop.len < 16 ? prop.len : 16;
            wk_hex_encode(prop.bytes, k, hx);
            line_add(tmp, "%s%s=%s%s", first ? "" : ",", name, hx, prop.len > 16 ? "..." : "");
        } else {
            line_add(tmp, "%s%s=%" PRIu64, first ? "" : ",", name, prop.value);
        }
        first = false;
    }
    line_add(line, " properties=%s", first ? "(empty)" : tmp);
}

static int inspect_flush(inspect_ctx *c)
{
    if (!c->pending) return 0;
    char hx[2 * PREVIEW + 1];
    wk_hex_encode(c->preview, c->have, hx);
    if (c->length > 0)
        line_add(c->line, " payload=%s%s", hx, c->length > c->have ? "..." : "");
    c->pending = false;
    printf("%s\n", c->line);
    return 0;
}

static void inspect_piece(inspect_ctx *c, const wk_moqt_payload_piece *pc)
{
    if (!c->pending) return;
    size_t k = c->want - c->have;
    if (k > pc->len) k = pc->len;
    memcpy(c->preview + c->have, pc->data, k);
    c->have += k;
    if (c->have == c->want || pc->last) inspect_flush(c);
}

static const char *marker_name(uint64_t flags)
{
    switch (flags) {
    case WK_MOQT_FETCH_END_OF_NON_EXISTENT_RANGE: return "non_existent";
    case WK_MOQT_FETCH_END_OF_UNKNOWN_RANGE: return "unknown";
    case WK_MOQT_FETCH_END_OF_TIMED_OUT_RANGE: return "timed_out";
    default: return "?";
    }
}

static void inspect_start(inspect_ctx *c, uint64_t length)
{
    c->pending = true;
    c->have = 0;
    c->length = length;
    c->want = length < PREVIEW ? (size_t)length : PREVIEW;
}

static int inspect_event(void *ctx, const wk_moqt_stream_reader *r, wk_moqt_stream_event ev)
{
    inspect_ctx *c = ctx;
    char *l = c->line;
    if (ev == WK_MOQT_EVENT_OBJECT || ev == WK_MOQT_EVENT_FETCH_OBJECT) {
        inspect_flush(c); /* not reached with a line pending: the previous payload has ended */
        l[0] = '\0';
    }
    switch (ev) {
    case WK_MOQT_EVENT_SUBGROUP_HEADER: {
        const wk_moqt_subgroup_header *h = &r->subgroup;
        printf("subgroup header type=0x%02" PRIx64 " track_alias=%" PRIu64 " group=%" PRIu64,
               h->type, h->track_alias, h->group_id);
        switch (wk_moqt_subgroup_type_id_mode(h->type)) {
        case WK_MOQT_SUBGROUP_ID_ZERO: printf(" subgroup=0"); break;
        case WK_MOQT_SUBGROUP_ID_FIRST_OBJECT: printf(" subgroup=(first object's id)"); break;
        default: printf(" subgroup=%" PRIu64, h->subgroup_id); break;
        }
        if (h->has_priority)
            printf(" priority=%u", h->publisher_priority);
        else
            printf(" priority=default");
        if (h->type & WK_MOQT_SUBGROUP_PROPERTIES) printf(" properties");
        if (h->type & WK_MOQT_SUBGROUP_FIRST_OBJECT) printf(" first_object");
        if (h->type & WK_MOQT_SUBGROUP_END_OF_GROUP) printf(" end_of_group");
        printf("\n");
        return 0;
    }
    case WK_MOQT_EVENT_FETCH_HEADER:
        printf("fetch header request_id=%" PRIu64 "\n", r->fetch.request_id);
        return 0;
    case WK_MOQT_EVENT_PADDING:
        printf("padding stream type=0x%" PRIx64 " (the rest of the stream is discarded)\n",
               r->stream_type);
        return 0;
    case WK_MOQT_EVENT_OBJECT: {
        const wk_moqt_subgroup_object *ob = &r->object;
        line_add(l, "object id=%" PRIu64 " delta=%" PRIu64 " offset=%" PRIu64, ob->object_id,
                 ob->object_id_delta, ob->offset);
        if (ob->has_properties) line_properties(l, ob->properties, ob->properties_len);
        line_add(l, " length=%" PRIu64, ob->payload_length);
        if (ob->has_status) {
            const char *sn = wk_moqt_status_name(ob->status);
            line_add(l, " status=%" PRIu64 " (%s)", ob->status, sn ? sn : "unassigned");
        }
        inspect_start(c, ob->payload_length);
        inspect_piece(c, &r->piece);
        return 0;
    }
    case WK_MOQT_EVENT_FETCH_OBJECT: {
        const wk_moqt_fetch_object *f = &r->fetch_object;
        if (f->end_of_range) {
            line_add(l, "end_of_range flags=0x%02" PRIx64 " (%s) group=%" PRIu64 " object=%" PRIu64
                        " offset=%" PRIu64, f->flags, marker_name(f->flags), f->group_id,
                     f->object_id, f->offset);
            printf("%s\n", l);
            return 0;
        }
        line_add(l, "object flags=0x%02" PRIx64 " group=%" PRIu64, f->flags, f->group_id);
        if (f->has_group_id_delta) line_add(l, " (delta %" PRIu64 ")", f->group_id_delta);
        if (f->has_subgroup_id)
            line_add(l, " subgroup=%" PRIu64, f->subgroup_id);
        else
            line_add(l, " subgroup=none (datagram)");
        line_add(l, " object=%" PRIu64, f->object_id);
        if (f->has_object_id_delta) line_add(l, " (delta %" PRIu64 ")", f->object_id_delta);
        line_add(l, " priority=%u offset=%" PRIu64, f->publisher_priority, f->offset);
        if (f->has_properties) line_properties(l, f->properties, f->properties_len);
        line_add(l, " length=%" PRIu64, f->payload_length);
        inspect_start(c, f->payload_length);
        inspect_piece(c, &r->piece);
        return 0;
    }
    case WK_MOQT_EVENT_PAYLOAD:
        inspect_piece(c, &r->piece);
        return 0;
    default:
        return 0;
    }
}

static const char INSPECT_HELP[] =
    "usage: wirekit moqt inspect [--carrier subgroup|datagram|fetch] [decode's options]\n"
    "Prints a human-readable dump of one stream (EOF = FIN) or datagram on stdin: one line per\n"
    "header and per object or End of Range record (IDs resolved, deltas, properties, length,\n"
    "status, the first 16 payload bytes). Without --carrier the stream type decides (subgroup,\n"
    "fetch or padding stream); a datagram needs --carrier datagram. The lines before an error\n"
    "are printed; the error is one stderr line and the exit status as for decode.\n";

static int cmd_inspect(int argc, char **argv)
{
    moqt_opts o;
    int rc = moqt_parse_opts(argc, argv, "inspect", INSPECT_HELP, false, &o);
    if (rc >= 0) return rc;
    if (o.carrier == MOQT_CARRIER_DATAGRAM) return decode_datagram(&o, true);
    inspect_ctx c;
    memset(&c, 0, sizeof c);
    stream_handler h = {inspect_event, &c};
    static wk_moqt_stream_reader r;
    rc = run_stream(&o, &r, &h);
    if (c.pending) inspect_flush(&c); /* an error inside a payload: show what was read */
    if (rc == 0 && r.kind == WK_MOQT_KIND_PADDING)
        printf("padding %" PRIu64 " bytes\n", r.padding_bytes);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    return rc;
}

/* One datagram from stdin: JSON (decode) or one line (inspect). */
static int decode_datagram(const moqt_opts *o, bool inspect)
{
    size_t n;
    int rc = 0;
    uint8_t *src = moqt_read_stdin(MOQT_DATAGRAM_MAX, &n, &rc);
    if (!src) return rc;
    wk_moqt_read_options ro = o->read;
    wk_moqt_datagram d;
    wk_error err;
    if (wk_moqt_datagram_decode(&d, &(wk_in){src, n, 0}, &ro, &err) != WK_DONE) {
        rc = moqt_fail(&err);
    } else if (!inspect) {
        json_object *root = datagram_document(&d);
        rc = print_json(root);
        json_object_put(root);
    } else if (d.padding) {
        printf("padding datagram type=0x%" PRIx64 " padding=%zu bytes\n", d.type, d.payload_len);
    } else {
        char l[512];
        l[0] = '\0';
        line_add(l, "datagram type=0x%02" PRIx64 " track_alias=%" PRIu64 " group=%" PRIu64
                    " object=%" PRIu64, d.type, d.track_alias, d.group_id, d.object_id);
        if (d.has_priority)
            line_add(l, " priority=%u", d.publisher_priority);
        else
            line_add(l, " priority=default");
        if (d.type & WK_MOQT_DATAGRAM_END_OF_GROUP) line_add(l, " end_of_group");
        if (d.has_properties) line_properties(l, d.properties, d.properties_len);
        if (d.has_status) {
            const char *sn = wk_moqt_status_name(d.status);
            line_add(l, " status=%" PRIu64 " (%s)", d.status, sn ? sn : "unassigned");
        } else {
            char hx[2 * PREVIEW + 1];
            size_t k = d.payload_len < PREVIEW ? d.payload_len : PREVIEW;
            wk_hex_encode(d.payload, k, hx);
            line_add(l, " length=%zu", d.payload_len);
            if (d.payload_len) line_add(l, " payload=%s%s", hx, d.payload_len > k ? "..." : "");
        }
        printf("%s\n", l);
    }
    if (inspect && fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    free(src);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit moqt int decode|encode
 * ------------------------------------------------------------------------------------------- */

static int cmd_int_decode(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit moqt int decode\n"
                   "Reads MoQT integers (draft-20 section 1.4.1: a 1-to-9-byte prefix code, not the\n"
                   "QUIC varint; non-minimal forms accepted) back to back from stdin and prints one\n"
                   "line {\"value\":\"N\"} per integer, as they arrive. An integer cut short: exit 3,\n"
                   "`incomplete MOQT_ERR_TRUNCATED at offset N` (N = the input's length).\n");
            return WK_EXIT_OK;
        }
        return wk_cli_usage("wirekit moqt int decode: unknown option '%s'", argv[i]);
    }
    /* Streamed: each read is parsed into lines at once; an integer split across reads waits in
     * buf's first bytes (at most 8). */
    static uint8_t buf[MOQT_IO_CHUNK + WK_MOQT_INT_MAX_LEN];
    size_t have = 0;      /* bytes of an unfinished integer kept at buf[0..have) */
    uint64_t total = 0;   /* bytes read so far */
    int rc = 0;
    for (;;) {
        size_t got;
        if ((rc = wk_cli_read_some(buf + have, MOQT_IO_CHUNK, &got)) != 0) break;
        total += got;
        if (got == 0) {
            if (have > 0) {
                wk_cursor c = wk_cursor_make(buf, have);
                uint64_t v;
                unsigned need = 0;
                (void)wk_cursor_moqt_int_n(&c, &v, &need);
                wk_error err;
                wk_error_set(&err, WK_ERR_MOQT_TRUNCATED, total,
                             "input ended inside an integer of %u bytes (%zu present)", need, have);
                fflush(stdout);
                rc = moqt_fail(&err);
            }
            break;
        }
        wk_cursor c = wk_cursor_make(buf, have + got);
        uint64_t v;
        while (wk_cursor_moqt_int(&c, &v)) {
            char line[40];
            int k = snprintf(line, sizeof line, "{\"value\":\"%" PRIu64 "\"}\n", v);
            if ((rc = moqt_out(line, (size_t)k)) != 0) break;
        }
        if (rc) break;
        have = wk_cursor_left(&c);
        memmove(buf, c.p, have);
    }
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        rc = WK_EXIT_USAGE;
    }
    return rc;
}

static int put_int(uint64_t v)
{
    uint8_t b[WK_MOQT_INT_MAX_LEN];
    unsigned k = wk_moqt_int_put(b, v);
    return moqt_put(b, k);
}

static int cmd_int_encode(int argc, char **argv)
{
    int rc = 0;
    bool any = false;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit moqt int encode [VALUE...]\n"
                   "Writes each decimal VALUE (0..18446744073709551615) as a minimal MoQT integer.\n"
                   "Without VALUEs, reads one JSON object {\"value\":\"N\"} (as `int decode` prints,\n"
                   "the varint vectors' `decoded`) from stdin.\n");
            return WK_EXIT_OK;
        }
    }
    for (int i = 1; i < argc && rc == 0; i++) {
        uint64_t v;
        if (!wk_cli_parse_u64(argv[i], 0, UINT64_MAX, &v))
            return wk_cli_usage("wirekit moqt int encode: '%s' is not a decimal in "
                                "0..18446744073709551615", argv[i]);
        rc = put_int(v);
        any = true;
    }
    if (any) return rc;
    size_t n;
    uint8_t *src = moqt_read_stdin(MOQT_DATAGRAM_MAX, &n, &rc);
    if (!src) return rc;
    json_tokener *tok = json_tokener_new();
    json_object *doc = tok ? json_tokener_parse_ex(tok, (const char *)src, (int)n) : NULL;
    if (!doc || json_tokener_get_error(tok) != json_tokener_success) {
        rc = moqt_fail_usage("stdin is not one JSON object");
    } else {
        json_object *val;
        uint64_t v;
        if (!json_object_is_type(doc, json_type_object) ||
            !json_object_object_get_ex(doc, "value", &val) ||
            !json_object_is_type(val, json_type_string) ||
            !wk_cli_parse_u64(json_object_get_string(val), 0, UINT64_MAX, &v))
            rc = moqt_fail_usage("\"value\" must be a decimal string in 0..2^64-1");
        else
            rc = put_int(v);
    }
    json_object_put(doc);
    if (tok) json_tokener_free(tok);
    free(src);
    return rc;
}

static const wk_cli_command int_commands[] = {
    {"decode", "MoQT integers on stdin to {\"value\":\"N\"} lines", cmd_int_decode},
    {"encode", "[VALUE...]: decimals (or {\"value\":\"N\"} on stdin) to integers", cmd_int_encode},
};

static int cmd_int(int argc, char **argv)
{
    return wk_cli_dispatch("moqt int", "The MoQT integer (draft-20 section 1.4.1).", int_commands,
                           sizeof int_commands / sizeof int_commands[0], argc, argv);
}

/* ---------------------------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------------------------- */

static const wk_cli_command commands[] = {
    {"decode", "--carrier C [options]: one stream or datagram to the vectors' JSON", cmd_decode},
    {"encode", "--carrier C [options]: that JSON to the canonical bytes", wk_cli_moqt_encode},
    {"inspect", "[--carrier C] [options]: one text line per header and object", cmd_inspect},
    {"int", "decode|encode: the MoQT integer (1-to-9-byte prefix code)", cmd_int},
};

int wk_cli_moqt(int argc, char **argv)
{
    return wk_cli_dispatch("moqt",
                           "MoQT draft-20 data plane: subgroup and fetch streams, datagrams, padding",
                           commands, sizeof commands / sizeof commands[0], argc, argv);
}
