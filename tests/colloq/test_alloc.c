/* colloq_alloc: every colloq object made with a counting, failing allocator
 * (tests/contract/wk_contract_alloc.h, zlib's infcover model): each allocation call the scenario
 * makes through it fails in turn, alone and sticky, and every run must end WK_OK or WK_ERR_NOMEM
 * with nothing left allocated. Scenarios: compile a conversation and load its canonical plan;
 * decode a transcript in each encoding (wk_colloq_decoder); a session through wk_colloq_reader;
 * a trace (appended, written, parsed back, verified); the generator's two parts.
 * json-c's own documents do not go through the allocator (colloq.h): they are not counted.
 * Usage: test_colloq_alloc FIXTURES_DIR */
#include "colloq_fixture.h"
#include "wk_contract_alloc.h"

#define REQUIRE_OR_FAIL(cond)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static const char *wire_names[3] = {"reference", "compact", "binary"};

typedef struct fixture {
    const char *conv;      /* conversation text */
    size_t conv_len;
    wk_colloq_plan *plan;  /* compiled with malloc: what the other scenarios borrow */
    char *body[3];         /* ts-valid's frames per wire (after the preface line) */
    size_t body_len[3];
} fixture;

static wk_code compile_scenario(void *ctx, const wk_allocator *a, wk_error *err)
{
    const fixture *fx = ctx;
    wk_colloq_plan_params pp = {a};
    wk_colloq_plan *p = NULL, *q = NULL;
    wk_code rc = wk_colloq_plan_compile(fx->conv, fx->conv_len, &pp, &p, err);
    if (rc) return rc;
    rc = wk_colloq_plan_load(p->canonical, p->canonical_len, &pp, &q, err);
    wk_colloq_plan_destroy(q);
    wk_colloq_plan_destroy(p);
    return rc;
}

/* Decodes every frame of one wire with a decoder made through a. */
static wk_code decode_wire(const fixture *fx, int w, const wk_allocator *a, wk_error *err)
{
    wk_colloq_decoder_params dp = {fx->plan, (wk_colloq_wire)w, a};
    wk_colloq_decoder *d = wk_colloq_decoder_create(&dp, err);
    if (!d) return err->code;
    static wk_colloq_frame f;
    wk_in in = {(const uint8_t *)fx->body[w], fx->body_len[w], 0};
    wk_code rc = WK_OK;
    while (in.pos < in.size) {
        wk_result r = wk_colloq_decoder_decode(d, &in, &f, err);
        if (r != WK_DONE) {
            rc = r == WK_ERROR ? err->code : WK_ERR_STATE;
            break;
        }
    }
    wk_colloq_decoder_destroy(d);
    return rc;
}

static wk_code decode_scenario(void *ctx, const wk_allocator *a, wk_error *err)
{
    for (int w = 0; w < 3; w++) {
        wk_code rc = decode_wire(ctx, w, a, err);
        if (rc) return rc;
    }
    return WK_OK;
}

static wk_code reader_scenario(void *ctx, const wk_allocator *a, wk_error *err)
{
    const fixture *fx = ctx;
    for (int w = 0; w < 3; w++) {
        wk_colloq_reader_params rp = {fx->plan, (wk_colloq_wire)w, WK_COLLOQ_SENDER_TRANSCRIPT, a, NULL};
        wk_colloq_reader *r = wk_colloq_reader_create(&rp, err);
        if (!r) return err->code;
        wk_code rc = WK_OK;
        /* pushes of 7 bytes: frames read in place and completed in the reader's buffer */
        for (size_t at = 0; at < fx->body_len[w] && !rc; at += 7) {
            size_t n = fx->body_len[w] - at < 7 ? fx->body_len[w] - at : 7;
            wk_in in = {(const uint8_t *)fx->body[w] + at, n, 0};
            wk_result res;
            while ((res = wk_colloq_reader_read(r, &in, NULL, err)) == WK_EVENT) {}
            if (res != WK_NEED_INPUT) rc = err->code;
        }
        if (!rc && wk_colloq_reader_finish(r, NULL, err) != WK_DONE) rc = err->code;
        wk_colloq_reader_destroy(r);
        if (rc) return rc;
    }
    return WK_OK;
}

static wk_code trace_scenario(void *ctx, const wk_allocator *a, wk_error *err)
{
    const fixture *fx = ctx;
    wk_colloq_trace_params tp = {a};
    wk_colloq_trace t, back;
    wk_colloq_trace_init(&t, &tp);
    wk_colloq_trace_init(&back, &tp);
    static wk_colloq_frame f;
    wk_colloq_session s;
    wk_colloq_session_init(&s, fx->plan);
    wk_colloq_decoder_params dp = {fx->plan, WK_COLLOQ_WIRE_BINARY, a};
    wk_colloq_decoder *d = wk_colloq_decoder_create(&dp, err);
    if (!d) return err->code;
    wk_in in = {(const uint8_t *)fx->body[2], fx->body_len[2], 0};
    wk_code rc = WK_OK;
    while (!rc && in.pos < in.size) {
        if (wk_colloq_session_step(&s, d, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, err) != WK_DONE)
            rc = err->code;
        else
            rc = wk_colloq_trace_append_frame(&t, fx->plan, &f, err);
    }
    if (!rc) rc = wk_colloq_trace_append_failure(&t, WK_ERR_COLLOQ_AFTER_FINAL, s.next_seq, err);
    char *text = NULL;
    size_t n = wk_colloq_trace_size(&t);
    if (!rc && !(text = malloc(n ? n : 1))) rc = WK_ERR_STATE; /* the test's own memory */
    if (!rc) {
        wk_out o = {(uint8_t *)text, n, 0};
        if (wk_colloq_trace_encode(&t, &o, err) != WK_DONE) rc = err->code;
    }
    if (!rc) rc = wk_colloq_trace_parse(text, n, &back, err);
    if (!rc) rc = wk_colloq_trace_verify(fx->plan, &back, NULL, err);
    free(text);
    wk_colloq_decoder_destroy(d);
    wk_colloq_trace_destroy(&back);
    wk_colloq_trace_destroy(&t);
    return rc;
}

static wk_code codegen_scenario(void *ctx, const wk_allocator *a, wk_error *err)
{
    const fixture *fx = ctx;
    wk_colloq_codegen_params gp = {NULL, NULL, a};
    for (int part = 0; part < 2; part++) {
        size_t n = 0;
        wk_code rc = wk_colloq_codegen_size(fx->plan, &gp, (wk_colloq_codegen_part)part, &n, err);
        if (rc) return rc;
    }
    return WK_OK;
}

/* The sweep, after a counting run: the scenario must allocate through the allocator at all (a
 * scenario that makes no call would pass the sweep vacuously). */
static void sweep(const char *name, wk_contract_alloc_scenario fn, fixture *fx)
{
    wk_contract_alloc ca;
    wk_contract_alloc_init(&ca, 0, false);
    wk_allocator a = wk_contract_alloc_allocator(&ca);
    wk_error err;
    CHECKF(fn(fx, &a, &err) == WK_OK && ca.calls > 0 && ca.live_blocks == 0,
           "%s: %llu allocation calls, %zu blocks left", name, (unsigned long long)ca.calls,
           ca.live_blocks);
    printf("%s: %llu allocation calls, each failed alone and sticky\n", name,
           (unsigned long long)ca.calls);
    CHECKF(wk_contract_alloc_sweep(name, fn, fx) == 0, "%s: the sweep failed", name);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_colloq_alloc FIXTURES_DIR\n");
        return 2;
    }
    dir = argv[1];
    fixture fx = {0};
    size_t cn = 0;
    char *conv = slurp("token-stream.json", &cn);
    REQUIRE_OR_FAIL(conv != NULL);
    fx.conv = conv;
    fx.conv_len = cn;
    fx.plan = plan_of("token-stream.json");
    REQUIRE_OR_FAIL(fx.plan != NULL);
    for (int w = 0; w < 3; w++) {
        char rel[128];
        snprintf(rel, sizeof rel, "transcripts/ts-valid.%s", wire_names[w]);
        size_t n = 0;
        char *t = slurp(rel, &n);
        REQUIRE_OR_FAIL(t != NULL);
        const char *nl = memchr(t, '\n', n);
        REQUIRE_OR_FAIL(nl != NULL);
        size_t pre = (size_t)(nl - t) + 1;
        fx.body[w] = t;
        memmove(t, t + pre, n - pre);
        fx.body_len[w] = n - pre;
    }
    sweep("colloq compile+load", compile_scenario, &fx);
    sweep("colloq decoders", decode_scenario, &fx);
    sweep("colloq reader", reader_scenario, &fx);
    sweep("colloq trace", trace_scenario, &fx);
    sweep("colloq codegen", codegen_scenario, &fx);
    for (int w = 0; w < 3; w++) free(fx.body[w]);
    free(conv);
    wk_colloq_plan_destroy(fx.plan);
    return wk_test_summary("colloq_alloc");
}
