/* wirekit host: the machinery shared by the carriers over libuv streams (uvstream.c): stdio,
 * unix and tcp differ only in how their stream is opened. Internal to src/host. */
#ifndef WK_HOST_UVSTREAM_H
#define WK_HOST_UVSTREAM_H
#include "carrier.h"

typedef struct wk_uvstream wk_uvstream;
struct wk_uvstream {
    wk_carrier c;                /* first: a wk_uvstream is a wk_carrier */
    union { uv_tcp_t tcp; uv_pipe_t pipe; uv_stream_t stream; uv_handle_t handle; } h;
    uv_pipe_t wpipe;             /* stdio: stdout (h.pipe is stdin) */
    bool h_init, wpipe_init;     /* which handles were initialized (to close) */
    /* set by the carrier file before start */
    void (*dial)(wk_uvstream *s); /* connector: starts connecting (NULL: already connected) */
    uint64_t timeout_ms;         /* bound on dialling */
    struct sockaddr_storage dial_addr; /* tcp: the resolved address to dial */
    /* requests (the carrier files use creq for their connect) */
    uv_connect_t creq;
    uv_write_t wreq;
    uv_shutdown_t sreq;
    /* private to uvstream.c */
    uv_idle_t idle;              /* deferred events: opened, failed, redelivery of a held tail */
    uv_timer_t timer;            /* the dial deadline */
    int open_handles;
    bool started, opened, want_read, reading, eof, writing, shutting, shut, closing, dead;
    bool pend_open, pend_fail;
    wk_error pend_err;
    uint8_t *held;               /* the unconsumed tail of the last read */
    size_t held_len, held_pos;
};

/* Allocates a stream carrier with its idle and timer handles initialized on the loop; the caller
 * initializes s->h (uv_tcp_init / uv_pipe_init, then sets s->h_init) and, for stdio, s->wpipe
 * (then s->wpipe_init). addr (copied) is the canonical address; its scheme picks the ops.
 * timeout_ms bounds dialling (0: WK_CARRIER_TRANSPORT_TIMEOUT_MS); the assurance resolves from
 * the scheme's default (Disabled) and override. NULL: out of memory. Once
 * allocated, a stream is released with wk_carrier_close (no callback while c.ev is NULL). */
wk_uvstream *wk_uvstream_new(wk_host_loop *loop, const wk_iltp_address *addr, uint64_t timeout_ms,
                             wk_host_assurance_override override);
/* The stream is connected (from a connect callback, or at accept): opened() follows from the
 * loop. Stops the dial deadline. */
void wk_uvstream_connected(wk_uvstream *s);
/* Setup failed: failed(err) follows from the loop. */
void wk_uvstream_setup_failed(wk_uvstream *s, const wk_error *err);
/* "host:port" of a connected TCP peer, or a fallback text, into s->c.peer. */
void wk_uvstream_peer_name(wk_uvstream *s);

#endif

/* A listener over a libuv stream server (unix, tcp): the carrier file initializes and binds
 * h (then sets h_init) and calls wk_uvstream_listen; each connection is accepted into a
 * wk_uvstream made with init_client (uv_tcp_init or uv_pipe_init) and delivered through
 * l.accepted. */
typedef struct wk_uvstream_listener {
    wk_carrier_listener l;       /* first */
    union { uv_tcp_t tcp; uv_pipe_t pipe; uv_stream_t stream; uv_handle_t handle; } h;
    bool h_init, closing;
    uint64_t timeout_ms;
    wk_host_assurance_override override;
    bool is_tcp;                 /* accepted streams are uv_tcp_t (else uv_pipe_t) */
} wk_uvstream_listener;

/* Allocates a listener for cfg->addr (copied; the carrier file fixes the port after binding). */
wk_uvstream_listener *wk_uvstream_listener_new(wk_host_loop *loop, const wk_carrier_config *cfg, bool is_tcp);
/* uv_listen on the bound handle. WK_OK or HOST_ERR_LISTEN. */
wk_code wk_uvstream_listen(wk_uvstream_listener *ls, int backlog, wk_error *err);
/* Releases a listener that never listened (after a bind failure). */
void wk_uvstream_listener_discard(wk_uvstream_listener *ls);
