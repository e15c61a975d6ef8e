/* wirekit host layer: the only part of wirekit that does I/O (files, sockets, clocks).
 *
 * It sits on top of the public codec API (common.h, iltp.h) and is split into sections, one per
 * host facility. Errors use the host range of wk_code (900-999); I/O failures are
 * HOST_ERR_IO (Integration) with strerror in the message.
 */
#ifndef WIREKIT_HOST_H
#define WIREKIT_HOST_H

#include <wirekit/common.h>
#include <wirekit/iltp.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* =============================================================================================
 * Blob store (src/host/store.c): a content-addressed directory of ILTP Blobs.
 *
 * A Blob is addressed by its H3 hash: BLAKE3 of its content "Data-Length: N\n\n" + data
 * (wk_iltp_blob_hash). Layout:
 *   DIR/blobs/<B64A of the hash, 43 characters>   the raw data bytes (mode 0444 minus umask)
 *   DIR/blobs/.tmp-<pid>-<start>-<12 characters>  a write in progress, or left by a crash
 * Every Blob is written atomically: into a fresh temporary in DIR/blobs, fsync, rename to its
 * final name, fsync DIR/blobs. A crash leaves at most a temporary, never a partial Blob under a
 * final name. Temporaries are never listed. wk_store_open removes those whose owner (the process
 * id and process start time in the name) is no longer running, however recent, and keeps a live
 * process's; temporaries without an owner in their name (older versions) go once untouched for
 * WK_STORE_STALE_SECONDS. wk_store_gc removes them by idle time on demand.
 *
 * Data is hash-verified before it is stored (when the caller gives the expected hash) and again
 * when it is read (unless turned off with wk_store_set_verify). Data over WK_ILTP_BLOB_DATA_CAP
 * (32 MiB) is refused with WK_ERR_ARG (Integration; the message names ILTP_ERR_BLOB_TOO_LARGE).
 *
 * Concurrency: several processes, and several threads sharing one wk_store, may use a store at
 * once (each Blob write is an independent temporary plus rename). A wk_store_writer belongs to
 * one thread at a time. Files in DIR/blobs whose names are neither canonical 43-character B64A
 * nor .tmp-* are left alone and ignored.
 * =========================================================================================== */
typedef struct wk_store wk_store;
typedef struct wk_store_writer wk_store_writer;

/* Idle time after which wk_store_open treats a temporary as left by a crash. */
#define WK_STORE_STALE_SECONDS 3600
/* Length of a hash's B64A text (a Blob's file name). */
#define WK_STORE_HASH_TEXT_LEN 43

/* Opens the store at dir. With create, makes dir and dir/blobs when missing (the parent of dir
 * must exist). Removes (best effort) the temporaries of writers that are gone. Returns a handle to free
 * with wk_store_close, or NULL with *err set (HOST_ERR_IO, e.g. dir/blobs missing without create;
 * WK_ERR_NOMEM). dir is copied. */
wk_store *wk_store_open(const char *dir, bool create, wk_error *err);
/* Closes the store (NULL is fine). Writers begun on it must be committed or aborted first. */
void wk_store_close(wk_store *s);
/* Turns hash verification of wk_store_get on (the default) or off. */
void wk_store_set_verify(wk_store *s, bool verify);
/* Removes temporaries in dir/blobs idle for at least max_age_seconds (0: every temporary; only
 * safe when no writer is active on the store). *removed (may be NULL) gets the count. Returns
 * WK_OK or HOST_ERR_IO (removal continues past a failing entry; the first failure is reported). */
wk_code wk_store_gc(wk_store *s, uint64_t max_age_seconds, size_t *removed, wk_error *err);

/* Stores data[0..len) as a Blob. If expect_hash is non-NULL the data's hash must equal it,
 * otherwise HOST_ERR_HASH_MISMATCH (PeerProtocol) and nothing is written. The hash goes to
 * out_hash (may be NULL). Idempotent: when a file with exactly these bytes is already stored,
 * nothing is written and *existed (may be NULL) is true; a present but damaged file is replaced.
 * Errors: WK_ERR_ARG (over the Blob cap), HOST_ERR_HASH_MISMATCH, HOST_ERR_IO,
 * WK_ERR_NOMEM. data may be NULL when len is 0. */
wk_code wk_store_put(wk_store *s, const uint8_t *data, size_t len, const uint8_t *expect_hash,
                     uint8_t out_hash[32], bool *existed, wk_error *err);

/* Streaming write of one Blob of exactly len data bytes, hashed as it arrives: begin, any number
 * of writes, then commit or abort. Returns NULL with *err set (WK_ERR_ARG over the Blob cap,
 * HOST_ERR_IO, WK_ERR_NOMEM). The temporary exists from begin until commit or abort. */
wk_store_writer *wk_store_writer_begin(wk_store *s, uint64_t len, wk_error *err);
/* Appends p[0..n) (copied to the file, not kept). More than the declared length in total is
 * WK_ERR_ARG. After any error the writer is failed: its temporary is already removed and the
 * only valid calls are commit (which returns WK_ERR_STATE) and abort. */
wk_code wk_store_writer_write(wk_store_writer *w, const uint8_t *p, size_t n, wk_error *err);
/* Finishes the Blob and frees the writer whatever the result. Refuses (removing the temporary) a
 * byte count other than the declared length (WK_ERR_ARG) and, when expect_hash is non-NULL, a
 * hash other than expect_hash (HOST_ERR_HASH_MISMATCH, PeerProtocol). On WK_OK the Blob is
 * stored and durable, its hash in out_hash (may be NULL). */
wk_code wk_store_writer_commit(wk_store_writer *w, const uint8_t *expect_hash, uint8_t out_hash[32],
                               wk_error *err);
/* Removes the temporary and frees the writer (NULL is fine). */
void wk_store_writer_abort(wk_store_writer *w);

/* True if a Blob file for hash is present (its content is not read). */
bool wk_store_has(wk_store *s, const uint8_t hash[32]);
/* Reads the Blob with this hash into a malloc'd buffer (*data; the caller frees it; never NULL on
 * success, even for an empty Blob) of *len bytes. Verifies the hash unless turned off.
 * Errors: HOST_ERR_NOT_FOUND (Usage: no such Blob), HOST_ERR_STORE_CORRUPT (Integration: the
 * file is not a regular file, is over 32 MiB, or fails its hash), HOST_ERR_IO, WK_ERR_NOMEM. */
wk_code wk_store_get(wk_store *s, const uint8_t hash[32], uint8_t **data, size_t *len, wk_error *err);
/* Lists the hashes of the stored Blobs, sorted by hash bytes (which is also B64A text order):
 * *hashes is a malloc'd array of *count hashes (the caller frees it; NULL when count is 0).
 * Only regular files named by canonical 43-character B64A count; nothing is read or verified.
 * Errors: HOST_ERR_IO, WK_ERR_NOMEM. */
wk_code wk_store_list(wk_store *s, uint8_t (**hashes)[32], size_t *count, wk_error *err);

/* Streaming read of one Blob, in order, for a writer that cannot hold it whole: open, reads of
 * any size, close. The data is hashed as it is read; the read that reaches the end verifies the
 * hash (unless turned off with wk_store_set_verify) and fails with HOST_ERR_STORE_CORRUPT instead
 * of returning that last piece when it does not match, or when the file changed size. One
 * thread at a time per reader. Errors: HOST_ERR_NOT_FOUND, HOST_ERR_STORE_CORRUPT, HOST_ERR_IO,
 * WK_ERR_NOMEM. *len (may be NULL) gets the data length. */
typedef struct wk_store_reader wk_store_reader;
wk_store_reader *wk_store_reader_open(wk_store *s, const uint8_t hash[32], uint64_t *len, wk_error *err);
/* Reads the next min(cap, what is left) bytes into buf; *got says how many (0 at the end). */
wk_code wk_store_reader_read(wk_store_reader *r, uint8_t *buf, size_t cap, size_t *got, wk_error *err);
void wk_store_reader_close(wk_store_reader *r);
/* The data length of a stored Blob from its file's size (nothing read): WK_OK, HOST_ERR_NOT_FOUND,
 * HOST_ERR_STORE_CORRUPT (not a regular file, or over 32 MiB), HOST_ERR_IO. */
wk_code wk_store_stat(wk_store *s, const uint8_t hash[32], uint64_t *len, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Store index (src/host/index.c): the store's Blobs in memory (hash, data length, the sequence
 * number under which each was added), for sessions to advertise and answer from without a
 * directory listing per round. Built from the directory once (names and sizes, nothing read),
 * then updated by the host on every put it makes or notices. Not thread-safe: the host's loop
 * thread owns it. Entries are never removed (a Blob deleted behind the store's back fails when
 * it is read).
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_store_index wk_store_index;
/* An empty index. */
wk_store_index *wk_store_index_create(wk_error *err);
/* An index of every Blob file in s (HOST_ERR_IO, WK_ERR_NOMEM). */
wk_store_index *wk_store_index_load(wk_store *s, wk_error *err);
void wk_store_index_free(wk_store_index *x);
/* Adds a Blob: true if it was new (it gets the next sequence number), false if already there or
 * out of memory (*nomem, may be NULL, says which). */
bool wk_store_index_add(wk_store_index *x, const uint8_t hash[32], uint64_t len, bool *nomem);
bool wk_store_index_has(const wk_store_index *x, const uint8_t hash[32], uint64_t *len, uint64_t *seq);
/* The first hash after `after` (NULL: the first) in byte order with a sequence number at most
 * max_seq; false when none. */
bool wk_store_index_next(wk_store_index *x, const uint8_t *after, uint64_t max_seq, uint8_t out[32]);
uint64_t wk_store_index_seq(const wk_store_index *x);
size_t wk_store_index_count(const wk_store_index *x);
/* The index as a session's store operations (ctx = x). */
wk_iltp_store_ops wk_store_index_ops(wk_store_index *x);

/* ===== end of Blob store ==================================================================== */

/* ---------------------------------------------------------------------------------------------
 * Proof assurance (Lace-060 "Stream roles and proof-assurance resolution"; wk_iltp_assurance in
 * iltp.h), resolved once per carrier by the host from the carrier's automatic assurance and one
 * optional override:
 *   automatic: QUIB exporter -> ChannelBound(exporter32); canonical wss -> ConfidentialChannel;
 *              otherwise -> Disabled
 *   override Disabled -> Disabled
 *   override TrustConfidentialChannel -> ChannelBound when available, else ConfidentialChannel
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_host_assurance_override {
    WK_HOST_OVERRIDE_NONE = 0,      /* automatic */
    WK_HOST_OVERRIDE_DISABLED,
    WK_HOST_OVERRIDE_TRUST_CONFIDENTIAL_CHANNEL
} wk_host_assurance_override;

/* The assurance of a carrier: scheme is the carrier's scheme, verified_tls says a wss carrier
 * verified the certificate chain and hostname, has_exporter says a QUIB carrier holds its
 * 32-byte exporter. Pure function of its arguments. */
wk_iltp_assurance wk_host_assurance_resolve(wk_iltp_scheme scheme, bool verified_tls, bool has_exporter,
                                            wk_host_assurance_override override);

/* ---------------------------------------------------------------------------------------------
 * Blob sync over carriers (src/host/sync.c, libuv): `wirekit iltp sync`. A listener (side0)
 * serves many concurrent sessions in one event loop, or one with `once`; a connector (side1)
 * runs one session to fixed point and closes cleanly. Nonce seeds come from getrandom().
 * The carriers (stdio, unix:, tcp:, ws:, wss: and quib:) live one per file in src/host/ behind the
 * carrier interface of src/host/carrier.h (ws.c runs over tcp.c, and for wss over tls.c).
 *
 * quib: (Lace-060 QUIB, QUIC Interlace Binding; src/host/quib.c over the sans-I/O connection of
 * src/host/quib_conn.c, the only file that calls ngtcp2 0.12; GnuTLS 3.7 for TLS 1.3). Decisions:
 * - Handshake data: both sides offer exactly the ALPN `QUIB/1`; after the handshake each side
 *   itself compares gnutls_alpn_get_selected_protocol() with those six bytes (GnuTLS completes a
 *   handshake with no ALPN even with GNUTLS_ALPN_MANDATORY). Anything else is
 *   WK_ERR_HOST_QUIB_PROFILE, a transport-profile failure, and the connection is closed with the
 *   TLS alert no_application_protocol.
 * - Exporter: gnutls_prf_rfc5705 with the 44-byte label lace-🖧/quib/peer-proof-channel-binding-v1,
 *   context "iltp", 32 bytes, once the handshake completes (not gnutls_prf_early). It gives the
 *   carrier ChannelBound assurance (override Disabled suppresses the proof; the trust override
 *   keeps the binding) and feeds the proof's Channel-Binding-Hash and the Seal's Mark input.
 * - One client-opened bidirectional stream carries ILTP; QUIC v1 only (a listener answers other
 *   versions with Version Negotiation listing v1; a connector fails with WK_ERR_HOST_QUIB_VERSION).
 * - Settlement: authorization is the session at 050 fixed point with an empty codec writer and
 *   every batch written, and takes effect once every byte is in the QUIC send stream. After it, a
 *   peer application close with code 0 (PeerClose) or an authenticated stateless reset
 *   (PeerStatelessReset) is a successful end; before it, a zero-code close is
 *   ILTP_ERR_PREMATURE_EOF and a reset WK_ERR_HOST_QUIB_STATELESS_RESET. A nonzero application
 *   close, a transport close, RESET_STREAM and STOP_SENDING always fail (WK_ERR_HOST_QUIB_*).
 * - Writes are retained until acknowledged (ngtcp2 does not copy stream data), at most 1 MiB;
 *   stream and connection credit (1 MiB windows, never auto-tuned) is returned only as the
 *   session consumes. A graceful finish sends FIN, waits for its acknowledgement within the
 *   transport timeout, closes with application code 0 and waits out the closing period (3 PTO);
 *   a failed or unauthorized close sends application code 1 at once.
 * - The client verifies the server's certificate chain (ca_file, else the system store) and the
 *   address's host name (IP literals against IP SANs); the listener presents cert_file/key_file.
 * - A listener serves many connections on one UDP socket, routed by connection ID; unknown short
 *   headers get stateless resets (tokens keyed by a per-listener secret), refused connections
 *   (max_sessions) a CONNECTION_REFUSED close. The QUIC idle timeout and the handshake and finish
 *   deadlines are transport_timeout_ms (keep-alive at half of it); the carrier's memory is
 *   charged to max_memory.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_host_sync_opts {
    wk_iltp_address addr;            /* stdio, unix:, tcp:, ws:, wss: or quib: */
    bool listen;                     /* listen (side0) or connect (side1) */
    bool once;                       /* listener: serve one session, then return */
    const char *store_dir;           /* the Blob store (created if missing) */
    const char *decode, *encode;     /* offers for the 0.13 form (NULL: none) */
    wk_iltp_form form;               /* 0: 0.13 */
    int level;                       /* compression level, 0: default */
    uint64_t phase_timeout_ms;       /* 0: none */
    uint64_t budget_prefacing, budget_establishment, budget_round; /* 0: defaults */
    bool verbose;                    /* one line per item as it passes, on log */
    bool progress;                   /* a progress line on log while transferring (drawn only
                                      * when log is a terminal) */
    bool json;                       /* one JSON summary object per session, a line each, on out */
    bool watch;                      /* connector: stay at fixed point, syncing new Blobs both
                                      * ways until SIGINT/SIGTERM (a listener always watches) */
    FILE *log;                       /* summaries and errors (NULL: stderr) */
    FILE *out;                       /* "listening on ADDR", JSON summaries (NULL: stdout) */
    /* listener limits, each a typed refusal or close (0: the default) */
    unsigned max_sessions;           /* sessions at once (default 256); one more is refused */
    uint64_t max_memory;             /* bytes for all sessions' codec, queue and buffer memory
                                      * (default 1 GiB) */
    uint64_t idle_timeout_ms;        /* a session at fixed point silent this long is closed
                                      * (default 600000; UINT64_MAX: never) */
    /* transport settings, passed to the carrier */
    wk_host_assurance_override assurance_override;
    uint64_t transport_timeout_ms;   /* each transport wait (connect, handshakes, QUIC idle and
                                      * finish); 0: 30 s */
    const char *cert_file, *key_file, *ca_file; /* TLS carriers (wss:, quib:) */
    uint64_t ws_max_message;         /* ws/wss: largest received message (0: 16 MiB) */
} wk_host_sync_opts;

#define WK_HOST_MAX_SESSIONS_DEFAULT 256u
#define WK_HOST_MAX_MEMORY_DEFAULT ((uint64_t)1 << 30)
#define WK_HOST_IDLE_TIMEOUT_DEFAULT_MS 600000u
/* How long a bounded completion waits for the peer's end after ours. */
#define WK_HOST_CLOSE_TIMEOUT_MS 5000u
/* How long SIGINT/SIGTERM waits for sessions to reach fixed point and close cleanly; a second
 * signal ends them at once. */
#define WK_HOST_INTERRUPT_GRACE_MS 10000u

/* Runs the event loop until the connector's session ends, or the listener is done (`once`) or
 * interrupted (SIGINT, SIGTERM: no new sessions; each session closes cleanly at fixed point).
 * Returns the exit status of the last session for a connector or `once` (0 clean, 2 peer protocol
 * failure, 4 transport failure, 1 local failure, with *err for failures before any session), 0
 * for a listener that was interrupted. */
int wk_host_sync_run(const wk_host_sync_opts *o, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
