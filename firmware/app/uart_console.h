/* The console's UART, polled both ways (uart_console.c). */
#ifndef UART_CONSOLE_H
#define UART_CONSOLE_H

/* Turns the UART's interrupts off: input and output are polled. */
void console_init(void);
/* The next input character, waiting for one. */
char console_getc(void);

#endif
