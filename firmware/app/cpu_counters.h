/* The soft CPU's cycle and retired-instruction counters (RISC-V mcycle / minstret). */
#ifndef MONET_CPU_COUNTERS_H
#define MONET_CPU_COUNTERS_H

#include <stdint.h>

static inline uint32_t rdcycle32(void) { uint32_t v; __asm__ volatile("csrr %0, mcycle" : "=r"(v)); return v; }

/* 64-bit read of mcycle (instret = 0) or minstret (instret = 1); rereads when the high half moved. */
static inline uint64_t rd64(int instret) {
    uint32_t hi, lo, hi2;
    do {
        if (instret) {
            __asm__ volatile("csrr %0, minstreth" : "=r"(hi));
            __asm__ volatile("csrr %0, minstret"  : "=r"(lo));
            __asm__ volatile("csrr %0, minstreth" : "=r"(hi2));
        } else {
            __asm__ volatile("csrr %0, mcycleh" : "=r"(hi));
            __asm__ volatile("csrr %0, mcycle"  : "=r"(lo));
            __asm__ volatile("csrr %0, mcycleh" : "=r"(hi2));
        }
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

#endif
