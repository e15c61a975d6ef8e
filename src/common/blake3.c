/* BLAKE3: hash, keyed hash, derive key and extended output, written from the BLAKE3 specification.
 *
 * Structure (the spec's reference design):
 *   - compress(): the 7-round compression function, fully unrolled, on a 64-byte block;
 *   - the chunk state: up to 16 blocks of one 1024-byte chunk, CHUNK_START on the first block and
 *     CHUNK_END on the last;
 *   - the chaining-value stack of completed subtrees, merged into PARENT nodes as the chunk
 *     counter carries (a subtree is merged when its sibling is complete, i.e. by the trailing
 *     zeros of the chunk count; the merge is done lazily, when the next input arrives, so that the
 *     last node can still be finalized with ROOT);
 *   - the root output: the ROOT-flagged compression of the last node, run with an output-block
 *     counter for extended output.
 *
 * Speed: when whole chunks are available, update() hashes aligned power-of-two subtrees of up to
 * WK_B3_MAX_SUBTREE chunks at once: every chunk of the subtree, then every parent level, through
 * hash_many(), which runs several independent inputs in parallel with SSE4.1 (4 lanes), AVX2
 * (8 lanes) or AVX-512 (16 lanes) when the CPU has them (chosen at run time), and otherwise the
 * portable kernel. The portable kernel is the reference; the tests compare every path with it.
 */
#include <wirekit/common.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define WK_B3_X86 1
#include <immintrin.h>
#else
#define WK_B3_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define WK_B3_INLINE static inline __attribute__((always_inline))
#else
#define WK_B3_INLINE static inline
#endif
/* Small fixed loops over words and lanes are unrolled so their arrays live in registers (-O2
 * alone leaves some of them as loops over memory). */
#if defined(__clang__)
#define B3_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define B3_UNROLL _Pragma("GCC unroll 16")
#else
#define B3_UNROLL
#endif

/* Domain flags (spec, table 3). */
enum {
    CHUNK_START = 1u << 0,
    CHUNK_END = 1u << 1,
    PARENT = 1u << 2,
    ROOT = 1u << 3,
    KEYED_HASH = 1u << 4,
    DERIVE_KEY_CONTEXT = 1u << 5,
    DERIVE_KEY_MATERIAL = 1u << 6
};

/* Largest subtree (in chunks, a power of two) hashed at once by update(). */
#define WK_B3_MAX_SUBTREE 128

static const uint32_t IV[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                               0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

/* The message schedule: round r uses message word SCHED_r[i] where the spec's permutation
 * (2,6,3,10,7,0,4,13,1,11,12,5,9,14,15,8) has been applied r times. */
#define SCHED_0 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
#define SCHED_1 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8
#define SCHED_2 3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1
#define SCHED_3 10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6
#define SCHED_4 12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4
#define SCHED_5 9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7
#define SCHED_6 11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13

/* One round over the state v0..v15 (local variables at the expansion site) with the message words
 * MSG(m, i), written once for every lane width: MSG is B3_MSG_ARRAY (words m[i]) or B3_MSG_NAMED
 * (words in locals m0..m15). G_ must be defined by the user of the macro. */
#define B3_MSG_ARRAY(m, i) m[i]
#define B3_MSG_NAMED(m, i) m##i
#define B3_ROUND(MSG, m, ...) B3_ROUND_(MSG, m, __VA_ARGS__)
#define B3_ROUND_(MSG, m, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15)    \
    do {                                                                                           \
        G_(v0, v4, v8, v12, MSG(m, s0), MSG(m, s1));                                               \
        G_(v1, v5, v9, v13, MSG(m, s2), MSG(m, s3));                                               \
        G_(v2, v6, v10, v14, MSG(m, s4), MSG(m, s5));                                              \
        G_(v3, v7, v11, v15, MSG(m, s6), MSG(m, s7));                                              \
        G_(v0, v5, v10, v15, MSG(m, s8), MSG(m, s9));                                              \
        G_(v1, v6, v11, v12, MSG(m, s10), MSG(m, s11));                                            \
        G_(v2, v7, v8, v13, MSG(m, s12), MSG(m, s13));                                             \
        G_(v3, v4, v9, v14, MSG(m, s14), MSG(m, s15));                                             \
    } while (0)
#define B3_ROUNDS(MSG, m)                                                                          \
    do {                                                                                           \
        B3_ROUND(MSG, m, SCHED_0);                                                                 \
        B3_ROUND(MSG, m, SCHED_1);                                                                 \
        B3_ROUND(MSG, m, SCHED_2);                                                                 \
        B3_ROUND(MSG, m, SCHED_3);                                                                 \
        B3_ROUND(MSG, m, SCHED_4);                                                                 \
        B3_ROUND(MSG, m, SCHED_5);                                                                 \
        B3_ROUND(MSG, m, SCHED_6);                                                                 \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * Portable kernel
 * ------------------------------------------------------------------------------------------- */

WK_B3_INLINE uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

WK_B3_INLINE void store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

WK_B3_INLINE uint32_t rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void words_from_bytes(const uint8_t *src, uint32_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = load32(src + 4 * i);
}

static void bytes_from_words(const uint32_t *src, uint8_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) store32(dst + 4 * i, src[i]);
}

#define G_(a, b, c, d, x, y)                                                                       \
    do {                                                                                           \
        a = a + (x) + b;                                                                           \
        d = rotr32(d ^ a, 16);                                                                     \
        c = c + d;                                                                                 \
        b = rotr32(b ^ c, 12);                                                                     \
        a = a + (y) + b;                                                                           \
        d = rotr32(d ^ a, 8);                                                                      \
        c = c + d;                                                                                 \
        b = rotr32(b ^ c, 7);                                                                      \
    } while (0)

/* The compression function: runs the 7 rounds and leaves the 16 state words in out[]. */
WK_B3_INLINE void compress_state(const uint32_t cv[8], const uint8_t block[WK_BLAKE3_BLOCK_LEN],
                                 uint32_t block_len, uint64_t counter, uint32_t flags,
                                 uint32_t out[16])
{
    uint32_t m[16];
    B3_UNROLL
    for (int i = 0; i < 16; i++) m[i] = load32(block + 4 * i);
    uint32_t v0 = cv[0], v1 = cv[1], v2 = cv[2], v3 = cv[3];
    uint32_t v4 = cv[4], v5 = cv[5], v6 = cv[6], v7 = cv[7];
    uint32_t v8 = IV[0], v9 = IV[1], v10 = IV[2], v11 = IV[3];
    uint32_t v12 = (uint32_t)counter, v13 = (uint32_t)(counter >> 32), v14 = block_len, v15 = flags;
    B3_ROUNDS(B3_MSG_ARRAY, m);
    out[0] = v0; out[1] = v1; out[2] = v2; out[3] = v3;
    out[4] = v4; out[5] = v5; out[6] = v6; out[7] = v7;
    out[8] = v8; out[9] = v9; out[10] = v10; out[11] = v11;
    out[12] = v12; out[13] = v13; out[14] = v14; out[15] = v15;
}
#undef G_

/* cv <- first half of compress(cv, block, ...) (the chaining value). */
WK_B3_INLINE void compress_in_place(uint32_t cv[8], const uint8_t block[WK_BLAKE3_BLOCK_LEN],
                                    uint32_t block_len, uint64_t counter, uint32_t flags)
{
    uint32_t s[16];
    compress_state(cv, block, block_len, counter, flags, s);
    B3_UNROLL
    for (int i = 0; i < 8; i++) cv[i] = s[i] ^ s[i + 8];
}

/* The full 64-byte output of compress(), for extended (root) output. */
static void compress_xof(const uint32_t cv[8], const uint8_t block[WK_BLAKE3_BLOCK_LEN],
                         uint32_t block_len, uint64_t counter, uint32_t flags, uint8_t out[64])
{
    uint32_t s[16];
    compress_state(cv, block, block_len, counter, flags, s);
    B3_UNROLL
    for (int i = 0; i < 8; i++) {
        store32(out + 4 * i, s[i] ^ s[i + 8]);
        store32(out + 32 + 4 * i, s[i + 8] ^ cv[i]);
    }
}

/* hash_many: n independent inputs, input i at in + i*stride, each `blocks` whole 64-byte blocks,
 * each hashed from the key to a 32-byte chaining value written to out + 32*i. Input i uses
 * counter + i when inc_counter (chunks), else counter (parents). The first block gets
 * flags|flags_start, the last flags|flags_end. */
typedef struct hash_many_args {
    const uint32_t *key;
    size_t stride;
    size_t blocks;
    uint64_t counter;
    bool inc_counter;
    uint32_t flags, flags_start, flags_end;
} hash_many_args;

static void hash_one_portable(const uint8_t *in, const hash_many_args *a, uint64_t counter,
                              uint8_t out[32])
{
    uint32_t cv[8];
    memcpy(cv, a->key, sizeof cv);
    for (size_t b = 0; b < a->blocks; b++) {
        uint32_t f = a->flags;
        if (b == 0) f |= a->flags_start;
        if (b + 1 == a->blocks) f |= a->flags_end;
        compress_in_place(cv, in + b * WK_BLAKE3_BLOCK_LEN, WK_BLAKE3_BLOCK_LEN, counter, f);
    }
    bytes_from_words(cv, out, 8);
}

/* ---------------------------------------------------------------------------------------------
 * x86 SIMD kernels: lane j of every vector belongs to input j ("transposed" layout), so the
 * rounds are the portable rounds on vectors. Loads and stores are unaligned intrinsics.
 * ------------------------------------------------------------------------------------------- */
#if WK_B3_X86

/* Common shape of the kernels below (L lanes): state words h0..h7 start as the key; for each
 * block, message words m0..m15 are loaded from the L inputs and transposed, the rounds run on
 * v0..v15, and h_i = v_i ^ v_{i+8}; at the end h0..h7 are transposed back so that each input's
 * 32-byte chaining value is contiguous. Inputs are read 4 blocks ahead with prefetch, staying
 * within each input. */

/* ---- SSE4.1, 4 lanes ---- */
#define B3_TARGET_SSE41 __attribute__((target("sse4.1")))

B3_TARGET_SSE41 static inline __m128i rot16_128(__m128i x)
{
    return _mm_shuffle_epi8(x, _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
}
B3_TARGET_SSE41 static inline __m128i rot8_128(__m128i x)
{
    return _mm_shuffle_epi8(x, _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}
#define ROT12_128(x) _mm_or_si128(_mm_srli_epi32((x), 12), _mm_slli_epi32((x), 20))
#define ROT7_128(x) _mm_or_si128(_mm_srli_epi32((x), 7), _mm_slli_epi32((x), 25))

#define G_(a, b, c, d, x, y)                                                                       \
    do {                                                                                           \
        a = _mm_add_epi32(_mm_add_epi32(a, (x)), b);                                               \
        d = rot16_128(_mm_xor_si128(d, a));                                                        \
        c = _mm_add_epi32(c, d);                                                                   \
        b = ROT12_128(_mm_xor_si128(b, c));                                                        \
        a = _mm_add_epi32(_mm_add_epi32(a, (y)), b);                                               \
        d = rot8_128(_mm_xor_si128(d, a));                                                         \
        c = _mm_add_epi32(c, d);                                                                   \
        b = ROT7_128(_mm_xor_si128(b, c));                                                         \
    } while (0)

/* 4x4 transpose of 32-bit words (within each 128-bit lane; used for 128 and 512 bits). */
#define TRANSPOSE4_128(r0, r1, r2, r3)                                                             \
    do {                                                                                           \
        __m128i t0_ = _mm_unpacklo_epi32(r0, r1), t1_ = _mm_unpackhi_epi32(r0, r1);                \
        __m128i t2_ = _mm_unpacklo_epi32(r2, r3), t3_ = _mm_unpackhi_epi32(r2, r3);                \
        r0 = _mm_unpacklo_epi64(t0_, t2_);                                                         \
        r1 = _mm_unpackhi_epi64(t0_, t2_);                                                         \
        r2 = _mm_unpacklo_epi64(t1_, t3_);                                                         \
        r3 = _mm_unpackhi_epi64(t1_, t3_);                                                         \
    } while (0)

#define LOAD_128(p, off) _mm_loadu_si128((const __m128i *)(const void *)((p) + (off)))

B3_TARGET_SSE41 static void hash4_sse41(const uint8_t *const *L, const hash_many_args *a,
                                        uint64_t counter, uint8_t *out)
{
    __m128i h0 = _mm_set1_epi32((int)a->key[0]), h1 = _mm_set1_epi32((int)a->key[1]);
    __m128i h2 = _mm_set1_epi32((int)a->key[2]), h3 = _mm_set1_epi32((int)a->key[3]);
    __m128i h4 = _mm_set1_epi32((int)a->key[4]), h5 = _mm_set1_epi32((int)a->key[5]);
    __m128i h6 = _mm_set1_epi32((int)a->key[6]), h7 = _mm_set1_epi32((int)a->key[7]);
    const uint64_t d = a->inc_counter ? 1 : 0;
    const __m128i clo = _mm_setr_epi32((int)(uint32_t)counter, (int)(uint32_t)(counter + d),
                                       (int)(uint32_t)(counter + 2 * d),
                                       (int)(uint32_t)(counter + 3 * d));
    const __m128i chi = _mm_setr_epi32(
        (int)(uint32_t)(counter >> 32), (int)(uint32_t)((counter + d) >> 32),
        (int)(uint32_t)((counter + 2 * d) >> 32), (int)(uint32_t)((counter + 3 * d) >> 32));
    for (size_t b = 0; b < a->blocks; b++) {
        uint32_t f = a->flags;
        if (b == 0) f |= a->flags_start;
        if (b + 1 == a->blocks) f |= a->flags_end;
        const size_t off = b * WK_BLAKE3_BLOCK_LEN;
        if (b + 4 < a->blocks)
            for (int j = 0; j < 4; j++) _mm_prefetch((const char *)(L[j] + off + 256), _MM_HINT_T0);
        __m128i m0 = LOAD_128(L[0] + off, 0), m1 = LOAD_128(L[1] + off, 0), m2 = LOAD_128(L[2] + off, 0);
        __m128i m3 = LOAD_128(L[3] + off, 0);
        __m128i m4 = LOAD_128(L[0] + off, 16), m5 = LOAD_128(L[1] + off, 16), m6 = LOAD_128(L[2] + off, 16);
        __m128i m7 = LOAD_128(L[3] + off, 16);
        __m128i m8 = LOAD_128(L[0] + off, 32), m9 = LOAD_128(L[1] + off, 32), m10 = LOAD_128(L[2] + off, 32);
        __m128i m11 = LOAD_128(L[3] + off, 32);
        __m128i m12 = LOAD_128(L[0] + off, 48), m13 = LOAD_128(L[1] + off, 48), m14 = LOAD_128(L[2] + off, 48);
        __m128i m15 = LOAD_128(L[3] + off, 48);
        TRANSPOSE4_128(m0, m1, m2, m3);
        TRANSPOSE4_128(m4, m5, m6, m7);
        TRANSPOSE4_128(m8, m9, m10, m11);
        TRANSPOSE4_128(m12, m13, m14, m15);
        __m128i v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5, v6 = h6, v7 = h7;
        __m128i v8 = _mm_set1_epi32((int)IV[0]), v9 = _mm_set1_epi32((int)IV[1]);
        __m128i v10 = _mm_set1_epi32((int)IV[2]), v11 = _mm_set1_epi32((int)IV[3]);
        __m128i v12 = clo, v13 = chi, v14 = _mm_set1_epi32(WK_BLAKE3_BLOCK_LEN);
        __m128i v15 = _mm_set1_epi32((int)f);
        B3_ROUNDS(B3_MSG_NAMED, m);
        h0 = _mm_xor_si128(v0, v8); h1 = _mm_xor_si128(v1, v9);
        h2 = _mm_xor_si128(v2, v10); h3 = _mm_xor_si128(v3, v11);
        h4 = _mm_xor_si128(v4, v12); h5 = _mm_xor_si128(v5, v13);
        h6 = _mm_xor_si128(v6, v14); h7 = _mm_xor_si128(v7, v15);
    }
    TRANSPOSE4_128(h0, h1, h2, h3);
    TRANSPOSE4_128(h4, h5, h6, h7);
    _mm_storeu_si128((__m128i *)(void *)(out + 0), h0);
    _mm_storeu_si128((__m128i *)(void *)(out + 16), h4);
    _mm_storeu_si128((__m128i *)(void *)(out + 32), h1);
    _mm_storeu_si128((__m128i *)(void *)(out + 48), h5);
    _mm_storeu_si128((__m128i *)(void *)(out + 64), h2);
    _mm_storeu_si128((__m128i *)(void *)(out + 80), h6);
    _mm_storeu_si128((__m128i *)(void *)(out + 96), h3);
    _mm_storeu_si128((__m128i *)(void *)(out + 112), h7);
}
#undef G_

/* ---- AVX2, 8 lanes ---- */
#define B3_TARGET_AVX2 __attribute__((target("avx2")))

B3_TARGET_AVX2 static inline __m256i rot16_256(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                                   2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
}
B3_TARGET_AVX2 static inline __m256i rot8_256(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12,
                                                   1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}
#define ROT12_256(x) _mm256_or_si256(_mm256_srli_epi32((x), 12), _mm256_slli_epi32((x), 20))
#define ROT7_256(x) _mm256_or_si256(_mm256_srli_epi32((x), 7), _mm256_slli_epi32((x), 25))

#define G_(a, b, c, d, x, y)                                                                       \
    do {                                                                                           \
        a = _mm256_add_epi32(_mm256_add_epi32(a, (x)), b);                                         \
        d = rot16_256(_mm256_xor_si256(d, a));                                                     \
        c = _mm256_add_epi32(c, d);                                                                \
        b = ROT12_256(_mm256_xor_si256(b, c));                                                     \
        a = _mm256_add_epi32(_mm256_add_epi32(a, (y)), b);                                         \
        d = rot8_256(_mm256_xor_si256(d, a));                                                      \
        c = _mm256_add_epi32(c, d);                                                                \
        b = ROT7_256(_mm256_xor_si256(b, c));                                                      \
    } while (0)

/* 8x8 transpose of 32-bit words: afterwards r_i holds word i of each former row. */
#define TRANSPOSE8_256(r0, r1, r2, r3, r4, r5, r6, r7)                                             \
    do {                                                                                           \
        __m256i t0_ = _mm256_unpacklo_epi32(r0, r1), t1_ = _mm256_unpackhi_epi32(r0, r1);          \
        __m256i t2_ = _mm256_unpacklo_epi32(r2, r3), t3_ = _mm256_unpackhi_epi32(r2, r3);          \
        __m256i t4_ = _mm256_unpacklo_epi32(r4, r5), t5_ = _mm256_unpackhi_epi32(r4, r5);          \
        __m256i t6_ = _mm256_unpacklo_epi32(r6, r7), t7_ = _mm256_unpackhi_epi32(r6, r7);          \
        __m256i u0_ = _mm256_unpacklo_epi64(t0_, t2_), u1_ = _mm256_unpackhi_epi64(t0_, t2_);      \
        __m256i u2_ = _mm256_unpacklo_epi64(t1_, t3_), u3_ = _mm256_unpackhi_epi64(t1_, t3_);      \
        __m256i u4_ = _mm256_unpacklo_epi64(t4_, t6_), u5_ = _mm256_unpackhi_epi64(t4_, t6_);      \
        __m256i u6_ = _mm256_unpacklo_epi64(t5_, t7_), u7_ = _mm256_unpackhi_epi64(t5_, t7_);      \
        r0 = _mm256_permute2x128_si256(u0_, u4_, 0x20);                                            \
        r1 = _mm256_permute2x128_si256(u1_, u5_, 0x20);                                            \
        r2 = _mm256_permute2x128_si256(u2_, u6_, 0x20);                                            \
        r3 = _mm256_permute2x128_si256(u3_, u7_, 0x20);                                            \
        r4 = _mm256_permute2x128_si256(u0_, u4_, 0x31);                                            \
        r5 = _mm256_permute2x128_si256(u1_, u5_, 0x31);                                            \
        r6 = _mm256_permute2x128_si256(u2_, u6_, 0x31);                                            \
        r7 = _mm256_permute2x128_si256(u3_, u7_, 0x31);                                            \
    } while (0)

#define LOAD_256(p, off) _mm256_loadu_si256((const __m256i *)(const void *)((p) + (off)))
#define STORE_256(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), (x))

B3_TARGET_AVX2 static void hash8_avx2(const uint8_t *const *L, const hash_many_args *a,
                                      uint64_t counter, uint8_t *out)
{
    __m256i h0 = _mm256_set1_epi32((int)a->key[0]), h1 = _mm256_set1_epi32((int)a->key[1]);
    __m256i h2 = _mm256_set1_epi32((int)a->key[2]), h3 = _mm256_set1_epi32((int)a->key[3]);
    __m256i h4 = _mm256_set1_epi32((int)a->key[4]), h5 = _mm256_set1_epi32((int)a->key[5]);
    __m256i h6 = _mm256_set1_epi32((int)a->key[6]), h7 = _mm256_set1_epi32((int)a->key[7]);
    uint32_t lo[8], hi[8];
    for (int j = 0; j < 8; j++) {
        uint64_t c = counter + (a->inc_counter ? (uint64_t)j : 0);
        lo[j] = (uint32_t)c;
        hi[j] = (uint32_t)(c >> 32);
    }
    const __m256i clo = LOAD_256((const uint8_t *)lo, 0), chi = LOAD_256((const uint8_t *)hi, 0);
    for (size_t b = 0; b < a->blocks; b++) {
        uint32_t f = a->flags;
        if (b == 0) f |= a->flags_start;
        if (b + 1 == a->blocks) f |= a->flags_end;
        const size_t off = b * WK_BLAKE3_BLOCK_LEN;
        if (b + 4 < a->blocks)
            for (int j = 0; j < 8; j++) _mm_prefetch((const char *)(L[j] + off + 256), _MM_HINT_T0);
        __m256i m0 = LOAD_256(L[0] + off, 0), m1 = LOAD_256(L[1] + off, 0), m2 = LOAD_256(L[2] + off, 0);
        __m256i m3 = LOAD_256(L[3] + off, 0), m4 = LOAD_256(L[4] + off, 0), m5 = LOAD_256(L[5] + off, 0);
        __m256i m6 = LOAD_256(L[6] + off, 0), m7 = LOAD_256(L[7] + off, 0);
        __m256i m8 = LOAD_256(L[0] + off, 32), m9 = LOAD_256(L[1] + off, 32), m10 = LOAD_256(L[2] + off, 32);
        __m256i m11 = LOAD_256(L[3] + off, 32), m12 = LOAD_256(L[4] + off, 32);
        __m256i m13 = LOAD_256(L[5] + off, 32), m14 = LOAD_256(L[6] + off, 32);
        __m256i m15 = LOAD_256(L[7] + off, 32);
        TRANSPOSE8_256(m0, m1, m2, m3, m4, m5, m6, m7);
        TRANSPOSE8_256(m8, m9, m10, m11, m12, m13, m14, m15);
        __m256i v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5, v6 = h6, v7 = h7;
        __m256i v8 = _mm256_set1_epi32((int)IV[0]), v9 = _mm256_set1_epi32((int)IV[1]);
        __m256i v10 = _mm256_set1_epi32((int)IV[2]), v11 = _mm256_set1_epi32((int)IV[3]);
        __m256i v12 = clo, v13 = chi, v14 = _mm256_set1_epi32(WK_BLAKE3_BLOCK_LEN);
        __m256i v15 = _mm256_set1_epi32((int)f);
        B3_ROUNDS(B3_MSG_NAMED, m);
        h0 = _mm256_xor_si256(v0, v8); h1 = _mm256_xor_si256(v1, v9);
        h2 = _mm256_xor_si256(v2, v10); h3 = _mm256_xor_si256(v3, v11);
        h4 = _mm256_xor_si256(v4, v12); h5 = _mm256_xor_si256(v5, v13);
        h6 = _mm256_xor_si256(v6, v14); h7 = _mm256_xor_si256(v7, v15);
    }
    TRANSPOSE8_256(h0, h1, h2, h3, h4, h5, h6, h7);
    STORE_256(out + 0, h0); STORE_256(out + 32, h1); STORE_256(out + 64, h2);
    STORE_256(out + 96, h3); STORE_256(out + 128, h4); STORE_256(out + 160, h5);
    STORE_256(out + 192, h6); STORE_256(out + 224, h7);
}
#undef G_

/* ---- AVX-512F, 16 lanes (native 32-bit rotates) ---- */
#define B3_TARGET_AVX512 __attribute__((target("avx512f")))

#define G_(a, b, c, d, x, y)                                                                       \
    do {                                                                                           \
        a = _mm512_add_epi32(_mm512_add_epi32(a, (x)), b);                                         \
        d = _mm512_ror_epi32(_mm512_xor_si512(d, a), 16);                                          \
        c = _mm512_add_epi32(c, d);                                                                \
        b = _mm512_ror_epi32(_mm512_xor_si512(b, c), 12);                                          \
        a = _mm512_add_epi32(_mm512_add_epi32(a, (y)), b);                                         \
        d = _mm512_ror_epi32(_mm512_xor_si512(d, a), 8);                                           \
        c = _mm512_add_epi32(c, d);                                                                \
        b = _mm512_ror_epi32(_mm512_xor_si512(b, c), 7);                                           \
    } while (0)

/* 4x4 transposes of 32-bit words inside each 128-bit lane: afterwards, lane l of r_c holds word
 * 4l+c of the four former rows. */
#define TRANSPOSE4_512(r0, r1, r2, r3)                                                             \
    do {                                                                                           \
        __m512i t0_ = _mm512_unpacklo_epi32(r0, r1), t1_ = _mm512_unpackhi_epi32(r0, r1);          \
        __m512i t2_ = _mm512_unpacklo_epi32(r2, r3), t3_ = _mm512_unpackhi_epi32(r2, r3);          \
        r0 = _mm512_unpacklo_epi64(t0_, t2_);                                                      \
        r1 = _mm512_unpackhi_epi64(t0_, t2_);                                                      \
        r2 = _mm512_unpacklo_epi64(t1_, t3_);                                                      \
        r3 = _mm512_unpackhi_epi64(t1_, t3_);                                                      \
    } while (0)
/* 4x4 transpose of 128-bit lanes: afterwards g_k holds lane k of g0, g1, g2, g3 in order. */
#define TRANSPOSE_LANES_512(g0, g1, g2, g3)                                                        \
    do {                                                                                           \
        __m512i e0_ = _mm512_shuffle_i32x4(g0, g1, 0x88); /* g0.0 g0.2 g1.0 g1.2 */                \
        __m512i e1_ = _mm512_shuffle_i32x4(g0, g1, 0xDD); /* g0.1 g0.3 g1.1 g1.3 */                \
        __m512i e2_ = _mm512_shuffle_i32x4(g2, g3, 0x88); /* g2.0 g2.2 g3.0 g3.2 */                \
        __m512i e3_ = _mm512_shuffle_i32x4(g2, g3, 0xDD); /* g2.1 g2.3 g3.1 g3.3 */                \
        g0 = _mm512_shuffle_i32x4(e0_, e2_, 0x88);        /* g0.0 g1.0 g2.0 g3.0 */                \
        g1 = _mm512_shuffle_i32x4(e1_, e3_, 0x88);        /* g0.1 g1.1 g2.1 g3.1 */                \
        g2 = _mm512_shuffle_i32x4(e0_, e2_, 0xDD);        /* g0.2 g1.2 g2.2 g3.2 */                \
        g3 = _mm512_shuffle_i32x4(e1_, e3_, 0xDD);        /* g0.3 g1.3 g2.3 g3.3 */                \
    } while (0)
/* 16x16 transpose of 32-bit words: afterwards r_i holds word i of each former row. */
#define TRANSPOSE16_512(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15)     \
    do {                                                                                           \
        TRANSPOSE4_512(r0, r1, r2, r3);                                                            \
        TRANSPOSE4_512(r4, r5, r6, r7);                                                            \
        TRANSPOSE4_512(r8, r9, r10, r11);                                                          \
        TRANSPOSE4_512(r12, r13, r14, r15);                                                        \
        TRANSPOSE_LANES_512(r0, r4, r8, r12);                                                      \
        TRANSPOSE_LANES_512(r1, r5, r9, r13);                                                      \
        TRANSPOSE_LANES_512(r2, r6, r10, r14);                                                     \
        TRANSPOSE_LANES_512(r3, r7, r11, r15);                                                     \
    } while (0)

#define LOAD_512(p, off) _mm512_loadu_si512((const void *)((p) + (off)))
#define STORE_LOW_256(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_castsi512_si256(x))

B3_TARGET_AVX512 static void hash16_avx512(const uint8_t *const *L, const hash_many_args *a,
                                          uint64_t counter, uint8_t *out)
{
    __m512i h0 = _mm512_set1_epi32((int)a->key[0]), h1 = _mm512_set1_epi32((int)a->key[1]);
    __m512i h2 = _mm512_set1_epi32((int)a->key[2]), h3 = _mm512_set1_epi32((int)a->key[3]);
    __m512i h4 = _mm512_set1_epi32((int)a->key[4]), h5 = _mm512_set1_epi32((int)a->key[5]);
    __m512i h6 = _mm512_set1_epi32((int)a->key[6]), h7 = _mm512_set1_epi32((int)a->key[7]);
    uint32_t lo[16], hi[16];
    for (int j = 0; j < 16; j++) {
        uint64_t c = counter + (a->inc_counter ? (uint64_t)j : 0);
        lo[j] = (uint32_t)c;
        hi[j] = (uint32_t)(c >> 32);
    }
    const __m512i clo = LOAD_512((const uint8_t *)lo, 0), chi = LOAD_512((const uint8_t *)hi, 0);
    for (size_t b = 0; b < a->blocks; b++) {
        uint32_t f = a->flags;
        if (b == 0) f |= a->flags_start;
        if (b + 1 == a->blocks) f |= a->flags_end;
        const size_t off = b * WK_BLAKE3_BLOCK_LEN;
        if (b + 4 < a->blocks)
            for (int j = 0; j < 16; j++) _mm_prefetch((const char *)(L[j] + off + 256), _MM_HINT_T0);
        __m512i m0 = LOAD_512(L[0] + off, 0), m1 = LOAD_512(L[1] + off, 0), m2 = LOAD_512(L[2] + off, 0);
        __m512i m3 = LOAD_512(L[3] + off, 0), m4 = LOAD_512(L[4] + off, 0), m5 = LOAD_512(L[5] + off, 0);
        __m512i m6 = LOAD_512(L[6] + off, 0), m7 = LOAD_512(L[7] + off, 0), m8 = LOAD_512(L[8] + off, 0);
        __m512i m9 = LOAD_512(L[9] + off, 0), m10 = LOAD_512(L[10] + off, 0), m11 = LOAD_512(L[11] + off, 0);
        __m512i m12 = LOAD_512(L[12] + off, 0), m13 = LOAD_512(L[13] + off, 0);
        __m512i m14 = LOAD_512(L[14] + off, 0), m15 = LOAD_512(L[15] + off, 0);
        TRANSPOSE16_512(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15);
        __m512i v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5, v6 = h6, v7 = h7;
        __m512i v8 = _mm512_set1_epi32((int)IV[0]), v9 = _mm512_set1_epi32((int)IV[1]);
        __m512i v10 = _mm512_set1_epi32((int)IV[2]), v11 = _mm512_set1_epi32((int)IV[3]);
        __m512i v12 = clo, v13 = chi, v14 = _mm512_set1_epi32(WK_BLAKE3_BLOCK_LEN);
        __m512i v15 = _mm512_set1_epi32((int)f);
        B3_ROUNDS(B3_MSG_NAMED, m);
        h0 = _mm512_xor_si512(v0, v8); h1 = _mm512_xor_si512(v1, v9);
        h2 = _mm512_xor_si512(v2, v10); h3 = _mm512_xor_si512(v3, v11);
        h4 = _mm512_xor_si512(v4, v12); h5 = _mm512_xor_si512(v5, v13);
        h6 = _mm512_xor_si512(v6, v14); h7 = _mm512_xor_si512(v7, v15);
    }
    /* Rows 8..15 of the transpose are zero; output j (lane j's chaining value) is the low half
     * of transposed row j. */
    __m512i z8 = _mm512_setzero_si512(), z9 = z8, z10 = z8, z11 = z8, z12 = z8, z13 = z8, z14 = z8,
            z15 = z8;
    TRANSPOSE16_512(h0, h1, h2, h3, h4, h5, h6, h7, z8, z9, z10, z11, z12, z13, z14, z15);
    STORE_LOW_256(out + 0 * 32, h0); STORE_LOW_256(out + 1 * 32, h1);
    STORE_LOW_256(out + 2 * 32, h2); STORE_LOW_256(out + 3 * 32, h3);
    STORE_LOW_256(out + 4 * 32, h4); STORE_LOW_256(out + 5 * 32, h5);
    STORE_LOW_256(out + 6 * 32, h6); STORE_LOW_256(out + 7 * 32, h7);
    STORE_LOW_256(out + 8 * 32, z8); STORE_LOW_256(out + 9 * 32, z9);
    STORE_LOW_256(out + 10 * 32, z10); STORE_LOW_256(out + 11 * 32, z11);
    STORE_LOW_256(out + 12 * 32, z12); STORE_LOW_256(out + 13 * 32, z13);
    STORE_LOW_256(out + 14 * 32, z14); STORE_LOW_256(out + 15 * 32, z15);
}
#undef G_

#endif /* WK_B3_X86 */

/* ---------------------------------------------------------------------------------------------
 * Kernel selection
 * ------------------------------------------------------------------------------------------- */

/* Backend levels: 0 portable, 1 SSE4.1, 2 AVX2, 3 AVX-512. */
static int b3_level_cap = 3;

static int b3_cpu_level(void)
{
#if WK_B3_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 3;
    if (__builtin_cpu_supports("avx2")) return 2;
    if (__builtin_cpu_supports("sse4.1")) return 1;
#endif
    return 0;
}

static int b3_level(void)
{
    int cpu = b3_cpu_level();
    return cpu < b3_level_cap ? cpu : b3_level_cap;
}

/* Test hook (not in the public header): caps the kernel level used by later calls (0 portable,
 * 1 SSE4.1, 2 AVX2, 3 AVX-512) and returns the level that will actually run (the cap, lowered to
 * what the CPU has). Not thread-safe; for tests and benchmarks only. */
int wk_blake3__set_backend(int level);
int wk_blake3__set_backend(int level)
{
    b3_level_cap = level < 0 ? 0 : level > 3 ? 3 : level;
    return b3_level();
}

/* Hashes n inputs: input i at in + i*stride, or, with first, input 0 at first and input i at
 * in + (i-1)*stride (a chunk completed in the hasher's buffer, then chunks from the caller's
 * bytes). Groups go through the widest kernel the CPU has that is not wider than n; a remainder is
 * covered by one last group that overlaps the previous one (its first inputs are hashed again,
 * with the same counters, giving the same outputs), so a run of 63 chunks costs four 16-wide
 * calls instead of 48 + 8 + 4 + 3 narrower ones. */
static void hash_lanes(const uint8_t *first, const uint8_t *in, size_t n, const hash_many_args *a, uint8_t *out)
{
    const uint64_t step = a->inc_counter ? 1 : 0;
    const size_t shift = first ? 1 : 0;
#define LANE(i) ((i) < shift ? first : in + ((i) - shift) * a->stride)
#if WK_B3_X86
    int level = n >= 4 ? b3_level() : 0;
    size_t width = level >= 3 && n >= 16 ? 16 : level >= 2 && n >= 8 ? 8 : level >= 1 ? 4 : 0;
    if (width && n >= width) {
        size_t done = 0;
        for (;;) {
            size_t at = done + width <= n ? done : n - width; /* the last group may overlap */
            const uint8_t *lanes[16];
            for (size_t j = 0; j < width; j++) lanes[j] = LANE(at + j);
            uint8_t *go = out + at * 32;
            uint64_t gc = a->counter + at * step;
            if (width == 16) hash16_avx512(lanes, a, gc, go);
            else if (width == 8) hash8_avx2(lanes, a, gc, go);
            else hash4_sse41(lanes, a, gc, go);
            done = at + width;
            if (done == n) return;
        }
    }
#endif
    for (size_t i = 0; i < n; i++) hash_one_portable(LANE(i), a, a->counter + i * step, out + i * 32);
#undef LANE
}

static void hash_many(const uint8_t *in, size_t n, const hash_many_args *a, uint8_t *out)
{
    hash_lanes(NULL, in, n, a, out);
}

/* ---------------------------------------------------------------------------------------------
 * Chunk state, outputs, CV stack
 * ------------------------------------------------------------------------------------------- */

/* A node not yet compressed: its input chaining value, block and parameters. Compressing it gives
 * a chaining value, or, with ROOT, the output stream. */
typedef struct b3_output {
    uint32_t cv[8];
    uint8_t block[WK_BLAKE3_BLOCK_LEN];
    uint64_t counter;
    uint32_t block_len;
    uint32_t flags;
} b3_output;

static void output_cv(const b3_output *o, uint8_t out[32])
{
    uint32_t cv[8];
    memcpy(cv, o->cv, sizeof cv);
    compress_in_place(cv, o->block, o->block_len, o->counter, o->flags);
    bytes_from_words(cv, out, 8);
}

static b3_output parent_output(const uint8_t left[32], const uint8_t right[32], const uint32_t key[8],
                               uint32_t flags)
{
    b3_output o;
    memcpy(o.cv, key, sizeof o.cv);
    memcpy(o.block, left, 32);
    memcpy(o.block + 32, right, 32);
    o.counter = 0;
    o.block_len = WK_BLAKE3_BLOCK_LEN;
    o.flags = flags | PARENT;
    return o;
}

/* The chunk state is the current chunk's raw bytes (at most one chunk): they are compressed only
 * once it is known whether the chunk is the root (finalize) or not (more input followed), so a
 * chunk that straddles two updates can join the next update's wide kernel call. */
static void chunk_reset(wk_blake3_hasher *h, uint64_t counter)
{
    h->chunk_counter = counter;
    h->buf_len = 0;
}

static size_t chunk_len(const wk_blake3_hasher *h) { return h->buf_len; }

/* Appends len bytes to the current chunk; the caller keeps chunk_len() + len <= CHUNK_LEN. */
static void chunk_update(wk_blake3_hasher *h, const uint8_t *in, size_t len)
{
    memcpy(h->buf + h->buf_len, in, len);
    h->buf_len = (uint16_t)(h->buf_len + len);
}

/* The chunk's last block as an output node: every earlier block compressed into its chaining
 * value (an empty chunk is one empty block). */
static b3_output chunk_output(const wk_blake3_hasher *h)
{
    b3_output o;
    size_t blocks = h->buf_len ? ((size_t)h->buf_len + WK_BLAKE3_BLOCK_LEN - 1) / WK_BLAKE3_BLOCK_LEN : 1;
    memcpy(o.cv, h->key, sizeof o.cv);
    for (size_t b = 0; b + 1 < blocks; b++)
        compress_in_place(o.cv, h->buf + b * WK_BLAKE3_BLOCK_LEN, WK_BLAKE3_BLOCK_LEN, h->chunk_counter,
                          h->flags | (b == 0 ? CHUNK_START : 0));
    size_t last = (blocks - 1) * WK_BLAKE3_BLOCK_LEN;
    memset(o.block, 0, sizeof o.block);
    memcpy(o.block, h->buf + last, h->buf_len - last);
    o.counter = h->chunk_counter;
    o.block_len = (uint32_t)(h->buf_len - last);
    o.flags = h->flags | (blocks == 1 ? CHUNK_START : 0) | CHUNK_END;
    return o;
}

static unsigned popcount64(uint64_t x)
{
    unsigned n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

/* Merges the stack down to one entry per set bit of total_chunks. Each completed pair of sibling
 * subtrees (a carry in the chunk count, i.e. a trailing zero) becomes its parent. Called before
 * a push, so the newest entry stays unmerged until more input proves it is not the root's child. */
static void cv_stack_merge(wk_blake3_hasher *h, uint64_t total_chunks)
{
    size_t want = popcount64(total_chunks);
    while (h->cv_stack_len > want) {
        uint8_t *left = h->cv_stack + (size_t)(h->cv_stack_len - 2) * WK_BLAKE3_OUT_LEN;
        b3_output o = parent_output(left, left + WK_BLAKE3_OUT_LEN, h->key, h->flags);
        output_cv(&o, left);
        h->cv_stack_len--;
    }
}

/* Pushes the chaining value of a subtree that starts at chunk `chunk_index`. */
static void cv_stack_push(wk_blake3_hasher *h, const uint8_t cv[32], uint64_t chunk_index)
{
    cv_stack_merge(h, chunk_index);
    memcpy(h->cv_stack + (size_t)h->cv_stack_len * WK_BLAKE3_OUT_LEN, cv, WK_BLAKE3_OUT_LEN);
    h->cv_stack_len++;
}

static void hasher_init(wk_blake3_hasher *h, const uint32_t key[8], uint32_t flags)
{
    memcpy(h->key, key, sizeof h->key);
    h->flags = (uint8_t)flags;
    h->cv_stack_len = 0;
    chunk_reset(h, 0);
}

/* ---------------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------------- */

/* Plain hash: key = IV, no mode flag. */
void wk_blake3_init(wk_blake3_hasher *h) { hasher_init(h, IV, 0); }

/* Keyed hash: key words from the 32 key bytes, KEYED_HASH on every compression. */
void wk_blake3_init_keyed(wk_blake3_hasher *h, const uint8_t key[WK_BLAKE3_KEY_LEN])
{
    uint32_t k[8];
    words_from_bytes(key, k, 8);
    hasher_init(h, k, KEYED_HASH);
}

/* Derive key: the context string is hashed with DERIVE_KEY_CONTEXT into a context key, which then
 * keys the hashing of the key material with DERIVE_KEY_MATERIAL. */
void wk_blake3_init_derive_key(wk_blake3_hasher *h, const void *ctx, size_t ctx_len)
{
    wk_blake3_hasher c;
    hasher_init(&c, IV, DERIVE_KEY_CONTEXT);
    wk_blake3_update(&c, ctx, ctx_len);
    uint8_t ck[WK_BLAKE3_KEY_LEN];
    wk_blake3_finalize(&c, ck, sizeof ck);
    uint32_t k[8];
    words_from_bytes(ck, k, 8);
    hasher_init(h, k, DERIVE_KEY_MATERIAL);
}

/* Reduces the chaining values of n (a power of two, 2..WK_B3_MAX_SUBTREE) sibling chunks to the
 * two children of their subtree's root (64 bytes into out), a level at a time. */
static void reduce_subtree(const wk_blake3_hasher *h, const uint8_t *cvs, size_t n, uint8_t out[64])
{
    uint8_t a[WK_B3_MAX_SUBTREE / 2 * WK_BLAKE3_OUT_LEN], b[WK_B3_MAX_SUBTREE / 4 * WK_BLAKE3_OUT_LEN + 64];
    hash_many_args parents = {h->key, WK_BLAKE3_BLOCK_LEN, 1, 0, false, h->flags | PARENT, 0, 0};
    const uint8_t *cur = cvs;
    uint8_t *next = a;
    while (n > 2) {
        hash_many(cur, n / 2, &parents, next);
        n /= 2;
        cur = next;
        next = next == a ? b : a;
    }
    memcpy(out, cur, 2 * WK_BLAKE3_OUT_LEN);
}

/* Absorbs input: completes the buffered chunk, then hashes it and the whole chunks that follow
 * (keeping at least one byte back: the last chunk may be the root) in runs of up to
 * WK_B3_MAX_SUBTREE. The chunks of a run, the buffered one first, are hashed in one wide call
 * whatever their position, since a chunk's chaining value depends only on its bytes and its
 * counter; the run is then folded into the aligned power-of-two subtrees the tree is made of and
 * pushed on the stack. A stream whose chunk boundaries fall anywhere in the caller's pieces (a
 * Blob's content starts with its Data-Length line) thus keeps the widest kernel busy. The tail
 * (1 to 1024 bytes) stays buffered. */
void wk_blake3_update(wk_blake3_hasher *h, const void *data, size_t len)
{
    const uint8_t *in = (const uint8_t *)data;
    if (len == 0) return;
    const uint8_t *first = NULL;
    if (h->buf_len > 0) {
        size_t take = WK_BLAKE3_CHUNK_LEN - h->buf_len;
        if (take > len) take = len;
        chunk_update(h, in, take);
        in += take;
        len -= take;
        if (len == 0) return;
        first = h->buf; /* complete, and more input follows: not the root */
    }
    uint8_t cvs[WK_B3_MAX_SUBTREE * WK_BLAKE3_OUT_LEN];
    while (first || len > WK_BLAKE3_CHUNK_LEN) {
        size_t whole = (len - 1) / WK_BLAKE3_CHUNK_LEN; /* chunks of in, at least a byte after */
        size_t run = whole + (first ? 1 : 0);
        if (run > WK_B3_MAX_SUBTREE) run = WK_B3_MAX_SUBTREE;
        size_t taken = run - (first ? 1 : 0);
        uint64_t base = h->chunk_counter;
        hash_many_args chunks = {h->key, WK_BLAKE3_CHUNK_LEN, WK_BLAKE3_CHUNK_LEN / WK_BLAKE3_BLOCK_LEN,
                                 base, true, h->flags, CHUNK_START, CHUNK_END};
        hash_lanes(first, in, run, &chunks, cvs);
        first = NULL;
        for (size_t i = 0; i < run;) {
            /* the largest aligned power-of-two subtree starting here that the run holds */
            uint64_t n = 1;
            while (n < WK_B3_MAX_SUBTREE && i + n * 2 <= run && ((base + i) & (n * 2 - 1)) == 0) n *= 2;
            if (n == 1) {
                cv_stack_push(h, cvs + i * WK_BLAKE3_OUT_LEN, base + i);
            } else {
                /* its two children, so that the root can still be formed from them */
                uint8_t kids[2 * WK_BLAKE3_OUT_LEN];
                reduce_subtree(h, cvs + i * WK_BLAKE3_OUT_LEN, (size_t)n, kids);
                cv_stack_push(h, kids, base + i);
                cv_stack_push(h, kids + WK_BLAKE3_OUT_LEN, base + i + n / 2);
            }
            i += (size_t)n;
        }
        chunk_reset(h, base + run);
        in += taken * WK_BLAKE3_CHUNK_LEN;
        len -= taken * WK_BLAKE3_CHUNK_LEN;
    }
    /* 1..1024 bytes are left: the chunk state is not empty, so every stacked subtree has all its
     * siblings' bytes */
    chunk_update(h, in, len);
    cv_stack_merge(h, h->chunk_counter);
}

/* Builds the root node from the chunk state and the stack (without changing *h), then produces
 * output blocks with the output-block counter seek/64, copying from offset seek%64. */
void wk_blake3_finalize_seek(const wk_blake3_hasher *h, uint64_t seek, uint8_t *out, size_t out_len)
{
    if (out_len == 0) return;
    b3_output o;
    size_t remaining = h->cv_stack_len;
    if (remaining < 2 || chunk_len(h) > 0) {
        o = chunk_output(h);
    } else {
        /* Input ended on a subtree boundary: the top two entries are the last node's children. */
        const uint8_t *left = h->cv_stack + (remaining - 2) * WK_BLAKE3_OUT_LEN;
        o = parent_output(left, left + WK_BLAKE3_OUT_LEN, h->key, h->flags);
        remaining -= 2;
    }
    while (remaining > 0) {
        remaining--;
        uint8_t right[WK_BLAKE3_OUT_LEN];
        output_cv(&o, right);
        o = parent_output(h->cv_stack + remaining * WK_BLAKE3_OUT_LEN, right, h->key, h->flags);
    }
    uint64_t block_counter = seek / WK_BLAKE3_BLOCK_LEN;
    size_t skip = (size_t)(seek % WK_BLAKE3_BLOCK_LEN);
    while (out_len > 0) {
        uint8_t block[WK_BLAKE3_BLOCK_LEN];
        compress_xof(o.cv, o.block, o.block_len, block_counter, o.flags | ROOT, block);
        size_t n = WK_BLAKE3_BLOCK_LEN - skip;
        if (n > out_len) n = out_len;
        memcpy(out, block + skip, n);
        out += n;
        out_len -= n;
        skip = 0;
        block_counter++;
    }
}

/* Output from the start of the stream. */
void wk_blake3_finalize(const wk_blake3_hasher *h, uint8_t *out, size_t out_len)
{
    wk_blake3_finalize_seek(h, 0, out, out_len);
}

/* One-shot plain hash. */
void wk_blake3(const void *data, size_t len, uint8_t out[WK_BLAKE3_OUT_LEN])
{
    wk_blake3_hasher h;
    wk_blake3_init(&h);
    wk_blake3_update(&h, data, len);
    wk_blake3_finalize(&h, out, WK_BLAKE3_OUT_LEN);
}
