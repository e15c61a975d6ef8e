/* QUIB in one process, deterministically: two endpoints (wk_quib_conn + ILTP session + in-memory
 * store, tests/host/quib_drive.h) passing datagrams in memory, no sockets, a controlled clock.
 * Blob sync to fixed point under every offer pairing; packet loss, reordering and duplication at
 * chosen points; the settlement rules and each typed outcome (ALPN, certificate, premature close,
 * stateless reset before and after authorization, application close, RESET_STREAM,
 * STOP_SENDING, idle and handshake timeouts); stream backpressure with a bounded receiver.
 * Usage: test_quib VECTORS_DIR (tests/vectors). */
#include "wk_test.h"
#include "quib_drive.h"
#include <arpa/inet.h>

static const char *vdir;
static wk_quib_tls *server_tls, *client_tls, *stranger_tls;

/* ---- deterministic randomness ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static void det_rand(void *ctx, uint8_t *p, size_t n) { qd_rand(ctx ? ctx : &rng_state, p, n); }

static uint8_t reset_secret[WK_QUIB_RESET_SECRET_LEN] = {7, 7, 7};
static wk_quib_addr addr_server, addr_client;
typedef qd_pkt pkt;
typedef qd_net net;
enum { DELIVER = QD_DELIVER, DROP = QD_DROP, DUP = QD_DUP, DELAY = QD_DELAY };

typedef struct cfg {
    const char *dec[2], *enc[2];         /* [0] server, [1] client */
    const char *alpn[2];                 /* NULL: QUIB/1 */
    const char *hostname;                /* client: NULL "localhost" */
    const wk_quib_tls *client_tls;
    uint64_t idle_ms[2];
    uint64_t hs_ms;
    size_t window[2], retain[2];
    void (*hook)(qd_end *e, qd_point at);   /* the server's */
    void (*chook)(qd_end *e, qd_point at);  /* the client's */
    int (*fault)(void *ctx, int dir, uint64_t index, pkt *p);
    int blobs[2];                        /* count of 3000-byte Blobs on each side */
    size_t bulk[2];                      /* one Blob of this size on each side (0: none) */
} cfg;

static net *cur_net;
static size_t max_mem[2]; /* the largest wk_quib_conn_memory seen, per end */

/* Runs the pair until both are closed or the simulated time limit. e[0] server, e[1] client. */
static void run(qd_end e[2], const cfg *c, net *nw)
{
    memset(e, 0, 2 * sizeof *e);
    memset(nw, 0, sizeof *nw);
    cur_net = nw;
    nw->latency = 1000000; /* 1 ms each way */
    nw->fault = c->fault;
    nw->rand = det_rand;
    memcpy(nw->reset_secret, reset_secret, sizeof reset_secret);
    nw->server_addr = addr_server;
    nw->client_addr = addr_client;
    nw->server.tls = server_tls;
    nw->server.idle_timeout_ms = c->idle_ms[0];
    nw->server.handshake_timeout_ms = c->hs_ms;
    nw->server.stream_window = c->window[0];
    nw->server.retain_max = c->retain[0];
    nw->server.alpn = c->alpn[0];
    uint64_t now = 1000000000ull;
    for (int i = 0; i < 2; i++) {
        e[i].server = i == 0;
        e[i].decode = c->dec[i] ? c->dec[i] : "deflate12c,zstd20c";
        e[i].encode = c->enc[i] ? c->enc[i] : "zstd20c,deflate12c";
        e[i].assurance = WK_ILTP_ASSURANCE_CHANNEL_BOUND;
        e[i].hook = i == 0 ? c->hook : c->chook;
        e[i].now = now;
        qd_store_fill(&e[i].store, i + 1, c->blobs[i], 3000);
        if (c->bulk[i]) qd_store_fill(&e[i].store, 10 + i, 1, c->bulk[i]);
    }
    wk_quib_params p;
    memset(&p, 0, sizeof p);
    p.tls = c->client_tls ? c->client_tls : client_tls;
    p.hostname = c->hostname ? c->hostname : "localhost";
    p.local = addr_client;
    p.remote = addr_server;
    p.rand = det_rand;
    p.idle_timeout_ms = c->idle_ms[1];
    p.handshake_timeout_ms = c->hs_ms;
    p.stream_window = c->window[1];
    p.retain_max = c->retain[1];
    p.alpn = c->alpn[1];
    wk_error err;
    e[1].q = wk_quib_conn_create(&p, now, &err);
    if (!e[1].q) {
        fprintf(stderr, "client create: %s\n", err.msg);
        return;
    }
    uint64_t limit = now + 120ull * 1000000000ull;
    for (int step = 0; step < 2000000; step++) {
        if (!qd_pair_step(e, nw, &now, limit)) break;
        for (int i = 0; i < 2; i++) {
            size_t m = e[i].q ? wk_quib_conn_memory(e[i].q) : 0;
            if (m > max_mem[i]) max_mem[i] = m;
        }
        if ((e[0].closed || !e[0].q || qd_server_gone(nw)) && e[1].closed) break;
    }
}

static void cleanup(qd_end e[2], net *nw)
{
    qd_free(&e[0]);
    qd_free(&e[1]);
    free(nw->q);
    memset(nw, 0, sizeof *nw);
}

static bool clean(const qd_end *e) { return e->finished && e->status == 0; }

static void expect_synced(qd_end e[2], const char *label)
{
    CHECKF(clean(&e[0]) && clean(&e[1]), "%s: server %s / client %s", label, e[0].outcome, e[1].outcome);
    CHECKF(qd_store_equal(&e[0].store, &e[1].store), "%s: stores differ (%zu vs %zu)", label, e[0].store.n,
           e[1].store.n);
    CHECKF(e[0].closed && e[1].closed, "%s: not both closed", label);
    if (e[0].q && e[1].q) CHECK_MEM(wk_quib_conn_exporter(e[0].q), wk_quib_conn_exporter(e[1].q), 32);
    if (e[0].s && e[1].s) {
        wk_iltp_session_stats a, b;
        wk_iltp_session_stats_get(e[0].s, &a);
        wk_iltp_session_stats_get(e[1].s, &b);
        CHECKF(a.proof_verified && b.proof_verified, "%s: ChannelBound proofs not verified", label);
    }
}

/* ---- sync under every offer pairing ---- */
static void test_pairings(void)
{
    static const char *const lists[] = {"", "deflate12c", "zstd20c", "zstd20c,deflate12c"};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            cfg c;
            memset(&c, 0, sizeof c);
            c.enc[0] = lists[a];
            c.enc[1] = lists[b];
            c.dec[0] = lists[b][0] ? lists[b] : "deflate12c";
            c.dec[1] = lists[a];
            c.blobs[0] = 5 + a;
            c.blobs[1] = 3 + b;
            qd_end e[2];
            net nw;
            run(e, &c, &nw);
            char label[80];
            snprintf(label, sizeof label, "pairing '%s' / '%s'", lists[a], lists[b]);
            expect_synced(e, label);
            CHECK(e[0].store.n == (size_t)(8 + a + b));
            CHECK(wk_quib_conn_end_cause(e[0].q) == 'F');
            cleanup(e, &nw);
        }
}

/* ---- loss, reordering, duplication at chosen points ---- */
static int f_drop_first_initial(void *ctx, int dir, uint64_t i, pkt *p) { (void)ctx; (void)p; return dir == 0 && i == 0 ? DROP : DELIVER; }
static int f_drop_server_flight(void *ctx, int dir, uint64_t i, pkt *p) { (void)ctx; (void)p; return dir == 1 && i <= 1 ? DROP : DELIVER; }
static int f_mixed(void *ctx, int dir, uint64_t i, pkt *p)
{
    (void)ctx;
    (void)p;
    if (dir == 0) return i == 3 || i == 9 ? DROP : i % 7 == 5 ? DUP : i % 11 == 4 ? DELAY : DELIVER;
    return i == 2 || i == 40 || i == 41 || i == 300 ? DROP : i % 13 == 6 ? DUP : i % 17 == 3 ? DELAY : DELIVER;
}
static int f_bulk_loss(void *ctx, int dir, uint64_t i, pkt *p)
{
    (void)ctx;
    (void)p;
    if (i < 6) return DELIVER;
    return (i % 29 == 0) ? DROP : (i % 31 == 0) ? DELAY : (dir == 1 && i % 37 == 0) ? DUP : DELIVER;
}
static uint64_t last_idx[2];
static int f_drop_tail(void *ctx, int dir, uint64_t i, pkt *p)
{
    (void)ctx;
    (void)p;
    /* drop every server datagram past its index last_idx (the end of the session): FIN, close */
    return dir == 1 && i >= last_idx[1] && i < last_idx[1] + 3 ? DROP : DELIVER;
}

static void test_faults(void)
{
    struct { int (*f)(void *, int, uint64_t, pkt *); const char *name; int blobs; size_t bulk; } cases[] = {
        {f_drop_first_initial, "client Initial lost", 4, 0},
        {f_drop_server_flight, "server's first flight lost", 4, 0},
        {f_mixed, "loss, duplication and reordering", 30, 200000},
        {f_bulk_loss, "bulk with 1/29 loss", 20, 3u << 20},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cfg c;
        memset(&c, 0, sizeof c);
        c.fault = cases[k].f;
        c.blobs[0] = cases[k].blobs;
        c.blobs[1] = cases[k].blobs + 1;
        c.bulk[0] = c.bulk[1] = cases[k].bulk;
        qd_end e[2];
        net nw;
        run(e, &c, &nw);
        expect_synced(e, cases[k].name);
        cleanup(e, &nw);
    }
    /* the same run twice: the same verdict and stores; then drop the server's last datagrams */
    cfg c;
    memset(&c, 0, sizeof c);
    c.blobs[0] = 3;
    c.blobs[1] = 2;
    qd_end e[2];
    net nw;
    run(e, &c, &nw);
    expect_synced(e, "reference");
    last_idx[1] = nw.sent[1] - 3;
    cleanup(e, &nw);
    c.fault = f_drop_tail;
    run(e, &c, &nw);
    expect_synced(e, "server's FIN and close lost");
    cleanup(e, &nw);
}

/* ---- typed outcomes ---- */
static void h_close0(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) wk_quib_conn_close_app(e->q, 0, e->now), e->passive = true; }
static void h_close7(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) wk_quib_conn_close_app(e->q, 7, e->now), e->passive = true; }
static void h_reset_stream(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) wk_quib_conn_reset_stream(e->q, 5), e->passive = true; }
static void h_stop_sending(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) wk_quib_conn_stop_sending(e->q, 6), e->passive = true; }
static void h_forget_early(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) cur_net->server_forgot = true, e->passive = true; }
static void h_forget_late(qd_end *e, qd_point at) { if (at == QD_ENDED) cur_net->server_forgot = true, e->passive = true; }
static void h_close0_late(qd_end *e, qd_point at) { if (at == QD_ENDED) wk_quib_conn_close_app(e->q, 0, e->now), e->passive = true; }
/* the client closes with code 0 as soon as it is authorized, before its own FIN */
static void h_client_close0_authorized(qd_end *e, qd_point at)
{
    if (at == QD_FIXED_POINT) wk_quib_conn_close_app(e->q, 0, e->now), e->passive = true;
}
static void h_silent(qd_end *e, qd_point at) { if (at == QD_ESTABLISHED) cur_net->server_silent = true, e->passive = true; }

static void outcome(const cfg *c, wk_code want_client, wk_code want_server, const char *label)
{
    qd_end e[2];
    net nw;
    run(e, c, &nw);
    CHECKF(e[1].finished && (want_client ? e[1].err.code == want_client && e[1].status != 0 : e[1].status == 0),
           "%s: client %s", label, e[1].outcome);
    if (want_server != (wk_code)-1)
        CHECKF(e[0].finished && (want_server ? e[0].err.code == want_server : e[0].status == 0), "%s: server %s",
               label, e[0].outcome);
    CHECKF(e[1].closed, "%s: client not closed", label);
    if (getenv("WK_TEST_VERBOSE"))
        printf("%-40s client: %s\n%-40s server: %s\n", label, e[1].outcome, "", e[0].outcome);
    cleanup(e, &nw);
}

static void test_outcomes(void)
{
    cfg c;
    memset(&c, 0, sizeof c);
    c.blobs[0] = c.blobs[1] = 2;
    cfg x = c;
    x.alpn[0] = ""; /* the server offers no ALPN: the client's own check refuses */
    outcome(&x, WK_ERR_HOST_QUIB_PROFILE, WK_ERR_HOST_QUIB_PROFILE, "no ALPN");
    x = c;
    x.alpn[1] = "QUIB/2"; /* the client offers another: the server refuses */
    outcome(&x, WK_ERR_HOST_QUIB_PROFILE, WK_ERR_HOST_QUIB_PROFILE, "wrong ALPN offered");
    x = c;
    x.alpn[1] = ""; /* the client offers none */
    outcome(&x, WK_ERR_HOST_QUIB_PROFILE, WK_ERR_HOST_QUIB_PROFILE, "no ALPN offered");
    x = c;
    x.hostname = "wrong.example"; /* the certificate names localhost */
    outcome(&x, WK_ERR_HOST_QUIB_CERTIFICATE, WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "hostname");
    x = c;
    x.client_tls = stranger_tls; /* trusts another CA */
    outcome(&x, WK_ERR_HOST_QUIB_CERTIFICATE, WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "unknown CA");
    x = c;
    x.hook = h_close0;
    outcome(&x, WK_ERR_ILTP_PREMATURE_EOF, (wk_code)-1, "zero-code close before authorization");
    x = c;
    x.hook = h_close7;
    outcome(&x, WK_ERR_HOST_QUIB_APP_CLOSE, (wk_code)-1, "application close 7");
    x = c;
    x.hook = h_reset_stream;
    outcome(&x, WK_ERR_HOST_QUIB_RESET_STREAM, (wk_code)-1, "RESET_STREAM");
    x = c;
    x.hook = h_stop_sending;
    outcome(&x, WK_ERR_HOST_QUIB_STOP_SENDING, (wk_code)-1, "STOP_SENDING");
    x = c;
    x.hook = h_forget_early;
    outcome(&x, WK_ERR_HOST_QUIB_STATELESS_RESET, (wk_code)-1, "stateless reset before authorization");
    x = c;
    x.idle_ms[0] = x.idle_ms[1] = 2000;
    x.hook = h_silent;
    outcome(&x, WK_ERR_HOST_QUIB_IDLE_TIMEOUT, (wk_code)-1, "idle timeout");
    /* after authorization: a stateless reset and a zero-code close are successful settlements */
    qd_end e[2];
    net nw;
    /* identity both ways: boundary EOF at fixed point needs no end mark */
    x = c;
    x.enc[0] = x.enc[1] = "";
    x.hook = h_forget_late;
    run(e, &x, &nw);
    CHECKF(clean(&e[1]) && wk_quib_conn_end_cause(e[1].q) == 'R' && nw.resets > 0,
           "reset after authorization: client %s, cause %c", e[1].outcome, wk_quib_conn_end_cause(e[1].q));
    CHECK(qd_store_equal(&e[0].store, &e[1].store));
    cleanup(e, &nw);
    x = c;
    x.enc[0] = x.enc[1] = "";
    x.hook = h_close0_late;
    run(e, &x, &nw);
    CHECKF(clean(&e[1]) && wk_quib_conn_end_cause(e[1].q) == 'C', "close 0 after authorization: client %s, cause %c",
           e[1].outcome, wk_quib_conn_end_cause(e[1].q));
    cleanup(e, &nw);
    /* the listener side: a zero-code close after its authorization, before it half-closed: it
     * ends cleanly, its end mark and FIN dropped (the committed result stands) */
    x = c;
    x.enc[0] = x.enc[1] = "";
    x.chook = h_client_close0_authorized;
    int settled_runs = 0;
    for (int k = 0; k < 6; k++) {
        x.blobs[0] = 2 + k;
        run(e, &x, &nw);
        if (wk_quib_conn_authorized(e[0].q)) {
            settled_runs++;
            CHECKF(clean(&e[0]) && wk_quib_conn_end_cause(e[0].q) == 'C', "server after the client's early close 0: %s",
                   e[0].outcome);
            CHECKF(e[0].closed, "server closed");
        } else { /* the close overtook the server's fixed point: premature */
            CHECKF(e[0].err.code == WK_ERR_ILTP_PREMATURE_EOF, "server: %s", e[0].outcome);
        }
        cleanup(e, &nw);
    }
    CHECKF(settled_runs > 0, "no run had the server authorized before the close");
}

static int f_server_mute(void *ctx, int dir, uint64_t i, pkt *p) { (void)ctx; (void)i; (void)p; return dir == 1 ? DROP : DELIVER; }

static void test_handshake_timeout(void)
{
    cfg c;
    memset(&c, 0, sizeof c);
    c.hs_ms = 3000;
    c.fault = f_server_mute;
    outcome(&c, WK_ERR_HOST_QUIB_HANDSHAKE_TIMEOUT, (wk_code)-1, "handshake timeout");
}

/* ---- backpressure: retention and the receive buffer stay within their bounds ---- */
static void test_backpressure(void)
{
    cfg c;
    memset(&c, 0, sizeof c);
    c.bulk[0] = 6u << 20;
    c.window[0] = c.window[1] = 256u << 10;
    c.retain[0] = c.retain[1] = 512u << 10;
    qd_end e[2];
    net nw;
    max_mem[0] = max_mem[1] = 0;
    run(e, &c, &nw);
    expect_synced(e, "small windows");
    /* retention (512 KiB in 64 KiB chunks) + receive buffer (the 256 KiB window, grown by
     * doubling) + ngtcp2's state: bounded whatever the Blob size (6 MiB here) */
    for (int i = 0; i < 2; i++)
        CHECKF(max_mem[i] < (512u << 10) + 2 * (256u << 10) + (512u << 10), "end %d held %zu bytes", i, max_mem[i]);
    CHECK(max_mem[0] > (256u << 10)); /* the sender's retention filled */
    if (getenv("WK_TEST_VERBOSE")) printf("peak memory: server %zu, client %zu\n", max_mem[0], max_mem[1]);
    cleanup(e, &nw);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_quib VECTORS_DIR\n");
        return 1;
    }
    vdir = argv[1];
    char cert[512], key[512], ca[512];
    snprintf(cert, sizeof cert, "%s/quib/server.pem", vdir);
    snprintf(key, sizeof key, "%s/quib/server.key", vdir);
    snprintf(ca, sizeof ca, "%s/quib/ca.pem", vdir);
    wk_error err;
    server_tls = wk_quib_tls_create(true, cert, key, NULL, &err);
    client_tls = wk_quib_tls_create(false, NULL, NULL, ca, &err);
    /* a client that trusts the system store, not our test CA */
    stranger_tls = wk_quib_tls_create(false, NULL, NULL, "/etc/ssl/certs/ca-certificates.crt", &err);
    if (!stranger_tls) stranger_tls = wk_quib_tls_create(false, NULL, NULL, NULL, &err);
    if (!server_tls || !client_tls || !stranger_tls) {
        fprintf(stderr, "credentials: %s\n", err.msg);
        return 1;
    }
    qd_make_addr(&addr_server, 4790);
    qd_make_addr(&addr_client, 50000);
    test_pairings();
    test_faults();
    test_outcomes();
    test_handshake_timeout();
    test_backpressure();
    wk_quib_tls_free(server_tls);
    wk_quib_tls_free(client_tls);
    wk_quib_tls_free(stranger_tls);
    return wk_test_summary("host_quib");
}
