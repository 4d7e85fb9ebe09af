/* Link driver: lanes, rate, delay and framing of the remote path, go-back-N and credits at both ends, PRBS31. */
#ifndef MONET_LINK_H
#define MONET_LINK_H

#include <stdint.h>
#include <generated/csr.h>
#include <generated/soc.h>

/* What of the link this register map holds: the sim has both ends and the channel between them (the
 * settings below are all live); a board's compute card has its own end (the memory card's is on the other
 * board) and its transceiver lanes, whose count and rate are the gateware's. */
#ifdef CSR_REMOTE_LINK_M_FRAMING_ADDR
#define LINK_ENDS 2
#else
#define LINK_ENDS 1
#endif
#ifdef CSR_REMOTE_CHANNEL_LANES_LOG2_ADDR
#define LINK_SIM_CHANNEL 1
#endif

struct link_settings {
    uint32_t lanes;     /* 1, 2, 4 or 8 */
    uint32_t block_ps;  /* one 66-bit block at the lane rate (the sim's channel; 0 on a board) */
    uint32_t delay;     /* one-way cycles: PHY TX + fiber + PHY RX (a board: its emulated fiber) */
    uint8_t  skew[LINK_MAX_LANES];   /* per-lane extra cycles */
    uint32_t max_units; /* units per frame at most, both ends (1..8) */
    uint32_t pairing;   /* two consecutive lines may share a header */
    uint32_t issue_rate;/* ReMAT streamer pacing, requests a cycle in 1/65536 (0: unlimited) */
};

/* -1 if lanes is not 1/2/4/8, -2 if max_units not 1..8; on a board -3 if lanes is not the gateware's
 * (LINK_LANES) or the delay beyond the fabric's delay line (none: 0). */
int  link_set(const struct link_settings *s);
void link_get(struct link_settings *s);
void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a);

/* Link reliability at each end (0: compute card, 1: memory card; an end this map lacks reads as zeros). */
/* Each end's reliability counters, one list (X-macro): (name in the console's JSON, CSR name at either end). */
#define RETRY_COUNTER_LIST(X) \
    X(replays, REPLAYS) X(timeouts, TIMEOUTS) X(replayed_txns, REPLAYED_TXNS) X(replayed_bytes, REPLAYED_BYTES) \
    X(window_stalls, WINDOW_STALLS) X(credit_stalls, CREDIT_STALLS) X(naks, NAKS) X(duplicates, DUPLICATES) \
    X(out_of_order, OUT_OF_ORDER) X(reinits, REINITS) X(down_cycles, DOWN_CYCLES) X(crc_errors, CRC_ERRORS) \
    X(frames, FRAMES) X(nak_replays, NAK_REPLAYS) X(deframer_overflow, DEFRAMER_OVERFLOW) \
    X(commit_overflow, COMMIT_OVERFLOW) X(resends, RESENDS) X(held, HELD) X(reinit_replays, REINIT_REPLAYS) \
    X(repairable, REPAIRABLE) X(repair_missed, REPAIR_MISSED) X(repaired, REPAIRED)
#define RETRY_COUNTER_INDEX(name, reg) RETRY_##reg,
enum { RETRY_COUNTER_LIST(RETRY_COUNTER_INDEX) RETRY_COUNTERS };
extern const char *const retry_counter_names[RETRY_COUNTERS];
struct retry_counters { uint32_t value[RETRY_COUNTERS]; };   /* indexed by RETRY_<reg> */
/* Both ends: the retry timer, replay on naks, selective repeat (1) or go-back-N (0), and under selective repeat the
 * repair of frames whose CRC names one flipped bit (1). */
void retry_set(uint32_t timeout, uint32_t nak, uint32_t selective, uint32_t repair);
void retry_get(uint32_t *timeout, uint32_t *nak, uint32_t *selective, uint32_t *repair);
/* Requests in flight toward the memory card's input FIFO (compute end's credit limit: 0, none, or LINK_REQUESTS_PER_CREDIT..LINK_MAX_CREDITS). */
void credits_set(uint32_t limit);
uint32_t credits_get(void);
void retry_counters(int end, struct retry_counters *c);
/* Each lane's losses of alignment at an end's receiver (held at 255; litex/cores/phy/align.py): the sim's
 * channel counts them for the direction the end receives, a board's bonding for its own lanes. */
void lane_losses(int end, uint32_t losses[LINK_MAX_LANES]);

/* Bring-up loopback (CHANNEL_LOOPBACK_*: none, near, far): the sim's channel loops the compute card's words back
 * to it from inside its PHY (near) or from the memory card's (far); a board's transceivers loop this card's words
 * back inside their PMA (near). -1 for a mode this map cannot set (a board: far, which is set at the far card). */
int lanes_loopback(uint32_t mode);

/* PRBS31 on the lanes: end 0 = compute card, 1 = memory card (end < LINK_ENDS); tx sends, rx checks. */
struct prbs_counters { uint64_t words; uint32_t errors[LINK_MAX_LANES]; uint32_t relocks; };
void prbs_enable(int end, int tx, int rx);
void prbs_clear(int end);
void prbs_counters(int end, struct prbs_counters *c);

#endif
