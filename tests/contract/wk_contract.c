/* The contract harness: see wk_contract.h. */
#include "wk_contract.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xA5
#define VIEW_DEFAULT 65536

/* ---------------------------------------------------------------------------------------------
 * Record hash
 * ------------------------------------------------------------------------------------------- */
void wk_contract_hash_init(wk_contract_hash *h)
{
    h->h = 0xcbf29ce484222325ull;
    h->n = 0;
}

void wk_contract_hash_add(wk_contract_hash *h, const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t x = h->h;
    for (size_t i = 0; i < n; i++) {
        x ^= b[i];
        x *= 0x100000001b3ull;
    }
    h->h = x;
    h->n += n;
}

void wk_contract_hash_u64(wk_contract_hash *h, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    wk_contract_hash_add(h, b, 8);
}

void wk_contract_record(wk_contract *c, const void *p, size_t n)
{
    wk_contract_hash_add(&c->oc.record, p, n);
}

void wk_contract_record_u64(wk_contract *c, uint64_t v) { wk_contract_hash_u64(&c->oc.record, v); }

bool wk_contract_fail(wk_contract *c, const char *fmt, ...)
{
    if (c->failed) return false;
    c->failed = true;
    int k = snprintf(c->why, sizeof c->why, "%s: ", c->ops && c->ops->name ? c->ops->name : "?");
    if (k < 0 || (size_t)k >= sizeof c->why) k = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why + k, sizeof c->why - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

bool wk_contract_in_push(const wk_contract *c, const void *p, size_t n)
{
    if (n == 0) return true;
    if (!c->push || !p) return false;
    const uint8_t *q = p, *s = c->push->src;
    return q >= s && n <= c->push->size && q <= s + (c->push->size - n);
}

/* ---------------------------------------------------------------------------------------------
 * One run
 * ------------------------------------------------------------------------------------------- */
static bool same_error(const wk_error *a, const wk_error *b)
{
    return a->code == b->code && a->category == b->category && a->has_offset == b->has_offset &&
           a->offset == b->offset && strcmp(a->msg, b->msg) == 0;
}

static bool error_ok(wk_contract *c, const wk_error *e, const char *where)
{
    if (e->code == WK_OK) return wk_contract_fail(c, "%s: WK_ERROR with no code in the wk_error", where);
    if (e->category != wk_code_category(e->code))
        return wk_contract_fail(c, "%s: %s carries category %s, the code table says %s", where,
                                wk_error_name(e->code), wk_category_name(e->category),
                                wk_category_name(wk_code_category(e->code)));
    return true;
}

static const char *result_name(wk_result r)
{
    switch (r) {
    case WK_ERROR: return "WK_ERROR";
    case WK_DONE: return "WK_DONE";
    case WK_NEED_INPUT: return "WK_NEED_INPUT";
    case WK_NEED_OUTPUT: return "WK_NEED_OUTPUT";
    case WK_EVENT: return "WK_EVENT";
    default: return "an unknown wk_result";
    }
}

/* The output side of a run: a view buffer kept poisoned between calls (what a call wrote is
 * poisoned again after it), so bytes past out->pos that a call wrote show. */
typedef struct view {
    uint8_t *buf;
    size_t cap;
} view;

/* After a call that left out->pos at pos: no byte past pos changed (all of them for views up to
 * 4 KiB; else the 4 KiB after pos and the 16 guard bytes after the view). Poisons [0, pos) again. */
/* True when b[0..n) are all POISON: compared a block at a time with memcmp (the fuzz targets call
 * this after every step; a byte loop under coverage instrumentation dominated their time). */
static bool all_poison(const uint8_t *b, size_t n)
{
    static uint8_t block[1024];
    if (block[0] != POISON) memset(block, POISON, sizeof block);
    for (size_t k; n; b += k, n -= k) {
        k = n < sizeof block ? n : sizeof block;
        if (memcmp(b, block, k) != 0) return false;
    }
    return true;
}

/* Checks the view after a call that produced pos bytes: nothing written past them (unless the
 * call may use the room as scratch), nothing past the view; then poisons the view again. */
static bool view_check(wk_contract *c, view *v, size_t pos, bool scratch)
{
    size_t end = v->cap <= 4096 + 16 || pos + 4096 >= v->cap ? v->cap : pos + 4096;
    if (scratch) end = v->cap - 16;
    else if (!all_poison(v->buf + pos, end - pos))
        for (size_t i = pos; i < end; i++)
            if (v->buf[i] != POISON)
                return wk_contract_fail(c, "the step wrote byte %zu of the output view, past out->pos "
                                        "%zu", i, pos);
    if (!all_poison(v->buf + v->cap - 16, 16))
        for (size_t i = v->cap - 16; i < v->cap; i++)
            if (v->buf[i] != POISON)
                return wk_contract_fail(c, "the step wrote byte %zu, past the output view", i);
    memset(v->buf, POISON, scratch ? end : pos);
    return true;
}

/* The error is set: it must stay (step and finish report it unchanged and move nothing). */
static bool check_sticky(wk_contract *c, void *obj, wk_in *in, view *v, const wk_error *e)
{
    const wk_contract_ops *ops = c->ops;
    static const uint8_t one[1] = {0x00};
    wk_in again = *in;
    if (again.pos == again.size) again = (wk_in){one, 1, 0};
    size_t in0 = again.pos;
    wk_out o = {v->buf, v->cap - 16, 0}, *op = NULL;
    if (ops->has_output) op = &o;
    wk_error e2;
    wk_error_clear(&e2);
    wk_result r = ops->step(obj, &again, op, &e2);
    if (ops->has_output && !view_check(c, v, o.pos, false)) return false;
    if (r != WK_ERROR) return wk_contract_fail(c, "after %s the step returned %s (errors stay)",
                                               wk_error_name(e->code), result_name(r));
    if (again.pos != in0 || o.pos != 0)
        return wk_contract_fail(c, "after %s the step consumed or produced bytes",
                                wk_error_name(e->code));
    if (!same_error(e, &e2))
        return wk_contract_fail(c, "after %s (offset %llu, \"%s\") the step reported %s (offset "
                                "%llu, \"%s\")", wk_error_name(e->code),
                                (unsigned long long)e->offset, e->msg, wk_error_name(e2.code),
                                (unsigned long long)e2.offset, e2.msg);
    if (c->flush) {
        wk_out fo = {v->buf, v->cap - 16, 0};
        wk_error_clear(&e2);
        r = c->flush(obj, &fo, &e2);
        if (!view_check(c, v, fo.pos, false)) return false;
        if (r != WK_ERROR || fo.pos != 0 || !same_error(e, &e2))
            return wk_contract_fail(c, "after %s the flush returned %s with %s, %zu bytes written "
                                    "(errors stay)", wk_error_name(e->code), result_name(r),
                                    wk_error_name(e2.code), fo.pos);
    }
    wk_in rest = *in;
    wk_error_clear(&e2);
    r = ops->finish(obj, &rest, &e2);
    if (r != WK_ERROR || !same_error(e, &e2))
        return wk_contract_fail(c, "after %s, _finish returned %s with %s (errors stay)",
                                wk_error_name(e->code), result_name(r), wk_error_name(e2.code));
    return true;
}

/* A step or flush answered WK_ERROR with e: it is the run's outcome (the run is over), a valid
 * error (`what` names the call), and it must stay. */
static bool error_ends_run(wk_contract *c, void *obj, wk_in *in, view *v, const wk_error *e, bool *over,
                           const char *what)
{
    c->oc.verdict = WK_ERROR;
    c->oc.error = *e;
    *over = true;
    if (!error_ok(c, e, what)) return false;
    return check_sticky(c, obj, in, v, e);
}

/* _finish with rest; checks it and its repetition. */
static bool run_finish(wk_contract *c, void *obj, wk_in *in, view *v, const wk_in *rest)
{
    const wk_contract_ops *ops = c->ops;
    wk_in r1 = *rest;
    wk_error e;
    wk_error_clear(&e);
    wk_result r = ops->finish(obj, &r1, &e);
    if (r1.src != rest->src || r1.size != rest->size || r1.pos != rest->pos)
        return wk_contract_fail(c, "_finish changed its rest view");
    if (r != WK_DONE && r != WK_ERROR)
        return wk_contract_fail(c, "_finish returned %s (only WK_DONE or WK_ERROR)", result_name(r));
    c->oc.verdict = r;
    if (r == WK_ERROR) {
        c->oc.error = e;
        if (!error_ok(c, &e, "_finish")) return false;
        return check_sticky(c, obj, in, v, &e);
    }
    wk_error e2;
    wk_error_clear(&e2);
    wk_in r2 = *rest;
    r = ops->finish(obj, &r2, &e2);
    if (r != WK_DONE) return wk_contract_fail(c, "_finish accepted the end, then returned %s",
                                              result_name(r));
    return true;
}

/* The writer's flush at the end of input: called with the plan's views until WK_DONE; then once
 * more, which must write nothing and answer WK_DONE. Sets *over on an error (the verdict). */
static bool run_flush(wk_contract *c, void *obj, wk_in *in, view *v, const wk_contract_plan *plan,
                      bool *over)
{
    const wk_contract_ops *ops = c->ops;
    size_t out_view = plan->out_view ? plan->out_view : VIEW_DEFAULT;
    bool probe_next = plan->zero_probe;
    uint64_t calls0 = c->oc.calls, produced0 = c->oc.produced;
    for (;;) {
        size_t vsize = probe_next ? 0 : out_view;
        if (vsize > v->cap - 16) vsize = v->cap - 16;
        wk_out o = {v->buf, vsize, 0};
        wk_error e;
        wk_error_clear(&e);
        c->oc.calls++;
        wk_result r = c->flush(obj, &o, &e);
        if (o.dst != v->buf || o.size != vsize)
            return wk_contract_fail(c, "the flush changed the output view's dst or size");
        if (o.pos > o.size)
            return wk_contract_fail(c, "the flush moved out->pos to %zu, past the view of %zu",
                                    o.pos, o.size);
        wk_contract_hash_add(&c->oc.output, v->buf, o.pos);
        c->oc.produced += o.pos;
        unsigned scratch = ops->view_scratch ? ops->view_scratch(obj) : WK_CONTRACT_SCRATCH_NONE;
        if (!view_check(c, v, o.pos, scratch == WK_CONTRACT_SCRATCH_ALWAYS ||
                                         (scratch == WK_CONTRACT_SCRATCH_ON_ERROR && r == WK_ERROR)))
            return false;
        probe_next = plan->zero_probe && vsize != 0;
        switch (r) {
        case WK_DONE: {
            wk_out again = {v->buf, v->cap - 16, 0};
            wk_error_clear(&e);
            r = c->flush(obj, &again, &e);
            if (!view_check(c, v, again.pos, false)) return false;
            if (r != WK_DONE || again.pos != 0)
                return wk_contract_fail(c, "the flush was done, then returned %s writing %zu bytes",
                                        result_name(r), again.pos);
            return true;
        }
        case WK_ERROR:
            return error_ends_run(c, obj, in, v, &e, over, "flush");
        case WK_NEED_OUTPUT:
            if (o.pos != o.size)
                return wk_contract_fail(c, "the flush returned WK_NEED_OUTPUT with %zu of %zu "
                                        "bytes of the view free", o.size - o.pos, o.size);
            break;
        default:
            return wk_contract_fail(c, "the flush returned %s (only WK_DONE, WK_NEED_OUTPUT or "
                                    "WK_ERROR)", result_name(r));
        }
        /* every call fills its view (or is a 0-byte probe): bounded by what it produced */
        if (c->oc.calls - calls0 > (16 + 2 * (c->oc.produced - produced0)) * 2)
            return wk_contract_fail(c, "%llu flush calls without an end",
                                    (unsigned long long)(c->oc.calls - calls0));
    }
}

/* Drives one push; returns false when the run is over (an error, DONE, or a broken rule). */
static bool run_push(wk_contract *c, void *obj, wk_in *in, view *v, const wk_contract_plan *plan,
                     bool *over)
{
    const wk_contract_ops *ops = c->ops;
    size_t out_view = plan->out_view ? plan->out_view : VIEW_DEFAULT;
    bool probe_next = ops->has_output && plan->zero_probe;
    uint64_t calls0 = c->oc.calls, consumed0 = c->oc.consumed, produced0 = c->oc.produced;
    for (;;) {
        size_t vsize = probe_next ? 0 : out_view;
        if (vsize > v->cap - 16) vsize = v->cap - 16;
        wk_out o = {v->buf, vsize, 0}, *op = NULL;
        if (ops->has_output) op = &o;
        const uint8_t *src0 = in->src;
        size_t size0 = in->size, in0 = in->pos;
        c->call_pos = in0;
        wk_error e;
        wk_error_clear(&e);
        c->oc.calls++;
        wk_result r = ops->step(obj, in, op, &e);
        if (in->src != src0 || in->size != size0)
            return wk_contract_fail(c, "the step changed the input view's src or size");
        if (in->pos < in0 || in->pos > in->size)
            return wk_contract_fail(c, "in->pos moved from %zu to %zu (push of %zu)", in0, in->pos,
                                    in->size);
        if (ops->has_output) {
            if (o.dst != v->buf || o.size != vsize)
                return wk_contract_fail(c, "the step changed the output view's dst or size");
            if (o.pos > o.size)
                return wk_contract_fail(c, "out->pos %zu past the view of %zu", o.pos, o.size);
            wk_contract_hash_add(&c->oc.output, v->buf, o.pos);
            c->oc.produced += o.pos;
            unsigned scratch = ops->view_scratch ? ops->view_scratch(obj) : WK_CONTRACT_SCRATCH_NONE;
            if (!view_check(c, v, o.pos, scratch == WK_CONTRACT_SCRATCH_ALWAYS ||
                                             (scratch == WK_CONTRACT_SCRATCH_ON_ERROR && r == WK_ERROR)))
                return false;
        }
        size_t moved_in = in->pos - in0;
        c->oc.consumed += moved_in;
        bool moved = moved_in || o.pos;
        probe_next = ops->has_output && plan->zero_probe && vsize != 0;
        if (moved) c->empty_events = 0; /* counted in a row, across calls and pushes */
        switch (r) {
        case WK_ERROR:
            return error_ends_run(c, obj, in, v, &e, over, "step");
        case WK_DONE:
            c->oc.done_by_step = true;
            *over = true;
            return true;
        case WK_NEED_INPUT:
            if (in->pos != in->size)
                return wk_contract_fail(c, "WK_NEED_INPUT with %zu bytes of the push unread",
                                        in->size - in->pos);
            return true;
        case WK_NEED_OUTPUT:
            if (!ops->has_output)
                return wk_contract_fail(c, "WK_NEED_OUTPUT from an object without output");
            if (o.pos != o.size)
                return wk_contract_fail(c, "WK_NEED_OUTPUT with %zu of %zu bytes of the view free",
                                        o.size - o.pos, o.size);
            break;
        case WK_EVENT:
            c->oc.events++;
            if (!ops->on_event)
                return wk_contract_fail(c, "WK_EVENT from an object that reports no events");
            if (!moved && ++c->empty_events > ops->max_empty_events)
                return wk_contract_fail(c, "%u WK_EVENTs in a row moved neither view",
                                        c->empty_events);
            if (!ops->on_event(c, obj)) {
                if (!c->failed) wk_contract_fail(c, "the event callback failed");
                return false;
            }
            break;
        default:
            return wk_contract_fail(c, "the step returned %d, not a wk_result", (int)r);
        }
        /* Every call moves a view or is an event (bounded above) or a 0-byte probe, so the
         * calls of a push are bounded by what it consumed and produced. */
        uint64_t bound = (16 + 2 * (c->oc.consumed - consumed0) + 2 * (c->oc.produced - produced0)) *
                         (1 + ops->max_empty_events) * (plan->zero_probe ? 2 : 1);
        if (c->oc.calls - calls0 > bound)
            return wk_contract_fail(c, "%llu calls on a push of %zu bytes without an end",
                                    (unsigned long long)(c->oc.calls - calls0), in->size);
    }
}

bool wk_contract_drive(const wk_contract_ops *ops, void *obj, void *ctx, const uint8_t *data,
                       size_t n, const wk_contract_plan *plan, wk_contract_outcome *oc, char *why,
                       size_t why_cap)
{
    return wk_contract_drive_flush(ops, NULL, obj, ctx, data, n, plan, oc, why, why_cap);
}

bool wk_contract_drive_flush(const wk_contract_ops *ops, wk_contract_flush_fn flush, void *obj,
                             void *ctx, const uint8_t *data, size_t n,
                             const wk_contract_plan *plan, wk_contract_outcome *oc, char *why,
                             size_t why_cap)
{
    static const wk_contract_plan whole = {0, NULL, 0, 0, false, false};
    static uint8_t empty[1];
    if (!plan) plan = &whole;
    wk_contract c;
    memset(&c, 0, sizeof c);
    c.ops = ops;
    c.flush = flush;
    c.ctx = ctx;
    c.data = data ? data : empty;
    c.size = n;
    c.oc.verdict = WK_ERROR;
    wk_contract_hash_init(&c.oc.output);
    wk_contract_hash_init(&c.oc.record);
    view v = {NULL, 0};
    uint8_t vbuf[256];
    if (ops->has_output) {
        size_t want = (plan->out_view ? plan->out_view : VIEW_DEFAULT) + 16;
        v.cap = want;
        v.buf = want <= sizeof vbuf ? vbuf : malloc(want);
        if (!v.buf) {
            wk_contract_fail(&c, "cannot allocate the output view");
            goto out;
        }
        memset(v.buf, POISON, v.cap);
    }
    if (flush && !ops->has_output) {
        wk_contract_fail(&c, "a flush for an object without output");
        goto out;
    }
    if (!ops->reset(obj, ctx)) {
        wk_contract_fail(&c, "reset failed");
        goto out;
    }
    bool over = false;
    size_t at = 0, k = 0;
    do {
        size_t end;
        if (plan->ncuts) end = k < plan->ncuts ? plan->cuts[k] : n;
        else end = plan->push && n - at > plan->push ? at + plan->push : n;
        k++;
        if (end < at || end > n) {
            wk_contract_fail(&c, "bad plan: cut %zu after %zu", end, at);
            break;
        }
        size_t len = end - at;
        uint8_t *copy = NULL;
        wk_in in = {c.data + at, len, 0};
        if (plan->copy) {
            copy = malloc(len ? len : 1);
            if (!copy) {
                wk_contract_fail(&c, "cannot allocate a push");
                break;
            }
            if (len) memcpy(copy, c.data + at, len);
            in.src = copy;
        }
        c.push = &in;
        c.push_offset = at;
        bool ok = run_push(&c, obj, &in, &v, plan, &over);
        if (ok && over && c.oc.done_by_step) {
            /* the rest: this push's unread bytes and everything after it */
            wk_in rest = {c.data + at + in.pos, n - at - in.pos, 0};
            ok = run_finish(&c, obj, &in, &v, &rest);
        }
        c.push = NULL;
        free(copy);
        if (!ok || over) break;
        at = end;
    } while (at < n);
    if (!c.failed && !over) {
        wk_in none = {c.data + n, 0, 0};
        wk_in last = none;
        if ((!flush || run_flush(&c, obj, &last, &v, plan, &over)) && !over)
            run_finish(&c, obj, &last, &v, &none);
    }
    if (!c.failed && ops->on_end && !ops->on_end(&c, obj) && !c.failed)
        wk_contract_fail(&c, "the end callback failed");
    if (ops->destroy) ops->destroy(obj, ctx);
out:
    if (v.buf && v.buf != vbuf) free(v.buf);
    if (oc) *oc = c.oc;
    if (why && why_cap) snprintf(why, why_cap, "%s", c.failed ? c.why : "");
    return !c.failed;
}

/* ---------------------------------------------------------------------------------------------
 * The battery
 * ------------------------------------------------------------------------------------------- */
bool wk_contract_same(const wk_contract_outcome *a, const wk_contract_outcome *b, char *why,
                      size_t why_cap)
{
    char tmp[1];
    if (!why || !why_cap) {
        why = tmp;
        why_cap = sizeof tmp;
    }
    if (a->verdict != b->verdict) {
        snprintf(why, why_cap, "verdict %s vs %s (%s at %llu)", result_name(a->verdict),
                 result_name(b->verdict),
                 wk_error_name(a->verdict == WK_ERROR ? a->error.code : b->error.code),
                 (unsigned long long)(a->verdict == WK_ERROR ? a->error.offset : b->error.offset));
        return false;
    }
    if (a->verdict == WK_ERROR &&
        (a->error.code != b->error.code || a->error.category != b->error.category ||
         a->error.has_offset != b->error.has_offset || a->error.offset != b->error.offset)) {
        snprintf(why, why_cap, "error %s at %llu vs %s at %llu", wk_error_name(a->error.code),
                 (unsigned long long)a->error.offset, wk_error_name(b->error.code),
                 (unsigned long long)b->error.offset);
        return false;
    }
    if (a->record.h != b->record.h || a->record.n != b->record.n) {
        snprintf(why, why_cap, "the event records differ (%llu vs %llu bytes recorded)",
                 (unsigned long long)a->record.n, (unsigned long long)b->record.n);
        return false;
    }
    if (a->verdict == WK_DONE) {
        if (a->done_by_step != b->done_by_step || a->consumed != b->consumed) {
            snprintf(why, why_cap, "consumed %llu vs %llu bytes", (unsigned long long)a->consumed,
                     (unsigned long long)b->consumed);
            return false;
        }
        if (a->produced != b->produced || a->output.h != b->output.h) {
            snprintf(why, why_cap, "output %llu vs %llu bytes (or different bytes)",
                     (unsigned long long)a->produced, (unsigned long long)b->produced);
            return false;
        }
    }
    return true;
}

typedef struct battery {
    const wk_contract_ops *ops;
    wk_contract_flush_fn flush;
    void *obj, *ctx;
    const uint8_t *data;
    size_t n;
    wk_contract_outcome whole;
    char *why;
    size_t why_cap;
    bool any_bytes; /* WK_CONTRACT_ANY_BYTES */
} battery;

static bool one(battery *b, const wk_contract_plan *plan, const char *label, size_t arg)
{
    wk_contract_outcome oc;
    char w[320];
    if (!wk_contract_drive_flush(b->ops, b->flush, b->obj, b->ctx, b->data, b->n, plan, &oc, w,
                                 sizeof w)) {
        snprintf(b->why, b->why_cap, "%s %zu: %s", label, arg, w);
        return false;
    }
    char d[200];
    if (b->any_bytes) {
        oc.produced = b->whole.produced;
        oc.output = b->whole.output;
    }
    if (!wk_contract_same(&b->whole, &oc, d, sizeof d)) {
        snprintf(b->why, b->why_cap, "%s: %s %zu differs from the whole run: %s",
                 b->ops->name ? b->ops->name : "?", label, arg, d);
        return false;
    }
    return true;
}

bool wk_contract_check(const wk_contract_ops *ops, void *obj, void *ctx, const uint8_t *data,
                       size_t n, unsigned what, wk_contract_outcome *whole, char *why,
                       size_t why_cap)
{
    return wk_contract_check_flush(ops, NULL, obj, ctx, data, n, what, whole, why, why_cap);
}

bool wk_contract_check_flush(const wk_contract_ops *ops, wk_contract_flush_fn flush, void *obj,
                             void *ctx, const uint8_t *data, size_t n, unsigned what,
                             wk_contract_outcome *whole, char *why, size_t why_cap)
{
    char tmp[320];
    if (!why || !why_cap) {
        why = tmp;
        why_cap = sizeof tmp;
    }
    why[0] = 0;
    battery b = {ops, flush, obj, ctx, data, n, {0}, why, why_cap, (what & WK_CONTRACT_ANY_BYTES) != 0};
    wk_contract_plan p = {0, NULL, 0, 0, false, true};
    char w[320];
    bool ok = wk_contract_drive_flush(ops, flush, obj, ctx, data, n, &p, &b.whole, w, sizeof w);
    if (whole) *whole = b.whole;
    if (!ok) {
        snprintf(why, why_cap, "whole: %s", w);
        return false;
    }
    if (what & WK_CONTRACT_BYTES) {
        p.push = 1;
        if (!one(&b, &p, "pushes of", 1)) return false;
    }
    if ((what & WK_CONTRACT_SPLITS) && n > 1) {
        p.push = 0;
        p.ncuts = 1;
        for (size_t k = 1; k < n; k++) {
            if (n > 4096 && k > 256 && k < n - 256 && k % (n / 256 + 1) != 0) continue;
            p.cuts = &k;
            if (!one(&b, &p, "split at", k)) return false;
        }
        p.ncuts = 0;
        p.cuts = NULL;
    }
    if ((what & WK_CONTRACT_CHUNKS) && n > 2) {
        static const size_t sizes[] = {2, 3, 5, 7, 13, 64, 100, 1000, 4096, 65536};
        if (n <= 512) {
            for (size_t s = 2; s < n; s++) {
                p.push = s;
                if (!one(&b, &p, "pushes of", s)) return false;
            }
        } else {
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && sizes[i] < n; i++) {
                p.push = sizes[i];
                if (!one(&b, &p, "pushes of", sizes[i])) return false;
            }
        }
    }
    if ((what & WK_CONTRACT_VIEWS) && ops->has_output) {
        wk_contract_plan v1 = {0, NULL, 0, 1, true, true};
        if (!one(&b, &v1, "whole, output views of", 1)) return false;
        v1.push = 1;
        if (!one(&b, &v1, "pushes of 1, output views of", 1)) return false;
        wk_contract_plan vn = {1, NULL, 0, VIEW_DEFAULT, false, true};
        if (!one(&b, &vn, "pushes of 1, output views of", VIEW_DEFAULT)) return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Whole-item encoders
 * ------------------------------------------------------------------------------------------- */
#define LEAD 3 /* the view starts LEAD bytes into the buffer: writes before pos are caught */

static bool enc_attempt(const wk_contract_encoder *e, uint8_t *buf, size_t cap, size_t vlen,
                        wk_result *r, size_t *wrote, wk_error *err, char *why, size_t why_cap)
{
    memset(buf, POISON, cap);
    wk_out o = {buf, LEAD + vlen, LEAD};
    wk_error_clear(err);
    *r = e->encode(e->ctx, &o, err);
    if (o.dst != buf || o.size != LEAD + vlen || o.pos < LEAD || o.pos > o.size) {
        snprintf(why, why_cap, "view of %zu: the encoder moved the view (pos %zu)", vlen, o.pos);
        return false;
    }
    *wrote = o.pos - LEAD;
    if (*r != WK_DONE && e->unchanged && !e->unchanged(e->ctx)) {
        snprintf(why, why_cap, "view of %zu (%s): the encoder's state changed", vlen,
                 result_name(*r));
        return false;
    }
    for (size_t i = 0; i < cap; i++) {
        bool inside = i >= LEAD && i < o.pos;
        if (!inside && buf[i] != POISON) {
            snprintf(why, why_cap, "view of %zu (%s): byte %zu outside what it wrote changed", vlen,
                     result_name(*r), i);
            return false;
        }
    }
    return true;
}

bool wk_contract_encoder_check(const wk_contract_encoder *e, uint8_t **bytes, size_t *len,
                               char *why, size_t why_cap)
{
    char tmp[320];
    if (!why || !why_cap) {
        why = tmp;
        why_cap = sizeof tmp;
    }
    why[0] = 0;
    if (bytes) *bytes = NULL;
    if (len) *len = 0;
    size_t size = e->size;
    wk_result r;
    size_t wrote;
    wk_error err;
    if (e->refuse != WK_OK) {
        static const size_t views[] = {0, 1, 4096};
        uint8_t *buf = malloc(LEAD + 4096 + 16);
        if (!buf) return false;
        for (size_t i = 0; i < 3; i++) {
            if (e->restore) e->restore(e->ctx);
            if (!enc_attempt(e, buf, LEAD + 4096 + 16, views[i], &r, &wrote, &err, why, why_cap)) {
                free(buf);
                return false;
            }
            if (r != WK_ERROR || err.code != e->refuse || wrote != 0) {
                snprintf(why, why_cap, "view of %zu: %s (%s), %zu bytes written; want a refusal "
                         "with %s and nothing written", views[i], result_name(r),
                         wk_error_name(err.code), wrote, wk_error_name(e->refuse));
                free(buf);
                return false;
            }
            if (err.category != wk_code_category(err.code)) {
                snprintf(why, why_cap, "%s with the category %s", wk_error_name(err.code),
                         wk_category_name(err.category));
                free(buf);
                return false;
            }
        }
        free(buf);
        return true;
    }
    if (size == SIZE_MAX) {
        /* find the size with a large view first */
        size_t cap = 1 << 20;
        uint8_t *buf = malloc(LEAD + cap + 16);
        if (!buf) return false;
        if (e->restore) e->restore(e->ctx);
        bool ok = enc_attempt(e, buf, LEAD + cap + 16, cap, &r, &wrote, &err, why, why_cap);
        free(buf);
        if (!ok) return false;
        if (r != WK_DONE) {
            snprintf(why, why_cap, "in a view of %zu: %s (%s)", cap, result_name(r),
                     wk_error_name(err.code));
            return false;
        }
        size = wrote;
    }
    size_t cap = LEAD + size + 64;
    uint8_t *buf = malloc(cap);
    if (!buf) return false;
    size_t step = size > 256 ? size / 32 : 1;
    for (size_t k = 0; k < size; k++) {
        if (size > 256 && k > 16 && k < size - 16 && k % step != 0) continue;
        if (e->restore) e->restore(e->ctx);
        if (!enc_attempt(e, buf, cap, k, &r, &wrote, &err, why, why_cap)) goto fail;
        if (r != WK_NEED_OUTPUT || wrote != 0) {
            snprintf(why, why_cap, "view of %zu for an item of %zu: %s (%s), %zu bytes written; "
                     "want WK_NEED_OUTPUT with the view untouched", k, size, result_name(r),
                     wk_error_name(err.code), wrote);
            goto fail;
        }
    }
    uint8_t *first = malloc(size ? size : 1);
    if (!first) goto fail;
    size_t views[2] = {size, size + 64};
    for (int i = 0; i < 2; i++) {
        if (e->restore) e->restore(e->ctx);
        if (!enc_attempt(e, buf, cap, views[i], &r, &wrote, &err, why, why_cap)) {
            free(first);
            goto fail;
        }
        if (r != WK_DONE || wrote != size) {
            snprintf(why, why_cap, "view of %zu for an item of %zu: %s (%s), %zu bytes written",
                     views[i], size, result_name(r), wk_error_name(err.code), wrote);
            free(first);
            goto fail;
        }
        if (i == 0) memcpy(first, buf + LEAD, size);
        else if (size && memcmp(first, buf + LEAD, size) != 0) {
            snprintf(why, why_cap, "two attempts wrote different bytes");
            free(first);
            goto fail;
        }
    }
    if (e->expect && size && memcmp(first, e->expect, size) != 0) {
        snprintf(why, why_cap, "the encoding differs from the expected bytes");
        free(first);
        goto fail;
    }
    free(buf);
    if (bytes) *bytes = first;
    else free(first);
    if (len) *len = size;
    return true;
fail:
    free(buf);
    return false;
}
