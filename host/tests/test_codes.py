"""The cores' codes (the memory card's memories, the benchmark block's modes and patterns, the BFCT's fault
kinds and targets, the sim channel's fault kinds) are declared once, in each core's codes.py: the SoC exports them to the firmware as soc.h
constants and no firmware file writes one by hand."""

import re

from monet.repo import REPO
from monet.soc.facts import CODES, MEMORIES, code_constants


def test_every_code_is_the_documented_one_and_fits_its_register():
    # What a user programs by hand on a board (monet-ctl's raw writes) and doc/registers.md's descriptions say.
    assert CODES["MEMCARD_MEMORY"] == {"sram": 0, "ddr4": 1, "hmc": 2}            # the 2-bit `memory` CSR
    assert CODES["PBB_MODE"] == {"read": 0, "write": 1, "mixed": 2}               # 2-bit `mode`
    assert CODES["PBB_PATTERN"] == {"seq": 0, "stride": 1, "random": 2}           # 2-bit `pattern`
    assert list(CODES["REMAT_FAULT"].values()) == list(range(7))                  # the 3-bit fault kind
    assert CODES["REMAT_TARGET"] == {"remote0": 0, "local": 1, "remote1": 2}      # ENTRY's 2-bit target
    assert list(CODES["CHANNEL_FAULT"]) == ["none", "crc", "type", "truncated", "duplicate", "skip", "flood",
                                            "lane", "down", "slip", "lane_down"]
    assert list(CODES["CHANNEL_FAULT"].values()) == list(range(11))                # the 4-bit `inject` kind
    assert CODES["CHANNEL_LOOPBACK"] == {"none": 0, "near": 1, "far": 2}           # the 2-bit `loopback`


def test_the_constants_are_the_tables():
    constants = code_constants()
    assert constants["PBB_MODE_MIXED"] == 2 and constants["PBB_PATTERN_RANDOM"] == 2
    assert constants["MEMCARD_MEMORY_HMC"] == MEMORIES["hmc"] == 2 and constants["REMAT_FAULT_TIMEOUT"] == 6
    assert constants["REMAT_TARGET_LOCAL"] == 1
    assert len(constants) == sum(len(table) for table in CODES.values())


def test_the_sim_build_exports_every_code(sim_build):
    exported = {name.upper(): value for name, value in sim_build.constants.items()}
    assert code_constants().items() <= exported.items()


def test_no_firmware_file_writes_a_code_by_hand():
    prefixes = "|".join(CODES)
    written = [f"{path.relative_to(REPO)}: {m[0]}" for path in sorted((REPO / "firmware").rglob("*.[ch]"))
               for m in re.finditer(rf"#define ({prefixes})_\w+.*", path.read_text())]
    assert written == []
