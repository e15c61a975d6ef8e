/* libFuzzer target: the Lace-060 item decoder, raw and stacked under each encoding.
 *
 * Input: byte 0 picks the mode and a push-chunk size, byte 1 a small item cap, the rest is data.
 *   mode 0   item decoder over the raw data in chunks; every item's bytes are the input slice at
 *            its offset, offsets are contiguous, errors are PeerProtocol (or NOMEM), finish is
 *            OK exactly at a boundary.
 *   mode 1-3 differential: the data is taken as plain items; the target writes a 1.0 preface and
 *            encodes the items with identity / deflate12c / zstd20c (wk_iltp_writer), then
 *            decodes through wk_iltp_reader in chunks. The reader must return the same items as
 *            the raw item decoder on the plain bytes, and fail exactly where that one fails (a
 *            plain preface becomes ILTP_ERR_PREFACE_ENCODED under compression). */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

typedef struct rec { wk_iltp_item_kind kind; size_t len; size_t rows; char type; uint64_t off; } rec;
#define MAX_ITEMS 4096

/* Raw item decoding of p[0..n) in chunks; fills items, returns the count, *fail the error code
 * (WK_OK if none) and *fin the finish verdict. */
static size_t raw_items(const uint8_t *p, size_t n, size_t chunk, size_t cap, wk_iltp_form form, rec *items,
                        wk_code *fail, wk_code *fin)
{
    wk_error e;
    wk_iltp_item_decoder_params prm = {form, cap, NULL};
    wk_iltp_item_decoder *d = wk_iltp_item_decoder_create(&prm, &e);
    CHECK(d);
    size_t k = 0, pos = 0;
    uint64_t off = 0;
    *fail = WK_OK;
    *fin = WK_OK;
    while (pos < n || n == 0) {
        size_t lim = pos + chunk < n ? pos + chunk : n;
        wk_in in = {p, lim, pos};
        for (;;) {
            wk_result r = wk_iltp_item_decoder_decode(d, &in, NULL, &e);
            if (r == WK_ERROR) {
                CHECK(e.category == WK_CAT_PEER_PROTOCOL || e.code == WK_ERR_NOMEM);
                CHECK(e.code != WK_ERR_NOMEM || cap > 0);
                *fail = e.code;
                wk_iltp_item_decoder_destroy(d);
                return k;
            }
            if (r == WK_NEED_INPUT) break;
            CHECK(r == WK_EVENT && wk_iltp_item_decoder_item(d) && !wk_iltp_item_decoder_event(d));
            wk_iltp_item it = *wk_iltp_item_decoder_item(d);
            CHECK(it.offset == off && it.len > 0 && it.offset + it.len <= lim);
            CHECK(memcmp(it.bytes, p + it.offset, it.len) == 0);
            if (it.kind == WK_ILTP_ITEM_RECORD) {
                CHECK(it.record.blob.len <= WK_ILTP_BLOB_DATA_CAP);
                if (it.record.type == 'B') CHECK(wk_iltp_record_hash_ok(&it.record));
            }
            if (k < MAX_ITEMS) items[k] = (rec){it.kind, it.len, it.rows, it.record.type, it.offset};
            k++;
            off += it.len;
        }
        CHECK(in.pos == lim);
        pos = lim;
        if (n == 0) break;
    }
    *fin = wk_iltp_item_decoder_finish(d, NULL, &e) == WK_DONE ? WK_OK : e.code;
    CHECK((*fin == WK_OK) == (off == n));
    wk_iltp_item_decoder_destroy(d);
    return k;
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
    if (mode == 0) {
        /* the same result whole */
        wk_code f2, fin2;
        size_t nb = raw_items(p, n, n ? n : 1, cap, form, b, &f2, &fin2);
        CHECK(nb == na && f2 == fail && fin2 == fin);
        for (size_t i = 0; i < na && i < MAX_ITEMS; i++)
            CHECK(a[i].kind == b[i].kind && a[i].len == b[i].len && a[i].rows == b[i].rows);
        return 0;
    }
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

    wk_iltp_reader *r = wk_iltp_reader_create(&sp, &e);
    CHECK(r);
    size_t k = 0, pos = 0;
    wk_code rfail = WK_OK;
    bool preface_seen = false;
    for (;;) {
        size_t lim = pos + chunk < wn ? pos + chunk : wn;
        wk_in rin = {wire, lim, pos};
        wk_result res = wk_iltp_reader_read(r, &rin, NULL, &e);
        pos = rin.pos;
        if (res == WK_ERROR) { rfail = e.code; break; }
        if (res == WK_EVENT) {
            CHECK(wk_iltp_reader_item(r) && !wk_iltp_reader_event(r));
            wk_iltp_item it = *wk_iltp_reader_item(r);
            if (!preface_seen) {
                CHECK(it.kind == WK_ILTP_ITEM_PREFACE);
                preface_seen = true;
                CHECK(wk_iltp_reader_begin(r, enc, &e) == WK_OK);
                continue;
            }
            if (it.kind == WK_ILTP_ITEM_PREFACE && enc == WK_ILTP_IDENTITY) {
                CHECK(wk_iltp_reader_begin(r, enc, &e) == WK_OK);
            }
            CHECK(k < na && a[k].kind == it.kind && a[k].len == it.len && a[k].rows == it.rows);
            k++;
            continue;
        }
        if (pos == wn) break;
    }
    CHECK(preface_seen);
    if (rfail == WK_OK) {
        wk_in rest = {wire, wn, pos};
        wk_code rf = wk_iltp_reader_finish(r, &rest, &e) == WK_DONE ? WK_OK : e.code;
        CHECK(fail == WK_OK && k == na);
        CHECK((rf == WK_OK) == (fin == WK_OK));
    } else {
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
    wk_iltp_reader_destroy(r);
    free(wire);
    return 0;
}
