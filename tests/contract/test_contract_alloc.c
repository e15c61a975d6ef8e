/* The failing allocator and its sweep (wk_contract_alloc.h) on toy scenarios: a correct one
 * holds; one that leaks on a failure, one that turns a failure into another code and one that
 * crashes on NULL (not run: it would crash) are caught, so the sweep can fail. */
#include "wk_contract_alloc.h"
#include "wk_test.h"

#include <string.h>

/* Three allocations, each checked, everything freed on every path. */
static wk_code toy_good(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    void *p[3] = {NULL, NULL, NULL};
    wk_code c = WK_OK;
    for (int i = 0; i < 3; i++) {
        p[i] = a->alloc(a->opaque, 16u << i);
        if (p[i] == NULL) {
            c = wk_error_set(err, WK_ERR_NOMEM, 0, "toy: allocation %d", i);
            break;
        }
        memset(p[i], 0xab, 16u << i);
    }
    for (int i = 0; i < 3; i++)
        a->free(a->opaque, p[i]);
    return c;
}

/* Leaks the first block when the second allocation fails. */
static wk_code toy_leaks(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    void *p = a->alloc(a->opaque, 8);
    if (p == NULL)
        return wk_error_set(err, WK_ERR_NOMEM, 0, "toy: first");
    void *q = a->alloc(a->opaque, 8);
    if (q == NULL)
        return wk_error_set(err, WK_ERR_NOMEM, 0, "toy: second"); /* p leaks */
    a->free(a->opaque, q);
    a->free(a->opaque, p);
    return WK_OK;
}

/* Reports a failed allocation as another code. */
static wk_code toy_wrong_code(void *ctx, const wk_allocator *a, wk_error *err)
{
    (void)ctx;
    void *p = a->alloc(a->opaque, 8);
    if (p == NULL)
        return wk_error_set(err, WK_ERR_STATE, 0, "toy: relabelled");
    a->free(a->opaque, p);
    return WK_OK;
}

/* Allocates a different number of blocks each run (a scenario bug the sweep reports). */
static wk_code toy_unsteady(void *ctx, const wk_allocator *a, wk_error *err)
{
    int *runs = ctx;
    (void)err;
    if ((*runs)++ == 0) {
        void *p = a->alloc(a->opaque, 8);
        void *q = a->alloc(a->opaque, 8);
        a->free(a->opaque, q);
        a->free(a->opaque, p);
    }
    return WK_OK;
}

int main(void)
{
    wk_contract_alloc a;
    wk_contract_alloc_init(&a, 2, false);
    wk_allocator al = wk_contract_alloc_allocator(&a);
    void *p1 = al.alloc(al.opaque, 10);
    void *p2 = al.alloc(al.opaque, 20);
    void *p3 = al.alloc(al.opaque, 30);
    CHECK(p1 != NULL && p2 == NULL && p3 != NULL);
    CHECK(a.calls == 3 && a.failed && a.live_blocks == 2 && a.live_bytes == 40 && a.peak_bytes == 40);
    CHECK(((uintptr_t)p1 % _Alignof(max_align_t)) == 0);
    al.free(al.opaque, p1);
    al.free(al.opaque, p3);
    al.free(al.opaque, NULL);
    CHECK(a.live_blocks == 0 && a.live_bytes == 0 && a.head == NULL);

    wk_contract_alloc_init(&a, 1, true);
    al = wk_contract_alloc_allocator(&a);
    CHECK(al.alloc(al.opaque, 1) == NULL && al.alloc(al.opaque, 1) == NULL && a.calls == 2);

    CHECK(wk_contract_alloc_sweep("toy_good", toy_good, NULL) == 0);
    fprintf(stderr, "(the next lines are expected: the sweep catching faulty toys)\n");
    CHECK(wk_contract_alloc_sweep("toy_leaks", toy_leaks, NULL) == 2); /* call 2, alone and sticky */
    CHECK(wk_contract_alloc_sweep("toy_wrong_code", toy_wrong_code, NULL) == 2);
    int runs = 0;
    CHECK(wk_contract_alloc_sweep("toy_unsteady", toy_unsteady, &runs) == 4);
    return wk_test_summary("contract_alloc");
}
