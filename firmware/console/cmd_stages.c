/* Console command of the stage timers: where lone remote accesses spent their cycles, per card. */
#include <stdio.h>
#include <stdint.h>

#include "monet_console.h"

#include "stages.h"

/* stages [clear=1]: each card's segment sums (cycles, in the order of its points), units timed and samples
 * spoiled; clear=1 starts over. Sums as a list: the console's characters cost the sim's time. */
static void cmd_stages(struct args *a) {
    if (arg_u32(a, "clear", 0)) stages_clear();
    struct stage_sums s[2];
    int cards = stages_read(s, 2);
    printf("{");
    for (int c = 0; c < cards; c++) {
        printf("%s\"%s\": {\"count\": %u, \"spoiled\": %u, \"sums\": [", c ? ", " : "", s[c].card,
               (unsigned)s[c].count, (unsigned)s[c].spoiled);
        for (int i = 0; i < s[c].segments; i++)
            printf("%s%u", i ? ", " : "", (unsigned)s[c].sums[i]);
        printf("]}");
    }
    printf("}\n");
}
define_command(stages, cmd_stages, "[clear=1] (where lone remote accesses spent their cycles, per card)");
