/* libFuzzer target: the MoQT draft-20 datagram parser (wk_moqt_datagram_decode, moqt.h) on
 * arbitrary datagram bytes.
 *
 * Input: one header byte, then one whole datagram.
 *   byte 0  bit 0 strict_padding, bit 1 properties_length_only, bit 2 allow_unknown_status,
 *           bits 3-7 unused (free for the fuzzer)
 *
 * Checked on every input:
 *   - the verdict, error offset and every decoded field equal those of a reference parser written
 *     here from spec 4, 6, 7 and moqt.h's decisions (type checks in the documented order, Object
 *     ID / priority / properties / status / payload by the flags, PROPERTIES with length 0, a
 *     non-Normal status with properties, an unassigned status, bytes after the status, the pairs
 *     in strict mode, non-zero padding in strict mode, truncation at offset n);
 *   - errors are PeerProtocol WK_ERR_MOQT_* codes with an offset inside the input and a category
 *     from wk_moqt_error_category ("incomplete" exactly for truncation);
 *   - wk_moqt_dispatch(datagram) and wk_moqt_datagram_type_check agree with the parser on the
 *     type and on Type Flags errors;
 * and on an accepted datagram:
 *   - the fields follow the Type Flags (Object ID 0 with ZERO_OBJECT_ID, priority, properties and
 *     status present exactly by their bits, END_OF_GROUP); properties and payload are borrowed
 *     slices of the input, the payload runs to the input's end (empty with STATUS);
 *   - every prefix ending before the payload is MOQT_ERR_TRUNCATED at offset = its length, the
 *     prefix ending where the payload starts decodes with an empty payload;
 *   - wk_moqt_datagram_size / _encode: exactly that many bytes (one byte less of room:
 *     WK_NEED_OUTPUT with the buffer untouched); the encoding decodes to the same fields; it is
 *     never longer than the input, and when as long (the input was minimal) it is the input;
 *     _encode_checked writes the same bytes, or refuses exactly what the parser was told to allow
 *     (an unassigned status, non-zero padding). */
#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

/* ---------------------------------------------------------------------------------------------
 * Reference parser
 * ------------------------------------------------------------------------------------------- */
typedef struct ref {
    const uint8_t *w;
    size_t n, pos;
    wk_code code;
    uint64_t offset;
} ref;

static bool fail(ref *x, wk_code c, uint64_t off)
{
    x->code = c;
    x->offset = off;
    return false;
}

static bool get_int(ref *x, uint64_t *v)
{
    if (x->pos >= x->n) return fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint8_t b = x->w[x->pos];
    unsigned ones = 0;
    while (ones < 8 && (b & (0x80u >> ones))) ones++;
    size_t len = ones + 1;
    if (x->n - x->pos < len) return fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint64_t val = ones == 8 ? 0 : (uint64_t)(b & (0xFFu >> (ones + 1)));
    for (size_t i = 1; i < len; i++) val = val << 8 | x->w[x->pos + i];
    x->pos += len;
    *v = val;
    return true;
}

static bool pairs_ok(ref *x, const uint8_t *p, size_t len, uint64_t base)
{
    ref b = {p, len, 0, WK_OK, 0};
    uint64_t type = 0;
    while (b.pos < len) {
        uint64_t start = b.pos, d, v;
        if (!get_int(&b, &d)) return fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (d > UINT64_MAX - type) return fail(x, WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, base + start);
        type += d;
        if (!get_int(&b, &v)) return fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (type & 1) {
            if (v > WK_MOQT_PROP_VALUE_MAX_LEN)
                return fail(x, WK_ERR_MOQT_PROPERTY_LENGTH, base + start);
            if (len - b.pos < v) return fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
            b.pos += (size_t)v;
        }
    }
    return true;
}

static wk_code ref_type_check(uint64_t t)
{
    if (t & ~(uint64_t)0x3F) return WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT;
    if (t & 0x10) return WK_ERR_MOQT_DATAGRAM_RESERVED_BIT;
    if ((t & 0x22) == 0x22) return WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP;
    return WK_OK;
}

static bool ref_decode(ref *x, const wk_moqt_read_options *o, wk_moqt_datagram *d)
{
    memset(d, 0, sizeof *d);
    if (!get_int(x, &d->type)) return false;
    if (d->type == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        d->padding = true;
        d->payload = x->w + x->pos;
        d->payload_len = x->n - x->pos;
        if (o->strict_padding)
            for (size_t i = x->pos; i < x->n; i++)
                if (x->w[i]) return fail(x, WK_ERR_MOQT_PADDING_NONZERO, i);
        return true;
    }
    wk_code c = ref_type_check(d->type);
    if (c != WK_OK) return fail(x, c, 0);
    uint64_t t = d->type;
    if (!get_int(x, &d->track_alias) || !get_int(x, &d->group_id)) return false;
    if (!(t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) && !get_int(x, &d->object_id)) return false;
    d->has_priority = !(t & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY);
    if (d->has_priority) {
        if (x->pos >= x->n) return fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
        d->publisher_priority = x->w[x->pos++];
    }
    d->has_properties = t & WK_MOQT_DATAGRAM_PROPERTIES;
    if (d->has_properties) {
        uint64_t at = x->pos, len;
        if (!get_int(x, &len)) return false;
        if (len == 0) return fail(x, WK_ERR_MOQT_EMPTY_PROPERTIES, at);
        if (x->n - x->pos < len) return fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
        d->properties = x->w + x->pos;
        d->properties_len = (size_t)len;
        x->pos += (size_t)len;
    }
    d->has_status = t & WK_MOQT_DATAGRAM_STATUS;
    d->status = WK_MOQT_STATUS_NORMAL;
    if (d->has_status) {
        uint64_t at = x->pos;
        if (!get_int(x, &d->status)) return false;
        if (!o->allow_unknown_status && !wk_moqt_status_is_assigned(d->status))
            return fail(x, WK_ERR_MOQT_UNKNOWN_STATUS, at);
        if (d->has_properties && d->status != WK_MOQT_STATUS_NORMAL)
            return fail(x, WK_ERR_MOQT_STATUS_PROPERTIES, at);
        if (x->pos < x->n) return fail(x, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, x->pos);
        d->payload = x->w + x->pos;
        d->payload_len = 0;
    } else {
        d->payload = x->w + x->pos;
        d->payload_len = x->n - x->pos;
    }
    /* the pairs are validated last (datagram.c's order, as the stream reader does) */
    if (d->has_properties && !o->properties_length_only &&
        !pairs_ok(x, d->properties, d->properties_len,
                  (uint64_t)(d->properties - x->w)))
        return false;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Checks
 * ------------------------------------------------------------------------------------------- */
static void same_fields(const wk_moqt_datagram *a, const wk_moqt_datagram *b, bool same_buffer)
{
    CHECK(a->padding == b->padding && a->type == b->type);
    CHECK(a->payload_len == b->payload_len);
    if (a->payload_len) CHECK(memcmp(a->payload, b->payload, a->payload_len) == 0);
    if (same_buffer && a->payload_len) CHECK(a->payload == b->payload);
    if (a->padding) return;
    CHECK(a->track_alias == b->track_alias && a->group_id == b->group_id);
    CHECK(a->object_id == b->object_id);
    CHECK(a->has_priority == b->has_priority);
    if (a->has_priority) CHECK(a->publisher_priority == b->publisher_priority);
    CHECK(a->has_properties == b->has_properties && a->properties_len == b->properties_len);
    if (a->properties_len) CHECK(memcmp(a->properties, b->properties, a->properties_len) == 0);
    if (same_buffer && a->properties_len) CHECK(a->properties == b->properties);
    CHECK(a->has_status == b->has_status && a->status == b->status);
}

static bool type_error(wk_code c)
{
    return c == WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT || c == WK_ERR_MOQT_DATAGRAM_RESERVED_BIT ||
           c == WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP;
}

static void check_error(const wk_error *e, size_t n)
{
    CHECK(e->code >= 500 && e->code < 700);
    CHECK(e->category == WK_CAT_PEER_PROTOCOL);
    CHECK(e->has_offset && e->offset <= n);
    const char *cat = wk_moqt_error_category(e->code);
    CHECK(strcmp(cat, "ok") != 0 && strcmp(cat, "error") != 0);
    CHECK((strcmp(cat, "incomplete") == 0) == (e->code == WK_ERR_MOQT_TRUNCATED));
    if (type_error(e->code)) CHECK(strcmp(cat, "invalid_type") == 0);
    if (e->code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED) CHECK(strcmp(cat, "payload_not_permitted") == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    o.strict_padding = data[0] & 1;
    o.properties_length_only = data[0] & 2;
    o.allow_unknown_status = data[0] & 4;
    const uint8_t *p = data + 1;
    size_t n = size - 1;

    wk_moqt_datagram d, rd;
    wk_error e;
    wk_error_clear(&e);
    wk_code c = wk_moqt_datagram_decode(p, n, &o, &d, &e);
    ref x = {p, n, 0, WK_OK, 0};
    bool rok = ref_decode(&x, &o, &rd);
    if ((c == WK_OK) != rok || (!rok && (c != x.code || e.offset != x.offset))) {
        fprintf(stderr, "reference: %s at %llu; parser: %s at %llu\n", wk_error_name(x.code),
                (unsigned long long)x.offset, wk_error_name(c), (unsigned long long)e.offset);
        CHECK(0);
    }

    /* dispatch and the type check agree */
    wk_moqt_stream_kind kind;
    uint64_t type = 0;
    size_t type_len = 0;
    wk_error e2;
    wk_code dc = wk_moqt_dispatch(p, n, true, &kind, &type, &type_len, &e2);
    if (c != WK_OK && type_error(c)) {
        CHECK(dc == c && e2.offset == 0);
        CHECK(wk_moqt_datagram_type_check(type, 0, &e2) == c);
        CHECK(!wk_moqt_datagram_type_is_valid(type));
    } else if (dc == WK_OK) {
        CHECK(kind == (type == WK_MOQT_DATAGRAM_TYPE_PADDING ? WK_MOQT_KIND_PADDING
                                                              : WK_MOQT_KIND_DATAGRAM));
        if (kind == WK_MOQT_KIND_DATAGRAM) CHECK(wk_moqt_datagram_type_is_valid(type));
    } else {
        /* the type itself is cut short */
        CHECK(dc == WK_ERR_MOQT_TRUNCATED && c == WK_ERR_MOQT_TRUNCATED && e2.offset == n);
    }

    if (c != WK_OK) {
        CHECK(e.code == c);
        check_error(&e, n);
        if (c == WK_ERR_MOQT_TRUNCATED) CHECK(e.offset == n);
        return 0;
    }

    /* accepted */
    same_fields(&d, &rd, true);
    CHECK(dc == WK_OK && type == d.type);
    CHECK(d.payload >= p && d.payload + d.payload_len == p + n);
    if (d.properties_len) CHECK(d.properties >= p && d.properties + d.properties_len <= d.payload);
    size_t head = n - d.payload_len; /* everything before the payload */
    if (!d.padding) {
        uint64_t t = d.type;
        CHECK(wk_moqt_datagram_type_is_valid(t));
        if (t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) CHECK(d.object_id == 0);
        CHECK(d.has_priority == !(t & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY));
        CHECK(d.has_properties == !!(t & WK_MOQT_DATAGRAM_PROPERTIES));
        CHECK(!d.has_properties || d.properties_len > 0);
        CHECK(d.has_status == !!(t & WK_MOQT_DATAGRAM_STATUS));
        if (d.has_status) CHECK(d.payload_len == 0);
        else CHECK(d.status == WK_MOQT_STATUS_NORMAL);
        if (!o.allow_unknown_status) CHECK(wk_moqt_status_is_assigned(d.status));
        if (d.has_properties && !o.properties_length_only)
            CHECK(wk_moqt_properties_validate(d.properties, d.properties_len, 0, NULL, &e2) ==
                  WK_OK);
    } else {
        CHECK(type_len == head);
    }
    /* prefixes */
    for (size_t k = 0; k < head; k++) {
        wk_moqt_datagram d2;
        CHECK(wk_moqt_datagram_decode(p, k, &o, &d2, &e2) == WK_ERR_MOQT_TRUNCATED);
        CHECK(e2.offset == k);
    }
    if (!d.has_status) {
        wk_moqt_datagram d2;
        CHECK(wk_moqt_datagram_decode(p, head, &o, &d2, &e2) == WK_OK);
        CHECK(d2.payload_len == 0 && d2.type == d.type);
    }

    /* re-encode */
    size_t sz = wk_moqt_datagram_size(&d);
    CHECK(sz <= n);
    uint8_t *buf = malloc(sz + 1);
    CHECK(buf != NULL);
    if (sz > 0) {
        memset(buf, 0xA5, sz + 1);
        wk_out small = {buf, sz - 1, 0};
        CHECK(wk_moqt_datagram_encode(&d, &small, &e2) == WK_NEED_OUTPUT);
        CHECK(small.pos == 0);
        for (size_t i = 0; i < sz + 1; i++) CHECK(buf[i] == 0xA5);
    }
    wk_out out = {buf, sz + 1, 0};
    CHECK(wk_moqt_datagram_encode(&d, &out, &e2) == WK_DONE);
    CHECK(out.pos == sz);
    if (sz == n) CHECK(memcmp(buf, p, n) == 0); /* minimal input re-encodes to itself */
    wk_moqt_datagram d3;
    CHECK(wk_moqt_datagram_decode(buf, sz, &o, &d3, &e2) == WK_OK);
    same_fields(&d, &d3, false);
    /* the checked encoder: same bytes, or a refusal of what the parser was told to allow */
    bool nonzero_pad = false;
    if (d.padding)
        for (size_t i = 0; i < d.payload_len; i++) nonzero_pad |= d.payload[i] != 0;
    bool refusable = (!d.padding && !wk_moqt_status_is_assigned(d.status)) || nonzero_pad;
    uint8_t *buf2 = malloc(sz + 1);
    CHECK(buf2 != NULL);
    wk_out out2 = {buf2, sz + 1, 0};
    wk_result rr = wk_moqt_datagram_encode_checked(&d, &out2, &e2);
    if (refusable) {
        CHECK(rr == WK_ERROR && out2.pos == 0);
    } else {
        CHECK(rr == WK_DONE && out2.pos == sz && memcmp(buf, buf2, sz) == 0);
    }
    if (d.padding && !nonzero_pad) {
        wk_out out3 = {buf2, sz + 1, 0};
        CHECK(wk_moqt_padding_encode(true, d.payload_len, &out3, &e2) == WK_DONE);
        CHECK(out3.pos == sz && memcmp(buf, buf2, sz) == 0);
    }
    free(buf);
    free(buf2);
    return 0;
}
