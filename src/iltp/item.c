/* Lace-060 item decoder: prefaces, fact blocks and H3 records, one framing input at a time.
 * The current item collects in one buffer that grows with it and never past the item cap (or
 * the caller's limit); the cap and the per-item accounting reset after every item, even inside
 * one pushed chunk. Every rule rejects as soon as the bytes seen cannot become a valid item.
 * With streaming on, a top-level Blob record's data is never collected: it is handed out as
 * slices of the caller's input (events BEGIN, DATA..., END) and hashed as it passes. */
#include "iltp_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t knot_lead[5] = {0xF0, 0x9F, 0xAA, 0xA2, ':'};
static const uint8_t glyph_lead[5] = {0xF0, 0x9F, 0x96, 0xA7, ':'};

enum istate { I_BOUNDARY, I_LEAD, I_PREFACE, I_FACTS, I_RECORD, I_DATA, I_STREAM, I_FAILED };
enum rstage { RS_GLYPH, RS_BY, RS_MARK, RS_FIELDS, RS_DLEN, RS_BLANK };

struct wk_iltp_item_decoder {
    wk_allocator alloc;
    wk_iltp_form form;
    size_t max_item;
    uint8_t *buf;
    size_t len, cap;
    uint64_t offset;       /* stream offset of buf[0] */
    enum istate state;
    wk_error failure;
    bool expect_operand;   /* announced for the next item */
    bool expect_preface;   /* only a preface may come next */
    bool forbid_preface;   /* prefaces are refused (compressed stream) */
    bool operand;          /* the current item is an operand */
    size_t emitted;        /* length of the item returned by the previous call, to discard */
    /* fact block */
    size_t line_start, rows;
    /* record */
    size_t scan;           /* start of the current header line */
    enum rstage rstage;
    char expect;           /* glyph type the next glyph line must have (0: any) */
    char outer;            /* type of the outer record */
    uint8_t hash[3][32];   /* glyph hashes by nesting level */
    size_t glyph_end[3];   /* offset after each level's glyph line */
    int levels;
    uint8_t by[32];
    size_t mark_off, mark_len;
    size_t fields_off, fields_end, field_count;
    size_t data_off;
    uint64_t data_len, data_left;
    wk_blake3_hasher h;
    /* streamed Blob records */
    bool stream_blobs;
    wk_iltp_blob_event ev;
    uint64_t hash_err_off;  /* stream offset of the glyph hash of the streamed record */
    uint64_t limit;         /* bound on whole-collected items (UINT64_MAX: none) */
    /* the public step's item (the reader collects into its own) */
    wk_iltp_item item;
    bool item_ready;        /* the last public step's WK_EVENT is an item */
};


wk_iltp_item_decoder *wk_iltp_item_decoder_create(const wk_iltp_item_decoder_params *params,
                                                  wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(params ? params->allocator : NULL);
    wk_iltp_item_decoder *d = wk_allocator_zalloc(&a, sizeof *d, "item decoder allocation failed", err);
    if (!d) return NULL;
    d->alloc = a;
    d->form = params ? params->form : WK_ILTP_FORM_ANY;
    d->max_item = params && params->max_item && params->max_item < WK_ILTP_ITEM_CAP
                      ? params->max_item : WK_ILTP_ITEM_CAP;
    d->limit = UINT64_MAX;
    return d;
}

void wk_iltp_item_decoder_destroy(wk_iltp_item_decoder *d)
{
    if (!d) return;
    if (d->buf) d->alloc.free(d->alloc.opaque, d->buf);
    d->alloc.free(d->alloc.opaque, d);
}

/* Drops the current item's bytes. A small buffer is kept for the next items; one grown past
 * 256 KiB by a large item goes back to the allocator, so a session's memory falls back once the
 * large item is handled (streamed Blob data never enters it). */
static void discard(wk_iltp_item_decoder *d)
{
    d->offset += d->len;
    d->len = 0;
    d->emitted = 0;
    d->state = I_BOUNDARY;
    if (d->cap > ((size_t)256 << 10)) {
        d->alloc.free(d->alloc.opaque, d->buf);
        d->buf = NULL;
        d->cap = 0;
    }
}

void wk_iltp_item_decoder_reset(wk_iltp_item_decoder *d)
{
    discard(d);
    if (d->cap > ((size_t)1 << 20)) { /* a fresh logical session starts small again */
        d->alloc.free(d->alloc.opaque, d->buf);
        d->buf = NULL;
        d->cap = 0;
    }
    d->offset = 0;
    d->expect_operand = d->operand = d->expect_preface = false;
    wk_error_clear(&d->failure);
}

void wk_iltp_item_decoder_expect_operand(wk_iltp_item_decoder *d) { d->expect_operand = true; }
void wk_iltp_item_decoder_expect_preface(wk_iltp_item_decoder *d) { d->expect_preface = true; }
void wk_iltp_item_decoder_forbid_preface(wk_iltp_item_decoder *d, bool forbid) { d->forbid_preface = forbid; }
void wk_iltp_item_decoder_stream_blobs(wk_iltp_item_decoder *d, bool on) { d->stream_blobs = on; }
const wk_iltp_blob_event *wk_iltp_item_decoder_event(const wk_iltp_item_decoder *d)
{
    return d->item_ready ? NULL : &d->ev;
}
const wk_iltp_item *wk_iltp_item_decoder_item(const wk_iltp_item_decoder *d)
{
    return d->item_ready ? &d->item : NULL;
}
void wk_iltp_item_decoder_limit(wk_iltp_item_decoder *d, uint64_t limit) { d->limit = limit; }

/* The current record is (or, before its glyph line, may become) a streamed Blob record. */
static bool may_stream(const wk_iltp_item_decoder *d)
{
    return d->stream_blobs && !d->operand && (d->levels == 0 || (d->levels == 1 && d->outer == 'B'));
}

bool wk_iltp_item_decoder_at_boundary(const wk_iltp_item_decoder *d)
{
    return d->state == I_BOUNDARY || (d->state != I_FAILED && d->emitted == d->len && d->len > 0);
}

static wk_result fail(wk_iltp_item_decoder *d, wk_error *err, wk_code code, size_t pos,
                      const char *what)
{
    d->state = I_FAILED;
    wk_error_set(&d->failure, code, d->offset + pos, "%s", what);
    if (err) *err = d->failure;
    return WK_ERROR;
}

/* Makes room for `need` bytes in total (need <= max_item is checked by the caller). */
static bool reserve(wk_iltp_item_decoder *d, size_t need)
{
    if (need <= d->cap) return true;
    size_t cap = d->cap ? d->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > d->max_item) cap = d->max_item;
    if (d->limit < cap) cap = (size_t)d->limit; /* need <= limit, or the item fails first */
    if (cap < need) cap = need;
    uint8_t *nb = d->alloc.alloc(d->alloc.opaque, cap);
    if (!nb) return false;
    if (d->len) memcpy(nb, d->buf, d->len);
    if (d->buf) d->alloc.free(d->alloc.opaque, d->buf);
    d->buf = nb;
    d->cap = cap;
    return true;
}

/* Appends n bytes of in, with the item cap checked first. */
static wk_result append(wk_iltp_item_decoder *d, wk_in *in, size_t n, wk_error *err)
{
    if (n > d->max_item - d->len)
        return fail(d, err, WK_ERR_ILTP_ITEM_TOO_LARGE, d->max_item, "item over the 64 MiB item cap");
    if (!reserve(d, d->len + n)) {
        d->state = I_FAILED;
        wk_error_set(&d->failure, WK_ERR_NOMEM, WK_NO_OFFSET, "item buffer of %zu bytes", d->len + n);
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    memcpy(d->buf + d->len, in->src + in->pos, n);
    d->len += n;
    in->pos += n;
    return WK_DONE;
}

/* The earliest cap violation among the bytes about to be appended. Appending stops right before
 * the first byte that breaks a cap, so the verdict and its offset do not depend on how the input
 * was split into pushes. */
typedef struct viol { size_t pos; wk_code code; const char *what; } viol;

static void bound(const wk_iltp_item_decoder *d, size_t *n, bool *lf, size_t limit, wk_code code,
                  const char *what, viol *v)
{
    if (d->len + *n > limit) {
        *n = limit > d->len ? limit - d->len : 0;
        *lf = false;
        if (limit < v->pos) { v->pos = limit; v->code = code; v->what = what; }
    }
}

/* A line whose content (excluding LF) exceeds cap: only cap content bytes may be appended. */
static void line_bound(const wk_iltp_item_decoder *d, size_t line_start, size_t *n, bool *lf,
                       size_t cap, wk_code code, const char *what, viol *v)
{
    size_t content = d->len - line_start + *n - (*lf ? 1 : 0);
    if (content > cap) bound(d, n, lf, line_start + cap, code, what, v);
}

/* The caller's limit on whole-collected items (a received-control budget). */
static void limit_bound(const wk_iltp_item_decoder *d, size_t *n, bool *lf, viol *v)
{
    if (d->limit < d->max_item)
        bound(d, n, lf, (size_t)d->limit, WK_ERR_ILTP_BUDGET, "received-control budget exceeded", v);
}

/* Bytes of in up to and including the next LF (or all of them); *lf tells whether one was found. */
static size_t upto_lf(const wk_in *in, bool *lf)
{
    const uint8_t *p = in->src + in->pos;
    size_t avail = in->size - in->pos;
    const uint8_t *q = memchr(p, '\n', avail);
    *lf = q != NULL;
    return q ? (size_t)(q - p) + 1 : avail;
}

/* Where error offsets point inside a glyph line "🖧: X.<hash>.H3\n": the type letter, and the
 * hash counted back from the end of the line. */
#define GLYPH_TYPE_AT WK_ILTP_RECORD_LEAD_LEN
#define GLYPH_HASH_FROM_END (WK_ILTP_NONCE_TEXT_LEN + sizeof ".H3\n" - 1)
_Static_assert(GLYPH_HASH_FROM_END == 47, "the glyph hash starts 47 bytes before the line's end");
/* "Data-Length: " before the decimal */
#define DLEN_PREFIX "Data-Length: "
#define DLEN_PREFIX_LEN (sizeof DLEN_PREFIX - 1)
_Static_assert(DLEN_PREFIX_LEN == 13, "Data-Length: is 13 bytes");

/* A header value: UTF-8 without C0 controls or DEL. */
static bool value_ok(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7F) return false;
    return wk_utf8_valid(p, n, NULL);
}

static bool canonical_decimal(const uint8_t *p, size_t n, uint64_t *v)
{
    if (n == 0 || n > 12 || (n > 1 && p[0] == '0')) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        x = x * 10 + (uint64_t)(p[i] - '0');
    }
    *v = x;
    return true;
}

static void fill_blob(const wk_iltp_item_decoder *d, int level, wk_iltp_blob *b)
{
    memcpy(b->hash, d->hash[level], 32);
    b->data = d->buf + d->data_off;
    b->len = (size_t)d->data_len;
}

static void fill_plex(const wk_iltp_item_decoder *d, int level, wk_iltp_plex *p)
{
    memcpy(p->hash, d->hash[level], 32);
    p->fields = d->buf + d->fields_off;
    p->fields_len = d->fields_end - d->fields_off;
    p->field_count = d->field_count;
    p->content = d->buf + d->glyph_end[level];
    p->content_len = d->len - d->glyph_end[level];
    fill_blob(d, level + 1, &p->blob);
}

static wk_result emit(wk_iltp_item_decoder *d, wk_iltp_item_kind kind, wk_iltp_item *item)
{
    memset(item, 0, sizeof *item);
    item->kind = kind;
    item->bytes = d->buf;
    item->len = d->len;
    item->offset = d->offset;
    if (kind == WK_ILTP_ITEM_FACTS) item->rows = d->rows;
    if (kind == WK_ILTP_ITEM_RECORD) {
        wk_iltp_record *r = &item->record;
        r->type = d->outer;
        if (d->outer == 'B') {
            fill_blob(d, 0, &r->blob);
        } else if (d->outer == 'P') {
            fill_plex(d, 0, &r->plex);
            r->blob = r->plex.blob;
        } else {
            wk_iltp_seal *s = &r->seal;
            memcpy(s->hash, d->hash[0], 32);
            memcpy(s->by, d->by, 32);
            s->mark = d->buf + d->mark_off;
            s->mark_len = d->mark_len;
            s->content = d->buf + d->glyph_end[0];
            s->content_len = d->len - d->glyph_end[0];
            fill_plex(d, 1, &s->plex);
            r->plex = s->plex;
            r->blob = s->plex.blob;
        }
    }
    d->emitted = d->len;
    d->operand = false;
    d->expect_preface = false;
    return WK_DONE;
}

/* One complete header line of a record: buf[scan .. len-1), LF at len-1. */
static wk_result record_line(wk_iltp_item_decoder *d, wk_error *err)
{
    const uint8_t *l = d->buf + d->scan;
    size_t n = d->len - 1 - d->scan, at = d->scan;
    switch (d->rstage) {
    case RS_FIELDS:
        if (n > 0 && l[0] == 0xF0) { /* the Plex's Blob begins */
            d->fields_end = d->scan;
            d->rstage = RS_GLYPH;
            return record_line(d, err);
        }
        {
            size_t k = 0;
            if (n == 0 || !((l[0] >= 'A' && l[0] <= 'Z') || (l[0] >= 'a' && l[0] <= 'z')))
                return fail(d, err, WK_ERR_ILTP_RECORD, at, "Plex field name must start with a letter");
            while (k < n && ((l[k] >= 'A' && l[k] <= 'Z') || (l[k] >= 'a' && l[k] <= 'z') ||
                             (l[k] >= '0' && l[k] <= '9') || l[k] == '-'))
                k++;
            if (k + 2 > n || l[k] != ':' || l[k + 1] != ' ')
                return fail(d, err, WK_ERR_ILTP_RECORD, at + k, "expected ': ' after the Plex field name");
            if (!value_ok(l + k + 2, n - k - 2))
                return fail(d, err, WK_ERR_ILTP_RECORD, at + k + 2, "Plex field value is not UTF-8 text");
            d->field_count++;
        }
        break;
    case RS_GLYPH: {
        if (n < WK_ILTP_RECORD_LEAD_LEN || memcmp(l, WK_ILTP_RECORD_LEAD, WK_ILTP_RECORD_LEAD_LEN) != 0)
            return fail(d, err, WK_ERR_ILTP_RECORD, at, "expected the record glyph line");
        char t = n > WK_ILTP_RECORD_LEAD_LEN ? (char)l[WK_ILTP_RECORD_LEAD_LEN] : 0;
        if (t != 'B' && t != 'P' && t != 'S')
            return fail(d, err, WK_ERR_ILTP_RECORD, at + GLYPH_TYPE_AT, "record type must be B, P or S");
        if (d->expect && t != d->expect) {
            return fail(d, err, WK_ERR_ILTP_RECORD, at + GLYPH_TYPE_AT, d->expect == 'P' ? "a Seal must contain a Plex" :
                        d->expect == 'B' ? (d->operand ? "an operand must be a Blob" : "a Plex must contain a Blob")
                                         : "unexpected record type");
        }
        wk_in ref = {l + GLYPH_TYPE_AT, n - GLYPH_TYPE_AT, 0};
        if (wk_iltp_ref_parse(&ref, t, d->hash[d->levels], NULL) != WK_DONE || ref.pos != ref.size)
            return fail(d, err, WK_ERR_ILTP_RECORD, at + GLYPH_TYPE_AT, "glyph line is not X.<B64A hash>.H3");
        d->glyph_end[d->levels] = d->len;
        if (d->levels == 0) d->outer = t;
        d->levels++;
        if (t == 'S') { d->rstage = RS_BY; d->expect = 'P'; }
        else if (t == 'P') { d->rstage = RS_FIELDS; d->fields_off = d->len; d->field_count = 0; d->expect = 'B'; }
        else { d->rstage = RS_DLEN; wk_blake3_init(&d->h); }
        break;
    }
    case RS_BY: {
        wk_in ref = {l + 4, n < 4 ? 0 : n - 4, 0};
        if (n < 4 || memcmp(l, "By: ", 4) != 0 || wk_iltp_ref_parse(&ref, 'V', d->by, NULL) != WK_DONE ||
            ref.pos != ref.size)
            return fail(d, err, WK_ERR_ILTP_RECORD, at, "expected 'By: V.<hash>.H3'");
        d->rstage = RS_MARK;
        break;
    }
    case RS_MARK:
        if (n < 7 || memcmp(l, "Mark: ", 6) != 0 || !value_ok(l + 6, n - 6))
            return fail(d, err, WK_ERR_ILTP_RECORD, at, "expected 'Mark: <value>'");
        d->mark_off = d->scan + 6;
        d->mark_len = n - 6;
        d->rstage = RS_GLYPH;
        break;
    case RS_DLEN: {
        uint64_t v;
        if (n <= DLEN_PREFIX_LEN || memcmp(l, DLEN_PREFIX, DLEN_PREFIX_LEN) != 0 ||
            !canonical_decimal(l + DLEN_PREFIX_LEN, n - DLEN_PREFIX_LEN, &v))
            return fail(d, err, WK_ERR_ILTP_RECORD, at, "expected 'Data-Length: <canonical decimal>'");
        if (v > WK_ILTP_BLOB_DATA_CAP)
            return fail(d, err, WK_ERR_ILTP_BLOB_TOO_LARGE, at + DLEN_PREFIX_LEN, "Blob data over 32 MiB");
        /* the whole item is known now: glyph lines, fields, this line, the blank line, data */
        uint64_t total = (uint64_t)d->len + 1 + v;
        if (d->operand && total > WK_ILTP_OPERAND_CAP)
            return fail(d, err, WK_ERR_ILTP_OPERAND_TOO_LARGE, at + DLEN_PREFIX_LEN, "operand Blob over 1 MiB");
        if (total > d->max_item)
            return fail(d, err, WK_ERR_ILTP_ITEM_TOO_LARGE, at + DLEN_PREFIX_LEN, "item over the item cap");
        if (!may_stream(d) && total > d->limit)
            return fail(d, err, WK_ERR_ILTP_BUDGET, at + DLEN_PREFIX_LEN, "received-control budget exceeded");
        d->data_len = v;
        wk_blake3_update(&d->h, l, n + 1);
        d->rstage = RS_BLANK;
        break;
    }
    case RS_BLANK:
        if (n != 0) return fail(d, err, WK_ERR_ILTP_RECORD, at, "expected a blank line after Data-Length");
        wk_blake3_update(&d->h, "\n", 1);
        if (may_stream(d)) {
            /* the data streams from here: the header is done with */
            memset(&d->ev, 0, sizeof d->ev);
            d->ev.kind = WK_ILTP_BLOB_BEGIN;
            memcpy(d->ev.hash, d->hash[0], 32);
            d->ev.length = d->data_len;
            d->ev.offset = d->offset;
            d->hash_err_off = d->offset + d->glyph_end[0] - GLYPH_HASH_FROM_END;
            d->offset += d->len;
            d->len = 0;
            d->scan = 0;
            d->data_left = d->data_len;
            d->state = I_STREAM;
            return WK_EVENT;
        }
        if (!reserve(d, d->len + (size_t)d->data_len)) {
            d->state = I_FAILED;
            wk_error_set(&d->failure, WK_ERR_NOMEM, WK_NO_OFFSET, "record buffer");
            if (err) *err = d->failure;
            return WK_ERROR;
        }
        d->data_off = d->len;
        d->data_left = d->data_len;
        d->state = I_DATA;
        break;
    }
    d->scan = d->len;
    return WK_DONE;
}

/* A header line still waiting for its LF must be able to become valid: the fixed text at its
 * start is checked as it arrives, so garbage is refused without waiting for a LF. */
static wk_result record_prefix_check(wk_iltp_item_decoder *d, wk_error *err)
{
    static const char glyph[] = WK_ILTP_RECORD_LEAD;
    const uint8_t *l = d->buf + d->scan;
    size_t n = d->len - d->scan;
    if (n && d->buf[d->len - 1] == '\n') n--; /* a complete line: its content */
    const char *fixed = NULL;
    switch (d->rstage) {
    case RS_GLYPH: fixed = glyph; break;
    case RS_BY: fixed = "By: V."; break;
    case RS_MARK: fixed = "Mark: "; break;
    case RS_DLEN: fixed = "Data-Length: "; break;
    case RS_FIELDS: if (n && l[0] == 0xF0) fixed = glyph; break;
    default: break;
    }
    if (fixed) {
        size_t fl = strlen(fixed), m = n < fl ? n : fl;
        for (size_t k = 0; k < m; k++)
            if (l[k] != (uint8_t)fixed[k])
                return fail(d, err, WK_ERR_ILTP_RECORD, d->scan + k, "record header line does not match its form");
        if (fixed == glyph && n > fl && l[fl] != 'B' && l[fl] != 'P' && l[fl] != 'S')
            return fail(d, err, WK_ERR_ILTP_RECORD, d->scan + fl, "record type must be B, P or S");
    }
    return WK_NEED_INPUT;
}

static wk_result blob_done(wk_iltp_item_decoder *d, wk_iltp_item *item, wk_error *err)
{
    uint8_t h[32];
    wk_blake3_finalize(&d->h, h, 32);
    if (memcmp(h, d->hash[d->levels - 1], 32) != 0)
        return fail(d, err, WK_ERR_ILTP_RECORD_HASH, d->glyph_end[d->levels - 1] - GLYPH_HASH_FROM_END, "Blob glyph hash does not match BLAKE3 of its content");
    return emit(d, WK_ILTP_ITEM_RECORD, item);
}

wk_result wk_iltp_item_decoder_step(wk_iltp_item_decoder *d, wk_in *in, wk_iltp_item *item, wk_error *err)
{
    if (d->state == I_FAILED) {
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    if (d->emitted) discard(d);
    for (;;) {
        size_t avail = in->size - in->pos;
        switch (d->state) {
        case I_BOUNDARY: {
            if (!avail) return WK_NEED_INPUT;
            uint8_t c = in->src[in->pos];
            d->operand = d->expect_operand;
            d->expect_operand = false;
            if (d->expect_preface && c != 0xF0)
                return fail(d, err, WK_ERR_ILTP_ITEM_LEAD, 0, "expected a raw preface");
            if (c == '\n') {
                if (d->operand)
                    return fail(d, err, WK_ERR_ILTP_RECORD, 0, "an operand must be a Blob record");
                if (d->limit < 1) return fail(d, err, WK_ERR_ILTP_BUDGET, 0, "received-control budget exceeded");
                if (append(d, in, 1, err) != WK_DONE) return WK_ERROR;
                d->rows = 0;
                return emit(d, WK_ILTP_ITEM_FACTS, item);
            }
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
                if (d->operand)
                    return fail(d, err, WK_ERR_ILTP_RECORD, 0, "an operand must be a Blob record");
                d->state = I_FACTS;
                d->line_start = 0;
                d->rows = 0;
                continue;
            }
            if (c == 0xF0) { d->state = I_LEAD; continue; }
            char what[64];
            snprintf(what, sizeof what, "byte 0x%02x cannot begin an item", c);
            return fail(d, err, WK_ERR_ILTP_ITEM_LEAD, 0, what);
        }
        case I_LEAD: {
            if (!avail) return WK_NEED_INPUT;
            uint8_t c = in->src[in->pos];
            size_t k = d->len;
            bool knot = memcmp(d->buf ? d->buf : knot_lead, knot_lead, k) == 0 && c == knot_lead[k];
            bool glyph = memcmp(d->buf ? d->buf : glyph_lead, glyph_lead, k) == 0 && c == glyph_lead[k];
            if (d->expect_preface && !knot)
                return fail(d, err, WK_ERR_ILTP_ITEM_LEAD, k, "expected a raw preface");
            if (!knot && !glyph)
                return fail(d, err, WK_ERR_ILTP_ITEM_LEAD, k, "leading bytes are neither the preface knot nor the record glyph");
            if (append(d, in, 1, err) != WK_DONE) return WK_ERROR;
            if (d->len == 5) {
                if (knot && d->forbid_preface)
                    return fail(d, err, WK_ERR_ILTP_PREFACE_ENCODED, 0, "a preface decoded out of a compressed stream");
                if (knot) {
                    d->operand = false; /* a preface may replace the session where an operand was due */
                    d->state = I_PREFACE;
                } else {
                    d->state = I_RECORD;
                    d->rstage = RS_GLYPH;
                    d->scan = 0;
                    d->levels = 0;
                    d->expect = d->operand ? 'B' : 0;
                }
            }
            continue;
        }
        case I_PREFACE: {
            if (!avail) return WK_NEED_INPUT;
            bool lf;
            size_t n = upto_lf(in, &lf);
            if (n > WK_ILTP_PREFACE_MAX + 1) n = WK_ILTP_PREFACE_MAX + 1;
            viol v = {SIZE_MAX, WK_OK, NULL};
            limit_bound(d, &n, &lf, &v);
            bound(d, &n, &lf, d->max_item, WK_ERR_ILTP_ITEM_TOO_LARGE, "item over the item cap", &v);
            if (n && append(d, in, n, err) != WK_DONE) return WK_ERROR;
            wk_error e;
            wk_in pin = {d->buf, d->len, 0};
            wk_result r = wk_iltp_preface_parse(&pin, d->form, &item->preface, &e);
            if (r == WK_ERROR) {
                d->state = I_FAILED;
                d->failure = e;
                d->failure.offset += d->offset;
                if (err) *err = d->failure;
                return WK_ERROR;
            }
            if (r == WK_DONE) {
                wk_iltp_preface p = item->preface;
                emit(d, WK_ILTP_ITEM_PREFACE, item);
                item->preface = p;
                return WK_DONE;
            }
            if (v.code != WK_OK) return fail(d, err, v.code, v.pos, v.what);
            continue;
        }
        case I_FACTS: {
            if (!avail) return WK_NEED_INPUT;
            bool lf;
            size_t n = upto_lf(in, &lf);
            viol v = {SIZE_MAX, WK_OK, NULL};
            line_bound(d, d->line_start, &n, &lf, WK_ILTP_FACT_LINE_CAP, WK_ERR_ILTP_FACT_LINE_TOO_LONG,
                       "fact line longer than 1024 bytes", &v);
            limit_bound(d, &n, &lf, &v);
            bound(d, &n, &lf, d->max_item, WK_ERR_ILTP_ITEM_TOO_LARGE, "item over the item cap", &v);
            if (n && append(d, in, n, err) != WK_DONE) return WK_ERROR;
            if (v.code != WK_OK) return fail(d, err, v.code, v.pos, v.what);
            if (!lf) return WK_NEED_INPUT;
            size_t ll = d->len - 1 - d->line_start;
            if (ll == 0) return emit(d, WK_ILTP_ITEM_FACTS, item);
            size_t bad, arity;
            const char *why;
            wk_code c = wk_iltp_fact_line_check(d->buf + d->line_start, ll, &bad, &why, &arity);
            if (c != WK_OK) return fail(d, err, c, d->line_start + bad, why);
            d->rows++;
            d->line_start = d->len;
            continue;
        }
        case I_RECORD: {
            if (!avail) return WK_NEED_INPUT;
            bool lf;
            size_t n = upto_lf(in, &lf);
            if (d->rstage == RS_BLANK && in->src[in->pos] != '\n')
                return fail(d, err, WK_ERR_ILTP_RECORD, d->len, "expected a blank line after Data-Length");
            viol v = {SIZE_MAX, WK_OK, NULL};
            line_bound(d, d->scan, &n, &lf, WK_ILTP_HEADER_LINE_CAP, WK_ERR_ILTP_RECORD,
                       "record header line longer than 1024 bytes", &v);
            if (d->operand)
                bound(d, &n, &lf, WK_ILTP_OPERAND_CAP, WK_ERR_ILTP_OPERAND_TOO_LARGE, "operand Blob over 1 MiB", &v);
            if (!may_stream(d)) limit_bound(d, &n, &lf, &v);
            bound(d, &n, &lf, d->max_item, WK_ERR_ILTP_ITEM_TOO_LARGE, "item over the item cap", &v);
            if (n && append(d, in, n, err) != WK_DONE) return WK_ERROR;
            if (!lf) {
                if (record_prefix_check(d, err) == WK_ERROR) return WK_ERROR;
                if (v.code != WK_OK) return fail(d, err, v.code, v.pos, v.what);
                return WK_NEED_INPUT;
            }
            /* the line's fixed prefix is judged byte by byte as while it arrives, so the verdict
             * and offset do not depend on where the pushes end */
            if (record_prefix_check(d, err) == WK_ERROR) return WK_ERROR;
            wk_result rl = record_line(d, err);
            if (rl != WK_DONE) return rl; /* WK_ERROR, or WK_EVENT: a streamed Blob begins */
            if (d->state == I_DATA && d->data_left == 0) return blob_done(d, item, err);
            continue;
        }
        case I_DATA: {
            if (!avail) return WK_NEED_INPUT;
            size_t n = avail < d->data_left ? avail : (size_t)d->data_left;
            memcpy(d->buf + d->len, in->src + in->pos, n); /* reserved at the blank line */
            wk_blake3_update(&d->h, in->src + in->pos, n);
            d->len += n;
            in->pos += n;
            d->data_left -= n;
            if (d->data_left == 0) return blob_done(d, item, err);
            return WK_NEED_INPUT;
        }
        case I_STREAM: {
            if (d->data_left == 0) {
                uint8_t h[32];
                wk_blake3_finalize(&d->h, h, 32);
                if (memcmp(h, d->ev.hash, 32) != 0) {
                    d->state = I_FAILED;
                    wk_error_set(&d->failure, WK_ERR_ILTP_RECORD_HASH, d->hash_err_off,
                                 "Blob glyph hash does not match BLAKE3 of its content");
                    if (err) *err = d->failure;
                    return WK_ERROR;
                }
                d->ev.kind = WK_ILTP_BLOB_END;
                d->ev.offset = d->offset;
                d->ev.data = NULL;
                d->ev.len = 0;
                d->state = I_BOUNDARY;
                d->operand = false;
                d->expect_preface = false;
                return WK_EVENT;
            }
            if (!avail) return WK_NEED_INPUT;
            size_t n = avail < d->data_left ? avail : (size_t)d->data_left;
            wk_blake3_update(&d->h, in->src + in->pos, n);
            d->ev.kind = WK_ILTP_BLOB_DATA;
            d->ev.data = in->src + in->pos;
            d->ev.len = n;
            d->ev.offset = d->offset;
            d->ev.done += n;
            in->pos += n;
            d->offset += n;
            d->data_left -= n;
            return WK_EVENT;
        }
        default:
            if (err) *err = d->failure;
            return WK_ERROR;
        }
    }
}

wk_result wk_iltp_item_decoder_decode(wk_iltp_item_decoder *d, wk_in *in, wk_out *out, wk_error *err)
{
    d->item_ready = false;
    if (out) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "the item decoder produces no bytes: pass out = NULL");
        return WK_ERROR;
    }
    wk_result r = wk_iltp_item_decoder_step(d, in, &d->item, err);
    if (r != WK_DONE) return r;
    d->item_ready = true;
    return WK_EVENT;
}

wk_result wk_iltp_item_decoder_finish(wk_iltp_item_decoder *d, const wk_in *rest, wk_error *err)
{
    if (d->state == I_FAILED) {
        if (err) *err = d->failure;
        return WK_ERROR;
    }
    bool unread = rest && rest->pos < rest->size;
    if (!unread && wk_iltp_item_decoder_at_boundary(d)) return WK_DONE;
    const char *where = "a record";
    if (d->state == I_BOUNDARY)
        where = "the next item";
    else if (d->state == I_PREFACE || (d->state == I_LEAD && d->len >= 3 && d->buf[2] == 0xAA))
        where = "a preface";
    else if (d->state == I_LEAD && d->len < 3)
        where = "the leading bytes of a preface or record";
    else if (d->state == I_FACTS)
        where = "a fact block";
    d->state = I_FAILED;
    wk_error_set(&d->failure, WK_ERR_ILTP_TRUNCATED, d->offset + d->len, "input ended inside %s", where);
    if (err) *err = d->failure;
    return WK_ERROR;
}
