/* Helpers shared by the benchmarks: a monotonic clock in seconds, time_call, time_pair (two
 * operations timed alternately), the median of a sample (sorts it in place), splitmix64, a
 * bounded byte buffer (bench_buf), and die / min_sz / xmalloc / xmalloc64. Define
 * WK_BENCH_NAME (the program's name, for die's message) before including. */
#ifndef WK_BENCH_UTIL_H
#define WK_BENCH_UTIL_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef WK_BENCH_NAME
#error "define WK_BENCH_NAME before including bench_util.h"
#endif

/* Prints "NAME: what" on stderr and exits 1. */
static inline void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", WK_BENCH_NAME, what);
    exit(1);
}

static inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* splitmix64: the benchmarks' deterministic generator; advances *state. */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* malloc that dies on failure (n may be 0). */
static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* xmalloc, 64-byte aligned (this machine's memcpy is sensitive to relative alignment); free(). */
static inline void *xmalloc64(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 1) != 0) die("out of memory");
    return p;
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed operation: f(ctx) run iters times; returns seconds per run. */
typedef void (*op_fn)(void *ctx);
static inline double time_call(op_fn f, void *ctx, int iters)
{
    double t0 = now();
    for (int i = 0; i < iters; i++) f(ctx);
    return (now() - t0) / iters;
}

/* Times fa against fb: reps repetitions (at most 64), alternating which goes first, each of
 * `iters` calls calibrated so that the slower of one call each takes at least min_seconds.
 * Fills ta[k] and tb[k] with seconds per call. */
static inline void time_pair(op_fn fa, void *ca, op_fn fb, void *cb, int reps, double min_seconds,
                             double *ta, double *tb)
{
    double one = time_call(fa, ca, 1), other = time_call(fb, cb, 1); /* warm-up, calibration */
    double slow = one > other ? one : other;
    int iters = slow >= min_seconds ? 1 : (int)(min_seconds / (slow > 1e-9 ? slow : 1e-9)) + 1;
    for (int k = 0; k < reps; k++) {
        if (k % 2 == 0) {
            ta[k] = time_call(fa, ca, iters);
            tb[k] = time_call(fb, cb, iters);
        } else {
            tb[k] = time_call(fb, cb, iters);
            ta[k] = time_call(fa, ca, iters);
        }
    }
}

/* A byte buffer of fixed capacity the corpus builders append to. */
typedef struct bench_buf {
    uint8_t *p;
    size_t n, cap;
} bench_buf;

/* Appends n bytes of s; dies when they do not fit. */
static inline void bench_put(bench_buf *b, const void *s, size_t n)
{
    if (n > b->cap - b->n) die("corpus buffer overflow");
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* Appends what fits of s[0..n) (the rest is dropped); returns the bytes appended. */
static inline size_t bench_put_some(bench_buf *b, const void *s, size_t n)
{
    n = min_sz(n, b->cap - b->n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return n;
}

/* The size options of the throughput benchmarks: --quick, --reps N, --mib N. bench_size_opt takes
 * argv[*i] when it is one of them (advancing *i past its value) and returns true. */
typedef struct bench_size {
    bool quick;
    int reps;
    size_t mib;
} bench_size;

static inline bool bench_size_opt(bench_size *o, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--quick") == 0) o->quick = true;
    else if (strcmp(argv[*i], "--reps") == 0 && *i + 1 < argc) o->reps = atoi(argv[++*i]);
    else if (strcmp(argv[*i], "--mib") == 0 && *i + 1 < argc) o->mib = (size_t)atoi(argv[++*i]);
    else return false;
    return true;
}

/* The corpus size in bytes (--quick: 256 KiB, 3 repetitions, 2 ms timings); dies on a bad
 * --reps (1..max_reps) or --mib. */
static inline size_t bench_size_apply(bench_size *o, int max_reps, double *min_seconds)
{
    size_t n = o->mib << 20;
    if (o->quick) {
        n = 256u << 10;
        o->reps = 3;
        *min_seconds = 0.002;
    }
    if (o->reps < 1 || o->reps > max_reps || n == 0) die("bad --reps or --mib");
    return n;
}

/* Prints "usage: <WK_BENCH_NAME> <options>" on stderr; returns 2, the benches' exit status for a bad
 * command line. */
static inline int bench_usage(const char *options)
{
    fprintf(stderr, "usage: %s %s\n", WK_BENCH_NAME, options);
    return 2;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n); reorders v. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
#endif
