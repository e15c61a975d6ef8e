/* Reference primitives for the eth libFuzzer targets, written from the spec and independent of
 * src/eth: a bitwise (table) CRC-32C and its mask (spec 2.3), little-endian loads, and a Snappy
 * block validator (spec 1.1-1.5). Include after fuzz_check.h. */
#ifndef WK_FUZZ_ETH_REF_H
#define WK_FUZZ_ETH_REF_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

NO_COVERAGE static inline uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    static bool built;
    if (!built) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
        built = true;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}

static inline uint32_t ref_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

static inline uint32_t le(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

/* Spec 1.1-1.5, written here: true when s[0..n) is a valid Snappy block declaring at most max_out
 * bytes (*declared = the declared length). Used instead of trusting libsnappy's verdict, which is
 * more lenient in one case (a literal length field ff ff ff ff wraps to an empty literal). */
NO_COVERAGE static inline bool ref_block_valid(const uint8_t *s, size_t n, uint64_t max_out,
                                               uint64_t *declared)
{
    uint64_t want = 0, have = 0;
    size_t i = 0;
    for (unsigned sh = 0;; sh += 7) {
        if (i == n || i == 5) return false;
        uint8_t b = s[i++];
        want |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) break;
    }
    if (want > 0xFFFFFFFFu || want > max_out) return false;
    while (i < n) {
        uint8_t tag = s[i++];
        size_t left = n - i;
        uint64_t len, off;
        if ((tag & 3) == 0) {
            len = (uint64_t)(tag >> 2) + 1;
            if (len > 60) {
                unsigned k = (unsigned)(len - 60);
                if (left < k) return false;
                len = (uint64_t)le(s + i, k) + 1;
                i += k;
                left -= k;
            }
            if (len > left || len > want - have) return false;
            i += (size_t)len;
            have += len;
            continue;
        }
        unsigned k = (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
        if (left < k) return false;
        if ((tag & 3) == 1) {
            len = 4 + (uint64_t)((tag >> 2) & 7);
            off = (uint64_t)(tag >> 5) << 8 | s[i];
        } else {
            len = 1 + (uint64_t)(tag >> 2);
            off = le(s + i, k);
        }
        i += k;
        if (off == 0 || off > have || len > want - have) return false;
        have += len;
    }
    *declared = want;
    return have == want;
}
#endif
