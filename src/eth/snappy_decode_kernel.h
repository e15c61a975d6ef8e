/* wirekit eth: the body of one Snappy block decoding kernel (spec 1.2-1.5), included by
 * snappy_decode.c once per kernel. Not a public header and not included anywhere else.
 *
 * Before including, snappy_decode.c defines:
 *   K_FN                  the kernel's name;
 *   K_ATTR                its attributes (__attribute__((target(...))) for the SIMD kernels);
 *   K_OFFSET(v, k)        the low k bytes (k = 0, 1, 2) of the 32-bit word v;
 *   K_COPY(op, from, len) copies len (1..64) bytes from `from` to op, where `from` lies in the
 *                         input or at least len bytes before op; may write up to 64 bytes at op
 *                         and read up to 64 bytes at `from`;
 *   K_PATTERN(op, off, len) the overlapping copy of len (2..64) bytes from op - off, 1 <= off <
 *                         len (the forward byte-by-byte semantics of spec 1.4); may write up to
 *                         64 bytes at op and read within [op - off, op + 64).
 *
 * The fast loop runs only while every element it may meet fits the margins: more than 64 input
 * bytes left (a short literal's 1 + 60 bytes, read 64 at a time, and a copy's 5-byte tag plus
 * offset load) and at least 64 bytes of output left (no short element writes more than 64). Under
 * those margins a short literal (<= 60 bytes) and a copy-1/copy-2 (<= 64 bytes) can neither run
 * past the input (TRUNCATED) nor past the declared length (OVERRUN); the one check left is the copy
 * offset, made before anything is read through it. Everything else (long literals, copy-4, a bad
 * offset, the last bytes of input or output) leaves the fast loop at the element's tag and goes
 * through slow_element, which checks every rule in the validator's order and names the error.
 * So no kernel reads outside src[0..n) or writes outside dst[0..want), and every kernel reports
 * exactly the validator's error and offset. */

K_ATTR static wk_code K_FN(const uint8_t *src, size_t n, size_t start, uint8_t *dst, size_t want,
                           wk_error *err)
{
    const uint8_t *ip = src + start;
    const uint8_t *const end = src + n;
    uint8_t *op = dst;
    uint8_t *const out_end = dst + want;
    for (;;) {
        if (end - ip > FAST_IN_MARGIN && out_end - op >= FAST_OUT_MARGIN) {
            const uint8_t *const ip_lim = end - FAST_IN_MARGIN; /* fast while ip < ip_lim */
            uint8_t *const op_lim = out_end - FAST_OUT_MARGIN;  /* fast while op <= op_lim */
            do {
                const uint32_t t = *ip;
                const uint32_t e = tag_table[t];
                if (WK_UNLIKELY(e & TAG_SLOW)) break; /* long literal or copy-4 */
                const uint32_t type = t & 3;
                const size_t len = e & TAG_LEN_MASK;
                if (type == 0) {
                    K_COPY(op, ip + 1, len);
                    ip += 1 + len;
                } else {
                    const size_t off = (e & TAG_OFFHI_MASK) + K_OFFSET(load_le32(ip + 1), type);
                    /* offset 0 or beyond the bytes produced: slow_element names it */
                    if (WK_UNLIKELY(off - 1 >= (size_t)(op - dst))) break;
                    if (off < len)
                        K_PATTERN(op, off, len);
                    else
                        K_COPY(op, op - off, len);
                    ip += 1 + type;
                }
                op += len;
            } while (ip < ip_lim && op <= op_lim);
        }
        if (ip == end) break;
        wk_code c = slow_element(src, end, &ip, dst, out_end, &op, err);
        if (c != WK_OK) return c;
    }
    if (op != out_end)
        return wk_error_set(err, WK_ERR_SNAPPY_LENGTH_MISMATCH, n,
                            "produced %llu of %llu declared bytes",
                            (unsigned long long)(op - dst), (unsigned long long)want);
    return WK_OK;
}
