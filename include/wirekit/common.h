/* wirekit common layer: error model, step-call buffers, cursor, varints, hashes, B64A.
 *
 * Everything here depends on nothing but libc. Protocol modules include this header; it never
 * includes theirs. Nothing in the library prints, aborts or does I/O.
 *
 * The step-call shape (zstd's {ptr,size,pos} buffers): every streaming decoder and encoder takes
 * a wk_in and/or wk_out view owned by the caller and only moves `pos`. A step returns a
 * wk_result saying what it needs next; on WK_ERROR the wk_error it was given says what and where.
 */
#ifndef WIREKIT_COMMON_H
#define WIREKIT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WK_VERSION_MAJOR 0
#define WK_VERSION_MINOR 1
#define WK_VERSION_PATCH 0
#define WK_VERSION_STRING "0.1.0"

/* Returns the library's version string (static storage). */
const char *wk_version(void);

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Who is at fault. */
typedef enum wk_category {
    WK_CAT_NONE = 0,
    WK_CAT_PEER_PROTOCOL, /* the peer sent bad bytes (or too few of them) */
    WK_CAT_INTEGRATION,   /* local misuse or local inability (memory, backend failure) */
    WK_CAT_TRANSPORT,     /* the carrier failed */
    WK_CAT_USAGE          /* a user-supplied argument is invalid */
} wk_category;

/* Stable error numbers, in ranges per module: common 1-99, iltp 100-299, eth 300-499,
 * moqt 500-699, colloq 700-899, host 900-999. Numbers never change once released; new codes are
 * appended to their range. The name of each (wk_error_name) is the spec's vocabulary where the
 * spec has one. */
typedef enum wk_code {
    WK_OK = 0,

    /* common */
    WK_ERR_NOMEM = 1,        /* an allocation failed or would exceed its configured bound */
    WK_ERR_ARG = 2,          /* invalid argument from the calling code */
    WK_ERR_STATE = 3,        /* call not valid in the object's current state */
    WK_ERR_BACKEND = 4,      /* a backend library failed for a local reason */
    WK_ERR_USAGE = 5,        /* invalid user-supplied option or value */
    WK_ERR_B64A_LENGTH = 10, /* B64A text has a length no byte string encodes to */
    WK_ERR_B64A_ALPHABET = 11, /* B64A text has a character outside the alphabet */
    WK_ERR_B64A_TAIL = 12,   /* B64A text's last character has nonzero unused bits */

    /* iltp: stream encoding (Lace-065) */
    WK_ERR_ILTP_DEFLATE_MALFORMED = 100, /* deflate12c data is not valid RFC 1951 */
    WK_ERR_ILTP_DEFLATE_REFERENCE = 101, /* deflate12c back-reference reaches before the history */
    WK_ERR_ILTP_ZSTD_MALFORMED = 102,    /* zstd20c block data invalid or reference unresolvable */
    WK_ERR_ILTP_ZSTD_HEADER = 103,       /* zstd20c frame header descriptor is not 00 */
    WK_ERR_ILTP_ZSTD_WINDOW = 104,       /* zstd20c declared window above 2^20 */
    WK_ERR_ILTP_AFTER_END_MARK = 105,    /* byte after the end mark does not begin a raw preface */
    WK_ERR_ILTP_TRUNCATED = 106,         /* input ended before the end mark / inside an item */
    WK_ERR_ILTP_ENCODE = 107,            /* local inability to encode */
    WK_ERR_ILTP_TOKEN = 110,             /* offer token not [a-z][a-z0-9]{0,31} */
    WK_ERR_ILTP_OFFER = 111,             /* offer list empty, duplicate token, or lists identity */
    WK_ERR_ILTP_PREFACE = 112,           /* preface syntax invalid */
    WK_ERR_ILTP_VERSION = 113,           /* preface of an unsupported version / other form */
    WK_ERR_ILTP_NONCE = 114,             /* nonce not canonical B64A of 32 nonzero bytes */
    WK_ERR_ILTP_PREFACE_TOO_LONG = 115,  /* preface longer than 1024 bytes */
    /* iltp: items (Lace-060) */
    WK_ERR_ILTP_ITEM_LEAD = 120,         /* item starts with no valid leading sequence */
    WK_ERR_ILTP_FACT = 121,              /* fact line is not canonical tuple text */
    WK_ERR_ILTP_FACT_LINE_TOO_LONG = 122, /* fact line over 1024 bytes excluding LF */
    WK_ERR_ILTP_UTF8 = 123,              /* invalid UTF-8, or text not in NFC */
    WK_ERR_ILTP_RECORD = 124,            /* H3 record structure invalid */
    WK_ERR_ILTP_RECORD_HASH = 125,       /* Blob glyph hash does not match its content */
    WK_ERR_ILTP_ITEM_TOO_LARGE = 126,    /* item over the 64 MiB cap */
    WK_ERR_ILTP_BLOB_TOO_LARGE = 127,    /* Blob data over 32 MiB */
    WK_ERR_ILTP_OPERAND_TOO_LARGE = 128, /* operand Blob over 1 MiB */
    WK_ERR_ILTP_PREFACE_ENCODED = 129,   /* a preface decoded out of a compressed stream */
    WK_ERR_ILTP_SAME_NONCE = 130,        /* both prefaces of a pair carry the same nonce */
    WK_ERR_ILTP_NONCE_EXHAUSTED = 131,   /* nonce sequence exhausted (Integration) */
    WK_ERR_ILTP_ADDRESS = 132,           /* address string invalid */

    /* iltp: sessions (Lace-060 grammar as far as the seed defines it) */
    WK_ERR_ILTP_SESSION_ORDER = 140,     /* wrong-family, duplicate, unrequested or out-of-order input */
    WK_ERR_ILTP_PREMATURE_EOF = 141,     /* boundary EOF outside fixed point */
    WK_ERR_ILTP_BUDGET = 142,            /* a phase's received-control byte budget exceeded */
    WK_ERR_ILTP_DEADLINE = 143,          /* a phase deadline passed */
    WK_ERR_ILTP_STORE = 144,             /* the local store failed (Integration) */
    WK_ERR_ILTP_PROOF = 145,             /* the peer's establishment proof is not the expected one */

    /* eth: Ethereum Snappy (names as in specs/eth-snappy.md section 0) */
    WK_ERR_SNAPPY_TRUNCATED = 300, /* snappy block ended inside an element */
    WK_ERR_SNAPPY_PREAMBLE = 301, /* snappy preamble over 5 bytes or above 2^32-1 */
    WK_ERR_SNAPPY_TOO_LARGE = 302, /* snappy declared length above the limit */
    WK_ERR_SNAPPY_BAD_OFFSET = 303, /* snappy copy offset 0 or before the output start */
    WK_ERR_SNAPPY_OVERRUN = 304, /* snappy element writes past the declared length */
    WK_ERR_SNAPPY_LENGTH_MISMATCH = 305, /* snappy block produced fewer bytes than declared */
    WK_ERR_FRAME_NO_STREAM_ID = 320, /* framed stream does not start with the stream identifier */
    WK_ERR_FRAME_BAD_STREAM_ID = 321, /* stream identifier chunk is not ff 06 00 00 sNaPpY */
    WK_ERR_FRAME_RESERVED_CHUNK = 322, /* reserved unskippable chunk type 0x02..0x7f */
    WK_ERR_FRAME_CHUNK_TOO_SHORT = 323, /* data chunk shorter than its checksum */
    WK_ERR_FRAME_CHUNK_TOO_LARGE = 324, /* chunk body or decoded chunk above its limit */
    WK_ERR_FRAME_CRC = 325, /* masked CRC-32C mismatch */
    WK_ERR_FRAME_TRUNCATED = 326, /* framed stream ended inside a chunk */
    WK_ERR_SSZSNAPPY_VARINT_TOO_LONG = 340, /* length prefix longer than 10 bytes */
    WK_ERR_SSZSNAPPY_VARINT_OVERFLOW = 341, /* length prefix above 2^64-1 */
    WK_ERR_SSZSNAPPY_VARINT_NONMINIMAL = 342, /* length prefix not minimally encoded */
    WK_ERR_SSZSNAPPY_LENGTH_BOUNDS = 343, /* declared SSZ length outside the type bounds */
    WK_ERR_SSZSNAPPY_BUDGET = 344, /* more than max_compressed_len(n) bytes read for the payload */
    WK_ERR_SSZSNAPPY_EXCESS_DATA = 345, /* framed payload decodes to more than the declared length */
    WK_ERR_SSZSNAPPY_EARLY_EOF = 346, /* stream ended before the declared length was decoded */
    WK_ERR_SSZSNAPPY_TRAILING = 347, /* bytes after a complete request payload */
    WK_ERR_RESP_RESULT_RESERVED = 360, /* reserved result code 4..127 */
    WK_ERR_RESP_ERRMSG_TOO_LONG = 361, /* error message length above 256 */
    WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE = 370, /* gossip data above max_compressed_len(MAX_PAYLOAD_SIZE) */
    WK_ERR_RLPX_EMPTY = 380, /* frame-data has no message id */
    WK_ERR_RLPX_MSGID = 381, /* message id is not a canonical RLP uint64 */
    WK_ERR_RLPX_TOO_LARGE = 382, /* message data above the size limit */
    WK_ERR_RLPX_FRAME_SIZE = 383, /* frame-data longer than 0xFFFFFF */
    WK_ERR_RLP_TRUNCATED = 400, /* RLP item extends past the input */
    WK_ERR_RLP_NONCANON_SIZE = 401, /* RLP size not in canonical form */
    WK_ERR_RLP_NONCANON_INT = 402, /* RLP integer with a leading zero byte */
    WK_ERR_RLP_UINT_OVERFLOW = 403, /* RLP integer wider than 64 bits */
    WK_ERR_RLP_EXPECTED_STRING = 404, /* RLP list where a string was expected */
    WK_ERR_RLP_EXPECTED_LIST = 405, /* RLP string where a list was expected */
    WK_ERR_RLP_TRAILING = 406, /* bytes after a complete RLP item */
    WK_ERR_RLP_ELEM_TOO_LARGE = 407, /* RLP element larger than its enclosing list */
    WK_ERR_RLP_DEPTH = 408, /* RLP lists nested too deeply */

    /* moqt: MoQT draft-20 data streams (names as in specs/moqt-draft20-data-streams.md section 9;
     * wk_moqt_error_category maps each to the vectors' error category) */
    WK_ERR_MOQT_TRUNCATED = 500,             /* input ended inside a field, block or payload */
    WK_ERR_MOQT_UNKNOWN_STREAM_TYPE = 501,   /* unidirectional stream type no draft-20 stream has */
    WK_ERR_MOQT_WRONG_STREAM_TYPE = 502,     /* a known stream type, not the carrier expected */
    WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED = 503, /* subgroup Type Flags SUBGROUP_ID_MODE 0b11 */
    WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR = 504,   /* subgroup Type Flags with bit 4 (0x10) clear */
    WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE = 505, /* subgroup Type Flags value 128 or greater */
    WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP = 506, /* datagram Type Flags STATUS + END_OF_GROUP */
    WK_ERR_MOQT_DATAGRAM_RESERVED_BIT = 507, /* datagram Type Flags bit 4 (0x10) set */
    WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT = 508, /* datagram Type Flags bit 6 or higher set */
    WK_ERR_MOQT_EMPTY_PROPERTIES = 520,      /* datagram PROPERTIES bit with Properties Length 0 */
    WK_ERR_MOQT_STATUS_PROPERTIES = 521,     /* datagram with a non-Normal status and properties */
    WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED = 522, /* payload bytes where the status leaves no room */
    WK_ERR_MOQT_UNKNOWN_STATUS = 523,        /* Object Status not assigned by draft-20 */
    WK_ERR_MOQT_OBJECT_ID_OVERFLOW = 524,    /* resolved Object ID above 2^64-1 */
    WK_ERR_MOQT_GROUP_ID_OVERFLOW = 525,     /* resolved Group ID above 2^64-1 or below 0 */
    WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW = 526,  /* fetch Subgroup ID prior + 1 above 2^64-1 */
    WK_ERR_MOQT_OBJECT_AFTER_END = 527,      /* object after End of Group/Track on a subgroup stream */
    WK_ERR_MOQT_SERIALIZATION_FLAGS = 540,   /* Serialization Flags >= 128 and not an End of Range */
    WK_ERR_MOQT_FIRST_RECORD = 541,          /* first fetch record lacks a delta or refers to a prior */
    WK_ERR_MOQT_NO_PRIOR_OBJECT = 542,       /* prior Subgroup ID / Priority with no prior object */
    WK_ERR_MOQT_PRIOR_NO_SUBGROUP = 543,     /* prior Subgroup ID referenced after a datagram object */
    WK_ERR_MOQT_END_OF_RANGE_LENGTH = 544,   /* End of Range record with Object Payload Length != 0 */
    WK_ERR_MOQT_PROPERTY_LENGTH = 560,       /* odd-type property value length above 65535 */
    WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW = 561, /* accumulated property type above 2^64-1 */
    WK_ERR_MOQT_PROPERTY_OVERRUN = 562,      /* a property pair crosses the end of its block */
    WK_ERR_MOQT_PROPERTIES_TOO_LARGE = 563,  /* Properties Length above the reader's bound */
    WK_ERR_MOQT_PADDING_NONZERO = 580,       /* (strict padding) a padding byte is not 0x00 */

    /* colloq: Colloq plan codec (names as in specs/colloq.md; see colloq.h) */
    WK_ERR_COLLOQ_JSON = 700,            /* conversation/plan is not JSON (offset = byte) */
    WK_ERR_COLLOQ_SCHEMA = 701,          /* missing/unknown key, wrong JSON type or version tag */
    WK_ERR_COLLOQ_NAME = 702,            /* name not [A-Za-z_][A-Za-z0-9_]* (or empty) */
    WK_ERR_COLLOQ_DUPLICATE = 703,       /* duplicate role/state/field/transition */
    WK_ERR_COLLOQ_UNKNOWN_STATE = 704,   /* reference to a state not declared */
    WK_ERR_COLLOQ_UNKNOWN_ROLE = 705,    /* reference to a role not declared */
    WK_ERR_COLLOQ_UNKNOWN_MESSAGE = 706, /* reference to a message not declared */
    WK_ERR_COLLOQ_UNKNOWN_TYPE = 707,    /* field type not one of the thirteen */
    WK_ERR_COLLOQ_LIMIT = 708,           /* too many fields, max_payload out of range, ... */
    WK_ERR_COLLOQ_STRUCTURE = 709,       /* other structural error (transition leaves a final state) */
    WK_ERR_COLLOQ_PLAN = 710,            /* plan file differs from what its content compiles to */
    WK_ERR_COLLOQ_PREFACE = 720,         /* preface malformed */
    WK_ERR_COLLOQ_PLAN_MISMATCH = 721,   /* peer preface names another plan identity */
    WK_ERR_COLLOQ_WIRE_MISMATCH = 722,   /* peer preface names another wire encoding */
    WK_ERR_COLLOQ_PREFACE_ROLE = 723,    /* peer role not in the plan, or the same as ours */
    WK_ERR_COLLOQ_UNKNOWN_TRANSITION = 740, /* unknown-transition */
    WK_ERR_COLLOQ_WRONG_STATE = 741,     /* wrong-state */
    WK_ERR_COLLOQ_WRONG_SENDER = 742,    /* wrong-sender */
    WK_ERR_COLLOQ_BAD_SEQUENCE = 743,    /* bad-sequence */
    WK_ERR_COLLOQ_MALFORMED_PAYLOAD = 744, /* malformed-payload (also a malformed envelope) */
    WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE = 745, /* payload-too-large */
    WK_ERR_COLLOQ_TRUNCATED = 746,       /* truncated: input ended inside a frame */
    WK_ERR_COLLOQ_AFTER_FINAL = 747,     /* after-final: a frame after a final state */
    WK_ERR_COLLOQ_TRACE = 760,           /* trace line malformed or inconsistent with the plan */

    /* host: Blob store */
    WK_ERR_HOST_IO = 900,                /* local I/O failure (Integration; message has strerror) */
    WK_ERR_HOST_STORE_CORRUPT = 901,     /* stored Blob file fails its hash (Integration) */
    WK_ERR_HOST_NOT_FOUND = 902,         /* no Blob with the requested hash (Usage) */
    WK_ERR_HOST_HASH_MISMATCH = 903,     /* data does not match the expected hash (PeerProtocol) */
    /* host: carriers and the event loop (900-939 host core; 940-969 ws/wss; 970-998 quib; 999
     * stays unassigned). Names equal identifiers. */
    WK_ERR_HOST_RESOLVE = 904,           /* the carrier's host name did not resolve (Transport) */
    WK_ERR_HOST_CONNECT = 905,           /* dialling the carrier failed or timed out (Transport) */
    WK_ERR_HOST_LISTEN = 906,            /* binding or listening failed (Transport) */
    WK_ERR_HOST_READ = 907,              /* reading from the carrier failed (Transport) */
    WK_ERR_HOST_WRITE = 908,             /* writing to the carrier failed (Transport) */
    WK_ERR_HOST_CARRIER = 909,           /* the carrier cannot be set up locally (Integration) */
    WK_ERR_HOST_SESSIONS_LIMIT = 910,    /* --max-sessions reached: connection refused (Transport) */
    WK_ERR_HOST_MEMORY_LIMIT = 911,      /* --max-memory reached: session refused or failed (Integration) */
    WK_ERR_HOST_IDLE_TIMEOUT = 912,      /* silent at fixed point for --idle-timeout-ms (Transport) */
    WK_ERR_HOST_CLOSE_TIMEOUT = 913,     /* the peer did not end after our bounded completion (Transport) */
    WK_ERR_HOST_INTERRUPTED = 914,       /* SIGINT/SIGTERM ended a session before fixed point (Usage) */
    /* host: the ws: and wss: carriers (src/host/ws.c, ws_wire.c, tls.c) */
    WK_ERR_HOST_WS_UPGRADE = 940,        /* the HTTP upgrade request or response is invalid (Transport) */
    WK_ERR_HOST_WS_PATH = 941,           /* an upgrade request for another path: 404 (Transport) */
    WK_ERR_HOST_WS_TEXT = 942,           /* a text message: ILTP travels in binary messages (PeerProtocol) */
    WK_ERR_HOST_WS_PROTOCOL = 943,       /* a WebSocket framing rule broken, e.g. an unmasked client frame (Transport) */
    WK_ERR_HOST_WS_MESSAGE_TOO_BIG = 944, /* a received message over --ws-max-message (Transport) */
    WK_ERR_HOST_WS_CLOSED = 945,         /* the connection ended without a close frame, or closed with an error code (Transport) */
    WK_ERR_HOST_WS_TIMEOUT = 946,        /* an upgrade or close handshake passed its deadline (Transport) */
    WK_ERR_HOST_TLS_HANDSHAKE = 950,     /* the TLS handshake failed (Transport) */
    WK_ERR_HOST_TLS_VERIFY = 951,        /* the peer's certificate chain or hostname did not verify (Transport) */
    WK_ERR_HOST_TLS = 952,               /* a TLS record-layer failure after the handshake (Transport) */
    WK_ERR_HOST_TLS_CREDENTIALS = 953,   /* --cert, --key or --ca cannot be loaded (Usage) */
    /* host: the quib: carrier (QUIC v1 + TLS 1.3, src/host/quib_conn.c), all Transport */
    WK_ERR_HOST_QUIB_PROFILE = 970,      /* ALPN (authenticated handshake data) missing or not QUIB/1 */
    WK_ERR_HOST_QUIB_TLS = 971,          /* the TLS handshake failed (alert, bad handshake message) */
    WK_ERR_HOST_QUIB_CERTIFICATE = 972,  /* the server certificate failed chain or hostname checks */
    WK_ERR_HOST_QUIB_APP_CLOSE = 973,    /* the peer closed with a nonzero application error code */
    WK_ERR_HOST_QUIB_TRANSPORT_CLOSE = 974, /* the peer closed with a transport error code */
    WK_ERR_HOST_QUIB_STATELESS_RESET = 975, /* a stateless reset before settlement was authorized */
    WK_ERR_HOST_QUIB_RESET_STREAM = 976, /* the peer reset the ILTP stream (RESET_STREAM) */
    WK_ERR_HOST_QUIB_STOP_SENDING = 977, /* the peer asked us to stop sending (STOP_SENDING) */
    WK_ERR_HOST_QUIB_IDLE_TIMEOUT = 978, /* the QUIC idle timeout passed without a packet */
    WK_ERR_HOST_QUIB_HANDSHAKE_TIMEOUT = 979, /* the handshake did not finish within its deadline */
    WK_ERR_HOST_QUIB_FINISH_TIMEOUT = 980, /* our FIN was not acknowledged within the deadline */
    WK_ERR_HOST_QUIB_PROTOCOL = 981,     /* the peer violated QUIC (detected by the local stack) */
    WK_ERR_HOST_QUIB_VERSION = 982,      /* no common QUIC version (QUIC v1 only) */
    WK_ERR_HOST_QUIB_STREAM = 983,       /* the peer used a stream other than the one client-opened bidi */

    WK_CODE_LIMIT_ = 1000
} wk_code;

/* One error. `offset` is the byte offset in the input the error refers to (where the bad byte
 * is, or where input ended), valid when has_offset is true. `msg` is a short human message
 * without the name or the offset. */
typedef struct wk_error {
    wk_code code;
    wk_category category;
    bool has_offset;
    uint64_t offset;
    char msg[120];
} wk_error;

/* Stable name of a code, e.g. "ILTP_ERR_ZSTD_HEADER" (static storage; "WK_ERR_UNKNOWN" for
 * a number that is not a code). */
const char *wk_error_name(wk_code code);
/* One-line description of a code (static storage). */
const char *wk_strerror(wk_code code);
/* The category a code belongs to. */
wk_category wk_code_category(wk_code code);
/* Name of a category: "PeerProtocol", "Integration", "Transport", "Usage" or "None". */
const char *wk_category_name(wk_category cat);
/* True for codes that mean "the input ended early" (CLI exit status 3). */
bool wk_code_is_truncation(wk_code code);

/* Sets *err (if non-NULL) to code, its category, the offset (pass WK_NO_OFFSET for none) and a
 * printf-style message. Returns code, so `return wk_error_set(...)` works. */
#define WK_NO_OFFSET UINT64_MAX
wk_code wk_error_set(wk_error *err, wk_code code, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Clears *err to WK_OK. */
void wk_error_clear(wk_error *err);
/* Formats "NAME at offset N: message" (or "NAME: message") into buf (always NUL-terminated,
 * truncated to cap). Returns buf. */
char *wk_error_format(const wk_error *err, char *buf, size_t cap);

/* ---------------------------------------------------------------------------------------------
 * Step-call buffers and results
 * ------------------------------------------------------------------------------------------- */

/* Input view: bytes src[pos..size) are unread. Owned by the caller; a step only advances pos. */
typedef struct wk_in {
    const uint8_t *src;
    size_t size;
    size_t pos;
} wk_in;

/* Output view: bytes dst[pos..size) are free. Owned by the caller; a step only advances pos. */
typedef struct wk_out {
    uint8_t *dst;
    size_t size;
    size_t pos;
} wk_out;

/* What a step call reports. Every call either makes progress or says what it needs. */
typedef enum wk_result {
    WK_ERROR = -1,      /* failed: see the wk_error; the object stays failed until reset */
    WK_DONE = 0,        /* the requested operation is complete */
    WK_NEED_INPUT = 1,  /* all input consumed; call again with more (or finish at EOF) */
    WK_NEED_OUTPUT = 2, /* the output view is full; call again with room */
    WK_EVENT = 3        /* an event is ready (a chunk or record begins, an object header, ...):
                         * its details are read from the object until the next call; call again
                         * to continue. Only calls documented as reporting events return it. */
} wk_result;

/* ---------------------------------------------------------------------------------------------
 * Allocator: backends (zlib, libzstd) allocate through this, so memory can be counted and capped.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_allocator {
    void *(*alloc)(void *opaque, size_t size); /* NULL on failure */
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} wk_allocator;

/* A counting allocator with an optional cap: `current`, `peak` are bytes in use; an allocation
 * that would take current above `limit` (0 = no limit) fails. Use wk_counting_allocator(&c) to get
 * a wk_allocator bound to it. The counter must outlive every object allocated through it. */
typedef struct wk_alloc_counter {
    size_t current;
    size_t peak;
    size_t limit;
    uint64_t count; /* number of successful allocations */
} wk_alloc_counter;
wk_allocator wk_counting_allocator(wk_alloc_counter *counter);
/* *a when it names both functions, else an allocator over malloc/free. */
wk_allocator wk_allocator_or_default(const wk_allocator *a);
/* size bytes from a (as wk_allocator_or_default resolves it: NULL = malloc/free), zeroed; free
 * them through the same allocator. NULL when the allocation fails, with *err (may be NULL) set to
 * WK_ERR_NOMEM and the message `what` (the object that could not be made). */
/* As wk_allocator_zalloc, not zeroed: for objects that initialize every field they read and hold
 * large buffers (zeroing them would touch pages the object may never use). */
void *wk_allocator_alloc(const wk_allocator *a, size_t size, const char *what, wk_error *err);
void *wk_allocator_zalloc(const wk_allocator *a, size_t size, const char *what, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * BLAKE3 (hash, keyed hash, derive key, extended output). Written here: no Debian package ships
 * it. The hasher is a plain struct the caller owns; it never allocates.
 * ------------------------------------------------------------------------------------------- */
#define WK_BLAKE3_OUT_LEN 32
#define WK_BLAKE3_KEY_LEN 32
#define WK_BLAKE3_BLOCK_LEN 64
#define WK_BLAKE3_CHUNK_LEN 1024
#define WK_BLAKE3_MAX_DEPTH 54

typedef struct wk_blake3_hasher {
    uint32_t key[8];
    /* current chunk state: its raw bytes, compressed once it is known not to be the root */
    uint64_t chunk_counter;
    uint8_t buf[WK_BLAKE3_CHUNK_LEN];
    uint16_t buf_len;
    uint8_t flags;
    /* chaining-value stack of completed subtrees */
    uint8_t cv_stack_len;
    uint8_t cv_stack[(WK_BLAKE3_MAX_DEPTH + 1) * WK_BLAKE3_OUT_LEN];
} wk_blake3_hasher;

/* Initializes *h for the plain hash. */
void wk_blake3_init(wk_blake3_hasher *h);
/* Initializes *h for the keyed hash with the 32-byte key (copied). */
void wk_blake3_init_keyed(wk_blake3_hasher *h, const uint8_t key[WK_BLAKE3_KEY_LEN]);
/* Initializes *h for key derivation with a context string of ctx_len bytes (hashed, not kept). */
void wk_blake3_init_derive_key(wk_blake3_hasher *h, const void *ctx, size_t ctx_len);
/* Absorbs len bytes of data (not kept). May be called any number of times. */
void wk_blake3_update(wk_blake3_hasher *h, const void *data, size_t len);
/* Writes out_len bytes of output starting at byte `seek` of the extended output stream. Does not
 * modify *h: more input may follow, and finalize may be called again. */
void wk_blake3_finalize_seek(const wk_blake3_hasher *h, uint64_t seek, uint8_t *out, size_t out_len);
/* Same as finalize_seek with seek 0. */
void wk_blake3_finalize(const wk_blake3_hasher *h, uint8_t *out, size_t out_len);
/* One-shot plain hash of len bytes into 32 bytes. */
void wk_blake3(const void *data, size_t len, uint8_t out[WK_BLAKE3_OUT_LEN]);

/* ---------------------------------------------------------------------------------------------
 * B64A: the 64-character alphabet in ASCII order, RFC 4648 bit packing, no padding.
 * ------------------------------------------------------------------------------------------- */

/* Number of characters B64A gives for n bytes: ceil(8n/6). */
size_t wk_b64a_encoded_len(size_t n);
/* Encodes n bytes from src into dst, which must hold wk_b64a_encoded_len(n) bytes (no NUL is
 * written). Returns the number of characters written. */
size_t wk_b64a_encode(const uint8_t *src, size_t n, char *dst);
/* Strictly decodes len characters of text into dst (capacity dst_cap). Rejects a character outside
 * the alphabet (WK_ERR_B64A_ALPHABET, offset = its index), a length no byte string encodes to
 * (WK_ERR_B64A_LENGTH) and nonzero unused tail bits (WK_ERR_B64A_TAIL, offset = last index).
 * On success stores the decoded length in *out_len and returns WK_OK. dst_cap smaller than the
 * decoded length is WK_ERR_ARG. */
wk_code wk_b64a_decode(const char *text, size_t len, uint8_t *dst, size_t dst_cap, size_t *out_len,
                       wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Cursor: a {p, end} reader with checked reads, the one every decoder parses through. Every read
 * checks the length first; on a short read nothing is consumed and the read returns false (the
 * LEB128 read returns a wk_cursor_status that tells truncation from malformed input).
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_cursor {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
} wk_cursor;

static inline wk_cursor wk_cursor_make(const void *data, size_t len)
{
    wk_cursor c;
    c.start = (const uint8_t *)data;
    c.p = c.start;
    c.end = c.start + len;
    return c;
}
/* Bytes left. */
static inline size_t wk_cursor_left(const wk_cursor *c) { return (size_t)(c->end - c->p); }
/* Offset of the next byte from the start. */
static inline size_t wk_cursor_offset(const wk_cursor *c) { return (size_t)(c->p - c->start); }
/* Reads one byte. */
static inline bool wk_cursor_u8(wk_cursor *c, uint8_t *v)
{
    if (c->p >= c->end) return false;
    *v = *c->p++;
    return true;
}
/* Borrows n bytes: *out points into the cursor's buffer. */
static inline bool wk_cursor_take(wk_cursor *c, size_t n, const uint8_t **out)
{
    if ((size_t)(c->end - c->p) < n) return false;
    *out = c->p;
    c->p += n;
    return true;
}
/* Reads a big-endian unsigned integer of n (1..8) bytes. */
static inline bool wk_cursor_be(wk_cursor *c, unsigned n, uint64_t *v)
{
    if (n == 0 || n > 8 || (size_t)(c->end - c->p) < n) return false;
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++) x = (x << 8) | c->p[i];
    c->p += n;
    *v = x;
    return true;
}

/* Writes big-endian v as n bytes to dst. */
static inline void wk_put_be(uint8_t *dst, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) dst[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* ---------------------------------------------------------------------------------------------
 * MoQT integer (draft-ietf-moq-transport-17 and later, section 1.4.1): a 1..9-byte prefix code,
 * NOT the QUIC varint. The count of leading 1 bits of the first byte gives the length (n ones:
 * n+1 bytes, the 9-byte form 0xFF followed by 8 value bytes); the rest of the first byte and the
 * following bytes hold the value, big-endian. Every 64-bit value is encodable. Decoding accepts
 * non-minimal forms (any length that holds the value); encoding is always minimal.
 * ------------------------------------------------------------------------------------------- */
#define WK_MOQT_INT_MAX_LEN 9

/* Total encoded length (1..9) of the integer whose first byte is `first`. */
static inline unsigned wk_moqt_int_size(uint8_t first)
{
    unsigned n = 0;
    while (n < 8 && (first & (0x80u >> n))) n++;
    return n + 1;
}
/* Minimal encoded length (1..9) of v. */
static inline unsigned wk_moqt_int_len(uint64_t v)
{
    unsigned len = 1;
    while (len < 9 && v >= ((uint64_t)1 << (7 * len))) len++;
    return len;
}
/* Value of the complete encoding p[0..wk_moqt_int_size(p[0])) (the caller checked the length). */
static inline uint64_t wk_moqt_int_get(const uint8_t *p)
{
    uint8_t b = p[0];
    if (b < 0x80) return b;
    unsigned len = wk_moqt_int_size(b);
    uint64_t v = len == 9 ? 0 : (uint64_t)(b & (0xFFu >> len));
    for (unsigned i = 1; i < len; i++) v = (v << 8) | p[i];
    return v;
}
/* Writes the minimal encoding of v to dst, which must hold wk_moqt_int_len(v) bytes (at most
 * WK_MOQT_INT_MAX_LEN). Returns the number of bytes written. */
static inline unsigned wk_moqt_int_put(uint8_t *dst, uint64_t v)
{
    if (v < 0x80) {
        dst[0] = (uint8_t)v;
        return 1;
    }
    unsigned len = wk_moqt_int_len(v);
    if (len == 9) {
        dst[0] = 0xFF;
        wk_put_be(dst + 1, v, 8);
        return 9;
    }
    wk_put_be(dst, v, len);
    dst[0] |= (uint8_t)(0xFFu << (9 - len));
    return len;
}
/* Reads one MoQT integer (any length form). On a short read nothing is consumed and false is
 * returned; *len_out (may be NULL) then receives the length the encoding needs (0 if no byte is
 * left), else the length consumed. */
static inline bool wk_cursor_moqt_int_n(wk_cursor *c, uint64_t *v, unsigned *len_out)
{
    if (c->p >= c->end) {
        if (len_out) *len_out = 0;
        return false;
    }
    uint8_t b = c->p[0];
    if (b < 0x80) {
        *v = b;
        c->p++;
        if (len_out) *len_out = 1;
        return true;
    }
    unsigned len = wk_moqt_int_size(b);
    if (len_out) *len_out = len;
    if ((size_t)(c->end - c->p) < len) return false;
    *v = wk_moqt_int_get(c->p);
    c->p += len;
    return true;
}
/* Reads one MoQT integer; false (nothing consumed) when the input ends inside it. */
static inline bool wk_cursor_moqt_int(wk_cursor *c, uint64_t *v)
{
    return wk_cursor_moqt_int_n(c, v, NULL);
}

/* ---------------------------------------------------------------------------------------------
 * LEB128, unsigned (the Snappy preamble, the ssz_snappy length prefix, Colloq's binary frames): 7
 * value bits per byte, least significant group first, the high bit set on every byte but the last.
 * Ten bytes hold 64 bits; the 10th byte may carry only bit 63 (value bits 0 or 1). Whether a
 * non-minimal form (a redundant trailing zero group: 80 00 for 0, ff 00 for 127) is accepted is
 * the caller's explicit per-protocol choice (wk_varint_form).
 * ------------------------------------------------------------------------------------------- */
#define WK_LEB128_MAX_LEN 10

/* Whether a varint read accepts every form that holds the value, or only the minimal one. */
typedef enum wk_varint_form {
    WK_VARINT_ANY_FORM = 0,
    WK_VARINT_MINIMAL = 1
} wk_varint_form;

/* What a cursor varint read found. */
typedef enum wk_cursor_status {
    WK_CURSOR_OK = 0,
    WK_CURSOR_TRUNCATED, /* the input ends inside the integer (or no byte is left) */
    WK_CURSOR_OVERFLOW,  /* the value needs more than 64 bits: the 10th byte's value bits are above
                          * 1 (judged before its continuation bit) */
    WK_CURSOR_TOO_LONG,  /* byte number max_len still has its continuation bit set (judged as soon
                          * as that byte is seen, whatever follows) */
    WK_CURSOR_NONMINIMAL /* WK_VARINT_MINIMAL, and the last byte is a redundant 00 group */
} wk_cursor_status;

/* Minimal LEB128 length (1..10) of v. */
static inline unsigned wk_leb128_len(uint64_t v)
{
    if (v < 0x80) return 1; /* the 1- and 2-byte forms first: most lengths, ids and counters */
    if (v < 0x4000) return 2;
    unsigned n = 3;
    for (v >>= 21; v; v >>= 7) n++;
    return n;
}
/* Writes the minimal LEB128 encoding of v to dst, which must hold wk_leb128_len(v) bytes (at most
 * WK_LEB128_MAX_LEN). Returns the number of bytes written. */
static inline unsigned wk_leb128_put(uint8_t *dst, uint64_t v)
{
    if (v < 0x80) {
        dst[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        dst[0] = (uint8_t)(v | 0x80);
        dst[1] = (uint8_t)(v >> 7);
        return 2;
    }
    unsigned n = 0;
    while (v >= 0x80) {
        dst[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[n++] = (uint8_t)v;
    return n;
}
/* Reads one unsigned LEB128 integer of at most max_len bytes (1..10; 0 or more than 10 mean 10).
 * WK_CURSOR_OK: *v is the value, the cursor moved past it, *len (may be NULL) = its length. Any
 * other status: nothing is consumed and *len = the bytes examined: for WK_CURSOR_TRUNCATED all that
 * are left (0 for none), otherwise up to and including the byte at fault, whose offset is therefore
 * wk_cursor_offset(c) + *len - 1. Checked in this order on each byte: overflow (10th byte), too
 * long (byte max_len), non-minimal (the last byte). Never reads past c->end. */
static inline wk_cursor_status wk_cursor_leb128(wk_cursor *c, unsigned max_len, wk_varint_form form,
                                                uint64_t *v, size_t *len)
{
    size_t left = (size_t)(c->end - c->p), i;
    /* fast paths: the 1-byte form, and the 2-byte form when it is allowed (every length, id and
     * counter below 16384); the same answers as the loop below */
    if (left >= 1 && c->p[0] < 0x80) {
        *v = c->p[0];
        if (len) *len = 1;
        c->p += 1;
        return WK_CURSOR_OK;
    }
    if (left >= 2 && max_len != 1 && c->p[1] < 0x80 && (c->p[1] != 0 || form == WK_VARINT_ANY_FORM)) {
        *v = (uint64_t)(c->p[0] & 0x7F) | (uint64_t)c->p[1] << 7;
        if (len) *len = 2;
        c->p += 2;
        return WK_CURSOR_OK;
    }
    uint64_t x = 0;
    wk_cursor_status st = WK_CURSOR_TRUNCATED;
    if (max_len == 0 || max_len > WK_LEB128_MAX_LEN) max_len = WK_LEB128_MAX_LEN;
    for (i = 0; i < left; i++) {
        uint8_t b = c->p[i];
        if (i == WK_LEB128_MAX_LEN - 1 && (b & 0x7F) > 1) {
            st = WK_CURSOR_OVERFLOW;
            break;
        }
        x |= (uint64_t)(b & 0x7F) << (7 * i);
        if (b & 0x80) {
            if (i + 1 >= max_len) {
                st = WK_CURSOR_TOO_LONG;
                break;
            }
            continue;
        }
        st = (form == WK_VARINT_MINIMAL && i > 0 && b == 0) ? WK_CURSOR_NONMINIMAL : WK_CURSOR_OK;
        break;
    }
    if (len) *len = st == WK_CURSOR_TRUNCATED ? left : i + 1;
    if (st == WK_CURSOR_OK) {
        *v = x;
        c->p += i + 1;
    }
    return st;
}

/* Strict UTF-8 check (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
 * Returns true if p[0..n) is valid; otherwise false with *bad (may be NULL) set to the offset of
 * the first byte of the invalid sequence. */
bool wk_utf8_valid(const uint8_t *p, size_t n, size_t *bad);

/* Hex helpers for tests, CLI and messages. wk_hex_encode writes 2n chars plus a NUL into dst.
 * wk_hex_decode accepts upper or lower case, returns the byte count or -1 on bad input or when
 * the result would exceed cap. */
void wk_hex_encode(const uint8_t *src, size_t n, char *dst);
long wk_hex_decode(const char *text, size_t len, uint8_t *dst, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
