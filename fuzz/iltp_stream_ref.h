/* What the Lace-065 stream fuzz targets (iltp_stream_decode, iltp_deflate_diff) share besides the
 * drive loop, which is the contract harness's (fuzz_drive.h with the iltp adapter,
 * tests/contract/wk_contract_iltp.h): the raw preface lead rule after the end mark, the bound on
 * decompression bombs, and what counts as a verdict on the bytes. Include after fuzz_check.h. */
#ifndef WK_FUZZ_ILTP_STREAM_REF_H
#define WK_FUZZ_ILTP_STREAM_REF_H
#include <wirekit/iltp.h>
#include <stdbool.h>
#include <string.h>
#include "wk_contract.h"

/* True when p[0..n) begins the raw preface lead (or is a prefix of it). */
static inline bool iltp_lead_prefix(const uint8_t *p, size_t n)
{
    size_t m = n < WK_ILTP_PREFACE_LEAD_LEN ? n : WK_ILTP_PREFACE_LEAD_LEN;
    return memcmp(p, WK_ILTP_PREFACE_LEAD, m) == 0;
}

/* The bomb bound. Returns the length of the input's prefix that decodes to about `bound` bytes
 * (the whole input when it decodes to at most bound bytes) and sets *out_max to at most how many
 * bytes that prefix decodes to (what a decoder may still hold when the prefix ends included). One
 * push, 64 KiB views, no checks: this only measures, so that the harness's runs stay fast (a
 * target sizes its views from *out_max); a cut stream then ends like any truncated one. buf holds
 * 65536 bytes. */
#define ILTP_HELD_MAX ((uint64_t)256 << 10) /* decoded bytes a decoder may hold: a zstd block, igzip's buffer */
static inline size_t iltp_prefix_within(wk_iltp_encoding enc, wk_iltp_backend be, const uint8_t *wire,
                                        size_t n, uint64_t bound, uint8_t *buf, uint64_t *out_max)
{
    wk_error err;
    wk_iltp_decoder_params p = {NULL, be};
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, &p, &err);
    CHECK(d != NULL);
    wk_in in = {wire, n, 0};
    uint64_t made = 0;
    wk_result r;
    do {
        wk_out out = {buf, 65536, 0};
        r = wk_iltp_decoder_decode(d, &in, &out, &err);
        made += out.pos;
    } while (r == WK_NEED_OUTPUT && made <= bound);
    bool cut = r == WK_NEED_OUTPUT;
    wk_iltp_decoder_destroy(d);
    *out_max = cut ? made + ILTP_HELD_MAX : made;
    return cut ? in.pos : n;
}

/* A verdict on the bytes (not a local failure, not the end of the input). */
static inline bool iltp_is_bad(const wk_contract_outcome *o)
{
    return o->verdict == WK_ERROR && o->error.code != WK_ERR_ILTP_TRUNCATED &&
           o->error.code != WK_ERR_ILTP_AFTER_END_MARK;
}

#endif
