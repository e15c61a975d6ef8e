/* The contract harness's adapter for wk_moqt_stream_reader (moqt.h): the ops the moqt tests and
 * fuzz targets drive it with, the checks every event must pass, and the standard event record, so
 * a reference reader (fuzz/moqt_fuzz.h) can compute the same record from the spec.
 *
 * Checks, on every event: the reader's consumed() equals the bytes the harness saw consumed; one
 * header event first (SUBGROUP_HEADER, FETCH_HEADER or PADDING) of the kind the carrier allows;
 * a subgroup header's Type Flags are valid, has_priority follows DEFAULT_PRIORITY, the Subgroup ID
 * is 0 in mode 0 and unknown until the first object in mode 1 (then that object's ID), and the
 * one-shot wk_moqt_subgroup_header_decode / wk_moqt_fetch_header_decode of the input agree (fields
 * and length); objects start where the previous one ended, subgroup IDs are first = delta, then
 * prior + delta + 1, strictly increasing, has_properties is the PROPERTIES bit, a status is on the
 * wire exactly when the length is 0 and assigned unless allowed, no object after End of Group /
 * Track unless allowed; fetch records are End of Range exactly for 0x8C / 0x10C / 0x20C, markers
 * carry no Subgroup ID, Priority or Properties, payload length 0 and the delta slots and length
 * field exactly in reading A, objects' has_* follow the flags, first_record only on the first; a
 * properties slice is at most the scratch size, validates (strict mode), and lies in this push or
 * in the scratch (always in the push when the push is the whole input); payload pieces are slices
 * of this push ending where the reader stopped, offsets contiguous from 0, `last` exactly at the
 * payload length, PAYLOAD events carry bytes; at_boundary() is true exactly between objects.
 * At the end: a clean end is after a complete header and object, at_boundary(), and a padding
 * stream counted every byte after its type; an error is a PeerProtocol WK_ERR_MOQT_* code with an
 * offset inside the input and a vectors' category from wk_moqt_error_category ("incomplete"
 * exactly for MOQT_ERR_TRUNCATED, which only _finish reports, at the input's end).
 *
 * The record: each header, object and record by its fields and properties bytes, each payload's
 * bytes as they come followed by its length once complete, and after a clean end the stream's
 * final state (kind, padding bytes, objects, resolved Subgroup ID). */
#ifndef WK_CONTRACT_MOQT_H
#define WK_CONTRACT_MOQT_H

#include "wk_contract.h"
#include <wirekit/moqt.h>

typedef struct wk_contract_moqt wk_contract_moqt;
struct wk_contract_moqt {
    /* Set by the caller before a run. */
    wk_moqt_carrier expect;
    wk_moqt_read_options options;  /* copied into the reader at every reset */
    /* Called after the checks on every event and at the end (each may be NULL): what a test adds,
     * e.g. building a document of the events. Return false (after wk_contract_fail) to fail. */
    bool (*on_event)(wk_contract *c, wk_contract_moqt *m);
    bool (*on_end)(wk_contract *c, wk_contract_moqt *m);
    void *user;
    /* The reader under test, valid during the callbacks and after a run. */
    wk_moqt_stream_reader r;
    /* The checks' state in one run. */
    bool header, open, have_prev, ended;
    uint64_t prev_id, objects, boundary, pay_total, pay_done;
};

/* The ops: obj is a wk_contract_moqt (ctx unused). */
extern const wk_contract_ops wk_contract_moqt_ops;

/* Sets up *m for a carrier and options (NULL = defaults), no callbacks. */
void wk_contract_moqt_setup(wk_contract_moqt *m, wk_moqt_carrier expect,
                            const wk_moqt_read_options *options);

/* The standard record, for a reference to compute the same. */
void wk_contract_moqt_rec_subgroup_header(wk_contract_hash *h, uint64_t stream_type,
                                          const wk_moqt_subgroup_header *s);
void wk_contract_moqt_rec_fetch_header(wk_contract_hash *h, uint64_t request_id);
void wk_contract_moqt_rec_padding(wk_contract_hash *h, uint64_t stream_type);
void wk_contract_moqt_rec_object(wk_contract_hash *h, const wk_moqt_subgroup_object *o);
void wk_contract_moqt_rec_fetch_object(wk_contract_hash *h, const wk_moqt_fetch_object *o);
/* A payload's bytes go in as they come (wk_contract_hash_add); once complete, its length: */
void wk_contract_moqt_rec_payload_end(wk_contract_hash *h, uint64_t length);
/* After a clean end: the kind, padding bytes, objects and the Subgroup ID if known (0 else). */
void wk_contract_moqt_rec_end(wk_contract_hash *h, wk_moqt_stream_kind kind, uint64_t padding,
                              uint64_t objects, bool subgroup_id_known, uint64_t subgroup_id);

/* The properties scratch capacity a reader with these options uses. */
size_t wk_contract_moqt_scratch_cap(const wk_moqt_read_options *o);

/* One call of a moqt encoder, for wk_contract_encoder_check: the fields the operation names. */
typedef enum wk_contract_moqt_op {
    WK_CONTRACT_MOQT_PADDING,          /* wk_moqt_padding_encode(datagram, a) */
    WK_CONTRACT_MOQT_SUBGROUP_HEADER,  /* wk_moqt_subgroup_header_encode(sh) */
    WK_CONTRACT_MOQT_SUBGROUP_HEADER_CHECKED, /* _encode_checked(sh) */
    WK_CONTRACT_MOQT_SUBGROUP_BEGIN,   /* wk_moqt_subgroup_writer_begin(sw, sh) */
    WK_CONTRACT_MOQT_SUBGROUP_WRITE,   /* wk_moqt_subgroup_writer_write(sw, obj) */
    WK_CONTRACT_MOQT_SUBGROUP_FRAMING, /* wk_moqt_subgroup_writer_write_framing(sw, obj) */
    WK_CONTRACT_MOQT_FETCH_HEADER,     /* wk_moqt_fetch_header_encode(fh) */
    WK_CONTRACT_MOQT_FETCH_BEGIN,      /* wk_moqt_fetch_writer_begin(fw, a, order, eor) */
    WK_CONTRACT_MOQT_FETCH_WRITE,      /* wk_moqt_fetch_writer_write(fw, fobj) */
    WK_CONTRACT_MOQT_FETCH_FRAMING,    /* wk_moqt_fetch_writer_write_framing(fw, fobj) */
    WK_CONTRACT_MOQT_FETCH_END_OF_RANGE, /* wk_moqt_fetch_writer_write_end_of_range(fw, a, b, c) */
    WK_CONTRACT_MOQT_DATAGRAM,         /* wk_moqt_datagram_encode(dg) */
    WK_CONTRACT_MOQT_DATAGRAM_CHECKED, /* wk_moqt_datagram_encode_checked(dg) */
    WK_CONTRACT_MOQT_PROPERTIES        /* wk_moqt_properties_encode(props, nprops) */
} wk_contract_moqt_op;

typedef struct wk_contract_moqt_call {
    wk_contract_moqt_op op;
    wk_moqt_subgroup_writer *sw;       /* the writers: saved before the check, restored before */
    wk_moqt_fetch_writer *fw;          /* every attempt, so only the last (a success) stays */
    const wk_moqt_subgroup_header *sh;
    const wk_moqt_object_out *obj;
    const wk_moqt_fetch_header *fh;
    const wk_moqt_fetch_object_out *fobj;
    const wk_moqt_datagram *dg;
    const wk_moqt_property *props;
    size_t nprops;
    bool datagram;                     /* padding: a datagram (else a stream) */
    uint64_t a, b, c;                  /* padding length; request ID; marker, group, object */
    wk_moqt_group_order order;
    wk_moqt_end_of_range eor;
    wk_moqt_subgroup_writer sw0;       /* (the saved states) */
    wk_moqt_fetch_writer fw0;
} wk_contract_moqt_call;

/* wk_contract_encoder_check of the call: refused with `refuse` (WK_OK: written) in `size` bytes
 * (SIZE_MAX: not known), the bytes `expect` (may be NULL); *bytes/len as there. */
bool wk_contract_moqt_call_check(wk_contract_moqt_call *k, wk_code refuse, size_t size,
                                 const uint8_t *expect, uint8_t **bytes, size_t *len, char *why,
                                 size_t why_cap);

#endif
