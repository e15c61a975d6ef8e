/* Counting allocator. Each block carries a 16-byte header holding its size so that free can
 * account for it (backends free without telling the size). */
#include <wirekit/common.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16

static void *count_alloc(void *opaque, size_t size)
{
    wk_alloc_counter *c = opaque;
    if (size > SIZE_MAX - HDR) return NULL;
    if (c->limit && (size > c->limit || c->current > c->limit - size)) return NULL;
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    c->current += size;
    if (c->current > c->peak) c->peak = c->current;
    c->count++;
    return p + HDR;
}

static void count_free(void *opaque, void *ptr)
{
    wk_alloc_counter *c = opaque;
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t size;
    memcpy(&size, p, sizeof size);
    c->current -= size;
    free(p);
}

wk_allocator wk_counting_allocator(wk_alloc_counter *counter)
{
    wk_allocator a = {count_alloc, count_free, counter};
    return a;
}

static void *std_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return malloc(size);
}

static void std_free(void *opaque, void *ptr)
{
    (void)opaque;
    free(ptr);
}

wk_allocator wk_allocator_or_default(const wk_allocator *a)
{
    if (a && a->alloc && a->free) return *a;
    wk_allocator d = {std_alloc, std_free, NULL};
    return d;
}

void *wk_allocator_alloc(const wk_allocator *a, size_t size, const char *what, wk_error *err)
{
    wk_allocator d = wk_allocator_or_default(a);
    void *p = d.alloc(d.opaque, size);
    if (!p) wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "%s", what ? what : "allocation failed");
    return p;
}

void *wk_allocator_zalloc(const wk_allocator *a, size_t size, const char *what, wk_error *err)
{
    void *p = wk_allocator_alloc(a, size, what, err);
    if (p) memset(p, 0, size);
    return p;
}
