#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Board-free sim SoC: compute card (VexRiscv, UART, timer, ROM/SRAM/local RAM, ReMAT) and a memory card
(SRAM, DDR4 through LiteDRAM, or an HMC: our controller, an HMC link and the device model; chosen at run time),
joined by the sim channel, in one Verilator model (litex_sim style). The DDR4 (`with_ddr4`) and the HMC
(`with_hmc`) may be left out: a smaller model works out less each cycle (the host's sim models).

Build once with `build_sim(...)`; run `obj_dir/Vsim` in the gateware folder. Firmware is loaded through
`rom.init`, so new firmware needs no re-verilation.
"""

import os
import shutil
from pathlib import Path

from migen import *

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.config import SimConfig
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.builder import Builder
from litex.soc.cores.uart import RS232PHYModel, UARTBone
from litex.soc.interconnect.csr import *
from migen.genlib.io import CRG

from monet.cores.common.layouts import LINE_BYTES, MAX_LANES
from monet.cores.pbb.core import PBB
from monet.cores.phy.codes import NO_CIRCUIT
from monet.cores.phy.switch import CircuitSwitch
from monet.cores.remat.combiner import CombiningWishbonePort
from monet.cores.remat.port import WishboneRematPort
from monet.soc.conversion import use_fast_conversion
from monet.soc.facts import (CONSOLE_MAX_SAMPLES, LOCAL_RAM_SIZE, MEMCARD_SIZE, NOMINAL_CLK_HZ, PBB_BUCKETS,
                             REMOTE_BASE, REMOTE_CACHED_BASE, REMOTE_SECTION_BITS, REMOTE_SECTIONS, REMOTE_TAGS,
                             ROM_SIZE, SRAM_SIZE, USER_INCLUDE, code_constants, credit_constants)
from monet.soc.remote import RemoteMemoryPath, TrafficCard
from monet.soc.user_headers import write_pool_header, write_user_headers


def _byte_stream_pads(name):
    """A byte stream each way between the model and a LiteX sim module (LiteX's sim serial pads)."""
    return (name, 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    )


_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    _byte_stream_pads("serial"),     # the firmware console (serial2console: Vsim's stdin and stdout)
    _byte_stream_pads("uartbone"),   # the CSR bridge (our monet_bridge module: a loopback TCP socket)
]
SIM_MODULES = Path(__file__).resolve().parent / "sim_modules"


class SimFinish(Module, AutoCSR):
    """Ends the simulation when software writes `finish` (clean exit of Vsim)."""
    def __init__(self):
        self.finish = CSR()
        self.sync += If(self.finish.re, Finish())


class MonetSimSoC(SoCCore):
    def __init__(self, n_sections=REMOTE_SECTIONS, section_bits=REMOTE_SECTION_BITS, tags=REMOTE_TAGS,
                 memcard_size=MEMCARD_SIZE, with_ddr4=True, with_hmc=True, requesters=1, **kwargs):
        platform = SimPlatform("SIM", _io)
        self.crg = CRG(platform.request("sys_clk"))
        SoCCore.__init__(self, platform, clk_freq=NOMINAL_CLK_HZ,
            ident                    = "MONet-open sim SoC",
            cpu_type                 = "vexriscv",
            cpu_variant              = "full",
            uart_name                = "sim",
            integrated_rom_size      = ROM_SIZE,
            integrated_sram_size     = SRAM_SIZE,
            integrated_main_ram_size = LOCAL_RAM_SIZE,
            timer_uptime             = True,   # a cycle count that monet-ctl's waits read through the bridge
            **kwargs)

        # Remote memory path: ReMAT, link, channel, memory card.
        self.remote = remote = RemoteMemoryPath(clk_ps=10**12 // NOMINAL_CLK_HZ, n_sections=n_sections,
            section_bits=section_bits, tags=tags, memcard_size=memcard_size, with_ddr4=with_ddr4,
            with_hmc=with_hmc, with_local=True, n_ports=3, requesters=requesters)
        remote.add_control()
        # The pooled model: traffic cards pool1.. on the memory card's other ports (their registers are the
        # compute card's under their own prefix: firmware/lib's drivers reach them through pool.h's map), every
        # link through the circuit switch.
        cards = [remote]
        for i in range(1, requesters):
            card = TrafficCard(clk_ps=10**12 // NOMINAL_CLK_HZ, n_sections=n_sections, section_bits=section_bits,
                               tags=tags, buckets=PBB_BUCKETS, switched=True)
            card.add_control()
            setattr(self, f"pool{i}", card)
            self.comb += card.connect_port(remote.ports, i)
            cards.append(card)
        if requesters > 1:
            self.add_switch(cards)
        self.cpu_port = WishboneRematPort(remote.remat.ports[0], remote.remat.window_size)
        self.bus.add_slave("remote", self.cpu_port.bus,
            SoCRegion(origin=REMOTE_BASE, size=remote.remat.window_size, cached=False))
        # The same window, cacheable: the data cache's refills and write-through words become line
        # transactions in ReMAT's combiner, on ReMAT's third port.
        self.combiner = CombiningWishbonePort(remote.remat.ports[2], remote.remat.window_size)
        self.combiner.add_control()
        self.bus.add_slave("remote_cached", self.combiner.bus,
            SoCRegion(origin=REMOTE_CACHED_BASE, size=remote.remat.window_size, cached=True))
        # Benchmark block on ReMAT's second port, and (direct mode) on the HMC controller's 128 B block port.
        hmc = remote.memcard.hmc if with_hmc else None
        self.pbb = PBB(remote.remat.ports[1], max_outstanding=tags, buckets=PBB_BUCKETS,
                       block_port=(hmc.block_sink, hmc.block_source) if with_hmc else None)
        self.pbb.add_control()
        self.add_constant("REMOTE_SECTIONS", n_sections)
        self.add_constant("REMOTE_SECTION_BITS", section_bits)
        self.add_constant("REMOTE_TAGS", tags)
        self.add_constant("MEMCARD_SIZE", memcard_size)
        self.add_constant("NOMINAL_CLK_HZ", NOMINAL_CLK_HZ)
        self.add_constant("LINK_RETRY_DEPTH", remote.retry_depth)
        for name, value in credit_constants().items():
            self.add_constant(name, value)
        self.add_constant("CHANNEL_MAX_DELAY", remote.max_delay)
        if with_hmc:
            self.add_constant("HMC_MAX_DELAY", hmc.max_delay)
        self.add_constant("LINK_MAX_LANES", MAX_LANES)
        self.add_constant("REMOTE_LINE_BYTES", LINE_BYTES)
        self.add_constant("CONSOLE_MAX_SAMPLES", CONSOLE_MAX_SAMPLES)
        self.add_constant("PBB_BUCKETS", PBB_BUCKETS)
        for name, value in code_constants().items():
            self.add_constant(name, value)

        # The CSR bridge: LiteX's UARTBone as a second bus master, its bytes on the monet_bridge sim module, so
        # that litex_server and monet-ctl reach every register the firmware does (no CSR of its own).
        self.uartbone_phy = RS232PHYModel(platform.request("uartbone"))
        self.uartbone = UARTBone(phy=self.uartbone_phy, clk_freq=NOMINAL_CLK_HZ)
        self.bus.add_master(name="uartbone", master=self.uartbone.wishbone)

        # Not named sim_finish: the stock BIOS would then expect the sim_marker CSRs too.
        self.sim_exit = SimFinish()


    def add_switch(self, cards):
        """The circuit switch of the pooled model (litex/cores/phy/switch.py): card ports 0 to requesters - 1 are
        the compute card's first link and the traffic cards', the last its second link; memory-card ports 0 to
        requesters - 1 are the first memory card's (`ports`), then the second's two (`ports1`). At power-up each
        card faces the port of its own number and port requesters + 1 (the second memory card's port 1) is
        free."""
        remote = self.remote
        ends = [(card.channel, card.link_c, card.link_m) for card in cards]
        ends.append((remote.channel1, remote.link1_c, remote.link1_m))
        self.switch = switch = CircuitSwitch(n_cards=len(ends), n_ports=len(ends) + 1, circuits=list(range(len(ends))),
                                             clk_ps=10**12 // NOMINAL_CLK_HZ)
        switch.add_control()
        for i, (channel, link_c, link_m) in enumerate(ends):
            self.comb += switch.connect_card(i, channel, link_c)
            self.comb += switch.connect_port(i, link_m, link_m.lanes_log2)
        self.comb += switch.connect_port(len(ends), remote.spare_m, remote.spare_m.lanes_log2)
        self.add_constant("POOL_SWITCH_CARDS", len(ends))
        self.add_constant("POOL_SWITCH_PORTS", len(ends) + 1)
        self.add_constant("SWITCH_NO_CIRCUIT", NO_CIRCUIT)


def sim_config():
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=1_000_000)
    config.add_module("serial2console", "serial")
    config.add_module("monet_bridge", "uartbone")
    return config


FIRMWARE_LIBRARIES = ("libc", "libcompiler_rt", "libbase")   # what firmware/app links
# LiteX's sim Makefile compiles the model with -ggdb -Wall and -$(OPT_LEVEL), in that order: debug info is
# a third of the compile time and -Wall's 1,500 warnings on generated code cost more. OPT_LEVEL is the one
# knob that lands after them, so it carries -g0 and -w too (a command-line CFLAGS would also replace the sim
# modules' include paths). -O3 runs the model about 10 % faster than -O2 for 15 s more of compile.
MODEL_OPT_LEVEL = "O3 -g0 -w"
# LiteX's sim Makefile always verilates with --trace, though our sim never dumps a waveform: every signal then
# stays a traceable member of the model and a third of the C++ is trace code. A Verilator configuration file
# on the command line turns tracing off for every file (the trace hooks LiteX's harness calls remain), which
# takes a third off the C++ compile and lets Verilator keep intermediate values in locals.
NO_TRACE_CONFIG = "`verilator_config\ntracing_off -file \"*\"\n"


class ConsoleBuilder(Builder):
    """LiteX's Builder for a ROM that gets our console at load time (the host writes `sim_rom.init`).

    It generates the SoC and the software includes but compiles nothing: `build_software.sh` compiles only
    the libraries the console links (not LiteX's BIOS nor its storage and network libraries), so that it
    can run beside `build_sim.sh`. The ROM keeps its full size with a placeholder init, which keeps its
    $readmemh (the BIOS would have shrunk the ROM to the BIOS's own size).
    """

    def __init__(self, soc, **kwargs):
        Builder.__init__(self, soc, compile_software=False, compile_gateware=False, **kwargs)
        self.software_packages = [p for p in self.software_packages if p[0] in FIRMWARE_LIBRARIES]
        self.software_libraries = [name for name in self.software_libraries if name in FIRMWARE_LIBRARIES]
        soc.init_rom(name="rom", contents=[0], auto_size=False)

    def add_software_package(self, name, src_dir=None):
        if name != "bios":
            Builder.add_software_package(self, name, src_dir)

    def write_software_script(self, jobs):
        commands = [f"make -j{jobs} -C {os.path.join(self.software_dir, name)} -f {os.path.join(src, 'Makefile')}"
                    for name, src in self.software_packages]
        path = os.path.join(self.gateware_dir, "build_software.sh")
        with open(path, "w") as f:
            f.write("set -e\n" + "\n".join(commands) + "\n")
        return path


def build_sim(output_dir, jobs=2, **soc_kwargs):
    """Generates the sim SoC: `gateware/build_sim.sh` verilates and compiles the model,
    `gateware/build_software.sh` compiles the software libraries the console links; they may run at once."""
    use_fast_conversion()
    soc = MonetSimSoC(**soc_kwargs)
    builder = ConsoleBuilder(soc, output_dir=output_dir)
    gateware = os.path.join(output_dir, "gateware")
    # LiteX writes a variables.mak into the extra modules' folder: a copy in the build, not the sources.
    modules = os.path.join(gateware, "sim_modules")
    shutil.copytree(SIM_MODULES, modules, dirs_exist_ok=True)
    builder.build(sim_config=sim_config(), run=False, opt_level="OPT", jobs=jobs, interactive=False,
                  extra_mods=sorted(p.name for p in SIM_MODULES.iterdir() if p.is_dir()), extra_mods_path=modules)
    script = os.path.join(gateware, "build_sim.sh")
    with open(script) as f:
        text = f.read()
    sim_v = os.path.join(gateware, "sim.v")
    sources = f'{sim_v} "'
    assert "OPT_LEVEL=OPT " in text and sources in text, \
        "LiteX's build_sim.sh changed: MODEL_OPT_LEVEL or the tracing switch would not apply"
    no_trace = os.path.join(gateware, "no_trace.vlt")
    with open(no_trace, "w") as f:
        f.write(NO_TRACE_CONFIG)
    text = text.replace(sources, f'{sim_v} {no_trace} "')
    with open(script, "w") as f:   # LiteX writes the level unquoted; ours has a space
        f.write(text.replace("OPT_LEVEL=OPT ", f'OPT_LEVEL="{MODEL_OPT_LEVEL}" '))
    builder.write_software_script(jobs)
    write_user_headers(soc, Path(output_dir) / USER_INCLUDE / "generated")
    write_pool_header(soc, Path(output_dir) / "software" / "include" / "generated")   # the firmware's
    return soc, builder, gateware
