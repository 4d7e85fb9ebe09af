/* Driver of ReMAT's combiner, the CPU's cacheable window: its read buffer's fetch size, the fence, its
 * counters (bare metal and Linux user space). */
#ifndef MONET_COMBINER_H
#define MONET_COMBINER_H

#include <stdint.h>

struct combiner_counters { uint32_t read_hits, fetches, write_lines, write_words, write_errors; };

/* Lines a read miss fetches: 1, or 2 (the aligned 128 B pair). */
void combiner_set_fetch_lines(uint32_t lines);
uint32_t combiner_fetch_lines(void);
/* Sends the buffered write line and drops the read lines; 0 once done, -1 if it did not end within
 * `max_polls` polls (a link that does not answer). */
int combiner_fence(uint32_t max_polls);
/* A bound for the fence's wait: more cycles than ReMAT's default request timeout, which ends every access. */
#define COMBINER_FENCE_POLLS 1000000u
void combiner_counters(struct combiner_counters *c);

#endif
