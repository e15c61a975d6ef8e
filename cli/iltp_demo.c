/* wirekit iltp demo: two endpoints from Lace-065's example (server S and browser B) exchange
 * prefaces, select an encoding per direction, and send ILTP-shaped items through the stream
 * layer; the demo prints the sizes and checks the round trip. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

typedef struct buf { uint8_t *p; size_t n, cap; } buf;

static void buf_put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) { fprintf(stderr, "WK_ERR_NOMEM: demo out of memory\n"); exit(1); }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void buf_str(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A Blob record: glyph line with the hash of its content, then the content. */
static void put_blob(buf *b, const uint8_t *data, size_t n)
{
    uint8_t hash[32], head[WK_ILTP_BLOB_HEAD_MAX];
    wk_iltp_blob_hash(data, n, hash);
    buf_put(b, head, wk_iltp_blob_head_format(hash, n, head));
    buf_put(b, data, n);
}

/* One round's items: an advertisement block, a request block, Blob responses, a fence. */
static void make_round(buf *b, int round, int blobs)
{
    static const char *words[] = {"lace", "knot", "thread", "weave", "plex", "seal", "blob",
                                  "round", "offer", "fence", "policy", "symbol"};
    char line[200];
    uint8_t data[6000];
    for (int i = 0; i < blobs; i++) {
        snprintf(line, sizeof line, "Advertised('B.%016llx%016llx.H3')\n",
                 (unsigned long long)next_rand(), (unsigned long long)next_rand());
        buf_str(b, line);
    }
    buf_str(b, "\n");
    for (int i = 0; i < blobs; i++) {
        size_t n = 200 + next_rand() % 4000, k = 0;
        while (k < n) {
            const char *w = words[next_rand() % 12];
            size_t wl = strlen(w);
            if (k + wl + 1 > n) break;
            memcpy(data + k, w, wl);
            k += wl;
            data[k++] = (next_rand() % 9) ? ' ' : '\n';
        }
        put_blob(b, data, k);
    }
    snprintf(line, sizeof line, "RoundComplete('%d')\n\n", round);
    buf_str(b, line);
}

/* Sends the batches of one direction through encoder and decoder; returns encoded size or 0. */
static size_t run_direction(wk_iltp_encoding enc, buf *batches, int nbatch, size_t *decoded_ok)
{
    wk_error err;
    wk_iltp_encoder *e = wk_iltp_encoder_create(enc, NULL, &err);
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, NULL, &err);
    if (!e || !d) { wk_cli_fail(&err); exit(1); }
    buf wire = {0}, plain = {0}, back = {0};
    uint8_t tmp[16384];
    for (int i = 0; i <= nbatch; i++) {
        wk_in in = {i < nbatch ? batches[i].p : NULL, i < nbatch ? batches[i].n : 0, 0};
        if (i < nbatch) buf_put(&plain, batches[i].p, batches[i].n);
        wk_result r;
        do {
            wk_out out = {tmp, sizeof tmp, 0};
            r = wk_iltp_encoder_encode(e, &in, &out, i < nbatch ? WK_ILTP_FLUSH : WK_ILTP_END, &err);
            if (r == WK_ERROR) { wk_cli_fail(&err); exit(1); }
            buf_put(&wire, tmp, out.pos);
        } while (r == WK_NEED_OUTPUT);
    }
    wk_in in = {wire.p, wire.n, 0};
    wk_result r;
    do {
        wk_out out = {tmp, sizeof tmp, 0};
        r = wk_iltp_decoder_decode(d, &in, &out, &err);
        if (r == WK_ERROR) { wk_cli_fail(&err); exit(2); }
        buf_put(&back, tmp, out.pos);
    } while (r == WK_NEED_OUTPUT);
    wk_in rest = {in.src, in.size, in.pos};
    *decoded_ok = back.n == plain.n && memcmp(back.p, plain.p, plain.n) == 0 &&
                  wk_iltp_decoder_finish(d, &rest, &err) == WK_DONE;
    size_t n = wire.n;
    free(wire.p);
    free(plain.p);
    free(back.p);
    wk_iltp_encoder_destroy(e);
    wk_iltp_decoder_destroy(d);
    return n;
}

int wk_cli_iltp_demo(int argc, char **argv)
{
    if (argc > 1 && wk_cli_is_help(argv[1])) {
        printf("usage: wirekit iltp demo [--rounds N]\n"
               "Server S and browser B (Lace-065's example offers) exchange prefaces, select an\n"
               "encoding per direction and send N rounds (default 8) of ILTP items each way.\n");
        return 0;
    }
    uint64_t rounds = 8;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            if (!wk_cli_parse_u64(argv[++i], 1, 1000, &rounds)) return wk_cli_usage("bad --rounds");
        } else {
            return wk_cli_usage("wirekit iltp demo: unknown option '%s'", argv[i]);
        }
    }
    struct { const char *name, *decode, *encode; } ep[2] = {
        {"S", "deflate12c,zstd20c", "zstd20c,deflate12c"},
        {"B", "deflate12c,zstd20c", "deflate12c"},
    };
    uint8_t pre[2][WK_ILTP_PREFACE_MAX];
    size_t plen[2];
    wk_iltp_preface pf[2];
    wk_error err;
    for (int k = 0; k < 2; k++) {
        uint8_t nonce[32];
        for (int i = 0; i < 32; i++) nonce[i] = (uint8_t)next_rand();
        wk_out po = {pre[k], sizeof pre[k], 0};
        if (wk_iltp_preface_encode(WK_ILTP_FORM_0_13, nonce, ep[k].decode, ep[k].encode, &po, &err) != WK_DONE)
            return wk_cli_fail(&err);
        plen[k] = po.pos;
        wk_in pin = {pre[k], plen[k], 0};
        if (wk_iltp_preface_parse(&pin, WK_ILTP_FORM_0_13, &pf[k], &err) != WK_DONE)
            return wk_cli_fail(&err);
        printf("%s preface: %zu bytes, Decode: %s, Encode: %s\n", ep[k].name, plen[k], ep[k].decode,
               ep[k].encode);
    }
    for (int k = 0; k < 2; k++) {
        const char *tok;
        size_t tl;
        int a = k, b = 1 - k;
        wk_iltp_encoding enc = wk_iltp_offer_select(&pf[a].encode, &pf[b].decode, &tok, &tl);
        buf batches[1000];
        size_t items = 0;
        for (uint64_t r = 0; r < rounds; r++) {
            batches[r] = (buf){0};
            make_round(&batches[r], (int)r, 3 + (int)(next_rand() % 5));
            items += batches[r].n;
        }
        size_t ok = 0;
        size_t wire = run_direction(enc, batches, (int)rounds, &ok);
        printf("%s->%s: %.*s, %llu batches, %zu item bytes -> %zu wire bytes (%.1f%%), round trip %s\n",
               ep[a].name, ep[b].name, (int)tl, tok, (unsigned long long)rounds, items, wire,
               items ? 100.0 * (double)wire / (double)items : 0.0, ok ? "ok" : "FAILED");
        for (uint64_t r = 0; r < rounds; r++) free(batches[r].p);
        if (!ok) return WK_EXIT_USAGE;
    }
    return 0;
}
