/* Lace-060 peer proofs: the Seal over a Plex over the empty Blob that each side sends in
 * establishment, and the channel-binding hash of ChannelBound assurance. Sans-I/O: the carrier
 * supplies the exporter, the session the nonces. The construction and what a receiver can and
 * cannot verify are in iltp.h ("Peer proofs and channel binding") and docs/iltp.md. */
#include "iltp_internal.h"
#include <stdio.h>
#include <string.h>

#define GLYPH WK_ILTP_RECORD_LEAD           /* "🖧: " */
#define TAI_ZERO "0000000000:000000000"
#define MARK_DOMAIN "lace-wirekit/iltp/peer-proof-mark/v1"
#define BY_DOMAIN "lace-wirekit/iltp/peer-proof-by-key/v1"

void wk_iltp_channel_binding_hash(const uint8_t exporter[WK_ILTP_QUIB_EXPORTER_LEN], uint8_t out[32])
{
    static const uint8_t nul = 0;
    wk_blake3_hasher h;
    wk_blake3_init(&h);
    wk_blake3_update(&h, WK_ILTP_CHANNEL_BINDING_DOMAIN, sizeof WK_ILTP_CHANNEL_BINDING_DOMAIN - 1);
    wk_blake3_update(&h, &nul, 1);
    wk_blake3_update(&h, WK_ILTP_QUIB_EXPORTER_LABEL, WK_ILTP_QUIB_EXPORTER_LABEL_LEN);
    wk_blake3_update(&h, &nul, 1);
    wk_blake3_update(&h, exporter, WK_ILTP_QUIB_EXPORTER_LEN);
    wk_blake3_finalize(&h, out, 32);
}

/* The Plex field lines for p (exactly what the receiver expects), into dst; returns the length.
 * dst holds at least PLEX_FIELDS_MAX bytes. */
#define PLEX_FIELDS_MAX 400
static size_t plex_fields(const wk_iltp_proof_params *p, char *dst)
{
    char n0[WK_ILTP_NONCE_TEXT_LEN + 1], n1[WK_ILTP_NONCE_TEXT_LEN + 1], cb[44] = "";
    wk_b64a_encode(p->challenge_side0, 32, n0);
    n0[43] = 0;
    wk_b64a_encode(p->challenge_side1, 32, n1);
    n1[43] = 0;
    if (p->bound) {
        uint8_t h[32];
        wk_iltp_channel_binding_hash(p->exporter, h);
        wk_b64a_encode(h, 32, cb);
        cb[43] = 0;
    }
    int n = snprintf(dst, PLEX_FIELDS_MAX,
                     "Group: lace\nApp: peer-proof\nName: session/side%d\nTAI: " TAI_ZERO "\n"
                     "Challenge-side0: %s\nChallenge-side1: %s\n%s%s%s",
                     p->side == WK_ILTP_SIDE0 ? 0 : 1, n0, n1, p->bound ? "Channel-Binding-Hash: " : "", cb,
                     p->bound ? "\n" : "");
    return (size_t)n;
}

/* "🖧: X.<hash>.H3\n" */
static size_t glyph_line(char type, const uint8_t h[32], uint8_t *dst)
{
    memcpy(dst, GLYPH, WK_ILTP_RECORD_LEAD_LEN);
    wk_iltp_ref_format(type, h, (char *)dst + WK_ILTP_RECORD_LEAD_LEN);
    dst[WK_ILTP_RECORD_LEAD_LEN + WK_ILTP_REF_LEN] = '\n';
    return WK_ILTP_RECORD_LEAD_LEN + WK_ILTP_REF_LEN + 1;
}

#define GLYPH_LINE_LEN (WK_ILTP_RECORD_LEAD_LEN + WK_ILTP_REF_LEN + 1)  /* 55 */
#define EMPTY_BLOB_LEN (GLYPH_LINE_LEN + 16)                    /* + "Data-Length: 0\n\n" */
#define BY_LINE_LEN (4 + WK_ILTP_REF_LEN + 1)                   /* "By: V.<43>.H3\n" */
#define MARK_LINE_LEN (6 + 43 + 1)                              /* "Mark: <43>\n" */

size_t wk_iltp_proof_size(const wk_iltp_proof_params *p)
{
    char f[PLEX_FIELDS_MAX];
    return GLYPH_LINE_LEN + BY_LINE_LEN + MARK_LINE_LEN + GLYPH_LINE_LEN + plex_fields(p, f) + EMPTY_BLOB_LEN;
}

wk_result wk_iltp_proof_encode(const wk_iltp_proof_params *p, wk_out *out, wk_error *err)
{
    (void)err;
    size_t need = wk_iltp_proof_size(p);
    if (out->size - out->pos < need) return WK_NEED_OUTPUT;
    uint8_t *seal = out->dst + out->pos;
    /* built back to front: the empty Blob, the Plex around it, the Seal around that */
    uint8_t *plex = seal + GLYPH_LINE_LEN + BY_LINE_LEN + MARK_LINE_LEN;
    char fields[PLEX_FIELDS_MAX];
    size_t fl = plex_fields(p, fields);
    uint8_t *pc = plex + GLYPH_LINE_LEN; /* the Plex content: fields, then the Blob */
    memcpy(pc, fields, fl);
    uint8_t eh[32];
    wk_iltp_blob_hash(NULL, 0, eh);
    size_t bl = glyph_line('B', eh, pc + fl);
    memcpy(pc + fl + bl, "Data-Length: 0\n\n", 16);
    size_t plex_content = fl + EMPTY_BLOB_LEN;
    uint8_t ph[32];
    wk_blake3(pc, plex_content, ph);
    glyph_line('P', ph, plex);
    /* By and Mark (see iltp.h: not a signature) */
    uint8_t key[32], mark[32];
    wk_blake3_hasher h;
    wk_blake3_init_derive_key(&h, BY_DOMAIN, sizeof BY_DOMAIN - 1);
    wk_blake3_update(&h, p->by_secret, 32);
    wk_blake3_finalize(&h, key, 32);
    const uint8_t *aux = p->side == WK_ILTP_SIDE0 ? p->challenge_side0 : p->challenge_side1;
    static const uint8_t nul = 0;
    wk_blake3_init_keyed(&h, p->by_secret);
    wk_blake3_update(&h, MARK_DOMAIN, sizeof MARK_DOMAIN - 1);
    wk_blake3_update(&h, &nul, 1);
    wk_blake3_update(&h, ph, 32);
    wk_blake3_update(&h, aux, 32);
    wk_blake3_finalize(&h, mark, 32);
    uint8_t *sc = seal + GLYPH_LINE_LEN; /* the Seal content */
    memcpy(sc, "By: ", 4);
    wk_iltp_ref_format('V', key, (char *)sc + 4);
    sc[BY_LINE_LEN - 1] = '\n';
    memcpy(sc + BY_LINE_LEN, "Mark: ", 6);
    wk_b64a_encode(mark, 32, (char *)sc + BY_LINE_LEN + 6);
    sc[BY_LINE_LEN + MARK_LINE_LEN - 1] = '\n';
    uint8_t sh[32];
    wk_blake3(sc, need - GLYPH_LINE_LEN, sh);
    glyph_line('S', sh, seal);
    out->pos += need;
    return WK_DONE;
}

/* ---- checking ------------------------------------------------------------------------------ */
static wk_code bad(wk_error *err, const wk_iltp_item *it, const uint8_t *at, const char *what)
{
    uint64_t off = it->offset + (uint64_t)(at >= it->bytes && at <= it->bytes + it->len ? at - it->bytes : 0);
    return wk_error_set(err, WK_ERR_ILTP_PROOF, off, "peer proof: %s", what);
}

/* The next field line of the Plex: name and value slices; false at the end. */
static bool next_field(const uint8_t **p, const uint8_t *end, const uint8_t **name, size_t *nl,
                       const uint8_t **val, size_t *vl, const uint8_t **line)
{
    if (*p >= end) return false;
    const uint8_t *lf = memchr(*p, '\n', (size_t)(end - *p));
    if (!lf) return false; /* the decoder guarantees LF-terminated lines */
    const uint8_t *colon = memchr(*p, ':', (size_t)(lf - *p));
    *line = *p;
    *name = *p;
    *nl = colon ? (size_t)(colon - *p) : (size_t)(lf - *p);
    *val = colon && colon + 2 <= lf ? colon + 2 : lf;
    *vl = (size_t)(lf - *val);
    *p = lf + 1;
    return true;
}

static bool eq(const uint8_t *a, size_t al, const char *b)
{
    size_t bl = strlen(b);
    return al == bl && memcmp(a, b, bl) == 0;
}

static bool b64a32(const uint8_t *v, size_t vl, uint8_t out[32])
{
    size_t got;
    return vl == 43 && wk_b64a_decode((const char *)v, 43, out, 32, &got, NULL) == WK_OK && got == 32;
}

wk_code wk_iltp_proof_check(const wk_iltp_item *it, const wk_iltp_proof_params *expect,
                            wk_iltp_proof_accept accept, wk_error *err)
{
    if (it->kind != WK_ILTP_ITEM_RECORD || it->record.type != 'S')
        return bad(err, it, it->bytes, it->kind == WK_ILTP_ITEM_FACTS ? "the zero-row block where a Seal proof is required"
                                                                      : "not a Seal");
    const wk_iltp_seal *s = &it->record.seal;
    if (!s->mark_len) return bad(err, it, s->mark, "empty Mark");
    if (s->plex.blob.len != 0) return bad(err, it, s->plex.blob.data, "the Plex must hold the empty Blob");
    const uint8_t *p = s->plex.fields, *end = p + s->plex.fields_len;
    const uint8_t *name, *val, *line;
    size_t nl, vl;
    char want[32];
    static const char *const fixed[] = {"Group", "lace", "App", "peer-proof", "Name", NULL, "TAI", TAI_ZERO};
    for (int i = 0; i < 4; i++) {
        if (!next_field(&p, end, &name, &nl, &val, &vl, &line)) return bad(err, it, end, "missing Plex fields");
        if (!eq(name, nl, fixed[2 * i])) {
            char m[80];
            snprintf(m, sizeof m, "expected field %s", fixed[2 * i]);
            return bad(err, it, line, m);
        }
        const char *v = fixed[2 * i + 1];
        if (!v) {
            snprintf(want, sizeof want, "session/side%d", expect->side == WK_ILTP_SIDE0 ? 0 : 1);
            v = want;
        }
        if (!eq(val, vl, v)) {
            char m[100];
            snprintf(m, sizeof m, "%s must be %s", fixed[2 * i], v);
            return bad(err, it, val, m);
        }
    }
    const uint8_t *ch[2] = {expect->challenge_side0, expect->challenge_side1};
    static const char *const chn[2] = {"Challenge-side0", "Challenge-side1"};
    for (int i = 0; i < 2; i++) {
        uint8_t n[32];
        if (!next_field(&p, end, &name, &nl, &val, &vl, &line)) return bad(err, it, end, "missing Plex fields");
        if (!eq(name, nl, chn[i])) {
            char m[80];
            snprintf(m, sizeof m, "expected field %s", chn[i]);
            return bad(err, it, line, m);
        }
        if (!b64a32(val, vl, n) || memcmp(n, ch[i], 32) != 0) {
            char m[100];
            snprintf(m, sizeof m, "%s is not this session's side%d preface nonce", chn[i], i);
            return bad(err, it, val, m);
        }
    }
    bool has_binding = false;
    if (next_field(&p, end, &name, &nl, &val, &vl, &line)) {
        if (!eq(name, nl, "Channel-Binding-Hash")) return bad(err, it, line, "a field the proof may not carry");
        uint8_t h[32];
        if (!b64a32(val, vl, h)) return bad(err, it, val, "Channel-Binding-Hash is not B64A of 32 bytes");
        has_binding = true;
        if (accept == WK_ILTP_PROOF_EXACT && expect->bound) {
            uint8_t mine[32];
            wk_iltp_channel_binding_hash(expect->exporter, mine);
            if (memcmp(h, mine, 32) != 0)
                return bad(err, it, val, "Channel-Binding-Hash differs from our exporter's (another channel)");
        }
        if (next_field(&p, end, &name, &nl, &val, &vl, &line)) return bad(err, it, line, "a field the proof may not carry");
    }
    if (accept == WK_ILTP_PROOF_EXACT && has_binding != expect->bound)
        return bad(err, it, has_binding ? line : end,
                   expect->bound ? "no Channel-Binding-Hash (ChannelBound expects one)"
                                 : "a Channel-Binding-Hash (ConfidentialChannel expects none)");
    return WK_OK;
}
