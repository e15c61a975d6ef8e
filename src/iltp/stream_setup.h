/* The backend parameters of the Lace-065 stream coders, defined once: src/iltp/stream*.c set up
 * their contexts with these, and bench/iltp_bench.c sets up its direct-library baselines with the
 * same functions, so the baselines cannot drift from the library (not installed). */
#ifndef WK_ILTP_STREAM_SETUP_H
#define WK_ILTP_STREAM_SETUP_H
#ifndef ZSTD_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY /* magicless format, refPrefix_advanced, block API */
#endif
#include <zstd.h>
#include <isa-l/igzip_lib.h>
#include <stddef.h>
#include <stdint.h>

/* deflate12c: raw deflate with a 4096-byte window. */
#define WK_ILTP_DEFLATE_WBITS 12
#define WK_ILTP_ZLIB_MEMLEVEL 8      /* deflateInit2's default */
#define WK_ILTP_DEFLATE_LEVEL 6      /* the token's default level (1..9 scale) */
#define WK_ILTP_ZSTD_LEVEL 3
#define WK_ILTP_ZSTD_WINDOW_LOG 20

/* ISA-L: the igzip level for a deflate12c level 1..9 (igzip has 1..3; level 0, which repeats a
 * 113-byte header per flushed block and expands random data, is never used). */
static inline int wk_iltp_isal_level(int level)
{
    return level <= 3 ? 1 : level <= 6 ? 2 : 3;
}

/* The level buffer igzip gets for an igzip level: its "default" size (64 Ki intermediate tokens). */
static inline uint32_t wk_iltp_isal_level_buf_size(int isal_level)
{
    return isal_level == 1 ? ISAL_DEF_LVL1_DEFAULT : isal_level == 2 ? ISAL_DEF_LVL2_DEFAULT
                                                                     : ISAL_DEF_LVL3_DEFAULT;
}

/* Starts a fresh igzip stream for deflate12c: raw deflate, hist_bits 12 (no distance beyond 4096),
 * the level and its buffer; the caller then sets the dictionary with isal_deflate_set_dict. */
static inline void wk_iltp_isal_deflate_setup(struct isal_zstream *s, int isal_level,
                                              uint8_t *level_buf, uint32_t level_buf_size)
{
    isal_deflate_init(s);
    s->level = (uint32_t)isal_level;
    s->level_buf = level_buf;
    s->level_buf_size = level_buf_size;
    s->hist_bits = WK_ILTP_DEFLATE_WBITS;
    s->gzip_flag = IGZIP_DEFLATE;
    s->flush = NO_FLUSH;
    s->end_of_stream = 0;
}

/* Starts a fresh igzip inflate state for deflate12c (raw deflate, default history bits: igzip
 * keeps 32 KiB of history whatever hist_bits says, see docs/iltp.md); the caller then sets the
 * dictionary with isal_inflate_set_dict. */
static inline void wk_iltp_isal_inflate_setup(struct inflate_state *s)
{
    isal_inflate_init(s);
    s->crc_flag = ISAL_DEFLATE;
    s->hist_bits = 0;
}

/* zstd20c: the compression parameters of a level. The level's parameters for a large input of
 * unknown size (ZSTD_getCParams(level, 0, 0)) with the window at 2^20 and the hash and chain
 * tables capped to what a 2^20 window can use, set explicitly: given a dictionary and an unknown
 * size, libzstd would otherwise size its match finder for a ~1.3 KB input for the whole session.
 * Magicless frame; no checksum, content size or dictionary ID. Returns 0, or the libzstd error of
 * the first parameter refused (*failed = that parameter). */
static inline size_t wk_iltp_zstd_cctx_setup(ZSTD_CCtx *cc, int level, int *failed)
{
    ZSTD_compressionParameters cp = ZSTD_getCParams(level, 0, 0);
    cp.windowLog = WK_ILTP_ZSTD_WINDOW_LOG;
    if (cp.hashLog > 21) cp.hashLog = 21;
    unsigned cycle = cp.chainLog - (cp.strategy >= ZSTD_btlazy2 ? 1u : 0u);
    if (cycle > 20) cp.chainLog -= cycle - 20;
    struct {
        ZSTD_cParameter p;
        int v;
    } set[] = {
        {ZSTD_c_format, ZSTD_f_zstd1_magicless},
        {ZSTD_c_compressionLevel, level},
        {ZSTD_c_windowLog, (int)cp.windowLog},
        {ZSTD_c_hashLog, (int)cp.hashLog},
        {ZSTD_c_chainLog, (int)cp.chainLog},
        {ZSTD_c_searchLog, (int)cp.searchLog},
        {ZSTD_c_minMatch, (int)cp.minMatch},
        {ZSTD_c_targetLength, (int)cp.targetLength},
        {ZSTD_c_strategy, (int)cp.strategy},
        {ZSTD_c_contentSizeFlag, 0},
        {ZSTD_c_checksumFlag, 0},
        {ZSTD_c_dictIDFlag, 0},
    };
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++) {
        size_t r = ZSTD_CCtx_setParameter(cc, set[k].p, set[k].v);
        if (ZSTD_isError(r)) {
            if (failed) *failed = (int)set[k].p;
            return r;
        }
    }
    return 0;
}

/* zstd20c decoding: magicless frames, window at most 2^20. */
static inline size_t wk_iltp_zstd_dctx_setup(ZSTD_DCtx *dc)
{
    size_t r = ZSTD_DCtx_setParameter(dc, ZSTD_d_format, ZSTD_f_zstd1_magicless);
    if (!ZSTD_isError(r)) r = ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, WK_ILTP_ZSTD_WINDOW_LOG);
    return ZSTD_isError(r) ? r : 0;
}
#endif
