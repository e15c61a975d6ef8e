/* libFuzzer target: the Colloq conversation compiler and plan loader (colloq.h) on arbitrary
 * bytes as conversation JSON.
 *
 * The whole input goes to wk_colloq_plan_compile (exact size, not NUL-terminated) and to
 * wk_colloq_plan_load. Checked:
 *   - never a crash, leak or undefined behaviour (ASan/UBSan/LeakSanitizer);
 *   - a compile failure leaves the plan NULL and is a typed compile error: a WK_ERR_COLLOQ_* code
 *     of the compiler (700-710), category Usage, whose message starts with its JSON path ("$...");
 *     a JSON syntax error (WK_ERR_COLLOQ_JSON) also has a byte offset inside the input;
 *   - a compiled plan is consistent: identity is 64 lowercase hex characters and is BLAKE3 of the
 *     canonical text (computed here), whose length is canonical_len with no NUL inside; initial,
 *     transition endpoints, senders and messages are in range; transition ids are dense and sorted
 *     by (from, message, sender) names with strcmp, with no duplicate triple; no transition leaves
 *     a final state (decision 3); messages are sorted by name; each schedule has field widths equal
 *     to the type widths, presence bits numbered 0.. in declared order over the optional fields,
 *     bitmap_bytes = ceil(optional_count / 8), fixed_bytes = bitmap + required fixed widths,
 *     max_payload in 1..WK_COLLOQ_MAX_PAYLOAD_LIMIT, max_payload_max the largest;
 *   - the canonical plan JSON loads (wk_colloq_plan_load, as a plan) to the same identity and the
 *     same canonical text, and loading the input itself agrees with compiling it (when compile
 *     succeeds, load gives the same identity; when load succeeds and compile fails, the input
 *     was a plan, and its canonical text loads to itself again);
 *   - compiling the same input twice gives the same identity (deterministic). */
#include <wirekit/colloq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

static bool compile_code(wk_code c)
{
    return c >= WK_ERR_COLLOQ_JSON && c <= WK_ERR_COLLOQ_PLAN;
}

static void check_error(const wk_error *err, wk_code c, size_t size)
{
    CHECK(err->code == c);
    CHECK(compile_code(c));
    CHECK(err->category == WK_CAT_USAGE);
    CHECK(err->msg[0] == '$');
    if (c == WK_ERR_COLLOQ_JSON) CHECK(err->has_offset && err->offset <= size);
}

static void check_identity(const wk_colloq_plan *p)
{
    CHECK(p->canonical != NULL);
    CHECK(strlen(p->canonical) == p->canonical_len);
    uint8_t h[WK_BLAKE3_OUT_LEN];
    wk_blake3(p->canonical, p->canonical_len, h);
    char hex[WK_COLLOQ_IDENTITY_LEN + 1];
    for (int i = 0; i < WK_BLAKE3_OUT_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
    CHECK(strcmp(hex, p->identity) == 0);
}

static int cmp_transition(const wk_colloq_plan *p, const wk_colloq_transition *a,
                          const wk_colloq_transition *b)
{
    int c = strcmp(p->states[a->from], p->states[b->from]);
    if (c) return c;
    c = strcmp(p->messages[a->message].name, p->messages[b->message].name);
    if (c) return c;
    return strcmp(p->roles[a->sender], p->roles[b->sender]);
}

static void check_plan(const wk_colloq_plan *p)
{
    check_identity(p);
    CHECK(p->name != NULL);
    CHECK(p->role_count > 0 && p->state_count > 0);
    CHECK(p->initial < p->state_count);
    for (uint32_t i = 0; i < p->role_count; i++)
        CHECK(wk_colloq_plan_role_find(p, p->roles[i], strlen(p->roles[i])) == (int32_t)i);
    for (uint32_t i = 0; i < p->state_count; i++)
        CHECK(wk_colloq_plan_state_find(p, p->states[i], strlen(p->states[i])) == (int32_t)i);
    uint32_t max_max = 0;
    for (uint32_t i = 0; i < p->message_count; i++) {
        const wk_colloq_message *m = &p->messages[i];
        if (i > 0) CHECK(strcmp(p->messages[i - 1].name, m->name) < 0);
        CHECK(wk_colloq_plan_message_find(p, m->name, strlen(m->name)) == (int32_t)i);
        CHECK(m->field_count <= WK_COLLOQ_MAX_FIELDS);
        CHECK(m->max_payload >= 1 && m->max_payload <= WK_COLLOQ_MAX_PAYLOAD_LIMIT);
        if (m->max_payload > max_max) max_max = m->max_payload;
        uint32_t opt = 0, fixed = 0;
        for (uint32_t k = 0; k < m->field_count; k++) {
            const wk_colloq_field *fd = &m->fields[k];
            CHECK((int)fd->type >= 0 && (int)fd->type < WK_COLLOQ_TYPE_COUNT);
            CHECK(fd->width == wk_colloq_type_width_get(fd->type));
            CHECK(wk_colloq_message_field_find(m, fd->name, strlen(fd->name)) == (int32_t)k);
            if (fd->optional) {
                CHECK(fd->presence_bit == opt);
                opt++;
            } else {
                fixed += fd->width;
            }
        }
        CHECK(m->optional_count == opt);
        CHECK(m->bitmap_bytes == (opt + 7) / 8);
        CHECK(m->fixed_bytes == fixed + m->bitmap_bytes);
    }
    if (p->message_count) CHECK(p->max_payload_max == max_max);
    for (uint32_t t = 0; t < p->transition_count; t++) {
        const wk_colloq_transition *tr = &p->transitions[t];
        CHECK(tr->from < p->state_count && tr->to < p->state_count);
        CHECK(tr->sender < p->role_count && tr->message < p->message_count);
        CHECK(!p->is_final[tr->from]);
        if (t > 0) CHECK(cmp_transition(p, &p->transitions[t - 1], tr) < 0);
        CHECK(wk_colloq_plan_transition_find(p, tr->from, tr->message, tr->sender) == t);
    }
}

static void check_same(const wk_colloq_plan *a, const wk_colloq_plan *b)
{
    CHECK(strcmp(a->identity, b->identity) == 0);
    CHECK(a->canonical_len == b->canonical_len);
    CHECK(memcmp(a->canonical, b->canonical, a->canonical_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    wk_colloq_plan *p = NULL, *q = NULL, *l = NULL;
    wk_error err;
    wk_error_clear(&err);
    wk_code c = wk_colloq_plan_compile(text, size, NULL, &p, &err);
    if (c == WK_OK) {
        CHECK(p != NULL && err.code == WK_OK);
        check_plan(p);
        CHECK(p->has_schedules);
        /* the canonical plan loads back to itself */
        wk_error_clear(&err);
        CHECK(wk_colloq_plan_load(p->canonical, p->canonical_len, NULL, &q, &err) == WK_OK);
        check_same(p, q);
        wk_colloq_plan_destroy(q);
        q = NULL;
        /* deterministic, and load on a conversation is compile */
        CHECK(wk_colloq_plan_compile(text, size, NULL, &q, &err) == WK_OK);
        check_same(p, q);
        CHECK(wk_colloq_plan_load(text, size, NULL, &l, &err) == WK_OK);
        check_same(p, l);
        wk_colloq_plan_destroy(q);
        wk_colloq_plan_destroy(l);
        wk_colloq_plan_destroy(p);
        return 0;
    }
    CHECK(p == NULL);
    check_error(&err, c, size);
    /* the loader: a plan file, or the same failure */
    wk_error_clear(&err);
    wk_code lc = wk_colloq_plan_load(text, size, NULL, &l, &err);
    if (lc != WK_OK) {
        CHECK(l == NULL);
        check_error(&err, lc, size);
        return 0;
    }
    check_plan(l);
    CHECK(wk_colloq_plan_load(l->canonical, l->canonical_len, NULL, &q, &err) == WK_OK);
    check_same(l, q);
    wk_colloq_plan_destroy(q);
    wk_colloq_plan_destroy(l);
    return 0;
}
