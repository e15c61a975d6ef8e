/* libFuzzer target: ILTP offer lists (wk_iltp_offer_parse, _next, _contains, wk_iltp_offer_select).
 *
 * The whole input is the list text. Checks:
 *   - WK_OK: iterating gives `count` tokens, each [a-z][a-z0-9]{0,31}, none `identity`, no two
 *     equal, joined by commas they are the input; _contains finds each; selecting the list
 *     against itself returns its first token (borrowed from the list) and the encoding it names.
 *   - an error is ILTP_ERR_TOKEN or ILTP_ERR_OFFER (PeerProtocol) with an offset inside the
 *     input. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static bool token_ok(const char *t, size_t n)
{
    if (n < 1 || n > WK_ILTP_TOKEN_MAX) return false;
    if (!(t[0] >= 'a' && t[0] <= 'z')) return false;
    for (size_t i = 1; i < n; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9'))) return false;
    return !(n == 8 && memcmp(t, "identity", 8) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    wk_iltp_offer o;
    wk_error err;
    wk_error_clear(&err);
    wk_code c = wk_iltp_offer_parse(text, size, &o, &err);
    if (c != WK_OK) {
        CHECK(c == err.code);
        CHECK(c == WK_ERR_ILTP_TOKEN || c == WK_ERR_ILTP_OFFER);
        CHECK(err.category == WK_CAT_PEER_PROTOCOL);
        CHECK(err.has_offset && err.offset <= size);
        return 0;
    }
    CHECK(o.text == text && o.len == size && o.count >= 1);

    size_t pos = 0, expect = 0, n;
    const char *t;
    const char *first = NULL;
    size_t first_len = 0;
    unsigned count = 0;
    while (wk_iltp_offer_next(&o, &pos, &t, &n)) {
        CHECK(t == text + expect); /* tokens are consecutive, comma-separated, borrowed */
        CHECK(token_ok(t, n));
        CHECK(expect + n == size || text[expect + n] == ',');
        CHECK(wk_iltp_offer_contains(&o, t, n));
        /* no duplicate among the earlier tokens */
        size_t q = 0, m;
        const char *u;
        while (wk_iltp_offer_next(&o, &q, &u, &m) && u < t) CHECK(!(m == n && memcmp(u, t, n) == 0));
        if (!first) {
            first = t;
            first_len = n;
        }
        count++;
        expect += n + 1;
    }
    CHECK(count == o.count);
    CHECK(expect == size + 1);

    const char *sel;
    size_t sel_len;
    wk_iltp_encoding e = wk_iltp_offer_select(&o, &o, &sel, &sel_len);
    CHECK(sel == first && sel_len == first_len);
    CHECK(e == wk_iltp_encoding_lookup(first, first_len));
    CHECK(e != WK_ILTP_IDENTITY);
    return 0;
}
