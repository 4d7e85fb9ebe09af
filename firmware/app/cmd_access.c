/* Console commands that access ReMAT's remote window from the soft CPU: single accesses, seeded fills and
 * checks, timed accesses, the pointer chase (firmware only; ReMAT's CSR commands are in
 * firmware/console/cmd_remat.c). */
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

#include "cpu_counters.h"
#include "remat.h"

static uint32_t cpu_samples[CONSOLE_MAX_SAMPLES], hw_samples[CONSOLE_MAX_SAMPLES];

/* rd addr=OFF / wr addr=OFF val=V : one 32-bit access at a window offset. */
static void cmd_access(struct args *a, int write) {
    uint32_t off = arg_u32(a, "addr", 0);
    if (!window_ok(off, 4)) { error("addr must be a 4-aligned offset inside the remote window"); return; }
    struct remat_faults f0;
    remat_faults(&f0);
    uint32_t val = arg_u32(a, "val", 0);
    if (write) *remote(off) = val; else val = *remote(off);
    printf("{\"addr\": %u, \"val\": %u, ", (unsigned)off, (unsigned)val);
    print_faults(f0.count);
    printf("}\n");
}

/* fill / check addr=OFF bytes=B seed=S cached=0|1 : seeded pseudo-random words, through the uncached window
 * or the cacheable one (a check there starts from an empty data cache and combiner; a fill there ends with
 * its words in remote memory). */
TIMED_CODE(fill) static void cmd_fill_check(struct args *a, int check) {
    uint32_t off = arg_u32(a, "addr", 0), bytes = arg_u32(a, "bytes", 4096), seed = arg_u32(a, "seed", 1);
    uint32_t cached = arg_u32(a, "cached", 0);
    if (!window_ok(off, bytes)) { error("addr/bytes must lie inside the remote window, 4-aligned"); return; }
    if (cached > 1) { error("cached must be 0 or 1"); return; }
    struct remat_faults f0;
    remat_faults(&f0);
    volatile uint32_t *words = cached ? remote_cached(off) : remote(off);
    if (cached && check) cached_window_clean();
    uint32_t s = pattern_seed(seed ^ off), errors = 0, first_bad = 0xffffffffu;
    uint32_t t0 = rdcycle32();
    for (uint32_t i = 0; i < bytes; i += 4) {
        uint32_t want = pattern_next(&s);
        if (check) {
            if (words[i / 4] != want) { if (!errors) first_bad = off + i; errors++; }
        } else {
            words[i / 4] = want;
        }
    }
    if (cached && !check && combiner_fence(COMBINER_FENCE_POLLS)) { error(FENCE_STUCK); return; }
    uint32_t cycles = rdcycle32() - t0;
    printf("{\"addr\": %u, \"bytes\": %u, \"seed\": %u, \"errors\": %u, \"first_bad\": %d, \"cycles\": %u, ",
           (unsigned)off, (unsigned)bytes, (unsigned)seed, (unsigned)errors,
           errors ? (int)first_bad : -1, (unsigned)cycles);
    print_faults(f0.count);
    printf("}\n");
}

/* One timed access. A store retires before its bus cycle ends, so an uncached load follows it: a CSR read,
 * which waits for the data bus, free only once the remote write is acknowledged. (A load from local SRAM
 * would hit the data cache and not wait: the write would look free.) */
TIMED_CODE(access) static uint32_t timed_access(volatile uint32_t *p, int write, uint32_t value) {
    uint32_t start, end, v;
    if (write) {
        start = rdcycle32(); *p = value; v = hal_read32(CSR_REMOTE_REMAT_REQUESTS_ADDR); __asm__ volatile("" :: "r"(v));
        end = rdcycle32();
    } else {
        start = rdcycle32(); v = *p; __asm__ volatile("" :: "r"(v)); end = rdcycle32();
    }
    return end - start;
}

/* lat op=read|write addr=OFF n=K stride=S : K single accesses, CPU cycles and ReMAT cycles of each.
 * cpu_cycles exclude what the same sequence costs on local SRAM (`local_cycles`). */
TIMED_CODE(lat) static void cmd_lat(struct args *a) {
    const char *op = arg_str(a, "op", "read");
    int write = !strcmp(op, "write");
    if (!write && strcmp(op, "read")) { error("op must be read or write"); return; }
    uint32_t off = arg_u32(a, "addr", 0), n = arg_u32(a, "n", 100), stride = arg_u32(a, "stride", REMOTE_LINE_BYTES);
    if (n == 0 || n > CONSOLE_MAX_SAMPLES) { error("n must be 1.." XSTR(CONSOLE_MAX_SAMPLES)); return; }
    if (!window_ok(off, (n - 1) * stride + 4) || (stride & 3)) { error("accesses must lie inside the remote window"); return; }
    struct remat_faults f0;
    remat_faults(&f0);
    static volatile uint32_t local_target;
    uint32_t local = 0xffffffffu;
    for (int i = 0; i < 8; i++) {
        uint32_t c = timed_access(&local_target, write, i);
        if (c < local) local = c;
    }
    for (uint32_t i = 0; i < n; i++) {
        cpu_samples[i] = timed_access(remote(off + i * stride), write, i) - local;
        hw_samples[i]  = hal_read32(CSR_REMOTE_REMAT_LAT_LAST_ADDR);
    }
    printf("{\"op\": \"%s\", \"n\": %u, \"local_cycles\": %u, ", op, (unsigned)n, (unsigned)local);
    print_samples("cpu_cycles", cpu_samples, n);
    printf(", ");
    print_samples("hw_cycles", hw_samples, n);
    printf(", ");
    print_faults(f0.count);
    printf("}\n");
}

/* chase addr=OFF lines=L n=K seed=S : dependent loads around a seeded random cycle of L lines. */
TIMED_CODE(chase) static void cmd_chase(struct args *a) {
    uint32_t off = arg_u32(a, "addr", 0), lines = arg_u32(a, "lines", 256), n = arg_u32(a, "n", 1000);
    uint32_t seed = arg_u32(a, "seed", 1);
    if (lines < 2 || lines > CONSOLE_MAX_SAMPLES) { error("lines must be 2.." XSTR(CONSOLE_MAX_SAMPLES)); return; }
    if (!window_ok(off, lines * REMOTE_LINE_BYTES)) { error("the chain must lie inside the remote window"); return; }
    /* Sattolo's algorithm: a single cycle through every line. */
    static uint32_t order[CONSOLE_MAX_SAMPLES];
    uint32_t s = pattern_seed(seed);
    for (uint32_t i = 0; i < lines; i++) order[i] = i;
    for (uint32_t i = lines - 1; i > 0; i--) {
        uint32_t j = pattern_next(&s) % i, t = order[i];
        order[i] = order[j]; order[j] = t;
    }
    for (uint32_t i = 0; i < lines; i++)
        *remote(off + order[i] * REMOTE_LINE_BYTES) = REMOTE_BASE + off + order[(i + 1) % lines] * REMOTE_LINE_BYTES;
    remat_latency_clear();
    uint32_t p = REMOTE_BASE + off + order[0] * REMOTE_LINE_BYTES;
    uint64_t c0 = rd64(0), i0 = rd64(1);
    for (uint32_t i = 0; i < n; i++) p = *(volatile uint32_t *)p;
    uint64_t cycles = rd64(0) - c0, instret = rd64(1) - i0;
    struct remat_latency l;
    remat_latency(&l);
    printf("{\"lines\": %u, \"n\": %u, \"cycles\": %u, \"instret\": %u, \"cycles_per_load\": %u, "
           "\"hw_min\": %u, \"hw_max\": %u, \"hw_sum\": %u, \"hw_count\": %u, \"end\": %u}\n",
           (unsigned)lines, (unsigned)n, (unsigned)cycles, (unsigned)instret, (unsigned)(cycles / n),
           (unsigned)l.min, (unsigned)l.max, (unsigned)l.sum, (unsigned)l.count, (unsigned)p);
}

static void cmd_rd(struct args *a) { cmd_access(a, 0); }
static void cmd_wr(struct args *a) { cmd_access(a, 1); }
static void cmd_fill(struct args *a) { cmd_fill_check(a, 0); }
static void cmd_check(struct args *a) { cmd_fill_check(a, 1); }

define_command(rd, cmd_rd, "addr=");
define_command(wr, cmd_wr, "addr= val=");
define_command(fill, cmd_fill, "addr= bytes= seed= cached=0|1");
define_command(check, cmd_check, "addr= bytes= seed= cached=0|1");
define_command(lat, cmd_lat, "op=read|write addr= n= stride=");
define_command(chase, cmd_chase, "addr= lines= n= seed=");
