/* The remote window as the soft CPU sees it: uncached and cacheable pointers, and seeded data patterns for
 * the commands that access it from the CPU (firmware/app only: monet-ctl reaches CSRs, not the window). */
#ifndef MONET_WINDOW_H
#define MONET_WINDOW_H

#include <stdint.h>
#include <generated/mem.h>
#include <system.h>

#include "combiner.h"

/* Data pattern: xorshift32, seeded. */
static inline uint32_t pattern_seed(uint32_t seed) { uint32_t s = seed ^ 0x9e3779b9u; return s ? s : 1; }
static inline uint32_t pattern_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *s = x;
}

static inline volatile uint32_t *remote(uint32_t offset) { return (volatile uint32_t *)(REMOTE_BASE + offset); }

/* The same window, cacheable: through the data cache and ReMAT's combiner (fence before other paths look). */
static inline volatile uint32_t *remote_cached(uint32_t offset) {
    return (volatile uint32_t *)(REMOTE_CACHED_BASE + offset);
}

/* Before reading through the cacheable window what other paths wrote: nothing left in the data cache or the
 * combiner. After writing through it, combiner_fence puts the words in remote memory; when it does not
 * end, commands answer FENCE_STUCK. */
static inline void cached_window_clean(void) { flush_cpu_dcache(); combiner_fence(COMBINER_FENCE_POLLS); }

#endif
