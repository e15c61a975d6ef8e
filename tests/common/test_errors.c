/* The error model: names, categories, truncation flags, formatting; and, for every code the
 * header declares (read from include/wirekit/common.h, given as the argument, so a code missing
 * from the table in error.c cannot hide): a name, a description, the category wk_error_set puts
 * in the error equal to the code table's (wk_code_category), never NONE; the printed name equal to
 * the identifier, except the codes released before issue 13 that print in the older
 * <MODULE>_ERR_<REST> form (frozen below: no new code may join them). */
#include "wk_test.h"
#include <wirekit/common.h>
#include <ctype.h>

/* The codes whose printed name is <MODULE>_ERR_<REST> for the identifier WK_ERR_<MODULE>_<REST>
 * (released names never change). A code added later prints as its identifier. */
static const int legacy_ranges[][2] = {
    {10, 12}, {100, 107}, {110, 115}, {120, 132}, {140, 144}, {300, 305}, {320, 326},
    {340, 347}, {360, 361}, {370, 370}, {380, 383}, {400, 408}, {500, 508}, {520, 527},
    {540, 544}, {560, 563}, {580, 580}, {700, 710}, {720, 723}, {740, 747}, {760, 760},
    {900, 903}};

static bool legacy(int code)
{
    for (size_t i = 0; i < sizeof legacy_ranges / sizeof legacy_ranges[0]; i++)
        if (code >= legacy_ranges[i][0] && code <= legacy_ranges[i][1]) return true;
    return false;
}

/* "WK_ERR_MOQT_TRUNCATED" -> "MOQT_ERR_TRUNCATED" */
static void legacy_name(const char *ident, char *out, size_t cap)
{
    const char *rest = ident + strlen("WK_ERR_");
    const char *us = strchr(rest, '_');
    if (!us) {
        snprintf(out, cap, "%s", ident);
        return;
    }
    snprintf(out, cap, "%.*s_ERR_%s", (int)(us - rest), rest, us + 1);
}

/* Every `WK_OK = 0` / `WK_ERR_X = N` line of the header; returns the count. */
static int header_codes(const char *path, char names[][64], int *codes, int cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (strncmp(p, "WK_OK", 5) != 0 && strncmp(p, "WK_ERR_", 7) != 0) continue;
        char id[64];
        int val;
        if (sscanf(p, "%63[A-Z0-9_] = %d", id, &val) != 2) continue;
        if (n < cap) {
            snprintf(names[n], 64, "%s", id);
            codes[n] = val;
        }
        n++;
    }
    fclose(f);
    return n;
}

static void test_every_code(const char *header)
{
    static char names[1000][64];
    static int codes[1000];
    int n = header_codes(header, names, codes, 1000);
    REQUIRE(n > 100 && n <= 1000);
    int listed = 0;
    for (int i = 0; i < n; i++) {
        wk_code c = (wk_code)codes[i];
        const char *name = wk_error_name(c);
        CHECKF(strcmp(name, "WK_ERR_UNKNOWN") != 0, "%s (%d) has no entry in the code table",
               names[i], codes[i]);
        const char *text = wk_strerror(c);
        CHECKF(text && *text && strcmp(text, "unknown error code") != 0, "%s has no description",
               names[i]);
        char want[80];
        if (legacy(codes[i])) legacy_name(names[i], want, sizeof want);
        else snprintf(want, sizeof want, "%s", names[i]);
        CHECKF(strcmp(name, want) == 0, "%s (%d) prints as %s, want %s", names[i], codes[i], name,
               want);
        if (c == WK_OK) continue;
        listed++;
        CHECKF(wk_code_category(c) != WK_CAT_NONE, "%s has no category", names[i]);
        /* the category comes from the table, whatever the error held before */
        for (int before = WK_CAT_NONE; before <= WK_CAT_USAGE; before++) {
            wk_error e;
            memset(&e, 0, sizeof e);
            e.category = (wk_category)before;
            wk_error_set(&e, c, 7, "x");
            CHECKF(e.code == c && e.category == wk_code_category(c), "%s: category %s after set",
                   names[i], wk_category_name(e.category));
            wk_error_set(&e, c, WK_NO_OFFSET, NULL);
            CHECKF(e.category == wk_code_category(c) && !strcmp(e.msg, text), "%s without a message",
                   names[i]);
        }
    }
    /* and the table names nothing the header does not declare */
    int named = 0;
    for (int c = 1; c < WK_CODE_LIMIT_; c++)
        if (strcmp(wk_error_name((wk_code)c), "WK_ERR_UNKNOWN") != 0) named++;
    CHECKF(named == listed, "the table names %d codes, the header declares %d", named, listed);
}

/* wk_allocator_zalloc: zeroed bytes through the allocator (NULL: malloc/free); a refusal is
 * WK_ERR_NOMEM (Integration) with the caller's message. */
static void test_zalloc(void)
{
    wk_error e;
    unsigned char *p = wk_allocator_zalloc(NULL, 100, "x", &e);
    REQUIRE(p);
    int nonzero = 0;
    for (int i = 0; i < 100; i++) nonzero += p[i] != 0;
    CHECK(nonzero == 0);
    free(p);
    wk_alloc_counter c = {0, 0, 64, 0};
    wk_allocator a = wk_counting_allocator(&c);
    p = wk_allocator_zalloc(&a, 64, "x", &e);
    CHECK(p && c.current == 64 && c.count == 1);
    wk_error_clear(&e);
    CHECK(wk_allocator_zalloc(&a, 1, "the thing", &e) == NULL && e.code == WK_ERR_NOMEM &&
          e.category == WK_CAT_INTEGRATION && !e.has_offset && strcmp(e.msg, "the thing") == 0);
    CHECK(wk_allocator_zalloc(&a, 1, NULL, NULL) == NULL && c.current == 64);
    a.free(a.opaque, p);
    CHECK(c.current == 0);
    /* wk_allocator_alloc: the same, not zeroed */
    p = wk_allocator_alloc(&a, 64, "x", &e);
    CHECK(p && c.current == 64 && c.count == 2);
    wk_error_clear(&e);
    CHECK(wk_allocator_alloc(&a, 1, "the other thing", &e) == NULL && e.code == WK_ERR_NOMEM &&
          e.category == WK_CAT_INTEGRATION && strcmp(e.msg, "the other thing") == 0);
    a.free(a.opaque, p);
    CHECK(c.current == 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_errors include/wirekit/common.h\n");
        return 2;
    }
    test_every_code(argv[1]);
    test_zalloc();
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
    CHECK(strcmp(wk_strerror((wk_code)999), "unknown error code") == 0);
    CHECK(wk_code_category((wk_code)999) == WK_CAT_INTEGRATION);
    CHECK(wk_error_set(NULL, WK_ERR_ARG, 0, "x") == WK_ERR_ARG);
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
