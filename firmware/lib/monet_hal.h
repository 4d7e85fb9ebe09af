/* MONet-open driver HAL: how the drivers reach CSRs.
 * Bare metal (default): CSRs are memory-mapped at their generated addresses.
 * Linux user space defines MONET_HAL_LINUX and provides monet_hal_base (an mmap of /dev/mem or UIO). */
#ifndef MONET_HAL_H
#define MONET_HAL_H

#include <stdint.h>
#include <generated/csr.h>

#ifdef MONET_HAL_LINUX
extern volatile uint8_t *monet_hal_base; /* mapping of CSR_BASE */
#define MONET_CSR_PTR(addr) ((volatile uint32_t *)(monet_hal_base + ((addr) - CSR_BASE)))
#else
#define MONET_CSR_PTR(addr) ((volatile uint32_t *)(uintptr_t)(addr))
#endif

static inline uint32_t hal_read32(uint32_t addr) { return *MONET_CSR_PTR(addr); }
static inline void hal_write32(uint32_t addr, uint32_t v) { *MONET_CSR_PTR(addr) = v; }
/* LiteX splits wider CSRs into 32-bit words, most significant first. */
static inline uint64_t hal_read64(uint32_t addr) {
    uint64_t hi = hal_read32(addr), lo = hal_read32(addr + 4);
    return (hi << 32) | lo;
}

#endif
