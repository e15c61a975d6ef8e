/* Helpers of the colloq tests that read tests/colloq/fixtures/ (test_fixtures.c,
 * test_generated.c): the fixture directory, a whole file, a compiled conversation. */
#ifndef WK_TEST_COLLOQ_FIXTURE_H
#define WK_TEST_COLLOQ_FIXTURE_H
#include "wk_test.h"
#include <wirekit/colloq.h>

static const char *dir; /* the fixtures directory (argv[1]) */

/* The file dir/rel, NUL-terminated and malloc'd (caller frees; *len may be NULL); NULL with a
 * message when it cannot be read. */
static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t n = 0;
    unsigned char *b = wk_test_read_file(path, &n);
    if (!b) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    b = realloc(b, n + 1);
    b[n] = 0;
    if (len) *len = n;
    return (char *)b;
}

/* The conversation dir/conv compiled (caller frees); NULL with a message when it does not. */
static wk_colloq_plan *plan_of(const char *conv)
{
    size_t n;
    char *text = slurp(conv, &n);
    if (!text) return NULL;
    wk_colloq_plan *p = NULL;
    wk_error err;
    if (wk_colloq_plan_compile(text, n, NULL, &p, &err) != WK_OK) {
        char buf[256];
        fprintf(stderr, "%s: %s\n", conv, wk_error_format(&err, buf, sizeof buf));
        p = NULL;
    }
    free(text);
    return p;
}
/* The whole trace as NUL-terminated text (wk_colloq_trace_size + wk_colloq_trace_encode) in a
 * malloc'd buffer the caller frees; NULL when it cannot be written. */
static inline char *trace_text(const wk_colloq_trace *t)
{
    size_t n = wk_colloq_trace_size(t);
    char *s = malloc(n + 1);
    if (!s) return NULL;
    wk_out out = {(uint8_t *)s, n, 0};
    wk_error err;
    if (wk_colloq_trace_encode(t, &out, &err) != WK_DONE || out.pos != n) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* Our preface line for role on wire written into buf (cap bytes, NUL-terminated after it): its
 * length, 0 when the encoder does not answer WK_DONE. */
static inline size_t preface_of(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role, char *buf,
                         size_t cap)
{
    wk_error err;
    wk_out o = {(uint8_t *)buf, cap - 1, 0};
    if (wk_colloq_preface_encode(plan, wire, role, &o, &err) != WK_DONE) return 0;
    buf[o.pos] = '\0';
    return o.pos;
}

/* Calls fn for every scenario of transcripts/index.txt ("name conversation status [wires=...]":
 * status 0, 2, 3 or live:N; wires NULL for all three). Returns the number listed, -1 when the
 * index cannot be read. */
static inline int for_each_scenario(void (*fn)(const char *name, const char *conv, const char *status,
                                        const char *wires))
{
    char *idx = slurp("transcripts/index.txt", NULL);
    if (!idx) return -1;
    char *save = NULL;
    int listed = 0;
    for (char *line = strtok_r(idx, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char name[128], conv[128], st[16], ws[64];
        int got = sscanf(line, "%127s %127s %15s %63s", name, conv, st, ws);
        if (got < 3) continue;
        listed++;
        fn(name, conv, st, got == 4 ? ws : NULL);
    }
    free(idx);
    return listed;
}
#endif
