/* The pooled model's circuit switch (litex/cores/phy/switch.py): which memory-card port each card's circuit
 * reaches, its set-up time and what it counted. Card ports 0..POOL_SWITCH_CARDS-1 (the compute card's first link,
 * the traffic cards', the compute card's second link); memory-card ports 0..POOL_SWITCH_PORTS-1. */
#ifndef MONET_SWITCH_H
#define MONET_SWITCH_H

#include <stdint.h>
#include <generated/csr.h>
#include <generated/soc.h>

#ifdef CSR_SWITCH_CONNECT_ADDR
/* Moves card `card`'s circuit to port `port` (SWITCH_NO_CIRCUIT: down): dark for the set-up time, then lit. The
 * switch refuses (and counts) a port another card holds: switch_holder says which. */
void switch_connect(uint32_t card, uint32_t port);
/* The card whose circuit reaches `port`, SWITCH_NO_CIRCUIT if none does. */
uint32_t switch_holder(uint32_t port);
void switch_set_setup(uint32_t cycles);
uint32_t switch_setup(void);
uint32_t switch_circuit(uint32_t card);
int switch_lit(uint32_t card);
uint32_t switch_switches(void);
uint32_t switch_refused(void);
#endif

#endif
