/* Allocation checks in fuzz targets: feeds tests/wk_alloc_probe.h, which counts only the
 * allocations the calling thread makes while armed and keeps the stack of each one that breaks a
 * check (a process-wide count also saw libFuzzer's RSS thread start: see wk_alloc_probe.h).
 *
 *   libFuzzer builds: the sanitizer runtime's malloc hook (__sanitizer_install_malloc_and_free_
 *                     hooks) reports every allocation of the process, json-c's included;
 *   replay builds:    fuzz/replay.cmake defines WK_FUZZ_ALLOC_WRAP and links with
 *                     -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (tests/wk_alloc_wrap.h),
 *                     which sees the allocations of the statically linked objects (the target and
 *                     libwirekit.a), so plain gcc builds run the checks too.
 *
 * fuzz_alloc_install() at init returns whether allocations are observed (false only in a
 * libFuzzer build without a sanitizer runtime; the checks then pass vacuously). Around a call that
 * must not allocate:
 *     fuzz_alloc_begin();
 *     r = wk_..._decode(...);
 *     FUZZ_ALLOC_NONE();        a failure prints the stack of each allocation, then aborts */
#ifndef WK_FUZZ_ALLOC_HOOK_H
#define WK_FUZZ_ALLOC_HOOK_H
#include <stdbool.h>
#include "fuzz_check.h"
#ifdef WK_FUZZ_ALLOC_WRAP
#include "wk_alloc_wrap.h"
static bool fuzz_alloc_install(void) { return true; }
#else
#include "wk_alloc_probe.h"
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *))
    __attribute__((weak));
static void fuzz_on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    wk_alloc_probe_note("malloc", n);
}
static void fuzz_on_free(const volatile void *p) { (void)p; }
static bool fuzz_alloc_install(void)
{
    return __sanitizer_install_malloc_and_free_hooks &&
           __sanitizer_install_malloc_and_free_hooks(fuzz_on_malloc, fuzz_on_free) != 0;
}
#endif

static inline void fuzz_alloc_begin(void) { wk_alloc_probe_begin(0); }

#define FUZZ_ALLOC_NONE()                                                                         \
    do {                                                                                          \
        unsigned long fuzz_allocs_ = wk_alloc_probe_end();                                        \
        if (fuzz_allocs_ != 0) wk_alloc_probe_report(stderr);                                     \
        CHECK(fuzz_allocs_ == 0);                                                                 \
    } while (0)
#endif
