/* Console command of STREAM on the soft CPU: the four kernels on local RAM or remote memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"
#include "window.h"

#include "remat.h"
#include "stream_run.h"

/* stream mem=local|remote|cached n= reps= addr= corrupt=0|1 : STREAM's four kernels on 32-bit words, in local
 * RAM or in the remote window, uncached or cacheable (through the data cache and ReMAT's combiner). Cycles
 * per kernel (best, mean, worst over the repetitions after the first); the host turns them into MB/s. */
static void cmd_stream(struct args *a) {
    static const char *names[] = {"copy", "scale", "add", "triad"};
    const char *mem = arg_str(a, "mem", "local");
    uint32_t n = arg_u32(a, "n", 4096), reps = arg_u32(a, "reps", 10), off = arg_u32(a, "addr", 0);
    int local = !strcmp(mem, "local"), cached = !strcmp(mem, "cached");
    if (!local && !cached && strcmp(mem, "remote")) { error("mem must be local, remote or cached"); return; }
    if (n < 16 || reps < 2 || reps > 1000) { error("n must be >= 16 and reps 2..1000"); return; }
    uint32_t bytes = stream_footprint(n);
    if (local ? bytes > MAIN_RAM_SIZE : !window_ok(off, bytes) || (off & 63)) {
        error(local ? "3 arrays of n words must fit in local RAM" :
                      "addr must be 64-aligned and 3 arrays of n words must fit in the remote window");
        return;
    }
    struct remat_faults f0;
    remat_faults(&f0);
    static struct stream_run r;
    /* The cacheable window starts clean: nothing left in the data cache or the combiner from earlier
     * accesses through other paths; and what STREAM wrote is in remote memory when it ends. */
    if (cached) cached_window_clean();
    stream_run(local ? (uintptr_t)MAIN_RAM_BASE : cached ? (uintptr_t)remote_cached(off) : (uintptr_t)remote(off),
               n, reps, arg_u32(a, "corrupt", 0) != 0, &r);
    if (cached && combiner_fence(COMBINER_FENCE_POLLS)) { error(FENCE_STUCK); return; }
    printf("{\"mem\": \"%s\", \"addr\": %u, \"n\": %u, \"reps\": %u, \"word_bytes\": %u, \"kernels\": {",
           mem, (unsigned)(local ? 0 : off), (unsigned)n, (unsigned)reps, STREAM_WORD_BYTES);
    for (int k = 0; k < 4; k++)
        printf("%s\"%s\": {\"bytes\": %u, \"min_cycles\": %llu, \"sum_cycles\": %llu, \"max_cycles\": %llu}",
               k ? ", " : "", names[k], (unsigned)r.bytes[k],
               (unsigned long long)r.min_cycles[k], (unsigned long long)r.sum_cycles[k],
               (unsigned long long)r.max_cycles[k]);
    printf("}, \"cycles\": %llu, \"instret\": %llu, \"validates\": %s, \"bad\": [%u, %u, %u], ",
           (unsigned long long)r.cycles, (unsigned long long)r.instret, r.validates ? "true" : "false",
           (unsigned)r.bad[0], (unsigned)r.bad[1], (unsigned)r.bad[2]);
    print_faults(f0.count);
    printf("}\n");
}

define_command(stream, cmd_stream, "mem=local|remote|cached n=words reps=2..1000 addr= corrupt=0|1: STREAM, cycles per kernel");
