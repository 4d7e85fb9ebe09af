#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Memory card ports: several requesters' links in front of one memory card (the pooled card), an arbiter
with run-time shares, one address range a port, and each port's counters."""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.arith import add_in_two_words
from monet.cores.common.csr import add_status, async_memory
from monet.cores.common.fifo import BypassFIFO
from monet.cores.common.freelist import FreeList
from monet.cores.common.layouts import *

# A refused request's type on its way to the card: no request type, so the card answers it with an error
# (T_ERR, its tag and line address) and neither reads nor writes its memory.
REFUSED_TYPE = 0

# What a port's FIFO keeps beside a request: outside the port's range, and the cycle it arrived.
ARRIVAL_LAYOUT = [("refused", 1), ("arrived", 32)]


class MemoryPorts(LiteXModule):
    """`n_ports` link ports (`sinks[i]`, `sources[i]`: requests in, answers out) in front of one memory card
    (`source` to its sink, `sink` from its source). Each requester has its own tags; the card sees its own,
    handed out from a free list of `tags` (the card's `max_outstanding`) and mapped back on the way out, so
    the requesters' tags may collide and the card stays as it is.

    Arbiter: the port whose turn it is keeps it for `share[i]` requests in a row (0 counts as 1) while it has
    requests waiting, then the turn goes round to the next port with a request waiting; with equal shares
    this is round robin, with shares 4:2:1:1 saturating ports get the card in those proportions. One request
    a cycle goes to the card while it has room and a tag is free, with at most `in_flight_limit` of the card's
    tags out (run time; default all): a lower limit leaves requests waiting at the ports, so that the shares
    decide who goes when the card is busy, and bounds how many a new request waits behind at the card.

    Ranges: port i reaches lines `first_line[i]` to `last_line[i]` (default: all), decided as a request
    arrives. A request outside goes to the card with no request type, so the card answers it with an error
    without touching its memory, and the port's `refused` counts it.

    Each port's FIFO holds `max_outstanding` requests, the most its requester's credits allow, so a port's
    sink is never stalled; `taken[i]` strobes as port i's request goes to the card (its credit back).

    Latency added to the card's: 2 cycles. In: 1, the chosen request's register (a request that finds its
    port's FIFO empty goes around it to the arbiter in the cycle it arrives; 1 more behind others). Out: 1,
    the answer's register, its port and its own tag looked up on the way in (a second register beside it
    holds an answer the ports cannot take yet, so the card's `ready` comes from a register).

    Counters, per port: reads and writes taken, requests refused, stall cycles (a request waiting at the
    port, arriving or held, and another port's taken, or none), and the latency of each answer, from the
    request arriving at the port to its answer leaving it: a 64-bit sum, a count and a histogram of
    `buckets` buckets of 2**`hist_shift` cycles (the last collects everything above), counted 3 cycles
    after the answer leaves.
    """
    def __init__(self, n_ports=4, max_outstanding=2**TAG_BITS, tags=2**TAG_BITS, share_bits=4, buckets=8):
        assert n_ports >= 2 and tags <= 2**TAG_BITS
        self.n_ports = n_ports
        self.sinks   = [stream.Endpoint(txn_layout) for _ in range(n_ports)]  # requests from each port's link
        self.sources = [stream.Endpoint(txn_layout) for _ in range(n_ports)]  # answers to each port's link
        self.source  = stream.Endpoint(txn_layout)   # requests to the memory card
        self.sink    = stream.Endpoint(txn_layout)   # the card's answers
        self.taken   = Signal(n_ports)
        self.share   = [Signal(share_bits, reset=1, name=f"share{i}") for i in range(n_ports)]
        self.first_line = [Signal(LADDR_BITS, name=f"first{i}") for i in range(n_ports)]
        self.last_line  = [Signal(LADDR_BITS, reset=2**LADDR_BITS - 1, name=f"last{i}") for i in range(n_ports)]
        self.hist_shift = Signal(5)
        self.in_flight_limit = Signal(bits_for(tags), reset=tags)
        self.reads   = [Signal(32, name=f"reads{i}") for i in range(n_ports)]
        self.writes  = [Signal(32, name=f"writes{i}") for i in range(n_ports)]
        self.refused = [Signal(32, name=f"refused{i}") for i in range(n_ports)]
        self.stalls  = [Signal(32, name=f"stalls{i}") for i in range(n_ports)]
        self.latency_sum   = [Signal(64, name=f"latency_sum{i}") for i in range(n_ports)]
        self.latency_count = [Signal(32, name=f"latency_count{i}") for i in range(n_ports)]
        self.hist = [[Signal(32, name=f"hist{i}_{b}") for b in range(buckets)] for i in range(n_ports)]
        self.buckets = buckets

        # # #

        self.now = now = Signal(32)
        self.sync += now.eq(now + 1)

        # Each port's FIFO, its range decided as a request arrives and kept beside it.
        fifos = []
        for i, sink in enumerate(self.sinks):
            fifo = BypassFIFO(txn_layout + ARRIVAL_LAYOUT, max_outstanding)
            setattr(self.submodules, f"fifo{i}", fifo)
            fifos.append(fifo)
            self.comb += [
                sink.connect(fifo.sink),
                fifo.sink.refused.eq((sink.laddr < self.first_line[i]) | (sink.laddr > self.last_line[i])),
                fifo.sink.arrived.eq(now),
            ]

        # The arbiter: `turn` keeps the port for `left` more requests while it has one waiting, else the turn
        # goes to the first port after it with one waiting (itself last).
        self.tags = tags_free = FreeList(tags, with_floor=True)
        # The card's tags out at once: at most in_flight_limit (0 counts as 1; above `tags`, all), the rest kept
        # back (the floor, a register: a new limit holds from the second cycle on).
        limit = self.in_flight_limit
        self.sync += tags_free.floor.eq(Mux(limit >= tags, 0, tags - Mux(limit == 0, 1, limit)))
        pending = Signal(n_ports)
        turn, chosen, after = Signal(max=n_ports), Signal(max=n_ports), Signal(max=n_ports)
        left = Signal(share_bits)
        keep, go = Signal(), Signal()
        self.comb += [pending[i].eq(fifo.source.valid) for i, fifo in enumerate(fifos)]
        cases = {}
        for t in range(n_ports):
            choice = after.eq(t)
            for p in reversed([(t + k) % n_ports for k in range(1, n_ports)]):
                choice = If(pending[p], after.eq(p)).Else(choice)
            cases[t] = choice
        offered = Record(txn_layout + ARRIVAL_LAYOUT)
        share = Signal(share_bits)
        # The chosen request's register, toward the card: it takes one when it is empty or its own leaves.
        load = Signal()
        self.comb += [
            Case(turn, cases),
            keep.eq(Array(pending)[turn] & (left != 0)),
            chosen.eq(Mux(keep, turn, after)),
            offered.eq(Array(fifo.source.payload for fifo in fifos)[chosen]),
            share.eq(Array(self.share)[chosen]),
            load.eq(~self.source.valid | self.source.ready),
            go.eq((pending != 0) & tags_free.room & load),
            tags_free.pop.eq(go),
        ]
        self.sync += If(load,
            self.source.valid.eq(go),
            self.source.type.eq(Mux(offered.refused, REFUSED_TYPE, offered.type)),
            self.source.tag.eq(tags_free.head),
            self.source.laddr.eq(offered.laddr),
            self.source.mask.eq(offered.mask),
            self.source.data.eq(offered.data),
        )
        for i, fifo in enumerate(fifos):
            self.comb += [
                self.taken[i].eq(go & (chosen == i)),
                fifo.source.ready.eq(self.taken[i]),
            ]
            self.sync += [
                If(self.taken[i],
                    If(offered.refused,
                        self.refused[i].eq(self.refused[i] + 1),
                    ).Elif(offered.type == T_RD_REQ,
                        self.reads[i].eq(self.reads[i] + 1),
                    ).Elif(offered.type == T_WR_REQ,
                        self.writes[i].eq(self.writes[i] + 1),
                    ),
                ).Elif(pending[i],
                    self.stalls[i].eq(self.stalls[i] + 1),
                ),
            ]
        self.sync += If(go,
            turn.eq(chosen),
            left.eq(Mux(keep, left - 1, Mux(share == 0, 0, share - 1))),
        )

        # The card's tag -> the port, the port's tag and its arrival, written as the request goes.
        origin_layout = [("port", len(turn)), ("tag", TAG_BITS), ("arrived", 32)]
        origin_w, origin_r = async_memory(self, layout_len(origin_layout), tags)
        written, found = Record(origin_layout), Record(origin_layout)
        self.comb += [
            written.port.eq(chosen), written.tag.eq(offered.tag), written.arrived.eq(offered.arrived),
            origin_w.adr.eq(tags_free.head), origin_w.dat_w.eq(written.raw_bits()), origin_w.we.eq(go),
            origin_r.adr.eq(self.sink.tag), found.raw_bits().eq(origin_r.dat_r),
        ]

        # The answer, its port and its own tag looked up, takes a register toward the ports. A second register
        # beside it holds an answer while the first cannot move on, so that the card's `ready` is a register's
        # and not the ports' through the first. The card's tag is free again the cycle after it enters.
        answer_layout = txn_layout + [("port", len(turn)), ("arrived", 32)]
        self.answer_hold = hold = stream.PipeReady(answer_layout)
        self.answer_out  = out  = stream.PipeValid(answer_layout)
        leaves = Signal()
        self.comb += [
            self.sink.connect(hold.sink, omit={"tag"}),
            hold.sink.tag.eq(found.tag),
            hold.sink.port.eq(found.port),
            hold.sink.arrived.eq(found.arrived),
            hold.source.connect(out.sink),
            out.source.ready.eq(Array(source.ready for source in self.sources)[out.source.port]),
            leaves.eq(out.source.valid & out.source.ready),
        ]
        self.sync += [
            tags_free.push.eq(self.sink.valid & self.sink.ready),
            tags_free.push_id.eq(self.sink.tag),
        ]
        for i, source in enumerate(self.sources):
            self.comb += [
                source.valid.eq(out.source.valid & (out.source.port == i)),
                source.payload.eq(out.source.payload),
            ]

        # Latency off the answer's path: its cycles as it leaves, then each port's share of it and its bucket,
        # then the counters.
        measured, measured_port, latency = Signal(), Signal(len(turn)), Signal(32)
        bucket = Signal(max=buckets)
        shifted = Signal(32)
        self.comb += shifted.eq(latency >> self.hist_shift)
        self.sync += [
            measured.eq(leaves), measured_port.eq(out.source.port), latency.eq(now - out.source.arrived),
            bucket.eq(Mux(shifted >= buckets - 1, buckets - 1, shifted)),
        ]
        for i in range(n_ports):
            measured_here = measured & (measured_port == i)
            mine, addend = Signal(name=f"counted{i}"), Signal(32, name=f"latency{i}")
            self.sync += [
                mine.eq(measured_here),
                addend.eq(Mux(measured_here, latency, 0)),
            ]
            add_in_two_words(self, self.latency_sum[i], addend, 0)
            self.sync += If(mine,
                self.latency_count[i].eq(self.latency_count[i] + 1),
                *[If(bucket == b, hist.eq(hist + 1)) for b, hist in enumerate(self.hist[i])],
            )

    def add_control(self):
        """Per port: its share and range (storage), its counters (status); the histogram's bucket width."""
        self._hist_shift = CSRStorage(5, description="Latency histogram buckets are 2**hist_shift cycles wide.")
        self._in_flight_limit = CSRStorage(len(self.in_flight_limit), reset=self.in_flight_limit.reset.value,
            description="The card's requests in flight at most (0 counts as 1): fewer keep requests waiting at the "
                        "ports, where the shares decide, and bound the wait behind the others at the card.")
        self.comb += [
            self.hist_shift.eq(self._hist_shift.storage),
            self.in_flight_limit.eq(self._in_flight_limit.storage),
        ]
        for i in range(self.n_ports):
            share = CSRStorage(len(self.share[i]), reset=1, name=f"share{i}",
                               description=f"Port {i}'s requests a turn (0 counts as 1).")
            first = CSRStorage(LADDR_BITS, name=f"first{i}", description=f"Port {i}'s first line (byte address / 64).")
            last = CSRStorage(LADDR_BITS, reset=2**LADDR_BITS - 1, name=f"last{i}",
                              description=f"Port {i}'s last line: requests outside first..last are refused.")
            setattr(self, f"_share{i}", share)
            setattr(self, f"_first{i}", first)
            setattr(self, f"_last{i}", last)
            self.comb += [
                self.share[i].eq(share.storage),
                self.first_line[i].eq(first.storage),
                self.last_line[i].eq(last.storage),
            ]
            add_status(self, f"reads{i}", self.reads[i], f"Port {i}'s line reads taken.")
            add_status(self, f"writes{i}", self.writes[i], f"Port {i}'s line writes taken.")
            add_status(self, f"refused{i}", self.refused[i], f"Port {i}'s requests outside its range, answered "
                                                              "with an error.")
            add_status(self, f"stalls{i}", self.stalls[i], f"Cycles port {i} had a request waiting, not taken.")
            add_status(self, f"latency_sum{i}", self.latency_sum[i], f"Port {i}'s latencies summed, cycles "
                                                                      "(arrival to answer).")
            add_status(self, f"latency_count{i}", self.latency_count[i], f"Port {i}'s answers measured.")
            for b in range(self.buckets):
                add_status(self, f"hist{i}_{b}", self.hist[i][b], f"Port {i}'s answers in latency bucket {b}.")
