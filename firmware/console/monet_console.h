/* The console's shared parts: arguments, JSON output helpers and the command table, for every command that
 * reaches the SoC through its CSRs alone (firmware/console/cmd_<core>.c). They are built twice: into the
 * soft CPU's firmware (firmware/app, with the commands that access the remote window from the CPU) and into
 * monet-ctl (firmware/ctl, Linux user space: a board's PS, or a host through the sim's CSR bridge), so both
 * take the same lines and give the same answers.
 * Each command is registered where it is written, with define_command (the LiteX BIOS's pattern): the
 * linker gathers the entries in the monet_commands section, and `help` and the dispatcher walk it. */
#ifndef MONET_CONSOLE_H
#define MONET_CONSOLE_H

#include <stdint.h>
#include <generated/soc.h>

/* A generated constant inside a message: "0.." XSTR(CHANNEL_MAX_DELAY) " cycles". */
#define STR(x)  #x
#define XSTR(x) STR(x)

#define MAX_ARGS     16
#define CONSOLE_LINE_MAX 255   /* characters of one command line */

/* Arguments: key=value pairs after the command word. */
struct args { int n; char *key[MAX_ARGS]; char *val[MAX_ARGS]; };
const char *arg_str(struct args *a, const char *key, const char *def);
uint32_t arg_u32(struct args *a, const char *key, uint32_t def);

/* Every command answers exactly one JSON line; these write parts of it. */
void error(const char *what);
extern int console_errors;   /* answers that were errors, since the program started */
void print_samples(const char *name, const uint32_t *v, uint32_t n);
void print_faults(uint32_t before);   /* "fault" (the counter moved since `before`), faults, addr, kind */

/* The benchmark block's settings from a command's arguments (`pbb`, `pool`): NULL, or what is wrong. */
struct pbb_settings;
const char *pbb_parse(struct args *a, struct pbb_settings *s, const char **op, const char **pattern);
const char *pbb_run_error(const struct pbb_settings *s);   /* count and outstanding, which pool sets a card */
/* A run's figures, "completed" to "lat_sum" (`pbb`, `pool`, `move`; each adds its own around them). */
struct pbb_result;
void print_pbb_run(const struct pbb_result *r);

/* One command line: parsed, dispatched, answered (an error answer when it is not `command key=value ...`). */
void console_line(char *line);

/* The SoC's clock in cycles, for waits and timeouts: each program that links the console brings its own
 * (the soft CPU's mcycle; in monet-ctl, the SoC's uptime counter where it has one, else the wall clock). */
uint64_t console_cycles(void);

/* The entries must lie back to back: an alignment given by hand keeps the compiler from raising that of each
 * (GCC aligns a 24-byte object to 32 bytes on x86-64, which left gaps in monet-ctl's table). */
/* A card command (define_card_command) takes `card=N` in the pooled model: the compute card's registers it
 * reaches are then traffic card N's (firmware/lib/card.h); the others are the compute card's or the memory
 * card's alone. */
struct command { const char *name; void (*fn)(struct args *); const char *help; int per_card; };
#define define_command_entry(cmd_name, handler, help_text, card) \
    static const struct command command_##cmd_name \
        __attribute__((__used__, __aligned__(__alignof__(struct command)), __section__("monet_commands"))) = \
        {#cmd_name, handler, help_text, card}
#define define_command(cmd_name, handler, help_text) define_command_entry(cmd_name, handler, help_text, 0)
#define define_card_command(cmd_name, handler, help_text) define_command_entry(cmd_name, handler, help_text, 1)

#define FENCE_STUCK "the combiner's fence did not end: the link does not answer"

/* The window may span the whole 32-bit space (a board's: 16 sections of 256 MB). */
static inline int window_ok(uint32_t offset, uint32_t bytes) {
    const uint64_t window = (uint64_t)REMOTE_SECTIONS << REMOTE_SECTION_BITS;
    return offset < window && bytes <= window - offset && (offset & 3) == 0;
}

#endif
