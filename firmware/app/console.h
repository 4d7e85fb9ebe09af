/* The console's shared parts: arguments, JSON output helpers, the remote window, and the command table.
 * Each command is registered where it is written, with define_command (the LiteX BIOS's pattern): the
 * linker gathers the entries in the .commands section and `help` and the dispatcher walk it. */
#ifndef MONET_CONSOLE_H
#define MONET_CONSOLE_H

#include <stdint.h>
#include <generated/soc.h>
#include <system.h>

#include "combiner.h"

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
void print_samples(const char *name, const uint32_t *v, uint32_t n);
void print_faults(uint32_t before);   /* "fault" (the counter moved since `before`), faults, addr, kind */

struct command { const char *name; void (*fn)(struct args *); const char *help; };
#define define_command(cmd_name, handler, help_text) \
    static const struct command command_##cmd_name __attribute__((__used__, __section__(".commands"))) = \
        {#cmd_name, handler, help_text}

/* Data pattern: xorshift32, seeded. */
static inline uint32_t pattern_seed(uint32_t seed) { uint32_t s = seed ^ 0x9e3779b9u; return s ? s : 1; }
static inline uint32_t pattern_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *s = x;
}

static inline volatile uint32_t *remote(uint32_t offset) { return (volatile uint32_t *)(REMOTE_BASE + offset); }

/* The same window, cacheable: through the data cache and ReMAT's combiner (fence before other paths look). */
static inline volatile uint32_t *remote_cached(uint32_t offset) {
    return (volatile uint32_t *)(REMOTE_CACHED_BASE + offset);
}

/* Before reading through the cacheable window what other paths wrote: nothing left in the data cache or the
 * combiner. After writing through it, combiner_fence puts the words in remote memory; when it does not
 * end, commands answer FENCE_STUCK. */
static inline void cached_window_clean(void) { flush_cpu_dcache(); combiner_fence(COMBINER_FENCE_POLLS); }
#define FENCE_STUCK "the combiner's fence did not end: the link does not answer"

static inline int window_ok(uint32_t offset, uint32_t bytes) {
    uint32_t window = REMOTE_SECTIONS << REMOTE_SECTION_BITS;
    return offset < window && bytes <= window - offset && (offset & 3) == 0;
}

#endif
