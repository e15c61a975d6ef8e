/* moqt internals shared by the module's files (not installed). */
#ifndef WK_MOQT_INTERNAL_H
#define WK_MOQT_INTERNAL_H

#include <wirekit/moqt.h>
#include <string.h>

/* Room for n more bytes in out. */
static inline bool moqt_room(const wk_out *out, uint64_t n)
{
    return out->pos <= out->size && n <= (uint64_t)(out->size - out->pos);
}
/* Appends the minimal encoding of v (room checked by the caller). */
static inline void moqt_put_int(wk_out *out, uint64_t v)
{
    out->pos += wk_moqt_int_put(out->dst + out->pos, v);
}
static inline void moqt_put_u8(wk_out *out, uint8_t v) { out->dst[out->pos++] = v; }
static inline void moqt_put_bytes(wk_out *out, const uint8_t *p, uint64_t n)
{
    if (n) memcpy(out->dst + out->pos, p, (size_t)n);
    out->pos += (size_t)n;
}
/* WK_ERROR after setting err. */
static inline wk_result moqt_refuse(wk_error *err, wk_code code, uint64_t offset, const char *msg)
{
    wk_error_set(err, code, offset, "%s", msg);
    return WK_ERROR;
}

/* The Properties block check used by the decoders: strict validation unless length_only. */
wk_code moqt_check_properties(const uint8_t *pairs, size_t n, uint64_t base_offset,
                              bool length_only, wk_error *err);

#endif
