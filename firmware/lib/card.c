/* Card selection in the pooled model (card.h). */
#include <generated/csr.h>

#include "card.h"

#if POOL_CARDS
uint32_t card_selected;

static const struct { uint16_t first, words; } spans[] = POOL_SPANS;
static const uint16_t card_words[POOL_CARDS][POOL_SPAN_WORDS] = POOL_MAP;

uint32_t card_address(uint32_t addr) {
    uint32_t word = (addr - CSR_BASE) >> 2, at = 0;
    for (uint32_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        if (word - spans[i].first < spans[i].words) {
            uint32_t theirs = card_words[card_selected - 1][at + word - spans[i].first];
            return theirs == POOL_ABSENT ? 0 : CSR_BASE + (theirs << 2);
        }
        at += spans[i].words;
    }
    return addr;   /* outside the compute card's registers: the SoC's own (timer, memory card) */
}
#endif

int card_select(uint32_t card) {
    if (card > POOL_CARDS) return -1;
#if POOL_CARDS
    card_selected = card;
#endif
    return 0;
}
