#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""HMC link layer, one end of a link (host controller or device: the protocol is the same both ways).

Transmit: flow-controlled packets from `sink` (requests or responses with their link fields zero, as
openHMC's user interface takes them) get a sequence number, a forward retry pointer (FRP) and returned
tokens (RTC), are copied into the retry buffer, and leave on `tx` with the current return retry pointer
(RRP) and their CRC-32K. A packet leaves only while the partner has input-buffer tokens for all its FLITs
and the retry buffer has room for it. When idle, a TRET returns tokens (it is sequenced and kept for retry)
or a PRET returns the RRP.

Receive: a packet from `rx` is checked: CRC (a poisoned packet, carrying the inverted CRC, is dropped and
counted without a retry), LNG = DLN = the FLITs on the wire, and for sequenced packets the next SEQ. A good
packet's RRP frees the retry buffer, its RTC adds tokens, its FRP becomes the RRP sent back; a request or
response enters the input buffer, and its FLITs are returned as tokens once `source` takes it.

Retry (the thesis s.3.1.5, openHMC's defaults): a receiver that sees a bad packet enters error-abort
(drops everything) and its transmitter sends `irtry_to_send` IRTRYs with StartRetry, carrying the RRP of
the last good packet. The partner, having received `irtry_threshold` of them, sends as many IRTRYs with
ClearErrorAbort, then replays its retry buffer from that RRP; the receiver leaves error-abort after
`irtry_threshold` ClearErrorAbort IRTRYs and checks the replay's SEQ from where it stopped. StartRetry is
sent again if error-abort has not ended after `irtry_timeout` cycles.

Initialisation is the token exchange: after reset each end returns its whole input buffer in TRETs (31
tokens each, the 5-bit RTC's limit) and sends nothing else until it holds tokens. The PHY's training
(scrambler lock, TS1 alignment, lane reversal and polarity) has no counterpart on the packet-level wire of
the sim (phy/hmc_channel.py) and is not modelled.

Packets are whole records (`packet_layout`: header, 8 payload FLITs, tail and the FLIT count); the wire
meters FLITs at the lane rate. A record may carry a second packet of one FLIT (`second`, its header and
tail): a write and a read request, or a read and a write response, leave in one cycle, as a host controller
that handles several FLITs a cycle sends them (openHMC: up to FPW packets a cycle). Without it one packet a
cycle at 250 MHz caps 128 B traffic at 32 GB/s, below the 37.8 GB/s the paper measured on 16 lanes at 15 Gb/s.
The second packet gets the next SEQ and FRP and its own CRC; the pair is one retry-buffer entry and the
receiver takes it whole or rejects it whole (error-abort), so a replay never starts inside a pair. FRP and
RRP are 8-bit FLIT pointers: FRP is the retry buffer's pointer after the packet, so the buffer holds at
most min(`retry_flits`, 255) FLITs and `retry_packets` entries.

with_crc_stage: the received packet's CRCs are made in a register stage of their own (from the packet's
first register into registers beside its second), so that the checks that follow them (the comparisons,
`accept`, into the input buffer, the retry and error state) start from registers: the host controller's,
for a board at 250 MHz. Without it (the device model) the checks follow the CRCs in one cycle.

Latency: 1 cycle from `sink` to `tx` (a register; RRP and CRC are added after it), 2 cycles from `rx` to
`source` (a register, the checks after it, the input buffer), 3 with the CRC stage. FLITs that leave the
input buffer are counted as tokens to return a cycle later.

This is the device model's link and the host controller's.
"""

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from monet.cores.common.crc import ParallelCRC
from monet.cores.common.layouts import HMC_PAYLOAD_BITS, hmc_packet_layout
from monet.cores.hmc.packet import *

WINDOW_FLITS  = MAX_FLITS
PAYLOAD_BITS  = HMC_PAYLOAD_BITS
RTC_MAX       = 31    # tokens one packet can return (5-bit RTC)
packet_layout = hmc_packet_layout


def header_fields(header):
    return {name: REQUEST_HEADER.get(header, name) for name in ("cmd", "lng", "dln")}


def tail_fields(tail):
    """The tail's link fields (the same bits in request and response tails)."""
    return {name: REQUEST_TAIL.get(tail, name) for name in ("rrp", "frp", "seq", "rtc", "crc")}


def flow_header(cmd):
    return REQUEST_HEADER.word(cmd=cmd, lng=1, dln=1)


class PacketCRC(LiteXModule):
    """CRC-32K of a packet record, combinational (0 cycles).

    The packet is placed at the top of a `window_flits` window with zero FLITs below it: zeros ahead of a
    message leave a CRC that starts from zero unchanged, so one fixed-width engine serves every length up to
    the window's (9 FLITs: every packet; 1: a pair's second packet)."""
    def __init__(self, window_flits=WINDOW_FLITS):
        self.packet = packet = Record(packet_layout)
        self.crc    = Signal(32)

        # # #

        window = Signal(FLIT_BITS * window_flits)
        cases = {}
        for n in range(1, window_flits + 1):
            body = Cat(packet.header, packet.data)[:FLIT_BITS * n - 64]
            parts = ([Constant(0, FLIT_BITS * (window_flits - n))] if n < window_flits else []) + \
                [body, packet.tail[:CRC_OFFSET], Constant(0, 32)]
            cases[n] = window.eq(Cat(*parts))
        cases["default"] = window.eq(0)
        self.comb += Case(packet.lng, cases)
        self.engine = engine = ParallelCRC(len(window), width=32, poly=CRC32K_POLY, with_state=True)
        # The engine takes its data's top bit first; the packet goes bit 0 first.
        self.comb += [
            engine.data.eq(Cat(*[window[i] for i in reversed(range(len(window)))])),
            engine.state.eq(0),
            self.crc.eq(engine.crc),
        ]


def second_packet(crc, header, tail):
    """Statements feeding a 1-FLIT PacketCRC with a pair's second packet."""
    return [crc.packet.header.eq(header), crc.packet.tail.eq(tail), crc.packet.lng.eq(1)]


class HMCLinkLayer(LiteXModule):
    def __init__(self, rx_tokens=64, retry_flits=256, retry_packets=64, irtry_to_send=24, irtry_threshold=16,
                 irtry_timeout=250, with_crc_stage=False):
        assert irtry_to_send >= irtry_threshold, "the partner must see at least its threshold of IRTRYs"
        assert 0 < rx_tokens < 1024 and 0 < retry_flits <= 256
        self.sink   = sink   = stream.Endpoint(packet_layout)
        self.source = source = stream.Endpoint(packet_layout)
        self.tx     = tx     = stream.Endpoint(packet_layout)
        self.rx     = rx     = stream.Endpoint(packet_layout)   # never refused: a receiver cannot hold the wire

        self.tokens        = Signal(10)   # the partner's free input-buffer FLITs
        self.link_up       = Signal()     # tokens have arrived from the partner
        self.error_abort   = Signal()
        self.tx_packets    = Signal(32)   # flow-controlled packets sent the first time
        self.rx_packets    = Signal(32)   # requests or responses delivered to `source`
        self.crc_errors    = Signal(32)
        self.seq_errors    = Signal(32)
        self.lng_errors    = Signal(32)
        self.poisoned      = Signal(32)
        self.error_aborts  = Signal(32)   # times this receiver entered error-abort
        self.replays       = Signal(32)   # times this transmitter replayed its retry buffer
        self.replayed      = Signal(32)   # packets sent again
        self.token_stalls  = Signal(32)   # cycles a packet waited for tokens
        self.retry_stalls  = Signal(32)   # cycles a packet waited for retry-buffer room

        # # #

        ptr_bits   = 8
        idx_bits   = log2_int(retry_packets, need_pow2=True)
        max_flits  = min(retry_flits, 2**ptr_bits - 1)

        # Between the receiver and the transmitter.
        last_frp        = Signal(ptr_bits)   # FRP of the last good sequenced packet: the RRP to send
        rrp_in          = Signal(ptr_bits)   # the partner's latest RRP
        rtc_in          = Signal(6)          # both packets' of a pair
        rtc_valid       = Signal()
        want_start      = Signal()           # this receiver asks for a retry
        partner_retry   = Signal()           # the partner asks for a retry (threshold of StartRetry reached)
        returned        = Signal(4)          # FLITs that left the input buffer last cycle (a pair's: up to 10)

        # ---- Receive -----------------------------------------------------------------------------------
        # The packet is checked in `got`. Its CRCs are made from `checked`: `got` itself, or with the CRC stage
        # the register before it, the CRCs then registered beside `got`.
        got = Record(packet_layout)
        got_valid = Signal()
        self.comb += rx.ready.eq(1)
        if with_crc_stage:
            checked, checked_valid = Record(packet_layout), Signal()
            self.sync += [checked_valid.eq(rx.valid), checked.eq(rx), got_valid.eq(checked_valid), got.eq(checked)]
        else:
            checked = got
            self.sync += [got_valid.eq(rx.valid), got.eq(rx)]
        self.rx_crc = rx_crc = PacketCRC()
        self.rx_crc2 = rx_crc2 = PacketCRC(window_flits=1)
        self.comb += [rx_crc.packet.eq(checked), second_packet(rx_crc2, checked.second_header, checked.second_tail)]
        got_crc, got_crc2 = Signal(32), Signal(32)     # the CRCs of got's packets, as made
        crcs = [got_crc.eq(rx_crc.crc), got_crc2.eq(rx_crc2.crc)]
        if with_crc_stage:
            self.sync += crcs
        else:
            self.comb += crcs
        crc_good, crc_poisoned, crc2_good = Signal(), Signal(), Signal()
        self.comb += [
            crc_good.eq(tail_fields(got.tail)["crc"] == got_crc),
            crc_poisoned.eq(tail_fields(got.tail)["crc"] == ~got_crc),
            crc2_good.eq(tail_fields(got.second_tail)["crc"] == got_crc2),
        ]

        h, t = header_fields(got.header), tail_fields(got.tail)
        cmd = h["cmd"]
        lng_good, seq_good = Signal(), Signal()
        flow, sequenced, irtry = Signal(), Signal(), Signal()
        expect_seq = Signal(3, reset=1)
        self.comb += [
            lng_good.eq((h["lng"] == h["dln"]) & (h["lng"] == got.lng)),
            flow.eq(cmd[3:] == T_FLOW >> 3),
            sequenced.eq(~flow | (cmd == TRET)),
            irtry.eq(cmd == IRTRY),
            seq_good.eq(t["seq"] == expect_seq),
        ]
        # A pair is taken whole or not at all: a bad second packet rejects the first too, so the partner's
        # replay (from the RRP before the pair) starts with a packet the receiver expects.
        h2, t2 = header_fields(got.second_header), tail_fields(got.second_tail)
        lng2_good, second_good = Signal(), Signal()
        expect_seq2 = Signal(3)     # the second packet's SEQ, wrapped to the field's 3 bits
        self.comb += [
            expect_seq2.eq(expect_seq + 1),
            lng2_good.eq((h2["lng"] == 1) & (h2["dln"] == 1)),
            second_good.eq(~got.second | (crc2_good & lng2_good & (h2["cmd"][3:] != T_FLOW >> 3) &
                                          (t2["seq"] == expect_seq2))),
        ]
        intact  = Signal()   # CRC and length right: its fields can be trusted
        bad     = Signal()
        accept  = Signal()
        self.comb += [
            intact.eq(got_valid & crc_good & lng_good),
            bad.eq(got_valid & ~self.error_abort & ~crc_poisoned &
                   ~(intact & (~sequenced | seq_good) & second_good)),
            accept.eq(intact & ~self.error_abort & sequenced & seq_good & second_good),
        ]
        start_seen  = Signal(5)
        clear_seen  = Signal(5)
        abort_timer = Signal(max=irtry_timeout + 1)
        self.sync += [
            partner_retry.eq(0),
            want_start.eq(0),
            If(got_valid & crc_poisoned, self.poisoned.eq(self.poisoned + 1)),
            If(bad,
                self.error_abort.eq(1),
                self.error_aborts.eq(self.error_aborts + 1),
                want_start.eq(1),
                abort_timer.eq(0),
                clear_seen.eq(0),
                If(~crc_good | (got.second & ~crc2_good), self.crc_errors.eq(self.crc_errors + 1)
                ).Elif(~lng_good | (got.second & ~lng2_good), self.lng_errors.eq(self.lng_errors + 1)
                ).Else(self.seq_errors.eq(self.seq_errors + 1)),
            ),
            If(self.error_abort & ~bad,
                If(abort_timer == irtry_timeout,
                    want_start.eq(1),
                    abort_timer.eq(0),
                ).Else(
                    abort_timer.eq(abort_timer + 1),
                )
            ),
            # Good packets other than NULLs carry the partner's RRP.
            If(intact & (cmd != NULL), rrp_in.eq(t["rrp"])),
            If(intact & irtry & t["frp"][0],
                start_seen.eq(start_seen + 1),
                If(start_seen == irtry_threshold - 1, partner_retry.eq(1)),
            ).Elif(intact & ~irtry,
                start_seen.eq(0),
            ),
            If(intact & irtry & t["frp"][1] & self.error_abort,
                If(clear_seen == irtry_threshold - 1,
                    self.error_abort.eq(0),
                    clear_seen.eq(0),
                ).Else(
                    clear_seen.eq(clear_seen + 1),
                )
            ),
            If(accept,
                expect_seq.eq(expect_seq + 1 + got.second),
                last_frp.eq(Mux(got.second, t2["frp"], t["frp"])),
            ),
        ]
        self.comb += [rtc_in.eq(t["rtc"] + Mux(got.second, t2["rtc"], 0)), rtc_valid.eq(accept)]
        self.sync += If(accept & (rtc_in != 0), self.link_up.eq(1))

        self.input_buffer = ibuf = stream.SyncFIFO(packet_layout, rx_tokens, buffered=False)
        self.comb += [
            ibuf.sink.valid.eq(accept & ~flow),
            ibuf.sink.payload.eq(got),
            ibuf.source.connect(source),
        ]
        # Counted a cycle after they leave, so that the reader's readiness and the buffer's read are not on the
        # path of the token counters.
        self.sync += returned.eq(Mux(source.valid & source.ready, source.lng + source.second, 0))
        self.sync += If(source.valid & source.ready, self.rx_packets.eq(self.rx_packets + 1 + source.second))

        # ---- Transmit ----------------------------------------------------------------------------------
        to_return = Signal(10, reset=rx_tokens)   # our input buffer's free FLITs not yet told
        next_seq  = Signal(3, reset=1)
        frp_out   = Signal(ptr_bits)   # retry buffer write pointer (FLITs)
        acked     = Signal(ptr_bits)   # retry buffer read pointer: FLITs up to here are acknowledged
        wr_idx, head_idx, replay_idx = (Signal(idx_bits + 1, name=n) for n in ("wr_idx", "head_idx", "replay_idx"))
        start_left = Signal(5)
        clear_left = Signal(5)
        replay_pending, replaying = Signal(), Signal()
        # Beside replay_idx, as registers: the entry after it, and whether it is an entry still to replay. The
        # write index holds still from the cycle after a replay is asked for (no new packet or TRET leaves
        # while one is pending or under way), so `replay_more` is made from it as the replay starts and steps.
        replay_next = Signal(idx_bits + 1)
        replay_more = Signal()
        rrp_sent   = Signal(ptr_bits)

        # The retry buffer: packets as sent the first time (RRP and CRC are stamped on the way out).
        entry_layout = packet_layout
        self.specials.retry = retry = Memory(layout_len(entry_layout), retry_packets)
        self.specials.retry_w = retry_w = retry.get_port(write_capable=True)
        # Read first: nothing is written while a replay reads (no new packet leaves during one), so the read
        # needs no bypass of a write to its address (the compare that a write-first read port adds).
        self.specials.retry_r = retry_r = retry.get_port(mode=READ_FIRST)
        # Each entry's FLITs, in LUT RAM: written with the entry, read at the head.
        self.specials.entry_lngs = entry_lngs = Memory(4, retry_packets)
        self.specials.entry_lng_w = entry_lng_w = entry_lngs.get_port(write_capable=True)
        self.specials.entry_lng_r = entry_lng_r = entry_lngs.get_port(async_read=True)
        replay_entry = Record(entry_layout)
        self.comb += replay_entry.raw_bits().eq(retry_r.dat_r)

        # Freeing: the head packet is acknowledged once the partner's RRP is at or past its end (and not past
        # what was sent: an RRP is never ahead of the write pointer).
        occupancy = Signal(ptr_bits)
        acked_span = Signal(ptr_bits)
        head_lng = Signal(4)
        can_free = Signal()
        self.comb += [
            occupancy.eq(frp_out - acked),
            acked_span.eq(rrp_in - acked),
            entry_lng_r.adr.eq(head_idx[:idx_bits]),
            head_lng.eq(entry_lng_r.dat_r),
            can_free.eq((wr_idx != head_idx) & (acked_span >= head_lng) & (acked_span <= occupancy)),
        ]
        self.sync += If(can_free,
            acked.eq(acked + head_lng),
            head_idx.eq(head_idx + 1),
        )

        # Choosing what leaves next.
        out = Record(packet_layout)       # the register in front of the wire
        out_valid = Signal()
        advance = Signal()
        self.comb += advance.eq(~out_valid | tx.ready)

        rtc_now = Signal(5)
        self.comb += rtc_now.eq(Mux(to_return > RTC_MAX, RTC_MAX, to_return))
        entries = Signal(idx_bits + 1)
        room_for = Signal(ptr_bits + 4)    # widened: occupancy + the packet's FLITs
        has_room = Signal()
        tret_room = Signal()
        sink_flits = Signal(4)             # the packet's FLITs and its second packet's
        self.comb += [
            sink_flits.eq(sink.lng + sink.second),
            entries.eq(wr_idx - head_idx),
            room_for.eq(occupancy + sink_flits),
            has_room.eq((entries < retry_packets) & (room_for <= max_flits)),
            tret_room.eq((entries < retry_packets) & (occupancy < max_flits)),
        ]
        send_start, send_clear, send_replay, send_new, send_tret, send_pret = (Signal(name=n) for n in
            ("send_start", "send_clear", "send_replay", "send_new", "send_tret", "send_pret"))
        start_replay = Signal()
        busy_retry = Signal()
        new_fits = Signal()
        self.comb += [
            busy_retry.eq(replay_pending | replaying),
            new_fits.eq((self.tokens >= sink_flits) & has_room),
            send_start.eq(advance & (start_left != 0)),
            send_clear.eq(advance & (start_left == 0) & (clear_left != 0)),
            send_replay.eq(advance & (start_left == 0) & (clear_left == 0) & replaying & replay_more),
            send_new.eq(advance & (start_left == 0) & (clear_left == 0) & ~busy_retry & sink.valid & new_fits),
            send_tret.eq(advance & (start_left == 0) & (clear_left == 0) & ~busy_retry & ~send_new &
                         (to_return != 0) & tret_room),
            send_pret.eq(advance & (start_left == 0) & (clear_left == 0) & ~send_replay & ~send_new & ~send_tret &
                         (last_frp != rrp_sent)),
            start_replay.eq(replay_pending & (clear_left == 0) & ~can_free),
            sink.ready.eq(send_new),
        ]
        self.sync += [
            If(sink.valid & ~busy_retry & (start_left == 0) & (clear_left == 0),
                If(self.tokens < sink_flits, self.token_stalls.eq(self.token_stalls + 1)
                ).Elif(~has_room, self.retry_stalls.eq(self.retry_stalls + 1))
            ),
        ]

        # A new packet (or pair) or TRET: sequenced, given its FRP and RTC, written into the retry buffer as
        # one entry. A pair's second packet gets the next SEQ and FRP, and no RTC.
        fresh = Record(packet_layout)
        fresh_lng = Signal(4)           # the entry's FLITs
        fresh_frp = Signal(ptr_bits)    # the FRP after the entry
        first_frp = Signal(ptr_bits)
        next_seq2 = Signal(3)
        # Sums for a new packet and for a TRET are made beside the choice between them, which picks one last.
        frp_new, frp_plus1, first_new = Signal(ptr_bits), Signal(ptr_bits), Signal(ptr_bits)
        self.comb += [
            frp_new.eq(frp_out + sink_flits),
            frp_plus1.eq(frp_out + 1),
            first_new.eq(frp_out + sink.lng),
            fresh_lng.eq(Mux(send_new, sink_flits, 1)),
            fresh_frp.eq(Mux(send_new, frp_new, frp_plus1)),
            first_frp.eq(Mux(send_new, first_new, frp_plus1)),
            next_seq2.eq(next_seq + 1),
            fresh.header.eq(Mux(send_new, sink.header, flow_header(TRET))),
            fresh.data.eq(Mux(send_new, sink.data, 0)),
            fresh.tail.eq(Cat(Constant(0, 8), first_frp, next_seq, Mux(send_new, sink.tail[19:27], 0), rtc_now,
                              Constant(0, 32))),
            fresh.lng.eq(Mux(send_new, sink.lng, 1)),
            fresh.second.eq(send_new & sink.second),
            fresh.second_header.eq(sink.second_header),
            fresh.second_tail.eq(Cat(Constant(0, 8), fresh_frp, next_seq2, sink.second_tail[19:27], Constant(0, 5),
                                     Constant(0, 32))),
            retry_w.adr.eq(wr_idx[:idx_bits]),
            retry_w.dat_w.eq(fresh.raw_bits()),
            retry_w.we.eq(send_new | send_tret),
            entry_lng_w.adr.eq(wr_idx[:idx_bits]),
            entry_lng_w.dat_w.eq(fresh_lng),
            entry_lng_w.we.eq(send_new | send_tret),
        ]
        self.sync += If(send_new | send_tret,
            wr_idx.eq(wr_idx + 1),
            frp_out.eq(fresh_frp),
            next_seq.eq(next_seq + 1 + fresh.second),
        )
        # Counters that the choices change: every outcome is summed beside the choices, which pick one last.
        kept_return, told_return = Signal(10), Signal(10)
        tokens_back, tokens_sent, tokens_back_sent = Signal(10), Signal(10), Signal(10)
        self.comb += [
            kept_return.eq(to_return + returned),
            told_return.eq(kept_return - rtc_now),
            tokens_back.eq(self.tokens + rtc_in),
            tokens_sent.eq(self.tokens - sink_flits),
            tokens_back_sent.eq(tokens_back - sink_flits),
        ]
        self.sync += [
            to_return.eq(Mux(send_new | send_tret, told_return, kept_return)),
            If(rtc_valid,
                self.tokens.eq(Mux(send_new, tokens_back_sent, tokens_back))
            ).Elif(send_new,
                self.tokens.eq(tokens_sent)
            ),
            If(send_new, self.tx_packets.eq(self.tx_packets + 1 + sink.second)),
        ]

        # Replay reads the retry buffer a cycle ahead: the read port's address is the entry wanted next cycle,
        # the head's until the replay starts (whether it starts this cycle waits for the head's freeing: that
        # decision stays off the read's address).
        self.comb += retry_r.adr.eq(Mux(replaying, Mux(send_replay, replay_next, replay_idx), head_idx)[:idx_bits])
        self.sync += [
            If(want_start, start_left.eq(irtry_to_send)
            ).Elif(send_start, start_left.eq(start_left - 1)),
            If(partner_retry,
                clear_left.eq(irtry_to_send),
                replay_pending.eq(1),
                replaying.eq(0),
            ).Else(
                If(send_clear, clear_left.eq(clear_left - 1)),
                If(start_replay,
                    replay_pending.eq(0),
                    replaying.eq(1),
                    replay_idx.eq(head_idx),
                    replay_next.eq(head_idx + 1),
                    replay_more.eq(head_idx != wr_idx),
                    self.replays.eq(self.replays + 1),
                ).Elif(send_replay,
                    replay_idx.eq(replay_next),
                    replay_next.eq(replay_next + 1),
                    replay_more.eq(replay_next != wr_idx),
                    self.replayed.eq(self.replayed + 1),
                ).Elif(replaying & ~replay_more,
                    replaying.eq(0),
                ),
            ),
        ]

        irtry_tail = Signal(64)     # FRP bit 0: StartRetry, bit 1: ClearErrorAbort
        self.comb += irtry_tail.eq(Cat(Constant(0, 8), send_start, ~send_start, Constant(0, 54)))
        self.sync += If(advance,
            out_valid.eq(send_start | send_clear | send_replay | send_new | send_tret | send_pret),
            If(send_start | send_clear,
                out.header.eq(flow_header(IRTRY)), out.data.eq(0), out.tail.eq(irtry_tail), out.lng.eq(1),
                out.second.eq(0),
            ).Elif(send_replay,
                out.eq(replay_entry),
            ).Elif(send_new | send_tret,
                out.eq(fresh),
            ).Elif(send_pret,
                out.header.eq(flow_header(PRET)), out.data.eq(0), out.tail.eq(0), out.lng.eq(1), out.second.eq(0),
            ),
        )

        # On the way out: the current RRP, then the CRC over the packet with it (each packet of a pair).
        self.tx_crc = tx_crc = PacketCRC()
        self.tx_crc2 = tx_crc2 = PacketCRC(window_flits=1)
        stamped = Record(packet_layout)
        self.comb += [
            stamped.eq(out),
            stamped.tail.eq(Cat(last_frp, out.tail[8:CRC_OFFSET], Constant(0, 32))),
            stamped.second_tail.eq(Cat(last_frp, out.second_tail[8:CRC_OFFSET], Constant(0, 32))),
            tx_crc.packet.eq(stamped),
            second_packet(tx_crc2, stamped.second_header, stamped.second_tail),
            tx.valid.eq(out_valid),
            tx.header.eq(stamped.header),
            tx.data.eq(stamped.data),
            tx.tail.eq(Cat(stamped.tail[:CRC_OFFSET], tx_crc.crc)),
            tx.lng.eq(stamped.lng),
            tx.second.eq(stamped.second),
            tx.second_header.eq(stamped.second_header),
            tx.second_tail.eq(Cat(stamped.second_tail[:CRC_OFFSET], tx_crc2.crc)),
        ]
        # The RRP the chosen packet will carry (or a newer one): no PRET is chosen for it again.
        self.sync += If(advance & (send_start | send_clear | send_replay | send_new | send_tret | send_pret),
            rrp_sent.eq(last_frp))


class PairSplitter(LiteXModule):
    """Pairs as single packets, for a receiver that takes one packet a cycle: a pair's second packet
    follows its first a cycle later, as a 1-FLIT record of its own; unless `keep` (set from `sink`'s
    fields) passes the pair whole, to a receiver that takes both at once. Latency: none (combinational); a
    split pair takes two cycles."""
    def __init__(self):
        self.sink   = sink   = stream.Endpoint(packet_layout)
        self.source = source = stream.Endpoint(packet_layout)
        self.keep   = Signal()

        # # #

        first_sent = Signal()
        self.comb += [
            source.valid.eq(sink.valid),
            If(first_sent,
                source.header.eq(sink.second_header), source.tail.eq(sink.second_tail), source.lng.eq(1),
            ).Else(
                source.header.eq(sink.header), source.data.eq(sink.data), source.tail.eq(sink.tail),
                source.lng.eq(sink.lng),
                source.second.eq(sink.second & self.keep),
                source.second_header.eq(sink.second_header), source.second_tail.eq(sink.second_tail),
            ),
            sink.ready.eq(source.ready & (first_sent | ~sink.second | self.keep)),
        ]
        self.sync += If(source.valid & source.ready, first_sent.eq(sink.second & ~self.keep & ~first_sent))
