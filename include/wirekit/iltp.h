/* wirekit ILTP: Lace-065 stream encoding, offers and prefaces.
 *
 * Stream encoding (Lace-065) sits between the item stream and the carrier: one encoder per
 * outgoing direction, one decoder per incoming direction, each for one logical session. Tokens:
 *   identity    bytes pass through; no flush marker, no end mark
 *   deflate12c  raw RFC 1951, dictionary as preset history; each batch ends with a sync flush
 *               (00 00 ff ff); end mark: empty BFINAL fixed block 03 00. Two backends: ISA-L
 *               igzip (the default) and zlib (windowBits -12, the reference); both write and
 *               accept the same framing, and each decodes what the other writes
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
 * - deflate12c with ISA-L (docs/iltp.md, "Backends"): levels 1-3 map to igzip level 1, 4-6 to
 *   level 2, 7-9 to level 3 (igzip level 0 is never used: it repeats a 113-byte header per flushed
 *   block); hist_bits 12 bounds every distance at 4096; the sync flush is igzip's own (00 00 ff
 *   ff, asked for once per batch) and the end mark 03 00 is written by wirekit. The decoder names
 *   errors as zlib does: when igzip refuses a block, the bytes since the last sync flush (kept, at
 *   most 32 KiB) are decoded again with zlib from that point, and zlib's verdict and offset are
 *   reported (or, if zlib accepts them, zlib decodes the rest of the session). Only when that
 *   checkpoint is older than 32 KiB of input does the verdict come from igzip alone: the same
 *   error name, an offset at most a few bytes after zlib's. igzip may resolve a distance beyond
 *   4096 that zlib refuses, as Lace-065 allows.
 * - zstd20c decoding drives libzstd's block API (ZSTD_decompressContinue) over the whole push in
 *   one wirekit call, one libzstd call per block header and block, as ZSTD_decompressStream does
 *   inside, so an error names the block libzstd was decoding.
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
const char *wk_iltp_encoding_name(wk_iltp_encoding enc);
/* The encoding a token names; WK_ILTP_UNKNOWN for any other text. */
wk_iltp_encoding wk_iltp_encoding_lookup(const char *tok, size_t len);

/* ---------------------------------------------------------------------------------------------
 * The dictionary (830 bytes, built from the seed's fragments)
 * ------------------------------------------------------------------------------------------- */
#define WK_ILTP_DICTIONARY_LEN 830
/* The dictionary bytes (static storage, WK_ILTP_DICTIONARY_LEN bytes). */
const uint8_t *wk_iltp_dictionary_get(void);

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
/* The token list for the encodings encs[0..n) (borrowed for the call; identity and repeats are
 * skipped), e.g. "zstd20c,deflate12c": *size gets its length (0 when nothing is listed). WK_OK, or
 * WK_ERR_ARG for an encoding this build does not implement. */
wk_code wk_iltp_offer_size(const wk_iltp_encoding *encs, size_t n, size_t *size, wk_error *err);
/* Writes that list into *out (no NUL): WK_DONE, WK_NEED_OUTPUT with out untouched when it has
 * less room than wk_iltp_offer_size, or WK_ERROR (WK_ERR_ARG, whatever the room). */
wk_result wk_iltp_offer_encode(const wk_iltp_encoding *encs, size_t n, wk_out *out, wk_error *err);

/* Selection for one direction A->B: the first token in A's Encode that B's Decode also lists,
 * else identity. Sets *tok and *tok_len to the token text (borrowed from a_encode, or the static
 * "identity") and returns the encoding it names (WK_ILTP_UNKNOWN if this build does not
 * implement it). */
wk_iltp_encoding wk_iltp_offer_select(const wk_iltp_offer *a_encode, const wk_iltp_offer *b_decode,
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

/* Parses one preface at the unread bytes of *in (a whole-message call: docs/architecture.md).
 * `form` is the form this endpoint is configured for (WK_ILTP_FORM_ANY accepts both); a preface of
 * another form is ILTP_ERR_VERSION. Returns WK_DONE with *p filled (offers borrow from in->src)
 * and in->pos moved past the preface (p->len bytes; what follows is left unread), WK_NEED_INPUT
 * with in untouched if the unread bytes are a proper prefix of a possibly valid preface, or
 * WK_ERROR with in untouched and *err (offset from the preface's first byte, in->src + in->pos). */
wk_result wk_iltp_preface_parse(wk_in *in, wk_iltp_form form, wk_iltp_preface *p, wk_error *err);
/* The two prefaces of a session pair must carry different nonces: WK_OK, or ILTP_ERR_SAME_NONCE
 * (PeerProtocol: an equal independently crossed pair). */
wk_code wk_iltp_nonce_pair_check(const uint8_t a[WK_ILTP_NONCE_LEN], const uint8_t b[WK_ILTP_NONCE_LEN],
                                 wk_error *err);
/* The size of the preface wk_iltp_preface_encode writes (at most WK_ILTP_PREFACE_MAX). decode and
 * encode are NUL-terminated token-list texts (NULL or "" for an absent field; ignored for form
 * 1.0); every pointer is borrowed for the call. WK_OK with *size, or the refusal: WK_ERR_ARG (an
 * all-zero nonce, an unknown form), ILTP_ERR_TOKEN / ILTP_ERR_OFFER (an invalid list, offset in
 * it), ILTP_ERR_PREFACE_TOO_LONG. */
wk_code wk_iltp_preface_size(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN], const char *decode,
                             const char *encode, size_t *size, wk_error *err);
/* Writes that preface into *out: WK_DONE, WK_NEED_OUTPUT with out untouched when it has less room
 * than wk_iltp_preface_size, or WK_ERROR with the refusal above (whatever the room). */
wk_result wk_iltp_preface_encode(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN], const char *decode,
                                 const char *encode, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Stream encoder: one per outgoing direction and logical session.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_encoder wk_iltp_encoder;

/* The deflate12c backend of an encoder or decoder (identity and zstd20c ignore it). */
typedef enum wk_iltp_backend {
    WK_ILTP_BACKEND_DEFAULT = 0, /* ISA-L (every build of wirekit has it) */
    WK_ILTP_BACKEND_ZLIB = 1,    /* zlib: the reference backend */
    WK_ILTP_BACKEND_ISAL = 2     /* ISA-L igzip */
} wk_iltp_backend;

/* "zlib" or "isal" for a concrete backend, "default" for WK_ILTP_BACKEND_DEFAULT; NULL otherwise
 * (static storage). */
const char *wk_iltp_backend_name(wk_iltp_backend backend);

typedef struct wk_iltp_encoder_params {
    int level;                    /* 0: the token's default (deflate12c 6, zstd20c 3) */
    const wk_allocator *allocator; /* NULL: malloc/free */
    wk_iltp_backend backend;      /* deflate12c only; 0: the default (ISA-L) */
} wk_iltp_encoder_params;

typedef enum wk_iltp_op {
    WK_ILTP_CONTINUE = 0, /* more of the current batch follows */
    WK_ILTP_FLUSH = 1,    /* this input ends the batch: write the flush */
    WK_ILTP_END = 2       /* end the batch (if open) and write the end mark */
} wk_iltp_op;

/* Creates an encoder primed for a fresh logical session. params may be NULL. Returns NULL with
 * *err set (WK_ERR_NOMEM, WK_ERR_ARG for a bad level, WK_ERR_BACKEND). Free with
 * wk_iltp_encoder_destroy. */
wk_iltp_encoder *wk_iltp_encoder_create(wk_iltp_encoding enc, const wk_iltp_encoder_params *params,
                                        wk_error *err);
/* Frees the encoder (NULL is fine). */
void wk_iltp_encoder_destroy(wk_iltp_encoder *e);
/* Starts a fresh logical session: no history crosses, the dictionary primes again. */
wk_code wk_iltp_encoder_reset(wk_iltp_encoder *e, wk_error *err);
/* One step. Consumes batch bytes from *in and writes encoded bytes to *out.
 *   CONTINUE: returns WK_NEED_INPUT once in is consumed, WK_NEED_OUTPUT when out is full.
 *   FLUSH, END: returns WK_DONE once all of in is consumed and the flush (and end mark) are
 *               completely in out; WK_NEED_OUTPUT otherwise: call again with the same op.
 * Output may appear before a batch ends; memory does not grow with the batch. After END only
 * reset is valid. identity copies bytes through and writes no flush or end mark. in and out are
 * borrowed for the call (in may be NULL: no bytes). A backend failure is kept: every later call
 * reports it again unchanged (every field of *err), consuming and writing nothing, until reset;
 * misuse (a bad op or view, bytes after END) is WK_ERR_ARG / WK_ERR_STATE and changes nothing. */
wk_result wk_iltp_encoder_encode(wk_iltp_encoder *e, wk_in *in, wk_out *out, wk_iltp_op op, wk_error *err);
/* The encoding it writes. */
wk_iltp_encoding wk_iltp_encoder_encoding(const wk_iltp_encoder *e);
/* The backend it uses: ZLIB or ISAL for deflate12c (never DEFAULT), DEFAULT for the others. */
wk_iltp_backend wk_iltp_encoder_backend(const wk_iltp_encoder *e);

/* ---------------------------------------------------------------------------------------------
 * Stream decoder: one per incoming direction and logical session.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_decoder wk_iltp_decoder;

typedef struct wk_iltp_decoder_params {
    const wk_allocator *allocator; /* NULL: malloc/free */
    wk_iltp_backend backend;       /* deflate12c only; 0: the default (ISA-L) */
} wk_iltp_decoder_params;

/* Creates a decoder primed for a fresh logical session. params may be NULL (malloc/free, the
 * default backend); the struct is read during the call only. Returns NULL with *err set
 * (WK_ERR_NOMEM, WK_ERR_ARG for an unknown encoding or backend, WK_ERR_BACKEND). Memory is fixed
 * at creation by the token and backend (docs/iltp.md): deflate12c with zlib about 12 KiB, with
 * ISA-L about 136 KiB; zstd20c about 1.5 MiB. Free with wk_iltp_decoder_destroy. */
wk_iltp_decoder *wk_iltp_decoder_create(wk_iltp_encoding enc, const wk_iltp_decoder_params *params,
                                        wk_error *err);
/* The backend it uses: ZLIB or ISAL for deflate12c (never DEFAULT), DEFAULT for the others. */
wk_iltp_backend wk_iltp_decoder_backend(const wk_iltp_decoder *d);
/* Frees the decoder (NULL is fine). */
void wk_iltp_decoder_destroy(wk_iltp_decoder *d);
/* Starts a fresh logical session (after a raw preface). */
wk_code wk_iltp_decoder_reset(wk_iltp_decoder *d, wk_error *err);
/* One step: consumes encoded bytes from *in, writes decoded bytes to *out, never more than out
 * has room for (backpressure).
 *   WK_NEED_OUTPUT  out is full; more decoded bytes may follow
 *   WK_NEED_INPUT   in is consumed and nothing more can be decoded from it (deflate12c with
 *                   ISA-L: igzip may keep the last symbols of a push, a few bytes, until more
 *                   input comes; a sync flush or the end mark releases them, so every flushed
 *                   batch is delivered in full)
 *   WK_DONE         the end mark has been consumed and every decoded byte delivered; in->pos is
 *                   at the first raw byte after it. Later calls consume nothing: they return
 *                   WK_DONE while the unread bytes are empty or begin a raw preface lead,
 *                   WK_NEED_INPUT while they are a proper prefix of that lead, and
 *                   ILTP_ERR_AFTER_END_MARK otherwise.
 *   WK_ERROR        *err says what and at which encoded offset; the decoder stays failed.
 * identity never returns WK_DONE (it has no end mark). Only out->dst[0..out->pos) is output; with
 * the ISA-L backend the bytes of the view past out->pos may change on any call (igzip's scratch),
 * so keep nothing there. */
wk_result wk_iltp_decoder_decode(wk_iltp_decoder *d, wk_in *in, wk_out *out, wk_error *err);
/* Call at EOF with the bytes still unread (rest: borrowed, never consumed; NULL or empty for
 * none). Returns WK_DONE for a clean end of the stream layer (identity; or end mark consumed and
 * nothing, or a complete preface lead, follows), else WK_ERROR with *err: ILTP_ERR_TRUNCATED if
 * a compressed stream ended before its end mark or inside the lead of the raw preface after it,
 * ILTP_ERR_AFTER_END_MARK for other bytes after the end mark (the decoder then stays failed).
 * Calling it again gives the same answer. */
wk_result wk_iltp_decoder_finish(wk_iltp_decoder *d, const wk_in *rest, wk_error *err);
/* True once the end mark has been consumed. */
bool wk_iltp_decoder_ended(const wk_iltp_decoder *d);
/* Encoded bytes consumed in this logical session (after the end mark: the offset of the first
 * raw byte after it). */
uint64_t wk_iltp_decoder_consumed(const wk_iltp_decoder *d);
/* Decoded bytes produced in this logical session. */
uint64_t wk_iltp_decoder_produced(const wk_iltp_decoder *d);

/* ---------------------------------------------------------------------------------------------
 * Items (Lace-060): the decoder emits one framing input at a time.
 *   lead "🪢:"  session preface      lead [A-Za-z]  nonempty fact block
 *   lead LF     zero-row fact block  lead "🖧:"     complete H3 Blob, Plex or Seal record
 * Caps: item 64 MiB (reset after every item), fact line 1024 bytes excluding LF, Blob data
 * 32 MiB, operand Blob 1 MiB (whole record, when the caller announces an operand).
 * Decisions where the seeds are silent (docs/iltp.md):
 * - Fact lines follow shared/specs/iltp.md: Predicate [A-Za-z][A-Za-z0-9_]*, constants
 *   '...' separated by single commas, no ', \ or C0 control inside, UTF-8 in NFC.
 * - Record header lines (glyph, By, Mark, Plex fields, Data-Length) are at most 1024 bytes
 *   excluding LF. A Plex field is `Name: value` with Name [A-Za-z][A-Za-z0-9-]* and a value of
 *   UTF-8 without C0 controls (may be empty). Mark is a nonempty value of the same kind.
 * - P and S hashes are not checked by default (unconfirmed rule); see wk_iltp_record_hash_check.
 * ------------------------------------------------------------------------------------------- */
#define WK_ILTP_ITEM_CAP ((size_t)64 << 20)
#define WK_ILTP_FACT_LINE_CAP 1024
#define WK_ILTP_BLOB_DATA_CAP ((size_t)32 << 20)
#define WK_ILTP_OPERAND_CAP ((size_t)1 << 20)
#define WK_ILTP_HEADER_LINE_CAP 1024
/* "🖧: " — the record glyph U+1F5A7 and ": " */
#define WK_ILTP_RECORD_LEAD "\xF0\x9F\x96\xA7: "
#define WK_ILTP_RECORD_LEAD_LEN 6

typedef enum wk_iltp_item_kind {
    WK_ILTP_ITEM_PREFACE = 1,
    WK_ILTP_ITEM_FACTS = 2,
    WK_ILTP_ITEM_RECORD = 3
} wk_iltp_item_kind;

/* A Blob: hash = BLAKE3 of its content ("Data-Length: N\n\n" and the data). */
typedef struct wk_iltp_blob {
    uint8_t hash[32];
    const uint8_t *data; /* borrowed */
    size_t len;
} wk_iltp_blob;

/* A Plex: field lines then a whole Blob. content = everything after the glyph line. */
typedef struct wk_iltp_plex {
    uint8_t hash[32];        /* from the glyph line */
    const uint8_t *fields;   /* the field lines, each "Name: value\n" (borrowed) */
    size_t fields_len;
    size_t field_count;
    const uint8_t *content;
    size_t content_len;
    wk_iltp_blob blob;
} wk_iltp_plex;

/* A Seal: By and Mark lines then a whole Plex. */
typedef struct wk_iltp_seal {
    uint8_t hash[32];
    uint8_t by[32];          /* the V.<h>.H3 key reference */
    const uint8_t *mark;     /* Mark value (borrowed) */
    size_t mark_len;
    const uint8_t *content;
    size_t content_len;
    wk_iltp_plex plex;
} wk_iltp_seal;

typedef struct wk_iltp_record {
    char type;               /* 'B', 'P' or 'S' */
    wk_iltp_blob blob;       /* type B; for P and S the innermost Blob is in plex.blob */
    wk_iltp_plex plex;       /* type P, or the Seal's Plex */
    wk_iltp_seal seal;       /* type S */
} wk_iltp_record;

typedef struct wk_iltp_item {
    wk_iltp_item_kind kind;
    const uint8_t *bytes;    /* the item's exact bytes, borrowed until the next decode call */
    size_t len;
    uint64_t offset;         /* decoded-stream offset of the item's first byte */
    wk_iltp_preface preface; /* kind PREFACE (offers borrow from bytes) */
    size_t rows;             /* kind FACTS: number of rows (0 for the zero-row block) */
    wk_iltp_record record;   /* kind RECORD */
} wk_iltp_item;

/* One row of a fact block, as slices of the block. */
typedef struct wk_iltp_fact_row {
    const uint8_t *predicate;
    size_t predicate_len;
    const uint8_t *args;     /* between the parentheses: 'a','b' */
    size_t args_len;
    size_t arity;
} wk_iltp_fact_row;

/* Iterates the rows of a decoded fact block (item bytes): start with *pos = 0. */
bool wk_iltp_fact_next(const uint8_t *block, size_t len, size_t *pos, wk_iltp_fact_row *row);
/* Iterates a row's constants (without quotes): start with *pos = 0. */
bool wk_iltp_fact_arg_next(const wk_iltp_fact_row *row, size_t *pos, const uint8_t **arg,
                           size_t *arg_len);

typedef struct wk_iltp_item_decoder wk_iltp_item_decoder;

typedef struct wk_iltp_item_decoder_params {
    wk_iltp_form form;             /* preface form accepted (WK_ILTP_FORM_ANY: both) */
    size_t max_item;               /* 0: WK_ILTP_ITEM_CAP; a smaller bound is allowed */
    const wk_allocator *allocator; /* NULL: malloc/free */
} wk_iltp_item_decoder_params;

/* Creates an item decoder (params read during the call; NULL: defaults; memory from
 * params->allocator). Its buffer grows with the current item, never past the item cap. NULL with
 * *err (WK_ERR_NOMEM). */
wk_iltp_item_decoder *wk_iltp_item_decoder_create(const wk_iltp_item_decoder_params *params,
                                                  wk_error *err);
/* Frees the decoder (NULL is fine). */
void wk_iltp_item_decoder_destroy(wk_iltp_item_decoder *d);
/* Back to an item boundary at offset 0 with no retained bytes (a fresh logical session). */
void wk_iltp_item_decoder_reset(wk_iltp_item_decoder *d);
/* Announces that the next item is an operand Blob (1 MiB cap; any other item is refused). */
void wk_iltp_item_decoder_expect_operand(wk_iltp_item_decoder *d);
/* One step: consumes bytes of *in (borrowed for the call; a streamed Blob's DATA slice borrows
 * it until the next call), never past the end of the item it completes. out must be NULL (the
 * decoder produces no bytes; otherwise WK_ERR_ARG).
 *   WK_EVENT       an item is complete (wk_iltp_item_decoder_item), or a streamed Blob event is
 *                  ready (wk_iltp_item_decoder_event); call again for the rest of in
 *   WK_NEED_INPUT  in is consumed and the current item is incomplete (or none started)
 *   WK_ERROR       *err: what, and the decoded-stream offset; the decoder stays failed and
 *                  reports the same error again
 * It never returns WK_DONE or WK_NEED_OUTPUT: the end of the items is told by _finish. */
wk_result wk_iltp_item_decoder_decode(wk_iltp_item_decoder *d, wk_in *in, wk_out *out,
                                      wk_error *err);
/* The item of the last decode call when it returned WK_EVENT for an item, else NULL. Owned by the
 * decoder; it and the bytes it points to live until the next call on the decoder. */
const wk_iltp_item *wk_iltp_item_decoder_item(const wk_iltp_item_decoder *d);
/* True at an item boundary with no partial item retained. */
bool wk_iltp_item_decoder_at_boundary(const wk_iltp_item_decoder *d);

/* Streamed Blob records. With streaming on, a top-level Blob record (type B, not an announced
 * operand) is not collected into an item: wk_iltp_item_decoder_decode returns WK_EVENT, with the details
 * in wk_iltp_item_decoder_event(), once per event:
 *   WK_ILTP_BLOB_BEGIN  the glyph line, Data-Length and blank line are parsed: hash, length
 *   WK_ILTP_BLOB_DATA   the next slice of data, borrowed from the caller's input (not copied)
 *                       until the next call; hashed as it passes
 *   WK_ILTP_BLOB_END    every data byte was delivered and BLAKE3 of the content equals the glyph
 *                       hash (otherwise the call fails with ILTP_ERR_RECORD_HASH instead)
 * The record's header bytes are held (at most the header line caps); the data never is, so a
 * Blob costs O(1) memory however large. Plex and Seal records, operands and fact blocks stay
 * whole items. EOF inside a streamed record is ILTP_ERR_TRUNCATED. Off by default. */
typedef enum wk_iltp_blob_event_kind {
    WK_ILTP_BLOB_BEGIN = 1,
    WK_ILTP_BLOB_DATA = 2,
    WK_ILTP_BLOB_END = 3
} wk_iltp_blob_event_kind;

typedef struct wk_iltp_blob_event {
    wk_iltp_blob_event_kind kind;
    uint8_t hash[32];        /* the glyph hash */
    uint64_t length;         /* Data-Length */
    uint64_t offset;         /* BEGIN: decoded-stream offset of the record's first byte;
                              * DATA: of the slice's first byte; END: after the last data byte */
    uint64_t done;           /* data bytes delivered so far, this slice included */
    const uint8_t *data;     /* DATA: the slice (borrowed) */
    size_t len;
} wk_iltp_blob_event;

/* Turns streaming of Blob records on or off (takes effect at the next record). */
void wk_iltp_item_decoder_stream_blobs(wk_iltp_item_decoder *d, bool on);
/* The Blob event of the last call that returned WK_EVENT (owned by the decoder, valid until the
 * next call); NULL when that event is a complete item (wk_iltp_item_decoder_item). */
const wk_iltp_blob_event *wk_iltp_item_decoder_event(const wk_iltp_item_decoder *d);
/* A bound on the bytes of the current and following items that are collected whole (fact
 * blocks, prefaces, Plex and Seal records, operands; not streamed Blob data): an item that
 * cannot fit is refused with ILTP_ERR_BUDGET at the byte where the bound runs out, as its bytes
 * arrive (a record whose Data-Length says it cannot fit, at that line). UINT64_MAX: none (the
 * default). The caller sets it before each call (a session: its remaining phase budget). */
void wk_iltp_item_decoder_limit(wk_iltp_item_decoder *d, uint64_t limit);
/* Finalization at EOF with the bytes still unread (rest: borrowed, never consumed; NULL or empty
 * for none): WK_DONE at an item boundary with nothing unread, else WK_ERROR with
 * ILTP_ERR_TRUNCATED saying whether the input ended inside a preface, a fact block or a record
 * (the decoder then stays failed). Calling it again gives the same answer. */
wk_result wk_iltp_item_decoder_finish(wk_iltp_item_decoder *d, const wk_in *rest, wk_error *err);

/* For P and S records: whether the glyph hash equals BLAKE3 of the content (the presumed rule,
 * not enforced by the decoder). Blob hashes are always enforced. */
bool wk_iltp_record_hash_check(const wk_iltp_record *r);

/* ---------------------------------------------------------------------------------------------
 * Item encoding: canonical bytes, whole items only (never half an item), caps enforced.
 * Errors from the encoders carry the rule's code with the Integration category: the local side
 * could not construct a canonical item.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_fact {
    const char *predicate;          /* NUL-terminated */
    const char *const *constants;   /* count NUL-terminated strings, without quotes */
    size_t count;
} wk_iltp_fact;

/* Size of the fact block for rows[0..n) (0 rows: the 1-byte zero-row block); 0 with *err set if
 * a row is not canonical or a line or the item is over its cap. */
size_t wk_iltp_facts_size(const wk_iltp_fact *rows, size_t n, wk_error *err);
/* Writes the block into *out: WK_DONE, WK_NEED_OUTPUT with out untouched, or WK_ERROR. */
wk_result wk_iltp_facts_encode(const wk_iltp_fact *rows, size_t n, wk_out *out, wk_error *err);

/* A record reference "<type>.<B64A of the 32-byte hash>.H3": B (Blob), P, S, V (a By key). */
#define WK_ILTP_REF_LEN 48
/* Writes the reference of the given type and hash into out (WK_ILTP_REF_LEN bytes, no NUL). */
void wk_iltp_ref_format(char type, const uint8_t hash[32], char out[WK_ILTP_REF_LEN]);
/* Reads one reference of the given type (canonical B64A) at the unread bytes of *in (a
 * whole-message call): WK_DONE with *hash and in->pos moved past its WK_ILTP_REF_LEN bytes (what
 * follows is left unread: a caller that wants the reference alone checks in->pos == in->size), or
 * WK_ERROR with in untouched and ILTP_ERR_RECORD, the offset (from the reference's first byte) of
 * the first byte that is not the reference's or, for fewer than WK_ILTP_REF_LEN bytes, of where
 * they end. */
wk_result wk_iltp_ref_parse(wk_in *in, char type, uint8_t hash[32], wk_error *err);

/* A Blob's content begins with "Data-Length: N\n\n" (N canonical decimal), then the N data bytes;
 * its hash is BLAKE3 of the whole content. */
#define WK_ILTP_BLOB_CONTENT_HEAD_MAX 40
/* Writes "Data-Length: <len>\n\n" into out (NUL-terminated, at most WK_ILTP_BLOB_CONTENT_HEAD_MAX
 * bytes with the NUL) and returns its length without the NUL. */
size_t wk_iltp_blob_content_head_format(uint64_t len, char out[WK_ILTP_BLOB_CONTENT_HEAD_MAX]);

#define WK_ILTP_BLOB_HEAD_MAX 96
/* BLAKE3 of a Blob's content for data[0..len). */
void wk_iltp_blob_hash(const uint8_t *data, size_t len, uint8_t hash[32]);
/* Writes the glyph line and "Data-Length: N\n\n" for a Blob of len bytes with the given hash
 * into head (WK_ILTP_BLOB_HEAD_MAX bytes); returns its length. The data follows it. */
size_t wk_iltp_blob_head_format(const uint8_t hash[32], size_t len,
                                uint8_t head[WK_ILTP_BLOB_HEAD_MAX]);
/* Whole Blob record size for len data bytes. */
size_t wk_iltp_blob_record_size(size_t len);
/* Writes the whole Blob record (hash computed): WK_DONE, WK_NEED_OUTPUT with out untouched, or
 * WK_ERROR (data over 32 MiB: WK_ERR_ILTP_BLOB_TOO_LARGE, Integration). */
wk_result wk_iltp_blob_encode(const uint8_t *data, size_t len, wk_out *out, wk_error *err);

/* Only a preface may come next (before the first preface, and after an end mark): any other
 * leading byte is refused at once with ILTP_ERR_ITEM_LEAD. Cleared by the next item. */
void wk_iltp_item_decoder_expect_preface(wk_iltp_item_decoder *d);
/* Prefaces are refused (inside a compressed stream): the complete preface lead at an item
 * boundary is ILTP_ERR_PREFACE_ENCODED at once, without parsing the rest. */
void wk_iltp_item_decoder_forbid_preface(wk_iltp_item_decoder *d, bool forbid);

/* ---------------------------------------------------------------------------------------------
 * The stack, one object per direction: raw preface, then the session's encoding, then items;
 * after an end mark only a raw preface (a fresh logical session) or EOF.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_reader wk_iltp_reader;

typedef struct wk_iltp_stack_params {
    wk_iltp_form form;             /* preface form of this endpoint (WK_ILTP_FORM_ANY: both) */
    int level;                     /* writer: compression level (0: the token's default) */
    size_t max_item;               /* reader: 0 = WK_ILTP_ITEM_CAP */
    const wk_allocator *allocator; /* NULL: malloc/free */
} wk_iltp_stack_params;

/* How the incoming direction stands (for EOF verdicts and diagnostics). */
typedef enum wk_iltp_reader_phase {
    WK_ILTP_READER_NO_SESSION = 0, /* before the first preface */
    WK_ILTP_READER_PAUSED,         /* a preface was returned; waiting for wk_iltp_reader_begin */
    WK_ILTP_READER_SESSION,        /* items in the session's encoding */
    WK_ILTP_READER_ENDED,          /* end mark consumed; only a raw preface or EOF may follow */
    WK_ILTP_READER_FAILED
} wk_iltp_reader_phase;

/* Creates a reader (params read during the call; NULL: defaults). Memory comes from
 * params->allocator (the reader, its item and stream decoders, its decoded buffer). NULL with *err
 * (WK_ERR_NOMEM). */
wk_iltp_reader *wk_iltp_reader_create(const wk_iltp_stack_params *params, wk_error *err);
/* Frees the reader and its decoders (NULL is fine). */
void wk_iltp_reader_destroy(wk_iltp_reader *r);
/* One step over carrier bytes (out must be NULL: WK_ERR_ARG otherwise). Returns WK_EVENT with
 * an item (wk_iltp_reader_item; owned by the reader until the next call) or a streamed Blob event
 * (wk_iltp_reader_event), WK_NEED_INPUT when in is consumed, or WK_ERROR (the reader stays failed
 * and reports the same error again). After a PREFACE item the reader stops with
 * in->pos right after the preface's last raw byte and consumes nothing until
 * wk_iltp_reader_begin is called. A preface decoded out of a compressed stream is
 * ILTP_ERR_PREFACE_ENCODED; bytes after an end mark that do not begin a raw preface are
 * ILTP_ERR_AFTER_END_MARK. Offsets in errors count carrier bytes from the reader's start, except
 * item errors inside a compressed session, which count decoded bytes of that session (the
 * message says so). */
wk_result wk_iltp_reader_read(wk_iltp_reader *r, wk_in *in, wk_out *out, wk_error *err);
/* The item of the last read when it returned WK_EVENT for an item, else NULL (owned by the
 * reader; it and the bytes it points to live until the next call on the reader). */
const wk_iltp_item *wk_iltp_reader_item(const wk_iltp_reader *r);
/* Starts the logical session announced by the last preface, decoding `enc` (the encoding the
 * peer selected for this direction: wk_iltp_offer_select(peer encode, local decode)). Fresh decoder
 * and dictionary state. */
wk_code wk_iltp_reader_begin(wk_iltp_reader *r, wk_iltp_encoding enc, wk_error *err);
/* Announces that the next item is an operand Blob (1 MiB cap). */
void wk_iltp_reader_expect_operand(wk_iltp_reader *r);
/* Finalization at EOF with the unread bytes (rest: borrowed, never consumed; may be NULL): WK_DONE
 * for boundary EOF where the direction's encoding is at its end (before a preface, after an end
 * mark, or an identity item boundary); WK_ERROR with ILTP_ERR_TRUNCATED for EOF inside an item or
 * before a compressed end mark (ILTP_ERR_AFTER_END_MARK for bad bytes after one). The reader then
 * stays failed; calling it again gives the same answer. */
wk_result wk_iltp_reader_finish(wk_iltp_reader *r, const wk_in *rest, wk_error *err);
wk_iltp_reader_phase wk_iltp_reader_phase_get(const wk_iltp_reader *r);
/* The encoding of the current session (identity before any). */
wk_iltp_encoding wk_iltp_reader_encoding(const wk_iltp_reader *r);
/* Carrier bytes consumed so far. */
uint64_t wk_iltp_reader_consumed(const wk_iltp_reader *r);
/* Streamed Blob records (see wk_iltp_item_decoder_stream_blobs): wk_iltp_reader_read returns
 * WK_EVENT with wk_iltp_reader_event() filled (NULL when the event is an item); DATA slices borrow from in (identity) or the
 * reader's decoded buffer (compressed) until the next call. The setting survives
 * re-prefacing. */
void wk_iltp_reader_stream_blobs(wk_iltp_reader *r, bool on);
const wk_iltp_blob_event *wk_iltp_reader_event(const wk_iltp_reader *r);
/* The bound of wk_iltp_item_decoder_limit for the reader's items. */
void wk_iltp_reader_limit(wk_iltp_reader *r, uint64_t limit);

typedef struct wk_iltp_writer wk_iltp_writer;

/* Creates a writer (params read during the call; NULL: defaults). Memory comes from
 * params->allocator (the writer and its encoders). NULL with *err (WK_ERR_NOMEM). */
wk_iltp_writer *wk_iltp_writer_create(const wk_iltp_stack_params *params, wk_error *err);
/* Frees the writer and its encoders (NULL is fine). */
void wk_iltp_writer_destroy(wk_iltp_writer *w);
/* begin_session: ends the open session (its end mark, when compressed and not yet written) and
 * writes the raw preface for the fresh logical session. Returns WK_DONE once every byte is in
 * out, WK_NEED_OUTPUT otherwise (call again with room; the arguments are taken on the first
 * call). Items cannot be written until wk_iltp_writer_select. */
wk_result wk_iltp_writer_begin_session(wk_iltp_writer *w, const uint8_t nonce[WK_ILTP_NONCE_LEN],
                                       const char *decode, const char *encode, wk_out *out,
                                       wk_error *err);
/* Fixes this session's outgoing encoding (wk_iltp_offer_select(local encode, peer decode)) and primes
 * a fresh encoder. */
wk_code wk_iltp_writer_select(wk_iltp_writer *w, wk_iltp_encoding enc, wk_error *err);
/* Writes one accepted batch of complete items, ending with the encoding's flush. WK_DONE when
 * the batch is consumed and flushed into out, WK_NEED_OUTPUT otherwise (call again). batch and out
 * are borrowed for the call. When the encoder fails the writer keeps that error: write,
 * write_part, end, begin_session and select report it again unchanged (every field). */
wk_result wk_iltp_writer_write(wk_iltp_writer *w, wk_in *batch, wk_out *out, wk_error *err);
/* Writes part of a batch without ending it: consumes in as out allows (WK_NEED_INPUT once in is
 * consumed, WK_NEED_OUTPUT when out is full). The batch ends (with its flush) at the next
 * wk_iltp_writer_write, which may have an empty in. Lets an item be written in pieces (a Blob
 * record streamed from a file) without holding it whole. */
wk_result wk_iltp_writer_write_part(wk_iltp_writer *w, wk_in *in, wk_out *out, wk_error *err);
/* Writes the end mark (nothing for identity): bounded completion. WK_DONE / WK_NEED_OUTPUT. */
wk_result wk_iltp_writer_end(wk_iltp_writer *w, wk_out *out, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Session nonces (Lace-060): BLAKE3_KEYED(key = carrier seed,
 *   input = "lace-iltp/1.0/session-nonce/v1" || 0x00 || u64be(sequence)).
 * Sequence starts at 0 and each value is used once (UINT64_MAX too, once). An all-zero candidate,
 * or one equal to the known peer nonce, is skipped (the next sequence is tried).
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_nonce_gen {
    uint8_t seed[32];
    uint64_t next;   /* next sequence value to use */
    bool exhausted;  /* every sequence value has been used */
} wk_iltp_nonce_gen;

/* Initializes *g with a carrier seed (copied; must not be all zero: WK_ERR_ARG) and the first
 * sequence value (normally 0). */
wk_code wk_iltp_nonce_gen_init(wk_iltp_nonce_gen *g, const uint8_t seed[32], uint64_t first,
                               wk_error *err);
/* The raw candidate for one sequence value (no skipping, no state). */
void wk_iltp_nonce_candidate_derive(const uint8_t seed[32], uint64_t sequence, uint8_t out[32]);
/* Derives the next usable nonce into out, skipping all-zero candidates and one equal to
 * peer_nonce (NULL if none is known). Sets *used_sequence (may be NULL) to the sequence value
 * that produced it. WK_ERR_ILTP_NONCE_EXHAUSTED (Integration) when no value is left. */
wk_code wk_iltp_nonce_gen_next(wk_iltp_nonce_gen *g, const uint8_t *peer_nonce, uint8_t out[32],
                           uint64_t *used_sequence, wk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Address strings (Lace-060): stdio | unix:/abs/path | tcp:host[:port] | quib:host[:port] |
 * ws:host[:port][/path] | wss:host[:port][/path]. Default ports: tcp and quib 4790, ws 80,
 * wss 443; default WebSocket path /interlace. Host: hostname, IPv4, or bracketed IPv6.
 * ------------------------------------------------------------------------------------------- */
typedef enum wk_iltp_scheme {
    WK_ILTP_SCHEME_STDIO = 0,
    WK_ILTP_SCHEME_UNIX,
    WK_ILTP_SCHEME_TCP,
    WK_ILTP_SCHEME_QUIB,
    WK_ILTP_SCHEME_WS,
    WK_ILTP_SCHEME_WSS
} wk_iltp_scheme;

typedef enum wk_iltp_host_kind { WK_ILTP_HOST_NONE = 0, WK_ILTP_HOST_NAME, WK_ILTP_HOST_IPV4, WK_ILTP_HOST_IPV6 } wk_iltp_host_kind;

#define WK_ILTP_ADDRESS_MAX 1024

typedef struct wk_iltp_address {
    wk_iltp_scheme scheme;
    wk_iltp_host_kind host_kind;
    char host[256];   /* NUL-terminated; IPv6 without brackets; empty for stdio and unix */
    uint16_t port;    /* the given port or the scheme's default; 0 for stdio and unix */
    bool port_given;  /* the string named the port explicitly */
    char path[WK_ILTP_ADDRESS_MAX]; /* unix: the socket path; ws/wss: the path (default
                                     * "/interlace"); empty otherwise */
    bool path_given;
} wk_iltp_address;

/* Parses an address string of len bytes into *a. Rejects URL forms (ws://...), query strings and
 * fragments, relative unix paths, bad or out-of-range ports, empty or invalid hosts, unknown
 * schemes, with WK_ERR_ILTP_ADDRESS, the offset of the offending byte and a clear message. */
wk_code wk_iltp_address_parse(const char *s, size_t len, wk_iltp_address *a, wk_error *err);
/* The length of the canonical text of *a (borrowed for the call): the scheme, the host (IPv6 in
 * brackets), the port when it differs from the default, and the ws/wss path when it is not
 * /interlace. WK_OK with *size, or WK_ERR_ARG (a NULL or unknown-scheme address). */
wk_code wk_iltp_address_size(const wk_iltp_address *a, size_t *size, wk_error *err);
/* Writes that text into *out (no NUL): WK_DONE, WK_NEED_OUTPUT with out untouched when it has less
 * room than wk_iltp_address_size, or WK_ERROR (WK_ERR_ARG, whatever the room). */
wk_result wk_iltp_address_encode(const wk_iltp_address *a, wk_out *out, wk_error *err);
/* Name of a scheme ("stdio", "unix", "tcp", "quib", "ws", "wss"). */
const char *wk_iltp_scheme_name(wk_iltp_scheme scheme);

/* ---------------------------------------------------------------------------------------------
 * Sessions (Lace-060 grammar, as far as the seed defines it), sans-I/O: the host feeds carrier
 * bytes to wk_iltp_session_recv, drains wk_iltp_session_send into the carrier, passes the time in
 * milliseconds (wk_iltp_session_tick) and reports the end of input (wk_iltp_session_finish). The
 * application is content-addressed Blob sync: each endpoint advertises its store, requests what it
 * lacks, answers the peer's requests; after a session both hold the union.
 *   prefacing      both prefaces (sent without waiting); equal nonces are ILTP_ERR_SAME_NONCE
 *   establishment  side0 proof, side1 proof, side0 operand Blob, side1 operand Blob (proof
 *                  assurance Disabled: the zero-row block is sent, a structurally valid Seal or
 *                  the zero-row block is accepted, no authority is derived)
 *   rounds         advertisement block, request block, one Blob per peer request, RoundComplete();
 *                  a round with any request is followed by another; two empty request sets reach
 *                  fixed point; a local store advance at fixed point opens a new round
 *   re-prefacing   a fresh preface at an item boundary replaces the logical session
 * Wrong-family, duplicate, unrequested or out-of-order input fails at once
 * (ILTP_ERR_SESSION_ORDER). Boundary EOF is clean only at fixed point.
 *
 * The store. The session reads an in-memory index of the store through wk_iltp_store_ops (no
 * I/O, no allocation by the callee) and never touches Blob data itself: data moves through
 * events (WK_EVENT from recv and send, details in wk_iltp_session_event_get), so the host does
 * every file operation, when and where it likes (on worker threads):
 *   recv -> BLOB_BEGIN  a requested Blob's record begins (hash, length): open a store writer
 *        -> BLOB_DATA   its next data slice (data, len; borrowed until the next session call)
 *        -> BLOB_END    its last byte arrived and its hash matched: commit it (fsync, rename),
 *                       then report with wk_iltp_session_blob_stored; the session's fence waits
 *                       for every requested Blob to be stored
 *   send -> BLOB_READ   the session writes a response and needs the Blob's data from `offset`
 *                       (length = the whole data length): hand the next bytes to a later send
 *                       call as its `in` (any amount up to what remains); the host verifies the
 *                       data against the hash before it hands over the last piece
 * A round's advertisement is written incrementally from the index (store.next), a snapshot at
 * the round's start: a hash added later (sequence number above the snapshot's) is neither
 * advertised nor answered.
 *
 * Bounded work. Queued output is a handful of operations whatever the store or the peer sends
 * (advertisement and responses are produced lazily as output drains); recv stops consuming and
 * returns WK_NEED_OUTPUT while more than WK_ILTP_SESSION_OUTPUT_BOUND operations wait, so a peer
 * that does not read cannot make the session queue work (a storm of empty rounds stalls until it
 * reads). Honest peers never reach the bound, so two sessions with full output both ways keep
 * reading (no deadlock). Received-control bytes (everything but response Blob data) are charged
 * to the phase budget as they arrive: an item that cannot fit fails with ILTP_ERR_BUDGET at the
 * byte where the budget runs out. Memory comes from params.allocator only.
 * ------------------------------------------------------------------------------------------- */
typedef struct wk_iltp_store_ops {
    void *ctx;
    /* True if the store holds the Blob; *len (may be NULL) gets its data length and *seq (may be
     * NULL) the sequence number it was added under (1, 2, ...). */
    bool (*has)(void *ctx, const uint8_t hash[32], uint64_t *len, uint64_t *seq);
    /* The first stored hash greater than `after` in byte order (after NULL: the first hash) whose
     * sequence number is at most max_seq: true with out filled, false when there is none. */
    bool (*next)(void *ctx, const uint8_t *after, uint64_t max_seq, uint8_t out[32]);
    /* The highest sequence number given so far (0: an empty store). */
    uint64_t (*seq)(void *ctx);
} wk_iltp_store_ops;

/* Operations queued for output above which recv stops consuming. */
#define WK_ILTP_SESSION_OUTPUT_BOUND 8

typedef enum wk_iltp_session_event_kind {
    WK_ILTP_SESSION_BLOB_BEGIN = 1, /* recv: hash, length */
    WK_ILTP_SESSION_BLOB_DATA = 2,  /* recv: data, len at offset (data bytes before it) */
    WK_ILTP_SESSION_BLOB_END = 3,   /* recv: hash verified; commit, then wk_iltp_session_blob_stored */
    WK_ILTP_SESSION_BLOB_READ = 4   /* send: hash, length, offset: the data wanted next */
} wk_iltp_session_event_kind;

typedef struct wk_iltp_session_event {
    wk_iltp_session_event_kind kind;
    uint8_t hash[32];
    uint64_t length;                /* the Blob's data length */
    uint64_t offset;                /* DATA: of data; READ: the first byte wanted */
    const uint8_t *data;            /* DATA (borrowed until the next session call) */
    size_t len;
} wk_iltp_session_event;

typedef enum wk_iltp_side { WK_ILTP_SIDE0 = 0, WK_ILTP_SIDE1 = 1 } wk_iltp_side;

/* Proof assurance of a carrier (Lace-060), resolved by the host (wk_host_assurance_resolve). */
typedef enum wk_iltp_assurance {
    WK_ILTP_ASSURANCE_DISABLED = 0,          /* the zero-row proof block; no authority derived */
    WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL,  /* a Seal proof without Channel-Binding-Hash */
    WK_ILTP_ASSURANCE_CHANNEL_BOUND          /* a Seal proof with Channel-Binding-Hash (QUIB) */
} wk_iltp_assurance;
/* "Disabled", "ConfidentialChannel" or "ChannelBound" (static storage; "?" otherwise). */
const char *wk_iltp_assurance_name(wk_iltp_assurance a);

typedef enum wk_iltp_session_state {
    WK_ILTP_SESSION_PREFACING = 0,
    WK_ILTP_SESSION_ESTABLISHING,
    WK_ILTP_SESSION_ROUND,
    WK_ILTP_SESSION_FIXED_POINT,
    WK_ILTP_SESSION_CLOSED,
    WK_ILTP_SESSION_FAILED
} wk_iltp_session_state;

typedef struct wk_iltp_session_params {
    wk_iltp_side side;              /* listener/server side0, connector/client side1 */
    wk_iltp_form form;              /* WK_ILTP_FORM_1_0 or WK_ILTP_FORM_0_13 */
    const char *decode;             /* 0.13 offers (NULL: absent) */
    const char *encode;
    uint8_t seed[32];               /* carrier nonce seed (nonzero) */
    wk_iltp_store_ops store;        /* the store's index (all three operations required) */
    const uint8_t *operand;         /* this side's operand Blob data (copied); NULL: a default */
    size_t operand_len;
    uint64_t budget_prefacing;      /* received-control bytes per phase; 0: 64 KiB */
    uint64_t budget_establishment;  /* 0: 4 MiB */
    uint64_t budget_round;          /* 0: 256 MiB */
    uint64_t phase_timeout_ms;      /* 0: no deadline */
    int level;                      /* compression level (0: the token's default) */
    const wk_allocator *allocator;
    /* The carrier's proof assurance and, for ChannelBound, its 32-byte exporter (Lace-060):
     * Disabled sends the zero-row proof block and accepts it or a transcript-valid Seal of either
     * shape (deriving nothing); ConfidentialChannel and ChannelBound send a Seal proof of their
     * shape (wk_iltp_proof_encode) and require the peer's to be an exact proof of the same shape,
     * with, for ChannelBound, an equal Channel-Binding-Hash (else WK_ERR_ILTP_PROOF). */
    wk_iltp_assurance assurance;
    uint8_t channel_exporter[32];
    /* Optional: called with one line per item as it passes (incoming when decoded, outgoing when
     * queued), e.g. "facts 4 advertisement" or "record B <hash> 1024 response". */
    void (*trace)(void *ctx, bool outgoing, const char *line);
    void *trace_ctx;
} wk_iltp_session_params;

typedef struct wk_iltp_session_stats {
    wk_iltp_encoding enc_in, enc_out;
    uint64_t items_in, items_out;
    uint64_t raw_in, raw_out;       /* decoded ILTP bytes */
    uint64_t wire_in, wire_out;     /* carrier bytes */
    uint64_t blobs_in, blobs_out;   /* Blobs stored from the peer / sent to it */
    uint64_t data_in, data_out;     /* Blob data bytes received / sent */
    uint64_t rounds;
    uint64_t sessions;              /* logical sessions started (re-prefacing adds one) */
    /* what the current round still has to move (for progress lines) */
    uint64_t pending_in;            /* Blobs we requested and have not stored */
    uint64_t pending_out;           /* responses not yet completely written */
    uint64_t pending_out_bytes;     /* their data bytes still to write */
    bool proof_verified;            /* the current session's peer proof matched our enabled
                                     * assurance exactly (never under Disabled) */
} wk_iltp_session_stats;

typedef struct wk_iltp_session wk_iltp_session;

/* Creates a session; the local preface is queued at once. Memory comes from p->allocator (the
 * session's own, its codecs' and its queues'). Returns NULL with *err. */
wk_iltp_session *wk_iltp_session_create(const wk_iltp_session_params *p, uint64_t now_ms, wk_error *err);
/* Frees the session, its codecs and queues (NULL is fine). */
void wk_iltp_session_destroy(wk_iltp_session *s);
/* Carrier bytes received (out: NULL). Consumes in as far as it can:
 *   WK_NEED_INPUT   in is consumed
 *   WK_EVENT        a received Blob event (BEGIN, DATA, END) is ready in wk_iltp_session_event_get;
 *                   call again for the rest of in
 *   WK_NEED_OUTPUT  more than WK_ILTP_SESSION_OUTPUT_BOUND operations wait for output: drain send
 *                   and call again (in is kept where it stopped)
 *   WK_ERROR        the typed failure (the session is then FAILED; it stays failed and reports the
 *                   same error again) */
wk_result wk_iltp_session_recv(wk_iltp_session *s, wk_in *in, wk_out *out, wk_error *err);
/* Bytes to send into out. in: the Blob data asked for by the last BLOB_READ event (NULL or empty
 * otherwise; consumed as the response is written; at most what remains of that Blob is taken).
 *   WK_NEED_OUTPUT  out is full and more is pending
 *   WK_DONE         nothing is pending now
 *   WK_EVENT        BLOB_READ: the session needs Blob data to go on (asked again while in is empty)
 *   WK_ERROR        failure */
wk_result wk_iltp_session_send(wk_iltp_session *s, wk_in *in, wk_out *out, wk_error *err);
/* The event of the last recv or send that returned WK_EVENT (valid until the next call). */
const wk_iltp_session_event *wk_iltp_session_event_get(const wk_iltp_session *s);
/* The host stored the received Blob `hash` (failure NULL) or could not (failure: why; the session
 * fails with ILTP_ERR_STORE). A confirmation for a Blob of a replaced logical session is
 * ignored. May queue output (the fence). WK_OK, or the session's failure. */
wk_code wk_iltp_session_blob_stored(wk_iltp_session *s, const uint8_t hash[32], const wk_error *failure,
                                    wk_error *err);
/* True when send has bytes to give (or would ask for Blob data). */
bool wk_iltp_session_wants_send(const wk_iltp_session *s);
/* The peer's direction ended (rest: unread bytes, borrowed, never consumed; may be NULL). WK_DONE
 * when clean (boundary EOF at fixed point, the session becomes CLOSED); else WK_ERROR with
 * ILTP_ERR_PREMATURE_EOF or ILTP_ERR_TRUNCATED (the session is then FAILED). Calling it again
 * gives the same answer. */
wk_result wk_iltp_session_finish(wk_iltp_session *s, const wk_in *rest, wk_error *err);
/* The time now; checks the phase deadline. */
wk_code wk_iltp_session_tick(wk_iltp_session *s, uint64_t now_ms, wk_error *err);
/* The local store advanced: at fixed point a new round starts (our advertisement is queued);
 * during a round the next fixed point checks the store's sequence number again. */
void wk_iltp_session_store_changed(wk_iltp_session *s, uint64_t now_ms);
/* From now on no local store advance opens a round (the peer's rounds still run): the session
 * heads for a fixed point it can close at (an interrupted host). */
void wk_iltp_session_quiesce(wk_iltp_session *s);
/* Bounded completion at fixed point: queue the end mark (nothing for identity). */
wk_code wk_iltp_session_close(wk_iltp_session *s, wk_error *err);
/* Replaces the logical session from this side: a fresh preface follows the accepted output. A
 * Blob being received is dropped (the host aborts its writer). */
wk_code wk_iltp_session_repreface(wk_iltp_session *s, uint64_t now_ms, wk_error *err);
wk_iltp_session_state wk_iltp_session_state_get(const wk_iltp_session *s);
const char *wk_iltp_session_state_name(wk_iltp_session_state st);
void wk_iltp_session_stats_get(const wk_iltp_session *s, wk_iltp_session_stats *out);
/* True once the local end mark (or, for identity, the close) has been fully written. */
bool wk_iltp_session_closed_locally(const wk_iltp_session *s);
/* True once wk_iltp_session_close was called (our end mark is queued or written). */
bool wk_iltp_session_closing(const wk_iltp_session *s);
/* Bytes of output the session holds queued (control items not yet written). */
size_t wk_iltp_session_queued(const wk_iltp_session *s);

/* ---------------------------------------------------------------------------------------------
 * Peer proofs and channel binding (Lace-060 "Connected establishment is role ordered"): the proof
 * is one Seal over a Plex over the empty Blob. Our canonical construction (src/iltp/proof.c):
 *   🖧: S.<h>.H3\nBy: V.<k>.H3\nMark: <mark>\n
 *   🖧: P.<h>.H3\nGroup: lace\nApp: peer-proof\nName: session/side0|side1\n
 *   TAI: 0000000000:000000000\nChallenge-side0: <N0>\nChallenge-side1: <N1>\n
 *   [Channel-Binding-Hash: <B64A(BLAKE3(domain || NUL || exporter label || NUL || exporter32))>\n]
 *   🖧: B.<empty Blob hash>.H3\nData-Length: 0\n\n
 * The fields are checked exactly, in that order, each once; Name must be the proof phase's role;
 * the challenges are the B64A preface nonces of the current session pair.
 * Decisions where the seed is silent (docs/iltp.md, "Peer proofs"):
 * - The H3 signature suite is not in the seeds, so the Mark is not a signature: it is the B64A of
 *   BLAKE3 keyed by the sender's By-secret over the Plex hash and the Mark auxiliary input (the
 *   sender's own preface nonce), and By names V.<BLAKE3 derive_key of the By-secret>.H3. A
 *   receiver checks that both are well formed and cannot verify either. The P and S glyph hashes
 *   are written by the presumed rule (BLAKE3 of the content) and, as for every P/S record, not
 *   enforced on receipt.
 * ------------------------------------------------------------------------------------------- */
/* The QUIB exporter (RFC 8446 section 7.5 via gnutls_prf_rfc5705): 44-byte UTF-8 label, context
 * "iltp", 32 bytes. */
#define WK_ILTP_QUIB_EXPORTER_LABEL "lace-\xF0\x9F\x96\xA7/quib/peer-proof-channel-binding-v1"
#define WK_ILTP_QUIB_EXPORTER_LABEL_LEN 44
#define WK_ILTP_QUIB_EXPORTER_CONTEXT "iltp"
#define WK_ILTP_QUIB_EXPORTER_LEN 32
/* The domain string of the channel-binding hash. */
#define WK_ILTP_CHANNEL_BINDING_DOMAIN "lace-session-peer-proof-channel-binding/v1"

/* BLAKE3(WK_ILTP_CHANNEL_BINDING_DOMAIN || NUL || WK_ILTP_QUIB_EXPORTER_LABEL || NUL || exporter)
 * into out: the value whose B64A is Channel-Binding-Hash. Pure function. */
void wk_iltp_channel_binding_hash(const uint8_t exporter[WK_ILTP_QUIB_EXPORTER_LEN], uint8_t out[32]);

typedef struct wk_iltp_proof_params {
    wk_iltp_side side;                       /* the proof's author (Name: session/side0|side1) */
    uint8_t challenge_side0[WK_ILTP_NONCE_LEN]; /* side0's preface nonce of this session pair */
    uint8_t challenge_side1[WK_ILTP_NONCE_LEN]; /* side1's */
    bool bound;                              /* ChannelBound: with Channel-Binding-Hash */
    uint8_t exporter[WK_ILTP_QUIB_EXPORTER_LEN]; /* bound: the carrier's exporter */
    uint8_t by_secret[32];                   /* encoding only: the sender's By-secret */
} wk_iltp_proof_params;

/* Size of the proof record wk_iltp_proof_encode writes for *p (it depends only on p->bound). */
size_t wk_iltp_proof_size(const wk_iltp_proof_params *p);
/* Writes the whole proof Seal for *p into *out: WK_DONE, or WK_NEED_OUTPUT with out untouched.
 * The Mark's auxiliary input is the author's own challenge. Never fails otherwise. */
wk_result wk_iltp_proof_encode(const wk_iltp_proof_params *p, wk_out *out, wk_error *err);

typedef enum wk_iltp_proof_accept {
    WK_ILTP_PROOF_EXACT = 0,     /* exactly the shape of expect->bound, binding hash equal */
    WK_ILTP_PROOF_STRUCTURAL = 1 /* Disabled: either shape after transcript validation; a binding
                                  * hash must be well-formed B64A of 32 bytes, not compared */
} wk_iltp_proof_accept;

/* Checks a received proof item (a record; it borrows the item). expect->side is the author the
 * proof phase expects; challenges are the current pair's nonces; expect->exporter is compared
 * (through the binding hash) only for an EXACT bound check. Returns WK_OK, or WK_ERR_ILTP_PROOF
 * (PeerProtocol) with the item-stream offset of the first offending byte and what was wrong. */
wk_code wk_iltp_proof_check(const wk_iltp_item *item, const wk_iltp_proof_params *expect,
                            wk_iltp_proof_accept accept, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
