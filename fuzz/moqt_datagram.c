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
 *   - WK_DONE consumes the whole view, WK_ERROR none of it;
 *   - errors pass moqt_ref.h's checks: PeerProtocol WK_ERR_MOQT_* codes with an offset inside the
 *     input and the matching category from wk_moqt_error_category;
 *   - wk_moqt_type_peek(datagram) and wk_moqt_datagram_type_check agree with the parser on the
 *     type and on Type Flags errors;
 * and on an accepted datagram:
 *   - the fields follow the Type Flags (Object ID 0 with ZERO_OBJECT_ID, priority, properties and
 *     status present exactly by their bits, END_OF_GROUP); properties and payload are borrowed
 *     slices of the input, the payload runs to the input's end (empty with STATUS);
 *   - every prefix ending before the payload is MOQT_ERR_TRUNCATED at offset = its length, the
 *     prefix ending where the payload starts decodes with an empty payload;
 *   - wk_moqt_datagram_size / _encode, through wk_contract_encoder_check: exactly that many bytes,
 *     and WK_NEED_OUTPUT with the view untouched in shorter views; the encoding decodes to the
 *     same fields; it is never longer than the input, and when as long (the input was minimal) it
 *     is the input; _encode_checked writes the same bytes, or refuses exactly what the parser was
 *     told to allow (an unassigned status, non-zero padding) in every view. */
#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moqt_ref.h"
#include "wk_contract_moqt.h"

/* ---------------------------------------------------------------------------------------------
 * Reference parser (the integer and pairs from moqt_ref.h)
 * ------------------------------------------------------------------------------------------- */
static wk_code ref_type_check(uint64_t t)
{
    if (t & ~(uint64_t)0x3F) return WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT;
    if (t & 0x10) return WK_ERR_MOQT_DATAGRAM_RESERVED_BIT;
    if ((t & 0x22) == 0x22) return WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP;
    return WK_OK;
}

static bool ref_decode(mr_ref *x, const wk_moqt_read_options *o, wk_moqt_datagram *d)
{
    memset(d, 0, sizeof *d);
    if (!mr_int(x, &d->type)) return false;
    if (d->type == WK_MOQT_DATAGRAM_TYPE_PADDING) {
        d->padding = true;
        d->payload = x->w + x->pos;
        d->payload_len = x->n - x->pos;
        if (o->strict_padding)
            for (size_t i = x->pos; i < x->n; i++)
                if (x->w[i]) return mr_fail(x, WK_ERR_MOQT_PADDING_NONZERO, i);
        return true;
    }
    wk_code c = ref_type_check(d->type);
    if (c != WK_OK) return mr_fail(x, c, 0);
    uint64_t t = d->type;
    if (!mr_int(x, &d->track_alias) || !mr_int(x, &d->group_id)) return false;
    if (!(t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) && !mr_int(x, &d->object_id)) return false;
    d->has_priority = !(t & WK_MOQT_DATAGRAM_DEFAULT_PRIORITY);
    if (d->has_priority && !mr_byte(x, &d->publisher_priority)) return false;
    d->has_properties = t & WK_MOQT_DATAGRAM_PROPERTIES;
    if (d->has_properties) {
        uint64_t at = x->pos, len;
        if (!mr_int(x, &len)) return false;
        if (len == 0) return mr_fail(x, WK_ERR_MOQT_EMPTY_PROPERTIES, at);
        if (x->n - x->pos < len) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
        d->properties = x->w + x->pos;
        d->properties_len = (size_t)len;
        x->pos += (size_t)len;
    }
    d->has_status = t & WK_MOQT_DATAGRAM_STATUS;
    d->status = WK_MOQT_STATUS_NORMAL;
    if (d->has_status) {
        uint64_t at = x->pos;
        if (!mr_int(x, &d->status)) return false;
        if (!o->allow_unknown_status && !wk_moqt_status_is_assigned(d->status))
            return mr_fail(x, WK_ERR_MOQT_UNKNOWN_STATUS, at);
        if (d->has_properties && d->status != WK_MOQT_STATUS_NORMAL)
            return mr_fail(x, WK_ERR_MOQT_STATUS_PROPERTIES, at);
        if (x->pos < x->n) return mr_fail(x, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, x->pos);
        d->payload = x->w + x->pos;
        d->payload_len = 0;
    } else {
        d->payload = x->w + x->pos;
        d->payload_len = x->n - x->pos;
    }
    /* the pairs are validated last (datagram.c's order, as the stream reader does) */
    if (d->has_properties && !o->properties_length_only &&
        !mr_pairs(x, d->properties, d->properties_len,
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

/* The encoder call passes wk_contract_encoder_check (refused with `refuse`, or size bytes). */
static void encoder_ok(wk_contract_moqt_call *k, wk_code refuse, size_t size,
                       const uint8_t *expect, uint8_t **bytes, size_t *len)
{
    char why[320];
    if (!wk_contract_moqt_call_check(k, refuse, size, expect, bytes, len, why, sizeof why)) {
        fprintf(stderr, "datagram encoder: %s\n", why);
        CHECK(0);
    }
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
    wk_in in = {p, n, 0};
    wk_result res = wk_moqt_datagram_decode(&d, &in, &o, &e);
    CHECK(res == WK_DONE || res == WK_ERROR);
    CHECK(res == WK_DONE ? in.pos == n : in.pos == 0);
    wk_code c = res == WK_DONE ? WK_OK : e.code;
    mr_ref x = {p, n, 0, WK_OK, 0};
    bool rok = ref_decode(&x, &o, &rd);
    if ((c == WK_OK) != rok || (!rok && (c != x.code || e.offset != x.offset))) {
        fprintf(stderr, "reference: %s at %llu; parser: %s at %llu\n", wk_error_name(x.code),
                (unsigned long long)x.offset, wk_error_name(c), (unsigned long long)e.offset);
        CHECK(0);
    }

    /* the type peek and the type check agree */
    wk_moqt_stream_kind kind;
    uint64_t type = 0;
    size_t type_len = 0;
    wk_error e2;
    wk_in whole = {p, n, 0};
    wk_code dc = wk_moqt_type_peek(&whole, true, &kind, &type, &type_len, &e2);
    CHECK(whole.pos == 0);
    if (c != WK_OK && mr_type_error(c)) {
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
        mr_check_error(&e, n);
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
            CHECK(wk_moqt_properties_validate(&(wk_in){d.properties, d.properties_len, 0}, 0, NULL,
                                              &e2) == WK_OK);
    } else {
        CHECK(type_len == head);
    }
    /* prefixes */
    for (size_t k = 0; k < head; k++) {
        wk_moqt_datagram d2;
        wk_in pre = {p, k, 0};
        CHECK(wk_moqt_datagram_decode(&d2, &pre, &o, &e2) == WK_ERROR && pre.pos == 0);
        CHECK(e2.code == WK_ERR_MOQT_TRUNCATED && e2.offset == k);
    }
    if (!d.has_status) {
        wk_moqt_datagram d2;
        wk_in pre = {p, head, 0};
        CHECK(wk_moqt_datagram_decode(&d2, &pre, &o, &e2) == WK_DONE && pre.pos == head);
        CHECK(d2.payload_len == 0 && d2.type == d.type);
    }

    /* re-encode: NEED_OUTPUT with the view untouched in every shorter view, the size exactly */
    size_t sz = wk_moqt_datagram_size(&d);
    CHECK(sz <= n);
    wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_DATAGRAM, .dg = &d};
    uint8_t *buf = NULL;
    size_t len = 0;
    encoder_ok(&k, WK_OK, sz, NULL, &buf, &len);
    if (sz == n) CHECK(memcmp(buf, p, n) == 0); /* minimal input re-encodes to itself */
    wk_moqt_datagram d3;
    CHECK(wk_moqt_datagram_decode(&d3, &(wk_in){buf, sz, 0}, &o, &e2) == WK_DONE);
    same_fields(&d, &d3, false);
    /* the checked encoder: the same bytes, or a refusal (in every view) of what the parser was
     * told to allow */
    bool nonzero_pad = false;
    if (d.padding)
        for (size_t i = 0; i < d.payload_len; i++) nonzero_pad |= d.payload[i] != 0;
    k.op = WK_CONTRACT_MOQT_DATAGRAM_CHECKED;
    wk_code refuse = WK_OK;
    if (nonzero_pad) refuse = WK_ERR_ARG;
    else if (!d.padding && !wk_moqt_status_is_assigned(d.status))
        refuse = WK_ERR_MOQT_UNKNOWN_STATUS;
    encoder_ok(&k, refuse, sz, buf, NULL, NULL);
    if (d.padding && !nonzero_pad) {
        wk_contract_moqt_call pad = {.op = WK_CONTRACT_MOQT_PADDING, .datagram = true,
                                     .a = d.payload_len};
        CHECK(wk_moqt_padding_size(true, d.payload_len) == sz);
        encoder_ok(&pad, WK_OK, sz, buf, NULL, NULL);
    }
    free(buf);
    return 0;
}
