/* ReMAT, link, channel and memory-card drivers. */
#include "monet_hal.h"
#include "remat.h"

void bfct_write(uint32_t index, const struct bfct_entry *e) {
    uint32_t v = (e->enable ? BFCT_ENABLE : 0) | (e->read ? BFCT_READ : 0) | (e->write ? BFCT_WRITE : 0) |
                 ((e->target & 3) << BFCT_TARGET_SHIFT) | (e->base << BFCT_BASE_SHIFT);
    hal_write32(CSR_REMOTE_REMAT_BFCT_INDEX_ADDR, index);
    hal_write32(CSR_REMOTE_REMAT_BFCT_ENTRY_ADDR, v);
    hal_write32(CSR_REMOTE_REMAT_BFCT_COMMIT_ADDR, 1);
}

void bfct_read(uint32_t index, struct bfct_entry *e) {
    hal_write32(CSR_REMOTE_REMAT_BFCT_INDEX_ADDR, index);
    uint32_t v = hal_read32(CSR_REMOTE_REMAT_BFCT_READBACK_ADDR);
    e->enable = !!(v & BFCT_ENABLE);
    e->read   = !!(v & BFCT_READ);
    e->write  = !!(v & BFCT_WRITE);
    e->target = (v >> BFCT_TARGET_SHIFT) & 3;
    e->base   = v >> BFCT_BASE_SHIFT;
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

int link_set(const struct link_settings *s) {
    uint32_t log2;
    switch (s->lanes) {
    case 1: log2 = 0; break;
    case 2: log2 = 1; break;
    case 4: log2 = 2; break;
    case 8: log2 = 3; break;
    default: return -1;
    }
    if (s->max_units < 1 || s->max_units > 8) return -2;
    uint32_t framing = s->max_units | (s->pairing ? 1u << 4 : 0);
    hal_write32(CSR_REMOTE_LINK_C_FRAMING_ADDR, framing);
    hal_write32(CSR_REMOTE_LINK_M_FRAMING_ADDR, framing);
    hal_write32(CSR_REMOTE_REMAT_ISSUE_RATE_ADDR, s->issue_rate);
    hal_write32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR, log2);
    hal_write32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR, s->block_ps);
    hal_write32(CSR_REMOTE_CHANNEL_DELAY_ADDR, s->delay);
    /* 64-bit CSR: lane 7 in the most significant byte; written as two words, high first. */
    uint32_t hi = 0, lo = 0;
    for (int i = 0; i < 4; i++) lo |= (uint32_t)s->skew[i] << (8*i);
    for (int i = 0; i < 4; i++) hi |= (uint32_t)s->skew[4 + i] << (8*i);
    hal_write32(CSR_REMOTE_CHANNEL_SKEW_ADDR, hi);
    hal_write32(CSR_REMOTE_CHANNEL_SKEW_ADDR + 4, lo);
    return 0;
}

void link_get(struct link_settings *s) {
    s->lanes    = 1u << hal_read32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR);
    s->block_ps = hal_read32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR);
    s->delay    = hal_read32(CSR_REMOTE_CHANNEL_DELAY_ADDR);
    uint32_t hi = hal_read32(CSR_REMOTE_CHANNEL_SKEW_ADDR), lo = hal_read32(CSR_REMOTE_CHANNEL_SKEW_ADDR + 4);
    for (int i = 0; i < 4; i++) { s->skew[i] = lo >> (8*i); s->skew[4 + i] = hi >> (8*i); }
    uint32_t framing = hal_read32(CSR_REMOTE_LINK_C_FRAMING_ADDR);
    s->max_units  = framing & 0xf;
    s->pairing    = (framing >> 4) & 1;
    s->issue_rate = hal_read32(CSR_REMOTE_REMAT_ISSUE_RATE_ADDR);
}

void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a) {
    *frames_c = hal_read32(CSR_REMOTE_LINK_C_FRAMES_ADDR);
    *crc_c    = hal_read32(CSR_REMOTE_LINK_C_CRC_ERRORS_ADDR);
    *frames_m = hal_read32(CSR_REMOTE_LINK_M_FRAMES_ADDR);
    *crc_m    = hal_read32(CSR_REMOTE_LINK_M_CRC_ERRORS_ADDR);
    *busy_a2b = hal_read32(CSR_REMOTE_CHANNEL_BUSY_A2B_ADDR);
    *busy_b2a = hal_read32(CSR_REMOTE_CHANNEL_BUSY_B2A_ADDR);
}

void memcard_set_latency(uint32_t cycles) { hal_write32(CSR_REMOTE_MEMCARD_LATENCY_ADDR, cycles); }
uint32_t memcard_latency(void) { return hal_read32(CSR_REMOTE_MEMCARD_LATENCY_ADDR); }
