/* Console command of the memory card: its counters. */
#include <stdio.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"

#include "memcard.h"

#ifdef MEMCARD_IN_MAP   /* a register map with the memory card */

/* memcard [poison=0|1 line=N]: a poisoned line (its reads answered with an error: fault injection); what the
 * card has served, the summed service time of its memory, DDR4 refreshes and the requests that waited. */
static void cmd_memcard(struct args *a) {
    uint32_t line, poison = memcard_poison(&line);
    poison = arg_u32(a, "poison", poison);
    line = arg_u32(a, "line", line);
    if (poison > 1) { error("poison must be 0 or 1"); return; }
    memcard_set_poison(poison, line);
    struct memcard_counters c;
    memcard_counters(&c);
    printf("{\"memory\": %u, \"poison\": %u, \"line\": %u, \"reads\": %u, \"writes\": %u, \"errors\": %u, "
           "\"poisoned\": %u, \"service_sum\": %u, \"service_count\": %u, \"refreshes\": %u, "
           "\"refresh_waits\": %u}\n",
           (unsigned)memcard_memory(), (unsigned)poison, (unsigned)line, (unsigned)c.reads, (unsigned)c.writes,
           (unsigned)c.errors, (unsigned)c.poisoned, (unsigned)c.service_sum, (unsigned)c.service_count,
           (unsigned)c.refreshes, (unsigned)c.refresh_waits);
}
define_command(memcard, cmd_memcard, "[poison=0|1 line=N] (counters: reads, writes, errors, poisoned, service time, "
                                     "refreshes, refresh waits)");
#endif
