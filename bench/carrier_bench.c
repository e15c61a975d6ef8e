/* Carrier throughput without the ILTP session: tcp, ws and wss side by side.
 *
 *   carrier_bench [--mib N] [--repeat N] --cert FILE --key FILE   (wss: a self-signed certificate
 *                                                                  for 127.0.0.1, also the CA)
 *
 * One process, one event loop, one core: a listener and a connector of one carrier kind on
 * 127.0.0.1; the connector writes N MiB in 64 KiB batches (what the sync application hands a
 * carrier), the listener consumes every byte, then a clean close (ws: close frames; tcp: FIN).
 * Both ends' work is on the same core, so MB/s is the carrier's cost for sending and receiving
 * together. The kinds alternate per run; medians are printed, with the ratios against tcp. */
#include "carrier.h" /* white-box: src/host is on the include path */
#include "tls.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BATCH 65536

typedef struct bench {
    wk_host_loop loop;
    wk_carrier_listener *l;
    wk_carrier *tx, *rx;
    uint64_t total, sent, got;
    bool writing, failed, done;
    int closed;
    uint8_t buf[BATCH];
} bench;

static bench B;

static void rx_opened(wk_carrier *c) { wk_carrier_read(c, true); }
static size_t rx_received(wk_carrier *c, const uint8_t *p, size_t n)
{
    (void)c, (void)p;
    B.got += n;
    return n;
}
static void both_close(void)
{
    if (B.tx) wk_carrier_close(B.tx);
    if (B.rx) wk_carrier_close(B.rx);
    B.tx = B.rx = NULL;
    if (B.l) wk_carrier_listener_close(B.l);
    B.l = NULL;
}
static void rx_ended(wk_carrier *c)
{
    (void)c;
    B.done = B.got == B.total;
    /* answer with our own end (ws: our close frame) */
    wk_error e;
    if (wk_carrier_half_close(B.rx, &e) != WK_OK) both_close();
}
static void nop(wk_carrier *c) { (void)c; }
static void rx_shut(wk_carrier *c)
{
    (void)c;
    both_close();
}
static void on_failed(wk_carrier *c, const wk_error *e)
{
    (void)c;
    char line[200];
    fprintf(stderr, "carrier_bench: %s\n", wk_error_format(e, line, sizeof line));
    B.failed = true;
    both_close();
}
static void on_closed(wk_carrier *c) { (void)c; B.closed++; }

static void tx_more(wk_carrier *c)
{
    wk_error e;
    if (B.sent == B.total) {
        if (wk_carrier_half_close(c, &e) != WK_OK) on_failed(c, &e);
        return;
    }
    size_t n = B.total - B.sent < BATCH ? (size_t)(B.total - B.sent) : BATCH;
    B.buf[0] = (uint8_t)B.sent;
    if (wk_carrier_write(c, B.buf, n, &e) != WK_OK) {
        on_failed(c, &e);
        return;
    }
    B.sent += n;
}
static void tx_opened(wk_carrier *c)
{
    wk_carrier_read(c, true);
    tx_more(c);
}
static size_t tx_received(wk_carrier *c, const uint8_t *p, size_t n)
{
    (void)c, (void)p;
    return n;
}
static void tx_written(wk_carrier *c) { tx_more(c); }

static const wk_carrier_events rx_ev = {rx_opened, rx_received, rx_ended, nop, rx_shut, on_failed, on_closed};
static const wk_carrier_events tx_ev = {tx_opened, tx_received, nop, tx_written, nop, on_failed, on_closed};

static void on_accepted(wk_carrier_listener *l, wk_carrier *c)
{
    (void)l;
    if (B.rx) {
        wk_carrier_close(c);
        return;
    }
    B.rx = c;
    c->ev = &rx_ev;
    wk_carrier_start(c);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

/* One run; returns MB/s (0 on failure), *cpu the CPU seconds per GiB. */
static double run(wk_iltp_scheme scheme, uint64_t total, const char *cert, const char *key, double *cpu)
{
    memset(&B, 0, offsetof(bench, buf));
    wk_error e;
    if (wk_host_loop_init(&B.loop, stderr, &e) != WK_OK) return 0;
    wk_carrier_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char text[64];
    snprintf(text, sizeof text, "%s:127.0.0.1:0", wk_iltp_scheme_name(scheme));
    if (wk_iltp_address_parse(text, strlen(text), &cfg.addr, &e) != WK_OK) return 0;
    cfg.cert_file = cert;
    cfg.key_file = key;
    cfg.ca_file = cert;
    const wk_carrier_kind *k = wk_carrier_kind_for(scheme);
    if (k->listen(&B.loop, &cfg, &B.l, &e) != WK_OK) {
        fprintf(stderr, "listen: %s\n", e.msg);
        return 0;
    }
    B.l->accepted = on_accepted;
    cfg.addr.port = B.l->address.port;
    cfg.addr.port_given = true;
    if (k->connect(&B.loop, &cfg, &B.tx, &e) != WK_OK) {
        fprintf(stderr, "connect: %s\n", e.msg);
        return 0;
    }
    B.tx->ev = &tx_ev;
    B.total = total;
    double t0 = now_s(), c0 = cpu_s();
    wk_carrier_start(B.tx);
    wk_host_loop_run(&B.loop);
    double dt = now_s() - t0;
    *cpu = (cpu_s() - c0) / ((double)total / (1u << 30));
    wk_host_loop_close(&B.loop);
    if (B.failed || !B.done) return 0;
    return (double)total / dt / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    unsigned mib = 1024, repeat = 3;
    const char *cert = NULL, *key = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) mib = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--cert") == 0 && i + 1 < argc) cert = argv[++i];
        else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) key = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0) mib = 64, repeat = 1;
        else {
            fprintf(stderr, "usage: carrier_bench [--mib N] [--repeat N] [--quick] --cert FILE --key FILE\n");
            return 1;
        }
    }
    if (!cert || !key || repeat == 0 || repeat > 64 || mib == 0) {
        fprintf(stderr, "carrier_bench: give --cert and --key (a self-signed certificate for 127.0.0.1)\n");
        return 1;
    }
    const wk_iltp_scheme kinds[3] = {WK_ILTP_SCHEME_TCP, WK_ILTP_SCHEME_WS, WK_ILTP_SCHEME_WSS};
    double mbs[3][64], cpu[3][64];
    for (unsigned r = 0; r < repeat; r++)
        for (int k = 0; k < 3; k++) {
            mbs[k][r] = run(kinds[k], (uint64_t)mib << 20, cert, key, &cpu[k][r]);
            if (mbs[k][r] == 0) {
                fprintf(stderr, "carrier_bench: %s run failed\n", wk_iltp_scheme_name(kinds[k]));
                return 1;
            }
            printf("  run %u %-3s %8.1f MB/s  %5.2f CPU s/GiB\n", r + 1, wk_iltp_scheme_name(kinds[k]), mbs[k][r], cpu[k][r]);
            fflush(stdout);
        }
    printf("carrier only (no session), one process and core, %u MiB in 64 KiB writes, %u runs\n", mib, repeat);
    double med[3];
    for (int k = 0; k < 3; k++) {
        qsort(mbs[k], repeat, sizeof(double), cmp);
        qsort(cpu[k], repeat, sizeof(double), cmp);
        med[k] = mbs[k][repeat / 2];
        printf("  %-3s  median %8.1f MB/s  %5.2f CPU s/GiB\n", wk_iltp_scheme_name(kinds[k]), med[k], cpu[k][repeat / 2]);
    }
    printf("  ws / tcp = %.3f   wss / tcp = %.3f   wss %.0f MB/s\n", med[1] / med[0], med[2] / med[0], med[2]);
    return 0;
}
