/* The pooled model's driver: the memory card's ports in front of its memory (litex/cores/memcard/ports.py):
 * shares, ranges and counters; which card the drivers reach is card.h's. */
#ifndef MONET_POOL_H
#define MONET_POOL_H

#include <stdint.h>
#include <generated/csr.h>
#include <generated/pool.h>

#include "card.h"

/* The memory card has ports in this register map (the pooled model). */
#ifdef CSR_REMOTE_PORTS_SHARE0_ADDR
#define POOL_PORTS (POOL_TRAFFIC_CARDS + 1)   /* port 0: the compute card; port i: traffic card i */
#else
#define POOL_PORTS 0
#endif

#define PORTS_BUCKETS 8   /* each port's latency histogram (MemoryPorts' buckets) */

struct port_counters {
    uint32_t reads, writes, refused, stalls, latency_count;
    uint64_t latency_sum;
    uint32_t hist[PORTS_BUCKETS];
};

#if POOL_PORTS
/* Port `port`'s share of turns (requests in a row, 0 counts as 1) and its range of lines (byte address / 64):
 * a request outside first..last is refused with an error at the memory card. */
void port_set(uint32_t port, uint32_t share, uint64_t first, uint64_t last);
void port_get(uint32_t port, uint32_t *share, uint64_t *first, uint64_t *last);
void port_counters(uint32_t port, struct port_counters *c);
uint32_t port_lines(uint32_t port);   /* lines port `port` moved (reads and writes), two registers' reads */
void ports_set_hist_shift(uint32_t shift);   /* the latency histograms' buckets: 2**shift cycles */
uint32_t ports_hist_shift(void);
/* The memory card's requests in flight at most (0 counts as 1; REMOTE_TAGS: all): fewer keep requests waiting at
 * the ports, where the shares decide, and bound the wait behind the others at the card. */
void ports_set_in_flight(uint32_t limit);
uint32_t ports_in_flight(void);
#endif

#endif
