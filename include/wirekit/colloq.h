/* wirekit colloq: the Colloq plan codec (RFC-0005, shared/seeds/004_*.txt; model and wire details:
 * shared/specs/colloq.md, cited as "spec").
 *
 * Parts:
 *   - conversation loader + compiler (json-c): conversation JSON -> wk_colloq_plan (dense
 *     transition table, per-message payload schedules with ceilings, canonical plan JSON, identity)
 *   - session preface (frame zero, one JSON line): written, parsed, checked against our plan/wire
 *   - frames: reference and compact JSON lines (json-c, document-based: they allocate) and the
 *     plan-derived binary frame (borrowed decode, no allocation per frame)
 *   - the checker (one code path for all three encodings) and its typed failures
 *   - traces: JSON lines written, parsed back, verified against a plan
 *   - a generator of per-plan binary codecs as C (decision 16)
 *
 * Decisions (where the spec leaves room):
 *   1. Failure kinds are error codes: WK_ERR_COLLOQ_UNKNOWN_TRANSITION .. WK_ERR_COLLOQ_AFTER_FINAL
 *      (740-747); wk_colloq_failure_name gives the spec's name ("bad-sequence", ...).
 *   2. Check order for a frame: after-final, unknown-transition, wrong-state, wrong-sender,
 *      bad-sequence, then the payload (payload-too-large / malformed-payload as found while
 *      decoding). Decoders do not fail on payload content: they record it in the frame
 *      (payload_error) and wk_colloq_session_check reports it after the header checks, so the failure kind
 *      is the same whichever encoding carried the frame. A frame whose envelope cannot be read at
 *      all (not JSON, no/invalid "seq"/"t"/"state"/"message"/"sender"/"payload" key, unknown or
 *      duplicate envelope key, non-minimal or over-long header varint) is malformed-payload,
 *      reported by the decoder; a duplicate key inside the payload is a payload problem
 *      (malformed-payload after the header checks, like any other payload error).
 *   3. Reaching a final state finishes the session: any further frame (or partial frame, or
 *      undecodable line) is after-final. A transition leaving a final state is a compile error.
 *   4. The failure's seq is the session's next expected sequence number (= accepted frames), the
 *      same in every encoding even when the frame's own seq cannot be read.
 *   5. payload-too-large compares the schedule's binary payload size against max_payload in all
 *      three encodings (JSON envelopes compute the size their values would take in binary), so the
 *      same logical frame fails the same way everywhere. Binary checks payload_len against the
 *      ceiling before taking any slice; a JSON line longer than WK_COLLOQ_JSON_LINE_MAX(plan) with
 *      no newline is payload-too-large without waiting for more input.
 *   6. NaN and infinities are malformed-payload in binary too (JSON cannot carry them, and a trace
 *      is JSON), so all encodings accept the same values. -0.0 is allowed. f32 values are stored
 *      as double (exactly); a JSON number that rounds to an f32/f64 infinity is malformed. Floats
 *      are written as the shortest decimal that reads back to the same value ("%.*g").
 *   7. Integers in JSON must be JSON integers (no fraction/exponent) within the type's range,
 *      exact over the whole u64/i64 range. Bytes are lowercase hex in what we write; hex in either
 *      case is accepted on read. Presence bitmap bits beyond the optional count must be 0.
 *   8. A reference frame names its transition by (state, message, sender) (spec, revised: the
 *      envelope carries "sender", always written, always required). A state or message the plan
 *      does not have, or a (state, message) no transition leaves on, is unknown-transition. When
 *      transitions leave that state on that message but none from that sender (a role the plan
 *      does not have included), the frame is wrong-sender: the decoder names the lowest of those
 *      transitions and sets sender_mismatch, and wk_colloq_session_check reports wrong-sender in its
 *      usual place (after after-final, unknown-transition and wrong-state). In a live session the
 *      frame's transition must also be the live sender's, in every encoding.
 *   9. Names of roles, states, messages and fields are [A-Za-z_][A-Za-z0-9_]*; the conversation's
 *      name is any non-empty string. At most WK_COLLOQ_MAX_FIELDS fields per message;
 *      max_payload in 1..WK_COLLOQ_MAX_PAYLOAD_LIMIT. Unknown keys are compile errors.
 *  10. Compile errors: wk_error.msg starts with the JSON path ("$.transitions[2].to: ...");
 *      offset is a byte offset only for JSON syntax errors and duplicate keys (the repeated key;
 *      WK_ERR_COLLOQ_DUPLICATE "$.messages.Token: duplicate key"). Category Usage.
 *  11. The canonical plan (spec "Plan"): sorted keys, no insignificant whitespace, strings with
 *      only '"', '\\' and control characters escaped (\b \f \n \r \t, else \u00xx), UTF-8 as is:
 *        {"colloq":"plan/v0","final":[..],"initial":"..","messages":{"M":{"fields":[{"name":..,
 *         "optional":bool,"type":..}],"max_payload":N}},"name":..,"roles":[..],"states":[..],
 *         "transitions":[{"from":..,"id":N,"message":..,"sender":..,"to":..}],
 *         "wire":{"encodings":["reference","compact","binary"],"payload_schedules":{"M":{
 *         "bitmap_bytes":N,"fields":[{"name":..,"presence_bit":N|null,"type":..,"width":N|null}],
 *         "max_payload":N,"optional_count":N}}}}
 *      Roles, states and final keep the conversation's order; transitions are in id order.
 *      width null = variable (string, bytes). The identity is lowercase hex BLAKE3 of that text.
 *      Loading a plan file re-compiles its content and requires its canonical form to be exactly
 *      what the content compiles to (WK_ERR_COLLOQ_PLAN otherwise). A plan without
 *      wire.payload_schedules is a v0 plan (RFC-0005): reference and compact only.
 *  12. Preface: role must be one of the plan's roles; in a live session it must differ from
 *      ours. Keys exactly colloq/plan/wire/role; colloq must be "wire/v0".
 *  13. Trace lines: payload keys in schedule order; failure line {"failure":"<kind>","seq":N}.
 *      wk_colloq_trace_verify replays the accepted entries through the checker (seq from 0, transition from
 *      the current state, payload against the schedule, from/to/message naming the transition)
 *      and checks a failure entry is last, has seq = next expected, and is after-final exactly
 *      when the session had finished.
 *  14. The checker is a plain struct; decoders for JSON keep one json-c document and a scratch
 *      buffer in a wk_colloq_decoder (created once); the binary path allocates nothing.
 *  15. JSON input goes through json-c (strict mode, UTF-8 validated) after a lexical pre-check
 *      for what json-c lets through: numbers with leading zeros, integers beyond 64 bits (json-c
 *      saturates them), NaN/Infinity, raw control characters in strings. Duplicate keys: json-c
 *      keeps the last of two equal keys silently, so the pre-check counts the members of every
 *      object in the text and the document must hold as many (two keys are equal when json-c
 *      decodes them to the same string). A duplicate is refused everywhere JSON is read: frame
 *      envelopes and payloads (malformed-payload, decision 2), prefaces (WK_ERR_COLLOQ_PREFACE),
 *      trace lines (WK_ERR_COLLOQ_TRACE), conversations and plans (WK_ERR_COLLOQ_DUPLICATE with
 *      the JSON path). A known json-c limit we keep: a lone \uD800 escape becomes U+FFFD.
 *      Trailing whitespace (a CR before the LF) is allowed on a line.
 *
 *  16. Generated codecs (`wirekit colloq gen`, wk_colloq_codegen_*): one header and one source per
 *      plan, binary wire only, needing nothing but this header. Names: the prefix (default: the
 *      plan's name made an identifier) then the plan's own names: types and functions
 *      <p>_<Message>, <p>_<Message>_size/_encode/_decode, <p>_receive, <p>_send, ...; macros and
 *      enum constants in the upper-case prefix: <P>_ROLE_<r>, <P>_STATE_<s>, <P>_MSG_<m>,
 *      <P>_T_<from>_<message>_<sender>, <P>_<Message>_HAS_<field>. A struct member that is a C
 *      keyword, a macro of the included headers or another generated name gets '_' appended
 *      (int -> int_, NULL -> NULL_, present -> present_); one C or we reserve (_Bool, __x, WK_x)
 *      gets an 'x' in front; when two generated file-scope names would be equal, the later one
 *      gets _2, _3, ... (a message A_size beside A: <p>_A_size_2). Presence bits: one per optional
 *      field in the smallest unsigned type that holds them, bit i = the wire bitmap's bit i.
 *      Checks, failure kinds and offsets are the generic decoder's and checker's, step for step
 *      (tested against them on every fixture, 100,000 random frames per plan and their
 *      mutations). Encoders differ in one way: a generated encoder (and frame_from_colloq)
 *      refuses, as WK_ERR_ARG, a field or payload above the message's ceiling, which the
 *      generic encoder writes and every receiver refuses (payload-too-large). _send also checks
 *      the transition against the sender's session (WK_ERR_STATE, WK_ERR_ARG) and writes the
 *      session's next sequence number. The code embeds the canonical plan (<p>_plan_canonical).
 *
 * Lifetimes: a plan owns all its memory (wk_colloq_plan_destroy); frames borrow: binary
 * string/bytes values point into the caller's input buffer, JSON ones into the decoder (valid
 * until its next decode or destroy).
 *
 * Memory: objects are made by wk_colloq_plan_compile / _load, wk_colloq_decoder_create and
 * wk_colloq_trace_init, each from a params struct whose `allocator` (NULL: malloc/free) every
 * allocation of the object, and of the call that makes it, goes through. The one exception is
 * json-c: the documents and tokeners it builds while reading JSON (conversations, plans, JSON
 * frames, prefaces, trace lines) come from json-c's own malloc, which has no per-object hook.
 * The binary path, the checker and the encoders allocate nothing.
 */
#ifndef WIREKIT_COLLOQ_H
#define WIREKIT_COLLOQ_H

#include <wirekit/common.h>
#include <string.h> /* memcpy in the inline helpers */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Constants and small enums
 * ------------------------------------------------------------------------------------------- */
#define WK_COLLOQ_MAX_FIELDS 64                 /* fields per message (bounds a frame's array) */
#define WK_COLLOQ_DEFAULT_MAX_PAYLOAD 65536u    /* payload ceiling when a message sets none */
#define WK_COLLOQ_MAX_PAYLOAD_LIMIT (1u << 24)  /* largest max_payload a conversation may set */
#define WK_COLLOQ_IDENTITY_LEN 64               /* hex characters of a plan identity */
#define WK_COLLOQ_NO_TRANSITION UINT32_MAX      /* frame.transition when none matches */
#define WK_COLLOQ_SENDER_TRANSCRIPT UINT32_MAX  /* check() sender: "the transition's own role" */
#define WK_COLLOQ_ROLE_ANY UINT32_MAX           /* preface check: no local role (transcripts) */
#define WK_COLLOQ_VARINT_MAX_LEN 10
/* Longest JSON frame line (without '\n') a decoder waits for before payload-too-large. */
#define WK_COLLOQ_JSON_LINE_MAX(plan) ((size_t)(plan)->max_payload_max * 6u + 4096u)

typedef enum wk_colloq_type {
    WK_COLLOQ_BOOL = 0, WK_COLLOQ_U8, WK_COLLOQ_U16, WK_COLLOQ_U32, WK_COLLOQ_U64,
    WK_COLLOQ_I8, WK_COLLOQ_I16, WK_COLLOQ_I32, WK_COLLOQ_I64, WK_COLLOQ_F32, WK_COLLOQ_F64,
    WK_COLLOQ_STRING, WK_COLLOQ_BYTES
} wk_colloq_type;
#define WK_COLLOQ_TYPE_COUNT 13

typedef enum wk_colloq_wire {
    WK_COLLOQ_WIRE_REFERENCE = 0,
    WK_COLLOQ_WIRE_COMPACT = 1,
    WK_COLLOQ_WIRE_BINARY = 2
} wk_colloq_wire;

/* "bool", "u8", ... (static storage; NULL for an invalid value). */
const char *wk_colloq_type_name(wk_colloq_type type);
/* Parses a type name of len bytes; false when it is not one. */
bool wk_colloq_type_parse(const char *name, size_t len, wk_colloq_type *out);
/* Fixed width in bytes of a scalar type (bool 1, ..., f64 8); 0 for string and bytes. */
unsigned wk_colloq_type_width_get(wk_colloq_type type);
/* "reference", "compact", "binary" (static storage; NULL for an invalid value). */
const char *wk_colloq_wire_name(wk_colloq_wire wire);
/* Parses a NUL-terminated wire name; false when it is not one. */
bool wk_colloq_wire_parse(const char *name, wk_colloq_wire *out);

/* The spec's failure name of a failure code ("unknown-transition", "wrong-state",
 * "wrong-sender", "bad-sequence", "malformed-payload", "payload-too-large", "truncated",
 * "after-final"); NULL for any other code. Static storage. */
const char *wk_colloq_failure_name(wk_code code);
/* The failure code of a failure name of len bytes; WK_OK when it names none. */
wk_code wk_colloq_failure_parse(const char *name, size_t len);
/* True for the eight failure codes (740-747). */
bool wk_colloq_code_is_failure(wk_code code);

/* ---------------------------------------------------------------------------------------------
 * Inline helpers of the binary frame, shared by the library and generated codecs
 * (`wirekit colloq gen`): LEB128 varints and UTF-8 validation. Read only the bytes they are
 * given.
 * ------------------------------------------------------------------------------------------- */
/* True when q[0..len) is valid UTF-8: wk_utf8_valid with an inline ASCII pre-check, 8 bytes at a
 * time, short strings in one or two overlapping loads (every byte of q[0..len) is looked at, none
 * outside it; q may be NULL when len is 0). A string with any high bit set goes whole to the full
 * validator, so *bad (may be NULL) is what wk_utf8_valid reports. */
static inline bool wk_colloq_utf8_valid(const uint8_t *q, size_t len, size_t *bad)
{
    uint64_t acc;
    if (len >= 8) {
        for (size_t k = 0; k + 8 <= len; k += 8) {
            uint64_t w;
            memcpy(&w, q + k, 8);
            if (w & 0x8080808080808080ull) return wk_utf8_valid(q, len, bad);
        }
        memcpy(&acc, q + len - 8, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, q, 4);
        memcpy(&b, q + len - 4, 4);
        acc = a | b;
    } else {
        acc = len ? (uint64_t)(q[0] | q[len >> 1] | q[len - 1]) : 0;
    }
    if (acc & 0x8080808080808080ull) return wk_utf8_valid(q, len, bad);
    return true;
}

/* LEB128 of the binary frame (minimal form, at most 10 bytes): the rule is common.h's
 * (wk_leb128_len, wk_leb128_put, wk_cursor_leb128 with WK_VARINT_MINIMAL), which the library
 * parses through. These three forward to it and stay for generated codecs, whose code calls them.
 * _len: bytes v takes (1..10). _put: writes v at dst (room for _len(v) bytes), returns the count.
 * _get: reads one from [*pp, end): 1 ok (*pp advanced); 0 the input ends inside it; -1 malformed
 * (non-minimal, longer than 10 bytes or above 2^64-1), *pp at the byte at fault. */
static inline unsigned wk_colloq_varint_len(uint64_t v) { return wk_leb128_len(v); }
static inline unsigned wk_colloq_varint_put(uint8_t *dst, uint64_t v) { return wk_leb128_put(dst, v); }
static inline int wk_colloq_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    wk_cursor c = wk_cursor_make(*pp, (size_t)(end - *pp));
    size_t len;
    switch (wk_cursor_leb128(&c, WK_LEB128_MAX_LEN, WK_VARINT_MINIMAL, v, &len)) {
    case WK_CURSOR_OK: *pp = c.p; return 1;
    case WK_CURSOR_TRUNCATED: return 0;
    default: *pp += len - 1; return -1;
    }
}


/* ---------------------------------------------------------------------------------------------
 * Plan (read-only after compile; every pointer is owned by the plan)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_colloq_field {
    const char *name;
    wk_colloq_type type;
    bool optional;
    uint8_t width;        /* fixed width in bytes; 0 = variable (string, bytes) */
    uint16_t presence_bit; /* optional fields: index in the presence bitmap (0 = first optional) */
} wk_colloq_field;

/* A message and its payload schedule. */
typedef struct wk_colloq_message {
    const char *name;
    uint32_t field_count;
    const wk_colloq_field *fields; /* declared (= schedule) order */
    uint32_t optional_count;
    uint32_t bitmap_bytes;         /* ceil(optional_count / 8) */
    uint32_t max_payload;          /* payload ceiling in bytes */
    uint32_t fixed_bytes;          /* bytes of the required fixed-width fields + bitmap */
} wk_colloq_message;

typedef struct wk_colloq_transition {
    uint32_t from;    /* state index */
    uint32_t message; /* message index */
    uint32_t sender;  /* role index */
    uint32_t to;      /* state index */
} wk_colloq_transition;

typedef struct wk_colloq_plan {
    const char *name;
    uint32_t role_count;
    const char *const *roles;        /* conversation order */
    uint32_t state_count;
    const char *const *states;       /* conversation order */
    const bool *is_final;            /* per state */
    uint32_t initial;                /* state index */
    uint32_t message_count;
    const wk_colloq_message *messages; /* sorted by name (strcmp) */
    uint32_t transition_count;
    const wk_colloq_transition *transitions; /* index = transition id */
    bool has_schedules;              /* false: a v0 plan loaded without payload_schedules */
    uint32_t max_payload_max;        /* largest max_payload of any message */
    const char *canonical;           /* canonical plan JSON, NUL-terminated */
    size_t canonical_len;
    char identity[WK_COLLOQ_IDENTITY_LEN + 1]; /* lowercase hex BLAKE3 of canonical */
} wk_colloq_plan;

/* How a plan is made. A NULL params pointer is all defaults. */
typedef struct wk_colloq_plan_params {
    const wk_allocator *allocator; /* the plan's memory and the compiler's scratch (json-c's own
                                      documents excepted); NULL: malloc/free. Must outlive the
                                      plan. */
} wk_colloq_plan_params;

/* Compiles conversation JSON text (json[0..len), borrowed for the call, need not be
 * NUL-terminated) into a new plan. On WK_OK *out is the caller's (wk_colloq_plan_destroy); the
 * plan owns every pointer in it. On failure *out is NULL and err carries a WK_ERR_COLLOQ_* compile
 * code whose message starts with the JSON path, or WK_ERR_NOMEM. */
wk_code wk_colloq_plan_compile(const char *json, size_t len, const wk_colloq_plan_params *params,
                               wk_colloq_plan **out, wk_error *err);
/* Like wk_colloq_plan_compile but also accepts a compiled plan ("colloq":"plan/v0"), which must be
 * canonical-equivalent to what its content compiles to (else WK_ERR_COLLOQ_PLAN). What `--plan`
 * files go through. */
wk_code wk_colloq_plan_load(const char *json, size_t len, const wk_colloq_plan_params *params,
                            wk_colloq_plan **out, wk_error *err);
/* Frees a plan and everything it owns through its allocator (NULL is fine). */
void wk_colloq_plan_destroy(wk_colloq_plan *plan);

/* Index of a role / state / message named by len bytes; -1 when there is none. */
int32_t wk_colloq_plan_role_find(const wk_colloq_plan *plan, const char *name, size_t len);
int32_t wk_colloq_plan_state_find(const wk_colloq_plan *plan, const char *name, size_t len);
int32_t wk_colloq_plan_message_find(const wk_colloq_plan *plan, const char *name, size_t len);
/* Transition id for (from state, message, sender role); WK_COLLOQ_NO_TRANSITION when none.
 * sender WK_COLLOQ_SENDER_TRANSCRIPT: the lowest id with that from and message. */
uint32_t wk_colloq_plan_transition_find(const wk_colloq_plan *plan, uint32_t from,
                                        uint32_t message, uint32_t sender);
/* The message (schedule) of transition t (t < transition_count). */
static inline const wk_colloq_message *
wk_colloq_plan_transition_message_get(const wk_colloq_plan *plan, uint32_t t)
{
    return &plan->messages[plan->transitions[t].message];
}

/* ---------------------------------------------------------------------------------------------
 * Session preface (frame zero, one JSON line)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_colloq_preface {
    char plan[WK_COLLOQ_IDENTITY_LEN + 1]; /* identity as sent (checked: 64 lowercase hex) */
    wk_colloq_wire wire;
    char role[64];                         /* role name as sent (NUL-terminated) */
} wk_colloq_preface;

/* The preface line `{"colloq":"wire/v0","plan":"<identity>","wire":"<wire>","role":"<role>"}\n`
 * of our role index. _size: WK_OK with *size its length (with the '\n'), or WK_ERR_ARG (unknown
 * wire, role not in the plan; *size 0). _encode writes it at out->dst + out->pos: WK_DONE (pos
 * advanced by the size), WK_NEED_OUTPUT (out untouched), WK_ERROR (WK_ERR_ARG as _size, or no
 * valid view; out untouched). plan is borrowed for the call. */
wk_code wk_colloq_preface_size(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role,
                               size_t *size, wk_error *err);
wk_result wk_colloq_preface_encode(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role,
                                   wk_out *out, wk_error *err);
/* Parses one preface line of len bytes (a trailing '\n' is allowed). WK_OK or
 * WK_ERR_COLLOQ_PREFACE (malformed: not JSON, keys other than the four, wrong version, bad
 * identity syntax, unknown wire, role too long). */
wk_code wk_colloq_preface_parse(const char *line, size_t len, wk_colloq_preface *out,
                                wk_error *err);
/* Checks a parsed peer preface against our plan and wire: WK_ERR_COLLOQ_PLAN_MISMATCH (identity
 * differs), WK_ERR_COLLOQ_WIRE_MISMATCH, WK_ERR_COLLOQ_PREFACE_ROLE (role not in the plan, or
 * equal to our_role; pass WK_COLLOQ_ROLE_ANY when there is no local role), or
 * WK_ERR_COLLOQ_WIRE_MISMATCH for binary on a v0 plan. On WK_OK, *peer_role (may be NULL) is the
 * peer's role index. */
wk_code wk_colloq_preface_check(const wk_colloq_plan *plan, const wk_colloq_preface *peer,
                                wk_colloq_wire our_wire, uint32_t our_role, uint32_t *peer_role,
                                wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Frame value: the same for all three encodings
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_colloq_value {
    union {
        bool b;         /* bool */
        uint64_t u;     /* u8 .. u64 */
        int64_t i;      /* i8 .. i64 */
        double f;       /* f32 (exactly representable as float) and f64 */
        struct {
            const uint8_t *ptr; /* BORROWED: input buffer (binary) or decoder (JSON) */
            size_t len;
        } s;            /* string (valid UTF-8) and bytes */
    } as;
    bool present;       /* false only for an absent optional field */
} wk_colloq_value;

typedef struct wk_colloq_frame {
    uint32_t transition;   /* id, or WK_COLLOQ_NO_TRANSITION */
    uint64_t seq;
    uint32_t field_count;  /* the schedule's field count (0 when the transition is unknown) */
    wk_code payload_error; /* WK_OK, or MALFORMED_PAYLOAD / PAYLOAD_TOO_LARGE found by the decoder;
                              wk_colloq_session_check reports it after the header checks */
    uint64_t payload_error_offset; /* byte offset in the frame (binary); 0 for JSON */
    const char *payload_error_reason; /* static text, or NULL */
    size_t payload_len;    /* binary: the frame's payload_len; JSON: the computed binary size */
    wk_colloq_value fields[WK_COLLOQ_MAX_FIELDS]; /* [i] = schedule field i */
    bool sender_mismatch;  /* set by the reference decoder when the frame's "sender" names no
                              transition from its (state, message) while others do: transition
                              is then the lowest of those, and wk_colloq_session_check reports
                              wrong-sender after the state check (decision 8); always false for
                              compact and binary frames (the id names the sender) */
} wk_colloq_frame;

/* Starts a frame for transition t (which must be < transition_count) with sequence seq: field_count
 * from t's schedule, every field absent (zero), no payload error. Set fields[i].as and
 * fields[i].present = true for each value to send (required fields must be present). */
void wk_colloq_frame_init(wk_colloq_frame *f, const wk_colloq_plan *plan, uint32_t t, uint64_t seq);
/* Index of the field named by len bytes in message m; -1 when there is none. */
int32_t wk_colloq_message_field_find(const wk_colloq_message *m, const char *name, size_t len);

/* Binary payload size the frame's values take under transition t's schedule (bitmap included).
 * The frame's fields must be valid for that schedule. */
size_t wk_colloq_payload_size(const wk_colloq_plan *plan, uint32_t t, const wk_colloq_frame *f);

/* ---------------------------------------------------------------------------------------------
 * Encoders: into the caller's view, never half a frame, allocating nothing. WK_DONE (out->pos
 * advanced by exactly the size wk_colloq_frame_size gives), WK_NEED_OUTPUT (out untouched:
 * position and bytes), WK_ERROR with WK_ERR_ARG (out untouched) when the frame's values do not fit
 * the schedule (unknown transition, missing required field, bad UTF-8, NaN, value out of range)
 * or there is no valid view, whatever the room. JSON encoders end the line with '\n'. plan and f
 * are borrowed for the call.
 * ------------------------------------------------------------------------------------------- */
/* Bytes frame f takes on wire: WK_OK with *size, or WK_ERR_ARG as the encoders (*size 0). */
wk_code wk_colloq_frame_size(const wk_colloq_plan *plan, wk_colloq_wire wire,
                             const wk_colloq_frame *f, size_t *size, wk_error *err);
wk_result wk_colloq_reference_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                     wk_out *out, wk_error *err);
wk_result wk_colloq_compact_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   wk_out *out, wk_error *err);
wk_result wk_colloq_binary_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                  wk_out *out, wk_error *err);
/* Dispatches on wire. */
wk_result wk_colloq_frame_encode(const wk_colloq_plan *plan, wk_colloq_wire wire,
                                 const wk_colloq_frame *f, wk_out *out, wk_error *err);

/* The payload object `{...}` of f (JSON envelope conventions, schedule order) under its
 * transition, as the encoders above: _size WK_OK / WK_ERR_ARG, _encode WK_DONE, WK_NEED_OUTPUT
 * (out untouched) or WK_ERROR. */
wk_code wk_colloq_payload_json_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                    size_t *size, wk_error *err);
wk_result wk_colloq_payload_json_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                        wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Decoders
 * ------------------------------------------------------------------------------------------- */

/* Binary, from a stream: reads one frame at in->src[in->pos..size). Allocates nothing.
 *   WK_DONE: *f holds the frame, in->pos moved past it. String/bytes values borrow in->src.
 *            Payload problems (length above the ceiling, malformed content) are in
 *            f->payload_error; when payload_len exceeds the ceiling only the header is consumed.
 *            A transition id outside the table consumes the header only (f->transition =
 *            WK_COLLOQ_NO_TRANSITION).
 *   WK_NEED_INPUT: the frame is incomplete; in->pos unchanged (at EOF: truncated).
 *   WK_ERROR: header malformed (non-minimal or over 10-byte varint, above 2^64-1):
 *            WK_ERR_COLLOQ_MALFORMED_PAYLOAD with the offset (relative to in->pos). */
wk_result wk_colloq_binary_decode(const wk_colloq_plan *plan, wk_in *in, wk_colloq_frame *f,
                                  wk_error *err);

/* A decoder for one wire, holding what the JSON decoders need between frames (json-c tokener and
 * document, a scratch buffer for bytes fields). Created once per session. */
typedef struct wk_colloq_decoder wk_colloq_decoder;
typedef struct wk_colloq_decoder_params {
    const wk_colloq_plan *plan;    /* borrowed; must outlive the decoder */
    wk_colloq_wire wire;
    const wk_allocator *allocator; /* the decoder and its scratch buffer (max_payload_max bytes
                                      for JSON wires; json-c's tokener and documents excepted);
                                      NULL: malloc/free. Must outlive the decoder. */
} wk_colloq_decoder_params;
/* New decoder (the caller's: wk_colloq_decoder_destroy); NULL with err set on WK_ERR_NOMEM, or
 * WK_ERR_ARG (no params or plan, unknown wire, binary on a v0 plan). */
wk_colloq_decoder *wk_colloq_decoder_create(const wk_colloq_decoder_params *params, wk_error *err);
/* Frees d and what it holds (NULL is fine); frames it decoded stop being valid. */
void wk_colloq_decoder_destroy(wk_colloq_decoder *d);
/* Reads one frame from in (any wire): binary as wk_colloq_binary_decode; JSON wires read one
 * line up to '\n' (consumed). Same results as wk_colloq_binary_decode; for JSON, WK_ERROR is a
 * malformed envelope (WK_ERR_COLLOQ_MALFORMED_PAYLOAD) or a line over WK_COLLOQ_JSON_LINE_MAX
 * (WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE; nothing consumed), a malformed line is consumed. JSON
 * string/bytes values are valid until the next call. */
wk_result wk_colloq_decoder_decode(wk_colloq_decoder *d, wk_in *in, wk_colloq_frame *f,
                                   wk_error *err);
/* Decodes one JSON line (without its '\n') of the decoder's wire (reference or compact):
 * WK_OK with payload problems in f->payload_error, or WK_ERR_COLLOQ_MALFORMED_PAYLOAD. */
wk_code wk_colloq_decoder_decode_line(wk_colloq_decoder *d, const char *line, size_t len,
                                      wk_colloq_frame *f, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Checker (one for all encodings)
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_colloq_session {
    const wk_colloq_plan *plan; /* borrowed */
    uint32_t state;             /* current state index */
    uint64_t next_seq;          /* next expected sequence number */
    bool finished;              /* the current state is final */
    wk_code failure;            /* WK_OK while alive; else the failure code (session over) */
    uint64_t failure_seq;       /* next_seq when it failed */
    wk_error error;             /* the failure as first reported; every later call on a failed
                                   session reports it again, unchanged */
} wk_colloq_session;

/* Starts a session (a plain caller-owned struct; it allocates nothing) at the plan's initial
 * state, seq 0. plan is borrowed and must outlive the session. */
void wk_colloq_session_init(wk_colloq_session *s, const wk_colloq_plan *plan);
/* Checks frame f sent by role `sender` (WK_COLLOQ_SENDER_TRANSCRIPT: the transition's role; a
 * live role must be the transition's, and for a reference frame the one its "sender" names).
 * WK_OK: accepted; state and next_seq advance (f->transition is the accepted id).
 * Otherwise the failure code (740-747, err set with seq and reason) and the session is over:
 * later calls return the same failure with the same wk_error (s->error). f is borrowed for the
 * call. */
wk_code wk_colloq_session_check(wk_colloq_session *s, const wk_colloq_frame *f, uint32_t sender,
                                wk_error *err);
/* Records a failure found outside check (a decoder's WK_ERROR code, or truncated): becomes
 * after-final when the session had finished; a code that is no failure kind becomes
 * malformed-payload. When err already carries the code (the decoder's), its message and offset
 * are kept. Returns the recorded code. */
wk_code wk_colloq_session_fail(wk_colloq_session *s, wk_code code, wk_error *err);
/* End of input. rest = the bytes the caller holds unread (NULL or empty: none; never consumed).
 * WK_DONE when there are none (a clean end, whatever the state); else WK_ERROR, truncated
 * recorded (after-final when the session had finished). On a failed session WK_ERROR with its
 * failure again. Calling it again gives the same answer. */
wk_result wk_colloq_session_finish(wk_colloq_session *s, const wk_in *rest, wk_error *err);
/* Decode one frame with d and check it: WK_DONE (accepted, f holds it), WK_NEED_INPUT, or
 * WK_ERROR (failure recorded in s->failure; err says why). */
wk_result wk_colloq_session_step(wk_colloq_session *s, wk_colloq_decoder *d, wk_in *in,
                                 uint32_t sender, wk_colloq_frame *f, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Reader: the frames of one wire decoded and checked from a stream, in the contract's shape
 * (docs/architecture.md): pushes of any size, one event per accepted frame.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_colloq_reader wk_colloq_reader;
typedef struct wk_colloq_reader_params {
    const wk_colloq_plan *plan;    /* borrowed; must outlive the reader */
    wk_colloq_wire wire;
    uint32_t sender;               /* WK_COLLOQ_SENDER_TRANSCRIPT, or the live peer's role index */
    const wk_allocator *allocator; /* the reader, its decoder, and a buffer for one frame (the
                                      largest a frame of the plan may take on the wire); json-c's
                                      documents excepted. NULL: malloc/free. */
    const wk_colloq_session *session; /* NULL: start at the plan's initial state; else continue
                                         a copy of this session (its plan must be plan) */
} wk_colloq_reader_params;
/* New reader at the plan's initial state or params->session (the caller's:
 * wk_colloq_reader_destroy); NULL with err set on WK_ERR_NOMEM or WK_ERR_ARG (as
 * wk_colloq_decoder_create, a sender not in the plan, or a session of another plan).
 * The preface is not the reader's: read and check it before the first push. */
wk_colloq_reader *wk_colloq_reader_create(const wk_colloq_reader_params *params, wk_error *err);
void wk_colloq_reader_destroy(wk_colloq_reader *r);
/* Reads frames from in (out must be NULL: WK_ERR_ARG otherwise):
 *   WK_EVENT: a frame was accepted; wk_colloq_reader_frame_get(r) holds it (string and bytes
 *             values borrow in->src or the reader) until the next call; in->pos moved past it.
 *   WK_NEED_INPUT: in is consumed (the start of a frame is kept): push more, or _finish.
 *   WK_ERROR: the session failed (a failure code 740-747, or the decoder's); err's offset counts
 *             from the first byte ever pushed. Every later call reports it again, unchanged. */
wk_result wk_colloq_reader_read(wk_colloq_reader *r, wk_in *in, wk_out *out, wk_error *err);
/* End of input (rest: bytes the caller holds unread, never consumed): WK_DONE when no frame was
 * begun (a clean end, whatever the state), else WK_ERROR truncated (after-final when the session
 * had finished) with the offset of the input's end. The same answer again when called twice. */
wk_result wk_colloq_reader_finish(wk_colloq_reader *r, const wk_in *rest, wk_error *err);
/* The last accepted frame; the session (state, next_seq, finished, failure); the input bytes of
 * the frames read so far (a kept frame start not counted). */
const wk_colloq_frame *wk_colloq_reader_frame_get(const wk_colloq_reader *r);
const wk_colloq_session *wk_colloq_reader_session_get(const wk_colloq_reader *r);
uint64_t wk_colloq_reader_consumed_get(const wk_colloq_reader *r);
/* The role the next frame is read from (WK_COLLOQ_SENDER_TRANSCRIPT, or a live role index), for a
 * stream whose frames come from more than one peer; it applies from the next call (a frame whose
 * start is kept is checked against the sender set when it completes). WK_ERR_ARG for a role not
 * in the plan (the reader's sender unchanged). */
wk_code wk_colloq_reader_sender_set(wk_colloq_reader *r, uint32_t sender, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Traces
 * ------------------------------------------------------------------------------------------- */

/* One trace line for an accepted frame f, with '\n':
 * {"seq":N,"transition":T,"from":"..","to":"..","message":"..","payload":{...}}
 * as the frame encoders: _size WK_OK with *size or WK_ERR_ARG (transition outside the table,
 * values that do not fit the schedule); _encode WK_DONE, WK_NEED_OUTPUT (out untouched) or
 * WK_ERROR (out untouched). */
wk_code wk_colloq_trace_frame_size(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                   size_t *size, wk_error *err);
wk_result wk_colloq_trace_frame_encode(const wk_colloq_plan *plan, const wk_colloq_frame *f,
                                       wk_out *out, wk_error *err);
/* {"failure":"<kind>","seq":N}\n for failure code `code` (at most 80 bytes), likewise;
 * WK_ERR_ARG when code is not one of the eight failure kinds. */
wk_code wk_colloq_trace_failure_size(wk_code code, uint64_t seq, size_t *size, wk_error *err);
wk_result wk_colloq_trace_failure_encode(wk_code code, uint64_t seq, wk_out *out, wk_error *err);

typedef struct wk_colloq_trace_entry {
    bool is_failure;
    uint64_t seq;
    uint32_t transition;  /* accepted entries (as written in the line) */
    wk_code failure;      /* failure entries */
    char *line;           /* the line without '\n', NUL-terminated, owned by the trace */
    size_t line_len;
} wk_colloq_trace_entry;

/* A trace: a plain caller-owned struct whose entries (and their lines) it owns. */
typedef struct wk_colloq_trace {
    wk_colloq_trace_entry *entries;
    size_t count, cap;
    wk_allocator allocator;       /* from the params (read-only) */
} wk_colloq_trace;

typedef struct wk_colloq_trace_params {
    const wk_allocator *allocator; /* entries, their lines, and wk_colloq_trace_verify's scratch;
                                      NULL: malloc/free. Must outlive the trace. */
} wk_colloq_trace_params;

/* Empty trace (no allocation until the first append); params may be NULL (defaults). */
void wk_colloq_trace_init(wk_colloq_trace *t, const wk_colloq_trace_params *params);
/* Frees every entry through the trace's allocator (t stays valid and empty; it may be used
 * again). */
void wk_colloq_trace_destroy(wk_colloq_trace *t);
/* Appends an accepted frame / a failure (the line the encoders above write). WK_ERR_NOMEM on
 * allocation failure, WK_ERR_ARG as the encoders. */
wk_code wk_colloq_trace_append_frame(wk_colloq_trace *t, const wk_colloq_plan *plan,
                                     const wk_colloq_frame *f, wk_error *err);
wk_code wk_colloq_trace_append_failure(wk_colloq_trace *t, wk_code code, uint64_t seq,
                                       wk_error *err);
/* Bytes of the whole trace as text (each line + '\n', no NUL). */
size_t wk_colloq_trace_size(const wk_colloq_trace *t);
/* Writes the whole trace as text at out->dst + out->pos: WK_DONE (pos advanced by
 * wk_colloq_trace_size), WK_NEED_OUTPUT (out untouched), WK_ERROR (WK_ERR_ARG: no view). */
wk_result wk_colloq_trace_encode(const wk_colloq_trace *t, wk_out *out, wk_error *err);
/* Parses trace text (JSON lines; empty lines ignored, last '\n' optional) appending to t (which
 * owns copies). WK_ERR_COLLOQ_TRACE with the byte offset and line number in msg for a line that
 * is not a trace entry (syntax only: wk_colloq_trace_verify checks meaning). */
wk_code wk_colloq_trace_parse(const char *text, size_t len, wk_colloq_trace *t, wk_error *err);

/* Result of wk_colloq_trace_verify. */
typedef struct wk_colloq_trace_verify_report {
    bool ok;
    size_t entry;       /* index of the first wrong entry (when !ok) */
    wk_code reason;     /* failure code the replay hit (e.g. WK_ERR_COLLOQ_BAD_SEQUENCE) or
                           WK_ERR_COLLOQ_TRACE (entry inconsistent with the plan) */
} wk_colloq_trace_verify_report;
/* Verifies trace t against plan (both borrowed; decision 13). Returns WK_OK or the reason code;
 * *rep (may be NULL) and err (message names the entry index and why) say which entry. Its scratch
 * (a frame and max_payload_max bytes) comes from t's allocator: WK_ERR_NOMEM when it fails. */
wk_code wk_colloq_trace_verify(const wk_colloq_plan *plan, const wk_colloq_trace *t,
                               wk_colloq_trace_verify_report *rep, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Code generation (`wirekit colloq gen`): the binary codec of one plan as C (decision 16).
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_colloq_codegen_part {
    WK_COLLOQ_CODEGEN_HEADER = 0, /* <prefix>.h: types, constants, prototypes */
    WK_COLLOQ_CODEGEN_SOURCE = 1  /* <prefix>.c: the code; #includes the header */
} wk_colloq_codegen_part;

typedef struct wk_colloq_codegen_params {
    const char *prefix;            /* [A-Za-z_][A-Za-z0-9_]*, 1..64 characters: every generated
                                      name starts with it (macros with it in upper case); NULL:
                                      wk_colloq_codegen_prefix_encode */
    const char *header_name;       /* what the source #includes; NULL: "<prefix>.h" */
    const wk_allocator *allocator; /* the generator's working memory; NULL: malloc */
} wk_colloq_codegen_params;

/* The default prefix of plan (borrowed): its name with each run of characters outside
 * [A-Za-z0-9] as one '_', "c_" in front when it does not start with a letter or '_', at most
 * WK_COLLOQ_CODEGEN_PREFIX_MAX characters ("token-stream" -> "token_stream"). _size gives its
 * length (no NUL); _encode writes it (no NUL) at out->dst + out->pos: WK_DONE (pos advanced by
 * the size), WK_NEED_OUTPUT (out untouched) or WK_ERROR (WK_ERR_ARG: no valid view). */
#define WK_COLLOQ_CODEGEN_PREFIX_MAX 34
size_t wk_colloq_codegen_prefix_size(const wk_colloq_plan *plan);
wk_result wk_colloq_codegen_prefix_encode(const wk_colloq_plan *plan, wk_out *out, wk_error *err);
/* Bytes one part of plan's generated code takes (into *size). WK_OK, WK_ERR_ARG (bad prefix or
 * header name, a v0 plan without schedules) or WK_ERR_NOMEM. */
wk_code wk_colloq_codegen_size(const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                               wk_colloq_codegen_part part, size_t *size, wk_error *err);
/* Writes one part of plan's generated code (C text, no NUL) at out->dst + out->pos: WK_DONE
 * (pos advanced), WK_NEED_OUTPUT (out untouched; wk_colloq_codegen_size says how much), or
 * WK_ERROR (as wk_colloq_codegen_size). The same plan and params always give the same bytes. */
wk_result wk_colloq_codegen_write(const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                                  wk_colloq_codegen_part part, wk_out *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
