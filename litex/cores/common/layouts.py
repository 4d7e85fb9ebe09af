#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Layouts and constants every core shares: transactions, frame types, beats and lane bundles.

The wire format (units of 64-bit blocks sharing a CRC-32 trailer per frame) is in common/wire.py. A beat
is up to 8 blocks (512 bits), the width of ReMAT and the link. This module imports no other core, and no
Migen: the host reads its constants (through monet.soc.facts).
"""

BLOCK_BITS  = 64
BEAT_BLOCKS = 8
LINE_BYTES  = 64
LINE_BITS   = 8*LINE_BYTES
TAG_BITS    = 9    # 512 requests in flight: what a round trip at 100 m needs at a line a cycle
LADDR_BITS  = 36
SEQ_BITS    = 11   # link sequence numbers: a retry window below 2**(SEQ_BITS-1) transactions.
CREDIT_BITS = 5    # cumulative credit count in a trailer, modulo 2**CREDIT_BITS.
# A credit returns 16 requests (PCIe's data credits likewise cover 16 bytes, not one): the trailer's 5 bits
# then cover a limit of 511 requests, what 512 tags at 100 m need, and the trailer keeps its 64 bits beside
# two 11-bit sequence numbers.
REQUESTS_PER_CREDIT = 16
MAX_CREDIT_LIMIT    = 2**CREDIT_BITS * REQUESTS_PER_CREDIT - 1   # requests in use at most (credit limit)

# Frame types.
T_RD_REQ = 1
T_WR_REQ = 2
T_RD_RSP = 3
T_WR_ACK = 4
T_ERR    = 5
T_TRAILER = 0xF


def carries_line(frame_type):
    """True for the frame types that carry a 64-byte line (write requests and read responses)."""
    return (frame_type == T_WR_REQ) | (frame_type == T_RD_RSP)


# A transaction as ReMAT and the memory card see it (one per frame).
txn_layout = [
    ("type",  4),
    ("tag",   TAG_BITS),
    ("laddr", LADDR_BITS),
    ("mask",  LINE_BYTES),   # byte enables (writes); all ones means a full line.
    ("data",  LINE_BITS),
]

# A transaction with its link sequence number, from the retry buffer to the framer.
seq_txn_layout = txn_layout + [("seq", SEQ_BITS)]

# A beat on the link: up to 8 blocks, blocks 0..count-1 valid.
beat_layout = [
    ("data",  BEAT_BLOCKS*BLOCK_BITS),
    ("ctrl",  BEAT_BLOCKS),
    ("count", 4),
]


def has_data(frame_type):
    return frame_type in (T_WR_REQ, T_RD_RSP)


def lane_slots(lane):
    """Block slots lane `lane` needs: with N lanes, lane i carries blocks i, i+N, ... of a beat."""
    n = 1
    while n <= lane:
        n *= 2
    return BEAT_BLOCKS // n


def lane_layout(lane):
    slots = lane_slots(lane)
    return [("data", slots*BLOCK_BITS), ("ctrl", slots), ("used", slots)]


MAX_LANES = 8


def bundle_layout():
    """All lanes' words side by side: lanes move in lockstep at the transmitter."""
    layout = []
    for lane in range(MAX_LANES):
        layout += [(f"lane{lane}_{name}", width) for name, width in lane_layout(lane)]
    return layout


# An HMC packet as the HMC link layer and the HMC channel carry it (hmc/packet.py has its fields and
# commands): 128-bit FLITs, 1 to 9 a packet; the 64-bit header, up to 8 FLITs of payload, the 64-bit tail.
HMC_FLIT_BITS    = 128
HMC_MAX_FLITS    = 9
HMC_PAYLOAD_BITS = HMC_FLIT_BITS * (HMC_MAX_FLITS - 1)

hmc_packet_layout = [
    ("header", 64),
    ("data",   HMC_PAYLOAD_BITS),   # the payload, FLIT 0's upper half first: its bit 0 is packet bit 64
    ("tail",   64),
    ("lng",    4),                  # FLITs on the wire (this packet's; a second packet adds its own)
    # A second packet of one FLIT in the same cycle (a read request after a write, a write response after a
    # read response): its header and tail. The link layer sequences, checks and retries the two as a pair.
    ("second",        1),
    ("second_header", 64),
    ("second_tail",   64),
]


def segment_names(points):
    """The segments between consecutive `points`, as a StageTimer names them (its CSRs, its sums' order)."""
    return [f"{a}_to_{b}" for a, b in zip(points, points[1:])]
