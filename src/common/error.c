/* The error model: one table of every code with its stable name, category and description. */
#include <wirekit/common.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct code_info {
    wk_code code;
    const char *name;
    wk_category cat;
    bool truncation;
    const char *text;
} code_info;

#define PEER WK_CAT_PEER_PROTOCOL
#define INTEG WK_CAT_INTEGRATION
static const code_info table[] = {
    {WK_OK, "WK_OK", WK_CAT_NONE, false, "no error"},
    {WK_ERR_NOMEM, "WK_ERR_NOMEM", INTEG, false, "out of memory or over the memory bound"},
    {WK_ERR_ARG, "WK_ERR_ARG", INTEG, false, "invalid argument"},
    {WK_ERR_STATE, "WK_ERR_STATE", INTEG, false, "call not valid in this state"},
    {WK_ERR_BACKEND, "WK_ERR_BACKEND", INTEG, false, "backend library failure"},
    {WK_ERR_USAGE, "WK_ERR_USAGE", WK_CAT_USAGE, false, "invalid option or value"},
    {WK_ERR_B64A_LENGTH, "B64A_ERR_LENGTH", PEER, false, "B64A text has an impossible length"},
    {WK_ERR_B64A_ALPHABET, "B64A_ERR_ALPHABET", PEER, false, "character outside the B64A alphabet"},
    {WK_ERR_B64A_TAIL, "B64A_ERR_TAIL", PEER, false, "B64A tail bits are not zero"},

    {WK_ERR_ILTP_DEFLATE_MALFORMED, "ILTP_ERR_DEFLATE_MALFORMED", PEER, false,
     "deflate12c data is malformed"},
    {WK_ERR_ILTP_DEFLATE_REFERENCE, "ILTP_ERR_DEFLATE_REFERENCE", PEER, false,
     "deflate12c back-reference cannot be resolved"},
    {WK_ERR_ILTP_ZSTD_MALFORMED, "ILTP_ERR_ZSTD_MALFORMED", PEER, false,
     "zstd20c data is malformed or references unresolvable history"},
    {WK_ERR_ILTP_ZSTD_HEADER, "ILTP_ERR_ZSTD_HEADER", PEER, false,
     "zstd20c frame header descriptor is not 00"},
    {WK_ERR_ILTP_ZSTD_WINDOW, "ILTP_ERR_ZSTD_WINDOW", PEER, false,
     "zstd20c declared window exceeds 2^20 bytes"},
    {WK_ERR_ILTP_AFTER_END_MARK, "ILTP_ERR_AFTER_END_MARK", PEER, false,
     "bytes after the end mark do not begin a raw preface"},
    {WK_ERR_ILTP_TRUNCATED, "ILTP_ERR_TRUNCATED", PEER, true, "input ended early"},
    {WK_ERR_ILTP_ENCODE, "ILTP_ERR_ENCODE", INTEG, false, "local inability to encode"},
    {WK_ERR_ILTP_TOKEN, "ILTP_ERR_TOKEN", PEER, false, "invalid encoding token"},
    {WK_ERR_ILTP_OFFER, "ILTP_ERR_OFFER", PEER, false, "invalid offer list"},
    {WK_ERR_ILTP_PREFACE, "ILTP_ERR_PREFACE", PEER, false, "invalid preface"},
    {WK_ERR_ILTP_VERSION, "ILTP_ERR_VERSION", PEER, false, "unsupported version"},
    {WK_ERR_ILTP_NONCE, "ILTP_ERR_NONCE", PEER, false, "invalid nonce"},
    {WK_ERR_ILTP_PREFACE_TOO_LONG, "ILTP_ERR_PREFACE_TOO_LONG", PEER, false,
     "preface longer than 1024 bytes"},
    {WK_ERR_ILTP_ITEM_LEAD, "ILTP_ERR_ITEM_LEAD", PEER, false, "no valid item leading sequence"},
    {WK_ERR_ILTP_FACT, "ILTP_ERR_FACT", PEER, false, "fact line is not canonical tuple text"},
    {WK_ERR_ILTP_FACT_LINE_TOO_LONG, "ILTP_ERR_FACT_LINE_TOO_LONG", PEER, false,
     "fact line longer than 1024 bytes"},
    {WK_ERR_ILTP_UTF8, "ILTP_ERR_UTF8", PEER, false, "invalid UTF-8 or text not in NFC"},
    {WK_ERR_ILTP_RECORD, "ILTP_ERR_RECORD", PEER, false, "invalid H3 record structure"},
    {WK_ERR_ILTP_RECORD_HASH, "ILTP_ERR_RECORD_HASH", PEER, false,
     "record hash does not match its content"},
    {WK_ERR_ILTP_ITEM_TOO_LARGE, "ILTP_ERR_ITEM_TOO_LARGE", PEER, false, "item over the 64 MiB cap"},
    {WK_ERR_ILTP_BLOB_TOO_LARGE, "ILTP_ERR_BLOB_TOO_LARGE", PEER, false, "Blob data over 32 MiB"},
    {WK_ERR_ILTP_OPERAND_TOO_LARGE, "ILTP_ERR_OPERAND_TOO_LARGE", PEER, false,
     "operand Blob over 1 MiB"},
    {WK_ERR_ILTP_PREFACE_ENCODED, "ILTP_ERR_PREFACE_ENCODED", PEER, false,
     "a preface decoded out of a compressed stream"},
    {WK_ERR_ILTP_SAME_NONCE, "ILTP_ERR_SAME_NONCE", PEER, false, "both prefaces carry the same nonce"},
    {WK_ERR_ILTP_NONCE_EXHAUSTED, "ILTP_ERR_NONCE_EXHAUSTED", INTEG, false,
     "nonce sequence exhausted"},
    {WK_ERR_ILTP_ADDRESS, "ILTP_ERR_ADDRESS", PEER, false, "invalid address"},

    {WK_ERR_ILTP_SESSION_ORDER, "ILTP_ERR_SESSION_ORDER", PEER, false,
     "wrong-family, duplicate, unrequested or out-of-order input"},
    {WK_ERR_ILTP_PREMATURE_EOF, "ILTP_ERR_PREMATURE_EOF", PEER, false,
     "boundary EOF outside fixed point"},
    {WK_ERR_ILTP_BUDGET, "ILTP_ERR_BUDGET", PEER, false, "received-control budget exceeded"},
    {WK_ERR_ILTP_DEADLINE, "ILTP_ERR_DEADLINE", WK_CAT_TRANSPORT, false, "phase deadline passed"},
    {WK_ERR_ILTP_PROOF, "WK_ERR_ILTP_PROOF", PEER, false, "the peer's establishment proof is not the expected one"},
    {WK_ERR_ILTP_STORE, "ILTP_ERR_STORE", INTEG, false, "the local store failed"},

    {WK_ERR_SNAPPY_TRUNCATED, "SNAPPY_ERR_TRUNCATED", PEER, true, "snappy block ended inside an element"},
    {WK_ERR_SNAPPY_PREAMBLE, "SNAPPY_ERR_PREAMBLE", PEER, false, "snappy preamble over 5 bytes or above 2^32-1"},
    {WK_ERR_SNAPPY_TOO_LARGE, "SNAPPY_ERR_TOO_LARGE", PEER, false, "snappy declared length above the limit"},
    {WK_ERR_SNAPPY_BAD_OFFSET, "SNAPPY_ERR_BAD_OFFSET", PEER, false, "snappy copy offset 0 or before the output start"},
    {WK_ERR_SNAPPY_OVERRUN, "SNAPPY_ERR_OVERRUN", PEER, false, "snappy element writes past the declared length"},
    {WK_ERR_SNAPPY_LENGTH_MISMATCH, "SNAPPY_ERR_LENGTH_MISMATCH", PEER, false, "snappy block produced fewer bytes than declared"},
    {WK_ERR_FRAME_NO_STREAM_ID, "FRAME_ERR_NO_STREAM_ID", PEER, false, "framed stream does not start with the stream identifier"},
    {WK_ERR_FRAME_BAD_STREAM_ID, "FRAME_ERR_BAD_STREAM_ID", PEER, false, "stream identifier chunk is not ff 06 00 00 sNaPpY"},
    {WK_ERR_FRAME_RESERVED_CHUNK, "FRAME_ERR_RESERVED_CHUNK", PEER, false, "reserved unskippable chunk type 0x02..0x7f"},
    {WK_ERR_FRAME_CHUNK_TOO_SHORT, "FRAME_ERR_CHUNK_TOO_SHORT", PEER, false, "data chunk shorter than its checksum"},
    {WK_ERR_FRAME_CHUNK_TOO_LARGE, "FRAME_ERR_CHUNK_TOO_LARGE", PEER, false, "chunk body or decoded chunk above its limit"},
    {WK_ERR_FRAME_CRC, "FRAME_ERR_CRC", PEER, false, "masked CRC-32C mismatch"},
    {WK_ERR_FRAME_TRUNCATED, "FRAME_ERR_TRUNCATED", PEER, true, "framed stream ended inside a chunk"},
    {WK_ERR_SSZSNAPPY_VARINT_TOO_LONG, "SSZSNAPPY_ERR_VARINT_TOO_LONG", PEER, false, "length prefix longer than 10 bytes"},
    {WK_ERR_SSZSNAPPY_VARINT_OVERFLOW, "SSZSNAPPY_ERR_VARINT_OVERFLOW", PEER, false, "length prefix above 2^64-1"},
    {WK_ERR_SSZSNAPPY_VARINT_NONMINIMAL, "SSZSNAPPY_ERR_VARINT_NONMINIMAL", PEER, false, "length prefix not minimally encoded"},
    {WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, "SSZSNAPPY_ERR_LENGTH_BOUNDS", PEER, false, "declared SSZ length outside the type bounds"},
    {WK_ERR_SSZSNAPPY_BUDGET, "SSZSNAPPY_ERR_BUDGET", PEER, false, "more than max_compressed_len(n) bytes read for the payload"},
    {WK_ERR_SSZSNAPPY_EXCESS_DATA, "SSZSNAPPY_ERR_EXCESS_DATA", PEER, false, "framed payload decodes to more than the declared length"},
    {WK_ERR_SSZSNAPPY_EARLY_EOF, "SSZSNAPPY_ERR_EARLY_EOF", PEER, true, "stream ended before the declared length was decoded"},
    {WK_ERR_SSZSNAPPY_TRAILING, "SSZSNAPPY_ERR_TRAILING", PEER, false, "bytes after a complete request payload"},
    {WK_ERR_RESP_RESULT_RESERVED, "RESP_ERR_RESULT_RESERVED", PEER, false, "reserved result code 4..127"},
    {WK_ERR_RESP_ERRMSG_TOO_LONG, "RESP_ERR_ERRMSG_TOO_LONG", PEER, false, "error message length above 256"},
    {WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE, "GOSSIP_ERR_COMPRESSED_TOO_LARGE", PEER, false, "gossip data above max_compressed_len(MAX_PAYLOAD_SIZE)"},
    {WK_ERR_RLPX_EMPTY, "RLPX_ERR_EMPTY", PEER, false, "frame-data has no message id"},
    {WK_ERR_RLPX_MSGID, "RLPX_ERR_MSGID", PEER, false, "message id is not a canonical RLP uint64"},
    {WK_ERR_RLPX_TOO_LARGE, "RLPX_ERR_TOO_LARGE", PEER, false, "message data above the size limit"},
    {WK_ERR_RLPX_FRAME_SIZE, "RLPX_ERR_FRAME_SIZE", PEER, false, "frame-data longer than 0xFFFFFF"},
    {WK_ERR_RLP_TRUNCATED, "RLP_ERR_TRUNCATED", PEER, true, "RLP item extends past the input"},
    {WK_ERR_RLP_NONCANON_SIZE, "RLP_ERR_NONCANON_SIZE", PEER, false, "RLP size not in canonical form"},
    {WK_ERR_RLP_NONCANON_INT, "RLP_ERR_NONCANON_INT", PEER, false, "RLP integer with a leading zero byte"},
    {WK_ERR_RLP_UINT_OVERFLOW, "RLP_ERR_UINT_OVERFLOW", PEER, false, "RLP integer wider than 64 bits"},
    {WK_ERR_RLP_EXPECTED_STRING, "RLP_ERR_EXPECTED_STRING", PEER, false, "RLP list where a string was expected"},
    {WK_ERR_RLP_EXPECTED_LIST, "RLP_ERR_EXPECTED_LIST", PEER, false, "RLP string where a list was expected"},
    {WK_ERR_RLP_TRAILING, "RLP_ERR_TRAILING", PEER, false, "bytes after a complete RLP item"},
    {WK_ERR_RLP_ELEM_TOO_LARGE, "RLP_ERR_ELEM_TOO_LARGE", PEER, false, "RLP element larger than its enclosing list"},
    {WK_ERR_RLP_DEPTH, "RLP_ERR_DEPTH", PEER, false, "RLP lists nested too deeply"},
    {WK_ERR_MOQT_TRUNCATED, "MOQT_ERR_TRUNCATED", PEER, true, "input ended inside a MoQT field or payload"},
    {WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, "MOQT_ERR_UNKNOWN_STREAM_TYPE", PEER, false, "unknown unidirectional stream type"},
    {WK_ERR_MOQT_WRONG_STREAM_TYPE, "MOQT_ERR_WRONG_STREAM_TYPE", PEER, false, "stream type is not the carrier expected"},
    {WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED, "MOQT_ERR_SUBGROUP_ID_MODE_RESERVED", PEER, false, "subgroup Type Flags use the reserved SUBGROUP_ID_MODE 0b11"},
    {WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR, "MOQT_ERR_SUBGROUP_BIT4_CLEAR", PEER, false, "subgroup Type Flags have bit 4 (0x10) clear"},
    {WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE, "MOQT_ERR_SUBGROUP_TYPE_TOO_LARGE", PEER, false, "subgroup Type Flags of 128 or greater"},
    {WK_ERR_MOQT_DATAGRAM_STATUS_END_OF_GROUP, "MOQT_ERR_DATAGRAM_STATUS_END_OF_GROUP", PEER, false, "datagram Type Flags set both STATUS and END_OF_GROUP"},
    {WK_ERR_MOQT_DATAGRAM_RESERVED_BIT, "MOQT_ERR_DATAGRAM_RESERVED_BIT", PEER, false, "datagram Type Flags set the reserved bit 4 (0x10)"},
    {WK_ERR_MOQT_DATAGRAM_UNSPECIFIED_BIT, "MOQT_ERR_DATAGRAM_UNSPECIFIED_BIT", PEER, false, "datagram Type Flags set a bit with no specified meaning"},
    {WK_ERR_MOQT_EMPTY_PROPERTIES, "MOQT_ERR_EMPTY_PROPERTIES", PEER, false, "datagram PROPERTIES bit set with Properties Length 0"},
    {WK_ERR_MOQT_STATUS_PROPERTIES, "MOQT_ERR_STATUS_PROPERTIES", PEER, false, "only a Normal object may carry properties"},
    {WK_ERR_MOQT_PAYLOAD_NOT_PERMITTED, "MOQT_ERR_PAYLOAD_NOT_PERMITTED", PEER, false, "payload not permitted with this status"},
    {WK_ERR_MOQT_UNKNOWN_STATUS, "MOQT_ERR_UNKNOWN_STATUS", PEER, false, "Object Status not assigned"},
    {WK_ERR_MOQT_OBJECT_ID_OVERFLOW, "MOQT_ERR_OBJECT_ID_OVERFLOW", PEER, false, "Object ID above 2^64-1"},
    {WK_ERR_MOQT_GROUP_ID_OVERFLOW, "MOQT_ERR_GROUP_ID_OVERFLOW", PEER, false, "Group ID above 2^64-1 or below 0"},
    {WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW, "MOQT_ERR_SUBGROUP_ID_OVERFLOW", PEER, false, "Subgroup ID above 2^64-1"},
    {WK_ERR_MOQT_OBJECT_AFTER_END, "MOQT_ERR_OBJECT_AFTER_END", PEER, false, "object after an End of Group or End of Track status"},
    {WK_ERR_MOQT_SERIALIZATION_FLAGS, "MOQT_ERR_SERIALIZATION_FLAGS", PEER, false, "Serialization Flags of 128 or more that are not an End of Range marker"},
    {WK_ERR_MOQT_FIRST_RECORD, "MOQT_ERR_FIRST_RECORD", PEER, false, "first fetch record lacks a delta or refers to a prior object"},
    {WK_ERR_MOQT_NO_PRIOR_OBJECT, "MOQT_ERR_NO_PRIOR_OBJECT", PEER, false, "prior Subgroup ID or Priority referenced with no prior object"},
    {WK_ERR_MOQT_PRIOR_NO_SUBGROUP, "MOQT_ERR_PRIOR_NO_SUBGROUP", PEER, false, "prior Subgroup ID referenced after a datagram object"},
    {WK_ERR_MOQT_END_OF_RANGE_LENGTH, "MOQT_ERR_END_OF_RANGE_LENGTH", PEER, false, "End of Range record with a non-zero Object Payload Length"},
    {WK_ERR_MOQT_PROPERTY_LENGTH, "MOQT_ERR_PROPERTY_LENGTH", PEER, false, "property value length above 65535"},
    {WK_ERR_MOQT_PROPERTY_TYPE_OVERFLOW, "MOQT_ERR_PROPERTY_TYPE_OVERFLOW", PEER, false, "property type above 2^64-1"},
    {WK_ERR_MOQT_PROPERTY_OVERRUN, "MOQT_ERR_PROPERTY_OVERRUN", PEER, false, "property pair crosses the end of its block"},
    {WK_ERR_MOQT_PROPERTIES_TOO_LARGE, "MOQT_ERR_PROPERTIES_TOO_LARGE", PEER, false, "Properties Length above the reader's bound"},
    {WK_ERR_MOQT_PADDING_NONZERO, "MOQT_ERR_PADDING_NONZERO", PEER, false, "padding byte is not zero"},

    {WK_ERR_COLLOQ_JSON, "COLLOQ_ERR_JSON", WK_CAT_USAGE, false, "conversation or plan is not JSON"},
    {WK_ERR_COLLOQ_SCHEMA, "COLLOQ_ERR_SCHEMA", WK_CAT_USAGE, false, "missing or unknown key, or wrong JSON type"},
    {WK_ERR_COLLOQ_NAME, "COLLOQ_ERR_NAME", WK_CAT_USAGE, false, "invalid name"},
    {WK_ERR_COLLOQ_DUPLICATE, "COLLOQ_ERR_DUPLICATE", WK_CAT_USAGE, false, "duplicate declaration or transition"},
    {WK_ERR_COLLOQ_UNKNOWN_STATE, "COLLOQ_ERR_UNKNOWN_STATE", WK_CAT_USAGE, false, "unknown state"},
    {WK_ERR_COLLOQ_UNKNOWN_ROLE, "COLLOQ_ERR_UNKNOWN_ROLE", WK_CAT_USAGE, false, "unknown role"},
    {WK_ERR_COLLOQ_UNKNOWN_MESSAGE, "COLLOQ_ERR_UNKNOWN_MESSAGE", WK_CAT_USAGE, false, "unknown message"},
    {WK_ERR_COLLOQ_UNKNOWN_TYPE, "COLLOQ_ERR_UNKNOWN_TYPE", WK_CAT_USAGE, false, "unknown field type"},
    {WK_ERR_COLLOQ_LIMIT, "COLLOQ_ERR_LIMIT", WK_CAT_USAGE, false, "a conversation limit is exceeded"},
    {WK_ERR_COLLOQ_STRUCTURE, "COLLOQ_ERR_STRUCTURE", WK_CAT_USAGE, false, "structural error in the conversation"},
    {WK_ERR_COLLOQ_PLAN, "COLLOQ_ERR_PLAN", WK_CAT_USAGE, false, "plan differs from what its content compiles to"},
    {WK_ERR_COLLOQ_PREFACE, "COLLOQ_ERR_PREFACE", PEER, false, "malformed session preface"},
    {WK_ERR_COLLOQ_PLAN_MISMATCH, "COLLOQ_ERR_PLAN_MISMATCH", PEER, false, "peer uses another plan identity"},
    {WK_ERR_COLLOQ_WIRE_MISMATCH, "COLLOQ_ERR_WIRE_MISMATCH", PEER, false, "peer uses another wire encoding"},
    {WK_ERR_COLLOQ_PREFACE_ROLE, "COLLOQ_ERR_PREFACE_ROLE", PEER, false, "peer role unknown or the same as ours"},
    {WK_ERR_COLLOQ_UNKNOWN_TRANSITION, "COLLOQ_ERR_UNKNOWN_TRANSITION", PEER, false, "unknown-transition"},
    {WK_ERR_COLLOQ_WRONG_STATE, "COLLOQ_ERR_WRONG_STATE", PEER, false, "wrong-state"},
    {WK_ERR_COLLOQ_WRONG_SENDER, "COLLOQ_ERR_WRONG_SENDER", PEER, false, "wrong-sender"},
    {WK_ERR_COLLOQ_BAD_SEQUENCE, "COLLOQ_ERR_BAD_SEQUENCE", PEER, false, "bad-sequence"},
    {WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "COLLOQ_ERR_MALFORMED_PAYLOAD", PEER, false, "malformed-payload"},
    {WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, "COLLOQ_ERR_PAYLOAD_TOO_LARGE", PEER, false, "payload-too-large"},
    {WK_ERR_COLLOQ_TRUNCATED, "COLLOQ_ERR_TRUNCATED", PEER, true, "truncated"},
    {WK_ERR_COLLOQ_AFTER_FINAL, "COLLOQ_ERR_AFTER_FINAL", PEER, false, "after-final"},
    {WK_ERR_COLLOQ_TRACE, "COLLOQ_ERR_TRACE", WK_CAT_USAGE, false, "trace entry malformed or inconsistent with the plan"},

    {WK_ERR_HOST_IO, "HOST_ERR_IO", INTEG, false, "local I/O failure"},
    {WK_ERR_HOST_STORE_CORRUPT, "HOST_ERR_STORE_CORRUPT", INTEG, false,
     "stored Blob fails its hash"},
    {WK_ERR_HOST_NOT_FOUND, "HOST_ERR_NOT_FOUND", WK_CAT_USAGE, false, "no Blob with this hash"},
    {WK_ERR_HOST_HASH_MISMATCH, "HOST_ERR_HASH_MISMATCH", PEER, false,
     "data does not match the expected hash"},
    {WK_ERR_HOST_RESOLVE, "WK_ERR_HOST_RESOLVE", WK_CAT_TRANSPORT, false, "the carrier address did not resolve"},
    {WK_ERR_HOST_CONNECT, "WK_ERR_HOST_CONNECT", WK_CAT_TRANSPORT, false, "connecting the carrier failed"},
    {WK_ERR_HOST_LISTEN, "WK_ERR_HOST_LISTEN", WK_CAT_TRANSPORT, false, "listening on the carrier address failed"},
    {WK_ERR_HOST_READ, "WK_ERR_HOST_READ", WK_CAT_TRANSPORT, false, "reading from the carrier failed"},
    {WK_ERR_HOST_WRITE, "WK_ERR_HOST_WRITE", WK_CAT_TRANSPORT, false, "writing to the carrier failed"},
    {WK_ERR_HOST_CARRIER, "WK_ERR_HOST_CARRIER", INTEG, false, "the carrier cannot be set up locally"},
    {WK_ERR_HOST_SESSIONS_LIMIT, "WK_ERR_HOST_SESSIONS_LIMIT", WK_CAT_TRANSPORT, false, "too many sessions: connection refused"},
    {WK_ERR_HOST_MEMORY_LIMIT, "WK_ERR_HOST_MEMORY_LIMIT", INTEG, false, "the sessions' memory budget is spent"},
    {WK_ERR_HOST_IDLE_TIMEOUT, "WK_ERR_HOST_IDLE_TIMEOUT", WK_CAT_TRANSPORT, false, "silent at fixed point for the idle timeout"},
    {WK_ERR_HOST_CLOSE_TIMEOUT, "WK_ERR_HOST_CLOSE_TIMEOUT", WK_CAT_TRANSPORT, false, "the peer did not end its direction after ours"},
    {WK_ERR_HOST_INTERRUPTED, "WK_ERR_HOST_INTERRUPTED", WK_CAT_USAGE, false, "interrupted before fixed point"},
    {WK_ERR_HOST_WS_UPGRADE, "WK_ERR_HOST_WS_UPGRADE", WK_CAT_TRANSPORT, false, "the WebSocket upgrade handshake is invalid"},
    {WK_ERR_HOST_WS_PATH, "WK_ERR_HOST_WS_PATH", WK_CAT_TRANSPORT, false, "upgrade request for another path (404)"},
    {WK_ERR_HOST_WS_TEXT, "WK_ERR_HOST_WS_TEXT", PEER, false, "a WebSocket text message (ILTP uses binary messages)"},
    {WK_ERR_HOST_WS_PROTOCOL, "WK_ERR_HOST_WS_PROTOCOL", WK_CAT_TRANSPORT, false, "a WebSocket framing rule was broken"},
    {WK_ERR_HOST_WS_MESSAGE_TOO_BIG, "WK_ERR_HOST_WS_MESSAGE_TOO_BIG", WK_CAT_TRANSPORT, false, "a WebSocket message over the receiver's bound"},
    {WK_ERR_HOST_WS_CLOSED, "WK_ERR_HOST_WS_CLOSED", WK_CAT_TRANSPORT, false, "the WebSocket connection ended without a clean close"},
    {WK_ERR_HOST_WS_TIMEOUT, "WK_ERR_HOST_WS_TIMEOUT", WK_CAT_TRANSPORT, false, "a WebSocket handshake passed its deadline"},
    {WK_ERR_HOST_TLS_HANDSHAKE, "WK_ERR_HOST_TLS_HANDSHAKE", WK_CAT_TRANSPORT, false, "the TLS handshake failed"},
    {WK_ERR_HOST_TLS_VERIFY, "WK_ERR_HOST_TLS_VERIFY", WK_CAT_TRANSPORT, false, "the peer's certificate did not verify"},
    {WK_ERR_HOST_TLS, "WK_ERR_HOST_TLS", WK_CAT_TRANSPORT, false, "TLS record-layer failure"},
    {WK_ERR_HOST_TLS_CREDENTIALS, "WK_ERR_HOST_TLS_CREDENTIALS", WK_CAT_USAGE, false, "TLS certificate, key or CA file cannot be loaded"},
#define T WK_CAT_TRANSPORT
    {WK_ERR_HOST_QUIB_PROFILE, "WK_ERR_HOST_QUIB_PROFILE", T, false, "QUIB profile: ALPN QUIB/1 missing or different"},
    {WK_ERR_HOST_QUIB_TLS, "WK_ERR_HOST_QUIB_TLS", T, false, "the QUIC TLS handshake failed"},
    {WK_ERR_HOST_QUIB_CERTIFICATE, "WK_ERR_HOST_QUIB_CERTIFICATE", T, false, "the server certificate was refused"},
    {WK_ERR_HOST_QUIB_APP_CLOSE, "WK_ERR_HOST_QUIB_APP_CLOSE", T, false, "the peer closed with an application error"},
    {WK_ERR_HOST_QUIB_TRANSPORT_CLOSE, "WK_ERR_HOST_QUIB_TRANSPORT_CLOSE", T, false, "the peer closed with a transport error"},
    {WK_ERR_HOST_QUIB_STATELESS_RESET, "WK_ERR_HOST_QUIB_STATELESS_RESET", T, false, "stateless reset before settlement"},
    {WK_ERR_HOST_QUIB_RESET_STREAM, "WK_ERR_HOST_QUIB_RESET_STREAM", T, false, "the peer reset the ILTP stream"},
    {WK_ERR_HOST_QUIB_STOP_SENDING, "WK_ERR_HOST_QUIB_STOP_SENDING", T, false, "the peer sent STOP_SENDING"},
    {WK_ERR_HOST_QUIB_IDLE_TIMEOUT, "WK_ERR_HOST_QUIB_IDLE_TIMEOUT", T, false, "the QUIC idle timeout passed"},
    {WK_ERR_HOST_QUIB_HANDSHAKE_TIMEOUT, "WK_ERR_HOST_QUIB_HANDSHAKE_TIMEOUT", T, false, "the QUIC handshake timed out"},
    {WK_ERR_HOST_QUIB_FINISH_TIMEOUT, "WK_ERR_HOST_QUIB_FINISH_TIMEOUT", T, false, "our FIN was not acknowledged in time"},
    {WK_ERR_HOST_QUIB_PROTOCOL, "WK_ERR_HOST_QUIB_PROTOCOL", T, false, "the peer violated the QUIC protocol"},
    {WK_ERR_HOST_QUIB_VERSION, "WK_ERR_HOST_QUIB_VERSION", T, false, "no common QUIC version (v1 only)"},
    {WK_ERR_HOST_QUIB_STREAM, "WK_ERR_HOST_QUIB_STREAM", T, false, "the peer used a stream QUIB does not allow"},
#undef T
};
#undef PEER
#undef INTEG

static const code_info *lookup(wk_code code)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == code) return &table[i];
    return NULL;
}

const char *wk_version(void) { return WK_VERSION_STRING; }

const char *wk_error_name(wk_code code)
{
    const code_info *c = lookup(code);
    return c ? c->name : "WK_ERR_UNKNOWN";
}

const char *wk_strerror(wk_code code)
{
    const code_info *c = lookup(code);
    return c ? c->text : "unknown error code";
}

wk_category wk_code_category(wk_code code)
{
    const code_info *c = lookup(code);
    return c ? c->cat : WK_CAT_INTEGRATION;
}

bool wk_code_is_truncation(wk_code code)
{
    const code_info *c = lookup(code);
    return c && c->truncation;
}

const char *wk_category_name(wk_category cat)
{
    switch (cat) {
    case WK_CAT_PEER_PROTOCOL: return "PeerProtocol";
    case WK_CAT_INTEGRATION: return "Integration";
    case WK_CAT_TRANSPORT: return "Transport";
    case WK_CAT_USAGE: return "Usage";
    default: return "None";
    }
}

wk_code wk_error_set(wk_error *err, wk_code code, uint64_t offset, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    err->category = wk_code_category(code);
    err->has_offset = offset != WK_NO_OFFSET;
    err->offset = err->has_offset ? offset : 0;
    err->msg[0] = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    } else {
        snprintf(err->msg, sizeof err->msg, "%s", wk_strerror(code));
    }
    return code;
}

void wk_error_clear(wk_error *err)
{
    if (err) memset(err, 0, sizeof *err);
}

char *wk_error_format(const wk_error *err, char *buf, size_t cap)
{
    if (!cap) return buf;
    const char *msg = err->msg[0] ? err->msg : wk_strerror(err->code);
    if (err->has_offset)
        snprintf(buf, cap, "%s at offset %llu: %s", wk_error_name(err->code),
                 (unsigned long long)err->offset, msg);
    else
        snprintf(buf, cap, "%s: %s", wk_error_name(err->code), msg);
    return buf;
}
