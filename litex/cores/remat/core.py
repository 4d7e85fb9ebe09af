#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ReMAT: remote memory access and translation.

masters (ports) -> round-robin arbiter + BFCT lookup -> tagger -> streamer -> the section's target
targets' answers -> response FIFO -> tag match -> the port that asked

Targets: 0 is the link (remote port 0); with `n_targets` > 1, target 1 is the compute card's local memory,
on a transaction port of the same layout. Tags are shared by every target.

Latency added by ReMAT, one request: 2 cycles out (arbiter/BFCT stage, tag/streamer stage), 2 cycles back
(response FIFO, tag match). A faulting access never reaches the link: it is answered at once with an
error, counted, and its address and kind are latched.

Request timeout: an access not answered within `timeout` cycles (0: never) is answered with an error
(FAULT_TIMEOUT), so a master never waits forever on a dead link. Its tag stays reserved until the late
answer comes (then dropped), so a tag is never reused while an answer to it may still arrive. An access
still waiting to be sent when its time runs out is answered the same way.
"""


from migen import *
from migen.genlib.roundrobin import RoundRobin, SP_CE

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.layouts import *
from monet.cores.remat.bfct import BFCT, FAULT_NONE, FAULT_REMOTE, FAULT_TIMEOUT
from monet.cores.remat.port import RematPort, port_req_layout


class ReMAT(LiteXModule):
    """Bridges `n_ports` master ports to one link, with up to `tags` requests outstanding.

    Parameters: n_ports (round-robin arbitrated), n_sections and section_bits (BFCT geometry; the window is
    n_sections * 2**section_bits bytes), tags (outstanding requests; size it by Little's law,
    bandwidth x round trip / 64 B), n_targets (`sources`/`sinks`: one transaction port each; `source` and
    `sink` are target 0's, the link's). Answers from the link are always accepted; another target's wait
    while the link's go first.
    """
    def __init__(self, n_sections, section_bits, tags, n_ports=2, timeout=4_000_000, n_targets=1):
        assert tags <= 2**TAG_BITS
        self.ports   = [RematPort() for _ in range(n_ports)]
        self.sources = [stream.Endpoint(txn_layout) for _ in range(n_targets)]   # requests to each target
        self.sinks   = [stream.Endpoint(txn_layout) for _ in range(n_targets)]   # their answers
        self.source  = self.sources[0]            # to the link.
        self.sink    = self.sinks[0]              # from the link (always accepted).
        self.window_size = n_sections << section_bits

        # Counters and fault latch (also exported by add_control()).
        self.faults      = Signal(32)
        self.fault_addr  = Signal(32)
        self.fault_kind  = Signal(3)
        self.requests    = Signal(32)
        self.lat_last    = Signal(32)
        self.lat_min     = Signal(32, reset=2**32 - 1)
        self.lat_max     = Signal(32)
        self.lat_sum     = Signal(64)
        self.lat_count   = Signal(32)
        self.lat_clear   = Signal()
        self.outstanding = Signal(max=tags + 1)
        # Streamer pacing: requests a cycle at most, in 1/65536 (0: no limit). Models a streamer slower than
        # one line a cycle, such as the MONet paper's MM-to-stream conversion (see host/monet/profiles.py).
        self.issue_rate  = Signal(16)
        self.timeout     = Signal(32, reset=timeout)
        self.timeouts    = Signal(32)

        # # #

        self.now = now = Signal(32)   # cycles since reset: request timestamps (wraps: latencies are mod 2**32).
        self.sync += now.eq(now + 1)

        # Stage A: round-robin arbitration and BFCT lookup ---------------------------------------------
        self.bfct = bfct = BFCT(n_sections=n_sections, section_bits=section_bits, n_targets=n_targets)
        self.rr   = rr   = RoundRobin(n_ports, SP_CE)
        reqs = [p.req for p in self.ports]
        sel  = Record(port_req_layout)
        self.comb += [
            rr.request.eq(Cat(*[r.valid for r in reqs])),
            Case(rr.grant, {i: sel.raw_bits().eq(reqs[i].payload.raw_bits()) for i in range(n_ports)}),
            bfct.addr.eq(sel.addr),
            bfct.we.eq(sel.we),
        ]

        a_valid = Signal()
        a_port  = Signal(max=max(n_ports, 2))
        a_req   = Record(port_req_layout)
        a_fault = Signal(3)
        a_raddr = Signal(len(bfct.raddr))
        a_target = Signal(len(bfct.target))
        a_time  = Signal(32)
        a_ready = Signal()
        # Only the granted port's request is taken; the grant moves on once it is taken or idle.
        granted = Signal()
        take    = Signal()
        self.comb += [
            granted.eq(Array(r.valid for r in reqs)[rr.grant]),
            take.eq(granted & (~a_valid | a_ready)),
            rr.ce.eq(take | ~granted),
        ]
        for i, r in enumerate(reqs):
            self.comb += r.ready.eq((rr.grant == i) & (~a_valid | a_ready))
        self.sync += [
            If(a_ready, a_valid.eq(0)),
            If(take,
                a_valid.eq(1),
                a_port.eq(rr.grant),
                a_req.raw_bits().eq(sel.raw_bits()),
                a_fault.eq(bfct.fault),
                a_raddr.eq(bfct.raddr),
                a_target.eq(bfct.target),
                a_time.eq(now),
            )
        ]

        # Stage B: tag allocation and streaming onto the link; faults go straight back. ---------------
        free     = Signal(tags, reset=2**tags - 1)
        free_tag = Signal(max=tags)
        have_tag = Signal()
        self.comb += have_tag.eq(free != 0)
        self.comb += [If(free[t], free_tag.eq(t)) for t in reversed(range(tags))]

        tag_port = Array(Signal(max=max(n_ports, 2), name=f"tag_port{t}") for t in range(tags))
        tag_id   = Array(Signal(8, name=f"tag_id{t}") for t in range(tags))
        tag_time = Array(Signal(32, name=f"tag_time{t}") for t in range(tags))
        tag_addr = Array(Signal(32, name=f"tag_addr{t}") for t in range(tags))

        fault_rsp = Signal()  # stage A holds a faulting access that is being answered this cycle.
        to_link   = Signal()   # stage A's request goes to its target
        sent      = Signal()   # ... and the target takes it this cycle
        a_age     = Signal(32)
        a_expired = Signal()  # stage A's access waited too long for a tag or the link.
        a_bad     = Signal()
        self.comb += [
            a_age.eq(now - a_time),
            a_expired.eq((self.timeout != 0) & (a_age > self.timeout)),
            a_bad.eq((a_fault != FAULT_NONE) | a_expired),
        ]
        # Pacing: a token bucket of one request, filled by issue_rate each cycle (0 cycles of latency). A
        # request goes in the cycle this cycle's fill completes its token and the fraction left over stays,
        # so requests leave at exactly `issue_rate` on average (3/8: gaps of 3, 3, 2); only an idle bucket
        # is capped, at one request.
        tokens     = Signal(17)
        tokens_sum = Signal(18)
        tokens_out = Signal(18)
        paced      = Signal()
        self.comb += [
            paced.eq((self.issue_rate == 0) | (tokens_sum >= 2**16)),
            tokens_sum.eq(tokens + self.issue_rate),
            tokens_out.eq(tokens_sum - Mux(sent, 2**16, 0)),
        ]
        self.sync += tokens.eq(Mux(tokens_out > 2**16, 2**16, tokens_out))
        self.comb += [
            to_link.eq(a_valid & ~a_bad & have_tag & paced),
            sent.eq(to_link & Array(t.ready for t in self.sources)[a_target]),
        ]
        for i, target in enumerate(self.sources):
            self.comb += [
                target.valid.eq(to_link & (a_target == i)),
                target.type.eq(Mux(a_req.we, T_WR_REQ, T_RD_REQ)),
                target.tag.eq(free_tag),
                target.laddr.eq(a_raddr[6:]),
                target.mask.eq(a_req.mask),
                target.data.eq(a_req.data),
            ]

        # Responses: from the link (tag matched) or a fault from stage A. ---------------------------------
        # The answers of every target in one FIFO (no more than `tags` are ever in it): the link's first.
        self.rsp_fifo = rsp_fifo = stream.SyncFIFO(txn_layout, tags, buffered=False)
        answer = If(self.sinks[0].valid, self.sinks[0].connect(rsp_fifo.sink))
        for target in self.sinks[1:]:
            answer = answer.Elif(target.valid, target.connect(rsp_fifo.sink))
        self.comb += answer
        link_rsp = rsp_fifo.source
        rtag     = Signal(max=tags)
        self.comb += rtag.eq(link_rsp.tag)
        # Tags in flight past the timeout: one tag examined a cycle. An expired tag is a zombie until its late
        # answer arrives, which is then dropped.
        zombie    = Signal(tags)
        scan      = Signal(max=tags)
        scan_age  = Signal(32)
        overdue   = Signal()
        expire    = Signal()   # answer the scanned tag with a timeout error this cycle.
        late      = Signal()   # the link answers a zombie: free the tag, tell no one.
        is_free   = Array(free[t] for t in range(tags))
        is_zombie = Array(zombie[t] for t in range(tags))
        self.comb += [
            scan_age.eq(now - tag_time[scan]),
            overdue.eq((self.timeout != 0) & ~is_free[scan] & ~is_zombie[scan] & (scan_age > self.timeout)),
            late.eq(link_rsp.valid & is_zombie[rtag]),
        ]

        # Link responses go first, then a stage-A fault, then an expired tag.
        self.comb += [
            link_rsp.ready.eq(1),
            fault_rsp.eq(a_valid & a_bad & ~link_rsp.valid),
            expire.eq(overdue & ~link_rsp.valid & ~fault_rsp),
            a_ready.eq((sent) | fault_rsp),
        ]
        self.sync += If(~overdue | expire, scan.eq(Mux(scan == tags - 1, 0, scan + 1)))
        rsp_port = Signal(max=max(n_ports, 2))
        rsp_time = Signal(32)
        rsp_err  = Signal()
        rsp_any  = Signal()
        rsp_id   = Signal(8)
        self.comb += [
            rsp_any.eq((link_rsp.valid & ~late) | fault_rsp | expire),
            If(link_rsp.valid,
                rsp_port.eq(tag_port[rtag]), rsp_time.eq(tag_time[rtag]), rsp_err.eq(link_rsp.type == T_ERR),
                rsp_id.eq(tag_id[rtag]),
            ).Elif(fault_rsp,
                rsp_port.eq(a_port), rsp_time.eq(a_time), rsp_err.eq(1), rsp_id.eq(a_req.id),
            ).Else(
                rsp_port.eq(tag_port[scan]), rsp_time.eq(tag_time[scan]), rsp_err.eq(1), rsp_id.eq(tag_id[scan]),
            ),
        ]
        for i, p in enumerate(self.ports):
            self.comb += [
                p.rsp.valid.eq(rsp_any & (rsp_port == i)),
                p.rsp.data.eq(Mux(rsp_err, 2**LINE_BITS - 1, link_rsp.data)),
                p.rsp.err.eq(rsp_err),
                p.rsp.id.eq(rsp_id),
            ]

        # Tag bookkeeping: allocate on send, free on response, in the same cycle if need be.
        alloc = Signal(tags)
        release = Signal(tags)
        self.comb += [
            If(sent, alloc.eq(1 << free_tag)),
            If(link_rsp.valid, release.eq(1 << rtag)),
        ]
        expired = Signal(tags)
        self.comb += If(expire, expired.eq(1 << scan))
        self.sync += [
            zombie.eq((zombie | expired) & ~release),
            free.eq((free & ~alloc) | release),
            If(sent,
                tag_port[free_tag].eq(a_port),
                tag_id[free_tag].eq(a_req.id),
                tag_time[free_tag].eq(a_time),
                tag_addr[free_tag].eq(a_req.addr),
            ),
            self.outstanding.eq(self.outstanding + (sent) - link_rsp.valid),
        ]

        # Counters, fault latch and latency statistics (port request accepted -> response delivered).
        latency = Signal(32)
        self.comb += latency.eq(now - rsp_time)
        remote_err = Signal()
        self.comb += remote_err.eq(link_rsp.valid & ~late & (link_rsp.type == T_ERR))
        self.sync += [
            If(sent, self.requests.eq(self.requests + 1)),
            If((fault_rsp & a_expired) | expire, self.timeouts.eq(self.timeouts + 1)),
            If(fault_rsp,
                self.faults.eq(self.faults + 1),
                self.fault_addr.eq(a_req.addr),
                self.fault_kind.eq(Mux(a_fault != FAULT_NONE, a_fault, FAULT_TIMEOUT)),
            ).Elif(expire,
                self.faults.eq(self.faults + 1),
                self.fault_addr.eq(tag_addr[scan]),
                self.fault_kind.eq(FAULT_TIMEOUT),
            ).Elif(remote_err,
                self.faults.eq(self.faults + 1),
                self.fault_addr.eq(tag_addr[rtag]),
                self.fault_kind.eq(FAULT_REMOTE),
            ),
            If(self.lat_clear,
                self.lat_min.eq(2**32 - 1),
                self.lat_max.eq(0),
                self.lat_sum.eq(0),
                self.lat_count.eq(0),
            ).Elif(link_rsp.valid & ~late & ~remote_err,
                self.lat_last.eq(latency),
                If(latency < self.lat_min, self.lat_min.eq(latency)),
                If(latency > self.lat_max, self.lat_max.eq(latency)),
                self.lat_sum.eq(self.lat_sum + latency),
                self.lat_count.eq(self.lat_count + 1),
            ),
        ]

    def add_control(self):
        self.bfct.add_control()
        self._faults      = CSRStatus(32, description="Accesses ended with a bus error (BFCT or remote).")
        self._fault_addr  = CSRStatus(32, description="Window offset of the last faulting access.")
        self._fault_kind  = CSRStatus(3,  description="1 unmapped/disabled, 2 no read, 3 no write, 4 no target, 5 remote, "
                                               "6 timeout.")
        self._requests    = CSRStatus(32, description="Requests sent on the link.")
        self._outstanding = CSRStatus(8,  description="Requests in flight now.")
        self._lat_last    = CSRStatus(32, description="Latency of the last remote access, cycles, port to port.")
        self._lat_min     = CSRStatus(32)
        self._lat_max     = CSRStatus(32)
        self._lat_sum     = CSRStatus(64)
        self._lat_count   = CSRStatus(32)
        self._lat_clear   = CSR()  # write: clear the latency statistics.
        self._issue_rate  = CSRStorage(16, description="Streamer pacing: requests a cycle in 1/65536, 0 unlimited.")
        self._timeout     = CSRStorage(32, reset=self.timeout.reset.value,
                                       description="Request timeout, cycles (0: never): then a bus error.")
        self._timeouts    = CSRStatus(32, description="Accesses ended by the request timeout.")
        self.comb += [
            self.issue_rate.eq(self._issue_rate.storage),
            self.timeout.eq(self._timeout.storage),
            self._timeouts.status.eq(self.timeouts),
            self._faults.status.eq(self.faults),
            self._fault_addr.status.eq(self.fault_addr),
            self._fault_kind.status.eq(self.fault_kind),
            self._requests.status.eq(self.requests),
            self._outstanding.status.eq(self.outstanding),
            self._lat_last.status.eq(self.lat_last),
            self._lat_min.status.eq(self.lat_min),
            self._lat_max.status.eq(self.lat_max),
            self._lat_sum.status.eq(self.lat_sum),
            self._lat_count.status.eq(self.lat_count),
            self.lat_clear.eq(self._lat_clear.re),
        ]
