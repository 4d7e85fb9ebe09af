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
    /* The answer must reach the host before the simulation ends: wait for the UART to drain (a fixed delay
       long enough for that cost 1.4 s of wall time at every sim's exit). */
    while (!uart_txempty_read());
    for (volatile int i = 0; i < 100; i++);   /* the PHY's last character */
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

/* One input character, read from the UART's RX FIFO. libbase's interrupt-driven reader copies the FIFO
 * into a 128-byte ring inside its interrupt handler, which keeps draining while characters arrive: the
 * sim's console feeds one a cycle, so a line of 127 characters or more overflowed the ring, lost its end
 * and was never answered. Polled, the FIFO fills and holds the sender back (the sim's console waits while
 * the FIFO is full), so a line of any length arrives whole. RX interrupts are off; the handler, run for
 * TX, may still have moved characters into the ring: those are older than the FIFO's and go first, with
 * the UART's interrupt masked so that none move between the two looks. */
static char console_getc(void) {
    for (;;) {
        unsigned int mask = irq_getmask();
        irq_setmask(mask & ~(1 << UART_INTERRUPT));
        int c = -1;
        if (uart_read_nonblock()) c = uart_read();
        else if (!uart_rxempty_read()) {
            c = uart_rxtx_read();
            uart_ev_pending_write(UART_EV_RX);
        }
        irq_setmask(mask);
        if (c >= 0) return c;
    }
}

int main(void) {
    static char line[CONSOLE_LINE_MAX + 1];
    /* Output is interrupt driven (as in the LiteX BIOS): polled, it is dropped when the TX FIFO fills.
     * Input is polled (console_getc). */
    irq_setmask(0);
    irq_setie(1);
    uart_init();
    uart_ev_enable_write(UART_EV_TX);
    printf("{\"ready\": true, \"firmware\": \"monet-console\"}\n");
    for (;;) {
        unsigned len = 0, overlong = 0;
        for (;;) {
            char c = console_getc();
            if (c == '\r' || c == '\n') { if (len || overlong) break; else continue; }
            if (len < CONSOLE_LINE_MAX) line[len++] = c;
            else overlong = 1;
        }
        line[len] = 0;
        if (overlong) { error("line longer than " XSTR(CONSOLE_LINE_MAX) " characters"); continue; }
        char *cmd;
        struct args a;
        int parsed = parse(line, &cmd, &a);
        if (parsed == -2) { error("more than " XSTR(MAX_ARGS) " key=value arguments"); continue; }
        if (parsed < 0) { error("expected: command key=value ..."); continue; }
        const struct command *c = _fcommands;
        while (c < _ecommands && strcmp(cmd, c->name)) c++;
        if (c < _ecommands) c->fn(&a);
        else printf("{\"error\": \"unknown command %s, try help\"}\n", cmd);
    }
    return 0;
}
