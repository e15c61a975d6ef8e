/* wirekit host: store I/O on libuv's worker threads, and memory accounting (storeio.h).
 *
 * A received Blob (wk_rx) fills one of two windows on the loop thread while a worker writes the
 * other into the store writer's temporary; the last job writes the rest and commits (fsync,
 * rename only when the hash matches, shared directory fsync). A Blob read for a response
 * (wk_tx) is read ahead one window on a worker while the session writes the previous one; the
 * store reader verifies the hash before the last window is handed out. Each object has at most
 * one job in flight and is freed only once that job has come back to the loop. */
#include "storeio.h"
#include <stdlib.h>
#include <string.h>

/* ---- memory ------------------------------------------------------------------------------ */
#define HDR 16

void *wk_host_alloc(wk_host_account *a, size_t n)
{
    if (n > SIZE_MAX - HDR) return NULL;
    wk_host_budget *b = a->b;
    if (b && b->limit && (n > b->limit || b->used > b->limit - n)) {
        a->refused = true;
        return NULL;
    }
    uint8_t *p = malloc(n + HDR);
    if (!p) return NULL;
    memcpy(p, &n, sizeof n);
    a->used += n;
    if (b) {
        b->used += n;
        if (b->used > b->peak) b->peak = b->used;
    }
    return p + HDR;
}

void wk_host_free(wk_host_account *a, void *ptr)
{
    if (!ptr) return;
    uint8_t *p = (uint8_t *)ptr - HDR;
    size_t n;
    memcpy(&n, p, sizeof n);
    a->used -= n;
    if (a->b) a->b->used -= n;
    free(p);
}

static void *acct_alloc(void *opaque, size_t n) { return wk_host_alloc(opaque, n); }
static void acct_free(void *opaque, void *p) { wk_host_free(opaque, p); }

wk_allocator wk_host_account_allocator(wk_host_account *a)
{
    wk_allocator al = {acct_alloc, acct_free, a};
    return al;
}

/* ---- receiving ---------------------------------------------------------------------------- */
#define RX_SUBMIT (64u << 10) /* a window goes to a worker once it holds this much */

struct wk_rx {
    wk_host_loop *loop;
    wk_store *st;
    wk_host_account *acct;
    const wk_rx_events *ev;
    void *ctx;
    uint8_t hash[32];
    uint64_t len, received;
    uint8_t *buf[2];
    size_t cap, fill[2];
    int cur;                 /* the window being filled */
    bool busy, ended, aborted, failed;
    wk_store_writer *w;      /* the worker's while busy */
    uv_work_t work;
    /* the job */
    int job_buf;
    size_t job_n;
    bool job_commit, job_abort;
    wk_code job_rc;
    wk_error job_err;
};

static void rx_free(wk_rx *rx)
{
    const wk_rx_events *ev = rx->ev;
    void *ctx = rx->ctx;
    wk_host_free(rx->acct, rx->buf[0]);
    wk_host_free(rx->acct, rx->buf[1]);
    wk_host_free(rx->acct, rx);
    if (ev) ev->released(ctx);
}

static void rx_work(uv_work_t *req)
{
    wk_rx *rx = req->data;
    rx->job_rc = WK_OK;
    if (rx->job_abort) {
        wk_store_writer_abort(rx->w);
        rx->w = NULL;
        return;
    }
    if (!rx->w) {
        rx->w = wk_store_writer_begin(rx->st, rx->len, &rx->job_err);
        if (!rx->w) {
            rx->job_rc = rx->job_err.code;
            return;
        }
    }
    if (rx->job_n && wk_store_writer_write(rx->w, rx->buf[rx->job_buf], rx->job_n, &rx->job_err) != WK_OK) {
        rx->job_rc = rx->job_err.code;
        wk_store_writer_abort(rx->w);
        rx->w = NULL;
        return;
    }
    if (rx->job_commit) {
        rx->job_rc = wk_store_writer_commit(rx->w, rx->hash, NULL, &rx->job_err);
        rx->w = NULL; /* commit frees it whatever the result */
    }
}

static void rx_submit(wk_rx *rx, int b, size_t n, bool commit, bool abort);

static void rx_after(uv_work_t *req, int status)
{
    (void)status;
    wk_rx *rx = req->data;
    rx->busy = false;
    if (rx->aborted) {
        if (rx->w) rx_submit(rx, 0, 0, false, true);
        else rx_free(rx);
        return;
    }
    if (rx->job_rc != WK_OK) {
        rx->failed = true;
        rx->ev->done(rx->ctx, rx, rx->hash, rx->len, &rx->job_err);
        rx_free(rx);
        return;
    }
    rx->fill[rx->job_buf] = 0;
    if (rx->job_commit) {
        rx->ev->done(rx->ctx, rx, rx->hash, rx->len, NULL);
        rx_free(rx);
        return;
    }
    /* the next window, if it is due */
    int c = rx->cur;
    if (rx->ended && rx->received == rx->len) rx_submit(rx, c, rx->fill[c], true, false);
    else if (rx->fill[c] >= RX_SUBMIT || (rx->cap && rx->fill[c] == rx->cap)) {
        rx_submit(rx, c, rx->fill[c], false, false);
        rx->cur ^= 1;
    }
    rx->ev->room(rx->ctx, rx);
}

static void rx_submit(wk_rx *rx, int b, size_t n, bool commit, bool abort)
{
    rx->job_buf = b;
    rx->job_n = n;
    rx->job_commit = commit;
    rx->job_abort = abort;
    rx->busy = true;
    rx->work.data = rx;
    if (uv_queue_work(rx->loop->uv, &rx->work, rx_work, rx_after) != 0) {
        /* cannot happen with a live loop; run it here rather than lose the Blob */
        rx_work(&rx->work);
        rx_after(&rx->work, 0);
    }
}

wk_rx *wk_rx_begin(wk_host_loop *loop, wk_store *st, wk_host_account *acct, const uint8_t hash[32],
                   uint64_t len, const wk_rx_events *ev, void *ctx)
{
    wk_rx *rx = wk_host_alloc(acct, sizeof *rx);
    if (!rx) return NULL;
    memset(rx, 0, sizeof *rx);
    rx->loop = loop;
    rx->st = st;
    rx->acct = acct;
    rx->ev = ev;
    rx->ctx = ctx;
    memcpy(rx->hash, hash, 32);
    rx->len = len;
    rx->cap = len < WK_RX_BUF ? (size_t)len : WK_RX_BUF;
    if (rx->cap) {
        rx->buf[0] = wk_host_alloc(acct, rx->cap);
        rx->buf[1] = len > rx->cap ? wk_host_alloc(acct, rx->cap) : NULL;
        if (!rx->buf[0] || (len > rx->cap && !rx->buf[1])) {
            rx->ev = NULL; /* never handed out: no released() */
            rx_free(rx);
            return NULL;
        }
    }
    return rx;
}

size_t wk_rx_room(const wk_rx *rx)
{
    if (rx->ended || rx->failed || rx->aborted) return 0;
    size_t room = rx->cap - rx->fill[rx->cur];
    uint64_t left = rx->len - rx->received;
    return left < room ? (size_t)left : room;
}

bool wk_rx_ready(const wk_rx *rx)
{
    uint64_t left = rx->len - rx->received;
    uint64_t need = left < WK_RX_SLICE ? left : WK_RX_SLICE;
    return wk_rx_room(rx) >= need;
}

void wk_rx_data(wk_rx *rx, const uint8_t *p, size_t n)
{
    if (!n) return;
    int c = rx->cur;
    memcpy(rx->buf[c] + rx->fill[c], p, n);
    rx->fill[c] += n;
    rx->received += n;
    if (!rx->busy && (rx->fill[c] >= RX_SUBMIT || rx->fill[c] == rx->cap) && rx->received < rx->len) {
        rx_submit(rx, c, rx->fill[c], false, false);
        rx->cur ^= 1;
    }
}

void wk_rx_end(wk_rx *rx)
{
    rx->ended = true;
    if (!rx->busy) rx_submit(rx, rx->cur, rx->fill[rx->cur], true, false);
}

void wk_rx_abort(wk_rx *rx)
{
    rx->aborted = true;
    if (rx->busy) return;
    if (rx->w) rx_submit(rx, 0, 0, false, true);
    else rx_free(rx);
}

/* ---- reading for responses ---------------------------------------------------------------- */
struct wk_tx {
    wk_host_loop *loop;
    wk_store *st;
    wk_host_account *acct;
    uint8_t hash[32];
    uint64_t len;
    wk_store_reader *r;        /* the worker's while busy */
    uint8_t *buf[2];
    size_t cap;
    uint64_t off[2];
    size_t n[2];
    bool ready[2];
    uint64_t next_off;         /* the next file offset to read */
    bool busy, closing, failed;
    wk_error err;
    int job_buf;
    wk_code job_rc;
    size_t job_got;
    wk_tx_ready_fn ready_fn;
    void (*released)(void *ctx);
    void *ctx;
    uv_work_t work;
};

static void tx_free(wk_tx *tx)
{
    void (*released)(void *) = tx->released;
    void *ctx = tx->ctx;
    wk_store_reader_close(tx->r);
    wk_host_free(tx->acct, tx->buf[0]);
    wk_host_free(tx->acct, tx->buf[1]);
    wk_host_free(tx->acct, tx);
    if (released) released(ctx);
}

static void tx_work(uv_work_t *req)
{
    wk_tx *tx = req->data;
    tx->job_rc = WK_OK;
    tx->job_got = 0;
    if (!tx->r) {
        uint64_t size = 0;
        tx->r = wk_store_reader_open(tx->st, tx->hash, &size, &tx->err);
        if (!tx->r) {
            tx->job_rc = tx->err.code;
            return;
        }
        if (size != tx->len) {
            tx->job_rc = wk_error_set(&tx->err, WK_ERR_HOST_STORE_CORRUPT, WK_NO_OFFSET,
                                      "a stored Blob's size changed (%llu bytes, indexed as %llu)",
                                      (unsigned long long)size, (unsigned long long)tx->len);
            return;
        }
    }
    uint64_t left = tx->len - tx->next_off;
    size_t want = left < tx->cap ? (size_t)left : tx->cap;
    tx->job_rc = wk_store_reader_read(tx->r, tx->buf[tx->job_buf], want, &tx->job_got, &tx->err);
}

static void tx_start(wk_tx *tx);

static void tx_after(uv_work_t *req, int status)
{
    (void)status;
    wk_tx *tx = req->data;
    tx->busy = false;
    if (tx->closing) {
        tx_free(tx);
        return;
    }
    if (tx->job_rc != WK_OK) {
        tx->failed = true;
    } else {
        int b = tx->job_buf;
        tx->off[b] = tx->next_off;
        tx->n[b] = tx->job_got;
        tx->ready[b] = true;
        tx->next_off += tx->job_got;
        tx_start(tx); /* read ahead into the other window */
    }
    tx->ready_fn(tx->ctx, tx);
}

/* Starts the next read when a window is free. */
static void tx_start(wk_tx *tx)
{
    if (tx->busy || tx->failed || tx->closing || tx->next_off >= tx->len) return;
    int b = !tx->ready[0] ? 0 : !tx->ready[1] ? 1 : -1;
    if (b < 0) return;
    if (!tx->buf[b]) {
        tx->buf[b] = wk_host_alloc(tx->acct, tx->cap);
        if (!tx->buf[b]) {
            if (b == 1) return; /* reading ahead is optional */
            tx->failed = true;
            wk_error_set(&tx->err, WK_ERR_NOMEM, WK_NO_OFFSET, "read window");
            return;
        }
    }
    tx->job_buf = b;
    tx->busy = true;
    tx->work.data = tx;
    if (uv_queue_work(tx->loop->uv, &tx->work, tx_work, tx_after) != 0) {
        tx_work(&tx->work);
        tx_after(&tx->work, 0);
    }
}

wk_tx *wk_tx_open(wk_host_loop *loop, wk_store *st, wk_host_account *acct, const uint8_t hash[32],
                  uint64_t len, wk_tx_ready_fn ready, void (*released)(void *ctx), void *ctx)
{
    wk_tx *tx = wk_host_alloc(acct, sizeof *tx);
    if (!tx) return NULL;
    memset(tx, 0, sizeof *tx);
    tx->loop = loop;
    tx->st = st;
    tx->acct = acct;
    memcpy(tx->hash, hash, 32);
    tx->len = len;
    tx->cap = len < WK_TX_BUF ? (size_t)(len ? len : 1) : WK_TX_BUF;
    tx->ready_fn = ready;
    tx->released = released;
    tx->ctx = ctx;
    tx->buf[0] = wk_host_alloc(acct, tx->cap);
    if (!tx->buf[0]) {
        wk_host_free(acct, tx);
        return NULL;
    }
    tx_start(tx);
    return tx;
}

wk_result wk_tx_data(wk_tx *tx, uint64_t offset, wk_in *view, wk_error *err)
{
    /* windows wholly before offset are done with */
    for (int b = 0; b < 2; b++)
        if (tx->ready[b] && tx->off[b] + tx->n[b] <= offset) tx->ready[b] = false;
    for (int b = 0; b < 2; b++) {
        if (tx->ready[b] && tx->off[b] <= offset && offset < tx->off[b] + tx->n[b]) {
            *view = (wk_in){tx->buf[b], tx->n[b], (size_t)(offset - tx->off[b])};
            tx_start(tx);
            return WK_DONE;
        }
    }
    if (tx->failed) {
        if (err) *err = tx->err;
        return WK_ERROR;
    }
    tx_start(tx);
    if (tx->failed) {
        if (err) *err = tx->err;
        return WK_ERROR;
    }
    return WK_NEED_INPUT;
}

const uint8_t *wk_tx_hash(const wk_tx *tx) { return tx->hash; }
uint64_t wk_tx_len(const wk_tx *tx) { return tx->len; }

void wk_tx_close(wk_tx *tx)
{
    if (!tx) return;
    tx->closing = true;
    if (!tx->busy) tx_free(tx);
}

/* ---- stat ----------------------------------------------------------------------------------- */
typedef struct stat_job {
    uv_work_t work;
    wk_store *st;
    uint8_t hash[32];
    uint64_t len;
    wk_code rc;
    wk_error err;
    wk_stat_fn fn;
    void *ctx;
} stat_job;

static void stat_work(uv_work_t *req)
{
    stat_job *j = req->data;
    j->rc = wk_store_stat(j->st, j->hash, &j->len, &j->err);
}

static void stat_after(uv_work_t *req, int status)
{
    (void)status;
    stat_job *j = req->data;
    j->fn(j->ctx, j->hash, j->len, j->rc == WK_OK ? NULL : &j->err);
    free(j);
}

bool wk_stat_start(wk_host_loop *loop, wk_store *st, const uint8_t hash[32], wk_stat_fn fn, void *ctx)
{
    stat_job *j = calloc(1, sizeof *j);
    if (!j) return false;
    j->work.data = j;
    j->st = st;
    memcpy(j->hash, hash, 32);
    j->fn = fn;
    j->ctx = ctx;
    if (uv_queue_work(loop->uv, &j->work, stat_work, stat_after) != 0) {
        free(j);
        return false;
    }
    return true;
}
