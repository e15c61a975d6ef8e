/* wirekit eth: consensus gossip ssz_snappy (spec 5): Message.data = snappy_block(ssz), checked
 * against the limits of spec 5.3 in order (compressed size, preamble, MAX_PAYLOAD_SIZE, the type's
 * SSZ bounds) before anything is decoded, and the gossipsub message-id of spec 5.4 (SHA-256 by
 * OpenSSL's EVP interface). */
#include "eth_internal.h"
#include <openssl/evp.h>

static const uint8_t DOMAIN_VALID[4] = {1, 0, 0, 0};
static const uint8_t DOMAIN_INVALID[4] = {0, 0, 0, 0};

/* The effective [min, max] of the optional bounds, max capped at MAX_PAYLOAD_SIZE. */
static void effective_bounds(const wk_eth_ssz_bounds *b, uint64_t *min, uint64_t *max)
{
    *min = b ? b->min_len : 0;
    *max = WK_ETH_SSZ_MAX_PAYLOAD_SIZE;
    if (b && b->max_len != 0 && b->max_len < *max) *max = b->max_len;
}

/* wk_eth_gossip_peek of data[0..n) (NULL = empty). */
static wk_code gossip_peek(const uint8_t *data, size_t n, const wk_eth_ssz_bounds *bounds,
                           uint64_t *declared, wk_error *err)
{
    if (n > WK_ETH_GOSSIP_MAX_COMPRESSED)
        return wk_error_set(err, WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE, WK_ETH_GOSSIP_MAX_COMPRESSED,
                            "Message.data of %zu bytes above max_compressed_len(MAX_PAYLOAD_SIZE) = %u",
                            n, WK_ETH_GOSSIP_MAX_COMPRESSED);
    uint64_t d = 0;
    wk_in block = {data, n, 0};
    wk_code rc = wk_eth_snappy_block_peek(&block, WK_ETH_SSZ_MAX_PAYLOAD_SIZE, &d, NULL, err);
    if (rc != WK_OK) return rc;
    uint64_t lo, hi;
    effective_bounds(bounds, &lo, &hi);
    if (d < lo || d > hi)
        return wk_error_set(err, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, 0,
                            "declared SSZ length %llu outside [%llu, %llu]", (unsigned long long)d,
                            (unsigned long long)lo, (unsigned long long)hi);
    if (declared) *declared = d;
    return WK_OK;
}

wk_code wk_eth_gossip_peek(const wk_in *in, const wk_eth_ssz_bounds *bounds, uint64_t *declared,
                           wk_error *err)
{
    const uint8_t *data;
    size_t n;
    if (!wk_eth_view_bytes(in, &data, &n, err)) return WK_ERR_ARG;
    return gossip_peek(data, n, bounds, declared, err);
}

wk_result wk_eth_gossip_decode(wk_in *in, const wk_eth_ssz_bounds *bounds, wk_out *out,
                               wk_error *err)
{
    uint64_t d = 0;
    if (wk_eth_gossip_peek(in, bounds, &d, err) != WK_OK) return WK_ERROR;
    return wk_eth_snappy_block_decode(in, d, out, err);
}

wk_result wk_eth_gossip_encode(const uint8_t *ssz, size_t n, const wk_eth_ssz_bounds *bounds,
                               wk_out *out, wk_error *err)
{
    if (n > WK_ETH_SSZ_MAX_PAYLOAD_SIZE) {
        wk_error_set(err, WK_ERR_SNAPPY_TOO_LARGE, WK_NO_OFFSET,
                     "SSZ bytes %zu above MAX_PAYLOAD_SIZE %u: not published", n,
                     WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
        return WK_ERROR;
    }
    uint64_t lo, hi;
    effective_bounds(bounds, &lo, &hi);
    if (n < lo || n > hi) {
        wk_error_set(err, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS, WK_NO_OFFSET,
                     "SSZ bytes %zu outside [%llu, %llu]: not published", n, (unsigned long long)lo,
                     (unsigned long long)hi);
        return WK_ERROR;
    }
    wk_out o = out ? *out : (wk_out){NULL, 0, 0};
    wk_result r = wk_eth_snappy_block_encode(ssz, n, &o, err);
    if (r != WK_DONE) return r;
    size_t len = o.pos - out->pos;
    if (len > WK_ETH_GOSSIP_MAX_COMPRESSED) { /* cannot happen with a correct encoder (spec 5.2) */
        wk_error_set(err, WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE, WK_NO_OFFSET,
                     "compressed %zu bytes above %u", len, WK_ETH_GOSSIP_MAX_COMPRESSED);
        return WK_ERROR;
    }
    out->pos = o.pos;
    return WK_DONE;
}

/* SHA-256 of domain || [uint64_le(topic_len) || topic] || payload, truncated to 20 bytes. */
static wk_code message_id_hash(const uint8_t domain[4], const char *topic, size_t topic_len,
                               const uint8_t *payload, size_t payload_len,
                               uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN], wk_error *err)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned md_len = 0;
    int ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, domain, 4) == 1;
    if (ok && topic) {
        uint8_t le[8];
        for (unsigned i = 0; i < 8; i++) le[i] = (uint8_t)((uint64_t)topic_len >> (8 * i));
        ok = EVP_DigestUpdate(ctx, le, 8) == 1 && EVP_DigestUpdate(ctx, topic, topic_len) == 1;
    }
    if (ok) ok = EVP_DigestUpdate(ctx, payload, payload_len) == 1;
    if (ok) ok = EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        return wk_error_set(err, WK_ERR_BACKEND, WK_NO_OFFSET, "OpenSSL SHA-256 failed");
    }
    for (unsigned i = 0; i < WK_ETH_GOSSIP_MESSAGE_ID_LEN; i++) id[i] = md[i];
    return WK_OK;
}

wk_code wk_eth_gossip_message_id(const wk_in *in, const char *topic, size_t topic_len,
                                 const wk_eth_ssz_bounds *bounds, const wk_allocator *allocator,
                                 uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN], bool *valid,
                                 wk_error *err)
{
    const uint8_t *data;
    size_t n;
    if (!wk_eth_view_bytes(in, &data, &n, err)) return WK_ERR_ARG;
    wk_allocator a = wk_allocator_or_default(allocator);
    uint8_t *plain = NULL;
    size_t plain_len = 0;
    uint64_t d = 0;
    wk_error e;
    bool ok = gossip_peek(data, n, bounds, &d, &e) == WK_OK;
    if (ok) {
        wk_in block = {data, n, 0}; /* a copy: the caller's view is only looked at */
        if (wk_eth_snappy_block_decode_alloc(&block, d, &a, &plain, &plain_len, &e) != WK_DONE &&
            e.code == WK_ERR_NOMEM)
            return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET,
                                "no memory for the %llu decompressed bytes", (unsigned long long)d);
        ok = plain != NULL;
    }
    wk_code rc = ok ? message_id_hash(DOMAIN_VALID, topic, topic_len, plain, plain_len, id, err)
                    : message_id_hash(DOMAIN_INVALID, topic, topic_len, data, n, id, err);
    if (plain) a.free(a.opaque, plain);
    if (rc == WK_OK && valid) *valid = ok;
    return rc;
}
