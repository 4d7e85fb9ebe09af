/* Stage timer driver: the compute card's (ReMAT to the lanes and back) and the memory card's (the lanes to
 * the card and back), each where the register map has it. */
#include <generated/csr.h>

#include "monet_hal.h"
#include "stages.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Each card's segment sums in the order of its points (litex/soc/remote.py's STAGE_SEGMENTS). */
#ifdef CSR_REMOTE_STAGES_C_COUNT_ADDR
static const uint32_t compute_addrs[] = {
    CSR_REMOTE_STAGES_C_REQUEST_TO_LINK_TX_ADDR, CSR_REMOTE_STAGES_C_LINK_TX_TO_LANES_TX_ADDR,
    CSR_REMOTE_STAGES_C_LANES_TX_TO_LANES_RX_ADDR, CSR_REMOTE_STAGES_C_LANES_RX_TO_LINK_RX_ADDR,
    CSR_REMOTE_STAGES_C_LINK_RX_TO_ANSWER_ADDR,
};
_Static_assert(ARRAY_LEN(compute_addrs) <= STAGES_MAX_SEGMENTS, "compute card: more segments than stage_sums holds");
#endif
#ifdef CSR_REMOTE_STAGES_M_COUNT_ADDR
static const uint32_t memory_addrs[] = {
    CSR_REMOTE_STAGES_M_LANES_RX_TO_LINK_RX_ADDR, CSR_REMOTE_STAGES_M_LINK_RX_TO_LINK_TX_ADDR,
    CSR_REMOTE_STAGES_M_LINK_TX_TO_LANES_TX_ADDR,
};
_Static_assert(ARRAY_LEN(memory_addrs) <= STAGES_MAX_SEGMENTS, "memory card: more segments than stage_sums holds");
#endif

static void read_card(struct stage_sums *s, const char *card, const uint32_t *addrs, int segments,
                      uint32_t count_addr, uint32_t spoiled_addr) {
    s->card = card;
    s->segments = segments;
    for (int i = 0; i < segments; i++) s->sums[i] = hal_read32(addrs[i]);
    s->count = hal_read32(count_addr);
    s->spoiled = hal_read32(spoiled_addr);
}

int stages_read(struct stage_sums *s, int max) {
    int n = 0;
#ifdef CSR_REMOTE_STAGES_C_COUNT_ADDR
    if (n < max) read_card(&s[n], "compute", compute_addrs, ARRAY_LEN(compute_addrs),
                           CSR_REMOTE_STAGES_C_COUNT_ADDR, CSR_REMOTE_STAGES_C_SPOILED_ADDR);
    n++;
#endif
#ifdef CSR_REMOTE_STAGES_M_COUNT_ADDR
    if (n < max) read_card(&s[n], "memory", memory_addrs, ARRAY_LEN(memory_addrs),
                           CSR_REMOTE_STAGES_M_COUNT_ADDR, CSR_REMOTE_STAGES_M_SPOILED_ADDR);
    n++;
#endif
    return n < max ? n : max;
}

void stages_clear(void) {
#ifdef CSR_REMOTE_STAGES_C_CLEAR_ADDR
    hal_write32(CSR_REMOTE_STAGES_C_CLEAR_ADDR, 1);
#endif
#ifdef CSR_REMOTE_STAGES_M_CLEAR_ADDR
    hal_write32(CSR_REMOTE_STAGES_M_CLEAR_ADDR, 1);
#endif
}
