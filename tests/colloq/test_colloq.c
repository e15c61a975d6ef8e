/* colloq units: compile errors with their JSON paths, binary decoder edge cases, JSON integer
 * extremes, encoders at every output capacity, prefaces, the checker, re-encoding every valid
 * transcript into all three encodings, and zero allocations per binary frame (malloc, calloc and
 * realloc wrapped at link time, counted on the calling thread by tests/wk_alloc_probe.h).
 * Usage: test_colloq FIXTURES_DIR */
#include "wk_test.h"
#include <wirekit/colloq.h>
#include <math.h>

#include "wk_alloc_wrap.h"
#include "wk_contract.h"


/* The trace line of f written into buf (cap bytes, NUL-terminated after it): its length, SIZE_MAX
 * when the encoder does not answer WK_DONE or disagrees with its _size. */
static size_t frame_line(const wk_colloq_plan *plan, const wk_colloq_frame *f, char *buf, size_t cap)
{
    wk_error err;
    size_t size = 0;
    wk_out o = {(uint8_t *)buf, cap - 1, 0};
    if (wk_colloq_trace_frame_encode(plan, f, &o, &err) != WK_DONE) return SIZE_MAX;
    buf[o.pos] = '\0';
    if (wk_colloq_trace_frame_size(plan, f, &size, &err) != WK_OK || size != o.pos) return SIZE_MAX;
    return o.pos;
}

/* Every field of two wk_errors (a failed session reports its failure again unchanged). */
static bool same_error(const wk_error *a, const wk_error *b)
{
    return a->code == b->code && a->category == b->category && a->has_offset == b->has_offset &&
           a->offset == b->offset && strcmp(a->msg, b->msg) == 0;
}

static const char *dir;

static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t n = 0;
    unsigned char *b = wk_test_read_file(path, &n);
    if (!b) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    b = realloc(b, n + 1);
    b[n] = 0;
    if (len) *len = n;
    return (char *)b;
}

static wk_colloq_plan *compile_str(const char *text)
{
    wk_colloq_plan *p = NULL;
    wk_error err;
    if (wk_colloq_plan_compile(text, strlen(text), NULL, &p, &err) != WK_OK) {
        char buf[256];
        fprintf(stderr, "compile: %s\n", wk_error_format(&err, buf, sizeof buf));
    }
    return p;
}

static wk_colloq_plan *plan_file(const char *rel)
{
    char *t = slurp(rel, NULL);
    wk_colloq_plan *p = compile_str(t);
    free(t);
    return p;
}

/* ------------------------------------------------------------------------------------------ */
static void test_names(void)
{
    for (int i = 0; i < WK_COLLOQ_TYPE_COUNT; i++) {
        wk_colloq_type t;
        const char *n = wk_colloq_type_name((wk_colloq_type)i);
        CHECK(n && wk_colloq_type_parse(n, strlen(n), &t) && t == (wk_colloq_type)i);
    }
    CHECK(wk_colloq_type_width_get(WK_COLLOQ_U16) == 2 && wk_colloq_type_width_get(WK_COLLOQ_BYTES) == 0);
    wk_colloq_wire w;
    CHECK(wk_colloq_wire_parse("compact", &w) && w == WK_COLLOQ_WIRE_COMPACT);
    CHECK(!wk_colloq_wire_parse("json", &w));
    static const char *const kinds[] = {"unknown-transition", "wrong-state", "wrong-sender",
                                        "bad-sequence", "malformed-payload", "payload-too-large",
                                        "truncated", "after-final"};
    for (int i = 0; i < 8; i++) {
        wk_code c = wk_colloq_failure_parse(kinds[i], strlen(kinds[i]));
        CHECK(c == (wk_code)(WK_ERR_COLLOQ_UNKNOWN_TRANSITION + i));
        CHECK(strcmp(wk_colloq_failure_name(c), kinds[i]) == 0);
        CHECK(wk_colloq_code_is_failure(c));
        CHECK(wk_code_is_truncation(c) == (c == WK_ERR_COLLOQ_TRUNCATED));
        CHECK(strcmp(wk_error_name(c), "WK_ERR_UNKNOWN") != 0);
    }
    CHECK(wk_colloq_failure_name(WK_ERR_COLLOQ_PREFACE) == NULL);
    CHECK(wk_colloq_failure_parse("truncate", 8) == WK_OK);
    CHECK(wk_code_category(WK_ERR_COLLOQ_SCHEMA) == WK_CAT_USAGE);
    CHECK(wk_code_category(WK_ERR_COLLOQ_BAD_SEQUENCE) == WK_CAT_PEER_PROTOCOL);
}

/* ------------------------------------------------------------------------------------------ */
static char *base_conv;

/* base conversation with old replaced by new_ (must occur) */
static char *variant(const char *old, const char *new_)
{
    const char *at = strstr(base_conv, old);
    if (!at) {
        fprintf(stderr, "variant: \"%s\" not in the base conversation\n", old);
        exit(1);
    }
    size_t a = (size_t)(at - base_conv), ol = strlen(old), nl = strlen(new_), bl = strlen(base_conv);
    char *s = malloc(bl - ol + nl + 1);
    memcpy(s, base_conv, a);
    memcpy(s + a, new_, nl);
    memcpy(s + a + nl, at + ol, bl - a - ol + 1);
    return s;
}

static void expect_compile_error(const char *text, wk_code code, const char *path, bool owned)
{
    wk_colloq_plan *p = (wk_colloq_plan *)1;
    wk_error err;
    wk_code rc = wk_colloq_plan_compile(text, strlen(text), NULL, &p, &err);
    CHECKF(rc == code, "expected %s, got %s: %s", wk_error_name(code), wk_error_name(rc), err.msg);
    CHECK(p == NULL);
    if (path) {
        size_t pl = strlen(path);
        CHECKF(strncmp(err.msg, path, pl) == 0 && err.msg[pl] == ':', "path \"%s\" in \"%s\"", path, err.msg);
    }
    if (owned) free((char *)text);
}

static void test_compile_errors(void)
{
    base_conv = slurp("token-stream.json", NULL);
    wk_colloq_plan *ok = compile_str(base_conv);
    REQUIRE(ok != NULL);
    CHECK(ok->transition_count == 3 && ok->message_count == 3);
    /* ids by (from, message, sender): Idle/Prompt, Streaming/End, Streaming/Token */
    CHECK(strcmp(ok->messages[ok->transitions[0].message].name, "Prompt") == 0);
    CHECK(strcmp(ok->messages[ok->transitions[1].message].name, "End") == 0);
    CHECK(strcmp(ok->messages[ok->transitions[2].message].name, "Token") == 0);
    const wk_colloq_message *tok = &ok->messages[wk_colloq_plan_message_find(ok, "Token", 5)];
    CHECK(tok->field_count == 3 && tok->optional_count == 1 && tok->bitmap_bytes == 1);
    CHECK(tok->fields[0].width == 4 && tok->fields[1].width == 0 && tok->fields[2].presence_bit == 0);
    CHECK(tok->max_payload == 65536 && tok->fixed_bytes == 5);
    CHECK(strlen(ok->identity) == 64);
    CHECK(wk_colloq_message_field_find(tok, "text", 4) == 1 && wk_colloq_message_field_find(tok, "tex", 3) == -1);
    CHECK(wk_colloq_plan_transition_find(ok, 1, (uint32_t)wk_colloq_plan_message_find(ok, "Token", 5), 1) == 2);
    CHECK(wk_colloq_plan_transition_find(ok, 1, (uint32_t)wk_colloq_plan_message_find(ok, "Token", 5), 0) == WK_COLLOQ_NO_TRANSITION);
    wk_colloq_plan_destroy(ok);

    expect_compile_error("{", WK_ERR_COLLOQ_JSON, "$", false);
    expect_compile_error("{\"colloq\":NaN}", WK_ERR_COLLOQ_JSON, "$", false);
    expect_compile_error("[]", WK_ERR_COLLOQ_SCHEMA, "$", false);
    expect_compile_error(variant("\"colloq\": \"conversation/v0\",", ""), WK_ERR_COLLOQ_SCHEMA, "$.colloq", true);
    expect_compile_error(variant("conversation/v0", "conversation/v1"), WK_ERR_COLLOQ_SCHEMA, "$.colloq", true);
    expect_compile_error(variant("\"name\": \"token-stream\",", "\"name\": \"t\", \"extra\": 1,"),
                         WK_ERR_COLLOQ_SCHEMA, "$.extra", true);
    expect_compile_error(variant("\"name\": \"token-stream\"", "\"name\": \"\""), WK_ERR_COLLOQ_NAME, "$.name", true);
    expect_compile_error(variant("[\"client\", \"server\"]", "\"client\""), WK_ERR_COLLOQ_SCHEMA, "$.roles", true);
    expect_compile_error(variant("[\"client\", \"server\"]", "[]"), WK_ERR_COLLOQ_STRUCTURE, "$.roles", true);
    expect_compile_error(variant("[\"client\", \"server\"]", "[\"9lives\", \"server\"]"), WK_ERR_COLLOQ_NAME,
                         "$.roles[0]", true);
    expect_compile_error(variant("[\"client\", \"server\"]", "[\"client\", \"client\"]"), WK_ERR_COLLOQ_DUPLICATE,
                         "$.roles[1]", true);
    expect_compile_error(variant("\"Idle\", \"Streaming\", \"Done\"]", "\"Idle\", \"Streaming\", 7]"),
                         WK_ERR_COLLOQ_SCHEMA, "$.states[2]", true);
    expect_compile_error(variant("\"initial\": \"Idle\"", "\"initial\": \"Nowhere\""), WK_ERR_COLLOQ_UNKNOWN_STATE,
                         "$.initial", true);
    expect_compile_error(variant("\"final\": [\"Done\"]", "\"final\": [\"Gone\"]"), WK_ERR_COLLOQ_UNKNOWN_STATE,
                         "$.final[0]", true);
    expect_compile_error(variant("\"final\": [\"Done\"]", "\"final\": [\"Done\", \"Done\"]"), WK_ERR_COLLOQ_DUPLICATE,
                         "$.final[1]", true);
    expect_compile_error(variant("\"max_tokens\", \"type\": \"u32\"", "\"max_tokens\", \"type\": \"u128\""),
                         WK_ERR_COLLOQ_UNKNOWN_TYPE, "$.messages.Prompt[1].type", true);
    expect_compile_error(variant("\"max_tokens\", \"type\": \"u32\"", "\"max-tokens\", \"type\": \"u32\""),
                         WK_ERR_COLLOQ_NAME, "$.messages.Prompt[1].name", true);
    expect_compile_error(variant("\"max_tokens\", \"type\": \"u32\"", "\"text\", \"type\": \"u32\""),
                         WK_ERR_COLLOQ_DUPLICATE, "$.messages.Prompt[1].name", true);
    expect_compile_error(variant("\"type\": \"f32\", \"optional\": true", "\"type\": \"f32\", \"optional\": 1"),
                         WK_ERR_COLLOQ_SCHEMA, "$.messages.Token[2].optional", true);
    expect_compile_error(variant("{\"name\": \"text\", \"type\": \"string\"}", "{\"name\": \"text\"}"),
                         WK_ERR_COLLOQ_SCHEMA, "$.messages.Prompt[0].type", true);
    expect_compile_error(variant("{\"name\": \"text\", \"type\": \"string\"}", "{\"name\": \"text\", \"type\": \"string\", \"doc\": \"x\"}"),
                         WK_ERR_COLLOQ_SCHEMA, "$.messages.Prompt[0].doc", true);
    expect_compile_error(variant("\"End\":    [", "\"End-2\":    ["), WK_ERR_COLLOQ_NAME, "$.messages.End-2", true);
    expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]",
                                 "\"End\": {\"fields\": [], \"max_payload\": 0}"),
                         WK_ERR_COLLOQ_LIMIT, "$.messages.End.max_payload", true);
    expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]",
                                 "\"End\": {\"fields\": [], \"max_payload\": 16777217}"),
                         WK_ERR_COLLOQ_LIMIT, "$.messages.End.max_payload", true);
    expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]",
                                 "\"End\": {\"fields\": [{\"name\": \"a\", \"type\": \"u64\"}], \"max_payload\": 7}"),
                         WK_ERR_COLLOQ_LIMIT, "$.messages.End", true);
    expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]",
                                 "\"End\": {\"fields\": [], \"ceiling\": 7}"),
                         WK_ERR_COLLOQ_SCHEMA, "$.messages.End.ceiling", true);
    expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]",
                                 "\"End\": \"none\""),
                         WK_ERR_COLLOQ_SCHEMA, "$.messages.End", true);
    {
        /* 65 fields */
        char big[4096] = "\"End\": [";
        for (int i = 0; i < 65; i++) {
            char f[64];
            snprintf(f, sizeof f, "%s{\"name\": \"f%d\", \"type\": \"u8\"}", i ? "," : "", i);
            strcat(big, f);
        }
        strcat(big, "]");
        expect_compile_error(variant("\"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ]", big),
                             WK_ERR_COLLOQ_LIMIT, "$.messages.End", true);
    }
    expect_compile_error(variant("\"message\": \"End\", \"sender\": \"server\", \"to\": \"Done\"",
                                 "\"message\": \"End\", \"sender\": \"server\", \"to\": \"Nowhere\""),
                         WK_ERR_COLLOQ_UNKNOWN_STATE, "$.transitions[2].to", true);
    expect_compile_error(variant("\"message\": \"Token\"", "\"message\": \"Tok\""), WK_ERR_COLLOQ_UNKNOWN_MESSAGE,
                         "$.transitions[1].message", true);
    expect_compile_error(variant("\"sender\": \"client\"", "\"sender\": \"admin\""), WK_ERR_COLLOQ_UNKNOWN_ROLE,
                         "$.transitions[0].sender", true);
    expect_compile_error(variant("{\"from\": \"Idle\",", "{\"from\": \"Limbo\","), WK_ERR_COLLOQ_UNKNOWN_STATE,
                         "$.transitions[0].from", true);
    expect_compile_error(variant("{\"from\": \"Idle\",", "{\"id\": 0, \"from\": \"Idle\","), WK_ERR_COLLOQ_SCHEMA,
                         "$.transitions[0].id", true);
    expect_compile_error(variant("\"to\": \"Done\"} ]", "\"to\": \"Done\"},\n {\"from\": \"Streaming\", \"message\": \"Token\", \"sender\": \"server\", \"to\": \"Done\"} ]"),
                         WK_ERR_COLLOQ_DUPLICATE, "$.transitions[3]", true);
    expect_compile_error(variant("\"to\": \"Done\"} ]", "\"to\": \"Done\"},\n {\"from\": \"Done\", \"message\": \"Token\", \"sender\": \"server\", \"to\": \"Done\"} ]"),
                         WK_ERR_COLLOQ_STRUCTURE, "$.transitions[3].from", true);
    expect_compile_error(variant("\"to\": \"Done\"} ]", "\"to\": \"Done\"}, 5 ]"), WK_ERR_COLLOQ_SCHEMA,
                         "$.transitions[3]", true);
    {
        const char *at = strstr(base_conv, "\"transitions\"");
        size_t n = (size_t)(at - base_conv);
        char *t = malloc(n + 40);
        memcpy(t, base_conv, n);
        strcpy(t + n, "\"transitions\": [] }");
        expect_compile_error(t, WK_ERR_COLLOQ_STRUCTURE, "$.transitions", true);
    }
    /* a conversation with a NUL inside a string is refused, not truncated */
    expect_compile_error(variant("\"name\": \"token-stream\"", "\"name\": \"a\\u0000b\""), WK_ERR_COLLOQ_NAME,
                         "$.name", true);
}

/* ------------------------------------------------------------------------------------------ */
static wk_colloq_plan *ts;  /* token-stream */
static wk_colloq_plan *moe; /* moe-router */
static uint32_t T_PROMPT = 0, T_END = 1, T_TOKEN = 2;

static size_t enc(const wk_colloq_plan *p, wk_colloq_wire w, const wk_colloq_frame *f, uint8_t *buf, size_t cap)
{
    wk_out out = {buf, cap, 0};
    wk_error err;
    wk_result r = wk_colloq_frame_encode(p, w, f, &out, &err);
    if (r != WK_DONE) fprintf(stderr, "encode: %d %s\n", (int)r, err.msg);
    return r == WK_DONE ? out.pos : 0;
}

static void token(wk_colloq_frame *f, uint64_t seq, uint32_t index, const char *text, bool lp, double logprob)
{
    wk_colloq_frame_init(f, ts, T_TOKEN, seq);
    f->fields[0].present = true;
    f->fields[0].as.u = index;
    f->fields[1].present = true;
    f->fields[1].as.s.ptr = (const uint8_t *)text;
    f->fields[1].as.s.len = strlen(text);
    f->fields[2].present = lp;
    f->fields[2].as.f = logprob;
}

static wk_result bdec(const wk_colloq_plan *p, const uint8_t *b, size_t n, wk_colloq_frame *f, size_t *pos, wk_error *err)
{
    wk_in in = {b, n, 0};
    wk_result r = wk_colloq_binary_decode(p, &in, f, err);
    *pos = in.pos;
    return r;
}

/* A Token frame's bytes with the given payload. */
static size_t token_raw(uint8_t *b, uint64_t seq, const uint8_t *payload, size_t plen)
{
    size_t n = 0;
    b[n++] = (uint8_t)T_TOKEN;
    b[n++] = (uint8_t)seq;
    b[n++] = (uint8_t)plen;
    if (plen) memcpy(b + n, payload, plen);
    return n + plen;
}

static void expect_payload_error(const uint8_t *payload, size_t plen, wk_code code, const char *what)
{
    uint8_t b[256];
    size_t n = token_raw(b, 1, payload, plen), pos;
    wk_colloq_frame f;
    wk_error err;
    wk_result r = bdec(ts, b, n, &f, &pos, &err);
    CHECKF(r == WK_DONE && pos == n, "%s: decodes whole (r=%d)", what, (int)r);
    CHECKF(f.payload_error == code, "%s: payload_error %s", what, wk_error_name(f.payload_error));
    CHECK(f.payload_error_reason != NULL);
    /* the checker reports it after the header checks */
    wk_colloq_session s;
    wk_colloq_session_init(&s, ts);
    s.state = ts->transitions[T_TOKEN].from;
    s.next_seq = 1;
    CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == code);
    CHECK(s.failure == code && s.failure_seq == 1);
}

static void test_binary_decoder(void)
{
    uint8_t b[512];
    wk_colloq_frame f, g;
    wk_error err;
    size_t pos;
    token(&f, 1, 7, "h\xc3\xa9", true, 0.5);
    size_t n = enc(ts, WK_COLLOQ_WIRE_BINARY, &f, b, sizeof b);
    /* 02 01 0d | 01 | 07000000 | 03 68 c3 a9 | 0000003f */
    static const uint8_t want[] = {0x02, 0x01, 0x0d, 0x01, 0x07, 0, 0, 0, 0x03, 0x68, 0xc3, 0xa9, 0, 0, 0, 0x3f};
    CHECK(n == sizeof want && memcmp(b, want, n) == 0);
    /* every truncation point: need input, nothing consumed */
    for (size_t k = 0; k < n; k++) {
        wk_result r = bdec(ts, b, k, &g, &pos, &err);
        CHECKF(r == WK_NEED_INPUT && pos == 0, "prefix %zu", k);
    }
    /* whole, then with the next frame's bytes behind it */
    CHECK(bdec(ts, b, n, &g, &pos, &err) == WK_DONE && pos == n && g.payload_error == WK_OK);
    CHECK(g.transition == T_TOKEN && g.seq == 1 && g.fields[0].as.u == 7 && g.fields[2].present &&
          g.fields[2].as.f == 0.5);
    CHECK(g.fields[1].as.s.ptr == b + 9 && g.fields[1].as.s.len == 3); /* borrowed */
    memcpy(b + n, b, n);
    CHECK(bdec(ts, b, 2 * n, &g, &pos, &err) == WK_DONE && pos == n);

    /* header: non-minimal, too long, overflow */
    static const uint8_t nonmin[] = {0x82, 0x00, 0x01, 0x00};
    CHECK(bdec(ts, nonmin, sizeof nonmin, &g, &pos, &err) == WK_ERROR && err.code == WK_ERR_COLLOQ_MALFORMED_PAYLOAD &&
          err.offset == 1 && pos == 0);
    static const uint8_t nonmin_seq[] = {0x02, 0x81, 0x80, 0x00, 0x00};
    CHECK(bdec(ts, nonmin_seq, sizeof nonmin_seq, &g, &pos, &err) == WK_ERROR && err.offset == 3);
    uint8_t eleven[16];
    eleven[0] = 0x02;
    memset(eleven + 1, 0x80, 10);
    eleven[11] = 0x01;
    CHECK(bdec(ts, eleven, 12, &g, &pos, &err) == WK_ERROR);
    uint8_t over[16];
    over[0] = 0x02;
    memset(over + 1, 0xFF, 9);
    over[10] = 0x02; /* bit 64 */
    over[11] = 0x00;
    CHECK(bdec(ts, over, 12, &g, &pos, &err) == WK_ERROR);
    over[10] = 0x01; /* 2^64-1 exactly */
    CHECK(bdec(ts, over, 11, &g, &pos, &err) == WK_NEED_INPUT);
    over[11] = 0x00; /* payload_len 0 */
    CHECK(bdec(ts, over, 12, &g, &pos, &err) == WK_DONE && g.seq == UINT64_MAX && pos == 12);
    CHECK(g.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD); /* Token needs its bitmap */

    /* id outside the table: header consumed, unknown-transition at check */
    static const uint8_t unknown[] = {0x03, 0x00, 0x05, 1, 2, 3, 4, 5};
    CHECK(bdec(ts, unknown, sizeof unknown, &g, &pos, &err) == WK_DONE && pos == 3 &&
          g.transition == WK_COLLOQ_NO_TRANSITION);
    wk_colloq_session s;
    wk_colloq_session_init(&s, ts);
    CHECK(wk_colloq_session_check(&s, &g, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_UNKNOWN_TRANSITION);
    static const uint8_t huge_id[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00};
    CHECK(bdec(ts, huge_id, sizeof huge_id, &g, &pos, &err) == WK_DONE && g.transition == WK_COLLOQ_NO_TRANSITION);

    /* payload_len above the ceiling: refused without waiting for (or slicing) the payload */
    static const uint8_t big[] = {0x01, 0x00, 0x81, 0x80, 0x04}; /* End, len 65537 */
    CHECK(bdec(ts, big, sizeof big, &g, &pos, &err) == WK_DONE && pos == sizeof big &&
          g.payload_error == WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE);
    static const uint8_t at_ceiling[] = {0x01, 0x00, 0x80, 0x80, 0x04}; /* len 65536: waits */
    CHECK(bdec(ts, at_ceiling, sizeof at_ceiling, &g, &pos, &err) == WK_NEED_INPUT && pos == 0);
    wk_colloq_plan *ceil = plan_file("token-stream-ceiling.json");
    REQUIRE(ceil != NULL);
    static const uint8_t c1025[] = {0x01, 0x00, 0x81, 0x08}; /* len 1025 > 1024 */
    CHECK(bdec(ceil, c1025, sizeof c1025, &g, &pos, &err) == WK_DONE && g.payload_error == WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE);
    static const uint8_t c1024[] = {0x01, 0x00, 0x80, 0x08};
    CHECK(bdec(ceil, c1024, sizeof c1024, &g, &pos, &err) == WK_NEED_INPUT);
    wk_colloq_plan_destroy(ceil);

    /* payload content */
    static const uint8_t p_nonmin_len[] = {0x00, 7, 0, 0, 0, 0x81, 0x00, 'a'};
    expect_payload_error(p_nonmin_len, sizeof p_nonmin_len, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "non-minimal string length");
    static const uint8_t p_len_past[] = {0x00, 7, 0, 0, 0, 0x05, 'a', 'b'};
    expect_payload_error(p_len_past, sizeof p_len_past, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "length past the payload");
    static const uint8_t p_len_cut[] = {0x00, 7, 0, 0, 0, 0x80};
    expect_payload_error(p_len_cut, sizeof p_len_cut, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "payload ends inside a length");
    static const uint8_t p_utf8[] = {0x00, 7, 0, 0, 0, 0x02, 0xc3, 0x28};
    expect_payload_error(p_utf8, sizeof p_utf8, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "bad UTF-8");
    static const uint8_t p_overlong[] = {0x00, 7, 0, 0, 0, 0x02, 0xc0, 0x80};
    expect_payload_error(p_overlong, sizeof p_overlong, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "overlong UTF-8");
    static const uint8_t p_surrogate[] = {0x00, 7, 0, 0, 0, 0x03, 0xed, 0xa0, 0x80};
    expect_payload_error(p_surrogate, sizeof p_surrogate, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "surrogate");
    static const uint8_t p_trailing[] = {0x00, 7, 0, 0, 0, 0x01, 'a', 0x00};
    expect_payload_error(p_trailing, sizeof p_trailing, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "trailing bytes");
    static const uint8_t p_bit[] = {0x02, 7, 0, 0, 0, 0x01, 'a'};
    expect_payload_error(p_bit, sizeof p_bit, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "presence bit beyond");
    expect_payload_error(NULL, 0, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "empty payload (no bitmap)");
    static const uint8_t p_fixed_cut[] = {0x00, 7, 0};
    expect_payload_error(p_fixed_cut, sizeof p_fixed_cut, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "inside a fixed field");
    static const uint8_t p_nan[] = {0x01, 7, 0, 0, 0, 0x01, 'a', 0x00, 0x00, 0xc0, 0x7f};
    expect_payload_error(p_nan, sizeof p_nan, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "NaN f32");
    static const uint8_t p_inf[] = {0x01, 7, 0, 0, 0, 0x01, 'a', 0x00, 0x00, 0x80, 0xff};
    expect_payload_error(p_inf, sizeof p_inf, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "-inf f32");
    static const uint8_t p_ok_absent[] = {0x00, 7, 0, 0, 0, 0x00};
    {
        uint8_t bb[64];
        size_t bn = token_raw(bb, 1, p_ok_absent, sizeof p_ok_absent);
        CHECK(bdec(ts, bb, bn, &g, &pos, &err) == WK_DONE && g.payload_error == WK_OK && !g.fields[2].present &&
              g.fields[1].as.s.len == 0);
    }
    /* bool 2 and 0xFF in a moe ExpertResult; sign extension of i8/i16/i32 */
    {
        int32_t mi = wk_colloq_plan_message_find(moe, "ExpertResult", 12);
        int32_t st = wk_colloq_plan_state_find(moe, "Gathering", 9);
        uint32_t t = wk_colloq_plan_transition_find(moe, (uint32_t)st, (uint32_t)mi, WK_COLLOQ_SENDER_TRANSCRIPT);
        REQUIRE(t != WK_COLLOQ_NO_TRANSITION);
        /* bitmap(1): bias(bit 3) + load(bit 4); expert u16, ok bool, latency u32, bias i16, load i32 */
        uint8_t pl[] = {0x18, 0x01, 0x00, 0x01, 5, 0, 0, 0, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0xFF};
        uint8_t bb[64];
        size_t bn = 0;
        bb[bn++] = (uint8_t)t;
        bb[bn++] = 0;
        bb[bn++] = sizeof pl;
        memcpy(bb + bn, pl, sizeof pl);
        bn += sizeof pl;
        CHECK(bdec(moe, bb, bn, &g, &pos, &err) == WK_DONE && g.payload_error == WK_OK);
        CHECK(g.fields[1].as.b == true && g.fields[6].as.i == -32768 && g.fields[7].as.i == -1);
        bb[3 + 3] = 0x02;
        CHECK(bdec(moe, bb, bn, &g, &pos, &err) == WK_DONE && g.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD &&
              g.payload_error_offset == 6);
        bb[3 + 3] = 0xFF;
        CHECK(bdec(moe, bb, bn, &g, &pos, &err) == WK_DONE && g.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    }
    /* header checks come before the payload: bad sequence + bad payload is bad-sequence */
    {
        uint8_t bb[64];
        size_t bn = token_raw(bb, 9, p_utf8, sizeof p_utf8);
        CHECK(bdec(ts, bb, bn, &g, &pos, &err) == WK_DONE);
        wk_colloq_session_init(&s, ts);
        s.state = 1;
        s.next_seq = 1;
        CHECK(wk_colloq_session_check(&s, &g, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_BAD_SEQUENCE);
    }
}

/* ------------------------------------------------------------------------------------------ */
static wk_code cdec(wk_colloq_decoder *d, const char *line, wk_colloq_frame *f, wk_error *err)
{
    return wk_colloq_decoder_decode_line(d, line, strlen(line), f, err);
}

static void test_json_extremes(void)
{
    wk_error err;
    wk_colloq_frame f;
    wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){moe, WK_COLLOQ_WIRE_COMPACT, NULL}, &err);
    REQUIRE(d != NULL);
    uint32_t R = 0; /* Idle/Request sorts first? find it */
    R = wk_colloq_plan_transition_find(moe, (uint32_t)wk_colloq_plan_state_find(moe, "Idle", 4),
                            (uint32_t)wk_colloq_plan_message_find(moe, "Request", 7), WK_COLLOQ_SENDER_TRANSCRIPT);
    char line[512];
#define REQ(extra_fields) (snprintf(line, sizeof line, "{\"t\":%u,\"seq\":0,\"payload\":{\"tokens\":\"00\",\"top_k\":1," extra_fields "}}", R), line)
    CHECK(cdec(d, REQ("\"request_id\":18446744073709551615,\"deadline_us\":-9223372036854775808"), &f, &err) == WK_OK);
    CHECK(f.payload_error == WK_OK && f.fields[0].as.u == UINT64_MAX && f.fields[4].as.i == INT64_MIN);
    CHECK(cdec(d, REQ("\"request_id\":0,\"deadline_us\":9223372036854775807"), &f, &err) == WK_OK);
    CHECK(f.payload_error == WK_OK && f.fields[4].as.i == INT64_MAX);
    /* beyond 64 bits: refused (json-c would saturate) */
    CHECK(cdec(d, REQ("\"request_id\":18446744073709551616"), &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"deadline_us\":-9223372036854775809"), &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    /* in 64 bits but outside the type */
    CHECK(cdec(d, REQ("\"request_id\":1,\"deadline_us\":9223372036854775808"), &f, &err) == WK_OK &&
          f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":-1"), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1.0"), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1e2"), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":\"1\""), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":null"), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":01"), &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":NaN"), &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":Infinity"), &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":1e39"), &f, &err) == WK_OK &&
          f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":3.4028234663852886e38"), &f, &err) == WK_OK &&
          f.payload_error == WK_OK && f.fields[3].as.f == 3.4028234663852886e38);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":2"), &f, &err) == WK_OK && f.payload_error == WK_OK &&
          f.fields[3].as.f == 2.0);
    CHECK(cdec(d, REQ("\"request_id\":1,\"temperature\":-0.0"), &f, &err) == WK_OK && f.payload_error == WK_OK &&
          signbit(f.fields[3].as.f));
    CHECK(cdec(d, REQ("\"request_id\":1,\"top_k\":256"), &f, &err) == WK_OK); /* duplicate key: json-c keeps the last */
    CHECK(f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, REQ("\"request_id\":1,\"nope\":1"), &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    /* required field missing */
    snprintf(line, sizeof line, "{\"t\":%u,\"seq\":0,\"payload\":{\"tokens\":\"00\",\"top_k\":1}}", R);
    CHECK(cdec(d, line, &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    /* bytes: odd length, non-hex, upper case accepted */
    snprintf(line, sizeof line, "{\"t\":%u,\"seq\":0,\"payload\":{\"request_id\":1,\"tokens\":\"abc\",\"top_k\":1}}", R);
    CHECK(cdec(d, line, &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    snprintf(line, sizeof line, "{\"t\":%u,\"seq\":0,\"payload\":{\"request_id\":1,\"tokens\":\"zz\",\"top_k\":1}}", R);
    CHECK(cdec(d, line, &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    snprintf(line, sizeof line, "{\"t\":%u,\"seq\":0,\"payload\":{\"request_id\":1,\"tokens\":\"AbFf\",\"top_k\":1}}", R);
    CHECK(cdec(d, line, &f, &err) == WK_OK && f.payload_error == WK_OK && f.fields[1].as.s.len == 2 &&
          f.fields[1].as.s.ptr[0] == 0xAB && f.fields[1].as.s.ptr[1] == 0xFF);
    /* envelope */
    CHECK(cdec(d, "{\"t\":0,\"seq\":18446744073709551615,\"payload\":{}}", &f, &err) == WK_OK && f.seq == UINT64_MAX);
    CHECK(cdec(d, "{\"t\":0,\"seq\":18446744073709551616,\"payload\":{}}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":-1,\"payload\":{}}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0,\"payload\":{},\"x\":1}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0,\"payload\":{}} x", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "[1]", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":18446744073709551615,\"seq\":0,\"payload\":{}}", &f, &err) == WK_OK &&
          f.transition == WK_COLLOQ_NO_TRANSITION);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0,\"payload\":[]}", &f, &err) == WK_OK &&
          f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0,\"payload\":{\"reason\":\"a\tb\"}}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    wk_colloq_decoder_destroy(d);

    /* reference: names resolve; unknown names are unknown-transition */
    d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){ts, WK_COLLOQ_WIRE_REFERENCE, NULL}, &err);
    REQUIRE(d != NULL);
    CHECK(cdec(d, "{\"seq\":0,\"state\":\"Nowhere\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{}}", &f, &err) == WK_OK &&
          f.transition == WK_COLLOQ_NO_TRANSITION);
    CHECK(cdec(d, "{\"seq\":0,\"state\":\"Idle\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{}}", &f, &err) == WK_OK &&
          f.transition == WK_COLLOQ_NO_TRANSITION);
    CHECK(cdec(d, "{\"seq\":0,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{\"index\":4294967295,\"text\":\"\"}}",
               &f, &err) == WK_OK && f.transition == T_TOKEN && f.payload_error == WK_OK && f.fields[0].as.u == UINT32_MAX);
    CHECK(cdec(d, "{\"seq\":0,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{\"index\":4294967296,\"text\":\"\"}}",
               &f, &err) == WK_OK && f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    CHECK(cdec(d, "{\"t\":0,\"seq\":0,\"payload\":{}}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    /* stream: a line over the limit with no newline is payload-too-large at once */
    size_t big = WK_COLLOQ_JSON_LINE_MAX(ts) + 1;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    wk_in in = {(const uint8_t *)huge, big, 0};
    CHECK(wk_colloq_decoder_decode(d, &in, &f, &err) == WK_ERROR && err.code == WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE);
    in.size = big - 1;
    CHECK(wk_colloq_decoder_decode(d, &in, &f, &err) == WK_NEED_INPUT && in.pos == 0);
    free(huge);
    wk_colloq_decoder_destroy(d);
    /* binary decoder on a plan is fine; decode_line on it is a usage error */
    d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){ts, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
    CHECK(d && cdec(d, "{}", &f, &err) == WK_ERR_ARG);
    wk_colloq_decoder_destroy(d);
#undef REQ
}

/* ------------------------------------------------------------------------------------------ */
static void test_encoders(void)
{
    wk_colloq_frame f;
    wk_error err;
    token(&f, 3, 4294967295u, "a\"b\\c\n\x01 \xe2\x98\x83", true, -0.25);
    for (int w = 0; w < 3; w++) {
        uint8_t full[256], buf[256];
        size_t n = enc(ts, (wk_colloq_wire)w, &f, full, sizeof full);
        CHECK(n > 0);
        for (size_t cap = 0; cap < n; cap++) {
            memset(buf, 0xAA, sizeof buf);
            wk_out out = {buf, cap, 0};
            CHECK(wk_colloq_frame_encode(ts, (wk_colloq_wire)w, &f, &out, &err) == WK_NEED_OUTPUT && out.pos == 0);
            bool untouched = true;
            for (size_t k = 0; k < sizeof buf; k++) untouched &= buf[k] == 0xAA;
            CHECKF(untouched, "wire %d cap %zu: buffer untouched", w, cap);
        }
        /* at an offset, exact room */
        wk_out out = {buf, 5 + n, 5};
        CHECK(wk_colloq_frame_encode(ts, (wk_colloq_wire)w, &f, &out, &err) == WK_DONE && out.pos == 5 + n &&
              memcmp(buf + 5, full, n) == 0);
    }
    uint8_t buf[256];
    size_t n = enc(ts, WK_COLLOQ_WIRE_REFERENCE, &f, buf, sizeof buf);
    const char *ref = "{\"seq\":3,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{\"index\":4294967295,"
                      "\"text\":\"a\\\"b\\\\c\\n\\u0001 \xe2\x98\x83\",\"logprob\":-0.25}}\n";
    CHECKF(n == strlen(ref) && memcmp(buf, ref, n) == 0, "%.*s", (int)n, buf);
    n = enc(ts, WK_COLLOQ_WIRE_COMPACT, &f, buf, sizeof buf);
    CHECK(n > 8 && memcmp(buf, "{\"t\":2,\"seq\":3,\"payload\":{", 26) == 0);

    /* refusals */
    wk_out out = {buf, sizeof buf, 0};
    token(&f, 0, 1, "x", false, 0);
    f.fields[1].present = false;
    for (int w = 0; w < 3; w++) CHECK(wk_colloq_frame_encode(ts, (wk_colloq_wire)w, &f, &out, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    token(&f, 0, 1, "\xc3(", false, 0);
    CHECK(wk_colloq_binary_encode(ts, &f, &out, &err) == WK_ERROR);
    token(&f, 0, 1, "x", true, NAN);
    CHECK(wk_colloq_compact_encode(ts, &f, &out, &err) == WK_ERROR);
    token(&f, 0, 1, "x", true, 0.1); /* not exact as f32 */
    CHECK(wk_colloq_binary_encode(ts, &f, &out, &err) == WK_ERROR);
    token(&f, 0, 1, "x", true, (double)0.1f);
    CHECK(wk_colloq_binary_encode(ts, &f, &out, &err) == WK_DONE);
    token(&f, 0, 1, "x", false, 0);
    f.fields[0].as.u = 4294967296u; /* u32 */
    CHECK(wk_colloq_reference_encode(ts, &f, &out, &err) == WK_ERROR);
    f.transition = 3;
    CHECK(wk_colloq_binary_encode(ts, &f, &out, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    CHECK(out.pos == (size_t)out.pos); /* nothing half-written: checked above per wire */

    /* payload JSON and size helpers */
    token(&f, 0, 5, "hi", true, 1.5);
    char pj[128];
    wk_out po = {(uint8_t *)pj, sizeof pj - 1, 0};
    CHECK(wk_colloq_payload_json_encode(ts, &f, &po, &err) == WK_DONE);
    pj[po.pos] = '\0';
    size_t pn = po.pos, psz = 0;
    CHECK(pn == strlen("{\"index\":5,\"text\":\"hi\",\"logprob\":1.5}") && strcmp(pj, "{\"index\":5,\"text\":\"hi\",\"logprob\":1.5}") == 0);
    CHECK(wk_colloq_payload_json_size(ts, &f, &psz, &err) == WK_OK && psz == pn);
    memset(pj, 'x', sizeof pj);
    po = (wk_out){(uint8_t *)pj, pn - 1, 0};
    CHECK(wk_colloq_payload_json_encode(ts, &f, &po, &err) == WK_NEED_OUTPUT && po.pos == 0 && pj[0] == 'x');
    f.transition = 99;
    CHECK(wk_colloq_payload_json_size(ts, &f, &psz, &err) == WK_ERR_ARG && psz == 0);
    po = (wk_out){(uint8_t *)pj, sizeof pj, 0};
    CHECK(wk_colloq_payload_json_encode(ts, &f, &po, &err) == WK_ERROR && err.code == WK_ERR_ARG && po.pos == 0);
    f.transition = T_TOKEN;
    CHECK(wk_colloq_payload_size(ts, T_TOKEN, &f) == 1 + 4 + 3 + 4);
}

/* Copies template into out with "%s" replaced by id and "%.63s" by its first 63 characters. */
static void fill_id(char *out, size_t cap, const char *tmpl, const char *id)
{
    size_t k = 0;
    for (const char *p = tmpl; *p && k + 70 < cap; p++) {
        if (strncmp(p, "%.63s", 5) == 0) {
            memcpy(out + k, id, 63);
            k += 63;
            p += 4;
        } else if (strncmp(p, "%s", 2) == 0) {
            memcpy(out + k, id, 64);
            k += 64;
            p += 1;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Every encoder through the contract harness's encoder check: NEED_OUTPUT with the view untouched
 * (position and every byte) in every view too short, exactly its _size written otherwise, and a
 * refusal in views of 0, 1 and many bytes alike, the view untouched (the binary encoder used to
 * leave bytes past out->pos when it refused a value it had begun writing). */
typedef struct enc_case {
    int kind; /* 0..2 frame on wire kind, 3 trace frame line, 4 payload JSON, 5 preface, 6 failure
                 line */
    const wk_colloq_frame *f;
} enc_case;

static wk_result enc_call(void *ctx, wk_out *out, wk_error *err)
{
    const enc_case *e = ctx;
    switch (e->kind) {
    case 0: case 1: case 2: return wk_colloq_frame_encode(ts, (wk_colloq_wire)e->kind, e->f, out, err);
    case 3: return wk_colloq_trace_frame_encode(ts, e->f, out, err);
    case 4: return wk_colloq_payload_json_encode(ts, e->f, out, err);
    case 5: return wk_colloq_preface_encode(ts, WK_COLLOQ_WIRE_COMPACT, 1, out, err);
    default: return wk_colloq_trace_failure_encode(WK_ERR_COLLOQ_BAD_SEQUENCE, 7, out, err);
    }
}

static size_t enc_size(const enc_case *e)
{
    size_t n = SIZE_MAX;
    wk_error err;
    switch (e->kind) {
    case 0: case 1: case 2: wk_colloq_frame_size(ts, (wk_colloq_wire)e->kind, e->f, &n, &err); break;
    case 3: wk_colloq_trace_frame_size(ts, e->f, &n, &err); break;
    case 4: wk_colloq_payload_json_size(ts, e->f, &n, &err); break;
    case 5: wk_colloq_preface_size(ts, WK_COLLOQ_WIRE_COMPACT, 1, &n, &err); break;
    default: wk_colloq_trace_failure_size(WK_ERR_COLLOQ_BAD_SEQUENCE, 7, &n, &err); break;
    }
    return n;
}

static void test_encoder_contract(void)
{
    wk_colloq_frame good, bad;
    token(&good, 3, 7, "h\xc3\xa9llo", true, 0.5);
    token(&bad, 3, 7, "h\xc3\xa9llo", true, 0.5);
    bad.fields[2].as.f = 0.1; /* not exact as f32: refused after the fields before it */
    for (int kind = 0; kind < 7; kind++) {
        for (int b = 0; b < (kind <= 4 ? 2 : 1); b++) {
            enc_case ec = {kind, b ? &bad : &good};
            wk_contract_encoder e = {enc_call, NULL, NULL, &ec, b ? WK_ERR_ARG : WK_OK,
                                     b ? SIZE_MAX : enc_size(&ec), NULL};
            char why[320];
            uint8_t *bytes = NULL;
            size_t len = 0;
            CHECKF(wk_contract_encoder_check(&e, &bytes, &len, why, sizeof why), "encoder %d%s: %s",
                   kind, b ? " (refused)" : "", why);
            if (b) {
                size_t n = 1;
                wk_error err;
                CHECK(kind > 2 || (wk_colloq_frame_size(ts, (wk_colloq_wire)kind, &bad, &n, &err) == WK_ERR_ARG && n == 0));
            }
            free(bytes);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
static void test_preface(void)
{
    char line[256];
    wk_colloq_preface p;
    wk_error err;
    wk_out lo = {(uint8_t *)line, sizeof line - 1, 0};
    CHECK(wk_colloq_preface_encode(ts, WK_COLLOQ_WIRE_BINARY, 1, &lo, &err) == WK_DONE);
    size_t n = lo.pos, sz = 0;
    line[n] = '\0';
    char want[256];
    snprintf(want, sizeof want, "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"server\"}\n", ts->identity);
    CHECK(n == strlen(want) && strcmp(line, want) == 0);
    CHECK(wk_colloq_preface_size(ts, WK_COLLOQ_WIRE_BINARY, 1, &sz, &err) == WK_OK && sz == n);
    wk_out small = {(uint8_t *)line, 10, 0};
    CHECK(wk_colloq_preface_encode(ts, WK_COLLOQ_WIRE_BINARY, 1, &small, &err) == WK_NEED_OUTPUT && small.pos == 0 &&
          strcmp(line, want) == 0);
    /* invalid input is an error whatever the room */
    CHECK(wk_colloq_preface_size(ts, WK_COLLOQ_WIRE_BINARY, 2, &sz, &err) == WK_ERR_ARG && sz == 0);
    CHECK(wk_colloq_preface_size(ts, (wk_colloq_wire)7, 1, &sz, &err) == WK_ERR_ARG);
    small = (wk_out){(uint8_t *)line, 0, 0};
    CHECK(wk_colloq_preface_encode(ts, WK_COLLOQ_WIRE_BINARY, 2, &small, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    CHECK(wk_colloq_preface_parse(line, n, &p, &err) == WK_OK && p.wire == WK_COLLOQ_WIRE_BINARY &&
          strcmp(p.role, "server") == 0 && strcmp(p.plan, ts->identity) == 0);
    uint32_t role = 9;
    CHECK(wk_colloq_preface_check(ts, &p, WK_COLLOQ_WIRE_BINARY, 0, &role, &err) == WK_OK && role == 1);
    CHECK(wk_colloq_preface_check(ts, &p, WK_COLLOQ_WIRE_BINARY, 1, NULL, &err) == WK_ERR_COLLOQ_PREFACE_ROLE);
    CHECK(wk_colloq_preface_check(ts, &p, WK_COLLOQ_WIRE_COMPACT, 0, NULL, &err) == WK_ERR_COLLOQ_WIRE_MISMATCH);
    CHECK(wk_colloq_preface_check(moe, &p, WK_COLLOQ_WIRE_BINARY, 0, NULL, &err) == WK_ERR_COLLOQ_PLAN_MISMATCH);
    strcpy(p.role, "router");
    CHECK(wk_colloq_preface_check(ts, &p, WK_COLLOQ_WIRE_BINARY, 0, NULL, &err) == WK_ERR_COLLOQ_PREFACE_ROLE);
    /* the key order does not matter; a missing newline is fine */
    snprintf(line, sizeof line, "{\"role\":\"client\",\"wire\":\"compact\",\"plan\":\"%s\",\"colloq\":\"wire/v0\"}", ts->identity);
    CHECK(wk_colloq_preface_parse(line, strlen(line), &p, &err) == WK_OK && p.wire == WK_COLLOQ_WIRE_COMPACT);
    const char *bad[] = {
        "not json",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\"}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"client\",\"x\":1}",
        "{\"colloq\":\"wire/v1\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"client\"}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%.63s\",\"wire\":\"binary\",\"role\":\"client\"}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"xml\",\"role\":\"client\"}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"\"}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":7}",
        "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"client\"}\n{}",
        "[\"%s\"]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fill_id(line, sizeof line, bad[i], ts->identity);
        CHECKF(wk_colloq_preface_parse(line, strlen(line), &p, &err) == WK_ERR_COLLOQ_PREFACE, "bad preface %zu", i);
    }
    char upper[65];
    for (int i = 0; i < 65; i++) upper[i] = (char)(ts->identity[i] >= 'a' && ts->identity[i] <= 'f' ? ts->identity[i] - 32 : ts->identity[i]);
    snprintf(line, sizeof line, "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"client\"}", upper);
    CHECK(strcmp(upper, ts->identity) == 0 || wk_colloq_preface_parse(line, strlen(line), &p, &err) == WK_ERR_COLLOQ_PREFACE);
}

/* ------------------------------------------------------------------------------------------ */
static void test_checker(void)
{
    const char *chat =
        "{\"colloq\":\"conversation/v0\",\"name\":\"chat\",\"roles\":[\"a\",\"b\"],\"states\":[\"S\",\"Done\"],"
        "\"initial\":\"S\",\"final\":[\"Done\"],\"messages\":{\"Say\":[{\"name\":\"x\",\"type\":\"u8\"}],\"Bye\":[]},"
        "\"transitions\":[{\"from\":\"S\",\"message\":\"Say\",\"sender\":\"b\",\"to\":\"S\"},"
        "{\"from\":\"S\",\"message\":\"Say\",\"sender\":\"a\",\"to\":\"S\"},"
        "{\"from\":\"S\",\"message\":\"Bye\",\"sender\":\"a\",\"to\":\"Done\"}]}";
    wk_colloq_plan *p = compile_str(chat);
    REQUIRE(p != NULL);
    /* ids: S/Bye/a = 0, S/Say/a = 1, S/Say/b = 2 */
    CHECK(p->transitions[0].message == (uint32_t)wk_colloq_plan_message_find(p, "Bye", 3));
    CHECK(p->transitions[1].sender == 0 && p->transitions[2].sender == 1);
    wk_error err;
    wk_colloq_decoder *ref = wk_colloq_decoder_create(&(wk_colloq_decoder_params){p, WK_COLLOQ_WIRE_REFERENCE, NULL}, &err);
    wk_colloq_decoder *cmp = wk_colloq_decoder_create(&(wk_colloq_decoder_params){p, WK_COLLOQ_WIRE_COMPACT, NULL}, &err);
    REQUIRE(ref && cmp);
    wk_colloq_frame f;
    wk_colloq_session s;
    wk_colloq_session_init(&s, p);
    /* reference names (state, message, sender): Say from b is id 2, live b accepts it */
    CHECK(cdec(ref, "{\"seq\":0,\"state\":\"S\",\"message\":\"Say\",\"sender\":\"b\",\"payload\":{\"x\":1}}", &f, &err) == WK_OK);
    CHECK(f.transition == 2 && !f.sender_mismatch);
    CHECK(wk_colloq_session_check(&s, &f, 1, &err) == WK_OK && f.transition == 2 && s.next_seq == 1);
    /* the same frame in a transcript: id 2 as well (the bug of issue 19: it used to be id 1) */
    wk_colloq_session_init(&s, p);
    CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_OK && s.state == 0);
    /* Say from a is id 1: live b is wrong-sender (the frame's sender must be the side it came from) */
    CHECK(cdec(ref, "{\"seq\":1,\"state\":\"S\",\"message\":\"Say\",\"sender\":\"a\",\"payload\":{\"x\":1}}", &f, &err) == WK_OK);
    CHECK(f.transition == 1 && !f.sender_mismatch);
    wk_colloq_session t1 = s;
    CHECK(wk_colloq_session_check(&t1, &f, 1, &err) == WK_ERR_COLLOQ_WRONG_SENDER && t1.failure_seq == 1);
    t1 = s;
    CHECK(wk_colloq_session_check(&t1, &f, 0, &err) == WK_OK);
    /* compact names the id: sender b on a's transition is wrong-sender */
    CHECK(cdec(cmp, "{\"t\":1,\"seq\":1,\"payload\":{\"x\":1}}", &f, &err) == WK_OK && !f.sender_mismatch);
    CHECK(wk_colloq_session_check(&s, &f, 1, &err) == WK_ERR_COLLOQ_WRONG_SENDER && s.failure_seq == 1);
    CHECK(strstr(err.msg, "seq 1") != NULL);
    /* a failed session stays failed */
    CHECK(cdec(cmp, "{\"t\":1,\"seq\":1,\"payload\":{\"x\":1}}", &f, &err) == WK_OK);
    wk_error first = s.error;
    CHECK(wk_colloq_session_check(&s, &f, 0, &err) == WK_ERR_COLLOQ_WRONG_SENDER);
    CHECK(same_error(&err, &first)); /* reported again unchanged */
    CHECK(wk_colloq_session_fail(&s, WK_ERR_COLLOQ_TRUNCATED, &err) == WK_ERR_COLLOQ_WRONG_SENDER);
    CHECK(wk_colloq_session_finish(&s, NULL, &err) == WK_ERROR && err.code == WK_ERR_COLLOQ_WRONG_SENDER);
    CHECK(same_error(&err, &first));
    /* Bye leaves S only from a: "sender":"b" (or a role the plan lacks) is wrong-sender in a
     * transcript too, after the state check */
    static const char *const bye_b[] = {
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"b\",\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"nobody\",\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"\",\"payload\":{}}"};
    for (int k = 0; k < 3; k++) {
        CHECK(cdec(ref, bye_b[k], &f, &err) == WK_OK && f.sender_mismatch && f.transition == 0);
        wk_colloq_session_init(&s, p);
        CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_WRONG_SENDER);
        wk_colloq_session_init(&s, p);
        CHECK(wk_colloq_session_check(&s, &f, 0, &err) == WK_ERR_COLLOQ_WRONG_SENDER);
        /* after-final comes first */
        s.finished = true;
        s.failure = WK_OK;
        CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_AFTER_FINAL);
    }
    /* wrong-state comes before wrong-sender */
    CHECK(cdec(ref, "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"b\",\"payload\":{}}", &f, &err) == WK_OK);
    wk_colloq_session_init(&s, p);
    s.state = 1; /* Done, but not finished: a state no transition leaves from */
    CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_WRONG_STATE);
    /* no transition at all from (state, message): unknown-transition, whatever the sender */
    CHECK(cdec(ref, "{\"seq\":0,\"state\":\"Done\",\"message\":\"Bye\",\"sender\":\"a\",\"payload\":{}}", &f, &err) == WK_OK &&
          f.transition == WK_COLLOQ_NO_TRANSITION && !f.sender_mismatch);
    CHECK(cdec(ref, "{\"seq\":0,\"state\":\"Nowhere\",\"message\":\"Bye\",\"sender\":\"nobody\",\"payload\":{}}", &f, &err) == WK_OK &&
          f.transition == WK_COLLOQ_NO_TRANSITION);
    /* the envelope: sender always required, a string, and nothing else */
    static const char *const bad_env[] = {
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":0,\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":null,\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":[\"a\"],\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"a\",\"payload\":{},\"x\":1}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"role\":\"a\",\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"a\",\"sender\":\"a\",\"payload\":{}}",
        "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"b\",\"payload\":{},\"sender\":\"a\"}"};
    for (size_t k = 0; k < sizeof bad_env / sizeof bad_env[0]; k++)
        CHECKF(cdec(ref, bad_env[k], &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "bad envelope %zu", k);
    /* reference with live sender a on Bye, then after-final for anything */
    wk_colloq_session_init(&s, p);
    CHECK(cdec(ref, "{\"seq\":0,\"state\":\"S\",\"message\":\"Bye\",\"sender\":\"a\",\"payload\":{}}", &f, &err) == WK_OK);
    CHECK(wk_colloq_session_check(&s, &f, 1, &err) == WK_ERR_COLLOQ_WRONG_SENDER);
    wk_colloq_session_init(&s, p);
    CHECK(wk_colloq_session_check(&s, &f, 0, &err) == WK_OK && s.finished && s.state == 1);
    CHECK(wk_colloq_session_finish(&s, NULL, &err) == WK_DONE);
    CHECK(wk_colloq_session_finish(&s, &(wk_in){(const uint8_t *)"xy", 2, 2}, &err) == WK_DONE);
    wk_colloq_session t2 = s;
    CHECK(wk_colloq_session_fail(&t2, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, &err) == WK_ERR_COLLOQ_AFTER_FINAL);
    t2 = s;
    CHECK(wk_colloq_session_finish(&t2, &(wk_in){(const uint8_t *)"abc", 3, 0}, &err) == WK_ERROR &&
          err.code == WK_ERR_COLLOQ_AFTER_FINAL && t2.failure_seq == 1);
    CHECK(cdec(ref, "{\"seq\":1,\"state\":\"Nowhere\",\"message\":\"Bye\",\"sender\":\"a\",\"payload\":{}}", &f, &err) == WK_OK);
    CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_AFTER_FINAL);
    /* truncated at the end of input inside a frame; clean end otherwise */
    wk_colloq_session_init(&s, p);
    wk_in rest2 = {(const uint8_t *)"ab", 2, 0};
    CHECK(wk_colloq_session_finish(&s, &rest2, &err) == WK_ERROR && err.code == WK_ERR_COLLOQ_TRUNCATED &&
          wk_code_is_truncation(err.code) && rest2.pos == 0);
    first = err;
    CHECK(wk_colloq_session_finish(&s, &rest2, &err) == WK_ERROR && same_error(&err, &first));
    /* session_step: need input on an empty view; a malformed line is recorded */
    wk_colloq_session_init(&s, p);
    wk_in in = {(const uint8_t *)"", 0, 0};
    CHECK(wk_colloq_session_step(&s, cmp, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &err) == WK_NEED_INPUT);
    const char *two = "{\"t\":1,\"seq\":0,\"payload\":{\"x\":255}}\n{\"t\":1,\"seq\":1,\"payload\":{\"x\":256}}\n";
    in.src = (const uint8_t *)two;
    in.size = strlen(two);
    CHECK(wk_colloq_session_step(&s, cmp, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &err) == WK_DONE && f.fields[0].as.u == 255);
    CHECK(wk_colloq_session_step(&s, cmp, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &err) == WK_ERROR &&
          s.failure == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && s.failure_seq == 1 && in.pos == in.size);
    const char *garbage = "nonsense\n";
    wk_colloq_session_init(&s, p);
    in.src = (const uint8_t *)garbage;
    in.size = strlen(garbage);
    in.pos = 0;
    CHECK(wk_colloq_session_step(&s, cmp, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &err) == WK_ERROR &&
          s.failure == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && err.code == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    wk_colloq_decoder_destroy(ref);
    wk_colloq_decoder_destroy(cmp);
    /* a plan whose initial state is final starts finished */
    const char *done =
        "{\"colloq\":\"conversation/v0\",\"name\":\"d\",\"roles\":[\"a\"],\"states\":[\"S\",\"T\"],\"initial\":\"S\","
        "\"final\":[\"T\",\"S\"],\"messages\":{\"M\":[]},\"transitions\":[{\"from\":\"T\",\"message\":\"M\",\"sender\":\"a\",\"to\":\"S\"}]}";
    wk_colloq_plan *q = NULL;
    CHECK(wk_colloq_plan_compile(done, strlen(done), NULL, &q, &err) == WK_ERR_COLLOQ_STRUCTURE);
    wk_colloq_plan_destroy(p);
}

/* ------------------------------------------------------------------------------------------ */
/* Every valid transcript, decoded from each encoding, re-encodes to each encoding byte for byte
 * (the Python model wrote them). */
static void test_reencode(void)
{
    static const char *const wires[3] = {"reference", "compact", "binary"};
    static const struct {
        const char *name;
        int plan; /* 0 ts, 1 moe */
    } sc[] = {{"ts-valid", 0}, {"ts-valid-bare-end", 0}, {"moe-valid", 1}, {"moe-abort", 1}, {"moe-abort-gathering", 1},
              {"chat-server-bye", 2}, {"chat-client-bye", 2}, {"chat-both-bye", 2}, {"chat-live", 2}};
    wk_colloq_plan *chat = plan_file("chat.json");
    REQUIRE(chat != NULL);
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        const wk_colloq_plan *p = sc[i].plan == 2 ? chat : sc[i].plan ? moe : ts;
        char *body[3];
        size_t blen[3];
        for (int w = 0; w < 3; w++) {
            char rel[128];
            snprintf(rel, sizeof rel, "transcripts/%s.%s", sc[i].name, wires[w]);
            size_t n;
            char *t = slurp(rel, &n);
            char *nl = memchr(t, '\n', n);
            blen[w] = n - (size_t)(nl + 1 - t);
            body[w] = malloc(blen[w] + 1);
            memcpy(body[w], nl + 1, blen[w]);
            free(t);
        }
        for (int from = 0; from < 3; from++) {
            wk_error err;
            wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){p, (wk_colloq_wire)from, NULL}, &err);
            wk_in in = {(const uint8_t *)body[from], blen[from], 0};
            uint8_t *out[3];
            wk_out o[3];
            for (int to = 0; to < 3; to++) {
                out[to] = malloc(blen[to] + 64);
                o[to] = (wk_out){out[to], blen[to] + 64, 0};
            }
            wk_colloq_frame f;
            int frames = 0;
            while (in.pos < in.size && wk_colloq_decoder_decode(d, &in, &f, &err) == WK_DONE) {
                CHECK(f.payload_error == WK_OK);
                for (int to = 0; to < 3; to++) CHECK(wk_colloq_frame_encode(p, (wk_colloq_wire)to, &f, &o[to], &err) == WK_DONE);
                frames++;
            }
            CHECK(in.pos == in.size && frames > 0);
            for (int to = 0; to < 3; to++) {
                CHECKF(o[to].pos == blen[to] && memcmp(out[to], body[to], blen[to]) == 0, "%s: %s -> %s",
                       sc[i].name, wires[from], wires[to]);
                free(out[to]);
            }
            wk_colloq_decoder_destroy(d);
        }
        for (int w = 0; w < 3; w++) free(body[w]);
    }
    wk_colloq_plan_destroy(chat);
}

/* ------------------------------------------------------------------------------------------ */
/* A plan without wire.payload_schedules is a v0 plan: reference and compact only. */
static void test_v0_plan(void)
{
    char *v0 = malloc(ts->canonical_len + 8);
    memcpy(v0, ts->canonical, ts->canonical_len + 1);
    char *cut = strstr(v0, ",\"binary\"],\"payload_schedules\"");
    REQUIRE(cut != NULL);
    strcpy(cut, "]}}");
    wk_colloq_plan *p = NULL;
    wk_error err;
    CHECKF(wk_colloq_plan_load(v0, strlen(v0), NULL, &p, &err) == WK_OK, "%s", err.msg);
    if (p) {
        CHECK(!p->has_schedules && strcmp(p->identity, ts->identity) != 0);
        CHECK(p->canonical_len == strlen(v0) && memcmp(p->canonical, v0, p->canonical_len) == 0);
        CHECK(wk_colloq_decoder_create(&(wk_colloq_decoder_params){p, WK_COLLOQ_WIRE_BINARY, NULL}, &err) == NULL && err.code == WK_ERR_ARG);
        wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){p, WK_COLLOQ_WIRE_COMPACT, NULL}, &err);
        CHECK(d != NULL);
        wk_colloq_decoder_destroy(d);
        char line[256];
        wk_colloq_preface pf;
        wk_out lo = {(uint8_t *)line, sizeof line, 0};
        CHECK(wk_colloq_preface_encode(p, WK_COLLOQ_WIRE_BINARY, 0, &lo, &err) == WK_DONE);
        CHECK(wk_colloq_preface_parse(line, lo.pos, &pf, &err) == WK_OK);
        CHECK(wk_colloq_preface_check(p, &pf, WK_COLLOQ_WIRE_BINARY, 1, NULL, &err) == WK_ERR_COLLOQ_WIRE_MISMATCH);
        /* the same plan with its schedules restored is the ordinary plan again */
        wk_colloq_plan *q = NULL;
        CHECK(wk_colloq_plan_load(ts->canonical, ts->canonical_len, NULL, &q, &err) == WK_OK && q && q->has_schedules &&
              strcmp(q->identity, ts->identity) == 0);
        wk_colloq_plan_destroy(q);
    }
    wk_colloq_plan_destroy(p);
    /* a plan with a wrong id, an unknown key or a schedule not matching its messages is refused */
    char *t = strdup(ts->canonical);
    char *id = strstr(t, "\"id\":1");
    REQUIRE(id != NULL);
    id[5] = '2';
    p = NULL;
    CHECK(wk_colloq_plan_load(t, strlen(t), NULL, &p, &err) == WK_ERR_COLLOQ_PLAN && p == NULL);
    CHECK(strncmp(err.msg, "$.transitions[", 14) == 0);
    free(t);
    t = strdup(ts->canonical);
    char *mp = strstr(t, "\"optional_count\":1");
    REQUIRE(mp != NULL);
    mp[17] = '2';
    CHECK(wk_colloq_plan_load(t, strlen(t), NULL, &p, &err) == WK_ERR_COLLOQ_PLAN && p == NULL);
    free(t);
    free(v0);

    /* An empty JSON object inside a plan file: its canonical form is `{}` (the canonical writer
     * once passed qsort a NULL key array there, undefined behaviour UBSan reports; found by the
     * colloq_compile fuzz target). This plan is not canonical, so it is refused. */
    static const char empty_obj[] =
        "{\"colloq\":\"plan/v0\",\"final\":[\"Done\"],\"initial\":\"Idle\",\"messages\":{\"nd\":{"
        "\"fields\":[{\"name\":\"f\",\"type\":\"u32\"}],\"max_payload\":66},\"Token\":{\"fields\":["
        "{\"name\":\"sob\",\"type\":\"f32\"}],\"max_payload\":65536}},\"name\":\"tokm\",\"roles\":["
        "\"nt\",\"server\"],\"states\":[\"Idle\",\"Streaming\",\"Done\"],\"transitions\":[{\"from\":"
        "\"Idle\",\"id\":0,\"message\":\"Token\",\"sender\":\"server\",\"to\":\"Streaming\"}],"
        "\"wire\":{\"encodings\":[\"rom\"],\"payload_schedules\":{}}}";
    p = NULL;
    CHECK(wk_colloq_plan_load(empty_obj, strlen(empty_obj), NULL, &p, &err) == WK_ERR_COLLOQ_PLAN && p == NULL);
}

/* ------------------------------------------------------------------------------------------ */
static void test_zero_allocations(void)
{
    size_t n;
    char *t = slurp("transcripts/moe-valid.binary", &n);
    char *nl = memchr(t, '\n', n);
    const uint8_t *body = (const uint8_t *)nl + 1;
    size_t blen = n - (size_t)(body - (const uint8_t *)t);
    wk_error err;
    wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){moe, WK_COLLOQ_WIRE_BINARY, NULL}, &err);
    REQUIRE(d != NULL);
    static wk_colloq_frame f;
    wk_colloq_session s;
    for (int round = 0; round < 3; round++) {
        wk_colloq_session_init(&s, moe);
        wk_in in = {body, blen, 0};
        int frames = 0;
        wk_alloc_probe_begin(0);
        while (wk_colloq_session_step(&s, d, &in, WK_COLLOQ_SENDER_TRANSCRIPT, &f, &err) == WK_DONE) frames++;
        unsigned long used = wk_alloc_probe_end();
        ALLOC_CHECK(used == 0, "binary session: %lu allocations for %d frames", used, frames);
        CHECK(frames == 18 && s.finished && in.pos == blen);
        /* the bare decoder + checker as well */
        wk_colloq_session_init(&s, moe);
        in.pos = 0;
        int checked = 0, refused = 0;
        wk_alloc_probe_begin(0);
        while (in.pos < in.size && wk_colloq_binary_decode(moe, &in, &f, &err) == WK_DONE) {
            if (wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_OK) checked++;
            else refused++;
        }
        used = wk_alloc_probe_end();
        ALLOC_CHECK(used == 0, "binary decode + check: %lu allocations", used);
        CHECK(checked == 18 && refused == 0);
        /* and the binary encoder */
        uint8_t buf[512];
        wk_out out = {buf, sizeof buf, 0};
        wk_alloc_probe_begin(0);
        wk_result er = wk_colloq_binary_encode(moe, &f, &out, &err);
        used = wk_alloc_probe_end();
        CHECK(er == WK_DONE);
        ALLOC_CHECK(used == 0, "binary encode: %lu allocations", used);
    }
    /* the probe works: building a trace allocates */
    wk_colloq_trace tr;
    wk_colloq_trace_init(&tr, NULL);
    wk_alloc_probe_begin(~0ul);
    wk_code tc = wk_colloq_trace_append_frame(&tr, moe, &f, &err);
    unsigned long used = wk_alloc_probe_end();
    CHECK(tc == WK_OK);
    CHECKF(used > 0, "the probe saw no allocation of wk_colloq_trace_append_frame");
    wk_colloq_trace_destroy(&tr);
    wk_colloq_decoder_destroy(d);
    free(t);
}

/* ------------------------------------------------------------------------------------------ */
static void test_trace_lines(void)
{
    wk_colloq_frame f;
    token(&f, 4, 9, "z", true, -0.0);
    char buf[256];
    size_t n = frame_line(ts, &f, buf, sizeof buf);
    const char *want = "{\"seq\":4,\"transition\":2,\"from\":\"Streaming\",\"to\":\"Streaming\",\"message\":\"Token\","
                       "\"payload\":{\"index\":9,\"text\":\"z\",\"logprob\":-0.0}}\n";
    CHECKF(n == strlen(want) && strcmp(buf, want) == 0, "%s", buf);
    wk_error err;
    wk_out fo = {(uint8_t *)buf, sizeof buf - 1, 0};
    CHECK(wk_colloq_trace_failure_encode(WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, 17, &fo, &err) == WK_DONE);
    buf[fo.pos] = '\0';
    n = 0;
    CHECK(wk_colloq_trace_failure_size(WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, 17, &n, &err) == WK_OK && n == fo.pos);
    CHECK(strcmp(buf, "{\"failure\":\"payload-too-large\",\"seq\":17}\n") == 0 && n == strlen(buf));
    fo = (wk_out){(uint8_t *)buf, n - 1, 0};
    CHECK(wk_colloq_trace_failure_encode(WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, 17, &fo, &err) == WK_NEED_OUTPUT && fo.pos == 0);
    /* not a failure kind: an error, whatever the room */
    fo = (wk_out){(uint8_t *)buf, sizeof buf, 0};
    CHECK(wk_colloq_trace_failure_encode(WK_ERR_ARG, 17, &fo, &err) == WK_ERROR && err.code == WK_ERR_ARG && fo.pos == 0);
    CHECK(wk_colloq_trace_failure_size(WK_OK, 0, &n, &err) == WK_ERR_ARG && n == 0);
    /* a frame outside the table: an error too */
    f.transition = 99;
    n = 1;
    CHECK(frame_line(ts, &f, buf, sizeof buf) == SIZE_MAX);
    CHECK(wk_colloq_trace_frame_size(ts, &f, &n, &err) == WK_ERR_ARG && n == 0);
    /* parse: syntax errors name the line */
    wk_colloq_trace tr;
    wk_colloq_trace_init(&tr, NULL);
    const char *bad = "{\"failure\":\"bad-sequence\",\"seq\":0}\n{\"failure\":\"exploded\",\"seq\":1}\n";
    CHECK(wk_colloq_trace_parse(bad, strlen(bad), &tr, &err) == WK_ERR_COLLOQ_TRACE && strstr(err.msg, "line 2"));
    wk_colloq_trace_destroy(&tr);
    const char *bad2 = "{\"seq\":0,\"transition\":0}\n";
    CHECK(wk_colloq_trace_parse(bad2, strlen(bad2), &tr, &err) == WK_ERR_COLLOQ_TRACE);
    wk_colloq_trace_destroy(&tr);
    CHECK(wk_colloq_trace_parse("", 0, &tr, &err) == WK_OK && tr.count == 0);
    wk_colloq_trace_verify_report rep;
    CHECK(wk_colloq_trace_verify(ts, &tr, &rep, &err) == WK_OK && rep.ok); /* empty trace is fine */
    /* no final newline */
    const char *one = "{\"failure\":\"truncated\",\"seq\":0}";
    CHECK(wk_colloq_trace_parse(one, strlen(one), &tr, &err) == WK_OK && tr.count == 1 && tr.entries[0].is_failure &&
          tr.entries[0].failure == WK_ERR_COLLOQ_TRUNCATED);
    CHECK(wk_colloq_trace_verify(ts, &tr, &rep, &err) == WK_OK);
    wk_colloq_trace_destroy(&tr);
}

/* ------------------------------------------------------------------------------------------ */
/* Duplicate keys (spec, revised): json-c keeps the last of two equal keys, so the library
 * counts members itself. Anywhere in an envelope; reference and compact agree; the payload's are
 * payload problems (reported after the header checks); escaped spellings of one key are equal. */
static void test_duplicates(void)
{
    wk_error err;
    wk_colloq_frame f;
    wk_colloq_decoder *ref = wk_colloq_decoder_create(&(wk_colloq_decoder_params){ts, WK_COLLOQ_WIRE_REFERENCE, NULL}, &err);
    wk_colloq_decoder *cmp = wk_colloq_decoder_create(&(wk_colloq_decoder_params){ts, WK_COLLOQ_WIRE_COMPACT, NULL}, &err);
    REQUIRE(ref && cmp);
    char line[512];
    /* envelope duplicates: malformed envelope, offset = the repeated key */
    const char *r1 = "{\"seq\":1,\"seq\":1,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{}}";
    CHECK(cdec(ref, r1, &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && err.has_offset && err.offset == 9);
    const char *r2 = "{\"seq\":1,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{},\"p\\u0061yload\":{}}";
    CHECK(cdec(ref, r2, &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && err.offset == 78);
    const char *r3 = "{\"seq\":1,\"state\":\"Streaming\",\"state\":\"Idle\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":{}}";
    CHECK(cdec(ref, r3, &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    const char *c1 = "{\"t\":2,\"t\":1,\"seq\":1,\"payload\":{}}";
    CHECK(cdec(cmp, c1, &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && err.offset == 7);
    const char *c2 = "{\"t\":2,\"seq\":1,\"\\u0073eq\":1,\"payload\":{}}";
    CHECK(cdec(cmp, c2, &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && err.offset == 15);
    CHECK(cdec(cmp, "{\"t\":2,\"seq\":1,\"payload\":{},\"payload\":{}}", &f, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
    /* payload duplicates: the same payload text in both envelopes gives the same verdict */
    static const char *const payloads[] = {
        "{\"index\":0,\"text\":\"a\",\"index\":1}",
        "{\"index\":0,\"text\":\"a\",\"te\\u0078t\":\"b\"}",
        "{\"index\":0,\"text\":\"a\",\"text\":\"a\"}",
        "{\"index\":0,\"text\":\"a\",\"logprob\":1,\"logprob\":1}",
        "{\"index\":0,\"text\":\"a\",\"text\\u0000x\":\"b\"}", /* json-c cuts a key at NUL */
        "{\"index\":0,\"text\":{\"a\":1,\"a\":2}}",
        "{\"index\":0,\"text\":\"a\",\"zz\":{\"a\":1,\"a\":2}}"};
    for (size_t k = 0; k < sizeof payloads / sizeof payloads[0]; k++) {
        for (int w = 0; w < 2; w++) {
            if (w == 0)
                snprintf(line, sizeof line, "{\"seq\":1,\"state\":\"Streaming\",\"message\":\"Token\",\"sender\":\"server\",\"payload\":%s}", payloads[k]);
            else
                snprintf(line, sizeof line, "{\"t\":%u,\"seq\":1,\"payload\":%s}", (unsigned)T_TOKEN, payloads[k]);
            wk_colloq_decoder *d = w ? cmp : ref;
            CHECKF(cdec(d, line, &f, &err) == WK_OK && f.transition == T_TOKEN &&
                       f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD,
                   "payload %zu wire %d decodes with a payload error", k, w);
            if (k < 4) CHECK(f.payload_error_reason && strstr(f.payload_error_reason, "duplicate"));
            /* the header checks come first */
            wk_colloq_session s;
            wk_colloq_session_init(&s, ts);
            s.state = 1;
            s.next_seq = 2;
            CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_BAD_SEQUENCE);
            wk_colloq_session_init(&s, ts);
            s.state = 1;
            s.next_seq = 1;
            CHECK(wk_colloq_session_check(&s, &f, WK_COLLOQ_SENDER_TRANSCRIPT, &err) == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
        }
    }
    /* equal-looking but different keys are fine */
    CHECK(cdec(cmp, "{\"t\":2,\"seq\":1,\"payload\":{\"index\":0,\"text\":\"\\u00e9\"}}", &f, &err) == WK_OK && f.payload_error == WK_OK);
    CHECK(cdec(cmp, "{\"t\":2,\"seq\":1,\"payload\":{\"index\":0,\"Text\":\"x\",\"text\":\"y\"}}", &f, &err) == WK_OK &&
          f.payload_error == WK_ERR_COLLOQ_MALFORMED_PAYLOAD && f.payload_error_reason && !strstr(f.payload_error_reason, "duplicate"));
    wk_colloq_decoder_destroy(ref);
    wk_colloq_decoder_destroy(cmp);
    /* prefaces, traces, conversations */
    wk_colloq_preface pf;
    snprintf(line, sizeof line, "{\"colloq\":\"wire/v0\",\"plan\":\"%s\",\"wire\":\"binary\",\"role\":\"client\",\"role\":\"server\"}", ts->identity);
    CHECK(wk_colloq_preface_parse(line, strlen(line), &pf, &err) == WK_ERR_COLLOQ_PREFACE && err.offset == 126);
    wk_colloq_trace tr;
    wk_colloq_trace_init(&tr, NULL);
    const char *tl = "{\"seq\":0,\"transition\":0,\"from\":\"Idle\",\"to\":\"Streaming\",\"message\":\"Prompt\",\"payload\":{\"text\":\"a\",\"max_tokens\":1,\"text\":\"b\"}}\n";
    CHECK(wk_colloq_trace_parse(tl, strlen(tl), &tr, &err) == WK_ERR_COLLOQ_TRACE && strstr(err.msg, "duplicate"));
    wk_colloq_trace_destroy(&tr);
    const char *conv =
        "{\"colloq\":\"conversation/v0\",\"name\":\"d\",\"roles\":[\"a\"],\"states\":[\"S\",\"T\"],\"initial\":\"S\","
        "\"final\":[\"T\"],\"messages\":{\"M\":[],\"M\":[{\"name\":\"x\",\"type\":\"u8\"}]},"
        "\"transitions\":[{\"from\":\"S\",\"message\":\"M\",\"sender\":\"a\",\"to\":\"T\"}]}";
    wk_colloq_plan *q = NULL;
    CHECK(wk_colloq_plan_compile(conv, strlen(conv), NULL, &q, &err) == WK_ERR_COLLOQ_DUPLICATE && !q);
    CHECKF(strncmp(err.msg, "$.messages.M: duplicate key", 27) == 0 && err.has_offset &&
               err.offset == (uint64_t)(strstr(conv, "\"M\":[{") - conv), "%s", err.msg);
    const char *conv2 =
        "{\"colloq\":\"conversation/v0\",\"name\":\"d\",\"roles\":[\"a\"],\"states\":[\"S\",\"T\"],\"initial\":\"S\","
        "\"final\":[\"T\"],\"messages\":{\"M\":[]},"
        "\"transitions\":[{\"from\":\"S\",\"message\":\"M\",\"sender\":\"a\",\"to\":\"T\"},"
        "{\"from\":\"T\",\"message\":\"M\",\"sender\":\"a\",\"to\":\"S\",\"to\":\"T\"}]}";
    CHECK(wk_colloq_plan_load(conv2, strlen(conv2), NULL, &q, &err) == WK_ERR_COLLOQ_DUPLICATE && !q);
    CHECKF(strncmp(err.msg, "$.transitions[1].to: duplicate key", 34) == 0, "%s", err.msg);
}

/* ------------------------------------------------------------------------------------------ */
/* The generator's API (the generated code itself: test_generated.c, cli_test.py). */
typedef struct fail_alloc {
    long left; /* allocations that succeed; then every one fails */
    long live;
} fail_alloc;
static void *fa_alloc(void *o, size_t n)
{
    fail_alloc *f = o;
    if (f->left-- <= 0) return NULL;
    f->live++;
    return malloc(n);
}
static void fa_free(void *o, void *p)
{
    fail_alloc *f = o;
    if (p) f->live--;
    free(p);
}

/* An empty string or bytes value may be NULL (the encoders take it): traces write it without
 * touching the pointer (the sanitizer build checks). */
static void test_null_empty_values(void)
{
    wk_colloq_frame f;
    wk_colloq_frame_init(&f, ts, T_TOKEN, 1);
    f.fields[0].as.u = 0;
    f.fields[0].present = true;
    f.fields[1].as.s.ptr = NULL;
    f.fields[1].as.s.len = 0;
    f.fields[1].present = true;
    char line[256];
    size_t n = frame_line(ts, &f, line, sizeof line);
    CHECK(n < sizeof line && strstr(line, "\"text\":\"\"") != NULL);
    uint8_t out[256];
    wk_error err;
    for (int w = 0; w < 3; w++) {
        wk_out o = {out, sizeof out, 0};
        CHECK(wk_colloq_frame_encode(ts, (wk_colloq_wire)w, &f, &o, &err) == WK_DONE);
    }
    wk_colloq_frame_init(&f, moe, 1, 1); /* moe transition 1: Dispatch with a bytes field */
    const wk_colloq_message *m = wk_colloq_plan_transition_message_get(moe, 1);
    for (uint32_t i = 0; i < m->field_count; i++) {
        if (m->fields[i].optional) continue;
        f.fields[i].present = true;
        f.fields[i].as.u = 0;
        f.fields[i].as.s.ptr = NULL;
        f.fields[i].as.s.len = 0;
    }
    n = frame_line(moe, &f, line, sizeof line);
    CHECK(n < sizeof line);
}

static void test_codegen(void)
{
    wk_error err;
    char buf[80];
    wk_out po = {(uint8_t *)buf, sizeof buf, 0};
    CHECK(wk_colloq_codegen_prefix_size(ts) == 12);
    CHECK(wk_colloq_codegen_prefix_encode(ts, &po, &err) == WK_DONE && po.pos == 12 && memcmp(buf, "token_stream", 12) == 0);
    po = (wk_out){(uint8_t *)buf, 11, 0};
    CHECK(wk_colloq_codegen_prefix_encode(ts, &po, &err) == WK_NEED_OUTPUT && po.pos == 0);
    wk_colloq_codegen_params prm = {"tsx", NULL, NULL};
    size_t hn = 0, cn = 0;
    CHECK(wk_colloq_codegen_size(ts, &prm, WK_COLLOQ_CODEGEN_HEADER, &hn, &err) == WK_OK && hn > 1000);
    CHECK(wk_colloq_codegen_size(ts, &prm, WK_COLLOQ_CODEGEN_SOURCE, &cn, &err) == WK_OK && cn > hn);
    uint8_t *out = malloc(cn + 16);
    memset(out, 0xAA, cn + 16);
    wk_out o = {out, cn - 1, 0};
    CHECK(wk_colloq_codegen_write(ts, &prm, WK_COLLOQ_CODEGEN_SOURCE, &o, &err) == WK_NEED_OUTPUT && o.pos == 0 &&
          out[0] == 0xAA);
    o = (wk_out){out, cn + 16, 3};
    CHECK(wk_colloq_codegen_write(ts, &prm, WK_COLLOQ_CODEGEN_SOURCE, &o, &err) == WK_DONE && o.pos == cn + 3 &&
          out[cn + 3] == 0xAA && memcmp(out + 3, "/* The binary", 13) == 0);
    CHECK(strstr((char *)out + 3, "#include \"tsx.h\"") != NULL);
    prm.header_name = "gen/tsx.h";
    o = (wk_out){out, cn + 16, 0};
    CHECK(wk_colloq_codegen_write(ts, &prm, WK_COLLOQ_CODEGEN_SOURCE, &o, &err) == WK_DONE);
    out[o.pos < cn + 16 ? o.pos : cn + 15] = 0;
    CHECK(strstr((char *)out, "#include \"gen/tsx.h\"") != NULL);
    free(out);
    static const char *const bad[] = {"", "1x", "a-b", "a b", "x\"", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_colloq_codegen_params b = {bad[i], NULL, NULL};
        CHECKF(wk_colloq_codegen_size(ts, &b, WK_COLLOQ_CODEGEN_HEADER, &hn, &err) == WK_ERR_ARG, "prefix %zu", i);
    }
    wk_colloq_codegen_params q = {"ok", "bad\"name.h", NULL};
    CHECK(wk_colloq_codegen_size(ts, &q, WK_COLLOQ_CODEGEN_SOURCE, &hn, &err) == WK_ERR_ARG);
    /* the same bytes with the default prefix (NULL params) */
    size_t d1 = 0;
    CHECK(wk_colloq_codegen_size(ts, NULL, WK_COLLOQ_CODEGEN_HEADER, &d1, &err) == WK_OK && d1 > 0);
    /* every allocation failure is WK_ERR_NOMEM with nothing leaked; enough memory gives the bytes */
    bool reached = false;
    for (long n = 0; n < 200 && !reached; n++) {
        fail_alloc fa = {n, 0};
        wk_allocator a = {fa_alloc, fa_free, &fa};
        wk_colloq_codegen_params pa = {"tsx", NULL, &a};
        size_t sz = 0;
        wk_code rc = wk_colloq_codegen_size(moe, &pa, WK_COLLOQ_CODEGEN_SOURCE, &sz, &err);
        CHECKF(rc == WK_OK || rc == WK_ERR_NOMEM, "allocation %ld: %s", n, wk_error_name(rc));
        CHECKF(fa.live == 0, "allocation %ld: %ld blocks left", n, fa.live);
        if (rc == WK_OK) {
            reached = true;
            uint8_t *b = malloc(sz);
            fail_alloc fb = {n, 0};
            wk_allocator a2 = {fa_alloc, fa_free, &fb};
            pa.allocator = &a2;
            wk_out ob = {b, sz, 0};
            /* write needs one more block (its text buffer) */
            wk_result r = wk_colloq_codegen_write(moe, &pa, WK_COLLOQ_CODEGEN_SOURCE, &ob, &err);
            CHECK((r == WK_ERROR && err.code == WK_ERR_NOMEM && ob.pos == 0) || (r == WK_DONE && ob.pos == sz));
            CHECK(fb.live == 0);
            fb = (fail_alloc){n + 1, 0};
            ob.pos = 0;
            CHECK(wk_colloq_codegen_write(moe, &pa, WK_COLLOQ_CODEGEN_SOURCE, &ob, &err) == WK_DONE && ob.pos == sz);
            CHECK(fb.live == 0);
            free(b);
        }
    }
    CHECK(reached);
    /* a v0 plan has no binary codec */
    char *v0 = malloc(ts->canonical_len + 8);
    memcpy(v0, ts->canonical, ts->canonical_len + 1);
    char *cut = strstr(v0, ",\"binary\"],\"payload_schedules\"");
    REQUIRE(cut != NULL);
    strcpy(cut, "]}}");
    wk_colloq_plan *p = NULL;
    CHECK(wk_colloq_plan_load(v0, strlen(v0), NULL, &p, &err) == WK_OK);
    CHECK(wk_colloq_codegen_size(p, NULL, WK_COLLOQ_CODEGEN_HEADER, &hn, &err) == WK_ERR_ARG);
    wk_colloq_plan_destroy(p);
    free(v0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_colloq FIXTURES_DIR\n");
        return 1;
    }
    dir = argv[1];
    test_names();
    test_compile_errors();
    ts = plan_file("token-stream.json");
    moe = plan_file("moe-router.json");
    if (!ts || !moe) return 1;
    T_PROMPT = wk_colloq_plan_transition_find(ts, 0, (uint32_t)wk_colloq_plan_message_find(ts, "Prompt", 6), WK_COLLOQ_SENDER_TRANSCRIPT);
    T_END = wk_colloq_plan_transition_find(ts, 1, (uint32_t)wk_colloq_plan_message_find(ts, "End", 3), WK_COLLOQ_SENDER_TRANSCRIPT);
    T_TOKEN = wk_colloq_plan_transition_find(ts, 1, (uint32_t)wk_colloq_plan_message_find(ts, "Token", 5), WK_COLLOQ_SENDER_TRANSCRIPT);
    CHECK(T_PROMPT == 0 && T_END == 1 && T_TOKEN == 2);
    test_binary_decoder();
    test_json_extremes();
    test_encoders();
    test_encoder_contract();
    test_preface();
    test_checker();
    test_duplicates();
    test_codegen();
    test_null_empty_values();
    test_reencode();
    test_v0_plan();
    test_zero_allocations();
    test_trace_lines();
    wk_colloq_plan_destroy(ts);
    wk_colloq_plan_destroy(moe);
    free(base_conv);
    return wk_test_summary("colloq_unit");
}
