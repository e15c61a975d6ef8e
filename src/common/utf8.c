/* Strict UTF-8 validation (RFC 3629, Unicode Table 3-7 well-formed byte sequences). */
#include <wirekit/common.h>

bool wk_utf8_valid(const uint8_t *p, size_t n, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time */
        while (i + 8 <= n) {
            uint64_t w = 0;
            for (int k = 0; k < 8; k++) w |= (uint64_t)p[i + k] << (8 * k);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        uint8_t c = p[i];
        if (c < 0x80) { i++; continue; }
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c == 0xE0) { need = 2; lo = 0xA0; }
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
        else if (c == 0xED) { need = 2; hi = 0x9F; }
        else if (c == 0xF0) { need = 3; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) need = 3;
        else if (c == 0xF4) { need = 3; hi = 0x8F; }
        else goto fail;
        if (n - i <= need) goto fail;
        if (p[i + 1] < lo || p[i + 1] > hi) goto fail;
        for (size_t k = 2; k <= need; k++)
            if (p[i + k] < 0x80 || p[i + k] > 0xBF) goto fail;
        i += need + 1;
    }
    return true;
fail:
    if (bad) *bad = i;
    return false;
}
