/* wirekit eth: CRC-32C (Castagnoli) through ISA-L's crc32_iscsi, the same fused with a copy (for
 * the framing decoder's uncompressed chunks), a portable slicing-by-8 version of ours for
 * comparison and benchmarks, and the Snappy framing checksum mask (spec 2.3). */
#include "eth_internal.h"
#include <isa-l/crc.h>
#include <threads.h>

#define CRC32C_POLY 0x82F63B78u /* reflected form of 0x1EDC6F41 */
#define ISAL_PIECE (1u << 30)   /* crc32_iscsi takes an int length */

uint32_t wk_eth_crc32c_update(uint32_t crc, const void *data, size_t n)
{
    /* crc32_iscsi works on the raw register (init in, no final XOR out). */
    unsigned int reg = ~crc;
    unsigned char *p = (unsigned char *)(uintptr_t)data; /* ISA-L's prototype is not const */
    while (n > 0) {
        size_t piece = n < ISAL_PIECE ? n : ISAL_PIECE;
        reg = crc32_iscsi(p, (int)piece, reg);
        p += piece;
        n -= piece;
    }
    return ~(uint32_t)reg;
}

uint32_t wk_eth_crc32c(const void *data, size_t n) { return wk_eth_crc32c_update(0, data, n); }

uint32_t wk_eth_crc32c_copy(uint8_t *dst, const uint8_t *src, size_t n, uint32_t crc)
{
    /* One step is checksummed and then copied while it is still in L1: one pass over the
     * source from the cache instead of two (eth_bench, "checksum and copy"). */
    while (n > 0) {
        size_t k = n < WK_ETH_CRC32C_COPY_STEP ? n : WK_ETH_CRC32C_COPY_STEP;
        crc = wk_eth_crc32c_update(crc, src, k);
        memcpy(dst, src, k);
        dst += k;
        src += k;
        n -= k;
    }
    return crc;
}

/* Slicing-by-8: table[k][b] is the register after byte b followed by k zero bytes. Built once. */
static uint32_t crc_table[8][256];
static once_flag crc_table_once = ONCE_FLAG_INIT;

static void crc_table_build(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c >> 1) ^ ((c & 1u) ? CRC32C_POLY : 0u);
        crc_table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++) {
            uint32_t c = crc_table[k - 1][b];
            crc_table[k][b] = (c >> 8) ^ crc_table[0][c & 0xff];
        }
}

uint32_t wk_eth_crc32c_table(const void *data, size_t n)
{
    call_once(&crc_table_once, crc_table_build);
    const uint8_t *p = data;
    uint32_t c = 0xFFFFFFFFu;
    while (n > 0 && ((uintptr_t)p & 7u) != 0) {
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi =
            (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^
            crc_table[2][(hi >> 8) & 0xff] ^ crc_table[1][(hi >> 16) & 0xff] ^
            crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n > 0) {
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
        n--;
    }
    return ~c;
}

uint32_t wk_eth_snappy_mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

uint32_t wk_eth_snappy_unmask_crc(uint32_t masked)
{
    uint32_t r = masked - 0xA282EAD8u;
    return (r << 15) | (r >> 17);
}
