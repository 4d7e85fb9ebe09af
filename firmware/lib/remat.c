/* ReMAT driver. */
#include "monet_hal.h"
#include "remat.h"

void bfct_write(uint32_t index, const struct bfct_entry *e) {
    uint32_t v = FIELD_PUT(REMOTE_REMAT_BFCT_ENTRY_ENABLE, e->enable != 0) |
                 FIELD_PUT(REMOTE_REMAT_BFCT_ENTRY_READ, e->read != 0) |
                 FIELD_PUT(REMOTE_REMAT_BFCT_ENTRY_WRITE, e->write != 0) |
                 FIELD_PUT(REMOTE_REMAT_BFCT_ENTRY_TARGET, e->target) |
                 FIELD_PUT(REMOTE_REMAT_BFCT_ENTRY_BASE, e->base);
    hal_write32(CSR_REMOTE_REMAT_BFCT_INDEX_ADDR, index);
    hal_write32(CSR_REMOTE_REMAT_BFCT_ENTRY_ADDR, v);
    hal_write32(CSR_REMOTE_REMAT_BFCT_COMMIT_ADDR, 1);
}

void bfct_read(uint32_t index, struct bfct_entry *e) {
    hal_write32(CSR_REMOTE_REMAT_BFCT_INDEX_ADDR, index);
    uint32_t v = hal_read32(CSR_REMOTE_REMAT_BFCT_READBACK_ADDR);
    e->enable = FIELD_GET(REMOTE_REMAT_BFCT_READBACK_ENABLE, v);
    e->read   = FIELD_GET(REMOTE_REMAT_BFCT_READBACK_READ, v);
    e->write  = FIELD_GET(REMOTE_REMAT_BFCT_READBACK_WRITE, v);
    e->target = FIELD_GET(REMOTE_REMAT_BFCT_READBACK_TARGET, v);
    e->base   = FIELD_GET(REMOTE_REMAT_BFCT_READBACK_BASE, v);
}

void remat_faults(struct remat_faults *f) {
    f->count = hal_read32(CSR_REMOTE_REMAT_FAULTS_ADDR);
    f->addr  = hal_read32(CSR_REMOTE_REMAT_FAULT_ADDR_ADDR);
    f->kind  = hal_read32(CSR_REMOTE_REMAT_FAULT_KIND_ADDR);
}

void remat_latency(struct remat_latency *l) {
    l->last  = hal_read32(CSR_REMOTE_REMAT_LAT_LAST_ADDR);
    l->min   = hal_read32(CSR_REMOTE_REMAT_LAT_MIN_ADDR);
    l->max   = hal_read32(CSR_REMOTE_REMAT_LAT_MAX_ADDR);
    l->count = hal_read32(CSR_REMOTE_REMAT_LAT_COUNT_ADDR);
    l->sum   = hal_read64(CSR_REMOTE_REMAT_LAT_SUM_ADDR);
}

void remat_latency_clear(void) { hal_write32(CSR_REMOTE_REMAT_LAT_CLEAR_ADDR, 1); }

uint32_t remat_requests(void) { return hal_read32(CSR_REMOTE_REMAT_REQUESTS_ADDR); }

#ifdef CSR_REMOTE_REMAT_HOLD_ADDR
void remat_hold(uint32_t on) { hal_write32(CSR_REMOTE_REMAT_HOLD_ADDR, on != 0); }
int remat_drained(void) { return hal_read32(CSR_REMOTE_REMAT_DRAINED_ADDR); }
#endif

void remat_set_request_timeout(uint32_t cycles) { hal_write32(CSR_REMOTE_REMAT_TIMEOUT_ADDR, cycles); }
uint32_t remat_request_timeout(void) { return hal_read32(CSR_REMOTE_REMAT_TIMEOUT_ADDR); }
uint32_t remat_request_timeouts(void) { return hal_read32(CSR_REMOTE_REMAT_TIMEOUTS_ADDR); }
