"""A Migen-sim stand-in for the link and memory card: answers ReMAT's link transactions after a delay.

Reads of a line never written return the line address, so tests can check translation.
"""

from monet.cores.common.layouts import LINE_BYTES, T_ERR, T_WR_REQ, T_WR_ACK, T_RD_RSP


def byte_mask_bits(mask):
    """The bits of a line that a byte-enable mask (one bit a byte) covers."""
    return sum(0xFF << (8 * i) for i in range(LINE_BYTES) if mask >> i & 1)


def link_responder(remat, cycles, delay=6, on_link=None, peak=None, refuse=(), target=0, lose=()):
    """Generator for run_simulation: answers ReMAT's requests to `target` (0: the link). Appends (type, tag,
    laddr) of each request to `on_link` and tracks ReMAT's peak outstanding count in peak[0]. Requests for
    a line in `refuse` are answered with T_ERR, as the memory card answers an access outside its memory.
    `delay` is cycles, or a function of the line address giving them: answers then leave in the order they
    fall due, as a DDR4 card's lines in different banks do. Requests for a line in `lose` are never answered
    (lost on a dead link)."""
    memory, pending = {}, []
    delay_of = delay if callable(delay) else (lambda laddr: delay)
    source, sink = remat.sources[target], remat.sinks[target]
    yield source.ready.eq(1)
    for cycle in range(cycles):
        yield sink.valid.eq(0)
        due = min(range(len(pending)), key=lambda i: pending[i][0], default=None)
        if due is not None and pending[due][0] <= cycle:
            _, typ, tag, data = pending.pop(due)
            yield sink.valid.eq(1)
            yield sink.type.eq(typ)
            yield sink.tag.eq(tag)
            yield sink.data.eq(data)
        if (yield source.valid):
            typ, tag, laddr = (yield source.type), (yield source.tag), (yield source.laddr)
            if on_link is not None:
                on_link.append((typ, tag, laddr))
            delay = delay_of(laddr)
            if laddr in lose:
                pass
            elif laddr in refuse:
                pending.append((cycle + delay, T_ERR, tag, 0))
            elif typ == T_WR_REQ:
                data, mask = (yield source.data), (yield source.mask)
                bits = byte_mask_bits(mask)
                memory[laddr] = (memory.get(laddr, laddr) & ~bits) | (data & bits)
                pending.append((cycle + delay, T_WR_ACK, tag, 0))
            else:
                pending.append((cycle + delay, T_RD_RSP, tag, memory.get(laddr, laddr)))
        if peak is not None:
            peak[0] = max(peak[0], (yield remat.outstanding))
        yield


def program_bfct(bfct, entries):
    """Generator: writes {index: entry} into a BFCT."""
    for idx, entry in entries.items():
        yield bfct.wr_index.eq(idx)
        yield bfct.wr_entry.eq(entry)
        yield bfct.wr_stb.eq(1)
        yield
    yield bfct.wr_stb.eq(0)


def offer(endpoint, records):
    """Generator: offers each record ({field: value}) on a stream endpoint, one a cycle as the endpoint
    takes them, then drops valid."""
    for record in records:
        yield endpoint.valid.eq(1)
        for field, value in record.items():
            yield getattr(endpoint, field).eq(value)
        yield
        while not (yield endpoint.ready):
            yield
    yield endpoint.valid.eq(0)


def send_transactions(endpoint, txns):
    """Generator: offers (type, tag, laddr, mask, data) transactions on a txn_layout sink."""
    fields = ("type", "tag", "laddr", "mask", "data")
    yield from offer(endpoint, [dict(zip(fields, txn)) for txn in txns])


def wishbone(bus, accesses, results, settle=8):
    """Generator: 32-bit accesses one after the other, as the CPU's data bus makes them, after `settle`
    cycles (the BFCT programmed). Each is (byte address, we, data, sel) or (..., burst): with burst true the
    next access follows in the cycle after the ack with cyc and stb held, as VexRiscv's cache refill does.
    Appends (dat_r, err, cycles from stb to ack) to `results`."""
    for _ in range(settle):
        yield
    for addr, we, data, sel, *burst in accesses:
        yield bus.adr.eq(addr >> 2)
        yield bus.we.eq(we)
        yield bus.dat_w.eq(data)
        yield bus.sel.eq(sel)
        yield bus.cyc.eq(1)
        yield bus.stb.eq(1)
        cycles = 0
        while True:
            yield
            cycles += 1
            if (yield bus.ack):
                break
        results.append(((yield bus.dat_r), (yield bus.err), cycles))
        if not (burst and burst[0]):
            yield bus.cyc.eq(0)
            yield bus.stb.eq(0)
            yield
