/* The console's line parser and dispatcher, its output helpers and the SoC-wide commands that need no CPU
 * of the SoC (`help`, `info`): shared by the firmware and monet-ctl (monet_console.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "pool.h"
#include "remat.h"

int console_errors;

/* -1: not `command key=value ...`; -2: more than MAX_ARGS arguments. */
static int parse(char *line, char **cmd, struct args *a) {
    a->n = 0;
    *cmd = strtok(line, " \t");
    if (!*cmd) return -1;
    char *tok;
    while ((tok = strtok(NULL, " \t"))) {
        if (a->n == MAX_ARGS) return -2;
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        a->key[a->n] = tok;
        a->val[a->n] = eq + 1;
        a->n++;
    }
    return 0;
}

const char *arg_str(struct args *a, const char *key, const char *def) {
    for (int i = 0; i < a->n; i++) if (!strcmp(a->key[i], key)) return a->val[i];
    return def;
}

uint32_t arg_u32(struct args *a, const char *key, uint32_t def) {
    const char *v = arg_str(a, key, NULL);
    return v ? strtoul(v, NULL, 0) : def;
}

void error(const char *what) {
    console_errors++;
    printf("{\"error\": \"%s\"}\n", what);
}

/* The numbers are written into a buffer and printed a chunk at a time: a printf call costs the soft CPU about
 * 1,200 cycles besides its characters, and `lat`'s 200 numbers, one printf each, were most of its answer's
 * cycles (281k for lat n=100). */
void print_samples(const char *name, const uint32_t *v, uint32_t n) {
    char chunk[128];
    unsigned len = 0;
    printf("\"%s\": [", name);
    for (uint32_t i = 0; i < n; i++) {
        char digits[10];
        unsigned d = 0;
        uint32_t x = v[i];
        do { digits[d++] = '0' + x % 10; x /= 10; } while (x);
        if (len + 1 + d >= sizeof chunk) { chunk[len] = 0; printf("%s", chunk); len = 0; }
        if (i) chunk[len++] = ',';
        while (d) chunk[len++] = digits[--d];
    }
    chunk[len] = 0;
    printf("%s]", chunk);
}

void print_faults(uint32_t before) {
    struct remat_faults f;
    remat_faults(&f);
    printf("\"fault\": %s, \"faults\": %u, \"fault_addr\": %u, \"fault_kind\": %u",
           f.count != before ? "true" : "false", (unsigned)f.count, (unsigned)f.addr, (unsigned)f.kind);
}

/* The command table: every define_command of every object, in link order (the firmware's linker.ld names
 * the section's ends; for a Linux program, GNU ld names them after the section). */
extern const struct command __start_monet_commands[], __stop_monet_commands[];

#ifdef POOL_SECOND_LINK
#define SECOND_LINK_CARD POOL_SECOND_LINK
#define CARDS_SELECTED "card must be 0 (the compute card).." XSTR(POOL_TRAFFIC_CARDS) " (the traffic cards) or " \
                       XSTR(POOL_SECOND_LINK) " (the compute card's second link)"
#else
#define SECOND_LINK_CARD 0   /* no second link */
#define CARDS_SELECTED "card must be 0 (the compute card).." XSTR(POOL_TRAFFIC_CARDS) " (the traffic cards)"
#endif

void console_line(char *line) {
    char *cmd;
    struct args a;
    int parsed = parse(line, &cmd, &a);
    if (parsed == -2) { error("more than " XSTR(MAX_ARGS) " key=value arguments"); return; }
    if (parsed < 0) { error("expected: command key=value ..."); return; }
    const struct command *c = __start_monet_commands;
    while (c < __stop_monet_commands && strcmp(cmd, c->name)) c++;
    if (c == __stop_monet_commands) {
        console_errors++;
        printf("{\"error\": \"unknown command %s, try help\"}\n", cmd);
        return;
    }
    const char *card = arg_str(&a, "card", NULL);
    if (card && !c->per_card) { error("card= is not accepted by this command: it reaches the compute card or the memory card alone"); return; }
    if (card && card_select(strtoul(card, NULL, 0))) { error(CARDS_SELECTED); return; }
    c->fn(&a);
    card_select(0);
}

static void cmd_help(struct args *a) {
    (void)a;
    printf("{\"commands\": {");
    for (const struct command *c = __start_monet_commands; c < __stop_monet_commands; c++)
        printf("%s\"%s\": \"%s%s\"", c == __start_monet_commands ? "" : ", ", c->name, c->help,
               c->per_card ? " card=0.." XSTR(POOL_CARDS) : "");
    printf("}}\n");
}

static void cmd_info(struct args *a) {
    (void)a;
#ifdef MEMCARD_SIZE   /* the sim: both cards in one SoC, the window in the soft CPU's map */
    printf("{\"ident\": \"MONet-open sim\", \"clk_hz\": %u, \"window_base\": %u, \"sections\": %u, "
           "\"section_bytes\": %u, \"tags\": %u, \"memcard_bytes\": %u, \"traffic_cards\": %u, "
           "\"second_link\": %u}\n",
           (unsigned)NOMINAL_CLK_HZ, (unsigned)REMOTE_BASE, (unsigned)REMOTE_SECTIONS,
           (unsigned)(1u << REMOTE_SECTION_BITS), (unsigned)REMOTE_TAGS, (unsigned)MEMCARD_SIZE,
           (unsigned)POOL_TRAFFIC_CARDS, (unsigned)SECOND_LINK_CARD);
#else                 /* a board's compute card: the window in the PS's map, the memory on the other board */
    printf("{\"ident\": \"%s\", \"clk_hz\": %u, \"window_base\": %llu, \"sections\": %u, "
           "\"section_bytes\": %llu, \"tags\": %u, \"lanes\": %u, \"rate_mbps\": %u}\n", CONFIG_IDENTIFIER,
           (unsigned)NOMINAL_CLK_HZ, (unsigned long long)REMOTE_WINDOW0_BASE, (unsigned)REMOTE_SECTIONS,
           1ull << REMOTE_SECTION_BITS, (unsigned)REMOTE_TAGS, (unsigned)LINK_LANES, (unsigned)LINK_RATE_MBPS);
#endif
}

define_command(help, cmd_help, "this list");
define_command(info, cmd_info, "SoC facts");
