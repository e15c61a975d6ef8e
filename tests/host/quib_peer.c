/* A QUIB test peer with misbehaviours, for tests/host/quib_test.py: one connection over a real
 * UDP socket on loopback, driven by tests/host/quib_drive.h (wk_quib_conn + an ILTP session with
 * an in-memory store holding a few Blobs), a poll() loop and the monotonic clock.
 *
 *   quib_peer server MODE CERT KEY         listens on 127.0.0.1:0, prints "port N", serves one
 *   quib_peer client MODE PORT CA          connects to 127.0.0.1:PORT (hostname localhost)
 *
 * MODE (the peer's behaviour):
 *   normal         an honest peer
 *   no-alpn        offer no ALPN (server: select none)
 *   wrong-alpn     offer QUIB/2 instead of QUIB/1
 *   close0         once established: CONNECTION_CLOSE with application code 0 (before settlement)
 *   close7         once established: application close with code 7
 *   reset-stream   once established: RESET_STREAM on the ILTP stream
 *   stop-sending   once established: STOP_SENDING on the ILTP stream
 *   forget-early   once established: drop all state; answer with stateless resets
 *   forget-late    server, after the connector's end (FIN): drop all state; stateless resets
 *   silent         once established: stop sending and reading (idle timeout 2 s advertised)
 *   bulk           an honest server whose store holds 4 MiB more (flow control)
 * It prints one final line "outcome: ..." and exits 0 (the verdict is the test's to judge). */
#include "quib_drive.h"
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *mode;
static bool forgot, silent;
static uint8_t secret[WK_QUIB_RESET_SECRET_LEN];

static void hook(qd_end *e, qd_point at)
{
    if (at == QD_ESTABLISHED) {
        if (!strcmp(mode, "close0")) wk_quib_conn_close_app(e->q, 0, e->now);
        else if (!strcmp(mode, "close7")) wk_quib_conn_close_app(e->q, 7, e->now);
        else if (!strcmp(mode, "reset-stream")) wk_quib_conn_reset_stream(e->q, 5);
        else if (!strcmp(mode, "stop-sending")) wk_quib_conn_stop_sending(e->q, 6);
        else if (!strcmp(mode, "forget-early")) forgot = true;
        else if (!strcmp(mode, "silent")) silent = true;
        else return;
        e->passive = true;
    } else if (at == QD_ENDED && !strcmp(mode, "forget-late")) {
        forgot = true;
        e->passive = true;
    }
    if (forgot) {
        printf("forgot the connection\n");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: quib_peer server MODE CERT KEY | client MODE PORT CA\n");
        return 1;
    }
    bool server = !strcmp(argv[1], "server");
    mode = argv[2];
    wk_error err;
    wk_quib_tls *tls = server ? wk_quib_tls_create(true, argv[3], argv[4], NULL, &err)
                              : wk_quib_tls_create(false, NULL, NULL, argv[4], &err);
    if (!tls) {
        fprintf(stderr, "quib_peer: %s\n", err.msg);
        return 1;
    }
    (void)getrandom(secret, sizeof secret, 0);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = {0}, peer = {0};
    me.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(0x7f000001);
    if (bind(fd, (struct sockaddr *)&me, sizeof me) != 0) {
        perror("bind");
        return 1;
    }
    socklen_t ml = sizeof me;
    getsockname(fd, (struct sockaddr *)&me, &ml);
    if (server) {
        printf("port %u\n", ntohs(me.sin_port));
        fflush(stdout);
    } else {
        peer.sin_family = AF_INET;
        peer.sin_addr.s_addr = htonl(0x7f000001);
        peer.sin_port = htons((uint16_t)atoi(argv[3]));
    }
    qd_end e;
    memset(&e, 0, sizeof e);
    e.server = server;
    e.decode = "deflate12c,zstd20c";
    e.encode = !strcmp(mode, "forget-late") ? "" : "zstd20c,deflate12c";
    e.assurance = WK_ILTP_ASSURANCE_CHANNEL_BOUND;
    e.hook = hook;
    e.now = mono_ns();
    qd_store_fill(&e.store, server ? 71 : 72, 3, 2000);
    if (!strcmp(mode, "bulk")) qd_store_fill(&e.store, 73, 1, 4u << 20);
    wk_quib_params p;
    memset(&p, 0, sizeof p);
    p.server = server;
    p.tls = tls;
    p.hostname = "localhost";
    memcpy(&p.local.ss, &me, sizeof me);
    p.local.len = sizeof me;
    p.reset_secret = secret;
    p.idle_timeout_ms = !strcmp(mode, "silent") ? 2000 : 30000;
    if (!strcmp(mode, "no-alpn")) p.alpn = "";
    else if (!strcmp(mode, "wrong-alpn")) p.alpn = "QUIB/2";
    if (!server) {
        memcpy(&p.remote.ss, &peer, sizeof peer);
        p.remote.len = sizeof peer;
        e.q = wk_quib_conn_create(&p, e.now, &err);
        if (!e.q) {
            fprintf(stderr, "quib_peer: %s\n", err.msg);
            return 1;
        }
    }
    uint8_t buf[65536];
    uint64_t deadline = mono_ns() + 60ull * 1000000000ull;
    while (mono_ns() < deadline) {
        e.now = mono_ns();
        if (e.q && !forgot && !silent) {
            for (int i = 0; i < 64; i++) {
                size_t n = wk_quib_conn_send(e.q, buf, sizeof buf, e.now);
                if (!n) break;
                sendto(fd, buf, n, 0, (struct sockaddr *)&peer, sizeof peer);
            }
            wk_quib_conn_sent(e.q, e.now);
        }
        if (e.closed || (e.finished && !e.q)) break;
        if ((forgot || silent) && e.finished) break;
        uint64_t exp = e.q && !forgot && !silent ? wk_quib_conn_expiry(e.q) : UINT64_MAX;
        int wait_ms = 100;
        if (exp != UINT64_MAX) wait_ms = exp <= e.now ? 0 : (int)((exp - e.now) / 1000000) + 1;
        if (wait_ms > 100) wait_ms = 100;
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, wait_ms);
        e.now = mono_ns();
        if (pr > 0) {
            for (;;) {
                struct sockaddr_in from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
                if (n <= 0) break;
                if (silent) continue;
                if (forgot) { /* no state: a stateless reset for every short-header datagram */
                    wk_quib_dgram d;
                    uint8_t r[64], rb[48];
                    (void)getrandom(rb, sizeof rb, 0);
                    if (wk_quib_dgram_parse(buf, (size_t)n, &d) == 0 && !d.long_header) {
                        size_t rn = wk_quib_write_stateless_reset(r, sizeof r, secret, d.dcid, d.dcid_len, (size_t)n,
                                                                  rb, sizeof rb);
                        if (rn) {
                            sendto(fd, r, rn, 0, (struct sockaddr *)&from, fl);
                            printf("stateless reset sent\n");
                            fflush(stdout);
                        }
                    }
                    continue;
                }
                if (server && !e.q) {
                    if (!wk_quib_dgram_is_initial(buf, (size_t)n)) continue;
                    peer = from;
                    memcpy(&p.remote.ss, &from, sizeof from);
                    p.remote.len = sizeof from;
                    p.initial = buf;
                    p.initial_len = (size_t)n;
                    e.q = wk_quib_conn_create(&p, e.now, &err);
                    if (!e.q) {
                        fprintf(stderr, "quib_peer: %s\n", err.msg);
                        return 1;
                    }
                }
                wk_quib_addr src;
                memcpy(&src.ss, &from, sizeof from);
                src.len = fl;
                wk_quib_conn_recv(e.q, &src, buf, (size_t)n, e.now);
            }
        }
        if (e.q && !forgot && !silent) {
            if (wk_quib_conn_expiry(e.q) <= e.now) wk_quib_conn_timeout(e.q, e.now);
            qd_step(&e);
            qd_tick(&e);
        }
        if ((forgot || silent) && mono_ns() > deadline - 45ull * 1000000000ull) break; /* 15 s of it */
    }
    printf("outcome: %s\n", e.outcome[0] ? e.outcome : forgot ? "forgot" : silent ? "silent" : "unfinished");
    qd_free(&e);
    wk_quib_tls_free(tls);
    close(fd);
    return 0;
}
