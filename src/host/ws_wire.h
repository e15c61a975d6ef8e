/* wirekit host: the WebSocket wire (RFC 6455) without I/O: the HTTP/1.1 upgrade handshake and
 * the frame reader and writer of the ws: and wss: carriers (ws.c). Internal to src/host.
 *
 * Frames are parsed and built by Debian's libwslay (its frame layer, wslay_frame_*); this file
 * adds what RFC 6455 and Lace-060 require above single frames, so that it can be fuzzed apart
 * from the event loop (fuzz/ws_wire.c):
 *   - the mask rule: a server accepts only masked frames, a client only unmasked ones;
 *   - no extensions: RSV bits must be zero; opcodes other than continuation, text, binary,
 *     close, ping, pong are refused; a continuation needs an open fragmented message and a new
 *     data frame may not start inside one;
 *   - binary messages only (Lace-060): a text frame is WK_ERR_HOST_WS_TEXT (PeerProtocol),
 *     refused at its header, before its payload is read;
 *   - a received message over max_message bytes is WK_ERR_HOST_WS_MESSAGE_TOO_BIG, refused at the
 *     header of the frame that would take it over the bound, before any of that payload is
 *     delivered (nothing is buffered: data is handed out as it passes, one slice at a time);
 *   - control frames (at most 125 bytes, never fragmented; libwslay checks both) are collected in a
 *     fixed 125-byte area: a ping is an event (the carrier answers with a pong), a pong is
 *     ignored, a close is an event with its status code (1005 when it carries none); a 1-byte
 *     close payload, an invalid status code or a reason that is not UTF-8 is a protocol error.
 * Message and frame boundaries carry no meaning: the reader hands out the payload bytes of binary
 * messages in order, as one byte stream.
 *
 * The HTTP parser (picohttpparser-style, incremental) takes the header block of the upgrade
 * request or response, never reading past its blank line, within WK_WS_HTTP_MAX bytes. The
 * upgrade checks then decide: the server answers 101 (with Sec-WebSocket-Accept), 404 for
 * another path, 426 for another Sec-WebSocket-Version, 400 for anything else invalid; the client
 * accepts only 101 with the exact Sec-WebSocket-Accept for its key and no extension or
 * subprotocol it did not offer.
 *
 * Decisions where RFC 6455 leaves a choice (also in docs/iltp.md): request and status lines and
 * header lines end in CRLF (a bare LF is refused); header folding is refused; the request target
 * must equal the listener's path byte for byte (so a query string gets 404); Host is required;
 * Origin is ignored (no browser origin policy: ILTP peers are not web pages); no subprotocol and
 * no extension are negotiated.
 */
#ifndef WK_HOST_WS_WIRE_H
#define WK_HOST_WS_WIRE_H

#include <wirekit/common.h>

/* ---- HTTP/1.1 upgrade ------------------------------------------------------------------------ */
#define WK_WS_HTTP_MAX 8192        /* largest header block (request or response), bytes */
#define WK_WS_HTTP_MAX_FIELDS 32   /* most header fields */
#define WK_WS_KEY_LEN 24           /* Sec-WebSocket-Key: base64 of 16 bytes */
#define WK_WS_ACCEPT_LEN 28        /* Sec-WebSocket-Accept: base64 of a SHA-1 digest */

typedef struct wk_ws_http_field {
    const char *name, *value;      /* NUL-terminated, inside the parser's buffer */
} wk_ws_http_field;

/* One header block being parsed. A plain struct the caller owns (no allocation). */
typedef struct wk_ws_http {
    bool response;                 /* a status line (client side) or a request line (server) */
    bool done;
    size_t len;                    /* bytes collected */
    size_t line_start;             /* start of the line being collected */
    /* parsed, valid once done */
    const char *method, *target;   /* request */
    int status;                    /* response */
    const char *reason;
    size_t nfields;
    wk_ws_http_field fields[WK_WS_HTTP_MAX_FIELDS];
    char buf[WK_WS_HTTP_MAX + 1];  /* last: init clears everything before it */
} wk_ws_http;

/* Prepares *h for a request (response false) or a response. */
void wk_ws_http_init(wk_ws_http *h, bool response);
/* Consumes header bytes from in, never past the blank line that ends the block. Returns
 * WK_NEED_INPUT (all of in consumed, block incomplete), WK_DONE (complete: in->pos is right
 * after the blank line; the parsed parts are in *h) or WK_ERROR (WK_ERR_HOST_WS_UPGRADE with the
 * offset in the block: bad line syntax, a control byte, a bare LF, folding, over WK_WS_HTTP_MAX
 * bytes or WK_WS_HTTP_MAX_FIELDS fields). */
wk_result wk_ws_http_parse(wk_ws_http *h, wk_in *in, wk_error *err);
/* The value of the first field called name (ASCII case-insensitive), or NULL. Borrowed from *h. */
const char *wk_ws_http_field_get(const wk_ws_http *h, const char *name);
/* True if any field called name holds token in its comma-separated list (case-insensitive). */
bool wk_ws_http_has_token(const wk_ws_http *h, const char *name, const char *token);

/* Sec-WebSocket-Accept for key (WK_WS_KEY_LEN characters): base64(SHA-1(key + RFC 6455 GUID)),
 * NUL-terminated into accept. WK_OK or WK_ERR_BACKEND. */
wk_code wk_ws_accept_for(const char *key, char accept[WK_WS_ACCEPT_LEN + 1], wk_error *err);

/* Client: a fresh random key (NUL-terminated) and the upgrade request for path with the Host
 * field host_field (e.g. "example.com:8080", "[::1]:80"). Writes the whole request into out or
 * nothing (WK_NEED_OUTPUT). */
wk_result wk_ws_upgrade_request(const char *host_field, const char *path, char key[WK_WS_KEY_LEN + 1],
                                wk_out *out, wk_error *err);
/* Client: checks the server's response to the request made with key. WK_OK, or
 * WK_ERR_HOST_WS_UPGRADE saying what is wrong (a status other than 101 is reported with its
 * status line). */
wk_code wk_ws_upgrade_check_response(const wk_ws_http *resp, const char *key, wk_error *err);
/* Server: checks a parsed request for path and writes the answer into out (room: at least
 * WK_WS_RESPONSE_MAX bytes): 101 on success (WK_OK); otherwise an HTTP error response
 * ("Connection: close") and the refusal: WK_ERR_HOST_WS_PATH (404, another path) or
 * WK_ERR_HOST_WS_UPGRADE (400 or 426 and what is wrong). WK_ERR_ARG if out is too small. */
#define WK_WS_RESPONSE_MAX 512
wk_code wk_ws_upgrade_answer(const wk_ws_http *req, const char *path, wk_out *out, wk_error *err);

/* ---- frames ---------------------------------------------------------------------------------- */
#define WK_WS_OP_CONT 0x0
#define WK_WS_OP_TEXT 0x1
#define WK_WS_OP_BINARY 0x2
#define WK_WS_OP_CLOSE 0x8
#define WK_WS_OP_PING 0x9
#define WK_WS_OP_PONG 0xA
#define WK_WS_CONTROL_MAX 125      /* payload bound of a control frame */
#define WK_WS_HEADER_MAX 14        /* largest frame header (64-bit length and mask key) */
#define WK_WS_DEFAULT_MAX_MESSAGE (16u << 20)
#define WK_WS_SLICE 65536          /* the largest DATA slice the reader hands out */

/* Status codes we send. */
#define WK_WS_CLOSE_NORMAL 1000
#define WK_WS_CLOSE_PROTOCOL 1002
#define WK_WS_CLOSE_UNSUPPORTED 1003
#define WK_WS_CLOSE_NO_STATUS 1005     /* never sent: a received close without a code */
#define WK_WS_CLOSE_TOO_BIG 1009

typedef enum wk_ws_event {
    WK_WS_EVENT_NONE = 0,
    WK_WS_EVENT_DATA,              /* data[0..data_len): the next bytes of binary payload */
    WK_WS_EVENT_PING,              /* data[0..data_len): the ping's payload, to echo in a pong */
    WK_WS_EVENT_CLOSE              /* close_code (1005: none), close_reason; the reader is done */
} wk_ws_event;

typedef struct wk_ws_reader_params {
    bool server;                   /* we are the server: every received frame must be masked */
    uint64_t max_message;          /* largest received message in bytes (0: 16 MiB) */
    const wk_allocator *allocator; /* for the reader itself, about 66 KiB (libwslay allocates its
                                    * frame context of about 4.2 KiB with malloc) */
} wk_ws_reader_params;

typedef struct wk_ws_reader wk_ws_reader;

/* A frame reader, or NULL with *err (WK_ERR_NOMEM). */
wk_ws_reader *wk_ws_reader_create(const wk_ws_reader_params *p, wk_error *err);
void wk_ws_reader_destroy(wk_ws_reader *r);
/* Consumes transport bytes from in (libwslay copies at most 4 KiB at a time into its frame
 * buffer; the payload pieces it returns are collected into one slice of up to WK_WS_SLICE bytes,
 * until in is consumed or a control frame or an error comes; that event or error is then
 * reported on the next call) and reports the next event: WK_EVENT (read it with
 * wk_ws_reader_event; a DATA or PING slice is borrowed from the reader until the next call),
 * WK_NEED_INPUT (in consumed, no event),
 * WK_DONE (a close was received: nothing more is read) or WK_ERROR (sticky: the same error again
 * on every later call). Errors: WK_ERR_HOST_WS_PROTOCOL, _TEXT, _MESSAGE_TOO_BIG, each with the
 * transport offset of the offending frame's first byte. */
wk_result wk_ws_reader_read(wk_ws_reader *r, wk_in *in, wk_error *err);
/* The event of the last WK_EVENT: its kind, and its slice (DATA, PING; NULL otherwise). */
wk_ws_event wk_ws_reader_event(const wk_ws_reader *r, const uint8_t **data, size_t *len);
/* The close status (1005 when the close frame carried none) and reason (NUL-terminated,
 * borrowed) once a close was received; 0 before. */
uint16_t wk_ws_reader_close_code(const wk_ws_reader *r, const char **reason);
/* The transport ended (rest: bytes after the last read, borrowed, never consumed; may be NULL).
 * WK_DONE after a close frame; else WK_ERROR with WK_ERR_HOST_WS_CLOSED (the connection ended
 * without a close frame; Transport) or the reader's own failure. The same answer when called
 * again. */
wk_result wk_ws_reader_finish(wk_ws_reader *r, const wk_in *rest, wk_error *err);
/* The status code a carrier should send when closing after this reader's error. */
uint16_t wk_ws_close_code_for(wk_code code);

typedef struct wk_ws_writer wk_ws_writer;
/* A frame writer; mask: we are the client (every frame masked with a fresh random key). */
wk_ws_writer *wk_ws_writer_create(bool mask, const wk_allocator *allocator, wk_error *err);
void wk_ws_writer_destroy(wk_ws_writer *w);
/* Bytes of one whole frame with n payload bytes. */
size_t wk_ws_frame_size(const wk_ws_writer *w, size_t n);
/* Frames p[0..n) as one whole message (FIN set) with opcode into out: all of it (WK_DONE) or
 * nothing (WK_NEED_OUTPUT, out untouched). A control opcode with more than 125 bytes is WK_ERR_ARG. */
wk_result wk_ws_writer_frame(wk_ws_writer *w, uint8_t opcode, const uint8_t *p, size_t n, wk_out *out,
                             wk_error *err);
/* A close frame with code (and no reason) into out, as wk_ws_writer_frame. */
wk_result wk_ws_writer_close(wk_ws_writer *w, uint16_t code, wk_out *out, wk_error *err);

#endif
