/* Memory card driver: its extra access latency (the memory model). */
#ifndef MONET_MEMCARD_H
#define MONET_MEMCARD_H

#include <stdint.h>

void memcard_set_latency(uint32_t cycles);
uint32_t memcard_latency(void);

#endif
