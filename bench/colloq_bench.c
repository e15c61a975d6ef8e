/* Colloq plan codec (RFC-0005) benchmark: reference, compact (json-c and yajl), binary, the
 * generated codec (issue 19) and a hand-written baseline in one run. The measuring code is
 * colloq_bench_core.c; see its top comment for the method and docs/benchmarks.md for a run.
 * (It was also `wirekit colloq bench` once; the CLI no longer links benchmark code, issue 12.)
 *
 * usage: colloq_bench [--quick] [--json] [--reps N (default 11)] | --help
 *   --quick  a tiny run for CI (3 repetitions, 2 ms timings, 100 tokens, 20 MoE rounds)
 *   --json   one JSON object {"isolated":{...},"warm":{...},"moe":{...},"gates":{...},...} */
#include "colloq_bench_core.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    wk_colloq_bench_options o = {false, false, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            o.quick = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            o.json = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            char *end;
            long r = strtol(argv[++i], &end, 10);
            if (*end || r < 1 || r > 51) {
                fprintf(stderr, "colloq_bench: --reps takes 1..51\n");
                return 1;
            }
            o.reps = (int)r;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: colloq_bench [--quick] [--json] [--reps N]\n"
                   "Times reference, compact (json-c; and yajl events), binary and a hand-written\n"
                   "baseline: the isolated checked transition, the warm token-stream exchange\n"
                   "(1000 tokens) and the MoE fan-out; ns/frame, frames/s, bytes/frame,\n"
                   "allocations/frame and the RFC-0005 gates (met / MISSED).\n"
                   "  --json   one JSON object {\"isolated\":{...},\"warm\":{...},\"moe\":{...},...}\n"
                   "  --quick  a tiny run (3 repetitions, 2 ms timings): numbers not meaningful\n"
                   "  --reps N repetitions, 1..51 (default 11)\n");
            return 0;
        } else {
            fprintf(stderr, "usage: colloq_bench [--quick] [--json] [--reps N]\n");
            return 1;
        }
    }
    return wk_colloq_bench_run(&o, stdout, stderr);
}
