#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""PRBS31 generator and checker per lane, for bit error rate measurements on the link's lanes.

PRBS31 is x^31 + x^28 + 1 (ITU-T O.150): bit n of the sequence is bit n-31 XOR bit n-28. Each active lane
sends one 64-bit word of its own sequence per beat (one block, ctrl flag clear) at the lane rate, for as
long as the generator is on; link traffic waits. The checker of each lane locks on the first word it
receives (a word holds 64 consecutive bits, more than the 31 of the state), then compares every following
word with the sequence and counts differing bits, the ctrl flag included (the 66-bit block's sync header).
The lock is verified on the next word, which must match exactly (a lock on a damaged word would predict
a sequence that drifts away slowly); counting starts after that. A word with more than `RELOCK_BITS`
errors means a lost lock, not a noisy lane: it is not counted and the checker locks again (`relocks`
counts lost verified locks; a lock that fails its verification is simply taken again).

The checker works in three stages (CHECK_CYCLES = 2 cycles from a word to its verdict and counts), so that
counting a word's 65 bits is off the path of the next word's prediction: 7 logic levels for a board at
250 MHz (`monet board estimate`; 13 in one stage). A new lock is taken on the first word after the verdict
that the old one is lost; the words received meanwhile are dropped, not counted.
"""

from functools import reduce
from operator import add, xor

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.csr import add_status
from monet.cores.common.layouts import *

PRBS_BITS   = 31
PRBS_TAP    = 28
WORD_BITS   = 64
RELOCK_BITS = 16
CHECK_CYCLES = 2   # from a received word to its verdict and counts (the checker's stages 1 and 2)


def prbs31_step_terms(width=WORD_BITS):
    """For each of the next `width` sequence bits, the state bits whose XOR gives it.

    State bit j holds sequence bit n-31+j (bit 30 is the newest); output bit i is sequence bit n+i."""
    seq = [frozenset({j}) for j in range(PRBS_BITS)]   # sequence bits n-31 .. n-1 in terms of the state
    for i in range(width):
        k = PRBS_BITS + i
        seq.append(seq[k - PRBS_BITS] ^ seq[k - PRBS_TAP])
    return [sorted(t) for t in seq[PRBS_BITS:]]


def prbs31_reference(state, words, width=WORD_BITS):
    """Software model: `words` words from a 31-bit state (bit 30 newest); returns (words, next state)."""
    bits = [(state >> j) & 1 for j in range(PRBS_BITS)]
    out = []
    for _ in range(words):
        word = 0
        for i in range(width):
            b = bits[-PRBS_BITS] ^ bits[-PRBS_TAP]
            bits.append(b)
            word |= b << i
        out.append(word)
    return out, sum(b << j for j, b in enumerate(bits[-PRBS_BITS:]))


_TERMS = prbs31_step_terms()


def prbs31_bits(state):
    """The next 64 sequence bits from a 31-bit state, bit 0 first, each an expression of the state (0 cycles).

    They have no signal of their own: a register that takes them under an enable (`If(enable, r.eq(...))`)
    is the only place Verilator works them out, and only in the cycles it loads (a signal would be worked
    out every cycle, idle or not). Synthesis sees the same XORs."""
    return [reduce(xor, [state[j] for j in terms]) for terms in _TERMS]


def popcount(value):
    """Number of set bits of `value`, as an expression (no signal of its own, so that Verilator counts only in
    the cycles a register takes it): six-bit groups counted by LUTs, then their counts added in a balanced
    tree (a chain of additions would be as deep as `value` is wide)."""
    sums = [reduce(add, [value[i] for i in range(start, min(start + 6, len(value)))])
            for start in range(0, len(value), 6)]
    while len(sums) > 1:
        pairs = [sums[i] + sums[i + 1] for i in range(0, len(sums) - 1, 2)]
        sums = pairs + sums[len(pairs) * 2:]
    return sums[0]


class LanePRBS(LiteXModule):
    """Sits between the striper and the PHY: passes traffic, or sends PRBS31 on every active lane
    (`tx_enable`), and checks PRBS31 on every received lane (`rx_enable`: received words then go to the
    checkers only, not to the link). 0 cycles for traffic; the checkers count a word CHECK_CYCLES later.

    Counters: `words` (per lane, the same on every active lane), `errors[lane]` (bits), `relocks`.
    """
    def __init__(self, lanes_log2):
        self.sink      = sink   = stream.Endpoint(bundle_layout())   # from the striper
        self.source    = source = stream.Endpoint(bundle_layout())   # to the PHY
        self.rx_taps   = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]   # received lanes
        self.tx_enable = Signal()
        self.rx_enable = Signal()
        self.clear     = Signal()
        self.words     = Signal(48)
        self.errors    = [Signal(32, name=f"prbs_errors{lane}") for lane in range(MAX_LANES)]
        self.relocks   = Signal(32)

        # # #

        active = Signal(MAX_LANES)
        self.comb += Case(lanes_log2, {log2: active.eq(2**(1 << log2) - 1) for log2 in range(4)})

        # Transmit: traffic, or one PRBS word per active lane per beat.
        sent = Signal()
        self.comb += [
            sent.eq(source.valid & source.ready),
            If(self.tx_enable,
                source.valid.eq(1),
                sink.ready.eq(0),
            ).Else(
                sink.connect(source),
            ),
        ]
        for lane in range(MAX_LANES):
            state = Signal(PRBS_BITS, name=f"prbs_tx{lane}", reset=(0x2545F491 * (lane + 1)) & (2**PRBS_BITS - 1) or 1)
            word  = prbs31_bits(state)   # worked out only while the generator is on
            self.sync += If(self.tx_enable & sent, state.eq(Cat(*word[WORD_BITS - PRBS_BITS:])))
            self.comb += If(self.tx_enable,
                getattr(source, f"lane{lane}_data").eq(Cat(*word)),
                getattr(source, f"lane{lane}_ctrl").eq(0),
                getattr(source, f"lane{lane}_used").eq(active[lane]),
            )

        # Receive: per-lane checker, locked on the first word. Three stages, so that counting 65 bits is not
        # on the path of the next word's prediction: the word's differences from the prediction (registered),
        # their count (registered), the verdict. The prediction runs ahead as if every word were good; a
        # verdict that the lock is lost (or failed its verification) takes a new lock on the next word and
        # drops the words already in the stages (their `epoch` is the old one): they were compared with a
        # sequence that no longer holds.
        lane0_word = Signal()
        for lane in range(MAX_LANES):
            tap = self.rx_taps[lane]
            relock   = Signal(name=f"prbs_relock{lane}", reset=1)   # the next word is taken as the lock
            verified = Signal(name=f"prbs_verified{lane}")
            epoch    = Signal(name=f"prbs_epoch{lane}")
            state  = Signal(PRBS_BITS, name=f"prbs_rx{lane}")
            got    = tap.data[:WORD_BITS]
            expect = prbs31_bits(state)   # worked out only in a cycle that checks a word
            check  = Signal(name=f"prbs_check{lane}")
            self.comb += check.eq(self.rx_enable & active[lane] & tap.valid & tap.used[0])
            # Stage 1: the differences of a word compared with a prediction (not of a lock word).
            diff     = Signal(WORD_BITS + 1, name=f"prbs_diff{lane}")
            compared = Signal(name=f"prbs_compared{lane}")
            epoch1   = Signal(name=f"prbs_epoch1_{lane}")
            # Stage 2: their count.
            wrong   = Signal(max=WORD_BITS + 2, name=f"prbs_wrong{lane}")
            counted = Signal(name=f"prbs_counted{lane}")
            epoch2  = Signal(name=f"prbs_epoch2_{lane}")
            # The stages move only while the checkers are on or a word is still in them: off and empty, they keep
            # what they hold, which nothing reads before a word has come through them again, and a simulator
            # works out nothing of them. (A word's differences matter only where stage 2 counts them: `compared`
            # follows `check`; its count only where stage 3 judges: `counted` follows `compared`.)
            self.sync += If(self.rx_enable | compared | counted,
                compared.eq(check & ~relock & ~self.clear),
                epoch1.eq(epoch),
                If(check,
                    diff.eq(Cat(got ^ Cat(*expect), tap.ctrl[0])),
                    state.eq(Mux(relock, got[WORD_BITS - PRBS_BITS:], Cat(*expect[WORD_BITS - PRBS_BITS:]))),
                ),
                If(compared, wrong.eq(popcount(diff))),
                counted.eq(compared & ~self.clear),
                epoch2.eq(epoch1),
            )
            # Stage 3: the verdict on a word of the current lock.
            judged = Signal(name=f"prbs_judged{lane}")
            lost   = Signal(name=f"prbs_lost{lane}")
            self.comb += [
                judged.eq(counted & (epoch2 == epoch)),
                lost.eq((wrong > RELOCK_BITS) | (~verified & (wrong != 0))),
            ]
            if lane == 0:
                self.comb += lane0_word.eq(judged & verified & ~lost)
            self.sync += [
                If(self.clear,
                    relock.eq(1), verified.eq(0), epoch.eq(~epoch), self.errors[lane].eq(0),
                ).Else(
                    If(check & relock, relock.eq(0)),
                    If(judged,
                        If(lost,
                            relock.eq(1), verified.eq(0), epoch.eq(~epoch),
                        ).Else(
                            verified.eq(1),
                            If(verified, self.errors[lane].eq(self.errors[lane] + wrong)),
                        ),
                    ),
                ),
            ]
            if lane == 0:
                self.sync += If(self.clear, self.relocks.eq(0)).Elif(judged & lost & verified,
                                                                    self.relocks.eq(self.relocks + 1))
        self.sync += If(self.clear, self.words.eq(0)).Elif(lane0_word, self.words.eq(self.words + 1))

    def add_prbs_control(self):
        self._enable  = CSRStorage(fields=[
            CSRField("tx", size=1, description="Send PRBS31 on every active lane (link traffic waits)."),
            CSRField("rx", size=1, description="Check PRBS31 on every active lane (received words skip the link)."),
        ])
        self._clear   = CSR()
        self._words   = CSRStatus(48, description="Words checked per lane (64 data bits + sync header each).")
        self._relocks = CSRStatus(32, description="Lane 0: verified locks lost (a word too wrong to be noise).")
        self.comb += [
            self.tx_enable.eq(self._enable.fields.tx),
            self.rx_enable.eq(self._enable.fields.rx),
            self.clear.eq(self._clear.re),
            self._words.status.eq(self.words),
            self._relocks.status.eq(self.relocks),
        ]
        for lane in range(MAX_LANES):
            add_status(self, f"errors{lane}", self.errors[lane], f"Bit errors seen on lane {lane}.")
