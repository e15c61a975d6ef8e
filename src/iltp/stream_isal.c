/* deflate12c (Lace-065) with ISA-L igzip: the default backend. Same framing as zlib's (the zlib
 * backend in stream.c is the reference): a sync flush ending 00 00 ff ff after every batch, the
 * end mark 03 00 right after it, no distance beyond 4096 counting the dictionary.
 *
 * Encoder (measured, docs/iltp.md): igzip levels 1-3 (never 0) with hist_bits 12, which bounds
 * every distance at 4096; SYNC_FLUSH once per batch writes the empty stored block (asking again
 * would add another empty block, 02 00 00 00 ff ff); the end mark 03 00 is written here, after
 * the flush, and never by igzip. Output goes through the 4 KiB stage like zlib's.
 *
 * Decoder: igzip decodes, and zlib stands by so that every verdict is zlib's (see
 * wk_iltp_isal_dec in stream_internal.h):
 * - Checkpoints. The session start, and later the end of a sync flush (00 00 ff ff found in the
 *   last 16 KiB of a push; igzip is fed up to it and must then be between blocks, byte-aligned,
 *   with everything decoded delivered). A checkpoint keeps the 4096 bytes of history before it
 *   (from igzip's history buffer); the input taken after it is kept, up to 32 KiB.
 * - When igzip refuses a block, zlib restarts at the checkpoint (inflateSetDictionary with that
 *   history), reads the kept bytes and the rest of the push, discards the output igzip had already
 *   delivered, and from then on decodes the session: its error name and offset are the decoder's,
 *   exactly those of the zlib backend on the same bytes. Without a checkpoint in the last 32 KiB
 *   of input, igzip's own verdict stands (same name, offset from igzip's bit position).
 * - igzip reads the input 8 bytes ahead. When it stops for lack of output room, or at the end
 *   mark, the whole bytes it read ahead are handed back (its bit buffer shortened), so that the
 *   decoder consumes nothing after the end mark and never holds bytes of an earlier push there.
 * - At EOF before the end mark, zlib reads the kept bytes from the checkpoint before the verdict
 *   "truncated": igzip checks a dynamic block header only once it has all of it (it collects up
 *   to 328 bytes), where zlib refuses a bad header as soon as the bad bits arrive.
 * - igzip uses the output view as scratch: once its own buffer (2 x 32 KiB + 288) is delivered it
 *   decodes straight into next_out, storing whole words and 16-byte copies ahead of the position
 *   it reports (libisal 2.30: measured up to 3 bytes; its assembly allows 16 + 258), always inside
 *   avail_out. So bytes of the view past out->pos may change on any call (iltp.h). Keeping igzip
 *   out of the view costs one more copy of every decoded byte: 13-18 % on incompressible 64 KiB
 *   batches (issue 13, docs/benchmarks.md), so it is not done.
 * - igzip keeps 32 KiB of history whatever hist_bits says, so it resolves some distances beyond
 *   4096 that zlib refuses (Lace-065 allows it); a reference before the dictionary's start is
 *   ISAL_INVALID_LOOKBACK, and zlib then names it ILTP_ERR_DEFLATE_REFERENCE. */
#include "stream_internal.h"
#include <stdio.h>
#include <string.h>

#define SPLIT_MIN 4096               /* keep at most this much before looking for a new checkpoint */
#define SCAN_MAX ((size_t)16 << 10)  /* sync flush ends are looked for in a push's last 16 KiB */

static void *obj_alloc(wk_allocator *a, size_t n) { return a->alloc(a->opaque, n); }
static void obj_free(wk_allocator *a, void *p)
{
    if (p) a->free(a->opaque, p);
}

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */
wk_code wk_iltp_isal_encoder_init(wk_iltp_encoder *e, wk_error *err)
{
    int lv = wk_iltp_isal_level(e->level);
    e->level_buf_size = wk_iltp_isal_level_buf_size(lv);
    e->iz = obj_alloc(&e->alloc, sizeof *e->iz);
    e->level_buf = e->iz ? obj_alloc(&e->alloc, e->level_buf_size) : NULL;
    if (!e->level_buf) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "igzip encoder allocation failed");
    return WK_OK;
}

void wk_iltp_isal_encoder_destroy(wk_iltp_encoder *e)
{
    obj_free(&e->alloc, e->level_buf);
    obj_free(&e->alloc, e->iz);
    e->level_buf = NULL;
    e->iz = NULL;
}

wk_code wk_iltp_isal_encoder_reset(wk_iltp_encoder *e, wk_error *err)
{
    wk_iltp_isal_deflate_setup(e->iz, wk_iltp_isal_level(e->level), e->level_buf, e->level_buf_size);
    int r = isal_deflate_set_dict(e->iz, (uint8_t *)(uintptr_t)wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN);
    if (r != COMP_OK) return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "isal_deflate_set_dict failed (%d)", r);
    return WK_OK;
}

static wk_result enc_fail(wk_iltp_encoder *e, wk_error *err, int r, const char *what)
{
    e->phase = P_FAILED;
    wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "%s (%d)", what, r);
    return WK_ERROR;
}

/* After a SYNC_FLUSH call with all input taken: igzip has written the whole flush when it left
 * output room, or when it is back at a new block header (igzip_lib.h, isal_deflate). */
static bool flush_complete(const struct isal_zstream *s)
{
    return s->avail_in == 0 && (s->avail_out > 0 || s->internal_state.state == ZSTATE_NEW_HDR);
}

wk_result wk_iltp_isal_encode_step(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op,
                                   wk_error *err)
{
    struct isal_zstream *s = e->iz;
    for (;;) {
        if (!wk_iltp_stage_drain(e, e->stage, out)) return WK_NEED_OUTPUT;

        s->next_out = e->stage;
        s->avail_out = WK_ILTP_STAGE_SIZE;
        s->end_of_stream = 0;
        int r;
        wk_result res;
        switch (e->phase) {
        case P_WRITE:
            if (in->pos < in->size) {
                size_t avail = in->size - in->pos;
                if (avail > UINT32_MAX) avail = UINT32_MAX;
                s->next_in = (uint8_t *)(uintptr_t)(in->src + in->pos);
                s->avail_in = (uint32_t)avail;
                s->flush = op == WK_ILTP_CONTINUE ? NO_FLUSH : SYNC_FLUSH;
                r = isal_deflate(s);
                if (r != COMP_OK) return enc_fail(e, err, r, "isal_deflate failed");
                in->pos += avail - s->avail_in;
                e->batch_open = true;
                e->stage_len = WK_ILTP_STAGE_SIZE - s->avail_out;
                if (op != WK_ILTP_CONTINUE && in->pos == in->size && flush_complete(s))
                    e->batch_open = false; /* the batch and its flush are in the stage */
                continue;
            }
            if (!wk_iltp_push_taken(e, op, &res)) return res;
            continue;
        case P_FLUSH: /* the batch's flush, asked for until complete and never once more */
            s->next_in = &wk_iltp_dummy_byte;
            s->avail_in = 0;
            s->flush = SYNC_FLUSH;
            r = isal_deflate(s);
            if (r != COMP_OK) return enc_fail(e, err, r, "isal_deflate sync flush failed");
            e->stage_len = WK_ILTP_STAGE_SIZE - s->avail_out;
            if (flush_complete(s)) {
                e->batch_open = false;
                e->phase = P_WRITE;
            }
            continue;
        case P_MARK: /* right after a sync flush (or at the start): the empty fixed BFINAL block */
            e->stage[0] = 0x03;
            e->stage[1] = 0x00;
            e->stage_len = 2;
            e->phase = P_ENDED;
            continue;
        case P_ENDED:
            return WK_DONE;
        default:
            e->phase = P_FAILED;
            wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "encoder failed earlier");
            return WK_ERROR;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Decoder
 * ------------------------------------------------------------------------------------------- */
wk_code wk_iltp_isal_decoder_init(wk_iltp_decoder *d, wk_error *err)
{
    wk_iltp_isal_dec *x = obj_alloc(&d->alloc, sizeof *x);
    if (!x) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "igzip decoder allocation failed");
    memset(x, 0, offsetof(wk_iltp_isal_dec, ck_win));
    d->is = x;
    x->st = obj_alloc(&d->alloc, sizeof *x->st);
    x->replay = x->st ? obj_alloc(&d->alloc, WK_ILTP_REPLAY_CAP) : NULL;
    if (!x->replay) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "igzip decoder allocation failed");
    return WK_OK;
}

void wk_iltp_isal_decoder_destroy(wk_iltp_decoder *d)
{
    wk_iltp_isal_dec *x = d->is;
    if (!x) return;
    obj_free(&d->alloc, x->replay);
    obj_free(&d->alloc, x->st);
    obj_free(&d->alloc, x);
    d->is = NULL;
}

/* The decoded bytes are delivered and igzip sits between blocks, byte-aligned, with nothing in
 * its bit buffer: a point zlib can restart from. Keeps the history before it. */
static void take_checkpoint(wk_iltp_decoder *d, const wk_in *in)
{
    wk_iltp_isal_dec *x = d->is;
    struct inflate_state *s = x->st;
    /* igzip's history buffer ends with the last decoded byte and holds at least
     * min(32 KiB, dictionary + everything decoded) bytes of history */
    uint32_t valid = (uint32_t)s->tmp_out_valid;
    uint32_t w = valid < WK_ILTP_CK_WINDOW ? valid : WK_ILTP_CK_WINDOW;
    memcpy(x->ck_win, s->tmp_out_buffer + valid - w, w);
    x->ck_wlen = w;
    x->ck_pos = d->consumed;
    x->ck_produced = d->produced;
    x->replay_len = 0;
    x->replay_lost = false;
    x->ck_in_call = true;
    x->ck_push_pos = in->pos;
}

wk_code wk_iltp_isal_decoder_reset(wk_iltp_decoder *d, wk_error *err)
{
    wk_iltp_isal_dec *x = d->is;
    struct inflate_state *s = x->st;
    wk_iltp_isal_inflate_setup(s);
    int r = isal_inflate_set_dict(s, (uint8_t *)(uintptr_t)wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN);
    if (r != COMP_OK) return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "isal_inflate_set_dict failed (%d)", r);
    x->fallback = false;
    x->split_pending = false;
    x->scan_end = 0;
    x->rpos = 0;
    wk_in none = {&wk_iltp_dummy_byte, 0, 0};
    take_checkpoint(d, &none); /* the session start: the dictionary is the history */
    x->ck_in_call = false;
    return WK_OK;
}

/* Looks for the end of a sync flush (00 00 ff ff) among the bytes of the push not looked at
 * before, in its last SCAN_MAX bytes, once more than SPLIT_MIN bytes would be kept since the
 * checkpoint. Takes the last one found. */
static void plan_split(wk_iltp_decoder *d, const wk_in *in)
{
    wk_iltp_isal_dec *x = d->is;
    size_t avail = in->size - in->pos;
    uint64_t end = d->consumed + avail;
    if (end <= x->scan_end) return;
    if (!x->replay_lost && end - x->ck_pos <= SPLIT_MIN) return;
    const uint8_t *p = in->src + in->pos;
    /* new bytes start at scan_end; a match may begin up to 3 bytes before them */
    size_t lo = x->scan_end > d->consumed + 3 ? (size_t)(x->scan_end - d->consumed - 3) : 0;
    if (avail - lo > SCAN_MAX) lo = avail - SCAN_MAX;
    x->scan_end = end;
    size_t found = 0;
    for (size_t i = lo + 2; i < avail;) {
        const uint8_t *f = memchr(p + i, 0xff, avail - i);
        if (!f) break;
        i = (size_t)(f - p);
        if (i + 1 < avail && p[i + 1] == 0xff && p[i - 1] == 0x00 && p[i - 2] == 0x00)
            found = i + 2;
        i++;
    }
    if (found) {
        x->split_at = d->consumed + found;
        x->split_pending = true;
    }
}

/* Keeps the bytes taken in this call after the checkpoint (up to WK_ILTP_REPLAY_CAP). */
static void keep_tail(wk_iltp_decoder *d, const wk_in *in, size_t pos0)
{
    wk_iltp_isal_dec *x = d->is;
    if (x->replay_lost) return;
    size_t q = x->ck_in_call ? x->ck_push_pos : pos0;
    size_t n = in->pos - q;
    if (x->replay_len + n > WK_ILTP_REPLAY_CAP) {
        x->replay_lost = true;
        x->replay_len = 0;
        return;
    }
    if (n) memcpy(x->replay + x->replay_len, in->src + q, n);
    x->replay_len += n;
}

/* Hands back the whole bytes igzip read ahead into its bit buffer (at most the bytes it took in
 * this call, after any checkpoint taken in it); returns how many. Not while a block header is being collected in igzip's own
 * buffer (those bytes precede the bit buffer's). */
static size_t give_back(wk_iltp_decoder *d, wk_in *in, size_t pos0)
{
    struct inflate_state *s = d->is->st;
    if (s->tmp_in_size != 0 || s->read_in_length < 8) return 0;
    if (s->block_state != ISAL_BLOCK_NEW_HDR && s->block_state != ISAL_BLOCK_CODED &&
        s->block_state != ISAL_BLOCK_TYPE0 && s->block_state != ISAL_BLOCK_INPUT_DONE &&
        s->block_state != ISAL_BLOCK_FINISH)
        return 0;
    size_t k = (size_t)s->read_in_length / 8;
    size_t since = d->is->ck_in_call ? d->is->ck_push_pos : pos0; /* never before a checkpoint */
    if (k > in->pos - since) k = in->pos - since;
    if (!k) return 0;
    s->read_in_length -= (int32_t)(8 * k);
    s->read_in = s->read_in_length ? s->read_in & (((uint64_t)1 << s->read_in_length) - 1) : 0;
    in->pos -= k;
    d->consumed -= k;
    return k;
}

/* zlib decodes the kept bytes from the checkpoint, then the caller's push (wk_iltp_inflate_step
 * with d->skip: the output igzip delivered since the checkpoint is discarded). */
static wk_result fallback_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    wk_iltp_isal_dec *x = d->is;
    while (x->rpos < x->replay_len) {
        bool to_scratch = d->skip > 0;
        size_t room = to_scratch ? (d->skip < WK_ILTP_CK_WINDOW ? (size_t)d->skip : WK_ILTP_CK_WINDOW)
                                 : out->size - out->pos;
        if (!room) return WK_NEED_OUTPUT;
        if (room > UINT32_MAX) room = UINT32_MAX;
        size_t avail = x->replay_len - x->rpos;
        d->z.next_in = x->replay + x->rpos;
        d->z.avail_in = (uInt)avail;
        d->z.next_out = to_scratch ? x->ck_win : out->dst + out->pos;
        d->z.avail_out = (uInt)room;
        int zr = inflate(&d->z, Z_NO_FLUSH);
        size_t used = avail - d->z.avail_in, made = room - d->z.avail_out;
        x->rpos += used; /* counted in d->consumed when igzip took them */
        if (to_scratch) {
            d->skip -= made;
        } else {
            out->pos += made;
            d->produced += made;
        }
        uint64_t at = x->ck_pos + x->rpos; /* encoded bytes zlib has read */
        if (zr == Z_STREAM_END)
            return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET,
                                    "internal: the end mark inside bytes igzip had passed");
        if (zr != Z_OK && zr != Z_BUF_ERROR) return wk_iltp_inflate_fail(d, err, zr, at ? at - 1 : 0);
        if (!used && !made) {
            if (!to_scratch && out->pos == out->size) return WK_NEED_OUTPUT;
            return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET, "internal: zlib replay stalled");
        }
    }
    return wk_iltp_inflate_step(d, out, in, err);
}

/* igzip refused a block: zlib decodes again from the checkpoint and gives the verdict. */
static wk_result igzip_refused(wk_iltp_decoder *d, wk_out *out, wk_in *in, size_t pos0, int r,
                               wk_error *err)
{
    wk_iltp_isal_dec *x = d->is;
    struct inflate_state *s = x->st;
    if (x->replay_lost) {
        /* no checkpoint in the last WK_ILTP_REPLAY_CAP bytes: igzip's verdict, at the byte
         * holding the last bit igzip read */
        uint64_t bits = d->consumed * 8;
        uint64_t ahead = s->read_in_length > 0 ? (uint64_t)s->read_in_length : 0;
        bits = bits > ahead ? bits - ahead : 0;
        uint64_t off = bits ? (bits + 7) / 8 - 1 : 0;
        char what[100];
        snprintf(what, sizeof what, "igzip: %s (no zlib checkpoint in the last %zu bytes)",
                 r == ISAL_INVALID_LOOKBACK ? "invalid lookback distance"
                 : r == ISAL_INVALID_SYMBOL ? "invalid symbol" : "invalid block",
                 WK_ILTP_REPLAY_CAP);
        return wk_iltp_dec_fail(d, err, r == ISAL_INVALID_LOOKBACK ? WK_ERR_ILTP_DEFLATE_REFERENCE
                                                                   : WK_ERR_ILTP_DEFLATE_MALFORMED,
                                off, what);
    }
    /* un-take this call's bytes after the checkpoint: zlib reads them from the push */
    size_t q = x->ck_in_call ? x->ck_push_pos : pos0;
    d->consumed -= in->pos - q;
    in->pos = q;
    d->skip = d->produced - x->ck_produced;
    x->rpos = 0;
    x->fallback = true;
    int zr = inflateReset(&d->z);
    if (zr == Z_OK) zr = inflateSetDictionary(&d->z, x->ck_win, x->ck_wlen);
    if (zr != Z_OK)
        return wk_iltp_dec_fail(d, err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND,
                                WK_NO_OFFSET, "zlib restart failed");
    return fallback_step(d, out, in, err);
}

wk_result wk_iltp_isal_decode_step(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err)
{
    wk_iltp_isal_dec *x = d->is;
    if (x->fallback) return fallback_step(d, out, in, err);
    struct inflate_state *s = x->st;
    const size_t pos0 = in->pos;
    x->ck_in_call = false;
    for (;;) {
        if (!x->split_pending) plan_split(d, in);
        size_t avail = in->size - in->pos, room = out->size - out->pos;
        if (x->split_pending && x->split_at - d->consumed < avail) avail = (size_t)(x->split_at - d->consumed);
        if (s->block_state == ISAL_BLOCK_INPUT_DONE) avail = 0; /* only delivering now */
        if (avail > UINT32_MAX) avail = UINT32_MAX;
        if (room > UINT32_MAX) room = UINT32_MAX;
        s->next_in = avail ? (uint8_t *)(uintptr_t)(in->src + in->pos) : &wk_iltp_dummy_byte;
        s->avail_in = (uint32_t)avail;
        s->next_out = room ? out->dst + out->pos : &wk_iltp_dummy_byte;
        s->avail_out = (uint32_t)room;
        int r = isal_inflate(s);
        /* igzip's counts are trusted only on success: after ISAL_INVALID_LOOKBACK it was seen
         * to leave avail_out at 2^32 - 5 (fuzz/findings/iltp_stream_decode), which wrapped
         * out->pos. On an error nothing it made counts: zlib decodes again from the
         * checkpoint and writes those bytes itself. */
        size_t taken = s->avail_in <= avail ? avail - s->avail_in : 0;
        size_t made = r >= 0 && s->avail_out <= room ? room - s->avail_out : 0;
        in->pos += taken;
        out->pos += made;
        d->consumed += taken;
        d->produced += made;
        if (r < 0) return igzip_refused(d, out, in, pos0, r, err);
        if (s->block_state == ISAL_BLOCK_FINISH) {
            /* the end mark: everything delivered; hand back what igzip read past it */
            give_back(d, in, pos0);
            if (s->read_in_length >= 8)
                return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET,
                                        "internal: igzip read past the end mark in an earlier push");
            d->state = D_ENDED;
            return WK_DONE;
        }
        bool drained = s->tmp_out_processed == s->tmp_out_valid;
        if (x->split_pending && d->consumed == x->split_at && drained) {
            /* between blocks (igzip waits for the next header: NEW_HDR, or HDR with nothing
             * collected), nothing in the bit buffer */
            if ((s->block_state == ISAL_BLOCK_NEW_HDR || s->block_state == ISAL_BLOCK_HDR) &&
                s->read_in_length == 0 && s->tmp_in_size == 0 && !s->write_overflow_len &&
                !s->copy_overflow_length)
                take_checkpoint(d, in);
            x->split_pending = false;
            if (in->pos < in->size && out->pos < out->size) continue; /* the rest of the push */
        }
        if (out->pos == out->size) {
            give_back(d, in, pos0);
            keep_tail(d, in, pos0);
            return WK_NEED_OUTPUT;
        }
        if (in->pos == in->size) {
            keep_tail(d, in, pos0);
            return WK_NEED_INPUT;
        }
        if (!taken && !made && !(x->split_pending && d->consumed == x->split_at))
            return wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET,
                                    "internal: igzip stopped with input and output room");
    }
}

wk_code wk_iltp_isal_finish_check(wk_iltp_decoder *d, wk_error *err)
{
    wk_iltp_isal_dec *x = d->is;
    if (x->fallback || x->replay_lost) return WK_OK; /* zlib decoded it already / nothing kept */
    int zr = inflateReset(&d->z);
    if (zr == Z_OK) zr = inflateSetDictionary(&d->z, x->ck_win, x->ck_wlen);
    if (zr != Z_OK) {
        wk_iltp_dec_fail(d, err, zr == Z_MEM_ERROR ? WK_ERR_NOMEM : WK_ERR_BACKEND, WK_NO_OFFSET, "zlib restart failed");
        return d->failure.code;
    }
    x->fallback = true; /* igzip's state is left behind: the session is over either way */
    size_t pos = 0;
    while (pos < x->replay_len) {
        size_t avail = x->replay_len - pos;
        d->z.next_in = x->replay + pos;
        d->z.avail_in = (uInt)avail;
        d->z.next_out = x->ck_win; /* scratch from now on */
        d->z.avail_out = WK_ILTP_CK_WINDOW;
        zr = inflate(&d->z, Z_NO_FLUSH);
        size_t used = avail - d->z.avail_in, made = WK_ILTP_CK_WINDOW - d->z.avail_out;
        pos += used;
        uint64_t at = x->ck_pos + pos;
        if (zr == Z_STREAM_END) {
            wk_iltp_dec_fail(d, err, WK_ERR_BACKEND, WK_NO_OFFSET, "internal: zlib sees an end mark igzip did not");
            return d->failure.code;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            wk_iltp_inflate_fail(d, err, zr, at ? at - 1 : 0);
            return d->failure.code;
        }
        if (!used && !made) break;
    }
    return WK_OK;
}
