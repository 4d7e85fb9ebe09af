#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The sim channel's fault kinds and loopbacks as plain Python, without Migen (the host reads them through
monet.soc.facts, the firmware as soc.h constants, CHANNEL_FAULT_* and CHANNEL_LOOPBACK_*): what the channel's
injector (injector.py) puts on one frame, a lane's words garbled for a while, a lane that slips or loses lock,
or the whole link down for a while."""

FAULT_KINDS = {
    "none":      0,
    "crc":       1,   # one bit of a frame's CRC flipped
    "type":      2,   # a frame's first header of an unknown type, its CRC mended to match
    "truncated": 3,   # only the first half of a frame sent
    "duplicate": 4,   # a frame sent twice
    "skip":      5,   # a frame not sent: the next one skips a sequence number
    "flood":     6,   # a frame sent many times back to back: the deframer overflows
    "lane":      7,   # one lane's words garbled for a number of cycles
    "down":      8,   # every lane down for a number of cycles (a PHY that loses lock)
    "slip":      9,   # one lane loses a word: its blocks arrive a row late until the lanes realign on a marker
    "lane_down": 10,  # one lane's receiver loses lock for a number of cycles: its words lost, then realigned
}
# The kinds the injector puts on one frame; the channel's own (a lane, the link) start with the frame the injector
# finds for them, which it lets pass unchanged.
FRAME_FAULTS   = ("crc", "type", "truncated", "duplicate", "skip", "flood")
# The channel's loopbacks for bring-up: the compute card's words back to it from inside its own PHY (near), or
# sent back by the memory card's PHY as it receives them (far).
LOOPBACKS = {"none": 0, "near": 1, "far": 2}
CHANNEL_FAULTS = ("lane", "down", "slip", "lane_down")
# The circuit switch (switch.py): a card port with no circuit reads NO_CIRCUIT. A Polatis-class optical circuit
# switch sets a circuit up in 25 ms (MONet, section 4.C; its section 3 says 20 ms); the sim compresses it by
# SWITCH_COMPRESSION by default, so that a move runs in seconds of simulation, and the host prints both.
NO_CIRCUIT = 15
OCS_SETUP_S = 25e-3
SWITCH_COMPRESSION = 1000
