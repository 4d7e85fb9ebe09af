/* Memory card driver. */
#include <generated/csr.h>

#include "monet_hal.h"
#include "memcard.h"

#ifdef MEMCARD_IN_MAP   /* a register map with the memory card (the sim, a memory card) */

void memcard_set_latency(uint32_t cycles) { hal_write32(CSR_REMOTE_MEMCARD_LATENCY_ADDR, cycles); }
uint32_t memcard_latency(void) { return hal_read32(CSR_REMOTE_MEMCARD_LATENCY_ADDR); }

int memcard_has_memory(uint32_t memory) {
    switch (memory) {
    case MEMCARD_MEMORY_SRAM: return 1;
#ifdef CSR_REMOTE_MEMCARD_REFRESHES_ADDR   /* the card was built with DDR4 */
    case MEMCARD_MEMORY_DDR4: return 1;
#endif
#ifdef CSR_REMOTE_MEMCARD_HMC_FLIT_PS_ADDR /* ... with an HMC */
    case MEMCARD_MEMORY_HMC: return 1;
#endif
    default: return 0;
    }
}

void memcard_set_memory(uint32_t memory) { hal_write32(CSR_REMOTE_MEMCARD_MEMORY_ADDR, memory); }

uint32_t memcard_memory(void) { return hal_read32(CSR_REMOTE_MEMCARD_MEMORY_ADDR); }

void memcard_set_poison(uint32_t enable, uint32_t line) {
    hal_write32(CSR_REMOTE_MEMCARD_POISON_LINE_ADDR, line);
    hal_write32(CSR_REMOTE_MEMCARD_POISON_ADDR, enable != 0);
}

uint32_t memcard_poison(uint32_t *line) {
    *line = hal_read32(CSR_REMOTE_MEMCARD_POISON_LINE_ADDR);
    return hal_read32(CSR_REMOTE_MEMCARD_POISON_ADDR);
}

void memcard_counters(struct memcard_counters *c) {
    c->reads         = hal_read32(CSR_REMOTE_MEMCARD_READS_ADDR);
    c->writes        = hal_read32(CSR_REMOTE_MEMCARD_WRITES_ADDR);
    c->errors        = hal_read32(CSR_REMOTE_MEMCARD_ERRORS_ADDR);
    c->poisoned      = hal_read32(CSR_REMOTE_MEMCARD_POISONED_ADDR);
    c->service_sum   = hal_read32(CSR_REMOTE_MEMCARD_SERVICE_SUM_ADDR);
    c->service_count = hal_read32(CSR_REMOTE_MEMCARD_SERVICE_COUNT_ADDR);
#ifdef CSR_REMOTE_MEMCARD_REFRESHES_ADDR
    c->refreshes     = hal_read32(CSR_REMOTE_MEMCARD_REFRESHES_ADDR);
    c->refresh_waits = hal_read32(CSR_REMOTE_MEMCARD_REFRESH_WAITS_ADDR);
#else
    c->refreshes     = 0;
    c->refresh_waits = 0;
#endif
}
#endif
