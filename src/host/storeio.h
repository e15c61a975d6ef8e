/* wirekit host: store I/O off the event loop, and memory accounting (storeio.c). Internal.
 *
 * Every file operation of a sync (creating, writing, fsyncing and renaming a received Blob's
 * temporary; reading and hashing a stored Blob for a response; looking at a file another process
 * stored) runs on libuv's worker threads (uv_queue_work); the loop thread only copies bytes into
 * and out of bounded buffers and learns the results in after-work callbacks. One session's fsync
 * therefore never stalls another session.
 *
 * Memory: each session has an account in the server's budget (--max-memory). The session's
 * allocator (its codecs, item buffers and queues) and the host's buffers for that session (the
 * write buffer, receive and read windows) are charged to it; an allocation that would take the
 * budget over its limit fails and marks the account `refused`, which the host reports as
 * WK_ERR_HOST_MEMORY_LIMIT. */
#ifndef WK_HOST_STOREIO_H
#define WK_HOST_STOREIO_H
#include "carrier.h"

/* ---- memory ---- */
typedef struct wk_host_budget {
    uint64_t limit;   /* 0: none */
    uint64_t used, peak;
} wk_host_budget;

typedef struct wk_host_account {
    wk_host_budget *b;
    uint64_t used;
    bool refused;     /* an allocation was refused because of the budget */
} wk_host_account;

/* n bytes charged to a (NULL: over budget, with a->refused set, or out of memory). */
void *wk_host_alloc(wk_host_account *a, size_t n);
void wk_host_free(wk_host_account *a, void *p);
/* An allocator over the account (opaque = a). */
wk_allocator wk_host_account_allocator(wk_host_account *a);

/* ---- receiving a Blob into the store ---- */
#define WK_RX_BUF (128u << 10)   /* each of the two windows */
#define WK_RX_SLICE (64u << 10)  /* the largest slice the session hands out at once */

typedef struct wk_rx wk_rx;
typedef struct wk_rx_events {
    /* A window was written: room grew (the owner may resume reading). */
    void (*room)(void *ctx, wk_rx *rx);
    /* Done: committed (err NULL) or failed (err; the temporary is gone). rx is freed after. */
    void (*done)(void *ctx, wk_rx *rx, const uint8_t hash[32], uint64_t len, const wk_error *err);
    /* The object is gone (after done, or after an abort's job): the account it charged is no
     * longer referred to. */
    void (*released)(void *ctx);
} wk_rx_events;

/* A Blob of len data bytes with this hash on its way into st: NULL when its window cannot be
 * allocated (the account refused or out of memory). */
wk_rx *wk_rx_begin(wk_host_loop *loop, wk_store *st, wk_host_account *acct, const uint8_t hash[32],
                   uint64_t len, const wk_rx_events *ev, void *ctx);
/* Bytes it takes now without waiting for a worker (at most what is left of the Blob). */
size_t wk_rx_room(const wk_rx *rx);
/* True when it can take the next slice whatever its size: room for WK_RX_SLICE bytes or for
 * the rest of the Blob. */
bool wk_rx_ready(const wk_rx *rx);
/* Copies p[0..n) (n <= room). */
void wk_rx_data(wk_rx *rx, const uint8_t *p, size_t n);
/* Every byte is in (and the session verified the hash): write the rest, fsync, rename on match,
 * then done(). */
void wk_rx_end(wk_rx *rx);
/* Drops it: no done(); the temporary is removed on a worker; rx is freed when its job ends. */
void wk_rx_abort(wk_rx *rx);

/* ---- reading a stored Blob for a response ---- */
#define WK_TX_BUF (128u << 10)

typedef struct wk_tx wk_tx;
/* A piece became ready (or the read failed): call wk_tx_data again. */
typedef void (*wk_tx_ready_fn)(void *ctx, wk_tx *tx);

/* released(ctx) follows the object's end (after close, once its job is back). */
wk_tx *wk_tx_open(wk_host_loop *loop, wk_store *st, wk_host_account *acct, const uint8_t hash[32],
                  uint64_t len, wk_tx_ready_fn ready, void (*released)(void *ctx), void *ctx);
/* The data from offset: WK_DONE with *view set over it (borrowed until the next call with a
 * larger offset, or close), WK_NEED_INPUT when it is still being read (ready() follows), WK_ERROR
 * (read failure; the last piece is never handed out unless the whole file matched its hash). */
wk_result wk_tx_data(wk_tx *tx, uint64_t offset, wk_in *view, wk_error *err);
/* The Blob this reader serves. */
const uint8_t *wk_tx_hash(const wk_tx *tx);
uint64_t wk_tx_len(const wk_tx *tx);
/* Releases it (a read in flight finishes first, then it is freed; no ready() after close). */
void wk_tx_close(wk_tx *tx);

/* ---- a file another process stored ---- */
typedef void (*wk_stat_fn)(void *ctx, const uint8_t hash[32], uint64_t len, const wk_error *err);
/* Stats the Blob file for hash on a worker, then calls fn on the loop. */
bool wk_stat_start(wk_host_loop *loop, wk_store *st, const uint8_t hash[32], wk_stat_fn fn, void *ctx);

#endif
