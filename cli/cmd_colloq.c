/* wirekit colloq: the Colloq plan codec (include/wirekit/colloq.h; spec shared/specs/colloq.md,
 * "CLI details"). This file: the command table and dispatch, `colloq compile` (canonical plan on
 * stdout, `plan <identity>` on stderr), `colloq run` (a transcript on stdin checked frame by
 * frame, its trace on stdout), `colloq convert` (a transcript re-encoded into another wire) and
 * `colloq verify` (a trace file checked against a plan); `colloq gen` is in cmd_colloq_gen.c.
 * The benchmark report is bench/colloq_bench, not a CLI command: no benchmark code links into
 * the CLI.
 *
 * Transcripts are streamed: stdin is read as it arrives (at most 64 KiB a read, stdout flushed
 * before each) and frames are decoded and written as they complete, so a transcript of any length
 * runs in memory bounded by its largest frame.
 * Byte offsets in stderr lines count from the start of the input (the preface included). No
 * codec logic here: only files, buffers and presentation. */
#include "cmd_colloq.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------------------------- */

/* Prints err as one stderr line ("NAME at offset N: message") and returns 3 for truncation,
 * else 2: every error reported this way is the input's fault. */
static int fail_input(const wk_error *err)
{
    fflush(stdout); /* the output decoded before the error, then its line */
    char line[256];
    fprintf(stderr, "%s\n", wk_error_format(err, line, sizeof line));
    return wk_code_is_truncation(err->code) ? WK_EXIT_TRUNCATED : WK_EXIT_INVALID;
}

/* A local failure (memory, I/O): one stderr line, exit 1. */
static int fail_local(wk_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail_local(wk_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", wk_error_name(code));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return WK_EXIT_USAGE;
}

static int put(const void *p, size_t n)
{
    if (!wk_cli_write(p, n)) return fail_local(WK_ERR_BACKEND, "cannot write to stdout");
    return 0;
}

static int flush_stdout(void)
{
    if (fflush(stdout) != 0) return fail_local(WK_ERR_BACKEND, "cannot write to stdout");
    return 0;
}

/* Reads a whole file ("-" = stdin) into a malloc'd buffer (caller frees). NULL with a message
 * printed (exit 1) on failure. */
static uint8_t *read_file(const char *path, size_t *len)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        fail_local(WK_ERR_USAGE, "cannot open '%s'", path);
        return NULL;
    }
    bool too_long = false;
    uint8_t *buf = wk_cli_read_all(f, COLLOQ_FILE_MAX, len, &too_long);
    if (!is_stdin) fclose(f);
    if (!buf) {
        if (too_long)
            fail_local(WK_ERR_USAGE, "'%s' is longer than %u bytes", path, COLLOQ_FILE_MAX);
        else
            fail_local(WK_ERR_BACKEND, "cannot read '%s'", path);
    }
    return buf;
}

wk_colloq_plan *colloq_load_plan(const char *path, int *rc)
{
    size_t len = 0;
    uint8_t *text = read_file(path, &len);
    if (!text) {
        *rc = WK_EXIT_USAGE;
        return NULL;
    }
    wk_colloq_plan *plan = NULL;
    wk_error err;
    if (wk_colloq_plan_load((const char *)text, len, NULL, &plan, &err) != WK_OK) {
        *rc = fail_input(&err);
        plan = NULL;
    }
    free(text);
    return plan;
}

/* Options of run, convert and verify. */
typedef struct colloq_opts {
    const char *plan;
    const char *file;          /* the positional argument (verify: TRACE) */
    bool has_wire, has_from, has_to;
    wk_colloq_wire wire, from, to;
} colloq_opts;

static int parse_wire(const char *verb, const char *opt, const char *v, wk_colloq_wire *out)
{
    if (!v || !wk_colloq_wire_parse(v, out))
        return wk_cli_usage("wirekit colloq %s: %s takes reference, compact or binary", verb, opt);
    return -1;
}

/* Parses argv[1..argc). Returns -1 to go on, else the exit status (0 after --help). */
static int parse_opts(int argc, char **argv, const char *verb, const char *help, bool positional,
                      colloq_opts *o)
{
    memset(o, 0, sizeof *o);
    const char *v;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            fputs(help, stdout);
            return WK_EXIT_OK;
        } else if (wk_cli_take(argc, argv, &i, "--plan", &v)) {
            if (!v || !*v) return wk_cli_usage("wirekit colloq %s: --plan takes a file", verb);
            o->plan = v;
        } else if (wk_cli_take(argc, argv, &i, "--wire", &v)) {
            if ((rc = parse_wire(verb, "--wire", v, &o->wire)) >= 0) return rc;
            o->has_wire = true;
        } else if (wk_cli_take(argc, argv, &i, "--from", &v)) {
            if ((rc = parse_wire(verb, "--from", v, &o->from)) >= 0) return rc;
            o->has_from = true;
        } else if (wk_cli_take(argc, argv, &i, "--to", &v)) {
            if ((rc = parse_wire(verb, "--to", v, &o->to)) >= 0) return rc;
            o->has_to = true;
        } else if (positional && !o->file && (a[0] != '-' || strcmp(a, "-") == 0)) {
            o->file = a;
        } else {
            return wk_cli_usage("wirekit colloq %s: unknown or extra argument '%s' (see 'wirekit "
                                "colloq %s --help')", verb, a, verb);
        }
    }
    if (!o->plan) return wk_cli_usage("wirekit colloq %s: --plan FILE is required", verb);
    return -1;
}

/* ---------------------------------------------------------------------------------------------
 * The stdin stream: a buffer holding the unconsumed bytes [start, end), refilled in chunks and
 * grown only while one frame does not fit (up to `limit`).
 * ------------------------------------------------------------------------------------------- */

typedef struct instream {
    uint8_t *buf;
    size_t cap, start, end, limit;
    uint64_t base; /* stream offset of buf[0] */
    bool eof;
} instream;

static int in_init(instream *s, size_t limit)
{
    memset(s, 0, sizeof *s);
    s->cap = COLLOQ_IO_CHUNK;
    s->limit = limit < COLLOQ_IO_CHUNK ? COLLOQ_IO_CHUNK : limit;
    s->buf = malloc(s->cap);
    if (!s->buf) return fail_local(WK_ERR_NOMEM, "cannot allocate the input buffer");
    return 0;
}

/* Stream offset of the first unconsumed byte. */
static uint64_t in_offset(const instream *s)
{
    return s->base + s->start;
}

/* Reads more of stdin behind the unconsumed bytes. Returns 0 (s->eof set at end of input), or an
 * exit status with a message printed. */
static int in_fill(instream *s)
{
    if (s->eof) return 0;
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->base += s->start;
        s->end -= s->start;
        s->start = 0;
    }
    if (s->end == s->cap) {
        if (s->cap >= s->limit)
            return fail_local(WK_ERR_NOMEM, "a frame longer than %zu bytes is still incomplete",
                              s->limit);
        size_t cap = s->cap > s->limit / 2 ? s->limit : s->cap * 2;
        uint8_t *nb = realloc(s->buf, cap);
        if (!nb) return fail_local(WK_ERR_NOMEM, "cannot grow the input buffer to %zu bytes", cap);
        s->buf = nb;
        s->cap = cap;
    }
    size_t want = s->cap - s->end;
    if (want > COLLOQ_IO_CHUNK) want = COLLOQ_IO_CHUNK;
    size_t got; /* what has arrived; the output so far is flushed first */
    int rc = wk_cli_read_some(s->buf + s->end, want, &got);
    if (rc) return rc;
    if (got == 0) s->eof = true;
    s->end += got;
    return 0;
}

/* The largest buffer a frame of plan can need: a JSON line up to the decoders' limit, or a binary
 * header and payload up to the largest ceiling. */
static size_t frame_limit(const wk_colloq_plan *plan)
{
    size_t json = WK_COLLOQ_JSON_LINE_MAX(plan) + 1;
    size_t bin = (size_t)plan->max_payload_max + 3 * WK_COLLOQ_VARINT_MAX_LEN;
    return (json > bin ? json : bin) + COLLOQ_IO_CHUNK;
}

/* Reads the preface line from s and checks it against plan and wire. Returns -1 with the peer's
 * role index in *role when it is accepted, else the exit status with the reason printed. */
static int read_preface(instream *s, const wk_colloq_plan *plan, wk_colloq_wire wire,
                        uint32_t *role)
{
    wk_error err;
    int rc;
    for (;;) {
        const uint8_t *p = s->buf + s->start;
        size_t n = s->end - s->start;
        const uint8_t *nl = n ? memchr(p, '\n', n) : NULL;
        if (nl) {
            size_t len = (size_t)(nl - p);
            wk_colloq_preface pre;
            if (wk_colloq_preface_parse((const char *)p, len, &pre, &err) != WK_OK ||
                wk_colloq_preface_check(plan, &pre, wire, WK_COLLOQ_ROLE_ANY, role, &err) != WK_OK)
                return fail_input(&err);
            s->start += len + 1;
            return -1;
        }
        if (n >= COLLOQ_PREFACE_MAX) {
            wk_error_set(&err, WK_ERR_COLLOQ_PREFACE, in_offset(s),
                         "no end of the preface line in its first %d bytes", COLLOQ_PREFACE_MAX);
            return fail_input(&err);
        }
        if (s->eof) {
            wk_error_set(&err, WK_ERR_COLLOQ_TRUNCATED, s->base + s->end,
                         "input ended before the end of the preface line");
            return fail_input(&err);
        }
        if ((rc = in_fill(s)) != 0) return rc;
    }
}

/* A growable output buffer for trace lines and encoded frames. */
typedef struct outbuf {
    uint8_t *p;
    size_t cap;
} outbuf;

static bool out_reserve(outbuf *o, size_t need)
{
    if (need <= o->cap) return true;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *np = realloc(o->p, cap);
    if (!np) return false;
    o->p = np;
    o->cap = cap;
    return true;
}

/* The offset err points at, made absolute from the stream offset where the frame started. */
static void absolute_offset(wk_error *err, uint64_t frame_start)
{
    if (err->has_offset) err->offset += frame_start;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit colloq compile
 * ------------------------------------------------------------------------------------------- */

static const char compile_help[] =
    "usage: wirekit colloq compile CONVERSATION.json\n"
    "Compiles a conversation (\"colloq\": \"conversation/v0\") into its plan: the dense transition\n"
    "table, the payload schedules and ceilings. Writes the canonical plan JSON to stdout (exactly\n"
    "the bytes the identity hashes: sorted keys, no whitespace, no final newline) and one line\n"
    "`plan <identity>` (lowercase hex BLAKE3 of the canonical plan) to stderr. \"-\" reads stdin.\n"
    "Exit status: 0 compiled, 2 not compiled (one stderr line: error name, then the JSON path),\n"
    "1 usage or unreadable file.\n";

static int cmd_compile(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            fputs(compile_help, stdout);
            return WK_EXIT_OK;
        }
        if (path || (argv[i][0] == '-' && argv[i][1] != '\0'))
            return wk_cli_usage("wirekit colloq compile: unknown or extra argument '%s' (see "
                                "'wirekit colloq compile --help')", argv[i]);
        path = argv[i];
    }
    if (!path) return wk_cli_usage("wirekit colloq compile: CONVERSATION.json is required");
    size_t len = 0;
    uint8_t *text = read_file(path, &len);
    if (!text) return WK_EXIT_USAGE;
    wk_colloq_plan *plan = NULL;
    wk_error err;
    wk_code code = wk_colloq_plan_compile((const char *)text, len, NULL, &plan, &err);
    free(text);
    if (code != WK_OK) return fail_input(&err);
    int rc = put(plan->canonical, plan->canonical_len);
    if (!rc) rc = flush_stdout();
    if (!rc) fprintf(stderr, "plan %s\n", plan->identity);
    wk_colloq_plan_destroy(plan);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit colloq run
 * ------------------------------------------------------------------------------------------- */

static const char run_help[] =
    "usage: wirekit colloq run --plan P --wire reference|compact|binary < TRANSCRIPT\n"
    "Checks a transcript: the preface line, then every frame of the session (both directions, in\n"
    "acceptance order) in the preface's encoding. P is a conversation or a compiled plan. A\n"
    "preface naming another plan identity or wire is refused before frame zero. Writes the trace\n"
    "to stdout, one JSON object per accepted frame:\n"
    "  {\"seq\":N,\"transition\":T,\"from\":\"S\",\"to\":\"S\",\"message\":\"M\",\"payload\":{...}}\n"
    "and on a failure one last object {\"failure\":\"<kind>\",\"seq\":N} (kinds: unknown-transition,\n"
    "wrong-state, wrong-sender, bad-sequence, malformed-payload, payload-too-large, truncated,\n"
    "after-final) with one stderr line naming it. Streamed: each line is written as its frame\n"
    "is checked, in memory bounded by the largest frame.\n"
    "Exit status: 0 the transcript ended cleanly, 2 a failure or a refused preface, 3 the input\n"
    "ended inside a frame or the preface (truncated), 1 usage or local failure.\n";

/* Prints a trace line of frame f. 0 or an exit status. */
static int print_frame(const wk_colloq_plan *plan, const wk_colloq_frame *f, outbuf *line)
{
    wk_error err;
    size_t n;
    if (wk_colloq_trace_frame_size(plan, f, &n, &err) != WK_OK)
        return fail_local(err.code, "cannot write the trace line: %s", err.msg);
    if (!out_reserve(line, n)) return fail_local(WK_ERR_NOMEM, "cannot hold a trace line of %zu bytes", n);
    wk_out out = {line->p, line->cap, 0};
    if (wk_colloq_trace_frame_encode(plan, f, &out, &err) != WK_DONE)
        return fail_local(err.code, "cannot write the trace line: %s", err.msg);
    return put(line->p, out.pos);
}

/* Prints the failure line of the session and its stderr line. Returns the exit status. */
static int print_failure(const wk_colloq_session *sess, const wk_error *err)
{
    uint8_t buf[128];
    wk_out out = {buf, sizeof buf, 0};
    wk_error le;
    int rc = wk_colloq_trace_failure_encode(sess->failure, sess->failure_seq, &out, &le) == WK_DONE
                 ? put(buf, out.pos)
                 : 0;
    if (!rc) rc = flush_stdout();
    wk_error e = *err;
    if (e.code != sess->failure) /* the stderr line names the recorded kind */
        wk_error_set(&e, sess->failure, err->has_offset ? err->offset : WK_NO_OFFSET, "%s",
                     err->msg);
    int frc = fail_input(&e);
    return rc ? rc : frc;
}

static int run_session(const wk_colloq_plan *plan, wk_colloq_wire wire, instream *s)
{
    wk_error err;
    uint32_t role;
    int rc = read_preface(s, plan, wire, &role);
    if (rc >= 0) return rc;
    wk_colloq_decoder *dec = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, wire, NULL}, &err);
    if (!dec) return fail_local(err.code, "cannot create the decoder: %s", err.msg);
    wk_colloq_session sess;
    wk_colloq_session_init(&sess, plan);
    wk_colloq_frame *f = malloc(sizeof *f);
    outbuf line = {0};
    if (!f || !out_reserve(&line, 4096)) {
        rc = fail_local(WK_ERR_NOMEM, "cannot allocate the frame");
        goto done;
    }
    for (;;) {
        uint64_t frame_start = in_offset(s);
        wk_in in = {s->buf + s->start, s->end - s->start, 0};
        wk_result r = wk_colloq_session_step(&sess, dec, &in, WK_COLLOQ_SENDER_TRANSCRIPT, f, &err);
        if (r == WK_DONE) {
            /* string and bytes values borrow s->buf: print before consuming more */
            if ((rc = print_frame(plan, f, &line)) != 0) goto done;
            s->start += in.pos;
            continue;
        }
        if (r == WK_ERROR) {
            absolute_offset(&err, frame_start);
            rc = print_failure(&sess, &err);
            goto done;
        }
        s->start += in.pos;
        if (s->eof) {
            wk_in rest = {s->buf + s->start, s->end - s->start, 0};
            if (wk_colloq_session_finish(&sess, &rest, &err) != WK_DONE) {
                if (!err.has_offset) err.offset = s->base + s->end, err.has_offset = true;
                rc = print_failure(&sess, &err);
            } else {
                rc = flush_stdout();
            }
            goto done;
        }
        if ((rc = in_fill(s)) != 0) goto done;
    }
done:
    free(line.p);
    free(f);
    wk_colloq_decoder_destroy(dec);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    colloq_opts o;
    int rc = parse_opts(argc, argv, "run", run_help, false, &o);
    if (rc >= 0) return rc;
    if (!o.has_wire)
        return wk_cli_usage("wirekit colloq run: --wire reference|compact|binary is required");
    wk_colloq_plan *plan = colloq_load_plan(o.plan, &rc);
    if (!plan) return rc;
    instream s;
    if ((rc = in_init(&s, frame_limit(plan))) == 0) rc = run_session(plan, o.wire, &s);
    free(s.buf);
    wk_colloq_plan_destroy(plan);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit colloq convert
 * ------------------------------------------------------------------------------------------- */

static const char convert_help[] =
    "usage: wirekit colloq convert --plan P --from W --to W < TRANSCRIPT > TRANSCRIPT\n"
    "Re-encodes a transcript from wire W to wire W (reference, compact or binary): the preface is\n"
    "checked against the plan and --from, then rewritten with the new wire (same plan, same role);\n"
    "each frame is decoded and encoded again as it is. The session is not checked: frames in the\n"
    "wrong state, with a wrong sequence number or after a final state are carried over unchanged,\n"
    "so `colloq run` reports the same trace on both sides. A frame that cannot be re-encoded\n"
    "(unknown transition, a reference frame whose sender names no transition, malformed envelope\n"
    "or payload, payload too large) stops the conversion.\n"
    "Exit status: 0 converted, 2 a frame or the preface cannot be converted (one stderr line),\n"
    "3 the input ended inside a frame or the preface, 1 usage or local failure.\n";

static int convert_stream(const wk_colloq_plan *plan, wk_colloq_wire from, wk_colloq_wire to,
                          instream *s)
{
    wk_error err;
    uint32_t role;
    int rc = read_preface(s, plan, from, &role);
    if (rc >= 0) return rc;
    uint8_t pre[256];
    wk_out po = {pre, sizeof pre, 0};
    if (wk_colloq_preface_encode(plan, to, role, &po, &err) != WK_DONE)
        return fail_local(WK_ERR_ARG, "the preface does not fit");
    if ((rc = put(pre, po.pos)) != 0) return rc;
    wk_colloq_decoder *dec = wk_colloq_decoder_create(&(wk_colloq_decoder_params){plan, from, NULL}, &err);
    if (!dec) return fail_local(err.code, "cannot create the decoder: %s", err.msg);
    wk_colloq_frame *f = malloc(sizeof *f);
    outbuf ob = {0};
    if (!f || !out_reserve(&ob, 4096)) {
        rc = fail_local(WK_ERR_NOMEM, "cannot allocate the frame");
        goto done;
    }
    for (;;) {
        uint64_t frame_start = in_offset(s);
        wk_in in = {s->buf + s->start, s->end - s->start, 0};
        wk_result r = wk_colloq_decoder_decode(dec, &in, f, &err);
        if (r == WK_ERROR) {
            absolute_offset(&err, frame_start);
            rc = fail_input(&err);
            goto done;
        }
        if (r == WK_DONE) {
            if (f->transition == WK_COLLOQ_NO_TRANSITION) {
                wk_error_set(&err, WK_ERR_COLLOQ_UNKNOWN_TRANSITION, frame_start,
                             "the frame's transition is not in the plan");
                rc = fail_input(&err);
                goto done;
            }
            if (f->sender_mismatch) { /* a reference frame whose sender names no transition */
                wk_error_set(&err, WK_ERR_COLLOQ_WRONG_SENDER, frame_start,
                             "the frame's sender names no transition from its state on its message");
                rc = fail_input(&err);
                goto done;
            }
            if (f->payload_error != WK_OK) {
                wk_error_set(&err, f->payload_error, frame_start + f->payload_error_offset, "%s",
                             f->payload_error_reason ? f->payload_error_reason
                                                     : wk_strerror(f->payload_error));
                rc = fail_input(&err);
                goto done;
            }
            for (;;) {
                wk_out out = {ob.p, ob.cap, 0};
                wk_result e = wk_colloq_frame_encode(plan, to, f, &out, &err);
                if (e == WK_DONE) {
                    rc = put(out.dst, out.pos);
                    break;
                }
                if (e == WK_NEED_OUTPUT && ob.cap < SIZE_MAX / 2 && out_reserve(&ob, ob.cap * 2))
                    continue;
                if (e == WK_NEED_OUTPUT)
                    rc = fail_local(WK_ERR_NOMEM, "cannot grow the output buffer");
                else {
                    absolute_offset(&err, frame_start);
                    rc = fail_input(&err);
                }
                break;
            }
            if (rc) goto done;
            s->start += in.pos;
            continue;
        }
        s->start += in.pos;
        if (s->eof) {
            if (s->end > s->start) {
                wk_error_set(&err, WK_ERR_COLLOQ_TRUNCATED, s->base + s->end,
                             "input ended inside a frame (%zu bytes)", s->end - s->start);
                fflush(stdout);
                rc = fail_input(&err);
            } else {
                rc = flush_stdout();
            }
            goto done;
        }
        if ((rc = in_fill(s)) != 0) goto done;
    }
done:
    if (rc) fflush(stdout);
    free(ob.p);
    free(f);
    wk_colloq_decoder_destroy(dec);
    return rc;
}

static int cmd_convert(int argc, char **argv)
{
    colloq_opts o;
    int rc = parse_opts(argc, argv, "convert", convert_help, false, &o);
    if (rc >= 0) return rc;
    if (!o.has_from || !o.has_to)
        return wk_cli_usage("wirekit colloq convert: --from W and --to W are required");
    wk_colloq_plan *plan = colloq_load_plan(o.plan, &rc);
    if (!plan) return rc;
    instream s;
    if ((rc = in_init(&s, frame_limit(plan))) == 0) rc = convert_stream(plan, o.from, o.to, &s);
    free(s.buf);
    wk_colloq_plan_destroy(plan);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * wirekit colloq verify
 * ------------------------------------------------------------------------------------------- */

static const char verify_help[] =
    "usage: wirekit colloq verify --plan P TRACE\n"
    "Checks a trace (JSON lines as `colloq run` writes them; \"-\" reads stdin) against the plan P\n"
    "(a conversation or a compiled plan): the accepted frames replay through the checker from the\n"
    "initial state (sequence from 0, each transition from the current state, payloads against\n"
    "their schedules, from/to/message naming the transition), and a failure entry is last, at the\n"
    "next expected sequence number, and after-final exactly when the session had finished.\n"
    "Prints `ok N entries` on success.\n"
    "Exit status: 0 the trace holds, 2 it does not (one stderr line naming the first wrong entry),\n"
    "1 usage or unreadable file.\n";

static int cmd_verify(int argc, char **argv)
{
    colloq_opts o;
    int rc = parse_opts(argc, argv, "verify", verify_help, true, &o);
    if (rc >= 0) return rc;
    if (!o.file) return wk_cli_usage("wirekit colloq verify: TRACE is required");
    wk_colloq_plan *plan = colloq_load_plan(o.plan, &rc);
    if (!plan) return rc;
    size_t len = 0;
    uint8_t *text = read_file(o.file, &len);
    if (!text) {
        wk_colloq_plan_destroy(plan);
        return WK_EXIT_USAGE;
    }
    wk_colloq_trace t;
    wk_colloq_trace_init(&t, NULL);
    wk_error err;
    if (wk_colloq_trace_parse((const char *)text, len, &t, &err) != WK_OK ||
        wk_colloq_trace_verify(plan, &t, NULL, &err) != WK_OK) {
        rc = err.code == WK_ERR_NOMEM ? fail_local(WK_ERR_NOMEM, "%s", err.msg) : fail_input(&err);
    } else {
        printf("ok %zu entries\n", t.count);
        rc = flush_stdout();
    }
    wk_colloq_trace_destroy(&t);
    free(text);
    wk_colloq_plan_destroy(plan);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Dispatch
 * ------------------------------------------------------------------------------------------- */

static const wk_cli_command commands[] = {
    {"compile", "conversation JSON -> canonical plan JSON on stdout, `plan <identity>` on stderr",
     cmd_compile},
    {"run", "--plan P --wire W: check a transcript on stdin, print its trace (JSON lines)", cmd_run},
    {"convert", "--plan P --from W --to W: re-encode a transcript (stdin to stdout)", cmd_convert},
    {"verify", "--plan P TRACE: check a trace file against the plan", cmd_verify},
    {"gen", "--plan P [--prefix NAME] [--out-dir DIR]: the plan's binary codec as C (NAME.h, NAME.c)",
     wk_cli_colloq_gen},
};

int wk_cli_colloq(int argc, char **argv)
{
    return wk_cli_dispatch("colloq",
                           "Colloq plan codec (RFC-0005): conversations compiled into plans, session "
                           "prefaces,\nreference/compact/binary frames, checked transitions, traces. "
                           "W is reference, compact or binary.",
                           commands, sizeof commands / sizeof commands[0], argc, argv);
}
