/* libFuzzer target: the generated binary codec of the all-types conversation
 * (tests/colloq/fixtures/all-types.json: the thirteen field types required and optional, bitmaps
 * of 2 and 5 bytes, a message both roles send from one state, a 64-byte ceiling), written at build
 * time by `wirekit colloq gen` (fuzz/CMakeLists.txt, fuzz/replay.cmake), against the generic
 * codec (issue 19). The plan is loaded from the canonical text the generated code carries.
 * Input: byte 0 picks
 *   bits 0-1  the sender: 0-1 transcript (WK_COLLOQ_SENDER_TRANSCRIPT); 2 live, each frame from
 *             its transition's role where the generic decoder finds one; 3 live, role 1 always;
 *   bits 2-4  the pushes of pass B: 1, 2, 3, 5, 8, 13, 64 bytes or all at once;
 *   bits 5-7  the starting session: 0-3 the initial state; 4 state Busy at sequence 0; 5 Busy at
 *             sequence byte 1; 6 the final state (after-final); 7 a failed session;
 * then byte 1 (a sequence number for mode 5) and the frame stream.
 * Checks:
 *   - pass A (the whole stream in one buffer): every step of wk_colloq_session_step (binary
 *     decoder) and of the generated receive agrees: result, bytes consumed, failure code, whether
 *     it has an offset and which, the session (state, next sequence, finished, failure and its
 *     sequence); an accepted frame has the same values (trace line through wk_colloq_frame), the
 *     generated encoder writes exactly the bytes consumed (binary is canonical) in frame_size
 *     bytes, the generic encoder writes them from the converted frame, and the message's
 *     _decode on the payload gives the same values; the end (NEED_INPUT) is the same through
 *     wk_colloq_session_finish and the generated session_finish; a failure repeats unchanged;
 *   - the generated receive allocates nothing (fuzz/alloc_hook.h: only the calling thread's
 *     allocations while it runs are counted, sanitizer hook or -Wl,--wrap in replay builds);
 *   - pass B: both receivers through the contract harness (fuzz/fuzz_drive.h; the generic one a
 *     wk_colloq_reader continuing the starting session, the generated one fgat_receive with a
 *     reader's buffering written here), in pushes of the chosen size and whole: every call keeps
 *     the contract, both runs reach the same outcome, and it is pass A's verdict (frames accepted,
 *     a CRC of their bytes, failure code and sequence). */
#include <stdbool.h>
#include <string.h>
#include <wirekit/colloq.h>

#include "fgat.h"
#include "alloc_hook.h"
#include "fuzz_check.h"
#include "fuzz_drive.h"
#include "wk_contract_colloq.h"

static wk_colloq_plan *plan;
static wk_colloq_decoder *dec;
static uint32_t busy, done_state;

static void init(void)
{
    static bool ready;
    if (ready) return;
    ready = true;
    size_t n;
    const char *text = fgat_plan_canonical(&n);
    wk_error err;
    CHECK(wk_colloq_plan_load(text, n, NULL, &plan, &err) == WK_OK);
    CHECK(fgat_plan_matches(plan));
    dec = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
    CHECK(dec != NULL);
    busy = (uint32_t)wk_colloq_plan_state_find(plan, "Busy", 4);
    done_state = (uint32_t)wk_colloq_plan_state_find(plan, "End", 3);
    CHECK(busy == FGAT_STATE_Busy && done_state == FGAT_STATE_End);
    /* the allocation probe works: it counts this thread's allocations (fuzz/alloc_hook.h) */
    if (fuzz_alloc_install()) {
        wk_alloc_probe_begin(1);
        void *volatile probe = malloc(7);
        free(probe);
        CHECK(wk_alloc_probe_end() == 1);
    }
}

static void start(uint8_t mode, uint8_t seq_byte, wk_colloq_session *s)
{
    wk_colloq_session_init(s, plan);
    switch (mode >> 5) {
    case 4: s->state = busy; break;
    case 5:
        s->state = busy;
        s->next_seq = seq_byte;
        break;
    case 6:
        s->state = done_state;
        s->finished = true;
        s->next_seq = 3;
        break;
    case 7:
        s->failure = WK_ERR_COLLOQ_BAD_SEQUENCE;
        s->failure_seq = 0;
        break;
    default: break;
    }
}

static void to_gen(const wk_colloq_session *s, fgat_session *g)
{
    fgat_session_init(g);
    g->state = s->state;
    g->next_seq = s->next_seq;
    g->finished = s->finished;
    g->failure = s->failure;
    g->failure_seq = s->failure_seq;
}

static bool same_session(const wk_colloq_session *a, const fgat_session *b)
{
    return a->state == b->state && a->next_seq == b->next_seq && a->finished == b->finished &&
           a->failure == b->failure && (a->failure == WK_OK || a->failure_seq == b->failure_seq);
}

/* The sender of the frame at p[0..n): transcript, or live by the sender mode. */
static uint32_t sender_of(uint8_t mode, const uint8_t *p, size_t n)
{
    switch (mode & 3) {
    case 2: {
        const uint8_t *q = p;
        uint64_t t;
        if (wk_colloq_varint_get(&q, p + n, &t) == 1 && t < plan->transition_count)
            return plan->transitions[t].sender;
        return 0;
    }
    case 3: return 1;
    default: return WK_COLLOQ_SENDER_TRANSCRIPT;
    }
}

static uint32_t crc_add(uint32_t c, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return c;
}

typedef struct verdict {
    unsigned frames;
    uint32_t crc;
    wk_code failure;
    uint64_t failure_seq;
} verdict;

static char line_a[1 << 16], line_b[1 << 16];

/* Whether two frames give the same trace line (both written whole). */
static bool same_lines(const wk_colloq_frame *x, const wk_colloq_frame *y)
{
    wk_error err;
    wk_out a = {(uint8_t *)line_a, sizeof line_a, 0}, b = {(uint8_t *)line_b, sizeof line_b, 0};
    return wk_colloq_trace_frame_encode(plan, x, &a, &err) == WK_DONE &&
           wk_colloq_trace_frame_encode(plan, y, &b, &err) == WK_DONE && a.pos == b.pos &&
           memcmp(line_a, line_b, a.pos) == 0;
}

/* Per-message _decode of an accepted frame's payload gives the receive's values. */
static void check_message_decode(const fgat_frame *g, const uint8_t *payload, size_t n)
{
    static fgat_frame h;
    wk_error err;
    wk_in in = {payload, n, 0};
    h.transition = g->transition;
    h.seq = g->seq;
    wk_result r;
    switch (g->transition) {
    case FGAT_T_Busy_Empty_left:
    case FGAT_T_Start_Empty_right: r = fgat_Empty_decode(&h.as.Empty, &in, &err); break;
    case FGAT_T_Busy_Mixed_right: r = fgat_Mixed_decode(&h.as.Mixed, &in, &err); break;
    case FGAT_T_Busy_Options_left:
    case FGAT_T_Busy_Options_right: r = fgat_Options_decode(&h.as.Options, &in, &err); break;
    case FGAT_T_Busy_Scalars_right:
    case FGAT_T_Start_Scalars_left: r = fgat_Scalars_decode(&h.as.Scalars, &in, &err); break;
    case FGAT_T_Busy_Wide_left: r = fgat_Wide_decode(&h.as.Wide, &in, &err); break;
    default: CHECK(false); return;
    }
    CHECK(r == WK_DONE && in.pos == n);
    static wk_colloq_frame f1, f2;
    CHECK(fgat_frame_to_colloq(g, &f1, &err) == WK_OK);
    CHECK(fgat_frame_to_colloq(&h, &f2, &err) == WK_OK);
    CHECK(same_lines(&f1, &f2));
}

/* Pass A: the whole stream, step by step, both receivers. */
static verdict pass_a(uint8_t mode, uint8_t seq_byte, const uint8_t *data, size_t size)
{
    static wk_colloq_frame f;
    static fgat_frame g;
    static uint8_t enc[1 << 12];
    wk_colloq_session s;
    fgat_session gs;
    start(mode, seq_byte, &s);
    to_gen(&s, &gs);
    wk_in a = {data, size, 0}, b = a;
    verdict v = {0, 0, WK_OK, 0};
    for (;;) {
        size_t at = a.pos;
        uint32_t sender = sender_of(mode, data + at, size - at);
        wk_error e1, e2;
        wk_error_clear(&e1);
        wk_error_clear(&e2);
        wk_result r1 = wk_colloq_session_step(&s, dec, &a, sender, &f, &e1);
        fuzz_alloc_begin();
        wk_result r2 = fgat_receive(&gs, sender, &b, &g, &e2);
        FUZZ_ALLOC_NONE();
        CHECK(r1 == r2);
        CHECK(a.pos == b.pos);
        CHECK(same_session(&s, &gs));
        if (r1 == WK_ERROR) {
            CHECK(e1.code == e2.code && e1.code == s.failure);
            CHECK(e1.has_offset == e2.has_offset);
            if (e1.has_offset) CHECK(e1.offset == e2.offset && e1.offset <= size - at);
            CHECK(wk_code_category(e2.code) == WK_CAT_PEER_PROTOCOL);
            /* the failure stays */
            wk_in b2 = b;
            CHECK(fgat_receive(&gs, sender, &b2, &g, &e2) == WK_ERROR && e2.code == s.failure && b2.pos == b.pos);
            v.failure = s.failure;
            v.failure_seq = s.failure_seq;
            return v;
        }
        if (r1 == WK_NEED_INPUT) {
            wk_error e3, e4;
            wk_code c1 = (wk_colloq_session_finish(&s, &a, &e3) == WK_DONE ? WK_OK : e3.code);
            wk_result r4 = fgat_session_finish(&gs, &b, &e4);
            CHECK((c1 == WK_OK) == (r4 == WK_DONE));
            if (c1 != WK_OK) CHECK(c1 == e4.code);
            CHECK(same_session(&s, &gs));
            v.failure = s.failure;
            v.failure_seq = s.failure_seq;
            return v;
        }
        /* accepted: the same values, and both encoders write exactly the bytes consumed */
        size_t n = a.pos - at;
        static wk_colloq_frame gf;
        wk_error err;
        CHECK(fgat_frame_to_colloq(&g, &gf, &err) == WK_OK);
        CHECK(same_lines(&f, &gf));
        CHECK(g.transition == f.transition && g.seq == f.seq && gf.payload_len == f.payload_len);
        CHECK(fgat_frame_size(&g) == n);
        wk_out o = {enc, sizeof enc, 0};
        CHECK(fgat_frame_encode(&g, &o, &err) == WK_DONE && o.pos == n && memcmp(enc, data + at, n) == 0);
        if (n) {
            wk_out small = {enc, n - 1, 0};
            CHECK(fgat_frame_encode(&g, &small, &err) == WK_NEED_OUTPUT && small.pos == 0);
        }
        o.pos = 0;
        CHECK(wk_colloq_binary_encode(plan, &gf, &o, &err) == WK_DONE && o.pos == n &&
              memcmp(enc, data + at, n) == 0);
        static fgat_frame back;
        CHECK(fgat_frame_from_colloq(&f, &back, &err) == WK_OK);
        CHECK(fgat_frame_size(&back) == n);
        check_message_decode(&g, data + at + n - f.payload_len, f.payload_len);
        v.frames++;
        v.crc = crc_add(v.crc, data + at, n);
    }
}

/* Pass B: both receivers through the contract harness (fuzz/fuzz_drive.h): in pushes of the
 * chosen size (each an exact-size heap copy) and whole, every call checked against the contract,
 * both runs the same outcome, and the whole run's verdict is pass A's. The generic one is a
 * wk_colloq_reader continuing the starting session (adapter tests/contract/wk_contract_colloq.h);
 * the generated fgat_receive, which reads whole frames, gets the reader's buffering here (the
 * start of a frame a push ends inside is kept and completed from the next pushes). */
typedef struct drive_ctx {
    uint8_t mode;
    const uint8_t *data;
    size_t size;
    verdict v;
    uint64_t at; /* input offset of the next frame */
} drive_ctx;

static void drive_begin(drive_ctx *x)
{
    x->v = (verdict){0, 0, WK_OK, 0};
    x->at = 0;
}

static void drive_frame(drive_ctx *x, uint64_t end)
{
    CHECK(end > x->at && end <= x->size);
    x->v.frames++;
    x->v.crc = crc_add(x->v.crc, x->data + x->at, (size_t)(end - x->at));
    x->at = end;
}

static uint32_t generic_sender(wk_contract_colloq *m, uint64_t at)
{
    drive_ctx *x = m->user;
    return sender_of(x->mode, x->data + at, x->size - (size_t)at);
}

static bool generic_frame(wk_contract *c, wk_contract_colloq *m)
{
    (void)c;
    if (m->frames == 1) drive_begin(m->user); /* a run's first frame (counted before the call) */
    drive_frame(m->user, wk_colloq_reader_consumed_get(m->r));
    return true;
}

/* The generated receiver as a streaming object. */
typedef struct gen_reader {
    drive_ctx *x;
    wk_colloq_session start;
    fgat_session s;
    fgat_frame f;
    uint8_t buf[3 * WK_COLLOQ_VARINT_MAX_LEN + 65536]; /* one frame: the headers, the ceiling */
    size_t blen;
    uint64_t taken; /* input bytes consumed (buf included) */
    bool failed;
    wk_error error; /* offsets from the stream's first byte */
} gen_reader;

static bool g_reset(void *obj, void *ctx)
{
    (void)ctx;
    gen_reader *g = obj;
    to_gen(&g->start, &g->s);
    g->blen = 0;
    g->taken = 0;
    g->failed = false;
    drive_begin(g->x);
    return true;
}

static wk_result g_fail(gen_reader *g, wk_error *err)
{
    g->failed = true;
    g->error = *err;
    if (g->error.has_offset) g->error.offset += g->taken - g->blen;
    *err = g->error;
    return WK_ERROR;
}

static wk_result g_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    gen_reader *g = obj;
    CHECK(out == NULL);
    if (g->failed) {
        *err = g->error;
        return WK_ERROR;
    }
    const drive_ctx *x = g->x;
    uint64_t at = g->taken - g->blen;
    uint32_t sender = sender_of(x->mode, x->data + at, x->size - (size_t)at);
    size_t avail = in->size - in->pos;
    if (g->blen == 0) { /* a frame whole in the push is read in place */
        wk_in v = *in;
        wk_result r = fgat_receive(&g->s, sender, &v, &g->f, err);
        if (r == WK_ERROR) return g_fail(g, err);
        if (r == WK_DONE) {
            g->taken += v.pos - in->pos;
            in->pos = v.pos;
            return WK_EVENT;
        }
        CHECK(r == WK_NEED_INPUT && v.pos == in->pos && avail < sizeof g->buf);
        if (avail) memcpy(g->buf, in->src + in->pos, avail);
        g->blen = avail;
        g->taken += avail;
        in->pos = in->size;
        return WK_NEED_INPUT;
    }
    size_t old = g->blen, add = avail < sizeof g->buf - old ? avail : sizeof g->buf - old;
    if (add) memcpy(g->buf + old, in->src + in->pos, add);
    wk_in v = {g->buf, old + add, 0};
    wk_result r = fgat_receive(&g->s, sender, &v, &g->f, err);
    if (r == WK_ERROR) return g_fail(g, err);
    if (r == WK_DONE) {
        CHECK(v.pos > old);
        g->blen = 0;
        g->taken += v.pos - old;
        in->pos += v.pos - old;
        return WK_EVENT;
    }
    CHECK(r == WK_NEED_INPUT && add == avail);
    g->blen = old + add;
    g->taken += add;
    in->pos += add;
    return WK_NEED_INPUT;
}

static wk_result g_finish(void *obj, const wk_in *rest, wk_error *err)
{
    gen_reader *g = obj;
    if (g->failed) {
        *err = g->error;
        return WK_ERROR;
    }
    size_t more = rest && rest->pos < rest->size ? rest->size - rest->pos : 0;
    wk_in held = {g->buf, g->blen, 0};
    if (fgat_session_finish(&g->s, g->blen ? &held : rest, err) == WK_DONE) return WK_DONE;
    g->failed = true;
    g->error = *err;
    if (!g->error.has_offset) { /* truncated / after-final: where the input ends */
        g->error.has_offset = true;
        g->error.offset = g->taken + more;
    }
    *err = g->error;
    return WK_ERROR;
}

static bool g_event(wk_contract *c, void *obj)
{
    gen_reader *g = obj;
    wk_contract_record_u64(c, g->f.transition);
    wk_contract_record_u64(c, g->f.seq);
    CHECK(g->f.seq + 1 == g->s.next_seq && g->s.failure == WK_OK);
    drive_frame(g->x, g->taken - g->blen);
    return true;
}

static bool g_end(wk_contract *c, void *obj)
{
    gen_reader *g = obj;
    uint64_t rec[] = {g->s.state, g->s.next_seq, g->s.finished, (uint64_t)g->s.failure,
                      g->s.failure == WK_OK ? 0 : g->s.failure_seq};
    for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++) wk_contract_record_u64(c, rec[i]);
    if (c->oc.verdict == WK_ERROR) {
        CHECK(g->s.failure != WK_OK && c->oc.error.code == g->s.failure);
        CHECK(wk_code_category(g->s.failure) == WK_CAT_PEER_PROTOCOL);
    }
    return true;
}

static const wk_contract_ops gen_reader_ops = {"fgat_receive", g_reset, NULL, g_step, g_finish,
                                               g_event, g_end, false, 0, NULL};

static verdict pass_b(uint8_t mode, uint8_t seq_byte, const uint8_t *data, size_t size, bool generated)
{
    static const size_t pushes[8] = {1, 2, 3, 5, 8, 13, 64, 0};
    size_t push = pushes[(mode >> 2) & 7];
    drive_ctx x = {mode, data, size, {0, 0, WK_OK, 0}, 0};
    wk_colloq_session s;
    start(mode, seq_byte, &s);
    if (generated) {
        static gen_reader g;
        g.x = &x;
        g.start = s;
        fuzz_drive(&gen_reader_ops, &g, NULL, data, size, push, 0);
        x.v.failure = g.s.failure;
        x.v.failure_seq = g.s.failure_seq;
    } else {
        static wk_contract_colloq m;
        wk_contract_colloq_setup(&m, plan, WK_COLLOQ_WIRE_BINARY, WK_COLLOQ_SENDER_TRANSCRIPT);
        m.params.session = &s;
        m.sender_at = generic_sender;
        m.on_event = generic_frame;
        m.user = &x;
        fuzz_drive(&wk_contract_colloq_ops, &m, NULL, data, size, push, 0);
        x.v.failure = m.end.failure;
        x.v.failure_seq = m.end.failure_seq;
    }
    return x.v;
}

static bool same_verdict(const verdict *x, const verdict *y)
{
    return x->frames == y->frames && x->crc == y->crc && x->failure == y->failure &&
           (x->failure == WK_OK || x->failure_seq == y->failure_seq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size < 2) return 0;
    uint8_t mode = data[0], seq_byte = data[1];
    data += 2;
    size -= 2;
    verdict a = pass_a(mode, seq_byte, data, size);
    verdict b1 = pass_b(mode, seq_byte, data, size, false);
    verdict b2 = pass_b(mode, seq_byte, data, size, true);
    CHECK(same_verdict(&a, &b1));
    CHECK(same_verdict(&a, &b2));
    return 0;
}
