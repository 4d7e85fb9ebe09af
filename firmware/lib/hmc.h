/* HMC on the memory card (sim): the HMC link's FLIT time and one-way delay, its bit errors, counters. */
#ifndef MONET_HMC_H
#define MONET_HMC_H

#include <stdint.h>

struct hmc_settings {
    uint32_t flit_ps;      /* one 16 B FLIT on the link's lanes: width and lane rate */
    uint32_t delay;        /* one-way delay, cycles: SerDes halves plus fiber */
    uint64_t ber;          /* a FLIT is hit with probability ber / 2**40, either direction */
    uint32_t seed;
    uint32_t poison;       /* 1: the HMC answers reads of poison_line ERROR (an uncorrectable DRAM word) */
    uint32_t poison_line;  /* byte address / 64 */
};
/* The HMC's counters, one list (X-macro): (name in the console's JSON, CSR name, bits). */
#define HMC_COUNTER_LIST(X) \
    X(flits_down, FLITS_DOWN, 64) X(flits_up, FLITS_UP, 64) X(hits_down, HITS_DOWN, 32) \
    X(hits_up, HITS_UP, 32) X(rmw_writes, RMW_WRITES, 32) X(block_reads, BLOCK_READS, 32) \
    X(block_writes, BLOCK_WRITES, 32) X(errors, ERRORS, 32) X(poisoned, POISONED, 32) \
    X(host_crc_errors, HOST_CRC_ERRORS, 32) X(host_replays, HOST_REPLAYS, 32) \
    X(host_token_stalls, HOST_TOKEN_STALLS, 32) X(device_crc_errors, DEVICE_CRC_ERRORS, 32) \
    X(device_replays, DEVICE_REPLAYS, 32) X(device_token_stalls, DEVICE_TOKEN_STALLS, 32)
#define HMC_COUNTER_FIELD(name, reg, bits) uint##bits##_t name;
struct hmc_counters { HMC_COUNTER_LIST(HMC_COUNTER_FIELD) };

int hmc_present(void);                        /* the card was built with an HMC */
uint32_t hmc_max_delay(void);                 /* the longest one-way delay its channels hold, cycles */
void hmc_set(const struct hmc_settings *s, int reseed);
void hmc_get(struct hmc_settings *s);
void hmc_read_counters(struct hmc_counters *c);

#endif
