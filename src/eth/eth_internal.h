/* wirekit eth: private helpers shared by the files of src/eth (not installed, not public API).
 * Small and stable: unsigned LEB128 varints (the Snappy preamble and the req/resp length prefix)
 * and little-endian loads and stores. */
#ifndef WIREKIT_ETH_INTERNAL_H
#define WIREKIT_ETH_INTERNAL_H

#include <wirekit/eth.h>
#include <string.h>

/* What wk_leb128_read found. */
typedef enum wk_leb128_status {
    WK_LEB128_OK = 0,
    WK_LEB128_TRUNCATED, /* the input ended inside the varint (including empty input) */
    WK_LEB128_TOO_LONG,  /* byte number max_len still has its continuation bit set (decided as
                            soon as that byte is seen, whatever follows) */
    WK_LEB128_OVERFLOW   /* the 10th byte's value bits are above 1: the value needs 65+ bits
                            (checked before its continuation bit) */
} wk_leb128_status;

/* Reads an unsigned LEB128 varint (7 value bits per byte, least significant group first, high
 * bit = more bytes follow) of at most max_len (1..10) bytes from p[0..n). On WK_LEB128_OK *value
 * is the value and *used its length; on an error *used is the number of bytes examined. Non-minimal
 * encodings are accepted here: see wk_leb128_minimal. Reads nothing past p[n-1]. */
static inline wk_leb128_status wk_leb128_read(const uint8_t *p, size_t n, unsigned max_len,
                                              uint64_t *value, size_t *used)
{
    uint64_t v = 0;
    for (unsigned i = 0;; i++) {
        if (i == n) {
            *used = i;
            return WK_LEB128_TRUNCATED;
        }
        uint8_t b = p[i];
        if (i == 9 && (b & 0x7f) > 1) {
            *used = i + 1;
            return WK_LEB128_OVERFLOW;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *value = v;
            *used = i + 1;
            return WK_LEB128_OK;
        }
        if (i + 1 >= max_len) {
            *used = i + 1;
            return WK_LEB128_TOO_LONG;
        }
    }
}

/* True when the varint p[0..used) just read is minimally encoded (no redundant trailing zero
 * group: a last byte of 00 is only minimal as the whole encoding of 0). */
static inline bool wk_leb128_minimal(const uint8_t *p, size_t used)
{
    return used == 1 || p[used - 1] != 0;
}

/* Whether src[p..n) holds the bytes FC FF FF FF FF anywhere (a memchr scan). */
static inline bool wk_snappy_wrap_scan(const uint8_t *src, size_t p, size_t n)
{
    while (n - p >= 5) {
        const uint8_t *q = (const uint8_t *)memchr(src + p, 0xfc, n - p - 4);
        if (!q) return false;
        if (q[1] == 0xff && q[2] == 0xff && q[3] == 0xff && q[4] == 0xff) return true;
        p = (size_t)(q - src) + 1;
    }
    return false;
}

/* libsnappy (1.1.9) reads a literal whose 4-byte length field is FF FF FF FF (length 2^32) as an
 * empty literal (32-bit wrap-around) and may then accept the block, which spec 1.3 rejects (Go
 * does). When this returns true, run wk_snappy_block_validate before trusting libsnappy's verdict.
 *
 * It walks the elements of the block src[0..n) (preamble included) from the start, as libsnappy
 * parses them, and returns true at such a literal tag, or at anything malformed (libsnappy will
 * reject that anyway; the validator then names it). Walking costs per element, not per byte:
 * nearly free on literal-heavy blocks (incompressible data, SSZ blobs), where a byte scan would
 * cost up to half of libsnappy's memcpy-speed decoding. On copy-heavy blocks (many short elements:
 * after 32 elements averaging under 32 bytes) it switches, at the current element boundary, to a
 * conservative memchr scan of the rest for the bytes FC FF FF FF FF. */
static inline bool wk_snappy_wrap_suspect(const uint8_t *src, size_t n)
{
    size_t p = 0;
    while (p < n && p < 4 && (src[p] & 0x80)) p++; /* the preamble (libsnappy: at most 5 bytes) */
    if (p >= n || (src[p] & 0x80)) return true;
    size_t start = ++p;
    uint64_t elements = 0;
    while (p < n) {
        uint8_t tag = src[p];
        size_t skip;
        switch (tag & 3) {
        case 0: {
            size_t m = (size_t)(tag >> 2), len;
            if (m < 60) {
                len = m + 1;
                p += 1;
            } else {
                size_t k = m - 59;
                if (n - p < 1 + k) return true;
                uint32_t v = 0;
                for (size_t b = 0; b < k; b++) v |= (uint32_t)src[p + 1 + b] << (8 * b);
                if (k == 4 && v == 0xffffffffu) return true;
                len = (size_t)v + 1;
                p += 1 + k;
            }
            skip = len;
            break;
        }
        case 1: skip = 2; break;
        case 2: skip = 3; break;
        default: skip = 5; break;
        }
        if (n - p < skip) return true;
        p += skip;
        if (++elements >= 32 && p - start < elements * 32) return wk_snappy_wrap_scan(src, p, n);
    }
    return false;
}

static inline uint32_t wk_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t wk_load_le24(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}
static inline void wk_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void wk_store_le24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
}

#endif
