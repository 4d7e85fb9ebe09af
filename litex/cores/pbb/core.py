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
lowest free id, freed by its response.

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

from monet.cores.common.layouts import LINE_BYTES, LINE_BITS, T_ERR, T_RD_REQ, T_WR_REQ

MODE_READ, MODE_WRITE, MODE_MIXED = 0, 1, 2
PATTERN_SEQ, PATTERN_STRIDE, PATTERN_RANDOM = 0, 1, 2
GOLDEN = 0x9E3779B1


def line_pattern(laddr, seed):
    """Address-keyed pseudo-random line: 16 words, each a rotation of laddr * golden ratio, XOR seed and
    a per-word constant. Returns a Migen expression (one multiplier, the rest is wiring)."""
    h = Signal(32)
    words = []
    for i in range(LINE_BITS // 32):
        rot = Cat(h[i:], h[:i]) if i else h
        words.append(rot ^ seed ^ ((GOLDEN * (i + 1)) & 0xFFFFFFFF))
    return h.eq(laddr * GOLDEN), Cat(*words)


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


def wrapped_step(offset, step, span, out):
    """`out` = offset + step, wrapped into [0, span) (the sum widened before the compare)."""
    total = Signal(33)
    return [total.eq(offset + step), If(total >= span, out.eq(total - span)).Else(out.eq(total))]


class PBB(LiteXModule):
    """port: a ReMAT master port (remat/port.py). block_port: optional (sink, source) stream endpoints of an
    HMC controller's block port (`block_txn_layout`), for direct mode."""
    def __init__(self, port, max_outstanding, buckets, block_port=None):
        # Ids are the issue count modulo the table size: unique while at most that many are in flight.
        assert max_outstanding in (2**n for n in range(1, 9))
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
        self.outstanding = Signal(9, reset=1)  # clamped to max_outstanding
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

        now = Signal(32)
        self.sync += now.eq(now + 1)

        id_bits  = log2_int(max_outstanding)
        id_free  = Signal(max_outstanding, reset=2**max_outstanding - 1)
        free_id  = Signal(id_bits)
        free_id2 = Signal(id_bits)   # the next free id after it (a pair's second transaction)
        two_free = Signal()
        self.comb += [If(id_free[i], free_id.eq(i)) for i in reversed(range(max_outstanding))]
        self.comb += [If(id_free[i] & (free_id != i), free_id2.eq(i), two_free.eq(1))
                      for i in reversed(range(max_outstanding))]
        issued   = Signal(32)
        inflight = Signal(9)
        offset   = Signal(32)
        lfsr      = Signal(32, reset=1)   # xorshift32 state (random addresses, mixed read/write choice).
        lfsr_next, lfsr_next2 = Signal(32), Signal(32)   # one and two steps on (a pair uses two)
        self.comb += [xorshift32(lfsr, lfsr_next), xorshift32(lfsr_next, lfsr_next2)]

        # Access size: the alignment of random addresses, the byte mask below a line, and the two halves of
        # a 128 B access (the random address and the read/write choice hold for its second line).
        align     = Signal(32)
        size_mask = Signal(LINE_BYTES)
        burst     = Signal()
        second    = Signal()   # the next transaction is the second line of a 128 B access.
        self.comb += [
            Case(self.size_log2, {
                **{n: [align.eq(2**n - 1), size_mask.eq(2**(2**n) - 1)] for n in (3, 4, 5)},
                "default": [align.eq(LINE_BYTES - 1), size_mask.eq(2**LINE_BYTES - 1)],
            }),
            burst.eq((self.size_log2 == 7) | self.direct),
        ]

        # Request side -------------------------------------------------------------------------------------
        req = port.req
        addr = Signal(32)
        we   = Signal()
        ratio_acc = Signal(8)    # mix_even: the read ratio's running sum; a carry out of it is a read
        ratio_sum, ratio_sum2 = Signal(9), Signal(9)
        offset_next, offset_next2 = Signal(32), Signal(32)
        addr2 = Signal(32)       # the transaction after this one (direct mode pairs a read with it)
        we2   = Signal()
        self.comb += [
            addr.eq(self.address(lfsr, offset, burst, second, align)),
            addr2.eq(self.address(lfsr_next, offset_next, 1, 0, align)),    # direct mode: a block
            ratio_sum.eq(ratio_acc + self.read_ratio),
            ratio_sum2.eq(ratio_sum[:8] + self.read_ratio),
            we.eq(self.is_write(ratio_sum, lfsr)),
            we2.eq(self.is_write(ratio_sum2, lfsr_next)),
        ]
        set_h, wdata = line_pattern(addr[6:], self.seed)
        self.comb += set_h
        can_issue = Signal()
        self.comb += [
            can_issue.eq(self.busy & (issued != self.count) & (inflight < self.outstanding) &
                         (inflight < max_outstanding)),
            req.valid.eq(can_issue & ~self.direct),
            req.addr.eq(addr),
            req.we.eq(we),
            req.mask.eq(size_mask << addr[:6]),
            req.data.eq(wdata),
            req.id.eq(free_id),
        ]
        id_time = Array(Signal(32, name=f"id_time{i}") for i in range(max_outstanding))
        id_line = Array(Signal(26, name=f"id_line{i}") for i in range(max_outstanding))
        id_read = Array(Signal(name=f"id_read{i}") for i in range(max_outstanding))
        id_off  = Array(Signal(6, name=f"id_off{i}") for i in range(max_outstanding))
        step = Signal(32)
        self.comb += [
            step.eq(Mux(self.pattern == PATTERN_STRIDE, self.stride,
                        Mux(self.direct, 2 * LINE_BYTES, Mux(self.size_log2 < 6, 1 << self.size_log2, LINE_BYTES)))),
            wrapped_step(offset, step, self.span, offset_next),
            wrapped_step(offset_next, step, self.span, offset_next2),
        ]
        # Direct mode: when the transaction after this one is a read and room is left for two, it leaves in
        # the same cycle as the block port's second request (an HMC pair).
        pair_room = Signal()
        issued2, inflight2 = Signal(33), Signal(10)
        self.comb += [
            issued2.eq(issued + 2),
            inflight2.eq(inflight + 2),
            pair_room.eq((issued2 <= self.count) & (inflight2 <= self.outstanding) & (inflight2 <= max_outstanding) &
                         two_free),
        ]

        # Response side ------------------------------------------------------------------------------------
        rsp = port.rsp
        self.comb += rsp.ready.eq(1)
        rsp_valid = Signal()    # a response from either port (only the mode's port answers)
        rsp_err   = Signal()
        rid     = Signal(id_bits)
        rsp2_valid, rsp2_err, rid2 = Signal(), Signal(), Signal(id_bits)   # direct mode: a second, data-less answer
        latency, latency2 = Signal(32), Signal(32)
        self.comb += [rsp_valid.eq(rsp.valid), rsp_err.eq(rsp.err), rid.eq(rsp.id), latency.eq(now - id_time[rid]),
                      latency2.eq(now - id_time[rid2])]
        set_h2, expected = line_pattern(id_line[rid], self.seed)
        self.comb += set_h2
        bucket, bucket2 = Signal(max=buckets), Signal(max=buckets)
        for lat, b in ((latency, bucket), (latency2, bucket2)):
            shifted = Signal(32)
            self.comb += [
                shifted.eq(lat >> self.shift),
                b.eq(Mux(shifted >= buckets - 1, buckets - 1, shifted)),
            ]
        lat_low, lat_high = Signal(32), Signal(32)   # the cycle's answers' lowest and highest latency
        self.comb += [
            lat_low.eq(Mux(rsp2_valid & (latency2 < latency), latency2, latency)),
            lat_high.eq(Mux(rsp2_valid & (latency2 > latency), latency2, latency)),
        ]
        # Only the access's bytes are compared (the whole line for 64 B and more).
        check_bytes = Signal(LINE_BYTES)
        check_bits  = Signal(LINE_BITS)
        mismatch    = Signal()
        self.comb += [
            check_bytes.eq(size_mask << id_off[rid]),
            check_bits.eq(Cat(*[Replicate(check_bytes[i], 8) for i in range(LINE_BYTES)])),
            mismatch.eq(self.check & id_read[rid] & ~rsp_err & (((rsp.data ^ expected) & check_bits) != 0)),
        ]

        accepted = Signal()
        paired   = Signal()     # the accepted transaction took the next one with it
        self.comb += accepted.eq(req.valid & req.ready)
        if block_port is not None:
            pair = Record([("valid", 1), ("addr", 32), ("id", id_bits)])
            self.comb += [pair.valid.eq(pair_room & ~we2), pair.addr.eq(addr2), pair.id.eq(free_id2)]
            answers = [(rsp_valid, rsp_err, rid), (rsp2_valid, rsp2_err, rid2)]
            self.drive_block_port(*block_port, can_issue, addr, we, wdata, free_id, pair, answers,
                                  expected, id_line, id_read, mismatch, accepted, paired)
        # Ids: taken on issue, given back by the response (in the same cycle if need be).
        alloc, release = Signal(max_outstanding), Signal(max_outstanding)
        self.comb += [
            alloc.eq(Mux(accepted, 1 << free_id, 0) | Mux(paired, 1 << free_id2, 0)),
            release.eq(Mux(rsp_valid, 1 << rid, 0) | Mux(rsp2_valid, 1 << rid2, 0)),
        ]
        self.sync += If(self.start,
            id_free.eq(2**max_outstanding - 1),
        ).Else(
            id_free.eq((id_free & ~alloc) | release),
        )
        self.sync += [
            If(self.start,
                self.busy.eq(1),
                issued.eq(0),
                inflight.eq(0),
                offset.eq(0),
                second.eq(0),
                ratio_acc.eq(0),
                lfsr.eq(Mux(self.seed == GOLDEN, 1, self.seed ^ GOLDEN)),
                self.cycles.eq(0),
                self.completed.eq(0),
                self.errors.eq(0),
                self.bus_errors.eq(0),
                self.lat_min.eq(2**32 - 1),
                self.lat_max.eq(0),
                self.lat_sum.eq(0),
                *[h.eq(0) for h in self.hist],
            ).Else(
                If(self.busy,
                    self.cycles.eq(self.cycles + 1),
                    If(self.completed == self.count, self.busy.eq(0)),
                ),
                If(accepted,
                    issued.eq(issued + 1 + paired),
                    second.eq(burst & ~second & ~self.direct),
                    If(paired,
                        lfsr.eq(lfsr_next2),
                        ratio_acc.eq(ratio_sum2[:8]),
                        offset.eq(offset_next2),
                    ).Else(
                        If(~burst | second | self.direct,
                            lfsr.eq(lfsr_next),
                            ratio_acc.eq(ratio_sum[:8]),
                        ),
                        offset.eq(offset_next),
                    ),
                    id_time[free_id].eq(now),
                    id_line[free_id].eq(addr[6:]),
                    id_read[free_id].eq(~we),
                    id_off[free_id].eq(addr[:6]),
                ),
                If(paired,
                    id_time[free_id2].eq(now),
                    id_line[free_id2].eq(addr2[6:]),
                    id_read[free_id2].eq(1),
                    id_off[free_id2].eq(0),
                ),
                inflight.eq(inflight + accepted + paired - rsp_valid - rsp2_valid),
                If(rsp_valid,
                    self.completed.eq(self.completed + 1 + rsp2_valid),
                    self.lat_sum.eq(self.lat_sum + latency + Mux(rsp2_valid, latency2, 0)),
                    If(lat_low < self.lat_min, self.lat_min.eq(lat_low)),
                    If(lat_high > self.lat_max, self.lat_max.eq(lat_high)),
                    self.hist[bucket].eq(self.hist[bucket] + 1 + (rsp2_valid & (bucket2 == bucket))),
                    self.bus_errors.eq(self.bus_errors + rsp_err + (rsp2_valid & rsp2_err)),
                    If(mismatch, self.errors.eq(self.errors + 1)),
                ),
                If(rsp2_valid & (bucket2 != bucket), self.hist[bucket2].eq(self.hist[bucket2] + 1)),
            )
        ]

    def address(self, lfsr, offset, burst, second, align):
        """A transaction's byte address: the sequential or strided offset, or a random one from `lfsr`
        (a 128 B access's two lines, or one `align`ed access)."""
        return self.base + Mux(self.pattern == PATTERN_RANDOM,
                               Mux(burst, Cat(Constant(0, 6), second, lfsr[7:]) & (self.span - 1),
                                   lfsr & (self.span - 1) & ~align),
                               offset)

    def is_write(self, ratio_sum, lfsr):
        """Whether a transaction is a write, from the even mix's running sum or the random draw."""
        return (self.mode == MODE_WRITE) | ((self.mode == MODE_MIXED) &
                                            Mux(self.mix_even, ~ratio_sum[8], lfsr[24:32] >= self.read_ratio))

    def drive_block_port(self, sink, source, can_issue, addr, we, wdata, free_id, pair, answers,
                         expected, id_line, id_read, mismatch, accepted, paired):
        """Direct mode: requests as 128 B blocks on `sink` (the block's two pattern lines), with `pair` (the
        next transaction, a read) as the request's second when it is valid; answers from `source` checked
        whole, a second data-less answer beside one counted too. Overrides the ReMAT port's response
        signals while a block answer is there."""
        (rsp_valid, rsp_err, rid), (rsp2_valid, rsp2_err, rid2) = answers
        set_h, wdata_next = line_pattern(addr[6:] + 1, self.seed)
        set_h2, expected_next = line_pattern(id_line[rid] + 1, self.seed)
        self.comb += [set_h, set_h2]
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
                mismatch.eq(self.check & id_read[rid] & ~rsp_err &
                            ((source.data ^ Cat(expected, expected_next)) != 0)),
            ),
        ]

    def add_control(self):
        self._start       = CSR()  # write: start a run with the settings below.
        self._mode        = CSRStorage(2, description="0 read, 1 write, 2 mixed.")
        self._read_ratio  = CSRStorage(8, description="Mixed: reads per 256 transactions.")
        self._pattern     = CSRStorage(2, description="0 sequential, 1 strided, 2 random.")
        self._base        = CSRStorage(32, description="Window byte offset of the region (line aligned).")
        self._span        = CSRStorage(32, description="Region size, bytes (a power of two for random).")
        self._stride      = CSRStorage(32, description="Strided: step in bytes (a line multiple).")
        self._count       = CSRStorage(32, description="Line transactions to issue (a 128 B access is two).")
        self._outstanding = CSRStorage(9, reset=1, description="Transactions in flight at most (1..256).")
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
