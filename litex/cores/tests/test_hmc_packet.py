"""HMC packets (litex/cores/hmc/packet.py): CRC-32K against an independent implementation (crcmod's
table-driven CRC over the packet's bits in transmission order), the poisoned and corrupted cases, field
round trips and the commands' lengths."""

import random

import crcmod
import pytest

from monet.cores.hmc import packet as hmc

# crcmod takes the polynomial with its x^32 term; non-reflected, zero start, no final XOR.
crcmod_crc32k = crcmod.mkCrcFun(1 << 32 | hmc.CRC32K_POLY, initCrc=0, rev=False, xorOut=0)


def independent_crc(packet, flits):
    """CRC-32K by crcmod: the packet's bits in transmission order (bit 0 first) as bytes, first bit at
    each byte's top, the CRC field zero."""
    bits = hmc.FLIT_BITS * flits
    packet &= ~(0xFFFFFFFF << (bits - 32))
    in_order = int(format(packet, f"0{bits}b")[::-1], 2)
    return crcmod_crc32k(in_order.to_bytes(bits // 8, "big"))


@pytest.mark.parametrize("flits", range(1, hmc.MAX_FLITS + 1))
def test_crc_matches_an_independent_implementation(flits):
    rng = random.Random(flits)
    for _ in range(50):
        packet = rng.getrandbits(hmc.FLIT_BITS * flits)
        assert hmc.crc32k(packet, flits) == independent_crc(packet, flits)


def test_crc_vectors():
    """Fixed vectors (computed by crcmod) so that a change to either implementation shows."""
    read, _ = hmc.request(hmc.read_cmd(64), adrs=0x1_2345_6780, tag=0x1A5, seq=3, frp=7, rrp=2)
    assert read >> 96 == independent_crc(read, 1) == 0x9033A6FC
    write, flits = hmc.request(hmc.write_cmd(32), adrs=0x80, tag=1, data=bytes(range(32)))
    assert flits == 3 and write >> (3 * 128 - 32) == independent_crc(write, 3) == 0x1386134F
    assert hmc.crc32k(0, 1) == 0    # NULL FLITs (all zero) carry a zero CRC


@pytest.mark.parametrize("flits", [1, 5, 9])
def test_every_single_bit_error_is_caught(flits):
    good, _ = hmc.response(hmc.RD_RS, tag=5, data=bytes(range(16 * (flits - 1))))
    assert hmc.crc_status(good, flits) == "good"
    for bit in range(hmc.FLIT_BITS * flits):
        assert hmc.crc_status(good ^ 1 << bit, flits) == "bad", bit


def test_poisoned_packets():
    packet, flits = hmc.request(hmc.write_cmd(128, posted=True), adrs=0x100, data=bytes(128))
    poisoned = hmc.with_crc(packet, flits, poisoned=True)
    assert hmc.crc_status(poisoned, flits) == "poisoned"
    assert hmc.crc_status(packet, flits) == "good"


def test_request_fields_round_trip():
    data = bytes(random.Random(1).getrandbits(8) for _ in range(48))
    packet, flits = hmc.request(hmc.write_cmd(48), adrs=0x3_FFFF_FFF0, tag=511, data=data, cub=5, seq=6, frp=200,
                                rrp=17, rtc=31)
    f = hmc.parse(packet, flits, is_response=False)
    assert flits == 4
    assert (f["cmd"], f["lng"], f["dln"], f["tag"], f["adrs"], f["cub"]) == (0x0A, 4, 4, 511, 0x3_FFFF_FFF0, 5)
    assert (f["seq"], f["frp"], f["rrp"], f["rtc"], f["data"], f["crc_status"]) == (6, 200, 17, 31, data, "good")
    # The header's fields sit where openHMC puts them: CMD [5:0], LNG [10:7], DLN [14:11], TAG [23:15],
    # ADRS [57:24], CUB [63:61]; the tail's RRP [7:0], FRP [15:8], SEQ [18:16], RTC [31:27], CRC [63:32].
    header, tail = packet & (1 << 64) - 1, packet >> (4 * 128 - 64)
    assert header == 0x0A | 4 << 7 | 4 << 11 | 511 << 15 | 0x3_FFFF_FFF0 << 24 | 5 << 61
    assert tail & 0xFFFFFFFF == 17 | 200 << 8 | 6 << 16 | 31 << 27


def test_response_fields_round_trip():
    packet, flits = hmc.response(hmc.ERROR, tag=9, errstat=hmc.ERRSTAT_CROSSES_BLOCK, dinv=1, slid=2)
    f = hmc.parse(packet, flits, is_response=True)
    assert flits == 1 and (f["cmd"], f["tag"], f["errstat"], f["dinv"], f["slid"]) == (hmc.ERROR, 9, 0x32, 1, 2)


def test_command_lengths():
    """A read is one FLIT whatever its size and gets its data plus one back; a write carries data plus one."""
    for n in range(16, 129, 16):
        rd, wr, pwr = hmc.read_cmd(n), hmc.write_cmd(n), hmc.write_cmd(n, posted=True)
        assert (hmc.request_flits(rd), hmc.data_bytes(rd), hmc.response_cmd(rd)) == (1, n, hmc.RD_RS)
        assert (hmc.request_flits(wr), hmc.response_cmd(wr)) == (n // 16 + 1, hmc.WR_RS)
        assert (hmc.is_posted(pwr), hmc.response_cmd(pwr)) == (True, None)
    assert (hmc.read_cmd(128), hmc.write_cmd(128), hmc.write_cmd(16, posted=True)) == (0x37, 0x0F, 0x18)
    with pytest.raises(AssertionError):
        hmc.read_cmd(24)
