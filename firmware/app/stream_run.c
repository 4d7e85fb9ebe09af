/* STREAM on the soft CPU (see stream_run.h). rv32im has no FPU: the element type is a 32-bit unsigned
 * word, whose wrapping arithmetic validates exactly. Each kernel is timed alone with mcycle; mcycle and
 * minstret over the whole run give the IPC. */
#include "cpu_counters.h"
#include "stream_run.h"

#define STREAM_TYPE uint32_t
#define STREAM_EXACT 1
#include "stream_kernels.h"

/* Array spacing: whole lines plus a 128-byte stagger, so that a, b and c never share sets of the data
 * cache (4 KiB, one way: arrays a multiple of 4 KiB apart would evict each other on every element). */
static uint32_t array_bytes(uint32_t n) { return ((n * STREAM_WORD_BYTES + 63) & ~63u) + 128; }

uint32_t stream_footprint(uint32_t n) { return 3 * array_bytes(n); }

TIMED_CODE(stream) void stream_run(uintptr_t base, uint32_t n, uint32_t repetitions, int corrupt, struct stream_run *r)
{
    uint32_t *a = (uint32_t *)base;
    uint32_t *b = (uint32_t *)(base + array_bytes(n));
    uint32_t *c = (uint32_t *)(base + 2 * array_bytes(n));
    r->n = n;
    r->repetitions = repetitions;
    for (int k = 0; k < STREAM_KERNELS; k++) {
        r->min_cycles[k] = UINT64_MAX;
        r->max_cycles[k] = r->sum_cycles[k] = 0;
        r->bytes[k] = stream_kernel_arrays[k] * STREAM_WORD_BYTES * n;
    }
    stream_init(a, b, c, 0, n);
    const uint64_t c0 = rd64(0), i0 = rd64(1);
    for (uint32_t rep = 0; rep < repetitions; rep++) {
        for (int k = 0; k < STREAM_KERNELS; k++) {
            const uint64_t t0 = rd64(0);
            stream_kernel(k, a, b, c, 0, n);
            const uint64_t t = rd64(0) - t0;
            if (rep == 0) continue;
            r->sum_cycles[k] += t;
            if (t < r->min_cycles[k]) r->min_cycles[k] = t;
            if (t > r->max_cycles[k]) r->max_cycles[k] = t;
        }
    }
    r->cycles = rd64(0) - c0;
    r->instret = rd64(1) - i0;
    if (corrupt) a[n / 2] ^= 1;
    struct stream_check check;
    r->validates = stream_validate(a, b, c, n, repetitions, &check);
    for (int i = 0; i < 3; i++) r->bad[i] = check.bad[i];
}
