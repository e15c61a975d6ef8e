/* wirekit eth: our one-pass validating Snappy block decoder (spec 1.2-1.5).
 *
 * wk_eth_snappy_decode_body() decodes the elements of a block whose preamble has been read and bounded
 * (wk_eth_snappy_block_peek) and checks every rule of spec 1.5 while it writes: the same error names
 * and offsets as wk_eth_snappy_block_validate, in the same order (the failing element's tag; the end
 * of the input for LENGTH_MISMATCH). It replaces libsnappy's decoding (two passes: libsnappy,
 * then our validator to name a failure, and a guard for libsnappy's 2^32-literal leniency).
 * libsnappy stays for encoding and as the reference the tests and fuzz targets compare with.
 *
 * Kernels, in the pattern of src/common/blake3.c (portable code plus target-attributed SIMD
 * kernels, one chosen once at run time, a test hook to force one):
 *   portable  plain C: 8-byte copies; an overlapping copy (offset below 8) keeps its 8-byte
 *             pattern in a register, rotated from one 8-byte store to the next;
 *   bmi2      BMI2 (bzhi) offset extraction, SSSE3 16-byte copies, an overlapping copy with an
 *             offset below 16 by a pshufb pattern rotated in a register;
 *   avx2      BMI2 + AVX2 32-byte copies, an overlapping copy with an offset below 16 by one
 *             vpshufb pattern across both lanes (rotated for the second 32 bytes), 16..31 by
 *             16-byte steps;
 *   avx512    BMI2 + AVX-512 (F, BW, VBMI) 64-byte copies, every overlapping copy (any offset
 *             below 64) by a single vpermb from a table of indices.
 * The SIMD patterns are taken from the 16 (64) bytes just before the output position, which the
 * previous element usually wrote in one store, so the load is forwarded from that store instead
 * of waiting for it to reach the cache (loading from op - offset instead cost 30 % on copy-heavy
 * blocks). The element walk (snappy_decode_kernel.h, included once per kernel) is the same source
 * in every kernel; only the copies and the offset extraction differ. Bounds: see that file; in
 * short, wide loads and stores happen only while the margins guarantee them inside src[0..n) and
 * dst[0..want), and everything else goes through slow_element(), which checks each rule before
 * touching memory and copies exactly.
 *
 * Choice (when the caller forces nothing): avx2 when the CPU has AVX2 and BMI2, else bmi2 (BMI2
 * and SSSE3), else portable. Measured on this project's machine (docs/benchmarks.md, "Ethereum
 * Snappy"), avx2 is the fastest; the avx512 kernel measured slower there on copy-heavy data
 * (about 15 against 19.5 GB/s on the Rinkeby RLP block), so it runs only when forced; it is
 * tested, fuzzed and benchmarked like the others.
 *
 * Memory safety notes: the caller guarantees that src and dst do not overlap; dst is never NULL
 * (a zero-length output still passes a 1-byte buffer), so `dst + want` is always defined. */
#include "eth_internal.h"
#include <string.h>
#include <threads.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define WK_SNAPPY_X86 1
#include <immintrin.h>
#else
#define WK_SNAPPY_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define WK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WK_LIKELY(x) __builtin_expect(!!(x), 1)
#define WK_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define WK_UNLIKELY(x) (x)
#define WK_LIKELY(x) (x)
#define WK_ALWAYS_INLINE inline
#endif

/* The fast loop's margins (see snappy_decode_kernel.h). */
#define FAST_IN_MARGIN 64  /* fast while more than this many input bytes remain at the tag */
#define FAST_OUT_MARGIN 64 /* ... and at least this many output bytes */

/* Per tag byte: bits 0-7 the element's length (short literal: 1..60; copy-1: 4..11; copy-2/-4:
 * 1..64); bit 8 set when the fast loop leaves the element to slow_element (long literals: tags
 * f0, f4, f8, fc; every copy-4); bits 9-20 the base of the offset: a copy-1's high offset bits
 * (0..0x700, the low byte follows the tag), 0 for copy-2 (whose offset is the next 2 bytes), and
 * for a short literal its own length (the fast loop's offset tests then pass for it once that
 * many bytes have been produced). */
#define TAG_LEN_MASK 0xffu
#define TAG_SLOW 0x100u
#define TAG_OFF_SHIFT 9
static uint32_t tag_table[256];
/* A long literal's length field: 1..4 bytes (index = bytes). */
static const uint32_t lit_len_mask[5] = {0, 0xffu, 0xffffu, 0xffffffu, 0xffffffffu};
/* Long literals up to this length are copied in 64-byte steps inside the fast loop (when the
 * rounded-up steps stay inside both buffers), longer ones by memcpy. */
#define LONG_LITERAL_STEPS 512

static WK_ALWAYS_INLINE uint32_t load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static uint64_t load_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* One element at *ipp, every rule checked before memory is touched, in the order and with the
 * messages of wk_eth_snappy_block_validate. Writes exactly the element's bytes at *opp (<= out_end)
 * and advances both cursors; on an error nothing moves. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static wk_code slow_element(const uint8_t *src, const uint8_t *end, const uint8_t **ipp,
                            uint8_t *dst, uint8_t *out_end, uint8_t **opp, wk_error *err)
{
    const uint8_t *ip = *ipp;
    uint8_t *op = *opp;
    const size_t t = (size_t)(ip - src); /* errors point at the tag */
    const uint8_t tag = *ip++;
    size_t left = (size_t)(end - ip);
    const uint64_t room = (uint64_t)(out_end - op), produced = (uint64_t)(op - dst);
    uint64_t len, off;
    switch (tag & 3) {
    case 0:
        len = (uint64_t)(tag >> 2) + 1;
        if (len > 60) {
            unsigned extra = (unsigned)(len - 60);
            if (left < extra)
                return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                    "literal length field needs %u bytes, %zu left", extra, left);
            len = load_le(ip, extra) + 1; /* 64-bit: 0xFFFFFFFF + 1 does not wrap */
            ip += extra;
            left -= extra;
        }
        if (len > left)
            return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t, "literal of %llu bytes, %zu left",
                                (unsigned long long)len, left);
        if (len > room)
            return wk_error_set(err, WK_ERR_SNAPPY_OVERRUN, t,
                                "literal of %llu bytes, %llu of the declared length left",
                                (unsigned long long)len, (unsigned long long)room);
        memcpy(op, ip, (size_t)len);
        *ipp = ip + len;
        *opp = op + len;
        return WK_OK;
    case 1:
        if (left < 1)
            return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t, "copy-1 missing its offset byte");
        len = 4 + ((tag >> 2) & 7);
        off = ((uint64_t)(tag >> 5) << 8) | ip[0];
        ip += 1;
        break;
    case 2:
        if (left < 2)
            return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                "copy-2 needs 2 offset bytes, %zu left", left);
        len = 1 + (uint64_t)(tag >> 2);
        off = load_le(ip, 2);
        ip += 2;
        break;
    default:
        if (left < 4)
            return wk_error_set(err, WK_ERR_SNAPPY_TRUNCATED, t,
                                "copy-4 needs 4 offset bytes, %zu left", left);
        len = 1 + (uint64_t)(tag >> 2);
        off = load_le(ip, 4);
        ip += 4;
        break;
    }
    if (off == 0 || off > produced)
        return wk_error_set(err, WK_ERR_SNAPPY_BAD_OFFSET, t,
                            "copy offset %llu with %llu bytes produced", (unsigned long long)off,
                            (unsigned long long)produced);
    if (len > room)
        return wk_error_set(err, WK_ERR_SNAPPY_OVERRUN, t,
                            "copy of %llu bytes, %llu of the declared length left",
                            (unsigned long long)len, (unsigned long long)room);
    /* exactly len bytes, with the forward byte-by-byte result of spec 1.4 */
    if (off >= len) {
        memcpy(op, op - off, (size_t)len);
    } else { /* the period once, then doubling copies of whole periods */
        memcpy(op, op - off, (size_t)off);
        for (size_t k = (size_t)off; k < (size_t)len;) {
            size_t m = (size_t)len - k < k ? (size_t)len - k : k;
            memcpy(op + k, op, m);
            k += m;
        }
    }
    *ipp = ip;
    *opp = op + len;
    return WK_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Portable kernel: 8-byte steps
 * ------------------------------------------------------------------------------------------- */
static const uint32_t low_bytes_mask[3] = {0, 0xffu, 0xffffu};
/* Smallest multiple of the offset that is at least 8 (offsets 1..7). */
static const uint8_t pattern_step8[8] = {0, 8, 8, 9, 8, 10, 12, 14};

/* 8 bytes through a register: d and s may overlap (then the bytes read are those before the
 * store). */
static WK_ALWAYS_INLINE void copy8(uint8_t *d, const uint8_t *s)
{
    uint64_t v;
    memcpy(&v, s, 8);
    memcpy(d, &v, 8);
}

static WK_ALWAYS_INLINE void portable_copy(uint8_t *op, const uint8_t *from, size_t len)
{
    for (size_t k = 0; k < len; k += 8) copy8(op + k, from + k);
}

static WK_ALWAYS_INLINE uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static WK_ALWAYS_INLINE void store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

static WK_ALWAYS_INLINE void portable_pattern(uint8_t *op, size_t off, size_t len,
                                              size_t produced)
{
    if (off >= 8) {
        for (size_t k = 0; k < len; k += 8) copy8(op + k, op + k - off);
        return;
    }
    if (produced < 8) { /* early in the output: the first 8 bytes byte by byte, then 8-byte
                           steps of a multiple of the offset, reading only bytes already right */
        const uint8_t *from = op - off;
        for (size_t k = 0; k < 8; k++) op[k] = from[k];
        const size_t step = pattern_step8[off];
        for (size_t k = 8; k < len; k += 8) copy8(op + k, op + k - step);
        return;
    }
    /* The 8-byte pattern in a register, built from the 8 bytes before op (their last `off` are
     * the pattern), then rotated from one 8-byte block to the next: block k + 1 is block k
     * shifted by r = 8 mod off bytes, refilled from its own period. */
    const uint64_t last = load_le64(op - 8);
    uint64_t b = 0;
    for (unsigned x = 0; x < 8; x++) b |= ((last >> (8 * (8 - off + x % off))) & 0xffu) << (8 * x);
    const unsigned r = 8 % (unsigned)off;
    for (size_t k = 0; k < len; k += 8) {
        store_le64(op + k, b);
        b = (b >> (8 * r)) | (b << (8 * (off - r)));
    }
}

#define K_FN decode_portable
#define K_ATTR
#define K_OFFSET(v, k) ((v) & low_bytes_mask[k])
#define K_COPY(op, from, len) portable_copy(op, from, len)
#define K_PATTERN(op, off, len) portable_pattern(op, off, len, produced)
#include "snappy_decode_kernel.h"
#undef K_FN
#undef K_ATTR
#undef K_OFFSET
#undef K_COPY
#undef K_PATTERN

#if WK_SNAPPY_X86

/* ---------------------------------------------------------------------------------------------
 * Pattern tables for the SIMD kernels (built once, before any kernel runs)
 * ------------------------------------------------------------------------------------------- */
/* For an offset d in 1..15: the first 16 bytes of the pattern (x mod d) and the step from one
 * 16-byte block of it to the next ((16 + x) mod d, applied to the current block). */
static _Alignas(16) uint8_t pat16_first[16][16];
static _Alignas(16) uint8_t pat16_next[16][16];
static _Alignas(16) uint8_t pat16_tail[16][16]; /* pat16_first for a load from op - 16 */
/* The same for 32-byte blocks (vpshufb works per 128-bit lane): lane 0 x mod d, lane 1
 * (16 + x) mod d, both taken from a broadcast 16-byte load; then (32 + x) mod d in each lane. */
static _Alignas(32) uint8_t pat32_first[16][32];
static _Alignas(32) uint8_t pat32_next[16][32];
/* pat32_first for a source loaded from op - 16 instead of op - d (the pattern's d bytes are the
 * load's last d: index 16 - d + ...). */
static _Alignas(32) uint8_t pat32_tail[16][32];
/* For an offset d in 1..63: x mod d, indices for one vpermb over 64 bytes. */
static _Alignas(64) uint8_t pat64[64][64];
static _Alignas(64) uint8_t pat64_tail[64][64]; /* pat64 for a load from op - 64 */

static void pattern_tables_build(void)
{
    for (unsigned d = 1; d < 16; d++)
        for (unsigned x = 0; x < 16; x++) {
            pat16_first[d][x] = (uint8_t)(x % d);
            pat16_next[d][x] = (uint8_t)((16 + x) % d);
            pat16_tail[d][x] = (uint8_t)(16 - d + x % d);
            pat32_first[d][x] = (uint8_t)(x % d);
            pat32_first[d][16 + x] = (uint8_t)((16 + x) % d);
            pat32_next[d][x] = pat32_next[d][16 + x] = (uint8_t)((32 + x) % d);
            pat32_tail[d][x] = (uint8_t)(16 - d + x % d);
            pat32_tail[d][16 + x] = (uint8_t)(16 - d + (16 + x) % d);
        }
    for (unsigned d = 1; d < 64; d++)
        for (unsigned x = 0; x < 64; x++) {
            pat64[d][x] = (uint8_t)(x % d);
            pat64_tail[d][x] = (uint8_t)(64 - d + x % d);
        }
}

/* ---------------------------------------------------------------------------------------------
 * bmi2 kernel: BMI2 offsets, SSSE3 16-byte copies and patterns
 * ------------------------------------------------------------------------------------------- */
#define BMI2_ATTR __attribute__((target("bmi2,ssse3")))

BMI2_ATTR static WK_ALWAYS_INLINE void copy16(uint8_t *d, const uint8_t *s)
{
    _mm_storeu_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
}

BMI2_ATTR static WK_ALWAYS_INLINE void bmi2_copy(uint8_t *op, const uint8_t *from, size_t len)
{
    copy16(op, from);
    if (len > 16) {
        copy16(op + 16, from + 16);
        copy16(op + 32, from + 32);
        copy16(op + 48, from + 48);
    }
}

BMI2_ATTR static WK_ALWAYS_INLINE void bmi2_pattern(uint8_t *op, size_t off, size_t len,
                                                    size_t produced)
{
    if (off >= 16) { /* 16-byte steps read only bytes already written */
        for (size_t k = 0; k < len; k += 16) copy16(op + k, op + k - off);
        return;
    }
    /* The pattern's source: the 16 bytes before op when there are 16 (usually inside one
     * earlier 16-byte store, so the load is forwarded from it), else the 16 bytes at op - off. */
    __m128i p;
    if (WK_LIKELY(produced >= 16))
        p = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(op - 16)),
                             _mm_load_si128((const __m128i *)(const void *)pat16_tail[off]));
    else
        p = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(op - off)),
                             _mm_load_si128((const __m128i *)(const void *)pat16_first[off]));
    const __m128i next = _mm_load_si128((const __m128i *)(const void *)pat16_next[off]);
    _mm_storeu_si128((__m128i *)(void *)op, p);
    for (size_t k = 16; k < len; k += 16) {
        p = _mm_shuffle_epi8(p, next);
        _mm_storeu_si128((__m128i *)(void *)(op + k), p);
    }
}

#define K_FN decode_bmi2
#define K_ATTR BMI2_ATTR
#define K_OFFSET(v, k) _bzhi_u32((v), 8 * (k))
#define K_COPY(op, from, len) bmi2_copy(op, from, len)
#define K_PATTERN(op, off, len) bmi2_pattern(op, off, len, produced)
#include "snappy_decode_kernel.h"
#undef K_FN
#undef K_ATTR
#undef K_COPY
#undef K_PATTERN

/* ---------------------------------------------------------------------------------------------
 * avx2 kernel: BMI2 offsets, AVX2 32-byte copies and patterns
 * ------------------------------------------------------------------------------------------- */
#define AVX2_ATTR __attribute__((target("avx2,bmi2")))

AVX2_ATTR static WK_ALWAYS_INLINE void copy32(uint8_t *d, const uint8_t *s)
{
    _mm256_storeu_si256((__m256i *)(void *)d,
                        _mm256_loadu_si256((const __m256i *)(const void *)s));
}

AVX2_ATTR static WK_ALWAYS_INLINE void avx2_copy(uint8_t *op, const uint8_t *from, size_t len)
{
    (void)len; /* always 64 bytes: no branch on the length */
    copy32(op, from);
    copy32(op + 32, from + 32);
}

AVX2_ATTR static WK_ALWAYS_INLINE void avx2_pattern(uint8_t *op, size_t off, size_t len,
                                                    size_t produced)
{
    if (off >= 32) { /* len > 32: two 32-byte steps, the second reads bytes already written */
        copy32(op, op - off);
        copy32(op + 32, op + 32 - off);
        return;
    }
    if (off >= 16) {
        for (size_t k = 0; k < len; k += 16)
            _mm_storeu_si128((__m128i *)(void *)(op + k),
                             _mm_loadu_si128((const __m128i *)(const void *)(op + k - off)));
        return;
    }
    __m256i p;
    if (WK_LIKELY(produced >= 16)) {
        /* the 16 bytes before op: inside the previous element's last store in the common case
         * (so the load is forwarded from it instead of waiting for it to reach the cache) */
        const __m256i src = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)(op - 16)));
        p = _mm256_shuffle_epi8(src,
                                _mm256_load_si256((const __m256i *)(const void *)pat32_tail[off]));
    } else {
        const __m256i src = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)(op - off)));
        p = _mm256_shuffle_epi8(src,
                                _mm256_load_si256((const __m256i *)(const void *)pat32_first[off]));
    }
    _mm256_storeu_si256((__m256i *)(void *)op, p);
    if (len > 32) {
        p = _mm256_shuffle_epi8(p, _mm256_load_si256((const __m256i *)(const void *)pat32_next[off]));
        _mm256_storeu_si256((__m256i *)(void *)(op + 32), p);
    }
}

#define K_FN decode_avx2
#define K_ATTR AVX2_ATTR
#define K_COPY(op, from, len) avx2_copy(op, from, len)
#define K_PATTERN(op, off, len) avx2_pattern(op, off, len, produced)
#include "snappy_decode_kernel.h"
#undef K_FN
#undef K_ATTR
#undef K_COPY
#undef K_PATTERN

/* ---------------------------------------------------------------------------------------------
 * avx512 kernel: BMI2 offsets, AVX-512 64-byte copies, vpermb patterns
 * ------------------------------------------------------------------------------------------- */
#define AVX512_ATTR __attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2")))

AVX512_ATTR static WK_ALWAYS_INLINE void avx512_copy(uint8_t *op, const uint8_t *from, size_t len)
{
    (void)len;
    _mm512_storeu_si512((void *)op, _mm512_loadu_si512((const void *)from));
}

AVX512_ATTR static WK_ALWAYS_INLINE void avx512_pattern(uint8_t *op, size_t off, size_t len,
                                                        size_t produced)
{
    (void)len; /* off < len <= 64: one permutation of 64 bytes before op (or from op - off) */
    __m512i p;
    if (WK_LIKELY(produced >= 64))
        p = _mm512_permutexvar_epi8(_mm512_load_si512((const void *)pat64_tail[off]),
                                    _mm512_loadu_si512((const void *)(op - 64)));
    else
        p = _mm512_permutexvar_epi8(_mm512_load_si512((const void *)pat64[off]),
                                    _mm512_loadu_si512((const void *)(op - off)));
    _mm512_storeu_si512((void *)op, p);
}

#define K_FN decode_avx512
#define K_ATTR AVX512_ATTR
#define K_COPY(op, from, len) avx512_copy(op, from, len)
#define K_PATTERN(op, off, len) avx512_pattern(op, off, len, produced)
#include "snappy_decode_kernel.h"
#undef K_FN
#undef K_ATTR
#undef K_OFFSET
#undef K_COPY
#undef K_PATTERN
#endif /* WK_SNAPPY_X86 */

/* ---------------------------------------------------------------------------------------------
 * Kernel selection
 * ------------------------------------------------------------------------------------------- */
enum { KERNEL_PORTABLE, KERNEL_BMI2, KERNEL_AVX2, KERNEL_AVX512, KERNEL_COUNT };
static const char *const kernel_names[KERNEL_COUNT] = {"portable", "bmi2", "avx2", "avx512"};

typedef wk_code (*kernel_fn)(const uint8_t *src, size_t n, size_t start, uint8_t *dst, size_t want,
                             wk_error *err);
static kernel_fn kernel_current;
static int kernel_current_id;
static int kernel_cpu[KERNEL_COUNT]; /* 1 when the CPU (and OS) can run the kernel */
static once_flag kernel_once = ONCE_FLAG_INIT;

static kernel_fn kernel_of(int id)
{
    switch (id) {
#if WK_SNAPPY_X86
    case KERNEL_BMI2: return decode_bmi2;
    case KERNEL_AVX2: return decode_avx2;
    case KERNEL_AVX512: return decode_avx512;
#endif
    default: return decode_portable;
    }
}

static void kernel_init(void)
{
    for (unsigned t = 0; t < 256; t++) {
        unsigned m = t >> 2, v;
        switch (t & 3) {
        case 0: v = m < 60 ? (m + 1) | (m + 1) << TAG_OFF_SHIFT : TAG_SLOW; break;
        case 1: v = (4 + (m & 7)) | ((t >> 5) << 8) << TAG_OFF_SHIFT; break;
        case 2: v = m + 1; break;
        default: v = (m + 1) | TAG_SLOW; break;
        }
        tag_table[t] = v;
    }
    kernel_cpu[KERNEL_PORTABLE] = 1;
#if WK_SNAPPY_X86
    pattern_tables_build();
    __builtin_cpu_init();
    kernel_cpu[KERNEL_BMI2] = __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("ssse3");
    kernel_cpu[KERNEL_AVX2] = kernel_cpu[KERNEL_BMI2] && __builtin_cpu_supports("avx2");
    kernel_cpu[KERNEL_AVX512] = kernel_cpu[KERNEL_AVX2] && __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vbmi");
#endif
    int pick = KERNEL_PORTABLE;
    for (int k = KERNEL_BMI2; k <= KERNEL_AVX2; k++) /* the default: see the header comment */
        if (kernel_cpu[k]) pick = k;
    kernel_current_id = pick;
    kernel_current = kernel_of(pick);
}

/* Test hooks (not in the public header; declared where used, like wk_blake3__set_backend):
 * wk_eth_snappy__set_kernel forces kernel `id` (0 portable, 1 bmi2, 2 avx2, 3 avx512; -1 = the
 * default choice) for every later decode, lowered to the best kernel at or below it that the CPU
 * runs, and returns the kernel now in use. Not thread-safe: for tests, fuzzing and benchmarks.
 * wk_eth_snappy__kernel_name names a kernel id (NULL outside 0..3). */
int wk_eth_snappy__set_kernel(int id);
const char *wk_eth_snappy__kernel_name(int id);
int wk_eth_snappy__kernel(void);

int wk_eth_snappy__set_kernel(int id)
{
    call_once(&kernel_once, kernel_init);
    if (id < 0) {
        int pick = KERNEL_PORTABLE;
        for (int k = KERNEL_BMI2; k <= KERNEL_AVX2; k++)
            if (kernel_cpu[k]) pick = k;
        id = pick;
    }
    if (id >= KERNEL_COUNT) id = KERNEL_COUNT - 1;
    while (id > 0 && !kernel_cpu[id]) id--;
    kernel_current_id = id;
    kernel_current = kernel_of(id);
    return id;
}

const char *wk_eth_snappy__kernel_name(int id)
{
    return id >= 0 && id < KERNEL_COUNT ? kernel_names[id] : NULL;
}

int wk_eth_snappy__kernel(void)
{
    call_once(&kernel_once, kernel_init);
    return kernel_current_id;
}

wk_code wk_eth_snappy_decode_body(const uint8_t *src, size_t n, size_t start, uint8_t *dst, size_t want,
                              wk_error *err)
{
    call_once(&kernel_once, kernel_init);
    return kernel_current(src, n, start, dst, want, err);
}
