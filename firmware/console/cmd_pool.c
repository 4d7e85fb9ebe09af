/* Console commands of the pooled model: the memory card's ports, and the cards' benchmark blocks run together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "memcard.h"
#include "pbb.h"
#include "pool.h"
#include "switch.h"

#ifdef MEMCARD_IN_MAP   /* a register map with the memory card (the sim's models; a board's memory card) */

#define NOT_POOLED "this SoC has one requester: the memory card's ports and the traffic cards are the pooled model's (monet sim build --model pooled)"

#if POOL_PORTS
static void print_u64(const char *name, uint64_t v) { printf("\"%s\": %llu", name, (unsigned long long)v); }

/* ports [port=N share= first= last=] [hist_shift=] [in_flight=]: sets what is given of port N (port 0: the compute
 * card's, port i: traffic card i's), the histograms' bucket width and the card's requests in flight at most;
 * answers them with every port's share, range (lines: byte address / 64) and counters. */
static void cmd_ports(struct args *a) {
    /* Everything checked before anything is written: a refused line changes nothing. */
    const char *port = arg_str(a, "port", NULL), *shift = arg_str(a, "hist_shift", NULL);
    const char *in_flight = arg_str(a, "in_flight", NULL), *v;
    uint32_t p = 0, share = 0, hist_shift = arg_u32(a, "hist_shift", 0), limit = arg_u32(a, "in_flight", 1);
    uint64_t first = 0, last = 0;
    if (port) {
        char *end;
        p = strtoul(port, &end, 0);
        if (end == port || *end || p >= POOL_PORTS) { error("port must be 0.." XSTR(POOL_TRAFFIC_CARDS)); return; }
        port_get(p, &share, &first, &last);
        if ((v = arg_str(a, "first", NULL))) first = strtoull(v, NULL, 0);
        if ((v = arg_str(a, "last", NULL))) last = strtoull(v, NULL, 0);
        share = arg_u32(a, "share", share);
        if (share > 15) { error("share must be 0..15 (requests a turn; 0 counts as 1)"); return; }
        if ((first | last) >> 36) { error("first= and last= must be lines 0..2**36-1 (first above last: none)"); return; }
    } else if (arg_str(a, "share", NULL) || arg_str(a, "first", NULL) || arg_str(a, "last", NULL)) {
        error("share=, first= and last= set one port: give port=0.." XSTR(POOL_TRAFFIC_CARDS)); return;
    }
    if (shift && hist_shift > 31) { error("hist_shift must be 0..31"); return; }
    if (in_flight && (limit < 1 || limit > REMOTE_TAGS)) {
        error("in_flight must be 1.." XSTR(REMOTE_TAGS) " (the memory card's tags)"); return;
    }
    if (port) port_set(p, share, first, last);
    if (shift) ports_set_hist_shift(hist_shift);
    if (in_flight) ports_set_in_flight(limit);
    printf("{\"hist_shift\": %u, \"in_flight\": %u, \"ports\": [", (unsigned)ports_hist_shift(),
           (unsigned)ports_in_flight());
    for (uint32_t p = 0; p < POOL_PORTS; p++) {
        uint32_t share;
        uint64_t first, last;
        struct port_counters c;
        port_get(p, &share, &first, &last);
        port_counters(p, &c);
        printf("%s{\"share\": %u, ", p ? ", " : "", (unsigned)share);
        print_u64("first", first);
        printf(", ");
        print_u64("last", last);
        printf(", \"reads\": %u, \"writes\": %u, \"refused\": %u, \"stalls\": %u, \"latency_count\": %u, ",
               (unsigned)c.reads, (unsigned)c.writes, (unsigned)c.refused, (unsigned)c.stalls,
               (unsigned)c.latency_count);
        print_u64("latency_sum", c.latency_sum);
        printf(", ");
        print_samples("hist", c.hist, PORTS_BUCKETS);
        printf("}");
    }
    printf("]}\n");
}

/* The numbers of "a,b,.." in `out`, at most `max`: how many, or -1 (an empty or non-numeric item, or more). */
static int numbers(const char *text, uint32_t *out, uint32_t max) {
    char *p = (char *)text, *end;
    uint32_t got = 0;
    while (*p && got < max) {
        out[got++] = strtoul(p, &end, 0);
        if (end == p) return -1;
        p = end;
        if (*p == ',') p++;
    }
    return *p ? -1 : (int)got;
}

/* A list argument: `n` values, one for each card ("a,b,.."), or one for all; -1 if it has another count. */
static int arg_list(struct args *a, const char *key, uint32_t def, uint32_t *out, uint32_t n) {
    const char *v = arg_str(a, key, NULL);
    if (!v) { for (uint32_t i = 0; i < n; i++) out[i] = def; return 0; }
    int got = numbers(v, out, n);
    if (got == 1) for (uint32_t i = 1; i < n; i++) out[i] = out[0];
    else if (got != (int)n) return -1;
    return 0;
}

static void lines_moved(uint32_t *lines) {
    for (uint32_t p = 0; p < POOL_PORTS; p++) lines[p] = port_lines(p);
}

/* pool cards=0,1,.. [the pbb's settings] count=a,b,.. outstanding=a,b,.. : the cards' benchmark blocks started
 * together, in the order of cards= (card c's seed: seed + c), each with its own count and outstanding (one value:
 * all the same). Answers each card's run and, for the window from the last start to the first card's last request
 * taken at the memory card (every card busy), the lines each memory card port moved and the window's cycles. */
#define CARDS_ACCEPTED "cards= takes a list of different cards, each 0.." XSTR(POOL_TRAFFIC_CARDS)

static void cmd_pool(struct args *a) {
    struct pbb_settings s, each[POOL_PORTS];
    const char *op, *pattern, *wrong = pbb_parse(a, &s, &op, &pattern);
    if (wrong) { error(wrong); return; }
    uint32_t cards[POOL_PORTS], counts[POOL_PORTS], outstanding[POOL_PORTS], n = 0;
    const char *list = arg_str(a, "cards", NULL);
    if (!list) { for (n = 0; n < POOL_PORTS; n++) cards[n] = n; }
    else {
        int got = numbers(list, cards, POOL_PORTS);
        if (got < 1) { error(CARDS_ACCEPTED); return; }
        for (n = 0; n < (uint32_t)got; n++) {
            if (cards[n] >= POOL_PORTS) { error(CARDS_ACCEPTED); return; }
            for (uint32_t i = 0; i < n; i++) if (cards[i] == cards[n]) { error(CARDS_ACCEPTED); return; }
        }
    }
    if (arg_list(a, "count", s.count, counts, n)) { error("count= takes one number, or one a card of cards="); return; }
    if (arg_list(a, "outstanding", s.outstanding, outstanding, n)) {
        error("outstanding= takes one number, or one a card of cards="); return;
    }
    for (uint32_t i = 0; i < n; i++) {
        each[i] = s;
        each[i].count = counts[i];
        each[i].outstanding = outstanding[i];
        each[i].seed = s.seed + cards[i];
        if ((wrong = pbb_run_error(&each[i]))) { error(wrong); return; }
    }
    uint32_t budget = arg_u32(a, "timeout", 20000000);
    uint32_t before[POOL_PORTS], after[POOL_PORTS], started[POOL_PORTS];
    for (uint32_t i = 0; i < n; i++) {
        card_select(cards[i]);
        pbb_configure(&each[i]);
    }
    lines_moved(started);
    for (uint32_t i = 0; i < n; i++) {   /* the starts back to back: some tens of cycles apart */
        card_select(cards[i]);
        pbb_go();
    }
    card_select(0);
    uint64_t t0 = console_cycles(), t1 = 0;
    lines_moved(before);
    int timed_out = 0, busy;
    do {   /* the window ends as the first card's last request is taken (its answers still to come: every
            * card is busy to then), or as a card is done (one whose requests were refused); the others run out */
        busy = 0;
        for (uint32_t i = 0; i < n; i++) {
            card_select(cards[i]);
            busy += pbb_busy();
            card_select(0);
            if (!t1 && port_lines(cards[i]) - started[cards[i]] >= each[i].count) {
                t1 = console_cycles();
                lines_moved(after);
            }
        }
        if (!t1 && busy < (int)n) { t1 = console_cycles(); lines_moved(after); }
        if (console_cycles() - t0 > budget) { timed_out = 1; break; }
    } while (busy);
    if (!t1) { t1 = console_cycles(); lines_moved(after); }
    printf("{\"timed_out\": %s, \"op\": \"%s\", \"pattern\": \"%s\", \"window_cycles\": %llu, \"window_lines\": [",
           timed_out ? "true" : "false", op, pattern, (unsigned long long)(t1 - t0));
    for (uint32_t p = 0; p < POOL_PORTS; p++) printf("%s%u", p ? ", " : "", (unsigned)(after[p] - before[p]));
    printf("], \"runs\": [");
    for (uint32_t i = 0; i < n; i++) {
        struct pbb_result r;
        card_select(cards[i]);
        pbb_result(&r);
        card_select(0);
        printf("%s{\"card\": %u, \"count\": %u, \"outstanding\": %u, ", i ? ", " : "", (unsigned)cards[i],
               (unsigned)each[i].count, (unsigned)each[i].outstanding);
        print_pbb_run(&r);
        printf(", ");
        print_samples("hist", r.hist, PBB_BUCKETS);
        printf("}");
    }
    printf("], \"shift\": %u}\n", (unsigned)s.shift);
}

/* switch [link=N port=P|none] [setup=cycles]: moves link N's circuit to memory-card port P (dark for the set-up
 * time, then lit; none: taken down) and sets the set-up time; answers each link's port and whether it is lit, the
 * set-up time and the switch's counters. Links (the switch's card ports): 0 the compute card's first, 1.. the
 * traffic cards', the last the compute card's second; memory-card ports: the first memory card's, then the
 * second's. */
static void cmd_switch(struct args *a) {
    static char message[120];
    const char *link = arg_str(a, "link", NULL), *port = arg_str(a, "port", NULL), *setup = arg_str(a, "setup", NULL);
    uint32_t c = arg_u32(a, "link", 0), p = SWITCH_NO_CIRCUIT;
    if (!link != !port) { error("link= and port= go together: the link whose circuit moves and its new port"); return; }
    if (link && c >= POOL_SWITCH_CARDS) {
        snprintf(message, sizeof message, "link must be 0..%u (the switch's card ports)", POOL_SWITCH_CARDS - 1);
        error(message); return;
    }
    if (port && strcmp(port, "none")) {
        char *end;
        p = strtoul(port, &end, 0);
        if (end == port || *end || p >= POOL_SWITCH_PORTS) {
            snprintf(message, sizeof message, "port must be 0..%u (the memory cards' ports) or none",
                     POOL_SWITCH_PORTS - 1);
            error(message); return;
        }
        uint32_t holder = switch_holder(p);
        if (holder != SWITCH_NO_CIRCUIT && holder != c) {
            snprintf(message, sizeof message, "port %u is link %u's: a port takes one circuit", (unsigned)p,
                     (unsigned)holder);
            error(message); return;
        }
    }
    if (setup) switch_set_setup(arg_u32(a, "setup", 0));
    if (link) switch_connect(c, p);
    printf("{\"setup\": %u, \"ports\": %u, \"circuits\": [", (unsigned)switch_setup(), (unsigned)POOL_SWITCH_PORTS);
    for (uint32_t i = 0; i < POOL_SWITCH_CARDS; i++) {
        uint32_t at = switch_circuit(i);
        if (at == SWITCH_NO_CIRCUIT) printf("%s{\"port\": null, \"lit\": false}", i ? ", " : "");
        else printf("%s{\"port\": %u, \"lit\": %s}", i ? ", " : "", (unsigned)at, switch_lit(i) ? "true" : "false");
    }
    printf("], \"switches\": %u, \"refused\": %u}\n", (unsigned)switch_switches(), (unsigned)switch_refused());
}
#else
static void cmd_ports(struct args *a) { error(NOT_POOLED); }
static void cmd_switch(struct args *a) { error(NOT_POOLED); }
#define CARDS_ACCEPTED "cards= takes a list of different cards, each 0.." XSTR(POOL_TRAFFIC_CARDS)

static void cmd_pool(struct args *a) { error(NOT_POOLED); }
#endif

define_command(ports, cmd_ports, "port= share=0..15 first= last= hist_shift= in_flight=: the memory card's ports (pooled model)");
define_command(switch, cmd_switch, "[link=N port=P|none] [setup=cycles]: the circuit switch (pooled model)");
define_command(pool, cmd_pool, "cards=0,1,.. op=read|write|mixed ratio= mix=random|even pattern=seq|stride|random addr= span= stride= count=a,b,.. outstanding=a,b,.. seed= check= shift= size=8..128 timeout=cycles: the cards' benchmark blocks together (pooled model)");
#endif
