/* wirekit eth: Ethereum Snappy wire compression.
 *
 * Parts (specification: shared/seeds/002_*.txt, decisions: shared/specs/eth-snappy.md, whose
 * section numbers are cited below as "spec N.N"):
 *   - CRC-32C (ISA-L crc32_iscsi) and the Snappy checksum mask (spec 2.3)
 *   - Snappy block format: our one-pass validating decoder (portable and SIMD kernels chosen at
 *     run time), with the preamble read and bounded before any output exists; libsnappy encodes
 *     (spec 1)
 *   - Snappy framing format, ours: streaming decoder and encoder (spec 2)
 *   - the RLP subset for message ids and headers, canonical forms enforced (spec 3)
 *   - (a) devp2p RLPx frame-data: msg-id || snappy(msg-data), 24-bit frame-size (spec 4)
 *   - (b) consensus gossip ssz_snappy: block format with every size limit, message-id (spec 5)
 *   - (c) consensus req/resp ssz_snappy: varint prefix, framed payload, budget, response chunks
 *     with result codes and context bytes, read as a stream (spec 6)
 *
 * Error names are the spec's (section 0): SNAPPY_ERR_*, FRAME_ERR_*, SSZSNAPPY_ERR_*, RESP_ERR_*,
 * GOSSIP_ERR_*, RLPX_ERR_*, RLP_ERR_*. Offsets are byte offsets into the input the function was
 * given: for a view, from its first unread byte (in->src + in->pos); for streaming decoders,
 * counted from the first byte ever pushed.
 *
 * Whole-message calls take the message as the unread bytes of a view (docs/architecture.md, "The
 * contract"). The look calls (peek, validate, parse, check, the RLP readers, the message-id) take
 * `const wk_in *`, never move in->pos and return wk_code (WK_OK or the code, *err set); the
 * decoders (wk_eth_snappy_block_decode, _decode_alloc, wk_eth_rlpx_decode, wk_eth_gossip_decode)
 * take `wk_in *` and return wk_result: WK_DONE moves in->pos past the message (to in->size),
 * WK_ERROR leaves the view untouched. No view (NULL, pos past size, or bytes without src) is
 * WK_ERR_ARG without an offset.
 *
 * Decisions (spec [decision] points, and where spec and vectors disagree):
 *   - Snappy preamble: at most 5 bytes, value <= 2^32-1, non-minimal accepted (spec 1.1).
 *   - Framing limits: 0x00 body <= 76494, 0x01 body <= 65540, block preamble <= 65536; padding and
 *     skippable bodies <= 76494 by default, configurable (spec 2.4). The encoder emits nothing for
 *     empty input, and uses a 0x00 chunk only when it saves at least 1/8 (spec 2.6).
 *   - RLPx: decoder limit 16777216 by default (spec 4.4: "larger than 16 MiB" is rejected),
 *     configurable; encoder refuses msg-data above 16777215. handmade/cases.tsv row
 *     rlpx-err-too-large expects RLPX_ERR_TOO_LARGE for a declared 16777216, which only holds
 *     under geth's limit (16777215): the tests run that row with that limit.
 *   - Hello (msg-id 0) is never compressed, in either direction: the encoder writes it plain and
 *     the decoder reads it plain even when compression is on (spec 4.3).
 *   - Req/resp varint: minimal required by default (SSZSNAPPY_ERR_VARINT_NONMINIMAL), option to
 *     accept; excess decoded data is rejected (SSZSNAPPY_ERR_EXCESS_DATA); for n = 0 the payload
 *     is complete right after the prefix, so a stream identifier after it is trailing data
 *     (request) or the next result byte (response) (spec 6.3, 6.4).
 *   - Result codes 4..127 are reserved: the chunk is read as an error chunk and flagged
 *     (RESP_ERR_RESULT_RESERVED is informational, not a decode failure). 128..255 are
 *     method-specific errors.
 *   - A response reader given a chunk limit treats bytes after the last allowed chunk as
 *     SSZSNAPPY_ERR_TRAILING.
 *   - Gossip message-id: "valid snappy" means passing the size limits and decoding (spec 5.4).
 */
#ifndef WIREKIT_ETH_H
#define WIREKIT_ETH_H

#include <wirekit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * CRC-32C (Castagnoli) and the Snappy mask
 * ------------------------------------------------------------------------------------------- */

/* CRC-32C of data[0..n) (init and final XOR 0xFFFFFFFF; check value "123456789" -> 0xE3069283),
 * computed by ISA-L's crc32_iscsi (instruction-accelerated where the CPU has it). */
uint32_t wk_eth_crc32c(const void *data, size_t n);
/* Continues a CRC-32C: wk_eth_crc32c_update(wk_eth_crc32c(a), b) == CRC-32C of a||b. Start from 0 for
 * an empty prefix. */
uint32_t wk_eth_crc32c_update(uint32_t crc, const void *data, size_t n);
/* The same CRC by a portable slicing-by-8 table (ours): for comparison and benchmarks. */
uint32_t wk_eth_crc32c_table(const void *data, size_t n);
/* Snappy's masked form: rotr32(crc, 15) + 0xA282EAD8, and its inverse. */
uint32_t wk_eth_snappy_mask_crc(uint32_t crc);
uint32_t wk_eth_snappy_unmask_crc(uint32_t masked);

/* ---------------------------------------------------------------------------------------------
 * Snappy block format (spec 1)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_SNAPPY_PREAMBLE_MAX 5           /* bytes of the preamble varint */
#define WK_ETH_SNAPPY_BLOCK_MAX 0xFFFFFFFFu    /* largest declared length */

/* Worst-case compressed size of n input bytes (the spec's max_compressed_len): 32 + n + n / 6
 * (floor); the room wk_eth_snappy_block_encode asks for. */
uint64_t wk_eth_snappy_block_max_size(uint64_t n);

/* Reads the preamble of the block in->src[in->pos..in->size) without consuming it (in->pos does
 * not move): *declared = the declared uncompressed length, *preamble_len = its size in bytes
 * (either may be NULL). Errors: SNAPPY_ERR_TRUNCATED (input ends inside it, including empty
 * input), SNAPPY_ERR_PREAMBLE (more than 5 bytes, or value above 2^32-1), SNAPPY_ERR_TOO_LARGE
 * (declared > max_out; offset 0). Reads nothing past the preamble. */
wk_code wk_eth_snappy_block_peek(const wk_in *in, uint64_t max_out, uint64_t *declared,
                                 size_t *preamble_len, wk_error *err);

/* Our own sequential validating pass over the whole block in->src[in->pos..in->size) (not
 * consumed: in->pos does not move): every rule of spec 1.5 in order, with the failing element's
 * offset; writes no output. *declared (may be NULL) receives the declared length. The decoders below report exactly the same errors (they validate while they decode);
 * this pass stays as their independent reference (tests, fuzz targets) and for callers that
 * only need the verdict. */
wk_code wk_eth_snappy_block_validate(const wk_in *in, uint64_t max_out, uint64_t *declared,
                                     wk_error *err);

/* Decodes the whole block in->src[in->pos..in->size) (the caller's, not overlapping out) into
 * out->dst + out->pos (the caller's view) in one pass with our validating decoder, after the
 * preamble check against max_out. WK_DONE: in->pos = in->size, out->pos moved by the declared
 * length. WK_NEED_OUTPUT (nothing read or written; in and out untouched) when the view holds less
 * than the declared length (wk_eth_snappy_block_peek tells it first). WK_ERROR (in and out->pos
 * untouched): the error wk_eth_snappy_block_validate reports (same code, same offset, counted from
 * in->src + in->pos); the view's bytes up to the declared length are then unspecified. Reads nothing
 * outside the input and writes nothing outside out->dst[out->pos..out->pos+declared), on every
 * kernel. Allocates nothing. */
wk_result wk_eth_snappy_block_decode(wk_in *in, uint64_t max_out, wk_out *out, wk_error *err);

/* As wk_eth_snappy_block_decode, allocating exactly the declared length through `allocator` (NULL =
 * malloc) only after the preamble check. WK_DONE: in->pos = in->size, *out (caller frees with the
 * same allocator; a zero-length result is a non-NULL 1-byte allocation) and *out_len (may be
 * NULL) set. WK_ERROR (in, *out and *out_len untouched; nothing stays allocated): the errors of
 * wk_eth_snappy_block_decode, WK_ERR_NOMEM, WK_ERR_ARG (no view, out NULL). */
wk_result wk_eth_snappy_block_decode_alloc(wk_in *in, uint64_t max_out,
                                           const wk_allocator *allocator, uint8_t **out,
                                           size_t *out_len, wk_error *err);

/* Compresses src[0..n) (the caller's) as one block with libsnappy at out->dst + out->pos (the
 * caller's view). WK_DONE: out->pos moved past the block. WK_NEED_OUTPUT (the view and its bytes
 * untouched) when the room is below wk_eth_snappy_block_max_size(n): libsnappy writes only into
 * its worst case of room. WK_ERROR: WK_ERR_ARG (n above 2^32-1, or no view) whatever the room,
 * WK_ERR_BACKEND. Allocates nothing itself; libsnappy allocates its working memory through C++
 * operator new (the documented exception to the allocator rule). */
wk_result wk_eth_snappy_block_encode(const uint8_t *src, size_t n, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Snappy framing format (spec 2)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_SNAPPY_FRAME_STREAM_ID "\xff\x06\x00\x00sNaPpY" /* the 10-byte identifier chunk */
#define WK_ETH_SNAPPY_FRAME_STREAM_ID_LEN 10
#define WK_ETH_SNAPPY_FRAME_MAX_DATA 65536          /* uncompressed bytes per data chunk */
#define WK_ETH_SNAPPY_FRAME_MAX_COMPRESSED_BODY 76494 /* 0x00 body, ours (Go's) */
#define WK_ETH_SNAPPY_FRAME_MAX_UNCOMPRESSED_BODY 65540
#define WK_ETH_SNAPPY_FRAME_DEFAULT_MAX_SKIPPABLE 76494 /* 0xfe, 0x80..0xfd bodies, configurable */

typedef struct wk_eth_snappy_frame_decoder wk_eth_snappy_frame_decoder;

/* What a framing decoder or encoder is made with (NULL params = all defaults). */
typedef struct wk_eth_snappy_frame_params {
    const wk_allocator *allocator; /* NULL = malloc/free; used for the object itself, at create
                                      only; must outlive the object */
} wk_eth_snappy_frame_params;

/* A streaming decoder for one framed stream. Memory: one chunk body and one chunk of output
 * (about 142 KiB) in one allocation at create through params->allocator, never more (no
 * allocation in a step or a reset). Returns the decoder (owned by the caller: release it with
 * wk_eth_snappy_frame_decoder_destroy), or NULL with *err set (WK_ERR_NOMEM). */
wk_eth_snappy_frame_decoder *
wk_eth_snappy_frame_decoder_create(const wk_eth_snappy_frame_params *params, wk_error *err);
/* Frees the decoder through the allocator it was created with (NULL: nothing). */
void wk_eth_snappy_frame_decoder_destroy(wk_eth_snappy_frame_decoder *d);
/* Back to the state of a fresh decoder (limits set by the setters below are kept). */
void wk_eth_snappy_frame_decoder_reset(wk_eth_snappy_frame_decoder *d);
/* Largest accepted body of a padding or reserved skippable chunk (default 76494, at most
 * 16777215). */
void wk_eth_snappy_frame_decoder_set_max_skippable(wk_eth_snappy_frame_decoder *d, uint32_t max_body);
/* Bounds the total decoded output to `limit` bytes (UINT64_MAX = no bound, the default): a data
 * chunk that would take the total above it fails with SSZSNAPPY_ERR_EXCESS_DATA; once the total
 * equals the limit at a chunk boundary the decoder is complete: wk_eth_snappy_frame_decode returns
 * WK_DONE and consumes nothing more (with limit 0, before reading anything). Used by req/resp. */
void wk_eth_snappy_frame_decoder_set_output_limit(wk_eth_snappy_frame_decoder *d, uint64_t limit);

/* The step. Consumes in->src[in->pos..in->size) (the caller's, only read during the call) and
 * writes decoded bytes to out->dst[out->pos..out->size) (the caller's), advancing both. Returns
 * WK_NEED_INPUT (all input consumed, nothing pending), WK_NEED_OUTPUT (out is full and decoded
 * bytes are pending), WK_DONE (output limit reached, see above; nothing more is consumed) or
 * WK_ERROR (sticky: every later call and _finish report it again unchanged, until reset). A
 * chunk's bytes are emitted only after its checksum has been verified (out->pos moves only then; a
 * chunk may be decoded in place first, so on WK_ERROR the bytes of out->dst past out->pos may have
 * been overwritten). Errors: FRAME_ERR_*, SNAPPY_ERR_* from a compressed chunk's block,
 * SSZSNAPPY_ERR_EXCESS_DATA. Offsets count from the first byte pushed: FRAME_ERR_* and EXCESS_DATA
 * point at the chunk header, SNAPPY_ERR_* at the failing element. Allocates nothing. */
wk_result wk_eth_snappy_frame_decode(wk_eth_snappy_frame_decoder *d, wk_in *in, wk_out *out,
                                     wk_error *err);
/* Declares end of input; `rest` (NULL or empty for none; never consumed) holds the bytes the
 * caller has not pushed. WK_DONE when the stream may end here: at a chunk boundary with no output
 * pending (an empty input and an identifier-only stream are valid empty streams) and rest empty,
 * or with the output limit reached (rest is then the caller's: it follows the stream). Otherwise
 * WK_ERROR: WK_ERR_STATE (not sticky) when decoded bytes are still pending (call
 * wk_eth_snappy_frame_decode with room first) or rest holds bytes of the stream (push them
 * first), else FRAME_ERR_TRUNCATED (sticky; offset = total bytes pushed), or the sticky error.
 * Calling it again gives the same answer. */
wk_result wk_eth_snappy_frame_decoder_finish(wk_eth_snappy_frame_decoder *d, const wk_in *rest,
                                             wk_error *err);
/* Bytes consumed from all pushes / decoded bytes written so far. */
uint64_t wk_eth_snappy_frame_decoder_consumed(const wk_eth_snappy_frame_decoder *d);
uint64_t wk_eth_snappy_frame_decoder_produced(const wk_eth_snappy_frame_decoder *d);

typedef struct wk_eth_snappy_frame_encoder wk_eth_snappy_frame_encoder;

/* A streaming encoder: collects input into 65536-byte pieces, writes each as one chunk (0x00 when
 * compressing saves at least 1/8 of the piece, else 0x01; pieces under 17 bytes are always 0x01,
 * as Go's and Rust's block encoders write them as one literal), the stream identifier before the
 * first chunk only (an empty stream is zero bytes). Memory: one piece and one compressed chunk
 * (about 140 KiB) in one allocation at create through params->allocator; libsnappy's compressor
 * allocates its own working memory through C++ operator new (the documented exception: libsnappy
 * offers no allocator hook). Returns the encoder (owned by the caller: release it with
 * wk_eth_snappy_frame_encoder_destroy), or NULL with *err set (WK_ERR_NOMEM). */
wk_eth_snappy_frame_encoder *
wk_eth_snappy_frame_encoder_create(const wk_eth_snappy_frame_params *params, wk_error *err);
/* Frees the encoder through the allocator it was created with (NULL: nothing). */
void wk_eth_snappy_frame_encoder_destroy(wk_eth_snappy_frame_encoder *e);
void wk_eth_snappy_frame_encoder_reset(wk_eth_snappy_frame_encoder *e);
/* The step: consumes in->src[in->pos..in->size) (NULL = no input) and writes chunks to
 * out->dst[out->pos..out->size), advancing both. Returns WK_NEED_INPUT once all input is taken
 * and every complete 65536-byte piece is written (a partial piece stays buffered),
 * WK_NEED_OUTPUT when out is full, WK_ERROR (WK_ERR_BACKEND from libsnappy; sticky until reset).
 * Writes nothing past out->pos (pieces are compressed in the encoder's own buffer). */
wk_result wk_eth_snappy_frame_encode(wk_eth_snappy_frame_encoder *e, wk_in *in, wk_out *out,
                                     wk_error *err);
/* As wk_eth_snappy_frame_encode, then the buffered partial piece is written as a chunk too:
 * WK_DONE once the input is consumed and every byte is out (else WK_NEED_OUTPUT / WK_ERROR). A
 * later call continues the same stream (no second identifier). */
wk_result wk_eth_snappy_frame_encoder_flush(wk_eth_snappy_frame_encoder *e, wk_in *in, wk_out *out,
                                            wk_error *err);
/* Declares the end of the plaintext, with `rest` (NULL or empty for none; never consumed) the
 * bytes the caller has not pushed. WK_DONE when everything pushed has been written (after a
 * flush that returned WK_DONE, or when nothing was pushed) and rest is empty; else WK_ERROR:
 * WK_ERR_STATE (not sticky: flush until WK_DONE first), or the sticky error. Writes nothing. */
wk_result wk_eth_snappy_frame_encoder_finish(wk_eth_snappy_frame_encoder *e, const wk_in *rest,
                                             wk_error *err);
/* Largest framed encoding of n bytes: 0 for n == 0, else 10 + n + 8 per 65536-byte piece (the room
 * wk_eth_snappy_frame_encode_all asks for). */
uint64_t wk_eth_snappy_frame_max_size(uint64_t n);
/* One-shot framing of src[0..n) (the caller's) at out->dst + out->pos: the same bytes the
 * streaming encoder writes. WK_DONE: out->pos moved past the stream. WK_NEED_OUTPUT (view
 * untouched) when the room is below wk_eth_snappy_frame_max_size(n); WK_ERROR: WK_ERR_ARG (NULL
 * input with n > 0, no view), WK_ERR_BACKEND. Allocates nothing: each piece is compressed
 * through a 75 KiB stack buffer (libsnappy's worst case), so nothing past out->pos is written. */
wk_result wk_eth_snappy_frame_encode_all(const uint8_t *src, size_t n, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * RLP subset (spec 3)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_RLP_UINT_MAX_LEN 9   /* encoded uint64: prefix + 8 bytes */
#define WK_ETH_RLP_HEADER_MAX_LEN 9 /* prefix + 8 length bytes */
#define WK_ETH_RLP_MAX_DEPTH 256    /* deepest nesting wk_eth_rlp_check tracks (fixed stack) */

/* One item's header: a string or list whose payload is p[header_len .. header_len+payload_len). */
typedef struct wk_eth_rlp_item {
    bool is_list;
    size_t header_len;
    size_t payload_len;
} wk_eth_rlp_item;

/* Reads the header of the item at the unread bytes of *in (p = in->src + in->pos, n = the bytes
 * left; in->pos does not move) with the canonical size rules: RLP_ERR_TRUNCATED (the header or its
 * payload extends past n), RLP_ERR_NONCANON_SIZE (81 00..81 7f, long form for L < 56, length field
 * with a leading zero). A single byte < 0x80 is a string of itself: header_len 0, payload_len 1.
 * Offsets relative to p. */
wk_code wk_eth_rlp_read_header(const wk_in *in, wk_eth_rlp_item *item, wk_error *err);
/* Reads a canonical unsigned integer at the unread bytes of *in (in->pos does not move): *value,
 * *used = its encoded length (either may be NULL). RLP_ERR_EXPECTED_STRING (a list),
 * RLP_ERR_NONCANON_INT (leading zero byte, or 00 for zero), RLP_ERR_UINT_OVERFLOW (more than 8
 * bytes), and the header errors. Trailing bytes are allowed. */
wk_code wk_eth_rlp_read_uint(const wk_in *in, uint64_t *value, size_t *used, wk_error *err);
/* Checks that the unread bytes of *in (not consumed) are exactly one complete canonical item, lists recursively (nesting at most
 * max_depth levels, a top-level list being level 1; deeper is RLP_ERR_DEPTH; max_depth above
 * WK_ETH_RLP_MAX_DEPTH counts as WK_ETH_RLP_MAX_DEPTH), items filling each list exactly (an item crossing
 * its list's end is RLP_ERR_ELEM_TOO_LARGE); bytes after the item are RLP_ERR_TRAILING. Iterative:
 * no recursion on the C stack. */
wk_code wk_eth_rlp_check(const wk_in *in, unsigned max_depth, wk_error *err);
/* Writes the canonical encoding of v (0 -> 80) to out; returns its length (1..9). */
size_t wk_eth_rlp_put_uint(uint64_t v, uint8_t out[WK_ETH_RLP_UINT_MAX_LEN]);
/* Writes a string (list = false) or list header for a payload of len bytes; returns its length
 * (1..9). A one-byte string below 0x80 has no header: that case is the caller's to handle. */
size_t wk_eth_rlp_put_header(bool list, uint64_t len, uint8_t out[WK_ETH_RLP_HEADER_MAX_LEN]);

/* ---------------------------------------------------------------------------------------------
 * (a) devp2p RLPx message compression (spec 4)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_RLPX_FRAME_SIZE_MAX 0xFFFFFFu         /* 24-bit frame-size */
#define WK_ETH_RLPX_DEFAULT_MAX_DATA 16777216u       /* decoder: uncompressed msg-data limit */
#define WK_ETH_RLPX_MAX_SEND_DATA 0xFFFFFFu          /* encoder: largest msg-data sent */
#define WK_ETH_RLPX_SNAPPY_P2P_VERSION 5
#define WK_ETH_RLPX_MSG_HELLO 0

/* True when both sides' p2p versions are at least 5: every message after Hello is compressed. */
bool wk_eth_rlpx_snappy_active(uint64_t our_version, uint64_t their_version);

/* What frame-data holds: msg-data is fd[data_offset..data_offset+wire_len) on the wire and
 * data_len bytes once decoded (the snappy preamble when compressed). */
typedef struct wk_eth_rlpx_message {
    uint64_t msg_id;
    size_t data_offset; /* = encoded msg-id length */
    size_t wire_len;
    size_t data_len;
    bool compressed;
} wk_eth_rlpx_message;

/* Parses the frame-data in->src[in->pos..in->size) without decoding and without consuming it
 * (in->pos does not move; offsets from its first byte): RLPX_ERR_EMPTY, RLPX_ERR_MSGID, and when
 * `compressed` (and msg-id is not Hello) the snappy preamble: SNAPPY_ERR_TRUNCATED /
 * SNAPPY_ERR_PREAMBLE, or RLPX_ERR_TOO_LARGE when the declared length exceeds max_data (0 =
 * WK_ETH_RLPX_DEFAULT_MAX_DATA); uncompressed msg-data above max_data is RLPX_ERR_TOO_LARGE too. */
wk_code wk_eth_rlpx_parse(const wk_in *in, bool compressed, uint64_t max_data,
                          wk_eth_rlpx_message *msg, wk_error *err);
/* Writes msg-data (msg->data_len bytes) of the frame-data in->src[in->pos..in->size) (the
 * caller's; parsed into *msg by wk_eth_rlpx_parse) at out->dst + out->pos (the caller's view).
 * WK_DONE: in->pos = in->size, out->pos moved by msg->data_len. WK_NEED_OUTPUT (in and out
 * untouched) when the view holds less than msg->data_len. WK_ERROR (in and out->pos untouched):
 * snappy errors as wk_eth_snappy_block_decode, offsets from the frame-data's first byte; WK_ERR_ARG
 * when *msg does not describe this frame-data. Allocates nothing. */
wk_result wk_eth_rlpx_decode(const wk_eth_rlpx_message *msg, wk_in *in, wk_out *out, wk_error *err);
/* Most bytes wk_eth_rlpx_encode may write for msg-data of n bytes (3 + 9 + max_compressed_len(n)).
 * It asks for exactly 3 + id + n bytes of room for a plain message, and 3 + id +
 * wk_eth_snappy_block_max_size(n) for a compressed one. */
uint64_t wk_eth_rlpx_max_size(uint64_t n);
/* Writes frame-size (3 bytes, big-endian) || frame-data for message msg_id with msg-data
 * data[0..n) (the caller's) at out->dst + out->pos; `compress` selects snappy (ignored for Hello,
 * always plain). WK_DONE: out->pos moved by 3 + frame-size. WK_NEED_OUTPUT (view untouched) when
 * the room is short (see wk_eth_rlpx_max_size). WK_ERROR, whatever the room: RLPX_ERR_TOO_LARGE
 * (n > 16777215), RLPX_ERR_FRAME_SIZE (frame-data > 16777215; for a compressed message known only
 * once compressed), WK_ERR_ARG, WK_ERR_BACKEND. The category is the code's own (the CLI reports
 * these refusals with its usage exit status). */
wk_result wk_eth_rlpx_encode(uint64_t msg_id, const uint8_t *data, size_t n, bool compress,
                             wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Consensus constants and the SSZ length bounds (spec 5.1, 6.3)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_SSZ_MAX_PAYLOAD_SIZE 10485760u      /* MAX_PAYLOAD_SIZE */
#define WK_ETH_GOSSIP_MAX_COMPRESSED 12233418u     /* max_compressed_len(MAX_PAYLOAD_SIZE) */
#define WK_ETH_GOSSIP_MAX_MESSAGE_SIZE 12234442u   /* max_message_size() */
#define WK_ETH_SSZ_ERRMSG_MAX 256                  /* ErrorMessage = List[byte, 256] */
#define WK_ETH_RR_CONTEXT_LEN 4                    /* ForkDigest context bytes */
#define WK_ETH_GOSSIP_MESSAGE_ID_LEN 20

/* The SSZ size bounds of the expected type: [min_len, max_len]. max_len 0 means "no type bound"
 * (MAX_PAYLOAD_SIZE); the effective maximum is always at most MAX_PAYLOAD_SIZE. */
typedef struct wk_eth_ssz_bounds {
    uint64_t min_len;
    uint64_t max_len;
} wk_eth_ssz_bounds;

/* ---------------------------------------------------------------------------------------------
 * (b) Gossip ssz_snappy (spec 5)
 * ------------------------------------------------------------------------------------------- */

/* Checks Message.data = the unread bytes of *in (n of them; in->pos does not move) before
 * decoding: GOSSIP_ERR_COMPRESSED_TOO_LARGE (n above 12233418), the preamble (SNAPPY_ERR_TRUNCATED / _PREAMBLE), SNAPPY_ERR_TOO_LARGE (declared above
 * MAX_PAYLOAD_SIZE) and SSZSNAPPY_ERR_LENGTH_BOUNDS (outside `bounds`; NULL = no type bound).
 * *declared = the SSZ length. Decodes nothing. */
wk_code wk_eth_gossip_peek(const wk_in *in, const wk_eth_ssz_bounds *bounds, uint64_t *declared,
                           wk_error *err);
/* wk_eth_gossip_peek of Message.data in->src[in->pos..in->size), then wk_eth_snappy_block_decode
 * of it into the view `out` with the declared length as the limit: WK_DONE (in consumed, out->pos
 * moved by the SSZ length), WK_NEED_OUTPUT (in and out untouched) or WK_ERROR (the peek's or the
 * block's error; in untouched). */
wk_result wk_eth_gossip_decode(wk_in *in, const wk_eth_ssz_bounds *bounds, wk_out *out,
                               wk_error *err);
/* Compresses SSZ bytes ssz[0..n) (the caller's) for publishing at out->dst + out->pos, after the
 * sender checks, made whatever the room: n within bounds and MAX_PAYLOAD_SIZE, else WK_ERROR with
 * SSZSNAPPY_ERR_LENGTH_BOUNDS / SNAPPY_ERR_TOO_LARGE. WK_NEED_OUTPUT (view untouched) when the
 * room is below wk_eth_snappy_block_max_size(n); WK_DONE: out->pos moved past the block. */
wk_result wk_eth_gossip_encode(const uint8_t *ssz, size_t n, const wk_eth_ssz_bounds *bounds,
                               wk_out *out, wk_error *err);
/* The gossipsub message-id of Message.data = the unread bytes of *in (a look: in->pos does not
 * move) (spec 5.4): SHA-256 (OpenSSL) of domain || [uint64_le(topic_len) || topic, when topic !=
 * NULL (Altair and later)] || payload, first 20 bytes; payload and domain are the decompressed
 * bytes and 01000000 when data passes wk_eth_gossip_decode with `bounds`, else data itself and
 * 00000000. *valid (may be NULL) says which. WK_ERR_ARG: no view. Allocates the decompressed bytes through `allocator` (NULL = malloc): WK_ERR_NOMEM on failure;
 * every other failure of the data just selects the invalid domain. OpenSSL's digest context is
 * allocated by OpenSSL itself (EVP_MD_CTX_new), outside the allocator: the second documented
 * exception beside libsnappy's compressor. */
wk_code wk_eth_gossip_message_id(const wk_in *in, const char *topic, size_t topic_len,
                                 const wk_eth_ssz_bounds *bounds, const wk_allocator *allocator,
                                 uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN], bool *valid,
                                 wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * (c) Req/resp ssz_snappy (spec 6)
 * ------------------------------------------------------------------------------------------- */
#define WK_ETH_UVARINT_MAX_LEN 10 /* the length prefix: write it with wk_leb128_put (common.h) */

/* Result codes (spec 6.2). */
#define WK_ETH_RR_SUCCESS 0
#define WK_ETH_RR_INVALID_REQUEST 1
#define WK_ETH_RR_SERVER_ERROR 2
#define WK_ETH_RR_RESOURCE_UNAVAILABLE 3

typedef struct wk_eth_rr_reader_params {
    bool request;          /* read one request payload then EOF (else: response chunks to EOF) */
    bool empty_request;    /* (request) the method has no request content: zero bytes expected */
    bool context_bytes;    /* (response) success chunks carry 4 context bytes */
    bool allow_nonminimal; /* accept non-minimal length prefixes */
    wk_eth_ssz_bounds bounds;  /* payload bounds of requests / success chunks ({0,0} = none) */
    uint64_t max_chunks;   /* (response) chunks allowed, 0 = unlimited */
    const wk_allocator *allocator; /* NULL = malloc/free; used at create only, not kept */
} wk_eth_rr_reader_params;

/* What the reader knows about the current chunk (or the request payload). */
typedef struct wk_eth_rr_chunk {
    uint64_t index;        /* 0-based chunk number */
    uint8_t result;        /* result byte (0 for a request) */
    bool reserved_result;  /* result in 4..127: read as an error chunk, flagged */
    bool has_context;
    uint8_t context[WK_ETH_RR_CONTEXT_LEN];
    bool length_known;     /* the length prefix has been read */
    uint64_t length;       /* declared SSZ length n */
    uint64_t produced;     /* payload bytes written so far */
    uint64_t start_offset; /* stream offset of the chunk's first byte */
} wk_eth_rr_chunk;

/* Which event wk_eth_rr_reader_read reported with WK_EVENT: wk_eth_rr_reader_event(r) until the
 * next call (WK_ETH_RR_EVENT_NONE after any other answer). */
typedef enum wk_eth_rr_event {
    WK_ETH_RR_EVENT_NONE = 0,
    WK_ETH_RR_CHUNK_BEGIN = 3, /* result byte and context bytes read, length prefix not yet: the
                                  caller may now set this chunk's bounds (wk_eth_rr_reader_set_bounds) */
    WK_ETH_RR_CHUNK_END = 4,   /* the chunk's payload is complete (chunk info still readable) */
    WK_ETH_RR_END = 5          /* request: payload complete and nothing may follow */
} wk_eth_rr_event;
/* Event order: a request gives CHUNK_BEGIN (before the prefix) then END (in place of CHUNK_END);
 * an empty_request gives END at once; a response gives CHUNK_BEGIN, CHUNK_END per chunk. Each
 * event is reported once, before anything further is consumed. CHUNK_BEGIN of a request and the
 * END of an empty request cover no input byte (the harness's max_empty_events is 1). */

typedef struct wk_eth_rr_reader wk_eth_rr_reader;

/* A streaming reader for one request or one response stream with the given params (copied; NULL =
 * a response stream with every default). Memory: the reader and one framing decoder (about 142
 * KiB), allocated at create through params->allocator, never in a step. Returns the reader (owned
 * by the caller: release it with wk_eth_rr_reader_destroy), or NULL with *err set
 * (WK_ERR_NOMEM). */
wk_eth_rr_reader *wk_eth_rr_reader_create(const wk_eth_rr_reader_params *params, wk_error *err);
/* Frees the reader and its decoder through the allocator it was created with (NULL: nothing). */
void wk_eth_rr_reader_destroy(wk_eth_rr_reader *r);
/* The step. Consumes in->src[in->pos..in->size) (the caller's, only read during the call; NULL =
 * no input) and writes payload bytes to out->dst[out->pos..out->size) (the caller's; NULL = no
 * room), advancing both. Returns WK_EVENT at every event (wk_eth_rr_reader_event says which, the
 * chunk's details are in wk_eth_rr_reader_chunk), WK_NEED_INPUT with the input consumed,
 * WK_NEED_OUTPUT with out full and payload bytes pending, or WK_ERROR. Payload bytes of a chunk are
 * written only between its CHUNK_BEGIN and CHUNK_END (as in the framing decoder, on WK_ERROR the
 * bytes of out->dst past out->pos may have been overwritten). Errors: the SSZSNAPPY_ERR_*,
 * RESP_ERR_ERRMSG_TOO_LONG, FRAME_ERR_*, SNAPPY_ERR_* names, offsets from the first byte pushed;
 * sticky (every later call and _finish report it again unchanged). Allocates nothing. */
wk_result wk_eth_rr_reader_read(wk_eth_rr_reader *r, wk_in *in, wk_out *out, wk_error *err);
/* The event of the last WK_EVENT (WK_ETH_RR_EVENT_NONE after any other answer). */
wk_eth_rr_event wk_eth_rr_reader_event(const wk_eth_rr_reader *r);
/* Sets the bounds of the chunk just begun (success chunk or request); valid right after
 * WK_ETH_RR_CHUNK_BEGIN. Error chunks always use [0, 256]. */
void wk_eth_rr_reader_set_bounds(wk_eth_rr_reader *r, const wk_eth_ssz_bounds *bounds);
/* The current (or last) chunk. */
const wk_eth_rr_chunk *wk_eth_rr_reader_chunk(const wk_eth_rr_reader *r);
/* Declares end of input; `rest` (NULL or empty for none; never consumed) holds the bytes the
 * caller has not pushed. WK_DONE when the stream may end here: a response between chunks, a
 * complete request, or an empty request of a method without content (options.empty_request), with
 * rest empty. Otherwise WK_ERROR: SSZSNAPPY_ERR_EARLY_EOF (offset = bytes pushed), or
 * SSZSNAPPY_ERR_TRAILING (offset = bytes pushed) when the stream is closed (a request read whole,
 * the last allowed chunk, an error chunk) and rest holds bytes, or the sticky error (all sticky);
 * WK_ERR_STATE (not sticky) while decoded payload bytes wait for output room or rest holds bytes
 * the reader has not seen (read them, then finish). Calling it again gives the same answer. */
wk_result wk_eth_rr_reader_finish(wk_eth_rr_reader *r, const wk_in *rest, wk_error *err);
/* Bytes consumed so far. */
uint64_t wk_eth_rr_reader_consumed(const wk_eth_rr_reader *r);

/* Largest encoding of one chunk with an n-byte payload: 1 + 4 + 10 + frame bound (the room
 * wk_eth_rr_encode asks for). */
uint64_t wk_eth_rr_chunk_max_size(uint64_t n);
/* Writes one request payload (result < 0) or one response chunk: [result byte] [context bytes
 * when result == 0 and context != NULL] varint(n) framed(ssz[0..n)) at out->dst + out->pos (the
 * caller's buffers). WK_DONE: out->pos moved past the chunk. WK_NEED_OUTPUT (view untouched) when
 * the room is below wk_eth_rr_chunk_max_size(n). WK_ERROR, whatever the room: WK_ERR_ARG (result
 * above 255, NULL payload, no view), SSZSNAPPY_ERR_LENGTH_BOUNDS (n above MAX_PAYLOAD_SIZE),
 * RESP_ERR_ERRMSG_TOO_LONG (above 256 for an error chunk), WK_ERR_BACKEND. */
wk_result wk_eth_rr_encode(int result, const uint8_t *context, const uint8_t *ssz, size_t n,
                           wk_out *out, wk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* WIREKIT_ETH_H */
