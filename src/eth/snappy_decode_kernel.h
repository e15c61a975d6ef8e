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
 * offset, made before anything is read through it. A long literal is checked against both ends
 * and copied there too. Within the last 64 input bytes, while 64 output bytes remain, a second
 * loop still decodes copy-1/copy-2 elements wide (they read only the output), each checked
 * against the exact end of the input. Everything else (copy-4, a bad offset, a bad literal,
 * literals near the input's end, the last 64 output bytes) leaves these loops at the element's
 * tag and goes through slow_element, which checks every rule in the validator's order before it
 * touches memory, names the error, and copies exactly the element's bytes. So no kernel reads
 * outside src[0..n) or writes outside dst[0..want), and every kernel reports exactly the
 * validator's error and offset. */

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
                /* The loop-carried chain is ip -> tag -> ip: the next tag's position comes from
                 * the tag by arithmetic alone (no table load on it). Literal or copy is one
                 * branch, which measured faster than selecting without branches (a cmov chain,
                 * loading both candidate next tags: 5-10 % slower on the Bellatrix block). */
                const uint32_t t = *ip;
                const uint32_t e = tag_table[t];
                const uint32_t type = t & 3;
                if (WK_UNLIKELY(e & TAG_SLOW)) {
                    if (type != 0) break; /* copy-4: slow_element */
                    /* A long literal: 1..4 length bytes (inside the margin), then the bytes. Any
                     * rule it breaks is left to slow_element; bytes that fit the margins in
                     * 64-byte steps are copied here, longer ones by memcpy. */
                    const unsigned k = (t >> 2) - 59;
                    const uint64_t llen = (uint64_t)(load_le32(ip + 1) & lit_len_mask[k]) + 1;
                    const uint8_t *lit = ip + 1 + k;
                    if (WK_UNLIKELY(llen > (uint64_t)(end - lit) ||
                                    llen > (uint64_t)(out_end - op)))
                        break;
                    const size_t ln = (size_t)llen, steps = (ln + 63) & ~(size_t)63;
                    if (ln <= LONG_LITERAL_STEPS && steps <= (size_t)(end - lit) &&
                        steps <= (size_t)(out_end - op)) {
                        for (size_t j = 0; j < ln; j += 64) K_COPY(op + j, lit + j, 64);
                    } else {
                        memcpy(op, lit, ln);
                    }
                    op += ln;
                    ip = lit + ln;
                    continue;
                }
                const size_t len = e & TAG_LEN_MASK;
                /* copies: the offset; short literals: their own length (see tag_table), which
                 * passes both tests below once `len` bytes have been produced */
                const size_t off = (e >> TAG_OFF_SHIFT) + K_OFFSET(load_le32(ip + 1), type);
                const size_t adv = type ? type + 1 : (size_t)(t >> 2) + 2;
                const size_t produced = (size_t)(op - dst);
                if (WK_UNLIKELY((off - 1 >= produced) | (off < len))) {
                    if (type == 0) {
                        K_COPY(op, ip + 1, len); /* a literal early in the output */
                    } else {
                        /* offset 0 or beyond the bytes produced: slow_element names it */
                        if (off - 1 >= produced) break;
                        K_PATTERN(op, off, len);
                    }
                } else {
                    const uint8_t *from = type ? op - off : ip + 1;
                    K_COPY(op, from, len);
                }
                op += len;
                ip += adv;
            } while (ip < ip_lim && op <= op_lim);
        }
        /* Near the end of the input (the last 64 bytes hold up to ~21 copies of 64 bytes on
         * copy-heavy data) with output room left: copies still go wide (they read only the
         * output), each checked against the exact input end; anything else is slow_element's. */
        while (ip < end && out_end - op >= FAST_OUT_MARGIN) {
            const uint32_t t = *ip;
            const uint32_t type = t & 3;
            if (type == 0 || type == 3 || (size_t)(end - ip) <= type) break;
            const uint32_t e = tag_table[t];
            const size_t len = e & TAG_LEN_MASK;
            const size_t off =
                (e >> TAG_OFF_SHIFT) + (type == 1 ? ip[1] : (size_t)ip[1] | (size_t)ip[2] << 8);
            const size_t produced = (size_t)(op - dst);
            if (off - 1 >= produced) break;
            if (off < len)
                K_PATTERN(op, off, len);
            else
                K_COPY(op, op - off, len);
            op += len;
            ip += 1 + type;
        }
        if (ip == end) break;
        /* through copies, so that ip and op never have their address taken (they stay in
         * registers in the loops above) */
        const uint8_t *sip = ip;
        uint8_t *sop = op;
        wk_code c = slow_element(src, end, &sip, dst, out_end, &sop, err);
        if (c != WK_OK) return c;
        ip = sip;
        op = sop;
    }
    if (op != out_end)
        return wk_error_set(err, WK_ERR_SNAPPY_LENGTH_MISMATCH, n,
                            "produced %llu of %llu declared bytes",
                            (unsigned long long)(op - dst), (unsigned long long)want);
    return WK_OK;
}
