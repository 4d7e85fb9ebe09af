/* MONet-open bare-metal console for the compute card's soft CPU: the line reader (its UART and printf:
 * uart_console.c) and the commands that need the CPU itself (its counters, the end of the simulation). The
 * line parser, the dispatcher and the commands that reach the SoC through CSRs are firmware/console's, shared
 * with monet-ctl; the commands that access the remote window from the CPU are cmd_access.c and cmd_stream.c.
 * One command per line; every command answers exactly one JSON line (errors too: {"error": "..."}). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "cpu_counters.h"
#include "uart_console.h"

/* The CPU's commands ------------------------------------------------------------------------ */

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

uint64_t console_cycles(void) { return rd64(0); }

define_command(counters, cmd_counters, "mcycle, minstret");
define_command(exit, cmd_exit, "end the simulation");

int main(void) {
    static char line[CONSOLE_LINE_MAX + 1];
    console_init();
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
        console_line(line);
    }
    return 0;
}
