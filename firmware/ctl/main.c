/* monet-ctl: the firmware console's CSR commands (firmware/console: link, retry, errinj, inject, prbs, hmc, bfct,
 * faults, combiner, memcard, pbb, info, help) as a Linux program, built against one SoC's generated headers.
 * It takes the console's lines and gives its JSON answers, so a board's PS and a host (through the sim's
 * CSR bridge) run the same commands as the soft CPU's firmware, on the same register map.
 *
 *   monet-ctl [--csr SPEC] COMMAND [key=value ...]   one command, its answer; exit status 1 if it is an error
 *   monet-ctl [--csr SPEC]                           command lines on stdin, one answer line each
 *
 * SPEC (or the environment's MONET_CTL_CSR) says how the CSRs are reached (hal_linux.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "monet_console.h"
#include "monet_hal.h"

#include "hal_linux.h"

static const char usage[] =
    "usage: monet-ctl [--csr SPEC] [COMMAND [key=value ...]]\n"
    "  SPEC: " HAL_SPECS "\n"
    "        (default: the environment's MONET_CTL_CSR)\n"
    "  With a command, runs it and prints its JSON answer (exit status 1 when the answer is an error);\n"
    "  without, answers each command line read on stdin. `help` lists the commands and their keys.\n";

/* The SoC's cycles: its uptime counter where the SoC has one (the sim: cycles of the model, however fast it
 * runs), else the wall clock at the SoC's clock (a board). */
uint64_t console_cycles(void) {
#ifdef CSR_TIMER0_UPTIME_CYCLES_ADDR
    hal_write32(CSR_TIMER0_UPTIME_LATCH_ADDR, 1);
    return hal_read64(CSR_TIMER0_UPTIME_CYCLES_ADDR);
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * CONFIG_CLOCK_FREQUENCY + (uint64_t)t.tv_nsec * CONFIG_CLOCK_FREQUENCY / 1000000000u;
#endif
}

static int run_stdin(void) {
    static char line[CONSOLE_LINE_MAX + 2];
    while (fgets(line, sizeof(line), stdin)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        else if (len == CONSOLE_LINE_MAX + 1) {   /* the rest of an overlong line is skipped */
            int c;
            while ((c = getchar()) != EOF && c != '\n') ;
            error("line longer than " XSTR(CONSOLE_LINE_MAX) " characters");
            fflush(stdout);
            continue;
        }
        if (strspn(line, " \t\r") == len) continue;
        console_line(line);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *spec = getenv("MONET_CTL_CSR");
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--help")) { fputs(usage, stdout); return 0; }
        if (!strcmp(argv[i], "--csr") && i + 1 < argc) { spec = argv[++i]; continue; }
        if (!strncmp(argv[i], "--csr=", 6)) { spec = argv[i] + 6; continue; }
        fprintf(stderr, "monet-ctl: unknown option %s (or --csr without a SPEC)\n%s", argv[i], usage);
        return 2;
    }
    if (!spec || !*spec) {
        fprintf(stderr, "monet-ctl: no CSR access given: pass --csr SPEC or set MONET_CTL_CSR\n%s", usage);
        return 2;
    }
    char why[512];
    if (hal_open(spec, why, sizeof(why))) {
        fprintf(stderr, "monet-ctl: --csr %s: %s\n", spec, why);
        return 2;
    }
    if (i == argc) return run_stdin();
    char line[CONSOLE_LINE_MAX + 1];
    size_t len = 0;
    for (; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (len + n + 1 > CONSOLE_LINE_MAX) {
            fprintf(stderr, "monet-ctl: the command is longer than %d characters\n", CONSOLE_LINE_MAX);
            return 2;
        }
        memcpy(line + len, argv[i], n);
        len += n;
        line[len++] = ' ';
    }
    line[len - 1] = 0;
    console_line(line);
    return console_errors ? 1 : 0;
}
