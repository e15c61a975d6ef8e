/* Allocation counting for tests that assert how often a call allocates: include in exactly one
 * file of a test executable linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc. Every
 * malloc, calloc and realloc made from the objects linked statically (the test and
 * libwirekit.a) goes through wk_alloc_probe_note, which counts it only on the thread whose probe
 * is armed (tests/wk_alloc_probe.h: wk_alloc_probe_begin / _end / _report).
 *
 * ALLOC_CHECK(cond, ...) is CHECKF that also prints the stacks of the allocations the probe kept
 * when cond fails. */
#ifndef WK_ALLOC_WRAP_H
#define WK_ALLOC_WRAP_H
#include <stddef.h>
#include "wk_alloc_probe.h"

void *__real_malloc(size_t);
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
    wk_alloc_probe_note("malloc", n);
    return __real_malloc(n);
}
void *__real_calloc(size_t, size_t);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_calloc(size_t a, size_t b)
{
    wk_alloc_probe_note("calloc", a * b);
    return __real_calloc(a, b);
}
void *__real_realloc(void *, size_t);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    wk_alloc_probe_note("realloc", n);
    return __real_realloc(p, n);
}

#ifdef WK_TEST_H
#define ALLOC_CHECK(cond, ...)                                                                    \
    do {                                                                                          \
        if (!(cond)) wk_alloc_probe_report(stderr);                                               \
        CHECKF(cond, __VA_ARGS__);                                                                \
    } while (0)
#endif
#endif
