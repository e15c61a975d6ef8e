/* libFuzzer target: Snappy block format (eth.h, spec 1) on arbitrary bytes, libsnappy against our
 * own validating pass.
 *
 * Input: byte 0 selects the caller limit max_out (bits 0-2: 0, 1, 60, 4096, 65536, 1 MiB, 4 MiB,
 * 2^32-1; small limits exercise SNAPPY_ERR_TOO_LARGE), the rest is the block.
 *
 * Checked on every input:
 *   - wk_snappy_block_peek: a failure is SNAPPY_ERR_TRUNCATED / _PREAMBLE / _TOO_LARGE at offset
 *     0, and wk_snappy_block_validate fails the same way; on success the preamble is 1..5 bytes
 *     and TOO_LARGE is exactly "declared > max_out";
 *   - wk_snappy_block_validate (ours) and wk_snappy_block_decode (libsnappy) agree on the verdict;
 *     on failure both give the same PeerProtocol SNAPPY_ERR_* code and offset, the offset <= size
 *     (WK_ERR_BACKEND, "libsnappy rejects what the validator accepts", is a failed check);
 *   - libsnappy's own snappy_validate_compressed_buffer agrees too whenever the preamble fits
 *     max_out (a third opinion that does not go through our preamble reader), with one known
 *     leniency of libsnappy: it reads a literal length field ff ff ff ff as an empty literal
 *     (32-bit wrap of 2^32) where spec 1.3 rejects the block, so it may accept a block we reject
 *     only when the block holds fc ff ff ff ff;
 *   - dst_cap one byte below the declared length is WK_ERR_ARG (Integration);
 *   - on success: the decoded length equals the preamble; wk_snappy_block_decode_alloc gives the
 *     same bytes through a counting allocator that sees exactly one allocation of max(declared, 1)
 *     bytes, all freed; a limit of declared - 1 is SNAPPY_ERR_TOO_LARGE at offset 0;
 *     wk_snappy_block_encode of the decoded bytes stays within wk_snappy_max_compressed_len,
 *     validates, and decodes back to the same bytes;
 *   - the block bytes themselves, taken as plaintext, encode and decode back (round trip);
 *   - a failed decode_alloc leaves nothing allocated.
 * Declared lengths above 4 MiB are only validated (no output buffer that large is used). */
#include <wirekit/eth.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define BUF_CAP ((size_t)4 << 20) /* largest declared length actually decoded */

static const uint64_t limits[8] = {0, 1, 60, 4096, 65536, (uint64_t)1 << 20, (uint64_t)4 << 20,
                                   0xFFFFFFFFu};

static bool is_snappy_code(wk_code c)
{
    return c == WK_ERR_SNAPPY_TRUNCATED || c == WK_ERR_SNAPPY_PREAMBLE ||
           c == WK_ERR_SNAPPY_TOO_LARGE || c == WK_ERR_SNAPPY_BAD_OFFSET ||
           c == WK_ERR_SNAPPY_OVERRUN || c == WK_ERR_SNAPPY_LENGTH_MISMATCH;
}

/* A decoder's verdict on the bytes: a PeerProtocol SNAPPY_ERR_* with an offset inside the input. */
static void check_peer_error(wk_code c, const wk_error *e, size_t n)
{
    CHECK(c != WK_OK && e->code == c);
    CHECK(is_snappy_code(c));
    CHECK(e->category == WK_CAT_PEER_PROTOCOL && wk_code_category(c) == WK_CAT_PEER_PROTOCOL);
    CHECK(e->has_offset && e->offset <= n);
}

/* True when p[0..n) holds fc ff ff ff ff anywhere (a literal of length 2^32 if it is a tag). */
static bool has_wrapped_literal(const uint8_t *p, size_t n)
{
    static const uint8_t pat[5] = {0xfc, 0xff, 0xff, 0xff, 0xff};
    for (size_t i = 0; i + 5 <= n; i++)
        if (memcmp(p + i, pat, 5) == 0) return true;
    return false;
}

static uint8_t *buf_a, *buf_b, *enc_buf;
static size_t enc_cap;

static void ensure_buffers(size_t n)
{
    if (!buf_a) {
        buf_a = malloc(BUF_CAP + 1);
        buf_b = malloc(BUF_CAP + 1);
        CHECK(buf_a && buf_b);
    }
    size_t need = (size_t)wk_snappy_max_compressed_len(n > BUF_CAP ? n : BUF_CAP);
    if (enc_cap < need) {
        free(enc_buf);
        enc_buf = malloc(need);
        CHECK(enc_buf);
        enc_cap = need;
    }
}

/* Encodes p[0..n) and decodes it back; the result must be p. */
static void round_trip(const uint8_t *p, size_t n)
{
    wk_error e;
    size_t elen = 0;
    uint64_t bound = wk_snappy_max_compressed_len(n);
    CHECK(bound == 32 + (uint64_t)n + n / 6);
    CHECK(wk_snappy_block_encode(p, n, enc_buf, (size_t)bound, &elen, &e) == WK_OK);
    CHECK(elen > 0 && elen <= bound);
    /* one byte of room too few is refused */
    CHECK(wk_snappy_block_encode(p, n, enc_buf, (size_t)bound - 1, &elen, &e) == WK_ERR_ARG);
    CHECK(wk_snappy_block_encode(p, n, enc_buf, (size_t)bound, &elen, &e) == WK_OK);
    uint64_t decl = 0;
    CHECK(wk_snappy_block_validate(enc_buf, elen, n, &decl, &e) == WK_OK && decl == n);
    size_t got = 0;
    CHECK(wk_snappy_block_decode(enc_buf, elen, n, buf_b, n, &got, &e) == WK_OK);
    CHECK(got == n && (n == 0 || memcmp(buf_b, p, n) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint64_t max_out = limits[data[0] & 7];
    const uint8_t *src = data + 1;
    size_t n = size - 1;
    ensure_buffers(n);

    /* the preamble alone */
    wk_error ep, ev, ed;
    uint64_t declared = UINT64_MAX;
    size_t plen = 0;
    wk_code p = wk_snappy_block_peek(src, n, max_out, &declared, &plen, &ep);
    wk_code v = wk_snappy_block_validate(src, n, max_out, NULL, &ev);
    if (p != WK_OK) {
        CHECK(p == WK_ERR_SNAPPY_TRUNCATED || p == WK_ERR_SNAPPY_PREAMBLE ||
              p == WK_ERR_SNAPPY_TOO_LARGE);
        check_peer_error(p, &ep, n);
        CHECK(ep.offset == 0);
        CHECK(v == p && ev.offset == ep.offset);
        /* what a limit-free peek says about TOO_LARGE */
        if (p == WK_ERR_SNAPPY_TOO_LARGE) {
            uint64_t d2;
            CHECK(wk_snappy_block_peek(src, n, UINT64_MAX, &d2, NULL, &ep) == WK_OK &&
                  d2 > max_out);
        }
        round_trip(src, n);
        return 0;
    }
    CHECK(plen >= 1 && plen <= WK_SNAPPY_PREAMBLE_MAX && plen <= n);
    CHECK(declared <= max_out && declared <= WK_SNAPPY_BLOCK_MAX);

    /* our validator against libsnappy's own validation (no limit of ours involved). libsnappy
     * computes a literal's length in 32 bits, so a 4-byte length field ff ff ff ff (length 2^32)
     * wraps to an empty literal it accepts; spec 1.3 rejects it. So libsnappy may accept more
     * than we do, and only where that pattern occurs; it never rejects what we accept. */
    bool lib_ok = snappy_validate_compressed_buffer((const char *)src, n) == SNAPPY_OK;
    if (v == WK_OK) CHECK(lib_ok);
    else if (lib_ok) CHECK(has_wrapped_literal(src, n));
    if (v != WK_OK) {
        check_peer_error(v, &ev, n);
        CHECK(v != WK_ERR_SNAPPY_TOO_LARGE && v != WK_ERR_SNAPPY_PREAMBLE);
    } else {
        uint64_t d2 = 0;
        CHECK(wk_snappy_block_validate(src, n, max_out, &d2, &ev) == WK_OK && d2 == declared);
    }

    if (declared <= BUF_CAP) {
        if (declared > 0) {
            size_t dummy;
            CHECK(wk_snappy_block_decode(src, n, max_out, buf_a, (size_t)declared - 1, &dummy,
                                         &ed) == WK_ERR_ARG);
            CHECK(ed.code == WK_ERR_ARG && ed.category == WK_CAT_INTEGRATION);
        }
        size_t out_len = SIZE_MAX;
        wk_code d = wk_snappy_block_decode(src, n, max_out, buf_a, BUF_CAP, &out_len, &ed);
        wk_alloc_counter ctr;
        memset(&ctr, 0, sizeof ctr);
        wk_allocator a = wk_counting_allocator(&ctr);
        uint8_t *heap = NULL;
        size_t heap_len = SIZE_MAX;
        wk_error ea;
        wk_code da = wk_snappy_block_decode_alloc(src, n, max_out, &a, &heap, &heap_len, &ea);
        CHECK(d != WK_ERR_BACKEND && da != WK_ERR_BACKEND);
        CHECK((d == WK_OK) == (v == WK_OK));
        CHECK(da == d);
        if (d != WK_OK) {
            check_peer_error(d, &ed, n);
            CHECK(ed.code == ev.code && ed.offset == ev.offset);
            CHECK(ea.code == ev.code && ea.offset == ev.offset);
            CHECK(ctr.current == 0);
        } else {
            CHECK(out_len == declared && heap_len == declared);
            CHECK(heap != NULL);
            CHECK(ctr.count == 1 && ctr.peak == (declared ? declared : 1));
            CHECK(out_len == 0 || memcmp(heap, buf_a, out_len) == 0);
            a.free(a.opaque, heap);
            CHECK(ctr.current == 0);
            if (declared > 0) {
                CHECK(wk_snappy_block_validate(src, n, declared - 1, NULL, &ev) ==
                      WK_ERR_SNAPPY_TOO_LARGE);
                CHECK(ev.offset == 0);
            }
            /* libsnappy's own length reader agrees with our preamble */
            size_t lib_len = 0;
            CHECK(snappy_uncompressed_length((const char *)src, n, &lib_len) == SNAPPY_OK &&
                  lib_len == declared);
            round_trip(buf_a, out_len);
        }
    }
    round_trip(src, n);
    return 0;
}
