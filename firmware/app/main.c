/* MONet-open bare-metal console for the compute card's soft CPU.
 * One command per line; every command answers exactly one JSON line (errors too: {"error": "..."}). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>
#include <libbase/uart.h>

#include "monet_hal.h"
#include "remat.h"
#include "pbb.h"
#include "cpu_counters.h"
#include "stream_run.h"

/* A generated constant inside a message: "0.." XSTR(CHANNEL_MAX_DELAY) " cycles". */
#define STR(x)  #x
#define XSTR(x) STR(x)

#define MAX_ARGS     12
#define MAX_SAMPLES  1024
#define LINE_BYTES   64

static uint32_t cpu_samples[MAX_SAMPLES], hw_samples[MAX_SAMPLES];

/* Arguments: key=value pairs after the command word. ------------------------------------------ */

struct args { int n; char *key[MAX_ARGS]; char *val[MAX_ARGS]; };

static int parse(char *line, char **cmd, struct args *a) {
    a->n = 0;
    *cmd = strtok(line, " \t");
    if (!*cmd) return -1;
    char *tok;
    while ((tok = strtok(NULL, " \t")) && a->n < MAX_ARGS) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        a->key[a->n] = tok;
        a->val[a->n] = eq + 1;
        a->n++;
    }
    return 0;
}

static const char *arg_str(struct args *a, const char *key, const char *def) {
    for (int i = 0; i < a->n; i++) if (!strcmp(a->key[i], key)) return a->val[i];
    return def;
}

static uint32_t arg_u32(struct args *a, const char *key, uint32_t def) {
    const char *v = arg_str(a, key, NULL);
    return v ? strtoul(v, NULL, 0) : def;
}

static void error(const char *what) { printf("{\"error\": \"%s\"}\n", what); }

/* Data pattern: xorshift32, seeded. ------------------------------------------------------------ */

static uint32_t pattern_seed(uint32_t seed) { uint32_t s = seed ^ 0x9e3779b9u; return s ? s : 1; }
static uint32_t pattern_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *s = x;
}

static volatile uint32_t *remote(uint32_t offset) { return (volatile uint32_t *)(REMOTE_BASE + offset); }

static int window_ok(uint32_t offset, uint32_t bytes) {
    uint32_t window = REMOTE_SECTIONS << REMOTE_SECTION_BITS;
    return offset < window && bytes <= window - offset && (offset & 3) == 0;
}

/* Commands ----------------------------------------------------------------------------------- */

static void cmd_info(struct args *a) {
    (void)a;
    printf("{\"ident\": \"MONet-open sim\", \"clk_hz\": %u, \"window_base\": %u, \"sections\": %u, "
           "\"section_bytes\": %u, \"tags\": %u, \"memcard_bytes\": %u}\n",
           (unsigned)NOMINAL_CLK_HZ, (unsigned)REMOTE_BASE, (unsigned)REMOTE_SECTIONS,
           (unsigned)(1u << REMOTE_SECTION_BITS), (unsigned)REMOTE_TAGS, (unsigned)MEMCARD_SIZE);
}

static void print_link(void) {
    struct link_settings s;
    uint32_t fc, cc, fm, cm, ba, bb;
    link_get(&s);
    link_counters(&fc, &cc, &fm, &cm, &ba, &bb);
    printf("{\"lanes\": %u, \"block_ps\": %u, \"delay\": %u, \"skew\": [", (unsigned)s.lanes,
           (unsigned)s.block_ps, (unsigned)s.delay);
    for (int i = 0; i < 8; i++) printf("%s%u", i ? ", " : "", s.skew[i]);
    printf("], \"max_units\": %u, \"pairing\": %u, \"issue_rate\": %u", (unsigned)s.max_units, (unsigned)s.pairing,
           (unsigned)s.issue_rate);
    printf(", \"memlat\": %u, \"frames_c\": %u, \"crc_errors_c\": %u, \"frames_m\": %u, \"crc_errors_m\": %u, "
           "\"busy_a2b\": %u, \"busy_b2a\": %u}\n", (unsigned)memcard_latency(), (unsigned)fc, (unsigned)cc,
           (unsigned)fm, (unsigned)cm, (unsigned)ba, (unsigned)bb);
}

/* link [lanes=N] [block_ps=P] [delay=C] [skew=s0,s1,...] [memlat=C] [max_units=U] [pairing=0|1] [issue_rate=R] */
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
        for (int i = 0; i < 8; i++) s.skew[i] = 0;
        char *p = (char *)skew;
        for (int i = 0; i < 8 && *p; i++) {
            s.skew[i] = strtoul(p, &p, 0);
            if (*p == ',') p++;
        }
    }
    if (s.block_ps == 0 || s.block_ps > 65535) { error("block_ps must be 1..65535"); return; }
    if (s.delay > CHANNEL_MAX_DELAY) { error("delay must be 0.." XSTR(CHANNEL_MAX_DELAY) " cycles"); return; }
    if (s.issue_rate > 65535) { error("issue_rate must be 0..65535 (requests a cycle in 1/65536, 0 unlimited)"); return; }
    int rc = link_set(&s);
    if (rc == -1) { error("lanes must be 1, 2, 4 or 8"); return; }
    if (rc == -2) { error("max_units must be 1..8"); return; }
    memcard_set_latency(arg_u32(a, "memlat", memcard_latency()));
    print_link();
}

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
        for (int i = 0; i < 8; i++) {
            if (*p) { last = strtoull(p, &p, 0); if (*p == ',') p++; }
            f.threshold[i] = last;   /* one value: every lane */
        }
        for (int i = 0; i < 8; i++)
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
    print_u64_list("ber", f.threshold, 8);
    printf(", \"burst\": %u, \"seed\": %u, \"blocks_a2b\": %llu, \"blocks_b2a\": %llu, \"hits_a2b\": %u, "
           "\"hits_b2a\": %u, \"down_total\": %u}\n", (unsigned)f.burst, (unsigned)f.seed,
           (unsigned long long)c.blocks_a2b, (unsigned long long)c.blocks_b2a, (unsigned)c.hits_a2b,
           (unsigned)c.hits_b2a, (unsigned)c.down_total);
}

static void print_retry_counters(const char *name, int end) {
    struct retry_counters c;
    retry_counters(end, &c);
    printf("\"%s\": {\"replays\": %u, \"timeouts\": %u, \"replayed_txns\": %u, \"replayed_bytes\": %u, "
           "\"window_stalls\": %u, \"credit_stalls\": %u, \"naks\": %u, \"duplicates\": %u, \"out_of_order\": %u, "
           "\"reinits\": %u, \"down_cycles\": %u, \"crc_errors\": %u, \"frames\": %u}", name, (unsigned)c.replays,
           (unsigned)c.timeouts, (unsigned)c.replayed_txns, (unsigned)c.replayed_bytes, (unsigned)c.window_stalls,
           (unsigned)c.credit_stalls, (unsigned)c.naks, (unsigned)c.duplicates, (unsigned)c.out_of_order, (unsigned)c.reinits,
           (unsigned)c.down_cycles, (unsigned)c.crc_errors, (unsigned)c.frames);
}

/* retry [timeout=C] [nak=0|1] [request_timeout=C] [credits=N]: go-back-N settings (both ends), ReMAT's
 * request timeout (0: never), the credit limit toward the memory card (0: none), each end's counters. */
static void cmd_retry(struct args *a) {
    uint32_t timeout, nak;
    retry_get(&timeout, &nak);
    timeout = arg_u32(a, "timeout", timeout);
    nak = arg_u32(a, "nak", nak);
    if (timeout < 16 || timeout > 65535) { error("timeout must be 16..65535 cycles"); return; }
    if (nak > 1) { error("nak must be 0 or 1"); return; }
    uint32_t credits = arg_u32(a, "credits", credits_get());
    if (credits > 127) { error("credits must be 0..127 (0: no credit flow control)"); return; }
    retry_set(timeout, nak);
    credits_set(credits);
    uint32_t request_timeout = arg_u32(a, "request_timeout", remat_request_timeout());
    remat_set_request_timeout(request_timeout);
    printf("{\"timeout\": %u, \"nak\": %u, \"credits\": %u, \"request_timeout\": %u, \"request_timeouts\": %u, ",
           (unsigned)timeout, (unsigned)nak, (unsigned)credits, (unsigned)request_timeout,
           (unsigned)remat_request_timeouts());
    print_retry_counters("compute", 0);
    printf(", ");
    print_retry_counters("memory", 1);
    printf("}\n");
}

static void wait_cycles(uint64_t n) {
    uint64_t t0 = rd64(0);
    while (rd64(0) - t0 < n) ;
}

static void print_prbs(const char *name, int end) {
    struct prbs_counters c;
    prbs_counters(end, &c);
    printf("\"%s\": {\"words\": %llu, \"relocks\": %u, \"errors\": [", name, (unsigned long long)c.words,
           (unsigned)c.relocks);
    for (int i = 0; i < 8; i++) printf("%s%u", i ? ", " : "", (unsigned)c.errors[i]);
    printf("]}");
}

/* prbs cycles=N: PRBS31 on every active lane, both directions, for N cycles (link traffic waits); words
 * checked per lane and bit errors per lane, a2b at the memory card's checkers, b2a at the compute card's. */
static void cmd_prbs(struct args *a) {
    uint32_t cycles = arg_u32(a, "cycles", 100000);
    if (cycles < 1000) { error("cycles must be at least 1000"); return; }
    for (int end = 0; end < 2; end++) { prbs_enable(end, 0, 1); prbs_clear(end); }
    for (int end = 0; end < 2; end++) prbs_enable(end, 1, 1);
    wait_cycles(cycles);
    for (int end = 0; end < 2; end++) prbs_enable(end, 0, 1);
    wait_cycles(4096);   /* words still on the fiber (one-way delay <= 1000 cycles, skew <= 255) */
    for (int end = 0; end < 2; end++) prbs_enable(end, 0, 0);
    struct link_settings s;
    link_get(&s);
    printf("{\"cycles\": %u, \"lanes\": %u, ", (unsigned)cycles, (unsigned)s.lanes);
    print_prbs("a2b", 1);
    printf(", ");
    print_prbs("b2a", 0);
    printf("}\n");
}

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

static void print_faults(uint32_t before) {
    struct remat_faults f;
    remat_faults(&f);
    printf("\"fault\": %s, \"faults\": %u, \"fault_addr\": %u, \"fault_kind\": %u",
           f.count != before ? "true" : "false", (unsigned)f.count, (unsigned)f.addr, (unsigned)f.kind);
}

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

/* fill / check addr=OFF bytes=B seed=S : seeded pseudo-random words. */
static void cmd_fill_check(struct args *a, int check) {
    uint32_t off = arg_u32(a, "addr", 0), bytes = arg_u32(a, "bytes", 4096), seed = arg_u32(a, "seed", 1);
    if (!window_ok(off, bytes)) { error("addr/bytes must lie inside the remote window, 4-aligned"); return; }
    struct remat_faults f0;
    remat_faults(&f0);
    uint32_t s = pattern_seed(seed ^ off), errors = 0, first_bad = 0xffffffffu;
    uint32_t t0 = rdcycle32();
    for (uint32_t i = 0; i < bytes; i += 4) {
        uint32_t want = pattern_next(&s);
        if (check) {
            if (*remote(off + i) != want) { if (!errors) first_bad = off + i; errors++; }
        } else {
            *remote(off + i) = want;
        }
    }
    uint32_t cycles = rdcycle32() - t0;
    printf("{\"addr\": %u, \"bytes\": %u, \"seed\": %u, \"errors\": %u, \"first_bad\": %d, \"cycles\": %u, ",
           (unsigned)off, (unsigned)bytes, (unsigned)seed, (unsigned)errors,
           errors ? (int)first_bad : -1, (unsigned)cycles);
    print_faults(f0.count);
    printf("}\n");
}

static void print_samples(const char *name, const uint32_t *v, uint32_t n) {
    printf("\"%s\": [", name);
    for (uint32_t i = 0; i < n; i++) printf("%s%u", i ? "," : "", (unsigned)v[i]);
    printf("]");
}

/* One timed access. A store retires before its bus cycle ends, so a load from local SRAM follows it: that
 * load waits for the data bus, which frees only when the remote write is acknowledged. */
static volatile uint32_t local_word;

static uint32_t timed_access(volatile uint32_t *p, int write, uint32_t value) {
    uint32_t start, end, v;
    if (write) {
        start = rdcycle32(); *p = value; v = local_word; __asm__ volatile("" :: "r"(v)); end = rdcycle32();
    } else {
        start = rdcycle32(); v = *p; __asm__ volatile("" :: "r"(v)); end = rdcycle32();
    }
    return end - start;
}

/* lat op=read|write addr=OFF n=K stride=S : K single accesses, CPU cycles and ReMAT cycles of each.
 * cpu_cycles exclude what the same sequence costs on local SRAM (`local_cycles`). */
static void cmd_lat(struct args *a) {
    const char *op = arg_str(a, "op", "read");
    int write = !strcmp(op, "write");
    if (!write && strcmp(op, "read")) { error("op must be read or write"); return; }
    uint32_t off = arg_u32(a, "addr", 0), n = arg_u32(a, "n", 100), stride = arg_u32(a, "stride", LINE_BYTES);
    if (n == 0 || n > MAX_SAMPLES) { error("n must be 1..1024"); return; }
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
static void cmd_chase(struct args *a) {
    uint32_t off = arg_u32(a, "addr", 0), lines = arg_u32(a, "lines", 256), n = arg_u32(a, "n", 1000);
    uint32_t seed = arg_u32(a, "seed", 1);
    if (lines < 2 || lines > MAX_SAMPLES) { error("lines must be 2..1024"); return; }
    if (!window_ok(off, lines * LINE_BYTES)) { error("the chain must lie inside the remote window"); return; }
    /* Sattolo's algorithm: a single cycle through every line. */
    static uint32_t order[MAX_SAMPLES];
    uint32_t s = pattern_seed(seed);
    for (uint32_t i = 0; i < lines; i++) order[i] = i;
    for (uint32_t i = lines - 1; i > 0; i--) {
        uint32_t j = pattern_next(&s) % i, t = order[i];
        order[i] = order[j]; order[j] = t;
    }
    for (uint32_t i = 0; i < lines; i++)
        *remote(off + order[i] * LINE_BYTES) = REMOTE_BASE + off + order[(i + 1) % lines] * LINE_BYTES;
    remat_latency_clear();
    uint32_t p = REMOTE_BASE + off + order[0] * LINE_BYTES;
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

/* pbb op=read|write|mixed [ratio=R] pattern=seq|stride|random addr= span= stride= count= outstanding=
 *     seed= check=0|1 shift= : one run of the benchmark block, waited out, with link occupancy. */
static void cmd_pbb(struct args *a) {
    static const char *ops[] = {"read", "write", "mixed"}, *patterns[] = {"seq", "stride", "random"};
    const char *op = arg_str(a, "op", "read"), *pattern = arg_str(a, "pattern", "seq");
    struct pbb_settings s;
    s.mode = 3; s.pattern = 3;
    for (uint32_t i = 0; i < 3; i++) {
        if (!strcmp(op, ops[i])) s.mode = i;
        if (!strcmp(pattern, patterns[i])) s.pattern = i;
    }
    if (s.mode == 3) { error("op must be read, write or mixed"); return; }
    if (s.pattern == 3) { error("pattern must be seq, stride or random"); return; }
    s.read_ratio  = arg_u32(a, "ratio", 128);
    s.base        = arg_u32(a, "addr", 0);
    s.span        = arg_u32(a, "span", 1u << 20);
    s.stride      = arg_u32(a, "stride", 256);
    s.count       = arg_u32(a, "count", 1000);
    s.outstanding = arg_u32(a, "outstanding", REMOTE_TAGS);
    s.seed        = arg_u32(a, "seed", 1);
    s.check       = arg_u32(a, "check", 0);
    s.shift       = arg_u32(a, "shift", 2);
    uint32_t size = arg_u32(a, "size", LINE_BYTES);
    s.size_log2 = 0;
    for (uint32_t n = 3; n <= 7; n++)
        if (size == 1u << n) s.size_log2 = n;
    if (!s.size_log2) { error("size must be 8, 16, 32, 64 or 128 bytes"); return; }
    if (s.span < LINE_BYTES || (s.span & (s.span - 1))) { error("span must be a power of two >= 64"); return; }
    if (!window_ok(s.base, s.span) || (s.base & (LINE_BYTES - 1))) { error("addr/span must lie in the window, line aligned"); return; }
    if (s.outstanding < 1 || s.outstanding > REMOTE_TAGS) { error("outstanding must be 1..tags"); return; }
    if (s.stride % LINE_BYTES || s.stride >= s.span) { error("stride must be a line multiple below span"); return; }
    if (s.size_log2 == 7 && s.count % 2) { error("count must be even for 128 B accesses (two line transactions each)"); return; }
    uint32_t fc, cc, fm, cm, a2b0, b2a0, a2b1, b2a1;
    link_counters(&fc, &cc, &fm, &cm, &a2b0, &b2a0);
    /* A run that stops making progress (a lost frame, until replay exists) ends here, reported. */
    uint32_t budget = arg_u32(a, "timeout", 2000000), t0 = rdcycle32();
    int timed_out = 0;
    pbb_start(&s);
    while (pbb_busy()) {
        if (rdcycle32() - t0 > budget) { timed_out = 1; break; }
    }
    link_counters(&fc, &cc, &fm, &cm, &a2b1, &b2a1);
    struct pbb_result r;
    pbb_result(&r);
    printf("{\"timed_out\": %s, \"crc_errors_c\": %u, \"crc_errors_m\": %u, ", timed_out ? "true" : "false",
           (unsigned)cc, (unsigned)cm);
    printf("\"op\": \"%s\", \"pattern\": \"%s\", \"count\": %u, \"outstanding\": %u, \"completed\": %u, "
           "\"cycles\": %llu, \"errors\": %u, \"bus_errors\": %u, \"lat_min\": %u, \"lat_max\": %u, "
           "\"lat_sum\": %llu, \"shift\": %u, \"busy_a2b\": %u, \"busy_b2a\": %u, ",
           op, pattern, (unsigned)s.count, (unsigned)s.outstanding, (unsigned)r.completed,
           (unsigned long long)r.cycles, (unsigned)r.errors, (unsigned)r.bus_errors, (unsigned)r.lat_min,
           (unsigned)r.lat_max, (unsigned long long)r.lat_sum, (unsigned)s.shift, (unsigned)(a2b1 - a2b0),
           (unsigned)(b2a1 - b2a0));
    print_samples("hist", r.hist, PBB_BUCKETS);
    printf("}\n");
}

/* stream mem=local|remote n= reps= addr= corrupt=0|1 : STREAM's four kernels on 32-bit words. Cycles per
 * kernel (best, mean, worst over the repetitions after the first); the host turns them into MB/s. */
static void cmd_stream(struct args *a) {
    static const char *names[] = {"copy", "scale", "add", "triad"};
    const char *mem = arg_str(a, "mem", "local");
    uint32_t n = arg_u32(a, "n", 4096), reps = arg_u32(a, "reps", 10), off = arg_u32(a, "addr", 0);
    int local = !strcmp(mem, "local");
    if (!local && strcmp(mem, "remote")) { error("mem must be local or remote"); return; }
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
    stream_run(local ? (uintptr_t)MAIN_RAM_BASE : (uintptr_t)remote(off), n, reps,
               arg_u32(a, "corrupt", 0) != 0, &r);
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

static void cmd_counters(struct args *a) {
    (void)a;
    uint64_t c = rd64(0), i = rd64(1);
    printf("{\"mcycle\": %llu, \"minstret\": %llu}\n", (unsigned long long)c, (unsigned long long)i);
}

static void cmd_faults(struct args *a) {
    (void)a;
    struct remat_faults f;
    remat_faults(&f);
    printf("{\"faults\": %u, \"fault_addr\": %u, \"fault_kind\": %u, \"requests\": %u}\n",
           (unsigned)f.count, (unsigned)f.addr, (unsigned)f.kind, (unsigned)remat_requests());
}

static void cmd_exit(struct args *a) {
    (void)a;
    printf("{\"exit\": true}\n");
    fflush(stdout);
    for (volatile int i = 0; i < 20000; i++);  /* let the UART drain */
    sim_exit_finish_write(1);
}

struct command { const char *name; void (*fn)(struct args *); const char *help; };

static void cmd_help(struct args *a);
static void cmd_rd(struct args *a) { cmd_access(a, 0); }
static void cmd_wr(struct args *a) { cmd_access(a, 1); }
static void cmd_fill(struct args *a) { cmd_fill_check(a, 0); }
static void cmd_check(struct args *a) { cmd_fill_check(a, 1); }

static const struct command commands[] = {
    {"help",     cmd_help,     "this list"},
    {"info",     cmd_info,     "SoC facts"},
    {"link",     cmd_link,     "[lanes= block_ps= delay= skew=a,b,.. memlat= max_units=1..8 pairing=0|1 issue_rate=0..65535]"},
    {"errinj",   cmd_errinj,   "[ber=T|T0,..,T7 (block hit /2**40) burst=1..32 seed= down=cycles down_after=cycles]"},
    {"retry",    cmd_retry,    "[timeout=16..65535 nak=0|1 request_timeout=cycles credits=0..127] and counters"},
    {"prbs",     cmd_prbs,     "cycles=N: PRBS31 on every lane both ways, bits and errors per lane"},
    {"bfct",     cmd_bfct,     "idx= [en= r= w= target= base=]"},
    {"rd",       cmd_rd,       "addr="},
    {"wr",       cmd_wr,       "addr= val="},
    {"fill",     cmd_fill,     "addr= bytes= seed="},
    {"check",    cmd_check,    "addr= bytes= seed="},
    {"lat",      cmd_lat,      "op=read|write addr= n= stride="},
    {"chase",    cmd_chase,    "addr= lines= n= seed="},
    {"pbb",      cmd_pbb,      "op=read|write|mixed ratio= pattern=seq|stride|random addr= span= stride= count= outstanding= seed= check= shift= size=8..128 timeout=cycles"},
    {"stream",   cmd_stream,   "mem=local|remote n=words reps=2..1000 addr= corrupt=0|1: STREAM, cycles per kernel"},
    {"counters", cmd_counters, "mcycle, minstret"},
    {"faults",   cmd_faults,   "fault counter and latch"},
    {"exit",     cmd_exit,     "end the simulation"},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void cmd_help(struct args *a) {
    (void)a;
    printf("{\"commands\": {");
    for (unsigned i = 0; i < N_COMMANDS; i++)
        printf("%s\"%s\": \"%s\"", i ? ", " : "", commands[i].name, commands[i].help);
    printf("}}\n");
}

int main(void) {
    static char line[256];
    /* The UART driver is interrupt driven (as in the LiteX BIOS): without it input is never seen and
     * output is dropped when the TX FIFO fills. */
    irq_setmask(0);
    irq_setie(1);
    uart_init();
    printf("{\"ready\": true, \"firmware\": \"monet-console\"}\n");
    for (;;) {
        unsigned len = 0;
        for (;;) {
            int c = getchar();
            if (c == '\r' || c == '\n') { if (len) break; else continue; }
            if (len < sizeof(line) - 1) line[len++] = c;
        }
        line[len] = 0;
        char *cmd;
        struct args a;
        if (parse(line, &cmd, &a) < 0) { error("expected: command key=value ..."); continue; }
        unsigned i;
        for (i = 0; i < N_COMMANDS; i++)
            if (!strcmp(cmd, commands[i].name)) { commands[i].fn(&a); break; }
        if (i == N_COMMANDS) printf("{\"error\": \"unknown command %s, try help\"}\n", cmd);
    }
    return 0;
}
