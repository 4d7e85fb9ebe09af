#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ReMAT's combiner: the CPU's cacheable window onto a ReMAT port.

The CPU's data cache refills a 32 B line as a burst of eight 32-bit reads and writes through word by word.
Sent one by one, every word would cost a remote round trip. The combiner turns them into line transactions:

- Reads: a read buffer of `read_lines` 64 B lines. A word that misses it fetches its line, or with
  `fetch_lines` = 2 the aligned 128 B pair (the double-line transaction, two requests in flight together),
  and the rest of the burst, and the next burst on the same line, are served from the buffer.
- Writes: posted. A word written is acknowledged at once and merged, with its byte enables, into a
  write-combining line; the line leaves as one masked line transaction when a write goes to another line,
  when a read misses (so a read never overtakes a write), after `flush_idle` cycles without a write, or on a
  fence. A written line is dropped from the read buffer, so reads always see the CPU's own writes.
- Fence (`fence` pulse, the `fence` CSR): sends the buffered line, then drops every read line; `idle` says
  when nothing is buffered or in flight. Software fences before it reads through another path (the
  uncached window, the benchmark block) what it wrote here, and after others wrote what it reads here.

Order: the link and the memory card keep one line's requests in order, so a read issued after a write to
the same line returns the written data without waiting for the write's answer.

A posted write that faults cannot end the CPU's access with an error (it was acknowledged already): ReMAT
counts and latches it as it does every fault, and `write_errors` counts it here. A read that faults ends
with `err` and all ones, as on the uncached window.

Latency (cycles, stb to ack), as a local SRAM for hits and writes: a read hit 1 + 1 (lookup, registered
ack), a write 1 + 1; a read miss 2 (lookup, request) plus the port's round trip plus 1. A write to another
line, or a read miss while a line is buffered, first hands that line to ReMAT: 2 cycles more.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import *

from monet.cores.common.layouts import LINE_BYTES, LINE_BITS, TAG_BITS

WORDS = LINE_BITS // 32   # 32-bit words in a line
WRITE_ID = 0x80           # the port's id of a posted write; reads carry their read-buffer entry


class CombiningWishbonePort(LiteXModule):
    """The CPU's cacheable window: 32-bit Wishbone accesses in, line transactions on a ReMAT port out.

    Parameters: window_size (bytes; addresses wrap at it), read_lines (read-buffer lines, a power of two, at
    least 2),
    flush_idle (cycles without a write after which the write-combining line leaves).
    Run time: `fetch_lines` (1 or 2 lines a read miss), `fence`.
    """
    def __init__(self, port, window_size, read_lines=4, flush_idle=64):
        assert read_lines >= 2 and read_lines & (read_lines - 1) == 0   # entries wrap round robin
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.fetch_lines  = Signal(2, reset=2)
        self.fence        = Signal()
        self.idle         = Signal()
        # Counters: read words served from the buffer, lines fetched, combined write lines, words written,
        # posted writes that faulted.
        self.read_hits    = Signal(32)
        self.fetches      = Signal(32)
        self.write_lines  = Signal(32)
        self.write_words  = Signal(32)
        self.write_errors = Signal(32)

        # # #

        line_bits = log2_int(window_size) - log2_int(LINE_BYTES)
        addr_line = Signal(line_bits)
        addr_word = Signal(4)
        access    = Signal()
        self.comb += [
            addr_word.eq(bus.adr[0:4]),
            addr_line.eq(bus.adr[4:4 + line_bits]),
            # Not in the ack cycle: the master still holds the access it is being acknowledged for.
            access.eq(bus.cyc & bus.stb & ~bus.ack),
        ]

        # Read buffer: entry e holds line `tag[e]` when `valid[e]`; `pending[e]` while its fetch is in flight;
        # a write to a pending line marks it `dropped`, so the fetch's (older) data is not kept.
        valid   = Signal(read_lines)
        pending = Signal(read_lines)
        dropped = Signal(read_lines)
        tags    = Array(Signal(line_bits, name=f"rb_tag{e}") for e in range(read_lines))
        lines   = Array(Signal(LINE_BITS, name=f"rb_line{e}") for e in range(read_lines))
        hit_any = Signal()
        hit     = Signal(max=read_lines)
        line_match = Signal(read_lines)   # entries, valid or pending, that hold the addressed line
        self.comb += [
            line_match.eq(Cat(*[(tags[e] == addr_line) & (valid[e] | pending[e]) for e in range(read_lines)])),
            hit_any.eq((line_match & valid) != 0),
        ]
        self.comb += [If(line_match[e] & valid[e], hit.eq(e)) for e in reversed(range(read_lines))]
        hit_line = Signal(LINE_BITS)
        self.comb += hit_line.eq(lines[hit])
        hit_words = Array(hit_line[32*w:32*(w+1)] for w in range(WORDS))

        # Write-combining line.
        wc_valid = Signal()
        wc_line  = Signal(line_bits)
        wc_data  = Signal(LINE_BITS)
        wc_mask  = Signal(LINE_BYTES)
        wc_age   = Signal(max=flush_idle + 1)
        word_bits = Signal(LINE_BITS)    # the written word at its place in the line
        word_mask = Signal(LINE_BYTES)
        self.comb += [
            word_bits.eq(Replicate(bus.dat_w, WORDS)),
            Case(addr_word, {w: word_mask[4*w:4*(w+1)].eq(bus.sel) for w in range(WORDS)}),
        ]
        byte_keep = Signal(LINE_BITS)    # 1 where the buffered line keeps its byte
        self.comb += [byte_keep[8*i:8*(i+1)].eq(Replicate(~word_mask[i], 8)) for i in range(LINE_BYTES)]

        writes_in_flight = Signal(max=2**TAG_BITS + 1)   # posted lines not yet answered (ReMAT's tags bound them)
        fence_wanted = Signal()
        next_entry   = Signal(max=read_lines)   # where the next fetch goes (round robin, in pairs)
        fetch_entry  = Signal(max=read_lines)   # the entry the stalled read waits for
        fetch_sent   = Signal()                 # requests of the current fetch handed to ReMAT (0 or 1)
        fetch_line   = Signal(line_bits)        # the demanded line
        fetch_pair   = Signal()
        self.comb += [
            fetch_pair.eq(self.fetch_lines == 2),
            self.idle.eq(~wc_valid & (writes_in_flight == 0) & (pending == 0) & ~fence_wanted),
        ]

        # Requests on the port: the write-combining line (flush) or a line fetch.
        flushing  = Signal()
        fetching  = Signal()
        req_entry = Signal(max=read_lines)
        req_line  = Signal(line_bits)   # the line the fetch asks for now: the demanded one, or each of its pair
        self.comb += [
            req_entry.eq(next_entry + fetch_sent),
            req_line.eq(Mux(fetch_pair, Cat(fetch_sent[0], fetch_line[1:]), fetch_line)),
            port.req.valid.eq(flushing | fetching),
            port.req.addr.eq(Cat(Constant(0, log2_int(LINE_BYTES)), Mux(flushing, wc_line, req_line))),
            port.req.we.eq(flushing),
            port.req.mask.eq(Mux(flushing, wc_mask, 2**LINE_BYTES - 1)),
            port.req.data.eq(wc_data),
            port.req.id.eq(Mux(flushing, WRITE_ID, req_entry)),
            port.rsp.ready.eq(1),
        ]

        # Answers: posted writes' acknowledgements, and fetched lines into their entries.
        rsp_write = Signal()
        rsp_entry = Signal(max=read_lines)
        flush_taken = Signal()
        self.comb += [
            rsp_write.eq(port.rsp.id == WRITE_ID),
            rsp_entry.eq(port.rsp.id[:len(rsp_entry)]),
            flush_taken.eq(flushing & port.req.ready),
        ]
        self.sync += [
            writes_in_flight.eq(writes_in_flight + flush_taken - (port.rsp.valid & rsp_write)),
            If(port.rsp.valid & rsp_write & port.rsp.err, self.write_errors.eq(self.write_errors + 1)),
        ]
        fill = Signal(read_lines)   # the entry answered this cycle
        self.comb += If(port.rsp.valid & ~rsp_write, fill.eq(1 << rsp_entry))
        self.sync += If(port.rsp.valid & ~rsp_write, lines[rsp_entry].eq(port.rsp.data))

        # Read-buffer bookkeeping. A fetch starts only when none is pending, so a claimed entry is neither
        # pending nor dropped; a fence, or a write, that meets a pending entry drops its late answer.
        claim      = Signal(read_lines)   # a fetch request for the entry leaves this cycle
        invalidate = Signal(read_lines)   # a write to the entry's line, or a fence
        fill_ok    = Signal(read_lines)
        self.comb += fill_ok.eq(fill & ~dropped & ~invalidate & Replicate(~port.rsp.err, read_lines))
        self.sync += [
            pending.eq((pending | claim) & ~fill),
            dropped.eq((dropped | (invalidate & pending)) & ~fill),
            valid.eq((valid & ~invalidate & ~claim) | fill_ok),
        ]
        for e in range(read_lines):
            self.sync += If(claim[e], tags[e].eq(req_line))

        # Control: the FSM decides, the registers below follow its strobes.
        merge      = Signal()   # the write merges into the write-combining line and is acknowledged
        fence_done = Signal()
        fetch_start = Signal()
        ack     = Signal()
        ack_err = Signal()
        ack_dat = Signal(32)
        write_here = Signal()   # the write can merge into the buffered line (or there is none)
        self.comb += write_here.eq(~wc_valid | (wc_line == addr_line))
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(access & bus.we,
                If(write_here,
                    merge.eq(1),
                    ack.eq(1),
                    invalidate.eq(line_match),
                ).Else(
                    NextState("FLUSH"),
                )
            ).Elif(access,
                If(hit_any,
                    ack.eq(1),
                    ack_dat.eq(hit_words[addr_word]),
                ).Elif(wc_valid,
                    NextState("FLUSH"),
                ).Elif(pending == 0,
                    fetch_start.eq(1),
                    NextState("FETCH"),
                )
            ).Elif(wc_valid & (fence_wanted | (wc_age == flush_idle)),
                NextState("FLUSH"),
            ).Elif(fence_wanted,
                invalidate.eq(2**read_lines - 1),
                fence_done.eq(1),
            )
        )
        fsm.act("FLUSH",
            flushing.eq(1),
            If(port.req.ready, NextState("IDLE"))
        )
        fetch_taken = Signal()
        sent_all    = Signal()
        self.comb += [
            fetch_taken.eq(fetching & port.req.ready),
            sent_all.eq(fetch_sent == fetch_pair),
            If(fetch_taken, claim.eq(1 << req_entry)),
        ]
        fsm.act("FETCH",
            fetching.eq(1),
            If(port.req.ready & sent_all, NextState("WAIT"))
        )
        # The demanded line's answer; its pair partner may come later and fills its entry on its own.
        rsp_words = Array(port.rsp.data[32*w:32*(w+1)] for w in range(WORDS))
        fsm.act("WAIT",
            If(Array(fill[e] for e in range(read_lines))[fetch_entry],
                ack.eq(1),
                ack_err.eq(port.rsp.err),
                ack_dat.eq(rsp_words[addr_word]),
                NextState("IDLE"),
            )
        )

        self.sync += [
            bus.ack.eq(ack),
            bus.err.eq(ack & ack_err),
            If(ack, bus.dat_r.eq(ack_dat)),
            If(self.fence, fence_wanted.eq(1)).Elif(fence_done, fence_wanted.eq(0)),
            If(merge,
                wc_valid.eq(1),
                wc_line.eq(addr_line),
                wc_data.eq((wc_data & byte_keep) | (word_bits & ~byte_keep)),
                wc_mask.eq(Mux(wc_valid, wc_mask, 0) | word_mask),
                wc_age.eq(0),
                self.write_words.eq(self.write_words + 1),
            ).Else(
                If(flush_taken, wc_valid.eq(0)),
                If(wc_valid & (wc_age != flush_idle), wc_age.eq(wc_age + 1)),
            ),
            If(flush_taken, self.write_lines.eq(self.write_lines + 1)),
            If(ack & ~merge & (fsm.ongoing("IDLE")), self.read_hits.eq(self.read_hits + 1)),
            If(fetch_start, fetch_line.eq(addr_line), fetch_sent.eq(0)),
            If(fetch_taken,
                self.fetches.eq(self.fetches + 1),
                fetch_sent.eq(fetch_sent + 1),
                If(req_line == fetch_line, fetch_entry.eq(req_entry)),
                If(sent_all, next_entry.eq(next_entry + 1 + fetch_pair)),
            ),
        ]

    def add_control(self):
        self._fetch_lines  = CSRStorage(2, reset=self.fetch_lines.reset.value,
                                        description="Lines a read miss fetches: 1, or 2 (the aligned 128 B pair).")
        self._fence        = CSR()   # write: send the buffered write line, then drop every read line.
        self._idle         = CSRStatus(description="Nothing buffered or in flight (after a fence: it is done).")
        self._read_hits    = CSRStatus(32, description="Read words served from the read buffer.")
        self._fetches      = CSRStatus(32, description="Lines fetched on read misses.")
        self._write_lines  = CSRStatus(32, description="Combined write-line transactions sent.")
        self._write_words  = CSRStatus(32, description="Words written by the CPU.")
        self._write_errors = CSRStatus(32, description="Posted writes answered with an error.")
        self.comb += [
            self.fetch_lines.eq(self._fetch_lines.storage),
            self.fence.eq(self._fence.re),
            self._idle.status.eq(self.idle),
            self._read_hits.status.eq(self.read_hits),
            self._fetches.status.eq(self.fetches),
            self._write_lines.status.eq(self.write_lines),
            self._write_words.status.eq(self.write_words),
            self._write_errors.status.eq(self.write_errors),
        ]
