/* wirekit moqt: the MoQT draft-20 data plane (draft-ietf-moq-transport-20).
 *
 * Parts (specification: shared/seeds/003_*.txt; wire details and decisions:
 * shared/specs/moqt-draft20-data-streams.md, cited below as "spec N"):
 *   - the MoQT integer (spec 1): in common.h (wk_cursor_moqt_int, wk_moqt_int_put, ...)
 *   - stream-type and datagram-type dispatch (spec 2)
 *   - SUBGROUP_HEADER and subgroup objects (spec 3)
 *   - OBJECT_DATAGRAM (spec 4)
 *   - FETCH_HEADER and fetch object records with End of Range markers (spec 5)
 *   - the Properties block (spec 6), padding streams and datagrams (spec 7), Object Status (spec 8)
 *
 * Shape (the contract of docs/architecture.md). One sans-I/O reader, wk_moqt_stream_reader, reads a
 * unidirectional data stream (subgroup, fetch or padding) pushed in pieces of any size:
 * wk_moqt_stream_reader_read(r, in, NULL, err) returns WK_EVENT for one event at a time, its
 * details read from the reader (r->event says which: the header, each object's framing with IDs
 * resolved and properties as a borrowed slice together with the payload bytes of that push, then
 * further payload pieces as slices of the caller's input, so a large payload is never buffered),
 * or WK_NEED_INPUT with the push consumed, or WK_ERROR; wk_moqt_stream_reader_finish(r, rest,
 * err) declares FIN. The reader is a plain struct the caller owns (_init); it never allocates.
 * Datagrams and headers are decoded whole from a wk_in (wk_moqt_datagram_decode,
 * wk_moqt_subgroup_header_decode, wk_moqt_fetch_header_decode). Encoders write into a wk_out and
 * never write half an item: each has a _size, and WK_NEED_OUTPUT leaves the view untouched; an
 * input they refuse is WK_ERROR with a code whatever the room. Calls that consume a wk_in or fill
 * a wk_out return wk_result; checks of values or bytes (type checks, classify, peek, validate,
 * sizes, the properties iterator) return wk_code.
 *
 * Errors: every condition of spec 9 has its own WK_ERR_MOQT_* code (common.h, range 500-699) and
 * the byte offset of the field at fault (for a stream: counted from the first byte ever pushed;
 * for truncation: where the input ended). wk_moqt_error_category gives the vectors' category
 * ("incomplete", "invalid_type", "invalid_value", "payload_not_permitted").
 *
 * Decisions (spec 11, settled; the spec's section 9 rows are cited as "#N"):
 *   1. End of Range records: reading A by default (the marker's two fields sit in the Group ID
 *      Delta / Object ID Delta slots and follow the ordinary delta rules, then an Object Payload
 *      Length that must be 0, else MOQT_ERR_END_OF_RANGE_LENGTH). Reading B (two absolute IDs and
 *      nothing else) is the per-stream option WK_MOQT_END_OF_RANGE_ABSOLUTE. A marker never
 *      carries Subgroup ID, Priority or Properties; it updates the prior Group/Object ID only.
 *   2. Properties on a status object: a subgroup object with a non-Normal status may carry
 *      properties (the vectors and the seed's crate accept it; the draft's stricter wording,
 *      section 11.2.1.2, says an endpoint MUST close the session); a datagram may not
 *      (MOQT_ERR_STATUS_PROPERTIES), as its vector says.
 *   3. Bytes after a datagram's Object Status: MOQT_ERR_PAYLOAD_NOT_PERMITTED.
 *   4. Non-minimal integers, Type Flags and Serialization Flags included, are accepted on receive
 *      (e.g. subgroup Type Flags 0x10 written 8010: the ">= 128" rule bounds the value) and never
 *      emitted: every writer emits minimal integers.
 *   5. A datagram's Object Status is a MoQT integer, not a byte.
 *   6. Padding bytes are discarded unchecked by default; option strict_padding refuses a non-zero
 *      byte (MOQT_ERR_PADDING_NONZERO).
 *   7. An unknown stream type is MOQT_ERR_UNKNOWN_STREAM_TYPE (session PROTOCOL_VIOLATION 0x3).
 *   8. A subgroup header followed by FIN and no objects is accepted: an empty subgroup (in
 *      SUBGROUP_ID_MODE 0b01 its Subgroup ID stays unknown).
 *   9. Group Order is an input of the fetch reader (option group_order, Ascending by default).
 * Further choices where the spec leaves room:
 *   - Type validity is computed from the bits: subgroup = value < 128, bit 4 set, mode != 0b11;
 *     datagram = no bit outside 0x2F set and not STATUS+END_OF_GROUP (the three conditions of each
 *     are reported separately, checked in the draft's order).
 *   - Unassigned Object Status (#12, a SHOULD): refused by default (MOQT_ERR_UNKNOWN_STATUS);
 *     option allow_unknown_status accepts it.
 *   - Objects after an End of Group / End of Track status on one subgroup stream (#15): refused by
 *     default (MOQT_ERR_OBJECT_AFTER_END); option allow_objects_after_end accepts them.
 *   - Properties: the block length is always checked; the pairs are validated (strict mode,
 *     the default) unless option properties_length_only (a forwarder's view). A pair crossing
 *     the block's end is MOQT_ERR_PROPERTY_OVERRUN. The slice handed out is the pairs only
 *     (without the Properties Length).
 *   - Fetch: a record whose mode 1/2 refers to the prior Subgroup ID when the prior object was a
 *     datagram object is MOQT_ERR_PRIOR_NO_SUBGROUP; a prior Subgroup ID or Priority referenced
 *     before any real object is MOQT_ERR_NO_PRIOR_OBJECT; the first record's violations (#10) are
 *     MOQT_ERR_FIRST_RECORD. Mode 2 overflowing 2^64-1 is MOQT_ERR_SUBGROUP_ID_OVERFLOW.
 *   - FIN inside the header or an object is MOQT_ERR_TRUNCATED ("incomplete"; the draft says
 *     SHOULD be a PROTOCOL_VIOLATION: the caller closes the session either way).
 *   - A stream reader expecting a subgroup stream reports a non-subgroup value by the subgroup
 *     rule it breaks (e.g. 0x20: MOQT_ERR_SUBGROUP_BIT4_CLEAR, as the vectors expect), except the
 *     known types 0x05 and 0x2F00 (MOQT_ERR_WRONG_STREAM_TYPE). Expecting a fetch stream,
 *     anything but 0x05 and padding is MOQT_ERR_WRONG_STREAM_TYPE (#14). Padding streams are
 *     accepted whatever the reader expects.
 */
#ifndef WIREKIT_MOQT_H
#define WIREKIT_MOQT_H

#include <wirekit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Constants (spec 2-8)
 * ------------------------------------------------------------------------------------------- */
#define WK_MOQT_STREAM_TYPE_FETCH 0x05u              /* FETCH_HEADER */
#define WK_MOQT_STREAM_TYPE_SETUP 0x2F00u            /* control stream (not data plane) */
#define WK_MOQT_STREAM_TYPE_PADDING 0x132B3E28u      /* padding stream (section 11.5.1) */
#define WK_MOQT_DATAGRAM_TYPE_PADDING 0x132B3E29u    /* padding datagram (section 11.5.2) */

/* SUBGROUP_HEADER Type Flags (section 11.4.2), form 0b0XX1XXXX. */
#define WK_MOQT_SUBGROUP_PROPERTIES 0x01u
#define WK_MOQT_SUBGROUP_ID_MODE_MASK 0x06u
#define WK_MOQT_SUBGROUP_ID_MODE_SHIFT 1
#define WK_MOQT_SUBGROUP_END_OF_GROUP 0x08u
#define WK_MOQT_SUBGROUP_BASE 0x10u                 /* bit 4: MUST be 1 */
#define WK_MOQT_SUBGROUP_DEFAULT_PRIORITY 0x20u     /* no Publisher Priority byte */
#define WK_MOQT_SUBGROUP_FIRST_OBJECT 0x40u

/* SUBGROUP_ID_MODE values ((flags & 0x06) >> 1). */
typedef enum wk_moqt_subgroup_id_mode {
    WK_MOQT_SUBGROUP_ID_ZERO = 0,        /* Subgroup ID is 0, no field */
    WK_MOQT_SUBGROUP_ID_FIRST_OBJECT = 1, /* Subgroup ID = first object's Object ID, no field */
    WK_MOQT_SUBGROUP_ID_EXPLICIT = 2,    /* Subgroup ID field present */
    WK_MOQT_SUBGROUP_ID_RESERVED = 3     /* invalid */
} wk_moqt_subgroup_id_mode;

/* OBJECT_DATAGRAM Type Flags (section 11.3.1), form 0b00X0XXXX. */
#define WK_MOQT_DATAGRAM_PROPERTIES 0x01u
#define WK_MOQT_DATAGRAM_END_OF_GROUP 0x02u
#define WK_MOQT_DATAGRAM_ZERO_OBJECT_ID 0x04u      /* Object ID 0, field omitted */
#define WK_MOQT_DATAGRAM_DEFAULT_PRIORITY 0x08u    /* no Publisher Priority byte */
#define WK_MOQT_DATAGRAM_RESERVED 0x10u            /* bit 4: MUST be 0 */
#define WK_MOQT_DATAGRAM_STATUS 0x20u              /* Object Status instead of a payload */
#define WK_MOQT_DATAGRAM_SPECIFIED 0x2Fu           /* every bit with a meaning */

/* Fetch Serialization Flags (section 11.4.4, Tables 7-9). */
#define WK_MOQT_FETCH_SUBGROUP_MODE_MASK 0x03u /* 0: ID 0; 1: prior; 2: prior + 1; 3: field */
#define WK_MOQT_FETCH_OBJECT_ID_DELTA 0x04u
#define WK_MOQT_FETCH_GROUP_ID_DELTA 0x08u
#define WK_MOQT_FETCH_PRIORITY 0x10u
#define WK_MOQT_FETCH_PROPERTIES 0x20u
#define WK_MOQT_FETCH_DATAGRAM 0x40u           /* no Subgroup ID; mode bits ignored */
#define WK_MOQT_FETCH_FLAGS_MAX 0x7Fu          /* values above are End of Range markers or invalid */
#define WK_MOQT_FETCH_END_OF_NON_EXISTENT_RANGE 0x8Cu
#define WK_MOQT_FETCH_END_OF_UNKNOWN_RANGE 0x10Cu
#define WK_MOQT_FETCH_END_OF_TIMED_OUT_RANGE 0x20Cu /* new in draft-20 */

/* Fetch subgroup modes (flags & 0x03). */
#define WK_MOQT_FETCH_SUBGROUP_ZERO 0u
#define WK_MOQT_FETCH_SUBGROUP_PRIOR 1u
#define WK_MOQT_FETCH_SUBGROUP_NEXT 2u
#define WK_MOQT_FETCH_SUBGROUP_EXPLICIT 3u

/* Object Status (section 11.2.1.1, registry section 15.9). */
#define WK_MOQT_STATUS_NORMAL 0x0u
#define WK_MOQT_STATUS_END_OF_GROUP 0x3u
#define WK_MOQT_STATUS_END_OF_TRACK 0x4u

/* Object property types (section 1.4.3 and the IANA table). Even types carry one integer, odd
 * types a length (at most 65535) and that many bytes. */
#define WK_MOQT_PROP_OBJECT_DELIVERY_TIMEOUT 0x02u
#define WK_MOQT_PROP_SUBGROUP_DELIVERY_TIMEOUT 0x06u
#define WK_MOQT_PROP_IMMUTABLE_PROPERTIES 0x0Bu
#define WK_MOQT_PROP_PRIOR_GROUP_ID_GAP 0x3Cu
#define WK_MOQT_PROP_PRIOR_OBJECT_ID_GAP 0x3Eu
#define WK_MOQT_PROP_VALUE_MAX_LEN 65535u

/* ---------------------------------------------------------------------------------------------
 * Errors and Object Status
 * ------------------------------------------------------------------------------------------- */

/* The vectors' error category of a code: "incomplete" (WK_ERR_MOQT_TRUNCATED), "invalid_type"
 * (stream/datagram type and Type Flags errors), "payload_not_permitted", "invalid_value" (every
 * other MoQT code); "ok" for WK_OK and "error" for a code outside the moqt range. Static storage. */
const char *wk_moqt_error_category(wk_code code);

/* True for the statuses draft-20 assigns (Normal, End of Group, End of Track). */
bool wk_moqt_status_is_assigned(uint64_t status);
/* The registry's payload permission (section 15.9): true only for Normal. */
bool wk_moqt_status_permits_payload(uint64_t status);
/* "normal", "end_of_group", "end_of_track", or NULL for an unassigned status. */
const char *wk_moqt_status_name(uint64_t status);

/* ---------------------------------------------------------------------------------------------
 * Type Flags: validity computed from the bits
 * ------------------------------------------------------------------------------------------- */

/* Subgroup Type Flags from their parts (mode 0..3; bools set their bit). Never fails; the result
 * may be invalid (mode 3). */
uint64_t wk_moqt_subgroup_type_make(bool properties, wk_moqt_subgroup_id_mode mode,
                                    bool end_of_group, bool default_priority, bool first_object);
static inline wk_moqt_subgroup_id_mode wk_moqt_subgroup_type_id_mode(uint64_t type)
{
    return (wk_moqt_subgroup_id_mode)((type & WK_MOQT_SUBGROUP_ID_MODE_MASK) >>
                                      WK_MOQT_SUBGROUP_ID_MODE_SHIFT);
}
/* Checks the three conditions of section 11.4.2 in order: value >= 128
 * (MOQT_ERR_SUBGROUP_TYPE_TOO_LARGE), bit 4 clear (MOQT_ERR_SUBGROUP_BIT4_CLEAR), mode 0b11
 * (MOQT_ERR_SUBGROUP_ID_MODE_RESERVED). `offset` is put in the error. WK_OK when valid. */
wk_code wk_moqt_subgroup_type_check(uint64_t type, uint64_t offset, wk_error *err);
bool wk_moqt_subgroup_type_is_valid(uint64_t type);

/* Datagram Type Flags from their parts. Never fails; may be invalid (status + end_of_group). */
uint64_t wk_moqt_datagram_type_make(bool properties, bool end_of_group, bool zero_object_id,
                                    bool default_priority, bool status);
/* Checks section 11.3.1: a bit above 0x2F other than bit 4 (MOQT_ERR_DATAGRAM_UNSPECIFIED_BIT;
 * covers every value >= 64), bit 4 (MOQT_ERR_DATAGRAM_RESERVED_BIT), STATUS with END_OF_GROUP
 * (MOQT_ERR_DATAGRAM_STATUS_END_OF_GROUP). WK_OK when valid. */
wk_code wk_moqt_datagram_type_check(uint64_t type, uint64_t offset, wk_error *err);
bool wk_moqt_datagram_type_is_valid(uint64_t type);

/* ---------------------------------------------------------------------------------------------
 * Dispatch (spec 2)
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_moqt_stream_kind {
    WK_MOQT_KIND_NONE = 0,
    WK_MOQT_KIND_SUBGROUP,  /* SUBGROUP_HEADER: the type is its Type Flags */
    WK_MOQT_KIND_FETCH,     /* FETCH_HEADER (0x05) */
    WK_MOQT_KIND_PADDING,   /* padding stream (0x132B3E28) or padding datagram (0x132B3E29) */
    WK_MOQT_KIND_SETUP,     /* control stream (0x2F00): not data plane */
    WK_MOQT_KIND_DATAGRAM   /* OBJECT_DATAGRAM: the type is its Type Flags */
} wk_moqt_stream_kind;

/* Classifies a unidirectional stream type value: 0x05 fetch, 0x2F00 setup, 0x132B3E28 padding,
 * a value < 128 with bit 4 set subgroup (mode 0b11: MOQT_ERR_SUBGROUP_ID_MODE_RESERVED), anything
 * else MOQT_ERR_UNKNOWN_STREAM_TYPE. `offset` goes into the error. */
wk_code wk_moqt_stream_type_classify(uint64_t type, uint64_t offset, wk_moqt_stream_kind *kind,
                                     wk_error *err);
/* Classifies a datagram type value: 0x132B3E29 padding, else OBJECT_DATAGRAM Type Flags checked
 * by wk_moqt_datagram_type_check (its errors). */
wk_code wk_moqt_datagram_type_classify(uint64_t type, uint64_t offset, wk_moqt_stream_kind *kind,
                                       wk_error *err);
/* Reads the leading type of a stream (datagram = false) or datagram (true) at the unread bytes of
 * *in without consuming them, and classifies it: *kind, *type, *type_len (each may be NULL).
 * MOQT_ERR_TRUNCATED (offset = the bytes available) when they end inside the integer; offsets
 * count from in->src + in->pos. */
wk_code wk_moqt_type_peek(const wk_in *in, bool datagram, wk_moqt_stream_kind *kind,
                          uint64_t *type, size_t *type_len, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Properties block (spec 6). A block on the wire is Properties Length + pairs; the slices this
 * module hands out and takes are the pairs only.
 * ------------------------------------------------------------------------------------------- */

/* One Key-Value-Pair with its absolute type. Even type: `value`. Odd type: bytes[0..len). */
typedef struct wk_moqt_property {
    uint64_t type;
    uint64_t value;        /* even types */
    const uint8_t *bytes;  /* odd types: borrowed from the block (decode) or the caller (encode) */
    size_t len;
} wk_moqt_property;

/* Walks a block's pairs. Initialize with wk_moqt_properties_iter_init; plain struct. */
typedef struct wk_moqt_properties_iter {
    wk_cursor c;
    uint64_t type;        /* previous absolute type */
    uint64_t base_offset; /* offset of the pairs' first byte, for errors */
} wk_moqt_properties_iter;

/* Starts walking the unread bytes of *pairs (the view is copied; its bytes must outlive the
 * walk); base_offset is added to error offsets. */
void wk_moqt_properties_iter_init(wk_moqt_properties_iter *it, const wk_in *pairs,
                                  uint64_t base_offset);
/* Reads the next pair into *prop (bytes borrowed from the block) and sets *got = true; at the
 * block's end sets *got = false and returns WK_OK. Errors (offset = the pair's first byte):
 * MOQT_ERR_PROPERTY_OVERRUN (a pair crosses the end), MOQT_ERR_PROPERTY_LENGTH (odd length
 * above 65535), MOQT_ERR_PROPERTY_TYPE_OVERFLOW. */
wk_code wk_moqt_properties_iter_next(wk_moqt_properties_iter *it, wk_moqt_property *prop,
                                     bool *got, wk_error *err);
/* Strict check of a whole block: the unread bytes of *pairs (not consumed) with the errors above.
 * *count (may be NULL) = pairs. */
wk_code wk_moqt_properties_validate(const wk_in *pairs, uint64_t base_offset, size_t *count,
                                    wk_error *err);
/* *size = the encoded size of the pairs of props[0..n) (0 for none); WK_ERR_ARG (and *size
 * untouched) when they are not encodable: types decreasing, an odd length above 65535. */
wk_code wk_moqt_properties_size(const wk_moqt_property *props, size_t n, size_t *size,
                                wk_error *err);
/* Writes the pairs of props[0..n) with delta-coded types (minimal integers) to out. WK_DONE,
 * WK_NEED_OUTPUT (out untouched) or WK_ERROR (WK_ERR_ARG: decreasing types, odd length above
 * 65535). The caller passes the written bytes as an object's properties slice. */
wk_result wk_moqt_properties_encode(const wk_moqt_property *props, size_t n, wk_out *out,
                                    wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Read options (stream reader and datagram decoder). All-zero = the defaults.
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_moqt_group_order {
    WK_MOQT_GROUP_ORDER_DEFAULT = 0,    /* = Ascending */
    WK_MOQT_GROUP_ORDER_ASCENDING = 1,  /* GROUP_ORDER parameter values */
    WK_MOQT_GROUP_ORDER_DESCENDING = 2
} wk_moqt_group_order;

typedef enum wk_moqt_end_of_range {
    WK_MOQT_END_OF_RANGE_DELTA = 0,     /* reading A (default): delta slots, then length 0 */
    WK_MOQT_END_OF_RANGE_ABSOLUTE = 1   /* reading B: two absolute IDs, no length */
} wk_moqt_end_of_range;

#define WK_MOQT_PROPERTIES_INLINE 1024  /* reader's built-in properties scratch */

typedef struct wk_moqt_read_options {
    /* The allocator of the params struct (docs/architecture.md). The moqt module never allocates
     * (the reader is the caller's struct and so is any properties scratch), so nothing is drawn
     * from it; it is here so every params struct has one. NULL = malloc/free. */
    const wk_allocator *allocator;
    wk_moqt_group_order group_order;   /* fetch: how a Group ID Delta applies */
    wk_moqt_end_of_range end_of_range; /* fetch: End of Range record reading */
    bool strict_padding;               /* refuse non-zero padding bytes */
    bool properties_length_only;       /* skip the pair validation (forwarder view) */
    bool allow_unknown_status;         /* accept unassigned Object Status values */
    bool allow_objects_after_end;      /* subgroup: objects after End of Group / End of Track */
    /* Scratch for a Properties block that arrives split across pushes. Blocks longer than the
     * scratch's capacity are refused (MOQT_ERR_PROPERTIES_TOO_LARGE) whether split or not, so the
     * outcome never depends on how the input was cut. NULL, or properties_cap 0 (even with a
     * buffer), = the reader's built-in WK_MOQT_PROPERTIES_INLINE bytes. Owned by the caller; must
     * outlive the reader's use. */
    uint8_t *properties_buf;
    size_t properties_cap;
} wk_moqt_read_options;

/* ---------------------------------------------------------------------------------------------
 * SUBGROUP_HEADER and subgroup objects (spec 3)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_moqt_subgroup_header {
    uint64_t type;               /* Type Flags (see WK_MOQT_SUBGROUP_*) */
    uint64_t track_alias;
    uint64_t group_id;
    uint64_t subgroup_id;        /* resolved: 0 (mode 0), the field (mode 2), first Object ID
                                    (mode 1, once subgroup_id_known) */
    bool subgroup_id_known;      /* false only in mode 1 before the first object */
    bool has_priority;           /* DEFAULT_PRIORITY clear: the byte is on the wire */
    uint8_t publisher_priority;  /* valid when has_priority */
} wk_moqt_subgroup_header;

/* Decodes a whole SUBGROUP_HEADER from the unread bytes of *in (Type Flags checked, any integer
 * width) into *h. WK_DONE: in->pos moved past the header. WK_ERROR (in untouched; offsets count
 * from the header's first byte): MOQT_ERR_TRUNCATED (offset = the bytes available), the Type
 * Flags errors (offset 0), or MOQT_ERR_WRONG_STREAM_TYPE for 0x05 / 0x2F00 / padding. In mode 1
 * subgroup_id_known is false. */
wk_result wk_moqt_subgroup_header_decode(wk_moqt_subgroup_header *h, wk_in *in, wk_error *err);
/* Encoded size of *h (minimal integers; fields as h->type says). */
size_t wk_moqt_subgroup_header_size(const wk_moqt_subgroup_header *h);
/* Writes *h as h->type says, without judging the type (for producing test input). WK_DONE or
 * WK_NEED_OUTPUT (out untouched). has_priority is ignored: the type decides. */
wk_result wk_moqt_subgroup_header_encode(const wk_moqt_subgroup_header *h, wk_out *out,
                                         wk_error *err);
/* As _encode, but refuses an invalid Type Flags value (the three errors of
 * wk_moqt_subgroup_type_check, offset 0) and writes nothing then. */
wk_result wk_moqt_subgroup_header_encode_checked(const wk_moqt_subgroup_header *h, wk_out *out,
                                                 wk_error *err);

/* One subgroup object's framing, as the reader resolves it. */
typedef struct wk_moqt_subgroup_object {
    uint64_t object_id_delta;    /* wire value */
    uint64_t object_id;          /* resolved: first = delta, then prior + delta + 1 */
    bool has_properties;         /* the header's PROPERTIES bit: a block is on the wire */
    const uint8_t *properties;   /* the pairs (may be empty); see the event for its lifetime */
    size_t properties_len;
    uint64_t payload_length;
    bool has_status;             /* payload_length == 0: Object Status on the wire */
    uint64_t status;             /* the status on the wire, else WK_MOQT_STATUS_NORMAL */
    uint64_t offset;             /* stream offset of the object's first byte */
} wk_moqt_subgroup_object;

/* ---------------------------------------------------------------------------------------------
 * FETCH_HEADER and fetch object records (spec 5)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_moqt_fetch_header {
    uint64_t request_id;
} wk_moqt_fetch_header;

/* Decodes a whole FETCH_HEADER from the unread bytes of *in into *h. WK_DONE: in->pos moved past
 * it. WK_ERROR (in untouched): MOQT_ERR_TRUNCATED (offset = the bytes available),
 * MOQT_ERR_WRONG_STREAM_TYPE (offset 0) when the type is not 0x05. */
wk_result wk_moqt_fetch_header_decode(wk_moqt_fetch_header *h, wk_in *in, wk_error *err);
/* Encoded size of *h (minimal integers). */
size_t wk_moqt_fetch_header_size(const wk_moqt_fetch_header *h);
/* Writes *h. WK_DONE or WK_NEED_OUTPUT (out untouched). */
wk_result wk_moqt_fetch_header_encode(const wk_moqt_fetch_header *h, wk_out *out, wk_error *err);

/* True for 0x8C, 0x10C, 0x20C. */
bool wk_moqt_fetch_flags_is_end_of_range(uint64_t flags);

/* One fetch record with its delta-coded fields resolved. */
typedef struct wk_moqt_fetch_object {
    uint64_t flags;              /* Serialization Flags (an End of Range marker value too) */
    bool end_of_range;           /* flags is 0x8C / 0x10C / 0x20C */
    bool first_record;           /* the stream's first record */
    bool has_group_id_delta;     /* on the wire (reading A markers: true; reading B: false) */
    uint64_t group_id_delta;
    bool has_object_id_delta;
    uint64_t object_id_delta;
    uint64_t group_id;           /* resolved (markers: the Location they carry) */
    uint64_t object_id;
    bool has_subgroup_id;        /* false for DATAGRAM-flag objects and markers */
    uint64_t subgroup_id;        /* resolved (mode 0/1/2/3) */
    bool has_priority;           /* false only for markers */
    uint8_t publisher_priority;  /* resolved: the byte, or the prior object's */
    bool has_properties;         /* flag 0x20: a block is on the wire */
    const uint8_t *properties;   /* the pairs; lifetime as for subgroup objects */
    size_t properties_len;
    bool has_payload_length;     /* false only for reading-B markers */
    uint64_t payload_length;     /* 0 for markers */
    uint64_t offset;             /* stream offset of the record's first byte */
} wk_moqt_fetch_object;

/* ---------------------------------------------------------------------------------------------
 * The stream reader (subgroup, fetch and padding streams)
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_moqt_carrier {
    WK_MOQT_CARRIER_ANY = 0,     /* dispatch on the stream type (subgroup, fetch or padding) */
    WK_MOQT_CARRIER_SUBGROUP,    /* a subgroup stream (or padding) is expected */
    WK_MOQT_CARRIER_FETCH        /* a fetch stream (or padding) is expected */
} wk_moqt_carrier;

/* Which event the reader reported: r->event after wk_moqt_stream_reader_read returned WK_EVENT
 * (WK_MOQT_EVENT_NONE after any other result). The details are in the reader's fields named. */
typedef enum wk_moqt_stream_event {
    WK_MOQT_EVENT_NONE = 0,
    WK_MOQT_EVENT_SUBGROUP_HEADER, /* r->subgroup is complete (subgroup_id may be unknown, mode 1) */
    WK_MOQT_EVENT_FETCH_HEADER,    /* r->fetch is complete */
    WK_MOQT_EVENT_PADDING,         /* the padding stream type was read; the rest is discarded */
    WK_MOQT_EVENT_OBJECT,          /* r->object (subgroup) complete; r->piece = its first payload
                                      bytes from this push (maybe all, maybe none) */
    WK_MOQT_EVENT_FETCH_OBJECT,    /* r->fetch_object complete (also End of Range markers);
                                      r->piece as for WK_MOQT_EVENT_OBJECT */
    WK_MOQT_EVENT_PAYLOAD          /* r->piece = further payload bytes of the current object */
} wk_moqt_stream_event;

/* A piece of the current object's payload: data[0..len) are bytes offset..offset+len of it,
 * borrowed from the caller's input (valid while that buffer is). `last` = this piece ends the
 * payload (true with len 0 for an empty payload). */
typedef struct wk_moqt_payload_piece {
    const uint8_t *data;
    size_t len;
    uint64_t offset;
    bool last;
} wk_moqt_payload_piece;

/* Internal state, in the struct so the caller owns all of it. Do not touch. */
typedef struct wk_moqt_reader_state_ {
    wk_moqt_carrier expect;
    wk_moqt_read_options opt;
    int state;
    int record_state;             /* the state that starts the next object / record */
    bool failed;
    wk_error error;               /* the sticky error */
    uint64_t consumed;            /* bytes consumed from all pushes */
    uint64_t field_offset;        /* stream offset of the field being collected */
    uint64_t record_offset;       /* stream offset of the current object / record */
    uint8_t ibuf[WK_MOQT_INT_MAX_LEN]; /* an integer split across pushes */
    uint8_t ilen, ineed;
    uint64_t payload_left;
    uint64_t payload_done;
    uint64_t props_len;
    size_t props_have;
    uint64_t props_offset;        /* stream offset of the pairs' first byte */
    uint64_t gdelta_offset, odelta_offset; /* fetch: where the two deltas were */
    uint8_t *props_buf;
    size_t props_cap;
    /* subgroup */
    bool have_prev;
    uint64_t prev_object_id;
    bool ended;                   /* an End of Group / End of Track status object was read */
    /* fetch */
    bool fetch_any_record;        /* a record (object or marker) was read */
    bool fetch_any_object;        /* a real object was read */
    bool prior_has_subgroup;
    uint64_t prior_group, prior_object, prior_subgroup;
    uint8_t prior_priority;
    uint8_t inline_props[WK_MOQT_PROPERTIES_INLINE];
} wk_moqt_reader_state_;

typedef struct wk_moqt_stream_reader {
    /* Read-only results, valid after the event that names them. */
    wk_moqt_stream_event event;          /* the event of the last WK_EVENT */
    wk_moqt_stream_kind kind;            /* NONE until the stream type is read */
    uint64_t stream_type;                /* the leading type value */
    wk_moqt_subgroup_header subgroup;    /* after WK_MOQT_EVENT_SUBGROUP_HEADER */
    wk_moqt_fetch_header fetch;          /* after WK_MOQT_EVENT_FETCH_HEADER */
    wk_moqt_subgroup_object object;      /* the current subgroup object */
    wk_moqt_fetch_object fetch_object;   /* the current fetch record */
    wk_moqt_payload_piece piece;         /* the payload piece of the last OBJECT/PAYLOAD event */
    uint64_t objects;                    /* objects (and markers) reported so far */
    uint64_t padding_bytes;              /* padding bytes discarded so far */
    wk_moqt_reader_state_ s;
} wk_moqt_stream_reader;

/* Initializes (or resets) the caller-owned *r for one stream. `options` (NULL = defaults) is
 * copied; a properties_buf it names stays the caller's. Never allocates. */
void wk_moqt_stream_reader_init(wk_moqt_stream_reader *r, wk_moqt_carrier expect,
                                const wk_moqt_read_options *options);
/* The step. Consumes in->src[in->pos..in->size) up to the next event. `out` must be NULL: the
 * reader produces no bytes (payloads are borrowed slices); a non-NULL out is WK_ERR_ARG and
 * changes nothing. Returns:
 *   WK_EVENT       an event is ready: r->event says which, its details are in the reader until
 *                  the next call; in->pos stops right after the bytes it covers (every event
 *                  covers at least one byte of this push). The properties slice of an OBJECT /
 *                  FETCH_OBJECT event points into the caller's input when the block arrived in one
 *                  push, else into the scratch; payload pieces always point into the caller's
 *                  input. Each event is reported once.
 *   WK_NEED_INPUT  the push is consumed: push more, or call _finish at FIN.
 *   WK_ERROR       *err: a WK_ERR_MOQT_* of spec 9 with the offset of the field at fault, counted
 *                  from the stream's first byte. Sticky: every later call (and _finish) reports it
 *                  again unchanged, until _init. Truncation is not an error here: _finish reports
 *                  it.
 * Zero allocations. */
wk_result wk_moqt_stream_reader_read(wk_moqt_stream_reader *r, wk_in *in, wk_out *out,
                                     wk_error *err);
/* Declares FIN, with the bytes the caller holds unread (`rest`, NULL or empty for none; not
 * consumed). WK_DONE when the stream may end here: between objects after a complete header (also
 * with no objects, decision 8), after a fetch header, anywhere in a padding stream; repeatable.
 * Otherwise WK_ERROR, sticky: MOQT_ERR_TRUNCATED with offset = bytes consumed, WK_ERR_STATE when
 * rest holds bytes (read until WK_NEED_INPUT first: they belong to the stream), or the sticky
 * error of an earlier call. */
wk_result wk_moqt_stream_reader_finish(wk_moqt_stream_reader *r, const wk_in *rest,
                                       wk_error *err);
/* True when the stream is at a point where FIN is clean (what finish would accept). */
bool wk_moqt_stream_reader_at_boundary(const wk_moqt_stream_reader *r);
/* Bytes consumed so far. */
static inline uint64_t wk_moqt_stream_reader_consumed(const wk_moqt_stream_reader *r)
{
    return r->s.consumed;
}

/* ---------------------------------------------------------------------------------------------
 * Subgroup writer
 * ------------------------------------------------------------------------------------------- */

/* An object to write. `properties` are the pairs (the writer adds the Properties Length); they
 * are allowed only when the header sets PROPERTIES (else WK_ERR_ARG), and are not re-validated.
 * `payload_len`: with _write_framing, the payload the caller sends itself. */
typedef struct wk_moqt_object_out {
    uint64_t object_id;
    const uint8_t *properties;
    size_t properties_len;
    uint64_t status;             /* Object Status; written only when payload_len == 0 */
    const uint8_t *payload;
    uint64_t payload_len;
} wk_moqt_object_out;

typedef struct wk_moqt_subgroup_writer {
    wk_moqt_subgroup_header header;
    bool began;
    bool have_prev;
    uint64_t prev_object_id;
    bool ended;
} wk_moqt_subgroup_writer;

/* Initializes the caller-owned *w for a subgroup stream and writes its header
 * (wk_moqt_subgroup_header_size(h) bytes): checks h->type (as _encode_checked). In mode 1 with
 * h->subgroup_id_known the first object's ID must equal h->subgroup_id. WK_DONE, WK_NEED_OUTPUT
 * (out and *w untouched, call again) or WK_ERROR (an invalid type, whatever the room). Writers
 * have no _finish: nothing is buffered, and the stream ends with the carrier's FIN. */
wk_result wk_moqt_subgroup_writer_begin(wk_moqt_subgroup_writer *w,
                                        const wk_moqt_subgroup_header *h, wk_out *out,
                                        wk_error *err);
/* *size = the bytes wk_moqt_subgroup_writer_write writes for o: its framing (delta, properties,
 * length, status) plus o->payload_len (_write_framing writes *size - o->payload_len). Or the code
 * _write refuses o with (*size untouched). */
wk_code wk_moqt_subgroup_writer_size(const wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o,
                                     uint64_t *size, wk_error *err);
/* Writes one whole object (framing and payload copied in). Refuses, writing nothing and whatever
 * the room: a status whose registry entry forbids the payload given
 * (MOQT_ERR_PAYLOAD_NOT_PERMITTED), an unassigned status (MOQT_ERR_UNKNOWN_STATUS), an Object ID
 * not above the previous one, a mode-1 first ID different from the Subgroup ID, properties without
 * the PROPERTIES bit, an object after End of Group / End of Track (WK_ERR_ARG), a writer not begun
 * (WK_ERR_STATE). WK_DONE, WK_NEED_OUTPUT (out and the writer untouched) or WK_ERROR. */
wk_result wk_moqt_subgroup_writer_write(wk_moqt_subgroup_writer *w, const wk_moqt_object_out *o,
                                        wk_out *out, wk_error *err);
/* As _write, but writes only the framing; the caller then sends o->payload_len payload bytes
 * itself (o->payload is ignored). For zero-copy sending of large payloads. */
wk_result wk_moqt_subgroup_writer_write_framing(wk_moqt_subgroup_writer *w,
                                                const wk_moqt_object_out *o, wk_out *out,
                                                wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * OBJECT_DATAGRAM (spec 4)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_moqt_datagram {
    bool padding;                /* a padding datagram: only `type` and payload (the padding) */
    uint64_t type;               /* Type Flags (or WK_MOQT_DATAGRAM_TYPE_PADDING) */
    uint64_t track_alias;
    uint64_t group_id;
    uint64_t object_id;          /* 0 when ZERO_OBJECT_ID */
    bool has_priority;           /* DEFAULT_PRIORITY clear */
    uint8_t publisher_priority;
    bool has_properties;         /* PROPERTIES set */
    const uint8_t *properties;   /* the pairs, borrowed */
    size_t properties_len;
    bool has_status;             /* STATUS set */
    uint64_t status;             /* the wire status, else WK_MOQT_STATUS_NORMAL */
    const uint8_t *payload;      /* borrowed; empty when has_status */
    size_t payload_len;
} wk_moqt_datagram;

/* Decodes the unread bytes of *in as one whole datagram into *d (options may be NULL;
 * group_order / end_of_range unused). Everything in *d is borrowed from in's bytes. WK_DONE:
 * in->pos = in->size. WK_ERROR (in untouched; offsets count from the datagram's first byte,
 * in->src + in->pos): MOQT_ERR_TRUNCATED (offset = its length), the Type Flags errors (offset 0),
 * MOQT_ERR_EMPTY_PROPERTIES (at the Properties Length), MOQT_ERR_STATUS_PROPERTIES and
 * MOQT_ERR_UNKNOWN_STATUS (at the status), MOQT_ERR_PAYLOAD_NOT_PERMITTED (at the first byte
 * after the status), the property errors (strict mode), MOQT_ERR_PADDING_NONZERO (strict). */
wk_result wk_moqt_datagram_decode(wk_moqt_datagram *d, wk_in *in,
                                  const wk_moqt_read_options *options, wk_error *err);
/* Encoded size of *d as d->type says. */
size_t wk_moqt_datagram_size(const wk_moqt_datagram *d);
/* Writes *d as d->type says without judging it (has_* fields are ignored: the type decides;
 * `padding` or the padding type writes the type and the payload bytes as they are).
 * WK_DONE or WK_NEED_OUTPUT (untouched). */
wk_result wk_moqt_datagram_encode(const wk_moqt_datagram *d, wk_out *out, wk_error *err);
/* As _encode, refusing (nothing written) every combination a decoder refuses: invalid Type
 * Flags, PROPERTIES with no pairs (MOQT_ERR_EMPTY_PROPERTIES), pairs without PROPERTIES
 * (WK_ERR_ARG), properties on a non-Normal status (MOQT_ERR_STATUS_PROPERTIES), an unassigned
 * status (MOQT_ERR_UNKNOWN_STATUS), a payload with STATUS set (MOQT_ERR_PAYLOAD_NOT_PERMITTED),
 * a non-zero object_id with ZERO_OBJECT_ID (WK_ERR_ARG), non-zero padding bytes (WK_ERR_ARG).
 * With STATUS clear, has_status with a status other than Normal is refused too (the object would
 * go out as Normal): MOQT_ERR_PAYLOAD_NOT_PERMITTED when a payload is given, else WK_ERR_ARG. */
wk_result wk_moqt_datagram_encode_checked(const wk_moqt_datagram *d, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Padding (spec 7)
 * ------------------------------------------------------------------------------------------- */
/* Encoded size of a padding stream or datagram of `len` bytes after the type (UINT64_MAX when
 * that does not fit 64 bits). */
uint64_t wk_moqt_padding_size(bool datagram, uint64_t len);
/* Writes a padding stream (datagram = false: type 0x132B3E28) or datagram (0x132B3E29) of `len`
 * zero bytes after the type. WK_DONE or WK_NEED_OUTPUT (untouched). */
wk_result wk_moqt_padding_encode(bool datagram, uint64_t len, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Fetch writer
 * ------------------------------------------------------------------------------------------- */

/* A fetch object to write, by its resolved values and the Serialization Flags to use (< 128).
 * The writer derives the deltas and refuses flags that cannot express the object (WK_ERR_ARG). */
typedef struct wk_moqt_fetch_object_out {
    uint64_t flags;
    uint64_t group_id;
    uint64_t object_id;
    uint64_t subgroup_id;        /* ignored with WK_MOQT_FETCH_DATAGRAM */
    uint8_t publisher_priority;
    const uint8_t *properties;   /* pairs; with flag 0x20 (may be empty), else must be empty */
    size_t properties_len;
    const uint8_t *payload;
    uint64_t payload_len;
} wk_moqt_fetch_object_out;

typedef struct wk_moqt_fetch_writer {
    wk_moqt_group_order group_order;
    wk_moqt_end_of_range end_of_range;
    bool began;
    bool any_record;
    bool any_object;
    bool prior_has_subgroup;
    uint64_t prior_group, prior_object, prior_subgroup;
    uint8_t prior_priority;
} wk_moqt_fetch_writer;

/* Initializes the caller-owned *w for a fetch stream and writes FETCH_HEADER with request_id
 * (wk_moqt_fetch_header_size bytes). group_order and end_of_range as the reader's options.
 * WK_DONE, WK_NEED_OUTPUT (out and *w untouched). */
wk_result wk_moqt_fetch_writer_begin(wk_moqt_fetch_writer *w, uint64_t request_id,
                                     wk_moqt_group_order group_order,
                                     wk_moqt_end_of_range end_of_range, wk_out *out,
                                     wk_error *err);
/* The smallest Serialization Flags that express o after the records written so far (deltas only
 * where needed, priority only when it changed, subgroup mode 0/1/2 where it fits, else 3;
 * `datagram` selects the DATAGRAM flag, properties_len > 0 the PROPERTIES flag). */
uint64_t wk_moqt_fetch_writer_pick_flags(const wk_moqt_fetch_writer *w,
                                         const wk_moqt_fetch_object_out *o, bool datagram);
/* *size = the bytes wk_moqt_fetch_writer_write writes for o with o->flags: the record's fields
 * plus o->payload_len (_write_framing writes *size - o->payload_len). Or the code _write refuses
 * o with (*size untouched). */
wk_code wk_moqt_fetch_writer_size(const wk_moqt_fetch_writer *w, const wk_moqt_fetch_object_out *o,
                                  uint64_t *size, wk_error *err);
/* Writes one record with o->flags and its payload. Refuses (WK_ERR_ARG, nothing written, whatever
 * the room): flags >= 128 (use _write_end_of_range), the first-record rules, a prior reference
 * before any real object, a Group ID the flags and group order cannot reach (descending below 0 /
 * same group with 0x08), an Object ID the flags cannot express, a subgroup mode that does not give
 * o->subgroup_id, properties without 0x20; a writer not begun (WK_ERR_STATE). WK_DONE,
 * WK_NEED_OUTPUT (out and the writer untouched), WK_ERROR. */
wk_result wk_moqt_fetch_writer_write(wk_moqt_fetch_writer *w, const wk_moqt_fetch_object_out *o,
                                     wk_out *out, wk_error *err);
/* As _write without the payload bytes (the caller sends o->payload_len bytes next). */
wk_result wk_moqt_fetch_writer_write_framing(wk_moqt_fetch_writer *w,
                                             const wk_moqt_fetch_object_out *o, wk_out *out,
                                             wk_error *err);
/* *size = the bytes wk_moqt_fetch_writer_write_end_of_range writes for the marker, or the code it
 * refuses it with (*size untouched). */
wk_code wk_moqt_fetch_writer_end_of_range_size(const wk_moqt_fetch_writer *w, uint64_t marker,
                                               uint64_t group_id, uint64_t object_id,
                                               size_t *size, wk_error *err);
/* Writes an End of Range marker (0x8C / 0x10C / 0x20C) covering up to {group_id, object_id}, in
 * the writer's reading: A = delta slots by the ordinary rules (as a non-first record the group
 * must be reachable with a Group ID Delta: ascending > prior, descending < prior) then length 0;
 * B = two absolute IDs. WK_ERR_ARG when not a marker value or not reachable, WK_ERR_STATE before
 * _begin (nothing written, whatever the room). WK_DONE, WK_NEED_OUTPUT (untouched), WK_ERROR. */
wk_result wk_moqt_fetch_writer_write_end_of_range(wk_moqt_fetch_writer *w, uint64_t marker,
                                                  uint64_t group_id, uint64_t object_id,
                                                  wk_out *out, wk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* WIREKIT_MOQT_H */
