/* ReMAT, link, channel and memory-card drivers (bare metal and Linux user space). */
#ifndef MONET_REMAT_H
#define MONET_REMAT_H

#include <stdint.h>

/* A BFCT entry (its bits are the entry CSR's fields). */
struct bfct_entry {
    int enable, read, write;
    uint32_t target;  /* 0: remote link 0 */
    uint32_t base;    /* remote section index */
};

struct remat_faults { uint32_t count, addr, kind; };

struct remat_latency { uint32_t last, min, max, count; uint64_t sum; };

struct link_settings {
    uint32_t lanes;     /* 1, 2, 4 or 8 */
    uint32_t block_ps;  /* one 66-bit block at the lane rate */
    uint32_t delay;     /* one-way cycles: PHY TX + fiber + PHY RX */
    uint8_t  skew[8];   /* per-lane extra cycles */
    uint32_t max_units; /* units per frame at most, both ends (1..8) */
    uint32_t pairing;   /* two consecutive lines may share a header */
    uint32_t issue_rate;/* ReMAT streamer pacing, requests a cycle in 1/65536 (0: unlimited) */
};

void bfct_write(uint32_t index, const struct bfct_entry *e);
void bfct_read(uint32_t index, struct bfct_entry *e);
void remat_faults(struct remat_faults *f);
void remat_latency(struct remat_latency *l);
void remat_latency_clear(void);
uint32_t remat_requests(void);
/* Accesses not answered within the request timeout (cycles, 0: never) end with a bus error (fault kind 6). */
void remat_set_request_timeout(uint32_t cycles);
uint32_t remat_request_timeout(void);
uint32_t remat_request_timeouts(void);

int  link_set(const struct link_settings *s);   /* -1 if lanes is not 1/2/4/8, -2 if max_units not 1..8 */
void link_get(struct link_settings *s);
void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a);

/* Channel faults (sim): per-lane block-error thresholds (a 66-bit block is hit with probability t / 2**40),
 * bits flipped per error, generator seed, and link-down cycles. */
struct channel_faults {
    uint64_t threshold[8];
    uint32_t burst, seed;
};
struct channel_fault_counters { uint64_t blocks_a2b, blocks_b2a; uint32_t hits_a2b, hits_b2a, down_total; };
void channel_faults_set(const struct channel_faults *f, int reseed);
void channel_faults_get(struct channel_faults *f);
void channel_fault_counters(struct channel_fault_counters *c);
void channel_down(uint32_t cycles, uint32_t after);   /* down for `cycles`, `after` cycles from now */

/* Link reliability at each end (0: compute card, 1: memory card). */
struct retry_counters {
    uint32_t replays, timeouts, replayed_txns, replayed_bytes, window_stalls, credit_stalls, naks, duplicates,
             out_of_order, reinits, down_cycles, crc_errors, frames;
};
void retry_set(uint32_t timeout, uint32_t nak);   /* both ends */
void retry_get(uint32_t *timeout, uint32_t *nak);
/* Requests in flight toward the memory card's input FIFO (compute end's credit limit, 0: none; < 128). */
void credits_set(uint32_t limit);
uint32_t credits_get(void);
void retry_counters(int end, struct retry_counters *c);

/* PRBS31 on the lanes: end 0 = compute card, 1 = memory card; tx sends, rx checks. */
struct prbs_counters { uint64_t words; uint32_t errors[8]; uint32_t relocks; };
void prbs_enable(int end, int tx, int rx);
void prbs_clear(int end);
void prbs_counters(int end, struct prbs_counters *c);

void memcard_set_latency(uint32_t cycles);
uint32_t memcard_latency(void);

#endif
