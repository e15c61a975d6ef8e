#include "cli.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

void wk_cli_print_commands(FILE *f, const char *module, const wk_cli_command *cmds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  wirekit %s %-12s %s\n", module, cmds[i].name, cmds[i].summary);
}

bool wk_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

bool wk_cli_take(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return false;
    if (a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    if (a[n] != '\0') return false;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

int wk_cli_dispatch(const char *module, const char *summary, const wk_cli_command *cmds, size_t n,
                    int argc, char **argv)
{
    if (argc < 2 || wk_cli_is_help(argv[1])) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: wirekit %s COMMAND [options]\n%s\n\ncommands:\n", module, summary);
        wk_cli_print_commands(f, module, cmds, n);
        fprintf(f, "\nRun 'wirekit %s COMMAND --help' for a command's options.\n", module);
        return argc < 2 ? WK_EXIT_USAGE : WK_EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(argv[1], cmds[i].name) == 0) return cmds[i].run(argc - 1, argv + 1);
    return wk_cli_usage("unknown command 'wirekit %s %s' (see 'wirekit %s --help')", module, argv[1],
                        module);
}

int wk_cli_fail(const wk_error *err)
{
    fflush(stdout); /* the output decoded before the error, then its line */
    char line[256];
    fprintf(stderr, "%s\n", wk_error_format(err, line, sizeof line));
    return wk_cli_exit_for(err);
}

int wk_cli_fail_usage(const wk_error *err)
{
    wk_cli_fail(err);
    return WK_EXIT_USAGE;
}

int wk_cli_exit_for(const wk_error *err)
{
    if (wk_code_is_truncation(err->code)) return WK_EXIT_TRUNCATED;
    switch (err->category) {
    case WK_CAT_PEER_PROTOCOL: return WK_EXIT_INVALID;
    case WK_CAT_TRANSPORT: return WK_EXIT_TRANSPORT;
    default: return WK_EXIT_USAGE;
    }
}

int wk_cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("WK_ERR_USAGE: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return WK_EXIT_USAGE;
}

bool wk_cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s < '0' || *s > '9') return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

uint8_t *wk_cli_read_all(FILE *f, size_t limit, size_t *len, bool *too_long)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    *too_long = false;
    if (!buf) return NULL;
    for (;;) {
        if (n == cap) {
            if (cap >= limit) {
                /* exactly `limit` bytes is fine if the input ends here */
                int c = fgetc(f);
                if (c == EOF) {
                    if (ferror(f)) { free(buf); return NULL; }
                    break;
                }
                *too_long = true;
                free(buf);
                return NULL;
            }
            cap = cap * 2 > limit ? limit : cap * 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) { free(buf); return NULL; }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) { free(buf); return NULL; }
            break;
        }
        if (n > limit) { *too_long = true; free(buf); return NULL; }
    }
    *len = n;
    return buf;
}

bool wk_cli_write(const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, stdout) == n;
}

int wk_cli_read_some(void *buf, size_t cap, size_t *got)
{
    *got = 0;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "WK_ERR_BACKEND: cannot write to stdout\n");
        return WK_EXIT_USAGE;
    }
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, cap);
        if (n >= 0) {
            *got = (size_t)n;
            return 0;
        }
        if (errno != EINTR) {
            fprintf(stderr, "WK_ERR_BACKEND: cannot read stdin\n");
            return WK_EXIT_USAGE;
        }
    }
}
