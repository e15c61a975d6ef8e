/* libFuzzer target: ILTP preface parser (wk_iltp_preface_parse), both forms.
 *
 * The whole input is offered to the parser with each configured form (ANY, 1.0, 0.13).
 * Checks:
 *   - WK_DONE: the preface fits (len <= input, <= 1024), is of a form the configuration accepts,
 *     its offers are valid lists borrowed from the input, and wk_iltp_preface_encode with the
 *     parsed fields reproduces exactly the same bytes: the grammar has one spelling per preface
 *     (fixed field order, exact separators, canonical B64A nonce, lists kept verbatim). Every
 *     proper prefix of it returns WK_NEED_INPUT.
 *   - WK_NEED_INPUT: only for fewer than 1024 bytes (no preface is longer).
 *   - WK_ERROR: a PeerProtocol preface/offer code with an offset inside the input.
 *   - The forms agree: a preface ANY accepts is accepted the same by its own form and rejected
 *     with ILTP_ERR_VERSION by the other; what ANY rejects, each form rejects. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static bool inside(const char *p, size_t n, const uint8_t *data, size_t size)
{
    const uint8_t *q = (const uint8_t *)p;
    return q >= data && q + n <= data + size;
}

static void check_offer(const wk_iltp_offer *o, const uint8_t *data, size_t len)
{
    if (o->len == 0) return;
    CHECK(inside(o->text, o->len, data, len));
    wk_iltp_offer again;
    wk_error err;
    CHECK(wk_iltp_offer_parse(o->text, o->len, &again, &err) == WK_OK);
    CHECK(again.count == o->count);
}

static char *dup_list(const wk_iltp_offer *o)
{
    char *s = malloc(o->len + 1);
    CHECK(s != NULL);
    if (o->len) memcpy(s, o->text, o->len);
    s[o->len] = 0;
    return s;
}

static void check_done(const uint8_t *data, size_t size, wk_iltp_form form, const wk_iltp_preface *p)
{
    CHECK(p->len > 0 && p->len <= size && p->len <= WK_ILTP_PREFACE_MAX);
    CHECK(p->form == WK_ILTP_FORM_1_0 || p->form == WK_ILTP_FORM_0_13);
    CHECK(form == WK_ILTP_FORM_ANY || form == p->form);
    CHECK(memcmp(data, WK_ILTP_PREFACE_LEAD, WK_ILTP_PREFACE_LEAD_LEN) == 0);
    CHECK(data[p->len - 1] == '\n');
    if (p->form == WK_ILTP_FORM_1_0) {
        CHECK(p->len == 59 && p->decode.len == 0 && p->encode.len == 0);
    }
    check_offer(&p->decode, data, p->len);
    check_offer(&p->encode, data, p->len);

    /* canonical: formatting the parsed fields gives the same bytes */
    char *dec = dup_list(&p->decode), *enc = dup_list(&p->encode);
    uint8_t out[WK_ILTP_PREFACE_MAX];
    wk_error err;
    wk_out o = {out, sizeof out, 0};
    size_t need = 0;
    bool ok = wk_iltp_preface_size(p->form, p->nonce, dec, enc, &need, &err) == WK_OK &&
              wk_iltp_preface_encode(p->form, p->nonce, dec, enc, &o, &err) == WK_DONE && o.pos == need;
    size_t n = o.pos;
    if (!ok || n != p->len || memcmp(out, data, n) != 0) {
        fprintf(stderr, "re-formatted preface differs: parsed %zu bytes, formatted %zu (%s)\n",
                p->len, n, ok ? "" : err.msg);
        CHECK(!"preface is not canonical");
    }
    free(dec);
    free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const wk_iltp_form forms[3] = {WK_ILTP_FORM_ANY, WK_ILTP_FORM_1_0, WK_ILTP_FORM_0_13};
    wk_result res[3];
    wk_iltp_preface pf[3];
    wk_code codes[3];
    for (int f = 0; f < 3; f++) {
        wk_error err;
        wk_error_clear(&err);
        memset(&pf[f], 0, sizeof pf[f]);
        wk_in in = {data, size, 0};
        res[f] = wk_iltp_preface_parse(&in, forms[f], &pf[f], &err);
        CHECK(in.pos == (res[f] == WK_DONE ? pf[f].len : 0)); /* DONE moves past it, else untouched */
        codes[f] = err.code;
        switch (res[f]) {
        case WK_DONE:
            check_done(data, size, forms[f], &pf[f]);
            break;
        case WK_NEED_INPUT:
            CHECK(size < WK_ILTP_PREFACE_MAX);
            break;
        case WK_ERROR:
            CHECK(err.category == WK_CAT_PEER_PROTOCOL);
            CHECK(err.code == WK_ERR_ILTP_PREFACE || err.code == WK_ERR_ILTP_VERSION ||
                  err.code == WK_ERR_ILTP_NONCE || err.code == WK_ERR_ILTP_PREFACE_TOO_LONG ||
                  err.code == WK_ERR_ILTP_TOKEN || err.code == WK_ERR_ILTP_OFFER);
            CHECK(err.has_offset && err.offset <= size);
            break;
        default:
            CHECK(!"unexpected result");
        }
    }

    /* the forms agree */
    if (res[0] == WK_DONE) {
        int own = pf[0].form == WK_ILTP_FORM_1_0 ? 1 : 2, other = 3 - own;
        CHECK(res[own] == WK_DONE && pf[own].len == pf[0].len);
        CHECK(memcmp(pf[own].nonce, pf[0].nonce, WK_ILTP_NONCE_LEN) == 0);
        CHECK(res[other] == WK_ERROR && codes[other] == WK_ERR_ILTP_VERSION);

        /* every proper prefix of an accepted preface is "not yet" */
        for (size_t k = 0; k < pf[0].len; k++) {
            wk_iltp_preface q;
            wk_error err;
            wk_in in = {data, k, 0};
            wk_result r = wk_iltp_preface_parse(&in, WK_ILTP_FORM_ANY, &q, &err);
            if (r != WK_NEED_INPUT) {
                fprintf(stderr, "prefix of %zu bytes (of %zu): result %d %s\n", k, pf[0].len,
                        (int)r, r == WK_ERROR ? err.msg : "");
                CHECK(r == WK_NEED_INPUT);
            }
        }
    } else if (res[0] == WK_ERROR) {
        CHECK(res[1] == WK_ERROR && res[2] == WK_ERROR);
    } else {
        CHECK(res[1] != WK_DONE && res[2] != WK_DONE);
    }
    return 0;
}
