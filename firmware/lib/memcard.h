/* Memory card driver: its memory (SRAM, DDR4 or HMC), extra access latency (a modelled streamer) and counters. */
#ifndef MONET_MEMCARD_H
#define MONET_MEMCARD_H

#include <stdint.h>
#include <generated/csr.h>
#include <generated/soc.h>   /* MEMCARD_MEMORY_*, from litex/cores/memcard/codes.py */

/* The memory card is in this register map (the sim; a board's memory card), not on another board. */
#ifdef CSR_REMOTE_MEMCARD_MEMORY_ADDR
#define MEMCARD_IN_MAP 1
#endif


struct memcard_counters {
    uint32_t reads, writes, errors;
    uint32_t poisoned;                     /* reads of the poisoned line answered with an error (of errors) */
    uint32_t service_sum, service_count;   /* the memory's share of each answer, cycles */
    uint32_t refreshes;                    /* DDR4 refresh commands */
    uint32_t refresh_waits;                /* requests that arrived while the DDR4 was held for a refresh */
};

void memcard_set_latency(uint32_t cycles);
uint32_t memcard_latency(void);
int memcard_has_memory(uint32_t memory);   /* the card was built with it */
void memcard_set_memory(uint32_t memory);
uint32_t memcard_memory(void);
void memcard_counters(struct memcard_counters *c);
/* Fault injection: reads of one line (byte address / 64) answered with an error, as the memory would answer
 * an uncorrectable word (enable 0: none). */
void memcard_set_poison(uint32_t enable, uint32_t line);
uint32_t memcard_poison(uint32_t *line);

#endif
