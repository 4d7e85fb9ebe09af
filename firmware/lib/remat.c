/* ReMAT, link, channel and memory-card drivers. */
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

void remat_set_request_timeout(uint32_t cycles) { hal_write32(CSR_REMOTE_REMAT_TIMEOUT_ADDR, cycles); }
uint32_t remat_request_timeout(void) { return hal_read32(CSR_REMOTE_REMAT_TIMEOUT_ADDR); }
uint32_t remat_request_timeouts(void) { return hal_read32(CSR_REMOTE_REMAT_TIMEOUTS_ADDR); }

/* The channel's per-lane skew fields, lane 0 first (one 64-bit CSR). */
static const uint8_t skew_offset[8] = {
    CSR_REMOTE_CHANNEL_SKEW_LANE0_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE1_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE2_OFFSET,
    CSR_REMOTE_CHANNEL_SKEW_LANE3_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE4_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE5_OFFSET,
    CSR_REMOTE_CHANNEL_SKEW_LANE6_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE7_OFFSET};
#define SKEW_MASK ((1u << CSR_REMOTE_CHANNEL_SKEW_LANE0_SIZE) - 1)

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
    hal_write32(CSR_REMOTE_LINK_C_FRAMING_ADDR, FIELD_PUT(REMOTE_LINK_C_FRAMING_MAX_UNITS, s->max_units) |
                                                FIELD_PUT(REMOTE_LINK_C_FRAMING_PAIRING, s->pairing != 0));
    hal_write32(CSR_REMOTE_LINK_M_FRAMING_ADDR, FIELD_PUT(REMOTE_LINK_M_FRAMING_MAX_UNITS, s->max_units) |
                                                FIELD_PUT(REMOTE_LINK_M_FRAMING_PAIRING, s->pairing != 0));
    hal_write32(CSR_REMOTE_REMAT_ISSUE_RATE_ADDR, s->issue_rate);
    hal_write32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR, log2);
    hal_write32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR, s->block_ps);
    hal_write32(CSR_REMOTE_CHANNEL_DELAY_ADDR, s->delay);
    uint64_t skew = 0;
    for (int i = 0; i < 8; i++) skew |= (uint64_t)(s->skew[i] & SKEW_MASK) << skew_offset[i];
    hal_write64(CSR_REMOTE_CHANNEL_SKEW_ADDR, skew);
    return 0;
}

void link_get(struct link_settings *s) {
    s->lanes    = 1u << hal_read32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR);
    s->block_ps = hal_read32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR);
    s->delay    = hal_read32(CSR_REMOTE_CHANNEL_DELAY_ADDR);
    uint64_t skew = hal_read64(CSR_REMOTE_CHANNEL_SKEW_ADDR);
    for (int i = 0; i < 8; i++) s->skew[i] = (skew >> skew_offset[i]) & SKEW_MASK;
    uint32_t framing = hal_read32(CSR_REMOTE_LINK_C_FRAMING_ADDR);
    s->max_units  = FIELD_GET(REMOTE_LINK_C_FRAMING_MAX_UNITS, framing);
    s->pairing    = FIELD_GET(REMOTE_LINK_C_FRAMING_PAIRING, framing);
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

static const uint32_t ber_lane_addr[8] = {
    CSR_REMOTE_CHANNEL_BER_LANE0_ADDR, CSR_REMOTE_CHANNEL_BER_LANE1_ADDR, CSR_REMOTE_CHANNEL_BER_LANE2_ADDR,
    CSR_REMOTE_CHANNEL_BER_LANE3_ADDR, CSR_REMOTE_CHANNEL_BER_LANE4_ADDR, CSR_REMOTE_CHANNEL_BER_LANE5_ADDR,
    CSR_REMOTE_CHANNEL_BER_LANE6_ADDR, CSR_REMOTE_CHANNEL_BER_LANE7_ADDR,
};

void channel_faults_set(const struct channel_faults *f, int reseed) {
    for (int i = 0; i < 8; i++) hal_write64(ber_lane_addr[i], f->threshold[i]);   /* 40-bit CSRs */
    hal_write32(CSR_REMOTE_CHANNEL_BER_BURST_ADDR, f->burst);
    if (reseed) hal_write32(CSR_REMOTE_CHANNEL_BER_SEED_ADDR, f->seed);
}

void channel_faults_get(struct channel_faults *f) {
    for (int i = 0; i < 8; i++)
        f->threshold[i] = hal_read64(ber_lane_addr[i]);
    f->burst = hal_read32(CSR_REMOTE_CHANNEL_BER_BURST_ADDR);
    f->seed  = hal_read32(CSR_REMOTE_CHANNEL_BER_SEED_ADDR);
}

void channel_fault_counters(struct channel_fault_counters *c) {
    c->blocks_a2b = hal_read64(CSR_REMOTE_CHANNEL_BLOCKS_A2B_ADDR);
    c->blocks_b2a = hal_read64(CSR_REMOTE_CHANNEL_BLOCKS_B2A_ADDR);
    c->hits_a2b   = hal_read32(CSR_REMOTE_CHANNEL_HITS_A2B_ADDR);
    c->hits_b2a   = hal_read32(CSR_REMOTE_CHANNEL_HITS_B2A_ADDR);
    c->down_total = hal_read32(CSR_REMOTE_CHANNEL_DOWN_TOTAL_ADDR);
}

void channel_down(uint32_t cycles, uint32_t after) {
    hal_write32(CSR_REMOTE_CHANNEL_DOWN_AFTER_ADDR, after);
    hal_write32(CSR_REMOTE_CHANNEL_DOWN_ADDR, cycles);
}

void retry_set(uint32_t timeout, uint32_t nak) {
    hal_write32(CSR_REMOTE_LINK_C_RETRY_ADDR, FIELD_PUT(REMOTE_LINK_C_RETRY_TIMEOUT, timeout) |
                                              FIELD_PUT(REMOTE_LINK_C_RETRY_NAK, nak != 0));
    hal_write32(CSR_REMOTE_LINK_M_RETRY_ADDR, FIELD_PUT(REMOTE_LINK_M_RETRY_TIMEOUT, timeout) |
                                              FIELD_PUT(REMOTE_LINK_M_RETRY_NAK, nak != 0));
}

void credits_set(uint32_t limit) { hal_write32(CSR_REMOTE_LINK_C_CREDIT_LIMIT_ADDR, limit); }
uint32_t credits_get(void) { return hal_read32(CSR_REMOTE_LINK_C_CREDIT_LIMIT_ADDR); }

void retry_get(uint32_t *timeout, uint32_t *nak) {
    uint32_t v = hal_read32(CSR_REMOTE_LINK_C_RETRY_ADDR);
    *timeout = FIELD_GET(REMOTE_LINK_C_RETRY_TIMEOUT, v);
    *nak = FIELD_GET(REMOTE_LINK_C_RETRY_NAK, v);
}

#define RETRY_COUNTERS(end, c) do { \
    (c)->replays        = hal_read32(CSR_REMOTE_LINK_##end##_REPLAYS_ADDR); \
    (c)->timeouts       = hal_read32(CSR_REMOTE_LINK_##end##_TIMEOUTS_ADDR); \
    (c)->replayed_txns  = hal_read32(CSR_REMOTE_LINK_##end##_REPLAYED_TXNS_ADDR); \
    (c)->replayed_bytes = hal_read32(CSR_REMOTE_LINK_##end##_REPLAYED_BYTES_ADDR); \
    (c)->window_stalls  = hal_read32(CSR_REMOTE_LINK_##end##_WINDOW_STALLS_ADDR); \
    (c)->credit_stalls  = hal_read32(CSR_REMOTE_LINK_##end##_CREDIT_STALLS_ADDR); \
    (c)->naks           = hal_read32(CSR_REMOTE_LINK_##end##_NAKS_ADDR); \
    (c)->duplicates     = hal_read32(CSR_REMOTE_LINK_##end##_DUPLICATES_ADDR); \
    (c)->out_of_order   = hal_read32(CSR_REMOTE_LINK_##end##_OUT_OF_ORDER_ADDR); \
    (c)->reinits        = hal_read32(CSR_REMOTE_LINK_##end##_REINITS_ADDR); \
    (c)->down_cycles    = hal_read32(CSR_REMOTE_LINK_##end##_DOWN_CYCLES_ADDR); \
    (c)->crc_errors     = hal_read32(CSR_REMOTE_LINK_##end##_CRC_ERRORS_ADDR); \
    (c)->frames         = hal_read32(CSR_REMOTE_LINK_##end##_FRAMES_ADDR); \
} while (0)

void retry_counters(int end, struct retry_counters *c) {
    if (end == 0) RETRY_COUNTERS(C, c);
    else          RETRY_COUNTERS(M, c);
}

#define PRBS_COUNTERS(end, c) do { \
    static const uint32_t err[8] = { \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS0_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS1_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS2_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS3_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS4_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS5_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS6_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS7_ADDR}; \
    (c)->words   = hal_read64(CSR_REMOTE_LINK_##end##_PRBS_WORDS_ADDR); \
    (c)->relocks = hal_read32(CSR_REMOTE_LINK_##end##_PRBS_RELOCKS_ADDR); \
    for (int i = 0; i < 8; i++) (c)->errors[i] = hal_read32(err[i]); \
} while (0)

void prbs_enable(int end, int tx, int rx) {
    if (end == 0)
        hal_write32(CSR_REMOTE_LINK_C_PRBS_ENABLE_ADDR, FIELD_PUT(REMOTE_LINK_C_PRBS_ENABLE_TX, tx != 0) |
                                                        FIELD_PUT(REMOTE_LINK_C_PRBS_ENABLE_RX, rx != 0));
    else
        hal_write32(CSR_REMOTE_LINK_M_PRBS_ENABLE_ADDR, FIELD_PUT(REMOTE_LINK_M_PRBS_ENABLE_TX, tx != 0) |
                                                        FIELD_PUT(REMOTE_LINK_M_PRBS_ENABLE_RX, rx != 0));
}

void prbs_clear(int end) {
    hal_write32(end ? CSR_REMOTE_LINK_M_PRBS_CLEAR_ADDR : CSR_REMOTE_LINK_C_PRBS_CLEAR_ADDR, 1);
}

void prbs_counters(int end, struct prbs_counters *c) {
    if (end == 0) PRBS_COUNTERS(C, c);
    else          PRBS_COUNTERS(M, c);
}
