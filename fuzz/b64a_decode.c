/* libFuzzer target: strict B64A decoding (wk_b64a_decode) and encoding.
 *
 * The whole input is B64A text. Checks:
 *   - WK_OK: the decoded length is what the text length implies, and re-encoding gives back the
 *     input exactly (strict decoding accepts only canonical text); one byte less of output room
 *     is WK_ERR_ARG.
 *   - an error is one of the B64A codes (PeerProtocol) with an offset inside the input.
 *   - independently, the input taken as bytes encodes to text that decodes back to it. */
#include <wirekit/common.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t cap = size + 1;
    uint8_t *dec = malloc(cap);
    char *txt = malloc(wk_b64a_encoded_len(size) + 1);
    CHECK(dec && txt);

    wk_error err;
    wk_error_clear(&err);
    size_t got = (size_t)-1;
    wk_code c = wk_b64a_decode(text, size, dec, cap, &got, &err);
    if (c == WK_OK) {
        CHECK(got == size / 4 * 3 + (size % 4 ? size % 4 - 1 : 0));
        CHECK(wk_b64a_encoded_len(got) == size);
        size_t m = wk_b64a_encode(dec, got, txt);
        CHECK(m == size && memcmp(txt, text, size) == 0);
        if (got > 0) {
            size_t got2 = 0;
            CHECK(wk_b64a_decode(text, size, dec, got - 1, &got2, &err) == WK_ERR_ARG);
        }
    } else {
        CHECK(c == err.code);
        CHECK(c == WK_ERR_B64A_LENGTH || c == WK_ERR_B64A_ALPHABET || c == WK_ERR_B64A_TAIL);
        CHECK(err.category == WK_CAT_PEER_PROTOCOL);
        CHECK(err.has_offset && err.offset <= size);
    }

    /* bytes -> text -> bytes */
    size_t m = wk_b64a_encode(data, size, txt);
    CHECK(m == wk_b64a_encoded_len(size));
    size_t back = 0;
    CHECK(wk_b64a_decode(txt, m, dec, cap, &back, &err) == WK_OK);
    CHECK(back == size && (size == 0 || memcmp(dec, data, size) == 0));

    free(dec);
    free(txt);
    return 0;
}
