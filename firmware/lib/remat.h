/* ReMAT, link, channel and memory-card drivers (bare metal and Linux user space). */
#ifndef MONET_REMAT_H
#define MONET_REMAT_H

#include <stdint.h>

/* BFCT entry fields. */
#define BFCT_ENABLE (1u << 0)
#define BFCT_READ   (1u << 1)
#define BFCT_WRITE  (1u << 2)
#define BFCT_TARGET_SHIFT 3
#define BFCT_BASE_SHIFT   8

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

int  link_set(const struct link_settings *s);   /* -1 if lanes is not 1/2/4/8, -2 if max_units not 1..8 */
void link_get(struct link_settings *s);
void link_counters(uint32_t *frames_c, uint32_t *crc_c, uint32_t *frames_m, uint32_t *crc_m,
                   uint32_t *busy_a2b, uint32_t *busy_b2a);

void memcard_set_latency(uint32_t cycles);
uint32_t memcard_latency(void);

#endif
