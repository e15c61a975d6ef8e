/* libFuzzer target: Lace-060 address strings. An accepted address formats canonically and parses
 * back to the same fields; a rejection is ILTP_ERR_ADDRESS with an offset inside the input. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wk_iltp_address a, b;
    wk_error e;
    wk_code c = wk_iltp_address_parse((const char *)data, size, &a, &e);
    if (c != WK_OK) {
        CHECK(c == WK_ERR_ILTP_ADDRESS && e.code == c && e.has_offset && e.offset <= size);
        return 0;
    }
    char canon[WK_ILTP_ADDRESS_MAX + 64];
    size_t n = 0;
    CHECK(wk_iltp_address_size(&a, &n, &e) == WK_OK && n > 0);
    wk_out co = {(uint8_t *)canon, sizeof canon, 0};
    CHECK(wk_iltp_address_encode(&a, &co, &e) == WK_DONE && co.pos == n && memchr(canon, 0, n) == NULL);
    CHECK(wk_iltp_address_parse(canon, n, &b, &e) == WK_OK);
    CHECK(a.scheme == b.scheme && a.host_kind == b.host_kind && a.port == b.port);
    CHECK(strcmp(a.host, b.host) == 0 && strcmp(a.path, b.path) == 0);
    char again[WK_ILTP_ADDRESS_MAX + 64];
    wk_out ao = {(uint8_t *)again, sizeof again, 0};
    CHECK(wk_iltp_address_encode(&b, &ao, &e) == WK_DONE && ao.pos == n && memcmp(again, canon, n) == 0);
    return 0;
}
