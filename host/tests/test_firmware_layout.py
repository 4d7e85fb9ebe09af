"""Where the console firmware's timed code sits in ROM.

The soft CPU's instruction cache (4 KiB, one way) and branch predictor are indexed by address, so a timed
loop that moves can change its cycle count. The code whose cycles are reported (TIMED_CODE in
firmware/app/cpu_counters.h) is placed first in ROM, in a fixed order, each piece at a 64-byte boundary
(firmware/app/linker.ld): a change anywhere else in the firmware leaves it where it is.
"""

import subprocess

# In the linker script's order.
TIMED = ("rd64", "timed_access", "cmd_lat", "cmd_chase", "stream_run", "cmd_fill_check")


def functions_by_address(elf):
    """(address, name) of every function symbol of the ELF, lowest address first."""
    table = subprocess.run(["riscv64-unknown-elf-objdump", "-t", str(elf)], check=True, capture_output=True,
                           text=True).stdout
    functions = []
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 6 and "F" in fields[1:-3] and fields[-3] == ".text":
            functions.append((int(fields[0], 16), fields[-1]))
    return sorted(functions)


def test_timed_code_is_first_in_rom_each_piece_on_a_64_byte_boundary(sim_build):
    functions = functions_by_address(sim_build.firmware / "monet-console.elf")
    first = functions[:len(TIMED)]
    assert [name for _, name in first] == list(TIMED), f"the first functions in ROM are {first}"
    misplaced = [(name, hex(address)) for address, name in first if address % 64]
    assert not misplaced, f"timed code off a 64-byte boundary: {misplaced}"
