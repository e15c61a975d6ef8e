/* libFuzzer target: the Lace-060 item decoder, raw and stacked under each encoding, on the
 * contract harness (fuzz/fuzz_drive.h with the iltp adapter, tests/contract/wk_contract_iltp.h:
 * every call checked, the pushes of the chosen size and the whole input must reach the same
 * outcome; the adapter checks each item against the input and each Blob event).
 *
 * Input: byte 0 picks the mode and a push-chunk size, byte 1 a small item cap, the rest is data.
 *   mode 0   the item decoder over the raw data: every item's bytes are the input slice at its
 *            offset, offsets are contiguous, errors are PeerProtocol (or NOMEM), finish is
 *            WK_DONE exactly at a boundary.
 *   mode 1-3 differential: the data is taken as plain items; the target writes a 1.0 preface and
 *            encodes the items with identity / deflate12c / zstd20c (wk_iltp_writer), then
 *            decodes through wk_iltp_reader. The reader must return the same items as the raw
 *            item decoder on the plain bytes, and fail exactly where that one fails (a plain
 *            preface becomes ILTP_ERR_PREFACE_ENCODED under compression). */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"
#include "wk_contract_iltp.h"

typedef struct rec { wk_iltp_item_kind kind; size_t len; size_t rows; char type; uint64_t off; } rec;
#define MAX_ITEMS 4096

/* Lists a run's items (the harness runs twice; the list is the last run's). */
typedef struct lister {
    rec *items;
    size_t n;
} lister;

static bool list_item(wk_contract *c, wk_contract_iltp *m, const wk_iltp_item *it)
{
    (void)c;
    lister *l = m->user;
    if (m->items_seen == 1) l->n = 0;
    if (l->n < MAX_ITEMS) l->items[l->n] = (rec){it->kind, it->len, it->rows, it->record.type, it->offset};
    l->n++;
    return true;
}

/* Drives the item decoder or the reader (ops) over p[0..n) in pushes of chunk, listing its items. */
static wk_contract_outcome drive_listed(const wk_contract_ops *ops, wk_iltp_encoding enc, wk_iltp_form form,
                                        size_t cap, lister *l, const uint8_t *p, size_t n, size_t chunk)
{
    wk_contract_iltp m;
    wk_contract_iltp_setup(&m, enc, WK_ILTP_BACKEND_DEFAULT, false);
    m.form = form;
    m.max_item = cap;
    m.on_item = list_item;
    m.user = l;
    wk_contract_outcome oc = fuzz_drive(ops, &m, NULL, p, n, chunk, 0);
    wk_contract_iltp_release(&m);
    return oc;
}

/* Raw item decoding of p[0..n) in pushes of chunk; fills items, returns the count, *fail the step's
 * error (WK_OK if none) and *fin the finish verdict (WK_OK or ILTP_ERR_TRUNCATED). */
static size_t raw_items(const uint8_t *p, size_t n, size_t chunk, size_t cap, wk_iltp_form form, rec *items,
                        wk_code *fail, wk_code *fin)
{
    lister l = {items, 0};
    wk_contract_outcome oc = drive_listed(&wk_contract_iltp_items_ops, WK_ILTP_IDENTITY, form, cap, &l, p, n, chunk);
    *fail = *fin = WK_OK;
    if (oc.verdict == WK_ERROR) {
        CHECK(oc.error.code != WK_ERR_NOMEM || cap > 0);
        /* truncation is _finish's verdict; every other error is the step's */
        if (oc.error.code == WK_ERR_ILTP_TRUNCATED) *fin = oc.error.code;
        else *fail = oc.error.code;
    }
    CHECK((oc.verdict == WK_DONE) == (oc.consumed == n && *fail == WK_OK && *fin == WK_OK));
    return l.n;
}

static rec a[MAX_ITEMS], b[MAX_ITEMS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    unsigned mode = data[0] & 3;
    size_t chunk = 1 + (data[0] >> 2) * 7;
    size_t cap = data[1] < 128 ? 0 : (size_t)(data[1] - 127) * 64;
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    wk_code fail, fin;
    wk_iltp_form form = mode == 0 ? WK_ILTP_FORM_ANY : WK_ILTP_FORM_1_0; /* the reader's form */
    size_t na = raw_items(p, n, chunk, cap, form, a, &fail, &fin);
    if (mode == 0) return 0; /* fuzz_drive compared the pushes with the whole input */
    /* mode 1-3: encode the plain bytes under a 1.0 preface and read them back */
    wk_iltp_encoding enc = (wk_iltp_encoding)(mode - 1);
    wk_error e;
    wk_iltp_stack_params sp = {WK_ILTP_FORM_1_0, 1, cap, NULL};
    wk_iltp_writer *w = wk_iltp_writer_create(&sp, &e);
    CHECK(w);
    size_t wcap = n + n / 8 + 1024, wn = 0;
    uint8_t *wire = malloc(wcap);
    uint8_t nonce[32];
    memset(nonce, 0x5A, sizeof nonce);
    wk_out o = {wire, wcap, 0};
    CHECK(wk_iltp_writer_begin_session(w, nonce, NULL, NULL, &o, &e) == WK_DONE);
    CHECK(wk_iltp_writer_select(w, enc, &e) == WK_OK);
    wk_in in = {p, n, 0};
    CHECK(wk_iltp_writer_write(w, &in, &o, &e) == WK_DONE);
    CHECK(wk_iltp_writer_end(w, &o, &e) == WK_DONE);
    wn = o.pos;
    wk_iltp_writer_destroy(w);

    lister lb = {b, 0};
    wk_contract_outcome rr = drive_listed(&wk_contract_iltp_reader_ops, enc, WK_ILTP_FORM_1_0, cap, &lb, wire, wn, chunk);
    CHECK(lb.n >= 1 && b[0].kind == WK_ILTP_ITEM_PREFACE); /* our preface first */
    size_t k = lb.n - 1;                                   /* the items after it */
    for (size_t i = 0; i < k && i < na && i + 1 < MAX_ITEMS; i++)
        CHECK(a[i].kind == b[i + 1].kind && a[i].len == b[i + 1].len && a[i].rows == b[i + 1].rows);
    if (rr.verdict == WK_DONE) {
        CHECK(fail == WK_OK && fin == WK_OK && k == na);
    } else {
        wk_code rfail = rr.error.code;
        /* the reader fails where the plain decoder failed, or at a preface lead in the plain
         * bytes (refused at once under compression, whatever follows it) */
        if (rfail == WK_ERR_ILTP_PREFACE_ENCODED) {
            static const uint8_t knot[5] = {0xF0, 0x9F, 0xAA, 0xA2, ':'};
            uint64_t off = k == 0 ? 0 : a[k - 1].off + a[k - 1].len;
            CHECK(enc != WK_ILTP_IDENTITY && k <= na && k < MAX_ITEMS);
            CHECK(off + 5 <= n && memcmp(p + off, knot, 5) == 0);
        } else if (k < na && a[k].kind == WK_ILTP_ITEM_PREFACE && enc != WK_ILTP_IDENTITY) CHECK(false);
        else if (fail != WK_OK) CHECK(k == na && rfail == fail);
        else CHECK(rfail == WK_ERR_ILTP_TRUNCATED && fin != WK_OK && k == na); /* end mark inside an item */
    }
    free(wire);
    return 0;
}
