/* Sim channel driver: bit errors per lane, link-down intervals and chosen faults. */
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
/* The channel's counters, one list (X-macro): (name in the console's JSON, CSR name, bits). */
#define CHANNEL_COUNTER_LIST(X) \
    X(blocks_a2b, BLOCKS_A2B, 64) X(blocks_b2a, BLOCKS_B2A, 64) X(hits_a2b, HITS_A2B, 32) \
    X(hits_b2a, HITS_B2A, 32) X(down_total, DOWN_TOTAL, 32)
#define CHANNEL_COUNTER_FIELD(name, reg, bits) uint##bits##_t name;
struct channel_fault_counters { CHANNEL_COUNTER_LIST(CHANNEL_COUNTER_FIELD) };
void channel_faults_set(const struct channel_faults *f, int reseed);
void channel_faults_get(struct channel_faults *f);
void channel_fault_counters(struct channel_fault_counters *c);
void channel_down(uint32_t cycles, uint32_t after);   /* down for `cycles`, `after` cycles from now */

/* A chosen fault (kind: CHANNEL_FAULT_*, litex/cores/phy/codes.py) toward the memory card (toward 0) or the
 * compute card (1), at the first frame that travels alone from `at` cycles on: on that frame (a flood sends
 * `copies`), or from it lane `lane` garbled, that lane down or every lane down for `cycles`, or a word of that
 * lane lost (a slip). */
struct channel_inject { uint32_t kind, toward, lane, at, copies, cycles; };
struct channel_inject_state { uint32_t injected, pending, frame_blocks, frame_seq; };
void channel_inject(const struct channel_inject *f);
void channel_inject_state(struct channel_inject_state *s);

#endif
