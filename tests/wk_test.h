/* Minimal test harness: each test file is one executable; CHECK records a failure and goes on,
 * REQUIRE stops the current test function. main() ends with wk_test_summary(), which prints
 * "N passed, N failed" and returns the exit status. */
#ifndef WK_TEST_H
#define WK_TEST_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <stdint.h>

static int wk_t_pass, wk_t_fail;

#define CHECK(cond) do { if (cond) wk_t_pass++; else { wk_t_fail++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECKF(cond, ...) do { if (cond) wk_t_pass++; else { wk_t_fail++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define REQUIRE(cond) do { if (cond) wk_t_pass++; else { wk_t_fail++; \
    fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); return; } } while (0)
#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

static inline int wk_test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, wk_t_pass, wk_t_fail);
    return wk_t_fail == 0 && wk_t_pass > 0 ? 0 : 1;
}

/* A deterministic pseudo-random sequence for tests (xorshift64; *state must start nonzero). */
static inline uint64_t wk_test_xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* Reads a whole file into a malloc'd buffer (caller frees); NULL on failure. */
static inline unsigned char *wk_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (n == cap) { cap *= 2; buf = realloc(buf, cap); }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return buf;
}
#endif
