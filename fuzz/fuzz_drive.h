/* The fuzz targets' drive loop: the contract harness (tests/contract/wk_contract.h), so a target
 * never writes its own push/view loop. fuzz_drive() runs an object over the input twice, in
 * pushes of the size the fuzzer chose (output views of the size it chose, behind 0-byte probes)
 * and whole, each push a fresh exact-size heap copy (ASan catches a slice kept past its push),
 * checks every call against the contract on both runs, and checks that the two runs reach the same
 * outcome (verdict, error, event record, bytes consumed and produced). Any failure prints the
 * broken rule and aborts, so libFuzzer keeps the input. Returns the whole run's outcome. */
#ifndef WK_FUZZ_DRIVE_H
#define WK_FUZZ_DRIVE_H

#include "fuzz_check.h"
#include "wk_contract.h"

/* The two runs of fuzz_drive(), each checked against the contract, without comparing them (for
 * targets whose runs may legitimately differ in documented cases): *cut gets the pushed run's
 * outcome, *whole the whole input's. */
static inline void fuzz_drive_runs(const wk_contract_ops *ops, void *obj, void *ctx,
                                   const uint8_t *data, size_t n, size_t push, size_t out_view,
                                   wk_contract_outcome *cut, wk_contract_outcome *whole)
{
    char why[320];
    wk_contract_plan p = {push, NULL, 0, out_view, out_view == 1, true};
    if (!wk_contract_drive(ops, obj, ctx, data, n, &p, cut, why, sizeof why)) {
        fprintf(stderr, "fuzz_drive (pushes of %zu, views of %zu): %s\n", push, out_view, why);
        CHECK(0);
    }
    wk_contract_plan w = {0, NULL, 0, 0, false, true};
    if (!wk_contract_drive(ops, obj, ctx, data, n, &w, whole, why, sizeof why)) {
        fprintf(stderr, "fuzz_drive (whole): %s\n", why);
        CHECK(0);
    }
}

/* Pushes of `push` bytes (0 = one push), output views of `out_view` bytes (0 = the harness's
 * default; ignored for objects without output). */
static inline wk_contract_outcome fuzz_drive(const wk_contract_ops *ops, void *obj, void *ctx,
                                             const uint8_t *data, size_t n, size_t push,
                                             size_t out_view)
{
    char why[320];
    wk_contract_outcome cut, whole;
    fuzz_drive_runs(ops, obj, ctx, data, n, push, out_view, &cut, &whole);
    if (!wk_contract_same(&whole, &cut, why, sizeof why)) {
        fprintf(stderr, "fuzz_drive: pushes of %zu and the whole input differ: %s\n", push, why);
        CHECK(0);
    }
    return whole;
}

#endif
