/* libFuzzer target: a QUIB connection (src/host/quib_conn.c) and its ILTP session fed arbitrary
 * datagrams after a completed in-memory handshake (tests/host/quib_drive.h: two endpoints, packets
 * in memory, a controlled clock; the self-signed Ed25519 credentials of tests/vectors/quib/).
 *
 * A QUIC handshake costs about 0.5 ms of CPU (X25519 on both sides, an Ed25519 signature and
 * its verification), many times what one input's operations cost, so the pair is kept across
 * inputs: it is made (handshake, ChannelBound sessions, a sync to fixed point; the connector stays
 * there like --watch) when the previous pair ended or after 256 inputs, and each input then works
 * on the live pair. An input is a list of operations [op][len][len bytes]:
 *   op % 8 == 0   the bytes as one datagram to the server
 *             1   the bytes as one datagram to the client
 *             2   the next genuine datagram of direction len&1 gets the bytes XORed in at len>>1
 *             3   the clock moves on by len * 7 ms
 *             4   the pair runs len % 64 steps (genuine traffic flows)
 *             5   a short-header datagram with the connection ID the client uses, bytes as payload
 *             6   the client writes the bytes into its ILTP stream (as if its session did)
 *             7   the server's owner stops reading (len odd) or reads again
 * followed by 4 steps of the pair. Checks, after every operation: nothing crashes or leaks
 * (ASan), every failure is a typed error of a known category, and each connection's memory stays
 * within its retention, its receive window and ngtcp2's own state. A finding may depend on the
 * inputs before it in the same process (the live pair); the replay test runs the seeds in order
 * from a fresh pair. */
#include "host/quib_drive.h"
#include "fuzz_check.h"

#ifndef WK_VECTORS_DIR
#define WK_VECTORS_DIR "tests/vectors"
#endif

static wk_quib_tls *server_tls, *client_tls;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void det_rand(void *ctx, uint8_t *p, size_t n) { qd_rand(ctx ? ctx : &rng_state, p, n); }

typedef struct mut { int dir; size_t at; uint8_t bytes[16]; size_t n; bool armed; } mut;
static mut pending_mut;

static int fault(void *ctx, int dir, uint64_t index, qd_pkt *p)
{
    (void)ctx;
    (void)index;
    if (pending_mut.armed && pending_mut.dir == dir && p->len) {
        pending_mut.armed = false;
        for (size_t i = 0; i < pending_mut.n; i++) p->d[(pending_mut.at + i) % p->len] ^= pending_mut.bytes[i];
    }
    return QD_DELIVER;
}

#define MEM_BOUND ((size_t)WK_QUIB_RETAIN_MAX + 2 * (size_t)WK_QUIB_STREAM_WINDOW + (1u << 20))

static void check_end(const qd_end *e)
{
    if (e->q) CHECK(wk_quib_conn_memory(e->q) < MEM_BOUND);
    if (e->finished && e->status) {
        wk_category c = e->err.category;
        CHECK(c == WK_CAT_TRANSPORT || c == WK_CAT_PEER_PROTOCOL || c == WK_CAT_INTEGRATION);
        CHECK(strcmp(wk_error_name(e->err.code), "WK_ERR_UNKNOWN") != 0);
    }
}

/* ---- the live pair ---- */
static qd_end e[2];
static qd_net nw;
static uint64_t now;
static bool alive;
static int uses;

static void pair_free(void)
{
    qd_free(&e[0]);
    qd_free(&e[1]);
    free(nw.q);
    memset(e, 0, sizeof e);
    memset(&nw, 0, sizeof nw);
    alive = false;
}

static void pair_make(void)
{
    pair_free();
    rng_state = 0x9e3779b97f4a7c15ull;
    nw.latency = 1000000;
    nw.rand = det_rand;
    nw.fault = fault;
    memset(nw.reset_secret, 9, sizeof nw.reset_secret);
    qd_make_addr(&nw.server_addr, 4790);
    qd_make_addr(&nw.client_addr, 50000);
    nw.server.tls = server_tls;
    now = 1000000000ull;
    for (int i = 0; i < 2; i++) {
        e[i].server = i == 0;
        e[i].decode = "deflate12c";
        e[i].encode = i ? "deflate12c" : "";
        e[i].assurance = WK_ILTP_ASSURANCE_CHANNEL_BOUND;
        e[i].stay = true;
        e[i].now = now;
        qd_store_fill(&e[i].store, i + 1, 2, 1500);
    }
    wk_quib_params p;
    memset(&p, 0, sizeof p);
    p.tls = client_tls;
    p.hostname = "localhost";
    p.local = nw.client_addr;
    p.remote = nw.server_addr;
    p.rand = det_rand;
    wk_error err;
    e[1].q = wk_quib_conn_create(&p, now, &err);
    CHECK(e[1].q);
    for (int step = 0; step < 400 && !(e[0].at_fixed && e[1].at_fixed); step++) {
        if (!qd_pair_step(e, &nw, &now, now + 60ull * 1000000000ull)) break;
        for (int i = 0; i < 2; i++)
            if (e[i].s && wk_iltp_session_state_get(e[i].s) == WK_ILTP_SESSION_FIXED_POINT) e[i].at_fixed = true;
    }
    CHECK(e[0].opened && e[1].opened); /* the in-memory handshake always completes */
    alive = true;
    uses = 0;
}

static void step(int n)
{
    for (int k = 0; k < n; k++)
        if (!qd_pair_step(e, &nw, &now, now + 120ull * 1000000000ull)) break;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!server_tls) {
        wk_error err;
        /* a self-signed Ed25519 certificate, its own trust anchor: the cheapest handshake */
        server_tls = wk_quib_tls_create(true, WK_VECTORS_DIR "/quib/fuzz.pem", WK_VECTORS_DIR "/quib/fuzz.key", NULL,
                                        &err);
        client_tls = wk_quib_tls_create(false, NULL, NULL, WK_VECTORS_DIR "/quib/fuzz.pem", &err);
        CHECK(server_tls && client_tls);
    }
    pending_mut.armed = false;
    if (!alive || ++uses > 256) pair_make();
    size_t pos = 0;
    while (pos + 2 <= size) {
        uint8_t op = data[pos] % 8;
        size_t len = data[pos + 1];
        pos += 2;
        size_t take = len < size - pos ? len : size - pos;
        const uint8_t *b = data + pos;
        switch (op) {
        case 0:
        case 1:
            if (take) qd_net_enqueue(&nw, op, b, take, now);
            pos += take;
            break;
        case 2:
            pending_mut.dir = (int)(len & 1);
            pending_mut.at = len >> 1;
            pending_mut.n = take < sizeof pending_mut.bytes ? take : sizeof pending_mut.bytes;
            memcpy(pending_mut.bytes, b, pending_mut.n);
            pending_mut.armed = pending_mut.n > 0;
            pos += take;
            break;
        case 3:
            now += (uint64_t)len * 7000000u;
            e[0].now = e[1].now = now;
            break;
        case 4: step((int)(len % 64)); break;
        case 5:
            if (take && e[1].q) {
                /* the client's current destination ID: from a genuine client datagram in flight,
                 * else from one the client writes now */
                uint8_t d[WK_QUIB_MAX_DATAGRAM], g0[WK_QUIB_MAX_DATAGRAM];
                size_t gl = 0;
                for (size_t i = 0; i < nw.n && !gl; i++)
                    if (nw.q[i].dir == 0) {
                        gl = nw.q[i].len;
                        memcpy(g0, nw.q[i].d, gl);
                    }
                wk_quib_dgram g;
                if (gl && wk_quib_dgram_parse(g0, gl, &g) == 0 && !g.long_header && g.dcid_len <= 20) {
                    size_t n = 0;
                    d[n++] = 0x40 | (b[0] & 0x3f);
                    memcpy(d + n, g.dcid, g.dcid_len);
                    n += g.dcid_len;
                    size_t rest = take - 1 < sizeof d - n ? take - 1 : sizeof d - n;
                    memcpy(d + n, b + 1, rest);
                    qd_net_enqueue(&nw, 0, d, n + rest, now);
                }
            }
            pos += take;
            break;
        case 6:
            if (e[1].q) wk_quib_conn_write(e[1].q, b, take);
            pos += take;
            break;
        case 7: e[0].hold = len & 1; break;
        }
        check_end(&e[0]);
        check_end(&e[1]);
    }
    step(4);
    check_end(&e[0]);
    check_end(&e[1]);
    if (e[0].finished || e[1].finished || e[0].closed || e[1].closed || !e[0].q) alive = false;
    return 0;
}
