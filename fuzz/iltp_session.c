/* libFuzzer target: the ILTP session machine fed arbitrary peer bytes (side1, both forms), with an
 * in-memory store index and a counting, limited allocator. Byte 0 picks the form, whether our
 * offers name encodings and the push size; byte 1 the size of Blob data pieces handed to send,
 * whether stored Blobs are confirmed late, the round budget and the memory limit; the rest is the
 * peer's stream. The host side follows the session's events: received Blob data is collected and
 * checked against its hash at BLOB_END, reads are served from the store in pieces.
 * Checks: no crash or leak; a failure is typed (PeerProtocol, Transport for deadlines, NOMEM
 * from the allocator limit); only Blobs whose hash matches their data are ever stored; every
 * DATA event continues its Blob at the right offset and never exceeds its length; recv's
 * WK_NEED_OUTPUT pause is released by draining send; the allocator balances at the end. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    static const char stored[] = "a Blob the local store holds";
    mem m;
    memset(&m, 0, sizeof m);
    m_add(&m, (const uint8_t *)stored, sizeof stored - 1);
    m_add(&m, (const uint8_t *)"", 0);
    lim l = {0, 0};
    wk_allocator a = {l_alloc, l_free, &l};
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = WK_ILTP_SIDE1;
    p.form = (data[0] & 1) ? WK_ILTP_FORM_1_0 : WK_ILTP_FORM_0_13;
    if (data[0] & 2) {
        p.decode = "deflate12c,zstd20c";
        p.encode = "zstd20c,deflate12c";
    }
    memset(p.seed, 0x33, 32);
    p.store = (wk_iltp_store_ops){&m, m_has, m_next, m_seq};
    p.budget_round = (data[1] & 4) ? 300 : 1u << 20;
    p.budget_establishment = (data[1] & 4) ? 200 : 0;
    p.phase_timeout_ms = 1000;
    p.allocator = &a;
    if (data[1] & 8) l.limit = 64u << 10; /* below the compressed codecs' needs */
    size_t chunk = 1 + (size_t)(data[0] >> 2) * 13;
    host h;
    memset(&h, 0, sizeof h);
    h.m = &m;
    h.defer = data[1] & 1;
    h.piece = (data[1] & 2) ? 1 : 5;
    wk_error e;
    h.s = wk_iltp_session_create(&p, 0, &e);
    if (!h.s) {
        CHECK(e.code == WK_ERR_NOMEM && l.limit);
        CHECK(l.cur == 0);
        return 0;
    }
    uint64_t now = 0;
    bool failed = false;
    for (size_t pos = 2; pos < size && !failed;) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        wk_in in = {data, pos + n, pos};
        wk_iltp_session_tick(h.s, now++, NULL);
        for (int k = 0; k < 100000 && !failed; k++) {
            wk_result r = wk_iltp_session_recv(h.s, &in, NULL, &e);
            if (r == WK_ERROR) { failed = true; break; }
            if (r == WK_EVENT) {
                if (!on_event(&h, &e)) failed = true;
                continue;
            }
            if (r == WK_NEED_INPUT) {
                CHECK(in.pos == in.size);
                break;
            }
            CHECK(r == WK_NEED_OUTPUT); /* over the output bound: draining must release it */
            if (!drain(&h, &e)) failed = true;
        }
        pos = in.pos;
        if (!failed && !confirm(&h, &e)) failed = true;
        if (!failed && !drain(&h, &e)) failed = true;
    }
    if (!failed) {
        wk_in rest = {data, size, size};
        if (wk_iltp_session_finish(h.s, &rest, &e) != WK_DONE) failed = true;
    }
    if (failed) {
        CHECK(e.category == WK_CAT_PEER_PROTOCOL || e.code == WK_ERR_ILTP_DEADLINE ||
              ((e.code == WK_ERR_NOMEM || e.code == WK_ERR_BACKEND || e.code == WK_ERR_ILTP_ENCODE) && l.limit));
        CHECK(wk_iltp_session_state_get(h.s) == WK_ILTP_SESSION_FAILED);
        /* a fatal error stays set and is reported again unchanged */
        wk_error again;
        CHECK(wk_iltp_session_recv(h.s, &(wk_in){data, size, size}, NULL, &again) == WK_ERROR);
        CHECK(again.code == e.code && again.offset == e.offset);
    }
    wk_iltp_session_destroy(h.s);
    CHECK(l.cur == 0);
    return 0;
}
