/* A counting, failing allocator for the contract's allocation rule (docs/architecture.md,
 * "Objects"), modelled on zlib's test/infcover.c: it counts every allocation call made through
 * it, keeps the live blocks and bytes, and fails the fail_at-th call (alone, or that one and every
 * later one when sticky). wk_contract_alloc_sweep() drives a scenario once to count its calls,
 * then once per call with that call failing, and checks that every run ends with WK_OK or
 * WK_ERR_NOMEM (nothing else, no crash) and that nothing is left allocated.
 *
 * It sees only what goes through a wk_allocator: raw malloc calls are found by the modules'
 * no-raw-allocation checks, not here. */
#ifndef WK_CONTRACT_ALLOC_H
#define WK_CONTRACT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wirekit/common.h>

typedef struct wk_contract_alloc {
    uint64_t calls;     /* allocation calls seen (failed ones included) */
    uint64_t fail_at;   /* 1-based call to fail; 0 = never */
    bool sticky;        /* once a call has failed, every later call fails too */
    bool failed;        /* a failure was injected */
    size_t live_bytes;  /* bytes allocated and not yet freed */
    size_t live_blocks; /* blocks allocated and not yet freed */
    size_t peak_bytes;  /* the most live_bytes ever was */
    void *head;         /* the live blocks (internal) */
} wk_contract_alloc;

/* Resets *a: no call seen, nothing live, failing call fail_at (0 = never). */
void wk_contract_alloc_init(wk_contract_alloc *a, uint64_t fail_at, bool sticky);

/* A wk_allocator bound to *a (a must outlive every block allocated through it). Each block
 * carries a small header, so free() knows its size; freeing NULL is a no-op. */
wk_allocator wk_contract_alloc_allocator(wk_contract_alloc *a);

/* Frees every block still live in *a (after a leak was reported: keeps LeakSanitizer quiet
 * about what the sweep already reported). */
void wk_contract_alloc_release(wk_contract_alloc *a);

/* A scenario builds its objects with *a, drives them, destroys them and returns its final code
 * (WK_OK when it ran to its end; the code of the first failure otherwise, *err set). */
typedef wk_code (*wk_contract_alloc_scenario)(void *ctx, const wk_allocator *a, wk_error *err);

/* Runs fn once with no failure (it must return WK_OK and free everything) to count its N
 * allocation calls, then for i = 1..N fails the i-th call, alone and then sticky. Each run must
 * return WK_OK or WK_ERR_NOMEM and leave nothing live. Returns 0 when every run held; otherwise
 * prints each failed run to stderr (name, i, mode, code, live blocks) and returns their number.
 * A scenario whose allocation count differs between runs before the failing call is a scenario
 * bug: it is reported too. */
int wk_contract_alloc_sweep(const char *name, wk_contract_alloc_scenario fn, void *ctx);

#endif
