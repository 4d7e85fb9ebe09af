/* Which card the drivers reach in the pooled model: the compute card, or a traffic card whose registers are the
 * compute card's under its own prefix (pool.h's map, from the build). monet_hal.h turns each access while a
 * traffic card is selected; this unit uses no HAL itself. */
#ifndef MONET_CARD_H
#define MONET_CARD_H

#include <stdint.h>
#include <generated/pool.h>

/* -1 if `card` is above POOL_CARDS; afterwards the drivers reach that card's registers (0: the compute card's;
 * POOL_SECOND_LINK, where there is one: the compute card's second link and the memory card behind it). */
int card_select(uint32_t card);

#if POOL_CARDS
extern uint32_t card_selected;          /* 0: the compute card; 1..POOL_TRAFFIC_CARDS: a traffic card; then POOL_SECOND_LINK */
uint32_t card_address(uint32_t addr);   /* the selected card's address for `addr`, 0 where it has none */
#endif

#endif
