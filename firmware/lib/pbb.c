/* Programmable benchmark block driver. */
#include "monet_hal.h"
#include "pbb.h"

void pbb_configure(const struct pbb_settings *s) {
    hal_write32(CSR_PBB_MODE_ADDR, s->mode);
    hal_write32(CSR_PBB_READ_RATIO_ADDR, s->read_ratio);
    hal_write32(CSR_PBB_PATTERN_ADDR, s->pattern);
    hal_write32(CSR_PBB_BASE_ADDR, s->base);
    hal_write32(CSR_PBB_SPAN_ADDR, s->span);
    hal_write32(CSR_PBB_STRIDE_ADDR, s->stride);
    hal_write32(CSR_PBB_COUNT_ADDR, s->count);
    hal_write32(CSR_PBB_OUTSTANDING_ADDR, s->outstanding);
    hal_write32(CSR_PBB_SEED_ADDR, s->seed);
    hal_write32(CSR_PBB_CHECK_ADDR, s->check);
    hal_write32(CSR_PBB_SHIFT_ADDR, s->shift);
    hal_write32(CSR_PBB_SIZE_LOG2_ADDR, s->size_log2);
    hal_write32(CSR_PBB_MIX_EVEN_ADDR, s->mix_even);
#ifdef CSR_PBB_DIRECT_ADDR
    hal_write32(CSR_PBB_DIRECT_ADDR, s->direct);
#endif
}

void pbb_go(void) { hal_write32(CSR_PBB_START_ADDR, 1); }

void pbb_start(const struct pbb_settings *s) {
    pbb_configure(s);
    pbb_go();
}

int pbb_busy(void) { return hal_read32(CSR_PBB_BUSY_ADDR) & 1; }

void pbb_result(struct pbb_result *r) {
    r->cycles     = hal_read64(CSR_PBB_CYCLES_ADDR);
    r->lat_sum    = hal_read64(CSR_PBB_LAT_SUM_ADDR);
    r->completed  = hal_read32(CSR_PBB_COMPLETED_ADDR);
    r->errors     = hal_read32(CSR_PBB_ERRORS_ADDR);
    r->bus_errors = hal_read32(CSR_PBB_BUS_ERRORS_ADDR);
    r->lat_min    = hal_read32(CSR_PBB_LAT_MIN_ADDR);
    r->lat_max    = hal_read32(CSR_PBB_LAT_MAX_ADDR);
    for (uint32_t i = 0; i < PBB_BUCKETS; i++) {
        hal_write32(CSR_PBB_HIST_INDEX_ADDR, i);
        r->hist[i] = hal_read32(CSR_PBB_HIST_VALUE_ADDR);
    }
}
