/* Fact lines and blocks (Lace-060, rules of shared/specs/iltp.md):
 *   Predicate('c1','c2')\n ... then a bare LF; a lone LF is the zero-row block.
 * Predicate [A-Za-z][A-Za-z0-9_]*; constants quoted with ', separated by single commas; inside:
 * UTF-8 without ', \ or C0 controls; the line in NFC (checked with utf8proc). */
#include "iltp_internal.h"
#include <utf8proc.h>
#include <string.h>

static bool is_alpha(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

wk_code wk_iltp_text_nfc_check(const uint8_t *p, size_t n, size_t *bad, const char **why)
{
    size_t b = 0;
    if (!wk_utf8_valid(p, n, &b)) {
        *bad = b;
        *why = "invalid UTF-8";
        return WK_ERR_ILTP_UTF8;
    }
    /* ASCII is always NFC */
    size_t i = 0;
    while (i < n && p[i] < 0x80) i++;
    if (i == n) return WK_OK;
    /* Canonical decomposition + composition of the whole text into a fixed scratch buffer, then
     * compare with the original code points. 1024 bytes decompose to at most 6144 code points. */
    enum { SCRATCH = 8192 };
    utf8proc_int32_t buf[SCRATCH];
    const utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    utf8proc_ssize_t m = utf8proc_decompose(p, (utf8proc_ssize_t)n, buf, SCRATCH, opt);
    if (m < 0 || m > SCRATCH) {
        *bad = 0;
        *why = m < 0 ? "invalid UTF-8" : "text too long for the NFC check";
        return WK_ERR_ILTP_UTF8;
    }
    m = utf8proc_normalize_utf32(buf, m, opt);
    if (m < 0) { *bad = 0; *why = "NFC normalization failed"; return WK_ERR_ILTP_UTF8; }
    size_t pos = 0;
    utf8proc_ssize_t k = 0;
    while (pos < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t l = utf8proc_iterate(p + pos, (utf8proc_ssize_t)(n - pos), &cp);
        if (l <= 0 || k >= m || buf[k] != cp) {
            *bad = pos;
            *why = "text is not in Unicode NFC";
            return WK_ERR_ILTP_UTF8;
        }
        pos += (size_t)l;
        k++;
    }
    if (k != m) { *bad = n; *why = "text is not in Unicode NFC"; return WK_ERR_ILTP_UTF8; }
    return WK_OK;
}

wk_code wk_iltp_fact_line_check(const uint8_t *p, size_t n, size_t *bad, const char **why,
                                size_t *arity)
{
    size_t i = 0;
    bool non_ascii = false;
    if (n > WK_ILTP_FACT_LINE_CAP) {
        *bad = WK_ILTP_FACT_LINE_CAP;
        *why = "fact line longer than 1024 bytes";
        return WK_ERR_ILTP_FACT_LINE_TOO_LONG;
    }
    if (n == 0 || !is_alpha(p[0])) { *bad = 0; *why = "predicate must start with A-Z or a-z"; return WK_ERR_ILTP_FACT; }
    while (i < n && (is_alpha(p[i]) || is_digit(p[i]) || p[i] == '_')) i++;
    if (i == n || p[i] != '(') { *bad = i; *why = "expected '(' after the predicate"; return WK_ERR_ILTP_FACT; }
    i++;
    size_t count = 0;
    if (i < n && p[i] == ')') {
        i++;
    } else {
        for (;;) {
            if (i == n || p[i] != '\'') { *bad = i; *why = "expected a quoted constant"; return WK_ERR_ILTP_FACT; }
            i++;
            for (;;) {
                if (i == n) { *bad = i; *why = "unterminated constant"; return WK_ERR_ILTP_FACT; }
                uint8_t c = p[i];
                if (c == '\'') break;
                if (c == '\\') { *bad = i; *why = "backslash inside a constant"; return WK_ERR_ILTP_FACT; }
                if (c < 0x20) { *bad = i; *why = "control character inside a constant"; return WK_ERR_ILTP_FACT; }
                if (c >= 0x80) non_ascii = true;
                i++;
            }
            i++; /* closing quote */
            count++;
            if (i < n && p[i] == ',') { i++; continue; }
            if (i < n && p[i] == ')') { i++; break; }
            *bad = i;
            *why = "expected ',' or ')' after a constant";
            return WK_ERR_ILTP_FACT;
        }
    }
    if (i != n) { *bad = i; *why = "text after ')'"; return WK_ERR_ILTP_FACT; }
    if (non_ascii) {
        wk_code c = wk_iltp_text_nfc_check(p, n, bad, why);
        if (c != WK_OK) return c;
    }
    *arity = count;
    return WK_OK;
}

bool wk_iltp_fact_next(const uint8_t *block, size_t len, size_t *pos, wk_iltp_fact_row *row)
{
    size_t i = *pos;
    if (i >= len || block[i] == '\n') return false;
    const uint8_t *lf = memchr(block + i, '\n', len - i);
    if (!lf) return false;
    size_t e = (size_t)(lf - block);
    const uint8_t *open = memchr(block + i, '(', e - i);
    if (!open) return false;
    row->predicate = block + i;
    row->predicate_len = (size_t)(open - (block + i));
    row->args = open + 1;
    row->args_len = (size_t)(block + e - 1 - (open + 1));
    row->arity = 0;
    for (size_t k = 0; k < row->args_len; k++)
        if (row->args[k] == '\'') row->arity++;
    row->arity /= 2;
    *pos = e + 1;
    return true;
}

bool wk_iltp_fact_arg_next(const wk_iltp_fact_row *row, size_t *pos, const uint8_t **arg,
                           size_t *arg_len)
{
    size_t i = *pos;
    if (i >= row->args_len) return false;
    if (row->args[i] == ',') i++;
    if (i >= row->args_len || row->args[i] != '\'') return false;
    const uint8_t *start = row->args + i + 1;
    const uint8_t *q = memchr(start, '\'', row->args_len - i - 1);
    if (!q) return false;
    *arg = start;
    *arg_len = (size_t)(q - start);
    *pos = (size_t)(q - row->args) + 1;
    return true;
}

/* Encoder refusals are WK_ERR_ILTP_ENCODE (Integration: the local side cannot build a canonical
 * block); the message names the row, the rule's code and why. */
static size_t integ(wk_error *err, wk_code code, size_t row, const char *why)
{
    wk_error_set(err, WK_ERR_ILTP_ENCODE, WK_NO_OFFSET, "row %zu: %s: %s", row, wk_error_name(code), why);
    return 0;
}

size_t wk_iltp_facts_size(const wk_iltp_fact *rows, size_t n, wk_error *err)
{
    size_t total = 1; /* the terminating bare LF */
    for (size_t r = 0; r < n; r++) {
        size_t line = strlen(rows[r].predicate) + 2;
        for (size_t k = 0; k < rows[r].count; k++) line += strlen(rows[r].constants[k]) + 2 + (k ? 1 : 0);
        if (line > WK_ILTP_FACT_LINE_CAP)
            return integ(err, WK_ERR_ILTP_FACT_LINE_TOO_LONG, r, "line over 1024 bytes");
        uint8_t buf[WK_ILTP_FACT_LINE_CAP];
        size_t o = 0, bad, arity;
        const char *why = NULL;
        size_t pl = strlen(rows[r].predicate);
        memcpy(buf, rows[r].predicate, pl);
        o = pl;
        buf[o++] = '(';
        for (size_t k = 0; k < rows[r].count; k++) {
            size_t cl = strlen(rows[r].constants[k]);
            if (k) buf[o++] = ',';
            buf[o++] = '\'';
            memcpy(buf + o, rows[r].constants[k], cl);
            o += cl;
            buf[o++] = '\'';
        }
        buf[o++] = ')';
        wk_code c = wk_iltp_fact_line_check(buf, o, &bad, &why, &arity);
        if (c != WK_OK) return integ(err, c, r, why);
        if (arity != rows[r].count)
            return integ(err, WK_ERR_ILTP_FACT, r, "a constant contains a quote");
        total += line + 1;
        if (total > WK_ILTP_ITEM_CAP)
            return integ(err, WK_ERR_ILTP_ITEM_TOO_LARGE, r, "block over 64 MiB");
    }
    return total;
}

wk_result wk_iltp_facts_encode(const wk_iltp_fact *rows, size_t n, wk_out *out, wk_error *err)
{
    size_t need = wk_iltp_facts_size(rows, n, err);
    if (need == 0) return WK_ERROR;
    if (out->size - out->pos < need) return WK_NEED_OUTPUT;
    uint8_t *o = out->dst + out->pos;
    for (size_t r = 0; r < n; r++) {
        size_t pl = strlen(rows[r].predicate);
        memcpy(o, rows[r].predicate, pl);
        o += pl;
        *o++ = '(';
        for (size_t k = 0; k < rows[r].count; k++) {
            size_t cl = strlen(rows[r].constants[k]);
            if (k) *o++ = ',';
            *o++ = '\'';
            memcpy(o, rows[r].constants[k], cl);
            o += cl;
            *o++ = '\'';
        }
        *o++ = ')';
        *o++ = '\n';
    }
    *o++ = '\n';
    out->pos += need;
    return WK_DONE;
}
