/* MONet-open STREAM for Linux and the host: Copy, Scale, Add and Triad over three arrays, threaded with
 * pthreads, timed best-of-repetitions, validated, printed in STREAM's report format (the lines that
 * tools parse: "Function    Best Rate MB/s ...", one line per kernel, "Solution Validates").
 *
 *   stream [-n ELEMENTS] [-r REPETITIONS] [-t THREADS] [--corrupt]
 *
 * Memory placement is the caller's: run it under `numactl --membind=N` to measure a NUMA node. Each
 * thread first touches its own slice, so pages land where that thread's policy puts them.
 * --corrupt overwrites one element of a[] after the timed runs: validation must then fail (exit 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream_kernels.h"

#define DEFAULT_ELEMENTS 10000000UL   /* as the MONet paper ran it: 3 x 10M doubles, 228.9 MiB */
#define DEFAULT_REPETITIONS 10

struct shared {
    STREAM_TYPE *a, *b, *c;
    size_t n;
    unsigned threads, repetitions;
    pthread_barrier_t barrier;
    double times[STREAM_KERNELS][1024];
};

struct worker {
    struct shared *s;
    unsigned id;
    pthread_t thread;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every thread runs every kernel on its slice; thread 0 times each kernel between two barriers. */
static void *work(void *arg)
{
    struct worker *w = arg;
    struct shared *s = w->s;
    const size_t lo = s->n * w->id / s->threads, hi = s->n * (w->id + 1) / s->threads;
    stream_init(s->a, s->b, s->c, lo, hi);
    for (unsigned k = 0; k < s->repetitions; k++) {
        for (int kernel = 0; kernel < STREAM_KERNELS; kernel++) {
            pthread_barrier_wait(&s->barrier);
            const double t0 = now();
            stream_kernel(kernel, s->a, s->b, s->c, lo, hi);
            pthread_barrier_wait(&s->barrier);
            if (w->id == 0) s->times[kernel][k] = now() - t0;
        }
    }
    return NULL;
}

static int usage(const char *bad)
{
    if (bad) fprintf(stderr, "stream: %s\n", bad);
    fprintf(stderr, "usage: stream [-n ELEMENTS >= 1000] [-r REPETITIONS 2..1024] [-t THREADS 1..256] "
                    "[--corrupt]\n");
    return 2;
}

static int parse_count(const char *text, unsigned long low, unsigned long high, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 0);
    if (errno || end == text || *end || v < low || v > high) return -1;
    *out = v;
    return 0;
}

static STREAM_TYPE *array(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n * sizeof(STREAM_TYPE))) return NULL;
    return p;
}

int main(int argc, char **argv)
{
    static struct shared s;
    unsigned long n = DEFAULT_ELEMENTS, repetitions = DEFAULT_REPETITIONS, threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (unsigned long)cpus : 1;
    int corrupt = 0;
    char msg[160];
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        unsigned long *dst = NULL, low = 1, high = 1;
        if (!strcmp(opt, "--corrupt")) { corrupt = 1; continue; }
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) { usage(NULL); return 0; }
        if (!strcmp(opt, "-n")) { dst = &n; low = 1000; high = 1UL << 34; }
        else if (!strcmp(opt, "-r")) { dst = &repetitions; low = 2; high = 1024; }
        else if (!strcmp(opt, "-t")) { dst = &threads; low = 1; high = 256; }
        if (!dst) {
            snprintf(msg, sizeof msg, "unknown option %s", opt);
            return usage(msg);
        }
        if (i + 1 >= argc || parse_count(argv[i + 1], low, high, dst)) {
            snprintf(msg, sizeof msg, "%s %s is not accepted; accepted: %lu to %lu", opt,
                     i + 1 < argc ? argv[i + 1] : "(missing)", low, high);
            return usage(msg);
        }
        i++;
    }
    s.n = n;
    s.repetitions = (unsigned)repetitions;
    s.threads = (unsigned)(threads < n ? threads : n);
    s.a = array(n);
    s.b = array(n);
    s.c = array(n);
    if (!s.a || !s.b || !s.c) {
        fprintf(stderr, "stream: cannot allocate 3 x %lu elements (%.1f MiB)\n", n,
                3.0 * n * sizeof(STREAM_TYPE) / 1048576.0);
        return 3;
    }
    const double mib = n * sizeof(STREAM_TYPE) / 1048576.0;
    printf("-------------------------------------------------------------\n");
    printf("MONet-open STREAM (bench/stream): STREAM's kernels, rules and report format\n");
    printf("-------------------------------------------------------------\n");
    printf("This system uses %zu bytes per array element.\n", sizeof(STREAM_TYPE));
    printf("Array size = %lu (elements), Offset = 0 (elements)\n", n);
    printf("Memory per array = %.1f MiB (= %.1f GiB).\n", mib, mib / 1024);
    printf("Total memory required = %.1f MiB (= %.1f GiB).\n", 3 * mib, 3 * mib / 1024);
    printf("Each kernel will be executed %u times.\n", s.repetitions);
    printf(" The *best* time for each kernel (excluding the first iteration)\n");
    printf(" will be used to compute the reported bandwidth.\n");
    printf("Number of Threads requested = %u\n", s.threads);
    printf("Number of Threads counted = %u\n", s.threads);
    printf("-------------------------------------------------------------\n");
    fflush(stdout);

    pthread_barrier_init(&s.barrier, NULL, s.threads);
    struct worker *workers = calloc(s.threads, sizeof *workers);
    for (unsigned t = 0; t < s.threads; t++) {
        workers[t].s = &s;
        workers[t].id = t;
        if (t && pthread_create(&workers[t].thread, NULL, work, &workers[t])) {
            fprintf(stderr, "stream: cannot start thread %u of %u\n", t, s.threads);
            return 3;
        }
    }
    work(&workers[0]);
    for (unsigned t = 1; t < s.threads; t++) pthread_join(workers[t].thread, NULL);

    printf("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
    for (int kernel = 0; kernel < STREAM_KERNELS; kernel++) {
        double min = 1e30, max = 0, sum = 0;
        for (unsigned k = 1; k < s.repetitions; k++) {
            const double t = s.times[kernel][k];
            sum += t;
            if (t < min) min = t;
            if (t > max) max = t;
        }
        const double bytes = (double)stream_kernel_arrays[kernel] * sizeof(STREAM_TYPE) * n;
        char name[16];
        snprintf(name, sizeof name, "%s:", stream_kernel_names[kernel]);
        printf("%-8s%14.1f  %11.6f  %11.6f  %11.6f\n", name, 1e-6 * bytes / min, sum / (s.repetitions - 1),
               min, max);
    }
    printf("-------------------------------------------------------------\n");

    if (corrupt) s.a[n / 2] = -s.a[n / 2] - 1;
    struct stream_check check;
    stream_validate(s.a, s.b, s.c, n, s.repetitions, &check);
    if (check.validates) {
        printf("Solution Validates: avg error less than %e on all three arrays\n", STREAM_EPSILON);
    } else {
        for (int i = 0; i < 3; i++) {
            if (!check.bad[i] && check.rel_error[i] <= STREAM_EPSILON) continue;
            printf("Failed Validation on array %c[], AvgRelAbsErr > epsilon (%e)\n", "abc"[i], STREAM_EPSILON);
            printf("     Expected Value: %e, AvgRelAbsErr: %e\n", (double)check.expected[i], check.rel_error[i]);
            printf("     For array %c[], %lu errors were found.\n", "abc"[i], check.bad[i]);
        }
    }
    printf("-------------------------------------------------------------\n");
    return check.validates ? 0 : 1;
}
