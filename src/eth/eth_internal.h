/* wirekit eth: private helpers shared by the files of src/eth (not installed, not public API).
 * Small and stable: the block decoder's entry point, the CRC-32C copy, the view check of the look
 * calls, and little-endian loads and stores. LEB128 (the Snappy preamble, the req/resp length
 * prefix) is read through the common cursor (wk_cursor_leb128, common.h). */
#ifndef WIREKIT_ETH_INTERNAL_H
#define WIREKIT_ETH_INTERNAL_H

#include <wirekit/eth.h>
#include <string.h>

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

/* The unread bytes of the view a look or whole-message call was given: *p = in->src + in->pos
 * (NULL for an empty view without bytes), *n = in->size - in->pos. False (WK_ERR_ARG set, no
 * offset) when there is no view, or it is malformed (pos past size, bytes without src). */
static inline bool wk_eth_view_bytes(const wk_in *in, const uint8_t **p, size_t *n, wk_error *err)
{
    if (!in || in->pos > in->size || (!in->src && in->size)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no input view");
        return false;
    }
    *p = in->src ? in->src + in->pos : NULL;
    *n = in->size - in->pos;
    return true;
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
