/* colloq generated codecs (issue 19) against the generic codec. The codecs of five fixture
 * conversations are generated at build time by `wirekit colloq gen` (tests/colloq/colloq.cmake)
 * and compiled with the project's warnings. For each plan:
 *   - the identity and canonical plan the code carries are the plan's;
 *   - every fixture transcript (binary; live ones with their senders) runs through the generic
 *     session (wk_colloq_session_step) and the generated receive in lockstep, whole and growing
 *     byte by byte: the same results, bytes consumed, accepted frames (trace lines), failure kind,
 *     offset and sequence number, and the same end; the valid ones' JSON transcripts decode to
 *     frames the generated encoder writes byte for byte as the binary fixture, and the generated
 *     frames' trace (through wk_colloq_frame) is the fixture's and passes wk_colloq_trace_verify;
 *   - 100,000 random frames (random values of every type, optionals present and absent, small
 *     and huge sequence numbers): identical bytes from both encoders (a payload above its ceiling
 *     is refused by the generated encoder, which the generic one writes: decision 16), identical
 *     sizes and decoded values; then mutations of each frame (a byte changed, cut, extended,
 *     a non-minimal header varint) received from a random session state, sequence number and
 *     sender: identical results, consumption, failures and offsets;
 *   - send: random walks compared with the generic encoder and checker, and its refusals;
 *   - prefaces: the same bytes as wk_colloq_preface_write, the same verdicts as
 *     wk_colloq_preface_check;
 *   - per-message _encode/_decode (all-types) against the generic frame's payload;
 *   - zero allocations in receive and send.
 * Usage: test_colloq_generated FIXTURES_DIR */
#include "colloq_fixture.h"
#include <math.h>

#include "wk_alloc_wrap.h"
#include "gat.h"
#include "gchat.h"
#include "gmoe.h"
#include "gnm.h"
#include "gts.h"

static int printed;

/* A check that may run millions of times: counted, the first 40 failures printed. */
#define DIFF(cond, ...)                                                                            \
    do {                                                                                           \
        if (cond) wk_t_pass++;                                                                     \
        else {                                                                                     \
            wk_t_fail++;                                                                           \
            if (printed++ < 40) {                                                                  \
                fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                         \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * One interface over the five generated codecs
 * ------------------------------------------------------------------------------------------- */
typedef struct gplan {
    const char *name, *conv;
    size_t session_size, frame_size;
    void (*init)(void *s);
    wk_result (*receive)(void *s, uint32_t sender, wk_in *in, void *f, wk_error *err);
    wk_result (*finish)(void *s, const wk_in *rest, wk_error *err);
    wk_result (*send)(void *s, uint32_t sender, const void *f, wk_out *out, wk_error *err);
    wk_result (*encode)(const void *f, wk_out *out, wk_error *err);
    size_t (*size)(const void *f);
    wk_code (*to)(const void *g, wk_colloq_frame *f, wk_error *err);
    wk_code (*from)(const wk_colloq_frame *f, void *g, wk_error *err);
    void (*get)(const void *s, wk_colloq_session *out); /* the generated session's fields */
    void (*set)(void *s, const wk_colloq_session *in);
    bool (*matches)(const wk_colloq_plan *plan);
    const char *(*canonical)(size_t *len);
    wk_code (*pcheck)(const char *line, size_t len, uint32_t our_role, uint32_t *peer_role, wk_error *err);
    wk_result (*pwrite)(uint32_t role, wk_out *out, wk_error *err);
    uint32_t (*transition)(const void *f);
    uint64_t (*seq)(const void *f);
    void (*set_seq)(void *f, uint64_t seq);
    void (*set_tr)(void *f, uint32_t t);
} gplan;

#define ADAPT(P, CONV)                                                                             \
    static void P##_i_init(void *s) { P##_session_init(s); }                                      \
    static wk_result P##_i_receive(void *s, uint32_t snd, wk_in *in, void *f, wk_error *e)       \
    {                                                                                              \
        return P##_receive(s, snd, in, f, e);                                                      \
    }                                                                                              \
    static wk_result P##_i_finish(void *s, const wk_in *r, wk_error *e)                           \
    {                                                                                              \
        return P##_session_finish(s, r, e);                                                        \
    }                                                                                              \
    static wk_result P##_i_send(void *s, uint32_t snd, const void *f, wk_out *o, wk_error *e)    \
    {                                                                                              \
        return P##_send(s, snd, f, o, e);                                                          \
    }                                                                                              \
    static wk_result P##_i_encode(const void *f, wk_out *o, wk_error *e)                          \
    {                                                                                              \
        return P##_frame_encode(f, o, e);                                                          \
    }                                                                                              \
    static size_t P##_i_size(const void *f) { return P##_frame_size(f); }                         \
    static wk_code P##_i_to(const void *g, wk_colloq_frame *f, wk_error *e)                       \
    {                                                                                              \
        return P##_frame_to_colloq(g, f, e);                                                       \
    }                                                                                              \
    static wk_code P##_i_from(const wk_colloq_frame *f, void *g, wk_error *e)                     \
    {                                                                                              \
        return P##_frame_from_colloq(f, g, e);                                                     \
    }                                                                                              \
    static void P##_i_get(const void *s, wk_colloq_session *o)                                    \
    {                                                                                              \
        const P##_session *x = s;                                                                  \
        o->state = x->state;                                                                       \
        o->next_seq = x->next_seq;                                                                 \
        o->finished = x->finished;                                                                 \
        o->failure = x->failure;                                                                   \
        o->failure_seq = x->failure_seq;                                                           \
    }                                                                                              \
    static void P##_i_set(void *s, const wk_colloq_session *i)                                    \
    {                                                                                              \
        P##_session *x = s;                                                                        \
        x->state = i->state;                                                                       \
        x->next_seq = i->next_seq;                                                                 \
        x->finished = i->finished;                                                                 \
        x->failure = i->failure;                                                                   \
        x->failure_seq = i->failure_seq;                                                           \
    }                                                                                              \
    static uint32_t P##_i_tr(const void *f) { return ((const P##_frame *)f)->transition; }       \
    static uint64_t P##_i_seq(const void *f) { return ((const P##_frame *)f)->seq; }             \
    static void P##_i_set_seq(void *f, uint64_t q) { ((P##_frame *)f)->seq = q; }                \
    static void P##_i_set_tr(void *f, uint32_t t) { ((P##_frame *)f)->transition = t; }          \
    static const gplan P##_g = {#P, CONV, sizeof(P##_session), sizeof(P##_frame), P##_i_init,    \
                                P##_i_receive, P##_i_finish, P##_i_send, P##_i_encode, P##_i_size, \
                                P##_i_to, P##_i_from, P##_i_get, P##_i_set, P##_plan_matches,      \
                                P##_plan_canonical, P##_preface_check, P##_preface_write,          \
                                P##_i_tr, P##_i_seq, P##_i_set_seq, P##_i_set_tr};

ADAPT(gts, "token-stream.json")
ADAPT(gmoe, "moe-router.json")
ADAPT(gchat, "chat.json")
ADAPT(gat, "all-types.json")
ADAPT(gnm, "gen-names.json")
static const gplan *const gplans[] = {&gts_g, &gmoe_g, &gchat_g, &gat_g, &gnm_g};
#define NPLANS (sizeof gplans / sizeof gplans[0])

/* The generated session and frame, big enough for any of the five (checked in main). */
typedef union gsession {
    gts_session a;
    gmoe_session b;
    gchat_session c;
    gat_session d;
    gnm_session e;
} gsession;
typedef union gframe {
    gts_frame a;
    gmoe_frame b;
    gchat_frame c;
    gat_frame d;
    gnm_frame e;
} gframe;

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static uint64_t rng = 0x19191919u;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The trace line of a generic frame (values as text: compares everything a trace shows). */
static size_t line_of(const wk_colloq_plan *plan, const wk_colloq_frame *f, char *buf, size_t cap)
{
    wk_error err;
    size_t n;
    if (wk_colloq_trace_frame_size(plan, f, &n, &err) != WK_OK) return 0;
    wk_out o = {(uint8_t *)buf, cap, 0};
    if (n <= cap) {
        CHECK(wk_colloq_trace_frame_encode(plan, f, &o, &err) == WK_DONE && o.pos == n);
        return n;
    }
    /* longer than buf: its first cap bytes */
    uint8_t *t = malloc(n);
    if (!t) {
        CHECK(t != NULL);
        return 0;
    }
    o = (wk_out){t, n, 0};
    CHECK(wk_colloq_trace_frame_encode(plan, f, &o, &err) == WK_DONE && o.pos == n);
    memcpy(buf, t, cap);
    free(t);
    return cap;
}

/* Trace line of a generated frame, through wk_colloq_frame. */
static size_t gline_of(const gplan *gp, const wk_colloq_plan *plan, const void *g, char *buf, size_t cap)
{
    static wk_colloq_frame f;
    wk_error err;
    if (gp->to(g, &f, &err) != WK_OK) return 0;
    return line_of(plan, &f, buf, cap);
}

/* The generic receiver: a binary decoder and a session. */
typedef struct generic_rx {
    wk_colloq_decoder *d;
    wk_colloq_session s;
    wk_colloq_frame f;
} generic_rx;

/* Outcome of one receive step, to compare both sides. */
typedef struct step {
    wk_result r;
    size_t pos;
    wk_code code;
    bool has_offset;
    uint64_t offset;
    wk_colloq_session s;
    char line[8192];
    size_t line_len;
} step;

static void generic_step(const wk_colloq_plan *plan, generic_rx *gr, uint32_t sender, wk_in *in, step *o)
{
    wk_error err;
    wk_error_clear(&err);
    o->r = wk_colloq_session_step(&gr->s, gr->d, in, sender, &gr->f, &err);
    o->pos = in->pos;
    o->code = o->r == WK_ERROR ? err.code : WK_OK;
    o->has_offset = o->r == WK_ERROR && err.has_offset;
    o->offset = o->has_offset ? err.offset : 0;
    o->s = gr->s;
    o->line_len = o->r == WK_DONE ? line_of(plan, &gr->f, o->line, sizeof o->line) : 0;
}

static void gen_step(const gplan *gp, const wk_colloq_plan *plan, void *gs, void *gf, uint32_t sender, wk_in *in,
                     step *o)
{
    wk_error err;
    wk_error_clear(&err);
    o->r = gp->receive(gs, sender, in, gf, &err);
    o->pos = in->pos;
    o->code = o->r == WK_ERROR ? err.code : WK_OK;
    o->has_offset = o->r == WK_ERROR && err.has_offset;
    o->offset = o->has_offset ? err.offset : 0;
    gp->get(gs, &o->s);
    o->line_len = o->r == WK_DONE ? gline_of(gp, plan, gf, o->line, sizeof o->line) : 0;
}

static bool same_session(const wk_colloq_session *a, const wk_colloq_session *b)
{
    return a->state == b->state && a->next_seq == b->next_seq && a->finished == b->finished &&
           a->failure == b->failure && (a->failure == WK_OK || a->failure_seq == b->failure_seq);
}

static bool same_step(const step *a, const step *b)
{
    return a->r == b->r && a->pos == b->pos && a->code == b->code && a->has_offset == b->has_offset &&
           a->offset == b->offset && same_session(&a->s, &b->s) && a->line_len == b->line_len &&
           memcmp(a->line, b->line, a->line_len) == 0;
}

static void describe(const char *what, const step *a, const step *b)
{
    if (printed >= 40) return;
    fprintf(stderr, "  %s: generic r=%d pos=%zu %s off=%s%llu state=%u seq=%llu | generated r=%d pos=%zu %s off=%s%llu state=%u seq=%llu\n",
            what, a->r, a->pos, wk_error_name(a->code), a->has_offset ? "" : "-", (unsigned long long)a->offset,
            a->s.state, (unsigned long long)a->s.next_seq, b->r, b->pos, wk_error_name(b->code),
            b->has_offset ? "" : "-", (unsigned long long)b->offset, b->s.state, (unsigned long long)b->s.next_seq);
    if (a->line_len != b->line_len || memcmp(a->line, b->line, a->line_len))
        fprintf(stderr, "  generic:   %.*s  generated: %.*s", (int)a->line_len, a->line, (int)b->line_len, b->line);
}

/* Runs data[0..n) (frames after the preface) through both receivers in lockstep. senders: the live
 * sender of each frame, or NULL (a transcript). bytewise: the input grows one byte per
 * NEED_INPUT. Returns the number of frames accepted (-1 when the two differ). */
static long lockstep(const gplan *gp, const wk_colloq_plan *plan, const uint8_t *data, size_t n,
                     const uint32_t *senders, size_t ns, bool bytewise, const char *label)
{
    wk_error err;
    generic_rx *gr = malloc(sizeof *gr);
    gr->d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
    wk_colloq_session_init(&gr->s, plan);
    static gsession gs;
    static gframe gf;
    gp->init(&gs);
    wk_in a = {data, bytewise ? 0 : n, 0}, b = a;
    long frames = 0;
    static step x, y;
    for (;;) {
        uint32_t snd = senders && (size_t)frames < ns ? senders[frames] : WK_COLLOQ_SENDER_TRANSCRIPT;
        generic_step(plan, gr, snd, &a, &x);
        gen_step(gp, plan, &gs, &gf, snd, &b, &y);
        bool same = same_step(&x, &y);
        DIFF(same, "%s: step after %ld frames%s", label, frames, bytewise ? " (byte by byte)" : "");
        if (!same) {
            describe(label, &x, &y);
            frames = -1;
            break;
        }
        if (x.r == WK_DONE) {
            frames++;
            continue;
        }
        if (x.r == WK_NEED_INPUT) {
            if (a.size < n) {
                a.size++;
                b.size++;
                continue;
            }
            wk_error e1, e2;
            wk_code c1 = (wk_colloq_session_finish(&gr->s, &a, &e1) == WK_DONE ? WK_OK : e1.code);
            wk_result r2 = gp->finish(&gs, &b, &e2);
            DIFF((c1 == WK_OK) == (r2 == WK_DONE) && (c1 == WK_OK || c1 == e2.code), "%s: end %s vs %s", label,
                 wk_error_name(c1), r2 == WK_DONE ? "done" : wk_error_name(e2.code));
            wk_colloq_session s2;
            gp->get(&gs, &s2);
            DIFF(same_session(&gr->s, &s2), "%s: session after the end", label);
            break;
        }
        /* a failure stays: both report it again, unchanged */
        wk_in a2 = a, b2 = b;
        generic_step(plan, gr, snd, &a2, &x);
        gen_step(gp, plan, &gs, &gf, snd, &b2, &y);
        DIFF(x.r == WK_ERROR && y.r == WK_ERROR && x.code == y.code && x.code == gr->s.failure,
             "%s: failure repeated", label);
        break;
    }
    wk_colloq_decoder_destroy(gr->d);
    free(gr);
    return frames;
}

/* ---------------------------------------------------------------------------------------------
 * Fixtures
 * ------------------------------------------------------------------------------------------- */
static const gplan *gplan_of(const char *conv)
{
    for (size_t i = 0; i < NPLANS; i++)
        if (strcmp(gplans[i]->conv, conv) == 0) return gplans[i];
    return NULL;
}

/* The body of a transcript file (after the preface line). */
static uint8_t *body_of(const char *rel, size_t *n)
{
    size_t len;
    char *t = slurp(rel, &len);
    if (!t) return NULL;
    char *nl = memchr(t, '\n', len);
    size_t skip = nl ? (size_t)(nl + 1 - t) : len;
    uint8_t *b = malloc(len - skip + 1);
    memcpy(b, t + skip, len - skip);
    *n = len - skip;
    free(t);
    return b;
}

static void fixture_scenario(const char *name, const char *conv, const char *status, const char *wires)
{
    const gplan *gp = gplan_of(conv);
    if (!gp) return;
    wk_colloq_plan *plan = plan_of(conv);
    REQUIRE(plan != NULL);
    bool live = strncmp(status, "live:", 5) == 0;
    uint32_t senders[64];
    size_t ns = 0;
    char rel[256];
    if (live) {
        snprintf(rel, sizeof rel, "transcripts/%s.senders", name);
        char *st = slurp(rel, NULL);
        REQUIRE(st != NULL);
        for (char *tok = strtok(st, "\n"); tok && ns < 64; tok = strtok(NULL, "\n"))
            senders[ns++] = (uint32_t)wk_colloq_plan_role_find(plan, tok, strlen(tok));
        free(st);
    }
    if (!wires || strstr(wires, "binary")) {
        /* the preface: the generated check gives the generic verdict */
        snprintf(rel, sizeof rel, "transcripts/%s.binary", name);
        size_t tn;
        char *t = slurp(rel, &tn);
        REQUIRE(t != NULL);
        size_t pl = (size_t)((char *)memchr(t, '\n', tn) - t) + 1;
        wk_error e1, e2;
        wk_colloq_preface pf;
        uint32_t r1 = 99, r2 = 99;
        wk_code c1 = wk_colloq_preface_parse(t, pl, &pf, &e1);
        if (c1 == WK_OK) c1 = wk_colloq_preface_check(plan, &pf, WK_COLLOQ_WIRE_BINARY, WK_COLLOQ_ROLE_ANY, &r1, &e1);
        wk_code c2 = gp->pcheck(t, pl, WK_COLLOQ_ROLE_ANY, &r2, &e2);
        CHECKF(c1 == WK_OK && c2 == WK_OK && r1 == r2, "%s: preface", name);
        free(t);
        size_t n = 0;
        uint8_t *b = body_of(rel, &n);
        REQUIRE(b != NULL);
        long f0 = lockstep(gp, plan, b, n, live ? senders : NULL, ns, false, name);
        long f1 = lockstep(gp, plan, b, n, live ? senders : NULL, ns, true, name);
        CHECKF(f0 >= 0 && f0 == f1, "%s: %ld / %ld frames", name, f0, f1);
        /* the generated frames' trace is the fixture's, and verifies */
        if (f0 >= 0) {
            static gsession gs;
            static gframe gf;
            gp->init(&gs);
            wk_colloq_trace tr;
            wk_colloq_trace_init(&tr, NULL);
            wk_in in = {b, n, 0};
            wk_error err;
            size_t k = 0;
            for (;;) {
                wk_result r = gp->receive(&gs, live && k < ns ? senders[k] : WK_COLLOQ_SENDER_TRANSCRIPT, &in, &gf, &err);
                if (r != WK_DONE) break;
                k++;
                static wk_colloq_frame f;
                CHECK(gp->to(&gf, &f, &err) == WK_OK);
                CHECK(wk_colloq_trace_append_frame(&tr, plan, &f, &err) == WK_OK);
            }
            wk_colloq_session s;
            gp->get(&gs, &s);
            if (s.failure) wk_colloq_trace_append_failure(&tr, s.failure, s.failure_seq, &err);
            else if (in.pos < in.size) {
                gp->finish(&gs, &in, &err);
                gp->get(&gs, &s);
                wk_colloq_trace_append_failure(&tr, s.failure, s.failure_seq, &err);
            }
            char *text = trace_text(&tr);
            snprintf(rel, sizeof rel, "transcripts/%s.trace", name);
            char *want = slurp(rel, NULL);
            CHECKF(text && want && strcmp(text, want) == 0, "%s: generated trace\n%s--- expected\n%s", name, text, want);
            wk_colloq_trace_verify_report rep;
            CHECKF(wk_colloq_trace_verify(plan, &tr, &rep, &err) == WK_OK, "%s: verify_trace: %s", name, err.msg);
            free(text);
            free(want);
            wk_colloq_trace_destroy(&tr);
        }
        /* valid transcripts: the JSON encodings' frames, converted, encode to the binary bytes */
        if (!strcmp(status, "0") || !strcmp(status, "live:0")) {
            wk_error err;
            for (int w = 0; w < 2; w++) {
                snprintf(rel, sizeof rel, "transcripts/%s.%s", name, w ? "compact" : "reference");
                size_t jn = 0;
                uint8_t *jb = body_of(rel, &jn);
                REQUIRE(jb != NULL);
                wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, (wk_colloq_wire)w, NULL}, &err);
                wk_in in = {jb, jn, 0};
                static uint8_t out[1 << 16];
                wk_out o = {out, sizeof out, 0};
                static wk_colloq_frame f;
                static gframe g;
                while (in.pos < in.size && wk_colloq_decoder_decode(d, &in, &f, &err) == WK_DONE) {
                    CHECK(gp->from(&f, &g, &err) == WK_OK);
                    CHECK(gp->encode(&g, &o, &err) == WK_DONE);
                }
                CHECKF(in.pos == in.size && o.pos == n && memcmp(out, b, n) == 0, "%s: %s -> generated binary", name,
                       w ? "compact" : "reference");
                wk_colloq_decoder_destroy(d);
                free(jb);
            }
        }
        free(b);
    }
    wk_colloq_plan_destroy(plan);
}

static void test_fixtures(void)
{
    int n = for_each_scenario(fixture_scenario);
    CHECKF(n >= 23, "%d fixture scenarios", n);
}

/* ---------------------------------------------------------------------------------------------
 * Random frames
 * ------------------------------------------------------------------------------------------- */
static uint8_t pool[1 << 18], pool2[1 << 18]; /* slices of random frames (pool2: a second frame) */
static uint8_t *cur_pool = pool;

/* Valid UTF-8 of at most max bytes at p (ASCII mostly; 2-, 3- and 4-byte sequences). */
static size_t rand_utf8(uint8_t *p, size_t max)
{
    size_t n = 0;
    while (n < max) {
        uint64_t r = rnd();
        uint32_t cp;
        switch (r % 8) {
        case 0: cp = 0x80 + (uint32_t)(r >> 8) % 0x780; break;                 /* 2 bytes */
        case 1: cp = 0x800 + (uint32_t)(r >> 8) % (0xD800 - 0x800); break;     /* 3 bytes */
        case 2: cp = 0x10000 + (uint32_t)(r >> 8) % 0x100000; break;           /* 4 bytes */
        default: cp = (uint32_t)(r >> 8) % 0x80; break;                        /* ASCII, NUL and controls too */
        }
        uint8_t tmp[4];
        size_t k;
        if (cp < 0x80) tmp[0] = (uint8_t)cp, k = 1;
        else if (cp < 0x800) tmp[0] = (uint8_t)(0xC0 | cp >> 6), tmp[1] = (uint8_t)(0x80 | (cp & 63)), k = 2;
        else if (cp < 0x10000)
            tmp[0] = (uint8_t)(0xE0 | cp >> 12), tmp[1] = (uint8_t)(0x80 | (cp >> 6 & 63)),
            tmp[2] = (uint8_t)(0x80 | (cp & 63)), k = 3;
        else
            tmp[0] = (uint8_t)(0xF0 | cp >> 18), tmp[1] = (uint8_t)(0x80 | (cp >> 12 & 63)),
            tmp[2] = (uint8_t)(0x80 | (cp >> 6 & 63)), tmp[3] = (uint8_t)(0x80 | (cp & 63)), k = 4;
        if (n + k > max) break;
        memcpy(p + n, tmp, k);
        n += k;
    }
    return n;
}

static size_t rand_len(void)
{
    switch (rnd() % 16) {
    case 0: return 0;
    case 1: return (size_t)(rnd() % 300);
    case 2: return rnd() % 4 ? (size_t)(rnd() % 2000) : (size_t)(rnd() % 70000);
    default: return (size_t)(rnd() % 24);
    }
}

static float rand_f32(void)
{
    static const float edge[] = {0.0f, -0.0f, 1.0f, -1.5f, 3.4028234663852886e38f, -3.4028234663852886e38f,
                                 1.17549435e-38f, 1.4e-45f, 0.1f};
    if (rnd() % 6 == 0) return edge[rnd() % (sizeof edge / sizeof edge[0])];
    for (;;) {
        uint32_t b = (uint32_t)rnd();
        float x;
        memcpy(&x, &b, 4);
        if (isfinite(x)) return x;
    }
}

static double rand_f64(void)
{
    static const double edge[] = {0.0, -0.0, 1.0, -2.5, 1.7976931348623157e308, -1.7976931348623157e308,
                                  2.2250738585072014e-308, 4.9e-324, 0.1, 1e-300};
    if (rnd() % 6 == 0) return edge[rnd() % (sizeof edge / sizeof edge[0])];
    for (;;) {
        uint64_t b = rnd();
        double x;
        memcpy(&x, &b, 8);
        if (isfinite(x)) return x;
    }
}

static uint64_t rand_u(unsigned bits)
{
    uint64_t max = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    switch (rnd() % 8) {
    case 0: return 0;
    case 1: return max;
    default: return rnd() & max;
    }
}

static int64_t rand_i(unsigned bits)
{
    int64_t min = bits == 64 ? INT64_MIN : -(1ll << (bits - 1)), max = bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
    switch (rnd() % 8) {
    case 0: return min;
    case 1: return max;
    case 2: return 0;
    default: {
        uint64_t u = rnd();
        if (bits < 64) u = (uint64_t)((int64_t)(u << (64 - bits)) >> (64 - bits));
        return (int64_t)u;
    }
    }
}

/* Random values of transition t's message into f (slices in pool). */
static void rand_values(const wk_colloq_plan *plan, uint32_t t, uint64_t seq, wk_colloq_frame *f)
{
    wk_colloq_frame_init(f, plan, t, seq);
    const wk_colloq_message *m = wk_colloq_plan_transition_message_get(plan, t);
    size_t used = 0;
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        wk_colloq_value *v = &f->fields[k];
        if (fd->optional && rnd() % 2) continue;
        v->present = true;
        switch (fd->type) {
        case WK_COLLOQ_BOOL: v->as.b = rnd() & 1; break;
        case WK_COLLOQ_U8: v->as.u = rand_u(8); break;
        case WK_COLLOQ_U16: v->as.u = rand_u(16); break;
        case WK_COLLOQ_U32: v->as.u = rand_u(32); break;
        case WK_COLLOQ_U64: v->as.u = rand_u(64); break;
        case WK_COLLOQ_I8: v->as.i = rand_i(8); break;
        case WK_COLLOQ_I16: v->as.i = rand_i(16); break;
        case WK_COLLOQ_I32: v->as.i = rand_i(32); break;
        case WK_COLLOQ_I64: v->as.i = rand_i(64); break;
        case WK_COLLOQ_F32: v->as.f = (double)rand_f32(); break;
        case WK_COLLOQ_F64: v->as.f = rand_f64(); break;
        case WK_COLLOQ_STRING:
        case WK_COLLOQ_BYTES: {
            size_t len = rand_len();
            if (len > sizeof pool / 2 - used) len = 0;
            if (fd->type == WK_COLLOQ_STRING) len = rand_utf8(cur_pool + used, len);
            else
                for (size_t i = 0; i < len; i++) cur_pool[used + i] = (uint8_t)rnd();
            v->as.s.ptr = len ? cur_pool + used : (rnd() & 1 ? NULL : cur_pool);
            v->as.s.len = len;
            used += len;
            break;
        }
        }
    }
}

static uint8_t fa[1 << 18], fb[1 << 18], mut[1 << 18];

/* A random session for plan: any state (finished when final), next_seq near seq, sometimes failed. */
static void rand_session(const wk_colloq_plan *plan, uint64_t seq, uint32_t from, wk_colloq_session *s)
{
    wk_colloq_session_init(s, plan);
    s->state = rnd() % 2 ? from : (uint32_t)(rnd() % plan->state_count);
    s->finished = plan->is_final[s->state];
    switch (rnd() % 6) {
    case 0: s->next_seq = seq + 1; break;
    case 1: s->next_seq = seq - 1; break;
    default: s->next_seq = seq;
    }
    if (rnd() % 50 == 0) {
        s->failure = (wk_code)(WK_ERR_COLLOQ_UNKNOWN_TRANSITION + rnd() % 8);
        s->failure_seq = s->next_seq;
    }
}

/* What the steps compared by lockstep_from came to: accepted, need-input, the eight failures. */
static long outcomes[11];

/* Both receivers from session start over data[0..n) with one sender for every frame. */
static bool lockstep_from(const gplan *gp, const wk_colloq_plan *plan, const uint8_t *data, size_t n,
                          const wk_colloq_session *start, uint32_t sender, const char *label)
{
    wk_error err;
    static generic_rx gr;
    static gsession gs;
    static gframe gf;
    static wk_colloq_decoder *dec[NPLANS];
    static const wk_colloq_plan *dec_plan[NPLANS];
    size_t pi = 0;
    while (gplans[pi] != gp) pi++;
    if (dec_plan[pi] != plan) {
        wk_colloq_decoder_destroy(dec[pi]);
        dec[pi] = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
        dec_plan[pi] = plan;
    }
    gr.d = dec[pi];
    gr.s = *start;
    gp->init(&gs);
    gp->set(&gs, start);
    wk_in a = {data, n, 0}, b = a;
    static step x, y;
    for (int k = 0; k < 8; k++) {
        generic_step(plan, &gr, sender, &a, &x);
        gen_step(gp, plan, &gs, &gf, sender, &b, &y);
        outcomes[x.r == WK_DONE ? 0 : x.r == WK_NEED_INPUT ? 1 : wk_colloq_code_is_failure(x.code) ? 2 + x.code - WK_ERR_COLLOQ_UNKNOWN_TRANSITION : 10]++;
        if (!same_step(&x, &y)) {
            DIFF(false, "%s", label);
            describe(label, &x, &y);
            return false;
        }
        wk_t_pass++;
        if (x.r == WK_DONE) continue;
        if (x.r == WK_NEED_INPUT) {
            wk_error e1, e2;
            wk_code c1 = (wk_colloq_session_finish(&gr.s, &a, &e1) == WK_DONE ? WK_OK : e1.code);
            wk_result r2 = gp->finish(&gs, &b, &e2);
            bool same = (c1 == WK_OK) == (r2 == WK_DONE) && (c1 == WK_OK || c1 == e2.code);
            DIFF(same, "%s: end %s vs %s", label, wk_error_name(c1), r2 == WK_DONE ? "done" : wk_error_name(e2.code));
            return same;
        }
        return true;
    }
    return true;
}

static void mutate(const uint8_t *src, size_t n, uint8_t *dst, size_t *m)
{
    memcpy(dst, src, n);
    *m = n;
    switch (rnd() % 7) {
    case 0: /* one byte changed */
        if (n) dst[rnd() % n] = (uint8_t)rnd();
        break;
    case 1: /* cut */
        *m = n ? (size_t)(rnd() % n) : 0;
        break;
    case 2: { /* extended with garbage (a second frame) */
        size_t k = 1 + (size_t)(rnd() % 12);
        for (size_t i = 0; i < k; i++) dst[n + i] = (uint8_t)rnd();
        *m = n + k;
        break;
    }
    case 3: /* the transition id as a non-minimal varint */
        if (n && dst[0] < 0x80) {
            memmove(dst + 2, src + 1, n - 1);
            dst[0] = (uint8_t)(src[0] | 0x80);
            dst[1] = 0;
            *m = n + 1;
        }
        break;
    case 4: /* a bit flipped in the last bytes (payload) */
        if (n) dst[n - 1 - rnd() % (n < 6 ? n : 6)] ^= (uint8_t)(1u << (rnd() % 8));
        break;
    case 5: { /* one byte inserted */
        size_t at = n ? (size_t)(rnd() % n) : 0;
        memmove(dst + at + 1, src + at, n - at);
        dst[at] = (uint8_t)rnd();
        *m = n + 1;
        break;
    }
    default: /* the seq or payload_len byte moved by one */
        if (n > 2) dst[1 + rnd() % 2] += rnd() % 2 ? 1 : 0xFF;
        break;
    }
}

static void test_random(const gplan *gp, const wk_colloq_plan *plan, long count)
{
    if (!plan->transition_count) return;
    static wk_colloq_frame f, f2;
    static gframe g;
    char label[128];
    long identical = 0, refused_over_ceiling = 0, mutated = 0;
    for (long i = 0; i < count; i++) {
        uint32_t t = (uint32_t)(rnd() % plan->transition_count);
        uint64_t seq = rnd() % 3 ? rnd() % 2000 : rnd() % 4 ? rnd() >> (rnd() % 64) : UINT64_MAX;
        rand_values(plan, t, seq, &f);
        const wk_colloq_message *m = wk_colloq_plan_transition_message_get(plan, t);
        const wk_colloq_transition *tr = &plan->transitions[t];
        wk_error err;
        wk_out oa = {fa, sizeof fa, 0};
        wk_result ra = wk_colloq_binary_encode(plan, &f, &oa, &err);
        DIFF(ra == WK_DONE, "%s: generic encode of a random frame: %s", gp->name, err.msg);
        if (ra != WK_DONE) continue;
        size_t plen = wk_colloq_payload_size(plan, t, &f);
        wk_code fc = gp->from(&f, &g, &err);
        wk_out ob = {fb, sizeof fb, 0};
        wk_result rb = fc == WK_OK ? gp->encode(&g, &ob, &err) : WK_ERROR;
        if (plen <= m->max_payload) {
            DIFF(fc == WK_OK, "%s: from_colloq: %s", gp->name, err.msg);
            if (fc) continue;
            DIFF(gp->transition(&g) == t && gp->seq(&g) == seq, "%s: transition and seq", gp->name);
            bool same = rb == WK_DONE && ob.pos == oa.pos && memcmp(fa, fb, oa.pos) == 0;
            DIFF(same, "%s: frame %ld (transition %u, %zu bytes): generated bytes differ", gp->name, i, t, oa.pos);
            DIFF(gp->size(&g) == oa.pos, "%s: frame_size", gp->name);
            identical += same;
        } else { /* a field or the payload above the ceiling: not a frame of the schedule */
            DIFF(rb == WK_ERROR && err.code == WK_ERR_ARG && ob.pos == 0, "%s: over-ceiling payload refused", gp->name);
            refused_over_ceiling++;
        }
        /* values through the conversion back */
        static char l1[1 << 16], l2[1 << 16];
        if (fc == WK_OK && rnd() % 8 == 0) {
            size_t n1 = line_of(plan, &f, l1, sizeof l1), n2 = gline_of(gp, plan, &g, l2, sizeof l2);
            DIFF(n1 == n2 && memcmp(l1, l2, n1) == 0, "%s: to_colloq values", gp->name);
            CHECK(gp->to(&g, &f2, &err) == WK_OK && f2.payload_len == plen);
        }
        /* accepted from its state, live or transcript */
        wk_colloq_session s;
        wk_colloq_session_init(&s, plan);
        s.state = tr->from;
        s.finished = false;
        s.next_seq = seq;
        snprintf(label, sizeof label, "%s: random frame %ld", gp->name, i);
        lockstep_from(gp, plan, fa, oa.pos, &s, rnd() % 2 ? WK_COLLOQ_SENDER_TRANSCRIPT : tr->sender, label);
        /* mutations from random sessions and senders */
        for (int k = 0; k < 4; k++) {
            size_t mn;
            mutate(fa, oa.pos, mut, &mn);
            rand_session(plan, seq, tr->from, &s);
            uint32_t sender = rnd() % 3 == 0 ? WK_COLLOQ_SENDER_TRANSCRIPT : (uint32_t)(rnd() % plan->role_count);
            snprintf(label, sizeof label, "%s: mutation %d of random frame %ld", gp->name, k, i);
            lockstep_from(gp, plan, mut, mn, &s, sender, label);
            mutated++;
        }
    }
    printf("%s: %ld random frames: %ld byte-identical, %ld over the ceiling (refused by the generated "
           "encoder); %ld mutations; steps compared:", gp->name, count, identical, refused_over_ceiling, mutated);
    static const char *const kinds[11] = {"accepted", "need-input", "unknown-transition", "wrong-state",
                                          "wrong-sender", "bad-sequence", "malformed-payload",
                                          "payload-too-large", "truncated", "after-final", "other"};
    for (int k = 0; k < 11; k++) {
        printf(" %s %ld", kinds[k], outcomes[k]);
        outcomes[k] = 0;
    }
    printf("\n");
}

/* ---------------------------------------------------------------------------------------------
 * Send
 * ------------------------------------------------------------------------------------------- */
static void test_send(const gplan *gp, const wk_colloq_plan *plan, int walks)
{
    if (!plan->transition_count) return;
    wk_error err;
    wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
    static wk_colloq_frame f, rf;
    static gframe g;
    static gsession gs, saved;
    uint32_t cand[256];
    long sent = 0;
    for (int w = 0; w < walks; w++) {
        wk_colloq_session sg;
        wk_colloq_session_init(&sg, plan);
        gp->init(&gs);
        for (int k = 0; k < 40 && !sg.finished; k++) {
            uint32_t nc = 0;
            for (uint32_t t = 0; t < plan->transition_count && nc < 256; t++)
                if (plan->transitions[t].from == sg.state) cand[nc++] = t;
            if (!nc) break;
            uint32_t t = cand[rnd() % nc];
            const wk_colloq_transition *tr = &plan->transitions[t];
            do rand_values(plan, t, sg.next_seq, &f);
            while (wk_colloq_payload_size(plan, t, &f) > wk_colloq_plan_transition_message_get(plan, t)->max_payload);
            CHECK(gp->from(&f, &g, &err) == WK_OK);
            gp->set_seq(&g, rnd()); /* send writes the session's sequence number, not this */
            saved = gs;
            /* refusals leave out and the session untouched */
            memset(fb, 0xAA, 64);
            wk_out o = {fb, sizeof fb, 0};
            if (plan->role_count > 1) {
                uint32_t other = (tr->sender + 1 + (uint32_t)(rnd() % (plan->role_count - 1))) % plan->role_count;
                DIFF(gp->send(&gs, other, &g, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG && o.pos == 0 &&
                         memcmp(&gs, &saved, sizeof gs) == 0 && fb[0] == 0xAA,
                     "%s: send as another role", gp->name);
            }
            static gframe at_seq; /* the frame as sent: with the session's sequence number */
            at_seq = g;
            gp->set_seq(&at_seq, sg.next_seq);
            size_t need = gp->size(&at_seq);
            wk_out small = {fb, need - 1, 0};
            DIFF(gp->send(&gs, tr->sender, &g, &small, &err) == WK_NEED_OUTPUT && small.pos == 0 && fb[0] == 0xAA &&
                     memcmp(&gs, &saved, sizeof gs) == 0,
                 "%s: send into %zu bytes", gp->name, need - 1);
            for (uint32_t u = 0; u < plan->transition_count; u++) {
                if (plan->transitions[u].from == sg.state) continue;
                static gframe h;
                static wk_colloq_frame hf;
                cur_pool = pool2;
                rand_values(plan, u, 0, &hf);
                cur_pool = pool;
                if (gp->from(&hf, &h, &err) != WK_OK) break;
                DIFF(gp->send(&gs, plan->transitions[u].sender, &h, &o, &err) == WK_ERROR && err.code == WK_ERR_STATE &&
                         o.pos == 0 && memcmp(&gs, &saved, sizeof gs) == 0,
                     "%s: send of a transition from another state", gp->name);
                break;
            }
            /* the frame: the generic encoder's bytes, accepted by the generic checker */
            wk_result r = gp->send(&gs, rnd() % 2 ? tr->sender : WK_COLLOQ_SENDER_TRANSCRIPT, &g, &o, &err);
            DIFF(r == WK_DONE && o.pos == need, "%s: send: %s", gp->name, err.msg);
            wk_out oa = {fa, sizeof fa, 0};
            CHECK(wk_colloq_binary_encode(plan, &f, &oa, &err) == WK_DONE);
            DIFF(oa.pos == o.pos && memcmp(fa, fb, o.pos) == 0, "%s: sent bytes = generic bytes", gp->name);
            wk_in in = {fb, o.pos, 0};
            CHECK(wk_colloq_session_step(&sg, d, &in, tr->sender, &rf, &err) == WK_DONE && in.pos == o.pos);
            wk_colloq_session s2;
            gp->get(&gs, &s2);
            DIFF(same_session(&sg, &s2), "%s: sender's session = receiver's", gp->name);
            sent++;
        }
        if (sg.finished) {
            wk_out o = {fb, sizeof fb, 0};
            DIFF(gp->send(&gs, WK_COLLOQ_SENDER_TRANSCRIPT, &g, &o, &err) == WK_ERROR && err.code == WK_ERR_STATE && o.pos == 0,
                 "%s: send after the end", gp->name);
        }
    }
    /* an unknown transition */
    wk_colloq_frame_init(&f, plan, 0, 0);
    gp->init(&gs);
    rand_values(plan, 0, 0, &f);
    if (gp->from(&f, &g, &err) == WK_OK) {
        gp->set_tr(&g, plan->transition_count);
        wk_out o = {fb, sizeof fb, 0};
        CHECK(gp->send(&gs, WK_COLLOQ_SENDER_TRANSCRIPT, &g, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG);
        CHECK(gp->encode(&g, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG && o.pos == 0);
        CHECK(gp->size(&g) == 0);
        CHECK(gp->to(&g, &f, &err) == WK_ERR_ARG);
    }
    /* from_colloq refuses what the schedule cannot carry */
    f.transition = plan->transition_count;
    CHECK(gp->from(&f, &g, &err) == WK_ERR_ARG);
    wk_colloq_decoder_destroy(d);
    printf("%s: %ld frames sent in %d random walks\n", gp->name, sent, walks);
}

/* ---------------------------------------------------------------------------------------------
 * Prefaces
 * ------------------------------------------------------------------------------------------- */
static void pcompare(const gplan *gp, const wk_colloq_plan *plan, const char *line, size_t len, uint32_t our,
                     const char *what)
{
    wk_error e1, e2;
    wk_colloq_preface pf;
    uint32_t r1 = 77, r2 = 77;
    wk_code c1 = wk_colloq_preface_parse(line, len, &pf, &e1);
    if (c1 == WK_OK) c1 = wk_colloq_preface_check(plan, &pf, WK_COLLOQ_WIRE_BINARY, our, &r1, &e1);
    wk_code c2 = gp->pcheck(line, len, our, &r2, &e2);
    CHECKF(c1 == c2 && r1 == r2 && (c1 == WK_OK || (e1.has_offset == e2.has_offset && e1.offset == e2.offset)),
           "%s: preface %s: generic %s, generated %s", gp->name, what, wk_error_name(c1), wk_error_name(c2));
}

static void test_prefaces(const gplan *gp, const wk_colloq_plan *plan)
{
    char line[512], mine[512];
    wk_error err;
    for (uint32_t r = 0; r < plan->role_count; r++) {
        size_t n = preface_of(plan, WK_COLLOQ_WIRE_BINARY, r, line, sizeof line);
        wk_out o = {(uint8_t *)mine, sizeof mine, 0};
        CHECK(gp->pwrite(r, &o, &err) == WK_DONE && o.pos == n && memcmp(mine, line, n) == 0);
        memset(mine, 0xAA, sizeof mine);
        wk_out small = {(uint8_t *)mine, n - 1, 0};
        CHECK(gp->pwrite(r, &small, &err) == WK_NEED_OUTPUT && small.pos == 0 && (uint8_t)mine[0] == 0xAA);
        pcompare(gp, plan, line, n, WK_COLLOQ_ROLE_ANY, "any");
        pcompare(gp, plan, line, n, r, "our own role");
        pcompare(gp, plan, line, n, (r + 1) % plan->role_count, "the other role");
        n = preface_of(plan, WK_COLLOQ_WIRE_COMPACT, r, line, sizeof line);
        pcompare(gp, plan, line, n, WK_COLLOQ_ROLE_ANY, "compact wire");
    }
    wk_out o = {(uint8_t *)mine, sizeof mine, 0};
    CHECK(gp->pwrite(plan->role_count, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG && o.pos == 0);
    /* another plan's preface */
    for (size_t i = 0; i < NPLANS; i++) {
        if (gplans[i] == gp) continue;
        wk_out oo = {(uint8_t *)line, sizeof line, 0};
        CHECK(gplans[i]->pwrite(0, &oo, &err) == WK_DONE);
        pcompare(gp, plan, line, oo.pos, WK_COLLOQ_ROLE_ANY, "another plan");
        wk_error e;
        CHECK(gp->pcheck(line, oo.pos, WK_COLLOQ_ROLE_ANY, NULL, &e) == WK_ERR_COLLOQ_PLAN_MISMATCH);
    }
    int n = snprintf(line, sizeof line, "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"nobody\"}\n", plan->identity);
    pcompare(gp, plan, line, (size_t)n, WK_COLLOQ_ROLE_ANY, "unknown role");
    n = snprintf(line, sizeof line, "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"%s\",\"role\":\"%s\"}\n",
                 plan->identity, plan->roles[0], plan->roles[0]);
    pcompare(gp, plan, line, (size_t)n, WK_COLLOQ_ROLE_ANY, "duplicate key");
    pcompare(gp, plan, "{}", 2, WK_COLLOQ_ROLE_ANY, "empty object");
    pcompare(gp, plan, "nonsense\n", 9, WK_COLLOQ_ROLE_ANY, "not JSON");
    size_t cl;
    const char *canon = gp->canonical(&cl);
    CHECKF(gp->matches(plan) && cl == plan->canonical_len && memcmp(canon, plan->canonical, cl) == 0 &&
               canon[cl] == '\0',
           "%s: identity and canonical plan", gp->name);
    wk_colloq_plan *q = NULL;
    CHECK(wk_colloq_plan_load(canon, cl, NULL, &q, &err) == WK_OK && q && strcmp(q->identity, plan->identity) == 0);
    wk_colloq_plan_destroy(q);
}

/* ---------------------------------------------------------------------------------------------
 * Per-message _size / _encode / _decode (all-types) against the generic frame's payload
 * ------------------------------------------------------------------------------------------- */
#define PER_MESSAGE(M)                                                                             \
    static void per_message_##M(const wk_colloq_plan *plan, uint32_t t, int count)                \
    {                                                                                              \
        static wk_colloq_frame f;                                                                  \
        static gat_frame g, h;                                                                     \
        wk_error err;                                                                              \
        for (int i = 0; i < count; i++) {                                                          \
            rand_values(plan, t, 5, &f);                                                           \
            wk_out oa = {fa, sizeof fa, 0};                                                        \
            if (wk_colloq_binary_encode(plan, &f, &oa, &err) != WK_DONE) continue;                 \
            const uint8_t *q = fa;                                                                 \
            uint64_t v;                                                                            \
            for (int k = 0; k < 3; k++) wk_colloq_varint_get(&q, fa + oa.pos, &v);                 \
            size_t hdr = (size_t)(q - fa), plen = oa.pos - hdr;                                    \
            if (plen > GAT_##M##_MAX_PAYLOAD) continue;                                             \
            CHECK(gat_frame_from_colloq(&f, &g, &err) == WK_OK);                                   \
            CHECK(gat_##M##_size(&g.as.M) == plen);                                                \
            memset(fb, 0xAA, plen + 1);                                                            \
            wk_out small = {fb, plen - 1, 0};                                                      \
            if (plen) CHECK(gat_##M##_encode(&g.as.M, &small, &err) == WK_NEED_OUTPUT && small.pos == 0 && fb[0] == 0xAA); \
            wk_out ob = {fb, sizeof fb, 0};                                                        \
            DIFF(gat_##M##_encode(&g.as.M, &ob, &err) == WK_DONE && ob.pos == plen &&               \
                     memcmp(fb, fa + hdr, plen) == 0,                                              \
                 #M ": payload bytes");                                                            \
            wk_in in = {fa + hdr, plen, 0};                                                        \
            h.transition = t;                                                                      \
            h.seq = 5;                                                                             \
            DIFF(gat_##M##_decode(&h.as.M, &in, &err) == WK_DONE && in.pos == plen, #M ": decode"); \
            static char l1[1 << 16], l2[1 << 16];                                                  \
            size_t n1 = line_of(plan, &f, l1, sizeof l1), n2 = gline_of(&gat_g, plan, &h, l2, sizeof l2); \
            DIFF(n1 == n2 && memcmp(l1, l2, n1) == 0, #M ": decoded values");                      \
            /* a mutated payload: the generic decoder's verdict and offset (less the header) */    \
            size_t mn;                                                                             \
            mutate(fa + hdr, plen, mut, &mn);                                                      \
            uint8_t frame[1 << 12];                                                                \
            if (mn + 32 > sizeof frame) continue;                                                  \
            size_t fl = 0;                                                                         \
            fl += wk_colloq_varint_put(frame, t);                                                  \
            fl += wk_colloq_varint_put(frame + fl, 5);                                             \
            fl += wk_colloq_varint_put(frame + fl, mn);                                            \
            memcpy(frame + fl, mut, mn);                                                           \
            static wk_colloq_frame gf;                                                             \
            wk_in fin = {frame, fl + mn, 0};                                                       \
            if (wk_colloq_binary_decode(plan, &fin, &gf, &err) != WK_DONE) continue;               \
            wk_in pin = {mut, mn, 0};                                                              \
            wk_error e2;                                                                           \
            wk_result r2 = gat_##M##_decode(&h.as.M, &pin, &e2);                                   \
            if (gf.payload_error == WK_OK)                                                         \
                DIFF(r2 == WK_DONE && pin.pos == mn, #M ": mutated payload accepted alike");       \
            else                                                                                   \
                DIFF(r2 == WK_ERROR && e2.code == gf.payload_error &&                              \
                         e2.offset == (gf.payload_error == WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE ? 0 : gf.payload_error_offset - fl) && \
                         pin.pos == 0,                                                             \
                     #M ": mutated payload: generic %s at %llu, generated %s at %llu",            \
                     wk_error_name(gf.payload_error), (unsigned long long)gf.payload_error_offset, \
                     wk_error_name(e2.code), (unsigned long long)e2.offset);                       \
        }                                                                                          \
    }
PER_MESSAGE(Scalars)
PER_MESSAGE(Options)
PER_MESSAGE(Mixed)
PER_MESSAGE(Wide)
PER_MESSAGE(Empty)

static void test_per_message(const wk_colloq_plan *plan)
{
    CHECK(GAT_Options_HAS_oby == (1u << 12) && sizeof(((gat_Options *)0)->present) == 2); /* 13 optional: 2 bytes */
    CHECK(sizeof(((gat_Wide *)0)->present) == 8);                                        /* 34 optional: 5 bytes */
    for (uint32_t t = 0; t < plan->transition_count; t++) {
        const char *mn = wk_colloq_plan_transition_message_get(plan, t)->name;
        if (!strcmp(mn, "Scalars")) per_message_Scalars(plan, t, 3000);
        else if (!strcmp(mn, "Options")) per_message_Options(plan, t, 3000);
        else if (!strcmp(mn, "Mixed")) per_message_Mixed(plan, t, 3000);
        else if (!strcmp(mn, "Wide")) per_message_Wide(plan, t, 3000);
        else if (!strcmp(mn, "Empty")) per_message_Empty(plan, t, 300);
    }
    /* decode refuses a payload above the ceiling, and a view past its size */
    static uint8_t big[100];
    gat_Mixed m;
    wk_error err;
    wk_in in = {big, sizeof big, 0};
    CHECK(gat_Mixed_decode(&m, &in, &err) == WK_ERROR && err.code == WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE && in.pos == 0);
    in.pos = 200;
    CHECK(gat_Mixed_decode(&m, &in, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    /* encode refuses values the schedule cannot carry */
    gat_Scalars s;
    memset(&s, 0, sizeof s);
    uint8_t out[256];
    wk_out o = {out, sizeof out, 0};
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_DONE);
    s.f32v = NAN;
    o.pos = 0;
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG && o.pos == 0);
    s.f32v = 0;
    s.f64v = -INFINITY;
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    s.f64v = 0;
    s.s.ptr = (const uint8_t *)"\xc3(";
    s.s.len = 2;
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    s.s.ptr = NULL;
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    s.s.len = 0;
    CHECK(gat_Scalars_encode(&s, &o, &err) == WK_DONE);
    gat_Options op;
    memset(&op, 0, sizeof op);
    op.present = 1u << 13; /* beyond the 13 optional fields */
    o.pos = 0;
    CHECK(gat_Options_encode(&op, &o, &err) == WK_ERROR && err.code == WK_ERR_ARG);
}

/* ---------------------------------------------------------------------------------------------
 * Zero allocations
 * ------------------------------------------------------------------------------------------- */
static void test_zero_allocations(const wk_colloq_plan *ts)
{
    size_t n = 0;
    uint8_t *b = body_of("transcripts/ts-valid.binary", &n);
    REQUIRE(b != NULL);
    static gts_session s, tx;
    static gts_frame f;
    static uint8_t out[4096];
    wk_error err;
    int frames = 0;
    wk_alloc_probe_begin(0);
    for (int rep = 0; rep < 10; rep++) {
        gts_session_init(&s);
        gts_session_init(&tx);
        wk_in in = {b, n, 0};
        while (gts_receive(&s, WK_COLLOQ_SENDER_TRANSCRIPT, &in, &f, &err) == WK_DONE) {
            wk_out o = {out, sizeof out, 0};
            CHECK(gts_send(&tx, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &o, &err) == WK_DONE);
            frames++;
        }
        CHECK(gts_session_finish(&s, &in, &err) == WK_DONE && s.finished && tx.finished);
    }
    unsigned long used = wk_alloc_probe_end();
    ALLOC_CHECK(used == 0 && frames == 60, "%lu allocations in %d frames", used, frames);
    (void)ts;
    free(b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_colloq_generated FIXTURES_DIR\n");
        return 1;
    }
    dir = argv[1];
    long count = 100000;
    const char *env = getenv("WK_COLLOQ_GEN_FRAMES"); /* a shorter run while developing */
    if (env) count = atol(env);
    test_fixtures();
    for (size_t i = 0; i < NPLANS; i++) {
        const gplan *gp = gplans[i];
        wk_colloq_plan *plan = plan_of(gp->conv);
        CHECKF(plan != NULL, "%s compiles", gp->conv);
        if (!plan) continue;
        CHECK(gp->session_size <= sizeof(gsession) && gp->frame_size <= sizeof(gframe));
        test_prefaces(gp, plan);
        test_send(gp, plan, 300);
        test_random(gp, plan, count);
        if (gp == &gat_g) test_per_message(plan);
        if (gp == &gts_g) test_zero_allocations(plan);
        wk_colloq_plan_destroy(plan);
    }
    return wk_test_summary("colloq_generated");
}
