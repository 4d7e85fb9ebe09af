/* Sim channel driver. */
#include "monet_hal.h"
#include "channel.h"
#include "link.h"

#ifdef LINK_SIM_CHANNEL   /* the sim's channel */

_Static_assert(LINK_MAX_LANES == 8, "one CSR per lane in ber_lane_addr");
static const uint32_t ber_lane_addr[LINK_MAX_LANES] = {
    CSR_REMOTE_CHANNEL_BER_LANE0_ADDR, CSR_REMOTE_CHANNEL_BER_LANE1_ADDR, CSR_REMOTE_CHANNEL_BER_LANE2_ADDR,
    CSR_REMOTE_CHANNEL_BER_LANE3_ADDR, CSR_REMOTE_CHANNEL_BER_LANE4_ADDR, CSR_REMOTE_CHANNEL_BER_LANE5_ADDR,
    CSR_REMOTE_CHANNEL_BER_LANE6_ADDR, CSR_REMOTE_CHANNEL_BER_LANE7_ADDR,
};

void channel_faults_set(const struct channel_faults *f, int reseed) {
    for (int i = 0; i < LINK_MAX_LANES; i++) hal_write64(ber_lane_addr[i], f->threshold[i]);   /* 40-bit CSRs */
    hal_write32(CSR_REMOTE_CHANNEL_BER_BURST_ADDR, f->burst);
    if (reseed) hal_write32(CSR_REMOTE_CHANNEL_BER_SEED_ADDR, f->seed);
}

void channel_faults_get(struct channel_faults *f) {
    for (int i = 0; i < LINK_MAX_LANES; i++)
        f->threshold[i] = hal_read64(ber_lane_addr[i]);
    f->burst = hal_read32(CSR_REMOTE_CHANNEL_BER_BURST_ADDR);
    f->seed  = hal_read32(CSR_REMOTE_CHANNEL_BER_SEED_ADDR);
}

void channel_fault_counters(struct channel_fault_counters *c) {
#define CHANNEL_COUNTER_READ(name, reg, bits) c->name = hal_read##bits(CSR_REMOTE_CHANNEL_##reg##_ADDR);
    CHANNEL_COUNTER_LIST(CHANNEL_COUNTER_READ)
}

void channel_down(uint32_t cycles, uint32_t after) {
    hal_write32(CSR_REMOTE_CHANNEL_DOWN_AFTER_ADDR, after);
    hal_write32(CSR_REMOTE_CHANNEL_DOWN_ADDR, cycles);
}

void channel_inject(const struct channel_inject *f) {
    hal_write32(CSR_REMOTE_CHANNEL_INJECT_AT_ADDR, f->at);
    hal_write32(CSR_REMOTE_CHANNEL_INJECT_COPIES_ADDR, f->copies);
    hal_write32(CSR_REMOTE_CHANNEL_INJECT_CYCLES_ADDR, f->cycles);
    hal_write32(CSR_REMOTE_CHANNEL_INJECT_ADDR, FIELD_PUT(REMOTE_CHANNEL_INJECT_KIND, f->kind)
                | FIELD_PUT(REMOTE_CHANNEL_INJECT_TOWARD, f->toward) | FIELD_PUT(REMOTE_CHANNEL_INJECT_LANE, f->lane));
}

void channel_inject_state(struct channel_inject_state *s) {
    uint32_t state = hal_read32(CSR_REMOTE_CHANNEL_INJECTOR_ADDR);
    s->injected = hal_read32(CSR_REMOTE_CHANNEL_INJECTED_ADDR);
    s->pending = FIELD_GET(REMOTE_CHANNEL_INJECTOR_PENDING, state);
    s->frame_blocks = FIELD_GET(REMOTE_CHANNEL_INJECTOR_FRAME_BLOCKS, state);
    s->frame_seq = FIELD_GET(REMOTE_CHANNEL_INJECTOR_FRAME_SEQ, state);
}
#endif
