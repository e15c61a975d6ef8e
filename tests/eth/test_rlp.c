/* RLP subset (spec 3): the ethereum/tests RLP vectors (valid cases rebuilt from "in" with our
 * encoders and compared byte for byte, then checked; invalid cases rejected with the expected
 * name), targeted cases for every RLP_ERR_* name with offsets, integers and depth limits.
 * Usage: test_eth_rlp rlptest.json invalidRLPTest.json */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_eth.h"
#include <json-c/json.h>

#include "wk_bytes.h"

/* "#<decimal>" -> minimal big-endian bytes (empty for zero). Returns the length, or -1. */
static int decimal_to_be(const char *dec, uint8_t *out, size_t cap)
{
    size_t len = 0; /* out[cap-len .. cap) holds the number, big-endian */
    for (const char *c = dec; *c; c++) {
        if (*c < '0' || *c > '9') return -1;
        unsigned carry = (unsigned)(*c - '0');
        for (size_t i = 0; i < len; i++) {
            unsigned v = out[cap - 1 - i] * 10u + carry;
            out[cap - 1 - i] = (uint8_t)v;
            carry = v >> 8;
        }
        while (carry) {
            if (len == cap) return -1;
            out[cap - 1 - len++] = (uint8_t)carry;
            carry >>= 8;
        }
    }
    memmove(out, out + cap - len, len);
    return (int)len;
}

/* RLP of a byte string, written with our header encoder. */
static void encode_bytes(buf *b, const uint8_t *s, size_t n)
{
    if (n == 1 && s[0] < 0x80) {
        put(b, s, 1);
        return;
    }
    uint8_t h[WK_ETH_RLP_HEADER_MAX_LEN];
    put(b, h, wk_eth_rlp_put_header(false, n, h));
    put(b, s, n);
}

/* Builds the expected encoding of a JSON "in" value. Returns false on an unsupported value. */
static bool encode_json(buf *b, json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_string: {
        const char *s = json_object_get_string(v);
        size_t n = (size_t)json_object_get_string_len(v);
        if (n > 0 && s[0] == '#') {
            uint8_t num[128];
            int k = decimal_to_be(s + 1, num, sizeof num);
            if (k < 0) return false;
            encode_bytes(b, num, (size_t)k);
        } else {
            encode_bytes(b, (const uint8_t *)s, n);
        }
        return true;
    }
    case json_type_int: {
        int64_t x = json_object_get_int64(v);
        if (x < 0) return false;
        uint8_t u[WK_ETH_RLP_UINT_MAX_LEN];
        put(b, u, wk_eth_rlp_put_uint((uint64_t)x, u));
        return true;
    }
    case json_type_array: {
        buf payload = {0};
        bool ok = true;
        for (size_t i = 0; ok && i < json_object_array_length(v); i++)
            ok = encode_json(&payload, json_object_array_get_idx(v, i));
        uint8_t h[WK_ETH_RLP_HEADER_MAX_LEN];
        put(b, h, wk_eth_rlp_put_header(true, payload.n, h));
        put(b, payload.p, payload.n);
        free(payload.p);
        return ok;
    }
    default:
        return false;
    }
}

/* "0x..." or bare hex -> bytes (malloc'd). */
static uint8_t *hex_bytes(const char *h, size_t *n)
{
    if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2;
    size_t len = strlen(h);
    uint8_t *p = malloc(len / 2 + 1);
    long r = wk_hex_decode(h, len, p, len / 2 + 1);
    if (r < 0) {
        free(p);
        return NULL;
    }
    *n = (size_t)r;
    return p;
}

static const char *name_of(wk_code c) { return wk_error_name(c); }

static void test_valid_file(const char *path)
{
    json_object *root = json_object_from_file(path);
    REQUIRE(root != NULL);
    int cases = 0, compared = 0, ints = 0;
    json_object_object_foreach(root, name, tc)
    {
        cases++;
        json_object *in = NULL, *out = NULL;
        REQUIRE(json_object_object_get_ex(tc, "in", &in) && json_object_object_get_ex(tc, "out", &out));
        size_t n = 0;
        uint8_t *want = hex_bytes(json_object_get_string(out), &n);
        CHECKF(want != NULL, "%s: bad hex", name);
        if (!want) continue;
        wk_error err;
        if (strcmp(name, "listofbinaries") == 0) {
            /* Skipped (vectors README): "out" is a complete list followed by stray zero bytes. */
            wk_eth_rlp_item it;
            CHECK(wk_eth_rlp_read_header(LOOK(want, n), &it, NULL) == WK_OK && it.is_list);
            CHECK(wk_eth_rlp_check(LOOK(want, n), 16, &err) == WK_ERR_RLP_TRAILING);
            CHECKF(err.has_offset && err.offset == it.header_len + it.payload_len && err.offset == 169,
                   "listofbinaries trailing at %llu", (unsigned long long)err.offset);
            CHECK(wk_eth_rlp_check(LOOK(want, 169), 16, NULL) == WK_OK);
            free(want);
            continue;
        }
        buf got = {0};
        CHECKF(encode_json(&got, in), "%s: cannot encode \"in\"", name);
        CHECKF(got.n == n && memcmp(got.p, want, n) == 0, "%s: encoding differs (%zu vs %zu bytes)",
               name, got.n, n);
        compared++;
        wk_code rc = wk_eth_rlp_check(LOOK(want, n), 16, &err);
        CHECKF(rc == WK_OK, "%s: check rejects the valid encoding: %s", name, name_of(rc));

        /* Integers: read_uint gives the value back (or overflow beyond 64 bits). */
        enum json_type t = json_object_get_type(in);
        const char *s = t == json_type_string ? json_object_get_string(in) : NULL;
        if (t == json_type_int || (s && s[0] == '#')) {
            ints++;
            uint64_t v = 0;
            size_t used = 0;
            rc = wk_eth_rlp_read_uint(LOOK(want, n), &v, &used, &err);
            uint8_t num[128];
            int k = s ? decimal_to_be(s + 1, num, sizeof num) : 0;
            if (s && k > 8) {
                CHECKF(rc == WK_ERR_RLP_UINT_OVERFLOW, "%s: %s", name, name_of(rc));
            } else {
                uint64_t expect = 0;
                if (s) {
                    for (int i = 0; i < k; i++) expect = (expect << 8) | num[i];
                } else {
                    expect = (uint64_t)json_object_get_int64(in);
                }
                CHECKF(rc == WK_OK && v == expect && used == n, "%s: read_uint %s %llu", name,
                       name_of(rc), (unsigned long long)v);
            }
        }
        free(got.p);
        free(want);
    }
    CHECKF(cases == 29 && compared == 28, "%d cases, %d compared", cases, compared);
    CHECKF(ints == 11, "%d integer cases", ints);
    json_object_put(root);
}

/* Expected names for the invalid cases (any rejection is required; these are our names). */
static const struct { const char *name; wk_code code; } INVALID_EXPECT[] = {
    {"int32Overflow", WK_ERR_RLP_TRUNCATED},
    {"int32Overflow2", WK_ERR_RLP_TRUNCATED},
    {"wrongSizeList", WK_ERR_RLP_NONCANON_SIZE},
    {"wrongSizeList2", WK_ERR_RLP_NONCANON_SIZE},
    {"incorrectLengthInArray", WK_ERR_RLP_NONCANON_SIZE},
    {"randomRLP", WK_ERR_RLP_NONCANON_SIZE},
    {"bytesShouldBeSingleByte00", WK_ERR_RLP_NONCANON_SIZE},
    {"bytesShouldBeSingleByte01", WK_ERR_RLP_NONCANON_SIZE},
    {"bytesShouldBeSingleByte7F", WK_ERR_RLP_NONCANON_SIZE},
    {"leadingZerosInLongLengthArray1", WK_ERR_RLP_NONCANON_SIZE},
    {"leadingZerosInLongLengthArray2", WK_ERR_RLP_NONCANON_SIZE},
    {"leadingZerosInLongLengthList1", WK_ERR_RLP_NONCANON_SIZE},
    {"leadingZerosInLongLengthList2", WK_ERR_RLP_NONCANON_SIZE},
    {"nonOptimalLongLengthArray1", WK_ERR_RLP_NONCANON_SIZE},
    {"nonOptimalLongLengthArray2", WK_ERR_RLP_NONCANON_SIZE},
    {"nonOptimalLongLengthList1", WK_ERR_RLP_NONCANON_SIZE},
    {"nonOptimalLongLengthList2", WK_ERR_RLP_NONCANON_SIZE},
};

static void test_invalid_file(const char *path)
{
    json_object *root = json_object_from_file(path);
    REQUIRE(root != NULL);
    int cases = 0;
    json_object_object_foreach(root, name, tc)
    {
        cases++;
        json_object *out = NULL;
        REQUIRE(json_object_object_get_ex(tc, "out", &out));
        size_t n = 0;
        uint8_t *p = hex_bytes(json_object_get_string(out), &n);
        CHECKF(p != NULL, "%s: bad hex", name);
        if (!p) continue;
        wk_error err;
        wk_code rc = wk_eth_rlp_check(LOOK(p, n), 16, &err);
        CHECKF(rc != WK_OK, "invalid case %s accepted", name);
        CHECKF(rc == WK_OK || err.has_offset, "%s: no offset", name);
        bool listed = false;
        for (size_t i = 0; i < sizeof INVALID_EXPECT / sizeof INVALID_EXPECT[0]; i++) {
            if (strcmp(INVALID_EXPECT[i].name, name) != 0) continue;
            listed = true;
            CHECKF(rc == INVALID_EXPECT[i].code, "%s: %s, expected %s", name, name_of(rc),
                   name_of(INVALID_EXPECT[i].code));
        }
        CHECKF(listed, "invalid case %s not in the expectation table", name);
        printf("  invalid %-32s -> %s at %llu\n", name, name_of(rc), (unsigned long long)err.offset);
        free(p);
    }
    CHECKF(cases == 17, "%d invalid cases", cases);
    json_object_put(root);
}

/* Runs wk_eth_rlp_check on hex and compares code and offset (offset ignored for WK_OK). */
static void check_hex(const char *hex, unsigned depth, wk_code code, uint64_t offset)
{
    size_t n = 0;
    uint8_t *p = hex_bytes(hex, &n);
    REQUIRE(p != NULL);
    wk_error err;
    wk_code rc = wk_eth_rlp_check(LOOK(p, n), depth, &err);
    if (code == WK_OK)
        CHECKF(rc == WK_OK, "check(%s): %s", hex, name_of(rc));
    else
        CHECKF(rc == code && err.has_offset && err.offset == offset, "check(%s): %s at %llu, want %s at %llu",
               hex, name_of(rc), (unsigned long long)err.offset, name_of(code), (unsigned long long)offset);
    free(p);
}

static void test_check_targeted(void)
{
    /* RLP_ERR_TRUNCATED: header or payload past the input (offset = where input ended). */
    check_hex("", 8, WK_ERR_RLP_TRUNCATED, 0);
    check_hex("b8", 8, WK_ERR_RLP_TRUNCATED, 1);
    check_hex("8361", 8, WK_ERR_RLP_TRUNCATED, 2);
    check_hex("c1", 8, WK_ERR_RLP_TRUNCATED, 1);
    check_hex("81", 8, WK_ERR_RLP_TRUNCATED, 1);
    check_hex("f9ffff00", 8, WK_ERR_RLP_TRUNCATED, 4);
    check_hex("bfffffffffffffffff01", 8, WK_ERR_RLP_TRUNCATED, 10); /* L = 2^64-1 */
    /* RLP_ERR_NONCANON_SIZE */
    check_hex("8100", 8, WK_ERR_RLP_NONCANON_SIZE, 0);
    check_hex("817f", 8, WK_ERR_RLP_NONCANON_SIZE, 0);
    check_hex("8180", 8, WK_OK, 0);
    check_hex("b837" "0000000000000000000000000000000000000000000000000000000000000000000000"
              "0000000000000000000000000000000000000000",
              8, WK_ERR_RLP_NONCANON_SIZE, 1); /* 55 bytes in long form */
    check_hex("b90038", 8, WK_ERR_RLP_NONCANON_SIZE, 1);
    check_hex("c28100", 8, WK_ERR_RLP_NONCANON_SIZE, 1); /* inside a list: absolute offset */
    check_hex("c3c2817f", 8, WK_ERR_RLP_NONCANON_SIZE, 2);
    /* RLP_ERR_ELEM_TOO_LARGE: an item crossing its list's end. */
    check_hex("c2826162", 8, WK_ERR_RLP_ELEM_TOO_LARGE, 1);
    check_hex("c3018261", 8, WK_ERR_RLP_ELEM_TOO_LARGE, 2);
    check_hex("c4c2c20102", 8, WK_ERR_RLP_ELEM_TOO_LARGE, 2);
    check_hex("c1b8", 8, WK_ERR_RLP_ELEM_TOO_LARGE, 1);
    check_hex("c181", 8, WK_ERR_RLP_ELEM_TOO_LARGE, 1);
    check_hex("c3c101c0", 8, WK_OK, 0);
    /* RLP_ERR_TRAILING */
    check_hex("8000", 8, WK_ERR_RLP_TRAILING, 1);
    check_hex("c0c0", 8, WK_ERR_RLP_TRAILING, 1);
    check_hex("c3c10102ff", 8, WK_ERR_RLP_TRAILING, 4);
    check_hex("00", 8, WK_OK, 0);
    check_hex("80", 8, WK_OK, 0);
    /* RLP_ERR_DEPTH: a top-level list is level 1. */
    check_hex("80", 0, WK_OK, 0);
    check_hex("c0", 0, WK_ERR_RLP_DEPTH, 0);
    check_hex("c0", 1, WK_OK, 0);
    check_hex("c3c2c100", 2, WK_ERR_RLP_DEPTH, 2);
    check_hex("c3c2c100", 3, WK_OK, 0);
    check_hex("c40180c101", 2, WK_OK, 0);
    check_hex("c40180c101", 1, WK_ERR_RLP_DEPTH, 3);
}

/* Nested lists: depth levels, innermost c0. */
static buf nested(unsigned levels)
{
    buf b = {0};
    put(&b, "\xc0", 1);
    for (unsigned i = 1; i < levels; i++) {
        uint8_t h[WK_ETH_RLP_HEADER_MAX_LEN];
        size_t hl = wk_eth_rlp_put_header(true, b.n, h);
        buf nb = {0};
        put(&nb, h, hl);
        put(&nb, b.p, b.n);
        free(b.p);
        b = nb;
    }
    return b;
}

static void test_depth(void)
{
    for (unsigned d = 1; d <= WK_ETH_RLP_MAX_DEPTH + 44; d += 43) {
        buf b = nested(d);
        wk_error err;
        unsigned ok_depth = d <= WK_ETH_RLP_MAX_DEPTH ? d : WK_ETH_RLP_MAX_DEPTH;
        if (d <= WK_ETH_RLP_MAX_DEPTH) CHECKF(wk_eth_rlp_check(LOOK(b.p, b.n), d, &err) == WK_OK, "depth %u", d);
        CHECK(wk_eth_rlp_check(LOOK(b.p, b.n), d - 1, &err) == WK_ERR_RLP_DEPTH);
        /* the offending list is the one at level d (or WK_ETH_RLP_MAX_DEPTH + 1): its offset is the
         * sum of the outer headers */
        unsigned bad_level = d <= WK_ETH_RLP_MAX_DEPTH ? d : WK_ETH_RLP_MAX_DEPTH + 1;
        size_t off = 0;
        for (unsigned l = 1; l < bad_level; l++) {
            wk_eth_rlp_item it;
            REQUIRE(wk_eth_rlp_read_header(LOOK(b.p + off, b.n - off), &it, NULL) == WK_OK && it.is_list);
            off += it.header_len;
        }
        CHECKF(err.has_offset && err.offset == off, "depth %u: offset %llu, want %zu", d,
               (unsigned long long)err.offset, off);
        /* max_depth above WK_ETH_RLP_MAX_DEPTH counts as WK_ETH_RLP_MAX_DEPTH */
        wk_code rc = wk_eth_rlp_check(LOOK(b.p, b.n), 100000, &err);
        CHECKF(d <= ok_depth ? rc == WK_OK : rc == WK_ERR_RLP_DEPTH, "depth %u, max 100000: %s", d,
               name_of(rc));
        free(b.p);
    }
    buf b = nested(WK_ETH_RLP_MAX_DEPTH);
    CHECK(wk_eth_rlp_check(LOOK(b.p, b.n), ~0u, NULL) == WK_OK);
    free(b.p);
    b = nested(WK_ETH_RLP_MAX_DEPTH + 1);
    CHECK(wk_eth_rlp_check(LOOK(b.p, b.n), ~0u, NULL) == WK_ERR_RLP_DEPTH);
    free(b.p);
    /* Wide rather than deep: 10000 items in one list. */
    buf items = {0};
    for (int i = 0; i < 10000; i++) put(&items, "\xc1\x01", 2);
    uint8_t h[WK_ETH_RLP_HEADER_MAX_LEN];
    buf w = {0};
    put(&w, h, wk_eth_rlp_put_header(true, items.n, h));
    put(&w, items.p, items.n);
    CHECK(wk_eth_rlp_check(LOOK(w.p, w.n), 2, NULL) == WK_OK);
    CHECK(wk_eth_rlp_check(LOOK(w.p, w.n), 1, NULL) == WK_ERR_RLP_DEPTH);
    free(items.p);
    free(w.p);
}

static void test_header(void)
{
    wk_eth_rlp_item it;
    wk_error err;
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\x7f", 1), &it, &err) == WK_OK && !it.is_list &&
          it.header_len == 0 && it.payload_len == 1);
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\x82\x01\x02\xff", 4), &it, &err) == WK_OK &&
          !it.is_list && it.header_len == 1 && it.payload_len == 2); /* trailing allowed */
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\xc1\x01", 2), &it, &err) == WK_OK && it.is_list &&
          it.header_len == 1 && it.payload_len == 1);
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\x81\x05", 1), &it, &err) == WK_ERR_RLP_TRUNCATED &&
          err.offset == 1);
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\xf8\x37", 2), &it, &err) == WK_ERR_RLP_NONCANON_SIZE &&
          err.offset == 1);
    CHECK(wk_eth_rlp_read_header(LOOK((const uint8_t *)"\xfa\x00\x01\x00", 4), &it, &err) ==
          WK_ERR_RLP_NONCANON_SIZE && err.offset == 1);
    CHECK(err.category == WK_CAT_PEER_PROTOCOL);
    CHECK(strcmp(wk_error_name(WK_ERR_RLP_NONCANON_SIZE), "RLP_ERR_NONCANON_SIZE") == 0);

    /* put_header at the size boundaries, read back */
    const uint64_t lens[] = {0, 1, 55, 56, 255, 256, 65535, 65536, 0xFFFFFFull, 1ull << 32,
                             (1ull << 56) - 1, 1ull << 56, UINT64_MAX};
    const size_t hlen[] = {1, 1, 1, 2, 2, 3, 3, 4, 4, 6, 8, 9, 9};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (int list = 0; list < 2; list++) {
            uint8_t h[WK_ETH_RLP_HEADER_MAX_LEN];
            size_t hl = wk_eth_rlp_put_header(list, lens[i], h);
            CHECKF(hl == hlen[i], "header of %llu: %zu bytes", (unsigned long long)lens[i], hl);
            CHECK(h[0] == (list ? 0xc0 : 0x80) + (lens[i] < 56 ? lens[i] : 55 + hl - 1));
            uint64_t l = 0;
            for (size_t k = 1; k < hl; k++) l = (l << 8) | h[k];
            CHECK(hl == 1 || l == lens[i]);
            if (lens[i] <= 65536) { /* read it back over a payload of that size */
                uint8_t *p = calloc(1, hl + lens[i] + 1);
                memcpy(p, h, hl);
                if (!list && lens[i] == 1) p[hl] = 0x80; /* a canonical 1-byte string */
                wk_code rc = wk_eth_rlp_read_header(LOOK(p, hl + lens[i]), &it, &err);
                CHECKF(rc == WK_OK && it.is_list == list && it.header_len == hl &&
                           it.payload_len == lens[i],
                       "read back %llu: %s", (unsigned long long)lens[i], name_of(rc));
                CHECK(wk_eth_rlp_read_header(LOOK(p, hl + lens[i] - (lens[i] ? 1 : 0)), &it, &err) ==
                      (lens[i] ? WK_ERR_RLP_TRUNCATED : WK_OK));
                free(p);
            }
        }
    }
}

static void test_uint(void)
{
    const uint64_t vals[] = {0, 1, 0x7f, 0x80, 0xff, 0x100, 1000, 100000, 0xFFFFFFFF,
                             (1ull << 56) - 1, 1ull << 56, UINT64_MAX};
    const char *hex[] = {"80", "01", "7f", "8180", "81ff", "820100", "8203e8", "830186a0",
                         "84ffffffff", "87ffffffffffffff", "880100000000000000",
                         "88ffffffffffffffff"};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t u[WK_ETH_RLP_UINT_MAX_LEN + 1];
        size_t n = wk_eth_rlp_put_uint(vals[i], u);
        char h[2 * WK_ETH_RLP_UINT_MAX_LEN + 1];
        wk_hex_encode(u, n, h);
        CHECKF(strcmp(h, hex[i]) == 0, "put_uint(%llu) = %s", (unsigned long long)vals[i], h);
        u[n] = 0xee; /* trailing byte: allowed */
        uint64_t v = 7;
        size_t used = 0;
        wk_error err;
        CHECK(wk_eth_rlp_read_uint(LOOK(u, n + 1), &v, &used, &err) == WK_OK && v == vals[i] && used == n);
        CHECK(wk_eth_rlp_check(LOOK(u, n), 0, &err) == WK_OK);
    }
    struct { const char *hex; wk_code code; uint64_t off; } bad[] = {
        {"", WK_ERR_RLP_TRUNCATED, 0},
        {"00", WK_ERR_RLP_NONCANON_INT, 0},
        {"820001", WK_ERR_RLP_NONCANON_INT, 1},
        {"880000000000000001", WK_ERR_RLP_NONCANON_INT, 1},
        {"8105", WK_ERR_RLP_NONCANON_SIZE, 0},
        {"89010000000000000000", WK_ERR_RLP_UINT_OVERFLOW, 0},
        {"89000000000000000000", WK_ERR_RLP_UINT_OVERFLOW, 0},
        {"890000000000000000", WK_ERR_RLP_TRUNCATED, 9},
        {"c0", WK_ERR_RLP_EXPECTED_STRING, 0},
        {"c180", WK_ERR_RLP_EXPECTED_STRING, 0},
        {"8201", WK_ERR_RLP_TRUNCATED, 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = 0;
        uint8_t *p = hex_bytes(bad[i].hex, &n);
        wk_error err;
        uint64_t v;
        size_t used;
        wk_code rc = wk_eth_rlp_read_uint(LOOK(p, n), &v, &used, &err);
        CHECKF(rc == bad[i].code && err.has_offset && err.offset == bad[i].off,
               "read_uint(%s): %s at %llu", bad[i].hex, name_of(rc), (unsigned long long)err.offset);
        free(p);
    }
    /* RLP_ERR_EXPECTED_LIST: no function of the subset expects a list; the name exists. */
    CHECK(strcmp(wk_error_name(WK_ERR_RLP_EXPECTED_LIST), "RLP_ERR_EXPECTED_LIST") == 0);
}

/* The readers and the check take the item as a view's unread bytes, leave the view alone, and
 * count offsets from in->pos; no view is WK_ERR_ARG. */
static void test_views(void)
{
    static const uint8_t vb[] = {0xee, 0xee, 0xc2, 0x01, 0x02, 0x82, 0x00, 0x01};
    wk_in in = {vb, 5, 2};
    wk_eth_rlp_item it;
    wk_error err;
    CHECK(wk_eth_rlp_read_header(&in, &it, &err) == WK_OK && it.is_list && it.header_len == 1 &&
          it.payload_len == 2 && in.pos == 2);
    CHECK(wk_eth_rlp_check(&in, 4, &err) == WK_OK && in.pos == 2);
    wk_in more = {vb, sizeof vb, 2};
    CHECK(wk_eth_rlp_check(&more, 4, &err) == WK_ERR_RLP_TRAILING && err.offset == 3 &&
          more.pos == 2);
    uint64_t v = 7;
    size_t used = 0;
    wk_in u = {vb, sizeof vb, 3};
    CHECK(wk_eth_rlp_read_uint(&u, &v, &used, &err) == WK_OK && v == 1 && used == 1 && u.pos == 3);
    u.pos = 5;
    CHECK(wk_eth_rlp_read_uint(&u, &v, &used, &err) == WK_ERR_RLP_NONCANON_INT && err.offset == 1 &&
          u.pos == 5);
    u.pos = sizeof vb;
    CHECK(wk_eth_rlp_read_header(&u, &it, &err) == WK_ERR_RLP_TRUNCATED && err.offset == 0);
    wk_in bad = {vb, 2, 3};
    CHECK(wk_eth_rlp_read_header(NULL, &it, &err) == WK_ERR_ARG && !err.has_offset);
    CHECK(wk_eth_rlp_read_uint(&bad, &v, &used, &err) == WK_ERR_ARG && !err.has_offset);
    CHECK(wk_eth_rlp_check(&bad, 4, &err) == WK_ERR_ARG && !err.has_offset);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s rlptest.json invalidRLPTest.json\n", argv[0]);
        return 2;
    }
    test_valid_file(argv[1]);
    test_invalid_file(argv[2]);
    test_check_targeted();
    test_depth();
    test_header();
    test_uint();
    test_views();
    return wk_test_summary("eth_rlp");
}
