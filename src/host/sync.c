/* wirekit host: the Blob sync application (`wirekit iltp sync`), the sans-I/O session machine
 * driven from carrier events (carrier.h). One event loop; a listener serves many concurrent
 * sessions (side0), a connector runs one (side1). It never knows which carrier it runs on.
 *
 * Full duplex: a connection reads while it writes. Its one retained writer drains the session's
 * output one batch at a time; reading pauses only when the session says its queued output is
 * over its bound (a peer that does not read), when the receive window of the Blob being stored is
 * full (the store's worker is behind) or when too many received Blobs wait for their commit.
 * Each pause resumes from the loop as soon as its cause clears. Two honest peers with full
 * output both ways therefore keep reading, and memory per session stays bounded by windows.
 *
 * Store I/O runs on workers (storeio.c): received Blob data goes through a bounded window into
 * the store writer, is hash-verified by the item decoder as it passes and committed (fsync,
 * rename) only on a match; responses are read from the store file in bounded windows and
 * verified before their last piece goes out. The store index (index.c) is updated on every
 * commit, and every other session at fixed point hears of the new Blob at once (a new round).
 * The store directory is watched (uv_fs_event, inotify): Blobs other processes store reach the
 * index and the sessions the same way.
 *
 * Clean close (bounded completion): whichever side closes first (a connector at fixed point with
 * nothing left to do, a listener interrupted or idle) writes its end mark and half-closes; the
 * other side, seeing boundary EOF at fixed point, answers with its own end mark and half-close.
 * A session ends clean once both directions have ended. Boundary EOF anywhere else is premature;
 * EOF inside an item is truncation.
 *
 * Limits (a listener's): --max-sessions refuses the next connection at once (logged);
 * --max-memory is a budget over every session's allocations (checked at session start and on
 * every allocation; the session that would exceed it fails with WK_ERR_HOST_MEMORY_LIMIT);
 * --idle-timeout-ms closes a session silent at fixed point that long. */
#include "storeio.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define WBUF 65536
#define MAX_COMMITS 4                       /* received Blobs waiting for their commit */
#define SESSION_START_RESERVE (256u << 10)  /* the budget a new session must find free */

typedef struct server server;

typedef struct conn {
    server *srv;
    wk_carrier *car;
    wk_iltp_side side;
    int id;
    wk_host_account mem;
    wk_iltp_session *s;
    uint64_t started_ms, last_rx_ms;
    /* output */
    uint8_t *wbuf;
    bool writing;
    /* input */
    bool paused;            /* received() stopped short: reading resumes when the cause clears */
    bool peer_ended;
    /* Blob I/O */
    wk_rx *rx;              /* the Blob being received */
    int commits;            /* received Blobs on their way into the store */
    int io;                 /* receive and read objects alive (they charge mem) */
    wk_tx *tx;              /* the Blob being read for a response */
    wk_in tx_in;            /* the part of its window handed to the session */
    uint64_t tx_in_end;     /* the Blob offset where tx_in ends */
    /* completion */
    bool want_close;        /* close cleanly at fixed point (interrupt, idle, a connector done) */
    bool idle_closed;
    bool shut_requested, shut_done, authorized, done, car_closed;
    uint64_t close_deadline;
    size_t car_mem;         /* the carrier's own memory, as last charged to the budget */
    /* the summary of a session that ended with commits in flight, written when the last one ends
     * (so once a session's summary is out, the store holds exactly what it stored) */
    bool summary_pending, summary_failed;
    char summary_outcome[200];
    char peer[96];          /* the carrier's peer name, kept for a summary written after it closed */
    wk_error summary_failure;
    struct conn *next;
} conn;

struct server {
    wk_host_loop loop;
    const wk_host_sync_opts *o;
    wk_carrier_config cfg;
    wk_store *store;
    wk_store_index *index;
    wk_carrier_listener *listener;
    wk_host_budget budget;
    uv_timer_t timer;
    uv_signal_t sigint, sigterm;
    uv_fs_event_t watch;
    bool watching, handles_closed;
    conn *conns;
    int next_id, finished, ok, active;
    int status;                  /* exit status of the last finished session */
    bool stop;                   /* end once no connection is left */
    bool interrupted;
    uint64_t interrupt_deadline;
    bool progress_shown;
    unsigned ticks;
    FILE *log, *out;
};

static uint64_t now_ms(server *sv) { return wk_host_loop_now(&sv->loop); }

static void pump(conn *c);
static void check_completion(conn *c);
static bool can_take(const conn *c);
static void maybe_resume(conn *c);
static void fail_conn(conn *c, const wk_error *e);

/* ---- output lines ------------------------------------------------------------------------- */
static void progress_line(server *sv, int n, uint64_t dout, uint64_t bout, uint64_t din, uint64_t bin,
                          uint64_t age_ms, const char *eta);
static bool progress_on(const server *sv);
static void clear_progress(server *sv)
{
    if (sv->progress_shown) {
        fputs("\r\033[K", sv->log);
        sv->progress_shown = false;
    }
}

static void summary(conn *c, const char *outcome, const wk_error *failure)
{
    server *sv = c->srv;
    wk_iltp_session_stats st;
    memset(&st, 0, sizeof st);
    if (c->s) wk_iltp_session_stats_get(c->s, &st);
    if (!sv->o->listen && progress_on(sv) && st.data_in + st.data_out > 0) {
        /* a connector's last figures stay on the terminal above its summary, so a transfer that
         * ends between two ticks is shown too */
        progress_line(sv, 1, st.data_out, st.blobs_out, st.data_in, st.blobs_in, now_ms(sv) - c->started_ms, "");
        fputc('\n', sv->log);
        sv->progress_shown = false;
    }
    clear_progress(sv);
    const char *eo = wk_iltp_encoding_name(st.enc_out), *ei = wk_iltp_encoding_name(st.enc_in);
    fprintf(sv->log, "session %d send: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs; %s\n", c->id,
            eo, (unsigned long long)st.items_out, (unsigned long long)st.raw_out,
            (unsigned long long)st.wire_out, (unsigned long long)st.blobs_out, outcome);
    fprintf(sv->log, "session %d recv: %s, %llu items, %llu raw bytes, %llu wire bytes, %llu Blobs, %llu rounds; %s\n", c->id,
            ei, (unsigned long long)st.items_in, (unsigned long long)st.raw_in,
            (unsigned long long)st.wire_in, (unsigned long long)st.blobs_in, (unsigned long long)st.rounds, outcome);
    fflush(sv->log);
    if (sv->o->json) {
        char err[64] = "null";
        if (failure) snprintf(err, sizeof err, "\"%s\"", wk_error_name(failure->code));
        fprintf(sv->out,
                "{\"session\":%d,\"side\":\"%s\",\"peer\":\"%s\",\"outcome\":\"%s\",\"error\":%s,"
                "\"encoding_out\":\"%s\",\"encoding_in\":\"%s\",\"wire_bytes_out\":%llu,\"wire_bytes_in\":%llu,"
                "\"blob_bytes_out\":%llu,\"blob_bytes_in\":%llu,\"blobs_out\":%llu,\"blobs_in\":%llu,"
                "\"rounds\":%llu,\"duration_ms\":%llu}\n",
                c->id, c->side == WK_ILTP_SIDE0 ? "side0" : "side1", c->peer,
                failure ? "failed" : (c->idle_closed ? "idle-timeout" : "clean"), err, eo, ei,
                (unsigned long long)st.wire_out, (unsigned long long)st.wire_in,
                (unsigned long long)st.data_out, (unsigned long long)st.data_in,
                (unsigned long long)st.blobs_out, (unsigned long long)st.blobs_in,
                (unsigned long long)st.rounds, (unsigned long long)(now_ms(sv) - c->started_ms));
        fflush(sv->out);
    }
}

static void close_handles(server *sv)
{
    if (sv->handles_closed) return;
    sv->handles_closed = true;
    if (sv->listener) {
        wk_carrier_listener_close(sv->listener);
        sv->listener = NULL;
    }
    uv_timer_stop(&sv->timer);
    uv_close((uv_handle_t *)&sv->timer, NULL);
    uv_signal_stop(&sv->sigint);
    uv_close((uv_handle_t *)&sv->sigint, NULL);
    uv_signal_stop(&sv->sigterm);
    uv_close((uv_handle_t *)&sv->sigterm, NULL);
    if (sv->watching) {
        uv_fs_event_stop(&sv->watch);
        uv_close((uv_handle_t *)&sv->watch, NULL);
        sv->watching = false;
    }
}

/* ---- connection lifetime ------------------------------------------------------------------- */
/* Frees c once its carrier is gone and no store object refers to it. */
static void conn_release(conn *c)
{
    if (!c->car_closed || c->commits > 0 || c->io > 0) return;
    server *sv = c->srv;
    sv->budget.used -= c->car_mem;
    conn **pp = &sv->conns;
    while (*pp && *pp != c) pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    wk_iltp_session_destroy(c->s);
    wk_host_free(&c->mem, c->wbuf);
    free(c);
    sv->active--;
    if (sv->stop && sv->active == 0) close_handles(sv);
}

/* Ends a connection once; reports the outcome. */
static void finish(conn *c, int status, const char *outcome, const wk_error *failure)
{
    if (c->done) return;
    c->done = true;
    server *sv = c->srv;
    snprintf(c->peer, sizeof c->peer, "%s", c->car ? c->car->peer : "");
    if ((c->s || failure) && c->commits > 0) {
        c->summary_pending = true;
        snprintf(c->summary_outcome, sizeof c->summary_outcome, "%s", outcome);
        c->summary_failed = failure != NULL;
        if (failure) c->summary_failure = *failure;
    } else if (c->s || failure) {
        summary(c, outcome, failure);
    }
    sv->finished++;
    if (status == 0) sv->ok++;
    sv->status = status;
    if (sv->o->once || !sv->o->listen || sv->o->addr.scheme == WK_ILTP_SCHEME_STDIO) sv->stop = true;
    if (c->rx) {
        wk_rx_abort(c->rx); /* a partial Blob never reaches the store */
        c->rx = NULL;
    }
    wk_tx_close(c->tx);
    c->tx = NULL;
    wk_carrier_close(c->car);
}

static int exit_for(const wk_error *e)
{
    if (e->category == WK_CAT_PEER_PROTOCOL) return 2;
    if (e->category == WK_CAT_TRANSPORT) return 4;
    return 1;
}

static void fail_conn(conn *c, const wk_error *e0)
{
    if (c->done) return;
    wk_error e = *e0;
    /* a refused allocation surfaces as NOMEM, or as a backend failure from inside libzstd */
    if (c->mem.refused && e.category == WK_CAT_INTEGRATION && e.code != WK_ERR_HOST_MEMORY_LIMIT) {
        wk_error_set(&e, WK_ERR_HOST_MEMORY_LIMIT, WK_NO_OFFSET, "the sessions' memory budget of %llu bytes is spent (%.60s)",
                     (unsigned long long)c->srv->budget.limit, e0->msg);
    }
    char line[256];
    clear_progress(c->srv);
    fprintf(c->srv->log, "session %d: %s\n", c->id, wk_error_format(&e, line, sizeof line));
    char outcome[200];
    snprintf(outcome, sizeof outcome, "failed: %s", wk_error_name(e.code));
    finish(c, exit_for(&e), outcome, &e);
}

/* ---- the store, from the loop -------------------------------------------------------------- */
/* A Blob joined the index: every session at fixed point opens a round for it. */
static void store_advanced(server *sv)
{
    if (sv->interrupted) return;
    for (conn *x = sv->conns; x; x = x->next) {
        if (x->done || !x->s || x->want_close) continue;
        wk_iltp_session_store_changed(x->s, now_ms(sv));
        if (wk_iltp_session_state_get(x->s) == WK_ILTP_SESSION_FAILED) {
            wk_error e;
            wk_iltp_session_tick(x->s, now_ms(sv), &e);
            fail_conn(x, &e);
            continue;
        }
        pump(x);
    }
}

static void index_add(server *sv, const uint8_t hash[32], uint64_t len)
{
    bool nomem = false;
    if (wk_store_index_add(sv->index, hash, len, &nomem)) store_advanced(sv);
    else if (nomem) fprintf(sv->log, "store index: out of memory; a stored Blob is not advertised\n");
}

static void rx_room(void *ctx, wk_rx *rx)
{
    (void)rx;
    maybe_resume(ctx);
}

static void rx_done(void *ctx, wk_rx *rx, const uint8_t hash[32], uint64_t len, const wk_error *err)
{
    (void)rx;
    conn *c = ctx;
    c->commits--;
    if (!err) index_add(c->srv, hash, len);
    if (c->summary_pending && c->commits == 0) {
        c->summary_pending = false;
        summary(c, c->summary_outcome, c->summary_failed ? &c->summary_failure : NULL);
    }
    if (!c->done) {
        wk_error e;
        if (wk_iltp_session_blob_stored(c->s, hash, err, &e) != WK_OK) fail_conn(c, &e);
        else {
            pump(c);
            maybe_resume(c);
        }
    }
    conn_release(c);
}

static void io_released(void *ctx)
{
    conn *c = ctx;
    c->io--;
    conn_release(c);
}

static const wk_rx_events rx_events = {rx_room, rx_done, io_released};

static void tx_ready(void *ctx, wk_tx *tx)
{
    (void)tx;
    pump(ctx);
}

static void watch_stat_done(void *ctx, const uint8_t hash[32], uint64_t len, const wk_error *err)
{
    if (!err) index_add(ctx, hash, len);
}

static void on_watch(uv_fs_event_t *h, const char *name, int events, int status)
{
    server *sv = h->data;
    (void)events;
    if (status < 0 || !name || strlen(name) != WK_STORE_HASH_TEXT_LEN) return;
    uint8_t hash[32];
    size_t n;
    if (wk_b64a_decode(name, WK_STORE_HASH_TEXT_LEN, hash, 32, &n, NULL) != WK_OK || n != 32) return;
    if (wk_store_index_has(sv->index, hash, NULL, NULL)) return;
    wk_stat_start(&sv->loop, sv->store, hash, watch_stat_done, sv);
}

/* ---- reading ------------------------------------------------------------------------------- */
/* Whether the session may decode more now (store windows and commits). */
static bool can_take(const conn *c)
{
    if (c->commits >= MAX_COMMITS) return false;
    /* a compressed stream hands out slices of up to WK_RX_SLICE at once */
    return !c->rx || wk_rx_ready(c->rx);
}

/* A received Blob event. Returns false when the connection failed. */
static bool on_rx_event(conn *c)
{
    const wk_iltp_session_event *ev = wk_iltp_session_event_get(c->s);
    wk_error e;
    switch (ev->kind) {
    case WK_ILTP_SESSION_BLOB_BEGIN:
        c->rx = wk_rx_begin(&c->srv->loop, c->srv->store, &c->mem, ev->hash, ev->length, &rx_events, c);
        if (c->rx) c->io++;
        if (!c->rx) {
            wk_error_set(&e, WK_ERR_NOMEM, WK_NO_OFFSET, "receive window for a %llu-byte Blob",
                         (unsigned long long)ev->length);
            fail_conn(c, &e);
            return false;
        }
        return true;
    case WK_ILTP_SESSION_BLOB_DATA:
        wk_rx_data(c->rx, ev->data, ev->len); /* fits: the input view was bounded by the room */
        return true;
    case WK_ILTP_SESSION_BLOB_END:
        c->commits++;
        wk_rx_end(c->rx);
        c->rx = NULL;
        return true;
    default:
        wk_error_set(&e, WK_ERR_STATE, WK_NO_OFFSET, "unexpected session event %d", (int)ev->kind);
        fail_conn(c, &e);
        return false;
    }
}

/* Feeds in to the session until it is consumed and the session has nothing more to hand out
 * (NEED_INPUT), or until a pause (store windows, commits, the session's output bound). A pause
 * stops the carrier's reads; what is left of in stays with the carrier. Returns false when the
 * connection failed. */
static bool drive_recv(conn *c, wk_in *in)
{
    wk_error e;
    for (;;) {
        if (!can_take(c)) {
            c->paused = true;
            break;
        }
        wk_in view = *in;
        if (c->rx) { /* identity hands out slices of the input itself: bound them by the room */
            size_t room = wk_rx_room(c->rx);
            if (view.size - view.pos > room) view.size = view.pos + room;
        }
        wk_result r = wk_iltp_session_recv(c->s, &view, NULL, &e);
        in->pos = view.pos;
        if (r == WK_ERROR) {
            fail_conn(c, &e);
            return false;
        }
        if (r == WK_EVENT) {
            if (!on_rx_event(c)) return false;
            continue;
        }
        if (r == WK_NEED_OUTPUT) { /* its output is over its bound: the peer must read first */
            c->paused = true;
            break;
        }
        if (in->pos == in->size) return true; /* WK_NEED_INPUT with everything consumed */
    }
    wk_carrier_read(c->car, false);
    return true;
}

static size_t ev_received(wk_carrier *car, const uint8_t *p, size_t n)
{
    conn *c = car->owner;
    if (c->done || !c->s) return n;
    server *sv = c->srv;
    c->last_rx_ms = now_ms(sv);
    wk_error e;
    if (wk_iltp_session_tick(c->s, now_ms(sv), &e) != WK_OK) {
        fail_conn(c, &e);
        return n;
    }
    wk_in in = {p, n, 0};
    if (!drive_recv(c, &in)) return n;
    pump(c);
    return c->done ? n : in.pos;
}

/* Resumes a paused connection once its cause has cleared: first what the session still holds
 * decoded, then the carrier's reads (its kept tail first). */
static void maybe_resume(conn *c)
{
    static const uint8_t none[1];
    if (c->done || !c->paused || c->peer_ended || !c->s || !can_take(c)) return;
    c->paused = false;
    wk_in empty = {none, 0, 0};
    if (!drive_recv(c, &empty)) return;
    pump(c);
    if (!c->done && !c->paused) wk_carrier_read(c->car, true);
}

/* ---- writing ------------------------------------------------------------------------------- */
/* Drains the session's output through one retained write at a time, handing it Blob data read
 * by workers, then drives completion. */
static void pump(conn *c)
{
    if (c->done || c->writing || !c->s) return;
    server *sv = c->srv;
    wk_error e;
    if (!c->wbuf) {
        c->wbuf = wk_host_alloc(&c->mem, WBUF);
        if (!c->wbuf) {
            wk_error_set(&e, WK_ERR_NOMEM, WK_NO_OFFSET, "write buffer");
            fail_conn(c, &e);
            return;
        }
    }
    wk_out out = {c->wbuf, WBUF, 0};
    for (;;) {
        wk_result r = wk_iltp_session_send(c->s, c->tx_in.src ? &c->tx_in : NULL, &out, &e);
        if (r == WK_ERROR) {
            fail_conn(c, &e);
            return;
        }
        if (r != WK_EVENT) break; /* WK_NEED_OUTPUT (out full) or WK_DONE (nothing now) */
        const wk_iltp_session_event *ev = wk_iltp_session_event_get(c->s);
        if (!c->tx || memcmp(wk_tx_hash(c->tx), ev->hash, 32) != 0) {
            wk_tx_close(c->tx);
            c->tx_in = (wk_in){NULL, 0, 0};
            c->tx = wk_tx_open(&sv->loop, sv->store, &c->mem, ev->hash, ev->length, tx_ready, io_released, c);
            if (c->tx) c->io++;
            if (!c->tx) {
                wk_error_set(&e, WK_ERR_NOMEM, WK_NO_OFFSET, "read window for a %llu-byte Blob",
                             (unsigned long long)ev->length);
                fail_conn(c, &e);
                return;
            }
        }
        wk_result rr = wk_tx_data(c->tx, ev->offset, &c->tx_in, &e);
        if (rr == WK_ERROR) {
            wk_error le;
            wk_error_set(&le, WK_ERR_ILTP_STORE, WK_NO_OFFSET, "store read: %s: %.80s", wk_error_name(e.code), e.msg);
            fail_conn(c, &le);
            return;
        }
        if (rr == WK_NEED_INPUT) {
            c->tx_in = (wk_in){NULL, 0, 0};
            break; /* tx_ready() pumps again */
        }
        c->tx_in_end = ev->offset + (c->tx_in.size - c->tx_in.pos);
    }
    /* a Blob whose last byte the session took is done with: its windows go back */
    if (c->tx && c->tx_in.src && c->tx_in.pos == c->tx_in.size && c->tx_in_end == wk_tx_len(c->tx)) {
        wk_tx_close(c->tx);
        c->tx = NULL;
        c->tx_in = (wk_in){NULL, 0, 0};
    }
    if (out.pos) {
        if (wk_carrier_write(c->car, c->wbuf, out.pos, &e) != WK_OK) {
            fail_conn(c, &e);
            return;
        }
        c->writing = true;
        return;
    }
    /* nothing to write now: the buffer goes back to the budget */
    wk_host_free(&c->mem, c->wbuf);
    c->wbuf = NULL;
    check_completion(c);
}

/* With no output pending: settlement, bounded completion, the end. */
static void check_completion(conn *c)
{
    if (c->done || c->writing || !c->s) return;
    server *sv = c->srv;
    wk_error e;
    wk_iltp_session_state st = wk_iltp_session_state_get(c->s);
    bool idle_io = !c->rx && c->commits == 0 && !wk_iltp_session_wants_send(c->s);
    if (st == WK_ILTP_SESSION_FIXED_POINT && idle_io && !c->authorized) {
        /* fixed point, an empty codec writer, every batch written: settlement (QUIB) */
        c->authorized = true;
        wk_carrier_authorize(c->car);
    }
    bool connector_done = c->side == WK_ILTP_SIDE1 && !sv->o->watch;
    if ((st == WK_ILTP_SESSION_FIXED_POINT || st == WK_ILTP_SESSION_CLOSED) && idle_io &&
        !wk_iltp_session_closing(c->s) && (c->want_close || connector_done || c->peer_ended)) {
        if (wk_iltp_session_close(c->s, &e) != WK_OK) {
            fail_conn(c, &e);
            return;
        }
        if (!c->close_deadline) c->close_deadline = now_ms(sv) + WK_HOST_CLOSE_TIMEOUT_MS;
        pump(c); /* the end mark */
        return;
    }
    if (wk_iltp_session_closed_locally(c->s) && !c->shut_requested) {
        c->shut_requested = true;
        if (wk_carrier_half_close(c->car, &e) != WK_OK) {
            /* the peer ended cleanly and is gone: nothing more to say */
            if (c->peer_ended && wk_iltp_session_state_get(c->s) == WK_ILTP_SESSION_CLOSED) {
                c->shut_done = true;
            } else {
                fail_conn(c, &e);
                return;
            }
        } else {
            return;
        }
    }
    if (c->shut_done && c->peer_ended && wk_iltp_session_state_get(c->s) == WK_ILTP_SESSION_CLOSED)
        finish(c, 0, c->idle_closed ? "closed: WK_ERR_HOST_IDLE_TIMEOUT" : "clean", NULL);
}

/* ---- carrier events ------------------------------------------------------------------------ */
static void on_trace(void *ctx, bool outgoing, const char *line)
{
    conn *c = ctx;
    clear_progress(c->srv);
    fprintf(c->srv->log, "session %d %s %s\n", c->id, outgoing ? "->" : "<-", line);
}

/* The session of an open carrier. */
static wk_code start_session(conn *c, wk_error *err)
{
    server *sv = c->srv;
    if (sv->budget.limit && sv->budget.used + SESSION_START_RESERVE > sv->budget.limit)
        return wk_error_set(err, WK_ERR_HOST_MEMORY_LIMIT, WK_NO_OFFSET,
                            "the sessions' memory budget of %llu bytes has %llu bytes left",
                            (unsigned long long)sv->budget.limit,
                            (unsigned long long)(sv->budget.limit - sv->budget.used));
    wk_allocator a = wk_host_account_allocator(&c->mem);
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = c->side;
    p.form = sv->o->form ? sv->o->form : WK_ILTP_FORM_0_13;
    p.decode = sv->o->decode;
    p.encode = sv->o->encode;
    if (getrandom(p.seed, sizeof p.seed, 0) != (ssize_t)sizeof p.seed)
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "getrandom: %s", strerror(errno));
    p.seed[0] |= 1; /* nonzero */
    p.store = wk_store_index_ops(sv->index);
    p.phase_timeout_ms = sv->o->phase_timeout_ms;
    p.budget_prefacing = sv->o->budget_prefacing;
    p.budget_establishment = sv->o->budget_establishment;
    p.budget_round = sv->o->budget_round;
    p.level = sv->o->level;
    p.allocator = &a; /* copied by the session */
    p.assurance = c->car->assurance;
    if (c->car->has_exporter) memcpy(p.channel_exporter, c->car->exporter, 32);
    if (sv->o->verbose) {
        p.trace = on_trace;
        p.trace_ctx = c;
    }
    c->s = wk_iltp_session_create(&p, now_ms(sv), err);
    if (!c->s) {
        if (err && err->code == WK_ERR_NOMEM && c->mem.refused)
            wk_error_set(err, WK_ERR_HOST_MEMORY_LIMIT, WK_NO_OFFSET, "the sessions' memory budget of %llu bytes is spent",
                         (unsigned long long)sv->budget.limit);
        return err ? err->code : WK_ERR_NOMEM;
    }
    if (sv->o->verbose) {
        char ex[65] = "";
        for (int i = 0; c->car->has_exporter && i < 32; i++) snprintf(ex + 2 * i, 3, "%02x", c->car->exporter[i]);
        clear_progress(sv);
        fprintf(sv->log, "session %d carrier %s peer %s assurance %s%s%s\n", c->id, c->car->ops->name, c->car->peer,
                wk_iltp_assurance_name(c->car->assurance), ex[0] ? " exporter " : "", ex);
    }
    return WK_OK;
}

static void ev_opened(wk_carrier *car)
{
    conn *c = car->owner;
    wk_error e;
    c->last_rx_ms = now_ms(c->srv);
    if (start_session(c, &e) != WK_OK) {
        fail_conn(c, &e);
        return;
    }
    wk_carrier_read(car, true);
    pump(c);
}

static void ev_ended(wk_carrier *car)
{
    conn *c = car->owner;
    if (c->done) return;
    c->peer_ended = true;
    if (!c->s) return;
    wk_error e;
    if (wk_iltp_session_finish(c->s, NULL, &e) != WK_DONE) { /* premature, or inside an item */
        fail_conn(c, &e);
        return;
    }
    /* clean so far: answer with our own end mark (check_completion) and end once ours is out */
    pump(c);
}

static void ev_written(wk_carrier *car)
{
    conn *c = car->owner;
    c->writing = false;
    if (c->done) return;
    pump(c);
    maybe_resume(c);
}

static void ev_shut(wk_carrier *car)
{
    conn *c = car->owner;
    c->shut_done = true;
    check_completion(c);
}

static void ev_failed(wk_carrier *car, const wk_error *e)
{
    conn *c = car->owner;
    if (c->done) return;
    fail_conn(c, e);
}

static void ev_closed(wk_carrier *car)
{
    conn *c = car->owner;
    c->car_closed = true;
    conn_release(c);
}

static const wk_carrier_events conn_events = {ev_opened, ev_received, ev_ended, ev_written,
                                              ev_shut, ev_failed, ev_closed};

/* A connection over carrier car (owned from now on). Its session is made once the carrier is
 * open (the proof assurance is final then). */
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
    c->mem.b = &sv->budget;
    c->started_ms = now_ms(sv);
    car->ev = &conn_events;
    car->owner = c;
    c->next = sv->conns;
    sv->conns = c;
    sv->active++;
    return c;
}

static void on_accepted(wk_carrier_listener *l, wk_carrier *car)
{
    server *sv = l->owner;
    if (sv->stop || sv->interrupted) {
        wk_carrier_close(car);
        return;
    }
    unsigned max = sv->o->max_sessions ? sv->o->max_sessions : WK_HOST_MAX_SESSIONS_DEFAULT;
    if ((unsigned)sv->active >= max) {
        clear_progress(sv);
        fprintf(sv->log, "refused %s: WK_ERR_HOST_SESSIONS_LIMIT: %d sessions are open (--max-sessions %u)\n",
                car->peer, sv->active, max);
        fflush(sv->log);
        wk_carrier_close(car);
        return;
    }
    wk_error e;
    conn *c = new_conn(sv, car, WK_ILTP_SIDE0, &e);
    if (!c) {
        char line[256];
        fprintf(sv->log, "%s\n", wk_error_format(&e, line, sizeof line));
        return;
    }
    if (sv->o->once && sv->listener) {
        /* one session: stop listening */
        wk_carrier_listener_close(sv->listener);
        sv->listener = NULL;
    }
    wk_carrier_start(car);
}

/* ---- time, signals ------------------------------------------------------------------------- */
static void fmt_bytes(char *b, size_t n, uint64_t v)
{
    if (v >= (1u << 30)) snprintf(b, n, "%.2f GiB", (double)v / (1 << 30));
    else if (v >= (1u << 20)) snprintf(b, n, "%.1f MiB", (double)v / (1 << 20));
    else snprintf(b, n, "%.1f KiB", (double)v / 1024);
}

/* One progress line (no newline): n sessions, bytes and Blobs each way, the rate over age_ms, and
 * eta (may be empty). */
static void progress_line(server *sv, int n, uint64_t dout, uint64_t bout, uint64_t din, uint64_t bin,
                          uint64_t age_ms, const char *eta)
{
    char in[32], out[32];
    fmt_bytes(in, sizeof in, din);
    fmt_bytes(out, sizeof out, dout);
    double rate = age_ms ? (double)(din + dout) / ((double)age_ms / 1000.0) : 0.0;
    fprintf(sv->log, "\r\033[K%d session%s: sent %s in %llu Blobs, received %s in %llu Blobs, %.1f MB/s%s",
            n, n == 1 ? "" : "s", out, (unsigned long long)bout, in, (unsigned long long)bin, rate / 1e6, eta);
}

static bool progress_on(const server *sv)
{
    return sv->o->progress && !sv->o->verbose && isatty(fileno(sv->log));
}

static void draw_progress(server *sv)
{
    uint64_t din = 0, dout = 0, bin = 0, bout = 0, left_out = 0, age = 0;
    bool known = true;
    int n = 0;
    for (conn *c = sv->conns; c; c = c->next) {
        if (c->done || !c->s) continue;
        wk_iltp_session_stats st;
        wk_iltp_session_stats_get(c->s, &st);
        din += st.data_in;
        dout += st.data_out;
        bin += st.blobs_in;
        bout += st.blobs_out;
        left_out += st.pending_out_bytes;
        /* incoming bytes are known only for the Blob being received */
        if (st.pending_in > (c->rx ? 1u : 0u)) known = false;
        uint64_t a = now_ms(sv) - c->started_ms;
        if (a > age) age = a;
        n++;
    }
    if (!n || din + dout == 0) return;
    char eta[48] = "";
    double rate = age ? (double)(din + dout) / ((double)age / 1000.0) : 0.0;
    if (known && rate > 0 && left_out > 0) snprintf(eta, sizeof eta, ", ETA %.0f s", (double)left_out / rate);
    progress_line(sv, n, dout, bout, din, bin, age, eta);
    fflush(sv->log);
    sv->progress_shown = true;
}

/* The carrier's own memory (QUIB: retention until acknowledged, the receive buffer, QUIC state)
 * counts against --max-memory too: charged as it changes, on every tick. Over the budget, the
 * session fails with WK_ERR_HOST_MEMORY_LIMIT. */
static bool charge_carrier(conn *c)
{
    server *sv = c->srv;
    size_t m = wk_carrier_memory(c->car);
    sv->budget.used = sv->budget.used - c->car_mem + m;
    c->car_mem = m;
    if (sv->budget.used > sv->budget.peak) sv->budget.peak = sv->budget.used;
    if (!sv->budget.limit || sv->budget.used <= sv->budget.limit) return true;
    wk_error e;
    wk_error_set(&e, WK_ERR_HOST_MEMORY_LIMIT, WK_NO_OFFSET, "the sessions' memory budget of %llu bytes is spent (carrier %zu bytes)",
                 (unsigned long long)sv->budget.limit, m);
    fail_conn(c, &e);
    return false;
}

static void on_timer(uv_timer_t *t)
{
    server *sv = t->data;
    uint64_t now = now_ms(sv);
    sv->ticks++;
    if (sv->o->progress && !sv->o->verbose && isatty(fileno(sv->log)) && sv->ticks % 2 == 0) draw_progress(sv);
    uint64_t idle = sv->o->idle_timeout_ms ? sv->o->idle_timeout_ms : WK_HOST_IDLE_TIMEOUT_DEFAULT_MS;
    for (conn *c = sv->conns, *next; c; c = next) {
        next = c->next;
        if (c->done || !c->s) continue;
        if (!charge_carrier(c)) continue;
        wk_error e;
        if (wk_iltp_session_tick(c->s, now, &e) != WK_OK) {
            fail_conn(c, &e);
            continue;
        }
        if (c->close_deadline && now > c->close_deadline) {
            if (c->idle_closed) {
                finish(c, 0, "closed: WK_ERR_HOST_IDLE_TIMEOUT", NULL);
            } else {
                wk_error_set(&e, WK_ERR_HOST_CLOSE_TIMEOUT, WK_NO_OFFSET, "the peer did not end within %u ms of our end",
                             WK_HOST_CLOSE_TIMEOUT_MS);
                fail_conn(c, &e);
            }
            continue;
        }
        if (sv->interrupted && sv->interrupt_deadline && now > sv->interrupt_deadline) {
            wk_error_set(&e, WK_ERR_HOST_INTERRUPTED, WK_NO_OFFSET, "no fixed point within %u ms of the interrupt",
                         WK_HOST_INTERRUPT_GRACE_MS);
            fail_conn(c, &e);
            continue;
        }
        if (sv->o->listen && idle != UINT64_MAX && !c->want_close &&
            wk_iltp_session_state_get(c->s) == WK_ILTP_SESSION_FIXED_POINT && now - c->last_rx_ms >= idle) {
            clear_progress(sv);
            fprintf(sv->log, "session %d: WK_ERR_HOST_IDLE_TIMEOUT: silent at fixed point for %llu ms; closing\n", c->id,
                    (unsigned long long)(now - c->last_rx_ms));
            fflush(sv->log);
            c->want_close = true;
            c->idle_closed = true;
            wk_iltp_session_quiesce(c->s);
            c->close_deadline = now + WK_HOST_CLOSE_TIMEOUT_MS;
            check_completion(c);
        }
    }
}

static void interrupt(server *sv, int signum)
{
    clear_progress(sv);
    if (sv->interrupted) {
        fprintf(sv->log, "interrupted again (%s): ending every session now\n", signum == SIGINT ? "SIGINT" : "SIGTERM");
        for (conn *c = sv->conns, *next; c; c = next) {
            next = c->next;
            wk_error e;
            wk_error_set(&e, WK_ERR_HOST_INTERRUPTED, WK_NO_OFFSET, "interrupted twice");
            fail_conn(c, &e);
        }
        sv->stop = true;
        if (sv->active == 0) close_handles(sv);
        return;
    }
    sv->interrupted = true;
    sv->stop = true;
    sv->interrupt_deadline = now_ms(sv) + WK_HOST_INTERRUPT_GRACE_MS;
    fprintf(sv->log, "interrupted (%s): closing %d session%s at fixed point\n", signum == SIGINT ? "SIGINT" : "SIGTERM",
            sv->active, sv->active == 1 ? "" : "s");
    fflush(sv->log);
    if (sv->listener) {
        wk_carrier_listener_close(sv->listener);
        sv->listener = NULL;
    }
    for (conn *c = sv->conns, *next; c; c = next) {
        next = c->next;
        if (c->done) continue;
        c->want_close = true;
        if (!c->s) { /* not open yet: nothing to complete */
            wk_error e;
            wk_error_set(&e, WK_ERR_HOST_INTERRUPTED, WK_NO_OFFSET, "interrupted before the session began");
            fail_conn(c, &e);
            continue;
        }
        if (!c->close_deadline) c->close_deadline = sv->interrupt_deadline + WK_HOST_CLOSE_TIMEOUT_MS;
        wk_iltp_session_quiesce(c->s);
        check_completion(c);
    }
    if (sv->active == 0) close_handles(sv);
}

static void on_signal(uv_signal_t *h, int signum) { interrupt(h->data, signum); }

/* ---- run ----------------------------------------------------------------------------------- */
int wk_host_sync_run(const wk_host_sync_opts *o, wk_error *err)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    sv.o = o;
    sv.log = o->log ? o->log : stderr;
    sv.out = o->out ? o->out : stdout;
    /* a peer that resets mid-write must fail only its session (EPIPE), not kill the process */
    signal(SIGPIPE, SIG_IGN);
    /* store work (fsync) waits on the disk: more workers than libuv's default 4 */
    setenv("UV_THREADPOOL_SIZE", "16", 0);
    if (wk_host_loop_init(&sv.loop, sv.log, err) != WK_OK) return 1;
    sv.budget.limit = o->max_memory ? o->max_memory : WK_HOST_MAX_MEMORY_DEFAULT;
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
    sv.index = wk_store_index_load(sv.store, err);
    if (!sv.index) {
        wk_store_close(sv.store);
        wk_host_loop_close(&sv.loop);
        return 1;
    }
    uv_timer_init(sv.loop.uv, &sv.timer);
    sv.timer.data = &sv;
    uv_timer_start(&sv.timer, on_timer, 100, 100);
    uv_signal_init(sv.loop.uv, &sv.sigint);
    sv.sigint.data = &sv;
    uv_signal_start(&sv.sigint, on_signal, SIGINT);
    uv_signal_init(sv.loop.uv, &sv.sigterm);
    sv.sigterm.data = &sv;
    uv_signal_start(&sv.sigterm, on_signal, SIGTERM);
    if (o->listen || o->watch) {
        char *blobs = malloc(strlen(o->store_dir) + sizeof "/blobs");
        if (blobs) {
            strcpy(blobs, o->store_dir);
            strcat(blobs, "/blobs");
            uv_fs_event_init(sv.loop.uv, &sv.watch);
            sv.watch.data = &sv;
            int rc = uv_fs_event_start(&sv.watch, on_watch, blobs, 0);
            if (rc == 0) sv.watching = true;
            else {
                fprintf(sv.log, "cannot watch %s (%s): Blobs other processes store are not noticed\n", blobs, uv_strerror(rc));
                uv_close((uv_handle_t *)&sv.watch, NULL);
            }
            free(blobs);
        }
    }
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
            wk_out to = {(uint8_t *)text, sizeof text - 1, 0};
            wk_error te;
            wk_iltp_address_encode(&sv.listener->address, &to, &te); /* a parsed address: fits */
            text[to.pos] = 0;
            fprintf(sv.out, "listening on %s\n", text);
            fflush(sv.out);
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
    sv.stop = true;
    close_handles(&sv);
    for (conn *c = sv.conns; c; c = c->next) {
        if (!c->done) {
            c->done = true;
            if (c->rx) wk_rx_abort(c->rx);
            c->rx = NULL;
            wk_tx_close(c->tx);
            c->tx = NULL;
            wk_carrier_close(c->car);
        }
    }
    wk_host_loop_run(&sv.loop);
    wk_host_loop_close(&sv.loop);
    wk_store_index_free(sv.index);
    wk_store_close(sv.store);
    return rc;
}
