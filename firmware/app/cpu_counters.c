/* The 64-bit counter read (cpu_counters.h), kept out of line at a fixed place in ROM. */
#include "cpu_counters.h"

TIMED_CODE(counters) uint64_t rd64(int instret) {
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
