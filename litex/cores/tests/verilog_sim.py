"""`run_simulation()` on the Verilog that ships: Migen testbenches driven against a Verilator model.

A core's unit test keeps its Migen generator testbench (`yield sig.eq(v)`, `(yield sig)`, `yield`) and calls
this module's `run_simulation` instead of Migen's. The core is converted to Verilog by Migen's own
converter (the text a SoC build gets), Verilated once per distinct Verilog text (cached under
`build/cores/<hash>/`, shared by pytest-xdist workers through a lock), and run under cocotb 2 with
`verilog_sim_server`, which lends the model's signals to the generators running here, in the pytest process,
over a Unix socket. So an assertion fails in the test itself, and a Migen-vs-Verilog difference (a sum
wrapped to its operands' width, a signed compare) shows up in the core's test rather than in the SoC.

Timing is Migen's: at each rising edge every generator reads the values settled before the edge, and what it
writes takes effect with the edge (the edge itself samples the old values). Each step the server returns the
values of every signal the generators have read so far, so a read costs a round trip only the first time.
Supported requests: signals, constants, slices and Cat of them, nested lists; assignments to a signal or a
slice of one; "passive"/"active". One clock domain, `sys`.
"""

import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from migen import Module, Signal
from migen.fhdl import verilog
from migen.fhdl.structure import Cat, Constant, _Assign, _Slice
from migen.fhdl.tools import list_targets

from monet.cores.tests.verilog_sim_wire import receive, send
from monet.locks import exclusive
from monet.repo import REPO
from monet.sim import verilator
from monet.soc.conversion import use_fast_conversion

# Models are keyed by their Verilog text, so checkouts may share one folder (`make mutants` points its
# worker trees at the checkout's: a mutant's model is new, an unmutated one is already there).
BUILD_ROOT = Path(os.environ.get("MONET_CORE_MODELS", REPO / "build" / "cores"))
SERVER_MODULE = "monet.cores.tests.verilog_sim_server"
# Migen's Verilog pads and truncates freely; Verilator's lint would stop on it. A slice with its ends the
# wrong way round (Migen prints sig[a:b] with b < a as an ascending part-select) is never meant: an error.
BUILD_ARGS = ["-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEINCOMPLETE", "-Wno-UNOPTFLAT", "-Wno-UNUSED", "-Wno-UNDRIVEN",
              "-Werror-SELRANGE"]
CONNECT_TIMEOUT_S = 60
# cocotb 2 starts pytest's assertion rewriting in the model's Python, which loads every pytest plugin installed
# (pytest-randomly imports numpy to reseed it, xdist its hooks, ours): none is of use there, and they took half
# a second of each run's start.
MODEL_RUN_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
# Five times the longest run of the core suite (4001 cycles: test_link's bit errors).
MAX_CYCLES = 20_000


class VerilogSimError(RuntimeError):
    """The core could not be converted, Verilated or run, or the testbench asked what this harness cannot do."""


class _Top(Module):
    """The core under test plus one register, so that every core has the `sys` clock the server drives."""
    def __init__(self, dut):
        self.submodules.dut = dut
        cycle = Signal()
        self.sync += cycle.eq(~cycle)


def _tail(path, lines=30):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextmanager
def _verilator_environment():
    """os.environ pointing at the venv's Verilator while cocotb's runner builds (it copies os.environ).
    The model's own C++ compiles unoptimised: a test model runs a few thousand cycles, so compile time is
    what counts (-O0 builds the packed framer's model in a quarter of the -Os time), and by clang where
    installed, as the SoC model (the four heaviest core test files, models cold: 286 s -> 246 s)."""
    saved = dict(os.environ)
    env = verilator.environment(ccache=True, cxx=verilator.model_compiler())
    env["MAKEFLAGS"] += " OPT_FAST=-O0 OPT_SLOW=-O0"
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def build(conv):
    """Verilates `conv` (a Migen ConvOutput) unless a model of the same text exists; returns its folder."""
    from cocotb_tools.runner import get_runner
    h = hashlib.sha256(str(conv).encode())
    h.update(" ".join([verilator.version(), metadata.version("cocotb")] + BUILD_ARGS).encode())
    key = h.hexdigest()[:16]
    folder = BUILD_ROOT / key
    with exclusive(BUILD_ROOT / f"{key}.lock"):
        if not (folder / "build.ok").exists():
            shutil.rmtree(folder, ignore_errors=True)
            (folder / "data").mkdir(parents=True)
            (folder / "top.v").write_text(conv.main_source)
            for name, content in conv.data_files.items():
                (folder / "data" / name).write_text(content)
            try:
                with _verilator_environment():
                    get_runner("verilator").build(sources=[folder / "top.v"], hdl_toplevel="top",
                                                  build_dir=folder / "sim", build_args=BUILD_ARGS,
                                                  timescale=("1ns", "1ps"), log_file=folder / "build.log")
            except (Exception, SystemExit) as e:
                raise VerilogSimError(f"Verilating {folder / 'top.v'} failed ({e}); see {folder / 'build.log'}:\n"
                                      + _tail(folder / "build.log")) from None
            for built in (folder / "sim").iterdir():   # objects and precompiled headers: 100+ MB a model
                if built.name != "top":
                    shutil.rmtree(built) if built.is_dir() else built.unlink()
            (folder / "build.ok").write_text(key)
    return folder


class _Session:
    """One run of a built model under cocotb, in a thread of its own, with the socket to its server."""

    def __init__(self, folder):
        self.folder = folder
        self.tmp = Path(tempfile.mkdtemp(prefix="monet-vsim-"))
        for data in (folder / "data").iterdir():     # $readmemh files, relative to the simulator's folder
            shutil.copy(data, self.tmp)
        self.log = self.tmp / "sim.log"
        self.failure = None

    def __enter__(self):
        path = str(self.tmp / "socket")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        listener.settimeout(0.2)
        self.thread = threading.Thread(target=self._simulate, args=(path,), daemon=True)
        self.thread.start()
        deadline = time.time() + CONNECT_TIMEOUT_S
        try:
            while True:
                try:
                    self.sock, _ = listener.accept()
                    break
                except socket.timeout:
                    if not self.thread.is_alive() or time.time() > deadline:
                        raise VerilogSimError(f"the Verilated model in {self.folder} did not start its cocotb server "
                                              f"({self.failure or 'no answer in 60 s'}); its log:\n" + _tail(self.log))
        finally:
            listener.close()
        self.sock.settimeout(None)
        return self

    def _simulate(self, path):
        from cocotb_tools.runner import get_runner
        try:
            get_runner("verilator").test(test_module=SERVER_MODULE, hdl_toplevel="top", hdl_toplevel_lang="verilog", build_dir=self.folder / "sim",
                                         test_dir=self.tmp, results_xml=str(self.tmp / "results.xml"),
                                         extra_env={"MONET_HARNESS_SOCKET": path, **MODEL_RUN_ENV}, log_file=self.log)
        except BaseException as e:      # the runner ends with SystemExit when the simulator fails
            self.failure = f"{type(e).__name__}: {e}"

    def request(self, message):
        send(self.sock, message)
        answer = receive(self.sock)
        if answer is None:
            self.thread.join(timeout=10)
            raise VerilogSimError(f"the Verilated model stopped answering ({self.failure or 'it exited'}); its log:\n"
                                  + _tail(self.log))
        return answer

    def __exit__(self, *exc):
        try:
            send(self.sock, ("done",))
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=30)
        if exc[0] is None and self.failure:
            raise VerilogSimError(f"the cocotb run failed after the testbench ended ({self.failure}); its log:\n"
                                  + _tail(self.log))
        shutil.rmtree(self.tmp, ignore_errors=True)


class _Driver:
    """Runs Migen generators against a session: Migen's request protocol, Verilog's values."""

    def __init__(self, session, namespace, comb_targets):
        self.session = session
        self.ns = namespace
        self.comb_targets = comb_targets
        self.values = {}    # signal name -> value (unsigned) settled before the coming edge
        self.watch = []     # names the server returns after every edge

    def name(self, signal):
        if signal not in self.ns.sigs:
            raise VerilogSimError(f"signal {signal!r} is not in the generated Verilog: nothing in the core uses it")
        return self.ns.get_name(signal)

    def raw(self, signal):
        name = self.name(signal)
        if name not in self.values:
            self.values[name] = self.session.request(("read", [name]))[0]
            self.watch.append(name)
        return self.values[name]

    def bits(self, expr):
        """(value as unsigned bits, width) of a readable expression."""
        if isinstance(expr, Signal):
            return self.raw(expr), len(expr)
        if isinstance(expr, Constant):
            return expr.value & ((1 << expr.nbits) - 1), expr.nbits
        if isinstance(expr, _Slice):
            value, _ = self.bits(expr.value)
            width = expr.stop - expr.start
            return (value >> expr.start) & ((1 << width) - 1), width
        if isinstance(expr, Cat):
            value, offset = 0, 0
            for part in expr.l:
                v, w = self.bits(part)
                value |= v << offset
                offset += w
            return value, offset
        raise VerilogSimError(f"the Verilog harness cannot evaluate {expr!r}: read signals, slices or Cat of them")

    def evaluate(self, expr):
        if isinstance(expr, (list, tuple)):
            return [self.evaluate(e) for e in expr]
        if isinstance(expr, int):
            return expr
        value, width = self.bits(expr)
        if isinstance(expr, (Signal, Constant)) and expr.signed and value >> (width - 1):
            value -= 1 << width
        return value

    def assign(self, statement, writes):
        target, value = statement.l, self.evaluate(statement.r)
        driven = target if isinstance(target, Signal) else getattr(target, "value", None)
        if driven in self.comb_targets:
            raise VerilogSimError(f"the testbench writes {driven!r}, which the core's combinational logic drives: "
                                  "Migen's simulator drops such a write, Verilog keeps it until that logic next "
                                  "changes; drive one of the core's inputs instead")
        if isinstance(target, Signal):
            writes[self.name(target)] = value & ((1 << len(target)) - 1)
        elif isinstance(target, _Slice) and isinstance(target.value, Signal):
            name = self.name(target.value)
            width = target.stop - target.start
            mask = ((1 << width) - 1) << target.start
            base = writes.get(name, self.raw(target.value))
            writes[name] = (base & ~mask) | ((value << target.start) & mask)
        else:
            raise VerilogSimError(f"the Verilog harness cannot assign to {target!r}: a signal or a slice of one")

    def run(self, generators, max_cycles):
        active, passive = list(generators), set()
        cycles = 0
        while any(g not in passive for g in active):
            if cycles == max_cycles:
                raise VerilogSimError(f"the testbench's generators did not finish within {max_cycles} cycles: one "
                                      "waits for something that never comes (pass max_cycles if the test is "
                                      "meant to run longer)")
            cycles += 1
            writes = {}
            for generator in list(active):
                reply = None
                while True:
                    try:
                        request = generator.send(reply)
                    except StopIteration:
                        active.remove(generator)
                        break
                    reply = None
                    if request is None:
                        break
                    if isinstance(request, str):    # Migen's "passive" / "active"
                        (passive.add if request == "passive" else passive.discard)(generator)
                    elif isinstance(request, _Assign):
                        self.assign(request, writes)
                    else:
                        reply = self.evaluate(request)
            answer = self.session.request(("step", list(writes.items()), self.watch))
            self.values = dict(zip(self.watch, answer))


def _converted(dut):
    """The combinational targets and the Verilog of `dut`, converted once per DUT object: a test that runs
    one DUT several times (a fresh model process each run) pays Migen's conversion, seconds for a whole
    path, once. A DUT must not be changed after its first run."""
    cached = getattr(dut, "_verilog_sim_conversion", None)
    if cached is None:
        use_fast_conversion()
        fragment = _Top(dut).get_fragment()
        cached = dut._verilog_sim_conversion = (list_targets(fragment.comb), verilog.convert(fragment, name="top"))
    return cached


def run_simulation(dut, generators, clocks=None, vcd_name=None, max_cycles=MAX_CYCLES):
    """Migen's `run_simulation(dut, generators)`, on the core's generated Verilog in Verilator.
    `clocks` may only name `sys` (its period does not matter: cycles are what a testbench sees); waveforms
    (`vcd_name`) are not recorded here: run the test with Migen's simulator for those. A run whose
    generators have not finished after `max_cycles` fails: a broken core that never answers ends the test
    in seconds instead of hanging it."""
    if clocks and set(clocks) != {"sys"} or isinstance(generators, dict) and set(generators) != {"sys"}:
        raise VerilogSimError("the Verilog harness drives one clock domain, sys")
    if vcd_name is not None:
        raise VerilogSimError("the Verilog harness records no VCD; use migen.run_simulation for waveforms")
    if isinstance(generators, dict):
        generators = generators["sys"]
    generators = list(generators) if isinstance(generators, (list, tuple)) else [generators]
    comb_targets, conv = _converted(dut)
    folder = build(conv)
    with _Session(folder) as session:
        _Driver(session, conv.ns, comb_targets).run(generators, max_cycles)
