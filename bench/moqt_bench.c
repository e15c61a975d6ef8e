/* MoQT draft-20 data plane (moqt module) throughput, each wirekit number beside a plain memcpy of
 * the same payload bytes in one run.
 *
 *   subgroup  a SUBGROUP_HEADER stream (Type Flags 0x10: priority byte, Subgroup ID 0) of 10,000
 *             objects with 100-byte payloads, and one of 8 objects with 1 MiB payloads;
 *   fetch     a FETCH_HEADER stream with the same objects (a new group every 100 small objects,
 *             every large object in a new group), flags from wk_moqt_fetch_writer_pick_flags;
 *   datagram  10,000 OBJECT_DATAGRAMs (Type Flags 0x00) with 100-byte and with 1,200-byte payloads.
 * Operations:
 *   decode          wk_moqt_stream_reader_read over the whole stream in one push (datagrams:
 *                   wk_moqt_datagram_decode on each); payloads are borrowed slices, not touched;
 *   decode 64K      the same stream pushed in 64 KiB pieces (large payloads arrive as PAYLOAD pieces);
 *   decode+copy     decode in one push and memcpy every payload piece to a destination buffer (what
 *                   an application that needs the bytes elsewhere does);
 *   encode          wk_moqt_subgroup_writer_write / wk_moqt_fetch_writer_write (framing and a copy
 *                   of the payload into the output), wk_moqt_datagram_encode;
 *   encode framing  wk_moqt_subgroup_writer_write_framing / wk_moqt_fetch_writer_write_framing: the
 *                   framing only, the payload left for the caller to send from where it is.
 * Baseline: memcpy of the same payload bytes (all payloads, contiguous, into a separate buffer).
 *
 * Rates are objects per second and GB/s (10^9 bytes per second) of payload, the median of N
 * repetitions; in each repetition wirekit and memcpy run back to back (alternating which goes
 * first), each timing repeating the operation until it lasts 40 ms; the ratio column is the median
 * of the per-repetition speed ratios (wirekit / memcpy). Every decode is checked once against the
 * source payloads outside the timed region. Allocations: the benchmark is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation the library makes during an
 * operation is counted (the moqt API takes no allocator; a wk_counting_allocator has nothing to
 * count).
 *
 * Targets (issue 6): zero allocations per object; small-object subgroup decode >= 30 M objects/s;
 * payload throughput for 1 MiB objects within 10% of memcpy (ratio >= 0.90).
 *
 * usage: moqt_bench [--quick] [--reps N (default 11)] [--objects N (default 10000)]
 *                   [--large N (default 8)]
 *   --quick  a tiny run for CI (3 repetitions, 2 ms timings, 2 large objects) */
#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define WK_BENCH_NAME "moqt_bench"
#include "bench_util.h"

#define MAX_REPS 51
#define SMALL 100
#define LARGE ((size_t)1 << 20)
#define MTU_PAYLOAD 1200
#define PUSH ((size_t)64 << 10)

/* ---------------------------------------------------------------------------------------------
 * Allocation counting (-Wl,--wrap=...)
 * ------------------------------------------------------------------------------------------- */
#include "wk_alloc_wrap.h" /* tests/: counts the calling thread's allocations while armed */

static uint64_t rng_state = 0x6d6f7174ull;
static uint64_t rnd(void) { return splitmix64(&rng_state); }

/* ---------------------------------------------------------------------------------------------
 * Timing (as bench/eth_bench.c)
 * ------------------------------------------------------------------------------------------- */
static double min_seconds = 0.04;

typedef struct pair {
    double ta, tb; /* median seconds per operation */
    double ratio;  /* median of the per-repetition speed ratios a/b */
} pair;

static pair compare(op_fn fa, void *ca, op_fn fb, void *cb, int reps)
{
    double va[MAX_REPS], vb[MAX_REPS], q[MAX_REPS];
    time_pair(fa, ca, fb, cb, reps, min_seconds, va, vb);
    for (int k = 0; k < reps; k++) q[k] = vb[k] / va[k];
    pair p = {median(va, reps), median(vb, reps), median(q, reps)};
    return p;
}

/* ---------------------------------------------------------------------------------------------
 * Jobs
 * ------------------------------------------------------------------------------------------- */
enum { C_SUBGROUP, C_FETCH, C_DATAGRAM };

typedef struct job {
    const char *name;
    int carrier;
    size_t nobj, psize;
    uint8_t *payloads;   /* nobj * psize source bytes */
    uint8_t *stream;     /* the encoded stream (datagrams: back to back) */
    size_t stream_len;
    size_t *dg_off, *dg_len;
    uint8_t *dst;        /* decode+copy and memcpy destination */
    uint8_t *enc;        /* encoder output */
    size_t enc_cap, enc_len;
    size_t push;         /* decode push size, 0 = whole stream */
    bool copy;           /* decode+copy */
    wk_moqt_fetch_object_out *fobj; /* fetch: the objects to write (flags from pick_flags) */
    uint64_t sink;
} job;

static wk_moqt_stream_reader reader;

static void op_memcpy(void *c)
{
    job *j = c;
    memcpy(j->dst, j->payloads, j->nobj * j->psize);
    j->sink += j->dst[j->nobj * j->psize - 1];
}

static void op_stream_decode(void *c)
{
    job *j = c;
    wk_error err;
    wk_moqt_stream_reader_init(&reader,
                               j->carrier == C_FETCH ? WK_MOQT_CARRIER_FETCH : WK_MOQT_CARRIER_SUBGROUP,
                               NULL);
    size_t push = j->push ? j->push : j->stream_len, pos = 0, copied = 0;
    uint64_t bytes = 0;
    while (pos < j->stream_len) {
        size_t take = j->stream_len - pos < push ? j->stream_len - pos : push;
        wk_in in = {j->stream + pos, take, 0};
        for (;;) {
            wk_result res = wk_moqt_stream_reader_read(&reader, &in, NULL, &err);
            if (res == WK_NEED_INPUT) break;
            if (res == WK_ERROR) die(err.msg);
            if (reader.event == WK_MOQT_EVENT_OBJECT || reader.event == WK_MOQT_EVENT_FETCH_OBJECT ||
                reader.event == WK_MOQT_EVENT_PAYLOAD) {
                bytes += reader.piece.len;
                if (j->copy) {
                    memcpy(j->dst + copied, reader.piece.data, reader.piece.len);
                    copied += reader.piece.len;
                }
            }
        }
        pos += take;
    }
    if (wk_moqt_stream_reader_finish(&reader, NULL, &err) != WK_DONE) die(err.msg);
    if (reader.objects != j->nobj || bytes != (uint64_t)j->nobj * j->psize) die("decode count");
    j->sink += bytes;
}

static void op_datagram_decode(void *c)
{
    job *j = c;
    wk_error err;
    wk_moqt_datagram d;
    uint64_t bytes = 0;
    for (size_t i = 0; i < j->nobj; i++) {
        wk_in in = {j->stream + j->dg_off[i], j->dg_len[i], 0};
        if (wk_moqt_datagram_decode(&d, &in, NULL, &err) != WK_DONE) die(err.msg);
        if (j->copy) memcpy(j->dst + bytes, d.payload, d.payload_len);
        bytes += d.payload_len;
    }
    if (bytes != (uint64_t)j->nobj * j->psize) die("datagram decode count");
    j->sink += bytes;
}

static void subgroup_header(wk_moqt_subgroup_header *h)
{
    memset(h, 0, sizeof *h);
    h->type = 0x10;
    h->track_alias = 7;
    h->group_id = 1234;
    h->subgroup_id = 0;
    h->subgroup_id_known = true;
    h->has_priority = true;
    h->publisher_priority = 128;
}

/* Encodes the job's objects into j->enc (framing_only: writer_*_header, no payload bytes). */
static void encode_stream(job *j, bool framing_only)
{
    wk_error err;
    wk_out out = {j->enc, j->enc_cap, 0};
    if (j->carrier == C_SUBGROUP) {
        wk_moqt_subgroup_writer w;
        wk_moqt_subgroup_header h;
        subgroup_header(&h);
        memset(&w, 0, sizeof w);
        if (wk_moqt_subgroup_writer_begin(&w, &h, &out, &err) != WK_DONE) die(err.msg);
        wk_moqt_object_out o;
        memset(&o, 0, sizeof o);
        o.payload_len = j->psize;
        for (size_t i = 0; i < j->nobj; i++) {
            o.object_id = i;
            o.payload = j->payloads + i * j->psize;
            wk_result r = framing_only ? wk_moqt_subgroup_writer_write_framing(&w, &o, &out, &err)
                                       : wk_moqt_subgroup_writer_write(&w, &o, &out, &err);
            if (r != WK_DONE) die(err.msg);
        }
    } else {
        wk_moqt_fetch_writer w;
        memset(&w, 0, sizeof w);
        if (wk_moqt_fetch_writer_begin(&w, 42, WK_MOQT_GROUP_ORDER_ASCENDING,
                                       WK_MOQT_END_OF_RANGE_DELTA, &out, &err) != WK_DONE)
            die(err.msg);
        for (size_t i = 0; i < j->nobj; i++) {
            wk_result r = framing_only
                              ? wk_moqt_fetch_writer_write_framing(&w, &j->fobj[i], &out, &err)
                              : wk_moqt_fetch_writer_write(&w, &j->fobj[i], &out, &err);
            if (r != WK_DONE) die(err.msg);
        }
    }
    j->enc_len = out.pos;
}
static void op_encode(void *c) { encode_stream(c, false); }
static void op_encode_framing(void *c) { encode_stream(c, true); }

static void datagram_of(const job *j, size_t i, wk_moqt_datagram *d)
{
    memset(d, 0, sizeof *d);
    d->type = 0x00;
    d->track_alias = 7;
    d->group_id = 1000 + i / 100;
    d->object_id = i % 100;
    d->has_priority = true;
    d->publisher_priority = 64;
    d->payload = j->payloads + i * j->psize;
    d->payload_len = j->psize;
}

static void op_datagram_encode(void *c)
{
    job *j = c;
    wk_error err;
    wk_out out = {j->enc, j->enc_cap, 0};
    wk_moqt_datagram d;
    for (size_t i = 0; i < j->nobj; i++) {
        datagram_of(j, i, &d);
        if (wk_moqt_datagram_encode(&d, &out, &err) != WK_DONE) die(err.msg);
    }
    j->enc_len = out.pos;
}

/* Builds the job's source payloads and encoded stream. */
static void build(job *j)
{
    size_t total = j->nobj * j->psize;
    j->payloads = xmalloc64(total);
    for (size_t i = 0; i < total; i += 8) {
        uint64_t v = rnd();
        memcpy(j->payloads + i, &v, total - i < 8 ? total - i : 8);
    }
    j->dst = xmalloc64(total);
    j->enc_cap = total + j->nobj * 64 + 64;
    j->enc = xmalloc64(j->enc_cap);
    if (j->carrier == C_FETCH) {
        j->fobj = xmalloc64(j->nobj * sizeof *j->fobj);
        wk_moqt_fetch_writer w;
        memset(&w, 0, sizeof w);
        uint8_t scratch[64];
        wk_out out = {scratch, sizeof scratch, 0};
        wk_error err;
        if (wk_moqt_fetch_writer_begin(&w, 42, WK_MOQT_GROUP_ORDER_ASCENDING,
                                       WK_MOQT_END_OF_RANGE_DELTA, &out, &err) != WK_DONE)
            die(err.msg);
        size_t per_group = j->psize >= LARGE ? 1 : 100;
        for (size_t i = 0; i < j->nobj; i++) {
            wk_moqt_fetch_object_out *o = &j->fobj[i];
            memset(o, 0, sizeof *o);
            o->group_id = 500 + i / per_group;
            o->object_id = i % per_group;
            o->subgroup_id = 0;
            o->publisher_priority = 128;
            o->payload = j->payloads + i * j->psize;
            o->payload_len = j->psize;
            o->flags = wk_moqt_fetch_writer_pick_flags(&w, o, false);
            /* advance the writer's state by writing the framing into a scratch buffer */
            out.pos = 0;
            if (wk_moqt_fetch_writer_write_framing(&w, o, &out, &err) != WK_DONE) die(err.msg);
        }
    }
    if (j->carrier == C_DATAGRAM) {
        j->dg_off = xmalloc64(j->nobj * sizeof *j->dg_off);
        j->dg_len = xmalloc64(j->nobj * sizeof *j->dg_len);
        op_datagram_encode(j);
        size_t pos = 0;
        wk_moqt_datagram d;
        for (size_t i = 0; i < j->nobj; i++) {
            datagram_of(j, i, &d);
            j->dg_off[i] = pos;
            j->dg_len[i] = wk_moqt_datagram_size(&d);
            pos += j->dg_len[i];
        }
        if (pos != j->enc_len) die("datagram sizes");
    } else {
        encode_stream(j, false);
    }
    j->stream = xmalloc64(j->enc_len);
    memcpy(j->stream, j->enc, j->enc_len);
    j->stream_len = j->enc_len;
    /* check: decode+copy gives the payloads back; the framing-only encoding plus the payloads is
     * the whole encoding */
    memset(j->dst, 0, total);
    j->copy = true;
    j->push = 0;
    if (j->carrier == C_DATAGRAM) op_datagram_decode(j);
    else op_stream_decode(j);
    j->copy = false;
    if (memcmp(j->dst, j->payloads, total) != 0) die("decoded payloads differ from the source");
    if (j->carrier != C_DATAGRAM) {
        encode_stream(j, true);
        if (j->enc_len + total != j->stream_len) die("framing + payloads != encoding");
    }
}

static void free_job(job *j)
{
    free(j->payloads);
    free(j->dst);
    free(j->enc);
    free(j->stream);
    free(j->dg_off);
    free(j->dg_len);
    free(j->fobj);
}

/* Allocations made by one run of op. */
static unsigned long long allocs_of(op_fn f, void *c)
{
    wk_alloc_probe_begin(~0ul);
    f(c);
    return wk_alloc_probe_end();
}

typedef struct row {
    const char *op;
    pair p;
    unsigned long long allocs;
} row;

int main(int argc, char **argv)
{
    int reps = 11;
    size_t nsmall = 10000, nlarge = 8;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--objects") == 0 && i + 1 < argc) nsmall = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--large") == 0 && i + 1 < argc) nlarge = (size_t)atol(argv[++i]);
        else return bench_usage("[--quick] [--reps N] [--objects N] [--large N]");
    }
    if (quick) {
        reps = 3;
        min_seconds = 0.002;
        nlarge = 2;
    }
    if (reps < 1 || reps > MAX_REPS || nsmall == 0 || nlarge == 0) die("bad --reps / --objects / --large");
    double t_start = now();

    job jobs[] = {
        {.name = "subgroup, 100 B objects", .carrier = C_SUBGROUP, .nobj = nsmall, .psize = SMALL},
        {.name = "subgroup, 1 MiB objects", .carrier = C_SUBGROUP, .nobj = nlarge, .psize = LARGE},
        {.name = "fetch, 100 B objects", .carrier = C_FETCH, .nobj = nsmall, .psize = SMALL},
        {.name = "fetch, 1 MiB objects", .carrier = C_FETCH, .nobj = nlarge, .psize = LARGE},
        {.name = "datagram, 100 B payloads", .carrier = C_DATAGRAM, .nobj = nsmall, .psize = SMALL},
        {.name = "datagram, 1200 B payloads", .carrier = C_DATAGRAM, .nobj = nsmall,
         .psize = MTU_PAYLOAD},
    };
    size_t njobs = sizeof jobs / sizeof jobs[0];

    printf("wirekit %s moqt_bench: %d repetitions (each >= %.0f ms); rates are the median; "
           "ratio = median of the per-repetition speed ratios wirekit/memcpy (same payload bytes)\n",
           wk_version(), reps, min_seconds * 1e3);
    printf("\n| data | stream bytes | operation | M objects/s | payload GB/s | memcpy GB/s | ratio "
           "| allocations |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|\n");
    fflush(stdout);

    bool zero_alloc = true;
    double small_decode_rate = 0, large_ratio_min = 1e300;
    for (size_t k = 0; k < njobs; k++) {
        job *j = &jobs[k];
        build(j);
        row rows[8];
        size_t nr = 0;
        if (j->carrier == C_DATAGRAM) {
            rows[nr++] = (row){"decode", {0, 0, 0}, allocs_of(op_datagram_decode, j)};
            rows[nr - 1].p = compare(op_datagram_decode, j, op_memcpy, j, reps);
            j->copy = true;
            rows[nr++] = (row){"decode+copy", {0, 0, 0}, allocs_of(op_datagram_decode, j)};
            rows[nr - 1].p = compare(op_datagram_decode, j, op_memcpy, j, reps);
            j->copy = false;
            rows[nr++] = (row){"encode", {0, 0, 0}, allocs_of(op_datagram_encode, j)};
            rows[nr - 1].p = compare(op_datagram_encode, j, op_memcpy, j, reps);
        } else {
            j->push = 0;
            rows[nr++] = (row){"decode (one push)", {0, 0, 0}, allocs_of(op_stream_decode, j)};
            rows[nr - 1].p = compare(op_stream_decode, j, op_memcpy, j, reps);
            j->push = PUSH;
            rows[nr++] = (row){"decode (64 KiB pushes)", {0, 0, 0}, allocs_of(op_stream_decode, j)};
            rows[nr - 1].p = compare(op_stream_decode, j, op_memcpy, j, reps);
            j->push = 0;
            j->copy = true;
            rows[nr++] = (row){"decode+copy (one push)", {0, 0, 0}, allocs_of(op_stream_decode, j)};
            rows[nr - 1].p = compare(op_stream_decode, j, op_memcpy, j, reps);
            j->copy = false;
            rows[nr++] = (row){"encode (payload copied in)", {0, 0, 0}, allocs_of(op_encode, j)};
            rows[nr - 1].p = compare(op_encode, j, op_memcpy, j, reps);
            rows[nr++] = (row){"encode framing only", {0, 0, 0}, allocs_of(op_encode_framing, j)};
            rows[nr - 1].p = compare(op_encode_framing, j, op_memcpy, j, reps);
        }
        double bytes = (double)j->nobj * (double)j->psize;
        for (size_t i = 0; i < nr; i++) {
            row *r = &rows[i];
            if (r->allocs) zero_alloc = false;
            double ops = (double)j->nobj / r->p.ta;
            printf("| %s | %zu | %s | %.2f | %.2f | %.2f | %.3f | %llu |\n", j->name, j->stream_len,
                   r->op, ops / 1e6, bytes / r->p.ta / 1e9, bytes / r->p.tb / 1e9, r->p.ratio,
                   r->allocs);
            if (k == 0 && i == 0) small_decode_rate = ops;
            if (j->psize == LARGE && strncmp(r->op, "decode", 6) == 0 && r->p.ratio < large_ratio_min)
                large_ratio_min = r->p.ratio;
        }
        fflush(stdout);
        free_job(j);
    }
    bool t_small = small_decode_rate >= 30e6, t_large = large_ratio_min >= 0.90;
    printf("\ntargets: zero allocations per object: %s; subgroup 100 B decode >= 30 M objects/s: "
           "%.1f M, %s; 1 MiB-object decode payload rate >= 0.90 of memcpy (lowest decode row): "
           "%.3f, %s\n",
           zero_alloc ? "met" : "MISSED", small_decode_rate / 1e6, t_small ? "met" : "MISSED",
           large_ratio_min, t_large ? "met" : "MISSED");
    printf("total time %.1f s\n", now() - t_start);
    return 0;
}
