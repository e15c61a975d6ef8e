/* wirekit eth: the RLP subset of spec 3 (message ids and item headers), canonical forms enforced
 * as go-ethereum does (rlp/raw.go): sizes in their shortest form, integers without leading
 * zeros, items filling their lists exactly. No allocation; wk_eth_rlp_check walks nested lists with
 * an explicit fixed-size stack instead of recursion. */
#include "eth_internal.h"

/* Reads the big-endian length field p[0..k) (k in 1..8; caller checked the bytes exist). */
static uint64_t be_len(const uint8_t *p, unsigned k)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < k; i++) v = (v << 8) | p[i];
    return v;
}

/* wk_eth_rlp_read_header of p[0..n). */
static wk_code read_header(const uint8_t *p, size_t n, wk_eth_rlp_item *item, wk_error *err)
{
    if (n == 0) return wk_error_set(err, WK_ERR_RLP_TRUNCATED, 0, "no RLP item: input is empty");
    uint8_t b = p[0];
    wk_eth_rlp_item it = {false, 0, 0};
    if (b < 0x80) {
        it.payload_len = 1;
    } else if (b <= 0xb7 || (b >= 0xc0 && b <= 0xf7)) {
        it.is_list = b >= 0xc0;
        it.header_len = 1;
        it.payload_len = (size_t)(b - (it.is_list ? 0xc0 : 0x80));
        if (it.payload_len > n - 1)
            return wk_error_set(err, WK_ERR_RLP_TRUNCATED, n,
                                "RLP %s of %zu bytes, only %zu bytes follow the prefix",
                                it.is_list ? "list" : "string", it.payload_len, n - 1);
        if (!it.is_list && it.payload_len == 1 && p[1] < 0x80)
            return wk_error_set(err, WK_ERR_RLP_NONCANON_SIZE, 0,
                                "single byte %02x < 0x80 wrapped as a 1-byte string", p[1]);
    } else {
        it.is_list = b >= 0xf8;
        unsigned k = (unsigned)(b - (it.is_list ? 0xf7 : 0xb7)); /* 1..8 length bytes */
        if (n - 1 < k)
            return wk_error_set(err, WK_ERR_RLP_TRUNCATED, n,
                                "RLP long-form prefix needs %u length bytes", k);
        if (p[1] == 0)
            return wk_error_set(err, WK_ERR_RLP_NONCANON_SIZE, 1,
                                "RLP length field starts with a zero byte");
        uint64_t len = be_len(p + 1, k);
        if (len < 56)
            return wk_error_set(err, WK_ERR_RLP_NONCANON_SIZE, 1,
                                "RLP long form for a payload of %llu < 56 bytes",
                                (unsigned long long)len);
        it.header_len = 1 + k;
        if (len > (uint64_t)(n - it.header_len))
            return wk_error_set(err, WK_ERR_RLP_TRUNCATED, n,
                                "RLP %s of %llu bytes, only %zu bytes follow the header",
                                it.is_list ? "list" : "string", (unsigned long long)len,
                                n - it.header_len);
        it.payload_len = (size_t)len;
    }
    if (item) *item = it;
    return WK_OK;
}

wk_code wk_eth_rlp_read_header(const wk_in *in, wk_eth_rlp_item *item, wk_error *err)
{
    const uint8_t *p;
    size_t n;
    if (!wk_eth_view_bytes(in, &p, &n, err)) return WK_ERR_ARG;
    return read_header(p, n, item, err);
}

wk_code wk_eth_rlp_read_uint(const wk_in *in, uint64_t *value, size_t *used, wk_error *err)
{
    const uint8_t *p;
    size_t n;
    if (!wk_eth_view_bytes(in, &p, &n, err)) return WK_ERR_ARG;
    wk_eth_rlp_item it = {false, 0, 0};
    wk_code rc = read_header(p, n, &it, err);
    if (rc != WK_OK) return rc;
    if (it.is_list)
        return wk_error_set(err, WK_ERR_RLP_EXPECTED_STRING, 0, "RLP list where an integer is expected");
    const uint8_t *q = p + it.header_len;
    if (it.payload_len > 8)
        return wk_error_set(err, WK_ERR_RLP_UINT_OVERFLOW, 0,
                            "RLP integer of %zu bytes does not fit in 64 bits", it.payload_len);
    if (it.payload_len > 0 && q[0] == 0)
        return wk_error_set(err, WK_ERR_RLP_NONCANON_INT, it.header_len,
                            it.header_len == 0 ? "integer zero written 00 (canonical: 80)"
                                               : "RLP integer with a leading zero byte");
    uint64_t v = 0;
    for (size_t i = 0; i < it.payload_len; i++) v = (v << 8) | q[i];
    if (value) *value = v;
    if (used) *used = it.header_len + it.payload_len;
    return WK_OK;
}

/* Deepest nesting wk_eth_rlp_check can track: its stack lives in a fixed array on the C stack. */
#define RLP_STACK_MAX WK_ETH_RLP_MAX_DEPTH

wk_code wk_eth_rlp_check(const wk_in *in, unsigned max_depth, wk_error *err)
{
    const uint8_t *p;
    size_t n;
    if (!wk_eth_view_bytes(in, &p, &n, err)) return WK_ERR_ARG;
    if (max_depth > RLP_STACK_MAX) max_depth = RLP_STACK_MAX;
    size_t ends[RLP_STACK_MAX]; /* end offset of every open list, outermost first */
    unsigned depth = 0;

    wk_eth_rlp_item it = {false, 0, 0};
    wk_code rc = read_header(p, n, &it, err);
    if (rc != WK_OK) return rc;
    size_t top_end = it.header_len + it.payload_len;
    size_t pos = 0;
    for (;;) {
        /* The item at pos (header already read into it) lies within its list or the input. */
        if (it.is_list) {
            if (depth >= max_depth)
                return wk_error_set(err, WK_ERR_RLP_DEPTH, pos,
                                    "RLP lists nested deeper than %u levels", max_depth);
            ends[depth++] = pos + it.header_len + it.payload_len;
            pos += it.header_len;
        } else {
            pos += it.header_len + it.payload_len;
        }
        while (depth > 0 && pos == ends[depth - 1]) depth--;
        if (depth == 0) break;
        size_t room = ends[depth - 1] - pos; /* > 0: items never cross a list end (below) */
        rc = read_header(p + pos, room, &it, err);
        if (rc == WK_ERR_RLP_TRUNCATED)
            return wk_error_set(err, WK_ERR_RLP_ELEM_TOO_LARGE, pos,
                                "RLP item crosses the end of its list at offset %zu", ends[depth - 1]);
        if (rc != WK_OK) {
            if (err && err->has_offset) err->offset += pos;
            return rc;
        }
    }
    if (top_end < n)
        return wk_error_set(err, WK_ERR_RLP_TRAILING, top_end,
                            "%zu bytes after the complete RLP item", n - top_end);
    return WK_OK;
}

/* Bytes needed for v in big-endian without leading zeros (0 for v == 0). */
static unsigned be_size(uint64_t v)
{
    unsigned k = 0;
    while (v) {
        k++;
        v >>= 8;
    }
    return k;
}

size_t wk_eth_rlp_put_uint(uint64_t v, uint8_t out[WK_ETH_RLP_UINT_MAX_LEN])
{
    if (v > 0 && v < 0x80) {
        out[0] = (uint8_t)v;
        return 1;
    }
    unsigned k = be_size(v);
    out[0] = (uint8_t)(0x80 + k);
    wk_put_be(out + 1, v, k);
    return 1 + (size_t)k;
}

size_t wk_eth_rlp_put_header(bool list, uint64_t len, uint8_t out[WK_ETH_RLP_HEADER_MAX_LEN])
{
    uint8_t base = list ? 0xc0 : 0x80;
    if (len < 56) {
        out[0] = (uint8_t)(base + len);
        return 1;
    }
    unsigned k = be_size(len);
    out[0] = (uint8_t)(base + 55 + k);
    wk_put_be(out + 1, len, k);
    return 1 + (size_t)k;
}
