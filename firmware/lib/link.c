/* Link driver: each end this register map holds, and the sim's channel or a board's lanes between them
 * (link.h's LINK_ENDS). */
#include "monet_hal.h"
#include "link.h"

/* The per-lane tables below name one CSR (or field) a lane. */
_Static_assert(LINK_MAX_LANES == 8, "one entry per lane in the tables of link.c");

/* The first `lanes` fields of `bits` each in `packed` (a CSR of per-lane counters, lane 0 lowest), 0 beyond. */
static void unpack_lane_fields(uint64_t packed, unsigned bits, int lanes, uint32_t out[LINK_MAX_LANES]) {
    for (int i = 0; i < LINK_MAX_LANES; i++) out[i] = i < lanes ? (packed >> (bits * i)) & ((1u << bits) - 1) : 0;
}

#ifdef LINK_SIM_CHANNEL
/* The channel's per-lane skew fields, lane 0 first (one 64-bit CSR). */
static const uint8_t skew_offset[LINK_MAX_LANES] = {
    CSR_REMOTE_CHANNEL_SKEW_LANE0_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE1_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE2_OFFSET,
    CSR_REMOTE_CHANNEL_SKEW_LANE3_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE4_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE5_OFFSET,
    CSR_REMOTE_CHANNEL_SKEW_LANE6_OFFSET, CSR_REMOTE_CHANNEL_SKEW_LANE7_OFFSET};
#define SKEW_MASK ((1u << CSR_REMOTE_CHANNEL_SKEW_LANE0_SIZE) - 1)

/* The sim's channel between the ends: lane count, block time, one-way delay, skew. */
static void lanes_set(const struct link_settings *s, uint32_t log2) {
    hal_write32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR, log2);
    hal_write32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR, s->block_ps);
    hal_write32(CSR_REMOTE_CHANNEL_DELAY_ADDR, s->delay);
    uint64_t skew = 0;
    for (int i = 0; i < LINK_MAX_LANES; i++) skew |= (uint64_t)(s->skew[i] & SKEW_MASK) << skew_offset[i];
    hal_write64(CSR_REMOTE_CHANNEL_SKEW_ADDR, skew);
}

static void lanes_get(struct link_settings *s) {
    s->lanes    = 1u << hal_read32(CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR);
    s->block_ps = hal_read32(CSR_REMOTE_CHANNEL_BLOCK_PS_ADDR);
    s->delay    = hal_read32(CSR_REMOTE_CHANNEL_DELAY_ADDR);
    uint64_t skew = hal_read64(CSR_REMOTE_CHANNEL_SKEW_ADDR);
    for (int i = 0; i < LINK_MAX_LANES; i++) s->skew[i] = (skew >> skew_offset[i]) & SKEW_MASK;
}

void lane_losses(int end, uint32_t losses[LINK_MAX_LANES]) {
    /* the compute card (end 0) receives b2a, the memory card a2b */
    uint64_t packed = hal_read64(end ? CSR_REMOTE_CHANNEL_LANE_LOSSES_A2B_ADDR
                                     : CSR_REMOTE_CHANNEL_LANE_LOSSES_B2A_ADDR);
    unpack_lane_fields(packed, CSR_REMOTE_CHANNEL_LANE_LOSSES_A2B_LANE0_SIZE, LINK_MAX_LANES, losses);
}

int lanes_loopback(uint32_t mode) {
    if (mode > CHANNEL_LOOPBACK_FAR) return -1;
    hal_write32(CSR_REMOTE_CHANNEL_LOOPBACK_ADDR, mode);
    return 0;
}
#else
/* A board's lanes: their count and rate are the gateware's; the fabric's delay line, when built, emulates
 * fiber. */
static int lanes_check(const struct link_settings *s) {
    if (s->lanes != LINK_LANES) return -3;
#ifdef CSR_LANES_EMULATED_DELAY_ADDR
    if (s->delay > LANES_MAX_DELAY) return -3;
#else
    if (s->delay) return -3;
#endif
    return 0;
}

static void lanes_set(const struct link_settings *s, uint32_t log2) {
    (void)log2;
#ifdef CSR_LANES_EMULATED_DELAY_ADDR
    hal_write32(CSR_LANES_EMULATED_DELAY_ADDR, s->delay);
#else
    (void)s;
#endif
}

static void lanes_get(struct link_settings *s) {
    s->lanes = LINK_LANES;
    s->block_ps = 0;
#ifdef CSR_LANES_EMULATED_DELAY_ADDR
    s->delay = hal_read32(CSR_LANES_EMULATED_DELAY_ADDR);
#else
    s->delay = 0;
#endif
    for (int i = 0; i < LINK_MAX_LANES; i++) s->skew[i] = 0;
}

void lane_losses(int end, uint32_t losses[LINK_MAX_LANES]) {
    (void)end;   /* a board's map holds its own end only */
    unpack_lane_fields(hal_read64(CSR_LANES_LANE_LOSSES_ADDR), CSR_LANES_LANE_LOSSES_LANE0_SIZE, LINK_LANES, losses);
}

/* liteiclink's per-lane loopback register (the transceiver's LOOPBACK port): near-end PMA loopback. */
#define GT_LOOPBACK_NEAR_PMA 2
#define LANE_LOOPBACK_WRITE(i, config) hal_write32(CSR_LANES_LANE##i##_LOOPBACK_ADDR, config)

int lanes_loopback(uint32_t mode) {
    if (mode != CHANNEL_LOOPBACK_NONE && mode != CHANNEL_LOOPBACK_NEAR) return -1;
    uint32_t config = mode == CHANNEL_LOOPBACK_NEAR ? GT_LOOPBACK_NEAR_PMA : 0;
    LANE_LOOPBACK_WRITE(0, config);
#if LINK_LANES > 1
    LANE_LOOPBACK_WRITE(1, config);
#endif
#if LINK_LANES > 2
    LANE_LOOPBACK_WRITE(2, config);
    LANE_LOOPBACK_WRITE(3, config);
#endif
#if LINK_LANES > 4
    LANE_LOOPBACK_WRITE(4, config);
    LANE_LOOPBACK_WRITE(5, config);
    LANE_LOOPBACK_WRITE(6, config);
    LANE_LOOPBACK_WRITE(7, config);
#endif
    return 0;
}
#endif

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
#ifndef LINK_SIM_CHANNEL
    if (lanes_check(s)) return -3;
#endif
    hal_write32(CSR_REMOTE_LINK_C_FRAMING_ADDR, FIELD_PUT(REMOTE_LINK_C_FRAMING_MAX_UNITS, s->max_units) |
                                                FIELD_PUT(REMOTE_LINK_C_FRAMING_PAIRING, s->pairing != 0));
#if LINK_ENDS == 2
    hal_write32(CSR_REMOTE_LINK_M_FRAMING_ADDR, FIELD_PUT(REMOTE_LINK_M_FRAMING_MAX_UNITS, s->max_units) |
                                                FIELD_PUT(REMOTE_LINK_M_FRAMING_PAIRING, s->pairing != 0));
#endif
    hal_write32(CSR_REMOTE_REMAT_ISSUE_RATE_ADDR, s->issue_rate);
    lanes_set(s, log2);
    return 0;
}

void link_get(struct link_settings *s) {
    lanes_get(s);
    uint32_t framing = hal_read32(CSR_REMOTE_LINK_C_FRAMING_ADDR);
    s->max_units  = FIELD_GET(REMOTE_LINK_C_FRAMING_MAX_UNITS, framing);
    s->pairing    = FIELD_GET(REMOTE_LINK_C_FRAMING_PAIRING, framing);
    s->issue_rate = hal_read32(CSR_REMOTE_REMAT_ISSUE_RATE_ADDR);
}

void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a) {
    *frames_c = hal_read32(CSR_REMOTE_LINK_C_FRAMES_ADDR);
    *crc_c    = hal_read32(CSR_REMOTE_LINK_C_CRC_ERRORS_ADDR);
#if LINK_ENDS == 2
    *frames_m = hal_read32(CSR_REMOTE_LINK_M_FRAMES_ADDR);
    *crc_m    = hal_read32(CSR_REMOTE_LINK_M_CRC_ERRORS_ADDR);
#else
    *frames_m = *crc_m = 0;
#endif
#ifdef LINK_SIM_CHANNEL
    *busy_a2b = hal_read32(CSR_REMOTE_CHANNEL_BUSY_A2B_ADDR);
    *busy_b2a = hal_read32(CSR_REMOTE_CHANNEL_BUSY_B2A_ADDR);
#else
    *busy_a2b = *busy_b2a = 0;   /* the channel counts these; a board's lanes do not */
#endif
}

void retry_set(uint32_t timeout, uint32_t nak, uint32_t selective, uint32_t repair) {
    hal_write32(CSR_REMOTE_LINK_C_RETRY_ADDR, FIELD_PUT(REMOTE_LINK_C_RETRY_TIMEOUT, timeout) |
                                              FIELD_PUT(REMOTE_LINK_C_RETRY_NAK, nak != 0) |
                                              FIELD_PUT(REMOTE_LINK_C_RETRY_SELECTIVE, selective != 0) |
                                              FIELD_PUT(REMOTE_LINK_C_RETRY_REPAIR, repair != 0));
#if LINK_ENDS == 2
    hal_write32(CSR_REMOTE_LINK_M_RETRY_ADDR, FIELD_PUT(REMOTE_LINK_M_RETRY_TIMEOUT, timeout) |
                                              FIELD_PUT(REMOTE_LINK_M_RETRY_NAK, nak != 0) |
                                              FIELD_PUT(REMOTE_LINK_M_RETRY_SELECTIVE, selective != 0) |
                                              FIELD_PUT(REMOTE_LINK_M_RETRY_REPAIR, repair != 0));
#endif
}

void credits_set(uint32_t limit) { hal_write32(CSR_REMOTE_LINK_C_CREDIT_LIMIT_ADDR, limit); }
uint32_t credits_get(void) { return hal_read32(CSR_REMOTE_LINK_C_CREDIT_LIMIT_ADDR); }

void retry_get(uint32_t *timeout, uint32_t *nak, uint32_t *selective, uint32_t *repair) {
    uint32_t v = hal_read32(CSR_REMOTE_LINK_C_RETRY_ADDR);
    *timeout = FIELD_GET(REMOTE_LINK_C_RETRY_TIMEOUT, v);
    *nak = FIELD_GET(REMOTE_LINK_C_RETRY_NAK, v);
    *selective = FIELD_GET(REMOTE_LINK_C_RETRY_SELECTIVE, v);
    *repair = FIELD_GET(REMOTE_LINK_C_RETRY_REPAIR, v);
}

#define RETRY_COUNTER_NAME(name, reg)   #name,
#define RETRY_COUNTER_C_ADDR(name, reg) CSR_REMOTE_LINK_C_##reg##_ADDR,
#define RETRY_COUNTER_M_ADDR(name, reg) CSR_REMOTE_LINK_M_##reg##_ADDR,
const char *const retry_counter_names[RETRY_COUNTERS] = {RETRY_COUNTER_LIST(RETRY_COUNTER_NAME)};
static const uint32_t retry_counter_addr[LINK_ENDS][RETRY_COUNTERS] = {
    {RETRY_COUNTER_LIST(RETRY_COUNTER_C_ADDR)},
#if LINK_ENDS == 2
    {RETRY_COUNTER_LIST(RETRY_COUNTER_M_ADDR)},
#endif
};

void retry_counters(int end, struct retry_counters *c) {
    end = end != 0;
    for (int i = 0; i < RETRY_COUNTERS; i++) c->value[i] = end < LINK_ENDS ? hal_read32(retry_counter_addr[end][i]) : 0;
}

#define PRBS_COUNTERS(end, c) do { \
    static const uint32_t err[LINK_MAX_LANES] = { \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS0_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS1_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS2_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS3_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS4_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS5_ADDR, \
        CSR_REMOTE_LINK_##end##_PRBS_ERRORS6_ADDR, CSR_REMOTE_LINK_##end##_PRBS_ERRORS7_ADDR}; \
    (c)->words   = hal_read64(CSR_REMOTE_LINK_##end##_PRBS_WORDS_ADDR); \
    (c)->relocks = hal_read32(CSR_REMOTE_LINK_##end##_PRBS_RELOCKS_ADDR); \
    for (int i = 0; i < LINK_MAX_LANES; i++) (c)->errors[i] = hal_read32(err[i]); \
} while (0)

void prbs_enable(int end, int tx, int rx) {
    if (end == 0)
        hal_write32(CSR_REMOTE_LINK_C_PRBS_ENABLE_ADDR, FIELD_PUT(REMOTE_LINK_C_PRBS_ENABLE_TX, tx != 0) |
                                                        FIELD_PUT(REMOTE_LINK_C_PRBS_ENABLE_RX, rx != 0));
#if LINK_ENDS == 2
    else
        hal_write32(CSR_REMOTE_LINK_M_PRBS_ENABLE_ADDR, FIELD_PUT(REMOTE_LINK_M_PRBS_ENABLE_TX, tx != 0) |
                                                        FIELD_PUT(REMOTE_LINK_M_PRBS_ENABLE_RX, rx != 0));
#endif
}

void prbs_clear(int end) {
    if (end == 0) hal_write32(CSR_REMOTE_LINK_C_PRBS_CLEAR_ADDR, 1);
#if LINK_ENDS == 2
    else hal_write32(CSR_REMOTE_LINK_M_PRBS_CLEAR_ADDR, 1);
#endif
}

void prbs_counters(int end, struct prbs_counters *c) {
    if (end == 0) PRBS_COUNTERS(C, c);
#if LINK_ENDS == 2
    else          PRBS_COUNTERS(M, c);
#else
    else          *c = (struct prbs_counters){0};
#endif
}
