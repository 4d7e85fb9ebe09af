#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The BFCT's codes as plain Python, without Migen (the host reads them through monet.soc.facts): the fault
kinds ReMAT latches with a faulting address, and the targets a section sends its accesses to."""

# Fault kinds latched with the faulting address.
FAULT_NONE      = 0
FAULT_UNMAPPED  = 1  # outside the table, or the section is disabled.
FAULT_NO_READ   = 2
FAULT_NO_WRITE  = 3
FAULT_TARGET    = 4  # the section names a target this build does not have.
FAULT_REMOTE    = 5  # the memory card answered with an error.
FAULT_TIMEOUT   = 6  # no answer within ReMAT's request timeout (the link is down): the outcome is unknown.

TARGET_REMOTE0 = 0   # `target` values: remote port 0, through the link ...
TARGET_LOCAL   = 1   # ... or the compute card's local memory
