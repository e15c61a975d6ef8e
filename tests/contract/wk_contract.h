/* The contract harness (docs/architecture.md, "The contract"): one drive loop for every streaming
 * object of wirekit, used by the module tests (tests/<module>/) and, through fuzz/fuzz_drive.h, by
 * the fuzz targets, so no test or target writes its own push/view loop.
 *
 * An object is described by a small vtable (wk_contract_ops: reset, destroy, step, finish, an
 * event callback, an end callback). wk_contract_drive() runs it over one input with one plan (how
 * the input is cut into pushes, how large the output views are) and checks the contract on every
 * call:
 *   - in->pos only moves forward inside the push, out->pos only inside its view, and no byte of the
 *     view past out->pos is written (the view is poisoned before each call);
 *   - WK_NEED_INPUT only with the push consumed; WK_NEED_OUTPUT only with a full view (never from
 *     an object without output);
 *   - progress on every call: a call moves a view or reports an event, DONE or an error, and at
 *     most ops->max_empty_events events in a row move nothing;
 *   - WK_EVENT only from an object with an event callback, which reads the details from the
 *     object (and may check them against the push: wk_contract_in_push);
 *   - an error has a code, the category of the code table (wk_code_category) and stays: the step
 *     again and _finish again report it unchanged (every field of the wk_error), consuming and
 *     producing nothing;
 *   - _finish returns WK_DONE or WK_ERROR, and the same again when called twice;
 *   - a writer whose end of input writes bytes (an encoder that buffers, wk_contract_drive_flush):
 *     its flush, called at the end of input with the plan's views until WK_DONE and before
 *     _finish, keeps the step's output rules (NEED_OUTPUT only with a full view, nothing past
 *     out->pos, a bounded number of calls), answers only WK_DONE, WK_NEED_OUTPUT or WK_ERROR,
 *     and once done, a second flush writes nothing and answers WK_DONE again; after an error the
 *     flush reports it unchanged too. Its bytes are part of the run's output.
 * The callbacks add what identifies the stream's events to a record (a running hash fed with
 * wk_contract_record*: the same sequence of bytes gives the same hash however the adds were cut),
 * so runs with different cuts can be compared.
 *
 * wk_contract_check() is the battery: the input whole, byte by byte, split at every point, in
 * chunks of every size, and (objects with output) with output views of 0, 1 and N bytes; every run
 * must keep the contract and reach the whole run's outcome (verdict, error code, offset and
 * category, record; and on success the bytes consumed and produced).
 *
 * wk_contract_encoder_check() checks a whole-item encoder: NEED_OUTPUT with the view untouched
 * (position and every byte) for every view too short, the exact size written otherwise, and a
 * refusal that does not depend on the room offered. */
#ifndef WK_CONTRACT_H
#define WK_CONTRACT_H

#include <wirekit/common.h>

/* A running hash of recorded bytes (FNV-1a, 64 bits). */
typedef struct wk_contract_hash {
    uint64_t h;
    uint64_t n; /* bytes added */
} wk_contract_hash;

void wk_contract_hash_init(wk_contract_hash *h);
void wk_contract_hash_add(wk_contract_hash *h, const void *p, size_t n);
void wk_contract_hash_u64(wk_contract_hash *h, uint64_t v);

/* The outcome of one run. */
typedef struct wk_contract_outcome {
    wk_result verdict;      /* WK_DONE: _finish accepted the end; WK_ERROR: see error */
    wk_error error;         /* the error (verdict WK_ERROR) */
    bool done_by_step;      /* a step returned WK_DONE (the rest went to _finish) */
    uint64_t consumed;      /* input bytes consumed */
    uint64_t produced;      /* output bytes produced */
    wk_contract_hash output; /* of the output bytes */
    wk_contract_hash record; /* of what the callbacks recorded */
    uint64_t events;        /* WK_EVENT returns */
    uint64_t calls;         /* step calls */
} wk_contract_outcome;

typedef struct wk_contract wk_contract;

/* A writer's end-of-input call: writes what it still holds into out (wk_contract_drive_flush). */
typedef wk_result (*wk_contract_flush_fn)(void *obj, wk_out *out, wk_error *err);

typedef struct wk_contract_ops {
    const char *name;
    /* Makes *obj a fresh object for one stream (create, init or reset); false when that fails (the
     * run fails). Called before every run. */
    bool (*reset)(void *obj, void *ctx);
    /* Releases what reset made (may be NULL). Called after every run. */
    void (*destroy)(void *obj, void *ctx);
    /* The object's streaming call and its _finish. */
    wk_result (*step)(void *obj, wk_in *in, wk_out *out, wk_error *err);
    wk_result (*finish)(void *obj, const wk_in *rest, wk_error *err);
    /* On every WK_EVENT: reads the details from obj, checks them, records what identifies the
     * event. Returns false (after wk_contract_fail) when a check failed. NULL: the object reports
     * no events, and a WK_EVENT breaks the contract. */
    bool (*on_event)(wk_contract *c, void *obj);
    /* Once the run is over (after _finish, or after the error): checks and records the final
     * state (may be NULL). */
    bool (*on_end)(wk_contract *c, void *obj);
    bool has_output;           /* the step writes into out; else out is always NULL */
    unsigned max_empty_events; /* WK_EVENTs in a row allowed to move neither view (0: none) */
    /* Which calls may leave bytes in the output view past out->pos (a decoder using the room it
     * was given as scratch, as the object documents): WK_CONTRACT_SCRATCH_NONE (the default: no
     * call writes past out->pos), _ON_ERROR (a call that returns WK_ERROR may), _ALWAYS (any call
     * may). NULL: none. The bytes past the view and a failed object's later calls are checked
     * whatever it says. */
    unsigned (*view_scratch)(void *obj);
} wk_contract_ops;

enum { WK_CONTRACT_SCRATCH_NONE, WK_CONTRACT_SCRATCH_ON_ERROR, WK_CONTRACT_SCRATCH_ALWAYS };

/* How one run cuts the input and sizes the output views. */
typedef struct wk_contract_plan {
    size_t push;            /* bytes per push; 0 = the whole input in one push */
    const size_t *cuts;     /* or explicit push boundaries, ascending, each in 1..n-1 */
    size_t ncuts;
    size_t out_view;        /* output bytes offered per call (0 = 65536) */
    bool zero_probe;        /* before every call with a view, one call with a 0-byte view */
    bool copy;              /* each push in its own exact-size heap copy, freed after the push
                             * (ASan then catches a slice kept past it); else pushes are slices
                             * of the caller's bytes and the run itself allocates nothing */
} wk_contract_plan;

/* What the callbacks see (read-only, except through the functions below). */
struct wk_contract {
    const wk_contract_ops *ops;
    void *ctx;                /* the caller's */
    const uint8_t *data;      /* the whole input of the run */
    size_t size;
    const wk_in *push;        /* the current push (its bytes valid during the callback) */
    uint64_t push_offset;     /* input offset of push->src[0] */
    size_t call_pos;          /* push->pos when the step that reported the event was called */
    wk_contract_outcome oc;   /* so far */
    bool failed;
    char why[320];            /* the first broken rule */
    wk_contract_flush_fn flush; /* the run's flush (NULL: none) */
    unsigned empty_events;    /* WK_EVENTs in a row that moved no view (the harness's count) */
};

/* Adds bytes / a value to the run's record. */
void wk_contract_record(wk_contract *c, const void *p, size_t n);
void wk_contract_record_u64(wk_contract *c, uint64_t v);
/* Records a broken rule (the first one is kept, prefixed with the object's name); returns false. */
bool wk_contract_fail(wk_contract *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* True when p[0..n) lies in the current push (n == 0: always true). */
bool wk_contract_in_push(const wk_contract *c, const void *p, size_t n);

/* One run of obj over data[0..n) with the plan. Returns true when the contract held (a verdict of
 * WK_ERROR is not a broken contract: refusing bad input is the object's job); *oc (may be NULL)
 * gets the outcome, why (may be NULL) the first broken rule. */
bool wk_contract_drive(const wk_contract_ops *ops, void *obj, void *ctx, const uint8_t *data,
                       size_t n, const wk_contract_plan *plan, wk_contract_outcome *oc, char *why,
                       size_t why_cap);

/* As wk_contract_drive, for an object whose end of input writes output (ops->has_output): after
 * the last push, flush(obj, out, err) is called with the plan's output views until it answers
 * WK_DONE (checked as above), then _finish with an empty rest. flush NULL: wk_contract_drive. */
bool wk_contract_drive_flush(const wk_contract_ops *ops, wk_contract_flush_fn flush, void *obj,
                             void *ctx, const uint8_t *data, size_t n,
                             const wk_contract_plan *plan, wk_contract_outcome *oc, char *why,
                             size_t why_cap);

/* The runs of wk_contract_check. */
enum {
    WK_CONTRACT_WHOLE = 1,  /* one push */
    WK_CONTRACT_BYTES = 2,  /* byte by byte */
    WK_CONTRACT_SPLITS = 4, /* two pushes, split at every point (n <= 4096; else the first and last
                             * 256 points and 256 spread between) */
    WK_CONTRACT_CHUNKS = 8, /* pushes of every size 2..n-1 (n <= 512; else 2, 3, 5, 7, 13, 64, 100,
                             * 1000, 4096, 65536) */
    WK_CONTRACT_VIEWS = 16, /* objects with output: views of 1 byte behind 0-byte probes (whole and
                             * byte by byte), and of N = 65536 bytes byte by byte */
    WK_CONTRACT_ALL = 31,
    WK_CONTRACT_ANY_BYTES = 32 /* not in ALL: the runs may write different output bytes (an
                                * object whose output depends on how its input is cut, as it
                                * documents); everything else of the outcome is still compared,
                                * and the callbacks should record what the bytes must mean */
};

/* Runs obj over data[0..n) in every way `what` selects (each push a fresh heap copy). True when
 * every run kept the contract and reached the outcome of the whole run, which *whole (may be NULL)
 * receives; else why says which run broke what. */
bool wk_contract_check(const wk_contract_ops *ops, void *obj, void *ctx, const uint8_t *data,
                       size_t n, unsigned what, wk_contract_outcome *whole, char *why,
                       size_t why_cap);

/* wk_contract_check for a writer with a flush (see wk_contract_drive_flush): every run flushes at
 * its end, and all must reach the same outcome (the same bytes, however input and views were
 * cut). */
bool wk_contract_check_flush(const wk_contract_ops *ops, wk_contract_flush_fn flush, void *obj,
                             void *ctx, const uint8_t *data, size_t n, unsigned what,
                             wk_contract_outcome *whole, char *why, size_t why_cap);

/* True when a and b are the same outcome: verdict, error code, category and offset, record; and
 * for WK_DONE also the bytes consumed and the output. why (may be NULL) says what differs. */
bool wk_contract_same(const wk_contract_outcome *a, const wk_contract_outcome *b, char *why,
                      size_t why_cap);

/* A whole-item encoder under test: encode(ctx, out, err) writes one item or answers. */
typedef struct wk_contract_encoder {
    wk_result (*encode)(void *ctx, wk_out *out, wk_error *err);
    /* Restores the encoder's state before another attempt that may succeed (may be NULL: the
     * encoder is stateless, or its state changes only on WK_DONE). */
    void (*restore)(void *ctx);
    /* True when the encoder's state is what it was before the attempt (may be NULL: not
     * checked); asked after every attempt that answers WK_NEED_OUTPUT or WK_ERROR. */
    bool (*unchanged)(void *ctx);
    void *ctx;
    wk_code refuse;         /* WK_OK: the item must be written; else the code it must be refused
                             * with, in every view */
    size_t size;            /* the size the item must take (SIZE_MAX: not known) */
    const uint8_t *expect;  /* the bytes it must give (NULL: not known) */
} wk_contract_encoder;

/* Checks one encoder call: in views of every length 0..size-1 (size <= 256; else 0..16,
 * size-16..size-1 and 32 lengths spread between) it answers WK_NEED_OUTPUT leaving the view and
 * its own state untouched (pos and every byte, also before pos); in a view of exactly size and in
 * a larger one it answers WK_DONE, writing size
 * bytes (the expected ones) and nothing past them. A refusal (e->refuse) must come in views of 0,
 * 1 and many bytes alike, with that code and the view and the state untouched. *bytes/len (may be NULL) get the
 * encoding (malloc'd, the caller frees). */
bool wk_contract_encoder_check(const wk_contract_encoder *e, uint8_t **bytes, size_t *len,
                               char *why, size_t why_cap);

#endif
