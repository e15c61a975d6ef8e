/* What the MoQT fuzz targets share (moqt_datagram.c, moqt_fuzz.h for the two stream targets):
 * the pieces of a reference parser written here from spec 1 and 6, independent of src/moqt (a
 * whole-buffer cursor, the MoQT integer, a Properties block's pairs), and the checks every MoQT
 * error must pass. Everything is static. */
#ifndef WK_FUZZ_MOQT_REF_H
#define WK_FUZZ_MOQT_REF_H

#include <wirekit/moqt.h>
#include <string.h>

#include "fuzz_check.h"

/* A reference parse of w[0..n): the position, and the first error (code and offset). */
typedef struct mr_ref {
    const uint8_t *w;
    size_t n, pos;
    wk_code code;
    uint64_t offset;
} mr_ref;

static bool mr_fail(mr_ref *x, wk_code c, uint64_t off)
{
    x->code = c;
    x->offset = off;
    return false;
}

/* The MoQT integer: leading ones give the length; any length form accepted. */
static bool mr_int(mr_ref *x, uint64_t *v)
{
    if (x->pos >= x->n) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint8_t b = x->w[x->pos];
    unsigned ones = 0;
    while (ones < 8 && (b & (0x80u >> ones))) ones++;
    size_t len = ones + 1;
    if (x->n - x->pos < len) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    uint64_t val = ones == 8 ? 0 : (uint64_t)(b & (0xFFu >> (ones + 1)));
    for (size_t i = 1; i < len; i++) val = val << 8 | x->w[x->pos + i];
    x->pos += len;
    *v = val;
    return true;
}

static bool mr_byte(mr_ref *x, uint8_t *v)
{
    if (x->pos >= x->n) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    *v = x->w[x->pos++];
    return true;
}

/* The pairs p[0..len) at offset base (errors go to *x): even type one integer, odd type a length
 * <= 65535 and that many bytes; types accumulate; everything inside the block. */
static bool mr_pairs(mr_ref *x, const uint8_t *p, size_t len, uint64_t base)
{
    mr_ref b = {p, len, 0, WK_OK, 0};
    uint64_t type = 0;
    while (b.pos < len) {
        uint64_t start = b.pos, d, v;
        if (!mr_int(&b, &d)) return mr_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (d > UINT64_MAX - type)
            return mr_fail(x, WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, base + start);
        type += d;
        if (!mr_int(&b, &v)) return mr_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
        if (type & 1) {
            if (v > WK_MOQT_PROP_VALUE_MAX_LEN)
                return mr_fail(x, WK_ERR_MOQT_PROPERTY_LENGTH, base + start);
            if (len - b.pos < v) return mr_fail(x, WK_ERR_MOQT_PROPERTY_OVERRUN, base + start);
            b.pos += (size_t)v;
        }
    }
    return true;
}

static bool mr_type_error(wk_code c)
{
    return c == WK_ERR_MOQT_UNKNOWN_STREAM_TYPE || c == WK_ERR_MOQT_WRONG_STREAM_TYPE ||
           c == WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED || c == WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR ||
           c == WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE ||
           c == WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP ||
           c == WK_ERR_MOQT_DATAGRAM_RESERVED_BIT || c == WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT;
}

/* Every MoQT error of an input of n bytes: a PeerProtocol WK_ERR_MOQT_* code from the code table,
 * an offset inside the input, the vectors' category that matches the code. */
static void mr_check_error(const wk_error *e, size_t n)
{
    CHECK(e->code >= 500 && e->code < 700);
    CHECK(e->category == WK_CAT_PEER_PROTOCOL && wk_code_category(e->code) == e->category);
    CHECK(e->has_offset && e->offset <= n);
    const char *cat = wk_moqt_error_category(e->code);
    CHECK(strcmp(cat, "ok") != 0 && strcmp(cat, "error") != 0);
    CHECK((strcmp(cat, "incomplete") == 0) == (e->code == WK_ERR_MOQT_TRUNCATED));
    CHECK(wk_code_is_truncation(e->code) == (e->code == WK_ERR_MOQT_TRUNCATED));
    CHECK((strcmp(cat, "invalid_type") == 0) == mr_type_error(e->code));
    CHECK((strcmp(cat, "payload_not_permitted") == 0) ==
          (e->code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED));
}

#endif
