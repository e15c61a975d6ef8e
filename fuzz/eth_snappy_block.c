/* libFuzzer target: Snappy block format (eth.h, spec 1) on arbitrary bytes: our one-pass decoder
 * (every kernel) against libsnappy and against our validating pass.
 *
 * Input: byte 0 selects the caller limit max_out (bits 0-2: 0, 1, 60, 4096, 65536, 1 MiB, 4 MiB,
 * 2^32-1; small limits exercise SNAPPY_ERR_TOO_LARGE) and, in bits 3-7, where a mutation of the
 * compressed plaintext goes (below); the rest is the block.
 *
 * Kernels: WK_SNAPPY_KERNEL=portable|bmi2|avx2|avx512 forces one kernel for the whole run (the
 * long runs, one per kernel); unset, every input is decoded by every kernel the CPU has.
 *
 * Checked on every input, for every kernel in play:
 *   - wk_eth_snappy_block_peek: a failure is SNAPPY_ERR_TRUNCATED / _PREAMBLE / _TOO_LARGE at offset
 *     0, and wk_eth_snappy_block_validate fails the same way; on success the preamble is 1..5 bytes
 *     and TOO_LARGE is exactly "declared > max_out";
 *   - the differential (decode_differential): wk_eth_snappy_block_decode and _decode_alloc (ours)
 *     give the same verdict as wk_eth_snappy_block_validate, and on failure the same PeerProtocol
 *     SNAPPY_ERR_* code and offset (<= size); libsnappy (snappy_uncompress, and its own
 *     snappy_validate_compressed_buffer) gives the same verdict, and on success the same bytes,
 *     with one known leniency of libsnappy: it reads a literal length field ff ff ff ff as an
 *     empty literal (32-bit wrap of 2^32) where spec 1.3 rejects the block, so it may accept a
 *     block we reject only when our error points at exactly such a literal (tag fc, then
 *     ff ff ff ff);
 *   - the decode writes nothing outside the declared length: _decode_alloc's buffer is exactly
 *     max(declared, 1) bytes (ASan sees any byte past it), and _decode into a larger buffer leaves
 *     every byte past the declared length as it was;
 *   - dst_cap one byte below the declared length is WK_ERR_ARG (Integration);
 *   - on success: the decoded length equals the preamble; _decode_alloc makes exactly one
 *     allocation of max(declared, 1) bytes through a counting allocator, all freed; a limit of
 *     declared - 1 is SNAPPY_ERR_TOO_LARGE at offset 0; the decoded bytes re-encode within
 *     wk_eth_snappy_block_max_size, validate, and decode back;
 *   - the block bytes themselves, taken as plaintext, encode and decode back (round trip), and
 *     their encoding with one byte replaced (position and value from byte 0 and the input) goes
 *     through the same differential: deep, mostly valid blocks whose one bad element sits
 *     anywhere, including inside the fast loops;
 *   - a failed decode_alloc leaves nothing allocated.
 * Declared lengths above 4 MiB are only validated (no output buffer that large is used). */
#include <wirekit/eth.h>
#include "wk_contract_eth.h"
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "eth_ref.h"

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

/* True when the error points at a literal tag fc followed by the length field ff ff ff ff (a
 * length of 2^32, which libsnappy wraps to an empty literal). */
static bool at_wrapped_literal(const uint8_t *p, size_t n, const wk_error *e)
{
    static const uint8_t pat[5] = {0xfc, 0xff, 0xff, 0xff, 0xff};
    return (e->code == WK_ERR_SNAPPY_TRUNCATED || e->code == WK_ERR_SNAPPY_OVERRUN) &&
           e->offset + 5 <= n && memcmp(p + e->offset, pat, 5) == 0;
}

#define CANARY 128 /* bytes after the declared length that a decode must leave alone */
static uint8_t *buf_a, *buf_b, *enc_buf, *mut_buf;
static size_t enc_cap;

static void ensure_buffers(size_t n)
{
    if (!buf_a) {
        buf_a = malloc(BUF_CAP + CANARY);
        buf_b = malloc(BUF_CAP + 1);
        CHECK(buf_a && buf_b);
    }
    size_t need = (size_t)wk_eth_snappy_block_max_size(n > BUF_CAP ? n : BUF_CAP);
    if (enc_cap < need) {
        free(enc_buf);
        free(mut_buf);
        enc_buf = malloc(need);
        mut_buf = malloc(need);
        CHECK(enc_buf && mut_buf);
        enc_cap = need;
    }
}

/* The kernels in play: the forced one, or every kernel the CPU runs. */
static int kernels_in_play(int ids[ETH_KERNELS])
{
    int forced = eth_fuzz_kernel(), k = 0;
    if (forced >= 0) {
        ids[k++] = forced;
        return k;
    }
    for (int id = 0; id < ETH_KERNELS; id++)
        if (wk_eth_snappy__set_kernel(id) == id) ids[k++] = id;
    return k;
}

/* Encodes p[0..n) into enc_buf and decodes it back; the result must be p. Returns the encoded
 * length. */
static size_t round_trip(const uint8_t *p, size_t n)
{
    wk_error e;
    size_t elen = 0;
    uint64_t bound = wk_eth_snappy_block_max_size(n);
    CHECK(bound == 32 + (uint64_t)n + n / 6);
    CHECK(enc_out(wk_eth_snappy_block_encode(p, n, VIEW(enc_buf, (size_t)bound), &e), &elen, &e) == WK_OK);
    CHECK(elen > 0 && elen <= bound);
    /* one byte of room too few is refused */
    CHECK(enc_out(wk_eth_snappy_block_encode(p, n, VIEW(enc_buf, (size_t)bound - 1), &e), &elen, &e) == ENC_NO_ROOM);
    CHECK(enc_out(wk_eth_snappy_block_encode(p, n, VIEW(enc_buf, (size_t)bound), &e), &elen, &e) == WK_OK);
    uint64_t decl = 0;
    CHECK(wk_eth_snappy_block_validate(LOOK(enc_buf, elen), n, &decl, &e) == WK_OK && decl == n);
    size_t got = 0;
    CHECK(enc_out(wk_eth_snappy_block_decode(IN(enc_buf, elen), n, VIEW(buf_b, n), &e), &got, &e) == WK_OK);
    CHECK(got == n && (n == 0 || memcmp(buf_b, p, n) == 0));
    return elen;
}

/* Every check of the header comment on one block src[0..n) under max_out, for every kernel in
 * play. Returns true when the block is valid; *declared_out is then its length, and its bytes
 * are in buf_a when it is at most BUF_CAP. */
static bool decode_differential(const uint8_t *src, size_t n, uint64_t max_out,
                                uint64_t *declared_out)
{
    /* the preamble alone */
    wk_error ep, ev, ed;
    uint64_t declared = UINT64_MAX;
    size_t plen = 0;
    wk_code p = wk_eth_snappy_block_peek(LOOK(src, n), max_out, &declared, &plen, &ep);
    wk_code v = wk_eth_snappy_block_validate(LOOK(src, n), max_out, NULL, &ev);
    if (p != WK_OK) {
        CHECK(p == WK_ERR_SNAPPY_TRUNCATED || p == WK_ERR_SNAPPY_PREAMBLE ||
              p == WK_ERR_SNAPPY_TOO_LARGE);
        check_peer_error(p, &ep, n);
        CHECK(ep.offset == 0);
        CHECK(v == p && ev.offset == ep.offset);
        /* what a limit-free peek says about TOO_LARGE */
        if (p == WK_ERR_SNAPPY_TOO_LARGE) {
            uint64_t d2;
            CHECK(wk_eth_snappy_block_peek(LOOK(src, n), UINT64_MAX, &d2, NULL, &ep) == WK_OK &&
                  d2 > max_out);
        }
        return false;
    }
    CHECK(plen >= 1 && plen <= WK_ETH_SNAPPY_PREAMBLE_MAX && plen <= n);
    CHECK(declared <= max_out && declared <= WK_ETH_SNAPPY_BLOCK_MAX);
    if (v != WK_OK) {
        check_peer_error(v, &ev, n);
        CHECK(v != WK_ERR_SNAPPY_TOO_LARGE && v != WK_ERR_SNAPPY_PREAMBLE);
    } else {
        uint64_t d2 = 0;
        CHECK(wk_eth_snappy_block_validate(LOOK(src, n), max_out, &d2, &ev) == WK_OK && d2 == declared);
    }

    /* libsnappy's verdict (no limit of ours involved): the same, but for its one leniency */
    bool lib_valid = snappy_validate_compressed_buffer((const char *)src, n) == SNAPPY_OK;
    if (v == WK_OK) CHECK(lib_valid);
    else if (lib_valid) CHECK(at_wrapped_literal(src, n, &ev));
    if (declared > BUF_CAP) return v == WK_OK;
    size_t lib_len = BUF_CAP;
    bool lib_ok = snappy_uncompress((const char *)src, n, (char *)buf_b, &lib_len) == SNAPPY_OK;
    CHECK(lib_ok == lib_valid);
    if (lib_ok) CHECK(lib_len == declared);

    int ids[ETH_KERNELS];
    int nk = kernels_in_play(ids);
    for (int ki = 0; ki < nk; ki++) {
        CHECK(wk_eth_snappy__set_kernel(ids[ki]) == ids[ki]);
        if (declared > 0) {
            size_t dummy;
            CHECK(enc_out(wk_eth_snappy_block_decode(IN(src, n), max_out, VIEW(buf_a, (size_t)declared - 1), &ed), &dummy, &ed) == ENC_NO_ROOM &&
                  LAST_IN.pos == 0); /* one byte short: NEED_OUTPUT, input and view untouched */
        }
        memset(buf_a + declared, 0xa5, CANARY);
        size_t out_len = SIZE_MAX;
        wk_code d = enc_out(wk_eth_snappy_block_decode(IN(src, n), max_out, VIEW(buf_a, BUF_CAP), &ed), &out_len, &ed);
        for (size_t k = 0; k < CANARY; k++) CHECK(buf_a[declared + k] == 0xa5);
        wk_alloc_counter ctr;
        memset(&ctr, 0, sizeof ctr);
        wk_allocator a = wk_counting_allocator(&ctr);
        uint8_t *heap = NULL;
        size_t heap_len = SIZE_MAX;
        wk_error ea;
        wk_code da = block_decode_alloc_code(src, n, max_out, &a, &heap, &heap_len, &ea);
        CHECK(d != WK_ERR_BACKEND && da != WK_ERR_BACKEND);
        CHECK((d == WK_OK) == (v == WK_OK));
        CHECK(da == d);
        if (d != WK_OK) {
            check_peer_error(d, &ed, n);
            CHECK(ed.code == ev.code && ed.offset == ev.offset);
            CHECK(ea.code == ev.code && ea.offset == ev.offset);
            CHECK(ctr.current == 0);
            continue;
        }
        CHECK(out_len == declared && heap_len == declared);
        CHECK(lib_ok && (declared == 0 || memcmp(buf_a, buf_b, (size_t)declared) == 0));
        CHECK(heap != NULL);
        CHECK(ctr.count == 1 && ctr.peak == (declared ? declared : 1));
        CHECK(out_len == 0 || memcmp(heap, buf_a, out_len) == 0);
        a.free(a.opaque, heap);
        CHECK(ctr.current == 0);
    }
    *declared_out = declared;
    return v == WK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint64_t max_out = limits[data[0] & 7];
    const uint8_t *src = data + 1;
    size_t n = size - 1;
    ensure_buffers(n);

    uint64_t declared = 0;
    if (decode_differential(src, n, max_out, &declared) && declared <= BUF_CAP) {
        wk_error ev;
        if (declared > 0) {
            CHECK(wk_eth_snappy_block_validate(LOOK(src, n), declared - 1, NULL, &ev) ==
                  WK_ERR_SNAPPY_TOO_LARGE);
            CHECK(ev.offset == 0);
        }
        /* libsnappy's own length reader agrees with our preamble */
        size_t lib_len = 0;
        CHECK(snappy_uncompressed_length((const char *)src, n, &lib_len) == SNAPPY_OK &&
              lib_len == declared);
        round_trip(buf_a, (size_t)declared);
    }

    /* the input as plaintext: round trip, then its encoding with one byte replaced */
    size_t elen = round_trip(src, n);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ src[i]) * 16777619u;
    size_t pos = ((size_t)(data[0] >> 3) * elen / 32 + h % (elen / 32 + 1)) % elen;
    memcpy(mut_buf, enc_buf, elen);
    mut_buf[pos] ^= (uint8_t)(1 + (h >> 24) % 255);
    decode_differential(mut_buf, elen, WK_ETH_SNAPPY_BLOCK_MAX, &declared);
    return 0;
}
