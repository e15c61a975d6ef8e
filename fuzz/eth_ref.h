/* Reference primitives for the eth libFuzzer targets, written from the spec and independent of
 * src/eth: a bitwise (table) CRC-32C and its mask (spec 2.3), little-endian loads, and a Snappy
 * block validator (spec 1.1-1.5). Also the kernel choice of a fuzzing process (below). Include
 * after fuzz_check.h. */
#ifndef WK_FUZZ_ETH_REF_H
#define WK_FUZZ_ETH_REF_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The block decoder's test hooks (src/eth/snappy_decode.c; not in the public header). */
int wk_eth_snappy__set_kernel(int id);
const char *wk_eth_snappy__kernel_name(int id);
#define ETH_KERNELS 4 /* ids 0 portable, 1 bmi2, 2 avx2, 3 avx512 */

/* The kernel this process forces, read once from the environment: WK_SNAPPY_KERNEL=portable,
 * bmi2, avx2, avx512 (or 0..3) forces that kernel for every decode (a long run per kernel); unset
 * (or "all"), -1: the library's default choice, and targets that can afford it decode each input
 * with every kernel. A kernel the CPU lacks, or an unknown name, stops the process: a run must
 * not silently test another kernel than the one it names. */
static inline int eth_fuzz_kernel(void)
{
    static int kernel = -2;
    if (kernel != -2) return kernel;
    const char *v = getenv("WK_SNAPPY_KERNEL");
    kernel = -1;
    if (v && *v && strcmp(v, "all") != 0) {
        int id = -1;
        for (int k = 0; k < ETH_KERNELS; k++)
            if (strcmp(v, wk_eth_snappy__kernel_name(k)) == 0 || (v[0] == '0' + k && v[1] == 0)) id = k;
        if (id < 0) {
            fprintf(stderr, "WK_SNAPPY_KERNEL=%s: not a kernel (portable, bmi2, avx2, avx512)\n", v);
            abort();
        }
        if (wk_eth_snappy__set_kernel(id) != id) {
            fprintf(stderr, "WK_SNAPPY_KERNEL=%s: this CPU cannot run it\n", v);
            abort();
        }
        fprintf(stderr, "eth fuzz: block decoder kernel forced to %s\n", wk_eth_snappy__kernel_name(id));
        kernel = id;
    }
    return kernel;
}

/* For targets that decode each input with one kernel: unless one is forced, picks the kernel from
 * a hash of the input (so every kernel runs over a corpus, and a crash reproduces from its input
 * alone). */
static inline void eth_fuzz_kernel_for(const uint8_t *data, size_t size)
{
    if (eth_fuzz_kernel() >= 0) return;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size && i < 64; i++) h = (h ^ data[i]) * 16777619u;
    wk_eth_snappy__set_kernel((int)(h % ETH_KERNELS));
}

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
