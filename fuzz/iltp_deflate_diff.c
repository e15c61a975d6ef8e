/* libFuzzer target: the two deflate12c decoders (zlib, ISA-L) on the same bytes.
 *
 * Input: byte 0 selects the run.
 *   bits 0-2  output view capacity (1 .. 65536 bytes)
 *   bits 3-5  push-chunk size (1 .. 65536 bytes)
 *   bit  6    0: the rest of the input is the encoded stream;
 *             1: the rest is a payload that wirekit encodes (bit 7: with ISA-L, else zlib)
 *                and then damages: byte 1 bits 0-3 the largest batch (2^k bytes; batches are
 *                2^(k-1) to 2^k bytes, at least 1/16 of the payload, the last one shorter), bits 4-7 the
 *                level; byte 2 bits 0-2 the number of damaged bytes, byte 3 seeds the PRNG that
 *                places the batches and the damage; the payload starts at byte 4.
 *
 * Both decoders run on the contract harness (fuzz_drive.h, adapter wk_contract_iltp_decoder_ops)
 * in the same two runs: the chosen pushes and views, then the whole input (64 KiB views) on the
 * same decoder after reset. Every call is checked against the contract (views and pushes, nothing
 * written past out->pos, NEED_INPUT / NEED_OUTPUT / DONE rules, progress, sticky PeerProtocol
 * errors, finish twice the same; the adapter: the counters, a clean end only with the end mark).
 * Then, run for run, the decoders must agree: the same verdict (error name, offset, end mark seen),
 * the same decoded bytes when the stream is accepted, and bytes that are prefixes of one another
 * when it is refused (a decoder may deliver part of a bad block). A stream cut before its end
 * mark is ILTP_ERR_TRUNCATED at the same offset for both; igzip's bytes are then a prefix of
 * zlib's: it may keep the last symbols of an unflushed push until more input comes (a few bytes,
 * docs/iltp.md).
 *
 * The one documented difference (docs/iltp.md, docs/fuzzing.md): Lace-065 lets a receiver resolve
 * some distances beyond the 4096-byte window. zlib resolves one only against output of the same
 * inflate call, igzip against its 32 KiB of history. So when the decoders disagree, the input is
 * classified with zlib through 1-byte views (no same-call output): with a 4096-byte window and
 * with a 32 KiB one. If the 4096-byte decoder refuses a distance that the 32 KiB decoder resolves,
 * the disagreement is that allowance and is accepted. The second documented difference: a
 * dynamic block header with an incomplete Huffman code, which zlib refuses and igzip accepts
 * (classified by parsing the header, see incomplete_code). Any other disagreement fails.
 *
 * Only the prefix of the input that zlib decodes to about 256 views (at most 64 KiB) is driven,
 * in at most about 256 pushes, with views grown so that a run makes at most about 256 calls
 * (iltp_stream_ref.h): tiny views are slow. Decoders are created once and reset for every run. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_drive.h"
#include "iltp_stream_ref.h"
#include "wk_contract_iltp.h"

#define BIG_VIEW 65536
#define KEEP ((size_t)64 << 10) /* decoded bytes compared per run, at most */
#define CALLS 256                /* views and pushes per run, about */

static const size_t caps[8] = {1, 2, 3, 7, 61, 512, 4096, 65536};
static const size_t chunks[8] = {1, 2, 3, 5, 17, 509, 4096, 65536};

static wk_contract_iltp mz, mi; /* the adapters, each keeping its decoder and decoded bytes */
static uint8_t *view;
static wk_iltp_encoder *encs[2][10];

static void free_all(void)
{
    wk_contract_iltp_release(&mz);
    wk_contract_iltp_release(&mi);
    for (int b = 0; b < 2; b++)
        for (int l = 0; l < 10; l++) wk_iltp_encoder_destroy(encs[b][l]);
    free(view);
    for (int k = 0; k < 2; k++) {
        free(mz.keep[k]);
        free(mi.keep[k]);
    }
}

static void setup(void)
{
    if (view) return;
    wk_contract_iltp_setup(&mz, WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ZLIB, false);
    wk_contract_iltp_setup(&mi, WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ISAL, false);
    view = malloc(BIG_VIEW);
    CHECK(view != NULL);
    wk_contract_iltp *ms[2] = {&mz, &mi};
    for (int j = 0; j < 2; j++) {
        ms[j]->reuse = true;
        ms[j]->keep_cap = KEEP;
        for (int k = 0; k < 2; k++) {
            ms[j]->keep[k] = malloc(KEEP);
            CHECK(ms[j]->keep[k] != NULL);
        }
    }
    atexit(free_all);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Encodes payload[0..n) in PRNG-sized batches (FLUSH each), END; returns a malloc'd stream. */
static uint8_t *encode(wk_iltp_backend be, int level, const uint8_t *payload, size_t n,
                       size_t batch_max, uint64_t *rng, size_t *len)
{
    int bi = be == WK_ILTP_BACKEND_ISAL;
    if (!encs[bi][level]) {
        wk_error err;
        wk_iltp_encoder_params prm = {level, NULL, be};
        encs[bi][level] = wk_iltp_encoder_create(WK_ILTP_DEFLATE12C, &prm, &err);
        CHECK(encs[bi][level] != NULL);
    }
    wk_iltp_encoder *e = encs[bi][level];
    wk_error err;
    CHECK(wk_iltp_encoder_reset(e, &err) == WK_OK);
    size_t cap = n + 256, pos = 0, off = 0;
    uint8_t *w = malloc(cap);
    CHECK(w != NULL);
    for (;;) {
        size_t b = batch_max / 2 + (size_t)(rng_next(rng) % (batch_max / 2 + 1)); /* few tiny batches */
        if (b < n / 16) b = n / 16; /* at most ~16 batches: igzip builds Huffman tables per block */
        if (b == 0) b = 1;
        if (b > n - off) b = n - off;
        bool last = off + b == n;
        wk_in in = {payload + off, b, 0};
        wk_result r;
        do {
            if (cap - pos < 4096) {
                cap = cap * 2 + 4096;
                w = realloc(w, cap);
                CHECK(w != NULL);
            }
            wk_out out = {w + pos, cap - pos, 0};
            r = wk_iltp_encoder_encode(e, &in, &out, last ? WK_ILTP_END : WK_ILTP_FLUSH, &err);
            CHECK(r != WK_ERROR);
            pos += out.pos;
        } while (r == WK_NEED_OUTPUT);
        off += b;
        if (last) break;
    }
    *len = pos;
    return w;
}

/* zlib with the dictionary, window 2^wbits, 1-byte output views: the number of bytes it decodes
 * and whether it stopped on "invalid distance too far back". */
static size_t strict(const uint8_t *w, size_t n, int wbits, bool *too_far)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(inflateInit2(&z, -wbits) == Z_OK);
    CHECK(inflateSetDictionary(&z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) == Z_OK);
    z.next_in = (Bytef *)(uintptr_t)w;
    z.avail_in = (uInt)n;
    size_t out = 0;
    uint8_t c;
    int zr = Z_OK;
    while (zr == Z_OK && out < KEEP) {
        z.next_out = &c;
        z.avail_out = 1;
        zr = inflate(&z, Z_NO_FLUSH);
        if (z.avail_out) break; /* no byte: end, error or input used up */
        out++;
    }
    *too_far = zr == Z_DATA_ERROR && z.msg && strcmp(z.msg, "invalid distance too far back") == 0;
    inflateEnd(&z);
    return out;
}

/* True when the stream holds a distance beyond 4096 that 32 KiB of history resolves. */
static bool beyond_window(const uint8_t *w, size_t n)
{
    bool far12, far15;
    size_t at12 = strict(w, n, 12, &far12), at15 = strict(w, n, 15, &far15);
    return far12 && (at15 > at12 || !far15);
}

/* ---------------------------------------------------------------------------------------------
 * The second documented difference: a dynamic block header whose code lengths leave code space
 * unused (an incomplete code for the code lengths, the literals/lengths or the distances; not
 * the single one-bit code RFC 1951 allows). zlib refuses the header ("invalid ... set"); igzip
 * accepts it, refuses only an over-subscribed code, and decodes the block (a code outside the set,
 * if the block uses one, fails and zlib's replay names the header). The classifier finds the
 * failing block through zlib's Z_BLOCK stops and checks the header itself.
 * ------------------------------------------------------------------------------------------- */
typedef struct bits {
    const uint8_t *p;
    size_t n;
    uint64_t pos; /* bit position */
    bool over;    /* read past the end */
} bits;

static unsigned getbits(bits *b, unsigned k)
{
    unsigned v = 0;
    for (unsigned i = 0; i < k; i++, b->pos++) {
        if (b->pos / 8 >= b->n) { b->over = true; return 0; }
        v |= (unsigned)((b->p[b->pos / 8] >> (b->pos % 8)) & 1) << i;
    }
    return v;
}

/* Kraft sum of code lengths, scaled by 2^15: 32768 is a complete code. */
static unsigned long kraft(const uint8_t *len, unsigned count, unsigned *max)
{
    unsigned long sum = 0;
    *max = 0;
    for (unsigned i = 0; i < count; i++)
        if (len[i]) {
            sum += 1ul << (15 - len[i]);
            if (len[i] > *max) *max = len[i];
        }
    return sum;
}

/* Decodes one symbol of a canonical Huffman code given by len[0..count). -1 if none matches. */
static int decode_sym(bits *b, const uint8_t *len, unsigned count)
{
    unsigned code = 0, first = 0, index = 0;
    for (unsigned l = 1; l <= 15; l++) {
        code |= getbits(b, 1);
        unsigned num = 0;
        for (unsigned i = 0; i < count; i++) num += len[i] == l;
        if (code - first < num) { /* the (code - first)-th symbol of length l */
            unsigned k = code - first;
            for (unsigned i = 0; i < count; i++)
                if (len[i] == l && k-- == 0) return (int)i;
        }
        index += num;
        first = (first + num) << 1;
        code <<= 1;
        if (b->over) return -1;
    }
    (void)index;
    return -1;
}

/* 1: incomplete code set (and no over-subscribed one), 0: not, given the header at bit pos. */
static bool header_incomplete(const uint8_t *w, size_t n, uint64_t pos)
{
    bits b = {w, n, pos, false};
    getbits(&b, 1);
    if (getbits(&b, 2) != 2) return false;
    unsigned hlit = getbits(&b, 5) + 257, hdist = getbits(&b, 5) + 1, hclen = getbits(&b, 4) + 4;
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    uint8_t cl[19] = {0}, lens[320] = {0};
    for (unsigned i = 0; i < hclen; i++) cl[order[i]] = (uint8_t)getbits(&b, 3);
    unsigned max;
    unsigned long k = kraft(cl, 19, &max);
    if (b.over || k > 32768 || hlit > 286 || hdist > 30) return false;
    if (k < 32768) return true; /* incomplete code lengths code (zlib allows none) */
    unsigned got = 0;
    while (got < hlit + hdist) {
        int sym = decode_sym(&b, cl, 19);
        if (sym < 0 || b.over) return false;
        if (sym < 16) {
            lens[got++] = (uint8_t)sym;
            continue;
        }
        unsigned rep = sym == 16 ? 3 + getbits(&b, 2) : sym == 17 ? 3 + getbits(&b, 3) : 11 + getbits(&b, 7);
        if (sym == 16 && got == 0) return false;
        uint8_t v = sym == 16 ? lens[got - 1] : 0;
        if (got + rep > hlit + hdist) return false;
        while (rep--) lens[got++] = v;
    }
    unsigned long kl = kraft(lens, hlit, &max);
    unsigned maxd;
    unsigned long kd = kraft(lens + hlit, hdist, &maxd);
    if (kl > 32768 || kd > 32768 || lens[256] == 0) return false;
    return kl < 32768 || (kd < 32768 && maxd != 1 && kd != 0);
}

/* True when zlib refuses the stream in a dynamic header with an incomplete code set. */
static bool incomplete_code(const uint8_t *w, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(inflateInit2(&z, -12) == Z_OK);
    CHECK(inflateSetDictionary(&z, wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN) == Z_OK);
    z.next_in = (Bytef *)(uintptr_t)w;
    z.avail_in = (uInt)n;
    uint64_t block = 0, decoded = 0; /* bit position of the block being decoded */
    int zr;
    for (;;) {
        z.next_out = view;
        z.avail_out = BIG_VIEW;
        zr = inflate(&z, Z_BLOCK);
        decoded += BIG_VIEW - z.avail_out;
        if (zr != Z_OK || decoded > KEEP) break;
        if (z.data_type & 128) block = (uint64_t)(n - z.avail_in) * 8 - (uint64_t)(z.data_type & 7);
        if (z.avail_in == 0 && z.avail_out) break;
    }
    bool set_error = zr == Z_DATA_ERROR && z.msg &&
                     (strcmp(z.msg, "invalid code lengths set") == 0 || strcmp(z.msg, "invalid literal/lengths set") == 0 ||
                      strcmp(z.msg, "invalid distances set") == 0);
    inflateEnd(&z);
    return set_error && header_incomplete(w, n, block);
}

/* One decoder's run: its outcome, decoded bytes (the first KEEP) and whether it saw the end mark. */
typedef struct run_of {
    const wk_contract_outcome *oc;
    const uint8_t *bytes;
    size_t kept;
    bool ended;
} run_of;

static uint64_t offset_of(const wk_contract_outcome *o)
{
    return o->verdict == WK_ERROR && o->error.has_offset ? o->error.offset : WK_NO_OFFSET;
}

static bool agree(const run_of *a, const run_of *b)
{
    wk_code ca = a->oc->verdict == WK_ERROR ? a->oc->error.code : WK_OK;
    wk_code cb = b->oc->verdict == WK_ERROR ? b->oc->error.code : WK_OK;
    if (ca != cb || offset_of(a->oc) != offset_of(b->oc) || a->ended != b->ended) return false;
    size_t m = a->kept < b->kept ? a->kept : b->kept;
    if (ca == WK_ERR_ILTP_TRUNCATED) /* igzip may keep the last symbols of the last push */
        return a->oc->consumed == b->oc->consumed && b->oc->produced <= a->oc->produced &&
               memcmp(a->bytes, b->bytes, m) == 0;
    if (!iltp_is_bad(a->oc))
        return a->oc->produced == b->oc->produced && a->oc->output.h == b->oc->output.h &&
               a->oc->output.n == b->oc->output.n && a->oc->consumed == b->oc->consumed;
    return memcmp(a->bytes, b->bytes, m) == 0;
}

static void disagree(const uint8_t *wire, size_t n, const run_of *z, const run_of *i, size_t chunk,
                     size_t cap)
{
    if (beyond_window(wire, n)) return; /* the seed's allowance */
    wk_code cz = z->oc->verdict == WK_ERROR ? z->oc->error.code : WK_OK;
    wk_code ci = i->oc->verdict == WK_ERROR ? i->oc->error.code : WK_OK;
    if (cz == WK_ERR_ILTP_DEFLATE_MALFORMED && (ci != cz || offset_of(i->oc) >= offset_of(z->oc)) &&
        incomplete_code(wire, n))
        return; /* igzip accepts an incomplete Huffman code */
    const char *dump = getenv("WK_FUZZ_DUMP"); /* to look at the stream of a failing input */
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (f) {
            fwrite(wire, 1, n, f);
            fclose(f);
        }
    }
    fprintf(stderr, "zlib: %s at %llu, ended %d, %llu bytes; isal: %s at %llu, ended %d, %llu bytes "
            "(chunk %zu, view %zu)\n", wk_error_name(cz), (unsigned long long)offset_of(z->oc), z->ended,
            (unsigned long long)z->oc->produced, wk_error_name(ci), (unsigned long long)offset_of(i->oc), i->ended,
            (unsigned long long)i->oc->produced, chunk, cap);
    CHECK(!"the deflate12c decoders disagree");
}

static void compare(const uint8_t *wire, size_t n, size_t chunk, size_t cap)
{
    uint64_t bound = (uint64_t)cap * CALLS, out_max;
    if (bound > KEEP) bound = KEEP;
    n = iltp_prefix_within(WK_ILTP_DEFLATE12C, WK_ILTP_BACKEND_ZLIB, wire, n, bound, view, &out_max);
    if (out_max / CALLS > cap) cap = (size_t)(out_max / CALLS) + 1;
    if (n / CALLS > chunk) chunk = n / CALLS + 1;
    wk_contract_outcome zc, zw, ic, iw;
    fuzz_drive_runs(&wk_contract_iltp_decoder_ops, &mz, NULL, wire, n, chunk, cap, &zc, &zw);
    fuzz_drive_runs(&wk_contract_iltp_decoder_ops, &mi, NULL, wire, n, chunk, cap, &ic, &iw);
    /* keep[1], ended[1]: the pushed run; keep[0], ended[0]: the whole run */
    run_of z1 = {&zc, mz.keep[1], mz.kept[1], mz.ended[1]}, i1 = {&ic, mi.keep[1], mi.kept[1], mi.ended[1]};
    run_of z2 = {&zw, mz.keep[0], mz.kept[0], mz.ended[0]}, i2 = {&iw, mi.keep[0], mi.kept[0], mi.ended[0]};
    if (!agree(&z1, &i1)) disagree(wire, n, &z1, &i1, chunk, cap);
    if (!agree(&z2, &i2)) disagree(wire, n, &z2, &i2, 0, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    setup();
    uint8_t sel = data[0];
    size_t cap = caps[sel & 7], chunk = chunks[(sel >> 3) & 7];
    const uint8_t *wire = data + 1;
    size_t n = size - 1;
    uint8_t *made = NULL;
    if (sel & 0x40) {
        if (size < 4) return 0;
        wk_iltp_backend be = sel & 0x80 ? WK_ILTP_BACKEND_ISAL : WK_ILTP_BACKEND_ZLIB;
        size_t batch_max = (size_t)1 << (data[1] & 15);
        int level = 1 + (data[1] >> 4) % 9;
        unsigned damage = data[2] & 7;
        uint64_t rng = ((uint64_t)data[1] << 16) | ((uint64_t)data[2] << 8) | data[3];
        made = encode(be, level, data + 4, size - 4, batch_max, &rng, &n);
        for (unsigned k = 0; k < damage && n; k++) {
            uint64_t v = rng_next(&rng);
            made[v % n] ^= (uint8_t)(1 + (v >> 32) % 255);
        }
        wire = made;
    }
    compare(wire, n, chunk, cap);
    free(made);
    return 0;
}
