#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""ReMAT: remote memory access and translation.

masters (ports) -> round-robin arbiter + BFCT lookup -> tagger -> streamer -> the section's target
targets' answers (the link's first) -> answer stage (tag record read, registered) -> the port that asked

Targets: 0 is the link (remote port 0); with `n_targets` > 1, target 1 is the compute card's local memory,
on a transaction port of the same layout. Tags are shared by every target.

Latency added by ReMAT, one request: 1 cycle out (the arbiter/BFCT stage, a register; the tag/streamer
stage is logic after it, so the link takes a request the cycle after its port's request is taken), 1 cycle
back (the registered answer stage, which reads the tag's record at the answer's tag); the stage timers
measure both (`remat_out`, `remat_back`). A faulting access never
reaches the link: it is answered through the answer stage (1 cycle after stage A), counted, and its
address and kind are latched. Counters and latency statistics follow an answer by a cycle (the 64-bit sum's
high word by two), off its path.

Logic depth (issue 14, `monet board estimate`): 8 LUT levels with 128 tags and 3 ports (30 before, 72 with
Yosys's default wide-LUT mapping). Free tags come from a free list (a ring of ids in LUT RAM) rather than a
priority search over the free mask, the tags' records are LUT RAM read at the answer's tag and at the
scanned tag, and the timeout scan is three stages.

Hold (`with_hold`, the pooled model's cards): while `hold` is high no port's request is taken, so none is
translated by a BFCT entry about to change; `drained` says the requests taken before it have all been
answered. Without it the ports' paths are as they were; with it, an AND more on each port's valid and ready.

Request timeout: an access not answered within `timeout` cycles (0: never) is answered with an error
(FAULT_TIMEOUT), so a master never waits forever on a dead link. Its tag stays reserved until the late
answer comes (then dropped), so a tag is never reused while an answer to it may still arrive. An access
still waiting to be sent when its time runs out is answered the same way. The scan finds an overdue tag
within a lap of `tags` cycles (plus its 3 stages) of its timeout, and holds it until the answer stage is
free.

A tag is free again in its answer's cycle (the old response FIFO freed it a cycle later), so with every
tag out a new request can leave a cycle sooner; with fewer requests in flight than tags nothing changes.
"""


from migen import *
from migen.genlib.roundrobin import RoundRobin, SP_CE

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.arith import add_in_two_words
from monet.cores.common.freelist import FreeList
from monet.cores.common.layouts import *
from monet.cores.remat.bfct import BFCT
from monet.cores.remat.codes import FAULT_NONE, FAULT_REMOTE, FAULT_TIMEOUT
from monet.cores.remat.port import RematPort, port_req_layout


class ReMAT(LiteXModule):
    """Bridges `n_ports` master ports to one link, with up to `tags` requests outstanding.

    Parameters: n_ports (round-robin arbitrated), n_sections and section_bits (BFCT geometry; the window is
    n_sections * 2**section_bits bytes), tags (outstanding requests; size it by Little's law,
    bandwidth x round trip / 64 B), n_targets (`sources`/`sinks`: one transaction port each; `source` and
    `sink` are target 0's, the link's). Answers from the link are always accepted; another target's wait
    while the link's go first.
    """
    def __init__(self, n_sections, section_bits, tags, n_ports=2, timeout=4_000_000, n_targets=1, with_hold=False):
        assert tags <= 2**TAG_BITS, f"tags: at most {2**TAG_BITS} (the link's tag field), not {tags}"
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
        # one line a cycle, such as the MONet paper's MM-to-stream conversion (see host/monet/link/profiles.py).
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
        # `hold` (with_hold): the ports' requests wait where they are, none taken (nor translated) meanwhile.
        self.hold = Signal()
        offered = [r.valid & ~self.hold for r in reqs] if with_hold else [r.valid for r in reqs]
        sel  = Record(port_req_layout)
        self.comb += [
            rr.request.eq(Cat(*offered)),
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
        # Stage A's wait, counted rather than subtracted from `now`, so that the timeout's comparison is the
        # only carry chain before `a_expired`; it holds a cycle's comparison: exactly `a_age > timeout`.
        a_age     = Signal(32)
        a_expired = Signal()   # stage A's access waited too long for a tag or the link.
        # Only the granted port's request is taken; the grant moves on once it is taken or idle.
        granted = Signal()
        self.taken = take = Signal()   # a port's request is taken: the cycle its latency starts.
        self.comb += [
            granted.eq(Array(offered)[rr.grant]),
            take.eq(granted & (~a_valid | a_ready)),
            rr.ce.eq(take | ~granted),
        ]
        for i, r in enumerate(reqs):
            self.comb += r.ready.eq((rr.grant == i) & (~a_valid | a_ready) & (~self.hold if with_hold else 1))
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
        self.sync += [
            a_age.eq(Mux(take, 1, a_age + 1)),
            a_expired.eq(~take & (self.timeout != 0) & (a_age >= self.timeout)),
        ]

        # Stage B: tag allocation and streaming onto the link; faults go back through the answer stage. ---
        assert tags >= 4 and tags & (tags - 1) == 0, "tags: a power of two, 4 or more (the timeout scan's stages)"
        self.free_tags = free_tags = FreeList(tags)
        free_tag = free_tags.head
        # What each tag in flight was for: written when its request is sent, read when it is answered (at the
        # answer's tag) and by the timeout scan (at the scanned tag): LUT RAM.
        port_bits = bits_for(max(n_ports - 1, 1))
        tag_info_layout = [("port", port_bits), ("id", TAG_BITS), ("time", 32), ("addr", 32)]
        tag_info = Memory(layout_len(tag_info_layout), tags)    # not an attribute: it is not for the CSR space
        info_write  = tag_info.get_port(write_capable=True)
        info_answer = tag_info.get_port(async_read=True)
        info_scan   = tag_info.get_port(async_read=True)
        self.specials += tag_info, info_write, info_answer, info_scan
        answered_info, scanned_info, sent_info = [Record(tag_info_layout) for _ in range(3)]
        self.comb += [
            answered_info.raw_bits().eq(info_answer.dat_r),
            scanned_info.raw_bits().eq(info_scan.dat_r),
            sent_info.port.eq(a_port), sent_info.id.eq(a_req.id), sent_info.time.eq(a_time),
            sent_info.addr.eq(a_req.addr),
            info_write.adr.eq(free_tag),
            info_write.dat_w.eq(sent_info.raw_bits()),
        ]
        busy = Signal(tags)     # tags out (in flight or zombie)

        to_link   = Signal()   # stage A's request goes to its target
        sent      = Signal()   # ... and the target takes it this cycle
        a_bad     = Signal()
        self.comb += a_bad.eq((a_fault != FAULT_NONE) | a_expired)
        # Pacing: a token bucket of one request, filled by issue_rate each cycle (0 cycles of latency). A
        # request goes in the cycle this cycle's fill completes its token and the fraction left over stays,
        # so requests leave at exactly `issue_rate` on average (3/8: gaps of 3, 3, 2); only an idle bucket
        # is capped, at one request. Both next fills are made before `sent` chooses (sum < 2**17: bit 16 says
        # whether the token is complete), and so is whether the next cycle's fill completes a token
        # (`complete`, a register: the sum's carry chain stays off the path through `sent` to the free list).
        # A new issue_rate takes part in `complete` a cycle after it is written.
        tokens     = Signal(17)
        tokens_sum = Signal(17)
        refill_sum = Signal(17)     # the next cycle's sum if the bucket keeps the fraction
        complete   = Signal()       # this cycle's sum has bit 16 set
        paced      = Signal()
        self.comb += [
            tokens_sum.eq(tokens + self.issue_rate),
            refill_sum.eq(tokens_sum[:16] + self.issue_rate),
            paced.eq((self.issue_rate == 0) | complete),
        ]
        self.sync += [
            tokens.eq(Mux(tokens_sum[16] == sent, tokens_sum[:16], 2**16)),
            # A capped bucket (2**16) plus any rate completes a token.
            complete.eq(Mux(tokens_sum[16] == sent, refill_sum[16], 1)),
        ]
        self.comb += [
            to_link.eq(a_valid & ~a_bad & free_tags.available & paced),
            sent.eq(to_link & Array(t.ready for t in self.sources)[a_target]),
            free_tags.pop.eq(sent),
            info_write.we.eq(sent),
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

        # Answers: the link's are always taken; another target's waits while the link's go first. -------
        answer      = Signal()          # a target answers this cycle: its tag is freed
        answer_tag  = Signal(max=tags)
        answer_type = Signal(len(self.sink.type))
        answer_data = Signal(LINE_BITS)
        answer_late = Signal()          # ... for a zombie (looked up at each target's tag, then chosen)
        zombie = Signal(tags)           # tags whose access timed out; their late answer is dropped
        choice = None
        for i, target in enumerate(self.sinks):
            take_it = [answer_tag.eq(target.tag), answer_type.eq(target.type), answer_data.eq(target.data),
                       answer_late.eq((zombie >> target.tag)[0])]
            choice = If(target.valid, *take_it) if choice is None else choice.Elif(target.valid, *take_it)
            self.comb += target.ready.eq(Cat(*[s.valid for s in self.sinks[:i]]) == 0 if i else 1)
        self.comb += [
            choice,
            answer.eq(Cat(*[s.valid for s in self.sinks]) != 0),
            info_answer.adr.eq(answer_tag),
            free_tags.push.eq(answer),
            free_tags.push_id.eq(answer_tag),
        ]

        # Timeout scan: one tag a cycle, in three stages (read the tag's record and whether it is out, its
        # group of 16 tags first; its age and its own bit; older than the timeout?), then answered with a
        # timeout error once the answer stage is free: the scan holds until then. A tag answered while it is
        # in the scan's stages drops out of them. An expired tag is a zombie until its late answer arrives,
        # which is then dropped.
        scan = Signal(max=tags)
        hold = Signal()     # an overdue tag waits for the answer stage
        self.sync += If(~hold, scan.eq(scan + 1))
        self.comb += info_scan.adr.eq(scan)
        waiting = Signal(tags)      # tags in flight and not expired
        self.comb += waiting.eq(busy & ~zombie)
        group_bits = min(4, log2_int(tags))
        groups = [waiting[g << group_bits:(g + 1) << group_bits] for g in range(tags >> group_bits)]

        def answered(tag):
            return answer & (answer_tag == tag)
        s1_tag, s2_tag, s3_tag = Signal(max=tags), Signal(max=tags), Signal(max=tags)
        s1_group = Signal(1 << group_bits)
        s1_fresh, s2_out, s3_overdue = Signal(), Signal(), Signal()
        s1_info, s2_info, s3_info = [Record(tag_info_layout) for _ in range(3)]
        s2_age = Signal(32)
        self.sync += If(hold,
            s1_fresh.eq(s1_fresh & ~answered(s1_tag)),
            s2_out.eq(s2_out & ~answered(s2_tag)),
            s3_overdue.eq(s3_overdue & ~answered(s3_tag)),
        ).Else(
            s1_tag.eq(scan), s1_info.eq(scanned_info), s1_fresh.eq(~answered(scan)),
            s1_group.eq(Array(groups)[scan[group_bits:]] if len(groups) > 1 else groups[0]),
            s2_tag.eq(s1_tag), s2_info.eq(s1_info), s2_age.eq(now - s1_info.time),
            s2_out.eq((s1_group >> s1_tag[:group_bits])[0] & s1_fresh & ~answered(s1_tag)),
            s3_tag.eq(s2_tag), s3_info.eq(s2_info),
            s3_overdue.eq(s2_out & (self.timeout != 0) & (s2_age > self.timeout) & ~answered(s2_tag)),
        )

        # The answer stage: one answer a cycle to a port, registered (1 cycle): a target's answer first, then a
        # stage-A fault, then an expired tag. -------------------------------------------------------------
        fault_rsp = Signal()   # stage A's faulting access is answered this cycle
        expire    = Signal()   # the scan's overdue tag is answered with a timeout error this cycle
        self.comb += [
            fault_rsp.eq(a_valid & a_bad & ~answer),
            expire.eq(s3_overdue & ~answer & ~fault_rsp),
            hold.eq(s3_overdue & ~expire),
            a_ready.eq(sent | fault_rsp),
        ]
        rsp_valid = Signal()       # an answer for rsp_port ...
        rsp_late  = Signal()       # ... unless it is a zombie's late answer
        rsp_port  = Signal(port_bits)
        rsp_id    = Signal(TAG_BITS)
        rsp_err   = Signal()
        rsp_data  = Signal(LINE_BITS)
        rsp_time  = Signal(32)     # when the access was taken
        rsp_fault = Signal(3)      # FAULT_* to count and latch
        rsp_addr  = Signal(32)     # the access's window offset
        rsp_timed_out = Signal()   # the access ran out of time (a BFCT fault may be what is latched)
        ones = 2**LINE_BITS - 1
        remote_error = answer_type == T_ERR
        self.sync += [
            rsp_valid.eq(answer | fault_rsp | expire),
            rsp_late.eq(answer & answer_late),
            rsp_timed_out.eq(~answer & ((fault_rsp & a_expired) | expire)),
            If(answer,
                rsp_port.eq(answered_info.port), rsp_id.eq(answered_info.id), rsp_err.eq(remote_error),
                rsp_data.eq(Mux(remote_error, ones, answer_data)), rsp_time.eq(answered_info.time),
                rsp_fault.eq(Mux(remote_error, FAULT_REMOTE, FAULT_NONE)), rsp_addr.eq(answered_info.addr),
            ).Elif(fault_rsp,
                rsp_port.eq(a_port), rsp_id.eq(a_req.id), rsp_err.eq(1), rsp_data.eq(ones),
                rsp_fault.eq(Mux(a_fault != FAULT_NONE, a_fault, FAULT_TIMEOUT)), rsp_addr.eq(a_req.addr),
            ).Else(
                rsp_port.eq(s3_info.port), rsp_id.eq(s3_info.id), rsp_err.eq(1),
                rsp_data.eq(ones), rsp_fault.eq(FAULT_TIMEOUT), rsp_addr.eq(s3_info.addr),
            ),
        ]
        self.delivered = delivered = Signal()   # an answer goes to its port: the cycle its latency ends.
        self.comb += delivered.eq(rsp_valid & ~rsp_late)
        for i, p in enumerate(self.ports):
            self.comb += [
                p.rsp.valid.eq(delivered & (rsp_port == i)),
                p.rsp.data.eq(rsp_data),
                p.rsp.err.eq(rsp_err),
                p.rsp.id.eq(rsp_id),
            ]

        # Tag bookkeeping: out on send, back on its answer, in the same cycle if need be.
        def one_hot(strobe, tag):
            return Mux(strobe, 1 << tag, 0)
        self.sync += [
            busy.eq((busy | one_hot(sent, free_tag)) & ~one_hot(answer, answer_tag)),
            zombie.eq((zombie | one_hot(expire, s3_tag)) & ~one_hot(answer, answer_tag)),
            self.outstanding.eq(self.outstanding + sent - answer),
        ]
        self.with_hold = with_hold
        self.drained   = Signal()   # nothing taken and not yet sent, nothing in flight (a hold has taken effect)
        self.comb += self.drained.eq(~a_valid & (self.outstanding == 0))

        # Counters, fault latch and latency statistics (port request accepted -> response delivered), a
        # cycle after the answer: they are not on its path.
        latency   = Signal(32)
        timed     = Signal()       # `latency` is a good answer's
        counted   = Signal(3)      # FAULT_* of the answer to count, if any
        count_addr = Signal(32)
        count_timeout = Signal()
        self.sync += [
            latency.eq(now - rsp_time),
            timed.eq(delivered & (rsp_fault == FAULT_NONE)),
            counted.eq(Mux(delivered, rsp_fault, FAULT_NONE)),
            count_addr.eq(rsp_addr),
            count_timeout.eq(rsp_valid & rsp_timed_out),
        ]
        add_in_two_words(self, self.lat_sum, Mux(timed, latency, 0), self.lat_clear)
        self.sync += [
            If(sent, self.requests.eq(self.requests + 1)),
            If(count_timeout, self.timeouts.eq(self.timeouts + 1)),
            If(counted != FAULT_NONE,
                self.faults.eq(self.faults + 1),
                self.fault_addr.eq(count_addr),
                self.fault_kind.eq(counted),
            ),
            If(self.lat_clear,
                self.lat_min.eq(2**32 - 1),
                self.lat_max.eq(0),
                self.lat_count.eq(0),
            ).Elif(timed,
                self.lat_last.eq(latency),
                If(latency < self.lat_min, self.lat_min.eq(latency)),
                If(latency > self.lat_max, self.lat_max.eq(latency)),
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
        self._outstanding = CSRStatus(len(self.outstanding), description="Requests in flight now.")
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
        if self.with_hold:
            self._hold    = CSRStorage(1, description="Requests wait at the ports, none taken (a card about to "
                                                      "move: its BFCT remapped, its circuit switched).")
            self._drained = CSRStatus(1, description="Nothing taken and not yet sent, nothing in flight.")
            self.comb += [self.hold.eq(self._hold.storage), self._drained.status.eq(self.drained)]
