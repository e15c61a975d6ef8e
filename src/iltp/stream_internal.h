/* The Lace-065 stream coders' objects, shared by the backend files: stream.c (API, identity,
 * zlib), stream_isal.c (ISA-L igzip for deflate12c), stream_zstd.c (libzstd for zstd20c).
 * Not installed. */
#ifndef WK_ILTP_STREAM_INTERNAL_H
#define WK_ILTP_STREAM_INTERNAL_H
#include <wirekit/iltp.h>
#include <zlib.h>
#include <string.h>
#include "stream_setup.h"

extern uint8_t wk_iltp_dummy_byte; /* a valid pointer for empty views */

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
enum wk_iltp_enc_phase {
    P_WRITE, /* taking batch bytes */
    P_FLUSH, /* completing the batch's flush */
    P_MARK,  /* writing the end mark */
    P_ENDED, /* end mark written; only reset */
    P_FAILED
};

#define WK_ILTP_STAGE_SIZE 4096 /* deflate output staging: see deflate_step in stream.c */

struct wk_iltp_encoder {
    wk_iltp_encoding enc;
    wk_iltp_backend backend; /* deflate12c: ZLIB or ISAL */
    int level;               /* 1..9 (deflate12c), 1..19 (zstd20c) */
    wk_allocator alloc;
    enum wk_iltp_enc_phase phase;
    bool batch_open; /* bytes taken since the last flush */
    bool z_ready;
    z_stream z;
    ZSTD_CCtx *zc;
    uint8_t *zout;       /* zstd20c: libzstd writes here, never into the caller's view (it leaves
                          * scratch past the bytes it reports); drained through stage_pos/len */
    size_t zout_cap;     /* ZSTD_CStreamOutSize(): a whole compressed block always fits */
    bool zflush_done;    /* zstd20c: the FLUSH completed; DONE once zout is drained */
    struct isal_zstream *iz; /* ISA-L: the igzip stream and its level buffer */
    uint8_t *level_buf;
    uint32_t level_buf_size;
    size_t stage_pos, stage_len; /* staged output: stage[] (deflate12c) or zout (zstd20c) */
    wk_error failure;        /* phase P_FAILED: the first failure, reported again unchanged */
    uint8_t stage[WK_ILTP_STAGE_SIZE];
};

/* Copies staged encoder output (stage_pos..stage_len of buf: e->stage, or e->zout for zstd20c)
 * into *out; true once the stage is empty (then reset for reuse). */
static inline bool wk_iltp_stage_drain(wk_iltp_encoder *e, const uint8_t *buf, wk_out *out)
{
    size_t n = e->stage_len - e->stage_pos, room = out->size - out->pos;
    if (n > room) n = room;
    if (n) {
        memcpy(out->dst + out->pos, buf + e->stage_pos, n);
        out->pos += n;
        e->stage_pos += n;
    }
    if (e->stage_pos < e->stage_len) return false;
    e->stage_pos = e->stage_len = 0;
    return true;
}

/* The deflate12c encoders once the push is taken (phase P_WRITE): moves to the flush or the end
 * mark the op asks for and returns true (go on), or sets *res (WK_NEED_INPUT, WK_DONE) and
 * returns false. */
static inline bool wk_iltp_push_taken(wk_iltp_encoder *e, wk_iltp_op op, wk_result *res)
{
    if (op == WK_ILTP_CONTINUE) {
        *res = WK_NEED_INPUT;
        return false;
    }
    if (e->batch_open) e->phase = P_FLUSH;
    else if (op == WK_ILTP_FLUSH) {
        *res = WK_DONE;
        return false;
    } else e->phase = P_MARK;
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
enum wk_iltp_dec_state { D_ACTIVE, D_ENDED, D_FAILED };
enum wk_iltp_zunit { Z_FRAME_HEADER, Z_BLOCK_HEADER, Z_BODY }; /* zstd20c: what libzstd reads next */

#define WK_ILTP_REPLAY_CAP ((size_t)32 << 10) /* ISA-L: input kept since the last checkpoint */
#define WK_ILTP_CK_WINDOW 4096                /* the deflate12c window zlib restarts with */

/* deflate12c with ISA-L. igzip decodes; zlib (the decoder's z_stream) is kept ready to decode
 * again from the last checkpoint, a block boundary (the session start, or right after a sync
 * flush's 00 00 ff ff) where everything decoded had been delivered. The input since that
 * checkpoint is kept (replay, at most WK_ILTP_REPLAY_CAP bytes) with the 4096 bytes of history
 * before it. When igzip refuses a block, zlib decodes the kept bytes and the rest of the push
 * from the checkpoint: its verdict and offset are the decoder's (the zlib backend's exactly), and
 * if it accepts the bytes it goes on decoding the session (fallback). */
typedef struct wk_iltp_isal_dec {
    struct inflate_state *st; /* the igzip state (allocated: 87 KB) */
    bool fallback;            /* igzip refused a block: zlib decodes the rest of the session */
    uint64_t ck_pos;          /* checkpoint: encoded offset */
    uint64_t ck_produced;     /* decoded bytes before it (all delivered) */
    uint32_t ck_wlen;         /* history bytes before it in ck_win: min(4096, dictionary + decoded) */
    bool ck_in_call;          /* the checkpoint was taken during the current call, at push position */
    size_t ck_push_pos;
    bool split_pending;       /* igzip is fed up to split_at, a possible sync flush end */
    uint64_t split_at;
    uint64_t scan_end;        /* input before this offset was looked at for sync flushes */
    bool replay_lost;         /* more than WK_ILTP_REPLAY_CAP bytes since the checkpoint */
    size_t replay_len;        /* bytes kept: encoded [ck_pos, ck_pos + replay_len), taken in earlier calls */
    size_t rpos;              /* fallback: kept bytes zlib has not read yet */
    uint8_t *replay;          /* WK_ILTP_REPLAY_CAP bytes */
    uint8_t ck_win[WK_ILTP_CK_WINDOW]; /* history before the checkpoint; scratch after a fallback */
} wk_iltp_isal_dec;

struct wk_iltp_decoder {
    wk_iltp_encoding enc;
    wk_iltp_backend backend; /* deflate12c: ZLIB or ISAL */
    wk_allocator alloc;
    enum wk_iltp_dec_state state;
    uint64_t consumed, produced;
    bool z_ready;
    z_stream z;
    uint64_t skip; /* zlib output to discard: ISA-L had delivered it before a fallback */
    wk_iltp_isal_dec *is;
    /* zstd20c: libzstd's block API over our own buffers (stream_zstd.c) */
    ZSTD_DCtx *zd;
    uint8_t *ring;           /* decoded history and pending output (window + block + margin) */
    uint8_t *ring_alloc;     /* the allocation ring lies in (ring is 64-byte aligned) */
    size_t ring_size, r_start, r_end; /* pending output ring[r_start, r_end) */
    uint8_t *zin;            /* a header or block that spans pushes */
    size_t zin_have;
    bool frame_done;         /* the last block is decoded */
    enum wk_iltp_zunit zunit;
    bool blk_raw;            /* the current block is raw: its body goes to libzstd piece by piece */
    bool blk_last;           /* the current block is the last (Last_Block) */
    uint32_t blk_body;       /* body bytes of the current block (raw: still to come) */
    uint64_t blk_start;      /* zstd20c: the current block's header offset */
    wk_error failure;        /* sticky error */
};

/* Sets the sticky failure and *err; returns WK_ERROR. */
wk_result wk_iltp_dec_fail(wk_iltp_decoder *d, wk_error *err, wk_code code, uint64_t off,
                           const char *what);
/* zlib inflate of the caller's push (the zlib backend, and ISA-L's fallback). */
wk_result wk_iltp_inflate_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err);
/* Maps a failed inflate() to the decoder's error at encoded offset off (zlib's message decides
 * between ILTP_ERR_DEFLATE_REFERENCE and _MALFORMED). */
wk_result wk_iltp_inflate_fail(wk_iltp_decoder *d, wk_error *err, int zr, uint64_t off);

/* ISA-L (stream_isal.c). init allocates the backend state for an object whose enc, level and
 * alloc are set; free releases it (also after a failed init); reset starts a fresh session. */
wk_code wk_iltp_isal_encoder_init(wk_iltp_encoder *e, wk_error *err);
void wk_iltp_isal_encoder_destroy(wk_iltp_encoder *e);
wk_code wk_iltp_isal_encoder_reset(wk_iltp_encoder *e, wk_error *err);
wk_result wk_iltp_isal_encode_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op,
                                   wk_error *err);
wk_code wk_iltp_isal_decoder_init(wk_iltp_decoder *d, wk_error *err);
void wk_iltp_isal_decoder_destroy(wk_iltp_decoder *d);
wk_code wk_iltp_isal_decoder_reset(wk_iltp_decoder *d, wk_error *err);
wk_result wk_iltp_isal_decode_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err);
/* At EOF before the end mark: zlib reads the kept input from the checkpoint; WK_OK, or the error
 * zlib finds there (set as the decoder's failure). */
wk_code wk_iltp_isal_finish_check(wk_iltp_decoder *d, wk_error *err);

/* libzstd (stream_zstd.c). */
wk_code wk_iltp_zstd_encoder_init(wk_iltp_encoder *e, wk_error *err);
wk_code wk_iltp_zstd_encoder_reset(wk_iltp_encoder *e, wk_error *err);
void wk_iltp_zstd_encoder_destroy(wk_iltp_encoder *e);
wk_result wk_iltp_zstd_encode_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op,
                                   wk_error *err);
wk_code wk_iltp_zstd_decoder_init(wk_iltp_decoder *d, wk_error *err);
void wk_iltp_zstd_decoder_destroy(wk_iltp_decoder *d);
wk_code wk_iltp_zstd_decoder_reset(wk_iltp_decoder *d, wk_error *err);
wk_result wk_iltp_zstd_decode_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err);
#endif
