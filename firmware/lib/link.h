/* Link driver: lanes, rate, delay and framing of the remote path, go-back-N and credits at both ends, PRBS31. */
#ifndef MONET_LINK_H
#define MONET_LINK_H

#include <stdint.h>
#include <generated/soc.h>

struct link_settings {
    uint32_t lanes;     /* 1, 2, 4 or 8 */
    uint32_t block_ps;  /* one 66-bit block at the lane rate */
    uint32_t delay;     /* one-way cycles: PHY TX + fiber + PHY RX */
    uint8_t  skew[LINK_MAX_LANES];   /* per-lane extra cycles */
    uint32_t max_units; /* units per frame at most, both ends (1..8) */
    uint32_t pairing;   /* two consecutive lines may share a header */
    uint32_t issue_rate;/* ReMAT streamer pacing, requests a cycle in 1/65536 (0: unlimited) */
};

int  link_set(const struct link_settings *s);   /* -1 if lanes is not 1/2/4/8, -2 if max_units not 1..8 */
void link_get(struct link_settings *s);
void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a);

/* Link reliability at each end (0: compute card, 1: memory card). */
/* Each end's reliability counters, one list (X-macro): (name in the console's JSON, CSR name at either end). */
#define RETRY_COUNTER_LIST(X) \
    X(replays, REPLAYS) X(timeouts, TIMEOUTS) X(replayed_txns, REPLAYED_TXNS) X(replayed_bytes, REPLAYED_BYTES) \
    X(window_stalls, WINDOW_STALLS) X(credit_stalls, CREDIT_STALLS) X(naks, NAKS) X(duplicates, DUPLICATES) \
    X(out_of_order, OUT_OF_ORDER) X(reinits, REINITS) X(down_cycles, DOWN_CYCLES) X(crc_errors, CRC_ERRORS) \
    X(frames, FRAMES)
#define RETRY_COUNTER_INDEX(name, reg) RETRY_##reg,
enum { RETRY_COUNTER_LIST(RETRY_COUNTER_INDEX) RETRY_COUNTERS };
extern const char *const retry_counter_names[RETRY_COUNTERS];
struct retry_counters { uint32_t value[RETRY_COUNTERS]; };   /* indexed by RETRY_<reg> */
void retry_set(uint32_t timeout, uint32_t nak);   /* both ends */
void retry_get(uint32_t *timeout, uint32_t *nak);
/* Requests in flight toward the memory card's input FIFO (compute end's credit limit, 0: none; < 128). */
void credits_set(uint32_t limit);
uint32_t credits_get(void);
void retry_counters(int end, struct retry_counters *c);

/* PRBS31 on the lanes: end 0 = compute card, 1 = memory card; tx sends, rx checks. */
struct prbs_counters { uint64_t words; uint32_t errors[LINK_MAX_LANES]; uint32_t relocks; };
void prbs_enable(int end, int tx, int rx);
void prbs_clear(int end);
void prbs_counters(int end, struct prbs_counters *c);

#endif
