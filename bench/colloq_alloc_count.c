/* Allocation counting for the Colloq benchmark, linked into bench/colloq_bench only (never into
 * an installed binary: tests/install_test.sh checks that none defines malloc). json-c and yajl are shared libraries, so -Wl,--wrap (which only rewrites references in the
 * objects being linked, as bench/moqt_bench does for the static library) would not see their
 * calls. Instead the executable defines malloc, calloc, realloc and free itself: the dynamic linker
 * binds every library's malloc to the executable's definition first, and these forward to glibc's
 * allocator (__libc_malloc and friends), counting each call. The count is thread-local: a
 * measurement sees only the allocations of the thread that runs it, never another thread's (the
 * same rule as tests/wk_alloc_probe.h); its cost is one increment per allocation, the same for
 * every variant.
 *
 * Under AddressSanitizer (WK_SANITIZE, fuzz builds) the sanitizer owns malloc: nothing is
 * interposed and counting reports "not available". */
#include "colloq_bench_core.h"
#include <stddef.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||                         \
    __has_feature(thread_sanitizer)
#define WK_NO_INTERPOSE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__)
#define WK_NO_INTERPOSE 1
#endif

#ifndef WK_NO_INTERPOSE

/* volatile: GCC assumes malloc leaves user memory alone and would fold a before/after pair. */
static _Thread_local volatile uint64_t n_allocs;

static inline void count_one(void) { n_allocs++; }

/* glibc's own entry points (exported by libc.so.6 for exactly this use). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
    count_one();
    return __libc_malloc(n);
}
void *calloc(size_t k, size_t n)
{
    count_one();
    return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n)
{
    count_one();
    return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }

bool wk_colloq_bench_alloc_counting(void) { return true; }
uint64_t wk_colloq_bench_allocs(void) { return n_allocs; }
#else
bool wk_colloq_bench_alloc_counting(void) { return false; }
uint64_t wk_colloq_bench_allocs(void) { return 0; }
#endif
