/* wirekit ILTP: Lace-065 stream encoding, offers and prefaces.
 *
 * Stream encoding (Lace-065) sits between the item stream and the carrier: one encoder per
 * outgoing direction, one decoder per incoming direction, each for one logical session. Tokens:
 *   identity    bytes pass through; no flush marker, no end mark
 *   deflate12c  raw RFC 1951 (zlib, windowBits -12), dictionary as preset history; each batch ends
 *               with a sync flush (00 00 ff ff); end mark: empty BFINAL fixed block 03 00
 *   zstd20c     one magicless RFC 8878 frame (libzstd), header descriptor 00, window 2^20
 *               (header 00 50), raw-content dictionary; each batch ends with a block flush; end
 *               mark: empty last raw block 01 00 00
 * Both compressed tokens prime every fresh encoder and decoder with the 830-byte dictionary.
 *
 * Decisions where the seed is silent (docs/iltp.md records them too):
 * - Default levels: deflate12c 6, zstd20c 3. zstd20c match-finder parameters are the level's
 *   parameters for an unknown (large) source size with the window set to 2^20 and hash/chain
 *   tables capped to that window, set explicitly: libzstd would otherwise size them for a ~1.3 KB
 *   input because a dictionary is present and the size is unknown.
 * - zstd20c cannot tell an unresolvable back-reference from other corrupt block data (libzstd
 *   reports both as corruption): both are ILTP_ERR_ZSTD_MALFORMED. deflate12c reports the
 *   unresolvable reference separately (ILTP_ERR_DEFLATE_REFERENCE).
 * - An end mark is any final block (BFINAL / Last_Block), even one carrying data; a sender writes
 *   the empty forms. After it the decoder consumes nothing; the next bytes must begin a raw
 *   preface (F0 9F AA A2 3A 20, the preface glyph and ": ") or the direction ends.
 * - Error offsets are byte offsets in the encoded stream counted from the first byte after the
 *   raw preface (the first byte given to a fresh decoder).
 */
#ifndef WIREKIT_ILTP_H
#define WIREKIT_ILTP_H

#include <wirekit/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Tokens
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_iltp_encoding {
    WK_ILTP_UNKNOWN = -1, /* a well-formed token this build does not implement */
    WK_ILTP_IDENTITY = 0,
    WK_ILTP_DEFLATE12C = 1,
    WK_ILTP_ZSTD20C = 2
} wk_iltp_encoding;

#define WK_ILTP_TOKEN_MAX 32 /* a token is [a-z][a-z0-9]{0,31} */

/* Token text of an implemented encoding ("identity", "deflate12c", "zstd20c"); NULL otherwise. */
const char *wk_iltp_encoding_token(wk_iltp_encoding enc);
/* The encoding a token names; WK_ILTP_UNKNOWN for any other text. */
wk_iltp_encoding wk_iltp_encoding_from_token(const char *tok, size_t len);

/* ---------------------------------------------------------------------------------------------
 * The dictionary (830 bytes, built from the seed's fragments)
 * ------------------------------------------------------------------------------------------- */
#define WK_ILTP_DICTIONARY_LEN 830
/* The dictionary bytes (static storage, WK_ILTP_DICTIONARY_LEN bytes). */
const uint8_t *wk_iltp_dictionary(void);

/* ---------------------------------------------------------------------------------------------
 * Offers: a Decode or Encode token list. The struct borrows the list text from the caller
 * (typically the preface bytes), which must outlive it. len == 0 means the field was absent:
 * the list holds identity alone.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_offer {
    const char *text;
    size_t len;
    unsigned count; /* number of tokens */
} wk_iltp_offer;

/* Validates a comma-separated token list (no spaces; at least one token; each token
 * [a-z][a-z0-9]{0,31}; no duplicate; not `identity`) and borrows it into *out. Errors:
 * ILTP_ERR_TOKEN or ILTP_ERR_OFFER with the offset inside text. */
wk_code wk_iltp_offer_parse(const char *text, size_t len, wk_iltp_offer *out, wk_error *err);
/* Iterates tokens: start with *pos = 0; returns false after the last token. */
bool wk_iltp_offer_next(const wk_iltp_offer *o, size_t *pos, const char **tok, size_t *tok_len);
/* True if the list names the token (text comparison). */
bool wk_iltp_offer_contains(const wk_iltp_offer *o, const char *tok, size_t tok_len);
/* Formats the implemented encodings encs[0..n) (identity is skipped) as a token list into dst
 * (capacity cap, NUL-terminated). Returns the length, or 0 if nothing was listed or it did not
 * fit. */
size_t wk_iltp_offer_format(const wk_iltp_encoding *encs, size_t n, char *dst, size_t cap);

/* Selection for one direction A->B: the first token in A's Encode that B's Decode also lists,
 * else identity. Sets *tok and *tok_len to the token text (borrowed from a_encode, or the static
 * "identity") and returns the encoding it names (WK_ILTP_UNKNOWN if this build does not
 * implement it). */
wk_iltp_encoding wk_iltp_select(const wk_iltp_offer *a_encode, const wk_iltp_offer *b_decode,
                                const char **tok, size_t *tok_len);

/* ---------------------------------------------------------------------------------------------
 * Prefaces: both published forms.
 *   form 1.0  "🪢: iltp/1.0 <nonce>\n" (59 bytes; no offers: identity both ways)
 *   form 0.13 "🪢: iltp/0.13\nNonce: <nonce>\n[Decode: <list>\n][Encode: <list>\n]\n"
 * A nonce is the canonical B64A (43 characters) of 32 bytes, not all zero.
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_iltp_form { WK_ILTP_FORM_ANY = 0, WK_ILTP_FORM_1_0 = 1, WK_ILTP_FORM_0_13 = 2 } wk_iltp_form;

#define WK_ILTP_PREFACE_MAX 1024
#define WK_ILTP_NONCE_LEN 32
#define WK_ILTP_NONCE_TEXT_LEN 43
/* The bytes that commit an item boundary to a preface: the knot glyph U+1FAA2 and ": ". */
#define WK_ILTP_PREFACE_LEAD "\xF0\x9F\xAA\xA2: "
#define WK_ILTP_PREFACE_LEAD_LEN 6

typedef struct wk_iltp_preface {
    wk_iltp_form form;
    uint8_t nonce[WK_ILTP_NONCE_LEN];
    wk_iltp_offer decode; /* borrowed from the parsed bytes; len 0 = absent */
    wk_iltp_offer encode;
    size_t len;           /* bytes the preface occupies */
} wk_iltp_preface;

/* Parses one preface at the start of data[0..len). `form` is the form this endpoint is
 * configured for (WK_ILTP_FORM_ANY accepts both); a preface of another form is
 * ILTP_ERR_VERSION. Returns WK_DONE with *p filled (offers borrow from data), WK_NEED_INPUT if
 * data is a proper prefix of a possibly valid preface, or WK_ERROR with *err (offset into data). */
wk_result wk_iltp_preface_parse(const uint8_t *data, size_t len, wk_iltp_form form,
                                wk_iltp_preface *p, wk_error *err);
/* Writes a preface of the given form into dst (capacity cap). decode/encode are token-list texts
 * (NULL or "" for an absent field; ignored for form 1.0). Returns the length, or 0 with *err set
 * if a field is invalid, the nonce is all zero, or it does not fit. */
size_t wk_iltp_preface_format(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN],
                              const char *decode, const char *encode, uint8_t *dst, size_t cap,
                              wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Stream encoder: one per outgoing direction and logical session.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_encoder wk_iltp_encoder;

typedef struct wk_iltp_encoder_params {
    int level;                    /* 0: the token's default (deflate12c 6, zstd20c 3) */
    const wk_allocator *allocator; /* NULL: malloc/free */
} wk_iltp_encoder_params;

typedef enum wk_iltp_op {
    WK_ILTP_CONTINUE = 0, /* more of the current batch follows */
    WK_ILTP_FLUSH = 1,    /* this input ends the batch: write the flush */
    WK_ILTP_END = 2       /* end the batch (if open) and write the end mark */
} wk_iltp_op;

/* Creates an encoder primed for a fresh logical session. params may be NULL. Returns NULL with
 * *err set (WK_ERR_NOMEM, WK_ERR_ARG for a bad level, WK_ERR_BACKEND). Free with
 * wk_iltp_encoder_free. */
wk_iltp_encoder *wk_iltp_encoder_create(wk_iltp_encoding enc, const wk_iltp_encoder_params *params,
                                        wk_error *err);
/* Frees the encoder (NULL is fine). */
void wk_iltp_encoder_free(wk_iltp_encoder *e);
/* Starts a fresh logical session: no history crosses, the dictionary primes again. */
wk_code wk_iltp_encoder_reset(wk_iltp_encoder *e, wk_error *err);
/* One step. Consumes batch bytes from *in and writes encoded bytes to *out.
 *   CONTINUE: returns WK_NEED_INPUT once in is consumed, WK_NEED_OUTPUT when out is full.
 *   FLUSH, END: returns WK_DONE once all of in is consumed and the flush (and end mark) are
 *               completely in out; WK_NEED_OUTPUT otherwise: call again with the same op.
 * Output may appear before a batch ends; memory does not grow with the batch. After END only
 * reset is valid. identity copies bytes through and writes no flush or end mark. */
wk_result wk_iltp_encode(wk_iltp_encoder *e, wk_out *out, wk_in *in, wk_iltp_op op, wk_error *err);
/* The encoding it writes. */
wk_iltp_encoding wk_iltp_encoder_encoding(const wk_iltp_encoder *e);

/* ---------------------------------------------------------------------------------------------
 * Stream decoder: one per incoming direction and logical session.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_decoder wk_iltp_decoder;

/* Creates a decoder primed for a fresh logical session. allocator may be NULL. Memory is fixed by
 * the token: deflate12c about 12 KiB, zstd20c about 1.5 MiB (docs/benchmarks.md). */
wk_iltp_decoder *wk_iltp_decoder_create(wk_iltp_encoding enc, const wk_allocator *allocator,
                                        wk_error *err);
/* Frees the decoder (NULL is fine). */
void wk_iltp_decoder_free(wk_iltp_decoder *d);
/* Starts a fresh logical session (after a raw preface). */
wk_code wk_iltp_decoder_reset(wk_iltp_decoder *d, wk_error *err);
/* One step: consumes encoded bytes from *in, writes decoded bytes to *out, never more than out
 * has room for (backpressure).
 *   WK_NEED_OUTPUT  out is full; more decoded bytes may follow
 *   WK_NEED_INPUT   in is consumed and nothing more can be decoded from it
 *   WK_DONE         the end mark has been consumed and every decoded byte delivered; in->pos is
 *                   at the first raw byte after it. Later calls consume nothing: they return
 *                   WK_DONE while the unread bytes are empty or begin a raw preface lead,
 *                   WK_NEED_INPUT while they are a proper prefix of that lead, and
 *                   ILTP_ERR_AFTER_END_MARK otherwise.
 *   WK_ERROR        *err says what and at which encoded offset; the decoder stays failed.
 * identity never returns WK_DONE (it has no end mark). */
wk_result wk_iltp_decode(wk_iltp_decoder *d, wk_out *out, wk_in *in, wk_error *err);
/* Call at EOF with the bytes still unread (NULL or empty for none). Returns WK_OK for a clean end
 * of the stream layer (identity; or end mark consumed and nothing, or a complete preface lead,
 * follows), ILTP_ERR_TRUNCATED if a compressed stream ended before its end mark or inside the
 * lead of the raw preface after it, ILTP_ERR_AFTER_END_MARK for other bytes after the end mark. */
wk_code wk_iltp_decoder_finish(wk_iltp_decoder *d, const wk_in *rest, wk_error *err);
/* True once the end mark has been consumed. */
bool wk_iltp_decoder_ended(const wk_iltp_decoder *d);
/* Encoded bytes consumed in this logical session (after the end mark: the offset of the first
 * raw byte after it). */
uint64_t wk_iltp_decoder_consumed(const wk_iltp_decoder *d);
/* Decoded bytes produced in this logical session. */
uint64_t wk_iltp_decoder_produced(const wk_iltp_decoder *d);

#ifdef __cplusplus
}
#endif
#endif
