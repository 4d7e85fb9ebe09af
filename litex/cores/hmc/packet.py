#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""HMC packets (spec 1.1, as the thesis and openHMC use it): FLITs, commands, header and tail fields, CRC-32K.

A packet is 1 to 9 FLITs of 128 bits. The 64-bit header is FLIT 0 bits [63:0], the 64-bit tail the last
FLIT's bits [127:64]; the payload (16 to 128 B in 16 B steps) lies between them. A packet is handled here
as one integer, header at bit 0, so packet bit 128*f + b is FLIT f's bit b. Sources, in the reference
`hmc-protocol-and-nam.md` s.1.2-1.3: the field positions and command encodings are openHMC rev 1.5's
(`hmc_packet.sv`, `hmc_types.svh`), which implements spec 1.1.

CRC-32K (Koopman, x^32+x^30+x^29+x^28+x^26+x^20+x^19+x^17+x^16+x^15+x^11+x^10+x^7+x^6+x^4+x^2+x+1,
0x741B8CD7 without the x^32 term) covers the whole packet with the tail's CRC field taken as zero, bit 0 of
the packet first, from a zero register, with no final inversion; CRC bit i sits in tail bit 32+i. A
poisoned packet carries the inverted CRC: its receiver drops it without a retry.

This module is the one place these layouts live: gateware packs and reads fields with the tables' `pack`
and `get`, host code and tests with `word` and `value`.
"""

from monet.cores.common.crc import crc_reference
from monet.cores.common.fields import FieldTable
from monet.cores.common.layouts import HMC_FLIT_BITS, HMC_MAX_FLITS

FLIT_BITS      = HMC_FLIT_BITS
FLIT_BYTES     = FLIT_BITS // 8
MAX_FLITS      = HMC_MAX_FLITS
MAX_DATA_BYTES = FLIT_BYTES * (MAX_FLITS - 1)   # the largest payload, and the block no request may cross
TAG_BITS       = 9
ADDR_BITS      = 34

CRC32K_POLY = 0x741B8CD7
CRC_OFFSET  = 32         # CRC bits in the tail, above its flow-control fields

# Commands (6 bits; bits [5:3] are the command's type).
NULL, PRET, TRET, IRTRY = 0x00, 0x01, 0x02, 0x03
WR16, P_WR16 = 0x08, 0x18      # WR16..WR128 = 0x08..0x0F, P_WR16..P_WR128 = 0x18..0x1F
MD_WR, BWR, ADD2x8, ADD16 = 0x10, 0x11, 0x12, 0x13
P_BWR, P_ADD2x8, P_ADD16 = 0x21, 0x22, 0x23
MD_RD = 0x28
RD16 = 0x30                    # RD16..RD128 = 0x30..0x37
RD_RS, WR_RS, MD_RD_RS, MD_WR_RS, ERROR = 0x38, 0x39, 0x3A, 0x3B, 0x3E

TYPE_MASK = 0x38
T_FLOW, T_WRITE, T_MISC_WRITE, T_POSTED_WRITE, T_POSTED_MISC_WRITE, T_MODE_READ, T_READ, T_RESPONSE = \
    0x00, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x38

# ERRSTAT of the device's ERROR responses. Spec 1.1's ERRSTAT table is not in our references; these values
# are the model's own, named so that the host controller and the tests share them.
ERRSTAT_NONE          = 0x00
ERRSTAT_INVALID_CMD   = 0x30   # a command the device does not execute
ERRSTAT_INVALID_LNG   = 0x31   # LNG is not the command's length (LNG = DLN is a link check, before this)
ERRSTAT_CROSSES_BLOCK = 0x32   # the access crosses a 128 B block boundary
ERRSTAT_UNCORRECTABLE = 0x33   # a read of the poisoned line: the vault found an uncorrectable DRAM word

REQUEST_HEADER = FieldTable("request header", 64, [
    ("cmd",  6,  "command"),
    ("rsvd0", 1, "reserved (spec 2.x's seventh command bit)"),
    ("lng",  4,  "packet length in FLITs, header and tail included"),
    ("dln",  4,  "LNG again: a mismatch is a link error"),
    ("tag",  TAG_BITS, "request tag, returned in the response"),
    ("adrs", ADDR_BITS, "byte address (16 B granular: bits [3:0] are ignored)"),
    ("rsvd1", 3, "reserved"),
    ("cub",  3,  "cube ID (chaining)"),
])

RESPONSE_HEADER = FieldTable("response header", 64, [
    ("cmd",  6,  "command"),
    ("rsvd0", 1, "reserved"),
    ("lng",  4,  "packet length in FLITs"),
    ("dln",  4,  "LNG again"),
    ("tag",  TAG_BITS, "the request's tag"),
    ("tga",  TAG_BITS, "return tag (optional; zero here)"),
    ("rsvd1", 6, "reserved"),
    ("slid", 3,  "source link ID: the link the request came in on"),
])

REQUEST_TAIL = FieldTable("request tail", 64, [
    ("rrp",  8,  "return retry pointer: the last FRP received from the partner"),
    ("frp",  8,  "forward retry pointer: this packet's place in the sender's retry buffer"),
    ("seq",  3,  "sequence number, +1 per flow-controlled packet"),
    ("rsvd0", 5, "reserved"),
    ("slid", 3,  "source link ID (the cube fills it in)"),
    ("rtc",  5,  "return token count: input-buffer FLITs freed at the sender"),
    ("crc",  32, "CRC-32K of the packet with this field zero"),
])

RESPONSE_TAIL = FieldTable("response tail", 64, [
    ("rrp",  8,  "return retry pointer"),
    ("frp",  8,  "forward retry pointer"),
    ("seq",  3,  "sequence number"),
    ("dinv", 1,  "data invalid"),
    ("errstat", 7, "error status (ERRSTAT_*)"),
    ("rtc",  5,  "return token count"),
    ("crc",  32, "CRC-32K"),
])


def command_type(cmd):
    return cmd & TYPE_MASK


def data_bytes(cmd):
    """Payload bytes a read asks for or a write carries (0 for flow packets and responses)."""
    if command_type(cmd) in (T_WRITE, T_POSTED_WRITE, T_READ):
        return FLIT_BYTES * ((cmd & 0x7) + 1)
    if command_type(cmd) in (T_MISC_WRITE, T_POSTED_MISC_WRITE) or cmd == MD_RD:
        return FLIT_BYTES
    return 0


def write_cmd(n_bytes, posted=False):
    """WR16..WR128 (P_WR16..P_WR128 when posted) for `n_bytes`, a multiple of 16 up to 128."""
    assert n_bytes % FLIT_BYTES == 0 and 0 < n_bytes <= MAX_DATA_BYTES, f"{n_bytes} B is not 16..128 in 16 B steps"
    return (P_WR16 if posted else WR16) + n_bytes // FLIT_BYTES - 1


def read_cmd(n_bytes):
    assert n_bytes % FLIT_BYTES == 0 and 0 < n_bytes <= MAX_DATA_BYTES, f"{n_bytes} B is not 16..128 in 16 B steps"
    return RD16 + n_bytes // FLIT_BYTES - 1


def request_flits(cmd):
    """LNG of a request: a read is one FLIT whatever it asks for; a write is its payload plus one."""
    if command_type(cmd) in (T_FLOW, T_READ, T_MODE_READ):
        return 1
    return data_bytes(cmd) // FLIT_BYTES + 1


def response_cmd(cmd):
    """The response a non-posted request gets (None for posted writes and flow packets)."""
    return {T_READ: RD_RS, T_WRITE: WR_RS, T_MISC_WRITE: WR_RS if cmd != MD_WR else MD_WR_RS,
            T_MODE_READ: MD_RD_RS}.get(command_type(cmd))


def is_posted(cmd):
    return command_type(cmd) in (T_POSTED_WRITE, T_POSTED_MISC_WRITE)


def crc32k(packet, flits):
    """CRC-32K of a packet of `flits` FLITs (an integer, header at bit 0), its CRC field read as zero."""
    bits = FLIT_BITS * flits
    crc_field = ((1 << 32) - 1) << (bits - 64 + CRC_OFFSET)
    # The packet's bit 0 goes first; crc_reference feeds its most significant bit first.
    lsb_first = int(format(packet & ~crc_field, f"0{bits}b")[::-1], 2)
    return crc_reference(lsb_first, bits, width=32, poly=CRC32K_POLY, init=0)


def with_crc(packet, flits, poisoned=False):
    """The packet with its CRC field filled in (inverted if `poisoned`)."""
    crc = crc32k(packet, flits) ^ (0xFFFFFFFF if poisoned else 0)
    shift = FLIT_BITS * flits - 64 + CRC_OFFSET
    return packet & ~(((1 << 32) - 1) << shift) | crc << shift


def crc_status(packet, flits):
    """"good", "poisoned" (inverted CRC) or "bad"."""
    carried = packet >> (FLIT_BITS * flits - 64 + CRC_OFFSET) & 0xFFFFFFFF
    crc = crc32k(packet, flits)
    return "good" if carried == crc else "poisoned" if carried == crc ^ 0xFFFFFFFF else "bad"


def assemble(header, data, tail, flits):
    """A packet of `flits` FLITs from its header, payload bytes and tail, with its CRC; and `flits`."""
    packet = header | int.from_bytes(data, "little") << 64 | tail << (FLIT_BITS * flits - 64)
    return with_crc(packet, flits), flits


def request(cmd, adrs=0, tag=0, data=b"", cub=0, seq=0, frp=0, rrp=0, rtc=0):
    """A request packet as an integer with its CRC, and its length in FLITs. `data` is the payload, its
    first byte at the lowest address (FLIT 1 byte 0)."""
    flits = request_flits(cmd)
    assert len(data) == FLIT_BYTES * (flits - 1), f"command {cmd:#x} carries {FLIT_BYTES * (flits - 1)} B"
    return assemble(REQUEST_HEADER.word(cmd=cmd, lng=flits, dln=flits, tag=tag, adrs=adrs, cub=cub),
                    data, REQUEST_TAIL.word(rrp=rrp, frp=frp, seq=seq, rtc=rtc), flits)


def response(cmd, tag=0, data=b"", errstat=0, dinv=0, slid=0, seq=0, frp=0, rrp=0, rtc=0):
    """A response packet as an integer with its CRC, and its length in FLITs."""
    flits = len(data) // FLIT_BYTES + 1
    return assemble(RESPONSE_HEADER.word(cmd=cmd, lng=flits, dln=flits, tag=tag, slid=slid), data,
                    RESPONSE_TAIL.word(rrp=rrp, frp=frp, seq=seq, dinv=dinv, errstat=errstat, rtc=rtc), flits)


def parse(packet, flits, is_response):
    """The fields of a packet (header and tail tables merged), its payload bytes and its CRC status."""
    header_table, tail_table = (RESPONSE_HEADER, RESPONSE_TAIL) if is_response else (REQUEST_HEADER, REQUEST_TAIL)
    header = packet & (1 << 64) - 1
    tail = packet >> (FLIT_BITS * flits - 64) & (1 << 64) - 1
    fields = {name: table.value(word, name) for table, word in ((header_table, header), (tail_table, tail))
              for name in table.fields if not name.startswith("rsvd")}
    n_data = FLIT_BYTES * (flits - 1)
    fields["data"] = (packet >> 64 & (1 << 8 * n_data) - 1).to_bytes(n_data, "little")
    fields["crc_status"] = crc_status(packet, flits)
    return fields
