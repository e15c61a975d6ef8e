/* The contract harness's adapter for the ILTP streaming objects (iltp.h): the ops the iltp tests
 * and fuzz targets drive them with, the checks every event and end must pass, and the standard
 * event record.
 *
 *   wk_contract_iltp_decoder_ops  the Lace-065 stream decoder (wk_iltp_decoder_decode /
 *                                 _finish; output, no events). At the end: decoder_produced() and
 *                                 decoder_consumed() equal what the harness saw moved; an error is
 *                                 PeerProtocol with an offset inside the input. Optionally keeps
 *                                 one decoder across runs (reset) and the decoded bytes.
 *   wk_contract_iltp_items_ops    the item decoder (wk_iltp_item_decoder_decode / _finish; events,
 *                                 no output). Every event is an item or (streaming on) a Blob
 *                                 event, never both; an item starts where the previous one ended
 *                                 (its offset), ends where the decoder stopped, and its bytes are
 *                                 the input's; Blob DATA slices lie in the current push, offsets
 *                                 contiguous, `done` counting up to the length; END at the length.
 *                                 A Blob whose data is empty, and every END, move no input: one
 *                                 empty event in a row is allowed.
 *   wk_contract_iltp_reader_ops   the per-direction reader (wk_iltp_reader_read / _finish) over
 *                                 carrier bytes; after each preface item the adapter calls
 *                                 wk_iltp_reader_begin(enc) as a session would. Under compression
 *                                 the items come out of the reader's decoded buffer, so events do
 *                                 not move the carrier input (any number of empty events allowed).
 *
 * The record: each item as (kind, offset, length, rows or record type) and its bytes; each Blob
 * BEGIN and END as (kind, length, offset, done) with its hash, DATA as its bytes alone (its
 * slicing depends on the pushes). */
#ifndef WK_CONTRACT_ILTP_H
#define WK_CONTRACT_ILTP_H

#include "wk_contract.h"
#include <wirekit/iltp.h>

typedef struct wk_contract_iltp wk_contract_iltp;
struct wk_contract_iltp {
    /* Set by the caller before a run (wk_contract_iltp_setup). */
    wk_iltp_encoding enc;           /* decoder: the token; reader: what begin selects */
    wk_iltp_backend backend;        /* decoder: deflate12c backend */
    wk_iltp_form form;              /* item decoder, reader */
    size_t max_item;                /* item decoder, reader (0: the cap) */
    bool stream_blobs;              /* item decoder, reader */
    const wk_allocator *allocator;  /* NULL: malloc/free */
    /* Called after the checks on every item (may be NULL), e.g. to list the items of a run (the
     * first item of a run has m->items_seen == 1). Return false (after wk_contract_fail) to fail. */
    bool (*on_item)(wk_contract *c, struct wk_contract_iltp *m, const wk_iltp_item *it);
    void *user;
    /* Stream decoder only (optional). reuse: the decoder made by the first run is kept (destroy
     * leaves it; wk_contract_iltp_release frees it) and every later run starts with
     * wk_iltp_decoder_reset, so runs compare a reset decoder with a fresh one. keep[0] / keep[1]
     * (keep_cap bytes each, given by the caller): the decoded bytes of the last run and of the one
     * before (kept[] bytes, at most keep_cap); see also ended[] below. */
    bool reuse;
    uint8_t *keep[2];
    size_t keep_cap, kept[2];
    /* The object under test (made by the ops' reset, freed by their destroy). */
    wk_iltp_decoder *dec;
    wk_iltp_item_decoder *items;
    wk_iltp_reader *reader;
    /* The checks' state in one run. */
    uint64_t next_item;             /* item decoder: offset where the next item starts */
    uint64_t items_seen, blob_events;
    bool blob_open;
    uint64_t blob_len, blob_done, blob_next;
    bool ended[2];                  /* decoder: the end mark was seen, in the last run and the one
                                     * before (set at a run's end) */
};

extern const wk_contract_ops wk_contract_iltp_decoder_ops;
extern const wk_contract_ops wk_contract_iltp_items_ops;
extern const wk_contract_ops wk_contract_iltp_reader_ops;

/* Clears *m and sets the run's parameters (the form: WK_ILTP_FORM_ANY, no item bound). */
void wk_contract_iltp_setup(wk_contract_iltp *m, wk_iltp_encoding enc, wk_iltp_backend backend,
                            bool stream_blobs);
/* Frees what the last run left (the ops' destroy does it after every run; safe to call twice). */
void wk_contract_iltp_release(wk_contract_iltp *m);

#endif
