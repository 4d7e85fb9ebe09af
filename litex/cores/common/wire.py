#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The link's wire format as field tables: the framer packs with them, the deframer parses with them, the sim
channel's fault injector (phy/injector.py) edits frames with them, and
doc/wire-format.md is generated from them (`python -m monet.docgen`).

    frame   = unit [unit ...] trailer
    unit    = header [mask] [data0 .. data7] [data8 .. data15]

Every block is 64 bits; a header and a trailer are ctrl blocks (the 64b/66b control sync header), mask and
data blocks are not. A unit carries no data (read request, write ack, error), one line (8 data blocks), a
masked line (the mask block, then 8 data blocks) or a pair: two consecutive full lines under one header.
A trailer alone is a control frame: no transactions, only the ack, nak and credits (litex/cores/link/retry.py);
its seq is the next sequence number its sender will send.
"""

from monet.cores.common.fields import FieldTable
from monet.cores.common.layouts import (BLOCK_BITS, CREDIT_BITS, LADDR_BITS, LINE_BYTES, REQUESTS_PER_CREDIT, SEQ_BITS,
                                        TAG_BITS)

HEADER = FieldTable("header", BLOCK_BITS, [
    ("type",     4,          "frame type: 1 read request, 2 write request, 3 read response, 4 write ack, 5 error"),
    ("tag",      TAG_BITS,   "the requester's tag, echoed by the answer"),
    ("laddr",    LADDR_BITS, "line address (64 B lines)"),
    ("has_mask", 1,          "a mask block follows (a write of part of a line)"),
    ("pair",     1,          "two consecutive full lines under this header (16 data blocks)"),
    ("tag2",     TAG_BITS,   "the second line's tag (pairs only, else 0)"),
])

MASK = FieldTable("mask", BLOCK_BITS, [
    ("enables", LINE_BYTES, "byte enables of the line, bit i for byte i"),
])

TRAILER = FieldTable("trailer", BLOCK_BITS, [
    ("type",    4,           "0xF: a trailer"),
    ("seq",     SEQ_BITS,    "sequence number of the frame's first transaction; in a trailer alone, the next one to send"),
    ("ack",     SEQ_BITS,    "the next sequence number this end expects from its peer"),
    ("nak",     1,           "replay from the ack"),
    ("credits", CREDIT_BITS, f"credits returned so far ({REQUESTS_PER_CREDIT} requests taken each), modulo "
                             f"{2**CREDIT_BITS}"),
    ("crc",     32,          "CRC-32 over the frame's units (block 0 first) and the trailer's bits below this field"),
])
TABLES = (HEADER, MASK, TRAILER)
