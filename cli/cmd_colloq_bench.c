/* wirekit colloq bench [--json] [--quick] [--reps N]: the RFC-0005 benchmark report (issue 7,
 * criterion 2). The measuring code is bench/colloq_bench_core.c, shared with bench/colloq_bench;
 * allocations are counted by bench/colloq_alloc_count.c, which interposes malloc for this binary
 * (see there). Exit status: 0 report written (missed gates are reported as MISSED, not an error),
 * 1 usage error or a variant failed to round-trip. */
#include "cli.h"
#include "../bench/colloq_bench_core.h"
#include <string.h>

int wk_cli_colloq_bench(int argc, char **argv)
{
    wk_colloq_bench_options o = {false, false, 0};
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit colloq bench [--json] [--quick] [--reps N]\n"
                   "Times reference, compact (json-c; and yajl events), binary and a hand-written\n"
                   "baseline: the isolated checked transition, the warm token-stream exchange\n"
                   "(1000 tokens) and the MoE fan-out; ns/frame, frames/s, bytes/frame,\n"
                   "allocations/frame and the RFC-0005 gates (met / MISSED).\n"
                   "  --json   one JSON object {\"isolated\":{...},\"warm\":{...},\"moe\":{...},...}\n"
                   "  --quick  a tiny run (3 repetitions, 2 ms timings): numbers not meaningful\n"
                   "  --reps N repetitions, 1..51 (default 11)\n");
            return WK_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) {
            o.json = true;
        } else if (strcmp(argv[i], "--quick") == 0) {
            o.quick = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            uint64_t r;
            if (!wk_cli_parse_u64(argv[++i], 1, 51, &r))
                return wk_cli_usage("--reps takes 1..51");
            o.reps = (int)r;
        } else {
            return wk_cli_usage("unknown option '%s' (usage: wirekit colloq bench "
                                "[--json] [--quick] [--reps N])", argv[i]);
        }
    }
    return wk_colloq_bench_run(&o, stdout, stderr) == 0 ? WK_EXIT_OK : WK_EXIT_USAGE;
}
