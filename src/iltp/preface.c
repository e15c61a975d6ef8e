/* ILTP prefaces, both published forms (shared/specs/iltp.md "Prefaces"):
 *   1.0   "🪢: iltp/1.0 <nonce>\n"                                     exactly 59 bytes
 *   0.13  "🪢: iltp/0.13\nNonce: <nonce>\n[Decode: l\n][Encode: l\n]\n"  at most 1024 bytes
 * The lead "🪢: " commits the bytes to a preface: anything malformed after it is a preface error.
 * The parser works on a prefix: it returns WK_NEED_INPUT while the bytes seen can still become a
 * valid preface, and rejects as soon as they cannot. */
#include <wirekit/iltp.h>
#include <string.h>

#define LEAD WK_ILTP_PREFACE_LEAD
#define LEAD_LEN WK_ILTP_PREFACE_LEAD_LEN

static const uint8_t *find_lf(const uint8_t *p, const uint8_t *end)
{
    return memchr(p, '\n', (size_t)(end - p));
}

static wk_result fail(wk_error *err, wk_code code, size_t off, const char *what)
{
    wk_error_set(err, code, off, "%s", what);
    return WK_ERROR;
}

static wk_result parse_nonce(const uint8_t *data, size_t off, size_t n, uint8_t nonce[32],
                             wk_error *err)
{
    wk_error e;
    size_t got = 0;
    if (n != WK_ILTP_NONCE_TEXT_LEN)
        return fail(err, WK_ERR_ILTP_NONCE, off, "nonce is not 43 B64A characters");
    if (wk_b64a_decode((const char *)data + off, n, nonce, 32, &got, &e) != WK_OK) {
        wk_error_set(err, WK_ERR_ILTP_NONCE, off + (e.has_offset ? e.offset : 0),
                     "nonce is not canonical B64A: %s", e.msg);
        return WK_ERROR;
    }
    uint8_t any = 0;
    for (int i = 0; i < 32; i++) any |= nonce[i];
    if (!any) return fail(err, WK_ERR_ILTP_NONCE, off, "nonce is all zero");
    return WK_DONE;
}

/* Checks that a not-yet-terminated line is still a possible field line. */
static bool has_cr(const uint8_t *p, size_t n) { return memchr(p, '\r', n) != NULL; }

/* The parser over data[0..len): offsets from data[0]; on WK_DONE p->len bytes are the preface. */
static wk_result preface_parse(const uint8_t *data, size_t len, wk_iltp_form form, wk_iltp_preface *p,
                               wk_error *err)
{
    size_t lead = len < LEAD_LEN ? len : LEAD_LEN;
    for (size_t i = 0; i < lead; i++)
        if (data[i] != (uint8_t)LEAD[i]) return fail(err, WK_ERR_ILTP_PREFACE, i, "not a preface");
    if (len < LEAD_LEN) return WK_NEED_INPUT;

    /* "iltp/" then the version, ended by ' ' (1.0) or LF (0.13) */
    static const char proto[] = "iltp/";
    for (size_t i = 0; i < 5; i++) {
        if (LEAD_LEN + i >= len) return WK_NEED_INPUT;
        if (data[LEAD_LEN + i] != (uint8_t)proto[i])
            return fail(err, WK_ERR_ILTP_PREFACE, LEAD_LEN + i, "expected 'iltp/' after the glyph");
    }
    size_t v = LEAD_LEN + 5, ve = v;
    while (ve < len && ve - v <= 16 &&
           ((data[ve] >= '0' && data[ve] <= '9') || data[ve] == '.'))
        ve++;
    if (ve == len) return WK_NEED_INPUT;
    if (ve - v > 16 || ve == v || (data[ve] != ' ' && data[ve] != '\n'))
        return fail(err, WK_ERR_ILTP_PREFACE, ve, "malformed version");
    size_t vlen = ve - v;
    bool is10 = vlen == 3 && memcmp(data + v, "1.0", 3) == 0 && data[ve] == ' ';
    bool is013 = vlen == 4 && memcmp(data + v, "0.13", 4) == 0 && data[ve] == '\n';
    if (!is10 && !is013) return fail(err, WK_ERR_ILTP_VERSION, v, "unsupported version");
    if ((is10 && form == WK_ILTP_FORM_0_13) || (is013 && form == WK_ILTP_FORM_1_0))
        return fail(err, WK_ERR_ILTP_VERSION, v, "unsupported version: other preface form");

    memset(p, 0, sizeof *p);
    if (is10) {
        /* 43 B64A characters then LF, checked byte by byte so that the verdict does not depend
         * on how the bytes arrive */
        size_t n0 = ve + 1, nend = n0 + WK_ILTP_NONCE_TEXT_LEN;
        for (size_t i = n0; i < len && i <= nend; i++) {
            uint8_t c = data[i];
            if (i == nend) {
                if (c != '\n') return fail(err, WK_ERR_ILTP_PREFACE, i, "expected LF after the nonce");
                break;
            }
            bool b64a = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || c == '_' ||
                        (c >= 'a' && c <= 'z') || c == '~';
            if (!b64a)
                return fail(err, WK_ERR_ILTP_NONCE, i,
                            c == '\n' ? "nonce is shorter than 43 B64A characters"
                                      : "nonce character outside the B64A alphabet");
        }
        if (len <= nend) return WK_NEED_INPUT;
        if (parse_nonce(data, n0, WK_ILTP_NONCE_TEXT_LEN, p->nonce, err) != WK_DONE) return WK_ERROR;
        p->form = WK_ILTP_FORM_1_0;
        p->len = nend + 1;
        return WK_DONE;
    }

    /* form 0.13: field lines after the version line */
    size_t pos = ve + 1;
    int stage = 0; /* 0: want Nonce, 1: Decode/Encode/end, 2: Encode/end, 3: end */
    for (;;) {
        if (pos >= WK_ILTP_PREFACE_MAX)
            return fail(err, WK_ERR_ILTP_PREFACE_TOO_LONG, WK_ILTP_PREFACE_MAX, "preface longer than 1024 bytes");
        if (pos == len) return WK_NEED_INPUT;
        /* Checks run in byte order so that the verdict does not depend on how the bytes
         * arrive: the field name as far as it goes, a CR, then the length cap. */
        size_t lim = len < WK_ILTP_PREFACE_MAX ? len : WK_ILTP_PREFACE_MAX;
        const uint8_t *lf = find_lf(data + pos, data + lim);
        size_t avail = lf ? (size_t)(lf - data) - pos : lim - pos;
        if (avail > 0) {
            static const char *const names[] = {"Nonce: ", "Decode: ", "Encode: "};
            size_t best = 0;
            for (int i = 0; i < 3; i++) {
                size_t nl = strlen(names[i]), m = avail < nl ? avail : nl, k = 0;
                while (k < m && data[pos + k] == (uint8_t)names[i][k]) k++;
                if (k == m) { best = SIZE_MAX; break; }
                if (k > best) best = k;
            }
            if (best != SIZE_MAX) {
                const uint8_t *cr = memchr(data + pos, '\r', best + 1);
                if (cr) return fail(err, WK_ERR_ILTP_PREFACE, (size_t)(cr - data), "CR in preface");
                return fail(err, WK_ERR_ILTP_PREFACE, pos + best, "unknown preface field");
            }
        }
        if (has_cr(data + pos, avail)) {
            const uint8_t *cr = memchr(data + pos, '\r', avail);
            return fail(err, WK_ERR_ILTP_PREFACE, (size_t)(cr - data), "CR in preface");
        }
        if (!lf) {
            if (len >= WK_ILTP_PREFACE_MAX)
                return fail(err, WK_ERR_ILTP_PREFACE_TOO_LONG, WK_ILTP_PREFACE_MAX,
                            "preface longer than 1024 bytes");
            return WK_NEED_INPUT;
        }
        size_t line_end = (size_t)(lf - data); /* index of LF, below the cap */
        if (avail == 0) { /* bare LF ends the preface */
            if (stage == 0) return fail(err, WK_ERR_ILTP_PREFACE, pos, "missing Nonce field");
            p->form = WK_ILTP_FORM_0_13;
            p->len = line_end + 1;
            return WK_DONE;
        }
        const char *line = (const char *)data + pos;
        if (avail >= 7 && memcmp(line, "Nonce: ", 7) == 0) {
            if (stage != 0) return fail(err, WK_ERR_ILTP_PREFACE, pos, "repeated Nonce field");
            if (parse_nonce(data, pos + 7, avail - 7, p->nonce, err) != WK_DONE) return WK_ERROR;
            stage = 1;
        } else if (avail >= 8 && (memcmp(line, "Decode: ", 8) == 0 || memcmp(line, "Encode: ", 8) == 0)) {
            bool dec = line[0] == 'D';
            if (stage == 0) return fail(err, WK_ERR_ILTP_PREFACE, pos, "Nonce must be the first field");
            if ((dec && stage != 1) || (!dec && stage == 3))
                return fail(err, WK_ERR_ILTP_PREFACE, pos,
                            dec ? "Decode repeated or after Encode" : "repeated Encode field");
            wk_iltp_offer *o = dec ? &p->decode : &p->encode;
            wk_error e;
            if (wk_iltp_offer_parse(line + 8, avail - 8, o, &e) != WK_OK) {
                wk_error_set(err, e.code, pos + 8 + (e.has_offset ? e.offset : 0), "%s field: %s",
                             dec ? "Decode" : "Encode", e.msg);
                return WK_ERROR;
            }
            stage = dec ? 2 : 3;
        } else {
            return fail(err, WK_ERR_ILTP_PREFACE, pos, "unknown preface field");
        }
        pos = line_end + 1;
    }
}

/* Builds the preface into buf (at most WK_ILTP_PREFACE_MAX bytes): WK_OK with *len, or the code
 * for invalid input (whatever the room the caller has). */
static wk_code preface_build(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN], const char *decode,
                             const char *encode, uint8_t buf[WK_ILTP_PREFACE_MAX + 64], size_t *len,
                             wk_error *err)
{
    uint8_t any = 0;
    for (int i = 0; i < 32; i++) any |= nonce[i];
    if (!any) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "nonce is all zero");
    char nt[WK_ILTP_NONCE_TEXT_LEN];
    wk_b64a_encode(nonce, 32, nt);
    size_t n = 0;
#define PUT(s, l) do { memcpy(buf + n, (s), (l)); n += (l); } while (0)
    PUT(LEAD, LEAD_LEN);
    if (form == WK_ILTP_FORM_1_0) {
        PUT("iltp/1.0 ", 9);
        PUT(nt, 43);
        PUT("\n", 1);
    } else if (form == WK_ILTP_FORM_0_13) {
        PUT("iltp/0.13\nNonce: ", 17);
        PUT(nt, 43);
        PUT("\n", 1);
        const char *lists[2] = {decode, encode};
        const char *names[2] = {"Decode: ", "Encode: "};
        for (int i = 0; i < 2; i++) {
            if (!lists[i] || !*lists[i]) continue;
            size_t l = strlen(lists[i]);
            wk_iltp_offer o;
            if (l > WK_ILTP_PREFACE_MAX)
                return wk_error_set(err, WK_ERR_ILTP_PREFACE_TOO_LONG, WK_NO_OFFSET, "list too long");
            wk_code c = wk_iltp_offer_parse(lists[i], l, &o, err);
            if (c != WK_OK) return c;
            if (n + 8 + l + 2 > WK_ILTP_PREFACE_MAX)
                return wk_error_set(err, WK_ERR_ILTP_PREFACE_TOO_LONG, WK_NO_OFFSET, "preface longer than 1024 bytes");
            PUT(names[i], 8);
            PUT(lists[i], l);
            PUT("\n", 1);
        }
        PUT("\n", 1);
    } else {
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown preface form");
    }
#undef PUT
    *len = n;
    return WK_OK;
}

wk_code wk_iltp_preface_size(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN], const char *decode,
                             const char *encode, size_t *size, wk_error *err)
{
    uint8_t buf[WK_ILTP_PREFACE_MAX + 64];
    return preface_build(form, nonce, decode, encode, buf, size, err);
}

wk_result wk_iltp_preface_encode(wk_iltp_form form, const uint8_t nonce[WK_ILTP_NONCE_LEN], const char *decode,
                                 const char *encode, wk_out *out, wk_error *err)
{
    uint8_t buf[WK_ILTP_PREFACE_MAX + 64];
    size_t n = 0;
    if (preface_build(form, nonce, decode, encode, buf, &n, err) != WK_OK) return WK_ERROR;
    if (out->size - out->pos < n) return WK_NEED_OUTPUT;
    memcpy(out->dst + out->pos, buf, n);
    out->pos += n;
    return WK_DONE;
}

wk_code wk_iltp_nonce_pair_check(const uint8_t a[WK_ILTP_NONCE_LEN], const uint8_t b[WK_ILTP_NONCE_LEN],
                                 wk_error *err)
{
    if (memcmp(a, b, WK_ILTP_NONCE_LEN) != 0) return WK_OK;
    return wk_error_set(err, WK_ERR_ILTP_SAME_NONCE, WK_NO_OFFSET, "both prefaces of the pair carry the same nonce");
}

wk_result wk_iltp_preface_parse(wk_in *in, wk_iltp_form form, wk_iltp_preface *p, wk_error *err)
{
    if (!in || in->pos > in->size || (!in->src && in->size)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "preface_parse: an invalid input view");
        return WK_ERROR;
    }
    const uint8_t *data = in->src ? in->src + in->pos : NULL;
    wk_result r = preface_parse(data, in->size - in->pos, form, p, err);
    if (r == WK_DONE) in->pos += p->len;
    return r;
}
