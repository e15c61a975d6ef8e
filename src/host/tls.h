/* wirekit host: TLS over GnuTLS, the host's one TLS stack (internal to src/host).
 *
 * Two parts:
 *   - credentials and session setup, shared by every TLS user (wss: here, the QUIB carrier's
 *     QUIC handshake later): a server's certificate chain and key (--cert, --key), or a client's
 *     trust anchors (--ca FILE, else the system store); sessions negotiate TLS 1.2 or 1.3 only,
 *     and a client verifies the chain and the host name with gnutls_session_set_verify_cert
 *     (IP literals against IP-address SANs, names against DNS SANs; SNI only for names);
 *   - a TLS carrier (wk_carrier, carrier.h) layered over another carrier (a TCP connection), for
 *     wss:. It is non-blocking on the event loop: GnuTLS reads ciphertext through a pull
 *     function from the bytes the inner carrier delivered and writes through a push function into
 *     a bounded queue (GNUTLS_E_AGAIN when it is full); one inner write is in flight at a time.
 *     Flow control passes through: when the owner consumes fewer plaintext bytes than offered,
 *     the carrier stops calling gnutls_record_recv and leaves the unread ciphertext with the inner
 *     carrier, which stops reading the socket. Records at hand are decrypted into one plaintext
 *     slice of up to 64 KiB (four records), so the owner is called with slices as large as over
 *     TCP. Memory per connection: two ciphertext queues of WK_TLS_QUEUE bytes, the 64 KiB
 *     plaintext buffer, and GnuTLS's session state.
 *
 * Its events follow carrier.h. opened() comes after a complete handshake (and, for a client, a
 * verified certificate); ended() is the peer's close_notify; a TCP end without close_notify is a
 * failure (WK_ERR_HOST_TLS, "premature termination"). Errors: WK_ERR_HOST_TLS_HANDSHAKE (any
 * handshake failure or its deadline, e.g. bytes that are not TLS), WK_ERR_HOST_TLS_VERIFY (with
 * GnuTLS's description of the verification status: unknown issuer, expired, another host name),
 * WK_ERR_HOST_TLS (record layer), WK_ERR_HOST_TLS_CREDENTIALS (files that cannot be loaded).
 */
#ifndef WK_HOST_TLS_H
#define WK_HOST_TLS_H

#include "carrier.h"
#include <gnutls/gnutls.h>

#define WK_TLS_QUEUE (4 * (16384 + 512)) /* bytes of each ciphertext queue */

typedef struct wk_tls_creds wk_tls_creds;

/* Server credentials from PEM files (certificate chain, private key). NULL with *err
 * (WK_ERR_HOST_TLS_CREDENTIALS naming the file and GnuTLS's reason; WK_ERR_NOMEM). The result
 * holds one reference. */
wk_tls_creds *wk_tls_creds_server(const char *cert_file, const char *key_file, wk_error *err);
/* Client credentials: the trust anchors of ca_file (PEM), or the system store when ca_file is
 * NULL. NULL with *err as above (also when the system store holds no certificate). */
wk_tls_creds *wk_tls_creds_client(const char *ca_file, wk_error *err);
/* Takes or drops one reference (drop frees at zero; NULL is fine). */
wk_tls_creds *wk_tls_creds_ref(wk_tls_creds *c);
void wk_tls_creds_unref(wk_tls_creds *c);

/* Makes a GnuTLS session on creds: the server or client side, TLS 1.2 and 1.3 only, flags added
 * to gnutls_init's (e.g. GNUTLS_NONBLOCK; QUIC adds its own). A client verifies the peer
 * against hostname (required) and sends it as SNI when it is a name, not an IP literal. The
 * caller deinits the session. WK_OK or WK_ERR_HOST_TLS_HANDSHAKE / WK_ERR_NOMEM. */
wk_code wk_tls_session_new(gnutls_session_t *out, wk_tls_creds *creds, bool server, const char *hostname,
                           unsigned flags, wk_error *err);

/* A TLS carrier over inner (which it owns from now on: it sets inner->ev and inner->owner and
 * closes it). A client verifies the server as hostname. timeout_ms bounds the handshake (0: the
 * default). The carrier's address and peer text start as inner's; its assurance is left
 * Disabled (the carrier above resolves it). Takes a reference on creds. NULL with *err (then
 * inner is closed). */
wk_carrier *wk_tls_carrier_new(wk_host_loop *loop, wk_carrier *inner, wk_tls_creds *creds, bool server,
                               const char *hostname, uint64_t timeout_ms, wk_error *err);
/* True once the handshake completed: a client verified the chain and host name, a server
 * presented its certificate. */
bool wk_tls_carrier_verified(const wk_carrier *c);
/* The negotiated protocol and cipher, e.g. "TLS1.3 AES-256-GCM" (static storage; "" before). */
const char *wk_tls_carrier_cipher(const wk_carrier *c);

#endif
