/* Consensus gossip ssz_snappy (spec 5): every ssz_snappy-block/ vector (length and SHA-256 from
 * manifest.tsv), the limit order of spec 5.3, the sender checks, and message ids (spec 5.4)
 * against values computed independently with Python (hashlib + python-snappy).
 * Usage: test_eth_gossip tests/vectors/eth */
#include "wk_test.h"
#include <wirekit/eth.h>
#include "contract/wk_contract_eth.h"
#include <openssl/evp.h>


static const char *VEC;

static char *path_of(const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", VEC, rel);
    return p;
}

static void sha256_hex(const uint8_t *p, size_t n, char out[65])
{
    uint8_t md[32];
    unsigned len = 0;
    if (EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32) {
        strcpy(out, "(sha256 failed)");
        return;
    }
    wk_hex_encode(md, 32, out);
}

static void id_hex(const uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN], char out[41])
{
    wk_hex_encode(id, WK_ETH_GOSSIP_MESSAGE_ID_LEN, out);
}

/* Every manifest row under ssz_snappy-block/. */
static void test_vectors(void)
{
    size_t len = 0;
    char *text = (char *)wk_test_read_file(path_of("manifest.tsv"), &len);
    REQUIRE(text != NULL);
    text = realloc(text, len + 1);
    text[len] = 0;
    int files = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || strncmp(line, "ssz_snappy-block/", 17) != 0) continue;
        char path[512], fmt[64], expect[16], sha[80];
        unsigned long long dlen = 0;
        REQUIRE(sscanf(line, "%511s %63s %15s %llu %79s", path, fmt, expect, &dlen, sha) == 5);
        CHECK(strcmp(fmt, "snappy-block") == 0 && strcmp(expect, "ok") == 0);
        files++;
        size_t n = 0;
        uint8_t *data = wk_test_read_file(path_of(path), &n);
        REQUIRE(data != NULL);
        wk_error err;
        uint64_t declared = 0;
        CHECKF(wk_eth_gossip_peek(LOOK(data, n), NULL, &declared, &err) == WK_OK && declared == dlen, "%s: peek",
               path);
        uint8_t *out = malloc(dlen + 1);
        size_t out_len = 0;
        wk_code rc = enc_out(wk_eth_gossip_decode(IN(data, n), NULL, VIEW(out, dlen), &err), &out_len, &err);
        CHECKF(rc == WK_OK && out_len == dlen, "%s: %s", path, wk_error_name(rc));
        char hex[65];
        sha256_hex(out, out_len, hex);
        CHECKF(strcmp(hex, sha) == 0, "%s: sha256 %s", path, hex);
        /* bounds exactly the length pass; one above the length or one below fail */
        wk_eth_ssz_bounds exact = {dlen, dlen}, above = {dlen + 1, 0}, below = {0, dlen - 1};
        CHECK(wk_eth_gossip_peek(LOOK(data, n), &exact, NULL, &err) == WK_OK);
        CHECK(wk_eth_gossip_peek(LOOK(data, n), &above, NULL, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS &&
              err.offset == 0);
        CHECK(enc_out(wk_eth_gossip_decode(IN(data, n), &below, VIEW(out, dlen), &err), &out_len, &err) ==
              WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
        CHECK(enc_out(wk_eth_gossip_decode(IN(data, n), NULL, VIEW(out, dlen - 1), &err), &out_len, &err) == ENC_NO_ROOM);
        /* message id: valid, and invalid once the type bound excludes it */
        uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
        bool valid = false;
        CHECK(wk_eth_gossip_message_id(LOOK(data, n), NULL, 0, NULL, NULL, id, &valid, &err) == WK_OK && valid);
        CHECK(wk_eth_gossip_message_id(LOOK(data, n), NULL, 0, &above, NULL, id, &valid, &err) == WK_OK && !valid);
        /* a truncated copy is rejected (and is not a valid snappy message) */
        rc = enc_out(wk_eth_gossip_decode(IN(data, n - 1), NULL, VIEW(out, dlen), &err), &out_len, &err);
        CHECKF(rc != WK_OK && err.category == WK_CAT_PEER_PROTOCOL, "%s truncated: %s", path,
               wk_error_name(rc));
        CHECK(wk_eth_gossip_message_id(LOOK(data, n - 1), NULL, 0, NULL, NULL, id, &valid, &err) == WK_OK && !valid);
        /* re-encode (sender side) and decode back */
        size_t cap = (size_t)wk_eth_snappy_block_max_size(dlen);
        uint8_t *enc = malloc(cap);
        size_t enc_len = 0;
        CHECK(enc_out(wk_eth_gossip_encode(out, dlen, &exact, VIEW(enc, cap), &err), &enc_len, &err) == WK_OK);
        uint8_t *back = malloc(dlen + 1);
        CHECK(enc_out(wk_eth_gossip_decode(IN(enc, enc_len), &exact, VIEW(back, dlen), &err), &out_len, &err) == WK_OK &&
              out_len == dlen && memcmp(back, out, dlen) == 0);
        free(back);
        free(enc);
        free(out);
        free(data);
        printf("  %-60s %llu bytes ok\n", path, dlen);
    }
    CHECKF(files == 8, "%d ssz_snappy-block files", files);
    free(text);
}

/* Spec 5.3 in order: compressed size, preamble, MAX_PAYLOAD_SIZE, type bounds. */
static void test_limit_order(void)
{
    wk_error err;
    uint64_t d = 0;
    CHECK(wk_eth_snappy_block_max_size(WK_ETH_SSZ_MAX_PAYLOAD_SIZE) == WK_ETH_GOSSIP_MAX_COMPRESSED);
    size_t big = WK_ETH_GOSSIP_MAX_COMPRESSED + 1; /* 12233419 */
    uint8_t *data = malloc(big);
    REQUIRE(data);
    /* all 0xff: the preamble would be invalid, but the size check comes first */
    memset(data, 0xff, big);
    CHECK(wk_eth_gossip_peek(LOOK(data, big), NULL, &d, &err) == WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE &&
          err.has_offset && err.offset == WK_ETH_GOSSIP_MAX_COMPRESSED &&
          err.category == WK_CAT_PEER_PROTOCOL);
    CHECK(strcmp(wk_error_name(err.code), "GOSSIP_ERR_COMPRESSED_TOO_LARGE") == 0);
    CHECK(wk_eth_gossip_peek(LOOK(data, big - 1), NULL, &d, &err) == WK_ERR_SNAPPY_PREAMBLE);
    /* preamble 10485761 (81 80 80 05): too large, with 12233418 and 12233419 bytes of data */
    memcpy(data, "\x81\x80\x80\x05", 4);
    CHECK(wk_eth_gossip_peek(LOOK(data, big), NULL, &d, &err) == WK_ERR_GOSSIP_COMPRESSED_TOO_LARGE);
    CHECK(wk_eth_gossip_peek(LOOK(data, big - 1), NULL, &d, &err) == WK_ERR_SNAPPY_TOO_LARGE && err.offset == 0);
    /* MAX_PAYLOAD_SIZE before the type bound, even when the type bound is smaller */
    wk_eth_ssz_bounds small = {0, 50}, huge = {0, 20000000}, none = {0, 0}, range = {100, 200};
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), &small, &d, &err) == WK_ERR_SNAPPY_TOO_LARGE);
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), &huge, &d, &err) == WK_ERR_SNAPPY_TOO_LARGE);
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), &none, &d, &err) == WK_ERR_SNAPPY_TOO_LARGE);
    /* exactly MAX_PAYLOAD_SIZE passes the checks; the empty body then fails to decode */
    memcpy(data, "\x80\x80\x80\x05", 4);
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), NULL, &d, &err) == WK_OK && d == WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), &huge, &d, &err) == WK_OK);
    CHECK(wk_eth_gossip_peek(LOOK(data, 4), &small, &d, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
    uint8_t *out = malloc(WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    size_t out_len = 0;
    CHECK(enc_out(wk_eth_gossip_decode(IN(data, 4), NULL, VIEW(out, WK_ETH_SSZ_MAX_PAYLOAD_SIZE), &err), &out_len, &err) ==
              WK_ERR_SNAPPY_LENGTH_MISMATCH &&
          err.offset == 4);
    /* bounds [100, 200] */
    const struct { uint8_t pre; wk_code code; } b[] = {
        {99, WK_ERR_SSZSNAPPY_LENGTH_BOUNDS}, {100, WK_OK}, {127, WK_OK}};
    for (size_t i = 0; i < 3; i++)
        CHECK(wk_eth_gossip_peek(LOOK(&b[i].pre, 1), &range, &d, &err) == b[i].code);
    CHECK(wk_eth_gossip_peek(LOOK((const uint8_t *)"\xc8\x01", 2), &range, &d, &err) == WK_OK && d == 200);
    CHECK(wk_eth_gossip_peek(LOOK((const uint8_t *)"\xc9\x01", 2), &range, &d, &err) ==
          WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
    /* preamble errors */
    CHECK(wk_eth_gossip_peek(LOOK(NULL, 0), NULL, &d, &err) == WK_ERR_SNAPPY_TRUNCATED);
    CHECK(wk_eth_gossip_peek(LOOK((const uint8_t *)"\x80", 1), NULL, &d, &err) == WK_ERR_SNAPPY_TRUNCATED);
    CHECK(wk_eth_gossip_peek(LOOK((const uint8_t *)"\xff\xff\xff\xff\xff\x01", 6), NULL, &d, &err) ==
          WK_ERR_SNAPPY_PREAMBLE);
    /* a block error surfaces with its name and offset */
    CHECK(enc_out(wk_eth_gossip_decode(IN((const uint8_t *)"\x05\x00\x61\x0e\x00\x00", 6), NULL, VIEW(out, 5), &err), &out_len, &err) == WK_ERR_SNAPPY_BAD_OFFSET &&
          err.offset == 3);
    CHECK(enc_out(wk_eth_gossip_decode(IN((const uint8_t *)"\x00", 1), NULL, VIEW(out, 0), &err), &out_len, &err) == WK_OK &&
          out_len == 0);
    /* the largest payload round-trips */
    memset(out, 0x5a, WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    size_t cap = (size_t)wk_eth_snappy_block_max_size(WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    uint8_t *enc = malloc(cap);
    size_t enc_len = 0;
    CHECK(enc_out(wk_eth_gossip_encode(out, WK_ETH_SSZ_MAX_PAYLOAD_SIZE, NULL, VIEW(enc, cap), &err), &enc_len, &err) == WK_OK);
    memset(out, 0, WK_ETH_SSZ_MAX_PAYLOAD_SIZE);
    CHECK(enc_out(wk_eth_gossip_decode(IN(enc, enc_len), NULL, VIEW(out, WK_ETH_SSZ_MAX_PAYLOAD_SIZE), &err), &out_len, &err) == WK_OK &&
          out_len == WK_ETH_SSZ_MAX_PAYLOAD_SIZE && out[0] == 0x5a && out[out_len - 1] == 0x5a);
    free(enc);
    free(out);
    free(data);
}

/* Sender checks: Integration errors, nothing written. */
static void test_encode_checks(void)
{
    wk_error err;
    size_t n = WK_ETH_SSZ_MAX_PAYLOAD_SIZE + 1;
    uint8_t *src = calloc(1, n);
    size_t cap = (size_t)wk_eth_snappy_block_max_size(n);
    uint8_t *dst = malloc(cap);
    size_t out_len = 12345;
    CHECK(enc_out(wk_eth_gossip_encode(src, n, NULL, VIEW(dst, cap), &err), &out_len, &err) == WK_ERR_SNAPPY_TOO_LARGE &&
          err.category == WK_CAT_PEER_PROTOCOL && out_len == 12345);
    wk_eth_ssz_bounds huge = {0, 20000000}, range = {100, 200};
    CHECK(enc_out(wk_eth_gossip_encode(src, n, &huge, VIEW(dst, cap), &err), &out_len, &err) == WK_ERR_SNAPPY_TOO_LARGE);
    CHECK(enc_out(wk_eth_gossip_encode(src, 99, &range, VIEW(dst, cap), &err), &out_len, &err) ==
              WK_ERR_SSZSNAPPY_LENGTH_BOUNDS &&
          err.category == WK_CAT_PEER_PROTOCOL);
    CHECK(enc_out(wk_eth_gossip_encode(src, 201, &range, VIEW(dst, cap), &err), &out_len, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS);
    CHECK(enc_out(wk_eth_gossip_encode(src, 100, &range, VIEW(dst, cap), &err), &out_len, &err) == WK_OK);
    CHECK(enc_out(wk_eth_gossip_encode(src, 200, &range, VIEW(dst, cap), &err), &out_len, &err) == WK_OK);
    CHECK(enc_out(wk_eth_gossip_encode(src, 200, &range, VIEW(dst, (size_t)wk_eth_snappy_block_max_size(200) - 1), &err), &out_len, &err) == ENC_NO_ROOM);
    CHECK(enc_out(wk_eth_gossip_encode(NULL, 0, NULL, VIEW(dst, 32), &err), &out_len, &err) == WK_OK && out_len == 1 &&
          dst[0] == 0);
    free(src);
    free(dst);
}

/* Message ids. Expected values were computed with /usr/bin/python3 (hashlib + python-snappy),
 * independently of this library:
 *   python3 -c "import hashlib,snappy,struct; d=open(F,'rb').read(); t=T.encode();
 *     print(hashlib.sha256(DOMAIN + [struct.pack('<Q',len(t))+t] + PAYLOAD).digest()[:20].hex())"
 * with DOMAIN b'\x01\0\0\0' and PAYLOAD snappy.uncompress(d) for valid data, DOMAIN b'\0\0\0\0'
 * and PAYLOAD d itself for invalid data, the topic part only for Altair. */
static void test_message_id(void)
{
    const char *topic = "/eth2/446a7232/beacon_aggregate_and_proof/ssz_snappy";
    size_t n = 0;
    uint8_t *data = wk_test_read_file(path_of("ssz_snappy-block/ream/ancestor_9551968.ssz_snappy"), &n);
    REQUIRE(data && n == 32575);
    const uint8_t bad[] = {0x05, 0x00, 0x61, 0x0e, 0x00, 0x00}; /* copy with offset 0 */
    const uint8_t ping8[] = {0x08, 0x1c, 1, 0, 0, 0, 0, 0, 0, 0};
    wk_eth_ssz_bounds ping_ok = {8, 8}, ping_bad = {16, 16};
    struct {
        const char *what;
        const uint8_t *d;
        size_t n;
        const char *topic;
        const wk_eth_ssz_bounds *bounds;
        bool valid;
        const char *id;
    } cases[] = {
        /* sha256(b'\x01\0\0\0' + snappy.uncompress(d))[:20] */
        {"phase0 valid block", data, n, NULL, NULL, true, "ebfec10169438fb697d5991c8510b82234938306"},
        /* sha256(b'\x01\0\0\0' + struct.pack('<Q',len(t)) + t + snappy.uncompress(d))[:20] */
        {"altair valid block", data, n, topic, NULL, true, "e9a388e7ab8ca8d38d23ff87c09526b15954c38b"},
        /* sha256(b'\0\0\0\0' + bytes.fromhex('0500610e0000'))[:20] */
        {"phase0 invalid data", bad, sizeof bad, NULL, NULL, false,
         "775d40a9c6f1e99fcd7fdf7c61f533ab29478497"},
        /* sha256(b'\0\0\0\0' + struct.pack('<Q',len(t)) + t + bytes.fromhex('0500610e0000'))[:20] */
        {"altair invalid data", bad, sizeof bad, topic, NULL, false,
         "890f35d6bc04cf6b2faf9f6540b6a21c4ef8546d"},
        /* sha256(b'\x01\0\0\0' + snappy.uncompress(b'\x00'))[:20] */
        {"phase0 empty payload", (const uint8_t *)"\x00", 1, NULL, NULL, true,
         "67abdd721024f0ff4e0b3f4c2fc13bc5bad42d0b"},
        /* sha256(b'\0\0\0\0')[:20] */
        {"phase0 empty data", NULL, 0, NULL, NULL, false, "df3f619804a92fdb4057192dc43dd748ea778adc"},
        /* sha256(b'\x01\0\0\0' + snappy.uncompress(bytes.fromhex('081c0100000000000000')))[:20] */
        {"phase0 ping in bounds", ping8, sizeof ping8, NULL, &ping_ok, true,
         "7d450465ceb49083708a6970827f0e0b116ed285"},
        /* sha256(b'\0\0\0\0' + bytes.fromhex('081c0100000000000000'))[:20]: out of the type bounds */
        {"phase0 ping out of bounds", ping8, sizeof ping8, NULL, &ping_bad, false,
         "9a8273bf2ac8a2034fe060b99444417ee8d40509"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
        bool valid = !cases[i].valid;
        wk_error err;
        wk_alloc_counter counter = {0};
        wk_allocator a = wk_counting_allocator(&counter);
        wk_code rc = wk_eth_gossip_message_id(LOOK(cases[i].d, cases[i].n), cases[i].topic,
                                              cases[i].topic ? strlen(cases[i].topic) : 0,
                                              cases[i].bounds, &a, id, &valid, &err);
        char hex[41];
        id_hex(id, hex);
        CHECKF(rc == WK_OK && valid == cases[i].valid && strcmp(hex, cases[i].id) == 0,
               "%s: %s valid=%d id=%s", cases[i].what, wk_error_name(rc), valid, hex);
        CHECK(counter.current == 0); /* decompressed bytes freed */
        CHECK(!cases[i].valid || counter.count == 1);
    }
    /* Allocation failure: WK_ERR_NOMEM, not an invalid-domain id. */
    wk_alloc_counter lim = {0, 0, 1000, 0};
    wk_allocator la = wk_counting_allocator(&lim);
    uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
    wk_error err;
    CHECK(wk_eth_gossip_message_id(LOOK(data, n), NULL, 0, NULL, &la, id, NULL, &err) == WK_ERR_NOMEM);
    /* invalid data: the trial decode's buffer is freed; a refused preamble allocates nothing */
    bool valid = true;
    CHECK(wk_eth_gossip_message_id(LOOK(bad, sizeof bad), NULL, 0, NULL, &la, id, &valid, &err) == WK_OK &&
          !valid && lim.count == 1 && lim.current == 0);
    valid = true;
    CHECK(wk_eth_gossip_message_id(LOOK((const uint8_t *)"\x81\x80\x80\x05", 4), NULL, 0, NULL, &la, id,
                                   &valid, &err) == WK_OK &&
          !valid && lim.count == 1);
    free(data);
}

/* The peek and the message-id take Message.data as a view's unread bytes, leave the view alone
 * and count offsets from in->pos; no view is WK_ERR_ARG. */
static void test_views(void)
{
    static const uint8_t vb[] = {0xee, 0xee, 0xee, 0x0c, 0x2c, 'h', 'e', 'l', 'l', 'o', ' ',
                                  'w', 'o', 'r', 'l', 'd', '!'};
    wk_in in = {vb, sizeof vb, 3};
    uint64_t d = 0;
    wk_error err;
    CHECK(wk_eth_gossip_peek(&in, NULL, &d, &err) == WK_OK && d == 12 && in.pos == 3);
    wk_eth_ssz_bounds big = {13, 0};
    CHECK(wk_eth_gossip_peek(&in, &big, &d, &err) == WK_ERR_SSZSNAPPY_LENGTH_BOUNDS &&
          err.offset == 0 && in.pos == 3);
    uint8_t id[WK_ETH_GOSSIP_MESSAGE_ID_LEN], id2[WK_ETH_GOSSIP_MESSAGE_ID_LEN];
    bool valid = false, valid2 = true;
    CHECK(wk_eth_gossip_message_id(&in, "t", 1, NULL, NULL, id, &valid, &err) == WK_OK && valid &&
          in.pos == 3);
    CHECK(wk_eth_gossip_message_id(LOOK(vb + 3, sizeof vb - 3), "t", 1, NULL, NULL, id2, &valid2,
                                   &err) == WK_OK && valid2 && memcmp(id, id2, sizeof id) == 0);
    /* the invalid domain hashes the view's bytes only, not what lies before in->pos */
    wk_in cut = {vb, sizeof vb - 1, 3};
    CHECK(wk_eth_gossip_message_id(&cut, NULL, 0, NULL, NULL, id, &valid, &err) == WK_OK && !valid);
    CHECK(wk_eth_gossip_message_id(LOOK(vb + 3, sizeof vb - 4), NULL, 0, NULL, NULL, id2, &valid2,
                                   &err) == WK_OK && !valid2 && memcmp(id, id2, sizeof id) == 0);
    wk_in bad = {vb, 2, 3};
    CHECK(wk_eth_gossip_peek(&bad, NULL, &d, &err) == WK_ERR_ARG && !err.has_offset);
    CHECK(wk_eth_gossip_peek(NULL, NULL, &d, &err) == WK_ERR_ARG && !err.has_offset);
    CHECK(wk_eth_gossip_message_id(&bad, NULL, 0, NULL, NULL, id, &valid, &err) == WK_ERR_ARG);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s tests/vectors/eth\n", argv[0]);
        return 2;
    }
    VEC = argv[1];
    test_vectors();
    test_limit_order();
    test_encode_checks();
    test_message_id();
    test_views();
    return wk_test_summary("eth_gossip");
}
