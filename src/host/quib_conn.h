/* wirekit host: one QUIB connection (QUIC v1 + TLS 1.3, ngtcp2 0.12 and GnuTLS 3.7), sans I/O.
 * Internal to src/host (and the QUIB tests and fuzz target); not installed.
 *
 * quib_conn.c holds every ngtcp2 call of wirekit, and the GnuTLS setup of the QUIC handshake.
 * It does no I/O and reads no clock: the owner passes datagrams in (recv), takes datagrams out
 * (send), passes the time in nanoseconds and calls timeout at expiry. The carrier (quib.c) wraps
 * it with a UDP socket and libuv timers; the tests wrap it with an in-memory packet pipe and a
 * controlled clock. Lace-060 "QUIB" and issue 16's decisions, as implemented here:
 *
 * - Handshake data: both sides offer exactly the ALPN `QUIB/1` (GNUTLS_ALPN_MANDATORY). After the
 *   handshake each side itself compares gnutls_alpn_get_selected_protocol() with those six bytes
 *   (GnuTLS completes a handshake without ALPN even when it is mandatory); anything else is
 *   WK_ERR_HOST_QUIB_PROFILE and the connection is closed with CRYPTO_ERROR no_application_protocol.
 * - Exporter: gnutls_prf_rfc5705 with the 44-byte label lace-🖧/quib/peer-proof-channel-binding-v1,
 *   context "iltp", 32 bytes, taken once the handshake completes (never gnutls_prf_early).
 * - One client-opened bidirectional stream (stream 0) carries ILTP; transport parameters allow
 *   the server exactly one remote bidi stream and no uni streams, and the client none at all.
 *   QUIC v1 only (a listener answers other versions with Version Negotiation listing v1).
 * - Client certificate checks: chain against the CA file (or the system store) and the hostname
 *   (gnutls_session_set_verify_cert); an IP literal is checked against the IP SANs.
 * - Retained writes: ngtcp2 does not copy stream data, so accepted bytes stay in retention
 *   chunks (64 KiB each, at most retain_max in all) until acknowledged; write() copies into
 *   retention (the owner's buffer is free at once) and accepts only what fits.
 * - Flow control: the stream and connection windows (stream_window) are never auto-tuned;
 *   credit is returned only by consume(), i.e. as the owner consumes received bytes, so at most
 *   one window of received bytes is ever buffered.
 * - Settlement: authorize() marks the owner's part (050 fixed point, empty codec writer); it takes
 *   effect once every accepted byte has entered the QUIC send stream. After that a peer
 *   application close with code 0 (PeerClose) or an authenticated stateless reset
 *   (PeerStatelessReset) ends the peer's direction successfully (ENDED, and SHUT if our FIN was
 *   still unacknowledged); before it a zero-code close is ILTP_ERR_PREMATURE_EOF and a reset
 *   WK_ERR_HOST_QUIB_STATELESS_RESET. A nonzero application close, a transport close,
 *   RESET_STREAM and STOP_SENDING are always failures.
 * - Graceful finish: shutdown() sends FIN after the last byte and waits for its acknowledgement
 *   (SHUT) within finish_timeout_ms (else WK_ERR_HOST_QUIB_FINISH_TIMEOUT). close() of an
 *   authorized, unfailed connection finishes gracefully (FIN if not yet sent, its ack), then sends
 *   CONNECTION_CLOSE with application code 0 and waits out the closing period (3 PTO); any other
 *   close sends application code 1 (WK_QUIB_APP_ABORT) at once, or the transport error that
 *   failed the connection. A peer close is waited out as the draining period (3 PTO).
 * - Memory: ngtcp2 allocates through a counting allocator; memory() adds the retention and the
 *   receive buffer (GnuTLS's own state is not counted: about 20 KiB per connection).
 */
#ifndef WK_HOST_QUIB_CONN_H
#define WK_HOST_QUIB_CONN_H
#include <wirekit/common.h>
#include <sys/socket.h>

#define WK_QUIB_ALPN "QUIB/1"
#define WK_QUIB_ALPN_LEN 6
#define WK_QUIB_CIDLEN 16                     /* the length of every connection ID we issue */
#define WK_QUIB_MAX_DATAGRAM 1500             /* largest datagram send() writes */
#define WK_QUIB_STREAM_WINDOW (1u << 20)      /* default stream (and connection) window */
#define WK_QUIB_RETAIN_MAX (1u << 20)         /* default retention bound */
#define WK_QUIB_APP_ABORT 1u                  /* application error code of an aborting close */
#define WK_QUIB_RESET_SECRET_LEN 32

typedef struct wk_quib_tls wk_quib_tls;
typedef struct wk_quib_conn wk_quib_conn;

/* TLS credentials shared by connections. Server: cert_file and key_file (PEM) are required.
 * Client: ca_file (PEM) is the trust anchor, NULL for the system store. Returns NULL with *err
 * (WK_ERR_HOST_CARRIER, Integration: unreadable or invalid files). Free with wk_quib_tls_free
 * after the last connection using it. */
wk_quib_tls *wk_quib_tls_create(bool server, const char *cert_file, const char *key_file, const char *ca_file,
                                wk_error *err);
void wk_quib_tls_free(wk_quib_tls *t);

typedef struct wk_quib_addr {
    struct sockaddr_storage ss;
    socklen_t len;
} wk_quib_addr;

typedef struct wk_quib_params {
    bool server;
    const wk_quib_tls *tls;             /* borrowed; outlives the connection */
    const char *hostname;               /* client: the name the certificate must carry (SNI too,
                                         * unless it is an IP literal). Required for a client. */
    wk_quib_addr local, remote;         /* the path */
    const uint8_t *initial;             /* server: the client's first datagram (copied CIDs) */
    size_t initial_len;
    const uint8_t *reset_secret;        /* key of our stateless reset tokens (NULL: random ones);
                                         * a listener uses one secret for all its connections */
    uint64_t handshake_timeout_ms;      /* 0: 30 s */
    uint64_t idle_timeout_ms;           /* QUIC max_idle_timeout (0: 30 s); keep-alive at half */
    uint64_t finish_timeout_ms;         /* FIN acknowledgement and close waits (0: 30 s) */
    size_t stream_window;               /* 0: WK_QUIB_STREAM_WINDOW */
    size_t retain_max;                  /* 0: WK_QUIB_RETAIN_MAX */
    /* randomness for connection IDs, tokens and ngtcp2 (NULL: gnutls_rnd) */
    void (*rand)(void *ctx, uint8_t *p, size_t n);
    void *rand_ctx;
    /* server: a connection ID of ours became valid (add) or retired; the listener routes by it */
    void (*cid_event)(void *ctx, bool add, const uint8_t *cid, size_t len);
    void *cid_ctx;
    /* tests only: offer this ALPN instead ("" offers none) and skip the QUIB/1 check */
    const char *alpn;
} wk_quib_params;

/* Creates a connection. A client starts its handshake with the first send(); a server must be
 * fed p->initial through recv() next. Returns NULL with *err (WK_ERR_NOMEM, WK_ERR_ARG,
 * WK_ERR_HOST_CARRIER for a TLS setup failure). */
wk_quib_conn *wk_quib_conn_create(const wk_quib_params *p, uint64_t now_ns, wk_error *err);
/* Frees the connection and everything it holds (NULL is fine). No packet is sent. */
void wk_quib_conn_free(wk_quib_conn *q);

/* ---- datagrams and time ---- */
/* One received datagram (borrowed for the call) on the path from `remote`. */
void wk_quib_conn_recv(wk_quib_conn *q, const wk_quib_addr *remote, const uint8_t *pkt, size_t n, uint64_t now_ns);
/* Writes the next datagram into buf (cap >= WK_QUIB_MAX_DATAGRAM) and returns its length, or 0
 * when nothing is due now (pacing, congestion or flow control, or idle). */
size_t wk_quib_conn_send(wk_quib_conn *q, uint8_t *buf, size_t cap, uint64_t now_ns);
/* Datagrams worth writing in one burst now (ngtcp2's send quantum), at least 1. */
size_t wk_quib_conn_burst(wk_quib_conn *q);
/* Call after a burst of send() calls (ngtcp2's pacing). */
void wk_quib_conn_sent(wk_quib_conn *q, uint64_t now_ns);
/* The next time timeout() must run (UINT64_MAX: none). */
uint64_t wk_quib_conn_expiry(wk_quib_conn *q);
/* Handles every timer due at now (retransmission, acknowledgements, idle, pacing, deadlines). */
void wk_quib_conn_timeout(wk_quib_conn *q, uint64_t now_ns);

/* ---- events: edge-triggered, each reported once, in this order of priority ---- */
typedef enum wk_quib_event {
    WK_QUIB_EV_NONE = 0,
    WK_QUIB_EV_FAILED,   /* terminal failure: wk_quib_conn_error; the owner closes */
    WK_QUIB_EV_OPENED,   /* handshake complete and checked; the exporter is ready */
    WK_QUIB_EV_SHUT,     /* our FIN is acknowledged (or the peer settled after authorization) */
    WK_QUIB_EV_ENDED,    /* the peer's direction ended (FIN, or a settled close or reset) and
                          * every received byte was consumed */
    WK_QUIB_EV_CLOSED    /* closing or draining is over: free the connection */
} wk_quib_event;
wk_quib_event wk_quib_conn_poll(wk_quib_conn *q);
/* The failure reported by WK_QUIB_EV_FAILED (the first one; it stays). */
const wk_error *wk_quib_conn_error(const wk_quib_conn *q);
/* The 32-byte exporter (valid after OPENED). */
const uint8_t *wk_quib_conn_exporter(const wk_quib_conn *q);
/* How the peer's direction ended: 0 still open, 'F' FIN, 'C' PeerClose, 'R' PeerStatelessReset. */
char wk_quib_conn_end_cause(const wk_quib_conn *q);
/* True once the handshake completed. */
bool wk_quib_conn_opened(const wk_quib_conn *q);
/* True once authorization took effect (authorize() and every byte in the send stream). */
bool wk_quib_conn_authorized(const wk_quib_conn *q);
/* True once closing or draining is over (CLOSED was or will be reported): nothing more happens. */
bool wk_quib_conn_done(const wk_quib_conn *q);
/* True once the peer settled the connection after authorization (a zero-code application close
 * or an authenticated stateless reset), whatever ended its direction first. */
bool wk_quib_conn_settled(const wk_quib_conn *q);

/* ---- the ILTP stream ---- */
/* Received bytes waiting for the owner: *n of them at the returned pointer (valid until the next
 * call on q); NULL/0 when none. */
const uint8_t *wk_quib_conn_peek(wk_quib_conn *q, size_t *n);
/* The owner consumed n of the peeked bytes: returns n bytes of stream and connection credit. */
void wk_quib_conn_consume(wk_quib_conn *q, size_t n);
/* Bytes write() accepts now. After the peer settled the connection (PeerClose or
 * PeerStatelessReset after authorization) write() takes everything and drops it, and shutdown()
 * completes at once: the committed result stands and nothing more can reach the peer. */
size_t wk_quib_conn_room(const wk_quib_conn *q);
/* Copies up to room() bytes of p[0..n) into retention; returns how many. 0 after shutdown or a
 * failure. */
size_t wk_quib_conn_write(wk_quib_conn *q, const uint8_t *p, size_t n);
/* Half-close: FIN after the last accepted byte; SHUT follows its acknowledgement. */
wk_code wk_quib_conn_shutdown(wk_quib_conn *q, uint64_t now_ns, wk_error *err);
/* Settlement authorized by the owner (monotonic). */
void wk_quib_conn_authorize(wk_quib_conn *q);
/* Starts closing (see the header comment); CLOSED follows. Idempotent. */
void wk_quib_conn_close(wk_quib_conn *q, uint64_t now_ns);
/* Bytes held: ngtcp2's allocations, retention and the receive buffer. */
size_t wk_quib_conn_memory(const wk_quib_conn *q);

/* ---- misbehaviours, for test peers ---- */
/* Closes at once with this application error code (0 included, whatever the settlement). */
void wk_quib_conn_close_app(wk_quib_conn *q, uint64_t app_code, uint64_t now_ns);
/* Sends RESET_STREAM / STOP_SENDING with this code on the ILTP stream. */
void wk_quib_conn_reset_stream(wk_quib_conn *q, uint64_t app_code);
void wk_quib_conn_stop_sending(wk_quib_conn *q, uint64_t app_code);

/* ---- listener helpers (no connection state) ---- */
typedef struct wk_quib_dgram {
    bool long_header;
    uint32_t version;
    const uint8_t *dcid, *scid;        /* into the datagram */
    size_t dcid_len, scid_len;
} wk_quib_dgram;
/* Reads the version and connection IDs of a datagram (short headers: WK_QUIB_CIDLEN DCID).
 * Returns 0, 1 when the client's version is not QUIC v1 (answer with Version Negotiation), or
 * -1 for a datagram to drop. */
int wk_quib_dgram_parse(const uint8_t *p, size_t n, wk_quib_dgram *out);
/* True if the datagram is a client Initial a server may accept (QUIC v1). */
bool wk_quib_dgram_is_initial(const uint8_t *p, size_t n);
/* A Version Negotiation packet listing QUIC v1 in answer to d; returns its length (0: none). */
size_t wk_quib_write_version_negotiation(uint8_t *buf, size_t cap, const wk_quib_dgram *d, uint8_t random_byte);
/* A stateless reset for a short-header datagram of trigger_len bytes to our connection ID dcid
 * (token from secret); smaller than the trigger, per RFC 9000 10.3. Returns its length (0: the
 * trigger is too short to answer). rnd supplies the random bytes. */
size_t wk_quib_write_stateless_reset(uint8_t *buf, size_t cap, const uint8_t *secret, const uint8_t *dcid,
                                     size_t dcid_len, size_t trigger_len, const uint8_t *rnd, size_t rnd_len);
/* A CONNECTION_CLOSE with CONNECTION_REFUSED in an Initial packet answering the client Initial d
 * (a listener refusing a connection without creating one). Returns its length (0: none). */
size_t wk_quib_write_refusal(uint8_t *buf, size_t cap, const wk_quib_dgram *d);

#endif
