/* ILTP sessions (Lace-060), sans-I/O: prefacing, role-ordered establishment, symmetric rounds to
 * fixed point, re-prefacing, budgets and deadlines, over the reader/writer stack. The application
 * is content-addressed Blob sync over the caller's in-memory store index; Blob data moves
 * through events (iltp.h, "Sessions"), never through the session's memory.
 *
 * Decisions where the seed is silent (docs/iltp.md):
 * - Our advertisement schema advertises the Type field only: each Blob h is
 *   `Advertised('B.<h>.H3')` followed by `AdvertisedField('B.<h>.H3','Type','0','B')`, sorted by
 *   hash bytes. A peer advertisement must follow the same schema exactly.
 * - Requests are sent sorted by hash; responses are sent in that order and accepted in any order.
 * - Received-control accounting counts every decoded byte but response Blob records, per phase:
 *   prefacing, establishment, and each round; it is charged as bytes arrive (the item decoder's
 *   limit is the phase's remaining budget). Response records are bounded by the item caps.
 *   During a local replacement, discarded old records count in full (at their first line).
 * - The phase deadline restarts whenever the phase changes (a new round is a new phase).
 * - Output is a short queue of operations; the advertisement and the responses are written
 *   lazily as output drains (the advertisement from the store index, rows in pieces of one
 *   item; each response record from data the host hands over). Recv stops consuming while more
 *   than WK_ILTP_SESSION_OUTPUT_BOUND operations wait.
 * - Our fence waits until every Blob we requested is stored (wk_iltp_session_blob_stored), not
 *   only received: the round's incoming obligations settle when the Blobs are admitted.
 * - A local store advance during a round is noticed at the next fixed point (the store's
 *   sequence number above the round's snapshot opens another round).
 */
#include "iltp_internal.h"
#include <stdarg.h>
#include <stdlib.h> /* qsort, bsearch (no allocation) */
#include <stdio.h>
#include <string.h>

typedef uint8_t hash_t[32];

enum op_kind { OP_PREFACE, OP_CTL, OP_ADV, OP_RESP, OP_END };
typedef struct op {
    enum op_kind kind;
    uint8_t *bytes; /* OP_CTL: one complete batch of items */
    size_t len;
} op;

#define OPS_MAX 32        /* the hard size of the ring; recv keeps it at most BOUND + a few */
#define STAGE 8192        /* generated text: advertisement rows, a response head */
#define ADV_ROWS_MAX 160  /* bytes of one Blob's two advertisement rows, rounded up */

typedef struct hset { hash_t *v; size_t n, cap; } hset;

/* got[] states of our requests */
enum { G_NONE = 0, G_ARRIVING, G_ARRIVED, G_STORED };
/* the response being written */
enum { TX_NONE = 0, TX_HEAD, TX_DATA, TX_FLUSH };
/* what follows when the piece in the writer is done */
enum { AFTER_NONE = 0, AFTER_POP, AFTER_RESP };

struct wk_iltp_session {
    wk_iltp_session_params p;
    wk_allocator a;
    wk_iltp_offer local_decode, local_encode;
    char decode_text[WK_ILTP_PREFACE_MAX], encode_text[WK_ILTP_PREFACE_MAX];
    uint8_t *operand;
    size_t operand_len;
    wk_iltp_reader *rd;
    wk_iltp_writer *wr;
    wk_iltp_nonce_gen ng;
    hash_t local_nonce, peer_nonce;
    bool peer_nonce_known;
    wk_iltp_session_state state;
    wk_error failure;
    uint64_t now;
    /* output: a ring of operations */
    op ops[OPS_MAX];
    size_t ops_head, ops_n, queued_bytes;
    bool selected;              /* the writer has an encoding for the operation at the head */
    bool preface_written;       /* our current preface is fully written */
    bool preface_begun;         /* the writer holds part of it (an accepted batch) */
    wk_iltp_encoding enc_out_pending;
    bool enc_out_known;
    wk_in cur;                  /* the piece in the writer */
    bool cur_active, cur_flush;
    int cur_after;
    bool end_written;
    uint8_t stage[STAGE];
    /* the advertisement being written (OP_ADV) */
    bool adv_started, adv_have_last;
    hash_t adv_last;
    size_t adv_rows;
    /* the response being written (OP_RESP) */
    int tx_phase;
    bool tx_last;               /* a replacement: finish this record, then drop the op */
    size_t tx_i;                /* next index in peer_req_set */
    hash_t tx_hash;
    uint64_t tx_len, tx_off;
    /* establishment */
    bool sent_proof, got_proof, sent_operand, got_operand;
    /* round */
    uint64_t snap;              /* the store's sequence number at the round's start */
    bool adv_sent, peer_adv, req_sent, peer_req, fence_sent, peer_fence;
    hset peer_adv_set, our_req, peer_req_set;
    uint8_t *got;               /* got[i]: the state of our_req.v[i] */
    size_t got_cap;
    size_t missing_arrive, missing_store;
    uint64_t out_bytes_left;
    /* the incoming streamed Blob */
    bool rx_active, rx_discard;
    size_t rx_idx;
    bool local_closing;         /* our end mark is queued: we take part in no further round */
    bool quiet;                 /* local store advances open no round (wk_iltp_session_quiesce) */
    bool round_from_fixed;      /* this round was opened by our store change at fixed point */
    /* accounting */
    uint64_t ctl_bytes, deadline;
    wk_iltp_session_event ev;
    wk_iltp_session_stats st;
};

static const char *const state_names[] = {"prefacing", "establishing", "round", "fixed-point",
                                          "closed", "failed"};

const char *wk_iltp_session_state_name(wk_iltp_session_state st)
{
    return st <= WK_ILTP_SESSION_FAILED ? state_names[st] : "?";
}
wk_iltp_session_state wk_iltp_session_state_get(const wk_iltp_session *s) { return s->state; }

const char *wk_iltp_assurance_name(wk_iltp_assurance a)
{
    switch (a) {
    case WK_ILTP_ASSURANCE_DISABLED: return "Disabled";
    case WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL: return "ConfidentialChannel";
    case WK_ILTP_ASSURANCE_CHANNEL_BOUND: return "ChannelBound";
    }
    return "?";
}

void wk_iltp_session_stats_get(const wk_iltp_session *s, wk_iltp_session_stats *out)
{
    *out = s->st;
    out->pending_in = s->state == WK_ILTP_SESSION_ROUND ? s->missing_store : 0;
    out->pending_out = s->state == WK_ILTP_SESSION_ROUND && s->peer_req && s->peer_req_set.n > s->tx_i
                           ? s->peer_req_set.n - s->tx_i : 0;
    out->pending_out_bytes = s->state == WK_ILTP_SESSION_ROUND ? s->out_bytes_left : 0;
}
bool wk_iltp_session_closed_locally(const wk_iltp_session *s) { return s->end_written; }
bool wk_iltp_session_closing(const wk_iltp_session *s) { return s->local_closing; }
size_t wk_iltp_session_queued(const wk_iltp_session *s) { return s->queued_bytes; }
const wk_iltp_session_event *wk_iltp_session_event_get(const wk_iltp_session *s) { return &s->ev; }

/* ---- memory (the caller's allocator only) -------------------------------------------------- */
static void *s_alloc(wk_iltp_session *s, size_t n) { return s->a.alloc(s->a.opaque, n ? n : 1); }
static void s_free(wk_iltp_session *s, void *p) { if (p) s->a.free(s->a.opaque, p); }

static int hcmp(const void *a, const void *b) { return memcmp(a, b, 32); }

static bool hset_add(wk_iltp_session *s, hset *h, const uint8_t x[32])
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *h->v) return false;
        hash_t *v = s_alloc(s, cap * sizeof *v);
        if (!v) return false;
        if (h->n) memcpy(v, h->v, h->n * sizeof *v);
        s_free(s, h->v);
        h->v = v;
        h->cap = cap;
    }
    memcpy(h->v[h->n++], x, 32);
    return true;
}
static void hset_sort(hset *h) { if (h->n) qsort(h->v, h->n, sizeof h->v[0], hcmp); }
static bool hset_has_dup(const hset *h)
{
    for (size_t i = 1; i < h->n; i++)
        if (memcmp(h->v[i - 1], h->v[i], 32) == 0) return true;
    return false;
}
static const hash_t *hset_find(const hset *h, const uint8_t x[32])
{
    return h->n ? bsearch(x, h->v, h->n, sizeof h->v[0], hcmp) : NULL;
}
static void hset_clear(hset *h) { h->n = 0; }
static void hset_free(wk_iltp_session *s, hset *h) { s_free(s, h->v); h->v = NULL; h->n = h->cap = 0; }

/* ------------------------------------------------------------------------------------------- */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void trace(const wk_iltp_session *s, bool outgoing, const char *fmt, ...)
{
    if (!s->p.trace) return;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->p.trace(s->p.trace_ctx, outgoing, line);
}

static const char *hash_text(const uint8_t h[32], char out[44])
{
    wk_b64a_encode(h, 32, out);
    out[43] = 0;
    return out;
}

static wk_result sfail(wk_iltp_session *s, wk_error *err, const wk_error *e)
{
    s->state = WK_ILTP_SESSION_FAILED;
    s->failure = *e;
    if (err) *err = s->failure;
    return WK_ERROR;
}

static wk_result sfail_code(wk_iltp_session *s, wk_error *err, wk_code code, uint64_t off, const char *what)
{
    wk_error e;
    wk_error_set(&e, code, off, "%s", what);
    return sfail(s, err, &e);
}

/* Fills the event slot (shared by recv's and send's events). */
static wk_result event(wk_iltp_session *s, wk_iltp_session_event_kind kind, const uint8_t hash[32], uint64_t length,
                       uint64_t offset, const uint8_t *data, size_t len)
{
    s->ev.kind = kind;
    memcpy(s->ev.hash, hash, 32);
    s->ev.length = length;
    s->ev.offset = offset;
    s->ev.data = data;
    s->ev.len = len;
    return WK_EVENT;
}

static wk_result nomem(wk_iltp_session *s, wk_error *err, const char *what)
{
    return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, what);
}

/* ---- the output queue ---------------------------------------------------------------------- */
static op *op_at(wk_iltp_session *s, size_t i) { return &s->ops[(s->ops_head + i) % OPS_MAX]; }

static bool push_op(wk_iltp_session *s, enum op_kind kind, uint8_t *bytes, size_t len)
{
    if (s->ops_n == OPS_MAX) return false; /* cannot happen: recv stops at the bound */
    op *o = op_at(s, s->ops_n++);
    o->kind = kind;
    o->bytes = bytes;
    o->len = len;
    s->queued_bytes += len;
    return true;
}

static void pop_op(wk_iltp_session *s)
{
    op *o = op_at(s, 0);
    s->queued_bytes -= o->len;
    s_free(s, o->bytes);
    o->bytes = NULL;
    s->ops_head = (s->ops_head + 1) % OPS_MAX;
    s->ops_n--;
}

/* Drops unaccepted output (a replacement). An operation already partly written is an accepted
 * batch: it completes (a response: the record in progress only). */
static void drop_ops(wk_iltp_session *s)
{
    size_t keep = 0;
    if (s->ops_n) {
        op *o = op_at(s, 0);
        bool started = s->cur_active || (o->kind == OP_RESP && s->tx_phase != TX_NONE) ||
                       (o->kind == OP_ADV && s->adv_started) || (o->kind == OP_PREFACE && s->preface_begun);
        if (started) {
            keep = 1;
            if (o->kind == OP_RESP) s->tx_last = true;
        }
    }
    while (s->ops_n > keep) {
        op *o = op_at(s, s->ops_n - 1);
        s->queued_bytes -= o->len;
        s_free(s, o->bytes);
        o->bytes = NULL;
        s->ops_n--;
    }
}

/* Queues one complete batch of control items (copied). */
static wk_code queue_ctl(wk_iltp_session *s, const void *bytes, size_t len, wk_error *err)
{
    uint8_t *b = s_alloc(s, len);
    if (!b) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "output queue");
    memcpy(b, bytes, len);
    if (!push_op(s, OP_CTL, b, len)) {
        s_free(s, b);
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    }
    s->st.items_out++;
    return WK_OK;
}

/* 'B.<43>.H3' (WK_ILTP_REF_LEN bytes) */
static void ref_text(const uint8_t h[32], char out[WK_ILTP_REF_LEN]) { wk_iltp_ref_format('B', h, out); }

/* 'B.<43>.H3' -> hash */
static bool parse_ref(const uint8_t *a, size_t n, uint8_t h[32])
{
    wk_in in = {a, n, 0};
    return wk_iltp_ref_parse(&in, 'B', h, NULL) == WK_DONE && in.pos == in.size;
}

/* The round's fence: the one-row block RoundComplete(). */
#define FENCE "RoundComplete()\n\n"
#define FENCE_LEN (sizeof FENCE - 1)
_Static_assert(FENCE_LEN == 17, "RoundComplete()\\n\\n is 17 bytes");

/* ------------------------------------------------------------------------------------------- */
static void phase_start(wk_iltp_session *s, wk_iltp_session_state st)
{
    s->state = st;
    s->ctl_bytes = 0;
    s->deadline = s->p.phase_timeout_ms ? s->now + s->p.phase_timeout_ms : 0;
}

static uint64_t budget(const wk_iltp_session *s)
{
    switch (s->state) {
    case WK_ILTP_SESSION_PREFACING: return s->p.budget_prefacing;
    case WK_ILTP_SESSION_ESTABLISHING: return s->p.budget_establishment;
    default: return s->p.budget_round;
    }
}

static wk_result budget_fail(wk_iltp_session *s, wk_error *err, uint64_t off)
{
    char what[100];
    snprintf(what, sizeof what, "%s received-control budget of %llu bytes exceeded",
             wk_iltp_session_state_name(s->state), (unsigned long long)budget(s));
    return sfail_code(s, err, WK_ERR_ILTP_BUDGET, off, what);
}

static wk_code queue_preface(wk_iltp_session *s, wk_error *err)
{
    if (wk_iltp_nonce_gen_next(&s->ng, s->peer_nonce_known ? s->peer_nonce : NULL, s->local_nonce, NULL, err) != WK_OK)
        return err ? err->code : WK_ERR_ILTP_NONCE_EXHAUSTED;
    if (!push_op(s, OP_PREFACE, NULL, 0)) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    /* `selected` stays as it is until the preface is written: operations ahead of it belong to
     * the old logical session and its encoding */
    s->preface_written = false;
    s->enc_out_known = false;
    return WK_OK;
}

/* Forgets the round's obligations (a new logical session). */
static void round_reset(wk_iltp_session *s)
{
    s->adv_sent = s->peer_adv = s->req_sent = s->peer_req = s->fence_sent = s->peer_fence = false;
    hset_clear(&s->peer_adv_set);
    hset_clear(&s->our_req);
    hset_clear(&s->peer_req_set);
    s->missing_arrive = s->missing_store = 0;
    s->out_bytes_left = 0;
    if (s->rx_active) {
        s->rx_active = false;
        s->rx_discard = true; /* the rest of its record is decoded and dropped */
    }
}

/* A new round: snapshot the store and queue our advertisement. */
static wk_code round_start(wk_iltp_session *s, wk_error *err)
{
    phase_start(s, WK_ILTP_SESSION_ROUND);
    s->st.rounds++;
    s->round_from_fixed = false;
    round_reset(s);
    s->snap = s->p.store.seq(s->p.store.ctx);
    if (!push_op(s, OP_ADV, NULL, 0)) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    s->adv_sent = true;
    return WK_OK;
}

static bool pred_is(const wk_iltp_fact_row *r, const char *name)
{
    size_t n = strlen(name);
    return r->predicate_len == n && memcmp(r->predicate, name, n) == 0;
}

static wk_result order_fail_at(wk_iltp_session *s, wk_error *err, uint64_t off, const char *what)
{
    return sfail_code(s, err, WK_ERR_ILTP_SESSION_ORDER, off, what);
}

static wk_result order_fail(wk_iltp_session *s, wk_error *err, const wk_iltp_item *it, const char *what)
{
    return order_fail_at(s, err, it->offset, what);
}

static wk_result on_advertisement(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    size_t pos = 0;
    wk_iltp_fact_row row, field;
    while (wk_iltp_fact_next(it->bytes, it->len, &pos, &row)) {
        const uint8_t *a;
        size_t al, ap = 0;
        uint8_t h[32];
        if (!pred_is(&row, "Advertised") || row.arity != 1)
            return order_fail(s, err, it, "advertisement block: expected Advertised/1");
        wk_iltp_fact_arg_next(&row, &ap, &a, &al);
        if (!parse_ref(a, al, h)) return order_fail(s, err, it, "advertisement names no B.<hash>.H3");
        if (!wk_iltp_fact_next(it->bytes, it->len, &pos, &field) || !pred_is(&field, "AdvertisedField") ||
            field.arity != 4)
            return order_fail(s, err, it, "Advertised must be followed by its AdvertisedField row");
        const uint8_t *v[4];
        size_t vl[4];
        ap = 0;
        for (int k = 0; k < 4; k++) wk_iltp_fact_arg_next(&field, &ap, &v[k], &vl[k]);
        uint8_t h2[32];
        if (!parse_ref(v[0], vl[0], h2) || memcmp(h, h2, 32) != 0 || vl[1] != 4 || memcmp(v[1], "Type", 4) ||
            vl[2] != 1 || v[2][0] != '0' || vl[3] != 1 || v[3][0] != 'B')
            return order_fail(s, err, it, "AdvertisedField row outside the schema (Type '0' 'B')");
        if (!hset_add(s, &s->peer_adv_set, h)) return nomem(s, err, "advertisement");
    }
    hset_sort(&s->peer_adv_set);
    if (hset_has_dup(&s->peer_adv_set)) return order_fail(s, err, it, "duplicate advertisement record");
    s->peer_adv = true;
    /* our request: what the peer has and we lack (sorted, as the peer's set is) */
    for (size_t i = 0; i < s->peer_adv_set.n; i++)
        if (!s->p.store.has(s->p.store.ctx, s->peer_adv_set.v[i], NULL, NULL) &&
            !hset_add(s, &s->our_req, s->peer_adv_set.v[i]))
            return nomem(s, err, "request");
    if (s->our_req.n > s->got_cap) {
        uint8_t *g = s_alloc(s, s->our_req.n);
        if (!g) return nomem(s, err, "request");
        s_free(s, s->got);
        s->got = g;
        s->got_cap = s->our_req.n;
    }
    if (s->our_req.n) memset(s->got, G_NONE, s->our_req.n);
    s->missing_arrive = s->missing_store = s->our_req.n;
    /* the block: MayRequest('B.<h>.H3')\n per hash, then the blank line */
    size_t row_len = 12 + 48 + 3, len = s->our_req.n * row_len + 1;
    uint8_t *b = s_alloc(s, len);
    if (!b) return nomem(s, err, "request");
    for (size_t i = 0; i < s->our_req.n; i++) {
        uint8_t *r = b + i * row_len;
        memcpy(r, "MayRequest('", 12);
        ref_text(s->our_req.v[i], (char *)r + 12);
        memcpy(r + 60, "')\n", 3);
    }
    b[len - 1] = '\n';
    if (!push_op(s, OP_CTL, b, len)) {
        s_free(s, b);
        return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    }
    s->st.items_out++;
    s->req_sent = true;
    trace(s, true, "facts %zu request", s->our_req.n);
    return WK_DONE;
}

static wk_result on_request(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    size_t pos = 0;
    wk_iltp_fact_row row;
    s->out_bytes_left = 0;
    while (wk_iltp_fact_next(it->bytes, it->len, &pos, &row)) {
        const uint8_t *a;
        size_t al, ap = 0;
        uint8_t h[32];
        uint64_t len = 0, seq = 0;
        if (!pred_is(&row, "MayRequest") || row.arity != 1)
            return order_fail(s, err, it, "request block: expected MayRequest/1");
        wk_iltp_fact_arg_next(&row, &ap, &a, &al);
        if (!parse_ref(a, al, h)) return order_fail(s, err, it, "request names no B.<hash>.H3");
        if (!s->p.store.has(s->p.store.ctx, h, &len, &seq) || seq > s->snap)
            return order_fail(s, err, it, "request for a Blob we did not advertise");
        if (!hset_add(s, &s->peer_req_set, h)) return nomem(s, err, "request");
        s->out_bytes_left += len;
    }
    hset_sort(&s->peer_req_set);
    if (hset_has_dup(&s->peer_req_set)) return order_fail(s, err, it, "duplicate request");
    s->peer_req = true;
    if (s->peer_req_set.n) {
        if (!push_op(s, OP_RESP, NULL, 0)) return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
        s->tx_i = 0;
        s->tx_phase = TX_NONE;
        s->tx_last = false;
    }
    return WK_DONE;
}

/* Queues our fence once our obligations settle; ends the round when both fences are in. */
static wk_result settle(wk_iltp_session *s, wk_error *err)
{
    if (s->state != WK_ILTP_SESSION_ROUND) return WK_DONE;
    if (!s->fence_sent && s->peer_req && s->req_sent && s->missing_store == 0) {
        wk_error e;
        if (queue_ctl(s, FENCE, FENCE_LEN, &e) != WK_OK) return sfail(s, err, &e);
        s->fence_sent = true;
        trace(s, true, "facts 1 fence");
    }
    if (s->fence_sent && s->peer_fence) {
        wk_error e;
        if (s->our_req.n || s->peer_req_set.n) {
            if (round_start(s, &e) != WK_OK) return sfail(s, err, &e);
        } else {
            phase_start(s, WK_ILTP_SESSION_FIXED_POINT);
            /* a local store advance during the round opens the next one */
            if (!s->local_closing && !s->quiet && s->p.store.seq(s->p.store.ctx) > s->snap) {
                if (round_start(s, &e) != WK_OK) return sfail(s, err, &e);
                s->round_from_fixed = true;
            }
        }
    }
    return WK_DONE;
}

static bool is_fence(const wk_iltp_item *it)
{
    return it->kind == WK_ILTP_ITEM_FACTS && it->len == FENCE_LEN && memcmp(it->bytes, FENCE, FENCE_LEN) == 0;
}

/* Why a record cannot be here (the state's expected input). NULL: it can (a response). */
static const char *record_misplaced(const wk_iltp_session *s)
{
    switch (s->state) {
    case WK_ILTP_SESSION_ESTABLISHING:
        return s->got_proof ? "expected the peer's operand Blob" : "expected the peer's proof (a Seal or the zero-row block)";
    case WK_ILTP_SESSION_FIXED_POINT: return "at fixed point only an advertisement opens a round";
    case WK_ILTP_SESSION_ROUND:
        if (!s->peer_adv) return "expected the advertisement block";
        if (!s->peer_req) return "expected the request block";
        return NULL;
    default: return "input after the session closed";
    }
}

static wk_result on_round_item(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FIXED_POINT) {
        if (it->kind != WK_ILTP_ITEM_FACTS || is_fence(it))
            return order_fail(s, err, it, "at fixed point only an advertisement opens a round");
        if (s->local_closing) {
            /* the peer opened a round that crossed our bounded completion: we end without it */
            trace(s, false, "(round crossing our close, discarded)");
            return WK_DONE;
        }
        wk_error e;
        if (round_start(s, &e) != WK_OK) return sfail(s, err, &e);
    }
    if (!s->peer_adv) {
        if (it->kind != WK_ILTP_ITEM_FACTS || is_fence(it)) return order_fail(s, err, it, "expected the advertisement block");
        s->round_from_fixed = false;
        if (on_advertisement(s, it, err) != WK_DONE) return WK_ERROR;
    } else if (!s->peer_req) {
        if (it->kind != WK_ILTP_ITEM_FACTS || is_fence(it)) return order_fail(s, err, it, "expected the request block");
        if (on_request(s, it, err) != WK_DONE) return WK_ERROR;
    } else if (it->kind == WK_ILTP_ITEM_RECORD) {
        return order_fail(s, err, it, "a response must be a Blob record");
    } else if (is_fence(it)) {
        if (s->peer_fence) return order_fail(s, err, it, "duplicate fence");
        if (s->missing_arrive) return order_fail(s, err, it, "fence before every requested response");
        s->peer_fence = true;
    } else {
        return order_fail(s, err, it, "expected a response or the fence");
    }
    return settle(s, err);
}

/* A streamed Blob record event from the reader. Returns WK_EVENT to hand it to the host,
 * WK_DONE when it was absorbed (a discarded old record), or WK_ERROR. */
static wk_result on_blob_event(wk_iltp_session *s, const wk_iltp_blob_event *be, wk_error *err)
{
    char h[44];
    switch (be->kind) {
    case WK_ILTP_BLOB_BEGIN: {
        if (s->state == WK_ILTP_SESSION_PREFACING) {
            /* an old peer record during our replacement: decoded and dropped, charged in full */
            uint64_t size = wk_iltp_blob_record_size((size_t)be->length);
            if (size > budget(s) - s->ctl_bytes) return budget_fail(s, err, be->offset);
            s->ctl_bytes += size;
            s->rx_discard = true;
            s->st.items_in++;
            s->st.raw_in += size;
            trace(s, false, "record B %s %llu (old session, discarded)", hash_text(be->hash, h),
                  (unsigned long long)be->length);
            return WK_DONE;
        }
        const char *why = record_misplaced(s);
        if (why) return order_fail_at(s, err, be->offset, why);
        const hash_t *slot = hset_find(&s->our_req, be->hash);
        if (!slot) return order_fail_at(s, err, be->offset, "unrequested response");
        size_t idx = (size_t)(slot - s->our_req.v);
        if (s->got[idx] != G_NONE) return order_fail_at(s, err, be->offset, "duplicate response");
        s->got[idx] = G_ARRIVING;
        s->rx_active = true;
        s->rx_idx = idx;
        s->st.items_in++;
        s->st.raw_in += wk_iltp_blob_record_size((size_t)be->length) - be->length;
        trace(s, false, "record B %s %llu", hash_text(be->hash, h), (unsigned long long)be->length);
        return event(s, WK_ILTP_SESSION_BLOB_BEGIN, be->hash, be->length, 0, NULL, 0);
    }
    case WK_ILTP_BLOB_DATA:
        if (s->rx_discard) return WK_DONE;
        s->st.raw_in += be->len;
        s->st.data_in += be->len;
        return event(s, WK_ILTP_SESSION_BLOB_DATA, be->hash, be->length, be->done - be->len, be->data, be->len);
    case WK_ILTP_BLOB_END:
        if (s->rx_discard) {
            s->rx_discard = false;
            return WK_DONE;
        }
        s->rx_active = false;
        s->got[s->rx_idx] = G_ARRIVED;
        s->missing_arrive--;
        return event(s, WK_ILTP_SESSION_BLOB_END, be->hash, be->length, be->length, NULL, 0);
    }
    return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "unknown Blob event");
}

wk_code wk_iltp_session_blob_stored(wk_iltp_session *s, const uint8_t hash[32], const wk_error *failure,
                                    wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return s->failure.code;
    }
    const hash_t *slot = s->state == WK_ILTP_SESSION_ROUND ? hset_find(&s->our_req, hash) : NULL;
    if (!slot || s->got[slot - s->our_req.v] != G_ARRIVED) return WK_OK; /* a replaced session's */
    if (failure) {
        wk_error e;
        wk_error_set(&e, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store: %.100s", failure->msg);
        sfail(s, err, &e);
        return WK_ERR_ILTP_STORE;
    }
    s->got[slot - s->our_req.v] = G_STORED;
    s->missing_store--;
    s->st.blobs_in++;
    if (settle(s, err) != WK_DONE) return s->failure.code;
    return WK_OK;
}

/* The proof parameters of the current pair for the proof of `author`. */
static void proof_params(const wk_iltp_session *s, wk_iltp_side author, wk_iltp_proof_params *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->side = author;
    bool local0 = s->p.side == WK_ILTP_SIDE0;
    memcpy(pp->challenge_side0, local0 ? s->local_nonce : s->peer_nonce, 32);
    memcpy(pp->challenge_side1, local0 ? s->peer_nonce : s->local_nonce, 32);
    pp->bound = s->p.assurance == WK_ILTP_ASSURANCE_CHANNEL_BOUND;
    memcpy(pp->exporter, s->p.channel_exporter, 32);
    /* the By-secret: derived from the carrier seed under its own domain (docs/iltp.md) */
    wk_blake3_hasher h;
    static const char dom[] = "lace-wirekit/iltp/by-secret/v1";
    wk_blake3_init_derive_key(&h, dom, sizeof dom - 1);
    wk_blake3_update(&h, s->p.seed, 32);
    wk_blake3_finalize(&h, pp->by_secret, 32);
}

/* Queues our proof: the zero-row block (Disabled) or the Seal of our assurance's shape. */
static wk_code queue_proof(wk_iltp_session *s, wk_error *err)
{
    if (s->p.assurance == WK_ILTP_ASSURANCE_DISABLED) {
        wk_code c = queue_ctl(s, "\n", 1, err);
        if (c == WK_OK) trace(s, true, "facts 0 proof");
        return c;
    }
    wk_iltp_proof_params pp;
    proof_params(s, s->p.side, &pp);
    size_t n = wk_iltp_proof_size(&pp);
    uint8_t b[1024];
    wk_out o = {b, sizeof b, 0};
    if (n > sizeof b || wk_iltp_proof_encode(&pp, &o, err) != WK_DONE)
        return wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "proof");
    wk_code c = queue_ctl(s, b, o.pos, err);
    if (c == WK_OK) trace(s, true, "record S proof %s", wk_iltp_assurance_name(s->p.assurance));
    return c;
}

/* Checks the peer's proof item against our assurance (Lace-060): Disabled accepts the zero-row
 * block or a transcript-valid Seal of either shape and derives nothing; ConfidentialChannel and
 * ChannelBound require an exact proof of their own shape. */
static wk_result check_proof(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    bool zero = it->kind == WK_ILTP_ITEM_FACTS && it->rows == 0;
    bool disabled = s->p.assurance == WK_ILTP_ASSURANCE_DISABLED;
    if (zero && disabled) return WK_DONE;
    wk_iltp_proof_params pp;
    proof_params(s, s->p.side == WK_ILTP_SIDE0 ? WK_ILTP_SIDE1 : WK_ILTP_SIDE0, &pp);
    wk_error e;
    if (wk_iltp_proof_check(it, &pp, disabled ? WK_ILTP_PROOF_STRUCTURAL : WK_ILTP_PROOF_EXACT, &e) != WK_OK)
        return sfail(s, err, &e);
    if (!disabled) s->st.proof_verified = true;
    return WK_DONE;
}

/* Queues our operand Blob record. */
static wk_result queue_operand(wk_iltp_session *s, wk_error *err)
{
    size_t need = wk_iltp_blob_record_size(s->operand_len);
    uint8_t *b = s_alloc(s, need);
    if (!b) return nomem(s, err, "operand");
    wk_out out = {b, need, 0};
    wk_error e;
    if (wk_iltp_blob_encode(s->operand, s->operand_len, &out, &e) != WK_DONE) {
        s_free(s, b);
        return sfail(s, err, &e);
    }
    if (!push_op(s, OP_CTL, b, need)) {
        s_free(s, b);
        return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    }
    s->st.items_out++;
    s->sent_operand = true;
    return WK_DONE;
}

static wk_result on_establishment(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    if (!s->got_proof) {
        bool zero = it->kind == WK_ILTP_ITEM_FACTS && it->rows == 0;
        bool seal = it->kind == WK_ILTP_ITEM_RECORD && it->record.type == 'S';
        if (!zero && !seal) return order_fail(s, err, it, "expected the peer's proof (a Seal or the zero-row block)");
        if (check_proof(s, it, err) != WK_DONE) return WK_ERROR;
        s->got_proof = true;
        wk_iltp_reader_expect_operand(s->rd); /* the peer's next item is its operand */
        if (s->p.side == WK_ILTP_SIDE1) {
            wk_error e;
            if (queue_proof(s, &e) != WK_OK) return sfail(s, err, &e);
            s->sent_proof = true;
        } else {
            if (queue_operand(s, err) != WK_DONE) return WK_ERROR;
            trace(s, true, "record B operand %zu", s->operand_len);
        }
        return WK_DONE;
    }
    /* the peer operand (the item decoder enforced a Blob of at most 1 MiB) */
    if (it->kind != WK_ILTP_ITEM_RECORD || it->record.type != 'B') return order_fail(s, err, it, "expected the peer's operand Blob");
    s->got_operand = true;
    if (s->p.side == WK_ILTP_SIDE1) {
        if (queue_operand(s, err) != WK_DONE) return WK_ERROR;
        trace(s, true, "record B operand %zu", s->operand_len);
    }
    wk_error e;
    if (round_start(s, &e) != WK_OK) return sfail(s, err, &e);
    return WK_DONE;
}

/* A peer preface: pairs with ours (sent, or sent now for a peer-initiated replacement). */
static wk_result on_preface(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    wk_error e;
    bool replacing = s->state != WK_ILTP_SESSION_PREFACING;
    memcpy(s->peer_nonce, it->preface.nonce, 32);
    s->peer_nonce_known = true;
    if (replacing) {
        /* the peer replaced the logical session: unaccepted output is dropped, a fresh local
         * preface is the next accepted output */
        drop_ops(s);
        round_reset(s);
        if (queue_preface(s, &e) != WK_OK) return sfail(s, err, &e);
    }
    if (wk_iltp_nonce_pair_check(s->local_nonce, s->peer_nonce, &e) != WK_OK) return sfail(s, err, &e);
    const char *t;
    size_t tl;
    wk_iltp_encoding in = wk_iltp_offer_select(&it->preface.encode, &s->local_decode, &t, &tl);
    wk_iltp_encoding out = wk_iltp_offer_select(&s->local_encode, &it->preface.decode, &t, &tl);
    if (in == WK_ILTP_UNKNOWN || out == WK_ILTP_UNKNOWN)
        return sfail_code(s, err, WK_ERR_ILTP_OFFER, it->offset, "selected an encoding this build does not implement");
    if (wk_iltp_reader_begin(s->rd, in, &e) != WK_OK) return sfail(s, err, &e);
    s->enc_out_pending = out;
    s->enc_out_known = true;
    if (s->preface_written) {
        if (wk_iltp_writer_select(s->wr, out, &e) != WK_OK) return sfail(s, err, &e);
        s->selected = true;
    }
    s->st.enc_in = in;
    s->st.enc_out = out;
    s->st.sessions++;
    s->sent_proof = s->got_proof = s->sent_operand = s->got_operand = false;
    s->st.proof_verified = false;
    phase_start(s, WK_ILTP_SESSION_ESTABLISHING);
    if (s->p.side == WK_ILTP_SIDE0) {
        if (queue_proof(s, &e) != WK_OK) return sfail(s, err, &e);
        s->sent_proof = true;
    }
    return WK_DONE;
}

static wk_code check_deadline(wk_iltp_session *s, wk_error *err)
{
    if (s->deadline && s->now > s->deadline &&
        (s->state == WK_ILTP_SESSION_PREFACING || s->state == WK_ILTP_SESSION_ESTABLISHING ||
         s->state == WK_ILTP_SESSION_ROUND)) {
        char what[80];
        snprintf(what, sizeof what, "the %s phase deadline passed", wk_iltp_session_state_name(s->state));
        sfail_code(s, err, WK_ERR_ILTP_DEADLINE, WK_NO_OFFSET, what);
        return WK_ERR_ILTP_DEADLINE;
    }
    return WK_OK;
}

wk_code wk_iltp_session_tick(wk_iltp_session *s, uint64_t now_ms, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return s->failure.code;
    }
    if (now_ms > s->now) s->now = now_ms;
    return check_deadline(s, err);
}

wk_result wk_iltp_session_recv(wk_iltp_session *s, wk_in *in, wk_out *out, wk_error *err)
{
    (void)out;
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return WK_ERROR;
    }
    if (check_deadline(s, err) != WK_OK) return WK_ERROR;
    for (;;) {
        if (s->ops_n > WK_ILTP_SESSION_OUTPUT_BOUND) return WK_NEED_OUTPUT;
        uint64_t b = budget(s);
        wk_iltp_reader_limit(s->rd, s->ctl_bytes < b ? b - s->ctl_bytes : 0);
        wk_error e;
        size_t before = in->pos;
        wk_result r = wk_iltp_reader_read(s->rd, in, NULL, &e);
        s->st.wire_in += in->pos - before;
        if (r == WK_ERROR) return sfail(s, err, &e);
        if (r == WK_NEED_INPUT) return WK_NEED_INPUT;
        const wk_iltp_item *it = wk_iltp_reader_item(s->rd); /* r == WK_EVENT */
        if (!it) {
            wk_result h = on_blob_event(s, wk_iltp_reader_event(s->rd), err);
            if (h == WK_DONE) continue;
            return h;
        }
        s->st.items_in++;
        s->st.raw_in += it->len;
        if (s->p.trace) {
            char h[44];
            if (it->kind == WK_ILTP_ITEM_PREFACE) trace(s, false, "preface nonce=%s", hash_text(it->preface.nonce, h));
            else if (it->kind == WK_ILTP_ITEM_FACTS) trace(s, false, "facts %zu", it->rows);
            else trace(s, false, "record %c %s %zu", it->record.type, hash_text(it->record.blob.hash, h), it->record.blob.len);
        }
        if (it->kind == WK_ILTP_ITEM_PREFACE) {
            if (on_preface(s, it, err) != WK_DONE) return WK_ERROR;
            continue;
        }
        /* every whole item is received control (response records stream) */
        s->ctl_bytes += it->len;
        if (s->ctl_bytes > budget(s)) return budget_fail(s, err, it->offset);
        wk_result h;
        switch (s->state) {
        case WK_ILTP_SESSION_PREFACING:
            /* replacing from our side: old peer items are decoded (caps apply) and discarded */
            h = WK_DONE;
            break;
        case WK_ILTP_SESSION_ESTABLISHING: h = on_establishment(s, it, err); break;
        case WK_ILTP_SESSION_ROUND:
        case WK_ILTP_SESSION_FIXED_POINT: h = on_round_item(s, it, err); break;
        default: h = order_fail(s, err, it, "input after the session closed"); break;
        }
        if (h != WK_DONE) return WK_ERROR;
    }
}

bool wk_iltp_session_wants_send(const wk_iltp_session *s)
{
    if (s->state == WK_ILTP_SESSION_FAILED) return false;
    if (s->cur_active) return true;
    if (!s->ops_n) return false;
    const op *o = &s->ops[s->ops_head];
    return o->kind == OP_PREFACE || s->selected;
}

/* The next piece of the advertisement into the stage. */
static void adv_fill(wk_iltp_session *s)
{
    size_t n = 0;
    bool exhausted = false;
    if (!s->adv_started) {
        s->adv_started = true;
        s->adv_have_last = false;
        s->adv_rows = 0;
    }
    while (n + ADV_ROWS_MAX <= STAGE) {
        hash_t h;
        if (!s->p.store.next(s->p.store.ctx, s->adv_have_last ? s->adv_last : NULL, s->snap, h)) {
            exhausted = true;
            break;
        }
        memcpy(s->adv_last, h, 32);
        s->adv_have_last = true;
        char ref[48];
        ref_text(h, ref);
        uint8_t *p = s->stage + n;
        memcpy(p, "Advertised('", 12);
        memcpy(p + 12, ref, 48);
        memcpy(p + 60, "')\nAdvertisedField('", 20);
        memcpy(p + 80, ref, 48);
        memcpy(p + 128, "','Type','0','B')\n", 18);
        n += 146;
        s->adv_rows += 2;
    }
    if (exhausted) s->stage[n++] = '\n';
    s->cur = (wk_in){s->stage, n, 0};
    s->cur_active = true;
    s->cur_flush = exhausted;
    s->cur_after = exhausted ? AFTER_POP : AFTER_NONE;
    s->st.raw_out += n;
    if (exhausted) {
        s->adv_started = false;
        s->st.items_out++;
        trace(s, true, "facts %zu advertisement (round %llu)", s->adv_rows, (unsigned long long)s->st.rounds);
    }
}

/* One step of the responses (OP_RESP). WK_DONE: go on with the loop. */
static wk_result resp_step(wk_iltp_session *s, wk_in *in, wk_out *out, wk_error *err)
{
    wk_error e;
    switch (s->tx_phase) {
    case TX_NONE: {
        if (s->tx_last || s->tx_i >= s->peer_req_set.n) {
            s->tx_last = false;
            pop_op(s);
            return WK_DONE;
        }
        memcpy(s->tx_hash, s->peer_req_set.v[s->tx_i], 32);
        uint64_t len = 0, seq = 0;
        if (!s->p.store.has(s->p.store.ctx, s->tx_hash, &len, &seq) || seq > s->snap || len > WK_ILTP_BLOB_DATA_CAP)
            return sfail_code(s, err, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "an advertised Blob is no longer in the store");
        s->tx_len = len;
        s->tx_off = 0;
        size_t hl = wk_iltp_blob_head_format(s->tx_hash, (size_t)len, s->stage);
        s->cur = (wk_in){s->stage, hl, 0};
        s->cur_active = true;
        s->cur_flush = false;
        s->cur_after = AFTER_NONE;
        s->st.raw_out += hl;
        s->tx_phase = TX_DATA;
        if (s->p.trace) {
            char h[44];
            trace(s, true, "record B %s %llu response", hash_text(s->tx_hash, h), (unsigned long long)len);
        }
        return WK_DONE;
    }
    case TX_DATA: {
        uint64_t left = s->tx_len - s->tx_off;
        if (left == 0) {
            s->tx_phase = TX_FLUSH;
            s->cur = (wk_in){s->stage, 0, 0};
            s->cur_active = true;
            s->cur_flush = true;
            s->cur_after = AFTER_RESP;
            return WK_DONE;
        }
        if (!in || in->pos >= in->size)
            return event(s, WK_ILTP_SESSION_BLOB_READ, s->tx_hash, s->tx_len, s->tx_off, NULL, 0);
        size_t take = in->size - in->pos;
        if (take > left) take = (size_t)left;
        wk_in sub = {in->src, in->pos + take, in->pos};
        size_t before = out->pos;
        wk_result r = wk_iltp_writer_write_part(s->wr, &sub, out, &e);
        size_t used = sub.pos - in->pos;
        in->pos = sub.pos;
        s->tx_off += used;
        s->out_bytes_left -= used < s->out_bytes_left ? used : s->out_bytes_left;
        s->st.raw_out += used;
        s->st.data_out += used;
        s->st.wire_out += out->pos - before;
        if (r == WK_ERROR) return sfail(s, err, &e);
        if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
        return WK_DONE;
    }
    default:
        return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "response state");
    }
}

wk_result wk_iltp_session_send(wk_iltp_session *s, wk_in *in, wk_out *out, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return WK_ERROR;
    }
    for (;;) {
        wk_error e;
        if (out->pos >= out->size) return WK_NEED_OUTPUT;
        size_t before = out->pos;
        if (s->cur_active) {
            wk_result r = s->cur_flush ? wk_iltp_writer_write(s->wr, &s->cur, out, &e)
                                       : wk_iltp_writer_write_part(s->wr, &s->cur, out, &e);
            s->st.wire_out += out->pos - before;
            if (r == WK_ERROR) return sfail(s, err, &e);
            if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
            s->cur_active = false;
            if (s->cur_after == AFTER_POP) {
                pop_op(s);
            } else if (s->cur_after == AFTER_RESP) {
                s->tx_phase = TX_NONE;
                s->tx_i++;
                s->st.items_out++;
                s->st.blobs_out++;
            }
            s->cur_after = AFTER_NONE;
            continue;
        }
        if (!s->ops_n) return WK_DONE;
        op *o = op_at(s, 0);
        if (o->kind == OP_PREFACE) {
            wk_result r = wk_iltp_writer_begin_session(s->wr, s->local_nonce, s->decode_text[0] ? s->decode_text : NULL,
                                                       s->encode_text[0] ? s->encode_text : NULL, out, &e);
            s->st.wire_out += out->pos - before;
            if (r == WK_ERROR) return sfail(s, err, &e);
            s->preface_begun = r == WK_NEED_OUTPUT;
            if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
            s->preface_written = true;
            s->selected = false;
            if (s->enc_out_known) {
                if (wk_iltp_writer_select(s->wr, s->enc_out_pending, &e) != WK_OK) return sfail(s, err, &e);
                s->selected = true;
            }
            pop_op(s);
            continue;
        }
        if (!s->selected) return WK_DONE; /* waiting for the peer preface */
        switch (o->kind) {
        case OP_END: {
            wk_result r = wk_iltp_writer_end(s->wr, out, &e);
            s->st.wire_out += out->pos - before;
            if (r == WK_ERROR) return sfail(s, err, &e);
            if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
            s->end_written = true;
            pop_op(s);
            break;
        }
        case OP_CTL:
            s->cur = (wk_in){o->bytes, o->len, 0};
            s->cur_active = true;
            s->cur_flush = true;
            s->cur_after = AFTER_POP;
            s->st.raw_out += o->len;
            break;
        case OP_ADV:
            adv_fill(s);
            break;
        case OP_RESP: {
            wk_result r = resp_step(s, in, out, err);
            if (r != WK_DONE) return r;
            break;
        }
        default:
            return sfail_code(s, err, WK_ERR_STATE, WK_NO_OFFSET, "output queue");
        }
    }
}

wk_result wk_iltp_session_finish(wk_iltp_session *s, const wk_in *rest, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return WK_ERROR;
    }
    wk_error e;
    if (wk_iltp_reader_finish(s->rd, rest, &e) != WK_DONE) {
        sfail(s, err, &e);
        return WK_ERROR;
    }
    /* A round we opened at fixed point that the peer never joined: the peer ended its
     * direction at fixed point (bounded completion crossed our advertisement). Clean. */
    bool crossed = s->state == WK_ILTP_SESSION_ROUND && s->round_from_fixed && !s->peer_adv;
    if (s->state != WK_ILTP_SESSION_FIXED_POINT && s->state != WK_ILTP_SESSION_CLOSED && !crossed) {
        char what[80];
        snprintf(what, sizeof what, "the peer closed during %s", wk_iltp_session_state_name(s->state));
        sfail_code(s, err, WK_ERR_ILTP_PREMATURE_EOF, wk_iltp_reader_consumed(s->rd), what);
        return WK_ERROR;
    }
    if (crossed) {
        /* our advertisement's round will never run: drop it unless already being written */
        drop_ops(s);
        round_reset(s);
    }
    s->state = WK_ILTP_SESSION_CLOSED;
    return WK_DONE;
}

void wk_iltp_session_store_changed(wk_iltp_session *s, uint64_t now_ms)
{
    if (now_ms > s->now) s->now = now_ms;
    if (s->state != WK_ILTP_SESSION_FIXED_POINT || s->local_closing || s->quiet) return;
    if (s->p.store.seq(s->p.store.ctx) <= s->snap) return; /* nothing new since our last advertisement */
    wk_error e;
    if (round_start(s, &e) != WK_OK) sfail(s, NULL, &e);
    else s->round_from_fixed = true;
}

void wk_iltp_session_quiesce(wk_iltp_session *s) { s->quiet = true; }

wk_code wk_iltp_session_close(wk_iltp_session *s, wk_error *err)
{
    if (s->state != WK_ILTP_SESSION_FIXED_POINT && s->state != WK_ILTP_SESSION_CLOSED)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "bounded completion happens at fixed point");
    if (s->local_closing) return WK_OK;
    s->local_closing = true;
    if (!push_op(s, OP_END, NULL, 0)) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "output queue full");
    return WK_OK;
}

wk_code wk_iltp_session_repreface(wk_iltp_session *s, uint64_t now_ms, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED || s->state == WK_ILTP_SESSION_CLOSED)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "no session to replace");
    /* Only a paired session is replaced: a second local preface before the pair exists could
     * pair with the peer's old one and make both sides replace each other in turn. */
    if (s->state == WK_ILTP_SESSION_PREFACING)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "the session is still prefacing");
    if (now_ms > s->now) s->now = now_ms;
    drop_ops(s);
    round_reset(s);
    wk_code c = queue_preface(s, err);
    if (c != WK_OK) return c;
    phase_start(s, WK_ILTP_SESSION_PREFACING);
    return WK_OK;
}

/* ------------------------------------------------------------------------------------------- */
static const char default_operand[] = "wirekit blob-sync operand v1\n";

wk_iltp_session *wk_iltp_session_create(const wk_iltp_session_params *p, uint64_t now_ms, wk_error *err)
{
    if (!p->store.has || !p->store.next || !p->store.seq) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the session needs the store's has, next and seq");
        return NULL;
    }
    if (p->assurance != WK_ILTP_ASSURANCE_DISABLED && p->assurance != WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL &&
        p->assurance != WK_ILTP_ASSURANCE_CHANNEL_BOUND) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown proof assurance");
        return NULL;
    }
    if (p->form != WK_ILTP_FORM_1_0 && p->form != WK_ILTP_FORM_0_13) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "choose preface form 1.0 or 0.13");
        return NULL;
    }
    wk_allocator a = wk_allocator_or_default(p->allocator);
    wk_iltp_session *s = wk_allocator_zalloc(&a, sizeof *s, "session", err);
    if (!s) return NULL;
    s->a = a;
    s->p = *p;
    s->p.allocator = &s->a;
    s->now = now_ms;
    if (!s->p.budget_prefacing) s->p.budget_prefacing = 64u << 10;
    if (!s->p.budget_establishment) s->p.budget_establishment = 4u << 20;
    if (!s->p.budget_round) s->p.budget_round = 256u << 20;
    const char *lists[2] = {p->form == WK_ILTP_FORM_0_13 ? p->decode : NULL, p->form == WK_ILTP_FORM_0_13 ? p->encode : NULL};
    char *texts[2] = {s->decode_text, s->encode_text};
    wk_iltp_offer *offers[2] = {&s->local_decode, &s->local_encode};
    for (int i = 0; i < 2; i++) {
        if (!lists[i] || !*lists[i]) continue;
        size_t l = strlen(lists[i]);
        if (l >= WK_ILTP_PREFACE_MAX) { wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "offer list too long"); goto fail; }
        memcpy(texts[i], lists[i], l + 1);
        wk_error oe;
        if (wk_iltp_offer_parse(texts[i], l, offers[i], &oe) != WK_OK) {
            /* the configured offer is the user's: a Usage failure, with the parser's reason */
            wk_error_set(err, WK_ERR_USAGE, oe.has_offset ? oe.offset : WK_NO_OFFSET, "%s: %s",
                         wk_error_name(oe.code), oe.msg);
            goto fail;
        }
        /* we list only what we implement */
        size_t pos = 0, n;
        const char *t;
        while (wk_iltp_offer_next(offers[i], &pos, &t, &n))
            if (wk_iltp_encoding_lookup(t, n) == WK_ILTP_UNKNOWN) {
                wk_error_set(err, WK_ERR_USAGE, WK_NO_OFFSET, "this build does not implement '%.*s'", (int)n, t);
                goto fail;
            }
    }
    const uint8_t *od = p->operand ? p->operand : (const uint8_t *)default_operand;
    s->operand_len = p->operand ? p->operand_len : sizeof default_operand - 1;
    if (wk_iltp_blob_record_size(s->operand_len) > WK_ILTP_OPERAND_CAP) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "our operand Blob is over 1 MiB");
        goto fail;
    }
    s->operand = s_alloc(s, s->operand_len);
    if (!s->operand) goto nomem;
    memcpy(s->operand, od, s->operand_len);
    if (wk_iltp_nonce_gen_init(&s->ng, p->seed, 0, err) != WK_OK) goto fail;
    wk_iltp_stack_params sp = {p->form, p->level, 0, &s->a};
    s->rd = wk_iltp_reader_create(&sp, err);
    s->wr = s->rd ? wk_iltp_writer_create(&sp, err) : NULL;
    if (!s->rd || !s->wr) goto fail;
    wk_iltp_reader_stream_blobs(s->rd, true);
    if (queue_preface(s, err) != WK_OK) goto fail;
    phase_start(s, WK_ILTP_SESSION_PREFACING);
    return s;
nomem:
    wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "session");
fail:
    wk_iltp_session_destroy(s);
    return NULL;
}

void wk_iltp_session_destroy(wk_iltp_session *s)
{
    if (!s) return;
    while (s->ops_n) pop_op(s);
    s_free(s, s->operand);
    hset_free(s, &s->peer_adv_set);
    hset_free(s, &s->our_req);
    s_free(s, s->got);
    hset_free(s, &s->peer_req_set);
    wk_iltp_reader_destroy(s->rd);
    wk_iltp_writer_destroy(s->wr);
    wk_allocator a = s->a;
    a.free(a.opaque, s);
}
