/* HMC driver (the memory card's HMC, sim). */
#include <generated/csr.h>
#include <generated/soc.h>

#include "monet_hal.h"
#include "hmc.h"

#ifdef CSR_REMOTE_MEMCARD_HMC_FLIT_PS_ADDR
int hmc_present(void) { return 1; }
uint32_t hmc_max_delay(void) { return HMC_MAX_DELAY; }

void hmc_set(const struct hmc_settings *s, int reseed) {
    hal_write32(CSR_REMOTE_MEMCARD_HMC_FLIT_PS_ADDR, s->flit_ps);
    hal_write32(CSR_REMOTE_MEMCARD_HMC_DELAY_ADDR, s->delay);
    hal_write64(CSR_REMOTE_MEMCARD_HMC_BER_ADDR, s->ber);   /* a 40-bit CSR */
    if (reseed) hal_write32(CSR_REMOTE_MEMCARD_HMC_BER_SEED_ADDR, s->seed);
    hal_write32(CSR_REMOTE_MEMCARD_HMC_POISON_ADDR, s->poison);
    hal_write32(CSR_REMOTE_MEMCARD_HMC_POISON_LINE_ADDR, s->poison_line);
}

void hmc_get(struct hmc_settings *s) {
    s->flit_ps = hal_read32(CSR_REMOTE_MEMCARD_HMC_FLIT_PS_ADDR);
    s->delay   = hal_read32(CSR_REMOTE_MEMCARD_HMC_DELAY_ADDR);
    s->ber     = hal_read64(CSR_REMOTE_MEMCARD_HMC_BER_ADDR);
    s->seed    = hal_read32(CSR_REMOTE_MEMCARD_HMC_BER_SEED_ADDR);
    s->poison      = hal_read32(CSR_REMOTE_MEMCARD_HMC_POISON_ADDR);
    s->poison_line = hal_read32(CSR_REMOTE_MEMCARD_HMC_POISON_LINE_ADDR);
}

void hmc_read_counters(struct hmc_counters *c) {
#define HMC_COUNTER_READ(name, reg, bits) c->name = hal_read##bits(CSR_REMOTE_MEMCARD_HMC_##reg##_ADDR);
    HMC_COUNTER_LIST(HMC_COUNTER_READ)
}
#else
int hmc_present(void) { return 0; }
uint32_t hmc_max_delay(void) { return 0; }
void hmc_set(const struct hmc_settings *s, int reseed) { (void)s; (void)reseed; }
void hmc_get(struct hmc_settings *s) { *s = (struct hmc_settings){0}; }
void hmc_read_counters(struct hmc_counters *c) { *c = (struct hmc_counters){0}; }
#endif
