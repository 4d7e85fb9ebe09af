/* ReMAT driver: the BFCT, the fault latch, latency counters, the request timeout (bare metal and Linux user space). */
#ifndef MONET_REMAT_H
#define MONET_REMAT_H

#include <stdint.h>
#include <generated/csr.h>

/* A BFCT entry (its bits are the entry CSR's fields). */
struct bfct_entry {
    int enable, read, write;
    uint32_t target;  /* REMAT_TARGET_* (soc.h, from litex/cores/remat/codes.py) */
    uint32_t base;    /* remote section index */
};

struct remat_faults { uint32_t count, addr, kind; };

struct remat_latency { uint32_t last, min, max, count; uint64_t sum; };

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
#ifdef CSR_REMOTE_REMAT_HOLD_ADDR
/* The pooled model's cards: hold (1) keeps their masters' requests at ReMAT's ports, none taken; drained says the
 * requests taken before have all been answered. */
void remat_hold(uint32_t on);
int remat_drained(void);
#endif

#endif
