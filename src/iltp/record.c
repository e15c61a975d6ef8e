/* H3 records: canonical Blob construction and the (presumed) P/S hash rule. Parsing lives in the
 * item decoder (item.c), which must find where a record ends anyway. */
#include "iltp_internal.h"
#include <stdio.h>
#include <string.h>

#define REF_HASH_AT 2 /* after "X." */
#define REF_TAIL ".H3"
_Static_assert(WK_ILTP_REF_LEN == REF_HASH_AT + WK_ILTP_NONCE_TEXT_LEN + sizeof REF_TAIL - 1,
               "a reference is X.<43 B64A characters>.H3");
_Static_assert(WK_ILTP_RECORD_LEAD_LEN == sizeof WK_ILTP_RECORD_LEAD - 1, "the record glyph and ': '");
/* "🖧: B.<hash>.H3\n" */
#define GLYPH_LINE_LEN (WK_ILTP_RECORD_LEAD_LEN + WK_ILTP_REF_LEN + 1)

void wk_iltp_ref_format(char type, const uint8_t hash[32], char out[WK_ILTP_REF_LEN])
{
    out[0] = type;
    out[1] = '.';
    wk_b64a_encode(hash, 32, out + REF_HASH_AT);
    memcpy(out + REF_HASH_AT + WK_ILTP_NONCE_TEXT_LEN, REF_TAIL, sizeof REF_TAIL - 1);
}

wk_result wk_iltp_ref_parse(wk_in *in, char type, uint8_t hash[32], wk_error *err)
{
    if (!in || in->pos > in->size || (!in->src && in->size)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "ref_parse: an invalid input view");
        return WK_ERROR;
    }
    const uint8_t *p = in->src ? in->src + in->pos : NULL;
    size_t n = in->size - in->pos, tail = REF_HASH_AT + WK_ILTP_NONCE_TEXT_LEN;
    /* in byte order: the type, the dot, the hash text, the tail, then the length */
    if (n > 0 && p[0] != (uint8_t)type)
        return wk_error_set(err, WK_ERR_ILTP_RECORD, 0, "not a %c. reference", type), WK_ERROR;
    if (n > 1 && p[1] != '.') return wk_error_set(err, WK_ERR_ILTP_RECORD, 1, "expected '.' after the type"), WK_ERROR;
    for (size_t i = 0; i < sizeof REF_TAIL - 1 && tail + i < n; i++)
        if (p[tail + i] != (uint8_t)REF_TAIL[i])
            return wk_error_set(err, WK_ERR_ILTP_RECORD, tail + i, "a reference ends with .H3"), WK_ERROR;
    if (n < WK_ILTP_REF_LEN)
        return wk_error_set(err, WK_ERR_ILTP_RECORD, n, "a reference is %d bytes", WK_ILTP_REF_LEN), WK_ERROR;
    size_t got;
    uint8_t h[32];
    wk_error e;
    if (wk_b64a_decode((const char *)p + REF_HASH_AT, WK_ILTP_NONCE_TEXT_LEN, h, 32, &got, &e) != WK_OK) {
        wk_error_set(err, WK_ERR_ILTP_RECORD, REF_HASH_AT + (e.has_offset ? e.offset : 0),
                     "the reference's hash is not canonical B64A: %s", e.msg);
        return WK_ERROR;
    }
    memcpy(hash, h, 32);
    in->pos += WK_ILTP_REF_LEN;
    return WK_DONE;
}

size_t wk_iltp_blob_content_head_format(uint64_t len, char out[WK_ILTP_BLOB_CONTENT_HEAD_MAX])
{
    return (size_t)snprintf(out, WK_ILTP_BLOB_CONTENT_HEAD_MAX, "Data-Length: %llu\n\n", (unsigned long long)len);
}

void wk_iltp_blob_hash(const uint8_t *data, size_t len, uint8_t hash[32])
{
    char head[WK_ILTP_BLOB_CONTENT_HEAD_MAX];
    size_t hl = wk_iltp_blob_content_head_format(len, head);
    wk_blake3_hasher h;
    wk_blake3_init(&h);
    wk_blake3_update(&h, head, hl);
    wk_blake3_update(&h, data, len);
    wk_blake3_finalize(&h, hash, 32);
}

size_t wk_iltp_blob_head_format(const uint8_t hash[32], size_t len, uint8_t head[WK_ILTP_BLOB_HEAD_MAX])
{
    memcpy(head, WK_ILTP_RECORD_LEAD, WK_ILTP_RECORD_LEAD_LEN);
    wk_iltp_ref_format('B', hash, (char *)head + WK_ILTP_RECORD_LEAD_LEN);
    head[GLYPH_LINE_LEN - 1] = '\n';
    char ch[WK_ILTP_BLOB_CONTENT_HEAD_MAX];
    size_t hl = wk_iltp_blob_content_head_format(len, ch);
    memcpy(head + GLYPH_LINE_LEN, ch, hl);
    return GLYPH_LINE_LEN + hl;
}

size_t wk_iltp_blob_record_size(size_t len)
{
    char ch[WK_ILTP_BLOB_CONTENT_HEAD_MAX];
    return GLYPH_LINE_LEN + wk_iltp_blob_content_head_format(len, ch) + len;
}

wk_result wk_iltp_blob_encode(const uint8_t *data, size_t len, wk_out *out, wk_error *err)
{
    if (len > WK_ILTP_BLOB_DATA_CAP) {
        wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "%s: Blob data of %zu bytes is over 32 MiB",
                     wk_error_name(WK_ERR_ILTP_BLOB_TOO_LARGE), len);
        return WK_ERROR;
    }
    size_t need = wk_iltp_blob_record_size(len);
    if (out->size - out->pos < need) return WK_NEED_OUTPUT;
    uint8_t hash[32], head[WK_ILTP_BLOB_HEAD_MAX];
    wk_iltp_blob_hash(data, len, hash);
    size_t hl = wk_iltp_blob_head_format(hash, len, head);
    memcpy(out->dst + out->pos, head, hl);
    if (len) memcpy(out->dst + out->pos + hl, data, len);
    out->pos += hl + len;
    return WK_DONE;
}

static bool blob_ok(const wk_iltp_blob *b)
{
    uint8_t h[32];
    wk_iltp_blob_hash(b->data, b->len, h);
    return memcmp(h, b->hash, 32) == 0;
}

static bool plex_ok(const wk_iltp_plex *p)
{
    uint8_t h[32];
    wk_blake3(p->content, p->content_len, h);
    return memcmp(h, p->hash, 32) == 0 && blob_ok(&p->blob);
}

bool wk_iltp_record_hash_check(const wk_iltp_record *r)
{
    if (r->type == 'B') return blob_ok(&r->blob);
    if (r->type == 'P') return plex_ok(&r->plex);
    if (r->type == 'S') {
        uint8_t h[32];
        wk_blake3(r->seal.content, r->seal.content_len, h);
        return memcmp(h, r->seal.hash, 32) == 0 && plex_ok(&r->seal.plex);
    }
    return false;
}
