/* What the libFuzzer targets share: CHECK (a failed check prints file:line and the condition and
 * aborts, so libFuzzer keeps the input as a crash), NO_COVERAGE for hot helper loops of a target
 * that carry no coverage signal (clang only), and the entry point's prototype. */
#ifndef WK_FUZZ_CHECK_H
#define WK_FUZZ_CHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);             \
            abort();                                                                              \
        }                                                                                         \
    } while (0)

#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

/* Allocation counting for targets that check "allocates nothing": fuzz_count_allocations()
 * installs a sanitizer malloc hook counting every allocation of the process in
 * fuzz_malloc_calls, and returns false where no sanitizer runtime provides the hook (plain replay
 * builds; the count then stays 0). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *))
    __attribute__((weak));
static volatile size_t fuzz_malloc_calls;
static inline void fuzz_on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    fuzz_malloc_calls++;
}
static inline void fuzz_on_free(const volatile void *p) { (void)p; }
static inline bool fuzz_count_allocations(void)
{
    if (!__sanitizer_install_malloc_and_free_hooks) return false;
    if (!__sanitizer_install_malloc_and_free_hooks(fuzz_on_malloc, fuzz_on_free)) return false;
    size_t m0 = fuzz_malloc_calls;
    void *volatile probe = malloc(7); /* the hook counts */
    free(probe);
    return fuzz_malloc_calls == m0 + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
