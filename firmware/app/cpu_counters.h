/* The soft CPU's cycle and retired-instruction counters (RISC-V mcycle / minstret). */
#ifndef MONET_CPU_COUNTERS_H
#define MONET_CPU_COUNTERS_H

#include <stdint.h>

/* Code whose cycles are measured is placed first in ROM, each piece at its own 64-byte boundary
 * (linker.ld), so that adding or moving any other code leaves its timing as it is: the instruction cache
 * (4 KiB, one way) and the branch predictor are indexed by address, and the compiler (with LTO) inlines
 * differently as the program changes (so timed code calls rd64 rather than inlining it). */
#define TIMED_CODE(piece) __attribute__((noinline, used, section(".text.timed." #piece)))

static inline uint32_t rdcycle32(void) { uint32_t v; __asm__ volatile("csrr %0, mcycle" : "=r"(v)); return v; }

/* 64-bit read of mcycle (instret = 0) or minstret (instret = 1); rereads when the high half moved.
 * One copy, placed with the timed code (cpu_counters.c). */
uint64_t rd64(int instret);

#endif
