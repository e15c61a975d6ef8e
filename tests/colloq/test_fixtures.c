/* colloq fixtures: criterion 1 (every transcript gives the same trace through the three
 * encodings, and the trace the Python model expects), fed whole and byte by byte; criterion 6 (a
 * plan differing only in a payload schedule has another identity and is refused at the preface);
 * canonical plans and identities against the model; verify_trace on valid and invalid traces.
 * Usage: test_colloq_fixtures FIXTURES_DIR */
#include "colloq_fixture.h"
#include "wk_contract_colloq.h"

static int scenarios_run;


/* Runs one transcript; returns the trace text (malloc'd). senders: role index per frame or NULL.
 * bytewise: feed the input one byte more per NEED_INPUT. *status: 0 clean, 2 failure, 3 truncated. */
static char *run(const wk_colloq_plan *plan, wk_colloq_wire wire, const char *data, size_t n,
                 const uint32_t *senders, size_t nsenders, bool bytewise, int *status)
{
    wk_colloq_trace tr;
    wk_colloq_trace_init(&tr, NULL);
    wk_error err;
    *status = -1;
    const char *nl = memchr(data, '\n', n);
    if (!nl) return NULL;
    wk_colloq_preface pf;
    if (wk_colloq_preface_parse(data, (size_t)(nl - data) + 1, &pf, &err) != WK_OK) return NULL;
    if (wk_colloq_preface_check(plan, &pf, wire, WK_COLLOQ_ROLE_ANY, NULL, &err) != WK_OK) return NULL;
    wk_colloq_decoder *d = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, wire, NULL}, &err);
    if (!d) return NULL;
    wk_colloq_session s;
    wk_colloq_session_init(&s, plan);
    wk_colloq_frame *f = malloc(sizeof *f);
    size_t body = (size_t)(nl - data) + 1;
    wk_in in = {(const uint8_t *)data + body, bytewise ? 0 : n - body, 0};
    size_t frame_no = 0;
    for (;;) {
        uint32_t sender = senders && frame_no < nsenders ? senders[frame_no] : WK_COLLOQ_SENDER_TRANSCRIPT;
        wk_result r = wk_colloq_session_step(&s, d, &in, sender, f, &err);
        if (r == WK_DONE) {
            wk_colloq_trace_append_frame(&tr, plan, f, &err);
            frame_no++;
            continue;
        }
        if (r == WK_NEED_INPUT) {
            if (in.size < n - body) {
                in.size++;
                continue;
            }
            if (wk_colloq_session_finish(&s, &in, &err) == WK_DONE) *status = 0;
            else {
                wk_colloq_trace_append_failure(&tr, s.failure, s.failure_seq, &err);
                *status = s.failure == WK_ERR_COLLOQ_TRUNCATED ? 3 : 2;
            }
            break;
        }
        wk_colloq_trace_append_failure(&tr, s.failure, s.failure_seq, &err);
        *status = 2;
        break;
    }
    free(f);
    wk_colloq_decoder_destroy(d);
    char *text = trace_text(&tr);
    wk_colloq_trace_destroy(&tr);
    return text;
}

static void check_plan(const char *conv, const char *base)
{
    char rel[256];
    wk_colloq_plan *p = plan_of(conv);
    CHECKF(p != NULL, "%s compiles", conv);
    if (!p) return;
    snprintf(rel, sizeof rel, "plans/%s.plan.json", base);
    size_t n;
    char *want = slurp(rel, &n);
    REQUIRE(want != NULL);
    CHECKF(p->canonical_len == n && memcmp(p->canonical, want, n) == 0, "%s canonical = model", base);
    snprintf(rel, sizeof rel, "plans/%s.identity", base);
    char *id = slurp(rel, NULL);
    REQUIRE(id != NULL);
    CHECKF(strncmp(id, p->identity, 64) == 0, "%s identity %s vs model %.64s", base, p->identity, id);
    /* the compiled plan loads back to the same identity; so does the conversation */
    wk_colloq_plan *q = NULL;
    wk_error err;
    CHECK(wk_colloq_plan_load(want, n, NULL, &q, &err) == WK_OK);
    if (q) CHECK(strcmp(q->identity, p->identity) == 0);
    wk_colloq_plan_destroy(q);
    /* a plan file with insignificant whitespace and keys in another order is fine */
    size_t cn;
    char *ctext = slurp(conv, &cn);
    q = NULL;
    CHECK(wk_colloq_plan_load(ctext, cn, NULL, &q, &err) == WK_OK);
    if (q) CHECK(strcmp(q->identity, p->identity) == 0);
    wk_colloq_plan_destroy(q);
    /* plan compile refuses a plan (conversation only) */
    q = NULL;
    CHECK(wk_colloq_plan_compile(want, n, NULL, &q, &err) == WK_ERR_COLLOQ_SCHEMA && q == NULL);
    /* a tampered plan file is refused: a schedule width changed */
    char *t = strdup(want);
    char *w = strstr(t, "\"width\":4");
    if (w) {
        w[8] = '8';
        q = NULL;
        CHECK(wk_colloq_plan_load(t, n, NULL, &q, &err) == WK_ERR_COLLOQ_PLAN && q == NULL);
    }
    free(t);
    free(want);
    free(id);
    free(ctext);
    wk_colloq_plan_destroy(p);
}

static const char *wires[3] = {"reference", "compact", "binary"};

/* The frames of a transcript (after its preface line) through wk_colloq_reader and the contract
 * harness: whole, byte by byte, split at every point, in chunks of every size, each run keeping
 * the contract and reaching the whole run's outcome, which must be the expected one: status 0 a
 * clean end, 2 a failure, 3 truncated, with the accepted frames of the expected trace. */
static void check_reader(const char *name, const wk_colloq_plan *plan, int w, const char *data,
                         size_t n, uint32_t sender, int want_status, const char *want_trace)
{
    const char *nl = memchr(data, '\n', n);
    REQUIRE(nl != NULL);
    size_t body = (size_t)(nl - data) + 1;
    wk_contract_colloq m;
    wk_contract_colloq_setup(&m, plan, (wk_colloq_wire)w, sender);
    wk_contract_outcome whole;
    char why[320];
    bool ok = wk_contract_check(&wk_contract_colloq_ops, &m, NULL, (const uint8_t *)data + body,
                                n - body, WK_CONTRACT_ALL, &whole, why, sizeof why);
    CHECKF(ok, "%s.%s through the harness: %s", name, wires[w], why);
    if (!ok) return;
    uint64_t accepted = 0;
    for (const char *l = want_trace; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        if (strncmp(l, "{\"failure\"", 10) != 0 && *l != '\n') accepted++;
    int status = whole.verdict == WK_DONE ? 0 : whole.error.code == WK_ERR_COLLOQ_TRUNCATED ? 3 : 2;
    CHECKF(status == want_status && whole.events == accepted && m.end.next_seq == accepted,
           "%s.%s reader: status %d (want %d), %llu frames (want %llu)", name, wires[w], status,
           want_status, (unsigned long long)whole.events, (unsigned long long)accepted);
    if (want_status != 0) CHECK(whole.verdict == WK_ERROR && whole.error.code == m.end.failure);
}

/* status_s: "0", "2", "3", or "live:N" (a live session: the .senders file names each frame's
 * sender); wires_s: NULL (all three) or "wires=reference,..." */
static void check_scenario(const char *name, const char *conv, const char *status_s,
                           const char *wires_s)
{
    wk_colloq_plan *plan = plan_of(conv);
    REQUIRE(plan != NULL);
    char rel[256];
    snprintf(rel, sizeof rel, "transcripts/%s.trace", name);
    size_t tn;
    char *want = slurp(rel, &tn);
    REQUIRE(want != NULL);
    uint32_t senders[64];
    size_t ns = 0;
    bool live = strncmp(status_s, "live:", 5) == 0;
    if (live) {
        snprintf(rel, sizeof rel, "transcripts/%s.senders", name);
        char *st = slurp(rel, NULL);
        REQUIRE(st != NULL);
        for (char *tok = strtok(st, "\n"); tok && ns < 64; tok = strtok(NULL, "\n"))
            senders[ns++] = (uint32_t)wk_colloq_plan_role_find(plan, tok, strlen(tok));
        free(st);
    }
    int want_status = atoi(live ? status_s + 5 : status_s);
    char *traces[3] = {0};
    bool has[3];
    int nwires = 0;
    for (int w = 0; w < 3; w++) {
        has[w] = !wires_s || strstr(wires_s, wires[w]) != NULL;
        nwires += has[w];
    }
    CHECKF(nwires > 0, "%s: wires %s", name, wires_s);
    for (int w = 0; w < 3; w++) {
        if (!has[w]) continue;
        snprintf(rel, sizeof rel, "transcripts/%s.%s", name, wires[w]);
        size_t n;
        char *data = slurp(rel, &n);
        REQUIRE(data != NULL);
        for (int bytewise = 0; bytewise < 2; bytewise++) {
            int status;
            char *got = run(plan, (wk_colloq_wire)w, data, n, live ? senders : NULL, ns, bytewise, &status);
            CHECKF(got != NULL, "%s.%s runs", name, wires[w]);
            if (!got) continue;
            CHECKF(strcmp(got, want) == 0, "%s.%s%s trace:\n%s--- expected:\n%s", name, wires[w],
                   bytewise ? " (byte by byte)" : "", got, want);
            CHECKF(status == want_status, "%s.%s status %d, expected %d", name, wires[w], status, want_status);
            if (!bytewise) traces[w] = got;
            else free(got);
        }
        /* a live session has one peer: the reader takes one sender */
        bool one_sender = true;
        for (size_t k = 1; k < ns; k++) one_sender = one_sender && senders[k] == senders[0];
        if (!live) check_reader(name, plan, w, data, n, WK_COLLOQ_SENDER_TRANSCRIPT, want_status, want);
        else if (one_sender && ns > 0) check_reader(name, plan, w, data, n, senders[0], want_status, want);
        free(data);
    }
    /* criterion 1, stated directly */
    if (nwires == 3 && traces[0] && traces[1] && traces[2])
        CHECKF(strcmp(traces[0], traces[1]) == 0 && strcmp(traces[1], traces[2]) == 0,
               "%s: one trace for all three encodings", name);
    for (int w = 0; w < 3; w++) free(traces[w]);
    /* the expected trace verifies against the plan */
    wk_colloq_trace tr;
    wk_colloq_trace_init(&tr, NULL);
    wk_error err;
    CHECKF(wk_colloq_trace_parse(want, tn, &tr, &err) == WK_OK, "%s trace parses", name);
    wk_colloq_trace_verify_report rep;
    CHECKF(wk_colloq_trace_verify(plan, &tr, &rep, &err) == WK_OK && rep.ok, "%s trace verifies: %s",
           name, err.msg);
    /* and prints back byte for byte */
    char *again = trace_text(&tr);
    CHECK(again && strcmp(again, want) == 0);
    free(again);
    wk_colloq_trace_destroy(&tr);
    free(want);
    wk_colloq_plan_destroy(plan);
    scenarios_run++;
}

/* Criterion 6: a plan whose only difference is a payload schedule is refused at the preface. */
static void check_schedule_variants(void)
{
    wk_colloq_plan *base = plan_of("token-stream.json");
    const char *variants[2] = {"token-stream-f64.json", "token-stream-ceiling.json"};
    REQUIRE(base != NULL);
    for (int v = 0; v < 2; v++) {
        wk_colloq_plan *var = plan_of(variants[v]);
        REQUIRE(var != NULL);
        CHECKF(strcmp(var->identity, base->identity) != 0, "%s has its own identity", variants[v]);
        /* same transitions, states and roles: only a schedule differs */
        CHECK(var->transition_count == base->transition_count && var->state_count == base->state_count);
        for (int w = 0; w < 3; w++) {
            char rel[128];
            snprintf(rel, sizeof rel, "transcripts/ts-valid.%s", wires[w]);
            size_t n;
            char *data = slurp(rel, &n);
            REQUIRE(data != NULL);
            wk_colloq_preface pf;
            wk_error err;
            CHECK(wk_colloq_preface_parse(data, (size_t)((char *)memchr(data, '\n', n) - data) + 1, &pf, &err) == WK_OK);
            CHECKF(wk_colloq_preface_check(var, &pf, (wk_colloq_wire)w, WK_COLLOQ_ROLE_ANY, NULL, &err) ==
                       WK_ERR_COLLOQ_PLAN_MISMATCH, "%s refuses ts-valid.%s", variants[v], wires[w]);
            CHECK(wk_colloq_preface_check(base, &pf, (wk_colloq_wire)w, WK_COLLOQ_ROLE_ANY, NULL, &err) == WK_OK);
            /* our preface written for the variant is refused by the base plan as well */
            char line[256];
            size_t ln = preface_of(var, (wk_colloq_wire)w, 1, line, sizeof line);
            CHECK(ln > 0);
            wk_colloq_preface vp;
            CHECK(wk_colloq_preface_parse(line, ln, &vp, &err) == WK_OK);
            CHECK(wk_colloq_preface_check(base, &vp, (wk_colloq_wire)w, 0, NULL, &err) == WK_ERR_COLLOQ_PLAN_MISMATCH);
            CHECK(strcmp(wk_error_name(err.code), "COLLOQ_ERR_PLAN_MISMATCH") == 0);
            free(data);
        }
        wk_colloq_plan_destroy(var);
    }
    wk_colloq_plan_destroy(base);
}

/* Deliberately invalid traces: traces/index.txt lists "file conversation entry reason-name". */
static void check_invalid_traces(void)
{
    char *idx = slurp("traces/index.txt", NULL);
    REQUIRE(idx != NULL);
    int count = 0;
    char *save = NULL;
    for (char *line = strtok_r(idx, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char file[128], conv[128], reason[64];
        size_t entry;
        if (sscanf(line, "%127s %127s %zu %63s", file, conv, &entry, reason) != 4) continue;
        wk_colloq_plan *plan = plan_of(conv);
        REQUIRE(plan != NULL);
        char rel[256];
        snprintf(rel, sizeof rel, "traces/%s", file);
        size_t n;
        char *text = slurp(rel, &n);
        REQUIRE(text != NULL);
        wk_colloq_trace tr;
        wk_colloq_trace_init(&tr, NULL);
        wk_error err;
        CHECKF(wk_colloq_trace_parse(text, n, &tr, &err) == WK_OK, "%s parses", file);
        wk_colloq_trace_verify_report rep;
        wk_code rc = wk_colloq_trace_verify(plan, &tr, &rep, &err);
        CHECKF(rc != WK_OK && !rep.ok, "%s is refused", file);
        CHECKF(rep.entry == entry, "%s: entry %zu, expected %zu (%s)", file, rep.entry, entry, err.msg);
        CHECKF(strcmp(wk_error_name(rep.reason), reason) == 0, "%s: reason %s, expected %s (%s)", file,
               wk_error_name(rep.reason), reason, err.msg);
        CHECK(rc == rep.reason);
        wk_colloq_trace_destroy(&tr);
        free(text);
        wk_colloq_plan_destroy(plan);
        count++;
    }
    CHECKF(count >= 10, "%d invalid trace fixtures", count);
    free(idx);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_colloq_fixtures FIXTURES_DIR\n");
        return 1;
    }
    dir = argv[1];
    check_plan("token-stream.json", "token-stream");
    check_plan("moe-router.json", "moe-router");
    check_plan("token-stream-f64.json", "token-stream-f64");
    check_plan("token-stream-ceiling.json", "token-stream-ceiling");
    check_plan("chat.json", "chat");
    check_plan("all-types.json", "all-types");
    check_plan("gen-names.json", "gen-names");
    int listed = for_each_scenario(check_scenario);
    CHECKF(listed >= 23 && scenarios_run == listed, "%d of %d scenarios ran", scenarios_run, listed);
    check_schedule_variants();
    check_invalid_traces();
    return wk_test_summary("colloq_fixtures");
}
