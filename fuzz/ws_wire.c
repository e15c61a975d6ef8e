/* libFuzzer target: the WebSocket wire of the ws:/wss: carriers (src/host/ws_wire.c): the HTTP/1.1
 * upgrade parser with the upgrade checks, and the frame reader over libwslay.
 *
 * Input: byte 0 picks the mode and a chunk size, byte 1 a small message bound, the rest is data.
 *   mode bit 0  HTTP: the data is a request (server side: wk_ws_upgrade_answer) or a response
 *               (client side: wk_ws_upgrade_check_response with a fixed key). The parser is run
 *               whole and in chunks: same verdict, same offset, same consumed length (never past
 *               the blank line); an accepted request is answered 101, a refusal is a complete
 *               HTTP answer; errors are typed. The bytes after the header block then go to:
 *   frames      the frame reader as a server (masked frames required) or a client, fed whole and
 *               in chunks: the two runs give the same events (data bytes concatenated, pings,
 *               the close code) and the same verdict with the same offset; delivered data never
 *               exceeds the input; errors are the ws codes with their categories; finish is OK
 *               exactly after a close frame. A message over the bound must fail.
 *   mode bit 1  frames only (no HTTP in front).
 *   Also a round trip: the data framed by the writer (masked or not, in pieces) is read back
 *   unchanged. */
#include "ws_wire.h" /* white-box: src/host is on the include path */
#include <string.h>

#include "fuzz_check.h"

typedef struct run {
    uint8_t data[1 << 16];
    size_t data_len;             /* bytes of binary payload seen (data[] keeps the first 64 KiB) */
    uint64_t data_hash;
    unsigned pings, pongs_len;
    uint16_t close_code;
    wk_code fail;
    uint64_t fail_off;
    size_t consumed;
} run;

static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void frames(const uint8_t *p, size_t n, size_t chunk, bool server, uint64_t max, run *out)
{
    memset(out, 0, sizeof *out);
    out->data_hash = 0xcbf29ce484222325ull;
    wk_error e;
    wk_ws_reader_params prm = {server, max, NULL};
    wk_ws_reader *r = wk_ws_reader_create(&prm, &e);
    CHECK(r);
    size_t pos = 0;
    bool done = false;
    while (!done) {
        size_t lim = chunk && pos + chunk < n ? pos + chunk : n;
        wk_in in = {p, lim, pos};
        for (;;) {
            wk_result res = wk_ws_reader_read(r, &in, &e);
            if (res == WK_ERROR) {
                CHECK(e.code == WK_ERR_HOST_WS_PROTOCOL || e.code == WK_ERR_HOST_WS_TEXT ||
                      e.code == WK_ERR_HOST_WS_MESSAGE_TOO_BIG);
                CHECK(e.category == (e.code == WK_ERR_HOST_WS_TEXT ? WK_CAT_PEER_PROTOCOL : WK_CAT_TRANSPORT));
                CHECK(e.has_offset && e.offset <= n);
                out->fail = e.code;
                out->fail_off = e.offset;
                /* sticky */
                wk_error e2;
                wk_in none = {NULL, 0, 0};
                CHECK(wk_ws_reader_read(r, &none, &e2) == WK_ERROR && e2.code == e.code && e2.offset == e.offset);
                done = true;
                break;
            }
            if (res == WK_DONE) {
                CHECK(wk_ws_reader_close_code(r, NULL) != 0);
                done = true;
                break;
            }
            if (res == WK_NEED_INPUT) {
                CHECK(in.pos == in.size);
                break;
            }
            CHECK(res == WK_EVENT);
            const uint8_t *d;
            size_t len;
            wk_ws_event ev = wk_ws_reader_event(r, &d, &len);
            if (ev == WK_WS_EVENT_DATA) {
                CHECK(d && len > 0);
                if (out->data_len < sizeof out->data) {
                    size_t k = len < sizeof out->data - out->data_len ? len : sizeof out->data - out->data_len;
                    memcpy(out->data + out->data_len, d, k);
                }
                out->data_len += len;
                out->data_hash = mix(out->data_hash, d, len);
                CHECK(out->data_len <= in.pos);
            } else if (ev == WK_WS_EVENT_PING) {
                CHECK(len <= WK_WS_CONTROL_MAX);
                out->pings++;
                out->pongs_len += (unsigned)len;
            } else {
                CHECK(ev == WK_WS_EVENT_CLOSE);
                const char *reason;
                out->close_code = wk_ws_reader_close_code(r, &reason);
                CHECK(out->close_code >= 1000 && reason);
            }
        }
        pos = in.pos;
        if (lim == n && !done) break;
    }
    out->consumed = pos;
    wk_result fr = wk_ws_reader_finish(r, NULL, &e);
    wk_code fin = fr == WK_DONE ? WK_OK : e.code;
    CHECK(fr == WK_DONE || fr == WK_ERROR);
    if (out->fail) CHECK(fin == out->fail);
    else if (out->close_code) CHECK(fin == WK_OK);
    else CHECK(fin == WK_ERR_HOST_WS_CLOSED && e.category == WK_CAT_TRANSPORT);
    CHECK(out->data_len <= n);
    wk_ws_reader_destroy(r);
}

static void same(const run *a, const run *b)
{
    CHECK(a->fail == b->fail && a->fail_off == b->fail_off);
    CHECK(a->data_len == b->data_len && a->data_hash == b->data_hash);
    CHECK(a->pings == b->pings && a->pongs_len == b->pongs_len && a->close_code == b->close_code);
}

/* Parses an HTTP block in chunks; returns the verdict, *used the bytes consumed. */
static wk_result http(wk_ws_http *h, bool response, const uint8_t *p, size_t n, size_t chunk, size_t *used,
                      wk_error *e)
{
    wk_ws_http_init(h, response);
    size_t pos = 0;
    for (;;) {
        size_t lim = chunk && pos + chunk < n ? pos + chunk : n;
        wk_in in = {p, lim, pos};
        wk_result r = wk_ws_http_parse(h, &in, e);
        pos = in.pos;
        if (r != WK_NEED_INPUT || lim == n) {
            *used = pos;
            return r;
        }
        CHECK(in.pos == in.size);
    }
}

static void roundtrip(const uint8_t *p, size_t n, bool mask, size_t piece)
{
    wk_error e;
    wk_ws_writer *w = wk_ws_writer_create(mask, NULL, &e);
    CHECK(w);
    static uint8_t buf[(1 << 16) + 4096];
    wk_out out = {buf, sizeof buf, 0};
    size_t off = 0;
    while (off < n) {
        size_t k = n - off < piece ? n - off : piece;
        wk_out tiny = {buf, 1, 0};
        if (wk_ws_frame_size(w, k) > 1) CHECK(wk_ws_writer_frame(w, WK_WS_OP_BINARY, p + off, k, &tiny, &e) == WK_NEED_OUTPUT && tiny.pos == 0);
        if (wk_ws_writer_frame(w, WK_WS_OP_BINARY, p + off, k, &out, &e) != WK_DONE) break;
        off += k;
    }
    size_t framed = off;
    CHECK(wk_ws_writer_close(w, 1000, &out, &e) == WK_DONE || out.size - out.pos < 8);
    wk_ws_writer_destroy(w);
    run *r = malloc(sizeof *r);
    CHECK(r);
    frames(buf, out.pos, 0, mask, 1u << 20, r);
    CHECK(r->fail == WK_OK && r->data_len == framed);
    CHECK(memcmp(r->data, p, framed < sizeof r->data ? framed : sizeof r->data) == 0);
    free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    uint8_t mode = data[0];
    size_t chunk = (size_t)(mode >> 2) + 1;
    uint64_t max = ((uint64_t)data[1] << 4) + 1;
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    bool server = (mode & 1) == 0;
    static wk_ws_http h1, h2;
    if (!(mode & 2)) {
        wk_error e1, e2;
        size_t u1, u2;
        wk_result r1 = http(&h1, !server, p, n, 0, &u1, &e1);
        wk_result r2 = http(&h2, !server, p, n, chunk, &u2, &e2);
        CHECK(r1 == r2 && u1 == u2);
        if (r1 == WK_ERROR) {
            CHECK(e1.code == WK_ERR_HOST_WS_UPGRADE && e2.code == e1.code && e1.offset == e2.offset);
            CHECK(e1.category == WK_CAT_TRANSPORT);
            return 0;
        }
        if (r1 == WK_NEED_INPUT) {
            CHECK(u1 == n);
            return 0;
        }
        CHECK(r1 == WK_DONE && u1 >= 4 && memcmp(p + u1 - 4, "\r\n\r\n", 4) == 0);
        if (server) {
            uint8_t ans[WK_WS_RESPONSE_MAX];
            wk_out out = {ans, sizeof ans, 0};
            wk_code c = wk_ws_upgrade_answer(&h1, "/interlace", &out, &e1);
            CHECK(out.pos > 12 && memcmp(ans, "HTTP/1.1 ", 9) == 0 && memcmp(ans + out.pos - 4, "\r\n\r\n", 4) == 0);
            if (c == WK_OK) CHECK(memcmp(ans + 9, "101", 3) == 0);
            else CHECK((c == WK_ERR_HOST_WS_PATH && memcmp(ans + 9, "404", 3) == 0) ||
                       (c == WK_ERR_HOST_WS_UPGRADE && ans[9] == '4'));
            if (c != WK_OK) return 0;
        } else {
            wk_code c = wk_ws_upgrade_check_response(&h1, "dGhlIHNhbXBsZSBub25jZQ==", &e1);
            CHECK(c == WK_OK || c == WK_ERR_HOST_WS_UPGRADE);
            if (c == WK_OK) CHECK(h1.status == 101);
            if (c != WK_OK) return 0;
        }
        p += u1;
        n -= u1;
    }
    static run a, b;
    frames(p, n, 0, server, max, &a);
    frames(p, n, chunk, server, max, &b);
    same(&a, &b);
    if (n <= 8192) roundtrip(p, n, mode & 1, chunk * 7 + 1);
    return 0;
}
