/* Hex helpers for tests, the CLI and messages. */
#include <wirekit/common.h>
#include <limits.h>

/* Writes 2n lowercase hex digits of src and a NUL into dst (capacity 2n + 1). */
void wk_hex_encode(const uint8_t *src, size_t n, char *dst)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
    dst[2 * n] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes len hex digits (either case) into dst. Returns the byte count, or -1 for an odd length,
 * a non-hex character, or more than cap bytes. */
long wk_hex_decode(const char *text, size_t len, uint8_t *dst, size_t cap)
{
    if (len % 2 != 0 || len / 2 > cap || len / 2 > (size_t)LONG_MAX) return -1;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        dst[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(len / 2);
}
