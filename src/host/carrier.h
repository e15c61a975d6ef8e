/* wirekit host: the event loop and the carrier interface (internal to src/host, not installed).
 *
 * A carrier is one bidirectional byte stream that one ILTP session runs over: stdio, a Unix
 * socket, a TCP connection, and later a WebSocket (ws:, wss:) or a QUIC stream (quib:). The
 * sync application (sync.c) owns the sans-I/O wk_iltp_session and drives it from carrier
 * events; it never knows which carrier it runs on. Each carrier lives in its own file
 * (stdio.c, unix.c, tcp.c; ws.c and quib.c plug in the same way) and is registered in one table
 * (wk_carrier_kind_for, loop.c).
 *
 * Shape: libuv-style callbacks. The application calls the carrier through wk_carrier_ops (read,
 * write, half-close, close, ...); the carrier calls the application back through
 * wk_carrier_events. Everything runs on the host loop's thread; no call blocks.
 *
 * Lifecycle of one carrier
 *   1. A connector gets it from kind->connect(); a listener's kind->listen() delivers each new
 *      one through the listener's accepted() callback (transport-level accept: TCP accept, the
 *      first QUIC Initial of a new connection). The owner sets c->ev and c->owner, then calls
 *      start(c), or close(c) to refuse it (a listener limit).
 *   2. start(c) runs the transport's own setup: connect, TLS handshake, HTTP upgrade, QUIC
 *      handshake. Every such wait has the carrier's own deadline (cfg->transport_timeout_ms).
 *      Success is ev->opened(c) (never from inside start itself); failure is ev->failed(c, err).
 *      c->assurance (and the exporter for ChannelBound) is final when opened() is called.
 *   3. Bytes flow both ways at once (full duplex):
 *      - read(c, true) asks for input; each arrival is ev->received(c, p, n), which returns how
 *        many bytes it consumed. Consuming fewer than n pauses reading: the carrier keeps the
 *        rest (bounded: it is the tail of one transport read or message) and offers it again
 *        after the next read(c, true), from the loop (not from inside that call). read(c, false)
 *        pauses at any time. This is the read-side flow control: a carrier stops pulling from
 *        the kernel (TCP, Unix, stdio), stops returning stream credit (QUIB:
 *        ngtcp2_conn_extend_max_stream_offset only by what received() consumed), or stops
 *        reading frames (ws), so the peer is slowed by its own transport and the host's memory
 *        stays bounded. A carrier that must buffer transport bytes while paused (TLS records,
 *        a WebSocket frame) keeps a bounded buffer; its overflow is a transport failure.
 *      - write(c, p, n) hands over one batch. One write is in flight at a time; p[0..n) stays
 *        valid and unchanged until ev->written(c). written() means the carrier no longer needs
 *        p: the bytes are in the kernel, or copied into the carrier's own bounded retention
 *        (QUIB keeps bytes until acknowledged: ngtcp2 does not copy stream data). Writes never
 *        wait for reads and reads never wait for writes.
 *      - ev->ended(c) reports the peer's end of its direction at a transport boundary: TCP or
 *        Unix FIN, stdin EOF, a WebSocket close frame, a QUIC stream FIN, or (QUIB, after
 *        authorize) a zero-code application close or an authenticated stateless reset. The
 *        owner may still write after it (the listener's end mark follows the connector's).
 *   4. half_close(c) after the last written(): no more bytes from us. TCP/Unix/stdio shut the
 *      write side; ws sends its close frame (1000) after every final byte; QUIB sends FIN.
 *      ev->shut(c) follows once the final bytes are written and, where the transport can tell,
 *      acknowledged (QUIB: FIN acknowledged). The owner keeps reading until ended().
 *   5. close(c) releases the carrier at any time, dropping unwritten bytes (a terminal local
 *      failure closes at once). It may be called from inside any callback. No callback but
 *      ev->closed(c) follows; closed() is the last one, after which the carrier's memory is gone.
 *      ev->failed(c, err) reports a transport failure (typed, category Transport): the owner
 *      then calls close(c). "Close or error while bytes remain unwritten" is the owner's
 *      failure to report (it knows whether output was pending).
 *
 * Settlement (QUIB, Lace-060 "QUIB post-fixed-point settlement"): the owner calls authorize(c)
 * once the session is at fixed point, its codec writer is empty and the last written() came.
 * The carrier then completes its own part (every final byte entered the QUIC send stream) before
 * treating the transport as settled. Before authorization a carrier whose clean end depends on it
 * reports a zero-code peer close as failed() with ILTP_ERR_PREMATURE_EOF and a stateless reset as
 * a transport failure; after it, as ended(). A nonzero application close, a transport close,
 * RESET_STREAM or STOP_SENDING is always failed(). Carriers with no such notion leave authorize
 * NULL (TCP's FIN is the boundary EOF; the session judges whether it is clean).
 *
 * Canonical address and proof assurance: c->address is the canonical Transport(address) of the
 * carrier (a connector: the address it dialled; an accepted carrier: its listener's address with
 * the bound port). c->assurance is resolved exactly once by wk_host_assurance_resolve from the
 * carrier's automatic assurance (Lace-060's resolution table: QUIB exporter -> ChannelBound,
 * canonical wss -> ConfidentialChannel after certificate and hostname verification, otherwise
 * Disabled) and the configured override. c->peer is text for logs only.
 *
 * Memory: memory(c) returns the bytes the carrier holds now (buffers, TLS and QUIC state it
 * allocated); the application charges it to the session for --max-memory. Carriers allocate
 * with malloc; a carrier's per-connection memory is bounded by its own constants.
 *
 * Timers: a carrier that needs its own timers (TLS and WebSocket close handshakes, QUIC
 * retransmission and idle timers from ngtcp2_conn_get_expiry) creates uv_timer_t handles on
 * c->loop->uv and closes them before it calls closed(). The application's phase, idle and
 * completion deadlines are its own business.
 *
 * How a new carrier plugs in (ws.c over wslay + GnuTLS, quib.c over ngtcp2 + GnuTLS):
 *   - embed wk_carrier as the first member of its connection struct and fill c->ops with its
 *     wk_carrier_ops; embed wk_carrier_listener in its listener struct;
 *   - implement kind->listen and kind->connect, and add one row to the table in loop.c;
 *   - take its settings from wk_carrier_config (TLS files, WebSocket limits are already there);
 *   - report its errors with codes from its own slice of the host range (include/wirekit/
 *     common.h: 940-969 ws/wss, 970-999 quib);
 *   - a listener serving many connections on one socket (QUIB: one UDP socket, datagrams routed
 *     to connections by connection ID) delivers each connection as its own carrier and keeps
 *     the shared socket until its last carrier has called closed() after the listener's close;
 *   - message framing (WebSocket messages, QUIC packets) stays inside the carrier: received()
 *     sees bytes in order, items may span messages, one message may hold many items.
 * Nothing in the session (src/iltp/session.c) or the sync application changes for a new
 * carrier.
 */
#ifndef WK_HOST_CARRIER_H
#define WK_HOST_CARRIER_H

#include <wirekit/host.h>
#include <uv.h>

typedef struct wk_host_loop wk_host_loop;
typedef struct wk_carrier wk_carrier;
typedef struct wk_carrier_listener wk_carrier_listener;

/* =============================================================================================
 * The event loop (loop.c): one libuv loop, the clock, and the worker pool.
 * =========================================================================================== */
struct wk_host_loop {
    uv_loop_t *uv;
    FILE *log; /* diagnostics (never NULL after init) */
};

/* Initializes *l over libuv's default loop (log NULL: stderr). Returns WK_OK or HOST_ERR_IO. */
wk_code wk_host_loop_init(wk_host_loop *l, FILE *log, wk_error *err);
/* Runs the loop until nothing is active. */
void wk_host_loop_run(wk_host_loop *l);
/* Runs pending close callbacks and releases the loop's resources (after the last handle closed). */
void wk_host_loop_close(wk_host_loop *l);
/* Milliseconds of the loop's monotonic clock (updated once per loop iteration). */
uint64_t wk_host_loop_now(const wk_host_loop *l);

/* =============================================================================================
 * Carrier configuration: what the CLI's options say about the transport.
 * =========================================================================================== */
typedef struct wk_carrier_config {
    wk_iltp_address addr;              /* the address to listen on or dial */
    wk_host_assurance_override assurance_override; /* --trust-confidential-channel etc. */
    uint64_t transport_timeout_ms;     /* bound on each transport wait (connect, handshakes,
                                        * close handshakes); 0: WK_CARRIER_TRANSPORT_TIMEOUT_MS */
    int backlog;                       /* listen backlog (0: 256) */
    /* TLS (wss:, quib:): PEM files. The client verifies the chain against ca_file (NULL: the
     * system store) and the hostname of addr.host; the server presents cert_file / key_file. */
    const char *cert_file, *key_file, *ca_file;
    uint64_t ws_max_message;           /* ws/wss: largest received message (0: 16 MiB) */
} wk_carrier_config;

#define WK_CARRIER_TRANSPORT_TIMEOUT_MS 30000u

/* =============================================================================================
 * Carriers
 * =========================================================================================== */

/* Callbacks from a carrier to its owner (the sync application). All are required. */
typedef struct wk_carrier_events {
    /* The transport is set up (connected, handshakes done): bytes may flow, c->assurance is final. */
    void (*opened)(wk_carrier *c);
    /* Bytes received p[0..n) (borrowed for the call). Returns how many were consumed (<= n);
     * fewer than n pauses reading and the carrier keeps the rest for the next read(c, true). */
    size_t (*received)(wk_carrier *c, const uint8_t *p, size_t n);
    /* The peer ended its direction at a transport boundary. No received() follows. */
    void (*ended)(wk_carrier *c);
    /* The write in flight is done; its buffer is the owner's again. */
    void (*written)(wk_carrier *c);
    /* The half-close is complete: the final bytes are written (and acknowledged where the
     * transport can tell). */
    void (*shut)(wk_carrier *c);
    /* A transport failure (or a premature close, see settlement). The owner closes the carrier. */
    void (*failed)(wk_carrier *c, const wk_error *err);
    /* The carrier is released; c must not be used after this returns. */
    void (*closed)(wk_carrier *c);
} wk_carrier_events;

/* Calls from the owner to a carrier (through the inline wrappers below). */
typedef struct wk_carrier_ops {
    const char *name;                  /* scheme name, e.g. "tcp" */
    void (*start)(wk_carrier *c);
    void (*read)(wk_carrier *c, bool on);
    wk_code (*write)(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err);
    wk_code (*half_close)(wk_carrier *c, wk_error *err);
    void (*close)(wk_carrier *c);
    size_t (*memory)(const wk_carrier *c);
    void (*authorize)(wk_carrier *c);  /* NULL: the carrier has no settlement rule */
} wk_carrier_ops;

/* The part of every carrier the owner sees. A carrier embeds it as its first member. */
struct wk_carrier {
    const wk_carrier_ops *ops;
    wk_host_loop *loop;
    const wk_carrier_events *ev;       /* set by the owner before start */
    void *owner;                       /* the owner's object */
    wk_iltp_address address;           /* canonical Transport(address) */
    char peer[96];                     /* the other end, for logs ("127.0.0.1:40312", "stdio") */
    wk_iltp_assurance assurance;       /* final at opened() */
    bool has_exporter;                 /* ChannelBound: the 32-byte exporter is in exporter */
    uint8_t exporter[32];
};

/* Starts the carrier's transport setup; opened() or failed() follows from the loop. */
static inline void wk_carrier_start(wk_carrier *c) { c->ops->start(c); }
/* Asks for received() calls (on) or pauses them (off). Idempotent. */
static inline void wk_carrier_read(wk_carrier *c, bool on) { c->ops->read(c, on); }
/* Hands over p[0..n) (n > 0), which stays valid until written(). One write at a time; WK_ERR_STATE
 * with another in flight, after half_close or once failed. Later failures come as failed(). */
static inline wk_code wk_carrier_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    return c->ops->write(c, p, n, err);
}
/* No more bytes from us, after the last written(); shut() follows. */
static inline wk_code wk_carrier_half_close(wk_carrier *c, wk_error *err) { return c->ops->half_close(c, err); }
/* Releases the carrier (idempotent); only closed() follows. */
static inline void wk_carrier_close(wk_carrier *c) { c->ops->close(c); }
/* Bytes the carrier holds now. */
static inline size_t wk_carrier_memory(const wk_carrier *c) { return c->ops->memory(c); }
/* Settlement authorized (QUIB); nothing for carriers without the rule. */
static inline void wk_carrier_authorize(wk_carrier *c) { if (c->ops->authorize) c->ops->authorize(c); }

/* =============================================================================================
 * Listeners
 * =========================================================================================== */
typedef struct wk_carrier_listener_ops {
    /* Stops accepting and releases the listener once its carriers are gone (idempotent). The
     * carriers it delivered keep running. */
    void (*close)(wk_carrier_listener *l);
} wk_carrier_listener_ops;

struct wk_carrier_listener {
    const wk_carrier_listener_ops *ops;
    wk_host_loop *loop;
    wk_iltp_address address;           /* canonical, with the bound port ("listening on") */
    /* Set by the owner: a new carrier. The owner sets c->ev and c->owner and calls
     * wk_carrier_start(c), or wk_carrier_close(c) to refuse it. */
    void (*accepted)(wk_carrier_listener *l, wk_carrier *c);
    void *owner;
};

static inline void wk_carrier_listener_close(wk_carrier_listener *l) { l->ops->close(l); }

/* =============================================================================================
 * The carrier table (loop.c): one row per scheme that has a carrier.
 * =========================================================================================== */
typedef struct wk_carrier_kind {
    wk_iltp_scheme scheme;
    /* Binds and listens on cfg->addr; the listener's address carries the bound port. Returns
     * WK_OK with *out, or an error (HOST_ERR_RESOLVE, HOST_ERR_LISTEN, ...). stdio's listener
     * delivers one carrier (stdin/stdout) and then accepts nothing more. */
    wk_code (*listen)(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out,
                      wk_error *err);
    /* Makes a carrier that dials cfg->addr once started. */
    wk_code (*connect)(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err);
} wk_carrier_kind;

/* The carrier kind for a scheme; NULL if this build has none. */
const wk_carrier_kind *wk_carrier_kind_for(wk_iltp_scheme scheme);

/* The kinds, one per carrier file. */
extern const wk_carrier_kind wk_carrier_stdio;  /* stdio.c */
extern const wk_carrier_kind wk_carrier_unix;   /* unix.c */
extern const wk_carrier_kind wk_carrier_tcp;    /* tcp.c */
extern const wk_carrier_kind wk_carrier_ws;     /* ws.c: HTTP upgrade and frames over tcp.c */
extern const wk_carrier_kind wk_carrier_wss;    /* ws.c over tls.c (GnuTLS) over tcp.c */
extern const wk_carrier_kind wk_carrier_quib;   /* quib.c (over quib_conn.c) */
/* A carrier may wrap another: ws: can run its HTTP upgrade and frames over a carrier from
 * wk_carrier_tcp (being its owner), and wss: put GnuTLS between the two. */
/* A ws: carrier over any inner carrier (owned from now on; closed on failure): ws.c's own
 * constructor, which tests use to drive the carrier over a scripted inner carrier. server picks
 * the side (a server reads the upgrade request); addr is its canonical address. NULL with *err. */
wk_carrier *wk_carrier_ws_over(wk_host_loop *loop, wk_carrier *inner, bool server, const wk_iltp_address *addr,
                               const wk_carrier_config *cfg, wk_error *err);

/* Resolves a carrier address's host and port with the system resolver (it blocks: call it when
 * a carrier or listener is made, before the loop runs) for socktype (SOCK_STREAM, SOCK_DGRAM):
 * the first address into *ss and its length into *len. WK_OK or HOST_ERR_RESOLVE. */
wk_code wk_host_resolve(const wk_iltp_address *a, int socktype, struct sockaddr_storage *ss, socklen_t *len,
                        wk_error *err);

/* Formats a libuv failure as a typed host error: code (HOST_ERR_CONNECT, ...), "what: strerror". */
wk_code wk_host_uv_error(wk_error *err, wk_code code, int uv_status, const char *what);

#endif
