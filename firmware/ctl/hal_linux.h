/* monet-ctl's CSR access (monet_hal.h's MONET_HAL_LINUX functions), chosen at run time by a SPEC. */
#ifndef MONET_HAL_LINUX_H
#define MONET_HAL_LINUX_H

#include <stddef.h>

#define HAL_SPECS "tcp:HOST:PORT (Etherbone through litex_server: the sim's CSR bridge, a board's UART or\n" \
                  "        Ethernet bridge), uio:/dev/uioN (the compute card's CSRs as UIO on its PS), mem:ADDRESS\n" \
                  "        (/dev/mem at the CSRs' physical address, 64 KiB)"

/* 0 when the CSRs are reachable as `spec` says; else -1 and why (in `why`). */
int hal_open(const char *spec, char *why, size_t why_size);

#endif
