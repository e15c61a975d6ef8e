/* The ws: carrier (src/host/ws.c) over a scripted inner carrier, without sockets: the read-side
 * flow control. The owner consumes part of a slice, which pauses the carrier; more frames arrive
 * from the inner carrier; every byte must reach the owner once, in order.
 *
 * Found by the CI's python3-websockets server test (host_ws, under ASan on a loaded machine): the
 * owner asked to read again (its output drained) and, before the carrier's idle callback had handed
 * over the rest of the held slice, the inner carrier delivered the next socket read. The frame
 * reader then reused the buffer the held rest lived in, and the session saw foreign bytes
 * (ILTP_ERR_ITEM_LEAD). The scripted inner carrier reproduces both orders exactly. */
#include "wk_test.h"
#include "carrier.h" /* white-box: src/host is on the include path */

/* ---- a scripted inner carrier: records writes; the test plays its events ----------------------- */
typedef struct mock {
    wk_carrier c; /* first */
    uint8_t wrote[4096];
    size_t wrote_len;
    bool reading, closed;
} mock;

static void m_start(wk_carrier *c) { (void)c; }
static void m_read(wk_carrier *c, bool on) { ((mock *)c)->reading = on; }
static wk_code m_write(wk_carrier *c, const uint8_t *p, size_t n, wk_error *err)
{
    (void)err;
    mock *m = (mock *)c;
    size_t k = n < sizeof m->wrote - m->wrote_len ? n : sizeof m->wrote - m->wrote_len;
    memcpy(m->wrote + m->wrote_len, p, k);
    m->wrote_len += k;
    return WK_OK;
}
static wk_code m_half_close(wk_carrier *c, wk_error *err) { (void)c, (void)err; return WK_OK; }
static void m_close(wk_carrier *c)
{
    mock *m = (mock *)c;
    if (m->closed) return;
    m->closed = true;
    c->ev->closed(c);
}
static size_t m_memory(const wk_carrier *c) { (void)c; return 0; }
static const wk_carrier_ops mock_ops = {.name = "mock", .start = m_start, .read = m_read, .write = m_write,
                                        .half_close = m_half_close, .close = m_close, .memory = m_memory};

/* ---- the owner: takes at most `budget` bytes per received() ----------------------------------- */
static struct {
    bool opened, failed, closed;
    size_t budget;
    uint8_t got[1 << 16];
    size_t got_len;
} own;

static void o_opened(wk_carrier *c) { (void)c; own.opened = true; }
static size_t o_received(wk_carrier *c, const uint8_t *p, size_t n)
{
    (void)c;
    size_t k = n < own.budget ? n : own.budget;
    if (k > sizeof own.got - own.got_len) k = sizeof own.got - own.got_len;
    memcpy(own.got + own.got_len, p, k);
    own.got_len += k;
    return k;
}
static void o_ended(wk_carrier *c) { (void)c; }
static void o_written(wk_carrier *c) { (void)c; }
static void o_shut(wk_carrier *c) { (void)c; }
static void o_failed(wk_carrier *c, const wk_error *e)
{
    (void)c;
    own.failed = true;
    fprintf(stderr, "carrier failed: %s %s\n", wk_error_name(e->code), e->msg);
}
static void o_closed(wk_carrier *c) { (void)c; own.closed = true; }
static const wk_carrier_events owner_events = {o_opened, o_received, o_ended, o_written, o_shut, o_failed, o_closed};

/* A masked binary frame (a client's) of payload p[0..n), n < 65536. Returns its size. */
static size_t client_frame(uint8_t *f, const uint8_t *p, size_t n)
{
    static const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t h = 0;
    f[h++] = 0x82;
    if (n < 126) f[h++] = (uint8_t)(0x80 | n);
    else {
        f[h++] = 0x80 | 126;
        f[h++] = (uint8_t)(n >> 8);
        f[h++] = (uint8_t)n;
    }
    memcpy(f + h, key, 4);
    h += 4;
    for (size_t i = 0; i < n; i++) f[h + i] = p[i] ^ key[i % 4];
    return h + n;
}

static void run_loop(wk_host_loop *l)
{
    for (int i = 0; i < 8; i++) uv_run(l->uv, UV_RUN_NOWAIT);
}

/* One scenario. paused_inner: the next frame arrives while the owner is still paused (the carrier
 * must leave it with the inner carrier and take it after the owner reads again); else it arrives
 * after the owner asked to read again but before the loop ran the carrier's idle callback. */
static void scenario(bool paused_inner)
{
    const char *what = paused_inner ? "next frame while paused" : "next frame before the idle callback";
    memset(&own, 0, sizeof own);
    own.budget = (size_t)-1;
    wk_host_loop loop;
    wk_error e;
    REQUIRE(wk_host_loop_init(&loop, NULL, &e) == WK_OK);
    mock *m = calloc(1, sizeof *m);
    REQUIRE(m);
    m->c.ops = &mock_ops;
    m->c.loop = &loop;
    snprintf(m->c.peer, sizeof m->c.peer, "mock");
    wk_iltp_address addr;
    static const char a[] = "ws:127.0.0.1:1/interlace";
    REQUIRE(wk_iltp_address_parse(a, sizeof a - 1, &addr, &e) == WK_OK);
    wk_carrier_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.addr = addr;
    wk_carrier *c = wk_carrier_ws_over(&loop, &m->c, true, &addr, &cfg, &e);
    REQUIRE(c);
    c->ev = &owner_events;
    wk_carrier_start(c);
    m->c.ev->opened(&m->c);

    static const char req[] = "GET /interlace HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                              "Sec-WebSocket-Version: 13\r\n\r\n";
    CHECK(m->c.ev->received(&m->c, (const uint8_t *)req, sizeof req - 1) == sizeof req - 1);
    CHECKF(own.opened && m->wrote_len > 12 && memcmp(m->wrote, "HTTP/1.1 101", 12) == 0, "%s: upgrade answered", what);
    m->c.ev->written(&m->c);
    wk_carrier_read(c, true);

    /* two frames of distinct bytes; the owner takes 100 bytes of the first, then pauses */
    uint8_t pa[1000], pb[700], want[1700], fa[1100], fb[800];
    for (size_t i = 0; i < sizeof pa; i++) pa[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof pb; i++) pb[i] = (uint8_t)(i * 13 + 200);
    memcpy(want, pa, sizeof pa);
    memcpy(want + sizeof pa, pb, sizeof pb);
    size_t na = client_frame(fa, pa, sizeof pa), nb = client_frame(fb, pb, sizeof pb);
    own.budget = 100;
    CHECKF(m->c.ev->received(&m->c, fa, na) == na, "%s: the first frame is taken whole", what);
    CHECKF(own.got_len == 100, "%s: the owner took %zu bytes, want 100", what, own.got_len);

    if (paused_inner) {
        size_t took = m->c.ev->received(&m->c, fb, nb);
        CHECKF(took == 0, "%s: the carrier took %zu bytes while its owner was paused", what, took);
        own.budget = (size_t)-1;
        wk_carrier_read(c, true);
        run_loop(&loop);
        CHECKF(m->reading, "%s: the inner carrier was asked to read again", what);
        CHECKF(m->c.ev->received(&m->c, fb, nb) == nb, "%s: the second frame is taken after the resume", what);
    } else {
        own.budget = (size_t)-1;
        wk_carrier_read(c, true); /* its idle callback has not run yet */
        CHECKF(m->c.ev->received(&m->c, fb, nb) == nb, "%s: the second frame is taken", what);
        run_loop(&loop);
    }
    CHECKF(!own.failed, "%s: no failure", what);
    CHECKF(own.got_len == sizeof want && memcmp(own.got, want, sizeof want) == 0,
           "%s: the owner got %zu bytes, want the 1700 bytes of both frames in order%s", what, own.got_len,
           own.got_len == sizeof want ? " (same length, other bytes)" : "");

    wk_carrier_close(c);
    run_loop(&loop);
    CHECKF(own.closed && m->closed, "%s: closed() after close", what);
    free(m);
    uv_run(loop.uv, UV_RUN_DEFAULT);
    wk_host_loop_close(&loop);
}

int main(void)
{
    scenario(false);
    scenario(true);
    return wk_test_summary("host_ws_carrier");
}
