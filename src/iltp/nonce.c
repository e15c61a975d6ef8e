/* ILTP session nonces (Lace-060 "Session preface and logical-session cut"):
 *   nonce(sequence) = BLAKE3_KEYED(key = carrier nonce seed,
 *                                  input = "lace-iltp/1.0/session-nonce/v1" || 0x00 || u64be(sequence))
 * The sequence starts at zero (or the value the caller gives) and each value is consumed once,
 * UINT64_MAX included. An all-zero candidate, or one equal to a peer nonce already known, is
 * consumed and the next value is tried; running out is an Integration failure. The seed and the
 * sequence are private carrier state: nothing here puts them in an error message. */
#include <wirekit/iltp.h>
#include <string.h>

#define NONCE_CONTEXT "lace-iltp/1.0/session-nonce/v1"
#define NONCE_CONTEXT_LEN (sizeof NONCE_CONTEXT - 1) /* 30 bytes, no terminator */
#define NONCE_INPUT_LEN (NONCE_CONTEXT_LEN + 1 + 8) /* context || NUL || u64be: 39 bytes */

static bool all_zero(const uint8_t *p, size_t n)
{
    uint8_t any = 0;
    for (size_t i = 0; i < n; i++) any |= p[i];
    return any == 0;
}

wk_code wk_iltp_nonce_gen_init(wk_iltp_nonce_gen *g, const uint8_t seed[32], uint64_t first,
                               wk_error *err)
{
    if (!g || !seed) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "NULL generator or seed");
    if (all_zero(seed, 32))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "nonce seed is all zero");
    memcpy(g->seed, seed, 32);
    g->next = first;
    g->exhausted = false;
    return WK_OK;
}

void wk_iltp_nonce_candidate_derive(const uint8_t seed[32], uint64_t sequence, uint8_t out[32])
{
    uint8_t input[NONCE_INPUT_LEN];
    memcpy(input, NONCE_CONTEXT, NONCE_CONTEXT_LEN);
    input[NONCE_CONTEXT_LEN] = 0x00;
    wk_put_be(input + NONCE_CONTEXT_LEN + 1, sequence, 8);
    wk_blake3_hasher h;
    wk_blake3_init_keyed(&h, seed);
    wk_blake3_update(&h, input, sizeof input);
    wk_blake3_finalize(&h, out, 32);
}

wk_code wk_iltp_nonce_gen_next(wk_iltp_nonce_gen *g, const uint8_t *peer_nonce, uint8_t out[32],
                           uint64_t *used_sequence, wk_error *err)
{
    if (!g || !out) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "NULL generator or output");
    uint8_t cand[32];
    while (!g->exhausted) {
        uint64_t seq = g->next;
        /* consume the value before using it: UINT64_MAX is usable once, then nothing is left */
        if (seq == UINT64_MAX) g->exhausted = true;
        else g->next = seq + 1;
        wk_iltp_nonce_candidate_derive(g->seed, seq, cand);
        if (all_zero(cand, sizeof cand)) continue;
        if (peer_nonce && memcmp(cand, peer_nonce, sizeof cand) == 0) continue;
        memcpy(out, cand, sizeof cand);
        if (used_sequence) *used_sequence = seq;
        return WK_OK;
    }
    /* an all-zero nonce is never valid on the wire, so a caller that ignores the code cannot
     * send a stale or predictable one */
    memset(out, 0, 32);
    return wk_error_set(err, WK_ERR_ILTP_NONCE_EXHAUSTED, WK_NO_OFFSET,
                        "every nonce sequence value has been used");
}
