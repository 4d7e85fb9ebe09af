/* MONet-open bare-metal console for the compute card's soft CPU: the UART line reader and the commands that
 * need the CPU itself (its counters, the end of the simulation). The line parser, the dispatcher and the
 * commands that reach the SoC through CSRs are firmware/console's, shared with monet-ctl; the commands that
 * access the remote window from the CPU are cmd_access.c and cmd_stream.c.
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
#include <irq.h>
#include <libbase/uart.h>

#include "cpu_counters.h"

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
        console_line(line);
    }
    return 0;
}
