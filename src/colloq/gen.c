/* colloq: the plan codec generator (`wirekit colloq gen`, issue 19). From one compiled plan it
 * writes one C header and one C source: the plan's binary codec specialised per message (one
 * struct per message with typed fields, per-message size/encode/decode, one receive that decodes
 * and checks a frame against a session, one send), with the checks, failure kinds and offsets of
 * the generic codec (binary.c + check.c), conversions to and from wk_colloq_frame, and the plan
 * identity. The generated code depends on nothing but <wirekit/colloq.h> (and <string.h>).
 *
 * Names (see colloq.h, decision 16): every identifier is the prefix plus the plan's own names;
 * names the C language or our headers reserve get a '_' appended, and when two generated names
 * would be equal the later one gets "_2", "_3", ... Everything the generator allocates goes
 * through the caller's allocator and is freed before it returns. */
#include "colloq_internal.h"
#include <stdarg.h>
#include <stdio.h>

#define PREFIX_MAX 64 /* longest prefix accepted */

/* ---------------------------------------------------------------------------------------------
 * Memory: one arena (every string the generator makes) and a hash set of the names taken.
 * ------------------------------------------------------------------------------------------- */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
} chunk;

typedef struct nameset {
    const char **slot;
    size_t cap, count;
} nameset;

typedef struct msgnames {
    const char *type, *size, *encode, *decode;         /* public */
    const char *check, *write, *read, *to, *from, *frame; /* static */
    const char *max, *msg_enum;                        /* macros */
    const char *member;                                /* member of the frame's union */
    const char **field;                                /* struct member per field */
    const char **has;                                  /* presence macro per field (optional) */
    const char *mask;                                  /* C type of the presence bits, or NULL */
} msgnames;

typedef struct gen {
    const wk_colloq_plan *plan;
    wk_allocator a;
    chunk *arena;
    bool oom;
    jw w;
    const char *header_name;
    const char *p; /* prefix */
    char *P;       /* upper-case prefix */
    nameset taken;
    /* fixed names */
    const char *slice, *frame, *session, *session_init, *session_finish, *receive, *send,
        *frame_size, *frame_encode, *to_colloq, *from_colloq, *plan_matches, *preface_check,
        *preface_write, *identity, *pname, *n_roles, *n_states, *n_messages, *n_transitions,
        *initial, *guard, *rd16, *rd32, *rd64, *wr16, *wr32, *wr64, *f32_bits, *f64_bits,
        *finite32, *finite64, *fail, *refail, *reject, *bad_header, *refuse, *role_names, *canonical, *copy, *hot, *cold,
        *canonical_text;
    const char **role, **state, **tr;
    msgnames *msg;
} gen;

static void *g_alloc(gen *g, size_t n)
{
    if (g->oom) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (!g->arena || g->arena->cap - g->arena->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        chunk *c = g->a.alloc(g->a.opaque, sizeof *c + cap);
        if (!c) {
            g->oom = true;
            return NULL;
        }
        c->next = g->arena;
        c->used = 0;
        c->cap = cap;
        g->arena = c;
    }
    void *p = g->arena->data + g->arena->used;
    g->arena->used += n;
    return p;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static const char *nm(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        g->oom = true;
        return "";
    }
    char *s = g_alloc(g, (size_t)n + 1);
    if (!s) return "";
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static bool set_has(const nameset *ns, const char *s)
{
    if (!ns->cap) return false;
    for (size_t i = hash_str(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
        if (!ns->slot[i]) return false;
        if (strcmp(ns->slot[i], s) == 0) return true;
    }
}

static void set_add(gen *g, nameset *ns, const char *s)
{
    if (g->oom) return;
    if ((ns->count + 1) * 2 > ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 256;
        const char **slot = g->a.alloc(g->a.opaque, cap * sizeof *slot);
        if (!slot) {
            g->oom = true;
            return;
        }
        memset(slot, 0, cap * sizeof *slot);
        for (size_t k = 0; k < ns->cap; k++) {
            if (!ns->slot[k]) continue;
            size_t i = hash_str(ns->slot[k]) & (cap - 1);
            while (slot[i]) i = (i + 1) & (cap - 1);
            slot[i] = ns->slot[k];
        }
        if (ns->slot) g->a.free(g->a.opaque, (void *)ns->slot);
        ns->slot = slot;
        ns->cap = cap;
    }
    size_t i = hash_str(s) & (ns->cap - 1);
    while (ns->slot[i]) i = (i + 1) & (ns->cap - 1);
    ns->slot[i] = s;
    ns->count++;
}

static void set_clear(gen *g, nameset *ns)
{
    if (ns->slot) g->a.free(g->a.opaque, (void *)ns->slot);
    ns->slot = NULL;
    ns->cap = ns->count = 0;
}

/* A file-scope name: base itself, or base_2, base_3, ... when taken. */
static const char *unique(gen *g, const char *base)
{
    const char *s = base;
    for (unsigned k = 2; set_has(&g->taken, s); k++) s = nm(g, "%s_%u", base, k);
    set_add(g, &g->taken, s);
    return s;
}

/* Words a struct member may not be: C17 keywords, C23 keywords, and object-like macros of the
 * headers the generated code includes (and GNU mode's predefined ones). */
static const char *const reserved_words[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool", "constexpr",
    "false", "nullptr", "static_assert", "thread_local", "true", "typeof", "typeof_unqual",
    "noreturn", "complex", "imaginary", "NULL", "EOF", "errno", "assert", "offsetof", "linux",
    "unix", "i386", "stdin", "stdout", "stderr", "SIZE_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX",
    "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX", "INTPTR_MIN", "INTPTR_MAX", "UINTPTR_MAX",
    "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN", "WINT_MAX",
    "present", NULL};

/* stdint.h's INTn_MIN, UINT_LEASTn_MAX, INT_FASTn_C, ... */
static bool stdint_macro(const char *s)
{
    if (strncmp(s, "U", 1) == 0) s++;
    if (strncmp(s, "INT", 3) != 0) return false;
    s += 3;
    if (strncmp(s, "_LEAST", 6) == 0) s += 6;
    else if (strncmp(s, "_FAST", 5) == 0) s += 5;
    if (!(*s >= '0' && *s <= '9')) return false;
    while (*s >= '0' && *s <= '9') s++;
    return strcmp(s, "_MIN") == 0 || strcmp(s, "_MAX") == 0 || strcmp(s, "_C") == 0;
}

static bool bad_member(const gen *g, const nameset *local, const char *s)
{
    for (const char *const *r = reserved_words; *r; r++)
        if (strcmp(*r, s) == 0) return true;
    return stdint_macro(s) || set_has(&g->taken, s) || set_has(local, s);
}

/* A struct (or union) member for the plan name raw: raw itself unless reserved or taken. */
static const char *member(gen *g, nameset *local, const char *raw)
{
    const char *s = raw;
    /* reserved to C (_X..., __...) or to our headers (WK_..., wk_...): an 'x' in front */
    if ((raw[0] == '_' && ((raw[1] >= 'A' && raw[1] <= 'Z') || raw[1] == '_')) ||
        strncmp(raw, "WK_", 3) == 0 || strncmp(raw, "wk_", 3) == 0)
        s = nm(g, "x%s", raw);
    while (!g->oom && bad_member(g, local, s)) s = nm(g, "%s_", s);
    set_add(g, local, s);
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------------------------- */
static void out(gen *g, const char *s) { jw_str(&g->w, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void outf(gen *g, const char *fmt, ...)
{
    jw *w = &g->w;
    size_t room = w->len < w->cap ? w->cap - w->len : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) g->oom = true;
    else w->len += (size_t)n;
}

/* The plan's name as comment text: characters that could end a comment or form a trigraph are
 * replaced. */
static void out_comment_text(gen *g, const char *s)
{
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  strchr(" _.,:;+=()#@!-", c) != NULL;
        jw_byte(&g->w, ok ? c : '_');
    }
}

/* The plan's name as a C string literal (octal escapes for anything unusual). */
static void out_string_literal(gen *g, const char *s)
{
    jw_byte(&g->w, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  (c && strchr(" _.,:;+=()#@!-/", c) != NULL);
        if (ok) jw_byte(&g->w, (char)c);
        else outf(g, "\\%03o", c);
    }
    jw_byte(&g->w, '"');
}

static const char *type_c(const gen *g, wk_colloq_type t)
{
    switch (t) {
    case WK_COLLOQ_BOOL: return "bool";
    case WK_COLLOQ_U8: return "uint8_t";
    case WK_COLLOQ_U16: return "uint16_t";
    case WK_COLLOQ_U32: return "uint32_t";
    case WK_COLLOQ_U64: return "uint64_t";
    case WK_COLLOQ_I8: return "int8_t";
    case WK_COLLOQ_I16: return "int16_t";
    case WK_COLLOQ_I32: return "int32_t";
    case WK_COLLOQ_I64: return "int64_t";
    case WK_COLLOQ_F32: return "float";
    case WK_COLLOQ_F64: return "double";
    default: return g->slice;
    }
}

static bool is_var(wk_colloq_type t) { return t == WK_COLLOQ_STRING || t == WK_COLLOQ_BYTES; }

/* The presence bit constant of optional field fd ("(1u << 3)"). */
static void out_bit(gen *g, const wk_colloq_field *fd)
{
    if (fd->presence_bit < 31) outf(g, "(1u << %u)", (unsigned)fd->presence_bit);
    else outf(g, "((uint64_t)1 << %u)", (unsigned)fd->presence_bit);
}

/* One line naming a field: "text: string (UTF-8), optional". */
static void out_field_doc(gen *g, const wk_colloq_field *fd)
{
    outf(g, "%s: %s%s%s", fd->name, wk_colloq_type_name(fd->type),
         fd->type == WK_COLLOQ_STRING ? " (UTF-8, borrowed)"
                                      : fd->type == WK_COLLOQ_BYTES ? " (borrowed)" : "",
         fd->optional ? ", optional" : "");
}

/* "Idle --Prompt (client)--> Streaming" */
static void out_transition_doc(gen *g, uint32_t t)
{
    const wk_colloq_plan *pl = g->plan;
    const wk_colloq_transition *tr = &pl->transitions[t];
    outf(g, "%s --%s (%s)--> %s%s", pl->states[tr->from], pl->messages[tr->message].name,
         pl->roles[tr->sender], pl->states[tr->to], pl->is_final[tr->to] ? " (final)" : "");
}

/* ---------------------------------------------------------------------------------------------
 * Naming
 * ------------------------------------------------------------------------------------------- */
static bool valid_prefix(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PREFIX_MAX) return false;
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

static void write_default_prefix(jw *w, const wk_colloq_plan *plan)
{
    const char *s = plan->name;
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) jw_str(w, "c_");
    bool under = false;
    for (; *s && w->len < 32; s++) {
        char c = *s;
        bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (word) {
            jw_byte(w, c);
            under = false;
        } else if (!under) { /* a run of other characters (UTF-8 included) is one '_' */
            jw_byte(w, '_');
            under = true;
        }
    }
}

size_t wk_colloq_codegen_prefix_size(const wk_colloq_plan *plan)
{
    size_t n, *size = &n;
    COLLOQ_TEXT_SIZE(write_default_prefix(&w, plan));
    return n;
}

wk_result wk_colloq_codegen_prefix_encode(const wk_colloq_plan *plan, wk_out *out, wk_error *err)
{
    COLLOQ_TEXT_ENCODE(out, err, write_default_prefix(&w, plan));
}

/* The default prefix, NUL-terminated, in def (WK_COLLOQ_CODEGEN_PREFIX_MAX + 1 bytes at least). */
static const char *default_prefix(const wk_colloq_plan *plan, char *def)
{
    wk_out o = {(uint8_t *)def, WK_COLLOQ_CODEGEN_PREFIX_MAX, 0};
    wk_colloq_codegen_prefix_encode(plan, &o, NULL); /* at most PREFIX_MAX bytes: WK_DONE */
    def[o.pos] = '\0';
    return def;
}

/* A message's names: base, base_2, ... until every derived name is free. */
static void name_message(gen *g, uint32_t mi)
{
    const wk_colloq_message *m = &g->plan->messages[mi];
    msgnames *mn = &g->msg[mi];
    const char *base = m->name;
    for (unsigned k = 1; !g->oom; k++) {
        const char *b = k == 1 ? base : nm(g, "%s_%u", base, k);
        const char *cand[12] = {
            nm(g, "%s_%s", g->p, b), nm(g, "%s_%s_size", g->p, b), nm(g, "%s_%s_encode", g->p, b),
            nm(g, "%s_%s_decode", g->p, b), nm(g, "%s_%s_check", g->p, b),
            nm(g, "%s_%s_write", g->p, b), nm(g, "%s_%s_read", g->p, b), nm(g, "%s_%s_to", g->p, b),
            nm(g, "%s_%s_from", g->p, b), nm(g, "%s_%s_frame", g->p, b),
            nm(g, "%s_%s_MAX_PAYLOAD", g->P, b), nm(g, "%s_MSG_%s", g->P, b)};
        bool free_ = true;
        for (int i = 0; i < 12 && free_; i++) free_ = !set_has(&g->taken, cand[i]);
        if (!free_) continue;
        for (int i = 0; i < 12; i++) set_add(g, &g->taken, cand[i]);
        mn->type = cand[0], mn->size = cand[1], mn->encode = cand[2], mn->decode = cand[3];
        mn->check = cand[4], mn->write = cand[5], mn->read = cand[6], mn->to = cand[7];
        mn->from = cand[8], mn->frame = cand[9], mn->max = cand[10], mn->msg_enum = cand[11];
        break;
    }
    mn->has = g_alloc(g, (m->field_count ? m->field_count : 1) * sizeof *mn->has);
    mn->field = g_alloc(g, (m->field_count ? m->field_count : 1) * sizeof *mn->field);
    if (!mn->has || !mn->field) return;
    for (uint32_t i = 0; i < m->field_count; i++)
        mn->has[i] = m->fields[i].optional
                         ? unique(g, nm(g, "%s_%s_HAS_%s", g->P, mn->type + strlen(g->p) + 1,
                                        m->fields[i].name))
                         : NULL;
    mn->mask = m->optional_count == 0   ? NULL
               : m->optional_count <= 8  ? "uint8_t"
               : m->optional_count <= 16 ? "uint16_t"
               : m->optional_count <= 32 ? "uint32_t"
                                         : "uint64_t";
}

static void name_all(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    const char *p = g->p, *P = g->P;
    /* fixed names first: a plan name cannot take them */
    g->slice = unique(g, nm(g, "%s_slice", p));
    g->frame = unique(g, nm(g, "%s_frame", p));
    g->session = unique(g, nm(g, "%s_session", p));
    g->session_init = unique(g, nm(g, "%s_session_init", p));
    g->session_finish = unique(g, nm(g, "%s_session_finish", p));
    g->receive = unique(g, nm(g, "%s_receive", p));
    g->send = unique(g, nm(g, "%s_send", p));
    g->frame_size = unique(g, nm(g, "%s_frame_size", p));
    g->frame_encode = unique(g, nm(g, "%s_frame_encode", p));
    g->to_colloq = unique(g, nm(g, "%s_frame_to_colloq", p));
    g->from_colloq = unique(g, nm(g, "%s_frame_from_colloq", p));
    g->plan_matches = unique(g, nm(g, "%s_plan_matches", p));
    g->preface_check = unique(g, nm(g, "%s_preface_check", p));
    g->preface_write = unique(g, nm(g, "%s_preface_write", p));
    g->rd16 = unique(g, nm(g, "%s_rd16", p));
    g->rd32 = unique(g, nm(g, "%s_rd32", p));
    g->rd64 = unique(g, nm(g, "%s_rd64", p));
    g->wr16 = unique(g, nm(g, "%s_wr16", p));
    g->wr32 = unique(g, nm(g, "%s_wr32", p));
    g->wr64 = unique(g, nm(g, "%s_wr64", p));
    g->f32_bits = unique(g, nm(g, "%s_f32_bits", p));
    g->f64_bits = unique(g, nm(g, "%s_f64_bits", p));
    g->finite32 = unique(g, nm(g, "%s_finite32", p));
    g->finite64 = unique(g, nm(g, "%s_finite64", p));
    g->fail = unique(g, nm(g, "%s_fail", p));
    g->refail = unique(g, nm(g, "%s_refail", p));
    g->reject = unique(g, nm(g, "%s_reject", p));
    g->bad_header = unique(g, nm(g, "%s_bad_header", p));
    g->refuse = unique(g, nm(g, "%s_refuse", p));
    g->copy = unique(g, nm(g, "%s_copy", p));
    g->hot = unique(g, nm(g, "%s_HOT", P));
    g->cold = unique(g, nm(g, "%s_COLD", P));
    g->role_names = unique(g, nm(g, "%s_role_names", p));
    g->canonical = unique(g, nm(g, "%s_plan_canonical", p));
    g->canonical_text = unique(g, nm(g, "%s_canonical_text", p));
    g->identity = unique(g, nm(g, "%s_PLAN_IDENTITY", P));
    g->pname = unique(g, nm(g, "%s_PLAN_NAME", P));
    g->n_roles = unique(g, nm(g, "%s_N_ROLES", P));
    g->n_states = unique(g, nm(g, "%s_N_STATES", P));
    g->n_messages = unique(g, nm(g, "%s_N_MESSAGES", P));
    g->n_transitions = unique(g, nm(g, "%s_N_TRANSITIONS", P));
    g->initial = unique(g, nm(g, "%s_INITIAL_STATE", P));
    g->guard = unique(g, nm(g, "%s_COLLOQ_GEN_H", P));
    g->role = g_alloc(g, pl->role_count * sizeof *g->role);
    g->state = g_alloc(g, pl->state_count * sizeof *g->state);
    g->tr = g_alloc(g, (pl->transition_count ? pl->transition_count : 1) * sizeof *g->tr);
    g->msg = g_alloc(g, (pl->message_count ? pl->message_count : 1) * sizeof *g->msg);
    if (g->oom) return;
    memset(g->msg, 0, (pl->message_count ? pl->message_count : 1) * sizeof *g->msg);
    for (uint32_t i = 0; i < pl->role_count; i++) g->role[i] = unique(g, nm(g, "%s_ROLE_%s", P, pl->roles[i]));
    for (uint32_t i = 0; i < pl->state_count; i++) g->state[i] = unique(g, nm(g, "%s_STATE_%s", P, pl->states[i]));
    for (uint32_t i = 0; i < pl->message_count && !g->oom; i++) name_message(g, i);
    for (uint32_t i = 0; i < pl->transition_count; i++) {
        const wk_colloq_transition *t = &pl->transitions[i];
        g->tr[i] = unique(g, nm(g, "%s_T_%s_%s_%s", P, pl->states[t->from], pl->messages[t->message].name,
                                pl->roles[t->sender]));
    }
    /* members last: they must not be any file-scope name (a macro would expand inside them) */
    nameset local = {0};
    for (uint32_t i = 0; i < pl->message_count && !g->oom; i++) {
        const wk_colloq_message *m = &pl->messages[i];
        set_clear(g, &local);
        for (uint32_t k = 0; k < m->field_count; k++) g->msg[i].field[k] = member(g, &local, m->fields[k].name);
    }
    set_clear(g, &local);
    for (uint32_t i = 0; i < pl->message_count && !g->oom; i++)
        g->msg[i].member = member(g, &local, pl->messages[i].name);
    set_clear(g, &local);
}

/* ---------------------------------------------------------------------------------------------
 * The header
 * ------------------------------------------------------------------------------------------- */
static void out_enum(gen *g, const char *what, const char *const *names, uint32_t n,
                     const char *count)
{
    if (n) {
        outf(g, "/* %s */\nenum {\n", what);
        for (uint32_t i = 0; i < n; i++) outf(g, "    %s = %u,\n", names[i], (unsigned)i);
        out(g, "};\n");
    }
    outf(g, "#define %s %uu\n", count, (unsigned)n);
}

static void gen_header(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "/* %s: the binary Colloq codec of the plan \"", g->header_name);
    out_comment_text(g, pl->name);
    out(g, "\", generated by `wirekit colloq gen`.\n"
           " * Do not edit: regenerate it from the plan. Plan identity (BLAKE3 of the canonical plan):\n");
    outf(g, " *   %s\n", pl->identity);
    out(g, " * The code is bound to that plan: its preface check refuses any other identity, and the\n"
           " * conversions to and from wk_colloq_frame hold for that plan only (");
    outf(g, "%s).\n", g->plan_matches);
    out(g, " *\n"
           " * Frames (RFC-0005): [transition varint][sequence varint][payload_len varint][payload], LEB128 in\n"
           " * minimal form; the payload is the presence bitmap of the optional fields, then each present field\n"
           " * in schedule order (scalars little-endian, string and bytes as a varint length and the bytes).\n"
           " *   - one struct per message: typed fields; string and bytes are slices borrowed from the buffer a\n"
           " *     frame was decoded from (or lent by the sender); each optional field has a bit in `present`;\n"
           " *   - per message: _size (payload bytes), _encode (the payload: NEED_OUTPUT leaves out untouched)\n"
           " *     and _decode (a whole payload; borrows, allocates nothing);\n");
    outf(g, " *   - %s decodes one frame and checks it against a session: the checks, failure kinds\n", g->receive);
    out(g, " *     and offsets of wk_colloq_binary_decode + wk_colloq_session_check (sequence, state, sender, ceiling,\n"
           " *     minimal LEB128, UTF-8, bool 0/1, no NaN or infinity, no stray presence bits, no trailing bytes);\n");
    outf(g, " *   - %s is the sender's side: the transition checked against the session, the frame\n", g->send);
    out(g, " *     written with the next sequence number;\n");
    outf(g, " *   - %s / %s convert to and from the library's frame (traces,\n", g->to_colloq, g->from_colloq);
    out(g, " *     wk_colloq_trace_verify).\n"
           " * Nothing here allocates. Link with libwirekit; the only include is <wirekit/colloq.h>. */\n");
    outf(g, "#ifndef %s\n#define %s\n\n#include <wirekit/colloq.h>\n\n", g->guard, g->guard);
    out(g, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    outf(g, "#define %s \"%s\" /* lowercase hex BLAKE3 of the canonical plan */\n", g->identity, pl->identity);
    outf(g, "#define %s ", g->pname);
    out_string_literal(g, pl->name);
    out(g, "\n\n");
    out_enum(g, "Roles (the plan's order)", g->role, pl->role_count, g->n_roles);
    out_enum(g, "States (the plan's order)", g->state, pl->state_count, g->n_states);
    outf(g, "#define %s %s\n", g->initial, g->state[pl->initial]);
    /* messages enum */
    {
        const char **names = g_alloc(g, (pl->message_count ? pl->message_count : 1) * sizeof *names);
        if (names)
            for (uint32_t i = 0; i < pl->message_count; i++) names[i] = g->msg[i].msg_enum;
        out_enum(g, "Messages (the plan's order: sorted by name)", names, names ? pl->message_count : 0,
                 g->n_messages);
    }
    if (pl->transition_count) {
        out(g, "/* Transitions: the plan's dense ids, sorted by (from, message, sender) */\nenum {\n");
        for (uint32_t t = 0; t < pl->transition_count; t++) {
            outf(g, "    %s = %u, /* ", g->tr[t], (unsigned)t);
            out_transition_doc(g, t);
            out(g, " */\n");
        }
        out(g, "};\n");
    }
    outf(g, "#define %s %uu\n\n", g->n_transitions, (unsigned)pl->transition_count);
    outf(g, "/* A string or bytes value: len bytes at ptr, borrowed (never owned by the codec). */\n"
            "typedef struct %s {\n    const uint8_t *ptr;\n    size_t len;\n} %s;\n\n",
         g->slice, g->slice);

    for (uint32_t i = 0; i < pl->message_count; i++) {
        const wk_colloq_message *m = &pl->messages[i];
        const msgnames *mn = &g->msg[i];
        outf(g, "/* Message %s (payload at most %u bytes):", m->name, (unsigned)m->max_payload);
        if (!m->field_count) out(g, " no fields");
        for (uint32_t k = 0; k < m->field_count; k++) {
            out(g, k ? ", " : " ");
            outf(g, "%s %s%s", m->fields[k].name, wk_colloq_type_name(m->fields[k].type),
                 m->fields[k].optional ? "?" : "");
        }
        outf(g, " */\ntypedef struct %s {\n", mn->type);
        for (uint32_t k = 0; k < m->field_count; k++) {
            const wk_colloq_field *fd = &m->fields[k];
            outf(g, "    %s %s; /* ", type_c(g, fd->type), mn->field[k]);
            out_field_doc(g, fd);
            if (fd->optional) outf(g, " (%s)", mn->has[k]);
            out(g, " */\n");
        }
        if (mn->mask) outf(g, "    %s present; /* presence bits of the optional fields */\n", mn->mask);
        if (!m->field_count) out(g, "    char empty_; /* no fields (C needs a member) */\n");
        outf(g, "} %s;\n", mn->type);
        for (uint32_t k = 0; k < m->field_count; k++) {
            if (!m->fields[k].optional) continue;
            outf(g, "#define %s ", mn->has[k]);
            out_bit(g, &m->fields[k]);
            outf(g, " /* %s is present */\n", m->fields[k].name);
        }
        outf(g, "#define %s %uu\n", mn->max, (unsigned)m->max_payload);
        outf(g, "/* %s: the payload bytes of *m (presence bitmap included). */\n"
                "size_t %s(const %s *m);\n", m->name, mn->size, mn->type);
        outf(g, "/* %s: writes the payload of *m (not a whole frame) at out->dst + out->pos: WK_DONE (pos\n"
                " * advanced), WK_NEED_OUTPUT (out untouched), WK_ERROR with WK_ERR_ARG for values the schedule\n"
                " * cannot carry (stray presence bits, NaN or infinity, invalid UTF-8, a NULL slice with a length,\n"
                " * a payload above the ceiling). */\n"
                "wk_result %s(const %s *m, wk_out *out, wk_error *err);\n", m->name, mn->encode, mn->type);
        outf(g, "/* %s: decodes in->src[in->pos..in->size) as one whole payload into *m: WK_DONE (in->pos =\n"
                " * in->size; slices point into in->src) or WK_ERROR: COLLOQ_ERR_PAYLOAD_TOO_LARGE (above the\n"
                " * ceiling) or COLLOQ_ERR_MALFORMED_PAYLOAD, offset from in->pos. Allocates nothing. */\n"
                "wk_result %s(%s *m, wk_in *in, wk_error *err);\n\n", m->name, mn->decode, mn->type);
    }

    outf(g, "/* One frame: its transition, its sequence number and the values of the transition's message\n"
            " * (the union member named after it). */\ntypedef struct %s {\n"
            "    uint32_t transition; /* %s_T_* */\n    uint64_t seq;\n    union {\n", g->frame, g->P);
    for (uint32_t i = 0; i < pl->message_count; i++)
        outf(g, "        %s %s; /* message %s */\n", g->msg[i].type, g->msg[i].member, pl->messages[i].name);
    if (!pl->message_count) out(g, "        char none_; /* the plan has no messages */\n");
    outf(g, "    } as;\n} %s;\n\n", g->frame);
    outf(g, "/* A session (caller-owned): the checker's state, as wk_colloq_session without a plan. */\n"
            "typedef struct %s {\n"
            "    uint32_t state;       /* current state (%s_STATE_*) */\n"
            "    uint64_t next_seq;    /* next expected sequence number */\n"
            "    bool finished;        /* the current state is final */\n"
            "    wk_code failure;      /* WK_OK while alive; else the failure (the session is over) */\n"
            "    uint64_t failure_seq; /* next_seq when it failed */\n"
            "} %s;\n\n", g->session, g->P, g->session);
    outf(g, "/* Starts a session at the initial state, sequence 0. */\nvoid %s(%s *s);\n", g->session_init, g->session);
    outf(g, "/* Reads one frame at in->src[in->pos..in->size) and checks it as sent by `sender` (a %s_ROLE_*,\n"
            " * or WK_COLLOQ_SENDER_TRANSCRIPT: the transition's own role):\n"
            " *   WK_DONE: accepted; *f holds it (its slices point into in->src), in->pos moved past it, the\n"
            " *            session advanced;\n"
            " *   WK_NEED_INPUT: the frame is incomplete; nothing consumed;\n"
            " *   WK_ERROR: the failure is recorded in s->failure (and err: code, offset from the frame's first\n"
            " *            byte, as the generic codec reports it); the session is over and later calls repeat it.\n"
            " * Allocates nothing. */\n"
            "wk_result %s(%s *s, uint32_t sender, wk_in *in, %s *f, wk_error *err);\n",
         g->P, g->receive, g->session, g->frame);
    outf(g, "/* End of input with rest's unread bytes (rest may be NULL): WK_DONE on a clean end (nothing left,\n"
            " * whatever the state), else WK_ERROR recording truncated (after-final once finished). */\n"
            "wk_result %s(%s *s, const wk_in *rest, wk_error *err);\n", g->session_finish, g->session);
    outf(g, "/* The sender's side: writes f (its transition and values; f->seq is not read, the session's next\n"
            " * sequence number is written) at out->dst + out->pos as role `sender` (or\n"
            " * WK_COLLOQ_SENDER_TRANSCRIPT) and advances the session. WK_DONE, WK_NEED_OUTPUT (out and session\n"
            " * untouched), WK_ERROR (nothing written, session untouched): WK_ERR_STATE when the session is\n"
            " * over or the transition does not leave its state, WK_ERR_ARG for another role's transition, an\n"
            " * unknown transition or values the schedule cannot carry. */\n"
            "wk_result %s(%s *s, uint32_t sender, const %s *f, wk_out *out, wk_error *err);\n",
         g->send, g->session, g->frame);
    outf(g, "/* Bytes the whole frame f takes (0 when its transition is not in the plan). */\n"
            "size_t %s(const %s *f);\n", g->frame_size, g->frame);
    outf(g, "/* Writes the whole frame f (with f->seq; no session) as %s does. */\n"
            "wk_result %s(const %s *f, wk_out *out, wk_error *err);\n", g->send, g->frame_encode, g->frame);
    outf(g, "/* f as the library's frame (values copied, slices still borrowed) for traces and\n"
            " * wk_colloq_trace_verify with the plan of this identity. WK_ERR_ARG for an unknown transition. */\n"
            "wk_code %s(const %s *g, wk_colloq_frame *f, wk_error *err);\n", g->to_colloq, g->frame);
    outf(g, "/* The library's frame f as *g: WK_ERR_ARG when it is not a frame of this plan's schedules (unknown\n"
            " * transition, a payload error, wrong field count, a value out of its type's range or not exact as\n"
            " * f32, NaN, invalid UTF-8). Slices stay borrowed. */\n"
            "wk_code %s(const wk_colloq_frame *f, %s *g, wk_error *err);\n", g->from_colloq, g->frame);
    outf(g, "/* True when plan is the plan this code was generated from (same identity, with schedules). */\n"
            "bool %s(const wk_colloq_plan *plan);\n", g->plan_matches);
    outf(g, "/* The canonical plan JSON this code was generated from (static storage, NUL-terminated; *len\n"
            " * may be NULL): wk_colloq_plan_load gives the generic codec's plan of the same identity. */\n"
            "const char *%s(size_t *len);\n", g->canonical);
    outf(g, "/* Parses and checks the peer's preface line (line[0..len), '\\n' optional) as the generic codec\n"
            " * does: COLLOQ_ERR_PREFACE (malformed), COLLOQ_ERR_PLAN_MISMATCH (another identity),\n"
            " * COLLOQ_ERR_WIRE_MISMATCH (not binary), COLLOQ_ERR_PREFACE_ROLE (not a role of the plan, or\n"
            " * our_role; WK_COLLOQ_ROLE_ANY for none). On WK_OK *peer_role (may be NULL) is its role. */\n"
            "wk_code %s(const char *line, size_t len, uint32_t our_role, uint32_t *peer_role,\n"
            "           wk_error *err);\n", g->preface_check);
    outf(g, "/* Writes our preface line (with its '\\n') for `role`: WK_DONE, WK_NEED_OUTPUT (out untouched),\n"
            " * WK_ERROR (WK_ERR_ARG: not a role). */\n"
            "wk_result %s(uint32_t role, wk_out *out, wk_error *err);\n\n", g->preface_write);
    out(g, "#ifdef __cplusplus\n}\n#endif\n");
    outf(g, "#endif /* %s */\n", g->guard);
}

/* ---------------------------------------------------------------------------------------------
 * The source: per message
 * ------------------------------------------------------------------------------------------- */
/* "m->x" of field k; "(m->present & HAS)" of an optional one */
#define FLD(k) mn->field[k]

static void gen_size(gen *g, const wk_colloq_message *m, const msgnames *mn)
{
    uint32_t fixed = m->bitmap_bytes;
    for (uint32_t k = 0; k < m->field_count; k++)
        if (!m->fields[k].optional) fixed += m->fields[k].width;
    outf(g, "size_t %s(const %s *m)\n{\n    size_t n = %u; /* bitmap and required fixed-width fields */\n"
            "    (void)m;\n", mn->size, mn->type, (unsigned)fixed);
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        if (!fd->optional && !is_var(fd->type)) continue;
        out(g, "    ");
        if (fd->optional) outf(g, "if (m->present & %s) ", mn->has[k]);
        if (is_var(fd->type))
            outf(g, "n += wk_colloq_varint_len(m->%s.len) + m->%s.len;", FLD(k), FLD(k));
        else
            outf(g, "n += %u;", (unsigned)fd->width);
        outf(g, " /* %s */\n", fd->name);
    }
    out(g, "    return n;\n}\n\n");
}

static void gen_check(gen *g, const wk_colloq_message *m, const msgnames *mn)
{
    outf(g, "/* %s: NULL when the values of *m fit the schedule, else why not. */\n"
            "%s const char *%s(const %s *m)\n{\n    (void)m;\n", m->name, g->hot, mn->check, mn->type);
    if (mn->mask && m->optional_count < 8u * (m->bitmap_bytes > 4 ? 8 : m->bitmap_bytes > 2 ? 4 : m->bitmap_bytes))
        outf(g, "    if (m->present >> %u) return \"presence bit set beyond the optional fields\";\n",
             (unsigned)m->optional_count);
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        const char *f = FLD(k), *ind = fd->optional ? "        " : "    ";
        bool any = is_var(fd->type) || fd->type == WK_COLLOQ_F32 || fd->type == WK_COLLOQ_F64;
        if (!any) continue;
        outf(g, "    /* %s */\n", fd->name);
        if (fd->optional) outf(g, "    if (m->present & %s) {\n", mn->has[k]);
        if (is_var(fd->type)) {
            outf(g, "%sif (m->%s.len > %uu) return \"%s: longer than the payload ceiling\";\n", ind, f,
                 (unsigned)m->max_payload, fd->name);
            outf(g, "%sif (m->%s.len && !m->%s.ptr) return \"%s: NULL with a length\";\n", ind, f, f, fd->name);
            if (fd->type == WK_COLLOQ_STRING)
                outf(g, "%sif (!wk_colloq_utf8_valid(m->%s.ptr, m->%s.len, NULL)) return \"%s: not valid UTF-8\";\n",
                     ind, f, f, fd->name);
        } else {
            outf(g, "%sif (!%s(m->%s)) return \"%s: NaN or infinity\";\n", ind,
                 fd->type == WK_COLLOQ_F32 ? g->finite32 : g->finite64, f, fd->name);
        }
        if (fd->optional) out(g, "    }\n");
    }
    out(g, "    return NULL;\n}\n\n");
}

static void gen_write(gen *g, const wk_colloq_message *m, const msgnames *mn)
{
    outf(g, "/* %s: writes the payload of *m (checked, sized) at p. */\n"
            "%s void %s(const %s *restrict m, uint8_t *restrict p)\n{\n", m->name, g->hot, mn->write, mn->type);
    if (!m->bitmap_bytes && !m->field_count) out(g, "    (void)m;\n    (void)p;\n");
    if (m->bitmap_bytes) {
        out(g, "    /* presence bitmap */\n");
        for (uint32_t b = 0; b < m->bitmap_bytes; b++) {
            if (b) outf(g, "    p[%u] = (uint8_t)(m->present >> %u);\n", (unsigned)b, (unsigned)(8 * b));
            else out(g, "    p[0] = (uint8_t)m->present;\n");
        }
        outf(g, "    p += %u;\n", (unsigned)m->bitmap_bytes);
    }
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        const char *f = FLD(k), *ind = fd->optional ? "        " : "    ";
        outf(g, "    /* %s */\n", fd->name);
        if (fd->optional) outf(g, "    if (m->present & %s) {\n", mn->has[k]);
        switch (fd->type) {
        case WK_COLLOQ_BOOL: outf(g, "%s*p++ = m->%s ? 1 : 0;\n", ind, f); break;
        case WK_COLLOQ_U8: outf(g, "%s*p++ = m->%s;\n", ind, f); break;
        case WK_COLLOQ_I8: outf(g, "%s*p++ = (uint8_t)m->%s;\n", ind, f); break;
        case WK_COLLOQ_U16: case WK_COLLOQ_I16:
            outf(g, "%s%s(p, (uint16_t)m->%s);\n%sp += 2;\n", ind, g->wr16, f, ind);
            break;
        case WK_COLLOQ_U32: case WK_COLLOQ_I32:
            outf(g, "%s%s(p, (uint32_t)m->%s);\n%sp += 4;\n", ind, g->wr32, f, ind);
            break;
        case WK_COLLOQ_U64: case WK_COLLOQ_I64:
            outf(g, "%s%s(p, (uint64_t)m->%s);\n%sp += 8;\n", ind, g->wr64, f, ind);
            break;
        case WK_COLLOQ_F32: outf(g, "%s%s(p, %s(m->%s));\n%sp += 4;\n", ind, g->wr32, g->f32_bits, f, ind); break;
        case WK_COLLOQ_F64: outf(g, "%s%s(p, %s(m->%s));\n%sp += 8;\n", ind, g->wr64, g->f64_bits, f, ind); break;
        default:
            outf(g, "%sp += wk_colloq_varint_put(p, m->%s.len);\n"
                    "%s%s(p, m->%s.ptr, m->%s.len);\n%sp += m->%s.len;\n",
                 ind, f, ind, g->copy, f, f, ind, f);
        }
        if (fd->optional) out(g, "    }\n");
    }
    out(g, "}\n\n");
}

/* One error return of a reader: *off = (where) - p0. */
static void out_bad(gen *g, const char *ind, const char *where, const char *why)
{
    outf(g, "%s        *off = (size_t)(%s - p0);\n%s        return \"%s\";\n%s    }\n", ind, where, ind, why, ind);
}

/* One field of a reader (field k of m): its bounds check unless !checked (a run's single
 * check covered it), then its value and checks; ind is the extra indentation. */
static void gen_read_field(gen *g, const wk_colloq_message *m, const msgnames *mn, uint32_t k,
                           bool checked, const char *ind0)
{
    const wk_colloq_field *fd = &m->fields[k];
    const char *f = FLD(k);
    char indb[32];
    snprintf(indb, sizeof indb, "%s    ", ind0);
    const char *ind = indb;
    (void)m;
    outf(g, "%s    /* ", ind0);
    out_field_doc(g, fd);
    out(g, " */\n");
    if (fd->optional) outf(g, "%s    if (present & %s) {\n", ind0, mn->has[k]);
    else outf(g, "%s    {\n", ind0);
    if (!is_var(fd->type) && checked) {
        outf(g, "%s    if ((size_t)(pe - p) < %u) {\n", ind, (unsigned)fd->width);
        out_bad(g, ind, "pe", "payload ends inside a fixed-width field");
    }
    switch (fd->type) {
    case WK_COLLOQ_BOOL:
        outf(g, "%s    if (p[0] > 1) {\n", ind);
        out_bad(g, ind, "p", "bool byte is not 0 or 1");
        outf(g, "%s    m->%s = p[0] != 0;\n%s    p += 1;\n", ind, f, ind);
        break;
    case WK_COLLOQ_U8: outf(g, "%s    m->%s = p[0];\n%s    p += 1;\n", ind, f, ind); break;
    case WK_COLLOQ_I8: outf(g, "%s    m->%s = (int8_t)p[0];\n%s    p += 1;\n", ind, f, ind); break;
    case WK_COLLOQ_U16: outf(g, "%s    m->%s = %s(p);\n%s    p += 2;\n", ind, f, g->rd16, ind); break;
    case WK_COLLOQ_I16: outf(g, "%s    m->%s = (int16_t)%s(p);\n%s    p += 2;\n", ind, f, g->rd16, ind); break;
    case WK_COLLOQ_U32: outf(g, "%s    m->%s = %s(p);\n%s    p += 4;\n", ind, f, g->rd32, ind); break;
    case WK_COLLOQ_I32: outf(g, "%s    m->%s = (int32_t)%s(p);\n%s    p += 4;\n", ind, f, g->rd32, ind); break;
    case WK_COLLOQ_U64: outf(g, "%s    m->%s = %s(p);\n%s    p += 8;\n", ind, f, g->rd64, ind); break;
    case WK_COLLOQ_I64: outf(g, "%s    m->%s = (int64_t)%s(p);\n%s    p += 8;\n", ind, f, g->rd64, ind); break;
    case WK_COLLOQ_F32:
    case WK_COLLOQ_F64: {
        bool f32 = fd->type == WK_COLLOQ_F32;
        outf(g, "%s    const %s bits = %s(p);\n", ind, f32 ? "uint32_t" : "uint64_t", f32 ? g->rd32 : g->rd64);
        if (f32) outf(g, "%s    if ((bits & 0x7f800000u) == 0x7f800000u) {\n", ind);
        else outf(g, "%s    if ((bits & 0x7ff0000000000000u) == 0x7ff0000000000000u) {\n", ind);
        out_bad(g, ind, "p", "float is NaN or infinite");
        outf(g, "%s    memcpy(&m->%s, &bits, %u);\n%s    p += %u;\n", ind, f, f32 ? 4 : 8, ind, f32 ? 4 : 8);
        break;
    }
    default: /* string, bytes: a varint length bounded by the payload, then the slice */
        outf(g, "%s    const uint8_t *q = p;\n%s    uint64_t n;\n"
                "%s    const int r = wk_colloq_varint_get(&q, pe, &n);\n"
                "%s    if (r <= 0) {\n%s        *off = (size_t)((r < 0 ? q : pe) - p0);\n"
                "%s        return r < 0 ? \"field length varint not minimal or too long\"\n"
                "%s                     : \"payload ends inside a field length\";\n%s    }\n",
             ind, ind, ind, ind, ind, ind, ind, ind);
        outf(g, "%s    if (n > (uint64_t)(pe - q)) {\n", ind);
        out_bad(g, ind, "p", "field length runs past the payload");
        if (fd->type == WK_COLLOQ_STRING) {
            outf(g, "%s    size_t bad = 0;\n%s    if (!wk_colloq_utf8_valid(q, (size_t)n, &bad)) {\n"
                    "%s        *off = (size_t)(q - p0) + bad;\n%s        return \"string is not valid UTF-8\";\n"
                    "%s    }\n", ind, ind, ind, ind, ind);
        }
        outf(g, "%s    m->%s.ptr = q;\n%s    m->%s.len = (size_t)n;\n%s    p = q + n;\n", ind, f, ind, f, ind);
    }
    if (fd->optional) {
        outf(g, "%s    } else {\n", ind0);
        if (is_var(fd->type)) outf(g, "%s        m->%s.ptr = NULL;\n%s        m->%s.len = 0;\n", ind0, f, ind0, f);
        else if (fd->type == WK_COLLOQ_BOOL) outf(g, "%s        m->%s = false;\n", ind0, f);
        else outf(g, "%s        m->%s = 0;\n", ind0, f);
    }
    outf(g, "%s    }\n", ind0);
}

static void gen_read(gen *g, const wk_colloq_message *m, const msgnames *mn)
{
    outf(g, "/* %s: decodes the payload [p, pe) into *m: NULL, or why not with *off its offset from p. The\n"
            " * checks and offsets are the generic decoder's (src/colloq/binary.c), field by field. */\n"
            "static const char *%s(%s *m, const uint8_t *p, const uint8_t *pe, size_t *off)\n{\n"
            "    const uint8_t *const p0 = p;\n", m->name, mn->read, mn->type);
    if (!m->bitmap_bytes && !m->field_count) out(g, "    (void)m;\n");
    if (m->bitmap_bytes) {
        unsigned B = m->bitmap_bytes;
        out(g, "    /* presence bitmap */\n");
        outf(g, "    if ((size_t)(pe - p) < %u) {\n", B);
        out_bad(g, "", "pe", "payload ends inside the presence bitmap");
        outf(g, "    const %s present = ", mn->mask);
        if (B == 1) out(g, "p[0]");
        else {
            outf(g, "(%s)(", mn->mask);
            for (unsigned b = 0; b < B; b++) {
                if (b) outf(g, " | (%s)p[%u] << %u", B > 4 ? "uint64_t" : "uint32_t", b, 8 * b);
                else outf(g, "(%s)p[0]", B > 4 ? "uint64_t" : "uint32_t");
            }
            out(g, ")");
        }
        out(g, ";\n");
        if (m->optional_count % 8) {
            outf(g, "    if (present >> %u) {\n", (unsigned)m->optional_count);
            outf(g, "        *off = %u;\n        return \"presence bit set beyond the optional fields\";\n    }\n", B - 1);
        }
        outf(g, "    m->present = present;\n    p += %u;\n", B);
    }
    for (uint32_t k = 0; k < m->field_count;) {
        uint32_t e = k; /* [k, e): a run of fixed-width fields */
        while (e < m->field_count && m->fields[e].width) e++;
        if (e - k < 2) {
            gen_read_field(g, m, mn, k, true, "");
            k++;
            continue;
        }
        /* a run: one bounds check when all of it is there (the usual case); else field by
         * field, so a short payload fails where the generic decoder says */
        uint32_t req = 0;
        for (uint32_t i = k; i < e; i++)
            if (!m->fields[i].optional) req += m->fields[i].width;
        outf(g, "    /* %s .. %s: fixed width, one bounds check */\n    {\n        const size_t need = %u",
             m->fields[k].name, m->fields[e - 1].name, (unsigned)req);
        for (uint32_t i = k; i < e; i++)
            if (m->fields[i].optional) outf(g, " + (present & %s ? %u : 0)", mn->has[i], (unsigned)m->fields[i].width);
        out(g, ";\n        if ((size_t)(pe - p) >= need) {\n");
        for (uint32_t i = k; i < e; i++) gen_read_field(g, m, mn, i, false, "        ");
        out(g, "        } else {\n");
        for (uint32_t i = k; i < e; i++) gen_read_field(g, m, mn, i, true, "        ");
        out(g, "        }\n    }\n");
        k = e;
    }
    out(g, "    if (p != pe) {\n");
    out_bad(g, "", "p", "trailing bytes after the last field");
    out(g, "    return NULL;\n}\n\n");
}

static void gen_to_from(gen *g, const wk_colloq_message *m, const msgnames *mn)
{
    outf(g, "/* %s -> the library frame's values (schedule order). */\n"
            "static void %s(const %s *m, wk_colloq_value *v)\n{\n",
         m->name, mn->to, mn->type);
    if (!m->field_count) out(g, "    (void)m;\n    (void)v;\n");
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        const char *f = FLD(k), *ind = fd->optional ? "    " : "";
        out(g, "    /* ");
        out_field_doc(g, fd);
        out(g, " */\n");
        if (fd->optional) outf(g, "    v[%u].present = (m->present & %s) != 0;\n    if (v[%u].present) {\n", k, mn->has[k], k);
        else outf(g, "    v[%u].present = true;\n", k);
        switch (fd->type) {
        case WK_COLLOQ_BOOL: outf(g, "%s    v[%u].as.b = m->%s;\n", ind, k, f); break;
        case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32: case WK_COLLOQ_U64:
            outf(g, "%s    v[%u].as.u = m->%s;\n", ind, k, f);
            break;
        case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32: case WK_COLLOQ_I64:
            outf(g, "%s    v[%u].as.i = m->%s;\n", ind, k, f);
            break;
        case WK_COLLOQ_F32: outf(g, "%s    v[%u].as.f = (double)m->%s;\n", ind, k, f); break;
        case WK_COLLOQ_F64: outf(g, "%s    v[%u].as.f = m->%s;\n", ind, k, f); break;
        default: outf(g, "%s    v[%u].as.s.ptr = m->%s.ptr;\n%s    v[%u].as.s.len = m->%s.len;\n", ind, k, f, ind, k, f);
        }
        if (fd->optional)
            outf(g, "    } else {\n        v[%u].as.s.ptr = NULL;\n        v[%u].as.s.len = 0;\n    }\n", k, k);
    }
    out(g, "}\n\n");

    outf(g, "/* The library frame's values -> %s: NULL, or why they do not fit (range, NaN, f32). */\n"
            "static const char *%s(const wk_colloq_value *v, %s *m)\n{\n",
         m->name, mn->from, mn->type);
    if (!m->field_count) out(g, "    (void)m;\n    (void)v;\n");
    if (mn->mask) out(g, "    m->present = 0;\n");
    static const char *const lim[][2] = {
        [WK_COLLOQ_U8] = {NULL, "UINT8_MAX"}, [WK_COLLOQ_U16] = {NULL, "UINT16_MAX"},
        [WK_COLLOQ_U32] = {NULL, "UINT32_MAX"}, [WK_COLLOQ_I8] = {"INT8_MIN", "INT8_MAX"},
        [WK_COLLOQ_I16] = {"INT16_MIN", "INT16_MAX"}, [WK_COLLOQ_I32] = {"INT32_MIN", "INT32_MAX"}};
    for (uint32_t k = 0; k < m->field_count; k++) {
        const wk_colloq_field *fd = &m->fields[k];
        const char *f = FLD(k), *ind = fd->optional ? "    " : "";
        out(g, "    /* ");
        out_field_doc(g, fd);
        out(g, " */\n");
        if (fd->optional) outf(g, "    if (v[%u].present) {\n        m->present |= %s;\n", k, mn->has[k]);
        else outf(g, "    if (!v[%u].present) return \"%s: required field absent\";\n", k, fd->name);
        switch (fd->type) {
        case WK_COLLOQ_BOOL: outf(g, "%s    m->%s = v[%u].as.b;\n", ind, f, k); break;
        case WK_COLLOQ_U8: case WK_COLLOQ_U16: case WK_COLLOQ_U32:
            outf(g, "%s    if (v[%u].as.u > %s) return \"%s: out of its type's range\";\n", ind, k,
                 lim[fd->type][1], fd->name);
            outf(g, "%s    m->%s = (%s)v[%u].as.u;\n", ind, f, type_c(g, fd->type), k);
            break;
        case WK_COLLOQ_I8: case WK_COLLOQ_I16: case WK_COLLOQ_I32:
            outf(g, "%s    if (v[%u].as.i < %s || v[%u].as.i > %s) return \"%s: out of its type's range\";\n",
                 ind, k, lim[fd->type][0], k, lim[fd->type][1], fd->name);
            outf(g, "%s    m->%s = (%s)v[%u].as.i;\n", ind, f, type_c(g, fd->type), k);
            break;
        case WK_COLLOQ_U64: outf(g, "%s    m->%s = v[%u].as.u;\n", ind, f, k); break;
        case WK_COLLOQ_I64: outf(g, "%s    m->%s = v[%u].as.i;\n", ind, f, k); break;
        case WK_COLLOQ_F32:
            outf(g, "%s    if (!(v[%u].as.f >= -3.4028234663852886e38 && v[%u].as.f <= 3.4028234663852886e38) ||\n"
                    "%s        (double)(float)v[%u].as.f != v[%u].as.f)\n"
                    "%s        return \"%s: NaN, infinity or not exact as f32\";\n"
                    "%s    m->%s = (float)v[%u].as.f;\n", ind, k, k, ind, k, k, ind, fd->name, ind, f, k);
            break;
        case WK_COLLOQ_F64:
            outf(g, "%s    if (!%s(v[%u].as.f)) return \"%s: NaN or infinity\";\n%s    m->%s = v[%u].as.f;\n",
                 ind, g->finite64, k, fd->name, ind, f, k);
            break;
        default:
            outf(g, "%s    m->%s.ptr = v[%u].as.s.ptr;\n%s    m->%s.len = v[%u].as.s.len;\n", ind, f, k, ind, f, k);
        }
        if (fd->optional) {
            out(g, "    } else {\n");
            if (is_var(fd->type)) outf(g, "        m->%s.ptr = NULL;\n        m->%s.len = 0;\n", f, f);
            else if (fd->type == WK_COLLOQ_BOOL) outf(g, "        m->%s = false;\n", f);
            else outf(g, "        m->%s = 0;\n", f);
            out(g, "    }\n");
        }
    }
    out(g, "    return NULL;\n}\n\n");
}

static void gen_frame_encode_decode(gen *g, const wk_colloq_message *m, const msgnames *mn, bool used)
{
    if (used)
    outf(g, "/* %s: the whole frame [t][seq][payload_len][payload], checked; NEED_OUTPUT leaves out untouched. */\n"
            "%s wk_result %s(uint32_t t, uint64_t seq, const %s *m, wk_out *out, wk_error *err)\n{\n"
            "    const char *why = %s(m);\n"
            "    if (why) {\n        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"%s: %%s\", why);\n        return WK_ERROR;\n    }\n"
            "    const size_t n = %s(m);\n"
            "    if (n > %s) {\n"
            "        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"%s: payload above its ceiling (the peer would refuse it)\");\n"
            "        return WK_ERROR;\n    }\n"
            "    const size_t total = wk_colloq_varint_len(t) + wk_colloq_varint_len(seq) + wk_colloq_varint_len(n) + n;\n"
            "    if (out->pos > out->size || out->size - out->pos < total) return WK_NEED_OUTPUT;\n"
            "    uint8_t *p = out->dst + out->pos;\n"
            "    p += wk_colloq_varint_put(p, t);\n    p += wk_colloq_varint_put(p, seq);\n"
            "    p += wk_colloq_varint_put(p, n);\n    %s(m, p);\n    out->pos += total;\n    return WK_DONE;\n}\n\n",
         m->name, g->hot, mn->frame, mn->type, mn->check, m->name, mn->size, mn->max, m->name, mn->write);
    outf(g, "wk_result %s(const %s *m, wk_out *out, wk_error *err)\n{\n"
            "    const char *why = %s(m);\n"
            "    if (why) {\n        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"%s: %%s\", why);\n        return WK_ERROR;\n    }\n"
            "    const size_t n = %s(m);\n"
            "    if (n > %s) {\n"
            "        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"%s: payload above its ceiling (the peer would refuse it)\");\n"
            "        return WK_ERROR;\n    }\n"
            "    if (out->pos > out->size || out->size - out->pos < n) return WK_NEED_OUTPUT;\n"
            "    %s(m, out->dst + out->pos);\n    out->pos += n;\n    return WK_DONE;\n}\n\n",
         mn->encode, mn->type, mn->check, m->name, mn->size, mn->max, m->name, mn->write);
    outf(g, "wk_result %s(%s *m, wk_in *in, wk_error *err)\n{\n"
            "    if (in->pos > in->size) {\n        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"input view position past its size\");\n"
            "        return WK_ERROR;\n    }\n"
            "    if (in->size - in->pos > %s) {\n"
            "        wk_error_set(err, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, 0, \"payload above the message's ceiling\");\n"
            "        return WK_ERROR;\n    }\n"
            "    size_t off = 0;\n"
            "    const char *why = %s(m, in->src + in->pos, in->src + in->size, &off);\n"
            "    if (why) {\n        wk_error_set(err, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, off, \"%%s\", why);\n        return WK_ERROR;\n    }\n"
            "    in->pos = in->size;\n    return WK_DONE;\n}\n\n",
         mn->decode, mn->type, mn->max, mn->read);
}

/* ---------------------------------------------------------------------------------------------
 * The source: helpers, session, receive, send, conversions, preface
 * ------------------------------------------------------------------------------------------- */
static void gen_helpers(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    bool w16 = false, w32 = false, w64 = false, f32 = false, f64 = false;
    for (uint32_t i = 0; i < pl->message_count; i++)
        for (uint32_t k = 0; k < pl->messages[i].field_count; k++) {
            wk_colloq_type t = pl->messages[i].fields[k].type;
            w16 |= t == WK_COLLOQ_U16 || t == WK_COLLOQ_I16;
            w32 |= t == WK_COLLOQ_U32 || t == WK_COLLOQ_I32 || t == WK_COLLOQ_F32;
            w64 |= t == WK_COLLOQ_U64 || t == WK_COLLOQ_I64 || t == WK_COLLOQ_F64;
            f32 |= t == WK_COLLOQ_F32;
            f64 |= t == WK_COLLOQ_F64;
        }
    outf(g, "/* %s: inlined into the frame paths; %s: the failure paths, kept out of them. */\n"
            "#if defined(__GNUC__)\n#define %s static inline __attribute__((always_inline))\n"
            "#define %s static __attribute__((cold, noinline))\n#else\n#define %s static inline\n#define %s static\n#endif\n\n",
         g->hot, g->cold, g->hot, g->cold, g->hot, g->cold);
    bool var = false;
    for (uint32_t i = 0; i < pl->message_count; i++)
        for (uint32_t k = 0; k < pl->messages[i].field_count; k++) var |= is_var(pl->messages[i].fields[k].type);
    if (var)
        outf(g, "/* Copies n bytes of a string or bytes value: short ones inline, in loads and stores of the\n"
                " * widths the receiver's UTF-8 check reads them with. */\n"
                "%s void %s(uint8_t *restrict d, const uint8_t *restrict s, size_t n)\n{\n"
                "    if (n > 16 && n <= 32) {\n        uint8_t a[16], b[16];\n        memcpy(a, s, 16);\n        memcpy(b, s + n - 16, 16);\n"
                "        memcpy(d, a, 16);\n        memcpy(d + n - 16, b, 16);\n"
                "    } else if (n >= 8 && n <= 16) {\n        uint64_t a, b;\n        memcpy(&a, s, 8);\n        memcpy(&b, s + n - 8, 8);\n"
                "        memcpy(d, &a, 8);\n        memcpy(d + n - 8, &b, 8);\n"
                "    } else if (n >= 4 && n < 8) {\n        uint32_t a, b;\n        memcpy(&a, s, 4);\n        memcpy(&b, s + n - 4, 4);\n"
                "        memcpy(d, &a, 4);\n        memcpy(d + n - 4, &b, 4);\n"
                "    } else if (n > 0 && n < 4) {\n        d[0] = s[0];\n        d[n >> 1] = s[n >> 1];\n        d[n - 1] = s[n - 1];\n"
                "    } else if (n) {\n        memcpy(d, s, n);\n    }\n}\n\n",
             g->hot, g->copy);
    if (w16 || w32 || w64) out(g, "/* Little-endian fixed-width fields and float bits. */\n");
    if (w16)
        outf(g, "static inline uint16_t %s(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }\n"
                "static inline void %s(uint8_t *p, uint16_t v)\n{\n    p[0] = (uint8_t)v;\n    p[1] = (uint8_t)(v >> 8);\n}\n",
             g->rd16, g->wr16);
    if (w32 || w64)
        outf(g, "static inline uint32_t %s(const uint8_t *p)\n{\n"
                "    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;\n}\n"
                "static inline void %s(uint8_t *p, uint32_t v)\n{\n"
                "    p[0] = (uint8_t)v;\n    p[1] = (uint8_t)(v >> 8);\n    p[2] = (uint8_t)(v >> 16);\n    p[3] = (uint8_t)(v >> 24);\n}\n",
             g->rd32, g->wr32);
    if (w64)
        outf(g, "static inline uint64_t %s(const uint8_t *p) { return (uint64_t)%s(p) | (uint64_t)%s(p + 4) << 32; }\n"
                "static inline void %s(uint8_t *p, uint64_t v)\n{\n    %s(p, (uint32_t)v);\n    %s(p + 4, (uint32_t)(v >> 32));\n}\n",
             g->rd64, g->rd32, g->rd32, g->wr64, g->wr32, g->wr32);
    if (f32)
        outf(g, "static inline uint32_t %s(float x)\n{\n    uint32_t u;\n    memcpy(&u, &x, 4);\n    return u;\n}\n"
                "static inline bool %s(float x) { return (%s(x) & 0x7f800000u) != 0x7f800000u; }\n",
             g->f32_bits, g->finite32, g->f32_bits);
    if (f64)
        outf(g, "static inline uint64_t %s(double x)\n{\n    uint64_t u;\n    memcpy(&u, &x, 8);\n    return u;\n}\n"
                "static inline bool %s(double x)\n{\n"
                "    return (%s(x) & 0x7ff0000000000000u) != 0x7ff0000000000000u;\n}\n",
             g->f64_bits, g->finite64, g->f64_bits);
    out(g, "\n");
}

static void gen_session(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "void %s(%s *s)\n{\n    s->state = %s;\n    s->next_seq = 0;\n    s->finished = %s;\n"
            "    s->failure = WK_OK;\n    s->failure_seq = 0;\n}\n\n",
         g->session_init, g->session, g->initial, pl->is_final[pl->initial] ? "true" : "false");
    outf(g, "/* The session has failed: the same failure again. */\n"
            "%s wk_result %s(const %s *s, wk_error *err)\n{\n"
            "    wk_error_set(err, s->failure, WK_NO_OFFSET, \"seq %%llu: session already failed (%%s)\",\n"
            "                 (unsigned long long)s->failure_seq, wk_colloq_failure_name(s->failure));\n"
            "    return WK_ERROR;\n}\n\n", g->cold, g->refail, g->session);
    outf(g, "/* Records failure `code` (offset off from the frame's first byte, or WK_NO_OFFSET). */\n"
            "%s wk_result %s(%s *s, wk_code code, uint64_t off, const char *why, wk_error *err)\n{\n"
            "    s->failure = code;\n    s->failure_seq = s->next_seq;\n"
            "    wk_error_set(err, code, off, \"seq %%llu: %%s\", (unsigned long long)s->next_seq, why);\n"
            "    return WK_ERROR;\n}\n\n", g->cold, g->fail, g->session);
    if (pl->transition_count)
    outf(g, "/* A frame of the transition (from, role) that is not accepted: the first failed check in the\n"
            " * generic checker's order (after-final, wrong-state, wrong-sender, bad-sequence), else the\n"
            " * payload's failure `code` at `off`. */\n"
            "%s wk_result %s(%s *s, uint32_t from, uint32_t role, uint32_t sender, uint64_t seq,\n"
            "                    wk_code code, uint64_t off, const char *why, wk_error *err)\n{\n"
            "    if (s->finished) return %s(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, \"frame after a final state\", err);\n"
            "    if (s->state != from)\n"
            "        return %s(s, WK_ERR_COLLOQ_WRONG_STATE, WK_NO_OFFSET, \"transition does not start at the current state\", err);\n"
            "    if (sender != WK_COLLOQ_SENDER_TRANSCRIPT && sender != role)\n"
            "        return %s(s, WK_ERR_COLLOQ_WRONG_SENDER, WK_NO_OFFSET, \"sent by a role the transition does not name\", err);\n"
            "    if (seq != s->next_seq)\n"
            "        return %s(s, WK_ERR_COLLOQ_BAD_SEQUENCE, WK_NO_OFFSET, \"sequence number is not the next one\", err);\n"
            "    return %s(s, code, off, why, err);\n}\n\n",
         g->cold, g->reject, g->session, g->fail, g->fail, g->fail, g->fail, g->fail);
    outf(g, "/* A frame header that cannot be read (non-minimal, over 10 bytes, above 2^64-1) at offset off. */\n"
            "%s wk_result %s(%s *s, uint64_t off, wk_error *err)\n{\n"
            "    if (s->finished) return %s(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, \"input after a final state\", err);\n"
            "    return %s(s, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, off,\n"
            "              \"frame header varint not minimal, longer than 10 bytes or above 2^64-1\", err);\n}\n\n",
         g->cold, g->bad_header, g->session, g->fail, g->fail);
    outf(g, "wk_result %s(%s *s, const wk_in *rest, wk_error *err)\n{\n"
            "    if (s->failure) return %s(s, err);\n"
            "    if (!rest || rest->pos >= rest->size) return WK_DONE;\n"
            "    if (s->finished) return %s(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, \"input after a final state\", err);\n"
            "    return %s(s, WK_ERR_COLLOQ_TRUNCATED, WK_NO_OFFSET, \"input ended inside a frame\", err);\n}\n\n",
         g->session_finish, g->session, g->refail, g->fail, g->fail);
}

static void gen_receive(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "wk_result %s(%s *s, uint32_t sender, wk_in *in, %s *f, wk_error *err)\n{\n"
            "    if (s->failure) return %s(s, err);\n"
            "    if (in->pos >= in->size) return WK_NEED_INPUT;\n"
            "    const uint8_t *const start = in->src + in->pos, *const end = in->src + in->size;\n"
            "    const uint8_t *p = start;\n    uint64_t t, seq, len;\n    int r;\n"
            "    /* header: transition id, sequence, payload_len (minimal LEB128) */\n"
            "    if ((r = wk_colloq_varint_get(&p, end, &t)) <= 0 || (r = wk_colloq_varint_get(&p, end, &seq)) <= 0 ||\n"
            "        (r = wk_colloq_varint_get(&p, end, &len)) <= 0) {\n"
            "        if (r == 0) return WK_NEED_INPUT;\n"
            "        return %s(s, (uint64_t)(p - start), err);\n    }\n"
            "    const size_t hdr = (size_t)(p - start);\n",
         g->receive, g->session, g->frame, g->refail, g->bad_header);
    if (pl->transition_count) out(g, "    const char *why = NULL;\n    size_t off = 0;\n");
    out(g, "    (void)f;\n    (void)sender;\n    switch (t) {\n");
    for (uint32_t t = 0; t < pl->transition_count; t++) {
        const wk_colloq_transition *tr = &pl->transitions[t];
        const msgnames *mn = &g->msg[tr->message];
        const char *from = g->state[tr->from], *role = g->role[tr->sender];
        outf(g, "    case %s: /* ", g->tr[t]);
        out_transition_doc(g, t);
        out(g, " */\n");
        outf(g, "        if (len > %s) { /* the ceiling first: only the header is consumed */\n"
                "            in->pos += hdr;\n"
                "            return %s(s, %s, %s, sender, seq, WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, hdr,\n"
                "                        \"payload_len above the message's ceiling\", err);\n        }\n"
                "        if ((uint64_t)(end - p) < len) return WK_NEED_INPUT;\n"
                "        in->pos += hdr + (size_t)len;\n"
                "        if (s->state != %s || (sender != %s && sender != WK_COLLOQ_SENDER_TRANSCRIPT) || seq != s->next_seq)\n"
                "            return %s(s, %s, %s, sender, seq, WK_OK, WK_NO_OFFSET, \"\", err);\n"
                "        if ((why = %s(&f->as.%s, p, p + (size_t)len, &off)) != NULL) break;\n"
                "        s->state = %s;\n",
             mn->max, g->reject, from, role, from, role, g->reject, from, role, mn->read, mn->member,
             g->state[tr->to]);
        if (pl->is_final[tr->to]) out(g, "        s->finished = true;\n");
        out(g, "        s->next_seq++;\n        f->transition = (uint32_t)t;\n        f->seq = seq;\n        return WK_DONE;\n");
    }
    outf(g, "    default: /* not a transition of the plan: only the header is consumed */\n"
            "        in->pos += hdr;\n"
            "        if (s->finished) return %s(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, \"frame after a final state\", err);\n"
            "        return %s(s, WK_ERR_COLLOQ_UNKNOWN_TRANSITION, WK_NO_OFFSET, \"no such transition\", err);\n"
            "    }\n", g->fail, g->fail);
    if (pl->transition_count)
        outf(g, "    return %s(s, WK_ERR_COLLOQ_MALFORMED_PAYLOAD, hdr + off, why, err);\n", g->fail);
    out(g, "}\n\n");
}

/* The case labels of the transitions that carry message mi; false when none does. */
static bool out_cases(gen *g, uint32_t mi)
{
    bool any = false;
    for (uint32_t t = 0; t < g->plan->transition_count; t++) {
        if (g->plan->transitions[t].message != mi) continue;
        outf(g, "    case %s:\n", g->tr[t]);
        any = true;
    }
    return any;
}

static void gen_send_encode(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    /* send: each case does its own checks and updates (a common tail that stores `finished` on
     * every frame would be read back by the next call's test of failure and finished, which the
     * compiler merges into one wide load: a store-forwarding stall per frame) */
    outf(g, "/* A transition the session cannot send now: nothing written, nothing changed. */\n"
            "%s wk_result %s(wk_code code, uint32_t t, const char *why, wk_error *err)\n{\n"
            "    wk_error_set(err, code, WK_NO_OFFSET, \"transition %%lu %%s\", (unsigned long)t, why);\n"
            "    return WK_ERROR;\n}\n\n", g->cold, g->refuse);
    outf(g, "wk_result %s(%s *s, uint32_t sender, const %s *f, wk_out *out, wk_error *err)\n{\n"
            "    if (s->failure) return %s(WK_ERR_STATE, f->transition, \"cannot be sent: the session has failed\", err);\n"
            "    if (s->finished) return %s(WK_ERR_STATE, f->transition, \"cannot be sent: the session has finished\", err);\n",
         g->send, g->session, g->frame, g->refuse, g->refuse);
    if (pl->transition_count) out(g, "    wk_result r;\n");
    out(g, "    (void)sender;\n    (void)out;\n    switch (f->transition) {\n");
    for (uint32_t t = 0; t < pl->transition_count; t++) {
        const wk_colloq_transition *tr = &pl->transitions[t];
        const msgnames *mn = &g->msg[tr->message];
        outf(g, "    case %s: /* ", g->tr[t]);
        out_transition_doc(g, t);
        out(g, " */\n");
        outf(g, "        if (s->state != %s) return %s(WK_ERR_STATE, f->transition, \"does not leave the current state\", err);\n"
                "        if (sender != %s && sender != WK_COLLOQ_SENDER_TRANSCRIPT)\n"
                "            return %s(WK_ERR_ARG, f->transition, \"is another role's\", err);\n"
                "        if ((r = %s(%s, s->next_seq, &f->as.%s, out, err)) != WK_DONE) return r;\n"
                "        s->state = %s;\n",
             g->state[tr->from], g->refuse, g->role[tr->sender], g->refuse, mn->frame, g->tr[t], mn->member,
             g->state[tr->to]);
        if (pl->is_final[tr->to]) out(g, "        s->finished = true;\n");
        out(g, "        s->next_seq++;\n        return WK_DONE;\n");
    }
    outf(g, "    default:\n        return %s(WK_ERR_ARG, f->transition, \"is not in the plan\", err);\n    }\n}\n\n", g->refuse);
    /* frame size and encode: grouped by message */
    outf(g, "size_t %s(const %s *f)\n{\n    size_t n;\n    switch (f->transition) {\n", g->frame_size, g->frame);
    for (uint32_t mi = 0; mi < pl->message_count; mi++) {
        bool any = out_cases(g, mi);
        if (any)
            outf(g, "        n = %s(&f->as.%s);\n        break;\n", g->msg[mi].size, g->msg[mi].member);
    }
    out(g, "    default:\n        return 0;\n    }\n"
           "    return wk_colloq_varint_len(f->transition) + wk_colloq_varint_len(f->seq) + wk_colloq_varint_len(n) + n;\n}\n\n");
    outf(g, "wk_result %s(const %s *f, wk_out *out, wk_error *err)\n{\n    (void)out;\n    switch (f->transition) {\n",
         g->frame_encode, g->frame);
    for (uint32_t mi = 0; mi < pl->message_count; mi++) {
        bool any = out_cases(g, mi);
        if (any)
            outf(g, "        return %s(f->transition, f->seq, &f->as.%s, out, err);\n", g->msg[mi].frame,
                 g->msg[mi].member);
    }
    out(g, "    default:\n        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"transition %lu is not in the plan\", (unsigned long)f->transition);\n"
           "        return WK_ERROR;\n    }\n}\n\n");
}

static void gen_conversions(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "wk_code %s(const %s *g, wk_colloq_frame *f, wk_error *err)\n{\n", g->to_colloq, g->frame);
    if (pl->message_count) out(g, "    uint32_t n = 0;\n    size_t len = 0;\n");
    out(g, "    (void)f;\n    switch (g->transition) {\n");
    for (uint32_t mi = 0; mi < pl->message_count; mi++) {
        bool any = out_cases(g, mi);
        if (any)
            outf(g, "        n = %u;\n        %s(&g->as.%s, f->fields);\n        len = %s(&g->as.%s);\n        break;\n",
                 (unsigned)pl->messages[mi].field_count, g->msg[mi].to, g->msg[mi].member, g->msg[mi].size,
                 g->msg[mi].member);
    }
    out(g, "    default:\n        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"transition %lu is not in the plan\", (unsigned long)g->transition);\n    }\n");
    if (pl->message_count)
        out(g, "    f->transition = g->transition;\n    f->seq = g->seq;\n    f->field_count = n;\n"
               "    f->payload_error = WK_OK;\n    f->payload_error_offset = 0;\n    f->payload_error_reason = NULL;\n"
               "    f->payload_len = len;\n    f->sender_mismatch = false;\n    return WK_OK;\n");
    out(g, "}\n\n");
    outf(g, "wk_code %s(const wk_colloq_frame *f, %s *g, wk_error *err)\n{\n", g->from_colloq, g->frame);
    if (pl->message_count) out(g, "    const char *why = NULL;\n");
    out(g, "    (void)g;\n"
           "    if (f->payload_error != WK_OK || f->sender_mismatch)\n"
           "        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"the frame carries a decoding problem\");\n"
           "    switch (f->transition) {\n");
    for (uint32_t mi = 0; mi < pl->message_count; mi++) {
        bool any = out_cases(g, mi);
        if (!any) continue;
        outf(g, "        if (f->field_count != %u) {\n            why = \"field count differs from the schedule\";\n            break;\n        }\n"
                "        why = %s(f->fields, &g->as.%s);\n        if (!why) why = %s(&g->as.%s);\n        break;\n",
             (unsigned)pl->messages[mi].field_count, g->msg[mi].from, g->msg[mi].member, g->msg[mi].check,
             g->msg[mi].member);
    }
    out(g, "    default:\n        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"transition %lu is not in the plan\", (unsigned long)f->transition);\n    }\n");
    if (pl->message_count)
        out(g, "    if (why) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"%s\", why);\n"
               "    g->transition = f->transition;\n    g->seq = f->seq;\n    return WK_OK;\n");
    out(g, "}\n\n");
}

static void gen_preface(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "bool %s(const wk_colloq_plan *plan)\n{\n"
            "    return plan && plan->has_schedules && strcmp(plan->identity, %s) == 0;\n}\n\n",
         g->plan_matches, g->identity);
    /* the canonical plan, as a string literal in lines of about 100 bytes (\" and \\, octal
     * escapes for '?' (no trigraphs) and every byte outside printable ASCII). A long plan makes a
     * literal over the 4095 bytes C17 promises (gcc and clang take any length; -pedantic warns
     * with -Woverlength-strings). */
    outf(g, "static const char %s[] =", g->canonical_text);
    for (size_t i = 0, col = 200; i < pl->canonical_len; i++) {
        if (col >= 96) {
            out(g, i ? "\"\n    \"" : "\n    \"");
            col = 0;
        }
        unsigned char c = (unsigned char)pl->canonical[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
            jw_byte(&g->w, (char)c);
            col++;
        } else if (c == '"' || c == '\\') {
            jw_byte(&g->w, '\\');
            jw_byte(&g->w, (char)c);
            col += 2;
        } else {
            outf(g, "\\%03o", c);
            col += 4;
        }
    }
    out(g, pl->canonical_len ? "\";\n" : " \"\";\n");
    outf(g, "const char *%s(size_t *len)\n{\n    if (len) *len = sizeof %s - 1;\n    return %s;\n}\n\n",
         g->canonical, g->canonical_text, g->canonical_text);
    outf(g, "static const char *const %s[%s] = {\n", g->role_names, g->n_roles);
    for (uint32_t i = 0; i < pl->role_count; i++) outf(g, "    \"%s\",\n", pl->roles[i]);
    out(g, "};\n\n");
    outf(g, "wk_code %s(const char *line, size_t len, uint32_t our_role, uint32_t *peer_role,\n"
            "           wk_error *err)\n{\n"
            "    wk_colloq_preface pf;\n    wk_code rc = wk_colloq_preface_parse(line, len, &pf, err);\n"
            "    if (rc != WK_OK) return rc;\n"
            "    if (strcmp(pf.plan, %s) != 0)\n"
            "        return wk_error_set(err, WK_ERR_COLLOQ_PLAN_MISMATCH, WK_NO_OFFSET, \"peer plan %%.16s... is not ours (%%.16s...)\",\n"
            "                            pf.plan, %s);\n"
            "    if (pf.wire != WK_COLLOQ_WIRE_BINARY)\n"
            "        return wk_error_set(err, WK_ERR_COLLOQ_WIRE_MISMATCH, WK_NO_OFFSET, \"peer wire %%s, ours binary\",\n"
            "                            wk_colloq_wire_name(pf.wire));\n"
            "    uint32_t r = %s;\n"
            "    for (uint32_t i = 0; i < %s; i++)\n"
            "        if (strcmp(pf.role, %s[i]) == 0) r = i;\n"
            "    if (r == %s)\n"
            "        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE_ROLE, WK_NO_OFFSET, \"peer role \\\"%%.40s\\\" is not in the plan\", pf.role);\n"
            "    if (our_role != WK_COLLOQ_ROLE_ANY && r == our_role)\n"
            "        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE_ROLE, WK_NO_OFFSET, \"peer role \\\"%%.40s\\\" is our own\", pf.role);\n"
            "    if (peer_role) *peer_role = r;\n    return WK_OK;\n}\n\n",
         g->preface_check, g->identity, g->identity, g->n_roles, g->n_roles, g->role_names, g->n_roles);
    outf(g, "wk_result %s(uint32_t role, wk_out *out, wk_error *err)\n{\n"
            "    static const char head[] = \"{\\\"colloq\\\":\\\"wire/v0\\\",\\\"plan\\\":\\\"\" %s \"\\\",\\\"wire\\\":\\\"binary\\\",\\\"role\\\":\\\"\";\n"
            "    if (role >= %s) {\n"
            "        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, \"role %%lu is not in the plan\", (unsigned long)role);\n"
            "        return WK_ERROR;\n    }\n"
            "    const size_t hl = sizeof head - 1, rl = strlen(%s[role]), n = hl + rl + 3;\n"
            "    if (out->pos > out->size || out->size - out->pos < n) return WK_NEED_OUTPUT;\n"
            "    uint8_t *p = out->dst + out->pos;\n"
            "    memcpy(p, head, hl);\n    memcpy(p + hl, %s[role], rl);\n    memcpy(p + hl + rl, \"\\\"}\\n\", 3);\n"
            "    out->pos += n;\n    return WK_DONE;\n}\n",
         g->preface_write, g->identity, g->n_roles, g->role_names, g->role_names);
}

static void gen_source(gen *g)
{
    const wk_colloq_plan *pl = g->plan;
    outf(g, "/* The binary Colloq codec of the plan \"");
    out_comment_text(g, pl->name);
    outf(g, "\" (identity %s), generated by\n * `wirekit colloq gen`: see %s. Do not edit. */\n", pl->identity, g->header_name);
    outf(g, "#include \"%s\"\n#include <string.h>\n\n", g->header_name);
    gen_helpers(g);
    for (uint32_t i = 0; i < pl->message_count; i++) {
        const wk_colloq_message *m = &pl->messages[i];
        const msgnames *mn = &g->msg[i];
        out(g, "/* ------------------------------------------------------------------------------------------\n");
        outf(g, " * Message %s\n", m->name);
        out(g, " * ---------------------------------------------------------------------------------------- */\n");
        bool used = false; /* does a transition carry it? (else no frame code: it would be unused) */
        for (uint32_t t = 0; t < pl->transition_count && !used; t++) used = pl->transitions[t].message == i;
        gen_size(g, m, mn);
        gen_check(g, m, mn);
        gen_write(g, m, mn);
        gen_read(g, m, mn);
        if (used) gen_to_from(g, m, mn);
        gen_frame_encode_decode(g, m, mn, used);
    }
    out(g, "/* ------------------------------------------------------------------------------------------\n"
           " * Session: receive, send, frames, conversions, preface\n"
           " * ---------------------------------------------------------------------------------------- */\n");
    gen_session(g);
    gen_receive(g);
    gen_send_encode(g);
    gen_conversions(g);
    gen_preface(g);
}

/* ---------------------------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------------------------- */
static void gen_free(gen *g)
{
    set_clear(g, &g->taken);
    while (g->arena) {
        chunk *c = g->arena;
        g->arena = c->next;
        g->a.free(g->a.opaque, c);
    }
}

/* Sets up g (names chosen); WK_OK or an error. */
static wk_code gen_init(gen *g, const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                        wk_error *err)
{
    memset(g, 0, sizeof *g);
    g->plan = plan;
    g->a = wk_allocator_or_default(params ? params->allocator : NULL);
    if (!plan->has_schedules)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "a v0 plan has no payload schedules: no binary codec");
    char def[WK_COLLOQ_CODEGEN_PREFIX_MAX + 1];
    const char *prefix = params && params->prefix ? params->prefix : default_prefix(plan, def);
    if (!valid_prefix(prefix))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "prefix \"%.40s\" is not [A-Za-z_][A-Za-z0-9_]* of 1..%d characters",
                            prefix, PREFIX_MAX);
    g->p = nm(g, "%s", prefix);
    char *P = g_alloc(g, strlen(prefix) + 1);
    if (P) {
        for (size_t i = 0; prefix[i]; i++)
            P[i] = (char)(prefix[i] >= 'a' && prefix[i] <= 'z' ? prefix[i] - 32 : prefix[i]);
        P[strlen(prefix)] = '\0';
    }
    g->P = P;
    g->header_name = params && params->header_name ? nm(g, "%s", params->header_name) : nm(g, "%s.h", prefix);
    if (!g->oom) {
        for (const char *h = g->header_name; *h; h++)
            if (*h == '"' || *h == '\\' || *h == '\n' || (unsigned char)*h < 0x20) {
                gen_free(g);
                return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "header name has a quote, backslash or control character");
            }
    }
    if (!g->oom) name_all(g);
    if (g->oom) {
        gen_free(g);
        return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory generating the codec");
    }
    return WK_OK;
}

static void gen_part(gen *g, wk_colloq_codegen_part part)
{
    if (part == WK_COLLOQ_CODEGEN_HEADER) gen_header(g);
    else gen_source(g);
}

wk_code wk_colloq_codegen_size(const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                               wk_colloq_codegen_part part, size_t *size, wk_error *err)
{
    gen g;
    wk_code rc = gen_init(&g, plan, params, err);
    if (rc) return rc;
    jw_init(&g.w, NULL, 0);
    gen_part(&g, part);
    bool oom = g.oom;
    gen_free(&g);
    if (oom) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory generating the codec");
    *size = g.w.len;
    return WK_OK;
}

wk_result wk_colloq_codegen_write(const wk_colloq_plan *plan, const wk_colloq_codegen_params *params,
                                  wk_colloq_codegen_part part, wk_out *out, wk_error *err)
{
    gen g;
    if (gen_init(&g, plan, params, err)) return WK_ERROR;
    jw_init(&g.w, NULL, 0);
    gen_part(&g, part);
    size_t need = g.w.len;
    if (!g.oom && (out->pos > out->size || out->size - out->pos < need)) {
        gen_free(&g);
        return WK_NEED_OUTPUT;
    }
    /* the text goes to a buffer of our own (vsnprintf needs room for its NUL), then to out */
    char *buf = g.oom ? NULL : g.a.alloc(g.a.opaque, need + 1);
    if (buf) {
        jw_init(&g.w, buf, need + 1);
        gen_part(&g, part);
    }
    if (!buf || g.oom || g.w.len != need) {
        if (buf) g.a.free(g.a.opaque, buf);
        gen_free(&g);
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "out of memory generating the codec");
        return WK_ERROR;
    }
    memcpy(out->dst + out->pos, buf, need);
    out->pos += need;
    g.a.free(g.a.opaque, buf);
    gen_free(&g);
    return WK_DONE;
}
