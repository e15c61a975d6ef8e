/* Lace-060 items: dispatch, caps, fact blocks, H3 records, truncation, the encoder, and the
 * reader/writer stack under every encoding; split at every byte and many items per push. */
#include "wk_test.h"
#include "contract/wk_contract_iltp.h"
#include <wirekit/iltp.h>
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* table-driven record cases */

#include "wk_bytes.h"
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static const char *N0 = "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO";

static void blob(buf *b, const char *data, size_t n)
{
    size_t need = wk_iltp_blob_record_size(n);
    uint8_t *tmp = malloc(need);
    wk_out out = {tmp, need, 0};
    wk_error e;
    if (wk_iltp_blob_encode((const uint8_t *)data, n, &out, &e) != WK_DONE || out.pos != need) abort();
    put(b, tmp, out.pos);
    free(tmp);
}

static void hash_text(const char *data, size_t n, char out[44])
{
    uint8_t h[32];
    wk_iltp_blob_hash((const uint8_t *)data, n, h);
    wk_b64a_encode(h, 32, out);
    out[43] = 0;
}

/* The seed's example session, side0 -> side1, with real hashes: preface, zero-row proof,
 * operand Blob, advertisement, empty request block, the response, fence; then a second round. */
typedef struct expect { wk_iltp_item_kind kind; size_t rows; char type; } expect;
static size_t example(buf *b, expect *ex, bool with_preface)
{
    size_t k = 0;
    char line[256], h[44];
    const char *module = "module: side0 operand\nrule: ExposeRecord(R) :- Have(R).\n";
    const char *data = "a record's data \xF0\x9F\xAA\xA2: iltp/1.0 not a preface\n\n\xF0\x9F\x96\xA7: B.x.H3\n";
    if (with_preface) {
        snprintf(line, sizeof line, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", N0);
        puts_(b, line);
        ex[k++] = (expect){WK_ILTP_ITEM_PREFACE, 0, 0};
    }
    puts_(b, "\n");
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 0, 0};
    blob(b, module, strlen(module));
    ex[k++] = (expect){WK_ILTP_ITEM_RECORD, 0, 'B'};
    hash_text(data, strlen(data), h);
    snprintf(line, sizeof line, "Advertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\n\n", h, h);
    puts_(b, line);
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 2, 0};
    puts_(b, "\n");
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 0, 0};
    blob(b, data, strlen(data));
    ex[k++] = (expect){WK_ILTP_ITEM_RECORD, 0, 'B'};
    puts_(b, "RoundComplete()\n\n");
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 1, 0};
    puts_(b, "\n\nRoundComplete()\n\n");
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 0, 0};
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 0, 0};
    ex[k++] = (expect){WK_ILTP_ITEM_FACTS, 1, 0};
    return k;
}

/* One item decoder step; on an item event (WK_EVENT with an item) copies the item into *it. */
static wk_result item_step(wk_iltp_item_decoder *d, wk_in *in, wk_iltp_item *it, wk_error *e)
{
    wk_result r = wk_iltp_item_decoder_decode(d, in, NULL, e);
    if (r == WK_EVENT) {
        const wk_iltp_item *x = wk_iltp_item_decoder_item(d);
        CHECK(x && !wk_iltp_item_decoder_event(d));
        if (x) *it = *x;
    }
    return r;
}

/* The same for a reader. */
static wk_result reader_step(wk_iltp_reader *rd, wk_in *in, wk_iltp_item *it, wk_error *e)
{
    wk_result r = wk_iltp_reader_read(rd, in, NULL, e);
    if (r == WK_EVENT) {
        const wk_iltp_item *x = wk_iltp_reader_item(rd);
        CHECK(x && !wk_iltp_reader_event(rd));
        if (x) *it = *x;
    }
    return r;
}

/* A _finish result as the code it stands for (WK_OK for WK_DONE). */
static wk_code fin_code(wk_result r, const wk_error *e) { return r == WK_DONE ? WK_OK : e->code; }

/* Feeds wire to an item decoder in pieces given by cut points; checks the items. */
static int run_items(const uint8_t *wire, size_t n, const size_t *cuts, size_t ncuts, const expect *ex,
                     size_t nex, wk_code *final, size_t max_item)
{
    wk_error e;
    wk_iltp_item_decoder_params p = {WK_ILTP_FORM_ANY, max_item, NULL};
    wk_iltp_item_decoder *d = wk_iltp_item_decoder_create(&p, &e);
    size_t got = 0, start = 0;
    int bad = 0;
    uint64_t expect_off = 0;
    for (size_t c = 0; c <= ncuts; c++) {
        size_t end = c < ncuts ? cuts[c] : n;
        wk_in in = {wire, end, start};
        for (;;) {
            wk_iltp_item it;
            wk_result r = item_step(d, &in, &it, &e);
            if (r == WK_ERROR) { *final = e.code; wk_iltp_item_decoder_destroy(d); return -1; }
            if (r == WK_NEED_INPUT) break;
            if (got >= nex || it.kind != ex[got].kind || (it.kind == WK_ILTP_ITEM_FACTS && it.rows != ex[got].rows) ||
                (it.kind == WK_ILTP_ITEM_RECORD && it.record.type != ex[got].type) || it.offset != expect_off ||
                memcmp(it.bytes, wire + it.offset, it.len) != 0)
                bad++;
            expect_off += it.len;
            got++;
        }
        CHECK(in.pos == end);
        start = end;
    }
    *final = fin_code(wk_iltp_item_decoder_finish(d, NULL, &e), &e);
    wk_iltp_item_decoder_destroy(d);
    return bad ? -2 : (int)got;
}

static void test_example_splits(void)
{
    buf b = {0};
    expect ex[32];
    size_t nex = example(&b, ex, true);
    wk_code fin;
    /* whole */
    CHECK(run_items(b.p, b.n, NULL, 0, ex, nex, &fin, 0) == (int)nex && fin == WK_OK);
    /* byte by byte */
    size_t *cuts = malloc(b.n * sizeof *cuts);
    for (size_t i = 0; i < b.n; i++) cuts[i] = i + 1;
    CHECK(run_items(b.p, b.n, cuts, b.n - 1, ex, nex, &fin, 0) == (int)nex && fin == WK_OK);
    /* every split point into two pushes */
    int ok = 0;
    for (size_t i = 0; i <= b.n; i++) {
        size_t c[1] = {i};
        if (run_items(b.p, b.n, c, 1, ex, nex, &fin, 0) == (int)nex && fin == WK_OK) ok++;
    }
    CHECK(ok == (int)b.n + 1);
    /* every truncation: boundary EOF only at item ends */
    size_t ends[32], ne = 0, off = 0;
    {
        wk_error e;
        wk_iltp_item_decoder *d = wk_iltp_item_decoder_create(NULL, &e);
        wk_in in = {b.p, b.n, 0};
        wk_iltp_item it;
        while (item_step(d, &in, &it, &e) == WK_EVENT) { off += it.len; ends[ne++] = off; }
        wk_iltp_item_decoder_destroy(d);
    }
    int trunc_ok = 0;
    for (size_t cut = 0; cut < b.n; cut++) {
        bool boundary = cut == 0;
        for (size_t k = 0; k < ne; k++) boundary |= ends[k] == cut;
        size_t got_items = 0;
        wk_error e;
        wk_iltp_item_decoder *d = wk_iltp_item_decoder_create(NULL, &e);
        wk_in in = {b.p, cut, 0};
        wk_iltp_item it;
        while (item_step(d, &in, &it, &e) == WK_EVENT) got_items++;
        wk_code c = fin_code(wk_iltp_item_decoder_finish(d, NULL, &e), &e);
        if (boundary ? c == WK_OK : (c == WK_ERR_ILTP_TRUNCATED && wk_code_is_truncation(c) && e.offset == cut)) trunc_ok++;
        else fprintf(stderr, "cut %zu: %s %s\n", cut, wk_error_name(c), e.msg);
        wk_iltp_item_decoder_destroy(d);
    }
    CHECK(trunc_ok == (int)b.n);
    /* on the contract harness, Blob records collected whole and streamed */
    for (int streamed = 0; streamed < 2; streamed++) {
        wk_contract_iltp m;
        wk_contract_iltp_setup(&m, WK_ILTP_IDENTITY, WK_ILTP_BACKEND_DEFAULT, streamed);
        char why[320];
        wk_contract_outcome oc;
        CHECKF(wk_contract_check(&wk_contract_iltp_items_ops, &m, NULL, b.p, b.n, WK_CONTRACT_ALL, &oc, why, sizeof why),
               "streamed %d: %s", streamed, why);
        CHECK(oc.verdict == WK_DONE && oc.consumed == b.n);
        CHECKF(wk_contract_check(&wk_contract_iltp_items_ops, &m, NULL, b.p, b.n - 1,
                                 WK_CONTRACT_WHOLE | WK_CONTRACT_BYTES | WK_CONTRACT_SPLITS, &oc, why, sizeof why),
               "streamed %d, truncated: %s", streamed, why);
        CHECK(oc.verdict == WK_ERROR && oc.error.code == WK_ERR_ILTP_TRUNCATED);
        wk_contract_iltp_release(&m);
    }
    free(cuts);
    free(b.p);
}

static wk_code decode_one(const char *s, size_t n, wk_iltp_item *it, wk_error *e, size_t max_item, bool operand)
{
    static wk_iltp_item_decoder *d;
    if (d) wk_iltp_item_decoder_destroy(d);
    wk_iltp_item_decoder_params p = {WK_ILTP_FORM_ANY, max_item, NULL};
    d = wk_iltp_item_decoder_create(&p, e);
    if (operand) wk_iltp_item_decoder_expect_operand(d);
    wk_in in = {(const uint8_t *)s, n, 0};
    wk_result r = item_step(d, &in, it, e);
    if (r == WK_EVENT) return WK_OK;
    if (r == WK_NEED_INPUT) return fin_code(wk_iltp_item_decoder_finish(d, NULL, e), e);
    return e->code;
}
#define ONE(s, it, e) decode_one((s), sizeof(s) - 1, (it), (e), 0, false)

static void test_dispatch_and_facts(void)
{
    wk_iltp_item it;
    wk_error e;
    struct { const char *s; wk_code code; size_t off; } cases[] = {
        {"\xF0\x9F\xAA\xA3: x", WK_ERR_ILTP_ITEM_LEAD, 3},
        {"\xF0\x9F\x96\xA8: x", WK_ERR_ILTP_ITEM_LEAD, 3},
        {"\xF0\x9F\xAA\xA2;", WK_ERR_ILTP_ITEM_LEAD, 4},
        {"\xF0\x9F\xAA\xA2:X", WK_ERR_ILTP_PREFACE, 5},
        {"\xF0\x9F\x96\xA7:X", WK_ERR_ILTP_RECORD, 5},
        {"1abc()\n\n", WK_ERR_ILTP_ITEM_LEAD, 0},
        {" Foo()\n\n", WK_ERR_ILTP_ITEM_LEAD, 0},
        {"_Foo()\n\n", WK_ERR_ILTP_ITEM_LEAD, 0},
        {"\r\n", WK_ERR_ILTP_ITEM_LEAD, 0},
        {"Foo\n\n", WK_ERR_ILTP_FACT, 3},
        {"Foo(\n\n", WK_ERR_ILTP_FACT, 4},
        {"Foo('a'\n\n", WK_ERR_ILTP_FACT, 7},
        {"Foo('a',)\n\n", WK_ERR_ILTP_FACT, 8},
        {"Foo( 'a')\n\n", WK_ERR_ILTP_FACT, 4},
        {"Foo('a' ,'b')\n\n", WK_ERR_ILTP_FACT, 7},
        {"Fo-o()\n\n", WK_ERR_ILTP_FACT, 2},
        {"Foo('a\\b')\n\n", WK_ERR_ILTP_FACT, 6},
        {"Foo('it''s')\n\n", WK_ERR_ILTP_FACT, 8},
        {"Foo('\t')\n\n", WK_ERR_ILTP_FACT, 5},
        {"Foo()x\n\n", WK_ERR_ILTP_FACT, 5},
        {"Foo()\r\n\n", WK_ERR_ILTP_FACT, 5},
        {"Foo(a)\n\n", WK_ERR_ILTP_FACT, 4},
        {"Foo(\"a\")\n\n", WK_ERR_ILTP_FACT, 4},
        {"Foo('e\xCC\x81')\n\n", WK_ERR_ILTP_UTF8, 5},     /* NFD: e + combining acute */
        {"Foo('\xC3')\n\n", WK_ERR_ILTP_UTF8, 5},          /* truncated sequence */
        {"Foo('\xC0\xAF')\n\n", WK_ERR_ILTP_UTF8, 5},      /* overlong */
        {"Foo('\xED\xA0\x80')\n\n", WK_ERR_ILTP_UTF8, 5},  /* surrogate */
        {"Foo('\xE2\x84\xAB')\n\n", WK_ERR_ILTP_UTF8, 5},  /* U+212B ANGSTROM SIGN: NFC is U+00C5 */
        {"Foo()\nBar(\n\n", WK_ERR_ILTP_FACT, 10},
        {"Foo()\n", WK_ERR_ILTP_TRUNCATED, 6},
        {"Foo(", WK_ERR_ILTP_TRUNCATED, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_code c = decode_one(cases[i].s, strlen(cases[i].s), &it, &e, 0, false);
        CHECKF(c == cases[i].code && e.offset == cases[i].off, "case %zu '%s': %s at %llu (%s)", i, cases[i].s,
               wk_error_name(c), (unsigned long long)e.offset, e.msg);
    }
    const char *good[] = {"Foo()\n\n", "A_1('')\n\n", "Advertised('B.A.H3')\nAdvertisedField('B.A.H3','Type','0','B')\n\n",
                          "Name('\xC3\xA9t\xC3\xA9','\xE6\x97\xA5\xE6\x9C\xAC','\xF0\x9F\x98\x80','x y ~!')\n\n",
                          "P('\x7F')\n\n", "\n"};
    size_t rows[] = {1, 1, 2, 1, 1, 0};
    for (int i = 0; i < 6; i++) {
        wk_code c = decode_one(good[i], strlen(good[i]), &it, &e, 0, false);
        CHECKF(c == WK_OK && it.kind == WK_ILTP_ITEM_FACTS && it.rows == rows[i] && it.len == strlen(good[i]),
               "good %d: %s %s", i, wk_error_name(c), e.msg);
    }
    /* rows and constants are exposed as slices */
    decode_one(good[3], strlen(good[3]), &it, &e, 0, false);
    size_t pos = 0, ap = 0, al;
    wk_iltp_fact_row row;
    const uint8_t *arg;
    CHECK(wk_iltp_fact_next(it.bytes, it.len, &pos, &row) && row.arity == 4 && row.predicate_len == 4);
    CHECK(wk_iltp_fact_arg_next(&row, &ap, &arg, &al) && al == 5 && memcmp(arg, "\xC3\xA9t\xC3\xA9", 5) == 0);
    CHECK(wk_iltp_fact_arg_next(&row, &ap, &arg, &al) && al == 6);
    CHECK(wk_iltp_fact_arg_next(&row, &ap, &arg, &al) && al == 4);
    CHECK(wk_iltp_fact_arg_next(&row, &ap, &arg, &al) && al == 6 && memcmp(arg, "x y ~!", 6) == 0);
    CHECK(!wk_iltp_fact_arg_next(&row, &ap, &arg, &al));
    CHECK(!wk_iltp_fact_next(it.bytes, it.len, &pos, &row));

    /* the fact line cap: 1024 bytes excluding LF is fine, 1025 is refused before its LF arrives */
    char line[1100];
    memset(line, 'x', sizeof line);
    memcpy(line, "Foo('", 5);
    memcpy(line + 1024 - 2, "')\n\n", 4);
    CHECK(decode_one(line, 1026, &it, &e, 0, false) == WK_OK && it.rows == 1);
    memcpy(line + 1025 - 2, "')\n\n", 4);
    CHECK(decode_one(line, 1027, &it, &e, 0, false) == WK_ERR_ILTP_FACT_LINE_TOO_LONG && e.offset == 1024);
    CHECK(decode_one(line, 1025, &it, &e, 0, false) == WK_ERR_ILTP_FACT_LINE_TOO_LONG);
}

/* The item cap applies to the current item and resets after each, even inside one push. */
static void test_item_cap(void)
{
    buf b = {0};
    char row[1000];
    memset(row, 'a', sizeof row);
    memcpy(row, "Row('", 5);
    memcpy(row + 997, "')\n", 3);
    for (int item = 0; item < 10; item++) {
        for (int r = 0; r < 3; r++) put(&b, row, 1000);
        puts_(&b, "\n");
    }
    expect ex[10];
    for (int i = 0; i < 10; i++) ex[i] = (expect){WK_ILTP_ITEM_FACTS, 3, 0};
    wk_code fin;
    CHECK(run_items(b.p, b.n, NULL, 0, ex, 10, &fin, 4096) == 10 && fin == WK_OK);
    /* a fifth row makes the block 4001+ bytes: refused as soon as it cannot fit */
    b.n = 0;
    for (int r = 0; r < 5; r++) put(&b, row, 1000);
    wk_iltp_item it;
    wk_error e;
    CHECK(decode_one((const char *)b.p, b.n, &it, &e, 4096, false) == WK_ERR_ILTP_ITEM_TOO_LARGE && e.offset == 4096);
    /* a Blob whose declared size cannot fit is refused at its Data-Length line */
    b.n = 0;
    char big[8000];
    memset(big, 'z', sizeof big);
    blob(&b, big, sizeof big);
    CHECK(decode_one((const char *)b.p, 100, &it, &e, 4096, false) == WK_ERR_ILTP_ITEM_TOO_LARGE);
    free(b.p);
}

static void test_records(void)
{
    wk_iltp_item it;
    wk_error e;
    buf b = {0};
    /* the empty Blob, as the dictionary spells it */
    blob(&b, "", 0);
    const char *empty = "\xF0\x9F\x96\xA7: B.svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO.H3\nData-Length: 0\n\n";
    CHECK(b.n == strlen(empty) && memcmp(b.p, empty, b.n) == 0);
    CHECK(b.n == wk_iltp_blob_record_size(0));
    CHECK(decode_one(empty, strlen(empty), &it, &e, 0, false) == WK_OK && it.record.type == 'B' && it.record.blob.len == 0);
    /* knot- and glyph-shaped bytes, blank lines inside Blob data stay data */
    b.n = 0;
    const char *data = "\n\n\xF0\x9F\xAA\xA2: iltp/1.0 x\n\xF0\x9F\x96\xA7: B.y.H3\n\n";
    blob(&b, data, strlen(data));
    CHECK(decode_one((const char *)b.p, b.n, &it, &e, 0, false) == WK_OK && it.len == b.n &&
          it.record.blob.len == strlen(data) && memcmp(it.record.blob.data, data, strlen(data)) == 0);
    CHECK(wk_iltp_record_hash_check(&it.record));
    /* a wrong hash */
    b.p[10] = b.p[10] == 'A' ? 'B' : 'A';
    CHECK(decode_one((const char *)b.p, b.n, &it, &e, 0, false) == WK_ERR_ILTP_RECORD_HASH && e.offset == 8);
    /* structure */
    char s[400];
    const char *bad[] = {
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 05\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: +5\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: \n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length:  0\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-length: 0\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 0\nX\n",
        "\xF0\x9F\x96\xA7: B.%s.H4\nData-Length: 0\n\n",
        "\xF0\x9F\x96\xA7: X.%s.H3\nData-Length: 0\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3 \nData-Length: 0\n\n",
        "\xF0\x9F\x96\xA7:  B.%s.H3\nData-Length: 0\n\n",
        "\xF0\x9F\x96\xA7: B.%s.H3\r\nData-Length: 0\n\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(s, sizeof s, bad[i], "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO");
        wk_code c = decode_one(s, strlen(s), &it, &e, 0, false);
        CHECKF(c == WK_ERR_ILTP_RECORD, "bad record %zu: %s %s", i, wk_error_name(c), e.msg);
    }
    /* non-canonical B64A in the glyph */
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 0\n\n", "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpP");
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    /* Data-Length over 32 MiB is refused at once, without its data */
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 33554433\n", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_BLOB_TOO_LARGE);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 33554432\n", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_TRUNCATED);
    /* operands: 1 MiB for the whole record */
    size_t big = (1u << 20) - wk_iltp_blob_record_size(1u << 20) + (1u << 20);
    char *data1 = malloc(1u << 20);
    memset(data1, 'o', 1u << 20);
    b.n = 0;
    blob(&b, data1, big);
    CHECK(b.n == (1u << 20));
    CHECK(decode_one((const char *)b.p, b.n, &it, &e, 0, true) == WK_OK);
    b.n = 0;
    blob(&b, data1, big + 1);
    CHECK(decode_one((const char *)b.p, 200, &it, &e, 0, true) == WK_ERR_ILTP_OPERAND_TOO_LARGE);
    CHECK(decode_one((const char *)b.p, b.n, &it, &e, 0, false) == WK_OK); /* fine as a response */
    CHECK(decode_one("\n", 1, &it, &e, 0, true) == WK_ERR_ILTP_RECORD);
    /* a preface may replace the session where an operand was due */
    snprintf(s, sizeof s, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, true) == WK_OK && it.kind == WK_ILTP_ITEM_PREFACE);
    free(data1);

    /* Plex: fields then a whole Blob; Seal: By, Mark, then a whole Plex */
    b.n = 0;
    buf content = {0};
    puts_(&content, "Group: lace\nApp: peer-proof\nName: session/side0\nTAI: 0000000000:000000000\n");
    blob(&content, "", 0);
    uint8_t ph[32];
    wk_blake3(content.p, content.n, ph);
    char phs[44];
    wk_b64a_encode(ph, 32, phs);
    phs[43] = 0;
    buf plex = {0};
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: P.%s.H3\n", phs);
    puts_(&plex, s);
    put(&plex, content.p, content.n);
    CHECK(decode_one((const char *)plex.p, plex.n, &it, &e, 0, false) == WK_OK);
    CHECK(it.record.type == 'P' && it.record.plex.field_count == 4 && it.record.blob.len == 0 &&
          it.record.plex.content_len == content.n && wk_iltp_record_hash_check(&it.record));
    buf seal = {0}, sc = {0};
    snprintf(s, sizeof s, "By: V.%s.H3\nMark: sig-%s\n", N0, N0);
    puts_(&sc, s);
    put(&sc, plex.p, plex.n);
    uint8_t sh[32];
    wk_blake3(sc.p, sc.n, sh);
    char shs[44];
    wk_b64a_encode(sh, 32, shs);
    shs[43] = 0;
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: S.%s.H3\n", shs);
    puts_(&seal, s);
    put(&seal, sc.p, sc.n);
    CHECK(decode_one((const char *)seal.p, seal.n, &it, &e, 0, false) == WK_OK);
    CHECK(it.record.type == 'S' && it.record.seal.mark_len == 47 && it.record.seal.plex.field_count == 4 &&
          wk_iltp_record_hash_check(&it.record));
    /* P and S hashes are not enforced by default, only offered */
    seal.p[12] = seal.p[12] == 'A' ? 'B' : 'A';
    CHECK(decode_one((const char *)seal.p, seal.n, &it, &e, 0, false) == WK_OK && !wk_iltp_record_hash_check(&it.record));
    /* nesting rules */
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: S.%s.H3\nBy: V.%s.H3\nMark: m\n\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 0\n\n", N0, N0, N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: P.%s.H3\nA: b\n\xF0\x9F\x96\xA7: P.%s.H3\n", N0, N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: P.%s.H3\n1A: b\n", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: P.%s.H3\nA:b\n", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: S.%s.H3\nBy: B.%s.H3\n", N0, N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: S.%s.H3\nBy: V.%s.H3\nMark: \n", N0, N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_RECORD);
    snprintf(s, sizeof s, "\xF0\x9F\x96\xA7: P.%s.H3\nA: b", N0);
    CHECK(decode_one(s, strlen(s), &it, &e, 0, false) == WK_ERR_ILTP_TRUNCATED && strstr(e.msg, "record"));
    free(b.p); free(content.p); free(plex.p); free(seal.p); free(sc.p);
}

static void test_encoder(void)
{
    const char *c1[] = {"B.A.H3"};
    const char *c2[] = {"B.A.H3", "Type", "0", "B"};
    wk_iltp_fact rows[] = {{"Advertised", c1, 1}, {"AdvertisedField", c2, 4}, {"RoundComplete", NULL, 0}};
    uint8_t out[256];
    wk_out o = {out, sizeof out, 0};
    wk_error e;
    CHECK(wk_iltp_facts_encode(rows, 3, &o, &e) == WK_DONE);
    const char *want = "Advertised('B.A.H3')\nAdvertisedField('B.A.H3','Type','0','B')\nRoundComplete()\n\n";
    CHECK(o.pos == strlen(want) && memcmp(out, want, o.pos) == 0);
    o.pos = 0;
    CHECK(wk_iltp_facts_encode(rows, 0, &o, &e) == WK_DONE && o.pos == 1 && out[0] == '\n');
    /* never half an item */
    uint8_t small[20];
    memset(small, 0xAA, sizeof small);
    wk_out so = {small, sizeof small, 3};
    CHECK(wk_iltp_facts_encode(rows, 3, &so, &e) == WK_NEED_OUTPUT && so.pos == 3 && small[3] == 0xAA);
    /* refusals are Integration errors: WK_ERR_ILTP_ENCODE, the message naming the rule's code */
    const char *nfd[] = {"e\xCC\x81"};
    wk_iltp_fact r1 = {"Name", nfd, 1};
    CHECK(wk_iltp_facts_size(&r1, 1, &e) == 0 && e.code == WK_ERR_ILTP_ENCODE && strstr(e.msg, "ILTP_ERR_UTF8") &&
          e.category == WK_CAT_INTEGRATION && wk_code_category(e.code) == WK_CAT_INTEGRATION);
    const char *quote[] = {"it's"};
    wk_iltp_fact r2 = {"Name", quote, 1};
    CHECK(wk_iltp_facts_size(&r2, 1, &e) == 0 && e.category == WK_CAT_INTEGRATION);
    wk_iltp_fact r3 = {"9Name", NULL, 0};
    CHECK(wk_iltp_facts_size(&r3, 1, &e) == 0 && e.code == WK_ERR_ILTP_ENCODE && strstr(e.msg, "ILTP_ERR_FACT:"));
    char longc[1100];
    memset(longc, 'q', sizeof longc);
    longc[1019] = 0;
    const char *lc[] = {longc};
    wk_iltp_fact r4 = {"P", lc, 1};
    CHECK(wk_iltp_facts_size(&r4, 1, &e) == 1025 + 1); /* 1024 + LF + block LF */
    longc[1019] = 'q';
    longc[1020] = 0;
    CHECK(wk_iltp_facts_size(&r4, 1, &e) == 0 && e.code == WK_ERR_ILTP_ENCODE && strstr(e.msg, "ILTP_ERR_FACT_LINE_TOO_LONG") &&
          e.category == WK_CAT_INTEGRATION);
    /* Blob over 32 MiB */
    wk_out bo = {out, sizeof out, 0};
    CHECK(wk_iltp_blob_encode(out, ((size_t)32 << 20) + 1, &bo, &e) == WK_ERROR && e.code == WK_ERR_ILTP_ENCODE &&
          strstr(e.msg, "ILTP_ERR_BLOB_TOO_LARGE") && e.category == WK_CAT_INTEGRATION && bo.pos == 0);
    CHECK(wk_iltp_blob_encode((const uint8_t *)"x", 1, &so, &e) == WK_NEED_OUTPUT && so.pos == 3);
}

/* The stack: writer -> wire -> reader, under every encoding, whole and byte by byte. */
static void test_stack(void)
{
    for (int enc = 0; enc < 3; enc++) {
        wk_error e;
        wk_iltp_stack_params sp = {WK_ILTP_FORM_1_0, 0, 0, NULL};
        wk_iltp_writer *w = wk_iltp_writer_create(&sp, &e);
        buf items = {0}, wire = {0};
        expect ex[32];
        size_t nex = example(&items, ex, false);
        uint8_t nonce[32], tmp[512];
        size_t nl;
        wk_b64a_decode(N0, 43, nonce, 32, &nl, &e);
        for (int session = 0; session < 2; session++) {
            wk_result r;
            do {
                wk_out o = {tmp, 7, 0}; /* tiny output views */
                r = wk_iltp_writer_begin_session(w, nonce, NULL, NULL, &o, &e);
                put(&wire, tmp, o.pos);
            } while (r == WK_NEED_OUTPUT);
            CHECK(r == WK_DONE);
            CHECK(wk_iltp_writer_select(w, (wk_iltp_encoding)enc, &e) == WK_OK);
            /* one batch per item group: split the example at arbitrary points */
            size_t cuts[] = {0, 1, 50, 200, items.n};
            for (int k = 0; k < 4; k++) {
                wk_in in = {items.p + cuts[k], cuts[k + 1] - cuts[k], 0};
                do {
                    wk_out o = {tmp, sizeof tmp, 0};
                    r = wk_iltp_writer_write(w, &in, &o, &e);
                    put(&wire, tmp, o.pos);
                } while (r == WK_NEED_OUTPUT);
                CHECK(r == WK_DONE);
            }
        }
        /* the second begin_session wrote the first session's end mark; end the second */
        wk_result r;
        do {
            wk_out o = {tmp, sizeof tmp, 0};
            r = wk_iltp_writer_end(w, &o, &e);
            put(&wire, tmp, o.pos);
        } while (r == WK_NEED_OUTPUT);
        CHECK(r == WK_DONE);
        wk_iltp_writer_destroy(w);
        if (enc == WK_ILTP_ZSTD20C) CHECK(memcmp(wire.p + wire.n - 3, "\x01\x00\x00", 3) == 0);
        if (enc == WK_ILTP_DEFLATE12C) CHECK(memcmp(wire.p + wire.n - 2, "\x03\x00", 2) == 0);
        /* the reader on the contract harness: two sessions, prefaces, end marks; Blobs streamed
         * under zstd20c */
        {
            wk_contract_iltp m;
            wk_contract_iltp_setup(&m, (wk_iltp_encoding)enc, WK_ILTP_BACKEND_DEFAULT, enc == WK_ILTP_ZSTD20C);
            m.form = WK_ILTP_FORM_1_0;
            char why[320];
            wk_contract_outcome oc;
            CHECKF(wk_contract_check(&wk_contract_iltp_reader_ops, &m, NULL, wire.p, wire.n,
                                     WK_CONTRACT_WHOLE | WK_CONTRACT_BYTES | WK_CONTRACT_SPLITS | WK_CONTRACT_CHUNKS, &oc,
                                     why, sizeof why), "enc %d: %s", enc, why);
            CHECK(oc.verdict == WK_DONE && oc.consumed == wire.n);
            wk_contract_iltp_release(&m);
        }

        for (size_t chunk = 1; chunk <= wire.n; chunk = chunk == 1 ? 13 : wire.n + 1) {
            wk_iltp_reader *rd = wk_iltp_reader_create(&sp, &e);
            size_t pos = 0, got = 0, prefaces = 0;
            int bad = 0;
            wk_result res = WK_NEED_INPUT;
            while (pos < wire.n || res == WK_EVENT) {
                size_t lim = pos + chunk < wire.n ? pos + chunk : wire.n;
                wk_in in = {wire.p, lim, pos};
                wk_iltp_item it;
                res = reader_step(rd, &in, &it, &e);
                pos = in.pos;
                if (res == WK_ERROR) { bad++; fprintf(stderr, "enc %d chunk %zu: %s %s\n", enc, chunk, wk_error_name(e.code), e.msg); break; }
                if (res != WK_EVENT) continue;
                if (it.kind == WK_ILTP_ITEM_PREFACE) {
                    prefaces++;
                    CHECK(memcmp(it.preface.nonce, nonce, 32) == 0);
                    CHECK(reader_step(rd, &in, &it, &e) == WK_ERROR && e.code == WK_ERR_STATE); /* paused */
                    CHECK(wk_iltp_reader_begin(rd, (wk_iltp_encoding)enc, &e) == WK_OK);
                    continue;
                }
                size_t k = got % nex;
                if (it.kind != ex[k].kind || (it.kind == WK_ILTP_ITEM_FACTS && it.rows != ex[k].rows)) bad++;
                got++;
            }
            wk_in rest = {wire.p, wire.n, pos};
            CHECKF(!bad && prefaces == 2 && got == 2 * nex, "enc %d chunk %zu: %zu items %zu prefaces", enc, chunk, got, prefaces);
            CHECK(wk_iltp_reader_finish(rd, &rest, &e) == WK_DONE);
            wk_iltp_reader_destroy(rd);
        }
        /* truncation: drop the last byte */
        {
            wk_iltp_reader *rd = wk_iltp_reader_create(&sp, &e);
            wk_in in = {wire.p, wire.n - 1, 0};
            wk_iltp_item it;
            wk_result res;
            while ((res = reader_step(rd, &in, &it, &e)) == WK_EVENT)
                if (it.kind == WK_ILTP_ITEM_PREFACE) wk_iltp_reader_begin(rd, (wk_iltp_encoding)enc, &e);
            wk_code c = res == WK_ERROR ? e.code : fin_code(wk_iltp_reader_finish(rd, &in, &e), &e);
            CHECKF(c == WK_ERR_ILTP_TRUNCATED, "enc %d truncated: %s", enc, wk_error_name(c));
            wk_iltp_reader_destroy(rd);
        }
        free(items.p);
        free(wire.p);
    }
}

/* Reader rules: preface first, raw only; nothing but a preface after an end mark. */
static void test_reader_rules(void)
{
    wk_error e;
    wk_iltp_item it;
    char pre[100];
    snprintf(pre, sizeof pre, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", N0);
    /* an item before the first preface */
    wk_iltp_reader *rd = wk_iltp_reader_create(NULL, &e);
    wk_in in = {(const uint8_t *)"Foo()\n\n", 7, 0};
    CHECK(reader_step(rd, &in, &it, &e) == WK_ERROR && e.code == WK_ERR_ILTP_PREFACE && e.offset == 0);
    wk_iltp_reader_destroy(rd);
    /* the reader stops right after the preface; the suffix waits for begin */
    buf b = {0};
    puts_(&b, pre);
    puts_(&b, "\n");
    rd = wk_iltp_reader_create(NULL, &e);
    wk_in in2 = {b.p, b.n, 0};
    CHECK(reader_step(rd, &in2, &it, &e) == WK_EVENT && it.kind == WK_ILTP_ITEM_PREFACE && in2.pos == 59);
    CHECK(wk_iltp_reader_begin(rd, WK_ILTP_IDENTITY, &e) == WK_OK);
    CHECK(reader_step(rd, &in2, &it, &e) == WK_EVENT && it.kind == WK_ILTP_ITEM_FACTS && it.offset == 59);
    wk_iltp_reader_destroy(rd);
    /* a preface inside a compressed stream */
    for (int enc = 1; enc < 3; enc++) {
        wk_iltp_encoder *en = wk_iltp_encoder_create((wk_iltp_encoding)enc, NULL, &e);
        uint8_t tmp[512];
        wk_out o = {tmp, sizeof tmp, 0};
        wk_in pin = {(const uint8_t *)pre, 59, 0};
        wk_iltp_encoder_encode(en, &pin, &o, WK_ILTP_END, &e);
        b.n = 0;
        puts_(&b, pre);
        put(&b, tmp, o.pos);
        rd = wk_iltp_reader_create(NULL, &e);
        wk_in in3 = {b.p, b.n, 0};
        CHECK(reader_step(rd, &in3, &it, &e) == WK_EVENT);
        wk_iltp_reader_begin(rd, (wk_iltp_encoding)enc, &e);
        CHECK(reader_step(rd, &in3, &it, &e) == WK_ERROR && e.code == WK_ERR_ILTP_PREFACE_ENCODED);
        wk_iltp_reader_destroy(rd);
        /* after the end mark: a fact block instead of a raw preface */
        o.pos = 0;
        wk_iltp_encoder_reset(en, &e);
        wk_in fin = {(const uint8_t *)"\n", 1, 0};
        wk_iltp_encoder_encode(en, &fin, &o, WK_ILTP_END, &e);
        b.n = 0;
        puts_(&b, pre);
        put(&b, tmp, o.pos);
        size_t end = b.n;
        puts_(&b, "Foo()\n\n");
        rd = wk_iltp_reader_create(NULL, &e);
        wk_in in4 = {b.p, b.n, 0};
        CHECK(reader_step(rd, &in4, &it, &e) == WK_EVENT);
        wk_iltp_reader_begin(rd, (wk_iltp_encoding)enc, &e);
        CHECK(reader_step(rd, &in4, &it, &e) == WK_EVENT && it.kind == WK_ILTP_ITEM_FACTS);
        wk_result rr = reader_step(rd, &in4, &it, &e);
        CHECKF(rr == WK_ERROR && e.code == WK_ERR_ILTP_AFTER_END_MARK && e.offset == end, "enc %d: %d %s at %llu", enc, rr,
               wk_error_name(e.code), (unsigned long long)e.offset);
        wk_iltp_reader_destroy(rd);
        /* an end mark inside an item is truncation */
        o.pos = 0;
        wk_iltp_encoder_reset(en, &e);
        wk_in half = {(const uint8_t *)"Foo()\n", 6, 0};
        wk_iltp_encoder_encode(en, &half, &o, WK_ILTP_END, &e);
        b.n = 0;
        puts_(&b, pre);
        put(&b, tmp, o.pos);
        rd = wk_iltp_reader_create(NULL, &e);
        wk_in in5 = {b.p, b.n, 0};
        reader_step(rd, &in5, &it, &e);
        wk_iltp_reader_begin(rd, (wk_iltp_encoding)enc, &e);
        CHECK(reader_step(rd, &in5, &it, &e) == WK_ERROR && e.code == WK_ERR_ILTP_TRUNCATED);
        wk_iltp_reader_destroy(rd);
        wk_iltp_encoder_destroy(en);
    }
    free(b.p);
}

/* A writer whose encoder failed keeps that failure: write, write_part, end, begin_session and
 * select all report it again, every field unchanged, writing nothing. The failure is provoked with
 * an output view the encoder refuses (position past its size: WK_ERR_ARG). */
static void test_writer_failure_sticky(void)
{
    uint8_t nonce[32], tmp[4096];
    size_t nl;
    wk_error e;
    wk_b64a_decode(N0, 43, nonce, 32, &nl, &e);
    static const char items[] = "Foo('bar')\n\n";
    for (int enc = 0; enc < 3; enc++) {
        wk_iltp_stack_params sp = {WK_ILTP_FORM_1_0, 0, 0, NULL};
        wk_iltp_writer *w = wk_iltp_writer_create(&sp, &e);
        REQUIRE(w);
        wk_out o = {tmp, sizeof tmp, 0};
        CHECK(wk_iltp_writer_begin_session(w, nonce, NULL, NULL, &o, &e) == WK_DONE);
        CHECK(wk_iltp_writer_select(w, (wk_iltp_encoding)enc, &e) == WK_OK);
        wk_in in = {(const uint8_t *)items, sizeof items - 1, 0};
        wk_out bad = {tmp, 10, 11};
        CHECK(wk_iltp_writer_write(w, &in, &bad, &e) == WK_ERROR && e.code == WK_ERR_ARG);
        wk_error first = e, later;
        wk_in in2 = {(const uint8_t *)items, sizeof items - 1, 0};
        wk_out o2 = {tmp, sizeof tmp, 0};
        memset(&later, 0x5A, sizeof later);
        CHECK(wk_iltp_writer_write(w, &in2, &o2, &later) == WK_ERROR && memcmp(&later, &first, sizeof first) == 0);
        memset(&later, 0x5A, sizeof later);
        CHECK(wk_iltp_writer_write_part(w, &in2, &o2, &later) == WK_ERROR && memcmp(&later, &first, sizeof first) == 0);
        memset(&later, 0x5A, sizeof later);
        CHECK(wk_iltp_writer_end(w, &o2, &later) == WK_ERROR && memcmp(&later, &first, sizeof first) == 0);
        memset(&later, 0x5A, sizeof later);
        CHECK(wk_iltp_writer_begin_session(w, nonce, NULL, NULL, &o2, &later) == WK_ERROR &&
              memcmp(&later, &first, sizeof first) == 0);
        memset(&later, 0x5A, sizeof later);
        CHECK(wk_iltp_writer_select(w, WK_ILTP_IDENTITY, &later) == first.code && memcmp(&later, &first, sizeof first) == 0);
        CHECK(in2.pos == 0 && o2.pos == 0);
        wk_iltp_writer_destroy(w);
    }
}

/* wk_iltp_ref_parse: a whole-message call over a view. */
static void test_ref(void)
{
    uint8_t h[32], got[32];
    for (int i = 0; i < 32; i++) h[i] = (uint8_t)(i * 37 + 1);
    char b[64];
    memcpy(b, "xx", 2);
    wk_iltp_ref_format('B', h, b + 2);
    memcpy(b + 2 + WK_ILTP_REF_LEN, "')", 2);
    wk_error e;
    wk_in in = {(const uint8_t *)b, 2 + WK_ILTP_REF_LEN + 2, 2};
    CHECK(wk_iltp_ref_parse(&in, 'B', got, &e) == WK_DONE && in.pos == 2 + WK_ILTP_REF_LEN && memcmp(got, h, 32) == 0);
    /* refusals leave the view; offsets count from the reference's first byte */
    static const struct { size_t at; char c; size_t len; char type; size_t off; } bad[] = {
        {0, 'B', WK_ILTP_REF_LEN, 'P', 0},  /* another type */
        {1, ':', WK_ILTP_REF_LEN, 'B', 1},
        {10, '!', WK_ILTP_REF_LEN, 'B', 10}, /* not B64A */
        {46, 'h', WK_ILTP_REF_LEN, 'B', 46}, /* .h3 */
        {0, 'B', 20, 'B', 20},               /* short */
        {0, 'B', 0, 'B', 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char c[64];
        memcpy(c, b + 2, WK_ILTP_REF_LEN);
        c[bad[i].at] = bad[i].c;
        in = (wk_in){(const uint8_t *)c, bad[i].len, 0};
        memset(got, 0, 32);
        CHECKF(wk_iltp_ref_parse(&in, bad[i].type, got, &e) == WK_ERROR && in.pos == 0 &&
               e.code == WK_ERR_ILTP_RECORD && e.has_offset && e.offset == bad[i].off,
               "ref %zu: %s at %llu", i, wk_error_name(e.code), (unsigned long long)e.offset);
    }
    in = (wk_in){NULL, 0, 0};
    CHECK(wk_iltp_ref_parse(&in, 'B', got, &e) == WK_ERROR && e.code == WK_ERR_ILTP_RECORD && in.pos == 0);
}

int main(void)
{
    test_ref();
    test_example_splits();
    test_dispatch_and_facts();
    test_item_cap();
    test_records();
    test_encoder();
    test_stack();
    test_reader_rules();
    test_writer_failure_sticky();
    return wk_test_summary("iltp_item");
}
