/* ReMAT's combiner driver. */
#include <generated/csr.h>

#include "monet_hal.h"
#include "combiner.h"

#ifdef CSR_COMBINER_BASE   /* the sim's cacheable window */

void combiner_set_fetch_lines(uint32_t lines) { hal_write32(CSR_COMBINER_FETCH_LINES_ADDR, lines); }
uint32_t combiner_fetch_lines(void) { return hal_read32(CSR_COMBINER_FETCH_LINES_ADDR); }

int combiner_fence(uint32_t max_polls) {
    hal_write32(CSR_COMBINER_FENCE_ADDR, 1);
    for (uint32_t i = 0; i < max_polls; i++)
        if (hal_read32(CSR_COMBINER_IDLE_ADDR)) return 0;
    return -1;
}

void combiner_counters(struct combiner_counters *c) {
    c->read_hits    = hal_read32(CSR_COMBINER_READ_HITS_ADDR);
    c->fetches      = hal_read32(CSR_COMBINER_FETCHES_ADDR);
    c->write_lines  = hal_read32(CSR_COMBINER_WRITE_LINES_ADDR);
    c->write_words  = hal_read32(CSR_COMBINER_WRITE_WORDS_ADDR);
    c->write_errors = hal_read32(CSR_COMBINER_WRITE_ERRORS_ADDR);
}
#endif
