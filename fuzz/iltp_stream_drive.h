/* The Lace-065 stream decoder drive loop shared by the stream fuzz targets (iltp_stream_decode,
 * iltp_deflate_diff): one pass over an encoded stream in pushes of a given size through output
 * views of a given capacity, checking the streaming contract on every step, and the outcome the
 * targets compare. Include once per target, after fuzz_check.h. */
#ifndef WK_FUZZ_ILTP_STREAM_DRIVE_H
#define WK_FUZZ_ILTP_STREAM_DRIVE_H
#include <wirekit/iltp.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>

/* What one pass ended with. */
typedef struct outcome {
    wk_code code;       /* WK_OK, or the error (decode error, or finish's verdict) */
    uint64_t offset;    /* the error's offset (WK_NO_OFFSET when none) */
    bool ended;         /* end mark seen */
    bool bounded;       /* stopped at the output bound: no end-of-stream verdict */
    uint64_t produced;  /* bytes written */
    uint64_t hash;      /* CRC-32 of the bytes written */
    uint64_t consumed;  /* encoded bytes consumed */
} outcome;

/* Where a pass copies the bytes it decodes (p may be NULL; at most cap bytes are kept). */
typedef struct sink {
    uint8_t *p;
    size_t cap, n;
} sink;

/* Checksum of the bytes written: zlib's crc32, chained across calls, so it does not depend on
 * how the output was split into views. (A byte-wise FNV-1a here, compiled with coverage
 * instrumentation, was half of the target's run time.) */
static uint64_t crc(uint64_t h, const uint8_t *p, size_t n)
{
    return crc32((uLong)h, p, (uInt)n);
}

static bool lead_prefix(const uint8_t *p, size_t n)
{
    size_t m = n < WK_ILTP_PREFACE_LEAD_LEN ? n : WK_ILTP_PREFACE_LEAD_LEN;
    return memcmp(p, WK_ILTP_PREFACE_LEAD, m) == 0;
}

static void check_error(const wk_error *err, size_t n)
{
    CHECK(err->code != WK_OK);
    CHECK(err->code != WK_ERR_NOMEM); /* every allocation happens at creation */
    CHECK(err->category == WK_CAT_PEER_PROTOCOL);
    CHECK(wk_code_category(err->code) == WK_CAT_PEER_PROTOCOL);
    if (err->has_offset) CHECK(err->offset <= n);
}

/* Re-asks a failed decoder: the error must be sticky. */
static void check_sticky(wk_iltp_decoder *d, wk_code code)
{
    uint8_t b[4];
    wk_out out = {b, sizeof b, 0};
    static const uint8_t one[1] = {0};
    wk_in in = {one, 1, 0};
    wk_error err;
    CHECK(wk_iltp_decoder_decode(d, &in, &out, &err) == WK_ERROR);
    CHECK(err.code == code && in.pos == 0 && out.pos == 0);
    CHECK(wk_iltp_decoder_finish(d, NULL, &err) == WK_ERROR && err.code == code);
}

static void keep(sink *s, const uint8_t *p, size_t n)
{
    if (!s || !s->p) return;
    size_t m = s->cap - s->n < n ? s->cap - s->n : n;
    memcpy(s->p + s->n, p, m);
    s->n += m;
}

static outcome failed(outcome oc, const wk_error *err)
{
    oc.code = err->code;
    oc.offset = err->has_offset ? err->offset : WK_NO_OFFSET;
    return oc;
}

/* Limits of one pass: it stops (bounded, without a verdict) once it has decoded more than `views`
 * views or `max` bytes, so that bombs through tiny views stay fast; after `pushes` pushes the rest
 * of the input is pushed at once. */
typedef struct limits {
    uint64_t views, max;
    size_t pushes;
} limits;

/* Decodes wire[0..n) pushing `chunk` bytes at a time through views of `cap` bytes (buf holds at
 * least cap bytes), keeping the decoded bytes in *out (may be NULL). */
static outcome run(wk_iltp_decoder *d, wk_iltp_encoding enc, const uint8_t *wire, size_t n,
                   size_t chunk, size_t cap, uint8_t *buf, sink *out_bytes, limits lim)
{
    uint64_t views = lim.views, max = lim.max;
    size_t pushes = 0;
    outcome oc = {WK_OK, WK_NO_OFFSET, false, false, 0, 0, 0};
    uint64_t bound = (uint64_t)cap * views;
    if (bound > max) bound = max;
    size_t pos = 0;
    wk_error err;
    for (;;) {
        if (++pushes > lim.pushes) chunk = n - pos;
        size_t take = n - pos < chunk ? n - pos : chunk;
        wk_in in = {wire + pos, take, 0};
        wk_result r;
        for (;;) {
            wk_out out = {buf, cap, 0};
            size_t in0 = in.pos;
            wk_error_clear(&err);
            r = wk_iltp_decoder_decode(d, &in, &out, &err);
            CHECK(out.pos <= cap && in.pos >= in0 && in.pos <= in.size);
            oc.produced += out.pos;
            oc.consumed += in.pos - in0;
            oc.hash = crc(oc.hash, buf, out.pos);
            keep(out_bytes, buf, out.pos);
            CHECK(wk_iltp_decoder_produced(d) == oc.produced);
            if (r == WK_ERROR) {
                check_error(&err, n);
                check_sticky(d, err.code);
                return failed(oc, &err);
            }
            CHECK(wk_iltp_decoder_consumed(d) == oc.consumed);
            if (r == WK_NEED_OUTPUT) {
                CHECK(out.pos == cap);
                if (oc.produced > bound) {
                    oc.bounded = true;
                    return oc;
                }
                continue;
            }
            if (r == WK_NEED_INPUT) {
                CHECK(!wk_iltp_decoder_ended(d));
                CHECK(in.pos == in.size);
                break;
            }
            CHECK(r == WK_DONE);
            CHECK(enc != WK_ILTP_IDENTITY);
            CHECK(wk_iltp_decoder_ended(d));
            break;
        }
        pos += in.pos;
        if (r == WK_DONE) break;
        if (pos == n) break;
    }

    if (!wk_iltp_decoder_ended(d)) {
        /* EOF before the end mark */
        wk_code c = wk_iltp_decoder_finish(d, NULL, &err) == WK_DONE ? WK_OK : err.code;
        if (enc == WK_ILTP_IDENTITY) {
            CHECK(c == WK_OK);
        } else {
            /* truncation; for deflate12c the finish may also find the input it holds malformed
             * (ISA-L checks a dynamic block header only once it has all of it) */
            CHECK(err.code == c && (c == WK_ERR_ILTP_TRUNCATED ||
                                    (enc == WK_ILTP_DEFLATE12C && (c == WK_ERR_ILTP_DEFLATE_MALFORMED ||
                                                                  c == WK_ERR_ILTP_DEFLATE_REFERENCE))));
            check_error(&err, n);
            check_sticky(d, c);
            return failed(oc, &err);
        }
        oc.code = c;
        return oc;
    }

    /* After the end mark: nothing more is consumed; the rest must begin a raw preface. */
    oc.ended = true;
    CHECK(wk_iltp_decoder_consumed(d) == pos);
    const uint8_t *rest = wire + pos;
    size_t rn = n - pos;
    bool is_lead = lead_prefix(rest, rn);
    wk_in in = {rest, rn, 0};
    wk_out out = {buf, cap, 0};
    wk_result r = wk_iltp_decoder_decode(d, &in, &out, &err);
    CHECK(in.pos == 0 && out.pos == 0);
    if (!is_lead) {
        CHECK(r == WK_ERROR && err.code == WK_ERR_ILTP_AFTER_END_MARK);
        check_error(&err, n);
        check_sticky(d, err.code);
        return failed(oc, &err);
    }
    bool partial = rn > 0 && rn < WK_ILTP_PREFACE_LEAD_LEN;
    CHECK(r == (partial ? WK_NEED_INPUT : WK_DONE));
    wk_code c = wk_iltp_decoder_finish(d, &in, &err) == WK_DONE ? WK_OK : err.code;
    if (partial) {
        CHECK(c == WK_ERR_ILTP_TRUNCATED);
        check_error(&err, n);
        return failed(oc, &err);
    }
    CHECK(c == WK_OK);
    return oc;
}

/* A verdict on the bytes (not a local failure). */
static bool is_bad(const outcome *o)
{
    return o->code != WK_OK && o->code != WK_ERR_ILTP_TRUNCATED &&
           o->code != WK_ERR_ILTP_AFTER_END_MARK;
}

#endif
