/* MONet-open driver HAL: how the drivers reach CSRs.
 * Bare metal (default): CSRs are memory-mapped at their generated addresses.
 * Linux user space (MONET_HAL_LINUX): the program provides monet_hal_read32/monet_hal_write32 (monet-ctl's:
 * an mmap of UIO or /dev/mem, or Etherbone through litex_server), called with the generated addresses. */
#ifndef MONET_HAL_H
#define MONET_HAL_H

#include <stdint.h>
#include <generated/csr.h>

#ifdef MONET_HAL_LINUX
uint32_t monet_hal_read32(uint32_t addr);
void monet_hal_write32(uint32_t addr, uint32_t v);
static inline uint32_t bus_read32(uint32_t addr) { return monet_hal_read32(addr); }
static inline void bus_write32(uint32_t addr, uint32_t v) { monet_hal_write32(addr, v); }
#else
static inline uint32_t bus_read32(uint32_t addr) { return *(volatile uint32_t *)(uintptr_t)addr; }
static inline void bus_write32(uint32_t addr, uint32_t v) { *(volatile uint32_t *)(uintptr_t)addr = v; }
#endif

/* The pooled model (pool.h's map, from the build): while a traffic card or the compute card's second link is
 * selected (card.h's card_select, the console's card= argument), the drivers' accesses to the compute card's
 * registers reach that card's (the second link's: its channel, its ends and the memory card behind it); those
 * of the memory card stay. A register the card lacks (POOL_ABSENT: 0) reads 0 and takes no write. */
#include "card.h"
#if POOL_CARDS
static inline uint32_t hal_read32(uint32_t addr) {
    if (card_selected) addr = card_address(addr);
    return addr ? bus_read32(addr) : 0;
}
static inline void hal_write32(uint32_t addr, uint32_t v) {
    if (card_selected) addr = card_address(addr);
    if (addr) bus_write32(addr, v);
}
#else
static inline uint32_t hal_read32(uint32_t addr) { return bus_read32(addr); }
static inline void hal_write32(uint32_t addr, uint32_t v) { bus_write32(addr, v); }
#endif

/* A CSR field by its generated CSR_<name>_OFFSET and _SIZE (LiteX's csr.h, from the gateware's CSRFields):
 * FIELD_PUT(REMOTE_LINK_C_FRAMING_PAIRING, 1) is the word with that field set, FIELD_GET takes it out. */
#define FIELD_MASK(f)       ((uint32_t)((1ull << CSR_##f##_SIZE) - 1))
#define FIELD_PUT(f, v)     (((uint32_t)(v) & FIELD_MASK(f)) << CSR_##f##_OFFSET)
#define FIELD_GET(f, word)  (((word) >> CSR_##f##_OFFSET) & FIELD_MASK(f))

/* LiteX splits wider CSRs into 32-bit words, most significant first. */
static inline uint64_t hal_read64(uint32_t addr) {
    uint64_t hi = hal_read32(addr), lo = hal_read32(addr + 4);
    return (hi << 32) | lo;
}
static inline void hal_write64(uint32_t addr, uint64_t v) {
    hal_write32(addr, (uint32_t)(v >> 32));
    hal_write32(addr + 4, (uint32_t)v);
}

#endif
