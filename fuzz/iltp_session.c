/* libFuzzer target: the ILTP session machine fed arbitrary peer bytes (side1, both forms), with an
 * in-memory store index and a counting, limited allocator. Byte 0 picks the form, whether our
 * offers name encodings and the push size; byte 1 the size of Blob data pieces handed to send,
 * whether stored Blobs are confirmed late, the round budget and the memory limit; the rest is the
 * peer's stream. The host side follows the session's events: received Blob data is collected and
 * checked against its hash at BLOB_END, reads are served from the store in pieces.
 * The peer's stream goes through the contract harness (fuzz_drive.h: wk_iltp_session_recv as the
 * step, wk_iltp_session_finish as _finish, in the fuzzer's pushes and whole, every call checked:
 * NEED_INPUT only with the push consumed, progress, errors sticky through step and _finish). The
 * adapter's step is the host's: a new push advances the clock (deadlines), recv's WK_NEED_OUTPUT
 * pause is released by draining send inside the step (it must be), and at the end of a push the
 * late confirmations are given and send drained. The two runs are not compared: deadlines depend
 * on the number of pushes, and the late confirmations on where pushes end. (Send itself is on the
 * harness in tests/iltp/test_session.c, over a recorded peer.)
 * Checks: no crash or leak; a failure is typed (PeerProtocol, Transport for deadlines, NOMEM
 * from the allocator limit); only Blobs whose hash matches their data are ever stored; every
 * DATA event continues its Blob at the right offset and never exceeds its length; the allocator
 * balances at the end. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"

#define NB 8
typedef struct mem {
    uint8_t h[NB][32];
    uint8_t d[NB][64];
    size_t len[NB];
    size_t n;
} mem;

static bool m_has(void *c, const uint8_t h[32], uint64_t *len, uint64_t *seq)
{
    mem *m = c;
    for (size_t i = 0; i < m->n; i++)
        if (memcmp(m->h[i], h, 32) == 0) {
            if (len) *len = m->len[i];
            if (seq) *seq = i + 1;
            return true;
        }
    return false;
}
static bool m_next(void *c, const uint8_t *after, uint64_t max_seq, uint8_t out[32])
{
    mem *m = c;
    const uint8_t *best = NULL;
    for (size_t i = 0; i < m->n && i < max_seq; i++) {
        if (after && memcmp(m->h[i], after, 32) <= 0) continue;
        if (!best || memcmp(m->h[i], best, 32) < 0) best = m->h[i];
    }
    if (!best) return false;
    memcpy(out, best, 32);
    return true;
}
static uint64_t m_seq(void *c) { return ((mem *)c)->n; }

static void m_add(mem *m, const uint8_t *d, size_t n)
{
    if (m->n == NB || n > 64) return;
    wk_iltp_blob_hash(d, n, m->h[m->n]);
    for (size_t i = 0; i < m->n; i++)
        if (memcmp(m->h[i], m->h[m->n], 32) == 0) return;
    memcpy(m->d[m->n], d, n);
    m->len[m->n] = n;
    m->n++;
}

typedef struct lim { size_t cur, limit; } lim;
static void *l_alloc(void *o, size_t n)
{
    lim *l = o;
    if (l->limit && (n > l->limit || l->cur > l->limit - n)) return NULL;
    size_t *p = malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    l->cur += n;
    return (uint8_t *)p + 16;
}
static void l_free(void *o, void *ptr)
{
    lim *l = o;
    if (!ptr) return;
    size_t *p = (size_t *)((uint8_t *)ptr - 16);
    l->cur -= p[0];
    free(p);
}

typedef struct host {
    wk_iltp_session *s;
    mem *m;
    uint8_t rx[4096];       /* received Blob data (the fuzz input is small) */
    size_t rx_n;
    uint64_t rx_len;
    bool rx_on;
    uint8_t rx_hash[32];
    uint8_t pend[4][32];    /* stored, confirmed late */
    int npend;
    bool defer;
    wk_in tx;
    size_t piece;
} host;

/* Handles one recv event; false when the session failed through blob_stored. */
static bool on_event(host *h, wk_error *e)
{
    const wk_iltp_session_event *ev = wk_iltp_session_event_get(h->s);
    switch (ev->kind) {
    case WK_ILTP_SESSION_BLOB_BEGIN:
        CHECK(!h->rx_on);
        h->rx_on = true;
        h->rx_n = 0;
        h->rx_len = ev->length;
        memcpy(h->rx_hash, ev->hash, 32);
        break;
    case WK_ILTP_SESSION_BLOB_DATA:
        CHECK(h->rx_on && ev->offset == h->rx_n && ev->len > 0 && h->rx_n + ev->len <= h->rx_len);
        CHECK(memcmp(ev->hash, h->rx_hash, 32) == 0);
        if (h->rx_n + ev->len <= sizeof h->rx) memcpy(h->rx + h->rx_n, ev->data, ev->len);
        h->rx_n += ev->len;
        break;
    case WK_ILTP_SESSION_BLOB_END: {
        CHECK(h->rx_on && h->rx_n == h->rx_len && memcmp(ev->hash, h->rx_hash, 32) == 0);
        h->rx_on = false;
        if (h->rx_n <= sizeof h->rx) {
            uint8_t hh[32];
            wk_iltp_blob_hash(h->rx, h->rx_n, hh);
            CHECK(memcmp(hh, ev->hash, 32) == 0); /* only verified Blobs reach the store */
            m_add(h->m, h->rx, h->rx_n);
        }
        if (h->defer && h->npend < 4) {
            memcpy(h->pend[h->npend++], ev->hash, 32);
        } else if (wk_iltp_session_blob_stored(h->s, ev->hash, NULL, e) != WK_OK) {
            return false;
        }
        break;
    }
    default:
        CHECK(0);
    }
    return true;
}

static bool confirm(host *h, wk_error *e)
{
    while (h->npend)
        if (wk_iltp_session_blob_stored(h->s, h->pend[--h->npend], NULL, e) != WK_OK) return false;
    return true;
}

/* Drains send, serving reads; false on failure. */
static bool drain(host *h, wk_error *e)
{
    static uint8_t out[4096];
    for (int k = 0; k < 100000; k++) {
        wk_out o = {out, sizeof out, 0};
        wk_result r = wk_iltp_session_send(h->s, &h->tx, &o, e);
        if (r == WK_ERROR) return false;
        if (r == WK_DONE) return true;
        if (r == WK_EVENT) {
            const wk_iltp_session_event *ev = wk_iltp_session_event_get(h->s);
            CHECK(ev->kind == WK_ILTP_SESSION_BLOB_READ);
            uint64_t len = 0;
            CHECK(m_has(h->m, ev->hash, &len, NULL) && len == ev->length && ev->offset < len);
            size_t i = 0;
            while (memcmp(h->m->h[i], ev->hash, 32) != 0) i++;
            size_t n = (size_t)(len - ev->offset);
            if (n > h->piece) n = h->piece;
            h->tx = (wk_in){h->m->d[i] + ev->offset, n, 0};
        }
    }
    return true;
}

/* One run's object: the session, its store and allocator, the host's state. */
typedef struct run {
    const uint8_t *hdr; /* the input's two option bytes */
    mem m;
    lim l;
    wk_allocator a;
    host h;
    uint64_t now;
    const uint8_t *push_src; /* the push the clock last advanced for */
    size_t push_size;
} run;

static bool r_reset(void *obj, void *ctx)
{
    (void)ctx;
    run *r = obj;
    const uint8_t *d = r->hdr;
    static const char stored[] = "a Blob the local store holds";
    memset(&r->m, 0, sizeof r->m);
    m_add(&r->m, (const uint8_t *)stored, sizeof stored - 1);
    m_add(&r->m, (const uint8_t *)"", 0);
    r->l = (lim){0, (d[1] & 8) ? 64u << 10 : 0}; /* 64 KiB: below the compressed codecs' needs */
    r->a = (wk_allocator){l_alloc, l_free, &r->l};
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = WK_ILTP_SIDE1;
    p.form = (d[0] & 1) ? WK_ILTP_FORM_1_0 : WK_ILTP_FORM_0_13;
    if (d[0] & 2) {
        p.decode = "deflate12c,zstd20c";
        p.encode = "zstd20c,deflate12c";
    }
    memset(p.seed, 0x33, 32);
    p.store = (wk_iltp_store_ops){&r->m, m_has, m_next, m_seq};
    p.budget_round = (d[1] & 4) ? 300 : 1u << 20;
    p.budget_establishment = (d[1] & 4) ? 200 : 0;
    p.phase_timeout_ms = 1000;
    p.allocator = &r->a;
    memset(&r->h, 0, sizeof r->h);
    r->h.m = &r->m;
    r->h.defer = d[1] & 1;
    r->h.piece = (d[1] & 2) ? 1 : 5;
    r->now = 0;
    r->push_src = NULL;
    r->push_size = 0;
    wk_error e;
    r->h.s = wk_iltp_session_create(&p, 0, &e);
    if (!r->h.s) {
        CHECK(e.code == WK_ERR_NOMEM && r->l.limit);
        CHECK(r->l.cur == 0);
    }
    return true;
}

static void r_destroy(void *obj, void *ctx)
{
    (void)ctx;
    run *r = obj;
    wk_iltp_session_destroy(r->h.s);
    r->h.s = NULL;
    CHECK(r->l.cur == 0);
}

static wk_result r_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    (void)out;
    run *r = obj;
    if (!r->h.s) { /* creation failed under the allocator limit: the run is that failure */
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "session creation failed");
        return WK_ERROR;
    }
    if (in->src != r->push_src || in->size != r->push_size) {
        r->push_src = in->src;
        r->push_size = in->size;
        wk_iltp_session_tick(r->h.s, r->now++, NULL);
    }
    for (int k = 0;; k++) {
        CHECK(k < 100000); /* a pause that draining never releases */
        wk_result res = wk_iltp_session_recv(r->h.s, in, NULL, err);
        if (res == WK_NEED_OUTPUT) { /* over the output bound: draining send must release it */
            if (!drain(&r->h, err)) return WK_ERROR;
            continue;
        }
        if (res == WK_NEED_INPUT && (!confirm(&r->h, err) || !drain(&r->h, err))) return WK_ERROR;
        return res;
    }
}

static wk_result r_finish(void *obj, const wk_in *rest, wk_error *err)
{
    run *r = obj;
    if (!r->h.s) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "session creation failed");
        return WK_ERROR;
    }
    return wk_iltp_session_finish(r->h.s, rest, err);
}

static bool r_event(wk_contract *c, void *obj)
{
    run *r = obj;
    const wk_iltp_session_event *ev = wk_iltp_session_event_get(r->h.s);
    wk_error e;
    if (ev->kind != WK_ILTP_SESSION_BLOB_DATA) {
        wk_contract_record_u64(c, (uint64_t)ev->kind);
        wk_contract_record(c, ev->hash, 32);
    }
    /* a failed blob_stored fails the session: the next recv reports it */
    (void)on_event(&r->h, &e);
    return true;
}

static bool r_end(wk_contract *c, void *obj)
{
    run *r = obj;
    if (c->oc.verdict == WK_ERROR) {
        const wk_error *e = &c->oc.error;
        CHECK(e->category == WK_CAT_PEER_PROTOCOL || e->code == WK_ERR_ILTP_DEADLINE ||
              ((e->code == WK_ERR_NOMEM || e->code == WK_ERR_BACKEND || e->code == WK_ERR_ILTP_ENCODE) &&
               r->l.limit));
        CHECK(!r->h.s || wk_iltp_session_state_get(r->h.s) == WK_ILTP_SESSION_FAILED);
    }
    return true;
}

static const wk_contract_ops session_recv_ops = {"wk_iltp_session_recv", r_reset, r_destroy, r_step,
                                                 r_finish, r_event, r_end, false, 64, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    static run r;
    r.hdr = data;
    size_t chunk = 1 + (size_t)(data[0] >> 2) * 13;
    wk_contract_outcome cut, whole;
    fuzz_drive_runs(&session_recv_ops, &r, NULL, data + 2, size - 2, chunk, 0, &cut, &whole);
    return 0;
}
