/* libFuzzer target: the Colloq binary frame decoder and the checker (colloq.h; RFC-0005 criterion
 * 5) on arbitrary frame streams under fixed plans.
 *
 * Plans (compiled once): 0 the token-stream and 1 the mixture-of-experts router conversations of
 * tests/colloq/fixtures/ (token-stream.json, moe-router.json; read from the source tree, found
 * through __FILE__, with copies embedded below for when the tree is not there), 2 a "kitchen" plan
 * with every field type required and optional (13 optional fields: a 2-byte presence bitmap), a
 * 1-byte ceiling and two transitions that differ only in sender, 3 a wide plan of 141 transitions
 * (two-byte transition ids).
 *
 * Input: byte 0 picks the run, the rest is the binary frame stream (the bytes after the preface).
 *   bits 0-1  plan
 *   bits 2-4  push size for pass B (1, 2, 3, 5, 8, 17, 64, everything)
 *   bits 5-7  sender: 0-3 transcript (WK_COLLOQ_SENDER_TRANSCRIPT); 4-7 live: each frame is sent
 *             by the role of the transition it names (role 0 when none), except that in modes
 *             5, 6, 7 frame 0, 1 or 3 comes from the next role (wrong-sender)
 *
 * Pass A decodes the stream frame by frame with wk_colloq_binary_decode from one buffer holding
 * all of it and checks each frame with wk_colloq_session_check. Checked for every decode:
 *   - a reference decoder written here from the spec (LEB128 varints of at most 10 bytes in
 *     minimal form, presence bitmap with unused bits 0, fixed-width little-endian scalars,
 *     bool 0/1, NaN/infinity refused (colloq.h decision 6), varint-prefixed string/bytes inside
 *     the payload, strict UTF-8, no trailing bytes, payload_len against the ceiling before the
 *     payload, an unknown transition or an oversize payload consuming the header only) gives the
 *     same result: need-input (in.pos unchanged), a header error (MALFORMED_PAYLOAD, PeerProtocol,
 *     offset inside the input) or a frame with the same transition, seq, payload_len, consumed
 *     bytes, payload verdict and values; string/bytes values are slices of the input at the
 *     reference's offsets (so inside the frame), and strings are valid UTF-8;
 *   - a frame with a known transition and a clean payload re-encodes (wk_colloq_binary_encode) to
 *     exactly its input bytes (binary is canonical), wk_colloq_payload_size is its payload_len,
 *     and one byte less of output is NEED_OUTPUT with nothing written;
 *   - decode, check and encode allocate nothing (fuzz/alloc_hook.h: only the allocations of the
 *     calling thread while the measured call runs are counted, through the sanitizer malloc hook
 *     under libFuzzer and -Wl,--wrap in replay builds; a failure prints each allocation's stack);
 *   - wk_colloq_session_check agrees with a reference checker (order after-final, unknown-transition,
 *     wrong-state, wrong-sender (live: the transition's role must be the frame's sender),
 *     bad-sequence, then the decoder's payload
 *     verdict): same failure code, or accepted with the same transition, next
 *     state, next seq and finished flag; failures are one of the eight kinds, PeerProtocol, keep
 *     failure_seq = frames accepted, and stay (checking again repeats them);
 *   - the first two accepted frames of an input (JSON_CROSS_FRAMES: the JSON path is most of
 *     the cost) encode in both JSON envelopes (one line, within WK_COLLOQ_JSON_LINE_MAX); the
 *     line decodes with no error to the same seq and transition (reference frames name state,
 *     message and sender) and payload size, and its values re-encode in binary to exactly the
 *     frame's bytes (the three encodings carry the same values, criterion 1);
 *   - the end: NEED_INPUT with bytes left is truncated (after-final once finished), a header error
 *     recorded through wk_colloq_session_fail is after-final once finished; a clean end is OK.
 * Pass B drives a wk_colloq_reader through the contract harness (fuzz/fuzz_drive.h) in pushes of
 * the chosen size (each an exact-size heap copy, so reading past a push is an ASan crash) and
 * whole (the reader steps wk_colloq_session_step with its binary decoder), every call checked
 * against the contract and both runs the same outcome (the adapter's record: each frame's
 * transition, seq and trace line); the adapter sets each frame's sender (live modes:
 * wk_colloq_reader_sender_set), and the run gives the same verdict as pass A (frames accepted, a
 * CRC of their transitions, seqs and bytes, the failure code and its seq). */
#include <wirekit/colloq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "alloc_hook.h"
#include "fuzz_check.h"
#include "fuzz_drive.h"
#include "wk_contract_colloq.h"

/* Sanitizer runtime hooks, weak: absent (NULL) in builds without a sanitizer runtime. */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
int __asan_address_is_poisoned(void const volatile *addr) __attribute__((weak));

/* ---------------------------------------------------------------------------------------------
 * Plans
 * ------------------------------------------------------------------------------------------- */
static const char token_stream_json[] =
    "{ \"colloq\": \"conversation/v0\",\n"
    "  \"name\": \"token-stream\",\n"
    "  \"roles\": [\"client\", \"server\"],\n"
    "  \"states\": [\"Idle\", \"Streaming\", \"Done\"],\n"
    "  \"initial\": \"Idle\", \"final\": [\"Done\"],\n"
    "  \"messages\": {\n"
    "    \"Prompt\": [ {\"name\": \"text\", \"type\": \"string\"}, {\"name\": \"max_tokens\", "
    "\"type\": \"u32\"} ],\n"
    "    \"Token\":  [ {\"name\": \"index\", \"type\": \"u32\"}, {\"name\": \"text\", \"type\": "
    "\"string\"},\n"
    "                {\"name\": \"logprob\", \"type\": \"f32\", \"optional\": true} ],\n"
    "    \"End\":    [ {\"name\": \"reason\", \"type\": \"string\", \"optional\": true} ] },\n"
    "  \"transitions\": [\n"
    "    {\"from\": \"Idle\", \"message\": \"Prompt\", \"sender\": \"client\", \"to\": "
    "\"Streaming\"},\n"
    "    {\"from\": \"Streaming\", \"message\": \"Token\", \"sender\": \"server\", \"to\": "
    "\"Streaming\"},\n"
    "    {\"from\": \"Streaming\", \"message\": \"End\", \"sender\": \"server\", \"to\": "
    "\"Done\"} ] }\n";

/* tests/colloq/fixtures/moe-router.json as of this writing (used when the file is not found) */
static const char moe_json[] =
    "{\n"
    "  \"colloq\": \"conversation/v0\",\n"
    "  \"name\": \"moe-router\",\n"
    "  \"roles\": [\"client\", \"router\", \"expert\"],\n"
    "  \"states\": [\"Idle\", \"Routing\", \"Gathering\", \"Done\", \"Failed\"],\n"
    "  \"initial\": \"Idle\",\n"
    "  \"final\": [\"Done\", \"Failed\"],\n"
    "  \"messages\": {\n"
    "    \"Request\": [\n"
    "      {\"name\": \"request_id\", \"type\": \"u64\"},\n"
    "      {\"name\": \"tokens\", \"type\": \"bytes\"},\n"
    "      {\"name\": \"top_k\", \"type\": \"u8\"},\n"
    "      {\"name\": \"temperature\", \"type\": \"f32\", \"optional\": true},\n"
    "      {\"name\": \"deadline_us\", \"type\": \"i64\", \"optional\": true}\n"
    "    ],\n"
    "    \"Dispatch\": {\"fields\": [\n"
    "      {\"name\": \"expert\", \"type\": \"u16\"},\n"
    "      {\"name\": \"shard\", \"type\": \"u32\"},\n"
    "      {\"name\": \"gate\", \"type\": \"f32\"},\n"
    "      {\"name\": \"activations\", \"type\": \"bytes\"},\n"
    "      {\"name\": \"priority\", \"type\": \"i8\", \"optional\": true}\n"
    "    ], \"max_payload\": 4096},\n"
    "    \"ExpertResult\": {\"fields\": [\n"
    "      {\"name\": \"expert\", \"type\": \"u16\"},\n"
    "      {\"name\": \"ok\", \"type\": \"bool\"},\n"
    "      {\"name\": \"output\", \"type\": \"bytes\", \"optional\": true},\n"
    "      {\"name\": \"latency_us\", \"type\": \"u32\"},\n"
    "      {\"name\": \"loss\", \"type\": \"f64\", \"optional\": true},\n"
    "      {\"name\": \"error\", \"type\": \"string\", \"optional\": true},\n"
    "      {\"name\": \"bias\", \"type\": \"i16\", \"optional\": true},\n"
    "      {\"name\": \"load\", \"type\": \"i32\", \"optional\": true}\n"
    "    ], \"max_payload\": 4096},\n"
    "    \"Combined\": [\n"
    "      {\"name\": \"request_id\", \"type\": \"u64\"},\n"
    "      {\"name\": \"output\", \"type\": \"bytes\"},\n"
    "      {\"name\": \"experts_used\", \"type\": \"u8\"},\n"
    "      {\"name\": \"score\", \"type\": \"f64\"},\n"
    "      {\"name\": \"note\", \"type\": \"string\", \"optional\": true},\n"
    "      {\"name\": \"w0\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w1\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w2\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w3\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w4\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w5\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w6\", \"type\": \"u8\", \"optional\": true},\n"
    "      {\"name\": \"w7\", \"type\": \"u8\", \"optional\": true}\n"
    "    ],\n"
    "    \"Abort\": [ {\"name\": \"reason\", \"type\": \"string\"} ]\n"
    "  },\n"
    "  \"transitions\": [\n"
    "    {\"from\": \"Idle\", \"message\": \"Request\", \"sender\": \"client\", "
    "\"to\": \"Routing\"},\n"
    "    {\"from\": \"Routing\", \"message\": \"Dispatch\", \"sender\": \"router\", "
    "\"to\": \"Routing\"},\n"
    "    {\"from\": \"Routing\", \"message\": \"ExpertResult\", \"sender\": \"expert\", "
    "\"to\": \"Gathering\"},\n"
    "    {\"from\": \"Gathering\", \"message\": \"ExpertResult\", \"sender\": \"expert\", "
    "\"to\": \"Gathering\"},\n"
    "    {\"from\": \"Gathering\", \"message\": \"Combined\", \"sender\": \"router\", "
    "\"to\": \"Done\"},\n"
    "    {\"from\": \"Routing\", \"message\": \"Abort\", \"sender\": \"router\", "
    "\"to\": \"Failed\"},\n"
    "    {\"from\": \"Gathering\", \"message\": \"Abort\", \"sender\": \"router\", "
    "\"to\": \"Failed\"}\n"
    "  ]\n"
    "}\n";

#define KITCHEN_FIELDS(sfx, opt)                                                                  \
    "{\"name\":\"b" sfx "\",\"type\":\"bool\",\"optional\":" opt "},"                              \
    "{\"name\":\"u8" sfx "\",\"type\":\"u8\",\"optional\":" opt "},"                               \
    "{\"name\":\"u16" sfx "\",\"type\":\"u16\",\"optional\":" opt "},"                             \
    "{\"name\":\"u32" sfx "\",\"type\":\"u32\",\"optional\":" opt "},"                             \
    "{\"name\":\"u64" sfx "\",\"type\":\"u64\",\"optional\":" opt "},"                             \
    "{\"name\":\"i8" sfx "\",\"type\":\"i8\",\"optional\":" opt "},"                               \
    "{\"name\":\"i16" sfx "\",\"type\":\"i16\",\"optional\":" opt "},"                             \
    "{\"name\":\"i32" sfx "\",\"type\":\"i32\",\"optional\":" opt "},"                             \
    "{\"name\":\"i64" sfx "\",\"type\":\"i64\",\"optional\":" opt "},"                             \
    "{\"name\":\"f32" sfx "\",\"type\":\"f32\",\"optional\":" opt "},"                             \
    "{\"name\":\"f64" sfx "\",\"type\":\"f64\",\"optional\":" opt "},"                             \
    "{\"name\":\"s" sfx "\",\"type\":\"string\",\"optional\":" opt "},"                            \
    "{\"name\":\"y" sfx "\",\"type\":\"bytes\",\"optional\":" opt "}"
/* every type twice: required (names as the type) and optional (names ending in _o) */
static const char kitchen_json[] =
    "{\"colloq\":\"conversation/v0\",\"name\":\"kitchen\",\"roles\":[\"a\",\"b\"],"
    "\"states\":[\"S\",\"T\",\"End\"],\"initial\":\"S\",\"final\":[\"End\"],"
    "\"messages\":{"
    "\"All\":{\"fields\":[" KITCHEN_FIELDS("", "false") "," KITCHEN_FIELDS("_o", "true")
    "],\"max_payload\":300},"
    "\"Tiny\":{\"fields\":[{\"name\":\"x\",\"type\":\"u8\",\"optional\":true}],\"max_payload\":1},"
    "\"Stop\":[]},"
    "\"transitions\":["
    "{\"from\":\"S\",\"message\":\"All\",\"sender\":\"a\",\"to\":\"S\"},"
    "{\"from\":\"S\",\"message\":\"All\",\"sender\":\"b\",\"to\":\"T\"},"
    "{\"from\":\"T\",\"message\":\"Tiny\",\"sender\":\"b\",\"to\":\"S\"},"
    "{\"from\":\"S\",\"message\":\"Stop\",\"sender\":\"a\",\"to\":\"End\"},"
    "{\"from\":\"T\",\"message\":\"Stop\",\"sender\":\"b\",\"to\":\"End\"}]}";

#define WIDE_MESSAGES 70

/* The wide plan: messages M000..M069 ({v: u16, optional}) and End; A -Mi/a-> B, B -Mi/b-> A,
 * A -End/a-> Z (final). Ids: 0 (A,End,a), 1..70 (A,Mi,a), 71..140 (B,Mi,b). */
static char *wide_json(void)
{
    size_t cap = 64 * 1024, n = 0;
    char *s = malloc(cap);
    CHECK(s);
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"colloq\":\"conversation/v0\",\"name\":\"wide\",\"roles\":[\"a\","
                          "\"b\"],\"states\":[\"A\",\"B\",\"Z\"],\"initial\":\"A\",\"final\":"
                          "[\"Z\"],\"messages\":{\"End\":[]");
    for (int i = 0; i < WIDE_MESSAGES; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              ",\"M%03d\":[{\"name\":\"v\",\"type\":\"u16\",\"optional\":true}]",
                              i);
    n += (size_t)snprintf(s + n, cap - n,
                          "},\"transitions\":[{\"from\":\"A\",\"message\":\"End\",\"sender\":"
                          "\"a\",\"to\":\"Z\"}");
    for (int i = 0; i < WIDE_MESSAGES; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              ",{\"from\":\"A\",\"message\":\"M%03d\",\"sender\":\"a\",\"to\":"
                              "\"B\"},{\"from\":\"B\",\"message\":\"M%03d\",\"sender\":\"b\","
                              "\"to\":\"A\"}",
                              i, i);
    n += (size_t)snprintf(s + n, cap - n, "]}");
    CHECK(n < cap);
    return s;
}

#define PLAN_COUNT 4
static wk_colloq_plan *plans[PLAN_COUNT];
static wk_colloq_decoder *json_decoders[PLAN_COUNT][2]; /* reference, compact */

/* The text of tests/colloq/fixtures/<name> (found from this source file's path), NUL-terminated
 * and malloc'd; NULL when it cannot be read. */
static char *read_fixture(const char *name)
{
    char path[4096];
    const char *slash = strrchr(__FILE__, '/');
    int dir = slash ? (int)(slash - __FILE__) : 1;
    snprintf(path, sizeof path, "%.*s/../tests/colloq/fixtures/%s", dir, slash ? __FILE__ : ".",
             name);
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    size_t n = buf ? fread(buf, 1, cap - 1, fp) : 0;
    bool whole = buf && feof(fp) && !ferror(fp);
    fclose(fp);
    if (!whole) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static void init(void)
{
    static bool done;
    if (done) return;
    done = true;
    char *wide = wide_json();
    char *fx_token = read_fixture("token-stream.json");
    char *fx_moe = read_fixture("moe-router.json");
    const char *texts[PLAN_COUNT] = {fx_token ? fx_token : token_stream_json,
                                     fx_moe ? fx_moe : moe_json, kitchen_json, wide};
    for (int i = 0; i < PLAN_COUNT; i++) {
        wk_error err;
        wk_error_clear(&err);
        if (wk_colloq_plan_compile(texts[i], strlen(texts[i]), NULL, &plans[i], &err) != WK_OK) {
            char buf[256];
            fprintf(stderr, "plan %d: %s\n", i, wk_error_format(&err, buf, sizeof buf));
            abort();
        }
        CHECK(plans[i]->has_schedules);
        json_decoders[i][0] = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plans[i], WK_COLLOQ_WIRE_REFERENCE, NULL}, &err);
        json_decoders[i][1] = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plans[i], WK_COLLOQ_WIRE_COMPACT, NULL}, &err);
        CHECK(json_decoders[i][0] && json_decoders[i][1]);
    }
    free(wide);
    free(fx_token);
    free(fx_moe);
    CHECK(plans[3]->transition_count == 2 * WIDE_MESSAGES + 1);
    /* the two instruments work: the hook counts, poisoning poisons exactly the bytes asked */
    if (fuzz_alloc_install()) {
        wk_alloc_probe_begin(1);
        void *volatile probe = malloc(7);
        free(probe);
        CHECK(wk_alloc_probe_end() == 1);
    }
    if (__asan_poison_memory_region && __asan_address_is_poisoned) {
        uint8_t *probe = malloc(13);
        CHECK(probe);
        __asan_poison_memory_region(probe + 5, 8);
        CHECK(!__asan_address_is_poisoned(probe + 4) && __asan_address_is_poisoned(probe + 5));
        __asan_unpoison_memory_region(probe + 5, 8);
        CHECK(!__asan_address_is_poisoned(probe + 12));
        free(probe);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Reference decoder (spec "The three encodings of a frame", binary), independent of src/colloq
 * ------------------------------------------------------------------------------------------- */
enum { R_NEED, R_ERR, R_FRAME };
enum { V_OK, V_NEED, V_BAD };

/* Unsigned LEB128, at most 10 bytes, minimal, at most 2^64-1. */
NO_COVERAGE static int ref_varint(const uint8_t *p, size_t avail, uint64_t *v, size_t *len)
{
    uint64_t x = 0;
    for (size_t k = 0; k < 10; k++) {
        if (k == avail) return V_NEED;
        uint8_t b = p[k];
        if (k == 9 && b > 1) return V_BAD;
        x |= (uint64_t)(b & 0x7f) << (7 * k);
        if (!(b & 0x80)) {
            if (k > 0 && b == 0) return V_BAD;
            *v = x;
            *len = k + 1;
            return V_OK;
        }
    }
    return V_BAD; /* not reached */
}

/* Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF). */
NO_COVERAGE static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if (c >= 0xc2 && c <= 0xdf) {
            k = 1, cp = c & 0x1f, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            k = 2, cp = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            k = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i - 1 < k) return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += k + 1;
    }
    return true;
}

typedef struct ref_frame {
    uint32_t transition;
    uint64_t seq;
    uint64_t payload_len;
    size_t consumed;
    wk_code payload_error;
    wk_colloq_value fields[WK_COLLOQ_MAX_FIELDS];
    size_t str_off[WK_COLLOQ_MAX_FIELDS]; /* string/bytes: offset from the frame start */
} ref_frame;

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The payload p[0..n) under message m: V_OK with values, or V_BAD. */
NO_COVERAGE static int ref_payload(const wk_colloq_message *m, const uint8_t *p, size_t n,
                                   size_t base, ref_frame *r)
{
    size_t pos = m->bitmap_bytes;
    if (n < pos) return V_BAD;
    for (uint32_t b = m->optional_count; b < 8 * m->bitmap_bytes; b++)
        if (p[b / 8] >> (b % 8) & 1) return V_BAD;
    for (uint32_t i = 0; i < m->field_count; i++) {
        const wk_colloq_field *fd = &m->fields[i];
        wk_colloq_value *v = &r->fields[i];
        memset(v, 0, sizeof *v);
        if (fd->optional && !(p[fd->presence_bit / 8] >> (fd->presence_bit % 8) & 1)) continue;
        v->present = true;
        unsigned w = wk_colloq_type_width_get(fd->type);
        if (w) {
            if (n - pos < w) return V_BAD;
            uint64_t x = le(p + pos, w);
            pos += w;
            switch (fd->type) {
            case WK_COLLOQ_BOOL:
                if (x > 1) return V_BAD;
                v->as.b = x == 1;
                break;
            case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
                v->as.u = x;
                break;
            case WK_COLLOQ_I8: v->as.i = (int8_t)x; break;
            case WK_COLLOQ_I16: v->as.i = (int16_t)x; break;
            case WK_COLLOQ_I32: v->as.i = (int32_t)x; break;
            case WK_COLLOQ_I64: v->as.i = (int64_t)x; break;
            case WK_COLLOQ_F32: {
                uint32_t u32 = (uint32_t)x;
                float f;
                memcpy(&f, &u32, 4);
                if (!isfinite(f)) return V_BAD;
                v->as.f = f;
                break;
            }
            case WK_COLLOQ_F64: {
                double d;
                memcpy(&d, &x, 8);
                if (!isfinite(d)) return V_BAD;
                v->as.f = d;
                break;
            }
            default:
                CHECK(false);
            }
            continue;
        }
        uint64_t len;
        size_t k;
        if (ref_varint(p + pos, n - pos, &len, &k) != V_OK) return V_BAD;
        pos += k;
        if (len > n - pos) return V_BAD;
        if (fd->type == WK_COLLOQ_STRING && !utf8_valid(p + pos, (size_t)len)) return V_BAD;
        v->as.s.len = (size_t)len;
        r->str_off[i] = base + pos;
        pos += (size_t)len;
    }
    return pos == n ? V_OK : V_BAD;
}

/* One frame at p[0..avail). */
NO_COVERAGE static int ref_decode(const wk_colloq_plan *plan, const uint8_t *p, size_t avail,
                                  ref_frame *r)
{
    uint64_t t, seq, len;
    size_t k1, k2, k3;
    int s = ref_varint(p, avail, &t, &k1);
    if (s != V_OK) return s == V_NEED ? R_NEED : R_ERR;
    s = ref_varint(p + k1, avail - k1, &seq, &k2);
    if (s != V_OK) return s == V_NEED ? R_NEED : R_ERR;
    s = ref_varint(p + k1 + k2, avail - k1 - k2, &len, &k3);
    if (s != V_OK) return s == V_NEED ? R_NEED : R_ERR;
    size_t hdr = k1 + k2 + k3;
    r->seq = seq;
    r->payload_len = len;
    r->payload_error = WK_OK;
    r->consumed = hdr;
    if (t >= plan->transition_count) {
        r->transition = WK_COLLOQ_NO_TRANSITION;
        return R_FRAME;
    }
    r->transition = (uint32_t)t;
    const wk_colloq_message *m = wk_colloq_plan_transition_message_get(plan, (uint32_t)t);
    if (len > m->max_payload) {
        r->payload_error = WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE;
        return R_FRAME;
    }
    if (avail - hdr < len) return R_NEED;
    r->consumed = hdr + (size_t)len;
    if (ref_payload(m, p + hdr, (size_t)len, hdr, r) != V_OK)
        r->payload_error = WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
    return R_FRAME;
}

/* ---------------------------------------------------------------------------------------------
 * Reference checker (spec "Checking", colloq.h decisions 2, 3, 8)
 * ------------------------------------------------------------------------------------------- */
typedef struct ref_session {
    uint32_t state;
    uint64_t next_seq;
    bool finished;
} ref_session;

/* WK_OK (and *accepted = the transition taken) or the failure. */
static wk_code ref_check(const wk_colloq_plan *plan, const ref_session *s, uint32_t t,
                         uint64_t seq, wk_code payload_error, uint32_t sender, uint32_t *accepted)
{
    if (s->finished) return WK_ERR_COLLOQ_AFTER_FINAL;
    if (t == WK_COLLOQ_NO_TRANSITION) return WK_ERR_COLLOQ_UNKNOWN_TRANSITION;
    const wk_colloq_transition *tr = &plan->transitions[t];
    if (tr->from != s->state) return WK_ERR_COLLOQ_WRONG_STATE;
    /* a binary frame names its transition, and with it its sender */
    if (sender != WK_COLLOQ_SENDER_TRANSCRIPT && tr->sender != sender)
        return WK_ERR_COLLOQ_WRONG_SENDER;
    if (seq != s->next_seq) return WK_ERR_COLLOQ_BAD_SEQUENCE;
    if (payload_error != WK_OK) return payload_error;
    *accepted = t;
    return WK_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------------------------- */
typedef struct verdict {
    uint64_t accepted; /* frames accepted */
    uint32_t record;   /* CRC of (transition, seq, frame bytes) of the accepted frames */
    wk_code failure;   /* WK_OK for a clean end */
    uint64_t failure_seq;
} verdict;

static uint32_t record_frame(uint32_t h, uint32_t t, uint64_t seq, const uint8_t *p, size_t n)
{
    uint8_t hd[12];
    for (int i = 0; i < 4; i++) hd[i] = (uint8_t)(t >> (8 * i));
    for (int i = 0; i < 8; i++) hd[4 + i] = (uint8_t)(seq >> (8 * i));
    h = (uint32_t)crc32(h, hd, sizeof hd);
    return (uint32_t)crc32(h, n ? p : hd, (uInt)n);
}

/* The sender of frame k, whose bytes start at p[0..avail): transcript, or in live mode the role
 * of the transition the frame names (role 0 when it names none), switched to the next role for
 * frame 0, 1 or 3 in modes 5, 6, 7. */
static uint32_t sender_of(uint8_t mode, uint64_t k, const wk_colloq_plan *plan, const uint8_t *p,
                          size_t avail)
{
    static const uint64_t flip[4] = {UINT64_MAX, 0, 1, 3};
    static ref_frame rf;
    if (mode < 4) return WK_COLLOQ_SENDER_TRANSCRIPT;
    uint32_t role = 0;
    if (ref_decode(plan, p, avail, &rf) == R_FRAME && rf.transition != WK_COLLOQ_NO_TRANSITION)
        role = plan->transitions[rf.transition].sender;
    if (k == flip[mode - 4]) role = (role + 1) % plan->role_count;
    return role;
}

static void check_failure(const wk_colloq_session *s, wk_code code, const wk_error *err,
                          uint64_t accepted)
{
    CHECK(wk_colloq_code_is_failure(code));
    CHECK(wk_colloq_failure_name(code) != NULL);
    CHECK(err->code == code);
    CHECK(wk_code_category(code) == WK_CAT_PEER_PROTOCOL);
    CHECK(s->failure == code && s->failure_seq == accepted && s->next_seq == accepted);
}

static bool values_equal(const wk_colloq_field *fd, const wk_colloq_value *a,
                         const wk_colloq_value *b, const uint8_t *frame, size_t off)
{
    if (a->present != b->present) return false;
    if (!a->present) return true;
    switch (fd->type) {
    case WK_COLLOQ_BOOL: return a->as.b == b->as.b;
    case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
        return a->as.u == b->as.u;
    case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64:
        return a->as.i == b->as.i;
    case WK_COLLOQ_F32: case WK_COLLOQ_F64:
        return memcmp(&a->as.f, &b->as.f, sizeof(double)) == 0;
    case WK_COLLOQ_STRING: case WK_COLLOQ_BYTES:
        return a->as.s.len == b->as.s.len && a->as.s.ptr == frame + off;
    }
    return false;
}

/* Frames per input sent through the JSON envelopes (they cost most of an execution). */
#define JSON_CROSS_FRAMES 2

/* An accepted frame (bytes fb[0..n)) through both JSON envelopes: it encodes, the line decodes
 * with no error to the same seq and transition (the reference envelope names it by state,
 * message and sender), and the decoded values re-encode in binary to exactly the frame's bytes. */
static void cross_json(int pi, const wk_colloq_frame *f, const uint8_t *fb, size_t n)
{
    static char line[WK_COLLOQ_DEFAULT_MAX_PAYLOAD * 6 + 4096];
    static wk_colloq_frame g;
    static uint8_t enc[WK_COLLOQ_DEFAULT_MAX_PAYLOAD + 3 * WK_COLLOQ_VARINT_MAX_LEN];
    const wk_colloq_plan *plan = plans[pi];
    for (int k = 0; k < 2; k++) {
        wk_colloq_wire wire = k ? WK_COLLOQ_WIRE_COMPACT : WK_COLLOQ_WIRE_REFERENCE;
        wk_error err;
        wk_out out = {(uint8_t *)line, sizeof line, 0};
        CHECK(wk_colloq_frame_encode(plan, wire, f, &out, &err) == WK_DONE);
        CHECK(out.pos > 0 && out.pos <= WK_COLLOQ_JSON_LINE_MAX(plan) + 1);
        CHECK(line[out.pos - 1] == '\n' && memchr(line, '\n', out.pos - 1) == NULL);
        CHECK(wk_colloq_decoder_decode_line(json_decoders[pi][k], line, out.pos - 1, &g, &err) ==
              WK_OK);
        CHECK(g.payload_error == WK_OK && g.seq == f->seq && !g.sender_mismatch);
        CHECK(g.transition == f->transition);
        CHECK(wk_colloq_payload_size(plan, g.transition, &g) == f->payload_len);
        wk_out bo = {enc, sizeof enc, 0};
        CHECK(wk_colloq_binary_encode(plan, &g, &bo, &err) == WK_DONE);
        CHECK(bo.pos == n && memcmp(enc, fb, n) == 0);
    }
}

/* Pass A: the whole stream in one buffer, every frame against the references. */
static verdict pass_a(int pi, uint8_t mode, const uint8_t *w, size_t n)
{
    const wk_colloq_plan *plan = plans[pi];
    static wk_colloq_frame f;
    static ref_frame rf;
    static uint8_t enc[WK_COLLOQ_DEFAULT_MAX_PAYLOAD + 3 * WK_COLLOQ_VARINT_MAX_LEN];
    verdict v = {0, 0, WK_OK, 0};
    wk_colloq_session s;
    ref_session rs = {plan->initial, 0, plan->is_final[plan->initial]};
    wk_colloq_session_init(&s, plan);
    CHECK(s.state == plan->initial && s.next_seq == 0 && s.failure == WK_OK);
    size_t pos = 0;
    wk_error err;
    for (;;) {
        wk_in in = {w + pos, n - pos, 0};
        wk_error_clear(&err);
        fuzz_alloc_begin();
        wk_result r = wk_colloq_binary_decode(plan, &in, &f, &err);
        FUZZ_ALLOC_NONE();
        int rr = ref_decode(plan, w + pos, n - pos, &rf);
        if (r == WK_NEED_INPUT) {
            CHECK(rr == R_NEED);
            CHECK(in.pos == 0);
            wk_code c = (wk_colloq_session_finish(&s, &(wk_in){w, n, pos}, &err) == WK_DONE ? WK_OK : err.code);
            wk_code want = pos == n ? WK_OK
                           : rs.finished ? WK_ERR_COLLOQ_AFTER_FINAL
                                         : WK_ERR_COLLOQ_TRUNCATED;
            CHECK(c == want);
            if (c != WK_OK) {
                check_failure(&s, c, &err, v.accepted);
                CHECK(wk_code_is_truncation(c) == (c == WK_ERR_COLLOQ_TRUNCATED));
            }
            v.failure = c;
            v.failure_seq = s.next_seq;
            return v;
        }
        if (r == WK_ERROR) {
            CHECK(rr == R_ERR);
            CHECK(err.code == WK_ERR_COLLOQ_MALFORMED_PAYLOAD);
            CHECK(err.category == WK_CAT_PEER_PROTOCOL);
            CHECK(err.has_offset && err.offset <= n - pos);
            CHECK(in.pos == 0);
            wk_code c = wk_colloq_session_fail(&s, err.code, &err);
            CHECK(c == (rs.finished ? WK_ERR_COLLOQ_AFTER_FINAL : WK_ERR_COLLOQ_MALFORMED_PAYLOAD));
            check_failure(&s, c, &err, v.accepted);
            v.failure = c;
            v.failure_seq = s.next_seq;
            return v;
        }
        CHECK(r == WK_DONE);
        CHECK(rr == R_FRAME);
        /* the decoded frame against the reference */
        CHECK(in.pos == rf.consumed && in.pos > 0);
        CHECK(f.transition == rf.transition);
        CHECK(f.seq == rf.seq);
        CHECK(f.payload_error == rf.payload_error);
        if (f.transition != WK_COLLOQ_NO_TRANSITION) CHECK(f.payload_len == rf.payload_len);
        if (f.payload_error != WK_OK) CHECK(f.payload_error_offset <= n - pos);
        if (f.transition != WK_COLLOQ_NO_TRANSITION && f.payload_error == WK_OK) {
            const wk_colloq_message *m = wk_colloq_plan_transition_message_get(plan, f.transition);
            CHECK(f.field_count == m->field_count);
            for (uint32_t i = 0; i < m->field_count; i++) {
                CHECK(values_equal(&m->fields[i], &f.fields[i], &rf.fields[i], w + pos,
                                   rf.str_off[i]));
                if (m->fields[i].type == WK_COLLOQ_STRING && f.fields[i].present)
                    CHECK(utf8_valid(f.fields[i].as.s.ptr, f.fields[i].as.s.len));
            }
            /* canonical: re-encoding gives the input bytes; never half a frame */
            fuzz_alloc_begin();
            CHECK(wk_colloq_payload_size(plan, f.transition, &f) == f.payload_len);
            CHECK(in.pos <= sizeof enc);
            wk_out out = {enc, in.pos - 1, 0};
            CHECK(wk_colloq_binary_encode(plan, &f, &out, &err) == WK_NEED_OUTPUT);
            CHECK(out.pos == 0);
            out.size = in.pos;
            CHECK(wk_colloq_binary_encode(plan, &f, &out, &err) == WK_DONE);
            CHECK(out.pos == in.pos && memcmp(enc, w + pos, in.pos) == 0);
            FUZZ_ALLOC_NONE();
        }
        /* the checker against the reference */
        uint32_t sender = sender_of(mode, v.accepted, plan, w + pos, n - pos);
        uint32_t want_t = WK_COLLOQ_NO_TRANSITION;
        wk_code want =
            ref_check(plan, &rs, rf.transition, rf.seq, rf.payload_error, sender, &want_t);
        wk_error_clear(&err);
        fuzz_alloc_begin();
        wk_code c = wk_colloq_session_check(&s, &f, sender, &err);
        FUZZ_ALLOC_NONE();
        CHECK(c == want);
        if (c != WK_OK) {
            check_failure(&s, c, &err, v.accepted);
            wk_error e2;
            CHECK(wk_colloq_session_check(&s, &f, sender, &e2) == c && e2.code == c); /* sticky */
            CHECK(s.failure == c && s.failure_seq == v.accepted);
            v.failure = c;
            v.failure_seq = s.next_seq;
            return v;
        }
        CHECK(f.transition == want_t);
        rs.state = plan->transitions[want_t].to;
        rs.next_seq++;
        rs.finished = plan->is_final[rs.state];
        CHECK(s.state == rs.state && s.next_seq == rs.next_seq && s.finished == rs.finished);
        CHECK(s.failure == WK_OK);
        if (v.accepted < JSON_CROSS_FRAMES) cross_json(pi, &f, w + pos, in.pos);
        v.record = record_frame(v.record, f.transition, f.seq, w + pos, in.pos);
        v.accepted++;
        pos += in.pos;
    }
}

/* Pass B: a wk_colloq_reader through the contract harness (fuzz/fuzz_drive.h), in pushes of the
 * chosen size (each an exact-size heap copy: ASan catches a read past it) and whole (what
 * wk_colloq_session_step gives over the whole input), every call checked against the contract and
 * both runs the same outcome. The adapter sets each frame's sender (live modes) and records the
 * accepted frames as pass A does. */
typedef struct drive_ctx {
    uint8_t mode;
    const uint8_t *w;
    size_t n;
    verdict v;
    uint64_t at; /* input offset of the next frame */
} drive_ctx;

static uint32_t drive_sender(wk_contract_colloq *m, uint64_t at)
{
    drive_ctx *x = m->user;
    return sender_of(x->mode, m->frames, m->params.plan, x->w + at, x->n - (size_t)at);
}

static bool drive_frame(wk_contract *c, wk_contract_colloq *m)
{
    (void)c;
    drive_ctx *x = m->user;
    if (m->frames == 1) { /* the first frame of a run (the adapter counts it before calling) */
        x->v = (verdict){0, 0, WK_OK, 0};
        x->at = 0;
    }
    const wk_colloq_frame *f = wk_colloq_reader_frame_get(m->r);
    uint64_t end = wk_colloq_reader_consumed_get(m->r);
    CHECK(end > x->at && end <= x->n);
    x->v.record = record_frame(x->v.record, f->transition, f->seq, x->w + x->at, (size_t)(end - x->at));
    x->v.accepted++;
    x->at = end;
    return true;
}

static verdict pass_b(const wk_colloq_plan *plan, uint8_t mode, const uint8_t *w, size_t n,
                      size_t push)
{
    static wk_contract_colloq m;
    drive_ctx x = {mode, w, n, {0, 0, WK_OK, 0}, 0};
    wk_contract_colloq_setup(&m, plan, WK_COLLOQ_WIRE_BINARY, WK_COLLOQ_SENDER_TRANSCRIPT);
    m.sender_at = drive_sender;
    m.on_event = drive_frame;
    m.user = &x;
    /* fuzz_drive runs the cut pushes first, then the whole input: the record of the last run */
    wk_contract_outcome d = fuzz_drive(&wk_contract_colloq_ops, &m, NULL, w, n, push, 0);
    CHECK(d.events == x.v.accepted && m.end.next_seq == x.v.accepted);
    x.v.failure = d.verdict == WK_DONE ? WK_OK : d.error.code;
    CHECK(x.v.failure == m.end.failure);
    x.v.failure_seq = m.end.next_seq;
    return x.v;
}

static const size_t pushes[8] = {1, 2, 3, 5, 8, 17, 64, 0}; /* 0: one push */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size < 1) return 0;
    uint8_t h = data[0];
    const wk_colloq_plan *plan = plans[h & 3];
    size_t push = pushes[(h >> 2) & 7];
    uint8_t mode = (uint8_t)(h >> 5);
    const uint8_t *w = data + 1;
    size_t n = size - 1;

    verdict a = pass_a(h & 3, mode, w, n);
    verdict b = pass_b(plan, mode, w, n, push);
    CHECK(a.accepted == b.accepted && a.record == b.record && a.failure == b.failure &&
          a.failure_seq == b.failure_seq);
    CHECK(a.failure_seq == a.accepted);
#ifdef COLLOQ_FUZZ_VERBOSE /* replay builds: -DCOLLOQ_FUZZ_VERBOSE prints each verdict */
    fprintf(stderr, "plan %s: %llu accepted, %s\n", plan->name, (unsigned long long)a.accepted,
            a.failure ? wk_colloq_failure_name(a.failure) : "clean end");
#endif
    return 0;
}
