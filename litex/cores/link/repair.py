#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A frame repaired from its CRC-32 instead of resent: where its one flipped bit is (SyndromeLocator), and the frame
kept meanwhile and put right (FrameRepair).

A frame's syndrome, the CRC the deframer works out XOR the one its trailer carries, depends on the error alone
(a CRC is linear): a single flipped bit with d message bits behind it gives x^(32 + d) mod G, a flipped bit i
of the trailer's CRC field x^i mod G. Counted in blocks from the frame's end (block 0 the trailer, whose CRC
field is its upper half and is fed last but behind nothing), the bit at (block m, bit b) of the frame has the
syndrome x^k mod G with k = 64 m + b for m >= 1 and k = b ^ 32 in the trailer. The IEEE polynomial gives a
distinct x^k for every k below 2**32 - 1, far beyond a frame (137 blocks at most: 8 units of a pair and a
trailer), and no two flipped bits of a frame share a syndrome with one (the code's distance is 4 over such
lengths), so a syndrome equal to some x^k with k inside the frame names its bit; three flipped bits or more
can alias one (at about 1 in 500,000 of such frames for the largest).
"""

from functools import reduce
from operator import or_, xor

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.arith import plus_one
from monet.cores.common.crc import CRC32_POLY, balanced, crc_reference
from monet.cores.common.csr import async_memory
from monet.cores.common.fifo import LevelFIFO
from monet.cores.common.layouts import BLOCK_BITS, LADDR_BITS, LINE_BYTES, SEQ_BITS, seq_txn_layout, txn_layout
from monet.cores.common.wire import HEADER, TRAILER
from monet.cores.link.retry import FRAME_TXNS_MAX

CRC_BITS = 32
FRAME_BLOCKS_BITS = 8   # a frame's length in blocks: 137 at most
# `tag` rides along with a syndrome to its result: the frame it belongs to is kept for a repair (FrameRepair).
syndrome_layout = [("syndrome", CRC_BITS), ("blocks", FRAME_BLOCKS_BITS), ("tag", 1)]
position_layout = [("found", 1), ("block", FRAME_BLOCKS_BITS), ("bit", log2_int(BLOCK_BITS)), ("tag", 1)]


def over_x(r):
    """r / x mod G, for r a CRC register's value (below x^32): G's constant term is 1, so r + G is a multiple
    of x when r is not. (A zero bit fed to the register, crc_reference(0, 1, init=r), is r x mod G.)"""
    return ((r ^ CRC32_POLY) >> 1) | (1 << (CRC_BITS - 1)) if r & 1 else r >> 1


def x_power(k):
    """x^k mod G: a CRC register holding 1, fed k zero bits."""
    return crc_reference(0, k, init=1)


def syndrome_of_bit(block, bit):
    """The syndrome of a frame whose bit `bit` of block `block` from its end (0: the trailer) alone is flipped."""
    return x_power(BLOCK_BITS * block + bit if block else bit ^ 32)


class SyndromeLocator(LiteXModule):
    """Finds the one flipped bit a failed frame's syndrome names, if it names one inside the frame.

    `sink` takes a syndrome and the frame's length in blocks into a queue of `queue` (one a cycle; `missed`
    counts those that found it full). The head's syndrome is compared with x^k mod G for `blocks_per_cycle`
    blocks' worth of k (64 each) a cycle, from the frame's end, and stepped back by as many blocks (times
    x^-64 a block, a constant matrix: an XOR of up to 32 bits a bit). `source` shows for one cycle whether a
    bit was found (`found`) and where: `block` from the frame's end (0 its trailer) and `bit` in that block,
    with the `tag` its syndrome came with. Its `ready` is not read: nothing holds a result back.

    Latency: s + 3 cycles from the syndrome taken into an empty queue, s the step (from 0) that holds its bit,
    or ceil(blocks / blocks_per_cycle) + 2 when no step does: 1 the queue, 1 each step's compare (registered),
    1 the result. Each step's compares and the OR of their hits are registered: the deframer that holds it is at
    8 levels (`monet board estimate --cores link.deframer`), its deepest path elsewhere.
    """
    def __init__(self, blocks_per_cycle=2, queue=4):
        assert blocks_per_cycle in (1, 2, 4, 8)
        self.sink   = sink   = stream.Endpoint(syndrome_layout)
        self.source = source = stream.Endpoint(position_layout)
        self.missed = Signal(32)

        # # #

        per_step = BLOCK_BITS * blocks_per_cycle
        self.fifo = fifo = LevelFIFO(syndrome_layout, queue)
        self.comb += sink.connect(fifo.sink)
        self.sync += If(sink.valid & ~sink.ready, self.missed.eq(self.missed + 1))

        syndrome = Signal(CRC_BITS)   # the head's syndrome, stepped back `per_step` bits a cycle
        blocks   = Signal(FRAME_BLOCKS_BITS)
        tag      = Signal()
        first    = Signal(FRAME_BLOCKS_BITS)   # the first block, from the end, that this step covers (< 137 + 4)
        busy     = Signal()
        # A step's compare, registered: whether it hit, which k, its first block, and whether it was the last.
        seen, seen_hit, seen_last = Signal(), Signal(), Signal()
        seen_k     = Signal(log2_int(per_step))
        seen_first = Signal(FRAME_BLOCKS_BITS)
        finish     = Signal()

        hits = [syndrome == x_power(k) for k in range(per_step)]
        k_bits = [balanced([hit for k, hit in enumerate(hits) if k >> b & 1], or_) for b in range(len(seen_k))]
        # Each bit of the stepped syndrome: the XOR of the bits whose x^i / x^per_step has it set.
        columns = []
        for i in range(CRC_BITS):
            r = 1 << i
            for _ in range(per_step):
                r = over_x(r)
            columns.append(r)
        stepped = [reduce(xor, [syndrome[i] for i in range(CRC_BITS) if columns[i] >> o & 1]) for o in range(CRC_BITS)]

        bit_bits = log2_int(BLOCK_BITS)
        block = Signal(FRAME_BLOCKS_BITS)
        self.comb += [
            fifo.source.ready.eq(~busy),
            finish.eq(seen & (seen_hit | seen_last)),
            block.eq(seen_first + (seen_k[bit_bits:] if blocks_per_cycle > 1 else 0)),
            source.valid.eq(finish),
            source.found.eq(seen_hit & (block < blocks)),
            source.block.eq(block),
            source.bit.eq(Mux(block == 0, seen_k[:bit_bits] ^ 32, seen_k[:bit_bits])),
            source.tag.eq(tag),
        ]
        self.sync += [
            If(fifo.source.valid & ~busy,
                busy.eq(1), syndrome.eq(fifo.source.syndrome), blocks.eq(fifo.source.blocks), first.eq(0),
                tag.eq(fifo.source.tag),
            ).Elif(busy & ~finish,
                syndrome.eq(Cat(*stepped)), first.eq(first + blocks_per_cycle),
            ),
            seen.eq(busy & ~finish),
            # The compares are worked out only in a step (a simulator then skips them between failed frames).
            If(busy & ~finish,
                seen_hit.eq(balanced(hits, or_)),
                seen_k.eq(Cat(*k_bits)),
                seen_first.eq(first),
                seen_last.eq(first + blocks_per_cycle >= blocks),
            ),
            If(finish, busy.eq(0), seen.eq(0)),
        ]


def _offsets(layout):
    """Where each field of `layout` starts in its raw bits, and their total."""
    offsets, at = {}, 0
    for name, width in layout:
        offsets[name] = at
        at += width
    return offsets, at


TXN_AT, TXN_BITS = _offsets(txn_layout)
# A header's type, tag and line address sit at the same bits in it as in its transaction.
assert all(HEADER[name].offset == TXN_AT[name] for name in ("type", "tag", "laddr"))
HEAD_BITS = TXN_AT["mask"]
UNIT_LENGTH_BITS = 5   # a unit's blocks: 1, 9, 10 or 17
TAIL_CYCLES = 4        # `parked` after a repaired frame's last transaction (the checker's map takes 3 to show it)
SLOTS = 4              # frames kept at once: one being repaired, the others behind it (a power of two)
# Where a kept transaction's unit is in its frame: its first block, its length, and whether the transaction is a
# pair's second line.
unit_layout = [("at", FRAME_BLOCKS_BITS), ("blocks", UNIT_LENGTH_BITS), ("second", 1)]


def in_field(table, name, bit):
    field = table[name]
    return (bit >= field.offset) & (bit < field.offset + field.width)


class FrameRepair(LiteXModule):
    """Keeps a frame that failed its CRC while the locator looks for its flipped bit, and hands it on repaired
    instead of asking the peer for it again (selective repeat).

    The deframer's transactions of each frame (`write1`, `txn1`, and `write2`, `txn2` behind it: a pair's two
    lines), with where their unit starts in the frame (`unit_at`, in blocks) and its length (`unit_blocks`: 1,
    9, 10 or 17), are written into one of SLOTS stores of FRAME_TXNS_MAX, if one was free at the frame's start.
    At the frame's end (`frame_end`), a frame that failed with nothing else wrong (`failed`: the locator takes
    it, if its queue has room, `locator_ready`) is kept there, if `enable`, with its trailer's fields and
    length: `park` (0 cycles) tells the sequence checker to ask nothing for it, and the locator's syndrome is
    tagged. That slot takes nothing more until its frame is done; the next frames go to the next slot. Frames are
    kept in the slots in turn and repaired in turn, the locator's answers coming in the same order (those that
    come while a frame before is being repaired wait in a queue). The locator's answer for a frame (`located`, tagged):
      - no bit found: `fallback` (a cycle), and the checker asks for the frame as it would have at its end;
      - a bit of the trailer: its sequence number, ack or nak put right (a bit of its credits or CRC changes
        nothing this end uses; a type bit is not repaired);
      - elsewhere: where each kept transaction's unit starts and ends (registers beside the store) is compared
        with the bit's place, all at once, to find the unit that holds the bit (in three stages of registers). A
        data or mask block's bit is flipped back in its transaction, a header's tag or line address likewise (a
        pair's line address in its first line, its second line's derived from it again); a header's type, mask
        or pair flag is not repaired (`fallback`), and a header's unused bits change nothing.
    A repaired frame is offered to the checker (`offer`, with `seq` and `txns`) until `offer_ready`; if it
    takes it (`offer_take`: in its window and not a duplicate), `start` says so a cycle later and its
    transactions go out of `source` from the next cycle, one a cycle, in order, with their sequence numbers,
    the bit put right; `repaired` counts the frames taken. Its trailer's ack and nak wait for the deframer
    (`trailer_valid`, `trailer_ack`, `trailer_nak`, until `trailer_taken`), which hands them to the retry
    buffer; its credits are not used (a count that old could be behind the last one counted). `parked` holds
    while a frame is kept and until TAIL_CYCLES after the last is done: the checker asks for no lost frame
    meanwhile.

    Latency: from the locator's answer (registered: 1 cycle), 3 cycles to the offer for a bit of the trailer,
    6 otherwise (the scan's three stages); from the cycle the offer is taken (the checker's answer
    registered: 1), the transactions go out 2 cycles later, one a cycle. Frames that are not kept are not
    delayed.
    """
    def __init__(self):
        self.write1       = Signal()
        self.txn1         = Signal(TXN_BITS)
        self.write2       = Signal()
        self.txn2         = Signal(TXN_BITS)
        self.unit_at      = Signal(FRAME_BLOCKS_BITS)
        self.unit_blocks  = Signal(UNIT_LENGTH_BITS)
        self.frame_end    = Signal()
        self.failed       = Signal()
        self.locator_ready = Signal()
        self.frame_blocks = Signal(FRAME_BLOCKS_BITS)
        self.frame_seq    = Signal(SEQ_BITS)
        self.frame_ack    = Signal(SEQ_BITS)
        self.frame_nak    = Signal()
        self.frame_txns   = Signal(6)
        self.enable       = Signal()
        self.park         = Signal()
        self.parked       = Signal()
        self.located      = stream.Endpoint(position_layout)
        self.fallback     = Signal()
        self.offer        = Signal()
        self.offer_ready  = Signal()
        self.offer_take   = Signal()
        self.start        = Signal()   # the offer was taken (a register's answer): its transactions come next
        self.seq          = Signal(SEQ_BITS)
        self.txns         = Signal(6)
        self.trailer_valid = Signal()
        self.trailer_ack   = Signal(SEQ_BITS)
        self.trailer_nak   = Signal()
        self.trailer_taken = Signal()
        self.source   = source = stream.Endpoint(seq_txn_layout)
        self.repaired = Signal(32)

        # # #

        # The store: SLOTS frames of FRAME_TXNS_MAX entries. In a slot, entries alternate between two memories, so
        # that a pair's two lines are written in one cycle. One slot takes the open frame while the others' frames
        # wait for the locator or are being repaired; the slots take frames in turn, and are repaired in turn.
        rows = FRAME_TXNS_MAX // 2
        banks = [async_memory(self, TXN_BITS, SLOTS * rows) for _ in range(2)]
        count     = Signal(max=FRAME_TXNS_MAX + 1)   # the open frame's transactions so far
        count2    = Signal(len(count))
        cap       = Signal(max=SLOTS)   # the slot that takes the open frame ...
        capturing = Signal(reset=1)     # ... and has taken it from its start
        head      = Signal(max=SLOTS)   # the slot whose frame was kept first: answered and repaired next
        full      = Signal(SLOTS)     # the slots that hold a kept frame
        at        = Signal(max=FRAME_TXNS_MAX + 1)   # the head's entry read and sent
        row_bits  = slice(1, 1 + log2_int(rows))
        self.comb += count2.eq(count + 1)
        for bank, (wr, rd) in enumerate(banks):
            self.comb += [
                If(count[0] == bank,
                    wr.adr.eq(Cat(count[row_bits], cap)),
                    wr.dat_w.eq(self.txn1), wr.we.eq(self.write1 & capturing),
                ).Else(
                    wr.adr.eq(Cat(count2[row_bits], cap)),
                    wr.dat_w.eq(self.txn2), wr.we.eq(self.write2 & capturing),
                ),
                rd.adr.eq(Cat(at[row_bits], head)),
            ]
        entry = Signal(TXN_BITS)
        self.comb += entry.eq(Mux(at[0], banks[1][1].dat_r, banks[0][1].dat_r))
        # Each entry's unit, in registers beside the store: the scan looks at all of a frame's at once.
        units = [[Record(unit_layout, name=f"unit{s}_{e}") for e in range(FRAME_TXNS_MAX)] for s in range(SLOTS)]
        for s, slot in enumerate(units):
            for e, unit in enumerate(slot):
                first_line = self.write1 & (count == e)
                self.sync += If(capturing & (cap == s) & (first_line | self.write2 & (count2 == e)),
                    unit.at.eq(self.unit_at), unit.blocks.eq(self.unit_blocks), unit.second.eq(~first_line),
                )

        self.fsm = fsm = FSM(reset_state="IDLE")
        idle = fsm.ongoing("IDLE")
        done = Signal()   # the head's frame is done with: its slot is free
        cap_free, next_free, head_full = Signal(), Signal(), Signal()
        next_cap = Signal(len(cap))   # the slot after `cap`, in turn
        slot_full = Array(full[s] for s in range(SLOTS))
        self.comb += [
            next_cap.eq(cap + 1),
            cap_free.eq(~slot_full[cap]),
            next_free.eq(~slot_full[next_cap]),
            head_full.eq(slot_full[head]),
            self.park.eq(self.enable & capturing & self.frame_end & self.failed & self.locator_ready),
            self.parked.eq((full != 0) | ~idle),
        ]
        # Each slot's kept frame: its length and trailer fields; the head's are copied for its repair (and put
        # right there if the bit is among them).
        kept = [Record([("length", FRAME_BLOCKS_BITS), ("seq", SEQ_BITS), ("txns", 6), ("ack", SEQ_BITS), ("nak", 1)])
                for _ in range(SLOTS)]
        head_kept = Record(kept[0].layout)
        self.comb += head_kept.raw_bits().eq(Array(k.raw_bits() for k in kept)[head])
        ack_kept = Signal(SEQ_BITS)
        nak_kept = Signal()
        found_ok = Signal()   # the frame is repaired: its trailer's ack and nak go to the deframer
        self.sync += [
            count.eq(Mux(self.frame_end, 0, count + self.write1 + self.write2)),
            If(self.frame_end,
                If(self.park, cap.eq(next_cap), capturing.eq(next_free)).Else(capturing.eq(cap_free)),
            ),
            [If(self.park & (cap == s),
                full[s].eq(1),
                k.raw_bits().eq(Cat(self.frame_blocks, self.frame_seq, self.frame_txns, self.frame_ack,
                                    self.frame_nak)),
             ).Elif(done & (head == s),
                full[s].eq(0),
             ) for s, k in enumerate(kept)],
            If(done, head.eq(head + 1)),
            If(found_ok,
                self.trailer_valid.eq(1), self.trailer_ack.eq(ack_kept), self.trailer_nak.eq(nak_kept),
            ).Elif(self.trailer_taken,
                self.trailer_valid.eq(0),
            ),
        ]

        # The locator's answers, registered (its block and `found` come out of an adder and a compare), come in the
        # order the frames were kept: those that come while the head is being repaired wait (`pending`) for their
        # turn.
        heard       = Record(position_layout)
        heard_valid = Signal()
        self.sync += heard_valid.eq(self.located.valid), heard.raw_bits().eq(self.located.payload.raw_bits())
        waiting = fsm.ongoing("WAIT")
        live    = Signal()
        # The answers for the frames kept behind the head (SLOTS - 1 at most: one a kept frame).
        self.pending = pending = LevelFIFO(position_layout, SLOTS)
        answer = Signal()
        found  = Signal()
        block  = Signal(FRAME_BLOCKS_BITS)
        b      = Signal(log2_int(BLOCK_BITS))
        self.comb += [
            live.eq(heard_valid & heard.tag),
            answer.eq(waiting & (pending.source.valid | live)),
            found.eq(Mux(pending.source.valid, pending.source.found, heard.found)),
            block.eq(Mux(pending.source.valid, pending.source.block, heard.block)),
            b.eq(Mux(pending.source.valid, pending.source.bit, heard.bit)),
            pending.source.ready.eq(waiting),
            pending.sink.valid.eq(live & (pending.source.valid | ~waiting)),
            pending.sink.payload.raw_bits().eq(heard.raw_bits()),
        ]
        place  = Signal(FRAME_BLOCKS_BITS)   # the flipped bit's block, from the frame's start
        # ... and from a unit's data, which starts 1 block behind its header, 2 behind a masked line's, 9 for a
        # pair's second line: made with `place`, so that the scan subtracts a unit's start from one of them.
        past = {first: Signal(FRAME_BLOCKS_BITS, name=f"place_past{first}") for first in (1, 2, 9)}
        bit    = Signal(log2_int(BLOCK_BITS))
        def flipped(value, name):
            field = TRAILER[name]
            return value ^ Cat(*[b == field.offset + i for i in range(field.width)])
        # The scan, over all of the head's entries at once in three stages of registers: A where the bit is from
        # each entry's unit start, B what the bit is to each entry, C the one entry it belongs to, if any.
        claimed, broken, hit = Signal(), Signal(), Signal()   # the bit is in a unit; not repairable; to flip
        target    = Signal(len(at))
        target2   = Signal(len(at))   # the entry behind the target: a pair's second line, if the bit is in its laddr
        rederive  = Signal()          # the bit is in a pair's line address: the second line's is derived again
        group     = Signal(max=10)   # where in the target: data block 0..7, 8 its mask, 9 its header's fields
        flip_bit  = Signal(log2_int(BLOCK_BITS))
        tag2_to_tag = HEADER["tag2"].offset - HEADER["tag"].offset
        claims, breaks, hits, seconds, pairs = (Signal(FRAME_TXNS_MAX) for _ in range(5))   # stage B, a bit an entry
        groups = [Signal(max=10, name=f"scan_group{e}") for e in range(FRAME_TXNS_MAX)]
        # A header's fields that are not repaired, whatever the unit.
        structural = (in_field(HEADER, "type", bit) | in_field(HEADER, "has_mask", bit) |
                      in_field(HEADER, "pair", bit))
        in_laddr = in_field(HEADER, "laddr", bit)
        for e in range(FRAME_TXNS_MAX):
            rel      = Signal(FRAME_BLOCKS_BITS, name=f"scan_rel{e}")        # stage A
            data_rel = Signal(FRAME_BLOCKS_BITS, name=f"scan_data_rel{e}")
            unit = Record(unit_layout, name=f"scan_unit{e}")
            chosen = Record(unit_layout, name=f"scan_chosen{e}")
            self.comb += chosen.raw_bits().eq(Array(slot[e].raw_bits() for slot in units)[head])
            self.sync += [
                unit.raw_bits().eq(chosen.raw_bits()),
                rel.eq(place - chosen.at),
                data_rel.eq(Mux(chosen.second, past[9], Mux(chosen.blocks == 10, past[2], past[1])) - chosen.at),
            ]
            masked = unit.blocks == 10
            pair   = unit.blocks == 17
            header = rel == 0
            data_hit = (unit.blocks >= 9) & (data_rel < 8)   # below the unit's data, it wraps round to beyond
            mask_hit = masked & (rel == 1)
            own_first  = (in_field(HEADER, "tag", bit) | in_laddr) & ~unit.second
            own_second = in_field(HEADER, "tag2", bit) & pair & unit.second
            kept_here  = e < self.txns
            self.sync += [
                claims[e].eq(kept_here & (data_hit | mask_hit | header)),
                breaks[e].eq(kept_here & header & structural),
                hits[e].eq(kept_here & (data_hit | mask_hit | header & (own_first | own_second))),
                groups[e].eq(Mux(data_hit, data_rel[:3], Mux(mask_hit, 8, 9))),
                seconds[e].eq(header & own_second),
                pairs[e].eq(header & pair & ~unit.second & in_laddr),
            ]
        # Stage C: units do not overlap, and a pair's header is its first line's or its second's, so one entry hits
        # at most.
        self.sync += If(fsm.ongoing("SCAN_C"),
            claimed.eq(claims != 0), broken.eq(breaks != 0), hit.eq(hits != 0),
            target.eq(balanced([Mux(hits[e], e, 0) for e in range(FRAME_TXNS_MAX)], or_)),
            target2.eq(balanced([Mux(hits[e], e + 1, 0) for e in range(FRAME_TXNS_MAX)], or_)),
            rederive.eq((hits & pairs) != 0),
            group.eq(balanced([Mux(hits[e], groups[e], 0) for e in range(FRAME_TXNS_MAX)], or_)),
            flip_bit.eq(Mux((hits & seconds) != 0, bit - tag2_to_tag, bit)),
        )

        tail = Signal(max=TAIL_CYCLES + 1)
        fsm.act("IDLE",
            If(head_full, NextState("WAIT")),
        )
        fsm.act("WAIT",
            NextValue(claimed, 0), NextValue(broken, 0), NextValue(hit, 0), NextValue(rederive, 0),
            NextValue(self.seq, head_kept.seq), NextValue(self.txns, head_kept.txns),
            NextValue(ack_kept, head_kept.ack), NextValue(nak_kept, head_kept.nak),
            If(answer,
                If(~found,
                    self.fallback.eq(1), done.eq(1), NextState("IDLE"),
                ).Elif(block == 0,
                    # The trailer: its fields put right; a type bit is not repaired.
                    NextValue(claimed, 1), NextValue(broken, in_field(TRAILER, "type", b)),
                    NextValue(self.seq, flipped(head_kept.seq, "seq")),
                    NextValue(ack_kept, flipped(head_kept.ack, "ack")),
                    NextValue(nak_kept, flipped(head_kept.nak, "nak")),
                    NextState("DECIDE"),
                ).Else(
                    NextValue(place, head_kept.length - 1 - block), NextValue(bit, b),
                    [NextValue(p, head_kept.length - 1 - first - block) for first, p in past.items()],
                    NextState("SCAN_A"),
                ),
            ),
        )
        fsm.act("SCAN_A", NextState("SCAN_B"))
        fsm.act("SCAN_B", NextState("SCAN_C"))
        fsm.act("SCAN_C", NextState("DECIDE"))
        fsm.act("DECIDE",
            If(claimed & ~broken,
                found_ok.eq(1), NextState("OFFER"),
            ).Else(
                self.fallback.eq(1), done.eq(1), NextState("IDLE"),
            ),
        )
        # The checker's answer is registered (`taken`): it comes out of two sequence distances and compares.
        taken = Signal()
        fsm.act("OFFER",
            self.offer.eq(1),
            NextValue(at, 0), NextValue(tail, TAIL_CYCLES),
            If(self.offer_ready, NextValue(taken, self.offer_take), NextState("ANSWERED")),
        )
        fsm.act("ANSWERED",
            self.start.eq(taken),
            If(taken,
                NextValue(self.repaired, self.repaired + 1),
                If(self.txns != 0, NextState("SEND")).Else(NextState("TAIL")),
            ).Else(
                NextState("TAIL"),
            ),
        )
        # The bit put right in the target entry as it goes out: a bit-position decode and an XOR.
        here  = Signal()
        flips = Signal(TXN_BITS)
        sent  = Signal(TXN_BITS)
        # A pair's line address put right in its first line: its second line's is that plus one, as the deframer
        # derived it, from the first's as it went out (registered).
        laddr = slice(TXN_AT["laddr"], TXN_AT["laddr"] + LADDR_BITS)
        first_laddr = Signal(LADDR_BITS)
        one_hot = [flip_bit == k for k in range(BLOCK_BITS)]
        self.comb += [
            here.eq(hit & (at == target)),
            flips.eq(Cat(*[here & (group == 9) & one_hot[k] for k in range(HEAD_BITS)],
                         *[here & (group == 8) & one_hot[k] for k in range(LINE_BYTES)],
                         *[here & (group == j) & one_hot[k] for j in range(8) for k in range(BLOCK_BITS)])),
            sent.eq(entry ^ flips),
            source.payload.raw_bits().eq(Cat(sent[:laddr.start],
                                             Mux(rederive & (at == target2), plus_one(first_laddr), sent[laddr]),
                                             sent[laddr.stop:], (self.seq + at)[:SEQ_BITS])),
        ]
        self.sync += If(here & source.valid & source.ready, first_laddr.eq(sent[laddr]))
        fsm.act("SEND",
            source.valid.eq(1),
            If(source.ready,
                NextValue(at, at + 1),
                If(at + 1 == self.txns, NextState("TAIL")),
            ),
        )
        fsm.act("TAIL",
            NextValue(tail, tail - 1),
            If(tail == 1, done.eq(1), NextState("IDLE")),
        )
