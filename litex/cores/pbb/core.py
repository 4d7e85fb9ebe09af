#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Programmable benchmark block (PBB): a traffic generator and checker on a ReMAT master port.

Issues `count` line transactions (read, write or mixed by a read ratio: at random, or with `mix_even` spread
evenly, a read whenever the ratio's running sum passes 256) with sequential, strided or
seeded-random (xorshift32) addresses inside a span of the ReMAT window, keeping up to `outstanding` in flight.
Access size 2**size_log2 bytes, 8 to 128: below a line, each access is one line transaction whose byte
mask covers the access (a write carries the mask on the link; a read returns the line and only the
access's bytes are checked); 128 B is two transactions on consecutive lines, issued back to back, as a
two-beat burst (`count` counts line transactions). Write data are address-keyed pseudo-random lines; with
`check`, read data are compared with the same function, so a region written by one run is verified by the
next. Hardware counters: cycles, bytes, data errors,
bus errors, latency min/max/sum/count and a latency histogram of `buckets` buckets of 2**shift cycles
(the last bucket collects everything above), from which the host computes percentiles.

Issue: one request a cycle (in direct mode a read may go beside it: two a cycle). Latency counted from the
port accepting a request to its response. Responses may
come in any order (a DDR4 card answers lines in different banks as they complete): each request takes the
free id (from a pair of free lists, common/freelist.py), freed by its response.

Pipelining (issue 14; 8 logic levels with 512 outstanding, `monet board estimate`): a run starts
START_CYCLES after `start` (the settings are read then; those that shape transactions are registered
first; `cycles` counts from the run's start, as before); an answer frees its id, its room and counts as
completed in its cycle,
and its latency, data check and histogram bucket follow in four registered stages, off its path (`busy`
stays up until they are done). A transaction's record (time, line) is written a cycle after it leaves, from
registers (its answer comes 2 cycles after it at the earliest). Transactions' offsets, the generator states
of the next three transactions, whether the next one is a write (direct mode's pairing) and the counts left
are registers, so a transaction's address is an adder deep; the pattern's multiplier is left
combinational between registers (a board build gives its DSPs their pipeline registers: 1-2 cycles more
on a request).

Direct mode (`block_port`, the `direct` setting): the block drives an HMC controller's 128 B block port
(hmc/host.py) instead of ReMAT, as the paper's benchmark block measures its local HMC (burst length 1,
128 B): every transaction is one 128 B block (two pattern lines, an RD128 or WR128), `count` and the
results count blocks, and ReMAT's port is left idle. When the transaction after the one being issued is a
read and there is room for both (count, outstanding, a second free id), it leaves in the same cycle as the
block request's second (an HMC pair: a write or read and a read, one FLIT more on the link), as a host
controller handling several FLITs a cycle sends them; a data-less answer (write ack or error) that comes
beside another is counted with it.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import *

from monet.cores.common.arith import add_in_two_words, count_strobes, pick
from monet.cores.common.csr import codes_text
from monet.cores.common.freelist import PairedFreeList
from monet.cores.common.layouts import LINE_BYTES, LINE_BITS, T_ERR, T_RD_REQ, T_WR_REQ, TAG_BITS
from monet.cores.pbb.codes import MODE_MIXED, MODE_WRITE, MODES, PATTERN_RANDOM, PATTERN_STRIDE, PATTERNS

GOLDEN = 0x9E3779B1
START_CYCLES = 4   # from `start` to the run (the derived settings' registers: step, step mod span, twice it, limit)


def pattern_words(h, seed):
    """The line of the pattern from its hash `h` (laddr * golden ratio): 16 words, each a rotation of `h`, XOR
    seed and a per-word constant (one LUT level)."""
    words = []
    for i in range(LINE_BITS // 32):
        rot = Cat(h[i:], h[:i]) if i else h
        words.append(rot ^ seed ^ ((GOLDEN * (i + 1)) & 0xFFFFFFFF))
    return Cat(*words)


def line_pattern(laddr, seed):
    """Address-keyed pseudo-random line (pattern_words of laddr * golden ratio). Returns the statement that
    sets the hash and the line's expression (one multiplier, the rest is wiring)."""
    h = Signal(32)
    return h.eq(laddr * GOLDEN), pattern_words(h, seed)


def line_pattern_reference(laddr, seed):
    """Software model of line_pattern (for tests and the host)."""
    h = (laddr * GOLDEN) & 0xFFFFFFFF
    value = 0
    for i in range(LINE_BITS // 32):
        rot = ((h >> i) | (h << (32 - i))) & 0xFFFFFFFF if i else h
        value |= (rot ^ seed ^ ((GOLDEN * (i + 1)) & 0xFFFFFFFF)) << (32 * i)
    return value


def xorshift32(x, out):
    """`out` = one xorshift32 step of `x` (13, 17, 5), as a statement list."""
    x1, x2 = Signal(32), Signal(32)
    return [x1.eq(x ^ (x << 13)), x2.eq(x1 ^ (x1 >> 17)), out.eq(x2 ^ (x2 << 5))]


def wrapped_add(module, value, step, limit, name):
    """A signal of `value` + `step` modulo span, for `value` and `step` below span and `limit` = span - `step`:
    the sum, the wrapped sum and the comparison that picks one side by side, a carry chain deep."""
    total, wrapped, out = Signal(32, name=f"{name}_sum"), Signal(32, name=f"{name}_wrapped"), Signal(32, name=name)
    wraps = Signal(name=f"{name}_wraps")
    module.comb += [
        total.eq(value + step),
        wrapped.eq(value - limit),
        wraps.eq(value >= limit),
        out.eq(pick(wraps, wrapped, total)),     # the comparison picks last
    ]
    return out


class PBB(LiteXModule):
    """port: a ReMAT master port (remat/port.py). block_port: optional (sink, source) stream endpoints of an
    HMC controller's block port (`block_txn_layout`), for direct mode."""
    def __init__(self, port, max_outstanding, buckets, block_port=None):
        assert max_outstanding in (2**n for n in range(2, TAG_BITS + 1)), \
            "max_outstanding: a power of two, 4 to ReMAT's tags"
        self.max_outstanding = max_outstanding
        count_bits = TAG_BITS + 1   # counts of transactions in flight, up to ReMAT's tags (the setting is clamped)
        # Settings (CSRs with add_control(), or drive directly in unit tests).
        self.start       = Signal()
        self.mode        = Signal(2)
        self.read_ratio  = Signal(8)    # mixed: a transaction is a read when a random byte < read_ratio.
        self.mix_even    = Signal()     # mixed: reads spread evenly (the ratio's running sum) instead
        self.pattern     = Signal(2)
        self.base        = Signal(32)   # window byte offset, line aligned.
        self.span        = Signal(32)   # bytes; addresses wrap inside; a power of two for random.
        self.stride      = Signal(32)   # bytes, line multiple, below span.
        self.count       = Signal(32)   # transactions.
        self.outstanding = Signal(count_bits, reset=1)  # clamped to max_outstanding
        self.seed        = Signal(32)
        self.check       = Signal()
        self.shift       = Signal(4)
        self.size_log2   = Signal(3, reset=6)  # access size, 8 (3) to 128 (7) bytes.
        self.direct      = Signal()     # 128 B blocks on block_port instead of lines on ReMAT's port
        self.with_block_port = block_port is not None
        # Results.
        self.busy        = Signal()
        self.cycles      = Signal(64)
        self.completed   = Signal(32)
        self.errors      = Signal(32)   # read data that did not match.
        self.bus_errors  = Signal(32)   # responses with err (BFCT fault, remote error).
        self.lat_min     = Signal(32)
        self.lat_max     = Signal(32)
        self.lat_sum     = Signal(64)
        self.hist        = Array(Signal(32, name=f"hist{i}") for i in range(buckets))
        self.buckets     = buckets

        # # #

        self.now = now = Signal(32)     # the cycle count the latencies are stamped with
        self.sync += now.eq(now + 1)

        id_bits  = log2_int(max_outstanding)
        # Free ids, two out and two back a cycle at most (a pair's second transaction, a second answer).
        self.ids = ids = PairedFreeList(max_outstanding)
        free_id, free_id2 = ids.first, ids.second
        # Transactions left to issue, and room left under the outstanding limit (taken at start, clamped to
        # max_outstanding, less what a run before left in flight): counted down rather than compared, so that
        # issuing one or two is a test of a few bits. Ids never run out before room does: each transaction in
        # flight holds one.
        remaining = Signal(32)
        room      = Signal(count_bits)
        inflight  = Signal(count_bits)   # across runs: a run restarted with transactions out still waits for them
        running   = Signal()    # from start to the last answer (`busy` also waits for its figures)
        # One or two less, made before `accepted` and `paired` choose.
        remaining_less1, remaining_less2 = Signal(32), Signal(32)
        self.comb += [remaining_less1.eq(remaining - 1), remaining_less2.eq(remaining - 2)]
        # A run starts START_CYCLES after `start`, once the settings' derived registers below hold the
        # settings (they may be written in the same cycle as `start`); `busy` is up from `start`.
        starting = Signal(START_CYCLES)
        limit = Signal(count_bits)   # the outstanding limit, clamped to max_outstanding
        self.comb += limit.eq(Mux(self.outstanding > max_outstanding, max_outstanding, self.outstanding))
        go = Signal()
        self.sync += starting.eq(Cat(self.start, starting[:-1]))
        self.comb += go.eq(starting[-1])
        # The offsets of this transaction and the next (a pair takes both), and the xorshift32 states of this
        # access and of the next three (random addresses, mixed read/write choice): registers, so that the
        # addresses made from them are an adder deep and the choices two and three on (direct mode's pairing,
        # `we2` below) a comparison deep.
        offset, offset_next = Signal(32), Signal(32)
        lfsr, lfsr_next     = Signal(32, reset=1), Signal(32)
        lfsr_after, lfsr_after2 = Signal(32), Signal(32)   # two and three steps on from lfsr
        lfsr_after3, lfsr_after4 = Signal(32), Signal(32)  # and four and five, made from lfsr_after2
        self.comb += [xorshift32(lfsr_after2, lfsr_after3), xorshift32(lfsr_after3, lfsr_after4)]

        # The first two states of a run, registered from the seed (START_CYCLES cover them), and the two after.
        lfsr_start, lfsr_start_next = Signal(32), Signal(32)
        lfsr_start_after, lfsr_start_after2, start_next = Signal(32), Signal(32), Signal(32)
        self.comb += [xorshift32(lfsr_start, start_next), xorshift32(lfsr_start_next, lfsr_start_after),
                      xorshift32(lfsr_start_after, lfsr_start_after2)]
        self.sync += [lfsr_start.eq(Mux(self.seed == GOLDEN, 1, self.seed ^ GOLDEN)), lfsr_start_next.eq(start_next)]

        # Access size: the alignment of random addresses, the bytes below a line, and the two halves of
        # a 128 B access (the random address and the read/write choice hold for its second line).
        align     = Signal(32)
        burst     = Signal()
        second    = Signal()   # the next transaction is the second line of a 128 B access.
        # These and the other settings that shape a transaction are registered (START_CYCLES cover them).
        settings = Record([("random", 1), ("span_mask", 32), ("write_only", 1), ("mixed", 1), ("ratio2", 9),
                           ("ratio3", 10), ("ratio4", 10)])
        sizes = Signal(3)       # the access is 8, 16 or 32 bytes (one bit each); else a whole line
        self.sync += [
            sizes.eq(Cat(*[self.size_log2 == n for n in (3, 4, 5)])),
            Case(self.size_log2, {
                **{n: align.eq(2**n - 1) for n in (3, 4, 5)},
                "default": align.eq(LINE_BYTES - 1),
            }),
            burst.eq((self.size_log2 == 7) | self.direct),
            settings.random.eq(self.pattern == PATTERN_RANDOM),
            settings.span_mask.eq(self.span - 1),
            settings.write_only.eq(self.mode == MODE_WRITE),
            settings.mixed.eq(self.mode == MODE_MIXED),
            settings.ratio2.eq(self.read_ratio << 1),
            settings.ratio3.eq(self.read_ratio + (self.read_ratio << 1)),
            settings.ratio4.eq(self.read_ratio << 2),
        ]

        # Request side -------------------------------------------------------------------------------------
        req = port.req
        addr = Signal(32)
        we   = Signal()
        ratio_acc = Signal(8)    # mix_even: the read ratio's running sum; a carry out of it is a read
        ratio_sum = Signal(9)
        addr2 = Signal(32)       # the transaction after this one (direct mode pairs a read with it)
        # The running sum two transactions on, from one sum (ratio_acc + 2 x ratio): a pair moves ratio_acc
        # to its low 8 bits, and its carries (with the sums three and four on) make `we2` below.
        ratio_sum_twice = Signal(10)
        self.comb += [
            addr.eq(self.address(settings, lfsr, offset, burst, second, align)),
            addr2.eq(self.address(settings, lfsr_next, offset_next, 1, 0, align)),    # direct mode: a block
            ratio_sum.eq(ratio_acc + self.read_ratio),
            ratio_sum_twice.eq(ratio_acc + settings.ratio2),
            we.eq(self.is_write(settings, ratio_sum[8], lfsr)),
        ]
        # Whether the transaction after this one is a write: direct mode pairs it when it is a read. A register,
        # made for the state the next cycle holds, so that the pairing (and the ids, room and records behind
        # it) waits on no adder. In direct mode, the only one that reads it, a transaction taken moves the state
        # on by one, or by two when paired: the next one's successor is then the third or the fourth from now,
        # whose running sums' carries are those of ratio_acc + 3 x ratio and + 4 x ratio past the sum before.
        accepted = Signal()
        paired   = Signal()     # the accepted transaction took the next one with it
        we2 = Signal()
        ratio_sum_thrice, ratio_sum_four = Signal(11), Signal(11)
        self.comb += [ratio_sum_thrice.eq(ratio_acc + settings.ratio3), ratio_sum_four.eq(ratio_acc + settings.ratio4)]
        carry3 = ratio_sum_thrice[8:] != ratio_sum_twice[8:]
        carry4 = ratio_sum_four[8:] != ratio_sum_thrice[8:]
        self.sync += [
            If(go,
                we2.eq(self.is_write(settings, settings.ratio2[8], lfsr_start_next)),   # from a running sum of 0
            ).Elif(accepted,
                we2.eq(Mux(paired, self.is_write(settings, carry4, lfsr_after2),
                           self.is_write(settings, carry3, lfsr_after))),
            )
        ]
        set_h, wdata = line_pattern(addr[6:], self.seed)
        self.comb += set_h
        can_issue = Signal()
        self.comb += [
            can_issue.eq(running & ~go & (remaining != 0) & (room != 0)),
            req.valid.eq(can_issue & ~self.direct),
            req.addr.eq(addr),
            req.we.eq(we),
            req.mask.eq(self.byte_mask(sizes, addr[:6])),
            req.data.eq(wdata),
            req.id.eq(free_id),
        ]
        id_time = Array(Signal(32, name=f"id_time{i}") for i in range(max_outstanding))
        id_line = Array(Signal(26, name=f"id_line{i}") for i in range(max_outstanding))
        id_read = Array(Signal(name=f"id_read{i}") for i in range(max_outstanding))
        id_off  = Array(Signal(6, name=f"id_off{i}") for i in range(max_outstanding))
        # The address step, modulo span (step1), twice that (step2) and what is left of span above it
        # (limit2), registered from the settings in turn (START_CYCLES cover them). A step is below span, as
        # the settings require.
        step, step1, step2, limit2 = (Signal(32, name=f"pbb_{n}") for n in ("step_setting", "step", "step2", "limit2"))
        step_sum = Signal(33)
        self.comb += step_sum.eq(step1 + step1)
        self.sync += [
            step.eq(Mux(self.pattern == PATTERN_STRIDE, self.stride,
                        Mux(self.direct, 2 * LINE_BYTES, Mux(self.size_log2 < 6, 1 << self.size_log2, LINE_BYTES)))),
            step1.eq(Mux(step >= self.span, step - self.span, step)),
            step2.eq(Mux(step_sum >= self.span, step_sum - self.span, step_sum)),
            limit2.eq(self.span - step2),
        ]
        # Two steps on from this transaction's offset and from the next's.
        offset_after2 = wrapped_add(self, offset, step2, limit2, "pbb_offset_after2")
        offset_next_after2 = wrapped_add(self, offset_next, step2, limit2, "pbb_offset_next_after2")
        # Direct mode: when the transaction after this one is a read and room is left for two, it leaves in
        # the same cycle as the block port's second request (an HMC pair).
        pair_room = Signal()
        self.comb += pair_room.eq((remaining[1:] != 0) & (room[1:] != 0))

        # Response side ------------------------------------------------------------------------------------
        # An answer gives its id back, frees its room and counts as completed in its own cycle (so a run ends
        # when it did); it is timed and checked in registered stages off its path: 1 its id's record, 2 its
        # latency and expected data, 3 mismatch, histogram bucket and extremes, then the counters (the
        # histogram's a stage later, 4 its buckets' increments). `busy`
        # stays up until the stages are empty, so the results are whole when software sees it drop.
        rsp = port.rsp
        self.comb += rsp.ready.eq(1)
        rsp_valid = Signal()    # a response from either port (only the mode's port answers)
        rsp_err   = Signal()
        rid     = Signal(id_bits)
        rsp2_valid, rsp2_err, rid2 = Signal(), Signal(), Signal(id_bits)   # direct mode: a second, data-less answer
        blocks = block_port is not None
        rsp_data = Signal(LINE_BITS * (2 if blocks else 1))    # a line, or a block in direct mode
        self.comb += [rsp_valid.eq(rsp.valid), rsp_err.eq(rsp.err), rid.eq(rsp.id), rsp_data.eq(rsp.data)]

        now_then = Signal(32)    # `now` a cycle ago: the answer's cycle, seen from stage 1
        s1_valid, s1_err, s1_v2, s1_err2 = Signal(), Signal(), Signal(), Signal()
        s1_data  = Signal(len(rsp_data))
        s1_time, s1_time2 = Signal(32), Signal(32)
        s1_line, s1_read, s1_off = Signal(26), Signal(), Signal(6)
        # Each stage's figures load only with an answer in it (its valid flags in every cycle): between answers
        # they keep what they hold, which no stage reads without its valid, and a simulator works out none of
        # them (a second answer comes only beside a first).
        self.sync += [
            s1_valid.eq(rsp_valid), s1_err.eq(rsp_err), s1_v2.eq(rsp2_valid), s1_err2.eq(rsp2_err),
            If(rsp_valid,
                now_then.eq(now),
                s1_data.eq(rsp_data),
                s1_time.eq(id_time[rid]), s1_time2.eq(id_time[rid2]),
                s1_line.eq(id_line[rid]), s1_read.eq(id_read[rid]), s1_off.eq(id_off[rid]),
            ),
        ]
        s2_valid, s2_err, s2_v2, s2_err2, s2_read = Signal(), Signal(), Signal(), Signal(), Signal()
        s2_data  = Signal(len(rsp_data))
        s2_lat, s2_lat2 = Signal(32), Signal(32)
        s2_h, s2_h_next = Signal(32), Signal(32)     # the expected line's hash (and the next line's: a block)
        s2_check = Signal(LINE_BYTES)                # the bytes compared (a line's)
        self.sync += [
            s2_valid.eq(s1_valid), s2_err.eq(s1_err), s2_v2.eq(s1_v2), s2_err2.eq(s1_err2),
            If(s1_valid,
                s2_read.eq(s1_read),
                s2_data.eq(s1_data),
                s2_lat.eq(now_then - s1_time), s2_lat2.eq(now_then - s1_time2),
                s2_h.eq(s1_line * GOLDEN),
                s2_check.eq(self.byte_mask(sizes, s1_off)),
            ),
        ]
        if blocks:
            self.sync += If(s1_valid, s2_h_next.eq((s1_line + 1) * GOLDEN))
        expected = pattern_words(s2_h, self.seed)
        if blocks:
            expected = Cat(expected, pattern_words(s2_h_next, self.seed))
        # Only the access's bytes are compared (the whole line for 64 B and more, the whole block in direct
        # mode).
        check_bits = Signal(len(rsp_data))
        self.comb += check_bits.eq(Cat(*[Replicate(s2_check[i], 8) for i in range(LINE_BYTES)]))
        if blocks:
            self.comb += If(self.direct, check_bits.eq(2**len(rsp_data) - 1))
        s3_valid, s3_mismatch = Signal(), Signal()
        s3_bus_errors = Signal(2)
        s3_bucket, s3_bucket2 = Signal(max=buckets), Signal(max=buckets)
        s3_hit2 = Signal()
        s4_valid = Signal()
        s4_hits, s4_doubles = Signal(buckets), Signal(buckets)   # the buckets hit, and hit by both answers
        s3_low, s3_high = Signal(32), Signal(32)     # the answers' lowest and highest latency
        s3_sum = Signal(33)                          # and their sum
        buckets_of = []
        for lat in (s2_lat, s2_lat2):
            shifted, b = Signal(32), Signal(max=buckets)
            self.comb += [
                shifted.eq(lat >> self.shift),
                b.eq(Mux(shifted >= buckets - 1, buckets - 1, shifted)),
            ]
            buckets_of.append(b)
        self.sync += [
            s3_valid.eq(s2_valid),
            s3_hit2.eq(s2_valid & s2_v2),
            If(s2_valid,
                s3_mismatch.eq(self.check & s2_read & ~s2_err & (((s2_data ^ expected) & check_bits) != 0)),
                s3_bus_errors.eq(s2_err + (s2_v2 & s2_err2)),
                s3_bucket.eq(buckets_of[0]), s3_bucket2.eq(buckets_of[1]),
                s3_low.eq(Mux(s2_v2 & (s2_lat2 < s2_lat), s2_lat2, s2_lat)),
                s3_high.eq(Mux(s2_v2 & (s2_lat2 > s2_lat), s2_lat2, s2_lat)),
                s3_sum.eq(s2_lat + Mux(s2_v2, s2_lat2, 0)),
            ),
            # Stage 4, the histogram's: each bucket's increment (read only under `s4_valid`: an answer's stage 4
            # hits one bucket at least).
            s4_valid.eq(s3_valid),
            If(s3_valid,
                *[s4_hits[i].eq((s3_bucket == i) | (s3_hit2 & (s3_bucket2 == i))) for i in range(buckets)],
                *[s4_doubles[i].eq(s3_hit2 & (s3_bucket == i) & (s3_bucket2 == i)) for i in range(buckets)],
            ),
        ]
        # The 64-bit latency sum in two words (the high word's carry a cycle later).
        lat_sum_carry = add_in_two_words(self, self.lat_sum, Mux(s3_valid, s3_sum, 0), go)
        draining = Signal()
        self.comb += draining.eq(s1_valid | s2_valid | s3_valid | s4_valid | (lat_sum_carry != 0))

        self.comb += accepted.eq(req.valid & req.ready)
        if block_port is not None:
            pair = Record([("valid", 1), ("addr", 32), ("id", id_bits)])
            self.comb += [pair.valid.eq(pair_room & ~we2), pair.addr.eq(addr2), pair.id.eq(free_id2)]
            answers = [(rsp_valid, rsp_err, rid), (rsp2_valid, rsp2_err, rid2)]
            self.drive_block_port(*block_port, can_issue, addr, we, wdata, free_id, pair, answers, rsp_data,
                                  accepted, paired)
        # Room and transactions in flight: taken by transactions out, given back by answers (in the same cycle
        # if need be); a run's start sets the room (below, after this: it wins).
        count_strobes(self, room, ups=[rsp_valid, rsp2_valid], downs=[accepted, paired])
        count_strobes(self, inflight, ups=[accepted, paired], downs=[rsp_valid, rsp2_valid])
        # Ids: taken on issue, given back by the response (in the same cycle if need be).
        self.comb += [
            ids.pop_first.eq(accepted), ids.pop_second.eq(paired),
            ids.push_first.eq(rsp_valid), ids.push_first_id.eq(rid),
            ids.push_second.eq(rsp2_valid), ids.push_second_id.eq(rid2),
        ]
        self.sync += [
            If(go,
                running.eq(1),
                remaining.eq(self.count),
                room.eq(Mux(inflight >= limit, 0, limit - inflight)),
                offset.eq(0),
                offset_next.eq(step1),
                second.eq(0),
                ratio_acc.eq(0),
                lfsr.eq(lfsr_start),
                lfsr_next.eq(lfsr_start_next),
                lfsr_after.eq(lfsr_start_after),
                lfsr_after2.eq(lfsr_start_after2),
                self.cycles.eq(0),
                self.completed.eq(0),
                self.errors.eq(0),
                self.bus_errors.eq(0),
                self.lat_min.eq(2**32 - 1),
                self.lat_max.eq(0),
                *[h.eq(0) for h in self.hist],
            ).Else(
                If(running,
                    self.cycles.eq(self.cycles + 1),
                    If(self.completed == self.count, running.eq(0)),
                ),
                If(accepted,
                    remaining.eq(Mux(paired, remaining_less2, remaining_less1)),
                    second.eq(burst & ~second & ~self.direct),
                    If(paired,
                        lfsr.eq(lfsr_after), lfsr_next.eq(lfsr_after2),
                        lfsr_after.eq(lfsr_after3), lfsr_after2.eq(lfsr_after4),
                        ratio_acc.eq(ratio_sum_twice[:8]),
                        offset.eq(offset_after2),
                        offset_next.eq(offset_next_after2),
                    ).Else(
                        If(~burst | second | self.direct,
                            lfsr.eq(lfsr_next), lfsr_next.eq(lfsr_after),
                            lfsr_after.eq(lfsr_after2), lfsr_after2.eq(lfsr_after3),
                            ratio_acc.eq(ratio_sum[:8]),
                        ),
                        offset.eq(offset_next),
                        offset_next.eq(offset_after2),
                    ),
                ),
                If(rsp_valid, self.completed.eq(self.completed + 1 + rsp2_valid)),
                # The answers' figures, from stage 3.
                If(s3_valid,
                    If(s3_low < self.lat_min, self.lat_min.eq(s3_low)),
                    If(s3_high > self.lat_max, self.lat_max.eq(s3_high)),
                    self.bus_errors.eq(self.bus_errors + s3_bus_errors),
                    If(s3_mismatch, self.errors.eq(self.errors + 1)),
                ),
                # Each bucket its own adder: one answer adds 1, both answers of a pair 2 when they share it.
                If(s4_valid, *[If(s4_hits[i], h.eq(h + 1 + s4_doubles[i])) for i, h in enumerate(self.hist)]),
            )
        ]
        self.comb += self.busy.eq((starting != 0) | running | draining)

        # A transaction's record (issue time, line, read, offset) is written a cycle after it leaves, from
        # registers, so that the records' write enables decode a registered id rather than the free list's head
        # behind the issue's strobes (with 256 ids, two levels more). Its answer comes 2 cycles after it at the
        # earliest (ReMAT's answer to a faulting access), and reads the record in its own cycle.
        rec_valid, rec2_valid = Signal(), Signal()
        rec_id, rec2_id = Signal(id_bits), Signal(id_bits)
        rec_time, rec_line, rec2_line = Signal(32), Signal(26), Signal(26)
        rec_read, rec_off = Signal(), Signal(6)
        self.sync += [
            rec_valid.eq(accepted), rec2_valid.eq(paired),
            If(accepted,
                rec_id.eq(free_id), rec2_id.eq(free_id2), rec_time.eq(now),
                rec_line.eq(addr[6:]), rec2_line.eq(addr2[6:]), rec_read.eq(~we), rec_off.eq(addr[:6]),
            ),
            If(rec_valid,
                id_time[rec_id].eq(rec_time), id_line[rec_id].eq(rec_line), id_read[rec_id].eq(rec_read),
                id_off[rec_id].eq(rec_off),
            ),
            If(rec2_valid,
                id_time[rec2_id].eq(rec_time), id_line[rec2_id].eq(rec2_line), id_read[rec2_id].eq(1),
                id_off[rec2_id].eq(0),
            ),
        ]

    def address(self, settings, lfsr, offset, burst, second, align):
        """A transaction's byte address: the sequential or strided offset, or a random one from `lfsr`
        (a 128 B access's two lines, or one `align`ed access)."""
        return self.base + Mux(settings.random,
                               Mux(burst, Cat(Constant(0, 6), second, lfsr[7:]) & settings.span_mask,
                                   lfsr & settings.span_mask & ~align),
                               offset)

    @staticmethod
    def byte_mask(sizes, low):
        """The byte enables of an access of `sizes` (8, 16 or 32 B, else a line) at line offset `low`: the
        size-aligned bytes that hold the offset (an access is aligned unless a sequential span is not a
        multiple of its size), the same for the write's mask and the read's check; each byte one LUT of the
        offset's bits above the size and the size."""
        return Cat(*[(sizes == 0) | (sizes[0] & (low[3:] == i >> 3)) | (sizes[1] & (low[4:] == i >> 4)) |
                     (sizes[2] & (low[5:] == i >> 5)) for i in range(LINE_BYTES)])

    def is_write(self, settings, carry, lfsr):
        """Whether a transaction is a write, from the carry out of the even mix's running sum at it (a read)
        or the random draw from its `lfsr` state."""
        return settings.write_only | (settings.mixed &
                                      Mux(self.mix_even, ~carry, lfsr[24:32] >= self.read_ratio))

    def drive_block_port(self, sink, source, can_issue, addr, we, wdata, free_id, pair, answers, rsp_data,
                         accepted, paired):
        """Direct mode: requests as 128 B blocks on `sink` (the block's two pattern lines), with `pair` (the
        next transaction, a read) as the request's second when it is valid; answers from `source` (checked
        whole), a second data-less answer beside one counted too. Overrides the ReMAT port's response
        signals while a block answer is there."""
        (rsp_valid, rsp_err, rid), (rsp2_valid, rsp2_err, rid2) = answers
        set_h, wdata_next = line_pattern(addr[6:] + 1, self.seed)
        self.comb += set_h
        self.comb += [
            sink.valid.eq(can_issue & self.direct),
            sink.type.eq(Mux(we, T_WR_REQ, T_RD_REQ)),
            sink.tag.eq(free_id),
            sink.laddr.eq(addr[6:]),
            sink.data.eq(Cat(wdata, wdata_next)),
            sink.second.eq(pair.valid),
            sink.second_tag.eq(pair.id),
            sink.second_laddr.eq(pair.addr[6:]),
            source.ready.eq(1),
            If(sink.valid & sink.ready, accepted.eq(1), paired.eq(pair.valid)),
            If(source.valid,
                rsp_valid.eq(1),
                rsp_err.eq(source.type == T_ERR),
                rid.eq(source.tag),
                rsp2_valid.eq(source.second),
                rsp2_err.eq(source.second_type == T_ERR),
                rid2.eq(source.second_tag),
                rsp_data.eq(source.data),
            ),
        ]

    def add_control(self):
        self._start       = CSR()  # write: start a run with the settings below.
        self._mode        = CSRStorage(2, description=f"{codes_text(MODES)} (codes.py).")
        self._read_ratio  = CSRStorage(8, description="Mixed: reads per 256 transactions.")
        self._pattern     = CSRStorage(2, description=f"{codes_text(PATTERNS)} (codes.py).")
        self._base        = CSRStorage(32, description="Window byte offset of the region (line aligned).")
        self._span        = CSRStorage(32, description="Region size, bytes (a power of two for random).")
        self._stride      = CSRStorage(32, description="Strided: step in bytes (a line multiple).")
        self._count       = CSRStorage(32, description="Line transactions to issue (a 128 B access is two).")
        self._outstanding = CSRStorage(len(self.outstanding), reset=1,
                                       description=f"Transactions in flight at most (1..{self.max_outstanding}).")
        self._seed        = CSRStorage(32, description="Seed of addresses and data.")
        self._check       = CSRStorage(1, description="Compare read data with the address-keyed pattern.")
        self._shift       = CSRStorage(4, description="Histogram bucket width: 2**shift cycles.")
        self._size_log2   = CSRStorage(3, reset=6, description="Access size: 2**size_log2 bytes, 3..7 (8..128 B).")
        self._mix_even    = CSRStorage(1, description="Mixed: reads spread evenly instead of at random.")
        if self.with_block_port:
            self._direct = CSRStorage(1, description="128 B blocks on the HMC controller's block port.")
            self.comb += self.direct.eq(self._direct.storage)
        self._busy        = CSRStatus(1)
        self._cycles      = CSRStatus(64)
        self._completed   = CSRStatus(32)
        self._errors      = CSRStatus(32)
        self._bus_errors  = CSRStatus(32)
        self._lat_min     = CSRStatus(32)
        self._lat_max     = CSRStatus(32)
        self._lat_sum     = CSRStatus(64)
        self._hist_index  = CSRStorage(8, description="Histogram bucket to read.")
        self._hist_value  = CSRStatus(32)
        self.comb += [
            self.start.eq(self._start.re),
            self.mode.eq(self._mode.storage),
            self.read_ratio.eq(self._read_ratio.storage),
            self.pattern.eq(self._pattern.storage),
            self.base.eq(self._base.storage),
            self.span.eq(self._span.storage),
            self.stride.eq(self._stride.storage),
            self.count.eq(self._count.storage),
            self.outstanding.eq(self._outstanding.storage),
            self.seed.eq(self._seed.storage),
            self.check.eq(self._check.storage),
            self.shift.eq(self._shift.storage),
            self.size_log2.eq(self._size_log2.storage),
            self.mix_even.eq(self._mix_even.storage),
            self._busy.status.eq(self.busy),
            self._cycles.status.eq(self.cycles),
            self._completed.status.eq(self.completed),
            self._errors.status.eq(self.errors),
            self._bus_errors.status.eq(self.bus_errors),
            self._lat_min.status.eq(self.lat_min),
            self._lat_max.status.eq(self.lat_max),
            self._lat_sum.status.eq(self.lat_sum),
            self._hist_value.status.eq(self.hist[self._hist_index.storage[:log2_int(self.buckets)]]),
        ]
