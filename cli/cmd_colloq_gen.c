/* wirekit colloq gen --plan P [--prefix NAME] [--out-dir DIR] (issue 19): the binary codec of a
 * plan as C, one header and one source (the generator is the library's wk_colloq_codegen_*,
 * include/wirekit/colloq.h decision 16). Both files are written to temporary names and renamed
 * only once both are complete, so a failure leaves no file behind; a plan that does not compile
 * writes nothing at all. */
#include "cmd_colloq.h"
#include <stdlib.h>
#include <string.h>

static const char gen_help[] =
    "usage: wirekit colloq gen --plan P [--prefix NAME] [--out-dir DIR]\n"
    "Generates the binary codec of the plan P (a conversation or a compiled plan) as C17:\n"
    "DIR/NAME.h and DIR/NAME.c (DIR default \".\", which must exist; NAME default the plan's name\n"
    "made an identifier, \"token-stream\" -> token_stream). The code holds the plan identity (a\n"
    "preface naming another is refused), one struct per message with typed fields (string and\n"
    "bytes as borrowed slices, a presence bit per optional field), NAME_<Message>_size/_encode/\n"
    "_decode, NAME_receive (decode + check a frame against a session, with the failure kinds and\n"
    "offsets of the generic codec), NAME_send, and conversions to and from wk_colloq_frame. It\n"
    "needs only <wirekit/colloq.h> (link with libwirekit) and compiles with -Wall -Wextra -Werror.\n"
    "Prints the two paths written, one per line.\n"
    "  --prefix NAME   [A-Za-z_][A-Za-z0-9_]*, 1..64 characters: every generated name starts with it\n"
    "  --out-dir DIR   where the two files go\n"
    "Exit status: 0 written; 2 the plan does not compile (one stderr line: the error and its JSON\n"
    "path; no file written); 1 usage, a bad prefix, or a file that cannot be written (none left).\n";

/* Generates one part into a malloc'd buffer. NULL with a message printed on failure. */
static char *generate(const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                      wk_colloq_codegen_part part, size_t *len)
{
    wk_error err;
    size_t n = 0;
    if (wk_colloq_codegen_size(plan, params, part, &n, &err) != WK_OK) {
        char line[256];
        fprintf(stderr, "%s\n", wk_error_format(&err, line, sizeof line));
        return NULL;
    }
    char *buf = malloc(n ? n : 1);
    wk_out out = {(uint8_t *)buf, n, 0};
    if (!buf || wk_colloq_codegen_write(plan, params, part, &out, &err) != WK_DONE || out.pos != n) {
        fprintf(stderr, "%s: cannot generate the code\n", wk_error_name(buf ? err.code : WK_ERR_NOMEM));
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Writes n bytes to path; false (message printed) on failure. */
static bool write_whole(const char *path, const char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "%s: cannot write '%s'\n", wk_error_name(WK_ERR_BACKEND), path);
    return ok;
}

static char *path_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, name, suffix);
    return p;
}

int wk_cli_colloq_gen(int argc, char **argv)
{
    const char *plan_path = NULL, *prefix = NULL, *dir = ".", *v;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            fputs(gen_help, stdout);
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--plan", &v)) {
            if (!v || !*v) return wk_cli_usage("wirekit colloq gen: --plan takes a file");
            plan_path = v;
        } else if (wk_cli_take(argc, argv, &i, "--prefix", &v)) {
            if (!v || !*v) return wk_cli_usage("wirekit colloq gen: --prefix takes a C identifier");
            prefix = v;
        } else if (wk_cli_take(argc, argv, &i, "--out-dir", &v)) {
            if (!v || !*v) return wk_cli_usage("wirekit colloq gen: --out-dir takes a directory");
            dir = v;
        } else {
            return wk_cli_usage("wirekit colloq gen: unknown or extra argument '%s' (see 'wirekit "
                                "colloq gen --help')", argv[i]);
        }
    }
    if (!plan_path) return wk_cli_usage("wirekit colloq gen: --plan FILE is required");
    int rc;
    wk_colloq_plan *plan = colloq_load_plan(plan_path, &rc);
    if (!plan) return rc; /* one stderr line; nothing written */
    char def[WK_COLLOQ_CODEGEN_PREFIX_MAX + 1];
    if (!prefix) {
        wk_out o = {(uint8_t *)def, WK_COLLOQ_CODEGEN_PREFIX_MAX, 0};
        wk_error err;
        wk_colloq_codegen_prefix_encode(plan, &o, &err); /* at most PREFIX_MAX bytes: WK_DONE */
        def[o.pos] = '\0';
        prefix = def;
    }
    wk_colloq_codegen_params params = {prefix, NULL, NULL};
    size_t hn = 0, cn = 0;
    char *h = NULL, *c = NULL, *hp = NULL, *cp = NULL, *ht = NULL, *ct = NULL;
    rc = WK_EXIT_USAGE;
    if (!(h = generate(plan, &params, WK_COLLOQ_CODEGEN_HEADER, &hn)) ||
        !(c = generate(plan, &params, WK_COLLOQ_CODEGEN_SOURCE, &cn)))
        goto done;
    hp = path_join(dir, prefix, ".h");
    cp = path_join(dir, prefix, ".c");
    ht = path_join(dir, prefix, ".h.tmp");
    ct = path_join(dir, prefix, ".c.tmp");
    if (!hp || !cp || !ht || !ct) {
        fprintf(stderr, "%s: out of memory\n", wk_error_name(WK_ERR_NOMEM));
        goto done;
    }
    if (!write_whole(ht, h, hn) || !write_whole(ct, c, cn)) {
        remove(ht);
        remove(ct);
        goto done;
    }
    if (rename(ht, hp) != 0 || rename(ct, cp) != 0) {
        fprintf(stderr, "%s: cannot rename into '%s'\n", wk_error_name(WK_ERR_BACKEND), dir);
        remove(ht);
        remove(ct);
        remove(hp);
        goto done;
    }
    printf("%s\n%s\n", hp, cp);
    rc = fflush(stdout) == 0 ? WK_EXIT_OK : WK_EXIT_USAGE;
done:
    free(h);
    free(c);
    free(hp);
    free(cp);
    free(ht);
    free(ct);
    wk_colloq_plan_destroy(plan);
    return rc;
}
