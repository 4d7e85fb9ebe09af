#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The HMC device model's memory: 16 vaults of 8 banks behind the crossbar, storing data, with closed-page
DRAM timing per bank and a 10 GB/s data bus per vault.

Timing constants (a vault's DRAM runs at tCK = 0.8 ns, 1250 MHz; every value is rounded up to whole tCK):

| constant | value | source |
|---|---|---|
| tCK | 0.8 ns | gem5 `HMC_2500_x32` (src/mem/DRAMCtrl.py), after Azarkhish et al.'s HMC model |
| tBURST | 3.2 ns a 32 B burst (BL8 on 32 TSVs) | gem5 `HMC_2500_x32`; 32 B / 3.2 ns = the thesis's 10 GB/s a vault (s.3.1.2) |
| tRCD, tCL, tRP, tRAS | 10.2, 9.9, 7.7, 21.6 ns | gem5 `HMC_2500_x32`, "values using DRAMSpec HMC model" |
| tWR, tRTP | 8, 4.9 ns | same |
| frontend, backend | 4 ns each | gem5 `HMC_2500_x32` static_frontend/backend_latency (vault controller) |
| page policy | closed, 256 B page | the thesis s.3.1.2 |
| address map | offset [6:0], vault [10:7], bank [13:11] | HMC-Sim's low-interleave map for a 128 B maximum block (reference s.1.1) |
| link data | 40 GB/s of read and written data through one link's crossbar port | the paper s.3.2: "40 GB/s per link or quadrant (10 GB/s per vault x 4)" |

Gem5's model times writes with tCL like reads (no separate tCWL); so does this one. Refresh is not modelled
(gem5's tRFC = 59 ns every tREFI = 3.9 us, 1.5 % of a vault's time).

A request is timed when it is taken: the bank activates when it is free and the request is past the
frontend, data moves tRCD + tCL later once the vault's bus is free (ceil(bytes / 32) bursts), the bank
precharges after tRAS and after tRTP (read) or tWR (write) from its last burst, and is free tRP later; the
response is due `backend` after the last burst. Each vault serves its requests first come, first served:
its queue (`queue_depth` entries) holds them until they are due, so requests to different vaults come back
out of order and requests to one vault in order. The data itself is read or written when the request is
taken, in arrival order (what a single link's ordering guarantees), and the read data waits in the
request's queue slot.

sink: requests (`request_layout`), one taken a cycle while its vault's queue has room. sink2: a second
port for 1-FLIT requests (reads; the link layer's pairs), taken in the same cycle when its vault is not the
one `sink` takes (the two never meet in a queue, bank or bus), else a cycle later; `sink` is the earlier
of the two in arrival order. source: responses (`response_layout`): RD_RS with the data from FLIT 0 up,
WR_RS, or ERROR with ERRSTAT for a command the device does not execute, an LNG that is not the command's,
or an access crossing a 128 B block (posted writes get no response; a bad one is dropped and counted).
Those are answered as soon as they are taken and touch no bank. A read that touches the poisoned line
(`poison`, `poison_line`: fault injection) is timed and served by its bank as any read, then answered ERROR
with ERRSTAT_UNCORRECTABLE and no data, as a vault that found an uncorrectable word would answer it.
Beside a response, a second due vault's 1-FLIT response (WR_RS or ERROR) may leave in the same cycle
(`second`, picked round robin after the first). `storage_bytes` of data exist; higher addresses
alias onto them, with their own vault and bank timing.

Latency: a response is on `source` exactly ceil((frontend + DRAM + backend) / tCK-per-cycle) cycles after
its request was taken, at least 3: the queue looks two cycles ahead of the due time to cover its two
stages (pick a due vault, read the slot's data). At 250 MHz (5 tCK a cycle), unloaded: RD64 9 cycles
(44 tCK, 35.2 ns), RD128 11 (52 tCK), WR64 9. This is a model of a device, built for the Verilator SoC
and unit tests, not for a board: its timing arithmetic (40-bit compares and adds on a 128-entry array) is
one cycle deep.
"""

import math

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.hmc.packet import *

TCK_NS = 0.8
TIMINGS_NS = {"tBURST": 3.2, "tRCD": 10.2, "tCL": 9.9, "tRP": 7.7, "tRAS": 21.6, "tWR": 8.0, "tRTP": 4.9,
              "frontend": 4.0, "backend": 4.0}
BURST_BYTES = 32
VAULTS, BANKS = 16, 8
# A link's share of the crossbar: the paper's "40 GB/s per link or quadrant (10 GB/s per vault x 4)" (s.3.2).
# Our address map spreads a link's blocks over all 16 vaults, so the vaults' own 10 GB/s would allow 160.
LINK_DATA_GBPS = 40
CREDIT_FRACTION = 16    # credits are 1/16 of a data FLIT
TIME_BITS = 40    # tCK since reset: 880 s at 1250 MHz
QUEUE_LEAD_CYCLES = 2
LINE_FLITS = 64 // FLIT_BYTES   # the poisoned line: the memory card's 64 B line, half a 128 B block

request_layout = [
    ("cmd",  6),
    ("lng",  4),
    ("tag",  TAG_BITS),
    ("adrs", ADDR_BITS),
    ("slid", 3),
    ("data", 8 * MAX_DATA_BYTES),   # payload FLIT 1 at bits [127:0]
]

response_layout = [
    ("cmd",     6),
    ("lng",     4),
    ("tag",     TAG_BITS),
    ("errstat", 7),
    ("slid",    3),
    ("data",    8 * MAX_DATA_BYTES),
    # A second response of one FLIT (WR_RS or ERROR) retired in the same cycle, from another vault.
    ("second",         1),
    ("second_cmd",     6),
    ("second_tag",     TAG_BITS),
    ("second_errstat", 7),
    ("second_slid",    3),
]


def timings_tck():
    """Every timing constant in whole tCK (rounded up)."""
    return {name: math.ceil(ns / TCK_NS - 1e-9) for name, ns in TIMINGS_NS.items()}


def ticks_per_cycle(clk_freq):
    ticks = 1e9 / clk_freq / TCK_NS
    assert abs(ticks - round(ticks)) < 1e-6, f"{clk_freq / 1e6} MHz is not a whole number of {TCK_NS} ns tCK"
    return round(ticks)


def unloaded_tck(n_bytes):
    """tCK from a request's arrival at an idle vault to its response being due (the docstring's sum)."""
    t = timings_tck()
    return t["frontend"] + t["tRCD"] + t["tCL"] + math.ceil(n_bytes / BURST_BYTES) * t["tBURST"] + t["backend"]


def unloaded_cycles(n_bytes, clk_freq):
    return max(math.ceil(unloaded_tck(n_bytes) / ticks_per_cycle(clk_freq)), QUEUE_LEAD_CYCLES + 1)


def round_robin_pick(requests, grant, last):
    """Statements giving `grant` the first requesting index after `last`, wrapping (combinational)."""
    n = len(requests)
    order = [(last + 1 + k) % n for k in range(n)]
    pick = If(requests[order[0]], grant.eq(order[0]))
    for i in order[1:]:
        pick = pick.Elif(requests[i], grant.eq(i))
    return pick


class _Port:
    """One request port's decode and DRAM timing (combinational), against the vaults' bank and bus state."""
    def __init__(self, module, sink, now, bank_ready, bus_ready, poison, poison_line):
        t = timings_tck()
        block_bits, vault_bits, bank_bits = log2_int(MAX_DATA_BYTES), log2_int(VAULTS), log2_int(BANKS)
        self.vault      = vault      = Signal(vault_bits)
        self.bank       = bank       = Signal(bank_bits)
        self.first_flit = first_flit = Signal(3)
        self.flits      = flits      = Signal(4)     # payload FLITs asked for or carried, 1..8
        self.end_flit   = end_flit   = Signal(5)     # first_flit + flits, widened: above 8 crosses the block
        expect_lng = Signal(4)
        self.is_read, self.is_write, self.is_posted = is_read, is_write, is_posted = Signal(), Signal(), Signal()
        self.posted_type = posted_type = Signal()    # posted writes of any kind get no response, even an ERROR
        self.errstat = errstat = Signal(7)
        refusal = Signal(7)                          # a request not executed: answered at once, no bank touched
        self.refused = refused = Signal()
        # A read that touches the poisoned line (its half of the 128 B block): the DRAM is read as ever, and
        # the answer is ERROR, as for an uncorrectable word.
        self.poisoned = poisoned = Signal()
        line_half = poison_line[0]
        touches_line = Signal()
        module.comb += [
            vault.eq(sink.adrs[block_bits:block_bits + vault_bits]),
            bank.eq(sink.adrs[block_bits + vault_bits:block_bits + vault_bits + bank_bits]),
            first_flit.eq(sink.adrs[4:block_bits]),
            flits.eq(sink.cmd[:3] + 1),
            end_flit.eq(first_flit + flits),
            is_read.eq(sink.cmd[3:] == T_READ >> 3),
            is_write.eq(sink.cmd[3:] == T_WRITE >> 3),
            is_posted.eq(sink.cmd[3:] == T_POSTED_WRITE >> 3),
            posted_type.eq(is_posted | (sink.cmd[3:] == T_POSTED_MISC_WRITE >> 3)),
            expect_lng.eq(Mux(is_read, 1, flits + 1)),
            If(~(is_read | is_write | is_posted),
                refusal.eq(ERRSTAT_INVALID_CMD)
            ).Elif(sink.lng != expect_lng,
                refusal.eq(ERRSTAT_INVALID_LNG)
            ).Elif(end_flit > MAX_DATA_BYTES // FLIT_BYTES,
                refusal.eq(ERRSTAT_CROSSES_BLOCK)
            ),
            refused.eq(refusal != 0),
            touches_line.eq((sink.adrs[block_bits:] == poison_line[1:]) &
                            Mux(line_half, end_flit > LINE_FLITS, first_flit < LINE_FLITS)),
            poisoned.eq(poison & is_read & touches_line & ~refused),
            errstat.eq(Mux(poisoned, ERRSTAT_UNCORRECTABLE, refusal)),
        ]

        arrive, act_at, first_data, data_start = (Signal(TIME_BITS, name=n) for n in
                                                  ("arrive", "act_at", "first_data", "data_start"))
        burst_time, ras_end, read_pre, write_pre = (Signal(TIME_BITS, name=n) for n in
                                                    ("burst_time", "ras_end", "read_pre", "write_pre"))
        data_end, precharge, due = (Signal(TIME_BITS, name=n) for n in ("data_end", "precharge", "due"))
        self.data_end, self.precharge, self.due = data_end, precharge, due
        self.this_bank = this_bank = Signal(vault_bits + bank_bits)
        module.comb += [
            this_bank.eq(Cat(bank, vault)),
            arrive.eq(now + t["frontend"]),
            act_at.eq(Mux(bank_ready[this_bank] > arrive, bank_ready[this_bank], arrive)),
            first_data.eq(act_at + t["tRCD"] + t["tCL"]),
            data_start.eq(Mux(bus_ready[vault] > first_data, bus_ready[vault], first_data)),
            burst_time.eq(((flits + 1) >> 1) * t["tBURST"]),
            data_end.eq(data_start + burst_time),
            ras_end.eq(act_at + t["tRAS"]),
            # The last column command leaves tCL before the last burst; the bank precharges tRTP after it.
            read_pre.eq(data_end + t["tRTP"] - t["tBURST"] - t["tCL"]),
            write_pre.eq(data_end + t["tWR"]),
            If(is_read,
                precharge.eq(Mux(read_pre > ras_end, read_pre, ras_end))
            ).Else(
                precharge.eq(Mux(write_pre > ras_end, write_pre, ras_end))
            ),
            due.eq(Mux(refused, arrive, data_end + t["backend"])),
        ]


class HMCVaults(LiteXModule):
    def __init__(self, clk_freq=250e6, storage_bytes=64 * 1024, queue_depth=4, link_data_gbps=LINK_DATA_GBPS):
        self.sink   = sink   = stream.Endpoint(request_layout)
        self.sink2  = sink2  = stream.Endpoint(request_layout)   # 1-FLIT requests (reads); its data is unused
        self.source = source = stream.Endpoint(response_layout)
        self.reads  = Signal(32)   # requests taken, by kind
        self.writes = Signal(32)
        self.errors = Signal(32)   # ERROR responses (and bad posted writes), the poisoned line's among them
        # A line whose reads are answered ERROR (ERRSTAT_UNCORRECTABLE), as an uncorrectable DRAM word would be.
        self.poison      = Signal()
        self.poison_line = Signal(ADDR_BITS - log2_int(LINE_FLITS * FLIT_BYTES))   # byte address / 64
        self.poisoned    = Signal(32)   # reads of it answered ERROR

        # # #

        t = timings_tck()
        tpc = ticks_per_cycle(clk_freq)
        block_bits, vault_bits = log2_int(MAX_DATA_BYTES), log2_int(VAULTS)
        blocks = storage_bytes // MAX_DATA_BYTES
        assert blocks >= 1 and blocks & (blocks - 1) == 0, "storage_bytes must be a power of two of 128 B blocks"
        depth_bits = log2_int(queue_depth)
        flit_count = MAX_DATA_BYTES // FLIT_BYTES

        now  = Signal(TIME_BITS)
        lead = Signal(TIME_BITS)
        self.sync += now.eq(now + tpc)
        self.comb += lead.eq(now + QUEUE_LEAD_CYCLES * tpc)

        bank_ready = Array(Signal(TIME_BITS, name=f"bank_ready{i}") for i in range(VAULTS * BANKS))
        bus_ready  = Array(Signal(TIME_BITS, name=f"bus_ready{i}") for i in range(VAULTS))
        ports = [_Port(self, s, now, bank_ready, bus_ready, self.poison, self.poison_line) for s in (sink, sink2)]

        # Vault queues: per vault a ring of `queue_depth` entries; an entry's slot holds its read data.
        entry_layout = [("due", TIME_BITS), ("respond", 1), ("cmd", 6), ("lng", 4), ("tag", TAG_BITS),
                        ("errstat", 7), ("slid", 3)]
        queues = []
        for v in range(VAULTS):
            q = Record([("wp", depth_bits + 1), ("rp", depth_bits + 1)], name=f"vault{v}")
            q.entries = Array(Record(entry_layout, name=f"vault{v}_entry{e}") for e in range(queue_depth))
            q.count = Signal(depth_bits + 1, name=f"vault{v}_count")
            self.comb += q.count.eq(q.wp - q.rp)
            queues.append(q)
        # The second port takes a request in the cycle the first takes one only for another vault: the two
        # never touch one queue, bank or bus in a cycle.
        takes = [Signal(name=f"take{i}") for i in range(2)]
        has_room = Array(q.count < queue_depth for q in queues)
        # The link's crossbar port: requests move their data FLITs (read or written) at `link_data_gbps` at
        # most; credits accrue each cycle and hold two 128 B requests' worth, so an idle link adds no delay.
        earn  = round(link_data_gbps * 1e9 / clk_freq / FLIT_BYTES * CREDIT_FRACTION)
        most  = 2 * flit_count * CREDIT_FRACTION
        credits = Signal(max=most + earn + 1, reset=most)
        costs   = [Signal(max=most // 2 + 1, name=f"cost{i}") for i in range(2)]
        need2, spent = Signal(max=most + 1), Signal(max=most + 1)   # sums widened before they are compared
        after   = Signal(max=2 * most + earn + 1)
        self.comb += [
            [cost.eq(port.flits * CREDIT_FRACTION) for cost, port in zip(costs, ports)],
            sink.ready.eq(has_room[ports[0].vault] & (credits >= costs[0])),
            takes[0].eq(sink.valid & sink.ready),
            need2.eq(Mux(takes[0], costs[0], 0) + costs[1]),
            sink2.ready.eq(has_room[ports[1].vault] & ~(takes[0] & (ports[0].vault == ports[1].vault)) &
                           (credits >= need2)),
            takes[1].eq(sink2.valid & sink2.ready),
            spent.eq(Mux(takes[0], costs[0], 0) + Mux(takes[1], costs[1], 0)),
            after.eq(credits + earn - spent),
        ]
        self.sync += credits.eq(Mux(after > most, most, after))
        for port, take, s in zip(ports, takes, (sink, sink2)):
            for v, q in enumerate(queues):
                entry = q.entries[q.wp[:depth_bits]]
                self.sync += If(take & (port.vault == v),
                    q.wp.eq(q.wp + 1),
                    entry.due.eq(port.due),
                    entry.respond.eq(~port.posted_type),
                    entry.cmd.eq(Mux(port.errstat != 0, ERROR, Mux(port.is_read, RD_RS, WR_RS))),
                    entry.lng.eq(Mux(port.is_read & (port.errstat == 0), port.flits + 1, 1)),
                    entry.tag.eq(s.tag),
                    entry.errstat.eq(port.errstat),
                    entry.slid.eq(s.slid),
                )
            self.sync += If(take & ~port.refused,
                bank_ready[port.this_bank].eq(port.precharge + t["tRP"]),
                bus_ready[port.vault].eq(port.data_end),
            )
        kinds = {"errors":   lambda port: port.errstat != 0,
                 "poisoned": lambda port: port.poisoned,
                 "reads":    lambda port: (port.errstat == 0) & port.is_read,
                 "writes":   lambda port: (port.errstat == 0) & ~port.is_read}
        for name, kind in kinds.items():
            taken_now = Signal(2, name=f"{name}_taken")     # both ports' requests of this kind this cycle
            self.comb += taken_now.eq(sum((take & kind(port) for port, take in zip(ports, takes)), Constant(0, 2)))
            self.sync += getattr(self, name).eq(getattr(self, name) + taken_now)

        # Data: written or read when the request is taken; read data lands in the request's slot a cycle later.
        # The first port writes (a 1-FLIT request carries no data); both read.
        self.specials.storage = storage = Memory(8 * MAX_DATA_BYTES, blocks)
        self.specials.store_w = store_w = storage.get_port(write_capable=True, we_granularity=FLIT_BITS)
        self.specials.slots   = slots   = Memory(8 * MAX_DATA_BYTES, VAULTS * queue_depth)
        self.specials.slot_r  = slot_r  = slots.get_port()

        def block(s):
            return s.adrs[block_bits:block_bits + log2_int(blocks)] if blocks > 1 else 0
        placed = Array((Cat(Constant(0, FLIT_BITS * k), sink.data) if k else sink.data)[:8 * MAX_DATA_BYTES]
                       for k in range(flit_count))
        first = ports[0]
        self.comb += [
            store_w.adr.eq(block(sink)),
            store_w.dat_w.eq(placed[first.first_flit]),
            store_w.we.eq(Cat(*[takes[0] & (first.is_write | first.is_posted) & (first.errstat == 0) &
                                (first.first_flit <= f) & (first.end_flit > f) for f in range(flit_count)])),
        ]
        wp_of = Array(q.wp[:depth_bits] for q in queues)
        for i, (port, take, s) in enumerate(zip(ports, takes, (sink, sink2))):
            store_r = storage.get_port()
            slot_w  = slots.get_port(write_capable=True)
            self.specials += store_r, slot_w
            read_taken = Signal(name=f"read_taken{i}")
            read_slot  = Signal(vault_bits + depth_bits, name=f"read_slot{i}")
            read_first = Signal(3, name=f"read_first{i}")
            self.sync += [
                read_taken.eq(take & port.is_read & (port.errstat == 0)),
                read_slot.eq(Cat(wp_of[port.vault], port.vault)),
                read_first.eq(port.first_flit),
            ]
            self.comb += [
                store_r.adr.eq(block(s)),
                slot_w.adr.eq(read_slot),
                slot_w.dat_w.eq(Array(store_r.dat_r[FLIT_BITS * k:] for k in range(flit_count))[read_first]),
                slot_w.we.eq(read_taken),
            ]

        # Responses: a vault whose head is due (two cycles early) is picked round robin; its slot is read; the
        # response enters the output FIFO the next cycle. Beside a response, a second one of one FLIT (WR_RS
        # or ERROR) from another due vault leaves with it, picked round robin too.
        out = stream.SyncFIFO(response_layout, 4, buffered=False)
        self.submodules += out
        head_of = [q.entries[q.rp[:depth_bits]] for q in queues]
        heads   = Array(head_of)
        due_now = Signal(VAULTS)
        due_one = Signal(VAULTS)    # due, answering, one FLIT, and not the vault picked first
        retire, retire2 = Signal(), Signal()
        grant, grant2 = Signal(vault_bits), Signal(vault_bits)
        last, last2 = Signal(vault_bits), Signal(vault_bits)   # the vaults picked last: the searches start after
        self.comb += [
            due_now.eq(Cat(*[(q.count != 0) & (head.due <= lead) for q, head in zip(queues, head_of)])),
            retire.eq((due_now != 0) & (out.level < 3)),
            Case(last, {l: round_robin_pick(due_now, grant, l) for l in range(VAULTS)}),
            due_one.eq(Cat(*[due_now[v] & (grant != v) & head.respond & (head.lng == 1)
                             for v, head in enumerate(head_of)])),
            retire2.eq(retire & heads[grant].respond & (due_one != 0)),
            Case(last2, {l: round_robin_pick(due_one, grant2, l) for l in range(VAULTS)}),
        ]
        self.sync += [If(retire, last.eq(grant)), If(retire2, last2.eq(grant2))]
        picked, picked2 = Record(entry_layout), Record(entry_layout)
        picked_valid, picked2_valid = Signal(), Signal()
        self.sync += [
            picked_valid.eq(retire),
            picked.eq(heads[grant]),
            picked2_valid.eq(retire2),
            picked2.eq(heads[grant2]),
        ]
        for v, q in enumerate(queues):
            self.sync += If((retire & (grant == v)) | (retire2 & (grant2 == v)), q.rp.eq(q.rp + 1))
        self.comb += [
            slot_r.adr.eq(Cat(Array(q.rp[:depth_bits] for q in queues)[grant], grant)),
            out.sink.valid.eq(picked_valid & picked.respond),
            out.sink.cmd.eq(picked.cmd),
            out.sink.lng.eq(picked.lng),
            out.sink.tag.eq(picked.tag),
            out.sink.errstat.eq(picked.errstat),
            out.sink.slid.eq(picked.slid),
            out.sink.data.eq(Mux(picked.cmd == RD_RS, slot_r.dat_r, 0)),
            out.sink.second.eq(picked2_valid),
            out.sink.second_cmd.eq(picked2.cmd),
            out.sink.second_tag.eq(picked2.tag),
            out.sink.second_errstat.eq(picked2.errstat),
            out.sink.second_slid.eq(picked2.slid),
            out.source.connect(source),
        ]
