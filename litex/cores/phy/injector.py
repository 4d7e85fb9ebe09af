#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A chosen fault on one frame of the sim channel's wire (the channel model only; no link gateware has it).

The injector sits beside one direction of the channel, in front of its serializer, and acts on one frame
that the link itself sent: the first after it is armed (and `at` cycles more) that carries a transaction and
travels in whole beats of its own (it starts a beat, its trailer ends one, at most `max_beats` beats). Such
a frame is held until its last beat has come, then sent as the fault asks:

- `crc`: one bit of its CRC flipped;
- `type`: its first header's type made unknown (bit 3 flipped: 1..5 become 9..13), its CRC mended to match,
  so only the deframer's parse can tell;
- `truncated`: only its first half sent (a unit cut short, or a unit without its trailer);
- `duplicate`: sent twice, back to back;
- `skip`: not sent (the next frame arrives with a sequence number skipped);
- `flood`: sent `copies` times back to back, a frame of 2 or 4 blocks packed several to a beat (so it
  floods the deframer faster than it parses, and its ring overflows).

For the channel's own faults (`lane`, `down`) it finds the frame the same way (any frame with a transaction
that starts a beat), lets it pass unchanged and raises `found`: the channel starts the fault there, so that
it falls inside traffic whatever the time between the arm and the traffic.

The fault kinds and their codes are FAULT_KINDS (codes.py). A frame that turns out not to travel alone
(a trailer inside a beat, or longer than `max_beats`) is sent on unchanged and the search goes on. Armed
again before a frame is held, the new setting replaces the old (`none`, or any code the injector does not
know, disarms).

It is not in the path of the beats: it watches them (`sink`); while `block`, the link's beats do not reach
the wire and `hold` takes one (into the held frame); while `sending`, the serializer takes the injector's
beats (`source`, registered) instead. It works everything out in registers, in the cycles it needs it, so
that an idle injector costs the simulation almost nothing: a beat is summed up as it is held, and checked
the cycle after (the link waits).

Latency: 0 cycles while no frame is held (beats do not go through it); a held frame's first beat is offered
3 cycles after its last beat came (checked, then made), the others one a cycle.
"""

from functools import reduce
from operator import add, or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.crc import crc_reference
from monet.cores.common.layouts import *
from monet.cores.common.striping import block_places, lanes_cases, thermometer_count, thermometer_ends
from monet.cores.common.wire import HEADER, TRAILER
from monet.cores.phy.codes import CHANNEL_FAULTS, FAULT_KINDS, FRAME_FAULTS

TYPE_FLIP = 0x8   # types 1..5 become 9..13, none of them a type the deframer knows


def type_flip_crc(blocks):
    """What flipping TYPE_FLIP in block 0 of a frame of `blocks` blocks (its trailer the last) does to the
    trailer's CRC: the CRC covers the units' blocks, block 0 first and each from its top bit, then the
    trailer's bits below the CRC field, and is linear, so the change is the CRC (from 0) of the flip alone."""
    below = TRAILER["crc"].offset
    bits = BLOCK_BITS * (blocks - 1) + below
    flip = TYPE_FLIP << (HEADER["type"].offset + bits - BLOCK_BITS)
    return crc_reference(flip, bits, init=0)


class FrameInjector(LiteXModule):
    """The fault `kind` on the first frame that travels alone from `at` cycles after `arm`, beside one channel
    direction (the module's docstring): `max_beats` beats held at most."""
    def __init__(self, lanes_log2, max_beats=4):
        self.sink    = sink   = stream.Endpoint(bundle_layout())   # watched: the beats on their way
        self.ready   = Signal()   # the wire takes a beat of the link's (its serializer's ready)
        self.block   = Signal()   # the link's beats wait (or are held)
        self.hold    = Signal()   # the beat on `sink` is taken into the held frame
        self.source  = source = stream.Endpoint(beat_layout)   # the injector's beats (registered), while `sending`
        self.sending = Signal()
        self.kind    = Signal(4)    # FAULT_KINDS; a kind that is not the injector's disarms it
        self.copies  = Signal(16)   # flood: copies sent
        self.at      = Signal(32)   # cycles from `arm` before a frame may be taken
        self.arm     = Signal()
        self.applied = Signal(32)   # frames the fault was put on (or found, for a channel fault)
        self.found   = Signal()     # a channel fault's frame passes: its fault starts
        self.pending = Signal()     # armed, its fault not yet put on the wire
        self.frame_blocks = Signal(6)         # the last frame taken: its blocks
        self.frame_seq    = Signal(SEQ_BITS)  # and its trailer's sequence number

        # # #

        max_blocks = BEAT_BLOCKS * max_beats
        kind = Signal(4)
        is_kind = {name: kind == FAULT_KINDS[name] for name in FRAME_FAULTS + CHANNEL_FAULTS}

        def fields(n, blk):
            """Block `blk` of the beat on `sink` over n lanes: (its 64 bits, ctrl flag, used)."""
            _, lane, slot = block_places(n)[blk]
            return (getattr(sink, f"lane{lane}_data")[BLOCK_BITS*slot:BLOCK_BITS*(slot + 1)],
                    getattr(sink, f"lane{lane}_ctrl")[slot], getattr(sink, f"lane{lane}_used")[slot])

        def is_trailer(data, ctrl):
            return ctrl & (HEADER.get(data, "type") == T_TRAILER)

        # Whether a frame starts with the next beat: the framer closes a frame before it sends a beat that is
        # not full, so a beat ends a frame if its last slot (block 7) is unused or a trailer. Block 0 travels
        # in lane 0's first slot at every lane count.
        aligned = Signal(reset=1)   # the last beat ended a frame: the next starts one
        self.sync += If(sink.valid & sink.ready, lanes_cases(lanes_log2, lambda n: aligned.eq(
            ~fields(n, BEAT_BLOCKS - 1)[2] | is_trailer(*fields(n, BEAT_BLOCKS - 1)[:2]))))
        data0, ctrl0, used0 = fields(1, 0)
        starts_unit = ctrl0 & used0 & ~is_trailer(data0, 1)

        # The beat just held, in block order (`inbeat`, `inused`), and the held frame: beat k's blocks at
        # 8k..8k+7, copied from `inbeat` as it is checked (a frame faulted whole with its trailer's CRC edited:
        # crc, a bit flipped; type, mended for the header's flip).
        inbeat = [Signal(BLOCK_BITS + 1, name=f"inblock{j}") for j in range(BEAT_BLOCKS)]
        inused = [Signal(name=f"inused{j}") for j in range(BEAT_BLOCKS)]
        mem    = [Signal(BLOCK_BITS + 1, name=f"held{i}") for i in range(max_blocks)]
        held   = Signal(max=max_beats + 1)    # beats held
        piece  = Signal(max=max_blocks + 1)   # the blocks of the frame each copy sends
        copies = Signal(16)                   # copies still to send
        unchanged = Signal()                  # the held beats go on as they came
        wait   = Signal(32)
        finish = Signal()                     # everything held has been sent
        checking = Signal()
        self.sync += If(self.hold,
            lanes_cases(lanes_log2, lambda n: [
                stmt for blk in range(BEAT_BLOCKS)
                for stmt in (inbeat[blk].eq(Cat(*fields(n, blk)[:2])), inused[blk].eq(fields(n, blk)[2]))]),
            held.eq(held + 1),
        )
        # The beat just held, summed up in CHECK: its blocks, its trailers, whether its last block is one (and
        # that one's sequence number), the frame's blocks with it.
        trailer = [is_trailer(inbeat[j][:BLOCK_BITS], inbeat[j][BLOCK_BITS]) & inused[j] for j in range(BEAT_BLOCKS)]
        last    = thermometer_ends(inused)
        count, trailers, ends, last_seq = Signal(4), Signal(4), Signal(), Signal(SEQ_BITS)
        this_length = Signal(max=max_blocks + 1)
        complete, give_up = Signal(), Signal()
        self.comb += If(checking,
            count.eq(thermometer_count(inused)),
            trailers.eq(reduce(add, trailer)),
            ends.eq(reduce(or_, [t & l for t, l in zip(trailer, last)])),
            last_seq.eq(reduce(or_, [Mux(l, TRAILER.get(inbeat[j], "seq"), 0) for j, l in enumerate(last)])),
            this_length.eq(BEAT_BLOCKS * (held - 1) + count),
            complete.eq((trailers == 1) & ends),   # the beat ended a frame that travels alone
            give_up.eq((trailers != 0) | (count != BEAT_BLOCKS) | (held == max_beats)),   # it does not
        )

        # (copies, blocks of each) a kind sends of the frame.
        sends = {
            "crc":       (1, this_length),
            "type":      (1, this_length),
            "truncated": (1, this_length >> 1),
            "duplicate": (2, this_length),
            "skip":      (0, this_length),
            "flood":     (self.copies, this_length),
        }

        def chosen(part):
            return reduce(lambda acc, k: Mux(is_kind[k], sends[k][part], acc), sends, 0)
        edit, fix = Signal(), Signal(32)
        self.comb += If(checking,
            edit.eq(complete & (is_kind["crc"] | is_kind["type"])),
            If(is_kind["crc"], fix.eq(1 << 31)).Else(
                Case(this_length, {n: fix.eq(type_flip_crc(n)) for n in range(2, max_blocks + 1)})),
        )
        self.sync += [
            If(checking,
                Case(held - 1, {k: [mem[BEAT_BLOCKS * k + j].eq(
                    inbeat[j] ^ Mux(edit & (count == j + 1), Cat(Constant(0, TRAILER["crc"].offset), fix), 0))
                    for j in range(BEAT_BLOCKS)] for k in range(max_beats)}),
            ),
            If(checking & complete,
                copies.eq(chosen(0)), piece.eq(chosen(1)), unchanged.eq(0),
                self.frame_blocks.eq(this_length),
                self.frame_seq.eq(last_seq),
            ).Elif(checking & give_up,
                copies.eq(1), piece.eq(this_length), unchanged.eq(1),
            ),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        self.comb += [
            self.pending.eq(~fsm.ongoing("IDLE")),
            checking.eq(fsm.ongoing("CHECK")),
        ]
        # Armed: wait `at` cycles, then hunt. Armed again before a frame is held: the new setting replaces the
        # old one (a kind the injector does not know disarms).
        armable = reduce(or_, [self.kind == FAULT_KINDS[k] for k in FRAME_FAULTS + CHANNEL_FAULTS])
        arming = If(self.arm,
            NextValue(kind, self.kind),
            NextValue(wait, self.at - 1),
            If(~armable, NextState("IDLE")).Elif(self.at == 0, NextState("HUNT")).Else(NextState("WAIT")),
        )
        fsm.act("IDLE",
            arming,
        )
        fsm.act("WAIT",
            If(wait == 0, NextState("HUNT")).Else(NextValue(wait, wait - 1)),
            arming,
        )
        channel_fault = reduce(or_, [is_kind[k] for k in CHANNEL_FAULTS])
        frame_start = sink.valid & aligned & starts_unit & ~self.arm
        fsm.act("HUNT",
            If(frame_start & ~channel_fault,
                self.block.eq(1), self.hold.eq(1),
                NextState("CHECK"),
            ).Elif(frame_start & self.ready,
                self.found.eq(1),
                NextState("IDLE"),
            ),
            arming,
        )
        fsm.act("CHECK",
            self.block.eq(1),
            If(complete | give_up, NextState("SEND")).Else(NextState("HOLD")),
        )
        fsm.act("HOLD",
            self.block.eq(1),
            If(sink.valid, self.hold.eq(1), NextState("CHECK")),
        )
        self.sync += [
            If(self.found | finish & ~unchanged, self.applied.eq(self.applied + 1)),
            If(finish, held.eq(0)),
        ]

        # Sending, one registered beat at a time (the serializer deals it over the lanes as it takes it). Copies
        # of 2 or 4 blocks (a request's or an ack's frame, or half of one) are packed whole into beats, as many
        # as fit; any other goes a held beat (row) at a time, a copy's last beat partial. The type edit is on the
        # first copy's header. The first beat is made the cycle after the frame is known, each next one as the
        # one before it leaves.
        PACKED   = (2, 4)       # the pieces packed several to a beat
        short    = Signal()
        per_beat = Signal(4)    # copies of a packed piece a beat holds
        row      = Signal(max=max_beats)
        made     = Signal()     # `source` holds a beat to send
        beat_copies = Signal(16)   # the copies `source`'s beat ends
        self.comb += [
            self.sending.eq(fsm.ongoing("SEND")),
            short.eq(reduce(or_, [piece == p for p in PACKED])),
            If(self.sending & short, Case(piece, {p: per_beat.eq(BEAT_BLOCKS // p) for p in PACKED})),
        ]

        def load(at_row, left, flip):
            """The statements that make `source`'s beat: `left` copies still to send, from held beat `at_row`
            for a long piece; `flip` is XORed into block 0 (the type edit of the first copy)."""
            fit  = Mux(left < per_beat, left, per_beat)
            rest = piece - BEAT_BLOCKS * at_row

            def put(blk, block):
                return [source.data[BLOCK_BITS*blk:BLOCK_BITS*(blk + 1)].eq(block[:BLOCK_BITS] ^ (flip if blk == 0 else 0)),
                        source.ctrl[blk].eq(block[BLOCK_BITS])]
            packed = Case(piece, {p: [put(blk, mem[blk % p]) for blk in range(BEAT_BLOCKS)] for p in PACKED})
            from_row = Case(at_row, {r: [put(blk, mem[BEAT_BLOCKS*r + blk]) for blk in range(BEAT_BLOCKS)]
                                     for r in range(max_beats)})
            return If(short,
                packed, source.count.eq(fit * piece), beat_copies.eq(fit),
            ).Else(
                from_row, source.count.eq(Mux(rest < BEAT_BLOCKS, rest, BEAT_BLOCKS)),
                beat_copies.eq(rest <= BEAT_BLOCKS),
            )

        leaves = source.valid & source.ready
        left_after = Signal(16)
        self.comb += If(self.sending, left_after.eq(copies - beat_copies))
        next_row = Mux(short | (piece - BEAT_BLOCKS * row <= BEAT_BLOCKS), 0, row + 1)
        type_flip = Mux(is_kind["type"] & ~unchanged, TYPE_FLIP << HEADER["type"].offset, 0)
        self.comb += source.valid.eq(self.sending & made)
        first = self.sending & ~made & (copies != 0)
        self.sync += [
            If(first | leaves & (left_after != 0),
                made.eq(1),
                load(Mux(first, row, next_row), Mux(first, copies, left_after), Mux(first, type_flip, 0)),
            ).Elif(leaves,
                made.eq(0),
            ),
            If(leaves, copies.eq(left_after), row.eq(next_row)),
            If(finish, row.eq(0)),
        ]
        fsm.act("SEND",
            self.block.eq(1),
            If(~made & (copies == 0),
                finish.eq(1),
                If(unchanged, NextState("HUNT")).Else(NextState("IDLE")),
            ),
        )
