/* wirekit eth: private helpers shared by the files of src/eth (not installed, not public API).
 * Small and stable: unsigned LEB128 varints (the Snappy preamble and the req/resp length prefix),
 * the block decoder's entry point, and little-endian loads and stores. */
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

/* Our one-pass validating block decoder (snappy_decode.c): decodes the elements src[start..n)
 * of a block whose preamble src[0..start) declared `want` bytes (already read and bounded by
 * wk_eth_snappy_block_peek) into dst[0..want), checking every rule of spec 1.5 as it goes. Returns
 * WK_OK, or the error wk_eth_snappy_block_validate gives for the same block (same code, same offset,
 * counted from src). Reads only src[0..n), writes only dst[0..want) (contents unspecified on
 * failure); dst is never NULL (pass a 1-byte buffer for want == 0) and does not overlap src. */
wk_code wk_eth_snappy_decode_body(const uint8_t *src, size_t n, size_t start, uint8_t *dst, size_t want,
                              wk_error *err);

/* CRC-32C (continuing `crc`, as wk_eth_crc32c_update) of src[0..n) while copying it to dst (not
 * overlapping), in steps of WK_ETH_CRC32C_COPY_STEP bytes: each step checksummed, then copied while
 * it is in L1 (crc32c.c). */
#define WK_ETH_CRC32C_COPY_STEP 4096
uint32_t wk_eth_crc32c_copy(uint8_t *dst, const uint8_t *src, size_t n, uint32_t crc);

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
