#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The BFCT's codes as plain Python, without Migen (the host reads them through monet.soc.facts, the firmware as
soc.h constants, REMAT_FAULT_* and REMAT_TARGET_*): the fault kinds ReMAT latches with a faulting address, and
the targets a section sends its accesses to."""

# Fault kinds latched with the faulting address.
FAULTS = {
    "none":     0,
    "unmapped": 1,   # outside the table, or the section is disabled.
    "no_read":  2,
    "no_write": 3,
    "target":   4,   # the section names a target this build does not have.
    "remote":   5,   # the memory card answered with an error.
    "timeout":  6,   # no answer within ReMAT's request timeout (the link is down): the outcome is unknown.
}
FAULT_NONE, FAULT_UNMAPPED, FAULT_NO_READ, FAULT_NO_WRITE, FAULT_TARGET, FAULT_REMOTE, FAULT_TIMEOUT = FAULTS.values()

# A section's `target`: remote port 0, through the link, the compute card's local memory, or remote port 1, through
# the pooled model's second link (to a second memory card).
TARGETS = {"remote0": 0, "local": 1, "remote1": 2}
TARGET_REMOTE0, TARGET_LOCAL, TARGET_REMOTE1 = TARGETS["remote0"], TARGETS["local"], TARGETS["remote1"]
