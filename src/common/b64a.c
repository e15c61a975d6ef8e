/* B64A: alphabet in ASCII order 0-9 A-Z _ a-z ~, RFC 4648 bit packing (MSB first), no padding.
 * Strict decode: alphabet, length (len mod 4 == 1 is impossible), canonical (zero) tail bits. */
#include <wirekit/common.h>

static const char alphabet[64] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~";

/* value+1 for each alphabet byte, 0 for anything else */
static int8_t value_of(unsigned char ch)
{
    if (ch >= '0' && ch <= '9') return (int8_t)(ch - '0');
    if (ch >= 'A' && ch <= 'Z') return (int8_t)(ch - 'A' + 10);
    if (ch == '_') return 36;
    if (ch >= 'a' && ch <= 'z') return (int8_t)(ch - 'a' + 37);
    if (ch == '~') return 63;
    return -1;
}

size_t wk_b64a_encoded_len(size_t n) { return (n / 3) * 4 + (n % 3 ? n % 3 + 1 : 0); }

size_t wk_b64a_encode(const uint8_t *src, size_t n, char *dst)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        dst[o++] = alphabet[v >> 18];
        dst[o++] = alphabet[(v >> 12) & 63];
        dst[o++] = alphabet[(v >> 6) & 63];
        dst[o++] = alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)src[i] << 16;
        dst[o++] = alphabet[v >> 18];
        dst[o++] = alphabet[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
        dst[o++] = alphabet[v >> 18];
        dst[o++] = alphabet[(v >> 12) & 63];
        dst[o++] = alphabet[(v >> 6) & 63];
    }
    return o;
}

wk_code wk_b64a_decode(const char *text, size_t len, uint8_t *dst, size_t dst_cap, size_t *out_len,
                       wk_error *err)
{
    if (len % 4 == 1)
        return wk_error_set(err, WK_ERR_B64A_LENGTH, len, "%zu characters encode no byte string",
                            len);
    size_t need = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);
    if (need > dst_cap)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "B64A output needs %zu bytes, have %zu",
                            need, dst_cap);
    size_t o = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < len; i++) {
        int8_t v = value_of((unsigned char)text[i]);
        if (v < 0)
            return wk_error_set(err, WK_ERR_B64A_ALPHABET, i, "byte 0x%02x is not in the alphabet",
                                (unsigned char)text[i]);
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dst[o++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0)
        return wk_error_set(err, WK_ERR_B64A_TAIL, len - 1, "%u unused tail bits are not zero",
                            bits);
    *out_len = o;
    return WK_OK;
}
