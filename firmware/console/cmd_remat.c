/* Console commands of ReMAT that reach it through CSRs: the BFCT, the fault latch, the combiner of the
 * cacheable window (the commands that access the window itself are firmware/app/cmd_access.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "combiner.h"
#include "remat.h"

static void print_bfct(uint32_t idx) {
    struct bfct_entry e;
    bfct_read(idx, &e);
    printf("{\"idx\": %u, \"en\": %d, \"r\": %d, \"w\": %d, \"target\": %u, \"base\": %u}\n",
           (unsigned)idx, e.enable, e.read, e.write, (unsigned)e.target, (unsigned)e.base);
}

/* bfct idx=I [en=0|1 r=0|1 w=0|1 target=T base=B]: with any field, programs the entry. */
static void cmd_bfct(struct args *a) {
    uint32_t idx = arg_u32(a, "idx", REMOTE_SECTIONS);
    if (idx >= REMOTE_SECTIONS) { error("idx must be below the number of sections"); return; }
    if (a->n > 1) {
        struct bfct_entry e;
        bfct_read(idx, &e);
        e.enable = arg_u32(a, "en", e.enable);
        e.read   = arg_u32(a, "r", e.read);
        e.write  = arg_u32(a, "w", e.write);
        e.target = arg_u32(a, "target", e.target);
        e.base   = arg_u32(a, "base", e.base);
        bfct_write(idx, &e);
    }
    print_bfct(idx);
}

static void cmd_faults(struct args *a) {
    (void)a;
    struct remat_faults f;
    remat_faults(&f);
    printf("{\"faults\": %u, \"fault_addr\": %u, \"fault_kind\": %u, \"requests\": %u}\n",
           (unsigned)f.count, (unsigned)f.addr, (unsigned)f.kind, (unsigned)remat_requests());
}

define_card_command(bfct, cmd_bfct, "idx= [en= r= w= target= base=]");
define_card_command(faults, cmd_faults, "fault counter and latch");

#ifdef CSR_COMBINER_BASE   /* the sim's cacheable window */
/* combiner [fetch_lines=1|2] [fence=1]: sets the read buffer's fetch size, fences; its counters. */
static void cmd_combiner(struct args *a) {
    uint32_t lines = arg_u32(a, "fetch_lines", combiner_fetch_lines());
    if (lines < 1 || lines > 2) { error("fetch_lines must be 1 or 2"); return; }
    combiner_set_fetch_lines(lines);
    int fenced = arg_u32(a, "fence", 0) ? combiner_fence(COMBINER_FENCE_POLLS) : 0;
    if (fenced) { error(FENCE_STUCK); return; }
    struct combiner_counters c;
    combiner_counters(&c);
    printf("{\"fetch_lines\": %u, \"read_hits\": %u, \"fetches\": %u, \"write_lines\": %u, \"write_words\": %u, "
           "\"write_errors\": %u}\n", (unsigned)lines, (unsigned)c.read_hits, (unsigned)c.fetches,
           (unsigned)c.write_lines, (unsigned)c.write_words, (unsigned)c.write_errors);
}
define_command(combiner, cmd_combiner, "fetch_lines=1|2 fence=0|1: the cacheable window's combiner and its counters");
#endif
