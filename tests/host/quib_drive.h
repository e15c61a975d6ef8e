/* Test driver for QUIB without libuv: one endpoint = a wk_quib_conn (src/host/quib_conn.h) + an
 * ILTP session + an in-memory Blob store, glued the way the quib: carrier and the sync
 * application glue them (open -> session, received bytes -> recv, output -> retained writes,
 * fixed point -> authorize, connector end mark + FIN, listener answers EOF with its own).
 * The network and the clock belong to the includer: tests/host/test_quib.c (packets in memory,
 * a controlled clock), tests/host/quib_peer.c (a UDP test peer with misbehaviours) and
 * fuzz/quib_session.c. Header-only (static functions); not part of the library. */
#ifndef WK_TEST_QUIB_DRIVE_H
#define WK_TEST_QUIB_DRIVE_H
#include "quib_conn.h" /* white-box: src/host is on the include path */
#include <wirekit/iltp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- deterministic randomness (connection IDs, tokens): xorshift64 over *(uint64_t *)ctx ---- */
static inline void qd_rand(void *ctx, uint8_t *p, size_t n)
{
    uint64_t *x = ctx;
    for (size_t i = 0; i < n; i++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        p[i] = (uint8_t)(*x >> 32);
    }
}

/* ---- an in-memory Blob store with the session's index operations ---- */
typedef struct qd_blob { uint8_t h[32]; uint8_t *d; size_t n; } qd_blob;
typedef struct qd_store {
    qd_blob *v;        /* in insertion order: sequence number = index + 1 */
    size_t n, cap;
    size_t *sorted;    /* indices sorted by hash */
} qd_store;

static inline size_t qd_store_pos(const qd_store *s, const uint8_t h[32], bool *found)
{
    size_t lo = 0, hi = s->n;
    *found = false;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = memcmp(s->v[s->sorted[mid]].h, h, 32);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
static inline qd_blob *qd_store_find(const qd_store *s, const uint8_t h[32])
{
    bool f;
    size_t i = qd_store_pos(s, h, &f);
    return f ? &s->v[s->sorted[i]] : NULL;
}
static inline void qd_store_add(qd_store *s, const void *d, size_t n)
{
    uint8_t h[32];
    bool f;
    wk_iltp_blob_hash(d, n, h);
    size_t at = qd_store_pos(s, h, &f);
    if (f) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        s->sorted = realloc(s->sorted, s->cap * sizeof *s->sorted);
    }
    qd_blob *b = &s->v[s->n];
    memcpy(b->h, h, 32);
    b->d = malloc(n ? n : 1);
    if (n) memcpy(b->d, d, n);
    b->n = n;
    memmove(s->sorted + at + 1, s->sorted + at, (s->n - at) * sizeof *s->sorted);
    s->sorted[at] = s->n;
    s->n++;
}
static inline void qd_store_free(qd_store *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i].d);
    free(s->v);
    free(s->sorted);
    memset(s, 0, sizeof *s);
}
static inline bool qd_store_equal(const qd_store *a, const qd_store *b)
{
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        const qd_blob *x = qd_store_find(b, a->v[i].h);
        if (!x || x->n != a->v[i].n || memcmp(x->d, a->v[i].d, x->n)) return false;
    }
    return true;
}
/* count Blobs of size bytes each, distinct per (tag, i) */
static inline void qd_store_fill(qd_store *s, int tag, int count, size_t size)
{
    uint8_t *d = malloc(size + 32);
    for (int i = 0; i < count; i++) {
        uint32_t x = (uint32_t)(tag * 7919 + i * 104729 + 1);
        for (size_t k = 0; k < size; k++) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;
            d[k] = (uint8_t)x;
        }
        if (size >= 8) { /* distinct whatever the data: tag and index in the first 8 bytes */
            uint32_t t = (uint32_t)tag, k = (uint32_t)i;
            memcpy(d, &t, 4);
            memcpy(d + 4, &k, 4);
        }
        qd_store_add(s, d, size);
    }
    free(d);
}
static inline bool qd_has(void *c, const uint8_t h[32], uint64_t *len, uint64_t *seq)
{
    qd_store *s = c;
    qd_blob *b = qd_store_find(s, h);
    if (!b) return false;
    if (len) *len = b->n;
    if (seq) *seq = (uint64_t)(b - s->v) + 1;
    return true;
}
static inline bool qd_next(void *c, const uint8_t *after, uint64_t max_seq, uint8_t out[32])
{
    qd_store *s = c;
    size_t i = 0;
    if (after) {
        bool f;
        i = qd_store_pos(s, after, &f);
        if (f) i++;
    }
    for (; i < s->n; i++)
        if (s->sorted[i] + 1 <= max_seq) {
            memcpy(out, s->v[s->sorted[i]].h, 32);
            return true;
        }
    return false;
}
static inline uint64_t qd_seq(void *c) { return ((qd_store *)c)->n; }

/* ---- an endpoint ---- */
typedef enum qd_point { QD_OPENED = 1, QD_ESTABLISHED, QD_FIXED_POINT, QD_AUTHORIZED, QD_ENDED } qd_point;

typedef struct qd_end qd_end;
struct qd_end {
    /* configuration (set before qd_start) */
    bool server;
    const char *decode, *encode;       /* 0.13 offers */
    wk_iltp_assurance assurance;       /* the session's (ChannelBound normally) */
    void (*hook)(qd_end *e, qd_point at); /* misbehaviours (may be NULL) */
    void *user;
    bool passive;                      /* misbehaving: after the hook, stop driving the session */
    bool hold;                         /* the owner does not read for now (backpressure) */
    bool stay;                         /* a connector that stays at fixed point (like --watch) */
    /* state */
    wk_quib_conn *q;
    wk_iltp_session *s;
    qd_store store;
    uint64_t now;                      /* ns, kept by the includer */
    uint8_t out[65536];
    size_t out_len, out_pos;
    bool opened, established, at_fixed, authorized, half_closed, close_queued, finished, closed, eof_seen;
    bool shut;
    uint8_t *rx;                       /* the Blob being received */
    size_t rx_n, rx_cap;
    wk_in tx_in;                       /* Blob data handed to send */
    int status;                        /* 0 clean, else the failure's exit class */
    wk_error err;
    char outcome[200];
};

static inline uint64_t qd_ms(const qd_end *e) { return e->now / 1000000u; }

static inline void qd_finish(qd_end *e, int status, const wk_error *err, const char *outcome)
{
    if (e->finished) return;
    e->finished = true;
    e->status = status;
    if (err) e->err = *err;
    snprintf(e->outcome, sizeof e->outcome, "%s", outcome);
    if (e->q) wk_quib_conn_close(e->q, e->now);
}

static inline void qd_fail(qd_end *e, const wk_error *err)
{
    char o[200];
    snprintf(o, sizeof o, "failed: %s: %.150s", wk_error_name(err->code), err->msg);
    qd_finish(e, err->category == WK_CAT_TRANSPORT ? 4 : err->category == WK_CAT_PEER_PROTOCOL ? 2 : 1, err, o);
}

static inline void qd_hook(qd_end *e, qd_point at)
{
    if (e->hook && !e->finished) e->hook(e, at);
}

/* The session's output into retention, serving BLOB_READ from the store; then settlement and
 * bounded completion, like the sync application (src/host/sync.c check_completion). */
static inline void qd_pump(qd_end *e)
{
    if (e->finished || !e->s || e->passive) return;
    wk_error err;
    for (int guard = 0; guard < 1000; guard++) {
        if (e->out_pos < e->out_len) {
            size_t k = wk_quib_conn_write(e->q, e->out + e->out_pos, e->out_len - e->out_pos);
            e->out_pos += k;
            if (e->out_pos < e->out_len) return; /* retention full: wait for acknowledgements */
        }
        wk_out o = {e->out, sizeof e->out, 0};
        wk_result r;
        for (;;) {
            r = wk_iltp_session_send(e->s, e->tx_in.src ? &e->tx_in : NULL, &o, &err);
            if (r != WK_EVENT) break;
            const wk_iltp_session_event *ev = wk_iltp_session_event_get(e->s);
            qd_blob *b = qd_store_find(&e->store, ev->hash);
            if (!b || ev->offset > b->n) {
                wk_error_set(&err, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "read event for a Blob we lack");
                r = WK_ERROR;
                break;
            }
            e->tx_in = (wk_in){b->d + ev->offset, b->n - (size_t)ev->offset, 0};
        }
        if (r == WK_ERROR) {
            qd_fail(e, &err);
            return;
        }
        e->out_len = o.pos;
        e->out_pos = 0;
        if (!o.pos) break;
    }
    wk_iltp_session_state st = wk_iltp_session_state_get(e->s);
    if (!e->established && st >= WK_ILTP_SESSION_ROUND && st <= WK_ILTP_SESSION_FIXED_POINT) {
        e->established = true;
        qd_hook(e, QD_ESTABLISHED);
        if (e->finished || e->passive) return;
    }
    bool idle_io = !e->rx_n && !wk_iltp_session_wants_send(e->s) && e->out_pos == e->out_len;
    if (st == WK_ILTP_SESSION_FIXED_POINT && idle_io && !e->authorized) {
        e->authorized = true;
        wk_quib_conn_authorize(e->q);
        qd_hook(e, QD_FIXED_POINT);
        if (e->finished || e->passive) return;
    }
    if ((st == WK_ILTP_SESSION_FIXED_POINT || st == WK_ILTP_SESSION_CLOSED) && idle_io && !e->close_queued &&
        ((!e->server && !e->stay) || e->eof_seen)) {
        e->close_queued = true;
        if (wk_iltp_session_close(e->s, &err) != WK_OK) {
            qd_fail(e, &err);
            return;
        }
        qd_pump(e);
        return;
    }
    if (wk_iltp_session_closed_locally(e->s) && e->out_pos == e->out_len && !e->half_closed) {
        e->half_closed = true;
        if (wk_quib_conn_shutdown(e->q, e->now, &err) != WK_OK) qd_fail(e, &err);
    }
    if (e->shut && e->eof_seen && st == WK_ILTP_SESSION_CLOSED) qd_finish(e, 0, NULL, "clean");
}

/* Received bytes into the session: Blob events into the store. False when it stopped early
 * (output bound): the caller keeps the rest. */
static inline size_t qd_feed(qd_end *e, const uint8_t *p, size_t n)
{
    wk_in in = {p, n, 0};
    wk_error err;
    for (int guard = 0; guard < 100000; guard++) {
        wk_result r = wk_iltp_session_recv(e->s, &in, NULL, &err);
        if (r == WK_ERROR) {
            qd_fail(e, &err);
            return n;
        }
        if (r == WK_NEED_INPUT) break;
        if (r == WK_NEED_OUTPUT) {
            size_t before = e->out_len - e->out_pos;
            qd_pump(e);
            if (e->finished || (e->out_len - e->out_pos) >= before) break; /* no room: later */
            continue;
        }
        const wk_iltp_session_event *ev = wk_iltp_session_event_get(e->s);
        if (ev->kind == WK_ILTP_SESSION_BLOB_BEGIN) {
            if (ev->length > e->rx_cap) {
                e->rx_cap = (size_t)ev->length;
                e->rx = realloc(e->rx, e->rx_cap ? e->rx_cap : 1);
            }
            e->rx_n = 0;
        } else if (ev->kind == WK_ILTP_SESSION_BLOB_DATA) {
            memcpy(e->rx + e->rx_n, ev->data, ev->len);
            e->rx_n += ev->len;
        } else if (ev->kind == WK_ILTP_SESSION_BLOB_END) {
            uint8_t h[32];
            memcpy(h, ev->hash, 32);
            qd_store_add(&e->store, e->rx, e->rx_n);
            e->rx_n = 0;
            if (wk_iltp_session_blob_stored(e->s, h, NULL, &err) != WK_OK) {
                qd_fail(e, &err);
                return n;
            }
        }
    }
    return in.pos;
}

static inline void qd_open_session(qd_end *e)
{
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = e->server ? WK_ILTP_SIDE0 : WK_ILTP_SIDE1;
    p.form = WK_ILTP_FORM_0_13;
    p.decode = e->decode;
    p.encode = e->encode;
    for (int i = 0; i < 32; i++) p.seed[i] = (uint8_t)(i * 37 + (e->server ? 1 : 2));
    p.store = (wk_iltp_store_ops){&e->store, qd_has, qd_next, qd_seq};
    p.assurance = e->assurance;
    memcpy(p.channel_exporter, wk_quib_conn_exporter(e->q), 32);
    wk_error err;
    e->s = wk_iltp_session_create(&p, qd_ms(e), &err);
    if (!e->s) qd_fail(e, &err);
}

/* Handles every pending connection event and received byte. Call after each recv/timeout. */
static inline void qd_step(qd_end *e)
{
    if (!e->q) return;
    for (int guard = 0; guard < 64; guard++) {
        wk_quib_event ev = wk_quib_conn_poll(e->q);
        bool busy = ev != WK_QUIB_EV_NONE;
        switch (ev) {
        case WK_QUIB_EV_FAILED:
            if (!e->finished) qd_fail(e, wk_quib_conn_error(e->q));
            else wk_quib_conn_close(e->q, e->now);
            break;
        case WK_QUIB_EV_OPENED:
            e->opened = true;
            if (!e->finished) qd_open_session(e);
            qd_hook(e, QD_OPENED);
            break;
        case WK_QUIB_EV_SHUT:
            e->shut = true;
            qd_pump(e);
            break;
        case WK_QUIB_EV_ENDED: {
            e->eof_seen = true;
            if (e->finished || !e->s || e->passive) break;
            wk_error err;
            if (wk_iltp_session_finish(e->s, NULL, &err) != WK_DONE) {
                qd_fail(e, &err);
                break;
            }
            qd_hook(e, QD_ENDED);
            qd_pump(e);
            break;
        }
        case WK_QUIB_EV_CLOSED:
            e->closed = true;
            if (!e->finished) {
                wk_error err;
                wk_error_set(&err, WK_ERR_HOST_READ, WK_NO_OFFSET, "the connection closed");
                qd_fail(e, &err);
            }
            break;
        case WK_QUIB_EV_NONE: break;
        }
        size_t n;
        const uint8_t *p = wk_quib_conn_peek(e->q, &n);
        if (e->hold) p = NULL;
        if (p && e->s && !e->finished && !e->passive) {
            size_t used = qd_feed(e, p, n);
            wk_quib_conn_consume(e->q, used);
            busy = used > 0;
        } else if (p && (e->finished || e->passive)) {
            wk_quib_conn_consume(e->q, n); /* discarded */
            busy = true;
        }
        qd_pump(e);
        if (!busy) break;
    }
}

/* Ticks the session's phase deadline. */
static inline void qd_tick(qd_end *e)
{
    if (!e->s || e->finished) return;
    wk_error err;
    if (wk_iltp_session_tick(e->s, qd_ms(e), &err) != WK_OK) qd_fail(e, &err);
}

static inline void qd_free(qd_end *e)
{
    free(e->rx);
    e->rx = NULL;
    wk_iltp_session_destroy(e->s);
    wk_quib_conn_free(e->q);
    qd_store_free(&e->store);
    e->s = NULL;
    e->q = NULL;
}

/* ---- a network in memory: datagrams with delivery times, a controlled clock ---- */
typedef struct qd_pkt { uint64_t at; int dir; size_t len; uint8_t d[WK_QUIB_MAX_DATAGRAM]; } qd_pkt;
enum { QD_DELIVER = 0, QD_DROP, QD_DUP, QD_DELAY };

typedef struct qd_net {
    qd_pkt *q;
    size_t n, cap;
    uint64_t latency;                    /* one way, ns */
    uint64_t sent[2];                    /* per direction: 0 client->server, 1 server->client */
    /* what happens to the index-th datagram of a direction (may rewrite p: fuzzing) */
    int (*fault)(void *ctx, int dir, uint64_t index, qd_pkt *p);
    void *fault_ctx;
    bool server_forgot;                  /* the server lost its state: stateless resets */
    bool server_silent;                  /* the server neither sends nor receives */
    uint64_t resets;
    uint8_t reset_secret[WK_QUIB_RESET_SECRET_LEN];
    wk_quib_addr server_addr, client_addr;
    wk_quib_params server;               /* template of the server connection (tls, timeouts) */
    void (*rand)(void *ctx, uint8_t *p, size_t n);
    void *rand_ctx;
} qd_net;

static inline void qd_net_enqueue(qd_net *nw, int dir, const uint8_t *d, size_t len, uint64_t at)
{
    if (len > WK_QUIB_MAX_DATAGRAM) len = WK_QUIB_MAX_DATAGRAM;
    if (nw->n == nw->cap) {
        nw->cap = nw->cap ? nw->cap * 2 : 256;
        nw->q = realloc(nw->q, nw->cap * sizeof *nw->q);
    }
    qd_pkt *p = &nw->q[nw->n++];
    p->at = at;
    p->dir = dir;
    p->len = len;
    memcpy(p->d, d, len);
}

static inline void qd_net_transmit(qd_net *nw, int dir, const uint8_t *d, size_t len, uint64_t now)
{
    uint64_t idx = nw->sent[dir]++;
    qd_pkt tmp;
    tmp.len = len;
    memcpy(tmp.d, d, len);
    int f = nw->fault ? nw->fault(nw->fault_ctx, dir, idx, &tmp) : QD_DELIVER;
    if (f == QD_DROP) return;
    qd_net_enqueue(nw, dir, tmp.d, tmp.len, now + nw->latency + (f == QD_DELAY ? 5 * nw->latency : 0));
    if (f == QD_DUP) qd_net_enqueue(nw, dir, tmp.d, tmp.len, now + nw->latency + 1000);
}

/* Sends one burst of e's datagrams into direction dir. */
static inline void qd_net_flush(qd_end *e, qd_net *nw, int dir)
{
    if (!e->q) return;
    if (dir == 1 && (nw->server_silent || nw->server_forgot)) return;
    size_t burst = wk_quib_conn_burst(e->q);
    uint8_t buf[WK_QUIB_MAX_DATAGRAM];
    for (size_t i = 0; i < burst; i++) {
        size_t n = wk_quib_conn_send(e->q, buf, sizeof buf, e->now);
        if (!n) break;
        qd_net_transmit(nw, dir, buf, n, e->now);
    }
    wk_quib_conn_sent(e->q, e->now);
}

static inline bool qd_server_gone(const qd_net *nw) { return nw->server_forgot || nw->server_silent; }

/* One step of the pair e[0] (server) and e[1] (client, created by the caller): both send, the
 * clock moves to the next event (never past limit), due datagrams arrive (the server connection
 * is made from the first client Initial), timers run, both endpoints handle their events.
 * Returns false when nothing can happen before limit. */
static inline bool qd_pair_step(qd_end e[2], qd_net *nw, uint64_t *now, uint64_t limit)
{
    qd_net_flush(&e[1], nw, 0);
    qd_net_flush(&e[0], nw, 1);
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < nw->n; i++)
        if (nw->q[i].at < next) next = nw->q[i].at;
    for (int i = 0; i < 2; i++)
        if (e[i].q && !(i == 0 && qd_server_gone(nw))) {
            uint64_t x = wk_quib_conn_expiry(e[i].q);
            if (x < next) next = x;
        }
    if (next == UINT64_MAX || next > limit) return false;
    if (next > *now) *now = next;
    e[0].now = e[1].now = *now;
    for (;;) { /* deliver due datagrams in order of time */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < nw->n; i++)
            if (nw->q[i].at <= *now && (best == SIZE_MAX || nw->q[i].at < nw->q[best].at)) best = i;
        if (best == SIZE_MAX) break;
        qd_pkt p0 = nw->q[best];
        nw->q[best] = nw->q[--nw->n];
        if (p0.dir == 1) {
            if (e[1].q) wk_quib_conn_recv(e[1].q, &nw->server_addr, p0.d, p0.len, *now);
            continue;
        }
        if (nw->server_silent) continue;
        if (nw->server_forgot) {
            wk_quib_dgram d;
            if (wk_quib_dgram_parse(p0.d, p0.len, &d) == 0 && !d.long_header) {
                uint8_t r[64], rb[40];
                nw->rand(nw->rand_ctx, rb, sizeof rb);
                size_t rn = wk_quib_write_stateless_reset(r, sizeof r, nw->reset_secret, d.dcid, d.dcid_len, p0.len,
                                                          rb, sizeof rb);
                if (rn) {
                    qd_net_enqueue(nw, 1, r, rn, *now + nw->latency);
                    nw->resets++;
                }
            }
            continue;
        }
        if (!e[0].q) {
            if (!wk_quib_dgram_is_initial(p0.d, p0.len)) continue;
            wk_quib_params sp = nw->server;
            sp.server = true;
            sp.local = nw->server_addr;
            sp.remote = nw->client_addr;
            sp.initial = p0.d;
            sp.initial_len = p0.len;
            sp.reset_secret = nw->reset_secret;
            sp.rand = nw->rand;
            sp.rand_ctx = nw->rand_ctx;
            wk_error err;
            e[0].q = wk_quib_conn_create(&sp, *now, &err);
            if (!e[0].q) continue;
        }
        wk_quib_conn_recv(e[0].q, &nw->client_addr, p0.d, p0.len, *now);
    }
    for (int i = 0; i < 2; i++) {
        if (!e[i].q || (i == 0 && qd_server_gone(nw))) continue;
        if (wk_quib_conn_expiry(e[i].q) <= *now) wk_quib_conn_timeout(e[i].q, *now);
        qd_step(&e[i]);
        qd_tick(&e[i]);
    }
    return true;
}

static inline void qd_make_addr(wk_quib_addr *a, uint16_t port)
{
    struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
    memset(a, 0, sizeof *a);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(0x7f000001);
    a->len = sizeof *in;
}
#endif
