#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Packed link framing: several transactions share one CRC-32 trailer, and frames are packed back to back
into beats of 8 blocks.

The wire format (frames of units and a trailer, in 64-bit blocks; the ctrl flag stands for the 64b/66b
sync header) is the field tables of wire.py: the framer packs headers and trailers with them and the
deframer reads them back with them (doc/wire-format.md is generated from the same tables).

Under load a frame carries up to `max_units` units and beats are always full. Two full-line writes (or
read responses) to consecutive lines that meet in the framer share one header, as a 128 B burst does: a
sequential 64 B stream costs 8.5 blocks a line plus 1/(2 max_units) of a trailer, a random one 9 blocks
plus 1/max_units. When nothing more is queued the frame closes at once and a partial beat leaves, so a
lone read request is 2 blocks and never waits for company.
"""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.crc import ParallelCRC
from monet.cores.common.csr import async_memory
from monet.cores.common.layouts import *
from monet.cores.link.wire import HEADER, MASK, TRAILER

UNIT_MAX   = 17   # a pair: header + 16 data blocks (a masked line is header + mask + 8).
LENGTHS    = (1, 9, 10, 17)
JUNK_MAX   = BEAT_BLOCKS + 1   # junk blocks a deframer cycle can skip: more than a beat brings.
# Blocks a deframer cycle can consume: a trailer, a unit with or without its trailer, or a run of junk.
CONSUMED   = sorted(set(range(JUNK_MAX + 1)) | {n + t for n in LENGTHS for t in (0, 1)})
BLOCK_CTRL = BLOCK_BITS   # a block in a buffer: its data bits, then the ctrl flag at this bit.
CRC_INIT   = 0xFFFFFFFF
FULL_MASK  = 2**LINE_BYTES - 1


def unit_length(frame_type, masked, paired):
    """Blocks of a unit: 1 without data, 9 with a line, 10 with a line and a mask, 17 with two lines."""
    return Mux(carries_line(frame_type), Mux(masked, 10, Mux(paired, 17, 9)), 1)


def trailer_covered(seq, ack, nak, credits):
    """The bits of a trailer that its own CRC covers: every field below the CRC."""
    return TRAILER.below(TRAILER.pack(type=T_TRAILER, seq=seq, ack=ack, nak=nak, credits=credits), "crc")


class UnitCRC(Module):
    """Running CRC over one unit of `length` blocks (block 0 first), from `state` (0 cycles).

    A chain of engines in the unit's order: header block, mask block (masked lines only), first line,
    second line (pairs only); a missing part passes the state through. Exact, since a CRC is sequential,
    and about half the logic of one engine per unit length.
    """
    def __init__(self, blocks, length):
        self.state = Signal(32)
        self.crc   = Signal(32)
        has_mask = Signal()
        self.comb += has_mask.eq(length == 10)
        header, mask, line1, line2 = [ParallelCRC(width, with_state=True)
                                       for width in (BLOCK_BITS, BLOCK_BITS, LINE_BITS, LINE_BITS)]
        self.submodules += header, mask, line1, line2
        self.comb += [
            header.state.eq(self.state),
            header.data.eq(blocks[0]),
            mask.state.eq(header.crc),
            mask.data.eq(blocks[1]),
            line1.state.eq(Mux(has_mask, mask.crc, header.crc)),
            line1.data.eq(Mux(has_mask, Cat(*reversed(blocks[2:10])), Cat(*reversed(blocks[1:9])))),
            line2.state.eq(line1.crc),
            line2.data.eq(Cat(*reversed(blocks[9:17]))),
            self.crc.eq(Mux(length == 1, header.crc, Mux(length == 17, line2.crc, line1.crc))),
        ]


class PackedFramer(LiteXModule):
    """Transactions in, full beats out (partial only when the queue is empty and the frame closed).

    Latency: 2 cycles from a transaction to the beat that carries its header (unit register, buffer).
    A frame left open by a pair with nothing behind it gets its trailer on its own the next cycle.

    Run time: `max_units` (1..8) bounds the units of a frame, `pairing` allows pairs; max_units=1 without
    pairing gives one frame per transaction, as a per-transaction streamer over Aurora sends them.

    Sequence numbers come with the transactions (from the retry buffer): a frame holds consecutive ones,
    so a unit that does not follow the open frame (a replay began) closes it first. Every trailer carries
    `ack` and `nak`; `ctrl_request` sends a trailer alone when nothing else is going out.
    """
    def __init__(self, max_units=8, depth=32):
        assert depth >= UNIT_MAX + 1 + BEAT_BLOCKS
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

        # # #

        # Unit register: one transaction, so that the next one (on sink) is visible when deciding to pair
        # with it or to close the frame.
        u_valid = Signal()
        u       = Record(seq_txn_layout)
        u_take  = Signal()
        paired  = Signal()
        self.comb += sink.ready.eq(~u_valid | u_take)
        self.sync += [
            If(u_take, u_valid.eq(0)),
            If(sink.valid & sink.ready & ~paired, u_valid.eq(1), u.raw_bits().eq(sink.payload.raw_bits())),
        ]
        masked     = Signal()
        length     = Signal(5)
        next_laddr = Signal(LADDR_BITS)
        u_seq1     = Signal(SEQ_BITS)
        self.comb += [
            masked.eq((u.type == T_WR_REQ) & (u.mask != FULL_MASK)),
            next_laddr.eq(u.laddr + 1),
            u_seq1.eq(u.seq + 1),
            paired.eq(self.pairing & u_valid & sink.valid & carries_line(u.type) & ~masked & (sink.type == u.type) &
                      ((sink.type != T_WR_REQ) | (sink.mask == FULL_MASK)) & (sink.laddr == next_laddr) &
                      (sink.seq == u_seq1)),
            length.eq(unit_length(u.type, masked, paired)),
        ]
        data_u = [u.data[BLOCK_BITS*i:BLOCK_BITS*(i+1)] for i in range(8)]
        data_s = [sink.data[BLOCK_BITS*i:BLOCK_BITS*(i+1)] for i in range(8)]
        unit = [Signal(BLOCK_BITS, name=f"unit{i}") for i in range(UNIT_MAX)]
        self.comb += unit[0].eq(HEADER.pack(type=u.type, tag=u.tag, laddr=u.laddr, has_mask=masked, pair=paired,
                                            tag2=Mux(paired, sink.tag, 0)))
        for i in range(1, UNIT_MAX):
            with_mask  = ([u.mask] + data_u + [0]*8)[i - 1]
            single     = (data_u + [0]*9)[i - 1]
            self.comb += unit[i].eq(Mux(masked, with_mask, Mux(paired, (data_u + data_s)[i - 1], single)))

        # Running CRC of the open frame, and whether this unit closes it (or a late trailer does).
        self.crc = crc = UnitCRC(unit, length)
        state  = Signal(32, reset=CRC_INIT)
        units  = Signal(4)
        units1 = Signal(5)
        closed = Signal(reset=1)
        close  = Signal()
        first_seq = Signal(SEQ_BITS)   # of the open frame's first transaction.
        next_seq  = Signal(SEQ_BITS)   # the one the open frame may take next.
        broken    = Signal()   # the unit does not follow the open frame: close it first.
        unit_go   = Signal()   # the unit goes into the open (or a new) frame.
        late      = Signal()   # open frame, nothing queued or a replay behind it: send its trailer alone.
        control   = Signal()   # no frame open, nothing queued, ack or nak waiting: a control frame.
        lone      = Signal()   # a trailer alone.
        self.comb += [
            crc.state.eq(state),
            units1.eq(units + 1),
            close.eq((units1 >= self.max_units) | ~sink.valid),
            broken.eq(u_valid & ~closed & (u.seq != next_seq)),
            unit_go.eq(u_valid & ~broken),
            late.eq(~closed & ((~u_valid & ~sink.valid) | broken)),
            control.eq(closed & ~u_valid & ~sink.valid & self.ctrl_request),
            lone.eq(late | control),
        ]
        # The trailer's CRC runs on over the trailer's own fields below it.
        low = Signal(TRAILER["crc"].offset)
        self.trailer_crc = trailer_crc = ParallelCRC(len(low), with_state=True)
        self.comb += [
            low.eq(trailer_covered(Mux(closed, u.seq, first_seq), self.ack, self.nak, self.credits)),
            trailer_crc.state.eq(Mux(unit_go, crc.crc, state)),
            trailer_crc.data.eq(low),
        ]
        trailer = Signal(BLOCK_BITS)
        self.comb += [TRAILER.below(trailer, "crc").eq(low), TRAILER.get(trailer, "crc").eq(trailer_crc.crc)]

        # Appended blocks this cycle: the unit (none for a late trailer), then the trailer if the frame closes.
        add_len = Signal(5)
        add_unit = Signal(5)
        add = Array(Signal(BLOCK_CTRL + 1, name=f"add{i}") for i in range(UNIT_MAX + 1))
        self.comb += [
            add_unit.eq(Mux(unit_go, length, 0)),
            add_len.eq(Mux(unit_go, length + close, lone)),
        ]
        for i in range(UNIT_MAX + 1):
            blk = unit[i] if i < UNIT_MAX else 0
            self.comb += add[i].eq(Mux(i < add_unit, Cat(blk, i == 0), Cat(trailer, 1)))

        # Block buffer and its level; `closed` when the buffer ends on a frame boundary.
        buf    = Array(Signal(BLOCK_CTRL + 1, name=f"txbuf{i}") for i in range(depth + 8))
        level  = Signal(max=depth + 1)
        out_n  = Signal(4)
        keep   = Signal(max=depth + 1)
        # Verilog compares a sum at the width of its widest operand, dropping the carry that Migen's simulator
        # keeps: sums go through signals wide enough to hold them before they are compared.
        after  = Signal(max=depth + UNIT_MAX + 2)
        room   = Signal()
        append = Signal()
        self.comb += [
            # Full beats whenever possible; a partial one only when nothing is about to join it.
            If(level >= 8,
                out_n.eq(8)
            ).Elif(closed & ~u_valid & (level != 0),
                out_n.eq(level)
            ),
            source.valid.eq(out_n != 0),
            source.count.eq(out_n),
            source.data.eq(Cat(*[buf[i][:BLOCK_BITS] for i in range(8)])),
            source.ctrl.eq(Cat(*[buf[i][BLOCK_CTRL] for i in range(8)])),
            keep.eq(level - Mux(source.valid & source.ready, out_n, 0)),
            after.eq(keep + add_len),
            room.eq(after <= depth),
            u_take.eq(unit_go & room),
            append.eq(room & (unit_go | lone)),
            self.ctrl_sent.eq(append & (lone | close)),
        ]
        # Each entry takes the one `shift` places behind it (0..8: the beat that left) or an appended block.
        # Spelled as a case on the few shifts that occur, not an index into the whole buffer: a 9-way choice
        # per entry instead of a buffer-wide one (with the deframer's, the sim model runs a quarter faster).
        shift = Signal(4)
        self.comb += shift.eq(Mux(source.valid & source.ready, out_n, 0))
        for i in range(depth):
            kept = Signal(BLOCK_CTRL + 1, name=f"txkept{i}")
            self.comb += Case(shift, {n: kept.eq(buf[i + n]) for n in range(BEAT_BLOCKS + 1)})
            self.sync += buf[i].eq(Mux(i < keep, kept, add[i - keep]))
        self.sync += [
            level.eq(keep + Mux(append, add_len, 0)),
            If(append,
                If(lone | close,
                    state.eq(CRC_INIT), units.eq(0), closed.eq(1), self.frames.eq(self.frames + 1)
                ).Else(
                    state.eq(crc.crc), units.eq(units + 1), closed.eq(0)
                )
            ),
            If(u_take,
                If(closed, first_seq.eq(u.seq)),
                next_seq.eq(Mux(paired, u_seq1 + 1, u_seq1)),
            ),
            If(u_take & paired, self.pairs.eq(self.pairs + 1)),
        ]


class CommitFIFO(LiteXModule):
    """FIFO whose entries become readable only when committed; a rollback drops the uncommitted ones.

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
        self.overflow = Signal(32)

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
        self.sync += [
            self.overflow.eq(self.overflow + (sink.valid & ~write1) + (sink2.valid & ~write2)),
            If(self.rollback, wp.eq(cp)).Else(wp.eq(wp_after)),
            If(self.commit & ~self.rollback, cp.eq(wp_after)),
            If(source.valid & source.ready, rp.eq(rp + 1)),
        ]


class PackedDeframer(LiteXModule):
    """Beats in, transactions out once their frame's trailer checks (a unit, plus its trailer, a cycle; a
    pair's two lines at once).

    Latency: 2 cycles after the trailer's beat (block buffer, commit). A frame whose CRC fails or whose
    blocks make no sense is dropped whole and counted. Junk (a block at the head that starts neither a unit
    nor a trailer: a damaged header, an unknown type, the data behind either; or a unit cut short by a ctrl
    block among its blocks) is skipped up to the next ctrl block, up to 9 blocks a cycle, faster than beats
    arrive, so a damaged frame at full rate costs only itself.

    At a frame's end (`frame_end`) it shows the frame's check (`frame_ok`), its trailer's fields and its
    transaction count; the frame is delivered only if `seq_ok` (the sequence checker's verdict) holds too.

    Depth: the framer builds at most one unit (or a lone trailer) a cycle and the deframer takes one a
    cycle, with the trailer behind it. Beats bring more only while the framer's buffer (32 blocks) empties
    onto the link, so the backlog stays within that buffer, a unit and a beat (57 blocks): 64 hold it.
    `overflow` counts beats that found no room (a deframer built too shallow; the frames they belonged to
    fail the CRC and are replayed). (When a pair took two cycles, pairs with single-block units between
    them, as mixed reads and writes of consecutive lines bring, outran the deframer at any depth.)
    """
    def __init__(self, depth=64, commit_depth=64):
        self.sink   = sink   = stream.Endpoint(beat_layout)
        self.source = source = stream.Endpoint(txn_layout)
        self.frames     = Signal(32)
        self.crc_errors = Signal(32)
        self.overflow   = Signal(32)
        self.frame_end  = Signal()
        self.frame_ok   = Signal()
        self.frame_seq  = Signal(SEQ_BITS)
        self.frame_ack  = Signal(SEQ_BITS)
        self.frame_nak  = Signal()
        self.frame_credits = Signal(CREDIT_BITS)
        self.frame_txns = Signal(6)
        self.seq_ok     = Signal(reset=1)

        # # #

        buf   = Array(Signal(BLOCK_CTRL + 1, name=f"rxbuf{i}") for i in range(depth + UNIT_MAX + 1))
        self.level = level = Signal(max=depth + 1)

        # Parse the head of the buffer.
        head    = buf[0]
        h_type  = HEADER.get(head, "type")
        h_ctrl  = head[BLOCK_CTRL]
        masked  = HEADER.get(head, "has_mask")
        paired  = Signal()
        length  = Signal(5)
        self.comb += [
            paired.eq(HEADER.get(head, "pair") & carries_line(h_type) & ~masked),
            length.eq(unit_length(h_type, masked, paired)),
        ]
        blocks = [buf[i][:BLOCK_BITS] for i in range(UNIT_MAX)]
        self.crc = crc = UnitCRC(blocks, length)
        state    = Signal(32, reset=CRC_INIT)
        bad      = Signal()   # the open frame already failed: skip to its trailer.
        self.comb += crc.state.eq(state)

        is_trailer = Signal()
        is_unit    = Signal()
        unit_ready = Signal()
        tr_after   = Signal()   # the unit's trailer is right behind it.
        tr_block   = Signal(BLOCK_CTRL + 1)
        broken     = Signal()   # a ctrl block among the unit's blocks already in: it is cut short.
        self.comb += [
            is_trailer.eq(h_ctrl & (h_type == T_TRAILER)),
            is_unit.eq(h_ctrl & (h_type >= T_RD_REQ) & (h_type <= T_ERR)),
            unit_ready.eq(is_unit & (level >= length)),
            tr_block.eq(buf[length]),
            tr_after.eq(unit_ready & (level > length) & tr_block[BLOCK_CTRL] &
                        (TRAILER.get(tr_block, "type") == T_TRAILER)),
            broken.eq(is_unit & reduce(or_, [buf[i][BLOCK_CTRL] & (i < length) & (i < level)
                                             for i in range(1, UNIT_MAX)])),
        ]

        # The trailer's CRC covers its control half too: one engine for a trailer alone at the head, one
        # for a trailer right behind a unit.
        self.head_tcrc  = head_tcrc  = ParallelCRC(TRAILER["crc"].offset, with_state=True)
        self.after_tcrc = after_tcrc = ParallelCRC(TRAILER["crc"].offset, with_state=True)
        self.comb += [
            head_tcrc.state.eq(state),
            head_tcrc.data.eq(TRAILER.below(head, "crc")),
            after_tcrc.state.eq(crc.crc),
            after_tcrc.data.eq(TRAILER.below(tr_block, "crc")),
        ]

        # Junk at the head: the run up to the next ctrl block among those present, at most JUNK_MAX.
        junk_run = Signal(max=JUNK_MAX + 1)
        self.comb += junk_run.eq(Mux(level < JUNK_MAX, level, JUNK_MAX))
        for i in reversed(range(1, JUNK_MAX)):
            self.comb += If(buf[i][BLOCK_CTRL] & (i < level), junk_run.eq(i))

        # What this cycle consumes: a trailer; a unit (and its trailer); or a run of junk.
        consume   = Signal(5)
        take_unit = Signal()
        end_frame = self.frame_end
        good      = self.frame_ok
        self.comb += [
            If(level != 0,
                If(is_trailer,
                    consume.eq(1), end_frame.eq(1),
                    good.eq(~bad & (TRAILER.get(head, "crc") == head_tcrc.crc)),
                ).Elif(~is_unit | broken,
                    # The frame is lost; skipping to the next ctrl block, not the unit's length, keeps the
                    # unit behind a cut one.
                    consume.eq(junk_run),
                ).Elif(unit_ready,
                    take_unit.eq(~bad),
                    consume.eq(length + tr_after),
                    end_frame.eq(tr_after),
                    good.eq(~bad & (TRAILER.get(tr_block, "crc") == after_tcrc.crc)),
                )
            ),
        ]

        # Block buffer: keep what is not consumed, append the beat behind it.
        keep = Signal(max=depth + 1)
        self.comb += [keep.eq(level - consume), sink.ready.eq(1)]
        incoming = [Cat(sink.data[BLOCK_BITS*i:BLOCK_BITS*(i+1)], sink.ctrl[i]) for i in range(BEAT_BLOCKS)]
        arrive = Signal(4)
        fits_after = Signal(max=depth + BEAT_BLOCKS + 1)
        fits = Signal()
        self.comb += [
            arrive.eq(Mux(sink.valid, sink.count, 0)),
            fits_after.eq(keep + arrive),
            fits.eq(fits_after <= depth),
        ]
        # As in the framer: a case on the few amounts a cycle consumes, and the beat's 8 blocks (beyond them,
        # the index only picks don't-care blocks past the level).
        inc = Array(incoming + [0])
        for i in range(depth):
            kept = Signal(BLOCK_CTRL + 1, name=f"rxkept{i}")
            self.comb += Case(consume, {c: kept.eq(buf[i + c]) for c in CONSUMED})
            self.sync += buf[i].eq(Mux(i < keep, kept, inc[i - keep]))
        self.sync += [
            level.eq(keep + Mux(fits, arrive, 0)),
            If(sink.valid & ~fits, self.overflow.eq(self.overflow + 1)),
        ]

        # Transactions wait in the commit FIFO until their trailer checks.
        self.fifo = fifo = CommitFIFO(txn_layout, commit_depth)
        unit_mask   = Signal(LINE_BYTES)
        unit_data   = Signal(LINE_BITS)
        self.comb += [
            unit_mask.eq(Mux(masked, MASK.get(blocks[1], "enables"), FULL_MASK)),
            unit_data.eq(Mux(masked, Cat(*blocks[2:10]), Cat(*blocks[1:9]))),
            fifo.sink.valid.eq(take_unit),
            fifo.sink.type.eq(h_type),
            fifo.sink.tag.eq(HEADER.get(head, "tag")),
            fifo.sink.laddr.eq(HEADER.get(head, "laddr")),
            fifo.sink.mask.eq(unit_mask),
            fifo.sink.data.eq(Mux(length == 1, 0, unit_data)),
            # A pair's second line, behind the first.
            fifo.sink2.valid.eq(take_unit & paired),
            fifo.sink2.type.eq(h_type),
            fifo.sink2.tag.eq(HEADER.get(head, "tag2")),
            fifo.sink2.laddr.eq(HEADER.get(head, "laddr") + 1),
            fifo.sink2.mask.eq(FULL_MASK),
            fifo.sink2.data.eq(Cat(*blocks[9:17])),
            fifo.commit.eq(end_frame & good & self.seq_ok),
            fifo.rollback.eq(end_frame & ~(good & self.seq_ok)),
            fifo.source.connect(source),
        ]
        # The frame's trailer fields and transaction count, for the sequence checker and the retry buffer.
        pushed = Signal(5)
        tr_low = Signal(TRAILER["crc"].offset)
        self.comb += tr_low.eq(Mux(is_trailer, TRAILER.below(head, "crc"), TRAILER.below(tr_block, "crc")))
        self.comb += [
            self.frame_seq.eq(TRAILER.get(tr_low, "seq")),
            self.frame_ack.eq(TRAILER.get(tr_low, "ack")),
            self.frame_nak.eq(TRAILER.get(tr_low, "nak")),
            self.frame_credits.eq(TRAILER.get(tr_low, "credits")),
            self.frame_txns.eq(pushed + fifo.sink.valid + fifo.sink2.valid),
        ]
        self.sync += If(end_frame, pushed.eq(0)).Else(pushed.eq(pushed + fifo.sink.valid + fifo.sink2.valid))
        self.sync += [
            If(end_frame,
                state.eq(CRC_INIT), bad.eq(0), self.frames.eq(self.frames + 1),
                If(~good, self.crc_errors.eq(self.crc_errors + 1)),
            ).Elif(take_unit,
                state.eq(crc.crc),
            ).Elif((level != 0) & (broken | (~is_unit & ~is_trailer)),
                bad.eq(1),
            ),
        ]

