/* wirekit host: the quib: carrier (Lace-060 `quib:host[:port]`, default port 4790): ILTP over one
 * client-opened bidirectional QUIC stream, behind the carrier interface (carrier.h).
 *
 * The QUIC connection itself is sans-I/O (quib_conn.c, the only file that calls ngtcp2; its
 * header lists the QUIB decisions). This file is its I/O: a UDP socket on the event loop, one
 * libuv timer per connection armed at the connection's expiry (retransmission, acknowledgement,
 * idle, pacing and finish deadlines), bursts of at most ngtcp2's send quantum per wakeup
 * (ngtcp2's pacing), and the events of the carrier interface. A burst of equal-sized datagrams
 * leaves in one sendmsg with UDP generic segmentation offload (UDP_SEGMENT, datagram by datagram
 * where the kernel refuses it), and datagrams arrive in batches (recvmmsg); each connection that
 * received some is serviced once per batch.
 *
 * A listener serves many connections on one UDP socket. Datagrams are routed by destination
 * connection ID: every ID a connection issues (and the client's original one) is in a hash table.
 * An unknown QUIC v1 Initial is a new connection, delivered through accepted(); other versions
 * get Version Negotiation listing v1; a short-header datagram for an unknown ID gets a stateless
 * reset (token from a per-listener secret, so a connection forgotten by a restart is reset
 * authentically; at most 64 resets per second); anything else is dropped. The socket stays until
 * the listener is closed and its last connection has called closed().
 *
 * A connector resolves its host when it is made, binds an ephemeral UDP port, connects the socket
 * to the server and verifies the server's certificate chain (--ca, else the system store) and the
 * address's host name.
 *
 * Proof assurance: ChannelBound from the connection's exporter, unless overridden (Lace-060 table,
 * wk_host_assurance_resolve). Settlement: authorize() is passed to the connection (quib_conn.h).
 * Writes: the owner's batch is copied into the connection's retention as acknowledgements free
 * room; written() follows when the whole batch is copied. Reads: received() sees the bytes in
 * order; bytes it does not consume stay in the connection, which returns no credit for them. */
#include "carrier.h"
#include "quib_conn.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#define RECV_BUF (16 * 65536)      /* 16 datagrams per recvmmsg */
#define SOCK_BUF (4u << 20)
#define PENDING_MAX 64              /* datagrams queued while the socket would block */
#define RESETS_PER_SECOND 64

typedef struct quib_ep quib_ep;
typedef struct quib_carrier quib_carrier;

/* A datagram waiting for the socket (uv_udp_send keeps the buffer until its callback). */
typedef struct pending {
    uv_udp_send_t req;
    quib_ep *ep;
    size_t len;
    uint8_t data[WK_QUIB_MAX_DATAGRAM];
} pending;

/* connection ID -> carrier */
typedef struct cid_entry {
    struct cid_entry *next;
    quib_carrier *qc;
    uint8_t len;
    uint8_t id[20];
} cid_entry;

/* A UDP endpoint: a listener's shared socket, or a connector's own. */
struct quib_ep {
    wk_carrier_listener l;          /* first (used when the endpoint listens) */
    wk_host_loop *loop;
    uv_udp_t udp;
    bool udp_init, listening, closing;
    int refs;                       /* carriers using the socket, plus the listener itself */
    wk_quib_addr local;
    wk_quib_tls *tls;
    wk_carrier_config cfg;          /* copied; file names are borrowed from the caller */
    uint8_t reset_secret[WK_QUIB_RESET_SECRET_LEN];
    cid_entry **buckets;
    size_t nbuckets, nentries;
    int pending;                    /* datagrams queued with uv_udp_send */
    uint64_t reset_window;          /* stateless reset rate limit: second and count */
    int resets_in_window;
    bool no_gso;                    /* the kernel refused UDP_SEGMENT: datagram by datagram */
    quib_carrier *only;             /* a connector's one carrier */
    uv_check_t check;               /* services the connections datagrams arrived for */
    quib_carrier *dirty;            /* ... listed here until then */
    int handles;                    /* open libuv handles (the socket, the check) */
};

struct quib_carrier {
    wk_carrier c;                   /* first: a quib_carrier is a wk_carrier */
    quib_ep *ep;
    wk_quib_conn *q;
    wk_quib_addr remote;
    uv_timer_t timer;
    uv_idle_t idle;
    int open_handles;
    uint8_t *initial;               /* server: the first datagram, until start */
    size_t initial_len;
    uint8_t odcid[20];              /* server: the client's original destination ID */
    size_t odcid_len;
    bool started, opened, want_read, closing, dead, released, blocked;
    const uint8_t *wp;              /* the write in flight (the owner's buffer) */
    size_t wn, wdone;
    bool writing, written_due;
    bool setup_failed;              /* start() failed: failed() follows from the loop */
    wk_error setup_err;
    bool dirty;                     /* datagrams arrived: serviced after this poll's batch */
    quib_carrier *dirty_next;
};

static uint64_t now_ns(void) { return uv_hrtime(); }

/* ---- the connection ID table ------------------------------------------------------------- */
static size_t cid_hash(const uint8_t *id, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ id[i]) * 1099511628211ull;
    return (size_t)h;
}

static void cid_add(quib_ep *ep, quib_carrier *qc, const uint8_t *id, size_t len)
{
    if (len > 20) return;
    if (ep->nentries + 1 > ep->nbuckets) {
        size_t nb = ep->nbuckets ? ep->nbuckets * 2 : 64;
        cid_entry **b = calloc(nb, sizeof *b);
        if (b) {
            for (size_t i = 0; i < ep->nbuckets; i++)
                for (cid_entry *e = ep->buckets[i], *next; e; e = next) {
                    next = e->next;
                    size_t k = cid_hash(e->id, e->len) & (nb - 1);
                    e->next = b[k];
                    b[k] = e;
                }
            free(ep->buckets);
            ep->buckets = b;
            ep->nbuckets = nb;
        }
        if (!ep->nbuckets) return;
    }
    cid_entry *e = malloc(sizeof *e);
    if (!e) return; /* datagrams to this ID will be dropped; the connection recovers or times out */
    e->qc = qc;
    e->len = (uint8_t)len;
    memcpy(e->id, id, len);
    size_t k = cid_hash(id, len) & (ep->nbuckets - 1);
    e->next = ep->buckets[k];
    ep->buckets[k] = e;
    ep->nentries++;
}

static quib_carrier *cid_find(quib_ep *ep, const uint8_t *id, size_t len)
{
    if (!ep->nbuckets) return NULL;
    for (cid_entry *e = ep->buckets[cid_hash(id, len) & (ep->nbuckets - 1)]; e; e = e->next)
        if (e->len == len && memcmp(e->id, id, len) == 0) return e->qc;
    return NULL;
}

static void cid_remove(quib_ep *ep, const uint8_t *id, size_t len)
{
    if (!ep->nbuckets) return;
    for (cid_entry **pp = &ep->buckets[cid_hash(id, len) & (ep->nbuckets - 1)]; *pp; pp = &(*pp)->next)
        if ((*pp)->len == len && memcmp((*pp)->id, id, len) == 0) {
            cid_entry *e = *pp;
            *pp = e->next;
            free(e);
            ep->nentries--;
            return;
        }
}

static void cid_remove_all(quib_ep *ep, quib_carrier *qc)
{
    for (size_t i = 0; i < ep->nbuckets; i++)
        for (cid_entry **pp = &ep->buckets[i]; *pp;) {
            if ((*pp)->qc == qc) {
                cid_entry *e = *pp;
                *pp = e->next;
                free(e);
                ep->nentries--;
            } else {
                pp = &(*pp)->next;
            }
        }
}

static void on_cid(void *ctx, bool add, const uint8_t *id, size_t len)
{
    quib_carrier *qc = ctx;
    if (add) cid_add(qc->ep, qc, id, len);
    else cid_remove(qc->ep, id, len);
}

/* ---- the socket ------------------------------------------------------------------------------ */
static void ep_release(quib_ep *ep);

static void on_sent(uv_udp_send_t *r, int status)
{
    (void)status; /* UDP: a lost datagram is QUIC's business */
    pending *p = r->data;
    quib_ep *ep = p->ep;
    ep->pending--;
    free(p);
    if (ep->closing && ep->refs == 0 && ep->pending == 0) ep_release(ep);
}

/* Sends one datagram now, or queues it (bounded) if the socket would block. Returns false when
 * the socket is backed up and the caller should stop writing for now. */
static bool ep_send(quib_ep *ep, const wk_quib_addr *to, const uint8_t *d, size_t n)
{
    const struct sockaddr *addr = ep->listening ? (const struct sockaddr *)&to->ss : NULL;
    uv_buf_t b = uv_buf_init((char *)d, (unsigned)n);
    if (ep->pending == 0) {
        int rc = uv_udp_try_send(&ep->udp, &b, 1, addr);
        if (rc >= 0) return true;
        if (rc != UV_EAGAIN && rc != UV_ENOBUFS) return true; /* e.g. ECONNREFUSED: dropped */
    }
    if (ep->pending >= PENDING_MAX) return false;
    pending *p = malloc(sizeof *p);
    if (!p) return false;
    p->ep = ep;
    p->len = n;
    memcpy(p->data, d, n);
    p->req.data = p;
    b = uv_buf_init((char *)p->data, (unsigned)n);
    if (uv_udp_send(&p->req, &ep->udp, &b, 1, addr, on_sent) != 0) {
        free(p);
        return true;
    }
    ep->pending++;
    return ep->pending < PENDING_MAX / 2;
}

static void on_ep_closed(uv_handle_t *h)
{
    quib_ep *ep = h->data;
    if (--ep->handles > 0) return;
    for (size_t i = 0; i < ep->nbuckets; i++)
        for (cid_entry *e = ep->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(ep->buckets);
    wk_quib_tls_free(ep->tls);
    free(ep);
}

/* Releases the socket once nothing uses it. */
static void ep_release(quib_ep *ep)
{
    if (ep->refs > 0 || ep->pending > 0) return;
    ep->udp.data = ep;
    ep->check.data = ep;
    ep->handles = 1; /* ours, dropped below */
    if (ep->udp_init) {
        ep->udp_init = false;
        ep->handles++;
        uv_udp_recv_stop(&ep->udp);
        uv_close((uv_handle_t *)&ep->udp, on_ep_closed);
    }
    if (!uv_is_closing((uv_handle_t *)&ep->check)) {
        ep->handles++;
        uv_check_stop(&ep->check);
        uv_close((uv_handle_t *)&ep->check, on_ep_closed);
    }
    on_ep_closed((uv_handle_t *)&ep->udp);
}

static void ep_unref(quib_ep *ep)
{
    if (--ep->refs == 0 && ep->closing) ep_release(ep);
}

static uint8_t recv_buf[RECV_BUF]; /* the loop's one receive buffer (one thread) */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    *b = uv_buf_init((char *)recv_buf, sizeof recv_buf);
}

static void addr_text(const wk_quib_addr *a, char *out, size_t cap)
{
    char ip[64] = "?";
    unsigned port = 0;
    if (a->ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->ss;
        uv_ip6_name(s6, ip, sizeof ip);
        port = ntohs(s6->sin6_port);
        snprintf(out, cap, "[%s]:%u", ip, port);
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&a->ss;
        uv_ip4_name(s4, ip, sizeof ip);
        port = ntohs(s4->sin_port);
        snprintf(out, cap, "%s:%u", ip, port);
    }
}

/* ---- one carrier -------------------------------------------------------------------------- */
static quib_carrier *of(wk_carrier *c) { return (quib_carrier *)c; }
static void service(quib_carrier *qc);

static void on_handle_closed(uv_handle_t *h)
{
    quib_carrier *qc = h->data;
    if (--qc->open_handles > 0) return;
    quib_ep *ep = qc->ep;
    const wk_carrier_events *ev = qc->c.ev;
    wk_quib_conn_free(qc->q);
    free(qc->initial);
    if (ev) ev->closed(&qc->c);
    free(qc);
    ep_unref(ep);
}

/* Frees the carrier: its routes, its handles; closed() follows from the handle callbacks. */
static void release(quib_carrier *qc)
{
    if (qc->released) return;
    qc->released = true;
    if (qc->dirty) {
        for (quib_carrier **pp = &qc->ep->dirty; *pp; pp = &(*pp)->dirty_next)
            if (*pp == qc) {
                *pp = qc->dirty_next;
                break;
            }
        qc->dirty = false;
    }
    cid_remove_all(qc->ep, qc);
    if (qc->ep->only == qc) qc->ep->only = NULL;
    uv_timer_stop(&qc->timer);
    uv_idle_stop(&qc->idle);
    qc->open_handles = 2;
    qc->timer.data = qc;
    qc->idle.data = qc;
    uv_close((uv_handle_t *)&qc->timer, on_handle_closed);
    uv_close((uv_handle_t *)&qc->idle, on_handle_closed);
    if (!qc->ep->listening) {
        /* a connector's socket goes with its carrier */
        qc->ep->closing = true;
    }
}

static void on_timer(uv_timer_t *t)
{
    quib_carrier *qc = t->data;
    if (qc->released || !qc->q) return;
    uint64_t now = now_ns();
    if (wk_quib_conn_expiry(qc->q) <= now) wk_quib_conn_timeout(qc->q, now);
    service(qc);
}

/* Deferred work, and waits shorter than a timer can express: runs once per loop iteration,
 * after the loop polled the socket. */
static void on_idle(uv_idle_t *h)
{
    quib_carrier *qc = h->data;
    uv_idle_stop(&qc->idle);
    if (qc->q && !qc->released) {
        uint64_t now = now_ns();
        if (wk_quib_conn_expiry(qc->q) <= now) wk_quib_conn_timeout(qc->q, now);
    }
    service(qc);
}

static void arm(quib_carrier *qc)
{
    if (qc->released || !qc->q) return;
    uint64_t e = wk_quib_conn_expiry(qc->q);
    if (e == UINT64_MAX) {
        uv_timer_stop(&qc->timer);
        return;
    }
    uint64_t now = now_ns();
    /* libuv timers have millisecond resolution, and libuv 1.44 runs a 0 ms timer started from a
     * timer callback again before it polls for I/O. ngtcp2's pacing and acknowledgement timers
     * ask for much finer waits: a wait under a millisecond runs from the idle handle, once per
     * loop iteration after the socket was polled, instead of a timer */
    if (e <= now + 1000000) {
        uv_timer_stop(&qc->timer);
        uv_idle_start(&qc->idle, on_idle);
        return;
    }
    uv_timer_start(&qc->timer, on_timer, (e - now) / 1000000, 0);
}

/* Writes what the connection has to send, in one burst. */
/* A burst of datagrams of one size (the last may be shorter) to one destination, in one
 * sendmsg with UDP generic segmentation offload when the kernel has it; datagram by datagram
 * (ep_send, which queues what would block) otherwise. Returns false when the socket is backed
 * up. */
static bool ep_send_burst(quib_ep *ep, const wk_quib_addr *to, const uint8_t *buf, size_t seg, size_t count,
                          size_t total)
{
#ifdef UDP_SEGMENT
    if (count > 1 && !ep->no_gso && ep->pending == 0) {
        uv_os_fd_t fd;
        if (uv_fileno((const uv_handle_t *)&ep->udp, &fd) == 0) {
            struct iovec iov = {(void *)buf, total};
            union { char b[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } ctl;
            struct msghdr m;
            memset(&m, 0, sizeof m);
            if (ep->listening) {
                m.msg_name = (void *)&to->ss;
                m.msg_namelen = to->len;
            }
            m.msg_iov = &iov;
            m.msg_iovlen = 1;
            m.msg_control = ctl.b;
            m.msg_controllen = sizeof ctl.b;
            struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t gso = (uint16_t)seg;
            memcpy(CMSG_DATA(cm), &gso, sizeof gso);
            ssize_t r;
            do r = sendmsg(fd, &m, 0);
            while (r < 0 && errno == EINTR);
            if (r == (ssize_t)total) return true;
            if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) ep->no_gso = true;
            /* would block, or no GSO here: one by one below (queued as needed) */
        }
    }
#endif
    for (size_t i = 0, off = 0; i < count; i++, off += seg) {
        size_t n = i + 1 < count ? seg : total - off;
        if (!ep_send(ep, to, buf + off, n)) return false;
    }
    return true;
}

#define BURST_MAX 64
static uint8_t burst_buf[BURST_MAX * WK_QUIB_MAX_DATAGRAM]; /* the loop's one burst (one thread) */

/* Writes what the connection has to send, in one burst of at most ngtcp2's send quantum. */
static void flush(quib_carrier *qc)
{
    if (!qc->q) return;
    uint64_t now = now_ns();
    size_t burst = wk_quib_conn_burst(qc->q);
    if (burst > BURST_MAX) burst = BURST_MAX;
    size_t seg = 0, count = 0, total = 0;
    bool ok = true;
    for (size_t i = 0; i < burst && ok; i++) {
        size_t n = wk_quib_conn_send(qc->q, burst_buf + total, WK_QUIB_MAX_DATAGRAM, now);
        if (!n) break;
        if (count && n > seg) { /* a larger one cannot join: send what we have, start again */
            uint8_t tmp[WK_QUIB_MAX_DATAGRAM];
            memcpy(tmp, burst_buf + total, n);
            ok = ep_send_burst(qc->ep, &qc->remote, burst_buf, seg, count, total);
            memcpy(burst_buf, tmp, n);
            total = count = 0;
        }
        if (!count) seg = n;
        count++;
        total += n;
        if (n < seg) { /* a shorter one ends a segment run */
            ok = ep_send_burst(qc->ep, &qc->remote, burst_buf, seg, count, total);
            total = count = 0;
        }
    }
    if (count && ok) ep_send_burst(qc->ep, &qc->remote, burst_buf, seg, count, total);
    wk_quib_conn_sent(qc->q, now);
}

/* Copies the write in flight into retention; written() once all of it is in. */
static void feed_write(quib_carrier *qc)
{
    if (!qc->writing) return;
    qc->wdone += wk_quib_conn_write(qc->q, qc->wp + qc->wdone, qc->wn - qc->wdone);
    if (qc->wdone == qc->wn) {
        qc->writing = false;
        qc->written_due = true;
    }
}

/* Everything after an input: send, report events, deliver received bytes, re-arm the timer.
 * Owner callbacks run only from here (never inside an owner's call into the carrier). */
static void service(quib_carrier *qc)
{
    if (qc->released) return;
    if (!qc->q) {
        if (qc->setup_failed && !qc->dead && !qc->closing) {
            qc->dead = true;
            qc->c.ev->failed(&qc->c, &qc->setup_err);
        }
        return;
    }
    for (int round = 0; round < 8 && !qc->released; round++) {
        bool busy = false;
        feed_write(qc);
        flush(qc);
        wk_quib_event ev = wk_quib_conn_poll(qc->q);
        if (ev != WK_QUIB_EV_NONE) busy = true;
        if (qc->closing) {
            if (ev == WK_QUIB_EV_CLOSED || wk_quib_conn_done(qc->q)) { /* CLOSED may have come first */
                release(qc);
                return;
            }
            if (busy) continue;
            break;
        }
        switch (ev) {
        case WK_QUIB_EV_FAILED:
            qc->dead = true;
            qc->c.ev->failed(&qc->c, wk_quib_conn_error(qc->q));
            continue;
        case WK_QUIB_EV_OPENED:
            qc->opened = true;
            memcpy(qc->c.exporter, wk_quib_conn_exporter(qc->q), 32);
            qc->c.has_exporter = true;
            qc->c.assurance = wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, false, true, qc->ep->cfg.assurance_override);
            qc->c.ev->opened(&qc->c);
            continue;
        case WK_QUIB_EV_SHUT: qc->c.ev->shut(&qc->c); continue;
        case WK_QUIB_EV_ENDED: qc->c.ev->ended(&qc->c); continue;
        case WK_QUIB_EV_CLOSED: {
            /* over without a failure: a settled peer close or reset waits for the owner's own
             * completion (ended() and shut() came); anything else means the transport is gone */
            if (!qc->dead && !wk_quib_conn_settled(qc->q)) {
                wk_error e;
                wk_error_set(&e, WK_ERR_HOST_READ, WK_NO_OFFSET, "the QUIC connection closed");
                qc->dead = true;
                qc->c.ev->failed(&qc->c, &e);
            }
            continue;
        }
        case WK_QUIB_EV_NONE: break;
        }
        if (qc->written_due && !qc->dead) {
            qc->written_due = false;
            qc->c.ev->written(&qc->c);
            busy = true;
            if (qc->closing || qc->released) continue;
        }
        if (qc->want_read && !qc->dead) {
            size_t n;
            const uint8_t *p = wk_quib_conn_peek(qc->q, &n);
            if (p) {
                size_t used = qc->c.ev->received(&qc->c, p, n);
                if (qc->released || qc->closing) continue;
                if (used > n) used = n;
                wk_quib_conn_consume(qc->q, used);
                if (used < n) qc->want_read = false; /* paused: the rest stays, without credit */
                busy = true;
            }
        }
        if (!busy) break;
    }
    if (!qc->released) {
        flush(qc);
        arm(qc);
    }
}

static void c_start(wk_carrier *c)
{
    quib_carrier *qc = of(c);
    if (qc->started || qc->closing) return;
    qc->started = true;
    wk_quib_params p;
    memset(&p, 0, sizeof p);
    p.server = qc->ep->listening;
    p.tls = qc->ep->tls;
    p.hostname = qc->c.address.host;
    p.local = qc->ep->local;
    p.remote = qc->remote;
    p.initial = qc->initial;
    p.initial_len = qc->initial_len;
    p.reset_secret = qc->ep->reset_secret;
    p.handshake_timeout_ms = qc->ep->cfg.transport_timeout_ms;
    p.idle_timeout_ms = qc->ep->cfg.transport_timeout_ms;
    p.finish_timeout_ms = qc->ep->cfg.transport_timeout_ms;
    p.cid_event = p.server ? on_cid : NULL;
    p.cid_ctx = qc;
    uint64_t now = now_ns();
    wk_error e;
    qc->q = wk_quib_conn_create(&p, now, &e);
    if (!qc->q) { /* reported from the loop, like any setup failure */
        qc->setup_failed = true;
        qc->setup_err = e;
        uv_idle_start(&qc->idle, on_idle);
        return;
    }
    if (p.server) {
        wk_quib_conn_recv(qc->q, &qc->remote, qc->initial, qc->initial_len, now);
        free(qc->initial);
        qc->initial = NULL;
        qc->initial_len = 0;
    }
    uv_idle_start(&qc->idle, on_idle);
}

static void c_read(wk_carrier *c, bool on)
{
    quib_carrier *qc = of(c);
    if (qc->closing || qc->dead) return;
    qc->want_read = on;
    if (on && qc->q) uv_idle_start(&qc->idle, on_idle);
}

static wk_code c_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    quib_carrier *qc = of(c);
    if (qc->closing || qc->dead || !qc->opened || qc->writing || qc->written_due || n == 0)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "carrier write not possible now");
    qc->wp = p;
    qc->wn = n;
    qc->wdone = 0;
    qc->writing = true;
    feed_write(qc);
    uv_idle_start(&qc->idle, on_idle);
    return WK_OK;
}

static wk_code c_half_close(wk_carrier *c, wk_error *err)
{
    quib_carrier *qc = of(c);
    if (qc->closing || qc->dead || !qc->opened || qc->writing)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "carrier half-close not possible now");
    wk_code rc = wk_quib_conn_shutdown(qc->q, now_ns(), err);
    if (rc == WK_OK) uv_idle_start(&qc->idle, on_idle);
    return rc;
}

static void c_authorize(wk_carrier *c)
{
    quib_carrier *qc = of(c);
    if (qc->q) wk_quib_conn_authorize(qc->q);
    if (!qc->closing && qc->q) uv_idle_start(&qc->idle, on_idle);
}

static void c_close(wk_carrier *c)
{
    quib_carrier *qc = of(c);
    if (qc->closing || qc->released) return;
    qc->closing = true;
    qc->want_read = false;
    if (!qc->q) {
        if (qc->ep->listening && qc->initial) { /* refused before start: CONNECTION_REFUSED */
            wk_quib_dgram d;
            uint8_t buf[WK_QUIB_MAX_DATAGRAM];
            if (wk_quib_dgram_parse(qc->initial, qc->initial_len, &d) == 0) {
                size_t n = wk_quib_write_refusal(buf, sizeof buf, &d);
                if (n) ep_send(qc->ep, &qc->remote, buf, n);
            }
        }
        release(qc);
        return;
    }
    wk_quib_conn_close(qc->q, now_ns());
    uv_idle_start(&qc->idle, on_idle);
}

static size_t c_memory(const wk_carrier *c)
{
    const quib_carrier *qc = (const quib_carrier *)c;
    return sizeof *qc + qc->initial_len + (qc->q ? wk_quib_conn_memory(qc->q) : 0);
}

static const wk_carrier_ops quib_ops = {.name = "quib", .start = c_start, .read = c_read, .write = c_write,
                                        .half_close = c_half_close, .close = c_close, .memory = c_memory,
                                        .authorize = c_authorize};

static quib_carrier *carrier_new(quib_ep *ep, const wk_iltp_address *addr, const wk_quib_addr *remote)
{
    quib_carrier *qc = calloc(1, sizeof *qc);
    if (!qc) return NULL;
    qc->c.ops = &quib_ops;
    qc->c.loop = ep->loop;
    qc->c.address = *addr;
    qc->c.assurance = wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, false, false, ep->cfg.assurance_override);
    qc->ep = ep;
    qc->remote = *remote;
    addr_text(remote, qc->c.peer, sizeof qc->c.peer);
    uv_timer_init(ep->loop->uv, &qc->timer);
    qc->timer.data = qc;
    uv_idle_init(ep->loop->uv, &qc->idle);
    qc->idle.data = qc;
    ep->refs++;
    return qc;
}

/* ---- receiving -------------------------------------------------------------------------- */
static void stateless_reset(quib_ep *ep, const wk_quib_dgram *d, size_t len, const wk_quib_addr *from)
{
    uint64_t sec = uv_now(ep->loop->uv) / 1000;
    if (sec != ep->reset_window) {
        ep->reset_window = sec;
        ep->resets_in_window = 0;
    }
    if (++ep->resets_in_window > RESETS_PER_SECOND) return;
    uint8_t rnd[48], buf[64];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return;
    size_t n = wk_quib_write_stateless_reset(buf, sizeof buf, ep->reset_secret, d->dcid, d->dcid_len, len, rnd, sizeof rnd);
    if (n) ep_send(ep, from, buf, n);
}

/* After the poll phase: every connection that received datagrams in this iteration is serviced
 * once (its acknowledgements and replies written together, owner callbacks run). */
static void on_check(uv_check_t *h)
{
    quib_ep *ep = h->data;
    uv_check_stop(&ep->check);
    quib_carrier *list = ep->dirty;
    ep->dirty = NULL;
    while (list) {
        quib_carrier *qc = list;
        list = qc->dirty_next;
        qc->dirty = false;
        service(qc); /* a released carrier's memory lives until its handles' close callbacks */
    }
}

static void mark_dirty(quib_carrier *qc)
{
    if (qc->dirty || qc->released) return;
    qc->dirty = true;
    qc->dirty_next = qc->ep->dirty;
    qc->ep->dirty = qc;
    uv_check_start(&qc->ep->check, on_check);
}

static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *b, const struct sockaddr *from, unsigned flags)
{
    quib_ep *ep = h->data;
    if (nread <= 0 || !from || (flags & UV_UDP_PARTIAL)) return; /* nothing, or the batch's end */
    const uint8_t *p = (const uint8_t *)b->base;
    size_t n = (size_t)nread;
    wk_quib_addr src;
    memset(&src, 0, sizeof src);
    src.len = from->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    memcpy(&src.ss, from, src.len);
    if (!ep->listening) {
        quib_carrier *qc = ep->only;
        if (!qc || !qc->q || qc->released) return;
        wk_quib_conn_recv(qc->q, &src, p, n, now_ns());
        mark_dirty(qc);
        return;
    }
    wk_quib_dgram d;
    int rv = wk_quib_dgram_parse(p, n, &d);
    if (rv < 0) return;
    if (rv == 1) {
        uint8_t buf[256];
        uint8_t r = 0;
        (void)getrandom(&r, 1, 0);
        size_t k = wk_quib_write_version_negotiation(buf, sizeof buf, &d, r);
        if (k) ep_send(ep, &src, buf, k);
        return;
    }
    quib_carrier *qc = cid_find(ep, d.dcid, d.dcid_len);
    if (qc) {
        if (!qc->q || qc->released) return; /* not started yet, or going */
        wk_quib_conn_recv(qc->q, &src, p, n, now_ns());
        mark_dirty(qc);
        return;
    }
    if (!d.long_header) {
        stateless_reset(ep, &d, n, &src);
        return;
    }
    if (ep->closing || !wk_quib_dgram_is_initial(p, n) || d.dcid_len > 20) return;
    /* a new connection */
    qc = carrier_new(ep, &ep->l.address, &src);
    if (!qc) return;
    qc->initial = malloc(n);
    if (!qc->initial) {
        release(qc);
        return;
    }
    memcpy(qc->initial, p, n);
    qc->initial_len = n;
    memcpy(qc->odcid, d.dcid, d.dcid_len);
    qc->odcid_len = d.dcid_len;
    cid_add(ep, qc, d.dcid, d.dcid_len);
    ep->l.accepted(&ep->l, &qc->c);
}

/* ---- listener and connector --------------------------------------------------------------- */
static void l_close(wk_carrier_listener *l)
{
    quib_ep *ep = (quib_ep *)l;
    if (ep->closing) return;
    ep->closing = true;
    ep_unref(ep);
}

static const wk_carrier_listener_ops listener_ops = {l_close};

static quib_ep *ep_new(wk_host_loop *loop, const wk_carrier_config *cfg)
{
    quib_ep *ep = calloc(1, sizeof *ep);
    if (!ep) return NULL;
    ep->loop = loop;
    ep->cfg = *cfg;
    if (!ep->cfg.transport_timeout_ms) ep->cfg.transport_timeout_ms = WK_CARRIER_TRANSPORT_TIMEOUT_MS;
    ep->refs = 1;
    ep->udp.data = ep;
    uv_check_init(loop->uv, &ep->check);
    ep->check.data = ep;
    return ep;
}

/* Gives up an endpoint that never served (a setup failure); returns c. */
static wk_code ep_discard(quib_ep *ep, wk_code c)
{
    ep->closing = true;
    ep->refs = 0;
    ep_release(ep);
    return c;
}

static void ep_local_name(quib_ep *ep)
{
    int bl = sizeof ep->local.ss;
    uv_udp_getsockname(&ep->udp, (struct sockaddr *)&ep->local.ss, &bl);
    ep->local.len = (socklen_t)bl;
}

static wk_code ep_socket(quib_ep *ep, const struct sockaddr *bind_to, wk_error *err)
{
    /* recvmmsg: one system call reads a batch of datagrams (libuv splits the buffer into 64 KiB
     * chunks, one per datagram) */
    int rc = uv_udp_init_ex(ep->loop->uv, &ep->udp, AF_UNSPEC | UV_UDP_RECVMMSG);
    if (rc < 0) return wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "udp");
    ep->udp_init = true;
    ep->udp.data = ep;
    rc = uv_udp_bind(&ep->udp, bind_to, 0);
    if (rc < 0) return wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "bind");
    int sz = SOCK_BUF;
    uv_send_buffer_size((uv_handle_t *)&ep->udp, &sz);
    sz = SOCK_BUF;
    uv_recv_buffer_size((uv_handle_t *)&ep->udp, &sz);
    return WK_OK;
}

static wk_code quib_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out, wk_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (wk_host_resolve(&cfg->addr, SOCK_DGRAM, &ss, &sl, err) != WK_OK) return err ? err->code : WK_ERR_HOST_RESOLVE;
    quib_ep *ep = ep_new(loop, cfg);
    if (!ep) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "listener");
    ep->listening = true;
    ep->tls = wk_quib_tls_create(true, cfg->cert_file, cfg->key_file, NULL, err);
    wk_code c = ep->tls ? ep_socket(ep, (const struct sockaddr *)&ss, err) : (err ? err->code : WK_ERR_HOST_CARRIER);
    if (c == WK_OK && getrandom(ep->reset_secret, sizeof ep->reset_secret, 0) != (ssize_t)sizeof ep->reset_secret)
        c = wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "getrandom failed");
    int rc = c == WK_OK ? uv_udp_recv_start(&ep->udp, on_alloc, on_recv) : 0;
    if (rc < 0) c = wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "receive");
    if (c != WK_OK) return ep_discard(ep, c);
    ep_local_name(ep);
    ep->l.ops = &listener_ops;
    ep->l.loop = loop;
    ep->l.address = cfg->addr;
    ep->l.address.port = ntohs(ep->local.ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ep->local.ss)->sin6_port
                                                                   : ((struct sockaddr_in *)&ep->local.ss)->sin_port);
    ep->l.address.port_given = true;
    *out = &ep->l;
    return WK_OK;
}

static wk_code quib_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    wk_quib_addr remote;
    memset(&remote, 0, sizeof remote);
    /* resolved now, before the loop runs (the resolver blocks), so a bad name fails at once */
    if (wk_host_resolve(&cfg->addr, SOCK_DGRAM, &remote.ss, &remote.len, err) != WK_OK) return err ? err->code : WK_ERR_HOST_RESOLVE;
    quib_ep *ep = ep_new(loop, cfg);
    if (!ep) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "carrier");
    ep->tls = wk_quib_tls_create(false, NULL, NULL, cfg->ca_file, err);
    struct sockaddr_storage any;
    memset(&any, 0, sizeof any);
    any.ss_family = remote.ss.ss_family;
    wk_code c = ep->tls ? ep_socket(ep, (const struct sockaddr *)&any, err) : (err ? err->code : WK_ERR_HOST_CARRIER);
    int rc = c == WK_OK ? uv_udp_connect(&ep->udp, (const struct sockaddr *)&remote.ss) : 0;
    if (rc < 0) c = wk_host_uv_error(err, WK_ERR_HOST_CONNECT, rc, "connect");
    if (c == WK_OK) {
        rc = uv_udp_recv_start(&ep->udp, on_alloc, on_recv);
        if (rc < 0) c = wk_host_uv_error(err, WK_ERR_HOST_CONNECT, rc, "receive");
    }
    if (c != WK_OK) return ep_discard(ep, c);
    ep_local_name(ep);
    quib_carrier *qc = carrier_new(ep, &cfg->addr, &remote);
    if (!qc) return ep_discard(ep, wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "carrier"));
    ep->only = qc;
    ep->refs--; /* the connector's endpoint lives as long as its carrier */
    ep->closing = true;
    *out = &qc->c;
    return WK_OK;
}

const wk_carrier_kind wk_carrier_quib = {WK_ILTP_SCHEME_QUIB, quib_listen, quib_connect};
