/* Allocation counting for tests that assert zero allocations: include in exactly one file of a
 * test executable linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc. n_allocs counts
 * every malloc, calloc and realloc of the process. volatile: GCC assumes malloc leaves other
 * globals alone and would fold the counts. */
#ifndef WK_ALLOC_WRAP_H
#define WK_ALLOC_WRAP_H
#include <stddef.h>

static volatile unsigned long n_allocs;
void *__real_malloc(size_t);
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
    n_allocs++;
    return __real_malloc(n);
}
void *__real_calloc(size_t, size_t);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_calloc(size_t a, size_t b)
{
    n_allocs++;
    return __real_calloc(a, b);
}
void *__real_realloc(void *, size_t);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    n_allocs++;
    return __real_realloc(p, n);
}
#endif
