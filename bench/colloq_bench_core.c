/* Colloq plan codec (RFC-0005) benchmark: reference, compact, binary and a hand-written baseline
 * side by side in one run (criterion 2), with the RFC's "honest alternative", a compact path whose
 * JSON reader is an event parser (yajl) that builds no document.
 *
 * Variants (what a receiving peer does with each frame, plus what the sender does where stated):
 *   reference     wk_colloq_reference_encode; wk_colloq_decoder_decode (json-c document) +
 *                 wk_colloq_session_check
 *   compact       wk_colloq_compact_encode; wk_colloq_decoder_decode (json-c document) +
 *                 wk_colloq_session_check
 *   compact_yajl  wk_colloq_compact_encode (the same bytes as compact); the line parsed with yajl
 *                 callbacks, no document: one handle reused for the stream of lines as the
 *                 library's decoders are (yajl_allow_multiple_values); numbers taken as raw text
 *                 and converted exactly; strings borrowed from the line unless yajl had to unescape
 *                 them; values put into a wk_colloq_frame against the plan's schedule (unknown key,
 *                 duplicate, missing required field, out of range, bad hex: malformed); then
 *                 wk_colloq_session_check
 *   binary        wk_colloq_binary_encode; wk_colloq_binary_decode (borrowed) + wk_colloq_session_check
 *   generated     the plan's codec generated as C by `wirekit colloq gen` at build time (bts, bmoe:
 *                 bench/colloq/token-stream.json, moe-router.json; bench/CMakeLists.txt): the application fills the message
 *                 structs, <prefix>_send checks the transition against the sender's session and
 *                 writes the frame, <prefix>_receive decodes and checks it (the generic codec's
 *                 checks, kinds and offsets); only in colloq_bench (the CLI's `colloq bench` links
 *                 this file without generated code and reports it n/a)
 *   handwritten   a fixed C struct layout per message, written and read directly with no plan and
 *                 the same checks (message, state, sender, sequence, ceiling, exact length, UTF-8)
 * Workloads:
 *   isolated  decode + check one Token frame (seq 18, state Streaming), the session state copied
 *             in before each frame;
 *   warm      a whole token-stream session, plan compiled beforehand (preface not counted):
 *             Prompt, 1000 Tokens (3 in 4 with a logprob, some non-ASCII), End; every frame built
 *             from the application's values, encoded, decoded and checked (sender passed live);
 *   moe       a mixture-of-experts router session: 100 rounds of one Route frame (u64, u32, u16,
 *             32 bytes) fanned out to 8 Expert frames (u64, u8, f32, 32 bytes, an optional string
 *             on some), then Finish: many small frames, both roles.
 * Metrics per frame: ns of thread CPU time (median of N repetitions; every variant back to back
 * in each repetition, the order rotating; each timing repeats the operation until it lasts 40 ms
 * of CPU time), frames/s, bytes on
 * the wire (JSON lines with their '\n'), allocations (malloc/calloc/realloc of the process, json-c
 * and yajl included, counted in one untimed run: bench/colloq_alloc_count.c). Ratios are medians of
 * the per-repetition ratios. Every variant's decoded values are compared with the source once,
 * outside the timed region, and every session must end in its final state.
 * Gates (issue 19): generated warm exchange <= 1.10x hand-written (aim 1.0x); generic binary warm
 * exchange <= 2.0x; generated MoE fan-out <= 1.25x; generated isolated checked transition >= 3x
 * faster than compact; zero allocations per generated frame. And issue 7's (RFC-0005 criteria 3-4):
 * binary warm exchange <= 1.25x hand-written (aim 1.10x); binary isolated checked transition >= 1.5x
 * faster than compact (aim 3x); zero allocations per binary frame. */
#include "colloq_bench_core.h"
#include <wirekit/colloq.h>
#ifdef WK_COLLOQ_BENCH_GENERATED
/* The token-stream and MoE codecs generated at build time by `wirekit colloq gen` from
 * bench/colloq/{token-stream,moe-router}.json (bench/CMakeLists.txt). */
#include "bmoe.h"
#include "bts.h"
#endif
#include <yajl/yajl_parse.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *g_log;
static bool g_failed;

static void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void fail(const char *fmt, ...)
{
    if (g_failed) return;
    g_failed = true;
    if (!g_log) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(g_log, "colloq bench: ");
    vfprintf(g_log, fmt, ap);
    fprintf(g_log, "\n");
    va_end(ap);
}
/* ---------------------------------------------------------------------------------------------
 * The hand-written baseline: the token-stream and MoE messages as fixed C struct layouts, encoded
 * and decoded directly (no plan, no schedule, no varints) with the same checks the plan checker
 * makes: known message, state, sender, sequence, payload ceiling, exact payload length, UTF-8.
 * Frame: [u8 message][u32 seq][u32 payload_len][payload], integers little-endian. Payloads put
 * the fixed-width fields first (optional scalars always take their room, a flag byte says whether
 * they are present), then each string or bytes field as [u16 length][bytes].
 * ------------------------------------------------------------------------------------------- */
#define HW_HDR 9
#define HW_CEILING 65536u

enum { HW_OK = 0, HW_UNKNOWN, HW_WRONG_STATE, HW_WRONG_SENDER, HW_BAD_SEQ, HW_MALFORMED,
       HW_TOO_LARGE, HW_TRUNCATED, HW_AFTER_FINAL };
enum { TS_PROMPT = 0, TS_TOKEN = 1, TS_END = 2 };            /* token-stream messages */
enum { TS_IDLE = 0, TS_STREAMING = 1, TS_DONE = 2 };
enum { TS_CLIENT = 0, TS_SERVER = 1 };
enum { MOE_ROUTE = 0, MOE_EXPERT = 1, MOE_FINISH = 2 };      /* moe-router messages */
enum { MOE_IDLE = 0, MOE_GATHER = 1, MOE_DONE = 2 };
enum { MOE_ROUTER = 0, MOE_EXPERTS = 1 };

static inline void le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static inline uint32_t f32bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* A hand-written frame in memory (strings and bytes borrow the received buffer). */
typedef struct hw_frame {
    uint8_t msg;
    uint32_t seq;
    /* token-stream */
    uint32_t index, max_tokens;
    bool has_logprob, has_reason;
    float logprob;
    const uint8_t *text;
    size_t text_len;
    /* moe */
    uint64_t request;
    uint32_t token, requests;
    uint16_t layer;
    uint8_t expert;
    float weight;
    const uint8_t *blob; /* hidden (Route) or output (Expert) */
    size_t blob_len;
    bool has_note;
    const uint8_t *note;
    size_t note_len;
} hw_frame;

typedef struct hw_session {
    int state;
    uint32_t seq;
} hw_session;

static size_t hw_put_str(uint8_t *p, const void *s, size_t n)
{
    le16(p, (uint16_t)n);
    memcpy(p + 2, s, n);
    return 2 + n;
}

/* Encodes f (with f->seq) into dst (room for the largest bench frame); returns its length. */
static size_t hw_ts_encode(const hw_frame *f, uint8_t *dst)
{
    uint8_t *p = dst + HW_HDR;
    switch (f->msg) {
    case TS_PROMPT:
        le32(p, f->max_tokens);
        p += 4;
        p += hw_put_str(p, f->text, f->text_len);
        break;
    case TS_TOKEN:
        le32(p, f->index);
        p[4] = f->has_logprob;
        le32(p + 5, f->has_logprob ? f32bits(f->logprob) : 0);
        p += 9;
        p += hw_put_str(p, f->text, f->text_len);
        break;
    default:
        *p++ = f->has_reason;
        p += hw_put_str(p, f->text, f->has_reason ? f->text_len : 0);
        break;
    }
    size_t len = (size_t)(p - dst - HW_HDR);
    dst[0] = f->msg;
    le32(dst + 1, f->seq);
    le32(dst + 5, (uint32_t)len);
    return HW_HDR + len;
}

static size_t hw_moe_encode(const hw_frame *f, uint8_t *dst)
{
    uint8_t *p = dst + HW_HDR;
    switch (f->msg) {
    case MOE_ROUTE:
        le64(p, f->request);
        le32(p + 8, f->token);
        le16(p + 12, f->layer);
        p += 14;
        p += hw_put_str(p, f->blob, f->blob_len);
        break;
    case MOE_EXPERT:
        le64(p, f->request);
        p[8] = f->expert;
        le32(p + 9, f32bits(f->weight));
        p[13] = f->has_note;
        p += 14;
        p += hw_put_str(p, f->blob, f->blob_len);
        if (f->has_note) p += hw_put_str(p, f->note, f->note_len);
        break;
    default:
        le32(p, f->requests);
        p += 4;
        break;
    }
    size_t len = (size_t)(p - dst - HW_HDR);
    dst[0] = f->msg;
    le32(dst + 1, f->seq);
    le32(dst + 5, (uint32_t)len);
    return HW_HDR + len;
}

/* Takes [u16 len][bytes] from p[*off..n). */
static inline bool hw_take(const uint8_t *p, size_t n, size_t *off, const uint8_t **s, size_t *len)
{
    if (n - *off < 2) return false;
    size_t l = rd16(p + *off);
    if (n - *off - 2 < l) return false;
    *s = p + *off + 2;
    *len = l;
    *off += 2 + l;
    return true;
}

/* Reads the frame header: known message, ceiling, exact length (state, sender and sequence are
 * checked by the callers, in the plan checker's order after after-final). */
static inline int hw_header(const uint8_t *b, size_t n, hw_frame *f, size_t *plen)
{
    if (n < HW_HDR) return HW_TRUNCATED;
    f->msg = b[0];
    f->seq = rd32(b + 1);
    *plen = rd32(b + 5);
    if (f->msg > 2) return HW_UNKNOWN;
    if (*plen > HW_CEILING) return HW_TOO_LARGE;
    if (n - HW_HDR < *plen) return HW_TRUNCATED;
    if (n - HW_HDR > *plen) return HW_MALFORMED;
    return HW_OK;
}

/* Decodes and checks one token-stream frame b[0..n) sent by `sender`; advances s on success. */
static int hw_ts_receive(hw_session *s, int sender, const uint8_t *b, size_t n, hw_frame *f)
{
    size_t plen;
    int rc = hw_header(b, n, f, &plen);
    if (rc) return rc;
    int to, role;
    if (s->state == TS_DONE) return HW_AFTER_FINAL;
    switch (f->msg) {
    case TS_PROMPT: if (s->state != TS_IDLE) return HW_WRONG_STATE; to = TS_STREAMING; role = TS_CLIENT; break;
    case TS_TOKEN: if (s->state != TS_STREAMING) return HW_WRONG_STATE; to = TS_STREAMING; role = TS_SERVER; break;
    default: if (s->state != TS_STREAMING) return HW_WRONG_STATE; to = TS_DONE; role = TS_SERVER; break;
    }
    if (sender != role) return HW_WRONG_SENDER;
    if (f->seq != s->seq) return HW_BAD_SEQ;
    const uint8_t *p = b + HW_HDR;
    size_t off = 0;
    switch (f->msg) {
    case TS_PROMPT:
        if (plen < 4) return HW_MALFORMED;
        f->max_tokens = rd32(p);
        off = 4;
        break;
    case TS_TOKEN:
        if (plen < 9 || p[4] > 1) return HW_MALFORMED;
        f->index = rd32(p);
        f->has_logprob = p[4];
        f->logprob = bitsf32(rd32(p + 5));
        off = 9;
        break;
    default:
        if (plen < 1 || p[0] > 1) return HW_MALFORMED;
        f->has_reason = p[0];
        off = 1;
        break;
    }
    if (!hw_take(p, plen, &off, &f->text, &f->text_len) || off != plen) return HW_MALFORMED;
    if (f->msg == TS_END && !f->has_reason && f->text_len) return HW_MALFORMED;
    if (!wk_utf8_valid(f->text, f->text_len, NULL)) return HW_MALFORMED;
    s->state = to;
    s->seq++;
    return HW_OK;
}

static int hw_moe_receive(hw_session *s, int sender, const uint8_t *b, size_t n, hw_frame *f)
{
    size_t plen;
    int rc = hw_header(b, n, f, &plen);
    if (rc) return rc;
    int to = MOE_GATHER, role;
    if (s->state == MOE_DONE) return HW_AFTER_FINAL;
    switch (f->msg) {
    case MOE_ROUTE: role = MOE_ROUTER; break;
    case MOE_EXPERT: if (s->state != MOE_GATHER) return HW_WRONG_STATE; role = MOE_EXPERTS; break;
    default: if (s->state != MOE_GATHER) return HW_WRONG_STATE; to = MOE_DONE; role = MOE_ROUTER; break;
    }
    if (sender != role) return HW_WRONG_SENDER;
    if (f->seq != s->seq) return HW_BAD_SEQ;
    const uint8_t *p = b + HW_HDR;
    size_t off;
    switch (f->msg) {
    case MOE_ROUTE:
        if (plen < 14) return HW_MALFORMED;
        f->request = rd64(p);
        f->token = rd32(p + 8);
        f->layer = rd16(p + 12);
        off = 14;
        if (!hw_take(p, plen, &off, &f->blob, &f->blob_len)) return HW_MALFORMED;
        break;
    case MOE_EXPERT:
        if (plen < 14 || p[13] > 1) return HW_MALFORMED;
        f->request = rd64(p);
        f->expert = p[8];
        f->weight = bitsf32(rd32(p + 9));
        f->has_note = p[13];
        off = 14;
        if (!hw_take(p, plen, &off, &f->blob, &f->blob_len)) return HW_MALFORMED;
        if (f->has_note) {
            if (!hw_take(p, plen, &off, &f->note, &f->note_len)) return HW_MALFORMED;
            if (!wk_utf8_valid(f->note, f->note_len, NULL)) return HW_MALFORMED;
        }
        break;
    default:
        if (plen < 4) return HW_MALFORMED;
        f->requests = rd32(p);
        off = 4;
        break;
    }
    if (off != plen) return HW_MALFORMED;
    s->state = to;
    s->seq++;
    return HW_OK;
}
/* ---------------------------------------------------------------------------------------------
 * Timing (as bench/eth_bench.c): the median of N repetitions; in each repetition every variant
 * runs once, back to back, the order rotating and alternating direction between repetitions;
 * each timing repeats the operation until it lasts min_seconds. Ratios are the median of the
 * per-repetition ratios.
 * ------------------------------------------------------------------------------------------- */
#define MAX_REPS 51
enum { V_REF, V_COMPACT, V_YAJL, V_BINARY, V_GEN, V_HW, NV };
static const char *const v_key[NV] = {"reference", "compact", "compact_yajl", "binary",
                                      "generated", "handwritten"};
static const char *const v_label[NV] = {"reference (json-c)", "compact (json-c)",
                                        "compact (yajl events)", "binary (plan codec)",
                                        "generated (plan codec as C)", "hand-written"};

typedef void (*op_fn)(void *ctx);

/* The thread's CPU time, not the wall clock: on the shared two-core machine the wall clock of a
 * 40 ms timing counts whatever other processes ran meanwhile (load averages of 5-8 made single
 * wall-clock timings vary 2-3x), the CPU time only what this thread executed. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v0, int n)
{
    double v[MAX_REPS];
    memcpy(v, v0, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double time_op(op_fn f, void *ctx, long iters)
{
    double t0 = now();
    for (long i = 0; i < iters; i++) f(ctx);
    return now() - t0;
}

typedef struct workload {
    const char *key, *title;
    op_fn op[NV];
    void *ctx[NV];
    double frames_per_op;
    double bytes_per_frame[NV];
    double allocs_per_frame[NV]; /* < 0: not measured */
    double ns[NV];               /* median ns per frame */
    double vs_hw[NV];            /* median of per-rep time(v) / time(handwritten) */
    double binary_speedup[NV];   /* median of per-rep time(v) / time(binary) */
    double generated_speedup[NV]; /* median of per-rep time(v) / time(generated); NAN without it */
} workload;

static void measure(workload *w, int reps, double min_seconds)
{
    double t[NV][MAX_REPS];
    long iters[NV];
    for (int v = 0; v < NV; v++) {
        if (!w->op[v]) { /* a variant this build does not have (the CLI's: no generated code) */
            w->allocs_per_frame[v] = -1;
            iters[v] = 0;
            continue;
        }
        w->op[v](w->ctx[v]); /* warm-up */
        /* allocations of one operation, outside the timed region */
        if (wk_colloq_bench_alloc_counting()) {
            uint64_t a0 = wk_colloq_bench_allocs();
            w->op[v](w->ctx[v]);
            w->allocs_per_frame[v] =
                (double)(wk_colloq_bench_allocs() - a0) / w->frames_per_op;
        } else {
            w->allocs_per_frame[v] = -1;
        }
        long n = 1;
        double dt;
        while ((dt = time_op(w->op[v], w->ctx[v], n)) < min_seconds / 8 && n < (1L << 40)) n *= 2;
        iters[v] = (long)((double)n * min_seconds / (dt > 1e-9 ? dt : 1e-9)) + 1;
    }
    for (int k = 0; k < reps; k++) {
        for (int i = 0; i < NV; i++) {
            int v = k % 2 == 0 ? (i + k / 2) % NV : (NV - 1 - i + k / 2) % NV;
            if (!w->op[v]) {
                t[v][k] = NAN;
                continue;
            }
            t[v][k] = time_op(w->op[v], w->ctx[v], iters[v]) / (double)iters[v] /
                      w->frames_per_op;
        }
    }
    for (int v = 0; v < NV; v++) {
        double q[MAX_REPS], s[MAX_REPS], gq[MAX_REPS];
        w->generated_speedup[v] = NAN;
        if (!w->op[v]) {
            w->ns[v] = w->vs_hw[v] = w->binary_speedup[v] = NAN;
            continue;
        }
        for (int k = 0; k < reps; k++) {
            q[k] = t[v][k] / t[V_HW][k];
            s[k] = t[v][k] / t[V_BINARY][k];
            gq[k] = w->op[V_GEN] ? t[v][k] / t[V_GEN][k] : NAN;
        }
        w->ns[v] = median(t[v], reps) * 1e9;
        w->vs_hw[v] = median(q, reps);
        w->binary_speedup[v] = median(s, reps);
        if (w->op[V_GEN]) w->generated_speedup[v] = median(gq, reps);
    }
}
/* ---------------------------------------------------------------------------------------------
 * Conversations (compiled once, before anything is timed) and the application's values
 * ------------------------------------------------------------------------------------------- */
static const char ts_conversation[] =
    "{\"colloq\":\"conversation/v0\",\"name\":\"token-stream\",\"roles\":[\"client\",\"server\"],"
    "\"states\":[\"Idle\",\"Streaming\",\"Done\"],\"initial\":\"Idle\",\"final\":[\"Done\"],"
    "\"messages\":{"
    "\"Prompt\":[{\"name\":\"text\",\"type\":\"string\"},{\"name\":\"max_tokens\",\"type\":\"u32\"}],"
    "\"Token\":[{\"name\":\"index\",\"type\":\"u32\"},{\"name\":\"text\",\"type\":\"string\"},"
    "{\"name\":\"logprob\",\"type\":\"f32\",\"optional\":true}],"
    "\"End\":[{\"name\":\"reason\",\"type\":\"string\",\"optional\":true}]},"
    "\"transitions\":["
    "{\"from\":\"Idle\",\"message\":\"Prompt\",\"sender\":\"client\",\"to\":\"Streaming\"},"
    "{\"from\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"to\":\"Streaming\"},"
    "{\"from\":\"Streaming\",\"message\":\"End\",\"sender\":\"server\",\"to\":\"Done\"}]}";

static const char moe_conversation[] =
    "{\"colloq\":\"conversation/v0\",\"name\":\"moe-router\",\"roles\":[\"router\",\"expert\"],"
    "\"states\":[\"Idle\",\"Gather\",\"Done\"],\"initial\":\"Idle\",\"final\":[\"Done\"],"
    "\"messages\":{"
    "\"Route\":{\"fields\":[{\"name\":\"request\",\"type\":\"u64\"},{\"name\":\"token\",\"type\":\"u32\"},"
    "{\"name\":\"layer\",\"type\":\"u16\"},{\"name\":\"hidden\",\"type\":\"bytes\"}],\"max_payload\":4096},"
    "\"Expert\":{\"fields\":[{\"name\":\"request\",\"type\":\"u64\"},{\"name\":\"expert\",\"type\":\"u8\"},"
    "{\"name\":\"weight\",\"type\":\"f32\"},{\"name\":\"output\",\"type\":\"bytes\"},"
    "{\"name\":\"note\",\"type\":\"string\",\"optional\":true}],\"max_payload\":4096},"
    "\"Finish\":[{\"name\":\"requests\",\"type\":\"u32\"}]},"
    "\"transitions\":["
    "{\"from\":\"Idle\",\"message\":\"Route\",\"sender\":\"router\",\"to\":\"Gather\"},"
    "{\"from\":\"Gather\",\"message\":\"Route\",\"sender\":\"router\",\"to\":\"Gather\"},"
    "{\"from\":\"Gather\",\"message\":\"Expert\",\"sender\":\"expert\",\"to\":\"Gather\"},"
    "{\"from\":\"Gather\",\"message\":\"Finish\",\"sender\":\"router\",\"to\":\"Done\"}]}";

#define MOE_FANOUT 8
#define BLOB_LEN 32
#define FRAME_CAP 8192

static uint64_t rng_state = 0xc011044ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static const char *const token_words[] = {
    " the", " of", " light", " and", " prism", " refraction", " is", " a", " colour", " rays",
    " white", " through", " glass", " angle", " spectrum", ",", ".", " violet", " red",
    " naïve", " café", " →", " 光", " wavelength", " each", " bends", " differently", "\n"};
#define N_WORDS (sizeof token_words / sizeof token_words[0])

/* One frame's values as the application holds them (index into the session's frame list). */
typedef struct app_frame {
    uint8_t msg;       /* TS_* or MOE_* */
    uint8_t sender;    /* TS_CLIENT/TS_SERVER or MOE_ROUTER/MOE_EXPERTS */
    uint32_t a32;      /* Prompt max_tokens, Token index, Route token, Finish requests */
    uint64_t request;  /* Route, Expert */
    uint16_t layer;    /* Route */
    uint8_t expert;    /* Expert */
    bool has_opt;      /* Token logprob, End reason, Expert note */
    float f;           /* Token logprob, Expert weight */
    const char *text;  /* Prompt/Token text, End reason, Expert note */
    size_t text_len;
    const uint8_t *blob; /* Route hidden, Expert output */
} app_frame;

typedef struct session_data {
    app_frame *frames;
    size_t n;
    uint8_t *blobs;
} session_data;

static void ts_make(session_data *d, size_t tokens)
{
    d->n = tokens + 2;
    d->frames = calloc(d->n, sizeof *d->frames);
    d->blobs = NULL;
    static const char prompt[] =
        "Explain, in one paragraph, why a glass prism splits white light into a spectrum.";
    d->frames[0] = (app_frame){.msg = TS_PROMPT, .sender = TS_CLIENT, .a32 = (uint32_t)tokens,
                               .text = prompt, .text_len = sizeof prompt - 1};
    for (size_t i = 0; i < tokens; i++) {
        const char *w = token_words[rnd() % N_WORDS];
        app_frame *f = &d->frames[1 + i];
        *f = (app_frame){.msg = TS_TOKEN, .sender = TS_SERVER, .a32 = (uint32_t)i, .text = w,
                         .text_len = strlen(w)};
        if (rnd() % 4 != 0) {
            f->has_opt = true;
            f->f = -(float)(rnd() % 4096) / 256.0f; /* exact in binary and in shortest decimal */
        }
    }
    d->frames[tokens + 1] = (app_frame){.msg = TS_END, .sender = TS_SERVER, .has_opt = true,
                                        .text = "max_tokens", .text_len = 10};
}

static void moe_make(session_data *d, size_t rounds)
{
    d->n = rounds * (1 + MOE_FANOUT) + 1;
    d->frames = calloc(d->n, sizeof *d->frames);
    d->blobs = malloc(d->n * BLOB_LEN);
    for (size_t i = 0; i < d->n * BLOB_LEN; i++) d->blobs[i] = (uint8_t)rnd();
    size_t k = 0;
    for (size_t r = 0; r < rounds; r++) {
        uint64_t request = 0x100000000ull + r * 7919;
        d->frames[k] = (app_frame){.msg = MOE_ROUTE, .sender = MOE_ROUTER, .request = request,
                                   .a32 = (uint32_t)(r * 3 + 1), .layer = (uint16_t)(r % 48),
                                   .blob = d->blobs + k * BLOB_LEN};
        k++;
        for (int e = 0; e < MOE_FANOUT; e++, k++) {
            app_frame *f = &d->frames[k];
            *f = (app_frame){.msg = MOE_EXPERT, .sender = MOE_EXPERTS, .request = request,
                             .expert = (uint8_t)(rnd() % 64),
                             .f = (float)(rnd() % 1024) / 1024.0f,
                             .blob = d->blobs + k * BLOB_LEN};
            if (e == 0 && r % 4 == 0) {
                f->has_opt = true;
                f->text = "capacity overflow, token dropped";
                f->text_len = strlen(f->text);
            }
        }
    }
    d->frames[k] = (app_frame){.msg = MOE_FINISH, .sender = MOE_ROUTER, .a32 = (uint32_t)rounds};
}

static void session_data_free(session_data *d)
{
    free(d->frames);
    free(d->blobs);
}

/* The hand-written side: application values -> hw_frame. */
static void hw_from_app(const app_frame *a, uint32_t seq, hw_frame *f)
{
    f->msg = a->msg;
    f->seq = seq;
    f->max_tokens = f->index = f->token = f->requests = a->a32;
    f->has_logprob = f->has_reason = f->has_note = a->has_opt;
    f->logprob = f->weight = a->f;
    f->text = (const uint8_t *)a->text;
    f->text_len = a->text_len;
    f->note = (const uint8_t *)a->text;
    f->note_len = a->text_len;
    f->request = a->request;
    f->layer = a->layer;
    f->expert = a->expert;
    f->blob = a->blob;
    f->blob_len = a->blob ? BLOB_LEN : 0;
}
/* ---------------------------------------------------------------------------------------------
 * The library side: plan, transition ids per frame, application values <-> wk_colloq_frame
 * ------------------------------------------------------------------------------------------- */
typedef struct lib_session {
    bool moe;
    wk_colloq_plan *plan;
    uint32_t role[2];  /* app sender -> role index */
    uint32_t *tid;     /* per frame: the transition its sender takes */
    const session_data *data;
} lib_session;

static void set_str(wk_colloq_value *v, const void *p, size_t n)
{
    v->as.s.ptr = (const uint8_t *)p;
    v->as.s.len = n;
    v->present = true;
}
static void set_u(wk_colloq_value *v, uint64_t u)
{
    v->as.u = u;
    v->present = true;
}
static void set_f(wk_colloq_value *v, float f)
{
    v->as.f = (double)f;
    v->present = true;
}

/* Field order is the declared order (checked in lib_setup). */
static void lib_from_app(const lib_session *ls, size_t i, uint64_t seq, wk_colloq_frame *f)
{
    const app_frame *a = &ls->data->frames[i];
    wk_colloq_frame_init(f, ls->plan, ls->tid[i], seq);
    wk_colloq_value *v = f->fields;
    if (!ls->moe) {
        switch (a->msg) {
        case TS_PROMPT: set_str(&v[0], a->text, a->text_len); set_u(&v[1], a->a32); break;
        case TS_TOKEN:
            set_u(&v[0], a->a32);
            set_str(&v[1], a->text, a->text_len);
            if (a->has_opt) set_f(&v[2], a->f);
            break;
        default: if (a->has_opt) set_str(&v[0], a->text, a->text_len); break;
        }
    } else {
        switch (a->msg) {
        case MOE_ROUTE:
            set_u(&v[0], a->request);
            set_u(&v[1], a->a32);
            set_u(&v[2], a->layer);
            set_str(&v[3], a->blob, BLOB_LEN);
            break;
        case MOE_EXPERT:
            set_u(&v[0], a->request);
            set_u(&v[1], a->expert);
            set_f(&v[2], a->f);
            set_str(&v[3], a->blob, BLOB_LEN);
            if (a->has_opt) set_str(&v[4], a->text, a->text_len);
            break;
        default: set_u(&v[0], a->a32); break;
        }
    }
}

static bool same_str(const wk_colloq_value *v, const void *p, size_t n)
{
    return v->present && v->as.s.len == n && memcmp(v->as.s.ptr, p, n) == 0;
}
static bool same_u(const wk_colloq_value *v, uint64_t u) { return v->present && v->as.u == u; }
static bool same_f(const wk_colloq_value *v, float f) { return v->present && v->as.f == (double)f; }

/* True when the received frame carries exactly frame i's values. */
static bool lib_matches(const lib_session *ls, size_t i, uint64_t seq, const wk_colloq_frame *f)
{
    const app_frame *a = &ls->data->frames[i];
    const wk_colloq_value *v = f->fields;
    if (f->transition != ls->tid[i] || f->seq != seq) return false;
    if (!ls->moe) {
        switch (a->msg) {
        case TS_PROMPT: return same_str(&v[0], a->text, a->text_len) && same_u(&v[1], a->a32);
        case TS_TOKEN:
            return same_u(&v[0], a->a32) && same_str(&v[1], a->text, a->text_len) &&
                   (a->has_opt ? same_f(&v[2], a->f) : !v[2].present);
        default: return a->has_opt ? same_str(&v[0], a->text, a->text_len) : !v[0].present;
        }
    }
    switch (a->msg) {
    case MOE_ROUTE:
        return same_u(&v[0], a->request) && same_u(&v[1], a->a32) && same_u(&v[2], a->layer) &&
               same_str(&v[3], a->blob, BLOB_LEN);
    case MOE_EXPERT:
        return same_u(&v[0], a->request) && same_u(&v[1], a->expert) && same_f(&v[2], a->f) &&
               same_str(&v[3], a->blob, BLOB_LEN) &&
               (a->has_opt ? same_str(&v[4], a->text, a->text_len) : !v[4].present);
    default: return same_u(&v[0], a->a32);
    }
}

static bool hw_matches(const app_frame *a, uint32_t seq, const hw_frame *f, bool moe)
{
    if (f->msg != a->msg || f->seq != seq) return false;
    if (!moe) {
        switch (a->msg) {
        case TS_PROMPT:
            return f->max_tokens == a->a32 && f->text_len == a->text_len &&
                   memcmp(f->text, a->text, a->text_len) == 0;
        case TS_TOKEN:
            return f->index == a->a32 && f->text_len == a->text_len &&
                   memcmp(f->text, a->text, a->text_len) == 0 && f->has_logprob == a->has_opt &&
                   (!a->has_opt || f->logprob == a->f);
        default:
            return f->has_reason == a->has_opt &&
                   (!a->has_opt ||
                    (f->text_len == a->text_len && memcmp(f->text, a->text, a->text_len) == 0));
        }
    }
    switch (a->msg) {
    case MOE_ROUTE:
        return f->request == a->request && f->token == a->a32 && f->layer == a->layer &&
               f->blob_len == BLOB_LEN && memcmp(f->blob, a->blob, BLOB_LEN) == 0;
    case MOE_EXPERT:
        return f->request == a->request && f->expert == a->expert && f->weight == a->f &&
               f->blob_len == BLOB_LEN && memcmp(f->blob, a->blob, BLOB_LEN) == 0 &&
               f->has_note == a->has_opt &&
               (!a->has_opt ||
                (f->note_len == a->text_len && memcmp(f->note, a->text, a->text_len) == 0));
    default: return f->requests == a->a32;
    }
}

static const char *const ts_fields[3][3] = {{"text", "max_tokens", NULL},
                                            {"index", "text", "logprob"},
                                            {"reason", NULL, NULL}};
static const char *const ts_msgs[3] = {"Prompt", "Token", "End"};
static const char *const moe_fields[3][5] = {{"request", "token", "layer", "hidden", NULL},
                                             {"request", "expert", "weight", "output", "note"},
                                             {"requests", NULL, NULL, NULL, NULL}};
static const char *const moe_msgs[3] = {"Route", "Expert", "Finish"};

static bool lib_setup(lib_session *ls, bool moe, const session_data *d)
{
    wk_error err;
    const char *conv = moe ? moe_conversation : ts_conversation;
    memset(ls, 0, sizeof *ls);
    ls->moe = moe;
    ls->data = d;
    if (wk_colloq_plan_compile(conv, strlen(conv), NULL, &ls->plan, &err) != WK_OK) {
        char buf[256];
        fail("compiling the %s conversation: %s", moe ? "moe" : "token-stream",
             wk_error_format(&err, buf, sizeof buf));
        return false;
    }
    const wk_colloq_plan *p = ls->plan;
    const char *roles[2] = {moe ? "router" : "client", moe ? "expert" : "server"};
    for (int r = 0; r < 2; r++) {
        int32_t x = wk_colloq_plan_role_find(p, roles[r], strlen(roles[r]));
        if (x < 0) return fail("no role %s", roles[r]), false;
        ls->role[r] = (uint32_t)x;
    }
    for (int m = 0; m < 3; m++) {
        const char *mn = moe ? moe_msgs[m] : ts_msgs[m];
        int32_t mi = wk_colloq_plan_message_find(p, mn, strlen(mn));
        if (mi < 0) return fail("no message %s", mn), false;
        for (int k = 0; k < 5; k++) {
            const char *fn = moe ? moe_fields[m][k] : (k < 3 ? ts_fields[m][k] : NULL);
            if (!fn) break;
            if (wk_colloq_message_field_find(&p->messages[mi], fn, strlen(fn)) != k)
                return fail("field %s.%s is not at index %d", mn, fn, k), false;
        }
    }
    ls->tid = malloc(d->n * sizeof *ls->tid);
    uint32_t state = p->initial;
    for (size_t i = 0; i < d->n; i++) {
        const char *mn = moe ? moe_msgs[d->frames[i].msg] : ts_msgs[d->frames[i].msg];
        int32_t mi = wk_colloq_plan_message_find(p, mn, strlen(mn));
        uint32_t t = wk_colloq_plan_transition_find(p, state, (uint32_t)mi, ls->role[d->frames[i].sender]);
        if (t == WK_COLLOQ_NO_TRANSITION) return fail("no transition for frame %zu", i), false;
        ls->tid[i] = t;
        state = p->transitions[t].to;
    }
    return true;
}

#ifdef WK_COLLOQ_BENCH_GENERATED
/* ---------------------------------------------------------------------------------------------
 * The generated side: application values -> the generated frame structs (what an application
 * using the generated codec fills), and the check that a received frame carries them.
 * ------------------------------------------------------------------------------------------- */
static inline void gen_ts_from_app(const app_frame *a, uint32_t t, bts_frame *f)
{
    f->transition = t;
    switch (a->msg) {
    case TS_PROMPT:
        f->as.Prompt.text.ptr = (const uint8_t *)a->text;
        f->as.Prompt.text.len = a->text_len;
        f->as.Prompt.max_tokens = a->a32;
        break;
    case TS_TOKEN:
        f->as.Token.index = a->a32;
        f->as.Token.text.ptr = (const uint8_t *)a->text;
        f->as.Token.text.len = a->text_len;
        f->as.Token.logprob = a->f;
        f->as.Token.present = a->has_opt ? BTS_Token_HAS_logprob : 0;
        break;
    default:
        f->as.End.reason.ptr = (const uint8_t *)a->text;
        f->as.End.reason.len = a->has_opt ? a->text_len : 0;
        f->as.End.present = a->has_opt ? BTS_End_HAS_reason : 0;
        break;
    }
}

static inline void gen_moe_from_app(const app_frame *a, uint32_t t, bmoe_frame *f)
{
    f->transition = t;
    switch (a->msg) {
    case MOE_ROUTE:
        f->as.Route.request = a->request;
        f->as.Route.token = a->a32;
        f->as.Route.layer = a->layer;
        f->as.Route.hidden.ptr = a->blob;
        f->as.Route.hidden.len = BLOB_LEN;
        break;
    case MOE_EXPERT:
        f->as.Expert.request = a->request;
        f->as.Expert.expert = a->expert;
        f->as.Expert.weight = a->f;
        f->as.Expert.output.ptr = a->blob;
        f->as.Expert.output.len = BLOB_LEN;
        f->as.Expert.note.ptr = (const uint8_t *)a->text;
        f->as.Expert.note.len = a->has_opt ? a->text_len : 0;
        f->as.Expert.present = a->has_opt ? BMOE_Expert_HAS_note : 0;
        break;
    default: f->as.Finish.requests = a->a32; break;
    }
}

static bool same_slice(const uint8_t *p, size_t n, const void *q, size_t m)
{
    return n == m && (n == 0 || memcmp(p, q, n) == 0);
}

static bool gen_ts_matches(const app_frame *a, uint32_t t, uint64_t seq, const bts_frame *f)
{
    if (f->transition != t || f->seq != seq) return false;
    switch (a->msg) {
    case TS_PROMPT:
        return same_slice(f->as.Prompt.text.ptr, f->as.Prompt.text.len, a->text, a->text_len) &&
               f->as.Prompt.max_tokens == a->a32;
    case TS_TOKEN:
        return f->as.Token.index == a->a32 &&
               same_slice(f->as.Token.text.ptr, f->as.Token.text.len, a->text, a->text_len) &&
               (f->as.Token.present == (a->has_opt ? BTS_Token_HAS_logprob : 0)) &&
               (!a->has_opt || f->as.Token.logprob == a->f);
    default:
        return a->has_opt ? f->as.End.present == BTS_End_HAS_reason &&
                                same_slice(f->as.End.reason.ptr, f->as.End.reason.len, a->text, a->text_len)
                          : f->as.End.present == 0;
    }
}

static bool gen_moe_matches(const app_frame *a, uint32_t t, uint64_t seq, const bmoe_frame *f)
{
    if (f->transition != t || f->seq != seq) return false;
    switch (a->msg) {
    case MOE_ROUTE:
        return f->as.Route.request == a->request && f->as.Route.token == a->a32 &&
               f->as.Route.layer == a->layer &&
               same_slice(f->as.Route.hidden.ptr, f->as.Route.hidden.len, a->blob, BLOB_LEN);
    case MOE_EXPERT:
        return f->as.Expert.request == a->request && f->as.Expert.expert == a->expert &&
               f->as.Expert.weight == a->f &&
               same_slice(f->as.Expert.output.ptr, f->as.Expert.output.len, a->blob, BLOB_LEN) &&
               (a->has_opt ? f->as.Expert.present == BMOE_Expert_HAS_note &&
                                 same_slice(f->as.Expert.note.ptr, f->as.Expert.note.len, a->text, a->text_len)
                           : f->as.Expert.present == 0);
    default: return f->as.Finish.requests == a->a32;
    }
}
#endif

static void lib_free(lib_session *ls)
{
    wk_colloq_plan_destroy(ls->plan);
    free(ls->tid);
}
/* ---------------------------------------------------------------------------------------------
 * compact_yajl: the compact envelope read by an event parser. One yajl handle, created once like
 * the library's decoders and reused (yajl_allow_multiple_values: the JSON lines are a stream of
 * values); callbacks record the
 * envelope's "t" and "seq" (raw number text) and the payload's members (key, kind, raw text or
 * string slice) without building a document; when the top-level object closes the members are
 * resolved against the transition's schedule into a wk_colloq_frame, which wk_colloq_session_check checks.
 * Strings (and numbers) borrow the line unless yajl had to unescape them, then they are copied into
 * a fixed scratch area; bytes are hex-decoded into it. Nothing here allocates per frame.
 * ------------------------------------------------------------------------------------------- */
enum { YK_NUM, YK_STR, YK_BOOL };
typedef struct yj_member {
    const uint8_t *key;
    size_t key_len;
    int kind;
    const uint8_t *val;
    size_t len;
    bool b;
} yj_member;

typedef struct yj_decoder {
    yajl_handle h;
    const wk_colloq_plan *plan;
    const uint8_t *line;
    size_t line_len;
    uint8_t scratch[2 * FRAME_CAP];
    size_t used;
    int depth, top_key; /* top_key: 1 t, 2 seq, 3 payload */
    bool bad, done, have_payload;
    const uint8_t *t_txt, *seq_txt;
    size_t t_len, seq_len;
    const uint8_t *pkey;
    size_t pkey_len;
    yj_member m[WK_COLLOQ_MAX_FIELDS];
    size_t nm;
} yj_decoder;

/* Borrows p[0..n) when it lies in the line, else copies it into the scratch area. */
static const uint8_t *yj_keep(yj_decoder *y, const unsigned char *p, size_t n)
{
    if (p >= y->line && p + n <= y->line + y->line_len) return p;
    if (sizeof y->scratch - y->used < n) {
        y->bad = true;
        return p;
    }
    uint8_t *d = y->scratch + y->used;
    memcpy(d, p, n);
    y->used += n;
    return d;
}

static int yj_value(yj_decoder *y, int kind, const unsigned char *p, size_t n, bool b)
{
    if (y->depth == 1) {
        if (kind != YK_NUM || y->top_key == 3) y->bad = true;
        else if (y->top_key == 1) { y->t_txt = yj_keep(y, p, n); y->t_len = n; }
        else if (y->top_key == 2) { y->seq_txt = yj_keep(y, p, n); y->seq_len = n; }
        y->top_key = 0;
        return 1;
    }
    if (y->depth != 2 || !y->pkey || y->nm == WK_COLLOQ_MAX_FIELDS) {
        y->bad = true;
        return 1;
    }
    yj_member *m = &y->m[y->nm++];
    m->key = y->pkey;
    m->key_len = y->pkey_len;
    m->kind = kind;
    m->val = kind == YK_BOOL ? NULL : yj_keep(y, p, n);
    m->len = n;
    m->b = b;
    y->pkey = NULL;
    return 1;
}
static int yj_null(void *ctx)
{
    ((yj_decoder *)ctx)->bad = true; /* never null: an absent optional field is omitted */
    return 1;
}
static int yj_boolean(void *ctx, int v) { return yj_value(ctx, YK_BOOL, NULL, 0, v != 0); }
static int yj_number(void *ctx, const char *s, size_t n)
{
    return yj_value(ctx, YK_NUM, (const unsigned char *)s, n, false);
}
static int yj_string(void *ctx, const unsigned char *s, size_t n)
{
    return yj_value(ctx, YK_STR, s, n, false);
}
static int yj_start_map(void *ctx)
{
    yj_decoder *y = ctx;
    y->depth++;
    if (y->depth == 1) {
        y->used = 0;
        y->nm = 0;
        y->bad = y->done = y->have_payload = false;
        y->t_txt = y->seq_txt = NULL;
        y->top_key = 0;
    } else if (y->depth == 2 && y->top_key == 3) {
        y->have_payload = true;
        y->top_key = 0;
    } else {
        y->bad = true;
    }
    return 1;
}
static int yj_map_key(void *ctx, const unsigned char *k, size_t n)
{
    yj_decoder *y = ctx;
    if (y->depth == 1) {
        if (n == 1 && k[0] == 't' && !y->t_txt) y->top_key = 1;
        else if (n == 3 && memcmp(k, "seq", 3) == 0 && !y->seq_txt) y->top_key = 2;
        else if (n == 7 && memcmp(k, "payload", 7) == 0 && !y->have_payload) y->top_key = 3;
        else y->bad = true; /* unknown or repeated envelope key */
    } else if (y->depth == 2) {
        y->pkey = yj_keep(y, k, n);
        y->pkey_len = n;
    }
    return 1;
}
static int yj_end_map(void *ctx)
{
    yj_decoder *y = ctx;
    if (--y->depth == 0) y->done = true;
    return 1;
}
static int yj_array(void *ctx)
{
    ((yj_decoder *)ctx)->bad = true;
    return 1;
}
static const yajl_callbacks yj_callbacks = {yj_null,   yj_boolean,   NULL,       NULL,
                                            yj_number, yj_string,    yj_start_map, yj_map_key,
                                            yj_end_map, yj_array,    yj_array};

static bool yj_init(yj_decoder *y, const wk_colloq_plan *plan)
{
    memset(y, 0, sizeof *y);
    y->plan = plan;
    y->h = yajl_alloc(&yj_callbacks, NULL, y);
    if (!y->h) return false;
    yajl_config(y->h, yajl_allow_multiple_values, 1);
    return true;
}
static void yj_free(yj_decoder *y)
{
    if (y->h) yajl_free(y->h);
    y->h = NULL;
}

/* A JSON integer (no fraction or exponent) exactly: false when it is not one or overflows. */
static bool yj_uint(const uint8_t *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}
static bool yj_int(const uint8_t *s, size_t n, int64_t *out)
{
    bool neg = n && s[0] == '-';
    uint64_t u;
    if (!yj_uint(s + neg, n - neg, &u)) return false;
    if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return true;
}
static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One member into its field; false when it does not fit the field's type. */
static bool yj_field(yj_decoder *y, const wk_colloq_field *fd, const yj_member *m,
                     wk_colloq_value *v)
{
    static const uint64_t umax[] = {0, UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX};
    static const int64_t imin[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    static const int64_t imax[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    switch (fd->type) {
    case WK_COLLOQ_BOOL:
        if (m->kind != YK_BOOL) return false;
        v->as.b = m->b;
        break;
    case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
        if (m->kind != YK_NUM || !yj_uint(m->val, m->len, &v->as.u) ||
            v->as.u > umax[fd->type - WK_COLLOQ_BOOL])
            return false;
        break;
    case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64: {
        unsigned k = (unsigned)(fd->type - WK_COLLOQ_I8);
        if (m->kind != YK_NUM || !yj_int(m->val, m->len, &v->as.i) || v->as.i < imin[k] ||
            v->as.i > imax[k])
            return false;
        break;
    }
    case WK_COLLOQ_F32: case WK_COLLOQ_F64: {
        char num[128];
        if (m->kind != YK_NUM || m->len >= sizeof num) return false;
        memcpy(num, m->val, m->len);
        num[m->len] = 0;
        if (fd->type == WK_COLLOQ_F32) {
            float x = strtof(num, NULL);
            if (isinf(x)) return false;
            v->as.f = (double)x;
        } else {
            v->as.f = strtod(num, NULL);
            if (isinf(v->as.f)) return false;
        }
        break;
    }
    case WK_COLLOQ_STRING: /* yajl validated the UTF-8 */
        if (m->kind != YK_STR) return false;
        v->as.s.ptr = m->val;
        v->as.s.len = m->len;
        break;
    default: { /* bytes: hex */
        if (m->kind != YK_STR || m->len % 2 || sizeof y->scratch - y->used < m->len / 2)
            return false;
        uint8_t *d = y->scratch + y->used;
        for (size_t i = 0; i < m->len / 2; i++) {
            int hi = hexval(m->val[2 * i]), lo = hexval(m->val[2 * i + 1]);
            if (hi < 0 || lo < 0) return false;
            d[i] = (uint8_t)(hi << 4 | lo);
        }
        y->used += m->len / 2;
        v->as.s.ptr = d;
        v->as.s.len = m->len / 2;
        break;
    }
    }
    v->present = true;
    return true;
}

/* Decodes one compact line (with its '\n') into *f: WK_OK (payload problems in f->payload_error)
 * or WK_ERR_COLLOQ_MALFORMED_PAYLOAD for an envelope that cannot be read. */
static wk_code yj_decode(yj_decoder *y, const uint8_t *line, size_t len, wk_colloq_frame *f)
{
    y->line = line;
    y->line_len = len;
    y->done = false;
    if (yajl_parse(y->h, line, len) != yajl_status_ok || !y->done || y->bad || !y->t_txt ||
        !y->seq_txt || !y->have_payload)
        return WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
    uint64_t t, seq;
    if (!yj_uint(y->t_txt, y->t_len, &t) || !yj_uint(y->seq_txt, y->seq_len, &seq))
        return WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
    const wk_colloq_plan *p = y->plan;
    if (t >= p->transition_count) {
        memset(f, 0, offsetof(wk_colloq_frame, fields));
        f->transition = WK_COLLOQ_NO_TRANSITION;
        f->seq = seq;
        return WK_OK;
    }
    wk_colloq_frame_init(f, p, (uint32_t)t, seq);
    const wk_colloq_message *msg = wk_colloq_plan_transition_message_get(p, (uint32_t)t);
    for (size_t k = 0; k < y->nm; k++) {
        const yj_member *m = &y->m[k];
        int32_t i = wk_colloq_message_field_find(msg, (const char *)m->key, m->key_len);
        if (i < 0 || f->fields[i].present || !yj_field(y, &msg->fields[i], m, &f->fields[i])) {
            f->payload_error = WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
            return WK_OK;
        }
    }
    for (uint32_t i = 0; i < msg->field_count; i++)
        if (!msg->fields[i].optional && !f->fields[i].present) {
            f->payload_error = WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
            return WK_OK;
        }
    f->payload_len = wk_colloq_payload_size(p, (uint32_t)t, f);
    if (f->payload_len > msg->max_payload) f->payload_error = WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE;
    return WK_OK;
}
/* ---------------------------------------------------------------------------------------------
 * The timed operations
 * ------------------------------------------------------------------------------------------- */
static volatile uint64_t g_sink;

typedef struct run_ctx {
    int variant;
    bool moe, verify;
    const session_data *d;
    lib_session *ls;
    wk_colloq_decoder *dec; /* reference, compact */
    yj_decoder *yj;         /* compact_yajl */
    wk_colloq_wire wire;    /* what the sender writes */
    double bytes;           /* wire bytes of the last operation */
    /* isolated */
    uint8_t frame[FRAME_CAP];
    size_t frame_len, frame_index;
    wk_colloq_session s0, s; /* isolated: the receiver's state before the frame; the one checked */
    hw_session h0;
    uint8_t buf[FRAME_CAP];
    wk_colloq_frame send, recv;
#ifdef WK_COLLOQ_BENCH_GENERATED
    union {
        bts_frame ts;
        bmoe_frame moe;
    } gsend, grecv;
    bts_session gs0; /* isolated: the receiver's state before the frame */
#endif
} run_ctx;

/* Decodes buf[0..n) with the variant's reader into c->recv; false on anything unexpected. */
static inline bool lib_decode(run_ctx *c, const uint8_t *buf, size_t n)
{
    wk_error err;
    wk_in in = {buf, n, 0};
    switch (c->variant) {
    case V_BINARY:
        return wk_colloq_binary_decode(c->ls->plan, &in, &c->recv, &err) == WK_DONE && in.pos == n;
    case V_YAJL: return yj_decode(c->yj, buf, n, &c->recv) == WK_OK;
    default: return wk_colloq_decoder_decode(c->dec, &in, &c->recv, &err) == WK_DONE && in.pos == n;
    }
}

static void op_exchange(void *ctx)
{
    run_ctx *c = ctx;
    const session_data *d = c->d;
    uint64_t sink = 0;
    size_t bytes = 0;
    if (c->variant == V_HW) {
        hw_session s = {0, 0};
        hw_frame f, r;
        for (size_t i = 0; i < d->n; i++) {
            const app_frame *a = &d->frames[i];
            hw_from_app(a, (uint32_t)i, &f);
            size_t len = c->moe ? hw_moe_encode(&f, c->buf) : hw_ts_encode(&f, c->buf);
            int rc = c->moe ? hw_moe_receive(&s, a->sender, c->buf, len, &r)
                            : hw_ts_receive(&s, a->sender, c->buf, len, &r);
            if (rc != HW_OK) return fail("hand-written frame %zu refused (%d)", i, rc);
            if (c->verify && !hw_matches(a, (uint32_t)i, &r, c->moe))
                return fail("hand-written frame %zu differs", i);
            sink += r.seq + r.text_len + r.blob_len;
            bytes += len;
        }
        if (s.state != TS_DONE) return fail("hand-written session did not finish");
    } else {
        const lib_session *ls = c->ls;
        wk_colloq_session s;
        wk_error err;
        wk_colloq_session_init(&s, ls->plan);
        for (size_t i = 0; i < d->n; i++) {
            lib_from_app(ls, i, i, &c->send);
            wk_out out = {c->buf, sizeof c->buf, 0};
            if (wk_colloq_frame_encode(ls->plan, c->wire, &c->send, &out, &err) != WK_DONE)
                return fail("%s: encoding frame %zu: %s", v_key[c->variant], i, err.msg);
            if (!lib_decode(c, c->buf, out.pos))
                return fail("%s: decoding frame %zu failed", v_key[c->variant], i);
            if (wk_colloq_session_check(&s, &c->recv, ls->role[d->frames[i].sender], &err) != WK_OK)
                return fail("%s: frame %zu refused: %s", v_key[c->variant], i, err.msg);
            if (c->verify && !lib_matches(ls, i, i, &c->recv))
                return fail("%s: frame %zu differs", v_key[c->variant], i);
            sink += c->recv.seq + c->recv.field_count;
            bytes += out.pos;
        }
        if (!s.finished) return fail("%s: session did not finish", v_key[c->variant]);
    }
    c->bytes = (double)bytes;
    g_sink += sink;
}

#ifdef WK_COLLOQ_BENCH_GENERATED
/* The generated variant: the application fills the generated structs, the sender's
 * <prefix>_send checks its transition against its session and writes the frame, the receiver's
 * <prefix>_receive decodes and checks it (the same checks as the generic codec). */
static void op_gen_exchange(void *ctx)
{
    run_ctx *c = ctx;
    const session_data *d = c->d;
    const lib_session *ls = c->ls;
    uint64_t sink = 0;
    size_t bytes = 0;
    wk_error err;
    if (!c->moe) {
        bts_session tx, rx;
        bts_frame fs, fr; /* the application's frames on its stack, as the hand-written variant's */
        bts_session_init(&tx);
        bts_session_init(&rx);
        for (size_t i = 0; i < d->n; i++) {
            const app_frame *a = &d->frames[i];
            uint32_t role = ls->role[a->sender];
            gen_ts_from_app(a, ls->tid[i], &fs);
            wk_out out = {c->buf, sizeof c->buf, 0};
            if (bts_send(&tx, role, &fs, &out, &err) != WK_DONE)
                return fail("generated: sending frame %zu: %s", i, err.msg);
            wk_in in = {c->buf, out.pos, 0};
            if (bts_receive(&rx, role, &in, &fr, &err) != WK_DONE || in.pos != out.pos)
                return fail("generated: frame %zu refused: %s", i, err.msg);
            if (c->verify && !gen_ts_matches(a, ls->tid[i], i, &fr))
                return fail("generated: frame %zu differs", i);
            sink += fr.seq + fr.transition;
            bytes += out.pos;
        }
        if (!rx.finished || !tx.finished) return fail("generated: session did not finish");
    } else {
        bmoe_session tx, rx;
        bmoe_frame fs, fr;
        bmoe_session_init(&tx);
        bmoe_session_init(&rx);
        for (size_t i = 0; i < d->n; i++) {
            const app_frame *a = &d->frames[i];
            uint32_t role = ls->role[a->sender];
            gen_moe_from_app(a, ls->tid[i], &fs);
            wk_out out = {c->buf, sizeof c->buf, 0};
            if (bmoe_send(&tx, role, &fs, &out, &err) != WK_DONE)
                return fail("generated: sending frame %zu: %s", i, err.msg);
            wk_in in = {c->buf, out.pos, 0};
            if (bmoe_receive(&rx, role, &in, &fr, &err) != WK_DONE || in.pos != out.pos)
                return fail("generated: frame %zu refused: %s", i, err.msg);
            if (c->verify && !gen_moe_matches(a, ls->tid[i], i, &fr))
                return fail("generated: frame %zu differs", i);
            sink += fr.seq + fr.transition;
            bytes += out.pos;
        }
        if (!rx.finished || !tx.finished) return fail("generated: session did not finish");
    }
    c->bytes = (double)bytes;
    g_sink += sink;
}

static void op_gen_isolated(void *ctx)
{
    run_ctx *c = ctx;
    bts_session s = c->gs0;
    wk_error err;
    wk_in in = {c->frame, c->frame_len, 0};
    if (bts_receive(&s, c->ls->role[TS_SERVER], &in, &c->grecv.ts, &err) != WK_DONE)
        return fail("generated: isolated frame refused: %s", err.msg);
    if (c->verify && !gen_ts_matches(&c->d->frames[c->frame_index], c->ls->tid[c->frame_index], c->frame_index,
                                     &c->grecv.ts))
        return fail("generated: isolated frame differs");
    g_sink += c->grecv.ts.seq + c->grecv.ts.transition;
}
#endif

static void op_isolated(void *ctx)
{
    run_ctx *c = ctx;
    if (c->variant == V_HW) {
        hw_session s = c->h0;
        hw_frame r;
        int rc = hw_ts_receive(&s, TS_SERVER, c->frame, c->frame_len, &r);
        if (rc != HW_OK) return fail("hand-written isolated frame refused (%d)", rc);
        if (c->verify && !hw_matches(&c->d->frames[c->frame_index], (uint32_t)c->frame_index, &r,
                                     false))
            return fail("hand-written isolated frame differs");
        g_sink += r.seq + r.text_len;
    } else {
        /* the receiver's state before the frame: only what a successful check moves is reset
         * (copying the whole session, its kept wk_error included, would time the copy) */
        wk_colloq_session *s = &c->s;
        s->state = c->s0.state;
        s->next_seq = c->s0.next_seq;
        s->finished = c->s0.finished;
        wk_error err;
        if (!lib_decode(c, c->frame, c->frame_len))
            return fail("%s: decoding the isolated frame failed", v_key[c->variant]);
        if (wk_colloq_session_check(s, &c->recv, c->ls->role[TS_SERVER], &err) != WK_OK)
            return fail("%s: isolated frame refused: %s", v_key[c->variant], err.msg);
        if (c->verify && !lib_matches(c->ls, c->frame_index, c->frame_index, &c->recv))
            return fail("%s: isolated frame differs", v_key[c->variant]);
        g_sink += c->recv.seq + c->recv.field_count;
    }
}

static const wk_colloq_wire v_wire[NV] = {WK_COLLOQ_WIRE_REFERENCE, WK_COLLOQ_WIRE_COMPACT,
                                          WK_COLLOQ_WIRE_COMPACT, WK_COLLOQ_WIRE_BINARY,
                                          WK_COLLOQ_WIRE_BINARY, WK_COLLOQ_WIRE_BINARY};

static bool ctx_init(run_ctx *c, int v, bool moe, const session_data *d, lib_session *ls)
{
    wk_error err;
    c->variant = v;
    c->moe = moe;
    c->d = d;
    c->ls = ls;
    c->wire = v_wire[v];
    if (v == V_REF || v == V_COMPACT) {
        c->dec = wk_colloq_decoder_create(&(wk_colloq_decoder_params){ls->plan, c->wire, NULL}, &err);
        if (!c->dec) return fail("decoder_new: %s", err.msg), false;
    }
    if (v == V_YAJL) {
        c->yj = malloc(sizeof *c->yj);
        if (!c->yj || !yj_init(c->yj, ls->plan)) return fail("yajl_alloc failed"), false;
    }
#ifdef WK_COLLOQ_BENCH_GENERATED
    /* the generated code must be that of the plan the other variants compiled */
    if (v == V_GEN && !(moe ? bmoe_plan_matches(ls->plan) : bts_plan_matches(ls->plan)))
        return fail("the generated %s codec is not of the benchmark's plan (bench/colloq/*.json and "
                    "the conversation in colloq_bench_core.c differ)", moe ? "MoE" : "token-stream"),
               false;
#endif
    return true;
}

static void ctx_free(run_ctx *c)
{
    if (c->dec) wk_colloq_decoder_destroy(c->dec);
    if (c->yj) {
        yj_free(c->yj);
        free(c->yj);
    }
}

/* The isolated frame: Token frame `index` of the token-stream session, encoded once. */
static bool isolated_setup(run_ctx *c, size_t index)
{
    wk_error err;
    c->frame_index = index;
    if (c->variant == V_HW) {
        hw_frame f;
        hw_from_app(&c->d->frames[index], (uint32_t)index, &f);
        c->frame_len = hw_ts_encode(&f, c->frame);
        c->h0 = (hw_session){TS_STREAMING, (uint32_t)index};
#ifdef WK_COLLOQ_BENCH_GENERATED
    } else if (c->variant == V_GEN) {
        gen_ts_from_app(&c->d->frames[index], c->ls->tid[index], &c->gsend.ts);
        c->gsend.ts.seq = index;
        wk_out out = {c->frame, sizeof c->frame, 0};
        if (bts_frame_encode(&c->gsend.ts, &out, &err) != WK_DONE)
            return fail("generated: encoding the isolated frame: %s", err.msg), false;
        c->frame_len = out.pos;
        bts_session_init(&c->gs0);
        c->gs0.state = c->ls->plan->transitions[c->ls->tid[index]].from;
        c->gs0.next_seq = index;
#endif
    } else {
        lib_from_app(c->ls, index, index, &c->send);
        wk_out out = {c->frame, sizeof c->frame, 0};
        if (wk_colloq_frame_encode(c->ls->plan, c->wire, &c->send, &out, &err) != WK_DONE)
            return fail("encoding the isolated frame: %s", err.msg), false;
        c->frame_len = out.pos;
        wk_colloq_session_init(&c->s0, c->ls->plan);
        c->s0.state = c->ls->plan->transitions[c->ls->tid[index]].from;
        c->s0.next_seq = index;
        c->s = c->s0;
    }
    c->bytes = (double)c->frame_len;
    return true;
}
/* ---------------------------------------------------------------------------------------------
 * Report
 * ------------------------------------------------------------------------------------------- */
typedef struct gate {
    const char *key, *what, *limit_text, *aim_text;
    double value, limit, aim;
    bool at_most;    /* value <= limit (ratios of time), else value >= limit (speed-ups) */
    bool available;  /* measured in this build */
    bool met;
} gate;

enum { G_GEN_WARM, G_BIN_WARM2, G_GEN_MOE, G_GEN_ISO, G_GEN_ALLOCS, G_BIN_WARM, G_BIN_ISO, G_BIN_ALLOCS, NG };

typedef struct gates {
    gate g[NG];
    bool allocs_measured;
} gates;

static void print_allocs(FILE *out, double a)
{
    if (a < 0 || a != a) fprintf(out, "n/a");
    else fprintf(out, "%.2f", a);
}

static void print_x(FILE *out, double x)
{
    if (x != x) fprintf(out, "n/a");
    else fprintf(out, "%.2fx", x);
}

static void set_gate(gate *g, const char *key, const char *what, double value, double limit, double aim,
                     bool at_most, bool available, const char *limit_text, const char *aim_text)
{
    g->key = key;
    g->what = what;
    g->value = value;
    g->limit = limit;
    g->aim = aim;
    g->at_most = at_most;
    g->available = available && value == value;
    g->met = g->available && (at_most ? value <= limit : value >= limit);
    g->limit_text = limit_text;
    g->aim_text = aim_text;
}

/* Allocation gate of variant v over the three workloads. */
static void set_alloc_gate(gate *g, const char *key, const char *what, const workload *w, int v, bool measured,
                           bool available)
{
    bool zero = true;
    for (int k = 0; k < 3; k++)
        if (w[k].allocs_per_frame[v] != 0) zero = false;
    set_gate(g, key, what, 0, 0, 0, true, available && measured, "0", "0");
    g->met = available && measured && zero;
}

static void compute_gates(gates *G, const workload *w)
{
    bool gen = w[1].op[V_GEN] != NULL;
    G->allocs_measured = wk_colloq_bench_alloc_counting();
    set_gate(&G->g[G_GEN_WARM], "warm_generated_vs_handwritten", "generated warm exchange / hand-written",
             w[1].vs_hw[V_GEN], 1.10, 1.0, true, gen, "<= 1.10x", "1.00x");
    set_gate(&G->g[G_BIN_WARM2], "warm_binary_vs_handwritten_issue19", "generic binary warm exchange / hand-written",
             w[1].vs_hw[V_BINARY], 2.0, 2.0, true, true, "<= 2.00x", "-");
    set_gate(&G->g[G_GEN_MOE], "moe_generated_vs_handwritten", "generated MoE fan-out / hand-written",
             w[2].vs_hw[V_GEN], 1.25, 1.25, true, gen, "<= 1.25x", "-");
    set_gate(&G->g[G_GEN_ISO], "isolated_generated_speedup_vs_compact",
             "generated isolated transition speed-up over compact", w[0].generated_speedup[V_COMPACT], 3.0, 3.0,
             false, gen, ">= 3x", "-");
    set_alloc_gate(&G->g[G_GEN_ALLOCS], "generated_allocs_per_frame_zero",
                   "allocations per generated frame (isolated, warm, moe)", w, V_GEN, G->allocs_measured, gen);
    set_gate(&G->g[G_BIN_WARM], "warm_binary_vs_handwritten", "RFC-0005 criterion 3: binary warm exchange / hand-written",
             w[1].vs_hw[V_BINARY], 1.25, 1.10, true, true, "<= 1.25x", "1.10x");
    set_gate(&G->g[G_BIN_ISO], "isolated_binary_speedup_vs_compact",
             "RFC-0005 criterion 4: binary isolated transition speed-up over compact", w[0].binary_speedup[V_COMPACT],
             1.5, 3.0, false, true, ">= 1.5x", "3x");
    set_alloc_gate(&G->g[G_BIN_ALLOCS], "binary_allocs_per_frame_zero",
                   "allocations per binary frame (isolated, warm, moe)", w, V_BINARY, G->allocs_measured, true);
}

static void report_md(FILE *out, const workload *w, int nw, const gates *G,
                      const wk_colloq_bench_options *o, int reps, size_t tokens, size_t rounds)
{
    fprintf(out, "## Colloq plan codec (RFC-0005)\n\n");
    fprintf(out, "%d repetitions%s; token-stream session: %zu tokens; MoE: %zu rounds of 1 Route + "
                 "%d Expert frames; ns per frame are medians, ratios medians of per-repetition "
                 "ratios.\n",
            reps, o->quick ? " (--quick: 2 ms timings, not a measurement)" : ", 40 ms timings",
            tokens, rounds, MOE_FANOUT);
    for (int k = 0; k < nw; k++) {
        fprintf(out, "\n### %s\n\n", w[k].title);
        fprintf(out, "| variant | ns/frame | frames/s | bytes/frame | allocs/frame | time / "
                     "hand-written | binary speed-up | generated speed-up |\n"
                     "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int v = 0; v < NV; v++) {
            if (!w[k].op[v]) {
                fprintf(out, "| %s | n/a | n/a | n/a | n/a | n/a | n/a | n/a |\n", v_label[v]);
                continue;
            }
            fprintf(out, "| %s | %.1f | %.0f | %.1f | ", v_label[v], w[k].ns[v],
                    1e9 / w[k].ns[v], w[k].bytes_per_frame[v]);
            print_allocs(out, w[k].allocs_per_frame[v]);
            fprintf(out, " | ");
            print_x(out, w[k].vs_hw[v]);
            fprintf(out, " | ");
            print_x(out, w[k].binary_speedup[v]);
            fprintf(out, " | ");
            print_x(out, w[k].generated_speedup[v]);
            fprintf(out, " |\n");
        }
    }
    fprintf(out, "\n### Gates\n\n| gate | measured | limit | aim | result |\n|---|---:|---:|---:|---|\n");
    for (int i = 0; i < NG; i++) {
        const gate *g = &G->g[i];
        fprintf(out, "| %s | ", g->what);
        if (i == G_GEN_ALLOCS || i == G_BIN_ALLOCS) {
            int v = i == G_GEN_ALLOCS ? V_GEN : V_BINARY;
            for (int k = 0; k < nw; k++) {
                print_allocs(out, w[k].allocs_per_frame[v]);
                fprintf(out, k + 1 < nw ? ", " : "");
            }
        } else {
            print_x(out, g->value);
        }
        fprintf(out, " | %s | %s | %s |\n", g->limit_text, g->aim_text,
                !g->available ? (i == G_GEN_ALLOCS || i == G_BIN_ALLOCS) && w[1].op[V_GEN] ? "not measured (sanitizer build)"
                                                                                       : "n/a (not in this build)"
                : g->met ? "met" : "MISSED");
    }
    fprintf(out, "\nThe honest alternative (compact read by yajl, no document): binary is %.2fx "
                 "faster on the isolated transition, %.2fx on the warm exchange, %.2fx on the "
                 "MoE fan-out; json-c compact: %.2fx, %.2fx, %.2fx.\n",
            w[0].binary_speedup[V_YAJL], w[1].binary_speedup[V_YAJL], w[2].binary_speedup[V_YAJL],
            w[0].binary_speedup[V_COMPACT], w[1].binary_speedup[V_COMPACT],
            w[2].binary_speedup[V_COMPACT]);
    if (o->quick) fprintf(out, "\n(--quick: timings too short to publish.)\n");
}

static void json_num(FILE *out, double x)
{
    if (x != x || x == INFINITY || x == -INFINITY) fprintf(out, "null");
    else fprintf(out, "%.6g", x);
}

static void json_obj(FILE *out, const workload *w, const char *name, const double *vals, bool allocs)
{
    fprintf(out, "\"%s\":{", name);
    for (int v = 0; v < NV; v++) {
        fprintf(out, "%s\"%s\":", v ? "," : "", v_key[v]);
        if (!w->op[v] || (allocs && vals[v] < 0)) fprintf(out, "null");
        else json_num(out, vals[v]);
    }
    fprintf(out, "}");
}

static void report_json(FILE *out, const workload *w, int nw, const gates *G,
                        const wk_colloq_bench_options *o, int reps, size_t tokens, size_t rounds)
{
    fprintf(out, "{");
    for (int k = 0; k < nw; k++) {
        double fps[NV];
        for (int v = 0; v < NV; v++) fps[v] = 1e9 / w[k].ns[v];
        fprintf(out, "\"%s\":{\"frames\":%.0f,", w[k].key, w[k].frames_per_op);
        json_obj(out, &w[k], "ns_per_frame", w[k].ns, false);
        fprintf(out, ",");
        json_obj(out, &w[k], "frames_per_second", fps, false);
        fprintf(out, ",");
        json_obj(out, &w[k], "bytes_per_frame", w[k].bytes_per_frame, false);
        fprintf(out, ",");
        json_obj(out, &w[k], "allocs_per_frame", w[k].allocs_per_frame, true);
        fprintf(out, ",");
        json_obj(out, &w[k], "time_vs_handwritten", w[k].vs_hw, false);
        fprintf(out, ",");
        json_obj(out, &w[k], "binary_speedup", w[k].binary_speedup, false);
        fprintf(out, ",");
        json_obj(out, &w[k], "generated_speedup", w[k].generated_speedup, false);
        fprintf(out, ",");
        /* each variant with its own figures (issue 19: "generated" with ns_per_frame,
         * allocs_per_frame, time_vs_handwritten) */
        for (int v = 0; v < NV; v++) {
            fprintf(out, "\"%s\":", v_key[v]);
            if (!w[k].op[v]) {
                fprintf(out, "null,");
                continue;
            }
            fprintf(out, "{\"ns_per_frame\":");
            json_num(out, w[k].ns[v]);
            fprintf(out, ",\"allocs_per_frame\":");
            if (w[k].allocs_per_frame[v] < 0) fprintf(out, "null");
            else json_num(out, w[k].allocs_per_frame[v]);
            fprintf(out, ",\"time_vs_handwritten\":");
            json_num(out, w[k].vs_hw[v]);
            fprintf(out, ",\"bytes_per_frame\":");
            json_num(out, w[k].bytes_per_frame[v]);
            fprintf(out, "},");
        }
        fprintf(out, "\"workload\":\"%s\"},", w[k].key);
    }
    fprintf(out, "\"gates\":{");
    for (int i = 0; i < NG; i++) {
        const gate *g = &G->g[i];
        fprintf(out, "%s\"%s\":{", i ? "," : "", g->key);
        if (i != G_GEN_ALLOCS && i != G_BIN_ALLOCS) {
            fprintf(out, "\"value\":");
            json_num(out, g->value);
            fprintf(out, ",\"limit\":%.4g,\"aim\":%.4g,", g->limit, g->aim);
        }
        fprintf(out, "\"met\":%s}", !g->available ? "null" : g->met ? "true" : "false");
    }
    fprintf(out, "},");
    fprintf(out, "\"reps\":%d,\"quick\":%s,\"tokens\":%zu,\"moe_rounds\":%zu,\"moe_fanout\":%d}\n",
            reps, o->quick ? "true" : "false", tokens, rounds, MOE_FANOUT);
}
/* ---------------------------------------------------------------------------------------------
 * Run
 * ------------------------------------------------------------------------------------------- */
int wk_colloq_bench_run(const wk_colloq_bench_options *o, FILE *out, FILE *log)
{
    g_log = log;
    g_failed = false;
    int reps = o->reps > 0 ? o->reps : o->quick ? 3 : 11;
    if (reps > MAX_REPS) reps = MAX_REPS;
    double min_seconds = o->quick ? 0.002 : 0.04;
    size_t tokens = o->quick ? 100 : 1000, rounds = o->quick ? 20 : 100;
    rng_state = 0xc011044ull;

    session_data ts, moe;
    ts_make(&ts, tokens);
    moe_make(&moe, rounds);
    lib_session ls_ts, ls_moe;
    memset(&ls_ts, 0, sizeof ls_ts);
    memset(&ls_moe, 0, sizeof ls_moe);
    run_ctx *ctx = calloc(3 * NV, sizeof *ctx);
    workload w[3];
    memset(w, 0, sizeof w);
    w[0].key = "isolated";
    w[0].title = "Isolated checked transition (decode + check one Token frame)";
    w[1].key = "warm";
    w[2].key = "moe";
    char t1[160], t2[160];
    snprintf(t1, sizeof t1,
             "Warm exchange (token-stream session: Prompt, %zu Tokens, End; encode + decode + "
             "check every frame)", tokens);
    snprintf(t2, sizeof t2,
             "MoE fan-out (%zu x (1 Route -> %d Expert frames) + Finish; encode + decode + check "
             "every frame)", rounds, MOE_FANOUT);
    w[1].title = t1;
    w[2].title = t2;
    int rc = 1;
    if (!ctx || !lib_setup(&ls_ts, false, &ts) || !lib_setup(&ls_moe, true, &moe)) goto done;
    for (int k = 0; k < 3; k++) {
        w[k].frames_per_op = k == 0 ? 1.0 : (double)(k == 1 ? ts.n : moe.n);
        for (int v = 0; v < NV; v++) {
            run_ctx *c = &ctx[k * NV + v];
            if (!ctx_init(c, v, k == 2, k == 2 ? &moe : &ts, k == 2 ? &ls_moe : &ls_ts)) goto done;
#ifdef WK_COLLOQ_BENCH_GENERATED
            const op_fn gen_op = k == 0 ? op_gen_isolated : op_gen_exchange;
#else
            const op_fn gen_op = NULL; /* this build (the CLI's) has no generated code */
#endif
            if (v == V_GEN && !gen_op) {
                w[k].op[v] = NULL;
                w[k].bytes_per_frame[v] = NAN;
                continue;
            }
            if (k == 0 && !isolated_setup(c, 18)) goto done;
            w[k].op[v] = v == V_GEN ? gen_op : k == 0 ? op_isolated : op_exchange;
            w[k].ctx[v] = c;
            /* correctness, outside the timed region */
            c->verify = true;
            w[k].op[v](c);
            c->verify = false;
            if (g_failed) goto done;
            w[k].bytes_per_frame[v] = c->bytes / w[k].frames_per_op;
        }
    }
    for (int k = 0; k < 3; k++) {
        if (log) fprintf(log, "colloq bench: %s...\n", w[k].key);
        measure(&w[k], reps, min_seconds);
        if (g_failed) goto done;
    }
    gates g;
    compute_gates(&g, w);
    if (o->json) report_json(out, w, 3, &g, o, reps, tokens, rounds);
    else report_md(out, w, 3, &g, o, reps, tokens, rounds);
    fflush(out);
    rc = 0;
done:
    if (ctx) {
        for (int i = 0; i < 3 * NV; i++) ctx_free(&ctx[i]);
        free(ctx);
    }
    if (ls_ts.plan || ls_ts.tid) lib_free(&ls_ts);
    if (ls_moe.plan || ls_moe.tid) lib_free(&ls_moe);
    session_data_free(&ts);
    session_data_free(&moe);
    return rc || g_failed ? 1 : 0;
}
