/* The contract harness's adapter for wk_colloq_reader (colloq.h): the ops the colloq tests and
 * fuzz targets drive it with, the checks every event must pass, and the standard record.
 *
 * Checks, on every event: the frame's transition is in the table and leaves the state the session
 * was in, its seq is the number of frames accepted before it (counted from the next_seq of
 * params.session when the reader continues one), the session moved to the
 * transition's target with the next sequence number, the reader's consumed() is the bytes the
 * harness saw consumed, and its trace line has the size wk_colloq_trace_frame_size gives. At the
 * end: a clean end leaves the session alive; an error is a PeerProtocol failure code (740-747)
 * that the session records, with failure_seq = the frames accepted (from the same start).
 *
 * The record: each accepted frame by its transition, seq and trace line (so every value counts),
 * then the session's final state (state, next_seq, finished, failure, failure_seq). */
#ifndef WK_CONTRACT_COLLOQ_H
#define WK_CONTRACT_COLLOQ_H

#include "wk_contract.h"
#include <wirekit/colloq.h>

typedef struct wk_contract_colloq wk_contract_colloq;
struct wk_contract_colloq {
    /* Set by the caller before a run (wk_contract_colloq_setup). */
    wk_colloq_reader_params params;
    /* Called after the checks on every event (may be NULL): what a test adds, e.g. its own trace.
     * Return false (after wk_contract_fail) to fail. */
    bool (*on_event)(wk_contract *c, wk_contract_colloq *m);
    /* Called before every step (may be NULL): the sender of the frame that starts at input offset
     * `at` (wk_colloq_reader_consumed_get), set with wk_colloq_reader_sender_set; for streams whose
     * frames come from more than one role (a fuzz target's live modes). */
    uint32_t (*sender_at)(wk_contract_colloq *m, uint64_t at);
    void *user;
    /* The reader under test, valid during the callbacks (made at reset, destroyed after the run). */
    wk_colloq_reader *r;
    /* The checks' state in one run, and after it the session's final state. */
    uint64_t frames;
    wk_colloq_session end;
};

/* The ops: obj is a wk_contract_colloq (ctx unused). */
extern const wk_contract_ops wk_contract_colloq_ops;

/* Sets up *m for a plan (borrowed), wire and sender (WK_COLLOQ_SENDER_TRANSCRIPT or a live role),
 * no callbacks, default allocator. */
void wk_contract_colloq_setup(wk_contract_colloq *m, const wk_colloq_plan *plan,
                              wk_colloq_wire wire, uint32_t sender);

#endif
