/* Programmable benchmark block driver (bare metal and Linux user space). */
#ifndef MONET_PBB_H
#define MONET_PBB_H

#include <stdint.h>
#include <generated/soc.h>   /* PBB_BUCKETS; PBB_MODE_* and PBB_PATTERN_*, from litex/cores/pbb/codes.py */

struct pbb_settings {
    uint32_t mode, read_ratio, pattern, base, span, stride, count, outstanding, seed, check, shift, size_log2;
    uint32_t direct;   /* 128 B blocks on the HMC controller's block port (count counts blocks) */
    uint32_t mix_even; /* mixed: reads spread evenly instead of at random */
};

struct pbb_result {
    uint64_t cycles, lat_sum;
    uint32_t completed, errors, bus_errors, lat_min, lat_max;
    uint32_t hist[PBB_BUCKETS];
};

void pbb_configure(const struct pbb_settings *s);   /* the settings, read as the run starts */
void pbb_go(void);                                  /* starts a run with the settings configured */
void pbb_start(const struct pbb_settings *s);       /* both */
int  pbb_busy(void);
void pbb_result(struct pbb_result *r);

#endif
