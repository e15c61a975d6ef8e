/* libFuzzer target: the ILTP session machine fed arbitrary peer bytes (side1, both forms), with an
 * in-memory store. Byte 0 picks the form, the push size and whether our offers name encodings;
 * the rest is the peer's stream. Checks: no crash or leak; a failure is typed (PeerProtocol,
 * Transport for deadlines, Integration only for the store); the store only ever receives Blobs
 * whose hash matches their data; output can always be drained. */
#include <wirekit/iltp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

typedef struct mem { uint8_t h[8][32]; size_t n; } mem;
static const char stored[] = "a Blob the local store holds";

static bool m_has(void *c, const uint8_t h[32])
{
    mem *m = c;
    for (size_t i = 0; i < m->n; i++)
        if (memcmp(m->h[i], h, 32) == 0) return true;
    return false;
}
static wk_code m_list(void *c, uint8_t (**hs)[32], size_t *n, wk_error *e)
{
    (void)e;
    mem *m = c;
    *hs = malloc(32 * (m->n ? m->n : 1));
    memcpy(*hs, m->h, 32 * m->n);
    *n = m->n;
    return WK_OK;
}
static wk_code m_get(void *c, const uint8_t h[32], uint8_t **d, size_t *n, wk_error *e)
{
    (void)c; (void)h; (void)e;
    *n = sizeof stored - 1;
    *d = malloc(*n);
    memcpy(*d, stored, *n);
    return WK_OK;
}
static wk_code m_put(void *c, const uint8_t h[32], const uint8_t *d, size_t n, wk_error *e)
{
    mem *m = c;
    uint8_t h2[32];
    wk_iltp_blob_hash(d, n, h2);
    CHECK(memcmp(h, h2, 32) == 0); /* only verified Blobs reach the store */
    if (m->n < 8) memcpy(m->h[m->n++], h, 32);
    (void)e;
    return WK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    mem m = {{{0}}, 0};
    wk_iltp_blob_hash((const uint8_t *)stored, sizeof stored - 1, m.h[0]);
    m.n = 1;
    wk_iltp_session_params p;
    memset(&p, 0, sizeof p);
    p.side = WK_ILTP_SIDE1;
    p.form = (data[0] & 1) ? WK_ILTP_FORM_1_0 : WK_ILTP_FORM_0_13;
    if (data[0] & 2) {
        p.decode = "deflate12c,zstd20c";
        p.encode = "zstd20c,deflate12c";
    }
    memset(p.seed, 0x33, 32);
    p.store = (wk_iltp_store_ops){&m, m_has, m_list, m_get, m_put};
    p.budget_round = 1u << 20;
    p.phase_timeout_ms = 1000;
    size_t chunk = 1 + (size_t)(data[0] >> 2) * 13;
    wk_error e;
    wk_iltp_session *s = wk_iltp_session_create(&p, 0, &e);
    CHECK(s);
    static uint8_t out[4096];
    uint64_t now = 0;
    bool failed = false;
    for (size_t pos = 1; pos < size && !failed;) {
        size_t n = size - pos < chunk ? size - pos : chunk;
        wk_in in = {data, pos + n, pos};
        wk_result r = wk_iltp_session_recv(s, &in, now++, &e);
        if (r == WK_ERROR) { failed = true; break; }
        CHECK(in.pos == pos + n);
        pos += n;
        for (int k = 0; k < 100000; k++) {
            wk_out o = {out, sizeof out, 0};
            r = wk_iltp_session_send(s, &o, &e);
            if (r == WK_ERROR) { failed = true; break; }
            if (r == WK_DONE) break;
        }
    }
    if (!failed) {
        wk_in rest = {data, size, size};
        if (wk_iltp_session_eof(s, &rest, &e) != WK_OK) failed = true;
    }
    if (failed) {
        CHECK(e.category == WK_CAT_PEER_PROTOCOL || e.code == WK_ERR_ILTP_DEADLINE || e.code == WK_ERR_NOMEM);
        CHECK(wk_iltp_session_state_get(s) == WK_ILTP_SESSION_FAILED);
    }
    wk_iltp_session_free(s);
    return 0;
}
