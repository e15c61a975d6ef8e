/* The error model: names, categories, truncation flags, formatting. */
#include "wk_test.h"
#include <wirekit/common.h>

int main(void)
{
    wk_error e;
    CHECK(wk_error_set(&e, WK_ERR_ILTP_ZSTD_HEADER, 0, "descriptor %d", 32) == WK_ERR_ILTP_ZSTD_HEADER);
    CHECK(e.category == WK_CAT_PEER_PROTOCOL && e.has_offset && e.offset == 0);
    char line[200];
    CHECK(strcmp(wk_error_format(&e, line, sizeof line), "ILTP_ERR_ZSTD_HEADER at offset 0: descriptor 32") == 0);
    wk_error_set(&e, WK_ERR_NOMEM, WK_NO_OFFSET, NULL);
    CHECK(!e.has_offset && e.category == WK_CAT_INTEGRATION);
    CHECK(strncmp(wk_error_format(&e, line, sizeof line), "WK_ERR_NOMEM: ", 14) == 0);
    CHECK(wk_code_is_truncation(WK_ERR_ILTP_TRUNCATED));
    CHECK(!wk_code_is_truncation(WK_ERR_ILTP_ZSTD_HEADER));
    CHECK(wk_code_category(WK_ERR_USAGE) == WK_CAT_USAGE);
    CHECK(wk_code_category(WK_ERR_ILTP_ENCODE) == WK_CAT_INTEGRATION);
    CHECK(strcmp(wk_error_name((wk_code)999), "WK_ERR_UNKNOWN") == 0);
    CHECK(strcmp(wk_category_name(WK_CAT_PEER_PROTOCOL), "PeerProtocol") == 0);
    /* every code in every range has a distinct name */
    const char *seen[1000] = {0};
    int named = 0;
    for (int c = 1; c < 1000; c++) {
        const char *n = wk_error_name((wk_code)c);
        if (strcmp(n, "WK_ERR_UNKNOWN") == 0) continue;
        named++;
        for (int k = 1; k < c; k++) CHECK(!seen[k] || strcmp(seen[k], n) != 0);
        seen[c] = n;
        CHECK(wk_code_category((wk_code)c) != WK_CAT_NONE);
    }
    CHECK(named >= 20);
    /* a tiny buffer is still terminated */
    CHECK(strlen(wk_error_format(&e, line, 5)) == 4);
    return wk_test_summary("errors");
}
