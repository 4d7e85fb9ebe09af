/* Console commands of the link and the channel: settings, bit errors and link down, go-back-N and
 * credits, PRBS31. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "channel.h"
#include "link.h"
#include "memcard.h"
#include "remat.h"

static void print_link(void) {
    struct link_settings s;
    uint32_t fc, cc, fm, cm, ba, bb;
    link_get(&s);
    link_counters(&fc, &cc, &fm, &cm, &ba, &bb);
    printf("{\"lanes\": %u, \"block_ps\": %u, \"delay\": %u, \"skew\": [", (unsigned)s.lanes,
           (unsigned)s.block_ps, (unsigned)s.delay);
    for (int i = 0; i < LINK_MAX_LANES; i++) printf("%s%u", i ? ", " : "", s.skew[i]);
    printf("], \"max_units\": %u, \"pairing\": %u, \"issue_rate\": %u", (unsigned)s.max_units, (unsigned)s.pairing,
           (unsigned)s.issue_rate);
#ifdef MEMCARD_IN_MAP
    printf(", \"memory\": %u, \"memlat\": %u", (unsigned)memcard_memory(), (unsigned)memcard_latency());
#endif
    printf(", \"frames_c\": %u, \"crc_errors_c\": %u", (unsigned)fc, (unsigned)cc);
#if LINK_ENDS == 2
    printf(", \"frames_m\": %u, \"crc_errors_m\": %u", (unsigned)fm, (unsigned)cm);
#endif
#ifdef LINK_SIM_CHANNEL
    printf(", \"busy_a2b\": %u, \"busy_b2a\": %u}\n", (unsigned)ba, (unsigned)bb);
#else
    printf(", \"rate_mbps\": %u, \"realigns\": %u}\n", (unsigned)LINK_RATE_MBPS,
           (unsigned)hal_read32(CSR_LANES_REALIGNS_ADDR));
#endif
}

#ifndef LINK_SIM_CHANNEL
#ifdef LANES_MAX_DELAY
#define LANES_REFUSAL "this card's lanes are " XSTR(LINK_LANES) " (its gateware's) and its delay 0.." \
                      XSTR(LANES_MAX_DELAY) " cycles (emulated fiber)"
#else
#define LANES_REFUSAL "this card's lanes are " XSTR(LINK_LANES) " (its gateware's) and its delay 0 (built " \
                      "without the delay line)"
#endif
#endif

/* link [lanes=N] [block_ps=P] [delay=C] [skew=s0,s1,...] [memory=0|1|2] [memlat=C] [max_units=U] [pairing=0|1]
 *      [issue_rate=R] */
static void cmd_link(struct args *a) {
    struct link_settings s;
    link_get(&s);
    s.lanes    = arg_u32(a, "lanes", s.lanes);
    s.block_ps = arg_u32(a, "block_ps", s.block_ps);
    s.delay    = arg_u32(a, "delay", s.delay);
    s.max_units  = arg_u32(a, "max_units", s.max_units);
    s.pairing    = arg_u32(a, "pairing", s.pairing);
    s.issue_rate = arg_u32(a, "issue_rate", s.issue_rate);
    const char *skew = arg_str(a, "skew", NULL);
    if (skew) {
        for (int i = 0; i < LINK_MAX_LANES; i++) s.skew[i] = 0;
        char *p = (char *)skew;
        for (int i = 0; i < LINK_MAX_LANES && *p; i++) {
            s.skew[i] = strtoul(p, &p, 0);
            if (*p == ',') p++;
        }
    }
#ifdef LINK_SIM_CHANNEL
    if (s.block_ps == 0 || s.block_ps > 65535) { error("block_ps must be 1..65535"); return; }
    if (s.delay > CHANNEL_MAX_DELAY) { error("delay must be 0.." XSTR(CHANNEL_MAX_DELAY) " cycles"); return; }
#endif
#ifdef MEMCARD_IN_MAP
    uint32_t memory = arg_u32(a, "memory", memcard_memory());
    if (!memcard_has_memory(memory)) { error("memory must be 0 (SRAM), 1 (DDR4) or 2 (HMC), one the card was built with"); return; }
    /* The memory card's delay line tells due from waiting by its 16-bit stamps' sign: up to 2**15 - 1. */
    uint32_t memlat = arg_u32(a, "memlat", memcard_latency());
    if (memlat > 32767) { error("memlat must be 0..32767 cycles"); return; }
#endif
    if (s.issue_rate > 65535) { error("issue_rate must be 0..65535 (requests a cycle in 1/65536, 0 unlimited)"); return; }
    int rc = link_set(&s);
    if (rc == -1) { error("lanes must be 1, 2, 4 or 8"); return; }
    if (rc == -2) { error("max_units must be 1..8"); return; }
#ifndef LINK_SIM_CHANNEL
    if (rc == -3) { error(LANES_REFUSAL); return; }
#endif
#ifdef MEMCARD_IN_MAP
    memcard_set_memory(memory);
    memcard_set_latency(memlat);
#endif
    print_link();
}

#ifdef LINK_SIM_CHANNEL   /* the sim's channel: bit errors and link down */
static void print_u64_list(const char *name, const uint64_t *v, int n) {
    printf("\"%s\": [", name);
    for (int i = 0; i < n; i++) printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    printf("]");
}

/* errinj [ber=T|T0,..,T7] [burst=B] [seed=S] [down=C [down_after=W]]: channel bit errors (per-lane block
 * thresholds, see litex/cores/phy/errors.py) and a link-down interval of C cycles, W cycles from now. */
static void cmd_errinj(struct args *a) {
    struct channel_faults f;
    channel_faults_get(&f);
    const char *ber = arg_str(a, "ber", NULL);
    if (ber) {
        char *p = (char *)ber;
        uint64_t last = 0;
        for (int i = 0; i < LINK_MAX_LANES; i++) {
            if (*p) { last = strtoull(p, &p, 0); if (*p == ',') p++; }
            f.threshold[i] = last;   /* one value: every lane */
        }
        for (int i = 0; i < LINK_MAX_LANES; i++)
            if (f.threshold[i] >> 40) { error("ber thresholds must be below 2**40"); return; }
    }
    f.burst = arg_u32(a, "burst", f.burst);
    if (f.burst < 1 || f.burst > 32) { error("burst must be 1..32 bits"); return; }
    const char *seed = arg_str(a, "seed", NULL);
    if (seed) f.seed = strtoul(seed, NULL, 0);
    channel_faults_set(&f, seed != NULL);
    const char *down = arg_str(a, "down", NULL);
    if (down) channel_down(strtoul(down, NULL, 0), arg_u32(a, "down_after", 0));
    struct channel_fault_counters c;
    channel_fault_counters(&c);
    printf("{");
    print_u64_list("ber", f.threshold, LINK_MAX_LANES);
    printf(", \"burst\": %u, \"seed\": %u", (unsigned)f.burst, (unsigned)f.seed);
#define CHANNEL_COUNTER_PRINT(name, reg, bits) printf(", \"" #name "\": %llu", (unsigned long long)c.name);
    CHANNEL_COUNTER_LIST(CHANNEL_COUNTER_PRINT)
    printf("}\n");
}

static const struct { const char *name; uint32_t code; } fault_kinds[] = {
    {"none", CHANNEL_FAULT_NONE}, {"crc", CHANNEL_FAULT_CRC}, {"type", CHANNEL_FAULT_TYPE}, {"truncated", CHANNEL_FAULT_TRUNCATED},
    {"duplicate", CHANNEL_FAULT_DUPLICATE}, {"skip", CHANNEL_FAULT_SKIP}, {"flood", CHANNEL_FAULT_FLOOD},
    {"lane", CHANNEL_FAULT_LANE}, {"down", CHANNEL_FAULT_DOWN}, {"slip", CHANNEL_FAULT_SLIP},
    {"lane_down", CHANNEL_FAULT_LANE_DOWN}};

/* inject [kind=K toward=a2b|b2a at=C copies=N lane=L cycles=C]: a chosen fault on the wire at the first frame
 * with a transaction that travels alone in that direction from `at` cycles on (litex/cores/phy/injector.py): on
 * that frame (crc, type, truncated, duplicate, skip; flood: `copies` of it), or from it lane L garbled (lane),
 * lane L down (lane_down) or every lane down (down) for C cycles, or a word of lane L lost (slip); none: a fault
 * armed and not yet started is dropped. Without a kind: the injector's state. */
static void cmd_inject(struct args *a) {
    const char *kind = arg_str(a, "kind", NULL);
    if (kind) {
        struct channel_inject f = {0};
        int known = 0;
        for (unsigned i = 0; i < sizeof fault_kinds / sizeof fault_kinds[0]; i++)
            if (!strcmp(kind, fault_kinds[i].name)) { f.kind = fault_kinds[i].code; known = 1; }
        if (!known) {
            error("kind must be none, crc, type, truncated, duplicate, skip, flood, lane, down, slip or lane_down");
            return;
        }
        const char *toward = arg_str(a, "toward", "a2b");
        if (strcmp(toward, "a2b") && strcmp(toward, "b2a")) { error("toward must be a2b or b2a"); return; }
        f.toward = !strcmp(toward, "b2a");
        f.at = arg_u32(a, "at", 0);
        f.copies = arg_u32(a, "copies", 64);
        f.lane = arg_u32(a, "lane", 0);
        f.cycles = arg_u32(a, "cycles", 1000);
        if (f.copies < 1 || f.copies > 65535) { error("copies must be 1..65535"); return; }
        if (f.lane >= LINK_MAX_LANES) { error("lane must be 0..7"); return; }
        if (f.cycles < 1) { error("cycles must be at least 1"); return; }
        channel_inject(&f);
    }
    struct channel_inject_state st;
    channel_inject_state(&st);
    struct channel_fault_counters c;
    channel_fault_counters(&c);
    printf("{\"injected\": %u, \"pending\": %u, \"frame_blocks\": %u, \"frame_seq\": %u, \"down_total\": %u}\n",
           (unsigned)st.injected, (unsigned)st.pending, (unsigned)st.frame_blocks, (unsigned)st.frame_seq,
           (unsigned)c.down_total);
}
#endif

static void print_retry_counters(const char *name, int end) {
    struct retry_counters c;
    retry_counters(end, &c);
    printf("\"%s\": {", name);
    for (int i = 0; i < RETRY_COUNTERS; i++)
        printf("%s\"%s\": %u", i ? ", " : "", retry_counter_names[i], (unsigned)c.value[i]);
    uint32_t losses[LINK_MAX_LANES];
    lane_losses(end, losses);
    printf(", \"lane_losses\": [");
    for (int i = 0; i < LINK_MAX_LANES; i++) printf("%s%u", i ? ", " : "", (unsigned)losses[i]);
    printf("]}");
}

/* retry [timeout=C] [nak=0|1] [selective=0|1] [repair=0|1] [request_timeout=C] [credits=N]: the link's replay
 * settings (both ends: selective repeat or go-back-N, and under selective repeat the repair of frames whose CRC
 * names one flipped bit), ReMAT's request timeout (0: never), the credit limit toward the
 * memory card (0: none), each end's counters and its lanes' losses of alignment (`lane_losses`). */
static void cmd_retry(struct args *a) {
    uint32_t timeout, nak, selective, repair;
    retry_get(&timeout, &nak, &selective, &repair);
    timeout = arg_u32(a, "timeout", timeout);
    nak = arg_u32(a, "nak", nak);
    selective = arg_u32(a, "selective", selective);
    repair = arg_u32(a, "repair", repair);
    if (timeout < 16 || timeout > 65535) { error("timeout must be 16..65535 cycles"); return; }
    if (nak > 1) { error("nak must be 0 or 1"); return; }
    if (selective > 1) { error("selective must be 0 (go-back-N) or 1 (selective repeat)"); return; }
    if (repair > 1) { error("repair must be 0 or 1 (repair frames with one flipped bit, under selective repeat)"); return; }
    uint32_t credits = arg_u32(a, "credits", credits_get());
    if (credits > LINK_MAX_CREDITS || (credits != 0 && credits < LINK_REQUESTS_PER_CREDIT)) {
        error("credits must be 0 (no credit flow control) or " XSTR(LINK_REQUESTS_PER_CREDIT) ".." XSTR(LINK_MAX_CREDITS)
              " requests (a credit returns " XSTR(LINK_REQUESTS_PER_CREDIT) ")");
        return;
    }
    retry_set(timeout, nak, selective, repair);
    credits_set(credits);
    uint32_t request_timeout = arg_u32(a, "request_timeout", remat_request_timeout());
    remat_set_request_timeout(request_timeout);
    printf("{\"timeout\": %u, \"nak\": %u, \"selective\": %u, \"repair\": %u, \"credits\": %u, "
           "\"request_timeout\": %u, \"request_timeouts\": %u, ", (unsigned)timeout, (unsigned)nak,
           (unsigned)selective, (unsigned)repair, (unsigned)credits, (unsigned)request_timeout,
           (unsigned)remat_request_timeouts());
    print_retry_counters("compute", 0);
#if LINK_ENDS == 2
    printf(", ");
    print_retry_counters("memory", 1);
#endif
    printf("}\n");
}

static void wait_cycles(uint64_t n) {
    uint64_t t0 = console_cycles();
    while (console_cycles() - t0 < n) ;
}

static void print_prbs(const char *name, int end) {
    struct prbs_counters c;
    prbs_counters(end, &c);
    printf("\"%s\": {\"words\": %llu, \"relocks\": %u, \"errors\": [", name, (unsigned long long)c.words,
           (unsigned)c.relocks);
    for (int i = 0; i < LINK_MAX_LANES; i++) printf("%s%u", i ? ", " : "", (unsigned)c.errors[i]);
    printf("]}");
}

static const char *const loopback_names[] = {"none", "near", "far"};   /* CHANNEL_LOOPBACK_* */

/* prbs cycles=N [loopback=none|near|far]: PRBS31 on every active lane, both directions, for N cycles (link
 * traffic waits); words checked per lane and bit errors per lane, a2b at the memory card's checkers, b2a at the
 * compute card's. With a loopback only the compute card sends, and its checkers see its words come back
 * (`loop`): near, from inside its PHY; far, sent back by the memory card's (the sim; on a board far-end
 * loopback is set at the far card). */
static void cmd_prbs(struct args *a) {
    uint32_t cycles = arg_u32(a, "cycles", 100000);
    if (cycles < 1000) { error("cycles must be at least 1000"); return; }
    const char *name = arg_str(a, "loopback", "none");
    const uint32_t loops = sizeof loopback_names / sizeof loopback_names[0];
    uint32_t loop = 0;
    while (loop < loops && strcmp(name, loopback_names[loop])) loop++;
    if (loop == loops) { error("loopback must be none, near or far"); return; }
    if (lanes_loopback(loop)) {
        error("loopback must be none or near on a board (far-end loopback is set at the far card)");
        return;
    }
    for (int end = 0; end < LINK_ENDS; end++) { prbs_enable(end, 0, 1); prbs_clear(end); }
    for (int end = 0; end < LINK_ENDS; end++) prbs_enable(end, !loop || end == 0, 1);
    wait_cycles(cycles);
    for (int end = 0; end < LINK_ENDS; end++) prbs_enable(end, 0, 1);
    wait_cycles(4096);   /* words still on the fiber (one-way delay <= 1000 cycles, skew <= 255), both ways */
    for (int end = 0; end < LINK_ENDS; end++) prbs_enable(end, 0, 0);
    lanes_loopback(CHANNEL_LOOPBACK_NONE);
    struct link_settings s;
    link_get(&s);
    printf("{\"cycles\": %u, \"lanes\": %u, \"loopback\": \"%s\", ", (unsigned)cycles, (unsigned)s.lanes,
           loopback_names[loop]);
#if LINK_ENDS == 2
    print_prbs("a2b", 1);
    printf(", ");
#endif
    /* a board without a loopback: checked here only while the memory card's end sends PRBS too */
    print_prbs(loop ? "loop" : "b2a", 0);
    printf("}\n");
}

#ifdef LINK_SIM_CHANNEL
define_card_command(link, cmd_link, "[lanes= block_ps= delay= skew=a,b,.. memory=0|1|2 memlat=0..32767 max_units=1..8 pairing=0|1 issue_rate=0..65535]");
define_card_command(inject, cmd_inject, "[kind=none|crc|type|truncated|duplicate|skip|flood|lane|down|slip|lane_down toward=a2b|b2a at=cycles copies=1..65535 lane=0..7 cycles=]");
define_card_command(errinj, cmd_errinj, "[ber=T|T0,..,T7 (block hit /2**40) burst=1..32 seed= down=cycles down_after=cycles]");
#else
define_card_command(link, cmd_link, "[lanes=" XSTR(LINK_LANES) " delay= max_units=1..8 pairing=0|1 issue_rate=0..65535]: this card's end and lanes");
#endif
define_card_command(retry, cmd_retry,
               "[timeout=16..65535 nak=0|1 selective=0|1 repair=0|1 request_timeout=cycles credits=0|"
               XSTR(LINK_REQUESTS_PER_CREDIT) ".." XSTR(LINK_MAX_CREDITS) "] and counters");
define_card_command(prbs, cmd_prbs, "cycles=N [loopback=none|near|far]: PRBS31 on every lane, bits and errors per lane");
