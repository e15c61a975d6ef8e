/* Lace-065 tokens, offer lists and selection. Selection compares token text only. */
#include <wirekit/iltp.h>
#include <string.h>

static const char *const tokens[] = {"identity", "deflate12c", "zstd20c"};

const char *wk_iltp_encoding_name(wk_iltp_encoding enc)
{
    if (enc < WK_ILTP_IDENTITY || enc > WK_ILTP_ZSTD20C) return NULL;
    return tokens[enc];
}

wk_iltp_encoding wk_iltp_encoding_lookup(const char *tok, size_t len)
{
    for (int i = 0; i < 3; i++)
        if (strlen(tokens[i]) == len && memcmp(tokens[i], tok, len) == 0) return (wk_iltp_encoding)i;
    return WK_ILTP_UNKNOWN;
}

/* Length of the token starting at text[pos] (up to a comma or the end). */
static size_t token_len(const char *text, size_t len, size_t pos)
{
    size_t e = pos;
    while (e < len && text[e] != ',') e++;
    return e - pos;
}

wk_code wk_iltp_offer_parse(const char *text, size_t len, wk_iltp_offer *out, wk_error *err)
{
    if (len == 0) return wk_error_set(err, WK_ERR_ILTP_OFFER, 0, "empty token list");
    unsigned count = 0;
    size_t pos = 0;
    for (;;) {
        size_t n = token_len(text, len, pos);
        if (n == 0) return wk_error_set(err, WK_ERR_ILTP_TOKEN, pos, "empty token");
        if (n > WK_ILTP_TOKEN_MAX)
            return wk_error_set(err, WK_ERR_ILTP_TOKEN, pos, "token longer than %d characters",
                                WK_ILTP_TOKEN_MAX);
        if (!(text[pos] >= 'a' && text[pos] <= 'z'))
            return wk_error_set(err, WK_ERR_ILTP_TOKEN, pos, "token must start with a-z");
        for (size_t i = pos + 1; i < pos + n; i++)
            if (!((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= '0' && text[i] <= '9')))
                return wk_error_set(err, WK_ERR_ILTP_TOKEN, i, "byte 0x%02x not allowed in a token",
                                    (unsigned char)text[i]);
        if (n == 8 && memcmp(text + pos, "identity", 8) == 0)
            return wk_error_set(err, WK_ERR_ILTP_OFFER, pos, "identity is implicit and may not be listed");
        /* duplicate of an earlier token? */
        for (size_t q = 0; q < pos;) {
            size_t m = token_len(text, len, q);
            if (m == n && memcmp(text + q, text + pos, n) == 0)
                return wk_error_set(err, WK_ERR_ILTP_OFFER, pos, "duplicate token '%.*s'", (int)n,
                                    text + pos);
            q += m + 1;
        }
        count++;
        pos += n;
        if (pos == len) break;
        pos++; /* comma */
        if (pos == len) return wk_error_set(err, WK_ERR_ILTP_TOKEN, pos, "empty token after ','");
    }
    out->text = text;
    out->len = len;
    out->count = count;
    return WK_OK;
}

bool wk_iltp_offer_next(const wk_iltp_offer *o, size_t *pos, const char **tok, size_t *tok_len)
{
    if (*pos >= o->len) return false;
    size_t n = token_len(o->text, o->len, *pos);
    *tok = o->text + *pos;
    *tok_len = n;
    *pos += n + 1;
    return true;
}

bool wk_iltp_offer_contains(const wk_iltp_offer *o, const char *tok, size_t tok_len)
{
    size_t pos = 0, n;
    const char *t;
    while (wk_iltp_offer_next(o, &pos, &t, &n))
        if (n == tok_len && memcmp(t, tok, n) == 0) return true;
    return false;
}

/* The token list for encs[0..n) into buf (OFFER_TEXT_MAX bytes): WK_OK with *len (0: nothing
 * listed), or WK_ERR_ARG for an encoding this build does not implement. */
#define OFFER_TEXT_MAX 64 /* "deflate12c,zstd20c" and room to spare */
static wk_code offer_build(const wk_iltp_encoding *encs, size_t n, char buf[OFFER_TEXT_MAX], size_t *len,
                           wk_error *err)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (encs[i] == WK_ILTP_IDENTITY) continue;
        const char *t = wk_iltp_encoding_name(encs[i]);
        if (!t) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "encs[%zu] is not an implemented encoding", i);
        size_t tl = strlen(t);
        wk_iltp_offer sofar = {buf, o, 0};
        if (wk_iltp_offer_contains(&sofar, t, tl)) continue; /* skip duplicates */
        if (o) buf[o++] = ',';
        memcpy(buf + o, t, tl);
        o += tl;
    }
    *len = o;
    return WK_OK;
}

wk_code wk_iltp_offer_size(const wk_iltp_encoding *encs, size_t n, size_t *size, wk_error *err)
{
    char buf[OFFER_TEXT_MAX];
    return offer_build(encs, n, buf, size, err);
}

wk_result wk_iltp_offer_encode(const wk_iltp_encoding *encs, size_t n, wk_out *out, wk_error *err)
{
    char buf[OFFER_TEXT_MAX];
    size_t len = 0;
    if (offer_build(encs, n, buf, &len, err) != WK_OK) return WK_ERROR;
    if (out->size - out->pos < len) return WK_NEED_OUTPUT;
    if (len) memcpy(out->dst + out->pos, buf, len);
    out->pos += len;
    return WK_DONE;
}

wk_iltp_encoding wk_iltp_offer_select(const wk_iltp_offer *a_encode, const wk_iltp_offer *b_decode,
                                const char **tok, size_t *tok_len)
{
    size_t pos = 0, n;
    const char *t;
    while (wk_iltp_offer_next(a_encode, &pos, &t, &n)) {
        if (wk_iltp_offer_contains(b_decode, t, n)) {
            *tok = t;
            *tok_len = n;
            return wk_iltp_encoding_lookup(t, n);
        }
    }
    *tok = tokens[WK_ILTP_IDENTITY];
    *tok_len = 8;
    return WK_ILTP_IDENTITY;
}
