/* Allocation probe for checks of the form "this call allocates N times": it counts only the
 * allocations made on the calling thread while the probe is armed, and keeps the stack of every
 * allocation beyond the number allowed, so a failed check prints where the allocation came from.
 *
 * Why thread-local and armed: a process-wide counter also counts allocations of other threads.
 * libFuzzer starts its RSS-limit thread just before it runs the seed corpus, and under
 * AddressSanitizer that thread's start (AsanThread::Init -> GetThreadStackTopAndBottom ->
 * pthread_getattr_np) calls realloc and calloc. When the scheduler starts the thread a few
 * milliseconds late (a loaded or brand-new machine), those allocations land inside a measured
 * call of the main thread, and a process-wide count fails a check the code under test passes
 * (fuzz/colloq_binary.c:625 on a fresh Debian root; docs/fuzzing.md has the reproduction).
 *
 * Something must feed the probe: tests/wk_alloc_wrap.h (-Wl,--wrap=malloc,...) or the sanitizer
 * malloc hook of fuzz/alloc_hook.h, each calling wk_alloc_probe_note() for every allocation.
 *
 * Use:
 *     wk_alloc_probe_begin(0);            arm; allocations beyond 0 keep their stack
 *     measured_call();
 *     unsigned long n = wk_alloc_probe_end();    disarm; the allocations counted
 *     if (n != 0) wk_alloc_probe_report(stderr);  the stacks kept (at most WK_ALLOC_PROBE_SITES)
 *
 * Header-only: include it (through one of the feeders) in exactly one file of an executable. */
#ifndef WK_ALLOC_PROBE_H
#define WK_ALLOC_PROBE_H
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define WK_ALLOC_PROBE_SITES 4
#define WK_ALLOC_PROBE_DEPTH 40

/* Weak: the sanitizer runtime's symbolizer when present (file:line), else backtrace_symbols_fd. */
int __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out_buf, size_t out_buf_size)
    __attribute__((weak));

typedef struct wk_alloc_probe_site {
    const char *what; /* "malloc", "calloc", "realloc" */
    size_t size;
    unsigned long nth; /* 1 = the first allocation of the armed call */
    int depth;
    void *pc[WK_ALLOC_PROBE_DEPTH];
} wk_alloc_probe_site;

typedef struct wk_alloc_probe_state {
    int armed, busy, warm;
    unsigned long count, allowed;
    int sites;
    wk_alloc_probe_site site[WK_ALLOC_PROBE_SITES];
} wk_alloc_probe_state;

static _Thread_local wk_alloc_probe_state wk_alloc_probe;

/* A compiler barrier: GCC assumes malloc reads and writes no user memory, so without it the
 * stores that arm the probe sink past the measured call and the count read after it is folded. */
#define WK_ALLOC_PROBE_BARRIER() __asm__ __volatile__("" ::: "memory")

/* Called by the feeder for every allocation of the process, on the allocating thread; counts it
 * only when this thread's probe is armed. Never allocates. */
static void wk_alloc_probe_note(const char *what, size_t size)
{
    wk_alloc_probe_state *p = &wk_alloc_probe;
    if (!p->armed || p->busy) return;
    p->count++;
    if (p->count <= p->allowed || p->sites >= WK_ALLOC_PROBE_SITES) return;
    wk_alloc_probe_site *s = &p->site[p->sites++];
    s->what = what;
    s->size = size;
    s->nth = p->count;
    p->busy = 1; /* backtrace() must not count itself */
    s->depth = backtrace(s->pc, WK_ALLOC_PROBE_DEPTH);
    p->busy = 0;
}

/* Arms the probe of the calling thread with a zero count; allocations beyond `allowed` keep their
 * stack for wk_alloc_probe_report. */
static inline void wk_alloc_probe_begin(unsigned long allowed)
{
    wk_alloc_probe_state *p = &wk_alloc_probe;
    if (!p->warm) { /* backtrace() loads libgcc_s (and allocates) on its first call: do it now */
        void *pc[2];
        p->busy = 1;
        (void)backtrace(pc, 2);
        p->busy = 0;
        p->warm = 1;
    }
    p->count = 0;
    p->allowed = allowed;
    p->sites = 0;
    p->armed = 1;
    WK_ALLOC_PROBE_BARRIER();
}

/* Disarms the probe; returns the allocations the calling thread made since wk_alloc_probe_begin. */
static inline unsigned long wk_alloc_probe_end(void)
{
    WK_ALLOC_PROBE_BARRIER();
    wk_alloc_probe.armed = 0;
    return wk_alloc_probe.count;
}

/* Writes the stacks kept by the last armed call to f: one block per allocation beyond the number
 * allowed (the first WK_ALLOC_PROBE_SITES of them). */
static inline void wk_alloc_probe_report(FILE *f)
{
    const wk_alloc_probe_state *p = &wk_alloc_probe;
    fprintf(f, "alloc probe: %lu allocation(s) on the measured thread, %lu allowed\n", p->count,
            p->allowed);
    for (int i = 0; i < p->sites; i++) {
        const wk_alloc_probe_site *s = &p->site[i];
        fprintf(f, "allocation %lu (%s of %zu bytes), stack:\n", s->nth, s->what, s->size);
        fflush(f);
        if (__sanitizer_symbolize_pc) {
            for (int k = 0; k < s->depth; k++) {
                char line[512];
                /* a return address: the call is the instruction before it */
                __sanitizer_symbolize_pc((char *)s->pc[k] - 1, "%p %F %L", line, sizeof line);
                fprintf(f, "    #%d %s\n", k, line);
            }
        } else {
            backtrace_symbols_fd(s->pc, s->depth, fileno(f));
            fprintf(f, "    (EXE(+0xOFFSET): addr2line -f -i -e EXE 0xOFFSET names the line)\n");
        }
    }
    fflush(f);
}
#endif
