#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Packed link framing: several transactions share one CRC-32 trailer, and frames are packed back to back
into beats of 8 blocks.

The wire format (frames of units and a trailer, in 64-bit blocks; the ctrl flag stands for the 64b/66b
sync header) is the field tables of common/wire.py: the framer packs headers and trailers with them and the
deframer reads them back with them (doc/wire-format.md is generated from the same tables).

Under load a frame carries up to `max_units` units and beats are always full. Two full-line writes (or
read responses) to consecutive lines that meet in the framer share one header, as a 128 B burst does: a
sequential 64 B stream costs 8.5 blocks a line plus 1/(2 max_units) of a trailer, a random one 9 blocks
plus 1/max_units. When nothing more is queued the frame closes at once and a partial beat leaves, so a
lone read request is 2 blocks and never waits for company. A unit without a line (a read request, a
write's ack) closes its frame too: it is 2 blocks with its trailer however many follow it, and is
delivered as soon as it arrives rather than behind the units packed after it (whose round trips wait on
it; packed, two reads back to back crossed in 26 and 27 cycles where one alone took 17).
"""

from functools import reduce
from operator import or_, xor

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.arith import plus_one
from monet.cores.common.crc import crc_bits, crc_data_part, crc_state_part
from monet.cores.common.csr import async_memory
from monet.cores.common.layouts import *
from monet.cores.common.wire import HEADER, MASK, TRAILER
from monet.cores.link.repair import FRAME_BLOCKS_BITS, UNIT_LENGTH_BITS, FrameRepair, SyndromeLocator

UNIT_MAX   = 17   # a pair: header + 16 data blocks (a masked line is header + mask + 8).
# Frames the deframer's cut-through ended whose copies the ring has yet to end: a copy is counted from the cycle
# after the cut-through ends its frame until the ring ends it, 3 cycles for a frame of one beat, and the
# cut-through ends one frame a beat at most, so 3 are the most a link brings. A frame beyond this bound would
# be left to the ring (a backstop, never reached).
COPIES_MAX = 7
EXPRESS_BLOCKS = 11   # the framer's cut-through sends a frame of one unit: a masked line and its trailer at most.
# The deframer's locator scans a failed frame's syndrome eight blocks a cycle: a frame of 8 lines (73 blocks) in
# 10 steps at most. The frames behind one being repaired wait that long, so it is worth its LUTs (a repairing
# link kept 92.2 % of the error-free bandwidth at 36 m, BER 1e-5, at two blocks a cycle, 94.9 % at four, and
# 96.2 % at eight with the retry timer that waits out a repair).
LOCATOR_BLOCKS_PER_CYCLE = 8
LENGTHS    = (1, 9, 10, 17)
JUNK_MAX   = BEAT_BLOCKS + 1   # junk blocks a deframer cycle can skip: more than a beat brings.
# Rows of a deframer's banks that its head's UNIT_MAX + 1 blocks span: they may start at a row's last block.
HEAD_ROWS  = (BEAT_BLOCKS - 1 + UNIT_MAX + 1 + BEAT_BLOCKS - 1) // BEAT_BLOCKS
BLOCK_CTRL = BLOCK_BITS   # a block in a buffer: its data bits, then the ctrl flag at this bit.
CRC_INIT   = 0xFFFFFFFF
FULL_MASK  = 2**LINE_BYTES - 1


def trailer_covered(seq, ack, nak, credits):
    """The bits of a trailer that its own CRC covers: every field below the CRC."""
    return TRAILER.below(TRAILER.pack(type=T_TRAILER, seq=seq, ack=ack, nak=nak, credits=credits), "crc")


def length_classes(header):
    """One flag for each of LENGTHS: which length the unit under this header has."""
    line, masked = carries_line(HEADER.get(header, "type")), HEADER.get(header, "has_mask")
    pair = HEADER.get(header, "pair") & line & ~masked
    return [~line, line & ~masked & ~pair, line & masked, pair]


class RunningCRC(Module):
    """A frame's running CRC through one unit, and the state's part of its trailer's CRC (0 cycles).

    A CRC is linear, crc(state, data) = A_k.state ^ crc(0, data) (A_k: the state's part over k bits), so with
    the unit's data part `part` given: `unit_state` = A_n.state ^ part for a unit of class `cls` (one flag for
    each of LENGTHS, n its bits), and `trailer_state` = A_t.A_n.state ^ A_t.part behind the unit
    (`with_unit`), else A_t.state (a trailer alone), t being the trailer's bits below its CRC field. The
    products of the state are made side by side, not one behind the other: what the framer appends and what
    the deframer checks is a few levels from registers. Both are 0 unless `active` (the cycles their user
    takes them), so that a simulator works out none of the products in the others.
    """
    def __init__(self):
        self.state     = Signal(32)
        self.part      = Signal(32)
        self.cls       = Signal(len(LENGTHS))
        self.with_unit = Signal()
        self.active    = Signal()
        self.unit_state    = Signal(32)
        self.trailer_state = Signal(32)

        # # #

        # The products are expressions under the conditions that choose them (crc_bits): Verilator works out
        # the length class's alone, where a signal for each would be worked out every cycle.
        low_bits = TRAILER["crc"].offset
        part_on = crc_state_part(self.part, low_bits)
        self.comb += If(self.active & ~self.with_unit,
            [self.trailer_state[b].eq(bit) for b, bit in enumerate(crc_state_part(self.state, low_bits))])
        for i, n in enumerate(LENGTHS):
            self.comb += [
                If(self.active & self.cls[i], [self.unit_state[b].eq(bit ^ self.part[b])
                                               for b, bit in enumerate(crc_state_part(self.state, n*BLOCK_BITS))]),
                If(self.active & self.with_unit & self.cls[i],
                    [self.trailer_state[b].eq(bit ^ part_on[b])
                     for b, bit in enumerate(crc_state_part(self.state, n*BLOCK_BITS + low_bits))]),
            ]


def layout_bits(layout, **fields):
    """A record's raw bits made of the given fields, `layout`'s order (the first lowest), each exactly its
    field's width: one expression, for registers that take it with no signal of its own."""
    assert all(len(fields[name]) == width for name, width in layout)
    return Cat(*[fields[name] for name, _ in layout])


# A transaction in the framer's intake: its fields, whether it is a masked write, and its line address and
# sequence number plus one (what a partner must have).
intake_layout = seq_txn_layout + [
    ("masked", 1),
    ("nladdr", LADDR_BITS),
    ("nseq",   SEQ_BITS),
]

# A unit ready for the ring: its blocks (the header first; the blocks past its length are don't-care), its
# length (and the length with a trailer), its length class (LENGTHS), the data part of its CRC, the
# sequence numbers of its first transaction and of the one after its last, and whether it is a pair.
unit_layout = [
    ("blocks",  UNIT_MAX*BLOCK_BITS),
    ("length",  5),
    ("length1", 5),
    ("cls",     len(LENGTHS)),
    ("part",    32),
    ("seq",     SEQ_BITS),
    ("nseq",    SEQ_BITS),
    ("pair",    1),
]


class PackedFramer(LiteXModule):
    """Transactions in, full beats out (partial only when nothing is queued and the frame closed).

    Latency: 2 cycles from a transaction that comes alone to an idle framer to the first beat of its frame,
    through the cut-through (below); otherwise 4, each stage a register that a board at 250 MHz needs:
      1. landing: the transaction as it comes;
      2. intake: the transaction lands in one of two slots, with its line address and sequence number plus
         one; whether the next transaction pairs with it is decided as that one lands;
      3. the unit: its header, blocks, length class and CRC data part (crc(0, unit); a CRC is linear:
         crc(state, data) = crc(state, 0) ^ crc(0, data)) are registered (a second register beside it takes
         a unit while the first waits, so the intake's readiness is a register);
      4. the ring: the unit, and its trailer when the frame closes, are written at the ring's write position,
         while the frame's running CRC takes the unit (state' = A_n.state ^ part, A_k: the state's part over
         k bits) and the trailer's CRC is made beside it (A_t.A_n.state ^ A_t.part ^ crc(0, trailer fields)).
    A transaction with another right behind it waits a cycle more in the intake, for the pairing decision.
    A frame left open by a unit with nothing behind it gets its trailer on its own the next cycle.

    Cut-through: when the framer holds nothing (intake, unit stage and ring empty, no frame open) a
    transaction that lands with none behind it skips stages 2-4: 2. its whole frame (header, mask, data and
    the trailer with its CRC, made from the landing register in one go) goes into an express buffer of 11
    blocks, whose first beat leaves at once and the rest (a line's last block or two and the trailer) the next
    cycle. A trailer alone asked for on an idle framer goes the same way. The express buffer's beats go before
    the ring's; its frame is the one stages 2-4 would make for the transaction alone, so the deframer cannot
    tell them apart, and under load (the framer busy, or transactions back to back) every transaction takes
    the packing stages, which pair and pack as before.

    Run time: `max_units` (1..8) bounds the units of a frame, `pairing` allows pairs; max_units=1 without
    pairing gives one frame per transaction, as a per-transaction streamer over Aurora sends them.

    Sequence numbers come with the transactions (from the retry buffer): a frame holds consecutive ones,
    so a unit that does not follow the open frame (a replay began) closes it first. Every trailer carries
    `ack` and `nak`; `ctrl_request` sends a trailer alone when nothing else is going out.

    The ring holds `depth` blocks (a power of two). A unit goes in when UNIT_MAX + 1 blocks fit, whatever its
    length, counting the full beat that leaves this cycle; whenever the ring cannot take a unit it still holds
    a full beat to send, so under load beats stay full.
    """
    def __init__(self, max_units=8, depth=32):
        assert depth & (depth - 1) == 0 and depth - (UNIT_MAX + 1) >= BEAT_BLOCKS
        self.sink      = sink   = stream.Endpoint(seq_txn_layout)
        self.source    = source = stream.Endpoint(beat_layout)
        self.max_units = Signal(4, reset=max_units)
        self.pairing   = Signal(reset=1)
        self.frames    = Signal(32)
        self.pairs     = Signal(32)
        self.ack          = Signal(SEQ_BITS)
        self.nak          = Signal()
        self.credits      = Signal(CREDIT_BITS)
        self.ctrl_request = Signal()
        self.ctrl_sent    = Signal()   # a trailer, with `ack`, `nak` and `credits`, is appended this cycle.
        # A frame of transactions was closed a cycle before: the sequence numbers of its first and last (the
        # retry buffer's selective repeat resends a frame as it was sent).
        self.closed       = Signal()
        self.closed_first = Signal(SEQ_BITS)
        self.closed_last  = Signal(SEQ_BITS)

        # # #

        # 1. Landing: the transaction is registered as it comes (the sink may come out of the retry buffer's LUT
        # RAM through its bypass), so that the intake's sums and compares start from a register.
        self.landing = landing = stream.PipeValid(seq_txn_layout)
        self.comb += sink.connect(landing.sink)
        sink = landing.source

        # 2. Intake: slot u holds the oldest transaction, v the one behind it (whether it pairs with u in
        # `uv_pair`). u leaves alone once v holds a transaction that is not its partner, or nothing is
        # coming; with its partner, the two leave as a pair.
        # What a slot takes of the landed transaction (intake_layout's bits): an expression that only the slots'
        # loads work out, so that a simulator copies nothing in a cycle they load nothing.
        masked_in = Signal()   # the landed transaction is a masked write
        self.comb += masked_in.eq((sink.type == T_WR_REQ) & (sink.mask != FULL_MASK))
        incoming = layout_bits(intake_layout, **{name: getattr(sink, name) for name, _ in seq_txn_layout},
                               masked=masked_in, nladdr=plus_one(sink.laddr), nseq=plus_one(sink.seq))
        u, v = Record(intake_layout), Record(intake_layout)
        u_valid, v_valid, uv_pair = Signal(), Signal(), Signal()
        express = Signal()   # the landed transaction takes the cut-through (below) instead of the intake.
        idle    = Signal()   # the cut-through takes a transaction or a trailer alone.
        x_load  = Signal()   # the cut-through takes one of them.

        def partner(slot):
            """The incoming transaction is the slot's partner: a full line of the same type on the next line,
            with the next sequence number, behind a full line."""
            return (self.pairing & carries_line(slot.type) & ~slot.masked & (sink.type == slot.type) &
                    ~masked_in & (sink.laddr == slot.nladdr) & (sink.seq == slot.nseq))
        u_partner, v_partner = Signal(), Signal()
        can_emit = Signal()   # the unit stage has room
        emit     = Signal()
        is_pair  = Signal()
        self.comb += [
            u_partner.eq(partner(u)), v_partner.eq(partner(v)),
            sink.ready.eq(~v_valid | can_emit),
            emit.eq(u_valid & can_emit & (v_valid | ~sink.valid)),
            is_pair.eq(v_valid & uv_pair),
        ]
        self.sync += [
            If(~u_valid,
                If(sink.valid & ~express, u.raw_bits().eq(incoming), u_valid.eq(1))
            ).Elif(~v_valid,
                If(sink.valid,
                    v.raw_bits().eq(incoming), v_valid.eq(1), uv_pair.eq(u_partner)
                ).Elif(emit,
                    u_valid.eq(0)
                )
            ).Elif(can_emit,
                If(uv_pair,
                    If(sink.valid, u.raw_bits().eq(incoming)),
                    u_valid.eq(sink.valid), v_valid.eq(0)
                ).Else(
                    u.raw_bits().eq(v.raw_bits()),
                    If(sink.valid, v.raw_bits().eq(incoming)),
                    v_valid.eq(sink.valid), uv_pair.eq(v_partner)
                )
            )
        ]

        # 3. The unit: u alone or u and v as a pair, its header and length class from registers.
        made = Record(unit_layout)
        fields = dict(type=u.type, tag=u.tag, laddr=u.laddr)
        single_header = HEADER.pack(**fields, has_mask=u.masked, pair=0, tag2=0)
        pair_header   = HEADER.pack(**fields, has_mask=0, pair=1, tag2=v.tag)
        header = Signal(BLOCK_BITS)
        data_u = [u.data[BLOCK_BITS*i:BLOCK_BITS*(i+1)] for i in range(8)]
        data_v = [v.data[BLOCK_BITS*i:BLOCK_BITS*(i+1)] for i in range(8)]
        blocks = [header] + [Mux(u.masked, ([u.mask] + data_u + [0]*7)[i], (data_u + data_v)[i])
                             for i in range(UNIT_MAX - 1)]
        classes = Signal(len(LENGTHS))
        self.comb += [
            header.eq(Mux(is_pair, pair_header, single_header)),
            classes.eq(Cat(*length_classes(header))),
            made.cls.eq(classes),
            made.seq.eq(u.seq),
            made.nseq.eq(Mux(is_pair, v.nseq, u.nseq)),
            made.pair.eq(is_pair),
        ]
        # The CRC data part (crc(0, unit)) of each length class, from registers: the header's part with the rest
        # of the unit behind it as zeros, the mask's, and the lines' (u's line with v's behind it in a pair). They
        # are expressions that only the unit registers take (crc_bits), for the class of the unit they take, so
        # worked out only in a cycle a unit is made (m takes the unit being made every cycle it is empty; it
        # reads its part only while it holds a unit). u's line part is the same expression in two classes, which
        # synthesis builds once.
        def xor_bits(*parts):
            return [reduce(xor, bits) for bits in zip(*parts)]
        line_u, line_v = Cat(*reversed(data_u)), Cat(*reversed(data_v))   # block 0 first
        u_line = crc_data_part(line_u)
        parts = [
            crc_data_part(single_header),
            xor_bits(crc_data_part(single_header, LINE_BITS), u_line),
            xor_bits(crc_data_part(single_header, BLOCK_BITS + LINE_BITS), crc_data_part(u.mask, LINE_BITS), u_line),
            xor_bits(crc_data_part(pair_header, 2*LINE_BITS), crc_data_part(line_u, LINE_BITS), crc_data_part(line_v)),
        ]
        for i, n in enumerate(LENGTHS):
            self.comb += If(classes[i], made.length.eq(n), made.length1.eq(n + 1))

        def take_made(unit):
            """`unit` takes the unit being made, and its blocks and the data part of its CRC when one is made
            (`emit`): expressions that a simulator then works out only in that cycle."""
            return [[getattr(unit, name).eq(getattr(made, name)) for name, _ in unit_layout
                     if name not in ("blocks", "part")],
                    If(emit, unit.blocks.eq(Cat(*blocks)),
                       [If(classes[i], [unit.part[b].eq(bit) for b, bit in enumerate(part)])
                        for i, part in enumerate(parts)])]

        # The unit register m, and s beside it: s takes a unit that leaves the intake while m waits. Whether m's
        # unit follows the open frame's last (`m_breaks`: its first sequence number is not the one the frame
        # takes next) is registered with it: compared beside the decision that takes the unit before it.
        m, s = Record(unit_layout), Record(unit_layout)
        m_valid, s_valid = Signal(), Signal()
        m_breaks  = Signal()
        unit_take = Signal()
        next_seq  = Signal(SEQ_BITS)   # the one the open frame may take next.
        coming_seq = Signal(SEQ_BITS)
        breaks_after_m, breaks_now = Signal(), Signal()
        self.comb += [
            can_emit.eq(~s_valid),
            coming_seq.eq(Mux(s_valid, s.seq, made.seq)),
            breaks_after_m.eq(coming_seq != m.nseq),
            breaks_now.eq(coming_seq != next_seq),
        ]
        self.sync += [
            If(~m_valid | unit_take,
                m_breaks.eq(Mux(unit_take, breaks_after_m, breaks_now)),
                If(s_valid,
                    m.raw_bits().eq(s.raw_bits()), s_valid.eq(0)
                ).Else(
                    take_made(m), m_valid.eq(emit)
                )
            ).Elif(emit,
                take_made(s), s_valid.eq(1)
            )
        ]

        # 4. The ring and the frame. The frame closes with this unit when it is full, nothing is behind it, or
        # the unit carries no line (a read request, a write's ack): such a unit goes alone in its frame, so that
        # it is delivered a trailer after it rather than behind the units that follow (a request's whole round
        # trip waits for it, and its trailer is one block more on the direction that is not the busy one).
        ring  = Array(Signal(BLOCK_CTRL + 1, name=f"txring{i}") for i in range(depth))
        pos_bits = log2_int(depth)
        wp    = Signal(pos_bits)   # the next position written
        rp    = Signal(pos_bits)   # the next position sent
        level = Signal(pos_bits + 1)
        state  = Signal(32, reset=CRC_INIT)
        units  = Signal(4)
        units1 = Signal(5)
        closed = Signal(reset=1)
        first_seq = Signal(SEQ_BITS)   # of the open frame's first transaction.
        # behind: a unit, or a transaction in the intake, is behind m. Registers only: a transaction still
        # landing would reach m two cycles later, not worth a frame held open.
        behind    = Signal()
        close     = Signal()   # m's unit closes the frame.
        broken    = Signal()   # m's unit does not follow the open frame: close it first.
        unit_go   = Signal()   # m's unit goes into the open (or a new) frame.
        late      = Signal()   # open frame, nothing coming or a replay behind it: send its trailer alone.
        control   = Signal()   # no frame open, nothing coming, ack or nak waiting: a control frame.
        lone      = Signal()   # a trailer alone.
        self.comb += [
            behind.eq(s_valid | u_valid),
            units1.eq(units + 1),
            close.eq((units1 >= self.max_units) | ~behind | m.cls[LENGTHS.index(1)]),
            broken.eq(m_valid & ~closed & m_breaks),
            unit_go.eq(m_valid & ~broken),
            late.eq(~closed & ((~m_valid & ~behind) | broken)),
            control.eq(closed & ~m_valid & ~behind & self.ctrl_request & ~idle),
            lone.eq(late | control),
        ]
        # The running CRC through the unit, and the trailer's: A_t.A_n.state ^ A_t.part, or A_t.state for a
        # trailer alone, and the data part of the trailer's own fields.
        low_bits = TRAILER["crc"].offset
        low = Signal(low_bits)
        # The seq field: the frame's first transaction's; a control frame's (no frame open, no unit) is the next
        # sequence number to send, the retry buffer's (the peer's checker stops waiting for a replay when it is
        # the one it expects). Registers under one mux: no level is added.
        trailer_seq = Mux(closed, Mux(m_valid, m.seq, sink.seq), first_seq)
        self.comb += low.eq(trailer_covered(trailer_seq, self.ack, self.nak, self.credits))
        self.running = running = RunningCRC()
        self.comb += [running.state.eq(state), running.part.eq(m.part), running.cls.eq(m.cls),
                      running.with_unit.eq(unit_go)]
        trailer = Signal(BLOCK_BITS)   # made in a comb If's branch in the cycles the ring takes it (`append`)

        # Out: the express buffer's beats first (its frame is older than anything in the ring); then full beats
        # whenever possible, a partial one only when nothing is about to join it.
        x_blocks = [Signal(BLOCK_CTRL + 1, name=f"txexpress{i}") for i in range(EXPRESS_BLOCKS)]
        x_valid  = Signal()
        x_count  = Signal(4)   # blocks of the beat it sends next
        x_rest   = Signal(2)   # blocks behind that beat
        out_n = Signal(4)
        taken = Signal()       # a beat of the ring's leaves.
        self.comb += [
            If(level >= BEAT_BLOCKS,
                out_n.eq(BEAT_BLOCKS)
            ).Elif(closed & ~m_valid & ~s_valid & ~u_valid & (level != 0),
                out_n.eq(level)
            ),
            source.valid.eq(x_valid | (out_n != 0)),
            source.count.eq(Mux(x_valid, x_count, out_n)),
            taken.eq(~x_valid & (out_n != 0) & source.ready),
        ]
        # The beat's blocks are read out only while there is one to send (from registers: the express buffer's,
        # or the ring's when it holds blocks), so that a simulator reads none in the other cycles.
        beat = []
        for k in range(BEAT_BLOCKS):
            at = Signal(pos_bits, name=f"txread{k}")
            self.comb += at.eq(rp + k)
            beat += [source.data[BLOCK_BITS*k:BLOCK_BITS*(k+1)].eq(Mux(x_valid, x_blocks[k][:BLOCK_BITS],
                                                                        ring[at][:BLOCK_BITS])),
                     source.ctrl[k].eq(Mux(x_valid, x_blocks[k][BLOCK_CTRL], ring[at][BLOCK_CTRL]))]
        self.comb += If(x_valid | (level != 0), *beat)

        # In: the unit (none for a trailer alone), then the trailer if the frame closes. A unit and its trailer
        # go in when UNIT_MAX + 1 blocks fit (less the full beat leaving), whatever its length: so the
        # positions written are always the next UNIT_MAX + 1, each taking the unit's block at its offset or
        # the trailer, and a position past the unit and its trailer takes a block that is never sent.
        room     = Signal()
        append   = Signal()
        tail     = Signal(5)   # the trailer's offset
        self.comb += [
            room.eq((level <= depth - (UNIT_MAX + 1)) |
                    (taken & (level >= BEAT_BLOCKS) & (level <= depth - (UNIT_MAX + 1) + BEAT_BLOCKS))),
            append.eq(room & (unit_go | lone)),
            self.running.active.eq(append),
            If(append,
                TRAILER.below(trailer, "crc").eq(low),
                TRAILER.get(trailer, "crc").eq(running.trailer_state ^ Cat(*crc_data_part(low))),
            ),
            unit_take.eq(unit_go & room),
            tail.eq(Mux(unit_go, m.length, 0)),
            self.ctrl_sent.eq(append & (lone | close) | x_load),
        ]
        # Each position's block is chosen inside the append, so that a simulator chooses none in other cycles.
        unit_blocks = [m.blocks[BLOCK_BITS*i:BLOCK_BITS*(i+1)] for i in range(UNIT_MAX)]
        for j in range(depth):
            offset = Signal(pos_bits, name=f"txoffset{j}")   # from the write position, modulo the ring
            self.comb += offset.eq(j - wp)
            self.sync += If(append,
                Case(offset, {i: ring[j].eq(Cat(unit_blocks[i], i == 0)) for i in range(UNIT_MAX)}),
                If(offset == tail, ring[j].eq(Cat(trailer, 1))),
            )
        # The write position and the level after each amount that can go in (the unit, the unit and its
        # trailer, a trailer alone) are made beside the decision, which picks one of them last; the level's
        # from what it is after each beat that can leave (none, a full one, or a partial one: all there is).
        less_beat = Signal(pos_bits + 1)
        self.comb += less_beat.eq(level - BEAT_BLOCKS)
        def appended(base, name):
            on = {n: Signal(len(base), name=f"{name}_plus_{n}") for n in ("unit", "unit1", "one")}
            self.comb += [on["unit"].eq(base + m.length), on["unit1"].eq(base + m.length1), on["one"].eq(base + 1)]
            return Mux(append, Mux(unit_go, Mux(close, on["unit1"], on["unit"]), on["one"]), base)
        self.sync += [
            rp.eq(rp + Mux(taken, out_n, 0)),
            wp.eq(appended(wp, "wp")),
            level.eq(Mux(taken, Mux(level >= BEAT_BLOCKS, appended(less_beat, "level_beat"),
                                    appended(Constant(0, pos_bits + 1), "level_partial")),
                         appended(level, "level"))),
            If(append,
                If(lone | close,
                    state.eq(CRC_INIT), units.eq(0), closed.eq(1), self.frames.eq(self.frames + 1)
                ).Else(
                    state.eq(running.unit_state), units.eq(units + 1), closed.eq(0)
                )
            ),
            If(unit_take,
                If(closed, first_seq.eq(m.seq)),
                next_seq.eq(m.nseq),
                If(m.pair, self.pairs.eq(self.pairs + 1)),
            ),
            # A frame closes with its last unit, with a trailer alone behind its last (`late`), or whole in the
            # cut-through (`express`, below).
            self.closed.eq(append & (unit_go & close | late) | express),
            If(express,
                self.closed_first.eq(sink.seq), self.closed_last.eq(sink.seq),
            ).Elif(append,
                self.closed_first.eq(Mux(unit_go & closed, m.seq, first_seq)),
                self.closed_last.eq(Mux(unit_go, m.nseq, next_seq) - 1),
            ),
        ]

        # Cut-through: while the framer holds nothing (intake, unit stage and ring empty, no frame open, the
        # express buffer sent or sending its last beat), a transaction that lands alone (none right behind it,
        # which would pair or share its frame) skips the intake, the unit stage and the ring: its whole frame, the
        # unit and its trailer, is made from the landing register in one go (the trailer's CRC from the frame's
        # first bit, one parity a bit for each length the unit can have) and registered in the express buffer,
        # which sends its first beat the next cycle and the rest behind it. With nothing landing, a trailer alone
        # that the link asks for (`ctrl_request`) goes the same way, so that the ring stays empty for the next.
        x_leaving = Signal()
        x_control = Signal()
        self.comb += [
            x_leaving.eq(x_valid & (x_rest == 0) & source.ready),
            idle.eq(~u_valid & ~v_valid & ~m_valid & ~s_valid & closed & (level == 0) & (~x_valid | x_leaving)),
            express.eq(idle & sink.valid & ~landing.sink.valid),
            x_control.eq(idle & ~sink.valid & self.ctrl_request),
            x_load.eq(express | x_control),
        ]
        x_low = Signal(low_bits)
        x_header = HEADER.pack(type=sink.type, tag=sink.tag, laddr=sink.laddr, has_mask=masked_in, pair=0,
                               tag2=0)
        x_data = [sink.data[BLOCK_BITS*i:BLOCK_BITS*(i + 1)] for i in range(8)]
        self.comb += x_low.eq(trailer_covered(sink.seq, self.ack, self.nak, self.credits))
        # The trailers go in with their CRC fields zero, and each CRC bit is written over its field by a statement
        # of its own under the load: expressions that only the load takes, so that a simulator works them out
        # only then. The header first, the trailer's fields last.
        trailer = Cat(x_low, Constant(0, TRAILER["crc"].width), 1)
        is_line = carries_line(sink.type)
        data = lambda i: Cat(x_data[i], 0)
        frame = [Mux(express, Cat(x_header, 1), trailer),
                 Mux(is_line, Mux(masked_in, Cat(sink.mask, 0), data(0)), trailer)]
        frame += [Mux(masked_in, data(i - 2), data(i - 1)) for i in range(2, 9)]
        frame += [Mux(masked_in, data(7), trailer), trailer]
        crc_at = TRAILER["crc"].offset
        crcs = [   # (when, the block its trailer is in, the unit's blocks)
            (x_control, 0, []),
            (express & ~is_line, 1, [x_header]),
            (express & is_line & ~masked_in, 9, [x_header] + x_data),
            (express & is_line & masked_in, 10, [x_header, sink.mask] + x_data),
        ]
        self.sync += [
            If(x_load,
                [x.eq(f) for x, f in zip(x_blocks, frame)],
                [If(when, [x_blocks[at][crc_at + i].eq(bit)
                           for i, bit in enumerate(crc_bits(Cat(x_low, *reversed(unit))))])
                 for when, at, unit in crcs],
                x_valid.eq(1),
                x_count.eq(Mux(express, Mux(is_line, BEAT_BLOCKS, 2), 1)),
                x_rest.eq(Mux(express & is_line, Mux(masked_in, 3, 2), 0)),
                self.frames.eq(self.frames + 1),
            ).Elif(x_valid & source.ready,
                [x.eq(later) for x, later in zip(x_blocks, x_blocks[BEAT_BLOCKS:])],
                x_count.eq(x_rest), x_rest.eq(0), x_valid.eq(x_rest != 0),
            ),
        ]


# A block's flags, decoded as the deframer writes it: its ctrl flag, a trailer, a unit's header, and the
# unit's length (a line: 9 blocks, a masked line: 10, a pair: 17; none of them: 1).
FLAG      = {name: bit for bit, name in enumerate(("ctrl", "trailer", "unit", "l9", "l10", "l17"))}
FLAG_BITS = len(FLAG)
# What a deframer's head consumes: a trailer alone, a unit (with its trailer right behind it, or not), junk.
KIND = {name: bit for bit, name in enumerate(("trailer", "unit", "unit_trailer", "junk"))}


def block_flags(block):
    """The FLAG bits of a block (its data bits, then its ctrl flag at BLOCK_CTRL)."""
    ctrl, frame_type = block[BLOCK_CTRL], HEADER.get(block, "type")
    return Cat(ctrl, ctrl & (frame_type == T_TRAILER), ctrl & (frame_type >= T_RD_REQ) & (frame_type <= T_ERR),
               *length_classes(block)[1:])


def rotated(vector, k):
    """The vector whose bit p is `vector`'s bit p + k, around its end: every position's k-th successor."""
    k %= len(vector)
    return Cat(vector[k:], vector[:k]) if k else vector


class HeadDecisions(Module):
    """What a deframer's head at each position of a ring would consume: `advance` blocks, and how (`kind`,
    KIND bits), from the ring's FLAG bits and presence (0 cycles). The inputs and outputs are one vector per
    flag, bit or KIND, bit p for position p: each rule below is a few operations on whole vectors (in
    Verilator, a few machine words), the same logic per position as spelled one position at a time.

    A trailer: 1 block. A unit whose blocks are all there and hold no ctrl block after the header: its
    length, plus 1 if its trailer is right behind it. Anything else that is there (a block that starts
    nothing, or a unit cut short by a ctrl block) is junk: the run up to the next ctrl block or the last
    block there, at most JUNK_MAX blocks. Nothing while a unit's blocks are still coming.

    The decisions are worked out only while `enable` (0 otherwise), in one comb If: its user takes them only
    when the flags or presence changed, and a simulator then works out nothing in the other cycles.
    """
    def __init__(self, flags, present, enable):
        ring = len(present)
        self.advance = [Signal(ring, name=f"advance_bit{b}") for b in range(5)]
        self.kind    = {name: Signal(ring, name=f"kind_{name}") for name in KIND}

        # # #

        logic = []   # every statement, under `enable` at the end

        def there(name):
            vector = Signal(ring, name=f"there_{name}")
            logic.append(vector.eq(flags[name] & present))
            return vector
        ctrl, trailer, unit = there("ctrl"), there("trailer"), there("unit")
        l9, l10, l17 = flags["l9"], flags["l10"], flags["l17"]
        l1 = Signal(ring)
        logic.append(l1.eq(~(l9 | l10 | l17)))
        lengths = [(1, l1), (9, l9), (10, l10), (17, l17)]
        # ctrl_before[n]: a ctrl block among the n - 1 blocks after a position.
        ctrl_before = {1: Constant(0, ring)}
        for n in range(2, UNIT_MAX + 1):
            ctrl_before[n] = Signal(ring, name=f"ctrl_before{n}")
            logic.append(ctrl_before[n].eq(ctrl_before[n - 1] | rotated(ctrl, n - 1)))
        ready, broken, tr_after, junk, go = (Signal(ring, name=n) for n in ("ready", "broken", "tr_after", "junk", "go"))
        logic += [
            ready.eq(unit & reduce(or_, [is_n & rotated(present, n - 1) for n, is_n in lengths])),
            broken.eq(unit & reduce(or_, [is_n & ctrl_before[n] for n, is_n in lengths])),
            tr_after.eq(reduce(or_, [is_n & rotated(trailer, n) for n, is_n in lengths])),
            junk.eq(present & ~trailer & (~unit | broken)),
            go.eq(ready & ~broken),
        ]
        # A junk run stops at a ctrl block or at the first block not there; JUNK_MAX when neither comes first.
        consumes = {c: [] for c in range(1, UNIT_MAX + 2)}   # amount: the vectors of the positions taking it
        earlier = Constant(0, ring)
        for k in range(1, JUNK_MAX):
            stop = Signal(ring, name=f"junk_stop{k}")
            logic.append(stop.eq(rotated(ctrl, k) | ~rotated(present, k)))
            consumes[k].append(junk & stop & ~earlier)
            earlier = earlier | stop
        consumes[JUNK_MAX].append(junk & ~earlier)
        consumes[1].append(trailer)
        for n, is_n in lengths:
            consumes[n].append(go & is_n & ~tr_after)
            consumes[n + 1].append(go & is_n & tr_after)
        logic += [bit.eq(reduce(or_, [v for c, vs in consumes.items() if c >> b & 1 for v in vs]))
                  for b, bit in enumerate(self.advance)]
        logic += [
            self.kind["trailer"].eq(trailer),
            self.kind["unit"].eq(go),
            self.kind["unit_trailer"].eq(go & tr_after),
            self.kind["junk"].eq(junk),
        ]
        self.comb += If(enable, *logic)


class CommitFIFO(LiteXModule):
    """FIFO whose entries become readable only when committed; a rollback drops the uncommitted ones.
    With the FIFO empty, an entry written and committed in one cycle may be taken around it (`skip`).

    Two writes a cycle (`sink`, and `sink2` behind it: the two lines of a pair), one read. Entries alternate
    between two memories, so that each takes at most one write a cycle. `depth` is a power of two.
    """
    def __init__(self, layout, depth):
        assert depth >= 4 and depth & (depth - 1) == 0
        self.sink     = sink  = stream.Endpoint(layout)   # tentative writes (never refused; overflow counted)
        self.sink2    = sink2 = stream.Endpoint(layout)   # a second write behind `sink`'s (only with it)
        self.source   = source = stream.Endpoint(layout)
        self.commit   = Signal()   # make everything written so far (including this cycle's writes) readable
        self.rollback = Signal()   # forget the uncommitted entries (this cycle's writes included)
        self.skip     = Signal()   # `sink`'s entry, committed as it is written, was taken around the FIFO
        self.overflow = Signal(32)
        self.committed = Signal(log2_int(depth))   # committed entries not yet read (the one read now among them)

        # # #

        bits  = log2_int(depth)
        banks = [async_memory(self, len(sink.payload.raw_bits()), depth // 2) for _ in range(2)]
        # Pointers count modulo `depth` (their width): wp the next write, cp the first uncommitted, rp the read.
        wp, cp, rp = Signal(bits), Signal(bits), Signal(bits)
        wp2, free, wp_after = Signal(bits), Signal(bits), Signal(bits)
        write1, write2 = Signal(), Signal()
        self.comb += [
            wp2.eq(wp + 1),
            free.eq(rp - wp - 1),
            write1.eq(sink.valid & (free != 0)),
            write2.eq(sink2.valid & write1 & (free >= 2)),
            wp_after.eq(wp + write1 + write2),
            sink.ready.eq(1), sink2.ready.eq(1),
            source.valid.eq(rp != cp),
            self.committed.eq(cp - rp),
            source.payload.raw_bits().eq(Mux(rp[0], banks[1][1].dat_r, banks[0][1].dat_r)),
        ]
        for bank, (wr, rd) in enumerate(banks):
            # wp and wp2 differ in parity: a bank takes one of the two writes at most.
            self.comb += [
                If(wp[0] == bank,
                    wr.adr.eq(wp[1:]), wr.dat_w.eq(sink.payload.raw_bits()), wr.we.eq(write1),
                ).Else(
                    wr.adr.eq(wp2[1:]), wr.dat_w.eq(sink2.payload.raw_bits()), wr.we.eq(write2),
                ),
                rd.adr.eq(rp[1:]),
            ]
        # The losses are counted a cycle late, from registers: the count's adder then waits on no pointer's.
        lost1, lost2 = Signal(), Signal()
        self.sync += [
            lost1.eq(sink.valid & ~write1), lost2.eq(sink2.valid & ~write2),
            self.overflow.eq(self.overflow + lost1 + lost2),
            If(self.rollback, wp.eq(cp)).Else(wp.eq(wp_after)),
            If(self.commit & ~self.rollback, cp.eq(wp_after)),
            If(source.valid & source.ready | self.skip, rp.eq(rp + 1)),
        ]


class CutThrough(Module):
    """The deframer's cut-through: a frame of one unit, or a trailer alone, is checked and ended from its beats
    1 cycle after its last beat, instead of behind the ring's 5 stages (1 cycle).

    Every beat the ring takes (`accept`) is registered here as the ring writes it. While the ring holds
    nothing but frames ended here, and has `room` for another's copy, a beat that starts with a frame starts
    one here: a trailer alone, or a unit of one block with its trailer behind it, is checked at once; a line
    (9 blocks) or a masked line (10) whose first 8 blocks fill the beat waits for the next beat, its CRC so
    far registered (crc(init, the 8 blocks)), and is checked there (the state's part and the next beat's
    blocks up to the trailer's CRC: a CRC is linear). The structure checked is the ring's: no ctrl block inside the unit, the
    trailer right behind it; anything else (a beat that is not the line's rest, a ctrl block out of place)
    is left to the ring. A beat with more behind the frame ended here leaves the rest to the ring too, and
    from then the ring is not clean until it has nothing left (`ring_idle`).

    `end`: a frame is ended, `has_txn` it carries a transaction, for one cycle; then `mismatches` (one bit
    a CRC bit and check: set where the frame's trailer does not hold that bit; none set: its CRC holds),
    `txn_bits` (its transaction, txn_layout's raw bits) and `trailer_field(name)` (its trailer's fields below
    the CRC) are expressions with no signal of their own, for the registers that take them when `end` holds,
    one bit a statement for the CRCs: a simulator works out their CRCs and wide muxes only then. The ring's
    copy of each frame ended here follows, in order, at least 3 cycles later.
    """
    def __init__(self, sink, accept, ring_idle, room):
        self.end     = Signal()
        self.has_txn = Signal()

        # # #

        beat    = [Signal(BLOCK_CTRL + 1, name=f"rxexpress{j}") for j in range(BEAT_BLOCKS)]
        count   = Signal(4)
        valid   = Signal()
        fresh   = Signal()   # the beat came while the ring was clean and nothing waited here: it may start a frame.
        waiting = Signal()   # a line's first beat is here, its rest is the next beat.
        dirty   = Signal()   # the ring holds a frame not ended here.
        flag = [block_flags(b) for b in beat]
        ctrl    = lambda j: flag[j][FLAG["ctrl"]]
        trailer = lambda j: flag[j][FLAG["trailer"]]
        no_ctrl = lambda blocks: ~reduce(or_, [ctrl(j) for j in blocks])
        block   = lambda j: beat[j][:BLOCK_BITS]
        is_unit = fresh & flag[0][FLAG["unit"]]
        l9, l10 = flag[0][FLAG["l9"]], flag[0][FLAG["l10"]]
        l1 = ~(l9 | l10 | flag[0][FLAG["l17"]])

        self.mismatches = []
        def check(when, unit_bits, trailer_block, state=None):
            """When `when`: where the trailer's CRC differs from the one over the unit's bits and its own fields
            below the CRC, a bit each."""
            covered = TRAILER.below(trailer_block, "crc")
            data = Cat(covered, unit_bits) if unit_bits is not None else covered
            field = TRAILER.get(trailer_block, "crc")
            self.mismatches += [when & (bit ^ field[i]) for i, bit in enumerate(crc_bits(data, state=state))]

        # In one beat: a trailer alone, or a unit of one block and its trailer.
        lone, alone = Signal(), Signal()
        self.comb += [
            lone.eq(fresh & trailer(0)),
            alone.eq(is_unit & l1 & (count >= 2) & trailer(1)),
        ]

        # A line's first beat: its CRC so far, its header and first 7 blocks kept for the next.
        first = Signal()
        self.comb += first.eq(is_unit & (l9 | l10) & (count == BEAT_BLOCKS) & no_ctrl(range(1, BEAT_BLOCKS)))
        so_far = crc_bits(Cat(*reversed([block(j) for j in range(BEAT_BLOCKS)])))   # the header first
        state  = Signal(32)
        kept   = [Signal(BLOCK_BITS, name=f"rxexpress_kept{j}") for j in range(BEAT_BLOCKS)]
        masked = Signal()
        # Its rest: the last data block (two for a masked line) and the trailer.
        rest_line, rest_masked = Signal(), Signal()
        self.comb += [
            rest_line.eq(valid & waiting & ~masked & (count >= 2) & ~ctrl(0) & trailer(1)),
            rest_masked.eq(valid & waiting & masked & (count >= 3) & no_ctrl(range(2)) & trailer(2)),
        ]

        # The ring stays clean while every beat is ended here whole (nothing behind its frame).
        whole, dirty_now = Signal(), Signal()
        self.comb += [
            whole.eq(lone & (count == 1) | alone & (count == 2) | first |
                     rest_line & (count == 2) | rest_masked & (count == 3)),
            dirty_now.eq(dirty | valid & ~whole),
        ]
        self.sync += [
            If(accept,
                [b.eq(Cat(sink.data[BLOCK_BITS*j:BLOCK_BITS*(j + 1)], sink.ctrl[j])) for j, b in enumerate(beat)],
                count.eq(sink.count),
            ),
            valid.eq(accept),
            fresh.eq(accept & room & ~dirty_now & ~waiting & ~(valid & first)),
            dirty.eq(dirty_now & ~ring_idle),
            If(valid, waiting.eq(first)),
            If(first, [state[i].eq(bit) for i, bit in enumerate(so_far)], masked.eq(l10),
                [k.eq(block(j)) for j, k in enumerate(kept)]),
        ]

        self.comb += [
            self.end.eq(lone | alone | rest_line | rest_masked),
            self.has_txn.eq(~lone),
        ]
        check(lone, None, block(0))
        check(alone, block(0), block(1))
        check(rest_line, block(0), block(1), state)
        check(rest_masked, Cat(block(1), block(0)), block(2), state)
        # The frame's syndrome (its mismatches, whichever check it had) and length, for the repair's locator.
        self.syndrome = [reduce(or_, self.mismatches[i::32]) for i in range(32)]
        self.frame_blocks = Mux(lone, 1, Mux(alone, 2, Mux(rest_line, 10, 11)))
        self.trailer_field = lambda name: Mux(lone, TRAILER.get(block(0), name),
                                              Mux(alone | ~masked, TRAILER.get(block(1), name),
                                                  TRAILER.get(block(2), name)))
        header = lambda name: Mux(waiting, HEADER.get(kept[0], name), HEADER.get(block(0), name))
        self.txn_bits = layout_bits(txn_layout,
            type=header("type"), tag=header("tag"), laddr=header("laddr"),
            mask=Mux(waiting & masked, MASK.get(kept[1], "enables"), FULL_MASK),
            data=Mux(alone, 0, Mux(masked, Cat(*kept[2:], block(0), block(1)), Cat(*kept[1:], block(0)))),
        )


class PackedDeframer(LiteXModule):
    """Beats in, transactions out once their frame's trailer checks (a unit, plus its trailer, a cycle; a
    pair's two lines at once).

    Latency: 2 cycles after the trailer's beat for a frame of one unit, or a trailer alone, that comes while
    the ring holds nothing else, through the cut-through (CutThrough: the beat registered, the frame checked
    and ended in the registers of stage 5, whose transaction goes around the empty commit FIFO in the cycle
    its frame commits, or waits in it if not taken then); otherwise 6, each stage a register that a board at
    250 MHz needs:
      1. the beat is written into a ring of blocks;
      2. every position of the ring gets its decision: what a head there would consume and how (a trailer,
         a unit with or without its trailer, a run of junk, or nothing yet);
      3. the head takes its position's decision and moves on; its blocks are read out beside it;
      4. the unit's fields and the data parts of its CRC and of its trailer's are registered (a CRC is
         linear: crc(state, data) = crc(state, 0) ^ crc(0, data));
      5. the running CRC takes the unit and the trailer is checked; the verdict is registered;
      6. the checker sees it and the frame's transactions are committed (or dropped).
    The head's loop is its position's decision and an add; no CRC is in it. Every beat goes through the ring,
    also those the cut-through ends: the ring's copy of a frame ended there is counted off (`copies`) and
    changes nothing but the ring's own state, so that the ring's view of where frames start never depends on
    the cut-through.

    A frame whose CRC fails or whose blocks make no sense is dropped whole and counted. Junk (a block at
    the head that starts neither a unit nor a trailer: a damaged header, an unknown type, the data behind
    either; or a unit cut short by a ctrl block among its blocks) is skipped up to the next ctrl block, up to
    9 blocks a cycle, faster than beats arrive, so a damaged frame at full rate costs only itself.

    At a frame's end (`frame_end`) it shows the frame's check (`frame_ok`), its trailer's fields and its
    transaction count; the frame is delivered only if `seq_ok` (the sequence checker's verdict) holds too.

    A frame that fails its CRC with nothing else wrong (no junk in it) has its syndrome and length passed to a
    SyndromeLocator (link/repair.py) beside the transactions' path, a cycle after its end: `repairable` counts
    those whose syndrome names one flipped bit inside them, the frames a repair from the CRC alone can keep
    (`locator.missed`: those that found its queue full). The frame is dropped here as any other; a
    FrameRepair (`repair`, link/repair.py), once enabled, keeps a copy of its transactions and puts the bit
    right, and the link's sequence checker and ReorderStore take it from there. A repaired frame's ack and nak
    come out as a good trailer's do (`frame_ack`, `frame_nak`), in a cycle that ends no frame, with
    `repaired_trailer` instead of `frame_end`.

    Depth: the framer builds at most one unit (or a lone trailer) a cycle and the deframer takes one a
    cycle, with the trailer behind it. Beats bring more only while the framer's buffer (32 blocks) empties
    onto the link, so the backlog stays within that buffer, a unit, a beat and the beat that arrives while
    the decisions are made (65 blocks). A beat is taken if it fits beside what the ring held before the
    head's last move (up to 18 blocks more than it holds), so `depth` (96) holds that backlog with room to
    spare. `overflow` counts beats that found no room (a deframer built too shallow; the frames they
    belonged to fail the CRC and are replayed).

    Transactions of a frame wait in the commit FIFO (`commit_depth` - 1 of them at most) for its trailer
    and then for `source`; the link cannot be held, so one that finds the FIFO full is lost, and
    `commit_overflow` counts it. Only a consumer that stops taking while more than that many transactions
    are on their way fills it; the cards' consumers never stop (the memory card's input FIFO holds every
    request the requester's tags allow, memcard/core.py).
    """
    def __init__(self, depth=96, commit_depth=64):
        self.sink   = sink   = stream.Endpoint(beat_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.frames     = Signal(32)
        self.crc_errors = Signal(32)
        self.repairable = Signal(32)   # of them, frames whose syndrome names one flipped bit inside them
        self.overflow   = Signal(32)
        self.frame_end  = Signal()
        self.frame_ok   = Signal()
        self.frame_seq  = Signal(SEQ_BITS)
        self.frame_ack  = Signal(SEQ_BITS)
        self.frame_nak  = Signal()
        self.frame_credits = Signal(CREDIT_BITS)
        self.frame_txns = Signal(6)
        self.repaired_trailer = Signal()   # frame_ack and frame_nak hold a repaired frame's (link/repair.py)
        self.seq_ok     = Signal(reset=1)
        self.seq_direct = Signal(reset=1)   # the frame may go around the commit FIFO (selective repeat: in sequence)

        # # #

        # The ring: `ring` positions (a power of two); the blocks in BEAT_BLOCKS banks of LUT RAM (position p
        # in bank p % 8, row p // 8), so that a beat writes each bank once and the head's 18 blocks are in four
        # rows of every bank; each position's FLAG bits in registers, for the decisions. It holds at most
        # `depth` blocks, and `ring` leaves a unit and its trailer of room beyond them, so that a decision
        # never takes a block written a lap ago for one behind it.
        pos_bits = (depth + UNIT_MAX + 1).bit_length()
        ring     = 2**pos_bits
        rows     = ring // BEAT_BLOCKS
        wp = Signal(pos_bits)   # the next position written
        rp = Signal(pos_bits)   # the head
        flags   = {name: Signal(ring, name=f"rx_{name}") for name in FLAG}   # bit p: position p's flag
        present = Signal(ring)   # bit p: position p is among the last `depth` written

        # 1. The beat goes behind the last block, if it fits. Whether it fits is asked of `used`: what the ring
        # held after the last cycle's head moved, with the last beat; never less than it holds (the head
        # only moves on), and a register, so that whether a beat of each count fits is known before the beat
        # comes, which picks its answer.
        sink_blocks = [sink.data[BLOCK_BITS*j:BLOCK_BITS*(j+1)] for j in range(BEAT_BLOCKS)]
        sink_flags  = [Signal(FLAG_BITS, name=f"rxsinkflags{j}") for j in range(BEAT_BLOCKS)]
        self.comb += [sink_flags[j].eq(block_flags(Cat(block, sink.ctrl[j]))) for j, block in enumerate(sink_blocks)]
        # The sums with the beat are made beside the decision, which picks one of them last.
        used   = Signal(pos_bits)
        held   = Signal(pos_bits)
        accept = Signal()
        refused = Signal()   # a beat found no room (last cycle)
        wp_on, held_on = Signal(pos_bits), Signal(pos_bits)
        self.comb += [
            sink.ready.eq(1),
            held.eq(wp - rp),
            accept.eq(sink.valid & Array(used <= depth - c for c in range(BEAT_BLOCKS + 1))[sink.count]),
            wp_on.eq(wp + sink.count),
            held_on.eq(held + sink.count),
        ]
        self.sync += [
            wp.eq(Mux(accept, wp_on, wp)),
            used.eq(Mux(accept, held_on, held)),
            # Counted a cycle late, from a register: the count's adder then waits on no room check.
            refused.eq(sink.valid & ~accept),
            If(refused, self.overflow.eq(self.overflow + 1)),
        ]
        banks = []
        bank_flags = []
        for b in range(BEAT_BLOCKS):
            mem = Memory(BLOCK_BITS, rows)
            wr  = mem.get_port(write_capable=True)
            rds = [mem.get_port(async_read=True) for _ in range(HEAD_ROWS)]
            self.specials += mem, wr, *rds
            banks.append(rds)
            # Bank b takes the beat's block (b - wp) % 8, in the row where that position falls.
            j      = Signal(3, name=f"rxbank{b}_block")
            bflags = Signal(FLAG_BITS, name=f"rxbank{b}_flags")
            bank_flags.append(bflags)
            self.comb += [
                j.eq(b - wp[:3]),
                wr.adr.eq(wp[3:] + (b < wp[:3])), wr.we.eq(accept & (j < sink.count)),
                wr.dat_w.eq(Array(sink_blocks)[j]),
                bflags.eq(Array(sink_flags)[j]),
            ]
        # Position p is written when its offset from the next position written, p - wp modulo the ring, is below
        # the beat's count. The offset is an expression in a comb If's branch, so that a simulator works it out
        # only when a beat is taken: Verilog sizes `p - wp` to the compare's widest operand, wp's pos_bits, so
        # the difference wraps modulo the ring as a pos_bits signal would.
        assert len(wp) == pos_bits > len(sink.count)
        written = Signal(ring)
        self.comb += If(accept, [written[p].eq((Constant(p, pos_bits) - wp) < sink.count) for p in range(ring)])
        # A position is present while it is among the last `depth` written: from when the beat writes it until
        # the ring's writes have gone `depth` positions past it.
        for name, bit in FLAG.items():
            # Position p takes its flag from bank p % 8: one row's worth of banks, repeated over the rows.
            arriving = Replicate(Cat(*[bank_flags[b][bit] for b in range(BEAT_BLOCKS)]), rows)
            self.sync += flags[name].eq(written & arriving | ~written & flags[name])
        self.sync += present.eq(written | (present & ~rotated(written, depth)))

        # 2. Each position's decision, from registers only. The flags and presence change only in the cycle after
        # a beat is taken (`changed`), and the decisions with them: they are taken then, and kept otherwise.
        changed = Signal()
        self.sync += changed.eq(accept)
        self.decisions = decisions = HeadDecisions(flags, present, enable=changed)
        advance = [Signal(ring, name=f"rxadvance{b}") for b in range(5)]
        kinds   = {name: Signal(ring, name=f"rxkind_{name}") for name in KIND}
        self.sync += If(changed,
            [a.eq(d) for a, d in zip(advance, decisions.advance)],
            [kinds[name].eq(decisions.kind[name]) for name in KIND],
        )

        # 3. The head takes its position's decision; its blocks are read out beside it (block j of the head
        # is bank (rp + j) % 8 at row (rp + j) // 8).
        kind, next_kind = Signal(len(KIND)), Signal(len(KIND))
        at = lambda vectors: Array(Cat(*[v[p] for v in vectors]) for p in range(ring))[rp]
        self.comb += next_kind.eq(at([kinds[name] for name in KIND]))
        self.sync += [rp.eq(rp + at(advance)), kind.eq(next_kind)]
        for rds in banks:
            for m, rd in enumerate(rds):
                self.comb += rd.adr.eq(rp[3:] + m)
        read   = [banks[q % BEAT_BLOCKS][q // BEAT_BLOCKS].dat_r for q in range(HEAD_ROWS*BEAT_BLOCKS)]
        # Only a head's blocks are read out: stage 4 reads them behind a head alone (`kind`).
        blocks = [Signal(BLOCK_BITS, name=f"rxblock{j}") for j in range(UNIT_MAX + 1)]
        self.sync += If(next_kind != 0,
            [blocks[j].eq(Array(read[j:j + BEAT_BLOCKS])[rp[:3]]) for j in range(UNIT_MAX + 1)])

        # 4. The unit's transactions, and the data parts of its CRC (for each length it can have) and of its
        # trailer's (the head for a trailer alone, else the block behind the unit).
        head   = blocks[0]
        h_type = HEADER.get(head, "type")
        masked = HEADER.get(head, "has_mask")
        line   = carries_line(h_type)
        is_len = length_classes(head)
        paired = is_len[LENGTHS.index(UNIT_MAX)]
        # The unit's transactions (a pair's second line behind the first) are expressions that only stage 4's
        # registers take, behind a head, and its trailer is chosen in a comb If's branch behind a head: a simulator
        # works them out then alone.
        txn1 = layout_bits(txn_layout, type=h_type, tag=HEADER.get(head, "tag"), laddr=HEADER.get(head, "laddr"),
                           mask=Mux(masked, MASK.get(blocks[1], "enables"), FULL_MASK),
                           data=Mux(line, Mux(masked, Cat(*blocks[2:10]), Cat(*blocks[1:9])), 0))
        txn2 = layout_bits(txn_layout, type=h_type, tag=HEADER.get(head, "tag2"),
                           laddr=plus_one(HEADER.get(head, "laddr")), mask=Constant(FULL_MASK, LINE_BYTES),
                           data=Cat(*blocks[9:17]))
        trailer = Signal(BLOCK_BITS)
        self.comb += If(kind != 0,
            If(kind[KIND["trailer"]], trailer.eq(head)),
            [If(~kind[KIND["trailer"]] & this_len, trailer.eq(blocks[n])) for n, this_len in zip(LENGTHS, is_len)],
        )
        low_bits = TRAILER["crc"].offset
        u_kind   = Signal(len(KIND))
        u_len    = Signal(len(LENGTHS))
        u_paired = Signal()
        u_part   = Signal(32)
        u_expect = Signal(32)   # the trailer's CRC field, less the data part of the trailer's own bits
        u_low    = Signal(low_bits)
        u_txn1, u_txn2 = Record(txn_layout), Record(txn_layout)
        # The CRC parts are expressions that only these registers take (crc_bits): worked out in a cycle that
        # has a head (`kind`), for its length alone. Without a head the registers keep what they had: stage 5
        # reads them only behind a head (`u_kind`).
        self.sync += [
            u_kind.eq(kind), u_len.eq(Cat(*is_len)), u_paired.eq(paired),
            If(kind != 0,
                [If(this_len, [u_part[i].eq(bit) for i, bit in enumerate(crc_data_part(Cat(*reversed(blocks[:n]))))])
                 for n, this_len in zip(LENGTHS, is_len)],
                u_expect.eq(TRAILER.get(trailer, "crc") ^ Cat(*crc_data_part(TRAILER.below(trailer, "crc")))),
                u_low.eq(TRAILER.below(trailer, "crc")),
                u_txn1.raw_bits().eq(txn1), u_txn2.raw_bits().eq(txn2),
            ),
        ]

        # 5. The running CRC takes the unit, state' = A_n.state ^ part for a unit of n blocks (A_k: the state's
        # part over k bits), and the trailer checks if A_t.state' (t: the trailer's bits below its CRC) is
        # what it expects. A_t.A_n.state and A_t.part are made side by side, so the check is a compare behind.
        state = Signal(32, reset=CRC_INIT)
        bad   = Signal()   # the open frame already failed: skip to its trailer.
        self.running = running = RunningCRC()
        self.comb += [running.state.eq(state), running.part.eq(u_part), running.cls.eq(u_len),
                      running.with_unit.eq(u_kind[KIND["unit"]]), running.active.eq(u_kind != 0)]
        end_frame = Signal()
        good      = Signal()
        take      = Signal()
        pushed    = Signal(5)
        unit_blocks  = Signal(max=UNIT_MAX + 1)   # the blocks of the unit taken
        frame_blocks = Signal(FRAME_BLOCKS_BITS)   # of the units of the open frame taken before
        self.comb += [
            end_frame.eq(u_kind[KIND["trailer"]] | u_kind[KIND["unit_trailer"]]),
            good.eq(~bad & (running.trailer_state == u_expect)),
            take.eq(u_kind[KIND["unit"]] & ~bad),
            unit_blocks.eq(reduce(or_, [Mux(this_len, n, 0) for n, this_len in zip(LENGTHS, u_len)])),
        ]
        # The cut-through (CutThrough, above) ends frames in stage 5's registers itself, 3 cycles after their last
        # beat; the ring's copies of them (`copies` to come) then change nothing but the ring's own state.
        copies  = Signal(max=COPIES_MAX + 1)
        self.express = express = CutThrough(sink, accept, ring_idle=(wp == rp) & (kind == 0) & (u_kind == 0) &
                                            (pushed == 0) & ~bad, room=copies < COPIES_MAX)
        visible = Signal()   # the ring's frame end, or a unit it takes, counts.
        self.comb += visible.eq(copies == 0)
        write1, write2 = Signal(), Signal()
        out1, out2 = Record(txn_layout), Record(txn_layout)
        out_unit_at     = Signal(FRAME_BLOCKS_BITS)   # where the unit of out1 (and out2) starts in its frame
        out_unit_blocks = Signal(UNIT_LENGTH_BITS)    # ... and its blocks
        express_out = Signal()   # stage 5's registers hold a transaction the cut-through ended.
        trailer_of = lambda field: Mux(express.end, express.trailer_field(field), TRAILER.get(u_low, field))
        ending = Signal()   # a frame is ended: stage 5 registers its end
        self.repair = repair = FrameRepair()
        # A repaired frame's ack and nak go out in a cycle that ends no frame, as a good trailer's would.
        self.comb += [
            ending.eq(express.end | end_frame & visible),
            repair.trailer_taken.eq(repair.trailer_valid & ~ending),
        ]
        self.sync += [
            self.repaired_trailer.eq(repair.trailer_taken),
            self.frame_ack.eq(Mux(ending, trailer_of("ack"), repair.trailer_ack)),
            self.frame_nak.eq(Mux(ending, trailer_of("nak"), repair.trailer_nak)),
        ]
        self.sync += [
            self.frame_end.eq(ending),
            self.frame_ok.eq(express.end | good),
            If(express.end, [If(mismatch, self.frame_ok.eq(0)) for mismatch in express.mismatches]),
            self.frame_seq.eq(trailer_of("seq")),
            self.frame_credits.eq(trailer_of("credits")),
            self.frame_txns.eq(Mux(express.end, express.has_txn, pushed + take + (take & u_paired))),
            write1.eq(express.end & express.has_txn | take & visible), write2.eq(take & u_paired & visible),
            express_out.eq(express.end & express.has_txn),
            out1.raw_bits().eq(Mux(express.end, express.txn_bits, u_txn1.raw_bits())),
            out2.raw_bits().eq(u_txn2.raw_bits()),
            out_unit_at.eq(Mux(express.end, 0, frame_blocks)),
            out_unit_blocks.eq(Mux(express.end, express.frame_blocks - 1, unit_blocks)),
            If(end_frame,
                state.eq(CRC_INIT), bad.eq(0), pushed.eq(0), frame_blocks.eq(0),
            ).Else(
                If(take, state.eq(running.unit_state), frame_blocks.eq(frame_blocks + unit_blocks)),
                If(u_kind[KIND["junk"]], bad.eq(1)),
                pushed.eq(pushed + take + (take & u_paired)),
            ),
            copies.eq(copies + express.end - (end_frame & ~visible)),
            # Each frame ended, the ring's or the cut-through's, counted a cycle after its end.
            If(self.frame_end,
                self.frames.eq(self.frames + 1),
                If(~self.frame_ok, self.crc_errors.eq(self.crc_errors + 1)),
            ),
        ]

        # A frame that failed its CRC whole (no junk in it) goes to the locator, off the transactions' path: its
        # syndrome and length registered beside its end, the locator takes them the cycle after.
        self.locator = locator = SyndromeLocator(blocks_per_cycle=LOCATOR_BLOCKS_PER_CYCLE)
        syndrome   = Signal(32)
        length     = Signal(FRAME_BLOCKS_BITS)
        well_built = Signal()
        self.sync += [
            If(express.end,
                # One bit a statement: the mismatches are CRC expressions (crc_bits), too long for one line.
                [syndrome[i].eq(bit) for i, bit in enumerate(express.syndrome)],
                length.eq(express.frame_blocks), well_built.eq(1),
            ).Elif(end_frame,
                syndrome.eq(running.trailer_state ^ u_expect),
                length.eq(frame_blocks + Mux(take, unit_blocks, 0) + 1), well_built.eq(~bad),
            ),
            If(locator.source.valid & locator.source.found, self.repairable.eq(self.repairable + 1)),
        ]
        self.comb += [
            locator.sink.valid.eq(self.frame_end & ~self.frame_ok & well_built),
            locator.sink.syndrome.eq(syndrome), locator.sink.blocks.eq(length), locator.sink.tag.eq(repair.park),
            locator.source.connect(repair.located),
            # The frame's transactions, and its end, for the repair (link/repair.py's FrameRepair).
            repair.write1.eq(write1), repair.txn1.eq(out1.raw_bits()),
            repair.write2.eq(write2), repair.txn2.eq(out2.raw_bits()),
            repair.unit_at.eq(out_unit_at), repair.unit_blocks.eq(out_unit_blocks),
            repair.frame_end.eq(self.frame_end), repair.failed.eq(~self.frame_ok & well_built),
            repair.locator_ready.eq(locator.sink.ready), repair.frame_blocks.eq(length),
            repair.frame_seq.eq(self.frame_seq), repair.frame_ack.eq(self.frame_ack),
            repair.frame_nak.eq(self.frame_nak), repair.frame_txns.eq(self.frame_txns),
        ]

        # Transactions wait in the commit FIFO until their trailer checks; the cut-through's goes around it when
        # it is empty, in the cycle its frame is committed.
        self.fifo = fifo = CommitFIFO(txn_layout, commit_depth)
        self.commit_overflow = fifo.overflow
        commit, around = Signal(), Signal()
        self.comb += [
            commit.eq(self.frame_end & self.frame_ok & self.seq_ok),
            around.eq(express_out & commit & self.seq_direct & ~fifo.source.valid),
            fifo.sink.valid.eq(write1), fifo.sink.payload.raw_bits().eq(out1.raw_bits()),
            fifo.sink2.valid.eq(write2), fifo.sink2.payload.raw_bits().eq(out2.raw_bits()),
            fifo.commit.eq(commit),
            fifo.rollback.eq(self.frame_end & ~(self.frame_ok & self.seq_ok)),
            fifo.skip.eq(around & source.ready),
            source.valid.eq(fifo.source.valid | around),
            source.payload.raw_bits().eq(Mux(fifo.source.valid, fifo.source.payload.raw_bits(), out1.raw_bits())),
            fifo.source.ready.eq(source.ready),
        ]
