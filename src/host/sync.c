/* ILTP Blob sync over real carriers (stdio, unix:, tcp:) with libuv: the host layer around the
 * sans-I/O session machine. One event loop; a listener serves many concurrent sessions (side0),
 * a connector runs one (side1). Each connection keeps one retained writer that drains accepted
 * batches in order, and reads only while its output is drained (stream backpressure). Received
 * Blobs are hash-verified by the item decoder and stored atomically by the store.
 *
 * Clean close: the connector, at fixed point with nothing left to send, writes its end mark and
 * half-closes; the listener, seeing boundary EOF at fixed point, writes its own end mark and
 * closes. Boundary EOF anywhere else is premature; EOF inside an item is truncation. */
#include <wirekit/host.h>
#include <uv.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define WBUF 65536

typedef struct server server;

typedef struct conn {
    server *srv;
    union { uv_tcp_t tcp; uv_pipe_t pipe; } h;
    uv_pipe_t out_pipe;          /* stdio: stdout (h.pipe is stdin) */
    bool stdio;
    uv_write_t wreq;
    uv_shutdown_t sreq;
    bool writing, shut, closing, read_eof, reading, close_queued;
    uint8_t wbuf[WBUF];
    wk_iltp_session *s;
    wk_error err;
    bool failed, done;
    int id;
    struct conn *next;
} conn;

struct server {
    uv_loop_t *loop;
    const wk_host_sync_opts *o;
    wk_store *store;
    union { uv_tcp_t tcp; uv_pipe_t pipe; } lh;
    bool listening;
    uv_timer_t timer;
    conn *conns;
    int next_id, finished, ok, active;
    int status;                  /* exit status of the last finished session */
    bool stop;
    bool progress_shown;
    uv_connect_t creq;
};

static uint64_t now_ms(server *sv) { return uv_now(sv->loop); }
static uv_stream_t *rstream(conn *c) { return c->stdio ? (uv_stream_t *)&c->h.pipe : (uv_stream_t *)&c->h.tcp; }
static uv_stream_t *wstream(conn *c) { return c->stdio ? (uv_stream_t *)&c->out_pipe : (uv_stream_t *)&c->h.tcp; }

/* ---- the store, as the session sees it ---- */
static bool st_has(void *ctx, const uint8_t h[32]) { return wk_store_has(ctx, h); }
static wk_code st_list(void *ctx, uint8_t (**hs)[32], size_t *n, wk_error *e) { return wk_store_list(ctx, hs, n, e); }
static wk_code st_get(void *ctx, const uint8_t h[32], uint8_t **d, size_t *n, wk_error *e)
{
    return wk_store_get(ctx, h, d, n, e);
}
static server *g_for_put; /* the server whose sessions learn about stored Blobs */
static wk_code st_put(void *ctx, const uint8_t h[32], const uint8_t *d, size_t n, wk_error *e)
{
    uint8_t out[32];
    bool existed = false;
    wk_code c = wk_store_put(ctx, d, n, h, out, &existed, e);
    if (c == WK_OK && !existed && g_for_put) {
        /* other sessions at fixed point advertise the new Blob in a new round */
        for (conn *x = g_for_put->conns; x; x = x->next)
            if (x->s && !x->done) wk_iltp_session_store_changed(x->s, now_ms(g_for_put));
    }
    return c;
}

static void summary(conn *c, const char *outcome)
{
    wk_iltp_session_stats st;
    wk_iltp_session_stats_get(c->s, &st);
    FILE *f = c->srv->o->log ? c->srv->o->log : stderr;
    if (c->srv->progress_shown) { fputc('\n', f); c->srv->progress_shown = false; }
    fprintf(f, "session %d send: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs; %s\n", c->id,
            wk_iltp_encoding_token(st.enc_out), (unsigned long long)st.items_out, (unsigned long long)st.raw_out,
            (unsigned long long)st.wire_out, (unsigned long long)st.blobs_out, outcome);
    fprintf(f, "session %d recv: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs, %llu rounds; %s\n", c->id,
            wk_iltp_encoding_token(st.enc_in), (unsigned long long)st.items_in, (unsigned long long)st.raw_in,
            (unsigned long long)st.wire_in, (unsigned long long)st.blobs_in, (unsigned long long)st.rounds, outcome);
}

static void on_closed(uv_handle_t *h)
{
    conn *c = h->data;
    if (c->stdio && h == (uv_handle_t *)&c->h.pipe) {
        uv_close((uv_handle_t *)&c->out_pipe, NULL);
    }
    server *sv = c->srv;
    conn **pp = &sv->conns;
    while (*pp && *pp != c) pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    wk_iltp_session_free(c->s);
    free(c);
    sv->active--;
    if (sv->stop && sv->active == 0) {
        if (sv->listening) uv_close((uv_handle_t *)&sv->lh, NULL);
        sv->listening = false;
        uv_timer_stop(&sv->timer);
        uv_close((uv_handle_t *)&sv->timer, NULL);
    }
}

/* Ends a connection once; reports the outcome. */
static void finish(conn *c, int status, const char *outcome)
{
    if (c->done) return;
    c->done = true;
    server *sv = c->srv;
    summary(c, outcome);
    sv->finished++;
    if (status == 0) sv->ok++;
    sv->status = status;
    if (sv->o->once || !sv->o->listen) sv->stop = true;
    if (!c->closing) {
        c->closing = true;
        uv_read_stop(rstream(c));
        uv_close((uv_handle_t *)rstream(c), on_closed);
    }
}

static int exit_for(const wk_error *e)
{
    if (e->category == WK_CAT_PEER_PROTOCOL) return 2;
    if (e->category == WK_CAT_TRANSPORT) return 4;
    return 1;
}

static void fail_conn(conn *c, const wk_error *e)
{
    char line[256];
    FILE *f = c->srv->o->log ? c->srv->o->log : stderr;
    fprintf(f, "session %d: %s\n", c->id, wk_error_format(e, line, sizeof line));
    char outcome[200];
    snprintf(outcome, sizeof outcome, "failed: %s", wk_error_name(e->code));
    finish(c, exit_for(e), outcome);
}

static void pump(conn *c);

static void on_shutdown(uv_shutdown_t *r, int status)
{
    conn *c = r->data;
    (void)status;
    /* the listener closes after its end mark; the connector waits for the listener's EOF */
    if (wk_iltp_session_state_get(c->s) == WK_ILTP_SESSION_CLOSED) finish(c, 0, "clean");
}

static void on_write(uv_write_t *r, int status)
{
    conn *c = r->data;
    c->writing = false;
    if (c->done) return;
    if (status < 0) {
        wk_error e;
        wk_error_set(&e, WK_ERR_BACKEND, WK_NO_OFFSET, "write: %s", uv_strerror(status));
        e.category = WK_CAT_TRANSPORT;
        fail_conn(c, &e);
        return;
    }
    pump(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    (void)h;
    (void)suggested;
    static char rbuf[WBUF];
    *b = uv_buf_init(rbuf, sizeof rbuf); /* recv consumes every byte before the next read */
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    conn *c = st->data;
    if (c->done) return;
    if (n > 0) {
        wk_in in = {(const uint8_t *)b->base, (size_t)n, 0};
        wk_error e;
        if (wk_iltp_session_recv(c->s, &in, now_ms(c->srv), &e) == WK_ERROR) {
            fail_conn(c, &e);
            return;
        }
        pump(c);
        return;
    }
    if (n == UV_EOF) {
        c->read_eof = true;
        uv_read_stop(st);
        wk_error e;
        if (wk_iltp_session_eof(c->s, NULL, &e) != WK_OK) {
            fail_conn(c, &e);
            return;
        }
        /* clean: the listener answers with its own end mark; the connector is done */
        if (c->srv->o->listen) {
            wk_iltp_session_close(c->s, &e);
            pump(c);
        } else {
            finish(c, 0, "clean");
        }
        return;
    }
    if (n < 0) {
        wk_error e;
        wk_error_set(&e, WK_ERR_BACKEND, WK_NO_OFFSET, "read: %s", uv_strerror((int)n));
        e.category = WK_CAT_TRANSPORT;
        fail_conn(c, &e);
    }
}

/* Drains the session's output through one retained write at a time; reads only while no write
 * is pending (backpressure), and drives clean completion. */
static void pump(conn *c)
{
    if (c->done || c->writing) return;
    wk_out out = {c->wbuf, WBUF, 0};
    wk_error e;
    wk_result r = wk_iltp_session_send(c->s, &out, &e);
    if (r == WK_ERROR) {
        fail_conn(c, &e);
        return;
    }
    if (out.pos) {
        uv_buf_t b = uv_buf_init((char *)c->wbuf, (unsigned)out.pos);
        c->writing = true;
        c->wreq.data = c;
        int rc = uv_write(&c->wreq, wstream(c), &b, 1, on_write);
        if (rc < 0) {
            c->writing = false;
            wk_error_set(&e, WK_ERR_BACKEND, WK_NO_OFFSET, "write: %s", uv_strerror(rc));
            e.category = WK_CAT_TRANSPORT;
            fail_conn(c, &e);
            return;
        }
        if (c->reading) { uv_read_stop(rstream(c)); c->reading = false; }
        return;
    }
    /* output drained */
    wk_iltp_session_state st = wk_iltp_session_state_get(c->s);
    if (!c->read_eof && !c->reading) {
        uv_read_start(rstream(c), on_alloc, on_read);
        c->reading = true;
    }
    if (st == WK_ILTP_SESSION_FIXED_POINT && !c->srv->o->listen && !c->close_queued) {
        /* the connector completes: its end mark, then a half-close */
        c->close_queued = true;
        if (wk_iltp_session_close(c->s, &e) != WK_OK) {
            fail_conn(c, &e);
            return;
        }
        pump(c);
        return;
    }
    if (wk_iltp_session_closed_locally(c->s) && !c->shut) {
        c->shut = true;
        c->sreq.data = c;
        int rc = uv_shutdown(&c->sreq, wstream(c), on_shutdown);
        if (rc < 0 && st == WK_ILTP_SESSION_CLOSED) finish(c, 0, "clean");
    }
}

static void on_timer(uv_timer_t *t)
{
    server *sv = t->data;
    if (sv->o->progress && !sv->o->verbose) {
        uint64_t in = 0, out = 0;
        int n = 0;
        for (conn *c = sv->conns; c; c = c->next) {
            if (c->done) continue;
            wk_iltp_session_stats st;
            wk_iltp_session_stats_get(c->s, &st);
            in += st.wire_in;
            out += st.wire_out;
            n++;
        }
        if (n && in + out > (1u << 20)) {
            FILE *f = sv->o->log ? sv->o->log : stderr;
            fprintf(f, "\r%d session%s: received %.1f MiB, sent %.1f MiB   ", n, n == 1 ? "" : "s",
                    (double)in / 1048576.0, (double)out / 1048576.0);
            fflush(f);
            sv->progress_shown = true;
        }
    }
    for (conn *c = sv->conns; c; c = c->next) {
        if (c->done) continue;
        wk_error e;
        if (wk_iltp_session_tick(c->s, now_ms(sv), &e) != WK_OK) fail_conn(c, &e);
    }
}

static void on_trace(void *ctx, bool outgoing, const char *line)
{
    conn *c = ctx;
    FILE *f = c->srv->o->log ? c->srv->o->log : stderr;
    if (c->srv->progress_shown) { fputc('\n', f); c->srv->progress_shown = false; }
    fprintf(f, "session %d %s %s\n", c->id, outgoing ? "->" : "<-", line);
}

static conn *new_conn(server *sv, wk_iltp_side side, wk_error *err)
{
    conn *c = calloc(1, sizeof *c);
    if (!c) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "connection");
        return NULL;
    }
    c->srv = sv;
    c->id = ++sv->next_id;
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = side;
    p.form = sv->o->form ? sv->o->form : WK_ILTP_FORM_0_13;
    p.decode = sv->o->decode;
    p.encode = sv->o->encode;
    if (getrandom(p.seed, sizeof p.seed, 0) != (ssize_t)sizeof p.seed) {
        free(c);
        wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "getrandom: %s", strerror(errno));
        return NULL;
    }
    p.seed[0] |= 1; /* nonzero */
    p.store = (wk_iltp_store_ops){sv->store, st_has, st_list, st_get, st_put};
    p.phase_timeout_ms = sv->o->phase_timeout_ms;
    p.budget_prefacing = sv->o->budget_prefacing;
    p.budget_establishment = sv->o->budget_establishment;
    p.budget_round = sv->o->budget_round;
    p.level = sv->o->level;
    if (sv->o->verbose) {
        p.trace = on_trace;
        p.trace_ctx = c;
    }
    c->s = wk_iltp_session_create(&p, now_ms(sv), err);
    if (!c->s) {
        free(c);
        return NULL;
    }
    c->next = sv->conns;
    sv->conns = c;
    sv->active++;
    return c;
}

static void on_connection(uv_stream_t *l, int status)
{
    server *sv = l->data;
    if (status < 0 || sv->stop) return;
    wk_error e;
    conn *c = new_conn(sv, WK_ILTP_SIDE0, &e);
    if (!c) {
        char line[256];
        fprintf(sv->o->log ? sv->o->log : stderr, "%s\n", wk_error_format(&e, line, sizeof line));
        return;
    }
    if (sv->o->addr.scheme == WK_ILTP_SCHEME_UNIX) uv_pipe_init(sv->loop, &c->h.pipe, 0);
    else uv_tcp_init(sv->loop, &c->h.tcp);
    rstream(c)->data = c;
    if (uv_accept(l, rstream(c)) != 0) {
        c->closing = true;
        c->done = true;
        uv_close((uv_handle_t *)rstream(c), on_closed);
        return;
    }
    if (sv->o->once) {
        /* one session: stop listening */
        uv_close((uv_handle_t *)&sv->lh, NULL);
        sv->listening = false;
    }
    pump(c);
}

static void on_connect(uv_connect_t *r, int status)
{
    conn *c = r->data;
    if (status < 0) {
        wk_error e;
        wk_error_set(&e, WK_ERR_BACKEND, WK_NO_OFFSET, "connect: %s", uv_strerror(status));
        e.category = WK_CAT_TRANSPORT;
        fail_conn(c, &e);
        return;
    }
    pump(c);
}

/* Resolves host:port for TCP (literal addresses, or the system resolver at startup). */
static int resolve(const wk_iltp_address *a, struct sockaddr_storage *ss, wk_error *err)
{
    char port[8];
    snprintf(port, sizeof port, "%u", a->port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(a->host, port, &hints, &res);
    if (rc != 0 || !res) {
        wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "cannot resolve %s: %s", a->host, gai_strerror(rc));
        err->category = WK_CAT_TRANSPORT;
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int wk_host_sync_run(const wk_host_sync_opts *o, wk_error *err)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    sv.o = o;
    sv.loop = uv_default_loop();
    /* a peer that resets mid-write must fail only its session (EPIPE), not kill the process */
    signal(SIGPIPE, SIG_IGN);
    FILE *log = o->log ? o->log : stderr;
    sv.store = wk_store_open(o->store_dir, true, err);
    if (!sv.store) return 1;
    g_for_put = &sv;
    uv_timer_init(sv.loop, &sv.timer);
    sv.timer.data = &sv;
    uv_timer_start(&sv.timer, on_timer, 100, 100);
    int rc = 0;
    const wk_iltp_address *a = &o->addr;
    if (a->scheme == WK_ILTP_SCHEME_STDIO) {
        conn *c = new_conn(&sv, o->listen ? WK_ILTP_SIDE0 : WK_ILTP_SIDE1, err);
        if (!c) { rc = 1; goto out; }
        c->stdio = true;
        uv_pipe_init(sv.loop, &c->h.pipe, 0);
        uv_pipe_init(sv.loop, &c->out_pipe, 0);
        if (uv_pipe_open(&c->h.pipe, 0) != 0 || uv_pipe_open(&c->out_pipe, 1) != 0) {
            wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "stdio carrier needs pipes or sockets on stdin and stdout");
            rc = 1;
            goto out;
        }
        c->h.pipe.data = c;
        c->out_pipe.data = c;
        sv.stop = true; /* one session */
        pump(c);
    } else if (a->scheme == WK_ILTP_SCHEME_UNIX || a->scheme == WK_ILTP_SCHEME_TCP) {
        struct sockaddr_storage ss;
        if (a->scheme == WK_ILTP_SCHEME_TCP && resolve(a, &ss, err) != 0) { rc = 4; goto out; }
        if (o->listen) {
            int r;
            if (a->scheme == WK_ILTP_SCHEME_UNIX) {
                uv_pipe_init(sv.loop, &sv.lh.pipe, 0);
                unlink(a->path); /* a stale socket file from an earlier run */
                r = uv_pipe_bind(&sv.lh.pipe, a->path);
            } else {
                uv_tcp_init(sv.loop, &sv.lh.tcp);
                r = uv_tcp_bind(&sv.lh.tcp, (const struct sockaddr *)&ss, 0);
            }
            sv.lh.tcp.data = &sv;
            if (r == 0) r = uv_listen((uv_stream_t *)&sv.lh, 256, on_connection);
            if (r != 0) {
                wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "listen: %s", uv_strerror(r));
                err->category = WK_CAT_TRANSPORT;
                uv_close((uv_handle_t *)&sv.lh, NULL);
                rc = 4;
                goto out;
            }
            sv.listening = true;
            wk_iltp_address real = *a;
            if (a->scheme == WK_ILTP_SCHEME_TCP) {
                struct sockaddr_storage bound;
                int bl = sizeof bound;
                uv_tcp_getsockname(&sv.lh.tcp, (struct sockaddr *)&bound, &bl);
                real.port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                              : ((struct sockaddr_in *)&bound)->sin_port);
                real.port_given = true;
            }
            char text[WK_ILTP_ADDRESS_MAX + 64];
            wk_iltp_address_format(&real, text, sizeof text);
            fprintf(o->out ? o->out : stdout, "listening on %s\n", text);
            fflush(o->out ? o->out : stdout);
        } else {
            conn *c = new_conn(&sv, WK_ILTP_SIDE1, err);
            if (!c) { rc = 1; goto out; }
            c->srv->creq.data = c;
            int r;
            if (a->scheme == WK_ILTP_SCHEME_UNIX) {
                uv_pipe_init(sv.loop, &c->h.pipe, 0);
                c->h.pipe.data = c;
                uv_pipe_connect(&sv.creq, &c->h.pipe, a->path, on_connect);
                r = 0;
            } else {
                uv_tcp_init(sv.loop, &c->h.tcp);
                c->h.tcp.data = c;
                r = uv_tcp_connect(&sv.creq, &c->h.tcp, (const struct sockaddr *)&ss, on_connect);
            }
            if (r != 0) {
                wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "connect: %s", uv_strerror(r));
                err->category = WK_CAT_TRANSPORT;
                rc = 4;
                goto out;
            }
        }
    } else {
        wk_error_set(err, WK_ERR_USAGE, WK_NO_OFFSET, "scheme %s is not supported by this host yet",
                     wk_iltp_scheme_name(a->scheme));
        rc = 1;
        goto out;
    }
    uv_run(sv.loop, UV_RUN_DEFAULT);
    rc = o->listen && !o->once ? 0 : sv.status;
    (void)log;
out:
    if (uv_is_active((uv_handle_t *)&sv.timer) || !uv_is_closing((uv_handle_t *)&sv.timer)) {
        uv_timer_stop(&sv.timer);
        if (!uv_is_closing((uv_handle_t *)&sv.timer)) uv_close((uv_handle_t *)&sv.timer, NULL);
    }
    uv_run(sv.loop, UV_RUN_NOWAIT);
    wk_store_close(sv.store);
    g_for_put = NULL;
    return rc;
}
