/* The console's UART, polled both ways, and the printf its answers are written with.
 *
 * Every answer is printed, and its characters were most of a command's time in the sim: picolibc's printf
 * cost the soft CPU about 1,200 cycles a call besides its characters, and each character went through stdout
 * to libbase's interrupt-driven writer, which masks the UART's interrupt and looks at its ring and the TX FIFO
 * for each one (about 180 cycles a character in all). Here a character goes straight into the TX FIFO,
 * waiting while it is full, and printf knows only the conversions the console's sources use: %u, %d, %s,
 * %llu and %% (host/tests/test_firmware_formats.py keeps it so). The UART raises no interrupt. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <generated/csr.h>
#include <libbase/uart.h>

#include "uart_console.h"

/* libbase's interrupt-driven reader copies the RX FIFO into a 128-byte ring inside its interrupt handler,
 * which keeps draining while characters arrive: the sim's console feeds one a cycle, so a line of 127
 * characters or more overflowed the ring, lost its end and was never answered. Polled, the FIFO fills and
 * holds the sender back (the sim's console waits while the FIFO is full), so a line of any length arrives
 * whole. */
char console_getc(void) {
    while (uart_rxempty_read());
    char c = uart_rxtx_read();
    uart_ev_pending_write(UART_EV_RX);
    return c;
}

static void uart_put(char c) {
    while (uart_txfull_read());
    uart_rxtx_write(c);
}

/* A newline is followed by a carriage return, as libc's stdout does. */
static void console_putc(char c) {
    uart_put(c);
    if (c == '\n') uart_put('\r');
}

void console_init(void) {
    uart_ev_enable_write(0);
    uart_ev_pending_write(uart_ev_pending_read());
}

static int console_put(char c, FILE *file) {
    (void)file;
    console_putc(c);
    return c;
}

static int console_get(FILE *file) {
    (void)file;
    return console_getc();
}

/* The console's stdio, in place of libc's (LiteX's libc/stdio.c), whose object is then not linked. */
static FILE console_stdio = FDEV_SETUP_STREAM(console_put, console_get, NULL, _FDEV_SETUP_RW);
FILE *const stdout = &console_stdio;
FILE *const stderr = &console_stdio;
FILE *const stdin  = &console_stdio;

/* The digits of v, at least `width` of them (zeros in front); returns how many were printed. */
static int put_u32(uint32_t v, int width) {
    char digits[10];
    int n = 0;
    do { digits[n++] = '0' + v % 10; v /= 10; } while (v);
    while (n < width) digits[n++] = '0';
    for (int i = n - 1; i >= 0; i--) console_putc(digits[i]);
    return n;
}

/* Nine decimal digits at a time, so that a 64-bit division runs once per nine digits, not once per digit. */
static int put_u64(unsigned long long v) {
    if (!(v >> 32)) return put_u32((uint32_t)v, 1);
    unsigned long long high = v / 1000000000u;
    int n = put_u64(high);
    return n + put_u32((uint32_t)(v - high * 1000000000u), 9);
}

static int put_str(const char *s) {
    int n = 0;
    for (s = s ? s : "(null)"; *s; s++, n++) console_putc(*s);
    return n;
}

int printf(const char *format, ...) {
    va_list args;
    int n = 0;
    va_start(args, format);
    for (const char *f = format; *f; f++) {
        if (*f != '%') { console_putc(*f); n++; continue; }
        switch (*++f) {
        case 'u': n += put_u32(va_arg(args, unsigned), 1); break;
        case 'd': {
            int v = va_arg(args, int);
            if (v < 0) { console_putc('-'); n++; }
            n += put_u32(v < 0 ? -(uint32_t)v : (uint32_t)v, 1);
            break;
        }
        case 's': n += put_str(va_arg(args, const char *)); break;
        case '%': console_putc('%'); n++; break;
        case 'l':
            if (f[1] == 'l' && f[2] == 'u') { f += 2; n += put_u64(va_arg(args, unsigned long long)); break; }
            /* fall through */
        default:    /* not one of ours (see above): shown as written */
            console_putc('%');
            if (!*f) { f--; n++; break; }
            console_putc(*f);
            n += 2;
        }
    }
    va_end(args);
    return n;
}
