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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
