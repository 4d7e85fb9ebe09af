/* The pooled model's circuit switch (switch.h). Its registers are the SoC's own: no card selection reaches them. */
#include "monet_hal.h"
#include "switch.h"

#ifdef CSR_SWITCH_CONNECT_ADDR
void switch_connect(uint32_t card, uint32_t port) {
    bus_write32(CSR_SWITCH_CONNECT_ADDR, FIELD_PUT(SWITCH_CONNECT_CARD, card) | FIELD_PUT(SWITCH_CONNECT_PORT, port));
}

uint32_t switch_holder(uint32_t port) {
    for (uint32_t card = 0; card < POOL_SWITCH_CARDS; card++)
        if (switch_circuit(card) == port) return card;
    return SWITCH_NO_CIRCUIT;
}

void switch_set_setup(uint32_t cycles) { bus_write32(CSR_SWITCH_SETUP_ADDR, cycles); }
uint32_t switch_setup(void) { return bus_read32(CSR_SWITCH_SETUP_ADDR); }

uint32_t switch_circuit(uint32_t card) {
    return (bus_read32(CSR_SWITCH_CIRCUITS_ADDR) >> (card * CSR_SWITCH_CIRCUITS_CARD0_SIZE))
           & ((1u << CSR_SWITCH_CIRCUITS_CARD0_SIZE) - 1);
}

int switch_lit(uint32_t card) { return (bus_read32(CSR_SWITCH_LIT_ADDR) >> card) & 1; }
uint32_t switch_switches(void) { return bus_read32(CSR_SWITCH_SWITCHES_ADDR); }
uint32_t switch_refused(void) { return bus_read32(CSR_SWITCH_REFUSED_ADDR); }
#endif
