/* wirekit host: the store index (include/wirekit/host.h, "Store index"): every stored Blob's hash,
 * data length and sequence number, in memory.
 *
 * Entries live in insertion order (their sequence number is their position + 1); an open-
 * addressing table finds one by hash (the hash bytes are uniform, so its first 8 bytes are the
 * slot); `order` lists (hash, entry) pairs sorted by hash for the advertisement's ordered walk.
 * Additions go to the end of `order` unsorted and are merged in (sort the new tail, merge with
 * the sorted part: O(n + k log k)) the next time an ordered walk needs them. */
#include <wirekit/host.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    uint8_t h[32];
    uint64_t len;
} entry;

typedef struct ord {
    uint8_t h[32];
    uint32_t idx;
} ord;

struct wk_store_index {
    entry *e;
    size_t n, cap;
    uint32_t *table;  /* entry index + 1; 0 = empty */
    size_t tcap;      /* power of two */
    ord *order;       /* [0, sorted) sorted by hash; [sorted, n) not yet */
    size_t sorted;
    ord *scratch;     /* merge buffer, cap entries */
};

static size_t slot_of(const uint8_t h[32], size_t tcap)
{
    uint64_t v;
    memcpy(&v, h, 8);
    return (size_t)(v & (tcap - 1));
}

static int ord_cmp(const void *a, const void *b) { return memcmp(a, b, 32); }

wk_store_index *wk_store_index_create(wk_error *err)
{
    wk_store_index *x = calloc(1, sizeof *x);
    if (!x) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "store index");
        return NULL;
    }
    return x;
}

void wk_store_index_free(wk_store_index *x)
{
    if (!x) return;
    free(x->e);
    free(x->table);
    free(x->order);
    free(x->scratch);
    free(x);
}

static const entry *find(const wk_store_index *x, const uint8_t h[32], size_t *slot)
{
    if (!x->tcap) return NULL;
    for (size_t i = slot_of(h, x->tcap);; i = (i + 1) & (x->tcap - 1)) {
        uint32_t v = x->table[i];
        if (!v) {
            if (slot) *slot = i;
            return NULL;
        }
        if (memcmp(x->e[v - 1].h, h, 32) == 0) return &x->e[v - 1];
    }
}

static bool grow(wk_store_index *x)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        if (cap > UINT32_MAX - 1) return false;
        entry *e = realloc(x->e, cap * sizeof *e);
        if (!e) return false;
        x->e = e;
        ord *o = realloc(x->order, cap * sizeof *o);
        if (!o) return false;
        x->order = o;
        ord *s = realloc(x->scratch, cap * sizeof *s);
        if (!s) return false;
        x->scratch = s;
        x->cap = cap;
    }
    if ((x->n + 1) * 2 > x->tcap) {
        size_t tcap = x->tcap ? x->tcap * 2 : 512;
        uint32_t *t = calloc(tcap, sizeof *t);
        if (!t) return false;
        for (size_t k = 0; k < x->n; k++) {
            size_t i = slot_of(x->e[k].h, tcap);
            while (t[i]) i = (i + 1) & (tcap - 1);
            t[i] = (uint32_t)k + 1;
        }
        free(x->table);
        x->table = t;
        x->tcap = tcap;
    }
    return true;
}

bool wk_store_index_add(wk_store_index *x, const uint8_t hash[32], uint64_t len, bool *nomem)
{
    if (nomem) *nomem = false;
    if (find(x, hash, NULL)) return false;
    if (!grow(x)) {
        if (nomem) *nomem = true;
        return false;
    }
    size_t slot = 0;
    find(x, hash, &slot);
    entry *e = &x->e[x->n];
    memcpy(e->h, hash, 32);
    e->len = len;
    memcpy(x->order[x->n].h, hash, 32);
    x->order[x->n].idx = (uint32_t)x->n;
    x->table[slot] = (uint32_t)x->n + 1;
    x->n++;
    return true;
}

bool wk_store_index_has(const wk_store_index *x, const uint8_t hash[32], uint64_t *len, uint64_t *seq)
{
    const entry *e = find(x, hash, NULL);
    if (!e) return false;
    if (len) *len = e->len;
    if (seq) *seq = (uint64_t)(e - x->e) + 1;
    return true;
}

/* Merges the unsorted tail of `order` into the sorted part. */
static void merge(wk_store_index *x)
{
    if (x->sorted == x->n) return;
    size_t a = x->sorted, k = x->n - a;
    qsort(x->order + a, k, sizeof *x->order, ord_cmp);
    if (a && memcmp(x->order[a - 1].h, x->order[a].h, 32) > 0) {
        size_t i = 0, j = a, o = 0;
        while (i < a && j < x->n)
            x->scratch[o++] = memcmp(x->order[i].h, x->order[j].h, 32) <= 0 ? x->order[i++] : x->order[j++];
        while (i < a) x->scratch[o++] = x->order[i++];
        while (j < x->n) x->scratch[o++] = x->order[j++];
        memcpy(x->order, x->scratch, x->n * sizeof *x->order);
    }
    x->sorted = x->n;
}

bool wk_store_index_next(wk_store_index *x, const uint8_t *after, uint64_t max_seq, uint8_t out[32])
{
    merge(x);
    size_t lo = 0, hi = x->n;
    if (after) { /* first position with hash > after */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (memcmp(x->order[mid].h, after, 32) <= 0) lo = mid + 1;
            else hi = mid;
        }
    }
    for (size_t i = lo; i < x->n; i++) {
        if ((uint64_t)x->order[i].idx + 1 <= max_seq) {
            memcpy(out, x->order[i].h, 32);
            return true;
        }
    }
    return false;
}

uint64_t wk_store_index_seq(const wk_store_index *x) { return x->n; }
size_t wk_store_index_count(const wk_store_index *x) { return x->n; }

wk_store_index *wk_store_index_load(wk_store *s, wk_error *err)
{
    wk_store_index *x = wk_store_index_create(err);
    if (!x) return NULL;
    uint8_t (*hs)[32] = NULL;
    size_t n = 0;
    if (wk_store_list(s, &hs, &n, err) != WK_OK) {
        wk_store_index_free(x);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t len = 0;
        if (wk_store_stat(s, hs[i], &len, NULL) != WK_OK) continue; /* vanished or not a Blob file */
        bool nomem = false;
        wk_store_index_add(x, hs[i], len, &nomem);
        if (nomem) {
            free(hs);
            wk_store_index_free(x);
            wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "store index of %zu Blobs", n);
            return NULL;
        }
    }
    free(hs);
    return x;
}

/* ---- the session's view ---- */
static bool ops_has(void *ctx, const uint8_t hash[32], uint64_t *len, uint64_t *seq)
{
    return wk_store_index_has(ctx, hash, len, seq);
}
static bool ops_next(void *ctx, const uint8_t *after, uint64_t max_seq, uint8_t out[32])
{
    return wk_store_index_next(ctx, after, max_seq, out);
}
static uint64_t ops_seq(void *ctx) { return wk_store_index_seq(ctx); }

wk_iltp_store_ops wk_store_index_ops(wk_store_index *x)
{
    wk_iltp_store_ops o = {x, ops_has, ops_next, ops_seq};
    return o;
}
