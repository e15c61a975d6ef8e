/* LD_PRELOAD shim for reproducing thread-start races in fuzz targets: every new thread sleeps
 * DELAY_MS milliseconds (default 50) before its start routine runs, as when a loaded or brand-new
 * machine schedules it late. It reproduced the intermittent colloq_binary allocation-check failure
 * of issue 12 (libFuzzer's RSS thread allocating at its start inside a measured call; see
 * docs/fuzzing.md, "Allocation checks and other threads"). Not built by CMake (it must not be
 * sanitizer-instrumented):
 *
 *   gcc -O2 -shared -fPIC fuzz/tools/slow_thread_start.c -o /tmp/slow_thread_start.so -ldl \
 *       -Wl,--version-script=<(printf 'GLIBC_2.34 { global: pthread_create; };\nGLIBC_2.2.5 { };\n')
 *   DELAY_MS=6 LD_PRELOAD=/tmp/slow_thread_start.so build-fuzz/fuzz/fuzz_colloq_binary -runs=150 C
 *
 * (the version script gives the shim's pthread_create the version ASan's interceptor looks up).
 * SHIM_SAY=1 prints a line when a delayed thread starts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct tramp {
    void *(*fn)(void *);
    void *arg;
};

static void *run(void *p)
{
    struct tramp t = *(struct tramp *)p;
    const char *e = getenv("DELAY_MS");
    long ms = e ? atol(e) : 50;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (getenv("SHIM_SAY")) (void)!write(2, "slow_thread_start: thread starts\n", 33);
    return t.fn(t.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    static struct tramp slots[64]; /* a thread copies its slot first thing: 64 in flight */
    static unsigned n;
    struct tramp *t = &slots[__atomic_fetch_add(&n, 1, __ATOMIC_RELAXED) % 64];
    t->fn = fn;
    t->arg = arg;
    return real(th, a, run, t);
}
