#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Bit errors on the lanes of a sim channel: a seeded, repeatable model of a noisy fiber and receiver."""

from functools import reduce
from operator import add

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.layouts import *
from monet.cores.phy.figures import BLOCK_LINE_BITS, THRESHOLD_BITS


def xorshift64(module, state, name):
    """One step of Marsaglia's xorshift64 (13, 7, 17), as signals (0 cycles)."""
    a, b, c = Signal(64, name=f"{name}_a"), Signal(64, name=f"{name}_b"), Signal(64, name=f"{name}_c")
    module.comb += [a.eq(state ^ (state << 13)), b.eq(a ^ (a >> 7)), c.eq(b ^ (b << 17))]
    return c


def seed_state(seed, salt):
    """A generator's state from the shared seed: distinct per slot and direction, never zero."""
    return Cat(seed ^ ((salt * 0x9E3779B9) & 0xFFFFFFFF), Constant(0x6A09E667 ^ salt, 32))


class ErrorInjector(LiteXModule):
    """Flips bits of the lane words going by (0 cycles).

    Each 66-bit block a lane carries is hit with probability `thresholds[lane]` / 2**40 (see
    block_threshold()); a hit flips a run of min(`burst`, 33) bits (1: single-bit errors) from a uniformly
    drawn position, cut off at the block's end, where the two sync-header positions flip the block's ctrl
    flag. Every block slot draws from its own xorshift64 generator, reloaded from `seed` on `seed_load`, so a
    run is repeatable.
    `blocks` counts blocks carried and `hits` blocks hit.
    """
    def __init__(self, salt=0):
        self.sink   = sink   = stream.Endpoint(bundle_layout())
        self.source = source = stream.Endpoint(bundle_layout())
        self.thresholds = [Signal(THRESHOLD_BITS, name=f"threshold{lane}") for lane in range(MAX_LANES)]
        self.burst      = Signal(6, reset=1)
        self.seed       = Signal(32)
        self.seed_load  = Signal()
        self.blocks     = Signal(48)
        self.hits       = Signal(32)

        # # #

        self.comb += [source.valid.eq(sink.valid), sink.ready.eq(source.ready)]
        # A run is at most 33 bits (a wider burst flips 33). The data bits it covers are a 64-bit shift; whether
        # it reaches the sync header (bits 64, 65) is a narrow sum, so no lane evaluates a 99-bit mask a cycle.
        run_bits = Signal(6)
        ones     = Signal(33)
        self.comb += [
            run_bits.eq(Mux(self.burst > 33, 33, self.burst)),
            ones.eq((1 << run_bits) - 1),
        ]
        used_all, hit_all = [], []
        for lane in range(MAX_LANES):
            data_in, ctrl_in, used = (getattr(sink, f"lane{lane}_{n}") for n in ("data", "ctrl", "used"))
            data_out, ctrl_out = getattr(source, f"lane{lane}_data"), getattr(source, f"lane{lane}_ctrl")
            self.comb += getattr(source, f"lane{lane}_used").eq(used)
            for slot in range(lane_slots(lane)):
                name  = f"rng{lane}_{slot}"
                salt_ = salt*64 + lane*8 + slot + 1
                state = Signal(64, name=name, reset=(0x6A09E667 ^ salt_) << 32 | ((salt_ * 0x9E3779B9) & 0xFFFFFFFF))
                step  = xorshift64(self, state, name)
                self.sync += If(self.seed_load, state.eq(seed_state(self.seed, salt_))).Else(state.eq(step))
                hit = Signal(name=f"hit{lane}_{slot}")
                pos7  = state[THRESHOLD_BITS:THRESHOLD_BITS + 7]
                pos   = Signal(7, name=f"at{lane}_{slot}")
                reach = Signal(7, name=f"reach{lane}_{slot}")   # one past the run's last bit
                block_in  = data_in[BLOCK_BITS*slot:BLOCK_BITS*(slot + 1)]
                block_out = data_out[BLOCK_BITS*slot:BLOCK_BITS*(slot + 1)]
                # The run is placed in a comb If's branch, so that a simulator does so only for a block hit.
                self.comb += [
                    hit.eq(sink.valid & used[slot] & (state[:THRESHOLD_BITS] < self.thresholds[lane])),
                    block_out.eq(block_in),
                    ctrl_out[slot].eq(ctrl_in[slot]),
                    If(hit,
                        pos.eq(Mux(pos7 < BLOCK_LINE_BITS, pos7, pos7 - BLOCK_LINE_BITS)),
                        reach.eq(pos + run_bits),
                        block_out.eq(block_in ^ (ones << pos)),
                        ctrl_out[slot].eq(ctrl_in[slot] ^ ((run_bits != 0) & (reach > BLOCK_BITS))),
                    ),
                ]
                used_all.append(used[slot])
                hit_all.append(hit)
        carried = Signal(5)
        hit_now = Signal(5)
        self.comb += [carried.eq(reduce(add, used_all)), hit_now.eq(reduce(add, hit_all))]
        self.sync += If(sink.valid & sink.ready,
            self.blocks.eq(self.blocks + carried),
            self.hits.eq(self.hits + hit_now),
        )
