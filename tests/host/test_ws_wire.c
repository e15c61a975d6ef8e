/* The WebSocket wire without sockets (src/host/ws_wire.c): RFC 6455's own examples (section 1.3
 * handshake, section 5.7 frames), the upgrade checks, the frame reader's rules, fed whole and at
 * every split point, and writer -> reader round trips. */
#include "wk_test.h"
#include "ws_wire.h" /* white-box: src/host is on the include path */

static const char rfc_key[] = "dGhlIHNhbXBsZSBub25jZQ==";
static const char rfc_accept[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/* ---- HTTP ------------------------------------------------------------------------------------ */
static wk_result parse_split(wk_ws_http *h, bool response, const char *text, size_t split, size_t *used, wk_error *e)
{
    size_t n = strlen(text);
    wk_ws_http_init(h, response);
    wk_in a = {(const uint8_t *)text, split, 0};
    wk_result r = wk_ws_http_parse(h, &a, e);
    if (r != WK_NEED_INPUT) {
        *used = a.pos;
        return r;
    }
    wk_in b = {(const uint8_t *)text, n, a.pos};
    r = wk_ws_http_parse(h, &b, e);
    *used = b.pos;
    return r;
}

static wk_ws_http H;

static void test_accept(void)
{
    char acc[WK_WS_ACCEPT_LEN + 1];
    wk_error e;
    CHECK(wk_ws_accept_for(rfc_key, acc, &e) == WK_OK && strcmp(acc, rfc_accept) == 0);
}

static void test_request(void)
{
    /* RFC 6455 section 1.3, with the version and a trailing frame byte after the block */
    const char *req = "GET /interlace HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Origin: http://example.com\r\nSec-WebSocket-Version: 13\r\n\r\n\x82";
    size_t n = strlen(req);
    for (size_t split = 0; split <= n; split++) {
        size_t used;
        wk_error e;
        wk_result r = parse_split(&H, false, req, split, &used, &e);
        CHECKF(r == WK_DONE && used == n - 1, "split %zu", split);
    }
    CHECK(strcmp(H.method, "GET") == 0 && strcmp(H.target, "/interlace") == 0);
    CHECK(strcmp(wk_ws_http_field_get(&H, "host"), "server.example.com") == 0);
    CHECK(wk_ws_http_has_token(&H, "CONNECTION", "upgrade"));
    uint8_t ans[WK_WS_RESPONSE_MAX];
    wk_out out = {ans, sizeof ans, 0};
    wk_error e;
    REQUIRE(wk_ws_upgrade_answer(&H, "/interlace", &out, &e) == WK_OK);
    ans[out.pos < sizeof ans ? out.pos : sizeof ans - 1] = 0;
    CHECK(strncmp((char *)ans, "HTTP/1.1 101 ", 13) == 0 && strstr((char *)ans, rfc_accept));
    /* the client's check of that answer */
    wk_ws_http R;
    size_t used;
    REQUIRE(parse_split(&R, true, (char *)ans, 5, &used, &e) == WK_DONE);
    CHECK(wk_ws_upgrade_check_response(&R, rfc_key, &e) == WK_OK);
    CHECK(wk_ws_upgrade_check_response(&R, "AAAAAAAAAAAAAAAAAAAAAA==", &e) == WK_ERR_HOST_WS_UPGRADE);
}

static void refused(const char *req, const char *path, wk_code code, const char *status)
{
    size_t used;
    wk_error e;
    REQUIRE(parse_split(&H, false, req, 3, &used, &e) == WK_DONE);
    uint8_t ans[WK_WS_RESPONSE_MAX + 1];
    wk_out out = {ans, WK_WS_RESPONSE_MAX, 0};
    CHECKF(wk_ws_upgrade_answer(&H, path, &out, &e) == code, "%s", req);
    CHECK(e.category == WK_CAT_TRANSPORT);
    ans[out.pos] = 0;
    CHECKF(strncmp((char *)ans + 9, status, 3) == 0 && strstr((char *)ans, "Connection: close") &&
               !strstr((char *)ans, "Accept"), "%s", (char *)ans);
}

static void test_refusals(void)
{
    const char *ok = "GET /interlace HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    refused(ok, "/other", WK_ERR_HOST_WS_PATH, "404");
    refused("GET /interlace?x HTTP/1.1\r\nHost: h\r\n\r\n", "/interlace", WK_ERR_HOST_WS_PATH, "404");
    refused("POST /interlace HTTP/1.1\r\nHost: h\r\n\r\n", "/interlace", WK_ERR_HOST_WS_UPGRADE, "405");
    refused("GET /interlace HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            "/interlace", WK_ERR_HOST_WS_UPGRADE, "400"); /* no Host */
    refused("GET /interlace HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            "/interlace", WK_ERR_HOST_WS_UPGRADE, "400"); /* no version */
    refused("GET /interlace HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
            "/interlace", WK_ERR_HOST_WS_UPGRADE, "426");
    const char *keys[] = {"abc", "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZR==", "dGhlIHNhbXBsZSBub25j*Q=="};
    for (size_t i = 0; i < 4; i++) {
        char req[400];
        snprintf(req, sizeof req, "GET /interlace HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", keys[i]);
        refused(req, "/interlace", WK_ERR_HOST_WS_UPGRADE, "400");
    }
    refused("GET /interlace HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", "/interlace",
            WK_ERR_HOST_WS_UPGRADE, "400");
}

static void test_http_errors(void)
{
    const char *bad[] = {
        "GET /x HTTP/1.1\nHost: h\r\n\r\n",        /* bare LF */
        "GET /x HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
        "GET /x HTTP/1.0\r\n\r\n",
        "GET  /x HTTP/1.1\r\n\r\n",
        "GET /x HTTP/1.1\r\nHo st: h\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost h\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost: a\x01\r\n\r\n",
        "GET /x HTTP/1.1\r\r\n\r\n",
        "\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t split = 0; split <= strlen(bad[i]); split++) {
            size_t used;
            wk_error e;
            CHECKF(parse_split(&H, false, bad[i], split, &used, &e) == WK_ERROR && e.code == WK_ERR_HOST_WS_UPGRADE &&
                       e.has_offset, "case %zu split %zu", i, split);
        }
    }
    /* responses: status line shape */
    size_t used;
    wk_error e;
    CHECK(parse_split(&H, true, "HTTP/1.1 20 OK\r\n\r\n", 4, &used, &e) == WK_ERROR);
    CHECK(parse_split(&H, true, "HTTP/1.1 404\r\n\r\n", 4, &used, &e) == WK_DONE && H.status == 404);
    CHECK(wk_ws_upgrade_check_response(&H, rfc_key, &e) == WK_ERR_HOST_WS_UPGRADE && strstr(e.msg, "404"));
    /* the bound: 8192 bytes */
    static char big[WK_WS_HTTP_MAX + 100];
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    memset(big + 19, 'a', sizeof big - 19 - 1);
    big[sizeof big - 1] = 0;
    CHECK(parse_split(&H, false, big, 100, &used, &e) == WK_ERROR && e.offset == WK_WS_HTTP_MAX);
    /* too many fields */
    char many[4096] = "GET / HTTP/1.1\r\n";
    for (int i = 0; i <= WK_WS_HTTP_MAX_FIELDS; i++) strcat(many, "A: b\r\n");
    strcat(many, "\r\n");
    CHECK(parse_split(&H, false, many, 1, &used, &e) == WK_ERROR && strstr(e.msg, "too many"));
}

/* ---- frames ---------------------------------------------------------------------------------- */
typedef struct seen {
    uint8_t data[70000];
    size_t len;
    int pings, closes;
    uint8_t ping[WK_WS_CONTROL_MAX];
    size_t ping_len;
    uint16_t code;
    wk_code fail;
    uint64_t off;
} seen;

/* Reads p[0..n) with a reader in pieces of `step` bytes (0: whole). */
static void read_all(const uint8_t *p, size_t n, bool server, uint64_t max, size_t step, seen *s)
{
    memset(s, 0, sizeof *s);
    wk_error e;
    wk_ws_reader_params prm = {server, max, NULL};
    wk_ws_reader *r = wk_ws_reader_create(&prm, &e);
    size_t pos = 0;
    for (;;) {
        size_t lim = step && pos + step < n ? pos + step : n;
        wk_in in = {p, lim, pos};
        wk_result res;
        while ((res = wk_ws_reader_read(r, &in, &e)) == WK_EVENT) {
            const uint8_t *d;
            size_t k;
            wk_ws_event ev = wk_ws_reader_event(r, &d, &k);
            if (ev == WK_WS_EVENT_DATA) {
                if (s->len + k <= sizeof s->data) memcpy(s->data + s->len, d, k);
                s->len += k;
            } else if (ev == WK_WS_EVENT_PING) {
                s->pings++;
                memcpy(s->ping, d, k);
                s->ping_len = k;
            } else if (ev == WK_WS_EVENT_CLOSE) {
                s->closes++;
                s->code = wk_ws_reader_close_code(r, NULL);
            }
        }
        if (res == WK_ERROR) {
            s->fail = e.code;
            s->off = e.offset;
            break;
        }
        pos = in.pos;
        if (res == WK_DONE || lim == n) break;
    }
    wk_ws_reader_destroy(r);
}

/* Reads whole and at every step size 1..8 and 13; all the same. */
static void read_every(const uint8_t *p, size_t n, bool server, uint64_t max, seen *s)
{
    static seen t;
    read_all(p, n, server, max, 0, s);
    size_t steps[] = {1, 2, 3, 5, 7, 8, 13, 4096};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        read_all(p, n, server, max, steps[i], &t);
        CHECKF(t.len == s->len && t.pings == s->pings && t.closes == s->closes && t.code == s->code &&
                   t.fail == s->fail && t.off == s->off && memcmp(t.data, s->data, s->len < sizeof s->data ? s->len : 0) == 0,
               "step %zu", steps[i]);
    }
}

static seen S;

static void test_rfc_frames(void)
{
    /* RFC 6455 5.7: text frames are refused (ILTP uses binary messages) */
    const uint8_t text[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
    read_every(text, sizeof text, false, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_TEXT && S.off == 0 && S.len == 0);
    const uint8_t mtext[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
    read_every(mtext, sizeof mtext, true, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_TEXT);
    const uint8_t ftext[] = {0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f};
    read_every(ftext, sizeof ftext, false, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_TEXT && S.off == 0);
    /* the same bytes as binary: delivered */
    uint8_t mbin[sizeof mtext];
    memcpy(mbin, mtext, sizeof mtext);
    mbin[0] = 0x82;
    read_every(mbin, sizeof mbin, true, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 5 && memcmp(S.data, "Hello", 5) == 0);
    uint8_t fbin[sizeof ftext];
    memcpy(fbin, ftext, sizeof ftext);
    fbin[0] = 0x02;
    read_every(fbin, sizeof fbin, false, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 5 && memcmp(S.data, "Hello", 5) == 0);
    /* but masked by the wrong side: a protocol error */
    read_every(mbin, sizeof mbin, false, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_PROTOCOL);
    read_every(fbin, sizeof fbin, true, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_PROTOCOL);
    /* unmasked ping "Hello", masked pong "Hello" */
    const uint8_t ping[] = {0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
    read_every(ping, sizeof ping, false, 0, &S);
    CHECK(S.fail == WK_OK && S.pings == 1 && S.ping_len == 5 && memcmp(S.ping, "Hello", 5) == 0);
    const uint8_t pong[] = {0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
    read_every(pong, sizeof pong, true, 0, &S);
    CHECK(S.fail == WK_OK && S.pings == 0 && S.len == 0);
    /* 256 bytes and 64 KiB in one unmasked binary frame */
    static uint8_t big[10 + 65536];
    uint8_t h256[] = {0x82, 0x7E, 0x01, 0x00};
    memcpy(big, h256, 4);
    for (int i = 0; i < 256; i++) big[4 + i] = (uint8_t)i;
    read_every(big, 4 + 256, false, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 256 && S.data[255] == 255);
    uint8_t h64k[] = {0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0};
    memcpy(big, h64k, 10);
    for (int i = 0; i < 65536; i++) big[10 + i] = (uint8_t)(i * 7);
    read_all(big, sizeof big, false, 0, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 65536 && S.data[65535] == (uint8_t)(65535 * 7));
    read_all(big, sizeof big, false, 0, 1, &S);
    CHECK(S.fail == WK_OK && S.len == 65536);
    /* the bound: 65536 is fine at max 65536, refused at 65535 at its header (offset 0) */
    read_all(big, sizeof big, false, 65536, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 65536);
    read_all(big, 20, false, 65535, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_MESSAGE_TOO_BIG && S.off == 0 && S.len == 0);
    /* non-minimal length forms (libwslay's rule) */
    const uint8_t nonmin[] = {0x82, 0x7E, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'};
    read_every(nonmin, sizeof nonmin, false, 0, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_PROTOCOL);
}

static void test_rules(void)
{
    struct { const char *what; uint8_t b[16]; size_t n; bool server; wk_code want; uint64_t off; } cases[] = {
        {"rsv1", {0xC2, 0x01, 'x'}, 3, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"opcode 3", {0x83, 0x01, 'x'}, 3, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"opcode 0xB", {0x8B, 0x00}, 2, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"continuation first", {0x80, 0x01, 'x'}, 3, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"binary inside fragmented", {0x02, 0x01, 'a', 0x82, 0x01, 'b'}, 6, false, WK_ERR_HOST_WS_PROTOCOL, 3},
        {"fragmented ping", {0x09, 0x00}, 2, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"long ping", {0x89, 0x7E, 0x00, 0x7E}, 4, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"close of 1 byte", {0x88, 0x01, 0x03}, 3, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"close 1005", {0x88, 0x02, 0x03, 0xED}, 4, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"close 999", {0x88, 0x02, 0x03, 0xE7}, 4, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"close reason not UTF-8", {0x88, 0x03, 0x03, 0xE8, 0xFF}, 5, false, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"unmasked to a server", {0x82, 0x01, 'x'}, 3, true, WK_ERR_HOST_WS_PROTOCOL, 0},
        {"after data", {0x82, 0x01, 'x', 0x81, 0x00}, 5, false, WK_ERR_HOST_WS_TEXT, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        read_every(cases[i].b, cases[i].n, cases[i].server, 0, &S);
        CHECKF(S.fail == cases[i].want && S.off == cases[i].off, "%s: %d at %llu", cases[i].what, S.fail,
               (unsigned long long)S.off);
    }
    /* close frames: 1000 with a reason, none (1005), 4000; bytes after a close are not read */
    const uint8_t c1[] = {0x88, 0x05, 0x03, 0xE8, 'b', 'y', 'e', 0x82, 0x01, 'x'};
    read_every(c1, sizeof c1, false, 0, &S);
    CHECK(S.fail == WK_OK && S.closes == 1 && S.code == 1000 && S.len == 0);
    const uint8_t c2[] = {0x88, 0x00};
    read_every(c2, sizeof c2, false, 0, &S);
    CHECK(S.closes == 1 && S.code == WK_WS_CLOSE_NO_STATUS);
    const uint8_t c3[] = {0x88, 0x02, 0x0F, 0xA0};
    read_every(c3, sizeof c3, false, 0, &S);
    CHECK(S.closes == 1 && S.code == 4000);
    /* a control frame between fragments */
    const uint8_t mid[] = {0x02, 0x02, 'a', 'b', 0x89, 0x01, 'p', 0x00, 0x01, 'c', 0x80, 0x01, 'd'};
    read_every(mid, sizeof mid, false, 0, &S);
    CHECK(S.fail == WK_OK && S.len == 4 && memcmp(S.data, "abcd", 4) == 0 && S.pings == 1);
    /* the bound across fragments: 3 + 3 over 5 fails at the second header (offset 5) */
    const uint8_t frag[] = {0x02, 0x03, 'a', 'b', 'c', 0x80, 0x03, 'd', 'e', 'f'};
    read_every(frag, sizeof frag, false, 5, &S);
    CHECK(S.fail == WK_ERR_HOST_WS_MESSAGE_TOO_BIG && S.off == 5 && S.len == 3);
    read_every(frag, sizeof frag, false, 6, &S);
    CHECK(S.fail == WK_OK && S.len == 6);
    /* two messages of 5 each under a bound of 5: fine (the bound is per message) */
    const uint8_t two[] = {0x82, 0x05, 'a', 'b', 'c', 'd', 'e', 0x82, 0x05, 'f', 'g', 'h', 'i', 'j'};
    read_every(two, sizeof two, false, 5, &S);
    CHECK(S.fail == WK_OK && S.len == 10);
    /* finish: clean only after a close frame; sticky errors */
    wk_error e;
    wk_ws_reader_params prm = {false, 0, NULL};
    wk_ws_reader *r = wk_ws_reader_create(&prm, &e);
    wk_in in = {two, 9, 0};
    while (wk_ws_reader_read(r, &in, &e) == WK_EVENT) {}
    CHECK(wk_ws_reader_finish(r, NULL, &e) == WK_ERROR && e.code == WK_ERR_HOST_WS_CLOSED && e.category == WK_CAT_TRANSPORT &&
          strstr(e.msg, "inside a message"));
    wk_ws_reader_destroy(r);
    r = wk_ws_reader_create(&prm, &e);
    static const uint8_t text[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
    wk_in t = {text, sizeof text, 0};
    CHECK(wk_ws_reader_read(r, &t, &e) == WK_ERROR && e.code == WK_ERR_HOST_WS_TEXT && e.category == WK_CAT_PEER_PROTOCOL);
    wk_in none = {NULL, 0, 0};
    CHECK(wk_ws_reader_read(r, &none, &e) == WK_ERROR && e.code == WK_ERR_HOST_WS_TEXT);
    CHECK(wk_ws_reader_finish(r, NULL, &e) == WK_ERROR && e.code == WK_ERR_HOST_WS_TEXT);
    wk_ws_reader_destroy(r);
    CHECK(wk_ws_close_code_for(WK_ERR_HOST_WS_TEXT) == 1003 && wk_ws_close_code_for(WK_ERR_HOST_WS_MESSAGE_TOO_BIG) == 1009 &&
          wk_ws_close_code_for(WK_ERR_HOST_WS_PROTOCOL) == 1002);
}

static void test_writer(void)
{
    static uint8_t payload[70000], out_buf[80000];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 31 + 7);
    size_t sizes[] = {0, 1, 125, 126, 127, 65535, 65536, 70000};
    for (int mask = 0; mask <= 1; mask++) {
        wk_error e;
        wk_ws_writer *w = wk_ws_writer_create(mask, NULL, &e);
        REQUIRE(w);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t n = sizes[i];
            size_t fs = wk_ws_frame_size(w, n);
            CHECK(fs == n + 2 + (n < 126 ? 0 : n < 65536 ? 2 : 8) + (mask ? 4 : 0));
            memset(out_buf, 0xAA, sizeof out_buf);
            wk_out small = {out_buf, fs - 1, 0};
            CHECK(wk_ws_writer_frame(w, WK_WS_OP_BINARY, payload, n, &small, &e) == WK_NEED_OUTPUT && small.pos == 0 &&
                  out_buf[0] == 0xAA);
            wk_out out = {out_buf, sizeof out_buf, 0};
            REQUIRE(wk_ws_writer_frame(w, WK_WS_OP_BINARY, payload, n, &out, &e) == WK_DONE && out.pos == fs);
            CHECK((out_buf[1] & 0x80) == (mask ? 0x80 : 0));
            read_all(out_buf, out.pos, mask, 0, 0, &S);
            CHECKF(S.fail == WK_OK && S.len == n && memcmp(S.data, payload, n) == 0, "size %zu mask %d", n, mask);
        }
        wk_out out = {out_buf, sizeof out_buf, 0};
        uint8_t big[126] = {0};
        CHECK(wk_ws_writer_frame(w, WK_WS_OP_PING, big, 126, &out, &e) == WK_ERROR && e.code == WK_ERR_ARG);
        CHECK(wk_ws_writer_close(w, 1000, &out, &e) == WK_DONE);
        read_all(out_buf, out.pos, mask, 0, 0, &S);
        CHECK(S.closes == 1 && S.code == 1000);
        wk_ws_writer_destroy(w);
    }
    /* two masked frames get different keys */
    wk_error e;
    wk_ws_writer *w = wk_ws_writer_create(true, NULL, &e);
    uint8_t f1[16], f2[16];
    wk_out o1 = {f1, sizeof f1, 0}, o2 = {f2, sizeof f2, 0};
    wk_ws_writer_frame(w, WK_WS_OP_BINARY, (const uint8_t *)"abcd", 4, &o1, &e);
    wk_ws_writer_frame(w, WK_WS_OP_BINARY, (const uint8_t *)"abcd", 4, &o2, &e);
    CHECK(memcmp(f1 + 2, f2 + 2, 4) != 0);
    wk_ws_writer_destroy(w);
}

int main(void)
{
    test_accept();
    test_request();
    test_refusals();
    test_http_errors();
    test_rfc_frames();
    test_rules();
    test_writer();
    return wk_test_summary("host_ws_wire");
}
