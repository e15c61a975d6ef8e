/* The contract harness's adapter for eth's streaming objects (eth.h): the Snappy framing decoder
 * and encoder and the req/resp reader, so the eth tests and fuzz targets drive them through
 * wk_contract_drive / wk_contract_check / fuzz_drive instead of their own loops.
 *
 * Each adapter struct is the harness's obj: the caller sets the parameters, the adapter creates
 * the object at the first reset (through `allocator`, NULL = malloc/free), resets it before every
 * later run (so a run allocates nothing), and wk_contract_eth_*_cleanup destroys it.
 *
 * Checks and records:
 *   - framing decoder: consumed()/produced() equal what the harness saw moved, after every call
 *     at the end; no events; DONE only with an output limit, exactly at it.
 *   - framing encoder (driven with wk_contract_drive_flush / _check_flush and
 *     wk_contract_eth_frame_enc_flush, which writes the last piece): the step flushes after the
 *     caller's input offsets too (flush_at: the same points whatever the cuts, so every run writes
 *     the same stream); at the end: every input byte taken, the verdict WK_DONE (the encoder
 *     refuses no input), the stream within wk_eth_snappy_frame_max_size when nothing was flushed
 *     early; with a sink and a check decoder, the stream decodes in one pass to the input, with
 *     exactly the input up to each flush point decoded once that flush's bytes are in, and a clean
 *     finish; the record is the stream length at every flush point.
 *   - req/resp reader: consumed() equals the bytes the harness saw consumed at every event; events
 *     in the order eth.h gives (CHUNK_BEGIN, then CHUNK_END or END), chunk indexes from 0, start
 *     offsets contiguous, lengths within the bounds that apply (error chunks [0, 256]), payload
 *     bytes produced only inside a chunk, chunk->produced equal to the length at its end,
 *     max_chunks never exceeded; the record is each event with the chunk's fields. At CHUNK_BEGIN
 *     the adapter sets `begin_bounds` when non-NULL. */
#ifndef WK_CONTRACT_ETH_H
#define WK_CONTRACT_ETH_H

#include "wk_contract.h"
#include <wirekit/eth.h>

/* Where an adapter copies the bytes its object writes (optional: tests that compare the output
 * byte for byte). p is malloc'd; the caller frees it. */
typedef struct wk_contract_eth_sink {
    uint8_t *p;
    size_t n, cap;
} wk_contract_eth_sink;

typedef struct wk_contract_eth_frame {
    /* Set by the caller before a run. */
    const wk_allocator *allocator;
    uint64_t output_limit;   /* UINT64_MAX = none */
    uint32_t max_skippable;  /* 0 = the default */
    bool has_max_skippable;
    /* keep_settings: d was created and configured by the caller (limit, max_skippable, allocator);
     * reset only resets it (output_limit must still say its limit, for the DONE check), and
     * cleanup is the caller's (wk_eth_snappy_frame_decoder_destroy). */
    bool keep_settings;
    wk_contract_eth_sink *sink; /* NULL: the output is only hashed */
    /* The decoder under test (created at the first reset). */
    wk_eth_snappy_frame_decoder *d;
    uint64_t produced; /* the harness's count, for the check */
} wk_contract_eth_frame;

extern const wk_contract_ops wk_contract_eth_frame_ops; /* obj: a wk_contract_eth_frame */
void wk_contract_eth_frame_setup(wk_contract_eth_frame *f, const wk_allocator *allocator);
void wk_contract_eth_frame_cleanup(wk_contract_eth_frame *f);

#define WK_CONTRACT_ETH_MAX_FLUSH 64 /* flush points one encoder run takes */

typedef struct wk_contract_eth_frame_enc {
    /* Set by the caller before a run. */
    const wk_allocator *allocator;
    const uint64_t *flush_at; /* input offsets, ascending, after which the step flushes (at most
                               * WK_CONTRACT_ETH_MAX_FLUSH; those past the input are not reached) */
    size_t nflush;
    wk_contract_eth_sink *sink;         /* NULL: the stream is only hashed */
    wk_eth_snappy_frame_decoder *check; /* the caller's decoder for the decode check (needs a
                                         * sink; NULL: not checked) */
    /* keep_encoder: e is the caller's (created, possibly with a counting allocator): reset only,
     * cleanup leaves it to the caller. */
    bool keep_encoder;
    /* The encoder under test (created at the first reset). */
    wk_eth_snappy_frame_encoder *e;
    /* One run's state. */
    uint64_t consumed, produced;
    size_t next_flush, flushed;
    bool encode_done;
    size_t flush_len[WK_CONTRACT_ETH_MAX_FLUSH]; /* stream bytes when each flush point was done */
} wk_contract_eth_frame_enc;

extern const wk_contract_ops wk_contract_eth_frame_enc_ops; /* obj: a wk_contract_eth_frame_enc */
/* The harness's flush op for it: wk_eth_snappy_frame_encoder_flush without input. */
wk_result wk_contract_eth_frame_enc_flush(void *obj, wk_out *out, wk_error *err);
void wk_contract_eth_frame_enc_setup(wk_contract_eth_frame_enc *f, const wk_allocator *allocator);
void wk_contract_eth_frame_enc_cleanup(wk_contract_eth_frame_enc *f);

typedef struct wk_contract_eth_rr wk_contract_eth_rr;
struct wk_contract_eth_rr {
    /* Set by the caller before a run. */
    wk_eth_rr_reader_params params;
    const wk_eth_ssz_bounds *begin_bounds; /* set at every CHUNK_BEGIN when non-NULL */
    wk_contract_eth_sink *sink;            /* NULL: the payload bytes are only hashed */
    /* Called after the checks on every event and at the end (each may be NULL). */
    bool (*on_event)(wk_contract *c, wk_contract_eth_rr *m);
    bool (*on_end)(wk_contract *c, wk_contract_eth_rr *m);
    void *user;
    /* The reader under test (created at every reset), valid during the callbacks. With
     * `borrowed`, r is the caller's fresh reader (created with params, nothing read yet): one run
     * uses it as it is, and cleanup leaves it to the caller. */
    wk_eth_rr_reader *r;
    bool borrowed;
    /* The checks' state in one run. */
    bool in_chunk;
    uint64_t chunks, next_start, produced0;
};

extern const wk_contract_ops wk_contract_eth_rr_ops; /* obj: a wk_contract_eth_rr */
void wk_contract_eth_rr_setup(wk_contract_eth_rr *m, const wk_eth_rr_reader_params *params);
void wk_contract_eth_rr_cleanup(wk_contract_eth_rr *m);

/* ---------------------------------------------------------------------------------------------
 * Call-site helpers for the eth tests and fuzz targets whose checks are written in codes: one copy
 * here (header-only, usable without linking wk_contract).
 *
 * enc_out(call, &len, &err) reads a whole-item call (an encoder, or a whole-message decoder) made
 * with VIEW(dst, cap) as its output view and IN(p, n) as its input: WK_OK (WK_DONE; *len = the
 * bytes written), ENC_NO_ROOM (WK_NEED_OUTPUT with the view untouched; WK_ERR_STATE if it moved),
 * or the error's code. LAST_IN / LAST_VIEW are the last views given (per translation unit).
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_contract_eth_io {
    wk_in in;
    wk_out out;
} wk_contract_eth_io;

static inline wk_contract_eth_io *wk_contract_eth_io_last(void)
{
    static wk_contract_eth_io io;
    return &io;
}

#define ENC_NO_ROOM ((wk_code)65535)
#define LAST_IN (wk_contract_eth_io_last()->in)
#define LAST_VIEW (wk_contract_eth_io_last()->out)
#define VIEW(dst, cap) (LAST_VIEW = (wk_out){(dst), (cap), 0}, &LAST_VIEW)
#define IN(p, n) (LAST_IN = (wk_in){(p), (n), 0}, &LAST_IN)

static inline wk_code enc_out(wk_result r, size_t *len, const wk_error *e)
{
    if (r == WK_DONE) {
        if (len) *len = LAST_VIEW.pos;
        return WK_OK;
    }
    if (r == WK_NEED_OUTPUT) return LAST_VIEW.pos == 0 ? ENC_NO_ROOM : WK_ERR_STATE;
    return e->code;
}

/* LOOK(p, n): a view of p[0..n) for a look call (peek, validate, parse, check, the RLP readers,
 * the message-id), which takes `const wk_in *` and never moves it. A compound literal: it lives
 * to the end of the enclosing block, and two LOOKs in one expression are two views. */
#define LOOK(p, n) (&(wk_in){(p), (n), 0})

/* wk_eth_snappy_block_decode_alloc of p[0..n) as a code: WK_OK for WK_DONE with the view moved to
 * its end, else the error's code with the view untouched (WK_ERR_STATE when the view moved
 * otherwise, or for any other answer). */
static inline wk_code block_decode_alloc_code(const uint8_t *p, size_t n, uint64_t max_out,
                                              const wk_allocator *a, uint8_t **out,
                                              size_t *out_len, wk_error *e)
{
    wk_in in = {p, n, 0};
    wk_result r = wk_eth_snappy_block_decode_alloc(&in, max_out, a, out, out_len, e);
    if (r == WK_DONE) return in.pos == n ? WK_OK : WK_ERR_STATE;
    return r == WK_ERROR && in.pos == 0 ? e->code : WK_ERR_STATE;
}

/* One req/resp read step as a code: for WK_EVENT the event (WK_ETH_RR_CHUNK_BEGIN, _CHUNK_END,
 * _END), else RR_NEED_INPUT / RR_NEED_OUTPUT / RR_ERROR (RR_DONE: never from this reader). */
enum { RR_ERROR = -1, RR_NEED_INPUT = 1, RR_NEED_OUTPUT = 2, RR_DONE = 99 };
static inline int rr_step(wk_eth_rr_reader *r, wk_in *in, wk_out *out, wk_error *err)
{
    switch (wk_eth_rr_reader_read(r, in, out, err)) {
    case WK_EVENT: return (int)wk_eth_rr_reader_event(r);
    case WK_NEED_INPUT: return RR_NEED_INPUT;
    case WK_NEED_OUTPUT: return RR_NEED_OUTPUT;
    case WK_ERROR: return RR_ERROR;
    default: return RR_DONE;
    }
}
/* The reader's and the framing decoder's _finish (no rest) as a code: WK_OK for WK_DONE. */
static inline wk_code rr_finish(wk_eth_rr_reader *r, wk_error *err)
{
    return wk_eth_rr_reader_finish(r, NULL, err) == WK_DONE ? WK_OK : err->code;
}
static inline wk_code frame_finish(wk_eth_snappy_frame_decoder *d, wk_error *e)
{
    return wk_eth_snappy_frame_decoder_finish(d, NULL, e) == WK_DONE ? WK_OK : e->code;
}

#endif
