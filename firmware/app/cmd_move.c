/* `move`: a traffic card's memory moved to another memory card while its benchmark block runs (the pooled
 * model's circuit switch). The CPU does the copy: firmware/app, not monet-ctl, which reaches no window. */
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

#include "card.h"
#include "pbb.h"
#include "pool.h"
#include "remat.h"
#include "switch.h"

#if defined(CSR_SWITCH_CONNECT_ADDR) && defined(CSR_REMOTE_REMAT_HOLD_ADDR) && POOL_TRAFFIC_CARDS
/* Cycles since `t0` passed the budget: the phase gives up, and the answer says which. */
static int late(uint64_t t0, uint32_t budget) { return console_cycles() - t0 > budget; }

/* move card=N port=P section=S base=B src=OFF dst=OFF bytes=N [the pbb's settings] [timeout=cycles] (a card
 * command: the console has selected card N; the copy and the switch are the compute card's):
 * traffic card N's benchmark block starts with the settings and runs through the move. The CPU copies `bytes`
 * from window offset `src` to `dst` (the cacheable window: line reads, combined line writes; the compute card's
 * BFCT maps them onto the card's old memory and its new one), then holds card N at its ReMAT; once what it had
 * in flight is answered, its BFCT section S is pointed at base B and its circuit moved to port P; once the
 * circuit is lit the hold ends, and the run is waited out. Answers each phase's cycles and the run. */
static void cmd_move(struct args *a) {
    static char message[120];
    struct pbb_settings s;
    const char *op, *pattern, *wrong = pbb_parse(a, &s, &op, &pattern);
    if (wrong || (wrong = pbb_run_error(&s))) { error(wrong); return; }
    uint32_t card = arg_u32(a, "card", 0), port = arg_u32(a, "port", 0), section = arg_u32(a, "section", 0);
    uint32_t base = arg_u32(a, "base", 0), from = arg_u32(a, "src", 0), to = arg_u32(a, "dst", 0);
    uint32_t bytes = arg_u32(a, "bytes", 0), budget = arg_u32(a, "timeout", 100000000);
    if (card < 1 || card > POOL_TRAFFIC_CARDS) {
        error("card must be 1.." XSTR(POOL_TRAFFIC_CARDS) " (a traffic card: the compute card's CPU copies)"); return;
    }
    if (port >= POOL_SWITCH_PORTS) {
        snprintf(message, sizeof message, "port must be 0..%u (the memory cards' ports)", POOL_SWITCH_PORTS - 1);
        error(message); return;
    }
    uint32_t holder = switch_holder(port);
    if (holder != SWITCH_NO_CIRCUIT) {
        snprintf(message, sizeof message, "port %u is link %u's: the card moves to a free port", (unsigned)port,
                 (unsigned)holder);
        error(message); return;
    }
    if (section >= REMOTE_SECTIONS) { error("section must be 0.." XSTR(REMOTE_SECTIONS) " - 1 (the card's BFCT)"); return; }
    if (!bytes || (bytes | from | to) % REMOTE_LINE_BYTES || !window_ok(from, bytes) || !window_ok(to, bytes)) {
        error("src=, dst= and bytes= must be whole lines (64 B) inside the remote window, bytes at least one");
        return;
    }
    struct bfct_entry entry;
    card_select(card);
    bfct_read(section, &entry);
    pbb_configure(&s);
    pbb_go();
    card_select(0);
    uint64_t t0 = console_cycles();
    cached_window_clean();
    volatile uint32_t *source = remote_cached(from), *dest = remote_cached(to);
    for (uint32_t i = 0; i < bytes / 4; i++) dest[i] = source[i];
    int fenced = combiner_fence(COMBINER_FENCE_POLLS) == 0;
    uint64_t t1 = console_cycles(), t2 = 0, t3 = 0, t4 = 0;
    const char *stuck = fenced ? NULL : "copy";
    card_select(card);
    remat_hold(1);
    while (!stuck && !remat_drained()) if (late(t1, budget)) stuck = "drain";
    t2 = console_cycles();
    if (!stuck) {
        entry.base = base;
        bfct_write(section, &entry);
        card_select(0);
        switch_connect(card, port);
        t3 = console_cycles();
        while (!switch_lit(card)) if (late(t3, budget)) { stuck = "switch"; break; }
        t4 = console_cycles();
        card_select(card);
    }
    remat_hold(0);   /* whatever happened: the card is never left held */
    uint64_t t5 = console_cycles();
    while (pbb_busy()) if (late(t5, budget)) { stuck = stuck ? stuck : "run"; break; }
    struct pbb_result r;
    pbb_result(&r);
    card_select(0);
    printf("{\"stuck\": %s%s%s, \"card\": %u, \"port\": %u, \"bytes\": %u, \"copy_cycles\": %llu, "
           "\"drain_cycles\": %llu, \"switch_cycles\": %llu, \"held_cycles\": %llu, \"setup\": %u, \"run\": ",
           stuck ? "\"" : "", stuck ? stuck : "null", stuck ? "\"" : "", (unsigned)card, (unsigned)port,
           (unsigned)bytes, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1),
           (unsigned long long)(t4 - t3), (unsigned long long)(t5 - t1), (unsigned)switch_setup());
    printf("{");
    print_pbb_run(&r);
    printf(", ");
    print_samples("hist", r.hist, PBB_BUCKETS);
    printf("}}\n");
}
#else
#define NOT_SWITCHED "this SoC has no circuit switch: `move` is the pooled model's (monet sim build --model pooled)"
static void cmd_move(struct args *a) { error(NOT_SWITCHED); }
#endif

define_card_command(move, cmd_move, "port=P section=S base=B src= dst= bytes= op=read|write|mixed pattern=seq|stride|random addr= span= count= outstanding= seed= check= shift= timeout=cycles: a traffic card's memory moved while it runs (pooled model)");
