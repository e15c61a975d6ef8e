/* A counting, failing allocator and its sweep: see wk_contract_alloc.h. */
#include "wk_contract_alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The header before each block: its size, padded to keep the block maximally aligned. */
typedef union wk_contract_alloc_head {
    struct {
        size_t size;
        union wk_contract_alloc_head *prev, *next; /* the live blocks of one allocator */
    } b;
    max_align_t align;
} wk_contract_alloc_head;

static void *contract_alloc(void *opaque, size_t size)
{
    wk_contract_alloc *a = opaque;
    a->calls++;
    if ((a->sticky && a->failed) || (a->fail_at != 0 && a->calls == a->fail_at)) {
        a->failed = true;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(wk_contract_alloc_head))
        return NULL;
    wk_contract_alloc_head *h = malloc(sizeof *h + size);
    if (h == NULL)
        return NULL;
    h->b.size = size;
    h->b.prev = NULL;
    h->b.next = a->head;
    if (a->head != NULL)
        ((wk_contract_alloc_head *)a->head)->b.prev = h;
    a->head = h;
    a->live_bytes += size;
    a->live_blocks++;
    if (a->live_bytes > a->peak_bytes)
        a->peak_bytes = a->live_bytes;
    return h + 1;
}

static void contract_free(void *opaque, void *ptr)
{
    wk_contract_alloc *a = opaque;
    if (ptr == NULL)
        return;
    wk_contract_alloc_head *h = (wk_contract_alloc_head *)ptr - 1;
    if (a->live_blocks == 0 || a->live_bytes < h->b.size) {
        fprintf(stderr, "wk_contract_alloc: free of a block it does not hold (%zu bytes)\n", h->b.size);
        abort();
    }
    if (h->b.prev != NULL)
        h->b.prev->b.next = h->b.next;
    else
        a->head = h->b.next;
    if (h->b.next != NULL)
        h->b.next->b.prev = h->b.prev;
    a->live_bytes -= h->b.size;
    a->live_blocks--;
    free(h);
}

void wk_contract_alloc_init(wk_contract_alloc *a, uint64_t fail_at, bool sticky)
{
    memset(a, 0, sizeof *a);
    a->fail_at = fail_at;
    a->sticky = sticky;
}

void wk_contract_alloc_release(wk_contract_alloc *a)
{
    while (a->head != NULL)
        contract_free(a, (wk_contract_alloc_head *)a->head + 1);
}

wk_allocator wk_contract_alloc_allocator(wk_contract_alloc *a)
{
    wk_allocator al = {contract_alloc, contract_free, a};
    return al;
}

/* One run of fn with the fail_at-th call failing; returns true when it held. */
static bool sweep_run(const char *name, wk_contract_alloc_scenario fn, void *ctx, uint64_t fail_at,
                      bool sticky)
{
    wk_contract_alloc a;
    wk_contract_alloc_init(&a, fail_at, sticky);
    wk_allocator al = wk_contract_alloc_allocator(&a);
    wk_error err;
    memset(&err, 0, sizeof err);
    wk_code c = fn(ctx, &al, &err);
    bool ok = true;
    const char *mode = fail_at == 0 ? "no failure" : sticky ? "sticky" : "alone";
    if (fail_at == 0 ? c != WK_OK : (c != WK_OK && c != WK_ERR_NOMEM)) {
        fprintf(stderr, "%s: call %" PRIu64 " failing (%s): ended with %s (%d), offset %" PRIu64 ": %s\n",
                name, fail_at, mode, wk_error_name(c), (int)c, err.offset, err.msg);
        ok = false;
    }
    if (fail_at != 0 && !a.failed) {
        fprintf(stderr, "%s: call %" PRIu64 " failing (%s): only %" PRIu64
                " calls were made (the scenario allocates differently from run to run)\n",
                name, fail_at, mode, a.calls);
        ok = false;
    }
    if (a.live_blocks != 0) {
        fprintf(stderr, "%s: call %" PRIu64 " failing (%s): %zu blocks (%zu bytes) left allocated\n",
                name, fail_at, mode, a.live_blocks, a.live_bytes);
        ok = false;
        wk_contract_alloc_release(&a);
    }
    return ok;
}

int wk_contract_alloc_sweep(const char *name, wk_contract_alloc_scenario fn, void *ctx)
{
    wk_contract_alloc count;
    wk_contract_alloc_init(&count, 0, false);
    wk_allocator al = wk_contract_alloc_allocator(&count);
    wk_error err;
    memset(&err, 0, sizeof err);
    wk_code c = fn(ctx, &al, &err);
    if (c != WK_OK || count.live_blocks != 0) {
        fprintf(stderr, "%s: with no failure: ended with %s, %zu blocks left allocated: %s\n", name,
                wk_error_name(c), count.live_blocks, err.msg);
        wk_contract_alloc_release(&count);
        return 1;
    }
    int failed = 0;
    for (uint64_t i = 1; i <= count.calls; i++) {
        failed += !sweep_run(name, fn, ctx, i, false);
        failed += !sweep_run(name, fn, ctx, i, true);
    }
    return failed;
}
