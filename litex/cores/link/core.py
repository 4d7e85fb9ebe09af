#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""One end of a MONet-open link: retry buffer + framer + striper out, deskew + deframer + sequence check in."""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import *

from monet.cores.common.csr import add_status
from monet.cores.common.layouts import *
from monet.cores.common.restart import RestartInserter
from monet.cores.link.packing import PackedFramer, PackedDeframer
from monet.cores.link.lanes import LaneStriper, LaneDeskew
from monet.cores.link.retry import RetryBuffer, SequenceChecker, ReorderStore, CreditGate, CreditReturn
from monet.cores.link.prbs import LanePRBS
from monet.cores.common.wire import HEADER


class LinkEndpoint(LiteXModule):
    """Transactions in and out; lane words to and from the PHY (or the sim channel).

    TX latency: 2 cycles for a transaction alone on an idle link (retry buffer 0, the framer's cut-through 2),
    4 otherwise. RX latency: 2 cycles after the beat with the frame's trailer for a frame of one unit that
    comes while the deframer holds nothing else (its cut-through), 6 otherwise (deframer). Under load, up to `max_units` transactions share a frame and its CRC trailer, and
    beats are full. Transactions are delivered once, in order and intact: damaged frames are replayed
    (go-back-N from a retry buffer of `retry_depth` transactions, see retry.py). With `with_selective_repeat`
    and the `retry` CSR's `selective` set at both ends, only the damaged frame is resent and the good ones
    behind it wait in a ReorderStore of 2 x `retry_depth` transactions: 0 cycles more in sequence, at least
    3 behind a loss. With the `retry` CSR's `repair` set too, a frame whose CRC names one flipped bit is put
    right at the receiver instead of resent (link/repair.py's FrameRepair, in the deframer): the frames behind
    it wait in the ReorderStore meanwhile, as behind a loss.

    Credits: requests wait at a credit gate while `credit_limit` of them (0: no limit) are between it and
    the peer's consumer, which returns a credit for each REQUESTS_PER_CREDIT requests it takes
    (`credit_freed` at the peer, a request at a time).

    Watchdog: `rx_up` is the PHY's receive status (locked and aligned). When it comes back after a drop the
    link re-initializes without a reset: everything unacknowledged is replayed at once; `reinits` and
    `down_cycles` count it.

    Restart: `restart` (a strobe) starts the link afresh for a new peer, as a circuit switch gives it one
    (phy/switch.py): sequence numbers, retry buffer, reorder store, credits and frames half made or half
    received return to their power-up state; the counters (`counters()`) are kept. Whatever was not yet
    acknowledged is dropped, so a card's requests must all be answered before its circuit moves, and none
    sent until it is lit (ReMAT's `hold` keeps them back). No cycle on the data path, no logic on it.
    """
    def __init__(self, lanes_log2, max_units=8, retry_depth=256, credit_limit=0, with_selective_repeat=True):
        self.sink   = stream.Endpoint(txn_layout)   # transactions to send.
        self.source = stream.Endpoint(txn_layout)   # transactions received (always accept).
        self.rx_up  = Signal(reset=1)
        self.credit_freed = Signal()                # our consumer took a request: a credit for the peer.
        self.restart = Signal()                     # a new peer: start afresh (counters kept)
        self.reinits     = Signal(32)
        self.down_cycles = Signal(32)
        self.with_selective_repeat = with_selective_repeat

        # # #

        restartable = RestartInserter(self.restart, kept=lambda: [signal for signal, _ in self.counters().values()])
        self.credits  = credits  = CreditGate(limit=credit_limit)      # restarted by its flush
        self.freed    = freed    = restartable(CreditReturn())
        self.retry    = retry    = restartable(RetryBuffer(depth=retry_depth))
        self.framer   = framer   = restartable(PackedFramer(max_units=max_units))
        self.striper  = striper  = restartable(LaneStriper(lanes_log2))
        self.deskew   = deskew   = restartable(LaneDeskew(lanes_log2))
        self.deframer = deframer = restartable(PackedDeframer())
        store_depth = 2 * retry_depth
        self.checker  = checker  = restartable(SequenceChecker(store_depth=store_depth if with_selective_repeat else 0))
        self.prbs     = prbs     = LanePRBS(lanes_log2)
        self.comb += [
            self.sink.connect(credits.sink),
            credits.flush.eq(self.restart),
            credits.source.connect(retry.sink),
            retry.source.connect(framer.sink),
            framer.source.connect(striper.sink),
            striper.source.connect(prbs.sink),
            deskew.source.connect(deframer.sink),
            # Received frames: sequence check, and the peer's ack and nak for our retry buffer.
            checker.frame_end.eq(deframer.frame_end),
            checker.frame_ok.eq(deframer.frame_ok),
            checker.frame_seq.eq(deframer.frame_seq),
            checker.frame_txns.eq(deframer.frame_txns),
            deframer.seq_ok.eq(checker.seq_ok),
            retry.ack_valid.eq(deframer.frame_end & deframer.frame_ok | deframer.repaired_trailer),
            retry.ack.eq(deframer.frame_ack),
            retry.nak.eq(deframer.frame_nak),
            credits.returned_valid.eq(deframer.frame_end & deframer.frame_ok),
            credits.returned.eq(deframer.frame_credits),
            # Our ack, nak and credit count go out in the next trailer.
            freed.freed.eq(self.credit_freed),
            framer.ack.eq(checker.ack),
            framer.nak.eq(checker.nak),
            framer.credits.eq(freed.count),
            framer.ctrl_request.eq(checker.ctrl_request | freed.ctrl_request | retry.ctrl_request),
            checker.ctrl_sent.eq(framer.ctrl_sent),
            freed.ctrl_sent.eq(framer.ctrl_sent),
            retry.ctrl_sent.eq(framer.ctrl_sent),
        ]
        if with_selective_repeat:
            self.reorder = reorder = restartable(ReorderStore(depth=store_depth))
            repair = deframer.repair
            self.comb += [
                deframer.source.connect(reorder.sink),
                reorder.source.connect(self.source),
                reorder.commit.eq(deframer.frame_end & deframer.frame_ok & checker.seq_ok & checker.has_txns),
                reorder.commit_seq.eq(deframer.frame_seq),
                reorder.commit_txns.eq(deframer.frame_txns),
                reorder.commit_in_seq.eq(checker.in_seq),
                reorder.committed.eq(deframer.fifo.committed),
                reorder.fifo_valid.eq(deframer.fifo.source.valid & deframer.fifo.source.ready),
                reorder.expected.eq(checker.ack),
                reorder.held_any.eq(checker.held_any),
                deframer.seq_direct.eq(reorder.direct),
                checker.reordering.eq(reorder.reordering),
                checker.delivered.eq(reorder.delivered),
                # A failed frame kept for its repair from the CRC (link/repair.py): no nak while it is kept; once
                # repaired, the checker receives it and the ReorderStore takes its transactions.
                checker.repair_hold.eq(repair.park | repair.parked),
                checker.repair_fallback.eq(repair.fallback),
                checker.repair_offer.eq(repair.offer),
                checker.repair_seq.eq(repair.seq),
                checker.repair_txns.eq(repair.txns),
                repair.offer_ready.eq(checker.repair_ready),
                repair.offer_take.eq(checker.repair_take),
                repair.source.connect(reorder.inject),
                reorder.repair_begin.eq(repair.start),
                reorder.repair_busy.eq(repair.parked),
                retry.closed.eq(framer.closed),
                retry.closed_first.eq(framer.closed_first),
                retry.closed_last.eq(framer.closed_last),
            ]
        else:
            self.comb += deframer.source.connect(self.source)
        up_before = Signal(reset=1)
        came_up   = Signal()
        self.comb += [
            came_up.eq(self.rx_up & ~up_before),
            retry.restart.eq(came_up),
            checker.reset_wait.eq(came_up),
        ]
        self.sync += [
            up_before.eq(self.rx_up),
            If(came_up, self.reinits.eq(self.reinits + 1)),
            If(~self.rx_up, self.down_cycles.eq(self.down_cycles + 1)),
        ]
        # Lanes to and from the PHY; while the PRBS checkers run, received words go to them only.
        self.tx_lanes = prbs.source
        self.rx_lanes = [stream.Endpoint(lane_layout(lane)) for lane in range(MAX_LANES)]
        for rx, snk, tap in zip(self.rx_lanes, deskew.sinks, prbs.rx_taps):
            self.comb += [
                rx.connect(snk, omit={"valid", "ready"}),
                rx.connect(tap, omit={"valid", "ready"}),
                snk.valid.eq(rx.valid & ~prbs.rx_enable),
                tap.valid.eq(rx.valid & prbs.rx_enable),
                rx.ready.eq(snk.ready | prbs.rx_enable),
            ]

    def connect_phy(self, tx, rx_sources):
        """Wires this endpoint's lanes to a channel direction (tx) and the opposite one (rx)."""
        return [self.tx_lanes.connect(tx)] + [src.connect(snk) for src, snk in zip(rx_sources, self.rx_lanes)]

    def watch_stages(self, timer, sent=None, framed=None, deframed=None, delivered=None):
        """Points of a StageTimer at this end: `sent`, a transaction taken at `sink`; `framed`, a beat that
        starts a unit leaving the framer for the lanes; `deframed`, one entering the deframer from the lanes;
        `delivered`, a transaction out of `source`. Control frames (a trailer alone) are not units."""
        endpoints = {"sent": self.sink, "delivered": self.source}
        for point, key in ((sent, "sent"), (delivered, "delivered")):
            if point is not None:
                timer.watch(point, endpoints[key].valid, endpoints[key].ready)
        for point, beat in ((framed, self.framer.source), (deframed, self.deskew.source)):
            if point is not None:
                types = [HEADER.get(beat.data[BLOCK_BITS*k:BLOCK_BITS*(k + 1)], "type") for k in range(BEAT_BLOCKS)]
                timer.watch(point, beat.valid, beat.ready, beat.ctrl, beat.count, *types, decode=starts_unit)

    def counters(self):
        """{name: (signal, description)}: the counters add_control() exports, which a restart keeps."""
        return {
            "frames":         (self.deframer.frames,      "Frames received (trailers seen), good or not."),
            "crc_errors":     (self.deframer.crc_errors,  "Frames dropped for a bad CRC."),
            "pairs":          (self.framer.pairs,         "Pairs of lines sent under one header."),
            "replays":        (self.retry.replays,        "Rewinds of the retry buffer (naks, timeouts, re-inits)."),
            "timeouts":       (self.retry.timeouts,       "Rewinds on a timeout."),
            "replayed_txns":  (self.retry.replayed_txns,  "Transactions sent again."),
            "replayed_bytes": (self.retry.replayed_bytes, "Wire bytes of the units sent again."),
            "window_stalls":  (self.retry.window_stalls,  "Cycles a transaction waited for room in the retry window."),
            "credit_stalls":  (self.credits.stalls,       "Cycles a request waited for a credit."),
            "naks":           (self.checker.naks,         "Replays asked of the peer."),
            "duplicates":     (self.checker.duplicates,   "Frames dropped as already delivered."),
            "out_of_order":   (self.checker.out_of_order, "Good frames dropped after a lost one."),
            "reinits":        (self.reinits,              "Link re-initializations (receive side back up)."),
            "down_cycles":    (self.down_cycles,          "Cycles the receive side was down."),
            "nak_replays":    (self.retry.nak_replays,    "Rewinds on the peer's nak alone (replays = nak_replays + "
                                                          "timeouts + reinit_replays)."),
            "reinit_replays": (self.retry.reinit_replays, "Rewinds on a re-initialization that no timeout met."),
            "deframer_overflow": (self.deframer.overflow, "Beats that found no room in the deframer's ring "
                                                          "(their frames fail the CRC and are replayed)."),
            "commit_overflow":   (self.deframer.commit_overflow, "Transactions lost to a full commit FIFO (a "
                                                                 "consumer that stopped taking)."),
            "resends":        (self.retry.resends,        "Frames resent alone (selective repeat)."),
            "held":           (self.checker.held,         "Good frames kept behind a lost one (selective repeat)."),
            "repairable":     (self.deframer.repairable,  "Frames dropped for a CRC whose syndrome names one flipped "
                                                          "bit inside them (a repair could keep them)."),
            "repair_missed":  (self.deframer.locator.missed, "Failed frames not scanned: the locator's queue was "
                                                             "full."),
            "repaired":       (self.deframer.repair.repaired, "Frames repaired from their CRC and received."),
        }

    def add_control(self):
        self.prbs.add_prbs_control()
        self._framing    = CSRStorage(fields=[
            CSRField("max_units", size=4, reset=8, description="Units per frame at most (1..8)."),
            CSRField("pairing",   size=1, reset=1, description="Two consecutive lines may share a header."),
        ])
        self._retry      = CSRStorage(fields=[
            CSRField("timeout", size=16, reset=4096, description="Cycles without progress before a replay or a new nak."),
            CSRField("nak",     size=1,  reset=1,    description="Replay on the peer's nak (0: on timeouts only)."),
            CSRField("selective", size=1, reset=0,
                     description="Selective repeat: keep good frames behind a lost one, resend only that one "
                                 "(0: go-back-N). Both ends alike."),
            CSRField("repair", size=1, reset=0,
                     description="Under selective repeat, repair a frame whose CRC names one flipped bit instead "
                                 "of asking for it again (a frame with three flipped bits or more can pass as "
                                 "one: rarely, at high error rates)."),
        ])
        self._credit_limit = CSRStorage(len(self.credits.limit), reset=self.credits.limit.reset.value,
                                        description=f"Requests allowed toward the peer's consumer: 0 (no limit) or "
                                                    f"{REQUESTS_PER_CREDIT} to {MAX_CREDIT_LIMIT}.")
        for name, (signal, description) in self.counters().items():
            add_status(self, name, signal, description)
        if self.with_selective_repeat:
            self.comb += self.deframer.repair.enable.eq(self._retry.fields.repair & self._retry.fields.selective)
        self.comb += [
            self.framer.max_units.eq(self._framing.fields.max_units),
            self.framer.pairing.eq(self._framing.fields.pairing),
            self.retry.timeout.eq(self._retry.fields.timeout),
            self.checker.timeout.eq(self._retry.fields.timeout),
            self.retry.with_nak.eq(self._retry.fields.nak),
            self.retry.selective.eq(self._retry.fields.selective),
            self.checker.selective.eq(self._retry.fields.selective),
            self.credits.limit.eq(self._credit_limit.storage),
        ]


def starts_unit(valid, ready, ctrl, count, *types):
    """A beat taken with a unit's header among its blocks: a ctrl block of a transaction type."""
    return valid & ready & reduce(or_, [ctrl[k] & (count > k) & (t >= T_RD_REQ) & (t <= T_ERR)
                                        for k, t in enumerate(types)])
