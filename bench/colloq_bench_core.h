/* The Colloq benchmark (RFC-0005 criteria 2-4, issue 7 "Benchmark gates"), run by
 * bench/colloq_bench (bench/colloq_bench.c, a thin main). The measuring code is
 * bench/colloq_bench_core.c; allocations are counted by bench/colloq_alloc_count.c. */
#ifndef WK_COLLOQ_BENCH_CORE_H
#define WK_COLLOQ_BENCH_CORE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct wk_colloq_bench_options {
    bool quick; /* a tiny run for CI: 3 repetitions, 2 ms timings, 100-token sessions */
    bool json;  /* one JSON object instead of the Markdown report */
    int reps;   /* repetitions (0: 11, or 3 with quick); at most 51 */
} wk_colloq_bench_options;

/* Runs every workload and variant once and writes the report to out (progress lines go to log,
 * which may be NULL). Returns 0 when every variant round-tripped and checked correctly (a missed
 * gate is reported, not an error), 1 when the benchmark itself failed (message on log). */
int wk_colloq_bench_run(const wk_colloq_bench_options *opt, FILE *out, FILE *log);

/* Allocation counting (colloq_alloc_count.c): malloc, calloc and realloc of the calling thread,
 * json-c's and yajl's included, are counted while the binary interposes them. Returns false when
 * counting is not available (a sanitizer build brings its own allocator). */
bool wk_colloq_bench_alloc_counting(void);
/* Allocations the calling thread made since it started (0 when counting is not available). */
uint64_t wk_colloq_bench_allocs(void);
#endif
