/* wirekit host: one QUIB connection over ngtcp2 0.12 + GnuTLS 3.7, sans I/O (quib_conn.h says
 * what it implements). Every ngtcp2 call of wirekit is in this file. */
#include "quib_conn.h"
#include <wirekit/iltp.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS ((uint64_t)NGTCP2_MILLISECONDS)
#define DEFAULT_TIMEOUT_MS 30000u
#define CHUNK (64u << 10)
#define CLOSE_REPEATS 16

static const char priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:"
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1:%DISABLE_TLS13_COMPAT_MODE";

/* ---- credentials -------------------------------------------------------------------------- */
struct wk_quib_tls {
    bool server;
    gnutls_certificate_credentials_t cred;
};

wk_quib_tls *wk_quib_tls_create(bool server, const char *cert_file, const char *key_file, const char *ca_file,
                                wk_error *err)
{
    wk_quib_tls *t = calloc(1, sizeof *t);
    if (!t) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "TLS credentials");
        return NULL;
    }
    t->server = server;
    int rv = gnutls_certificate_allocate_credentials(&t->cred);
    if (rv < 0) goto fail;
    if (server) {
        if (!cert_file || !key_file) {
            wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "a quib: listener needs --cert and --key");
            goto out;
        }
        rv = gnutls_certificate_set_x509_key_file(t->cred, cert_file, key_file, GNUTLS_X509_FMT_PEM);
        if (rv < 0) {
            wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "certificate %.40s / key %.30s: %s", cert_file, key_file,
                         gnutls_strerror(rv));
            goto out;
        }
    } else if (ca_file) {
        rv = gnutls_certificate_set_x509_trust_file(t->cred, ca_file, GNUTLS_X509_FMT_PEM);
        if (rv <= 0) {
            wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "CA file %.60s: %s", ca_file,
                         rv == 0 ? "no certificate in it" : gnutls_strerror(rv));
            goto out;
        }
    } else {
        rv = gnutls_certificate_set_x509_system_trust(t->cred);
        if (rv < 0) goto fail;
    }
    return t;
fail:
    wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "TLS credentials: %s", gnutls_strerror(rv));
out:
    wk_quib_tls_free(t);
    return NULL;
}

void wk_quib_tls_free(wk_quib_tls *t)
{
    if (!t) return;
    if (t->cred) gnutls_certificate_free_credentials(t->cred);
    free(t);
}

/* ---- the connection ----------------------------------------------------------------------- */
typedef struct chunk {
    struct chunk *next;
    uint64_t off;       /* stream offset of data[0] */
    size_t len;         /* bytes used */
    uint8_t data[CHUNK];
} chunk;

enum phase { PH_ACTIVE = 0, PH_FINISHING, PH_CLOSING, PH_DRAINING, PH_DONE };

struct wk_quib_conn {
    wk_quib_params p;
    char hostname[256];
    char alpn[64];
    bool check_alpn;
    uint8_t reset_secret[WK_QUIB_RESET_SECRET_LEN];
    bool has_reset_secret;
    ngtcp2_conn *conn;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    ngtcp2_mem mem;
    size_t mem_used;
    ngtcp2_path_storage ps;
    uint64_t now;
    enum phase phase;
    /* stream */
    int64_t sid;
    bool stream_ok;            /* the ILTP stream exists */
    bool stream_seen;          /* server: the client opened one */
    bool local_reset;          /* we reset or stopped the stream ourselves (test peers) */
    /* retention: chunks holding [tx_acked, tx_end); [tx_acked, tx_sent) is in flight */
    chunk *tx_head, *tx_tail;
    uint64_t tx_acked, tx_sent, tx_end;
    bool fin_req, fin_sent, fin_acked;
    uint64_t fin_deadline;
    /* receive buffer: rx[rx_pos..rx_len) */
    uint8_t *rx;
    size_t rx_pos, rx_len, rx_cap;
    bool peer_fin;
    /* state */
    bool hs_done, ev_opened, ev_shut, ev_ended, ev_failed, ev_closed;
    bool shut_pending, ended_pending;
    char end_cause;
    uint8_t exporter[WK_ILTP_QUIB_EXPORTER_LEN];
    bool auth_req, authorized;
    bool failed;
    wk_error fail;
    bool got_reset;
    bool peer_settled;         /* PeerClose or PeerStatelessReset after authorization */
    /* our CONNECTION_CLOSE: what to send when we close because of a local verdict */
    bool close_set;
    ngtcp2_connection_close_error ccerr;
    /* closing / draining */
    uint8_t close_pkt[WK_QUIB_MAX_DATAGRAM];
    size_t close_len;
    int close_send;            /* times the close packet is due */
    int close_sent;
    uint64_t close_deadline;
    bool graceful;             /* PH_FINISHING: close with code 0 once the FIN is acked */
};

static uint64_t timeout_or(uint64_t ms) { return (ms ? ms : DEFAULT_TIMEOUT_MS) * MS; }

static void rnd(wk_quib_conn *q, uint8_t *p, size_t n)
{
    if (q->p.rand) q->p.rand(q->p.rand_ctx, p, n);
    else (void)gnutls_rnd(GNUTLS_RND_RANDOM, p, n);
}

/* Records the first failure (it stays). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fail(wk_quib_conn *q, wk_code code, const char *fmt, ...)
{
    if (q->failed) return;
    q->failed = true;
    char msg[sizeof q->fail.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wk_error_set(&q->fail, code, WK_NO_OFFSET, "%s", msg);
}

/* ---- memory ---- */
static void *m_malloc(size_t n, void *ud)
{
    wk_quib_conn *q = ud;
    size_t *p = malloc(n + sizeof(size_t) * 2);
    if (!p) return NULL;
    p[0] = n;
    q->mem_used += n;
    return p + 2;
}
static void m_free(void *ptr, void *ud)
{
    if (!ptr) return;
    wk_quib_conn *q = ud;
    size_t *p = (size_t *)ptr - 2;
    q->mem_used -= p[0];
    free(p);
}
static void *m_calloc(size_t nm, size_t sz, void *ud)
{
    if (sz && nm > SIZE_MAX / sz) return NULL;
    void *p = m_malloc(nm * sz, ud);
    if (p) memset(p, 0, nm * sz);
    return p;
}
static void *m_realloc(void *ptr, size_t n, void *ud)
{
    if (!ptr) return m_malloc(n, ud);
    wk_quib_conn *q = ud;
    size_t *p = (size_t *)ptr - 2;
    size_t old = p[0];
    size_t *np = realloc(p, n + sizeof(size_t) * 2);
    if (!np) return NULL;
    np[0] = n;
    q->mem_used = q->mem_used - old + n;
    return np + 2;
}

/* ---- retention ---- */
static void tx_release(wk_quib_conn *q)
{
    while (q->tx_head && q->tx_head->off + q->tx_head->len <= q->tx_acked &&
           (q->tx_head != q->tx_tail || q->tx_head->len == CHUNK)) {
        chunk *c = q->tx_head;
        q->tx_head = c->next;
        if (!q->tx_head) q->tx_tail = NULL;
        free(c);
    }
}

/* The peer settled the connection after authorization (PeerClose, PeerStatelessReset): what we
 * still write (our end mark) cannot reach it, and the committed result stands. */
static bool settled(const wk_quib_conn *q) { return !q->failed && q->peer_settled; }

size_t wk_quib_conn_room(const wk_quib_conn *q)
{
    if (settled(q)) return SIZE_MAX;
    if (q->failed || q->fin_req || q->phase != PH_ACTIVE) return 0;
    uint64_t held = q->tx_end - q->tx_acked;
    return held >= q->p.retain_max ? 0 : (size_t)(q->p.retain_max - held);
}

size_t wk_quib_conn_write(wk_quib_conn *q, const uint8_t *p, size_t n)
{
    if (settled(q)) return n; /* dropped: see settled() */
    size_t room = wk_quib_conn_room(q), done = 0;
    if (n > room) n = room;
    while (done < n) {
        if (!q->tx_tail || q->tx_tail->len == CHUNK) {
            chunk *c = malloc(sizeof *c);
            if (!c) break; /* accepts less; the owner retries after written() */
            c->next = NULL;
            c->off = q->tx_end;
            c->len = 0;
            if (q->tx_tail) q->tx_tail->next = c;
            else q->tx_head = c;
            q->tx_tail = c;
        }
        size_t k = CHUNK - q->tx_tail->len;
        if (k > n - done) k = n - done;
        memcpy(q->tx_tail->data + q->tx_tail->len, p + done, k);
        q->tx_tail->len += k;
        q->tx_end += k;
        done += k;
    }
    return done;
}

/* Up to two vectors of unsent retained bytes from tx_sent. */
static size_t tx_vecs(wk_quib_conn *q, ngtcp2_vec v[2])
{
    size_t n = 0;
    for (chunk *c = q->tx_head; c && n < 2; c = c->next) {
        uint64_t end = c->off + c->len;
        if (end <= q->tx_sent) continue;
        uint64_t from = q->tx_sent > c->off ? q->tx_sent : c->off;
        v[n].base = c->data + (from - c->off);
        v[n].len = (size_t)(end - from);
        n++;
    }
    return n;
}

static void check_authorized(wk_quib_conn *q)
{
    if (q->auth_req && !q->authorized && q->tx_sent == q->tx_end) q->authorized = true;
}

/* ---- ngtcp2 callbacks (none calls the owner) ---- */
static wk_quib_conn *of(void *ud) { return ud; }

static void cb_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    wk_quib_conn *q = ctx->native_handle;
    rnd(q, dest, len);
}

static void reset_token(wk_quib_conn *q, const uint8_t *cid, size_t len, uint8_t *token)
{
    if (q->has_reset_secret) {
        ngtcp2_cid c;
        ngtcp2_cid_init(&c, cid, len);
        if (ngtcp2_crypto_generate_stateless_reset_token(token, q->reset_secret, sizeof q->reset_secret, &c) == 0) return;
    }
    rnd(q, token, NGTCP2_STATELESS_RESET_TOKENLEN);
}

static int cb_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *ud)
{
    (void)conn;
    wk_quib_conn *q = of(ud);
    rnd(q, cid->data, cidlen);
    cid->datalen = cidlen;
    reset_token(q, cid->data, cidlen, token);
    if (q->p.cid_event) q->p.cid_event(q->p.cid_ctx, true, cid->data, cidlen);
    return 0;
}

static int cb_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *ud)
{
    (void)conn;
    wk_quib_conn *q = of(ud);
    if (q->p.cid_event) q->p.cid_event(q->p.cid_ctx, false, cid->data, cid->datalen);
    return 0;
}

/* Records a local verdict that closes the connection with a TLS alert. */
static int refuse_tls(wk_quib_conn *q, uint8_t alert)
{
    q->close_set = true;
    ngtcp2_connection_close_error_set_transport_error_tls_alert(&q->ccerr, alert, NULL, 0);
    return NGTCP2_ERR_CALLBACK_FAILURE;
}

static int cb_handshake_completed(ngtcp2_conn *conn, void *ud)
{
    wk_quib_conn *q = of(ud);
    if (q->check_alpn) {
        gnutls_datum_t sel = {NULL, 0};
        int rv = gnutls_alpn_get_selected_protocol(q->tls, &sel);
        if (rv < 0) {
            fail(q, WK_ERR_HOST_QUIB_PROFILE, "the %s negotiated no ALPN (QUIB/1 required)",
                 q->p.server ? "client" : "server");
            return refuse_tls(q, GNUTLS_A_NO_APPLICATION_PROTOCOL);
        }
        if (sel.size != WK_QUIB_ALPN_LEN || memcmp(sel.data, WK_QUIB_ALPN, WK_QUIB_ALPN_LEN) != 0) {
            char t[40];
            size_t k = 0;
            for (unsigned i = 0; i < sel.size && k + 4 < sizeof t; i++)
                k += (size_t)snprintf(t + k, sizeof t - k, sel.data[i] >= 0x20 && sel.data[i] < 0x7f ? "%c" : "\\x%02x",
                                      sel.data[i]);
            t[k] = 0;
            fail(q, WK_ERR_HOST_QUIB_PROFILE, "ALPN '%s' is not QUIB/1", t);
            return refuse_tls(q, GNUTLS_A_NO_APPLICATION_PROTOCOL);
        }
    }
    if (gnutls_prf_rfc5705(q->tls, WK_ILTP_QUIB_EXPORTER_LABEL_LEN, WK_ILTP_QUIB_EXPORTER_LABEL,
                           sizeof WK_ILTP_QUIB_EXPORTER_CONTEXT - 1, WK_ILTP_QUIB_EXPORTER_CONTEXT,
                           sizeof q->exporter, (char *)q->exporter) < 0) {
        fail(q, WK_ERR_HOST_QUIB_TLS, "the TLS exporter failed");
        return refuse_tls(q, GNUTLS_A_INTERNAL_ERROR);
    }
    if (!q->p.server) {
        int rv = ngtcp2_conn_open_bidi_stream(conn, &q->sid, NULL);
        if (rv != 0) {
            fail(q, WK_ERR_HOST_QUIB_STREAM, "cannot open the ILTP stream: %s", ngtcp2_strerror(rv));
            q->close_set = true;
            ngtcp2_connection_close_error_set_transport_error(&q->ccerr, NGTCP2_STREAM_LIMIT_ERROR, NULL, 0);
            return NGTCP2_ERR_CALLBACK_FAILURE;
        }
        q->stream_ok = true;
    }
    uint64_t idle = timeout_or(q->p.idle_timeout_ms);
    ngtcp2_conn_set_keep_alive_timeout(conn, idle / 2);
    q->hs_done = true;
    return 0;
}

static int cb_stream_open(ngtcp2_conn *conn, int64_t sid, void *ud)
{
    (void)conn;
    wk_quib_conn *q = of(ud);
    if (!q->p.server || q->stream_seen || !ngtcp2_is_bidi_stream(sid)) {
        fail(q, WK_ERR_HOST_QUIB_STREAM, "the peer opened stream %lld; QUIB runs on one client-opened bidirectional stream",
             (long long)sid);
        q->close_set = true;
        ngtcp2_connection_close_error_set_transport_error(&q->ccerr, NGTCP2_STREAM_STATE_ERROR, NULL, 0);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    q->stream_seen = q->stream_ok = true;
    q->sid = sid;
    return 0;
}

static int cb_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t offset, const uint8_t *data,
                               size_t len, void *ud, void *sud)
{
    (void)conn;
    (void)offset;
    (void)sud;
    wk_quib_conn *q = of(ud);
    if (!q->stream_ok || sid != q->sid) return 0;
    if (len) {
        if (q->rx_len + len > q->rx_cap) {
            if (q->rx_pos) { /* compact */
                memmove(q->rx, q->rx + q->rx_pos, q->rx_len - q->rx_pos);
                q->rx_len -= q->rx_pos;
                q->rx_pos = 0;
            }
            if (q->rx_len + len > q->rx_cap) {
                size_t cap = q->rx_cap ? q->rx_cap : 16384;
                while (cap < q->rx_len + len) cap *= 2;
                uint8_t *b = realloc(q->rx, cap);
                if (!b) {
                    fail(q, WK_ERR_NOMEM, "receive buffer");
                    return NGTCP2_ERR_CALLBACK_FAILURE;
                }
                q->rx = b;
                q->rx_cap = cap;
            }
        }
        memcpy(q->rx + q->rx_len, data, len);
        q->rx_len += len;
    }
    if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
        q->peer_fin = true;
        if (!q->end_cause) q->end_cause = 'F';
        q->ended_pending = true;
    }
    return 0;
}

static void fin_check(wk_quib_conn *q)
{
    if (q->fin_sent && !q->fin_acked && q->tx_acked == q->tx_end) {
        q->fin_acked = true;
        q->shut_pending = true;
    }
}

static int cb_acked(ngtcp2_conn *conn, int64_t sid, uint64_t offset, uint64_t len, void *ud, void *sud)
{
    (void)conn;
    (void)sud;
    wk_quib_conn *q = of(ud);
    if (sid != q->sid) return 0;
    if (offset + len > q->tx_acked) q->tx_acked = offset + len;
    tx_release(q);
    if (q->fin_sent && offset + len == q->tx_end) fin_check(q);
    return 0;
}

static int cb_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t sid, uint64_t code, void *ud, void *sud)
{
    (void)conn;
    (void)sud;
    (void)code;
    wk_quib_conn *q = of(ud);
    if (sid != q->sid) return 0;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) && q->fin_sent) {
        q->tx_acked = q->tx_end;
        fin_check(q);
    }
    q->stream_ok = false;
    return 0;
}

static int cb_stream_reset(ngtcp2_conn *conn, int64_t sid, uint64_t final_size, uint64_t code, void *ud, void *sud)
{
    (void)conn;
    (void)sud;
    (void)final_size;
    wk_quib_conn *q = of(ud);
    if (sid == q->sid)
        fail(q, WK_ERR_HOST_QUIB_RESET_STREAM, "the peer reset the ILTP stream (RESET_STREAM, code %llu)",
             (unsigned long long)code);
    return 0;
}

static int cb_stateless_reset(ngtcp2_conn *conn, const ngtcp2_pkt_stateless_reset *sr, void *ud)
{
    (void)conn;
    (void)sr;
    of(ud)->got_reset = true;
    return 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void log_stderr(void *ud, const char *fmt, ...)
{
    (void)ud;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref) { return ((wk_quib_conn *)ref->user_data)->conn; }

/* ---- creation ---- */
static bool is_ip_literal(const char *h)
{
    uint8_t b[16];
    return inet_pton(AF_INET, h, b) == 1 || inet_pton(AF_INET6, h, b) == 1;
}

static wk_code tls_setup(wk_quib_conn *q, wk_error *err)
{
    const wk_quib_params *p = &q->p;
    int rv = gnutls_init(&q->tls, p->server ? GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET : GNUTLS_CLIENT);
    if (rv < 0) goto fail;
    rv = gnutls_priority_set_direct(q->tls, priority, NULL);
    if (rv < 0) goto fail;
    rv = p->server ? ngtcp2_crypto_gnutls_configure_server_session(q->tls)
                   : ngtcp2_crypto_gnutls_configure_client_session(q->tls);
    if (rv != 0) {
        rv = GNUTLS_E_INTERNAL_ERROR;
        goto fail;
    }
    q->ref.get_conn = get_conn;
    q->ref.user_data = q;
    gnutls_session_set_ptr(q->tls, &q->ref);
    rv = gnutls_credentials_set(q->tls, GNUTLS_CRD_CERTIFICATE, p->tls->cred);
    if (rv < 0) goto fail;
    if (q->alpn[0]) {
        gnutls_datum_t a = {(unsigned char *)q->alpn, (unsigned)strlen(q->alpn)};
        rv = gnutls_alpn_set_protocols(q->tls, &a, 1, GNUTLS_ALPN_MANDATORY | (p->server ? GNUTLS_ALPN_SERVER_PRECEDENCE : 0));
        if (rv < 0) goto fail;
    }
    if (!p->server) {
        if (!is_ip_literal(q->hostname)) {
            rv = gnutls_server_name_set(q->tls, GNUTLS_NAME_DNS, q->hostname, strlen(q->hostname));
            if (rv < 0) goto fail;
        }
        gnutls_session_set_verify_cert(q->tls, q->hostname, 0);
    }
    return WK_OK;
fail:
    return wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "TLS session: %s", gnutls_strerror(rv));
}

wk_quib_conn *wk_quib_conn_create(const wk_quib_params *p, uint64_t now, wk_error *err)
{
    if (!p->tls || p->tls->server != p->server || (!p->server && (!p->hostname || strlen(p->hostname) >= 256)) ||
        (p->server && !p->initial)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "quib connection parameters");
        return NULL;
    }
    wk_quib_conn *q = calloc(1, sizeof *q);
    if (!q) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "quib connection");
        return NULL;
    }
    q->p = *p;
    q->now = now;
    q->sid = -1;
    if (!q->p.stream_window) q->p.stream_window = WK_QUIB_STREAM_WINDOW;
    if (!q->p.retain_max) q->p.retain_max = WK_QUIB_RETAIN_MAX;
    q->p.initial = NULL;
    q->p.initial_len = 0;
    if (p->hostname) snprintf(q->hostname, sizeof q->hostname, "%s", p->hostname);
    q->p.hostname = q->hostname;
    q->check_alpn = p->alpn == NULL;
    snprintf(q->alpn, sizeof q->alpn, "%s", p->alpn ? p->alpn : WK_QUIB_ALPN);
    q->p.alpn = NULL;
    if (p->reset_secret) {
        memcpy(q->reset_secret, p->reset_secret, sizeof q->reset_secret);
        q->has_reset_secret = true;
    }
    q->p.reset_secret = NULL;
    q->mem = (ngtcp2_mem){q, m_malloc, m_free, m_calloc, m_realloc};
    ngtcp2_connection_close_error_default(&q->ccerr);
    if (tls_setup(q, err) != WK_OK) goto fail;

    ngtcp2_path_storage_init(&q->ps, (const ngtcp2_sockaddr *)&p->local.ss, p->local.len,
                             (const ngtcp2_sockaddr *)&p->remote.ss, p->remote.len, NULL);
    static uint32_t v1 = NGTCP2_PROTO_VER_V1;
    ngtcp2_settings st;
    ngtcp2_settings_default(&st);
    st.initial_ts = now;
    st.handshake_timeout = timeout_or(p->handshake_timeout_ms);
    st.max_stream_window = q->p.stream_window; /* no auto-tuning: credit is ours to return */
    st.max_window = q->p.stream_window;
    st.preferred_versions = &v1;
    st.preferred_versionslen = 1;
    st.other_versions = &v1;
    st.other_versionslen = 1;
    st.rand_ctx.native_handle = q;
    if (getenv("WK_QUIB_LOG")) st.log_printf = log_stderr; /* diagnostics: ngtcp2's own log on stderr */
    ngtcp2_transport_params tp;
    ngtcp2_transport_params_default(&tp);
    tp.initial_max_data = q->p.stream_window;
    tp.initial_max_stream_data_bidi_local = q->p.stream_window;
    tp.initial_max_stream_data_bidi_remote = q->p.stream_window;
    tp.initial_max_stream_data_uni = 0;
    tp.initial_max_streams_bidi = p->server ? 1 : 0;
    tp.initial_max_streams_uni = 0;
    tp.max_idle_timeout = timeout_or(p->idle_timeout_ms);

    ngtcp2_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    cb.encrypt = ngtcp2_crypto_encrypt_cb;
    cb.decrypt = ngtcp2_crypto_decrypt_cb;
    cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb.update_key = ngtcp2_crypto_update_key_cb;
    cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
    cb.rand = cb_rand;
    cb.get_new_connection_id = cb_new_cid;
    cb.remove_connection_id = cb_remove_cid;
    cb.handshake_completed = cb_handshake_completed;
    cb.recv_stream_data = cb_recv_stream_data;
    cb.acked_stream_data_offset = cb_acked;
    cb.stream_open = cb_stream_open;
    cb.stream_close = cb_stream_close;
    cb.stream_reset = cb_stream_reset;
    cb.recv_stateless_reset = cb_stateless_reset;

    ngtcp2_cid dcid, scid;
    int rv;
    if (p->server) {
        ngtcp2_pkt_hd hd;
        if (ngtcp2_accept(&hd, p->initial, p->initial_len) != 0 || hd.version != NGTCP2_PROTO_VER_V1) {
            wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "not a QUIC v1 client Initial");
            goto fail;
        }
        cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
        scid.datalen = WK_QUIB_CIDLEN;
        rnd(q, scid.data, scid.datalen);
        tp.original_dcid = hd.dcid;
        tp.stateless_reset_token_present = 1;
        reset_token(q, scid.data, scid.datalen, tp.stateless_reset_token);
        rv = ngtcp2_conn_server_new(&q->conn, &hd.scid, &scid, &q->ps.path, hd.version, &cb, &st, &tp, &q->mem, q);
        if (rv == 0 && q->p.cid_event) q->p.cid_event(q->p.cid_ctx, true, scid.data, scid.datalen);
    } else {
        cb.client_initial = ngtcp2_crypto_client_initial_cb;
        cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
        dcid.datalen = WK_QUIB_CIDLEN;
        rnd(q, dcid.data, dcid.datalen);
        scid.datalen = WK_QUIB_CIDLEN;
        rnd(q, scid.data, scid.datalen);
        rv = ngtcp2_conn_client_new(&q->conn, &dcid, &scid, &q->ps.path, NGTCP2_PROTO_VER_V1, &cb, &st, &tp, &q->mem, q);
    }
    if (rv != 0) {
        wk_error_set(err, rv == NGTCP2_ERR_NOMEM ? WK_ERR_NOMEM : WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "QUIC connection: %s",
                     ngtcp2_strerror(rv));
        q->conn = NULL;
        goto fail;
    }
    ngtcp2_conn_set_tls_native_handle(q->conn, q->tls);
    return q;
fail:
    wk_quib_conn_free(q);
    return NULL;
}

void wk_quib_conn_free(wk_quib_conn *q)
{
    if (!q) return;
    if (q->conn) ngtcp2_conn_del(q->conn);
    if (q->tls) gnutls_deinit(q->tls);
    while (q->tx_head) {
        chunk *c = q->tx_head;
        q->tx_head = c->next;
        free(c);
    }
    free(q->rx);
    free(q);
}

/* ---- closing ---- */
static uint64_t three_pto(wk_quib_conn *q)
{
    uint64_t pto = q->conn ? ngtcp2_conn_get_pto(q->conn) : 0;
    uint64_t d = 3 * pto, cap = timeout_or(q->p.finish_timeout_ms);
    if (d < 10 * MS) d = 10 * MS;
    return d < cap ? d : cap;
}

/* Writes our CONNECTION_CLOSE (ccerr) and enters the closing period. */
static void enter_closing(wk_quib_conn *q, const ngtcp2_connection_close_error *ccerr)
{
    if (q->phase >= PH_CLOSING) return;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi;
    ngtcp2_ssize n = ngtcp2_conn_write_connection_close(q->conn, &ps.path, &pi, q->close_pkt, sizeof q->close_pkt,
                                                         ccerr, q->now);
    q->close_len = n > 0 ? (size_t)n : 0;
    q->close_send = q->close_len ? 1 : 0;
    q->phase = PH_CLOSING;
    q->close_deadline = q->now + three_pto(q);
}

static void enter_draining(wk_quib_conn *q)
{
    if (q->phase >= PH_CLOSING) return;
    q->phase = PH_DRAINING;
    q->close_deadline = q->now + three_pto(q);
}

static void enter_done(wk_quib_conn *q) { q->phase = PH_DONE; }

/* A local failure recorded by fail(): close with the recorded error, or abort with code 1. */
static void close_failed(wk_quib_conn *q)
{
    ngtcp2_connection_close_error ce;
    if (q->close_set) ce = q->ccerr;
    else ngtcp2_connection_close_error_set_application_error(&ce, WK_QUIB_APP_ABORT, NULL, 0);
    enter_closing(q, &ce);
}

static const char *alert_name(uint64_t code)
{
    if (code < NGTCP2_CRYPTO_ERROR || code > NGTCP2_CRYPTO_ERROR + 0xff) return NULL;
    const char *n = gnutls_alert_get_strname((gnutls_alert_description_t)(code - NGTCP2_CRYPTO_ERROR));
    return n ? n : "TLS alert";
}

/* The peer ended the connection (read_pkt said DRAINING): classify it (Lace-060 settlement). */
static void peer_closed(wk_quib_conn *q)
{
    if (q->got_reset) {
        if (q->authorized) {
            if (!q->end_cause) q->end_cause = 'R';
            q->peer_settled = true;
            q->ended_pending = true;
            if (q->fin_req && !q->fin_acked) q->shut_pending = true; /* never clears one already due */
        } else {
            fail(q, WK_ERR_HOST_QUIB_STATELESS_RESET, "stateless reset from the peer before settlement was authorized");
        }
        enter_draining(q);
        return;
    }
    ngtcp2_connection_close_error ce;
    ngtcp2_conn_get_connection_close_error(q->conn, &ce);
    char reason[64] = "";
    if (ce.reasonlen) snprintf(reason, sizeof reason, " (%.*s)", (int)(ce.reasonlen < 50 ? ce.reasonlen : 50), (const char *)ce.reason);
    if (ce.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION) {
        if (ce.error_code != 0) {
            fail(q, WK_ERR_HOST_QUIB_APP_CLOSE, "the peer closed with application error %llu%s",
                 (unsigned long long)ce.error_code, reason);
        } else if (q->authorized) {
            if (!q->end_cause) q->end_cause = 'C';
            q->peer_settled = true;
            q->ended_pending = true;
            if (q->fin_req && !q->fin_acked) q->shut_pending = true; /* never clears one already due */
        } else {
            q->failed = true;
            wk_error_set(&q->fail, WK_ERR_ILTP_PREMATURE_EOF, WK_NO_OFFSET,
                         "the peer closed (application code 0) before QUIB settlement was authorized");
        }
    } else {
        const char *an = alert_name(ce.error_code);
        if (ce.error_code == NGTCP2_CONNECTION_REFUSED)
            fail(q, WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "the peer refused the connection (CONNECTION_REFUSED)%s", reason);
        else if (ce.error_code == NGTCP2_CRYPTO_ERROR + GNUTLS_A_NO_APPLICATION_PROTOCOL)
            fail(q, WK_ERR_HOST_QUIB_PROFILE, "the peer refused the ALPN (no_application_protocol)%s", reason);
        else if (an) fail(q, WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "the peer closed with TLS alert %s%s", an, reason);
        else
            fail(q, WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "the peer closed with transport error 0x%llx%s",
                 (unsigned long long)ce.error_code, reason);
    }
    enter_draining(q);
}

/* A fatal error from ngtcp2 (read or write): record it and close. */
static void liberr(wk_quib_conn *q, int rv, const char *where)
{
    if (rv == NGTCP2_ERR_DRAINING) {
        peer_closed(q);
        return;
    }
    if (rv == NGTCP2_ERR_CLOSING) return;
    if (rv == NGTCP2_ERR_CALLBACK_FAILURE && q->failed) { /* one of our checks */
        close_failed(q);
        return;
    }
    if (rv == NGTCP2_ERR_RECV_VERSION_NEGOTIATION || rv == NGTCP2_ERR_VERSION_NEGOTIATION_FAILURE) {
        fail(q, WK_ERR_HOST_QUIB_VERSION, "the server does not speak QUIC v1");
        enter_done(q);
        return;
    }
    if (rv == NGTCP2_ERR_DROP_CONN) {
        fail(q, WK_ERR_HOST_QUIB_PROTOCOL, "%s: %s", where, ngtcp2_strerror(rv));
        enter_done(q);
        return;
    }
    if (rv == NGTCP2_ERR_CRYPTO) {
        uint8_t alert = ngtcp2_conn_get_tls_alert(q->conn);
        const char *an = gnutls_alert_get_strname((gnutls_alert_description_t)alert);
        unsigned status = q->p.server ? 0 : gnutls_session_get_verify_cert_status(q->tls);
        if (status) {
            gnutls_datum_t txt = {NULL, 0};
            if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &txt, 0) == 0) {
                fail(q, WK_ERR_HOST_QUIB_CERTIFICATE, "%.100s", (const char *)txt.data);
                gnutls_free(txt.data);
            } else {
                fail(q, WK_ERR_HOST_QUIB_CERTIFICATE, "the server certificate did not verify (status 0x%x)", status);
            }
        } else if (alert == GNUTLS_A_NO_APPLICATION_PROTOCOL) {
            fail(q, WK_ERR_HOST_QUIB_PROFILE, "the client did not offer the ALPN QUIB/1");
        } else {
            fail(q, WK_ERR_HOST_QUIB_TLS, "TLS handshake failed: %s", an ? an : "alert");
        }
        q->close_set = true;
        ngtcp2_connection_close_error_set_transport_error_tls_alert(&q->ccerr, alert, NULL, 0);
        close_failed(q);
        return;
    }
    wk_code code = WK_ERR_HOST_QUIB_PROTOCOL;
    if (rv == NGTCP2_ERR_NOMEM) code = WK_ERR_NOMEM;
    else if (rv == NGTCP2_ERR_STREAM_LIMIT || rv == NGTCP2_ERR_STREAM_STATE) code = WK_ERR_HOST_QUIB_STREAM;
    fail(q, code, "%s: %s", where, ngtcp2_strerror(rv));
    if (!q->close_set) {
        q->close_set = true;
        ngtcp2_connection_close_error_set_transport_error_liberr(&q->ccerr, rv, NULL, 0);
    }
    close_failed(q);
}

/* After any step: recorded failures close the connection; settlement; the FIN deadline. */
static void settle_state(wk_quib_conn *q)
{
    check_authorized(q);
    if (q->failed && q->phase < PH_CLOSING && q->conn) close_failed(q);
    if (q->phase == PH_FINISHING && q->fin_acked) {
        ngtcp2_connection_close_error ce;
        ngtcp2_connection_close_error_set_application_error(&ce, 0, NULL, 0);
        enter_closing(q, &ce);
    }
}

/* ---- datagrams ---- */
void wk_quib_conn_recv(wk_quib_conn *q, const wk_quib_addr *remote, const uint8_t *pkt, size_t n, uint64_t now)
{
    q->now = now;
    if (q->phase == PH_DONE || q->phase == PH_DRAINING) return;
    if (q->phase == PH_CLOSING) {
        if (q->close_sent < CLOSE_REPEATS) q->close_send = 1;
        return;
    }
    ngtcp2_path path = q->ps.path;
    if (remote) {
        path.remote.addr = (ngtcp2_sockaddr *)&remote->ss;
        path.remote.addrlen = remote->len;
    }
    ngtcp2_pkt_info pi = {0};
    int rv = ngtcp2_conn_read_pkt(q->conn, &path, &pi, pkt, n, now);
    if (rv != 0) liberr(q, rv, "read");
    settle_state(q);
}

size_t wk_quib_conn_send(wk_quib_conn *q, uint8_t *buf, size_t cap, uint64_t now)
{
    q->now = now;
    if (q->phase == PH_CLOSING || q->phase == PH_DRAINING || q->phase == PH_DONE) {
        if (q->close_send && q->close_len && q->close_len <= cap) {
            q->close_send = 0;
            q->close_sent++;
            memcpy(buf, q->close_pkt, q->close_len);
            return q->close_len;
        }
        return 0;
    }
    if (cap > WK_QUIB_MAX_DATAGRAM) cap = WK_QUIB_MAX_DATAGRAM;
    for (int attempt = 0; attempt < 2; attempt++) {
        ngtcp2_vec v[2];
        size_t nv = 0;
        int64_t sid = -1;
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_NONE;
        if (attempt == 0 && q->stream_ok && !q->failed) {
            nv = tx_vecs(q, v);
            bool fin = q->fin_req && !q->fin_sent;
            if (nv || fin) {
                sid = q->sid;
                if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
            }
        }
        ngtcp2_pkt_info pi;
        ngtcp2_ssize datalen = -1;
        ngtcp2_ssize w = ngtcp2_conn_writev_stream(q->conn, &q->ps.path, &pi, buf, cap, &datalen, flags, sid,
                                                   nv ? v : NULL, nv, now);
        if (w < 0) {
            if (sid >= 0 && (w == NGTCP2_ERR_STREAM_SHUT_WR || w == NGTCP2_ERR_STREAM_NOT_FOUND) && !q->local_reset) {
                /* ngtcp2 0.12 reports a received STOP_SENDING only here: it answered with
                 * RESET_STREAM and shut our sending side */
                fail(q, WK_ERR_HOST_QUIB_STOP_SENDING, "the peer stopped reading the ILTP stream (STOP_SENDING)");
                settle_state(q);
                if (q->phase < PH_CLOSING) return 0;
                return wk_quib_conn_send(q, buf, cap, now);
            }
            if (sid >= 0 && (w == NGTCP2_ERR_STREAM_DATA_BLOCKED || w == NGTCP2_ERR_STREAM_SHUT_WR ||
                             w == NGTCP2_ERR_STREAM_NOT_FOUND))
                continue; /* flow control: write what else is due */
            liberr(q, (int)w, "write");
            settle_state(q);
            if (q->phase < PH_CLOSING) return 0;
            return wk_quib_conn_send(q, buf, cap, now); /* the close packet, if any */
        }
        if (sid >= 0 && datalen >= 0) {
            size_t total = 0;
            for (size_t i = 0; i < nv; i++) total += v[i].len;
            q->tx_sent += (uint64_t)datalen;
            if ((flags & NGTCP2_WRITE_STREAM_FLAG_FIN) && (size_t)datalen == total) {
                q->fin_sent = true;
            }
            check_authorized(q);
        }
        return (size_t)w;
    }
    return 0;
}

size_t wk_quib_conn_burst(wk_quib_conn *q)
{
    if (!q->conn || q->phase != PH_ACTIVE) return 1;
    size_t payload = ngtcp2_conn_get_max_tx_udp_payload_size(q->conn);
    size_t n = payload ? ngtcp2_conn_get_send_quantum(q->conn) / payload : 1;
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

void wk_quib_conn_sent(wk_quib_conn *q, uint64_t now)
{
    if (q->conn && q->phase < PH_CLOSING) ngtcp2_conn_update_pkt_tx_time(q->conn, now);
}

uint64_t wk_quib_conn_expiry(wk_quib_conn *q)
{
    if (q->phase == PH_DONE) return UINT64_MAX;
    if (q->phase == PH_CLOSING || q->phase == PH_DRAINING) return q->close_deadline;
    uint64_t e = ngtcp2_conn_get_expiry(q->conn);
    if (q->fin_deadline && !q->fin_acked && q->fin_deadline < e) e = q->fin_deadline;
    return e;
}

void wk_quib_conn_timeout(wk_quib_conn *q, uint64_t now)
{
    q->now = now;
    if (q->phase == PH_DONE) return;
    if (q->phase == PH_CLOSING || q->phase == PH_DRAINING) {
        if (now >= q->close_deadline) enter_done(q);
        return;
    }
    if (q->fin_deadline && !q->fin_acked && now >= q->fin_deadline) {
        fail(q, WK_ERR_HOST_QUIB_FINISH_TIMEOUT, "our FIN was not acknowledged within %llu ms",
             (unsigned long long)(timeout_or(q->p.finish_timeout_ms) / MS));
        close_failed(q);
        return;
    }
    int rv = ngtcp2_conn_handle_expiry(q->conn, now);
    if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        fail(q, WK_ERR_HOST_QUIB_IDLE_TIMEOUT, "no packet from the peer within the QUIC idle timeout");
        enter_done(q);
    } else if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        fail(q, WK_ERR_HOST_QUIB_HANDSHAKE_TIMEOUT, "the QUIC handshake did not finish within %llu ms",
             (unsigned long long)(timeout_or(q->p.handshake_timeout_ms) / MS));
        enter_done(q);
    } else if (rv != 0) {
        liberr(q, rv, "timer");
    }
    settle_state(q);
}

/* ---- events ---- */
wk_quib_event wk_quib_conn_poll(wk_quib_conn *q)
{
    if (q->failed && !q->ev_failed) {
        q->ev_failed = true;
        return WK_QUIB_EV_FAILED;
    }
    if (!q->failed) {
        if (q->hs_done && !q->ev_opened) {
            q->ev_opened = true;
            return WK_QUIB_EV_OPENED;
        }
        if (q->ev_opened && q->shut_pending && !q->ev_shut) {
            q->ev_shut = true;
            return WK_QUIB_EV_SHUT;
        }
        if (q->ev_opened && q->ended_pending && !q->ev_ended && q->rx_pos == q->rx_len) {
            q->ev_ended = true;
            return WK_QUIB_EV_ENDED;
        }
    }
    if (q->phase == PH_DONE && !q->ev_closed) {
        q->ev_closed = true;
        return WK_QUIB_EV_CLOSED;
    }
    return WK_QUIB_EV_NONE;
}

const wk_error *wk_quib_conn_error(const wk_quib_conn *q) { return &q->fail; }
const uint8_t *wk_quib_conn_exporter(const wk_quib_conn *q) { return q->exporter; }
char wk_quib_conn_end_cause(const wk_quib_conn *q) { return q->end_cause; }
bool wk_quib_conn_opened(const wk_quib_conn *q) { return q->hs_done; }
bool wk_quib_conn_authorized(const wk_quib_conn *q) { return q->authorized; }
bool wk_quib_conn_done(const wk_quib_conn *q) { return q->phase == PH_DONE; }
bool wk_quib_conn_settled(const wk_quib_conn *q) { return settled(q); }

/* ---- the stream ---- */
const uint8_t *wk_quib_conn_peek(wk_quib_conn *q, size_t *n)
{
    *n = q->failed || !q->ev_opened ? 0 : q->rx_len - q->rx_pos;
    return *n ? q->rx + q->rx_pos : NULL;
}

void wk_quib_conn_consume(wk_quib_conn *q, size_t n)
{
    if (n > q->rx_len - q->rx_pos) n = q->rx_len - q->rx_pos;
    if (!n) return;
    q->rx_pos += n;
    if (q->rx_pos == q->rx_len) q->rx_pos = q->rx_len = 0;
    if (q->conn && q->phase == PH_ACTIVE && !q->peer_fin) {
        ngtcp2_conn_extend_max_stream_offset(q->conn, q->sid, n);
        ngtcp2_conn_extend_max_offset(q->conn, n);
    }
}

wk_code wk_quib_conn_shutdown(wk_quib_conn *q, uint64_t now, wk_error *err)
{
    if (settled(q)) { /* nothing more can be sent, and the peer is done: the finish is complete */
        q->fin_req = true;
        q->shut_pending = true;
        return WK_OK;
    }
    if (q->failed || q->phase != PH_ACTIVE || !q->hs_done)
        return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "quib half-close not possible now");
    if (q->fin_req) return WK_OK;
    q->fin_req = true;
    q->fin_deadline = now + timeout_or(q->p.finish_timeout_ms);
    return WK_OK;
}

void wk_quib_conn_authorize(wk_quib_conn *q)
{
    q->auth_req = true;
    check_authorized(q);
}

void wk_quib_conn_close(wk_quib_conn *q, uint64_t now)
{
    q->now = now;
    if (!q->conn || q->phase >= PH_CLOSING) {
        if (!q->conn) enter_done(q);
        return;
    }
    if (q->phase == PH_FINISHING) return;
    check_authorized(q);
    if (!q->failed && q->authorized && q->hs_done) {
        /* graceful finish: FIN (if not yet), its acknowledgement, then code 0 */
        if (!q->fin_req) {
            q->fin_req = true;
            q->fin_deadline = now + timeout_or(q->p.finish_timeout_ms);
        }
        q->phase = PH_FINISHING;
        settle_state(q);
        return;
    }
    ngtcp2_connection_close_error ce;
    if (q->close_set) ce = q->ccerr;
    else ngtcp2_connection_close_error_set_application_error(&ce, WK_QUIB_APP_ABORT, NULL, 0);
    enter_closing(q, &ce);
}

void wk_quib_conn_close_app(wk_quib_conn *q, uint64_t app_code, uint64_t now)
{
    q->now = now;
    if (!q->conn || q->phase >= PH_CLOSING) return;
    ngtcp2_connection_close_error ce;
    ngtcp2_connection_close_error_set_application_error(&ce, app_code, NULL, 0);
    enter_closing(q, &ce);
}

void wk_quib_conn_reset_stream(wk_quib_conn *q, uint64_t app_code)
{
    q->local_reset = true;
    if (q->conn && q->sid >= 0) ngtcp2_conn_shutdown_stream_write(q->conn, q->sid, app_code);
}

void wk_quib_conn_stop_sending(wk_quib_conn *q, uint64_t app_code)
{
    q->local_reset = true;
    if (q->conn && q->sid >= 0) ngtcp2_conn_shutdown_stream_read(q->conn, q->sid, app_code);
}

size_t wk_quib_conn_memory(const wk_quib_conn *q)
{
    size_t n = sizeof *q + q->mem_used + q->rx_cap;
    for (chunk *c = q->tx_head; c; c = c->next) n += sizeof *c;
    return n;
}

/* ---- listener helpers ---- */
int wk_quib_dgram_parse(const uint8_t *p, size_t n, wk_quib_dgram *out)
{
    ngtcp2_version_cid vc;
    int rv = ngtcp2_pkt_decode_version_cid(&vc, p, n, WK_QUIB_CIDLEN);
    memset(out, 0, sizeof *out);
    if (rv != 0 && rv != NGTCP2_ERR_VERSION_NEGOTIATION) return -1;
    out->long_header = n > 0 && (p[0] & 0x80);
    out->version = vc.version;
    out->dcid = vc.dcid;
    out->dcid_len = vc.dcidlen;
    out->scid = vc.scid;
    out->scid_len = vc.scidlen;
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) return 1;
    if (out->long_header && vc.version != NGTCP2_PROTO_VER_V1 && vc.version != 0) {
        /* versions ngtcp2 knows but we do not speak (v2 draft): negotiate v1, if big enough */
        return n >= 1200 ? 1 : -1;
    }
    return 0;
}

bool wk_quib_dgram_is_initial(const uint8_t *p, size_t n)
{
    ngtcp2_pkt_hd hd;
    return ngtcp2_accept(&hd, p, n) == 0 && hd.version == NGTCP2_PROTO_VER_V1 && hd.type == NGTCP2_PKT_INITIAL;
}

size_t wk_quib_write_version_negotiation(uint8_t *buf, size_t cap, const wk_quib_dgram *d, uint8_t random_byte)
{
    uint32_t sv[1] = {NGTCP2_PROTO_VER_V1};
    ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(buf, cap, random_byte, d->scid, d->scid_len, d->dcid,
                                                          d->dcid_len, sv, 1);
    return n > 0 ? (size_t)n : 0;
}

size_t wk_quib_write_stateless_reset(uint8_t *buf, size_t cap, const uint8_t *secret, const uint8_t *dcid,
                                     size_t dcid_len, size_t trigger_len, const uint8_t *rnd_bytes, size_t rnd_len)
{
    /* smaller than the trigger and at least the minimum (RFC 9000 10.3: 21 bytes) */
    if (trigger_len < 22) return 0;
    size_t len = trigger_len - 1;
    if (len > 41) len = 41;
    size_t randlen = len - NGTCP2_STATELESS_RESET_TOKENLEN;
    if (randlen > rnd_len || len > cap) return 0;
    uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
    ngtcp2_cid c;
    ngtcp2_cid_init(&c, dcid, dcid_len);
    if (ngtcp2_crypto_generate_stateless_reset_token(token, secret, WK_QUIB_RESET_SECRET_LEN, &c) != 0) return 0;
    ngtcp2_ssize n = ngtcp2_pkt_write_stateless_reset(buf, cap, token, rnd_bytes, randlen);
    return n > 0 ? (size_t)n : 0;
}

size_t wk_quib_write_refusal(uint8_t *buf, size_t cap, const wk_quib_dgram *d)
{
    ngtcp2_cid dcid, scid;
    /* the reply goes to the client's SCID, from the DCID it chose */
    ngtcp2_cid_init(&dcid, d->scid, d->scid_len);
    ngtcp2_cid_init(&scid, d->dcid, d->dcid_len);
    ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(buf, cap, d->version, &dcid, &scid, NGTCP2_CONNECTION_REFUSED,
                                                          NULL, 0);
    return n > 0 ? (size_t)n : 0;
}
