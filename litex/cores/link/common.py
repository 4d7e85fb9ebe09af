#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Link-layer definitions shared by the framer, deframer, striper and deskew.

Wire format (64-bit blocks; one control flag per block stands for the 64b/66b sync header, so it costs
no line bits beyond the 66b coding that the channel model already charges):

    frame   = header [mask] [data0 .. data7] trailer
    header  = ctrl block: [3:0] type, [11:4] tag, [47:12] line address (64 B lines), [48] has_mask
    mask    = data block: 64-bit byte-enable of a partial line write (absent for full lines)
    data    = 8 data blocks: one 64 B line, block 0 holds bytes 0..7
    trailer = ctrl block: [31:0] CRC-32 over the canonical image (header, mask or 0, data or 0)

A lone request is one header and one trailer (2 blocks) and leaves at once. Frames start on a beat
boundary; a beat is up to 8 blocks (512 bits), the width of ReMAT and the link.
"""

from migen import *

BLOCK_BITS  = 64
BEAT_BLOCKS = 8
LINE_BYTES  = 64
LINE_BITS   = 8*LINE_BYTES
TAG_BITS    = 8
LADDR_BITS  = 36

# Frame types.
T_RD_REQ = 1
T_WR_REQ = 2
T_RD_RSP = 3
T_WR_ACK = 4
T_ERR    = 5

FRAME_MAX_BLOCKS = 11  # header + mask + 8 data + trailer.
CANON_BITS       = BLOCK_BITS + BLOCK_BITS + LINE_BITS  # header, mask, data: CRC input.

# A transaction as ReMAT and the memory card see it (one per frame).
txn_layout = [
    ("type",  4),
    ("tag",   TAG_BITS),
    ("laddr", LADDR_BITS),
    ("mask",  LINE_BYTES),   # byte enables (writes); all ones means a full line.
    ("data",  LINE_BITS),
]

# A beat on the link: up to 8 blocks, blocks 0..count-1 valid.
beat_layout = [
    ("data",  BEAT_BLOCKS*BLOCK_BITS),
    ("ctrl",  BEAT_BLOCKS),
    ("count", 4),
]


def has_data(frame_type):
    return frame_type in (T_WR_REQ, T_RD_RSP)


def frame_blocks(frame_type, partial):
    """Number of blocks of a frame on the wire."""
    n = 2
    if has_data(frame_type):
        n += 8
        if frame_type == T_WR_REQ and partial:
            n += 1
    return n


def lane_slots(lane):
    """Block slots lane `lane` needs: with N lanes, lane i carries blocks i, i+N, ... of a beat."""
    n = 1
    while n <= lane:
        n *= 2
    return BEAT_BLOCKS // n


def lane_layout(lane):
    slots = lane_slots(lane)
    return [("data", slots*BLOCK_BITS), ("ctrl", slots), ("used", slots)]
