/* wirekit host: the WebSocket wire without I/O (ws_wire.h): the HTTP/1.1 upgrade and the frame
 * reader and writer over libwslay's frame layer. */
#include "ws_wire.h"
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wslay/wslay.h>

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
#define WSLAY_CHUNK 4096 /* the largest payload piece libwslay returns (its frame buffer) */

/* =============================================================================================
 * HTTP/1.1 header blocks
 * =========================================================================================== */
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static bool ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (lower((unsigned char)*a) != lower((unsigned char)*b)) return false;
    return *a == *b;
}

static bool ieqn(const char *a, size_t n, const char *b)
{
    size_t i = 0;
    for (; i < n && b[i]; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i])) return false;
    return i == n && b[i] == 0;
}

/* RFC 7230 tchar */
static bool is_tchar(int c)
{
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

void wk_ws_http_init(wk_ws_http *h, bool response)
{
    memset(h, 0, offsetof(wk_ws_http, buf));
    h->response = response;
    h->buf[0] = 0;
}

static wk_result http_bad(wk_error *err, size_t at, const char *what)
{
    wk_error_set(err, WK_ERR_HOST_WS_UPGRADE, at, "HTTP upgrade: %s", what);
    return WK_ERROR;
}

/* Parses the first line, in place (buf[0..end) without its CRLF, NUL-terminated). */
static wk_result parse_start_line(wk_ws_http *h, size_t end, wk_error *err)
{
    char *s = h->buf;
    if (h->response) {
        /* HTTP/1.1 SP 3DIGIT SP reason */
        if (end < 12 || memcmp(s, "HTTP/1.1 ", 9) != 0) return http_bad(err, 0, "status line is not HTTP/1.1");
        for (int i = 9; i < 12; i++)
            if (s[i] < '0' || s[i] > '9') return http_bad(err, (size_t)i, "status code is not 3 digits");
        if (end > 12 && s[12] != ' ') return http_bad(err, 12, "no space after the status code");
        h->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
        h->reason = end > 12 ? s + 13 : s + end;
        return WK_DONE;
    }
    /* method SP request-target SP HTTP/1.1 */
    size_t i = 0;
    while (i < end && is_tchar((unsigned char)s[i])) i++;
    if (i == 0 || i >= end || s[i] != ' ') return http_bad(err, i, "bad request method");
    s[i] = 0;
    h->method = s;
    size_t t = ++i;
    while (i < end && s[i] != ' ') i++;
    if (i == t || i >= end) return http_bad(err, i, "bad request target");
    s[i] = 0;
    h->target = s + t;
    i++;
    if (end - i != 8 || memcmp(s + i, "HTTP/1.1", 8) != 0) return http_bad(err, i, "request is not HTTP/1.1");
    return WK_DONE;
}

/* Parses one header field line buf[start..end) in place. */
static wk_result parse_field(wk_ws_http *h, size_t start, size_t end, wk_error *err)
{
    char *s = h->buf;
    if (s[start] == ' ' || s[start] == '\t') return http_bad(err, start, "folded header line");
    size_t i = start;
    while (i < end && is_tchar((unsigned char)s[i])) i++;
    if (i == start || i >= end || s[i] != ':') return http_bad(err, i, "bad header field name");
    if (h->nfields == WK_WS_HTTP_MAX_FIELDS) return http_bad(err, start, "too many header fields");
    s[i] = 0;
    size_t v = i + 1;
    while (v < end && (s[v] == ' ' || s[v] == '\t')) v++;
    size_t ve = end;
    while (ve > v && (s[ve - 1] == ' ' || s[ve - 1] == '\t')) ve--;
    s[ve] = 0;
    h->fields[h->nfields].name = s + start;
    h->fields[h->nfields].value = s + v;
    h->nfields++;
    return WK_DONE;
}

wk_result wk_ws_http_parse(wk_ws_http *h, wk_in *in, wk_error *err)
{
    if (h->done) return WK_DONE;
    while (in->pos < in->size) {
        if (h->len == WK_WS_HTTP_MAX) return http_bad(err, h->len, "header block over 8192 bytes");
        uint8_t c = in->src[in->pos];
        size_t at = h->len;
        /* bytes allowed in a line: VCHAR, SP, HTAB, obs-text; CR only before LF */
        if (c == '\n') {
            if (at == h->line_start || h->buf[at - 1] != '\r') return http_bad(err, at, "bare LF (lines end in CRLF)");
        } else if (c == '\r') {
            if (at > h->line_start && h->buf[at - 1] == '\r') return http_bad(err, at, "CR not followed by LF");
        } else if (c < 0x20 && c != '\t') {
            return http_bad(err, at, "control byte in the header block");
        } else if (c == 0x7f) {
            return http_bad(err, at, "DEL in the header block");
        } else if (at > h->line_start && h->buf[at - 1] == '\r') {
            return http_bad(err, at - 1, "CR not followed by LF");
        }
        h->buf[h->len++] = (char)c;
        in->pos++;
        if (c != '\n') continue;
        /* a complete line buf[line_start .. len-2) */
        size_t ls = h->line_start, le = h->len - 2;
        h->line_start = h->len;
        if (ls == 0) {
            if (le == 0) return http_bad(err, 0, "empty start line");
            h->buf[le] = 0;
            if (parse_start_line(h, le, err) != WK_DONE) return WK_ERROR;
            continue;
        }
        if (le == ls) { /* the blank line: done */
            h->buf[le] = 0;
            h->done = true;
            return WK_DONE;
        }
        h->buf[le] = 0;
        if (parse_field(h, ls, le, err) != WK_DONE) return WK_ERROR;
    }
    return WK_NEED_INPUT;
}

const char *wk_ws_http_field_get(const wk_ws_http *h, const char *name)
{
    for (size_t i = 0; i < h->nfields; i++)
        if (ieq(h->fields[i].name, name)) return h->fields[i].value;
    return NULL;
}

bool wk_ws_http_has_token(const wk_ws_http *h, const char *name, const char *token)
{
    for (size_t i = 0; i < h->nfields; i++) {
        if (!ieq(h->fields[i].name, name)) continue;
        const char *p = h->fields[i].value;
        while (*p) {
            while (*p == ' ' || *p == '\t' || *p == ',') p++;
            const char *e = p;
            while (*e && *e != ',') e++;
            const char *te = e;
            while (te > p && (te[-1] == ' ' || te[-1] == '\t')) te--;
            if (te > p && ieqn(p, (size_t)(te - p), token)) return true;
            p = e;
        }
    }
    return false;
}

/* =============================================================================================
 * The upgrade handshake
 * =========================================================================================== */
static wk_code b64_encode(const uint8_t *p, size_t n, char *dst, size_t cap, wk_error *err)
{
    gnutls_datum_t in = {(unsigned char *)p, (unsigned)n}, out = {NULL, 0};
    if (gnutls_base64_encode2(&in, &out) < 0 || out.size >= cap) {
        gnutls_free(out.data);
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "base64 encoding failed");
    }
    memcpy(dst, out.data, out.size);
    dst[out.size] = 0;
    gnutls_free(out.data);
    return WK_OK;
}

wk_code wk_ws_accept_for(const char *key, char accept[WK_WS_ACCEPT_LEN + 1], wk_error *err)
{
    char text[WK_WS_KEY_LEN + sizeof ws_guid];
    size_t kl = strlen(key);
    if (kl != WK_WS_KEY_LEN) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "key of %zu characters", kl);
    memcpy(text, key, kl);
    memcpy(text + kl, ws_guid, sizeof ws_guid - 1);
    uint8_t digest[20];
    if (gnutls_hash_fast(GNUTLS_DIG_SHA1, text, kl + sizeof ws_guid - 1, digest) < 0)
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "SHA-1 failed");
    return b64_encode(digest, sizeof digest, accept, WK_WS_ACCEPT_LEN + 1, err);
}

/* True if key is canonical base64 of exactly 16 bytes (24 characters ending in "=="). */
static bool key_valid(const char *key)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!key || strlen(key) != WK_WS_KEY_LEN || key[22] != '=' || key[23] != '=') return false;
    for (int i = 0; i < 22; i++)
        if (!strchr(alpha, key[i]) || !key[i]) return false;
    /* 16 bytes = 128 bits: the 22nd character carries 2 bits, its low 4 bits must be zero */
    size_t v = (size_t)(strchr(alpha, key[21]) - alpha);
    return (v & 15) == 0;
}

static wk_result put_text(wk_out *out, const char *text, size_t n)
{
    if (out->size - out->pos < n) return WK_NEED_OUTPUT;
    memcpy(out->dst + out->pos, text, n);
    out->pos += n;
    return WK_DONE;
}

wk_result wk_ws_upgrade_request(const char *host_field, const char *path, char key[WK_WS_KEY_LEN + 1],
                                wk_out *out, wk_error *err)
{
    uint8_t raw[16];
    if (gnutls_rnd(GNUTLS_RND_NONCE, raw, sizeof raw) < 0) {
        wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "no random bytes for Sec-WebSocket-Key");
        return WK_ERROR;
    }
    if (b64_encode(raw, sizeof raw, key, WK_WS_KEY_LEN + 1, err) != WK_OK) return WK_ERROR;
    char text[WK_WS_HTTP_MAX];
    int n = snprintf(text, sizeof text,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
                     path, host_field, key);
    if (n < 0 || (size_t)n >= sizeof text) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "upgrade request too long");
        return WK_ERROR;
    }
    return put_text(out, text, (size_t)n);
}

__attribute__((format(printf, 2, 3))) static wk_code up_bad(wk_error *err, const char *fmt, ...)
{
    char m[100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return wk_error_set(err, WK_ERR_HOST_WS_UPGRADE, WK_NO_OFFSET, "%s", m);
}

wk_code wk_ws_upgrade_check_response(const wk_ws_http *resp, const char *key, wk_error *err)
{
    if (!resp->done || !resp->response) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "no response parsed");
    if (resp->status != 101) {
        char line[80];
        snprintf(line, sizeof line, "%d %.60s", resp->status, resp->reason ? resp->reason : "");
        return up_bad(err, "the server answered %s, not 101", line);
    }
    if (!wk_ws_http_has_token(resp, "Upgrade", "websocket")) return up_bad(err, "101 without Upgrade: websocket");
    if (!wk_ws_http_has_token(resp, "Connection", "upgrade")) return up_bad(err, "101 without Connection: Upgrade");
    char want[WK_WS_ACCEPT_LEN + 1];
    if (wk_ws_accept_for(key, want, err) != WK_OK) return err ? err->code : WK_ERR_BACKEND;
    const char *acc = wk_ws_http_field_get(resp, "Sec-WebSocket-Accept");
    if (!acc) return up_bad(err, "101 without Sec-WebSocket-Accept");
    if (strcmp(acc, want) != 0) return up_bad(err, "wrong Sec-WebSocket-Accept '%.40s' for our key", acc);
    if (wk_ws_http_field_get(resp, "Sec-WebSocket-Extensions"))
        return up_bad(err, "the server chose an extension we did not offer");
    if (wk_ws_http_field_get(resp, "Sec-WebSocket-Protocol"))
        return up_bad(err, "the server chose a subprotocol we did not offer");
    return WK_OK;
}

/* An HTTP error answer. */
static wk_code refuse(wk_out *out, int status, const char *reason, const char *extra, wk_code code,
                      wk_error *err, const char *why)
{
    char text[WK_WS_RESPONSE_MAX];
    int n = snprintf(text, sizeof text,
                     "HTTP/1.1 %d %s\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n", status, reason, extra);
    if (n > 0 && (size_t)n < sizeof text) put_text(out, text, (size_t)n);
    return wk_error_set(err, code, WK_NO_OFFSET, "%s (answered %d)", why, status);
}

wk_code wk_ws_upgrade_answer(const wk_ws_http *req, const char *path, wk_out *out, wk_error *err)
{
    if (out->size - out->pos < WK_WS_RESPONSE_MAX) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "answer buffer too small");
    if (!req->done || req->response) return wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "no request parsed");
    char why[160];
    if (strcmp(req->method, "GET") != 0) {
        snprintf(why, sizeof why, "method %.40s instead of GET", req->method);
        return refuse(out, 405, "Method Not Allowed", "Allow: GET\r\n", WK_ERR_HOST_WS_UPGRADE, err, why);
    }
    if (strcmp(req->target, path) != 0) {
        snprintf(why, sizeof why, "request for %.60s, not %.30s", req->target, path);
        return refuse(out, 404, "Not Found", "", WK_ERR_HOST_WS_PATH, err, why);
    }
    if (!wk_ws_http_field_get(req, "Host"))
        return refuse(out, 400, "Bad Request", "", WK_ERR_HOST_WS_UPGRADE, err, "no Host field");
    if (!wk_ws_http_has_token(req, "Upgrade", "websocket"))
        return refuse(out, 400, "Bad Request", "", WK_ERR_HOST_WS_UPGRADE, err, "no Upgrade: websocket");
    if (!wk_ws_http_has_token(req, "Connection", "upgrade"))
        return refuse(out, 400, "Bad Request", "", WK_ERR_HOST_WS_UPGRADE, err, "no Connection: Upgrade");
    const char *ver = wk_ws_http_field_get(req, "Sec-WebSocket-Version");
    if (!ver || strcmp(ver, "13") != 0) {
        snprintf(why, sizeof why, "Sec-WebSocket-Version %.20s%s, not 13", ver ? ver : "missing", ver ? "" : "");
        return refuse(out, ver ? 426 : 400, ver ? "Upgrade Required" : "Bad Request", "Sec-WebSocket-Version: 13\r\n",
                      WK_ERR_HOST_WS_UPGRADE, err, why);
    }
    const char *key = wk_ws_http_field_get(req, "Sec-WebSocket-Key");
    if (!key_valid(key)) {
        snprintf(why, sizeof why, "Sec-WebSocket-Key '%.40s' is not base64 of 16 bytes", key ? key : "(missing)");
        return refuse(out, 400, "Bad Request", "", WK_ERR_HOST_WS_UPGRADE, err, why);
    }
    char accept[WK_WS_ACCEPT_LEN + 1];
    if (wk_ws_accept_for(key, accept, err) != WK_OK) return err ? err->code : WK_ERR_BACKEND;
    char text[WK_WS_RESPONSE_MAX];
    int n = snprintf(text, sizeof text,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
    put_text(out, text, (size_t)n);
    return WK_OK;
}

/* =============================================================================================
 * Frames
 * =========================================================================================== */
static int genmask(uint8_t *buf, size_t len, void *ud)
{
    (void)ud;
    return gnutls_rnd(GNUTLS_RND_NONCE, buf, len) < 0 ? -1 : 0;
}

struct wk_ws_reader {
    wk_allocator a;
    wslay_frame_context_ptr fc;
    bool server;
    uint64_t max_message;
    wk_in *in;                   /* the caller's view during a call */
    uint64_t pulled;             /* transport bytes libwslay has taken */
    uint64_t frame_off;          /* transport offset of the current frame's first byte */
    uint64_t next_frame_off;     /* where the frame after the current one starts */
    bool in_frame;               /* inside a frame's payload */
    uint8_t op;                  /* opcode of the current frame */
    bool fin;
    uint64_t frame_left;         /* payload bytes of the current frame not yet handed out */
    bool msg_open;               /* a fragmented binary message awaits continuations */
    uint64_t msg_len;            /* bytes of the current binary message so far */
    uint8_t ctrl[WK_WS_CONTROL_MAX];
    size_t ctrl_len;
    bool closed, failed;
    wk_error fail;
    wk_ws_event ev;
    wk_ws_event pend;            /* a control event to report after the collected payload */
    const uint8_t *data;
    size_t data_len;
    uint16_t close_code;
    char close_reason[WK_WS_CONTROL_MAX];
    size_t coal_len;
    uint8_t coal[WK_WS_SLICE];   /* payload collected for one DATA event */
};

static ssize_t rd_recv(uint8_t *buf, size_t len, int flags, void *ud)
{
    (void)flags;
    wk_ws_reader *r = ud;
    if (!r->in) return 0;
    size_t avail = r->in->size - r->in->pos;
    if (avail == 0) return 0; /* libwslay: WANT_READ */
    size_t n = avail < len ? avail : len;
    memcpy(buf, r->in->src + r->in->pos, n);
    r->in->pos += n;
    r->pulled += n;
    return (ssize_t)n;
}

static ssize_t rd_send(const uint8_t *data, size_t len, int flags, void *ud)
{
    (void)data, (void)len, (void)flags, (void)ud;
    return -1;
}

wk_ws_reader *wk_ws_reader_create(const wk_ws_reader_params *p, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(p->allocator);
    wk_ws_reader *r = wk_allocator_zalloc(&a, sizeof *r, "WebSocket reader", err);
    if (!r) return NULL;
    r->a = a;
    r->server = p->server;
    r->max_message = p->max_message ? p->max_message : WK_WS_DEFAULT_MAX_MESSAGE;
    struct wslay_frame_callbacks cb = {rd_send, rd_recv, genmask};
    if (wslay_frame_context_init(&r->fc, &cb, r) != 0) {
        a.free(a.opaque, r);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "WebSocket frame context");
        return NULL;
    }
    return r;
}

void wk_ws_reader_destroy(wk_ws_reader *r)
{
    if (!r) return;
    wslay_frame_context_free(r->fc);
    r->a.free(r->a.opaque, r);
}

__attribute__((format(printf, 5, 6))) static wk_result rd_fail(wk_ws_reader *r, wk_error *err, wk_code code,
                                                               uint64_t off, const char *fmt, ...)
{
    char m[sizeof r->fail.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    r->failed = true;
    wk_error_set(&r->fail, code, off, "%s", m);
    if (err) *err = r->fail;
    return WK_ERROR;
}

static size_t header_size(uint64_t payload, bool masked)
{
    return 2 + (payload < 126 ? 0 : payload < 65536 ? 2 : 8) + (masked ? 4 : 0);
}

/* Checks a frame's header (its first chunk just came back from libwslay). */
static wk_result frame_begins(wk_ws_reader *r, const struct wslay_frame_iocb *io, wk_error *err)
{
    r->frame_off = r->next_frame_off;
    r->next_frame_off = r->frame_off + header_size(io->payload_length, io->mask) + io->payload_length;
    r->op = io->opcode;
    r->fin = io->fin;
    r->frame_left = io->payload_length;
    r->in_frame = true;
    uint64_t at = r->frame_off;
    if (io->rsv)
        return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "RSV bits 0x%x set (no extension was negotiated)", io->rsv);
    if (r->server && !io->mask)
        return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "unmasked frame from the client (opcode %u)", io->opcode);
    if (!r->server && io->mask)
        return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "masked frame from the server (opcode %u)", io->opcode);
    switch (io->opcode) {
    case WK_WS_OP_TEXT:
        return rd_fail(r, err, WK_ERR_HOST_WS_TEXT, at, "a text message (opcode %u): ILTP bytes travel in binary messages", io->opcode);
    case WK_WS_OP_BINARY:
        if (r->msg_open) return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "a new binary message (opcode %u) inside a fragmented one", io->opcode);
        r->msg_len = 0;
        break;
    case WK_WS_OP_CONT:
        if (!r->msg_open) return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "a continuation frame (opcode %u) outside a message", io->opcode);
        break;
    case WK_WS_OP_CLOSE:
    case WK_WS_OP_PING:
    case WK_WS_OP_PONG:
        r->ctrl_len = 0; /* libwslay has checked FIN and the 125-byte bound */
        return WK_DONE;
    default:
        return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, at, "reserved opcode %u", io->opcode);
    }
    if (io->payload_length > r->max_message - r->msg_len)
        return rd_fail(r, err, WK_ERR_HOST_WS_MESSAGE_TOO_BIG, at, "a message of at least %llu bytes, over the %llu-byte bound",
                       (unsigned long long)(r->msg_len + io->payload_length), (unsigned long long)r->max_message);
    r->msg_len += io->payload_length;
    r->msg_open = !io->fin;
    return WK_DONE;
}

static bool close_code_valid(unsigned c)
{
    return (c >= 1000 && c <= 1011 && c != 1004 && c != 1005 && c != 1006) || (c >= 3000 && c <= 4999);
}

/* A control frame is complete in r->ctrl. Returns WK_EVENT, WK_NEED_INPUT (pong: nothing to
 * report) or WK_ERROR. */
static wk_result control_done(wk_ws_reader *r, wk_error *err)
{
    if (r->op == WK_WS_OP_PONG) return WK_NEED_INPUT;
    if (r->op == WK_WS_OP_PING) {
        r->ev = WK_WS_EVENT_PING;
        r->data = r->ctrl;
        r->data_len = r->ctrl_len;
        return WK_EVENT;
    }
    /* close */
    if (r->ctrl_len == 1) return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, r->frame_off, "close frame with a %u-byte payload", 1);
    uint16_t code = WK_WS_CLOSE_NO_STATUS;
    if (r->ctrl_len >= 2) {
        code = (uint16_t)(r->ctrl[0] << 8 | r->ctrl[1]);
        if (!close_code_valid(code)) return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, r->frame_off, "invalid close status code %u", code);
        if (!wk_utf8_valid(r->ctrl + 2, r->ctrl_len - 2, NULL))
            return rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, r->frame_off, "close reason is not UTF-8 (code %u)", code);
        memcpy(r->close_reason, r->ctrl + 2, r->ctrl_len - 2);
        r->close_reason[r->ctrl_len - 2] = 0;
    }
    r->close_code = code;
    r->closed = true;
    r->ev = WK_WS_EVENT_CLOSE;
    return WK_EVENT;
}

/* The collected payload as one DATA event. */
static wk_result data_event(wk_ws_reader *r)
{
    r->in = NULL;
    r->ev = WK_WS_EVENT_DATA;
    r->data = r->coal;
    r->data_len = r->coal_len;
    return WK_EVENT;
}

wk_result wk_ws_reader_read(wk_ws_reader *r, wk_in *in, wk_error *err)
{
    r->data = NULL;
    r->data_len = 0;
    if (r->pend != WK_WS_EVENT_NONE) { /* a control event that came after collected payload */
        r->ev = r->pend;
        r->pend = WK_WS_EVENT_NONE;
        if (r->ev == WK_WS_EVENT_PING) {
            r->data = r->ctrl;
            r->data_len = r->ctrl_len;
        }
        return WK_EVENT;
    }
    if (r->failed) {
        if (err) *err = r->fail;
        return WK_ERROR;
    }
    r->ev = WK_WS_EVENT_NONE;
    if (r->closed) return WK_DONE;
    r->coal_len = 0;
    r->in = in;
    for (;;) {
        struct wslay_frame_iocb io;
        memset(&io, 0, sizeof io);
        ssize_t n = wslay_frame_recv(r->fc, &io);
        if (n == WSLAY_ERR_WANT_READ) {
            if (r->coal_len) return data_event(r);
            r->in = NULL;
            return WK_NEED_INPUT;
        }
        if (n < 0) {
            /* libwslay's own header checks: a control frame over 125 bytes or fragmented, a
             * length not in its shortest form, a length with the top bit set */
            rd_fail(r, err, WK_ERR_HOST_WS_PROTOCOL, r->next_frame_off, "invalid frame header (libwslay error %d)", (int)n);
            if (r->coal_len) return data_event(r); /* the payload before the bad frame, then the error */
            r->in = NULL;
            return WK_ERROR;
        }
        if (!r->in_frame && frame_begins(r, &io, err) == WK_ERROR) {
            if (r->coal_len) return data_event(r);
            r->in = NULL;
            return WK_ERROR;
        }
        r->frame_left -= io.data_length;
        bool frame_done = r->frame_left == 0;
        if (frame_done) r->in_frame = false;
        if (r->op >= WK_WS_OP_CLOSE) {
            memcpy(r->ctrl + r->ctrl_len, io.data, io.data_length);
            r->ctrl_len += io.data_length;
            if (!frame_done) continue;
            wk_result c = control_done(r, err);
            if (c == WK_NEED_INPUT) continue;
            if (r->coal_len) {
                if (c == WK_EVENT) r->pend = r->ev;
                return data_event(r);
            }
            r->in = NULL;
            return c;
        }
        if (io.data_length == 0) continue;
        /* collect payload (libwslay hands out at most its 4 KiB buffer at a time) so that the
         * owner sees slices of up to WK_WS_SLICE bytes */
        memcpy(r->coal + r->coal_len, io.data, io.data_length);
        r->coal_len += io.data_length;
        if (WK_WS_SLICE - r->coal_len < WSLAY_CHUNK) return data_event(r);
    }
}

wk_ws_event wk_ws_reader_event(const wk_ws_reader *r, const uint8_t **data, size_t *len)
{
    if (data) *data = r->data;
    if (len) *len = r->data_len;
    return r->ev;
}

uint16_t wk_ws_reader_close_code(const wk_ws_reader *r, const char **reason)
{
    if (reason) *reason = r->closed ? r->close_reason : NULL;
    return r->closed ? r->close_code : 0;
}

wk_result wk_ws_reader_finish(wk_ws_reader *r, const wk_in *rest, wk_error *err)
{
    if (r->failed) {
        if (err) *err = r->fail;
        return WK_ERROR;
    }
    if (r->closed) return WK_DONE;
    wk_error_set(err, WK_ERR_HOST_WS_CLOSED, r->pulled + (rest ? rest->size - rest->pos : 0),
                        "the connection ended without a WebSocket close frame%s",
                        r->in_frame || r->msg_open || r->pulled > r->next_frame_off ? " (inside a message)" : "");
    return WK_ERROR;
}

uint16_t wk_ws_close_code_for(wk_code code)
{
    switch (code) {
    case WK_ERR_HOST_WS_TEXT: return WK_WS_CLOSE_UNSUPPORTED;
    case WK_ERR_HOST_WS_MESSAGE_TOO_BIG: return WK_WS_CLOSE_TOO_BIG;
    default: return WK_WS_CLOSE_PROTOCOL;
    }
}

/* ---- the writer -------------------------------------------------------------------------- */
struct wk_ws_writer {
    wk_allocator a;
    wslay_frame_context_ptr fc;
    bool mask;
    wk_out *out;
};

static ssize_t wr_send(const uint8_t *data, size_t len, int flags, void *ud)
{
    (void)flags;
    wk_ws_writer *w = ud;
    /* the caller checked the room for the whole frame */
    memcpy(w->out->dst + w->out->pos, data, len);
    w->out->pos += len;
    return (ssize_t)len;
}

static ssize_t wr_recv(uint8_t *buf, size_t len, int flags, void *ud)
{
    (void)buf, (void)len, (void)flags, (void)ud;
    return -1;
}

wk_ws_writer *wk_ws_writer_create(bool mask, const wk_allocator *allocator, wk_error *err)
{
    wk_allocator a = wk_allocator_or_default(allocator);
    wk_ws_writer *w = wk_allocator_zalloc(&a, sizeof *w, "WebSocket writer", err);
    if (!w) return NULL;
    w->a = a;
    w->mask = mask;
    struct wslay_frame_callbacks cb = {wr_send, wr_recv, genmask};
    if (wslay_frame_context_init(&w->fc, &cb, w) != 0) {
        a.free(a.opaque, w);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "WebSocket frame context");
        return NULL;
    }
    return w;
}

void wk_ws_writer_destroy(wk_ws_writer *w)
{
    if (!w) return;
    wslay_frame_context_free(w->fc);
    w->a.free(w->a.opaque, w);
}

size_t wk_ws_frame_size(const wk_ws_writer *w, size_t n) { return header_size(n, w->mask) + n; }

wk_result wk_ws_writer_frame(wk_ws_writer *w, uint8_t opcode, const uint8_t *p, size_t n, wk_out *out,
                             wk_error *err)
{
    if (opcode >= WK_WS_OP_CLOSE && n > WK_WS_CONTROL_MAX) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "control frame of %zu bytes", n);
        return WK_ERROR;
    }
    if (out->size - out->pos < wk_ws_frame_size(w, n)) return WK_NEED_OUTPUT;
    struct wslay_frame_iocb io;
    memset(&io, 0, sizeof io);
    io.fin = 1;
    io.opcode = opcode;
    io.mask = w->mask;
    io.payload_length = n;
    w->out = out;
    size_t sent = 0;
    do {
        io.data = p + sent;
        io.data_length = n - sent;
        ssize_t r = wslay_frame_send(w->fc, &io);
        if (r < 0) {
            w->out = NULL;
            wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "libwslay frame_send error %d", (int)r);
            return WK_ERROR;
        }
        sent += (size_t)r;
    } while (sent < n);
    w->out = NULL;
    return WK_DONE;
}

wk_result wk_ws_writer_close(wk_ws_writer *w, uint16_t code, wk_out *out, wk_error *err)
{
    uint8_t b[2] = {(uint8_t)(code >> 8), (uint8_t)code};
    return wk_ws_writer_frame(w, WK_WS_OP_CLOSE, b, 2, out, err);
}
