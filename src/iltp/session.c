/* ILTP sessions (Lace-060), sans-I/O: prefacing, role-ordered establishment, symmetric rounds to
 * fixed point, re-prefacing, budgets and deadlines, over the reader/writer stack. The application
 * is content-addressed Blob sync through the caller's store operations.
 *
 * Decisions where the seed is silent (docs/iltp.md):
 * - Our advertisement schema advertises the Type field only: each Blob h is
 *   `Advertised('B.<h>.H3')` followed by `AdvertisedField('B.<h>.H3','Type','0','B')`, sorted by
 *   hash bytes. A peer advertisement must follow the same schema exactly.
 * - Requests are sent sorted by hash; responses in any order are accepted.
 * - Received-control accounting counts every decoded item but response records, per phase:
 *   prefacing, establishment, and each round. Response records are bounded by the item caps.
 * - The phase deadline restarts whenever the phase changes (a new round is a new phase).
 */
#include "iltp_internal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t hash_t[32];

enum op_kind { OP_PREFACE, OP_CTL, OP_RESP, OP_END };
typedef struct op {
    enum op_kind kind;
    uint8_t *bytes; /* OP_CTL */
    size_t len;
    hash_t hash;    /* OP_RESP */
} op;

typedef struct hset { hash_t *v; size_t n, cap; } hset;

struct wk_iltp_session {
    wk_iltp_session_params p;
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
    /* output */
    op *ops;
    size_t ops_head, ops_n, ops_cap;
    bool selected;              /* the writer has this session's encoding */
    bool preface_written;       /* our current preface is fully written */
    wk_iltp_encoding enc_out_pending;
    bool enc_out_known;
    uint8_t *batch;             /* the accepted batch being written */
    size_t batch_len, batch_cap;
    wk_in cur;
    bool batch_active;
    bool end_written;
    /* establishment */
    bool sent_proof, got_proof, sent_operand, got_operand;
    /* round */
    bool adv_sent, peer_adv, req_sent, peer_req, fence_sent, peer_fence;
    hset local_adv, peer_adv_set, our_req, peer_req_set;
    uint8_t *got;             /* got[i]: the response to our_req.v[i] arrived */
    size_t got_cap;
    size_t outstanding;
    bool local_closing;         /* our end mark is queued: we take part in no further round */
    bool round_from_fixed;      /* this round was opened by our store change at fixed point */
    /* accounting */
    uint64_t ctl_bytes, deadline;
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
void wk_iltp_session_stats_get(const wk_iltp_session *s, wk_iltp_session_stats *out) { *out = s->st; }
bool wk_iltp_session_closed_locally(const wk_iltp_session *s) { return s->end_written; }

/* ------------------------------------------------------------------------------------------- */
static int hcmp(const void *a, const void *b) { return memcmp(a, b, 32); }

static bool hset_add(hset *h, const uint8_t x[32])
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        hash_t *v = realloc(h->v, cap * sizeof *v);
        if (!v) return false;
        h->v = v;
        h->cap = cap;
    }
    memcpy(h->v[h->n++], x, 32);
    return true;
}
static void hset_sort(hset *h) { if (h->n) qsort(h->v, h->n, sizeof h->v[0], hcmp); }
static bool hset_has(const hset *h, const uint8_t x[32])
{
    return h->n && bsearch(x, h->v, h->n, sizeof h->v[0], hcmp) != NULL;
}
static bool hset_has_dup(const hset *h)
{
    for (size_t i = 1; i < h->n; i++)
        if (memcmp(h->v[i - 1], h->v[i], 32) == 0) return true;
    return false;
}
static void hset_clear(hset *h) { h->n = 0; }
static void hset_free(hset *h) { free(h->v); h->v = NULL; h->n = h->cap = 0; }

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

static bool push_op(wk_iltp_session *s, op o)
{
    if (s->ops_head + s->ops_n == s->ops_cap) {
        if (s->ops_head) {
            memmove(s->ops, s->ops + s->ops_head, s->ops_n * sizeof *s->ops);
            s->ops_head = 0;
        }
        if (s->ops_n == s->ops_cap) {
            size_t cap = s->ops_cap ? s->ops_cap * 2 : 32;
            op *v = realloc(s->ops, cap * sizeof *v);
            if (!v) return false;
            s->ops = v;
            s->ops_cap = cap;
        }
    }
    s->ops[s->ops_head + s->ops_n++] = o;
    return true;
}

static void drop_ops(wk_iltp_session *s)
{
    for (size_t i = 0; i < s->ops_n; i++) free(s->ops[s->ops_head + i].bytes);
    s->ops_head = s->ops_n = 0;
}

/* Queues control items (complete fact blocks) as one accepted batch. */
static wk_code queue_ctl(wk_iltp_session *s, const void *bytes, size_t len, wk_error *err)
{
    op o = {OP_CTL, malloc(len ? len : 1), len, {0}};
    if (!o.bytes || !push_op(s, o)) {
        free(o.bytes);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "output queue");
    }
    memcpy(o.bytes, bytes, len);
    s->st.items_out++;
    return WK_OK;
}

static wk_code queue_facts(wk_iltp_session *s, const wk_iltp_fact *rows, size_t n, wk_error *err)
{
    size_t need = wk_iltp_facts_size(rows, n, err);
    if (!need) return err ? err->code : WK_ERR_ILTP_ENCODE;
    uint8_t *b = malloc(need);
    if (!b) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "fact block");
    wk_out o = {b, need, 0};
    wk_iltp_facts_encode(rows, n, &o, err);
    op x = {OP_CTL, b, need, {0}};
    if (!push_op(s, x)) {
        free(b);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "output queue");
    }
    s->st.items_out++;
    return WK_OK;
}

static void ref_text(const uint8_t h[32], char out[49])
{
    out[0] = 'B';
    out[1] = '.';
    wk_b64a_encode(h, 32, out + 2);
    memcpy(out + 45, ".H3", 4);
}

/* ------------------------------------------------------------------------------------------- */
static void phase_start(wk_iltp_session *s, wk_iltp_session_state st, uint64_t now)
{
    s->state = st;
    s->ctl_bytes = 0;
    s->deadline = s->p.phase_timeout_ms ? now + s->p.phase_timeout_ms : 0;
}

static uint64_t budget(const wk_iltp_session *s)
{
    switch (s->state) {
    case WK_ILTP_SESSION_PREFACING: return s->p.budget_prefacing;
    case WK_ILTP_SESSION_ESTABLISHING: return s->p.budget_establishment;
    default: return s->p.budget_round;
    }
}

static wk_code queue_preface(wk_iltp_session *s, wk_error *err)
{
    if (wk_iltp_nonce_next(&s->ng, s->peer_nonce_known ? s->peer_nonce : NULL, s->local_nonce, NULL, err) != WK_OK)
        return err ? err->code : WK_ERR_ILTP_NONCE_EXHAUSTED;
    op o = {OP_PREFACE, NULL, 0, {0}};
    if (!push_op(s, o)) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "output queue");
    s->selected = false;
    s->preface_written = false;
    s->enc_out_known = false;
    return WK_OK;
}

/* A new round: snapshot the store and queue our advertisement. */
static wk_code round_start(wk_iltp_session *s, uint64_t now, wk_error *err)
{
    phase_start(s, WK_ILTP_SESSION_ROUND, now);
    s->st.rounds++;
    s->round_from_fixed = false;
    s->adv_sent = s->peer_adv = s->req_sent = s->peer_req = s->fence_sent = s->peer_fence = false;
    hset_clear(&s->local_adv);
    hset_clear(&s->peer_adv_set);
    hset_clear(&s->our_req);
    hset_clear(&s->peer_req_set);
    s->outstanding = 0;
    hash_t *hs = NULL;
    size_t n = 0;
    wk_error e;
    if (s->p.store.list(s->p.store.ctx, &hs, &n, &e) != WK_OK) {
        free(hs);
        wk_error_set(err, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store list: %s", e.msg);
        return WK_ERR_ILTP_STORE;
    }
    for (size_t i = 0; i < n; i++)
        if (!hset_add(&s->local_adv, hs[i])) { free(hs); return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "advertisement"); }
    free(hs);
    hset_sort(&s->local_adv);
    if (hset_has_dup(&s->local_adv))
        return wk_error_set(err, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store listed a hash twice");
    /* the block: one Advertised row then its AdvertisedField row per Blob */
    size_t rows = s->local_adv.n * 2;
    wk_iltp_fact *f = calloc(rows ? rows : 1, sizeof *f);
    char (*refs)[49] = calloc(s->local_adv.n ? s->local_adv.n : 1, sizeof *refs);
    const char **args = calloc(s->local_adv.n ? s->local_adv.n * 5 : 1, sizeof *args);
    if (!f || !refs || !args) {
        free(f); free(refs); free(args);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "advertisement");
    }
    for (size_t i = 0; i < s->local_adv.n; i++) {
        ref_text(s->local_adv.v[i], refs[i]);
        const char **a = args + i * 5;
        a[0] = refs[i];
        a[1] = refs[i];
        a[2] = "Type";
        a[3] = "0";
        a[4] = "B";
        f[2 * i] = (wk_iltp_fact){"Advertised", a, 1};
        f[2 * i + 1] = (wk_iltp_fact){"AdvertisedField", a + 1, 4};
    }
    wk_code c = queue_facts(s, f, rows, err);
    free(f);
    free(refs);
    free(args);
    if (c == WK_OK) s->adv_sent = true;
    trace(s, true, "facts %zu advertisement (round %llu)", rows, (unsigned long long)s->st.rounds);
    return c;
}

/* 'B.<43>.H3' -> hash */
static bool parse_ref(const uint8_t *a, size_t n, uint8_t h[32])
{
    size_t got;
    return n == 48 && a[0] == 'B' && a[1] == '.' && memcmp(a + 45, ".H3", 3) == 0 &&
           wk_b64a_decode((const char *)a + 2, 43, h, 32, &got, NULL) == WK_OK;
}

static bool pred_is(const wk_iltp_fact_row *r, const char *name)
{
    size_t n = strlen(name);
    return r->predicate_len == n && memcmp(r->predicate, name, n) == 0;
}

static wk_result order_fail(wk_iltp_session *s, wk_error *err, const wk_iltp_item *it, const char *what)
{
    return sfail_code(s, err, WK_ERR_ILTP_SESSION_ORDER, it->offset, what);
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
        if (!hset_add(&s->peer_adv_set, h)) return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "advertisement");
    }
    hset_sort(&s->peer_adv_set);
    if (hset_has_dup(&s->peer_adv_set)) return order_fail(s, err, it, "duplicate advertisement record");
    s->peer_adv = true;
    /* our request: what the peer has and we lack */
    for (size_t i = 0; i < s->peer_adv_set.n; i++)
        if (!s->p.store.has(s->p.store.ctx, s->peer_adv_set.v[i]) && !hset_add(&s->our_req, s->peer_adv_set.v[i]))
            return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "request");
    s->outstanding = s->our_req.n;
    if (s->our_req.n > s->got_cap) {
        uint8_t *g = realloc(s->got, s->our_req.n);
        if (!g) return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "request");
        s->got = g;
        s->got_cap = s->our_req.n;
    }
    if (s->our_req.n) memset(s->got, 0, s->our_req.n);
    wk_iltp_fact *f = calloc(s->our_req.n ? s->our_req.n : 1, sizeof *f);
    char (*refs)[49] = calloc(s->our_req.n ? s->our_req.n : 1, sizeof *refs);
    const char **args = calloc(s->our_req.n ? s->our_req.n : 1, sizeof *args);
    if (!f || !refs || !args) {
        free(f); free(refs); free(args);
        return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "request");
    }
    for (size_t i = 0; i < s->our_req.n; i++) {
        ref_text(s->our_req.v[i], refs[i]);
        args[i] = refs[i];
        f[i] = (wk_iltp_fact){"MayRequest", args + i, 1};
    }
    wk_error e;
    wk_code c = queue_facts(s, f, s->our_req.n, &e);
    free(f); free(refs); free(args);
    if (c != WK_OK) return sfail(s, err, &e);
    s->req_sent = true;
    trace(s, true, "facts %zu request", s->our_req.n);
    return WK_DONE;
}

static wk_result on_request(wk_iltp_session *s, const wk_iltp_item *it, wk_error *err)
{
    size_t pos = 0;
    wk_iltp_fact_row row;
    while (wk_iltp_fact_next(it->bytes, it->len, &pos, &row)) {
        const uint8_t *a;
        size_t al, ap = 0;
        uint8_t h[32];
        if (!pred_is(&row, "MayRequest") || row.arity != 1)
            return order_fail(s, err, it, "request block: expected MayRequest/1");
        wk_iltp_fact_arg_next(&row, &ap, &a, &al);
        if (!parse_ref(a, al, h)) return order_fail(s, err, it, "request names no B.<hash>.H3");
        if (!hset_has(&s->local_adv, h)) return order_fail(s, err, it, "request for a Blob we did not advertise");
        if (!hset_add(&s->peer_req_set, h)) return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "request");
    }
    hset_sort(&s->peer_req_set);
    if (hset_has_dup(&s->peer_req_set)) return order_fail(s, err, it, "duplicate request");
    s->peer_req = true;
    for (size_t i = 0; i < s->peer_req_set.n; i++) {
        op o = {OP_RESP, NULL, 0, {0}};
        memcpy(o.hash, s->peer_req_set.v[i], 32);
        if (!push_op(s, o)) return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "responses");
    }
    return WK_DONE;
}

/* Queues our fence once our obligations settle; ends the round when both fences are in. */
static wk_result settle(wk_iltp_session *s, uint64_t now, wk_error *err)
{
    if (!s->fence_sent && s->peer_req && s->req_sent && s->outstanding == 0) {
        wk_error e;
        if (queue_ctl(s, "RoundComplete()\n\n", 17, &e) != WK_OK) return sfail(s, err, &e);
        s->fence_sent = true;
        trace(s, true, "facts 1 fence");
    }
    if (s->fence_sent && s->peer_fence) {
        if (s->our_req.n || s->peer_req_set.n) {
            wk_error e;
            if (round_start(s, now, &e) != WK_OK) return sfail(s, err, &e);
        } else {
            phase_start(s, WK_ILTP_SESSION_FIXED_POINT, now);
        }
    }
    return WK_DONE;
}

static bool is_fence(const wk_iltp_item *it)
{
    return it->kind == WK_ILTP_ITEM_FACTS && it->len == 17 && memcmp(it->bytes, "RoundComplete()\n\n", 17) == 0;
}

static wk_result on_round_item(wk_iltp_session *s, const wk_iltp_item *it, uint64_t now, wk_error *err)
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
        if (round_start(s, now, &e) != WK_OK) return sfail(s, err, &e);
    }
    if (!s->peer_adv) {
        if (it->kind != WK_ILTP_ITEM_FACTS || is_fence(it)) return order_fail(s, err, it, "expected the advertisement block");
        s->round_from_fixed = false;
        if (on_advertisement(s, it, err) != WK_DONE) return WK_ERROR;
    } else if (!s->peer_req) {
        if (it->kind != WK_ILTP_ITEM_FACTS || is_fence(it)) return order_fail(s, err, it, "expected the request block");
        if (on_request(s, it, err) != WK_DONE) return WK_ERROR;
    } else if (it->kind == WK_ILTP_ITEM_RECORD) {
        const wk_iltp_record *r = &it->record;
        if (r->type != 'B') return order_fail(s, err, it, "a response must be a Blob record");
        const hash_t *slot = s->our_req.n ? bsearch(r->blob.hash, s->our_req.v, s->our_req.n, sizeof s->our_req.v[0], hcmp) : NULL;
        if (!slot) return order_fail(s, err, it, "unrequested response");
        size_t idx = (size_t)(slot - s->our_req.v);
        if (s->got[idx]) return order_fail(s, err, it, "duplicate response");
        wk_error e;
        if (s->p.store.put(s->p.store.ctx, r->blob.hash, r->blob.data, r->blob.len, &e) != WK_OK) {
            wk_error_set(&e, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store put: %.80s", e.msg);
            return sfail(s, err, &e);
        }
        s->got[idx] = 1;
        s->outstanding--;
        s->st.blobs_in++;
    } else if (is_fence(it)) {
        if (s->peer_fence) return order_fail(s, err, it, "duplicate fence");
        if (s->outstanding) return order_fail(s, err, it, "fence before every requested response");
        s->peer_fence = true;
    } else {
        return order_fail(s, err, it, "expected a response or the fence");
    }
    return settle(s, now, err);
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
    uint8_t *b = malloc(need);
    wk_out out = {b, need, 0};
    wk_error e;
    if (!b || wk_iltp_blob_encode(s->operand, s->operand_len, &out, &e) != WK_DONE ||
        queue_ctl(s, b, need, &e) != WK_OK) {
        free(b);
        return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "operand");
    }
    free(b);
    s->sent_operand = true;
    return WK_DONE;
}

static wk_result on_establishment(wk_iltp_session *s, const wk_iltp_item *it, uint64_t now, wk_error *err)
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
    if (round_start(s, now, &e) != WK_OK) return sfail(s, err, &e);
    return WK_DONE;
}

/* A peer preface: pairs with ours (sent, or sent now for a peer-initiated replacement). */
static wk_result on_preface(wk_iltp_session *s, const wk_iltp_item *it, uint64_t now, wk_error *err)
{
    wk_error e;
    bool replacing = s->state != WK_ILTP_SESSION_PREFACING;
    memcpy(s->peer_nonce, it->preface.nonce, 32);
    s->peer_nonce_known = true;
    if (replacing) {
        /* the peer replaced the logical session: unaccepted output is dropped, a fresh local
         * preface is the next accepted output */
        drop_ops(s);
        if (queue_preface(s, &e) != WK_OK) return sfail(s, err, &e);
    }
    if (wk_iltp_nonce_pair_check(s->local_nonce, s->peer_nonce, &e) != WK_OK) return sfail(s, err, &e);
    const char *t;
    size_t tl;
    wk_iltp_encoding in = wk_iltp_select(&it->preface.encode, &s->local_decode, &t, &tl);
    wk_iltp_encoding out = wk_iltp_select(&s->local_encode, &it->preface.decode, &t, &tl);
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
    phase_start(s, WK_ILTP_SESSION_ESTABLISHING, now);
    if (s->p.side == WK_ILTP_SIDE0) {
        if (queue_proof(s, &e) != WK_OK) return sfail(s, err, &e);
        s->sent_proof = true;
    }
    return WK_DONE;
}

static wk_code check_deadline(wk_iltp_session *s, uint64_t now, wk_error *err)
{
    if (s->deadline && now > s->deadline &&
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
    return check_deadline(s, now_ms, err);
}

wk_result wk_iltp_session_recv(wk_iltp_session *s, wk_in *in, uint64_t now_ms, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return WK_ERROR;
    }
    if (check_deadline(s, now_ms, err) != WK_OK) return WK_ERROR;
    for (;;) {
        wk_iltp_item it;
        wk_error e;
        size_t before = in->pos;
        wk_result r = wk_iltp_reader_next(s->rd, in, &it, &e);
        s->st.wire_in += in->pos - before;
        if (r == WK_ERROR) return sfail(s, err, &e);
        if (r == WK_NEED_INPUT) return WK_NEED_INPUT;
        s->st.items_in++;
        s->st.raw_in += it.len;
        if (s->p.trace) {
            char h[44];
            if (it.kind == WK_ILTP_ITEM_PREFACE) trace(s, false, "preface nonce=%s", hash_text(it.preface.nonce, h));
            else if (it.kind == WK_ILTP_ITEM_FACTS) trace(s, false, "facts %zu", it.rows);
            else trace(s, false, "record %c %s %zu", it.record.type, hash_text(it.record.blob.hash, h), it.record.blob.len);
        }
        if (it.kind == WK_ILTP_ITEM_PREFACE) {
            if (on_preface(s, &it, now_ms, err) != WK_DONE) return WK_ERROR;
            continue;
        }
        bool response = it.kind == WK_ILTP_ITEM_RECORD && s->state == WK_ILTP_SESSION_ROUND && s->peer_req;
        if (!response) {
            s->ctl_bytes += it.len;
            if (s->ctl_bytes > budget(s)) {
                char what[100];
                snprintf(what, sizeof what, "%s received-control budget of %llu bytes exceeded",
                         wk_iltp_session_state_name(s->state), (unsigned long long)budget(s));
                return sfail_code(s, err, WK_ERR_ILTP_BUDGET, it.offset, what);
            }
        }
        wk_result h;
        switch (s->state) {
        case WK_ILTP_SESSION_PREFACING:
            /* replacing from our side: old peer items are decoded (caps apply) and discarded */
            h = WK_DONE;
            break;
        case WK_ILTP_SESSION_ESTABLISHING: h = on_establishment(s, &it, now_ms, err); break;
        case WK_ILTP_SESSION_ROUND:
        case WK_ILTP_SESSION_FIXED_POINT: h = on_round_item(s, &it, now_ms, err); break;
        default: h = order_fail(s, err, &it, "input after the session closed"); break;
        }
        if (h != WK_DONE) return WK_ERROR;
    }
}

bool wk_iltp_session_wants_send(const wk_iltp_session *s)
{
    if (s->state == WK_ILTP_SESSION_FAILED) return false;
    if (s->batch_active) return true;
    if (!s->ops_n) return false;
    const op *o = &s->ops[s->ops_head];
    return o->kind == OP_PREFACE || s->selected;
}

wk_result wk_iltp_session_send(wk_iltp_session *s, wk_out *out, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return WK_ERROR;
    }
    for (;;) {
        wk_error e;
        size_t before = out->pos;
        if (s->batch_active) {
            wk_result r = wk_iltp_writer_write(s->wr, &s->cur, out, &e);
            s->st.wire_out += out->pos - before;
            if (r == WK_ERROR) return sfail(s, err, &e);
            if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
            s->batch_active = false;
            continue;
        }
        if (!s->ops_n) return WK_DONE;
        op *o = &s->ops[s->ops_head];
        if (o->kind == OP_PREFACE) {
            wk_result r = wk_iltp_writer_begin_session(s->wr, s->local_nonce, s->decode_text[0] ? s->decode_text : NULL,
                                                       s->encode_text[0] ? s->encode_text : NULL, out, &e);
            s->st.wire_out += out->pos - before;
            if (r == WK_ERROR) return sfail(s, err, &e);
            if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
            s->preface_written = true;
            if (s->enc_out_known) {
                if (wk_iltp_writer_select(s->wr, s->enc_out_pending, &e) != WK_OK) return sfail(s, err, &e);
                s->selected = true;
            }
        } else {
            if (!s->selected) return WK_DONE; /* waiting for the peer preface */
            if (o->kind == OP_END) {
                wk_result r = wk_iltp_writer_end(s->wr, out, &e);
                s->st.wire_out += out->pos - before;
                if (r == WK_ERROR) return sfail(s, err, &e);
                if (r == WK_NEED_OUTPUT) return WK_NEED_OUTPUT;
                s->end_written = true;
            } else {
                size_t len;
                if (o->kind == OP_CTL) {
                    len = o->len;
                    if (len > s->batch_cap) {
                        uint8_t *b = realloc(s->batch, len);
                        if (!b) return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "batch");
                        s->batch = b;
                        s->batch_cap = len;
                    }
                    memcpy(s->batch, o->bytes, len);
                } else { /* a response: the Blob record */
                    uint8_t *data = NULL;
                    size_t dl = 0;
                    if (s->p.store.get(s->p.store.ctx, o->hash, &data, &dl, &e) != WK_OK) {
                        wk_error_set(&e, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store get: %.80s", e.msg);
                        return sfail(s, err, &e);
                    }
                    len = wk_iltp_blob_record_size(dl);
                    if (len > s->batch_cap) {
                        uint8_t *b = realloc(s->batch, len);
                        if (!b) { free(data); return sfail_code(s, err, WK_ERR_NOMEM, WK_NO_OFFSET, "batch"); }
                        s->batch = b;
                        s->batch_cap = len;
                    }
                    uint8_t h[32];
                    wk_iltp_blob_hash(data, dl, h);
                    if (memcmp(h, o->hash, 32) != 0) {
                        free(data);
                        return sfail_code(s, err, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "a stored Blob does not match its hash");
                    }
                    size_t hl = wk_iltp_blob_head(h, dl, s->batch);
                    if (dl) memcpy(s->batch + hl, data, dl);
                    free(data);
                    s->st.items_out++;
                    s->st.blobs_out++;
                    if (s->p.trace) {
                        char ht[44];
                        trace(s, true, "record B %s %zu response", hash_text(h, ht), dl);
                    }
                }
                s->batch_len = len;
                s->cur = (wk_in){s->batch, len, 0};
                s->batch_active = true;
                s->st.raw_out += len;
            }
        }
        free(o->bytes);
        s->ops_head++;
        s->ops_n--;
    }
}

wk_code wk_iltp_session_eof(wk_iltp_session *s, const wk_in *rest, wk_error *err)
{
    if (s->state == WK_ILTP_SESSION_FAILED) {
        if (err) *err = s->failure;
        return s->failure.code;
    }
    wk_error e;
    if (wk_iltp_reader_finish(s->rd, rest, &e) != WK_OK) {
        sfail(s, err, &e);
        return e.code;
    }
    /* A round we opened at fixed point that the peer never joined: the peer ended its
     * direction at fixed point (bounded completion crossed our advertisement). Clean. */
    bool crossed = s->state == WK_ILTP_SESSION_ROUND && s->round_from_fixed && !s->peer_adv;
    if (s->state != WK_ILTP_SESSION_FIXED_POINT && s->state != WK_ILTP_SESSION_CLOSED && !crossed) {
        char what[80];
        snprintf(what, sizeof what, "the peer closed during %s", wk_iltp_session_state_name(s->state));
        sfail_code(s, err, WK_ERR_ILTP_PREMATURE_EOF, wk_iltp_reader_consumed(s->rd), what);
        return WK_ERR_ILTP_PREMATURE_EOF;
    }
    s->state = WK_ILTP_SESSION_CLOSED;
    return WK_OK;
}

void wk_iltp_session_store_changed(wk_iltp_session *s, uint64_t now_ms)
{
    if (s->state != WK_ILTP_SESSION_FIXED_POINT || s->local_closing) return;
    wk_error e;
    if (round_start(s, now_ms, &e) != WK_OK) sfail(s, NULL, &e);
    else s->round_from_fixed = true;
}

wk_code wk_iltp_session_close(wk_iltp_session *s, wk_error *err)
{
    if (s->state != WK_ILTP_SESSION_FIXED_POINT && s->state != WK_ILTP_SESSION_CLOSED)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "bounded completion happens at fixed point");
    if (s->local_closing) return WK_OK;
    s->local_closing = true;
    op o = {OP_END, NULL, 0, {0}};
    if (!push_op(s, o)) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "output queue");
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
    drop_ops(s);
    wk_code c = queue_preface(s, err);
    if (c != WK_OK) return c;
    phase_start(s, WK_ILTP_SESSION_PREFACING, now_ms);
    return WK_OK;
}

/* ------------------------------------------------------------------------------------------- */
static const char default_operand[] = "wirekit blob-sync operand v1\n";

wk_iltp_session *wk_iltp_session_create(const wk_iltp_session_params *p, uint64_t now_ms, wk_error *err)
{
    if (!p->store.has || !p->store.list || !p->store.get || !p->store.put) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the session needs all four store operations");
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
    wk_iltp_session *s = calloc(1, sizeof *s);
    if (!s) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "session");
        return NULL;
    }
    s->p = *p;
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
        if (wk_iltp_offer_parse(texts[i], l, offers[i], err) != WK_OK) {
            if (err) err->category = WK_CAT_USAGE;
            goto fail;
        }
        /* we list only what we implement */
        size_t pos = 0, n;
        const char *t;
        while (wk_iltp_offer_next(offers[i], &pos, &t, &n))
            if (wk_iltp_encoding_from_token(t, n) == WK_ILTP_UNKNOWN) {
                wk_error_set(err, WK_ERR_USAGE, WK_NO_OFFSET, "this build does not implement '%.*s'", (int)n, t);
                goto fail;
            }
    }
    const uint8_t *od = p->operand ? p->operand : (const uint8_t *)default_operand;
    s->operand_len = p->operand ? p->operand_len : sizeof default_operand - 1;
    if (wk_iltp_blob_record_size(s->operand_len) > WK_ILTP_OPERAND_CAP) {
        wk_error_set(err, WK_ERR_ILTP_OPERAND_TOO_LARGE, WK_NO_OFFSET, "our operand Blob is over 1 MiB");
        if (err) err->category = WK_CAT_INTEGRATION;
        goto fail;
    }
    s->operand = malloc(s->operand_len ? s->operand_len : 1);
    if (!s->operand) goto nomem;
    memcpy(s->operand, od, s->operand_len);
    if (wk_iltp_nonce_gen_init(&s->ng, p->seed, 0, err) != WK_OK) goto fail;
    wk_iltp_stack_params sp = {p->form, p->level, 0, p->allocator};
    s->rd = wk_iltp_reader_create(&sp, err);
    s->wr = s->rd ? wk_iltp_writer_create(&sp, err) : NULL;
    if (!s->rd || !s->wr) goto fail;
    if (queue_preface(s, err) != WK_OK) goto fail;
    phase_start(s, WK_ILTP_SESSION_PREFACING, now_ms);
    return s;
nomem:
    wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "session");
fail:
    wk_iltp_session_free(s);
    return NULL;
}

void wk_iltp_session_free(wk_iltp_session *s)
{
    if (!s) return;
    drop_ops(s);
    free(s->ops);
    free(s->batch);
    free(s->operand);
    hset_free(&s->local_adv);
    hset_free(&s->peer_adv_set);
    hset_free(&s->our_req);
    free(s->got);
    hset_free(&s->peer_req_set);
    wk_iltp_reader_free(s->rd);
    wk_iltp_writer_free(s->wr);
    free(s);
}
