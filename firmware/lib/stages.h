/* Stage timers (litex/cores/common/stages.py, wired by litex/soc/remote.py): the cycles remote accesses that
 * travelled alone spent between the points of their path, summed, on each card that is in this register map. */
#ifndef MONET_STAGES_H
#define MONET_STAGES_H

#include <stdint.h>

#define STAGES_MAX_SEGMENTS 5

/* One card's timer: its segments' summed cycles in the order of its points (litex/soc/remote.py's
 * STAGE_SEGMENTS), units timed and samples spoiled (another unit set off, or a point fired out of turn, while one travelled). The registers
 * are read one at a time: read them while no access is on the path (as `bench latency` does). */
struct stage_sums {
    const char *card;
    int segments;
    uint32_t sums[STAGES_MAX_SEGMENTS];
    uint32_t count, spoiled;
};

/* Fills `s` with the timers of the cards in this register map, at most `max`; returns how many it filled. */
int stages_read(struct stage_sums *s, int max);
void stages_clear(void);

#endif
