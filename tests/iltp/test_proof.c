/* Lace-060 peer proofs: the channel-binding hash (against b3sum), the proof Seal's canonical bytes
 * through the item decoder, every field rule of the exact and structural checks, and whole
 * sessions under ChannelBound and ConfidentialChannel (equal and different exporters, and a
 * Disabled peer). */
#include "wk_test.h"
#include <wirekit/iltp.h>

static void hex(const char *h, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) sscanf(h + 2 * i, "%2hhx", &out[i]);
}

static void test_binding_hash(void)
{
    CHECK(strlen(WK_ILTP_QUIB_EXPORTER_LABEL) == WK_ILTP_QUIB_EXPORTER_LABEL_LEN);
    uint8_t ex[32], h[32], want[32];
    for (int i = 0; i < 32; i++) ex[i] = (uint8_t)i;
    wk_iltp_channel_binding_hash(ex, h);
    /* b3sum of "lace-session-peer-proof-channel-binding/v1" NUL label NUL 00..1f */
    hex("232aa9933244a434c961e441e761214f66fb606efde3293d6d590efc181d863a", want, 32);
    CHECK_MEM(h, want, 32);
}

static void make_params(wk_iltp_proof_params *p, wk_iltp_side side, bool bound, uint8_t ex_byte)
{
    memset(p, 0, sizeof *p);
    p->side = side;
    memset(p->challenge_side0, 0xA0, 32);
    memset(p->challenge_side1, 0xB1, 32);
    p->bound = bound;
    memset(p->exporter, ex_byte, 32);
    memset(p->by_secret, 0x5C, 32);
}

/* Decodes one record item from bytes (must be exactly one item). */
static bool decode_one(wk_iltp_item_decoder **d, const uint8_t *b, size_t n, wk_iltp_item *it, wk_error *e)
{
    wk_iltp_item_decoder_params dp = {WK_ILTP_FORM_ANY, 0, NULL};
    *d = wk_iltp_item_decoder_create(&dp, e);
    wk_in in = {b, n, 0};
    if (!*d || wk_iltp_item_decoder_decode(*d, &in, NULL, e) != WK_EVENT || in.pos != n) return false;
    const wk_iltp_item *x = wk_iltp_item_decoder_item(*d);
    if (x) *it = *x;
    return x != NULL;
}

static wk_code check_bytes(const uint8_t *b, size_t n, const wk_iltp_proof_params *expect,
                           wk_iltp_proof_accept acc, wk_error *e)
{
    wk_iltp_item_decoder *d = NULL;
    wk_iltp_item it;
    wk_code c = decode_one(&d, b, n, &it, e) ? wk_iltp_proof_check(&it, expect, acc, e) : e->code;
    wk_iltp_item_decoder_destroy(d);
    return c;
}

static void test_encode_check(void)
{
    for (int bound = 0; bound < 2; bound++) {
        for (int side = 0; side < 2; side++) {
            wk_iltp_proof_params p;
            make_params(&p, side ? WK_ILTP_SIDE1 : WK_ILTP_SIDE0, bound, 0x42);
            uint8_t b[1024];
            size_t need = wk_iltp_proof_size(&p);
            /* NEED_OUTPUT leaves out untouched */
            wk_out small = {b, need - 1, 0};
            memset(b, 0xEE, sizeof b);
            CHECK(wk_iltp_proof_encode(&p, &small, NULL) == WK_NEED_OUTPUT && small.pos == 0 && b[0] == 0xEE);
            wk_out out = {b, sizeof b, 0};
            REQUIRE(wk_iltp_proof_encode(&p, &out, NULL) == WK_DONE && out.pos == need);
            /* deterministic */
            uint8_t b2[1024];
            wk_out out2 = {b2, sizeof b2, 0};
            wk_iltp_proof_encode(&p, &out2, NULL);
            CHECK(out2.pos == need && memcmp(b, b2, need) == 0);
            wk_iltp_item_decoder *d = NULL;
            wk_iltp_item it;
            wk_error de;
            REQUIRE(decode_one(&d, b, need, &it, &de));
            CHECK(it.kind == WK_ILTP_ITEM_RECORD && it.record.type == 'S');
            CHECK(it.record.seal.plex.field_count == (size_t)(6 + bound));
            CHECK(it.record.seal.plex.blob.len == 0);
            CHECK(wk_iltp_record_hash_check(&it.record)); /* the presumed P/S rule holds for ours */
            wk_error e;
            CHECK(wk_iltp_proof_check(&it, &p, WK_ILTP_PROOF_EXACT, &e) == WK_OK);
            CHECK(wk_iltp_proof_check(&it, &p, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_OK);
            /* the other shape is refused exactly, accepted structurally */
            wk_iltp_proof_params q = p;
            q.bound = !bound;
            CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_EXACT, &e) == WK_ERR_ILTP_PROOF);
            CHECK(e.category == WK_CAT_PEER_PROTOCOL && e.has_offset);
            CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_OK);
            /* the other role */
            q = p;
            q.side = side ? WK_ILTP_SIDE0 : WK_ILTP_SIDE1;
            CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_ERR_ILTP_PROOF);
            CHECK(strstr(e.msg, "Name") != NULL);
            /* another session pair's challenge, either side */
            q = p;
            q.challenge_side1[5] ^= 1;
            CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_ERR_ILTP_PROOF);
            CHECK(strstr(e.msg, "Challenge-side1") != NULL);
            q = p;
            q.challenge_side0[0] ^= 1;
            CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_EXACT, &e) == WK_ERR_ILTP_PROOF);
            if (bound) {
                /* another channel's exporter: refused exactly, not compared structurally */
                q = p;
                q.exporter[31] ^= 1;
                CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_EXACT, &e) == WK_ERR_ILTP_PROOF);
                CHECK(strstr(e.msg, "Channel-Binding-Hash") != NULL);
                CHECK(wk_iltp_proof_check(&it, &q, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_OK);
            }
            wk_iltp_item_decoder_destroy(d);
        }
    }
}

/* Rewrites one field line of a proof (unbound, side0) and checks the verdict. */
static void mutate(const char *from, const char *to, wk_code want, const char *label)
{
    wk_iltp_proof_params p;
    make_params(&p, WK_ILTP_SIDE0, false, 0);
    uint8_t b[1024], m[1200];
    wk_out out = {b, sizeof b, 0};
    wk_iltp_proof_encode(&p, &out, NULL);
    b[out.pos] = 0;
    char *at = strstr((char *)b, from);
    REQUIRE(at);
    size_t pre = (size_t)(at - (char *)b), fl = strlen(from), tl = strlen(to);
    memcpy(m, b, pre);
    memcpy(m + pre, to, tl);
    memcpy(m + pre + tl, b + pre + fl, out.pos - pre - fl);
    size_t n = out.pos - fl + tl;
    wk_error e;
    wk_code c = check_bytes(m, n, &p, WK_ILTP_PROOF_STRUCTURAL, &e);
    CHECKF(c == want, "%s: got %s (%s)", label, wk_error_name(c), e.msg);
}

static void test_field_rules(void)
{
    mutate("Group: lace\n", "Group: other\n", WK_ERR_ILTP_PROOF, "group value");
    mutate("App: peer-proof\n", "Application: peer-proof\n", WK_ERR_ILTP_PROOF, "app name");
    mutate("TAI: 0000000000:000000000\n", "TAI: 0000000001:000000000\n", WK_ERR_ILTP_PROOF, "nonzero TAI");
    mutate("Group: lace\nApp: peer-proof\n", "App: peer-proof\nGroup: lace\n", WK_ERR_ILTP_PROOF, "order");
    mutate("TAI: 0000000000:000000000\n", "", WK_ERR_ILTP_PROOF, "missing TAI");
    mutate("Challenge-side0: ", "Extra: x\nChallenge-side0: ", WK_ERR_ILTP_PROOF, "extra field");
    mutate("Data-Length: 0", "Extra: y\nData-Length: 0", WK_ERR_ILTP_RECORD, "field after the Blob line");
    mutate("Challenge-side1: ", "Challenge-side1: x", WK_ERR_ILTP_PROOF, "malformed nonce");
    /* a trailing extra field after the challenges */
    wk_iltp_proof_params p;
    make_params(&p, WK_ILTP_SIDE0, false, 0);
    uint8_t b[1024];
    wk_out out = {b, sizeof b, 0};
    wk_iltp_proof_encode(&p, &out, NULL);
    b[out.pos] = 0;
    char n1[44];
    wk_b64a_encode(p.challenge_side1, 32, n1);
    n1[43] = 0;
    char from[80], to[120];
    snprintf(from, sizeof from, "Challenge-side1: %s\n", n1);
    snprintf(to, sizeof to, "Challenge-side1: %s\nNote: x\n", n1);
    mutate(from, to, WK_ERR_ILTP_PROOF, "trailing extra field");
    snprintf(to, sizeof to, "Challenge-side1: %s\nChannel-Binding-Hash: abc\n", n1);
    mutate(from, to, WK_ERR_ILTP_PROOF, "malformed binding hash");
    /* a nonempty Blob inside */
    mutate("Data-Length: 0\n\n", "Data-Length: 1\n\nx", WK_ERR_ILTP_RECORD_HASH, "Blob hash (decoder)");
    /* the zero-row block and a plain Blob are not proofs */
    wk_iltp_item it;
    memset(&it, 0, sizeof it);
    it.kind = WK_ILTP_ITEM_FACTS;
    it.bytes = (const uint8_t *)"\n";
    it.len = 1;
    wk_error e;
    CHECK(wk_iltp_proof_check(&it, &p, WK_ILTP_PROOF_EXACT, &e) == WK_ERR_ILTP_PROOF);
    uint8_t blob[200];
    wk_out bo = {blob, sizeof blob, 0};
    wk_iltp_blob_encode((const uint8_t *)"x", 1, &bo, NULL);
    CHECK(check_bytes(blob, bo.pos, &p, WK_ILTP_PROOF_STRUCTURAL, &e) == WK_ERR_ILTP_PROOF);
}

/* ---- whole sessions (empty stores) ---- */
static bool e_has(void *c, const uint8_t h[32], uint64_t *len, uint64_t *seq)
{
    (void)c; (void)h; (void)len; (void)seq;
    return false;
}
static bool e_next(void *c, const uint8_t *after, uint64_t max_seq, uint8_t out[32])
{
    (void)c; (void)after; (void)max_seq; (void)out;
    return false;
}
static uint64_t e_seq(void *c) { (void)c; return 0; }

/* Runs a pair with the given assurances and exporters; returns the two states, errors in e[]. */
static void pair(wk_iltp_assurance a0, wk_iltp_assurance a1, uint8_t x0, uint8_t x1,
                 wk_iltp_session_state st[2], wk_error e[2], bool verified[2])
{
    wk_iltp_session *s[2];
    for (int i = 0; i < 2; i++) {
        wk_iltp_session_params p;
        memset(&p, 0, sizeof p);
        p.side = i ? WK_ILTP_SIDE1 : WK_ILTP_SIDE0;
        p.form = WK_ILTP_FORM_1_0;
        memset(p.seed, 0x31 + i, 32);
        p.store = (wk_iltp_store_ops){NULL, e_has, e_next, e_seq};
        p.assurance = i ? a1 : a0;
        memset(p.channel_exporter, i ? x1 : x0, 32);
        s[i] = wk_iltp_session_create(&p, 0, &e[i]);
        REQUIRE(s[i]);
    }
    bool failed[2] = {false, false};
    for (int step = 0; step < 100; step++) {
        for (int i = 0; i < 2; i++) {
            if (failed[i] || failed[1 - i]) continue;
            uint8_t buf[8192];
            wk_out out = {buf, sizeof buf, 0};
            if (wk_iltp_session_send(s[i], NULL, &out, &e[i]) == WK_ERROR) { failed[i] = true; continue; }
            wk_in in = {buf, out.pos, 0};
            if (out.pos && wk_iltp_session_recv(s[1 - i], &in, NULL, &e[1 - i]) == WK_ERROR) failed[1 - i] = true;
        }
    }
    for (int i = 0; i < 2; i++) {
        st[i] = wk_iltp_session_state_get(s[i]);
        wk_iltp_session_stats ss;
        wk_iltp_session_stats_get(s[i], &ss);
        verified[i] = ss.proof_verified;
        wk_iltp_session_destroy(s[i]);
    }
}

static void test_sessions(void)
{
    const wk_iltp_assurance D = WK_ILTP_ASSURANCE_DISABLED, C = WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL,
                            B = WK_ILTP_ASSURANCE_CHANNEL_BOUND;
    const wk_iltp_session_state FP = WK_ILTP_SESSION_FIXED_POINT, F = WK_ILTP_SESSION_FAILED;
    wk_iltp_session_state st[2];
    wk_error e[2];
    bool v[2];
    pair(B, B, 7, 7, st, e, v); /* one channel: equal exporters */
    CHECK(st[0] == FP && st[1] == FP && v[0] && v[1]);
    pair(C, C, 0, 0, st, e, v);
    CHECK(st[0] == FP && st[1] == FP && v[0] && v[1]);
    pair(D, D, 0, 0, st, e, v);
    CHECK(st[0] == FP && st[1] == FP && !v[0] && !v[1]);
    /* two channels (a relay in the middle): side1 sees side0's binding first and refuses */
    pair(B, B, 7, 8, st, e, v);
    CHECK(st[1] == F && e[1].code == WK_ERR_ILTP_PROOF && strstr(e[1].msg, "Channel-Binding-Hash"));
    /* Disabled accepts a bound proof and derives nothing; the bound side refuses the zero-row block */
    pair(D, B, 0, 9, st, e, v);
    CHECK(st[1] == F && e[1].code == WK_ERR_ILTP_PROOF);
    pair(B, D, 9, 0, st, e, v);
    CHECK(st[1] == WK_ILTP_SESSION_ESTABLISHING && !v[1]); /* side1 (Disabled) accepted side0's bound proof */
    CHECK(st[0] == F && e[0].code == WK_ERR_ILTP_PROOF); /* side0 refused side1's zero-row block */
    /* shapes differ: ConfidentialChannel against ChannelBound */
    pair(C, B, 0, 5, st, e, v);
    CHECK(st[1] == F && e[1].code == WK_ERR_ILTP_PROOF && strstr(e[1].msg, "ChannelBound"));
    pair(D, C, 0, 0, st, e, v);
    CHECK(st[1] == F && e[1].code == WK_ERR_ILTP_PROOF && strstr(e[1].msg, "zero-row"));
}

int main(void)
{
    test_binding_hash();
    test_encode_check();
    test_field_rules();
    test_sessions();
    return wk_test_summary("iltp_proof");
}
