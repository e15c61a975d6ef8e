/* Req/resp ssz_snappy (spec 6): the handmade reqresp rows of vectors/eth/handmade/cases.tsv, the
 * Lodestar block as request, success chunk and part of a 3-chunk response, the streaming contract
 * (every split size, small output views, the event sequence, set_bounds at CHUNK_BEGIN), the
 * budget boundary, n = 0, error chunks, reserved results, max_chunks, early EOF at every level,
 * bounds, encode/read round trips up to MAX_PAYLOAD_SIZE and the reader's fixed memory.
 * Usage: test_eth_reqresp tests/vectors/eth */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_eth.h"


static const char *vec_dir;

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */
#include "wk_bytes.h"
static void put_hex(buf *b, const char *hex)
{
    size_t len = strlen(hex);
    uint8_t tmp[4096];
    long k = wk_hex_decode(hex, len, tmp, sizeof tmp);
    if (k < 0) abort();
    put(b, tmp, (size_t)k);
}
static void put_byte(buf *b, uint8_t v) { put(b, &v, 1); }

static uint8_t *read_vec(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", vec_dir, rel);
    uint8_t *p = wk_test_read_file(path, len);
    if (!p) fprintf(stderr, "cannot read %s\n", path);
    return p;
}

static const wk_eth_rr_reader_params REQUEST = {.request = true};
static const wk_eth_rr_reader_params RESPONSE = {.request = false};
static const uint8_t PING[8] = {1, 0, 0, 0, 0, 0, 0, 0};
static const char *PING_REQ_HEX = "08ff060000734e61507059010c00000175de410100000000000000";
static const char *ERR_CHUNK_HEX = "0103ff060000734e6150705901070000a2d503ff657272"; /* 6.6 */

/* ---------------------------------------------------------------------------------------------
 * Driver: reads a whole stream with a given push size and output capacity, records everything
 * ------------------------------------------------------------------------------------------- */
#define MAX_CHUNKS 16
typedef struct chunk_rec {
    wk_eth_rr_chunk info;  /* as reported at CHUNK_END / END */
    size_t payload_at; /* start of its payload in run.payload */
    size_t payload_len;
} chunk_rec;

typedef struct run {
    wk_code code; /* WK_OK or the error */
    wk_error err;
    buf payload;  /* every chunk's payload, concatenated */
    char events[64];
    size_t nev;
    chunk_rec chunks[MAX_CHUNKS];
    size_t nchunks;
    bool contract_ok;   /* no payload outside a chunk, nothing written on CHUNK_BEGIN, ... */
    uint64_t consumed;
} run;

static void run_free(run *r) { free(r->payload.p); }

static void add_event(run *res, char c)
{
    if (res->nev + 1 < sizeof res->events) res->events[res->nev++] = c;
    res->events[res->nev] = 0;
}

/* The run's record, built by the harness's event callback. */
typedef struct run_ctx {
    run *res;
    wk_contract_eth_sink *sink;
    bool in_chunk;
    size_t chunk_at;
} run_ctx;

static bool run_event(wk_contract *c, wk_contract_eth_rr *m)
{
    run_ctx *x = m->user;
    run *res = x->res;
    wk_eth_rr_event ev = wk_eth_rr_reader_event(m->r);
    if (ev == WK_ETH_RR_CHUNK_BEGIN) {
        add_event(res, 'B');
        if (x->in_chunk || x->sink->n != x->chunk_at)
            return wk_contract_fail(c, "CHUNK_BEGIN inside a chunk or after payload bytes");
        x->in_chunk = true;
        x->chunk_at = x->sink->n;
        const wk_eth_rr_chunk *k = wk_eth_rr_reader_chunk(m->r);
        if (k->length_known || k->produced)
            return wk_contract_fail(c, "CHUNK_BEGIN with a length or payload bytes");
    } else {
        add_event(res, ev == WK_ETH_RR_END ? 'E' : 'C');
        if (x->in_chunk && res->nchunks < MAX_CHUNKS) {
            chunk_rec *cr = &res->chunks[res->nchunks++];
            cr->info = *wk_eth_rr_reader_chunk(m->r);
            cr->payload_at = x->chunk_at;
            cr->payload_len = x->sink->n - x->chunk_at;
            if (!cr->info.length_known || cr->info.produced != cr->info.length ||
                cr->payload_len != cr->info.length)
                return wk_contract_fail(c, "chunk %zu ends with %zu payload bytes", res->nchunks,
                                        cr->payload_len);
        }
        x->in_chunk = false;
        x->chunk_at = x->sink->n;
    }
    return true;
}

static bool run_end(wk_contract *c, wk_contract_eth_rr *m)
{
    run_ctx *x = m->user;
    x->res->consumed = wk_eth_rr_reader_consumed(m->r);
    if (x->sink->n != x->chunk_at && !x->in_chunk)
        return wk_contract_fail(c, "payload bytes outside a chunk");
    return true;
}

/* Reads in[0..n) through the contract harness (wk_contract_drive: every call checked, the error
 * sticky), with pushes of `split` bytes ((size_t)-1: one push) and output views of `outcap`
 * bytes. begin_bounds: set with wk_eth_rr_reader_set_bounds at every CHUNK_BEGIN when non-NULL. */
static void read_stream(const wk_eth_rr_reader_params *o, const uint8_t *in, size_t n, size_t split,
                        size_t outcap, const wk_eth_ssz_bounds *begin_bounds, run *res)
{
    memset(res, 0, sizeof *res);
    wk_contract_eth_sink sink = {0};
    run_ctx x = {res, &sink, false, 0};
    wk_contract_eth_rr m;
    wk_contract_eth_rr_setup(&m, o);
    m.begin_bounds = begin_bounds;
    m.sink = &sink;
    m.on_event = run_event;
    m.on_end = run_end;
    m.user = &x;
    wk_contract_plan plan = {split == (size_t)-1 ? 0 : split, NULL, 0, outcap ? outcap : 1, false,
                             false};
    wk_contract_outcome oc;
    char why[320];
    res->contract_ok = wk_contract_drive(&wk_contract_eth_rr_ops, &m, NULL, in, n, &plan, &oc, why,
                                         sizeof why);
    if (!res->contract_ok)
        fprintf(stderr, "read_stream, pushes of %zu, views of %zu: %s\n", split, outcap, why);
    res->code = oc.verdict == WK_DONE ? WK_OK : oc.error.code;
    if (oc.verdict != WK_DONE) res->err = oc.error;
    if (res->code == WK_OK && oc.consumed != n) res->contract_ok = false;
    put(&res->payload, sink.p, sink.n);
    free(sink.p);
    wk_contract_eth_rr_cleanup(&m);
}

static bool same_run(const run *a, const run *b)
{
    if (a->code != b->code || strcmp(a->events, b->events) != 0 || a->nchunks != b->nchunks)
        return false;
    if (a->code != WK_OK && (a->err.has_offset != b->err.has_offset || a->err.offset != b->err.offset))
        return false;
    if (a->payload.n != b->payload.n || (a->payload.n && memcmp(a->payload.p, b->payload.p, a->payload.n)))
        return false;
    for (size_t i = 0; i < a->nchunks; i++) {
        const chunk_rec *x = &a->chunks[i], *y = &b->chunks[i];
        if (x->payload_at != y->payload_at || x->payload_len != y->payload_len ||
            x->info.result != y->info.result || x->info.length != y->info.length ||
            x->info.index != y->info.index || x->info.reserved_result != y->info.reserved_result ||
            x->info.has_context != y->info.has_context || x->info.start_offset != y->info.start_offset ||
            memcmp(x->info.context, y->info.context, WK_ETH_RR_CONTEXT_LEN) != 0)
            return false;
    }
    return true;
}

static const size_t SPLITS[] = {1, 2, 3, 7, 13, 64, 4096, (size_t)-1};
static const size_t OUTCAPS[] = {1, 3, 64, 1 << 20};

/* Reads at every split size and output capacity in the tables (or a reduced set when `big`),
 * checks every result equals the whole-stream one; *whole receives that one. */
static void read_all_ways(const char *what, const wk_eth_rr_reader_params *o, const uint8_t *in, size_t n,
                          const wk_eth_ssz_bounds *begin_bounds, bool big, run *whole)
{
    read_stream(o, in, n, (size_t)-1, 1 << 20, begin_bounds, whole);
    CHECKF(whole->contract_ok, "%s: contract (whole)", what);
    int mismatches = 0;
    for (size_t s = 0; s < sizeof SPLITS / sizeof SPLITS[0]; s++) {
        for (size_t c = 0; c < sizeof OUTCAPS / sizeof OUTCAPS[0]; c++) {
            size_t split = SPLITS[s], cap = OUTCAPS[c];
            if (big && cap < 64 && split != 1 && split != (size_t)-1) continue;
            if (big && split > 1 && split < 4096 && split != 7) continue;
            run r;
            read_stream(o, in, n, split, cap, begin_bounds, &r);
            if (!same_run(&r, whole) || !r.contract_ok) {
                if (mismatches++ < 3)
                    fprintf(stderr, "%s: split %zu outcap %zu differs: %s/%s at %llu, events %s "
                                    "(whole: %s at %llu, %s), contract %d\n",
                            what, split, cap, wk_error_name(r.code), r.err.msg,
                            (unsigned long long)r.err.offset, r.events, wk_error_name(whole->code),
                            (unsigned long long)whole->err.offset, whole->events, r.contract_ok);
            }
            run_free(&r);
        }
    }
    CHECKF(mismatches == 0, "%s: %d split/outcap combinations differ", what, mismatches);
    /* the contract harness (tests/contract): whole, byte by byte, at every split and chunk size,
     * views of 0, 1 and N; every run keeps the contract and reaches this verdict and error */
    wk_contract_eth_rr m;
    wk_contract_eth_rr_setup(&m, o);
    m.begin_bounds = begin_bounds;
    char why[320];
    wk_contract_outcome oc;
    unsigned runs = big ? WK_CONTRACT_WHOLE | WK_CONTRACT_CHUNKS : WK_CONTRACT_ALL;
    CHECKF(wk_contract_check(&wk_contract_eth_rr_ops, &m, NULL, in, n, runs, &oc, why, sizeof why),
           "%s: contract harness: %s", what, why);
    CHECKF(whole->code == WK_OK
               ? oc.verdict == WK_DONE && oc.produced == whole->payload.n
               : oc.verdict == WK_ERROR && oc.error.code == whole->code &&
                     oc.error.offset == whole->err.offset,
           "%s: the harness's outcome differs from the reader's loop (%s at %llu)", what,
           oc.verdict == WK_DONE ? "DONE" : wk_error_name(oc.error.code),
           (unsigned long long)oc.error.offset);
    wk_contract_eth_rr_cleanup(&m);
}

/* Reads whole and at every split; checks an error of this name at this offset. */
static void expect_err(const char *what, const wk_eth_rr_reader_params *o, const buf *in, wk_code code,
                       uint64_t offset)
{
    run r;
    read_all_ways(what, o, in->p, in->n, NULL, false, &r);
    CHECKF(r.code == code && r.err.has_offset && r.err.offset == offset,
           "%s: got %s (%s) at %llu, want %s at %llu", what, wk_error_name(r.code), r.err.msg,
           (unsigned long long)r.err.offset, wk_error_name(code), (unsigned long long)offset);
    run_free(&r);
}

/* ---------------------------------------------------------------------------------------------
 * Handmade rows
 * ------------------------------------------------------------------------------------------- */

/* Offsets our check order gives for the error rows (the vectors give only the names). */
static bool handmade_offset(const char *id, size_t in_len, uint64_t *off)
{
    static const struct { const char *id; long off; } T[] = {
        {"rr-err-budget-exceeded", 42},   /* prefix (1) + max_compressed_len(8) */
        {"rr-err-varint-11-bytes", 9},    /* the 10th byte still continues */
        {"rr-err-varint-overflow", 9},    /* the 10th byte's value bits */
        {"rr-err-varint-nonminimal", 1},  /* the redundant 00 */
        {"rr-err-too-large", 0},          /* the prefix */
        {"rr-err-trailing", -1},          /* the last byte */
        {"rr-err-early-eof", -2},         /* end of input */
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        if (strcmp(T[i].id, id) != 0) continue;
        *off = T[i].off == -1 ? in_len - 1 : T[i].off == -2 ? in_len : (uint64_t)T[i].off;
        return true;
    }
    return false;
}

static void test_handmade(void)
{
    size_t len;
    uint8_t *tsv = read_vec("handmade/cases.tsv", &len);
    REQUIRE(tsv != NULL);
    char *text = malloc(len + 1);
    memcpy(text, tsv, len);
    text[len] = 0;
    free(tsv);
    int rows = 0, payload_rows = 0, chunk_rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char *f[5] = {0};
        int nf = 0;
        char *p = line;
        while (nf < 5) {
            f[nf++] = p;
            char *t = strchr(p, '\t');
            if (!t) break;
            *t = 0;
            p = t + 1;
        }
        if (nf < 4) continue;
        bool is_payload = strcmp(f[1], "reqresp-payload") == 0;
        bool is_chunk = strcmp(f[1], "reqresp-chunk") == 0;
        if (!is_payload && !is_chunk) continue;
        rows++;
        payload_rows += is_payload;
        chunk_rows += is_chunk;
        const char *id = f[0];
        buf in = {0};
        put_hex(&in, f[2]);
        run r;
        read_all_ways(id, is_payload ? &REQUEST : &RESPONSE, in.p, in.n, NULL, false, &r);
        const char *expect = f[3];
        if (strncmp(expect, "err:", 4) == 0) {
            CHECKF(r.code != WK_OK && strcmp(wk_error_name(r.code), expect + 4) == 0,
                   "%s: got %s (%s), want %s", id, wk_error_name(r.code), r.err.msg, expect + 4);
            CHECKF(r.err.has_offset && r.err.offset <= in.n, "%s: offset %llu", id,
                   (unsigned long long)r.err.offset);
            uint64_t off;
            if (handmade_offset(id, in.n, &off))
                CHECKF(r.err.offset == off, "%s: offset %llu, want %llu", id,
                       (unsigned long long)r.err.offset, (unsigned long long)off);
        } else {
            REQUIRE(strncmp(expect, "ok:", 3) == 0);
            buf want = {0};
            int want_result = 0;
            const char *hex = expect + 3;
            if (is_chunk) {
                REQUIRE(sscanf(expect, "ok:result=%d;", &want_result) == 1);
                hex = strstr(expect, "payload=");
                REQUIRE(hex != NULL);
                hex += 8;
            }
            put_hex(&want, hex);
            CHECKF(r.code == WK_OK, "%s: got %s (%s)", id, wk_error_name(r.code), r.err.msg);
            CHECKF(r.payload.n == want.n && (!want.n || memcmp(r.payload.p, want.p, want.n) == 0),
                   "%s: payload differs", id);
            CHECKF(strcmp(r.events, is_payload ? "BE" : "BC") == 0, "%s: events %s", id, r.events);
            CHECK(r.nchunks == 1);
            if (r.nchunks == 1) {
                CHECK(r.chunks[0].info.result == want_result);
                CHECK(r.chunks[0].info.length == want.n);
                CHECK(!r.chunks[0].info.has_context);
            }
            CHECK(r.consumed == in.n);
            free(want.p);
        }
        if (strcmp(id, "rr-err-varint-nonminimal") == 0) {
            wk_eth_rr_reader_params o = REQUEST;
            o.allow_nonminimal = true;
            run ok;
            read_all_ways("nonminimal allowed", &o, in.p, in.n, NULL, false, &ok);
            CHECK(ok.code == WK_OK && ok.payload.n == 8 && memcmp(ok.payload.p, PING, 8) == 0);
            CHECK(ok.nchunks == 1 && ok.chunks[0].info.length == 8);
            run_free(&ok);
        }
        run_free(&r);
        free(in.p);
    }
    free(text);
    CHECKF(payload_rows == 10 && chunk_rows == 2, "handmade rows: %d payload, %d chunk",
           payload_rows, chunk_rows);
    printf("handmade: %d reqresp rows\n", rows);
}

/* ---------------------------------------------------------------------------------------------
 * The Lodestar block
 * ------------------------------------------------------------------------------------------- */
static void test_lodestar(void)
{
    size_t ssz_len, sn_len;
    uint8_t *ssz = read_vec("reqresp-framed/lodestar/goerliShadowForkBlock.13249/serialized.ssz",
                            &ssz_len);
    uint8_t *sn = read_vec("reqresp-framed/lodestar/goerliShadowForkBlock.13249/streamed.snappy",
                           &sn_len);
    REQUIRE(ssz && sn);
    REQUIRE(ssz_len == 139405 && sn_len == 52357);
    static const uint8_t ctx_a[4] = {0x4a, 0x26, 0xc5, 0x8b}, ctx_b[4] = {1, 2, 3, 4};
    uint8_t vi[WK_ETH_UVARINT_MAX_LEN];
    CHECK(wk_leb128_put(vi, 139405) == 3 && vi[0] == 0x8d && vi[1] == 0xc1 && vi[2] == 0x08);

    /* as a request */
    buf req = {0};
    put_hex(&req, "8dc108");
    put(&req, sn, sn_len);
    run r;
    read_all_ways("lodestar request", &REQUEST, req.p, req.n, NULL, true, &r);
    CHECKF(r.code == WK_OK, "lodestar request: %s %s", wk_error_name(r.code), r.err.msg);
    CHECK(r.payload.n == ssz_len && memcmp(r.payload.p, ssz, ssz_len) == 0);
    CHECK(strcmp(r.events, "BE") == 0);
    CHECK(r.consumed == req.n);
    run_free(&r);

    /* tight bounds set at CHUNK_BEGIN */
    wk_eth_ssz_bounds exact = {139405, 139405}, above = {139406, 0}, below = {0, 139404};
    read_all_ways("lodestar exact bounds", &REQUEST, req.p, req.n, &exact, true, &r);
    CHECK(r.code == WK_OK && r.payload.n == ssz_len);
    run_free(&r);
    read_stream(&REQUEST, req.p, req.n, 7, 4096, &above, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS && r.err.offset == 0 && r.payload.n == 0);
    run_free(&r);
    read_stream(&REQUEST, req.p, req.n, 1, 4096, &below, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS && r.err.offset == 0);
    run_free(&r);
    /* the same bounds in the options */
    wk_eth_rr_reader_params ob = REQUEST;
    ob.bounds = below;
    read_stream(&ob, req.p, req.n, (size_t)-1, 1 << 20, NULL, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS && r.err.offset == 0);
    run_free(&r);
    ob.bounds = exact;
    read_stream(&ob, req.p, req.n, (size_t)-1, 1 << 20, NULL, &r);
    CHECK(r.code == WK_OK && r.payload.n == ssz_len);
    run_free(&r);

    /* as a success chunk with context bytes */
    wk_eth_rr_reader_params ctxo = RESPONSE;
    ctxo.context_bytes = true;
    buf chunk = {0};
    put_byte(&chunk, 0);
    put(&chunk, ctx_a, 4);
    put_hex(&chunk, "8dc108");
    put(&chunk, sn, sn_len);
    read_all_ways("lodestar success chunk", &ctxo, chunk.p, chunk.n, NULL, true, &r);
    CHECKF(r.code == WK_OK, "lodestar chunk: %s %s", wk_error_name(r.code), r.err.msg);
    CHECK(r.payload.n == ssz_len && memcmp(r.payload.p, ssz, ssz_len) == 0);
    CHECK(strcmp(r.events, "BC") == 0 && r.nchunks == 1);
    CHECK(r.chunks[0].info.has_context && memcmp(r.chunks[0].info.context, ctx_a, 4) == 0);
    CHECK(r.chunks[0].info.result == 0 && r.chunks[0].info.length == ssz_len);
    run_free(&r);

    /* a 3-chunk response: block (context A), Ping (context B), error chunk "err" */
    buf resp = {0};
    put(&resp, chunk.p, chunk.n);
    size_t c1_at = resp.n;
    uint8_t enc[256];
    size_t enc_len = 0;
    wk_error err;
    CHECK(enc_out(wk_eth_rr_encode(0, ctx_b, PING, 8, VIEW(enc, sizeof enc), &err), &enc_len, &err) == WK_OK);
    put(&resp, enc, enc_len);
    size_t c2_at = resp.n;
    put_hex(&resp, ERR_CHUNK_HEX);
    read_all_ways("3-chunk response", &ctxo, resp.p, resp.n, NULL, true, &r);
    CHECKF(r.code == WK_OK, "3 chunks: %s %s", wk_error_name(r.code), r.err.msg);
    CHECKF(strcmp(r.events, "BCBCBC") == 0, "events %s", r.events);
    REQUIRE(r.nchunks == 3);
    CHECK(r.chunks[0].payload_len == ssz_len && memcmp(r.payload.p, ssz, ssz_len) == 0);
    CHECK(r.chunks[1].payload_len == 8 && memcmp(r.payload.p + r.chunks[1].payload_at, PING, 8) == 0);
    CHECK(r.chunks[2].payload_len == 3 && memcmp(r.payload.p + r.chunks[2].payload_at, "err", 3) == 0);
    CHECK(memcmp(r.chunks[1].info.context, ctx_b, 4) == 0 && r.chunks[1].info.has_context);
    CHECK(r.chunks[2].info.result == 1 && !r.chunks[2].info.has_context);
    CHECK(!r.chunks[2].info.reserved_result);
    CHECK(r.chunks[0].info.start_offset == 0 && r.chunks[1].info.start_offset == c1_at &&
          r.chunks[2].info.start_offset == c2_at);
    CHECK(r.chunks[0].info.index == 0 && r.chunks[1].info.index == 1 && r.chunks[2].info.index == 2);
    run_free(&r);

    /* bounds {8, 8} at every CHUNK_BEGIN: the block fails before any payload byte (after the
     * result and context bytes), and max_chunks */
    wk_eth_ssz_bounds eight = {8, 8};
    read_stream(&ctxo, resp.p, resp.n, 3, 4096, &eight, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS && r.err.offset == 5 && r.payload.n == 0);
    CHECK(strcmp(r.events, "B") == 0);
    run_free(&r);
    wk_eth_rr_reader_params two = ctxo;
    two.max_chunks = 2;
    read_stream(&two, resp.p, resp.n, 4096, 4096, NULL, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_TRAILING && r.err.offset == c2_at);
    CHECK(strcmp(r.events, "BCBC") == 0);
    run_free(&r);
    two.max_chunks = 3;
    read_stream(&two, resp.p, resp.n, 4096, 4096, NULL, &r);
    CHECK(r.code == WK_OK && r.nchunks == 3);
    run_free(&r);

    /* EOF inside the frames, at several points: early EOF at the end of input */
    size_t cuts[] = {3, 4, 3 + 5, 3 + 10, 3 + 10 + 3, 3 + 10 + 4 + 100, req.n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        buf t = {req.p, cuts[i], cuts[i]};
        char what[64];
        snprintf(what, sizeof what, "lodestar cut at %zu", cuts[i]);
        run rr;
        read_stream(&REQUEST, t.p, t.n, 4096, 4096, NULL, &rr);
        CHECKF(rr.code == WK_ERR_SSZSNAPPY_EARLY_EOF && rr.err.offset == cuts[i], "%s: %s at %llu",
               what, wk_error_name(rr.code), (unsigned long long)rr.err.offset);
        run_free(&rr);
    }
    /* a response cut after whole chunks ends normally; inside the last one it does not */
    read_stream(&ctxo, resp.p, c2_at, 4096, 4096, NULL, &r);
    CHECK(r.code == WK_OK && r.nchunks == 2);
    run_free(&r);
    read_stream(&ctxo, resp.p, resp.n - 1, 4096, 4096, NULL, &r);
    CHECK(r.code == WK_ERR_SSZSNAPPY_EARLY_EOF && r.err.offset == resp.n - 1);
    run_free(&r);
    /* a corrupted body byte: a framing error with a stream offset inside the frames */
    buf bad = {0};
    put(&bad, req.p, req.n);
    bad.p[3 + 10 + 8 + 50] ^= 0x55;
    read_stream(&REQUEST, bad.p, bad.n, 4096, 4096, NULL, &r);
    CHECKF(r.code != WK_OK && r.err.has_offset && r.err.offset >= 3 && r.err.offset < bad.n,
           "corrupted: %s at %llu", wk_error_name(r.code), (unsigned long long)r.err.offset);
    run_free(&r);
    free(bad.p);

    free(req.p);
    free(chunk.p);
    free(resp.p);
    free(ssz);
    free(sn);
}

/* ---------------------------------------------------------------------------------------------
 * Budget
 * ------------------------------------------------------------------------------------------- */

/* The spec 6.4 Lighthouse example: an 84-byte payload whose frames take 42 bytes (one 0x00 chunk
 * with a 34-byte block), after the identifier and `pad` bytes of padding chunks. */
static void flood(buf *in, uint8_t payload[84], size_t pad)
{
    uint8_t block[34];
    size_t k = 0;
    block[k++] = 84;                           /* preamble */
    block[k++] = (27 - 1) << 2;                /* literal, 27 bytes */
    for (int i = 0; i < 27; i++) block[k++] = (uint8_t)(0x11 * (i % 7) + i);
    block[k++] = ((50 - 1) << 2) | 2;          /* copy-2: length 50, offset 27 */
    block[k++] = 27;
    block[k++] = 0;
    block[k++] = ((7 - 4) << 2) | 1;           /* copy-1: length 7, offset 1 */
    block[k++] = 1;
    /* the decoded bytes, by hand */
    size_t o = 0;
    memcpy(payload, block + 2, 27);
    o = 27;
    for (int i = 0; i < 50; i++, o++) payload[o] = payload[o - 27];
    for (int i = 0; i < 7; i++, o++) payload[o] = payload[o - 1];
    uint32_t crc = wk_eth_snappy_mask_crc(wk_eth_crc32c(payload, 84));
    in->n = 0;
    put_byte(in, 84);
    put(in, WK_ETH_SNAPPY_FRAME_STREAM_ID, WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN);
    while (pad >= 4) {
        size_t body = pad >= 8 || pad == 4 ? 0 : pad - 4; /* empty padding chunks, then the rest */
        uint8_t h[4] = {0xfe, (uint8_t)body, 0, 0};
        put(in, h, 4);
        for (size_t i = 0; i < body; i++) put_byte(in, 0);
        pad -= 4 + body;
    }
    uint8_t h[8] = {0x00, 4 + 34, 0, 0, (uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                    (uint8_t)(crc >> 24)};
    put(in, h, 8);
    put(in, block, 34);
}

static void test_budget(void)
{
    CHECK(wk_eth_rr_chunk_max_size(0) == 15);
    uint8_t payload[84];
    buf in = {0};
    flood(&in, payload, 80);
    CHECK(in.n == 1 + 10 + 80 + 42); /* 132 framed bytes > max_compressed_len(84) = 130 */
    expect_err("lighthouse flood", &REQUEST, &in, WK_ERR_SSZSNAPPY_BUDGET, 1 + 130);
    flood(&in, payload, 78);
    CHECK(in.n == 1 + 130);
    run r;
    read_all_ways("flood at the budget", &REQUEST, in.p, in.n, NULL, false, &r);
    CHECKF(r.code == WK_OK, "flood 130: %s %s", wk_error_name(r.code), r.err.msg);
    CHECK(r.payload.n == 84 && memcmp(r.payload.p, payload, 84) == 0);
    run_free(&r);
    /* the same chunk in a response: the budget counts from the prefix end */
    flood(&in, payload, 80);
    buf resp = {0};
    put_byte(&resp, 0);
    put(&resp, in.p, in.n);
    expect_err("flood chunk", &RESPONSE, &resp, WK_ERR_SSZSNAPPY_BUDGET, 2 + 130);
    /* exactly 130 bytes of frames and then EOF: early EOF, not a budget error */
    resp.n = 2 + 130;
    expect_err("flood cut at the budget", &RESPONSE, &resp, WK_ERR_SSZSNAPPY_EARLY_EOF, 2 + 130);
    free(resp.p);
    free(in.p);
}

/* ---------------------------------------------------------------------------------------------
 * n = 0, error chunks, reserved results, max_chunks, early EOF, bounds
 * ------------------------------------------------------------------------------------------- */
static void test_small_cases(void)
{
    buf in = {0};
    run r;
    /* request 00: empty payload */
    put_hex(&in, "00");
    read_all_ways("request 00", &REQUEST, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.payload.n == 0 && strcmp(r.events, "BE") == 0);
    CHECK(r.nchunks == 1 && r.chunks[0].info.length == 0 && r.chunks[0].info.length_known);
    run_free(&r);
    /* 00 + stream identifier: the payload was complete at the prefix */
    put(&in, WK_ETH_SNAPPY_FRAME_STREAM_ID, WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN);
    expect_err("request 00 + identifier", &REQUEST, &in, WK_ERR_SSZSNAPPY_TRAILING, 1);
    /* response 01 00: an error chunk with an empty message */
    in.n = 0;
    put_hex(&in, "0100");
    read_all_ways("01 00", &RESPONSE, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nchunks == 1 && r.chunks[0].info.result == 1 &&
          r.chunks[0].info.length == 0 && strcmp(r.events, "BC") == 0);
    run_free(&r);
    /* response 00 00 then an identifier: ff is the next result byte, and 06 its prefix; the
     * bytes after are no framed stream */
    in.n = 0;
    put_hex(&in, "0000");
    put(&in, WK_ETH_SNAPPY_FRAME_STREAM_ID, WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN);
    read_all_ways("00 00 + identifier", &RESPONSE, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_ERR_FRAME_NO_STREAM_ID && r.nchunks == 1);
    CHECK(strcmp(r.events, "BCB") == 0);
    run_free(&r);
    /* an empty response */
    read_all_ways("empty response", &RESPONSE, in.p, 0, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nev == 0);
    run_free(&r);
    /* empty request of a method with content: early EOF at 0 */
    in.n = 0;
    expect_err("empty request", &REQUEST, &in, WK_ERR_SSZSNAPPY_EARLY_EOF, 0);
    /* empty_request methods: nothing expected */
    wk_eth_rr_reader_params eo = REQUEST;
    eo.empty_request = true;
    read_all_ways("no content", &eo, in.p, 0, NULL, false, &r);
    CHECK(r.code == WK_OK && strcmp(r.events, "E") == 0 && r.nchunks == 0);
    run_free(&r);
    put_hex(&in, "00");
    expect_err("no content + byte", &eo, &in, WK_ERR_SSZSNAPPY_TRAILING, 0);

    /* error messages: 256 bytes are fine, 257 are not */
    uint8_t msg[300];
    for (int i = 0; i < 300; i++) msg[i] = (uint8_t)('a' + i % 26);
    uint8_t enc[1024];
    size_t enc_len = 0;
    wk_error err;
    CHECK(enc_out(wk_eth_rr_encode(2, NULL, msg, 256, VIEW(enc, sizeof enc), &err), &enc_len, &err) == WK_OK);
    in.n = 0;
    put(&in, enc, enc_len);
    read_all_ways("errmsg 256", &RESPONSE, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.payload.n == 256 && memcmp(r.payload.p, msg, 256) == 0);
    CHECK(r.nchunks == 1 && r.chunks[0].info.result == 2);
    run_free(&r);
    in.n = 0;
    put_hex(&in, "018102");
    expect_err("errmsg 257", &RESPONSE, &in, WK_ERR_RESP_ERRMSG_TOO_LONG, 1);
    /* error chunks ignore the success bounds, in the options and at CHUNK_BEGIN */
    wk_eth_rr_reader_params tight = RESPONSE;
    tight.bounds.min_len = 100;
    tight.bounds.max_len = 200;
    in.n = 0;
    put_hex(&in, ERR_CHUNK_HEX);
    wk_eth_ssz_bounds big = {100, 200};
    read_all_ways("error chunk, tight bounds", &tight, in.p, in.n, &big, false, &r);
    CHECK(r.code == WK_OK && r.payload.n == 3);
    run_free(&r);
    CHECK(enc_out(wk_eth_rr_encode(1, NULL, msg, 257, VIEW(enc, sizeof enc), &err), &enc_len, &err) ==
              WK_ERR_RESP_ERRMSG_TOO_LONG &&
          err.category == WK_CAT_PEER_PROTOCOL);

    /* reserved results 4..127: error chunks, flagged; 3 and 128 are not reserved; no context
     * bytes on any error chunk */
    static const int results[] = {3, 4, 5, 127, 128, 255};
    wk_eth_rr_reader_params co = RESPONSE;
    co.context_bytes = true;
    for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
        in.n = 0;
        put_byte(&in, (uint8_t)results[i]);
        put_hex(&in, ERR_CHUNK_HEX + 2);
        char what[32];
        snprintf(what, sizeof what, "result %d", results[i]);
        read_all_ways(what, &co, in.p, in.n, NULL, false, &r);
        bool reserved = results[i] >= 4 && results[i] <= 127;
        CHECK(r.code == WK_OK && r.nchunks == 1 && r.chunks[0].info.result == results[i]);
        CHECK(r.nchunks == 1 && r.chunks[0].info.reserved_result == reserved);
        CHECK(r.nchunks == 1 && !r.chunks[0].info.has_context && r.payload.n == 3);
        run_free(&r);
        /* an error chunk is the last: a byte after it is trailing */
        put_byte(&in, 0);
        expect_err("after an error chunk", &co, &in, WK_ERR_SSZSNAPPY_TRAILING, in.n - 1);
    }

    /* max_chunks with success chunks */
    in.n = 0;
    put_hex(&in, "00");
    put_hex(&in, PING_REQ_HEX);
    size_t one = in.n;
    put_hex(&in, "00");
    put_hex(&in, PING_REQ_HEX);
    wk_eth_rr_reader_params mo = RESPONSE;
    mo.max_chunks = 1;
    expect_err("max_chunks 1", &mo, &in, WK_ERR_SSZSNAPPY_TRAILING, one);
    mo.max_chunks = 2;
    read_all_ways("max_chunks 2", &mo, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nchunks == 2 && strcmp(r.events, "BCBC") == 0);
    run_free(&r);
    read_all_ways("unlimited", &RESPONSE, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nchunks == 2 && r.payload.n == 16);
    run_free(&r);

    /* early EOF inside a chunk: after the result, inside the context, the prefix, the frames */
    struct { const char *hex; bool ctx; uint64_t off; } eofs[] = {
        {"01", false, 1},
        {"00", true, 1},
        {"00aabb", true, 3},
        {"00aabbccdd", true, 5},
        {"008dc1", false, 3},
        {"00aabbccdd8d", true, 6},
        {"0108ff0600", false, 5},
        {"0008ff060000734e61507059010c00000175de41010000", false, 23},
    };
    for (size_t i = 0; i < sizeof eofs / sizeof eofs[0]; i++) {
        in.n = 0;
        put_hex(&in, eofs[i].hex);
        char what[64];
        snprintf(what, sizeof what, "early EOF %s", eofs[i].hex);
        expect_err(what, eofs[i].ctx ? &co : &RESPONSE, &in, WK_ERR_SSZSNAPPY_EARLY_EOF, eofs[i].off);
    }
    /* ... and a chunk boundary is a clean end, with or without context bytes */
    in.n = 0;
    put_hex(&in, "00aabbccdd");
    put_hex(&in, PING_REQ_HEX);
    read_all_ways("context ping", &co, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nchunks == 1 && r.payload.n == 8);
    CHECK(r.nchunks == 1 && r.chunks[0].info.context[3] == 0xdd);
    run_free(&r);

    /* bounds: min and max, inclusive, capped at MAX_PAYLOAD_SIZE */
    in.n = 0;
    put_hex(&in, PING_REQ_HEX);
    struct { uint64_t min, max; bool ok; } bs[] = {
        {8, 8, true}, {0, 8, true}, {8, 0, true}, {9, 0, false}, {9, 100, false}, {0, 7, false},
        {1, 7, false}, {0, UINT64_MAX, true},
    };
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
        wk_eth_rr_reader_params bo = REQUEST;
        bo.bounds.min_len = bs[i].min;
        bo.bounds.max_len = bs[i].max;
        char what[64];
        snprintf(what, sizeof what, "bounds [%llu, %llu]", (unsigned long long)bs[i].min,
                 (unsigned long long)bs[i].max);
        if (bs[i].ok) {
            read_all_ways(what, &bo, in.p, in.n, NULL, false, &r);
            CHECKF(r.code == WK_OK && r.payload.n == 8, "%s", what);
            run_free(&r);
        } else {
            expect_err(what, &bo, &in, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 0);
        }
        /* the same bounds in a success chunk, set at CHUNK_BEGIN */
        buf c = {0};
        put_hex(&c, "00");
        put(&c, in.p, in.n);
        wk_eth_ssz_bounds sb = {bs[i].min, bs[i].max};
        read_stream(&RESPONSE, c.p, c.n, 1, 1, &sb, &r);
        CHECKF(bs[i].ok ? r.code == WK_OK
                        : r.code == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS && r.err.offset == 1,
               "chunk %s: %s", what, wk_error_name(r.code));
        run_free(&r);
        free(c.p);
    }
    /* MAX_PAYLOAD_SIZE + 1 with no type bound and with a larger one */
    uint8_t vi[WK_ETH_UVARINT_MAX_LEN];
    size_t vn = wk_leb128_put(vi, (uint64_t)WK_ETH_SSZ_MAX_PAYLOAD_SIZE + 1);
    in.n = 0;
    put_hex(&in, "00");
    put(&in, vi, vn);
    expect_err("chunk above MAX_PAYLOAD_SIZE", &RESPONSE, &in, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 1);
    wk_eth_rr_reader_params huge = RESPONSE;
    huge.bounds.max_len = (uint64_t)WK_ETH_SSZ_MAX_PAYLOAD_SIZE * 4;
    expect_err("chunk above MAX, larger type bound", &huge, &in, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 1);
    /* varint limits inside a response (prefix after the result byte) */
    in.n = 0;
    put_hex(&in, "00ffffffffffffffffff01");
    expect_err("2^64-1 prefix", &RESPONSE, &in, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 1);
    in.n = 0;
    put_hex(&in, "00ffffffffffffffffff81");
    expect_err("10th byte continues", &RESPONSE, &in, WK_ERR_SSZSNAPPY_VARINT_TOO_LONG, 10);
    in.n = 0;
    put_hex(&in, "008000");
    expect_err("80 00", &RESPONSE, &in, WK_ERR_SSZSNAPPY_VARINT_NONMINIMAL, 2);
    wk_eth_rr_reader_params an = RESPONSE;
    an.allow_nonminimal = true;
    read_all_ways("80 00 allowed", &an, in.p, in.n, NULL, false, &r);
    CHECK(r.code == WK_OK && r.nchunks == 1 && r.chunks[0].info.length == 0);
    run_free(&r);
    /* excess data in a chunk: n = 7 for an 8-byte frame */
    in.n = 0;
    put_hex(&in, "0007ff060000734e61507059010c00000175de410100000000000000");
    run x;
    read_all_ways("excess chunk", &RESPONSE, in.p, in.n, NULL, false, &x);
    CHECK(x.code == WK_ERR_SSZSNAPPY_EXCESS_DATA && x.payload.n == 0);
    CHECK(x.err.has_offset && x.err.offset >= 12 && x.err.offset < in.n);
    run_free(&x);

    /* finish with decoded bytes still unread: WK_ERR_STATE, not sticky; after draining, OK */
    in.n = 0;
    put_hex(&in, PING_REQ_HEX);
    wk_eth_rr_reader *rd = wk_eth_rr_reader_create(&REQUEST, &err);
    REQUIRE(rd != NULL);
    uint8_t o1[3];
    wk_in v = {in.p, in.n, 0};
    wk_out o = {o1, sizeof o1, 0};
    CHECK(rr_step(rd, &v, NULL, &err) == WK_ETH_RR_CHUNK_BEGIN); /* NULL out: no room */
    CHECK(rr_step(rd, &v, NULL, &err) == RR_NEED_OUTPUT);
    CHECK(rr_step(rd, &v, &o, &err) == RR_NEED_OUTPUT && o.pos == 3);
    CHECK(v.pos == in.n && wk_eth_rr_reader_consumed(rd) == in.n);
    CHECK(rr_finish(rd, &err) == WK_ERR_STATE);
    CHECK(wk_eth_rr_reader_chunk(rd)->produced == 3 && wk_eth_rr_reader_chunk(rd)->length == 8);
    uint8_t rest[8];
    wk_out o2 = {rest, sizeof rest, 0};
    CHECK(rr_step(rd, NULL, &o2, &err) == WK_ETH_RR_END && o2.pos == 5); /* NULL in: none */
    CHECK(memcmp(o1, PING, 3) == 0 && memcmp(rest, PING + 3, 5) == 0);
    CHECK(rr_step(rd, NULL, &o2, &err) == RR_NEED_INPUT);
    CHECK(rr_finish(rd, &err) == WK_OK);
    wk_eth_rr_reader_destroy(rd);
    free(in.p);
}

/* ---------------------------------------------------------------------------------------------
 * Encoder, round trips, memory
 * ------------------------------------------------------------------------------------------- */
static void fill(uint8_t *p, size_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        if ((i / 1000) % 3 == 0) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            p[i] = (uint8_t)x;
        } else {
            p[i] = (uint8_t)("the quick brown fox "[i % 20]);
        }
    }
}

static void test_uvarint(void)
{
    struct { uint64_t v; const char *hex; } T[] = {
        {0, "00"}, {1, "01"}, {127, "7f"}, {128, "8001"}, {300, "ac02"}, {139405, "8dc108"},
        {10485761, "81808005"}, {UINT64_MAX, "ffffffffffffffffff01"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        uint8_t out[WK_ETH_UVARINT_MAX_LEN];
        char hex[2 * WK_ETH_UVARINT_MAX_LEN + 1];
        size_t k = wk_leb128_put(out, T[i].v);
        wk_hex_encode(out, k, hex);
        CHECKF(strcmp(hex, T[i].hex) == 0, "uvarint %llu: %s", (unsigned long long)T[i].v, hex);
    }
}

static void test_encode_and_round_trips(void)
{
    size_t big_n = WK_ETH_SSZ_MAX_PAYLOAD_SIZE + 1;
    uint8_t *data = malloc(big_n);
    REQUIRE(data);
    fill(data, big_n);
    size_t cap = (size_t)wk_eth_rr_chunk_max_size(WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    uint8_t *enc = malloc(cap);
    REQUIRE(enc);
    static const uint8_t ctx[4] = {0xde, 0xad, 0xbe, 0xef};
    static const size_t sizes[] = {0, 1, 65535, 65536, 65537, WK_ETH_SSZ_MAX_PAYLOAD_SIZE};
    wk_eth_rr_reader_params co = RESPONSE;
    co.context_bytes = true;
    wk_error err;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        bool huge = n > 100000;
        for (int kind = 0; kind < 3; kind++) { /* request, success with context, success */
            int result = kind == 0 ? -1 : 0;
            size_t len = 0;
            wk_code c = enc_out(wk_eth_rr_encode(result, kind == 1 ? ctx : NULL, data, n, VIEW(enc, (size_t)wk_eth_rr_chunk_max_size(n)), &err), &len, &err);
            REQUIRE(c == WK_OK);
            CHECK(len <= wk_eth_rr_chunk_max_size(n));
            uint8_t vi[WK_ETH_UVARINT_MAX_LEN];
            size_t vn = wk_leb128_put(vi, n);
            size_t hdr = kind == 0 ? 0 : kind == 1 ? 5 : 1;
            CHECK(memcmp(enc + hdr, vi, vn) == 0);
            if (kind == 1) CHECK(enc[0] == 0 && memcmp(enc + 1, ctx, 4) == 0);
            if (n == 0) CHECK(len == hdr + 1); /* prefix only */
            else CHECK(memcmp(enc + hdr + vn, WK_ETH_SNAPPY_FRAME_STREAM_ID, 10) == 0);
            const wk_eth_rr_reader_params *o = kind == 0 ? &REQUEST : kind == 1 ? &co : &RESPONSE;
            char what[64];
            snprintf(what, sizeof what, "round trip n=%zu kind %d", n, kind);
            run r;
            if (huge) {
                read_stream(o, enc, len, (size_t)-1, n + 1, NULL, &r);
                run r2;
                read_stream(o, enc, len, 65536, 4096, NULL, &r2);
                CHECKF(same_run(&r, &r2) && r2.contract_ok, "%s: split 65536", what);
                run_free(&r2);
            } else {
                read_all_ways(what, o, enc, len, NULL, n > 1, &r);
            }
            CHECKF(r.code == WK_OK && r.contract_ok, "%s: %s %s", what, wk_error_name(r.code), r.err.msg);
            CHECK(r.payload.n == n && (n == 0 || memcmp(r.payload.p, data, n) == 0));
            CHECK(r.nchunks == 1 && r.chunks[0].info.has_context == (kind == 1));
            CHECK(strcmp(r.events, kind == 0 ? "BE" : "BC") == 0);
            run_free(&r);
        }
        if (n <= WK_ETH_SSZ_ERRMSG_MAX) { /* error chunks ignore the context */
            size_t len = 0;
            CHECK(enc_out(wk_eth_rr_encode(3, ctx, data, n, VIEW(enc, cap), &err), &len, &err) == WK_OK);
            CHECK(enc[0] == 3 && len == (n ? 1 + 1 + wk_eth_snappy_frame_max_size(n) : 2));
            run r;
            read_stream(&co, enc, len, 1, 1, NULL, &r);
            CHECK(r.code == WK_OK && r.payload.n == n && r.chunks[0].info.result == 3);
            run_free(&r);
        }
    }
    /* MAX_PAYLOAD_SIZE + 1 refused by the encoder (request and success chunk) */
    size_t len = 12345;
    CHECK(enc_out(wk_eth_rr_encode(-1, NULL, data, big_n, VIEW(enc, cap), &err), &len, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
    CHECK(err.category == WK_CAT_PEER_PROTOCOL && len == 12345);
    CHECK(enc_out(wk_eth_rr_encode(0, ctx, data, big_n, VIEW(enc, cap), &err), &len, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
    /* ... and by the reader */
    buf in = {0};
    uint8_t vi[WK_ETH_UVARINT_MAX_LEN];
    put(&in, vi, wk_leb128_put(vi, big_n));
    put(&in, WK_ETH_SNAPPY_FRAME_STREAM_ID, 10);
    expect_err("reader MAX+1", &REQUEST, &in, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 0);
    free(in.p);
    /* output bound and arguments */
    CHECK(enc_out(wk_eth_rr_encode(0, NULL, data, 100, VIEW(enc, (size_t)wk_eth_rr_chunk_max_size(100) - 1), &err), &len, &err) ==
          ENC_NO_ROOM);
    CHECK(enc_out(wk_eth_rr_encode(256, NULL, data, 1, VIEW(enc, cap), &err), &len, &err) == WK_ERR_ARG);
    CHECK(wk_eth_rr_chunk_max_size(8) == 1 + 4 + 10 + wk_eth_snappy_frame_max_size(8));
    free(enc);
    free(data);
}

static size_t peak_for(size_t n, const uint8_t *data)
{
    size_t cap = (size_t)wk_eth_rr_chunk_max_size(n);
    uint8_t *enc = malloc(cap);
    size_t len = 0;
    wk_error err;
    if (enc_out(wk_eth_rr_encode(-1, NULL, data, n, VIEW(enc, cap), &err), &len, &err) != WK_OK) abort();
    wk_alloc_counter counter = {0};
    wk_allocator a = wk_counting_allocator(&counter);
    wk_eth_rr_reader_params ra = REQUEST;
    ra.allocator = &a;
    /* through the harness: pushes of 1000 bytes, views of 4096 */
    wk_contract_eth_sink sink = {0};
    wk_contract_eth_rr m;
    wk_contract_eth_rr_setup(&m, &ra);
    m.sink = &sink;
    wk_contract_plan plan = {1000, NULL, 0, 4096, false, false};
    wk_contract_outcome oc;
    char why[320];
    bool ok = wk_contract_drive(&wk_contract_eth_rr_ops, &m, NULL, enc, len, &plan, &oc, why,
                                sizeof why);
    ok = ok && oc.verdict == WK_DONE && sink.n == n && memcmp(sink.p, data, n) == 0;
    CHECKF(ok, "memory run n=%zu: %s", n, why);
    wk_contract_eth_rr_cleanup(&m);
    free(sink.p);
    CHECK(counter.current == 0);
    free(enc);
    return counter.peak;
}

static void test_memory(void)
{
    size_t n_max = WK_ETH_SSZ_MAX_PAYLOAD_SIZE;
    uint8_t *data = malloc(n_max);
    REQUIRE(data);
    fill(data, n_max);
    size_t p1 = peak_for(1, data), p2 = peak_for(65537, data), p3 = peak_for(1000000, data),
           p4 = peak_for(n_max, data);
    printf("reader peak memory: %zu %zu %zu %zu bytes\n", p1, p2, p3, p4);
    CHECK(p1 > 0 && p1 == p2 && p2 == p3 && p3 == p4);
    CHECK(p4 < 200 * 1024);
    /* allocation failure at create is reported */
    wk_alloc_counter counter = {0};
    counter.limit = 64;
    wk_allocator a = wk_counting_allocator(&counter);
    wk_error err;
    wk_eth_rr_reader_params ra = REQUEST;
    ra.allocator = &a;
    CHECK(wk_eth_rr_reader_create(&ra, &err) == NULL && err.code == WK_ERR_NOMEM);
    counter.limit = p1 - 1;
    CHECK(wk_eth_rr_reader_create(&ra, &err) == NULL && err.code == WK_ERR_NOMEM);
    CHECK(counter.current == 0);
    free(data);
}

int main(int argc, char **argv)
{
    vec_dir = argc > 1 ? argv[1] : "tests/vectors/eth";
    test_uvarint();
    test_handmade();
    test_lodestar();
    test_budget();
    test_small_cases();
    test_encode_and_round_trips();
    test_memory();
    return wk_test_summary("eth_reqresp");
}
