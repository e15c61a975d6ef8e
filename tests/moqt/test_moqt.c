/* MoQT draft-20 unit tests: the MoQT integer; Type Flags validity computed vs the enumerations;
 * dispatch; every WK_ERR_MOQT_* code produced with its offset; reader options; writer refusals
 * and NEED_OUTPUT with the buffer untouched; random round trips through writers and the reader at
 * random splits; a 1 MiB payload consumed in pieces without a copy; and zero allocations per
 * object (malloc/calloc/realloc are wrapped at link time and counted). */
#include "wk_test.h"
#include "wk_contract_moqt.h"
#include <wirekit/moqt.h>
#include <inttypes.h>
#include <pthread.h>

/* ---------------------------------------------------------------------------------------------
 * Allocation counting (link with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc): the probe
 * counts the calling thread's allocations between wk_alloc_probe_begin and _end
 * ------------------------------------------------------------------------------------------- */
#include "wk_alloc_wrap.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return wk_test_xorshift(&rng); }

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
    long k = wk_hex_decode(h, strlen(h), out, cap);
    if (k < 0) abort();
    return (size_t)k;
}

/* ---------------------------------------------------------------------------------------------
 * Integer
 * ------------------------------------------------------------------------------------------- */
static void test_int(void)
{
    /* length from the first byte, for all 256 */
    for (unsigned b = 0; b < 256; b++) {
        unsigned ones = 0;
        while (ones < 8 && (b & (0x80u >> ones))) ones++;
        CHECK(wk_moqt_int_size((uint8_t)b) == ones + 1);
    }
    uint64_t vals[200];
    size_t nv = 0;
    for (unsigned w = 1; w <= 9; w++) {
        uint64_t lim = w == 9 ? UINT64_MAX : ((uint64_t)1 << (7 * w)) - 1;
        vals[nv++] = lim;
        if (lim) vals[nv++] = lim - 1;
        if (w < 9) vals[nv++] = lim + 1;
    }
    vals[nv++] = 0;
    vals[nv++] = 37;
    while (nv < 200) vals[nv++] = rnd() >> (rnd() % 64);
    for (size_t i = 0; i < nv; i++) {
        uint64_t v = vals[i];
        uint8_t b[WK_MOQT_INT_MAX_LEN + 1];
        unsigned len = wk_moqt_int_put(b, v);
        unsigned want = 1;
        while (want < 9 && v >= ((uint64_t)1 << (7 * want))) want++;
        CHECKF(len == want && wk_moqt_int_len(v) == want, "len of %" PRIu64, v);
        CHECK(wk_moqt_int_size(b[0]) == len);
        wk_cursor c = wk_cursor_make(b, len);
        uint64_t got = 0;
        CHECK(wk_cursor_moqt_int(&c, &got) && got == v && wk_cursor_left(&c) == 0);
        /* every short read consumes nothing and reports the needed length */
        for (unsigned k = 0; k < len; k++) {
            wk_cursor s = wk_cursor_make(b, k);
            unsigned need = 99;
            CHECK(!wk_cursor_moqt_int_n(&s, &got, &need) && wk_cursor_offset(&s) == 0);
            CHECK(need == (k == 0 ? 0 : len));
        }
        /* every longer form decodes to the same value */
        for (unsigned w = len + 1; w <= 9; w++) {
            uint8_t nb[9];
            if (w == 9) {
                nb[0] = 0xFF;
                wk_put_be(nb + 1, v, 8);
            } else {
                wk_put_be(nb, v, w);
                nb[0] |= (uint8_t)(0xFFu << (9 - w));
            }
            wk_cursor n2 = wk_cursor_make(nb, w);
            CHECKF(wk_cursor_moqt_int(&n2, &got) && got == v && wk_cursor_left(&n2) == 0,
                   "%" PRIu64 " in %u bytes", v, w);
        }
    }
    /* spec examples */
    static const struct { const char *hex; uint64_t v; } ex[] = {
        {"25", 37}, {"8025", 37}, {"bbbd", 15293}, {"8080", 128}, {"c04000", 16384},
        {"ffffffffffffffffff", UINT64_MAX}, {"f0132b3e28", 0x132B3E28}, {"af00", 0x2F00}};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        uint8_t b[9];
        size_t n = unhex(ex[i].hex, b, sizeof b);
        wk_cursor c = wk_cursor_make(b, n);
        uint64_t got;
        CHECK(wk_cursor_moqt_int(&c, &got) && got == ex[i].v);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Type Flags and dispatch
 * ------------------------------------------------------------------------------------------- */
static bool in_list(const unsigned *l, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == v) return true;
    return false;
}

static void test_types(void)
{
    /* The draft-19 enumerations, which draft-20's computed rules must reproduce. */
    static const unsigned sg_ranges[][2] = {{0x10, 0x15}, {0x18, 0x1D}, {0x30, 0x35}, {0x38, 0x3D},
                                            {0x50, 0x55}, {0x58, 0x5D}, {0x70, 0x75}, {0x78, 0x7D}};
    unsigned sg[48], n = 0;
    for (size_t i = 0; i < 8; i++)
        for (unsigned v = sg_ranges[i][0]; v <= sg_ranges[i][1]; v++) sg[n++] = v;
    REQUIRE(n == 48);
    static const unsigned dg[24] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                    0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
                                    0x20, 0x21, 0x24, 0x25, 0x28, 0x29, 0x2C, 0x2D};
    for (uint64_t t = 0; t < 1024; t++) {
        CHECKF(wk_moqt_subgroup_type_is_valid(t) == in_list(sg, 48, t), "subgroup 0x%" PRIx64, t);
        CHECKF(wk_moqt_datagram_type_is_valid(t) == in_list(dg, 24, t), "datagram 0x%" PRIx64, t);
    }
    CHECK(!wk_moqt_subgroup_type_is_valid(UINT64_MAX));
    CHECK(!wk_moqt_datagram_type_is_valid(UINT64_MAX));
    wk_error e;
    CHECK(wk_moqt_subgroup_type_check(0x16, 7, &e) == WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED &&
          e.offset == 7);
    CHECK(wk_moqt_subgroup_type_check(0x20, 0, &e) == WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR);
    CHECK(wk_moqt_subgroup_type_check(0x90, 0, &e) == WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE);
    CHECK(wk_moqt_subgroup_type_check(0x96, 0, &e) == WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE);
    CHECK(wk_moqt_datagram_type_check(0x22, 0, &e) == WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP);
    CHECK(wk_moqt_datagram_type_check(0x10, 0, &e) == WK_ERR_MOQT_DATAGRAM_RESERVED_BIT);
    CHECK(wk_moqt_datagram_type_check(0x32, 0, &e) == WK_ERR_MOQT_DATAGRAM_RESERVED_BIT);
    CHECK(wk_moqt_datagram_type_check(0x40, 0, &e) == WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT);
    CHECK(wk_moqt_datagram_type_check(0x80, 0, &e) == WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT);
    /* make() round-trips every combination of the bits */
    for (unsigned m = 0; m < 64; m++) {
        uint64_t t = wk_moqt_subgroup_type_make(m & 1, (wk_moqt_subgroup_id_mode)((m >> 1) & 3),
                                                m & 8, m & 16, m & 32);
        CHECK(t == (0x10u | (m & 0x0F) | ((m & 0x30) << 1)));
        CHECK(wk_moqt_subgroup_type_is_valid(t) == (((m >> 1) & 3) != 3));
        CHECK(wk_moqt_subgroup_type_id_mode(t) == ((m >> 1) & 3));
    }
    for (unsigned m = 0; m < 32; m++) {
        uint64_t t = wk_moqt_datagram_type_make(m & 1, m & 2, m & 4, m & 8, m & 16);
        CHECK(t == ((m & 0x0F) | ((m & 16) << 1)));
        CHECK(wk_moqt_datagram_type_is_valid(t) == !((m & 16) && (m & 2)));
    }

    /* dispatch */
    wk_moqt_stream_kind k;
    CHECK(wk_moqt_stream_type_classify(0x05, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_FETCH);
    CHECK(wk_moqt_stream_type_classify(0x2F00, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_SETUP);
    CHECK(wk_moqt_stream_type_classify(0x132B3E28, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_PADDING);
    CHECK(wk_moqt_stream_type_classify(0x7D, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_SUBGROUP);
    CHECK(wk_moqt_stream_type_classify(0x1E, 3, &k, &e) == WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED &&
          e.offset == 3);
    static const uint64_t unknown[] = {0x00, 0x04, 0x06, 0x20, 0x80, 0x90, 0x132B3E29, UINT64_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        CHECK(wk_moqt_stream_type_classify(unknown[i], 0, &k, &e) == WK_ERR_MOQT_UNKNOWN_STREAM_TYPE &&
              !strcmp(wk_moqt_error_category(e.code), "invalid_type"));
    CHECK(wk_moqt_datagram_type_classify(0x132B3E29, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_PADDING);
    CHECK(wk_moqt_datagram_type_classify(0x2D, 0, &k, &e) == WK_OK && k == WK_MOQT_KIND_DATAGRAM);
    CHECK(wk_moqt_datagram_type_classify(0x132B3E28, 0, &k, &e) ==
          WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT);
    uint8_t b[8];
    uint64_t t;
    size_t tl;
    size_t n5 = unhex("f0132b3e29", b, sizeof b);
    CHECK(wk_moqt_type_peek(&(wk_in){b, n5, 0}, true, &k, &t, &tl, &e) == WK_OK &&
          k == WK_MOQT_KIND_PADDING &&
          t == 0x132B3E29 && tl == 5);
    CHECK(wk_moqt_type_peek(&(wk_in){b, n5, 0}, false, &k, &t, &tl, &e) ==
          WK_ERR_MOQT_UNKNOWN_STREAM_TYPE);
    CHECK(wk_moqt_type_peek(&(wk_in){b, 4, 0}, true, &k, &t, &tl, &e) == WK_ERR_MOQT_TRUNCATED &&
          e.offset == 4);
    CHECK(wk_moqt_type_peek(&(wk_in){b, 0, 0}, false, &k, &t, &tl, &e) == WK_ERR_MOQT_TRUNCATED &&
          e.offset == 0);
    /* offsets count from in->pos; the view is not consumed */
    uint8_t b2[8] = {0xAA, 0xBB};
    memcpy(b2 + 2, b, 4);
    wk_in part = {b2, 6, 2};
    CHECK(wk_moqt_type_peek(&part, true, &k, &t, &tl, &e) == WK_ERR_MOQT_TRUNCATED &&
          e.offset == 4 && part.pos == 2);

    /* status registry */
    CHECK(wk_moqt_status_permits_payload(0) && !wk_moqt_status_permits_payload(3) &&
          !wk_moqt_status_permits_payload(4) && !wk_moqt_status_permits_payload(1));
    CHECK(wk_moqt_status_is_assigned(0) && !wk_moqt_status_is_assigned(1) &&
          !wk_moqt_status_is_assigned(2) && wk_moqt_status_is_assigned(3) &&
          wk_moqt_status_is_assigned(4) && !wk_moqt_status_is_assigned(5));
    CHECK(!strcmp(wk_moqt_status_name(3), "end_of_group") && wk_moqt_status_name(2) == NULL);
}

/* ---------------------------------------------------------------------------------------------
 * Every error code with its offset
 * ------------------------------------------------------------------------------------------- */
typedef enum { K_ANY, K_SUBGROUP, K_FETCH, K_DATAGRAM, K_SG_HEADER, K_F_HEADER } kind;

/* The code of a whole-message decoder's result; on WK_DONE in consumed (wholly for a datagram:
 * `all`), on WK_ERROR untouched. */
static wk_code whole_code(wk_result r, const wk_in *in, bool all, const wk_error *e)
{
    CHECK(r == WK_DONE || r == WK_ERROR);
    if (r == WK_ERROR) CHECK(in->pos == 0);
    else CHECK(all ? in->pos == in->size : in->pos > 0);
    return r == WK_DONE ? WK_OK : e->code;
}

/* Runs hex through the given decoder; returns the code. Streams go through the contract
 * harness's battery (whole, byte by byte, every split and chunk size, with the moqt adapter's
 * checks), every run giving the same verdict, error and offset. */
static wk_code run(kind kd, const char *hex, const wk_moqt_read_options *opt, wk_error *e)
{
    static uint8_t buf[4096];
    size_t n = unhex(hex, buf, sizeof buf);
    wk_error_clear(e);
    wk_in in = {buf, n, 0};
    if (kd == K_DATAGRAM) {
        wk_moqt_datagram d;
        return whole_code(wk_moqt_datagram_decode(&d, &in, opt, e), &in, true, e);
    }
    if (kd == K_SG_HEADER) {
        wk_moqt_subgroup_header h;
        return whole_code(wk_moqt_subgroup_header_decode(&h, &in, e), &in, false, e);
    }
    if (kd == K_F_HEADER) {
        wk_moqt_fetch_header h;
        return whole_code(wk_moqt_fetch_header_decode(&h, &in, e), &in, false, e);
    }
    wk_contract_moqt m;
    wk_contract_moqt_setup(&m, kd == K_ANY     ? WK_MOQT_CARRIER_ANY
                               : kd == K_FETCH ? WK_MOQT_CARRIER_FETCH
                                               : WK_MOQT_CARRIER_SUBGROUP,
                           opt);
    wk_contract_outcome oc;
    char why[320];
    CHECKF(wk_contract_check(&wk_contract_moqt_ops, &m, NULL, buf, n, WK_CONTRACT_ALL, &oc, why,
                             sizeof why),
           "%s: %s", hex, why);
    if (oc.verdict == WK_DONE) return WK_OK;
    *e = oc.error;
    return e->code;
}

static void test_every_error(void)
{
    static const wk_moqt_read_options dflt;
    wk_moqt_read_options strict_pad = dflt, desc = dflt, absolute = dflt;
    strict_pad.strict_padding = true;
    desc.group_order = WK_MOQT_GROUP_ORDER_DESCENDING;
    absolute.end_of_range = WK_MOQT_END_OF_RANGE_ABSOLUTE;
    static const struct row {
        int spec9;          /* row of the spec's section 9 checklist (0: ours) */
        kind k;
        const char *hex;
        int opt;            /* 0 default, 1 strict padding, 2 descending, 3 absolute */
        wk_code code;
        uint64_t offset;
    } rows[] = {
        {1, K_SUBGROUP, "100100", 0, WK_ERR_MOQT_TRUNCATED, 3},
        {1, K_SUBGROUP, "10010080000004dead", 0, WK_ERR_MOQT_TRUNCATED, 9},
        {1, K_DATAGRAM, "0101020380023c", 0, WK_ERR_MOQT_TRUNCATED, 7},
        {1, K_FETCH, "05041c000080", 0, WK_ERR_MOQT_TRUNCATED, 6},
        {1, K_SG_HEADER, "14010203", 0, WK_ERR_MOQT_TRUNCATED, 4},
        {1, K_F_HEADER, "05", 0, WK_ERR_MOQT_TRUNCATED, 1},
        {2, K_ANY, "0001", 0, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, 0},
        {2, K_ANY, "4000", 0, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, 0},
        {2, K_ANY, "f0132b3e29", 0, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, 0},
        {2, K_ANY, "af00", 0, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0},
        {2, K_DATAGRAM, "f0132b3e28", 0, WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT, 0},
        {3, K_SUBGROUP, "1e0100", 0, WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED, 0},
        {3, K_ANY, "7f0100", 0, WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED, 0},
        {3, K_SUBGROUP, "0f0100", 0, WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR, 0},
        {3, K_SUBGROUP, "80900100", 0, WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE, 0},
        {3, K_SG_HEADER, "16010080", 0, WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED, 0},
        {4, K_DATAGRAM, "2e0102", 0, WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP, 0},
        {4, K_DATAGRAM, "1c0102", 0, WK_ERR_MOQT_DATAGRAM_RESERVED_BIT, 0},
        {4, K_DATAGRAM, "480102", 0, WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT, 0},
        {5, K_DATAGRAM, "010100008000cafe", 0, WK_ERR_MOQT_EMPTY_PROPERTIES, 5},
        {6, K_DATAGRAM, "2101000580023c0203", 0, WK_ERR_MOQT_STATUS_PROPERTIES, 8},
        {7, K_DATAGRAM, "200100058003deadbeef", 0, WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, 6},
        {8, K_SUBGROUP, "10010080ffffffffffffffffff01aa0001bb", 0, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, 15},
        {8, K_FETCH, "05041cffffffffffffffffff0080" "01aa" "0800" "01bb", 0,
         WK_ERR_MOQT_GROUP_ID_OVERFLOW, 17},
        {8, K_FETCH, "05041c000080" "01aa" "0800" "01bb", 2, WK_ERR_MOQT_GROUP_ID_OVERFLOW, 9},
        {8, K_FETCH, "05041f00ffffffffffffffffff0080" "01aa" "02" "01bb", 0,
         WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW, 17},
        {9, K_FETCH, "0504808d050a00", 0, WK_ERR_MOQT_SERIALIZATION_FLAGS, 2},
        {10, K_FETCH, "0504140080" "01aa", 0, WK_ERR_MOQT_FIRST_RECORD, 2},
        {10, K_FETCH, "05041e000080" "01aa", 0, WK_ERR_MOQT_FIRST_RECORD, 2},
        {10, K_FETCH, "05040c0000" "01aa", 0, WK_ERR_MOQT_FIRST_RECORD, 2},
        {11, K_FETCH, "0504808c050a00" "00" "01aa", 0, WK_ERR_MOQT_NO_PRIOR_OBJECT, 7},
        {11, K_FETCH, "05045c000080" "01aa" "02" "01bb", 0, WK_ERR_MOQT_PRIOR_NO_SUBGROUP, 8},
        {12, K_SUBGROUP, "10010080000002", 0, WK_ERR_MOQT_UNKNOWN_STATUS, 6},
        {12, K_DATAGRAM, "200100058005", 0, WK_ERR_MOQT_UNKNOWN_STATUS, 5},
        {13, K_SUBGROUP, "1101008000040b" "c10000" "01aa", 0, WK_ERR_MOQT_PROPERTY_LENGTH, 6},
        {13, K_SUBGROUP, "110100800003" "7f0500" "01aa", 0, WK_ERR_MOQT_PROPERTY_OVERRUN, 6},
        {13, K_FETCH, "05043c000080" "0c" "fffffffffffffffffe00" "0200" "01aa", 0,
         WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, 17},
        {14, K_FETCH, "10010080", 0, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0},
        {14, K_F_HEADER, "10010080", 0, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0},
        {14, K_SUBGROUP, "0504", 0, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0},
        {14, K_SG_HEADER, "f0132b3e28", 0, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0},
        {15, K_SUBGROUP, "10010080" "000003" "0001aa", 0, WK_ERR_MOQT_OBJECT_AFTER_END, 7},
        {0, K_FETCH, "0504808c050a01aa", 0, WK_ERR_MOQT_END_OF_RANGE_LENGTH, 6},
        {0, K_SUBGROUP, "f0132b3e280000000001", 1, WK_ERR_MOQT_PADDING_NONZERO, 9},
        {0, K_DATAGRAM, "f0132b3e290100", 1, WK_ERR_MOQT_PADDING_NONZERO, 5},
        {0, K_SUBGROUP, "11010080" "00" "8401" /* 1025 > the built-in 1024 */, 0,
         WK_ERR_MOQT_PROPERTIES_TOO_LARGE, 5},
        {0, K_FETCH, "0504808c05", 3, WK_ERR_MOQT_TRUNCATED, 5},
    };
    const wk_moqt_read_options *opts[] = {&dflt, &strict_pad, &desc, &absolute};
    bool seen[200] = {false};
    bool rows9[16] = {false};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        wk_error e;
        wk_code c = run(rows[i].k, rows[i].hex, opts[rows[i].opt], &e);
        CHECKF(c == rows[i].code && e.code == c, "row %zu (%s): got %s (%s), want %s", i,
               rows[i].hex, wk_error_name(c), e.msg, wk_error_name(rows[i].code));
        CHECKF(e.has_offset && e.offset == rows[i].offset, "row %zu (%s): offset %" PRIu64
               ", want %" PRIu64, i, rows[i].hex, e.offset, rows[i].offset);
        if (c >= 500 && c < 700) seen[c - 500] = true;
        rows9[rows[i].spec9] = true;
    }
    {
        /* the fetch Object ID overflow with a delta */
        wk_error e;
        CHECK(run(K_FETCH, "05041c00ffffffffffffffffff8001aa040101bb", &dflt, &e) ==
                  WK_ERR_MOQT_OBJECT_ID_OVERFLOW && e.offset == 17);
    }
    for (unsigned i = 1; i <= 15; i++) CHECKF(rows9[i], "spec section 9 row %u not exercised", i);
    /* every moqt code: produced above, named, categorized, truncation only for TRUNCATED */
    for (int c = 500; c < 700; c++) {
        const char *name = wk_error_name((wk_code)c);
        if (!strcmp(name, "WK_ERR_UNKNOWN")) continue;
        CHECKF(!strncmp(name, "MOQT_ERR_", 9), "%d: %s", c, name);
        CHECKF(seen[c - 500], "code %s never produced", name);
        CHECK(strcmp(wk_moqt_error_category((wk_code)c), "error") != 0);
        CHECK(wk_code_category((wk_code)c) == WK_CAT_PEER_PROTOCOL);
        CHECK(wk_code_is_truncation((wk_code)c) == (c == WK_ERR_MOQT_TRUNCATED));
    }
    CHECK(!strcmp(wk_moqt_error_category(WK_ERR_MOQT_TRUNCATED), "incomplete"));
    CHECK(!strcmp(wk_moqt_error_category(WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED), "payload_not_permitted"));
    CHECK(!strcmp(wk_moqt_error_category(WK_ERR_MOQT_DATAGRAM_RESERVED_BIT), "invalid_type"));
    CHECK(!strcmp(wk_moqt_error_category(WK_ERR_MOQT_FIRST_RECORD), "invalid_value"));
    CHECK(!strcmp(wk_moqt_error_category(WK_OK), "ok"));
    CHECK(!strcmp(wk_moqt_error_category(WK_ERR_ARG), "error"));
}

/* ---------------------------------------------------------------------------------------------
 * Reader options and contract
 * ------------------------------------------------------------------------------------------- */
/* An adapter hook: the object carries the pairs in *m->user and has ID 4. */
static bool props_match(wk_contract *c, wk_contract_moqt *m)
{
    const wk_in *want = m->user;
    if (m->r.event != WK_MOQT_EVENT_OBJECT) return true;
    const wk_moqt_subgroup_object *o = &m->r.object;
    if (o->properties_len != want->size || memcmp(o->properties, want->src, want->size) != 0 ||
        o->object_id != 4)
        return wk_contract_fail(c, "the object's properties or ID differ");
    return true;
}

static void test_reader_options(void)
{
    wk_error e;
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    /* lenient options turn the SHOULD/optional checks off */
    o.allow_unknown_status = true;
    CHECK(run(K_SUBGROUP, "10010080000002", &o, &e) == WK_OK);
    CHECK(run(K_DATAGRAM, "200100058005", &o, &e) == WK_OK);
    memset(&o, 0, sizeof o);
    o.allow_objects_after_end = true;
    CHECK(run(K_SUBGROUP, "10010080" "000003" "0001aa", &o, &e) == WK_OK);
    memset(&o, 0, sizeof o);
    o.properties_length_only = true;
    CHECK(run(K_SUBGROUP, "1101008000040b" "c10000" "01aa", &o, &e) == WK_OK);
    CHECK(run(K_DATAGRAM, "0101020380023c80cafe", &o, &e) == WK_OK);
    CHECK(run(K_FETCH, "05043c000080" "023c80" "01aa", &o, &e) == WK_OK);
    /* the length is always checked */
    CHECK(run(K_DATAGRAM, "0101020380053c80", &o, &e) == WK_ERR_MOQT_TRUNCATED);

    /* a caller scratch raises the properties bound; split pushes gather into it */
    static uint8_t stream[4200], scratch[2048];
    wk_out w = {stream, sizeof stream, 0};
    wk_moqt_subgroup_header h = {0x11, 1, 0, 0, true, true, 128};
    wk_moqt_subgroup_writer sw;
    CHECK(wk_moqt_subgroup_writer_begin(&sw, &h, &w, &e) == WK_DONE);
    static uint8_t pairs[1500];
    wk_moqt_property big = {0x0B, 0, (const uint8_t *)"", 0};
    static uint8_t value[1490];
    memset(value, 0x5A, sizeof value);
    big.bytes = value;
    big.len = sizeof value;
    wk_out pw = {pairs, sizeof pairs, 0};
    CHECK(wk_moqt_properties_encode(&big, 1, &pw, &e) == WK_DONE);
    wk_moqt_object_out ob = {4, pairs, pw.pos, 0, (const uint8_t *)"xyz", 3};
    CHECK(wk_moqt_subgroup_writer_write(&sw, &ob, &w, &e) == WK_DONE);
    size_t total = w.pos;
    /* every split point and chunk size (the block gathers into the scratch across pushes; the
     * adapter checks the slice lies in the push or the scratch) */
    for (int with_scratch = 0; with_scratch < 2; with_scratch++) {
        memset(&o, 0, sizeof o);
        if (with_scratch) {
            o.properties_buf = scratch;
            o.properties_cap = sizeof scratch;
        }
        wk_contract_moqt m;
        wk_contract_moqt_setup(&m, WK_MOQT_CARRIER_SUBGROUP, &o);
        m.on_event = props_match;
        m.user = &(wk_in){pairs, pw.pos, 0};
        wk_contract_outcome oc;
        char why[320];
        CHECKF(wk_contract_check(&wk_contract_moqt_ops, &m, NULL, stream, total, WK_CONTRACT_ALL,
                                 &oc, why, sizeof why),
               "scratch %d: %s", with_scratch, why);
        if (with_scratch)
            CHECK(oc.verdict == WK_DONE && m.r.objects == 1);
        else
            CHECKF(oc.verdict == WK_ERROR && oc.error.code == WK_ERR_MOQT_PROPERTIES_TOO_LARGE &&
                       oc.error.offset == 5,
                   "no scratch: %s", wk_error_name(oc.error.code));
    }

    /* the carrier ANY dispatches; each event is WK_EVENT with r.event naming it */
    uint8_t b[64];
    size_t n = unhex("05041c00008004deadbeef", b, sizeof b);
    wk_moqt_stream_reader r;
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_ANY, NULL);
    CHECK(r.event == WK_MOQT_EVENT_NONE);
    wk_in in = {b, n, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_EVENT &&
          r.event == WK_MOQT_EVENT_FETCH_HEADER && r.kind == WK_MOQT_KIND_FETCH);
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_EVENT &&
          r.event == WK_MOQT_EVENT_FETCH_OBJECT && r.piece.last && r.piece.len == 4 &&
          r.piece.data == b + 7);
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_NEED_INPUT &&
          r.event == WK_MOQT_EVENT_NONE);
    CHECK(wk_moqt_stream_reader_at_boundary(&r) && wk_moqt_stream_reader_consumed(&r) == n);
    CHECK(wk_moqt_stream_reader_finish(&r, NULL, &e) == WK_DONE);
    CHECK(wk_moqt_stream_reader_finish(&r, &(wk_in){b, 0, 0}, &e) == WK_DONE); /* repeatable */
    n = unhex("1401020380" "00" "02cafe", b, sizeof b);
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_ANY, NULL);
    in = (wk_in){b, n, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_EVENT &&
          r.event == WK_MOQT_EVENT_SUBGROUP_HEADER && r.subgroup.subgroup_id == 3 &&
          r.subgroup.publisher_priority == 0x80 && in.pos == 5);
    CHECK(wk_moqt_stream_reader_at_boundary(&r));
    /* a non-NULL out is a misuse: refused, nothing consumed, the reader unchanged */
    uint8_t sink[4];
    wk_out out = {sink, sizeof sink, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, &out, &e) == WK_ERROR && e.code == WK_ERR_ARG &&
          in.pos == 5 && out.pos == 0);
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_EVENT &&
          r.event == WK_MOQT_EVENT_OBJECT && r.object.payload_length == 2);
    /* FIN inside the header: truncated at the bytes consumed, sticky */
    n = unhex("1401", b, sizeof b);
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_ANY, NULL);
    in = (wk_in){b, n, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_NEED_INPUT);
    CHECK(wk_moqt_stream_reader_finish(&r, NULL, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_TRUNCATED && e.offset == 2);
    in = (wk_in){b, n, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_TRUNCATED && in.pos == 0);
    /* FIN with bytes left unread: WK_ERR_STATE (read them first), sticky */
    n = unhex("1401020380" "00" "02cafe", b, sizeof b);
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_ANY, NULL);
    in = (wk_in){b, n, 0};
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e) == WK_EVENT);
    CHECK(wk_moqt_stream_reader_finish(&r, &in, &e) == WK_ERROR && e.code == WK_ERR_STATE &&
          e.category == WK_CAT_INTEGRATION && in.pos == 5);
    wk_error e2;
    CHECK(wk_moqt_stream_reader_read(&r, &in, NULL, &e2) == WK_ERROR && e2.code == WK_ERR_STATE &&
          !strcmp(e2.msg, e.msg));
}

/* An adapter hook: every payload piece holds the payload's bytes at its offset (the adapter
 * checks the pieces are slices of their push, contiguous, `last` at the end). */
static bool payload_match(wk_contract *c, wk_contract_moqt *m)
{
    const uint8_t *payload = m->user;
    const wk_moqt_payload_piece *pc = &m->r.piece;
    if (m->r.event == WK_MOQT_EVENT_OBJECT || m->r.event == WK_MOQT_EVENT_PAYLOAD)
        if (pc->len && memcmp(pc->data, payload + pc->offset, pc->len) != 0)
            return wk_contract_fail(c, "payload bytes at %llu differ",
                                    (unsigned long long)pc->offset);
    return true;
}

/* A 1 MiB payload consumed in 4 KiB pushes: every piece is a slice of its push; the reader (and
 * the harness, without copies) allocates nothing. */
static void test_large_payload(void)
{
    size_t plen = 1 << 20;
    uint8_t *s = malloc(plen + 64);
    wk_out w = {s, plen + 64, 0};
    wk_error e;
    wk_moqt_subgroup_header h = {0x30, 9, 1, 0, true, false, 0};
    wk_moqt_subgroup_writer sw;
    REQUIRE(wk_moqt_subgroup_writer_begin(&sw, &h, &w, &e) == WK_DONE);
    uint8_t *payload = malloc(plen);
    for (size_t i = 0; i < plen; i++) payload[i] = (uint8_t)(i * 7 + 3);
    wk_moqt_object_out ob = {0, NULL, 0, 0, payload, plen};
    REQUIRE(wk_moqt_subgroup_writer_write(&sw, &ob, &w, &e) == WK_DONE);
    size_t total = w.pos;
    static wk_contract_moqt m;
    wk_contract_moqt_setup(&m, WK_MOQT_CARRIER_SUBGROUP, NULL);
    m.on_event = payload_match;
    m.user = payload;
    wk_contract_plan plan = {4096, NULL, 0, 0, false, false};
    wk_contract_outcome oc;
    char why[320];
    wk_alloc_probe_begin(0);
    CHECKF(wk_contract_drive(&wk_contract_moqt_ops, &m, NULL, s, total, &plan, &oc, why, sizeof why),
           "%s", why);
    unsigned long allocs = wk_alloc_probe_end();
    ALLOC_CHECK(allocs == 0, "the reader allocated %lu times", allocs);
    CHECK(oc.verdict == WK_DONE && m.r.objects == 1 && oc.events == 1 + (total - 1) / 4096 + 1);
    free(payload);
    free(s);
}

/* ---------------------------------------------------------------------------------------------
 * Writers
 * ------------------------------------------------------------------------------------------- */
/* One read: the event it reported, WK_MOQT_EVENT_NONE for WK_NEED_INPUT, -1 for WK_ERROR. */
static int ev(wk_moqt_stream_reader *r, wk_in *in, wk_error *e)
{
    wk_result res = wk_moqt_stream_reader_read(r, in, NULL, e);
    if (res == WK_ERROR) return -1;
    if (res == WK_NEED_INPUT) return r->event == WK_MOQT_EVENT_NONE ? WK_MOQT_EVENT_NONE : -2;
    return res == WK_EVENT && r->event != WK_MOQT_EVENT_NONE ? (int)r->event : -3;
}

static void test_subgroup_writer(void)
{
    uint8_t buf[256];
    wk_error e;
    wk_moqt_subgroup_writer w;
    /* every invalid type is refused with nothing written */
    for (uint64_t t = 0; t < 300; t++) {
        wk_moqt_subgroup_header h = {t, 1, 2, 3, true, true, 4};
        wk_out o = {buf, sizeof buf, 0};
        wk_result r = wk_moqt_subgroup_writer_begin(&w, &h, &o, &e);
        if (wk_moqt_subgroup_type_is_valid(t)) {
            CHECK(r == WK_DONE && o.pos == wk_moqt_subgroup_header_size(&h));
        } else {
            CHECK(r == WK_ERROR && o.pos == 0 && e.code != WK_OK);
            o.pos = 0;
            CHECK(wk_moqt_subgroup_header_encode_checked(&h, &o, &e) == WK_ERROR && o.pos == 0);
            CHECK(wk_moqt_subgroup_header_encode(&h, &o, &e) == WK_DONE); /* raw: writes anyway */
        }
    }
    /* NEED_OUTPUT leaves the view and the writer untouched, for every short view; the size
     * functions give exactly what is written (the contract harness's encoder check) */
    wk_moqt_subgroup_header h = {0x15, 300, 70000, 9, true, true, 7};
    size_t hs = wk_moqt_subgroup_header_size(&h);
    char why[320];
    uint8_t *bytes;
    size_t len;
    wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_SUBGROUP_BEGIN, .sw = &w, .sh = &h};
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, hs, NULL, &bytes, &len, why, sizeof why), "%s",
           why);
    wk_out o = {buf, sizeof buf, 0};
    memcpy(buf, bytes, len);
    o.pos = len;
    free(bytes);
    uint8_t pairs[8];
    wk_moqt_property gap = {WK_MOQT_PROP_PRIOR_OBJECT_ID_GAP, 2, NULL, 0};
    wk_out pw = {pairs, sizeof pairs, 0};
    REQUIRE(wk_moqt_properties_encode(&gap, 1, &pw, &e) == WK_DONE);
    wk_moqt_object_out ob = {10, pairs, pw.pos, 0, (const uint8_t *)"hello", 5};
    uint64_t need = 0;
    CHECK(wk_moqt_subgroup_writer_size(&w, &ob, &need, &e) == WK_OK && need == 1 + 1 + 2 + 1 + 5);
    wk_moqt_subgroup_writer before_framing = w;
    k.op = WK_CONTRACT_MOQT_SUBGROUP_FRAMING;
    k.obj = &ob;
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, (size_t)need - 5, NULL, NULL, NULL, why,
                                       sizeof why), "%s", why);
    w = before_framing;
    k.op = WK_CONTRACT_MOQT_SUBGROUP_WRITE;
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, (size_t)need, NULL, &bytes, &len, why, sizeof why),
           "%s", why);
    memcpy(buf + o.pos, bytes, len);
    o.pos += len;
    free(bytes);
    /* a refusal comes whatever the room, the writer untouched */
    wk_moqt_object_out dup = ob;
    k.obj = &dup;
    CHECKF(wk_contract_moqt_call_check(&k, WK_ERR_ARG, 0, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    CHECK(wk_moqt_subgroup_writer_size(&w, &dup, &need, &e) == WK_ERR_ARG);
    /* refusals, nothing written */
    size_t at = o.pos;
    wk_moqt_object_out bad = {11, NULL, 0, WK_MOQT_STATUS_END_OF_GROUP, (const uint8_t *)"x", 1};
    CHECK(wk_moqt_subgroup_writer_write(&w, &bad, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED && o.pos == at);
    bad.status = WK_MOQT_STATUS_END_OF_TRACK;
    CHECK(wk_moqt_subgroup_writer_write(&w, &bad, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED);
    bad.status = 2;
    bad.payload_len = 0;
    CHECK(wk_moqt_subgroup_writer_write(&w, &bad, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_UNKNOWN_STATUS);
    wk_moqt_object_out same = {10, NULL, 0, 0, NULL, 0};
    CHECK(wk_moqt_subgroup_writer_write(&w, &same, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    same.object_id = 9;
    CHECK(wk_moqt_subgroup_writer_write(&w, &same, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    CHECK(o.pos == at);
    wk_moqt_object_out eog = {12, NULL, 0, WK_MOQT_STATUS_END_OF_GROUP, NULL, 0};
    CHECK(wk_moqt_subgroup_writer_write(&w, &eog, &o, &e) == WK_DONE);
    wk_moqt_object_out after = {13, NULL, 0, 0, (const uint8_t *)"z", 1};
    CHECK(wk_moqt_subgroup_writer_write(&w, &after, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    /* and it all decodes back */
    wk_moqt_stream_reader r;
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_SUBGROUP, NULL);
    wk_in in = {buf, o.pos, 0};
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_SUBGROUP_HEADER && r.subgroup.group_id == 70000 &&
          r.subgroup.subgroup_id == 9 && r.subgroup.track_alias == 300);
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_OBJECT && r.object.object_id == 10 &&
          r.object.properties_len == pw.pos && r.piece.len == 5 && !memcmp(r.piece.data, "hello", 5));
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_OBJECT && r.object.object_id == 12 &&
          r.object.has_status && r.object.status == 3);
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_NONE);
    CHECK(wk_moqt_stream_reader_finish(&r, NULL, &e) == WK_DONE);

    /* properties only with the PROPERTIES bit; mode 1 first ID = Subgroup ID */
    wk_moqt_subgroup_header h2 = {0x12, 1, 2, 5, true, true, 0};
    o = (wk_out){buf, sizeof buf, 0};
    REQUIRE(wk_moqt_subgroup_writer_begin(&w, &h2, &o, &e) == WK_DONE);
    wk_moqt_object_out p = {5, pairs, pw.pos, 0, NULL, 0};
    CHECK(wk_moqt_subgroup_writer_write(&w, &p, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    wk_moqt_object_out m1 = {6, NULL, 0, 0, NULL, 0};
    CHECK(wk_moqt_subgroup_writer_write(&w, &m1, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    m1.object_id = 5;
    CHECK(wk_moqt_subgroup_writer_write(&w, &m1, &o, &e) == WK_DONE);
    /* _write_framing: the caller sends the payload */
    wk_moqt_object_out hdr_only = {8, NULL, 0, 0, NULL, 3};
    CHECK(wk_moqt_subgroup_writer_write_framing(&w, &hdr_only, &o, &e) == WK_DONE);
    memcpy(buf + o.pos, "abc", 3);
    o.pos += 3;
    wk_moqt_stream_reader_init(&r, WK_MOQT_CARRIER_SUBGROUP, NULL);
    in = (wk_in){buf, o.pos, 0};
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_SUBGROUP_HEADER && !r.subgroup.subgroup_id_known);
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_OBJECT && r.subgroup.subgroup_id == 5 &&
          r.subgroup.subgroup_id_known);
    CHECK(ev(&r, &in, &e) == WK_MOQT_EVENT_OBJECT && r.object.object_id == 8 &&
          r.piece.len == 3 && !memcmp(r.piece.data, "abc", 3));
}

static void test_datagram_encode(void)
{
    uint8_t buf[64];
    wk_error e;
    uint8_t pairs[4];
    wk_moqt_property gap = {WK_MOQT_PROP_PRIOR_GROUP_ID_GAP, 1, NULL, 0};
    wk_out pw = {pairs, sizeof pairs, 0};
    REQUIRE(wk_moqt_properties_encode(&gap, 1, &pw, &e) == WK_DONE);
    for (uint64_t t = 0; t < 0x80; t++) {
        wk_moqt_datagram d;
        memset(&d, 0, sizeof d);
        d.type = t;
        d.track_alias = 1;
        d.group_id = 2;
        d.object_id = (t & WK_MOQT_DATAGRAM_ZERO_OBJECT_ID) ? 0 : 3;
        d.publisher_priority = 9;
        if (t & WK_MOQT_DATAGRAM_PROPERTIES) {
            d.properties = pairs;
            d.properties_len = pw.pos;
        }
        if (t & WK_MOQT_DATAGRAM_STATUS) d.status = (t & 1) ? 0 : 3;
        else {
            d.payload = (const uint8_t *)"pq";
            d.payload_len = 2;
        }
        /* valid types are written in exactly _size bytes (NEED_OUTPUT, view untouched, in every
         * shorter view); invalid ones refused in every view */
        wk_code want = wk_moqt_datagram_type_check(t, 0, &e);
        wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_DATAGRAM_CHECKED, .dg = &d};
        uint8_t *bytes = NULL;
        size_t len = 0;
        char why[320];
        CHECKF(wk_contract_moqt_call_check(&k, want, wk_moqt_datagram_size(&d), NULL, &bytes, &len,
                                           why, sizeof why),
               "type 0x%02" PRIx64 ": %s", t, why);
        if (want != WK_OK) continue;
        wk_moqt_datagram back;
        CHECK(wk_moqt_datagram_decode(&back, &(wk_in){bytes, len, 0}, NULL, &e) == WK_DONE &&
              back.type == t && back.object_id == d.object_id &&
              back.properties_len == d.properties_len &&
              back.has_status == !!(t & WK_MOQT_DATAGRAM_STATUS) && back.status == d.status &&
              back.payload_len == d.payload_len);
        free(bytes);
    }
    wk_moqt_datagram d;
    memset(&d, 0, sizeof d);
    wk_out o = {buf, sizeof buf, 0};
    d.type = WK_MOQT_DATAGRAM_PROPERTIES;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_MOQT_EMPTY_PROPERTIES);
    d.type = 0;
    d.properties = pairs;
    d.properties_len = pw.pos;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    d.type = WK_MOQT_DATAGRAM_PROPERTIES | WK_MOQT_DATAGRAM_STATUS;
    d.status = 4;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_MOQT_STATUS_PROPERTIES);
    d.type = WK_MOQT_DATAGRAM_STATUS;
    d.properties_len = 0;
    d.payload = (const uint8_t *)"x";
    d.payload_len = 1;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED);
    d.payload_len = 0;
    d.status = 1;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_MOQT_UNKNOWN_STATUS);
    /* a caller holding End of Group and a payload without STATUS: refused, not sent as Normal */
    d.type = 0;
    d.has_status = true;
    d.status = 3;
    d.payload_len = 1;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED);
    d.has_status = false;
    d.type = WK_MOQT_DATAGRAM_ZERO_OBJECT_ID;
    d.object_id = 4;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
    CHECK(o.pos == 0);
    /* padding */
    CHECK(wk_moqt_padding_size(true, 3) == 8 && wk_moqt_padding_size(false, UINT64_MAX) == UINT64_MAX);
    CHECK(wk_moqt_padding_encode(true, 3, &o, &e) == WK_DONE && o.pos == 8);
    CHECK(wk_moqt_datagram_decode(&d, &(wk_in){buf, o.pos, 0}, NULL, &e) == WK_DONE && d.padding &&
          d.payload_len == 3);
    wk_out small = {buf, 7, 0};
    CHECK(wk_moqt_padding_encode(false, 3, &small, &e) == WK_NEED_OUTPUT && small.pos == 0);
    memset(&d, 0, sizeof d);
    d.padding = true;
    d.type = WK_MOQT_DATAGRAM_TYPE_PADDING;
    d.payload = (const uint8_t *)"\0\1";
    d.payload_len = 2;
    o.pos = 0;
    CHECK(wk_moqt_datagram_encode_checked(&d, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG);
}

static void test_properties(void)
{
    wk_error e;
    uint8_t b[64];
    const uint8_t odd[] = {1, 2, 3};
    wk_moqt_property p[] = {{2, 1000, NULL, 0}, {2, 5, NULL, 0}, {0x0B, 0, odd, 3},
                            {0x3C, 1, NULL, 0}, {UINT64_MAX, 0, odd, 1}};
    wk_out o = {b, sizeof b, 0};
    size_t sz = 0;
    CHECK(wk_moqt_properties_size(p, 5, &sz, &e) == WK_OK && sz > 0);
    CHECK(wk_moqt_properties_encode(p, 5, &o, &e) == WK_DONE && o.pos == sz);
    char why[320];
    wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_PROPERTIES, .props = p, .nprops = 5};
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, sz, b, NULL, NULL, why, sizeof why), "%s", why);
    size_t count;
    CHECK(wk_moqt_properties_validate(&(wk_in){b, o.pos, 0}, 0, &count, &e) == WK_OK && count == 5);
    wk_moqt_properties_iter it;
    wk_moqt_properties_iter_init(&it, &(wk_in){b, o.pos, 0}, 100);
    for (size_t i = 0; i < 5; i++) {
        wk_moqt_property q;
        bool got;
        CHECK(wk_moqt_properties_iter_next(&it, &q, &got, &e) == WK_OK && got && q.type == p[i].type);
        if (q.type & 1) CHECK(q.len == p[i].len && !memcmp(q.bytes, p[i].bytes, q.len));
        else CHECK(q.value == p[i].value);
    }
    wk_moqt_property q;
    bool got = true;
    CHECK(wk_moqt_properties_iter_next(&it, &q, &got, &e) == WK_OK && !got);
    /* encoder refusals: in every view, nothing written; no size */
    wk_moqt_property dec[] = {{4, 0, NULL, 0}, {2, 0, NULL, 0}};
    k.props = dec;
    k.nprops = 2;
    CHECKF(wk_contract_moqt_call_check(&k, WK_ERR_ARG, 0, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    size_t untouched = 77;
    CHECK(wk_moqt_properties_size(dec, 2, &untouched, &e) == WK_ERR_ARG && untouched == 77);
    wk_moqt_property huge = {1, 0, b, 65536};
    k.props = &huge;
    k.nprops = 1;
    CHECKF(wk_contract_moqt_call_check(&k, WK_ERR_ARG, 0, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    CHECK(wk_moqt_properties_size(&huge, 1, &untouched, &e) == WK_ERR_ARG && untouched == 77);
    /* no pairs: size 0, written into an empty view */
    CHECK(wk_moqt_properties_size(p, 0, &untouched, &e) == WK_OK && untouched == 0);
    wk_out none = {b, 0, 0};
    CHECK(wk_moqt_properties_encode(p, 0, &none, &e) == WK_DONE && none.pos == 0);
    /* iterator offsets are relative to base_offset */
    size_t n = unhex("3c02" "0b05aabb", b, sizeof b);
    CHECK(wk_moqt_properties_validate(&(wk_in){b, n, 0}, 100, NULL, &e) ==
              WK_ERR_MOQT_PROPERTY_OVERRUN &&
          e.offset == 102);
}

/* ---------------------------------------------------------------------------------------------
 * Fetch writer: refusals, and random round trips through pick_flags and the reader
 * ------------------------------------------------------------------------------------------- */
/* The records a fetch round trip wrote, and the adapter hook that compares what the reader
 * reports with them (by index: the reader's objects() counts records and markers). */
typedef struct fetch_rec {
    bool marker;
    uint64_t flags, g, o, sub;
    bool dg;
    uint8_t prio;
    uint64_t plen;
} fetch_rec;
typedef struct fetch_recs {
    size_t n;
    fetch_rec r[24];
} fetch_recs;

static bool fetch_match(wk_contract *c, wk_contract_moqt *m)
{
    const fetch_recs *want = m->user;
    if (m->r.event != WK_MOQT_EVENT_FETCH_OBJECT) return true;
    const wk_moqt_fetch_object *fo = &m->r.fetch_object;
    uint64_t idx = m->r.objects - 1;
    if (idx >= want->n) return wk_contract_fail(c, "record %llu of %zu", (unsigned long long)idx,
                                                want->n);
    const fetch_rec *w = &want->r[idx];
    if (fo->group_id != w->g || fo->object_id != w->o || fo->flags != w->flags ||
        fo->end_of_range != w->marker)
        return wk_contract_fail(c, "record %llu: IDs or flags differ", (unsigned long long)idx);
    if (!w->marker && (fo->publisher_priority != w->prio || fo->has_subgroup_id == w->dg ||
                       (!w->dg && fo->subgroup_id != w->sub) || fo->payload_length != w->plen))
        return wk_contract_fail(c, "record %llu: fields differ", (unsigned long long)idx);
    return true;
}

static void test_fetch_writer(void)
{
    uint8_t buf[256];
    wk_error e;
    wk_moqt_fetch_writer w;
    wk_out o = {buf, sizeof buf, 0};
    REQUIRE(wk_moqt_fetch_writer_begin(&w, 4, WK_MOQT_GROUP_ORDER_ASCENDING,
                                       WK_MOQT_END_OF_RANGE_DELTA, &o, &e) == WK_DONE);
    size_t at = o.pos;
    wk_moqt_fetch_object_out ob = {0x14, 5, 0, 0, 128, NULL, 0, (const uint8_t *)"a", 1};
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_ERROR && e.code == WK_ERR_ARG); /* no 0x08 */
    ob.flags = 0x0C;
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_ERROR); /* no priority */
    ob.flags = 0x1D;
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_ERROR); /* mode 1 first */
    ob.flags = 0x8C;
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_ERROR); /* marker via _object */
    ob.flags = 0x1C;
    ob.subgroup_id = 3;
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_ERROR); /* mode 0 but subgroup 3 */
    CHECK(o.pos == at);
    /* a refusal comes in every view (also 0 bytes), the writer untouched; _size refuses alike */
    char why[320];
    wk_contract_moqt_call k = {.op = WK_CONTRACT_MOQT_FETCH_WRITE, .fw = &w, .fobj = &ob};
    CHECKF(wk_contract_moqt_call_check(&k, WK_ERR_ARG, 0, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    uint64_t sz = 99;
    CHECK(wk_moqt_fetch_writer_size(&w, &ob, &sz, &e) == WK_ERR_ARG && sz == 99);
    wk_moqt_fetch_writer fresh;
    memset(&fresh, 0, sizeof fresh);
    CHECK(wk_moqt_fetch_writer_write(&fresh, &ob, &o, &e) == WK_ERROR && e.code == WK_ERR_STATE);
    CHECK(wk_moqt_fetch_writer_write_end_of_range(&fresh, 0x8C, 1, 1, &o, &e) == WK_ERROR &&
          e.code == WK_ERR_STATE);
    /* the record: exactly _size bytes (the framing: _size minus the payload) */
    ob.flags = 0x1F;
    CHECK(wk_moqt_fetch_writer_size(&w, &ob, &sz, &e) == WK_OK && sz == 1 + 1 + 1 + 1 + 1 + 1 + 1);
    wk_moqt_fetch_writer copy = w; /* checked on copies: the writes below go on from w */
    k.fw = &copy;
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, (size_t)sz, NULL, NULL, NULL, why, sizeof why),
           "%s", why);
    copy = w;
    k.op = WK_CONTRACT_MOQT_FETCH_FRAMING;
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, (size_t)sz - 1, NULL, NULL, NULL, why,
                                       sizeof why),
           "%s", why);
    CHECK(wk_moqt_fetch_writer_write(&w, &ob, &o, &e) == WK_DONE && o.pos == at + sz);
    wk_moqt_fetch_object_out n2 = {0x08, 5, 1, 3, 128, NULL, 0, NULL, 0};
    at = o.pos;
    CHECK(wk_moqt_fetch_writer_write(&w, &n2, &o, &e) == WK_ERROR); /* same group with 0x08 */
    n2.flags = 0x00;
    n2.object_id = 2;
    CHECK(wk_moqt_fetch_writer_write(&w, &n2, &o, &e) == WK_ERROR); /* 0 -> 2 without 0x04 */
    n2.flags = 0x01;
    n2.object_id = 1;
    n2.publisher_priority = 7;
    CHECK(wk_moqt_fetch_writer_write(&w, &n2, &o, &e) == WK_ERROR); /* priority changed */
    n2.publisher_priority = 128;
    CHECK(o.pos == at);
    CHECK(wk_moqt_fetch_writer_write(&w, &n2, &o, &e) == WK_DONE);
    CHECK(wk_moqt_fetch_writer_write_end_of_range(&w, 0x8D, 9, 9, &o, &e) == WK_ERROR);
    CHECK(wk_moqt_fetch_writer_write_end_of_range(&w, 0x8C, 5, 9, &o, &e) == WK_ERROR); /* same group, A */
    size_t esz = 0;
    CHECK(wk_moqt_fetch_writer_end_of_range_size(&w, 0x8C, 5, 9, &esz, &e) == WK_ERR_ARG);
    CHECK(wk_moqt_fetch_writer_end_of_range_size(&w, 0x20C, 6, 9, &esz, &e) == WK_OK && esz == 5);
    copy = w;
    k = (wk_contract_moqt_call){.op = WK_CONTRACT_MOQT_FETCH_END_OF_RANGE, .fw = &copy,
                                .a = 0x20C, .b = 6, .c = 9};
    CHECKF(wk_contract_moqt_call_check(&k, WK_OK, esz, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    k.a = 0x8D;
    CHECKF(wk_contract_moqt_call_check(&k, WK_ERR_ARG, 0, NULL, NULL, NULL, why, sizeof why), "%s",
           why);
    CHECK(wk_moqt_fetch_writer_write_end_of_range(&w, 0x20C, 6, 9, &o, &e) == WK_DONE);
    wk_moqt_fetch_object_out n3 = {0x40, 6, 10, 0, 128, NULL, 0, (const uint8_t *)"zz", 2};
    CHECK(wk_moqt_fetch_writer_write(&w, &n3, &o, &e) == WK_DONE);
    wk_moqt_fetch_object_out n4 = {0x01, 6, 11, 3, 128, NULL, 0, NULL, 0};
    CHECK(wk_moqt_fetch_writer_write(&w, &n4, &o, &e) == WK_ERROR); /* prior is a datagram */
    /* descending refuses an ascending step */
    wk_out o2 = {buf, sizeof buf, 0};
    REQUIRE(wk_moqt_fetch_writer_begin(&w, 1, WK_MOQT_GROUP_ORDER_DESCENDING,
                                       WK_MOQT_END_OF_RANGE_DELTA, &o2, &e) == WK_DONE);
    wk_moqt_fetch_object_out d1 = {0x1C, 5, 0, 0, 1, NULL, 0, NULL, 0};
    CHECK(wk_moqt_fetch_writer_write(&w, &d1, &o2, &e) == WK_DONE);
    d1.flags = 0x0C;
    d1.group_id = 6;
    CHECK(wk_moqt_fetch_writer_write(&w, &d1, &o2, &e) == WK_ERROR);
    d1.group_id = 4;
    CHECK(wk_moqt_fetch_writer_write(&w, &d1, &o2, &e) == WK_DONE);

    /* random sequences: writer (pick_flags) -> reader, through the harness's battery (whole,
     * byte by byte, every split and chunk size) -> the same values */
    for (int iter = 0; iter < 400; iter++) {
        wk_moqt_group_order go = (iter & 1) ? WK_MOQT_GROUP_ORDER_DESCENDING : WK_MOQT_GROUP_ORDER_ASCENDING;
        wk_moqt_end_of_range eor = (iter & 2) ? WK_MOQT_END_OF_RANGE_ABSOLUTE : WK_MOQT_END_OF_RANGE_DELTA;
        static uint8_t s[8192];
        wk_out so = {s, sizeof s, 0};
        REQUIRE(wk_moqt_fetch_writer_begin(&w, rnd() >> (rnd() % 64), go, eor, &so, &e) == WK_DONE);
        static fetch_recs recs;
        recs.n = 1 + rnd() % 24;
        size_t nr = recs.n;
        fetch_rec *rec = recs.r;
        uint64_t g = (go == WK_MOQT_GROUP_ORDER_DESCENDING) ? 1000000 : rnd() % 1000, obj = rnd() % 50;
        uint64_t sub = 0;
        uint8_t prio = (uint8_t)rnd();
        for (size_t i = 0; i < nr; i++) {
            unsigned step = rnd() % 4;
            if (i > 0 && step == 0) {
                uint64_t d = rnd() % 3;
                g = go == WK_MOQT_GROUP_ORDER_DESCENDING ? g - d - 1 : g + d + 1;
                obj = (rnd() & 1) ? rnd() % 100 : obj + 1;
            } else if (i > 0) {
                obj += (rnd() % 3 == 0) ? rnd() % 40 : 1;
            }
            bool marker = i > 0 && rnd() % 6 == 0 && (eor == WK_MOQT_END_OF_RANGE_ABSOLUTE || step == 0);
            rec[i].marker = marker;
            rec[i].g = g;
            rec[i].o = obj;
            if (marker) {
                static const uint64_t mk[3] = {0x8C, 0x10C, 0x20C};
                rec[i].flags = mk[rnd() % 3];
                CHECK(wk_moqt_fetch_writer_write_end_of_range(&w, rec[i].flags, g, obj, &so, &e) == WK_DONE);
                continue;
            }
            unsigned sc = rnd() % 4;
            sub = sc == 0 ? sub : sc == 1 ? sub + 1 : sc == 2 ? 0 : rnd() % 1000;
            if (rnd() % 4 == 0) prio = (uint8_t)rnd();
            rec[i].dg = rnd() % 7 == 0;
            rec[i].sub = rec[i].dg ? 0 : sub;
            rec[i].prio = prio;
            rec[i].plen = rnd() % 5;
            uint8_t pl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
            wk_moqt_fetch_object_out fo = {0, g, obj, rec[i].sub, prio, NULL, 0, pl, rec[i].plen};
            fo.flags = wk_moqt_fetch_writer_pick_flags(&w, &fo, rec[i].dg);
            rec[i].flags = fo.flags;
            wk_result rr = wk_moqt_fetch_writer_write(&w, &fo, &so, &e);
            CHECKF(rr == WK_DONE, "iter %d rec %zu flags 0x%02" PRIx64 ": %s", iter, i, fo.flags, e.msg);
            if (rr != WK_DONE) goto next;
        }
        {
            wk_moqt_read_options ro;
            memset(&ro, 0, sizeof ro);
            ro.group_order = go;
            ro.end_of_range = eor;
            static wk_contract_moqt m;
            wk_contract_moqt_setup(&m, WK_MOQT_CARRIER_FETCH, &ro);
            m.on_event = fetch_match;
            m.user = &recs;
            wk_contract_outcome oc;
            CHECKF(wk_contract_check(&wk_contract_moqt_ops, &m, NULL, s, so.pos, WK_CONTRACT_ALL,
                                     &oc, why, sizeof why) &&
                       oc.verdict == WK_DONE && m.r.objects == nr,
                   "fetch round trip iter %d (%llu of %zu): %s", iter,
                   (unsigned long long)m.r.objects, nr, why);
        }
    next:;
    }
}

/* What a subgroup round trip wrote, and the adapter hook comparing the reader's events with it. */
typedef struct subgroup_recs {
    const wk_moqt_subgroup_header *h;
    size_t n;
    uint64_t ids[40], plens[40], st[40];
} subgroup_recs;

static bool subgroup_match(wk_contract *c, wk_contract_moqt *m)
{
    const subgroup_recs *want = m->user;
    const wk_moqt_stream_reader *r = &m->r;
    if (r->event == WK_MOQT_EVENT_SUBGROUP_HEADER &&
        (r->subgroup.track_alias != want->h->track_alias ||
         r->subgroup.group_id != want->h->group_id))
        return wk_contract_fail(c, "header fields differ");
    if (r->event != WK_MOQT_EVENT_OBJECT) return true;
    uint64_t idx = r->objects - 1;
    if (idx >= want->n || r->object.object_id != want->ids[idx] ||
        r->object.payload_length != want->plens[idx] ||
        (r->object.has_status && r->object.status != want->st[idx]))
        return wk_contract_fail(c, "object %llu differs", (unsigned long long)idx);
    return true;
}

/* Random subgroup streams: writer -> reader, whole, byte by byte and in chunks of several sizes
 * (the harness), with the same objects. */
static void test_subgroup_roundtrip(void)
{
    static uint8_t s[16384];
    static subgroup_recs recs;
    for (int iter = 0; iter < 300; iter++) {
        uint64_t type;
        do type = rnd() % 128; while (!wk_moqt_subgroup_type_is_valid(type));
        wk_moqt_subgroup_header h = {type, rnd() >> (rnd() % 64), rnd() >> (rnd() % 64),
                                     rnd() % 100, false, false, (uint8_t)rnd()};
        uint64_t first = rnd() % 1000;
        if (wk_moqt_subgroup_type_id_mode(type) == WK_MOQT_SUBGROUP_ID_FIRST_OBJECT) {
            h.subgroup_id = first;
            h.subgroup_id_known = true;
        }
        wk_moqt_subgroup_writer w;
        wk_error e;
        wk_out o = {s, sizeof s, 0};
        REQUIRE(wk_moqt_subgroup_writer_begin(&w, &h, &o, &e) == WK_DONE);
        uint64_t *ids = recs.ids, *plens = recs.plens, *st = recs.st;
        size_t n = rnd() % 40;
        recs.h = &h;
        recs.n = n;
        uint64_t id = first;
        uint8_t pairs[16];
        wk_moqt_property gp = {WK_MOQT_PROP_PRIOR_GROUP_ID_GAP, 3, NULL, 0};
        wk_out pw = {pairs, sizeof pairs, 0};
        wk_moqt_properties_encode(&gp, 1, &pw, &e);
        for (size_t i = 0; i < n; i++) {
            if (i) id += 1 + ((rnd() % 4 == 0) ? rnd() % 100 : 0);
            ids[i] = id;
            plens[i] = (rnd() % 5 == 0) ? 0 : rnd() % 200;
            st[i] = (plens[i] == 0 && i == n - 1) ? 3 : 0;
            static uint8_t payload[200];
            wk_moqt_object_out ob = {id, NULL, 0, st[i], payload, plens[i]};
            if ((type & WK_MOQT_SUBGROUP_PROPERTIES) && (rnd() & 1)) {
                ob.properties = pairs;
                ob.properties_len = pw.pos;
            }
            REQUIRE(wk_moqt_subgroup_writer_write(&w, &ob, &o, &e) == WK_DONE);
        }
        static wk_contract_moqt m;
        wk_contract_moqt_setup(&m, WK_MOQT_CARRIER_SUBGROUP, NULL);
        m.on_event = subgroup_match;
        m.user = &recs;
        wk_contract_outcome oc;
        char why[320];
        CHECKF(wk_contract_check(&wk_contract_moqt_ops, &m, NULL, s, o.pos,
                                 WK_CONTRACT_WHOLE | WK_CONTRACT_BYTES | WK_CONTRACT_CHUNKS, &oc,
                                 why, sizeof why) &&
                   oc.verdict == WK_DONE && m.r.objects == n,
               "subgroup round trip iter %d type 0x%02" PRIx64 ": %s", iter, type, why);
        const wk_moqt_stream_reader *r = &m.r;
        if (n && wk_moqt_subgroup_type_id_mode(type) != WK_MOQT_SUBGROUP_ID_EXPLICIT)
            CHECK(r->subgroup.subgroup_id ==
                  (wk_moqt_subgroup_type_id_mode(type) == WK_MOQT_SUBGROUP_ID_ZERO ? 0 : first));
    }
}

/* ---------------------------------------------------------------------------------------------
 * Zero allocations per object
 * ------------------------------------------------------------------------------------------- */
static void *alloc_elsewhere(void *arg)
{
    (void)arg;
    for (int i = 0; i < 8; i++) {
        void *volatile q = malloc(64);
        free(q);
    }
    return NULL;
}

static void test_zero_alloc(void)
{
    enum { N = 10000, PL = 100 };
    size_t cap = (size_t)N * (PL + 16) + 64;
    uint8_t *s = malloc(cap), *f = malloc(cap), *dg = malloc(256);
    static uint8_t payload[PL];
    memset(payload, 0x42, sizeof payload);
    wk_error e;
    /* writers */
    wk_alloc_probe_begin(0);
    wk_out o = {s, cap, 0};
    wk_moqt_subgroup_header h = {0x11, 3, 4, 0, true, true, 1};
    wk_moqt_subgroup_writer w;
    REQUIRE(wk_moqt_subgroup_writer_begin(&w, &h, &o, &e) == WK_DONE);
    for (uint64_t i = 0; i < N; i++) {
        wk_moqt_object_out ob = {i, NULL, 0, 0, payload, PL};
        if (wk_moqt_subgroup_writer_write(&w, &ob, &o, &e) != WK_DONE) break;
    }
    wk_out fo = {f, cap, 0};
    wk_moqt_fetch_writer fw;
    REQUIRE(wk_moqt_fetch_writer_begin(&fw, 1, WK_MOQT_GROUP_ORDER_DEFAULT,
                                       WK_MOQT_END_OF_RANGE_DELTA, &fo, &e) == WK_DONE);
    for (uint64_t i = 0; i < N; i++) {
        wk_moqt_fetch_object_out ob = {0, i / 100, i % 100, 0, 7, NULL, 0, payload, PL};
        ob.flags = wk_moqt_fetch_writer_pick_flags(&fw, &ob, false);
        if (wk_moqt_fetch_writer_write(&fw, &ob, &fo, &e) != WK_DONE) break;
    }
    unsigned long used = wk_alloc_probe_end();
    ALLOC_CHECK(used == 0, "writers allocated %lu times", used);
    /* readers, whole and in 1000-byte pushes (the harness without copies allocates nothing) */
    static wk_contract_moqt m;
    for (int chunked = 0; chunked < 2; chunked++) {
        wk_alloc_probe_begin(0);
        uint64_t objs = 0;
        for (int which = 0; which < 2; which++) {
            wk_contract_moqt_setup(&m, WK_MOQT_CARRIER_ANY, NULL);
            wk_contract_plan plan = {chunked ? 1000 : 0, NULL, 0, 0, false, false};
            wk_contract_outcome oc;
            char why[320];
            CHECKF(wk_contract_drive(&wk_contract_moqt_ops, &m, NULL, which ? f : s,
                                     which ? fo.pos : o.pos, &plan, &oc, why, sizeof why) &&
                       oc.verdict == WK_DONE,
                   "%s", why);
            objs += m.r.objects;
        }
        wk_moqt_datagram d;
        memset(&d, 0, sizeof d);
        d.type = 0;
        d.payload = payload;
        d.payload_len = PL;
        for (int i = 0; i < N; i++) {
            wk_out dgo = {dg, 256, 0};
            d.object_id = (uint64_t)i;
            wk_moqt_datagram_encode_checked(&d, &dgo, &e);
            wk_moqt_datagram back;
            if (wk_moqt_datagram_decode(&back, &(wk_in){dg, dgo.pos, 0}, NULL, &e) == WK_DONE) objs++;
        }
        used = wk_alloc_probe_end();
        CHECK(objs == 3 * N);
        ALLOC_CHECK(used == 0, "readers allocated %lu times (chunked %d)", used, chunked);
    }
    /* the probe works: it counts an allocation of this thread while armed, and only then */
    wk_alloc_probe_begin(1);
    void *volatile probe = malloc(1); /* volatile: an optimizer may drop a malloc/free pair */
    free(probe);
    used = wk_alloc_probe_end();
    ALLOC_CHECK(used == 1, "the armed probe counted %lu of 1 allocation", used);
    probe = malloc(1);
    free(probe);
    CHECK(wk_alloc_probe_end() == 1);
    /* another thread's allocations while this thread is armed are not counted */
    wk_alloc_probe_begin(0);
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, alloc_elsewhere, NULL) == 0);
    REQUIRE(pthread_join(th, NULL) == 0);
    used = wk_alloc_probe_end();
    ALLOC_CHECK(used == 0, "another thread's allocations counted here: %lu", used);
    /* a failed check prints the stack of the allocation beyond the allowed count */
    wk_alloc_probe_begin(0);
    probe = malloc(3);
    free(probe);
    CHECK(wk_alloc_probe_end() == 1);
    FILE *rep = tmpfile();
    REQUIRE(rep != NULL);
    wk_alloc_probe_report(rep);
    char text[4096];
    rewind(rep);
    size_t tl = fread(text, 1, sizeof text - 1, rep);
    text[tl] = 0;
    fclose(rep);
    CHECKF(strstr(text, "allocation 1 (malloc of 3 bytes), stack:") && strstr(text, "test_moqt"),
           "report: %s", text);
    free(s);
    free(f);
    free(dg);
}

int main(void)
{
    test_int();
    test_types();
    test_every_error();
    test_reader_options();
    test_large_payload();
    test_subgroup_writer();
    test_datagram_encode();
    test_properties();
    test_fetch_writer();
    test_subgroup_roundtrip();
    test_zero_alloc();
    return wk_test_summary("moqt_unit");
}
