/* wirekit host: the Blob sync application (`wirekit iltp sync`), the sans-I/O session machine
 * driven from carrier events (carrier.h). One event loop; a listener serves many concurrent
 * sessions (side0), a connector runs one (side1). It never knows which carrier it runs on.
 *
 * Each connection keeps one retained writer that drains accepted batches in order, and reads only
 * while its output is drained (stream backpressure). Received Blobs are hash-verified by the item
 * decoder and stored atomically by the store.
 *
 * Clean close: the connector, at fixed point with nothing left to send, writes its end mark and
 * half-closes; the listener, seeing boundary EOF at fixed point, writes its own end mark and
 * closes. Boundary EOF anywhere else is premature; EOF inside an item is truncation. */
#include "carrier.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define WBUF 65536

typedef struct server server;

typedef struct conn {
    server *srv;
    wk_carrier *car;
    wk_iltp_side side;
    bool writing, shut, read_eof, reading, close_queued, authorized;
    uint8_t wbuf[WBUF];
    wk_iltp_session *s;
    bool done;
    int id;
    struct conn *next;
} conn;

struct server {
    wk_host_loop loop;
    const wk_host_sync_opts *o;
    wk_carrier_config cfg;
    wk_store *store;
    wk_carrier_listener *listener;
    uv_timer_t timer;
    bool timer_closed;
    conn *conns;
    int next_id, finished, ok, active;
    int status;                  /* exit status of the last finished session */
    bool stop;
    bool progress_shown;
};

static uint64_t now_ms(server *sv) { return wk_host_loop_now(&sv->loop); }
static FILE *logf_(server *sv) { return sv->o->log ? sv->o->log : stderr; }

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
    if (!c->s) return;
    wk_iltp_session_stats st;
    wk_iltp_session_stats_get(c->s, &st);
    FILE *f = logf_(c->srv);
    if (c->srv->progress_shown) { fputc('\n', f); c->srv->progress_shown = false; }
    fprintf(f, "session %d send: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs; %s\n", c->id,
            wk_iltp_encoding_token(st.enc_out), (unsigned long long)st.items_out, (unsigned long long)st.raw_out,
            (unsigned long long)st.wire_out, (unsigned long long)st.blobs_out, outcome);
    fprintf(f, "session %d recv: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs, %llu rounds; %s\n", c->id,
            wk_iltp_encoding_token(st.enc_in), (unsigned long long)st.items_in, (unsigned long long)st.raw_in,
            (unsigned long long)st.wire_in, (unsigned long long)st.blobs_in, (unsigned long long)st.rounds, outcome);
}

static void stop_server(server *sv)
{
    if (sv->listener) {
        wk_carrier_listener_close(sv->listener);
        sv->listener = NULL;
    }
    if (!sv->timer_closed) {
        sv->timer_closed = true;
        uv_timer_stop(&sv->timer);
        uv_close((uv_handle_t *)&sv->timer, NULL);
    }
}

/* ---- carrier events ---- */
static void ev_closed(wk_carrier *car)
{
    conn *c = car->owner;
    server *sv = c->srv;
    conn **pp = &sv->conns;
    while (*pp && *pp != c) pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    wk_iltp_session_free(c->s);
    free(c);
    sv->active--;
    if (sv->stop && sv->active == 0) stop_server(sv);
}

/* Ends a connection once; reports the outcome. */
static void finish(conn *c, int status, const char *outcome)
{
    if (c->done) return;
    c->done = true;
    server *sv = c->srv;
    if (c->s) summary(c, outcome);
    else fprintf(logf_(sv), "session %d: %s\n", c->id, outcome);
    sv->finished++;
    if (status == 0) sv->ok++;
    sv->status = status;
    if (sv->o->once || !sv->o->listen || sv->o->addr.scheme == WK_ILTP_SCHEME_STDIO) sv->stop = true;
    wk_carrier_close(c->car);
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
    fprintf(logf_(c->srv), "session %d: %s\n", c->id, wk_error_format(e, line, sizeof line));
    char outcome[200];
    snprintf(outcome, sizeof outcome, "failed: %s", wk_error_name(e->code));
    finish(c, exit_for(e), outcome);
}

static void pump(conn *c);
static wk_code start_session(conn *c, wk_error *err);

static void ev_opened(wk_carrier *car)
{
    conn *c = car->owner;
    wk_error e;
    if (start_session(c, &e) != WK_OK) {
        fail_conn(c, &e);
        return;
    }
    pump(c);
}

static size_t ev_received(wk_carrier *car, const uint8_t *p, size_t n)
{
    conn *c = car->owner;
    if (c->done) return n;
    wk_in in = {p, n, 0};
    wk_error e;
    if (wk_iltp_session_recv(c->s, &in, now_ms(c->srv), &e) == WK_ERROR) {
        fail_conn(c, &e);
        return n;
    }
    pump(c);
    return n;
}

static void ev_ended(wk_carrier *car)
{
    conn *c = car->owner;
    if (c->done) return;
    c->read_eof = true;
    c->reading = false;
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
}

static void ev_written(wk_carrier *car)
{
    conn *c = car->owner;
    c->writing = false;
    if (!c->done) pump(c);
}

static void ev_shut(wk_carrier *car)
{
    conn *c = car->owner;
    if (c->done) return;
    /* the listener closes after its end mark; the connector waits for the listener's EOF */
    if (wk_iltp_session_state_get(c->s) == WK_ILTP_SESSION_CLOSED) finish(c, 0, "clean");
}

static void ev_failed(wk_carrier *car, const wk_error *e)
{
    conn *c = car->owner;
    if (c->done) {
        wk_carrier_close(car);
        return;
    }
    fail_conn(c, e);
}

static const wk_carrier_events conn_events = {ev_opened, ev_received, ev_ended, ev_written,
                                              ev_shut, ev_failed, ev_closed};

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
        if (wk_carrier_write(c->car, c->wbuf, out.pos, &e) != WK_OK) {
            fail_conn(c, &e);
            return;
        }
        c->writing = true;
        if (c->reading) { wk_carrier_read(c->car, false); c->reading = false; }
        return;
    }
    /* output drained */
    wk_iltp_session_state st = wk_iltp_session_state_get(c->s);
    if (st == WK_ILTP_SESSION_FIXED_POINT && !c->authorized) {
        /* fixed point, an empty codec writer, every batch written: settlement (QUIB) */
        c->authorized = true;
        wk_carrier_authorize(c->car);
    }
    if (!c->read_eof && !c->reading) {
        wk_carrier_read(c->car, true);
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
        if (wk_carrier_half_close(c->car, &e) != WK_OK && st == WK_ILTP_SESSION_CLOSED) finish(c, 0, "clean");
    }
}

static void on_timer(uv_timer_t *t)
{
    server *sv = t->data;
    if (sv->o->progress && !sv->o->verbose) {
        uint64_t in = 0, out = 0;
        int n = 0;
        for (conn *c = sv->conns; c; c = c->next) {
            if (c->done || !c->s) continue;
            wk_iltp_session_stats st;
            wk_iltp_session_stats_get(c->s, &st);
            in += st.wire_in;
            out += st.wire_out;
            n++;
        }
        if (n && in + out > (1u << 20)) {
            FILE *f = logf_(sv);
            fprintf(f, "\r%d session%s: received %.1f MiB, sent %.1f MiB   ", n, n == 1 ? "" : "s",
                    (double)in / 1048576.0, (double)out / 1048576.0);
            fflush(f);
            sv->progress_shown = true;
        }
    }
    for (conn *c = sv->conns; c; c = c->next) {
        if (c->done || !c->s) continue;
        wk_error e;
        if (wk_iltp_session_tick(c->s, now_ms(sv), &e) != WK_OK) fail_conn(c, &e);
    }
}

static void on_trace(void *ctx, bool outgoing, const char *line)
{
    conn *c = ctx;
    FILE *f = logf_(c->srv);
    if (c->srv->progress_shown) { fputc('\n', f); c->srv->progress_shown = false; }
    fprintf(f, "session %d %s %s\n", c->id, outgoing ? "->" : "<-", line);
}

/* A connection over carrier car (owned from now on: closed on failure). Its session is made
 * once the carrier is open (the proof assurance is final then). */
static conn *new_conn(server *sv, wk_carrier *car, wk_iltp_side side, wk_error *err)
{
    conn *c = calloc(1, sizeof *c);
    if (!c) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "connection");
        wk_carrier_close(car);
        return NULL;
    }
    c->srv = sv;
    c->car = car;
    c->side = side;
    c->id = ++sv->next_id;
    car->ev = &conn_events;
    car->owner = c;
    c->next = sv->conns;
    sv->conns = c;
    sv->active++;
    return c;
}

/* The session of an open carrier. */
static wk_code start_session(conn *c, wk_error *err)
{
    server *sv = c->srv;
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = c->side;
    p.form = sv->o->form ? sv->o->form : WK_ILTP_FORM_0_13;
    p.decode = sv->o->decode;
    p.encode = sv->o->encode;
    if (getrandom(p.seed, sizeof p.seed, 0) != (ssize_t)sizeof p.seed)
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "getrandom: %s", strerror(errno));
    p.seed[0] |= 1; /* nonzero */
    p.store = (wk_iltp_store_ops){sv->store, st_has, st_list, st_get, st_put};
    p.phase_timeout_ms = sv->o->phase_timeout_ms;
    p.budget_prefacing = sv->o->budget_prefacing;
    p.budget_establishment = sv->o->budget_establishment;
    p.budget_round = sv->o->budget_round;
    p.level = sv->o->level;
    p.assurance = c->car->assurance;
    if (c->car->has_exporter) memcpy(p.channel_exporter, c->car->exporter, 32);
    if (sv->o->verbose) {
        p.trace = on_trace;
        p.trace_ctx = c;
    }
    c->s = wk_iltp_session_create(&p, now_ms(sv), err);
    if (c->s && sv->o->verbose) {
        char ex[65] = "";
        for (int i = 0; c->car->has_exporter && i < 32; i++) snprintf(ex + 2 * i, 3, "%02x", c->car->exporter[i]);
        fprintf(logf_(sv), "session %d carrier %s peer %s assurance %s%s%s\n", c->id, c->car->ops->name, c->car->peer,
                wk_iltp_assurance_name(c->car->assurance), ex[0] ? " exporter " : "", ex);
    }
    return c->s ? WK_OK : (err ? err->code : WK_ERR_NOMEM);
}

static void on_accepted(wk_carrier_listener *l, wk_carrier *car)
{
    server *sv = l->owner;
    if (sv->stop) {
        wk_carrier_close(car);
        return;
    }
    wk_error e;
    conn *c = new_conn(sv, car, WK_ILTP_SIDE0, &e);
    if (!c) {
        char line[256];
        fprintf(logf_(sv), "%s\n", wk_error_format(&e, line, sizeof line));
        return;
    }
    if (sv->o->once && sv->listener) {
        /* one session: stop listening */
        wk_carrier_listener_close(sv->listener);
        sv->listener = NULL;
    }
    wk_carrier_start(car);
}

int wk_host_sync_run(const wk_host_sync_opts *o, wk_error *err)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    sv.o = o;
    /* a peer that resets mid-write must fail only its session (EPIPE), not kill the process */
    signal(SIGPIPE, SIG_IGN);
    if (wk_host_loop_init(&sv.loop, o->log, err) != WK_OK) return 1;
    sv.cfg.addr = o->addr;
    sv.cfg.assurance_override = o->assurance_override;
    sv.cfg.transport_timeout_ms = o->transport_timeout_ms;
    sv.cfg.cert_file = o->cert_file;
    sv.cfg.key_file = o->key_file;
    sv.cfg.ca_file = o->ca_file;
    sv.cfg.ws_max_message = o->ws_max_message;
    const wk_carrier_kind *kind = wk_carrier_kind_for(o->addr.scheme);
    if (!kind) {
        wk_error_set(err, WK_ERR_USAGE, WK_NO_OFFSET, "scheme %s is not supported by this host yet",
                     wk_iltp_scheme_name(o->addr.scheme));
        wk_host_loop_close(&sv.loop);
        return 1;
    }
    sv.store = wk_store_open(o->store_dir, true, err);
    if (!sv.store) {
        wk_host_loop_close(&sv.loop);
        return 1;
    }
    g_for_put = &sv;
    uv_timer_init(sv.loop.uv, &sv.timer);
    sv.timer.data = &sv;
    uv_timer_start(&sv.timer, on_timer, 100, 100);
    int rc = 0;
    if (o->listen) {
        if (kind->listen(&sv.loop, &sv.cfg, &sv.listener, err) != WK_OK) {
            rc = exit_for(err);
            goto out;
        }
        sv.listener->owner = &sv;
        sv.listener->accepted = on_accepted;
        if (o->addr.scheme != WK_ILTP_SCHEME_STDIO) { /* stdio: one session, no address to print */
            char text[WK_ILTP_ADDRESS_MAX + 64];
            wk_iltp_address_format(&sv.listener->address, text, sizeof text);
            fprintf(o->out ? o->out : stdout, "listening on %s\n", text);
            fflush(o->out ? o->out : stdout);
        }
    } else {
        wk_carrier *car = NULL;
        if (kind->connect(&sv.loop, &sv.cfg, &car, err) != WK_OK) {
            rc = exit_for(err);
            goto out;
        }
        if (!new_conn(&sv, car, WK_ILTP_SIDE1, err)) {
            rc = 1;
            goto out;
        }
        wk_carrier_start(car);
    }
    wk_host_loop_run(&sv.loop);
    rc = o->listen && !o->once && o->addr.scheme != WK_ILTP_SCHEME_STDIO ? 0 : sv.status;
out:
    stop_server(&sv);
    for (conn *c = sv.conns; c; c = c->next) wk_carrier_close(c->car);
    wk_host_loop_run(&sv.loop);
    wk_host_loop_close(&sv.loop);
    wk_store_close(sv.store);
    g_for_put = NULL;
    return rc;
}
