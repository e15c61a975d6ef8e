/* wirekit host: the ws: and wss: carriers (Lace-060 `ws:host[:port][/path]`, default port 80;
 * `wss:...`, default port 443; an absent path means /interlace).
 *
 * A WebSocket carrier runs the HTTP/1.1 upgrade and RFC 6455 frames (ws_wire.c, over libwslay's
 * frame layer) over an inner carrier it owns: a TCP connection from wk_carrier_tcp for ws:, and
 * for wss: the TLS carrier of tls.c (GnuTLS) over that TCP connection.
 *
 *   - Upgrade. The client sends GET <path> with a fresh Sec-WebSocket-Key and version 13 and
 *     accepts only 101 with the matching Sec-WebSocket-Accept. The server answers 101, or 404 for
 *     another path (WK_ERR_HOST_WS_PATH), 426/400 for another version or anything else invalid
 *     (WK_ERR_HOST_WS_UPGRADE), then fails that connection only. Each side waits at most the
 *     transport timeout for the other's half (WK_ERR_HOST_WS_TIMEOUT).
 *   - Binary messages only. Each owner write goes out as binary messages of at most
 *     WK_WS_SEND_MESSAGE bytes (client frames masked with a fresh key, server frames unmasked).
 *     Received binary payload reaches the owner as one byte stream (message boundaries are
 *     transport fragmentation only); text is WK_ERR_HOST_WS_TEXT (PeerProtocol); a message over
 *     --ws-max-message fails at its frame header (WK_ERR_HOST_WS_MESSAGE_TOO_BIG). A ping is
 *     answered with a pong (between our messages, never inside one); a pong is ignored.
 *   - Flow control. When the owner consumes part of a slice, the carrier stops: it keeps that
 *     slice (inside the frame reader's 64 KiB slice buffer) and leaves every unread byte with the
 *     inner carrier, which stops reading the socket. So a paused connection holds at most one
 *     inner read (64 KiB; TLS: its 64 KiB plaintext slice and ciphertext queues), the reader's 64 KiB
 *     slice and libwslay's 4 KiB; no buffer grows, so none can overflow.
 *   - Close. half_close sends the close frame (1000) after the owner's last byte; shut() follows
 *     when it is written; the peer's close frame then has the transport timeout to arrive
 *     (WK_ERR_HOST_WS_TIMEOUT). The peer's close frame with 1000 (or no code) is ended(): the
 *     owner may still write (the listener's end mark follows the connector's) until its own
 *     half_close; another code is a failure (WK_ERR_HOST_WS_CLOSED with the code and reason). The
 *     transport ending without a close frame is WK_ERR_HOST_WS_CLOSED too. A frame-level failure
 *     sends the matching close code (1002, 1003, 1009) when the transport is free, then fails.
 *   - Proof assurance (Lace-060): resolved when the upgrade completes. wss: ConfidentialChannel
 *     once TLS completed (a client: after gnutls verified the chain and the host name; a server:
 *     with its certificate presented); ws: Disabled; the configured override applies to both.
 */
#include "tls.h"
#include "ws_wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WK_WS_SEND_MESSAGE 65536   /* largest message we send */
#define WS_LINGER_MS 1000          /* bound on sending the close frame after a failure */
#define OBUF_CAP (WK_WS_HEADER_MAX + WK_WS_SEND_MESSAGE + 2 * (WK_WS_HEADER_MAX + WK_WS_CONTROL_MAX))

typedef enum { ST_NEW, ST_UPGRADE, ST_OPEN } ws_state;

typedef struct ws_conn {
    wk_carrier c;                /* first */
    wk_carrier *inner;           /* tcp, or tls over tcp */
    bool server, tls;
    uint64_t timeout_ms;
    wk_host_assurance_override override;
    ws_state st;
    wk_ws_http *http;            /* during the upgrade */
    char key[WK_WS_KEY_LEN + 1]; /* client: our Sec-WebSocket-Key */
    wk_ws_reader *rd;
    wk_ws_writer *wr;
    uv_idle_t idle;              /* redelivery after read(c, true) */
    uv_timer_t timer;            /* upgrade and close deadlines */
    int refs;
    bool started, opened, want_read, dead, closing;
    bool inner_open, inner_paused, inner_writing, inner_closed, inner_done;
    bool peer_closed;            /* the peer's close frame arrived */
    bool close_queued, close_sent, close_writing, shutting;
    bool refused;                /* server: an error answer is being written; fail after it */
    bool lingering, finishing;   /* closed by the owner: the last frames go out, then release */
    wk_error refusal;
    /* the data slice the owner has not consumed (inside the reader) */
    const uint8_t *held;
    size_t held_len;
    /* output: one batch in flight at the inner carrier */
    uint8_t *obuf;
    /* the owner's write being framed */
    const uint8_t *wp;
    size_t wn, woff;
    bool writing;
    /* a pong to send, and an error close code to send (0: none) */
    bool pong_pending;
    uint8_t pong[WK_WS_CONTROL_MAX];
    size_t pong_len;
    uint16_t close_code;
} ws_conn;

static ws_conn *of(wk_carrier *c) { return (ws_conn *)c; }
static void pump_out(ws_conn *w);
static void feed(ws_conn *w, wk_in *in);
static void finish_close(ws_conn *w);
static void linger_step(ws_conn *w);

static void fail(ws_conn *w, const wk_error *e)
{
    if (w->dead || w->closing) return;
    w->dead = true;
    uv_timer_stop(&w->timer);
    w->c.ev->failed(&w->c, e);
}

static void on_timeout(uv_timer_t *h)
{
    ws_conn *w = h->data;
    if (w->dead || w->closing) return;
    wk_error e;
    if (w->st != ST_OPEN)
        wk_error_set(&e, WK_ERR_HOST_WS_TIMEOUT, WK_NO_OFFSET, "no WebSocket upgrade %s within %llu ms",
                     w->server ? "request" : "response", (unsigned long long)w->timeout_ms);
    else
        wk_error_set(&e, WK_ERR_HOST_WS_TIMEOUT, WK_NO_OFFSET, "no close frame from the peer within %llu ms",
                     (unsigned long long)w->timeout_ms);
    fail(w, &e);
}

/* A failure of the peer's frames: send the close code for it when the transport is free. */
static void wire_fail(ws_conn *w, const wk_error *e)
{
    if (!w->close_sent && !w->close_queued) {
        w->close_code = wk_ws_close_code_for(e->code);
        w->close_queued = true;
        pump_out(w);
    }
    fail(w, e);
}

/* ---- output ------------------------------------------------------------------------------ */
static void pump_out(ws_conn *w)
{
    if (w->inner_writing || !w->inner_open || w->closing || w->inner_done) return;
    if (w->dead && !w->close_queued) return;
    wk_out out = {w->obuf, OBUF_CAP, 0};
    wk_error e;
    if (w->st == ST_OPEN && w->pong_pending && !w->close_sent) {
        if (wk_ws_writer_frame(w->wr, WK_WS_OP_PONG, w->pong, w->pong_len, &out, &e) != WK_DONE) goto bad;
        w->pong_pending = false;
    }
    if (w->st == ST_OPEN && w->writing && w->woff < w->wn && !w->dead && !w->close_sent) {
        size_t n = w->wn - w->woff;
        if (n > WK_WS_SEND_MESSAGE) n = WK_WS_SEND_MESSAGE;
        if (wk_ws_writer_frame(w->wr, WK_WS_OP_BINARY, w->wp + w->woff, n, &out, &e) != WK_DONE) goto bad;
        w->woff += n;
    } else if (w->close_queued && !w->close_sent && (!w->writing || w->dead)) {
        if (wk_ws_writer_close(w->wr, w->close_code ? w->close_code : WK_WS_CLOSE_NORMAL, &out, &e) != WK_DONE) goto bad;
        w->close_sent = true;
        w->close_writing = true;
    }
    if (out.pos == 0) return;
    if (wk_carrier_write(w->inner, w->obuf, out.pos, &e) != WK_OK) goto bad;
    w->inner_writing = true;
    return;
bad:
    fail(w, &e);
}

/* Sends text bytes (an upgrade request or answer) as one inner write. */
static bool send_text(ws_conn *w, size_t n)
{
    wk_error e;
    if (wk_carrier_write(w->inner, w->obuf, n, &e) != WK_OK) {
        fail(w, &e);
        return false;
    }
    w->inner_writing = true;
    return true;
}

/* ---- the upgrade ------------------------------------------------------------------------- */
static void upgraded(ws_conn *w)
{
    free(w->http);
    w->http = NULL;
    w->st = ST_OPEN;
    uv_timer_stop(&w->timer);
    bool verified = w->tls && wk_tls_carrier_verified(w->inner);
    w->c.assurance = wk_host_assurance_resolve(w->tls ? WK_ILTP_SCHEME_WSS : WK_ILTP_SCHEME_WS, verified, false,
                                               w->override);
    snprintf(w->c.peer, sizeof w->c.peer, "%s", w->inner->peer);
    w->opened = true;
    w->c.ev->opened(&w->c);
}

/* Header bytes from in. Returns false when the connection failed or closed. */
static bool upgrade_input(ws_conn *w, wk_in *in)
{
    wk_error e;
    wk_result r = wk_ws_http_parse(w->http, in, &e);
    if (r == WK_NEED_INPUT) return true;
    if (r == WK_ERROR) {
        if (w->server) { /* answer 400 before failing */
            static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            if (!w->inner_writing) {
                memcpy(w->obuf, bad, sizeof bad - 1);
                send_text(w, sizeof bad - 1);
            }
        }
        fail(w, &e);
        return false;
    }
    if (w->server) {
        wk_out out = {w->obuf, OBUF_CAP, 0};
        wk_code c = wk_ws_upgrade_answer(w->http, w->c.address.path, &out, &e);
        if (w->inner_writing) { /* cannot happen: nothing is written before the request */
            fail(w, &e);
            return false;
        }
        if (out.pos && !send_text(w, out.pos)) return false;
        if (c != WK_OK) {
            /* the refusal fails the connection once the answer is written */
            w->refused = true;
            w->refusal = e;
            if (!out.pos) fail(w, &e);
            return false;
        }
    } else if (wk_ws_upgrade_check_response(w->http, w->key, &e) != WK_OK) {
        fail(w, &e);
        return false;
    }
    upgraded(w);
    return !w->dead && !w->closing;
}

/* ---- input ------------------------------------------------------------------------------- */
/* Hands the held slice to the owner. True when it was consumed entirely. */
static bool deliver_held(ws_conn *w)
{
    while (w->held_len) {
        size_t used = w->c.ev->received(&w->c, w->held, w->held_len);
        if (w->dead || w->closing) return false;
        if (used > w->held_len) used = w->held_len;
        w->held += used;
        w->held_len -= used;
        if (w->held_len) {
            w->want_read = false;
            return false;
        }
    }
    w->held = NULL;
    return true;
}

static void peer_close(ws_conn *w)
{
    const char *reason = NULL;
    uint16_t code = wk_ws_reader_close_code(w->rd, &reason);
    w->peer_closed = true;
    if (w->close_sent) uv_timer_stop(&w->timer);
    if (code == WK_WS_CLOSE_NORMAL || code == WK_WS_CLOSE_NO_STATUS) {
        w->c.ev->ended(&w->c);
        return;
    }
    wk_error e;
    wk_error_set(&e, WK_ERR_HOST_WS_CLOSED, WK_NO_OFFSET, "the peer closed with code %u%s%.60s", code,
                 reason && *reason ? ": " : "", reason ? reason : "");
    fail(w, &e);
}

/* Runs the frame reader over in while the owner reads. A slice the owner left part of goes
 * first: the reader's next event reuses the buffer it lives in. (The owner may ask to read again
 * and the inner carrier deliver more bytes before on_idle has handed the rest over: feeding the
 * reader then overwrote the held bytes, and the owner got a corrupted stream.) */
static void feed(ws_conn *w, wk_in *in)
{
    if (w->held_len && w->want_read && !w->dead && !w->closing && !deliver_held(w)) return;
    while (w->want_read && !w->dead && !w->closing && !w->peer_closed) {
        wk_error e;
        wk_result r = wk_ws_reader_read(w->rd, in, &e);
        if (r == WK_NEED_INPUT || r == WK_DONE) return;
        if (r == WK_ERROR) {
            wire_fail(w, &e);
            return;
        }
        const uint8_t *d;
        size_t n;
        switch (wk_ws_reader_event(w->rd, &d, &n)) {
        case WK_WS_EVENT_DATA:
            w->held = d;
            w->held_len = n;
            if (!deliver_held(w)) return;
            break;
        case WK_WS_EVENT_PING:
            memcpy(w->pong, d, n);
            w->pong_len = n;
            w->pong_pending = true;
            pump_out(w);
            break;
        case WK_WS_EVENT_CLOSE:
            peer_close(w);
            return;
        default:
            return;
        }
    }
}

static void on_idle(uv_idle_t *h)
{
    ws_conn *w = h->data;
    uv_idle_stop(&w->idle);
    if (w->dead || w->closing || !w->want_read || w->st != ST_OPEN) return;
    if (w->held_len && !deliver_held(w)) return;
    wk_in none = {NULL, 0, 0};
    feed(w, &none); /* what the reader already holds */
    if (w->want_read && !w->dead && !w->closing && w->inner_paused && !w->peer_closed) {
        w->inner_paused = false;
        wk_carrier_read(w->inner, true);
    }
}

/* ---- events from the inner carrier ------------------------------------------------------- */
static void in_opened(wk_carrier *in)
{
    ws_conn *w = in->owner;
    if (w->dead || w->closing) return;
    w->inner_open = true;
    w->st = ST_UPGRADE;
    uv_timer_start(&w->timer, on_timeout, w->timeout_ms, 0);
    wk_carrier_read(w->inner, true);
    if (!w->server) {
        char host[300];
        const wk_iltp_address *a = &w->c.address;
        unsigned dflt = w->tls ? 443 : 80;
        char port[8] = "";
        if (a->port != dflt) snprintf(port, sizeof port, ":%u", (unsigned)a->port);
        snprintf(host, sizeof host, a->host_kind == WK_ILTP_HOST_IPV6 ? "[%s]%s" : "%s%s", a->host, port);
        wk_out out = {w->obuf, OBUF_CAP, 0};
        wk_error e;
        if (wk_ws_upgrade_request(host, a->path, w->key, &out, &e) != WK_DONE) {
            fail(w, &e);
            return;
        }
        send_text(w, out.pos);
    }
}

static size_t in_received(wk_carrier *in, const uint8_t *p, size_t n)
{
    ws_conn *w = in->owner;
    if (w->dead || w->closing || w->refused) return n;
    wk_in v = {p, n, 0};
    if (w->st == ST_UPGRADE) {
        if (!upgrade_input(w, &v)) return n;
        if (w->st != ST_OPEN) return n; /* all consumed, header incomplete */
    }
    if (!w->want_read || w->peer_closed) {
        if (v.pos < n) w->inner_paused = true;
        return v.pos;
    }
    feed(w, &v);
    if (w->dead || w->closing) return n;
    if (v.pos < n) w->inner_paused = true;
    return v.pos;
}

static void in_ended(wk_carrier *in)
{
    ws_conn *w = in->owner;
    w->inner_done = true;
    if (w->lingering) {
        finish_close(w);
        return;
    }
    if (w->dead || w->closing) return;
    wk_error e;
    if (w->st != ST_OPEN) {
        wk_error_set(&e, WK_ERR_HOST_WS_UPGRADE, WK_NO_OFFSET, "the connection ended during the WebSocket upgrade");
        fail(w, &e);
        return;
    }
    if (w->peer_closed) return; /* the transport's end after the close frame */
    /* WK_DONE: the reader saw the close frame (the end after it is clean); e is set only on
     * WK_ERROR */
    if (wk_ws_reader_finish(w->rd, NULL, &e) == WK_DONE) return;
    fail(w, &e);
}

static void in_written(wk_carrier *in)
{
    ws_conn *w = in->owner;
    w->inner_writing = false;
    if (w->lingering) {
        if (w->close_sent) finish_close(w);
        else linger_step(w);
        return;
    }
    if (w->closing) return;
    if (w->refused && !w->dead) {
        fail(w, &w->refusal);
        return;
    }
    if (w->dead) return;
    if (w->writing && w->woff == w->wn) {
        w->writing = false;
        w->c.ev->written(&w->c);
        if (w->dead || w->closing) return;
    }
    if (w->close_writing) {
        w->close_writing = false;
        if (w->shutting) {
            if (!w->peer_closed) uv_timer_start(&w->timer, on_timeout, w->timeout_ms, 0);
            w->c.ev->shut(&w->c);
            if (w->dead || w->closing) return;
        }
    }
    pump_out(w);
}

static void in_shut(wk_carrier *in) { (void)in; /* we never half-close the inner carrier */ }

static void in_failed(wk_carrier *in, const wk_error *e)
{
    ws_conn *w = in->owner;
    w->inner_done = true;
    if (w->lingering) {
        finish_close(w);
        return;
    }
    /* after both close frames the transport's end is no failure: nothing is left to exchange */
    if (w->peer_closed && w->close_sent && !w->inner_writing && !w->writing) return;
    fail(w, e);
}

static void release(ws_conn *w)
{
    if (--w->refs > 0) return;
    wk_ws_reader_destroy(w->rd);
    wk_ws_writer_destroy(w->wr);
    free(w->http);
    free(w->obuf);
    if (w->c.ev) w->c.ev->closed(&w->c);
    free(w);
}

static void in_closed(wk_carrier *in)
{
    ws_conn *w = in->owner;
    w->inner_closed = true;
    if (w->closing) release(w);
}

static const wk_carrier_events inner_events = {in_opened, in_received, in_ended, in_written,
                                               in_shut, in_failed, in_closed};

/* ---- calls from the owner ---------------------------------------------------------------- */
static void c_start(wk_carrier *c)
{
    ws_conn *w = of(c);
    if (w->started || w->closing) return;
    w->started = true;
    wk_carrier_start(w->inner);
}

static void c_read(wk_carrier *c, bool on)
{
    ws_conn *w = of(c);
    if (w->dead || w->closing) return;
    w->want_read = on;
    if (on && w->st == ST_OPEN) uv_idle_start(&w->idle, on_idle);
}

static wk_code c_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    ws_conn *w = of(c);
    if (w->dead || w->closing || !w->opened || w->writing || w->shutting || w->close_sent || n == 0)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "WebSocket carrier write not possible now");
    w->wp = p;
    w->wn = n;
    w->woff = 0;
    w->writing = true;
    pump_out(w);
    return WK_OK;
}

static wk_code c_half_close(wk_carrier *c, wk_error *err)
{
    ws_conn *w = of(c);
    if (w->dead || w->closing || !w->opened || w->writing || w->shutting || w->close_sent)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "WebSocket carrier half-close not possible now");
    w->shutting = true;
    w->close_queued = true;
    w->close_code = WK_WS_CLOSE_NORMAL;
    pump_out(w);
    return WK_OK;
}

static void on_handle_closed(uv_handle_t *h) { release(h->data); }

/* Releases everything: the handles, the inner carrier, then closed(). */
static void finish_close(ws_conn *w)
{
    if (w->finishing) return;
    w->finishing = true;
    uv_idle_stop(&w->idle);
    uv_timer_stop(&w->timer);
    w->refs = 1 + 2 + (w->inner_closed ? 0 : 1);
    uv_close((uv_handle_t *)&w->idle, on_handle_closed);
    uv_close((uv_handle_t *)&w->timer, on_handle_closed);
    if (!w->inner_closed) wk_carrier_close(w->inner);
    release(w);
}

static void on_linger(uv_timer_t *h) { finish_close(h->data); }

/* Closing after the peer's fault: the batch in flight ends, then the close frame with the
 * failure's code (or the HTTP refusal already written) goes out, then the transport closes. */
static void linger_step(ws_conn *w)
{
    if (w->close_queued && !w->close_sent && w->st == ST_OPEN) {
        wk_out out = {w->obuf, OBUF_CAP, 0};
        wk_error e;
        if (wk_ws_writer_close(w->wr, w->close_code ? w->close_code : WK_WS_CLOSE_NORMAL, &out, &e) == WK_DONE &&
            wk_carrier_write(w->inner, w->obuf, out.pos, &e) == WK_OK) {
            w->close_sent = true;
            w->inner_writing = true;
            return;
        }
    }
    finish_close(w);
}

static void c_close(wk_carrier *c)
{
    ws_conn *w = of(c);
    if (w->closing) return;
    w->closing = true;
    uv_idle_stop(&w->idle);
    bool usable = w->inner_open && !w->inner_done && !w->inner_closed;
    if (usable && (w->refused || (w->close_queued && (!w->close_sent || w->inner_writing)))) {
        w->lingering = true; /* bounded: WS_LINGER_MS */
        uv_timer_stop(&w->timer);
        uv_timer_start(&w->timer, on_linger, WS_LINGER_MS, 0);
        if (!w->inner_writing) linger_step(w);
        return;
    }
    finish_close(w);
}

static size_t c_memory(const wk_carrier *c)
{
    const ws_conn *w = (const ws_conn *)c;
    /* the reader (its slice buffer and libwslay's frame context of about 4.2 KiB) and writer */
    return sizeof *w + OBUF_CAP + WK_WS_SLICE + 2 * 4400 + (w->http ? sizeof *w->http : 0) +
           (w->inner_closed ? 0 : wk_carrier_memory(w->inner));
}

static const wk_carrier_ops ops_ws = {.name = "ws", .start = c_start, .read = c_read, .write = c_write,
                                      .half_close = c_half_close, .close = c_close, .memory = c_memory,
                                      .authorize = NULL};
static const wk_carrier_ops ops_wss = {.name = "wss", .start = c_start, .read = c_read, .write = c_write,
                                       .half_close = c_half_close, .close = c_close, .memory = c_memory,
                                       .authorize = NULL};

/* A WebSocket carrier over inner (owned from now on). NULL with *err (inner closed). */
static ws_conn *ws_new(wk_host_loop *loop, wk_carrier *inner, bool server, bool tls, const wk_iltp_address *addr,
                       const wk_carrier_config *cfg, wk_error *err)
{
    ws_conn *w = calloc(1, sizeof *w);
    if (!w) goto nomem;
    w->obuf = malloc(OBUF_CAP);
    w->http = malloc(sizeof *w->http);
    wk_ws_reader_params rp = {.server = server, .max_message = cfg->ws_max_message, .allocator = NULL};
    w->rd = wk_ws_reader_create(&rp, err);
    w->wr = wk_ws_writer_create(!server, NULL, err);
    if (!w->obuf || !w->http || !w->rd || !w->wr) {
        wk_ws_reader_destroy(w->rd);
        wk_ws_writer_destroy(w->wr);
        free(w->obuf);
        free(w->http);
        free(w);
        goto nomem;
    }
    wk_ws_http_init(w->http, !server);
    w->c.ops = tls ? &ops_wss : &ops_ws;
    w->c.loop = loop;
    w->c.address = *addr;
    snprintf(w->c.peer, sizeof w->c.peer, "%s", inner->peer);
    w->c.assurance = WK_ILTP_ASSURANCE_DISABLED;
    w->inner = inner;
    w->server = server;
    w->tls = tls;
    w->timeout_ms = cfg->transport_timeout_ms ? cfg->transport_timeout_ms : WK_CARRIER_TRANSPORT_TIMEOUT_MS;
    w->override = cfg->assurance_override;
    uv_idle_init(loop->uv, &w->idle);
    w->idle.data = w;
    uv_timer_init(loop->uv, &w->timer);
    w->timer.data = w;
    inner->ev = &inner_events;
    inner->owner = w;
    return w;
nomem:
    wk_carrier_close(inner);
    wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "WebSocket carrier");
    return NULL;
}

wk_carrier *wk_carrier_ws_over(wk_host_loop *loop, wk_carrier *inner, bool server, const wk_iltp_address *addr,
                               const wk_carrier_config *cfg, wk_error *err)
{
    ws_conn *w = ws_new(loop, inner, server, false, addr, cfg, err);
    return w ? &w->c : NULL;
}

/* ---- listeners --------------------------------------------------------------------------- */
typedef struct ws_listener {
    wk_carrier_listener l;       /* first */
    wk_carrier_listener *inner;  /* the TCP listener */
    bool tls;
    wk_tls_creds *creds;
    wk_carrier_config cfg;
    bool closing;
} ws_listener;

static void l_close(wk_carrier_listener *l)
{
    ws_listener *wl = (ws_listener *)l;
    if (wl->closing) return;
    wl->closing = true;
    if (wl->inner) wk_carrier_listener_close(wl->inner);
    wk_tls_creds_unref(wl->creds); /* each accepted TLS carrier holds its own reference */
    free(wl);
}

static const wk_carrier_listener_ops listener_ops = {l_close};

static void on_inner_accepted(wk_carrier_listener *il, wk_carrier *tcp)
{
    ws_listener *wl = il->owner;
    wk_error e;
    wk_carrier *inner = tcp;
    if (wl->tls) {
        inner = wk_tls_carrier_new(wl->l.loop, tcp, wl->creds, true, NULL, wl->cfg.transport_timeout_ms, &e);
        if (!inner) {
            fprintf(wl->l.loop->log, "wss: connection refused: %s\n", e.msg);
            return;
        }
    }
    ws_conn *w = ws_new(wl->l.loop, inner, true, wl->tls, &wl->l.address, &wl->cfg, &e);
    if (!w) {
        fprintf(wl->l.loop->log, "ws: connection refused: %s\n", e.msg);
        return;
    }
    wl->l.accepted(&wl->l, &w->c);
}

static wk_code listen_common(wk_host_loop *loop, const wk_carrier_config *cfg, bool tls, wk_carrier_listener **out,
                             wk_error *err)
{
    ws_listener *wl = calloc(1, sizeof *wl);
    if (!wl) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "listener");
    wl->l.ops = &listener_ops;
    wl->l.loop = loop;
    wl->l.address = cfg->addr;
    wl->tls = tls;
    wl->cfg = *cfg;
    if (tls && !(wl->creds = wk_tls_creds_server(cfg->cert_file, cfg->key_file, err))) {
        free(wl);
        return err ? err->code : WK_ERR_HOST_TLS_CREDENTIALS;
    }
    wk_carrier_config tcfg = *cfg;
    tcfg.addr.scheme = WK_ILTP_SCHEME_TCP;
    tcfg.addr.path[0] = 0;
    tcfg.addr.path_given = false;
    wk_code c = wk_carrier_tcp.listen(loop, &tcfg, &wl->inner, err);
    if (c != WK_OK) {
        wl->inner = NULL;
        l_close(&wl->l);
        return c;
    }
    wl->inner->owner = wl;
    wl->inner->accepted = on_inner_accepted;
    wl->l.address.port = wl->inner->address.port; /* the bound port */
    wl->l.address.port_given = true;
    *out = &wl->l;
    return WK_OK;
}

static wk_code connect_common(wk_host_loop *loop, const wk_carrier_config *cfg, bool tls, wk_carrier **out,
                              wk_error *err)
{
    wk_tls_creds *creds = NULL;
    if (tls && !(creds = wk_tls_creds_client(cfg->ca_file, err))) return err ? err->code : WK_ERR_HOST_TLS_CREDENTIALS;
    wk_carrier_config tcfg = *cfg;
    tcfg.addr.scheme = WK_ILTP_SCHEME_TCP;
    tcfg.addr.path[0] = 0;
    tcfg.addr.path_given = false;
    wk_carrier *inner = NULL;
    wk_code c = wk_carrier_tcp.connect(loop, &tcfg, &inner, err);
    if (c != WK_OK) {
        wk_tls_creds_unref(creds);
        return c;
    }
    if (tls) {
        inner = wk_tls_carrier_new(loop, inner, creds, false, cfg->addr.host, cfg->transport_timeout_ms, err);
        wk_tls_creds_unref(creds);
        if (!inner) return err ? err->code : WK_ERR_HOST_TLS_HANDSHAKE;
    }
    ws_conn *w = ws_new(loop, inner, false, tls, &cfg->addr, cfg, err);
    if (!w) return err ? err->code : WK_ERR_NOMEM;
    *out = &w->c;
    return WK_OK;
}

static wk_code ws_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out, wk_error *err)
{
    return listen_common(loop, cfg, false, out, err);
}
static wk_code wss_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out, wk_error *err)
{
    return listen_common(loop, cfg, true, out, err);
}
static wk_code ws_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    return connect_common(loop, cfg, false, out, err);
}
static wk_code wss_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    return connect_common(loop, cfg, true, out, err);
}

const wk_carrier_kind wk_carrier_ws = {WK_ILTP_SCHEME_WS, ws_listen, ws_connect};
const wk_carrier_kind wk_carrier_wss = {WK_ILTP_SCHEME_WSS, wss_listen, wss_connect};
