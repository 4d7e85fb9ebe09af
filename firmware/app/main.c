/* MONet-open bare-metal console for the compute card's soft CPU: the line parser and dispatcher, the
 * shared output helpers, and the SoC-wide commands. Each core's commands are in cmd_<core>.c.
 * One command per line; every command answers exactly one JSON line (errors too: {"error": "..."}). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "console.h"
#include "monet_hal.h"
#include <irq.h>
#include <libbase/uart.h>

#include "cpu_counters.h"
#include "remat.h"

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

const char *arg_str(struct args *a, const char *key, const char *def) {
    for (int i = 0; i < a->n; i++) if (!strcmp(a->key[i], key)) return a->val[i];
    return def;
}

uint32_t arg_u32(struct args *a, const char *key, uint32_t def) {
    const char *v = arg_str(a, key, NULL);
    return v ? strtoul(v, NULL, 0) : def;
}

void error(const char *what) { printf("{\"error\": \"%s\"}\n", what); }

void print_samples(const char *name, const uint32_t *v, uint32_t n) {
    printf("\"%s\": [", name);
    for (uint32_t i = 0; i < n; i++) printf("%s%u", i ? "," : "", (unsigned)v[i]);
    printf("]");
}

void print_faults(uint32_t before) {
    struct remat_faults f;
    remat_faults(&f);
    printf("\"fault\": %s, \"faults\": %u, \"fault_addr\": %u, \"fault_kind\": %u",
           f.count != before ? "true" : "false", (unsigned)f.count, (unsigned)f.addr, (unsigned)f.kind);
}

/* SoC-wide commands ------------------------------------------------------------------------- */

static void cmd_info(struct args *a) {
    (void)a;
    printf("{\"ident\": \"MONet-open sim\", \"clk_hz\": %u, \"window_base\": %u, \"sections\": %u, "
           "\"section_bytes\": %u, \"tags\": %u, \"memcard_bytes\": %u}\n",
           (unsigned)NOMINAL_CLK_HZ, (unsigned)REMOTE_BASE, (unsigned)REMOTE_SECTIONS,
           (unsigned)(1u << REMOTE_SECTION_BITS), (unsigned)REMOTE_TAGS, (unsigned)MEMCARD_SIZE);
}

static void cmd_counters(struct args *a) {
    (void)a;
    uint64_t c = rd64(0), i = rd64(1);
    printf("{\"mcycle\": %llu, \"minstret\": %llu}\n", (unsigned long long)c, (unsigned long long)i);
}

static void cmd_exit(struct args *a) {
    (void)a;
    printf("{\"exit\": true}\n");
    fflush(stdout);
    for (volatile int i = 0; i < 20000; i++);  /* let the UART drain */
    sim_exit_finish_write(1);
}

/* The command table: every define_command of every object, in link order. */
extern const struct command _fcommands[], _ecommands[];

static void cmd_help(struct args *a) {
    (void)a;
    printf("{\"commands\": {");
    for (const struct command *c = _fcommands; c < _ecommands; c++)
        printf("%s\"%s\": \"%s\"", c == _fcommands ? "" : ", ", c->name, c->help);
    printf("}}\n");
}

define_command(help, cmd_help, "this list");
define_command(info, cmd_info, "SoC facts");
define_command(counters, cmd_counters, "mcycle, minstret");
define_command(exit, cmd_exit, "end the simulation");

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
        const struct command *c = _fcommands;
        while (c < _ecommands && strcmp(cmd, c->name)) c++;
        if (c < _ecommands) c->fn(&a);
        else printf("{\"error\": \"unknown command %s, try help\"}\n", cmd);
    }
    return 0;
}
