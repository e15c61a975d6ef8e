/* wirekit host: carriers over libuv streams (stdio, unix:, tcp:), the shared part.
 *
 * Reads land in one buffer shared by every stream of the loop (libuv hands it out and takes it
 * back within one read callback); only a tail the owner did not consume is copied into the
 * carrier, and reading stays paused until the owner asks again, so an idle or paused carrier
 * holds at most one read's tail. One write is in flight at a time, on the owner's buffer. Events
 * that must not run inside the owner's call (opened, a setup failure, redelivery of a held tail)
 * go through an idle handle. */
#include "uvstream.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_BUF 65536

static uint8_t read_buf[READ_BUF]; /* the loop's one read buffer (one thread) */

static wk_uvstream *of(wk_carrier *c) { return (wk_uvstream *)c; }
static uv_stream_t *rstream(wk_uvstream *s) { return &s->h.stream; }
static uv_stream_t *wstream(wk_uvstream *s) { return s->wpipe_init ? (uv_stream_t *)&s->wpipe : &s->h.stream; }

static void schedule(wk_uvstream *s);

/* ---- failures ---------------------------------------------------------------------------- */
static void report_failed(wk_uvstream *s, const wk_error *e)
{
    if (s->dead || s->closing) return;
    s->dead = true;
    if (s->reading) {
        uv_read_stop(rstream(s));
        s->reading = false;
    }
    s->c.ev->failed(&s->c, e);
}

static void uv_failed(wk_uvstream *s, wk_code code, int status, const char *what)
{
    wk_error e;
    wk_host_uv_error(&e, code, status, what);
    report_failed(s, &e);
}

/* ---- reading ----------------------------------------------------------------------------- */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    *b = uv_buf_init((char *)read_buf, sizeof read_buf);
}

static void stop_reading(wk_uvstream *s)
{
    if (s->reading) {
        uv_read_stop(rstream(s));
        s->reading = false;
    }
}

/* Hands p[0..n) to the owner; keeps what it did not consume and pauses. Returns false when the
 * carrier was closed or failed from inside the callback. */
static bool deliver(wk_uvstream *s, const uint8_t *p, size_t n)
{
    size_t used = s->c.ev->received(&s->c, p, n);
    if (s->closing || s->dead) return false;
    if (used > n) used = n;
    if (used == n) return true;
    /* the owner paused: keep the tail (p may be the shared read buffer or the held one) */
    size_t rest = n - used;
    if (p >= s->held && s->held && p < s->held + s->held_len) {
        s->held_pos = (size_t)(p + used - s->held);
    } else {
        uint8_t *t = malloc(rest);
        if (!t) {
            wk_error e;
            wk_error_set(&e, WK_ERR_NOMEM, WK_NO_OFFSET, "%zu bytes of a paused read", rest);
            report_failed(s, &e);
            return false;
        }
        memcpy(t, p + used, rest);
        free(s->held);
        s->held = t;
        s->held_len = rest;
        s->held_pos = 0;
    }
    s->want_read = false;
    stop_reading(s);
    return false;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    wk_uvstream *s = st->data;
    if (s->closing || s->dead) return;
    if (n > 0) {
        deliver(s, (const uint8_t *)b->base, (size_t)n);
        return;
    }
    if (n == UV_EOF) {
        stop_reading(s);
        s->eof = true;
        s->c.ev->ended(&s->c);
        return;
    }
    if (n < 0) uv_failed(s, WK_ERR_HOST_READ, (int)n, "read");
}

static void start_reading(wk_uvstream *s)
{
    if (s->reading || s->eof || s->dead || s->closing || !s->opened) return;
    int rc = uv_read_start(rstream(s), on_alloc, on_read);
    if (rc < 0) {
        uv_failed(s, WK_ERR_HOST_READ, rc, "read");
        return;
    }
    s->reading = true;
}

static void c_read(wk_carrier *c, bool on)
{
    wk_uvstream *s = of(c);
    if (s->closing || s->dead) return;
    s->want_read = on;
    if (!on) {
        stop_reading(s);
        return;
    }
    if (s->held) schedule(s); /* the held tail first, from the loop */
    else start_reading(s);
}

/* ---- deferred events --------------------------------------------------------------------- */
static void on_idle(uv_idle_t *h)
{
    wk_uvstream *s = h->data;
    uv_idle_stop(&s->idle);
    if (s->closing) return;
    if (s->pend_fail) {
        s->pend_fail = false;
        report_failed(s, &s->pend_err);
        return;
    }
    if (s->pend_open) {
        s->pend_open = false;
        s->opened = true;
        s->c.ev->opened(&s->c);
        if (s->closing || s->dead) return;
    }
    if (s->held && s->want_read) {
        uint8_t *p = s->held + s->held_pos;
        size_t n = s->held_len - s->held_pos;
        uint8_t *mine = s->held;
        if (!deliver(s, p, n)) return; /* paused again (tail kept) or gone */
        if (s->held == mine) {
            free(s->held);
            s->held = NULL;
            s->held_len = s->held_pos = 0;
        }
        if (s->want_read) start_reading(s);
    }
}

static void schedule(wk_uvstream *s)
{
    if (!s->closing) uv_idle_start(&s->idle, on_idle);
}

/* ---- setup ------------------------------------------------------------------------------- */
static void on_dial_timeout(uv_timer_t *t)
{
    wk_uvstream *s = t->data;
    if (s->opened || s->pend_open) return;
    wk_error e;
    wk_error_set(&e, WK_ERR_HOST_CONNECT, WK_NO_OFFSET, "connect: no answer within %llu ms",
                 (unsigned long long)s->timeout_ms);
    report_failed(s, &e);
}

static void c_start(wk_carrier *c)
{
    wk_uvstream *s = of(c);
    if (s->started || s->closing) return;
    s->started = true;
    if (s->dial) {
        uv_timer_start(&s->timer, on_dial_timeout, s->timeout_ms, 0);
        s->dial(s);
    } else {
        wk_uvstream_connected(s);
    }
}

void wk_uvstream_connected(wk_uvstream *s)
{
    uv_timer_stop(&s->timer);
    if (s->closing || s->dead) return;
    s->pend_open = true;
    schedule(s);
}

void wk_uvstream_setup_failed(wk_uvstream *s, const wk_error *err)
{
    uv_timer_stop(&s->timer);
    if (s->closing || s->dead) return;
    s->pend_fail = true;
    s->pend_err = *err;
    schedule(s);
}

void wk_uvstream_peer_name(wk_uvstream *s)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(&s->h.tcp, (struct sockaddr *)&ss, &len) != 0) return;
    char ip[64] = "?";
    unsigned port = 0;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        uv_ip6_name(a, ip, sizeof ip);
        port = ntohs(a->sin6_port);
        snprintf(s->c.peer, sizeof s->c.peer, "[%s]:%u", ip, port);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        uv_ip4_name(a, ip, sizeof ip);
        port = ntohs(a->sin_port);
        snprintf(s->c.peer, sizeof s->c.peer, "%s:%u", ip, port);
    }
}

/* ---- writing ----------------------------------------------------------------------------- */
static void on_write(uv_write_t *r, int status)
{
    wk_uvstream *s = r->data;
    s->writing = false;
    if (s->closing || s->dead) return;
    if (status < 0) {
        uv_failed(s, WK_ERR_HOST_WRITE, status, "write");
        return;
    }
    s->c.ev->written(&s->c);
}

static wk_code c_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    wk_uvstream *s = of(c);
    if (s->closing || s->dead || !s->opened || s->writing || s->shutting || n == 0 || n > UINT32_MAX)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "carrier write not possible now");
    uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
    s->wreq.data = s;
    int rc = uv_write(&s->wreq, wstream(s), &b, 1, on_write);
    if (rc < 0) return wk_host_uv_error(err, WK_ERR_HOST_WRITE, rc, "write");
    s->writing = true;
    return WK_OK;
}

static void on_shutdown(uv_shutdown_t *r, int status)
{
    wk_uvstream *s = r->data;
    if (s->closing || s->dead) return;
    if (status < 0) {
        uv_failed(s, WK_ERR_HOST_WRITE, status, "shutdown");
        return;
    }
    s->shut = true;
    s->c.ev->shut(&s->c);
}

static wk_code c_half_close(wk_carrier *c, wk_error *err)
{
    wk_uvstream *s = of(c);
    if (s->closing || s->dead || !s->opened || s->writing || s->shutting)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "carrier half-close not possible now");
    s->sreq.data = s;
    int rc = uv_shutdown(&s->sreq, wstream(s), on_shutdown);
    if (rc < 0) return wk_host_uv_error(err, WK_ERR_HOST_WRITE, rc, "shutdown");
    s->shutting = true;
    return WK_OK;
}

/* ---- closing ----------------------------------------------------------------------------- */
/* Drops one reference (one per handle being closed, plus the closer's own). */
static void release(wk_uvstream *s)
{
    if (--s->open_handles > 0) return;
    free(s->held);
    if (s->c.ev) s->c.ev->closed(&s->c);
    free(s);
}

static void on_handle_closed(uv_handle_t *h) { release(h->data); }

static void close_handle(wk_uvstream *s, uv_handle_t *h)
{
    h->data = s;
    s->open_handles++;
    uv_close(h, on_handle_closed);
}

static void c_close(wk_carrier *c)
{
    wk_uvstream *s = of(c);
    if (s->closing) return;
    stop_reading(s);
    s->closing = true;
    uv_idle_stop(&s->idle);
    uv_timer_stop(&s->timer);
    s->open_handles = 1; /* the closer's reference: no callback frees s before the last uv_close */
    close_handle(s, (uv_handle_t *)&s->idle);
    close_handle(s, (uv_handle_t *)&s->timer);
    if (s->h_init) close_handle(s, &s->h.handle);
    if (s->wpipe_init) close_handle(s, (uv_handle_t *)&s->wpipe);
    release(s);
}

static size_t c_memory(const wk_carrier *c)
{
    const wk_uvstream *s = (const wk_uvstream *)c;
    return sizeof *s + (s->held ? s->held_len : 0);
}

#define UVSTREAM_OPS(scheme_name)                                                                 \
    {.name = scheme_name, .start = c_start, .read = c_read, .write = c_write,                     \
     .half_close = c_half_close, .close = c_close, .memory = c_memory, .authorize = NULL}
static const wk_carrier_ops ops_stdio = UVSTREAM_OPS("stdio");
static const wk_carrier_ops ops_unix = UVSTREAM_OPS("unix");
static const wk_carrier_ops ops_tcp = UVSTREAM_OPS("tcp");

wk_uvstream *wk_uvstream_new(wk_host_loop *loop, const wk_iltp_address *addr, uint64_t timeout_ms,
                             wk_host_assurance_override override)
{
    wk_uvstream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->c.ops = addr->scheme == WK_ILTP_SCHEME_STDIO ? &ops_stdio
             : addr->scheme == WK_ILTP_SCHEME_UNIX  ? &ops_unix : &ops_tcp;
    s->c.loop = loop;
    s->c.address = *addr;
    snprintf(s->c.peer, sizeof s->c.peer, "%s", s->c.ops->name);
    s->c.assurance = wk_host_assurance_resolve(addr->scheme, false, false, override);
    s->timeout_ms = timeout_ms ? timeout_ms : WK_CARRIER_TRANSPORT_TIMEOUT_MS;
    uv_idle_init(loop->uv, &s->idle);
    s->idle.data = s;
    uv_timer_init(loop->uv, &s->timer);
    s->timer.data = s;
    s->h.handle.data = s;
    s->wpipe.data = s;
    return s;
}

/* ---- listeners --------------------------------------------------------------------------- */
static void on_listener_closed(uv_handle_t *h) { free(h->data); }

static void l_close(wk_carrier_listener *l)
{
    wk_uvstream_listener *ls = (wk_uvstream_listener *)l;
    if (ls->closing) return;
    ls->closing = true;
    if (ls->h_init) {
        ls->h.handle.data = ls;
        uv_close(&ls->h.handle, on_listener_closed);
    } else {
        free(ls);
    }
}

static const wk_carrier_listener_ops listener_ops = {l_close};

static void on_connection(uv_stream_t *server, int status)
{
    wk_uvstream_listener *ls = server->data;
    if (ls->closing || status < 0) return; /* a failed accept (EMFILE, ...) costs nothing */
    wk_uvstream *s = wk_uvstream_new(ls->l.loop, &ls->l.address, ls->timeout_ms, ls->override);
    if (!s) {
        /* refuse by accepting into a throwaway handle is not possible without memory: leave it
         * in the backlog; the next connection retries */
        return;
    }
    int rc = ls->is_tcp ? uv_tcp_init(ls->l.loop->uv, &s->h.tcp) : uv_pipe_init(ls->l.loop->uv, &s->h.pipe, 0);
    if (rc == 0) s->h_init = true;
    s->h.handle.data = s;
    if (rc != 0 || uv_accept(server, &s->h.stream) != 0) {
        wk_carrier_close(&s->c);
        return;
    }
    if (ls->is_tcp) {
        uv_tcp_nodelay(&s->h.tcp, 1); /* batches are written whole; small ones must not wait */
        wk_uvstream_peer_name(s);
    }
    ls->l.accepted(&ls->l, &s->c);
}

wk_uvstream_listener *wk_uvstream_listener_new(wk_host_loop *loop, const wk_carrier_config *cfg, bool is_tcp)
{
    wk_uvstream_listener *ls = calloc(1, sizeof *ls);
    if (!ls) return NULL;
    ls->l.ops = &listener_ops;
    ls->l.loop = loop;
    ls->l.address = cfg->addr;
    ls->is_tcp = is_tcp;
    ls->timeout_ms = cfg->transport_timeout_ms;
    ls->override = cfg->assurance_override;
    return ls;
}

wk_code wk_uvstream_listen(wk_uvstream_listener *ls, int backlog, wk_error *err)
{
    ls->h.handle.data = ls;
    int rc = uv_listen(&ls->h.stream, backlog > 0 ? backlog : 256, on_connection);
    if (rc < 0) return wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "listen");
    return WK_OK;
}

void wk_uvstream_listener_discard(wk_uvstream_listener *ls) { l_close(&ls->l); }
