/* A growing byte buffer for tests and fuzz targets (outside the library): `buf` and put(), which
 * appends and aborts when memory runs out. Zero-initialise a buf; free(b.p) when done. */
#ifndef WK_BYTES_H
#define WK_BYTES_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static inline void put(buf *b, const void *p, size_t n)
{
    if (n > b->cap - b->n) {
        size_t c = b->cap ? b->cap : 256;
        while (c - b->n < n) c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) abort();
        b->p = q;
        b->cap = c;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}
#endif
