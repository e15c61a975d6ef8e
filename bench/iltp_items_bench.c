/* ILTP item decoding benchmark (Lace-060 over Lace-065): a realistic session stream of many small
 * fact blocks and a few 32 MiB Blobs, decoded by the item decoder raw and through the reader under
 * each encoding, beside the bare stream layer on the same bytes (for deflate12c with the default
 * backend, ISA-L, which the reader uses, and with zlib) and BLAKE3 on the Blob data.
 * Prints medians of several runs. Usage: iltp_items_bench [--quick] [--cpu] (--cpu: time with the
 * process CPU clock, which preemption by other jobs on a shared machine does not inflate) */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct buf { uint8_t *p; size_t n, cap; } buf;
static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { perror("realloc"); exit(1); }
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static bool cpu_clock; /* --cpu: process CPU time instead of wall-clock time */
static double now(void)
{
    struct timespec t;
    clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void hash_name(char out[44])
{
    uint8_t h[32];
    for (int i = 0; i < 32; i++) h[i] = (uint8_t)rnd();
    wk_b64a_encode(h, 32, out);
    out[43] = 0;
}

/* Fact blocks: advertisements (1-20 advertised records with their field rows), request blocks,
 * fences, zero-row blocks. */
static void facts(buf *b, size_t target)
{
    char line[256], h[44];
    while (b->n < target) {
        unsigned k = (unsigned)(rnd() % 4);
        if (k == 0) {
            unsigned n = 1 + (unsigned)(rnd() % 20);
            for (unsigned i = 0; i < n; i++) {
                hash_name(h);
                int l = snprintf(line, sizeof line, "Advertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\n", h, h);
                put(b, line, (size_t)l);
            }
            put(b, "\n", 1);
        } else if (k == 1) {
            unsigned n = (unsigned)(rnd() % 10);
            for (unsigned i = 0; i < n; i++) {
                hash_name(h);
                int l = snprintf(line, sizeof line, "MayRequest('B.%s.H3')\n", h);
                put(b, line, (size_t)l);
            }
            put(b, "\n", 1);
        } else if (k == 2) {
            put(b, "RoundComplete()\n\n", 17);
        } else {
            put(b, "\n", 1);
        }
    }
}

static void blob(buf *b, size_t n, bool text)
{
    uint8_t *d = malloc(n);
    for (size_t i = 0; i < n; i++) d[i] = text ? (uint8_t)("lace knot thread weave \n"[rnd() % 24]) : (uint8_t)rnd();
    uint8_t h[32], head[WK_ILTP_BLOB_HEAD_MAX];
    wk_iltp_blob_hash(d, n, h);
    size_t hl = wk_iltp_blob_head_format(h, n, head);
    put(b, head, hl);
    put(b, d, n);
    free(d);
}

/* Raw item decoding in 64 KiB pushes; returns items. One decoder per mode serves every run, as
 * one serves a whole session: its item buffer is warm after the first large item. streamed: Blob
 * records come out as WK_EVENT slices of the pushed input, hashed as they pass, never copied (what
 * a session does; a Blob counts at its END event); otherwise each is collected whole. */
static wk_iltp_item_decoder *g_dec[2];
static size_t decode_raw(const buf *s, bool streamed)
{
    wk_error e;
    if (!g_dec[streamed]) {
        g_dec[streamed] = wk_iltp_item_decoder_create(NULL, &e);
        wk_iltp_item_decoder_stream_blobs(g_dec[streamed], streamed);
    }
    wk_iltp_item_decoder *d = g_dec[streamed];
    size_t items = 0;
    for (size_t pos = 0; pos < s->n;) {
        size_t lim = pos + 65536 < s->n ? pos + 65536 : s->n;
        wk_in in = {s->p, lim, pos};
        wk_result r;
        while ((r = wk_iltp_item_decoder_decode(d, &in, NULL, &e)) == WK_EVENT) {
            const wk_iltp_blob_event *ev = wk_iltp_item_decoder_event(d);
            if (!ev || ev->kind == WK_ILTP_BLOB_END) items++; /* an item, or a Blob's END */
        }
        if (r == WK_ERROR) { fprintf(stderr, "decode: %s\n", e.msg); exit(1); }
        pos = lim;
    }
    return items;
}

/* The stack: preface + encoded items through wk_iltp_reader. */
static size_t decode_stack(const buf *wire, wk_iltp_encoding enc)
{
    wk_error e;
    wk_iltp_reader *r = wk_iltp_reader_create(NULL, &e);
    size_t items = 0;
    for (size_t pos = 0; pos < wire->n;) {
        size_t lim = pos + 65536 < wire->n ? pos + 65536 : wire->n;
        wk_in in = {wire->p, lim, pos};
        wk_result res;
        while ((res = wk_iltp_reader_read(r, &in, NULL, &e)) == WK_EVENT) {
            if (wk_iltp_reader_item(r)->kind == WK_ILTP_ITEM_PREFACE) wk_iltp_reader_begin(r, enc, &e);
            else items++;
        }
        if (res == WK_ERROR) { fprintf(stderr, "reader: %s\n", e.msg); exit(1); }
        pos = in.pos;
    }
    wk_iltp_reader_destroy(r);
    return items;
}

/* The bare stream layer on the same wire bytes (no item parsing), with a deflate12c backend. */
static wk_iltp_backend g_backend;
static size_t decode_stream_only(const buf *wire, size_t skip, wk_iltp_encoding enc)
{
    wk_error e;
    wk_iltp_decoder_params prm = {NULL, g_backend};
    wk_iltp_decoder *d = wk_iltp_decoder_create(enc, &prm, &e);
    static uint8_t out[65536];
    size_t total = 0;
    wk_in in = {wire->p, wire->n, skip};
    wk_result r;
    do {
        wk_out o = {out, sizeof out, 0};
        r = wk_iltp_decoder_decode(d, &in, &o, &e);
        total += o.pos;
    } while (r == WK_NEED_OUTPUT || (r == WK_NEED_INPUT && in.pos < in.size));
    wk_iltp_decoder_destroy(d);
    return total;
}

static buf encode_session(const buf *items, wk_iltp_encoding enc, size_t *preface_len)
{
    wk_error e;
    wk_iltp_writer *w = wk_iltp_writer_create(NULL, &e);
    buf wire = {0};
    static uint8_t tmp[1 << 17];
    uint8_t nonce[32];
    memset(nonce, 7, 32);
    wk_out o = {tmp, sizeof tmp, 0};
    wk_iltp_writer_begin_session(w, nonce, "deflate12c,zstd20c", "zstd20c,deflate12c", &o, &e);
    put(&wire, tmp, o.pos);
    *preface_len = o.pos;
    wk_iltp_writer_select(w, enc, &e);
    for (size_t pos = 0; pos < items->n;) {
        size_t n = items->n - pos < 65536 ? items->n - pos : 65536; /* 64 KiB writer batches */
        wk_in in = {items->p + pos, n, 0};
        wk_result r;
        do {
            o.pos = 0;
            r = wk_iltp_writer_write(w, &in, &o, &e);
            put(&wire, tmp, o.pos);
        } while (r == WK_NEED_OUTPUT);
        pos += n;
    }
    wk_result r;
    do {
        o.pos = 0;
        r = wk_iltp_writer_end(w, &o, &e);
        put(&wire, tmp, o.pos);
    } while (r == WK_NEED_OUTPUT);
    wk_iltp_writer_destroy(w);
    return wire;
}

#define RUNS 5
typedef size_t (*fn)(const void *);

static double median_time(int runs, size_t (*f)(const buf *, int), const buf *b, int arg, size_t *out)
{
    double t[16];
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        *out = f(b, arg);
        t[i] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp);
    return t[runs / 2];
}

static size_t f_raw(const buf *b, int a) { (void)a; return decode_raw(b, false); }
static size_t f_raw_streamed(const buf *b, int a) { (void)a; return decode_raw(b, true); }
static size_t f_stack(const buf *b, int a) { return decode_stack(b, (wk_iltp_encoding)a); }
static const buf *g_wire;
static size_t g_skip;
static size_t f_stream(const buf *b, int a) { (void)b; return decode_stream_only(g_wire, g_skip, (wk_iltp_encoding)a); }
static size_t f_b3(const buf *b, int a)
{
    (void)a;
    uint8_t h[32];
    wk_blake3(b->p, b->n, h);
    return h[0];
}

int main(int argc, char **argv)
{
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--cpu") == 0) cpu_clock = true;
        else { fprintf(stderr, "usage: iltp_items_bench [--quick] [--cpu]\n"); return 2; }
    }
    int runs = quick ? 1 : RUNS;
    size_t fact_bytes = quick ? (1u << 20) : (64u << 20);
    size_t blob_size = quick ? (1u << 20) : (32u << 20);
    int blobs = quick ? 1 : 2;

    buf fb = {0}, bb = {0}, mixed = {0};
    facts(&fb, fact_bytes);
    for (int i = 0; i < blobs; i++) blob(&bb, blob_size, i == 0);
    /* the realistic session: fact blocks with the Blobs in between */
    put(&mixed, fb.p, fb.n / 2);
    size_t cut = mixed.n;
    while (cut > 0 && !(mixed.p[cut - 1] == '\n' && cut >= 2 && mixed.p[cut - 2] == '\n')) cut--;
    mixed.n = cut;
    put(&mixed, bb.p, bb.n);
    facts(&mixed, mixed.n + fb.n / 2);

    buf data = {0};
    {
        /* Blob data only, for the BLAKE3 line */
        data.p = bb.p;
        data.n = bb.n;
    }
    size_t items;
    printf("wirekit ILTP item decoding; median of %d runs; 64 KiB pushes; %s time\n", runs,
           cpu_clock ? "process CPU" : "wall-clock");
    printf("%-44s %10s %12s %10s\n", "case", "MB/s", "items/s", "items");
    struct { const char *name; const buf *b; } raw[] = {{"facts only, raw item decoder", &fb},
                                                        {"Blobs only, raw (hash verified)", &bb},
                                                        {"session mix, raw item decoder", &mixed}};
    for (int i = 0; i < 3; i++) {
        double t = median_time(runs, f_raw, raw[i].b, 0, &items);
        printf("%-44s %10.1f %12.0f %10zu\n", raw[i].name, (double)raw[i].b->n / t / 1e6, (double)items / t, items);
    }
    double ts2 = median_time(runs, f_raw_streamed, &bb, 0, &items);
    printf("%-44s %10.1f %12.0f %10zu\n", "Blobs only, raw, streamed (hash verified)", (double)bb.n / ts2 / 1e6,
           (double)items / ts2, items);
    double tm = median_time(runs, f_raw_streamed, &mixed, 0, &items);
    printf("%-44s %10.1f %12.0f %10zu\n", "session mix, raw item decoder, streamed", (double)mixed.n / tm / 1e6,
           (double)items / tm, items);
    double tb = median_time(runs, f_b3, &data, 0, &items);
    printf("%-44s %10.1f %12s %10s\n", "BLAKE3 over the same Blob data (baseline)", (double)data.n / tb / 1e6, "-", "-");
    /* the ratio from interleaved pairs (one streamed decode, then one BLAKE3 over the same data):
     * both see the same machine load, which on a shared machine moves faster than 5 runs */
    double ratio[15];
    int pairs = quick ? 1 : 15;
    for (int i = 0; i < pairs; i++) {
        size_t dummy;
        double a = median_time(1, f_raw_streamed, &bb, 0, &dummy);
        double b = median_time(1, f_b3, &data, 0, &dummy);
        ratio[i] = b / a; /* (bytes / a) / (bytes / b): same byte counts */
    }
    qsort(ratio, (size_t)pairs, sizeof ratio[0], cmp);
    printf("%-44s %9.1f%%   (median of %d interleaved pairs; target >= 90%%)\n",
           "streamed Blob decoding / BLAKE3", 100.0 * ratio[pairs / 2], pairs);
    for (int enc = 0; enc < 3; enc++) {
        size_t pl;
        buf wire = encode_session(&mixed, (wk_iltp_encoding)enc, &pl);
        g_wire = &wire;
        g_skip = pl;
        char name[80];
        double t = median_time(runs, f_stack, &wire, enc, &items);
        snprintf(name, sizeof name, "session mix, reader, %s", wk_iltp_encoding_name((wk_iltp_encoding)enc));
        printf("%-44s %10.1f %12.0f %10zu   (decoded MB/s; wire %.1f%%)\n", name, (double)mixed.n / t / 1e6,
               (double)items / t, items, 100.0 * (double)wire.n / (double)mixed.n);
        size_t produced;
        g_backend = WK_ILTP_BACKEND_DEFAULT;
        double ts = median_time(runs, f_stream, &wire, enc, &produced);
        snprintf(name, sizeof name, "  stream layer only, %s", wk_iltp_encoding_name((wk_iltp_encoding)enc));
        printf("%-44s %10.1f %12s %10s\n", name, (double)produced / ts / 1e6, "-", "-");
        if (enc == WK_ILTP_DEFLATE12C) { /* the reader uses the default backend (ISA-L); zlib beside it */
            g_backend = WK_ILTP_BACKEND_ZLIB;
            ts = median_time(runs, f_stream, &wire, enc, &produced);
            printf("%-44s %10.1f %12s %10s\n", "  stream layer only, deflate12c (zlib backend)",
                   (double)produced / ts / 1e6, "-", "-");
        }
        free(wire.p);
    }
    free(fb.p);
    free(bb.p);
    free(mixed.p);
    wk_iltp_item_decoder_destroy(g_dec[0]);
    wk_iltp_item_decoder_destroy(g_dec[1]);
    return 0;
}
