/* Console command of the programmable benchmark block: one run, waited out, with link occupancy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "link.h"
#include "pbb.h"

/* What is wrong with one block's count and outstanding (pool sets them a card), or NULL. */
const char *pbb_run_error(const struct pbb_settings *s) {
    if (s->outstanding < 1 || s->outstanding > REMOTE_TAGS) return "outstanding must be 1.." XSTR(REMOTE_TAGS) " (ReMAT's tags)";
    if (!s->direct && s->size_log2 == 7 && s->count % 2) return "count must be even for 128 B accesses (two line transactions each)";
    return NULL;
}

/* The benchmark block's settings from a command's arguments (pbb's and pool's): NULL, or what is wrong. */
const char *pbb_parse(struct args *a, struct pbb_settings *s, const char **op, const char **pattern) {
    static const struct { const char *name; uint32_t code; } ops[] = {
        {"read", PBB_MODE_READ}, {"write", PBB_MODE_WRITE}, {"mixed", PBB_MODE_MIXED}}, patterns[] = {
        {"seq", PBB_PATTERN_SEQ}, {"stride", PBB_PATTERN_STRIDE}, {"random", PBB_PATTERN_RANDOM}};
    *op = arg_str(a, "op", "read");
    *pattern = arg_str(a, "pattern", "seq");
    int mode_known = 0, pattern_known = 0;
    for (uint32_t i = 0; i < 3; i++) {
        if (!strcmp(*op, ops[i].name)) { s->mode = ops[i].code; mode_known = 1; }
        if (!strcmp(*pattern, patterns[i].name)) { s->pattern = patterns[i].code; pattern_known = 1; }
    }
    if (!mode_known) return "op must be read, write or mixed";
    if (!pattern_known) return "pattern must be seq, stride or random";
    s->read_ratio  = arg_u32(a, "ratio", 128);
    const char *mix = arg_str(a, "mix", "random");
    if (strcmp(mix, "random") && strcmp(mix, "even")) return "mix must be random or even";
    s->mix_even = !strcmp(mix, "even");
    s->base        = arg_u32(a, "addr", 0);
    s->span        = arg_u32(a, "span", 1u << 20);
    s->stride      = arg_u32(a, "stride", 256);
    s->count       = arg_u32(a, "count", 1000);
    s->outstanding = arg_u32(a, "outstanding", REMOTE_TAGS);
    s->seed        = arg_u32(a, "seed", 1);
    s->check       = arg_u32(a, "check", 0);
    s->shift       = arg_u32(a, "shift", 2);
    uint32_t size = arg_u32(a, "size", REMOTE_LINE_BYTES);
    s->size_log2 = 0;
    for (uint32_t n = 3; n <= 7; n++)
        if (size == 1u << n) s->size_log2 = n;
    if (!s->size_log2) return "size must be 8, 16, 32, 64 or 128 bytes";
    if (s->span < REMOTE_LINE_BYTES || (s->span & (s->span - 1))) return "span must be a power of two >= " XSTR(REMOTE_LINE_BYTES);
    if (!window_ok(s->base, s->span) || (s->base & (REMOTE_LINE_BYTES - 1))) return "addr/span must lie in the window, line aligned";
    if (s->stride % REMOTE_LINE_BYTES || s->stride >= s->span) return "stride must be a line multiple below span";
    s->direct = arg_u32(a, "direct", 0);
    if (s->direct > 1) return "direct must be 0 or 1";
#ifndef CSR_PBB_DIRECT_ADDR
    if (s->direct) return "direct=1 needs a benchmark block built with an HMC block port";
#endif
    if (s->direct && s->size_log2 != 7) return "direct=1 moves 128 B blocks: size must be 128";
    if (s->direct && (s->base | s->stride) % (2 * REMOTE_LINE_BYTES)) return "direct=1: addr and stride must be 128 B multiples";
    return pbb_run_error(s);
}

void print_pbb_run(const struct pbb_result *r) {
    printf("\"completed\": %u, \"cycles\": %llu, \"errors\": %u, \"bus_errors\": %u, \"lat_min\": %u, "
           "\"lat_max\": %u, \"lat_sum\": %llu", (unsigned)r->completed, (unsigned long long)r->cycles,
           (unsigned)r->errors, (unsigned)r->bus_errors, (unsigned)r->lat_min, (unsigned)r->lat_max,
           (unsigned long long)r->lat_sum);
}

/* pbb op=read|write|mixed [ratio=R mix=random|even] pattern=seq|stride|random addr= span= stride= count= outstanding=
 *     seed= check=0|1 shift= size= direct=0|1 : one run of the benchmark block, waited out, with link
 *     occupancy. direct=1: 128 B blocks on the HMC controller's block port (the HMC must be the memory). */
static void cmd_pbb(struct args *a) {
    struct pbb_settings s;
    const char *op, *pattern, *wrong = pbb_parse(a, &s, &op, &pattern);
    if (wrong) { error(wrong); return; }
    uint32_t fc, cc, fm, cm, a2b0, b2a0, a2b1, b2a1;
    link_counters(&fc, &cc, &fm, &cm, &a2b0, &b2a0);
    /* A run that stops making progress (a lost frame, until replay exists) ends here, reported. */
    uint32_t budget = arg_u32(a, "timeout", 2000000);
    uint64_t t0 = console_cycles();
    int timed_out = 0;
    pbb_start(&s);
    while (pbb_busy()) {
        if (console_cycles() - t0 > budget) { timed_out = 1; break; }
    }
    link_counters(&fc, &cc, &fm, &cm, &a2b1, &b2a1);
    struct pbb_result r;
    pbb_result(&r);
    printf("{\"timed_out\": %s, \"crc_errors_c\": %u, \"crc_errors_m\": %u, ", timed_out ? "true" : "false",
           (unsigned)cc, (unsigned)cm);
    printf("\"op\": \"%s\", \"pattern\": \"%s\", \"count\": %u, \"outstanding\": %u, ", op, pattern,
           (unsigned)s.count, (unsigned)s.outstanding);
    print_pbb_run(&r);
    printf(", \"shift\": %u, \"busy_a2b\": %u, \"busy_b2a\": %u, ", (unsigned)s.shift, (unsigned)(a2b1 - a2b0),
           (unsigned)(b2a1 - b2a0));
    print_samples("hist", r.hist, PBB_BUCKETS);
    printf("}\n");
}

define_card_command(pbb, cmd_pbb, "op=read|write|mixed ratio= mix=random|even pattern=seq|stride|random addr= span= stride= count= outstanding= seed= check= shift= size=8..128 direct=0|1 timeout=cycles");
