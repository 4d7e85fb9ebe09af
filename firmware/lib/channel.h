/* Sim channel driver: bit errors per lane and link-down intervals. */
#ifndef MONET_CHANNEL_H
#define MONET_CHANNEL_H

#include <stdint.h>
#include <generated/soc.h>

/* Channel faults (sim): per-lane block-error thresholds (a 66-bit block is hit with probability t / 2**40),
 * bits flipped per error, generator seed, and link-down cycles. */
struct channel_faults {
    uint64_t threshold[LINK_MAX_LANES];
    uint32_t burst, seed;
};
struct channel_fault_counters { uint64_t blocks_a2b, blocks_b2a; uint32_t hits_a2b, hits_b2a, down_total; };
void channel_faults_set(const struct channel_faults *f, int reseed);
void channel_faults_get(struct channel_faults *f);
void channel_fault_counters(struct channel_fault_counters *c);
void channel_down(uint32_t cycles, uint32_t after);   /* down for `cycles`, `after` cycles from now */

#endif
