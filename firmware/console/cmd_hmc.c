/* Console command of the memory card's HMC: its link's settings, bit errors and counters. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"

#include "hmc.h"
#include "memcard.h"

#ifdef MEMCARD_IN_MAP   /* a register map with the memory card */

/* hmc [flit_ps=P] [delay=C] [ber=T] [seed=S] [poison=0|1 line=N]: the HMC link's FLIT time (width and lane
 * rate), one-way delay (SerDes and fiber), FLIT error threshold (/2**40) and error seed, and a poisoned line
 * (N: byte address / 64) whose reads the HMC answers ERROR; answers them with the counters. */
static void cmd_hmc(struct args *a) {
    if (!hmc_present()) { error("this memory card has no HMC"); return; }
    struct hmc_settings s;
    hmc_get(&s);
    s.flit_ps = arg_u32(a, "flit_ps", s.flit_ps);
    s.delay   = arg_u32(a, "delay", s.delay);
    const char *ber = arg_str(a, "ber", NULL);
    if (ber) s.ber = strtoull(ber, NULL, 0);
    const char *seed = arg_str(a, "seed", NULL);
    if (seed) s.seed = strtoul(seed, NULL, 0);
    s.poison      = arg_u32(a, "poison", s.poison);
    s.poison_line = arg_u32(a, "line", s.poison_line);
    if (s.flit_ps == 0 || s.flit_ps > 65535) { error("flit_ps must be 1..65535"); return; }
    if (s.delay < 1 || s.delay > hmc_max_delay()) {
        printf("{\"error\": \"delay must be 1..%u cycles\"}\n", (unsigned)hmc_max_delay());
        return;
    }
    if (s.ber >> 40) { error("ber must be below 2**40"); return; }
    if (s.poison > 1) { error("poison must be 0 or 1"); return; }
    if (s.poison_line >> 28) { error("line must be below 2**28 (the HMC's 34-bit byte address / 64)"); return; }
    hmc_set(&s, seed != NULL);
    struct hmc_counters c;
    hmc_read_counters(&c);
    printf("{\"flit_ps\": %u, \"delay\": %u, \"ber\": %llu, \"seed\": %u, \"poison\": %u, \"line\": %u",
           (unsigned)s.flit_ps, (unsigned)s.delay, (unsigned long long)s.ber, (unsigned)s.seed, (unsigned)s.poison,
           (unsigned)s.poison_line);
#define HMC_COUNTER_PRINT(name, reg, bits) printf(", \"" #name "\": %llu", (unsigned long long)c.name);
    HMC_COUNTER_LIST(HMC_COUNTER_PRINT)
    printf("}\n");
}
define_command(hmc, cmd_hmc, "[flit_ps= delay= ber=T (FLIT hit /2**40) seed= poison=0|1 line=N] and counters");
#endif
