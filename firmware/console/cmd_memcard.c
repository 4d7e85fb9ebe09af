/* Console command of the memory card: its counters. */
#include <stdio.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"

#include "memcard.h"

#ifdef MEMCARD_IN_MAP   /* a register map with the memory card */

/* memcard: what the card has served, the summed service time of its memory, DDR4 refreshes and the
 * requests that waited for one. */
static void cmd_memcard(struct args *a) {
    struct memcard_counters c;
    memcard_counters(&c);
    printf("{\"memory\": %u, \"reads\": %u, \"writes\": %u, \"errors\": %u, \"service_sum\": %u, "
           "\"service_count\": %u, \"refreshes\": %u, \"refresh_waits\": %u}\n", (unsigned)memcard_memory(),
           (unsigned)c.reads, (unsigned)c.writes, (unsigned)c.errors, (unsigned)c.service_sum,
           (unsigned)c.service_count, (unsigned)c.refreshes, (unsigned)c.refresh_waits);
}
define_command(memcard, cmd_memcard, "(counters: reads, writes, errors, service time, refreshes, refresh waits)");
#endif
