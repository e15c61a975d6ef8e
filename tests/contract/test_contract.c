/* The contract harness tested on itself: a well-behaved toy streaming object (a hex encoder with
 * events and a sticky error) passes every run of wk_contract_check, and each way of breaking the
 * contract, injected one at a time, is caught with the rule it breaks; likewise for
 * wk_contract_encoder_check with a toy whole-item encoder. */
#include "wk_test.h"
#include "wk_contract.h"

/* ---------------------------------------------------------------------------------------------
 * The toy: hex-encodes its input ("ab" -> "6162"). Every input byte '!' is an event (the byte
 * is consumed with it, its hex follows); a 0xFF byte is a fatal PeerProtocol error at its offset;
 * the step returns WK_DONE after a '.' byte (its hex written), the rest then goes to _finish,
 * which accepts only an empty rest or one of spaces. As a writer (`hold`) it keeps the hex of the
 * last byte it has taken until the next byte comes or toy_flush writes it (as an encoder that
 * buffers): driven without its flush, _finish refuses the end (WK_ERR_STATE, output not taken).
 * ------------------------------------------------------------------------------------------- */
enum fault {
    F_NONE,
    F_NEED_INPUT_EARLY,   /* NEED_INPUT with a byte left */
    F_NEED_OUTPUT_ROOM,   /* NEED_OUTPUT with room in the view */
    F_SCRIBBLE,           /* writes a byte past out->pos, and changes one it produced */
    F_SCRIBBLE_ROOM,      /* writes a byte past out->pos (only) */
    F_NOT_STICKY,         /* after the error, goes on */
    F_STICKY_OTHER_MSG,   /* after the error, reports another message */
    F_CATEGORY,           /* overwrites the category after wk_error_set */
    F_EMPTY_EVENTS,       /* reports events that move nothing, forever */
    F_SPLIT_DEPENDENT,    /* records something at every push (outcome depends on the cut) */
    F_FINISH_TWICE,       /* _finish accepts, then refuses */
    F_FINISH_RESULT,      /* _finish returns WK_NEED_INPUT */
    F_POS_BACK,           /* moves in->pos backwards */
    F_OUTPUT_NO_VIEW,     /* an object without output answering NEED_OUTPUT */
    F_ERROR_NO_CODE,      /* WK_ERROR without setting the error */
    F_EVENT_NO_CALLBACK,  /* WK_EVENT from an object registered without an event callback */
    F_FINISH_LOSES_ERROR, /* _finish after the error reports success */
    F_FLUSH_ROOM,         /* the flush answers NEED_OUTPUT with room in the view */
    F_FLUSH_SCRIBBLE,     /* the flush writes a byte past out->pos */
    F_FLUSH_AGAIN,        /* after WK_DONE, the next flush writes a byte again */
    F_FLUSH_RESULT,       /* the flush answers WK_NEED_INPUT */
    F_FLUSH_NOT_STICKY,   /* after the error, the flush answers WK_DONE */
    F_FLUSH_FOREVER,      /* the flush answers NEED_OUTPUT in every view, writing nothing */
    F_BYTES_BY_PUSH,      /* writes upper-case hex for bytes that came in one-byte pushes */
};

typedef struct toy {
    enum fault fault;
    uint64_t consumed;
    int pending;          /* hex digits of the last byte not yet written (0..2) */
    uint8_t last;
    bool failed, done, event_reported, finished_once;
    wk_error error;
    bool new_push;
    bool hold;            /* a writer: the last byte's hex waits for the next byte or the flush */
    bool flushed_once;
    bool by_one;          /* the last byte came in a one-byte push */
} toy;

static bool toy_reset(void *obj, void *ctx)
{
    (void)ctx;
    toy *t = obj;
    enum fault f = t->fault;
    bool hold = t->hold;
    memset(t, 0, sizeof *t);
    t->fault = f;
    t->hold = hold;
    return true;
}

static const char hexd[] = "0123456789abcdef";

static wk_result toy_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    toy *t = obj;
    if (t->failed) {
        if (t->fault == F_NOT_STICKY) {
            t->failed = false; /* and skips the bad byte */
            if (in->pos < in->size) in->pos++;
        } else {
            if (err) *err = t->error;
            if (t->fault == F_STICKY_OTHER_MSG && err) snprintf(err->msg, sizeof err->msg, "other");
            return WK_ERROR;
        }
    }
    if (t->fault == F_EMPTY_EVENTS) return WK_EVENT;
    if (t->fault == F_POS_BACK && in->pos > 0) {
        in->pos--;
        return WK_NEED_INPUT;
    }
    if (t->fault == F_OUTPUT_NO_VIEW) return WK_NEED_OUTPUT;
    for (;;) {
        if (t->hold && t->pending && in->pos == in->size && !t->done) return WK_NEED_INPUT;
        while (t->pending) {
            if (!out || out->pos == out->size) {
                if (t->fault == F_SCRIBBLE && out && out->size > 0) out->dst[out->size - 1] ^= 1;
                return WK_NEED_OUTPUT;
            }
            uint8_t d = t->pending == 2 ? t->last >> 4 : t->last & 15;
            out->dst[out->pos++] = (uint8_t)hexd[d];
            if (t->fault == F_BYTES_BY_PUSH && t->by_one && d > 9) out->dst[out->pos - 1] -= 'a' - 'A';
            t->pending--;
            if ((t->fault == F_SCRIBBLE || t->fault == F_SCRIBBLE_ROOM) && out->pos < out->size)
                out->dst[out->pos] = 'X';
            if (t->fault == F_NEED_OUTPUT_ROOM && out->pos < out->size) return WK_NEED_OUTPUT;
        }
        if (t->done) return WK_DONE;
        if (in->pos == in->size) return WK_NEED_INPUT;
        if (t->fault == F_NEED_INPUT_EARLY && in->size - in->pos == 1 && in->src[in->pos] == 'z')
            return WK_NEED_INPUT;
        uint8_t b = in->src[in->pos];
        if (b == 0xFF) {
            wk_error_set(&t->error, WK_ERR_MOQT_TRUNCATED, t->consumed, "byte 0xff");
            if (t->fault == F_CATEGORY) t->error.category = WK_CAT_USAGE;
            t->failed = true;
            if (t->fault == F_ERROR_NO_CODE) return WK_ERROR;
            if (err) *err = t->error;
            return WK_ERROR;
        }
        t->by_one = in->size == 1;
        in->pos++;
        t->consumed++;
        t->last = b;
        t->pending = 2;
        if (b == '.') t->done = true;
        if (b == '!') return WK_EVENT;
    }
}

static wk_result toy_finish(void *obj, const wk_in *rest, wk_error *err)
{
    toy *t = obj;
    if (t->failed) {
        if (t->fault == F_FINISH_LOSES_ERROR) return WK_DONE;
        if (err) *err = t->error;
        return WK_ERROR;
    }
    if (t->fault == F_FINISH_RESULT) return WK_NEED_INPUT;
    if (t->fault == F_FINISH_TWICE && t->finished_once) {
        wk_error_set(err, WK_ERR_STATE, WK_NO_OFFSET, "twice");
        return WK_ERROR;
    }
    t->finished_once = true;
    for (size_t i = rest ? rest->pos : 0; rest && i < rest->size; i++)
        if (rest->src[i] != ' ') {
            wk_error_set(&t->error, WK_ERR_MOQT_PADDING_NONZERO, t->consumed + (i - rest->pos),
                         "not a space after the end");
            t->failed = true;
            if (err) *err = t->error;
            return WK_ERROR;
        }
    if (t->pending) {
        wk_error_set(&t->error, WK_ERR_STATE, WK_NO_OFFSET, "output not taken");
        t->failed = true;
        if (err) *err = t->error;
        return WK_ERROR;
    }
    return WK_DONE;
}

/* The writer's end: writes the held hex digits. */
static wk_result toy_flush(void *obj, wk_out *out, wk_error *err)
{
    toy *t = obj;
    if (t->failed) {
        if (t->fault == F_FLUSH_NOT_STICKY) return WK_DONE;
        if (err) *err = t->error;
        return WK_ERROR;
    }
    if (t->fault == F_FLUSH_RESULT) return WK_NEED_INPUT;
    if (t->fault == F_FLUSH_FOREVER) return WK_NEED_OUTPUT;
    if (t->fault == F_FLUSH_AGAIN && t->flushed_once && out->pos < out->size) {
        out->dst[out->pos++] = '0';
        return WK_DONE;
    }
    while (t->pending) {
        if (out->pos == out->size) return WK_NEED_OUTPUT;
        uint8_t d = t->pending == 2 ? t->last >> 4 : t->last & 15;
        out->dst[out->pos++] = (uint8_t)hexd[d];
        t->pending--;
        if (t->fault == F_FLUSH_SCRIBBLE && out->pos < out->size) out->dst[out->pos] = 'X';
        if (t->fault == F_FLUSH_ROOM && out->pos < out->size) return WK_NEED_OUTPUT;
    }
    t->flushed_once = true;
    return WK_DONE;
}

static bool toy_event(wk_contract *c, void *obj)
{
    toy *t = obj;
    if (t->fault == F_SPLIT_DEPENDENT) wk_contract_record_u64(c, c->push_offset);
    wk_contract_record_u64(c, t->consumed); /* where the event is: the same for every cut */
    if (t->fault != F_EMPTY_EVENTS && t->last != '!') return wk_contract_fail(c, "event not at '!'");
    return true;
}

static bool toy_end(wk_contract *c, void *obj)
{
    toy *t = obj;
    wk_contract_record_u64(c, t->consumed);
    return true;
}

static const wk_contract_ops toy_ops = {"toy", toy_reset, NULL, toy_step, toy_finish, toy_event,
                                        toy_end, true, 0, NULL};
static const wk_contract_ops toy_ops_no_output = {"toy", toy_reset, NULL, toy_step, toy_finish,
                                                  toy_event, toy_end, false, 0, NULL};
static const wk_contract_ops toy_ops_no_events = {"toy", toy_reset, NULL, toy_step, toy_finish,
                                                  NULL, toy_end, true, 0, NULL};

static unsigned scratch_always(void *obj)
{
    (void)obj;
    return WK_CONTRACT_SCRATCH_ALWAYS;
}
static unsigned scratch_on_error(void *obj)
{
    (void)obj;
    return WK_CONTRACT_SCRATCH_ON_ERROR;
}
static const wk_contract_ops toy_ops_scratch = {"toy", toy_reset, NULL, toy_step, toy_finish,
                                                toy_event, toy_end, true, 0, scratch_always};
static const wk_contract_ops toy_ops_scratch_on_error = {"toy", toy_reset, NULL, toy_step,
                                                         toy_finish, toy_event, toy_end, true, 0,
                                                         scratch_on_error};

static bool check(enum fault f, const wk_contract_ops *ops, const char *input, size_t n,
                  wk_contract_outcome *whole, char *why, size_t cap)
{
    toy t;
    memset(&t, 0, sizeof t);
    t.fault = f;
    return wk_contract_check(ops, &t, NULL, (const uint8_t *)input, n, WK_CONTRACT_ALL, whole,
                             why, cap);
}

static void test_good(void)
{
    static const struct { const char *in; size_t n; wk_result verdict; wk_code code; uint64_t off; }
        cases[] = {
            {"", 0, WK_DONE, WK_OK, 0},
            {"hello", 5, WK_DONE, WK_OK, 0},
            {"a!b!!c", 6, WK_DONE, WK_OK, 0},
            {"abc\xff" "def", 7, WK_ERROR, WK_ERR_MOQT_TRUNCATED, 3},
            {"\xff", 1, WK_ERROR, WK_ERR_MOQT_TRUNCATED, 0},
            {"xy.   ", 6, WK_DONE, WK_OK, 0},
            {"xy. q ", 6, WK_ERROR, WK_ERR_MOQT_PADDING_NONZERO, 4},
            {"!", 1, WK_DONE, WK_OK, 0},
        };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[320];
        wk_contract_outcome oc;
        bool ok = check(F_NONE, &toy_ops, cases[i].in, cases[i].n, &oc, why, sizeof why);
        CHECKF(ok, "case %zu: %s", i, why);
        CHECKF(oc.verdict == cases[i].verdict, "case %zu: verdict %d", i, (int)oc.verdict);
        if (cases[i].verdict == WK_ERROR)
            CHECKF(oc.error.code == cases[i].code && oc.error.offset == cases[i].off,
                   "case %zu: %s at %llu", i, wk_error_name(oc.error.code),
                   (unsigned long long)oc.error.offset);
        else
            CHECK(oc.produced == 2 * oc.consumed);
    }
    /* the output is the hex of the input, and the events are counted */
    wk_contract_outcome oc;
    char why[320];
    CHECK(check(F_NONE, &toy_ops, "a!b", 3, &oc, why, sizeof why) && oc.events == 1 &&
          oc.produced == 6);
    wk_contract_hash h;
    wk_contract_hash_init(&h);
    wk_contract_hash_add(&h, "61", 2);
    wk_contract_hash_add(&h, "2162", 4);
    CHECK(oc.output.h == h.h && oc.output.n == 6);
    /* a long input takes the sampled splits and chunk sizes */
    static char big[6000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = i % 97 == 0 ? '!' : (char)('a' + i % 26);
    CHECKF(check(F_NONE, &toy_ops, big, sizeof big, &oc, why, sizeof why), "%s", why);
    CHECK(oc.verdict == WK_DONE && oc.consumed == sizeof big && oc.events > 50);
    /* an object documented to use the view's room as scratch (view_scratch ALWAYS) may write
     * past out->pos; what it produces is still checked */
    CHECKF(check(F_SCRIBBLE_ROOM, &toy_ops_scratch, "a!b", 3, &oc, why, sizeof why), "%s", why);
    CHECK(oc.verdict == WK_DONE && oc.produced == 6);
    CHECK(!check(F_SCRIBBLE_ROOM, &toy_ops, "a!b", 3, &oc, why, sizeof why) &&
          strstr(why, "past out->pos") != NULL);
    /* the run allocates nothing without copies and a small view */
    toy t;
    memset(&t, 0, sizeof t);
    wk_contract_plan p = {1, NULL, 0, 8, true, false};
    CHECK(wk_contract_drive(&toy_ops, &t, NULL, (const uint8_t *)"a!b", 3, &p, &oc, why,
                            sizeof why) && oc.verdict == WK_DONE && oc.produced == 6);
}

/* A writer whose end writes output: without its flush the end is refused; with it every run
 * reaches the same bytes; each fault of the flush is caught with the rule it breaks. */
static bool check_writer(enum fault f, wk_contract_flush_fn flush, const char *input, size_t n,
                         wk_contract_outcome *whole, char *why, size_t cap)
{
    toy t;
    memset(&t, 0, sizeof t);
    t.fault = f;
    t.hold = true;
    return wk_contract_check_flush(&toy_ops, flush, &t, NULL, (const uint8_t *)input, n,
                                   WK_CONTRACT_ALL, whole, why, cap);
}

static void test_flush(void)
{
    char why[320];
    wk_contract_outcome oc;
    /* without the flush, the held bytes make _finish refuse the end */
    CHECKF(check_writer(F_NONE, NULL, "a!b", 3, &oc, why, sizeof why), "%s", why);
    CHECK(oc.verdict == WK_ERROR && oc.error.code == WK_ERR_STATE);
    /* with it: every cut and view gives the whole hex */
    static const char *good[] = {"", "a", "hello", "a!b!!c", "xy.   "};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t n = strlen(good[i]);
        CHECKF(check_writer(F_NONE, toy_flush, good[i], n, &oc, why, sizeof why), "\"%s\": %s",
               good[i], why);
        CHECKF(oc.verdict == WK_DONE && oc.produced == 2 * oc.consumed, "\"%s\": %s, %llu bytes",
               good[i], wk_error_name(oc.error.code), (unsigned long long)oc.produced);
    }
    CHECK(check_writer(F_NONE, toy_flush, "a!b", 3, &oc, why, sizeof why) && oc.produced == 6);
    wk_contract_hash h;
    wk_contract_hash_init(&h);
    wk_contract_hash_add(&h, "612162", 6);
    CHECK(oc.output.h == h.h);
    /* an error before the end: the flush reports it too */
    CHECKF(check_writer(F_NONE, toy_flush, "ab\xff", 3, &oc, why, sizeof why), "%s", why);
    CHECK(oc.verdict == WK_ERROR && oc.error.code == WK_ERR_MOQT_TRUNCATED && oc.error.offset == 2);
    /* a flush for an object without output is a misuse of the harness */
    toy t;
    memset(&t, 0, sizeof t);
    CHECK(!wk_contract_drive_flush(&toy_ops_no_output, toy_flush, &t, NULL, (const uint8_t *)"ab", 2,
                                   NULL, NULL, why, sizeof why) &&
          strstr(why, "a flush for an object without output") != NULL);
    static const struct { enum fault f; const char *in; size_t n; const char *rule; } cases[] = {
        {F_FLUSH_ROOM, "abc", 3, "the flush returned WK_NEED_OUTPUT with"},
        {F_FLUSH_SCRIBBLE, "abc", 3, "past out->pos"},
        {F_FLUSH_AGAIN, "abc", 3, "the flush was done, then returned WK_DONE writing 1 bytes"},
        {F_FLUSH_RESULT, "abc", 3, "the flush returned WK_NEED_INPUT"},
        {F_FLUSH_NOT_STICKY, "a\xff", 2, "the flush returned WK_DONE"},
        {F_FLUSH_FOREVER, "abc", 3, "the flush returned WK_NEED_OUTPUT with"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool ok = check_writer(cases[i].f, toy_flush, cases[i].in, cases[i].n, NULL, why,
                               sizeof why);
        CHECKF(!ok, "flush fault %zu (%s) not caught", i, cases[i].rule);
        CHECKF(strstr(why, cases[i].rule) != NULL, "flush fault %zu: caught as \"%s\", want \"%s\"",
               i, why, cases[i].rule);
    }
}

static void test_faults(void)
{
    static const struct { enum fault f; const wk_contract_ops *ops; const char *in; size_t n;
                          const char *rule; } cases[] = {
        {F_NEED_INPUT_EARLY, &toy_ops, "abz", 3, "WK_NEED_INPUT with 1 bytes of the push unread"},
        {F_NEED_OUTPUT_ROOM, &toy_ops, "abc", 3, "WK_NEED_OUTPUT with"},
        {F_SCRIBBLE, &toy_ops, "abc", 3, "past out->pos"},
        {F_SCRIBBLE, &toy_ops_scratch_on_error, "abc", 3, "past out->pos"}, /* not an error call */
        {F_NOT_STICKY, &toy_ops, "a\xff" "b", 3, "errors stay"},
        {F_STICKY_OTHER_MSG, &toy_ops, "a\xff", 2, "the step reported"},
        {F_CATEGORY, &toy_ops, "a\xff", 2, "the code table says PeerProtocol"},
        {F_EMPTY_EVENTS, &toy_ops, "abc", 3, "WK_EVENTs in a row moved neither view"},
        {F_SPLIT_DEPENDENT, &toy_ops, "a!b!c", 5, "differs from the whole run"},
        {F_FINISH_TWICE, &toy_ops, "abc", 3, "_finish accepted the end, then returned"},
        {F_FINISH_RESULT, &toy_ops, "abc", 3, "_finish returned WK_NEED_INPUT"},
        {F_POS_BACK, &toy_ops, "abc", 3, "in->pos moved from"},
        {F_OUTPUT_NO_VIEW, &toy_ops_no_output, "abc", 3, "WK_NEED_OUTPUT from an object without"},
        {F_ERROR_NO_CODE, &toy_ops, "a\xff", 2, "WK_ERROR with no code"},
        {F_NONE, &toy_ops_no_events, "a!b", 3, "WK_EVENT from an object that reports no events"},
        {F_FINISH_LOSES_ERROR, &toy_ops, "a\xff", 2, "_finish returned WK_DONE"},
        {F_NONE, &toy_ops_no_output, "abc", 3, "WK_NEED_OUTPUT from an object without output"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[320];
        bool ok = check(cases[i].f, cases[i].ops, cases[i].in, cases[i].n, NULL, why, sizeof why);
        CHECKF(!ok, "fault %zu (%s) not caught", i, cases[i].rule);
        CHECKF(strstr(why, cases[i].rule) != NULL, "fault %zu: caught as \"%s\", want \"%s\"", i,
               why, cases[i].rule);
    }
}

/* WK_CONTRACT_ANY_BYTES: output bytes that depend on the pushes pass, and only they. */
static void test_any_bytes(void)
{
    static const char in[] = "z!k~";
    char why[320];
    toy t;
    memset(&t, 0, sizeof t);
    t.fault = F_BYTES_BY_PUSH;
    CHECK(!wk_contract_check(&toy_ops, &t, NULL, (const uint8_t *)in, 4, WK_CONTRACT_ALL, NULL, why, sizeof why) &&
          strstr(why, "output 8 vs 8 bytes"));
    CHECKF(wk_contract_check(&toy_ops, &t, NULL, (const uint8_t *)in, 4, WK_CONTRACT_ALL | WK_CONTRACT_ANY_BYTES,
                             NULL, why, sizeof why), "%s", why);
    t.fault = F_SPLIT_DEPENDENT; /* the record still counts */
    CHECK(!wk_contract_check(&toy_ops, &t, NULL, (const uint8_t *)in, 4, WK_CONTRACT_ALL | WK_CONTRACT_ANY_BYTES,
                             NULL, why, sizeof why) && strstr(why, "event records differ"));
    t.fault = F_SCRIBBLE; /* and every rule of a call */
    CHECK(!wk_contract_check(&toy_ops, &t, NULL, (const uint8_t *)in, 4, WK_CONTRACT_ALL | WK_CONTRACT_ANY_BYTES,
                             NULL, why, sizeof why) && strstr(why, "past out->pos"));
}

/* ---------------------------------------------------------------------------------------------
 * Whole-item encoders: writes "item:" + the payload, refuses an empty payload (WK_ERR_ARG)
 * ------------------------------------------------------------------------------------------- */
typedef struct toy_enc {
    const char *payload;
    int fault;            /* 1: partial write on NEED_OUTPUT; 2: refusal depends on room;
                           * 3: writes past its item; 4: writes another size; 5: counts a
                           * NEED_OUTPUT as a write (its state changes) */
    int writes;           /* successful writes (state that restore resets) */
} toy_enc;

static wk_result toy_encode(void *ctx, wk_out *out, wk_error *err)
{
    toy_enc *e = ctx;
    size_t n = strlen(e->payload), need = 5 + n;
    if (e->fault == 2 && out->size - out->pos < 1) return WK_NEED_OUTPUT;
    if (n == 0) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "empty payload");
        return WK_ERROR;
    }
    if (e->fault == 4 && e->writes > 0) need--;
    if (out->size - out->pos < need) {
        if (e->fault == 1 && out->pos < out->size) out->dst[out->pos] = 'i';
        if (e->fault == 5) e->writes++;
        return WK_NEED_OUTPUT;
    }
    memcpy(out->dst + out->pos, "item:", 5);
    memcpy(out->dst + out->pos + 5, e->payload, need - 5);
    out->pos += need;
    if (e->fault == 3 && out->pos < out->size) out->dst[out->pos] = '!';
    e->writes++;
    return WK_DONE;
}

static bool toy_unchanged(void *ctx) { return ((toy_enc *)ctx)->writes == 0; }

static void test_encoder(void)
{
    toy_enc t = {"abc", 0, 0};
    wk_contract_encoder e = {toy_encode, NULL, NULL, &t, WK_OK, 8, (const uint8_t *)"item:abc"};
    char why[320];
    uint8_t *bytes;
    size_t len;
    CHECKF(wk_contract_encoder_check(&e, &bytes, &len, why, sizeof why), "%s", why);
    CHECK(len == 8 && bytes && memcmp(bytes, "item:abc", 8) == 0);
    free(bytes);
    e.size = SIZE_MAX; /* found by the check */
    CHECKF(wk_contract_encoder_check(&e, NULL, &len, why, sizeof why) && len == 8, "%s", why);
    e.size = 8;
    e.expect = (const uint8_t *)"item:abd";
    CHECK(!wk_contract_encoder_check(&e, NULL, NULL, why, sizeof why) &&
          strstr(why, "differs from the expected"));
    e.expect = NULL;
    e.size = 9;
    CHECK(!wk_contract_encoder_check(&e, NULL, NULL, why, sizeof why));
    e.size = 8;
    static const int faults[] = {1, 3, 4}; /* 2 only matters for a refusal (below) */
    for (int i = 0; i < 3; i++) {
        int f = faults[i];
        t.fault = f;
        t.writes = 0;
        CHECKF(!wk_contract_encoder_check(&e, NULL, NULL, why, sizeof why), "encoder fault %d", f);
    }
    /* the state checked after every NEED_OUTPUT */
    toy_enc st = {"abc", 5, 0};
    wk_contract_encoder se = {toy_encode, NULL, toy_unchanged, &st, WK_OK, 8, NULL};
    CHECK(!wk_contract_encoder_check(&se, NULL, NULL, why, sizeof why) &&
          strstr(why, "state changed"));
    st.fault = 0;
    st.writes = 0;
    se.restore = NULL;
    CHECKF(wk_contract_encoder_check(&se, NULL, NULL, why, sizeof why), "%s", why);
    /* refusals */
    toy_enc r = {"", 0, 0};
    wk_contract_encoder re = {toy_encode, NULL, NULL, &r, WK_ERR_ARG, 0, NULL};
    CHECKF(wk_contract_encoder_check(&re, NULL, NULL, why, sizeof why), "%s", why);
    re.refuse = WK_ERR_STATE;
    CHECK(!wk_contract_encoder_check(&re, NULL, NULL, why, sizeof why));
    re.refuse = WK_ERR_ARG;
    r.fault = 2; /* NEED_OUTPUT in a 0-byte view instead of the refusal */
    CHECK(!wk_contract_encoder_check(&re, NULL, NULL, why, sizeof why) && strstr(why, "view of 0"));
}

int main(void)
{
    test_good();
    test_faults();
    test_flush();
    test_any_bytes();
    test_encoder();
    return wk_test_summary("contract");
}
