/* wirekit host: TLS over GnuTLS (tls.h): credentials, sessions, and the TLS carrier over another
 * carrier. */
#include "tls.h"
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAIN_RECORD 16384         /* one record of plaintext */
#define PLAIN_CAP (4 * PLAIN_RECORD) /* records are decrypted into one slice of up to 64 KiB */
#define RECORD_ROOM (16384 + 512)  /* queue room for one record with its overhead */
#define PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* =============================================================================================
 * Credentials and sessions
 * =========================================================================================== */
struct wk_tls_creds {
    gnutls_certificate_credentials_t x;
    bool server;
    int refs;
};

static wk_tls_creds *creds_new(bool server, wk_error *err)
{
    wk_tls_creds *c = calloc(1, sizeof *c);
    if (!c || gnutls_certificate_allocate_credentials(&c->x) < 0) {
        free(c);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "TLS credentials");
        return NULL;
    }
    c->server = server;
    c->refs = 1;
    return c;
}

wk_tls_creds *wk_tls_creds_server(const char *cert_file, const char *key_file, wk_error *err)
{
    if (!cert_file || !key_file) {
        wk_error_set(err, WK_ERR_HOST_TLS_CREDENTIALS, WK_NO_OFFSET, "a TLS listener needs --cert FILE and --key FILE");
        return NULL;
    }
    wk_tls_creds *c = creds_new(true, err);
    if (!c) return NULL;
    int rc = gnutls_certificate_set_x509_key_file(c->x, cert_file, key_file, GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        wk_error_set(err, WK_ERR_HOST_TLS_CREDENTIALS, WK_NO_OFFSET, "cannot load %.40s / %.40s: %s", cert_file,
                     key_file, gnutls_strerror(rc));
        wk_tls_creds_unref(c);
        return NULL;
    }
    return c;
}

wk_tls_creds *wk_tls_creds_client(const char *ca_file, wk_error *err)
{
    wk_tls_creds *c = creds_new(false, err);
    if (!c) return NULL;
    int rc = ca_file ? gnutls_certificate_set_x509_trust_file(c->x, ca_file, GNUTLS_X509_FMT_PEM)
                     : gnutls_certificate_set_x509_system_trust(c->x);
    if (rc <= 0) {
        if (ca_file)
            wk_error_set(err, WK_ERR_HOST_TLS_CREDENTIALS, WK_NO_OFFSET, "no CA certificate loaded from %.60s: %s",
                         ca_file, rc < 0 ? gnutls_strerror(rc) : "the file holds none");
        else
            wk_error_set(err, WK_ERR_HOST_TLS_CREDENTIALS, WK_NO_OFFSET, "no system trust store: %s",
                         rc < 0 ? gnutls_strerror(rc) : "it holds no certificate (give --ca FILE)");
        wk_tls_creds_unref(c);
        return NULL;
    }
    return c;
}

wk_tls_creds *wk_tls_creds_ref(wk_tls_creds *c)
{
    if (c) c->refs++;
    return c;
}

void wk_tls_creds_unref(wk_tls_creds *c)
{
    if (!c || --c->refs > 0) return;
    gnutls_certificate_free_credentials(c->x);
    free(c);
}

static bool is_ip_literal(const char *h)
{
    unsigned char b[16];
    return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

wk_code wk_tls_session_new(gnutls_session_t *out, wk_tls_creds *creds, bool server, const char *hostname,
                           unsigned flags, wk_error *err)
{
    gnutls_session_t s;
    int rc = gnutls_init(&s, (server ? GNUTLS_SERVER : GNUTLS_CLIENT) | flags);
    if (rc < 0) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "gnutls_init: %s", gnutls_strerror(rc));
    const char *where = NULL;
    rc = gnutls_priority_set_direct(s, PRIORITY, &where);
    if (rc >= 0) rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, creds->x);
    if (rc >= 0 && !server) {
        if (!hostname || !*hostname) rc = GNUTLS_E_INVALID_REQUEST;
        else {
            if (!is_ip_literal(hostname)) rc = gnutls_server_name_set(s, GNUTLS_NAME_DNS, hostname, strlen(hostname));
            if (rc >= 0) gnutls_session_set_verify_cert(s, hostname, 0);
        }
    }
    if (rc < 0) {
        gnutls_deinit(s);
        return wk_error_set(err, WK_ERR_HOST_TLS_HANDSHAKE, WK_NO_OFFSET, "TLS session setup: %s", gnutls_strerror(rc));
    }
    *out = s;
    return WK_OK;
}

/* =============================================================================================
 * The TLS carrier
 * =========================================================================================== */
typedef struct tls_conn {
    wk_carrier c;                /* first */
    wk_carrier *inner;
    wk_tls_creds *creds;
    gnutls_session_t s;
    bool server;
    uint64_t timeout_ms;
    uv_idle_t idle;              /* deferred redelivery after read(c, true) */
    uv_timer_t timer;            /* the handshake deadline */
    int refs;                    /* handles being closed + the inner carrier + the closer */
    bool started, handshaking, opened, verified, want_read, dead, closing, ended;
    bool inner_open, inner_eof, inner_paused, inner_writing, inner_shutting, inner_closed;
    bool shutting, bye_again, send_again;
    /* ciphertext the inner carrier is delivering now (during its received() call) */
    const uint8_t *in_p;
    size_t in_n, in_pos;
    /* plaintext decrypted and not yet consumed by the owner */
    uint8_t pt[PLAIN_CAP];
    size_t pt_len, pt_pos;
    bool pend_end;               /* the record layer ended or failed after the plaintext in pt */
    ssize_t pend_rc;
    /* ciphertext: queued by the push function, and in flight at the inner carrier */
    uint8_t *cq, *cf;
    size_t cq_len, cf_len;
    /* the owner's write being encrypted */
    const uint8_t *wp;
    size_t wn, woff;
    bool writing;
    char cipher[64];
} tls_conn;

static tls_conn *of(wk_carrier *c) { return (tls_conn *)c; }
static void deliver(tls_conn *t);
static void hs_drive(tls_conn *t);
static void on_idle(uv_idle_t *h);

static void fail(tls_conn *t, const wk_error *e)
{
    if (t->dead || t->closing) return;
    t->dead = true;
    uv_timer_stop(&t->timer);
    t->c.ev->failed(&t->c, e);
}

static void fail_code(tls_conn *t, wk_code code, const char *what, int rc)
{
    wk_error e;
    wk_error_set(&e, code, WK_NO_OFFSET, "%s: %s", what, gnutls_strerror(rc));
    fail(t, &e);
}

/* ---- GnuTLS transport functions ---------------------------------------------------------- */
static ssize_t pull(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
    tls_conn *t = ptr;
    if (t->in_p && t->in_pos < t->in_n) {
        size_t n = t->in_n - t->in_pos;
        if (n > len) n = len;
        memcpy(buf, t->in_p + t->in_pos, n);
        t->in_pos += n;
        return (ssize_t)n;
    }
    if (t->inner_eof) return 0;
    gnutls_transport_set_errno(t->s, EAGAIN);
    return -1;
}

static int pull_timeout(gnutls_transport_ptr_t ptr, unsigned ms)
{
    (void)ms; /* never waits: the loop calls again when bytes arrive */
    tls_conn *t = ptr;
    return (t->in_p && t->in_pos < t->in_n) || t->inner_eof ? 1 : 0;
}

static ssize_t push(gnutls_transport_ptr_t ptr, const void *data, size_t len)
{
    tls_conn *t = ptr;
    size_t room = WK_TLS_QUEUE - t->cq_len;
    if (room == 0) {
        gnutls_transport_set_errno(t->s, EAGAIN);
        return -1;
    }
    size_t n = len < room ? len : room;
    memcpy(t->cq + t->cq_len, data, n);
    t->cq_len += n;
    return (ssize_t)n;
}

/* Hands the queued ciphertext to the inner carrier when it has no write in flight. */
static void flush(tls_conn *t)
{
    if (t->inner_writing || t->cq_len == 0 || !t->inner_open || t->dead || t->closing) return;
    uint8_t *b = t->cf;
    t->cf = t->cq;
    t->cf_len = t->cq_len;
    t->cq = b;
    t->cq_len = 0;
    wk_error e;
    if (wk_carrier_write(t->inner, t->cf, t->cf_len, &e) != WK_OK) {
        fail(t, &e);
        return;
    }
    t->inner_writing = true;
}

/* More ciphertext is needed: let the inner carrier deliver again. */
static void need_input(tls_conn *t)
{
    if (t->inner_paused && !t->dead && !t->closing) {
        t->inner_paused = false;
        wk_carrier_read(t->inner, true);
    }
}

/* Encrypts as much of the owner's write as the queue takes. */
static void encrypt_more(tls_conn *t)
{
    while (t->writing && t->woff < t->wn && !t->dead && !t->closing) {
        if (WK_TLS_QUEUE - t->cq_len < RECORD_ROOM) {
            flush(t);
            if (WK_TLS_QUEUE - t->cq_len < RECORD_ROOM) break;
        }
        size_t n = t->wn - t->woff;
        if (n > PLAIN_RECORD) n = PLAIN_RECORD;
        ssize_t r = t->send_again ? gnutls_record_send(t->s, NULL, 0) : gnutls_record_send(t->s, t->wp + t->woff, n);
        if (r > 0) {
            t->send_again = false;
            t->woff += (size_t)r;
            continue;
        }
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
            t->send_again = true;
            break;
        }
        fail_code(t, WK_ERR_HOST_TLS, "TLS send", (int)r);
        return;
    }
    flush(t);
}

static void maybe_shut(tls_conn *t)
{
    if (!t->shutting || t->inner_shutting || t->bye_again || t->cq_len || t->inner_writing || t->dead || t->closing)
        return;
    t->inner_shutting = true;
    wk_error e;
    if (wk_carrier_half_close(t->inner, &e) != WK_OK) fail(t, &e);
}

/* ---- events from the inner carrier ------------------------------------------------------- */
static void on_timeout(uv_timer_t *h)
{
    tls_conn *t = h->data;
    if (!t->handshaking) return;
    wk_error e;
    wk_error_set(&e, WK_ERR_HOST_TLS_HANDSHAKE, WK_NO_OFFSET, "no TLS handshake within %llu ms",
                 (unsigned long long)t->timeout_ms);
    fail(t, &e);
}

static void in_opened(wk_carrier *in)
{
    tls_conn *t = in->owner;
    t->inner_open = true;
    snprintf(t->c.peer, sizeof t->c.peer, "%s", in->peer);
    t->handshaking = true;
    uv_timer_start(&t->timer, on_timeout, t->timeout_ms, 0);
    wk_carrier_read(t->inner, true);
    hs_drive(t);
}

static size_t in_received(wk_carrier *in, const uint8_t *p, size_t n)
{
    tls_conn *t = in->owner;
    if (t->dead || t->closing) return n;
    if (!t->handshaking && !t->want_read) {
        t->inner_paused = true; /* keep it with the inner carrier until the owner reads */
        return 0;
    }
    t->in_p = p;
    t->in_n = n;
    t->in_pos = 0;
    if (t->handshaking) hs_drive(t);
    if (!t->handshaking && t->opened && !t->dead && !t->closing) deliver(t);
    size_t used = t->in_pos;
    t->in_p = NULL;
    t->in_n = t->in_pos = 0;
    if (t->dead || t->closing) return n;
    if (used < n) {
        t->inner_paused = true;
        /* not paused by the owner: try again from the loop (it resumes the inner carrier) */
        if (t->want_read && t->opened && !t->ended) uv_idle_start(&t->idle, on_idle);
    }
    return used;
}

static void in_ended(wk_carrier *in)
{
    tls_conn *t = in->owner;
    t->inner_eof = true;
    if (t->dead || t->closing) return;
    if (t->handshaking) {
        wk_error e;
        wk_error_set(&e, WK_ERR_HOST_TLS_HANDSHAKE, WK_NO_OFFSET, "the connection ended during the TLS handshake");
        fail(t, &e);
        return;
    }
    if (t->want_read) deliver(t);
}

static void in_written(wk_carrier *in)
{
    tls_conn *t = in->owner;
    t->inner_writing = false;
    if (t->dead || t->closing) return;
    flush(t);
    if (t->handshaking) {
        hs_drive(t);
        return;
    }
    encrypt_more(t);
    if (t->dead || t->closing) return;
    if (t->writing && t->woff == t->wn && !t->send_again) {
        t->writing = false;
        t->c.ev->written(&t->c);
        if (t->dead || t->closing) return;
    }
    if (t->bye_again) {
        int r = gnutls_bye(t->s, GNUTLS_SHUT_WR);
        if (r == GNUTLS_E_SUCCESS) t->bye_again = false;
        else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
            fail_code(t, WK_ERR_HOST_TLS, "TLS close_notify", r);
            return;
        }
        flush(t);
    }
    maybe_shut(t);
}

static void in_shut(wk_carrier *in)
{
    tls_conn *t = in->owner;
    if (t->dead || t->closing) return;
    t->c.ev->shut(&t->c);
}

static void in_failed(wk_carrier *in, const wk_error *e)
{
    tls_conn *t = in->owner;
    fail(t, e);
}

static void release(tls_conn *t)
{
    if (--t->refs > 0) return;
    if (t->s) gnutls_deinit(t->s);
    wk_tls_creds_unref(t->creds);
    free(t->cq);
    free(t->cf);
    if (t->c.ev) t->c.ev->closed(&t->c);
    free(t);
}

static void in_closed(wk_carrier *in)
{
    tls_conn *t = in->owner;
    t->inner_closed = true;
    if (t->closing) release(t); /* (an inner carrier reports closed() only after our close) */
}

static const wk_carrier_events inner_events = {in_opened, in_received, in_ended, in_written,
                                               in_shut, in_failed, in_closed};

/* ---- the handshake ----------------------------------------------------------------------- */
static void hs_fail(tls_conn *t, int r)
{
    wk_error e;
    if (r == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
        unsigned status = gnutls_session_get_verify_cert_status(t->s);
        gnutls_datum_t out = {NULL, 0};
        gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0);
        wk_error_set(&e, WK_ERR_HOST_TLS_VERIFY, WK_NO_OFFSET, "%s", out.data ? (const char *)out.data : "not trusted");
        gnutls_free(out.data);
    } else if (r == GNUTLS_E_FATAL_ALERT_RECEIVED) {
        wk_error_set(&e, WK_ERR_HOST_TLS_HANDSHAKE, WK_NO_OFFSET, "the peer sent the alert '%s'",
                     gnutls_alert_get_name(gnutls_alert_get(t->s)));
    } else {
        wk_error_set(&e, WK_ERR_HOST_TLS_HANDSHAKE, WK_NO_OFFSET, "TLS handshake: %s", gnutls_strerror(r));
    }
    /* best effort: tell the peer why (the alert leaves with the next write, if any) */
    if (r != GNUTLS_E_FATAL_ALERT_RECEIVED && r != GNUTLS_E_PREMATURE_TERMINATION) {
        gnutls_alert_send_appropriate(t->s, r);
        flush(t);
    }
    fail(t, &e);
}

static void hs_drive(tls_conn *t)
{
    for (;;) {
        int r = gnutls_handshake(t->s);
        flush(t);
        if (t->dead || t->closing) return;
        if (r == GNUTLS_E_SUCCESS) break;
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
            if (gnutls_record_get_direction(t->s) == 0) need_input(t);
            return;
        }
        if (gnutls_error_is_fatal(r)) {
            hs_fail(t, r);
            return;
        }
        /* a warning alert: carry on */
    }
    t->handshaking = false;
    uv_timer_stop(&t->timer);
    t->verified = true; /* a client: gnutls_session_set_verify_cert passed; a server: our certificate */
    snprintf(t->cipher, sizeof t->cipher, "%s %s", gnutls_protocol_get_name(gnutls_protocol_get_version(t->s)),
             gnutls_cipher_get_name(gnutls_cipher_get(t->s)));
    t->opened = true;
    t->c.ev->opened(&t->c);
}

/* ---- reading ----------------------------------------------------------------------------- */
/* The record layer ended (r == 0: close_notify) or failed: report it. */
static void record_end(tls_conn *t, ssize_t r)
{
    if (r == 0) {
        t->ended = true;
        t->c.ev->ended(&t->c);
    } else if (r == GNUTLS_E_PREMATURE_TERMINATION) {
        wk_error e;
        wk_error_set(&e, WK_ERR_HOST_TLS, WK_NO_OFFSET, "the connection ended without TLS close_notify");
        fail(t, &e);
    } else {
        fail_code(t, WK_ERR_HOST_TLS, "TLS receive", (int)r);
    }
}

/* Decrypts records into pt while it has room for a whole one and ciphertext is at hand.
 * Returns false when nothing could be read (more ciphertext was asked for) or the carrier ended,
 * failed or closed. */
static bool fill_plain(tls_conn *t)
{
    t->pt_pos = t->pt_len = 0;
    while (PLAIN_CAP - t->pt_len >= PLAIN_RECORD) {
        size_t before = t->in_pos;
        ssize_t r = gnutls_record_recv(t->s, t->pt + t->pt_len, PLAIN_CAP - t->pt_len);
        flush(t); /* a KeyUpdate answer, alerts */
        if (t->dead || t->closing) return false;
        if (r > 0) {
            t->pt_len += (size_t)r;
            continue;
        }
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
            /* GnuTLS also answers AGAIN after a post-handshake message (a TLS 1.3 session
             * ticket) with more ciphertext at hand: go on while it takes bytes */
            if (t->in_p && t->in_pos < t->in_n && t->in_pos > before) continue;
            if (t->pt_len) return true;
            need_input(t);
            return false;
        }
        if (r == GNUTLS_E_REHANDSHAKE) { /* TLS 1.2 renegotiation: refused */
            gnutls_alert_send(t->s, GNUTLS_AL_WARNING, GNUTLS_A_NO_RENEGOTIATION);
            flush(t);
            continue;
        }
        if (r != 0 && !gnutls_error_is_fatal((int)r)) continue;
        if (t->pt_len) { /* the plaintext first, then the end or the failure */
            t->pend_end = true;
            t->pend_rc = r;
            return true;
        }
        record_end(t, r);
        return false;
    }
    return true;
}

static void deliver(tls_conn *t)
{
    while (t->want_read && t->opened && !t->dead && !t->closing && !t->ended) {
        if (t->pt_pos < t->pt_len) {
            size_t n = t->pt_len - t->pt_pos;
            size_t used = t->c.ev->received(&t->c, t->pt + t->pt_pos, n);
            if (t->dead || t->closing) return;
            if (used > n) used = n;
            t->pt_pos += used;
            if (used < n) {
                t->want_read = false; /* the owner paused */
                return;
            }
            continue;
        }
        if (t->pend_end) {
            t->pend_end = false;
            record_end(t, t->pend_rc);
            return;
        }
        if (!fill_plain(t)) return;
    }
}

static void on_idle(uv_idle_t *h)
{
    tls_conn *t = h->data;
    uv_idle_stop(&t->idle);
    if (t->dead || t->closing) return;
    deliver(t);
}

/* ---- calls from the owner ---------------------------------------------------------------- */
static void c_start(wk_carrier *c)
{
    tls_conn *t = of(c);
    if (t->started || t->closing) return;
    t->started = true;
    wk_carrier_start(t->inner);
}

static void c_read(wk_carrier *c, bool on)
{
    tls_conn *t = of(c);
    if (t->dead || t->closing) return;
    t->want_read = on;
    if (on && t->opened) uv_idle_start(&t->idle, on_idle);
}

static wk_code c_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    tls_conn *t = of(c);
    if (t->dead || t->closing || !t->opened || t->writing || t->shutting || n == 0)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "TLS carrier write not possible now");
    t->wp = p;
    t->wn = n;
    t->woff = 0;
    t->writing = true;
    encrypt_more(t); /* written() follows from the inner carrier's written() */
    return WK_OK;
}

static wk_code c_half_close(wk_carrier *c, wk_error *err)
{
    tls_conn *t = of(c);
    if (t->dead || t->closing || !t->opened || t->writing || t->shutting)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "TLS carrier half-close not possible now");
    t->shutting = true;
    int r = gnutls_bye(t->s, GNUTLS_SHUT_WR);
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) t->bye_again = true;
    else if (r < 0) return wk_error_set(err, WK_ERR_HOST_TLS, WK_NO_OFFSET, "TLS close_notify: %s", gnutls_strerror(r));
    flush(t);
    maybe_shut(t);
    return WK_OK;
}

static void on_handle_closed(uv_handle_t *h) { release(h->data); }

static void c_close(wk_carrier *c)
{
    tls_conn *t = of(c);
    if (t->closing) return;
    t->closing = true;
    uv_idle_stop(&t->idle);
    uv_timer_stop(&t->timer);
    t->refs = 1 + 2 + (t->inner_closed ? 0 : 1);
    uv_close((uv_handle_t *)&t->idle, on_handle_closed);
    uv_close((uv_handle_t *)&t->timer, on_handle_closed);
    if (!t->inner_closed) wk_carrier_close(t->inner); /* in_closed() releases its reference */
    release(t);
}

static size_t c_memory(const wk_carrier *c)
{
    const tls_conn *t = (const tls_conn *)c;
    /* GnuTLS's session: record buffers of about two records each way plus handshake state */
    return sizeof *t + 2 * WK_TLS_QUEUE + 4 * RECORD_ROOM + (t->inner_closed ? 0 : wk_carrier_memory(t->inner));
}

static const wk_carrier_ops tls_ops = {.name = "tls", .start = c_start, .read = c_read, .write = c_write,
                                       .half_close = c_half_close, .close = c_close, .memory = c_memory,
                                       .authorize = NULL};

wk_carrier *wk_tls_carrier_new(wk_host_loop *loop, wk_carrier *inner, wk_tls_creds *creds, bool server,
                               const char *hostname, uint64_t timeout_ms, wk_error *err)
{
    tls_conn *t = calloc(1, sizeof *t);
    if (t) {
        t->cq = malloc(WK_TLS_QUEUE);
        t->cf = malloc(WK_TLS_QUEUE);
    }
    if (!t || !t->cq || !t->cf) {
        if (t) {
            free(t->cq);
            free(t->cf);
        }
        free(t);
        wk_carrier_close(inner);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "TLS carrier");
        return NULL;
    }
    if (wk_tls_session_new(&t->s, creds, server, hostname, GNUTLS_NONBLOCK, err) != WK_OK) {
        free(t->cq);
        free(t->cf);
        free(t);
        wk_carrier_close(inner);
        return NULL;
    }
    gnutls_transport_set_ptr(t->s, t);
    gnutls_transport_set_pull_function(t->s, pull);
    gnutls_transport_set_pull_timeout_function(t->s, pull_timeout);
    gnutls_transport_set_push_function(t->s, push);
    t->c.ops = &tls_ops;
    t->c.loop = loop;
    t->c.address = inner->address;
    snprintf(t->c.peer, sizeof t->c.peer, "%s", inner->peer);
    t->c.assurance = WK_ILTP_ASSURANCE_DISABLED;
    t->inner = inner;
    t->creds = wk_tls_creds_ref(creds);
    t->server = server;
    t->timeout_ms = timeout_ms ? timeout_ms : WK_CARRIER_TRANSPORT_TIMEOUT_MS;
    uv_idle_init(loop->uv, &t->idle);
    t->idle.data = t;
    uv_timer_init(loop->uv, &t->timer);
    t->timer.data = t;
    inner->ev = &inner_events;
    inner->owner = t;
    return &t->c;
}

bool wk_tls_carrier_verified(const wk_carrier *c) { return c->ops == &tls_ops && ((const tls_conn *)c)->verified; }

const char *wk_tls_carrier_cipher(const wk_carrier *c)
{
    return c->ops == &tls_ops ? ((const tls_conn *)c)->cipher : "";
}
