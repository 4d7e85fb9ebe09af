/* Memory card driver. */
#include "monet_hal.h"
#include "memcard.h"

void memcard_set_latency(uint32_t cycles) { hal_write32(CSR_REMOTE_MEMCARD_LATENCY_ADDR, cycles); }
uint32_t memcard_latency(void) { return hal_read32(CSR_REMOTE_MEMCARD_LATENCY_ADDR); }
