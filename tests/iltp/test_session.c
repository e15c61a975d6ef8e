/* ILTP sessions: two endpoints wired in memory (byte pipes of bounded, varying capacity), with
 * in-memory stores: prefacing, establishment, rounds to fixed point, every pairing of offers,
 * both forms, re-prefacing, store changes at fixed point, and faults injected into the wire. */
#include "wk_test.h"
#include <wirekit/iltp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- an in-memory store ---- */
typedef struct blob { uint8_t h[32]; uint8_t *d; size_t n; } blob;
typedef struct mstore { blob *b; size_t n, cap; } mstore;

static int hc(const void *a, const void *b) { return memcmp(a, b, 32); }
static blob *find(mstore *m, const uint8_t h[32])
{
    for (size_t i = 0; i < m->n; i++)
        if (memcmp(m->b[i].h, h, 32) == 0) return &m->b[i];
    return NULL;
}
static void add(mstore *m, const void *d, size_t n)
{
    uint8_t h[32];
    wk_iltp_blob_hash(d, n, h);
    if (find(m, h)) return;
    if (m->n == m->cap) { m->cap = m->cap ? m->cap * 2 : 16; m->b = realloc(m->b, m->cap * sizeof *m->b); }
    blob *b = &m->b[m->n++];
    memcpy(b->h, h, 32);
    b->d = malloc(n ? n : 1);
    memcpy(b->d, d, n);
    b->n = n;
}
static bool s_has(void *c, const uint8_t h[32]) { return find(c, h) != NULL; }
static wk_code s_list(void *c, uint8_t (**hs)[32], size_t *n, wk_error *e)
{
    (void)e;
    mstore *m = c;
    *hs = malloc((m->n ? m->n : 1) * 32);
    for (size_t i = 0; i < m->n; i++) memcpy((*hs)[i], m->b[i].h, 32);
    qsort(*hs, m->n, 32, hc);
    *n = m->n;
    return WK_OK;
}
static wk_code s_get(void *c, const uint8_t h[32], uint8_t **d, size_t *n, wk_error *e)
{
    blob *b = find(c, h);
    if (!b) return wk_error_set(e, WK_ERR_ARG, WK_NO_OFFSET, "missing");
    *d = malloc(b->n ? b->n : 1);
    memcpy(*d, b->d, b->n);
    *n = b->n;
    return WK_OK;
}
static wk_code s_put(void *c, const uint8_t h[32], const uint8_t *d, size_t n, wk_error *e)
{
    (void)e;
    uint8_t h2[32];
    wk_iltp_blob_hash(d, n, h2);
    if (memcmp(h, h2, 32) != 0) return wk_error_set(e, WK_ERR_ARG, WK_NO_OFFSET, "hash mismatch");
    add(c, d, n);
    return WK_OK;
}
static void mfree(mstore *m)
{
    for (size_t i = 0; i < m->n; i++) free(m->b[i].d);
    free(m->b);
    memset(m, 0, sizeof *m);
}
static bool same(mstore *a, mstore *b)
{
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        blob *x = find(b, a->b[i].h);
        if (!x || x->n != a->b[i].n || memcmp(x->d, a->b[i].d, x->n) != 0) return false;
    }
    return true;
}

/* ---- a pair of endpoints ---- */
typedef struct end {
    wk_iltp_session *s;
    mstore store;
    uint8_t *pipe; /* bytes sent by this end, not yet read by the other */
    size_t pn, pcap;
    bool eof_sent, eof_seen;
    wk_error err;
    bool failed;
} end;

typedef size_t (*tamper_fn)(int dir, uint8_t *p, size_t n, size_t total);

static void params(wk_iltp_session_params *p, int side, wk_iltp_form form, const char *dec, const char *enc, mstore *m)
{
    memset(p, 0, sizeof *p);
    p->side = side ? WK_ILTP_SIDE1 : WK_ILTP_SIDE0;
    p->form = form;
    p->decode = dec;
    p->encode = enc;
    memset(p->seed, side ? 0x22 : 0x11, 32);
    p->store = (wk_iltp_store_ops){m, s_has, s_list, s_get, s_put};
}

typedef struct run_opts {
    wk_iltp_form form;
    const char *dec[2], *enc[2];
    size_t chunk;            /* bytes moved per step */
    int repreface_at_step;   /* side0 replaces the session at this step (-1: never) */
    int change_at_fixed;     /* both sides add a Blob at the first fixed point */
    tamper_fn tamper;        /* may rewrite side0's outgoing bytes */
    int cross_close;         /* at fixed point side1 closes while side0's store changes */
    uint64_t budget_round;
} run_opts;

static int reprefaced;

/* Runs both ends until both reach fixed point and close, or something fails. Returns steps. */
static int run(end e[2], const run_opts *o, uint64_t *total_rounds)
{
    uint64_t now = 0;
    bool changed = false, closing = false, cross_pending = false;
    size_t sent_total[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        wk_iltp_session_params p;
        params(&p, i, o->form, o->dec[i], o->enc[i], &e[i].store);
        p.budget_round = o->budget_round;
        e[i].s = wk_iltp_session_create(&p, now, &e[i].err);
        if (!e[i].s) return -1;
    }
    int step;
    for (step = 0; step < 200000; step++) {
        now++;
        bool progress = false;
        if (step == o->repreface_at_step) {
            wk_iltp_session_state st = wk_iltp_session_state_get(e[0].s);
            if (st == WK_ILTP_SESSION_ESTABLISHING || st == WK_ILTP_SESSION_ROUND) {
                CHECK(wk_iltp_session_repreface(e[0].s, now, &e[0].err) == WK_OK);
                reprefaced++;
            } else if (st == WK_ILTP_SESSION_PREFACING) {
                CHECK(wk_iltp_session_repreface(e[0].s, now, &e[0].err) == WK_ERR_STATE);
            }
        }
        for (int i = 0; i < 2; i++) {
            end *me = &e[i], *peer = &e[1 - i];
            if (me->failed) continue;
            /* send up to chunk bytes */
            if (!me->eof_sent) {
                uint8_t tmp[70000];
                size_t cap = o->chunk < sizeof tmp ? o->chunk : sizeof tmp;
                wk_out out = {tmp, cap, 0};
                wk_result r = wk_iltp_session_send(me->s, &out, &me->err);
                if (r == WK_ERROR) { me->failed = true; continue; }
                size_t n = out.pos;
                bool disconnect = false;
                if (i == 0 && o->tamper) {
                    n = o->tamper(0, tmp, n, sent_total[0]);
                    if (n == (size_t)-1) { disconnect = true; n = 0; }
                }
                sent_total[i] += out.pos;
                if (n) {
                    if (me->pn + n > me->pcap) { me->pcap = (me->pn + n) * 2; me->pipe = realloc(me->pipe, me->pcap); }
                    memcpy(me->pipe + me->pn, tmp, n);
                    me->pn += n;
                    progress = true;
                }
                if (disconnect) { me->eof_sent = true; progress = true; }
                if (closing && r == WK_DONE && wk_iltp_session_closed_locally(me->s)) me->eof_sent = true;
            }
            /* receive what the peer sent */
            if (peer->pn) {
                size_t n = peer->pn < o->chunk ? peer->pn : o->chunk;
                wk_in in = {peer->pipe, n, 0};
                wk_result r = wk_iltp_session_recv(me->s, &in, now, &me->err);
                if (r == WK_ERROR) { me->failed = true; continue; }
                memmove(peer->pipe, peer->pipe + in.pos, peer->pn - in.pos);
                peer->pn -= in.pos;
                progress = true;
            } else if (peer->eof_sent && !me->eof_seen) {
                me->eof_seen = true;
                if (wk_iltp_session_eof(me->s, NULL, &me->err) != WK_OK) { me->failed = true; continue; }
                progress = true;
            }
        }
        if (e[0].failed || e[1].failed) break;
        wk_iltp_session_state s0 = wk_iltp_session_state_get(e[0].s), s1 = wk_iltp_session_state_get(e[1].s);
        bool quiet = !wk_iltp_session_wants_send(e[0].s) && !wk_iltp_session_wants_send(e[1].s) && !e[0].pn && !e[1].pn;
        if (s0 == WK_ILTP_SESSION_FIXED_POINT && s1 == WK_ILTP_SESSION_FIXED_POINT && quiet && !closing) {
            if (o->change_at_fixed && !changed) {
                changed = true;
                add(&e[0].store, "new on side0", 12);
                add(&e[1].store, "new on side1", 12);
                wk_iltp_session_store_changed(e[0].s, now);
                wk_iltp_session_store_changed(e[1].s, now);
                continue;
            }
            closing = true;
            CHECK(wk_iltp_session_close(e[1].s, &e[1].err) == WK_OK);
            if (o->cross_close) {
                /* side0 opens a round that crosses side1's bounded completion; side0 closes
                 * once it has seen side1's end (as the listener does) */
                add(&e[0].store, "crossing", 8);
                wk_iltp_session_store_changed(e[0].s, now);
                cross_pending = true;
                continue;
            }
            CHECK(wk_iltp_session_close(e[0].s, &e[0].err) == WK_OK);
            continue;
        }
        if (cross_pending && e[0].eof_seen && wk_iltp_session_state_get(e[0].s) == WK_ILTP_SESSION_CLOSED) {
            cross_pending = false;
            CHECK(wk_iltp_session_close(e[0].s, &e[0].err) == WK_OK);
        }
        if (s0 == WK_ILTP_SESSION_CLOSED && s1 == WK_ILTP_SESSION_CLOSED) break;
        if (!progress && quiet && !closing) break;
    }
    if (total_rounds) {
        wk_iltp_session_stats st;
        wk_iltp_session_stats_get(e[0].s, &st);
        *total_rounds = st.rounds;
    }
    return step;
}

static void cleanup(end e[2])
{
    for (int i = 0; i < 2; i++) {
        wk_iltp_session_free(e[i].s);
        free(e[i].pipe);
        mfree(&e[i].store);
        memset(&e[i], 0, sizeof e[i]);
    }
}

static void fill(mstore *m, int first, int count, size_t size)
{
    char *d = malloc(size + 64);
    for (int i = first; i < first + count; i++) {
        memset(d, 'a' + (i % 26), size);
        int l = snprintf(d, 64, "blob %d ", i);
        d[l] = ' ';
        add(m, d, size);
    }
    free(d);
}

static const run_opts base = {WK_ILTP_FORM_0_13, {"deflate12c,zstd20c", "deflate12c,zstd20c"},
                              {"zstd20c,deflate12c", "deflate12c"}, 4096, -1, 0, NULL, 0, 0};

static void expect_clean(end e[2], const char *label)
{
    CHECKF(!e[0].failed && !e[1].failed, "%s: failed: %s / %s", label, e[0].failed ? e[0].err.msg : "-",
           e[1].failed ? e[1].err.msg : "-");
    CHECKF(wk_iltp_session_state_get(e[0].s) == WK_ILTP_SESSION_CLOSED &&
           wk_iltp_session_state_get(e[1].s) == WK_ILTP_SESSION_CLOSED, "%s: states %s %s", label,
           wk_iltp_session_state_name(wk_iltp_session_state_get(e[0].s)),
           wk_iltp_session_state_name(wk_iltp_session_state_get(e[1].s)));
    CHECKF(same(&e[0].store, &e[1].store), "%s: stores differ (%zu vs %zu)", label, e[0].store.n, e[1].store.n);
}

static void test_stores(void)
{
    struct { int a0, n0, a1, n1; size_t size; const char *label; } cases[] = {
        {0, 0, 0, 0, 10, "empty stores"},
        {0, 5, 100, 7, 100, "disjoint"},
        {0, 10, 5, 10, 3000, "overlapping"},
        {0, 8, 0, 8, 50, "identical"},
        {0, 0, 0, 300, 20, "one side empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        end e[2];
        memset(e, 0, sizeof e);
        fill(&e[0].store, cases[i].a0, cases[i].n0, cases[i].size);
        fill(&e[1].store, cases[i].a1, cases[i].n1, cases[i].size);
        size_t want = 0;
        { mstore u = {0}; fill(&u, cases[i].a0, cases[i].n0, cases[i].size); fill(&u, cases[i].a1, cases[i].n1, cases[i].size); want = u.n; mfree(&u); }
        uint64_t rounds;
        run(e, &base, &rounds);
        expect_clean(e, cases[i].label);
        CHECKF(e[0].store.n == want, "%s: %zu blobs, want %zu", cases[i].label, e[0].store.n, want);
        /* one round moves everything; a round with requests is followed by one more */
        bool moved = cases[i].n0 != cases[i].n1 || cases[i].a0 != cases[i].a1;
        CHECKF(rounds == (moved ? 2u : 1u), "%s: %llu rounds", cases[i].label, (unsigned long long)rounds);
        cleanup(e);
    }
}

static void test_offers_and_forms(void)
{
    const char *lists[] = {NULL, "deflate12c", "zstd20c", "deflate12c,zstd20c", "zstd20c,deflate12c"};
    int ok = 0, total = 0;
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                run_opts o = base;
                o.form = f ? WK_ILTP_FORM_1_0 : WK_ILTP_FORM_0_13;
                o.dec[0] = lists[a]; o.enc[0] = lists[b];
                o.dec[1] = lists[b]; o.enc[1] = lists[a];
                o.chunk = 1 + (size_t)(a * 5 + b) * 97;
                end e[2];
                memset(e, 0, sizeof e);
                fill(&e[0].store, 0, 3, 500);
                fill(&e[1].store, 2, 3, 500);
                run(e, &o, NULL);
                total++;
                bool good = !e[0].failed && !e[1].failed && same(&e[0].store, &e[1].store) &&
                            wk_iltp_session_state_get(e[0].s) == WK_ILTP_SESSION_CLOSED;
                wk_iltp_session_stats st;
                wk_iltp_session_stats_get(e[0].s, &st);
                /* selection: side0 -> side1 = first of side0's Encode that side1's Decode lists */
                wk_iltp_offer oe = {0}, od = {0};
                wk_error er;
                if (!f && lists[b]) wk_iltp_offer_parse(lists[b], strlen(lists[b]), &oe, &er);
                if (!f && lists[b]) wk_iltp_offer_parse(lists[b], strlen(lists[b]), &od, &er);
                const char *t;
                size_t tl;
                wk_iltp_encoding want = wk_iltp_select(&oe, &od, &t, &tl);
                good = good && st.enc_out == want;
                if (good) ok++;
                else fprintf(stderr, "form %d offers %d/%d: %s %s enc_out %d want %d\n", f, a, b,
                             e[0].failed ? e[0].err.msg : "", e[1].failed ? e[1].err.msg : "", st.enc_out, want);
                cleanup(e);
            }
    CHECK(ok == total);
}

static void test_change_and_repreface(void)
{
    end e[2];
    memset(e, 0, sizeof e);
    fill(&e[0].store, 0, 4, 200);
    run_opts o = base;
    o.change_at_fixed = 1;
    uint64_t rounds;
    run(e, &o, &rounds);
    expect_clean(e, "store change at fixed point on both sides at once");
    CHECK(e[0].store.n == 6);
    CHECK(rounds >= 3);
    cleanup(e);

    int tried = 0;
    for (int step = 0; step < 200; step++) {
        reprefaced = 0;
        memset(e, 0, sizeof e);
        fill(&e[0].store, 0, 6, 2000);
        fill(&e[1].store, 3, 6, 2000);
        o = base;
        o.chunk = 100;
        o.repreface_at_step = step;
        run(e, &o, NULL);
        char label[64];
        snprintf(label, sizeof label, "re-preface at step %d", step);
        expect_clean(e, label);
        wk_iltp_session_stats st;
        wk_iltp_session_stats_get(e[1].s, &st);
        CHECKF(st.sessions == 1u + (unsigned)reprefaced, "%s: %llu sessions", label, (unsigned long long)st.sessions);
        tried += reprefaced;
        cleanup(e);
    }
    CHECKF(tried >= 20, "re-prefaced in %d runs", tried);
}

/* ---- faults: side0's bytes are rewritten on the way ---- */
static size_t cut_at;
static size_t t_disconnect(int dir, uint8_t *p, size_t n, size_t total)
{
    (void)dir; (void)p;
    if (total >= cut_at) return (size_t)-1;
    return total + n > cut_at ? cut_at - total : n;
}
static size_t flip_at;
static bool flipped;
static size_t t_flip(int dir, uint8_t *p, size_t n, size_t total)
{
    (void)dir;
    if (flip_at >= total && flip_at < total + n) { p[flip_at - total] ^= 0x5A; flipped = true; }
    return n;
}

static void test_faults(void)
{
    /* a disconnect anywhere before fixed point ends the session with a typed failure, and the
     * receiving store never holds anything but verified Blobs */
    int typed = 0, n = 0;
    for (cut_at = 0; cut_at < 1500; cut_at += 37) {
        end e[2];
        memset(e, 0, sizeof e);
        fill(&e[0].store, 0, 3, 300);
        run_opts o = base;
        o.form = WK_ILTP_FORM_1_0;
        o.chunk = 64;
        o.tamper = t_disconnect;
        run(e, &o, NULL);
        n++;
        if (e[1].failed && (e[1].err.code == WK_ERR_ILTP_PREMATURE_EOF || e[1].err.code == WK_ERR_ILTP_TRUNCATED))
            typed++;
        for (size_t i = 0; i < e[1].store.n; i++) {
            uint8_t h[32];
            wk_iltp_blob_hash(e[1].store.b[i].d, e[1].store.b[i].n, h);
            CHECK(memcmp(h, e[1].store.b[i].h, 32) == 0);
        }
        cleanup(e);
    }
    CHECK(typed == n);
    /* corrupted bytes anywhere: a typed PeerProtocol failure (or, for bytes that were data, a
     * hash or order failure); never a crash */
    int fails = 0;
    n = 0;
    for (flip_at = 0; flip_at < 1200; flip_at += 11) {
        end e[2];
        memset(e, 0, sizeof e);
        fill(&e[0].store, 0, 3, 300);
        run_opts o = base;
        o.tamper = t_flip;
        flipped = false;
        run(e, &o, NULL);
        if (flipped) n++;
        if (e[1].failed) {
            fails++;
            CHECKF(e[1].err.category == WK_CAT_PEER_PROTOCOL, "flip %zu: %s", flip_at, wk_error_name(e[1].err.code));
        }
        cleanup(e);
    }
    CHECK(fails > n / 2);
}

/* Hand-written peer bytes against one session: exact failures. */
static wk_code feed(const char *side0_items, wk_code *got)
{
    mstore m = {0};
    fill(&m, 0, 1, 10);
    wk_iltp_session_params p;
    params(&p, 1, WK_ILTP_FORM_1_0, NULL, NULL, &m);
    wk_error e;
    wk_iltp_session *s = wk_iltp_session_create(&p, 0, &e);
    uint8_t out[4096];
    wk_out o = {out, sizeof out, 0};
    wk_iltp_session_send(s, &o, &e);
    wk_in in = {(const uint8_t *)side0_items, strlen(side0_items), 0};
    wk_result r = wk_iltp_session_recv(s, &in, 1, &e);
    *got = r == WK_ERROR ? e.code : WK_OK;
    wk_iltp_session_free(s);
    mfree(&m);
    return *got;
}

static void test_round_crossing_close(void)
{
    for (int enc = 0; enc < 2; enc++) {
        end e[2];
        memset(e, 0, sizeof e);
        fill(&e[0].store, 0, 2, 100);
        run_opts o = base;
        o.cross_close = 1;
        if (enc) o.form = WK_ILTP_FORM_1_0;
        run(e, &o, NULL);
        CHECKF(!e[0].failed && !e[1].failed, "crossing close (%d): %s / %s", enc, e[0].failed ? e[0].err.msg : "-",
               e[1].failed ? e[1].err.msg : "-");
        CHECK(wk_iltp_session_state_get(e[0].s) == WK_ILTP_SESSION_CLOSED &&
              wk_iltp_session_state_get(e[1].s) == WK_ILTP_SESSION_CLOSED);
        CHECK(e[0].store.n == 3 && e[1].store.n == 2); /* the crossing Blob waits for a later session */
        cleanup(e);
    }
}

/* Two endpoints in this process over a real socketpair: non-blocking sockets, partial writes and
 * kernel backpressure, a poll loop, half-close at the end. Offers include a token neither side
 * implements on the wire (an unknown token in the peer's preface is kept for selection). */
static void test_socketpair(wk_iltp_form form, const char *dec0, const char *enc0, const char *dec1,
                            const char *enc1, size_t blob_size)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    for (int i = 0; i < 2; i++) fcntl(sv[i], F_SETFL, fcntl(sv[i], F_GETFL) | O_NONBLOCK);
    mstore st[2] = {{0}, {0}};
    fill(&st[0], 0, 4, blob_size);
    fill(&st[1], 2, 4, blob_size);
    wk_iltp_session *s[2];
    wk_error e[2];
    const char *dec[2] = {dec0, dec1}, *enc[2] = {enc0, enc1};
    for (int i = 0; i < 2; i++) {
        wk_iltp_session_params p;
        params(&p, i, form, dec[i], enc[i], &st[i]);
        s[i] = wk_iltp_session_create(&p, 0, &e[i]);
        REQUIRE(s[i] != NULL);
    }
    uint8_t out[2][8192];
    size_t opos[2] = {0, 0}, olen[2] = {0, 0};
    bool shut[2] = {false, false}, eof[2] = {false, false}, failed = false, closing = false;
    for (int iter = 0; iter < 200000 && !failed; iter++) {
        for (int i = 0; i < 2 && !failed; i++) {
            /* write: one retained buffer per side, refilled only when drained */
            if (opos[i] == olen[i] && !shut[i]) {
                wk_out o = {out[i], sizeof out[i], 0};
                if (wk_iltp_session_send(s[i], &o, &e[i]) == WK_ERROR) { failed = true; break; }
                opos[i] = 0;
                olen[i] = o.pos;
                if (!o.pos && wk_iltp_session_closed_locally(s[i])) { shutdown(sv[i], SHUT_WR); shut[i] = true; }
            }
            if (opos[i] < olen[i]) {
                ssize_t n = write(sv[i], out[i] + opos[i], olen[i] - opos[i]);
                if (n > 0) opos[i] += (size_t)n;
                else if (n < 0 && errno != EAGAIN) { failed = true; break; }
            }
            /* read */
            if (!eof[i]) {
                uint8_t in[4096];
                ssize_t n = read(sv[i], in, sizeof in);
                if (n > 0) {
                    wk_in w = {in, (size_t)n, 0};
                    if (wk_iltp_session_recv(s[i], &w, (uint64_t)iter, &e[i]) == WK_ERROR) { failed = true; break; }
                } else if (n == 0) {
                    eof[i] = true;
                    if (wk_iltp_session_eof(s[i], NULL, &e[i]) != WK_OK) { failed = true; break; }
                    if (i == 0) wk_iltp_session_close(s[0], &e[0]); /* the listener answers */
                } else if (errno != EAGAIN) {
                    failed = true;
                    break;
                }
            }
        }
        /* the connector completes at fixed point with nothing left to send */
        if (!closing && wk_iltp_session_state_get(s[1]) == WK_ILTP_SESSION_FIXED_POINT &&
            !wk_iltp_session_wants_send(s[1]) && opos[1] == olen[1]) {
            closing = true;
            wk_iltp_session_close(s[1], &e[1]);
        }
        if (eof[0] && eof[1] && shut[0] && shut[1]) break;
        struct pollfd pf[2] = {{sv[0], POLLIN | POLLOUT, 0}, {sv[1], POLLIN | POLLOUT, 0}};
        poll(pf, 2, 10);
    }
    CHECKF(!failed, "socketpair: %s / %s", e[0].msg, e[1].msg);
    CHECK(wk_iltp_session_state_get(s[0]) == WK_ILTP_SESSION_CLOSED && wk_iltp_session_state_get(s[1]) == WK_ILTP_SESSION_CLOSED);
    CHECK(same(&st[0], &st[1]) && st[0].n == 6);
    wk_iltp_session_stats a, b;
    wk_iltp_session_stats_get(s[0], &a);
    wk_iltp_session_stats_get(s[1], &b);
    CHECK(a.wire_out == b.wire_in && b.wire_out == a.wire_in && a.blobs_out == b.blobs_in);
    for (int i = 0; i < 2; i++) {
        wk_iltp_session_free(s[i]);
        mfree(&st[i]);
        close(sv[i]);
    }
}

/* A peer preface that lists tokens we do not implement: selection compares text and skips them. */
static void test_unknown_tokens(void)
{
    mstore m = {0};
    wk_iltp_session_params p;
    params(&p, 1, WK_ILTP_FORM_0_13, "deflate12c,zstd20c", "zstd20c,deflate12c", &m);
    wk_error e;
    wk_iltp_session *s = wk_iltp_session_create(&p, 0, &e);
    char pre[256];
    snprintf(pre, sizeof pre, "\xF0\x9F\xAA\xA2: iltp/0.13\nNonce: %s\nDecode: lz4x,brotli9,deflate12c\nEncode: lz4x,deflate12c\n\n",
             "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO");
    wk_in in = {(const uint8_t *)pre, strlen(pre), 0};
    CHECK(wk_iltp_session_recv(s, &in, 1, &e) == WK_NEED_INPUT);
    wk_iltp_session_stats st;
    wk_iltp_session_stats_get(s, &st);
    CHECK(st.enc_in == WK_ILTP_DEFLATE12C && st.enc_out == WK_ILTP_DEFLATE12C);
    CHECK(wk_iltp_session_state_get(s) == WK_ILTP_SESSION_ESTABLISHING);
    wk_iltp_session_free(s);
    /* and our own offers may only name what we implement */
    params(&p, 1, WK_ILTP_FORM_0_13, "lz4x", NULL, &m);
    CHECK(wk_iltp_session_create(&p, 0, &e) == NULL && e.code == WK_ERR_USAGE);
    mfree(&m);
}

static void test_exact_faults(void)
{
    char pre[128], op[256], s[2048], h[44];
    snprintf(pre, sizeof pre, "\xF0\x9F\xAA\xA2: iltp/1.0 %s\n", "svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO");
    {
        uint8_t b[200];
        wk_out o = {b, sizeof b, 0};
        wk_error e;
        wk_iltp_blob_encode((const uint8_t *)"op", 2, &o, &e);
        memcpy(op, b, o.pos);
        op[o.pos] = 0;
    }
    uint8_t hh[32];
    wk_iltp_blob_hash((const uint8_t *)"zz", 2, hh);
    wk_b64a_encode(hh, 32, h);
    h[43] = 0;
    wk_code got;
    /* a proof that is neither the zero-row block nor a Seal */
    snprintf(s, sizeof s, "%sFoo()\n\n", pre);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* equal nonces: the side1 session derives from seed 0x22.., so reuse its own nonce */
    /* duplicate advertisement */
    snprintf(s, sizeof s, "%s\n%sAdvertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\nAdvertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\n\n",
             pre, op, h, h, h, h);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* an advertisement without its field row, or outside the schema */
    snprintf(s, sizeof s, "%s\n%sAdvertised('B.%s.H3')\n\n", pre, op, h);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    snprintf(s, sizeof s, "%s\n%sAdvertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Size','0','9')\n\n", pre, op, h, h);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* a request for something we never advertised */
    snprintf(s, sizeof s, "%s\n%s\nMayRequest('B.%s.H3')\n\n", pre, op, h);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* an unrequested response */
    snprintf(s, sizeof s, "%s\n%s\n\n%s", pre, op, op);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* the fence before the request block */
    snprintf(s, sizeof s, "%s\n%s\nRoundComplete()\n\n", pre, op);
    CHECK(feed(s, &got) == WK_ERR_ILTP_SESSION_ORDER);
    /* a Blob with a wrong hash */
    snprintf(s, sizeof s, "%s\n%s", pre, op);
    char *hp = strstr(s + strlen(pre) + 1, ": B.") + 4;
    *hp = *hp == 'A' ? 'B' : 'A';
    CHECK(feed(s, &got) == WK_ERR_ILTP_RECORD_HASH);
    /* the operand over 1 MiB is refused at its Data-Length line */
    snprintf(s, sizeof s, "%s\n\xF0\x9F\x96\xA7: B.%s.H3\nData-Length: 2000000\n", pre, h);
    CHECK(feed(s, &got) == WK_ERR_ILTP_OPERAND_TOO_LARGE);
    /* premature EOF: nothing at all after the preface */
    mstore m = {0};
    wk_iltp_session_params p;
    params(&p, 1, WK_ILTP_FORM_1_0, NULL, NULL, &m);
    wk_error e;
    wk_iltp_session *ss = wk_iltp_session_create(&p, 0, &e);
    wk_in in = {(const uint8_t *)pre, strlen(pre), 0};
    CHECK(wk_iltp_session_recv(ss, &in, 1, &e) == WK_NEED_INPUT);
    CHECK(wk_iltp_session_eof(ss, NULL, &e) == WK_ERR_ILTP_PREMATURE_EOF);
    wk_iltp_session_free(ss);
    /* a phase deadline */
    p.phase_timeout_ms = 100;
    ss = wk_iltp_session_create(&p, 0, &e);
    CHECK(wk_iltp_session_tick(ss, 50, &e) == WK_OK);
    CHECK(wk_iltp_session_tick(ss, 101, &e) == WK_ERR_ILTP_DEADLINE && e.category == WK_CAT_TRANSPORT);
    wk_iltp_session_free(ss);
    /* the establishment budget */
    p.phase_timeout_ms = 0;
    p.budget_establishment = 10;
    ss = wk_iltp_session_create(&p, 0, &e);
    snprintf(s, sizeof s, "%s\n%s", pre, op);
    wk_in in2 = {(const uint8_t *)s, strlen(s), 0};
    CHECK(wk_iltp_session_recv(ss, &in2, 1, &e) == WK_ERROR && e.code == WK_ERR_ILTP_BUDGET);
    wk_iltp_session_free(ss);
    mfree(&m);
}

static void test_large_and_many(void)
{
    end e[2];
    memset(e, 0, sizeof e);
    fill(&e[0].store, 0, 1, 32u << 20);
    run_opts o = base;
    o.chunk = 65536;
    run(e, &o, NULL);
    expect_clean(e, "a 32 MiB Blob");
    cleanup(e);
    memset(e, 0, sizeof e);
    fill(&e[0].store, 0, 5000, 20);
    fill(&e[1].store, 5000, 5000, 20);
    run(e, &o, NULL);
    expect_clean(e, "10,000 small Blobs");
    CHECK(e[0].store.n == 10000);
    cleanup(e);
}

int main(void)
{
    test_stores();
    test_offers_and_forms();
    test_change_and_repreface();
    test_round_crossing_close();
    test_unknown_tokens();
    test_socketpair(WK_ILTP_FORM_0_13, "deflate12c,zstd20c", "zstd20c,deflate12c", "deflate12c,zstd20c", "deflate12c", 70000);
    test_socketpair(WK_ILTP_FORM_0_13, NULL, NULL, "zstd20c", "zstd20c", 3000);
    test_socketpair(WK_ILTP_FORM_1_0, NULL, NULL, NULL, NULL, 200000);
    test_exact_faults();
    test_faults();
    test_large_and_many();
    return wk_test_summary("iltp_session");
}
