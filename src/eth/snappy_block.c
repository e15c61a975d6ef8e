/* wirekit eth: Snappy block format (spec 1). The preamble is read and bounded by us before any
 * output exists; our one-pass validating decoder (snappy_decode.c) decodes; libsnappy encodes.
 * wk_eth_snappy_block_validate, our sequential validating pass (spec 1.5, rules in order, no output),
 * stays as the reference the decoder is tested and fuzzed against (same errors, same offsets). */
#include "eth_internal.h"
#include <snappy-c.h>

uint64_t wk_eth_snappy_block_max_size(uint64_t n)
{
    uint64_t extra = 32 + n / 6;
    return n > UINT64_MAX - extra ? UINT64_MAX : n + extra;
}

/* The preamble of src[0..n) (NULL = empty), as wk_eth_snappy_block_peek. */
static wk_code block_peek(const uint8_t *src, size_t n, uint64_t max_out, uint64_t *declared,
                          size_t *preamble_len, wk_error *err)
{
    uint64_t v = 0;
    size_t used = 0;
    wk_cursor c = wk_cursor_make(src, src ? n : 0);
    /* spec 1.1: at most 5 bytes, non-minimal forms accepted */
    switch (wk_cursor_leb128(&c, WK_ETH_SNAPPY_PREAMBLE_MAX, WK_VARINT_ANY_FORM, &v, &used)) {
    case WK_CURSOR_OK:
        break;
    case WK_CURSOR_TRUNCATED:
        return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, 0,
                            n ? "input ends inside the preamble" : "empty block (no preamble)");
    default:
        return wk_error_set(err, WK_ERR_SNAPPY_PREAMBLE, 0, "preamble longer than 5 bytes");
    }
    if (v > WK_ETH_SNAPPY_BLOCK_MAX)
        return wk_error_set(err, WK_ERR_SNAPPY_PREAMBLE, 0, "preamble value %llu above 2^32-1",
                            (unsigned long long)v);
    if (v > max_out)
        return wk_error_set(err, WK_ERR_SNAPPY_TOO_LARGE, 0,
                            "declared length %llu above limit %llu", (unsigned long long)v,
                            (unsigned long long)max_out);
    if (declared) *declared = v;
    if (preamble_len) *preamble_len = used;
    return WK_OK;
}

wk_code wk_eth_snappy_block_peek(const wk_in *in, uint64_t max_out, uint64_t *declared,
                                 size_t *preamble_len, wk_error *err)
{
    const uint8_t *src;
    size_t n;
    if (!wk_eth_view_bytes(in, &src, &n, err)) return WK_ERR_ARG;
    return block_peek(src, n, max_out, declared, preamble_len, err);
}

static uint64_t load_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

wk_code wk_eth_snappy_block_validate(const wk_in *in, uint64_t max_out, uint64_t *declared,
                                     wk_error *err)
{
    const uint8_t *src;
    size_t n;
    if (!wk_eth_view_bytes(in, &src, &n, err)) return WK_ERR_ARG;
    uint64_t want = 0;
    size_t i = 0;
    wk_code c = block_peek(src, n, max_out, &want, &i, err);
    if (c != WK_OK) return c;
    if (declared) *declared = want;
    uint64_t produced = 0;
    while (i < n) {
        size_t t = i; /* the element's offset: errors point at its tag */
        uint8_t tag = src[i++];
        uint64_t len, off;
        size_t left = n - i;
        switch (tag & 3) {
        case 0: /* literal */
            len = (uint64_t)(tag >> 2) + 1;
            if (len > 60) {
                unsigned extra = (unsigned)(len - 60);
                if (left < extra)
                    return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                        "literal length field needs %u bytes, %zu left", extra,
                                        left);
                len = load_le(src + i, extra) + 1; /* 64-bit: 0xFFFFFFFF + 1 does not wrap */
                i += extra;
                left -= extra;
            }
            if (len > left)
                return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                    "literal of %llu bytes, %zu left", (unsigned long long)len,
                                    left);
            if (len > want - produced)
                return wk_error_set(err, WK_ERR_SNAPPY_OVERRUN, t,
                                    "literal of %llu bytes, %llu of the declared length left",
                                    (unsigned long long)len, (unsigned long long)(want - produced));
            i += (size_t)len;
            produced += len;
            continue;
        case 1: /* copy, 1-byte offset */
            if (left < 1)
                return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                    "copy-1 missing its offset byte");
            len = 4 + ((tag >> 2) & 7);
            off = ((uint64_t)(tag >> 5) << 8) | src[i];
            i += 1;
            break;
        case 2: /* copy, 2-byte offset */
            if (left < 2)
                return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                    "copy-2 needs 2 offset bytes, %zu left", left);
            len = 1 + (uint64_t)(tag >> 2);
            off = load_le(src + i, 2);
            i += 2;
            break;
        default: /* copy, 4-byte offset */
            if (left < 4)
                return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                    "copy-4 needs 4 offset bytes, %zu left", left);
            len = 1 + (uint64_t)(tag >> 2);
            off = load_le(src + i, 4);
            i += 4;
            break;
        }
        if (off == 0 || off > produced)
            return wk_error_set(err, WK_ERR_SNAPPY_BAD_OFFSET, t,
                                "copy offset %llu with %llu bytes produced",
                                (unsigned long long)off, (unsigned long long)produced);
        if (len > want - produced)
            return wk_error_set(err, WK_ERR_SNAPPY_OVERRUN, t,
                                "copy of %llu bytes, %llu of the declared length left",
                                (unsigned long long)len, (unsigned long long)(want - produced));
        produced += len;
    }
    if (produced != want)
        return wk_error_set(err, WK_ERR_SNAPPY_LENGTH_MISMATCH, n,
                            "produced %llu of %llu declared bytes", (unsigned long long)produced,
                            (unsigned long long)want);
    return WK_OK;
}

/* Decodes the elements after the preamble (plen bytes, declaring `declared`) into dst. */
static wk_code block_decode_checked(const uint8_t *src, size_t n, size_t plen, uint64_t declared,
                                    uint8_t *dst, wk_error *err)
{
    uint8_t dummy;
    return wk_eth_snappy_decode_body(src, n, plen, dst ? dst : &dummy, (size_t)declared, err);
}

wk_result wk_eth_snappy_block_decode(wk_in *in, uint64_t max_out, wk_out *out, wk_error *err)
{
    if (!in || in->pos > in->size || !out || out->pos > out->size) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no input or output view");
        return WK_ERROR;
    }
    const uint8_t *src = in->src ? in->src + in->pos : NULL;
    size_t n = in->size - in->pos;
    uint64_t declared = 0;
    size_t plen = 0;
    if (block_peek(src, n, max_out, &declared, &plen, err) != WK_OK) return WK_ERROR;
    if (declared > out->size - out->pos) return WK_NEED_OUTPUT; /* nothing written */
    if (block_decode_checked(src, n, plen, declared, out->dst ? out->dst + out->pos : NULL, err) !=
        WK_OK)
        return WK_ERROR;
    in->pos = in->size;
    out->pos += (size_t)declared;
    return WK_DONE;
}

wk_result wk_eth_snappy_block_decode_alloc(wk_in *in, uint64_t max_out,
                                           const wk_allocator *allocator, uint8_t **out,
                                           size_t *out_len, wk_error *err)
{
    const uint8_t *src;
    size_t n;
    if (!wk_eth_view_bytes(in, &src, &n, err)) return WK_ERROR;
    if (!out) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no result pointer");
        return WK_ERROR;
    }
    uint64_t declared = 0;
    size_t plen = 0;
    if (block_peek(src, n, max_out, &declared, &plen, err) != WK_OK) return WK_ERROR;
    if (declared > SIZE_MAX) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "declared length %llu does not fit in memory",
                     (unsigned long long)declared);
        return WK_ERROR;
    }
    wk_allocator a = wk_allocator_or_default(allocator);
    uint8_t *buf = a.alloc(a.opaque, declared ? (size_t)declared : 1);
    if (!buf) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "allocating %llu bytes failed",
                     (unsigned long long)declared);
        return WK_ERROR;
    }
    if (block_decode_checked(src, n, plen, declared, buf, err) != WK_OK) {
        a.free(a.opaque, buf);
        return WK_ERROR;
    }
    *out = buf;
    if (out_len) *out_len = (size_t)declared;
    in->pos = in->size;
    return WK_DONE;
}

wk_result wk_eth_snappy_block_encode(const uint8_t *src, size_t n, wk_out *out, wk_error *err)
{
    if ((uint64_t)n > WK_ETH_SNAPPY_BLOCK_MAX) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "input of %zu bytes above 2^32-1", n);
        return WK_ERROR;
    }
    if (!out || out->pos > out->size) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no output view");
        return WK_ERROR;
    }
    size_t room = out->size - out->pos;
    if (room < wk_eth_snappy_block_max_size(n)) return WK_NEED_OUTPUT; /* libsnappy needs it */
    uint8_t dummy = 0;
    size_t len = room;
    if (snappy_compress((const char *)(src ? src : &dummy), n, (char *)out->dst + out->pos, &len) !=
        SNAPPY_OK) {
        wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "snappy_compress failed");
        return WK_ERROR;
    }
    out->pos += len;
    return WK_DONE;
}
