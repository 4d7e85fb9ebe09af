"""Benchmarks run through the firmware console: remote latency, bandwidth and memory test."""

import math

from monet.link import model as link_model
from monet.link import reliability
from monet.link.profiles import PROFILES
from monet.report.stats import histogram_percentile, summary
from monet.sim.link_setup import WINDOWS, configure_link, configure_retry, link_record, map_remote_windows, memory_service
from monet.soc.facts import NOMINAL_CLK_HZ, PBB_BUCKETS, REMOTE_TAGS, TARGET_REMOTE0, block_threshold, peak_GBps


DDR4_PEAK_GBPS = peak_GBps(NOMINAL_CLK_HZ)   # 16.0: DDR4-2000 at LiteDRAM's 4:1 (the part's own is 17.06)
# The paper's memory utilisation of an HMC: against one quadrant's 40 GB/s (4 vaults x 10 GB/s), what one
# link reaches (T4: 22.5 GB/s remote at half width is 56.25 %).
HMC_QUADRANT_GBPS = 40.0
MEMORY_PEAK_GBPS = {"ddr4": DDR4_PEAK_GBPS, "hmc": HMC_QUADRANT_GBPS}


def latency(target, op, distance_m, lanes, rate_gbps, samples=200, profile="ours", memory="sram", hmc_width="full",
            placement="remote", hmc_native=0):
    """Remote read or write latency: `samples` single 32-bit accesses, each a 64 B line transaction."""
    link = configure_link(target, distance_m, lanes, rate_gbps, profile, memory, hmc_width, placement, hmc_native)
    windows = map_remote_windows(target, bfct_target=link["bfct_target"])
    # Warm-up access so the first sample does not pay for the I-cache.
    target.fw.lat(op=op, addr=windows[0], n=4)
    # The stage timers time only what takes the link (a local or native HMC access leaves it at ReMAT).
    over_link = link["bfct_target"] == TARGET_REMOTE0
    if over_link:
        target.fw.stages(clear=1)
    answer, memory_figures = memory_service(
        target, lambda: target.fw.lat(op=op, addr=windows[0], n=samples, stride=link_model.LINE_BYTES))
    timers = target.fw.stages() if over_link else {}
    if answer["fault"]:
        raise RuntimeError(f"remote {op} faulted: kind {answer['fault_kind']} at {answer['fault_addr']:#x}")
    hw = answer["hw_cycles"]
    cpu = answer["cpu_cycles"]
    hw_summary = summary(hw)
    cpu_summary = summary(cpu)
    result = {
        "op": op,
        "distance_m": distance_m,
        "lanes": lanes,
        "rate_gbps": rate_gbps,
        "samples": samples,
        "latency_cycles": hw_summary,
        "latency_ns": {k: link_model.cycles_to_ns(v) for k, v in hw_summary.items()},
        "cpu_latency_cycles": cpu_summary,  # beyond the same access to local SRAM
        "cpu_latency_ns": {k: link_model.cycles_to_ns(v) for k, v in cpu_summary.items()},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "profile": profile,
        "memory": memory,
        "placement": placement,
        "link": link_record(link),
        **memory_figures,
        "measured_at": "latency_*: ReMAT port, request accepted to response delivered; cpu_latency_*: what the "
                       "CPU waits beyond the same access to local SRAM; memory_service_cycles: the memory "
                       "card's mean time in its memory",
    }
    # On the means: the memory's share is a mean (a DRAM's varies with rows, refreshes and turnarounds).
    memory_cycles = memory_figures["memory_service_cycles"] + link["memlat"]
    if over_link:
        result["breakdown"] = link_model.read_breakdown(hw_summary["mean"], distance_m, lanes, rate_gbps,
                                                        memory_cycles=memory_cycles,
                                                        link_ns=PROFILES[profile].link_ns(rate_gbps))
    else:   # no link of ours: ReMAT and the card's front end, the memory (native HMC: its fiber apart)
        fiber = 2 * link["hmc"]["fiber_ns"] if link["hmc_native"] else 0.0
        result["breakdown"] = link_model.linkless_breakdown(hw_summary["mean"], memory_cycles, fiber)
    result["breakdown_ns"] = link_model.breakdown_by_layer(result["breakdown"])
    result["stages"] = link_model.measured_stages(timers, hw_summary["mean"], memory_cycles)
    if op == "write":
        result["breakdown"]["note"] = "breakdown modelled for a 64 B read; a write moves the line the other way"
    return result


def memtest(target, nbytes, seed, lanes=8, rate_gbps=15.0, distance_m=8, memory="sram", window="uncached",
            hmc_width="full", placement="remote", hmc_native=0):
    """Writes seeded pseudo-random words over every remote window, reads them back, counts errors. Through the
    cacheable window (the data cache and ReMAT's combiner) the words are read back twice: through the
    uncached window (they reached remote memory) and through the cacheable one (from a flushed data cache)."""
    if window not in WINDOWS:
        raise ValueError(f"memtest window {window!r} is not known; accepted: {', '.join(WINDOWS)}")
    link = configure_link(target, distance_m, lanes, rate_gbps, memory=memory, hmc_width=hmc_width,
                          placement=placement, hmc_native=hmc_native)
    windows = map_remote_windows(target, bfct_target=link["bfct_target"])
    per_window = (nbytes // len(windows)) & ~3
    cached = window == "cached"
    used, errors, faults = [], 0, 0
    for offset in windows:
        fill = target.fw.fill(offset, per_window, seed, cached=cached)
        checks = [target.fw.check(offset, per_window, seed, cached=c)
                  for c in ((False, True) if cached else (False,))]
        window_errors = sum(c["errors"] for c in checks)
        errors += window_errors
        faults += int(fill["fault"]) + sum(int(c["fault"]) for c in checks)
        used.append({"offset": offset, "bytes": per_window, "errors": window_errors})
    return {"bytes": per_window * len(windows), "seed": seed, "errors": errors, "faults": faults,
            "windows": used, "lanes": lanes, "rate_gbps": rate_gbps, "distance_m": distance_m, "memory": memory,
            "window": window}


SIZES = (8, 16, 32, 64, 128)
OPS = ("read", "write", "mixed")
PBB_PORTS = ("remat", "hmc")   # the benchmark block on ReMAT's port, or on the HMC controller's block port


class PbbPortError(ValueError):
    """A point the benchmark block's HMC block port cannot run (the message names it and what would be)."""


def pbb_port_refusal(pbb_port, memory, placement, hmc_native, size):
    """Why a point cannot use `pbb_port`, or None. The HMC controller's block port moves 128 B blocks of the
    compute card's own HMC: memory hmc, placement local, not native, size 128."""
    if pbb_port == "remat":
        return None
    if pbb_port not in PBB_PORTS:
        return f"pbb_port {pbb_port!r} is not accepted; accepted: {', '.join(PBB_PORTS)}"
    needs = {"memory": (memory, "hmc"), "placement": (placement, "local"), "hmc_native": (hmc_native, 0),
             "size": (size, 128)}
    for key, (value, accepted) in needs.items():
        if value != accepted:
            return (f"pbb_port hmc with {key} {value} is not accepted; the HMC controller's block port moves "
                    f"128 B blocks of the local HMC: memory hmc, placement local, hmc_native 0, size 128")
    return None
MIXED_READ_PERCENT = 53   # the best mix of 128 B reads and writes on an HMC link (thesis, Table 3.5)
MIXES = ("random", "even")   # a mix's reads: at random, or spread evenly (the ratio's running sum)


def pbb_read_ratio(read_percent):
    """The benchmark block's read ratio (reads per 256 accesses) nearest to `read_percent` %."""
    return round(read_percent * 256 / 100)


def bandwidth(target, op, outstanding, distance_m, lanes, rate_gbps, pattern="seq", count=20000, seed=1,
              check=False, profile="ours", memory="sram", size=64, cycles_per_line=64, hmc_width="full",
              placement="remote", hmc_native=0, read_percent=MIXED_READ_PERCENT, pbb_port="remat", mix="random"):
    """Sustained bandwidth of `count` accesses of `size` bytes from the benchmark block (ReMAT's second
    port). Below 64 B an access is one masked line transaction; 128 B is two on consecutive lines. `op`
    mixed: each access a read with probability `read_percent` %, a write otherwise (both count); `mix` even
    spreads the reads evenly instead (reads and writes alternate at 50 %).
    `pbb_port` hmc: the block on the HMC controller's 128 B block port instead, each access one RD128 or
    WR128 (local HMC only; PbbPortError otherwise)."""
    refusal = pbb_port_refusal(pbb_port, memory, placement, hmc_native, size)
    if refusal:
        raise PbbPortError(refusal)
    direct = pbb_port == "hmc"
    lines_per_access = 2 if size == 128 else 1
    transactions_per_access = 1 if direct else lines_per_access
    link = configure_link(target, distance_m, lanes, rate_gbps, profile, memory, hmc_width, placement, hmc_native)
    info = target.fw.facts()
    windows = map_remote_windows(target, info, link["bfct_target"])
    mapped = len(windows) * info["section_bytes"]
    span = 1 << (mapped.bit_length() - 1)   # the largest power of two inside the mapped windows
    # Histogram bucket width: the buckets below the last (which takes the overflow) must cover the worst
    # latency expected, the round trip plus every outstanding response queued behind the others on the link.
    bound = 2 * link["delay"] + 32 + outstanding * link_model.serialization_cycles(10, lanes, rate_gbps)
    shift = max(0, math.ceil(math.log2(bound / (PBB_BUCKETS - 1))))
    # The firmware gives up on a run that exceeds this many cycles (a generous bound: 64 cycles a line).
    lines = count * lines_per_access
    budget = min(2**32 - 1, 1_000_000 + int(cycles_per_line * lines))
    run, memory_figures = memory_service(target, lambda: target.fw.pbb(
        op=op, ratio=pbb_read_ratio(read_percent) if op == "mixed" else None, mix=mix if op == "mixed" else None,
        pattern=pattern, addr=0, span=span,
        count=count * transactions_per_access, size=size, outstanding=outstanding, seed=seed, check=check,
        shift=shift, direct=1 if direct else None, timeout=budget, wait=max(300, lines // 100)))
    if run.get("timed_out"):
        raise RuntimeError(f"benchmark block stalled: {run['completed']} of {run['count']} transactions completed "
                           f"(CRC errors: compute {run['crc_errors_c']}, memory {run['crc_errors_m']})")
    payload = run["completed"] * (size if direct else min(size, link_model.LINE_BYTES))
    seconds = run["cycles"] * link_model.CLK_PS * 1e-12
    bw = payload / seconds / 1e9
    # The link figures are our link's: none where the run did not cross it (local memory, native HMC).
    over_link = placement == "remote" and not hmc_native
    capacity = link_model.payload_capacity_GBps(lanes, rate_gbps) if over_link else None
    # Cycles the data's direction was busy (a mix's data go both ways).
    data_busy = {"read": run["busy_b2a"], "write": run["busy_a2b"], "mixed": run["busy_a2b"] + run["busy_b2a"]}[op]
    line_bits = data_busy * link_model.CLK_PS * 1e-3 * lanes * rate_gbps
    hist = run["hist"]
    pct = {}
    for p in (50, 90, 99, 99.9):
        cycles = histogram_percentile(hist, shift, p, highest=run["lat_max"])
        pct[f"p{p:g}".replace(".", "_")] = None if cycles is None else link_model.cycles_to_ns(cycles)
    return {
        "op": op, "pattern": pattern, "size": size, "outstanding": outstanding,
        "read_percent": {"read": 100, "write": 0}.get(op, read_percent), "mix": mix if op == "mixed" else None,
        "distance_m": distance_m, "lanes": lanes,
        "rate_gbps": rate_gbps, "profile": profile,
        "memory": memory,
        "pbb_port": pbb_port,
        "transactions": run["completed"] // transactions_per_access,
        "line_transactions": run["completed"] * lines_per_access // transactions_per_access,
        "cycles": run["cycles"],
        "bandwidth_GBps": bw,
        "payload_capacity_GBps": capacity,
        "link_utilisation": bw / (2 * lanes * rate_gbps / 8) if over_link else None,
        "payload_utilisation": bw / capacity if over_link else None,
        "link_efficiency": payload * 8 / line_bits if line_bits and over_link else None,
        # The paper's memory utilisation: achieved against the memory's peak (DDR4 only: the SRAM has none).
        "memory_peak_GBps": MEMORY_PEAK_GBPS.get(memory),
        "memory_utilisation": bw / MEMORY_PEAK_GBPS[memory] if memory in MEMORY_PEAK_GBPS else None,
        **memory_figures,
        "errors": run["errors"], "bus_errors": run["bus_errors"],
        "latency_ns": {"min": link_model.cycles_to_ns(run["lat_min"]),
                       "mean": link_model.cycles_to_ns(run["lat_sum"] / max(run["completed"], 1)),
                       "max": link_model.cycles_to_ns(run["lat_max"]), **pct},
        "histogram": {"bucket_cycles": 1 << shift, "counts": hist, "overflow": hist[-1]},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "link": link_record(link),
    }


def set_errors(target, ber=0.0, burst=1, seed=None):
    """Programs the channel's bit error rate (every lane), burst length and, if given, the generators' seed."""
    return target.fw.errinj(ber=block_threshold(ber), burst=burst, seed=seed)


def _reliability_counters(target):
    errinj = target.fw.errinj()
    retry = target.fw.retry()
    return errinj, retry


def _delta(after, before, keys):
    return {k: after[k] - before[k] for k in keys}


RETRY_KEYS = ("replays", "timeouts", "replayed_txns", "replayed_bytes", "window_stalls", "naks", "duplicates",
              "out_of_order", "reinits", "down_cycles", "crc_errors", "frames")
MAX_RUN_CYCLES = 5_000_000


def ber_run_size(ber, profile, distance_m, lanes, rate_gbps, bits, bandwidth_GBps):
    """(replay model, accesses per run, predicted efficiency) of a BER point on a link whose error-free
    bandwidth is `bandwidth_GBps`: about `bits` line bits, fewer when the link would crawl."""
    model = reliability.replay_model(ber, profile, distance_m, lanes, rate_gbps, bandwidth_GBps)
    lines_per_cycle = link_model.lines_per_cycle(bandwidth_GBps)
    efficiency = max(model["predicted_efficiency"], 0.001)
    count = math.ceil(bits / 2 / (reliability.blocks_per_line(profile) * 66))
    if efficiency < 0.5:   # a crawling link: bound the run's time rather than its bits
        count = max(2000, min(count, int(MAX_RUN_CYCLES * lines_per_cycle * efficiency)))
    return model, count, efficiency


def ber_point(target, ber, distance_m, lanes, rate_gbps, profile="ours", memory="sram", bits=1e10, burst=1,
              seed=1, op="read", outstanding=REMOTE_TAGS, reference_count=50000, log=None, hmc_width="full"):
    """Sustained bandwidth under a bit error rate, with every byte checked.

    Writes a seeded pattern over the span, then reads it back with checking, both under `ber` on every lane
    and both directions, for about `bits` line bits in all (fewer when the replay model predicts the run
    would exceed MAX_RUN_CYCLES while running at less than half speed). The error-free reference is the same
    benchmark at BER 0.
    """
    facts = target.build.constants
    link = configure_link(target, distance_m, lanes, rate_gbps, profile, memory, hmc_width)
    timeout, nak = configure_retry(target, profile, link["delay"])
    set_errors(target, 0.0, seed=seed)
    common = dict(outstanding=outstanding, distance_m=distance_m, lanes=lanes, rate_gbps=rate_gbps,
                  profile=profile, memory=memory, hmc_width=hmc_width)
    reference = bandwidth(target, op, count=reference_count, **common)
    model, count, efficiency = ber_run_size(ber, profile, distance_m, lanes, rate_gbps, bits,
                                            reference["bandwidth_GBps"])
    cycles_per_line = 64 / efficiency
    set_errors(target, ber, burst=burst, seed=seed)
    errinj0, retry0 = _reliability_counters(target)
    runs = {}
    for run_op, check in (("write", False), ("read", True)):
        if log:
            log(f"BER {ber:g}: {run_op} {count} accesses{' with checking' if check else ''}")
        runs[run_op] = bandwidth(target, run_op, count=count, check=check, cycles_per_line=cycles_per_line,
                                 **common)
    errinj1, retry1 = _reliability_counters(target)
    set_errors(target, 0.0)
    ends = {end: _delta(retry1[end], retry0[end], RETRY_KEYS) for end in ("compute", "memory")}
    blocks = (errinj1["blocks_a2b"] - errinj0["blocks_a2b"]) + (errinj1["blocks_b2a"] - errinj0["blocks_b2a"])
    hits = (errinj1["hits_a2b"] - errinj0["hits_a2b"]) + (errinj1["hits_b2a"] - errinj0["hits_b2a"])
    measured = runs[op]
    line_bits = blocks * 66
    result = {
        "ber": ber, "burst": burst, "seed": seed, "op": op, "outstanding": outstanding,
        "distance_m": distance_m, "lanes": lanes, "rate_gbps": rate_gbps, "profile": profile, "memory": memory,
        "bandwidth_GBps": measured["bandwidth_GBps"],
        "error_free_bandwidth_GBps": reference["bandwidth_GBps"],
        "efficiency_vs_error_free": measured["bandwidth_GBps"] / reference["bandwidth_GBps"],
        "predicted": model,
        "replays": ends["compute"]["replays"] + ends["memory"]["replays"],
        "replayed_bytes": ends["compute"]["replayed_bytes"] + ends["memory"]["replayed_bytes"],
        "crc_errors": ends["compute"]["crc_errors"] + ends["memory"]["crc_errors"],
        "corrupted_words": runs["read"]["errors"],
        "bus_errors": runs["write"]["bus_errors"] + runs["read"]["bus_errors"],
        "accesses": {k: r["transactions"] for k, r in runs.items()},
        "bits": line_bits,
        "bits_target": bits,
        "error_events": hits,
        "injected_bit_errors": hits * burst,
        "realised_ber": hits * burst / line_bits if line_bits else None,
        "ends": ends,
        "retry": {"timeout_cycles": timeout, "nak": nak, **reliability.retry_window(
            profile, distance_m, lanes, rate_gbps, facts["remote_tags"], facts["link_retry_depth"],
            reference["bandwidth_GBps"])},
        "clock_hz": link_model.NOMINAL_CLK_HZ,
        "link": link_record(link),
    }
    if profile == "monet":
        result["retry"]["note"] = reliability.PROFILE_RETRY_NOTE
    return result


def prbs(target, cycles=1_000_000, confidence=0.95):
    """PRBS31 on every active lane, both directions, for `cycles`: bits, bit errors, the BER and its
    confidence interval per direction (a2b checked at the memory card, b2a at the compute card)."""
    run = target.fw.prbs(cycles=cycles, wait=max(300, cycles // 20000))
    lanes = run["lanes"]
    result = {"cycles": cycles, "lanes": lanes, "confidence": confidence}
    for direction in ("a2b", "b2a"):
        d = run[direction]
        bits = d["words"] * lanes * 66
        errors = sum(d["errors"][:lanes])
        low, high = reliability.ber_bounds(bits, errors, confidence) if bits else (None, None)
        result[direction] = {"bits": bits, "errors": errors, "errors_per_lane": d["errors"][:lanes],
                             "relocks": d["relocks"], "ber": errors / bits if bits else None,
                             "ber_low": low, "ber_high": high}
    return result
