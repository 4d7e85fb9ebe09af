/* The pooled model's memory card ports (pool.h). */
#include "monet_hal.h"
#include "pool.h"

#if POOL_PORTS
/* Each port's registers are its own block, port 0's moved by one stride a port. */
#define PORT_STRIDE (CSR_REMOTE_PORTS_SHARE1_ADDR - CSR_REMOTE_PORTS_SHARE0_ADDR)
_Static_assert(CSR_REMOTE_PORTS_HIST1_7_ADDR - CSR_REMOTE_PORTS_HIST0_7_ADDR == PORT_STRIDE,
               "the ports' registers are not one block a port");
_Static_assert(CSR_REMOTE_PORTS_HIST0_7_ADDR - CSR_REMOTE_PORTS_HIST0_0_ADDR == 4 * (PORTS_BUCKETS - 1),
               "PORTS_BUCKETS is not the ports' histogram");
#define PORT_REG(name, port) (CSR_REMOTE_PORTS_##name##0_ADDR + (port) * PORT_STRIDE)

void port_set(uint32_t port, uint32_t share, uint64_t first, uint64_t last) {
    hal_write32(PORT_REG(SHARE, port), share);
    hal_write64(PORT_REG(FIRST, port), first);
    hal_write64(PORT_REG(LAST, port), last);
}

void port_get(uint32_t port, uint32_t *share, uint64_t *first, uint64_t *last) {
    *share = hal_read32(PORT_REG(SHARE, port));
    *first = hal_read64(PORT_REG(FIRST, port));
    *last  = hal_read64(PORT_REG(LAST, port));
}

void port_counters(uint32_t port, struct port_counters *c) {
    c->reads         = hal_read32(PORT_REG(READS, port));
    c->writes        = hal_read32(PORT_REG(WRITES, port));
    c->refused       = hal_read32(PORT_REG(REFUSED, port));
    c->stalls        = hal_read32(PORT_REG(STALLS, port));
    c->latency_sum   = hal_read64(PORT_REG(LATENCY_SUM, port));
    c->latency_count = hal_read32(PORT_REG(LATENCY_COUNT, port));
    for (uint32_t b = 0; b < PORTS_BUCKETS; b++)
        c->hist[b] = hal_read32(CSR_REMOTE_PORTS_HIST0_0_ADDR + port * PORT_STRIDE + 4 * b);
}

uint32_t port_lines(uint32_t port) {
    return hal_read32(PORT_REG(READS, port)) + hal_read32(PORT_REG(WRITES, port));
}

void ports_set_hist_shift(uint32_t shift) { hal_write32(CSR_REMOTE_PORTS_HIST_SHIFT_ADDR, shift); }
uint32_t ports_hist_shift(void) { return hal_read32(CSR_REMOTE_PORTS_HIST_SHIFT_ADDR); }
void ports_set_in_flight(uint32_t limit) { hal_write32(CSR_REMOTE_PORTS_IN_FLIGHT_LIMIT_ADDR, limit); }
uint32_t ports_in_flight(void) { return hal_read32(CSR_REMOTE_PORTS_IN_FLIGHT_LIMIT_ADDR); }
#endif
