/* STREAM on the soft CPU: the four kernels of bench/stream over 32-bit words, timed with mcycle. */
#ifndef MONET_STREAM_RUN_H
#define MONET_STREAM_RUN_H

#include <stdint.h>

#define STREAM_WORD_BYTES 4

struct stream_run {
    uint32_t n, repetitions;
    uint32_t bytes[4];                                     /* per kernel: arrays touched x n x 4 */
    uint64_t min_cycles[4], max_cycles[4], sum_cycles[4];  /* per kernel, first repetition excluded */
    uint64_t cycles, instret;                              /* all repetitions of all kernels */
    uint32_t bad[3];                                       /* elements of a, b, c that fail validation */
    int validates;
};

/* Runs STREAM on three arrays of n words from `base` (a, then b, then c, 64-byte aligned and
 * staggered by 128 bytes).
 * `corrupt` overwrites one element of a before validation (to show that validation catches it). */
void stream_run(uintptr_t base, uint32_t n, uint32_t repetitions, int corrupt, struct stream_run *r);

/* Bytes the three arrays take from `base`. */
uint32_t stream_footprint(uint32_t n);

#endif
